"""torch.optim.lr_scheduler's warnings, scheduler by scheduler. The learning rates, state dicts and errors are
compared with PyTorch's in tests/engine_cases/lr_schedulers.txt; warnings go to stderr, which engine cases do
not see, so their order is pinned here (taken from PyTorch 2.13 with each warning shown once, as Python's
default filter shows a warning raised at one place of PyTorch's source). Also: what a script reaches through the
new schedulers' state dicts and attributes."""

from __future__ import annotations

import ast

import pytest

from conftest import run_script

_KINDS = {"Detected call of `lr_scheduler.step()` before `optimizer.step()`": "order",
          "The epoch parameter in `scheduler.step()` was not necessary": "epoch",
          "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.": "get_lr"}


def _warnings(ctor: str, tail: str = "s.get_lr()\ns.step(3)\n") -> tuple[list, object]:
    """The kinds of warning a run gives, in order: the scheduler steps once before the optimizer, once after,
    then get_lr() is called outside a step and step gets an epoch."""
    result = run_script(
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)\n"
        f"s = torch.optim.lr_scheduler.{ctor}\n"
        "s.step()\nopt.step()\ns.step()\n" + tail)
    kinds = [kind for line in result.err.splitlines() for text, kind in _KINDS.items()
             if line.split("UserWarning: ", 1)[-1].startswith(text)]
    return kinds, result.error


@pytest.mark.parametrize("ctor", [
    "LinearLR(opt)", "ConstantLR(opt)", "MultiplicativeLR(opt, lambda e: 0.9)", "PolynomialLR(opt)",
    "OneCycleLR(opt, 0.1, total_steps=10)", "CyclicLR(opt, 0.01, 0.1, step_size_up=3)",
])
def test_chainable_schedulers_warn_as_pytorch(ctor):
    kinds, error = _warnings(ctor)
    assert error is None
    assert kinds == ["order", "get_lr", "epoch"]


def test_warm_restarts_steps_by_its_own_rule_without_order_or_epoch_warnings():
    kinds, error = _warnings("CosineAnnealingWarmRestarts(opt, 3)", tail="s.get_lr()\ns.step(3.5)\n")
    assert error is None
    assert kinds == ["get_lr"]


@pytest.mark.parametrize("ctor", [
    "SequentialLR(opt, [torch.optim.lr_scheduler.ConstantLR(opt), torch.optim.lr_scheduler.LinearLR(opt)], [2])",
    "ChainedScheduler([torch.optim.lr_scheduler.ConstantLR(opt), torch.optim.lr_scheduler.LinearLR(opt)])",
])
def test_schedulers_of_schedulers_warn_through_the_inner_steps(ctor):
    # the inner schedulers' steps give the order warning (once: PyTorch raises it at one place of its source);
    # neither takes an epoch, and get_lr is LRScheduler's (NotImplementedError)
    kinds, error = _warnings(ctor, tail="")
    assert error is None
    assert kinds == ["order"]


def test_the_closed_form_is_used_only_with_an_epoch():
    # LinearLR's chainable form multiplies the current lr; step(epoch) recomputes it from base_lrs, so an lr
    # set by hand between steps survives only the former (as in PyTorch)
    result = run_script(
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=1.0)\n"
        "s = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=4)\n"
        "opt.step()\n"
        "opt.param_groups[0]['lr'] = 2.0\n"
        "s.step()\n"
        "print(s.get_last_lr())\n"
        "s.step(2)\n"
        "print(s.get_last_lr())\n")
    assert result.out == "[2.5]\n[0.75]\n"


def test_one_cycle_fails_when_stepped_past_total_steps():
    result = run_script(
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "opt = torch.optim.Adam([w], lr=0.1)\n"
        "s = torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=2)\n"
        "for _ in range(3):\n"
        "    opt.step()\n"
        "    s.step()\n"
        "    print(s.last_epoch, s.get_last_lr(), opt.param_groups[0]['betas'])\n")
    assert result.out == ("1 [4e-07] (0.95, 0.999)\n"
                          "2 [0.0811745653949763] (0.8688255099070633, 0.999)\n")
    assert f"{result.error.kind}: {result.error.message}" == (
        "ValueError: Tried to step 3 times. The specified number of total steps is 2")


