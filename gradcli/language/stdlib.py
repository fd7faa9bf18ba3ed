"""What a script can reach by name: the builtins, and the modules `torch` (gradcli's engine), `math` and
Python's others."""

from __future__ import annotations

import abc
import builtins
import enum
import functools
import importlib
import re
import sys
import __future__ as _future
import functools as _functools
import itertools as _itertools
import math as _math
import time as _time

from gradcli.language import bounds, classes, devices, flow, pycollections
from gradcli.language import functions, torchapi
from gradcli.engine.addresses import address
from gradcli.engine import (autograd, backward, cascade, dtypes, factories, forward, gradcheck, ops, rng, savedhooks,
                            typeinfo,
                            signatures, slim)
from gradcli.engine.state import STATE
from gradcli.engine.ops.reduce import ReturnTypes
from gradcli.engine.tensor import Size, Tensor, _Device, parameter_marks, print_options, uninitialized_marks


# Python's own modules written in Python, behind the script modules of the same name: they print with
# their file, as CPython prints them (math, itertools and time print as built in)
_PYTHON_MODULES = {"random": None, "functools": _functools, "string": None, "statistics": None,
                   "collections": pycollections._collections, "copy": None, "typing": None,
                   "dataclasses": None, "warnings": None, "json": None,
                   "heapq": None, "bisect": None, "pprint": None, "textwrap": None, "abc": None, "contextlib": None,
                   "enum": None, "io": None, "logging": None, "types": None, "argparse": None,
                   "re": None, "traceback": None, "unicodedata": None}


class ScriptModule:
    """A module as scripts see it: a fixed table of names, nothing else.

    The table of a module that would cost every run its imports (torch.nn loads the layers, torch.optim
    the optimisers) is made when something first reads it: `ScriptModule.later(name, make)`. Making it
    wraps a torch module's functions (as `_expose` does), records their names (`_register_public`) and
    runs what other modules asked to run then (`when_made`)."""

    __slots__ = ("name", "_members", "_make")

    def __init__(self, name: str, members: dict):
        self.name = name
        self._members = members
        self._make = None

    @classmethod
    def later(cls, name: str, make) -> "ScriptModule":
        self = cls(name, None)
        self._make = make
        return self

    @property
    def members(self) -> dict:
        members = self._members
        if members is None:
            members = self._made()
        return members

    @property
    def made(self) -> bool:
        return self._members is not None

    def _made(self) -> dict:
        members = self._make()       # (an exception leaves the module to be made on the next read)
        self._members, self._make = members, None
        if self.name.startswith("torch"):      # torch's functions print as PyTorch's (Python's modules as they are)
            _expose(self)
            _register_public(self)
        for hook in _WHEN_MADE.pop(self.name, ()):
            hook(self)
        return members

    def __repr__(self) -> str:
        # CPython's repr of the module PyTorch has, its file named relative to site-packages
        # (`<module 'torch' from 'torch/__init__.py'>`); math as CPython builds it in
        if self.name.startswith("torch"):
            parent, _, last = self.name.rpartition(".")
            return (torchapi.text("", self.name) or torchapi.text(parent, last)     # torch.distributions.normal
                    or f"<module '{self.name}' (built-in)>")
        if self.name in _PYTHON_MODULES:
            module = _PYTHON_MODULES[self.name] or self.members and sys.modules[self.name]   # string, random: when made
            if getattr(module.__spec__, "origin", None) == "frozen":     # (abc and io, as CPython 3.11 freezes them)
                return f"<module '{self.name}' (frozen)>"
            return f"<module '{self.name}' from '{module.__file__}'>"
        return f"<module '{self.name}' (built-in)>"


class Builtin(functools.partial):
    """A function or class of a module, or a builtin, as scripts see it. A call goes straight to the
    function (a partial adds no Python frame), and it prints as PyTorch or CPython prints its own:
    `<built-in method ones of type object at 0x...>`, `<class 'torch.Size'>`, `<function relu at
    0x...>` (gradcli.language.torchapi), never gradcli's function or its heap address."""

    __slots__ = ("namespace", "name", "owner")

    def __new__(cls, namespace: str, name: str, function, owner=None):
        self = super().__new__(cls, function)
        self.namespace = namespace      # a module path, 'torch.Tensor', 'builtins' or 'method of TYPE'
        self.name = name
        self.owner = owner              # the object a 'method of TYPE' is bound to
        return self

    # A method bound to an object equals the same method bound to the same object, as CPython's bound methods
    # do (`x.add == x.add`, a dict keyed by them); any other is itself alone.
    def _bound_to(self):
        namespace = self.namespace
        if namespace == "torch.Tensor":
            return getattr(self.func, "__self__", None)
        if namespace.startswith("bound method of ") or namespace.startswith("method of "):
            return self.owner
        return None

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not Builtin:
            return NotImplemented
        bound = self._bound_to()
        return (bound is not None and bound is other._bound_to() and self.name == other.name
                and self.namespace == other.namespace)

    def __hash__(self):
        bound = self._bound_to()
        return object.__hash__(self) if bound is None else hash((self.name, id(bound)))

    # `torch.Tensor | None` in an annotation: a union, as PyTorch's class makes (gradcli.language.pytyping)
    def __or__(self, other):
        return bounds._union(self, other) if self.stands_for_class() else NotImplemented

    def __ror__(self, other):
        return bounds._union(other, self) if self.stands_for_class() else NotImplemented

    def stands_for_class(self) -> bool:
        return repr(self).startswith("<class '")

    def __repr__(self) -> str:
        namespace, name = self.namespace, self.name
        if namespace == "builtins":
            return f"<built-in function {name}>"
        if namespace.startswith("method of "):
            return f"<built-in {namespace[:6]} {name} {namespace[7:]} object at {address(self.owner)}>"
        if namespace.startswith("bound method of "):
            return f"<bound method {namespace[16:]}.{name} of {self.owner!r}>"
        if namespace == "unbound torch.Tensor":      # a method read from the class
            if name in _PYTHON_METHODS:
                return f"<function Tensor.{name} at {address(self)}>"
            return f"<method '{name}' of 'torch._C.TensorBase' objects>"
        if namespace == "torch.Tensor":      # a method bound to a tensor
            tensor = self.func.__self__
            return (torchapi.text(namespace, name, address(tensor), repr(tensor))
                    or f"<built-in method {name} of Tensor object at {address(tensor)}>")
        text = torchapi.text(namespace, name, "{addr}")
        if text is None:
            if isinstance(self.func, type):
                return f"<class '{namespace}.{name}'>"
            return f"<function {name} at {address(self)}>"
        if "{addr}" not in text:
            return text
        # torch.ones and its kin are methods of one type object, as in PyTorch
        return text.replace("{addr}", address(_TORCH_FUNCTIONS if " of type object at" in text else self))

    __str__ = __repr__

    def no_attribute(self, attr: str) -> str:
        """The AttributeError message of PyTorch or CPython for `self.attr`."""
        text = repr(self)
        if text.startswith("<class '"):
            path = text[8:-2]           # a type PyTorch defines in C is named with its module
            name = path if path in _C_TYPES else path.rpartition(".")[2]
            return f"type object '{name}' has no attribute '{attr}'"
        kind = {"<built-in": "builtin_function_or_method", "<bound": "method",
                "<method": "method_descriptor"}.get(text.split(" ", 1)[0], "function")
        return f"'{kind}' object has no attribute '{attr}'"

    def __reduce__(self):
        raise TypeError(f"cannot pickle {self!r}")


_C_TYPES = frozenset({"torch.Size", "torch.dtype", "torch._C.Generator", "torch.device"})
_TORCH_FUNCTIONS = Builtin("torch", "_VariableFunctions", print)   # what `of type object at` names


class _NodeClass:
    """torch.autograd.graph.Node as scripts call it: PyTorch's abstract class, which isinstance takes
    (as autograd.Node: _SCRIPT_CLASSES) and nothing instantiates."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("Can't instantiate abstract class Node with abstract methods _input_metadata, "
                        "_register_hook_dict, _sequence_nr, metadata, name, next_functions, register_hook, "
                        "register_prehook")


def _no_instances(type_name: str):
    def refuse(*args, **kwargs):
        raise TypeError(f"cannot create '{type_name}' instances")
    return refuse


_WHEN_MADE: dict = {}       # module path -> what to run once its table is made


def when_made(path: str, hook) -> None:
    """Run hook(module) when the module `path` (made later: ScriptModule.later) has its table, or now."""
    module = globals().get("TORCH") and _find(path)
    if module is not None and module.made:
        hook(module)
    else:
        _WHEN_MADE.setdefault(path, []).append(hook)


def _expose(module: "ScriptModule") -> "ScriptModule":
    """Every function and class of `module` (and of its submodules already made) as a Builtin."""
    members = module.members
    for name, value in members.items():
        if value.__class__ is ScriptModule:
            if value.made:
                _expose(value)
        elif callable(value) and value.__class__ is not Builtin and value.__class__ is not classes.ScriptType \
                and value.__class__.__class__ is not classes.ScriptType and not isinstance(value, enum.EnumType):
            # a library class scripts subclass stays one, and an instance of one (constraints.dependent) too
            members[name] = Builtin(module.name, name, value)
            if isinstance(value, type) and issubclass(value, BaseException):     # `except torch.linalg.LinAlgError`,
                flow.HELD_EXCEPTIONS[id(members[name])] = value                   # isinstance(e, ...)
    return module


_MAX_PRECISION = 10_000      # digits after the point: each printed element is about that long


def _set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                      sci_mode=None):
    if precision.__class__ is int and precision > _MAX_PRECISION:
        raise MemoryError(f"precision={precision} is too large (gradcli prints at most {_MAX_PRECISION} digits)")
    print_options.set(precision, threshold, edgeitems, linewidth, profile, sci_mode)


_INT64_MAX = 2 ** 63 - 1
# list, tuple, dict, set, frozenset, sorted, ... as every session holds them: one of each, so type([]) is
# the `list` a script names
_BOUNDED_BUILTINS = bounds.bounded_builtins()
_LIST = _BOUNDED_BUILTINS["list"]        # list(range(10**12)) fails at once, not after minutes


def _size(sizes=()):
    """torch.Size(iterable): PyTorch keeps only ints (bools, one-element integer tensors), so no
    other value rides inside a Size."""
    items = []
    for i, v in enumerate(_LIST(sizes)):
        if v.__class__ is Tensor and v.numel() == 1 and not v.dtype.is_floating_point:
            v = v.item()
        if v.__class__ is not int and v.__class__ is not bool:
            name = "Tensor" if v.__class__ is Tensor else type(v).__name__
            raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{name}')")
        if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
            raise ValueError("Overflow when unpacking long long")
        items.append(int(v))
    return Size(items)


def _variable(data, requires_grad=False, volatile=False):
    return factories.variable(data, requires_grad, volatile)


def _matmul(input, other):
    if _sparse_tensor(input):
        return input.matmul(other)
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        raise TypeError(signatures.check("torch.matmul", (input, other), {}))
    return ops.matmul(input, other)


# torch's autocast names (gradcli.engine.autocast, imported when a script first calls one)
_AUTOCAST = ("is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
             "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "is_autocast_cache_enabled",
             "set_autocast_cache_enabled", "clear_autocast_cache")


def _make_amp() -> dict:
    from gradcli.engine import autocast, gradscaler
    return {"autocast": autocast.autocast, "GradScaler": gradscaler.GradScaler,
            "custom_fwd": autocast.custom_fwd, "custom_bwd": autocast.custom_bwd,
            "is_autocast_available": autocast.is_autocast_available,
            "autocast_mode": ScriptModule("torch.amp.autocast_mode", {
                "autocast": autocast.autocast, "custom_fwd": autocast.custom_fwd, "custom_bwd": autocast.custom_bwd,
                "is_autocast_available": autocast.is_autocast_available}),
            "grad_scaler": ScriptModule("torch.amp.grad_scaler", {"GradScaler": gradscaler.GradScaler})}


_AMP = ScriptModule.later("torch.amp", _make_amp)


_BACKEND_FUNCTIONS = ("set_float32_matmul_precision", "get_float32_matmul_precision", "use_deterministic_algorithms",
                      "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled")


def _make_backends() -> dict:
    """torch.backends: its namespaces, the flags scripts set in them (gradcli.language.backends)."""
    from gradcli.language import backends
    made = backends.namespaces()
    cuda = dict(made["torch.backends.cuda"], matmul=ScriptModule("torch.backends.cuda.matmul",
                                                                 made["torch.backends.cuda.matmul"]))
    made["torch.backends.cuda"].clear()
    made["torch.backends.cuda"].update(cuda)
    return {"mps": ScriptModule("torch.backends.mps", dict(devices.MPS)),
            **{name.rpartition(".")[2]: ScriptModule(name, members) for name, members in made.items()
               if name != "torch.backends.cuda.matmul"}}


def _make_compiler() -> dict:
    from gradcli.language import compiling
    return dict(compiling.COMPILER)


def _make_sparse() -> dict:
    from gradcli.engine import sparse
    return {"mm": sparse.sparse_mm, "sum": sparse.sparse_sum, "addmm": sparse.addmm}


def _make_cpu_amp() -> dict:
    from gradcli.engine import autocast, gradscaler
    _AMP.members                        # torch.amp's access rules come with it
    return {"autocast": autocast.cpu_autocast, "GradScaler": gradscaler.cpu_grad_scaler}


def _make_cuda_amp() -> dict:
    from gradcli.engine import autocast, gradscaler
    _AMP.members
    return {"autocast": autocast.cuda_autocast, "GradScaler": gradscaler.cuda_grad_scaler,
            "custom_fwd": autocast.cuda_custom_fwd, "custom_bwd": autocast.cuda_custom_bwd}


def _autocast(*args, **kwargs):
    """torch.autocast: torch.amp's class, made (with its access rules) at the first call."""
    return _AMP.members["autocast"](*args, **kwargs)


_autocast.__name__ = _autocast.__qualname__ = "autocast"
_autocast.target = lambda: _AMP.members["autocast"]


_LATER: dict = {}       # (module, name) -> its stand-in, one per function


def _later(module: str, name: str):
    """A torch function whose engine module only some scripts use (convolution, pooling, einsum, the
    random distributions, ...): the module is imported at the function's first call, not at start-up.
    One stand-in per function, so the names that share it (torch.conv2d, torch.nn.functional.conv2d) share
    it as they share the function. `target()` gives the function itself (help reads its signature)."""
    key = (module, name)
    stand_in = _LATER.get(key)
    if stand_in is not None:
        return stand_in
    found = []

    def target():
        if not found:
            found.append(getattr(importlib.import_module(module), name))
        return found[0]

    def stand_in(*args, **kwargs):
        return (found[0] if found else target())(*args, **kwargs)
    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.target = target
    _LATER[key] = stand_in
    return stand_in


