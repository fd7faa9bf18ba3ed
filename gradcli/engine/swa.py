"""torch.optim.swa_utils' engine half: the SWALR scheduler and the averaging functions its AveragedModel uses
(equal weights, SWA, or exponential, EMA; per tensor or over lists), with PyTorch's arithmetic."""

from __future__ import annotations

import math

from gradcli.engine import autograd
from gradcli.engine.addresses import address
from gradcli.engine.functorch import Transformed
from gradcli.engine.lr_scheduler import LRScheduler, _format_param
from gradcli.engine.tensor import Tensor


class SWALR(LRScheduler):
    """torch.optim.swa_utils.SWALR: each group's lr moves from its value to `swa_lr` over `anneal_epochs`
    steps (cosine or linear), then stays there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for value, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def __repr__(self) -> str:
        return f"<torch.optim.swa_utils.SWALR object at {address(self)}>"

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = _ANNEALS[0] if anneal_strategy == "cos" else _ANNEALS[1]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict) -> None:
        super().load_state_dict(state_dict)
        self._set_anneal_func(self._anneal_strategy)

    def get_lr(self) -> list:
        self._check_within_step()
        anneal = self.anneal_func
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # the lr the annealing started from, recovered from this step's lr and the previous step's weight
        prev_alpha = anneal(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        groups = self.optimizer.param_groups
        prev_lrs = [_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]


def _cosine_anneal(t):
    return (1 - math.cos(math.pi * t)) / 2


def _linear_anneal(t):
    return t


# SWALR's anneal_func, as PyTorch's static methods print (<function SWALR._cosine_anneal at 0x...>)
_ANNEALS = (Transformed(_cosine_anneal, "SWALR._cosine_anneal"), Transformed(_linear_anneal, "SWALR._linear_anneal"))


def _initial_lr(lr, swa_lr, alpha):
    if alpha == 1:
        return swa_lr
    return (lr - alpha * swa_lr) / (1 - alpha)


# ------------------------------------------------------------------------------ the averaging functions
# Each factory returns a function that runs without grad mode (PyTorch decorates it with @torch.no_grad())
# and prints as PyTorch's closure does (<function get_swa_avg_fn.<locals>.swa_update at 0x...>).

def _averager(function, qualname: str):
    function.__qualname__ = qualname
    function.__name__ = qualname.rpartition(".")[2]
    return autograd.ModeDecorated(function, autograd.no_grad)


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _lerp_lists(targets: list, ends: list, weight) -> None:
    """torch._foreach_lerp_ with one weight: each target.lerp_(end, weight), after the lists' checks."""
    if len(targets) != len(ends):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(targets)} and {len(ends)}")
    if not targets:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for target, end in zip(targets, ends):
        target.lerp_(end, weight)


def _floating(tensors) -> bool:
    first = tensors[0]
    return first.is_floating_point() or first.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        if _floating(ema_param_list):
            _lerp_lists(ema_param_list, current_param_list, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return _averager(ema_update, "get_ema_multi_avg_fn.<locals>.ema_update")


def get_swa_multi_avg_fn():
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _floating(averaged_param_list):
            _lerp_lists(averaged_param_list, current_param_list, _weight(1 / (num_averaged + 1)))
            return
        diffs = [current - averaged for current, averaged in zip(current_param_list, averaged_param_list)]
        if isinstance(num_averaged, Tensor):
            for averaged, diff in zip(averaged_param_list, diffs):
                averaged.addcdiv_(diff, num_averaged + 1)
        else:
            for averaged, diff in zip(averaged_param_list, diffs):
                averaged.add_(diff, alpha=1.0 / (num_averaged + 1))
    return _averager(swa_update, "get_swa_multi_avg_fn.<locals>.swa_update")


def _weight(value):
    """A lerp weight as torch._foreach_lerp_ takes it: a Python number, or a one-element tensor's value."""
    return value.item() if isinstance(value, Tensor) else value


def get_ema_avg_fn(decay=0.999):
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return _averager(ema_update, "get_ema_avg_fn.<locals>.ema_update")


def get_swa_avg_fn():
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return _averager(swa_update, "get_swa_avg_fn.<locals>.swa_update")
