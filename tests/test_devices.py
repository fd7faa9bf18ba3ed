"""Devices and the default dtype: PyTorch's CPU build's values and errors, a default dtype that lasts one session,
and nothing of Python reachable through a device. The printed results are pinned by tests/conformance/devices_*."""

import pytest

from conftest import error_line, gradcli_output
from gradcli.engine import dtypes

T = "import torch\n"


@pytest.mark.parametrize("source, message", [
    ("torch.ones(2).to('cuda')", "AssertionError: Torch not compiled with CUDA enabled"),
    ("torch.zeros(2, device=torch.device('cuda', 0))", "AssertionError: Torch not compiled with CUDA enabled"),
    ("torch.randperm(4, device='cuda:1')", "AssertionError: Torch not compiled with CUDA enabled"),
    ("torch.FloatTensor([1], device='cuda')", "AssertionError: Torch not compiled with CUDA enabled"),
    ("torch.ones(2).cuda()", "AssertionError: Torch not compiled with CUDA enabled"),
    ("torch.cuda.current_device()", "AssertionError: Torch not compiled with CUDA enabled"),
    ("torch.set_default_device('cuda')\ntorch.zeros(2)", "AssertionError: Torch not compiled with CUDA enabled"),
    ("with torch.device('cuda'):\n    torch.nn.Linear(2, 2)", "AssertionError: Torch not compiled with CUDA enabled"),
    ("with torch.device('cuda'):\n    torch.zeros(-0.0)",
     "TypeError: zeros(): argument 'size' (position 1) must be tuple of ints, not float"),
    ("torch.device('gpu')", "RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, "
                            "ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at "
                            "start of device string: gpu"),
    ("torch.device('cuda:01')", "RuntimeError: Invalid device string: 'cuda:01'"),
    ("torch.ones(2, device='mps')",
     "NotImplementedError: gradcli computes on the CPU and the meta device only, not on device 'mps'"),
    ("torch.set_default_dtype(torch.int32)", "TypeError: only floating-point types are supported as the default type"),
    ("torch.FloatTensor(torch.ones(2, dtype=torch.int64))",
     "TypeError: expected TensorOptions(dtype=float, device=cpu, layout=Strided, requires_grad=false (default), "
     "pinned_memory=false (default), memory_format=(nullopt)) (got TensorOptions(dtype=long int, device=cpu, "
     "layout=Strided, requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))"),
])
def test_errors_are_pytorchs(source, message):
    assert error_line(T + source) == message


def test_a_default_device_lasts_one_session_and_a_block_puts_it_back():
    source = T + ("with torch.device('cuda'):\n    with torch.device('cpu'):\n        print(torch.ones(1))\n"
                  "    try:\n        torch.ones(1)\n    except AssertionError as e:\n        print(e)\n"
                  "print(torch.get_default_device(), torch.zeros(1))\ntorch.set_default_device('cuda')\n")
    assert gradcli_output(source) == "tensor([1.])\nTorch not compiled with CUDA enabled\ncpu tensor([0.])\n"
    assert gradcli_output(T + "print(torch.get_default_device(), torch.ones(1))\n") == "cpu tensor([1.])\n"


def test_the_default_dtype_lasts_one_session():
    try:
        assert gradcli_output(T + "torch.set_default_dtype(torch.float64)\nprint(torch.ones(1).dtype)\n") == \
            "torch.float64\n"
        assert gradcli_output(T + "print(torch.ones(1).dtype, torch.tensor(0.5).dtype)\n") == \
            "torch.float32 torch.float32\n"
    finally:        # the engine's own tests on this worker run without a session to reset it
        dtypes.set_default_float(dtypes.float32)


def test_backend_flags_and_the_matmul_precision_last_one_session():
    # a script's torch.backends switches, float32 matmul precision and determinism read back as set, then the
    # next session starts from PyTorch's defaults (gradcli.language.backends.reset)
    assert gradcli_output(T + "torch.backends.cudnn.benchmark = True\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
                          "torch.use_deterministic_algorithms(True)\ntorch.backends.cuda.enable_math_sdp(False)\n"
                          "print(torch.backends.cudnn.benchmark, torch.get_float32_matmul_precision(), "
                          "torch.are_deterministic_algorithms_enabled(), torch.backends.cuda.math_sdp_enabled())\n") \
        == "True high True False\n"
    assert gradcli_output(T + "print(torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.allow_tf32, "
                          "torch.get_float32_matmul_precision(), torch.are_deterministic_algorithms_enabled(), "
                          "torch.backends.cuda.math_sdp_enabled())\n") == "False False highest False True\n"


@pytest.mark.parametrize("source, message", [
    ("torch.backends.cudnn.__dict__", "AttributeError: module 'torch.backends.cudnn' attribute '__dict__' is outside "
                                      "gradcli's language"),
    ("torch.device('cpu').__reduce__", "AttributeError: 'torch.device' object attribute '__reduce__' is outside "
                                      "gradcli's language"),
    ("torch.device('cpu').type.__reduce__", "AttributeError: 'str' object attribute '__reduce__' is outside gradcli's "
                                           "language"),
    ("torch.cuda.__dict__", "AttributeError: module 'torch.cuda' attribute '__dict__' is outside gradcli's language"),
    ("torch.device('cpu').type = 'cuda'", "AttributeError: 'torch.device' object attribute 'type' is read-only"),
    ("torch.FloatTensor.__globals__", "AttributeError: type object 'FloatTensor' has no attribute '__globals__'"),
    ("torch.FloatTensor.__call__.__globals__", "AttributeError: type object 'FloatTensor' attribute '__call__' is "
                                               "outside gradcli's language"),
])
def test_escape_is_refused(source, message):
    assert error_line(T + source) == message
