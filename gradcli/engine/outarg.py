"""The `out=` argument of torch functions (torch.add(x, y, out=result)): the result written into the given
tensor, which the call returns, with PyTorch's checks and its warning when it has to resize it."""

from __future__ import annotations

from gradcli.engine import autograd, dtypes, typeinfo
from gradcli.engine.recording import type_word
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

RESIZED = (
    "An output with one or more elements was resized since it had shape {old}, which does not match the required "
    "output shape {new}. This behavior is deprecated, and in a future PyTorch release outputs will not be resized "
    "unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
    "elements with t.resize_(0). (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)")


def call(name: str, function, args: tuple, kwargs: dict, out):
    """`function(*args, **kwargs)` as PyTorch's out= overload of `name` runs it: refused when autograd would
    have to record it, else computed and written into `out`, which is returned."""
    if out.__class__ is not Tensor:
        if out.__class__ not in (bool, int, float):
            from gradcli.engine.signatures import type_name
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type_name(out)}")
        from gradcli.engine import factories
        out = factories.tensor(out)     # PyTorch's parser takes a number as a 0-d tensor, written and dropped
    if autograd.is_grad_enabled() and (out.requires_grad or any(
            a.__class__ is Tensor and a.requires_grad for a in (*args, *kwargs.values()))):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    write(function(*args, **kwargs), out)
    return out


def write(result: Tensor, out: Tensor) -> None:
    """The result into `out`: cast to its dtype where PyTorch may cast it, resized (with PyTorch's warning when
    it held elements) where its shape differs."""
    src, dst = result._a, out._a
    if not typeinfo.can_cast(dtypes.of_array(src), dtypes.of_array(dst)):
        raise RuntimeError(f"result type {type_word(src)} can't be cast to the desired output type {type_word(dst)}")
    if dst.shape != src.shape:
        if dst.size:
            STATE.warn("UserWarning", RESIZED.format(old=list(dst.shape), new=list(src.shape)))
        out._a = src.astype(dst.dtype, copy=True)
        out._version[0] += 1
        return
    with autograd.set_grad_enabled(False):
        out.copy_(result)

