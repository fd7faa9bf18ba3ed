"""torch.nn.utils' gradient clipping (clip_grad_norm_, clip_grad_value_), in place as PyTorch's CPU path, and
its conversions between parameters and one vector (parameters_to_vector, vector_to_parameters)."""

from __future__ import annotations

import types

import numpy as np

from gradcli.engine.ops.reduce import vector_norm
from gradcli.engine.recording import checked_scalar
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


def _params(parameters, warn_empty: bool) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    generator = isinstance(parameters, types.GeneratorType)
    params = list(parameters)
    if warn_empty and generator and not params and STATE.warn is not None:
        STATE.warn("UserWarning", "`parameters` is an empty generator, no gradient clipping will occur.")
    return params


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """The norm of the tensors' norms (each tensor's own norm first, then the norm of those)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor(np.array(0.0, dtype=np.float32))
    norms = [vector_norm(Tensor(t._a), norm_type)._a for t in tensors]
    total = vector_norm(Tensor(np.stack(norms)), norm_type)
    if error_if_nonfinite and not np.isfinite(total._a):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm: Tensor, foreach=None) -> None:
    """Scale every gradient by min(max_norm / (total_norm + 1e-6), 1)."""
    params = [parameters] if isinstance(parameters, Tensor) else parameters
    grads = [p.grad for p in params if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    total = total_norm._a
    t = total.dtype.type
    # `max_norm / tensor` is tensor.reciprocal() * max_norm in PyTorch
    coef = (t(1) / (total + t(1e-6))) * t(max_norm)
    coef = np.minimum(coef, t(1.0))
    for g in grads:
        g._a *= coef.astype(g._a.dtype)
        g._version[0] += 1


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    params = _params(parameters, True)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """The deprecated name: clip_grad_norm_ after PyTorch's FutureWarning (at the script's line)."""
    STATE.warn("FutureWarning", "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                                "`torch.nn.utils.clip_grad_norm_`.")
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


# PyTorch 2.13's words when no parameter has a gradient (its grouping by device hands an empty list on)
_NO_GRADS = ("Expected !nested_tensorlist[0].empty() to be true, but got false.  (Could this error message be "
             "improved?  If so, please report an enhancement request to PyTorch.)")


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    params = _params(parameters, False)
    clip_value = float(clip_value)
    if all(p.grad is None for p in params):
        raise RuntimeError(_NO_GRADS)
    for p in params:
        g = p.grad
        if g is not None:
            a = g._a
            # grad.clamp_(min=-clip_value, max=clip_value): each bound read into the gradient's dtype, a value
            # past its range PyTorch's overflow error
            checked_scalar(-clip_value, a.dtype)
            checked_scalar(clip_value, a.dtype)
            np.maximum(a, a.dtype.type(-clip_value), out=a)
            np.minimum(a, a.dtype.type(clip_value), out=a)
            g._version[0] += 1


# ------------------------------------------------------------------- parameters and one vector

def _typename(value) -> str:
    """torch.typename of a value that is not a tensor: its class's qualified name, with its module's
    unless a builtin."""
    cls = type(value)
    module = getattr(cls, "__module__", "builtins")
    return cls.__qualname__ if module in ("builtins", "") else f"{module}.{cls.__qualname__}"


def _check_param(param) -> None:
    """PyTorch checks each parameter's device (all of gradcli's are on the CPU): what is not a tensor
    fails there, reading its `device`."""
    if not isinstance(param, Tensor):
        raise AttributeError(f"'{type(param).__name__}' object has no attribute 'device'")


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened (each `view(-1)`) and joined by `cat`: a tensor recording both, so
    gradients reach the parameters through it."""
    from gradcli.engine.ops.shape import cat, view
    pieces = []
    for param in parameters:
        _check_param(param)
        pieces.append(view(param, -1))
    return cat(pieces)


def vector_to_parameters(vec, parameters) -> None:
    """Each parameter's `.data` becomes the next `numel()` elements of `vec` viewed in its shape: the
    parameters then share `vec`'s memory, as in PyTorch."""
    from gradcli.engine.ops.indexing import getitem
    from gradcli.engine.ops.shape import view_as
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        _check_param(param)
        count = param._a.size
        param._set_data(view_as(getitem(vec, slice(pointer, pointer + count)), param).data)
        pointer += count
