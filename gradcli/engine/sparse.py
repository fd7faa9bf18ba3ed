"""Sparse COO tensors (torch.sparse_coo_tensor, Tensor.to_sparse, torch.sparse) and sparse gradients.

A SparseTensor keeps PyTorch's parts (indices, sparse_dim x nnz; values, nnz x dense dims; the size; whether it is
coalesced) and, beside them, its dense array `_a`, so the autograd engine, which reads only the autograd slots,
moves it like any tensor. A gradient with a sparsity pattern travels through a backward pass as a SparseGrad
(what embedding(sparse=True), sparse.mm and the ops below give a sparse input) and becomes a SparseTensor `.grad`
where it reaches a leaf (autograd._accumulate asks it to). Imported only when a script makes one.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, dtypes
from gradcli.engine.autograd import Node, edge
from gradcli.engine.ops.nn import _embedding_jvp
from gradcli.engine.recording import Op
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

INVARIANTS_WARNING = (
    "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when operating on a "
    "sparse tensor which violates the invariants, but checks incur performance overhead. To silence this warning, "
    "explicitly opt in or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)")

NO_TANGENTS = "gradcli does not implement forward-mode AD through sparse tensors"

# what a script may read of a sparse tensor (gradcli.language.access); any other Tensor name is refused honestly
SCRIPT_ATTRS = frozenset((
    "shape", "size", "dim", "ndim", "ndimension", "numel", "nelement", "dtype", "device", "is_sparse", "layout",
    "is_leaf", "requires_grad", "requires_grad_", "grad", "grad_fn", "detach", "sparse_dim", "dense_dim",
    "indices", "values", "coalesce", "is_coalesced", "to_dense", "to_sparse", "t", "transpose", "mm", "matmul",
    "mul", "is_floating_point", "is_cuda", "is_meta", "item", "is_pinned"))


def _dense(idx: np.ndarray, vals: np.ndarray, shape: tuple) -> np.ndarray:
    out = np.zeros(shape, vals.dtype)
    if vals.shape[0]:
        np.add.at(out, tuple(idx), vals)
    return out


def _coalesced(idx: np.ndarray, vals: np.ndarray, shape: tuple):
    """(indices, values) sorted by position, the values of repeated positions added in their order."""
    if idx.shape[1] == 0:
        return idx, vals
    sparse_shape = shape[:idx.shape[0]]
    flat = np.ravel_multi_index(tuple(idx), sparse_shape) if idx.shape[0] else np.zeros(idx.shape[1], np.int64)
    keys, first, where = np.unique(flat, return_index=True, return_inverse=True)
    out = np.zeros((len(keys),) + vals.shape[1:], vals.dtype)
    np.add.at(out, where.reshape(-1), vals)
    return np.array(np.unravel_index(keys, sparse_shape), np.int64).reshape(idx.shape[0], -1), out


class SparseGrad:
    """A gradient in a backward pass that has a sparsity pattern: indices, values and the full shape."""

    __slots__ = ("idx", "vals", "shape", "coalesced")
    __array_ufunc__ = None

    def __init__(self, idx, vals, shape, coalesced=False):
        self.idx, self.vals, self.shape, self.coalesced = idx, vals, tuple(shape), coalesced

    @property
    def dtype(self):
        return self.vals.dtype

    def dense(self) -> np.ndarray:
        return _dense(self.idx, self.vals, self.shape)

    def __add__(self, other):
        if other.__class__ is SparseGrad:
            # PyTorch merges two coalesced gradients into a coalesced one, and puts any others together
            idx = np.concatenate([self.idx, other.idx], 1)
            vals = np.concatenate([self.vals, other.vals])
            if self.coalesced and other.coalesced:
                return SparseGrad(*_coalesced(idx, vals, self.shape), self.shape, True)
            return SparseGrad(idx, vals, self.shape)
        return self.dense() + other

    def __radd__(self, other):
        return other + self.dense()

    def accumulate_into(self, t) -> None:
        """AccumulateGrad of a sparse gradient into the leaf `t`: its `.grad` the first time, the two together
        afterwards; added into a dense `.grad` in place."""
        current = t.grad
        if current is None:
            t.grad = autograd.mark_variable(SparseTensor(self.idx.copy(), self.vals.copy(), self.shape,
                                                         self.coalesced))
        elif current.__class__ is SparseTensor:       # in place, as PyTorch's `grad += new`
            total = SparseGrad(current._idx, current._vals, self.shape, current._is_coalesced) + self
            current._idx, current._vals, current._is_coalesced = total.idx, total.vals, total.coalesced
            current._a = total.dense()
            current._version[0] += 1
        else:
            if self.vals.shape[0]:
                np.add.at(current._a, tuple(self.idx), self.vals)
            current._version[0] += 1


def _grad_dense(g) -> np.ndarray:
    return g.dense() if g.__class__ is SparseGrad else g


def _masked(g, s_idx: np.ndarray, shape: tuple) -> SparseGrad:
    """The gradient `g` read at a sparse input's positions (PyTorch's sparse_mask): the input's pattern."""
    d = _grad_dense(g)
    return SparseGrad(s_idx, d[tuple(s_idx)], shape, True)


class SparseTensor:
    """A sparse COO tensor; see the module's docstring."""

    __slots__ = ("_a", "_idx", "_vals", "_is_coalesced", "requires_grad", "grad", "grad_fn", "_version", "_acc",
                 "_base", "_inference", "_fw", "__weakref__")
    __array_ufunc__ = None
    __hash__ = object.__hash__

    def __new__(cls, *args, **kwargs):
        if len(args) == 1:      # autograd's `t.__class__(g)`: a sparse leaf's dense gradient is a dense tensor
            return Tensor(args[0])
        return object.__new__(cls)

    def __init__(self, idx: np.ndarray, vals: np.ndarray, shape: tuple, coalesced: bool = False):
        self._idx, self._vals, self._is_coalesced = idx, vals, coalesced
        self._a = _dense(idx, vals, tuple(shape))
        self.requires_grad = False
        self.grad = self.grad_fn = self._acc = self._base = None
        self._version = [0]
        self._inference = STATE.inference

    # ------------------------------------------------------------------ metadata: Tensor's, read from `_a`
    shape, size, dim, ndimension, ndim, numel, nelement = (Tensor.shape, Tensor.size, Tensor.dim, Tensor.ndimension,
                                                            Tensor.ndim, Tensor.numel, Tensor.nelement)

    @property
    def dtype(self):
        return dtypes.of_array(self._vals)

    @property
    def device(self):
        return Tensor(self._vals[:0]).device

    is_sparse = True
    is_cuda = False
    is_meta = False

    @property
    def layout(self):
        return dtypes.sparse_coo

    def is_floating_point(self) -> bool:
        return self._vals.dtype.kind in "fV"

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def sparse_dim(self) -> int:
        return self._idx.shape[0]

    def dense_dim(self) -> int:
        return self._vals.ndim - 1

    def _nnz(self) -> int:
        return self._idx.shape[1]

    def is_pinned(self, device=None) -> bool:
        return False

    def is_coalesced(self) -> bool:
        return self._is_coalesced

    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if requires_grad and self._vals.dtype.kind not in "fVc":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self.requires_grad = bool(requires_grad) or self.grad_fn is not None
        return self

    def detach(self) -> "SparseTensor":
        return SparseTensor(self._idx, self._vals, self._a.shape, self._is_coalesced)

    # ------------------------------------------------------------------ parts
    def _indices(self) -> Tensor:
        return Tensor(self._idx)

    def _values(self) -> Tensor:
        return Tensor(self._vals)

    def indices(self) -> Tensor:
        if not self._is_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return Tensor(self._idx)

    def values(self) -> Tensor:
        if not self._is_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return _record(VALUES, Tensor(self._vals.copy()), (self,), (self._idx, self._a.shape))

    def coalesce(self) -> "SparseTensor":
        if self._is_coalesced:
            return self
        idx, vals = _coalesced(self._idx, self._vals, self._a.shape)
        return _record(COALESCE, SparseTensor(idx, vals, self._a.shape, True), (self,), ())

    def to_dense(self, dtype=None, *, masked_grad=True) -> Tensor:
        out = self._a.copy()
        if dtype is not None:
            if dtype.__class__ is not dtypes.DType:
                raise TypeError(f"to_dense(): argument 'dtype' (position 1) must be torch.dtype, not "
                                f"{type(dtype).__name__}")
            raise RuntimeError("dtype argument is not supported by sparse_to_dense")
        return _record(TO_DENSE, Tensor(out), (self,), (self._coalesced_idx(), self._a.shape))

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout is not dtypes.sparse_coo or blocksize is not None or dense_dim is not None:
            raise NotImplementedError("gradcli does not implement sparse layouts other than torch.sparse_coo")
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self.sparse_dim() "
                               "is not supported")
        return self

    def _coalesced_idx(self) -> np.ndarray:
        return self._idx if self._is_coalesced else _coalesced(self._idx, self._vals, self._a.shape)[0]

    def t(self) -> "SparseTensor":
        if self._a.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but self is "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        return _transposed(self, 0, 1 if self._a.ndim == 2 else 0, T)

    def transpose(self, dim0, dim1) -> "SparseTensor":
        from gradcli.engine.recording import wrap_dim
        d0, d1 = wrap_dim(dim0, self._a.ndim), wrap_dim(dim1, self._a.ndim)
        if max(d0, d1) >= self.sparse_dim() and d0 != d1:
            raise NotImplementedError("gradcli does not implement transpose of a sparse tensor's dense dimensions")
        return _transposed(self, d0, d1, TRANSPOSE)

    # ------------------------------------------------------------------ arithmetic
    def mul(self, other):
        if other.__class__ in (int, float, bool):
            dt = self._vals.dtype
            if dt.kind in "iub" and other.__class__ is float:
                dt = dtypes.default_float.np
            elif dt.kind == "b":
                dt = np.dtype(np.int64)
            vals = self._vals.astype(dt) * np.asarray(other, dt)
            out = SparseTensor(self._idx, vals, self._a.shape, self._is_coalesced)
            return _record(MUL_SCALAR, out, (self,), (other, self._idx, self._a.shape))
        if other.__class__ is SparseTensor:
            if other._a.shape != self._a.shape:
                raise RuntimeError(f"mul(sparse, sparse): expected sizes of 'self' and 'other' to match, but "
                                   f"{list(self._a.shape)} != {list(other._a.shape)}")
            if self.requires_grad or other.requires_grad:
                raise NotImplementedError("gradcli does not implement the gradient of a product of two sparse tensors")
            if self.dense_dim() or other.dense_dim():
                raise NotImplementedError("gradcli does not implement products of hybrid sparse tensors")
            if self._is_coalesced and other._is_coalesced:      # the positions both have
                both = _pattern_and(self._idx, other._idx, self._a.shape)
                return SparseTensor(both, self._a[tuple(both)] * other._a[tuple(both)], self._a.shape, True)
            # otherwise each of self's entries times other's value there, self's pattern kept
            return SparseTensor(self._idx, self._vals * other._a[tuple(self._idx)], self._a.shape)
        raise NotImplementedError("gradcli does not implement the product of a sparse tensor and a dense one")

    __mul__ = __rmul__ = mul

    def __add__(self, other):
        if other.__class__ is Tensor or other.__class__ in (int, float, bool):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        raise NotImplementedError("gradcli does not implement the sum of two sparse tensors")

    def _refuse(self, *args):
        raise NotImplementedError("gradcli does not implement this operator on sparse tensors")

    # what PyTorch computes on sparse tensors and gradcli does not (yet): refused, never answered as an object
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __sub__ = __rsub__ = __truediv__ = \
        __rtruediv__ = __pow__ = __radd__ = __rmatmul__ = __getitem__ = __len__ = __iter__ = __abs__ = _refuse

    def mm(self, mat2) -> Tensor:
        return mm(self, mat2, MM)

    matmul = __matmul__ = mm

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        from gradcli.display.modern import sparse_repr
        from gradcli.engine.tensor import print_options
        fn = self.grad_fn
        return sparse_repr(self._idx, self._vals, self._a.shape, self._vals.dtype.name,
                           grad_fn_name=None if fn is None else fn.op.node, requires_grad=self.requires_grad,
                           opts=print_options)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def item(self):
        if self._a.size != 1:
            raise RuntimeError(f"a Tensor with {self._a.size} elements cannot be converted to Scalar")
        return self._a.reshape(()).item()

    def __bool__(self):
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if not self._a.size else 'more than one value'}"
                           " is ambiguous")

    def refused(self, name: str) -> Exception:
        """What a script gets for a Tensor name sparse tensors lack here: PyTorch's words where PyTorch refuses too."""
        if name == "reshape":
            return RuntimeError("reshape is not implemented for sparse tensors")
        if name == "tolist":
            return RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
        return NotImplementedError(f"gradcli does not implement torch.Tensor.{name} for sparse tensors")


