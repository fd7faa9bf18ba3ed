"""The products with an added input, beta * input + alpha * product, as PyTorch's CPU kernels compute them:
addmm (F.linear's core), addmv, addr, baddbmm and addbmm, with their gradient rows (PyTorch's formulas:
`maybe_multiply` leaves a gradient alone when its factor is 1).

How the numbers come out (docs/numerics.md, "Products with an added input", has the measurements):

* addmm, float32: MKL's sgemm. beta * input is rounded once (beta = 0 ignores the input, NaNs included), then
  the product is summed onto it as mm sums (linalg.mkl_order, nn's bias-first kernels). An alpha other than 1
  is folded into one operand as MKL packs it (rounded once): mat2 in the kernels for wide results (at least 4
  rows and 12 columns), mat1 otherwise; a one-column result is MKL's matrix-vector kernel, alpha times the
  rounded product, then the added input.
* addmv: MKL's sgemv: alpha times mv's product (rounded), plus beta * input (rounded).
* addr: PyTorch's own elementwise kernel: beta * input + (alpha * vec1) * vec2 with one fused multiply-add,
  the vector body fusing the product with beta * input, the scalar tail fusing beta * input with the product.
* baddbmm: PyTorch's own loop for matrices of fewer than 400 multiply-adds (bmm's sums, then
  beta * input + alpha * sum, each rounded), MKL's gemm per matrix above (as addmm).
* addbmm: addmm_ once per matrix of the batch, beta on the first only.
* integers: exact (wrapping as C++'s do), with beta and alpha truncated to integers.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget
from gradcli.engine.fma import fma
from gradcli.engine.forward import add_tangents, tangent_or_zeros
from gradcli.engine.ops import linalg, shape
from gradcli.engine.recording import autocast_policy, Op, apply, checked_scalar, number_arg, result_dtype, type_word
from gradcli.engine.dtypes import DType
from gradcli.engine.tensor import Tensor

_FLOAT32 = np.dtype(np.float32)       # the usual dtype object, tested by identity before by value (quicker)
_F16 = np.dtype(np.float16)


# ------------------------------------------------------------------------------------------ the rows

def _scaled(F, g, factor):
    """maybe_multiply: the gradient itself when the factor is 1, else gradient * factor."""
    return g if factor == 1 else F.times(g, factor)


def _addmm_self(F, g, mat1, mat2, c1, c2, beta, alpha):
    return g if beta == 1 else F.times(g, beta)


def _addmm_mat1(F, g, mat1, mat2, mat1_column_major, mat2_column_major, beta, alpha):
    """mm_mat1_backward: computed transposed when mat1 was column-major, as PyTorch does."""
    grad = F.t(F.mm(mat2, F.t(g))) if mat1_column_major else F.mm(g, F.t(mat2))
    return grad if alpha == 1 else F.times(grad, alpha)


def _addmm_mat2(F, g, mat1, mat2, mat1_column_major, mat2_column_major, beta, alpha):
    grad = F.t(F.mm(F.t(g), mat1)) if mat2_column_major else F.mm(F.t(mat1), g)
    return grad if alpha == 1 else F.times(grad, alpha)


def _scaled_tangent(t, factor):
    return t if t is None or factor == 1 else t * factor


def _product_rule(product, summed=False):
    """A row's forward-mode formula: beta * input_t + alpha * (first_t x second_p + first_p x second_t) for the
    row's product x (mm, mv, outer, bmm; `summed`: over the batch, addbmm's), where a missing first or second
    tangent is zeros that PyTorch materialises for the product (an inf in the other factor gives nan there).
    beta and alpha are the last two values the row saves."""
    def jvp(F, ts, xs, result, *saved):
        beta, alpha = saved[-2], saved[-1]
        terms = (product(tangent_or_zeros(ts, xs, 1), xs[2]), product(xs[1], tangent_or_zeros(ts, xs, 2)))
        if summed:
            from gradcli.engine.ops import reduce
            terms = tuple(reduce.reduce_sum(t, 0) for t in terms)
        value = add_tangents(_scaled_tangent(ts[0], beta), _scaled_tangent(terms[0], alpha), result._a.shape)
        return add_tangents(value, _scaled_tangent(terms[1], alpha))
    return jvp


def _batch_grad(F, g, b1, b2):
    """addbmm's gradient, the same for every matrix of the batch: g expanded along a new batch dim."""
    return F.expand(F.unsqueeze_dims(g, (0,)), (b1.shape[0], b1.shape[1], b2.shape[2]))


