"""torch.optim.SparseAdam with PyTorch's checks and its sparse update, and what the other optimisers do with a
sparse gradient (an nn.Embedding(sparse=True)'s): SGD's plain step adds it in, the others refuse it with
PyTorch's message. Imported when a script reaches torch.optim, its sparse work only when a sparse gradient
arrives."""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine.optim import Optimizer, _check, _scalar
from gradcli.engine.tensor import Tensor


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 < lr, f"Invalid learning rate: {lr}")
        _check(0.0 < eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p._a.dtype.kind == "c"]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    def _update(self, group: dict) -> None:
        if any(p.grad is not None and p.grad.__class__ is Tensor for p in group["params"]):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        lr, eps, maximize = _scalar(group["lr"]), group["eps"], group["maximize"]
        beta1, beta2 = group["betas"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = Tensor(np.zeros_like(p._a))
                state["exp_avg_sq"] = Tensor(np.zeros_like(p._a))
            state["step"] += 1
            _sparse_adam(p, p.grad.coalesce(), state, lr, beta1, beta2, eps, maximize)


def _sparse_adam(p, grad, state, lr, beta1, beta2, eps, maximize) -> None:
    """One parameter's update at the rows its coalesced gradient names, in PyTorch's order of operations (the
    moments' changes first, then their new values; numbers rounded to the parameter's dtype)."""
    where = tuple(grad._idx)
    values = -grad._vals if maximize else grad._vals
    if not values.size:
        return
    t = p._a.dtype.type
    m, v = state["exp_avg"]._a, state["exp_avg_sq"]._a
    old_m = m[where]
    m_update = (values - old_m) * t(1 - beta1)
    m[where] += m_update
    old_v = v[where]
    v_update = (values * values - old_v) * t(1 - beta2)
    v[where] += v_update
    numer = m_update + old_m
    denom = np.sqrt(v_update + old_v) + t(eps)
    step = state["step"]
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    p._a[where] += t(-step_size) * (numer / denom)
    for x in (state["exp_avg"], state["exp_avg_sq"], p):
        x._version[0] += 1


# the optimisers whose step PyTorch refuses a sparse gradient, by class name: its message
_REFUSALS = {"Adam": "Adam does not support sparse gradients, please consider SparseAdam instead",
             "AdamW": "Adam does not support sparse gradients, please consider SparseAdam instead",
             **{name: f"{name} does not support sparse gradients" for name in (
                 "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop", "Adafactor", "Muon")}}


def sparse_step(opt, group: dict) -> None:
    """A group in which some parameter has a sparse gradient: SGD's plain step (no momentum, no weight decay)
    adds `-lr * grad` into each named row in the gradient's order; PyTorch's error where it refuses."""
    name = type(opt).__name__
    if name in _REFUSALS:
        raise RuntimeError(_REFUSALS[name])
    if name != "SGD" or _scalar(group["momentum"]) != 0 or _scalar(group["weight_decay"]) != 0:
        raise NotImplementedError(f"gradcli does not implement torch.optim.{name}'s step with sparse gradients "
                                  "(SGD without momentum or weight decay, and SparseAdam, take them)")
    from gradcli.engine.fma import fma
    lr = _scalar(group["lr"])
    for p in group["params"]:
        g = p.grad
        if g is None:
            continue
        if g.__class__ is Tensor:
            rows = [(slice(None), -g._a if group["maximize"] else g._a)]
        else:
            vals = -g._vals if group["maximize"] else g._vals
            rows = [(tuple(g._idx[:, k]), vals[k]) for k in range(g._idx.shape[1])]
        c = p._a.dtype.type(-lr)
        for where, value in rows:        # one entry at a time: repeated rows add in order, as PyTorch's axpy
            p._a[where] = fma(np.asarray(value), c, np.asarray(p._a[where]))
        p._version[0] += 1
