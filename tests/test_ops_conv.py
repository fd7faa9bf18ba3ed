"""The convolution rows: gradient checks (their tangents are checked from the same cases by
tests/test_forward_rows.py), second and third derivatives through ConvolutionBackwardBackward0, the
kernels against a direct sum, PyTorch's argument errors, and the memory budget on the column matrix."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import budget
from gradcli.engine.ops import conv
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from test_gradcheck import _leaf, any_, first_derivative, gradcheck, recorded_names

F = TORCH.members["nn"].members["functional"].members


def _backward_output(which, stride=(1,), padding=(0,), dilation=(1,), transposed=False, output_padding=(0,),
                     groups=1):
    """convolution_backward's output `which` as a function of (grad_output, input, weight): the
    create_graph row itself."""
    p = (stride, padding, dilation, transposed, output_padding, groups)
    return lambda g, x, w: conv.convolution_backward(g, x, w, p, which)


# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    conv.CONVOLUTION: [
        (lambda x, w, b: F["conv2d"](x, w, b), (any_(2, 2, 4, 4), any_(3, 2, 2, 2), any_(3))),
        (lambda x, w, b: F["conv2d"](x, w, b, stride=2, padding=1), (any_(1, 2, 5, 5), any_(2, 2, 3, 3), any_(2))),
        (lambda x, w: F["conv2d"](x, w, None, 1, (1, 0), 2), (any_(1, 1, 5, 4), any_(2, 1, 2, 2))),
        (lambda x, w, b: F["conv2d"](x, w, b, groups=2, stride=(1, 2)), (any_(2, 4, 4, 5), any_(4, 2, 2, 2), any_(4))),
        (lambda x, w: F["conv2d"](x, w, padding="same"), (any_(1, 2, 4, 4), any_(2, 2, 2, 3))),
        (lambda x, w, b: F["conv1d"](x, w, b, stride=2, padding=2, dilation=2), (any_(2, 3, 7), any_(2, 3, 3),
                                                                                   any_(2))),
        (lambda x, w: F["conv1d"](x, w, groups=3), (any_(3, 5), any_(6, 1, 2))),
        (lambda x, w, b: F["conv3d"](x, w, b, padding=1, stride=(2, 1, 1)), (any_(1, 2, 3, 3, 3),
                                                                             any_(2, 2, 2, 2, 2), any_(2))),
        (lambda x, w, b: F["conv_transpose2d"](x, w, b, stride=2, padding=1, output_padding=1),
         (any_(1, 2, 3, 3), any_(2, 3, 3, 3), any_(3))),
        (lambda x, w: F["conv_transpose1d"](x, w, groups=2, dilation=2, stride=3), (any_(2, 4, 3), any_(4, 1, 2))),
    ],
    conv.CONVOLUTION_BACKWARD: [
        (_backward_output(0, (2, 1), (1, 0), (1, 2), groups=2), (any_(2, 4, 2, 2), any_(2, 2, 3, 4),
                                                                  any_(4, 1, 2, 2))),
        (_backward_output(1, (2, 1), (1, 0), (1, 2), groups=2), (any_(2, 4, 2, 2), any_(2, 2, 3, 4),
                                                                  any_(4, 1, 2, 2))),
        (_backward_output(2), (any_(2, 3, 4), any_(2, 2, 5), any_(3, 2, 2))),
        (_backward_output(0, (2,), (1,), transposed=True, output_padding=(1,)),
         (any_(1, 3, 5), any_(1, 2, 3), any_(2, 3, 2))),
        (_backward_output(1, (2,), (1,), transposed=True, output_padding=(1,)),
         (any_(1, 3, 5), any_(1, 2, 3), any_(2, 3, 2))),
    ],
}


@pytest.mark.parametrize("case", [c for cases in CHECKS.values() for c in cases])
def test_backward_matches_finite_differences(case):
    fn, arrays = case[:2]
    gradcheck(fn, *arrays)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    fn, arrays = CHECKS[row][0][:2]
    assert row.node in recorded_names(fn(*[_leaf(a) for a in arrays]))


SECOND = [
    (lambda x, w, b: F["conv2d"](x, w, b, stride=2, padding=1), (any_(1, 2, 4, 4), any_(2, 2, 3, 3), any_(2))),
    (lambda x, w: F["conv1d"](x, w, groups=2, dilation=2), (any_(1, 4, 6), any_(2, 2, 2))),
    (lambda x, w: F["conv_transpose1d"](x, w, stride=2), (any_(1, 2, 3), any_(2, 1, 3))),
]


@pytest.mark.parametrize("fn, arrays", SECOND)
def test_second_derivative_matches_finite_differences(fn, arrays):
    gradcheck(first_derivative(fn), *arrays, atol=1e-4, rtol=1e-3)


def test_third_derivative_through_the_backward_row():
    fn = SECOND[1][0]
    gradcheck(first_derivative(first_derivative(fn)), any_(1, 4, 5), any_(2, 2, 2), atol=1e-3, rtol=1e-3)


def test_create_graph_gradients_come_from_the_backward_row():
    from gradcli.engine.backward import grad
    x, w, b = _leaf(any_(1, 2, 4, 4)), _leaf(any_(3, 2, 2, 2)), _leaf(any_(3))
    gs = grad(F["conv2d"](x, w, b).sum(), (x, w, b), create_graph=True)
    assert [g.grad_fn.op.node for g in gs] == ["ConvolutionBackwardBackward0"] * 3


def _direct(x, w, b, stride, padding, dilation, groups):
    """The convolution as a sum over output positions and kernel taps (2-d)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        gi = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, gi * cg:(gi + 1) * cg, i * stride[0]:i * stride[0] + dilation[0] * (kh - 1) + 1:dilation[0],
                           j * stride[1]:j * stride[1] + dilation[1] * (kw - 1) + 1:dilation[1]]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3)) + b[oc]
    return out