# fmt: off
ADDMM   = Op("AddmmBackward0",   None, ("mat1", "mat2", "c1", "c2", "beta", "alpha"),
             (_addmm_self, _addmm_mat1, _addmm_mat2),
             inputs=("self", "mat1", "mat2"), fits=(True, False, False), needed_by={"mat1": "mat2", "mat2": "mat1"},
             quiet=True, jvp=_product_rule(lambda a, b: linalg.mm(a, b)))
ADDMV   = Op("AddmvBackward0",   None, ("mat", "vec", "beta", "alpha"),
             (lambda F, g, mat, vec, beta, alpha: _scaled(F, g, beta),
              lambda F, g, mat, vec, beta, alpha: _scaled(F, F.outer(g, vec), alpha),
              lambda F, g, mat, vec, beta, alpha: _scaled(F, F.mv(F.t(mat), g), alpha)),
             inputs=("self", "mat", "vec"), fits=True, needed_by={"mat": "vec", "vec": "mat"},
             jvp=_product_rule(lambda a, b: linalg.mv(a, b)))
ADDR    = Op("AddrBackward0",    None, ("vec1", "vec2", "beta", "alpha"),
             (lambda F, g, vec1, vec2, beta, alpha: _scaled(F, g, beta),
              lambda F, g, vec1, vec2, beta, alpha: _scaled(F, F.mv(g, vec2), alpha),
              lambda F, g, vec1, vec2, beta, alpha: _scaled(F, F.mv(F.t(g), vec1), alpha)),
             inputs=("self", "vec1", "vec2"), fits=True, needed_by={"vec1": "vec2", "vec2": "vec1"},
             jvp=_product_rule(lambda a, b: linalg.outer(a, b)))
BADDBMM = Op("BaddbmmBackward0", None, ("batch1", "batch2", "beta", "alpha"),
             (lambda F, g, batch1, batch2, beta, alpha: _scaled(F, g, beta),
              lambda F, g, batch1, batch2, beta, alpha: _scaled(F, F.bmm(g, F.mT(batch2)), alpha),
              lambda F, g, batch1, batch2, beta, alpha: _scaled(F, F.bmm(F.mT(batch1), g), alpha)),
             inputs=("self", "batch1", "batch2"), fits=True, needed_by={"batch1": "batch2", "batch2": "batch1"},
             jvp=_product_rule(lambda a, b: linalg.bmm(a, b)))
ADDBMM  = Op("AddbmmBackward0",  None, ("batch1", "batch2", "beta", "alpha"),
             (lambda F, g, batch1, batch2, beta, alpha: _scaled(F, g, beta),
              lambda F, g, batch1, batch2, beta, alpha: _scaled(
                  F, F.bmm(_batch_grad(F, g, batch1, batch2), F.mT(batch2)), alpha),
              lambda F, g, batch1, batch2, beta, alpha: _scaled(
                  F, F.bmm(F.mT(batch1), _batch_grad(F, g, batch1, batch2)), alpha)),
             inputs=("self", "batch1", "batch2"), fits=True,
             jvp=_product_rule(lambda a, b: linalg.bmm(a, b), summed=True))
# fmt: on


# ------------------------------------------------------------------------------------------ arguments

def _tensor(x, fn: str, name: str, position: int) -> np.ndarray:
    if x.__class__ is not Tensor:
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(x).__name__}")
    return x._a


def _operands(fn: str, input, first, second, beta, alpha) -> tuple:
    """The arrays of the three tensors of `fn` (torch.addmm, ...) and its beta and alpha as numbers, after the
    parser's checks of each argument."""
    names = ("input",) + _PARAMETERS[fn]
    arrays = tuple(_tensor(t, fn, name, i + 1) for i, (t, name) in enumerate(zip((input, first, second), names)))
    return arrays + (number_arg(beta, fn, "beta"), number_arg(alpha, fn, "alpha"))


