"""PyTorch's argument checking for calls a script makes: its signatures and the words of its messages.

PyTorch binds a call to one of a function's signatures (overloads) and, when none takes the
arguments, explains why in a fixed form. gradcli binds calls with Python instead, so a failed call
reports Python's words and gradcli's own function names. `argument_error` turns such a failure back
into PyTorch's message. It runs only after a call has failed, so correct calls pay nothing:

* for the functions in `SIGNATURES` (the ones tutorials use most), it binds the arguments to
  PyTorch's signatures as PyTorch's parser does and, when they do not fit, gives PyTorch's message,
  including the long "received an invalid combination of arguments" text with its quirks (the
  trailing ", " after keywords only; keywords that look "incorrect" because a signature's last word,
  not its name, is compared);
* for every other function, Python's binding messages (`got an unexpected keyword argument`,
  `takes 2 positional arguments but 3 were given`, `missing ...`) are given the name the script
  called, with a method's `self` no longer counted, as PyTorch counts.
"""

from __future__ import annotations

import re

from gradcli.engine import dtypes
# The module object only: tensor.py imports this module while it loads (Tensor.to binds with it).
from gradcli.engine import tensor

# ------------------------------------------------------------------------------------------ the table
# One entry per callable: its signatures, each as PyTorch prints it; "hidden:" marks an overload PyTorch
# accepts but never lists (a deprecated form), which still changes which message is given.
_OUT = "Tensor out = None"
_FACTORY_KW = ("*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
               "torch.device device = None, bool pin_memory = False, bool requires_grad = False")
_FACTORY_TAIL = _FACTORY_KW.removeprefix("*, ")
# the random factories: one overload with a generator (required: it is the overload a generator picks),
# one without
_RANDOM_FACTORY = [f"(tuple of ints size, *, torch.Generator generator, {_FACTORY_TAIL})",
                   f"(tuple of ints size, {_FACTORY_KW})"]
_TO_TAIL = "bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None"

_STD_VAR_FUNCTION = [
    "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None)",
    "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, Tensor out = None)",
    "(Tensor input, bool unbiased = True)"]
_STD_VAR_METHOD = ["(tuple of ints dim, bool unbiased = True, bool keepdim = False)",
                   "(tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
                   "(bool unbiased = True)"]
_ANY_ALL_FUNCTION = ["(Tensor input, *, Tensor out = None)",
                     "(Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)",
                     "(Tensor input, int dim, bool keepdim = False, *, Tensor out = None)"]
_ANY_ALL_METHOD = ["()", "(tuple of ints dim = None, bool keepdim = False)", "(int dim, bool keepdim = False)"]

_CONV = ["(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, "
         "tuple of ints dilation = 1, int groups = 1)",
         "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding = \"valid\", "
         "tuple of ints dilation = 1, int groups = 1)"]
_CONV_TRANSPOSE = ["(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, "
                   "tuple of ints output_padding = 0, int groups = 1, tuple of ints dilation = 1)"]



def _add_product(name: str, first: str, second: str, out_dtype: bool) -> dict:
    """The signatures of a product with an added input (torch.addmm, Tensor.addmm, Tensor.addmm_, ...):
    beta and alpha by keyword, and PyTorch's deprecated overloads that take them first by position."""
    tensors = f"Tensor {first}, Tensor {second}"
    function = [f"(Tensor input, {tensors}, *, Number beta = 1, Number alpha = 1, {_OUT})"]
    if out_dtype:
        function.append(f"(Tensor input, {tensors}, torch.dtype out_dtype, *, Number beta = 1, Number alpha = 1, "
                        f"{_OUT})")
    function += [f"hidden:(Number beta, Tensor input, {tensors}, *, {_OUT})",
                 f"hidden:(Number beta, Tensor input, Number alpha, {tensors}, *, {_OUT})"]
    method = [f"({tensors}, *, Number beta = 1, Number alpha = 1)", f"hidden:(Number beta, {tensors})",
              f"hidden:(Number beta, Number alpha, {tensors})"]
    return {f"torch.{name}": function, f"Tensor.{name}": method, f"Tensor.{name}_": method}


def _sorting(name: str, stable_out: str, plain_out: str) -> dict:
    """torch.sort / torch.argsort and their methods: the `stable` overload (keyword-only) and the plain one."""
    stable, plain = "*, bool stable, int dim = -1, bool descending = False", "int dim = -1, bool descending = False"
    return {f"torch.{name}": [f"(Tensor input, {stable}{stable_out})", f"(Tensor input, {plain}{plain_out})"],
            f"Tensor.{name}": [f"({stable})", f"({plain})"]}


def _windows() -> dict:
    """The window functions: a length, then periodic, then each one's parameters (hamming: alpha, beta;
    kaiser: beta), each form with the factory keywords."""
    extra = {"hamming_window": ("float alpha", "float alpha, float beta"), "kaiser_window": ("float beta",)}
    forms = {}
    for name in ("hann_window", "hamming_window", "bartlett_window", "blackman_window", "kaiser_window"):
        heads = ("int window_length", "int window_length, bool periodic") + tuple(
            "int window_length, bool periodic, " + e for e in extra.get(name, ()))
        tail = "*, " + _FACTORY_TAIL.removeprefix("Tensor out = None, ")
        forms[f"torch.{name}"] = [f"({head}, {tail})" for head in heads]
    return forms


_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
_COMPARISON_NAMES = ("greater", "greater_equal", "less", "less_equal", "not_equal")     # the methods' other names

