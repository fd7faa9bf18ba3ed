"""The meta device (gradcli.engine.meta): one element of memory per tensor whatever its shape, for the tensors
factories make and for every op's result, within any --max-memory; no random numbers drawn; the CPU path
untouched. What meta tensors print and the errors they give are pinned by the engine cases
(tests/engine_cases/meta_device.txt) and the goldens tests/conformance/meta_*.grad."""

from __future__ import annotations

import time

import numpy as np
import pytest

from conftest import error_line, gradcli_output, run_script
from gradcli.engine import meta
from gradcli.engine.tensor import Tensor

T = "import torch\nimport torch.nn.functional as F\n"
HUGE = "big = torch.empty(10**6, 10**6, device='meta')\n"


def _one_element(a: np.ndarray) -> bool:
    """The array repeats one element: every stride 0 (or at most one element), whatever the shape."""
    return isinstance(a, meta.MetaArray) and (a.size <= 1 or not any(a.strides))


def test_a_huge_meta_tensor_is_made_and_printed_at_once():
    start = time.perf_counter()
    out = gradcli_output(T + HUGE + "print(big)\nprint(big.shape, big.numel(), big.nbytes)\n")
    assert time.perf_counter() - start < 2.0
    assert out == ("tensor(..., device='meta', size=(1000000, 1000000))\n"
                   "torch.Size([1000000, 1000000]) 1000000000000 4000000000000\n")


@pytest.mark.parametrize("make", [
    "torch.empty(10**6, 10**6, device='meta')", "torch.zeros((10**6, 10**6), device='meta')",
    "torch.ones(10**6, 10**6, dtype=torch.float64, device='meta')", "torch.full((10**6, 10**6), 2., device='meta')",
    "torch.rand(10**6, 10**6, device='meta')", "torch.randn(10**6, 10**6, device='meta')",
    "torch.randint(0, 5, (10**6, 10**6), device='meta')", "torch.arange(10**12, device='meta')",
    "torch.eye(10**6, device='meta')", "torch.linspace(0, 1, 10**12, device='meta')",
    "torch.empty_like(torch.empty(10**6, 10**6, device='meta'))",
    "torch.randn_like(torch.empty(10**6, 10**6, device='meta'))",
    "torch.empty(2, 3, device='meta').new_zeros(10**6, 10**6)",
    "torch.nn.Linear(10**6, 10**6, device='meta').weight",
    "torch.nn.Embedding(10**7, 10**5, device='meta').weight",
])
def test_factories_keep_one_element_within_a_small_budget(make, small_budget):
    result = run_script(T + f"x = {make}\nprint(x.shape)\n")
    assert result.error is None, result.error
    assert result.out.startswith("torch.Size([")


OPS = ["big * 2 + 1", "big * big", "big.exp().sqrt()", "big.sum()", "big.sum(0)", "big.mean(1)", "big.max()",
       "big.max(1).indices", "big.argmax(1)", "big.std()", "big.norm()", "big @ big", "big.t()", "big.view(-1)",
       "big.reshape(10**4, -1)", "big[5:10]", "big[0]", "big[0].expand(10**6, 10**6)", "F.relu(big)",
       "F.softmax(big, 1)", "F.mse_loss(big, big)", "torch.cat([big, big])", "torch.stack([big, big])",
       "big.clone()", "big.t().contiguous()", "big.double()", "big == big", "torch.where(big > 0, big, 0.)",
       "big.cumsum(0)", "torch.zeros_like(big)", "big.add_(1)"]


@pytest.mark.parametrize("op", OPS)
def test_op_results_on_huge_meta_tensors_keep_one_element(op, small_budget):
    start = time.perf_counter()
    result = run_script(T + HUGE + f"y = {op}\nprint(y.device)\n")
    assert result.error is None, result.error
    assert result.out == "meta\n"
    assert time.perf_counter() - start < 2.0


def test_a_linear_layer_of_a_trillion_weights_runs_forward_and_backward(small_budget):
    out = gradcli_output(T + "l = torch.nn.Linear(10**6, 10**6, device='meta')\n"
                         "y = l(torch.ones(10, 10**6, device='meta'))\ny.sum().backward()\n"
                         "print(y)\nprint(l.weight.grad)\n")
    assert out == ("tensor(..., device='meta', size=(10, 1000000), grad_fn=<AddmmBackward0>)\n"
                   "tensor(..., device='meta', size=(1000000, 1000000))\n")


def test_tensors_keep_one_element_however_an_op_laid_its_result_out():
    """Tensor() re-strides a meta array that an op computed in full: no meta tensor holds a full buffer."""
    full = np.zeros((300, 400), np.float32).view(meta.MetaArray)
    t = Tensor(full)
    assert _one_element(t._a) and t._a.shape == (300, 400)
    x = Tensor(meta.meta_full((50, 60), 1.0, np.float32))
    for y in (x * 2, x.t() @ x, x.sum(0), x.clone(), x[::2], x.exp(), x.softmax(1), x.to(dtype=None)):
        assert _one_element(y._a), y


def test_the_cpu_path_makes_no_meta_arrays():
    x = Tensor(np.ones((2, 3), np.float32))
    assert (x * 2)._a.__class__ is np.ndarray and not x.is_meta and x.device.type == "cpu"


def test_meta_factories_draw_nothing_from_the_generator():
    source = T + ("torch.manual_seed(0)\nm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Conv2d(1, 2, 3), "
                  "torch.nn.LSTM(2, 3), torch.nn.Embedding(5, 2)).to('meta')\n"
                  "torch.manual_seed(0)\ntorch.nn.Linear(3, 2, device='meta'); torch.randn(5, device='meta')\n"
                  "torch.rand_like(torch.ones(3, device='meta')); torch.ones(3, device='meta').uniform_()\n"
                  "F.dropout(torch.ones(4, device='meta'), 0.5)\nprint(torch.rand(2))\n")
    assert gradcli_output(source) == gradcli_output(T + "torch.manual_seed(0)\nprint(torch.rand(2))\n")