def _coefficient(value, dtype: np.dtype):
    """beta or alpha as the kernel reads it for a result of `dtype`: a float in float16's and float32's
    arithmetic (float's overflow check), a double in float64's, a truncated int64 for integers (C++'s
    conversion, with PyTorch's check), a bool for bools."""
    kind = dtype.kind
    if kind in "fV":
        compute = np.float64 if dtype.itemsize == 8 else np.float32
        checked_scalar(value, np.dtype(compute))
        return compute(value)
    if kind == "b":
        return bool(value)
    checked_scalar(value, np.dtype(np.int64))
    return np.int64(int(value))


def _expanded_input(c: np.ndarray, target: tuple) -> np.ndarray:
    """The added input broadcast to the result's shape, with expand's checks and words."""
    if c.shape == target:
        return c
    shape.expanded(c, target)
    return np.broadcast_to(c, target)


def _size(x: np.ndarray, dim: int) -> int:
    """x.size(dim), with PyTorch's IndexError past the last dim."""
    if dim >= x.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, "
                         f"{max(x.ndim, 1) - 1}], but got {dim})")
    return x.shape[dim]


def _inplace_check(inplace, target: tuple) -> None:
    if inplace is not None and tuple(inplace) != tuple(target):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(inplace)} and output tensor size "
                           f"{list(target)} should match")


def _no_more(fn: str, rest: tuple) -> None:
    if rest:        # (the script's call gets PyTorch's message from the signatures: engine/signatures.py)
        raise TypeError(f"{fn}() takes 3 positional arguments but {3 + len(rest)} were given")


def _out_dtype(fn: str, rest: tuple) -> None:
    """The `out_dtype` overload (a dtype after the three tensors): PyTorch's CPU build has no kernel for it."""
    if rest:
        if len(rest) > 1 or rest[0].__class__ is not DType:
            raise TypeError(f"{fn}() takes 3 positional arguments but {3 + len(rest)} were given")
        raise NotImplementedError(f"Could not run 'aten::{fn}.dtype' with arguments from the 'CPU' backend. This "
                                  "could be because the operator doesn't exist for this backend, or was omitted "
                                  "during the selective/custom build process (if using custom build).")


# ------------------------------------------------------------------------------------------ the values

def _beta_input(c: np.ndarray, beta) -> np.ndarray:
    """beta * input as the kernels start from it: zeros for beta = 0 (the input, NaNs and all, is not read),
    the input itself for 1, else the product rounded once."""
    if beta == 0:
        return np.zeros(c.shape, c.dtype)
    if beta == 1:
        return c.copy()
    return (c * beta).astype(c.dtype, copy=False)


def addmm_array(c: np.ndarray, x: np.ndarray, y: np.ndarray, beta=1, alpha=1) -> np.ndarray:
    """beta * c + alpha * (x @ y), c already of the result's shape, in the kernels' arithmetic (see above)."""
    if x.dtype.kind in "iu":
        product = linalg.matprod(x, y)
        return (c * beta + product * alpha).astype(x.dtype, copy=False)
    if x.dtype.char in "eE":
        if x.dtype.char == "E" and linalg.own_gemm(x, y):
            return linalg.bfloat16_small(x, y, c, beta, alpha)
        return linalg.half_product(x, y, alpha, c, beta)
    if beta == 1 and alpha == 1:
        return _addmm_one(c, x, y)
    bias = _beta_input(c, beta)
    if alpha == 0:
        return bias
    if alpha == 1:
        return _addmm_one(bias, x, y)
    m, k = x.shape
    n = y.shape[1]
    if n == 1 and m >= 2:               # the matrix-vector kernel: alpha times the finished product
        return (linalg.matprod(x, y) * alpha).astype(x.dtype, copy=False) + bias
    if m >= 4 and n >= 12 and k >= 2:   # alpha packed with mat2
        y = (y * alpha).astype(y.dtype, copy=False)
    else:                               # alpha packed with mat1
        x = (x * alpha).astype(x.dtype, copy=False)
    return _addmm_one(bias, x, y)


