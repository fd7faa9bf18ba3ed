"""nn.InstanceNorm1d/2d/3d beyond the golden (tests/conformance/nn_instance_norm.grad): the warning PyTorch gives
when an unused num_features does not match the channels (stderr, which goldens keep apart), the class model a
script sees, and that the layer reaches nothing outside the language."""

from __future__ import annotations

import pytest

from conftest import run_script

_WARNING = ("UserWarning: input's size at dim=1 does not match num_features. You can silence this warning by not "
            "passing in num_features, which is not used because affine=False")


def test_a_channel_count_other_than_num_features_warns_once_without_affine():
    result = run_script("import torch\nm = torch.nn.InstanceNorm1d(5)\nfor _ in range(2):\n"
                        "    print(m(torch.ones(2, 3, 4)).shape)\n")
    assert result.error is None
    assert result.out == "torch.Size([2, 3, 4])\ntorch.Size([2, 3, 4])\n"
    assert result.err.count(_WARNING) == 1


def test_the_class_model_is_pytorchs():
    result = run_script("import torch\nfrom torch import nn\nm = nn.InstanceNorm2d(3)\n"
                        "print(type(m), isinstance(m, nn.Module), isinstance(m, nn.BatchNorm2d))\n"
                        "class Mine(nn.InstanceNorm1d):\n    pass\nprint(Mine(2))\n")
    assert result.error is None, result.error
    assert result.out == ("<class 'torch.nn.modules.instancenorm.InstanceNorm2d'> True False\n"
                          "Mine(2, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)\n")


@pytest.mark.parametrize("reach", ["m._apply_instance_norm.__globals__", "m.forward.__func__", "type(m).__mro__",
                                   "m.__reduce__", "m._get_no_batch_dim.__func__"])
def test_its_insides_are_out_of_reach(reach):
    result = run_script(f"import torch\nm = torch.nn.InstanceNorm1d(3)\nprint({reach})\n")
    assert result.error is not None and result.error.kind == "AttributeError", (reach, result.out)
