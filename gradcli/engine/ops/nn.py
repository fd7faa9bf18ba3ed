"""torch.nn.functional: softmax and log_softmax, the losses, linear, embedding, one_hot, normalize and dropout.

Where PyTorch builds a function out of other ops (l1_loss, cross_entropy, linear, normalize, dropout)
it is built here out of the same ops, so grad_fn chains print as PyTorch prints them; the rows below
are the ops PyTorch records as nodes of their own.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine.layout import contiguous
from gradcli.engine import budget, dtypes, elementary, ops, rng, vecorder
from gradcli.engine.signatures import type_name
from gradcli.engine.cascade import stride_sort, sum_array
from gradcli.engine.fma import by_rows, fma
from gradcli.engine.forward import add_tangents, dropped, sub_tangents, tangent_or_zeros
from gradcli.engine.ops import arith, blas, linalg, reduce
from gradcli.engine.recording import (autocast_policy, Op, apply, broadcast_error, given_dims, int64_arg, int_param, is_meta, needs_grad, operands, type_word,
                                      index_arg, wrap_dim, not_differentiable, number_arg, number_operand,
                                      INFERENCE_SAVED_ERROR)
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Size, Tensor

_BCE_EPSILON = 1e-12
_NO_DIM = object()


def _common(self, target):
    """A loss backward kernel's operands in their common dtype (the node keeps them as given, as PyTorch's does:
    an integer target stays one); tensors (under create_graph) as they are."""
    if self.__class__ is Tensor or target.__class__ is Tensor or self.dtype == target.dtype:
        return self, target
    common = dtypes.promote_types(dtypes.of_array(self), dtypes.of_array(target)).np
    return self.astype(common, copy=False), target.astype(common, copy=False)


def _mse_value(F, g, self, target, reduction, n):
    """mse_loss_backward's arithmetic: norm * (self - target) * grad, norm = 2 (or 2 / numel for 'mean')."""
    norm = (2.0 / n if n else math.nan) if reduction == "mean" else 2.0
    if not F.tensors:       # the kernel's norm in the input's dtype (numpy would make bfloat16's float32)
        norm = F.scalar(norm, self)
    return norm * (self - target) * g


def _mse_grad(F, g, self, target, reduction, n):
    """mse_loss_backward; under create_graph one recorded op (MseLossBackwardBackward0), as PyTorch records it."""
    if not F.tensors:
        return _mse_value(F, g, *_common(self, target), reduction, n)
    from gradcli.engine.backmath import NUMPY
    x = _array_of(self)
    value = _mse_value(NUMPY, _array_of(g), *_common(x, _array_of(target)), reduction, n)
    return apply(MSE_LOSS_BACKWARD, np.asarray(value, dtype=x.dtype), (g, self, target), (reduction, n))


def _mse_target_grad(F, g, self, target, reduction, n):
    return _mse_grad(F, g, target, self, reduction, n)


def _mse_double_grad_output(F, gg, grad_output, self, target, reduction, n):
    """mse_loss_backward's gradient for its grad_output: mse_loss_backward of gg (the row's fitting sums it to
    grad_output's shape: SumBackward0 for a reduced loss; none for a full-size grad_output, as a third order has)."""
    return _mse_grad(F, gg, self, target, reduction, n)


def _mse_double_self(F, gg, grad_output, self, target, reduction, n):
    """mse_loss_double_backward: 2 * (gg * grad_output), over numel for 'mean' (MulBackward1, DivBackward1)."""
    v = F.times(gg * grad_output, 2.0)
    return F.over(v, n) if reduction == "mean" else v


def _mse_double_target(F, gg, grad_output, self, target, reduction, n):
    return -_mse_double_self(F, gg, grad_output, target, self, reduction, n)


def _mse_backward_jvp(F, ts, xs, result, reduction, n):
    """The tangent of mse_loss_backward(grad_output, self, target): linear in each input."""
    grad_output, a, b = xs
    value = None
    if ts[0] is not None:
        value = _mse_value(F, ts[0], a, b, reduction, n)
    if ts[1] is not None or ts[2] is not None:
        diff = tangent_or_zeros(ts, xs, 1) - tangent_or_zeros(ts, xs, 2)
        value = add_tangents(value, _mse_value(F, grad_output, diff, 0.0, reduction, n))
    return value


def _loss_norm(reduction, n) -> float:
    """The backward kernels' norm: 1 / numel for 'mean' (nan for an empty input), else 1."""
    return (1.0 / n if n else math.nan) if reduction == "mean" else 1.0


def _sides(x, threshold):
    """-1 / 1 where the difference is at or beyond -threshold / threshold, 0 inside (nan falls inside)."""
    xa = x._a if x.__class__ is Tensor else x
    return np.where(xa <= -threshold, -1, np.where(xa >= threshold, 1, 0)).astype(xa.dtype)


def _smooth_l1_value(F, g, self, target, reduction, n, beta):
    """smooth_l1_loss_backward's arithmetic: norm * x * grad / beta inside (-beta, beta), +-norm * grad outside."""
    norm = _loss_norm(reduction, n)
    if not F.tensors and self.dtype.kind in "fV":
        return smooth_l1_backward_array(g, self, target, norm, beta)
    x = self - target
    sides = _sides(x, beta)
    return F.where(F.const(sides == 0), norm * x * g / beta, F.const(sides) * (norm * g))


def _smooth_l1_grad(F, g, self, target, reduction, n, beta):
    """smooth_l1_loss_backward; under create_graph one recorded op (SmoothL1LossBackwardBackward0)."""
    if not F.tensors:
        return _smooth_l1_value(F, g, *_common(self, target), reduction, n, beta)
    return _recorded(SMOOTH_L1_BACKWARD, _smooth_l1_value, g, self, target, reduction, n, beta)


def _smooth_l1_target_grad(F, g, self, target, reduction, n, beta):
    return _smooth_l1_grad(F, g, target, self, reduction, n, beta)


def _inside(F, gg, self, target, threshold):
    """The quadratic zone |self - target| < threshold as 0 / 1 in gg's dtype: a constant of the formula."""
    a = _array_of(self)
    with np.errstate(invalid="ignore"):
        mask = np.abs(a - _array_of(target)) < a.dtype.type(threshold)
    return F.const(mask.astype(_array_of(gg).dtype))


def _smooth_l1_double_grad_output(F, gg, grad_output, self, target, reduction, n, beta):
    """smooth_l1_loss_backward's gradient for its grad_output: the loss backward of gg (fitted to grad_output's
    shape, as mse's)."""
    return _smooth_l1_grad(F, gg, self, target, reduction, n, beta)


def _smooth_l1_double_self(F, gg, grad_output, self, target, reduction, n, beta):
    """smooth_l1_loss_double_backward of gg * grad_output: times the quadratic zone's mask, over beta, over
    numel for 'mean' (MulBackward0, MulBackward0, DivBackward1, DivBackward1)."""
    v = F.over(gg * grad_output * _inside(F, gg, self, target, beta), beta)
    return F.over(v, n) if reduction == "mean" else v


def _smooth_l1_double_target(F, gg, grad_output, self, target, reduction, n, beta):
    return -_smooth_l1_double_self(F, gg, grad_output, self, target, reduction, n, beta)


def _recorded(row, value, g, self, target, reduction, n, param):
    """A loss backward kernel (`value`, its arithmetic) under create_graph: one recorded op of `row`, whose
    inputs are grad_output, self and target."""
    from gradcli.engine.backmath import NUMPY
    x = _array_of(self)
    out = value(NUMPY, _array_of(g), *_common(x, _array_of(target)), reduction, n, param)
    return apply(row, np.asarray(out, dtype=x.dtype), (g, self, target), (reduction, n, param))


def _backward_jvp(value, double_self):
    """The tangent of a loss backward kernel(grad_output, self, target): linear in grad_output; self and target
    move it through their difference (`double_self`, the kernel's slope, applied to the difference's tangent)."""
    def jvp(F, ts, xs, result, reduction, n, param):
        grad_output, a, b = xs
        out = None if ts[0] is None else value(F, ts[0], a, b, reduction, n, param)
        if ts[1] is not None or ts[2] is not None:
            diff = tangent_or_zeros(ts, xs, 1) - tangent_or_zeros(ts, xs, 2)
            out = add_tangents(out, double_self(F, diff, grad_output, a, b, reduction, n, param))
        return out
    return jvp


def _huber_value(F, g, self, target, reduction, n, delta):
    """huber_loss_backward's arithmetic: norm * x * grad inside (-delta, delta), +-norm * grad * delta outside."""
    norm = _loss_norm(reduction, n)
    if not F.tensors and self.dtype.kind in "fV":
        return huber_backward_array(g, self, target, norm, delta)
    x = self - target
    sides = _sides(x, delta)
    return F.where(F.const(sides == 0), norm * x * g, F.const(sides) * (norm * g) * delta)


def _same_dtype(self, *others) -> None:
    """A TensorIterator with one dtype for all (huber_loss_backward's, whose output is made like `self`): PyTorch's
    error for the first operand of another dtype."""
    expected = _array_of(self)
    for other in others:
        a = _array_of(other)
        if a.dtype != expected.dtype:
            raise RuntimeError(f"Found dtype {type_word(a)} but expected {type_word(expected)}")


def _castable(like, *operands) -> None:
    """A backward kernel writes into a tensor made like `like` (its first operand), as the jvps of mse_loss and
    smooth_l1_loss compose two of them: PyTorch's error, before anything is computed, when the kernel's result
    cannot be cast to that dtype (a float into an integer or bool target's)."""
    want = _array_of(like).dtype
    have = dtypes.of_array(_array_of(like))
    for o in operands:          # (PyTorch's promotion of the tensors: int64 with float32 is float32)
        have = dtypes.promote_types(have, dtypes.of_array(_array_of(o)))
    have = have.np
    if not np.can_cast(have, want, "same_kind"):
        raise RuntimeError(f"result type {type_word(np.empty(0, have))} can't be cast to the desired output type "
                           f"{type_word(_array_of(like))}")


def _into(value, like):
    """The kernel's result rounded to `like`'s dtype (checked castable by _castable)."""
    want = _array_of(like).dtype
    if _array_of(value).dtype == want:
        return value
    return value.to(dtypes.of_array(_array_of(like))) if value.__class__ is Tensor else value.astype(want)


def _huber_grad(F, g, self, target, reduction, n, delta):
    """huber_loss_backward; under create_graph one recorded op (HuberLossBackwardBackward0)."""
    _same_dtype(self, target, g)
    if not F.tensors:
        return _huber_value(F, g, self, target, reduction, n, delta)
    return _recorded(HUBER_BACKWARD, _huber_value, g, self, target, reduction, n, delta)


def _huber_target_grad(F, g, self, target, reduction, n, delta):
    return _huber_grad(F, g, target, self, reduction, n, delta)


def _huber_double_grad_output(F, gg, grad_output, self, target, reduction, n, delta):
    """huber_loss_backward's gradient for its grad_output: for a reduced loss the backward of a one, times gg,
    summed (MulBackward0, SumBackward0); else the loss backward of gg."""
    if reduction == "none":
        return _huber_grad(F, gg, self, target, reduction, n, delta)
    one = F.const(np.ones((), _array_of(gg).dtype))
    return F.sum(_huber_grad(F, one, self, target, reduction, n, delta) * gg)


def _huber_double_self(F, gg, grad_output, self, target, reduction, n, delta):
    """huber_loss_double_backward of gg * grad_output: times the quadratic zone's mask, over numel for 'mean'."""
    v = gg * grad_output * _inside(F, gg, self, target, delta)
    return F.over(v, n) if reduction == "mean" else v


def _huber_double_target(F, gg, grad_output, self, target, reduction, n, delta):
    return -_huber_double_self(F, gg, grad_output, self, target, reduction, n, delta)


# PyTorch's smooth_l1 and huber backward kernels round differently in their vector body and their scalar
# code (tail, strided operands): the vector code multiplies norm by the clipped difference, then by grad;
# the scalar code multiplies norm by grad first and applies beta / delta as a double (C++ promotion).

def smooth_l1_backward_array(g, self, target, norm, beta):
    t = self.dtype.type
    x = self - target
    nv, bv = t(norm), t(beta)
    clipped = np.where(np.abs(x) >= bv, np.where(x > 0, t(1), t(-1)), x / bv)
    vector = nv * clipped * g
    wide = x.astype(np.float64)
    inside = ((nv * x * g).astype(np.float64) / beta).astype(x.dtype)
    scalar = np.where(wide <= -beta, -nv * g, np.where(wide >= beta, nv * g, inside))
    return by_rows(vector, scalar, self, target, g)


def huber_backward_array(g, self, target, norm, delta):
    t = self.dtype.type
    x = self - target
    nv, dv = t(norm), t(delta)
    clipped = np.where(np.abs(x) >= dv, np.where(x > 0, dv, -dv), x)
    vector = nv * clipped * g
    wide = x.astype(np.float64)
    below = ((-nv * g).astype(np.float64) * delta).astype(x.dtype)
    above = ((nv * g).astype(np.float64) * delta).astype(x.dtype)
    scalar = np.where(wide <= -delta, below, np.where(wide >= delta, above, nv * x * g))
    return by_rows(vector, scalar, self, target, g)