_CONV = {name: _later("gradcli.engine.ops.conv", name)
         for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")}


def _tensor_fn(name, method):
    """torch.X(t, ...) for a method t.X(...) of the same meaning (a sparse tensor's own, where it has one)."""
    def fn(input, *args, **kwargs):
        if input.__class__ is not Tensor:
            module = sys.modules.get("gradcli.engine.sparse")
            if module is not None and input.__class__ is module.SparseTensor:
                return _sparse_method(input, name)(*args, **kwargs)
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return method(input, *args, **kwargs)
    fn.__name__ = name
    return fn


def _sparse_method(s, name: str):
    """A sparse tensor's method `name`, or its refusal (gradcli.engine.sparse.SCRIPT_ATTRS)."""
    from gradcli.engine import sparse
    if name in sparse.SCRIPT_ATTRS:
        return getattr(s, name)
    raise s.refused(name)


_NO_DIM = object()


def _split_function(tensor, split_size_or_sections, dim=0):
    """torch.split, which PyTorch writes in Python: its own parameter names and Python's words, and the
    method's work (a value that is not a tensor has no `split`)."""
    if tensor.__class__ is not Tensor:
        raise AttributeError(f"'{type(tensor).__name__}' object has no attribute 'split'")
    return tensor.split(split_size_or_sections, dim)


def _norm_function(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm, which PyTorch writes in Python (it reads `input.layout` first); an `out` given by position
    goes where the compiler sends a keyword one (gradcli.engine.outarg)."""
    if input.__class__ is not Tensor:
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'layout'")
    if out is not None:
        from gradcli.engine import outarg
        return outarg.call("torch.norm", "norm", "tensor", _norm_function, (input, p, dim, keepdim), {"dtype": dtype},
                           out)
    return input.norm(p, dim, keepdim, dtype)


def _squeeze_function(input, dim=_NO_DIM):
    """torch.squeeze(t, dim): one dim or a list, not the method's separate ints (torch.squeeze(x, 1, 1) is
    PyTorch's TypeError)."""
    return input.squeeze() if dim is _NO_DIM else input.squeeze(dim)


def _tensor_list_fn(name, method, param):
    """torch.X(t, list) for a method t.X(...) that also takes the list's ints one by one: the function takes
    the list whole, by position or keyword (torch.permute(x, 1, 0) is PyTorch's TypeError)."""
    key = "torch." + name

    def fn(*args, **kwargs):
        if len(args) == 2 and not kwargs and args[0].__class__ is Tensor and args[1].__class__ in (tuple, list, Size):
            return method(args[0], args[1])
        message = signatures.check(key, args, kwargs)
        if message is not None:
            raise TypeError(message)
        _, values = signatures.bound(key, args, kwargs)
        return method(values["input"], values[param])
    fn.__name__ = name
    return fn


def _number_or_tensor_fn(name, method):
    """torch.add/sub/mul/div: PyTorch takes a Python number for the input too, as a 0-d tensor."""
    def fn(input, *args, **kwargs):
        if input.__class__ is not Tensor:
            if input.__class__ not in (int, float, bool):
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
            input = factories.tensor(input)
        return method(input, *args, **kwargs)
    fn.__name__ = name
    return fn


def _float_power(input, exponent):
    """torch.float_power(input, exponent): a number base is read as a double, the tensor exponent cast."""
    if input.__class__ is not Tensor:
        if exponent.__class__ is not Tensor:
            raise factories.invalid_arguments("float_power", (input, exponent), {})
        return ops.power(float(input), exponent.double())
    return input.float_power(exponent)


def _pow(*args, **kwargs):
    form, values = signatures.bound("torch.pow", args, kwargs)
    return ops.power(values["self"] if form == 1 else values["input"], values["exponent"])


def _make_nn() -> dict:
    """torch.nn: the layers' classes (gradcli.language.nn), its functional namespace, init and utils."""
    from gradcli.engine import clipgrad
    from gradcli.language import nn as nn_classes
    from gradcli.engine import parameter
    functional_ns = ScriptModule("torch.nn.functional", {
        # group: elementwise
        "relu": _tensor_fn("relu", ops.elementwise.functional_relu), "relu_": _tensor_fn("relu_", Tensor.relu_),
        "sigmoid": lambda input: input.sigmoid(), "tanh": lambda input: input.tanh(),
        "softplus": _tensor_fn("softplus", ops.softplus), "gelu": _tensor_fn("gelu", ops.gelu),
        "leaky_relu": _tensor_fn("leaky_relu", ops.elementwise.functional_leaky_relu),
        "leaky_relu_": _tensor_fn("leaky_relu_", ops.elementwise.functional_leaky_relu_),
        "elu": _tensor_fn("elu", ops.elementwise.functional_elu),
        "elu_": _tensor_fn("elu_", ops.elementwise.functional_elu_),
        "hardtanh": _tensor_fn("hardtanh", ops.elementwise.functional_hardtanh),
        "threshold": ops.elementwise.functional_threshold, "threshold_": ops.elementwise.torch_threshold_,
        "hardtanh_": _tensor_fn("hardtanh_", ops.elementwise.functional_hardtanh_),
        "relu6": _tensor_fn("relu6", ops.elementwise.functional_relu6),
        "silu": _tensor_fn("silu", ops.elementwise.functional_silu),
        "mish": _tensor_fn("mish", ops.elementwise.functional_mish),
        "glu": _tensor_fn("glu", ops.elementwise.glu),
        "selu": _tensor_fn("selu", ops.elementwise.selu),
        "celu": _tensor_fn("celu", ops.elementwise.celu),
        "softsign": ops.elementwise.functional_softsign, "logsigmoid": _tensor_fn("log_sigmoid", ops.logsigmoid),
        # group: reduce
        "softmax": ops.functional_softmax, "log_softmax": ops.functional_log_softmax,
        "mse_loss": ops.mse_loss, "l1_loss": ops.l1_loss, "smooth_l1_loss": ops.smooth_l1_loss,
        "huber_loss": ops.huber_loss, "kl_div": ops.kl_div, "cross_entropy": ops.cross_entropy,
        "nll_loss": ops.nll_loss, "binary_cross_entropy": ops.binary_cross_entropy,
        "binary_cross_entropy_with_logits": ops.binary_cross_entropy_with_logits,
        "linear": ops.linear, "normalize": ops.normalize, "dropout": ops.dropout,
        "linear_cross_entropy": _later("gradcli.engine.ops.linear_cross_entropy", "linear_cross_entropy"),
        **{name: _later("gradcli.engine.ops.nn", name) for name in ("dropout1d", "dropout2d", "dropout3d", "prelu")},
        "embedding": ops.embedding, "one_hot": ops.one_hot, "bilinear": ops.bilinear,
        "embedding_bag": _later("gradcli.engine.ops.embedding_bag", "embedding_bag"),
        **{name: _later("gradcli.engine.ops.arrange", name) for name in ("pixel_shuffle", "pixel_unshuffle")},
        **{name: _later("gradcli.engine.ops.fold", name) for name in ("unfold", "fold")},
        "pad": ops.shape.functional_pad,
        **{name: _later("gradcli.engine.ops.upsample", name)
           for name in ("interpolate", "upsample", "upsample_nearest", "upsample_bilinear")},
        "hardsigmoid": _tensor_fn("hardsigmoid", ops.elementwise.functional_hardsigmoid),
        "hardswish": _tensor_fn("hardswish", ops.elementwise.functional_hardswish),
        "softmin": ops.composed.softmin, "tanhshrink": ops.composed.tanhshrink,
        "hardshrink": _later("gradcli.engine.ops.aten_nn", "hardshrink"),      # torch.hardshrink itself
        **{name: _later("gradcli.engine.ops.aten_nn", name) for name in ("selu_", "celu_")},
        "softshrink": _tensor_fn("softshrink", ops.elementwise.softshrink),
        "pairwise_distance": _later("gradcli.engine.ops.composed", "pairwise_distance"),     # torch's own
        "pdist": _later("gradcli.engine.ops.pdist", "pdist"),
        "affine_grid": _later("gradcli.engine.ops.affine_grid", "affine_grid"),
        "grid_sample": _later("gradcli.engine.ops.grid_sample", "grid_sample"),
        "ctc_loss": _later("gradcli.engine.ops.ctc", "ctc_loss"),
        "cosine_similarity": _later("gradcli.engine.ops.composed", "cosine_similarity"),
        "margin_ranking_loss": ops.composed.margin_ranking_loss,
        "hinge_embedding_loss": ops.composed.hinge_embedding_loss,
        "cosine_embedding_loss": ops.composed.cosine_embedding_loss,
        "multilabel_soft_margin_loss": ops.composed.multilabel_soft_margin_loss,
        "poisson_nll_loss": ops.composed.poisson_nll_loss, "gaussian_nll_loss": ops.composed.gaussian_nll_loss,
        **{name: _later("gradcli.engine.ops.margin", name)
           for name in ("soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss")},
        "triplet_margin_loss": ops.composed.triplet_margin_loss,
        "local_response_norm": ops.composed.local_response_norm, "gumbel_softmax": ops.composed.gumbel_softmax,
        **{name: _later("gradcli.engine.ops.arrange", name) for name in ("channel_shuffle", "native_channel_shuffle")},
        "rrelu": _later("gradcli.engine.ops.randomized", "functional_rrelu"),
        "rrelu_": _later("gradcli.engine.ops.randomized", "torch_rrelu_"),
        **{name: _later("gradcli.engine.ops.randomized", name) for name in ("alpha_dropout", "feature_alpha_dropout")},
        "triplet_margin_with_distance_loss": ops.composed.triplet_margin_with_distance_loss,
        "batch_norm": ops.batch_norm, "layer_norm": ops.layer_norm, "group_norm": ops.group_norm,
        "instance_norm": ops.instance_norm, "rms_norm": ops.composed.functional_rms_norm,
        **{name: _later("gradcli.engine.ops.attention", name)
           for name in ("scaled_dot_product_attention", "multi_head_attention_forward")},
        # group: conv
        **_CONV,
        # group: pool
        "max_pool1d": ops.pool.max_pool1d, "max_pool2d": ops.pool.max_pool2d,
        "max_pool1d_with_indices": ops.pool.max_pool1d_with_indices,
        "max_pool2d_with_indices": ops.pool.max_pool2d_with_indices,
        "avg_pool1d": ops.pool.avg_pool1d, "avg_pool2d": ops.pool.avg_pool2d,
        "adaptive_avg_pool1d": ops.pool.adaptive_avg_pool1d, "adaptive_avg_pool2d": ops.pool.adaptive_avg_pool2d,
        "adaptive_max_pool1d": ops.pool.adaptive_max_pool1d, "adaptive_max_pool2d": ops.pool.adaptive_max_pool2d,
        "adaptive_max_pool1d_with_indices": ops.pool.adaptive_max_pool1d_with_indices,
        "adaptive_max_pool2d_with_indices": ops.pool.adaptive_max_pool2d_with_indices,
        "max_pool3d": ops.pool.max_pool3d, "max_pool3d_with_indices": ops.pool.max_pool3d_with_indices,
        "avg_pool3d": ops.pool.avg_pool3d, "adaptive_avg_pool3d": ops.pool.adaptive_avg_pool3d,
        "adaptive_max_pool3d": ops.pool.adaptive_max_pool3d,
        "adaptive_max_pool3d_with_indices": ops.pool.adaptive_max_pool3d_with_indices,
        "lp_pool1d": ops.pool.lp_pool1d, "lp_pool2d": ops.pool.lp_pool2d, "lp_pool3d": ops.pool.lp_pool3d,
        "max_unpool1d": ops.pool.max_unpool1d, "max_unpool2d": ops.pool.max_unpool2d,
        "max_unpool3d": ops.pool.max_unpool3d,
        **{name: _later("gradcli.engine.ops.fractional_pool", name)
           for name in ("fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
                        "fractional_max_pool3d_with_indices")},
    })
    nn_utils = ScriptModule("torch.nn.utils", {
        "clip_grad_norm_": clipgrad.clip_grad_norm_, "clip_grad_norm": clipgrad.clip_grad_norm,
        "clip_grad_value_": clipgrad.clip_grad_value_,
        "get_total_norm": clipgrad.get_total_norm, "clip_grads_with_norm_": clipgrad.clip_grads_with_norm_,
        "parameters_to_vector": clipgrad.parameters_to_vector, "vector_to_parameters": clipgrad.vector_to_parameters,
        "rnn": ScriptModule.later("torch.nn.utils.rnn", _make_rnn_utils),
        "parametrize": ScriptModule.later("torch.nn.utils.parametrize", _make_parametrize),
        "parametrizations": ScriptModule.later("torch.nn.utils.parametrizations", _make_parametrizations),
        "prune": ScriptModule.later("torch.nn.utils.prune", _make_prune),
        **{name: _later("gradcli.language.nn.reparam_hooks", name)
           for name in ("weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm")},
        "skip_init": _later("gradcli.language.nn.module", "skip_init"),
        **{name: _later("gradcli.language.nn.fusion", name)
           for name in ("fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights")},
    })
    return {"functional": functional_ns, "utils": nn_utils, "Parameter": nn_classes.make_parameter,
            "attention": ScriptModule.later("torch.nn.attention", _make_attention),
            "grad": ScriptModule("torch.nn.grad", dict(ops.conv.NN_GRAD)),
            "Buffer": parameter.make_buffer,
            "init": ScriptModule("torch.nn.init", dict(nn_classes.INIT)), **nn_classes.classes()}


def _make_parametrize() -> dict:
    """torch.nn.utils.parametrize: registering, removing and caching parametrizations."""
    from gradcli.language.nn import parametrize
    return parametrize.names()


def _make_parametrizations() -> dict:
    """torch.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as parametrizations."""
    from gradcli.language.nn import parametrizations
    return parametrizations.names()


def _make_attention() -> dict:
    """torch.nn.attention: SDPBackend (an enum, read by the enum module's rules: gradcli.language.pyenum, which
    registers them for it, made with the module) and sdpa_kernel."""
    importlib.import_module("gradcli.language.pyenum")
    return importlib.import_module("gradcli.language.nn.sdpa").names()


def _make_prune() -> dict:
    """torch.nn.utils.prune: pruning methods, their functions, remove and is_pruned."""
    from gradcli.language.nn import prune
    return prune.names()


def _make_rnn_utils() -> dict:
    """torch.nn.utils.rnn: padding and packing sequences, and the PackedSequence they make."""
    packed = ops.packed
    return {name: getattr(packed, name) for name in (
        "PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
        "unpad_sequence", "unpack_sequence", "invert_permutation")}


def _make_optim() -> dict:
    """torch.optim: the optimisers and, in torch.optim.lr_scheduler, the schedulers."""
    from gradcli.engine import adafactor, lbfgs, lr_scheduler, muon, optim, sparse_adam
    return {
        "Optimizer": optim.Optimizer, "SGD": optim.SGD, "Adam": optim.Adam, "AdamW": optim.AdamW,
        "RMSprop": optim.RMSprop, "Adagrad": optim.Adagrad, "Adamax": optim.Adamax,
        "NAdam": optim.NAdam, "RAdam": optim.RAdam, "Adadelta": optim.Adadelta, "Rprop": optim.Rprop,
        "ASGD": optim.ASGD, "LBFGS": lbfgs.LBFGS, "Adafactor": adafactor.Adafactor,
        "SparseAdam": sparse_adam.SparseAdam, "Muon": muon.Muon,
        "lr_scheduler": ScriptModule("torch.optim.lr_scheduler", {
            cls.__name__: cls for cls in lr_scheduler.SCHEDULERS}),
        "swa_utils": ScriptModule.later("torch.optim.swa_utils", _make_swa_utils),
    }


def _make_swa_utils() -> dict:
    """torch.optim.swa_utils: weight averaging (AveragedModel, its averaging functions), SWALR and update_bn."""
    from gradcli.engine import swa
    from gradcli.language.nn import averaged
    return {"AveragedModel": averaged.AveragedModel, "SWALR": swa.SWALR, "update_bn": averaged.update_bn,
            **{name: getattr(swa, name) for name in (
                "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn")}}


def _is_tensor(obj, /) -> bool:
    """torch.is_tensor: whether obj is a tensor (a Parameter and a sparse tensor are)."""
    return isinstance(obj, Tensor) or _sparse_tensor(obj)


def _is_storage(obj, /) -> bool:
    """torch.is_storage: no storage object is reachable from a script, so never."""
    return False


_is_tensor.__name__ = _is_tensor.__qualname__ = "is_tensor"        # Python's binding errors name it so
_is_storage.__name__ = _is_storage.__qualname__ = "is_storage"


def _typename(obj, /) -> str:
    """torch.typename: a tensor's legacy type name (`torch.FloatTensor`), else the dotted name of what it is (a
    class or function's own, an instance's class's), as PyTorch's function builds it from the names Python shows."""
    if isinstance(obj, Tensor) or _sparse_tensor(obj):
        return obj.type()
    if obj.__class__ in classes.FUNCTION_TYPES and isinstance(getattr(obj, "qualname", None), str):
        return f"__main__.{obj.qualname}"           # a script's function
    if obj.__class__ is bounds.Bounded or obj.__class__ is Builtin and obj.namespace == "builtins":
        return getattr(obj, "name", None) or obj.original.__name__      # Python's builtins: print, max, ...
    if obj.__class__ is Builtin and obj.namespace == "torch" and \
            (torchapi.text("torch", obj.name) or "").startswith("<built-in method"):
        return f"torch._VariableFunctionsClass.{obj.name}"         # torch's C++ functions
    text = repr(obj if isinstance(obj, type) or obj.__class__ is ClassValue else script_type(obj))
    if text.startswith("<class '") or text.startswith("<enum '"):
        return text[text.index("'") + 1:-2]
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    module = getattr(obj, "__module__", None)
    if isinstance(name, str):
        return name if module in (None, "", "builtins") else f"{module}.{name}"
    return text


_typename.__name__ = _typename.__qualname__ = "typename"


def _false() -> bool:
    """A backend gradcli does not have (Vulkan): never on."""
    return False


def _set_warn_always(b) -> None:
    """torch.set_warn_always: the warnings PyTorch gives once per process are given every time while it is on."""
    if b.__class__ is not bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    STATE.warn_always = b


_set_warn_always.__name__ = _set_warn_always.__qualname__ = "set_warn_always"


def _is_warn_always_enabled() -> bool:
    """torch.is_warn_always_enabled: whether torch.set_warn_always is on."""
    return STATE.warn_always


_is_warn_always_enabled.__name__ = _is_warn_always_enabled.__qualname__ = "is_warn_always_enabled"


def _build_torch() -> ScriptModule:
    def make_autograd_functional() -> dict:
        from gradcli.engine import functional
        return {"jacobian": functional.jacobian, "hessian": functional.hessian, "vjp": functional.vjp,
                "jvp": functional.jvp, "hvp": functional.hvp, "vhp": functional.vhp}
    autograd_functional = ScriptModule.later("torch.autograd.functional", make_autograd_functional)
    autograd_ns = ScriptModule("torch.autograd", {
        "Variable": _variable,
        "grad": backward.grad,
        "backward": backward.backward,
        "functional": autograd_functional,
        "no_grad": autograd.no_grad,
        "enable_grad": autograd.enable_grad,
        "set_grad_enabled": autograd.set_grad_enabled,
        "inference_mode": autograd.inference_mode,
        "set_multithreading_enabled": autograd.set_multithreading_enabled,
        "is_multithreading_enabled": autograd.is_multithreading_enabled,
        "set_detect_anomaly": autograd.set_detect_anomaly, "detect_anomaly": autograd.detect_anomaly,
        "gradcheck": gradcheck.gradcheck, "gradgradcheck": gradcheck.gradgradcheck,
        "GradcheckError": gradcheck.GradcheckError,
        "Function": functions.Function,
        "forward_ad": ScriptModule("torch.autograd.forward_ad", {
            "dual_level": forward.dual_level, "make_dual": forward.make_dual, "unpack_dual": forward.unpack_dual,
            "enter_dual_level": forward.enter_dual_level, "exit_dual_level": forward.exit_dual_level,
            "UnpackedDualTensor": forward.UnpackedDualTensor,
        }),
        "function": ScriptModule("torch.autograd.function", {"Function": functions.Function,
                                                              "once_differentiable": functions.once_differentiable}),
        "graph": ScriptModule("torch.autograd.graph", {
            "Node": _NodeClass, "increment_version": backward.increment_version,
            "saved_tensors_hooks": savedhooks.saved_tensors_hooks, "save_on_cpu": savedhooks.save_on_cpu,
            "disable_saved_tensors_hooks": savedhooks.disable_saved_tensors_hooks,
            "allow_mutation_on_saved_tensors": savedhooks.allow_mutation_on_saved_tensors,
            "register_multi_grad_hook": _later("gradcli.engine.multihook", "register_multi_grad_hook"),
        }),
    })
    vmap = Builtin("torch.func", "vmap", _later("gradcli.engine.functorch", "vmap"))   # torch.vmap is the same function

    def make_func() -> dict:
        from gradcli.engine import functorch
        from gradcli.language.nn import module as nn_module, normalization
        return {"grad": functorch.grad, "grad_and_value": functorch.grad_and_value, "vjp": functorch.vjp,
                "jacrev": functorch.jacrev, "vmap": vmap, "jvp": functorch.jvp, "jacfwd": functorch.jacfwd,
                "hessian": functorch.hessian, "functional_call": nn_module.functional_call,
                "stack_module_state": nn_module.stack_module_state, "linearize": functorch.linearize,
                "replace_all_batch_norm_modules_": normalization.replace_all_batch_norm_modules_}
    func = ScriptModule.later("torch.func", make_func)
    def make_linalg() -> dict:
        return {
            # group: shape
            "norm": _tensor_fn("linalg_norm", ops.linalg.norm),
            "vector_norm": _tensor_fn("linalg_vector_norm", ops.reduce.vector_norm),
            "matrix_norm": _tensor_fn("linalg_matrix_norm", ops.linalg.matrix_norm),
            "det": _tensor_fn("linalg_det", Tensor.det), "inv": _tensor_fn("linalg_inv", Tensor.inverse),
            "matmul": _matmul, "solve": _tensor_fn("linalg_solve", ops.linalg.solve),
            "cholesky": _tensor_fn("linalg_cholesky", ops.linalg.cholesky),
            "cholesky_ex": ops.lu.cholesky_ex, "solve_ex": ops.lu.solve_ex, "inv_ex": ops.lu.inv_ex,
            "lu_factor": ops.lu.lu_factor, "lu_factor_ex": ops.lu.lu_factor_ex, "lu": ops.lu.lu,
            "lu_solve": ops.lu.lu_solve, "lstsq": ops.lstsq.lstsq,
            **{name: _later("gradcli.engine.ops.ldl", name) for name in ("ldl_factor", "ldl_factor_ex", "ldl_solve")},
            "householder_product": ops.householder.householder_product,
            **{name: getattr(ops.linalg_composed, name) for name in ("vecdot", "vander", "cond", "tensorinv",
                                                                     "tensorsolve")},
            "solve_triangular": ops.linalg.solve_triangular,
            "matrix_power": ops.linalg.matrix_power, "multi_dot": ops.linalg.multi_dot,
            "slogdet": _tensor_fn("linalg_slogdet", ops.linalg.slogdet), "matrix_exp": ops.linalg.matrix_exp,
            "svd": _tensor_fn("linalg_svd", ops.linalg.svd), "svdvals": _tensor_fn("linalg_svdvals", ops.linalg.svdvals),
            "eig": ops.linalg.eig, "eigvals": ops.linalg.eigvals,
            "qr": _tensor_fn("linalg_qr", ops.linalg.qr), "pinv": ops.linalg.pinv, "matrix_rank": ops.linalg.matrix_rank, "eigh": _tensor_fn("linalg_eigh", ops.linalg.eigh), "eigvalsh": _tensor_fn("linalg_eigvalsh", ops.linalg.eigvalsh),
            "cross": _tensor_fn("linalg_cross", ops.linalg.linalg_cross),
            "diagonal": _tensor_fn("linalg_diagonal", lambda A, offset=0, dim1=-2, dim2=-1:
                                   ops.diagonal(A, offset, dim1, dim2)),
            "LinAlgError": ops.linalg.LinAlgError,
        }
    linalg = ScriptModule.later("torch.linalg", make_linalg)
    options = factories.with_creation_options
    members = {
        # creation
        "tensor": options(factories.script_tensor, "tensor", layout=False), "Tensor": factories.legacy_tensor,
        "empty_strided": options(factories.empty_strided, "empty_strided"), "as_tensor": factories.as_tensor, "asarray": factories.asarray, "scalar_tensor": options(factories.scalar_tensor, "scalar_tensor"),
        "ones": options(factories.ones, "ones"), "zeros": options(factories.zeros, "zeros"),
        "full": options(factories.full, "full"), "empty": options(factories.empty, "empty"),
        "ones_like": options(factories.ones_like, "ones_like"), "zeros_like": options(factories.zeros_like, "zeros_like"),
        "full_like": options(factories.full_like, "full_like"),
        "rand": options(factories.rand, "rand"), "randn": options(factories.randn, "randn"),
        "manual_seed": factories.manual_seed, "initial_seed": factories.initial_seed, "seed": factories.seed,
        # files kept in memory for the session (gradcli.language.saving)
        "save": _later("gradcli.language.saving", "save"), "load": _later("gradcli.language.saving", "load"),
        "get_num_threads": cascade.get_num_threads, "set_num_threads": cascade.set_num_threads,
        "get_num_interop_threads": cascade.get_num_interop_threads,
        "set_num_interop_threads": cascade.set_num_interop_threads,
        "Size": _size,
        # grad mode
        "no_grad": autograd.no_grad, "enable_grad": autograd.enable_grad,
        "set_grad_enabled": autograd.set_grad_enabled, "is_grad_enabled": autograd.is_grad_enabled,
        # ops as functions
        **{name: _number_or_tensor_fn(name, getattr(Tensor, name)) for name in ("add", "sub", "mul", "div")},
        "subtract": _number_or_tensor_fn("subtract", Tensor.sub), "rsub": ops.arith.torch_rsub,
        "multiply": _number_or_tensor_fn("multiply", Tensor.mul),
        "divide": _number_or_tensor_fn("divide", Tensor.div),
        "true_divide": _number_or_tensor_fn("true_divide", Tensor.true_divide),
        **{name: _tensor_fn(name, getattr(Tensor, name)) for name in (
            "greater", "greater_equal", "less", "less_equal", "not_equal", "ravel", "positive", "isposinf",
            "isneginf", "is_signed", "is_complex", "is_nonzero", "is_same_size", "bitwise_not", "inner",
            "diagflat", "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg", "is_conj",
            "is_neg", "get_device", "adjoint", "split_with_sizes", "unsafe_chunk", "unsafe_split",
            "unsafe_split_with_sizes", "narrow_copy")},
        "float_power": _float_power,
        **{name: _number_or_tensor_fn(name, getattr(Tensor, name)) for name in (
            "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")},
        "real": _tensor_fn("real", lambda t: t.real), "imag": _tensor_fn("imag", lambda t: t.imag),
        "angle": _tensor_fn("angle", Tensor.angle),
        **{name: _later("gradcli.engine.ops.complexops", name + "_function") for name in (
            "complex", "polar", "view_as_real", "view_as_complex")},
        "pow": _pow,
        "neg": _tensor_fn("neg", Tensor.neg), "exp": _tensor_fn("exp", Tensor.exp),
        "reciprocal": _tensor_fn("reciprocal", Tensor.reciprocal),
        "masked_fill": _tensor_fn("masked_fill", Tensor.masked_fill),
        "sum": _tensor_fn("sum", Tensor.sum), "mean": _tensor_fn("mean", Tensor.mean),
        "norm": _norm_function, "mm": _tensor_fn("mm", Tensor.mm), "matmul": _matmul,
        "clone": _tensor_fn("clone", Tensor.clone),
        "eq": _tensor_fn("eq", Tensor.eq), "ne": _tensor_fn("ne", Tensor.ne), "lt": _tensor_fn("lt", Tensor.lt),
        "le": _tensor_fn("le", Tensor.le), "gt": _tensor_fn("gt", Tensor.gt), "ge": _tensor_fn("ge", Tensor.ge),
        **{name: _later("gradcli.engine.closeness", name) for name in ("isclose", "allclose", "equal")},
        "numel": _tensor_fn("numel", Tensor.numel),
        "set_printoptions": _set_printoptions,
        # group: elementwise
        "abs": _tensor_fn("abs", Tensor.abs), "absolute": _tensor_fn("absolute", Tensor.abs),
        "sign": _tensor_fn("sign", Tensor.sign), "sgn": _tensor_fn("sgn", Tensor.sgn),
        "exp2": _tensor_fn("exp2", Tensor.exp2), "expm1": _tensor_fn("expm1", Tensor.expm1),
        "log": _tensor_fn("log", Tensor.log), "log2": _tensor_fn("log2", Tensor.log2),
        "log10": _tensor_fn("log10", Tensor.log10), "log1p": _tensor_fn("log1p", Tensor.log1p),
        "sqrt": _tensor_fn("sqrt", Tensor.sqrt), "rsqrt": _tensor_fn("rsqrt", Tensor.rsqrt),
        "square": _tensor_fn("square", Tensor.square),
        "sin": _tensor_fn("sin", Tensor.sin), "cos": _tensor_fn("cos", Tensor.cos),
        "tan": _tensor_fn("tan", Tensor.tan),
        "asin": _tensor_fn("asin", Tensor.asin), "acos": _tensor_fn("acos", Tensor.acos),
        "atan": _tensor_fn("atan", Tensor.atan), "arcsin": _tensor_fn("arcsin", Tensor.asin),
        "arccos": _tensor_fn("arccos", Tensor.acos), "arctan": _tensor_fn("arctan", Tensor.atan),
        "atan2": _tensor_fn("atan2", lambda input, other: ops.atan2(input, other, 2)),
        "arctan2": _tensor_fn("arctan2", lambda input, other: ops.atan2(input, other, 2)),
        "asinh": _tensor_fn("asinh", Tensor.asinh), "acosh": _tensor_fn("acosh", Tensor.acosh),
        "atanh": _tensor_fn("atanh", Tensor.atanh), "arcsinh": _tensor_fn("arcsinh", Tensor.asinh),
        "arccosh": _tensor_fn("arccosh", Tensor.acosh), "arctanh": _tensor_fn("arctanh", Tensor.atanh),
        "sinh": _tensor_fn("sinh", Tensor.sinh), "cosh": _tensor_fn("cosh", Tensor.cosh),
        "tanh": _tensor_fn("tanh", Tensor.tanh), "sigmoid": _tensor_fn("sigmoid", Tensor.sigmoid),
        "relu": _tensor_fn("relu", Tensor.relu), "erf": _tensor_fn("erf", Tensor.erf),
        "erfc": _tensor_fn("erfc", Tensor.erfc), "erfc_": _tensor_fn("erfc_", Tensor.erfc_),
        "sinc": _tensor_fn("sinc", Tensor.sinc), "sinc_": _tensor_fn("sinc_", Tensor.sinc_),
        "lgamma": _tensor_fn("lgamma", Tensor.lgamma), "digamma": _tensor_fn("digamma", Tensor.digamma),
        "polygamma": _later("gradcli.engine.ops.special", "polygamma"),
        "mvlgamma": _later("gradcli.engine.ops.special", "mvlgamma"),
        "igamma": _later("gradcli.engine.ops.igamma", "igamma"),
        "igammac": _later("gradcli.engine.ops.igamma", "igammac"),
        "erfinv": _tensor_fn("erfinv", Tensor.erfinv), "i0": _tensor_fn("i0", Tensor.i0),
        "i0_": _tensor_fn("i0_", Tensor.i0_),
        "logit": _tensor_fn("logit", lambda input, *args, **kwargs: ops.elementwise.logit(
            input, *args, **kwargs, position=None if kwargs else 2)),
        "logit_": _tensor_fn("logit_", Tensor.logit_),
        "xlogy": ops.elementwise.xlogy, "xlogy_": _tensor_fn("xlogy_", Tensor.xlogy_),
        "logaddexp": _tensor_fn("logaddexp", lambda input, other: ops.logaddexp(input, other, 2)),
        "logaddexp2": _tensor_fn("logaddexp2", lambda input, other: ops.logaddexp2(input, other, 2)),
        "hypot": _tensor_fn("hypot", lambda input, other: ops.hypot(input, other, 2)),
        "copysign": ops.copysign, "signbit": _tensor_fn("signbit", Tensor.signbit),
        "deg2rad": _tensor_fn("deg2rad", Tensor.deg2rad), "rad2deg": _tensor_fn("rad2deg", Tensor.rad2deg),
        "heaviside": ops.heaviside, "gcd": _tensor_fn("gcd", Tensor.gcd), "lcm": _tensor_fn("lcm", Tensor.lcm),
        "nan_to_num": _tensor_fn("nan_to_num", lambda input, *args, **kwargs: ops.nan_to_num(
            input, *args, **kwargs, keywords=tuple(kwargs))),
        "nan_to_num_": _tensor_fn("nan_to_num_", Tensor.nan_to_num_),
        "special": _SPECIAL, "fft": ScriptModule.later("torch.fft", _make_fft),
        "abs_": _tensor_fn("abs_", Tensor.abs_), "relu_": _tensor_fn("relu_", Tensor.relu_),
        "threshold": ops.elementwise.torch_threshold, "threshold_": ops.elementwise.torch_threshold_,
        "sigmoid_": _tensor_fn("sigmoid_", Tensor.sigmoid_), "tanh_": _tensor_fn("tanh_", Tensor.tanh_),
        "clamp": _tensor_fn("clamp", Tensor.clamp), "clip": _tensor_fn("clip", Tensor.clamp),
        "clamp_": _tensor_fn("clamp_", Tensor.clamp_), "clip_": _tensor_fn("clip_", Tensor.clamp_),
        "clamp_min": _tensor_fn("clamp_min", Tensor.clamp_min), "clamp_max": _tensor_fn("clamp_max", Tensor.clamp_max),
        "maximum": _tensor_fn("maximum", lambda input, other: ops.maximum(input, other, 2)),
        "minimum": _tensor_fn("minimum", lambda input, other: ops.minimum(input, other, 2)),
        "dist": ops.reduce.dist, "renorm": ops.reduce.renorm, "ldexp": ops.elementwise.ldexp, "ldexp_": _tensor_fn("ldexp_", Tensor.ldexp_),
        "frexp": ops.elementwise.frexp, "isreal": ops.elementwise.isreal,
        "nextafter": _tensor_fn("nextafter", lambda input, other: ops.elementwise.nextafter(input, other, 2)),
        "fmax": _tensor_fn("fmax", lambda input, other: ops.elementwise.fmax(input, other, 2)),
        "fmin": _tensor_fn("fmin", lambda input, other: ops.elementwise.fmin(input, other, 2)),
        "where": ops.where,
        "floor": _tensor_fn("floor", Tensor.floor), "ceil": _tensor_fn("ceil", Tensor.ceil),
        "round": _tensor_fn("round", Tensor.round), "trunc": _tensor_fn("trunc", Tensor.trunc),
        "fix": _tensor_fn("fix", Tensor.trunc), "frac": _tensor_fn("frac", Tensor.frac),
        "lerp": _tensor_fn("lerp", ops.lerp), "addcmul": ops.addcmul, "addcdiv": ops.addcdiv,
        "floor_divide": ops.floor_divide, "remainder": ops.remainder, "fmod": ops.elementwise.fmod,
        "logical_and": _tensor_fn("logical_and", lambda input, other: ops.logical_and(input, other, 2)),
        "logical_or": _tensor_fn("logical_or", lambda input, other: ops.logical_or(input, other, 2)),
        "logical_xor": _tensor_fn("logical_xor", lambda input, other: ops.logical_xor(input, other, 2)),
        "logical_not": _tensor_fn("logical_not", Tensor.logical_not),
        "isnan": _tensor_fn("isnan", Tensor.isnan), "isinf": _tensor_fn("isinf", Tensor.isinf),
        "isfinite": _tensor_fn("isfinite", Tensor.isfinite), "negative": _tensor_fn("negative", Tensor.neg),
        # the in-place forms PyTorch also offers as functions: the methods themselves
        **{name: _tensor_fn(name, getattr(Tensor, name)) for name in (
            "exp_", "exp2_", "expm1_", "log_", "log2_", "log10_", "log1p_", "sqrt_", "rsqrt_", "square_",
            "reciprocal_", "neg_", "negative_", "sin_", "cos_", "tan_", "asin_", "acos_", "atan_", "arcsin_",
            "arccos_", "arctan_", "sinh_", "cosh_", "asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_",
            "arctanh_", "erf_", "floor_", "ceil_", "round_", "trunc_", "fix_", "frac_", "deg2rad_", "rad2deg_",
            "clamp_min_", "clamp_max_", "gcd_", "lcm_", "fill_", "zero_", "detach", "detach_")},
        "fill": _tensor_fn("fill", ops.arith.fill_function),
        # group: reduce
        "prod": _tensor_fn("prod", Tensor.prod), "max": _tensor_fn("max", Tensor.max),
        "min": _tensor_fn("min", Tensor.min), "amax": _tensor_fn("amax", Tensor.amax),
        "amin": _tensor_fn("amin", Tensor.amin), "argmax": _tensor_fn("argmax", Tensor.argmax),
        "argmin": _tensor_fn("argmin", Tensor.argmin), "std": _tensor_fn("std", Tensor.std),
        "var": _tensor_fn("var", Tensor.var), "logsumexp": _tensor_fn("logsumexp", Tensor.logsumexp),
        "nansum": _tensor_fn("nansum", Tensor.nansum), "nanmean": _tensor_fn("nanmean", Tensor.nanmean),
        "var_mean": ops.reduce.var_mean, "std_mean": ops.reduce.std_mean,
        "cumsum": _tensor_fn("cumsum", Tensor.cumsum), "cumprod": _tensor_fn("cumprod", Tensor.cumprod),
        "all": _tensor_fn("all", Tensor.all), "any": _tensor_fn("any", Tensor.any),
        "softmax": _tensor_fn("softmax", Tensor.softmax), "log_softmax": _tensor_fn("log_softmax", Tensor.log_softmax),
        "dropout": _later("gradcli.engine.ops.nn", "torch_dropout"),
        "rms_norm": _later("gradcli.engine.ops.composed", "rms_norm"),
        "triplet_margin_loss": _later("gradcli.engine.ops.composed", "torch_triplet_margin_loss"),
        **{name: _later("gradcli.engine.ops.arrange", name) for name in ("channel_shuffle", "native_channel_shuffle")},
        "rrelu": _later("gradcli.engine.ops.randomized", "torch_rrelu"),
        "rrelu_": _later("gradcli.engine.ops.randomized", "torch_rrelu_"),
        # torch's names of nn ops, with ATen's signatures
        **{name: _later("gradcli.engine.ops.aten_nn", name) for name in (
            "layer_norm", "group_norm", "batch_norm", "instance_norm", "embedding", "bilinear", "kl_div",
            "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
            "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout",
            "feature_dropout_", "selu", "selu_", "celu", "celu_", "hardshrink")},
        "pairwise_distance": _later("gradcli.engine.ops.composed", "pairwise_distance"),
        "affine_grid_generator": _later("gradcli.engine.ops.affine_grid", "affine_grid_generator"),
        "ctc_loss": _later("gradcli.engine.ops.ctc", "torch_ctc_loss"),
        **{name: _later("gradcli.engine.ops.grid_sample", name) for name in (
            "grid_sampler", "grid_sampler_2d", "grid_sampler_3d")},
        "pdist": _later("gradcli.engine.ops.pdist", "pdist"),
        "dropout_": _later("gradcli.engine.ops.nn", "torch_dropout_"),
        "norm_except_dim": _later("gradcli.engine.ops.weight_norm", "norm_except_dim"),
        # group: pool
        **{name: _later("gradcli.engine.ops.pool", "torch_" + name) for name in (
            "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d",
            "adaptive_max_pool1d")},
        # group: shape
        "reshape": _tensor_list_fn("reshape", Tensor.reshape, "shape"), "flatten": _tensor_fn("flatten", Tensor.flatten),
        "unflatten": _tensor_fn("unflatten", Tensor.unflatten),
        "squeeze": _tensor_fn("squeeze", _squeeze_function), "unsqueeze": _tensor_fn("unsqueeze", Tensor.unsqueeze),
        "t": _tensor_fn("t", Tensor.t), "transpose": _tensor_fn("transpose", Tensor.transpose),
        "swapaxes": _tensor_fn("swapaxes", Tensor.transpose), "swapdims": _tensor_fn("swapdims", Tensor.transpose),
        "permute": _tensor_list_fn("permute", Tensor.permute, "dims"), "movedim": _tensor_fn("movedim", Tensor.movedim),
        "moveaxis": _tensor_fn("moveaxis", Tensor.movedim),
        "cat": ops.cat, "concat": ops.shape.concat, "concatenate": ops.concatenate, "stack": ops.stack,
        "hstack": ops.hstack, "vstack": ops.vstack, "row_stack": ops.vstack,
        "broadcast_to": _tensor_fn("broadcast_to", ops.broadcast_to),
        "broadcast_tensors": ops.shape.broadcast_tensors, "broadcast_shapes": ops.shape.torch_broadcast_shapes,
        "split": _split_function, "chunk": _tensor_fn("chunk", Tensor.chunk),
        "unbind": _tensor_fn("unbind", Tensor.unbind),
        "flip": _tensor_list_fn("flip", Tensor.flip, "dims"), "tile": _tensor_list_fn("tile", Tensor.tile, "dims"),
        "fliplr": _tensor_fn("fliplr", Tensor.fliplr),
        "flipud": _tensor_fn("flipud", Tensor.flipud), "roll": _tensor_fn("roll", Tensor.roll),
        "narrow": _tensor_fn("narrow", Tensor.narrow), "select": _tensor_fn("select", Tensor.select), "gather": _tensor_fn("gather", Tensor.gather),
        "index_select": _tensor_fn("index_select", Tensor.index_select),
        "tril": _tensor_fn("tril", Tensor.tril), "triu": _tensor_fn("triu", Tensor.triu),
        "bmm": _tensor_fn("bmm", Tensor.bmm), "mv": _tensor_fn("mv", Tensor.mv), "dot": _tensor_fn("dot", Tensor.dot),
        "vdot": _tensor_fn("vdot", Tensor.vdot), "outer": _tensor_fn("outer", Tensor.outer),
        "ger": _tensor_fn("ger", Tensor.outer),
        "einsum": _later("gradcli.engine.ops.linalg", "einsum"),
        "cross": _tensor_fn("cross", Tensor.cross),
        **{name: _later("gradcli.engine.ops.linalg", name) for name in ("tensordot", "kron", "cdist")},
        "cosine_similarity": _later("gradcli.engine.ops.composed", "cosine_similarity"),
        **{name: _later("gradcli.engine.ops.composed", name) for name in ("nuclear_norm", "frobenius_norm")},
        **{name: _later("gradcli.engine.ops.sorting", name) for name in ("sort", "argsort", "msort", "topk")},
        **{name: _later("gradcli.engine.ops.order", name) for name in (
            "median", "nanmedian", "kthvalue", "mode", "aminmax", "quantile", "nanquantile", "cummax", "cummin",
            "logcumsumexp")},
        **{name: _later("gradcli.engine.ops.statistics", name) for name in (
            "histc", "histogram", "histogramdd", "cov", "corrcoef", "trapezoid", "trapz", "cumulative_trapezoid", "isin")},
        **{name: _later("gradcli.engine.ops.search", name) for name in (
            "nonzero", "nonzero_static", "argwhere", "count_nonzero", "unique", "unique_consecutive", "bincount", "searchsorted",
            "bucketize")},
        **{name: _later("gradcli.engine.ops.scatter", name) for name in (
            "scatter", "scatter_add", "index_add", "select_scatter", "slice_scatter", "diagonal_scatter")},
        **{name: _later("gradcli.engine.ops.indexed", name) for name in (
            "index_fill", "index_copy", "index_put", "index_put_", "index_reduce", "scatter_reduce", "masked_scatter",
            "take", "put", "unravel_index")},
        **{name: _later("gradcli.engine.ops.arrange", name) for name in (
            "meshgrid", "cartesian_prod", "diff", "repeat_interleave", "take_along_dim", "rot90", "block_diag",
            "pixel_shuffle", "pixel_unshuffle", "tensor_split", "hsplit", "vsplit", "dsplit", "atleast_1d",
            "atleast_2d", "atleast_3d", "column_stack", "dstack", "masked_select", "combinations", "vander")},
        "prelu": _later("gradcli.engine.ops.nn", "prelu"),
        **{name: _later("gradcli.engine.ops.blas", name) for name in ("addmm", "addmv", "addr", "baddbmm", "addbmm")},
        "det": _tensor_fn("det", Tensor.det), "inverse": _tensor_fn("inverse", Tensor.inverse),
        "cholesky": _tensor_fn("cholesky", Tensor.cholesky),
        "cholesky_inverse": _tensor_fn("cholesky_inverse", Tensor.cholesky_inverse),
        "cholesky_solve": _later("gradcli.engine.ops.lu", "cholesky_solve"),
        "lu": _later("gradcli.engine.ops.lu", "lu_legacy"), "lu_solve": _later("gradcli.engine.ops.lu", "lu_solve_legacy"),
        "lu_unpack": _later("gradcli.engine.ops.lu", "lu_unpack"),
        "triangular_solve": _later("gradcli.engine.ops.lu", "triangular_solve"),
        "geqrf": _later("gradcli.engine.ops.householder", "geqrf"),
        "orgqr": _later("gradcli.engine.ops.householder", "householder_product"),
        "ormqr": _later("gradcli.engine.ops.householder", "ormqr"),
        **{name: _later("gradcli.engine.ops.lu", f"{name}_removed") for name in ("solve", "lstsq", "symeig", "eig")},
        "matrix_power": _tensor_fn("matrix_power", Tensor.matrix_power),
        "chain_matmul": _later("gradcli.engine.ops.linalg", "chain_matmul"),
        "slogdet": _tensor_fn("slogdet", Tensor.slogdet), "logdet": _tensor_fn("logdet", Tensor.logdet),
        **{name: _later("gradcli.engine.ops.lowrank", name) for name in ("svd_lowrank", "pca_lowrank")},
        "matrix_exp": _tensor_fn("matrix_exp", Tensor.matrix_exp), "svd": _tensor_fn("svd", Tensor.svd),
        "qr": _tensor_fn("qr", Tensor.qr), "pinverse": _tensor_fn("pinverse", Tensor.pinverse),
        "trace": _tensor_fn("trace", Tensor.trace), "diag": _tensor_fn("diag", Tensor.diag),
        "diagonal": _tensor_fn("diagonal", Tensor.diagonal), "diag_embed": _tensor_fn("diag_embed", Tensor.diag_embed),
        # group: conv
        **_CONV,
        "embedding_bag": _later("gradcli.engine.ops.embedding_bag", "torch_embedding_bag"),
        # group: creation
        "resize_as_": _later("gradcli.engine.resize", "torch_resize_as_"),
        "constant_pad_nd": _later("gradcli.engine.ops.shape", "constant_pad_nd"),
        "convolution": _later("gradcli.engine.ops.conv", "torch_convolution"),
        "binary_cross_entropy_with_logits": _later("gradcli.engine.ops.nn", "torch_binary_cross_entropy_with_logits"),
        "embedding_renorm_": _later("gradcli.engine.ops.nn", "torch_embedding_renorm_"),
        "native_dropout": _later("gradcli.engine.ops.nn", "native_dropout"),
        "native_layer_norm": ops.normalization.native_layer_norm,
        "native_batch_norm": ops.normalization.native_batch_norm,
        **{name: _later("gradcli.engine.ops.rnn", name) for name in (
            "rnn_tanh_cell", "rnn_relu_cell", "gru_cell", "lstm_cell")},
        **{name: _later("gradcli.language.symbolic", name) for name in (
            "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_ite", "sym_sum")},
        **{name: _later("gradcli.engine.ops.viewcopy", name) for name in (
            "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
            "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
            "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy", "view_as_real_copy",
            "view_as_complex_copy")},
        "arange": options(factories.arange, "arange"), "range": options(factories.inclusive_range, "range", pin=False),
        "linspace": options(factories.linspace, "linspace"), "logspace": options(factories.logspace, "logspace"),
        **{name: _later("gradcli.engine.windows", name) for name in (
            "hann_window", "hamming_window", "bartlett_window", "blackman_window", "kaiser_window")},
        "stft": _later("gradcli.engine.ops.stft", "stft"), "istft": _later("gradcli.engine.ops.stft", "istft"),
        "eye": options(factories.eye, "eye"), "tril_indices": options(factories.tril_indices, "tril_indices"),
        "triu_indices": options(factories.triu_indices, "triu_indices"),
        "randint": options(factories.randint, "randint"), "randperm": options(factories.randperm, "randperm"),
        "normal": factories.normal,
        "rand_like": options(factories.rand_like, "rand_like"), "randn_like": options(factories.randn_like, "randn_like"),
        "randint_like": options(factories.randint_like, "randint_like"),
        "empty_like": options(factories.empty_like, "empty_like"),
        "empty_permuted": options(factories.empty_permuted, "empty_permuted"),
        **{name: _later("gradcli.engine.distributions", name) for name in ("bernoulli", "multinomial", "poisson",
                                                                                    "binomial")},
        "Generator": factories.generator,
        "finfo": typeinfo.finfo, "iinfo": typeinfo.iinfo, "promote_types": typeinfo.promote_types,
        "can_cast": typeinfo.can_cast, "result_type": typeinfo.result_type,
        "random": ScriptModule("torch.random", {
            "manual_seed": factories.manual_seed, "seed": factories.seed, "initial_seed": factories.initial_seed,
            "get_rng_state": factories.get_rng_state, "set_rng_state": factories.set_rng_state,
        }),
        "get_rng_state": factories.get_rng_state, "set_rng_state": factories.set_rng_state,
        "default_generator": rng.default_generator,
        "inference_mode": autograd.inference_mode, "is_inference_mode_enabled": autograd.is_inference_mode_enabled,
        "is_anomaly_enabled": autograd.is_anomaly_enabled,
        "is_tensor": _is_tensor, "is_storage": _is_storage, "as_strided": _tensor_fn("as_strided", ops.shape.as_strided_view),
        "is_floating_point": _tensor_fn("is_floating_point", Tensor.is_floating_point),
        "is_inference": _tensor_fn("is_inference", Tensor.is_inference),
        "is_distributed": _tensor_fn("is_distributed", lambda t: False),
        "is_vulkan_available": _false, "is_warn_always_enabled": _is_warn_always_enabled,
        "set_warn_always": _set_warn_always,
        "is_anomaly_check_nan_enabled": autograd.is_anomaly_check_nan_enabled,
        "set_anomaly_enabled": autograd.set_anomaly_enabled,
        # constants and namespaces
        "pi": _math.pi, "e": _math.e, "inf": _math.inf, "nan": _math.nan,
        "autograd": autograd_ns, "nn": ScriptModule.later("torch.nn", _make_nn), "linalg": linalg, "func": func,
        "vmap": vmap, "optim": ScriptModule.later("torch.optim", _make_optim),
        "utils": ScriptModule("torch.utils", {"data": ScriptModule.later("torch.utils.data", _make_data),
                                              "checkpoint": ScriptModule.later("torch.utils.checkpoint",
                                                                               _make_checkpoint)}),
        "distributions": ScriptModule.later("torch.distributions", _make_distributions),
        "device": devices.device,
        "cuda": ScriptModule("torch.cuda", {**devices.CUDA, "amp": ScriptModule.later("torch.cuda.amp", _make_cuda_amp)}),
        **{name: _later("gradcli.engine.autocast", name) for name in _AUTOCAST}, "autocast": _autocast,
        "amp": _AMP, "compile": _later("gradcli.language.compiling", "compile"),
        "compiler": ScriptModule.later("torch.compiler", _make_compiler),
        "cpu": ScriptModule("torch.cpu", {"amp": ScriptModule.later("torch.cpu.amp", _make_cpu_amp)}),
        "backends": ScriptModule.later("torch.backends", _make_backends),
        **{name: _later("gradcli.language.backends", name) for name in _BACKEND_FUNCTIONS},
        "set_default_device": devices.set_default_device, "get_default_device": devices.get_default_device,
        "set_default_dtype": devices.set_default_dtype, "get_default_dtype": devices.get_default_dtype,
        "set_default_tensor_type": devices.set_default_tensor_type, "typename": _typename,
        "gradient": _later("gradcli.engine.ops.composed", "gradient"),
        "testing": ScriptModule("torch.testing", {"assert_close": _later("gradcli.engine.closeness", "assert_close")}),
        "dtype": _no_instances("torch.dtype"), "layout": _no_instances("torch.layout"),
        "strided": dtypes.strided, "sparse_coo": dtypes.sparse_coo,
        "memory_format": _no_instances("torch.memory_format"), **dtypes.MEMORY_FORMATS,
        "sparse_coo_tensor": _later("gradcli.engine.sparse", "sparse_coo_tensor"),
        "sparse": ScriptModule.later("torch.sparse", _make_sparse),
        "__version__": torchapi.VERSION,
        "version": ScriptModule("torch.version", {"__version__": torchapi.VERSION, "cuda": None}),
    }
    for alias, dt in dtypes.ALIASES.items():
        members[alias] = dt
    for name, dt in devices.TYPED.items():
        members[name] = devices.typed_constructor(dt)
    return _expose(ScriptModule("torch", members))


# torch.special: the functions gradcli has, under PyTorch's names (its argument errors say special_erf, ...)
_SPECIAL = ScriptModule("torch.special", {
    "expit": ops.elementwise.expit, "erf": _tensor_fn("special_erf", Tensor.erf),
    "erfc": _tensor_fn("special_erfc", Tensor.erfc), "exp2": _tensor_fn("special_exp2", Tensor.exp2),
    "expm1": _tensor_fn("special_expm1", Tensor.expm1), "log1p": _tensor_fn("special_log1p", Tensor.log1p),
    "sinc": _tensor_fn("special_sinc", Tensor.sinc),
    "logit": _tensor_fn("special_logit", lambda input, *args, **kwargs: ops.elementwise.logit(
        input, *args, **kwargs, name="special_logit", position=None if kwargs else 2)),
    "xlogy": ops.elementwise.special_xlogy, "xlog1py": ops.elementwise.xlog1py,
    "gammaln": _tensor_fn("special_gammaln", Tensor.lgamma), "digamma": _tensor_fn("special_digamma", Tensor.digamma),
    "psi": _tensor_fn("special_psi", Tensor.digamma), "erfinv": _tensor_fn("special_erfinv", Tensor.erfinv),
    "i0": _tensor_fn("special_i0", Tensor.i0),
    "polygamma": _later("gradcli.engine.ops.special", "special_polygamma"),
    "multigammaln": _later("gradcli.engine.ops.special", "multigammaln"),
    "i0e": _later("gradcli.engine.ops.special", "special_i0e_function"),
    "i1": _later("gradcli.engine.ops.special", "special_i1_function"),
    "i1e": _later("gradcli.engine.ops.special", "special_i1e_function"),
    "entr": _later("gradcli.engine.ops.special", "special_entr"),
    **{name: _later("gradcli.engine.ops.special", "special_" + name) for name in (
        "softmax", "log_softmax", "logsumexp", "round", "ndtr")},
    **{name: _later("gradcli.engine.ops.normal", "special_" + name) for name in ("ndtri", "log_ndtr", "erfcx")},
    "zeta": _later("gradcli.engine.ops.special", "special_zeta"),
    "gammainc": _later("gradcli.engine.ops.igamma", "gammainc"),
    "gammaincc": _later("gradcli.engine.ops.igamma", "gammaincc"),
    **{name: _later("gradcli.engine.ops.bessel", name) for name in (
        "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
        "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
        "spherical_bessel_j0", "airy_ai")},
    **{name: _later("gradcli.engine.ops.polynomials", name) for name in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
        "legendre_polynomial_p")},
})


def _make_fft() -> dict:
    """torch.fft (gradcli.engine.ops.fft), imported when a script first reads it."""
    from gradcli.engine.ops import fft
    return {name: getattr(fft, name) for name in fft.NAMES}


def _make_data() -> dict:
    """torch.utils.data, the only part of torch.utils (gradcli.language.torchdata): nothing that reaches
    files or processes."""
    from gradcli.language import torchdata as td
    names = ("Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader", "random_split", "default_collate",
             "default_convert",
             "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler")
    names += ("IterableDataset", "ChainDataset", "WeightedRandomSampler", "StackDataset", "get_worker_info")
    return {name: getattr(td, name) for name in names}


def _make_checkpoint() -> dict:
    """torch.utils.checkpoint: activation checkpointing (gradcli.engine.checkpoint)."""
    from gradcli.engine import checkpoint
    from gradcli.language.nn.containers import Sequential

    def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
        if isinstance(functions, Sequential):       # its layers, as PyTorch takes them
            functions = list(functions.children())
        return checkpoint.checkpoint_sequential(functions, segments, input, use_reentrant, **kwargs)

    return {"checkpoint": checkpoint.checkpoint, "checkpoint_sequential": checkpoint_sequential}


def _make_distributions() -> dict:
    """torch.distributions (gradcli.language.distributions): the distributions' classes, kl_divergence and
    torch.distributions.kl."""
    from gradcli.language import distributions as dist, distributions_more as more, transforms, wishart
    classes = dist.CLASSES + more.CLASSES + wishart.CLASSES
    members = {cls.__name__: cls for cls in classes + transforms.CLASSES}
    members["transforms"] = ScriptModule("torch.distributions.transforms", {
        cls.__name__: cls for cls in transforms.CLASSES} | {"identity_transform": transforms.identity_transform})
    members["identity_transform"] = transforms.identity_transform
    kl = Builtin("torch.distributions", "kl_divergence", dist.kl_divergence)     # one function under two names
    members["kl_divergence"] = kl
    register = Builtin("torch.distributions", "register_kl", dist.register_kl)
    members["register_kl"] = register
    members["kl"] = ScriptModule("torch.distributions.kl", {"kl_divergence": kl, "register_kl": register})
    members["constraints"] = ScriptModule("torch.distributions.constraints", dict(dist.CONSTRAINTS))
    for cls in classes + more.MODULE_ONLY:        # torch.distributions.normal, ...: the modules PyTorch defines them in
        path = cls.__module__
        members.setdefault(path.rpartition(".")[2], ScriptModule(path, {}))
        members[path.rpartition(".")[2]].members[cls.__name__] = cls
    return members


def _build_math() -> ScriptModule:
    """All of Python's math module: its functions only compute numbers (those that can build huge
    integers are bounded)."""
    members = {n: getattr(_math, n) for n in dir(_math) if not n.startswith("_")}
    members.update(bounds.bounded_math())      # factorial, comb, perm, prod: bounded results
    return ScriptModule("math", members)


# Python's random module, with CPython's own generator, so `random.seed(42); random.random()` gives
# CPython's numbers. Its stream is part of the engine's state: a session seeds it, a replay restores it.
_RANDOM_NAMES = (
    "seed", "random", "uniform", "triangular", "randint", "randrange", "choice", "choices", "shuffle", "sample",
    "gauss", "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate",
    "betavariate", "paretovariate", "weibullvariate", "getrandbits", "getstate", "setstate", "binomialvariate",
)


def _make_random() -> dict:
    """The `random` module, made when a script first imports it (Python's random costs every run 1.4 ms):
    its stream starts from the session's seed (Session.reset_state)."""
    import random
    stream = STATE.python_random = random.Random() if STATE.python_seed is None else random.Random(STATE.python_seed)
    members = {}
    for name in _RANDOM_NAMES:
        method = getattr(stream, name, None)
        if method is None:
            continue
        bounded = bounds.RANDOM_METHODS.get(name)
        members[name] = method if bounded is None else bounds.Bounded(method, functools.partial(bounded, stream))
    members["Random"] = random.Random
    return members


# itertools without tee (it buffers without bound); string's constants; time's clocks.
_ITERTOOLS_NAMES = ("accumulate", "chain", "combinations", "combinations_with_replacement", "compress", "count",
                    "cycle", "dropwhile", "filterfalse", "groupby", "islice", "pairwise", "permutations",
                    "product", "repeat", "starmap", "takewhile", "zip_longest")
_STRING_NAMES = ("ascii_letters", "ascii_lowercase", "ascii_uppercase", "capwords", "digits", "hexdigits",
                 "octdigits", "printable", "punctuation", "whitespace")


def _build_itertools() -> ScriptModule:
    members = {n: getattr(_itertools, n) for n in _ITERTOOLS_NAMES if hasattr(_itertools, n)}
    members.update(bounds.bounded_itertools())
    return ScriptModule("itertools", members)


TORCH = _build_torch()
MATH = _build_math()
RANDOM = ScriptModule.later("random", _make_random)
ITERTOOLS = _build_itertools()


def _make_string() -> dict:
    import string
    return {n: getattr(string, n) for n in _STRING_NAMES}


STRING = ScriptModule.later("string", _make_string)

# the statistics scripts keep of their losses and timings
_STATISTICS_NAMES = ("mean", "fmean", "median", "mode", "stdev", "pstdev", "variance")


def _make_statistics() -> dict:
    """Python's statistics module, in part: CPython's own functions, so every result and message is its own,
    with their data taken (within the bound of a list) before they read it."""
    import statistics
    members = {name: bounds.Bounded(getattr(statistics, name), _statistic(getattr(statistics, name)))
               for name in _STATISTICS_NAMES}
    members["StatisticsError"] = statistics.StatisticsError
    return members


# the functions that sum exactly: they make a fractions.Fraction of each item and call the data's type with one
_EXACT_STATISTICS = frozenset(("mean", "stdev", "pstdev", "variance"))


def _statistic(fn):
    exact = fn.__name__ in _EXACT_STATISTICS

    def bounded(data, *args, **kwargs):
        items = bounds.take(data, "list")
        if exact:
            for x in (*items, *args, *kwargs.values()):
                if x.__class__.__class__ is classes.ScriptType:     # a Fraction must not reach the script's class
                    raise TypeError(f"statistics.{fn.__name__}() of '{x.__class__.__name__}' objects is outside "
                                    "gradcli's language: it takes numbers")
        return fn(items, *args, **kwargs)
    bounded.__name__ = bounded.__qualname__ = fn.__name__       # its argument errors name it: mean() missing...
    return bounded


STATISTICS = ScriptModule.later("statistics", _make_statistics)
TIME = ScriptModule("time", {"time": _time.time, "perf_counter": _time.perf_counter})


def _later_python(name: str, module: str, maker: str = "members") -> ScriptModule:
    """A Python module gradcli writes in gradcli.language.MODULE, whose function `maker` makes its table on the
    first import (each module's docstring says what it offers and how it is bounded)."""
    return ScriptModule.later(name, lambda: getattr(importlib.import_module("gradcli.language." + module), maker)())


WARNINGS = _later_python("warnings", "pywarnings")       # its filters govern the engine's warnings too
SYS = _later_python("sys", "pysys")                      # a safe part
JSON = _later_python("json", "pyjson")
IO = _later_python("io", "pyio")                         # the in-memory streams
LOGGING = _later_python("logging", "pylogging")          # its state lasts one session
HEAPQ = _later_python("heapq", "pysorting", "heapq_members")
BISECT = _later_python("bisect", "pysorting", "bisect_members")
PPRINT = _later_python("pprint", "pytext", "pprint_members")
RE = _later_python("re", "pyre", "re_members")
TEXTWRAP = _later_python("textwrap", "pytext", "textwrap_members")
TYPES = _later_python("types", "pytypes")                # SimpleNamespace
ARGPARSE = _later_python("argparse", "pyargparse")       # CPython's parser, writing and exiting as the script
UNICODEDATA = _later_python("unicodedata", "pyre", "unicodedata_members")
TRACEBACK = _later_python("traceback", "pytraceback")    # from gradcli's record of an exception, no frames


def _make_copy() -> dict:
    from gradcli.language import copying
    return copying.make_module(Builtin, (Builtin, ScriptModule, ClassValue), type_name)


COPY = ScriptModule.later("copy", _make_copy)
FUTURE = ScriptModule("__future__", {n: getattr(_future, n) for n in _future.all_feature_names})
COLLECTIONS = ScriptModule("collections", pycollections.members())
COLLECTIONS.members["abc"] = ScriptModule.later("collections.abc", pycollections.abc_members)


# The modules written above this one (gradcli.language.pytyping, pydataclasses, pyoperator, which import it): their
# members' makers, set by gradcli.session, which may import them; `typing_instance_classes`: pytyping's
# isinstance of Optional[int] and its kin
LATER_MAKERS: dict = {}
TYPING_INSTANCE_CLASSES = [None]
TYPING = ScriptModule.later("typing", lambda: LATER_MAKERS["typing"]())
DATACLASSES = ScriptModule.later("dataclasses", lambda: LATER_MAKERS["dataclasses"]())
OPERATOR = ScriptModule.later("operator", lambda: LATER_MAKERS["operator"]())
ABC = ScriptModule.later("abc", lambda: LATER_MAKERS["abc"]())
CONTEXTLIB = ScriptModule.later("contextlib", lambda: LATER_MAKERS["contextlib"]())
ENUM = ScriptModule.later("enum", lambda: LATER_MAKERS["enum"]())
FUNCTOOLS = ScriptModule.later("functools", lambda: LATER_MAKERS["functools"]())
INSPECT = ScriptModule.later("inspect", lambda: LATER_MAKERS["inspect"]())
# Classes of values scripts hold whose attributes are all outside the language (typing's values) -> a function
# giving the dotted name of the class CPython has for such a value ('typing._GenericAlias')
OPAQUE_CLASSES: dict = {}


_PARTIAL_MODULES = ("typing", "dataclasses", "statistics", "warnings", "sys", "json", "heapq", "bisect", "pprint",
                    "textwrap", "abc", "contextlib", "enum", "functools", "io", "inspect", "logging", "types", "argparse",
                    "re", "traceback", "unicodedata")
# Names of Python's modules that gradcli leaves out of the language, with the reason
_NO_FILES = "gradcli's io has the in-memory streams (BytesIO, StringIO) only: scripts cannot read or write files"
REFUSED_MEMBERS = {"contextlib": {"chdir": "scripts cannot reach files or directories"},
                   "io": {name: _NO_FILES for name in ("open", "open_code", "FileIO", "TextIOWrapper", "BufferedReader",
                                                       "BufferedWriter", "BufferedRandom", "BufferedRWPair",
                                                       "text_encoding")},
                   "argparse": {"FileType": "scripts cannot read or write files"},
                   "re": {name: reason for name, reason in (
                       ("DEBUG", "its dump of a pattern writes to the process's stdout"),
                       ("T", "a flag deprecated in Python 3.11"), ("TEMPLATE", "a flag deprecated in Python 3.11"),
                       ("template", "deprecated in Python 3.11 (use re.compile)"))},
                   "unicodedata": {"ucd_3_2_0": "gradcli offers the current Unicode database only",
                                   "UCD": "gradcli offers the current Unicode database only"}}


def refused_member(module: str, name: str) -> str | None:
    """Why `module.name` is outside the language, if it is one of REFUSED_MEMBERS."""
    refused = REFUSED_MEMBERS.get(module)
    return refused.get(name) if refused is not None else None


def python_has(module: str, name: str) -> bool:
    """Whether a Python module gradcli offers part of (typing, dataclasses, statistics) has `name`: one it leaves
    out is not implemented, rather than missing. (Only asked when a script reaches for a name it lacks.)"""
    if module not in _PARTIAL_MODULES:
        return False
    found = importlib.import_module(module)
    exported = getattr(found, "__all__", None)
    if exported is None and module == "sys":        # sys has none: what gradcli does not offer is outside the language
        return False
    # (abc has none either: its public names are its exports)
    return name in exported if exported is not None else name[:1] != "_" and hasattr(found, name)


def python_internal(module: str, name: str) -> bool:
    """Whether `name` is one of a Python module's own that it does not export (typing.sys, typing.re)."""
    return module in _PARTIAL_MODULES and not python_has(module, name) and \
        hasattr(importlib.import_module(module), name)


def register_opaque(paths: dict) -> None:
    OPAQUE_CLASSES.update(paths)


def _importable(module: ScriptModule) -> list:
    names = [] if module.name in _NAMESPACES else [module.name]
    for member in module.members.values():
        if member.__class__ is ScriptModule:
            names += _importable(member)
    return names


# torch's classes as scripts name them (Builtins that construct or refuse) -> gradcli's classes
_SCRIPT_CLASSES = {id(TORCH.members["Tensor"]): Tensor, id(TORCH.members["Size"]): Size,
                   id(TORCH.members["dtype"]): dtypes.DType, id(TORCH.members["Generator"]): rng.Generator,
                   id(TORCH.members["finfo"]): typeinfo.FInfo, id(TORCH.members["iinfo"]): typeinfo.IInfo,
                   id(TORCH.members["autograd"].members["graph"].members["Node"]): autograd.Node,
                   id(TORCH.members["device"]): _Device, id(TORCH.members["layout"]): dtypes.Layout,
                   id(TORCH.members["memory_format"]): dtypes.MemoryFormat}
# torch.optim's classes and its schedulers', as the script's torch.optim names them (once torch.optim is made)
_OPTIM_CLASSES: dict = {}
dtypes.LEGACY_CLASSES[id(factories.legacy_tensor)] = None     # x.type(torch.Tensor): the default float dtype


def _nn_made(nn: ScriptModule) -> None:
    from gradcli.language import nn as nn_classes
    _SCRIPT_CLASSES[id(nn.members["Parameter"])] = nn_classes.Parameter
    _SCRIPT_CLASSES[id(nn.members["Buffer"])] = nn_classes.Buffer
    nn_classes.transformer.functional = lambda: nn.members["functional"]


def _optim_made(optim_ns: ScriptModule) -> None:
    from gradcli.engine import lbfgs, lr_scheduler
    held = {cls: optim_ns.members[cls.__name__] for cls in lbfgs.OPTIMIZERS}
    held.update((cls, optim_ns.members["lr_scheduler"].members[cls.__name__]) for cls in lr_scheduler.SCHEDULERS)
    _OPTIM_CLASSES.update(held)
    _SCRIPT_CLASSES.update((id(h), cls) for cls, h in held.items())
    _HELD_CLASSES.update(held)
    classes.LIBRARY_BASES.update((id(h), cls) for cls, h in held.items())     # class MyOpt(Optimizer)


def _swa_utils_made(swa_ns: ScriptModule) -> None:
    from gradcli.engine import swa
    held = {swa.SWALR: swa_ns.members["SWALR"]}
    _OPTIM_CLASSES.update(held)
    _SCRIPT_CLASSES.update((id(h), cls) for cls, h in held.items())
    _HELD_CLASSES.update(held)
    classes.LIBRARY_BASES.update((id(h), cls) for cls, h in held.items())     # class MySWALR(SWALR)


# The modules a script can import by their first name
_TOP = {"torch": TORCH, "math": MATH, "random": RANDOM, "itertools": ITERTOOLS, "functools": FUNCTOOLS,
        "string": STRING, "time": TIME, "collections": COLLECTIONS, "copy": COPY, "typing": TYPING,
        "dataclasses": DATACLASSES, "operator": OPERATOR, "statistics": STATISTICS, "warnings": WARNINGS,
        "sys": SYS, "json": JSON, "heapq": HEAPQ, "bisect": BISECT,
        "pprint": PPRINT, "textwrap": TEXTWRAP, "abc": ABC, "contextlib": CONTEXTLIB, "enum": ENUM, "io": IO,
        "re": RE, "traceback": TRACEBACK, "unicodedata": UNICODEDATA,
        "inspect": INSPECT, "logging": LOGGING, "types": TYPES, "argparse": ARGPARSE}


def modules() -> tuple:
    """Every module a script can import (this makes the modules made later: only for messages and completion)."""
    return tuple(sorted(_importable(TORCH))) + tuple(sorted(name for name in _TOP if name != "torch"))


def _find(path: str) -> ScriptModule | None:
    """The module `path` if the modules on the way to it are made (this makes nothing), else None."""
    parts = path.split(".")
    mod = _TOP.get(parts[0])
    for p in parts[1:]:
        if mod is None or not mod.made:
            return None
        mod = mod.members.get(p)
        if mod.__class__ is not ScriptModule:
            return None
    return mod


# ------------------------------------------------------------------------- argument errors of calls

_PUBLIC: dict = {}    # id of each torch function a script can reach -> (module path, name, it): its first name


def _register_public(module: ScriptModule) -> None:
    """Record the torch functions of `module` and of its submodules already made, breadth first, each
    under the first name it has (torch.conv2d before torch.nn.functional.conv2d: a name already taken
    stays, and a module made later is deeper than torch's own names)."""
    if not module.name.startswith("torch"):
        return
    stack = [module]
    while stack:
        mod = stack.pop(0)
        for name, obj in mod.members.items():
            if obj.__class__ is ScriptModule:
                if obj.made:
                    stack.append(obj)
            elif callable(obj) and not isinstance(obj, type):
                # a script may hold the Builtin (torch.add as a value) or call its function straight
                # (torch.add(...) skips the Builtin layer: access.get_method)
                for target in (obj, obj.func) if isinstance(obj, Builtin) else (obj,):
                    if id(target) not in _PUBLIC and not isinstance(target, type):
                        _PUBLIC[id(target)] = (mod.name, name, target)


_register_public(TORCH)
when_made("torch.nn", _nn_made)
when_made("torch.optim", _optim_made)
when_made("torch.optim.swa_utils", _swa_utils_made)
_NATIVE_MODULES = ("torch", "torch.linalg", "torch.special", "torch.fft")     # functions PyTorch writes in C++ (their own wording)
# torch.nn.functional is Python, but these of its names are C++ functions (builtins in PyTorch 2.13)
_NATIVE_FUNCTIONAL = frozenset(
    "adaptive_avg_pool1d avg_pool1d avg_pool2d avg_pool3d bilinear celu_ channel_shuffle conv1d conv2d conv3d "
    "conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity elu_ gelu hardshrink hardtanh_ "
    "leaky_relu_ linear logsigmoid native_channel_shuffle one_hot pairwise_distance pdist pixel_shuffle "
    "pixel_unshuffle prelu relu_ rrelu_ selu_ softplus softshrink threshold_".split())


# torch.nn.functional's members that are torch's own functions in PyTorch (`F.conv2d is torch.conv2d`)
_SAME_AS_TORCH = (
    "adaptive_avg_pool1d avg_pool1d bilinear celu_ channel_shuffle conv1d conv2d conv3d conv_transpose1d "
    "conv_transpose2d conv_transpose3d cosine_similarity hardshrink native_channel_shuffle pairwise_distance pdist "
    "pixel_shuffle pixel_unshuffle prelu relu_ rrelu_ selu_ threshold_".split())


def _share_torch_functions(nn_module: "ScriptModule") -> None:
    """F's entries become torch's (after the module's functions were registered by their first names: the
    ones replaced are forgotten there)."""
    functional = nn_module.members["functional"].members
    for name in _SAME_AS_TORCH:
        if name in functional and name in TORCH.members:
            replaced = functional[name]
            for target in (replaced, getattr(replaced, "func", None)):
                entry = _PUBLIC.get(id(target))
                if entry is not None and entry[:2] == ("torch.nn.functional", name):
                    del _PUBLIC[id(target)]
            functional[name] = TORCH.members[name]


when_made("torch.nn", _share_torch_functions)


# PyTorch's Python functions
_PYTHON_TORCH = frozenset(("norm", "split", "typename", "set_default_tensor_type", "is_tensor", "is_storage", "is_warn_always_enabled",
                           "set_warn_always", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt",
                           "sym_ite", "sym_sum", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
                           "unique", "unique_consecutive", "meshgrid", "cartesian_prod", "block_diag", "lu", "solve",
                           "lstsq", "symeig", "eig", "unravel_index", "stft"))


def _native(path: str, name: str) -> bool:
    """Whether PyTorch writes `path.name` in C++ (its parser's words, numpy's keyword names)."""
    if path in _NATIVE_MODULES:
        return not (path == "torch" and name in _PYTHON_TORCH)
    return path == "torch.nn.functional" and name in _NATIVE_FUNCTIONAL
_NO_ARGUMENT_FLAGS = 0x04 | 0x08                   # CO_VARARGS | CO_VARKEYWORDS


# PyTorch's parser takes numpy's names for these parameters of its C++ functions (not of its Python ones)
NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}
_PYTHON_METHODS = frozenset(("norm", "backward", "register_hook", "split", "unflatten", "retain_grad", "unique", "dim_order",
                             "unique_consecutive", "lu", "solve", "lstsq", "eig", "symeig", "stft", "istft"))
