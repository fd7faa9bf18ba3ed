"""The op functions, one import away: `ops.add`, `ops.getitem`, ... from the modules of each group.

Each module holds one group's table of rows and its forward functions. Tensor methods and the
script's `torch` namespace call ops through this package, which is why it is imported before
anything else in the engine (see gradcli/engine/__init__.py).
"""

from gradcli.engine.ops import arith, elementwise, indexing, linalg, reduce, shape
from gradcli.engine.ops.arith import (add, addcdiv, addcmul, clone, compare, div, exp, fill, mul, neg, power, rdiv,
                                      reciprocal, rsub, scalar_power, sub, to_dtype, unbind0)
from gradcli.engine.ops.elementwise import (abs, acos, asin, atan, atan2, bitwise_and, bitwise_not, bitwise_or,
                                            bitwise_xor, ceil, clamp, clamp_max, clamp_min, copy, cos, cosh,
                                            div_rounding, elu, erf, exp2, expm1, floor, floor_divide, floor_divide_,
                                            frac, gelu, hardtanh, isfinite, isinf, isnan, leaky_relu, lerp, log,
                                            log10, log1p, log2, logical_and, logical_not, logical_or, logical_xor,
                                            logsigmoid, lshift, masked_fill, maximum, minimum, relu, remainder, round,
                                            rshift, rsqrt, sgn, sigmoid, sign, silu, sin, sinh, softplus, sqrt,
                                            square, tan, tanh, trunc, where)
from gradcli.engine.ops.indexing import getitem, setitem
from gradcli.engine.ops.linalg import (bmm, det, diag, diag_embed, diagonal, dot, einsum, inverse, matmul, mm, mv,
                                       outer, trace, vdot)
from gradcli.engine.ops.reduce import (ReturnTypes, amax, amin, argmax, argmin, cumprod, cumsum, logsumexp, mean, norm,
                                      prod, reduce_all, reduce_any, reduce_max, reduce_min, reduce_sum, std, var,
                                      vector_norm)
from gradcli.engine.ops import composed, conv, nn, normalization, padding, pool, rnn
from gradcli.engine.ops.conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from gradcli.engine.ops.nn import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, dropout,
                                   bilinear, embedding, huber_loss, kl_div, one_hot, smooth_l1_loss,
                                   functional_log_softmax, functional_softmax, l1_loss, linear, log_softmax, mse_loss,
                                   nll_loss, normalize, softmax, torch_dropout)
from gradcli.engine.ops.shape import (broadcast_to, cat, check_inplace_view, chunk, concatenate, contiguous, expand, expand_as,
                                      flatten, flip, fliplr, flipud, gather, hstack, index_select, matrix_T, movedim,
                                      narrow, numpy_T, permute, repeat, reshape, reshape_as, roll, split,
                                      split_with_sizes, squeeze, stack, t, transpose, tril, triu, unbind, unflatten,
                                      unsqueeze, view, view_as, vstack)
from gradcli.engine.ops.normalization import batch_norm, group_norm, instance_norm, layer_norm

from gradcli.engine import views
from gradcli.engine.views import rebase as rebase_view

# Every module that declares op rows; tests walk their tables.
GROUPS = (arith, elementwise, reduce, shape, linalg, indexing, nn, views, rnn, normalization, conv, padding,
          pool)
