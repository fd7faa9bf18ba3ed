"""The vocabulary backward formulas are written in, twice: on numpy arrays, and on Tensors for create_graph.

A formula `lambda F, g, self, other: g * other` runs on numpy arrays in an ordinary backward pass
(fast, nothing recorded) and on Tensors when `create_graph=True`, where every step is itself a
recorded op, so the gradient can be differentiated again. Operators (+ - * / ** @, unary -,
comparisons) work on both; everything else a formula needs is a method of these two classes.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import autograd, dtypes, elementary, ops
from gradcli.engine.ops import arith, elementwise, indexing, padding, reduce, shape
from gradcli.engine.cascade import sum_array
from gradcli.engine.layout import laid_out
from gradcli.engine.recording import Out, number_operand, wrap_dim
from gradcli.engine.autograd import SlimSaved
from gradcli.engine.slim import restore

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_half_with_number = arith.half_with_number
from gradcli.engine.tensor import Tensor


def _fits_in_place(shape: tuple, other: tuple) -> None:
    """An in-place op's check that `other` broadcasts to the output's own shape, with PyTorch's message."""
    full = np.broadcast_shapes(shape, other)
    if full != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(full)}")


class _Later:
    """Formulas taken from the op groups that are imported on first use (gradcli.engine.ops): the group is
    imported at the formula's first use, and the function then kept on the class, so later calls find it
    as an ordinary attribute."""

    _LATER: dict = {}       # formula name -> (op group, its function)

    def __getattr__(self, name: str):
        try:
            group, attr = self._LATER[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None
        function = getattr(getattr(ops, group), attr)
        setattr(type(self), name, staticmethod(function))
        return function


class NumpyMath(_Later):
    """Formulas on numpy arrays: a plain backward pass."""

    def __init__(self):
        self.tensors = False        # an instance attribute: formulas read it often, and an instance's is quicker

    @staticmethod
    def mul_wrapped(g, value):
        dt = g.dtype      # float16 and bfloat16: PyTorch's kernel reads the number as a float (half_with_number)
        if dt is not _F32 and dt is not _F64 and dt.char in "eE":
            return _half_with_number(np.multiply, g, value)
        return g * number_operand(g, value)

    @staticmethod
    def div_wrapped(g, value):
        dt = g.dtype
        if dt is not _F32 and dt is not _F64 and dt.char in "eE":
            return _half_with_number(np.true_divide, g, value)
        return g / number_operand(g, value)

    # x * or / a constant as a formula's C++ multiplies a tensor by a double (MulBackward1, log2's ln 2, ...):
    # the same arithmetic as a wrapped number's
    times = mul_wrapped
    over = div_wrapped

    @staticmethod
    def unpack(saved: tuple, node) -> tuple:
        # a tuple of numbers (a product by a Python number saves no tensor) is used as it is
        for s in saved:
            if s.__class__ is Tensor or s.__class__ is Out:
                return tuple([s._a if s.__class__ is Tensor else (s.a if s.__class__ is Out else s) for s in saved])
        return saved

    zeros_like = staticmethod(np.zeros_like)

    @staticmethod
    def scalar(value, like):
        """at::full({}, value, like.options()): a 0-d value of like's dtype."""
        return like.dtype.type(value)

    @staticmethod
    def zero_of(g):
        """A 0-d zero of g's dtype (PyTorch's at::zeros({}, grad.options()))."""
        return np.zeros((), g.dtype)

    expand = staticmethod(np.broadcast_to)
    unsqueeze_dims = staticmethod(np.expand_dims)
    squeeze = staticmethod(np.squeeze)
    log = staticmethod(elementary.log)
    sum_to = staticmethod(autograd.sum_to)

    @staticmethod
    def log_scalar(base, like):
        if like.dtype.char in "eE":     # a double, which the formula's product reads as a float (times)
            return math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)
        return elementary.log(like.dtype.type(base))

    @staticmethod
    def masked_zero(x, mask):
        """x.masked_fill(mask, 0): in place in PyTorch's formulas, so the result keeps x's layout."""
        out = np.where(mask, x.dtype.type(0), x)
        return out if x.flags.c_contiguous or out.shape != x.shape else laid_out(out, x)

    @staticmethod
    def where(condition, x, y):
        """at::where: the result laid out after its operands' strides, as TensorIterator lays it out."""
        return laid_out(np.where(condition, x, y), condition, x, y)

    @staticmethod
    def logical_and_(a, b):
        """a.logical_and_(b), as PyTorch's formulas combine masks: in place, so the result keeps a's layout
        (and a mask that would have to grow is PyTorch's error: clamp's self smaller than its bounds)."""
        if a.__class__ is not np.ndarray:
            return a & b
        _fits_in_place(a.shape, np.shape(b))
        return np.logical_and(a, b, out=a)

    @staticmethod
    def logical_or_(a, b):
        """a.logical_or_(b): as logical_and_."""
        if a.__class__ is not np.ndarray:
            return a | b
        _fits_in_place(a.shape, np.shape(b))
        return np.logical_or(a, b, out=a)

    @staticmethod
    def mul(a, b):
        """a * b laid out as TensorIterator lays it out (numpy's temporary elision would write `g * (x - y)`
        into the temporary's layout, and numpy's C order wins where operands disagree)."""
        return laid_out(np.multiply(a, b), a, b)

    @staticmethod
    def mm(a, b):
        """A gradient's matrix product (linear layers' weight and input gradients). Where PyTorch's float32
        product is known to sum in order from zero (linalg.mkl_order's "seq": matrix-vector shapes, one to three
        inner indices), as the forward's mm sums it; elsewhere numpy's product (MKL's kernel order there is
        not followed, and the in-order sums cost one numpy call per inner index)."""
        if a.dtype == _F32 and b.dtype == _F32 and a.ndim == b.ndim == 2 and (
                a.shape[0] <= 3 or b.shape[1] <= 8 or a.shape[1] <= 4):     # where "seq" can be the answer
            from gradcli.engine.ops import linalg
            if linalg.mkl_order(a, b) in ("seq", "lanes4", "columns"):
                return linalg.matprod(a, b)
        if a.dtype.kind == "V":         # bfloat16: in float, rounded (numpy's product would leave float32)
            from gradcli.engine.ops import linalg
            return linalg.matprod(a, b)
        return a @ b

    @staticmethod
    def t(a):
        return a.T

    @staticmethod
    def reshape(g, shape):
        return g.reshape(shape)

    @staticmethod
    def sum(g):
        return sum_array(g)

    @staticmethod
    def cast(g, dtype):
        return g.astype(dtype)

    @staticmethod
    def scatter(g, shape, key, kind):
        if g.__class__ is not np.ndarray and isinstance(g, np.ndarray):     # meta: the shape alone
            return np.zeros_like(g, shape=shape)
        out = np.zeros(shape, dtype=g.dtype)
        out[key] = g
        return out

    @staticmethod
    def index_add(g, shape, key):
        if g.__class__ is not np.ndarray and isinstance(g, np.ndarray):     # meta: the shape alone
            return np.zeros_like(g, shape=shape)
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out, key, g)
        return out

    @staticmethod
    def scatter_selected(g, shape, key, dim):
        """zeros(shape).scatter(dim, index, g): a selecting op's gradient at the indices it picked (distinct)."""
        return NumpyMath.scatter(g, shape, key, None)

    @staticmethod
    def index_select(g, dim, index):
        idx = index._a if index.__class__ is Tensor else index
        return g.copy() if g.ndim == 0 else np.take(g, idx.reshape(-1), axis=dim)

    @staticmethod
    def zero_at(g, key):
        g = g.copy()
        g[key] = 0
        return g

    @staticmethod
    def getitem(g, key):
        return g[key]

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def ones(shape, dtype):
        return np.ones(shape, dtype=dtype)

    # numpy group: softmax (see nn.py)
    @staticmethod
    def softmax_backward(g, result, dims):
        return ops.nn.softmax_backward_value(NUMPY, g, result, dims)

    @staticmethod
    def log_softmax_backward(g, result, dims):
        return ops.nn.log_softmax_backward_value(NUMPY, g, result, dims)

    # numpy group: views (in-place ops on views, see views.py)
    @staticmethod
    def take(g, positions):
        return g.reshape(-1)[positions]

    @staticmethod
    def put(g, positions, values):
        out = np.array(g, copy=True)
        out.reshape(-1)[positions] = values
        return out

    @staticmethod
    def spread(g, positions, shape_):
        out = np.zeros(int(np.prod(shape_)), dtype=g.dtype)
        np.add.at(out, positions, g)
        return out.reshape(shape_)

    # numpy group: elementwise
    sgn = staticmethod(elementwise.sign_array)
    sigmoid = staticmethod(elementwise.sigmoid_array)
    tanh_backward = staticmethod(elementwise.tanh_backward_array)
    sigmoid_backward = staticmethod(elementwise.sigmoid_backward_array)
    threshold_backward = staticmethod(elementwise.threshold_backward_array)
    softplus_backward = staticmethod(elementwise.softplus_backward_array)
    gelu_backward = staticmethod(elementwise.gelu_backward_array)
    leaky_relu_backward = staticmethod(elementwise.leaky_relu_backward_array)
    elu_backward = staticmethod(elementwise.elu_backward_array)
    hardtanh_backward = staticmethod(elementwise.hardtanh_backward_array)
    hardsigmoid_backward = staticmethod(elementwise.hardsigmoid_backward_array)
    hardswish_backward = staticmethod(elementwise.hardswish_backward_array)
    silu_backward = staticmethod(elementwise.silu_backward_array)
    log_sigmoid_backward = staticmethod(elementwise.log_sigmoid_backward_array)
    sin = staticmethod(elementary.sin)
    cos = staticmethod(elementary.cos)
    sinh = staticmethod(elementary.sinh)
    cosh = staticmethod(elementary.cosh)
    tanh = staticmethod(elementary.tanh)
    exp = staticmethod(elementary.exp)
    erf = staticmethod(elementary.erf)
    reciprocal = staticmethod(np.reciprocal)
    floor_divide = staticmethod(elementwise.div_floor_array)
    trunc_divide = staticmethod(elementwise._div_trunc_array)

    rsqrt = staticmethod(elementary.rsqrt)
    isfinite = staticmethod(np.isfinite)

    @staticmethod
    def pow(x, e):
        """x ** e; a number base (2 ** d in logaddexp2's formula) to an array exponent rounded once."""
        if not isinstance(x, (np.ndarray, np.generic)):
            e = np.asanyarray(e)
            return elementary.pow(e.dtype.type(x), e)
        return arith.scalar_power(x, e) if not isinstance(e, np.ndarray) else elementary.pow(x, e)

    @staticmethod
    def xlogy(g, other):
        """at::xlogy(grad, other): a number `other` read in grad's type."""
        return elementwise.xlogy_array(g, np.asanyarray(other, g.dtype))

    @staticmethod
    def xlog1py(g, other):
        return elementwise.xlog1py_array(g, np.asanyarray(other, g.dtype))

    # numpy group: reduce
    abs = staticmethod(np.abs)
    exp_rounded = staticmethod(elementary.exp)         # (every exp is rounded once now: the same as exp)
    cumsum = staticmethod(reduce.cumsum_array)
    cumprod = staticmethod(reduce.cumprod_array)
    mean = staticmethod(reduce.mean_array)

    @staticmethod
    def const(a):
        """A constant of the formula (a mask, a count): the array itself here."""
        return a

    @staticmethod
    def sum_dims(x, dims, keepdim=False):
        return sum_array(x, (dims,) if isinstance(dims, int) else tuple(dims), keepdim)

    @staticmethod
    def narrow(x, dim, start, length):
        return x[(slice(None),) * dim + (slice(start, start + length),)]

    @staticmethod
    def clamp_min(x, v):
        return np.maximum(x, x.dtype.type(v))

    @staticmethod
    def log_sigmoid(x):
        return np.minimum(x, x.dtype.type(0)) - elementary.log1p(elementary.exp(-np.abs(x)))

    # numpy group: shape
    permute = staticmethod(np.transpose)
    tril = staticmethod(np.tril)
    triu = staticmethod(np.triu)
    diagonal = staticmethod(np.diagonal)
    outer = staticmethod(np.multiply.outer)
    # diagonal_scatter, det_backward, solve, matmul, bmm, mv: _LATER

    @staticmethod
    def transpose(x, dim0, dim1):
        return np.swapaxes(x, dim0, dim1) if x.ndim else x

    @staticmethod
    def mT(x):
        return np.swapaxes(x, -1, -2)

    @staticmethod
    def flip_dims(x, dims):
        return np.flip(x, dims)

    @staticmethod
    def roll(x, shifts, dims):
        """np.roll; `dims` None rolls the flattened tensor, as PyTorch's roll without dims."""
        if dims is None:
            return np.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
        return np.roll(x, shifts, dims)

    @staticmethod
    def zeros(shape, like):
        return np.zeros(shape, dtype=like.dtype)

    # numpy group: conv
    @staticmethod
    def convolution(x, w, p):
        return ops.conv.forward_array(x, w, *p)

    @staticmethod
    def conv_backward(g, x, w, p, which):
        return ops.conv.backward_array(g, x, w, p, which)

    @staticmethod
    def pad_mode(x, pad, mode):
        return padding.gather_array(x, pad, mode)

    pad_backward = staticmethod(padding.scatter_array)

    # numpy group: creation


