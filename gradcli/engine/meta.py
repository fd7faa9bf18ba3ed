"""The meta device: tensors with a shape and a dtype but no data, kept on zero-strided numpy arrays.

A meta tensor's array is a MetaArray: a read-only view that repeats one element over the whole shape
(np.broadcast_to), so it costs one element whatever its shape. The engine computes on it as on any array;
numpy hands every ufunc and array function that sees one to the hooks below, which compute the result's
shape and dtype from one element of each input (or, for the few functions whose shape rule is not
elementwise, from the inputs as they are) and answer with a MetaArray again. Writes into one are dropped,
and Tensor() re-strides a MetaArray that an op laid out in full (restride), so no meta tensor keeps a
full-size buffer. Plain CPU arrays never meet these hooks: the CPU path pays nothing for the meta device.

The values the one element holds mean nothing (PyTorch has none): factories keep the value they were asked
for, so no check of a value (a division by zero, an index out of range) fails where PyTorch's meta kernels,
which read no values, do not.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine.state import STATE

NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"
NO_NONZERO = (
    "The register_meta function for torch.nonzero() raises unimplemented by default, as a correct data-independent "
    "implementation does not exist. This implementation returns a fake value, assuming all elements of the tensor "
    "are non-zero. To enable this registration, please set "
    "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")
NO_KERNEL = (
    "{}: attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel registered. "
    "You may have run into this message while using an operator with PT2 compilation APIs (torch.compile/"
    "torch.export); in order to use this operator with those APIs you'll need to add a fake impl. Please see the "
    "following for next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")
NO_NUMPY = ("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
            "memory first.")


class MetaArray(np.ndarray):
    """A meta tensor's array: one element repeated over the shape (see the module's docstring)."""

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "__call__" and ufunc.signature is None:
            shape = broadcast_shapes([np.shape(x) for x in inputs])
            result = ufunc(*[_one(x) for x in inputs], **kwargs)
            return _answer(result, shape, out)
        if method == "reduce" and inputs[0].size:
            a = inputs[0]
            axis = kwargs.pop("axis", 0)
            keepdims = kwargs.get("keepdims", False)
            axes = range(a.ndim) if axis is None else \
                np._core.numeric.normalize_axis_tuple(axis, a.ndim)
            shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape) if keepdims or d not in axes)
            result = ufunc.reduce(_one(a), axis=axis, **kwargs)
            return _answer(result, shape, out)
        if ufunc is np.matmul and method == "__call__":
            shape = _matmul_shape(*[np.shape(x) for x in inputs])
            result = ufunc(*[_one(x)[..., :1, :1] if np.ndim(x) > 1 else _one(x) for x in inputs], **kwargs)
            return _answer(result, shape, out)
        # anything else (accumulate, outer, a gufunc): on plain views, the result re-strided
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        if out is not None:
            return _answer(result, np.shape(result), out)
        return restride_all(result)

    def __array_function__(self, func, types, args, kwargs):
        own = _FUNCTIONS.get(func)
        if own is not None:
            return own(*args, **kwargs)
        return restride_all(func(*_plain(args), **_plain(kwargs)))

    def __setitem__(self, key, value):
        np.ndarray.__getitem__(self, key)          # an index out of range fails as it would; nothing is written

    def __getitem__(self, key):
        result = np.ndarray.__getitem__(self, key)
        return restride(result) if result.__class__ is MetaArray else meta_full((), result, self.dtype)

    def kept(self):
        """This array as a Tensor keeps it: one element (Tensor.__init__ calls this for any ndarray subclass)."""
        return restride(self)

    def fill(self, value):
        pass

    def sort(self, *args, **kwargs):
        pass

    def copy(self, order="C"):
        return meta_like(self)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return restride(_one(self).astype(dtype, casting=casting), self.shape)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return _reducing(np.argmax)(self, axis, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return _reducing(np.argmin)(self, axis, keepdims=keepdims)

    def argsort(self, axis=-1, kind=None, order=None, **kwargs):
        return _along(np.argsort)(self, axis)


def meta_full(shape, value, dtype) -> MetaArray:
    """A meta array of `shape` whose one element is `value` in `dtype`. PyTorch's meta kernels still size the
    storage they do not allocate: a shape whose bytes need 64 bits or more is its overflow error (which is also
    where numpy's arrays, even zero-strided ones, end)."""
    STATE.meta_seen = True
    one = np.asarray(value, dtype=dtype).reshape(())
    nbytes = one.itemsize
    for d in shape:
        nbytes *= d
    if nbytes >= 1 << 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{', '.join(map(str, shape))}]")
    return np.broadcast_to(one, shape).view(MetaArray)