def _pattern_and(a: np.ndarray, b: np.ndarray, shape: tuple) -> np.ndarray:
    fa = np.ravel_multi_index(tuple(a), shape)
    fb = np.ravel_multi_index(tuple(b), shape)
    return np.array(np.unravel_index(np.intersect1d(fa, fb), shape), np.int64).reshape(len(shape), -1)


def _record(op: Op, out, inputs: tuple, args: tuple):
    """`out` with a node of row `op` when grad mode is on and an input requires grad (inputs are tensors of
    either layout; the row's formulas get the incoming gradient and `args`)."""
    if STATE.fw_level is not None and any(getattr(x, "_fw", None) for x in inputs if x is not None):
        raise NotImplementedError(NO_TANGENTS)
    if not STATE.recording:
        return out
    nodes = tuple(edge(x) if x.__class__ in (Tensor, SparseTensor) else None for x in inputs)
    if all(n is None for n in nodes):
        return out
    out.grad_fn = Node(op, nodes, tuple(args))
    out.requires_grad = True
    return out


def _transposed(s: SparseTensor, d0: int, d1: int, op: Op) -> SparseTensor:
    idx = s._idx.copy()
    idx[[d0, d1]] = idx[[d1, d0]]
    shape = list(s._a.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    out = SparseTensor(idx, s._vals, tuple(shape), s._is_coalesced and d0 == d1)
    return _record(op, out, (s,), (d0, d1))


def _transpose_grad(F, g, d0, d1):
    if g.__class__ is SparseGrad:
        idx = g.idx.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
        shape = list(g.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return SparseGrad(idx, g.vals, shape)
    return np.swapaxes(g, d0, d1)


# ------------------------------------------------------------------------------ matrix products

def _spmm(idx: np.ndarray, vals: np.ndarray, rows: int, dense: np.ndarray) -> np.ndarray:
    """The coalesced sparse matrix (idx, vals) times a dense matrix, row by row in the order of its entries."""
    out = np.zeros((rows, dense.shape[1]), np.result_type(vals, dense))
    if vals.shape[0]:
        np.add.at(out, idx[0], vals[:, None] * dense[idx[1]])
    return out


def mm(s, d, op=None, name="mm"):
    """sparse @ dense (torch.sparse.mm, torch.mm, @): a dense result. torch.sparse.mm records PyTorch's
    SparseAddmmBackward0 (an addmm into zeros: its first input is no tensor), the others MmBackward0."""
    if s.__class__ is not SparseTensor or d.__class__ is not Tensor:
        raise NotImplementedError("gradcli does not implement this product of sparse and dense tensors (only a "
                                  "sparse matrix times a dense one)")
    if s._a.ndim != 2 or s.dense_dim() or d._a.ndim != 2:
        raise RuntimeError(f"{name}: expected 2-D sparse and dense matrices, got {s._a.ndim}-D and {d._a.ndim}-D")
    if s._a.shape[1] != d._a.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s._a.shape[1]}, got {d._a.shape[0]}")
    if s._vals.dtype != d._a.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type(s._vals)} but found {_scalar_type(d._a)}")
    c = _coalesced_copy(s)
    out = Tensor(_spmm(c._idx, c._vals, s._a.shape[0], d._a))
    if op is None:
        return out
    if op is MM:
        return _record(MM, out, (s, d), (c, d, 1, 1, None))
    return _record(ADDMM, out, (None, s, d), (c, d, 0, 1, out._a.shape))


