"""torch.nn.init: the initialisers, computing their bounds as PyTorch does (in Python floats) and drawing
through the engine's uniform_/normal_, so a seeded script gets PyTorch's numbers."""

from __future__ import annotations

import math

from gradcli.engine import autograd, factories, ops
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (param.__class__ is not bool and isinstance(param, int)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor: Tensor):
    shape = tensor._a.shape
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    field = math.prod(shape[2:])
    return shape[1] * field, shape[0] * field


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _empty_noop(tensor: Tensor) -> bool:
    if tensor._a.size == 0 and 0 in tensor._a.shape:
        if STATE.warn is not None:
            STATE.warn("UserWarning", "Initializing zero-element tensors is a no-op")
        return True
    return False


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with autograd.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with autograd.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    with autograd.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with autograd.no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity matrix written into a 2-d tensor (one write, as torch.eye(out=) makes it), not recorded."""
    if tensor._a.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with autograd.no_grad():
        return tensor.copy_(factories.eye(*tensor._a.shape, dtype=tensor.dtype))


def dirac_(tensor, groups=1):
    """A 3-, 4- or 5-d convolution weight that passes each of its first input channels through (per group):
    zeros, then a 1 at the kernel's centre of output channel g * (out / groups) + d, input channel d, for d up to
    min(out / groups, in); each write as PyTorch's (its version counter counts them), not recorded."""
    shape = tensor._a.shape
    if len(shape) not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if tensor.is_meta:                  # (as PyTorch: nothing to write)
        return tensor
    per_group = shape[0] // groups
    centre = tuple(size // 2 for size in shape[2:])
    with autograd.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(per_group, shape[1])):
                tensor[(g * per_group + d, d) + centre] = 1
    return tensor


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix, the trailing dims flattened: Q of the QR factorisation of a normal draw of
    rows x cols (transposed when wider than tall), each column's sign set by R's diagonal, times `gain`. The
    draw is PyTorch's (a contiguous rows x cols normal_); Q's last bits are gradcli's LAPACK's."""
    if tensor._a.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor._a.size == 0 or tensor.is_meta:      # (as PyTorch: nothing drawn for a meta tensor)
        return tensor
    rows = tensor._a.shape[0]
    cols = tensor._a.size // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    with autograd.no_grad():
        if rows < cols:
            flattened = flattened.t()
        q, r = ops.linalg.qr(flattened)
        q = q.mul_(ops.linalg.diag(r, 0).sign())
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Normal values (std `std`) with ceil(sparsity * rows) zeros per column, their rows the first of a
    torch.randperm(rows) per column (drawn from the default generator, whatever `generator` is, as PyTorch
    draws them)."""
    if tensor._a.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:                  # (as PyTorch: its randperm draws are skipped too)
        return tensor
    rows, cols = tensor._a.shape
    num_zeros = math.ceil(sparsity * rows)
    with autograd.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = factories.randperm(rows)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if _empty_noop(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if _empty_noop(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def fan_in(tensor: Tensor) -> int:
    """The fan-in the layers' default initialisations use for their bias bounds."""
    return _fans(tensor)[0]


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """PyTorch's rejection sampling, draw for draw: normals redrawn where they fall outside [a, b] when
    that interval holds more than 30% of the mass, else uniform candidates in [a, b] accepted against
    the normal density. A meta tensor draws nothing (PyTorch returns it first, before its warning)."""
    if tensor.is_meta:
        return tensor
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        if STATE.warn is not None:
            STATE.warn("UserWarning", "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                       "distribution of values may be incorrect.")
    with autograd.no_grad():
        if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
            lo, hi = (tensor._a.dtype.type(v).item() for v in (a, b))     # the bounds as the tensor holds them
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = result.lt(lo).logical_or(result.gt(hi))
                if not mask.any():
                    break
                result = ops.where(mask, factories.empty_like(result).normal_(mean, std, generator=generator), result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = factories.empty_like(tensor)
        accept = factories.empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        _log_pdf(candidates, mean, std, log_peak)
        pending = accept.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = ops.where(pending, candidates, result)
                _log_pdf(candidates, mean, std, log_peak)
                pending = ops.where(pending, accept.uniform_(generator=generator).log_().gt(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
    return tensor


def _log_pdf(t: Tensor, mean, std, log_peak) -> None:
    """-0.5 ((t - mean) / std)² - log_peak, in place, in PyTorch's order of steps."""
    t.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def _deprecated(new):
    """nn.init's old name without the trailing underscore (`nn.init.xavier_uniform`, the 0.3-era tutorials'):
    PyTorch's FutureWarning at the caller's line, then the in-place initialiser."""
    old = new.__name__[:-1]
    words = f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`."

    def deprecated_init(*args, **kwargs):
        if STATE.warn is not None:
            STATE.warn("FutureWarning", words)
        return new(*args, **kwargs)
    deprecated_init.__name__ = old
    return deprecated_init


DEPRECATED = {f.__name__[:-1]: _deprecated(f) for f in (
    uniform_, normal_, constant_, eye_, dirac_, xavier_uniform_, xavier_normal_, kaiming_uniform_, kaiming_normal_,
    orthogonal_, sparse_)}
