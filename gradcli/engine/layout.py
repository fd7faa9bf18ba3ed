"""Where an elementwise result's elements lie in memory: TensorIterator's rule for allocating an op's output.

PyTorch allocates the output of an elementwise op (TensorIteratorBase: compute_strides, reorder_dimensions,
allocate_or_resize_outputs) after its inputs' strides, so `a.t() + b` is laid out transposed, and a sum that
follows adds in that order. numpy's ufuncs choose their own layout, which agrees with PyTorch's while the
operands agree with each other and differs when they conflict (numpy: C order wins; PyTorch: the first operand
that orders a pair of dims decides), and numpy's temporary elision writes `g * (x - y)` for large arrays
into the temporary, whatever its layout. `laid_out` puts a result where PyTorch would have put it.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gradcli.engine import dtypes
from gradcli.engine.cascade import stride_sort

_ndarray = np.ndarray


def order(shape: tuple, operands) -> list:
    """TensorIterator's dims for an elementwise op on `operands` (arrays, in argument order) broadcast to
    `shape`, innermost first.

    Each operand's strides are read as the iterator reads them: a dim it broadcasts has stride 0, as has a
    size-1 dim the result does not have (a size-1 dim the result keeps keeps its stride). Two dims swap
    when the first operand whose strides for both are nonzero and differ orders them so, or, at equal
    strides, when the outer of the two is the shorter; an operand with a zero stride on either says nothing.
    """
    ndim = len(shape)
    strides = []
    for a in operands:
        lead = ndim - a.ndim
        own, sizes = a.strides, a.shape
        strides.append([0] * lead + [0 if sizes[i] == 1 and shape[lead + i] != 1 else own[i]
                                     for i in range(a.ndim)])

    def compare(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    return stride_sort(ndim, compare)


def laid_out(out: np.ndarray, *operands) -> np.ndarray:
    """`out`, the elementwise result of `operands` (arrays or numbers, in the op's argument order), as
    PyTorch lays it out: `out` itself when its layout is already that, else a copy in that layout.

    Operands that are all C-contiguous give a C-contiguous result (the iterator's fast path) unless the
    result has a size-1 dim: there the strides an operand's view left on that dim take part in the order
    (`x[:1] + y.permute(...)`), so a caller on the hot path checks for that case first."""
    if out.__class__ is not _ndarray or out.ndim < 2 or out.size == 0:
        return out
    arrays = [a for a in operands if a.__class__ is _ndarray and a.ndim > 0]
    shape = out.shape
    if 1 not in shape:
        if all(a.flags.c_contiguous for a in arrays):
            return out if out.flags.c_contiguous else np.ascontiguousarray(out)
    elif all(a.flags.c_contiguous and a.shape == shape and a.strides == standard_strides(shape, a.itemsize)
             for a in arrays):
        return contiguous(out)
    perm = order(shape, arrays)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return contiguous(out)
    want, step = [0] * len(shape), out.itemsize
    for d in perm:
        want[d] = step
        step *= shape[d]
    want = tuple(want)
    if all(w == s or n == 1 for w, s, n in zip(want, out.strides, shape)):
        return with_strides(out, want)      # (a dim of size 1 gets PyTorch's stride)
    outer = perm[::-1]
    buffer = np.empty([shape[d] for d in outer], out.dtype)
    view = buffer.transpose(np.argsort(outer))
    view[...] = out
    return view


def preserved(a: np.ndarray, make=None) -> np.ndarray:
    """A new array shaped like `a`, laid out as PyTorch's empty_like(memory_format=torch.preserve_format) lays
    it out: `a`'s own strides when `a` is dense, else dense strides in `a`'s order of dims (infer_dense_strides,
    which orders the dims as TensorIterator does). `make(shape)` makes the row-major array so laid out
    (default: np.empty of a's dtype)."""
    make = make or (lambda shape: np.empty(shape, a.dtype))
    if a.ndim < 2 or a.flags.c_contiguous and (1 not in a.shape or a.strides == standard_strides(a.shape,
                                                                                                  a.itemsize)):
        return make(a.shape)
    outer = order(a.shape, [a])[::-1]
    return make(tuple(a.shape[d] for d in outer)).transpose(np.argsort(outer))


def dense(a: np.ndarray) -> bool:
    """PyTorch's is_non_overlapping_and_dense: `a`'s elements fill one block of memory, in some order of its
    dims, with no gap and no element twice (size-1 dims, whatever their stride, take no part)."""
    if a.flags.c_contiguous or a.size == 0:
        return True
    step = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != step:
            return False
        step *= n
    return True


def obeys_contract(g: np.ndarray, variable: np.ndarray) -> bool:
    """PyTorch's gradient layout contract (utils::obeys_layout_contract): a gradient may become a leaf's .grad
    as it is when it has the leaf's strides (on every dim of size > 1, and no 0 stride on the others), or,
    for a leaf that is not dense, when it is contiguous."""
    if g.flags.c_contiguous and variable.flags.c_contiguous:
        return 0 not in g.strides or g.size == 0
    if not dense(variable):
        return bool(g.flags.c_contiguous)
    return all((s == t) if n != 1 else s != 0 for n, s, t in zip(g.shape, g.strides, variable.strides))


def contract_copy(g: np.ndarray, variable: np.ndarray, dtype) -> np.ndarray:
    """`g` copied into the layout the contract gives a leaf's .grad (utils::clone_obey_contract): the leaf's
    own strides when it is dense, else row-major."""
    if variable.flags.c_contiguous or not dense(variable):
        return np.array(g, dtype=dtype, order="C")
    out = np.empty_like(variable, dtype)
    np.copyto(out, g, casting="unsafe")
    return out


def standard_strides(shape: tuple, itemsize: int) -> tuple:
    """A contiguous tensor's strides, in bytes, as PyTorch gives them: a dim's is the product of the sizes
    after it (a size-0 dim counting as 1), also for a dim of size 1, where numpy may leave any stride."""
    strides, step = [0] * len(shape), itemsize
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def with_strides(a: np.ndarray, strides: tuple) -> np.ndarray:
    """`a` itself, or a view of the same elements with `strides`, which may differ from a's only on dims of
    size 1 (which place no element): PyTorch's strides there, which stride() reports."""
    return a if a.strides == strides else as_strided(a, a.shape, strides)


def contiguous(a):
    """`a` in row-major order with PyTorch's contiguous strides (itself when it already is): what an op whose
    kernel writes a contiguous result returns. Unlike np.ascontiguousarray, a 0-d array stays 0-d."""
    if a.__class__ is not _ndarray or a.ndim == 0:
        return a
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return with_strides(a, standard_strides(a.shape, a.itemsize)) if 1 in a.shape and a.size else a


def unsqueezed(x: np.ndarray, d: int) -> np.ndarray:
    """x with a new dim of size 1 at `d` (a view), with PyTorch's stride for it: the size times the stride of
    the dim it goes before, or 1 at the end; the other dims keep theirs (numpy's expand_dims may not)."""
    out = np.expand_dims(x, d)
    new = x.strides[d] * x.shape[d] if d < x.ndim else x.itemsize
    return with_strides(out, x.strides[:d] + (new,) + x.strides[d:]) if x.size else out


def writable(a: np.ndarray) -> np.ndarray:
    """`a` itself when numpy lets it be written, else a copy a script may write into that keeps its layout:
    a read-only broadcast (the gradient of a sum, expanded) gets storage of its own where the places that
    shared an element still share it, as in PyTorch's expanded tensor (a write reaches all of them)."""
    if a.flags.writeable:
        return a
    compact = np.array(a[tuple(slice(0, 1) if s == 0 else slice(None) for s in a.strides)])
    return as_strided(compact, a.shape, tuple(0 if s == 0 else c for s, c in zip(a.strides, compact.strides)),
                      writeable=True)


# ------------------------------------------------------------------------------------------ memory formats
# (torch.contiguous_format, torch.channels_last, ...: gradcli.engine.dtypes.MemoryFormat)

# a channels-last format's rank and its dims from innermost to outermost (PyTorch's stride order)
_CHANNELS_LAST = {"channels_last": (4, (1, 3, 2, 0)), "channels_last_3d": (5, (1, 4, 3, 2, 0))}


def memory_format_arg(name: str, value, nullable=True):
    """`value` as the memory_format argument of `name`: a torch.memory_format, or None where the parser takes it;
    else PyTorch's TypeError."""
    if value.__class__ is dtypes.MemoryFormat or value is None and nullable:
        return value
    raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(value).__name__}")


def _channels_last(fmt, ndim: int):
    """The stride order of a channels-last `fmt`, after PyTorch's check of the rank; None for the others."""
    spec = _CHANNELS_LAST.get(fmt._name) if fmt is not None else None
    if spec is None:
        return None
    if ndim != spec[0]:
        raise RuntimeError(f"required rank {spec[0]} tensor to use {fmt._name} format")
    return spec[1]


def new_in_format(shape: tuple, fmt, make) -> np.ndarray:
    """A new array of `shape` laid out in memory format `fmt` (contiguous, channels_last or channels_last_3d),
    with PyTorch's strides also on dims of size 1 or 0; `make(shape)` makes the row-major array."""
    dims = _channels_last(fmt, len(shape))
    if dims is None:
        return make(shape)
    outer = dims[::-1]
    a = make(tuple(shape[d] for d in outer)).transpose(np.argsort(outer))
    strides, step = [0] * len(shape), a.itemsize
    for d in dims:
        strides[d] = step
        step *= shape[d]
    return with_strides(a, tuple(strides))


def copied_in_format(a: np.ndarray, fmt) -> np.ndarray:
    """A copy of `a` laid out in `fmt` (preserve_format: as layout.preserved lays it out)."""
    if fmt is dtypes.preserve_format or fmt is None:
        out = preserved(a)
    else:
        out = new_in_format(a.shape, fmt, lambda shape: np.empty(shape, a.dtype))
    np.copyto(out, a)
    return out


def is_contiguous_in(a: np.ndarray, fmt) -> bool:
    """PyTorch's is_contiguous(memory_format=fmt): for a channels-last format, whether the strides are those of
    its order of dims, dims of size 1 aside (False at any other rank)."""
    spec = _CHANNELS_LAST.get(fmt._name)
    if spec is None:
        return bool(a.flags.c_contiguous)
    if a.ndim != spec[0]:
        return False
    expected = a.itemsize
    for d in spec[1]:
        if a.shape[d] != 1:
            if a.strides[d] != expected:
                return False
            expected *= a.shape[d]
    return True


_DIM_ORDER_STRIDES = ("gradcli does not implement torch.Tensor.dim_order for a tensor with a dimension of size 1 "
                      "or 0 that is neither contiguous nor channels-last: PyTorch's answer there depends on strides "
                      "that depend on how the tensor was made")


def dim_order(a: np.ndarray, ambiguity_check=False) -> tuple:
    """Tensor.dim_order(ambiguity_check=False): the dims from outermost to innermost in memory (PyTorch's
    compute_elementwise_output_logical_to_physical_perm), with its checks that the order is unique."""
    if ambiguity_check.__class__ is not bool and (ambiguity_check.__class__ is not list or any(
            f.__class__ is not dtypes.MemoryFormat for f in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape = a.shape
    strides = [s // a.itemsize for s in a.strides]
    formats = ambiguity_check if ambiguity_check.__class__ is list else []
    if (ambiguity_check if ambiguity_check.__class__ is bool else True):
        singleton = 1 in shape
        if not singleton and 0 in shape:
            raise NotImplementedError(_DIM_ORDER_STRIDES)
        several = singleton or any(p == q for p, q in zip(strides, strides[1:]))
        if several and sum(is_contiguous_in(a, f) for f in formats) != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                               "memory formats.")
    ndim = a.ndim
    if ndim < 2:
        return tuple(range(ndim))
    contiguous_ = bool(a.flags.c_contiguous)
    last = is_contiguous_in(a, dtypes.channels_last)
    if contiguous_ and not last:
        return tuple(range(ndim))
    if last and not contiguous_:
        return (0, *range(2, ndim), 1)
    if 1 in shape or 0 in shape:
        raise NotImplementedError(_DIM_ORDER_STRIDES)

    def should_swap(i, j) -> int:
        def ge(p, q):
            return True if q == 0 else False if p == 0 else p >= q or p % q == 0
        si, sj = strides[i], strides[j]
        if si == 0 or sj == 0:
            return 0
        if si == sj:
            return 0 if ge(shape[j], shape[i]) else 1
        if ge(sj, si):
            return -1
        return 1 if ge(si, sj) else 0

    from gradcli.engine.cascade import stride_sort
    perm = stride_sort(ndim, should_swap)
    if ambiguity_check and any(should_swap(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


def suggested_format(a: np.ndarray):
    """PyTorch's suggest_memory_format: channels_last (channels_last_3d) when a 4-d (5-d) array's strides read as
    that layout, ambiguous cases read as contiguous; else contiguous_format."""
    spec = _CHANNELS_LAST["channels_last"] if a.ndim == 4 else _CHANNELS_LAST["channels_last_3d"] \
        if a.ndim == 5 else None
    if spec is None or a.strides[1] == 0:
        return dtypes.contiguous_format
    smallest = 0
    for d in spec[1]:
        if a.shape[d] == 0 or a.strides[d] < smallest:
            return dtypes.contiguous_format
        if d == 0 and smallest == a.strides[1]:
            return dtypes.contiguous_format         # (N,1,1,1): PyTorch reads it as contiguous
        smallest = a.strides[d] * (a.shape[d] if a.shape[d] > 1 else 1)
    return dtypes.channels_last if a.ndim == 4 else dtypes.channels_last_3d


def in_inputs_format(out, *inputs) -> np.ndarray:
    """`out`, the 4-d or 5-d result of a kernel with a channels-last path (convolution, pooling), laid out as
    PyTorch's kernel writes it: channels-last when an input's strides read as that format (suggested_format),
    else as it is. Only the layout: where PyTorch's channels-last kernel adds in another order, the values are
    still gradcli's (README)."""
    if out.__class__ is not _ndarray or out.ndim not in (4, 5) or out.size == 0:
        return out
    for a in inputs:
        if a.__class__ is _ndarray and a.ndim == out.ndim:
            fmt = suggested_format(a)
            if fmt is not dtypes.contiguous_format:
                return out if is_contiguous_in(out, fmt) and not out.flags.c_contiguous else \
                    copied_in_format(out, fmt)
    return out
