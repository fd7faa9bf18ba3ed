"""Reductions and torch.nn.functional: every row's backward against finite differences, second derivatives of
the smooth ones, the forward kernels PyTorch computes its own way (cumulative sums in double, dropout's
bernoulli stream, nll_loss's cascade sum), return_types, and PyTorch's error messages word for word."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import error_line, run_script
from gradcli.engine import autograd, ops, rng
from gradcli.engine.factories import tensor
from gradcli.engine.backward import grad
from gradcli.engine.ops import arith, blas, nn, reduce, sorting
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from test_gradcheck import _gradcheck_row, _leaf, any_, check_node_recorded, check_rows, first_derivative, gradcheck, pos, row_params

F = TORCH.members["nn"].members["functional"].members
T = TORCH.members
R = np.random.RandomState(11)


def distinct(*shape):
    """Values far enough apart that no small step changes which one is the largest (max, amax, inf-norm)."""
    n = int(np.prod(shape))
    return (R.permutation(n) * 0.5 - n / 4 + R.uniform(-0.1, 0.1, size=n)).reshape(shape)


def probs(*shape):
    """Values inside (0, 1), away from the ends: binary cross entropy inputs and targets."""
    return R.uniform(0.15, 0.85, size=shape)


def with_zero(*shape):
    a = any_(*shape)
    a.reshape(-1)[1] = 0.0
    return a


def _const(a):
    return Tensor(np.array(a, dtype=np.float64))


TARGET = tensor([2, 0, 1])
TARGET3 = tensor([[0, 2, 1, -100], [1, 1, 0, 2]])
TARGET4 = tensor([[[0, 2], [1, 1]], [[2, 0], [1, -100]]])
WEIGHT = _const([0.5, 2.0, 1.5])

# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
def _through_softmax_backward(a, log=False):
    """The gradient of (softmax(a) * a).sum() as a function of a: runs the backward-data op with both of
    its inputs requiring grad, so its own backward rows are exercised."""
    with autograd.enable_grad():
        x = a if a.requires_grad else _leaf(a._a)
        s = x.log_softmax(0) if log else x.softmax(0)
        (g,) = grad((s * x).sum(), x, create_graph=True)
    return g


def away_from_zero(*shape):
    """Values of both signs at least 0.2 from 0, where prelu's slope changes."""
    v = R.uniform(0.2, 1.0, size=shape) * np.where(R.uniform(size=shape) < 0.5, -1.0, 1.0)
    return v


def _prelu_twice(wrt: int):
    """The create_graph gradient of sum(prelu(x, w)^3) with respect to x (wrt 0) or w (wrt 1), as a function of
    both: it records PreluKernelBackwardBackward0 for the input's gradient or for the weight's."""
    def first(x, w):
        with autograd.enable_grad():        # finite differences call it under no_grad
            leaves = [v if v.requires_grad else _leaf(v._a) for v in (x, w)]
            y = F["prelu"](*leaves)
            return grad((y ** 3).sum(), leaves[wrt], create_graph=True)[0]
    return first


def with_nan(*shape):
    """Random values with a NaN in every third place (nansum skips them: their gradient is 0)."""
    a = any_(*shape)
    a.reshape(-1)[::3] = np.nan
    return a


def _both_outputs(pair):
    first, second = pair
    return first * 2 + second * second


