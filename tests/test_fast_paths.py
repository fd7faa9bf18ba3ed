"""The hot paths of small-op loops and training steps (issue 19) against the general paths they shortcut:
each must give the same bits, the same node and the same errors, and fall back wherever it cannot."""

from __future__ import annotations

import gc
import random
import struct

import numpy as np
import pytest

from gradcli.engine import ops
from gradcli.engine.recording import number_operand
from gradcli.engine.tensor import Tensor


def _edge_floats():
    rng = random.Random(7)
    values = [1.0001, 0.5, -2.5, 1 / 3, 1e-40, 1e-45, 2.0 ** -149, 2.0 ** -150, 3 * 2.0 ** -150, 3.4028235e38,
              3.4028235677973366e38, 3.402823669209385e38, 6.5504e4, float("inf"), -float("inf")]
    for _ in range(300):
        values.append(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0])
        # a float32 value nudged off it: the conversion's rounding, ties included
        values.append(float(np.float32(rng.uniform(-10, 10))) + rng.choice((1, -1)) * 2.0 ** rng.randint(-60, -20))
    return [v for v in values if v == v]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_number_operand_gives_numpys_bits_for_the_number(dtype):
    x = (np.arange(-3, 3, dtype=np.float64).reshape(2, 3) * 1.37).astype(dtype)
    numbers = _edge_floats() + [0, 0.0, -0.0, 1, 3, -7, 2 ** 24 + 1, 2 ** 53, -(2 ** 52 + 1), 2 ** 40 + 12345]
    with np.errstate(all="ignore"):
        for b in numbers:
            operand = number_operand(x, b)
            for op in (np.multiply, np.add, np.subtract, np.true_divide):
                want, got = op(x, b), op(x, operand)
                assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (b, op)


def test_number_operand_is_a_read_only_array_made_once():
    x = np.ones(3, np.float32)
    first = number_operand(x, 1.0001)
    assert first.__class__ is np.ndarray and first.dtype == np.float32 and first.shape == ()
    assert not first.flags.writeable
    assert number_operand(x, 1.0001) is first
    assert number_operand(x.astype(np.float64), 1.0001).dtype == np.float64


@pytest.mark.parametrize("b", [-0.0, float("nan"), 1e300, -1e39, 2 ** 60 + 1])
def test_number_operand_leaves_the_number_where_a_table_cannot_keep_it(b):
    # -0.0 is a key equal to 0, NaN is no key at all, a float64 rounds an int past 2**53, and a finite
    # number that overflows float32 is left to numpy's own conversion
    assert number_operand(np.ones(2, np.float32), b) is b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_number_operand_zero_is_a_positive_zero(dtype):
    for b in (0, 0.0):
        zero = number_operand(np.ones(2, dtype), b)
        assert zero.dtype == dtype and zero.shape == () and not zero.flags.writeable
        assert zero.tobytes() == np.zeros((), dtype).tobytes()


def test_number_operand_leaves_other_dtypes_alone():
    for dtype in (np.float16, np.int64, np.bool_):
        assert number_operand(np.ones(2, dtype), 2.5) == 2.5
        assert number_operand(np.ones(2, dtype), 2.5).__class__ is float


def _in_float(fn, g, value):
    """float16 <op> number as PyTorch's mul and div kernels compute it: in float, the number a float."""
    return fn(g.astype(np.float32), np.float32(value)).astype(np.float16)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_wrapped_number_gradients_give_the_numbers_bits(dtype):
    from gradcli.engine.backmath import NumpyMath
    F = NumpyMath()
    g = (np.arange(-3, 3, dtype=np.float64) * 1.37).astype(dtype)
    half = dtype is np.float16
    with np.errstate(all="ignore"):
        for value in _edge_floats()[:60] + [0, -0.0, 2, float("nan")]:
            times = _in_float(np.multiply, g, value) if half else g * value
            over = _in_float(np.true_divide, g, value) if half else g / value
            times0 = _in_float(np.multiply, g[1], value) if half else g[1] * value
            for got, want in ((F.mul_wrapped(g, value), times), (F.div_wrapped(g, value), over),
                              (F.mul_wrapped(g[1], value), times0)):     # a 0-d gradient: numpy's scalar
                assert got.__class__ is want.__class__ and got.dtype == want.dtype
                assert got.tobytes() == want.tobytes(), value


def test_relu_and_its_backward_keep_the_sign_of_zero_and_nan():
    from gradcli.engine.ops.elementwise import relu_array, threshold_backward_array
    for dtype in (np.float32, np.float64, np.float16, np.int64, np.int32):
        x = np.array([-2, -0.0, 0.0, 3, float("nan"), -float("inf")] if dtype in (np.float32, np.float64, np.float16)
                     else [-2, 0, 3], dtype)
        with np.errstate(invalid="ignore"):
            want = np.where(np.isnan(x) | (x > 0), x, np.where(x == 0, x, 0)).astype(dtype)
        assert relu_array(x).tobytes() == want.tobytes()
        if x.dtype.kind == "f":
            g = np.arange(x.size, dtype=dtype) - 1
            with np.errstate(invalid="ignore"):
                kept = ~(x <= 0)
            assert threshold_backward_array(g, x, 0).tobytes() == np.where(kept, g, 0).astype(dtype).tobytes()