def _addmm_one(b: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """b + x @ y as MKL's sgemm with beta = 1 sums it where the oracle showed its order (linalg.mkl_order): its
    multiply-then-add kernels start from the bias when mat2 is not transposed (F.linear's weight is) and has more
    than one column; its other kernels add the bias to the finished product."""
    float32 = (x.dtype is _FLOAT32 and y.dtype is _FLOAT32 and b.dtype is _FLOAT32
               or x.dtype == y.dtype == b.dtype == np.float32)
    if float32 and x.shape[1] * x.shape[0] * y.shape[1] <= linalg.SEQUENTIAL_WORK:
        order = linalg.mkl_order(x, y)
        if order == "lanes4":                   # (the bias added to the finished product)
            return linalg.lanes4(x, y) + b
        if order == "columns":
            return linalg.columns(x, y) + b
        if order == "seq" and y.shape[1] != 1 and not linalg.transposed(y):
            return linalg.in_order(x, y, np.broadcast_to(b, (x.shape[0], y.shape[1])).copy(), False)
        fma_order, order = order == "fma", linalg.affordable(order, x.shape[0], x.shape[1], y.shape[1])
        if order is None and fma_order:
            return np.matmul(x, y) + b
        if order is None and not linalg.sequential_guess(x.shape[0], x.shape[1]):
            return (np.matmul(x.astype(np.float64), y.astype(np.float64)) + b).astype(np.float32)
    return linalg.matprod(x, y) + b


def _column_major(x: np.ndarray) -> bool:
    """The strides test of mm_mat1_backward / mm_mat2_backward: stride (1, rows)."""
    item = x.itemsize
    return x.strides[0] == item and x.strides[1] == item * x.shape[0]


# ------------------------------------------------------------------------------------------ addmm

def _addmm(input, mat1, mat2, out_dtype: tuple, beta, alpha, inplace) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape. (`inplace`: the shape of
    the tensor addmm_ writes into; `out_dtype`: the overload PyTorch's CPU build has no kernel for.)"""
    c, x, y, beta, alpha = _operands("addmm", input, mat1, mat2, beta, alpha)
    _out_dtype("addmm", out_dtype)
    if x.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {x.ndim}-D tensor")
    if y.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {y.ndim}-D tensor")
    if x.shape[1] != y.shape[0]:
        if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:     # PyTorch's meta kernel's words
            raise RuntimeError(f"a and b must have same reduction dim, but got {list(x.shape)} X {list(y.shape)}.")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} and "
                           f"{y.shape[0]}x{y.shape[1]})")
    if c.dtype != y.dtype:          # PyTorch's addmm compares the input with mat2 first
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {type_word(c)} and {type_word(y)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {type_word(x)} and {type_word(y)}")
    target = (x.shape[0], y.shape[1])
    _inplace_check(inplace, target)         # addmm_ checks its own shape before the input's expansion
    b = _expanded_input(c, target)
    if x.dtype.kind == "b":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:
        out = np.add(b, np.matmul(x, y))        # a meta operand: a shape and a dtype, nothing to sum
    else:
        budget.check_tensor(target, x.itemsize)
        if beta.__class__ is int and alpha.__class__ is int and beta == 1 == alpha and x.dtype.kind == "f" \
                and x.dtype is not _F16:
            out = _addmm_one(b, x, y)           # F.linear's call, and the usual one
        else:
            out = addmm_array(b, x, y, _coefficient(beta, x.dtype), _coefficient(alpha, x.dtype))
    return apply(ADDMM, out, (input, mat1, mat2), (_column_major(x), _column_major(y), beta, alpha), (c, x, y))


# ------------------------------------------------------------------------------------------ addmv

def _addmv(input, mat, vec, rest: tuple, beta, alpha, inplace) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    _no_more("addmv", rest)
    c, x, v, beta, alpha = _operands("addmv", input, mat, vec, beta, alpha)
    if x.ndim != 2 or v.ndim != 1 or c.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {c.ndim}, {x.ndim}, {v.ndim}")
    if x.shape[1] != v.shape[0] or not (c.size == x.shape[0] or c.size == 1):
        raise RuntimeError(f"size mismatch, got input ({c.shape[0] if c.ndim else 1}), mat "
                           f"({x.shape[0]}x{x.shape[1]}), vec ({v.shape[0]})")
    if not (c.dtype == x.dtype == v.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {type_word(c)}, "
                           f"{type_word(x)}, and {type_word(v)}")
    target = (x.shape[0],)
    _inplace_check(inplace, target)
    if x.dtype.kind == "b" and x.size and v.size:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    beta_, alpha_ = _coefficient(beta, x.dtype), _coefficient(alpha, x.dtype)
    b = np.broadcast_to(c, target)
    if x.dtype.char in "eE":
        return apply(ADDMV, linalg.half_product(x, v[:, None], alpha_, b[:, None], beta_)[:, 0], (input, mat, vec),
                     (beta, alpha), (c, x, v))
    product = linalg.matvec(x, v)
    if x.dtype.kind in "iub":
        out = (b * beta_ + product * alpha_).astype(x.dtype, copy=False)
    else:
        scaled = product if alpha_ == 1 else (product * alpha_).astype(x.dtype, copy=False)
        out = scaled + _beta_input(b, beta_)
    return apply(ADDMV, out, (input, mat, vec), (beta, alpha), (c, x, v))


# ------------------------------------------------------------------------------------------ addr

def _addr_coefficient(value, dtype: np.dtype, name: str):
    """addr's own checks of beta and alpha against the result's dtype, then the kernel's reading."""
    if value.__class__ is bool and dtype.kind != "b":
        raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    if value.__class__ is float and dtype.kind in "iub":
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    return _coefficient(value, dtype)


def _addr(input, vec1, vec2, rest: tuple, beta, alpha, inplace) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2), PyTorch's own elementwise kernel."""
    _no_more("addr", rest)
    c, u, v, beta, alpha = _operands("addr", input, vec1, vec2, beta, alpha)
    if inplace is not None and len(inplace) != 2:
        raise RuntimeError(f"2D tensor expected, got {len(inplace)}D tensor for input")
    if u.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {u.ndim}-D")
    if v.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {v.ndim}-D")
    target = (u.shape[0], v.shape[0])
    if inplace is not None and tuple(inplace) != target:     # addr_ (addr_out's own check, before expanding)
        raise RuntimeError(f"size mismatch, input: {list(inplace)}, v1: {list(u.shape)}, v2: {list(v.shape)}")
    b = _expanded_input(c, target)
    dtype = result_dtype(input, vec1, vec2).np
    beta_ = _addr_coefficient(beta, dtype, "beta")
    alpha_ = _addr_coefficient(alpha, dtype, "alpha")
    budget.check_tensor(target, dtype.itemsize)
    m, n = target
    # the axis TensorIterator's inner loop runs along (the columns; down the one column of an outer product
    # with a single column), vectorised when the added input lies contiguously along it: else the input is
    # strided, or it and vec1 (or vec2) are both single values along that loop, and every element goes
    # through the scalar code
    if n > 1:
        axis = 1 if c.ndim >= 1 and c.shape[-1] == n and c.strides[-1] == c.itemsize else None
    else:
        axis = 0 if c.ndim == 2 and c.shape[0] == m and m > 1 and c.strides[0] == c.itemsize else None
    out = _addr_array(b.astype(dtype, copy=False), u.astype(dtype, copy=False), v.astype(dtype, copy=False),
                      beta_, alpha_, axis)
    return apply(ADDR, out, (input, vec1, vec2), (beta, alpha), (c, u, v))


