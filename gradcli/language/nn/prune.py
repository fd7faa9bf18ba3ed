"""torch.nn.utils.prune: pruning a module's tensor by a mask that a forward pre-hook applies before each call.

Pruning `name` moves the parameter to `name_orig`, registers the mask as the buffer `name_mask` and sets the
attribute `name` to `mask * name_orig` (a MulBackward0 result), recomputed by the pruning method itself, which
sits in the module's `_forward_pre_hooks` as PyTorch's does. Pruning the same tensor again gathers the methods
in a PruningContainer, whose mask is the newest method's, computed on what the earlier masks left (all of the
tensor, the entries still 1, or the channels still alive). `remove` makes the pruned value the parameter again.
Random methods draw as PyTorch's do (rand_like of the tensor; rand of the channel count, then kthvalue), and
the magnitude methods choose by topk, so seeded masks and ties come out the same.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Iterable

from gradcli.engine import factories
from gradcli.language import classes
from gradcli.language.classes import ScriptObject, ScriptType, is_dunder
from gradcli.language.nn.module import remove_pre_hook

_MODULE = "torch.nn.utils.prune"


class BasePruningMethod(ScriptObject, metaclass=ScriptType):
    """The base a pruning method derives from: it sets PRUNING_TYPE and defines compute_mask."""

    __module__ = _MODULE

    def __new__(cls, *args, **kwargs):
        # PyTorch's class is abstract (abc): no instance without a compute_mask of its own
        if cls.compute_mask is BasePruningMethod.compute_mask:
            raise TypeError(f"Can't instantiate abstract class {cls.__name__} with abstract method compute_mask")
        return super().__new__(cls)

    def __call__(self, module, inputs):
        setattr(module, _within(module, self._tensor_name), self.apply_mask(module))

    def compute_mask(self, t, default_mask):
        return None

    def apply_mask(self, module):
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        method = _composite(cls, module, name, args, kwargs)
        orig = getattr(module, _within(module, name))
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                     f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:               # the parameter moves to name_orig; the mask starts all ones
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = factories.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:           # the parameter goes back where it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor t, "
                                     f"got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else factories.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = _within(module, self._tensor_name)
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig._set_data(weight.data)         # the same Parameter object, holding the pruned values
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _composite(cls, module, name, args, kwargs):
    """The method that prunes `name` now: a new `cls`, alone or added to the tensor's earlier method(s),
    whose hook leaves the module (apply registers the result anew)."""
    hooks = module._forward_pre_hooks
    found = [key for key, hook in hooks.items()
             if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             "Use a PruningContainer.")
    old = hooks[found[0]] if found else None
    for key in found:
        del hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is None:
        return method
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        return old
    container = PruningContainer(old)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one tensor, in order; its mask is the last one's over what is left."""

    __module__ = _MODULE

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        return _combined(self._pruning_methods[-1], t, default_mask)


def _combined(method, t, mask):
    """The container's mask: `method` computes a mask for the part of `t` the earlier masks left (chosen by
    its PRUNING_TYPE), written into that part of the mask so far."""
    new_mask = mask.to(dtype=t.dtype)
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        part = mask == 1
    elif kind == "structured":
        if not hasattr(method, "dim"):
            raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                                 "defined.")
        n_dims = t.dim()
        dim = method.dim
        if dim < 0:
            dim = n_dims + dim
        if dim < 0:
            raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
        alive = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
        part = tuple(alive if d == dim else slice(None) for d in range(n_dims))
    elif kind == "global":
        part = (slice(None),) * len(t.shape)
    else:
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
    partial = method.compute_mask(t[part], default_mask=mask[part])
    new_mask[part] = partial.to(dtype=new_mask.dtype)
    return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    __module__ = _MODULE
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


