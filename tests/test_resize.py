"""Tensor.resize_ and resize_as_ in no-grad and inference mode, and where gradcli differs from PyTorch (the
elements a grown storage adds, the earlier views of a tensor whose own storage grows)."""

from conftest import run_script

INFERENCE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")


def test_resize_in_no_grad_and_inference_mode_as_pytorch():
    # PyTorch 2.13 prints exactly this (checked with the oracle): an inference tensor is resized, then the
    # version bump outside inference mode fails; a resize to its own size changes nothing and passes
    source = '# t\nimport torch\nx = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    try:\n        x.resize_(2)\n    except RuntimeError as e:\n        print(e)\nwith torch.inference_mode():\n    y = torch.arange(3.)\ntry:\n    y.resize_(3)\nexcept RuntimeError as e:\n    print(e)\nwith torch.inference_mode():\n    print(y.resize_(2), y.resize_(3))\ntry:\n    y.resize_(5)\nexcept RuntimeError as e:\n    print(e)\nprint(y.shape, y[:3])\n'
    r = run_script(source)
    assert r.error is None
    assert r.out == ("cannot resize variables that require grad\n"
                     "tensor([0., 1., 2.]) tensor([0., 1., 2.])\n"
                     f"{INFERENCE}\n"
                     "torch.Size([5]) tensor([0., 1., 2.])\n")


def test_a_grown_storage_adds_zeros_where_pytorch_leaves_memory_uninitialised():
    # PyTorch's new elements are whatever the allocator hands back (they differ from run to run)
    r = run_script("import torch\nx = torch.arange(3.)\nx.resize_(5)\nprint(x)\ny = torch.ones(2, 2)\n"
                   "y.resize_(3, 2)\nprint(y)\n")
    assert r.out == "tensor([0., 1., 2., 0., 0.])\ntensor([[1., 1.],\n        [1., 1.],\n        [0., 0.]])\n"


def test_a_view_grown_past_its_storage_grows_its_base_but_earlier_views_of_a_grown_tensor_keep_the_old_one():
    # PyTorch: x sees v's writes (as here), and x2 sees x's (not here: gradcli's documented difference)
    r = run_script("import torch\nx = torch.arange(3.)\nv = x[1:]\nv.resize_(5)\nv.fill_(7)\nprint(x)\n"
                   "x = torch.arange(3.)\nx2 = x.view(3)\nx.resize_(5)\nx.fill_(9)\nprint(x2)\n")
    assert r.out == "tensor([0., 7., 7.])\ntensor([0., 1., 2.])\n"