# C++ functions whose own parameters have those names: the parser takes them as they are
_OWN_NUMPY_NAMES = {"cosine_similarity": frozenset(("x1", "x2")), "vecdot": frozenset(("x",)), "vander": frozenset(("x",)),
                    **{name: frozenset(("x",)) for name in (
                        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                        "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                        "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                        "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")}}


def torch_name(f) -> str | None:
    """'torch.nn.functional.relu' for a torch function as a script holds or calls it, else None."""
    entry = _PUBLIC.get(id(f))
    return f"{entry[0]}.{entry[1]}" if entry is not None and entry[2] is f else None


def numpy_keywords(f, kwargs: dict) -> dict:
    """The keywords of a call to `f` with numpy's names (axis=, keepdims=, ...) given PyTorch's, when `f`
    is a torch function or tensor method that PyTorch writes in C++ (its parser takes both names)."""
    func = getattr(f, "__func__", None)
    if func is not None and getattr(f, "__self__", None).__class__ is Tensor:
        if func.__name__ in _PYTHON_METHODS:
            return kwargs
        method = True
    else:
        entry = _PUBLIC.get(id(f))
        if entry is None or entry[2] is not f or not _native(entry[0], entry[1]):
            return kwargs
        method = False
    out = {}
    for k, v in kwargs.items():
        real = NUMPY_KEYWORDS.get(k)
        if real is not None and real not in kwargs and not (method and real == "input") \
                and (method or k not in _OWN_NUMPY_NAMES.get(entry[1], ())):
            k = real
        out[k] = v
    return out


