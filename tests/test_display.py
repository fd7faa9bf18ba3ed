"""Exact-string tests of the modern display against text printed by PyTorch 2.13 (no torch needed to run them).

Each case row is: the PyTorch source that produced the text (statements separated by newlines, the last line is the
echoed expression), the set_printoptions calls made before it (in order), the numpy data the engine would hold, the
grad_fn name / requires_grad flag, and the exact repr. Sources come from the fact sheet (facts/display.md, sections
1, 2.2, 2.4) and from extra edge cases run on the oracle.
"""

import math

import numpy as np
import pytest

from gradcli.display import PrintOptions, return_types_repr, size_repr, tensor_repr


def f32(x):
    return np.array(x, dtype=np.float32)


def f64(x):
    return np.array(x, dtype=np.float64)


def f16(x):
    return np.array(x, dtype=np.float16)


def i64(x):
    return np.array(x, dtype=np.int64)


def ar32(n):
    return np.arange(n, dtype=np.float32)


def ones_with(n, **at):
    """torch.ones(n) with some entries overwritten (index=value as keyword `i<index>`)."""
    out = np.ones(n, dtype=np.float32)
    for key, value in at.items():
        out[int(key[1:])] = value
    return out


INF, NAN = math.inf, math.nan

RANDN_3_4 = f32([[1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991],
                 [-1.0845223665237427, -1.3985954523086548, 0.40334683656692505, 0.8380263447761536],
                 [-0.7192575931549072, -0.40334352850914, -0.5966353416442871, 0.18203648924827576]])
RANDN_3_4_X1000 = f32([[1540.99609375, -293.42889404296875, -2178.789306640625, 568.4312744140625],
                       [-1084.5223388671875, -1398.595458984375, 403.3468322753906, 838.0263671875],
                       [-719.257568359375, -403.3435363769531, -596.6353149414062, 182.03648376464844]])

SEED = "_ = torch.manual_seed(0)\n"

