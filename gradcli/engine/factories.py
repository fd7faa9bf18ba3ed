"""Tensor creation: torch.tensor, ones/zeros/full/eye and their *_like forms, ranges, random tensors and
random fills, generators and RNG state, legacy constructors."""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget
from gradcli.engine import autograd, dtypes, rng, signatures
from gradcli.engine.recording import (TYPE_WORDS, Op, apply, broadcast_error, check_list_int, checked_scalar,
                                      int64_arg, int_param, number_arg, result_dtype, scalar_int, scalar_param,
                                      type_word)
from gradcli.engine.tensor import Size, Tensor, check_device, factory_device
from gradcli.engine.layout import memory_format_arg, new_in_format, preserved
from gradcli.engine.state import STATE


def _type_name(x) -> str:
    """The type name PyTorch's argument errors use."""
    if x.__class__ is Tensor:
        return "Tensor"
    if isinstance(x, dtypes.DType):
        return "torch.dtype"
    if isinstance(x, rng.Generator):
        return "torch._C.Generator"      # its C type, as PyTorch names a value it got
    return type(x).__name__


_OPTIONS = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
            "bool pin_memory = False, bool requires_grad = False")
_OUT_OPTIONS = "Tensor out = None, " + _OPTIONS

# The overloads PyTorch lists when no signature of a factory matches its arguments.
SIGNATURES = {
    "rand": ("tuple of ints size, *, torch.Generator generator, " + _OUT_OPTIONS,
             "tuple of ints size, *, " + _OUT_OPTIONS),
    "randperm": ("int n, *, torch.Generator generator, " + _OUT_OPTIONS, "int n, *, " + _OUT_OPTIONS),
    "randint": ("int high, tuple of ints size, *, torch.Generator generator, " + _OUT_OPTIONS,
                "int high, tuple of ints size, *, " + _OUT_OPTIONS,
                "int low, int high, tuple of ints size, *, torch.Generator generator, " + _OUT_OPTIONS,
                "int low, int high, tuple of ints size, *, " + _OUT_OPTIONS),
    "normal": ("Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
               "Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None",
               "float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
               "float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
               + _OUT_OPTIONS),
    "arange": ("Number end, *, " + _OUT_OPTIONS, "Number start, Number end, *, " + _OPTIONS,
               "Number start, Number end, Number step = 1, *, " + _OUT_OPTIONS),
    "linspace": tuple(f"{a} start, {b} end, int steps, *, " + _OUT_OPTIONS
                      for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"),
                                   ("Number", "Number"))),
}
SIGNATURES["logspace"] = tuple(f"{a} start, {b} end, int steps, float base = 10.0, *, " + _OUT_OPTIONS
                               for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"),
                                            ("Number", "Number")))
SIGNATURES["randn"] = SIGNATURES["rand"]
_LIKE_OPTIONS = "torch.memory_format memory_format = None, " + _OPTIONS
SIGNATURES["rand_like"] = SIGNATURES["randn_like"] = ("Tensor input, *, torch.Generator generator, " + _LIKE_OPTIONS,
                                                      "Tensor input, *, " + _LIKE_OPTIONS)
SIGNATURES["randint_like"] = tuple(f"Tensor input, {first}, *, {gen}" + _LIKE_OPTIONS
                                   for first in ("int low, int high", "Tensor high", "int high")
                                   for gen in ("torch.Generator generator, ", ""))
SIGNATURES["eye"] = ("int n, *, " + _OUT_OPTIONS, "int n, int m, *, " + _OUT_OPTIONS)
SIGNATURES["float_power"] = ("Tensor input, Tensor exponent, *, Tensor out = None",
                             "Number self, Tensor exponent, *, Tensor out = None",
                             "Tensor input, Number exponent, *, Tensor out = None")


def invalid_arguments(name: str, args: tuple, kwargs: dict) -> TypeError:
    """PyTorch's "received an invalid combination of arguments" error for factory `name`."""
    got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    lines = "".join(f" * ({sig})\n" for sig in SIGNATURES[name])
    tail = ", " if kwargs and not args else ""      # PyTorch's quirk: a trailing ", " after keywords only
    return TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}{tail}), "
                     f"but expected one of:\n{lines}")


def as_int(x):
    """x as an int when PyTorch takes it for one (ints and one-element integer tensors), else None."""
    if x.__class__ is int:
        return x
    if x.__class__ is Tensor and x._a.size == 1 and x._a.dtype.kind in "iu":
        return int(x._a.reshape(()).item())
    if isinstance(x, int) and not isinstance(x, bool):
        return int(x)
    return None


def _as_number(x):
    """x as a Python number when PyTorch takes it for a Number (numbers, one-element tensors)."""
    if isinstance(x, (int, float)):
        return x
    if x.__class__ is Tensor and x._a.size == 1:
        return x._a.reshape(()).item()
    return None


def _size_args(name: str, size: tuple, position: int = 1, keyword: bool = False) -> tuple:
    """Accept f(2, 3), f((2, 3)), f([2, 3]) and f(torch.Size([2, 3])), with PyTorch's complaints. Sizes
    given one by one or in a list must start with an int; after it, bools count as 0 and 1, as in PyTorch."""
    if as_int(size[0]) is None:
        if len(size) > 1:
            raise TypeError(f"{name}() takes {position} positional argument{'s' if position > 1 else ''} but "
                            f"{len(size) + position - 1} were given")
        if not isinstance(size[0], (tuple, list)):
            where = "" if keyword else f" (position {position})"
            raise TypeError(f"{name}(): argument 'size'{where} must be tuple of ints, not {_type_name(size[0])}")
        given, size = size[0], tuple(size[0])
        if size and (size[0].__class__ is bool or as_int(size[0]) is None):
            # the parser's look at a list's first element, where a bool is not an int
            if keyword:
                raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not {_type_name(given)}")
            raise TypeError(f"{name}(): argument 'size' (position {position}) must be tuple of ints, but found "
                            f"element of type {_type_name(size[0])} at pos 0")
    dims = []
    for i, d in enumerate(size):
        n = int(d) if d.__class__ is bool else as_int(d)
        if n is None:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {_type_name(d)}\"")
        check_list_int(n, name, "size", i + 1)
        dims.append(n)
    for d in dims:
        if d < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {dims}")
    return tuple(dims)


def _shape(name: str, size: tuple, kw_size) -> tuple:
    if kw_size is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if not isinstance(kw_size, (tuple, list)):      # one int stands for the list only given positionally
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not {_type_name(kw_size)}")
        return _size_args(name, (kw_size,), keyword=True)
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return _size_args(name, size)


def _check_dtype(dtype):
    if dtype is not None and not isinstance(dtype, dtypes.DType):
        raise TypeError(f"dtype must be a torch.dtype, not {type(dtype).__name__}")
    if dtype is not None and dtype.category == dtypes.COMPLEX:
        STATE.complex_seen = True       # recording.apply checks ops from now on (gradcli.engine.ops.complexops)


def _finish(a: np.ndarray, requires_grad, on_meta=False) -> Tensor:
    if on_meta:                 # a value the factory computed, kept as the meta tensor's one element
        from gradcli.engine import meta
        a = meta.meta_like(a)
    t = Tensor(a)
    if requires_grad:
        if a.dtype.kind not in "fVc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


# ------------------------------------------------------------------ layout= and pin_memory=
PIN_MEMORY = ("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available "
              "on this system.")
# the creation functions that take layout= (and pin_memory=, but for `range`), and what a sparse layout makes:
# "zeros" a sparse COO tensor of zeros (nnz 0), "full" PyTorch's refusal of a filled sparse tensor
SPARSE_ZEROS = frozenset(("zeros", "empty", "zeros_like", "new_zeros", "new_empty"))
SPARSE_FULL = frozenset(("ones", "full"))


def creation_options(name: str, kwargs: dict, pin: bool = True):
    """Take `layout` and `pin_memory` out of a creation function's keywords, checked as PyTorch checks them:
    a layout that is not a torch.layout and a pin_memory that is not a bool are TypeErrors, pin_memory=True
    is PyTorch's error on a machine without an accelerator. Returns the sparse layout when one was asked for,
    else None (torch.strided, or no layout, is the only layout the function then makes)."""
    layout = kwargs.pop("layout", None)
    if layout is not None and layout.__class__ is not dtypes.Layout:
        raise TypeError(f"{name}(): argument 'layout' must be torch.layout, not {signatures.type_name(layout)}")
    if pin and "pin_memory" in kwargs:
        pin_memory = kwargs.pop("pin_memory")
        if pin_memory is not None and pin_memory.__class__ is not bool:
            raise TypeError(f"{name}(): argument 'pin_memory' must be bool, not {signatures.type_name(pin_memory)}")
        if pin_memory:
            raise RuntimeError(PIN_MEMORY)
    return layout if layout is dtypes.sparse_coo else None


def with_creation_options(fn, name: str, pin: bool = True, layout: bool = True):
    """`fn` taking PyTorch's layout= and pin_memory= too (`pin` False: layout= only, as torch.range; `layout`
    False: pin_memory= only, as torch.tensor)."""
    def create(*args, **kwargs):
        if "layout" not in kwargs and "pin_memory" not in kwargs:
            return fn(*args, **kwargs)
        if not layout and "layout" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'layout'")
        if creation_options(name, kwargs, pin) is not None:
            return sparse_layout(name, fn(*args, **kwargs))
        return fn(*args, **kwargs)
    create.__name__ = create.__qualname__ = getattr(fn, "__name__", name)
    create.__wrapped__ = fn
    return create


def sparse_layout(name: str, dense: Tensor):
    """What `name` makes with layout=torch.sparse_coo, from the tensor it makes with the strided layout."""
    if name in SPARSE_FULL:
        raise RuntimeError("full(...) is not implemented for sparse layout")
    if name not in SPARSE_ZEROS:
        where = f"Tensor.{name}" if name.startswith("new_") else name
        raise NotImplementedError(f"gradcli does not implement torch.{where} with layout=torch.sparse_coo")
    from gradcli.engine.sparse import SparseTensor
    a = dense._a
    out = SparseTensor(np.zeros((a.ndim, 0), np.int64), np.zeros((0,), a.dtype), a.shape, True)
    if dense.requires_grad:
        out.requires_grad = True
    return out


def filled(name, size, value, dtype, requires_grad, kw_size=None, device=None, factory=False):
    """A tensor of `size` (as the varargs factories take it) filled with `value`; `name`: the function
    PyTorch's messages name (ones, new_zeros, ...). `factory`: torch.ones and its kin, which check the
    device (given, or the default one) once the arguments are read, before allocating, as PyTorch does."""
    _check_dtype(dtype)
    try:
        shape = _shape(name, size, kw_size)
    except (TypeError, RuntimeError):
        if factory and _first_size_is_int(size, kw_size):
            factory_device(device)
        raise
    npdt = (dtype or dtypes.default_float).np
    if factory and factory_device(device) or not factory and device is not None and check_device(device):
        return _meta_filled(shape, value, npdt, requires_grad)
    budget.check_tensor(shape, npdt.itemsize)      # before allocating: PyTorch's allocator message
    return _finish(np.full(shape, value, dtype=npdt), requires_grad)


def _meta_filled(shape, value, npdt, requires_grad) -> Tensor:
    """A factory's tensor on the meta device: one element, whatever the shape (no budget to check, nothing drawn
    from a generator)."""
    from gradcli.engine import meta
    return _finish(meta.meta_full(shape, value, npdt), requires_grad)


def _first_size_is_int(size: tuple, kw_size) -> bool:
    """PyTorch's parser looks at the first size only, then the device is set up, then the sizes are unpacked
    and checked: a later size that is no int, an int past 64 bits, or a negative size comes after the device's
    error, a first size that is no int before it."""
    values = kw_size if kw_size is not None else (size[0] if len(size) == 1 else size)
    if values.__class__ not in (tuple, list, Size):
        values = (values,)
    return bool(values) and as_int(values[0]) is not None


def ones(*size, dtype=None, requires_grad=False, device=None, out=None, **kw):
    return filled("ones", size, 1, dtype, requires_grad, _size_kw("ones", kw), device, True)


def zeros(*size, dtype=None, requires_grad=False, device=None, out=None, **kw):
    return filled("zeros", size, 0, dtype, requires_grad, _size_kw("zeros", kw), device, True)


def empty(*size, dtype=None, requires_grad=False, device=None, memory_format=None, **kw):
    # PyTorch leaves the memory uninitialised; zeros keep gradcli's output deterministic
    memory_format_arg("empty", memory_format)
    t = filled("empty", size, 0, dtype, requires_grad, _size_kw("empty", kw), device, True)
    if memory_format is None or memory_format is dtypes.contiguous_format:
        return t
    if memory_format is dtypes.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    a = new_in_format(t._a.shape, memory_format, lambda shape: np.zeros(shape, t._a.dtype))
    return t if t._a.__class__ is not np.ndarray else _finish(a, requires_grad)     # (a meta tensor keeps no layout)


def _like_layout(a: np.ndarray, memory_format, make) -> np.ndarray:
    """A *_like factory's new array shaped like `a`, laid out in `memory_format` (None: preserve_format, as
    layout.preserved); `make(shape)` makes the row-major array."""
    if memory_format is None or memory_format is dtypes.preserve_format:
        return preserved(a, make)
    return new_in_format(a.shape, memory_format, make)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """torch.empty_strided (zeros here, as empty): the strides of a permutation of a contiguous layout, the
    layouts gradcli's results follow; strides that leave gaps or make elements share memory are refused."""
    for position, (name, value) in enumerate((("size", size), ("stride", stride)), 1):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"empty_strided(): argument '{name}' (position {position}) must be tuple of ints, not "
                            f"{_type_name(value)}")
    shape = _size_args("empty_strided", (tuple(size),))
    strides = tuple(as_int(st) for st in stride)
    if None in strides:
        raise TypeError(signatures.check("torch.empty_strided", (size, stride), {}))
    on_meta = factory_device(device)
    _check_dtype(dtype)
    if len(strides) != len(shape):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
                           f"({len(strides)})")
    if any(st < 0 and n > 1 for n, st in zip(shape, strides)):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(strides)}")
    npdt = (dtype or dtypes.default_float).np
    if on_meta:
        return _meta_filled(shape, 0, npdt, requires_grad)
    budget.check_tensor(shape, npdt.itemsize)
    a = np.zeros(shape, npdt)
    if a.size:
        expected = 1
        for st, n in sorted((st, n) for n, st in zip(shape, strides) if n != 1):
            if st != expected:
                raise NotImplementedError(
                    f"gradcli does not implement torch.empty_strided with strides {list(strides)} for sizes "
                    f"{list(shape)}: only the strides of a contiguous layout with its dims in some order (no gaps, "
                    "no shared elements)")
            expected *= n
        order = sorted(range(len(shape)), key=lambda d: strides[d], reverse=True)
        a = np.zeros([shape[d] for d in order], npdt).transpose(np.argsort(order))
    return _finish(a, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, device=None, requires_grad=False, **kw):
    """torch.empty_permuted (zeros here, as empty): a contiguous tensor of the sizes in `physical_layout`'s order
    (outermost first), seen in the logical order. (layout= strided and pin_memory= False taken by keyword.)"""
    for k, v in kw.items():
        if k not in ("layout", "pin_memory"):
            raise TypeError(f"empty_permuted() got an unexpected keyword argument '{k}'")
        if v not in (None, False, dtypes.strided):
            raise NotImplementedError(f"gradcli does not implement torch.empty_permuted with {k}={v}")
    for position, (name, value) in enumerate((("size", size), ("physical_layout", physical_layout)), 1):
        if not isinstance(value, (tuple, list, Size)) or any(as_int(v) is None for v in value):
            raise TypeError(f"empty_permuted(): argument '{name}' (position {position}) must be tuple of ints, not "
                            f"{_type_name(value)}")
    shape = _size_args("empty_permuted", (tuple(size),))
    order = tuple(as_int(d) for d in physical_layout)
    on_meta = factory_device(device)
    _check_dtype(dtype)
    if len(order) != len(shape):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(shape)} is not equal to len(physical_layout) = {len(order)}")
    seen = [False] * len(shape)
    for i, d in enumerate(order):
        if not 0 <= d < len(shape):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {len(shape) - 1}, but got {d} at "
                               f"index {i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if seen[d]:
            raise RuntimeError("Duplicate dim not allowed")
        seen[d] = True
    npdt = (dtype or dtypes.default_float).np
    if on_meta:
        return _meta_filled(shape, 0, npdt, requires_grad)
    budget.check_tensor(shape, npdt.itemsize)
    return _finish(np.zeros([shape[d] for d in order], npdt).transpose(np.argsort(order)), requires_grad)


def _size_kw(name: str, kw: dict):
    """The `size=` keyword of the varargs factories (the only extra keyword they take)."""
    for k in kw:
        if k != "size":
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    return kw.get("size")


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    return filled_as("full", size, fill_value, dtype, requires_grad, factory_device(device))


def filled_as(name: str, size, fill_value, dtype, requires_grad, on_meta=False) -> Tensor:
    """torch.full, and Tensor.new_full (its messages naming `name`): a sequence of sizes, filled."""
    _check_dtype(dtype)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not {_type_name(size)}")
    if fill_value.__class__ is Tensor:      # a 0-d tensor without grad is read as its value
        fill_value = number_arg(fill_value, name, "fill_value", 2)
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    shape = _size_args(name, (tuple(size),))
    checked_scalar(fill_value, dtype.np)
    if on_meta:
        return _meta_filled(shape, fill_value, dtype.np, requires_grad)
    budget.check_tensor(shape, dtype.itemsize)
    return _finish(np.full(shape, fill_value, dtype=dtype.np), requires_grad)


def _like(name, t, value, dtype, requires_grad, device=None, memory_format=None):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")
    memory_format_arg(name, memory_format)
    _check_dtype(dtype)
    npdt = dtype.np if dtype is not None else t._a.dtype
    if value.__class__ is Tensor:       # a 0-d tensor without grad is read as its value
        value = number_arg(value, name, "fill_value", 2)
    checked_scalar(value, npdt)
    if npdt.kind == "b":
        value = bool(value)             # any number not 0 is True (numpy refuses ints past int64)
    if _lands_on_meta(t, device):
        return _meta_filled(t._a.shape, value, npdt, requires_grad)
    budget.check_tensor(t._a.shape, npdt.itemsize)
    return _finish(_like_layout(t._a, memory_format, lambda shape: np.full(shape, value, dtype=npdt)), requires_grad)


def ones_like(input, dtype=None, requires_grad=False, device=None, memory_format=None):
    return _like("ones_like", input, 1, dtype, requires_grad, device, memory_format)


def zeros_like(input, dtype=None, requires_grad=False, device=None, memory_format=None):
    return _like("zeros_like", input, 0, dtype, requires_grad, device, memory_format)


def full_like(input, fill_value, dtype=None, requires_grad=False, device=None, memory_format=None):
    return _like("full_like", input, fill_value, dtype, requires_grad, device, memory_format)


def empty_like(input, dtype=None, requires_grad=False, device=None, memory_format=None):
    # uninitialised in PyTorch; zeros here, as for empty()
    return _like("empty_like", input, 0, dtype, requires_grad, device, memory_format)


