"""torch.optim.Adafactor: factored second moments (a row and a column average of the squared gradient for a
parameter of two or more dimensions, a full one below), relative step sizes and update clipping, computed with
the engine's tensors in the order of PyTorch 2.13's loops."""

from __future__ import annotations

import numpy as np

from gradcli.engine.optim import Optimizer, _check, _count_step, _real_with_grads, _step_tensor
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

# Why tensors and not numpy: the update reduces (norms over rows, columns and the whole tensor, a mean of the
# row factor) and PyTorch's reductions round in their own order; the engine's reductions follow it, so the
# same expressions on its tensors give PyTorch's bits.


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        params = self._gather(group)
        saved = STATE.recording
        STATE.recording = False             # @torch.no_grad()
        try:
            if group["foreach"]:
                self._update_foreach(group, params)
            else:
                self._update_single(group, params)
        finally:
            STATE.recording = saved

    def _gather(self, group: dict) -> list:
        """The parameters with a gradient, each with its state (made on its first step): the step count, then
        a row and a column factor for a gradient of two or more dimensions, else a full variance."""
        params = []
        for p in _real_with_grads(group, "Adafactor"):
            params.append(p)
            st = self.state[p]
            if not st:
                st["step"] = _step_tensor()
                g = p.grad._a
                if g.ndim > 1:
                    st["row_var"] = Tensor(np.zeros(g.shape[:-1] + (1,), g.dtype))
                    st["col_var"] = Tensor(np.zeros(g.shape[:-2] + (1,) + g.shape[-1:], g.dtype))
                else:
                    st["variance"] = Tensor(np.zeros_like(g))
        return params

    def _update_single(self, group: dict, params: list) -> None:
        """PyTorch's loop over the parameters, one at a time."""
        lr, k, eps1, eps2, d, wd, beta2_decay = _hyper(group)
        for p in params:
            st = self.state[p]
            grad = -p.grad if group["maximize"] else p.grad
            if eps1 is None:            # (the first parameter's dtype sets it for the whole group, as PyTorch)
                eps1 = float(np.finfo(p._a.dtype).eps)
            step = _count_step(st)
            one_minus_beta2 = step ** beta2_decay
            alpha = _relative_step(p, lr, k, step, eps2)
            if wd != 0:
                p.mul_(_decay(lr, k, wd))
            var_estimate = _estimate(st, grad, one_minus_beta2, eps1)
            update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
            update.mul_(grad)
            p.add_(update, alpha=_clipped(alpha, update, d))

    def _update_foreach(self, group: dict, params: list) -> None:
        """PyTorch's foreach loop: the same arithmetic, but the update is scaled (one rounding) and then added
        (another), by groups of one dtype and of factored or full parameters (the first group's dtype sets the
        default epsilon1)."""
        lr, k, eps1, eps2, d, wd, beta2_decay = _hyper(group)
        groups: dict = {}
        for p in params:
            groups.setdefault((p._a.dtype, p.grad._a.ndim > 1), []).append(p)
        for (dtype, _), members in groups.items():
            if eps1 is None:
                eps1 = float(np.finfo(dtype).eps)
            steps = [_count_step(self.state[p]) for p in members]
            alphas = [_relative_step(p, lr, k, step, eps2) for p, step in zip(members, steps)]
            if wd != 0:
                for p in members:
                    p.mul_(_decay(lr, k, wd))
            updates = []
            for p, step in zip(members, steps):
                grad = -p.grad if group["maximize"] else p.grad
                update = _estimate(self.state[p], grad, step ** beta2_decay, eps1).clamp_(min=eps1 * eps1)
                update.rsqrt_()
                update.mul_(grad)
                updates.append(update)
            for p, alpha, update in zip(members, alphas, updates):
                update.mul_(_clipped(alpha, update, d))
                p.add_(update)


def _hyper(group: dict) -> tuple:
    """lr, the numpy type a tensor lr computes in (None for a number), epsilon1 (None: the dtype's), epsilon2,
    d, weight_decay, beta2_decay."""
    lr, k = group["lr"], None
    if lr.__class__ is Tensor:
        dt = lr._a.dtype
        lr, k = lr.item(), dt.type if dt.kind == "f" else np.float32
    eps1, eps2 = group["eps"]
    return lr, k, eps1, eps2, group["d"], group["weight_decay"], group["beta2_decay"]


# PyTorch keeps a tensor lr a 0-d tensor through the step: where it wins min(lr, 1/sqrt(step)), the step size,
# the decay factor and the scaled step are 0-d tensors of its dtype, each operation rounded there (`k`).

def _relative_step(p: Tensor, lr: float, k, step: float, eps2: float):
    """The step size: min(lr, 1/sqrt(step)) times the parameter's root mean square (at least epsilon2); a
    0-d value of type `k` when a tensor lr is the smaller."""
    root = 1 / (step ** 0.5)
    scale = max(eps2, p.norm(2).item() / (p.numel() ** 0.5))
    if k is None:
        return scale * min(lr, root)
    return scale * root if k(root) < k(lr) else k(scale) * k(lr)


def _decay(lr: float, k, wd: float):
    """1 - lr * weight_decay, the factor of decoupled weight decay (a tensor lr's: a 0-d tensor, which a 0-d
    parameter multiplies in the wider of the two dtypes)."""
    return 1 - lr * wd if k is None else Tensor(np.array(k(1) - k(lr) * k(wd)))


def _clipped(alpha, update: Tensor, d: float) -> float:
    """-alpha over the update's root mean square relative to d (when above 1): the factor of the update."""
    denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
    if alpha.__class__ is float:
        return -alpha / denom
    return float(-alpha / alpha.dtype.type(denom))


def _estimate(st: dict, grad: Tensor, one_minus_beta2: float, eps1: float) -> Tensor:
    """The running second moment updated with `grad`, and a new tensor estimating it elementwise: the outer
    product of the row and column averages over the rows' mean (at least epsilon1), or the full average's copy."""
    if grad.dim() > 1:
        row_var, col_var = st["row_var"], st["col_var"]
        row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)), one_minus_beta2)
        col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)), one_minus_beta2)
        estimate = row_var @ col_var
        return estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
    variance = st["variance"]
    variance.lerp_(grad * grad, one_minus_beta2)
    return variance.clone()