# (torch source, set_printoptions calls, data, grad_fn, requires_grad, expected)
CASES = [
    # 1.1 entry points
    ("torch.ones(2, requires_grad=True)", (), f32([1, 1]), None, True, "tensor([1., 1.], requires_grad=True)"),
    ("torch.tensor([1.])", (), f32([1.]), None, False, "tensor([1.])"),

    # 1.2 float formatter
    ("torch.tensor([1., 2., 3.])", (), f32([1., 2., 3.]), None, False, "tensor([1., 2., 3.])"),
    ("torch.tensor([1.5, 2., 3.])", (), f32([1.5, 2., 3.]), None, False, "tensor([1.5000, 2.0000, 3.0000])"),
    ("torch.tensor([-1., 2., 3.])", (), f32([-1., 2., 3.]), None, False, "tensor([-1.,  2.,  3.])"),
    ("torch.tensor([0., 0.])", (), f32([0., 0.]), None, False, "tensor([0., 0.])"),
    ("torch.tensor([-0., 1.])", (), f32([-0., 1.]), None, False, "tensor([-0., 1.])"),
    ("torch.tensor([-0., 0.5])", (), f32([-0., 0.5]), None, False, "tensor([-0.0000, 0.5000])"),
    ("torch.tensor([0.1, 0.2])", (), f32([0.1, 0.2]), None, False, "tensor([0.1000, 0.2000])"),
    ("torch.tensor([1.23456789])", (), f32([1.23456789]), None, False, "tensor([1.2346])"),
    ("torch.tensor([0.00015])", (), f32([0.00015]), None, False, "tensor([0.0002])"),
    ("torch.tensor([1/3])", (), f32([1 / 3]), None, False, "tensor([0.3333])"),
    ("torch.tensor([2.5e-3, 1.])", (), f32([2.5e-3, 1.]), None, False, "tensor([0.0025, 1.0000])"),
    ("torch.tensor([0.001, 1.])", (), f32([0.001, 1.]), None, False, "tensor([0.0010, 1.0000])"),
    ("torch.tensor([123.456, 0.5])", (), f32([123.456, 0.5]), None, False, "tensor([123.4560,   0.5000])"),
    ("torch.tensor([12345.6])", (), f32([12345.6]), None, False, "tensor([12345.5996])"),
    ("torch.tensor([99999.5])", (), f32([99999.5]), None, False, "tensor([99999.5000])"),
    ("torch.tensor([1e-4])", (), f32([1e-4]), None, False, "tensor([1.0000e-04])"),
    ("torch.tensor([1e-4], dtype=torch.float64)", (), f64([1e-4]), None, False,
     "tensor([0.0001], dtype=torch.float64)"),
    ("torch.tensor([0.0001001])", (), f32([0.0001001]), None, False, "tensor([0.0001])"),
    ("torch.tensor([1., 1000.])", (), f32([1., 1000.]), None, False, "tensor([   1., 1000.])"),
    ("torch.tensor([1., 1001.])", (), f32([1., 1001.]), None, False, "tensor([1.0000e+00, 1.0010e+03])"),
    ("torch.tensor([0.5, 500.5])", (), f32([0.5, 500.5]), None, False, "tensor([5.0000e-01, 5.0050e+02])"),
    ("torch.tensor([1e8])", (), f32([1e8]), None, False, "tensor([100000000.])"),
    ("torch.tensor([1.0000001e8])", (), f32([1.0000001e8]), None, False, "tensor([1.0000e+08])"),
    ("torch.tensor([123456789.])", (), f32([123456789.]), None, False, "tensor([1.2346e+08])"),
    ("torch.tensor([100000001.], dtype=torch.float64)", (), f64([100000001.]), None, False,
     "tensor([1.0000e+08], dtype=torch.float64)"),
    ("torch.tensor([0., 1e-5])", (), f32([0., 1e-5]), None, False, "tensor([0.0000e+00, 1.0000e-05])"),
    ("torch.tensor([0., 1e10])", (), f32([0., 1e10]), None, False, "tensor([0.0000e+00, 1.0000e+10])"),
    ("torch.tensor([1e-100], dtype=torch.float64)", (), f64([1e-100]), None, False,
     "tensor([1.0000e-100], dtype=torch.float64)"),
    # 1.2 non-finite values
    ("torch.tensor([float('inf'), 1.])", (), f32([INF, 1.]), None, False, "tensor([inf, 1.])"),
    ("torch.tensor([float('inf'), 1.5])", (), f32([INF, 1.5]), None, False, "tensor([   inf, 1.5000])"),
    ("torch.tensor([float('nan'), -1.5])", (), f32([NAN, -1.5]), None, False, "tensor([    nan, -1.5000])"),
    ("torch.tensor([float('nan')])", (), f32([NAN]), None, False, "tensor([nan])"),
    ("torch.tensor([float('-inf'), float('inf')])", (), f32([-INF, INF]), None, False, "tensor([-inf, inf])"),
    ("torch.tensor([float('inf'), float('-inf'), 2.])", (), f32([INF, -INF, 2.]), None, False,
     "tensor([inf, -inf, 2.])"),
    ("torch.tensor([float('inf'), 1e-5])", (), f32([INF, 1e-5]), None, False, "tensor([       inf, 1.0000e-05])"),

    # 1.3 integer and bool tensors
    ("torch.tensor([1, 2, 3])", (), i64([1, 2, 3]), None, False, "tensor([1, 2, 3])"),
    ("torch.tensor([1, -20, 3])", (), i64([1, -20, 3]), None, False, "tensor([  1, -20,   3])"),
    ("torch.tensor([True, False])", (), np.array([True, False]), None, False, "tensor([ True, False])"),
    ("torch.tensor([True, True])", (), np.array([True, True]), None, False, "tensor([True, True])"),
    ("torch.tensor(7)", (), i64(7), None, False, "tensor(7)"),
    ("torch.tensor(True)", (), np.array(True), None, False, "tensor(True)"),
    ("torch.arange(5) * 100", (), np.arange(5) * 100, None, False, "tensor([  0, 100, 200, 300, 400])"),

    # 1.4 dtype suffix
    ("torch.tensor([1., 2.], dtype=torch.float64)", (), f64([1., 2.]), None, False,
     "tensor([1., 2.], dtype=torch.float64)"),
    ("torch.tensor(1., dtype=torch.float64)", (), f64(1.), None, False, "tensor(1., dtype=torch.float64)"),
    ("torch.tensor([1., 2.], dtype=torch.float16)", (), f16([1., 2.]), None, False,
     "tensor([1., 2.], dtype=torch.float16)"),
    ("torch.tensor([1, 2], dtype=torch.int32)", (), np.array([1, 2], np.int32), None, False,
     "tensor([1, 2], dtype=torch.int32)"),
    ("torch.tensor([1, 2], dtype=torch.uint8)", (), np.array([1, 2], np.uint8), None, False,
     "tensor([1, 2], dtype=torch.uint8)"),
    ("torch.tensor([1, 2], dtype=torch.int64)", (), i64([1, 2]), None, False, "tensor([1, 2])"),
    ("torch.tensor([2/3], dtype=torch.float64)", (), f64([2 / 3]), None, False,
     "tensor([0.6667], dtype=torch.float64)"),

    # 1.5 empty tensors
    ("torch.tensor([])", (), f32([]), None, False, "tensor([])"),
    ("torch.zeros(0, 3)", (), np.zeros((0, 3), np.float32), None, False, "tensor([], size=(0, 3))"),
    ("torch.zeros(3, 0)", (), np.zeros((3, 0), np.float32), None, False, "tensor([], size=(3, 0))"),
    ("torch.zeros(2, 0, 3)", (), np.zeros((2, 0, 3), np.float32), None, False, "tensor([], size=(2, 0, 3))"),
    ("torch.zeros(0, dtype=torch.long)", (), i64([]), None, False, "tensor([], dtype=torch.int64)"),
    ("torch.tensor([], dtype=torch.float64)", (), f64([]), None, False, "tensor([], dtype=torch.float64)"),
    ("torch.zeros(0, dtype=torch.bool)", (), np.zeros(0, bool), None, False, "tensor([], dtype=torch.bool)"),
    ("torch.zeros(0, 3, dtype=torch.int32)", (), np.zeros((0, 3), np.int32), None, False,
     "tensor([], size=(0, 3), dtype=torch.int32)"),
    ("torch.zeros(0, requires_grad=True)", (), f32([]), None, True, "tensor([], requires_grad=True)"),
    ("torch.zeros(0, 3, requires_grad=True) * 2", (), np.zeros((0, 3), np.float32), "MulBackward0", False,
     "tensor([], size=(0, 3), grad_fn=<MulBackward0>)"),

    # 1.6 0-d tensors
    ("torch.tensor(3.)", (), f32(3.), None, False, "tensor(3.)"),
    ("torch.tensor(3.5)", (), f32(3.5), None, False, "tensor(3.5000)"),
    ("torch.tensor(-0.)", (), f32(-0.), None, False, "tensor(-0.)"),
    ("torch.tensor(1e-5)", (), f32(1e-5), None, False, "tensor(1.0000e-05)"),
    ("torch.tensor(float('nan'))", (), f32(NAN), None, False, "tensor(nan)"),
    ("torch.tensor(27.)", (), f32(27.), None, False, "tensor(27.)"),
    ("torch.ones(2, 2, requires_grad=True).sum()", (), f32(4.), "SumBackward0", False,
     "tensor(4., grad_fn=<SumBackward0>)"),

    # 1.7 nested brackets
    ("torch.ones(2, 2)", (), np.ones((2, 2), np.float32), None, False, "tensor([[1., 1.],\n        [1., 1.]])"),
    ("torch.ones(2, 2) * 4.5", (), np.full((2, 2), 4.5, np.float32), None, False,
     "tensor([[4.5000, 4.5000],\n"
     "        [4.5000, 4.5000]])"),
    ("torch.arange(24.).reshape(2, 3, 4)", (), ar32(24).reshape(2, 3, 4), None, False,
     "tensor([[[ 0.,  1.,  2.,  3.],\n"
     "         [ 4.,  5.,  6.,  7.],\n"
     "         [ 8.,  9., 10., 11.]],\n"
     "\n"
     "        [[12., 13., 14., 15.],\n"
     "         [16., 17., 18., 19.],\n"
     "         [20., 21., 22., 23.]]])"),
    ("torch.arange(8).reshape(2, 2, 2, 1)", (), np.arange(8).reshape(2, 2, 2, 1), None, False,
     "tensor([[[[0],\n"
     "          [1]],\n"
     "\n"
     "         [[2],\n"
     "          [3]]],\n"
     "\n"
     "\n"
     "        [[[4],\n"
     "          [5]],\n"
     "\n"
     "         [[6],\n"
     "          [7]]]])"),
    (SEED + "torch.randn(3, 4)", (), RANDN_3_4, None, False,
     "tensor([[ 1.5410, -0.2934, -2.1788,  0.5684],\n"
     "        [-1.0845, -1.3986,  0.4033,  0.8380],\n"
     "        [-0.7193, -0.4033, -0.5966,  0.1820]])"),

    # 1.8 line wrapping of rows
    ("torch.arange(30.)", (), ar32(30), None, False,
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
     "        28., 29.])"),
    ("torch.arange(30)", (), np.arange(30), None, False,
     "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
     "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])"),
    ("torch.arange(30.) / 7", (), ar32(30) / np.float32(7), None, False,
     "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
     "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
     "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
     "        3.8571, 4.0000, 4.1429])"),
    ("torch.arange(40.).reshape(2, 20) / 3", (), ar32(40).reshape(2, 20) / np.float32(3), None, False,
     "tensor([[ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n"
     "          2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n"
     "          5.3333,  5.6667,  6.0000,  6.3333],\n"
     "        [ 6.6667,  7.0000,  7.3333,  7.6667,  8.0000,  8.3333,  8.6667,  9.0000,\n"
     "          9.3333,  9.6667, 10.0000, 10.3333, 10.6667, 11.0000, 11.3333, 11.6667,\n"
     "         12.0000, 12.3333, 12.6667, 13.0000]])"),

    # 1.9 summarization
    ("torch.arange(1001.)", (), ar32(1001), None, False, "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])"),
    ("torch.arange(2000).reshape(40, 50)", (), np.arange(2000).reshape(40, 50), None, False,
     "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
     "        [  50,   51,   52,  ...,   97,   98,   99],\n"
     "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
     "        ...,\n"
     "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
     "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
     "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])"),
    ("torch.arange(1001.).reshape(1001, 1)", (), ar32(1001).reshape(1001, 1), None, False,
     "tensor([[   0.],\n"
     "        [   1.],\n"
     "        [   2.],\n"
     "        ...,\n"
     "        [ 998.],\n"
     "        [ 999.],\n"
     "        [1000.]])"),
    ("torch.cat([torch.tensor([1e-6, 1., 1., 1.]), torch.ones(1000) * 5])", (),
     np.concatenate([f32([1e-6, 1., 1., 1.]), np.full(1000, 5, np.float32)]), None, False,
     "tensor([1.0000e-06, 1.0000e+00, 1.0000e+00,  ..., 5.0000e+00, 5.0000e+00,\n"
     "        5.0000e+00])"),
    ("t = torch.ones(1001)\nt[500] = 1e-6\nt[-1] = 2.\nt", (), ones_with(1001, i500=1e-6, i1000=2.), None, False,
     "tensor([1., 1., 1.,  ..., 1., 1., 2.])"),
    ("torch.arange(1400.).reshape(7, 2, 100)", (), ar32(1400).reshape(7, 2, 100), None, False,
     "tensor([[[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.7000e+01,\n"
     "          9.8000e+01, 9.9000e+01],\n"
     "         [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.9700e+02,\n"
     "          1.9800e+02, 1.9900e+02]],\n"
     "\n"
     "        [[2.0000e+02, 2.0100e+02, 2.0200e+02,  ..., 2.9700e+02,\n"
     "          2.9800e+02, 2.9900e+02],\n"
     "         [3.0000e+02, 3.0100e+02, 3.0200e+02,  ..., 3.9700e+02,\n"
     "          3.9800e+02, 3.9900e+02]],\n"
     "\n"
     "        [[4.0000e+02, 4.0100e+02, 4.0200e+02,  ..., 4.9700e+02,\n"
     "          4.9800e+02, 4.9900e+02],\n"
     "         [5.0000e+02, 5.0100e+02, 5.0200e+02,  ..., 5.9700e+02,\n"
     "          5.9800e+02, 5.9900e+02]],\n"
     "\n"
     "        ...,\n"
     "\n"
     "        [[8.0000e+02, 8.0100e+02, 8.0200e+02,  ..., 8.9700e+02,\n"
     "          8.9800e+02, 8.9900e+02],\n"
     "         [9.0000e+02, 9.0100e+02, 9.0200e+02,  ..., 9.9700e+02,\n"
     "          9.9800e+02, 9.9900e+02]],\n"
     "\n"
     "        [[1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.0970e+03,\n"
     "          1.0980e+03, 1.0990e+03],\n"
     "         [1.1000e+03, 1.1010e+03, 1.1020e+03,  ..., 1.1970e+03,\n"
     "          1.1980e+03, 1.1990e+03]],\n"
     "\n"
     "        [[1.2000e+03, 1.2010e+03, 1.2020e+03,  ..., 1.2970e+03,\n"
     "          1.2980e+03, 1.2990e+03],\n"
     "         [1.3000e+03, 1.3010e+03, 1.3020e+03,  ..., 1.3970e+03,\n"
     "          1.3980e+03, 1.3990e+03]]])"),

    # 1.10 suffixes and their wrapping
    ("torch.ones(2, requires_grad=True) + 2", (), f32([3, 3]), "AddBackward0", False,
     "tensor([3., 3.], grad_fn=<AddBackward0>)"),
    ("torch.ones(2, dtype=torch.float64, requires_grad=True)", (), f64([1, 1]), None, True,
     "tensor([1., 1.], dtype=torch.float64, requires_grad=True)"),
    ("torch.ones(2, dtype=torch.float64, requires_grad=True) * 3", (), f64([3, 3]), "MulBackward0", False,
     "tensor([3., 3.], dtype=torch.float64, grad_fn=<MulBackward0>)"),
    ("torch.ones(2, requires_grad=True).detach()", (), f32([1, 1]), None, False, "tensor([1., 1.])"),
    ("torch.ones(2, requires_grad=True).float()", (), f32([1, 1]), None, True,
     "tensor([1., 1.], requires_grad=True)"),
    ("x = torch.ones(2, requires_grad=True)\nwith torch.no_grad(): y = x * 2\ny", (), f32([2, 2]), None, False,
     "tensor([2., 2.])"),
    ("torch.ones(2, 2, requires_grad=True)", (), np.ones((2, 2), np.float32), None, True,
     "tensor([[1., 1.],\n"
     "        [1., 1.]], requires_grad=True)"),
    ("torch.ones(2, 2, requires_grad=True) + 2", (), np.full((2, 2), 3, np.float32), "AddBackward0", False,
     "tensor([[3., 3.],\n"
     "        [3., 3.]], grad_fn=<AddBackward0>)"),
    ("torch.full((2, 5), -1.5, requires_grad=True) * 1", (), np.full((2, 5), -1.5, np.float32), "MulBackward0", False,
     "tensor([[-1.5000, -1.5000, -1.5000, -1.5000, -1.5000],\n"
     "        [-1.5000, -1.5000, -1.5000, -1.5000, -1.5000]], grad_fn=<MulBackward0>)"),
    ("torch.arange(6., requires_grad=True) * 1.5", (), ar32(6) * np.float32(1.5), "MulBackward0", False,
     "tensor([0.0000, 1.5000, 3.0000, 4.5000, 6.0000, 7.5000],\n"
     "       grad_fn=<MulBackward0>)"),
    ("torch.arange(10., requires_grad=True) / 3", (), ar32(10) / np.float32(3), "DivBackward0", False,
     "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
     "        3.0000], grad_fn=<DivBackward0>)"),
    (SEED + "torch.randn(3, 4, requires_grad=True) * 1000", (), RANDN_3_4_X1000, "MulBackward0", False,
     "tensor([[ 1540.9961,  -293.4289, -2178.7893,   568.4313],\n"
     "        [-1084.5223, -1398.5955,   403.3468,   838.0264],\n"
     "        [ -719.2576,  -403.3435,  -596.6353,   182.0365]],\n"
     "       grad_fn=<MulBackward0>)"),
    ("torch.arange(5., dtype=torch.float64, requires_grad=True) * 1.5", (), np.arange(5.) * 1.5, "MulBackward0", False,
     "tensor([0.0000, 1.5000, 3.0000, 4.5000, 6.0000], dtype=torch.float64,\n"
     "       grad_fn=<MulBackward0>)"),
    ("(torch.arange(11., requires_grad=True) / 3).double()", (), (ar32(11) / np.float32(3)).astype(np.float64),
     "ToCopyBackward0", False,
     "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
     "        3.0000, 3.3333], dtype=torch.float64, grad_fn=<ToCopyBackward0>)"),
    ("torch.tensor([1000., 2000., 3000., 4000.], dtype=torch.float64, requires_grad=True) * 1", (),
     f64([1000., 2000., 3000., 4000.]), "MulBackward0", False,
     "tensor([1000., 2000., 3000., 4000.], dtype=torch.float64,\n"
     "       grad_fn=<MulBackward0>)"),

    # 1.11 set_printoptions
    ("torch.tensor([1.12345, 2.])", ({"precision": 2},), f32([1.12345, 2.]), None, False, "tensor([1.12, 2.00])"),
    ("torch.tensor([1e-5, 1.])", ({"precision": 2},), f32([1e-5, 1.]), None, False, "tensor([1.00e-05, 1.00e+00])"),
    ("torch.tensor([1., 2.])", ({"precision": 2},), f32([1., 2.]), None, False, "tensor([1., 2.])"),
    ("torch.tensor([1.005, 0.125, 0.375])", ({"precision": 2},), f32([1.005, 0.125, 0.375]), None, False,
     "tensor([1.00, 0.12, 0.38])"),
    ("torch.tensor([1.5, 2.5, 3.7])", ({"precision": 0},), f32([1.5, 2.5, 3.7]), None, False, "tensor([2, 2, 4])"),
    ("torch.tensor([1., 2.])", ({"precision": 0},), f32([1., 2.]), None, False, "tensor([1., 2.])"),
    ("torch.tensor([1/3, 2.])", ({"precision": 6},), f32([1 / 3, 2.]), None, False, "tensor([0.333333, 2.000000])"),
    ("torch.tensor([1., 2.])", ({"sci_mode": True},), f32([1., 2.]), None, False, "tensor([1.0000e+00, 2.0000e+00])"),
    ("torch.tensor([1.5, -2.])", ({"sci_mode": True},), f32([1.5, -2.]), None, False,
     "tensor([ 1.5000e+00, -2.0000e+00])"),
    ("torch.tensor([0., 1.])", ({"sci_mode": True},), f32([0., 1.]), None, False, "tensor([0.0000e+00, 1.0000e+00])"),
    ("torch.tensor([0., 0.])", ({"sci_mode": True},), f32([0., 0.]), None, False, "tensor([0., 0.])"),
    ("torch.tensor([float('inf'), 1.])", ({"sci_mode": True},), f32([INF, 1.]), None, False,
     "tensor([       inf, 1.0000e+00])"),
    ("torch.tensor(3.)", ({"sci_mode": True},), f32(3.), None, False, "tensor(3.0000e+00)"),
    ("torch.tensor([1, 2])", ({"sci_mode": True},), i64([1, 2]), None, False, "tensor([1, 2])"),
    ("torch.tensor([1e-5, 1.])", ({"sci_mode": False},), f32([1e-5, 1.]), None, False, "tensor([0.0000, 1.0000])"),
    ("torch.tensor([1e10, 1.])", ({"sci_mode": False},), f32([1e10, 1.]), None, False,
     "tensor([10000000000.,           1.])"),
    ("torch.tensor([1e10, 1.5])", ({"sci_mode": False},), f32([1e10, 1.5]), None, False,
     "tensor([10000000000.0000,           1.5000])"),
    ("torch.tensor([-1e-5, 1.5])", ({"sci_mode": False},), f32([-1e-5, 1.5]), None, False,
     "tensor([-0.0000,  1.5000])"),
    ("torch.tensor([123456789.])", ({"sci_mode": False},), f32([123456789.]), None, False, "tensor([123456792.])"),
    ("torch.arange(20.)", ({"linewidth": 40},), ar32(20), None, False,
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,\n"
     "         6.,  7.,  8.,  9., 10., 11.,\n"
     "        12., 13., 14., 15., 16., 17.,\n"
     "        18., 19.])"),
    ("torch.ones(2, 2, requires_grad=True) * 2", ({"linewidth": 40},), np.full((2, 2), 2, np.float32),
     "MulBackward0", False,
     "tensor([[2., 2.],\n"
     "        [2., 2.]],\n"
     "       grad_fn=<MulBackward0>)"),
    ("torch.arange(10., requires_grad=True) * 2", ({"linewidth": 40},), ar32(10) * 2, "MulBackward0", False,
     "tensor([ 0.,  2.,  4.,  6.,  8., 10.,\n"
     "        12., 14., 16., 18.],\n"
     "       grad_fn=<MulBackward0>)"),
    ("torch.arange(5.)", ({"linewidth": 10},), ar32(5), None, False,
     "tensor([0.,\n"
     "        1.,\n"
     "        2.,\n"
     "        3.,\n"
     "        4.])"),
    ("torch.arange(10)", ({"threshold": 5},), np.arange(10), None, False, "tensor([0, 1, 2,  ..., 7, 8, 9])"),
    ("torch.arange(6)", ({"threshold": 5},), np.arange(6), None, False, "tensor([0, 1, 2, 3, 4, 5])"),
    ("torch.arange(16).reshape(4, 4)", ({"threshold": 5},), np.arange(16).reshape(4, 4), None, False,
     "tensor([[ 0,  1,  2,  3],\n"
     "        [ 4,  5,  6,  7],\n"
     "        [ 8,  9, 10, 11],\n"
     "        [12, 13, 14, 15]])"),
    ("torch.arange(10)", ({"edgeitems": 1, "threshold": 5},), np.arange(10), None, False, "tensor([0,  ..., 9])"),
    ("torch.arange(16).reshape(4, 4)", ({"edgeitems": 1, "threshold": 5},), np.arange(16).reshape(4, 4), None, False,
     "tensor([[ 0,  ...,  3],\n"
     "        ...,\n"
     "        [12,  ..., 15]])"),
    ("torch.arange(10)", ({"edgeitems": 0, "threshold": 5},), np.arange(10), None, False,
     "tensor([...], size=(10,))"),
    ("torch.arange(16.).reshape(4, 4)", ({"edgeitems": 0, "threshold": 5},), ar32(16).reshape(4, 4), None, False,
     "tensor([...], size=(4, 4))"),
    ("torch.tensor([1.12345, 2.])", ({"profile": "short"},), f32([1.12345, 2.]), None, False, "tensor([1.12, 2.00])"),
    ("torch.arange(1001)", ({"profile": "short"},), np.arange(1001), None, False,
     "tensor([   0,    1,  ...,  999, 1000])"),
    ("torch.tensor([1., 2.])", ({"sci_mode": True}, {"precision": 2}), f32([1., 2.]), None, False, "tensor([1., 2.])"),

    # Extra edge cases run on the oracle (PyTorch 2.13.0+cpu).
    ("torch.tensor([0.1, 1/3], dtype=torch.float16)", (), f16([0.1, 1 / 3]), None, False,
     "tensor([0.1000, 0.3333], dtype=torch.float16)"),
    ("torch.tensor([65504., 0.5], dtype=torch.float16)", (), f16([65504., 0.5]), None, False,
     "tensor([6.5504e+04, 5.0000e-01], dtype=torch.float16)"),
    ("torch.tensor([1e-4, 1.], dtype=torch.float16)", (), f16([1e-4, 1.]), None, False,
     "tensor([1.0002e-04, 1.0000e+00], dtype=torch.float16)"),
    ("torch.tensor(7, dtype=torch.int32)", (), np.array(7, np.int32), None, False, "tensor(7, dtype=torch.int32)"),
    ("torch.tensor(2.5, dtype=torch.float64, requires_grad=True)", (), f64(2.5), None, True,
     "tensor(2.5000, dtype=torch.float64, requires_grad=True)"),
    ("torch.tensor([-5, 100, 7], dtype=torch.int8)", (), np.array([-5, 100, 7], np.int8), None, False,
     "tensor([ -5, 100,   7], dtype=torch.int8)"),
    ("torch.tensor([-300, 2], dtype=torch.int16)", (), np.array([-300, 2], np.int16), None, False,
     "tensor([-300,    2], dtype=torch.int16)"),
    ("torch.tensor([255, 0], dtype=torch.uint8)", (), np.array([255, 0], np.uint8), None, False,
     "tensor([255,   0], dtype=torch.uint8)"),
    ("torch.zeros(2, 0, dtype=torch.bool)", (), np.zeros((2, 0), bool), None, False,
     "tensor([], size=(2, 0), dtype=torch.bool)"),
    ("torch.zeros(0, dtype=torch.float16)", (), f16([]), None, False, "tensor([], dtype=torch.float16)"),
    ("torch.zeros((), dtype=torch.float64)", (), f64(0.), None, False, "tensor(0., dtype=torch.float64)"),
    ("torch.tensor(float('-inf'), requires_grad=True) * 1", (), f32(-INF), "MulBackward0", False,
     "tensor(-inf, grad_fn=<MulBackward0>)"),
    ("torch.ones(0, 2, requires_grad=True)", (), np.ones((0, 2), np.float32), None, True,
     "tensor([], size=(0, 2), requires_grad=True)"),
    ("torch.zeros(0, 3, dtype=torch.float64, requires_grad=True)", (), np.zeros((0, 3)), None, True,
     "tensor([], size=(0, 3), dtype=torch.float64, requires_grad=True)"),
    ("torch.tensor([3.4e38, -1.])", (), f32([3.4e38, -1.]), None, False, "tensor([ 3.4000e+38, -1.0000e+00])"),
    ("torch.tensor([1e-45, 1.])", (), f32([1e-45, 1.]), None, False, "tensor([1.4013e-45, 1.0000e+00])"),
    ("torch.tensor([-0., 0., -0.])", (), f32([-0., 0., -0.]), None, False, "tensor([-0., 0., -0.])"),
    ("torch.tensor([float('nan'), 0.])", (), f32([NAN, 0.]), None, False, "tensor([nan, 0.])"),
    ("torch.tensor([1e10, float('nan')])", (), f32([1e10, NAN]), None, False, "tensor([1.0000e+10,        nan])"),
    ("torch.tensor([0.5, -0.])", (), f32([0.5, -0.]), None, False, "tensor([0.5000, -0.0000])"),
    ("torch.tensor([9.99995, 1.])", (), f32([9.99995, 1.]), None, False, "tensor([10.0000,  1.0000])"),
    ("torch.tensor([0.00005, 1.])", (), f32([0.00005, 1.]), None, False, "tensor([5.0000e-05, 1.0000e+00])"),
    ("torch.tensor([1e8, 1.])", (), f32([1e8, 1.]), None, False, "tensor([1.0000e+08, 1.0000e+00])"),
    ("torch.tensor([1.5, 1e8])", (), f32([1.5, 1e8]), None, False, "tensor([1.5000e+00, 1.0000e+08])"),
    ("torch.tensor([12345678.])", (), f32([12345678.]), None, False, "tensor([12345678.])"),
    ("torch.tensor([1., -1000.])", (), f32([1., -1000.]), None, False, "tensor([    1., -1000.])"),
    ("torch.tensor([0.001, -1.])", (), f32([0.001, -1.]), None, False, "tensor([ 0.0010, -1.0000])"),
    ("torch.tensor([[1., 2.], [-3., 0.5]], dtype=torch.float64, requires_grad=True) * 1", (),
     f64([[1., 2.], [-3., 0.5]]), "MulBackward0", False,
     "tensor([[ 1.0000,  2.0000],\n"
     "        [-3.0000,  0.5000]], dtype=torch.float64, grad_fn=<MulBackward0>)"),
    ("torch.ones(3, 1, 2)", (), np.ones((3, 1, 2), np.float32), None, False,
     "tensor([[[1., 1.]],\n\n        [[1., 1.]],\n\n        [[1., 1.]]])"),
    ("torch.ones(1, 1, 1, 1)", (), np.ones((1, 1, 1, 1), np.float32), None, False, "tensor([[[[1.]]]])"),
    ("torch.tensor([[1, 2], [3, 4]]).t()", (), i64([[1, 2], [3, 4]]).T, None, False,
     "tensor([[1, 3],\n        [2, 4]])"),
    ("torch.arange(2000) % 3 == 0", (), np.arange(2000) % 3 == 0, None, False,
     "tensor([ True, False, False,  ..., False,  True, False])"),
    ("torch.ones(1000, 1000)", (), np.ones((1000, 1000), np.float32), None, False,
     "tensor([[1., 1., 1.,  ..., 1., 1., 1.],\n"
     "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
     "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
     "        ...,\n"
     "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
     "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
     "        [1., 1., 1.,  ..., 1., 1., 1.]])"),
    ("torch.arange(1e6).reshape(1000, 1000)", (), ar32(1000000).reshape(1000, 1000), None, False,
     "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
     "         9.9900e+02],\n"
     "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
     "         1.9990e+03],\n"
     "        [2.0000e+03, 2.0010e+03, 2.0020e+03,  ..., 2.9970e+03, 2.9980e+03,\n"
     "         2.9990e+03],\n"
     "        ...,\n"
     "        [9.9700e+05, 9.9700e+05, 9.9700e+05,  ..., 9.9800e+05, 9.9800e+05,\n"
     "         9.9800e+05],\n"
     "        [9.9800e+05, 9.9800e+05, 9.9800e+05,  ..., 9.9900e+05, 9.9900e+05,\n"
     "         9.9900e+05],\n"
     "        [9.9900e+05, 9.9900e+05, 9.9900e+05,  ..., 1.0000e+06, 1.0000e+06,\n"
     "         1.0000e+06]])"),
    ("torch.arange(1001.) * 1.5", (), ar32(1001) * np.float32(1.5), None, False,
     "tensor([   0.0000,    1.5000,    3.0000,  ..., 1497.0000, 1498.5000,\n"
     "        1500.0000])"),
    ("torch.tensor([1e-4, 0.1])", ({"sci_mode": False},), f32([1e-4, 0.1]), None, False, "tensor([0.0001, 0.1000])"),
    ("torch.tensor([1e-5, 1.])", ({"precision": 0},), f32([1e-5, 1.]), None, False, "tensor([1e-05, 1e+00])"),
    ("torch.tensor([1.5, 2.5])", ({"precision": 0, "sci_mode": True},), f32([1.5, 2.5]), None, False,
     "tensor([2e+00, 2e+00])"),
    ("torch.tensor([float('inf'), float('nan')])", ({"sci_mode": True},), f32([INF, NAN]), None, False,
     "tensor([inf, nan])"),
    ("torch.tensor([float('nan'), 1.5])", ({"sci_mode": True},), f32([NAN, 1.5]), None, False,
     "tensor([       nan, 1.5000e+00])"),
    ("torch.tensor([0.25, 0.35])", ({"precision": 1},), f32([0.25, 0.35]), None, False, "tensor([0.2, 0.3])"),
    ("torch.arange(3)", ({"edgeitems": 0},), np.arange(3), None, False, "tensor([0, 1, 2], size=(3,))"),
    ("torch.tensor(5.)", ({"edgeitems": 0},), f32(5.), None, False, "tensor(5., size=())"),
    ("torch.tensor(5.)", ({"threshold": 0},), f32(5.), None, False, "tensor(5.)"),
    ("torch.tensor(5.)", ({"threshold": 0, "edgeitems": 0},), f32(5.), None, False, "tensor(5., size=())"),
    ("torch.tensor([])", ({"edgeitems": 0},), f32([]), None, False, "tensor([])"),
    ("torch.zeros(0, 3)", ({"edgeitems": 0, "threshold": 0},), np.zeros((0, 3), np.float32), None, False,
     "tensor([], size=(0, 3))"),
    ("torch.arange(10) > 4", ({"threshold": 5},), np.arange(10) > 4, None, False,
     "tensor([False, False, False,  ...,  True,  True,  True])"),
    ("torch.arange(2*3*4*5*10.).reshape(2,3,4,5,10)", ({"threshold": 100, "edgeitems": 1},),
     ar32(1200).reshape(2, 3, 4, 5, 10), None, False,
     "tensor([[[[[   0.,  ...,    9.],\n"
     "           ...,\n"
     "           [  40.,  ...,   49.]],\n"
     "\n"
     "          ...,\n"
     "\n"
     "          [[ 150.,  ...,  159.],\n"
     "           ...,\n"
     "           [ 190.,  ...,  199.]]],\n"
     "\n"
     "\n"
     "         ...,\n"
     "\n"
     "\n"
     "         [[[ 400.,  ...,  409.],\n"
     "           ...,\n"
     "           [ 440.,  ...,  449.]],\n"
     "\n"
     "          ...,\n"
     "\n"
     "          [[ 550.,  ...,  559.],\n"
     "           ...,\n"
     "           [ 590.,  ...,  599.]]]],\n"
     "\n"
     "\n"
     "\n"
     "        [[[[ 600.,  ...,  609.],\n"
     "           ...,\n"
     "           [ 640.,  ...,  649.]],\n"
     "\n"
     "          ...,\n"
     "\n"
     "          [[ 750.,  ...,  759.],\n"
     "           ...,\n"
     "           [ 790.,  ...,  799.]]],\n"
     "\n"
     "\n"
     "         ...,\n"
     "\n"
     "\n"
     "         [[[1000.,  ..., 1009.],\n"
     "           ...,\n"
     "           [1040.,  ..., 1049.]],\n"
     "\n"
     "          ...,\n"
     "\n"
     "          [[1150.,  ..., 1159.],\n"
     "           ...,\n"
     "           [1190.,  ..., 1199.]]]]])"),
    ("torch.arange(60.).reshape(3, 20)", ({"threshold": 10, "edgeitems": 2},), ar32(60).reshape(3, 20), None, False,
     "tensor([[ 0.,  1.,  ..., 18., 19.],\n"
     "        [20., 21.,  ..., 38., 39.],\n"
     "        [40., 41.,  ..., 58., 59.]])"),
    ("torch.arange(100).reshape(10, 10)", ({"threshold": 10, "linewidth": 20},), np.arange(100).reshape(10, 10),
     None, False,
     "tensor([[ 0,  1,  2,\n"
     "          ...,  7,  8,\n"
     "          9],\n"
     "        [10, 11, 12,\n"
     "          ..., 17, 18,\n"
     "         19],\n"
     "        [20, 21, 22,\n"
     "          ..., 27, 28,\n"
     "         29],\n"
     "        ...,\n"
     "        [70, 71, 72,\n"
     "          ..., 77, 78,\n"
     "         79],\n"
     "        [80, 81, 82,\n"
     "          ..., 87, 88,\n"
     "         89],\n"
     "        [90, 91, 92,\n"
     "          ..., 97, 98,\n"
     "         99]])"),
    ("torch.arange(20., requires_grad=True) * 1", ({"linewidth": 40},), ar32(20), "MulBackward0", False,
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,\n"
     "         6.,  7.,  8.,  9., 10., 11.,\n"
     "        12., 13., 14., 15., 16., 17.,\n"
     "        18., 19.],\n"
     "       grad_fn=<MulBackward0>)"),
    ("torch.arange(3., requires_grad=True) * 1", ({"linewidth": 10},), ar32(3), "MulBackward0", False,
     "tensor([0.,\n"
     "        1.,\n"
     "        2.],\n"
     "       grad_fn=<MulBackward0>)"),
    ("torch.arange(30.)", ({"profile": "full"},), ar32(30), None, False,
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
     "        28., 29.])"),
    ("torch.tensor([1.1, 2.2])", ({"profile": "short"},), f32([1.1, 2.2]), None, False, "tensor([1.10, 2.20])"),
    # An unknown profile name is ignored; explicit options win over the profile's values.
    ("torch.tensor([1/3])", ({"profile": "bogus"},), f32([1 / 3]), None, False, "tensor([0.3333])"),
    ("torch.tensor([1/3])", ({"precision": 3, "profile": "short"},), f32([1 / 3]), None, False, "tensor([0.333])"),
    ("torch.tensor([1/3])", ({"precision": 6}, {"profile": "default"}), f32([1 / 3]), None, False,
     "tensor([0.3333])"),
    ("torch.arange(1001.)", ({"profile": "full"}, {"profile": "default"}), ar32(1001), None, False,
     "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])"),
]


