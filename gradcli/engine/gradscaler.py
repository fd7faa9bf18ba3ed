"""torch.amp.GradScaler: loss scaling for mixed precision, as PyTorch's runs it on the CPU.

scale() multiplies the loss by the scale (a float32 0-d tensor, 2**16 at first); step() first unscales the
optimiser's gradients in place (each multiplied by the float32 reciprocal of the scale, taken in double),
noting whether any of them holds an inf or a nan, and skips the optimiser's step if one did; update() then
backs the scale off (x backoff_factor) after a skipped step, or grows it (x growth_factor) after
growth_interval steps in a row without one. The per-optimiser stages (ready, unscaled, stepped) give
PyTorch's errors for unscale_() or step() called twice.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

READY, UNSCALED, STEPPED = 0, 1, 2
_FIX = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."


def _warn(message: str, category: str = "UserWarning") -> None:
    if STATE.warn is not None:
        STATE.warn(category, message)


class GradScaler:
    """torch.amp.GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)."""

    __module__ = "torch.amp.grad_scaler"

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            _warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
        self._states = {}

    # ---- the scale and its tracker
    def _lazy_init(self) -> None:
        self._scale = Tensor(np.array(self._init_scale, np.float32))
        self._growth_tracker = Tensor(np.array(self._init_growth_tracker, np.int32))

    def _check(self, funcname: str):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _FIX)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + _FIX)
        return self._scale, self._growth_tracker

    def _state(self, optimizer) -> dict:
        kept = self._states.get(id(optimizer))
        if kept is None or kept[0] is not optimizer:
            kept = self._states[id(optimizer)] = (optimizer, {"stage": READY, "found_inf_per_device": {}})
        return kept[1]

    def scale(self, outputs):
        if not self._enabled:
            return outputs
        if outputs.__class__ is Tensor:
            if self._scale is None:
                self._lazy_init()
            from gradcli.engine import ops
            return ops.mul(outputs, self._scale)

        def apply(value):
            if value.__class__ is Tensor:
                return self.scale(value)
            if value.__class__ in (list, tuple):
                return value.__class__(apply(v) for v in value)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def unscale_(self, optimizer) -> None:
        if not self._enabled:
            return
        self._check("unscale_")
        state = self._state(optimizer)
        if state["stage"] == UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / float(self._scale._a))        # the reciprocal in double, then float
        found = np.array(0.0, np.float32)
        grads = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g._a.dtype == np.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grads.append(g)
        for g in grads:
            a = g._a
            if not np.isfinite(a).all():
                found[()] = 1.0
            if a.dtype.kind == "V":                 # bfloat16: in float, rounded back
                a[...] = (a.astype(np.float32) * inv_scale).astype(a.dtype)
            else:
                np.multiply(a, a.dtype.type(inv_scale), out=a)
            g._version[0] += 1
        state["found_inf_per_device"] = {"cpu": Tensor(found)} if grads else {}
        state["stage"] = UNSCALED

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check("step")
        state = self._state(optimizer)
        if state["stage"] == STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(float(v._a) for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = STEPPED
        return result

    def update(self, new_scale=None) -> None:
        if not self._enabled:
            return
        scale, tracker = self._check("update")
        if new_scale is not None:
            if new_scale.__class__ is float:
                scale._a[()] = new_scale
            else:
                if new_scale._a.size != 1 or new_scale.requires_grad:
                    raise AssertionError("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                                         "torch.FloatTensor with requires_grad=False.")
                scale.copy_(new_scale)          # (copy_'s errors: a 1-d scale does not fit the 0-d one)
        else:
            found = [v for _, s in self._states.values() for v in s["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            total = np.float32(0)
            for v in found:
                total = np.float32(total + v._a)
            s = np.float32(scale._a)
            if total:
                scale._a[()] = s * np.float32(self._backoff_factor)
                tracker._a[()] = 0
            else:
                successful = int(tracker._a) + 1
                if successful == self._growth_interval:
                    grown = np.float32(s * np.float32(self._growth_factor))
                    if np.isfinite(grown):
                        scale._a[()] = grown
                    tracker._a[()] = 0
                else:
                    tracker._a[()] = successful
        self._states = {}

    # ---- settings and state
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return float(self._init_scale) if self._scale is None else float(self._scale._a)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval) -> None:
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        return self._enabled

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker._a)

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale._a[()] = state_dict["scale"]
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker._a[()] = state_dict["_growth_tracker"]


def cpu_grad_scaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                    enabled=True) -> GradScaler:
    """torch.cpu.amp.GradScaler: GradScaler("cpu", ...), with PyTorch's FutureWarning."""
    _warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cpu', args...)` "
          "instead.", "FutureWarning")
    return GradScaler("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def cuda_grad_scaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True) -> GradScaler:
    """torch.cuda.amp.GradScaler: GradScaler("cuda", ...) (disabled here, with its warning), and the
    FutureWarning."""
    _warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
          "args...)` instead.", "FutureWarning")
    return GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
