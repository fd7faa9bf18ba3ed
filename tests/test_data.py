"""torch.utils.data: the samples' order is PyTorch 2.13's bit for bit under a seed, the loader's errors are
PyTorch's, and the loader reaches a script's Dataset only as the script itself could.

The printed results are pinned byte for byte by the data_*.grad goldens in tests/conformance."""

import pytest

from conftest import error_line, gradcli_output, run_script
from gradcli.engine.state import STATE

_SWEEP = """
import torch
from torch.utils.data import DataLoader, TensorDataset
out = {}
for seed in (0, 1, 123, 2**40 + 5):
    for n, bs, gen in ((3, 2, None), (17, 5, None), (64, 8, 9), (100, 7, None), (10, 4, 0)):
        torch.manual_seed(seed)
        g = None if gen is None else torch.Generator().manual_seed(gen)
        dl = DataLoader(TensorDataset(torch.arange(n)), batch_size=bs, shuffle=True, generator=g)
        epochs = [sum((b[0].tolist() for b in dl), []) for _ in range(2)]
        out[(seed, n, bs, gen)] = (epochs, torch.randint(0, 1000, (1,)).item())
print(out)
"""

# (seed, n, batch_size, generator seed or None) -> (two epochs' order, the next randint): from PyTorch 2.13
ORACLE_ORDERS = {
    (0, 3, 2, None): ([[0, 2, 1], [2, 1, 0]], 497),
    (0, 17, 5, None): ([[12, 0, 14, 11, 6, 2, 16, 4, 10, 13, 9, 15, 7, 1, 8, 5, 3], [3, 15, 4, 14, 0, 7, 11, 8, 12, 6, 16, 9, 10, 2, 5, 13, 1]], 497),
    (0, 64, 8, 9): ([[62, 33, 58, 27, 11, 45, 21, 39, 14, 13, 43, 22, 46, 5, 28, 12, 3, 52, 55, 19, 56, 63, 44, 6, 24, 34, 32, 38, 42, 4, 48, 17, 29, 16, 40, 53, 37, 7, 57, 20, 35, 54, 30, 50, 61, 9, 10, 49, 23, 47, 8, 59, 2, 41, 51, 18, 60, 0, 31, 1, 25, 15, 36, 26], [27, 42, 35, 31, 8, 12, 26, 17, 55, 28, 60, 38, 33, 22, 16, 13, 53, 36, 29, 14, 52, 50, 9, 15, 3, 25, 40, 11, 34, 59, 1, 18, 48, 5, 54, 47, 21, 56, 10, 32, 23, 58, 43, 61, 19, 49, 45, 44, 37, 57, 62, 51, 63, 41, 6, 7, 46, 39, 0, 4, 24, 2, 30, 20]], 44),
    (0, 100, 7, None): ([[26, 88, 59, 58, 73, 11, 65, 2, 84, 79, 61, 15, 42, 38, 6, 48, 55, 49, 87, 67, 5, 78, 97, 90, 91, 34, 98, 50, 99, 63, 76, 74, 19, 57, 46, 32, 47, 14, 83, 53, 24, 17, 52, 3, 7, 13, 64, 21, 20, 9, 95, 70, 71, 44, 68, 66, 54, 80, 93, 22, 39, 36, 40, 75, 31, 81, 1, 60, 18, 12, 69, 43, 96, 72, 25, 45, 82, 30, 10, 0, 92, 56, 51, 29, 41, 33, 23, 35, 37, 27, 62, 85, 86, 89, 4, 94, 28, 8, 77, 16], [72, 22, 9, 30, 26, 49, 77, 28, 11, 14, 16, 32, 24, 3, 37, 51, 12, 96, 46, 69, 92, 27, 80, 56, 82, 0, 75, 58, 85, 90, 66, 39, 15, 29, 62, 61, 48, 1, 13, 31, 65, 5, 74, 91, 38, 97, 76, 73, 86, 98, 59, 84, 93, 6, 99, 89, 36, 50, 78, 18, 60, 34, 33, 25, 64, 88, 43, 81, 20, 47, 44, 94, 8, 54, 19, 42, 2, 63, 52, 68, 4, 7, 95, 10, 87, 70, 45, 53, 79, 17, 67, 71, 57, 83, 21, 41, 40, 23, 55, 35]], 497),
    (0, 10, 4, 0): ([[3, 7, 5, 2, 0, 8, 1, 6, 9, 4], [1, 3, 2, 7, 5, 9, 0, 6, 4, 8]], 44),
    (1, 3, 2, None): ([[0, 1, 2], [1, 2, 0]], 759),
    (1, 17, 5, None): ([[6, 5, 15, 0, 1, 4, 12, 10, 13, 11, 16, 9, 7, 3, 8, 14, 2], [2, 12, 14, 5, 13, 6, 11, 4, 15, 0, 1, 8, 16, 9, 7, 3, 10]], 759),
    (1, 64, 8, 9): ([[62, 33, 58, 27, 11, 45, 21, 39, 14, 13, 43, 22, 46, 5, 28, 12, 3, 52, 55, 19, 56, 63, 44, 6, 24, 34, 32, 38, 42, 4, 48, 17, 29, 16, 40, 53, 37, 7, 57, 20, 35, 54, 30, 50, 61, 9, 10, 49, 23, 47, 8, 59, 2, 41, 51, 18, 60, 0, 31, 1, 25, 15, 36, 26], [27, 42, 35, 31, 8, 12, 26, 17, 55, 28, 60, 38, 33, 22, 16, 13, 53, 36, 29, 14, 52, 50, 9, 15, 3, 25, 40, 11, 34, 59, 1, 18, 48, 5, 54, 47, 21, 56, 10, 32, 23, 58, 43, 61, 19, 49, 45, 44, 37, 57, 62, 51, 63, 41, 6, 7, 46, 39, 0, 4, 24, 2, 30, 20]], 845),
    (1, 100, 7, None): ([[94, 38, 48, 2, 8, 92, 59, 5, 0, 16, 40, 62, 51, 99, 7, 55, 85, 23, 18, 79, 36, 41, 49, 66, 65, 47, 70, 93, 78, 1, 32, 57, 61, 14, 81, 71, 80, 9, 13, 21, 64, 45, 91, 6, 95, 4, 24, 33, 28, 54, 35, 69, 77, 68, 22, 87, 73, 98, 3, 83, 43, 46, 58, 37, 75, 82, 96, 97, 30, 76, 72, 25, 34, 26, 74, 84, 88, 60, 63, 11, 27, 90, 44, 29, 89, 31, 20, 15, 12, 17, 67, 50, 52, 86, 19, 10, 39, 56, 53, 42], [24, 89, 58, 31, 46, 33, 92, 6, 59, 86, 73, 20, 55, 14, 23, 84, 29, 49, 77, 70, 26, 54, 1, 56, 98, 90, 45, 93, 71, 13, 8, 94, 34, 18, 63, 22, 64, 75, 44, 57, 38, 96, 79, 60, 19, 80, 25, 37, 72, 41, 9, 5, 27, 32, 95, 2, 81, 0, 51, 28, 3, 35, 76, 36, 4, 48, 68, 11, 42, 99, 67, 47, 10, 17, 16, 15, 52, 97, 88, 87, 69, 21, 30, 74, 66, 83, 82, 62, 78, 39, 65, 43, 91, 40, 50, 61, 7, 85, 12, 53]], 759),
    (1, 10, 4, 0): ([[3, 7, 5, 2, 0, 8, 1, 6, 9, 4], [1, 3, 2, 7, 5, 9, 0, 6, 4, 8]], 845),
    (123, 3, 2, None): ([[0, 1, 2], [0, 2, 1]], 699),
    (123, 17, 5, None): ([[8, 9, 3, 7, 6, 5, 12, 1, 16, 4, 13, 11, 2, 0, 10, 15, 14], [1, 10, 6, 7, 2, 4, 0, 13, 16, 8, 9, 3, 11, 5, 12, 14, 15]], 699),
    (123, 64, 8, 9): ([[62, 33, 58, 27, 11, 45, 21, 39, 14, 13, 43, 22, 46, 5, 28, 12, 3, 52, 55, 19, 56, 63, 44, 6, 24, 34, 32, 38, 42, 4, 48, 17, 29, 16, 40, 53, 37, 7, 57, 20, 35, 54, 30, 50, 61, 9, 10, 49, 23, 47, 8, 59, 2, 41, 51, 18, 60, 0, 31, 1, 25, 15, 36, 26], [27, 42, 35, 31, 8, 12, 26, 17, 55, 28, 60, 38, 33, 22, 16, 13, 53, 36, 29, 14, 52, 50, 9, 15, 3, 25, 40, 11, 34, 59, 1, 18, 48, 5, 54, 47, 21, 56, 10, 32, 23, 58, 43, 61, 19, 49, 45, 44, 37, 57, 62, 51, 63, 41, 6, 7, 46, 39, 0, 4, 24, 2, 30, 20]], 382),
    (123, 100, 7, None): ([[58, 20, 52, 99, 92, 12, 91, 24, 39, 89, 66, 59, 95, 23, 70, 29, 62, 21, 94, 42, 98, 7, 6, 93, 78, 67, 28, 36, 80, 10, 17, 33, 27, 22, 72, 32, 87, 5, 15, 40, 81, 41, 26, 18, 86, 75, 57, 51, 49, 68, 0, 30, 50, 4, 37, 44, 85, 96, 79, 43, 3, 84, 88, 71, 13, 38, 73, 97, 48, 83, 69, 14, 34, 54, 2, 82, 61, 60, 16, 63, 35, 11, 45, 19, 90, 56, 31, 47, 8, 55, 76, 1, 74, 65, 46, 25, 53, 77, 9, 64], [85, 90, 52, 50, 26, 16, 98, 41, 7, 58, 14, 80, 11, 38, 8, 21, 87, 66, 89, 44, 83, 96, 65, 54, 99, 34, 91, 35, 3, 69, 4, 5, 32, 36, 75, 79, 30, 92, 55, 82, 63, 39, 88, 67, 64, 43, 49, 10, 12, 37, 13, 94, 42, 62, 45, 84, 71, 33, 56, 51, 40, 18, 6, 25, 47, 48, 81, 95, 28, 59, 68, 70, 29, 77, 24, 20, 93, 15, 2, 1, 74, 19, 97, 60, 46, 61, 78, 9, 72, 31, 86, 23, 73, 0, 17, 27, 76, 53, 22, 57]], 699),
    (123, 10, 4, 0): ([[3, 7, 5, 2, 0, 8, 1, 6, 9, 4], [1, 3, 2, 7, 5, 9, 0, 6, 4, 8]], 382),
    (1099511627781, 3, 2, None): ([[2, 1, 0], [1, 2, 0]], 88),
    (1099511627781, 17, 5, None): ([[1, 3, 6, 12, 11, 10, 9, 7, 13, 15, 16, 14, 4, 5, 2, 8, 0], [14, 4, 10, 7, 12, 0, 6, 5, 8, 3, 11, 1, 16, 15, 9, 13, 2]], 88),
    (1099511627781, 64, 8, 9): ([[62, 33, 58, 27, 11, 45, 21, 39, 14, 13, 43, 22, 46, 5, 28, 12, 3, 52, 55, 19, 56, 63, 44, 6, 24, 34, 32, 38, 42, 4, 48, 17, 29, 16, 40, 53, 37, 7, 57, 20, 35, 54, 30, 50, 61, 9, 10, 49, 23, 47, 8, 59, 2, 41, 51, 18, 60, 0, 31, 1, 25, 15, 36, 26], [27, 42, 35, 31, 8, 12, 26, 17, 55, 28, 60, 38, 33, 22, 16, 13, 53, 36, 29, 14, 52, 50, 9, 15, 3, 25, 40, 11, 34, 59, 1, 18, 48, 5, 54, 47, 21, 56, 10, 32, 23, 58, 43, 61, 19, 49, 45, 44, 37, 57, 62, 51, 63, 41, 6, 7, 46, 39, 0, 4, 24, 2, 30, 20]], 411),
    (1099511627781, 100, 7, None): ([[28, 75, 30, 82, 21, 65, 26, 14, 81, 8, 89, 3, 86, 59, 18, 71, 9, 91, 53, 56, 1, 76, 2, 48, 19, 15, 6, 42, 58, 66, 46, 96, 45, 50, 62, 35, 13, 80, 7, 94, 92, 69, 37, 84, 87, 20, 70, 4, 34, 38, 47, 27, 0, 74, 99, 17, 44, 79, 68, 93, 78, 77, 72, 85, 98, 31, 83, 88, 55, 36, 11, 73, 64, 95, 22, 25, 39, 10, 52, 41, 60, 90, 57, 29, 32, 5, 24, 16, 97, 54, 51, 12, 33, 63, 23, 67, 49, 61, 40, 43], [25, 71, 1, 49, 75, 4, 41, 83, 86, 15, 60, 73, 67, 7, 47, 84, 11, 68, 2, 20, 33, 52, 90, 78, 13, 27, 87, 28, 66, 9, 29, 58, 48, 65, 92, 59, 16, 37, 39, 93, 62, 3, 5, 81, 6, 50, 96, 57, 10, 76, 85, 61, 14, 18, 56, 36, 40, 43, 38, 30, 34, 21, 94, 32, 55, 74, 77, 80, 46, 99, 0, 35, 22, 97, 24, 70, 88, 42, 12, 44, 89, 23, 91, 17, 53, 95, 19, 79, 31, 51, 45, 98, 26, 63, 72, 8, 64, 54, 69, 82]], 88),
    (1099511627781, 10, 4, 0): ([[3, 7, 5, 2, 0, 8, 1, 6, 9, 4], [1, 3, 2, 7, 5, 9, 0, 6, 4, 8]], 411),
}