_UNBOUND: dict = {}


def unbound_tensor_method(name: str) -> Builtin:
    """`torch.Tensor.NAME`: the method read from the class, called with its tensor first (what a script can
    do with `x.NAME` and no more), with PyTorch's words for a first argument that is not a tensor. One
    object per name, as the class holds one (`torch.Tensor.add is torch.Tensor.add`)."""
    made = _UNBOUND.get(name)
    if made is None:
        made = _UNBOUND[name] = _unbound_tensor_method(name)
    return made


def _unbound_tensor_method(name: str) -> Builtin:
    def method(*args, **kwargs):
        if not args:
            raise TypeError(f"unbound method TensorBase.{name}() needs an argument")
        if _sparse_tensor(args[0]):
            return _sparse_method(args[0], name)(*args[1:], **kwargs)
        if args[0].__class__ is not Tensor:
            raise TypeError(f"descriptor '{name}' for 'torch._C.TensorBase' objects doesn't apply to a "
                            f"'{type_name(args[0])}' object")
        bound = getattr(args[0], name)
        rest = list(args[1:])
        try:
            return bound(*rest, **numpy_keywords(bound, kwargs))
        except (TypeError, AttributeError, ValueError) as exc:
            replaced = argument_error(exc, bound, rest, kwargs)
            if replaced is exc:
                raise
            raise replaced from None
    method.__name__ = method.__qualname__ = name
    return Builtin("unbound torch.Tensor", name, method)