def _lands_on_meta(t, device) -> bool:
    """Whether a *_like factory's tensor goes on the meta device: the one asked for (checked), else the input's
    (a *_like factory ignores the default device)."""
    if device is not None:
        return check_device(device)
    return t.__class__ is Tensor and t._a.__class__ is not np.ndarray


def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    on_meta = factory_device(device)
    _check_dtype(dtype)
    rows = as_int(n)
    if rows is None:
        raise TypeError(f"eye(): argument 'n' (position 1) must be int, not {_type_name(n)}")
    cols = rows if m is None else as_int(m)
    if cols is None:
        raise invalid_arguments("eye", (n, m), {})
    int_param(n, m)
    if rows < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {rows}")
    if cols < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {cols}")
    if rows * cols >= 1 << 63:              # eye's kernel counts the elements first (zero_), in int64
        raise RuntimeError("numel: integer multiplication overflow")
    if on_meta:
        return _meta_filled((rows, cols), 0, (dtype or dtypes.default_float).np, requires_grad)
    budget.check_tensor((rows, cols), (dtype or dtypes.default_float).itemsize)
    return _finish(np.eye(rows, cols, dtype=(dtype or dtypes.default_float).np), requires_grad)


# ------------------------------------------------------------------------------------------- ranges

def _not_implemented(kernel: str, dt: np.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_SCALAR_NAMES[dt.name]}\'')


_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long", "int32": "Int",
                 "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}

# arange's kernel fills contiguous output two SIMD vectors (of 32 bytes) at a time: each vector
# starts from base = start + step*i and steps by adding k*step to it, the remainder element by
# element; the AVX2 build fuses those multiply-adds.
_ARANGE_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}