def _softmax_grad(F, g, result, dims):
    """_softmax_backward_data: (grad - sum(grad * result)) * result, an op of its own under create_graph."""
    return F.softmax_backward(g, result, dims)


def _log_softmax_grad(F, g, result, dims):
    """_log_softmax_backward_data: grad - exp(result) * sum(grad), an op of its own under create_graph."""
    return F.log_softmax_backward(g, result, dims)


def softmax_backward_value(F, g, result, dims):
    return softmax_backward_array(g, result, dims, False)


def log_softmax_backward_value(F, g, result, dims):
    return softmax_backward_array(g, result, dims, True)


def softmax_backward_array(g: np.ndarray, result: np.ndarray, dims: tuple, log: bool) -> np.ndarray:
    """The backward kernels' value: the row sum in their order (softmax_grad_sum), then the elementwise
    step (g - sum) * result, or g - exp(result) * sum for log_softmax, whose kernel fuses the product into
    the subtraction (one rounding)."""
    if result.dtype.char in "eE":     # (a float gradient from a formula's float arithmetic: still the half kernel)
        return _half_softmax_backward(np.asanyarray(g).astype(result.dtype), result, dims, log)
    s = softmax_grad_sum(g, result, dims, log)
    if log:
        if g.dtype.kind in "fV":
            return fma(-elementary.exp(result), s, g)
        return g - elementary.exp(result) * s
    return (g - s) * result


def _half_softmax_backward(g: np.ndarray, result: np.ndarray, dims: tuple, log: bool) -> np.ndarray:
    """The float16 backward kernels: the row sum in float (along the last dim vec::reduce_all's order over
    16-half steps; along another the float kernel's sequential sums), then the elementwise step in float,
    rounded once to half."""
    gf, rf = g.astype(np.float32), np.asanyarray(result).astype(np.float32)
    if not dims or dims[0] == g.ndim - 1:
        s = vecorder.half_reduce_all(gf, None if log else rf)[..., None]
    else:
        s = vecorder.seq_sum(gf, dims[0]) if log else vecorder.seq_sum(gf * rf, dims[0])
    if log:
        out = fma(-elementary.exp(rf), np.broadcast_to(s, gf.shape).astype(np.float32), gf)
    else:
        out = (gf - s) * rf
    return np.asanyarray(out).astype(g.dtype)


def softmax_grad_sum(g: np.ndarray, result: np.ndarray, dims: tuple, log: bool) -> np.ndarray:
    """The row sums of the softmax backward kernels (kept dims): sum(g) for log_softmax, sum(g * result) for
    softmax. Along the last dim: vec::reduce_all's lanes of the products rounded; along another dim: a
    sequential sum per position, the products fused into it (fma) for softmax."""
    if is_meta(g) or is_meta(result):          # the sums' shape alone
        from gradcli.engine.meta import meta_full
        return meta_full(tuple(1 if d in dims else n for d, n in enumerate(g.shape)), 0, g.dtype)
    if g.dtype.kind not in "fV" or g.dtype.itemsize < 4:
        return np.add.reduce(g if log else g * result, axis=dims, keepdims=True, dtype=g.dtype)
    if not dims or dims[0] == g.ndim - 1:
        terms = g if log else g * result
        s = vecorder.lane_sum_along(terms, g.ndim - 1)
        if g.ndim and 0 < g.shape[-1] < vecorder.lanes_of(g.dtype):
            return s            # a short row's running sum starts from its own first value already
        if np.count_nonzero(s) < s.size:
            # vec::reduce_all starts from the row's own values, not from 0: a row of -0.0 sums to -0.0
            negative_zeros = ((terms == 0) & np.signbit(terms)).all(axis=-1, keepdims=True)
            s = np.where(negative_zeros, s.dtype.type(-0.0), s)
        return s
    if log:
        return vecorder.seq_sum(g, dims[0])
    return vecorder.seq_fma_sum(g, result, dims[0])


def _softmax_double_backward(F, gg, grad_output, result, dims):
    """softmax_double_backward: the backward-data op's gradient with respect to the softmax result."""
    return (grad_output * gg - F.sum_dims(result * grad_output, dims, True) * gg
            - grad_output * F.sum_dims(result * gg, dims, True))


def _nll_backward(F, g, self, shape, key, weights, reduction, total_weight, target, weight, ignore_index):
    """nll_loss_backward and nll_loss2d_backward (a 4-d input; key: batch, class, height, width): -weight[target]
    * grad at each sample's (position's) target class, zero elsewhere; under create_graph one recorded op
    (NllLossBackwardBackward0, NllLoss2DBackwardBackward0), as PyTorch records it."""
    a = g._a if F.tensors else g
    spatial = len(shape) == 4
    if not key or len(key[-1]) == 0:
        value = _no_targets(a, shape)
    else:
        if reduction == "none" and (spatial or len(shape) == 2):
            picked = a[(key[0], key[2], key[3]) if spatial else key[0]]
            values = -weights * picked if weights is not None else -picked
        else:
            grad = -(a / total_weight) if reduction == "mean" else -a
            if weights is not None:
                values = weights * grad
            elif len(shape) == 2:
                values = grad               # one value for every sample: the store below broadcasts it
            else:
                values = np.broadcast_to(grad, (len(key[-1]),))
        value = _stored(values, shape, key)
    if F.tensors:
        return apply(NLL_LOSS2D_BACKWARD if spatial else NLL_LOSS_BACKWARD, value, (g, self),
                     (shape, key, weights, reduction, total_weight, target, weight, ignore_index))
    return value


def _nll_double_grad_output(F, gg, shape, key, weights, reduction, total_weight, target, weight, ignore_index):
    """The loss backward's gradient for its grad_output: the loss of gg, with the same targets, weights,
    reduction and ignore_index (NllLossBackward0 or NllLoss2DBackward0 under create_graph)."""
    kernel = _nll_loss2d if len(shape) == 4 else _nll_kernel
    out = kernel(gg if F.tensors else Tensor(gg), target, weight, reduction, ignore_index)
    return out if F.tensors else out._a


def _nll_double_self(F, gg, shape, key, weights, reduction, total_weight, target, weight, ignore_index):
    """The loss backward's gradient for its input: zeros like the incoming gradient (a tensor outside the graph)."""
    return F.zeros_like(gg)


def _nll_backward_jvp(F, ts, xs, result, *saved):
    """The tangent of nll_loss_backward(grad_output, self): the kernel on grad_output's tangent (self gives only
    the shape: no tangent comes from it)."""
    return None if ts[0] is None else _nll_backward(F, ts[0], xs[1], *saved)


def _no_targets(g, shape):
    """The gradient when no sample's target counts (all of them ignore_index, or a meta input): zeros of the
    input's shape (meta ones for a meta input), whatever the reduction made of g's shape."""
    if is_meta(g):
        from gradcli.engine.meta import meta_full
        return meta_full(tuple(shape), 0, g.dtype)
    return np.zeros(tuple(shape), g.dtype)


def _stored(values, shape, key):
    """The gradient with `values` at the target positions `key` (one per sample and position, each its own
    element) and zeros elsewhere: a store, as PyTorch's kernel writes it (an add into zeros would turn a -0.0
    that a tiny class weight underflows to into 0.0)."""
    out = np.zeros(shape, dtype=values.dtype)
    out[key] = values
    return out


def _scaled(F, grad, weight, reduction, n):
    """The common tail of the binary cross entropy backwards: times the weight, over numel for 'mean'."""
    if weight is not None:
        grad = grad * F.const(weight)
    return grad / n if reduction == "mean" else grad


def _bce_value(F, g, self, target, weight, reduction, n):
    """binary_cross_entropy_backward's arithmetic: grad * (x - t) / max((1 - x) x, eps), weighted, over numel."""
    return _scaled(F, g * (self - target) / F.clamp_min((1 - self) * self, _BCE_EPSILON), weight, reduction, n)


def _bce_self(F, g, self, target, weight, reduction, n):
    """binary_cross_entropy_backward; under create_graph one recorded op (BinaryCrossEntropyBackwardBackward0)."""
    if not F.tensors:
        return _bce_value(F, g, self, target, weight, reduction, n)
    from gradcli.engine.backmath import NUMPY
    x = _array_of(self)
    out = _bce_value(NUMPY, _array_of(g), x, _array_of(target), weight, reduction, n)
    return apply(BCE_BACKWARD, np.asarray(out, dtype=x.dtype), (g, self, target), (weight, reduction, n))


def _bce_target(F, g, self, target, weight, reduction, n):
    """-logit(self) * grad; logit is log(x / (1 - x)) in one kernel, its log rounded once from double. Under
    create_graph PyTorch's steps: logit, negated, times grad (LogitBackward0, NegBackward0, MulBackward0)."""
    if not F.tensors:
        return _scaled(F, -elementary.log(self / (1 - self)) * g, weight, reduction, n)
    return _scaled(F, -ops.elementwise.logit(self) * g, weight, reduction, n)


# binary_cross_entropy_backward's own gradients (PyTorch's binary_cross_entropy_double_backward and its
# _grad_output and _target kin, step for step): an eps of 1e-12 added to x and 1 - x for self and grad_output,
# (1 - x) x clamped to it for target
def _bce_double_grad_output(F, gg, grad_output, self, target, weight, reduction, n):
    """(x - t) / ((x + eps) (1 - x + eps)) * gg, weighted, over numel (fitted to grad_output's shape)."""
    return _scaled(F, (self - target) / ((self + _BCE_EPSILON) * (1 - self + _BCE_EPSILON)) * gg, weight,
                   reduction, n)


def _bce_double_self(F, gg, grad_output, self, target, weight, reduction, n):
    """(x x - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2) * (gg * grad_output), weighted, over numel."""
    slope = (self * self - 2 * self * target + target) / (
        F.pow(self + _BCE_EPSILON, 2) * F.pow(1 - self + _BCE_EPSILON, 2))
    return _scaled(F, slope * (gg * grad_output), weight, reduction, n)


def _bce_double_target(F, gg, grad_output, self, target, weight, reduction, n):
    """-gg * grad_output, weighted, over (1 - x) x clamped to eps without recording the clamp, over numel."""
    res = -gg * grad_output
    if weight is not None:
        res = res * F.const(weight)
    denom = (1 - self) * self
    if F.tensors:
        from gradcli.engine import autograd
        with autograd.set_grad_enabled(False):
            denom.clamp_min_(_BCE_EPSILON)
    else:
        denom = F.clamp_min(denom, _BCE_EPSILON)
    res = res / denom
    return res / n if reduction == "mean" else res


def _bce_backward_jvp(F, ts, xs, result, weight, reduction, n):
    """The tangent of binary_cross_entropy_backward(grad_output, self, target): its three gradients applied to
    the tangents of self, target and grad_output, added in that order."""
    grad_output, a, b = xs
    out = None if ts[1] is None else _bce_double_self(F, ts[1], grad_output, a, b, weight, reduction, n)
    if ts[2] is not None:
        out = add_tangents(out, _bce_double_target(F, ts[2], grad_output, a, b, weight, reduction, n))
    if ts[0] is not None:
        out = add_tangents(out, _bce_double_grad_output(F, ts[0], grad_output, a, b, weight, reduction, n))
    return out


def _bce_logits_self(F, g, self, target, weight, pos_weight, reduction, n):
    if pos_weight is not None:
        t = F.const(pos_weight) * target
        grad = (t + 1 - target) * F.sigmoid(self) - t
    else:
        grad = F.sigmoid(self) - target
    return _scaled(F, grad * g, weight, reduction, n)


def _bce_logits_target(F, g, self, target, weight, pos_weight, reduction, n):
    if pos_weight is not None:
        grad = F.log_sigmoid(-self) - F.log_sigmoid(self) * F.const(pos_weight)
        # PyTorch multiplies by grad_output in place: a grad_output that requires grad saves a clone of the
        # factor (CloneBackward0 below the double backward's MulBackward0)
        grad = grad.mul_(g) if F.tensors else grad * g
    else:
        grad = -self * g
    return _scaled(F, grad, weight, reduction, n)


def _log_softmax_data_grad(F, gg, grad_output, result, dims):
    return gg - F.sum_dims(gg * F.exp_rounded(result), dims, True)


def _log_softmax_data_double_backward(F, gg, grad_output, result, dims):
    return -F.sum_dims(grad_output, dims, True) * F.exp_rounded(result) * gg


# Forward-mode columns (see gradcli.engine.forward and elementwise's add_tangents: a missing tangent is PyTorch's
# efficient zero tensor, which drops out of products but still leaves an add node).

def _logsumexp_jvp(x: Tensor, tangent: Tensor, dims) -> Tensor:
    """logsumexp_jvp: sum(exp(x - max) * tangent) / sum(exp(x - max)) over dims, kept."""
    e = arith.exp(x - reduce.amax(x, dims, True)) if x._a.size else arith.exp(x)
    return reduce.reduce_sum(e * tangent, dims, True) / reduce.reduce_sum(e, dims, True)


def _softmax_jvp(F, ts, xs, result, dims):
    return result * (ts[0] - _logsumexp_jvp(xs[0], ts[0], dims))


def _log_softmax_jvp(F, ts, xs, result, dims):
    return ts[0] - _logsumexp_jvp(xs[0], ts[0], dims)