class TensorMath(_Later):
    """Formulas on Tensors, each step recorded: create_graph=True."""

    def __init__(self):
        self.tensors = True
    mul_wrapped = staticmethod(arith.mul_wrapped)
    div_wrapped = staticmethod(arith.div_wrapped)

    @staticmethod
    def times(x, value):
        return x * value            # (MulBackward1 in a formula, with float16's float product: arith.mul)

    @staticmethod
    def over(x, value):
        return x / value            # (DivBackward1 in a formula: arith.div)

    @staticmethod
    def unpack(saved: tuple, node) -> list:
        if saved.__class__ is SlimSaved:     # inputs kept as arrays: the graph needs their tensors again
            saved = restore(node)
        out = []
        for s in saved:
            if s.__class__ is Out:
                # the node's own result, as a tensor whose grad_fn is the node (made afresh, never stored,
                # so no cycle between the node and its output)
                t = Tensor(s.a)
                t.grad_fn = node
                t.requires_grad = True
                if s.fw is not None:
                    t._fw = dict(s.fw)
                out.append(t)
            else:
                out.append(s)
        return out

    @staticmethod
    def scalar(value, like):
        return Tensor(np.full((), value, like._a.dtype))

    @staticmethod
    def zeros_like(g):
        return Tensor(np.zeros_like(g._a))

    @staticmethod
    def zero_of(g):
        return Tensor(np.zeros((), g._a.dtype))

    @staticmethod
    def logical_and_(a, b):
        _fits_in_place(a._a.shape, b._a.shape)
        return a & b

    @staticmethod
    def logical_or_(a, b):
        _fits_in_place(a._a.shape, b._a.shape)
        return a | b

    @staticmethod
    def mul(a, b):
        return a * b

    @staticmethod
    def expand(g, shape_):
        return shape.expand(g, tuple(shape_))

    @staticmethod
    def unsqueeze_dims(g, dims):
        for d in sorted(dims):
            g = shape.unsqueeze(g, d)
        return g

    @staticmethod
    def squeeze(g, dim):
        return shape.squeeze(g, dim)

    log = staticmethod(elementwise.log)

    @staticmethod
    def pow(x, e):
        return arith.power(x, e)

    @staticmethod
    def log_scalar(base, like):
        return math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)

    @staticmethod
    def masked_zero(x, mask):
        return elementwise.masked_fill(x, mask, 0)

    t = staticmethod(shape.t)

    @staticmethod
    def reshape(g, shape_):
        return shape.view(g, shape_) if g._a.flags.c_contiguous else shape.view(arith.contiguous_clone(g), shape_)

    @staticmethod
    def sum(g):
        return reduce.reduce_sum(g)

    @staticmethod
    def sum_to(g, shape_):
        """Sum a broadcast gradient back to `shape_`, as PyTorch's sum_to does: sum over the broadcast
        dims keeping them, then view away the leading ones."""
        gs = g._a.shape
        if gs == tuple(shape_):
            return g
        if not shape_:                      # to a 0-d tensor: one sum of everything (SumBackward0)
            return reduce.reduce_sum(g)
        lead = len(gs) - len(shape_)
        dims = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape_) if n == 1 and gs[i + lead] != 1)
        if dims:
            g = reduce.reduce_sum(g, dims, keepdim=True)
        if lead:
            g = shape.view(g, tuple(shape_))
        return g

    @staticmethod
    def cast(g, dtype):
        return arith.to_dtype(g, dtypes.by_name(np.dtype(dtype).name))

    scatter = staticmethod(indexing.scatter)
    index_add = staticmethod(indexing.index_add)
    scatter_selected = staticmethod(reduce.scatter_selected)
    gather = staticmethod(shape.gather)
    index_select = staticmethod(shape.index_select)

    @staticmethod
    def zero_at(g, key):
        c = arith.clone(g)
        indexing.setitem(c, key, 0)
        return c

    getitem = staticmethod(indexing.getitem)

    @staticmethod
    def add(a, b):
        return ops.add(a, b)

    @staticmethod
    def ones(shape_, dtype):
        return Tensor(np.ones(shape_, dtype=dtype))

    # tensor group: softmax (see nn.py)
    @staticmethod
    def softmax_backward(g, result, dims):
        return ops.nn.softmax_backward_data(g, result, dims, log=False)

    @staticmethod
    def log_softmax_backward(g, result, dims):
        return ops.nn.softmax_backward_data(g, result, dims, log=True)

    # tensor group: views (in-place ops on views, see views.py)
    @staticmethod
    def take(g, positions):
        flat = shape.view(g, (-1,)) if g._a.flags.c_contiguous else shape.view(arith.contiguous_clone(g), (-1,))
        return indexing.getitem(flat, Tensor(positions))

    @staticmethod
    def put(g, positions, values):
        keep = np.ones(g._a.size, dtype=g._a.dtype)
        keep[positions.reshape(-1)] = 0
        return g * Tensor(keep.reshape(g._a.shape)) + TensorMath.spread(values, positions, g._a.shape)

    @staticmethod
    def spread(g, positions, shape_):
        flat = indexing.index_add(g, (int(np.prod(shape_)),), (positions,))
        return shape.view(flat, tuple(shape_))

    # tensor group: elementwise
    sgn = staticmethod(elementwise.sgn)
    sigmoid = staticmethod(elementwise.sigmoid)
    tanh_backward = staticmethod(elementwise.tanh_backward)
    sigmoid_backward = staticmethod(elementwise.sigmoid_backward)
    threshold_backward = staticmethod(elementwise.threshold_backward)
    softplus_backward = staticmethod(elementwise.softplus_backward)
    gelu_backward = staticmethod(elementwise.gelu_backward)
    leaky_relu_backward = staticmethod(elementwise.leaky_relu_backward)
    elu_backward = staticmethod(elementwise.elu_backward)
    hardtanh_backward = staticmethod(elementwise.hardtanh_backward)
    hardsigmoid_backward = staticmethod(elementwise.hardsigmoid_backward)
    hardswish_backward = staticmethod(elementwise.hardswish_backward)
    silu_backward = staticmethod(elementwise.silu_backward)
    log_sigmoid_backward = staticmethod(elementwise.log_sigmoid_backward)
    sin = staticmethod(elementwise.sin)
    cos = staticmethod(elementwise.cos)
    sinh = staticmethod(elementwise.sinh)
    cosh = staticmethod(elementwise.cosh)
    tanh = staticmethod(elementwise.tanh)
    exp = staticmethod(arith.exp)
    erf = staticmethod(elementwise.erf)
    reciprocal = staticmethod(arith.reciprocal)
    where = staticmethod(elementwise.where)
    rsqrt = staticmethod(elementwise.rsqrt)
    isfinite = staticmethod(elementwise.isfinite)
    xlogy = staticmethod(elementwise.xlogy)
    xlog1py = staticmethod(elementwise.xlog1py)

    @staticmethod
    def floor_divide(a, b):
        """`a.div(b, rounding_mode="floor")`, recorded as PyTorch's formula records it (DivBackward2, whose
        derivative is zero)."""
        return elementwise.div_rounding(a, b, "floor")

    @staticmethod
    def trunc_divide(a, b):
        """`a.div(b, rounding_mode="trunc")` (fmod's formula), recorded as DivBackward2."""
        return elementwise.div_rounding(a, b, "trunc")

    # tensor group: reduce
    abs = staticmethod(elementwise.abs)
    exp_rounded = staticmethod(arith.exp)
    clamp_min = staticmethod(elementwise.clamp_min)
    log_sigmoid = staticmethod(elementwise.logsigmoid)

    @staticmethod
    def cumsum(x, dim):
        return reduce.cumsum(x, dim)

    @staticmethod
    def cumprod(x, dim):
        return reduce.cumprod(x, dim)

    @staticmethod
    def mean(x, dims=None, keepdim=False):
        return reduce.mean(x) if dims is None else reduce.mean(x, dims, keepdim)

    @staticmethod
    def const(a):
        """A constant of the formula (a mask, a count): a tensor outside the graph."""
        return Tensor(a)

    @staticmethod
    def sum_dims(x, dims, keepdim=False):
        return reduce.reduce_sum(x, dims, keepdim)

    @staticmethod
    def narrow(x, dim, start, length):
        return indexing.getitem(x, (slice(None),) * dim + (slice(start, start + length),))

    # tensor group: shape
    transpose = staticmethod(shape.transpose)
    permute = staticmethod(shape.permute)
    flip_dims = staticmethod(shape.flip)
    roll = staticmethod(shape.roll)
    tril = staticmethod(shape.tril)
    triu = staticmethod(shape.triu)
    # mm, diagonal, diagonal_scatter, det_backward, solve, matmul, bmm, mv, outer: _LATER

    @staticmethod
    def mT(x):
        return shape.transpose(x, -2, -1)

    @staticmethod
    def zeros(shape_, like):
        return Tensor(np.zeros(shape_, dtype=like._a.dtype))

    # tensor group: conv (convolution, conv_backward: _LATER)
    pad_mode = staticmethod(padding.pad_mode)
    pad_backward = staticmethod(padding.pad_backward)

    # tensor group: creation


