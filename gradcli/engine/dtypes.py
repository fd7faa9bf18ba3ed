"""Tensor dtypes as PyTorch names them, and PyTorch's type-promotion rules; the layouts (torch.strided, torch.sparse_coo) and memory formats."""

from __future__ import annotations

import numpy as np

from gradcli.display import modern
from gradcli.engine.state import STATE

# Promotion categories: a higher category wins over any lower one.
BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


class DType:
    """A torch dtype: prints as `torch.float32`, maps onto one numpy dtype."""

    __slots__ = ("name", "np", "category", "itemsize", "legacy", "message", "is_floating_point", "is_signed",
                 "is_complex")

    def __init__(self, name: str, np_dtype, category: int, legacy: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.legacy = legacy                 # the 0.3-era type string, still used in some error messages
        # the name some of PyTorch's messages give it (version checks, expand): the legacy one, but the C++ type's
        # for the two dtypes its legacy table lacks there (CPUBoolType, CPUBFloat16Type)
        self.message = legacy
        self.is_floating_point = category == FLOAT
        self.is_complex = category == COMPLEX
        self.is_signed = self.np.kind != "u" and self.np.kind != "b"

    def __repr__(self) -> str:
        return "torch." + self.name

    __str__ = __repr__

    def __getattr__(self, name: str):
        # reached only for an empty slot: bfloat16's `np` before ml_dtypes is imported
        if name != "np" or self.name != "bfloat16":
            raise AttributeError(name)
        import ml_dtypes
        self.np = np.dtype(ml_dtypes.bfloat16)
        _BY_NP[self.np] = self
        return self.np

    def __reduce__(self):
        return (by_name, (self.name,))

    def to_real(self) -> DType:
        """torch.dtype.to_real: a complex dtype's part dtype; any other dtype itself."""
        return _PARTS.get(self, self)

    def to_complex(self) -> DType:
        """torch.dtype.to_complex: the complex dtype of a floating one's precision (a complex one: itself)."""
        STATE.complex_seen = True
        if self.category == COMPLEX:
            return self
        if self is float16:
            raise NotImplementedError(COMPLEX32)
        if self.category != FLOAT:
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_TYPE_NAMES[self.name]}")
        return complex128 if self is float64 else complex64


float16 = DType("float16", np.float16, FLOAT, "torch.HalfTensor")
float32 = DType("float32", np.float32, FLOAT, "torch.FloatTensor")
float64 = DType("float64", np.float64, FLOAT, "torch.DoubleTensor")
uint8 = DType("uint8", np.uint8, INT, "torch.ByteTensor")
int8 = DType("int8", np.int8, INT, "torch.CharTensor")
int16 = DType("int16", np.int16, INT, "torch.ShortTensor")
int32 = DType("int32", np.int32, INT, "torch.IntTensor")
int64 = DType("int64", np.int64, INT, "torch.LongTensor")
bool_ = DType("bool", np.bool_, BOOL, "torch.BoolTensor")
bool_.message = "CPUBoolType"
complex64 = DType("complex64", np.complex64, COMPLEX, "torch.ComplexFloatTensor")
complex128 = DType("complex128", np.complex128, COMPLEX, "torch.ComplexDoubleTensor")
_PARTS = {complex64: float32, complex128: float64}
COMPLEX32 = ("gradcli does not implement torch.complex32 (complex half precision, PyTorch's experimental "
             "ComplexHalf): use torch.complex64 or torch.complex128")
# c10's ScalarType names, as to_complex's error words them
_SCALAR_TYPE_NAMES = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                      "bool": "Bool"}



def _bfloat16() -> DType:
    """torch.bfloat16. numpy has no such type: its arrays are ml_dtypes' bfloat16 (numpy kind "V"; arithmetic in
    float, rounded to nearest even after each operation, as PyTorch's CPU kernels round theirs). ml_dtypes is
    imported the first time something reads the dtype's `np` (DType.__getattr__), so a plain run never pays for
    it. The engine's float tests read `kind in "fV"`."""
    dt = DType.__new__(DType)
    dt.name, dt.category, dt.itemsize, dt.legacy = "bfloat16", FLOAT, 2, "torch.BFloat16Tensor"
    dt.message = "CPUBFloat16Type"
    dt.is_floating_point = dt.is_signed = True
    dt.is_complex = False
    return dt


bfloat16 = _bfloat16()        # its `np` slot stays empty until first read


ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool_, bfloat16, complex64, complex128)
_BY_NP = {d.np: d for d in ALL if d is not bfloat16}
_BY_NAME = {d.name: d for d in ALL}

# The names scripts reach as `torch.<alias>`.
ALIASES = {
    "float": float32, "float32": float32, "double": float64, "float64": float64,
    "half": float16, "float16": float16, "bfloat16": bfloat16, "long": int64, "int64": int64, "int": int32,
    "int32": int32, "short": int16, "int16": int16, "int8": int8, "uint8": uint8, "bool": bool_,
    "complex64": complex64, "cfloat": complex64, "complex128": complex128, "cdouble": complex128,
}

