"""torch.nn.utils' fusions of a batch norm in eval mode into the convolution or linear layer before it.

The batch norm's affine map folds into the layer's weight and bias, as PyTorch computes them: the scale
weight * rsqrt(running_var + eps), the weight times it (along the output channels: dim 0, or dim 1 for a
transposed convolution), the bias (bias - running_mean) * rsqrt(...) * weight + bias_bn; each result cast
back to the layer's dtypes and made a Parameter that requires grad as the layer's own did.
"""

from __future__ import annotations

from gradcli.engine import factories, ops, parameter
from gradcli.language import copying


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = factories.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = factories.ones_like(bn_rm)
    if bn_b is None:
        bn_b = factories.zeros_like(bn_rm)
    rsqrt = ops.rsqrt(bn_rv + bn_eps)
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.dim() - 2)
    fused_w = ops.to_dtype(conv_w * (bn_w * rsqrt).reshape(shape), weight_dtype)
    fused_b = ops.to_dtype((conv_b - bn_rm) * rsqrt * bn_w + bn_b, bias_dtype)
    return parameter.make(fused_w, conv_w.requires_grad), parameter.make(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copying.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError()
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = factories.zeros_like(bn_rm)
    scale = bn_w * ops.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * ops.to_dtype(scale.unsqueeze(-1), weight_dtype)
    fused_b = ops.to_dtype((linear_b - bn_rm) * scale + bn_b, bias_dtype)
    return parameter.make(fused_w, linear_w.requires_grad), parameter.make(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    fused = copying.deepcopy(linear)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError()
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused
