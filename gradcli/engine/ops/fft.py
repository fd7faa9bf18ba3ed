"""torch.fft: the discrete Fourier transforms as PyTorch composes them from three recorded primitives (complex to
complex, real to complex, complex to real: FftC2CBackward0, FftR2CBackward0, FftC2RBackward0) with its promotion,
resizing (ConstantPadNdBackward0, SliceBackward0) and conjugations around them; the sample frequencies and the
shifts (RollBackward0).

The transforms are numpy's (pocketfft); PyTorch's CPU build computes them with MKL, whose last bits differ in
30 to 70% of the elements (docs/numerics.md, "FFT"). A normalization is PyTorch's code: 0 none, 1 by sqrt(n),
2 by n, applied by the primitive itself (no separate multiply node), as in PyTorch.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import dtypes, signatures
from gradcli.engine.ops import complexops, shape
from gradcli.engine.recording import Op, TYPE_WORDS, apply, is_meta
from gradcli.engine.tensor import Tensor

_NONE, _ROOT_N, _BY_N = 0, 1, 2


# ------------------------------------------------------------------------------------------------ numpy

# numpy's norm= for a normalization code, in each direction (numpy's names say which direction scales)
_NUMPY_NORM = {True: ("backward", "ortho", "forward"), False: ("forward", "ortho", "backward")}
# numpy's norm= that leaves a transform unscaled, in each direction (the scale is applied once, below)
_UNSCALED = {True: "backward", False: "forward"}
_WIDE = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


def _wide(a: np.ndarray) -> np.ndarray:
    """a in double precision: numpy computes its single precision transforms in double and rounds the result
    once; here the scale is applied before that rounding too."""
    wide = _WIDE.get(a.dtype)
    return a if wide is None else a.astype(wide)


def _scaled(out: np.ndarray, code: int, n: int, dtype) -> np.ndarray:
    """An unscaled transform's result scaled by 1 / n or 1 / sqrt(n) (n: the signal's size over all the dims),
    one multiply as MKL applies its scale (numpy's own norm= scales each dim by its own size), in dtype."""
    if code == _BY_N:
        out *= 1.0 / n
    elif code == _ROOT_N:
        out *= 1.0 / math.sqrt(n)
    return out.astype(dtype, copy=False)


def _c2c_array(a: np.ndarray, dims: tuple, code: int, forward: bool) -> np.ndarray:
    if not dims or a.size == 0:         # the identity (over no dims: nothing to scale), or empty (fftn(dim=()))
        return np.array(a, copy=True)
    f = np.fft.fftn if forward else np.fft.ifftn
    if len(dims) == 1:
        return np.asarray(f(a, axes=dims, norm=_NUMPY_NORM[forward][code]), a.dtype)
    n = math.prod(a.shape[d] for d in dims)
    return _scaled(f(_wide(a), axes=dims, norm=_UNSCALED[forward]), code, n, a.dtype)


def _r2c_array(a: np.ndarray, dims: tuple, code: int, onesided: bool) -> np.ndarray:
    ctype = np.complex128 if a.dtype == np.float64 else np.complex64
    last = dims[-1]
    n = a.shape[last]
    if len(dims) == 1:
        half = np.asarray(np.fft.rfftn(a, axes=dims, norm=_NUMPY_NORM[True][code]), ctype)
    else:
        size = math.prod(a.shape[d] for d in dims)
        half = _scaled(np.fft.rfftn(_wide(a), axes=dims, norm=_UNSCALED[True]), code, size, ctype)
    if onesided:
        return half
    return _fill_conjugate(half, dims, n)


def _fill_conjugate(half: np.ndarray, dims: tuple, n: int) -> np.ndarray:
    """The full spectrum from its first n // 2 + 1 entries along dims[-1]: X[-k] = conj(X[k]) over all dims."""
    last = dims[-1]
    h = half.shape[last]
    part = np.flip(np.take(half, range(1, n - h + 1), axis=last), last)
    for d in dims[:-1]:
        part = np.roll(np.flip(part, d), 1, d)        # index j to -j mod the size
    return np.concatenate((half, np.conj(part)), axis=last)


def _c2r_array(a: np.ndarray, dims: tuple, code: int, last_dim_size: int) -> np.ndarray:
    rtype = np.float64 if a.dtype == np.complex128 else np.float32
    sizes = [a.shape[d] for d in dims[:-1]] + [last_dim_size]
    if len(dims) == 1:
        return np.asarray(np.fft.irfftn(a, s=sizes, axes=dims, norm=_NUMPY_NORM[False][code]), rtype)
    out = np.fft.irfftn(_wide(a), s=sizes, axes=dims, norm=_UNSCALED[False])
    return _scaled(out, code, math.prod(sizes), rtype)


# ------------------------------------------------------------------------------------------------ rows

def _c2c_backward(F, g, dim, normalization, forward):
    if F.tensors:
        return c2c(g, dim, normalization, not forward)
    return _c2c_array(g, dim, normalization, not forward)


def _r2c_backward(F, g, self, dim, normalization, onesided):
    """The real part of the adjoint transform of the gradient, zero-filled to the full length when onesided."""
    last = dim[-1]
    n = self.shape[last]
    if F.tensors:
        if onesided and g.shape[last] != n:
            pad = [0] * (2 * g._a.ndim)
            pad[2 * (g._a.ndim - 1 - last) + 1] = n - g.shape[last]
            g = shape.constant_pad(g, tuple(pad), 0)
        return complexops.real(c2c(g, dim, normalization, False))
    if onesided and g.shape[last] != n:
        full = np.zeros(g.shape[:last] + (n,) + g.shape[last + 1:], g.dtype)
        full[(slice(None),) * last + (slice(0, g.shape[last]),)] = g
        g = full
    return np.ascontiguousarray(_c2c_array(g, dim, normalization, False).real)


def _c2r_backward(F, g, dim, normalization):
    """The onesided real-to-complex transform of the gradient, its entries that stand for two doubled."""
    last = dim[-1]
    n = g.shape[last]
    doubled = n - (n // 2 + 1)
    if F.tensors:
        gi = r2c(g, dim, normalization, True)
        if doubled > 0:         # (doubled through the real view: a real product, itself differentiable)
            scale = np.ones(n // 2 + 1, g._a.dtype)
            scale[1:1 + doubled] = 2
            scale = Tensor(scale.reshape((-1,) + (1,) * (g._a.ndim - last)))
            gi = complexops.view_as_complex(complexops.view_as_real(gi) * scale)
        return gi
    gi = _r2c_array(g, dim, normalization, True)
    if doubled > 0:
        gi[(slice(None),) * last + (slice(1, 1 + doubled),)] *= 2
    return gi


# fmt: off
C2C = Op("FftC2CBackward0", None, ("dim", "normalization", "forward"),         (_c2c_backward,),
         jvp=lambda F, ts, xs, result, dim, normalization, forward: c2c(ts[0], dim, normalization, forward))
R2C = Op("FftR2CBackward0", None, ("self", "dim", "normalization", "onesided"), (_r2c_backward,), inputs=("self",),
         jvp=lambda F, ts, xs, result, dim, normalization, onesided: r2c(ts[0], dim, normalization, onesided))
C2R = Op("FftC2RBackward0", None, ("dim", "normalization", "last_dim_size"),    (lambda F, g, dim, normalization, last_dim_size:
                                                                                _c2r_backward(F, g, dim, normalization),),
         jvp=lambda F, ts, xs, result, dim, normalization, last: c2r(ts[0], dim, normalization, last))
# fmt: on


_EMPTY = "MKL FFT error: Intel oneMKL DFTI ERROR: Inconsistent configuration parameters"


def _nonempty(x: Tensor, dims: tuple) -> None:
    """PyTorch's CPU library refuses a transform of an empty tensor (its error names the library, MKL)."""
    if dims and x._a.size == 0:
        raise RuntimeError(_EMPTY)


def c2c(x: Tensor, dims: tuple, code: int, forward: bool) -> Tensor:
    _nonempty(x, dims)
    return apply(C2C, _c2c_array(x._a, dims, code, forward), (x,), (dims, code, forward))


def r2c(x: Tensor, dims: tuple, code: int, onesided: bool) -> Tensor:
    _nonempty(x, dims)
    complexops.seen()
    return apply(R2C, _r2c_array(x._a, dims, code, onesided), (x,), (dims, code, onesided))


def c2r(x: Tensor, dims: tuple, code: int, last_dim_size: int) -> Tensor:
    _nonempty(x, dims)
    return apply(C2R, _c2r_array(x._a, dims, code, last_dim_size), (x,), (dims, code, last_dim_size))


# ------------------------------------------------------------------------------------------------ arguments

def _args(name: str, args: tuple, kwargs: dict, defaults: dict) -> dict:
    """The call's arguments by name, as PyTorch's parser takes them (its TypeErrors otherwise)."""
    v = signatures.parsed("torch.fft." + name, args, kwargs, defaults)
    x = v.get("input")
    if x is not None and is_meta(x._a):
        raise NotImplementedError(f"gradcli does not implement torch.fft.{name} of meta tensors")
    return v


def _norm(norm, forward: bool) -> int:
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap(d: int, ndim: int) -> int:
    d = int(d._a) if d.__class__ is Tensor else d
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
    return d % ndim


def _count(n) -> int:
    n = int(n._a) if n.__class__ is Tensor else n
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _real_dtype(x: Tensor) -> Tensor:
    """x in a dtype the transforms take: an integer or bool tensor in the default float dtype; half and
    bfloat16 refused, as PyTorch's CPU transforms refuse them."""
    a = x._a
    if a.dtype.kind in "biu":
        return Tensor(a.astype(dtypes.default_float.np))
    if a.dtype.kind == "f" and a.dtype.itemsize < 4 or a.dtype.kind == "V":
        raise RuntimeError(f"Unsupported dtype {TYPE_WORDS[a.dtype.name]}")
    return x


def _complex_dtype(x: Tensor) -> Tensor:
    """x promoted to a complex dtype (a float tensor by a recorded copy: ToCopyBackward0)."""
    if x._a.dtype.kind == "c":
        return x
    from gradcli.engine.ops.arith import to_dtype
    x = _real_dtype(x)
    complexops.seen()
    return to_dtype(x, dtypes.complex128 if x._a.dtype == np.float64 else dtypes.complex64)


def _resize(x: Tensor, dims: tuple, sizes: tuple) -> Tensor:
    """x zero-padded (ConstantPadNdBackward0) or cut (SliceBackward0) to `sizes` along `dims`."""
    ndim = x._a.ndim
    pad = [0] * (2 * ndim)
    padded = False
    for d, size in zip(dims, sizes):
        if size == -1:
            continue
        have = x._a.shape[d]
        if have < size:
            padded = True
            pad[2 * (ndim - 1 - d) + 1] = size - have
        elif have > size:
            x = shape.narrow(x, d, 0, size)
    return shape.constant_pad(x, tuple(pad), 0) if padded else x


# ------------------------------------------------------------------------------------------------ 1-d

_ONE_D = {"n": None, "dim": -1, "norm": None}


def _one_d(name, args, kwargs):
    v = _args(name, args, kwargs, _ONE_D)
    return v["input"], v["n"], v["dim"], v["norm"]


def _sized(x: Tensor, n, dim) -> tuple:
    """x resized to n along dim (its own length when n is None), and dim wrapped."""
    d = _wrap(dim, x._a.ndim)
    n = _count(x._a.shape[d] if n is None else n)
    return _resize(x, (d,), (n,)), d


def _one_d_forward(name: str, args, kwargs, forward: bool, onesided: bool) -> Tensor:
    """fft, ifft, rfft and ihfft: a complex input's C2C (fft, ifft), a real one's R2C, two-sided for fft and
    ifft, conjugated for the inverse ones (ConjBackward0)."""
    x, n, dim, norm = _one_d(name, args, kwargs)
    if x._a.dtype.kind != "c":
        x = _real_dtype(x)
    elif onesided:
        raise RuntimeError(f"{name} expects a real input tensor, but got {TYPE_WORDS[x._a.dtype.name]}")
    x, d = _sized(x, n, dim)
    if x._a.dtype.kind == "c":
        return c2c(x, (d,), _norm(norm, forward), forward)
    out = r2c(x, (d,), _norm(norm, forward), onesided)
    return out if forward else complexops.conj(out)


def fft(*args, **kwargs) -> Tensor:
    return _one_d_forward("fft", args, kwargs, True, False)


def ifft(*args, **kwargs) -> Tensor:
    return _one_d_forward("ifft", args, kwargs, False, False)


def rfft(*args, **kwargs) -> Tensor:
    return _one_d_forward("rfft", args, kwargs, True, True)


def ihfft(*args, **kwargs) -> Tensor:
    return _one_d_forward("ihfft", args, kwargs, False, True)


def _to_real(name: str, args, kwargs, forward: bool) -> Tensor:
    """irfft and hfft: C2R of the (promoted, resized) input, conjugated first for hfft."""
    x, n, dim, norm = _one_d(name, args, kwargs)
    x = _complex_dtype(x)
    d = _wrap(dim, x._a.ndim)
    last = _count(2 * (x._a.shape[d] - 1) if n is None else n)
    if n is not None:
        x = _resize(x, (d,), (last // 2 + 1,))
    code = _norm(norm, forward)
    if forward:
        x = complexops.conj(x)
    return c2r(x, (d,), code, last)


def irfft(*args, **kwargs) -> Tensor:
    return _to_real("irfft", args, kwargs, False)


def hfft(*args, **kwargs) -> Tensor:
    return _to_real("hfft", args, kwargs, True)


# ------------------------------------------------------------------------------------------------ n-d

def _shape_and_dims(x: Tensor, s, dim) -> tuple:
    """PyTorch's canonical (sizes, dims) of an n-d transform's s= and dim=, with its checks in its order."""
    ndim, sizes = x._a.ndim, x._a.shape
    if dim is not None:
        dim = (dim,) if not isinstance(dim, (tuple, list)) else tuple(dim)
        dims = tuple(_wrap(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if not isinstance(s, (tuple, list)) else tuple(s)
        s = tuple(int(v._a) if v.__class__ is Tensor else v for v in s)
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dim is None:
            dims = tuple(range(ndim - len(s), ndim))
        shp = tuple(sizes[d] if v == -1 else v for v, d in zip(s, dims))
    elif dim is None:
        dims, shp = tuple(range(ndim)), tuple(sizes)
    else:
        shp = tuple(sizes[d] for d in dims)
    for n in shp:
        _count(n)
    return shp, dims


def _n_d(name: str, args, kwargs, default_dim) -> tuple:
    v = _args(name, args, kwargs, {"s": None, "dim": default_dim, "norm": None})
    return v["input"], v["s"], v["dim"], v["norm"]


def _fftn_c2c(name: str, args, kwargs, forward: bool, default_dim=None) -> Tensor:
    x, s, dim, norm = _n_d(name, args, kwargs, default_dim)
    shp, dims = _shape_and_dims(x, s, dim)
    x = _complex_dtype(x)
    x = _resize(x, dims, shp)
    return c2c(x, dims, _norm(norm, forward), forward)


def fftn(*args, **kwargs) -> Tensor:
    return _fftn_c2c("fftn", args, kwargs, True)


def ifftn(*args, **kwargs) -> Tensor:
    return _fftn_c2c("ifftn", args, kwargs, False)


def fft2(*args, **kwargs) -> Tensor:
    return _fftn_c2c("fft2", args, kwargs, True, (-2, -1))


def ifft2(*args, **kwargs) -> Tensor:
    return _fftn_c2c("ifft2", args, kwargs, False, (-2, -1))


def _rfftn(name: str, args, kwargs, default_dim=None) -> Tensor:
    x, s, dim, norm = _n_d(name, args, kwargs, default_dim)
    if x._a.dtype.kind == "c":
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {TYPE_WORDS[x._a.dtype.name]}")
    shp, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_real_dtype(x), dims, shp)
    return r2c(x, dims, _norm(norm, True), True)


def rfftn(*args, **kwargs) -> Tensor:
    return _rfftn("rfftn", args, kwargs)


def rfft2(*args, **kwargs) -> Tensor:
    return _rfftn("rfft2", args, kwargs, (-2, -1))


def _ihfftn(name: str, args, kwargs, default_dim=None) -> Tensor:
    """ihfftn: a onesided R2C over the last dim, then (conjugated: ConjPhysicalBackward0) an inverse C2C over
    the others; over one dim, the R2C conjugated (ConjBackward0)."""
    x, s, dim, norm = _n_d(name, args, kwargs, default_dim)
    shp, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    if x._a.dtype.kind == "c":
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {TYPE_WORDS[x._a.dtype.name]}")
    x = _resize(_real_dtype(x), dims, shp)
    code = _norm(norm, False)
    if len(dims) == 1:
        return complexops.conj(r2c(x, dims, code, True))
    half = complexops.conj_physical(r2c(x, dims[-1:], code, True))      # (each step scales by its own dims)
    return c2c(half, dims[:-1], code, False)


def ihfftn(*args, **kwargs) -> Tensor:
    return _ihfftn("ihfftn", args, kwargs)


def ihfft2(*args, **kwargs) -> Tensor:
    return _ihfftn("ihfft2", args, kwargs, (-2, -1))


def _c2r_shape(name: str, x: Tensor, s, dim) -> tuple:
    shp, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    given = s if s is None or isinstance(s, (tuple, list)) else (s,)
    last = 2 * (x._a.shape[dims[-1]] - 1) if given is None or given[-1] == -1 else shp[-1]
    _count(last)
    return shp[:-1] + (last // 2 + 1,), dims, last


def _irfftn(name: str, args, kwargs, default_dim=None) -> Tensor:
    x, s, dim, norm = _n_d(name, args, kwargs, default_dim)
    shp, dims, last = _c2r_shape("irfftn", x, s, dim)
    x = _resize(_complex_dtype(x), dims, shp)
    return c2r(x, dims, _norm(norm, False), last)


def irfftn(*args, **kwargs) -> Tensor:
    return _irfftn("irfftn", args, kwargs)


def irfft2(*args, **kwargs) -> Tensor:
    return _irfftn("irfft2", args, kwargs, (-2, -1))


def _hfftn(name: str, args, kwargs, default_dim=None) -> Tensor:
    """hfftn: a forward C2C over all dims but the last, then the C2R of its conjugate (ConjBackward0) over the
    last."""
    x, s, dim, norm = _n_d(name, args, kwargs, default_dim)
    shp, dims, last = _c2r_shape("hfftn", x, s, dim)
    x = _resize(_complex_dtype(x), dims, shp)
    code = _norm(norm, True)
    if len(dims) == 1:
        return c2r(complexops.conj(x), dims, code, last)
    x = complexops.conj(c2c(x, dims[:-1], code, True))
    return c2r(x, dims[-1:], code, last)


def hfftn(*args, **kwargs) -> Tensor:
    return _hfftn("hfftn", args, kwargs)


def hfft2(*args, **kwargs) -> Tensor:
    return _hfftn("hfft2", args, kwargs, (-2, -1))


# ------------------------------------------------------------------------------------------------ helpers

_FREQ = {"d": 1.0, "dtype": None, "layout": None, "device": None, "pin_memory": False, "requires_grad": False}


def _frequencies(name: str, args, kwargs, onesided: bool) -> Tensor:
    """fftfreq and rfftfreq: arange(n) (the upper half less n, for fftfreq) times 1 / (n * d), in the
    requested dtype (a scalar multiply in that dtype, as PyTorch's mul_ by a double scales)."""
    from gradcli.engine import factories
    v = signatures.parsed("torch.fft." + name, args, kwargs, _FREQ)
    out = v.get("out")
    if out is not None and v["dtype"] is None:
        v["dtype"] = dtypes.of_array(out._a)
    n, d = v["n"], v["d"]
    n = int(n._a) if n.__class__ is Tensor else n
    d = d._a.item() if d.__class__ is Tensor else d
    dt = v["dtype"] if v["dtype"] is not None else dtypes.default_float
    if dt.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{TYPE_WORDS[dt.np.name]}'")
    if dt.category != dtypes.FLOAT:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    count = n // 2 + 1 if onesided else n
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: [{count}]")
    k = np.arange(count, dtype=np.float64)
    if not onesided:
        k[(n + 1) // 2:] -= n
    scale = 1.0 / (n * d) if n * d else math.copysign(math.inf, float(n * d))      # (C++'s 1.0 / 0)
    with np.errstate(invalid="ignore", over="ignore"):
        if dt.np.itemsize < 4:      # half and bfloat16: multiplied in float, then rounded
            a = (k.astype(np.float32) * np.float32(scale)).astype(dt.np)
        else:
            a = k.astype(dt.np) * np.asarray(scale).astype(dt.np)
    if out is not None:
        from gradcli.engine import autograd, outarg
        if autograd.is_grad_enabled() and out.requires_grad:
            raise RuntimeError(f"aten::fft_{name}(): {_NO_AUTOGRAD}")
        outarg.write(Tensor(a), out)
        return out
    return factories.tensor(Tensor(a), requires_grad=v["requires_grad"], device=v["device"])


def fftfreq(*args, **kwargs) -> Tensor:
    return _frequencies("fftfreq", args, kwargs, False)


def rfftfreq(*args, **kwargs) -> Tensor:
    return _frequencies("rfftfreq", args, kwargs, True)


def _shift(name: str, args, kwargs, inverse: bool) -> Tensor:
    v = signatures.parsed("torch.fft." + name, args, kwargs, {"dim": None})
    x, dim = v["input"], v["dim"]
    ndim = x._a.ndim
    dims = list(range(ndim)) if dim is None else [dim] if not isinstance(dim, (tuple, list)) else list(dim)
    shifts = [(x._a.shape[_wrap_roll(d, ndim)] + inverse) // 2 for d in dims]
    return shape.roll(x, shifts, dims)


def _wrap_roll(d: int, ndim: int) -> int:
    from gradcli.engine.recording import wrap_dim
    return wrap_dim(d, ndim)


def fftshift(*args, **kwargs) -> Tensor:
    return _shift("fftshift", args, kwargs, False)


def ifftshift(*args, **kwargs) -> Tensor:
    return _shift("ifftshift", args, kwargs, True)


_NO_AUTOGRAD = "functions with out=... arguments don't support automatic differentiation, but one of the arguments " \
               "requires grad."


def _into(name: str, function, args: tuple, kwargs: dict, out) -> Tensor:
    """A transform's out= overload: PyTorch's checks of the output's dtype and of autograd (which the out=
    forms refuse, naming the primitive last run), then the result written into `out` (outarg.write)."""
    from gradcli.engine import autograd, outarg
    signatures.parsed("torch.fft." + name, args, {**kwargs, "out": out}, {})      # (the parser's TypeErrors)
    x = args[0] if args else kwargs["input"]
    word = name[:-1] + "n" if name.endswith("2") else name          # (fft2's messages say fftn, ...)
    o = out._a.dtype
    if name.startswith(("irfft", "hfft")):
        if o.kind != "f":
            raise RuntimeError(f"{word} expects a floating point output tensor, but got {TYPE_WORDS[o.name]}")
        kind = "c2r"
    else:
        if o.kind != "c":
            raise RuntimeError(f"{word} expects a complex output tensor, but got {TYPE_WORDS[o.name]}")
        real_input = x._a.dtype.kind != "c"
        kind = "r2c" if real_input and (name in ("fft", "ifft", "rfft", "ihfft", "rfftn", "rfft2") or
                                         name == "ihfftn" and x._a.ndim == 1) else "c2c"
        if real_input and name in ("ifft", "ihfft") and autograd.is_grad_enabled() and x.requires_grad:
            raise NotImplementedError(f"gradcli does not implement torch.fft.{name} of a real tensor that requires "
                                      "grad with out= (PyTorch returns the output with a NotImplemented grad_fn)")
    if autograd.is_grad_enabled() and (out.requires_grad or x.requires_grad):
        raise RuntimeError(f"_fft_{kind}(): {_NO_AUTOGRAD}")
    with autograd.set_grad_enabled(False):
        result = function(*args, **kwargs)
    if result._a.dtype.kind == "c" and result._a.dtype.itemsize > o.itemsize:
        raise NotImplementedError(f"gradcli does not implement torch.fft.{name} into an out= of lower precision "
                                  f"(PyTorch's copy there discards the imaginary parts)")
    outarg.write(result, out)
    return out


def _with_out(name: str, function):
    def call(*args, out=None, **kwargs):
        if out is None:
            return function(*args, **kwargs)
        return _into(name, function, args, kwargs, out)
    call.__name__ = call.__qualname__ = name
    return call


def _signatures() -> None:
    """The parameters help shows for each function (they take *args, **kwargs: PyTorch's parser checks them)."""
    import inspect
    P = inspect.Parameter
    one = [P("input", P.POSITIONAL_OR_KEYWORD), P("n", P.POSITIONAL_OR_KEYWORD, default=None),
           P("dim", P.POSITIONAL_OR_KEYWORD, default=-1), P("norm", P.POSITIONAL_OR_KEYWORD, default=None)]
    nd = [P("input", P.POSITIONAL_OR_KEYWORD), P("s", P.POSITIONAL_OR_KEYWORD, default=None),
          P("dim", P.POSITIONAL_OR_KEYWORD, default=None), P("norm", P.POSITIONAL_OR_KEYWORD, default=None)]
    two = [p.replace(default=(-2, -1)) if p.name == "dim" else p for p in nd]
    freq = [P("n", P.POSITIONAL_OR_KEYWORD), P("d", P.POSITIONAL_OR_KEYWORD, default=1.0),
            *(P(k, P.KEYWORD_ONLY, default=v) for k, v in (("dtype", None), ("device", None),
                                                           ("requires_grad", False)))]
    shift = [P("input", P.POSITIONAL_OR_KEYWORD), P("dim", P.POSITIONAL_OR_KEYWORD, default=None)]
    for name in NAMES:
        params = (freq if name.endswith("freq") else shift if name.endswith("shift") else
                  two if name.endswith("2") else nd if name.endswith("n") else one)
        function = globals()[name]
        if not name.endswith(("freq", "shift")):
            function = globals()[name] = _with_out(name, function)
        function.__signature__ = inspect.Signature(params)


NAMES = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
         "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift")
_signatures()