def meta_like(a: np.ndarray, dtype=None) -> MetaArray:
    """A meta array of a's shape (and dtype, unless `dtype`), holding a's first element (zero if it has none)."""
    value = np.ndarray.__getitem__(a, (0,) * a.ndim) if a.size else 0
    return meta_full(a.shape, value, a.dtype if dtype is None else dtype)


def restride(a, shape=None) -> MetaArray:
    """`a` (of `shape`, when given: its values then broadcast over it) as a meta array that keeps one element,
    whatever buffer `a` holds: an op that laid its result out in full gives that buffer back here."""
    if shape is None:
        if a.__class__ is MetaArray and (a.size <= 1 or not any(a.strides)):
            return a
        shape = np.shape(a)
    a = np.asarray(a)
    return meta_full(shape, np.ndarray.__getitem__(a, (0,) * a.ndim) if a.size else 0, a.dtype)


def on_one(function, a: np.ndarray, shape: tuple, *args, **kwargs) -> MetaArray:
    """`function` of a meta array's one element (and of the one element of each array among `args`), its result
    repeated over `shape`: for the engine's kernels that loop in Python (per element, per block of a reduction),
    which would otherwise loop over the whole shape to compute nothing."""
    result = function(_one(a), *[_one(x) for x in args], **kwargs)
    if result.__class__ is tuple:                   # a kernel with two results (logsigmoid's and its buffer)
        return tuple(restride(np.asarray(r), shape) for r in result)
    return restride(np.asarray(result), shape)


def restride_all(result):
    """A function's results as meta arrays: arrays and numpy scalars; tuples and lists of them item by item;
    anything else (a shape, a flag) as it is."""
    if isinstance(result, (np.ndarray, np.generic)) and not isinstance(result, (bool, int, float)):
        return restride(result)
    if isinstance(result, (tuple, list)) and result.__class__ in (tuple, list):
        return result.__class__(restride_all(r) for r in result)
    return result


def _one(x):
    """One element of x, keeping its number of dims (an empty array as it is): what an elementwise result's
    dtype and value are read from."""
    if isinstance(x, np.ndarray):
        if x.size == 0 or x.ndim == 0:
            return x.view(np.ndarray)
        return np.ndarray.__getitem__(x, (slice(0, 1),) * x.ndim).view(np.ndarray)
    return x


def _plain(value):
    """`value` with its meta arrays seen as plain ones (lists, tuples and dicts looked into)."""
    if value.__class__ is MetaArray:
        return value.view(np.ndarray)
    if value.__class__ in (tuple, list):
        return value.__class__(_plain(v) for v in value)
    if value.__class__ is dict:
        return {k: _plain(v) for k, v in value.items()}
    return value


def _answer(result, shape, out):
    """An elementwise or reducing ufunc's answer: a meta array of `shape`; with `out`, the (meta) `out` itself,
    written nothing, once the result's shape fits it."""
    if out is None:
        return restride(result, shape)
    target = out[0] if out.__class__ is tuple else out
    if target.__class__ is not MetaArray:       # a buffer of the engine's own: its result becomes a meta one
        return target
    if np.broadcast_shapes(target.shape, shape) != target.shape:
        raise ValueError("non-broadcastable output operand")   # numpy's refusal, which the engine rewords
    return target


