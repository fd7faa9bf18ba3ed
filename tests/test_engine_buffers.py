"""The engine's buffer reuse in a plain backward (autograd._sweep's `owned` buffers, MulBackward0's joint
gradient for `x * x`, AccumulateGrad taking an owned gradient as `.grad`): every reuse must be invisible.

Each test would fail if a buffer were written that someone else can see (a user's `gradient=`, a
tensor a hook kept or returned, a retained or captured gradient, a saved tensor, `.grad`), or if a
shortcut rounded differently from PyTorch's order of operations. Values are compared bit for bit
against numpy written in PyTorch's order.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import autograd, elementary
from gradcli.engine.backward import grad
from gradcli.engine.cascade import sum_array
from gradcli.engine.tensor import Tensor


def leaf(a) -> Tensor:
    t = Tensor(np.array(a, copy=True))
    t.requires_grad = True
    return t


def rand(*shape, seed=0, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def same(a, b) -> bool:
    """Bit-for-bit equal values (NaNs in the same places), same dtype and shape."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


# ------------------------------------------------------------------------------------------- x * x

def test_square_gradient_is_g_times_x_added_twice():
    xa, ga = rand(64, 33), rand(64, 33, seed=1)
    x = leaf(xa)
    (x * x).backward(Tensor(ga))
    assert same(x.grad._a, ga * xa + ga * xa)
    assert same(x.grad._a, 2 * (ga * xa))


def test_elementwise_benchmark_expression_matches_pytorchs_order():
    # ((x*x).exp().sum(1).log()).mean(), every backward step written out in PyTorch's formula order
    xa = rand(128, 50, seed=2)
    x = leaf(xa)
    ((x * x).exp().sum(1).log()).mean().backward()
    e = elementary.exp(xa * xa)
    s = sum_array(e, (1,))                                              # SumBackward1's forward, PyTorch's order
    g_log = np.broadcast_to(np.float32(1), s.shape) / s.size            # MeanBackward0
    g_sum = g_log / s                                                   # LogBackward0
    g_exp = np.broadcast_to(g_sum[:, None], e.shape) * e                # SumBackward1, ExpBackward0
    expected = g_exp * xa + g_exp * xa                                  # MulBackward0, both inputs
    assert x.grad._a.dtype == np.float32
    assert same(x.grad._a, expected)


def test_square_in_float64_and_0d():
    xa = rand(10, seed=3, dtype=np.float64)
    x = leaf(xa)
    (x * x).exp().sum().backward()
    g = elementary.exp(xa * xa)
    assert same(x.grad._a, g * xa + g * xa)
    s = leaf(np.float32(3.0))
    (s * s).backward()
    assert same(s.grad._a, np.float32(6.0)) and s.grad._a.shape == ()


def test_square_with_a_gradient_already_waiting_keeps_pytorchs_order():
    # AddBackward0 runs first and leaves g for x; MulBackward0 then adds g*x twice, one at a time:
    # (g + g*x) + g*x, which rounds differently from g + 2*(g*x)
    xa = rand(4096, seed=4)
    x = leaf(xa)
    (x * x + x).sum().backward()
    one = np.float32(1)
    expected = (one + one * xa) + one * xa
    assert not same(expected, one + 2 * xa)         # the data does tell the two orders apart
    assert same(x.grad._a, expected)


def test_two_different_tensors_with_equal_values_are_not_a_square():
    xa = rand(5, 7, seed=5)
    x, y = leaf(xa), leaf(xa)
    (x * y).exp().sum().backward()
    g = elementary.exp(xa * xa)
    assert same(x.grad._a, g * xa) and same(y.grad._a, g * xa)


