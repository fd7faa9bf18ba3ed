"""A script's own optimiser (class MyOpt(torch.optim.Optimizer)), Tensor.type with legacy classes,
torch.device as a context manager and nn.Embedding's max_norm / scale_grad_by_freq / sparse: what the
goldens (nn_optimizer_subclass, tensor_type_device, nn_embedding_max_norm) cannot show: warnings, the
version counter, refusals and escape attempts."""

from __future__ import annotations

import pytest

from conftest import located_error, run_script

OPT = """import torch
class O(torch.optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {'lr': 0.1})
    def step(self):
        pass
w = torch.zeros(1, requires_grad=True)
o = O([w])
"""
_OUT = "AttributeError: {} attribute '{}' is outside gradcli's language"

# (expression on the optimiser o of class O, the error it ends in)
ESCAPES = [
    ("o.__dict__", _OUT.format("'O' object", "__dict__")),
    ("o.__reduce__", _OUT.format("'O' object", "__reduce__")),
    ("type(o).__mro__", _OUT.format("type object 'O'", "__mro__")),
    ("type(o).__bases__", _OUT.format("type object 'O'", "__bases__")),
    ("type(o).__subclasses__", _OUT.format("type object 'O'", "__subclasses__")),
    ("type(o).zero_grad", _OUT.format("type object 'O'", "zero_grad")),
    ("o.zero_grad.__func__", _OUT.format("'method' object", "__func__")),
    ("o.zero_grad.__globals__", _OUT.format("'method' object", "__globals__")),
    ("o.state.__reduce__", _OUT.format("'defaultdict' object", "__reduce__")),
    ("o.param_groups[0].__reduce__", _OUT.format("'dict' object", "__reduce__")),
    ("o.state.default_factory.__subclasses__", _OUT.format("'type' object", "__subclasses__")),
    ("torch.optim.Optimizer.__init__", _OUT.format("type object 'Optimizer'", "__init__")),
]


@pytest.mark.parametrize("expr,expected", ESCAPES, ids=[e for e, _ in ESCAPES])
def test_escapes_through_a_script_optimiser_are_refused(expr, expected):
    assert located_error(OPT + expr).endswith(expected)


def test_a_scheduler_wraps_a_script_step_without_exposing_it():
    source = OPT + "s = torch.optim.lr_scheduler.StepLR(o, 1)\no.step()\ns.step()\nprint(s.get_last_lr())\n"
    result = run_script(source)
    assert result.error is None and result.err == ""         # no "lr_scheduler.step() before optimizer.step()"
    assert result.out == "[0.010000000000000002]\n"
    for name in ("__closure__", "__globals__", "__code__"):
        assert located_error(source + f"o.step.{name}").endswith(_OUT.format("'function' object", name))


def test_scheduler_order_warning_still_comes_for_a_script_step():
    result = run_script(OPT + "s = torch.optim.lr_scheduler.StepLR(o, 1)\ns.step()\n")
    assert "UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`" in result.err


def test_duplicate_parameters_warn_as_pytorch_does():
    result = run_script(OPT + "O([w, w])\n")
    assert "UserWarning: optimizer contains a parameter group with duplicate parameters" in result.err


def test_a_script_cannot_derive_from_other_engine_classes():
    assert located_error("import torch\nclass G(torch.Generator):\n    pass").endswith(
        "TypeError: subclassing 'Generator' is outside gradcli's language: a script's class may derive from its "
        "own classes, object, dict, list, tuple, set, frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the exception classes and the library classes gradcli provides")


EMB = "import torch\nimport torch.nn.functional as F\nw = torch.tensor([[3.0, 4.0], [0.3, 0.4]])\n"


def test_max_norm_renormalises_in_place():
    result = run_script(EMB + "e = F.embedding(torch.tensor([0, 1, 0]), w, max_norm=1.0)\nprint(e)\nprint(w)\n")
    assert result.out == ("tensor([[0.6000, 0.8000],\n        [0.3000, 0.4000],\n        [0.6000, 0.8000]])\n"
                          "tensor([[0.6000, 0.8000],\n        [0.3000, 0.4000]])\n")


def test_max_norm_invalidates_a_saved_weight():
    # w.t() @ ... saved the weight; the renormalisation is an in-place change PyTorch's version check sees
    source = EMB.replace("]])", "]], requires_grad=True)") + (
        "v = w * 1\ny = (v * v).sum()\nwith torch.no_grad():\n    F.embedding(torch.tensor([0]), v, max_norm=1.0)\n"
        "y.backward()")
    assert "modified by an inplace operation" in located_error(source)


def test_a_sparse_embedding_gives_a_sparse_gradient_and_runs_without_grad():
    source = ("import torch\ne = torch.nn.Embedding(4, 2, sparse=True)\ne(torch.tensor([1, 1])).sum().backward()\n"
              "g = e.weight.grad\nprint(g.is_sparse, g.is_coalesced(), g.coalesce().values())")
    result = run_script(source)
    assert result.error is None and result.out == "True False tensor([[2., 2.]])\n"
    result = run_script("import torch\ne = torch.nn.Embedding(4, 2, sparse=True)\nwith torch.no_grad():\n"
                        "    y = e(torch.tensor([1]))\nprint(y.shape)")
    assert result.error is None and result.out == "torch.Size([1, 2])\n"


def test_scale_grad_by_freq_divides_by_the_count_in_the_batch():
    result = run_script("import torch\ne = torch.nn.Embedding(3, 1, scale_grad_by_freq=True)\n"
                        "e(torch.tensor([0, 0, 0, 2, 1, 1])).sum().backward()\nprint(e.weight.grad.view(-1))")
    assert result.out == "tensor([1., 1., 1.])\n"


def test_a_cuda_device_context_fails_at_the_first_tensor_made_in_it():
    assert located_error("import torch\nwith torch.device('cuda'):\n    x = 1\n    y = torch.zeros(2)") == (
        "4:9: AssertionError: Torch not compiled with CUDA enabled")


def test_a_script_subclass_sees_no_engine_bookkeeping():
    """Adam and SGD keep a group's flat state (optim._Flat) outside the optimizer, where a script's subclass
    (whose instance attributes are the script's own) cannot reach it; its state tensors are all it sees."""
    result = run_script(
        "import torch\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "b = torch.ones(2, requires_grad=True)\n"
        "class MyAdam(torch.optim.Adam):\n"
        "    pass\n"
        "opt = MyAdam([w, b], lr=0.1)\n"
        "(w.sum() + b.sum()).backward()\n"
        "opt.step()\n"
        "print(sorted(opt.state[w].keys()), opt.state[b]['exp_avg'])\n"
        "print(opt._flat)\n")
    assert result.out == "['exp_avg', 'exp_avg_sq', 'step'] tensor([0.1000, 0.1000])\n"
    assert "AttributeError: 'MyAdam' object has no attribute '_flat'" in str(result.error)