def test_shuffled_order_is_pytorchs_under_several_seeds_and_sizes():
    assert eval(gradcli_output(_SWEEP)) == ORACLE_ORDERS


def test_random_split_orders_are_pytorchs():
    source = ("import torch\nfrom torch.utils.data import random_split\ntorch.manual_seed(11)\n"
              "print([s.indices for s in random_split(range(9), [0.4, 0.4, 0.2])])\n"
              "g = torch.Generator().manual_seed(2)\nprint([s.indices for s in random_split(range(6), [1, 5], g)])\n")
    # from PyTorch 2.13
    assert gradcli_output(source) == "[[0, 8, 2, 1], [7, 3, 5, 4], [6]]\n[[0], [3, 1, 2, 4, 5]]\n"


_IMPORT = "import torch\nfrom torch.utils.data import DataLoader, TensorDataset, Dataset\n"


@pytest.mark.parametrize("source, message", [
    # worker processes are emulated in the script's process over a map-style dataset, not over an iterable one
    ("class S(torch.utils.data.IterableDataset):\n    def __iter__(self):\n        return iter(range(3))\n"
     "l = DataLoader(S(), num_workers=2)\nprint(l.prefetch_factor)\niter(l)",
     "NotImplementedError: gradcli does not implement torch.utils.data.DataLoader workers (num_workers > 0) over an "
     "IterableDataset"),
    # PyTorch's own checks come first, in its order
    ("DataLoader(TensorDataset(torch.ones(3)), num_workers=2, batch_size=None, drop_last=True)",
     "ValueError: batch_size=None option disables auto-batching and is mutually exclusive with drop_last"),
    ("DataLoader(TensorDataset(torch.ones(3)), num_workers=2, prefetch_factor=-1)",
     "ValueError: prefetch_factor option should be non-negative"),
    ("DataLoader(TensorDataset(torch.ones(3)), multiprocessing_context='spawn')",
     "ValueError: multiprocessing_context can only be used with multi-process loading (num_workers > 0), but "
     "got num_workers=0"),
    ("DataLoader(TensorDataset(torch.ones(3)), num_workers=1, multiprocessing_context='thread')",
     "ValueError: multiprocessing_context option should specify a valid start method in ['fork', 'spawn', "
     "'forkserver'], but got multiprocessing_context='thread'"),
    ("DataLoader(TensorDataset(torch.ones(3)), num_workers=1, multiprocessing_context=3)",
     "TypeError: multiprocessing_context option should be a valid context object or a string specifying the "
     "start method, but got multiprocessing_context=3"),
    ("iter(DataLoader(TensorDataset(torch.ones(3)), timeout=1))",
     "AssertionError: _SingleProcessDataLoaderIter requires timeout == 0"),
    ("DataLoader(TensorDataset(torch.ones(3))).batch_size = 2",
     "ValueError: batch_size attribute should not be set after DataLoader is initialized"),
    ("class L(DataLoader):\n    pass\nL(TensorDataset(torch.ones(3))).dataset = []",
     "ValueError: dataset attribute should not be set after L is initialized"),
    ("next(iter(DataLoader([None, None])))",
     "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
     "<class 'NoneType'>"),
    ("next(iter(DataLoader([torch.ones(2), torch.ones(3)], batch_size=2)))",
     "RuntimeError: stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1"),
    ("next(iter(DataLoader([[1, 2], [3]], batch_size=2)))",
     "RuntimeError: each element in list of batch should be of equal size"),
    ("DataLoader(TensorDataset(torch.ones(0)), shuffle=True)",
     "ValueError: num_samples should be a positive integer value, but got num_samples=0"),
    ("TensorDataset(torch.ones(2), torch.ones(3))", "AssertionError: Size mismatch between tensors"),
    ("class D(Dataset):\n    pass\nlen(D())", "TypeError: object of type 'D' has no len()"),
])
def test_errors_are_pytorchs(source, message):
    assert error_line(_IMPORT + source) == message


def test_options_pytorch_ignores_without_workers_are_ignored():
    # from PyTorch 2.13 on a machine without an accelerator: pin_memory only warns, worker_init_fn goes
    # unused, and the loader's other attributes may be set after it is made (a timeout only when iterated)
    result = run_script(_IMPORT + "l = DataLoader(TensorDataset(torch.arange(3.)), batch_size=2, pin_memory=True, "
                        "worker_init_fn=print, timeout=5)\nprint(l.timeout)\nl.timeout = 0\n"
                        "print(list(l), l.pin_memory, l.num_workers, l.prefetch_factor, l.timeout)\n")
    assert result.error is None
    assert result.out == "5\n[[tensor([0., 1.])], [tensor([2.])]] True 0 None 0\n"
    assert "UserWarning: 'pin_memory' argument is set as true but no accelerator is found, then device pinned " \
           "memory won't be used." in result.err


# What a script may not reach through the loader: Python's internals behind its objects and functions.
_SETUP = _IMPORT + "l = DataLoader(TensorDataset(torch.ones(3)), shuffle=True)\n"
ESCAPES = [
    ("l.collate_fn.__globals__", "AttributeError: 'function' object attribute '__globals__' is outside gradcli's "
                                 "language"),
    ("l.collate_fn.__code__", "AttributeError: 'function' object attribute '__code__' is outside gradcli's language"),
    ("iter(l)._batches", "AttributeError: '_LoaderIter' object attribute '_batches' is outside gradcli's language"),
    ("iter(l.sampler).gi_frame", "AttributeError: 'generator' object attribute 'gi_frame' is outside gradcli's "
                                 "language"),
    ("iter(l.batch_sampler).gi_code", "AttributeError: 'generator' object attribute 'gi_code' is outside gradcli's "
                                      "language"),
    ("l.__iter__.__func__", "AttributeError: 'method' object attribute '__func__' is outside gradcli's language"),
    ("l.__dict__", "AttributeError: 'DataLoader' object attribute '__dict__' is outside gradcli's language"),
    ("type(l).__mro__", "AttributeError: type object 'DataLoader' attribute '__mro__' is outside gradcli's language"),
    ("type(l).__init__.__globals__", "AttributeError: 'function' object attribute '__globals__' is outside "
                                     "gradcli's language"),
    ("Dataset.__subclasses__()", "AttributeError: type object 'Dataset' attribute '__subclasses__' is outside "
                                 "gradcli's language"),
    ("l.dataset.tensors.__reduce__", "AttributeError: 'tuple' object attribute '__reduce__' is outside gradcli's "
                                    "language"),
    ("torch.utils.cpp_extension", "AttributeError: module 'torch.utils' attribute 'cpp_extension' is outside "
                                  "gradcli's language: scripts cannot reach files, processes or the network"),
    ("class D(Dataset):\n    def __getitem__(self, i):\n        return i.__reduce__\n"
     "next(iter(DataLoader(D(), sampler=[0])))",
     "AttributeError: 'int' object attribute '__reduce__' is outside gradcli's language"),
    ("class D(Dataset):\n    def __getattribute__(self, name):\n        pass",
     "SyntaxError: defining __getattribute__ in a class is not part of gradcli's language"),
    ("from torch.utils.data import random_split\nrandom_split(range(10**12), [0.5, 0.5])",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you "
     "tried to allocate 8000000000000 bytes. Error code 12 (Cannot allocate memory)"),
    ("class H(Dataset):\n    def __len__(self):\n        return 10**12\n"
     "for b in DataLoader(H(), shuffle=True):\n    pass",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you "
     "tried to allocate 8000000000000 bytes. Error code 12 (Cannot allocate memory)"),
]


@pytest.mark.parametrize("source, message", ESCAPES, ids=[s for s, _ in ESCAPES])
def test_escape_is_refused(source, message):
    assert error_line(_SETUP + source) == message


def test_a_huge_batch_stops_at_the_list_bound():
    source = (_IMPORT + "class H(Dataset):\n    def __len__(self):\n        return 10**12\n"
              "    def __getitem__(self, i):\n        return 0\n"
              "for b in DataLoader(H(), batch_size=10**12):\n    pass\n")
    before, STATE.max_items = STATE.max_items, 1000      # the bound, lowered: reaching it stays quick
    try:
        assert error_line(source) == ("MemoryError: a list of more than 1000 items is too large (gradcli allows at "
                                      "most 1000)")
    finally:
        STATE.max_items = before
