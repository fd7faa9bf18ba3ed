"""torch.addmm, addmv, addr, baddbmm and addbmm beyond their golden (tests/conformance/linalg_addmm_family):
PyTorch's deprecated overloads and their one warning, in-place forms in the graph, and what a script cannot
reach through them. Expected outputs are PyTorch 2.13's."""

import pytest

from conftest import error_line, run_script

_DEPRECATED = """import torch
t = torch.tensor([[1., 2.], [3., 4.]]); v = torch.tensor([1., -1.]); B = t[None]
print(torch.addmm(2, t, t, t), torch.addmm(2, t, 3, t, t), t.addmm(0.5, t, t), t.addmm(2, 3, t, t))
print(torch.addmv(2, v, t, v), v.addmv(2, 3, t, v), torch.addr(2, t, 3, v, v), t.addr(2, v, v))
print(torch.baddbmm(2, B, B, B), B.baddbmm(2, 3, B, B), torch.addbmm(2, t, 3, B, B), t.clone().addmm_(2, t, t))
"""

_DEPRECATED_OUT = """tensor([[ 9., 14.],
        [21., 30.]]) tensor([[23., 34.],
        [51., 74.]]) tensor([[ 7.5000, 11.0000],
        [16.5000, 24.0000]]) tensor([[23., 34.],
        [51., 74.]])
tensor([ 1., -3.]) tensor([-1., -5.]) tensor([[ 5.,  1.],
        [ 3., 11.]]) tensor([[3., 3.],
        [5., 9.]])
tensor([[[ 9., 14.],
         [21., 30.]]]) tensor([[[23., 34.],
         [51., 74.]]]) tensor([[23., 34.],
        [51., 74.]]) tensor([[ 9., 14.],
        [21., 30.]])
"""

_WARNING = """<test>:3: UserWarning: This overload of addmm is deprecated:
\taddmm(Number beta, Tensor input, Tensor mat1, Tensor mat2, *, Tensor out = None)
Consider using one of the following signatures instead:
\taddmm(Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, Tensor out = None)
\taddmm(Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, Number alpha = 1, \
Tensor out = None) (Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/python_arg_parser.cpp:1841.)
"""


def test_deprecated_overloads_run_and_warn_once_per_process():
    # beta (and alpha) first by position, as PyTorch 0.x scripts wrote them: the same values, and PyTorch's
    # warning for the first such call only, whichever function made it
    result = run_script(_DEPRECATED)
    assert result.error is None
    assert result.out == _DEPRECATED_OUT
    assert result.err.startswith(_WARNING)
    assert result.err.count("UserWarning") == 1


@pytest.mark.parametrize("source, message", [
    # a deprecated overload's keyword form is no overload at all
    ("torch.addmm(2, t, t, t, beta=3)", "TypeError: addmm() received an invalid combination of arguments - got "
     "(int, Tensor, Tensor, Tensor, beta=int), but expected one of:\n * (Tensor input, Tensor mat1, Tensor mat2, *, "
     "Number beta = 1, Number alpha = 1, Tensor out = None)\n * (Tensor input, Tensor mat1, Tensor mat2, torch.dtype "
     "out_dtype, *, Number beta = 1, Number alpha = 1, Tensor out = None)\n"),
    # the engine's own keywords are not PyTorch's
    ("torch.addmm(t, t, t, inplace=(2, 2))", "TypeError: addmm() received an invalid combination of arguments - got "
     "(Tensor, Tensor, Tensor, inplace=tuple), but expected one of:\n * (Tensor input, Tensor mat1, Tensor mat2, *, "
     "Number beta = 1, Number alpha = 1, Tensor out = None)\n * (Tensor input, Tensor mat1, Tensor mat2, torch.dtype "
     "out_dtype, *, Number beta = 1, Number alpha = 1, Tensor out = None)\n"),
    ("t.addmm_(t, t, inplace=None)", "TypeError: addmm_() got an unexpected keyword argument 'inplace'"),
    # the out_dtype overload has no CPU kernel in PyTorch's build
    ("torch.baddbmm(t[None], t[None], t[None], torch.float32)",
     "NotImplementedError: Could not run 'aten::baddbmm.dtype' with arguments from the 'CPU' backend. This could be "
     "because the operator doesn't exist for this backend, or was omitted during the selective/custom build process "
     "(if using custom build)."),
    # a method read as a value (getattr) gets PyTorch's argument messages too
    ("getattr(t, 'addmv')('x')", "TypeError: addmv() received an invalid combination of arguments - got (str), but "
     "expected (Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1)"),
])
def test_pytorchs_argument_errors(source, message):
    assert error_line("import torch\nt = torch.ones(2, 2)\n" + source) == message


def test_in_place_forms_join_the_graph():
    source = """import torch
x = torch.ones(2, 2, requires_grad=True)
y = x * 2
v = y._version
y.addmm_(x, x, beta=0.5, alpha=3)
print(y.grad_fn.name(), y._version - v, y.grad_fn._saved_beta, y.grad_fn._saved_alpha)
y.sum().backward()
print(x.grad)
"""
    # from PyTorch 2.13
    assert run_script(source).out == "AddmmBackward0 1 0.5 3\ntensor([[13., 13.],\n        [13., 13.]])\n"


@pytest.mark.parametrize("source, message", [
    # as in PyTorch, where these are C functions with no such attributes
    ("torch.addmm.__globals__", "AttributeError: 'builtin_function_or_method' object has no attribute '__globals__'"),
    ("torch.addmm.func", "AttributeError: 'builtin_function_or_method' object has no attribute 'func'"),
    ("t.addmm.__func__", "AttributeError: 'builtin_function_or_method' object has no attribute '__func__'"),
    ("torch.baddbmm.__wrapped__", "AttributeError: 'builtin_function_or_method' object has no attribute "
                                  "'__wrapped__'"),
    # a node's saved values are PyTorch's names only
    ("torch.addmm(t, t, t).grad_fn._saved_c1", "AttributeError: 'AddmmBackward0' object has no attribute "
                                               "'_saved_c1'"),
    ("torch.addmm(t, t, t).grad_fn._saved_mat1._a", "AttributeError: 'Tensor' object has no attribute '_a'"),
    # the version counter is read-only
    ("t._version = 5", "AttributeError: attribute '_version' of 'torch._C.TensorBase' objects is not writable"),
])
def test_escapes_are_refused(source, message):
    assert error_line("import torch\nt = torch.ones(2, 2, requires_grad=True)\n" + source) == message