@pytest.mark.parametrize("source, calls, data, grad_fn, requires_grad, expected", CASES,
                         ids=[f"{src}|{calls}" if calls else src for src, calls, *_ in CASES])
def test_tensor_repr(source, calls, data, grad_fn, requires_grad, expected):
    opts = PrintOptions()
    for kwargs in calls:
        opts.set(**kwargs)
    got = tensor_repr(data, data.dtype.name, grad_fn_name=grad_fn, requires_grad=requires_grad, opts=opts)
    assert got == expected


def test_default_options_without_opts_argument():
    assert tensor_repr(f32([1.5, 2.]), "float32") == "tensor([1.5000, 2.0000])"


def test_threshold_is_strict():
    # 1000 elements print in full (84 lines), 1001 are summarized onto one line.
    r1000 = tensor_repr(ar32(1000), "float32")
    r1001 = tensor_repr(ar32(1001), "float32")
    assert (len(r1000.splitlines()), "..." in r1000, len(r1001.splitlines()), "..." in r1001) == (84, False, 1, True)
    assert r1000.splitlines()[-2:] == [
        "        984., 985., 986., 987., 988., 989., 990., 991., 992., 993., 994., 995.,",
        "        996., 997., 998., 999.])"]


def test_full_profile_prints_every_element():
    opts = PrintOptions()
    opts.set(profile="full")
    text = tensor_repr(ar32(1001), "float32", opts=opts)
    lines = text.splitlines()
    assert ("..." in text, len(lines)) == (False, 101)
    assert lines[0] == "tensor([   0.,    1.,    2.,    3.,    4.,    5.,    6.,    7.,    8.,    9.,"
    assert lines[-2:] == ["         990.,  991.,  992.,  993.,  994.,  995.,  996.,  997.,  998.,  999.,",
                          "        1000.])"]