def _scalar_type(a: np.ndarray) -> str:
    """PyTorch's C++ name of an array's dtype (Float, Double, Long) in its messages."""
    return dtypes.of_array(a).legacy.removeprefix("torch.").removesuffix("Tensor")


def _coalesced_copy(s: SparseTensor) -> SparseTensor:
    """The sparse matrix coalesced, outside any graph: what a product's node keeps of it."""
    if s._is_coalesced:
        return SparseTensor(s._idx, s._vals, s._a.shape, True)
    return SparseTensor(*_coalesced(s._idx, s._vals, s._a.shape), s._a.shape, True)


def sparse_mm(mat1, mat2):
    """torch.sparse.mm(sparse, dense): SparseAddmmBackward0."""
    return mm(mat1, mat2, ADDMM, "sparse.mm")


def addmm(mat, mat1, mat2, *, beta=1, alpha=1):
    """torch.sparse.addmm(dense, sparse, dense, beta=, alpha=): beta * mat + alpha * (mat1 @ mat2)."""
    if mat.__class__ is not Tensor:
        raise NotImplementedError("gradcli does not implement torch.sparse.addmm with a sparse first argument")
    product = mm(mat1, mat2, None, "sparse.addmm")
    a = mat._a
    out = np.asarray(beta, a.dtype) * np.broadcast_to(a, product._a.shape) + \
        np.asarray(alpha, a.dtype) * product._a if (beta, alpha) != (1, 1) else a + product._a
    return _record(ADDMM, Tensor(out.astype(a.dtype, copy=False)), (mat, mat1, mat2),
                   (_coalesced_copy(mat1), mat2, beta, alpha, a.shape))


