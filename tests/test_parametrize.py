"""torch.nn.utils.parametrize with a script's own parametrizations (classes with right_inverse, one that
returns several tensors, ones that break the rules): the answers and the exact errors of PyTorch 2.13, each
checked with the oracle. The built-in parametrizations and the one-line cases are in
tests/engine_cases/parametrize.txt."""

from __future__ import annotations

import pytest

from conftest import error_line, gradcli_output, run_script

_PRELUDE = '''import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
torch.manual_seed(0)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).T

    def right_inverse(self, A):
        return A.triu()


class RankOne(nn.Module):
    def forward(self, x, y):
        return x.unsqueeze(-1) @ y.unsqueeze(-2)

    def right_inverse(self, Z):
        U, S, Vh = torch.linalg.svd(Z, full_matrices=False)
        s0 = S[0].sqrt().unsqueeze(-1)
        return U[..., :, 0] * s0, Vh[..., 0, :] * s0


class Half(nn.Module):
    def forward(self, X):
        return X.half()


class Returns(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, X):
        return X

    def right_inverse(self, X):
        return self.value


class NoInverse(nn.Module):
    def forward(self, X):
        return X * 2

    def right_inverse(self, X):
        raise NotImplementedError


'''


def test_several_originals_from_right_inverse():
    out = gradcli_output(_PRELUDE + '''m = P.register_parametrization(nn.Linear(3, 3), "weight", RankOne())
pl = m.parametrizations.weight
print(pl.is_tensor, pl.ntensors, [n for n, _ in m.named_parameters()])
print(torch.linalg.matrix_rank(m.weight).item(), m.weight.grad_fn.name(), pl.original0.requires_grad)
w = m.weight.detach().clone()
P.remove_parametrizations(m, "weight")
print(torch.equal(m.weight, w), m.weight.requires_grad, [n for n, _ in m.named_parameters()], type(m).__name__)
''')
    assert out == ("False 2 ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']\n"
                   "1 MmBackward0 True\nTrue True ['bias', 'weight'] Linear\n")


def test_assignment_runs_right_inverse_into_the_same_parameter():
    out = gradcli_output(_PRELUDE + '''s = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
p = s.parametrizations.weight.original
v = p._version
A = torch.rand(3, 3)
s.weight = A + A.T
print(torch.allclose(s.weight, A + A.T), s.parametrizations.weight.original is p, p._version - v)
print(torch.equal(p, (A + A.T).triu()))
''')
    assert out == "True True 1\nTrue\n"


def test_a_right_inverse_that_raises_not_implemented_leaves_the_tensor():
    out = gradcli_output(_PRELUDE + '''m = nn.Linear(2, 2)
w = m.weight.detach().clone()
P.register_parametrization(m, "weight", NoInverse())
print(torch.equal(m.parametrizations.weight.original, w), torch.equal(m.weight, 2 * w))
''')
    assert out == "True True\n"


@pytest.mark.parametrize("source, expected", [
    ('m = P.register_parametrization(nn.Linear(3, 3), "weight", RankOne())\n'
     'P.remove_parametrizations(m, "weight", leave_parametrized=False)',
     "ValueError: Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms "
     "of a sequence of tensors."),
    ('s = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())\n'
     's.weight = torch.ones(3, 3, dtype=torch.float64)',
     "ValueError: The tensor returned by `right_inverse` has dtype torch.float64 while `original` has dtype "
     "torch.float32"),
    ('P.register_parametrization(nn.Linear(2, 2), "weight", Half())',
     "ValueError: Registering a parametrization may not change the dtype of the tensor, unless `unsafe` flag is "
     "enabled.\nunparametrized dtype: torch.float32\nparametrized dtype: torch.float16"),
    ('P.register_parametrization(nn.Linear(2, 2), "weight", Returns(3))',
     "ValueError: 'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). Got int"),
    ('P.register_parametrization(nn.Linear(2, 2), "weight", Returns([torch.ones(2), 3]))',
     "ValueError: 'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). Got element 1 "
     "of the sequence with type int."),
    ('P.register_parametrization(nn.Linear(2, 2), "weight", Returns(torch.ones(2, 2, dtype=torch.float64)))',
     "ValueError: When `right_inverse` outputs one tensor, it may not change the dtype.\n"
     "original.dtype: torch.float32\nright_inverse(original).dtype: torch.float64"),
    ('t = P.register_parametrization(nn.Linear(2, 2), "weight", Symmetric())\n'
     'P.register_parametrization(t, "weight", Half())',
     "ValueError: Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` flag "
     "is enabled.\nmodule.weight.dtype: torch.float32\nparametrization(module.weight).dtype: torch.float16"),
    ('t = P.register_parametrization(nn.Linear(2, 2), "weight", Symmetric())\n'
     'P.register_parametrization(t, "weight", Returns(torch.ones(3)))',
     "ValueError: The tensor returned by parametrization.right_inverse must have the same shape as module.weight, "
     "unless the `unsafe` flag is enabled.\nmodule.weight.shape: torch.Size([2, 2])\nreturned shape: "
     "torch.Size([3])"),
    ('t = P.register_parametrization(nn.Linear(2, 2), "weight", Symmetric())\n'
     'P.register_parametrization(t, "weight", Returns(1.5))',
     "ValueError: parametrization.right_inverse must return a tensor. Got: float"),
    ('m = P.register_parametrization(nn.Linear(3, 3), "weight", RankOne())\nm.weight = torch.ones(3, 3)\n'
     'P.register_parametrization(m, "weight", Returns([torch.ones(3)]))',
     "ValueError: parametrization.right_inverse must return a tensor. Got: list"),
])
def test_the_rules_are_pytorchs(source, expected):
    assert error_line(_PRELUDE + source) == expected


