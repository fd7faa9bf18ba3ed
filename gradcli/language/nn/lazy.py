"""The lazy modules (nn.LazyLinear, LazyConv*d, LazyConvTranspose*d, LazyBatchNorm*d, LazyInstanceNorm*d): made
without their input size, their parameters and buffers are placeholders (`<UninitializedParameter>`,
`<UninitializedBuffer>`) until the first call, which reads the size off the input, gives the placeholders
their shapes in place (whoever holds them, an optimizer too, sees the real tensors), runs the regular class's
reset_parameters (so the random draws are the ones PyTorch makes then) and turns the module into that class
(`cls_to_become`), as PyTorch's LazyModuleMixin does with its forward pre-hook.
"""

from __future__ import annotations

from gradcli.engine import autograd, dtypes, parameter
from gradcli.language.nn import conv, layers, normalization
from gradcli.language.classes import ScriptObject
from gradcli.language.nn.module import Module

_PARAMETER, _BUFFER = "UninitializedParameter", "UninitializedBuffer"
# (the helpers below are functions, not methods: a script reaches nothing of gradcli's own through a module)


class LazyModuleMixin(ScriptObject):
    """torch.nn.modules.lazy.LazyModuleMixin: has_uninitialized_params, initialize_parameters, the first call.
    (On ScriptObject, as the module it is mixed with: the layouts match, so the module can become its
    cls_to_become.)"""

    cls_to_become = None

    def has_uninitialized_params(self):
        d = self.__dict__
        return any(parameter.uninitialized_kind(t) is not None
                   for table in ("_parameters", "_buffers") for t in d[table].values() if t is not None)

    def _dict_refresh(self):
        """vars(module) before the first call: PyTorch's holds the handles of its two hooks (_load_hook,
        _initialize_hook), which gradcli's lazy modules do without."""
        raise NotImplementedError(f"gradcli does not implement vars() of a lazy module before its first call "
                                  f"({type(self).__name__})")

    def __call__(self, *args, **kwargs):
        # PyTorch's _infer_parameters pre-hook, registered first: it runs until a call completes the module,
        # which then becomes cls_to_become, whose __call__ is Module's (so a copy of a lazy module is lazy too)
        self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)


def _placeholder(module, name: str, kind: str, dtype, device=None) -> None:
    """An Uninitialized{Parameter,Buffer} of `dtype` on `device` (checked as a factory checks it)."""
    from gradcli.engine import factories
    on_meta = factories.factory_device(device)
    table = "_parameters" if kind == _PARAMETER else "_buffers"
    module.__dict__[table][name] = parameter.uninitialized(kind, dtype, on_meta)


def _materialize(module, name: str, shape: tuple) -> None:
    t = module.__dict__["_parameters"].get(name)
    if t is None:
        t = module.__dict__["_buffers"].get(name)
    if t is not None:
        parameter.materialize(t, shape)


def _dtype(dtype):
    return dtype if dtype is not None else dtypes.default_float