NumpyMath.unfold_backward = staticmethod(shape.unfold_backward_array)
NumpyMath.unfold = staticmethod(lambda g, dimension, size, step: np.ascontiguousarray(
    shape.unfold_array(g, wrap_dim(dimension, g.ndim), size, step)))
TensorMath.unfold_backward = staticmethod(shape.unfold_backward)
TensorMath.unfold = staticmethod(shape.unfold)
NumpyMath.cross = staticmethod(lambda a, b, dim: _cross_numpy(a, b, dim))
NumpyMath.cat = staticmethod(lambda parts, dim: np.concatenate(parts, dim))
TensorMath.cat = staticmethod(lambda parts, dim: shape.cat(list(parts), dim))
NumpyMath._LATER = {"rot90": ("arrange", "rot90_array"),
                    "masked_select_backward": ("arrange", "masked_select_backward_array"),
                    "im2col": ("fold", "im2col_array"), "col2im": ("fold", "col2im_array"),
                    "cummaxmin_backward": ("order", "cummaxmin_backward_array"),
                    "logcumsumexp_backward": ("order", "logcumsumexp_backward_array"), "pixel_shuffle": ("arrange", "pixel_shuffle_array"),
                    "pixel_unshuffle": ("arrange", "pixel_unshuffle_array"), "gather": ("scatter", "gather_array"),
                    "scatter_zero": ("scatter", "scatter_zero_array"),
                    "diagonal_scatter": ("linalg", "diagonal_scatter_array"), "det_backward": ("linalg", "det_backward_array"),
                    "solve": ("linalg", "solve_array"), "lu_solve": ("lu", "_lu_solve_numpy"),
                    "cholesky_solve": ("lu", "cholesky_solve_array"), "ormqr": ("householder", "ormqr_array"),
                    "solve_triangular": ("linalg", "solve_triangular_array"), "matmul": ("linalg", "matprod"), "bmm": ("linalg", "matprod"),
                    "mv": ("linalg", "matvec"), "digamma": ("special", "digamma_array"),
                    "polygamma": ("special", "polygamma_array"), "erfinv": ("special", "erfinv_array"),
                    "i0": ("special", "i0_array"), "i0e": ("special", "i0e_array"), "i1": ("special", "i1_array"),
                    "i1e": ("special", "i1e_array"), "mvlgamma_offsets": ("special", "mvlgamma_offsets"),
                    "zeta": ("special", "zeta_numpy"), "lgamma": ("special", "lgamma_array")}