def _arange_float(start: float, step: float, n: int, dt: np.dtype) -> np.ndarray:
    lanes = _ARANGE_LANES.get(dt)
    idx = np.arange(n, dtype=np.float64)
    if lanes is None:           # float16: computed in float, not modelled further
        return (start + step * idx).astype(dt)
    fma = _multiply_add if _exact_multiples(start, step, max(n, lanes)) else rng._fma64
    out = fma(step, idx, start)                 # the scalar formula, used for the remainder
    bulk = (n // (2 * lanes)) * 2 * lanes
    if bulk:
        bases = out[:bulk:lanes].astype(dt).astype(np.float64)
        k = np.arange(lanes, dtype=np.float64)
        out[:bulk] = fma(k[None, :], step, bases[:, None]).reshape(-1)
    return out.astype(dt)


def _exact_multiples(start: float, step: float, n: int) -> bool:
    """Whether rng._fma64(step, i, start) and the vector pass's fma(k, step, base) are the plain
    expressions for every whole i below n: step * i is exact (steps of 1, 0.5 or 3, not 0.1), so the
    fused multiply-add rounds once as the plain sum does. Left to _fma64: operands near the ends of the
    float range (it takes another path there), and any sum of two -0.0, for which it gives +0.0: a start
    of -0.0, or a base that float32 rounds to -0.0 (values are multiples of 2**-120 here, never that small)."""
    numerator, denominator = abs(step).as_integer_ratio()      # the denominator is a power of two
    return (numerator * n < 1 << 53 and denominator <= 1 << 120 and start.as_integer_ratio()[1] <= 1 << 120
            and abs(start) + abs(step) * n < 2.0 ** 990 and (start != 0 or math.copysign(1.0, start) > 0))


def _multiply_add(a, b, c):
    return a * b + c


def _wrap64(v: int) -> int:
    """v as a wrapped int64 (two's complement), as the kernel's 64-bit arithmetic leaves it."""
    return ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def _check_bounds(start: float, end: float, step: float) -> None:
    """arange's and range's checks of their bounds, made in double."""
    if not (step > 0 or step < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {rng._cxx_double(start)} -> {rng._cxx_double(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange(*args, dtype=None, requires_grad=False, device=None, **kw):
    """torch.arange(end) / (start, end) / (start, end, step): int64 unless a bound or the step is a
    float; the element count and the checks as in PyTorch's compute_arange_size."""
    on_meta = factory_device(device)
    _check_dtype(dtype)
    if dtype is not None and dtype.is_complex:      # (PyTorch's kernel is not compiled for complex types)
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{TYPE_WORDS[dtype.name]}\'')
    names = ("end",) if len(args) == 1 and not kw else ("start", "end", "step")
    if len(args) > 3 or any(k not in names for k in kw):
        raise invalid_arguments("arange", args, kw)
    positions = {k: i + 1 for i, k in enumerate(names[:len(args)])}
    values = dict(zip(names, args))
    for k, v in kw.items():
        if k in values:
            raise TypeError(f"arange() got multiple values for argument '{k}'")
        values[k] = v
    if "end" not in values:
        raise invalid_arguments("arange", args, kw)
    values.setdefault("start", 0)
    values.setdefault("step", 1)
    numbers = {}
    for k in ("start", "end", "step"):
        v = values[k]
        if v.__class__ is Tensor and v._a.ndim == 0 and not v.requires_grad:   # read as its value
            v = v._a.item()
        if not isinstance(v, (int, float)):
            where = f" (position {positions[k]})" if k in positions else ""
            raise TypeError(f"arange(): argument '{k}'{where} must be Number, not {_type_name(values[k])}")
        if v.__class__ is int:
            scalar_int(v)                       # the parser reads an int into 64 bits, signed or not
        numbers[k] = v
    start, end, step = numbers["start"], numbers["end"], numbers["step"]
    if dtype is None:
        floating = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.default_float if floating else dtypes.int64
    dt = dtype.np
    if dt == np.bool_:
        raise _not_implemented("arange_cpu", dt)
    dstart, dend, dstep = float(start), float(end), float(step)
    _check_bounds(dstart, dend, dstep)
    if dt == np.int64:                      # (after the checks PyTorch makes in double)
        for v in (start, end, step):
            if v.__class__ is int:
                checked_scalar(v, np.dtype(np.int64))     # an int64 range reads its bounds as int64
    integral = dt.kind in "iu"
    if dt == np.int64:
        istart, iend, istep = int(start), int(end), int(step)
        if istep == 0:
            raise ValueError("step must be nonzero")
        sgn = (istep > 0) - (istep < 0)
        num = _wrap64(_wrap64(_wrap64(iend - istart) + istep) - sgn)      # C++'s int64 arithmetic, wrapping
        quotient = abs(num) // abs(istep)             # C++ integer division truncates towards zero
        size = float(quotient if (num < 0) == (istep < 0) else -quotient)
    else:
        size = math.ceil((dend - dstart) / dstep) if math.isfinite((dend - dstart) / dstep) else math.inf
    if not (0 <= size <= 2.0 ** 63):
        raise RuntimeError("invalid size, possible overflow?")
    if size == 2.0 ** 63:                   # the size as int64 wraps to its minimum
        raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: {-(1 << 63)}")
    n = int(size)
    if on_meta:
        return _meta_filled((n,), 0, dt, requires_grad)
    budget.check_tensor((n,), dt.itemsize)
    if integral:
        # int64 arithmetic, wrapping on overflow like the kernel's, then cast to the output type
        with np.errstate(over="ignore"):
            out = (np.int64(int(start)) + np.int64(int(step)) * np.arange(n, dtype=np.int64)).astype(dt)
    else:
        out = _arange_float(dstart, dstep, n, dt)
    return _finish(out, requires_grad)


RANGE_DEPRECATED = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                    "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                    "[start, end).")


def inclusive_range(*args, **kw):
    """torch.range(start, end, step=1): deprecated (its warning), end included, the default float type
    whatever the bounds. As PyTorch's range_out: the bounds are converted to the accumulation type (double
    for float and double, float for the half types, int64 for the integers, truncated), checked in double,
    the size (end - start) / step + 1 truncated and each value start + i * step, in that type."""
    values = signatures.parsed("torch.range", args, kw, {"step": 1, "requires_grad": False})
    if STATE.warn is not None:      # (a session shows it; the engine used alone does not)
        STATE.warn("UserWarning", RANGE_DEPRECATED)
    dtype, requires_grad = values["dtype"], values["requires_grad"]
    if values["layout"] not in (None, dtypes.strided):
        raise NotImplementedError("gradcli does not implement torch.range with a sparse layout")
    on_meta = factory_device(values["device"])
    _check_dtype(dtype)
    dt = (dtype or dtypes.default_float).np
    if dt.kind in "bc":
        raise _not_implemented("range_cpu", dt) if dt.kind == "b" else NotImplementedError(
            f'"range_cpu" not implemented for \'{TYPE_WORDS[dtype.name]}\'')
    numbers = []
    for k in ("start", "end", "step"):
        v = values[k]
        v = v._a.item() if v.__class__ is Tensor else v     # a 0-d tensor, read as its value
        numbers.append(int(v) if v.__class__ is bool else v)
    integral = dt.kind in "iu"
    acc = np.dtype(np.int64) if integral else np.dtype(np.float32) if dt.itemsize == 2 else np.dtype(np.float64)
    for v in numbers:
        checked_scalar(v, acc)
    dstart, dend, dstep = (float(v) for v in numbers)
    _check_bounds(dstart, dend, dstep)
    if integral:
        start, end, step = (int(v) for v in numbers)        # C++'s conversions truncate toward zero
        if step == 0:
            raise NotImplementedError("gradcli does not implement torch.range with an integer dtype and a step "
                                      "that truncates to 0 (PyTorch 2.13 divides by it and the process dies)")
        span = _wrap64(end - start)
        quotient = abs(span) // abs(step)            # C++ integer division truncates towards zero
        size = _wrap64((quotient if (span < 0) == (step < 0) else -quotient) + 1)
    else:
        start, end, step = (acc.type(v) for v in numbers)
        with np.errstate(all="ignore"):
            count = float((end - start) / step + acc.type(1))
        size = int(count) if count < 2.0 ** 63 else -(1 << 63)      # past int64 the conversion gives its minimum
    if size < 0:
        raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: {size}")
    if on_meta:
        return _meta_filled((size,), 0, dt, requires_grad)
    budget.check_tensor((size,), dt.itemsize)
    with np.errstate(over="ignore"):
        if integral:        # int64 arithmetic, wrapping as the kernel's does, then cast to the output type
            out = (np.int64(start) + np.int64(step) * np.arange(size, dtype=np.int64)).astype(dt)
        else:
            out = (start + np.arange(size, dtype=acc) * step).astype(dt)
    return _finish(out, requires_grad)


def linspace(*args, dtype=None, requires_grad=False, device=None, **kw):
    """torch.linspace: the first half counted up from start, the second half down from end, with
    the multiply-adds fused as in the AVX2 build."""
    if dtype.__class__ is dtypes.DType and dtype.is_complex:
        raise NotImplementedError("gradcli does not implement complex tensors in torch.linspace")
    bounds, steps, dt = _spaced("linspace", args, dtype, device, requires_grad, kw)
    if factory_device(device):
        return _meta_filled((steps,), 0, dt, requires_grad)
    if steps == 0:
        out = np.zeros(0, dt)
    elif steps == 1:                                # fill_(start): start alone converted, with its check
        out = np.full(1, checked_scalar(bounds[0], dt), dtype=dt)
    else:
        if dt == np.bool_:
            raise _not_implemented("linspace_cpu", dt)
        checked_scalar(bounds[0], dt)               # the kernel converts both to the output type, checked
        checked_scalar(bounds[1], dt)
        out = _linspace(bounds[0], bounds[1], steps, dt)
    return _finish(out, requires_grad)


def logspace(*args, base=None, dtype=None, requires_grad=False, device=None, **kw):
    """torch.logspace: base ** e for e evenly spaced from start to end, as PyTorch's scalar loop computes it:
    the exponents in double (up from start for the first half, down from end for the rest), std::pow in
    double (a float base for integer outputs), the result converted to the output type."""
    if dtype.__class__ is dtypes.DType and dtype.is_complex:
        raise NotImplementedError("gradcli does not implement complex tensors in torch.logspace")
    if base is not None:        # by keyword: PyTorch's messages show it among the keywords
        kw = {"base": base, **kw}
    elif len(args) == 4:
        base, args = args[3], args[:3]
    bounds, steps, dt = _spaced("logspace", args, dtype, device, requires_grad, kw, 10.0 if base is None else base)
    base = 10.0 if base is None else _as_number(base)
    if factory_device(device):
        return _meta_filled((steps,), 0, dt, requires_grad)
    if steps == 0:
        out = np.zeros(0, dt)
    elif steps == 1:                                # fill_(pow(base, start)), start not converted
        out = _converted(np.power(np.float64(base), np.float64(bounds[0])), dt)
    else:
        if dt == np.bool_:
            raise _not_implemented("logspace_cpu", dt)
        s, e = (np.array(v, dtype=np.int64 if v.__class__ is int else None).astype(dt) for v in bounds)
        with np.errstate(all="ignore"):
            step = float(e - s) / (steps - 1)       # end - start in the output type, the step in double
        s, e = float(s), float(e)
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        exponents = np.where(i < half, s + step * i, e - step * (steps - i - 1))
        b = np.float64(np.float32(base)) if dt.kind in "iu" else np.float64(base)
        with np.errstate(all="ignore"):
            out = _converted(np.power(b, exponents), dt)
    return _finish(out, requires_grad)


def _converted(values: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Doubles stored into the output type as C++ converts them (integers truncated toward zero)."""
    with np.errstate(all="ignore"):
        return np.asanyarray(np.trunc(values) if dt.kind in "iu" else values).astype(dt).reshape(-1)


def _spaced(name: str, args: tuple, dtype, device, requires_grad, kw: dict, base=None) -> tuple:
    """linspace's and logspace's arguments, checked as PyTorch's parser and kernel check them: ([start, end] as
    numbers, steps, the output numpy dtype), the size checked against the memory budget (not on the meta device)."""
    on_meta = factory_device(device)
    _check_dtype(dtype)
    # the keywords given, in the order PyTorch's message lists them (its signature's), for its parser's errors
    given = {k: v for k, v in (("dtype", dtype), ("device", device)) if v is not None}
    shown = {**kw, **given, **({"requires_grad": requires_grad} if requires_grad else {})}
    names = ("start", "end", "steps")
    values = dict(zip(names, args))
    for k, v in kw.items():
        if k == "base" and base is not None:
            continue
        if k not in names or k in values:
            raise invalid_arguments(name, args, shown)
        values[k] = v
    if len(args) > 3 or len(values) != 3:
        raise invalid_arguments(name, args, shown)
    steps = as_int(values["steps"])
    if steps is None or (base is not None and _as_number(base) is None):   # no signature takes it
        raise invalid_arguments(name, args, shown)
    if values["steps"].__class__ is int:            # read before end, and end before start (int_param)
        int64_arg(values["steps"])
    scalar_param(values["start"], values["end"])
    bounds = []
    for k in ("start", "end"):
        v = values[k]
        if v.__class__ is Tensor and v._a.ndim != 0:
            raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {k} "
                               f"with {v._a.ndim} dimension(s).")
        number = _as_number(v)
        if number is None:
            raise invalid_arguments(name, args, shown)
        bounds.append(number)
    dt = (dtype or dtypes.default_float).np
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if not on_meta:
        budget.check_tensor((steps,), dt.itemsize)
    return bounds, steps, dt


def _linspace(start, end, steps: int, dt: np.dtype) -> np.ndarray:
    half = steps // 2
    up = np.arange(half, dtype=np.float64)
    down = np.arange(steps - half - 1, -1, -1, dtype=np.float64)
    if dt.char in "eE":
        # the kernel's step and arithmetic in float16 (bfloat16), each operation rounded: step = (end - start) /
        # (steps - 1), then start + step * i for the first half and end - step * (steps - 1 - i) for the rest (its
        # scalar loop; from 16 elements on its vector loop takes whole vectors, by a width that depends on the
        # processor)
        f16 = dt.type
        s, e = f16(start), f16(end)
        step = f16(np.float32(f16(np.float32(e) - np.float32(s))) / np.float32(steps - 1))
        lo = (s + (step * up.astype(f16)).astype(f16)).astype(f16)
        hi = (e - (step * down.astype(f16)).astype(f16)).astype(f16)
        return np.concatenate((lo, hi))
    if dt.kind in "fV":
        s, e = dt.type(start), dt.type(end)
        step = dt.type((e - s) / dt.type(steps - 1))
        if dt == np.float32:
            lo = rng._fma32(step, up.astype(np.float32), s)
            hi = rng._fma32(-step, down.astype(np.float32), e)
        else:
            lo = rng._fma64(step, up, s)
            hi = rng._fma64(-step, down, e)
        return np.concatenate((lo, hi)).astype(dt)
    # integral outputs: start and end in the output type (a negative int wrapping into an unsigned one, as
    # C++ converts it), the step and the arithmetic in double
    s, e = (float(np.array(v, dtype=np.int64 if v.__class__ is int else None).astype(dt)) for v in (start, end))
    step = (e - s) / (steps - 1)
    vals = np.concatenate((rng._fma64(step, up, s), rng._fma64(-step, down, e)))
    return np.trunc(vals).astype(dt)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """torch.tril_indices: the (row, column) positions of a row x col matrix's lower triangle (column <= row +
    offset), row by row, as a (2, count) tensor."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, requires_grad, lower=True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """torch.triu_indices: the positions of the upper triangle (column >= row + offset)."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, requires_grad, lower=False)


def _triangle_indices(name, row, col, offset, dtype, device, requires_grad, lower: bool) -> Tensor:
    for arg, position, value in (("row", 1, row), ("col", 2, col), ("offset", 3, offset)):
        if value.__class__ is not int:
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be int, not {_type_name(value)}")
    for value in (row, col, offset):        # (the parser matches every argument's type before it unpacks one)
        int64_arg(value)
    on_meta = factory_device(device)
    _check_dtype(dtype)
    dt = (dtype or dtypes.int64).np
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dt not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise _not_implemented(name, dt)
    count = _lower_count(row, col, offset) if lower else row * col - _lower_count(row, col, offset - 1)
    budget.check_tensor((2, count), dt.itemsize)
    # the rows that hold any, each's columns [lo, hi): no mask of the whole matrix (numpy's tril_indices makes one)
    if lower:
        r = np.arange(min(max(-offset, 0), row), row if col else 0, dtype=np.int64)
        lo, hi = np.zeros_like(r), np.minimum(r + offset + 1, col)
    else:
        r = np.arange(0, max(min(row, col - offset), 0), dtype=np.int64)
        lo, hi = np.maximum(r + offset, 0), np.full_like(r, col)
    counts = hi - lo
    starts = np.cumsum(counts) - counts
    rows = np.repeat(r, counts)
    cols = np.arange(count, dtype=np.int64) - np.repeat(starts - lo, counts)
    return _finish(np.stack((rows, cols)).astype(dt), requires_grad, on_meta)


def _lower_count(row: int, col: int, offset: int) -> int:
    """How many (r, c) of a row x col matrix have c <= r + offset: the sum over rows of clamp(r + offset + 1, 0,
    col), in closed form (no array of the rows: a script may ask for a huge matrix)."""
    a = offset + 1
    r0 = min(max(-a + 1, 0), row)           # rows before r0 hold none
    r1 = max(min(max(col - a, 0), row), r0)  # rows from r1 hold all col
    middle = (r1 - r0) * a + (r0 + r1 - 1) * (r1 - r0) // 2
    return middle + (row - r1) * col


# ------------------------------------------------------------------------------------- torch.tensor

def _shape_error(data):
    """PyTorch's message for ragged nested lists, found by walking the data level by level."""
    level = [data]
    dim = 0
    while level:
        expected = None
        nxt = []
        for item in level:
            if isinstance(item, (list, tuple)):
                if expected is None:
                    expected = len(item)
                elif len(item) != expected:
                    return ValueError(f"expected sequence of length {expected} at dim {dim} (got {len(item)})")
                nxt.extend(item)
            elif expected is not None:
                return ValueError(f"expected sequence of length {expected} at dim {dim} (got 0)")
        level = nxt if expected is not None else []
        dim += 1
    return ValueError("could not build a tensor from this data")


def _plain(data):
    """Replace the tensors inside nested lists by their one value (PyTorch reads each as a Python scalar: a
    tensor of several elements is its error, worded by the tensor's kind)."""
    if isinstance(data, Tensor):
        if data._a.size != 1:
            if data._a.dtype.kind in "iu":
                raise TypeError("only integer tensors of a single element can be converted to an index")
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data._a.reshape(()).item()
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    return data


def _holds_tensor(data) -> bool:
    stack = [data]
    while stack:
        item = stack.pop()
        if item.__class__ is Tensor:
            return True
        if isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _check_items(data, dtype: dtypes.DType) -> None:
    """With a dtype given, PyTorch converts each element to it, with the words of Python's conversions for one
    that is no number ('must be real number, not NoneType'; an integer or bool dtype: 'cannot be interpreted
    as an integer'), before anything else is checked."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif not isinstance(item, (int, float)) and not (item.__class__ is complex and dtype.category == dtypes.COMPLEX):
            if dtype.category >= dtypes.FLOAT:
                raise TypeError(f"must be real number, not {_type_name(item)}")
            raise TypeError(f"'{_type_name(item)}' object cannot be interpreted as an integer")


def _not_data(item) -> Exception:
    """PyTorch's error for a value torch.tensor cannot hold."""
    if item.__class__ is str:
        return TypeError("new(): invalid data type 'str'")
    return RuntimeError(f"Could not infer dtype of {type(item).__name__}")


def _infer(data) -> dtypes.DType:
    kinds, found = set(), None
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item is True or item is False:
            kinds.add(dtypes.BOOL)
        elif isinstance(item, int):
            kinds.add(dtypes.INT)
        elif isinstance(item, float):
            kinds.add(dtypes.FLOAT)
        elif item.__class__ is complex:
            kinds.add(dtypes.COMPLEX)
        elif item.__class__ is Tensor:          # its own dtype, promoted with the rest's
            d = dtypes.of_array(item._a)
            found = d if found is None else dtypes.promote_types(found, d)
        else:
            raise _not_data(item)
    if found is not None and not kinds:
        return found
    if dtypes.COMPLEX in kinds:
        natural = dtypes.default_complex()
    elif not kinds or dtypes.FLOAT in kinds:
        natural = dtypes.default_float
    else:
        natural = dtypes.int64 if dtypes.INT in kinds else dtypes.bool_
    return natural if found is None else dtypes.promote_types(found, natural)


def _has_huge_int(data) -> bool:
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item.__class__ is int and not -(1 << 63) <= item < (1 << 63):
            return True
    return False


def _checked_ints(data, natural: dtypes.DType, target: dtypes.DType) -> np.ndarray:
    """Numbers read into a smaller integer dtype, each checked as PyTorch checks a Python number:
    a float must lie in the dtype's range (nan never does) and is truncated; an int must fit, where
    uint8 also takes -255..-1 (wrapping, as C++ converts)."""
    try:
        src = np.array(data, dtype=np.float64 if natural.category == dtypes.FLOAT else np.int64)
    except ValueError:
        raise _shape_error(data) from None
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if src.dtype.kind in "fV" and _has_huge_int(data):      # read as a 64-bit int first, as PyTorch reads ints
        raise ValueError("Overflow when unpacking long long")
    info = np.iinfo(target.np)
    if src.dtype.kind in "fV":
        with np.errstate(invalid="ignore"):
            bad = ~((src >= info.min) & (src <= info.max))
    elif info.min == 0:
        bad = (src > info.max) | (src < -int(info.max))
    else:
        bad = (src < info.min) | (src > info.max)
    ints = None
    if bad.any() and src.dtype.kind in "fV" and info.min == 0:
        # ints among floats (`[2.5, -1]`) keep the int rule: uint8 takes -255..-1 from a Python int (wrapping)
        ints = np.array(_int_mask(data), dtype=bool)
        bad &= ~(ints & (src >= -float(info.max)) & (src <= info.max))
    if bad.any():
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")
    with np.errstate(invalid="ignore"):
        out = src.astype(target.np)
    if ints is not None:
        out[ints] = src[ints].astype(np.int64).astype(target.np)
    return out


def _int_mask(data):
    """`data`'s nesting with True where an element is a Python int (or bool), False where a float."""
    if isinstance(data, (list, tuple)):
        return [_int_mask(x) for x in data]
    return data.__class__ is int or data.__class__ is bool


COPY_CONSTRUCT = ("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                  "sourceTensor.detach().clone().requires_grad_(True), rather than {}(sourceTensor).")


def script_tensor(data, dtype=None, requires_grad=False, device=None):
    """torch.tensor as a script calls it: PyTorch's warning when `data` is a tensor (see `tensor`)."""
    return tensor(data, dtype, requires_grad, device, copy_warning="torch.tensor")


def tensor(data, dtype=None, requires_grad=False, device=None, copy_warning=None):
    """A new tensor holding `data`. `copy_warning`: the function a script called (torch.tensor,
    tensor.new_tensor), whose warning PyTorch gives, once the arguments are read, when `data` is a tensor
    (a Parameter, a 0-d one, one that requires grad alike; not a list of tensors); gradcli's own calls give none."""
    on_meta = factory_device(device)
    _check_dtype(dtype)
    if requires_grad.__class__ is not bool:
        raise TypeError(f"tensor(): argument 'requires_grad' must be bool, not {_type_name(requires_grad)}")
    if isinstance(data, Tensor):
        if copy_warning is not None:
            STATE.warn("UserWarning", COPY_CONSTRUCT.format(copy_warning))
        a = data._a.astype(dtype.np if dtype else data._a.dtype, copy=True)
        return _finish(a, requires_grad, on_meta)
    return _finish(from_data(data, dtype), requires_grad, on_meta)


def from_data(data, dtype) -> np.ndarray:
    """The array torch.tensor builds from `data` (a number or nested sequences of numbers and one-element
    tensors): its dtype inferred (a tensor inside counts with its dtype) unless `dtype` is given."""
    if data.__class__ is range:
        data = list(data)
    if not isinstance(data, (list, tuple, int, float, bool, complex)):
        if dtype is not None and data.__class__ is not str:
            _check_items(data, dtype)       # (a dtype given: Python's conversion words, as for an element)
        raise _not_data(data)
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    if first.__class__ is str:      # PyTorch reads the shape along first elements: a string is one more
        raise ValueError("too many dimensions 'str'")
    natural = None
    has_tensor = isinstance(data, (list, tuple)) and any(isinstance(x, (Tensor, list, tuple)) for x in data)
    if has_tensor:
        if _holds_tensor(data):
            natural = _infer(data)
        data = _plain(data)
    if dtype is not None:
        _check_items(data, dtype)
    natural = natural or _infer(data)
    target = dtype or natural
    if target.category == dtypes.INT and natural.category != dtypes.BOOL and (
            target is not dtypes.int64 or natural.category == dtypes.FLOAT):
        return _checked_ints(data, natural, target)
    try:
        a = np.array(data, dtype=target.np if target.category < dtypes.FLOAT else
                     np.float64 if target.category == dtypes.FLOAT else np.complex128)
    except ValueError:
        raise _shape_error(data) from None
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if a.dtype != target.np:
        a = a.astype(target.np)
    return a


def as_tensor(data, *, dtype=None, device=None):
    """torch.as_tensor: a tensor of the given dtype is returned itself (another dtype: a converted copy,
    ToCopyBackward0 when it requires grad); other data is read as torch.tensor reads it."""
    on_meta = factory_device(device)
    _check_dtype(dtype)
    if data.__class__ is Tensor:
        if on_meta != (data._a.__class__ is not np.ndarray):
            return data.to(device, dtype)
        return data if dtype is None else data.to(dtype)
    return _finish(from_data(data, dtype), False, on_meta)


_ASARRAY_WARNING = ("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of False. "
                    "Pass requires_grad=False explicitly to get the old behavior and silence this warning. "
                    "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:1737.)")


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """torch.asarray: a tensor is shared when its dtype fits and copy is not True (copied, or converted,
    otherwise); its requires_grad is then set to `requires_grad` (a leaf's own flag changes, as in
    PyTorch; a computed tensor that should not require grad is detached). Other data is read as
    torch.tensor reads it (the default float dtype for numbers unless `dtype` is given)."""
    try:
        on_meta = factory_device(device)
    except AssertionError:          # (asarray asks the device's backend itself, which says it otherwise)
        raise RuntimeError("PyTorch is not linked with support for cuda devices") from None
    _check_dtype(dtype)
    for name, value in (("copy", copy), ("requires_grad", requires_grad)):
        if value is not None and value.__class__ is not bool:
            raise TypeError(f"asarray(): argument '{name}' must be bool, not {_type_name(value)}")
    tensor = obj if obj.__class__ is Tensor else None
    wanted = requires_grad if requires_grad is not None else (tensor is not None and tensor.requires_grad)
    if wanted and requires_grad is None:
        STATE.warn_once("asarray requires_grad", "UserWarning", _ASARRAY_WARNING)
    if tensor is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        return _finish(from_data(obj, dtype), wanted, on_meta)
    wrong_dtype = dtype is not None and dtype.np != tensor._a.dtype
    if copy or (copy is None and wrong_dtype):
        tensor = tensor.to(dtype, copy=True) if wrong_dtype else tensor.clone()
    elif wrong_dtype:
        raise ValueError(f"can't alias tensor with dtype '{type_word(tensor._a)}' into dtype "
                         f"'{TYPE_WORDS[dtype.name]}'.")
    if tensor.grad_fn is not None and not wanted:
        return tensor.detach()
    if wanted and tensor._a.dtype.kind not in "fVc":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return tensor.requires_grad_(wanted)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """torch.scalar_tensor: a 0-d tensor holding the number `s`, in the default float dtype unless given."""
    value = number_arg(s, "scalar_tensor", "s", 1)
    on_meta = factory_device(device)
    _check_dtype(dtype)
    npdt = (dtype or dtypes.default_float).np
    return _finish(np.array(checked_scalar(value, npdt), dtype=npdt), requires_grad, on_meta)


# the C type names of PyTorch's TensorOptions message (Tensor.new of a tensor of another dtype)
_C_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _options_text(dtype: dtypes.DType) -> str:
    return (f"TensorOptions(dtype={_C_TYPES[dtype.name]}, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def legacy_tensor(*args):
    """torch.Tensor(...): from data (always float32), an alias of a tensor, or an uninitialised (here:
    zero) tensor of a size."""
    return legacy_new(args, None)


def legacy_new(args: tuple, dtype):
    """torch.Tensor(*args) (`dtype` None: the default float dtype), or Tensor.new(*args) (`dtype`: the
    dtype of the tensor it is called on)."""
    new_dtype = dtypes.default_float if dtype is None else dtype
    if not args:
        return Tensor(np.zeros((0,), dtype=new_dtype.np))
    if len(args) == 1:
        arg = args[0]
        if isinstance(arg, Size):
            return zeros(arg, dtype=new_dtype)
        if isinstance(arg, (list, tuple)):
            return tensor(arg, dtype=new_dtype)
        if isinstance(arg, Tensor):        # an alias, whatever its dtype (Tensor.new: of its own dtype only)
            if dtype is not None and dtypes.of_array(arg._a) is not dtype:
                raise TypeError(f"expected {_options_text(dtype)} (got {_options_text(dtypes.of_array(arg._a))})")
            from gradcli.engine.ops.shape import alias     # ops imports this module
            return alias(arg)
        if arg.__class__ is str:           # PyTorch's constructor is `new` in its messages
            raise TypeError("new(): invalid data type 'str'")
        if as_int(arg) is None:
            raise TypeError(f"new(): data must be a sequence (got {_type_name(arg)})")
    if as_int(args[0]) is None:           # no signature takes these: the call's argument check lists them
        raise TypeError("new(): arguments")
    shape = _size_args("new", args)
    budget.check_tensor(shape, new_dtype.np.itemsize)
    return Tensor(np.zeros(shape, dtype=new_dtype.np))


def variable(data, requires_grad=False, volatile=False):
    """torch.autograd.Variable(t): today a new leaf tensor sharing `t`'s data."""
    for flag in (requires_grad, volatile):      # read as C ints, as PyTorch's Variable reads them, first
        if not hasattr(flag, "__index__"):
            raise TypeError(f"'{type(flag).__name__}' object cannot be interpreted as an integer")
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    t = Tensor(data._a)
    if requires_grad:
        if data._a.dtype.kind not in "fVc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return autograd.mark_variable(t)


# ------------------------------------------------------------------------------------------- random

def _zero_tangent(F, ts, xs, result):
    """In forward mode a random fill's tangent is `self_t.zero_()`: the tangent itself is zeroed, so a
    tangent the script still holds reads zeros afterwards, as in PyTorch."""
    t = ts[0]
    if not t._a.flags.writeable:        # a broadcast view cannot be written: a fresh zero tangent
        return F.zeros_like(t)
    t._a[...] = 0
    t._version[0] += 1
    return t


# In-place random fills on tensors that are part of a graph record a node whose gradient is zero.
# fmt: off
UNIFORM      = Op("UniformBackward0", None,    (),    (lambda F, g: F.zeros_like(g),), quiet=True, jvp=_zero_tangent)
NORMAL_      = Op("NormalBackward0",  None,    (),    (lambda F, g: F.zeros_like(g),), quiet=True, jvp=_zero_tangent)
RANDOM_RANGE = Op("RandomBackward0",  None,    (),    (lambda F, g: F.zeros_like(g),), quiet=True, jvp=_zero_tangent)
RANDOM_TO    = Op("RandomBackward1",  None,    (),    (lambda F, g: F.zeros_like(g),), quiet=True, jvp=_zero_tangent)
RANDOM       = Op("RandomBackward2",  None,    (),    (lambda F, g: F.zeros_like(g),), quiet=True, jvp=_zero_tangent)
NORMAL_MEAN  = Op("NormalBackward1",  None,    (),    (lambda F, g: F.zeros_like(g),),
                  inputs=("mean",), fits=True, quiet=True, jvp="auto")
NORMAL_STD   = Op("NormalBackward2",  None,    (),    (lambda F, g: F.zeros_like(g),),
                  inputs=("std",), fits=True, quiet=True, jvp="auto")
# zeros_like(mean_t): no tangent when only std has one
NORMAL_BOTH  = Op("NormalBackward3",  None,    (),    (lambda F, g: F.zeros_like(g),
                                                       lambda F, g: F.zeros_like(g)),
                  inputs=("mean", "std"), fits=True, quiet=True,
                  jvp=lambda F, ts, xs, result: None if ts[0] is None else F.zeros_like(ts[0]))
# fmt: on


def _generator(gen, name: str, args: tuple, kwargs: dict) -> rng.Generator:
    if gen is None:
        return rng.default_generator
    if not isinstance(gen, rng.Generator):
        raise invalid_arguments(name, args, kwargs)
    return gen


def _memory_order(a: np.ndarray):
    """The axis order in which a tensor's elements lie in memory (outermost first), which is the
    order random fills visit them."""
    return sorted(range(a.ndim), key=lambda i: (-a.strides[i], i))


def _draw_like(a: np.ndarray, draw) -> np.ndarray:
    """Values for every element of `a` (shape and layout), drawn in `a`'s memory order:
    draw(shape, contiguous) -> array of that shape. A meta tensor's draws nothing, as PyTorch's meta kernels."""
    if a.__class__ is not np.ndarray:
        return a.copy()
    perm = _memory_order(a)
    if perm == list(range(a.ndim)):
        return draw(a.shape, a.flags.c_contiguous)
    vals = draw(tuple(a.shape[i] for i in perm), a.flags.c_contiguous)
    return np.transpose(vals, np.argsort(perm))     # laid out as `a` where `a` is dense (the *_like factories)


def _complex_values(fill, g, a: np.ndarray, low, high) -> np.ndarray:
    """A complex tensor's draws: PyTorch draws its real view (real and imaginary parts interleaved) as a float
    tensor, a normal one with the standard deviation divided by sqrt(2) (each part has half the variance)."""
    part = np.empty(a.shape + (2,), a.real.dtype)
    if fill is _normal_values:
        high = high / math.sqrt(2)
    drawn = np.ascontiguousarray(fill(g, part, low, high))
    return drawn.view(a.dtype)[..., 0]


def _uniform_values(g, a: np.ndarray, low, high) -> np.ndarray:
    if a.dtype.kind == "c":
        return _complex_values(_uniform_values, g, a, low, high)
    if a.dtype.kind not in "fV":
        raise _not_implemented("check_uniform_bounds", a.dtype)
    return _draw_like(a, lambda shape, _: g.uniform(shape, a.dtype, low, high))


def _normal_values(g, a: np.ndarray, mean, std) -> np.ndarray:
    if a.dtype.kind == "c":
        return _complex_values(_normal_values, g, a, mean, std)
    if a.dtype.kind not in "fV":
        if not a.size:                      # nothing to draw: no kernel is chosen
            return a.copy()
        raise _not_implemented("normal_kernel_cpu", a.dtype)
    return _draw_like(a, lambda shape, contiguous: g.normal(shape, a.dtype, mean, std, contiguous))


def _float_output(name: str, dtype) -> np.dtype:
    _check_dtype(dtype)
    return (dtype or dtypes.default_float).np


def rand(*size, dtype=None, requires_grad=False, generator=None, device=None, **kw):
    return _random_floats("rand", _uniform_values, size, dtype, requires_grad, generator, device, kw)


def randn(*size, dtype=None, requires_grad=False, generator=None, device=None, **kw):
    return _random_floats("randn", _normal_values, size, dtype, requires_grad, generator, device, kw)


def _random_floats(name: str, fill, size, dtype, requires_grad, generator, device, kw) -> Tensor:
    """torch.rand / torch.randn: a new float tensor filled from U(0, 1) or N(0, 1)."""
    g = _generator(generator, name, size, {"generator": generator, **kw})
    if not size and "size" not in kw:
        raise invalid_arguments(name, size, kw)
    kw_size = _size_kw(name, kw)
    try:
        shape = _shape(name, size, kw_size)
    except TypeError:
        if _first_size_is_int(size, kw_size):
            factory_device(device)
        raise
    except RuntimeError:
        factory_device(device)
        _refused_in_vmap()
        raise
    on_meta = factory_device(device)
    dt = _float_output(name, dtype)
    _refused_in_vmap()
    if on_meta:                         # PyTorch's meta kernels draw nothing from the generator
        if name == "randn":
            _randn_meta_sizes(shape, dt.itemsize)
        return _meta_filled(shape, 0, dt, requires_grad)
    budget.check_tensor(shape, dt.itemsize)
    return _finish(fill(g, np.empty(shape, dt), 0.0, 1.0), requires_grad)


def _randn_meta_sizes(shape, itemsize: int) -> None:
    """torch.randn on the meta device checks only that the element count fits in 64 bits (PyTorch's other meta
    factories size the storage); the shapes between, whose bytes do not fit, are more than gradcli's arrays
    hold."""
    numel = 1
    for d in shape:
        numel *= d
    if numel >= 1 << 63:
        raise RuntimeError("numel: integer multiplication overflow")
    if numel * itemsize >= 1 << 63:
        raise NotImplementedError(f"gradcli does not make a meta tensor of sizes [{', '.join(map(str, shape))}]: "
                                  "its arrays stop short of 2**63 bytes (PyTorch's randn makes it, as sizes only)")


def _refused_in_vmap() -> None:
    """Inside a vmap that refuses random ops, a random factory whose arguments parse fails with that refusal,
    before its own checks of the sizes (functorch's batching rule runs before the kernel)."""
    frame = STATE.vmap
    if frame is not None and frame.randomness in ("error", "legacy"):
        from gradcli.engine.functorch import LEGACY_RANDOM, RANDOM_ERROR
        raise RuntimeError(RANDOM_ERROR if frame.randomness == "error" else LEGACY_RANDOM)


def _input_tensor(name: str, t) -> Tensor:
    if t.__class__ is not Tensor:
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {_type_name(t)}")
    return t


def _random_like_format(name: str, input, args: tuple, generator, memory_format) -> None:
    """A random *_like factory's memory_format: a torch.memory_format or None, else PyTorch's message (which
    lists its overloads, the generator's among them: they differ by that keyword)."""
    if memory_format is not None and memory_format.__class__ is not dtypes.MemoryFormat:
        given = {"generator": generator} if generator is not None else {}
        raise invalid_arguments(name, (input,) + args, {**given, "memory_format": memory_format})


def _like_target(name, input, dtype, memory_format=None) -> np.ndarray:
    _check_dtype(dtype)
    a = _input_tensor(name, input)._a
    if a.__class__ is not np.ndarray:
        return a.copy() if dtype is None else a.astype(dtype.np)
    target = _like_layout(a, memory_format, lambda shape: np.empty(shape, a.dtype))
    return target if dtype is None else target.astype(dtype.np)


def rand_like(input, dtype=None, requires_grad=False, generator=None, device=None, memory_format=None):
    _random_like_format("rand_like", input, (), generator, memory_format)
    if device is not None and check_device(device) != (_input_tensor("rand_like", input)._a.__class__ is not np.ndarray):
        return _like("rand_like", input, 0, dtype, requires_grad, device, memory_format)
    g = _generator(generator, "rand", (input,), {"generator": generator})
    return _finish(_uniform_values(g, _like_target("rand_like", input, dtype, memory_format), 0.0, 1.0), requires_grad)


def randn_like(input, dtype=None, requires_grad=False, generator=None, device=None, memory_format=None):
    _random_like_format("randn_like", input, (), generator, memory_format)
    if device is not None and check_device(device) != (_input_tensor("randn_like", input)._a.__class__ is not np.ndarray):
        return _like("randn_like", input, 0, dtype, requires_grad, device, memory_format)
    g = _generator(generator, "randn", (input,), {"generator": generator})
    return _finish(_normal_values(g, _like_target("randn_like", input, dtype, memory_format), 0.0, 1.0), requires_grad)


def _int_arg(name: str, arg: str, position: int, value) -> int:
    n = as_int(value)
    if n is None:
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be int, not {_type_name(value)}")
    if not -(1 << 63) <= n < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    return n


def _int_values(g, a: np.ndarray, low: int, high: int) -> np.ndarray:
    return _draw_like(a, lambda shape, _: g.randint(low, high, shape, a.dtype))


def randint(*args, dtype=None, requires_grad=False, generator=None, device=None, **kw):
    """randint(high, size) / randint(low, high, size), int64 unless dtype says otherwise."""
    on_meta = factory_device(device)
    call_kw = dict(kw, generator=generator) if generator is not None else kw
    names = ("low", "high", "size") if len(args) + len(kw) >= 3 else ("high", "size")
    values = dict(zip(names, args))
    for k, v in kw.items():
        if k not in names or k in values:
            raise invalid_arguments("randint", args, call_kw)
        values[k] = v
    if len(args) > 3 or len(values) != len(names):
        raise invalid_arguments("randint", args, call_kw)
    g = _generator(generator, "randint", args, call_kw)
    _check_dtype(dtype)
    low = _int_arg("randint", "low", 1, values["low"]) if "low" in values else 0
    high = _int_arg("randint", "high", names.index("high") + 1, values["high"])
    size = values["size"]
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position {len(names)}) must be tuple of ints, not "
                        f"{_type_name(size)}")
    try:
        shape = _size_args("randint", (size,), len(names))
    except RuntimeError:
        _refused_in_vmap()
        raise
    dt = (dtype or dtypes.int64).np
    _refused_in_vmap()
    if on_meta:
        return _meta_filled(shape, 0, dt, requires_grad)
    budget.check_tensor(shape, dt.itemsize)
    return _finish(_int_values(g, np.empty(shape, dt), low, high), requires_grad)


def randint_like(input, *args, dtype=None, requires_grad=False, generator=None, device=None, memory_format=None,
                 **kw):
    """randint_like(input, high) / randint_like(input, low, high): input's shape and dtype."""
    if device is not None:
        check_device(device)
    names = ("low", "high") if len(args) + len(kw) >= 2 else ("high",)
    values = dict(zip(names, args))
    for k, v in kw.items():
        if k not in names or k in values:
            raise TypeError(f"randint_like() got an unexpected keyword argument '{k}'")
        values[k] = v
    if not values and not args:
        raise invalid_arguments("randint_like", (input,), {})
    if len(values) != len(names) or len(args) > 2:
        raise TypeError("randint_like() missing required argument 'high'")
    _random_like_format("randint_like", input, args, generator, memory_format)
    low = _int_arg("randint_like", "low", 2, values["low"]) if "low" in values else 0
    high = _int_arg("randint_like", "high", len(names) + 1, values["high"])
    g = _generator(generator, "randint", (input,) + args, kw)
    return _finish(_int_values(g, _like_target("randint_like", input, dtype, memory_format), low, high), requires_grad)


def randperm(*args, dtype=None, requires_grad=False, generator=None, device=None, **kw):
    on_meta = factory_device(device)
    call_kw = dict(kw, generator=generator) if generator is not None else kw
    if len(args) + len(kw) != 1 or (kw and "n" not in kw):
        raise invalid_arguments("randperm", args, call_kw)
    n = args[0] if args else kw["n"]
    given = {k: v for k, v in (("generator", generator), ("dtype", dtype), ("device", device)) if v is not None}
    if requires_grad is not False:
        given["requires_grad"] = requires_grad
    if as_int(n) is None and given:
        # with more arguments than n, both of PyTorch's signatures are plausible: it lists them, and what it
        # got with the keywords in name order
        raise invalid_arguments("randperm", args, dict(sorted({**kw, **given}.items())))
    g = _generator(generator, "randperm", args, call_kw)
    _check_dtype(dtype)
    n = _int_arg("randperm", "n", 1, n)
    _refused_in_vmap()
    if on_meta:
        return _meta_filled((n,), 0, (dtype or dtypes.int64).np, requires_grad)
    budget.check_tensor((n,), (dtype or dtypes.int64).itemsize)
    return _finish(g.randperm(n, (dtype or dtypes.int64).np), requires_grad)


def normal(*args, generator=None, dtype=None, requires_grad=False, device=None, **kw):
    """The four overloads: (Tensor, Tensor), (Tensor, float=1), (float, Tensor), (float, float, size)."""
    on_meta = device is not None and check_device(device)
    call_kw = dict(kw, generator=generator) if generator is not None else kw
    names = ("mean", "std", "size")
    values = dict(zip(names, args))
    for k, v in kw.items():
        if k not in names or k in values:
            raise invalid_arguments("normal", args, call_kw)
        values[k] = v
    if len(args) > 3 or "mean" not in values:
        raise invalid_arguments("normal", args, call_kw)
    mean, std = values["mean"], values.get("std")
    g = _generator(generator, "normal", args, call_kw)
    mean_t, std_t = mean.__class__ is Tensor, std.__class__ is Tensor
    number = (int, float)
    if "size" in values:
        # the overload of two floats, which the parser also fills from 0-d tensors without grad
        mean, std = (v._a.item() if v.__class__ is Tensor and v._a.ndim == 0 and not v.requires_grad else v
                     for v in (mean, std))
        if not isinstance(mean, number) or not isinstance(std, number) or not isinstance(values["size"], (tuple, list)):
            raise invalid_arguments("normal", args, call_kw)
        shape = _size_args("normal", (values["size"],), 3)
        dt = _float_output("normal", dtype)
        _refused_in_vmap()
        if on_meta:
            return _meta_filled(shape, 0, dt, requires_grad)
        budget.check_tensor(shape, dt.itemsize)
        if dt.kind not in "fV":
            raise _not_implemented("normal_kernel_cpu", dt)
        return _finish(g.normal(shape, dt, mean, std), requires_grad)
    if mean_t and (std_t or std is None or isinstance(std, number)):
        return _normal_tensor(g, mean, 1.0 if std is None else std)
    if std_t and isinstance(mean, number):
        return _normal_tensor(g, mean, std)
    raise invalid_arguments("normal", args, call_kw)


def _normal_tensor(g, mean, std) -> Tensor:
    """normal with tensor arguments: standard normals scaled by std, then shifted by mean (two
    rounded elementwise steps), in the dtype of mean (of std when mean is a number)."""
    if std.__class__ is Tensor:
        if (std._a < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {rng._cxx_double(float(std))}")
    ref = mean if mean.__class__ is Tensor else std
    dt = ref._a.dtype
    if dt.kind not in "fV":
        if not ref._a.size:
            return Tensor(np.empty(ref._a.shape, dtype=dt))
        raise _not_implemented("normal_kernel_cpu", dt)
    if any(t.__class__ is Tensor and t._a.__class__ is not np.ndarray for t in (mean, std)):
        return _normal_on_meta(mean, std, dt)
    if mean.__class__ is Tensor and std.__class__ is Tensor:
        try:
            shape = np.broadcast_shapes(mean._a.shape, std._a.shape)
        except ValueError:
            raise broadcast_error(mean._a.shape, std._a.shape) from None
        out = _scaled(g.normal(shape, dt), std._a)
        out = _shifted(out, mean._a)
        inputs, row = (mean, std), NORMAL_BOTH
    elif mean.__class__ is Tensor:
        # empty_like(mean).normal_(0, std): the kernel's fma(z, std, 0) is z*std rounded
        out = _normal_values(g, preserved(mean._a), 0.0, float(std))
        out = _shifted(out, mean._a)
        inputs, row = (mean,), NORMAL_MEAN
    else:
        out = _scaled(g.normal(std._a.shape, dt), std._a)
        out = (out + dt.type(mean)).astype(dt)
        inputs, row = (std,), NORMAL_STD
    return apply(row, out, inputs)


def _normal_on_meta(mean, std, dt) -> Tensor:
    """torch.normal with a meta mean or std: the result's shape and dtype, with its node; nothing drawn."""
    from gradcli.engine import meta
    inputs = tuple(t for t in (mean, std) if t.__class__ is Tensor)
    try:
        shape = np.broadcast_shapes(*[t._a.shape for t in inputs])
    except ValueError:
        raise broadcast_error(mean._a.shape, std._a.shape) from None
    row = NORMAL_BOTH if len(inputs) == 2 else NORMAL_MEAN if inputs[0] is mean else NORMAL_STD
    return apply(row, meta.meta_full(shape, 0, dt), inputs)


def _in_place_op(fn, out: np.ndarray, other: np.ndarray) -> np.ndarray:
    """out.op_(other): computed in the two tensors' promoted dtype, stored in out's."""
    common = result_dtype(Tensor(out), Tensor(other)).np
    return fn(out.astype(common, copy=False), other.astype(common, copy=False)).astype(out.dtype)


def _scaled(out, std):
    return _in_place_op(np.multiply, out, std)


def _shifted(out, mean):
    return _in_place_op(np.add, out, mean)


# ---- in-place fills (Tensor.uniform_, normal_, random_): out-of-place values for Tensor._inplace

def _fill_generator(gen, name: str) -> rng.Generator:
    if gen is None:
        return rng.default_generator
    if not isinstance(gen, rng.Generator):
        raise TypeError(f"{name}(): argument 'generator' must be torch.Generator, not {_type_name(gen)}")
    return gen


def _filled_like(t: Tensor, row, values: np.ndarray) -> Tensor:
    return apply(row, values, (t,))


def uniform_values(t: Tensor, low=0.0, high=1.0, generator=None) -> Tensor:
    g = _fill_generator(generator, "uniform_")
    return _filled_like(t, UNIFORM, _uniform_values(g, t._a, low, high))


def normal_values(t: Tensor, mean=0.0, std=1.0, generator=None) -> Tensor:
    g = _fill_generator(generator, "normal_")
    for name, position, value in (("mean", 1, mean), ("std", 2, std)):
        if _as_number(value) is None:
            raise TypeError(f"normal_(): argument '{name}' (position {position}) must be float, not {_type_name(value)}")
    return _filled_like(t, NORMAL_, _normal_values(g, t._a, mean, std))


# random_() with no bounds: the full range of the dtype (for floats, the integers up to 2**mantissa)
# from one 32-bit word, or one 64-bit draw for int64 and float64.
_RANDOM_MODULI = {"float32": (1 << 24) + 1, "float64": (1 << 53) + 1, "float16": (1 << 11) + 1, "bfloat16": (1 << 8) + 1,
                  "int64": 1 << 63, "int32": 1 << 31, "int16": 1 << 15, "int8": 1 << 7, "uint8": 1 << 8}


def _random_full(g, a: np.ndarray) -> np.ndarray:
    name = a.dtype.name

    def draw(shape, _):
        n = math.prod(shape)
        if name in ("int64", "float64"):
            w = g._words(2 * n)
            v = (w[0::2] << np.uint64(32)) | w[1::2]
        else:
            v = g._words(n)
        if name == "bool":
            return (v & np.uint64(1)).astype(np.bool_).reshape(shape)
        return (v % np.uint64(_RANDOM_MODULI[name])).astype(a.dtype).reshape(shape)
    return _draw_like(a, draw)


def random_values(t: Tensor, *args, generator=None, **kw) -> Tensor:
    """random_() / random_(to) / random_(from, to)."""
    g = _fill_generator(generator, "random_")
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    names = ("from", "to") if len(args) + len(kw) >= 2 else ("to",)
    values = dict(zip(names, args))
    for k, v in kw.items():
        if k not in names or k in values:
            raise TypeError(_random_error(args, kw, generator))
        values[k] = v
    for k, v in values.items():
        if not (v is None and k == "to" and "from" in values) and as_int(v) is None:    # `to` may be None after `from`
            raise TypeError(_random_error(args, kw, generator))
    a = t._a
    if not values:
        return _filled_like(t, RANDOM, _random_full(g, a))
    to = values["to"]
    low = values.get("from", 0)
    high = _random_to(a.dtype) if to is None else to
    row = RANDOM_RANGE if "from" in values else RANDOM_TO
    return _filled_like(t, row, _int_values(g, a, int(low), int(high)))


def _random_error(args: tuple, kw: dict, generator) -> str:
    """PyTorch's parser message for random_ arguments no signature takes."""
    given = dict(kw, generator=generator) if generator is not None else kw
    return signatures.check("Tensor.random_", args, given) or "random_() received an invalid combination of arguments"


def _random_to(dt: np.dtype) -> int:
    """random_(from, None): up to the largest value of the dtype, inclusive."""
    if dt.kind in "fV":
        return (1 << dtypes.finfo(dt).nmant + 1) + 1
    if dt == np.bool_:
        return 2
    return int(np.iinfo(dt).max) + 1


# ------------------------------------------------------------------------------------------- states

def generator(device="cpu") -> rng.Generator:
    """torch.Generator(device='cpu'): a new stream seeded with PyTorch's default seed. Another device fails
    as PyTorch's CPU build fails to make a generator there."""
    if device is not None:
        from gradcli.engine.tensor import NO_CUDA_LIBRARY, _Device, accelerator_index, parse_device
        if device.__class__ is int:
            raise accelerator_index(device)
        if device.__class__ is str:
            device = parse_device(device)
        elif device.__class__ is not _Device:
            raise TypeError(f"Generator(): argument 'device' must be torch.device, not {signatures.type_name(device)}")
        if device.type == "cuda":
            raise RuntimeError(NO_CUDA_LIBRARY.replace("Cannot initialize CUDA", "Cannot get CUDA generator", 1))
        if device.type in ("meta", "lazy"):
            raise RuntimeError(f"{device.type.upper()} device type not an accelerator.")
        check_device(device)
    return rng.Generator()


def _c_method(name: str, takes_one: bool):
    """A torch.Generator method as scripts call it: PyTorch's are C methods of one argument or none, with
    CPython's words for any other call (no keywords; "takes exactly one argument (0 given)")."""
    def decorate(f):
        def method(g, *args, **kwargs):
            if kwargs:
                raise TypeError(f"Generator.{name}() takes no keyword arguments")
            if takes_one and len(args) != 1:
                raise TypeError(f"Generator.{name}() takes exactly one argument ({len(args)} given)")
            if not takes_one and args:
                raise TypeError(f"Generator.{name}() takes no arguments ({len(args)} given)")
            return f(g, *args)
        method.__name__ = method.__qualname__ = name
        return method
    return decorate


@_c_method("manual_seed", True)
def generator_manual_seed(g: rng.Generator, seed):
    """Generator.manual_seed: unlike torch.manual_seed it takes only integers."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise RuntimeError(f"manual_seed expected a long, but got {_type_name(seed)}")
    return g.manual_seed(seed)


def _generator_state(g: rng.Generator) -> Tensor:
    return Tensor(g.get_state())


def _set_generator_state(g: rng.Generator, state) -> rng.Generator:
    if state.__class__ is not Tensor or state._a.dtype != np.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    return g.set_state(state._a)


generator_get_state = _c_method("get_state", False)(_generator_state)
generator_set_state = _c_method("set_state", True)(_set_generator_state)
generator_seed = _c_method("seed", False)(rng.Generator.seed)
generator_initial_seed = _c_method("initial_seed", False)(rng.Generator.initial_seed)


def get_rng_state() -> Tensor:
    return _generator_state(rng.default_generator)


def set_rng_state(new_state) -> None:
    _set_generator_state(rng.default_generator, new_state)


def manual_seed(seed):
    return rng.default_generator.manual_seed(seed)


def initial_seed() -> int:
    return rng.default_generator.initial_seed()


def seed() -> int:
    return rng.default_generator.seed()


# Tensor.new_zeros, new_ones, new_empty and new_full take layout= and pin_memory= as the torch factories do
for _name in ("new_zeros", "new_ones", "new_empty", "new_full", "new_empty_strided"):
    setattr(Tensor, _name, with_creation_options(getattr(Tensor, _name), _name))
del _name
