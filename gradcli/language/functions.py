"""torch.autograd.Function as scripts subclass it.

`Function` is a library class of the language (see gradcli.language.classes): a script's
`class MyReLU(torch.autograd.Function)` derives from it as from its own classes. Its class attributes are
exactly PyTorch's public ones a script uses (`apply`, `forward`, `backward`, `setup_context`, `vjp`,
`jvp`); what `apply` does is the engine's (gradcli.engine.custom), which receives the script's functions
as plain callables.
"""

from __future__ import annotations

from gradcli.engine import custom
from gradcli.engine.state import STATE
from gradcli.language.classes import ScriptObject, ScriptType

_NO_FORWARD = "You must implement the forward function for custom autograd.Function."
_NO_BACKWARD = ("You must implement either the backward or vjp method for your custom autograd.Function to use "
                "it with backward mode AD.")


def _no_forward(*args, **kwargs):
    raise NotImplementedError(_NO_FORWARD)


def _no_backward(*args, **kwargs):
    raise NotImplementedError(_NO_BACKWARD)


def _no_setup_context(ctx, inputs, output):
    raise NotImplementedError("setup_context is not implemented.")


def _no_jvp(ctx, *grad_inputs):
    raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                              "with forward mode AD.")


class Function(ScriptObject, metaclass=ScriptType):
    """torch.autograd.Function: subclasses define `forward` and `backward` (static methods) and are used
    through `apply`."""

    __module__ = "torch.autograd.function"

    forward = staticmethod(_no_forward)
    backward = staticmethod(_no_backward)
    vjp = staticmethod(_no_backward)
    setup_context = staticmethod(_no_setup_context)
    jvp = staticmethod(_no_jvp)

    def __init__(self, *args, **kwargs):
        """An instance works, with PyTorch's DeprecationWarning (once per line, as Python's warnings)."""
        warn = STATE.warn
        if warn is not None:
            warn("DeprecationWarning", f"{type(self)} should not be instantiated. Methods on autograd functions "
                 "are all static, so you should invoke them on the class itself. Instantiating an autograd "
                 "function will raise an error in a future version of PyTorch.")

    @classmethod
    def apply(cls, *args, **kwargs):
        forward, setup, backward = cls.forward, cls.setup_context, cls.backward
        if setup is _no_setup_context:
            setup = None
        if backward is _no_backward and cls.vjp is not _no_backward:
            backward = cls.vjp
        if (kwargs or setup is not None) and hasattr(forward, "params"):    # by position, as PyTorch binds them
            args, kwargs = _bind(forward, args, kwargs, setup is not None)
        return custom.apply(cls.__name__, forward, setup, backward, args, kwargs, cls.jvp)


def _bind(forward, args: tuple, kwargs: dict, defaults: bool):
    """Keyword arguments of `apply` as positional ones, as PyTorch passes them to forward (and counts
    them as inputs): after `ctx` in the forward(ctx, ...) style; up to the last one given, or, with
    setup_context, to the end with the defaults filled in (inspect.Signature.bind's messages)."""
    params = list(forward.params[0 if defaults else 1:])
    values = dict(zip(params, args))
    for name, value in kwargs.items():
        if name not in params:
            raise TypeError(f"{'' if defaults else 'forward() '}got an unexpected keyword argument '{name}'")
        if name in values:
            raise TypeError(f"multiple values for argument '{name}'")
        values[name] = value
    first_default = len(forward.params) - len(forward.defaults)
    last = len(params) if defaults else max(params.index(n) for n in values) + 1
    bound = []
    for i, name in enumerate(params[:last]):
        if name in values:
            bound.append(values[name])
            continue
        j = i + (0 if defaults else 1)
        if j < first_default:
            raise TypeError(f"missing a required argument: '{name}'")
        bound.append(forward.defaults[j - first_default])
    return tuple(bound), {}


def _setup_name():
    # Python names the functions after their definition here; PyTorch's are Function's
    for fn, name in ((_no_forward, "forward"), (_no_backward, "backward"), (_no_setup_context, "setup_context"),
                     (_no_jvp, "jvp")):
        fn.__name__ = name
        fn.__qualname__ = f"_SingleLevelFunction.{name}"


_setup_name()


def once_differentiable(fn):
    """torch.autograd.function.once_differentiable, as scripts decorate a backward with it."""
    return custom.OnceDifferentiable(fn)