def test_in_place_square_still_fails_its_version_check():
    # y.mul_(y): one node on both edges, but one saved value is the copy of y's old values and the
    # other is y, changed since; the version check comes before any gradient, as in PyTorch
    x = leaf(np.array([1.0, 2.0, 3.0], np.float32))
    y = x * 1.0
    y.mul_(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    assert x.grad is None


# --------------------------------------------------------------------------- buffers others can see

def test_user_gradient_is_never_modified():
    xa, ga = rand(32, 8, seed=6), rand(32, 8, seed=7)
    x = leaf(xa)
    gt = Tensor(ga.copy())
    y = x * x
    y.backward(gt, retain_graph=True)
    y.backward(gt)
    assert same(gt._a, ga)
    assert same(x.grad._a, (ga * xa + ga * xa) + (ga * xa + ga * xa))
    assert not np.shares_memory(x.grad._a, gt._a)


def test_user_gradient_passed_straight_to_a_leaf_is_copied():
    xa, ga = rand(6, seed=8), rand(6, seed=9)
    x = leaf(xa)
    gt = Tensor(ga.copy())
    x.backward(gt)
    x.backward(gt)
    assert same(gt._a, ga)
    assert same(x.grad._a, ga + ga)
    (x + 0.0).backward(gt)                 # AddBackward0 hands the user's array on unchanged
    assert same(gt._a, ga)
    assert same(x.grad._a, ga + ga + ga)


def test_user_gradient_sent_twice_to_one_input_is_not_the_sum_buffer():
    # x + x: AddBackward0 sends the user's own array down both edges; their sum is a new array
    xa, ga = rand(6, seed=25), rand(6, seed=26)
    x = leaf(xa)
    gt = Tensor(ga.copy())
    (x + x).backward(gt)
    assert same(gt._a, ga)
    assert same(x.grad._a, ga + ga)
    h = Tensor(ga.copy())
    y = x * 2.0
    z = y + y
    z.register_hook(lambda g: h)           # the hook's tensor goes down both edges too
    z.sum().backward()
    assert same(h._a, ga)
    assert same(x.grad._a, (ga + ga) + (ga + ga) * np.float32(2.0))


def test_gradient_kept_by_a_hook_on_the_square_is_not_overwritten():
    xa = rand(16, 16, seed=10)
    x = leaf(xa)
    kept = []
    y = x * x
    y.register_hook(lambda g: kept.append(g))
    z = y.exp().sum()
    z.backward(retain_graph=True)
    z.backward()
    e = elementary.exp(xa * xa)
    assert len(kept) == 2
    for g in kept:                         # ExpBackward's g*result, untouched by MulBackward's doubling
        assert same(g._a, e)
    assert same(x.grad._a, (e * xa + e * xa) + (e * xa + e * xa))


def test_gradient_kept_by_a_leaf_hook_is_not_the_grad_buffer():
    xa = rand(16, 16, seed=11)
    x = leaf(xa)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    z = (x * x).exp().sum()
    z.backward(retain_graph=True)
    z.backward()
    e = elementary.exp(xa * xa)
    once = e * xa + e * xa
    assert len(kept) == 2
    for g in kept:
        assert same(g._a, once)
        assert not np.shares_memory(g._a, x.grad._a)
    assert same(x.grad._a, once + once)


def test_tensor_returned_by_a_hook_is_not_modified():
    xa, ha = rand(8, seed=12), rand(8, seed=13)
    x = leaf(xa)
    h = Tensor(ha.copy())
    y = x * x
    y.register_hook(lambda g: h)
    y.sum().backward()
    assert same(h._a, ha)
    assert same(x.grad._a, ha * xa + ha * xa)
    w = leaf(xa)
    w.register_hook(lambda g: h)
    (w * w).sum().backward()
    (w * w).sum().backward()
    assert same(h._a, ha)
    assert same(w.grad._a, ha + ha)
    assert not np.shares_memory(w.grad._a, h._a)


def test_retained_gradient_is_a_copy_of_the_owned_buffer():
    # y's gradient (ExpBackward's g*result) is owned by the engine and doubled in place for x:
    # y.grad must have been copied before that
    xa = rand(20, 5, seed=14)
    x = leaf(xa)
    y = x * x
    y.retain_grad()
    y.exp().sum().backward()
    e = elementary.exp(xa * xa)
    assert same(y.grad._a, e)
    assert same(x.grad._a, e * xa + e * xa)


def test_captured_gradient_of_a_target_that_another_target_needs():
    # autograd.grad() returns y's gradient and also runs y's node (x needs it): the joint gradient of
    # x * x must not be written into the captured array
    xa = rand(12, seed=15)
    x = leaf(xa)
    y = x * x
    gy, gx = grad((y * 3.0).exp().sum(), (y, x))
    ya = xa * xa
    expected_gy = elementary.exp(ya * np.float32(3.0)) * np.float32(3.0)
    assert same(gy._a, expected_gy)
    assert same(gx._a, expected_gy * xa + expected_gy * xa)
    assert x.grad is None


def test_saved_tensors_survive_retain_graph():
    xa = rand(30, seed=16)
    x = leaf(xa)
    y = x * x
    e = y.exp()
    before_y, before_e = y._a.copy(), e._a.copy()
    s = e.sum()
    s.backward(retain_graph=True)
    first = x.grad._a.copy()
    s.backward(retain_graph=True)
    s.backward()
    assert same(y._a, before_y) and same(e._a, before_e) and same(x._a, xa)
    assert same(x.grad._a, (first + first) + first)


# --------------------------------------------------------------------------------- accumulation

def test_backward_twice_accumulates_into_the_same_grad():
    xa = rand(40, 10, seed=17)
    x = leaf(xa)
    z = (x * x).exp().sum()
    z.backward(retain_graph=True)
    first = x.grad
    values = first._a.copy()
    z.backward()
    assert x.grad is first                 # accumulated in place, as in PyTorch
    assert same(x.grad._a, values + values)


def test_two_leaves_never_share_a_grad_buffer():
    xa = rand(9, seed=18)
    x, w = leaf(xa), leaf(xa)
    (x * 2.0 + w * 2.0).sum().backward()
    assert not np.shares_memory(x.grad._a, w.grad._a)
    x.grad._a[0] = 100
    assert same(w.grad._a, np.full(9, 2.0, np.float32))


def test_leaf_used_many_times():
    xa = np.array([1.0, 2.0, -3.0, 0.5, 4.0], np.float32)      # every sum below is exact
    x = leaf(xa)
    y = (x * x).sum() + (x * 3.0).sum() + (x * x).sum() + (x / 2.0).sum() + x.sum()
    y.backward()
    assert same(x.grad._a, 2 * xa + 3 + 2 * xa + np.float32(0.5) + 1)


def test_second_gradient_added_into_an_owned_buffer():
    # AddBackward0 hands the user's G to both products; a*5's gradient G*5 is a new array the engine
    # owns, and a*2's G*2 is added into it: G itself and the retained a.grad must stay as they are
    xa, ga = rand(50, seed=19), rand(50, seed=20)
    x = leaf(xa)
    a = x * 3.0
    a.retain_grad()
    gt = Tensor(ga.copy())
    (a * 2.0 + a * 5.0).backward(gt)
    total = ga * np.float32(5.0) + ga * np.float32(2.0)
    assert same(gt._a, ga)
    assert same(a.grad._a, total)
    assert same(x.grad._a, total * np.float32(3.0))


# ------------------------------------------------------------------------------ create_graph

def test_create_graph_through_a_square():
    xa = rand(7, seed=22, dtype=np.float64)
    x = leaf(xa)
    (gx,) = grad((x * x).sum(), x, create_graph=True)
    assert same(gx._a, xa + xa)
    gx.sum().backward()
    assert same(x.grad._a, np.full(7, 2.0))


def test_double_backward_of_the_benchmark_expression():
    xa = rand(6, 4, seed=23, dtype=np.float64) * 0.5
    x = leaf(xa)
    (gx,) = grad((x * x).exp().sum(), x, create_graph=True)
    e = elementary.exp(xa * xa)
    assert same(gx._a, e * xa + e * xa)
    gx.sum().backward()
    np.testing.assert_allclose(x.grad._a, 2 * e + 4 * xa * xa * e, rtol=1e-12)


def test_anomaly_mode_gives_the_same_square_gradient():
    xa = rand(11, 3, seed=24)
    x = leaf(xa)
    with autograd.detect_anomaly():
        (x * x).exp().sum().backward()
    e = elementary.exp(xa * xa)
    assert same(x.grad._a, e * xa + e * xa)


def test_square_gradient_at_the_edges_of_float32():
    # 2*(g*x) only equals g*x + g*x when the product is formed first: g+g overflows here, and the
    # subnormal products round before they are doubled
    tiny = np.float32(2.0 ** -149)                                  # the smallest subnormal
    xa = np.array([0.5, 0.75, 1.0, -0.5, np.inf, np.nan], np.float32)
    ga = np.array([3e38, 3 * tiny, 3e38, 5 * tiny, 0.0, 1.0], np.float32)
    x = leaf(xa)
    with np.errstate(all="ignore"):                                 # as a session runs: inf and nan silently
        (x * x).backward(Tensor(ga))
        expected = ga * xa + ga * xa
        assert not same(expected, (ga + ga) * xa)
    assert same(x.grad._a, expected)
