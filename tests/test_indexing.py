"""Indexing through the language: the issue's examples end to end (the stored PyTorch cases in
tests/indexing/ cover the combinations; these check that scripts reach the same code)."""

from __future__ import annotations

from conftest import error_line, run_script


def test_an_int_after_an_ellipsis_indexes_the_last_dim():
    out = run_script("import torch\n"
                     "x = torch.arange(18.).reshape(2, 3, 3).requires_grad_()\n"
                     "y = x[1, ..., 0]\n"
                     "print(y)\n"
                     "y.sum().backward()\n"
                     "print(x.grad[1])\n").out
    assert out == ("tensor([ 9., 12., 15.], grad_fn=<SelectBackward0>)\n"
                   "tensor([[1., 0., 0.],\n        [1., 0., 0.],\n        [1., 0., 0.]])\n")


def test_an_index_out_of_bounds_names_its_dim_and_size():
    assert error_line("import torch\nx = torch.zeros(2, 3)\nx[0, 5]\n") == \
        "IndexError: index 5 is out of bounds for dimension 1 with size 3"
    assert error_line("import torch\nx = torch.zeros(2, 3)\nx[0, 5] = 1.\n") == \
        "IndexError: index 5 is out of bounds for dimension 1 with size 3"


def test_writing_a_number_a_dtype_cannot_hold_fails_as_in_pytorch():
    assert error_line("import torch\nx = torch.zeros(2, dtype=torch.long)\nx[0] = 2**63\n") == \
        "ValueError: Overflow when unpacking long long"
    assert error_line("import torch\nx = torch.zeros(2, dtype=torch.uint8)\nx[0] = 256\n") == \
        "RuntimeError: value cannot be converted to type uint8_t without overflow"


def test_augmented_assignment_through_an_index_writes_and_differentiates():
    out = run_script("import torch\n"
                     "a = torch.ones(2, 3, requires_grad=True)\n"
                     "x = a * 1\n"
                     "v = torch.tensor([10., 20.], requires_grad=True)\n"
                     "x[0, 1:] += v * 2\n"
                     "print(x)\n"
                     "(x * torch.arange(6.).reshape(2, 3)).sum().backward()\n"
                     "print(a.grad, v.grad)\n").out
    assert out == ("tensor([[ 1., 21., 41.],\n        [ 1.,  1.,  1.]], grad_fn=<CopySlices>)\n"
                   "tensor([[0., 1., 2.],\n        [3., 4., 5.]]) tensor([2., 4.])\n")


def test_views_of_an_inference_tensor_refuse_in_place_writes_outside_inference_mode():
    # PyTorch: a view of an inference tensor is an inference tensor, wherever the view is made
    message = ("RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed.You can "
               "make a clone to get a normal tensor before doing inplace update.See "
               "https://github.com/pytorch/rfcs/pull/17 for more details.")
    for statement in ("t.view(3).add_(1)", "t[0].add_(1)", "t[0] = 1.0", "t[[0]] = 1.0", "t[...] = 1.0"):
        source = f"import torch\nwith torch.inference_mode():\n    t = torch.zeros(3)\n{statement}\n"
        assert error_line(source) == message, statement


def test_writing_through_a_view_made_in_no_grad_mode_names_the_view_setitem_made():
    tail = (" is being modified inplace with grad mode enabled. Given that this use case is ambiguous and "
            "error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace "
            "either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside "
            "(if you want the inplace to be tracked).")
    setup = "import torch\ny = torch.zeros(3, requires_grad=True)\nwith torch.no_grad():\n    v = y[:2]\n"
    for key, op in (("0", "Select"), ("1:", "Slice"), ("None", "Unsqueeze")):
        assert error_line(setup + f"v[{key}] = 1.\n") == \
            f"RuntimeError: Output 0 of {op} is a view of a view which was created in no_grad mode and" + tail
    for key in ("...", "[0]", ":", "0:5"):
        assert error_line(setup + f"v[{key}] = 1.\n") == "RuntimeError: A view was created in no_grad mode and" + tail


def test_a_row_of_an_expanded_tensor_can_be_written_but_a_column_cannot():
    out = run_script("import torch\nx = torch.zeros(3).expand(2, 3)\nx[0] = 1.\nprint(x)\n").out
    assert out == "tensor([[1., 1., 1.],\n        [1., 1., 1.]])\n"
    assert error_line("import torch\nx = torch.zeros(3).expand(2, 3)\nx[:, 0] = 1.\n") == (
        "RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single "
        "memory location. Please clone() the tensor before performing the operation.")


def test_writing_into_a_row_of_a_transposed_result_records_it_on_the_base():
    # a.t() * 1 keeps the transposed layout (not C-contiguous); the write still reaches its history
    out = run_script("import torch\n"
                     "a = torch.ones(2, 3, requires_grad=True)\n"
                     "y = a.t() * 1\n"
                     "v = torch.tensor([5., 6.], requires_grad=True)\n"
                     "y[0] = v\n"
                     "print(y)\n"
                     "(y * torch.arange(6.).reshape(3, 2)).sum().backward()\n"
                     "print(a.grad, v.grad)\n").out
    assert out == ("tensor([[5., 6.],\n        [1., 1.],\n        [1., 1.]], grad_fn=<CopySlices>)\n"
                   "tensor([[0., 2., 4.],\n        [0., 3., 5.]]) tensor([0., 1.])\n")