def test_to_empty_gives_zeros_where_pytorch_leaves_memory_uninitialised():
    out = gradcli_output(T + "l = torch.nn.Linear(3, 2, device='meta')\nl.to_empty(device='cpu')\n"
                         "print(l.weight, torch.empty_like(torch.ones(2, device='meta'), device='cpu'))\n")
    assert out == ("Parameter containing:\ntensor([[0., 0., 0.],\n        [0., 0., 0.]], requires_grad=True) "
                   "tensor([0., 0.])\n")


def test_a_default_meta_device_lasts_one_session():
    assert gradcli_output(T + "torch.set_default_device('meta')\nprint(torch.ones(1))\n") == \
        "tensor(..., device='meta', size=(1,))\n"
    assert gradcli_output(T + "print(torch.ones(1), torch.get_default_device())\n") == "tensor([1.]) cpu\n"
    source = T + "with torch.device('meta'):\n    print(torch.ones(1))\nprint(torch.ones(1))\n"
    assert gradcli_output(source) == "tensor(..., device='meta', size=(1,))\ntensor([1.])\n"


@pytest.mark.parametrize("source, message", [
    ("torch.ones(2, device='meta').numpy()",
     "AttributeError: 'Tensor' object attribute 'numpy' is outside gradcli's language: scripts cannot reach numpy "
     "arrays (use .tolist() or .item())"),
    ("torch.ones(2, device='meta').tolist()", "NotImplementedError: Cannot copy out of meta tensor; no data!"),
    ("torch.ones(1, device='meta').item()", "RuntimeError: Tensor.item() cannot be called on meta tensors"),
    ("print(torch.ones(2, device='meta') + torch.ones(2))",
     "RuntimeError: Tensor on device cpu is not on the expected device meta!"),
])
def test_data_access_fails_with_pytorchs_words(source, message):
    assert error_line(T + source) == message


def test_the_diagnostics_show_meta_gradients_and_check_none(capsys, tmp_path):
    """`gradcli explain` shows a meta gradient as PyTorch prints the tensor; --check-grads has no values to perturb
    and says so (the run itself still prints what PyTorch prints)."""
    from gradcli import cli
    script = tmp_path / "m.grad"
    script.write_text("import torch\nw = torch.ones(3, device='meta', requires_grad=True)\nloss = (w * 2).sum()\n"
                      "loss.backward()\nprint(w.grad)\n")
    assert cli.main(["explain", str(script), "w"]) == 0
    out = capsys.readouterr().out
    assert "    in   tensor(..., device='meta', size=())\n" in out
    assert out.endswith("w.grad after this call: tensor(..., device='meta', size=(3,))\n")
    assert cli.main(["run", "--check-grads", str(script)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "tensor(..., device='meta', size=(3,))\n"
    assert "not checked: meta tensors have no values to differentiate numerically" in captured.err


# Layers whose kernels loop, gather or lay rows out (normalisations, pooling, interpolation, padding, unfolding, the
# losses' and softmax's backward sums, attention): on a meta input they compute shapes only. A full-size temporary
# of any of them would be 256 MB (64 x 256 x 64 x 64 float32), which tracemalloc would see.
LAYERS = [
    "nn.GroupNorm(32, 256, device='meta')(x)", "nn.BatchNorm2d(256, device='meta')(x)",
    "nn.BatchNorm2d(256, device='meta').eval()(x)", "nn.LayerNorm(64, device='meta')(x)",
    "F.layer_norm(x.half(), (64,))", "nn.InstanceNorm2d(256, affine=True, device='meta')(x)",
    "F.max_pool2d(x, 3, 2, 1)", "F.avg_pool2d(x, 2)", "F.adaptive_avg_pool2d(x, (7, 5))",
    "F.adaptive_max_pool2d(x, 3)", "F.interpolate(x, scale_factor=2)",
    "F.interpolate(x, scale_factor=2, mode='bilinear')", "F.interpolate(x, size=(70, 90), mode='bicubic')",
    "F.pixel_shuffle(x, 2)", "F.pixel_unshuffle(x, 2)", "F.pad(x, (3, 3, 2, 2), mode='reflect')",
    "F.pad(x, (1, 2, 3, 4), mode='replicate')", "F.unfold(x, 3)", "F.fold(F.unfold(x, 2, stride=2), (64, 64), 2, stride=2)",
    "F.cross_entropy(x, torch.zeros(64, 64, 64, dtype=torch.long, device='meta'))",
    "F.cross_entropy(x, torch.zeros(64, 64, 64, dtype=torch.long, device='meta'), reduction='none')",
    "F.cross_entropy(x.flatten(1), torch.zeros(64, dtype=torch.long, device='meta'), reduction='none')",
    "F.log_softmax(x, 1)", "F.softmax(x, 1)",
    "nn.MultiheadAttention(64, 8, batch_first=True, device='meta')(x[0], x[0], x[0])[0]",
]


@pytest.mark.parametrize("layer", LAYERS)
def test_layers_on_meta_inputs_make_no_full_size_temporaries(layer):
    import tracemalloc
    source = (T + "import torch.nn as nn\nx = torch.empty(64, 256, 64, 64, device='meta', requires_grad=True)\n"
              f"y = {layer}\ny.sum().backward()\nprint(y.device, x.grad.shape)\n")
    tracemalloc.start()
    try:
        out = gradcli_output(source)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == "meta torch.Size([64, 256, 64, 64])\n"
    assert peak < 32 << 20, f"{peak >> 20} MB"