def _addr_array(c: np.ndarray, u: np.ndarray, v: np.ndarray, beta, alpha, axis) -> np.ndarray:
    """addr's kernel: bools as logic, integers exact; floats as its vector body and scalar tail round them
    (see the module's text), the vector body running along `axis` (None: the scalar code throughout)."""
    if c.dtype.kind == "b":
        product = np.logical_and(alpha, np.logical_and.outer(u, v))
        return product if not beta else np.logical_or(np.logical_and(beta, c), product)
    scaled_u = (u * alpha).astype(u.dtype, copy=False)
    product = np.multiply.outer(scaled_u, v)
    if beta == 0:
        return product
    if c.dtype.kind in "iu":
        return (c * beta + product).astype(c.dtype, copy=False)
    if c.dtype.char in "eE":
        return (c.astype(np.float32) * np.float32(beta) + product.astype(np.float32)).astype(c.dtype)
    out = fma(np.asanyarray(beta, c.dtype), c, product)        # the scalar code: beta * input fused
    if axis is None:
        return out
    length = out.shape[axis]
    body = length - length % (64 // c.itemsize)         # two 32-byte vectors at a time, then the tail
    if body:
        cut = (slice(None), slice(0, body)) if axis == 1 else (slice(0, body), slice(None))
        bc = (c[cut] * beta).astype(c.dtype, copy=False)
        out[cut] = fma(scaled_u[cut[0], None], v[None, cut[1]], bc)      # the vector body: the product fused
    return out


# ------------------------------------------------------------------------------------------ baddbmm, addbmm

def _baddbmm(input, batch1, batch2, out_dtype: tuple, beta, alpha, inplace) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2), matrix by matrix."""
    c, x, y, beta, alpha = _operands("baddbmm", input, batch1, batch2, beta, alpha)
    _out_dtype("baddbmm", out_dtype)
    # PyTorch sizes the result from batch1's first two dims and batch2's third before any other check
    target = (_size(x, 0), _size(x, 1), _size(y, 2))
    b = _expanded_input(c, target)
    linalg.check_batches(x, y)
    if not (c.dtype == x.dtype):
        raise RuntimeError(f"Input dtypes must be the same, got: input {linalg.cxx_type(c.dtype)}, batch1: "
                           f"{linalg.cxx_type(x.dtype)}, batch2: {linalg.cxx_type(y.dtype)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected scalar type {type_word(x)} but found {type_word(y)}")
    _inplace_check(inplace, target)
    if x.dtype.kind == "b":
        raise NotImplementedError("\"baddbmm\" not implemented for 'Bool'")
    beta_, alpha_ = _coefficient(beta, x.dtype), _coefficient(alpha, x.dtype)
    budget.check_tensor(target, x.itemsize)
    out = _baddbmm_array(b, x, y, beta_, alpha_)
    return apply(BADDBMM, out, (input, batch1, batch2), (beta, alpha), (c, x, y))


def _baddbmm_array(c: np.ndarray, x: np.ndarray, y: np.ndarray, beta, alpha) -> np.ndarray:
    batches, m, k = x.shape
    n = y.shape[2]
    if batches == 0:
        return np.zeros((0, m, n), x.dtype)
    if x.dtype.char in "eE":
        return linalg.half_product(x, y, alpha, c, beta)
    if x.dtype.kind in "iu" or k * m * n >= 400:     # MKL's gemm matrix by matrix above PyTorch's own loop
        return np.stack([addmm_array(c[i], x[i], y[i], beta, alpha) for i in range(batches)])
    product = linalg.matprod(x, y)      # bmm's own loop: sums from zero, in order
    if alpha != 1:
        product = (product * alpha).astype(x.dtype, copy=False)
    if beta == 0:
        return product
    return (c * beta).astype(x.dtype, copy=False) + product


def _addbmm(input, batch1, batch2, rest: tuple, beta, alpha, inplace) -> Tensor:
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i], as PyTorch runs it: addmm_ once per
    matrix, beta on the first."""
    _no_more("addbmm", rest)
    c, x, y, beta, alpha = _operands("addbmm", input, batch1, batch2, beta, alpha)
    # PyTorch expands the input to batch1's second dim and batch2's third before any other check
    target = (_size(x, 1), _size(y, 2))
    b = _expanded_input(c, target)
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {x.shape[0]} and "
                           f"{y.shape[0]}")
    if x.shape[2] != y.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({x.shape[1]}x{x.shape[2]} and "
                           f"{y.shape[1]}x{y.shape[2]})")
    _inplace_check(inplace, target)
    if c.dtype != y.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {type_word(c)} and {type_word(y)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {type_word(x)} and {type_word(y)}")
    if x.dtype.kind == "b":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    beta_, alpha_ = _coefficient(beta, x.dtype), _coefficient(alpha, x.dtype)
    budget.check_tensor(target, x.itemsize)
    if x.shape[0] == 0:
        out = _beta_input(np.ascontiguousarray(b), beta_) if x.dtype.kind in "fV" else b * beta_
    else:
        out = addmm_array(b, x[0], y[0], beta_, alpha_)
        for i in range(1, x.shape[0]):
            out = addmm_array(out, x[i], y[i], 1, alpha_)
    return apply(ADDBMM, out.astype(x.dtype, copy=False), (input, batch1, batch2), (beta, alpha), (c, x, y))


# ------------------------------------------------------------------------------------------ the calls

_KERNELS = {"addmm": _addmm, "addmv": _addmv, "addr": _addr, "baddbmm": _baddbmm, "addbmm": _addbmm}
_PARAMETERS = {"addmm": ("mat1", "mat2"), "addmv": ("mat", "vec"), "addr": ("vec1", "vec2"),
               "baddbmm": ("batch1", "batch2"), "addbmm": ("batch1", "batch2")}
_NUMBERS = (int, float, bool)


def _deprecated_form(key: str, args: tuple, beta, alpha) -> dict:
    """A call in one of PyTorch's deprecated overloads, beta (then alpha) first by position: its values by
    parameter name, after PyTorch's warning, which it gives once per process."""
    from gradcli.engine import signatures
    from gradcli.engine.state import STATE
    kwargs = {k: v for k, v in (("beta", beta), ("alpha", alpha)) if not (v == 1 and v.__class__ is int)}
    index, values = signatures.bound(key, args, kwargs)
    if signatures.SIGNATURES[key][index].startswith("hidden:"):
        STATE.warn_once("deprecated overload", "UserWarning", signatures.deprecation(key, index))
    if values.get("alpha") is None:
        values["alpha"] = 1
    return values


def _function(name: str, input, first, second, rest: tuple, beta, alpha) -> Tensor:
    """torch.addmm and its kin: (input, first, second, *, beta=1, alpha=1), or a deprecated overload (a number
    first)."""
    if input.__class__ in _NUMBERS:
        names = _PARAMETERS[name]
        v = _deprecated_form(f"torch.{name}", (input, first, second) + rest, beta, alpha)
        return _KERNELS[name](v["input"], v[names[0]], v[names[1]], (), v["beta"], v["alpha"], None)
    return _KERNELS[name](input, first, second, rest, beta, alpha, None)


@autocast_policy("lower_precision_fp")
def addmm(input, mat1, mat2, *_out_dtype, beta=1, alpha=1) -> Tensor:
    return _function("addmm", input, mat1, mat2, _out_dtype, beta, alpha)


def addmv(input, mat, vec, *_deprecated, beta=1, alpha=1) -> Tensor:
    return _function("addmv", input, mat, vec, _deprecated, beta, alpha)


def addr(input, vec1, vec2, *_deprecated, beta=1, alpha=1) -> Tensor:
    return _function("addr", input, vec1, vec2, _deprecated, beta, alpha)


@autocast_policy("lower_precision_fp")
def baddbmm(input, batch1, batch2, *_out_dtype, beta=1, alpha=1) -> Tensor:
    return _function("baddbmm", input, batch1, batch2, _out_dtype, beta, alpha)


@autocast_policy("lower_precision_fp")
def addbmm(input, batch1, batch2, *_deprecated, beta=1, alpha=1) -> Tensor:
    return _function("addbmm", input, batch1, batch2, _deprecated, beta, alpha)


def method(name: str, self: Tensor, args: tuple, beta, alpha, inplace: bool) -> Tensor:
    """Tensor.addmm(mat1, mat2) and its kin, or a deprecated overload; in place (addmm_) the product must have
    this tensor's shape."""
    first, second = _PARAMETERS[name]
    if args and args[0].__class__ in _NUMBERS:
        v = _deprecated_form(f"Tensor.{name}{'_' if inplace else ''}", args, beta, alpha)
        args, beta, alpha = (v[first], v[second]), v["beta"], v["alpha"]
    if len(args) != 2:
        raise TypeError(f"{name}() takes 2 positional arguments but {len(args)} were given")
    kernel = _KERNELS[name]
    a, b = args
    if inplace:
        return self._inplace_with(lambda t: kernel(t, a, b, (), beta, alpha, t._a.shape), a, b)
    return kernel(self, a, b, (), beta, alpha, None)



def bias_addmm(bias: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    """bias + mat1 @ mat2: F.linear's addmm (its operands known to be tensors), with addmm's
    checks in its order and nothing else on a training loop's hottest path."""
    c, x, y = bias._a, mat1._a, mat2._a
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0] or c.dtype != y.dtype or x.dtype != y.dtype \
            or x.dtype is _F16 or x.dtype.kind == "V":
        return _addmm(bias, mat1, mat2, (), 1, 1, None)         # (its errors, and float16's arithmetic)
    target = (x.shape[0], y.shape[1])
    if c.shape != target and not (c.ndim == 1 and c.shape[0] == target[1]):
        shape.expanded(c, target)           # (its checks only: the sums broadcast the bias themselves)
    return apply(ADDMM, _addmm_one(c, x, y), (bias, mat1, mat2), (_column_major(x), _column_major(y), 1, 1),
                 (c, x, y))