def broadcast_shapes(shapes: list) -> tuple:
    """The shapes broadcast together, or the error PyTorch's meta kernels raise (their words differ from its CPU
    kernels'): the shape so far, grown from the right one argument at a time, and the first argument that fails."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        pass
    common = [1] * max(len(s) for s in shapes)
    for i, shape in enumerate(shapes):
        for d in range(-1, -len(shape) - 1, -1):
            if common[d] == 1:
                common[d] = shape[d]
            elif shape[d] != 1 and shape[d] != common[d]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[d]} at {d}! Mismatching argument at index "
                    f"{i} had torch.Size([{', '.join(map(str, shape))}]); but expected shape should be broadcastable "
                    f"to [{', '.join(map(str, common))}]")
    # they broadcast, to more elements than 64 bits count (numpy's limit too)
    raise RuntimeError("numel: integer multiplication overflow")


def _matmul_shape(a: tuple, b: tuple) -> tuple:
    """np.matmul's result shape, or numpy's ValueError (which the engine checks before: it never shows)."""
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = a if len(a) > 1 else (1,) + a
    b2 = b if len(b) > 1 else b + (1,)
    if a2[-1] != b2[-2]:
        raise ValueError("matmul: Input operand 1 has a mismatch in its core dimension 0")
    shape = np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def _empty_like(prototype, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return meta_full(prototype.shape if shape is None else shape, 0, prototype.dtype if dtype is None else dtype)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return meta_full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype)


def _copyto(dst, src, casting="same_kind", where=True):
    np.broadcast_shapes(dst.shape, np.shape(src))     # nothing is written: the result becomes a meta one


def _broadcast_to(array, shape, subok=False):
    return restride(np.broadcast_to(np.asarray(array), shape))


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """np.concatenate: the pieces' sizes along the axis added (numpy's checks made on one-element pieces)."""
    arrays = [np.asanyarray(a) for a in arrays]
    if axis is None:
        return meta_full((sum(a.size for a in arrays),), 0, dtype or np.result_type(*arrays))
    ax = np._core.numeric.normalize_axis_index(axis, arrays[0].ndim)
    small = [_one(a)[(slice(None),) * ax + (slice(0, 0),)] for a in arrays]
    for a, b in zip(arrays, arrays[1:]):
        if a.shape[:ax] + a.shape[ax + 1:] != b.shape[:ax] + b.shape[ax + 1:]:
            np.concatenate(_plain([a, b]), axis=ax)     # numpy's own refusal (the engine checks first)
    result = np.concatenate(small, axis=ax, dtype=dtype, casting=casting)
    shape = list(arrays[0].shape)
    shape[ax] = sum(a.shape[ax] for a in arrays)
    return meta_full(tuple(shape), 0, result.dtype)


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """np.stack: the pieces side by side along a new axis."""
    arrays = [np.asanyarray(a) for a in arrays]
    ax = np._core.numeric.normalize_axis_index(axis, arrays[0].ndim + 1)
    result = np.stack([_one(a) for a in arrays], axis=ax, dtype=dtype, casting=casting)
    shape = arrays[0].shape
    return meta_full(shape[:ax] + (len(arrays),) + shape[ax:], 0, result.dtype)


def _where(condition, *xy):
    if not xy:
        return restride_all(np.where(np.asarray(condition)))
    shape = broadcast_shapes([np.shape(v) for v in (condition,) + xy])
    return restride(np.where(*[_one(v) for v in (condition,) + xy]), shape)


def _reducing(func):
    """A numpy reduction (a, axis=None, ..., keepdims=False) of a meta array: computed on one element of each
    dim, the result spread over the shape the reduction leaves (no pass over the elements)."""
    def reduce(a, axis=None, *args, keepdims=False, **kwargs):
        a = np.asanyarray(a)
        small = _one(a) if a.size else a.view(np.ndarray)
        result = func(small, axis, *args, keepdims=keepdims, **kwargs)
        axes = range(a.ndim) if axis is None else np._core.numeric.normalize_axis_tuple(axis, a.ndim)
        return restride(result, tuple(1 if d in axes else n for d, n in enumerate(a.shape)
                                      if keepdims or d not in axes))
    return reduce


def _along(func):
    """A numpy function along an axis that keeps the shape (sort, argsort, cumsum): the whole array flattened when
    the axis is None."""
    def run(a, axis=-1, *args, **kwargs):
        a = np.asanyarray(a)
        small = _one(a) if a.size else a.view(np.ndarray)
        result = func(small, axis, *args, **kwargs)
        return restride(result, (a.size,) if axis is None else a.shape)
    return run


def _copy(a, *args, **kwargs):
    """np.copy: a meta array of the same shape (nothing to copy). (np.ascontiguousarray and np.asarray dispatch only
    on `like=`: the kernels check for a meta array before calling them.)"""
    return meta_like(np.asanyarray(a))


_FUNCTIONS = {np.copy: _copy, np.empty_like: _empty_like, np.zeros_like: _empty_like, np.ones_like: lambda a, *r, **k: _full_like(
    a, 1, *r, **k), np.full_like: _full_like, np.copyto: _copyto, np.broadcast_to: _broadcast_to,
    np.concatenate: _concatenate, np.stack: _stack, np.where: _where}
_FUNCTIONS.update({f: _reducing(f) for f in (np.count_nonzero, np.argmax, np.argmin, np.any, np.all, np.sum, np.mean,
                                               np.amax, np.amin, np.max, np.min, np.prod, np.std, np.var, np.nansum,
                                               np.nanmax, np.nanmin)})
_FUNCTIONS.update({f: _along(f) for f in (np.sort, np.argsort, np.cumsum, np.cumprod)})