_FUNCTION = type(lambda: None)


def argument_error(exc: Exception, f, args: list, kwargs: dict) -> BaseException:
    """The error to report for a script's call `f(*args, **kwargs)` that raised `exc` (a TypeError,
    AttributeError or ValueError): PyTorch's message when `f` is a torch function or tensor method
    whose arguments PyTorch's parser would refuse (see engine/signatures.py), else `exc` itself.
    Runs only after a call has failed."""
    if f.__class__ is Builtin and f.namespace == "torch.Tensor":     # a method read as a value (getattr)
        f = f.func
    if f.__class__ is _FUNCTION:        # a torch function as complexops.guarded hands it out: the function itself
        f = getattr(f, "guarded", f)
    func = getattr(f, "__func__", None)
    if func is not None and getattr(f, "__self__", None).__class__ is Tensor:
        name, key, method, native = func.__name__, f"Tensor.{func.__name__}", True, True
        code = getattr(func, "__code__", None)
        no_args = (code is not None and code.co_argcount == 1 and not code.co_kwonlyargcount
                   and not code.co_flags & _NO_ARGUMENT_FLAGS)
        if name in _PYTHON_METHODS:         # PyTorch's own Python: Python's words, `self` counted
            name, method, native = f"Tensor.{name}", False, False
    else:
        entry = _PUBLIC.get(id(f))
        if entry is None or entry[2] is not f:
            return exc
        path, name, _ = entry
        key, method, native, no_args = f"{path}.{name}", False, _native(path, name), False
    message = signatures.check(key, tuple(args), kwargs)
    if message is None and exc.__class__ is TypeError and _raised_by_binding(exc):
        message = signatures.rename_binding_error(str(exc), signatures.parser_name(key, name), method, native,
                                                  no_args, None if method else key)
    if message is None:
        return exc
    return TypeError(message)