CHECKS = {
    # both outputs used: the node runs once with the two gradients (OutputGrads)
    reduce.VAR_MEAN: [(lambda a: _both_outputs(reduce.var_mean(a)), (any_(2, 3),)),
                      (lambda a: _both_outputs(reduce.var_mean(a, 1, keepdim=True)), (any_(2, 3),)),
                      (lambda a: reduce.var_mean(a, 0, correction=0)[1], (any_(3, 2),)),
                      (lambda a: reduce.var_mean(a, (0, -1), unbiased=False)[0], (any_(2, 3),))],
    reduce.STD_MEAN: [(lambda a: _both_outputs(reduce.std_mean(a)), (any_(2, 3),)),
                      (lambda a: _both_outputs(reduce.std_mean(a, 0)), (any_(3, 2),)),
                      (lambda a: reduce.std_mean(a, -1, correction=2)[0], (any_(2, 4),))],
    reduce.NANSUM: [(lambda a: reduce.nansum(a), (any_(2, 3),)), (lambda a: a.nansum(1), (any_(2, 3),)),
                    (lambda a: a.nansum((0, -1), keepdim=True), (any_(2, 3),)), (lambda a: a.nanmean(0), (any_(3, 2),))],
    nn.SOFTMAX_BACKWARD_DATA: [(lambda a: _through_softmax_backward(a), (any_(4),))],
    nn.LOG_SOFTMAX_BACKWARD_DATA: [(lambda a: _through_softmax_backward(a, log=True), (any_(4),))],
    reduce.SUM_DIM: [(lambda a: a.sum(()), (any_(2, 3),)), (lambda a: a.sum(dim=None, keepdim=True), (any_(2, 2),))],
    reduce.MEAN_DIM: [(lambda a: a.mean(()), (any_(3, 2),)), (lambda a: a.mean((0, 1), keepdim=True), (any_(2, 3),))],
    reduce.PROD: [(lambda a: a.prod(), (pos(2, 3),)), (lambda a: a.prod(), (with_zero(2, 3),)),
                  (lambda a: a.prod(), (np.array([[1.5, 0.0], [0.0, 2.0]]),)), (lambda a: a.prod(), (any_(),))],
    reduce.PROD_DIM: [(lambda a: a.prod(1), (any_(2, 3),)), (lambda a: a.prod(0, keepdim=True), (with_zero(3, 2),)),
                      (lambda a: ops.prod(a, -1), (np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]]),))],
    reduce.MAX: [(lambda a: a.max(), (distinct(2, 3),))],
    reduce.MIN: [(lambda a: a.min(), (distinct(3, 2),))],
    reduce.MAX_DIM: [(lambda a: a.max(1)[0], (distinct(2, 3),)),
                     (lambda a: a.max(0, keepdim=True).values, (distinct(3, 2),)),
                     (lambda a: a.max(0)[0], (any_(),))],
    reduce.MIN_DIM: [(lambda a: torch_min(a, -1)[0], (distinct(2, 3),))],
    sorting.SORT: [(lambda a: a.sort(1)[0], (distinct(2, 3),)), (lambda a: a.sort(0, True)[0] * 2, (distinct(3, 2),)),
                   (lambda a: T["msort"](a), (distinct(3, 2),))],
    sorting.SORT_STABLE: [(lambda a: a.sort(dim=-1, stable=True)[0], (distinct(2, 3),))],
    sorting.TOPK: [(lambda a: a.topk(2, 1)[0], (distinct(2, 3),)), (lambda a: a.topk(1, 0, False)[0], (distinct(3, 2),))],
    # max/min(dim)'s, sort's and topk's gradient under create_graph: the values put back at their indices
    reduce.SCATTER: [(lambda a: reduce.scatter_selected(a, (2, 3), reduce._index_key(
        (2, 3), 1, np.array([[2], [0]])), 1), (any_(2, 1),))],
    reduce.AMAX: [(lambda a: a.amax(1), (distinct(2, 3),)), (lambda a: a.amax(), (distinct(3, 2),)),
                  (lambda a: a.amax((0, 1), keepdim=True), (distinct(2, 2),))],
    reduce.AMIN: [(lambda a: a.amin(0), (distinct(2, 3),))],
    reduce.NORM_LEGACY: [(lambda a, b: TORCH.members["nn"].members["functional"].members["pairwise_distance"](a, b),
                          (any_(3, 4), any_(3, 4)))],
    reduce.NORM_WHOLE: [(lambda a: TORCH.members["norm_except_dim"](a, 2, -1), (any_(3, 4),)),
                        (lambda a: TORCH.members["norm_except_dim"](a, 3, -1), (any_(2, 3),))],
    reduce.DIST: [(lambda a, b: reduce.dist(a, b), (any_(2, 3), any_(3))), (lambda a, b: a.dist(b, 1), (any_(3), any_(3))),
                  (lambda a, b: reduce.dist(a, b, float("inf")), (any_(2, 3), any_(2, 3))),
                  (lambda a, b: reduce.dist(a, b, 3.5), (any_(3), any_(2, 3))),
                  (lambda a, b: reduce.dist(a, b, -math.inf), (any_(4), any_(4)))],
    reduce.RENORM: [(lambda a: reduce.renorm(a, 2, 0, 1.0), (any_(3, 4),)), (lambda a: a.renorm(1, 1, 0.8), (any_(2, 3),)),
                    (lambda a: reduce.renorm(a, 3, -1, 0.5), (any_(2, 3, 2),)),
                    (lambda a: reduce.renorm(a, math.inf, 0, 0.5), (any_(2, 3),))],
    reduce.NORM: [(lambda a: a.norm(p=1), (any_(2, 3),)), (lambda a: a.norm(3, dim=1), (any_(2, 3),)),
                  (lambda a: a.norm(0.5, 0, True), (any_(3, 2),)),
                  (lambda a: a.norm(float("inf"), 1), (distinct(2, 3),)),
                  (lambda a: a.norm(float("-inf")), (distinct(2, 3),)), (lambda a: a.norm(1.5) * a.sum(), (any_(3),)),
                  (lambda a: a.norm(-1.0, 1), (any_(2, 2),)), (lambda a: a.norm(0) + a.sum(), (any_(3),)),
                  (lambda a: a.norm(dim=None, keepdim=True), (any_(2, 2),))],
    reduce.STD: [(lambda a: a.std(), (any_(2, 3),)), (lambda a: a.std(1), (any_(2, 3),)),
                 (lambda a: a.std(0, keepdim=True, correction=0), (any_(3, 2),)),
                 (lambda a: a.std(dim=-1), (any_(4),))],
    reduce.VAR: [(lambda a: a.var(), (any_(3, 2),)), (lambda a: a.var((0, 1), False), (any_(2, 2),)),
                 (lambda a: a.var(1, keepdim=True, correction=2), (any_(2, 4),))],
    reduce.LOGSUMEXP: [(lambda a: a.logsumexp(1), (any_(2, 3),)), (lambda a: a.logsumexp((0, 1), True), (any_(2, 2),)),
                       (lambda a: a.logsumexp(0), (any_(),))],
    reduce.CUMSUM: [(lambda a: a.cumsum(1), (any_(2, 3),)), (lambda a: a.cumsum(0), (any_(1, 3),)),
                    (lambda a: a.cumsum(-1), (any_(4),))],
    reduce.CUMPROD: [(lambda a: a.cumprod(1), (any_(2, 3),)), (lambda a: a.cumprod(0), (any_(4),)),
                     (lambda a: a.cumprod(1), (np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.5, 0.0, 3.0]]),))],
    nn.SOFTMAX: [(lambda a: a.softmax(1), (any_(2, 3),)), (lambda a: F["softmax"](a, 0), (any_(3, 2),)),
                 (lambda a: a.softmax(0), (any_(),))],
    nn.LOG_SOFTMAX: [(lambda a: a.log_softmax(-1), (any_(2, 3),)), (lambda a: F["log_softmax"](a, dim=0), (any_(4),))],
    nn.MSE_LOSS: [(lambda a, b: F["mse_loss"](a, b), (any_(2, 3), any_(2, 3))),
                  (lambda a, b: F["mse_loss"](a, b, reduction="sum"), (any_(3), any_(3))),
                  (lambda a, b: F["mse_loss"](a, b, reduction="none"), (any_(2, 2), any_(2))),
                  (lambda a: F["mse_loss"](a, a * 0.5), (any_(3),))],
    nn.PRELU: [(lambda a, w: F["prelu"](a, w), (away_from_zero(2, 3), any_(3))),
               (lambda a, w: F["prelu"](a, w), (away_from_zero(4, 2, 3), any_(1))),
               (lambda a, w: F["prelu"](a, w), (away_from_zero(5), any_())),
               (lambda a, w: F["prelu"](a, w), (away_from_zero(2, 3, 2), any_(3)))],
    nn.PRELU_BACKWARD: [(_prelu_twice(0), (away_from_zero(2, 3), any_(3))),
                        (_prelu_twice(1), (away_from_zero(2, 3), any_(3)))],
    nn.SMOOTH_L1: [(lambda a, b: F["smooth_l1_loss"](a, b), (any_(2, 3), any_(2, 3))),
                   (lambda a, b: F["smooth_l1_loss"](a, b, reduction="sum", beta=0.5), (any_(4), any_(4))),
                   (lambda a, b: F["smooth_l1_loss"](a, b, reduction="none", beta=2.0), (any_(2, 2), any_(2)))],
    nn.HUBER: [(lambda a, b: F["huber_loss"](a, b), (any_(2, 3), any_(2, 3))),
               (lambda a, b: F["huber_loss"](a, b, reduction="sum", delta=0.5), (any_(4), any_(4))),
               (lambda a, b: F["huber_loss"](a, b, reduction="none", delta=2.0), (any_(2, 2), any_(2)))],
    nn.NLL_LOSS: [(lambda a: F["nll_loss"](a, TARGET), (any_(3, 3),)),
                  (lambda a: F["nll_loss"](a, TARGET, reduction="none"), (any_(3, 3),)),
                  (lambda a: F["nll_loss"](a, TARGET, weight=WEIGHT, reduction="sum"), (any_(3, 3),)),
                  (lambda a: F["nll_loss"](a, tensor([2, -100, 1]), weight=WEIGHT), (any_(3, 3),)),
                  (lambda a: F["nll_loss"](a, tensor(1)), (any_(4),)),
                  (lambda a: F["cross_entropy"](a, TARGET), (any_(3, 4),)),
                  (lambda a: F["cross_entropy"](a, TARGET, weight=WEIGHT[:3] * 1, reduction="none"), (any_(3, 3),))],
    nn.NLL_LOSS2D: [(lambda a: F["nll_loss"](a, TARGET4), (any_(2, 3, 2, 2),)),
                    (lambda a: F["nll_loss"](a, TARGET4, weight=WEIGHT, reduction="none"), (any_(2, 3, 2, 2),)),
                    (lambda a: F["nll_loss"](a, TARGET3, weight=WEIGHT), (any_(2, 3, 4),)),
                    (lambda a: F["nll_loss"](a, TARGET3, reduction="sum"), (any_(2, 3, 4),)),
                    (lambda a: F["nll_loss"](a, TARGET3.view(2, 2, 1, 2), reduction="none"), (any_(2, 3, 2, 1, 2),)),
                    (lambda a: F["cross_entropy"](a, TARGET4.clamp(min=0), weight=WEIGHT, ignore_index=1,
                                       label_smoothing=0.2),
                     (any_(2, 3, 2, 2),)),
                    (lambda a: F["cross_entropy"](a, TARGET3, reduction="none"), (any_(2, 3, 4),))],
    nn.BCE: [(lambda a, b: F["binary_cross_entropy"](a, b), (probs(2, 3), probs(2, 3))),
             (lambda a, b: F["binary_cross_entropy"](a, b, weight=WEIGHT, reduction="none"),
              (probs(2, 3), probs(2, 3))),
             (lambda a, b: F["binary_cross_entropy"](a, b, reduction="sum"), (probs(4), probs(4)))],
    nn.BCE_LOGITS: [(lambda a, b: F["binary_cross_entropy_with_logits"](a, b), (any_(2, 3), probs(2, 3))),
                    (lambda a, b: F["binary_cross_entropy_with_logits"](a, b, pos_weight=WEIGHT, reduction="sum"),
                     (any_(2, 3), probs(2, 3))),
                    (lambda a, b: F["binary_cross_entropy_with_logits"](a, b, weight=WEIGHT, reduction="none"),
                     (any_(2, 3), probs(2, 3)))],
    blas.ADDMM: [(lambda x, w, b: F["linear"](x, w, b), (any_(2, 3), any_(4, 3), any_(4))),
                 (lambda x, w, b: F["linear"](x, w, b), (any_(3), any_(2, 3), any_(2))),
                 (lambda x, w, b: F["linear"](x, w, b), (any_(2, 2, 3), any_(2, 3), any_(1))),
                 (lambda x, w, b: F["linear"](x.t(), w, b), (any_(3, 2), any_(2, 3), any_(2))),
                 (lambda c, x, w: T["addmm"](c, x, w, beta=0.5, alpha=-2), (any_(2, 4), any_(2, 3), any_(3, 4))),
                 (lambda c, x, w: T["addmm"](c, x.t(), w.t(), beta=0), (any_(1), any_(3, 2), any_(4, 3)))],
    blas.ADDMV: [(lambda c, m, v: T["addmv"](c, m, v), (any_(2), any_(2, 3), any_(3))),
                 (lambda c, m, v: T["addmv"](c, m, v, beta=2, alpha=0.5), (any_(1), any_(2, 3), any_(3)))],
    blas.ADDR: [(lambda c, u, v: T["addr"](c, u, v), (any_(2, 3), any_(2), any_(3))),
                (lambda c, u, v: T["addr"](c, u, v, beta=-1, alpha=3), (any_(3), any_(2), any_(3)))],
    blas.BADDBMM: [(lambda c, a, b: T["baddbmm"](c, a, b), (any_(2, 2, 3), any_(2, 2, 4), any_(2, 4, 3))),
                   (lambda c, a, b: T["baddbmm"](c, a, b, beta=0.5, alpha=2), (any_(3), any_(2, 2, 4), any_(2, 4, 3)))],
    blas.ADDBMM: [(lambda c, a, b: T["addbmm"](c, a, b), (any_(2, 3), any_(2, 2, 4), any_(2, 4, 3))),
                  (lambda c, a, b: T["addbmm"](c, a, b, beta=3, alpha=-0.5), (any_(1, 3), any_(3, 2, 2),
                                                                              any_(3, 2, 3)))],
    arith.MUL_SCALAR: [(lambda a: F["cross_entropy"](a, TARGET, label_smoothing=0.2), (any_(3, 3),)),
                    (lambda a: F["cross_entropy"](a, TARGET, weight=WEIGHT, label_smoothing=0.3, reduction="none"),
                     (any_(3, 3),))],
    arith.DIV_SCALAR: [(lambda a, b: F["cross_entropy"](a, b), (any_(2, 3), probs(2, 3))),
                    (lambda a, b: F["cross_entropy"](a, b, weight=WEIGHT, label_smoothing=0.1),
                     (any_(2, 3), probs(2, 3)))],
}