NumpyMath.standard_gamma_grad = staticmethod(lambda self, result: _distributions().standard_gamma_grad_array(self, result))
TensorMath._LATER = {"rot90": ("arrange", "rot90"), "cross": ("linalg", "_cross_recorded"),
                     "masked_select_backward": ("arrange", "masked_select_backward"),
                     "im2col": ("fold", "im2col"), "col2im": ("fold", "col2im"),
                     "cummaxmin_backward": ("order", "cummaxmin_backward"),
                     "logcumsumexp_backward": ("order", "logcumsumexp_backward"), "pixel_shuffle": ("arrange", "pixel_shuffle"),
                     "pixel_unshuffle": ("arrange", "pixel_unshuffle"), "scatter_zero": ("scatter", "scatter_zero"),
                     "mm": ("linalg", "mm"), "diagonal": ("linalg", "diagonal"),
                     "diagonal_scatter": ("linalg", "diagonal_backward"), "det_backward": ("linalg", "det_backward"),
                     "solve": ("linalg", "solve"), "lu_solve": ("lu", "_lu_solve_positional"),
                     "cholesky_solve": ("lu", "_cholesky_solve_positional"),
                     "ormqr": ("householder", "_ormqr_positional"),
                     "solve_triangular": ("linalg", "_solve_triangular_positional"), "matmul": ("linalg", "matmul"), "bmm": ("linalg", "bmm"),
                     "mv": ("linalg", "mv"), "outer": ("linalg", "outer"), "convolution": ("conv", "recorded_convolution"),
                     "conv_backward": ("conv", "convolution_backward"), "digamma": ("special", "digamma"),
                     "polygamma": ("special", "polygamma"), "erfinv": ("special", "erfinv"), "i0": ("special", "i0"),
                     "i0e": ("special", "special_i0e"), "i1": ("special", "special_i1"),
                     "i1e": ("special", "special_i1e"), "mvlgamma_offsets": ("special", "mvlgamma_tensor"),
                     "zeta": ("special", "special_zeta"), "lgamma": ("special", "lgamma")}
TensorMath.standard_gamma_grad = staticmethod(lambda self, result: _distributions().standard_gamma_grad(self, result))


def _distributions():
    """gradcli.engine.distributions, imported at its first use (a plain script never needs it)."""
    from gradcli.engine import distributions
    return distributions
NUMPY = NumpyMath()
TENSOR = TensorMath()


def _cross_numpy(a, b, dim):
    """linalg_cross in a plain backward pass: the operands broadcast, the product along dim."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    return ops.linalg.cross_array(np.broadcast_to(a, shape), np.broadcast_to(b, shape), wrap_dim(dim, len(shape)))
