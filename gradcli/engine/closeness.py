"""Comparing values as PyTorch does: torch.isclose, allclose, equal and torch.testing.assert_close."""

from __future__ import annotations

import collections.abc

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.recording import TYPE_WORDS, broadcast_error
from gradcli.engine.tensor import Tensor

# ------------------------------------------------------------------------------ isclose, allclose, equal


def _operands(name: str, input, other, rtol, atol, equal_nan):
    """Both arrays, checked as PyTorch's parser and isclose check them. A TypeError for a wrong type is
    reworded by the caller's argument check (engine/signatures.py) in PyTorch's words."""
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        raise TypeError(f"{name}(): arguments must be tensors")
    for value in (rtol, atol):
        if value.__class__ not in (float, int, bool):
            raise TypeError(f"{name}(): rtol and atol must be numbers")
    if equal_nan.__class__ is not bool:
        raise TypeError(f"{name}(): equal_nan must be bool")
    x, y = input._a, other._a
    if x.dtype != y.dtype:
        raise RuntimeError(f"{TYPE_WORDS[x.dtype.name]} did not match {TYPE_WORDS[y.dtype.name]}")
    check_tolerances(rtol, atol)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise broadcast_error(x.shape, y.shape) from None
    return x, y


def check_tolerances(rtol, atol) -> None:
    """isclose's checks of its tolerances (NaN refused too: the test is `>= 0`)."""
    if not rtol >= 0:                   # (the number as C++ streams a double: -1, -0.5, -1e+308, nan)
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {float(rtol):g}")
    if not atol >= 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {float(atol):g}")


def _close(x: np.ndarray, y: np.ndarray, rtol, atol, equal_nan: bool) -> np.ndarray:
    """PyTorch's isclose on two arrays of one dtype: equal, or both nan (equal_nan), or a finite
    |x - y| <= atol + |rtol * y|, computed in the arrays' float type (the default float type for
    integers and bools, as PyTorch's `rtol * other` promotes them)."""
    close = x == y
    if equal_nan and x.dtype.kind in "fVc":
        close |= np.isnan(x) & np.isnan(y)
    if rtol == 0 and atol == 0:
        return close
    if x.dtype.kind in "fVc":
        ft = x.real.dtype.type if x.dtype.kind == "c" else x.dtype.type      # complex: |x - y| in its part type
        actual = np.abs(x - y)
    else:
        ft = np.dtype(dtypes.default_float.np).type
        # the exact difference (unsigned integers would wrap around), then in the float type
        actual = np.abs(x.astype(np.int64) - y.astype(np.int64)).astype(ft)
        y = y.astype(ft)
    with np.errstate(all="ignore"):
        allowed = ft(atol) + np.abs(ft(rtol) * y)
        close |= np.isfinite(actual) & (actual <= allowed)
    return close


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    x, y = _operands("isclose", input, other, rtol, atol, equal_nan)
    return Tensor(np.asanyarray(_close(x, y, rtol, atol, equal_nan)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    x, y = _operands("allclose", input, other, rtol, atol, equal_nan)
    if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    return bool(np.all(_close(x, y, rtol, atol, equal_nan)))


def equal(input, other) -> bool:
    """Same shape and same values (the dtypes promoted to a common one; nan equals nothing)."""
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        raise TypeError("equal(): arguments must be tensors")
    x, y = input._a, other._a
    if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:
        from gradcli.engine import meta
        raise NotImplementedError(meta.NO_KERNEL.format("aten::equal"))
    return x.shape == y.shape and bool(np.array_equal(x, y))


# ------------------------------------------------------------------------------ torch.testing.assert_close

# rtol, atol by dtype, as torch.testing chooses them when neither is given (Python floats: float64's)
_TOLERANCES = {"float16": (0.001, 1e-05), "bfloat16": (0.016, 1e-05), "float32": (1.3e-06, 1e-05), "float64": (1e-07, 1e-07)}


class _Mismatch(Exception):
    """One failed comparison: the exception type to raise, its message, and where in the inputs."""

    def __init__(self, kind, msg: str, where: tuple = ()):
        super().__init__(msg)
        self.kind, self.msg, self.where = kind, msg, where


def _mismatch_msg(kind: str, extra: str, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0
    lines = [f"{kind} are not {'equal' if equality else 'close'}!", "", extra]
    for word, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol), ("relative", rel_diff, rel_idx, rtol)):
        line = f"{word.title()} difference: {diff}" if idx is None else f"Greatest {word} difference: {diff} at index {idx}"
        lines.append(line if equality else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _scalar_msg(actual, expected, rtol, atol, kind: str = "Scalars") -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(kind, f"Expected {expected} but got {actual}.", abs_diff, None, atol,
                         rel_diff, None, rtol)


def _tensor_msg(x: np.ndarray, y: np.ndarray, matches: np.ndarray, rtol, atol, kind: str = "Tensor-likes") -> str:
    total = matches.size
    wrong = total - int(np.count_nonzero(matches))
    extra = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    flat_x, flat_y, flat_m = x.reshape(-1), y.reshape(-1), matches.reshape(-1)
    if x.dtype.kind not in "fV":
        flat_x, flat_y = flat_x.astype(np.int64), flat_y.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(flat_x - flat_y)
        abs_diff[flat_m] = 0
        if abs_diff.dtype.kind in "fV":
            rel_diff = abs_diff / np.abs(flat_y)
        else:                     # integer true division: in the default float type
            ft = np.dtype(dtypes.default_float.np).type
            rel_diff = abs_diff.astype(ft) / np.abs(flat_y).astype(ft)
    rel_diff[flat_m] = 0
    # torch.max: the first greatest, or the first nan
    i, j = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))
    return _mismatch_msg(kind, extra, abs_diff[i].item(), _index(i, x.shape), atol,
                         rel_diff[j].item(), _index(j, x.shape), rtol)


