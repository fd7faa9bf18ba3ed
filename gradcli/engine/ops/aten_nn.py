"""The `torch.*` names PyTorch gives its nn ops (torch.layer_norm, torch.embedding, torch.kl_div, ...): ATen's
signatures, which differ from torch.nn.functional's (all positional, other orders, a loss's reduction as
at::Reduction's int, none required defaults), bound by PyTorch's parser (gradcli.engine.signatures) and handed to
the implementations F's functions use.

A quirk kept from PyTorch 2.13's parser: the default `int reduction=Mean` of these signatures reads as 0, so a loss
called without a reduction is left unreduced; 1 is the mean, 2 the sum, anything else none.
"""

from __future__ import annotations

from gradcli.engine import signatures
from gradcli.engine.ops import composed, elementwise, nn, normalization, randomized
from gradcli.engine.recording import autocast_policy
from gradcli.engine.tensor import Tensor

_REDUCTIONS = {1: "mean", 2: "sum"}


def _reduction(value: int) -> str:
    return _REDUCTIONS.get(value, "none")


def _number(v):
    """A Number/float argument the parser took: a 0-d tensor stands for its value."""
    return v._a.item() if v.__class__ is Tensor else v


def _args(name: str, args: tuple, kwargs: dict, defaults: dict) -> dict:
    return signatures.parsed("torch." + name, args, kwargs, defaults)


def layer_norm(*args, **kwargs) -> Tensor:
    shape = args[1] if len(args) > 1 else kwargs.get("normalized_shape")
    if shape.__class__ is int:      # SymInt[] (no size): the parser takes no lone int, unlike F.layer_norm's
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    v = _args("layer_norm", args, kwargs, {"eps": 1e-05, "cudnn_enable": True})
    return normalization.layer_norm(v["input"], v["normalized_shape"], v["weight"], v["bias"], _number(v["eps"]))


def group_norm(*args, **kwargs) -> Tensor:
    v = _args("group_norm", args, kwargs, {"eps": 1e-05, "cudnn_enabled": True})
    return normalization.group_norm(v["input"], v["num_groups"], v["weight"], v["bias"], _number(v["eps"]))


def batch_norm(*args, **kwargs) -> Tensor:
    """torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)."""
    v = _args("batch_norm", args, kwargs, {})
    return normalization.batch_norm(v["input"], v["running_mean"], v["running_var"], v["weight"], v["bias"],
                                    v["training"], _number(v["momentum"]), _number(v["eps"]))


def instance_norm(*args, **kwargs) -> Tensor:
    """torch.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
    cudnn_enabled)."""
    v = _args("instance_norm", args, kwargs, {})
    return normalization.instance_norm(v["input"], v["running_mean"], v["running_var"], v["weight"], v["bias"],
                                       v["use_input_stats"], _number(v["momentum"]), _number(v["eps"]),
                                       spatial_check=False)


def embedding(*args, **kwargs) -> Tensor:
    """torch.embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False): the weight first;
    a padding_idx no index can equal (negative, or past the rows) is none, without F.embedding's checks of it."""
    v = _args("embedding", args, kwargs, {"padding_idx": -1, "scale_grad_by_freq": False, "sparse": False})
    weight, padding = v["weight"], v["padding_idx"]
    rows = weight._a.shape[0] if weight.__class__ is Tensor and weight._a.ndim else 0
    return nn.embedding(v["indices"], weight, padding if 0 <= padding < rows else None, None, 2.0,
                        v["scale_grad_by_freq"], v["sparse"])


def bilinear(*args, **kwargs) -> Tensor:
    v = _args("bilinear", args, kwargs, {})
    return nn.bilinear(v["input1"], v["input2"], v["weight"], v["bias"])


@autocast_policy("fp32")
def kl_div(*args, **kwargs) -> Tensor:
    v = _args("kl_div", args, kwargs, {"reduction": 0, "log_target": False})
    return nn.kl_div_enum(v["input"], v["target"], _reduction(v["reduction"]), v["log_target"])