def _times(a, at, b, bt):
    """The tangent of a * b from the tangents at, bt (None: none): bt * a + at * b, as mul's formula."""
    return add_tangents(dropped(a) if bt is None else bt * a, dropped(b) if at is None else at * b)


def _softmax_data_jvp(F, ts, xs, result, dims):
    """_softmax_backward_data has no formula: PyTorch runs its decomposition on the dual tensors,
    g * out - out * sum(g * out)."""
    (gt, ot), (g, out) = ts, xs
    product = g * out
    product_t = _times(g, gt, out, ot)
    total = reduce.reduce_sum(product, dims, True)
    return sub_tangents(product_t, _times(out, ot, total, reduce.reduce_sum(product_t, dims, True)))


def _log_softmax_data_jvp(F, ts, xs, result, dims):
    """The decomposition of _log_softmax_backward_data on dual tensors: g - exp(out) * sum(g)."""
    (gt, ot), (g, out) = ts, xs
    e = arith.exp(out)
    total_t = None if gt is None else reduce.reduce_sum(gt, dims, True)
    return sub_tangents(gt, _times(e, None if ot is None else ot * e, reduce.reduce_sum(g, dims, True), total_t))


def _reduced(value: Tensor, reduction: str, result: Tensor, n: int, copied: bool) -> Tensor:
    """apply_loss_reduction on the tangent. Losses whose kernel writes a reduced result into a buffer of
    the unreduced size (mse_loss, binary_cross_entropy) leave their result's storage larger than one
    element, so PyTorch copies the tangent into a tensor shaped like it: a CopyBackwards node."""
    if reduction == "none":
        return value
    value = reduce.mean(value) if reduction == "mean" else reduce.reduce_sum(value)
    return ops.copy(Tensor(np.zeros_like(result._a)), value) if copied and n != 1 else value


def _mse_jvp(F, ts, xs, result, reduction, n):
    a, b = xs
    ta, tb = tangent_or_zeros(ts, xs, 0), tangent_or_zeros(ts, xs, 1)
    _castable(a, ta, b)
    _castable(b, tb, a)
    value = _into(_mse_value(F, ta, a, b, "none", n), a) + _into(_mse_value(F, tb, b, a, "none", n), b)
    return _reduced(value, reduction, result, n, True)


def _smooth_l1_jvp(F, ts, xs, result, reduction, n, beta):
    a, b = xs
    ta, tb = tangent_or_zeros(ts, xs, 0), tangent_or_zeros(ts, xs, 1)
    _castable(a, ta, b)
    _castable(b, tb, a)
    value = (_into(_smooth_l1_value(F, ta, a, b, "none", n, beta), a)
             + _into(_smooth_l1_value(F, tb, b, a, "none", n, beta), b))
    return _reduced(value, reduction, result, n, True)


def _huber_jvp(F, ts, xs, result, reduction, n, delta):
    """As smooth_l1's, but huber_loss reduces a fresh unreduced loss: no copy of the tangent."""
    a, b = xs
    ta, tb = tangent_or_zeros(ts, xs, 0), tangent_or_zeros(ts, xs, 1)
    _same_dtype(b, a, tb)       # (the target's term first, as PyTorch's jvp meets it)
    _same_dtype(a, b, ta)
    value = (_huber_value(F, ta, a, b, "none", n, delta) + _huber_value(F, tb, b, a, "none", n, delta))
    return _reduced(value, reduction, result, n, False)


def _bce_jvp(F, ts, xs, result, weight, reduction, n):
    x, t = xs
    value = (_bce_self(F, tangent_or_zeros(ts, xs, 0), x, t, weight, "none", n)
             + _bce_target(F, tangent_or_zeros(ts, xs, 1), x, t, weight, "none", n))
    return _reduced(value, reduction, result, n, True)


def _bce_logits_jvp(F, ts, xs, result, weight, pos_weight, reduction, n):
    """The two backward functions return PyTorch's zero tensor for a zero tangent: those terms drop out."""
    (st, tt), (x, t) = ts, xs
    value = add_tangents(None if st is None else _bce_logits_self(F, st, x, t, weight, pos_weight, "none", n),
                  None if tt is None else _bce_logits_target(F, tt, x, t, weight, pos_weight, "none", n))
    return _reduced(value, reduction, result, n, False)


def _nll_jvp(F, ts, xs, result, shape, key, weights, reduction, total_weight, target, weight, ignore_index):
    """nll_loss (nll_loss2d for a 4-d input) on the tangent, with the same targets, weights and reduction."""
    w = None if weight is None else weight.astype(ts[0]._a.dtype)
    return (_nll_loss2d if len(shape) == 4 else _nll_kernel)(ts[0], target, w, reduction, ignore_index)


def _embedding_grad(F, g, indices, num_weights, padding_idx, scale_grad_by_freq):
    """embedding_dense_backward; under create_graph a node of its own (EmbeddingDenseBackwardBackward0)."""
    if F.tensors:
        return embedding_dense_backward(g, indices, num_weights, padding_idx, scale_grad_by_freq)
    return embedding_dense_array(g, indices, num_weights, padding_idx, scale_grad_by_freq)


def embedding_dense_array(g, indices, num_weights, padding_idx, scale_grad_by_freq):
    """Each index's gradient row added into its weight row, in index order, the padding row left at zero;
    with scale_grad_by_freq each row scaled by the reciprocal of how often its index occurs in the batch
    (PyTorch adds the row with that reciprocal as alpha: one fused multiply-add per element)."""
    flat = indices.reshape(-1)
    rows = g.reshape(flat.size, g.shape[-1])
    if padding_idx is not None:
        keep = np.nonzero(flat != padding_idx)[0]
        flat, rows = flat[keep], rows[keep]
    if scale_grad_by_freq:
        counts = np.bincount(indices.reshape(-1), minlength=num_weights)
        return fused_scaled_sum(rows, flat, (1.0 / counts[flat]).astype(g.dtype)[:, None], num_weights)
    out = np.zeros((num_weights, g.shape[-1]), dtype=g.dtype)
    np.add.at(out, flat, rows)
    return out


def embedding_dense_backward(grad_output: Tensor, indices, num_weights, padding_idx, scale_grad_by_freq):
    out = embedding_dense_array(grad_output._a, indices, num_weights, padding_idx, scale_grad_by_freq)
    return apply(EMBEDDING_DENSE_BACKWARD, out, (grad_output,),
                 (indices, num_weights, padding_idx, scale_grad_by_freq))


def _embedding_dense_double_backward(F, g, indices, num_weights, padding_idx, scale_grad_by_freq):
    """embedding_dense_double_backward: the rows of grad the indices name, shaped as the indices, with the
    padding index's rows zero. It does not scale by frequency (PyTorch's formula leaves that out)."""
    flat = indices.reshape(-1)
    rows = F.getitem(g, (flat,))
    if padding_idx is not None:
        rows = F.masked_zero(rows, F.const((flat == padding_idx)[:, None]))
    return F.reshape(rows, indices.shape + (g.shape[-1],))


def _embedding_dense_backward_jvp(F, ts, xs, result, indices, num_weights, padding_idx, scale_grad_by_freq):
    """Linear in grad_output: the same backward of its tangent."""
    return None if ts[0] is None else embedding_dense_backward(ts[0], indices, num_weights, padding_idx,
                                                               scale_grad_by_freq)


def fused_scaled_sum(rows: np.ndarray, flat: np.ndarray, scale: np.ndarray, num_weights: int) -> np.ndarray:
    """out[flat[i]] = fma(rows[i], scale[i], out[flat[i]]) for each i in order: the i with the same index
    run in sequence, so the r-th occurrences of all indices go together, one vector step per r."""
    from gradcli.engine.optim import fma        # optim imports the tensor module, which imports the ops
    out = np.zeros((num_weights, rows.shape[-1]), dtype=rows.dtype)
    if not flat.size:
        return out
    order = np.argsort(flat, kind="stable")
    keys = flat[order]
    rank = np.arange(keys.size) - np.searchsorted(keys, keys)
    for r in range(int(rank.max()) + 1):
        picked = order[rank == r]
        k = flat[picked]
        out[k] = fma(rows[picked], scale[picked], out[k])
    return out