def _index(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _tolerances(rtol, atol, *arrays_or_types):
    if rtol is not None and atol is not None:
        return rtol, atol
    if rtol is not None or atol is not None:
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    pairs = [_TOLERANCES.get(name, (0, 0)) for name in arrays_or_types]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _is_sparse(t) -> bool:
    return t.__class__ is not Tensor


def _attribute_mismatch(name: str, a, b) -> "_Mismatch":
    return _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.")


def _compare_tensors(a, b, rtol, atol, equal_nan, check_dtype, check_device=True, check_layout=True,
                     check_stride=False):
    """torch.testing's TensorLikePair: the attributes in PyTorch's order (shape, layout or strides, device,
    dtype), then the values: a dtype promoted, a sparse tensor made dense when the other is strided, and
    two sparse COO tensors compared by their nnz, indices (equal) and values (close)."""
    if a._a.shape != b._a.shape:
        raise _attribute_mismatch("shape", repr(a.shape), repr(b.shape))
    if _is_sparse(a) != _is_sparse(b):
        if check_layout:
            raise _attribute_mismatch("layout", a.layout, b.layout)
    elif not _is_sparse(a) and check_stride and a.stride() != b.stride():
        raise _attribute_mismatch("stride()", a.stride(), b.stride())
    if check_device and a.device != b.device:
        raise _attribute_mismatch("device", a.device, b.device)
    if check_dtype and a.dtype != b.dtype:
        raise _attribute_mismatch("dtype", repr(a.dtype), repr(b.dtype))
    if a.is_meta or b.is_meta:
        return
    if _is_sparse(a) and _is_sparse(b):
        if a.sparse_dim() != b.sparse_dim():
            raise _Mismatch(AssertionError, "The number of sparse dimensions in sparse COO tensors does not match: "
                                            f"{a.sparse_dim()} != {b.sparse_dim()}")
        if a._nnz() != b._nnz():
            raise _Mismatch(AssertionError, "The number of specified values in sparse COO tensors does not match: "
                                            f"{a._nnz()} != {b._nnz()}")
        _compare_values(a._indices()._a, b._indices()._a, 0, 0, equal_nan, "Sparse COO indices", exact=True)
        _compare_values(a._values()._a, b._values()._a, rtol, atol, equal_nan, "Sparse COO values")
        return
    _compare_values(a._a, b._a, rtol, atol, equal_nan, "Tensor-likes")


def _compare_values(x: np.ndarray, y: np.ndarray, rtol, atol, equal_nan, kind: str, exact: bool = False):
    if not exact:
        rtol, atol = _tolerances(rtol, atol, x.dtype.name, y.dtype.name)
    if x.dtype != y.dtype:
        common = dtypes.promote_types(dtypes.of_array(x), dtypes.of_array(y)).np
        x, y = x.astype(common), y.astype(common)
    if x.dtype.kind == "b":
        x, y = x.astype(np.int64), y.astype(np.int64)
    matches = _close(x, y, rtol, atol, equal_nan)
    if matches.all():
        return
    if x.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_msg(x.item(), y.item(), rtol, atol,
                                                    "Scalars" if kind == "Tensor-likes" else kind))
    raise _Mismatch(AssertionError, _tensor_msg(x, y, matches, rtol, atol, kind))


