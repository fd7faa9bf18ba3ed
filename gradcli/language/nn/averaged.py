"""torch.optim.swa_utils' module half: AveragedModel (a copy of a model whose parameters keep a running average,
SWA's or EMA's) and update_bn (one pass over the data to recompute BatchNorm's running statistics)."""

from __future__ import annotations

from gradcli.engine import autograd, factories, dtypes, swa
from gradcli.language.nn.module import Module
from gradcli.language.nn.normalization import _BatchNorm


class AveragedModel(Module):
    """torch.optim.swa_utils.AveragedModel: `module` (a deep copy of the model), the buffer `n_averaged`,
    `update_parameters(model)` and a forward that calls the copy."""

    __module__ = "torch.optim.swa_utils"

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        from gradcli.language import copying
        self.module = copying.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", factories.tensor(0, dtype=dtypes.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            own = list(self.module.parameters()) + list(self.module.buffers())
            theirs = list(model.parameters()) + list(model.buffers())
        else:
            own, theirs = list(self.parameters()), list(model.parameters())
        n_averaged = self.n_averaged
        first = bool(n_averaged == 0)
        averaged, current = [], []
        for p_averaged, p_model in zip(own, theirs):
            p_model = p_model.detach()
            averaged.append(p_averaged.detach())
            current.append(p_model)
            if first:
                p_averaged.detach().copy_(p_model)
        if n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for group_averaged, group_current in _by_dtype(averaged, current):
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(group_averaged, group_current, n_averaged)
                    else:               # (on a CPU PyTorch averages tensor by tensor, with get_swa_avg_fn's formula)
                        average = swa.get_swa_avg_fn()
                        for p_averaged, p_model in zip(group_averaged, group_current):
                            p_averaged.copy_(average(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(averaged, current):
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
        if not self.use_buffers:
            own_buffers, their_buffers = list(self.module.buffers()), list(model.buffers())
            for b_averaged, b_model in zip(own_buffers, their_buffers):
                b_averaged.detach().copy_(b_model.detach())
            if len(own_buffers) != len(their_buffers):        # (PyTorch's zip(..., strict=True), after the copies)
                which = "shorter" if len(their_buffers) < len(own_buffers) else "longer"
                raise ValueError(f"zip() argument 2 is {which} than argument 1")
        n_averaged += 1


def _by_dtype(averaged: list, current: list) -> list:
    """The pairs of lists PyTorch's _group_tensors_by_device_and_dtype makes: by the averaged tensors' dtype,
    in order of first appearance."""
    groups: dict = {}
    for a, c in zip(averaged, current):
        pair = groups.setdefault(a.dtype, ([], []))
        pair[0].append(a)
        pair[1].append(c)
    return list(groups.values())


def update_bn(loader, model, device=None):
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return None
    with autograd.no_grad():
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)
    return None
