"""Creation functions against PyTorch 2.13: ranges, eye, the random factories and in-place fills,
generators and RNG state, and the argument errors.

Expected values were produced with torch 2.13.0+cpu (x86, AVX2 kernels) and are stored as raw IEEE
bit patterns, or SHA-256 prefixes of the raw bytes for long outputs, so comparisons are exact.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from conftest import run_script
from gradcli.engine import dtypes, factories as torch, rng
from gradcli.engine.tensor import Tensor


def bits(t) -> list:
    """Raw bit patterns (floats) or values (ints, bools) of a tensor, in logical order."""
    a = np.ascontiguousarray(t._a if isinstance(t, Tensor) else t)
    if a.dtype == np.float32:
        return a.view(np.uint32).ravel().tolist()
    if a.dtype == np.float64:
        return a.view(np.uint64).ravel().tolist()
    return a.ravel().tolist()


def digest(t) -> str:
    return hashlib.sha256(np.ascontiguousarray(t._a).tobytes()).hexdigest()[:32]


def out(source: str) -> str:
    result = run_script("import torch\n" + source)
    assert result.error is None, result.error.render()
    return result.out


# ------------------------------------------------------------------------------------------- ranges

@pytest.mark.parametrize("expr, expected", [
    ("torch.arange(5)", "tensor([0, 1, 2, 3, 4])"),
    ("torch.arange(1, 10, 3)", "tensor([1, 4, 7])"),
    ("torch.arange(0, 1, 0.25)", "tensor([0.0000, 0.2500, 0.5000, 0.7500])"),
    ("torch.arange(5.)", "tensor([0., 1., 2., 3., 4.])"),
    ("torch.arange(-3, 3).dtype", "torch.int64"),
    ("torch.arange(0, 1, 0.2).dtype", "torch.float32"),
    ("torch.arange(0.5, 3, dtype=torch.int64)", "tensor([0, 1, 2])"),
    ("torch.arange(0, 1, 0.3, dtype=torch.int32)", "tensor([0, 0, 0, 0], dtype=torch.int32)"),
    ("torch.arange(10, 0, -3)", "tensor([10,  7,  4,  1])"),
    ("torch.arange(0)", "tensor([], dtype=torch.int64)"),
    ("torch.arange(1, 2.5, 0.5)", "tensor([1.0000, 1.5000, 2.0000])"),
    ("len(torch.arange(0, 1, 0.1))", "10"),
    ("len(torch.arange(1, 1.3, 0.1))", "4"),        # (1.3 - 1) / 0.1 is 3.0000000000000004 in double
    ("len(torch.arange(0, 0.9, 0.3))", "3"),
    ("len(torch.arange(0, 5, 0.3))", "17"),
    ("torch.arange(torch.tensor(3))", "tensor([0, 1, 2])"),
    ("torch.arange(start=1, end=5)", "tensor([1, 2, 3, 4])"),
    ("torch.arange(end=3)", "tensor([0, 1, 2])"),
    ("torch.arange(1, end=5, step=2)", "tensor([1, 3])"),
    ("torch.linspace(0, 1, 5)", "tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])"),
    ("torch.linspace(3, -1, 5)", "tensor([ 3.,  2.,  1.,  0., -1.])"),
    ("torch.linspace(0, 10, 4, dtype=torch.int64)", "tensor([ 0,  3,  6, 10])"),
    ("torch.linspace(0, 1, 1)", "tensor([0.])"),
    ("torch.linspace(0, 1, 0)", "tensor([])"),
    ("torch.linspace(0, 1, steps=3)", "tensor([0.0000, 0.5000, 1.0000])"),
    ("torch.linspace(0, 1, 4, requires_grad=True)", "tensor([0.0000, 0.3333, 0.6667, 1.0000], requires_grad=True)"),
    ("torch.eye(2, 3)", "tensor([[1., 0., 0.],\n        [0., 1., 0.]])"),
    ("torch.eye(3, 2, dtype=torch.int64)", "tensor([[1, 0],\n        [0, 1],\n        [0, 0]])"),
    ("torch.eye(0)", "tensor([], size=(0, 0))"),
    ("torch.eye(n=2, m=1)", "tensor([[1.],\n        [0.]])"),
    ("torch.eye(2, dtype=torch.bool)", "tensor([[ True, False],\n        [False,  True]])"),
    ("torch.ones(2).new_zeros(3)", "tensor([0., 0., 0.])"),
    ("torch.ones(2, dtype=torch.int64).new_ones(2, 2)", "tensor([[1, 1],\n        [1, 1]])"),
    ("torch.ones(2).new_full((2,), 7)", "tensor([7., 7.])"),
    ("torch.ones(2, dtype=torch.float64).new_tensor([1, 2])", "tensor([1., 2.], dtype=torch.float64)"),
    ("torch.ones(2).new_empty(0).shape", "torch.Size([0])"),
])
def test_creation_prints_as_pytorch(expr, expected):
    assert out(f"print({expr})") == expected + "\n"


def test_arange_values_bit_for_bit():
    # the kernel's two-vectors-at-a-time fill: base + k*step inside a vector, fused multiply-adds
    assert bits(torch.arange(0, 1, 0.1)) == [0, 1036831949, 1045220557, 1050253722, 1053609165, 1056964608,
                                             1058642330, 1060320051, 1061997773, 1063675494]
    assert digest(torch.arange(0.3, 10, 0.1)) == "854f5c81e043ba4a5eb33c5b8d5cd126"
    assert digest(torch.arange(-5, 7.3, 0.37, dtype=dtypes.float64)) == "a7924d26770cbbf47cfd3f609a888898"


def test_linspace_values_count_from_both_ends():
    assert bits(torch.linspace(0, 1, 7)) == [0, 1042983595, 1051372203, 1056964608, 1059760810, 1062557013,
                                             1065353216]
    assert digest(torch.linspace(-3.3, 7.1, 97)) == "5b3f12416b1c9eccb3490fd783c4f9ee"
    assert digest(torch.linspace(0.1, 0.9, 33, dtype=dtypes.float64)) == "c1f64357729bcdd3b6b8c75c0f6a3828"
    assert bits(torch.linspace(-7, 10, 9, dtype=dtypes.int64)) == [-7, -4, -2, 0, 1, 3, 5, 7, 10]


_COMBINATION_TAIL = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
                     "torch.device device = None, bool pin_memory = False, bool requires_grad = False")

ERRORS = [
    ("torch.arange(0, 5, 0)", RuntimeError, "step must be nonzero"),
    ("torch.arange(0, 5, -1)", RuntimeError, "upper bound and lower bound inconsistent with step sign"),
    ("torch.arange(-1)", RuntimeError, "upper bound and lower bound inconsistent with step sign"),
    ("torch.arange(0, math.inf)", RuntimeError, "unsupported range: 0 -> inf"),
    ("torch.arange(0, math.nan)", RuntimeError, "unsupported range: 0 -> nan"),
    ("torch.arange(5, requires_grad=True)", RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("torch.arange(5, dtype=dtypes.bool_)", NotImplementedError, "\"arange_cpu\" not implemented for 'Bool'"),
    ("torch.arange(0, 1e20)", RuntimeError, "invalid size, possible overflow?"),
    ("torch.arange(0, 5, 0.5, dtype=dtypes.int64)", ValueError, "step must be nonzero"),
    ("torch.arange(torch.tensor([3, 4]))", TypeError,
     "arange(): argument 'end' (position 1) must be Number, not Tensor"),
    ("torch.arange('a')", TypeError, "arange(): argument 'end' (position 1) must be Number, not str"),
    ("torch.linspace(0, 1, -1)", RuntimeError, "number of steps must be non-negative"),
    ("torch.linspace(0, 1, 5, dtype=dtypes.bool_)", NotImplementedError,
     "\"linspace_cpu\" not implemented for 'Bool'"),
    ("torch.linspace(torch.ones(2), 1, 3)", RuntimeError,
     "linspace only supports 0-dimensional start and end tensors, but got start with 1 dimension(s)."),
    ("torch.eye(-1)", RuntimeError, "n must be greater or equal to 0, got -1"),
    ("torch.eye(2, -1)", RuntimeError, "m must be greater or equal to 0, got -1"),
    ("torch.eye(2.0)", TypeError, "eye(): argument 'n' (position 1) must be int, not float"),
    ("torch.eye(2, 3.5)", TypeError,
     "eye() received an invalid combination of arguments - got (int, float), but expected one of:\n"
     f" * (int n, *, {_COMBINATION_TAIL})\n * (int n, int m, *, {_COMBINATION_TAIL})\n"),
    ("torch.rand(2.5)", TypeError, "rand(): argument 'size' (position 1) must be tuple of ints, not float"),
    ("torch.rand(2, 2.5)", TypeError,
     "rand(): argument 'size' failed to unpack the object at pos 2 with error \"type must be tuple of "
     "ints,but got float\""),
    ("torch.rand([2, None])", TypeError,
     "rand(): argument 'size' failed to unpack the object at pos 2 with error \"type must be tuple of "
     "ints,but got NoneType\""),
    ("torch.rand(2, -3)", RuntimeError, "Trying to create tensor with negative dimension -3: [2, -3]"),
    ("torch.zeros(-1, 2)", RuntimeError, "zeros: Dimension size must be non-negative."),
    ("torch.ones()", TypeError, 'ones() missing 1 required positional arguments: "size"'),
    ("torch.full(2, 0.5)", TypeError, "full(): argument 'size' (position 1) must be tuple of ints, not int"),
    ("torch.randint(10, 3)", TypeError, "randint(): argument 'size' (position 2) must be tuple of ints, not int"),
    ("torch.randint(10.5, (2,))", TypeError, "randint(): argument 'high' (position 1) must be int, not float"),
    ("torch.randint(5, 5, (2,))", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("torch.randint(0, 300, (3,), dtype=dtypes.uint8)", RuntimeError, "to - 1 is out of bounds for unsigned char"),
    ("torch.randint(2**63, (2,))", ValueError, "Overflow when unpacking long long"),
    ("torch.randint(10, (3,), requires_grad=True)", RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("torch.randperm(2.5)", TypeError, "randperm(): argument 'n' (position 1) must be int, not float"),
    ("torch.randperm(-1)", RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"),
    ("torch.randperm(5, dtype=dtypes.bool_)", NotImplementedError, "\"randperm\" not implemented for 'Bool'"),
    ("torch.rand(2, dtype=dtypes.int64)", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("torch.randn(2, dtype=dtypes.int64)", NotImplementedError, "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("torch.normal(2.0, -3.0, (3,))", RuntimeError, "normal expects std >= 0.0, but found std -3"),
    ("torch.normal(torch.ones(2), -torch.ones(2))", RuntimeError, "normal expects all elements of std >= 0.0"),
    ("torch.normal(torch.ones(3), torch.ones(2))", RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("torch.normal(torch.tensor([1, 2]), 2.0)", NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("torch.empty(3).uniform_(5, 2)", RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=5 > to=2"),
    ("torch.empty(3, dtype=dtypes.int64).uniform_()", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("torch.empty(2).normal_(generator=5)", TypeError,
     "normal_(): argument 'generator' must be torch.Generator, not int"),
    ("torch.ones(3, requires_grad=True).uniform_()", RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation."),
    ("torch.empty(3).random_(0)", RuntimeError, "random_ expects 'from' to be less than 'to', but got from=0 >= to=0"),
    ("torch.generator_manual_seed(torch.generator(), 2.5)", RuntimeError, "manual_seed expected a long, but got float"),
    ("torch.set_rng_state(torch.zeros(3, dtype=dtypes.uint8))", RuntimeError,
     "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size to be 3"),
    ("torch.set_rng_state(torch.zeros(5056))", TypeError, "RNG state must be a torch.ByteTensor"),
    ("torch.rand(2, generator=5)", TypeError,
     "rand() received an invalid combination of arguments - got (int, generator=int), but expected one of:\n"
     f" * (tuple of ints size, *, torch.Generator generator, {_COMBINATION_TAIL})\n"
     f" * (tuple of ints size, *, {_COMBINATION_TAIL})\n"),
    ("torch.randint(10)", TypeError,
     "randint() received an invalid combination of arguments - got (int), but expected one of:\n"
     f" * (int high, tuple of ints size, *, torch.Generator generator, {_COMBINATION_TAIL})\n"
     f" * (int high, tuple of ints size, *, {_COMBINATION_TAIL})\n"
     f" * (int low, int high, tuple of ints size, *, torch.Generator generator, {_COMBINATION_TAIL})\n"
     f" * (int low, int high, tuple of ints size, *, {_COMBINATION_TAIL})\n"),
    ("torch.normal(1, 2)", TypeError,
     "normal() received an invalid combination of arguments - got (int, int), but expected one of:\n"
     " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
     " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
     " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
     " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
     f"{_COMBINATION_TAIL})\n"),
    ("torch.linspace(0, 1)", TypeError,
     "linspace() received an invalid combination of arguments - got (int, int), but expected one of:\n"
     + "".join(f" * ({a} start, {b} end, int steps, *, {_COMBINATION_TAIL})\n"
               for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number")))),
]


@pytest.mark.parametrize("expr, exc, message", ERRORS)
def test_errors_as_pytorch(expr, exc, message):
    import math  # noqa: F401  (used by the expressions)
    with pytest.raises(exc) as info:
        eval(expr, {"torch": torch, "dtypes": dtypes, "math": math})
    assert str(info.value) == message


def test_script_errors_name_pytorch_exception_types():
    result = run_script("import torch\ntorch.arange(5, dtype=torch.bool)")
    assert (result.error.kind, result.error.message) == ("NotImplementedError",
                                                         "\"arange_cpu\" not implemented for 'Bool'")


# ------------------------------------------------------------------------------------------- random

def test_random_factories_after_manual_seed():
    torch.manual_seed(0)
    assert bits(torch.randint(0, 10, (6,))) == [4, 9, 3, 0, 3, 9]
    r = torch.randint(-3, 3, (2, 3), dtype=dtypes.int32)
    assert r.dtype is dtypes.int32 and bits(r) == [-2, -2, -2, 0, 2, -1]
    assert bits(torch.randperm(7)) == [1, 4, 5, 3, 0, 2, 6]
    assert bits(torch.randn_like(torch.zeros(2, 3))) == [3196439290, 1065912734, 1054142385, 1062661587,
                                                         3209925492, 3209396472]
    assert bits(torch.rand_like(torch.zeros(3), dtype=dtypes.float64)) == [
        4601612375770869544, 4601008552504076192, 4596569725674224404]
    like = torch.randint_like(torch.zeros(4), 2, 9)
    assert like.dtype is dtypes.float32 and bits(like) == [1084227584, 1082130432, 1077936128, 1086324736]


def test_normal_overloads():
    torch.manual_seed(1)
    m, s = torch.tensor([0.0, 1.0, 2.0]), torch.tensor([1.0, 2.0, 3.0])
    assert bits(torch.normal(m, s)) == [1059671648, 1069831460, 1074517904]
    assert bits(torch.normal(m, 2.0)) == [1067388583, 1036320320, 1070954621]
    assert bits(torch.normal(1.5, s)) == [3166340352, 1074846469, 3217725962]
    assert bits(torch.normal(torch.zeros(20), torch.ones(20))) == [
        1063099908, 1048200452, 3207181455, 1062120385, 3220236812, 3209087912, 1073843335, 3182509187,
        1036580094, 3214640471, 1060842942, 1066794419, 1075448814, 1049534524, 1048358092, 1066899460,
        3208277047, 1066722861, 3155471762, 3210193838]
    assert bits(torch.normal(0.5, 2.0, (17,))) == [
        1064184933, 1074826355, 3222906436, 3220054682, 1068037108, 1068011577, 1065485176, 1076636073,
        3204665910, 1074620294, 3178892656, 1072903240, 3222959674, 1080947096, 1060111006, 3221307253,
        1065430953]
    mixed = torch.normal(m, s.double())             # mean's dtype; the product taken in float64
    assert mixed.dtype is dtypes.float32 and bits(mixed) == [3205506106, 1065353786, 1074139464]


def test_in_place_fills():
    torch.manual_seed(2)
    assert bits(torch.empty(5).uniform_(-2, 3)) == [1065969572, 3183635880, 1066909904, 1052679888, 1070117687]
    assert bits(torch.empty(3, dtype=dtypes.float64).normal_(1, 0.5)) == [
        4610849973041043727, 4604915307601578402, 4603760894327114928]
    assert bits(torch.empty(4).random_()) == [1265150361, 1258850871, 1261769745, 1261841139]
    assert bits(torch.empty(3, dtype=dtypes.int64).random_()) == [
        8949915932735490778, 2448578948519600252, 5870246901696551717]
    assert bits(torch.empty(5, dtype=dtypes.uint8).random_()) == [167, 195, 102, 4, 170]
    assert bits(torch.empty(4, dtype=dtypes.bool_).random_()) == [True, True, True, False]
    assert bits(torch.empty(3, dtype=dtypes.float64).random_()) == [
        4845345341325981517, 4834958251039997472, 4843692863957948030]
    assert bits(torch.empty(3, dtype=dtypes.int32).random_()) == [342074693, 2017055832, 22531780]
    assert bits(torch.empty(4).random_(5)) == [1073741824, 1077936128, 1073741824, 1065353216]
    assert bits(torch.empty(4, dtype=dtypes.int16).random_(-4, 4)) == [-3, 3, -2, -4]


def test_fills_follow_memory_order():
    torch.manual_seed(3)
    t = torch.empty(2, 3)
    view = t.t()
    view.uniform_()
    assert bits(view) == [999011584, 1021104224, 1037579456, 1056012144, 1049778674, 1031158912]
    assert bits(t) == bits(np.ascontiguousarray(view._a.T))             # written through the view
    # randn_like of a transposed tensor: 20 elements but not contiguous, so the scalar path
    assert bits(torch.randn_like(torch.empty(5, 4).t())) == [
        1061369070, 3211677400, 3211199974, 1054347707, 1065546165, 1069504298, 1054075009, 3206271339,
        1048808345, 1065792297, 3204742446, 1038795807, 3216583890, 3222848336, 3197881330, 3201718487,
        3206665683, 1074659529, 3204527898, 3183166506]
    assert bits(torch.rand_like(torch.empty(3, 2).t())) == [1042411488, 1054620738, 1061336399, 1052924246,
                                                            1064720763, 1050190176]


def test_generators_are_independent_streams():
    g = torch.generator()
    assert bits(torch.rand(3, generator=g)) == [1049156332, 1063214596, 1051437818]
    assert bits(torch.randint(100, (3,), generator=g)) == [20, 49, 99]
    assert g.initial_seed() == 67280421310721
    assert torch.generator_manual_seed(g, 11) is g
    assert bits(torch.randn(3, generator=g)) == [1060951369, 1073288245, 3207796009]
    assert bits(torch.randperm(5, generator=g)) == [2, 4, 3, 0, 1]
    assert bits(torch.normal(0.0, 1.0, (2,), generator=g)) == [3215372718, 1048319957]
    assert bits(torch.empty(2).uniform_(generator=g)) == [1037167872, 1061326637]


def test_rng_state_round_trip_through_tensors():
    torch.manual_seed(7)
    torch.randn(1)                          # leaves a cached normal, which the state carries
    state = torch.get_rng_state()
    assert state.dtype is dtypes.uint8 and state.shape == (5056,)
    first = torch.randn(3)
    torch.set_rng_state(state)
    assert bits(torch.randn(3)) == bits(first)
    g = torch.generator()
    saved = torch.generator_get_state(g)
    a = torch.rand(4, generator=g)
    torch.generator_set_state(g, saved)
    assert bits(torch.rand(4, generator=g)) == bits(a)


def test_random_fills_record_zero_gradient_nodes():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    names = []
    for fill in (lambda t: t.uniform_(), lambda t: t.normal_(), lambda t: t.random_(),
                 lambda t: t.random_(3), lambda t: t.random_(1, 3)):
        y = x * 2
        fill(y)
        names.append(y.grad_fn.name())
    assert names == ["UniformBackward0", "NormalBackward0", "RandomBackward2", "RandomBackward1", "RandomBackward0"]
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    m, s = torch.tensor([0.0, 1.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    assert [torch.normal(m, s).grad_fn.name(), torch.normal(m, 2.0).grad_fn.name(),
            torch.normal(1.0, s).grad_fn.name()] == ["NormalBackward3", "NormalBackward1", "NormalBackward2"]
    torch.normal(m, s).sum().backward()
    assert m.grad.tolist() == [0.0, 0.0] and s.grad.tolist() == [0.0, 0.0]


def test_script_level_generator_and_state():
    text = out("g = torch.Generator()\n"
               "print(g, g.initial_seed(), g.manual_seed(3) is g)\n"
               "s = g.get_state()\n"
               "a = torch.rand(2, generator=g)\n"
               "g.set_state(s)\n"
               "print(s.shape, s.dtype, (torch.rand(2, generator=g) == a).all())\n"
               "print(torch.manual_seed(3) is torch.default_generator)")
    assert re.sub(r"0x[0-9a-f]+", "0xADDR", text) == (
        "<torch._C.Generator object at 0xADDR> 67280421310721 True\n"
        "torch.Size([5056]) torch.uint8 tensor(True)\nTrue\n")
    result = run_script("import torch\ntorch.Generator().manual_seed('a')")
    assert result.error.message == "manual_seed expected a long, but got str"


def test_fresh_default_stream_is_seeded_like_pytorch():
    # fresh generators and the documented default seed share one stream
    assert bits(rng.Generator().rand((2,), np.float32)) == bits(torch.rand(2, generator=torch.generator()))


# ------------------------------------------------------------------------------------- conversions

@pytest.mark.parametrize("expr, expected", [
    ("torch.tensor([1, 2]).float()", "tensor([1., 2.])"),
    ("torch.tensor([1.5, 2]).long()", "tensor([1, 2])"),
    ("torch.tensor([1.5, 0]).bool()", "tensor([ True, False])"),
    ("torch.tensor([1.5, 2]).int()", "tensor([1, 2], dtype=torch.int32)"),
    ("torch.tensor([1.5, 2]).double()", "tensor([1.5000, 2.0000], dtype=torch.float64)"),
    ("torch.tensor([1.5, 2]).to(torch.float64)", "tensor([1.5000, 2.0000], dtype=torch.float64)"),
    ("torch.tensor([1.5, 2]).to(dtype=torch.int64)", "tensor([1, 2])"),
    ("torch.tensor([1.5, 2], requires_grad=True).to(torch.float64)",
     "tensor([1.5000, 2.0000], dtype=torch.float64, grad_fn=<ToCopyBackward0>)"),
    ("torch.tensor([1.5, 2], requires_grad=True).clone()", "tensor([1.5000, 2.0000], grad_fn=<CloneBackward0>)"),
    ("torch.tensor([1.5, 2], requires_grad=True).float()", "tensor([1.5000, 2.0000], requires_grad=True)"),
    ("torch.tensor([1.5, 2], requires_grad=True).long()", "tensor([1, 2])"),
    ("torch.ones(3).fill_(2)", "tensor([2., 2., 2.])"),
    ("torch.ones(3).zero_()", "tensor([0., 0., 0.])"),
    ("torch.ones(3, dtype=torch.int64).fill_(2.7)", "tensor([2, 2, 2])"),
    ("torch.full((2,), True)", "tensor([True, True])"),
    ("torch.full((2,), 1.5, dtype=torch.int64)", "tensor([1, 1])"),
    ("torch.zeros(size=(2, 3)).shape", "torch.Size([2, 3])"),
    ("torch.zeros(())", "tensor(0.)"),
    ("torch.full_like(torch.ones(2, dtype=torch.int64), 2.7)", "tensor([2, 2])"),
])
def test_casts_copies_and_fills(expr, expected):
    assert out(f"print({expr})") == expected + "\n"


@pytest.mark.parametrize("size, stride", [((2, 3), (0, 1)), ((2, 3), (4, 1)), ((2, 2), (1, 1)), ((3, 2, 2), (1, 3, 5))])
def test_empty_strided_refuses_strides_with_gaps_or_shared_elements(size, stride):
    """PyTorch makes these (a broadcast-like or padded layout); gradcli's results follow only the dense layouts
    (a permutation of a contiguous one), so it says so instead of computing on a layout it does not model."""
    with pytest.raises(NotImplementedError, match=r"^gradcli does not implement torch.empty_strided with strides "
                                                  rf"\[{', '.join(map(str, stride))}\]"):
        torch.empty_strided(size, stride)


def test_empty_strided_lays_out_the_dims_in_stride_order():
    t = torch.empty_strided((2, 3, 4), (1, 8, 2))
    assert t._a.strides == (4, 32, 8) and not t._a.any()
    assert torch.empty_strided((3, 1), (1, 7))._a.flags.c_contiguous