Identity.__signature__ = inspect.Signature()       # what help shows: it takes nothing (not __new__'s *args)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` entries chosen at random."""

    __module__ = _MODULE
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _unstructured(self.amount, t, default_mask, lambda count: factories.rand_like(t).view(-1).topk(k=count))

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of smallest absolute value."""

    __module__ = _MODULE
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _unstructured(self.amount, t, default_mask, lambda count: t.abs().view(-1).topk(k=count, largest=False))

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` channels along `dim`, chosen at random."""

    __module__ = _MODULE
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        count = _count(self.amount, size)
        _check_count(count, size)
        if count == 0:
            return default_mask
        prob = factories.rand(size)
        alive = prob > prob.kthvalue(k=count).values
        mask = _channels_kept(t, self.dim, alive)
        mask.mul_(default_mask.to(dtype=mask.dtype))
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm."""

    __module__ = _MODULE
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        count = _count(self.amount, size)
        _check_count(count, size)
        dims = list(range(t.dim()))
        dims.remove(dims[self.dim] if self.dim < 0 else self.dim)
        kept = t.norm(p=self.n, dim=dims).topk(k=size - count, largest=True)
        if count == 0:
            return default_mask
        mask = _channels_kept(t, self.dim, kept.indices)
        mask.mul_(default_mask.to(dtype=mask.dtype))
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given mask is 0."""

    __module__ = _MODULE
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def _within(module, name):
    """`name`, which pruning reads and writes on the module as an attribute: never one of Python's own."""
    if name.__class__ is str and is_dunder(name):
        raise AttributeError(f"'{type(module).__name__}' object attribute '{name}' is outside gradcli's language")
    return name


def _unstructured(amount, t, default_mask, choose):
    """The mask with `amount` more entries of `t` zeroed: those of the indices topk gives `choose(count)`."""
    size = t.numel()
    count = _count(amount, size)
    _check_count(count, size)
    mask = default_mask.clone()
    if count != 0:
        mask.view(-1)[choose(count).indices] = 0
    return mask


def _channels_kept(t, dim, which):
    """Zeros shaped like `t` with ones in the channels `which` (indices or a bool mask) along `dim`."""
    mask = factories.zeros_like(t)
    mask[tuple(which if d == dim or d == dim + t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


def _check_amount(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _check_count(count, size) -> None:
    if isinstance(count, numbers.Integral) and count > size:
        raise ValueError(f"amount={count} should be smaller than the number of parameters to prune={size}")


def _check_structured(t, dim) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {shape} with {len(shape)} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _count(amount, size):
    """How many entries (or channels) `amount` prunes: itself if an int, else its fraction of `size`, rounded
    half to even."""
    return amount if isinstance(amount, numbers.Integral) else round(amount * size)


# ---------------------------------------------------------------------------------- the functions

def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """One unstructured method over the (module, name) pairs' tensors joined into one vector; each tensor is
    then pruned by its part of the mask (custom_from_mask)."""
    from gradcli.engine.clipgrad import parameters_to_vector
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, _within(module, name)))
                                   for (module, name) in parameters])
    default_mask = parameters_to_vector([getattr(module, name + "_mask", factories.ones_like(getattr(module, name)))
                                         for (module, name) in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    # what the script's callable made is written and read as the script would: a script's (or the library's)
    # class instance, never another object's own Python attributes
    if type(type(method)) is not ScriptType:
        raise AttributeError(f"'{type(method).__name__}' object has no attribute '_tensor_name'")
    classes.set_attr(method, "_tensor_name", "temp")
    kind = classes.instance_attr(method, "PRUNING_TYPE")
    if kind != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {kind}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + count].view_as(param))
        pointer += count


def remove(module, name):
    if remove_pre_hook(module, lambda hook: isinstance(hook, BasePruningMethod) and hook._tensor_name == name):
        return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def names() -> dict:
    """torch.nn.utils.prune's members."""
    return {value.__name__: value for value in (
        BasePruningMethod, PruningContainer, Identity, RandomUnstructured, L1Unstructured, RandomStructured,
        LnStructured, CustomFromMask, identity, random_unstructured, l1_unstructured, random_structured,
        ln_structured, global_unstructured, custom_from_mask, remove, is_pruned)}
