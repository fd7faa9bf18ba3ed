"""Autograd semantics of the engine, used as a Python library: freeing, retaining, accumulation, grad modes,
promotion, in-place rules, deep graphs and memory."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from gradcli.engine import autograd, dtypes
from gradcli.engine import factories as torch
from gradcli.engine.backward import grad
from gradcli.engine.tensor import Tensor

FREED = "Trying to backward through the graph a second time"


def leaf(values, dtype=None):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("expr, raises", [
    (lambda x: (x + 2).sum(), False), (lambda x: (x - 2).sum(), False), (lambda x: (2 - x).sum(), False),
    (lambda x: (-x).sum(), False), (lambda x: x.mean(), False),
    (lambda x: (x * 2).sum(), True), (lambda x: (2 * x).sum(), True), (lambda x: (x / 2).sum(), True),
    (lambda x: (2 / x).sum(), True), (lambda x: (x ** 2).sum(), True), (lambda x: x.norm(), True),
    (lambda x: (x * x).sum(), True), (lambda x: (2 ** x).sum(), True), (lambda x: x.exp().sum(), True),
])
def test_second_backward_fails_only_where_tensors_were_saved(expr, raises):
    # matches PyTorch: nodes that saved nothing can be traversed again
    x = leaf([1.0, 2.0])
    y = expr(x)
    y.backward()
    if raises:
        with pytest.raises(RuntimeError, match=FREED):
            y.backward()
    else:
        y.backward()


def test_retain_graph_then_accumulate():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_grad_buffer_is_updated_in_place_and_not_shared():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x + w).sum().backward()
    held = x.grad
    (x + w).sum().backward()
    assert held is x.grad and held.tolist() == [2.0, 2.0]
    assert w.grad.tolist() == [2.0, 2.0] and w.grad._a is not x.grad._a


def test_gradient_argument_checks():
    x = leaf([1.0, 1.0])
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"torch.Size\(\[3\]\) and output\[0\] has a shape of torch.Size\(\[2\]\)."):
        (x * 2).backward(torch.ones(3))
    (x * 2).backward(torch.ones(2, dtype=dtypes.int64))   # another dtype is accepted
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.ones(2).sum().backward()


def test_grad_modes_nest_and_restore():
    x = leaf([1.0])
    with autograd.no_grad():
        assert not (x * 2).requires_grad
        with autograd.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
        with autograd.set_grad_enabled(True):
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad
    autograd.set_grad_enabled(False)
    try:
        assert not autograd.is_grad_enabled()
    finally:
        autograd.set_grad_enabled(True)


@pytest.mark.parametrize("make, dtype", [
    (lambda: torch.tensor([1, 2]) * 2.5, "float32"),
    (lambda: torch.tensor([1, 2]) / torch.tensor([2, 2]), "float32"),
    (lambda: torch.tensor([1, 2]) * 2, "int64"),
    (lambda: torch.tensor([True]) + 1, "int64"),
    (lambda: torch.ones(2) * torch.tensor(2.0, dtype=dtypes.float64), "float32"),
    (lambda: torch.ones(2, dtype=dtypes.float64) * torch.ones(2), "float64"),
    (lambda: torch.tensor(2) * torch.tensor(1.5), "float32"),
    (lambda: torch.tensor([1, 2]) + torch.tensor(1.5, dtype=dtypes.float64), "float64"),
    (lambda: torch.ones(2) < 1, "bool"),
    (lambda: torch.ones(2) * 1.0001, "float32"),
])
def test_type_promotion(make, dtype):
    assert make().dtype.name == dtype


def test_mixed_dtype_gradients_come_back_in_each_inputs_dtype():
    a = leaf([1.0, 2.0])
    b = torch.tensor(3.0, dtype=dtypes.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype is dtypes.float32 and b.grad.dtype is dtypes.float64
    assert b.grad.item() == 3.0 and b.grad.shape == ()


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        torch.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        torch.tensor([1, 2]).requires_grad_()


def test_inplace_rules():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        x += 1
    with autograd.no_grad():
        x += 1
    assert x.tolist() == [2.0, 3.0] and x.grad_fn is None
    y = x * 2
    y += 1
    assert y.grad_fn.name() == "AddBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_version_counter_detects_modified_saved_tensor():
    a = leaf([1.0, 1.0])
    b = a * 2
    c = b * b
    b.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[torch.FloatTensor \[2\]\], "
                                           r"which is output 0 of Add, is at version 1; expected version 0 instead."):
        c.sum().backward()


def test_autograd_grad_leaves_dot_grad_alone():
    x = leaf([1.0, 2.0])
    (g,) = grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 4.0] and x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        grad((x * 2).sum(), [x, leaf([1.0])])


def test_retain_grad_on_intermediate():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0] and y.retains_grad and not x.retains_grad


def test_broadcast_gradients_reduce_to_each_shape():
    a, b = leaf([[1.0], [2.0]]), leaf([1.0, 2.0, 3.0])
    (a * b).sum().backward()
    assert a.grad.tolist() == [[6.0], [6.0]] and b.grad.tolist() == [3.0, 3.0, 3.0]


def test_deep_chain_backward_is_iterative():
    x = leaf([1.0])
    y = x
    for _ in range(200_000):
        y = y + 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]
    assert y.tolist() == [200001.0]


def test_graph_is_freed_by_reference_counting_alone():
    # no reference cycles: with the cyclic collector off, dropping the output frees every node
    gc.disable()
    try:
        x = leaf([1.0, 2.0])
        y = (x * 2 + 1).exp().sum()
        probe = weakref.ref(y.grad_fn.inputs[0])
        acc = weakref.ref(autograd.grad_accumulator(x))
        del y
        assert probe() is None and acc() is None
    finally:
        gc.enable()


def test_tensor_repr_and_conversions():
    t = torch.tensor([[1.5, 2.0]])
    assert repr(t) == "tensor([[1.5000, 2.0000]])"
    assert t.tolist() == [[1.5, 2.0]] and t.shape == (1, 2) and t.size(1) == 2 and t.numel() == 2
    assert float(torch.tensor([0.1])) == float(np.float32(0.1))
    assert format(torch.tensor(2.5), ".2f") == "2.50"
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        t.item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(t)


def test_inputs_are_tensors():
    assert isinstance(torch.ones(1), Tensor)


def test_diagnostic_observers_see_every_op_and_node():
    import numpy as np

    from gradcli.engine import autograd
    from gradcli.engine.tensor import Tensor
    from gradcli.engine.observe import Observer
    from gradcli.engine.state import STATE
    seen_forward, seen_backward = [], []

    class Watch(Observer):
        def op(self, op, t, inputs):
            seen_forward.append((op.node, t._a.tolist()))

        def node(self, node, g, out):
            seen_backward.append(
                (type(node).__name__ if out is None else node.op.node, np.asarray(g).tolist(),
                 None if out is None else [None if o is None else np.asarray(o).tolist() for o in out]))
    STATE.observer = Watch()
    try:
        x = Tensor(np.array([1.0, 2.0], np.float32))
        x.requires_grad = True
        y = (x * 3).sum()
        y.backward()
    finally:
        STATE.observer = None
    assert seen_forward == [("MulBackward0", [3.0, 6.0]), ("SumBackward0", 9.0)]
    assert seen_backward == [("SumBackward0", 1.0, [[1.0, 1.0]]),
                             ("MulBackward0", [1.0, 1.0], [[3.0, 3.0], None]),
                             ("AccumulateGrad", [3.0, 3.0], None)]