def _embedding_jvp(F, tangents, inputs, result, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The tangent of the picked rows: the weight's tangent picked the same way."""
    return F.getitem(tangents[0], (indices,))


# _trilinear as bilinear calls it: out[n,k] = sum_j (sum_i x1[n,i] W[k,i,j]) x2[n,j]. PyTorch computes it one
# output feature k at a time through small bmm calls that accumulate in order, so the plain backward and the
# forward accumulate in that order too (bit for bit PyTorch's where its bmm takes the sequential kernel);
# under create_graph the gradients are built from recorded ops.

def _ordered_sum(terms):
    """The terms added in order from +0.0, as the products' accumulators start (a sum of -0.0 terms is +0.0
    there: PyTorch's bilinear of a zero input prints 0., not -0.)."""
    acc = None
    for t in terms:
        acc = t + 0.0 if acc is None else acc + t
    return acc


def trilinear_array(x1, w, x2):
    return np.stack([_ordered_sum(_ordered_sum(x1[:, i, None] * w[k, i] for i in range(w.shape[1]))[:, j] * x2[:, j]
                                  for j in range(w.shape[2])) for k in range(w.shape[0])], axis=1)


def _trilinear_i1(F, g, i1, i2, i3):
    if isinstance(g, np.ndarray):       # for each k: (g[n,k] W[k]) summed over j with x2, the k terms in order
        return _ordered_sum(_ordered_sum((g[:, k, None] * i2[k, :, j]) * i3[:, j, None] for j in range(i2.shape[2]))
                            for k in range(i2.shape[0]))
    return F.sum_dims(F.reshape(g, (g.shape[0], g.shape[1], 1, 1)) * i2 * F.reshape(i3, (i3.shape[0], 1, 1, -1)),
                      (1, 3))


def _trilinear_i2(F, g, i1, i2, i3):
    if isinstance(g, np.ndarray):       # for each k: sum over n of (x1[n,i] g[n,k]) x2[n,j]
        return np.stack([_ordered_sum((i1[n, :, None] * g[n, k]) * i3[n, None, :] for n in range(g.shape[0]))
                         for k in range(g.shape[1])])
    return F.sum_dims(F.reshape(i1, (i1.shape[0], 1, -1, 1)) * F.reshape(g, (g.shape[0], g.shape[1], 1, 1))
                      * F.reshape(i3, (i3.shape[0], 1, 1, -1)), (0,))


def _trilinear_i3(F, g, i1, i2, i3):
    if isinstance(g, np.ndarray):       # for each k: (x1 W[k]) times g[n,k], the k terms in order
        return _ordered_sum(_ordered_sum(i1[:, i, None] * i2[k, i] for i in range(i2.shape[1])) * g[:, k, None]
                            for k in range(i2.shape[0]))
    return F.sum_dims(F.reshape(i1, (i1.shape[0], 1, -1, 1)) * i2 * F.reshape(g, (g.shape[0], g.shape[1], 1, 1)),
                      (1, 2))


def _trilinear_jvp(F, tangents, inputs, result, *args):
    """Linear in each input: the sum of the result with one input replaced by its tangent."""
    i1, i2, i3 = inputs
    terms = []
    for pos, t in enumerate(tangents):
        if t is not None:
            a, b, c = (t if pos == 0 else i1), (t if pos == 1 else i2), (t if pos == 2 else i3)
            terms.append(F.sum_dims(F.reshape(a, (a.shape[0], 1, -1, 1)) * b * F.reshape(c, (c.shape[0], 1, 1, -1)),
                                    (2, 3)))
    return _ordered_sum(terms)


# What the nll_loss nodes keep besides the input (the loss backward's own node keeps no tensor input): gradcli's
# form of the targets (key: sample and class indices; weights: the picked class weights) and PyTorch's arguments.
_NLL_SAVES = ("shape", "key", "weights", "reduction", "total_weight", "target", "weight", "ignore_index")

# Formulas receive (F, g, *saved): F is the math vocabulary, g the incoming gradient.
# fmt: off
SOFTMAX     = Op("SoftmaxBackward0",    None,    ("result", "dims"), (_softmax_grad,), quiet=True, jvp=_softmax_jvp)
LOG_SOFTMAX = Op("LogSoftmaxBackward0", None,    ("result", "dims"), (_log_softmax_grad,), quiet=True,
                 jvp=_log_softmax_jvp)
# fmt: on

# The softmax gradients as ops of their own, so create_graph can differentiate them again.
# fmt: off
SOFTMAX_BACKWARD_DATA     = Op("SoftmaxBackwardDataBackward0",    None,    ("grad_output", "result", "dims"),
                               (lambda F, gg, grad_output, result, dims: F.softmax_backward(gg, result, dims),
                                _softmax_double_backward), inputs=("grad_output", "result"), jvp=_softmax_data_jvp)
LOG_SOFTMAX_BACKWARD_DATA = Op("LogSoftmaxBackwardDataBackward0", None,    ("grad_output", "result", "dims"),
                               (_log_softmax_data_grad,
                                _log_softmax_data_double_backward), inputs=("grad_output", "result"),
                               jvp=_log_softmax_data_jvp)
# fmt: on

# fmt: off
MSE_LOSS   = Op("MseLossBackward0",                      None,    ("self", "target", "reduction", "n"),
                (_mse_grad,
                 _mse_target_grad), inputs=("self", "target"), fits=True, quiet=True, jvp=_mse_jvp)
MSE_LOSS_BACKWARD = Op("MseLossBackwardBackward0",       None,    ("grad_output", "self", "target", "reduction", "n"),
                       (_mse_double_grad_output,
                        _mse_double_self,
                        _mse_double_target), inputs=("grad_output", "self", "target"), fits=True, quiet=True,
                       jvp=_mse_backward_jvp)
SMOOTH_L1  = Op("SmoothL1LossBackward0",                 None,    ("self", "target", "reduction", "n", "beta"),
                (_smooth_l1_grad,
                 _smooth_l1_target_grad), inputs=("self", "target"), fits=True, quiet=True, jvp=_smooth_l1_jvp)
SMOOTH_L1_BACKWARD = Op("SmoothL1LossBackwardBackward0", None,   ("grad_output", "self", "target", "reduction", "n",
                                                                   "beta"),
                        (_smooth_l1_double_grad_output,
                         _smooth_l1_double_self,
                         _smooth_l1_double_target), inputs=("grad_output", "self", "target"), fits=True,
                        quiet=True, jvp=_backward_jvp(_smooth_l1_value, _smooth_l1_double_self))
HUBER      = Op("HuberLossBackward0",                    None,    ("self", "target", "reduction", "n", "delta"),
                (_huber_grad,
                 _huber_target_grad), inputs=("self", "target"), fits=True, quiet=True, jvp=_huber_jvp)
HUBER_BACKWARD = Op("HuberLossBackwardBackward0",         None,    ("grad_output", "self", "target", "reduction", "n",
                                                                   "delta"),
                    (_huber_double_grad_output,
                     _huber_double_self,
                     _huber_double_target), inputs=("grad_output", "self", "target"), fits=True, quiet=True,
                    jvp=_backward_jvp(_huber_value, _huber_double_self))
NLL_LOSS   = Op("NllLossBackward0",                      None,    ("self",) + _NLL_SAVES,
                (_nll_backward,), inputs=("self",), quiet=True, jvp=_nll_jvp)
NLL_LOSS_BACKWARD = Op("NllLossBackwardBackward0",       None,    _NLL_SAVES,
                       (_nll_double_grad_output,
                        _nll_double_self), inputs=("grad_output", "self"), saves_tensors=True, quiet=True,
                       jvp=_nll_backward_jvp)
NLL_LOSS2D = Op("NllLoss2DBackward0",                    None,    ("self",) + _NLL_SAVES,
                (_nll_backward,), inputs=("self",), quiet=True, jvp=_nll_jvp)
NLL_LOSS2D_BACKWARD = Op("NllLoss2DBackwardBackward0",   None,    _NLL_SAVES,
                         (_nll_double_grad_output,
                          _nll_double_self), inputs=("grad_output", "self"), saves_tensors=True, quiet=True,
                         jvp=_nll_backward_jvp)
BCE        = Op("BinaryCrossEntropyBackward0",           None,    ("self", "target", "weight", "reduction", "n"),
                (_bce_self,
                 _bce_target), inputs=("self", "target"), fits=True, quiet=True, jvp=_bce_jvp)
BCE_BACKWARD = Op("BinaryCrossEntropyBackwardBackward0",  None,   ("grad_output", "self", "target", "weight",
                                                                  "reduction", "n"),
                  (_bce_double_grad_output,
                   _bce_double_self,
                   _bce_double_target), inputs=("grad_output", "self", "target"), fits=True, quiet=True,
                  jvp=_bce_backward_jvp)
BCE_LOGITS = Op("BinaryCrossEntropyWithLogitsBackward0", None,
                ("self", "target", "weight", "pos_weight", "reduction", "n"),
                (_bce_logits_self,
                 _bce_logits_target), inputs=("self", "target"), fits=True, quiet=True, jvp=_bce_logits_jvp)
EMBEDDING  = Op("EmbeddingBackward0",                    None,    ("indices", "num_weights", "padding_idx",
                                                                   "scale_grad_by_freq"),
                (_embedding_grad,), inputs=("weight",), saves_tensors=True, quiet=True, jvp=_embedding_jvp)
EMBEDDING_DENSE_BACKWARD = Op("EmbeddingDenseBackwardBackward0", None,
                              ("indices", "num_weights", "padding_idx", "scale_grad_by_freq"),
                              (_embedding_dense_double_backward,), inputs=("grad_output",), quiet=True,
                              jvp=_embedding_dense_backward_jvp)
NATIVE_DROPOUT = Op("NativeDropoutBackward0",           None,    ("result1", "p", "train"),
                    (lambda F, g, result1, p, train: _native_dropout_backward(F, g, result1, _dropout_scale(p, train)),),
                    quiet=True,
                    jvp=lambda F, ts, xs, result, result1, p, train: _native_dropout_jvp(ts[0], result1,
                                                                                        _dropout_scale(p, train)))
TRILINEAR  = Op("TrilinearBackward0",                    None,    ("i1", "i2", "i3"),
                (_trilinear_i1,
                 _trilinear_i2,
                 _trilinear_i3), inputs=("i1", "i2", "i3"), quiet=True, jvp=_trilinear_jvp)
# fmt: on


# ------------------------------------------------------------------------------------------ arguments

def _expect_tensor(value, fn: str, name: str, position: int | None = None):
    if value.__class__ is not Tensor:
        where = f" (position {position})" if position is not None else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be Tensor, not {type(value).__name__}")


def _expect_attr(value, attr: str):
    """Where PyTorch's Python code calls a tensor method first (target.size(), input.norm(...)), a non-tensor
    fails with Python's AttributeError."""
    if value.__class__ is not Tensor:
        raise AttributeError(f"'{type(value).__name__}' object has no attribute '{attr}'")


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """`_reduction`, with PyTorch's deprecation warning when the legacy size_average/reduce pair is given (a
    script's call of a loss: its line)."""
    reduction = _reduction(size_average, reduce, reduction)
    if (size_average is not None or reduce is not None) and STATE.warn is not None:
        STATE.warn("UserWarning", f"size_average and reduce args will be deprecated, please use "
                   f"reduction='{reduction}' instead.")
    return reduction


def _reduction(size_average, reduce, reduction: str) -> str:
    """`reduction=`, or the legacy size_average/reduce pair when either is given."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return "mean" if size_average and reduce else ("sum" if reduce else "none")
    if reduction == "elementwise_mean":
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _cxx_double(v: float) -> str:
    """A double as C++ streams print it in PyTorch's messages (6 significant digits, no trailing zeros)."""
    return format(float(v), "g")


def _size_list(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _broadcast_pair(a: Tensor, b: Tensor):
    """torch.broadcast_tensors(a, b): each operand expanded (ExpandBackward0) only when its shape changes."""
    sa, sb = a._a.shape, b._a.shape
    if sa == sb:
        return a, b
    try:
        shape = np.broadcast_shapes(sa, sb)
    except ValueError:
        raise broadcast_error(sa, sb) from None
    return (a if sa == shape else ops.expand(a, shape)), (b if sb == shape else ops.expand(b, shape))


def _apply_reduction(t: Tensor, reduction: str) -> Tensor:
    """apply_loss_reduction: mean() / sum() of an unreduced loss, as recorded ops."""
    if reduction == "mean":
        return ops.mean(t)
    if reduction == "sum":
        return ops.reduce_sum(t)
    return t


def _reduce_array(loss: np.ndarray, reduction: str, like: np.ndarray) -> np.ndarray:
    """apply_loss_reduction on a loss computed as one kernel: at::mean or at::sum (the cascade sum), over
    the loss in the memory layout PyTorch gives it, which follows the first input's (TensorIterator lets
    the first operand with distinct strides order the dims), where numpy's may differ; reduction="none"
    returns the loss so laid out."""
    if loss.ndim > 1 and like.shape == loss.shape and not like.flags.c_contiguous:
        laid = np.empty_like(like, dtype=loss.dtype)
        np.copyto(laid, loss)
        loss = laid
    if reduction == "none":
        return loss
    if reduction == "mean":
        return ops.reduce.mean_array(loss)
    return np.asanyarray(sum_array(loss))


# ------------------------------------------------------------------------------- softmax, log_softmax

def softmax(a: Tensor, dim=_NO_DIM, dtype=None) -> Tensor:
    """torch.softmax / Tensor.softmax (dim required)."""
    if dim is _NO_DIM:
        raise TypeError('softmax() missing 1 required positional arguments: "dim"')
    return _softmax(a, dim, dtype, False)


def log_softmax(a: Tensor, dim=_NO_DIM, dtype=None) -> Tensor:
    if dim is _NO_DIM:
        raise TypeError('log_softmax() missing 1 required positional arguments: "dim"')
    return _softmax(a, dim, dtype, True)


def functional_softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    """F.softmax: without a dim, PyTorch's legacy implicit choice (dim 0 for 0-, 1- and 3-d inputs, else 1)."""
    _expect_attr(input, "softmax")
    return _softmax(input, implicit_dim(input, "softmax", _stacklevel) if dim is None else dim, dtype, False)


def functional_log_softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    _expect_attr(input, "log_softmax")
    return _softmax(input, implicit_dim(input, "log_softmax", _stacklevel) if dim is None else dim, dtype, True)


def implicit_dim(a: Tensor, name: str, stacklevel: int) -> int:
    """The dim F.softmax, log_softmax and softmin take without one, with PyTorch's deprecation warning: at the
    script's line that called the function (stacklevel 3), or, from nn.Softmax and its kin (5: a line of
    PyTorch's module code), once per message."""
    message = (f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
               "argument.")
    if stacklevel == 3:
        STATE.warn("UserWarning", message)
    else:
        STATE.warn_python("UserWarning", message)
    return 0 if a._a.ndim in (0, 1, 3) else 1


def _half_softmax(x: np.ndarray, d: int, dims: tuple, log: bool) -> np.ndarray:
    """float16 softmax and log_softmax as PyTorch's kernels compute them, in float from the float16 input
    (checked against PyTorch 2.13 on random 1-d to 3-d tensors):
    - softmax along the last dim: the float32 kernel's lane sums and reciprocal, rounded once;
    - softmax along another dim, while at most 16 elements follow that dim (PyTorch's scalar loop): each exp
      stored as float16 (the output buffer), then divided by the float sum; past that its vector loop takes
      the positions a whole vector covers, dividing the float exps (rounded once), and the scalar loop the
      rest, by a width that depends on the processor: gradcli divides the float exps everywhere, so the last
      positions of a row can differ in the last bit;
    - log_softmax along the last dim: the sum of exps stored as float16, its log too, then x - max - log;
    - log_softmax along another dim: the float32 result, rounded once."""
    half = x.dtype          # float16 (bfloat16 alike)
    x32 = x.astype(np.float32)
    shifted = x32 - np.maximum.reduce(x32, axis=dims, keepdims=True)
    e = elementary.exp(shifted)
    last = not x.ndim or d == x.ndim - 1
    if not log:
        if last:            # the float32 kernel's own sum and reciprocal
            s = vecorder.lane_sum_along(e, x.ndim - 1) if x.ndim else e
            return contiguous((e * (np.float32(1) / s)).astype(half))
        s = vecorder.seq_sum(e, d)
        if math.prod(x.shape[d + 1:]) <= 16:
            e = e.astype(half).astype(np.float32)
        return contiguous((e / s).astype(half))
    if last:
        s = vecorder.lane_sum_along(e, x.ndim - 1) if x.ndim else e
        log_sum = elementary.log(s.astype(half).astype(np.float32)).astype(half).astype(np.float32)
        return contiguous((shifted - log_sum).astype(half))
    s = vecorder.seq_sum(e, d)
    return contiguous((shifted - elementary.log(s)).astype(half))


def softmax_values(x: np.ndarray, d: int, log: bool) -> np.ndarray:
    """The softmax (or log_softmax) kernels' values along dim d of a float array, contiguous."""
    dims = (d,) if x.ndim else ()
    if x.size == 0 or x.__class__ is not np.ndarray:       # (a meta array: its shape and dtype)
        return x.copy()
    if x.dtype.char in "eE":
        return _half_softmax(x, d, dims, log)
    # (no np.errstate here: a session computes inf and nan silently, np.seterr(all="ignore"))
    shifted = x - np.maximum.reduce(x, axis=dims, keepdims=True)
    e = elementary.exp(shifted)
    last = d == x.ndim - 1 or not x.ndim
    if x.dtype.itemsize < 4:
        s = np.add.reduce(e, axis=dims, keepdims=True, dtype=x.dtype)
    else:       # the kernels' sums: vector lanes along the last dim, one running sum per position else
        s = vecorder.lane_sum_along(e, x.ndim - 1) if last else vecorder.seq_sum(e, d)
    if log:
        out = shifted - elementary.log(s)         # x - max - log(sum), in that order
    elif last:
        out = e * (x.dtype.type(1) / s)        # the last-dim kernel multiplies by the reciprocal
    else:
        out = e / s
    return contiguous(out)     # the kernels write a contiguous result, whatever the input's layout


def _softmax(a: Tensor, dim, dtype, log: bool) -> Tensor:
    name = "log_softmax" if log else "softmax"
    d = wrap_dim(reduce._int_dim(dim, name), a._a.ndim)
    if dtype is not None:
        a = ops.to_dtype(a, dtype)
    x = a._a
    if x.dtype.kind not in "fV" and x.size:      # an empty tensor is returned before any kernel is chosen
        kernel = name + ("_lastdim" if x.ndim == 0 or d == x.ndim - 1 else "") + "_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_word(x)}'")
    dims = (d,) if x.ndim else ()
    out = softmax_values(x, d, log)
    return apply(LOG_SOFTMAX if log else SOFTMAX, out, (a,), (given_dims(dims, dim),))


# ----------------------------------------------------------------------------- regression losses

@autocast_policy("fp32")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    _expect_attr(target, "size")
    _expect_attr(input, "size")
    _warn_size_mismatch(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted_loss(ops.power(ops.sub(a, b), 2), input, weight, reduction)
    reduction = _reduction(None, None, reduction)
    x, y = operands(a, b)
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{type_word(x)}'")
    diff = x - y
    out = _reduce_array(diff * diff, reduction, x)
    return apply(MSE_LOSS, out, (a, b), (reduction, x.size), (a._a, b._a))     # (saved as given: _common)


@autocast_policy("fp32")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    _expect_attr(target, "size")
    _expect_attr(input, "size")
    _warn_size_mismatch(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted_loss(ops.abs(ops.sub(a, b)), input, weight, reduction)
    return _apply_reduction(ops.abs(ops.sub(a, b)), _reduction(None, None, reduction))


def _warn_size_mismatch(input: Tensor, target: Tensor):
    if target.shape != input.shape and STATE.warn is not None:
        STATE.warn("UserWarning", f"Using a target size ({target.shape}) that is different to the input size "
                   f"({input.shape}). This will likely lead to incorrect results due to broadcasting. Please ensure "
                   "they have the same size.")


@autocast_policy("fp32")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0) -> Tensor:
    """F.smooth_l1_loss: l1_loss's ops when beta is 0, else a SmoothL1LossBackward0 node."""
    _expect_attr(target, "size")
    _expect_attr(input, "size")
    _warn_size_mismatch(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast_pair(input, target)
    if beta == 0.0:
        return _apply_reduction(ops.abs(ops.sub(a, b)), _reduction(None, None, reduction))
    reduction = _reduction(None, None, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, y = operands(a, b)
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"smooth_l1_cpu\" not implemented for '{type_word(x)}'")
    dt = x.dtype.type
    z = np.abs(x - y)
    with np.errstate(invalid="ignore", over="ignore"):
        loss = np.where(z < dt(beta), dt(0.5) * z * z / dt(beta), z - dt(0.5) * dt(beta)).astype(x.dtype)
    return apply(SMOOTH_L1, _reduce_array(loss, reduction, x), (a, b), (reduction, x.size, beta),
                 (a._a, b._a))      # (saved as given: _common)


@autocast_policy("fp32")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None) -> Tensor:
    _expect_attr(target, "size")
    _expect_attr(input, "size")
    _warn_size_mismatch(input, target)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        if weight.shape != input.shape:
            raise ValueError("Weights and input must have the same size.")
        weighted = ops.mul(_huber(a, b, "none", delta), weight)
        if reduction == "none":
            return weighted
        if reduction == "sum":
            return ops.reduce_sum(weighted)
        if reduction == "mean":
            return ops.mean(weighted)
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return _huber(a, b, _reduction(None, None, reduction), delta)


def _huber(a: Tensor, b: Tensor, reduction: str, delta) -> Tensor:
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, y = operands(a, b)
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"huber_cpu\" not implemented for '{type_word(x)}'")
    dt = x.dtype.type
    d = dt(delta)
    z = np.abs(x - y)
    with np.errstate(invalid="ignore", over="ignore"):
        loss = np.where(z < d, dt(0.5) * z * z, d * (z - dt(0.5) * d)).astype(x.dtype)
    given = a._a
    if given.dtype != loss.dtype and given.dtype.kind in "fV":     # (written into a tensor like the input's)
        loss = loss.astype(given.dtype)
        x = given
    # (self and target saved as given: huber_loss_backward's kernel takes one dtype, PyTorch's error otherwise)
    return apply(HUBER, _reduce_array(loss, reduction, x), (a, b), (reduction, x.size, delta), (a._a, b._a))


_KL_MEAN_WARNING = ("reduction: 'mean' divides the total loss by both the batch size and the support size.'batchmean' "
                    "divides only by the batch size, and aligns with the KL div math definition.'mean' will be "
                    "changed to behave the same as 'batchmean' in the next major release.")


@autocast_policy("fp32")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False) -> Tensor:
    """F.kl_div as PyTorch composes it: exp(target) * (target - input) for log targets, else
    xlogy(target, target) - target * input; then the reduction ('batchmean': the sum over the batch size)."""
    if size_average is not None or reduce is not None:
        enum = legacy_reduction(size_average, reduce, reduction)
    else:
        if reduction == "mean" and STATE.warn is not None:
            STATE.warn("UserWarning", _KL_MEAN_WARNING)
        enum = "sum" if reduction == "batchmean" else _reduction(None, None, reduction)
    reduced = kl_div_enum(input, target, enum, log_target)
    if reduction == "batchmean" and input._a.ndim != 0:
        reduced = ops.div(reduced, input._a.shape[0])
    return reduced