def _mm_sparse_grad(F, g, mat1, mat2, beta, alpha, self_shape):
    """torch.sparse.mm's and addmm's gradient for the sparse matrix: (g @ mat2.T) at its positions, sparse."""
    full = _grad_dense(g) @ mat2._a.T
    if alpha != 1:
        full = full * alpha
    return SparseGrad(mat1._idx, full[tuple(mat1._idx)].astype(mat1._vals.dtype, copy=False), mat1._a.shape, True)


def _mm_dense_self_grad(F, g, mat1, mat2, beta, alpha, self_shape):
    """torch.mm's and @'s gradient for a sparse first matrix: g @ mat2.T, dense (PyTorch's MmBackward0)."""
    return _grad_dense(g) @ mat2._a.T


def _mm_dense_grad(F, g, mat1, mat2, beta, alpha, self_shape):
    g = _grad_dense(g)
    out = _spmm(mat1._idx[::-1], mat1._vals, mat1._a.shape[1], g)     # the sparse matrix's transpose times g
    return out * alpha if alpha != 1 else out


def _addmm_self_grad(F, g, mat1, mat2, beta, alpha, self_shape):
    g = _grad_dense(g)
    if beta != 1:
        g = g * beta
    while g.ndim > len(self_shape):
        g = g.sum(0)
    for d, n in enumerate(self_shape):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdims=True)
    return g


# ------------------------------------------------------------------------------ sums

def sparse_sum(input, dim=None, dtype=None):
    """torch.sparse.sum: all elements (a dense 0-d tensor), or over `dim` (sparse while sparse dims remain)."""
    if input.__class__ is not SparseTensor:
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")
    if dim is None:     # PyTorch: the sum of the coalesced tensor's values (SumBackward0 of ValuesBackward0)
        return input.coalesce().values().sum(dtype=dtype)
    if dtype is not None:       # PyTorch converts the input first (ToCopyBackward0), which gradcli's sparse tensors lack
        raise NotImplementedError("gradcli does not implement torch.sparse.sum with both dim and dtype (a sparse "
                                  "tensor's dtype conversion)")
    c = input.coalesce().detach() if not input._is_coalesced else input
    idx, shape = c._idx, input._a.shape
    dims = (dim,) if dim.__class__ is int else tuple(dim)
    from gradcli.engine.recording import wrap_dim
    dims = sorted({wrap_dim(d, len(shape)) for d in dims})
    sd = input.sparse_dim()
    kept = [d for d in range(sd) if d not in dims]
    dense_sum = tuple(d - sd + 1 for d in dims if d >= sd)
    vals = c._vals.sum(dense_sum) if dense_sum else c._vals
    out_shape = tuple(n for d, n in enumerate(shape) if d not in dims)
    if not kept:
        out = Tensor(np.asarray(vals.sum(0), vals.dtype))
    else:
        sub, summed = _coalesced(idx[kept], vals, tuple(shape[d] for d in kept) + vals.shape[1:])
        out = SparseTensor(sub, summed, out_shape, True)
    return _record(SPARSE_SUM, out, (input,), (idx, shape, dims))


