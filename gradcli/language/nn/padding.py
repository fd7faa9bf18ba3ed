"""The padding layers: nn.ZeroPad1d/2d/3d, ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d and CircularPad1d/2d/3d, each F.pad with its mode, as torch.nn.modules.padding
builds them (the padding as a tuple of 2, 4 or 6 amounts, its extra_repr)."""

from __future__ import annotations

from gradcli.engine.ops import shape
from gradcli.language.nn.module import Module


def _amounts(padding, n: int) -> tuple:
    """An int repeated 2n times, or the sequence as a tuple (_pair, _quadruple, _ntuple(6))."""
    if isinstance(padding, (tuple, list)):
        return tuple(padding)
    return (padding,) * (2 * n)


class _PadNd(Module):
    __module__ = "torch.nn.modules.padding"
    _dims = 0
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _amounts(padding, self._dims)

    def forward(self, input):
        return shape.functional_pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        Module.__init__(self)
        self.value = value          # (before the amounts, as PyTorch sets them: vars(module) shows the order)
        self.padding = _amounts(padding, self._dims)

    def forward(self, input):
        return shape.functional_pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    __module__ = "torch.nn.modules.padding"
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    __module__ = "torch.nn.modules.padding"
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    __module__ = "torch.nn.modules.padding"
    _dims = 3


class _Zero:
    """What the ZeroPad layers add to their ConstantPad: the value 0.0, and a repr of the amounts alone."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_Zero, ConstantPad1d):
    __module__ = "torch.nn.modules.padding"


class ZeroPad2d(_Zero, ConstantPad2d):
    __module__ = "torch.nn.modules.padding"


class ZeroPad3d(_Zero, ConstantPad3d):
    __module__ = "torch.nn.modules.padding"


class ReflectionPad1d(_PadNd):
    __module__ = "torch.nn.modules.padding"
    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    __module__ = "torch.nn.modules.padding"
    _dims, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    __module__ = "torch.nn.modules.padding"
    _dims, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    __module__ = "torch.nn.modules.padding"
    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    __module__ = "torch.nn.modules.padding"
    _dims, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    __module__ = "torch.nn.modules.padding"
    _dims, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        rank = input.dim()
        if rank not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {rank}D input)")
        return shape.functional_pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    __module__ = "torch.nn.modules.padding"
    _dims = 1


class CircularPad2d(_CircularPadNd):
    __module__ = "torch.nn.modules.padding"
    _dims = 2


class CircularPad3d(_CircularPadNd):
    __module__ = "torch.nn.modules.padding"
    _dims = 3