def torch_min(a, *args):
    return TORCH.members["min"](a, *args)


@pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in CHECKS.items()))
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _gradcheck_row)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)


# Second derivatives: the create_graph gradient of sum(f(x)^2), checked against finite differences of itself.
SECOND = [
    ("nansum", lambda a: a.nansum(1) * a.sum(), (any_(2, 3),)),
    ("var_mean", lambda a: _both_outputs(reduce.var_mean(a, 1)), (any_(2, 3),)),
    ("std_mean", lambda a: _both_outputs(reduce.std_mean(a)) * a, (any_(2, 3),)),
    ("std_mean_dim", lambda a: _both_outputs(reduce.std_mean(a, 0, keepdim=True)), (any_(3, 2),)),
    ("nanmean", lambda a: a.nanmean(0) * a.sum(), (any_(2, 3),)),
    ("prod", lambda a: a.prod(), (pos(3),)),
    ("prod_dim", lambda a: a.prod(1), (any_(2, 3),)),
    ("prod_one_zero", lambda a: a.prod() * a.sum(), (with_zero(3),)),
    ("prod_dim_zero", lambda a: a.prod(0), (with_zero(2, 2),)),
    ("max_dim", lambda a: a.max(1)[0] * a.sum(), (distinct(2, 3),)),
    ("max", lambda a: a.max() * a, (distinct(3),)),
    ("amax", lambda a: a.amax(0) * a.sum(), (distinct(2, 3),)),
    ("norm2", lambda a: a.norm(dim=1), (any_(2, 3),)),
    ("norm3", lambda a: a.norm(3), (any_(3),)),
    ("norm1", lambda a: a.norm(1) * a, (any_(3),)),
    ("norm_inf", lambda a: a.norm(float("inf")) * a, (distinct(3),)),
    ("norm_half", lambda a: a.norm(0.5, 0), (any_(2, 2),)),
    ("std", lambda a: a.std(), (any_(4),)),
    ("std_dim", lambda a: a.std(1, keepdim=True), (any_(2, 3),)),
    ("var_dim", lambda a: a.var(0, correction=0), (any_(3, 2),)),
    ("logsumexp", lambda a: a.logsumexp(1), (any_(2, 3),)),
    ("cumsum", lambda a: a.cumsum(1) * a, (any_(2, 3),)),
    ("cumprod", lambda a: a.cumprod(0), (any_(3),)),
    ("cumprod_zeros", lambda a: a.cumprod(1), (np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.5, 0.0, 3.0]]),)),
    ("softmax", lambda a: a.softmax(1), (any_(2, 3),)),
    ("log_softmax", lambda a: a.log_softmax(0), (any_(3, 2),)),
    ("mse_loss", lambda a, b: F["mse_loss"](a * a, b), (any_(3), any_(3))),
    ("smooth_l1_loss", lambda a, b: F["smooth_l1_loss"](a * a, b, beta=0.5), (any_(3), any_(3))),
    ("huber_loss", lambda a, b: F["huber_loss"](a * a, b, delta=0.5), (any_(3), any_(3))),
    ("kl_div", lambda a: F["kl_div"](a * a, TARGET * 0.5, reduction="batchmean"), (any_(3),)),
    ("nll_loss", lambda a: F["nll_loss"](a * a, TARGET, weight=WEIGHT), (any_(3, 3),)),
    ("cross_entropy", lambda a: F["cross_entropy"](a, TARGET), (any_(3, 3),)),
    ("nll_loss2d", lambda a: F["nll_loss"](a * a, TARGET4, weight=WEIGHT), (any_(2, 3, 2, 2),)),
    ("nll_loss2d_none", lambda a: F["nll_loss"](a * a, TARGET3, reduction="none"), (any_(2, 3, 4),)),
    ("cross_entropy_nd", lambda a: F["cross_entropy"](a, TARGET3, label_smoothing=0.1), (any_(2, 3, 4),)),
    ("cross_entropy_smoothed", lambda a: F["cross_entropy"](a, TARGET, label_smoothing=0.2), (any_(3, 3),)),
    ("cross_entropy_probs", lambda a, b: F["cross_entropy"](a, b), (any_(2, 3), probs(2, 3))),
    ("bce", lambda a, b: F["binary_cross_entropy"](a, b), (probs(3), probs(3))),
    ("bce_logits", lambda a, b: F["binary_cross_entropy_with_logits"](a, b, pos_weight=WEIGHT),
     (any_(2, 3), probs(2, 3))),
    ("linear", lambda x, w, b: F["linear"](x, w, b), (any_(2, 3), any_(2, 3), any_(2))),
    ("addmm", lambda c, x, w: T["addmm"](c * c, x, w * x.sum(), beta=0.5, alpha=2), (any_(2), any_(2, 3), any_(3, 2))),
    ("addmv", lambda c, m, v: T["addmv"](c, m * m, v, alpha=-1.5), (any_(2), any_(2, 3), any_(3))),
    ("addr", lambda c, u, v: T["addr"](c, u * u, v, beta=2), (any_(2, 3), any_(2), any_(3))),
    ("baddbmm", lambda c, a, b: T["baddbmm"](c, a, b * b, alpha=0.5), (any_(2, 2, 2), any_(2, 2, 3), any_(2, 3, 2))),
    ("addbmm", lambda c, a, b: T["addbmm"](c, a * a, b, beta=0), (any_(2, 2), any_(2, 2, 3), any_(2, 3, 2))),
    ("normalize", lambda a: F["normalize"](a), (any_(2, 3),)),
]




