"""The resampling layers: Upsample, UpsamplingNearest2d, UpsamplingBilinear2d. No parameters: each keeps its
arguments as PyTorch's class does (scale factors as floats, the repr showing the scale or the size and the
mode) and `forward` calls F.interpolate (gradcli.engine.ops.upsample)."""

from __future__ import annotations

from gradcli.engine.ops import upsample
from gradcli.language.nn.module import Module


def _float(value):
    """float(value) as Python's float() reads it (a number, a bool, a 0-d tensor via __float__)."""
    if isinstance(value, (int, float)):
        return float(value)
    if hasattr(value, "__float__"):
        return float(value)
    raise TypeError(f"float() argument must be a string or a real number, not '{type(value).__name__}'")


class Upsample(Module):
    __module__ = "torch.nn.modules.upsampling"

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(_float(factor) for factor in scale_factor)
        else:
            self.scale_factor = _float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return upsample.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                                    recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    __module__ = "torch.nn.modules.upsampling"

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    __module__ = "torch.nn.modules.upsampling"

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
