"""The margin losses PyTorch computes in kernels of their own (torch._C._nn): soft_margin_loss, multi_margin_loss
and multilabel_margin_loss, one row each, their CPU kernels followed in PyTorch's order of operations.

soft_margin_loss is elementwise (neg, mul by the target, exp, log1p, each rounded in the input's dtype); the two
multi-class losses loop over each sample's classes: their sums run in order, in the input's dtype within a sample
and in double across samples (acc_type), which `_in_order` reproduces with numpy's sequential cumsum. Their
targets (and multi_margin_loss's weight) are not differentiable: PyTorch refuses one that requires grad.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import elementary as cr
from gradcli.engine.forward import no_tangent
from gradcli.engine.ops import arith, elementwise
from gradcli.engine.ops.nn import _loss_norm, _reduce_array, _reduced, _size_list, legacy_reduction
from gradcli.engine.recording import (autocast_policy, TYPE_WORDS, Op, apply, broadcast_error, not_differentiable, number_arg, result_dtype,
                                      tensor_arg, type_word)
from gradcli.engine.tensor import Tensor


def _array(v):
    """A saved tensor argument as a formula receives it (a Tensor under create_graph, else its array)."""
    return v._a if v.__class__ is Tensor else v


def _soft_margin_grad(F, g, self, target, reduction, n):
    """soft_margin_loss_backward: -norm * target * z / (1 + z) * grad, z = exp(-target * self), in its order;
    under create_graph one recorded op (SoftMarginLossBackwardBackward0, edges grad_output and self)."""
    norm = _loss_norm(reduction, n)
    if not F.tensors:
        return soft_margin_backward_array(g, self, _array(target), norm)
    out = soft_margin_backward_array(g._a, self._a, _array(target), norm)
    return apply(SOFT_MARGIN_BACKWARD, out, (g, self), (target, reduction, n))


def _soft_margin_jvp(F, ts, xs, result, target, reduction, n):
    return _reduced(_soft_margin_grad(F, ts[0], xs[0], target, "none", n), reduction, result, n, False)


# soft_margin_loss_backward's own gradients (PyTorch's soft_margin_loss_double_backward and its _grad_output)
def _soft_margin_double_grad_output(F, gg, grad_output, self, target, reduction, n):
    """The kernel on gg for 'none'; else the kernel on ones like grad_output (no edge there), times gg, summed."""
    if reduction == "none":
        return _soft_margin_grad(F, gg, self, target, reduction, n)
    ones = F.ones(_array(grad_output).shape, _array(grad_output).dtype)
    return F.sum(_soft_margin_grad(F, ones, self, target, reduction, n) * gg)


def _soft_margin_double_self(F, gg, grad_output, self, target, reduction, n):
    """(gg * grad_output) * (t * t) * z / ((z + 1) * (z + 1)), z = exp(self * -t), over numel for 'mean'."""
    t = F.const(_array(target))
    z = F.exp(self * -t)
    zplus1 = z + 1
    out = gg * grad_output * (t * t) * z / (zplus1 * zplus1)
    return out / n if reduction == "mean" else out


def _multi_margin_grad(F, g, self, target, p, margin, weight, reduction):
    out = multi_margin_backward_array(_array(g), _array(self), _array(target), int(p), margin,
                                      None if weight is None else _array(weight), reduction)
    if F.tensors:       # PyTorch has no formula for the backward kernel: a node that refuses to run
        return elementwise.not_implemented(out, (g, self), "multi_margin_loss_backward")
    return out


def _multilabel_grad(F, g, self, target, reduction, is_target):
    out = multilabel_backward_array(_array(g), _array(self), _array(target), reduction, _array(is_target))
    if F.tensors:
        return elementwise.not_implemented(out, (g, self), "multilabel_margin_loss_backward")
    return out


# fmt: off
SOFT_MARGIN       = Op("SoftMarginLossBackward0",       None, ("self", "target", "reduction", "n"),
                       (_soft_margin_grad,), saves_tensors=True, versioned=("target",), quiet=True,
                       jvp=_soft_margin_jvp)
SOFT_MARGIN_BACKWARD = Op("SoftMarginLossBackwardBackward0", None, ("grad_output", "self", "target", "reduction", "n"),
                          (_soft_margin_double_grad_output,
                           _soft_margin_double_self), inputs=("grad_output", "self"), fits=True,
                          saves_tensors=True, versioned=("target",), quiet=True, jvp=no_tangent("soft_margin_loss_backward"))
MULTI_MARGIN      = Op("MultiMarginLossBackward0",      None, ("self", "target", "p", "margin", "weight", "reduction"),
                       (_multi_margin_grad,), saves_tensors=True, versioned=("target", "weight"), quiet=True,
                       jvp=no_tangent("multi_margin_loss"))
MULTILABEL_MARGIN = Op("MultilabelMarginLossBackward0", None, ("self", "target", "reduction", "is_target"),
                       (_multilabel_grad,), saves_tensors=True, versioned=("target",), quiet=True,
                       jvp=no_tangent("multilabel_margin_loss_forward"))
# fmt: on


def _in_order(values: np.ndarray, dtype) -> np.ndarray:
    """Sums along the last axis added one after another from zero, in `dtype` (a C loop's `sum += v`)."""
    if values.shape[-1] == 0:
        return np.zeros(values.shape[:-1], dtype)
    return np.cumsum(values, axis=-1, dtype=dtype)[..., -1]


def _empty_reduced(fn: str, reduction: str):
    return NotImplementedError(f"gradcli does not implement {fn} of an empty batch with reduction='{reduction}' "
                               "(PyTorch returns an uninitialised value)")


# ------------------------------------------------------------------------------------------ soft_margin_loss

@autocast_policy("fp32")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """F.soft_margin_loss: log(1 + exp(-target * input)), then the reduction (SoftMarginLossBackward0)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    tensor_arg(input, "soft_margin_loss", "input", 1)
    tensor_arg(target, "soft_margin_loss", "target", 2)
    not_differentiable(target, "soft_margin_loss", "target")
    x, t = input._a, target._a
    # neg_out(output, input).mul_(target).exp_().log1p_(): each step in place, in the input's dtype
    negated = arith.neg_array(x)
    common = result_dtype(input, target).np
    if common != x.dtype and not np.can_cast(common, x.dtype, "same_kind"):
        raise RuntimeError(f"result type {TYPE_WORDS[common.name]} can't be cast to the desired output type "
                           f"{type_word(x)}")
    try:
        shape = np.broadcast_shapes(x.shape, t.shape)
    except ValueError:
        raise broadcast_error(x.shape, t.shape) from None
    if shape != x.shape:
        raise RuntimeError(f"output with shape {list(x.shape)} doesn't match the broadcast shape {list(shape)}")
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"result type Float can't be cast to the desired output type {type_word(x)}")
    product = (negated.astype(common, copy=False) * t.astype(common, copy=False)).astype(x.dtype, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        loss = cr.log1p(cr.exp(product))
    return apply(SOFT_MARGIN, _reduce_array(loss, reduction, x), (input,), (target, reduction, x.size))


def soft_margin_backward_array(g, x: np.ndarray, t: np.ndarray, norm: float) -> np.ndarray:
    """soft_margin_loss_backward's kernel: z = exp(-target * input) in their promoted dtype; the gradient
    target * z (in the input's dtype), times -norm, divided by z + 1, times the incoming gradient."""
    common = result_dtype(Tensor(x), Tensor(t)).np
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        z = cr.exp(arith.neg_array(t).astype(common, copy=False) * x.astype(common, copy=False))
        grad = (t.astype(common, copy=False) * z).astype(x.dtype, copy=False) * x.dtype.type(-norm)
        grad = (grad.astype(common, copy=False) / (z + common.type(1))).astype(x.dtype, copy=False)
        return grad * g


# ----------------------------------------------------------------------------------------- multi_margin_loss

@autocast_policy("fp32")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean") -> Tensor:
    """F.multi_margin_loss: per sample, the mean over the other classes of max(0, margin - x[y] + x[i]) (squared
    for p=2), times weight[y] (MultiMarginLossBackward0)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None:
        if weight.__class__ is not Tensor:
            raise AttributeError(f"'{type(weight).__name__}' object has no attribute 'dim'")
        if weight._a.ndim != 1:
            raise ValueError("weight must be one-dimensional")
    tensor_arg(input, "multi_margin_loss", "input", 1)
    tensor_arg(target, "multi_margin_loss", "target", 2)
    p = number_arg(p, "multi_margin_loss", "p", 3)
    margin = number_arg(margin, "multi_margin_loss", "margin", 4)
    not_differentiable(weight, "multi_margin_loss", "weight")
    x, t = input._a, target._a
    nframe, dim = _frames(x, "multi_margin_loss")
    if not (t.ndim <= 1 and t.size == nframe):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {_size_list(t.shape)}. "
                           f"Input has shape {_size_list(x.shape)}.")
    if weight is not None and weight._a.size != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {_size_list(weight._a.shape)}")
    shape = (nframe,) if reduction == "none" and t.ndim > 0 else ()
    if x.size == 0:
        if shape == ():
            raise _empty_reduced("multi_margin_loss", reduction)
        return apply(MULTI_MARGIN, np.zeros(shape, x.dtype), (input,), (target, p, margin, weight, reduction))
    if x.dtype.kind not in "fV" or x.dtype.char in "eE":
        raise NotImplementedError(f"\"multi_margin_loss_cpu_kernel\" not implemented for '{type_word(x)}'")
    _long_target(t)
    if weight is not None and weight._a.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {type_word(x)} but found {type_word(weight._a)}")
    rows, picked, z = _margins(x, t, nframe, dim, margin)
    h = z if int(p) == 1 else z * z
    if weight is not None:
        h = h * weight._a[picked][:, None]
    per_frame = _in_order(np.where((z > 0) & _others(picked, dim), h, x.dtype.type(0)), x.dtype) / x.dtype.type(dim)
    if shape:
        out = per_frame
    else:
        total = _in_order(per_frame.astype(np.float64), np.float64)
        out = np.asanyarray(total / nframe if reduction == "mean" else total, dtype=x.dtype)
    return apply(MULTI_MARGIN, out.reshape(shape), (input,), (target, p, margin, weight, reduction))


def _frames(x: np.ndarray, fn: str) -> tuple:
    """(samples, classes) of a vector, a matrix or a 0-d input, with PyTorch's check."""
    if not ((x.ndim == 2 and x.shape[1] != 0) or (x.ndim == 1 and x.shape[0] != 0) or x.ndim == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_size_list(x.shape)}")
    if x.ndim <= 1:
        return 1, (1 if x.ndim == 0 else x.shape[0])
    return x.shape[0], x.shape[1]


def _long_target(t: np.ndarray) -> None:
    if t.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {type_word(t)}")


def _others(picked: np.ndarray, dim: int) -> np.ndarray:
    """Per sample, every class but its target."""
    return np.arange(dim)[None, :] != picked[:, None]


def _margins(x: np.ndarray, t: np.ndarray, nframe: int, dim: int, margin):
    """The samples as rows, each one's target class (PyTorch's range check), and margin - x[y] + x[i] in the
    input's dtype, rounded after each operation as the kernel's scalar code is."""
    rows = np.ascontiguousarray(x).reshape(nframe, dim)
    picked = t.reshape(nframe)
    if ((picked < 0) | (picked >= dim)).any():
        raise RuntimeError("target out of range")
    dt = x.dtype.type
    target_values = rows[np.arange(nframe), picked]
    return rows, picked, (dt(margin) - target_values)[:, None] + rows


def multi_margin_backward_array(g, x: np.ndarray, t: np.ndarray, p: int, margin, weight, reduction: str):
    """multi_margin_loss_backward's kernel: g = 1 / (samples * classes) for 'mean', else 1 / classes, as the
    input's dtype; each other class with a positive margin gets g (2 * g * z for p=2, times weight[y]), the
    target class minus their sum (in order); then all times the incoming gradient."""
    nframe, dim = _frames(x, "multi_margin_loss")
    if x.size == 0:
        return np.zeros(x.shape, x.dtype)
    dt = x.dtype.type
    rows, picked, z = _margins(x, t, nframe, dim, margin)
    step = dt(1.0 / (nframe * dim)) if reduction == "mean" else dt(1.0 / dim)
    h = np.full(z.shape, step, x.dtype) if p == 1 else dt(2) * step * z
    if weight is not None:
        h = h * weight[picked][:, None]
    h = np.where((z > 0) & _others(picked, dim), h, dt(0))
    grad = h.copy()
    grad[np.arange(nframe), picked] = dt(0) - _in_order(h, x.dtype)      # (+0 when nothing is taken)
    g = np.asanyarray(g, x.dtype)
    grad = grad * (g.reshape(nframe, 1) if g.ndim else g)
    return grad.reshape(x.shape)


# ------------------------------------------------------------------------------------ multilabel_margin_loss

@autocast_policy("fp32")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """F.multilabel_margin_loss: per sample, the sum over its target classes j (the target's leading entries
    before a -1) and non-target classes i of max(0, 1 - x[j] + x[i]), over the number of classes
    (MultilabelMarginLossBackward0, which saves the 0/1 `is_target` mask)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    tensor_arg(input, "multilabel_margin_loss", "input", 1)
    tensor_arg(target, "multilabel_margin_loss", "target", 2)
    x, t = input._a, target._a
    nframe, dim = _frames(x, "multilabel_margin_loss")
    fits = t.ndim <= 1 and t.size == dim if x.ndim <= 1 else t.ndim == 2 and t.shape == (nframe, dim)
    if not fits:
        raise RuntimeError(f"inconsistent target size: {_size_list(t.shape)} for input of size: "
                           f"{_size_list(x.shape)}")
    shape = () if reduction != "none" or t.ndim <= 1 else (nframe,)
    if x.size == 0:
        if shape == ():
            raise _empty_reduced("multilabel_margin_loss", reduction)
        return apply(MULTILABEL_MARGIN, np.zeros(shape, x.dtype), (input,),
                     (target, reduction, Tensor(np.zeros(t.shape, x.dtype))))
    if t.min() < -1 or t.max() >= dim:
        raise RuntimeError("argument #2 'target' is out of range")
    if x.dtype.kind not in "fV" or x.dtype.char in "eE":
        raise NotImplementedError(f"\"multilabel_margin_loss_forward_out_frame\" not implemented for '{type_word(x)}'")
    _long_target(t)
    rows = np.ascontiguousarray(x).reshape(nframe, dim)
    labels, used, is_target = _labels(t.reshape(nframe, dim), dim)
    z = _label_margins(rows, labels, x.dtype)
    counted = (z > 0) & used[:, :, None] & ~is_target[:, None, :]
    wide = np.float64      # acc_type of float and double on the CPU
    sums = _in_order(np.where(counted, z, x.dtype.type(0)).reshape(nframe, dim * dim).astype(wide), wide)
    per_frame = sums.astype(x.dtype)
    if shape:
        out = per_frame / x.dtype.type(dim)
    else:
        total = _in_order(per_frame.astype(wide), wide) / dim
        out = np.asanyarray(total / nframe if reduction == "mean" else total, dtype=x.dtype)
    mask = Tensor(is_target.astype(x.dtype).reshape(t.shape))
    return apply(MULTILABEL_MARGIN, out.reshape(shape), (input,), (target, reduction, mask))


def _labels(t: np.ndarray, dim: int):
    """Each sample's target classes (its leading entries before the first negative one): the classes as read
    (0 past the end), which of them count, and the 0/1 mask of target classes."""
    used = np.cumprod(t >= 0, axis=1).astype(bool)
    labels = np.where(used, t, 0)
    is_target = np.zeros(t.shape, bool)
    rows = np.broadcast_to(np.arange(t.shape[0])[:, None], t.shape)
    is_target[rows[used], labels[used]] = True
    return labels, used, is_target


def _label_margins(rows: np.ndarray, labels: np.ndarray, dtype) -> np.ndarray:
    """z[n, j, i] = 1 - x[n, label j] + x[n, i] in the input's dtype."""
    picked = np.take_along_axis(rows, labels, axis=1)
    return (dtype.type(1) - picked)[:, :, None] + rows[:, None, :]


def multilabel_backward_array(g, x: np.ndarray, t: np.ndarray, reduction: str, is_target: np.ndarray):
    """multilabel_margin_loss_backward's kernel: g = 1 / (samples * classes) for 'mean', else 1 / classes; each
    counted pair (target j, other class i) adds g to class i and takes it from class j, one step at a time;
    then all times the incoming gradient."""
    nframe, dim = _frames(x, "multilabel_margin_loss")
    if x.size == 0:
        return np.zeros(x.shape, x.dtype)
    dt = x.dtype.type
    rows = np.ascontiguousarray(x).reshape(nframe, dim)
    labels, used, _ = _labels(t.reshape(nframe, dim), dim)
    mask = is_target.reshape(nframe, dim) != 0
    z = _label_margins(rows, labels, x.dtype)
    counted = (z > 0) & used[:, :, None] & ~mask[:, None, :]
    step = dt(1.0 / (nframe * dim)) if reduction == "mean" else dt(1.0 / dim)
    gains = counted.sum(axis=1)                 # class i: + step once per counted pair (i, target j)
    losses = np.zeros((nframe, dim), np.int64)  # class j: - step once per counted pair
    np.add.at(losses, (np.broadcast_to(np.arange(nframe)[:, None], labels.shape), labels), counted.sum(axis=2))
    ladder = np.concatenate(([dt(0)], np.cumsum(np.full(max(int(gains.max()), int(losses.max()), 1), step,
                                                        x.dtype), dtype=x.dtype)))
    grad = np.where(mask, dt(0) - ladder[losses], ladder[gains]).astype(x.dtype)
    g = np.asanyarray(g, x.dtype)
    grad = grad * (g.reshape(nframe, 1) if g.ndim else g)
    return grad.reshape(x.shape)