@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


# ------------------------------------------------------------------------------------------ forward kernels

def test_cumsum_and_cumprod_accumulate_in_double_like_pytorchs_cpu_kernel():
    x = np.array([1e8, 1.0, -1e8, 1.0, 3.0], dtype=np.float32)
    out = ops.cumsum(Tensor(x), 0)._a
    assert out.dtype == np.float32
    assert out.tolist() == [1e8, 1e8, 1.0, 2.0, 5.0]          # float32 accumulation would give 0., 1., 4.


def test_integer_reductions_follow_pytorchs_dtypes():
    i = Tensor(np.array([[1, 2], [3, 4]], dtype=np.int32))
    assert ops.prod(i)._a.dtype == np.int64 and ops.cumsum(i, 0)._a.dtype == np.int64
    assert ops.reduce_max(i)._a.dtype == np.int32 and ops.amax(i, 0)._a.dtype == np.int32
    assert ops.logsumexp(i, 1)._a.dtype == np.float32
    assert ops.reduce_all(Tensor(np.array([1, 0], dtype=np.uint8)))._a.dtype == np.uint8
    assert ops.reduce_any(i)._a.dtype == np.bool_


def test_arg_and_dim_extremes_pick_the_first_of_ties_and_propagate_nan():
    x = tensor([[1.0, 3.0, 3.0], [2.0, float("nan"), 2.0]])
    assert ops.argmax(x, 1).tolist() == [1, 1]
    v, i = ops.reduce_min(x, 1)
    assert i.tolist() == [0, 1] and np.isnan(v._a[1])


def test_max_without_dim_shares_the_gradient_between_ties():
    x = _leaf(np.array([[1.0, 5.0, 5.0], [7.0, 7.0, 3.0]]))
    x.max().backward()
    assert x.grad.tolist() == [[0, 0, 0], [0.5, 0.5, 0]]
    y = _leaf(np.array([[1.0, 5.0, 5.0], [7.0, 7.0, 3.0]]))
    y.max(1)[0].sum().backward()                           # with a dim the gradient goes to the index returned
    assert y.grad.tolist() == [[0, 1, 0], [1, 0, 0]]


def test_return_types_print_unpack_and_index_like_pytorch():
    r = tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]).max(dim=1)
    assert repr(r) == str(r) == "torch.return_types.max(\nvalues=tensor([5., 7.]),\nindices=tensor([1, 0]))"
    values, indices = r
    assert len(r) == 2 and r[0] is values and r.values is values and r.indices is indices and r[-1] is indices
    result = run_script("import torch\nm = torch.tensor([[1., 5.], [7., 0.]], requires_grad=True)\n"
                        "v, i = torch.min(m, 0, keepdim=True)\nprint(m.min(0))\nprint(v, i, len(m.max(1)))\n")
    assert result.error is None
    assert result.out == ("torch.return_types.min(\nvalues=tensor([1., 0.], grad_fn=<MinBackward0>),\n"
                          "indices=tensor([0, 1]))\n"
                          "tensor([[1., 0.]], grad_fn=<MinBackward0>) tensor([[0, 1]]) 2\n")


def test_dropout_draws_pytorchs_bernoulli_stream():
    """torch.manual_seed(0); F.dropout(torch.ones(20), 0.5) in PyTorch 2.13 (one double uniform per element)."""
    rng.default_generator.manual_seed(0)
    out = F["dropout"](tensor([1.0] * 20), 0.5)
    assert out.tolist() == [0, 0, 2, 0, 0, 0, 2, 2, 0, 2, 2, 2, 2, 0, 2, 2, 2, 2, 0, 0]


