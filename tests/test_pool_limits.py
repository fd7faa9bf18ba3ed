"""Pooling within the memory budget (gradcli/engine/budget.py): a result or a window buffer past it fails at
once with PyTorch's allocator message (the result's bytes where PyTorch allocates the result), never by
allocating; and a script reaches nothing of Python through the pooling functions and layers."""

from __future__ import annotations

import time

import pytest

from conftest import error_line, run_script
from test_limits import budget  # noqa: F401  -- the fixture setting --max-memory for one test

ALLOC = ("RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
         "you tried to allocate {} bytes. Error code 12 (Cannot allocate memory)")
PRELUDE = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@pytest.mark.parametrize("expression, nbytes", [        # PyTorch 2.13 says these, word for word
    ("F.adaptive_avg_pool2d(torch.ones(1, 1, 2, 2), (10**6, 10**6))", 4 * 10**12),
    ("F.adaptive_max_pool2d(torch.ones(1, 1, 2, 2), (10**6, 10**6))", 4 * 10**12),
    ("F.adaptive_avg_pool1d(torch.ones(1, 2), 10**13)", 4 * 10**13),
    ("nn.AdaptiveAvgPool2d(10**7)(torch.ones(1, 3, 3))", 4 * 10**14),
    ("F.adaptive_avg_pool3d(torch.ones(1, 1, 2, 2, 2), (10**4, 10**4, 10**4))", 4 * 10**12),
    ("F.adaptive_max_pool3d(torch.ones(1, 1, 2, 2, 2), (10**4, 10**4, 10**4))", 4 * 10**12),
    ("F.max_unpool2d(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 2, 2).long(), 10**6)", 16 * 10**12),
    ("F.max_unpool3d(torch.ones(1, 1, 2, 2, 2), torch.zeros(1, 1, 2, 2, 2).long(), 10**4)", 32 * 10**12),
])
def test_a_huge_pooling_result_fails_at_once(expression, nbytes):
    started = time.process_time()     # CPU time: a loaded machine stretches the wall clock, not this
    assert error_line(PRELUDE + f"y = {expression}") == ALLOC.format(nbytes)
    assert time.process_time() - started < 5


def test_window_buffers_count_against_the_budget(budget):
    """Overlapping windows (stride 1, a big kernel) need a buffer many times the input's size: refused,
    with the budget named, before numpy allocates it. Max pooling needs none (it scans one kernel offset
    at a time), so a kernel whose windows would take 20x the budget runs."""
    budget(64 << 20)
    assert run_script(PRELUDE + "x = torch.zeros(1, 1, 300, 300)\n"
                      "print(F.max_pool2d(x, 41, stride=1, padding=20).shape)").out == "torch.Size([1, 1, 300, 300])\n"
    line = error_line(PRELUDE + "x = torch.zeros(1, 4, 1000, 1000)\ny = F.adaptive_max_pool2d(x, (999, 999))")
    assert line.endswith("(gradcli's --max-memory is 64.0 MiB)")
    assert run_script(PRELUDE + "print(F.max_pool2d(torch.zeros(1, 1, 100, 100), 3, 1, 1).shape)").out == (
        "torch.Size([1, 1, 100, 100])\n")


@pytest.mark.parametrize("source, expected", [
    ("nn.MaxPool2d(2).__reduce__", "AttributeError: 'MaxPool2d' object attribute '__reduce__' is outside gradcli's "
                                  "language"),
    ("F.max_pool2d.__globals__", "AttributeError: 'function' object has no attribute '__globals__'"),
    ("nn.MaxPool2d(2).forward.__func__", "AttributeError: 'method' object attribute '__func__' is outside gradcli's "
                                         "language"),
    ("nn.AdaptiveAvgPool2d.__init__.__globals__", "AttributeError: 'function' object attribute '__globals__' is "
                                                  "outside gradcli's language"),
    ("F.max_pool2d(torch.ones(1, 2, 2), 2, return_indices=True)[1].numpy()",
     "AttributeError: 'Tensor' object attribute 'numpy' is outside gradcli's language: scripts cannot reach numpy "
     "arrays (use .tolist() or .item())"),
    ("F.max_pool2d(torch.ones(1, 2, 2, requires_grad=True), 2).grad_fn._saved_self.__reduce__",
     "AttributeError: 'Tensor' object attribute '__reduce__' is outside gradcli's language"),
])
def test_no_escape_through_pooling(source, expected):
    assert error_line(PRELUDE + f"y = {source}") == expected
