"""The normalisation layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm, RMSNorm, as PyTorch's
torch.nn.modules.batchnorm, instancenorm and normalization define them (parameters, running-statistics buffers in
PyTorch's order, train/eval behaviour, input checks and reprs)."""

from __future__ import annotations

from gradcli.engine import dtypes, factories, init, ops, parameter
from gradcli.engine.state import STATE
from gradcli.language.nn.module import Module


def _affine_parameters(module, affine: bool, bias: bool, size, dtype, device) -> None:
    """weight (and bias unless bias=False) made by empty(size) when affine (an int, or LayerNorm's
    normalized_shape tuple, so a bad size gets the message PyTorch's call gets), else both None."""
    if affine:
        module.weight = parameter.make(factories.empty(size, dtype=dtype, device=device))
        if bias:
            module.bias = parameter.make(factories.empty(size, dtype=dtype, device=device))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


class _NormBase(Module):
    """_NormBase: weight and bias (affine), then the buffers running_mean, running_var and num_batches_tracked
    (track_running_stats), shared by the batch and instance norms."""

    __module__ = "torch.nn.modules.batchnorm"

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, affine, bias, num_features, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", factories.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", factories.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", factories.tensor(0, dtype=dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """_BatchNorm: forward picks the statistics and momentum as PyTorch does."""

    __module__ = "torch.nn.modules.batchnorm"

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return ops.batch_norm(input, self.running_mean if use_buffers else None,
                              self.running_var if use_buffers else None, self.weight, self.bias, bn_training,
                              factor, self.eps)


class BatchNorm1d(_BatchNorm):
    __module__ = "torch.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    __module__ = "torch.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    __module__ = "torch.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


def _dims_check(input, allowed: tuple) -> None:
    if input.dim() not in allowed:
        raise ValueError(f"expected {allowed[0]}D or {allowed[1]}D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    """_InstanceNorm: F.instance_norm over each sample's channels (no affine parameters and no running
    statistics unless asked); an input without its batch dim is normalised as a batch of one."""

    __module__ = "torch.nn.modules.instancenorm"

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _apply_instance_norm(self, input):
        return ops.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                                 self.training or not self.track_running_stats,
                                 self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        no_batch_dim = self._get_no_batch_dim()
        feature_dim = input.dim() - no_batch_dim
        size = input.size(feature_dim)
        if size != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {size}.")
            if STATE.warn is not None:
                STATE.warn("UserWarning", f"input's size at dim={feature_dim} does not match num_features. You can "
                           "silence this warning by not passing in num_features, which is not used because "
                           "affine=False")
        if input.dim() == no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    __module__ = "torch.nn.modules.instancenorm"

    def _get_no_batch_dim(self):
        return 2

    def _check_input_dim(self, input):
        _dims_check(input, (2, 3))


class InstanceNorm2d(_InstanceNorm):
    __module__ = "torch.nn.modules.instancenorm"

    def _get_no_batch_dim(self):
        return 3

    def _check_input_dim(self, input):
        _dims_check(input, (3, 4))


class InstanceNorm3d(_InstanceNorm):
    __module__ = "torch.nn.modules.instancenorm"

    def _get_no_batch_dim(self):
        return 4

    def _check_input_dim(self, input):
        _dims_check(input, (4, 5))


def _shape_settings(module, normalized_shape, eps, elementwise_affine) -> None:
    """LayerNorm's and RMSNorm's first settings: normalized_shape (an int or a sequence) as a tuple, eps and
    elementwise_affine."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    module.normalized_shape = tuple(normalized_shape)
    module.eps = eps
    module.elementwise_affine = elementwise_affine


class LayerNorm(Module):
    """nn.LayerNorm: normalises over the trailing normalized_shape dims; weight ones, bias zeros."""

    __module__ = "torch.nn.modules.normalization"

    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        _shape_settings(self, normalized_shape, eps, elementwise_affine)
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, dtype, device)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return ops.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """nn.GroupNorm: num_channels split into num_groups groups, each normalised per sample."""

    __module__ = "torch.nn.modules.normalization"

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, bias, num_channels, dtype, device)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return ops.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"


class RMSNorm(Module):
    """nn.RMSNorm: divides by the root mean square over the trailing normalized_shape dims; weight ones."""

    __module__ = "torch.nn.modules.normalization"

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        _shape_settings(self, normalized_shape, eps, elementwise_affine)
        if elementwise_affine:
            self.weight = parameter.make(factories.empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return ops.composed.functional_rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """nn.LocalResponseNorm: each channel divided by (k + alpha * the mean square over `size` neighbouring
    channels) ** beta."""

    __module__ = "torch.nn.modules.normalization"

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return ops.composed.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def replace_all_batch_norm_modules_(root):
    """torch.func.replace_all_batch_norm_modules_: every batch norm in root (root included) that tracks running
    statistics stops tracking them (its running_mean, running_var and num_batches_tracked become None), as vmap
    over a model in training mode needs; root is returned."""
    for module in [root] + (list(root.modules()) if isinstance(root, Module) else []):
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    if not isinstance(root, Module):
        raise AttributeError(f"'{type(root).__name__}' object has no attribute 'modules'")
    return root
