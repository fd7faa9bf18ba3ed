"""The layers with parameters or shapes of their own: Identity, Linear, Bilinear, Embedding, Flatten, Unflatten,
Dropout. One class per layer: its parameters made and initialised as PyTorch's `reset_parameters` does
(so seeded scripts draw PyTorch's numbers), `forward` on the functional op, `extra_repr` for the repr."""

from __future__ import annotations

import math

from gradcli.engine import autograd, factories, init, ops, parameter
from gradcli.language.nn.module import Module


def _empty(*shape, dtype=None, device=None):
    return factories.empty(*shape, dtype=dtype, device=device)


def _empty_tuple(shape: tuple, dtype=None, device=None):
    """torch.empty((a, b), ...): a weight's size as PyTorch's layers pass it, one tuple (so a float among the
    sizes is the parser's element error, not a count of positional arguments). The device is checked as the
    factory checks it (a CPU build fails on 'cuda')."""
    return factories.empty(tuple(shape), dtype=dtype, device=device)


def _weight_and_bias(module, shape: tuple, bias: bool, dtype, device=None) -> None:
    """A weight of `shape` and a bias of its first dim (or a bias registered as None), then their
    initialisation: in PyTorch's order, so the draws come in its order."""
    module.weight = parameter.make(_empty_tuple(shape, dtype=dtype, device=device))
    if bias:
        module.bias = parameter.make(_empty(shape[0], dtype=dtype, device=device))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


class Identity(Module):
    """nn.Identity: its input, whatever arguments it was made with."""

    __module__ = "torch.nn.modules.linear"

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """nn.Linear: y = x Wᵀ + b."""

    __module__ = "torch.nn.modules.linear"

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), bias, dtype, device)

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = init.fan_in(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        d = self.__dict__
        params = d.get("_parameters")
        if self.__class__ is Linear and "weight" in params and "bias" in params and "weight" not in d \
                and "bias" not in d:
            # where `self.weight` would find them (no class of a script's between, nothing in the instance's
            # own dict), without the failed lookup and Module.__getattr__ (about 7k instructions each)
            return ops.linear(input, params["weight"], params["bias"])
        return ops.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """nn.Bilinear: y = x1ᵀ A x2 + b, one matrix A per output feature."""

    __module__ = "torch.nn.modules.linear"

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, dtype, device)

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return ops.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def _padding_row(padding_idx, num_embeddings, word: str):
    """An embedding's padding_idx checked against the table and made non-negative (Embedding's message
    capitalises the word, EmbeddingBag's does not)."""
    if padding_idx is not None:
        if padding_idx > 0:
            if not padding_idx < num_embeddings:
                raise AssertionError(f"{word} must be within num_embeddings")
        elif padding_idx < 0:
            if not padding_idx >= -num_embeddings:
                raise AssertionError(f"{word} must be within num_embeddings")
            padding_idx = num_embeddings + padding_idx
    return padding_idx


class Embedding(Module):
    """nn.Embedding: rows of a weight table picked by index; the padding row starts at zero and gets no
    gradient."""

    __module__ = "torch.nn.modules.sparse"

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_row(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = parameter.make(_empty_tuple((num_embeddings, embedding_dim), dtype=dtype, device=device),
                                         requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = parameter.make(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with autograd.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return ops.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """nn.EmbeddingBag: the rows of a weight table that each bag of indices names, summed, averaged or maxed
    (F.embedding_bag); the padding row starts at zero and is left out of every bag."""

    __module__ = "torch.nn.modules.sparse"

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_row(padding_idx, num_embeddings, "padding_idx")
        if _weight is None:
            self.weight = parameter.make(_empty_tuple((num_embeddings, embedding_dim), dtype=dtype, device=device))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = parameter.make(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with autograd.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        from gradcli.engine.ops import embedding_bag
        return embedding_bag.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                                           self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                                           self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag


class Flatten(Module):
    __module__ = "torch.nn.modules.flatten"

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class PixelShuffle(Module):
    __module__ = "torch.nn.modules.pixelshuffle"

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        from gradcli.engine.ops import arrange
        return arrange.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    __module__ = "torch.nn.modules.pixelshuffle"

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        from gradcli.engine.ops import arrange
        return arrange.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class Unfold(Module):
    __module__ = "torch.nn.modules.fold"

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        from gradcli.engine.ops import fold
        return fold.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    __module__ = "torch.nn.modules.fold"

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        from gradcli.engine.ops import fold
        return fold.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unflatten(Module):
    __module__ = "torch.nn.modules.flatten"

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for i, d in enumerate(unflattened_size):
            if not isinstance(d, int):      # (a bool is an int here, as in Python)
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(d).__name__} at pos {i}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class PReLU(Module):
    """x where x > 0, weight * x elsewhere: one learnt slope, or one per channel (dim 1)."""
    __module__ = "torch.nn.modules.activation"

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = parameter.make(_empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return ops.nn.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _DropoutNd(Module):
    __module__ = "torch.nn.modules.dropout"

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return ops.dropout(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's self-normalisation: dropped values set to SELU's negative saturation, then an
    affine correction."""
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return ops.randomized.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels."""
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return ops.randomized.feature_alpha_dropout(input, self.p, self.training)


class ChannelShuffle(Module):
    __module__ = "torch.nn.modules.channelshuffle"

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return ops.arrange.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class Dropout1d(_DropoutNd):
    """Channel dropout: whole channels of (N, C, L) or (C, L) inputs."""
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return ops.nn.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Channel dropout: whole channels of (N, C, H, W) inputs."""
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return ops.nn.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Channel dropout: whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return ops.nn.dropout3d(input, self.p, self.training, self.inplace)
