"""Order statistics (gradcli.engine.ops.order): every row's backward against finite differences, second
derivatives, and what must hold of the values whatever the input (the engine cases in
tests/engine_cases/order_statistics.txt compare them with PyTorch, ties and NaN included)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import cxxsort
from gradcli.engine.ops import order
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from test_gradcheck import _gradcheck_row, any_, check_node_recorded, check_rows, first_derivative, gradcheck, row_params
from test_ops_reduce import distinct

T = TORCH.members


def _both_outputs(pair):
    low, high = pair
    return low * 2 + high * high


CHECKS = {
    order.MEDIAN: [(lambda a: a.median(), (distinct(2, 3),)), (lambda a: T["median"](a) * 2, (distinct(4),))],
    order.NANMEDIAN: [(lambda a: a.nanmedian(), (distinct(3, 3),))],
    order.MEDIAN_DIM: [(lambda a: a.median(1)[0], (distinct(2, 3),)),
                       (lambda a: T["median"](a, 0, keepdim=True).values, (distinct(4, 2),)),
                       (lambda a: a.median(0)[0], (any_(),))],
    order.NANMEDIAN_DIM: [(lambda a: a.nanmedian(-1)[0], (distinct(3, 4),))],
    order.KTHVALUE: [(lambda a: a.kthvalue(2, 1)[0], (distinct(2, 3),)),
                     (lambda a: T["kthvalue"](a, 3, 0, True).values, (distinct(4, 2),))],
    order.MODE: [(lambda a: a.mode(1)[0], (distinct(2, 3),)), (lambda a: T["mode"](a, 0)[0], (distinct(3, 2),))],
    order.AMINMAX: [(lambda a: _both_outputs(T["aminmax"](a)), (distinct(2, 3),)),
                    (lambda a: _both_outputs(a.aminmax(dim=1, keepdim=True)), (distinct(3, 4),)),
                    (lambda a: T["aminmax"](a, dim=0).max, (distinct(3, 2),))],
    order.CUMMAX: [(lambda a: a.cummax(1)[0], (distinct(2, 4),)), (lambda a: T["cummax"](a, 0).values, (distinct(3, 2),))],
    order.CUMMIN: [(lambda a: a.cummin(-1)[0], (distinct(3, 4),))],
    order.LOGCUMSUMEXP: [(lambda a: a.logcumsumexp(1), (any_(2, 4),)), (lambda a: T["logcumsumexp"](a, 0), (any_(3, 2),)),
                         (lambda a: a.logcumsumexp(0), (any_(),))],
}

SECOND = [
    ("median_dim", lambda a: a.median(1)[0] * a.sum(), (distinct(2, 3),)),
    ("median", lambda a: a.median() * a, (distinct(5),)),
    ("kthvalue", lambda a: a.kthvalue(2, 0)[0] * a.sum(), (distinct(3, 2),)),
    ("aminmax", lambda a: _both_outputs(a.aminmax(dim=0)) * a.sum(), (distinct(3, 2),)),
    ("cummax", lambda a: a.cummax(1)[0] * a, (distinct(2, 3),)),
    ("logcumsumexp", lambda a: a.logcumsumexp(1), (any_(2, 3),)),
    ("logcumsumexp_mixed_signs", lambda a: a.logcumsumexp(0) * a, (any_(4),)),
    ("quantile", lambda a: T["quantile"](a * a, 0.3, dim=1), (distinct(2, 4),)),
]


@pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in CHECKS.items()))
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _gradcheck_row)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)


@pytest.mark.parametrize("name, fn, arrays", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative_matches_finite_differences(name, fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


def test_quantile_composes_pytorchs_ops_and_is_differentiable_in_both_inputs():
    """q requiring grad: weights = ranks - ranks_below then has a node, so lerp runs out of place."""
    gradcheck(lambda a, q: T["quantile"](a, q, dim=0), distinct(5, 2), np.array([0.15, 0.6]))


# ------------------------------------------------------------------------------------- value properties

R = np.random.RandomState(5)


@pytest.mark.parametrize("shape, dim", [((7,), 0), ((4, 9), 1), ((6, 5), 0), ((3, 4, 5), -1)])
def test_median_is_the_lower_middle_of_each_sorted_row(shape, dim):
    x = R.randint(0, 4, size=shape).astype(np.float32)
    values, indices = order.median(Tensor(x), dim)
    n = x.shape[dim]
    assert np.array_equal(values._a, np.take(np.sort(x, axis=dim), (n - 1) // 2, axis=dim))
    assert np.array_equal(np.take_along_axis(x, np.expand_dims(indices._a, dim), dim).squeeze(dim), values._a)


@pytest.mark.parametrize("k", [1, 2, 5, 9])
def test_kthvalue_is_the_kth_of_the_sorted_row_and_its_index_holds_it(k):
    x = R.randint(0, 3, size=(5, 9)).astype(np.float64)
    values, indices = order.kthvalue(Tensor(x), k)
    assert np.array_equal(values._a, np.sort(x, axis=1)[:, k - 1])
    assert np.array_equal(np.take_along_axis(x, indices._a[:, None], 1)[:, 0], values._a)


def test_quick_select_leaves_every_position_in_order():
    """PyTorch's quickselect partitions: at its end everything left of k is <= the k-th, everything right >=."""
    for n in (2, 3, 7, 16, 33):
        keys = R.randint(0, 4, size=n).astype(float).tolist()
        for k in range(n):
            chosen = order._quick_select(list(keys), k)
            assert keys[chosen] == sorted(keys)[k]


def test_mode_picks_the_smallest_most_frequent_value():
    x = np.array([[3, 1, 3, 1, 2], [0, 5, 5, 0, 5]])
    values, indices = order.mode(Tensor(x))
    assert values._a.tolist() == [1, 5]
    assert [x[r, i] for r, i in enumerate(indices._a.tolist())] == [1, 5]


def test_running_extremes_match_numpys_accumulate():
    x = R.randn(4, 6)
    assert np.array_equal(order.cummax(Tensor(x), 1)[0]._a, np.maximum.accumulate(x, axis=1))
    assert np.array_equal(order.cummin(Tensor(x), 0)[0]._a, np.minimum.accumulate(x, axis=0))


def test_logcumsumexp_accumulates_in_double():
    """float32 input, a double running value (PyTorch's CPU accumulation type), each step rounded to float32."""
    x = R.randn(3, 200).astype(np.float32) * 4
    out = order.logcumsumexp(Tensor(x), 1)._a
    wide = order.logcumsumexp(Tensor(x.astype(np.float64)), 1)._a
    assert out.dtype == np.float32 and np.array_equal(out, wide.astype(np.float32))


@pytest.mark.parametrize("mode", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_agrees_with_numpy_on_every_interpolation(mode):
    x = R.randn(6, 11)
    q = np.array([0.0, 0.1, 0.33, 0.5, 0.9, 1.0])
    got = order.quantile(Tensor(x), Tensor(q), 1, interpolation=mode)._a
    assert np.allclose(got, np.quantile(x, q, axis=1, method=mode), rtol=0, atol=1e-12)


def test_nanmedian_of_a_row_of_nans_is_where_nth_element_leaves_it():
    queue = list(range(40))
    cxxsort.nth_element(queue, 0, lambda i, j: False)
    values, indices = order.nanmedian(Tensor(np.full((2, 40), np.nan)), 1)
    assert indices._a.tolist() == [queue[0]] * 2 and np.isnan(values._a).all()