@pytest.mark.parametrize("stride, padding, dilation, groups", [((1, 1), (0, 0), (1, 1), 1),
                                                               ((2, 3), (1, 2), (1, 1), 2),
                                                               ((1, 2), (0, 1), (2, 1), 4)])
def test_forward_matches_a_direct_sum(stride, padding, dilation, groups):
    rs = np.random.RandomState(3)
    x, w, b = rs.randn(2, 4, 7, 8), rs.randn(8, 4 // groups, 3, 2), rs.randn(8)
    got = F["conv2d"](Tensor(x), Tensor(w), Tensor(b), stride, padding, dilation, groups)._a
    np.testing.assert_allclose(got, _direct(x, w, b, stride, padding, dilation, groups), rtol=1e-12, atol=1e-12)


def _error(fn, *args, **kwargs) -> str:
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return f"{type(info.value).__name__}: {info.value}"


def _t(*shape, dtype=np.float32):
    return Tensor(np.zeros(shape, dtype=dtype))


# each checked against PyTorch 2.13
ERRORS = [
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 2, 3, 3)),
     "RuntimeError: Given groups=1, weight of size [4, 2, 3, 3], expected input[1, 3, 5, 5] to have 2 channels, "
     "but got 3 channels instead"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3)),
     "RuntimeError: expected stride to be a single integer value or a list of 1 values to match the convolution "
     "dimensions, but got stride=[1, 1]"),
    (lambda: F["conv2d"](_t(5, 5), _t(4, 3, 3, 3)),
     "RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [5, 5]"),
    (lambda: F["conv2d"](_t(1, 3, 2, 2), _t(4, 3, 3, 3)),
     "RuntimeError: Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be "
     "greater than actual input size"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), _t(3)),
     "RuntimeError: Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 elements, but got "
     "bias of size [3] instead"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 1, 3, 3), groups=3),
     "RuntimeError: Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size "
     "[[4, 1, 3, 3]] instead"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(6, 1, 3, 3), groups=2),
     "RuntimeError: Given groups=2, weight of size [6, 1, 3, 3], expected input[1, 3, 5, 5] to have 2 channels, "
     "but got 3 channels instead"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), stride=0), "RuntimeError: non-positive stride is not supported"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), padding=-1), "RuntimeError: negative padding is not supported"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), dilation=0),
     "RuntimeError: dilation should be greater than zero, but got [0, 0]"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), groups=0), "RuntimeError: non-positive groups is not supported"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), padding="same", stride=2),
     "RuntimeError: padding='same' is not supported for strided convolutions"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), padding="foo"), "RuntimeError: Invalid padding string: 'foo'"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), stride=(1, 2, 3)),
     "RuntimeError: expected stride to be a single integer value or a list of 2 values to match the convolution "
     "dimensions, but got stride=[1, 2, 3]"),
    (lambda: F["conv2d"](_t(1, 3, 5, 5, dtype=np.float64), _t(4, 3, 3, 3)),
     "RuntimeError: expected scalar type Double but found Float"),
    (lambda: F["conv1d"](_t(1, 3, 5), _t(2, 3, 2, 2)),
     "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [2, 3, 2, 2], but got 3-dimensional input "
     "of size [1, 3, 5] instead"),
    (lambda: F["conv_transpose2d"](_t(1, 3, 5, 5), _t(3, 2, 3, 3), stride=2, output_padding=2),
     "RuntimeError: output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
     "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1"),
    (lambda: F["conv_transpose2d"](_t(1, 3, 5, 5), _t(4, 2, 3, 3)),
     "RuntimeError: Given transposed=1, weight of size [4, 2, 3, 3], expected input[1, 3, 5, 5] to have 4 channels, "
     "but got 3 channels instead"),
]