def _raised_by_binding(exc: BaseException) -> bool:
    """Whether a TypeError arose in gradcli's own code rather than in a script's function that gradcli
    called back (whose messages name the script's own functions, as Python's do)."""
    tb = exc.__traceback__
    if tb is None or tb.tb_next is None:
        return True
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_globals.get("__name__") != "gradcli.language.compiler"


def module(path: str) -> ScriptModule | None:
    """The module an import names (`torch.nn.functional`), or None when gradcli has no such module."""
    if path == "__future__":          # from __future__ import ...: the features, as CPython binds them
        return FUTURE
    parts = path.split(".")
    mod = _TOP.get(parts[0])
    if mod is None:
        return None
    for p in parts[1:]:
        mod = mod.members.get(p)
        if not isinstance(mod, ScriptModule):
            return None
    return None if path in _NAMESPACES else mod


# Namespaces scripts reach as attributes that are not modules in PyTorch (importing one fails as there)
_NAMESPACES = frozenset({"torch.backends.cuda.matmul"})


def missing_module(path: str) -> ModuleNotFoundError | None:
    """Python's own error for importing `path` when its parent is a module of the language and the last name
    is something in it other than a module (`import torch.nn.functional.relu`, `import math.pi`): the script
    asked for what Python refuses too, so it gets Python's words, not gradcli's list of modules."""
    parent, _, name = path.rpartition(".")
    owner = module(parent) if parent else None
    if owner is None:
        return None
    if name not in owner.members:
        # a name torch lacks may be one of its modules loaded on demand (torch.onnx), and a package's may be a
        # Python module outside the language (collections.abc): those stay gradcli's refusal
        if path.startswith("torch") or _is_package(parent):
            return None
    e = ModuleNotFoundError(f"No module named '{path}'" + ("" if _is_package(parent) else
                                                          f"; '{parent}' is not a package"))
    e.name = path
    return e