def kl_div_enum(input, target, enum: str, log_target) -> Tensor:
    """torch.kl_div's own work (F.kl_div's after its reduction's checks and warning)."""
    _expect_tensor(input, "kl_div", "input", 1)
    _expect_tensor(target, "kl_div", "target", 2)
    if log_target.__class__ is not bool:
        raise TypeError(f"kl_div(): argument 'log_target' must be bool, not {type_name(log_target)}")
    x, t = input._a, target._a
    if x.dtype.kind not in "fcV" or t.dtype.kind not in "fcV":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = ops.mul(ops.exp(target), ops.sub(target, input))
    else:
        if target.requires_grad and STATE.recording:
            raise NotImplementedError("kl_div's gradient with respect to a target that is not a log (xlogy) is not "
                                      "available in gradcli")
        with np.errstate(invalid="ignore", divide="ignore"):
            xlogy = np.where(t == 0, t.dtype.type(0), t * elementary.log(t)).astype(t.dtype)
        out = ops.sub(Tensor(xlogy), ops.mul(target, input))
    return _apply_reduction(out, enum)


def _weighted_loss(errors: Tensor, input: Tensor, weight, reduction: str) -> Tensor:
    """mse_loss / l1_loss with `weight=`: PyTorch computes these in Python, from recorded ops."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = ops.mul(errors, weight)
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return ops.reduce_sum(weighted)
    if reduction == "mean":
        return ops.div(ops.reduce_sum(weighted), ops.reduce_sum(weight))
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


# ------------------------------------------------------------------------------ classification losses

def _expect_int(value, fn: str, arg: str, position: int) -> None:
    """An `int` parameter of one of PyTorch's C++ functions, as its parser reads it (the type, then 64 bits)."""
    if value.__class__ is not int:
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be int, not {type(value).__name__}")
    int64_arg(value)


@autocast_policy("fp32")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean") -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)     # (PyTorch's order: this first)
    _expect_tensor(input, "nll_loss_nd", "input", 1)
    _expect_tensor(target, "nll_loss_nd", "target", 2)
    _expect_int(ignore_index, "nll_loss_nd", "ignore_index", 5)
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


def _nll_loss_nd(a: Tensor, target: Tensor, weight, reduction: str, ignore_index: int) -> Tensor:
    x, t = a._a, target._a
    if x.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {x.ndim})")
    if x.ndim != 1 and x.shape[0] != (t.shape[0] if t.ndim else 0):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    if x.ndim > 2:
        return _nll_loss_spatial(a, target, weight, reduction, ignore_index)
    if t.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x.ndim == 1 and t.ndim == 1 and t.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}")
    classes = x.shape[-1]
    w = None
    if weight is not None:
        w = weight._a
        if w.ndim != 1 or w.size != classes:
            raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes "
                               f"but got weight tensor of shape: {_size_list(w.shape)}")
    _check_nll_dtypes(x, t, w, "nll_loss_out_frame")
    out, key, picked_w, total = _nll_forward(x, t.astype(np.int64).reshape(-1), w, reduction, ignore_index)
    return apply(NLL_LOSS, out, (a,), (x.shape, key, picked_w, reduction, float(total), t, w, ignore_index))


def _nll_kernel(a: Tensor, t: np.ndarray, w, reduction: str, ignore_index: int) -> Tensor:
    """The 1-d and 2-d nll_loss kernel on a checked input, target array and weight array (or None), for the
    formulas (the forward above writes it out: a call per training step saved)."""
    x = a._a
    out, key, picked_w, total = _nll_forward(x, t.astype(np.int64).reshape(-1), w, reduction, ignore_index)
    return apply(NLL_LOSS, out, (a,), (x.shape, key, picked_w, reduction, float(total), t, w, ignore_index))


def _check_nll_dtypes(x: np.ndarray, t: np.ndarray, w, kernel: str):
    if t.dtype != np.int64 and t.dtype != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {type_word(t)}")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_word(x)}'")
    if w is not None and w.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {type_word(x)} but found {type_word(w)}")
    if t.dtype == np.uint8 and kernel == "nll_loss2d_forward_out_frame":
        raise RuntimeError("expected scalar type Long but found Byte")     # (its kernel reads the target as int64)


def _nll_loss_spatial(a: Tensor, target: Tensor, weight, reduction: str, ignore_index: int) -> Tensor:
    """nll_loss_nd beyond 2 dimensions: nll_loss2d on 4-d inputs; other inputs viewed as (N, C, 1, -1) and
    their targets as (N, 1, -1), an unreduced loss viewed back to (N, d1, ...)."""
    x, t = a._a, target._a
    if x.ndim == 4:
        return _nll_loss2d_checked(a, t, weight, reduction, ignore_index)
    n, c = x.shape[0], x.shape[1]
    out_size = (n,) + x.shape[2:]
    if t.shape[1:] != x.shape[2:]:
        raise RuntimeError(f"Expected target size {_size_list(out_size)}, got {_size_list(t.shape)}")
    flat = (n, c, 1, -1) if x.size else (n, c, 1, math.prod(x.shape[2:]))
    viewed = ops.view(a, flat) if x.size else ops.reshape(a, flat)
    out = _nll_loss2d_checked(viewed, t.reshape(n, 1, -1), weight, reduction, ignore_index)
    return ops.view(out, out_size) if reduction == "none" else out


def _nll_loss2d_checked(a: Tensor, t: np.ndarray, weight, reduction: str, ignore_index: int) -> Tensor:
    """nll_loss2d's checks of a 4-d input and 3-d target, then the kernel."""
    x = a._a
    if t.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{t.ndim}")
    w = None
    if weight is not None:
        w = weight._a
        if w.size != x.shape[1]:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (x.shape[0], x.shape[2], x.shape[3]) != t.shape:
        raise RuntimeError(f"size mismatch (got input: {_size_list(x.shape)} , target: {_size_list(t.shape)}")
    _check_nll_dtypes(x, t, w, "nll_loss2d_forward_out_frame")
    return _nll_loss2d(a, t.astype(np.int64), None if w is None else w.reshape(-1), reduction, ignore_index)