def _compare_numbers(a, b, rtol, atol, equal_nan, check_dtype):
    if check_dtype and a.__class__ is not b.__class__:
        raise _Mismatch(AssertionError, f"The (d)types do not match: {a.__class__!r} != {b.__class__!r}.")
    names = ["float64" if v.__class__ is float else "int64" for v in (a, b)]
    rtol, atol = _tolerances(rtol, atol, *names)
    if a == b or equal_nan and a != a and b != b:
        return
    diff = abs(a - b)
    if diff == diff and abs(diff) != float("inf") and diff <= atol + rtol * abs(b):
        return
    raise _Mismatch(AssertionError, _scalar_msg(a, b, rtol, atol))


# PyTorch 2.13 fails inside torch.testing on a bool against another number, and says so
_NUMBER_PAIR_BUG = (
    "Originating a NumberPair() at item {where} with\n\n{a}\n\nand\n\n{b}\n\nresulted in the unexpected "
    "exception above. If you are a user and see this message during normal operation please file an issue at "
    "https://github.com/pytorch/pytorch/issues. If you are a developer and working on the comparison functions, "
    "please except the previous error and raise an expressive `ErrorMeta` instead.")


def _is_number(v) -> bool:
    cls = v.__class__
    return cls is int or cls is float or cls is bool


def _type_repr(v) -> str:
    cls = v.__class__
    if _is_tensor_like(v):
        from gradcli.engine import parameter
        return "<class 'torch.nn.parameter.Parameter'>" if parameter.is_parameter(v) else "<class 'torch.Tensor'>"
    if cls.__module__ == "builtins":
        return f"<class '{cls.__name__}'>"
    # a script's own class: CPython names it with the script's module
    return f"<class '__main__.{cls.__qualname__}'>"


def _is_tensor_like(v) -> bool:
    from gradcli.engine.sparse import SparseTensor
    return v.__class__ is Tensor or v.__class__ is SparseTensor


def _walk(actual, expected, where: tuple, options: tuple) -> None:
    """Compare the two values, recursing into sequences and mappings as torch.testing does."""
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        if not options[-1] and _type_repr(actual) != _type_repr(expected):       # allow_subclasses=False
            raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {_type_repr(actual)} "
                                       f"and {_type_repr(expected)}.", where)
        try:
            _compare_tensors(actual, expected, *options[:-1])
        except _Mismatch as e:
            e.where = where
            raise
        return
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", where)
        return
    if actual.__class__ is bool and expected.__class__ is bool:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}", where)
        return
    if _is_number(actual) and _is_number(expected):
        if (actual.__class__ is bool) != (expected.__class__ is bool):
            raise RuntimeError(_NUMBER_PAIR_BUG.format(
                where="".join(repr([k]) for k in where), a=f"{type(actual).__name__}(): {actual!r}",
                b=f"{type(expected).__name__}(): {expected!r}"))
        try:
            _compare_numbers(actual, expected, *options[:4])
        except _Mismatch as e:
            e.where = where
            raise
        return
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != "
                                            f"{len(expected)}", where)
        for i, (a, b) in enumerate(zip(actual, expected)):
            _walk(a, b, where + (i,), options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        keys_a, keys_b = set(actual.keys()), set(expected.keys())
        if keys_a != keys_b:
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {_sorted(keys_b - keys_a)}\n"
                                            f"Additional keys in the actual mapping: {_sorted(keys_a - keys_b)}",
                            where)
        # sorted when the keys sort, so the first failure found is always the same one
        for key in _sorted(actual.keys()):
            _walk(actual[key], expected[key], where + (key,), options)
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {_type_repr(actual)} "
                               f"and {_type_repr(expected)}.", where)


def _sorted(keys) -> list:
    try:
        return sorted(keys)
    except TypeError:
        return list(keys)


def _is_sequence(v) -> bool:
    return isinstance(v, collections.abc.Sequence) and not isinstance(v, str)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """torch.testing.assert_close: None when `actual` and `expected` are close, else PyTorch's
    AssertionError (or TypeError for values it cannot compare), its message word for word."""
    if (rtol is None) != (atol is None):
        _tolerances(rtol, atol)
    try:
        _walk(actual, expected, (), (rtol, atol, equal_nan, check_dtype, check_device, check_layout, check_stride,
                                     allow_subclasses))
    except _Mismatch as e:
        if msg.__class__ is str:
            raise e.kind(msg) from None
        text = e.msg
        if e.where:
            text += "\n\nThe failure occurred for item " + "".join(repr([k]) for k in e.where)
        raise e.kind(msg(text) if callable(msg) else text) from None
