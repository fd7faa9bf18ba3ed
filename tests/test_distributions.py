"""Bit-exact random draws against PyTorch 2.13 (CPU, the default kernels an AMD machine runs):
multinomial, bernoulli, exponential_, geometric_, cauchy_, log_normal_, and the normal / random_ /
*_like draws they sit beside, on many seeds, shapes, dtypes, layouts and parameters.

Each case is a small script that prints its draws with `.tolist()` (every float printed exactly).
tools/rng_cases.py (which holds CASES) ran the same scripts under PyTorch and stored the SHA-256 of what they printed in
tests/rng_distributions_expected.json; here gradcli runs them and the digests must match. Regenerate
with `PYTHONPATH=$PWD /work/oracle/bin/python tools/rng_cases.py` after changing CASES.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conftest import run_script


def _tool():
    spec = importlib.util.spec_from_file_location("rng_cases", Path(__file__).parents[1] / "tools" / "rng_cases.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


_TOOL = _tool()
CASES, EXPECTED, digest = _TOOL.CASES, _TOOL.EXPECTED, _TOOL.digest


def _expected() -> dict:
    return json.loads(EXPECTED.read_text())


def _chunks(n=8):
    names = sorted(CASES)
    return [names[i::n] for i in range(n)]


@pytest.mark.parametrize("names", _chunks(), ids=[f"chunk{i}" for i in range(8)])
def test_draws_match_pytorch_bit_for_bit(names):
    expected = _expected()
    wrong = []
    for name in names:
        result = run_script(CASES[name], f"<{name}>")
        got = result.error.render() if result.error is not None else result.out
        if digest(got) != expected[name]:
            wrong.append(name)
    assert wrong == []


def test_every_case_has_an_expectation():
    assert sorted(_expected()) == sorted(CASES)
    assert len(CASES) > 1000


# The errors, word for word as PyTorch 2.13 gives them (type: message), each raised by one call.
ERROR_PRELUDE = ('import torch\n'
                 'from torch.utils.data import WeightedRandomSampler, DataLoader, IterableDataset, ChainDataset, TensorDataset\n'
                 'class Stream(IterableDataset):\n'
                 '    def __iter__(self):\n'
                 '        return iter([1, 2])\n')
ERRORS = {
    'torch.empty(3).exponential_(0)':
        'RuntimeError: exponential_ expects lambda > 0.0, but found lambda=0',
    'torch.empty(3).exponential_(-1.5)':
        'RuntimeError: exponential_ expects lambda > 0.0, but found lambda=-1.5',
    "torch.empty(3).exponential_(float('nan'))":
        'RuntimeError: exponential_ expects lambda > 0.0, but found lambda=nan',
    'torch.empty(3, dtype=torch.int64).exponential_()':
        'RuntimeError: Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified Long',
    'torch.empty(3, dtype=torch.int32).exponential_()':
        'RuntimeError: Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified Int',
    'torch.empty(3, dtype=torch.bool).exponential_()':
        'RuntimeError: Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified Bool',
    "torch.empty(3).exponential_('a')":
        "TypeError: exponential_(): argument 'lambd' (position 1) must be float, not str",
    'torch.empty(3).exponential_(1, torch.Generator())':
        'TypeError: exponential_() takes from 0 to 1 positional arguments but 2 were given',
    'torch.empty(3).exponential_(generator=3)':
        "TypeError: exponential_(): argument 'generator' must be torch.Generator, not int",
    'torch.empty(3).geometric_(0)':
        'RuntimeError: geometric_ expects p to be in (0, 1), but got p=0',
    'torch.empty(3).geometric_(1)':
        'RuntimeError: geometric_ expects p to be in (0, 1), but got p=1',
    'torch.empty(3).geometric_(-0.1)':
        'RuntimeError: geometric_ expects p to be in (0, 1), but got p=-0.1',
    "torch.empty(3).geometric_(float('nan'))":
        'RuntimeError: geometric_ expects p to be in (0, 1), but got p=nan',
    'torch.empty(3, dtype=torch.bool).geometric_(0.5)':
        'NotImplementedError: "geometric_cpu" not implemented for \'Bool\'',
    'torch.empty(3).geometric_()':
        'TypeError: geometric_() missing 1 required positional arguments: "p"',
    'torch.empty(3).cauchy_(0, 0)':
        'RuntimeError: cauchy_ expects sigma > 0.0, but found sigma=0',
    'torch.empty(3).cauchy_(0, -1)':
        'RuntimeError: cauchy_ expects sigma > 0.0, but found sigma=-1',
    "torch.empty(3).cauchy_(0, float('nan'))":
        'RuntimeError: cauchy_ expects sigma > 0.0, but found sigma=nan',
    'torch.empty(3, dtype=torch.int64).cauchy_()':
        'RuntimeError: Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified long int',
    'torch.empty(3, dtype=torch.int32).cauchy_()':
        'RuntimeError: Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified int',
    'torch.empty(3, dtype=torch.uint8).cauchy_()':
        'RuntimeError: Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified unsigned char',
    'torch.empty(3, dtype=torch.int16).cauchy_()':
        'RuntimeError: Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified short int',
    'torch.empty(3, dtype=torch.int8).cauchy_()':
        'RuntimeError: Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified signed char',
    'torch.empty(3, dtype=torch.bool).cauchy_()':
        'RuntimeError: Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified bool',
    'torch.empty(3).log_normal_(0, 0)':
        'RuntimeError: log_normal_ expects std > 0.0, but found std=0',
    'torch.empty(3).log_normal_(0, -1)':
        'RuntimeError: log_normal_ expects std > 0.0, but found std=-1',
    'torch.empty(3, dtype=torch.int64).log_normal_()':
        'NotImplementedError: "log_normal_cpu" not implemented for \'Long\'',
    'torch.empty(3, dtype=torch.int32).log_normal_()':
        'NotImplementedError: "log_normal_cpu" not implemented for \'Int\'',
    'torch.empty(3).log_normal_(1, 2, torch.Generator())':
        'TypeError: log_normal_() takes from 0 to 2 positional arguments but 3 were given',
    'torch.empty(3).bernoulli_(1.5)':
        'RuntimeError: bernoulli_ expects p to be in [0, 1], but got p=1.5',
    'torch.empty(3).bernoulli_(-0.5)':
        'RuntimeError: bernoulli_ expects p to be in [0, 1], but got p=-0.5',
    "torch.empty(3).bernoulli_(float('nan'))":
        'RuntimeError: bernoulli_ expects p to be in [0, 1], but got p=nan',
    'torch.empty(3).bernoulli_(torch.tensor([0.5, 1.5, 0.2]))':
        'RuntimeError: Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)',
    'torch.empty(3).bernoulli_(torch.tensor([1, 0, 1]))':
        'NotImplementedError: "bernoulli_tensor_cpu_p_" not implemented for \'Long\'',
    "torch.empty(3).bernoulli_('a')":
        'TypeError: bernoulli_() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor p, *, torch.Generator generator = None)\n * (float p = 0.5, *, torch.Generator generator = None)\n',
    "torch.empty(3).bernoulli_(p='a')":
        'TypeError: bernoulli_() received an invalid combination of arguments - got (p=str, ), but expected one of:\n * (Tensor p, *, torch.Generator generator = None)\n * (float p = 0.5, *, torch.Generator generator = None)\n',
    'torch.empty(3).bernoulli_(0.5, torch.Generator())':
        'TypeError: bernoulli_() received an invalid combination of arguments - got (float, torch._C.Generator), but expected one of:\n * (Tensor p, *, torch.Generator generator = None)\n * (float p = 0.5, *, torch.Generator generator = None)\n',
    'torch.empty(3).bernoulli_(torch.rand(2))':
        'RuntimeError: The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0.  Target sizes: [3].  Tensor sizes: [2]',
    'torch.empty(3).bernoulli_(torch.rand(2, 3))':
        'RuntimeError: expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)',
    'torch.bernoulli(torch.tensor([1, 0, 1]))':
        'NotImplementedError: "bernoulli_tensor_cpu_p_" not implemented for \'Long\'',
    'torch.bernoulli(torch.tensor([True, False]))':
        'NotImplementedError: "bernoulli_tensor_cpu_p_" not implemented for \'Bool\'',
    'torch.bernoulli(torch.tensor([0.5, 2.0]))':
        'RuntimeError: Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)',
    'torch.bernoulli(torch.tensor([0.5, 0.2]), 1.5)':
        'RuntimeError: bernoulli_ expects p to be in [0, 1], but got p=1.5',
    'torch.bernoulli(0.5)':
        "TypeError: bernoulli(): argument 'input' (position 1) must be Tensor, not float",
    'torch.bernoulli(torch.rand(3), torch.rand(3))':
        'TypeError: bernoulli() received an invalid combination of arguments - got (Tensor, Tensor), but expected one of:\n * (Tensor input, *, torch.Generator generator = None, Tensor out = None)\n * (Tensor input, float p, *, torch.Generator generator = None)\n',
    'torch.zeros(3).bernoulli(0.5, torch.Generator())':
        'TypeError: bernoulli() takes 1 positional argument but 2 were given',
    'torch.bernoulli(torch.rand(3), generator=1)':
        'TypeError: bernoulli() received an invalid combination of arguments - got (Tensor, generator=int), but expected one of:\n * (Tensor input, *, torch.Generator generator = None, Tensor out = None)\n * (Tensor input, float p, *, torch.Generator generator = None)\n',
    'torch.multinomial(torch.tensor([0., 0.]), 1)':
        'RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)',
    'torch.multinomial(torch.tensor([0., 0.]), 2, True)':
        'RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)',
    'torch.multinomial(torch.tensor([1., -1.]), 1)':
        'RuntimeError: probability tensor contains either `inf`, `nan` or element < 0',
    'torch.multinomial(torch.tensor([1., -1.]), 3, True)':
        'RuntimeError: invalid multinomial distribution (encountering probability entry < 0)',
    "torch.multinomial(torch.tensor([1., float('nan')]), 1)":
        'RuntimeError: probability tensor contains either `inf`, `nan` or element < 0',
    "torch.multinomial(torch.tensor([1., float('inf')]), 2, True)":
        'RuntimeError: invalid multinomial distribution (encountering probability entry = infinity or NaN)',
    'torch.multinomial(torch.tensor([1., 2.]), 3)':
        'RuntimeError: cannot sample n_sample > prob_dist.size(-1) samples without replacement',
    'torch.multinomial(torch.tensor([1., 2.]), 0)':
        'RuntimeError: cannot sample n_sample <= 0 samples',
    'torch.multinomial(torch.tensor([1., 2.]), -1)':
        'RuntimeError: cannot sample n_sample <= 0 samples',
    'torch.multinomial(torch.tensor([1, 2]), 1)':
        'RuntimeError: multinomial only supports floating-point dtypes for input, got: Long',
    'torch.multinomial(torch.tensor(1.), 1)':
        'RuntimeError: prob_dist must be 1 or 2 dim',
    'torch.multinomial(torch.ones(2, 2, 2), 1)':
        'RuntimeError: prob_dist must be 1 or 2 dim',
    'torch.multinomial(torch.tensor([[1., 2.], [0., 0.]]), 1)':
        'RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)',
    'torch.multinomial(torch.ones(3, 0), 2, True)':
        'RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)',
    'torch.multinomial(torch.ones(3), 2.0)':
        "TypeError: multinomial(): argument 'num_samples' (position 2) must be int, not float",
    'torch.multinomial(torch.ones(3), 2, 1)':
        "TypeError: multinomial(): argument 'replacement' (position 3) must be bool, not int",
    'torch.multinomial(torch.ones(3))':
        'TypeError: multinomial() missing 1 required positional arguments: "num_samples"',
    'torch.multinomial([1., 2.], 1)':
        "TypeError: multinomial(): argument 'input' (position 1) must be Tensor, not list",
    'torch.multinomial(torch.ones(3), 2, generator=3)':
        "TypeError: multinomial(): argument 'generator' must be torch.Generator, not int",
    'torch.multinomial(torch.tensor([True, False]), 1)':
        'RuntimeError: multinomial only supports floating-point dtypes for input, got: Bool',
    'torch.multinomial(torch.tensor([1., 2.]), True)':
        "TypeError: multinomial(): argument 'num_samples' (position 2) must be int, not bool",
    'torch.poisson(torch.tensor([1., -1.]))':
        'RuntimeError: invalid Poisson rate, expected rate to be non-negative',
    'torch.poisson(torch.tensor([1, 2]))':
        'NotImplementedError: "poisson_cpu" not implemented for \'Long\'',
    'torch.poisson(3.0)':
        "TypeError: poisson(): argument 'input' (position 1) must be Tensor, not float",
    'torch.rand(3, requires_grad=True).exponential_()':
        'RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.',
    'torch.rand(3, requires_grad=True).bernoulli_(0.5)':
        'RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.',
    'torch.rand(3, requires_grad=True).geometric_(0.5)':
        'RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.',
    'WeightedRandomSampler([1.], 0)':
        'ValueError: num_samples should be a positive integer value, but got num_samples=0',
    'WeightedRandomSampler([1.], 2, 1)':
        'ValueError: replacement should be a boolean value, but got replacement=1',
    'WeightedRandomSampler([[1.], [2.]], 2)':
        'ValueError: weights should be a 1d sequence but given weights have shape (2, 1)',
    'list(WeightedRandomSampler([1., 0.], 3, False))':
        'RuntimeError: cannot sample n_sample > prob_dist.size(-1) samples without replacement',
    'list(WeightedRandomSampler([0., 0.], 3))':
        'RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)',
    'DataLoader(Stream(), shuffle=True)':
        'ValueError: DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=True',
    'DataLoader(Stream(), sampler=[0, 1])':
        'ValueError: DataLoader with IterableDataset: expected unspecified sampler option, but got sampler=[0, 1]',
    'DataLoader(Stream(), batch_sampler=[[0]])':
        'ValueError: DataLoader with IterableDataset: expected unspecified batch_sampler option, but got batch_sampler=[[0]]',
    'len(DataLoader(Stream()))':
        "TypeError: object of type 'Stream' has no len()",
    'len(ChainDataset([Stream(), TensorDataset(torch.ones(2))]))':
        "TypeError: object of type 'Stream' has no len()",
    'list(ChainDataset([Stream(), TensorDataset(torch.ones(2))]))':
        'AssertionError: ChainDataset only supports IterableDataset',
}


@pytest.mark.parametrize("call", list(ERRORS))
def test_errors_are_pytorchs(call):
    result = run_script(ERROR_PRELUDE + call + "\n", "<error>")
    assert result.error is not None, result.out
    assert f"{result.error.kind}: {result.error.message}" == ERRORS[call]


# ---- the memory budget and the language's walls -----------------------------------------------------

ALLOC = ("RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
         "you tried to allocate {} bytes. Error code 12 (Cannot allocate memory)")


@pytest.mark.parametrize("call, nbytes", [
    ("torch.multinomial(torch.ones(3), 10**12, True)", 8 * 10**12),
    ("torch.ones(4, 5).multinomial(10**11, replacement=True)", 32 * 10**11),
    ("torch.bernoulli(torch.ones(1).expand(10**7, 10**6))", 4 * 10**13),
])
def test_huge_draws_are_refused_at_once(call, nbytes):
    result = run_script(f"import torch\nx = {call}\n")
    assert f"{result.error.kind}: {result.error.message}" == ALLOC.format(nbytes)


def test_draws_past_a_small_budget_are_refused(small_budget):
    result = run_script("import torch\nx = torch.multinomial(torch.ones(3), 10**7, True)\n")
    assert result.error.message.endswith("you tried to allocate 80000000 bytes. Error code 12 (Cannot allocate "
                                         "memory) (gradcli's --max-memory is 64.0 MiB)")
    result = run_script("import torch\nx = torch.multinomial(torch.ones(3), 10**6, True)\nprint(x.shape, x.max())")
    assert result.out == "torch.Size([1000000]) tensor(2)\n"


@pytest.mark.parametrize("source, error", [
    ("s = WeightedRandomSampler([1., 2.], 3)\ns.__dict__",
     "AttributeError: 'WeightedRandomSampler' object attribute '__dict__' is outside gradcli's language"),
    ("s = WeightedRandomSampler([1., 2.], 3)\ns.__reduce__.__init__.__globals__",
     "AttributeError: 'WeightedRandomSampler' object attribute '__reduce__' is outside gradcli's language"),
    ("DataLoader(Stream()).sampler.__iter__.__globals__",
     "AttributeError: 'method' object attribute '__globals__' is outside gradcli's language"),
    ("iter(DataLoader(Stream()))._stream",
     "AttributeError: '_LoaderIter' object attribute '_stream' is outside gradcli's language"),
    ("torch.multinomial.__module__",
     "AttributeError: 'builtin_function_or_method' object attribute '__module__' is outside gradcli's language"),
])
def test_the_new_objects_keep_the_language_walls(source, error):
    result = run_script(ERROR_PRELUDE + source + "\n")
    assert result.error is not None
    assert f"{result.error.kind}: {result.error.message}" == error


# ---- libstdc++'s selection, for the order of ties ------------------------------------------------
# (mode, n, k, seed, indices): mode 0 partial_sort(k), 1 nth_element(k - 1) then sort of the first k - 1,
# 2 sort of all; values random.Random(seed).choice([0, 0, 1, 2, 3]) each, compared with `>`. The indices are
# what g++'s libstdc++ (GCC 12) left in front, from a small C++ program run on the same values.
LIBSTDCXX = [
    (0, 64, 1, 93, [1]),
    (1, 7, 3, 855, [3, 6, 1]),
    (2, 17, 17, 753, [15, 5, 9, 7, 8, 16, 0, 13, 10, 2, 6, 4, 11, 12, 3, 14, 1]),
    (0, 130, 2, 257, [5, 4]),
    (1, 40, 14, 621, [1, 39, 34, 33, 22, 18, 14, 8, 7, 2, 3, 28, 15, 32]),
    (2, 7, 7, 595, [2, 6, 3, 0, 1, 4, 5]),
    (0, 64, 1, 441, [2]),
    (1, 33, 33, 972, [27, 23, 19, 16, 10, 7, 1, 4, 2, 25, 26, 28, 17, 14, 11, 5, 31, 20, 9, 6, 32, 24, 22, 21, 15, 13, 12, 8, 18, 30, 0, 29, 3]),
    (2, 20, 20, 557, [1, 18, 10, 8, 5, 4, 3, 7, 12, 6, 16, 9, 2, 11, 13, 14, 15, 17, 0, 19]),
    (0, 130, 2, 514, [23, 9]),
    (1, 20, 2, 891, [2, 15]),
    (2, 7, 7, 372, [4, 6, 1, 0, 2, 3, 5]),
    (0, 130, 2, 954, [4, 1]),
    (1, 20, 13, 433, [11, 9, 5, 1, 13, 4, 6, 7, 15, 19, 0, 16, 18]),
    (2, 40, 40, 168, [1, 37, 6, 26, 9, 10, 23, 12, 19, 14, 39, 36, 35, 28, 25, 18, 15, 11, 3, 20, 21, 22, 2, 27, 32, 5, 0, 38, 4, 34, 33, 31, 30, 29, 16, 7, 8, 24, 13, 17]),
    (0, 64, 1, 241, [0]),
    (1, 17, 1, 180, [3]),
    (2, 20, 20, 177, [18, 3, 14, 8, 1, 19, 16, 7, 5, 2, 9, 10, 15, 17, 6, 11, 12, 13, 4, 0]),
    (0, 64, 1, 522, [3]),
    (1, 40, 24, 526, [28, 19, 16, 8, 34, 31, 21, 30, 15, 24, 11, 7, 6, 5, 27, 38, 25, 26, 13, 17, 4, 20, 33, 36]),
    (2, 40, 40, 186, [36, 2, 35, 32, 29, 22, 20, 10, 1, 18, 17, 16, 15, 5, 12, 3, 9, 37, 0, 13, 23, 25, 34, 30, 31, 4, 33, 26, 38, 39, 28, 27, 24, 6, 21, 7, 19, 8, 11, 14]),
    (0, 130, 2, 815, [8, 3]),
    (1, 33, 24, 808, [23, 21, 19, 25, 31, 17, 26, 29, 10, 8, 7, 4, 1, 22, 2, 0, 6, 15, 13, 32, 30, 28, 24, 27]),
    (2, 40, 40, 362, [1, 38, 29, 27, 25, 24, 20, 15, 14, 0, 8, 7, 2, 5, 12, 33, 28, 18, 10, 34, 3, 9, 6, 11, 13, 30, 39, 37, 36, 35, 32, 31, 21, 16, 17, 19, 26, 4, 23, 22]),
]


@pytest.mark.parametrize("mode, n, k, seed, want", LIBSTDCXX)
def test_selection_leaves_ties_where_libstdcxx_does(mode, n, k, seed, want):
    import random
    from gradcli.engine import cxxsort
    r = random.Random(seed)
    queue = [(float(r.choice([0, 0, 1, 2, 3])), i) for i in range(n)]

    def before(x, y):
        return x[0] > y[0]
    if mode == 0:
        cxxsort.partial_sort(queue, k, before)
    elif mode == 1:
        cxxsort.nth_element(queue, k - 1, before)
        cxxsort.sort(queue, k - 1, before)
    else:
        cxxsort.sort(queue, n, before)
    assert [i for _, i in queue[:len(want)]] == want
