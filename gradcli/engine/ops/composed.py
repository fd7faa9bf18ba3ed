"""torch.nn.functional's functions that PyTorch itself composes from other ops (in Python, or in C++ as
CompositeImplicitAutograd kernels): softmin, tanhshrink, cosine_similarity, rms_norm and the losses. They are built
here from the same ops in the same order, so their grad_fn chains are PyTorch's chains, node for node.

Where PyTorch's C++ writes `scalar - tensor`, it fills a tensor with the scalar and subtracts in place: the
node is SubBackward0 (not the RsubBackward1 Python's `1 - t` records), hence `_from_scalar` below.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import autograd, dtypes, ops
from gradcli.engine.ops import arith, reduce
from gradcli.engine.ops.nn import _apply_reduction, _expect_attr, _size_list, implicit_dim, legacy_reduction
from gradcli.engine.recording import (autocast_policy, _CXX_NAMES, TYPE_WORDS, number_arg, number_operand, result_dtype, tensor_arg,
                                     type_word, wrap_dim)
from gradcli.engine import signatures
from gradcli.engine.signatures import type_name
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_EPSILON = 1e-12        # cosine_embedding_loss's guard on the squared magnitudes (ATen's EPSILON)


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor(np.zeros_like(t._a))


def _from_scalar(value, t: Tensor) -> Tensor:
    """`value - t` as ATen's C++ computes it: a tensor filled with value, minus t (SubBackward0)."""
    return ops.sub(Tensor(np.full(t._a.shape, value, dtype=t._a.dtype)), t)


