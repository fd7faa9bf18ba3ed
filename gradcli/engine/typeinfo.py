"""torch.finfo and torch.iinfo: the limits of a floating-point or integer dtype, with PyTorch's fields,
values (Python floats and ints), printing and argument errors; and the type-promotion queries
torch.promote_types, torch.can_cast and torch.result_type."""

from __future__ import annotations

import numpy as np

from gradcli.engine import dtypes


class FInfo:
    """torch.finfo(dtype): bits, eps, max, min, tiny (= smallest_normal), resolution and the dtype's name."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
    __hash__ = None         # unhashable, as PyTorch's

    def __eq__(self, other):
        return other.__class__ is FInfo and all(getattr(self, f) == getattr(other, f) for f in FInfo.__slots__)

    def __ne__(self, other):
        return not self == other

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class IInfo:
    """torch.iinfo(dtype): bits, max, min and the dtype's name."""

    __slots__ = ("bits", "max", "min", "dtype")
    __hash__ = None

    def __eq__(self, other):
        return other.__class__ is IInfo and all(getattr(self, f) == getattr(other, f) for f in IInfo.__slots__)

    def __ne__(self, other):
        return not self == other

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


def _dtype_arg(name: str, args: tuple, kwargs: dict):
    """The one dtype `name()` takes (positional or `type=`), with PyTorch's parser's words otherwise; None
    for a call without one."""
    if kwargs and set(kwargs) != {"type"} or kwargs and args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "type"')
    if len(args) > 1:
        if name == "iinfo":
            raise TypeError(f"iinfo() takes 1 positional argument but {len(args)} were given")
        from gradcli.engine.factories import _type_name
        raise TypeError(f"finfo() received an invalid combination of arguments - got "
                        f"({', '.join(_type_name(a) for a in args)}), but expected one of:\n"
                        " * (torch.dtype type)\n * ()\n")
    value = args[0] if args else kwargs.get("type", _NONE)
    if value is _NONE:
        return None
    if value.__class__ is not dtypes.DType:
        raise TypeError(f"{name}(): argument 'type' (position 1) must be torch.dtype, not {type(value).__name__}")
    return value


_NONE = object()


def finfo(*args, **kwargs) -> FInfo:
    dtype = _dtype_arg("finfo", args, kwargs)
    if dtype is None:
        if "type" in kwargs or args:
            raise TypeError('finfo() missing 1 required positional arguments: "type"')
        dtype = dtypes.default_float
    dtype = dtype.to_real() if dtype.is_complex else dtype      # a complex dtype: its parts' (dtype=float32)
    if not dtype.is_floating_point:
        raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                        "'torch.finfo'")
    info = dtypes.finfo(dtype.np)
    out = FInfo()
    out.bits = int(info.bits)
    out.eps, out.max, out.min = float(info.eps), float(info.max), float(info.min)
    out.tiny = out.smallest_normal = float(info.smallest_normal)
    out.resolution = 10.0 ** -int(info.precision)      # a Python float: 1e-06, not float32(1e-06)
    out.dtype = dtype.name
    return out


def iinfo(*args, **kwargs) -> IInfo:
    dtype = _dtype_arg("iinfo", args, kwargs)
    if dtype is None:
        raise TypeError('iinfo() missing 1 required positional arguments: "type"')
    if dtype is dtypes.bool_:
        raise TypeError("torch.bool is not supported by torch.iinfo")
    if dtype.is_floating_point or dtype.is_complex:
        raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
    info = np.iinfo(dtype.np)
    out = IInfo()
    out.bits, out.max, out.min, out.dtype = int(info.bits), int(info.max), int(info.min), dtype.name
    return out


def _two_dtypes(name: str, first: str, second: str, a, b) -> None:
    for position, (arg, value) in enumerate(((first, a), (second, b)), 1):
        if value.__class__ is not dtypes.DType:
            from gradcli.engine.factories import _type_name
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be torch.dtype, not "
                            f"{_type_name(value)}")


def promote_types(type1, type2) -> dtypes.DType:
    """The dtype an operation on tensors of these two dtypes computes in."""
    _two_dtypes("promote_types", "type1", "type2", type1, type2)
    return dtypes.promote_types(type1, type2)


def can_cast(from_, to) -> bool:
    """Whether PyTorch's type promotion may cast `from_` to `to` (same_kind): never a float to an integer, nor
    anything but a bool to bool."""
    _two_dtypes("can_cast", "from_", "to", from_, to)
    if from_.category >= dtypes.FLOAT and to.category < from_.category:      # float to int, complex to real
        return False
    return not (to is dtypes.bool_ and from_ is not dtypes.bool_)


def result_type(tensor, other) -> dtypes.DType:
    """The dtype of an elementwise operation on these operands (tensors or Python numbers)."""
    from gradcli.engine.recording import result_dtype
    from gradcli.engine.tensor import Tensor
    for value in (tensor, other):
        if value.__class__ is not Tensor and value.__class__ not in (int, float, bool, complex):
            raise TypeError("result_type(): invalid arguments")      # (PyTorch's message: signatures.py)
    return result_dtype(tensor, other)


# PyTorch's C types: their messages name them so ("unhashable type: 'torch.finfo'")
FInfo.__name__ = "torch.finfo"
IInfo.__name__ = "torch.iinfo"
