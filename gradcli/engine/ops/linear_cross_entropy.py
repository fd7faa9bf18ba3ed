"""F.linear_cross_entropy: cross_entropy of a linear layer's logits (K-dimensional weights included) on PyTorch
2.13's reference path; with options (gradcli.language.nn.losses.LinearCrossEntropyOptions), PyTorch's warning where
its chunked path does not apply, a refusal where it would."""

from __future__ import annotations

import math

from gradcli.engine import dtypes
from gradcli.engine.ops import nn
from gradcli.engine.state import STATE

# Why a composition: PyTorch's reference path is Python calling F.linear, reshape and F.cross_entropy, so the
# graph it records is theirs (NllLossBackward0, LogSoftmaxBackward0, ViewBackward0, AddmmBackward0 or
# MmBackward0) and so are its values; the same calls here record the same nodes.

def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    nn._expect_attr(input, "dim")
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    nn._expect_attr(linear_weight, "dim")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None:
        nn._expect_attr(linear_bias, "shape")
        if tuple(linear_bias.shape) != (classes, *out_features):
            raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                               f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batches, classes, *out_features)
    nn._expect_attr(target, "shape")
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        _chunked(options, out_features, reduction, label_smoothing, target, linear_bias)
    if out_features:
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = nn.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return nn.cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                            label_smoothing=label_smoothing)


def _chunked(options, out_features, reduction, label_smoothing, target, linear_bias) -> None:
    """With options: PyTorch's warning where its chunked path does not apply (the reference path follows),
    else gradcli's refusal of that path."""
    int64 = target.dtype is dtypes.int64
    if out_features or reduction not in ("mean", "sum", "none") or label_smoothing != 0.0 or not int64:
        if STATE.warn is not None:
            bias = tuple(linear_bias.shape) if linear_bias is not None else None
            STATE.warn("UserWarning", "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                       "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). "
                       f"Got reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                       f"out_features={tuple(out_features)}, tracing=False, linear_bias.shape={bias}.")
        return
    raise NotImplementedError("gradcli does not implement torch.nn.functional.linear_cross_entropy with options "
                              "(PyTorch's chunked path; options=None, the reference path, is implemented)")

