"""torch.nn as scripts reach it: the module classes, nn.Parameter, nn.init and nn.functional's additions.

Layers are one class each (gradcli.language.nn.layers, activations, losses), deriving from Module
(gradcli.language.nn.module); a new layer is a class there and a name in NAMES below.
"""

from __future__ import annotations

from gradcli.engine import init, parameter
from gradcli.engine.tensor import Tensor
from gradcli.language.nn import activations, adaptive, containers, layers, lazy, losses
from gradcli.language.nn import conv, normalization, padding, pooling, rnn, transformer, upsampling
from gradcli.language.nn.module import Module

_CLASSES = (Module, containers.Sequential, containers.ModuleList, containers.ModuleDict, layers.Identity,
            layers.Linear, layers.Bilinear, layers.Embedding, layers.EmbeddingBag, layers.Flatten, layers.Unflatten, layers.Dropout,
            layers.Dropout1d, layers.Dropout2d, layers.Dropout3d, layers.PReLU, layers.PixelShuffle, layers.PixelUnshuffle,
            layers.Unfold, layers.Fold,
            activations.ReLU, activations.LeakyReLU, activations.Tanh, activations.Sigmoid, activations.GELU,
            activations.SiLU, activations.Mish, activations.GLU, activations.Hardshrink, activations.Softshrink,
            activations.PairwiseDistance, activations.SELU, activations.CELU, activations.Softplus, activations.ELU, activations.Softmax,
            activations.LogSoftmax, losses.MSELoss, losses.L1Loss, losses.CrossEntropyLoss, losses.LinearCrossEntropyLoss,
            losses.LinearCrossEntropyOptions, losses.NLLLoss, losses.NLLLoss2d,
            losses.BCELoss, losses.BCEWithLogitsLoss, losses.SmoothL1Loss, losses.HuberLoss, losses.KLDivLoss,
            activations.Hardtanh, activations.Threshold, activations.ReLU6, activations.LogSigmoid, activations.Softsign,
            activations.Tanhshrink, activations.Softmin, activations.CosineSimilarity, losses.MarginRankingLoss,
            losses.HingeEmbeddingLoss, losses.CosineEmbeddingLoss, losses.MultiLabelSoftMarginLoss,
            losses.PoissonNLLLoss, losses.GaussianNLLLoss, losses.SoftMarginLoss, losses.MultiLabelMarginLoss,
            losses.MultiMarginLoss, losses.CTCLoss, losses.TripletMarginLoss, losses.TripletMarginWithDistanceLoss, containers.ParameterList, containers.ParameterDict,
            activations.Hardsigmoid, activations.Hardswish, activations.RReLU, activations.Softmax2d,
            layers.AlphaDropout, layers.FeatureAlphaDropout, layers.ChannelShuffle, normalization.LocalResponseNorm,
            rnn.RNNBase, rnn.RNN, rnn.LSTM, rnn.GRU, rnn.RNNCellBase, rnn.RNNCell, rnn.LSTMCell, rnn.GRUCell,
            normalization.BatchNorm1d, normalization.BatchNorm2d, normalization.BatchNorm3d,
            normalization.InstanceNorm1d, normalization.InstanceNorm2d, normalization.InstanceNorm3d,
            normalization.LayerNorm, normalization.GroupNorm, normalization.RMSNorm,
            conv.Conv1d, conv.Conv2d, conv.Conv3d, conv.ConvTranspose1d, conv.ConvTranspose2d,
            conv.ConvTranspose3d,
            padding.ZeroPad1d, padding.ZeroPad2d, padding.ZeroPad3d, padding.ConstantPad1d, padding.ConstantPad2d,
            padding.ConstantPad3d, padding.ReflectionPad1d, padding.ReflectionPad2d, padding.ReflectionPad3d,
            padding.ReplicationPad1d, padding.ReplicationPad2d, padding.ReplicationPad3d, padding.CircularPad1d,
            padding.CircularPad2d, padding.CircularPad3d,
            pooling.MaxPool1d, pooling.MaxPool2d, pooling.MaxPool3d, pooling.AvgPool1d, pooling.AvgPool2d,
            pooling.AvgPool3d, pooling.AdaptiveAvgPool1d, pooling.AdaptiveAvgPool2d, pooling.AdaptiveAvgPool3d,
            pooling.AdaptiveMaxPool1d, pooling.AdaptiveMaxPool2d, pooling.AdaptiveMaxPool3d,
            pooling.LPPool1d, pooling.LPPool2d, pooling.LPPool3d, pooling.MaxUnpool1d, pooling.MaxUnpool2d,
            pooling.MaxUnpool3d, pooling.FractionalMaxPool2d, pooling.FractionalMaxPool3d,
            upsampling.Upsample, upsampling.UpsamplingNearest2d, upsampling.UpsamplingBilinear2d,
            transformer.MultiheadAttention,
            transformer.TransformerEncoderLayer, transformer.TransformerEncoder, transformer.TransformerDecoderLayer,
            transformer.TransformerDecoder, transformer.Transformer) + lazy.CLASSES + (adaptive.AdaptiveLogSoftmaxWithLoss,)


class ParameterClass(type):
    """What isinstance and issubclass take for nn.Parameter: a tensor carrying the Parameter mark."""

    def __instancecheck__(cls, obj):
        return obj.__class__ is Tensor and parameter.is_parameter(obj)

    def __subclasscheck__(cls, other):
        return other is cls


class Parameter(metaclass=ParameterClass):
    MARKS_A_TENSOR = True       # issubclass(nn.Parameter, torch.Tensor), as in PyTorch


class BufferClass(type):
    """What isinstance and issubclass take for nn.Buffer: a tensor nn.Buffer made."""

    def __instancecheck__(cls, obj):
        return obj.__class__ is Tensor and parameter.buffer_persistence(obj) is not None

    def __subclasscheck__(cls, other):
        return other is cls


class Buffer(metaclass=BufferClass):
    MARKS_A_TENSOR = True


def make_parameter(data=None, requires_grad=True):
    return parameter.make(data, requires_grad)


def classes() -> dict:
    """torch.nn's classes by name."""
    return {cls.__name__: cls for cls in _CLASSES}


INIT = {name: getattr(init, name) for name in (
    "calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "xavier_uniform_", "xavier_normal_",
    "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "eye_", "dirac_", "orthogonal_", "sparse_")}
INIT.update(init.DEPRECATED)        # the old names (`nn.init.xavier_uniform`), with PyTorch's FutureWarning
