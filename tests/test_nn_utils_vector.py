"""torch.nn.utils.parameters_to_vector and vector_to_parameters: PyTorch's results and errors (checked
against PyTorch 2.13: the golden nn_utils_param_vector and the messages below), the autograd graph they
record, the memory the parameters share with the vector, and the language's walls around them."""

from __future__ import annotations

import pytest

from conftest import error_line, gradcli_output

PRELUDE = "import torch\nfrom torch.nn.utils import parameters_to_vector, vector_to_parameters\n"


@pytest.mark.parametrize("call, message", [
    ("parameters_to_vector([])", "ValueError: torch.cat(): expected a non-empty list of Tensors"),
    ("parameters_to_vector([1, 2])", "AttributeError: 'int' object has no attribute 'device'"),
    ("parameters_to_vector([torch.ones(2, 2).t()])",
     "RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension spans "
     "across two contiguous subspaces). Use .reshape(...) instead."),
    ("parameters_to_vector(5)", "TypeError: 'int' object is not iterable"),
    ("vector_to_parameters([1.0, 2.0], [torch.ones(2)])", "TypeError: expected torch.Tensor, but got: list"),
    ("vector_to_parameters(3, [])", "TypeError: expected torch.Tensor, but got: int"),
    ("vector_to_parameters(torch.ones(4), [torch.ones(2), 5])", "AttributeError: 'int' object has no attribute 'device'"),
    ("vector_to_parameters(torch.ones(4), [torch.ones(2, 3)])",
     "RuntimeError: shape '[2, 3]' is invalid for input of size 4"),
    ("parameters_to_vector([torch.ones(10**7)] * 1000)",
     "RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you "
     "tried to allocate 40000000000 bytes. Error code 12 (Cannot allocate memory)"),
])
def test_errors_are_pytorchs(call, message):
    assert error_line(PRELUDE + call) == message


def test_results_follow_cat_and_views():
    out = gradcli_output(PRELUDE + (
        "a = torch.ones(2, 2, requires_grad=True)\nb = torch.arange(3.)\n"
        "v = parameters_to_vector([a, b])\nprint(v, type(v.grad_fn).__name__)\n"
        "(v * torch.arange(7.)).sum().backward()\nprint(a.grad)\n"
        "print(parameters_to_vector([torch.ones(1), torch.ones(1, dtype=torch.float64)]).dtype)\n"
        "print(parameters_to_vector([torch.ones(1, dtype=torch.int64), torch.ones(1)]).dtype)\n"
        "print(parameters_to_vector(torch.ones(2, 3)).shape)\n"          # a tensor: its rows
        "with torch.no_grad():\n    print(parameters_to_vector([a]).requires_grad)\n"))
    assert out == ("tensor([1., 1., 1., 1., 0., 1., 2.], grad_fn=<CatBackward0>) CatBackward0\n"
                   "tensor([[0., 1.],\n        [2., 3.]])\n"
                   "torch.float64\ntorch.float32\ntorch.Size([6])\nFalse\n")


def test_written_parameters_share_the_vectors_memory_and_stay_leaves():
    out = gradcli_output(PRELUDE + (
        "w = torch.nn.Parameter(torch.zeros(2, 2))\nb = torch.nn.Parameter(torch.zeros(1))\n"
        "v = torch.arange(6.)\nvector_to_parameters(v, [w, b])\n"
        "print(w, b)\nv[0] = 9.0\nprint(w[0, 0].item(), w.is_leaf, w.requires_grad, w.grad is None)\n"
        "vector_to_parameters(torch.ones(4, dtype=torch.float64), [w])\nprint(w.dtype)\n"))
    assert out == ("Parameter containing:\ntensor([[0., 1.],\n        [2., 3.]], requires_grad=True) "
                   "Parameter containing:\ntensor([4.], requires_grad=True)\n"
                   "9.0 True True True\ntorch.float64\n")


@pytest.mark.parametrize("source", [
    "parameters_to_vector.__globals__",
    "vector_to_parameters.__closure__",
    "getattr(parameters_to_vector, '__code__')",
    "torch.nn.utils.parameters_to_vector.__wrapped__",
    "parameters_to_vector([torch.ones(1)]).grad_fn.__reduce__",
])
def test_no_escape_through_them(source):
    kind = error_line(PRELUDE + source).split(":")[0]
    assert kind == "AttributeError"
