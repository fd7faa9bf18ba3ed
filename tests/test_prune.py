"""torch.nn.utils.prune with a script's own pruning methods (a structured one, ones that break PyTorch's
rules) and the hook tables a pruned module keeps: the answers and the exact errors of PyTorch 2.13, each
checked with the oracle. The library's methods and functions are in tests/engine_cases/prune.txt, the
tutorial's walk in tests/conformance/prune_tutorial.grad."""

from __future__ import annotations

from conftest import gradcli_output, run_script

_CUSTOM = '''import torch
import torch.nn as nn
import torch.nn.utils.prune as prune
torch.manual_seed(0)


class Rows(prune.BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, dim=0):
        self.dim = dim

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask[0] = 0
        return mask


class NoDim(prune.BasePruningMethod):
    PRUNING_TYPE = "structured"

    def compute_mask(self, t, default_mask):
        return default_mask


class Odd(prune.BasePruningMethod):
    PRUNING_TYPE = "sideways"

    def compute_mask(self, t, default_mask):
        return default_mask


class NoType(prune.BasePruningMethod):
    def compute_mask(self, t, default_mask):
        return default_mask * 2


m = nn.Linear(3, 4)
prune.random_structured(m, "weight", amount=1, dim=0)
Rows.apply(m, "weight")
print(m.weight_mask)
h = list(m._forward_pre_hooks.values())[0]
print(type(h).__name__, [type(x).__name__ for x in h])
for cls in (NoDim, Odd, NoType):
    try:
        cls.apply(m, "weight")
    except Exception as e:
        print(type(e).__name__, e)
    print([n for n, _ in m.named_parameters()], len(m._forward_pre_hooks), m.weight_mask.sum())
k = nn.Linear(2, 2)
NoType.apply(k, "weight")
print(k.weight_mask, k.weight.grad_fn.name())
print(NoType().prune(torch.ones(3)))
try:
    prune.global_unstructured([(k, "bias")], pruning_method=NoType)
except Exception as e:
    print(type(e).__name__, e)
prune.global_unstructured([(k, "bias")], pruning_method=prune.Identity)
print(k.bias_mask)
'''

# A structured method without `dim` fails inside the container, which PyTorch has taken off the module's hooks by
# then: the tensor stays reparametrized with no hook left, so the next pruning of it starts afresh and fails to
# register the plain tensor `weight` as weight_orig
_CUSTOM_OUT = '''tensor([[0., 0., 0.],
        [1., 1., 1.],
        [0., 0., 0.],
        [1., 1., 1.]])
PruningContainer ['RandomStructured', 'Rows']
AttributeError Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` defined.
['bias', 'weight_orig'] 0 tensor(6.)
TypeError cannot assign 'torch.FloatTensor' object to parameter 'weight_orig' (torch.nn.Parameter or None required)
['bias', 'weight_orig'] 0 tensor(6.)
TypeError cannot assign 'torch.FloatTensor' object to parameter 'weight_orig' (torch.nn.Parameter or None required)
['bias', 'weight_orig'] 0 tensor(6.)
tensor([[2., 2.],
        [2., 2.]]) MulBackward0
tensor([2., 2., 2.])
AttributeError 'NoType' object has no attribute 'PRUNING_TYPE'
tensor([1., 1.])
'''


def test_script_pruning_methods_combine_and_fail_as_in_pytorch():
    assert gradcli_output(_CUSTOM) == _CUSTOM_OUT


def test_hook_tables_are_ordered_dicts_as_pytorch_prints_them():
    source = ("import torch\nimport torch.nn.utils.prune as prune\nm = torch.nn.Linear(1, 1)\n"
              "print(m._forward_hooks, m._forward_pre_hooks)\nprune.identity(m, 'weight')\n"
              "print(type(m._forward_pre_hooks).__name__, [type(h).__name__ for h in m._forward_pre_hooks.values()])\n"
              "prune.remove(m, 'weight')\nprint(m._forward_pre_hooks)\n")
    assert gradcli_output(source) == ("OrderedDict() OrderedDict()\nOrderedDict ['Identity']\nOrderedDict()\n")


def test_a_failed_pruning_leaves_the_parameter_where_it_was():
    source = ("import torch\nimport torch.nn.utils.prune as prune\nm = torch.nn.Linear(3, 2)\n"
              "prune.l1_unstructured(m, 'weight', amount=7)\n")
    result = run_script(source + "print(m)\n")
    assert (result.error.kind, result.error.message) == (
        "ValueError", "amount=7 should be smaller than the number of parameters to prune=6")
    out = gradcli_output(source.replace("prune.l1", "try:\n    prune.l1").replace("=7)\n", "=7)\nexcept ValueError:\n    pass\n")
                         + "print([n for n, _ in m.named_parameters()], list(m.named_buffers()), len(m._forward_pre_hooks))\n")
    assert out == "['bias', 'weight'] [] 0\n"