_EVERY_NEW = {
    "LinearLR": "LinearLR(opt)", "ConstantLR": "ConstantLR(opt)", "PolynomialLR": "PolynomialLR(opt)",
    "MultiplicativeLR": "MultiplicativeLR(opt, lambda e: 0.9)", "OneCycleLR": "OneCycleLR(opt, 0.1, total_steps=10)",
    "CosineAnnealingWarmRestarts": "CosineAnnealingWarmRestarts(opt, 3)",
    "CyclicLR": "CyclicLR(opt, 0.01, 0.1, mode='exp_range', gamma=0.9)",
    "SequentialLR": "SequentialLR(opt, [L.ConstantLR(opt), L.CyclicLR(opt, 0.01, 0.1)], [2])",
    "ChainedScheduler": "ChainedScheduler([L.ConstantLR(opt), L.LinearLR(opt)])",
}


@pytest.mark.parametrize("name", list(_EVERY_NEW))
def test_state_dicts_and_attributes_hold_only_script_values(name):
    """What a script reaches on a scheduler: plain values in its state dict (CyclicLR's policy function and the
    scale functions stay behind), and none of its private machinery."""
    source = (
        "import torch\n"
        "L = torch.optim.lr_scheduler\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)\n"
        f"s = L.{_EVERY_NEW[name]}\n"
        "def kinds(value):\n"
        "    if isinstance(value, dict):\n"
        "        return {k: kinds(v) for k, v in value.items()}\n"
        "    if isinstance(value, (list, tuple)):\n"
        "        return [kinds(v) for v in value]\n"
        "    return type(value).__name__\n"
        "print(kinds(s.state_dict()))\n")
    result = run_script(source)
    assert result.error is None, result.error.render()
    leaves = set(_leaves(ast.literal_eval(result.out)))
    assert leaves <= {"int", "float", "bool", "str", "NoneType", "Tensor"}, leaves
    for private in ("_scale_fn_ref", "_schedule_phases", "_schedulers", "_update_lr", "_initial_step", "__dict__"):
        line = run_script(source + f"getattr(s, '{private}')\n")
        assert line.error is not None and line.error.kind == "AttributeError", private


def _leaves(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


@pytest.mark.parametrize("ctor, private, kind", [
    ("CyclicLR(opt, 0.01, 0.1, mode='exp_range', gamma=0.9)", "_scale_fn_ref", "tuple"),
    ("CyclicLR(opt, 0.01, 0.1, mode='triangular2')", "_scale_fn_ref", "tuple"),
    ("CyclicLR(opt, 0.01, 0.1, scale_fn=abs)", "_scale_fn_custom", "builtin_function_or_method"),
    ("OneCycleLR(opt, 0.1, total_steps=10)", "_schedule_phases", "list"),
    ("SequentialLR(opt, [L.ConstantLR(opt)], [])", "_schedulers", "list"),
])
def test_a_subclass_reads_only_script_values_in_private_attributes(ctor, private, kind):
    """A script's subclass reads the scheduler's `_`-prefixed attributes (docs/security.md): each is a plain
    value (CyclicLR keeps its built-in policy as a tuple, where PyTorch keeps a function or a partial)."""
    cls = ctor.split("(", 1)[0]
    out = run_script(
        "import torch\n"
        "L = torch.optim.lr_scheduler\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)\n"
        f"class Peek(L.{cls}):\n"
        "    def peek(self):\n"
        f"        return self.{private}\n"
        f"s = Peek{ctor[len(cls):]}\n"
        "print(type(s.peek()).__name__)\n").out
    assert out == kind + "\n"
