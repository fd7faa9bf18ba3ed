"""The pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d,
LPPool1d/2d/3d, MaxUnpool1d/2d/3d, FractionalMaxPool2d/3d. No parameters:
each keeps its arguments as PyTorch's class does (the repr shows them as given), and `forward` calls the
functional op (gradcli.engine.ops.pool)."""

from __future__ import annotations

from gradcli.engine.ops import pool
from gradcli.language.nn.module import Module


class _MaxPoolNd(Module):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                               self.ceil_mode, self.return_indices)


class MaxPool2d(_MaxPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                               self.ceil_mode, self.return_indices)


class MaxPool3d(_MaxPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                               self.ceil_mode, self.return_indices)


def _single(value) -> tuple:
    """torch.nn.modules.utils._single: an int as a 1-tuple, a sequence as a tuple."""
    return tuple(value) if value.__class__ in (tuple, list) else (value,)


class AvgPool1d(Module):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return pool.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                               self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    """AvgPool2d and AvgPool3d: their arguments kept as given."""
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                               self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                               self.count_include_pad, self.divisor_override)


class _AdaptiveAvgPool(Module):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveMaxPool(_AdaptiveAvgPool):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    """LPPool1d/2d/3d: the norm and window as given; forward passes the norm as a float, as PyTorch's does."""
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        return pool.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(Module):
    """MaxUnpool1d/2d/3d: kernel_size, stride (the kernel's by default) and padding as n-tuples."""
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride, padding, n: int):
        super().__init__()
        self.kernel_size = pool._ntuple(kernel_size, n)
        self.stride = pool._ntuple(stride if stride is not None else kernel_size, n)
        self.padding = pool._ntuple(padding, n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__(kernel_size, stride, padding, 1)

    def forward(self, input, indices, output_size=None):
        return pool.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__(kernel_size, stride, padding, 2)

    def forward(self, input, indices, output_size=None):
        return pool.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__(kernel_size, stride, padding, 3)

    def forward(self, input, indices, output_size=None):
        return pool.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class _FractionalMaxPoolNd(Module):
    """FractionalMaxPool2d/3d: kernel_size, output_size and output_ratio as n-tuples, `_random_samples` a
    buffer (None unless given); exactly one of the size and the ratio, the ratio inside (0, 1)."""
    __module__ = "torch.nn.modules.pooling"
    _n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        n = self._n
        self.kernel_size = pool._ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = pool._ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = pool._ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None:
            if not all(0 < self.output_ratio[d] < 1 for d in range(n)):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    __module__ = "torch.nn.modules.pooling"

    def forward(self, input):
        from gradcli.engine.ops import fractional_pool
        return fractional_pool.fractional_max_pool2d(input, self.kernel_size, self.output_size, self.output_ratio,
                                                     self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    __module__ = "torch.nn.modules.pooling"
    _n = 3

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        if (kernel_size.__class__ in (int, bool) and kernel_size <= 0
                or kernel_size.__class__ in (tuple, list) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples)

    def forward(self, input):
        from gradcli.engine.ops import fractional_pool
        return fractional_pool.fractional_max_pool3d(input, self.kernel_size, self.output_size, self.output_ratio,
                                                     self.return_indices, _random_samples=self._random_samples)
