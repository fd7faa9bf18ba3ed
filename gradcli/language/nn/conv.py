"""The convolution layers: nn.Conv1d/2d/3d and nn.ConvTranspose1d/2d/3d, as torch.nn.modules.conv builds
them (arguments checked in its order, parameters initialised in its order, its extra_repr)."""

from __future__ import annotations

import math

from gradcli.engine import factories, init, ops, parameter, signatures
from gradcli.language.nn.module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    """torch.nn.modules.utils._ntuple: a sequence as a tuple, anything else repeated n times."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What the convolution layers share: their arguments, parameters, initialisation and repr."""

    __module__ = "torch.nn.modules.conv"
    _dims = 0
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None, output_padding=0):
        super().__init__()
        n = self._dims
        kernel_size, stride, dilation = _ntuple(kernel_size, n), _ntuple(stride, n), _ntuple(dilation, n)
        if not isinstance(padding, str):
            padding = _ntuple(padding, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {{'zeros', 'reflect', 'replicate', 'circular'}}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts for a padding_mode other than zeros: the last dim's first
        if isinstance(padding, str):
            twice = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    twice[2 * i] = total // 2
                    twice[2 * i + 1] = total - total // 2
        else:
            twice = tuple(p for p in reversed(padding) for _ in range(2))
        self._reversed_padding_repeated_twice = twice
        if self._transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        self.weight = parameter.make(factories.empty(shape, dtype=dtype, device=device))    # one tuple, as PyTorch passes it
        if bias:
            self.bias = parameter.make(factories.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = init.fan_in(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        n = len(self.kernel_size)
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def _as_functional(fn, name: str, args: tuple):
    """fn(*args), the module's call of F.<name>: what the module stored (a float stride) fails F's parser
    in its words, as PyTorch's module forwards it to F."""
    try:
        return fn(*args)
    except TypeError:
        message = signatures.check(f"torch.nn.functional.{name}", args, {})
        if message is None:
            raise
        raise TypeError(message) from None


class _Conv(_ConvNd):
    _functional = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._functional
        if self.padding_mode != "zeros":
            input = ops.shape.functional_pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            args = (input, weight, bias, self.stride, (0,) * self._dims, self.dilation, self.groups)
        else:
            args = (input, weight, bias, self.stride, self.padding, self.dilation, self.groups)
        return _as_functional(conv, f"conv{self._dims}d", args)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    __module__ = "torch.nn.modules.conv"
    _dims = 1
    _functional = staticmethod(ops.conv1d)


class Conv2d(_Conv):
    __module__ = "torch.nn.modules.conv"
    _dims = 2
    _functional = staticmethod(ops.conv2d)


class Conv3d(_Conv):
    __module__ = "torch.nn.modules.conv"
    _dims = 3
    _functional = staticmethod(ops.conv3d)


class _ConvTranspose(_ConvNd):
    _transposed = True
    _functional = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def forward(self, input, output_size=None):
        if output_size is not None:
            raise NotImplementedError(f"gradcli does not implement {type(self).__name__}.forward's output_size yet")
        return _as_functional(type(self)._functional, f"conv_transpose{self._dims}d", (
            input, self.weight, self.bias, self.stride, self.padding, self.output_padding, self.groups, self.dilation))


class ConvTranspose1d(_ConvTranspose):
    __module__ = "torch.nn.modules.conv"
    _dims = 1
    _functional = staticmethod(ops.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    __module__ = "torch.nn.modules.conv"
    _dims = 2
    _functional = staticmethod(ops.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    __module__ = "torch.nn.modules.conv"
    _dims = 3
    _functional = staticmethod(ops.conv_transpose3d)