def _sum_grad(F, g, idx, shape, dims):
    d = _grad_dense(g)
    if dims is None:
        full = np.broadcast_to(d, shape)
    else:
        full = np.broadcast_to(np.expand_dims(d, tuple(dims)), shape)
    return SparseGrad(idx, np.ascontiguousarray(full[tuple(idx)]), shape, True)


# ------------------------------------------------------------------------------ construction

def _index_array(indices) -> np.ndarray:
    if indices.__class__ is Tensor:
        return indices._a.astype(np.int64)
    return np.asarray(indices, dtype=np.int64)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """torch.sparse_coo_tensor with PyTorch's checks of the parts against each other."""
    from gradcli.engine import factories
    if check_invariants is None:
        STATE.warn_once("sparse invariants", "UserWarning", INVARIANTS_WARNING)
    if device is not None:
        from gradcli.engine.tensor import _Device, check_device, parse_device
        where = parse_device(device) if device.__class__ is str else device
        if where.__class__ is _Device and where.type == "cuda":
            raise RuntimeError("PyTorch is not linked with support for cuda devices")
        if check_device(where):
            raise NotImplementedError("gradcli does not implement sparse tensors on the meta device")
    if pin_memory:
        from gradcli.engine.tensor import NO_ACCELERATOR
        raise RuntimeError(NO_ACCELERATOR)
    idx = _index_array(indices)
    if values.__class__ is not Tensor:
        values = factories.tensor(values, dtype=dtype)
    elif dtype is not None and values._a.dtype != dtype.np:
        values = values.to(dtype)
    vals = values._a
    if vals.ndim == 0:                  # one value: nnz 1
        vals = vals.reshape(1)
    if idx.ndim != 2:
        if size is not None and idx.ndim == 1 and len(size) != idx.shape[0] + vals.ndim - 1:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {idx.shape[0]}, dense_dim = {vals.ndim - 1}")
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    sd, nnz = idx.shape
    if vals.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {vals.shape[0]}")
    if size is None:
        if nnz and idx.min() < 0:
            raise RuntimeError(f"found negative index {idx.min()} for dim {int(np.argmin(idx.min(1)))}")
        shape = tuple(int(m) + 1 for m in idx.max(1)) if nnz else (0,) * sd
        shape += vals.shape[1:]
    else:
        shape = tuple(int(n) for n in size)
        if len(shape) != sd + vals.ndim - 1:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(shape)}, "
                               f"sparse_dim = {sd}, dense_dim = {vals.ndim - 1}")
        if vals.shape[1:] != shape[sd:]:
            raise RuntimeError(f"values has incorrect size, expected {list((nnz,) + shape[sd:])}, got "
                               f"{list(vals.shape)}")
        if nnz and ((idx.max(1) >= np.asarray(shape[:sd])).any() or idx.min() < 0):
            if not check_invariants:
                raise NotImplementedError("gradcli does not implement sparse tensors whose indices lie outside "
                                          "their size (PyTorch makes them without checking)")
            for d in range(sd):
                if idx[d].min() < 0:
                    raise RuntimeError(f"found negative index {idx[d].min()} for dim {d}")
                if idx[d].max() >= shape[d]:
                    raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {shape[d]} but "
                                       f"found index {idx[d].max()}")
    out = SparseTensor(idx, vals.copy(), shape, bool(is_coalesced))
    if requires_grad:
        out.requires_grad_(True)
        return out
    return _record(CONSTRUCT, out, (values,), (idx,))


def to_sparse(t: Tensor, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None) -> SparseTensor:
    """Tensor.to_sparse(): the nonzero elements (rows of the first sparse_dim dims) in order, coalesced."""
    if layout is not None and layout is not dtypes.sparse_coo or blocksize is not None or dense_dim is not None:
        raise NotImplementedError("gradcli does not implement sparse layouts other than torch.sparse_coo")
    a = t._a
    if sparse_dim is not None and sparse_dim.__class__ is not int:
        raise TypeError(f"to_sparse() received an invalid combination of arguments - got "
                        f"({type(sparse_dim).__name__}), but expected one of:\n"
                        " * (*, torch.layout layout = None, tuple of ints blocksize = None, int dense_dim = None)\n"
                        " * (int sparse_dim)\n      didn't match because some of the arguments have invalid types: "
                        f"(!{type(sparse_dim).__name__}!)\n")
    sd = a.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sd <= a.ndim:
        raise RuntimeError(f"sparse_dim must be in [0, {a.ndim}], got {sd}")
    rows = a.reshape(a.shape[:sd] + (-1,)) if sd < a.ndim else a[..., None]
    nz = np.nonzero(np.any(rows != 0, axis=-1))
    idx = np.array(nz, np.int64).reshape(sd, -1)
    vals = a[nz].copy()
    out = SparseTensor(idx, vals, a.shape, True)
    return _record(TO_SPARSE if sparse_dim is None else TO_SPARSE_DIM, out, (t,), ())