@pytest.mark.parametrize("calls, expected", [
    ((), (4, 1000, 3, 80, None)),
    (({"profile": "short"},), (2, 1000, 2, 80, None)),
    (({"profile": "full"},), (4, math.inf, 3, 80, None)),
    (({"profile": "short", "edgeitems": 5},), (2, 1000, 5, 80, None)),
    (({"sci_mode": True},), (4, 1000, 3, 80, True)),
    (({"sci_mode": False}, {"linewidth": 100}), (4, 1000, 3, 100, None)),
    (({"sci_mode": True}, {"profile": "default"}), (4, 1000, 3, 80, None)),
    (({"precision": 7, "threshold": 10, "edgeitems": 1, "linewidth": 50}, {"profile": "nonsense"}),
     (7, 10, 1, 50, None)),
])
def test_print_options_set(calls, expected):
    opts = PrintOptions()
    for kwargs in calls:
        opts.set(**kwargs)
    assert (opts.precision, opts.threshold, opts.edgeitems, opts.linewidth, opts.sci_mode) == expected


@pytest.mark.parametrize("shape, expected", [
    ((2, 2), "torch.Size([2, 2])"),
    ((3,), "torch.Size([3])"),
    ((), "torch.Size([])"),
    ((0, 3), "torch.Size([0, 3])"),
    ((1,), "torch.Size([1])"),
    ((2, 3, 4, 5), "torch.Size([2, 3, 4, 5])"),
    (np.ones((7, 1)).shape, "torch.Size([7, 1])"),
    ((np.int64(4), np.int64(2)), "torch.Size([4, 2])"),
])
def test_size_repr(shape, expected):
    assert size_repr(shape) == expected