SIGNATURES = {
    "torch.matmul": ["(Tensor input, Tensor other, *, Tensor out = None)"],
    # two tensors, no number: the parser names a number in `other` before a keyword it does not know
    **{f"torch.{name}": ["(Tensor input, Tensor other, *, Tensor out = None)"]
       for name in ("logical_and", "logical_or", "logical_xor", "maximum", "minimum", "fmax", "fmin")},
    "Tensor.matmul": ["(Tensor other)"],
    "torch.mm": ["(Tensor input, Tensor mat2, *, Tensor out = None)",
                 "(Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None)"],
    "Tensor.mm": ["(Tensor mat2)"],
    # the products with an added input (ops.blas); each method's in-place form takes what it takes
    **{key: texts for name, first, second, out_dtype in (("addmm", "mat1", "mat2", True), ("addmv", "mat", "vec", False),
                                                        ("addr", "vec1", "vec2", False),
                                                        ("baddbmm", "batch1", "batch2", True),
                                                        ("addbmm", "batch1", "batch2", False))
       for key, texts in _add_product(name, first, second, out_dtype).items()},
    "torch.triplet_margin_loss": ["(Tensor anchor, Tensor positive, Tensor negative, float margin = 1.0, float p = 2, "
                                  "float eps = 1e-06, bool swap = False, int reduction = 1)"],
    "torch.layer_norm": ["(Tensor input, tuple of ints normalized_shape, Tensor weight = None, Tensor bias = None, "
                         "float eps = 1e-05, bool cudnn_enable = True)"],
    "torch.group_norm": ["(Tensor input, int num_groups, Tensor weight = None, Tensor bias = None, float eps = 1e-05, "
                         "bool cudnn_enabled = True)"],
    "torch.batch_norm": ["(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
                         "bool training, float momentum, float eps, bool cudnn_enabled)"],
    "torch.instance_norm": ["(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
                            "bool use_input_stats, float momentum, float eps, bool cudnn_enabled)"],
    "torch.embedding": ["(Tensor weight, Tensor indices, int padding_idx = -1, bool scale_grad_by_freq = False, "
                        "bool sparse = False)"],
    "torch.bilinear": ["(Tensor input1, Tensor input2, Tensor weight, Tensor bias = None)"],
    "torch.kl_div": ["(Tensor input, Tensor target, int reduction = 1, *, bool log_target = False)"],
    "torch.cosine_embedding_loss": ["(Tensor input1, Tensor input2, Tensor target, float margin = 0.0, "
                                    "int reduction = 1)"],
    "torch.hinge_embedding_loss": ["(Tensor input, Tensor target, float margin = 1.0, int reduction = 1)"],
    "torch.margin_ranking_loss": ["(Tensor input1, Tensor input2, Tensor target, float margin = 0.0, "
                                  "int reduction = 1)"],
    "torch.poisson_nll_loss": ["(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction)"],
    **{f"torch.{name}": ["(Tensor input, float p, bool train)"]
       for name in ("alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
                    "feature_dropout", "feature_dropout_")},
    "torch.selu": ["(Tensor input)"], "torch.selu_": ["(Tensor input)"],
    "torch.celu": ["(Tensor input, Number alpha = 1.0)"], "torch.celu_": ["(Tensor input, Number alpha = 1.0)"],
    "torch.hardshrink": ["(Tensor input, Number lambd = 0.5, *, Tensor out = None)"], "Tensor.hardshrink": ["(Number lambd = 0.5)"],
    "torch.pdist": ["(Tensor input, float p = 2)"],
    "torch.ctc_loss": [f"(Tensor log_probs, Tensor targets, {kind} input_lengths, {kind} target_lengths, int blank = 0, "
                       "int reduction = at::Reduction::Mean, bool zero_infinity = False)"
                       for kind in ("tuple of ints", "Tensor")],
    **{f"torch.grid_sampler{k}": ["(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
                                  "bool align_corners)"] for k in ("", "_2d", "_3d")},
    "torch.rrelu": ["(Tensor input, Number lower = 0.125, Number upper = 0.3333333333333333, bool training = False, "
                    "torch.Generator generator = None)"],
    "torch.rrelu_": ["(Tensor input, Number lower = 0.125, Number upper = 0.3333333333333333, bool training = False, "
                     "torch.Generator generator = None)"],
    "torch.isclose": ["(Tensor input, Tensor other, float rtol = 1e-05, float atol = 1e-08, bool equal_nan = False)"],
    "Tensor.isclose": ["(Tensor other, float rtol = 1e-05, float atol = 1e-08, bool equal_nan = False)"],
    "torch.allclose": ["(Tensor input, Tensor other, float rtol = 1e-05, float atol = 1e-08, bool equal_nan = False)"],
    "Tensor.allclose": ["(Tensor other, float rtol = 1e-05, float atol = 1e-08, bool equal_nan = False)"],
    "torch.equal": ["(Tensor input, Tensor other)"],
    "Tensor.equal": ["(Tensor other)"],
    "torch.mul": ["(Tensor input, Tensor other, *, Tensor out = None)"],
    "Tensor.mul": ["(Tensor other)"],
    "torch.add": ["(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
                  "hidden:(Tensor input, Number alpha, Tensor other, *, Tensor out = None)"],
    "Tensor.add": ["(Tensor other, *, Number alpha = 1)", "hidden:(Number alpha, Tensor other)"],
    "torch.sub": ["(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
                  "hidden:(Tensor input, Number alpha, Tensor other, *, Tensor out = None)"],
    "Tensor.sub": ["(Tensor other, *, Number alpha = 1)", "hidden:(Number alpha, Tensor other)"],
    "torch.div": ["(Tensor input, Tensor other, *, Tensor out = None)",
                  "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
                  "(Tensor input, Number other, *, str rounding_mode)"],
    "Tensor.div": ["(Tensor other)", "(Tensor other, *, str rounding_mode)", "(Number other, *, str rounding_mode)"],
    # the in-place forms take what the out-of-place ones take
    "Tensor.add_": ["(Tensor other, *, Number alpha = 1)", "hidden:(Number alpha, Tensor other)"],
    "Tensor.sub_": ["(Tensor other, *, Number alpha = 1)", "hidden:(Number alpha, Tensor other)"],
    "Tensor.mul_": ["(Tensor other)"],
    "Tensor.div_": ["(Tensor other)", "(Tensor other, *, str rounding_mode)", "(Number other, *, str rounding_mode)"],
    "torch.sum": ["(Tensor input, *, torch.dtype dtype = None)",
                  "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
                  "Tensor out = None)"],
    "Tensor.sum": ["(*, torch.dtype dtype = None)",
                   "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)"],
    "torch.mean": ["(Tensor input, *, torch.dtype dtype = None, Tensor out = None)",
                   "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
                   "Tensor out = None)"],
    "Tensor.mean": ["(*, torch.dtype dtype = None)",
                    "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)"],
    "Tensor.clone": ["(*, torch.memory_format memory_format = None)"],
    **{f"Tensor.{name}": ["(*, torch.memory_format memory_format = preserve_format)"]
       for name in ("float", "double", "half", "bfloat16", "long", "int", "bool", "byte", "short", "char", "cpu")},
    "torch.clone": ["(Tensor input, *, torch.memory_format memory_format = None)"],
    "Tensor.contiguous": ["(*, torch.memory_format memory_format = contiguous_format)"],
    "Tensor.is_contiguous": ["(*, torch.memory_format memory_format = contiguous_format)"],
    "Tensor.to": [f"(torch.device device = None, torch.dtype dtype = None, {_TO_TAIL})",
                  f"(torch.dtype dtype, {_TO_TAIL})", f"(Tensor tensor, {_TO_TAIL})"],
    "torch.prod": ["(Tensor input, *, torch.dtype dtype = None)",
                   "(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)"],
    "Tensor.prod": ["(*, torch.dtype dtype = None)", "(int dim, bool keepdim = False, *, torch.dtype dtype = None)"],
    "torch.max": ["(Tensor input, *, Tensor out = None)", "(Tensor input, Tensor other, *, Tensor out = None)",
                  "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)"],
    "Tensor.max": ["()", "(Tensor other)", "(int dim, bool keepdim = False)"],
    "torch.min": ["(Tensor input, *, Tensor out = None)", "(Tensor input, Tensor other, *, Tensor out = None)",
                  "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)"],
    "Tensor.min": ["()", "(Tensor other)", "(int dim, bool keepdim = False)"],
    "torch.std": _STD_VAR_FUNCTION,
    "torch.var_mean": [s.replace(", *, Tensor out = None", "").replace(", Tensor out = None", "") for s in _STD_VAR_FUNCTION],
    "torch.std_mean": [s.replace(", *, Tensor out = None", "").replace(", Tensor out = None", "") for s in _STD_VAR_FUNCTION],
    "Tensor.std": _STD_VAR_METHOD,
    "torch.var": _STD_VAR_FUNCTION,
    "Tensor.var": _STD_VAR_METHOD,
    "torch.any": _ANY_ALL_FUNCTION,
    "Tensor.any": _ANY_ALL_METHOD,
    "torch.all": _ANY_ALL_FUNCTION,
    "Tensor.all": _ANY_ALL_METHOD,
    "torch.amax": ["(Tensor input, tuple of ints dim = (), bool keepdim = False, *, Tensor out = None)"],
    "Tensor.amax": ["(tuple of ints dim = (), bool keepdim = False)"],
    "torch.amin": ["(Tensor input, tuple of ints dim = (), bool keepdim = False, *, Tensor out = None)"],
    "Tensor.amin": ["(tuple of ints dim = (), bool keepdim = False)"],
    "torch.argmax": ["(Tensor input, int dim = None, bool keepdim = False, *, Tensor out = None)"],
    "Tensor.argmax": ["(int dim = None, bool keepdim = False)"],
    "torch.argmin": ["(Tensor input, int dim = None, bool keepdim = False, *, Tensor out = None)"],
    "Tensor.argmin": ["(int dim = None, bool keepdim = False)"],
    "torch.logsumexp": ["(Tensor input, tuple of ints dim, bool keepdim = False, *, Tensor out = None)"],
    "Tensor.logsumexp": ["(tuple of ints dim, bool keepdim = False)"],
    "torch.where": ["(Tensor condition)", "(Tensor condition, Tensor input, Tensor other, *, Tensor out = None)",
                    "(Tensor condition, Number self, Tensor other)", "(Tensor condition, Tensor input, Number other)",
                    "(Tensor condition, Number self, Number other)"],
    "Tensor.cumsum": ["(int dim, *, torch.dtype dtype = None)"],
    "Tensor.cumsum_": ["(int dim, *, torch.dtype dtype = None)"],
    "Tensor.cumprod": ["(int dim, *, torch.dtype dtype = None)"],
    "Tensor.cumprod_": ["(int dim, *, torch.dtype dtype = None)"],
    "torch.cumsum": ["(Tensor input, int dim, *, torch.dtype dtype = None, Tensor out = None)"],
    "torch.cumprod": ["(Tensor input, int dim, *, torch.dtype dtype = None, Tensor out = None)"],
    "Tensor.expand_as": ["(Tensor other)"],
    "Tensor.reshape_as": ["(Tensor other)"],
    "Tensor.view_as": ["(Tensor other)"],
    "Tensor.roll": ["(tuple of ints shifts, tuple of ints dims = ())"],
    "torch.roll": ["(Tensor input, tuple of ints shifts, tuple of ints dims = ())"],
    "torch.remainder": ["(Tensor input, Tensor other, *, Tensor out = None)", "(Number self, Tensor other)",
                        "(Tensor input, Number other, *, Tensor out = None)"],
    "torch.pow": ["(Tensor input, Tensor exponent, *, Tensor out = None)",
                  "(Number self, Tensor exponent, *, Tensor out = None)",
                  "(Tensor input, Number exponent, *, Tensor out = None)"],
    # functions and methods that take a dim (or another int) PyTorch's parser checks the type of
    "torch.transpose": ["(Tensor input, int dim0, int dim1)"],
    # F.avg_pool1d/2d/3d are C++ functions (their parser's words for a misfit)
    **{f"torch.nn.functional.avg_pool{n}d": ["(Tensor input, tuple of ints kernel_size, tuple of ints stride = None, "
                                             "tuple of ints padding = 0, bool ceil_mode = False, "
                                             "bool count_include_pad = True, int divisor_override = None)"]
       for n in (2, 3)},
    "torch.nn.functional.avg_pool1d": ["(Tensor input, tuple of ints kernel_size, tuple of ints stride = None, "
                                       "tuple of ints padding = 0, bool ceil_mode = False, bool count_include_pad = True)"],
    "torch.avg_pool1d": ["(Tensor input, tuple of ints kernel_size, tuple of ints stride = (), tuple of ints padding = 0, "
                         "bool ceil_mode = False, bool count_include_pad = True)"],
    **{f"torch.max_pool{n}d": ["(Tensor input, tuple of ints kernel_size, tuple of ints stride = (), "
                               "tuple of ints padding = 0, tuple of ints dilation = 1, bool ceil_mode = False)"]
       for n in (1, 2, 3)},
    # convolutions: F.convNd and torch.convNd take an int list or a padding string
    **{f"{module}.conv{n}d": _CONV for module in ("torch", "torch.nn.functional") for n in (1, 2, 3)},
    **{f"{module}.conv_transpose{n}d": _CONV_TRANSPOSE for module in ("torch", "torch.nn.functional")
       for n in (1, 2, 3)},
    "Tensor.transpose": ["(int dim0, int dim1)"],
    "torch.swapdims": ["(Tensor input, int dim0, int dim1)"],
    "Tensor.swapdims": ["(int dim0, int dim1)"],
    "torch.swapaxes": ["(Tensor input, int axis0, int axis1)"],
    "Tensor.swapaxes": ["(int axis0, int axis1)"],
    "torch.unsqueeze": ["(Tensor input, int dim)"],
    "Tensor.unsqueeze": ["(int dim)"],
    "torch.squeeze": ["(Tensor input)", "(Tensor input, int dim)", "(Tensor input, tuple of ints dim)"],
    "Tensor.squeeze": ["()", "(int dim)", "(tuple of ints dim)"],
    "torch.flatten": ["(Tensor input, int start_dim = 0, int end_dim = -1)"],
    "Tensor.flatten": ["(int start_dim = 0, int end_dim = -1)"],
    "torch.softmax": ["(Tensor input, int dim, torch.dtype dtype = None, *, Tensor out = None)"],
    "Tensor.softmax": ["(int dim, torch.dtype dtype = None)"],
    "torch.log_softmax": ["(Tensor input, int dim, torch.dtype dtype = None, *, Tensor out = None)"],
    "Tensor.log_softmax": ["(int dim, torch.dtype dtype = None)"],
    "torch.cat": ["(tuple of Tensors tensors, int dim = 0, *, Tensor out = None)"],
    "torch.concat": ["(tuple of Tensors tensors, int dim = 0, *, Tensor out = None)"],
    "torch.concatenate": ["(tuple of Tensors tensors, int dim = 0, *, Tensor out = None)"],
    "torch.stack": ["(tuple of Tensors tensors, int dim = 0, *, Tensor out = None)"],
    "torch.chunk": ["(Tensor input, int chunks, int dim = 0)"],
    "Tensor.chunk": ["(int chunks, int dim = 0)"],
    "torch.gather": ["(Tensor input, int dim, Tensor index, *, bool sparse_grad = False, Tensor out = None)"],
    "torch.round": ["(Tensor input, *, Tensor out = None)", "(Tensor input, *, int decimals, Tensor out = None)"],
    "torch.linalg.vector_norm": ["(Tensor input, Number ord = 2, tuple of ints dim = None, bool keepdim = False, *, "
                                 "torch.dtype dtype = None, Tensor out = None)"],
    "torch.linalg.norm": ["(Tensor input, Number ord = None, tuple of ints dim = None, bool keepdim = False, *, "
                          "torch.dtype dtype = None, Tensor out = None)",
                          "(Tensor input, str ord, tuple of ints dim = None, bool keepdim = False, *, "
                          "torch.dtype dtype = None, Tensor out = None)"],
    "torch.linalg.cholesky": ["(Tensor input, *, bool upper = False, Tensor out = None)"],
    "torch.cholesky": ["(Tensor input, bool upper = False, *, Tensor out = None)"],
    "Tensor.cholesky": ["(bool upper = False)"],
    "torch.cholesky_inverse": ["(Tensor input, bool upper = False, *, Tensor out = None)"],
    "Tensor.cholesky_inverse": ["(bool upper = False)"],
    "torch.linalg.matrix_power": ["(Tensor input, int n, *, Tensor out = None)"],
    "torch.linalg.lstsq": ["(Tensor input, Tensor b, float rcond = None, *, str driver = None, "
                           "tuple of Tensors out = None)"],
    "torch.linalg.vecdot": ["(Tensor x, Tensor y, *, int dim = -1, Tensor out = None)"],
    "torch.linalg.vander": ["(Tensor x, *, int N = None)"],
    "torch.linalg.cond": ["(Tensor input, Number p = None, *, Tensor out = None)",
                          "(Tensor input, str p, *, Tensor out = None)"],
    "torch.linalg.tensorinv": ["(Tensor input, int ind = 2, *, Tensor out = None)"],
    "torch.linalg.tensorsolve": ["(Tensor input, Tensor other, tuple of ints dims = None, *, Tensor out = None)"],
    "torch.linalg.lu_factor": ["(Tensor A, *, bool pivot = True, tuple of Tensors out = None)"],
    "torch.linalg.lu_factor_ex": ["(Tensor A, *, bool pivot = True, bool check_errors = False, "
                                  "tuple of Tensors out = None)"],
    "torch.linalg.lu": ["(Tensor A, *, bool pivot = True, tuple of Tensors out = None)"],
    "torch.linalg.lu_solve": ["(Tensor LU, Tensor pivots, Tensor B, *, bool left = True, bool adjoint = False, "
                              "Tensor out = None)"],
    "torch.linalg.solve_ex": ["(Tensor A, Tensor B, *, bool left = True, bool check_errors = False, "
                              "tuple of Tensors out = None)"],
    "torch.linalg.inv_ex": ["(Tensor A, *, bool check_errors = False, tuple of Tensors out = None)"],
    "torch.linalg.cholesky_ex": ["(Tensor A, *, bool upper = False, bool check_errors = False, "
                                 "tuple of Tensors out = None)"],
    "torch.linalg.ldl_factor": ["(Tensor input, *, bool hermitian = False, tuple of Tensors out = None)"],
    "torch.linalg.ldl_factor_ex": ["(Tensor input, *, bool hermitian = False, bool check_errors = False, "
                                   "tuple of Tensors out = None)"],
    "torch.linalg.ldl_solve": ["(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian = False, Tensor out = None)"],
    "torch.cholesky_solve": ["(Tensor input, Tensor input2, bool upper = False, *, Tensor out = None)"],
    "Tensor.cholesky_solve": ["(Tensor input2, bool upper = False)"],
    "torch.lu_unpack": ["(Tensor LU_data, Tensor LU_pivots, bool unpack_data = True, bool unpack_pivots = True, *, "
                        "tuple of Tensors out = None)"],
    "torch.triangular_solve": ["(Tensor input, Tensor A, bool upper = True, bool transpose = False, "
                               "bool unitriangular = False, *, tuple of Tensors out = None)"],
    "Tensor.triangular_solve": ["(Tensor A, bool upper = True, bool transpose = False, bool unitriangular = False)"],
    "torch.linalg.householder_product": ["(Tensor input, Tensor tau, *, Tensor out = None)"],
    "torch.orgqr": ["(Tensor input, Tensor input2, *, Tensor out = None)"],
    "Tensor.orgqr": ["(Tensor input2)"],
    "torch.ormqr": ["(Tensor input, Tensor input2, Tensor input3, bool left = True, bool transpose = False, *, "
                    "Tensor out = None)"],
    "Tensor.ormqr": ["(Tensor input2, Tensor input3, bool left = True, bool transpose = False)"],
    "torch.geqrf": ["(Tensor input, *, tuple of Tensors out = None)"],
    "torch.lu_solve": ["(Tensor input, Tensor LU_data, Tensor LU_pivots, *, Tensor out = None)"],
    "Tensor.lu_solve": ["(Tensor LU_data, Tensor LU_pivots)"],
    "torch.matrix_power": ["(Tensor input, int n, *, Tensor out = None)"],
    "Tensor.matrix_power": ["(int n)"],
    "torch.linalg.slogdet": ["(Tensor A, *, tuple of Tensors out = None)"],
    "torch.slogdet": ["(Tensor input, *, tuple of Tensors out = None)"],
    "Tensor.slogdet": ["()"],
    "torch.logdet": ["(Tensor input)"],
    "Tensor.logdet": ["()"],
    "torch.linalg.svd": ["(Tensor A, bool full_matrices = True, *, str driver = None, tuple of Tensors out = None)"],
    "torch.linalg.svdvals": ["(Tensor A, *, str driver = None, Tensor out = None)"],
    "torch.svd": ["(Tensor input, bool some = True, bool compute_uv = True, *, tuple of Tensors out = None)"],
    "Tensor.svd": ["(bool some = True, bool compute_uv = True)"],
    "torch.linalg.qr": ["(Tensor A, str mode = \"reduced\", *, tuple of Tensors out = None)"],
    "torch.qr": ["(Tensor input, bool some = True, *, tuple of Tensors out = None)"],
    "Tensor.qr": ["(bool some = True)"],
    "torch.linalg.pinv": ["(Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, "
                          "Tensor out = None)",
                          "(Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, "
                          "Tensor out = None)",
                          "(Tensor input, Tensor rcond, bool hermitian = False, *, Tensor out = None)",
                          "(Tensor input, float rcond, bool hermitian = False, *, Tensor out = None)"],
    "torch.linalg.eigh": ["(Tensor input, str UPLO = \"L\", *, tuple of Tensors out = None)"],
    "torch.linalg.eigvalsh": ["(Tensor input, str UPLO = \"L\", *, Tensor out = None)"],
    "torch.linalg.solve_triangular": ["(Tensor input, Tensor B, *, bool upper, bool left = True, "
                                      "bool unitriangular = False, Tensor out = None)"],
    "torch.linalg.matrix_norm": ["(Tensor input, Number ord, tuple of ints dim = {-2,-1}, bool keepdim = False, *, "
                                 "torch.dtype dtype = None, Tensor out = None)",
                                 "(Tensor input, str ord = \"fro\", tuple of ints dim = {-2,-1}, bool keepdim = False, "
                                 "*, torch.dtype dtype = None, Tensor out = None)"],
    "torch.eye": [f"(int n, {_FACTORY_KW})", f"(int n, int m, {_FACTORY_KW})"],
    "torch.range": ["(Number start, Number end, Number step = 1, *, Tensor out = None, torch.dtype dtype = None, "
                    "torch.layout layout = None, torch.device device = None, bool requires_grad = False)"],
    "torch.multinomial": ["(Tensor input, int num_samples, bool replacement = False, *, "
                          "torch.Generator generator = None, Tensor out = None)"],
    "Tensor.multinomial": ["(int num_samples, bool replacement = False, *, torch.Generator generator = None)"],
    "torch.index_select": ["(Tensor input, int dim, Tensor index, *, Tensor out = None)"],
    "Tensor.index_select": ["(int dim, Tensor index)"],
    "torch.unbind": ["(Tensor input, int dim = 0)"],
    "Tensor.unbind": ["(int dim = 0)"],
    # Tensor.split and torch.split are Python functions that pass an int size on to this, positionally
    **_sorting("sort", ", tuple of Tensors out = None", ", *, tuple of Tensors out = None"),
    **_sorting("argsort", ", Tensor out = None", ""),
    "torch.topk": ["(Tensor input, int k, int dim = -1, bool largest = True, bool sorted = True, *, "
                   "tuple of Tensors out = None)"],
    "Tensor.topk": ["(int k, int dim = -1, bool largest = True, bool sorted = True)"],
    # order statistics (ops.order)
    **{f"torch.{name}": ["(Tensor input)", "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)"]
       for name in ("median", "nanmedian")},
    **{f"Tensor.{name}": ["()", "(int dim, bool keepdim = False)"] for name in ("median", "nanmedian")},
    "torch.kthvalue": ["(Tensor input, int k, int dim = -1, bool keepdim = False, *, tuple of Tensors out = None)"],
    "Tensor.kthvalue": ["(int k, int dim = -1, bool keepdim = False)"],
    "torch.mode": ["(Tensor input, int dim = -1, bool keepdim = False, *, tuple of Tensors out = None)"],
    "Tensor.mode": ["(int dim = -1, bool keepdim = False)"],
    "torch.aminmax": ["(Tensor input, *, int dim = None, bool keepdim = False, tuple of Tensors out = None)"],
    "Tensor.aminmax": ["(*, int dim = None, bool keepdim = False)"],
    **{f"torch.{name}": [f"(Tensor input, {q} q, int dim = None, bool keepdim = False, *, "
                         "str interpolation = \"linear\", Tensor out = None)" for q in ("Tensor", "float")]
       for name in ("quantile", "nanquantile")},
    **{f"Tensor.{name}": [f"({q} q, int dim = None, bool keepdim = False, *, str interpolation = \"linear\")"
                          for q in ("Tensor", "float")] for name in ("quantile", "nanquantile")},
    **{f"torch.{name}": ["(Tensor input, int dim, *, tuple of Tensors out = None)"] for name in ("cummax", "cummin")},
    **{f"Tensor.{name}": ["(int dim)"] for name in ("cummax", "cummin", "logcumsumexp")},
    "torch.logcumsumexp": ["(Tensor input, int dim, *, Tensor out = None)"],
    # statistics (ops.statistics)
    **{f"torch.{name}": [f"(Tensor input, {hx} hx, Tensor w_ih, Tensor w_hh, Tensor b_ih = None, "
                         "Tensor b_hh = None)"]
       for name, hx in (("rnn_tanh_cell", "Tensor"), ("rnn_relu_cell", "Tensor"), ("gru_cell", "Tensor"),
                        ("lstm_cell", "tuple of Tensors"))},
    "torch.native_dropout": ["(Tensor input, float p, bool? train)"],
    "torch.embedding_renorm_": ["(Tensor input, Tensor indices, float max_norm, float norm_type)"],
    "torch.nuclear_norm": ["(Tensor input, tuple of ints dim, bool keepdim = False, *, Tensor out = None)",
                           "(Tensor input, bool keepdim = False, *, Tensor out = None)"],
    "torch.frobenius_norm": ["(Tensor input, tuple of ints dim, bool keepdim = False, *, Tensor out = None)"],
    "torch.nonzero_static": ["(Tensor input, *, int size, int fill_value = -1, Tensor out = None)"],
    "Tensor.nonzero_static": ["(*, int size, int fill_value = -1)"],
    "torch.constant_pad_nd": ["(Tensor input, tuple of ints pad, Number value = 0)"],
    "torch.convolution": ["(Tensor input, Tensor weight, Tensor? bias, tuple of ints stride, tuple of ints padding, "
                          "tuple of ints dilation, bool transposed, tuple of ints output_padding, int groups)"],
    "torch.binary_cross_entropy_with_logits": ["(Tensor input, Tensor target, Tensor weight = None, "
                                               "Tensor pos_weight = None, int reduction = 0)"],
    "torch.native_layer_norm": ["(Tensor input, tuple of ints normalized_shape, Tensor? weight, Tensor? bias, "
                                "float eps)"],
    "torch.native_batch_norm": ["(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                                "Tensor? running_var, bool training, float momentum, float eps, *, "
                                "tuple of Tensors out = None)"],
    "torch.view_copy": ["(Tensor input, torch.dtype dtype, *, Tensor out = None)",
                        "(Tensor input, tuple of ints size, *, Tensor out = None)"],
    "torch.histogramdd": [f"(Tensor input, {b} bins, tuple of floats range = None, Tensor weight = None, "
                          "bool density = False)" for b in ("int", "tuple of ints", "tuple of Tensors")],
    "torch.histogram": ["(Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, "
                        "tuple of Tensors out = None)",
                        "(Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = None, "
                        "bool density = False, tuple of Tensors out = None)"],
    "Tensor.histogram": ["(Tensor bins, *, Tensor weight = None, bool density = False)",
                         "(int bins = 100, *, tuple of floats range = None, Tensor weight = None, "
                         "bool density = False)"],
    "torch.histc": ["(Tensor input, int bins = 100, Number min = 0, Number max = 0, *, Tensor out = None)"],
    "Tensor.histc": ["(int bins = 100, Number min = 0, Number max = 0)"],
    "torch.cov": ["(Tensor input, *, int correction = 1, Tensor fweights = None, Tensor aweights = None)"],
    "Tensor.cov": ["(*, int correction = 1, Tensor fweights = None, Tensor aweights = None)"],
    "torch.corrcoef": ["(Tensor input)"],
    **{f"torch.{name}": ["(Tensor y, Tensor x, *, int dim = -1)", "(Tensor y, *, Number dx = 1, int dim = -1)"]
       for name in ("trapezoid", "cumulative_trapezoid")},
    "torch.trapz": ["(Tensor y, *, float dx = 1, int dim = -1)", "(Tensor y, Tensor x, *, int dim = -1)"],
    "torch.isin": [f"({first}, {second}, *, bool assume_unique = False, bool invert = False, Tensor out = None)"
                   for first, second in (("Tensor elements", "Tensor test_elements"),
                                         ("Number element", "Tensor test_elements"),
                                         ("Tensor elements", "Number test_element"))],
    "Tensor.unfold": ["(int dimension, int size, int step)"],
    # tensor_split and its kin (ops.arrange)
    "torch.tensor_split": ["(Tensor input, tuple of ints indices, int dim = 0)",
                           "(Tensor input, Tensor tensor_indices_or_sections, int dim = 0)",
                           "(Tensor input, int sections, int dim = 0)"],
    "Tensor.tensor_split": ["(tuple of ints indices, int dim = 0)", "(Tensor tensor_indices_or_sections, int dim = 0)",
                            "(int sections, int dim = 0)"],
    **{f"torch.{name}": ["(Tensor input, int sections)", "(Tensor input, tuple of ints indices)"]
       for name in ("hsplit", "vsplit", "dsplit")},
    **{f"Tensor.{name}": ["(int sections)", "(tuple of ints indices)"] for name in ("hsplit", "vsplit", "dsplit")},
    # (keyed apart from torch.atleast_Nd: PyTorch parses several tensors as one packed argument, whose message
    # names the element, so only a single argument that is not a tensor gets this one)
    **{f"torch.atleast.atleast_{n}d": ["(Tensor input)", "(tuple of Tensors tensors)"] for n in (1, 2, 3)},
    # scatter (ops.scatter): a tensor or a number to write, each with and without `reduce`
    "torch.scatter": [f"(Tensor input, int dim, Tensor index, {what}, *, {reduce}Tensor out = None)"
                      for what in ("Tensor src", "Number value") for reduce in ("", "str reduce, ")],
    **{f"Tensor.{name}": [f"(int dim, Tensor index, {what}{reduce})" for what in ("Tensor src", "Number value")
                          for reduce in ("", ", *, str reduce")] for name in ("scatter", "scatter_")},
    "torch.scatter_add": ["(Tensor input, int dim, Tensor index, Tensor src, *, Tensor out = None)"],
    **{f"Tensor.{name}": ["(int dim, Tensor index, Tensor src)"] for name in ("scatter_add", "scatter_add_")},
    "torch.index_add": ["(Tensor input, int dim, Tensor index, Tensor source, *, Number alpha = 1, Tensor out = None)"],
    **{f"Tensor.{name}": ["(int dim, Tensor index, Tensor source, *, Number alpha = 1)"]
       for name in ("index_add", "index_add_")},
    # ops.indexed
    "torch.index_fill": ["(Tensor input, int dim, Tensor index, Tensor value)",
                         "(Tensor input, int dim, Tensor index, Number value)"],
    **{f"Tensor.{name}": ["(int dim, Tensor index, Tensor value)", "(int dim, Tensor index, Number value)"]
       for name in ("index_fill", "index_fill_")},
    "torch.index_copy": ["(Tensor input, int dim, Tensor index, Tensor source, *, Tensor out = None)"],
    **{f"Tensor.{name}": ["(int dim, Tensor index, Tensor source)"] for name in ("index_copy", "index_copy_")},
    **{f"torch.{name}": ["(Tensor input, tuple of Tensors indices, Tensor values, bool accumulate = False)"]
       for name in ("index_put", "index_put_")},
    **{f"Tensor.{name}": ["(tuple of Tensors indices, Tensor values, bool accumulate = False)"]
       for name in ("index_put", "index_put_")},
    "torch.index_reduce": ["(Tensor input, int dim, Tensor index, Tensor source, str reduce, *, "
                           "bool include_self = True, Tensor out = None)"],
    **{f"Tensor.{name}": ["(int dim, Tensor index, Tensor source, str reduce, *, bool include_self = True)"]
       for name in ("index_reduce", "index_reduce_")},
    "torch.scatter_reduce": ["(Tensor input, int dim, Tensor index, Tensor src, str reduce, *, "
                             "bool include_self = True, Tensor out = None)"],
    **{f"Tensor.{name}": ["(int dim, Tensor index, Tensor src, str reduce, *, bool include_self = True)"]
       for name in ("scatter_reduce", "scatter_reduce_")},
    "torch.masked_scatter": ["(Tensor input, Tensor mask, Tensor source)"],
    **{f"Tensor.{name}": ["(Tensor mask, Tensor source)"] for name in ("masked_scatter", "masked_scatter_")},
    "torch.take": ["(Tensor input, Tensor index, *, Tensor out = None)"],
    "Tensor.take": ["(Tensor index)"],
    "torch.put": ["(Tensor input, Tensor index, Tensor source, bool accumulate = False)"],
    **{f"Tensor.{name}": ["(Tensor index, Tensor source, bool accumulate = False)"] for name in ("put", "put_")},
    "Tensor.fill_diagonal_": ["(Number fill_value, bool wrap = False)"],
    # ops.arrange
    "torch.diff": ["(Tensor input, int n = 1, int dim = -1, Tensor prepend = None, Tensor append = None, *, "
                   "Tensor out = None)"],
    "Tensor.diff": ["(int n = 1, int dim = -1, Tensor prepend = None, Tensor append = None)"],
    "torch.repeat_interleave": ["(Tensor input, Tensor repeats, int dim = None, *, int output_size = None)",
                                "(Tensor repeats, *, int output_size = None)",
                                "(Tensor input, int repeats, int dim = None, *, int output_size = None)"],
    "Tensor.repeat_interleave": ["(Tensor repeats, int dim = None, *, int output_size = None)",
                                 "(int repeats, int dim = None, *, int output_size = None)"],
    "torch.rot90": ["(Tensor input, int k = 1, tuple of ints dims = [0,1])"],
    "torch.pixel_shuffle": ["(Tensor input, int upscale_factor)"],
    "torch.pixel_unshuffle": ["(Tensor input, int downscale_factor)"],
    "torch.nn.functional.pixel_shuffle": ["(Tensor input, int upscale_factor)"],
    "torch.nn.functional.pixel_unshuffle": ["(Tensor input, int downscale_factor)"],
    "Tensor.rot90": ["(int k = 1, tuple of ints dims = [0,1])"],
    "torch.take_along_dim": ["(Tensor input, Tensor indices, int dim = None, *, Tensor out = None)"],
    "Tensor.take_along_dim": ["(Tensor indices, int dim = None)"],
    "torch.bincount": ["(Tensor input, Tensor weights = None, int minlength = 0)"],
    "Tensor.bincount": ["(Tensor weights = None, int minlength = 0)"],
    "torch.searchsorted": ["(Tensor sorted_sequence, Tensor input, *, bool out_int32 = False, bool right = False, "
                           "str side = None, Tensor sorter = None, Tensor out = None)",
                           "(Tensor sorted_sequence, Number self, *, bool out_int32 = False, bool right = False, "
                           "str side = None, Tensor sorter = None, Tensor out = None)"],
    "torch.bucketize": ["(Tensor input, Tensor boundaries, *, bool out_int32 = False, bool right = False, "
                        "Tensor out = None)",
                        "(Number self, Tensor boundaries, *, bool out_int32 = False, bool right = False)"],
    "torch.nonzero": ["(Tensor input, *, bool as_tuple = False, Tensor out = None)"],
    "Tensor.nonzero": ["(*, bool as_tuple)"],           # (PyTorch's Python layer passes as_tuple only when given)
    "torch.argwhere": ["(Tensor input)"],
    "torch.count_nonzero": ["(Tensor input, int dim = None)", "(Tensor input, tuple of ints dim)"],
    "Tensor.count_nonzero": ["(int dim = None)", "(tuple of ints dim)"],
    "Tensor.random_": ["(*, torch.Generator generator = None)", "(int from, int to, *, torch.Generator generator = None)",
                       "(int to, *, torch.Generator generator = None)"],
    "torch._VF.split": ["(Tensor input, int split_size, int dim = 0)", "(Tensor input, tuple of ints split_size, int dim = 0)"],
    "Tensor.gather": ["(int dim, Tensor index, *, bool sparse_grad = False)"],
    "torch.diag": ["(Tensor input, int diagonal = 0, *, Tensor out = None)"],
    "Tensor.diag": ["(int diagonal = 0)"],
    "torch.diag_embed": ["(Tensor input, int offset = 0, int dim1 = -2, int dim2 = -1)"],
    "Tensor.diag_embed": ["(int offset = 0, int dim1 = -2, int dim2 = -1)"],
    "torch.narrow": ["(Tensor input, int dim, Tensor start, int length)", "(Tensor input, int dim, int start, int length)"],
    "Tensor.narrow": ["(int dim, Tensor start, int length)", "(int dim, int start, int length)"],
    "torch.triu": ["(Tensor input, int diagonal = 0, *, Tensor out = None)"],
    "Tensor.triu": ["(int diagonal = 0)"],
    "torch.tril": ["(Tensor input, int diagonal = 0, *, Tensor out = None)"],
    "Tensor.tril": ["(int diagonal = 0)"],
    "torch.nn.functional.one_hot": ["(Tensor input, int num_classes = -1)"],
    # the legacy constructor, `new` in PyTorch's messages (_PARSER_NAMES)
    "torch.Tensor": ["(*, torch.device device = None)", "(torch.Storage storage)", "(Tensor other)",
                     "(tuple of ints size, *, torch.device device = None)",
                     "(object data, *, torch.device device = None)"],
    "torch.unflatten": ["(Tensor input, int dim, tuple of ints sizes)"],
    "Tensor.unflatten": ["(int dim, tuple of ints sizes)"],
    "torch.select": ["(Tensor input, int dim, int index)"],
    "Tensor.select": ["(int dim, int index)"],
    "torch.movedim": ["(Tensor input, int source, int destination)",
                      "(Tensor input, tuple of ints source, tuple of ints destination)"],
    "Tensor.movedim": ["(int source, int destination)", "(tuple of ints source, tuple of ints destination)"],
    "torch.ones": [f"(tuple of ints size, {_FACTORY_KW})"],
    "torch.zeros": [f"(tuple of ints size, {_FACTORY_KW})"],
    "torch.full": [f"(tuple of ints size, Number fill_value, {_FACTORY_KW})"],
    "torch.rand": _RANDOM_FACTORY,
    "torch.randn": _RANDOM_FACTORY,
    "torch.randint": [f"(int high, tuple of ints size, *, torch.Generator generator, {_FACTORY_TAIL})",
                      f"(int high, tuple of ints size, {_FACTORY_KW})",
                      f"(int low, int high, tuple of ints size, *, torch.Generator generator, {_FACTORY_TAIL})",
                      f"(int low, int high, tuple of ints size, {_FACTORY_KW})"],
    "torch.normal": ["(Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
                     "(Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)",
                     "(float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
                     "(float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
                     f"{_FACTORY_TAIL})"],
    "torch.permute": ["(Tensor input, tuple of ints dims)"],
    "torch.reshape": ["(Tensor input, tuple of ints shape)"],
    "torch.flip": ["(Tensor input, tuple of ints dims)"],
    "torch.tile": ["(Tensor input, tuple of ints dims)"],
    "Tensor.permute": ["(tuple of ints dims)"],
    # methods whose one int list may also come as separate ints (x.repeat(2, 3)) or by keyword
    "Tensor.view": ["(torch.dtype dtype)", "(tuple of ints size)"],
    "Tensor.reshape": ["(tuple of ints shape)"],
    "Tensor.expand": ["(tuple of ints size, *, bool implicit = False)"],
    "Tensor.flip": ["(tuple of ints dims)"],
    "Tensor.repeat": ["(tuple of ints repeats)"],
    "Tensor.resize_as_": ["(Tensor the_template, *, torch.memory_format memory_format = None)"],
    "torch.resize_as_": ["(Tensor input, Tensor the_template, *, torch.memory_format memory_format = None)"],
    "Tensor.tile": ["(tuple of ints dims)"],
    **{f"Tensor.{name}": [f"(tuple of ints size, {_FACTORY_KW.replace('Tensor out = None, ', '')})"]
       for name in ("new_zeros", "new_ones", "new_empty")},
    "Tensor.size": ["(int dim = None)"],
    "Tensor.requires_grad_": ["(bool requires_grad = True)"],
    **{f"torch.{name}": ["(Tensor input, Tensor other, *, Tensor out = None)",
                         "(Tensor input, Number other, *, Tensor out = None)"] for name in _COMPARISONS},
    **{f"Tensor.{name}": ["(Tensor other)", "(Number other)"] for name in _COMPARISONS + _COMPARISON_NAMES},
    **{f"Tensor.{name}_": ["(Tensor other)", "(Number other)"] for name in _COMPARISONS + _COMPARISON_NAMES},
    "torch.rsub": ["(Tensor input, Tensor other, *, Number alpha = 1)", "(Tensor input, Number other, Number alpha = 1)"],
    "torch.result_type": ["(Tensor tensor, Tensor other)", "(Number scalar, Tensor tensor)",
                          "(Tensor tensor, Number other)", "(Number scalar1, Number scalar2)"],
    "torch.as_tensor": ["(object data, *, torch.dtype dtype = None, torch.device device = None)"],
    "torch.asarray": ["(object obj, *, torch.dtype dtype = None, torch.device device = None, bool copy = None, "
                      "bool requires_grad = False)"],
    **_windows(),
    "torch.empty_strided": [f"(tuple of ints size, tuple of ints stride, *, "
                            f"{_FACTORY_TAIL.removeprefix('Tensor out = None, ')})"],
    "torch.fill": ["(Tensor input, Tensor value)", "(Tensor input, Number value)"],
    "torch.fill_": ["(Tensor input, Tensor value)", "(Tensor input, Number value)"],
    "Tensor.fill_": ["(Tensor value)", "(Number value)"],
    "torch.clamp_min_": ["(Tensor input, Tensor min)", "(Tensor input, Number min)"],
    "torch.clamp_max_": ["(Tensor input, Tensor max)", "(Tensor input, Number max)"],
    "torch.diagonal": ["(Tensor input, int offset = 0, int dim1 = 0, int dim2 = 1)"],
    "Tensor.diagonal": ["(int offset = 0, int dim1 = 0, int dim2 = 1)"],
    "torch.device": ["(torch.device device)", "(str type, int index = -1)"],
    "Tensor.stride": ["(int dim = None)"],
    "torch.tensor": ["(object data, *, torch.dtype dtype = None, torch.device device = None, "
                     "bool requires_grad = False, bool pin_memory = False)"],
    # torch.fft (its functions are the C++ functions fft_<name> to the parser)
    **{f"torch.fft.{name}": ["(Tensor input, int n = None, int dim = -1, str norm = None, *, Tensor out = None)"]
       for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{f"torch.fft.{name}": ["(Tensor input, tuple of ints s = None, tuple of ints dim = None, str norm = None, *, "
                             "Tensor out = None)"] for name in ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")},
    **{f"torch.fft.{name}": ["(Tensor input, tuple of ints s = None, tuple of ints dim = {-2,-1}, str norm = None, *, "
                             "Tensor out = None)"] for name in ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")},
    **{f"torch.fft.{name}": [f"(int n, float d = 1.0, {_FACTORY_KW})"] for name in ("fftfreq", "rfftfreq")},
    **{f"torch.fft.{name}": ["(Tensor input, tuple of ints dim = None)"] for name in ("fftshift", "ifftshift")},
    # torch.stft is Python: it hands these arguments on to the C++ stft by position (gradcli.engine.ops.stft)
    "_VF.stft": ["(Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = None, "
                 "bool center = True, str pad_mode = \"reflect\", bool normalized = False, bool onesided = None, "
                 "bool return_complex = None, bool align_to_window = None)",
                 "(Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = None, "
                 "bool normalized = False, bool onesided = None, bool return_complex = None, "
                 "bool align_to_window = None)"],
    "torch.istft": ["(Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = None, "
                    "bool center = True, bool normalized = False, bool onesided = None, int length = None, "
                    "bool return_complex = False)"],
}


class _Param:
    __slots__ = ("type", "name", "optional", "nullable", "keyword_only", "word_type", "word_name")

    def __init__(self, text: str, keyword_only: bool):
        head, eq, default = text.partition(" = ")
        self.type, _, self.name = head.rpartition(" ")
        self.optional = bool(eq)
        # None is taken only where it is the default, or by a required `Tensor?` (torch.batch_norm's weight)
        self.nullable = default == "None" or self.type.endswith("?")
        self.type = self.type.removesuffix("?")
        self.keyword_only = keyword_only
        # what PyTorch's message formatter reads from the same text: everything before the last
        # space is the "type" and the last word the "name" (so `Number alpha = 1` is named "1")
        self.word_type, _, self.word_name = text.rpartition(" ")


class _Signature:
    __slots__ = ("text", "hidden", "params", "words", "min_args", "max_args", "max_positional")

    def __init__(self, text: str):
        self.hidden = text.startswith("hidden:")
        self.text = text.removeprefix("hidden:")
        parts = self.text[1:-1].split(", ") if self.text != "()" else []
        self.params, keyword_only = [], False
        for part in parts:
            if part == "*":
                keyword_only = True
            else:
                self.params.append(_Param(part, keyword_only))
        # PyTorch's message formatter splits the same text its own way: "*" counts as an argument,
        # and so does the empty text of "()"
        self.words = [_Param(p, False) for p in (parts or [""])]
        self.min_args = sum(not p.optional for p in self.params)
        self.max_args = len(self.params)
        self.max_positional = sum(not p.keyword_only for p in self.params)


_TABLE: dict = {}         # key -> its parsed signatures, on the first call that needs them (2 ms for all of them)


def _signatures(key: str) -> list | None:
    sigs = _TABLE.get(key)
    if sigs is None:
        texts = SIGNATURES.get(key)
        if texts is None:
            return None
        sigs = _TABLE[key] = [_Signature(s) for s in texts]
    return sigs


# ------------------------------------------------------------------------------------------ binding

def type_name(value) -> str:
    """The type name PyTorch's messages give a value (Python's own for plain values)."""
    cls = value.__class__
    if cls is dtypes.DType:
        return "torch.dtype"
    if cls is dtypes.Layout:
        return "torch.layout"
    if cls is tensor.Size:
        return "torch.Size"
    if cls is tensor.Tensor and id(value) in tensor.parameter_marks:
        return "Parameter"              # nn.Parameter is a class of its own in PyTorch
    name = cls.__name__
    if name == "_Device":
        return "torch.device"
    if name == "Generator":
        return "torch._C.Generator"
    if name == "ScriptFunction":
        return "function"
    return name


def _is_int(v) -> bool:
    return v.__class__ is int


# functions whose Tensor parameters also take a Python number (PyTorch wraps it in a 0-d tensor)
_NUMBERS_AS_TENSORS = frozenset(("add", "sub", "mul", "div"))


def _fits(ptype: str, value, numbers_as_tensors=False) -> bool:
    cls = value.__class__
    if ptype == "Tensor":
        return cls is tensor.Tensor or numbers_as_tensors and (cls is int or cls is float or cls is bool)
    if ptype == "Number" or ptype == "float":    # a 0-d tensor that does not require grad too (read as its value)
        return cls is int or cls is float or cls is bool or (cls is tensor.Tensor and value._a.ndim == 0
                                                             and not value.requires_grad)
    if ptype == "int":      # a 0-d integer tensor too (PyTorch's parser reads it as its value), an IntEnum's member
        return cls is int or cls is tensor.Tensor and value._a.ndim == 0 and value._a.dtype.kind in "iu" or (
            isinstance(value, int) and cls is not bool)
    if ptype == "bool":
        return cls is bool
    if ptype == "str":
        return cls is str
    if ptype == "torch.dtype":
        return cls is dtypes.DType
    if ptype == "torch.memory_format":
        return cls is dtypes.MemoryFormat
    if ptype == "torch.layout":
        return cls is dtypes.Layout
    if ptype == "torch.device":
        return cls is str or cls is int or type_name(value) == "torch.device"
    if ptype == "tuple of ints":
        # PyTorch's parser looks at the first element only (a bool there does not count as an int);
        # the others are checked as the list is unpacked, once a signature has been chosen (see
        # _unpack_error), where a bool does count
        return cls is int or ((cls is tuple or cls is list or cls is tensor.Size)
                              and (not value or value[0].__class__ is int))
    if ptype == "torch.Generator":
        return type_name(value) == "torch._C.Generator"
    if ptype == "tuple of floats":
        return (cls is tuple or cls is list) and all(e.__class__ in (int, float) for e in value)
    if ptype == "tuple of Tensors":     # (the parser looks at the first element; _bind unpacks the others)
        return (cls is tuple or cls is list) and (not value or value[0].__class__ is tensor.Tensor)
    if ptype == "object":
        return True
    return False


# int lists PyTorch declares without a length: only these may be given as separate ints, and none of them as
# one int by keyword (`repeats=2`; a `dim` list has a length of 1, so `dim=0` is taken)
_UNSIZED_LISTS = ("size", "shape", "dims", "repeats")
_UNSIZED_DIMS = frozenset(("squeeze",))    # squeeze's `dim` list has none: x.squeeze(0, 1) is taken
_SIZED_DIMS = frozenset(("roll",))        # roll's `dims` has a length of 1 (int[1] dims=[])


class _Final(str):
    """A message given once a signature has been chosen (an int list that does not unpack): PyTorch
    tries no other signature after it."""
    __slots__ = ()


def _is_sequence(value) -> bool:
    cls = value.__class__
    return cls is tuple or cls is list or cls is tensor.Size


def _unpack_error(name: str, p: _Param, value) -> str | None:
    """PyTorch's message for an int list whose later elements are not ints."""
    if p.type != "tuple of ints" or not _is_sequence(value):
        return None
    for i, e in enumerate(value):
        if e.__class__ is not int and e.__class__ is not bool:
            return _Final(f"{name}(): argument '{p.name}' failed to unpack the object at pos {i + 1} with error "
                          f"\"type must be tuple of ints,but got {type_name(e)}\"")
        if not -(1 << 63) <= e < 1 << 63:       # (PyTorch's message goes on with a C++ backtrace: its first line)
            return _Final(f"{name}(): argument '{p.name}' failed to unpack the object at pos {i + 1} with error "
                          "\"Overflow when unpacking long long\"")
    return None


def _bind(name: str, sig: _Signature, args: tuple, kwargs: dict, only: bool = False):
    """None when the arguments fit the signature, else PyTorch's message for the first misfit (`only`: the
    function's one signature, whose tensor lists PyTorch's parser checks element by element at once)."""
    nargs = len(args)
    first = sig.params[0] if sig.params else None
    if nargs > 1 and first is not None and first.type == "tuple of ints" and sig.max_positional == 1 \
            and (first.name in _UNSIZED_LISTS or name in _UNSIZED_DIMS) and _is_int(args[0]):
        # an int list of any length that is the only positional parameter may be given as separate
        # ints: ones(2, 3) (not `dim`, a list PyTorch declares with a length of 1); the elements
        # are checked as the list is unpacked
        args, nargs = (tuple(args),), 1
    if nargs > sig.max_positional:
        n, least = sig.max_positional, sig.min_args
        if least != n:      # (PyTorch's words, "were" even for one; least > n with a required keyword)
            return f"{name}() takes from {least} to {n} positional arguments but {nargs} were given"
        return (f"{name}() takes {n} positional argument{'' if n == 1 else 's'} but {nargs} "
                f"{'was' if nargs == 1 else 'were'} given")
    used, unpacked = 0, []
    for i, p in enumerate(sig.params):
        if i < nargs and not p.keyword_only:
            value, where = args[i], f" (position {i + 1})"
        elif p.name in kwargs:
            value, where = kwargs[p.name], ""
            used += 1
        elif p.optional:
            continue
        else:
            # (PyTorch names every required parameter from the first one missing on, given by keyword or not)
            missing = [q.name for q in sig.params[i:] if not q.optional]
            return (f"{name}() missing {len(missing)} required positional argument{'s' if len(missing) == 1 else ''}: "
                    + ", ".join(f'"{m}"' for m in missing))
        if value is None and p.nullable:
            continue
        if p.type == "tuple of Tensors" and p.name != "indices" and _is_sequence(value) and value \
                and (value[0].__class__ is tensor.Tensor or only):
            # among several signatures a tensor list is chosen by its first element; the others are unpacked
            # after (a function with one takes any list, and its first non-tensor is the error)
            for k, e in enumerate(value):
                if e.__class__ is not tensor.Tensor:
                    return _Final(f"expected Tensor as element {k} in argument {i}, but got {type_name(e)}")
        if p.name == "indices" and p.type == "tuple of Tensors" and _is_sequence(value):
            # index_put's Tensor?[]: the parser takes any tuple or list, and its conversion refuses each
            # element that is not a tensor (None included)
            for k, e in enumerate(value):
                if e.__class__ is not tensor.Tensor:
                    return _Final(f"expected Tensor as element {k} in argument {i}, but got {type_name(e)}")
        if value.__class__ is tensor.Tensor and p.type == "tuple of ints" and (p.name == "dim" or name in _SIZED_DIMS) \
                and value._a.size == 1 and value._a.dtype.kind in "iub":
            pass        # an int list of a given length (a `dim`, roll's) takes an integer tensor of one element
        elif not _fits(p.type, value, name in _NUMBERS_AS_TENSORS) or (
                value.__class__ is int and p.type == "tuple of ints" and p.name in _UNSIZED_LISTS
                and not (where and sig.max_positional == 1)     # one int stands for the list only as varargs
                and name not in _SIZED_DIMS):
            if p.type == "tuple of ints" and _is_sequence(value) and where:    # (a keyword: "not tuple")
                return (f"{name}(): argument '{p.name}'{where} must be tuple of ints, but found element of type "
                        f"{type_name(value[0])} at pos 0")
            return f"{name}(): argument '{p.name}'{where} must be {p.type}, not {type_name(value)}"
        unpacked.append((p, value))
    if used < len(kwargs):          # the keywords left over, checked last (as PyTorch does)
        positional = {p.name for i, p in enumerate(sig.params) if i < nargs and not p.keyword_only}
        names = {p.name for p in sig.params}
        for k in kwargs:
            if k in positional:
                return f"{name}() got multiple values for argument '{k}'"
            if k not in names:
                return f"{name}() got an unexpected keyword argument '{k}'"
    # PyTorch unpacks the lists as it passes them on to the C++ function, whose arguments the
    # compiler evaluates from the last to the first: the last list that does not unpack is reported
    for p, value in reversed(unpacked):
        message = _unpack_error(name, p, value)
        if message is not None:
            return message
    return None


def _described(args: tuple, kwargs: dict) -> str:
    """`(Tensor, int, dim=int, )`: the arguments' types, as PyTorch lists what it got (the trailing
    ", " stays when there are keywords only)."""
    text = "(" + "".join(f"{type_name(a)}, " for a in args) + "".join(f"{k}={type_name(v)}, " for k, v in kwargs.items())
    if args:
        text = text[:-2]
    return text + ")"


def _word_fits(word_type: str, value) -> bool:
    """How the message formatter matches a value against a signature's "type" words."""
    t = type_name(value)
    if word_type == "float":
        return t in ("float", "int")
    if word_type == "int":
        return t == "int"
    return t == word_type


def _marked(sig: _Signature, args: tuple, kwargs: dict) -> str:
    """The arguments' types with each one that does not fit its position between `!` marks."""
    parts = []
    values = list(args) + list(kwargs.values())
    keys = [None] * len(args) + list(kwargs)
    for i, (v, k) in enumerate(zip(values, keys)):
        fits = i < len(sig.words) and _word_fits(sig.words[i].word_type, v)
        text = (f"{k}=" if k is not None else "") + _value_words(v)
        parts.append(text if fits else f"!{text}!")
    text = "(" + "".join(p + ", " for p in parts)
    if args:
        text = text[:-2]
    return text + ")"


def _value_words(v) -> str:
    cls = v.__class__
    if cls is tuple or cls is list:
        inner = ", ".join(type_name(e) for e in v)
        if cls is tuple:
            return f"tuple of ({inner}{',' if len(v) == 1 else ''})"
        return f"list of [{inner}]"
    return type_name(v)


def _unmatched_keywords(sig: _Signature, kwargs: dict) -> list:
    start = max(len(sig.words) - len(kwargs), 0)
    names = {w.word_name for w in sig.words[start:]}
    return [k for k in kwargs if k not in names]


def _invalid_combination(name: str, sigs: list, args: tuple, kwargs: dict) -> str:
    # PyTorch gathers the keywords into a C++ hash map first, which hands small sets of them back in
    # the reverse of the order they were given
    kwargs = dict(reversed(kwargs.items()))
    head = f"{name}() received an invalid combination of arguments - "
    n = len(args) + len(kwargs)
    if len(sigs) == 1:
        sig = sigs[0]
        unmatched = _unmatched_keywords(sig, kwargs) if kwargs else []
        if unmatched:
            return head + "got unrecognized keyword arguments: " + ", ".join(unmatched)
        got = _marked(sig, args, kwargs) if n == len(sig.words) else _described(args, kwargs)
        return head + f"got {got}, but expected {sig.text}"
    lines = [head + f"got {_described(args, kwargs)}, but expected one of:"]
    for sig in sigs:
        lines.append(f" * {sig.text}")
        if n == len(sig.words):
            unmatched = _unmatched_keywords(sig, kwargs) if kwargs else []
            if unmatched:
                lines.append("      didn't match because some of the keywords were incorrect: " + ", ".join(unmatched))
            else:
                lines.append("      didn't match because some of the arguments have invalid types: "
                             + _marked(sig, args, kwargs))
    return "\n".join(lines) + "\n"


# callables whose messages carry another name than the one a script calls
_PARSER_NAMES = {"torch.Tensor": "new", "torch.nn.functional.logsigmoid": "log_sigmoid",
                 "torch.linalg.vector_norm": "linalg_vector_norm", "torch.linalg.norm": "linalg_norm",
                 "torch.linalg.matrix_norm": "linalg_matrix_norm", "torch.linalg.solve_triangular": "linalg_solve_triangular",
                 "torch.linalg.cholesky": "linalg_cholesky", "torch.linalg.matrix_power": "linalg_matrix_power",
                 "torch.linalg.multi_dot": "linalg_multi_dot", "torch.linalg.slogdet": "linalg_slogdet",
                 "torch.linalg.matrix_exp": "linalg_matrix_exp", "torch.linalg.svd": "linalg_svd",
                 "torch.linalg.svdvals": "linalg_svdvals", "torch.linalg.eigh": "linalg_eigh",
                 "torch.linalg.eigvalsh": "linalg_eigvalsh", "torch.linalg.qr": "linalg_qr",
                 "torch.linalg.pinv": "linalg_pinv", "torch.linalg.matrix_rank": "linalg_matrix_rank",
                 **{f"torch.linalg.{name}": f"linalg_{name}" for name in ("lu_factor", "lu_factor_ex", "lu", "lu_solve",
                                                                         "solve_ex", "inv_ex", "cholesky_ex", "ldl_factor",
                                                                         "ldl_factor_ex", "ldl_solve",
                                                                         "vecdot", "vander", "cond", "tensorinv",
                                                                         "tensorsolve", "lstsq", "householder_product")},
                 "torch.nn.functional.threshold": "_threshold",     # F.threshold is `_threshold` in Python
                 # torch.unique's boolean dispatch: its messages name the wrapper it calls through
                 "torch.unique": "_return_output", "torch.lu": "_lu_no_infos", "torch.symeig": "_symeig", "torch.unique_consecutive": "_consecutive_return_output"}


def parser_name(key: str, name: str) -> str:
    """The name PyTorch's messages give the callable `key` ("torch.nn.functional.logsigmoid"), `name` if none
    other; torch.special's functions are the C++ functions special_<name>."""
    if key.startswith("torch.special."):
        return "special_" + name
    if key.startswith("torch.fft."):
        return "fft_" + name
    return _PARSER_NAMES.get(key, name)


def check(key: str, args: tuple, kwargs: dict) -> str | None:
    """PyTorch's message for calling `key` ("torch.add", "Tensor.add") with these arguments, or None
    when PyTorch's parser would take them. For a method, `args` leaves out the tensor itself."""
    sigs = _signatures(key)
    if sigs is None:
        return None
    name = parser_name(key, key.rpartition(".")[2])
    if len(sigs) == 1:
        return _bind(name, sigs[0], args, kwargs, True)
    for sig in sigs:
        message = _bind(name, sig, args, kwargs)
        if message is None or message.__class__ is _Final:
            return message
    n = len(args) + len(kwargs)
    shown = [s for s in sigs if not s.hidden]
    plausible = [s for s in shown if s.min_args <= n <= s.max_args]
    if len(plausible) == 1:
        message = _bind(name, plausible[0], args, kwargs)
        if message is not None:
            return message
    return _invalid_combination(name, shown, args, kwargs)


def bound(key: str, args: tuple, kwargs: dict) -> tuple[int, dict]:
    """Which signature of `key` the arguments fit (its index) and the values by parameter name, with
    the defaults filled in; a TypeError with PyTorch's message when none fits."""
    for index, sig in enumerate(_signatures(key)):
        message = _bind("", sig, args, kwargs)
        if message.__class__ is _Final:
            break
        if message is None:
            values = {}
            for i, p in enumerate(sig.params):
                if i < len(args) and not p.keyword_only:
                    values[p.name] = args[i]
                elif p.name in kwargs:
                    values[p.name] = kwargs[p.name]
                else:
                    values[p.name] = None
            return index, values
    raise TypeError(check(key, args, kwargs))


def parsed(key: str, args: tuple, kwargs: dict, defaults: dict) -> dict:
    """A call of `key`, a function of one signature, as PyTorch's parser takes it: the values by parameter name,
    `defaults` standing for those not given; a TypeError with PyTorch's message for arguments that do not fit."""
    message = check(key, args, kwargs)
    if message is not None:
        raise TypeError(message)
    _, values = bound(key, args, kwargs)
    return {name: defaults.get(name) if value is None else value for name, value in values.items()}


def deprecation(key: str, index: int) -> str:
    """PyTorch's warning (once per process) for a call that took the deprecated overload `index` of `key`."""
    name = parser_name(key, key.rpartition(".")[2])
    texts = SIGNATURES[key]
    shown = "".join(f"\n\t{name}{text}" for text in texts if not text.startswith("hidden:"))
    return (f"This overload of {name} is deprecated:\n\t{name}{texts[index].removeprefix('hidden:')}\nConsider "
            f"using one of the following signatures instead:{shown} (Triggered internally at "
            f"/__w/pytorch/pytorch/torch/csrc/utils/python_arg_parser.cpp:1841.)")


def one_int_list(key: str, args: tuple, kwargs: dict) -> tuple:
    """The arguments of a method whose first parameter is an int list that may come as separate ints, as one
    sequence or by keyword (x.repeat(2, 3), x.repeat((2, 3)), x.repeat(repeats=(2, 3))), in the positional
    form the engine takes; PyTorch's message for a call that leaves the list out or adds other keywords."""
    message = check(key, args, kwargs)
    if message is not None:
        raise TypeError(message)
    if args:
        return args
    index, values = bound(key, args, kwargs)
    return (values[_signatures(key)[index].params[0].name],)


# --------------------------------------------------------------------------- Python's binding errors

_PYTHON_BINDING = re.compile(
    r"^(?P<func>[\w.<>]+)\(\) (?P<rest>got an unexpected keyword argument '\w+'|got multiple values for argument '\w+'"
    r"|takes (?P<takes>\d+|from \d+ to \d+) positional arguments? but (?P<given>\d+) (?:was|were) given"
    r"|missing (?P<missing>\d+) required (?P<kind>positional|keyword-only) arguments?: (?P<names>.*)"
    r"|got some positional-only arguments passed as keyword arguments: .*)$", re.S)


def rename_binding_error(message: str, name: str, method: bool, native: bool, no_args=False,
                         qualified: str | None = None) -> str | None:
    """Python's message for a call that did not bind, said of `name` as PyTorch says it (`method`: a
    tensor method, whose `self` PyTorch does not count; `native`: a function PyTorch writes in C++,
    whose wording differs a little from Python's; `no_args`: a method that takes no arguments;
    `qualified`: the dotted name PyTorch's parser gives a C++ function that takes none); None when the
    message is not one of Python's binding messages."""
    m = _PYTHON_BINDING.match(message)
    if m is None:
        return None         # not one of Python's binding messages
    if m["func"] == name and not (native and m["missing"] is not None and '"' not in message) \
            and not (native and m["takes"] == "0"):
        return None         # already said of the public name (only a C++ function's missing arguments are worded
                            # otherwise: PyTorch quotes their names with ")
    rest = m["rest"]
    if no_args and rest.startswith("got"):
        return f"TensorBase.{name}() takes no keyword arguments"
    if rest.startswith("got some positional-only"):      # a parameter PyTorch has no keyword for
        keyword = re.search(r"'(\w+)'", rest).group(1)
        return f"{name}() got an unexpected keyword argument '{keyword}'"
    if m["takes"] is not None:
        given = int(m["given"]) - method
        takes = m["takes"]
        if method:
            takes = re.sub(r"\d+", lambda d: str(int(d.group()) - 1), takes)
        if takes == "0" and (method or no_args):
            return f"TensorBase.{name}() takes no arguments ({given} given)"
        if takes == "0" and native:
            return f"{qualified or name}() takes no arguments ({given} given)"
        plural = "" if takes == "1" else "s"
        return f"{name}() takes {takes} positional argument{plural} but {given} {'was' if given == 1 else 'were'} given"
    if m["missing"] is not None and native:
        names = re.findall(r"'(\w+)'", m["names"])
        plural = "s" if len(names) == 1 else ""
        return f"{name}() missing {len(names)} required {m['kind']} argument{plural}: " + ", ".join(
            f'"{n}"' for n in names)
    return f"{name}() {rest}"
