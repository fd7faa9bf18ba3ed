"""Linear algebra: matrix products."""

from __future__ import annotations

from gradcli.engine.recording import Op, needs_grad, record, saved_input, version_check
from gradcli.engine.tensor import Tensor

# fmt: off
MM = Op("MmBackward0", True, (lambda F, g, self, mat2: F.mm(g, F.t(mat2)),
                              lambda F, g, self, mat2: F.mm(F.t(self), g)))
# fmt: on

_DTYPE_WORDS = {"int64": "long int", "int32": "int", "float32": "float", "float64": "double", "bool": "bool",
                "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "float16": "c10::Half"}


def mm(a: Tensor, b: Tensor) -> Tensor:
    if b.__class__ is not Tensor:
        raise TypeError(f"mm(): argument 'mat2' (position 1) must be Tensor, not {type(b).__name__}")
    x, y = a._a, b._a
    if x.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if y.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({x.shape[0]}x{x.shape[1]} and {y.shape[0]}x{y.shape[1]})")
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_DTYPE_WORDS[x.dtype.name]} != {_DTYPE_WORDS[y.dtype.name]}")
    out = x @ y
    if not needs_grad(a, b):
        return Tensor(out)
    return record(MM, out, (a, b), (saved_input(a, x), saved_input(b, y)), (version_check(a), version_check(b)))
