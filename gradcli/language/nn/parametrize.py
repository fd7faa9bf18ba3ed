"""torch.nn.utils.parametrize: a module's parameter or buffer replaced by a function of tensors it keeps.

As in PyTorch, registering the first parametrization on a module moves the tensor into
`module.parametrizations[name]` (a ParametrizationList holding the original under `original`, or
`original0`, `original1`... when the first parametrization's right_inverse returns several), changes the
module's class to a subclass of its own named `Parametrized<Class>` (module torch.nn.utils.parametrize),
one per module, and puts a property of the tensor's name on that class: reading it runs the
parametrizations (once per `cached()` block), assigning to it runs their right_inverse. Removing the last
parametrization gives the module its class back. The property and the class are Python's own, so a
script reads `m.weight` through the language's ordinary attribute path.
"""

from __future__ import annotations

from gradcli.engine import autograd, parameter
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.language.classes import ScriptObject, ScriptType
from gradcli.language.nn.containers import ModuleDict, ModuleList
from gradcli.language.nn.module import Module

_MODULE = "torch.nn.utils.parametrize"


class _Cached(ScriptObject, metaclass=ScriptType):
    """What cached() returns: within its block each parametrized tensor is computed once. Like the generator
    context manager PyTorch's is, it serves one block."""

    __module__ = "contextlib"

    def __init__(self):
        self._stage = 0         # 0: not entered, 1: in its block, 2: done

    def __enter__(self):
        if self._stage:         # (contextlib's words: the arguments it drops on the first entry are gone)
            raise AttributeError("'_GeneratorContextManager' object has no attribute 'args'")
        self._stage = 1
        depth, values = STATE.parametrization_cache or (0, {})
        STATE.parametrization_cache = (depth + 1, values)

    def __exit__(self, *exc):
        if self._stage != 1:
            if self._stage == 0:
                raise RuntimeError("generator didn't stop")
            return False
        self._stage = 2
        depth, values = STATE.parametrization_cache
        STATE.parametrization_cache = (depth - 1, values) if depth > 1 else None
        return False


_Cached.__name__ = _Cached.__qualname__ = "_GeneratorContextManager"


def cached():
    return _Cached()


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """dest.set_(src): dest takes src's data, keeping its own identity (an optimiser holding it keeps it)."""
    if dest is not src:
        dest._a = src._a
    dest._version[0] += 1


def _register_parameter_or_buffer(module, name: str, value) -> None:
    if value.__class__ is Tensor and parameter.is_parameter(value):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _has(obj, name: str) -> bool:
    try:
        getattr(obj, name)
    except AttributeError:
        return False
    return True


def _kind(value) -> str:
    return "Parameter" if value.__class__ is Tensor and parameter.is_parameter(value) else type(value).__name__


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in order, and the original tensor(s) they start from."""

    __module__ = _MODULE

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with autograd.no_grad():
            new = original
            for module in reversed(list(self)):
                if _has(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if new.__class__ is not Tensor and not isinstance(new, (list, tuple)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {_kind(new)}")
        self.is_tensor = new.__class__ is Tensor
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with autograd.no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, item in enumerate(new):
                if item.__class__ is not Tensor:
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                                     f"tuple...). Got element {i} of the sequence with type {_kind(item)}.")
                if parameter.is_parameter(original):
                    item = parameter.make(item, original.requires_grad)
                item.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", item)
        if not self.unsafe:
            z = self()
            if z.__class__ is not Tensor:
                raise ValueError(f"A parametrization must return a tensor. Got {_kind(z)}.")
            for what, before in (("dtype", original_dtype), ("shape", original_shape)):
                if getattr(z, what) != before:
                    raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, "
                                     f"unless `unsafe` flag is enabled.\nunparametrized {what}: {before}\n"
                                     f"parametrized {what}: {getattr(z, what)}")

    def right_inverse(self, value):
        with autograd.no_grad():
            for module in reversed(list(self)):
                if not _has(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if value.__class__ is not Tensor:
                    raise ValueError(f"`right_inverse` should return a tensor. Got {_kind(value)}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _maybe_set(self.original, value)
                return
            if not isinstance(value, (list, tuple)):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {_kind(value)}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original = getattr(self, f"original{i}")
                if tensor.__class__ is not Tensor:
                    raise ValueError("'right_inverse' must return a sequence of tensors or reference-type "
                                     f"opaques. Got element {i} of type {_kind(tensor)}.")
                if original.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while "
                                     f"`original{i}` has dtype {original.dtype}")
                _maybe_set(original, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self._modules.values())[1:]:
            x = module(x)
        return x


def _inject_new_class(module) -> None:
    """The module's class becomes Parametrized<Class>, a subclass of its own class made for it alone."""
    cls = type(module)
    name = f"Parametrized{cls.__name__}"
    object.__setattr__(module, "__class__", ScriptType(name, (cls,), {"__module__": _MODULE, "__qualname__": name}))


def _inject_property(module, tensor_name: str) -> None:
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        cache = STATE.parametrization_cache
        if cache is None:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = cache[1].get(key)
        if tensor is None:
            tensor = cache[1][key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    type.__setattr__(type(module), tensor_name, property(get_parametrized, set_original))


def _check_unsafe(module, tensor_name: str, parametrization) -> None:
    """A further parametrization of an already parametrized tensor may change neither its dtype nor its
    shape, forwards or (where it has one) through its right_inverse."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if x.__class__ is not Tensor:
        raise ValueError(f"A parametrization must return a tensor. Got {_kind(x)}.")
    for what in ("dtype", "shape"):
        if getattr(x, what) != getattr(y, what):
            raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, unless the "
                             f"`unsafe` flag is enabled.\nmodule.{tensor_name}.{what}: {getattr(y, what)}\n"
                             f"parametrization(module.{tensor_name}).{what}: {getattr(x, what)}")
    if not _has(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if z.__class__ is not Tensor:
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {_kind(z)}")
    for what in ("dtype", "shape"):
        if getattr(z, what) != getattr(y, what):
            raise ValueError(f"The tensor returned by parametrization.right_inverse must have the same {what} as "
                             f"module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                             f"module.{tensor_name}.{what}: {getattr(y, what)}\nreturned {what}: {getattr(z, what)}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_unsafe(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None) -> bool:
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations._modules


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with autograd.no_grad():
                _maybe_set(original, getattr(module, tensor_name))
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = parameter.make(t.detach()) if t.requires_grad else t
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in "
                         "terms of a sequence of tensors.")
    type.__delattr__(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        object.__setattr__(module, "__class__", type(module).__bases__[0])
    return module


def type_before_parametrizations(module):
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """The parametrizations of `from_module` (of one tensor, or all) registered on `to_module` too, with the
    original tensors' values; a tensor `to_module` lacks is made a Parameter of the parametrized value."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations._modules) if tensor_name is None else [tensor_name]
    for name in names:
        if not _has(to_module, name):
            setattr(to_module, name, parameter.make(getattr(from_module, name).detach()))
        for parametrization in from_module.parametrizations[name]:
            register_parametrization(to_module, name, parametrization)
        source, target = from_module.parametrizations[name], to_module.parametrizations[name]
        if _has(source, "original"):
            target.original = source.original
        else:
            i = 0
            while _has(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module


def names() -> dict:
    """torch.nn.utils.parametrize's members."""
    return {"cached": cached, "ParametrizationList": ParametrizationList,
            "register_parametrization": register_parametrization, "is_parametrized": is_parametrized,
            "remove_parametrizations": remove_parametrizations,
            "type_before_parametrizations": type_before_parametrizations,
            "transfer_parametrizations_and_params": transfer_parametrizations_and_params}