default_float = float32


class Layout:
    """A torch.layout: how a tensor keeps its elements (torch.strided, torch.sparse_coo); prints as its name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_layout_named, (self.name,))


def _layout_named(name: str) -> Layout:
    return strided if name == "strided" else sparse_coo


strided = Layout("strided")
sparse_coo = Layout("sparse_coo")


class MemoryFormat:
    """A torch.memory_format: the order of dims a tensor's elements are laid out in (torch.contiguous_format,
    torch.channels_last, ...); prints as its name. gradcli.engine.layout lays tensors out by it."""

    __slots__ = ("_name",)         # (not `name`: PyTorch's memory formats have no attribute of that name)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return (_memory_format_named, (self._name,))


def _memory_format_named(name: str) -> MemoryFormat:
    return MEMORY_FORMATS[name]


contiguous_format = MemoryFormat("contiguous_format")
channels_last = MemoryFormat("channels_last")
channels_last_3d = MemoryFormat("channels_last_3d")
preserve_format = MemoryFormat("preserve_format")
MemoryFormat.__name__ = "torch.memory_format"       # (what Python's messages and PyTorch's parser call it)
MEMORY_FORMATS = {f._name: f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)}

# The legacy tensor classes as Tensor.type(cls) takes them: id of the function a script's torch.FloatTensor
# (or its kin) calls -> its dtype; torch.Tensor's -> None, the default float dtype
# (gradcli.language.devices and stdlib register them)
LEGACY_CLASSES: dict = {}


def set_default_float(dtype: DType) -> None:
    """torch.set_default_dtype: what factories and Python floats make, and what prints without `dtype=`."""
    global default_float
    default_float = dtype
    modern.default_float = dtype.name


def by_name(name: str) -> DType:
    return _BY_NAME[name]


def finfo(npdt: np.dtype):
    """numpy's finfo of a float numpy dtype, ml_dtypes' for bfloat16 (numpy's knows only its own types)."""
    if npdt.kind == "V":
        import ml_dtypes
        return ml_dtypes.finfo(npdt)
    return np.finfo(npdt)


def of_array(a: np.ndarray) -> DType:
    """The torch dtype of a numpy array (arrays outside the supported set are a bug upstream)."""
    return _BY_NP[a.dtype]


def promote_types(a: DType, b: DType) -> DType:
    """torch.promote_types for two tensors of the same priority."""
    if a is b:
        return a
    if a.category == COMPLEX or b.category == COMPLEX:
        return _promote_complex(a, b)
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == FLOAT:
        if a.itemsize == b.itemsize:        # float16 with bfloat16: neither holds the other
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a.category == BOOL:
        return a
    # Integers: widest wins; mixing uint8 with a signed type needs a wider signed type.
    if a is uint8 or b is uint8:
        other = b if a is uint8 else a
        return int16 if other is int8 else other
    return a if a.itemsize >= b.itemsize else b


def _promote_complex(a: DType, b: DType) -> DType:
    """A complex dtype with any other: complex, with the wider of the two precisions (a real operand's
    precision counts only when it is floating: float64 with complex64 is complex128)."""
    STATE.complex_seen = True
    c, other = (a, b) if a.category == COMPLEX else (b, a)
    if other.category == COMPLEX:
        return a if a.itemsize >= b.itemsize else b
    if other is float64:
        return complex128
    return c


def default_complex() -> DType:
    """The complex dtype of the default float dtype's precision (what a Python complex makes)."""
    STATE.complex_seen = True
    return default_float.to_complex()


def scalar_dtype(value) -> DType:
    """The dtype a Python number takes when it stands alone (torch.tensor(3.5) is float32)."""
    if value is True or value is False:
        return bool_
    if isinstance(value, int):
        return int64
    if value.__class__ is complex:
        return default_complex()
    return default_float


def result_type(dim: DType | None, zero_dim: DType | None, scalar: DType | None) -> DType:
    """PyTorch's result type: dimensioned tensors outrank 0-d tensors, which outrank Python scalars;
    a lower-ranked operand only matters when its category (bool < int < float) is higher."""
    result = dim
    for lower in (zero_dim, scalar):
        if lower is None:
            continue
        if result is None or lower.category > result.category:
            # a complex operand beside a floating one: complex, of the floating one's precision
            result = result.to_complex() if lower.category == COMPLEX and result is not None and \
                result.category == FLOAT else lower
    return result


# what CPython's own messages call it, as PyTorch's C type ("unsupported operand type(s) for +: 'torch.dtype' and
# 'int'"); gradcli's code tells dtypes by class, never by this name
DType.__name__ = "torch.dtype"
