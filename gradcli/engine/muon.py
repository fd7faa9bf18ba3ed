"""torch.optim.Muon: momentum on 2-D parameters, orthogonalised by a quintic Newton-Schulz iteration in bfloat16,
with decoupled weight decay and a shape-dependent learning rate, computed with the engine's tensors in the order
of PyTorch 2.13's single-tensor loop."""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine.optim import Optimizer, _check, _real_with_grads
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

# Why tensors and not numpy: the iteration is bfloat16 matrix products with added inputs (addmm with beta and
# alpha) and a bfloat16 norm; the engine's addmm and reductions already round as PyTorch's CPU kernels do, so
# the same expressions on its tensors give PyTorch's bits (docs/optim.md says where the products do not).

_COEFFICIENTS = (3.4445, -4.775, 2.0315)      # the quintic's a, b, c (Keller Jordan's values, as PyTorch's)


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=_COEFFICIENTS, eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        _check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        _check(adjust_lr_fn is None or adjust_lr_fn in ("original", "match_rms_adamw"),
               f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _update(self, group: dict) -> None:
        params = self._gather(group)
        saved = STATE.recording
        STATE.recording = False             # @torch.no_grad()
        try:
            self._update_single(group, params)
        finally:
            STATE.recording = saved

    def _gather(self, group: dict) -> list:
        """The parameters with a gradient, each with its momentum buffer (zeros, made on its first step)."""
        params = []
        for p in _real_with_grads(group, "Muon"):
            params.append(p)
            if "momentum_buffer" not in self.state[p]:
                self.state[p]["momentum_buffer"] = Tensor(np.zeros_like(p.grad._a))
        return params

    def _update_single(self, group: dict, params: list) -> None:
        """PyTorch's loop over the parameters, one at a time."""
        lr, wd, momentum = group["lr"], group["weight_decay"], group["momentum"]
        if lr.__class__ is Tensor and lr.dim() != 0:
            lr = lr.squeeze()
        for p in params:
            grad = p.grad
            if grad.dim() != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = self.state[p]["momentum_buffer"]
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _orthogonalised(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
            adjusted = lr * _lr_ratio(group["adjust_lr_fn"], p.shape)
            p.mul_(1 - lr * wd)
            p.add_(update, alpha=-adjusted)


def _orthogonalised(grad: Tensor, coefficients, steps: int, eps: float) -> Tensor:
    """The quintic Newton-Schulz iteration on the bfloat16 matrix scaled to a norm of at most 1, worked on its
    wide orientation (transposed when taller than wide) and returned in the matrix's own."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    from gradcli.engine.ops import blas
    a, b, c = coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(steps):
        gram = x @ x.T
        x = blas.addmm(x, blas.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


def _lr_ratio(adjust_lr_fn, shape) -> float:
    """The learning rate's factor for a parameter of `shape` (rows A, columns B): sqrt(max(1, A/B)) for
    'original' (the default), 0.2 sqrt(max(A, B)) for 'match_rms_adamw'."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0