M = f32([[1., 5., 2.], [7., 0., 3.]])


@pytest.mark.parametrize("name, values, indices, values_grad_fn, expected", [
    ("max", f32([5., 7.]), i64([1, 0]), None,
     "torch.return_types.max(\nvalues=tensor([5., 7.]),\nindices=tensor([1, 0]))"),
    ("min", f32([1., 0., 2.]), i64([0, 1, 0]), None,
     "torch.return_types.min(\nvalues=tensor([1., 0., 2.]),\nindices=tensor([0, 1, 0]))"),
    ("max", f32([[5.], [7.]]), i64([[1], [0]]), None,
     "torch.return_types.max(\n"
     "values=tensor([[5.],\n"
     "        [7.]]),\n"
     "indices=tensor([[1],\n"
     "        [0]]))"),
    ("sort", np.sort(M, axis=1), np.argsort(M, axis=1), None,
     "torch.return_types.sort(\n"
     "values=tensor([[1., 2., 5.],\n"
     "        [0., 3., 7.]]),\n"
     "indices=tensor([[0, 2, 1],\n"
     "        [1, 2, 0]]))"),
    ("max", M.max(axis=1), M.argmax(axis=1), "MaxBackward0",
     "torch.return_types.max(\nvalues=tensor([5., 7.], grad_fn=<MaxBackward0>),\nindices=tensor([1, 0]))"),
])
def test_return_types_repr(name, values, indices, values_grad_fn, expected):
    values_text = tensor_repr(values, values.dtype.name, grad_fn_name=values_grad_fn)
    indices_text = tensor_repr(indices, indices.dtype.name)
    assert return_types_repr(name, values_text, indices_text) == expected


def test_whole_tensor_max_is_plain_scalar():
    assert tensor_repr(M.max(), "float32") == "tensor(7.)"


def test_a_float_edgeitems_fails_where_pytorch_slices_by_it():
    """torch.set_printoptions(edgeitems=2.0) is accepted; a print that summarizes then slices by it, and
    fails with Python's slice message, as PyTorch's does (gradcli leaked numpy's cast message)."""
    from conftest import run_script
    result = run_script("import torch\ntorch.set_printoptions(threshold=5, edgeitems=True)\nprint(torch.arange(10.))\n"
                        "torch.set_printoptions(edgeitems=100.5)\nprint(torch.arange(10.))\n"
                        "torch.set_printoptions(edgeitems=2.0)\nprint(torch.arange(10.))\n")
    assert result.out == "tensor([0.,  ..., 9.])\ntensor([0., 1., 2., 3., 4., 5., 6., 7., 8., 9.])\n"
    assert (result.error.kind, result.error.message) == (
        "TypeError", "slice indices must be integers or None or have an __index__ method")