@pytest.mark.parametrize("fn, message", ERRORS)
def test_errors_are_pytorchs(fn, message):
    assert _error(fn) == message


def test_shapes_and_unbatched_inputs():
    assert F["conv2d"](_t(3, 5, 5), _t(4, 3, 3, 3)).shape == (4, 3, 3)
    assert F["conv2d"](_t(0, 3, 5, 5), _t(4, 3, 3, 3)).shape == (0, 4, 3, 3)
    assert F["conv2d"](_t(1, 3, 5, 5), _t(4, 3, 3, 3), padding=(1, 2), stride=(2, 1)).shape == (1, 4, 3, 7)
    assert F["conv1d"](_t(1, 3, 5), _t(2, 3, 2), padding="same", dilation=2).shape == (1, 2, 5)
    assert F["conv_transpose2d"](_t(1, 3, 5, 5), _t(3, 2, 3, 3), stride=2, padding=1,
                                 output_padding=1).shape == (1, 2, 10, 10)


def test_the_column_matrix_is_refused_past_the_budget():
    saved = STATE.max_memory
    budget.set_max_memory(64 << 20)
    try:
        # views of one element: the input costs nothing, its column matrix would
        huge = Tensor(np.broadcast_to(np.zeros(1, np.float32), (1, 1, 100000, 100000)))
        beyond = _error(F["conv2d"], huge, _t(1, 1, 3, 3))
        big = Tensor(np.broadcast_to(np.zeros(1, np.float32), (1, 1, 3000, 3000)))
        within = _error(F["conv2d"], big, _t(1, 1, 3, 3))
    finally:
        budget.set_max_memory(saved)
    start = ("RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
             "you tried to allocate ")
    assert beyond == start + "359985600144 bytes. Error code 12 (Cannot allocate memory)"
    assert within == start + "323568144 bytes. Error code 12 (Cannot allocate memory) (gradcli's --max-memory is 64.0 MiB)"


def test_float32_rounding_stays_within_a_few_units_of_the_terms():
    """PyTorch's float32 convolutions (oneDNN) sum in an order chosen per shape, so gradcli's results are held to
    the rounding error summation leaves (measured against PyTorch: within 5 * 2**-24 * sum|x * w|); here
    against the exact sum of the float32 inputs."""
    rs = np.random.RandomState(7)
    for n, c, o, h, k, s, p, groups in [(2, 3, 4, 9, 3, 1, 1, 1), (1, 8, 6, 12, 5, 2, 2, 2), (3, 4, 4, 7, 1, 1, 0, 4)]:
        x, w = rs.randn(n, c, h, h).astype(np.float32), rs.randn(o, c // groups, k, k).astype(np.float32)
        args = ((s, s), (p, p), (1, 1), groups)
        exact = conv.conv_array(x.astype(np.float64), w.astype(np.float64), *args)
        scale = conv.conv_array(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64), *args)
        got = conv.conv_array(x, w, *args)
        assert got.dtype == np.float32
        assert np.all(np.abs(got - exact) <= 4 * 2.0 ** -24 * scale)


def test_a_dilated_kernel_past_int64_is_refused_not_computed():
    """PyTorch computes such a convolution with its sizes wrapped to int64 and reads taps at wrapped
    offsets (conv1d of a length-5 input with dilation 2**62 gives 5 outputs): gradcli says it does not
    implement that, instead of a numpy error (it leaked "negative dimensions are not allowed")."""
    from conftest import error_line
    for dilation in ("2**62", "2**63 - 1"):
        assert error_line("import torch\nimport torch.nn.functional as F\n"
                          f"F.conv1d(torch.ones(1, 2, 5), torch.ones(3, 2, 3), dilation={dilation})") == (
            "NotImplementedError: gradcli does not implement a convolution whose dilated kernel size overflows int64 "
            f"(dilation [{eval(dilation)}], kernel [3])")