class LazyLinear(LazyModuleMixin, layers.Linear):
    __module__ = "torch.nn.modules.linear"
    cls_to_become = layers.Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        layers.Linear.__init__(self, 0, 0, False, device, dtype)
        _placeholder(self, "weight", _PARAMETER, _dtype(dtype), device)
        self.out_features = out_features
        if bias:
            _placeholder(self, "bias", _PARAMETER, _dtype(dtype), device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            layers.Linear.reset_parameters(self)

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():         # (loaded from a state dict: PyTorch 2.13 still reads
            self.in_features = input.shape[-1]          # the input's size)
            return
        with autograd.no_grad():
            self.in_features = input.shape[-1]
            _materialize(self, "weight", (self.out_features, self.in_features))
            _materialize(self, "bias", (self.out_features,))
            self.reset_parameters()


def _conv_placeholders(module, out_channels, bias, dtype, device=None) -> None:
    _placeholder(module, "weight", _PARAMETER, _dtype(dtype), device)
    module.out_channels = out_channels
    if bias:
        _placeholder(module, "bias", _PARAMETER, _dtype(dtype), device)


class _LazyConvMixin(LazyModuleMixin):

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            conv._ConvNd.reset_parameters(self)

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with autograd.no_grad():
                if self.transposed:
                    shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
                else:
                    shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
                _materialize(self, "weight", shape)
                _materialize(self, "bias", (self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        n = self._dims
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {type(self).__name__}, "
                               f"but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == n + 2 else input.shape[0]


def _lazy_conv_class(name: str, base):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        _conv_placeholders(self, out_channels, bias, dtype, device)

    def __init_transposed__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                            bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                      padding_mode, device, dtype)
        _conv_placeholders(self, out_channels, bias, dtype, device)

    init = __init_transposed__ if base._transposed else __init__
    return type(base)(name, (_LazyConvMixin, base), {"__module__": "torch.nn.modules.conv", "cls_to_become": base,
                                                       "__init__": init, "__qualname__": name})


LazyConv1d = _lazy_conv_class("LazyConv1d", conv.Conv1d)
LazyConv2d = _lazy_conv_class("LazyConv2d", conv.Conv2d)
LazyConv3d = _lazy_conv_class("LazyConv3d", conv.Conv3d)
LazyConvTranspose1d = _lazy_conv_class("LazyConvTranspose1d", conv.ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_class("LazyConvTranspose2d", conv.ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_class("LazyConvTranspose3d", conv.ConvTranspose3d)


def _norm_placeholders(module, affine, track_running_stats, dtype, device) -> None:
    module.affine = affine
    module.track_running_stats = track_running_stats
    if affine:
        _placeholder(module, "weight", _PARAMETER, _dtype(dtype), device)
        _placeholder(module, "bias", _PARAMETER, _dtype(dtype), device)
    if track_running_stats:
        _placeholder(module, "running_mean", _BUFFER, _dtype(dtype), device)
        _placeholder(module, "running_var", _BUFFER, _dtype(dtype), device)
        module.__dict__["_buffers"]["num_batches_tracked"] = _long_zero(device)


class _LazyNormMixin(LazyModuleMixin):

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            normalization._NormBase.reset_parameters(self)

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                _materialize(self, "weight", (self.num_features,))
                _materialize(self, "bias", (self.num_features,))
            if self.track_running_stats:
                _materialize(self, "running_mean", (self.num_features,))
                _materialize(self, "running_var", (self.num_features,))
            self.reset_parameters()


def _long_zero(device=None):
    from gradcli.engine import factories
    return factories.tensor(0, dtype=dtypes.int64, device=device)


def _lazy_norm_class(name: str, base, affine_default: bool):
    def __init__(self, eps=1e-05, momentum=0.1, affine=affine_default, track_running_stats=affine_default,
                 device=None, dtype=None):
        base.__init__(self, 0, eps, momentum, False, False, device, dtype)
        _norm_placeholders(self, affine, track_running_stats, dtype, device)

    return type(base)(name, (_LazyNormMixin, base), {"__module__": base.__module__, "cls_to_become": base,
                                                      "__init__": __init__, "__qualname__": name})


# PyTorch's lazy instance norms default to affine=True and track_running_stats=True, unlike InstanceNorm
LazyBatchNorm1d = _lazy_norm_class("LazyBatchNorm1d", normalization.BatchNorm1d, True)
LazyBatchNorm2d = _lazy_norm_class("LazyBatchNorm2d", normalization.BatchNorm2d, True)
LazyBatchNorm3d = _lazy_norm_class("LazyBatchNorm3d", normalization.BatchNorm3d, True)
LazyInstanceNorm1d = _lazy_norm_class("LazyInstanceNorm1d", normalization.InstanceNorm1d, True)
LazyInstanceNorm2d = _lazy_norm_class("LazyInstanceNorm2d", normalization.InstanceNorm2d, True)
LazyInstanceNorm3d = _lazy_norm_class("LazyInstanceNorm3d", normalization.InstanceNorm3d, True)

CLASSES = (LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
           LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d,
           LazyInstanceNorm2d, LazyInstanceNorm3d)