# ------------------------------------------------------------------------------ embedding(sparse=True)

def embedding_grad(F, g, indices, num_weights, padding_idx, scale_grad_by_freq):
    """EmbeddingBackward0 with sparse=True: one row of the gradient per index, in order (the padding index left
    out), uncoalesced, as PyTorch's embedding_sparse_backward gives it."""
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    g = _grad_dense(g)
    flat = indices.reshape(-1)
    rows = g.reshape(flat.size, -1) if flat.size else g.reshape(0, g.shape[-1])
    if padding_idx is not None and padding_idx >= 0:
        keep = flat != padding_idx
        flat, rows = flat[keep], rows[keep]
    return SparseGrad(flat.reshape(1, -1).copy(), np.ascontiguousarray(rows), (num_weights, g.shape[-1]))


# ------------------------------------------------------------------------------ the rows

def _values_grad(F, g, idx, shape):
    return SparseGrad(idx, _grad_dense(g), shape, True)


def _construct_grad(F, g, idx):
    return _grad_dense(g)[tuple(idx)]


def _mul_grad(F, g, other, idx, shape):
    """grad * other, in the gradient's own layout (a sparse gradient keeps its pattern)."""
    if g.__class__ is SparseGrad:
        return SparseGrad(g.idx, g.vals * np.asarray(other, g.vals.dtype), g.shape, g.coalesced)
    return g * np.asarray(other, g.dtype)


# The rows' nodes are made by _record, which hands a formula what the forward gave it, as it is (tensors, the
# product's coalesced sparse matrix): saves_tensors=False says the sweep has nothing to unpack.
# fmt: off
CONSTRUCT  = Op("SparseCooTensorWithDimsAndTensorsBackward0", None, ("indices",), (_construct_grad,),
                inputs=("values",))
VALUES     = Op("ValuesBackward0",   None, ("indices", "shape"), (_values_grad,))
COALESCE   = Op("CoalesceBackward0", None, (), (lambda F, g: g,))
TO_DENSE   = Op("ToDenseBackward0",  None, ("indices", "shape"), (lambda F, g, idx, shape: _masked(g, idx, shape),))
TO_SPARSE  = Op("ToSparseBackward1", None, (), (lambda F, g: _grad_dense(g),))
TO_SPARSE_DIM = Op("ToSparseBackward0", None, (), (lambda F, g: _grad_dense(g),))
T          = Op("TBackward0",        None, ("dim0", "dim1"), (_transpose_grad,))
TRANSPOSE  = Op("TransposeBackward0", None, ("dim0", "dim1"), (_transpose_grad,))
MUL_SCALAR = Op("MulBackward0",      None, ("other", "indices", "shape"), (_mul_grad,))
MM         = Op("MmBackward0",       None, ("mat1", "mat2", "beta", "alpha", "self_shape"),
                (_mm_dense_self_grad, _mm_dense_grad), inputs=("self", "mat2"), saves_tensors=False)
ADDMM      = Op("SparseAddmmBackward0", None, ("mat1", "mat2", "beta", "alpha", "self_shape"),
                (_addmm_self_grad, _mm_sparse_grad, _mm_dense_grad), inputs=("self", "mat1", "mat2"),
                saves_tensors=False)
SUM        = Op("SumBackward0",      None, ("indices", "shape", "dim"), (_sum_grad,))
SPARSE_SUM = Op("SparseSumBackward0", None, ("indices", "shape", "dim"), (_sum_grad,))
EMBEDDING  = Op("EmbeddingBackward0", None, ("indices", "num_weights", "padding_idx", "scale_grad_by_freq"),
                (embedding_grad,), inputs=("weight",), quiet=True, jvp=_embedding_jvp)
# fmt: on