def _nll_loss2d(a: Tensor, t: np.ndarray, w, reduction: str, ignore_index: int) -> Tensor:
    """The nll_loss2d kernel: positions (batch, height, width) in order, as rows of a 2-d nll_loss, whose
    cascade sum runs over the same linear index."""
    x = a._a
    n, c, h, wd = x.shape
    if is_meta(x):                      # the loss's shape alone; its gradient, meta zeros of the input's shape
        from gradcli.engine.meta import meta_full
        out = meta_full((n, h, wd) if reduction == "none" else (), 0, x.dtype)
        empty = np.zeros(0, dtype=np.int64)
        return apply(NLL_LOSS2D, out, (a,), (x.shape, (empty,) * 4, None, reduction, 0.0, t, w, ignore_index))
    rows = np.moveaxis(x, 1, -1).reshape(-1, c)
    out, key, picked_w, total = _nll_forward(rows, t.reshape(-1), w, reduction, ignore_index)
    positions, classes = key if key else (np.zeros(0, dtype=np.int64),) * 2
    spatial = h * wd
    key4 = (positions // spatial, classes, positions % spatial // max(wd, 1), positions % max(wd, 1))
    if reduction == "none":
        out = out.reshape(n, h, wd)
    return apply(NLL_LOSS2D, out, (a,), (x.shape, key4, picked_w, reduction, float(total), t, w, ignore_index))


def _nll_forward(x: np.ndarray, t: np.ndarray, w, reduction: str, ignore_index: int):
    """The CPU kernel: per-sample losses, or their cascade sum (eight levels of partial sums, as
    nll_loss_out_frame accumulates them) over the weight total."""
    classes = x.shape[-1]
    dt = x.dtype.type
    if is_meta(x):                      # the loss's shape alone (no key: its gradient is meta zeros)
        from gradcli.engine.meta import meta_full
        return meta_full((x.shape[0],) if reduction == "none" and x.ndim == 2 else (), 0, x.dtype), (), None, dt(0)
    rows = x.reshape(-1, classes) if classes else x.reshape(t.size, 0)     # (-1 cannot be solved for 0 classes)
    # every target a class (read as unsigned, a negative one is past the classes) and none ignored: one
    # comparison and a count (the smallest and largest target, two reductions, cost twice as much)
    if t.dtype == np.int64 and not np.count_nonzero(t.view(np.uint64) >= classes) and not (
            0 <= ignore_index < classes and np.count_nonzero(t == ignore_index)):
        valid, kept = np.arange(t.size), t
    else:
        bad = (t != ignore_index) & ((t < 0) | (t >= classes))
        if bad.any():
            raise IndexError(f"Target {t[np.argmax(bad)]} is out of bounds.")
        valid = np.nonzero(t != ignore_index)[0]
        kept = t[valid]
    picked_w = w[kept] if w is not None else None
    key = (valid, kept) if x.ndim == 2 else ((kept,) if valid.size else ())
    if x.ndim == 1:
        total = dt(w[t[0]] if w is not None else 1) if valid.size else dt(0)
        value = dt(0) - x[t[0]] * total if valid.size else dt(0)     # the kernel's running total, from 0
        if reduction == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                value = value / total
        return np.asanyarray(value, dtype=x.dtype), key, picked_w, total
    if reduction == "none":
        out = np.zeros(x.shape[0], dtype=x.dtype)
        out[valid] = -rows[valid, t[valid]] * (picked_w if w is not None else dt(1))
        return out, key, picked_w, dt(0)
    if valid.size == x.shape[0]:        # no ignored sample: the same sums, a segment at a time
        value, total = _segment_sums(rows, t, picked_w, dt, valid)
    else:
        value, total = cascade_loop(rows, t, w, ignore_index, dt)
    if reduction == "mean":
        value = dt(value / total)
    return np.asanyarray(value, dtype=x.dtype), key, picked_w, total


_LEVELS = 8


def _power(batch: int) -> int:
    """How many low bits of a sample's index level 0 of the cascade covers (nll_loss_out_frame)."""
    return max(4, (int(batch - 1).bit_length() if batch > 1 else 0) // _LEVELS)


def cascade_loop(rows: np.ndarray, t: np.ndarray, w, ignore_index: int, dt):
    """The loss and weight totals of nll_loss_out_frame, a sample at a time as its loop adds them:
    level 0 adds the samples in order and, after sample b with b's low bits zero, passes its sum up a
    level (and so on up while the next bits are zero too); the levels are added at the end. An ignored
    sample is skipped before any of that."""
    batch = rows.shape[0]
    power = _power(batch)
    mask = (1 << power) - 1
    loss = [dt(0)] * _LEVELS
    weights = [dt(0)] * _LEVELS
    count = 0
    for b in range(batch):
        c = t[b]
        if c == ignore_index:
            continue
        count += 1
        if w is not None:
            loss[0] = dt(loss[0] - rows[b, c] * w[c])
            weights[0] = dt(weights[0] + w[c])
        else:
            loss[0] = dt(loss[0] - rows[b, c])
        for j in range(_LEVELS - 1):
            if b & (mask << (j * power)):
                break
            weights[j + 1] = dt(weights[j + 1] + weights[j])
            loss[j + 1] = dt(loss[j + 1] + loss[j])
            weights[j] = loss[j] = dt(0)
    total = dt(count) if w is None else _accumulate(weights, dt)
    return _accumulate(loss, dt), total


def _segment_sums(rows: np.ndarray, t: np.ndarray, picked_w, dt, samples=None):
    """cascade_loop's totals when no sample is ignored, computed a run of samples at a time (a sequential
    float32 sum each), so Python runs once per 2**power samples instead of once per sample."""
    picked = rows[np.arange(rows.shape[0]) if samples is None else samples, t]
    power = _power(rows.shape[0])
    if picked_w is None:
        return _cascade(picked, power, dt, negate=True), dt(rows.shape[0])
    return _cascade(picked * picked_w, power, dt, negate=True), _cascade(picked_w, power, dt)


def _cascade(terms: np.ndarray, power: int, dt, negate: bool = False):
    """cascade_loop's sum of `terms` (one per sample, none ignored). Level 0 is passed up after sample 0
    and after every 2**power samples more, so it only ever holds one run of samples, summed in order:
    the first sample alone, then runs of 2**power (all summed at once, a sequential sum per row of
    np.add.accumulate), then the tail, which stays in level 0. `negate`: the loss's level 0 subtracts
    each term, which gives the negated sum exactly."""
    step = 1 << power
    n = terms.shape[0]
    if n == 0:
        return dt(0)
    runs = (n - 1) // step
    sums = None
    if runs:
        sums = np.add.accumulate(terms[1:1 + runs * step].reshape(runs, step), axis=1, dtype=terms.dtype)[:, -1]
    tail = terms[1 + runs * step:]
    tail = np.add.accumulate(tail, dtype=terms.dtype)[-1] if tail.size else None
    if runs < step:                 # no sample reaches level 2's boundary: see _small_cascade
        return _small_cascade(terms[0], sums, tail, dt, negate)
    mask = step - 1
    levels = _LEVELS
    level = [dt(0)] * levels
    for k, part in enumerate([terms[0]] + sums.tolist()):
        b = k * step
        level[0] = dt(level[0] - part) if negate else dt(level[0] + part)
        for j in range(levels - 1):
            if b & (mask << (j * power)):
                break
            level[j + 1] = dt(level[j + 1] + level[j])
            level[j] = dt(0)
    if tail is not None:
        level[0] = dt(level[0] - tail) if negate else dt(level[0] + tail)
    return _accumulate(level, dt)


def _small_cascade(first, sums, tail, dt, negate: bool):
    """_cascade's result when the runs never reach level 2's boundary (fewer than 2**power runs after
    sample 0), its scalar steps taken as they fall out: the first sample's part is passed up to the top
    level, the runs' sums meet in level 1 (a sequential sum from +0.0: np.add.accumulate behind a
    leading zero), the tail stays in level 0, and the levels are added in order from +0.0, the zero
    levels between changing nothing (a sum from +0.0 is never -0.0)."""
    zero = dt(0)
    level1 = zero
    if sums is not None:
        seq = np.empty(sums.shape[0] + 1, sums.dtype)
        seq[0] = 0
        if negate:
            np.negative(sums, out=seq[1:])
        else:
            seq[1:] = sums
        level1 = np.add.accumulate(seq)[-1]
    level0 = zero if tail is None else (zero - tail if negate else zero + tail)
    top = zero - first if negate else zero + first
    return (zero + level0 + level1) + top


def _accumulate(values, dt):
    total = dt(0)
    for v in values:
        total = dt(total + v)
    return total


@autocast_policy("fp32")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0) -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)     # (PyTorch's order: this first)
    _expect_tensor(input, "cross_entropy_loss", "input", 1)
    _expect_tensor(target, "cross_entropy_loss", "target", 2)
    _expect_int(ignore_index, "cross_entropy_loss", "ignore_index", 5)
    x, t = input._a, target._a
    class_dim = 0 if x.ndim == 1 else 1
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {_cxx_double(label_smoothing)}")
    if x.shape == t.shape:
        if t.dtype.kind not in "fV":
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got {type_word(t)}")
        if x.ndim == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing, class_dim)
    if label_smoothing > 0.0:
        return _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing, class_dim)
    return _nll_loss_nd(_softmax(input, class_dim, None, True), target, weight, reduction, ignore_index)


def _cross_entropy_probabilities(a, target, weight, reduction, label_smoothing, class_dim) -> Tensor:
    classes = a._a.shape[class_dim]
    if weight is not None and (weight._a.ndim != 1 or weight._a.size != classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {classes} classes or no "
                           f"classes but got weight tensor of shape: {_size_list(weight._a.shape)}")
    logp = _softmax(a, class_dim, None, True)
    if label_smoothing > 0.0:
        # C++ arithmetic with numbers: MulBackward1, AddBackward1
        target = arith.mul_scalar(target, 1 - label_smoothing)
        shift = number_operand(target._a, label_smoothing / classes)
        target = arith.with_numbers(arith.ADD_SCALAR, target._a + shift, (target,), (), ())
    product = ops.mul(logp, target)
    if weight is not None:
        product = ops.mul(product, ops.view(weight, tuple(classes if i == class_dim else 1
                                                          for i in range(a._a.ndim))))
    if reduction == "none":
        return ops.neg(ops.reduce_sum(product, class_dim))
    if reduction == "mean" and a._a.size == 0:      # PyTorch fills the empty sum with nan, then negates it
        return ops.neg(ops.fill(ops.reduce_sum(product), math.nan))
    loss = ops.neg(ops.reduce_sum(product))
    if reduction == "sum":
        return loss
    return arith.div_scalar(loss, a._a.size // classes)


def _cross_entropy_smoothed(a, target, weight, reduction, ignore_index, label_smoothing, class_dim) -> Tensor:
    """cross_entropy_loss_label_smoothing: (1 - s) * nll + s / classes * (the loss against uniform targets)."""
    logp = _softmax(a, class_dim, None, True)
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    classes = logp._a.shape[class_dim]
    ignored = target._a == ignore_index
    if weight is not None:
        shape = tuple(classes if i == class_dim else 1 for i in range(logp._a.ndim))
        smooth = ops.neg(ops.reduce_sum(ops.mul(logp, ops.view(weight, shape)), class_dim))
    else:
        smooth = ops.neg(ops.reduce_sum(logp, class_dim))
    smooth = ops.masked_fill(smooth, Tensor(ignored), 0.0)
    if reduction == "mean":
        if weight is not None:
            total = Tensor(np.asanyarray(weight._a[target._a[~ignored].reshape(-1)].sum(dtype=weight._a.dtype)))
        else:
            total = Tensor(np.asanyarray(np.count_nonzero(~ignored), dtype=np.int64))
        smooth = ops.div(ops.reduce_sum(smooth), total)
    elif reduction == "sum":
        smooth = ops.reduce_sum(smooth)
    # PyTorch's C++ `(1 - s) * nll + smooth * (s / classes)` scales the smooth term first (GCC evaluates
    # operator+'s operands right to left): its node is the older one, which orders the double backward's sums
    smooth = arith.mul_scalar(smooth, label_smoothing / classes)
    return ops.add(arith.mul_scalar(nll, 1 - label_smoothing), smooth)


@autocast_policy("fp32")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean") -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)     # (PyTorch's order: this first)
    _expect_attr(target, "size")
    _expect_attr(input, "size")
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    w = _loss_weight(weight, target)
    x, t = input._a, target._a
    if t.dtype != x.dtype:
        raise RuntimeError(f"Found dtype {type_word(t)} but expected {type_word(x)}")
    bad = ~((x >= 0) & (x <= 1)) | ~((t >= 0) & (t <= 1))
    if bad.any():
        first = np.argmax(bad.reshape(-1))
        which = "input" if not 0 <= x.reshape(-1)[first] <= 1 else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")
    dt = x.dtype.type
    with np.errstate(divide="ignore"):
        log_x, log_1mx = np.maximum(elementary.log(x), dt(-100)), np.maximum(elementary.log1p(-x), dt(-100))
        loss = (t - dt(1)) * log_1mx - t * log_x
    if w is not None:
        loss = loss * w
    out = _reduce_array(loss, reduction, x)
    return apply(BCE, out, (input, target), (w, reduction, x.size), (x, t))


def torch_binary_cross_entropy_with_logits(*args, **kwargs) -> Tensor:
    """torch.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction): F's function with the
    reduction as PyTorch's enum (1 mean, 2 sum, anything else none; none when not given, as PyTorch's parser
    reads its default)."""
    from gradcli.engine import signatures
    v = signatures.parsed("torch.binary_cross_entropy_with_logits", args, kwargs, {"reduction": 0})
    input, target = v["input"], v["target"]
    if input._a.shape != target._a.shape:
        arith.add(target.detach(), input.detach())         # PyTorch's broadcast error for shapes that do not fit
        raise NotImplementedError("gradcli does not implement torch.binary_cross_entropy_with_logits of a target "
                                  "that broadcasts to the input")
    reduction = {1: "mean", 2: "sum"}.get(v["reduction"], "none")
    return binary_cross_entropy_with_logits(input, target, v["weight"], reduction=reduction,
                                            pos_weight=v["pos_weight"])


@autocast_policy("fp32")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None) -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)     # (PyTorch's order: this first)
    _expect_attr(target, "size")
    _expect_attr(input, "size")
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    not_differentiable(weight, "binary_cross_entropy_with_logits", "weight")     # before the kernel's checks
    not_differentiable(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    x, t = input._a, target._a
    if x.dtype.kind not in "fV":             # the input's log_sigmoid runs before the target is cast
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{type_word(x)}'")
    log_sig = np.minimum(x, x.dtype.type(0)) - elementary.log1p(elementary.exp(-np.abs(x)))
    pw = w = None
    if pos_weight is not None:
        pw = pos_weight._a
        _check_broadcast(pw.shape, t.shape)
        log_weight = (pw - 1) * t + 1
        _check_in_place(x.shape, log_weight.shape)
        log_sig = (log_sig * log_weight).astype(x.dtype)
    # PyTorch's (1 - target).mul_(input): a bool target fails the subtraction, another integer one the in-place product
    if t.dtype == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if t.dtype.kind not in "fV":
        raise RuntimeError(f"result type Float can't be cast to the desired output type {type_word(t)}")
    loss = ((1 - t) * x).astype(t.dtype)
    loss = (loss - log_sig).astype(t.dtype)
    if weight is not None:
        w = weight._a
        _check_in_place(loss.shape, w.shape)
        loss = (loss * w).astype(t.dtype)
    out = _reduce_array(loss, reduction, x)
    if STATE.inference_seen and needs_grad(input, target):     # the node saves weight and pos_weight too
        for saved in (weight, pos_weight):
            if saved is not None and saved._inference:
                raise RuntimeError(INFERENCE_SAVED_ERROR)
    return apply(BCE_LOGITS, out, (input, target), (w, pw, reduction, x.size), (x, t))


def _check_broadcast(a_shape, b_shape):
    try:
        np.broadcast_shapes(a_shape, b_shape)
    except ValueError:
        raise broadcast_error(a_shape, b_shape) from None


def _check_in_place(out_shape, other_shape):
    """What `out.mul_(other)` demands of other's shape: broadcastable, and no bigger than out."""
    _check_broadcast(out_shape, other_shape)
    shape = np.broadcast_shapes(out_shape, other_shape)
    if shape != tuple(out_shape):
        raise RuntimeError(f"output with shape {_size_list(out_shape)} doesn't match the broadcast shape "
                           f"{_size_list(shape)}")


def _loss_weight(weight, target: Tensor):
    """binary_cross_entropy's `weight`, expanded to the target's size (torch._C._infer_size's checks)."""
    if weight is None:
        return None
    _expect_tensor(weight, "binary_cross_entropy", "weight")
    ts, ws = tuple(target.shape), tuple(weight.shape)
    n = len(ts)
    for i in range(-1, -len(ws) - 1, -1):
        if -i > n or (ws[i] != ts[i] and ws[i] != 1):
            raise RuntimeError(f"Attempting to broadcast a dimension of length {ws[i]} at {i}! Mismatching argument "
                               f"at index 1 had {Size(ws)}; but expected shape should be broadcastable to "
                               f"{_size_list(ts)}")
    return np.broadcast_to(weight._a, ts)


# ---------------------------------------------------------------------------------------------- linear

@autocast_policy("lower_precision_fp")
def linear(input, weight, bias=None) -> Tensor:
    """F.linear as at::linear builds it: addmm for 2-d inputs with a bias, a flattened addmm for other
    contiguous inputs with a bias, else matmul with the transposed weight (plus an in-place add)."""
    _expect_tensor(input, "linear", "input", 1)
    _expect_tensor(weight, "linear", "weight", 2)
    if bias is not None:
        _expect_tensor(bias, "linear", "bias", 3)
    x, w = input._a, weight._a
    if x.ndim == 0 or w.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {x.ndim}D and "
                           f"{w.ndim}D")
    if bias is not None:
        if x.ndim == 2:
            return blas.bias_addmm(bias, input, ops.t(weight))
        if input.is_contiguous() and (x.ndim == 3 or bias._a.ndim == 1):
            rows = math.prod(x.shape[:-1])
            result = blas.bias_addmm(bias, ops.view(input, (rows, x.shape[-1])), ops.t(weight))
            tail = () if w.ndim == 1 else (result._a.shape[1],)
            return ops.view(result, tuple(x.shape[:-1]) + tail)
    out = ops.matmul(input, ops.t(weight))
    if bias is not None:
        out = out.add_(bias)
    return out


