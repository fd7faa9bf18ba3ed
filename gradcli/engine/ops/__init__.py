"""The op functions, one import away: `ops.add`, `ops.getitem`, ... from the modules of each group.

Each module holds one group's table of rows and its forward functions. Tensor methods and the
script's `torch` namespace call ops through this package, which is why it is imported before
anything else in the engine (see gradcli/engine/__init__.py).

The groups every script uses are imported with the package; the others (matrix products, the nn
functions and losses, convolution, pooling, normalisation, recurrent layers: a third of the engine's
code) are imported on the first use of one of their names here (`ops.matmul`, `ops.linalg`), so a
script that uses none of them does not pay for loading them.
"""

import importlib

from gradcli.engine.ops import arith, elementwise, indexing, reduce, shape
from gradcli.engine.ops.arith import (add, addcdiv, addcmul, clone, compare, div, exp, fill, mul, neg, power, rdiv,
                                      reciprocal, rsub, scalar_power, sub, to_device, to_dtype, unbind0)
from gradcli.engine.ops.elementwise import (abs, acos, angle, acosh, asin, asinh, atan, atan2, atanh, bitwise_and,
                                            bitwise_not, bitwise_or,
                                            bitwise_xor, ceil, clamp, clamp_max, clamp_min, copy, cos, cosh,
                                            div_rounding, elu, erf, exp2, expm1, floor, floor_divide, floor_divide_,
                                            frac, gelu, hardtanh, isfinite, isinf, isnan, leaky_relu, lerp, log,
                                            log10, log1p, log2, logical_and, logical_not, logical_or, logical_xor,
                                            logsigmoid, lshift, masked_fill, maximum, minimum, relu, remainder, round,
                                            rshift, rsqrt, sgn, sigmoid, sign, silu, sin, sinh, softplus, sqrt,
                                            square, tan, tanh, trunc, where, erfc, sinc, logaddexp, logaddexp2,
                                            hypot, copysign, signbit, nan_to_num, deg2rad, rad2deg, heaviside, gcd,
                                            lcm)
from gradcli.engine.ops.indexing import getitem, setitem
from gradcli.engine.ops.reduce import (ReturnTypes, amax, amin, argmax, argmin, cumprod, cumsum, logsumexp, mean, norm,
                                      prod, reduce_all, reduce_any, reduce_max, reduce_min, reduce_sum, std, var,
                                      vector_norm)
from gradcli.engine.ops import padding
from gradcli.engine.ops.shape import (broadcast_to, cat, check_inplace_view, chunk, concatenate, contiguous, expand, expand_as,
                                      flatten, flip, fliplr, flipud, gather, hstack, index_select, matrix_T, movedim,
                                      narrow, numpy_T, permute, repeat, reshape, reshape_as, roll, split,
                                      split_with_sizes, squeeze, stack, t, transpose, tril, triu, unbind, unflatten,
                                      unsqueeze, view, view_as, vstack)

from gradcli.engine import views
from gradcli.engine.views import _VIEWS as VIEWS_TRACKED, rebase as rebase_view, regenerate as regenerate_views