def softmin(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    """F.softmin: softmax of the negated input (SoftmaxBackward0 over NegBackward0)."""
    _expect_attr(input, "softmax")
    if dim is None:
        dim = implicit_dim(input, "softmin", _stacklevel)
    return ops.softmax(ops.neg(input), dim, dtype)


def tanhshrink(input) -> Tensor:
    """F.tanhshrink: input - tanh(input)."""
    return ops.sub(input, ops.tanh(input))


def _plus_number(t: Tensor, value: float) -> Tensor:
    """C++'s `tensor + double`: AddBackward1 on a float tensor; an integer one (no grad) gives the default float
    dtype."""
    if t._a.dtype.kind in "fV":
        return arith.with_numbers(arith.ADD_SCALAR, t._a + number_operand(t._a, value), (t,), (), ())
    return ops.add(t, value)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> Tensor:
    """F.pairwise_distance as PyTorch composes it: norm(x1 - x2 + eps, p) over the last dim of the
    broadcast (NormBackward1 over AddBackward1 over SubBackward0)."""
    for name, x, position in (("x1", x1, 1), ("x2", x2, 2)):
        if x.__class__ is not Tensor:
            raise TypeError(f"pairwise_distance(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(x).__name__}")
    dims = max(x1._a.ndim, x2._a.ndim)
    shifted = _plus_number(ops.sub(x1, x2), eps)
    return reduce.vector_norm(shifted, p, max(dims - 1, 0) if dims else None, keepdim, node=reduce.NORM_LEGACY)


def cosine_similarity(x1, x2, dim=1, eps=1e-8) -> Tensor:
    """F.cosine_similarity, which is torch.cosine_similarity: each input divided by its norm (a clone of it,
    clamped to eps without grad), then the product summed over dim."""
    for name, x, position in (("x1", x1, 1), ("x2", x2, 2)):      # (torch.cosine_similarity: C++, its parser)
        if x.__class__ is not Tensor:
            raise TypeError(f"cosine_similarity(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type_name(x)}")
    if dim.__class__ is not int:        # (a C++ function in PyTorch: its parser's words)
        raise TypeError(f"cosine_similarity(): argument 'dim' must be int, not {type(dim).__name__}")
    common = result_dtype(x1, x2)
    if common.np.kind not in "fV":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{TYPE_WORDS[common.np.name]}")
    # integer and bool inputs are cast to the common dtype first (vector_norm takes floats only)
    x1, x2 = (ops.to_dtype(x, common) if x._a.dtype.kind in "iub" else x for x in (x1, x2))
    if x1.shape != x2.shape:            # expand_outplace
        shape = np.broadcast_shapes(x1._a.shape, x2._a.shape)
        x1, x2 = ops.expand(x1, shape), ops.expand(x2, shape)
    n1 = ops.clone(ops.vector_norm(x1, 2, dim=dim, keepdim=True))
    n2 = ops.clone(ops.vector_norm(x2, 2, dim=dim, keepdim=True))
    with autograd.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ops.reduce_sum(ops.mul(ops.div(x1, n1), ops.div(x2, n2)), dim)


@autocast_policy("fp32")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean") -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    if margin.__class__ is int:         # PyTorch's C++ reads it as a double: integer inputs give a float loss
        margin = float(margin)
    difference = ops.sub(input1, input2)    # computed before -target, as PyTorch's C++ does (its bool errors)
    out = _plus_number(ops.mul(ops.neg(target), difference), margin)
    return _apply_reduction(out.clamp_min_(0), reduction)


@autocast_policy("fp32")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean") -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    zeros = _zeros_like(input)
    margin_clamp = _from_scalar(margin, input).clamp_min_(0)
    output_margin = ops.where(ops.compare(np.not_equal, target, 1), margin_clamp, zeros)
    output_self = ops.where(ops.compare(np.not_equal, target, -1), input, zeros)
    return _apply_reduction(ops.add(output_margin, output_self), reduction)


@autocast_policy("fp32")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean") -> Tensor:
    reduction = legacy_reduction(size_average, reduce, reduction)
    dims = target.dim()
    if dims > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != input2.dim() or input1.dim() != dims + 1:
        raise RuntimeError(f"{dims + 1}D target tensor expects {dims + 1}D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = ops.reduce_sum(ops.mul(input1, input2), dims)
    mag_square1 = ops.add(ops.reduce_sum(ops.mul(input1, input1), dims), _EPSILON)
    mag_square2 = ops.add(ops.reduce_sum(ops.mul(input2, input2), dims), _EPSILON)
    denom = ops.mul(mag_square1, mag_square2).sqrt_()
    cos = ops.div(prod_sum, denom)
    zeros = _zeros_like(cos)
    pos = _from_scalar(1, cos)
    neg = ops.sub(cos, margin).clamp_min_(0)
    output_pos = ops.where(ops.compare(np.equal, target, 1), pos, zeros)
    output_neg = ops.where(ops.compare(np.equal, target, -1), neg, zeros)
    return _apply_reduction(ops.add(output_pos, output_neg), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    loss = ops.neg(ops.add(ops.mul(target, ops.logsigmoid(input)),
                           ops.mul(ops.rsub(target, 1), ops.logsigmoid(ops.neg(input)))))
    if weight is not None:
        loss = ops.mul(loss, weight)
    class_dim = input.dim() - 1
    loss = ops.div(ops.reduce_sum(loss, class_dim), input.size(class_dim))
    if reduction == "none":
        return loss
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.reduce_sum(loss)
    raise ValueError(reduction + " is not valid")


@autocast_policy("fp32")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    # torch.poisson_nll_loss's parser, after F.poisson_nll_loss's own check of the reduction
    for name, position, value in (("input", 1, input), ("target", 2, target)):
        if value.__class__ is not Tensor:
            raise TypeError(f"poisson_nll_loss(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type_name(value)}")
    for name, position, value in (("log_input", 3, log_input), ("full", 4, full)):
        if value.__class__ is not bool:
            raise TypeError(f"poisson_nll_loss(): argument '{name}' (position {position}) must be bool, not "
                            f"{type_name(value)}")
    eps = number_arg(eps, "poisson_nll_loss", "eps", 5, "float")
    if log_input:
        # PyTorch's C++ `exp(input) - target * input` makes the product first (its compiler evaluates the right
        # operand first): the order the backward pass meets them in, visible in a create_graph gradient's AddBackward0
        product = ops.mul(target, input)
        loss = ops.sub(ops.exp(input), product)
    else:
        loss = ops.sub(input, ops.mul(target, ops.log(ops.add(input, eps))))
    if full:
        stirling = ops.add(ops.sub(ops.mul(target, ops.log(target)), target),
                           ops.mul(ops.log(ops.mul(target, 2 * math.pi)), 0.5))
        loss = ops.add(loss, ops.masked_fill(stirling, ops.compare(np.less_equal, target, 1), 0))
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean") -> Tensor:
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ops.mul(Tensor(np.ones_like(input._a)), var)
    elif bool(ops.reduce_any(ops.compare(np.less, var, 0))):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = ops.unsqueeze(var, -1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = ops.clone(var)
    with autograd.no_grad():
        var.clamp_(min=eps)
    loss = ops.mul(ops.add(ops.log(var), ops.div(ops.power(ops.sub(input, target), 2), var)), 0.5)
    if full:
        loss = loss.add_(0.5 * math.log(2 * math.pi))
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.reduce_sum(loss)
    return loss


# ------------------------------------------------------------------------------------------- rms_norm

_FLOAT_EPS = float(np.finfo(np.float32).eps)        # rms_norm's eps=None: the opmath type's machine epsilon
_DOUBLE_EPS = float(np.finfo(np.float64).eps)


def rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor:
    """torch.rms_norm (F.rms_norm calls it) as PyTorch's CPU runs it: its fused kernel is CUDA's and MPS's, so
    the composite, `x * rsqrt(pow(x, 2).mean(dims, keepdim=True).add_(eps))`, then `* weight`; float16 computes
    in float (ToCopyBackward0 on either side), and a result that mul left in another layout is made contiguous."""
    tensor_arg(input, "rms_norm", "input", 1)
    if not isinstance(normalized_shape, (tuple, list)):     # (a torch.Size is a tuple)
        raise TypeError(f"rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type_name(normalized_shape)}")
    shape = ops.shape.int_list((normalized_shape,), "rms_norm", "normalized_shape", 2) if normalized_shape else ()
    if weight is not None:
        tensor_arg(weight, "rms_norm", "weight", 3)
    if eps is not None:
        eps = float(number_arg(eps, "rms_norm", "eps", 4, "float"))
    k, ndim = len(shape), input._a.ndim
    if k < 1:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if weight is not None and tuple(weight._a.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{_size_list(weight._a.shape)} and normalized_shape = {_size_list(shape)}")
    if ndim < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {ndim}")
    if tuple(input._a.shape[ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={_size_list(shape)}, expected input with shape "
                           f"[*{', '.join(str(d) for d in shape)}], but got input of size{_size_list(input._a.shape)}")
    if weight is not None and weight._a.dtype != input._a.dtype:
        STATE.warn_once("rms_norm dtypes", "UserWarning", f"Mismatch dtype between input and weight: input dtype = "
                        f"{_CXX_NAMES[input._a.dtype.name]}, weight dtype = {_CXX_NAMES[weight._a.dtype.name]}, "
                        "Cannot dispatch to fused implementation.")
    if input._a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{type_word(input._a)}'")
    wide = input._a.dtype == np.float64
    x = ops.to_dtype(input, dtypes.float64 if wide else dtypes.float32)
    if eps is None:
        eps = _DOUBLE_EPS if wide else _FLOAT_EPS
    dims = [ndim - 1 - i for i in range(k)]
    square_mean = ops.mean(ops.power(x, 2), dims, True)
    # add_(eps) in C++ is the Scalar overload (AddBackward1); on a fresh intermediate, out of place is the same
    shifted = arith.with_numbers(arith.ADD_SCALAR, square_mean._a + number_operand(square_mean._a, eps),
                                 (square_mean,), (), ())
    out = ops.mul(x, ops.rsqrt(shifted))
    if weight is not None:
        out = ops.mul(out, weight)
    return ops.to_dtype(ops.contiguous(out), dtypes.of_array(input._a))


def functional_rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor:
    """F.rms_norm: PyTorch's Python function around torch.rms_norm (Python's words for a call that does not bind)."""
    return rms_norm(input, normalized_shape, weight, eps)


# ----------------------------------------------------------------------------------------- triplet losses

_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}      # at::Reduction, as F passes it on


def _same_dims(anchor, positive, negative) -> None:
    dims = [t.dim() for t in (anchor, positive, negative)]
    if not dims[0] == dims[1] == dims[2]:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")


def torch_triplet_margin_loss(*args, **kwargs) -> Tensor:
    """torch.triplet_margin_loss (ATen's composite, which F.triplet_margin_loss calls): max(0, margin +
    d(anchor, positive) - d(anchor, negative)) with pairwise_distance as d, the negative's distance the smaller
    of its distances to the anchor and the positive with `swap`; `reduction` as at::Reduction's int (one that
    is neither mean nor sum leaves the loss unreduced; so does the default, as PyTorch's parser reads it)."""
    return _triplet_margin_loss(**signatures.parsed("torch.triplet_margin_loss", args, kwargs, _TRIPLET_DEFAULTS))


_TRIPLET_DEFAULTS = {"margin": 1.0, "p": 2.0, "eps": 1e-06, "swap": False, "reduction": 0}


def _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction) -> Tensor:
    margin, p, eps = (float(v._a.item() if v.__class__ is Tensor else v) for v in (margin, p, eps))  # (checked)
    _same_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = ops.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    # margin + dist_pos in C++: the Scalar overload (AddBackward1)
    shifted = arith.with_numbers(arith.ADD_SCALAR, dist_pos._a + number_operand(dist_pos._a, margin), (dist_pos,),
                                 (), ())
    loss = ops.clamp_min(ops.sub(shifted, dist_neg), 0)
    return _apply_reduction(loss, {1: "mean", 2: "sum"}.get(reduction, "none"))


@autocast_policy("fp32")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean") -> Tensor:
    """F.triplet_margin_loss: its reduction and margin checks, then torch.triplet_margin_loss."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return torch_triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, _REDUCTION_ENUM[reduction])


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean") -> Tensor:
    """F.triplet_margin_with_distance_loss, PyTorch's Python: any distance function (torch.pairwise_distance
    by default), `margin + dist_pos - dist_neg` with Python's operators, torch.minimum, torch.clamp_min."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    for value in (anchor, positive, negative):
        _expect_attr(value, "ndim")
    _same_dims(anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = ops.minimum(dist_neg, distance_function(positive, negative), 2)
    loss = ops.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return ops.reduce_sum(loss)
    if reduction == "mean":
        return ops.mean(loss)
    return loss


# --------------------------------------------------------------------------------- local response norm

def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0) -> Tensor:
    """F.local_response_norm, PyTorch's Python: the squares averaged over `size` neighbouring channels (a
    zero-padded avg_pool2d, or avg_pool3d for inputs of more than 3 dims), then input / (k + alpha * avg) ** beta."""
    _expect_attr(input, "dim")
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = ops.shape.functional_pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = ops.pool.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = ops.shape.functional_pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = ops.pool.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# ------------------------------------------------------------------------------------------ gumbel_softmax

def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1) -> Tensor:
    """F.gumbel_softmax, PyTorch's Python: Gumbel noise -log(Exp(1)) from the default generator (exponential_
    over empty_like(logits)), softmax((logits + noise) / tau); `hard`: the one-hot of its argmax, with the
    soft sample's gradient (y_hard - y_soft.detach() + y_soft)."""
    if eps != 1e-10 and STATE.warn is not None:
        STATE.warn("UserWarning", "`eps` parameter is deprecated and has no effect.")
    tensor_arg(logits, "empty_like", "input", 1)
    from gradcli.engine import factories
    like = {"dtype": dtypes.of_array(logits._a)}          # legacy_contiguous_format: row-major, whatever the layout
    gumbels = -factories.empty(logits.shape, **like).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = factories.zeros(logits.shape, **like).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ------------------------------------------------------------------------------------------ gradient

_GRADIENT_SIGNATURES = (
    " * (Tensor input, *, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing = None, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order = 1)\n")


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and v.__class__ is not bool or v.__class__ is bool


def gradient(input, *, spacing=None, dim=None, edge_order=1) -> tuple:
    """torch.gradient: the derivative estimated by differences along each dim, as PyTorch composes it from
    slices, differences and divisions (so its values and graph are those ops'): central differences inside, one-
    or two-sided ones of order `edge_order` at the ends; `spacing` a number (the same step everywhere), one number
    per dim, or one 1-d tensor of coordinates per dim (then PyTorch's second-order formula for uneven steps)."""
    if input.__class__ is not Tensor:
        raise TypeError(f"gradient(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
    dims_given = dim is not None
    if isinstance(dim, int) and dim.__class__ is not bool:
        dims = [dim]
    elif isinstance(dim, (list, tuple)) and all(isinstance(d, int) and d.__class__ is not bool for d in dim):
        dims = list(dim)
    elif dim is None:
        dims = list(range(input.ndim))
    else:
        raise TypeError(_gradient_error(input, spacing, dim, edge_order))
    if not isinstance(edge_order, int) or edge_order.__class__ is bool:
        raise TypeError(_gradient_error(input, spacing, dim, edge_order))
    coordinates = None
    if spacing is None:
        steps, size = [1.0] * len(dims), None
    elif _is_number(spacing):
        steps = [spacing] * len(dims)
        size = len(steps)
    elif isinstance(spacing, (list, tuple)) and spacing and all(v.__class__ is Tensor for v in spacing):
        coordinates, size = list(spacing), len(spacing)
    elif isinstance(spacing, (list, tuple)) and all(_is_number(v) for v in spacing):
        steps, size = list(spacing), len(spacing)
    else:
        raise TypeError(_gradient_error(input, spacing, dim, edge_order))
    x = input._a
    if x.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if size is not None and not dims_given and size != input.ndim:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.ndim}', since dim argument was not given, but got a list of "
                           f"length {size}")
    if size is not None and dims_given and size != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {size} and a "
                           f"dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = [wrap_dim(d, input.ndim) for d in dims]
    repeated = next((d for i, d in enumerate(wrapped) if d in wrapped[:i]), None)
    if repeated is not None:
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    if any(x.shape[d] < edge_order + 1 for d in wrapped):
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    if coordinates is not None:
        return tuple(_gradient_coordinates(input, c, d, edge_order) for c, d in zip(coordinates, wrapped))
    return tuple(_gradient_steps(input, h, d, edge_order) for h, d in zip(steps, wrapped))


def _gradient_error(input, spacing, dim, edge_order) -> str:
    parts = ["Tensor"] + [f"{name}={type_name(v)}" for name, v in (("spacing", spacing), ("dim", dim),
                                                                    ("edge_order", edge_order))
                          if v is not None and not (name == "edge_order" and v == 1)]
    return ("gradient() received an invalid combination of arguments - got (" + ", ".join(parts) + "), but expected "
            "one of:\n" + _GRADIENT_SIGNATURES)


def _cut(t: Tensor, d: int, start, stop=None) -> Tensor:
    """t[..., start:stop, ...] along dim d (at::slice: SliceBackward0)."""
    return ops.indexing.getitem(t, (slice(None),) * d + (slice(start, stop),))


def _times(t: Tensor, value) -> Tensor:
    """tensor * number as C++ code records it (MulBackward1); an integer tensor promoted as the op promotes it."""
    return arith.mul_scalar(t, value) if t._a.dtype.kind in "fV" else arith.mul(t, value)


def _over(t: Tensor, value) -> Tensor:
    """tensor / number as C++ code records it (DivBackward1); an integer tensor's true division a float."""
    return arith.div_scalar(t, value) if t._a.dtype.kind in "fV" else arith.div(t, value)


def _gradient_steps(t: Tensor, h, d: int, edge_order: int) -> Tensor:
    """gradient_helper_float: one number `h` as the step along d."""
    center = _over(arith.sub(_cut(t, d, 2), _cut(t, d, 0, -2)), h)
    if edge_order == 1:
        first = _over(arith.sub(_cut(t, d, 1, 2), _cut(t, d, 0, 1)), h)
        last = _over(arith.sub(_cut(t, d, -1), _cut(t, d, -2, -1)), h)
    else:
        first = _over(arith.sub(arith.add(_times(_cut(t, d, 0, 1), -1.5), _times(_cut(t, d, 1, 2), 2)),
                                _times(_cut(t, d, 2, 3), 0.5)), h)
        last = _over(arith.add(arith.sub(_times(_cut(t, d, -3, -2), 0.5), _times(_cut(t, d, -2, -1), 2)),
                               _times(_cut(t, d, -1), 1.5)), h)
    return ops.shape.cat([first, _over(center, 2), last], d)


def _gradient_coordinates(t: Tensor, c: Tensor, d: int, edge_order: int) -> Tensor:
    """gradient_helper: a 1-d tensor of coordinates along d (uneven steps: PyTorch's second-order weights)."""
    if c.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {c.ndim} dimensions!")
    shape = [1] * t.ndim
    shape[d] = -1
    dx = ops.arrange.diff(c, 1, 0)
    dx1, dx2 = _cut(dx, 0, 0, -1), _cut(dx, 0, 1)
    a = ops.shape.reshape(arith.div(-dx2, arith.mul(dx1, arith.add(dx1, dx2))), shape)
    b = ops.shape.reshape(arith.div(arith.sub(dx2, dx1), arith.mul(dx1, dx2)), shape)
    cc = ops.shape.reshape(arith.div(dx1, arith.mul(dx2, arith.add(dx1, dx2))), shape)
    center = arith.add(arith.add(arith.mul(a, _cut(t, d, 0, -2)), arith.mul(b, _cut(t, d, 1, -1))),
                       arith.mul(cc, _cut(t, d, 2)))
    d0, d1 = ops.indexing.getitem(dx, 0), ops.indexing.getitem(dx, 1)
    dl, dm = ops.indexing.getitem(dx, -1), ops.indexing.getitem(dx, -2)
    if edge_order == 1:
        first = arith.div(arith.sub(_cut(t, d, 1, 2), _cut(t, d, 0, 1)), d0)
        last = arith.div(arith.sub(_cut(t, d, -1), _cut(t, d, -2, -1)), dl)
    else:
        a = arith.div(-arith.add(_times(d0, 2.0), d1), arith.mul(d0, arith.add(d0, d1)))
        b = arith.div(arith.add(d0, d1), arith.mul(d0, d1))
        cc = arith.div(-d0, arith.mul(d1, arith.add(d0, d1)))
        first = arith.add(arith.add(arith.mul(a, _cut(t, d, 0, 1)), arith.mul(b, _cut(t, d, 1, 2))),
                          arith.mul(cc, _cut(t, d, 2, 3)))
        a = arith.div(dl, arith.mul(dm, arith.add(dl, dm)))
        b = arith.div(-arith.add(dl, dm), arith.mul(dl, dm))
        cc = arith.div(arith.add(_times(dl, 2), dm), arith.mul(dl, arith.add(dl, dm)))
        last = arith.add(arith.add(arith.mul(a, _cut(t, d, -3, -2)), arith.mul(b, _cut(t, d, -2, -1))),
                         arith.mul(cc, _cut(t, d, -1)))
    return ops.shape.cat([first, center, last], d)


_DEPRECATED_NORM = ("at::{name} is deprecated and it is just left for JIT compatibility. It will be removed in a "
                    "future PyTorch release. Please use `{instead}` instead (Triggered internally at "
                    "/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:{line}.)")


def nuclear_norm(*args, **kwargs) -> Tensor:
    """torch.nuclear_norm(input, dim=(-2, -1), keepdim=False): deprecated (PyTorch's warning, once), then
    linalg.matrix_norm(input, 'nuc', dim, keepdim)."""
    from gradcli.engine.ops import linalg
    form, v = signatures.bound("torch.nuclear_norm", args, kwargs)
    STATE.warn_once("nuclear_norm", "UserWarning", _DEPRECATED_NORM.format(
        name="nuclear_norm", instead="linalg.matrix_norm(A, 'nuc', dim, keepdim)", line=3229))
    dim = (-2, -1) if form == 1 else tuple(v["dim"]) if v["dim"].__class__ is not int else (v["dim"],) * 2
    return linalg.matrix_norm(v["input"], "nuc", dim, bool(v["keepdim"]))


def frobenius_norm(*args, **kwargs) -> Tensor:
    """torch.frobenius_norm(input, dim, keepdim=False): deprecated (PyTorch's warning, once), then at::norm(input,
    2, dim, keepdim) (NormBackward1) over at most two dims."""
    v = signatures.parsed("torch.frobenius_norm", args, kwargs, {"keepdim": False})
    STATE.warn_once("frobenius_norm", "UserWarning", _DEPRECATED_NORM.format(
        name="frobenius_norm", instead="linalg.vector_norm(A, 2., dim, keepdim)", line=3175))
    dim = (v["dim"],) if v["dim"].__class__ is int else tuple(v["dim"])
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    a = v["input"]
    if a._a.dtype.kind not in "fVc":
        from gradcli.engine.recording import type_word
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {type_word(a._a)} "
                           "instead.")
    return reduce.vector_norm(a, 2, dim or None, v["keepdim"], node=reduce.NORM_LEGACY)