def test_unsafe_lets_the_dtype_change():
    out = gradcli_output(_PRELUDE + '''t = P.register_parametrization(nn.Linear(2, 2), "weight", Symmetric())
P.register_parametrization(t, "weight", Half(), unsafe=True)
print(t.weight.dtype, t.parametrizations.weight.unsafe)
''')
    assert out == "torch.float16 True\n"


def test_cached_computes_once_per_block_and_nests():
    out = gradcli_output(_PRELUDE + '''s = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
with P.cached():
    a = s.weight
    with P.cached():
        b = s.weight
    c = s.weight
print(a is b, a is c, s.weight is a, s.weight is s.weight)
''')
    assert out == "True True False False\n"


def test_copies_and_state_dicts():
    out = gradcli_output(_PRELUDE + '''import copy
s = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
c = copy.deepcopy(s)
print(type(c).__name__, torch.equal(c.weight, s.weight), c.parametrizations.weight.original is s.parametrizations.weight.original)
n = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
print(n.load_state_dict(s.state_dict()), torch.equal(n.weight, s.weight))
print(n.load_state_dict({"weight": torch.ones(3, 3), "bias": torch.ones(3)}, strict=False))
''')
    assert out == ("ParametrizedLinear True False\n<All keys matched successfully> True\n"
                   "_IncompatibleKeys(missing_keys=['parametrizations.weight.original'], unexpected_keys=['weight'])\n")


def test_a_scripts_own_module_is_parametrized_and_restored():
    out = gradcli_output(_PRELUDE + '''class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2, 2))

    def forward(self, x):
        return x @ self.w


net = P.register_parametrization(Net(), "w", Symmetric())
print(type(net).__name__, type(net).__module__, isinstance(net, Net), net(torch.ones(1, 2)))
P.remove_parametrizations(net, "w")
print(type(net).__name__, type(net) is Net, net)
''')
    assert out == ("ParametrizedNet torch.nn.utils.parametrize True tensor([[2., 2.]], grad_fn=<MmBackward0>)\n"
                   "Net True Net()\n")


def test_the_old_weight_norm_warns_once():
    result = run_script('import torch\nimport torch.nn as nn\nnn.utils.weight_norm(nn.Linear(2, 2))\n'
                        'nn.utils.weight_norm(nn.Linear(2, 2))\n')
    assert result.error is None
    assert result.err.count("FutureWarning: `torch.nn.utils.weight_norm` is deprecated in favor of "
                            "`torch.nn.utils.parametrizations.weight_norm`.") == 1


def test_cached_serves_one_block_as_a_generator_context_manager():
    out = gradcli_output('''import torch
import torch.nn.utils.parametrize as P
c = P.cached()
with c:
    pass
print(c.__exit__(None, None, None))
try:
    with c:
        pass
except AttributeError as e:
    print(e)
try:
    P.cached().__exit__(None, None, None)
except RuntimeError as e:
    print(e)
''')
    assert out == "False\n'_GeneratorContextManager' object has no attribute 'args'\ngenerator didn't stop\n"


def test_skip_init_builds_a_scripts_class_on_the_meta_device():
    """As PyTorch: the class is built on the meta device (its draws given device= draw nothing), then emptied
    onto the CPU; the default generator is where it was (PyTorch 2.13 prints the same, tensor([0.4963]))."""
    source = ('import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self, device=None):\n'
              '        super().__init__()\n        self.w = nn.Parameter(torch.randn(2, device=device))\n\n\n'
              'torch.manual_seed(0)\nm = nn.utils.skip_init(Net)\nprint(m.w.shape, m.w.device, m.w.requires_grad, '
              'torch.rand(1))\n')
    assert gradcli_output(source) == "torch.Size([2]) cpu True tensor([0.4963])\n"