# The groups imported on first use, and the names this package gives their functions.
_LATER = {
    "linalg": ("bmm", "det", "diag", "diag_embed", "diagonal", "dot", "einsum", "inverse", "matmul", "mm", "mv", "outer",
               "trace", "vdot", "tensordot", "kron", "cdist", "cholesky_legacy", "cholesky_inverse", "matrix_power",
               "slogdet", "logdet", "matrix_exp", "svd_legacy", "qr_legacy", "pinv"),
    "blas": ("addbmm", "addmm", "addmv", "addr", "baddbmm"),
    "nn": ("binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "dropout", "bilinear",
           "embedding", "huber_loss", "kl_div", "one_hot", "smooth_l1_loss", "functional_log_softmax",
           "functional_softmax", "l1_loss", "linear", "log_softmax", "mse_loss", "nll_loss", "normalize", "softmax",
           "torch_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_dropout", "prelu"),
    "conv": ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"),
    "normalization": ("batch_norm", "group_norm", "instance_norm", "layer_norm"),
    "sorting": ("argsort", "argsort_method", "msort", "sort", "sort_method", "topk", "topk_method"),
    "scatter": ("select_scatter_method", "slice_scatter_method", "diagonal_scatter_method", "index_add_inplace", "index_add_method", "scatter_add_inplace", "scatter_add_method",
                "scatter_inplace", "scatter_method"),
    "indexed": ("index_fill_method", "index_fill_inplace", "index_copy_method", "index_copy_inplace",
                "index_put_method", "index_put_inplace", "index_reduce_method", "index_reduce_inplace",
                "scatter_reduce_method", "scatter_reduce_inplace", "masked_scatter_method", "masked_scatter_inplace",
                "take_method", "put_method", "put_inplace", "fill_diagonal_inplace"),
    "arrange": ("diff_method", "repeat_interleave_method", "rot90", "take_along_dim_method", "tensor_split_method",
                "hsplit_method", "vsplit_method", "dsplit_method", "masked_select_method"),
    "order": ("median", "median_method", "nanmedian", "nanmedian_method", "kthvalue", "kthvalue_method", "mode",
              "mode_method", "aminmax", "aminmax_method", "quantile", "quantile_method", "nanquantile",
              "nanquantile_method", "cummax", "cummax_method", "cummin", "cummin_method", "logcumsumexp",
              "logcumsumexp_method"),
    "statistics": ("histc", "histc_method", "cov", "cov_method", "corrcoef", "corrcoef_method", "trapezoid", "trapz",
                   "cumulative_trapezoid", "isin"),
    "search": ("argwhere", "bincount_method", "count_nonzero", "count_nonzero_method", "nonzero", "nonzero_method",
               "unique", "unique_consecutive"),
    "special": ("lgamma", "digamma", "polygamma", "erfinv", "mvlgamma", "i0", "special_i0e", "special_i1",
                "special_i1e"),
    "bessel": (), "polynomials": (), "normal": (), "igamma": ("igamma_method", "igammac_method"),
    "linalg_composed": (), "lstsq": (), "householder": ("geqrf", "householder_product", "ormqr"),
    "lu": ("lu_legacy", "lu_solve_legacy", "cholesky_solve", "lu_unpack", "triangular_solve"),
    "fold": (), "attention": (), "pool": (), "fractional_pool": (), "rnn": (), "packed": (), "embedding_bag": (), "composed": (), "upsample": (), "margin": (), "randomized": (), "aten_nn": (), "pdist": (), "affine_grid": (), "weight_norm": (), "grid_sample": (), "ctc": (),
    "complexops": (), "fft": (),
}
_HOME = {name: group for group, names in _LATER.items() for name in names}
_GROUP_ORDER = ("arith", "elementwise", "reduce", "shape", "linalg", "lu", "linalg_composed", "lstsq", "householder", "blas", "indexing", "nn", "views", "rnn", "packed",
                "embedding_bag", "normalization", "conv", "padding", "pool", "fractional_pool", "sorting", "order", "statistics", "fold", "upsample", "search", "scatter",
                "indexed", "arrange", "special", "normal", "igamma", "attention", "margin", "randomized", "pdist", "affine_grid", "weight_norm", "grid_sample", "ctc", "complexops", "fft")


def __getattr__(name: str):
    """A name of a group imported on first use: import the group, and keep the name here, so the next
    lookup is an ordinary one. `GROUPS` (every module that declares op rows; tests walk their tables)
    imports them all."""
    if name == "GROUPS":
        value = tuple(globals()[g] if g == "views" else importlib.import_module(f"{__name__}.{g}")
                      for g in _GROUP_ORDER)
    elif name in _LATER:
        value = importlib.import_module(f"{__name__}.{name}")      # (the import sets it here too)
    elif name in _HOME:
        value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
