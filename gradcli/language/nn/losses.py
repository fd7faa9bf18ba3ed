"""The loss modules: each calls its functional loss with the reduction (and weights, kept as buffers) it
was made with."""

from __future__ import annotations

import dataclasses
import math

from gradcli.engine import dtypes, ops
from gradcli.engine.ops import composed
from gradcli.engine.state import STATE
from gradcli.language.nn.activations import PairwiseDistance
from gradcli.language.nn.module import Module


def _legacy_reduction(size_average, reduce) -> str:
    """size_average/reduce as a reduction, with PyTorch's deprecation warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    text = "mean" if size_average and reduce else ("sum" if reduce else "none")
    if STATE.warn is not None:
        STATE.warn("UserWarning", f"size_average and reduce args will be deprecated, please use reduction='{text}' "
                   "instead.")
    return text


class _Loss(Module):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def forward(self, input, target):
        return ops.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def forward(self, input, target):
        return ops.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return ops.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return ops.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return ops.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """The chunked path's settings (a frozen dataclass, as PyTorch's): checked when made."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        method = self.chunking_method
        if method is not None and method != "auto":
            name, sep, factor = method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (dtypes.float16, dtypes.bfloat16, dtypes.float32,
                                                                   dtypes.float64):
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")


LinearCrossEntropyOptions.__module__ = "torch.nn.modules.linear_cross_entropy_options"


class LinearCrossEntropyLoss(_WeightedLoss):
    """cross_entropy of a Linear layer's logits (its weight stored flat, reshaped to (C, *out_features, in))."""

    __module__ = "torch.nn.modules.linear_cross_entropy"

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        if weight is not None and weight.shape != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        from gradcli.language.nn.layers import Linear
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input, target):
        from gradcli.engine.ops.linear_cross_entropy import linear_cross_entropy
        weight = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        bias = self.linear.bias
        if bias is not None:
            bias = bias.reshape((self.num_classes, *self.out_features))
        return linear_cross_entropy(input, weight, target, linear_bias=bias, weight=self.weight,
                                    reduction=self.reduction, ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")


class NLLLoss(_WeightedLoss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return ops.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                            reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """The deprecated NLLLoss2d: NLLLoss itself (which takes any number of dims), with PyTorch's FutureWarning."""
    __module__ = "torch.nn.modules.loss"

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        if STATE.warn is not None:
            STATE.warn("FutureWarning", "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
                       "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.")
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_WeightedLoss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return ops.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                                 reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    __module__ = "torch.nn.modules.loss"

    def forward(self, input, target):
        return ops.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return ops.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                    reduction=self.reduction)


# The losses PyTorch composes from other ops (gradcli.engine.ops.composed)

class MarginRankingLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return composed.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return composed.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return composed.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return composed.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                            swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Its distance function is a PairwiseDistance submodule unless one is given (then a plain attribute,
    or a submodule when it is a module)."""

    __module__ = "torch.nn.modules.loss"

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return composed.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                          distance_function=self.distance_function,
                                                          margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    __module__ = "torch.nn.modules.loss"

    def forward(self, input, target):
        return composed.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return composed.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                         reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return composed.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


# The margin losses of kernels of their own (gradcli.engine.ops.margin)

class SoftMarginLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def forward(self, input, target):
        return ops.margin.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def forward(self, input, target):
        return ops.margin.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return ops.margin.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                            reduction=self.reduction)


class CTCLoss(_Loss):
    __module__ = "torch.nn.modules.loss"

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ops.ctc.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                                self.zero_infinity)