def test_number_ops_keep_the_sign_of_zero_and_record_their_nodes():
    x = Tensor(np.array([-1.0, 0.0, 2.0], np.float32))
    x.requires_grad = True
    for op, b, name in ((ops.mul, -0.0, "MulBackward0"), (ops.add, -0.0, "AddBackward0"),
                        (ops.sub, 0.0, "SubBackward0"), (ops.mul, 2.0, "MulBackward0")):
        y = op(x, b)
        want = {ops.mul: np.multiply, ops.add: np.add, ops.sub: np.subtract}[op](x._a, b)
        assert y._a.tobytes() == want.tobytes() and y.grad_fn.op.node == name


def test_a_script_leaves_no_young_objects_for_the_collector():
    """What a script leaves alive joins the collector's oldest generation when the run ends, so the next
    allocation does not walk it (a 3,000-node graph here: no collection runs at all)."""
    from gradcli.session import _collector_tuned
    collections = []

    def count(phase, info):
        if phase == "start":
            collections.append(info["generation"])
    gc.collect()
    gc.callbacks.append(count)
    try:
        with _collector_tuned():        # as Session.run_source runs a script
            x = Tensor(np.ones(2, np.float32))
            x.requires_grad = True
            y = x
            for _ in range(3000):
                y = ops.mul(y, 1.0001)
        [[] for _ in range(300)]        # allocations after the run: fewer than the default threshold, 700
    finally:
        gc.callbacks.remove(count)
    assert collections == []
    assert y.grad_fn.op.node == "MulBackward0"


# ------------------------------------------------------------------ the language's tensor operators

def _script(source: str):
    from conftest import run_script
    return run_script(source)


def test_tensor_operators_with_numbers_and_tensors_record_what_the_operator_records():
    r = _script("import torch\nx = torch.tensor([1.5, -2.0], requires_grad=True)\n"
                "for y in (x * 2.5, x + 1, x - 1, x / 4, x ** 2, x ** 2.0, x * 3, x + x, x * x, x / x, x - x,\n"
                "          x @ x, x + True, 2 * x, 1 - x):\n"
                "    print(y, y.grad_fn.name())\n")
    assert r.error is None, r.error.render()
    assert r.out.splitlines() == [
        "tensor([ 3.7500, -5.0000], grad_fn=<MulBackward0>) MulBackward0",
        "tensor([ 2.5000, -1.0000], grad_fn=<AddBackward0>) AddBackward0",
        "tensor([ 0.5000, -3.0000], grad_fn=<SubBackward0>) SubBackward0",
        "tensor([ 0.3750, -0.5000], grad_fn=<DivBackward0>) DivBackward0",
        "tensor([2.2500, 4.0000], grad_fn=<PowBackward0>) PowBackward0",
        "tensor([2.2500, 4.0000], grad_fn=<PowBackward0>) PowBackward0",
        "tensor([ 4.5000, -6.0000], grad_fn=<MulBackward0>) MulBackward0",
        "tensor([ 3., -4.], grad_fn=<AddBackward0>) AddBackward0",
        "tensor([2.2500, 4.0000], grad_fn=<MulBackward0>) MulBackward0",
        "tensor([1., 1.], grad_fn=<DivBackward0>) DivBackward0",
        "tensor([0., 0.], grad_fn=<SubBackward0>) SubBackward0",
        "tensor(6.2500, grad_fn=<DotBackward0>) DotBackward0",
        "tensor([ 2.5000, -1.0000], grad_fn=<AddBackward0>) AddBackward0",
        "tensor([ 3., -4.], grad_fn=<MulBackward0>) MulBackward0",
        "tensor([-0.5000,  3.0000], grad_fn=<RsubBackward1>) RsubBackward1",
    ]


@pytest.mark.parametrize("source, expected", [
    # Tensor.__matmul__ declines a number: the operator's own TypeError, at the operator
    ("import torch\nx = torch.ones(2)\ny = x @ 3",
     "3:5: TypeError: unsupported operand type(s) for @: 'Tensor' and 'int'"),
    ("import torch\nx = torch.ones(2)\ny = x @ x @ 2.5",
     "3:5: TypeError: unsupported operand type(s) for @: 'Tensor' and 'float'"),
    ("import torch\nx = torch.ones(2)\ny = torch.ones(3)\nz = x + y",
     "4:5: RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("import torch\nx = torch.ones(2, dtype=torch.bool)\nz = x - 1",
     "3:5: RuntimeError: Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
     "to invert a mask, use the `~` or `logical_not()` operator instead."),
])
def test_tensor_operator_errors_keep_their_wording_and_position(source, expected):
    r = _script(source)
    assert r.error is not None
    assert f"{r.error.line}:{r.error.col}: {r.error.kind}: {r.error.message}" == expected