def _is_package(path: str) -> bool:
    """Whether the module `path` (one of the language's) is a package in PyTorch or CPython."""
    if path.startswith("torch"):
        from gradcli.language import torchapi
        if path == "torch":
            return True
        parent, _, name = path.rpartition(".")
        return "__init__.py" in (torchapi.text(parent, name) or "")
    return path in ("collections", "logging")


# ------------------------------------------------------------------------------------------ builtins

def _isinstance(obj, classinfo) -> bool:
    """isinstance, where torch's classes are the script's names for them (torch.Tensor, torch.Size,
    torch.dtype, torch.Generator)."""
    real = _real_classes(classinfo)
    if classes.PROTOCOLS and _names_protocol(real):     # typing.Protocol's classes: its own checks
        return classes.PROTOCOL_CHECKS[0](obj, real, _isinstance)
    if obj.__class__ in _STAND_INS:     # a class or function held as gradcli's stand-in: an instance of its type()
        held = _held_class(obj)
        if held is not None:
            return issubclass(held, real)
    if isinstance(obj, real):
        return True
    if classes.VIRTUAL and classes.virtual_subclass(obj.__class__, real):     # abc's register
        return True
    return _sparse_tensor(obj) and (real is Tensor or real.__class__ is tuple and Tensor in real)


def _names_protocol(real) -> bool:
    """Whether isinstance's classes (one, or a tuple) include a typing.Protocol of the script's."""
    if real.__class__ is tuple:
        return any(c in classes.PROTOCOLS for c in real if isinstance(c, type))
    return isinstance(real, type) and real in classes.PROTOCOLS


def _sparse_tensor(obj) -> bool:
    """Whether `obj` is a sparse tensor (gradcli.engine.sparse, loaded only once a script makes one)."""
    module = sys.modules.get("gradcli.engine.sparse")
    return module is not None and obj.__class__ is module.SparseTensor


isinstance_of = _isinstance


def _issubclass(cls, classinfo) -> bool:
    """issubclass, with the classes as isinstance takes them."""
    real = cls.original if cls.__class__ is bounds.Bounded else \
        _SCRIPT_CLASSES.get(id(cls)) or flow.HELD_EXCEPTIONS.get(id(cls), cls)
    if not isinstance(real, type):
        raise TypeError("issubclass() arg 1 must be a class")
    wanted = _real_classes(classinfo, "issubclass")
    if classes.PROTOCOLS and _names_protocol(wanted):
        return classes.PROTOCOL_CHECKS[1](real, wanted, _issubclass)
    if getattr(real, "MARKS_A_TENSOR", False) and issubclass(Tensor, wanted):    # nn.Parameter, nn.Buffer: tensors
        return True
    return issubclass(real, wanted) or bool(classes.VIRTUAL) and classes.virtual_subclass(real, wanted)


def pattern_class(cls):
    """The class a match statement's class pattern names (`case torch.Tensor(...)`, `case int(n)`), as
    isinstance takes it; None when `cls` is no class (a tuple of classes and a union are none either)."""
    if cls.__class__ is tuple or cls.__class__ is _UNION_TYPE or cls.__class__ in OPAQUE_CLASSES:
        return None
    try:
        real = _real_classes(cls)
    except TypeError:
        return None
    return real if isinstance(real, type) else None


def _real_classes(classinfo, fn="isinstance"):
    if classinfo.__class__ is tuple:
        return tuple(_real_classes(c, fn) for c in classinfo)
    real = _SCRIPT_CLASSES.get(id(classinfo)) or flow.HELD_EXCEPTIONS.get(id(classinfo))
    if real is not None:
        return real
    if classinfo.__class__ is bounds.Bounded and isinstance(classinfo.original, type):
        return classinfo.original           # list, tuple, dict, set, frozenset as scripts hold them
    if classinfo.__class__ is ClassValue and classinfo.real is not None:
        return classinfo.real
    if isinstance(classinfo, type):
        return classinfo
    if classinfo.__class__ in OPAQUE_CLASSES or classinfo.__class__ is _UNION_TYPE:   # Optional[int], int | None
        return TYPING_INSTANCE_CLASSES[0](classinfo, fn, _real_classes)
    raise TypeError(f"{fn}() arg 2 must be a type, a tuple of types, or a union")


_UNION_TYPE = type(int | None)


# ------------------------------------------------------------------------------------ type and id

_TYPE_NAMES = {Size: "torch.Size", rng.Generator: "torch._C.Generator", dtypes.DType: "torch.dtype",
               dtypes.Layout: "torch.layout", dtypes.MemoryFormat: "torch.memory_format", _Device: "torch.device", savedhooks.SavedTensor: "torch._C._autograd.SavedTensor",
               savedhooks.saved_tensors_hooks: "torch.autograd.graph.saved_tensors_hooks",
               savedhooks.save_on_cpu: "torch.autograd.graph.save_on_cpu",
               savedhooks.allow_mutation_on_saved_tensors: "contextlib._GeneratorContextManager",
               savedhooks.MutationContext: "torch.autograd.graph._AllowMutationOnSavedContext",
               forward.UnpackedDualTensor: "torch.autograd.forward_ad.UnpackedDualTensor",
               forward.dual_level: "torch.autograd.forward_ad.dual_level", autograd.MultiHandle: "_MultiHandle"}
_TYPE_NAMES[_UNION_TYPE] = "types.UnionType"          # int | None, which Python makes of its own classes
_TYPE_NAMES[type(list[int])] = "types.GenericAlias"    # collections.deque[int]
# gradcli's classes that PyTorch's are plain functions: a script's function, and what torch.func makes of one
_FUNCTION_CLASSES = ("gradcli.language.compiler.ScriptFunction", "gradcli.engine.functorch.Transformed")


def type_name(obj) -> str:
    """The name PyTorch or CPython gives the type of `obj` in its messages, never gradcli's class."""
    if isinstance(obj, autograd.Node):
        return obj.name().rpartition("::")[2]       # torch::autograd::AccumulateGrad is 'AccumulateGrad'
    cls = obj.__class__
    if isinstance(obj, ReturnTypes):
        return f"torch.return_types.{obj.name}"
    if cls in OPAQUE_CLASSES:               # a typing value: its CPython class, by name (a C type's with its module)
        path = OPAQUE_CLASSES[cls](obj)
        return path if path.startswith("types.") else path.rpartition(".")[2]
    name = _TYPE_NAMES.get(cls)
    if name is not None:
        return name
    if cls is classes.GuardedSetter or cls is classes.ContainerSlot or cls is classes.GuardedNew:     # what it stands for
        return type_name(obj.function)
    if _sparse_tensor(obj):
        return "Tensor"
    if cls is bounds.Bounded:               # a bounded builtin: the type of what it stands for
        return type_name(obj.original)
    if cls is Builtin:                      # a builtin or torch function as scripts hold it
        return "builtin_function_or_method"
    name = cls.__name__
    return "function" if f"{cls.__module__}.{name}" in _FUNCTION_CLASSES else name


classes.TYPE_NAME[0] = type_name        # (classes cannot import this module)


class ClassValue:
    """A class a script meets only as type(x) (`<class 'function'>`, `<class 'MulBackward0'>`): it
    prints and compares as the class, gives its __name__, and makes no instances."""

    __slots__ = ("path", "real")

    def __init__(self, path: str, real):
        self.path = path        # the name CPython or PyTorch prints: 'function', 'itertools.chain'
        self.real = real        # the class isinstance tests against (None: not one of its own)

    def __repr__(self) -> str:
        return f"<class '{self.path}'>"

    def __call__(self, *args, **kwargs):
        raise TypeError(f"cannot create '{self.path}' instances")

    def __reduce__(self):
        raise TypeError(f"cannot pickle {self!r}")


_TYPE_NAMES[ClassValue] = "type"
# What scripts hold in place of Python's and PyTorch's classes and functions (list, torch.Tensor, max, torch.relu)
_STAND_INS = frozenset((bounds.Bounded, Builtin, ClassValue))
# type() of a class PyTorch makes with a metaclass of its own (torch.Tensor, a Function, a Node): a subclass of type
_METACLASS_PATHS = frozenset(("torch._C._TensorMeta", "abc.ABCMeta", "torch.autograd.function.FunctionMeta"))


def _held_class(obj):
    """The Python class isinstance takes a stand-in's type() as (`type` for list and torch.Tensor, the class of
    built-in functions for max), or None when it has none."""
    if obj.__class__ is ClassValue:     # a class the script met as type(x): a class
        return type
    held = script_type(obj)
    if held.__class__ is ClassValue and held.real is None:
        return type if held.path in _METACLASS_PATHS else None
    try:
        return _real_classes(held)
    except TypeError:
        return None
_CLASS_VALUES: dict = {}        # path -> its ClassValue: type(f) is type(g) for two functions


def _class_value(path: str, real=None) -> ClassValue:
    value = _CLASS_VALUES.get(path)
    if value is None:
        value = _CLASS_VALUES[path] = ClassValue(path, real)
    return value


def metaclass_value(path: str) -> ClassValue:
    """A metaclass as scripts hold it (abc.ABCMeta): the value type(cls) gives for its classes."""
    return _class_value(path)


# Classes a script may hold as they are: calling one builds a plain value, and their attributes are
# reached only through the allow-list. Python's `type` is never one (type('X', (), {}) builds classes).
_PLAIN_CLASSES = frozenset((int, float, bool, complex, str, range, slice, type(None), type(...)))
_FUNCTION_KINDS = {"<function": "function", "<bound": "method", "<built-in": "builtin_function_or_method"}


# gradcli's classes that are Python classes in PyTorch: type(x) prints their module (their messages
# name the class alone)
_CLASS_PATHS = {autograd.RemovableHandle: "torch.utils.hooks.RemovableHandle",
                autograd.MultiHandle: "torch.autograd.graph._MultiHandle"}

# the metaclasses PyTorch's classes have (type(torch.Tensor) and so on), by the class's repr
_METACLASSES = {"<class 'torch.Tensor'>": "torch._C._TensorMeta", "<class 'torch.autograd.graph.Node'>": "abc.ABCMeta"}