@autocast_policy("fp32")
def cosine_embedding_loss(*args, **kwargs) -> Tensor:
    v = _args("cosine_embedding_loss", args, kwargs, {"margin": 0.0, "reduction": 0})
    return composed.cosine_embedding_loss(v["input1"], v["input2"], v["target"], float(_number(v["margin"])),
                                          reduction=_reduction(v["reduction"]))


@autocast_policy("fp32")
def hinge_embedding_loss(*args, **kwargs) -> Tensor:
    v = _args("hinge_embedding_loss", args, kwargs, {"margin": 1.0, "reduction": 0})
    return composed.hinge_embedding_loss(v["input"], v["target"], float(_number(v["margin"])),
                                         reduction=_reduction(v["reduction"]))


@autocast_policy("fp32")
def margin_ranking_loss(*args, **kwargs) -> Tensor:
    v = _args("margin_ranking_loss", args, kwargs, {"margin": 0.0, "reduction": 0})
    return composed.margin_ranking_loss(v["input1"], v["input2"], v["target"], float(_number(v["margin"])),
                                        reduction=_reduction(v["reduction"]))


@autocast_policy("fp32")
def poisson_nll_loss(*args, **kwargs) -> Tensor:
    v = _args("poisson_nll_loss", args, kwargs, {})
    return composed.poisson_nll_loss(v["input"], v["target"], v["log_input"], v["full"], eps=_number(v["eps"]),
                                     reduction=_reduction(v["reduction"]))


def _dropout_form(name: str, inplace: bool, feature=None):
    """torch.alpha_dropout / feature_alpha_dropout (feature True/False) or torch.feature_dropout (feature None),
    and their in-place forms: (input, p, train), all required."""
    def fn(*args, **kwargs):
        v = _args(name, args, kwargs, {})
        if feature is None:
            return nn.feature_dropout(v["input"], _number(v["p"]), v["train"], inplace)
        return randomized.alpha_dropout_raw(v["input"], _number(v["p"]), v["train"], inplace, feature)
    fn.__name__ = fn.__qualname__ = name
    return fn


alpha_dropout = _dropout_form("alpha_dropout", False, False)
alpha_dropout_ = _dropout_form("alpha_dropout_", True, False)
feature_alpha_dropout = _dropout_form("feature_alpha_dropout", False, True)
feature_alpha_dropout_ = _dropout_form("feature_alpha_dropout_", True, True)
feature_dropout = _dropout_form("feature_dropout", False)
feature_dropout_ = _dropout_form("feature_dropout_", True)


def selu(*args, **kwargs) -> Tensor:
    v = _args("selu", args, kwargs, {})
    return elementwise.selu(v["input"])


def selu_(*args, **kwargs) -> Tensor:
    v = _args("selu_", args, kwargs, {})
    return elementwise.selu(v["input"], True)


def celu(*args, **kwargs) -> Tensor:
    v = _args("celu", args, kwargs, {"alpha": 1.0})
    return elementwise.celu(v["input"], v["alpha"])


def celu_(*args, **kwargs) -> Tensor:
    v = _args("celu_", args, kwargs, {"alpha": 1.0})
    return elementwise.celu(v["input"], v["alpha"], True)


def hardshrink(*args, **kwargs) -> Tensor:
    """torch.hardshrink, which is F.hardshrink."""
    v = _args("hardshrink", args, kwargs, {"lambd": 0.5})
    return elementwise.hardshrink(v["input"], v["lambd"])


def hardshrink_method(self: Tensor, *args, **kwargs) -> Tensor:
    """Tensor.hardshrink(lambd=0.5)."""
    v = signatures.parsed("Tensor.hardshrink", args, kwargs, {"lambd": 0.5})
    return elementwise.hardshrink(self, v["lambd"])