def test_dropout_fills_the_mask_in_memory_order():
    """A transposed input gets its mask in storage order, as empty_like + bernoulli_ give it in PyTorch."""
    rng.default_generator.manual_seed(5)
    t = ops.t(tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    keep = F["dropout"](t, 0.5)._a != 0
    rng.default_generator.manual_seed(5)
    assert np.array_equal(keep, (rng.default_generator.rand((6,), np.float64) < 0.5).reshape(2, 3).T)


def test_dropout_of_an_integer_tensor_draws_before_it_is_refused():
    """PyTorch's bernoulli_ fills the mask before div_ refuses an integer result: the stream moves on either way
    (torch.manual_seed(1); F.dropout(ints) fails; torch.rand(3) then gives these, in PyTorch 2.13)."""
    for f, x, then in ((F["dropout"], tensor([1] * 5), [0.6387, 0.5247, 0.6826]),
                       (F["dropout2d"], Tensor(np.ones((2, 3, 1, 1), np.int64)), [0.6826, 0.3051, 0.4635])):
        rng.default_generator.manual_seed(1)
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            f(x, 0.3)
        assert T["rand"](3).tolist() == pytest.approx(then, abs=6e-5)


def test_dropout_without_training_or_with_p_zero_returns_the_input_itself():
    x = tensor([1.0, 2.0])
    assert F["dropout"](x, 0.0) is x and F["dropout"](x, 0.7, training=False) is x


def test_nll_loss_sums_in_cascade_like_the_cpu_kernel():
    """Eight levels of partial sums (16 samples per level here): a plain float32 running sum would differ."""
    x = np.zeros((40, 1), dtype=np.float32)
    x[0, 0] = -1e8
    x[1:, 0] = -1.0
    out = F["nll_loss"](Tensor(x), Tensor(np.zeros(40, dtype=np.int64)), reduction="sum")
    running = np.float32(0)
    for v in x[:, 0]:
        running = np.float32(running - v)
    assert out.item() == 100000040.0 and running != np.float32(100000040.0)


def test_softmax_and_losses_keep_float32():
    x = tensor([[1.0, 2.0, 3.0], [1.0, -1.0, 0.5]])
    for out in (x.softmax(1), F["cross_entropy"](x, tensor([2, 0])), F["mse_loss"](x, x * 2), F["normalize"](x)):
        assert out._a.dtype == np.float32


# -------------------------------------------------------------------------------------------------- errors

PRE = ("import torch\nimport torch.nn.functional as F\n"
       "x = torch.tensor([[1., 2., 3.], [1., -1., 0.5]], requires_grad=True)\n"
       "y = torch.tensor([[0., 1., 1.], [1., 0., 0.]])\ntgt = torch.tensor([2, 0])\n")

ERRORS = [
    ("torch.tensor([]).max()", "RuntimeError: max(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument."),
    ("torch.tensor([]).argmax()",
     "IndexError: argmax(): Expected reduction dim to be specified for input.numel() == 0."),
    ("torch.zeros(0, 3).max(0)", "IndexError: max(): Expected reduction dim 0 to have non-zero size."),
    ("torch.zeros(0, 3).amax(0)", "IndexError: amax(): Expected reduction dim 0 to have non-zero size."),
    ("torch.tensor([True, False]).argmax()", "RuntimeError: argmax(): does not support bool input"),
    ("x.max(2)", "IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("x.argmax((0, 1))", "TypeError: argmax(): argument 'dim' (position 1) must be int, not tuple"),
    ("x.cumsum()", 'TypeError: cumsum() missing 1 required positional arguments: "dim"'),
    ("torch.cumprod(x)", 'TypeError: cumprod() missing 1 required positional arguments: "dim"'),
    ("x.logsumexp()", 'TypeError: logsumexp() missing 1 required positional arguments: "dim"'),
    ("x.logsumexp(())", "RuntimeError: output with shape [] doesn't match the broadcast shape [1, 1]"),
    ("x.softmax()", 'TypeError: softmax() missing 1 required positional arguments: "dim"'),
    ("torch.tensor([1, 2]).std()", "RuntimeError: std and var only support floating point and complex dtypes"),
    ("torch.tensor([1, 2]).norm()",
     "RuntimeError: linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("x.norm(p='abc')", "RuntimeError: linalg.matrix_norm: Order abc not supported."),
    ("x.norm(p='nuc', dim=1)", "RuntimeError: linalg.matrix_norm: dim must be a 2-tuple. Got 1"),
    ("torch.tensor([1, 2]).softmax(0)",
     "NotImplementedError: \"softmax_lastdim_kernel_impl\" not implemented for 'Long'"),
    ("torch.tensor([[1, 2]]).log_softmax(0)",
     "NotImplementedError: \"log_softmax_kernel_impl\" not implemented for 'Long'"),
    ("F.softmax(x, 1.5)", "TypeError: softmax(): argument 'dim' (position 1) must be int, not float"),
    ("y = x * 1\nz = y.max()\ny.add_(1)\nz.backward()",
     "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
     "operation: [torch.FloatTensor [2, 3]], which is output 0 of Add, is at version 1; expected version 0 "
     "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
     "torch.autograd.set_detect_anomaly(True, check_nan=False)."),
    ("z = x.softmax(1)\nz.add_(1)\nz.sum().backward()",
     "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
     "operation: [torch.FloatTensor [2, 3]], which is output 0 of Softmax, is at version 1; expected version 0 "
     "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
     "torch.autograd.set_detect_anomaly(True, check_nan=False)."),
    ("z = x.prod()\nz.backward()\nz.backward()",
     "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after "
     "they have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
     "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
     "if you need to access saved tensors after calling backward."),
    ("F.mse_loss(x, y, reduction='bad')", "ValueError: bad is not a valid value for reduction"),
    ("F.mse_loss(x, torch.ones(3, 3))",
     "RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("F.mse_loss(torch.tensor([1, 2]), torch.tensor([3, 5]))",
     "NotImplementedError: \"mse_cpu\" not implemented for 'Long'"),
    ("F.mse_loss(x, 3)", "AttributeError: 'int' object has no attribute 'size'"),
    ("F.mse_loss(x, y, weight=torch.ones(3))", "ValueError: Weights and input must have the same size."),
    ("F.l1_loss(torch.tensor([1, 2]), torch.tensor([3, 5]))",
     "RuntimeError: mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
     "dtype. Got: Long"),
    ("F.cross_entropy(x, torch.tensor([3, 0]))", "IndexError: Target 3 is out of bounds."),
    ("F.nll_loss(x, torch.tensor([-1, 0]))", "IndexError: Target -1 is out of bounds."),
    ("F.cross_entropy(x, torch.tensor([2., 0.]))",
     "RuntimeError: expected target dtype to be Long or Byte, but got Float"),
    ("F.cross_entropy(x, torch.tensor([2, 0, 1]))",
     "ValueError: Expected input batch_size (2) to match target batch_size (3)."),
    ("F.nll_loss(x, torch.tensor(1))", "ValueError: Expected input batch_size (2) to match target batch_size (0)."),
    ("F.nll_loss(x[0], torch.tensor([1, 2]))",
     "ValueError: For 1D input, 1D target must have size 1, but got target size: 2"),
    ("F.nll_loss(x, torch.tensor([[1], [2]]))",
     "RuntimeError: 0D or 1D target tensor expected, multi-target not supported"),
    ("F.nll_loss(torch.tensor(1.), torch.tensor(1))", "ValueError: Expected 1 or more dimensions (got 0)"),
    ("F.nll_loss(x, tgt, weight=torch.tensor([1., 2.]))",
     "RuntimeError: weight tensor should be defined either for all 3 classes or no classes but got weight tensor "
     "of shape: [2]"),
    ("F.nll_loss(x, tgt, weight=torch.tensor([1., 2., 3.]).double())",
     "RuntimeError: expected scalar type Float but found Double"),
    ("F.nll_loss(x.detach().long(), tgt)", "NotImplementedError: \"nll_loss_out_frame\" not implemented for 'Long'"),
    ("F.cross_entropy(torch.tensor(1.), torch.tensor(1))",
     "RuntimeError: Expected floating point type for target with class probabilities, got Long"),
    ("F.cross_entropy(x, y, ignore_index=1)",
     "RuntimeError: ignore_index is not supported for floating point target"),
    ("F.cross_entropy(x, tgt, label_smoothing=1.5)",
     "RuntimeError: label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    ("F.cross_entropy(x, y, weight=torch.tensor([1., 2.]))",
     "RuntimeError: cross_entropy: weight tensor should be defined either for all 3 classes or no classes but got "
     "weight tensor of shape: [2]"),
    ("F.cross_entropy([1, 2], tgt)",
     "TypeError: cross_entropy_loss(): argument 'input' (position 1) must be Tensor, not list"),
    ("F.binary_cross_entropy(x, y)", "RuntimeError: all elements of input should be between 0 and 1"),
    ("F.binary_cross_entropy(x.sigmoid(), y * 3)", "RuntimeError: all elements of target should be between 0 and 1"),
    ("F.binary_cross_entropy(x.sigmoid(), y[0])",
     "ValueError: Using a target size (torch.Size([3])) that is different to the input size (torch.Size([2, 3])) "
     "is deprecated. Please ensure they have the same size."),
    ("F.binary_cross_entropy(x.sigmoid(), y.double())", "RuntimeError: Found dtype Double but expected Float"),
    ("F.binary_cross_entropy(x.sigmoid(), y, weight=torch.tensor([1., 2.]))",
     "RuntimeError: Attempting to broadcast a dimension of length 2 at -1! Mismatching argument at index 1 had "
     "torch.Size([2]); but expected shape should be broadcastable to [2, 3]"),
    ("F.binary_cross_entropy_with_logits(x, y[0])",
     "ValueError: Target size (torch.Size([3])) must be the same as input size (torch.Size([2, 3]))"),
    ("F.binary_cross_entropy_with_logits(x, tgt.expand(3, 2).t())",
     "RuntimeError: result type Float can't be cast to the desired output type Long"),
    ("F.binary_cross_entropy_with_logits(x, y, pos_weight=torch.ones(2))",
     "RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1"),
    ("F.linear(x, torch.ones(2, 4))", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)"),
    ("F.linear(x, torch.ones(2, 3), torch.ones(3))",
     "RuntimeError: The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
     "dimension 1.  Target sizes: [2, 2].  Tensor sizes: [3]"),
    ("F.linear(torch.tensor(1.), torch.ones(2))",
     "RuntimeError: both arguments to linear need to be at least 1D, but they are 0D and 1D"),
    ("F.linear(x, torch.ones(2, 3).double())",
     "RuntimeError: expected m1 and m2 to have the same dtype, but got: float != double"),
    ("F.linear(x, torch.ones(2, 3), torch.ones(2).double())",
     "RuntimeError: self and mat2 must have the same dtype, but got Double and Float"),
    ("F.linear(x, torch.ones(3), torch.ones(2))", "RuntimeError: mat2 must be a matrix, got 1-D tensor"),
    ("F.linear(x, torch.ones(2, 3, 3))", "RuntimeError: t() expects a tensor with <= 2 dimensions, but self is 3D"),
    ("F.normalize(torch.tensor([1, 2]), dim=0)",
     "RuntimeError: linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("F.dropout(x, 1.5)", "ValueError: dropout probability has to be between 0 and 1, but got 1.5"),
    ("F.dropout(x, 0.5, inplace=True)",
     "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."),
    ("F.dropout(torch.ones(3, dtype=torch.long), 0.5)",
     "RuntimeError: result type Float can't be cast to the desired output type Long"),
    ("torch.dropout(x, 0.5)", 'TypeError: dropout() missing 1 required positional arguments: "train"'),
    ("F.nll_loss(torch.zeros(2, 3, 4), torch.zeros(2, 3, dtype=torch.long))",
     "RuntimeError: Expected target size [2, 4], got [2, 3]"),
    ("F.nll_loss(torch.zeros(2, 3, 4), torch.zeros(4, dtype=torch.long))",
     "ValueError: Expected input batch_size (2) to match target batch_size (4)."),
    ("F.nll_loss(torch.zeros(2, 3, 2, 2), torch.zeros(2, 4, dtype=torch.long))",
     "RuntimeError: only batches of spatial targets supported (3D tensors) but got targets of dimension: 2"),
    ("F.nll_loss(torch.zeros(2, 3, 2, 2), torch.full((2, 2, 2), 5))", "IndexError: Target 5 is out of bounds."),
    ("F.nll_loss(torch.zeros(2, 3, 2, 1, 2), torch.zeros(2, 2, 2, dtype=torch.long))",
     "RuntimeError: Expected target size [2, 2, 1, 2], got [2, 2, 2]"),
    ("F.nll_loss(torch.zeros(2, 3, 2, 2), torch.zeros(2, 2, 2))",
     "RuntimeError: expected target dtype to be Long or Byte, but got Float"),
    ("F.nll_loss(torch.zeros(2, 3, 2, 2), torch.zeros(2, 2, 2, dtype=torch.long), weight=torch.ones(2))",
     "RuntimeError: weight tensor should be defined either for all or no classes"),
    ("F.cross_entropy(torch.zeros(2, 3, 2, 2), torch.zeros(2, 1, 2, dtype=torch.long))",
     "RuntimeError: size mismatch (got input: [2, 3, 2, 2] , target: [2, 1, 2]"),
    ("F.nll_loss(torch.zeros(2, 3, 2, 2, dtype=torch.long), torch.zeros(2, 2, 2, dtype=torch.long))",
     "NotImplementedError: \"nll_loss2d_forward_out_frame\" not implemented for 'Long'"),
    ("F.smooth_l1_loss(x, y, beta=-1.0)", "RuntimeError: smooth_l1_loss does not support negative values for beta."),
    ("F.huber_loss(x, y, delta=0.0)", "RuntimeError: huber_loss does not support non-positive values for delta."),
    ("F.smooth_l1_loss(torch.tensor([1, 2]), torch.tensor([1, 2]))",
     "NotImplementedError: \"smooth_l1_cpu\" not implemented for 'Long'"),
    ("F.huber_loss(torch.tensor([1, 2]), torch.tensor([1, 2]))",
     "NotImplementedError: \"huber_cpu\" not implemented for 'Long'"),
    ("F.kl_div(torch.tensor([1, 2]), torch.tensor([1, 2]), reduction='sum')",
     "RuntimeError: kl_div: Integral inputs not supported."),
    ("F.kl_div(x, y, reduction='bad')", "ValueError: bad is not a valid value for reduction"),
    ("F.huber_loss(x, y, reduction='bad')", "ValueError: bad is not a valid value for reduction"),
    ("F.huber_loss(x, y, weight=torch.ones(3))", "ValueError: Weights and input must have the same size."),
    ("F.smooth_l1_loss(x, torch.ones(3, 3))",
     "RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("F.kl_div(x, torch.ones(3, 3), reduction='sum')",
     "RuntimeError: The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
]


@pytest.mark.parametrize("code, expected", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages_are_pytorchs(code, expected):
    assert error_line(PRE + code + "\n") == expected


def test_cumsum_and_sum_save_no_tensors_so_a_second_backward_works():
    result = run_script(PRE + "z = (x.cumsum(1) + x.sum(1, keepdim=True)).sum()\nz.backward()\nz.backward()\n"
                              "print(x.grad)\n")
    assert result.error is None
    assert result.out == "tensor([[12., 10.,  8.],\n        [12., 10.,  8.]])\n"


# The new losses through the sandbox: Python's internals stay out of reach, and a broadcast that would need
# more than the memory budget fails as PyTorch's allocator does.
_OUTSIDE = "AttributeError: {} attribute '{}' is outside gradcli's language"


@pytest.mark.parametrize("code, expected", [
    ("F.kl_div.__globals__", "AttributeError: 'function' object has no attribute '__globals__'"),
    ("F.huber_loss.__code__", "AttributeError: 'function' object has no attribute '__code__'"),
    ("torch.nn.SmoothL1Loss().__weakref__", _OUTSIDE.format("'SmoothL1Loss' object", "__weakref__")),
    ("torch.nn.KLDivLoss.forward.__globals__", _OUTSIDE.format("'function' object", "__globals__")),
    ("torch.nn.HuberLoss().forward.__func__", _OUTSIDE.format("'method' object", "__func__")),
    ("F.smooth_l1_loss(torch.zeros(100000, 1), torch.zeros(1, 100000))",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you "
     "tried to allocate 40000000000 bytes. Error code 12 (Cannot allocate memory)"),
    ("F.nll_loss(torch.zeros(100000, 3, 100000), torch.zeros(100000, 100000, dtype=torch.long))",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you "
     "tried to allocate 120000000000 bytes. Error code 12 (Cannot allocate memory)"),
])
def test_losses_keep_to_the_sandbox(code, expected):
    assert error_line(PRE + code + "\n") == expected


def test_nansum_skips_nan_in_sums_order():
    """nansum is sum with NaN counted as 0 (the same bits, in sum's order), and NaN places get no gradient."""
    a = with_nan(40, 70).astype(np.float32)
    x = Tensor(a)
    x.requires_grad = True
    clean = np.where(np.isnan(a), np.float32(0), a)
    assert reduce.nansum(x)._a.tobytes() == Tensor(clean).sum()._a.tobytes()
    assert reduce.nansum(x, 0)._a.tobytes() == Tensor(clean).sum(0)._a.tobytes()
    reduce.nanmean(x, 1).sum().backward()
    counts = (~np.isnan(a)).sum(1, keepdims=True)
    np.testing.assert_array_equal(x.grad._a, np.where(np.isnan(a), 0, np.float32(1) / counts.astype(np.float32)))


def test_var_mean_is_pytorchs_welford():
    """var_mean's mean is Welford's running mean, not mean()'s cascade sum: for float64 they differ in the
    last bits, and over more than the grain size two threads' Welford states are combined."""
    x = np.random.RandomState(3).randn(40000) * 3 + 1
    v, m = reduce.var_mean(Tensor(x))
    mean, m2, k = 0.0, 0.0, 0
    for part in (x[:20000], x[20000:]):
        pm, p2, pk = 0.0, 0.0, 0
        for value in part.tolist():
            pk += 1
            delta = value - pm
            pm += delta / pk
            p2 += delta * (value - pm)
        if k == 0:
            mean, m2, k = pm, p2, pk
        else:
            delta = pm - mean
            n = k + pk
            mean, m2, k = mean + delta * (pk / n), m2 + p2 + delta * delta * k * (pk / n), n
    assert float(m._a) == mean and float(v._a) == m2 / (k - 1)