def script_type(obj):
    """type(obj): the class as the script names it (int, list as its builtins hold it, torch.Tensor,
    collections.Counter, a namedtuple), else a ClassValue printing as CPython or PyTorch would."""
    cls = obj.__class__
    if cls.__class__ is classes.ScriptType:     # an instance of a script's class: the class itself
        return cls
    if classes.HELD_METACLASSES:
        if cls.__class__ in classes.HELD_METACLASSES:       # an enum's member: its class
            return cls
        if cls in classes.HELD_METACLASSES:                 # an enum class: enum.EnumType
            return _class_value(classes.HELD_METACLASSES[cls], cls)
    held = _HELD_CLASSES.get(cls)
    if held is not None:
        if cls is Tensor and id(obj) in parameter_marks:        # an nn.Parameter
            if uninitialized_marks and id(obj) in uninitialized_marks:      # a lazy module's placeholder
                return _class_value("torch.nn.parameter.UninitializedParameter")
            return TORCH.members["nn"].members["Parameter"]
        if cls is Tensor and uninitialized_marks and id(obj) in uninitialized_marks:
            return _class_value("torch.nn.parameter.UninitializedBuffer")
        return held
    if _sparse_tensor(obj):
        return TORCH.members["Tensor"]
    if cls in _PLAIN_CLASSES or cls in pycollections.NAMEDTUPLES:
        return cls
    if cls is bounds.Bounded:
        return _TYPE if isinstance(obj.original, type) else script_type(obj.original)
    if cls is Builtin:
        text = repr(obj)
        if text.startswith("<class '"):
            return _class_value(_METACLASSES[text]) if text in _METACLASSES else _TYPE
        return _class_value(_FUNCTION_KINDS.get(text.split(" ", 1)[0], "builtin_function_or_method"))
    if isinstance(obj, type):
        if issubclass(obj, functions.Function):     # torch.autograd.Function and the script's subclasses
            return _class_value("torch.autograd.function.FunctionMeta")
        if classes.PROTOCOL_CLASSES and obj in classes.PROTOCOL_CLASSES:       # typing.Protocol's, and theirs
            return _class_value("typing._ProtocolMeta")
        if obj in classes.ABSTRACT_AWARE or obj.__class__ is abc.ABCMeta:      # abc.ABC, the classes ABCMeta
            return _class_value("abc.ABCMeta")                                 # would make, collections.abc's
        return _TYPE
    if isinstance(obj, BaseException) and cls.__module__ == "builtins":
        return cls                          # an exception class, as `except` names it
    if cls is ScriptModule:
        return _class_value("module", ScriptModule)
    if cls in OPAQUE_CLASSES:
        return _class_value(OPAQUE_CLASSES[cls](obj))
    path = _CLASS_PATHS.get(cls)
    if path is not None:
        return _class_value(path, cls)
    if cls.__module__ in ("builtins", "__main__") or cls.__module__.startswith("gradcli."):
        name = type_name(obj)
        one_class = name == cls.__name__ or name in ("function", "builtin_function_or_method")
        return _class_value(name, cls if one_class else None)
    return _class_value(f"{cls.__module__}.{cls.__qualname__}", cls)     # itertools.chain, ...


# what a function prints as: `<built-in method relu of ...>`, `<function relu at ...>`, `<built-in function
# len>`, `<bound method Module.parameters of ...>`, `<method 'add' of ...>`
_FUNCTION_REPR_NAME = re.compile(r"<(?:built-in method|built-in function|function|bound method) ([\w.]+)"
                                 r"|<method '(\w+)' of")


def function_name(obj) -> str | None:
    """`f.__name__` when `f` is a function or method a script holds that is not its own (`torch.relu`,
    `F.cross_entropy`, `x.add`, `len`): its name as PyTorch's and CPython's functions give it, read from
    what it prints as; else None."""
    cls = obj.__class__
    if cls is Builtin:
        text = repr(obj)
        if "<locals>.deprecated_init" in text:  # nn.init's old names: closures PyTorch renames ('normal')
            return obj.name
        match = _FUNCTION_REPR_NAME.match(text)
        return match and (match.group(1) or match.group(2)).rpartition(".")[2]
    if cls is bounds.Bounded and not isinstance(obj.original, type):
        return obj.original.__name__
    if cls is _BUILTIN_FUNCTION:
        return obj.__name__
    return None


_BUILTIN_FUNCTION = type(len)


def class_name(obj) -> str | None:
    """`obj.__name__` when `obj` is a class as a script holds it (int, list, torch.Tensor, a namedtuple,
    type(x)), else None."""
    if obj.__class__ is ClassValue:
        return obj.path.rpartition(".")[2]
    if obj.__class__ is bounds.Bounded and isinstance(obj.original, type):
        return obj.original.__name__
    if obj.__class__ is Builtin:
        text = repr(obj)
        return text[8:-2].rpartition(".")[2] if text.startswith("<class '") else None
    if isinstance(obj, type):
        return obj.__name__.rpartition(".")[2]      # (a C type's __name__ is dotted: io.BytesIO's is '_io.BytesIO')
    return None


def _type(*args, **kwargs):
    if len(args) == 1 and not kwargs:
        return script_type(args[0])
    if len(args) == 3:
        return _made_type(*args, **kwargs)
    raise TypeError("type() takes 1 or 3 arguments")


def _made_type(name, bases, namespace, /, **kwargs):
    """type(name, bases, dict): the class a `class` statement with that body would make, with its checks
    (classes.make_class; a dunder the language refuses in a class body is refused here too)."""
    if name.__class__ is not str:
        raise TypeError(f"type.__new__() argument 1 must be str, not {type_name(name)}")
    if bases.__class__ is not tuple:
        raise TypeError(f"type.__new__() argument 2 must be tuple, not {type_name(bases)}")
    if not isinstance(namespace, dict):
        raise TypeError(f"type.__new__() argument 3 must be dict, not {type_name(namespace)}")
    for key in namespace:
        if key.__class__ is not str:
            raise TypeError(f"a class attribute named by a '{type_name(key)}' is outside gradcli's language")
    body = classes.prepare(name, list(bases))
    body["__module__"], body["__qualname__"] = "__main__", name
    body.update(namespace)
    return classes.make_class(name, list(bases), body, None, kwargs)       # (kwargs: the bases' __init_subclass__)


def _id(*args, **kwargs) -> int:
    """id(obj): the address gradcli prints for obj (`<... object at 0x...>`), numbered with
    --stable-ids, so the same object has the same id for the whole run."""
    builtins.id(*args, **kwargs)            # wrong arguments: CPython's message
    if args[0].__class__ is Tensor:
        slim.keep(args[0])                  # the same object if it comes back as a node's saved tensor
    return int(address(args[0]), 16)


def _hash(*args, **kwargs) -> int:
    """hash(obj); a tensor's is its id's (slim.keep, as in _id)."""
    value = builtins.hash(*args, **kwargs)
    if args[0].__class__ is Tensor:
        slim.keep(args[0])
    return value


def _format_builtin(*args, **kwargs) -> str:
    """format(value, spec=''): what an f-string field `{value:spec}` gives, with the same bound on the
    widths the spec may ask for."""
    if not kwargs and len(args) == 2 and args[1].__class__ is str:
        bounds.check_format_spec(args[1])
    return builtins.format(*args, **kwargs)


_TYPE = bounds.Bounded(builtins.type, _type)
_ID = bounds.Bounded(builtins.id, _id)
_FORMAT = bounds.Bounded(builtins.format, _format_builtin)
_HASH = bounds.Bounded(builtins.hash, _hash)

# gradcli's classes and Python's that scripts hold in another form -> the value a script names them by
_HELD_CLASSES = {Tensor: TORCH.members["Tensor"], Size: TORCH.members["Size"], dtypes.DType: TORCH.members["dtype"],
                 dtypes.Layout: TORCH.members["layout"], _Device: TORCH.members["device"],
                 dtypes.MemoryFormat: TORCH.members["memory_format"],
                 rng.Generator: TORCH.members["Generator"], typeinfo.FInfo: TORCH.members["finfo"],
                 typeinfo.IInfo: TORCH.members["iinfo"]}
_HELD_CLASSES.update(_OPTIM_CLASSES)        # (empty until torch.optim is made: _optim_made adds them then)
_HELD_CLASSES.update((_BOUNDED_BUILTINS[name].original, _BOUNDED_BUILTINS[name])
                     for name in ("list", "tuple", "dict", "set", "frozenset"))
_HELD_CLASSES.update((value.original, value) for value in COLLECTIONS.members.values()
                     if value.__class__ is bounds.Bounded)
_HELD_CLASSES[classes.AttributeDict] = _BOUNDED_BUILTINS["dict"]     # an instance's __dict__ a script held


def held_class(cls):
    """A Python class as a script names it (list, dict, type as its builtins hold them; collections' classes)."""
    if cls is type:
        return _TYPE
    return _HELD_CLASSES.get(cls, cls)
_TYPE_NAMES[classes.AttributeDict] = "dict"


# The exception classes a script can name, raise and catch: Exception and its subclasses that scripts
# meet, GeneratorExit (what closing a script's generator raises in it) and SystemExit (sys.exit). BaseException
# and its other subclasses (KeyboardInterrupt, the timeout of --timeout) stay out of reach, so no `except`
# can swallow them.
EXCEPTIONS = ("Exception", "ArithmeticError", "AssertionError", "AttributeError", "FloatingPointError",
              "GeneratorExit", "ImportError", "IndexError", "KeyError", "LookupError", "MemoryError",
              "ModuleNotFoundError", "NameError", "NotImplementedError", "OverflowError", "RecursionError",
              "RuntimeError", "StopIteration",
              "OSError", "FileNotFoundError",       # (torch.load of a name torch.save never kept)
              "EOFError",                           # (torch.load of an io.BytesIO at its end)
              "TypeError", "UnboundLocalError", "ValueError", "ZeroDivisionError",
              # the warnings' categories (gradcli.language.pywarnings), which an "error" filter raises
              "Warning", "UserWarning", "DeprecationWarning", "PendingDeprecationWarning", "SyntaxWarning",
              "RuntimeWarning", "FutureWarning", "ImportWarning", "UnicodeWarning", "BytesWarning", "ResourceWarning",
              "EncodingWarning",
              "SystemExit")         # (sys.exit: the run ends with its status; a script may catch it)


def make_builtins(write, describe=None, extra=None) -> dict:
    """The builtins of one session; `print` writes through `write` (the session's stdout), `help`
    through `describe(builtins, *obj)`, which returns help's text (gradcli.language.helptext, which
    the session imports only when a script asks for help)."""
    table = {name: getattr(builtins, name) for name in (
        "range", "len", "abs", "min", "max", "sum", "float", "int", "bool", "str", "repr", "round", "complex",
        "list", "tuple", "enumerate", "zip", "reversed", "sorted", "any", "all", "divmod", "pow")}
    table.update(_BOUNDED_BUILTINS)    # list, tuple, sorted, sum, pow, round: bounded results
    table.update((name, getattr(builtins, name)) for name in ("chr", "ord", "callable", "map", "filter", "iter",
                                                                "next", "hex", "oct", "bin", "ascii", "slice"))
    table["format"] = _FORMAT
    table["hash"] = _HASH
    table["isinstance"] = bounds.Bounded(builtins.isinstance, _isinstance)
    table["issubclass"] = bounds.Bounded(builtins.issubclass, _issubclass)
    # classes: `object` as a base, super() in methods, and the decorators of methods
    table.update(object=builtins.object, super=classes.SUPER, staticmethod=builtins.staticmethod,
                 classmethod=builtins.classmethod, property=builtins.property, NotImplemented=NotImplemented)
    table["type"] = _TYPE
    table["id"] = _ID
    if extra:
        table.update(extra)             # getattr, hasattr, setattr (gradcli.language.access), from the session
    table.update((name, getattr(builtins, name)) for name in EXCEPTIONS)
    table["print"] = make_print(write)
    table["help"] = _Helper(table, describe)
    table["__name__"] = "__main__"      # a script is the main module: `if __name__ == "__main__":` runs
    table["__annotations__"] = {}       # ... whose annotations CPython records from the start (even with none)
    return table


class _Helper:
    """help(obj): a signature and a paragraph, written through the session's print. Printed, it says
    what CPython's help says of itself."""

    __slots__ = ("table", "describe")

    def __init__(self, table, describe):
        self.table = table
        self.describe = describe

    def __call__(self, *obj):
        if len(obj) > 1:
            raise TypeError(f"help() takes at most 1 argument ({len(obj)} given)")
        self.table["print"](self.describe(self.table, *obj), end="")

    def __repr__(self) -> str:
        return "Type help() for interactive help, or help(object) for help about object."


def make_print(write, report=None):
    """The print builtin: writes through `write`, or with `report` (an event sink's
    report(text, args)) hands it the text instead, with the values printed."""
    def print_(*args, sep=" ", end="\n", file=None, flush=False, **others):
        if others:
            raise TypeError(f"'{next(iter(others))}' is an invalid keyword argument for print()")
        if sep is None:
            sep = " "
        elif not isinstance(sep, str):
            raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is None:
            end = "\n"
        elif not isinstance(end, str):
            raise TypeError(f"end must be None or a string, not {type(end).__name__}")
        if file is not None:
            pysys = sys.modules.get("gradcli.language.pysys")
            if pysys is not None and file is pysys.STDOUT:
                file = None
            elif pysys is not None and file is pysys.STDERR:
                redirects = STATE.redirects
                if redirects is not None and "stderr" in redirects:
                    return _print_to(redirects["stderr"], args, sep, end, flush)
                text = sep.join(a if a.__class__ is str else str(a) for a in args) + end
                STATE.streams[0]("stderr", text, args)
                if flush:
                    STATE.streams[1]("stderr")
                return None
            else:
                return _print_to(file, args, sep, end, flush)
        redirects = STATE.redirects
        if redirects is not None and "stdout" in redirects:       # contextlib.redirect_stdout(target)
            return _print_to(redirects["stdout"], args, sep, end, flush)
        pieces = []
        try:
            for a in args:
                pieces.append(a if a.__class__ is str else str(a))
        except BaseException:
            # as CPython's print, which writes each value, and the separator before it, as it goes: what came
            # before the value whose str() failed is out before the error
            if pieces:
                text = sep.join(pieces) + sep
                write(text) if report is None else report(text, args[:len(pieces)])
            raise
        text = sep.join(pieces) + end
        if report is None:
            write(text)
        else:
            report(text, args)
    return Builtin("builtins", "print", print_)


def _print_to(file, args: tuple, sep: str, end: str, flush: bool) -> None:
    """print(..., file=obj) for an object of the script's: its write() called with each piece, as CPython's
    print calls it (read as `obj.write` reads in a script: nothing else has one). None (redirect_stdout(None))
    takes nothing, as CPython's print writes nothing when sys.stdout is None."""
    if file is None:
        return
    read = READ_METHOD[0]
    write = read(file, "write")
    for i, a in enumerate(args):
        if i:
            write(sep)
        write(a if a.__class__ is str else str(a))
    write(end)
    if flush:
        read(file, "flush")()


def stream_write(stream: str, text: str, args: tuple) -> None:
    """Text for sys.stdout or sys.stderr ('stdout' or 'stderr') from pprint or a warning: to the script's object
    that contextlib.redirect_stdout/redirect_stderr put there (None takes nothing, as CPython's writers skip a
    stream that is None), else where print writes."""
    redirects = STATE.redirects
    if redirects is not None and stream in redirects:
        if redirects[stream] is not None:
            READ_METHOD[0](redirects[stream], "write")(text)
    else:
        STATE.streams[0](stream, text, args)


# `obj.name` as a script reads it, to be called (gradcli.language.access.get_method, which imports this module
# and puts it here)
READ_METHOD = [None]


# CPython's messages name a module by its class (`'module' object is not callable`), as they name Python's
ScriptModule.__name__ = "module"


# What CPython's own messages (operators, len(), iteration, subscripts) call these values, as it names
# PyTorch's and Python's: a function or method gradcli holds is a builtin_function_or_method, as PyTorch's
# torch.relu and Python's print are (a class of torch's or a Python-written function reads the same; type()
# and gradcli's own messages tell them apart through type_name), a class a script sees only as type(x) a type
Builtin.__name__ = "builtin_function_or_method"
ClassValue.__name__ = "type"