def bilinear(input1, input2, weight, bias=None) -> Tensor:
    """F.bilinear as at::bilinear builds it: the inputs flattened to 2-d (views), _trilinear, the result
    viewed to the batch shape, plus the bias."""
    _expect_tensor(input1, "bilinear", "input1", 1)
    _expect_tensor(input2, "bilinear", "input2", 2)
    _expect_tensor(weight, "bilinear", "weight", 3)
    if bias is not None:
        _expect_tensor(bias, "bilinear", "bias", 4)
    x1, x2, w = input1._a, input2._a, weight._a
    b = None if bias is None else bias._a
    if not (x1.dtype == x2.dtype == w.dtype) or (b is not None and b.dtype != x1.dtype):
        names = (("input1", x1), ("input2", x2), ("weight", w)) + ((("bias", b),) if b is not None else ())
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{name}: {linalg.cxx_type(a.dtype)}" for name, a in names))
    if x1.ndim != x2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {x1.ndim} and {x2.ndim}")
    for i in range(x1.ndim - 1):
        if x1.shape[i] != x2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {x1.shape[i]} and "
                               f"{x2.shape[i]}")
    for d in (1, 2):
        if d >= w.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(w.ndim, 1)}, "
                             f"{max(w.ndim, 1) - 1}], but got {d})")
    if x1.shape[-1] != w.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {x1.shape[-1]} but expected "
                           f"{w.shape[1]}")
    if x2.shape[-1] != w.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {x2.shape[-1]} but expected "
                           f"{w.shape[2]}")
    if bias is not None and (bias._a.ndim == 0 or bias._a.shape[0] != w.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias._a.shape[0] if bias._a.ndim else 1} but expected {w.shape[0]}")
    if x1.dtype != w.dtype or x2.dtype != w.dtype:
        raise RuntimeError("expected scalar type Float but found Double" if w.dtype == np.float32
                           else "expected scalar type Double but found Float")
    flat1 = input1.reshape(-1, x1.shape[-1])
    flat2 = input2.reshape(-1, x2.shape[-1])
    out = apply(TRILINEAR, trilinear_array(flat1._a, w, flat2._a), (flat1, weight, flat2))
    out = ops.view(out, tuple(x1.shape[:-1]) + (w.shape[0],))
    return out if bias is None else arith.add(out, bias)


# --------------------------------------------------------------------------------- embedding, one_hot

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False) -> Tensor:
    """F.embedding: the rows of `weight` that `input` names, shaped input.shape + (embedding_dim,)."""
    _expect_tensor(input, "embedding", "indices", 2)
    _expect_tensor(weight, "embedding", "weight", 1)
    idx, w = input._a, weight._a
    # F.embedding's own Python first: padding_idx against weight.size(0) (a 0-d weight has no dim 0)
    if padding_idx is not None and padding_idx != 0:
        if not w.ndim:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        rows = w.shape[0]
        if padding_idx > 0:
            if padding_idx >= rows:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -rows:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = rows + padding_idx
    # then embedding_renorm_ (with max_norm) or embedding itself: the weight's dims, then the indices' type
    if w.ndim != 2:
        raise RuntimeError("'weight' must be 2-D" if max_norm is None else
                           f"Expected 2-dimensional tensor, but got {w.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for embedding_renorm_)")
    if idx.dtype.kind not in "iu" or idx.dtype.itemsize < 4:
        # with max_norm, PyTorch's embedding_renorm_ checks first, the indices as its second argument
        where = "#1 'indices'" if max_norm is None else "#2 'indices'"
        # (the legacy type name, which a bool tensor does not have: PyTorch then shows 'CPUBoolType')
        kind = "CPUBoolType" if idx.dtype == np.bool_ else input.type()
        raise RuntimeError(f"Expected tensor for argument {where} to have one of the following scalar types: "
                           f"Long, Int; but got {kind} instead (while checking arguments for "
                           f"{'embedding' if max_norm is None else 'embedding_renorm_'})")
    rows = w.shape[0]
    if max_norm is not None:        # first, as in PyTorch: its row selection has its own index message
        embedding_renorm_(weight, idx, max_norm, norm_type)
        w = weight._a
    if idx.size and rows == 0:          # its row selection is index_select's, with that check first
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if idx.size and (idx.min() < 0 or idx.max() >= rows):
        raise IndexError("index out of range in self")
    out = w[idx]
    row = EMBEDDING
    if sparse and needs_grad(weight):       # the weight's gradient is a sparse tensor (gradcli.engine.sparse)
        from gradcli.engine import sparse as sparse_tensors
        row = sparse_tensors.EMBEDDING
    return apply(row, out, (weight,), (idx.astype(np.int64), rows, padding_idx, bool(scale_grad_by_freq)))


def embedding_renorm_(weight: Tensor, idx: np.ndarray, max_norm, norm_type) -> None:
    """What F.embedding does first when given max_norm, under no_grad: each row the indices name whose
    norm exceeds max_norm is scaled in place to max_norm / (norm + 1e-7), in PyTorch's arithmetic (the
    norm in the weight's dtype, the scale in double, then rounded to the weight's dtype)."""
    w = weight._a
    weight._version[0] += 1         # an in-place op, whether it changes a row or not
    rows = np.unique(idx)
    # PyTorch selects the rows one by one in sorted order (a negative index counts from the end): the rows
    # before the first index out of range are renormed, then that index is its error
    bad = (rows < -w.shape[0]) | (rows >= w.shape[0])
    first_bad = int(np.argmax(bad)) if bad.any() else None
    failed = rows[first_bad] if first_bad is not None else None
    rows = np.unique(rows[:first_bad] % w.shape[0])
    if rows.size:
        _renorm_rows(w, rows, max_norm, norm_type)
    if first_bad is not None:
        raise IndexError(f"select(): index {failed} out of range for tensor of size "
                         f"[{', '.join(map(str, w.shape))}] at dimension 0")


def torch_embedding_renorm_(*args, **kwargs) -> Tensor:
    """torch.embedding_renorm_(input, indices, max_norm, norm_type): F.embedding's max_norm step alone, in place on
    the rows the indices name; the weight returned."""
    from gradcli.engine import signatures
    from gradcli.engine.state import STATE
    v = signatures.parsed("torch.embedding_renorm_", args, kwargs, {})
    weight, indices = v["input"], v["indices"]
    if indices._a.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, "
                           f"Int; but got {indices.type()} instead (while checking arguments for embedding_renorm_)")
    if weight.requires_grad:
        base = weight._base
        if STATE.recording and base is None and weight.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if STATE.recording and base is not None and base.requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        if STATE.recording or base is not None:
            raise NotImplementedError("gradcli does not implement torch.embedding_renorm_ of a tensor with a history "
                                      "or of a view that requires grad")
    embedding_renorm_(weight, indices._a.reshape(-1), v["max_norm"], v["norm_type"])
    return weight


def _renorm_rows(w: np.ndarray, rows: np.ndarray, max_norm, norm_type) -> None:
    """Scale each of `rows` (distinct, in range) whose norm exceeds max_norm down to it, in place."""
    norms = reduce.vector_norm(Tensor(w[rows]), float(norm_type), dim=1)._a
    over = norms.astype(np.float64) > float(max_norm)
    if np.count_nonzero(over):
        big = rows[over]
        scale = (float(max_norm) / (norms[over].astype(np.float64) + 1e-7)).astype(w.dtype)
        w[big] *= scale[:, None]


def one_hot(input, num_classes=-1) -> Tensor:
    """F.one_hot: int64 zeros with a one at each value's position along a new last dim."""
    tensor = input
    _expect_tensor(tensor, "one_hot", "self", 1)
    num_classes = index_arg(num_classes)
    int_param(num_classes)
    a = tensor._a
    if a.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    inferred = num_classes == -1
    if a.__class__ is not np.ndarray:       # a meta tensor: its classes are data, its shape is all there is
        from gradcli.engine import meta
        if inferred:
            raise RuntimeError(meta.NO_ITEM)
        return Tensor(meta.meta_full(a.shape + (num_classes,), 0, np.int64))
    if inferred:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = (int(a.max()) + 1 + (1 << 63)) % (1 << 64) - (1 << 63)     # max + 1 in int64, as the kernel
    if a.size and a.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if not inferred and a.size and a.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    if num_classes < 0:         # the inferred count wrapped: at::zeros refuses the size
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    budget.check_tensor(a.shape + (num_classes,), 8)     # before allocating: one_hot([10**9]) is 8 GB
    out = np.zeros(a.shape + (num_classes,), np.int64)
    np.put_along_axis(out, a[..., None], 1, axis=-1)
    return Tensor(out)


# ------------------------------------------------------------------------------- normalize, dropout

def normalize(input, p=2.0, dim=1, eps=1e-12, out=None) -> Tensor:
    """input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)."""
    _expect_attr(input, "norm")
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not available in gradcli")
    denom = ops.clamp_min(ops.norm(input, p, dim, keepdim=True), eps)
    return ops.div(input, ops.expand(denom, tuple(input._a.shape)))


def dropout(input, p=0.5, training=True, inplace=False) -> Tensor:
    """F.dropout on the CPU: input * (bernoulli(1 - p) / (1 - p)), the mask drawn from the default generator
    in the input's memory order, exactly as PyTorch draws it."""
    _expect_tensor(input, "dropout", "input", 1)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _dropout(input, p, training, inplace)


