"""The nn functions that draw from a random stream besides dropout: rrelu (RreluWithNoiseBackward0, its in-place
form's RreluWithNoiseBackward1 and its gradient's RreluWithNoiseBackwardBackward0), and alpha_dropout and
feature_alpha_dropout (ATen's _dropout_impl in its alpha form, composed of recorded ops).

rrelu in training draws, as PyTorch's CPU kernel does, one double uniform in [lower, upper) per element that is
not positive, in the input's row-major order, between the bounds rounded to the input's dtype, and multiplies it
by that slope in the input's dtype (the slopes are the node's `noise`, ones elsewhere); out of training it is
leaky_relu with the slope (lower + upper) / 2.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import rng, signatures
from gradcli.engine.ops import arith
from gradcli.engine.ops.nn import _bernoulli_in_memory_order, _cxx_double, _expect_tensor
from gradcli.engine.recording import Op, apply, type_word
from gradcli.engine.tensor import Tensor


def _array(v):
    return v._a if v.__class__ is Tensor else v


def rrelu_backward_array(g, x, noise, lower: float, upper: float, training: bool) -> np.ndarray:
    """rrelu_with_noise_backward: grad * noise in training (a range wider than 1e-6), else leaky_relu's
    backward with the mean slope (x: the input, or the result of the in-place form: the same signs)."""
    if training and upper - lower > 1e-6:
        return g * noise
    return np.where(x > 0, g, g * x.dtype.type((lower + upper) / 2))


def _rrelu_grad(F, g, self, noise, lower, upper, training):
    out = rrelu_backward_array(_array(g), _array(self), _array(noise), lower, upper, training)
    if F.tensors:       # the backward kernel as an op of its own, which create_graph differentiates again
        return apply(RRELU_BACKWARD, out, (g, self), (noise, lower, upper, training))
    return out


def _rrelu_backward_self(F, gg, self, noise, lower, upper, training):
    return F.zeros_like(gg)


def _rrelu_jvp(F, ts, xs, result, noise, lower, upper, training):
    return _rrelu_grad(F, ts[0], xs[0], noise, lower, upper, training)


def _rrelu_result_jvp(F, ts, xs, result, noise, lower, upper, training):
    return _rrelu_grad(F, ts[0], result, noise, lower, upper, training)


def _rrelu_backward_jvp(F, ts, xs, result, noise, lower, upper, training):
    from gradcli.engine.forward import tangent_or_zeros
    return _rrelu_grad(F, tangent_or_zeros(ts, xs, 0), xs[1], noise, lower, upper, training)


# fmt: off
RRELU          = Op("RreluWithNoiseBackward0",         None, ("self", "noise", "lower", "upper", "training"),
                    (_rrelu_grad,), saves_tensors=True, quiet=True, jvp=_rrelu_jvp)
RRELU_         = Op("RreluWithNoiseBackward1",         None, ("result", "noise", "lower", "upper", "training"),
                    (_rrelu_grad,), saves_tensors=True, quiet=True, jvp=_rrelu_result_jvp)
RRELU_BACKWARD = Op("RreluWithNoiseBackwardBackward0", None, ("self", "noise", "lower", "upper", "training"),
                    (_rrelu_grad, _rrelu_backward_self), inputs=("grad_output", "self"),
                    saves_tensors=True, quiet=True, jvp=_rrelu_backward_jvp)
# fmt: on

_RRELU_DEFAULTS = {"lower": 0.125, "upper": 0.3333333333333333, "training": False}


def torch_rrelu(*args, **kwargs) -> Tensor:
    """torch.rrelu(input, lower=1/8, upper=1/3, training=False, generator=None)."""
    v = signatures.parsed("torch.rrelu", args, kwargs, _RRELU_DEFAULTS)
    return _rrelu(v["input"], v["lower"], v["upper"], v["training"], v["generator"], RRELU)


def torch_rrelu_(*args, **kwargs) -> Tensor:
    """torch.rrelu_: rrelu written into the input (RreluWithNoiseBackward1, which saves the result)."""
    v = signatures.parsed("torch.rrelu_", args, kwargs, _RRELU_DEFAULTS)
    return v["input"]._inplace_unary(lambda t: _rrelu(t, v["lower"], v["upper"], v["training"], v["generator"],
                                                      RRELU_))


def functional_rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False) -> Tensor:
    """F.rrelu: torch.rrelu or torch.rrelu_, its arguments by position."""
    return (torch_rrelu_ if inplace else torch_rrelu)(input, lower, upper, training)


def functional_rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False) -> Tensor:
    return torch_rrelu_(input, lower, upper, training)


def _rrelu(a: Tensor, lower, upper, training: bool, generator, row: Op) -> Tensor:
    lower, upper = (float(_array(v).item()) if v.__class__ is Tensor else float(v) for v in (lower, upper))
    if not lower <= upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    x = a._a
    if training:
        if x.dtype not in (np.float32, np.float64):
            raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for '{type_word(x)}'")
        flat = np.ascontiguousarray(x).reshape(-1)
        drawn = flat <= 0
        g = rng.default_generator if generator is None else generator
        # the bounds as the kernel's opmath type (float for float); x * (high - low) + low in double (this kernel
        # is built without fused multiply-adds); the slope as opmath
        low, high = (float(x.dtype.type(v)) for v in (lower, upper))
        slopes = (g.rand((int(drawn.sum()),), np.float64) * (high - low) + low).astype(x.dtype)
        noise = np.ones(flat.shape, x.dtype)
        noise[drawn] = slopes
        out = flat.copy()
        out[drawn] = flat[drawn] * slopes
        out, noise = out.reshape(x.shape), noise.reshape(x.shape)
    else:
        if x.dtype.kind not in "fV":
            raise NotImplementedError(f"\"leaky_relu_cpu\" not implemented for '{type_word(x)}'")
        out = np.where(x > 0, x, x * x.dtype.type((lower + upper) / 2)).astype(x.dtype, copy=False)
        noise = np.zeros(x.shape, x.dtype)      # (PyTorch's is uninitialised memory out of training)
    return apply(row, out, (a,), (Tensor(noise), lower, upper, training))


# ------------------------------------------------------------------------------------------ alpha dropout

_ALPHA = 1.7580993408473766     # SELU's -scale * alpha: where alpha dropout puts a dropped value


def _alpha_dropout(a: Tensor, p, training, inplace: bool, feature: bool, fn: str) -> Tensor:
    """ATen's _dropout_impl in its alpha form: a Bernoulli(1 - p) mask (one draw per sample and channel for the
    feature form), then input * (mask * a) + (mask - 1) * alpha * a + alpha * a * p, a = 1 / sqrt((alpha² p + 1)
    (1 - p)): a multiplication (MulBackward0) and an addition (AddBackward0)."""
    if training.__class__ is not bool:      # (the parser of torch.{fn})
        raise TypeError(f"{fn}(): argument 'train' (position 3) must be bool, not {type(training).__name__}")
    if p.__class__ is Tensor:
        p = float(p._a.item())
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {_cxx_double(p)}")
    x = a._a
    if not training or p == 0 or x.size == 0:
        return a
    if p == 1:
        zero = Tensor(np.zeros((), x.dtype))
        return a.mul_(zero) if inplace else arith.mul(a, zero)
    shaped = x
    if feature:
        if x.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shaped = np.empty(x.shape[:2] + (1,) * (x.ndim - 2), x.dtype)
    keep = _bernoulli_in_memory_order(shaped, 1 - p)
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"result type Float can't be cast to the desired output type {type_word(x)}")
    # noise.add(-1).mul_(alpha * a).add_(alpha * a * p), then noise.mul_(a): each step rounded to the input's
    # dtype, the scalars as float (Half computes in float)
    wide = np.float32 if x.dtype.char in "eE" else x.dtype.type
    scale = 1.0 / np.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    noise = keep.astype(x.dtype)

    def step(v, op, c):
        return op(v.astype(wide), wide(c)).astype(x.dtype)
    shift = step(step(step(noise, np.add, -1), np.multiply, _ALPHA * scale), np.add, _ALPHA * scale * p)
    noise = step(noise, np.multiply, scale)
    if inplace:
        return a.mul_(Tensor(noise)).add_(Tensor(shift))
    return arith.mul(a, Tensor(noise)).add_(Tensor(shift))


def alpha_dropout(input, p=0.5, training=False, inplace=False) -> Tensor:
    """F.alpha_dropout (training=False by default, unlike F.dropout)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    _expect_tensor(input, "alpha_dropout_" if inplace else "alpha_dropout", "input", 1)
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout_" if inplace else "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False) -> Tensor:
    """F.feature_alpha_dropout: alpha dropout of whole channels."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    _expect_tensor(input, "feature_alpha_dropout_" if inplace else "feature_alpha_dropout", "input", 1)
    return _alpha_dropout(input, p, training, inplace, True,
                          "feature_alpha_dropout_" if inplace else "feature_alpha_dropout")


def alpha_dropout_raw(input, p, train, inplace: bool, feature: bool) -> Tensor:
    """torch.alpha_dropout / feature_alpha_dropout and their in-place forms (their parser has checked the types)."""
    name = ("feature_alpha_dropout" if feature else "alpha_dropout") + ("_" if inplace else "")
    return _alpha_dropout(input, p, train, inplace, feature, name)