def torch_dropout(input, p=_NO_DIM, train=_NO_DIM) -> Tensor:
    """torch.dropout(input, p, train): both arguments required."""
    missing = [n for n, v in (("p", p), ("train", train)) if v is _NO_DIM]
    if missing:
        raise TypeError(f"dropout() missing {len(missing)} required positional arguments: "
                        + ", ".join(f'"{n}"' for n in missing))
    _expect_tensor(input, "dropout", "input", 1)
    return _dropout(input, p, train, False)


def torch_dropout_(input, p, train) -> Tensor:
    """torch.dropout_(input, p, train): dropout written into the input."""
    _expect_tensor(input, "dropout_", "input", 1)
    return _dropout(input, p, train, True)


def _dropout(a: Tensor, p, training, inplace: bool, feature: bool = False) -> Tensor:
    """dropout, or feature dropout (one draw per sample and channel): PyTorch's _dropout_impl."""
    if p.__class__ is Tensor:       # the parser reads a 0-d tensor without grad as its value
        p = number_arg(p, ("feature_dropout" if feature else "dropout") + ("_" if inplace else ""), "p", 2, "float")
    if not 0 <= p <= 1:             # PyTorch's C++ check, which NaN fails too (even when not training)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {_cxx_double(p)}")
    x = a._a
    if not training or p == 0 or x.size == 0:
        return a
    if p == 1:
        noise = np.zeros((), dtype=x.dtype)
    else:
        shaped = x
        if feature:
            if x.ndim < 2:
                raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
            shaped = np.empty(x.shape[:2] + (1,) * (x.ndim - 2), x.dtype)
        keep = _bernoulli_in_memory_order(shaped, 1 - p)    # drawn before div_ refuses an integer input
        if x.dtype.kind not in "fV":
            raise RuntimeError(f"result type Float can't be cast to the desired output type {type_word(x)}")
        noise = keep.astype(x.dtype) / x.dtype.type(1 - p)
    if inplace:
        return a.mul_(Tensor(noise))
    return ops.mul(a, Tensor(noise))


def native_dropout(*args, **kwargs) -> tuple:
    """torch.native_dropout(input, p, train): (output, mask). Training (train True or None): a bool mask drawn by
    bernoulli_(1 - p) in the input's memory order, output = input * mask * (1 / (1 - p)), the scale a double; else an
    all-True mask and a copy. One NativeDropoutBackward0 node."""
    from gradcli.engine import signatures
    v = signatures.parsed("torch.native_dropout", args, kwargs, {})
    a, p, train = v["input"], float(v["p"]), v["train"]
    x = a._a
    if x.size == 0:             # (PyTorch hands back the input itself, and an empty mask of its dtype)
        return a, Tensor(np.empty(x.shape, x.dtype))
    if train is None or train:
        keep = 1.0 - p
        if not 0 <= keep <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_cxx_double(keep)}")
        scale = _dropout_scale(p, True)
        mask = _bernoulli_in_memory_order(x, keep)       # (empty_like: in the input's layout)
        if x.dtype.kind not in "fV":
            raise RuntimeError(f"result type Float can't be cast to the desired output type {type_word(x)}")
        out = (x * mask).astype(x.dtype) * x.dtype.type(scale)
    else:
        mask, out = np.ones(x.shape, np.bool_), x.copy()
    mask = Tensor(mask)
    return apply(NATIVE_DROPOUT, out, (a,), (mask, p, train is None or bool(train))), mask


def _dropout_scale(p: float, train: bool) -> float:
    """The factor kept elements are scaled by: 1 / (1 - p) in training (0 when p is 1), 1 otherwise."""
    if not train:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def _native_dropout_backward(F, g, mask, scale):
    """native_dropout_backward: grad * mask * scale; under create_graph PyTorch's differentiable form,
    grad * (mask.type_as(grad) * scale)."""
    if F.tensors:
        m = mask._a if mask.__class__ is Tensor else mask
        return F.mul(g, Tensor(m.astype(g._a.dtype) * g._a.dtype.type(scale)))
    m = mask._a if mask.__class__ is Tensor else mask
    return (g * m).astype(g.dtype) * g.dtype.type(scale)


def _native_dropout_jvp(t, mask, scale):
    """The tangent: scale * input_t * mask in training, input_t itself otherwise (scale 1, every element kept)."""
    m = mask._a if mask.__class__ is Tensor else mask
    if scale == 1.0 and m.all():
        return t
    return ops.mul(ops.mul(t, scale), Tensor(m))


# ------------------------------------------------------------------------------------------ prelu

def _prelu_input_grad(g, x, w):
    """_prelu_kernel_backward's first output: grad where x > 0, weight * grad elsewhere (NaN and -0.0 too)."""
    return np.where(x > 0, g, w * g)


def _prelu_weight_grad(g, x, w):
    """Its second output, elementwise (the engine sums it to the weight's shape): 0 where x > 0, x * grad."""
    return np.where(x > 0, x.dtype.type(0), x * g)


def _prelu_grad(index: int):
    """PreluKernelBackward0's gradient `index` (input, weight): the kernel's values; under create_graph a
    PreluKernelBackwardBackward0 node of them, as PyTorch records."""
    kernel = (_prelu_input_grad, _prelu_weight_grad)[index]

    def formula(F, g, self, weight):
        x, w = _array_of(self), _array_of(weight)
        value = np.asanyarray(kernel(_array_of(g), x, w))
        if isinstance(g, np.ndarray):
            return value
        return apply(PRELU_BACKWARD, value, (g, self, weight), (index,))
    return formula


def _array_of(v):
    return v._a if v.__class__ is Tensor else v


def _prelu_twice(i: int):
    """PreluKernelBackwardBackward0's formulas (derivatives.yaml's, with the other output's gradient absent),
    d/d(grad_output, self, weight) of the input's gradient (index 0) or of the weight's (index 1)."""
    def formula(F, g, grad_output, self, weight, index):
        keep = self >= 0
        if i == 0:          # grad_output
            return F.where(keep, g, g * weight) if index == 0 else F.where(keep, 0, g * self)
        if i == 1:          # self
            return F.zeros_like(g) if index == 0 else F.where(keep, 0, grad_output * g)
        return F.where(keep, 0, grad_output * g) if index == 0 else F.zeros_like(g)        # weight
    return formula


def _prelu_jvp(F, ts, xs, result):
    """where(self >= 0, self_t, weight * self_t + weight_t * self)."""
    x, w = xs
    t_x, t_w = ts
    neg = None if t_x is None else ops.mul(w, t_x)
    if t_w is not None:
        term = ops.mul(t_w, x)
        neg = term if neg is None else ops.add(neg, term)
    if t_x is None:
        t_x = Tensor(np.zeros_like(result._a))
    return ops.where(ops.compare(np.greater_equal, x, 0), t_x, neg)


def _prelu_twice_jvp(F, ts, xs, result, index):
    """_prelu_kernel_backward's tangents (derivatives.yaml's result0/result1): where(self >= 0, grad_output_t,
    grad_output_t * weight + grad_output * weight_t) for the input's gradient, where(self >= 0, 0,
    grad_output * self_t + grad_output_t * self) for the weight's."""
    go, x, w = xs
    t_go, t_x, t_w = (t if t is not None else Tensor(np.zeros_like(v._a)) for t, v in zip(ts, xs))
    keep = ops.compare(np.greater_equal, x, 0)
    if index == 0:
        return ops.where(keep, t_go, ops.add(ops.mul(t_go, w), ops.mul(go, t_w)))
    return ops.where(keep, Tensor(np.zeros((), x._a.dtype)), ops.add(ops.mul(go, t_x), ops.mul(t_go, x)))


PRELU = Op("PreluKernelBackward0", None, ("self", "weight"), (_prelu_grad(0), _prelu_grad(1)),
           inputs=("self", "weight"), fits=True, quiet=True, jvp=_prelu_jvp)
PRELU_BACKWARD = Op("PreluKernelBackwardBackward0", None, ("grad_output", "self", "weight", "index"),
                    tuple(_prelu_twice(i) for i in range(3)), inputs=("grad_output", "self", "weight"), fits=True,
                    quiet=True, jvp=_prelu_twice_jvp)


@autocast_policy("lower_precision_fp")
def prelu(input, weight) -> Tensor:
    """F.prelu / torch.prelu: x where x > 0, weight * x elsewhere, the weight one value or one per channel
    (dim 1), viewed to broadcast (ViewBackward0) before the kernel's node (PreluKernelBackward0)."""
    for name, position, v in (("input", 1, input), ("weight", 2, weight)):
        if v.__class__ is not Tensor:
            raise TypeError(f"prelu(): argument '{name}' (position {position}) must be Tensor, not {type_name(v)}")
    x, w = input._a, weight._a
    if x.dtype != w.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {type_word(x)} and {type_word(w)}")
    if w.size != 1:
        if x.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = x.shape[1] if x.ndim > 1 else 1
        if channels != w.size:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{w.size} and channel size = {channels}.")
    if w.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {w.ndim}")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"prelu_cpu\" not implemented for '{type_word(x)}'")
    if x.ndim != w.ndim:
        shape = [1] * x.ndim
        if x.ndim > 1:
            shape[1] = w.size
        weight = ops.view(weight, tuple(shape))
    wa = weight._a
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.where(x > 0, x, wa * x).astype(x.dtype, copy=False)
    return apply(PRELU, out, (input, weight))


def feature_dropout(input: Tensor, p, training, inplace: bool = False) -> Tensor:
    """torch._VF.feature_dropout: one Bernoulli draw per (sample, channel) pair, in memory order, kept ones
    scaled by 1 / (1 - p) and broadcast over the rest of the dims, as one multiplication (MulBackward0)."""
    return _dropout(input, p, training, inplace, feature=True)


# F.dropout1d/2d/3d: (the ranks taken, the batched rank: any other gets a batch dim for the draw (dropout2d
# adds none), whether other ranks are an error or only a warning)
_FEATURE_RANKS = {1: ((2, 3), 3, True), 2: ((3, 4), None, False), 3: ((4, 5), 5, False)}


def _channel_dropout(n: int, input, p, training, inplace) -> Tensor:
    """F.dropoutNd, which PyTorch writes in Python: its checks and warnings, a batch dim added (and taken off
    again) for the unbatched ranks, then feature dropout."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    _expect_attr(input, "dim")
    ranks, batched, strict = _FEATURE_RANKS[n]
    ndim = input._a.ndim
    if ndim not in ranks:
        if strict:
            raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that dropout1d "
                               "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                               "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
        if STATE.warn is not None:
            spatial = {2: "2 spatial dimensions", 3: "3 spatial dimensions"}[n]
            STATE.warn("UserWarning", f"dropout{n}d: Received a {ndim}-D input to dropout{n}d, which is deprecated and "
                       "will result in an error in a future release. To retain the behavior and silence this warning, "
                       f"please use dropout instead. Note that dropout{n}d exists to provide channel-wise dropout on "
                       f"inputs with {spatial}, a channel dimension, and an optional batch dimension (i.e. "
                       f"{ranks[0]}D or {ranks[1]}D inputs).")
    if n == 2 and ndim == 3 and STATE.warn is not None:
        STATE.warn("UserWarning", "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
                   "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
                   "dim. This behavior will change in a future release to interpret the input as one without a "
                   "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                   "switch to using dropout1d instead.")
    if batched is not None and ndim != batched:      # one sample: a batch dim of 1 for the draw
        if inplace:         # PyTorch's unsqueeze_ / squeeze_ around it: the input itself, written through a view
            feature_dropout(ops.unsqueeze(input, 0), p, training, True)
            return input
        return ops.squeeze(feature_dropout(ops.unsqueeze(input, 0), p, training), 0)
    return feature_dropout(input, p, training, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False) -> Tensor:
    return _channel_dropout(1, input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False) -> Tensor:
    return _channel_dropout(2, input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False) -> Tensor:
    return _channel_dropout(3, input, p, training, inplace)


def _bernoulli_in_memory_order(x: np.ndarray, prob: float) -> np.ndarray:
    """bernoulli_(prob) on empty_like(x): one double uniform per element, compared with prob, drawn in the
    memory order of the mask, whose layout empty_like infers from x's strides (a transposed x gets a
    transposed mask)."""
    if x.__class__ is not np.ndarray:       # a meta tensor's mask: nothing drawn, as PyTorch's meta kernel
        return np.ones_like(x, dtype=np.bool_)
    u = rng.default_generator.rand((x.size,), np.float64) < prob
    if x.flags.c_contiguous:
        return u.reshape(x.shape)
    order = _dense_stride_order(x.shape, x.strides)
    return np.transpose(u.reshape([x.shape[i] for i in order]), np.argsort(order))


def _dense_stride_order(shape, strides) -> list:
    """The dims from outermost to innermost of the layout infer_dense_strides gives empty_like: an insertion
    sort by stride from the innermost dim out, where dims with stride 0 keep their places and equal strides
    put the smaller size inside."""
    def compare(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    return stride_sort(len(shape), compare)[::-1]


def softmax_backward_data(g: Tensor, result: Tensor, dims, log: bool) -> Tensor:
    """_softmax_backward_data / _log_softmax_backward_data as recorded ops (create_graph)."""
    value = softmax_backward_array(g._a, result._a, dims, log)
    row = LOG_SOFTMAX_BACKWARD_DATA if log else SOFTMAX_BACKWARD_DATA
    return apply(row, np.asanyarray(value), (g, result), (dims,))
