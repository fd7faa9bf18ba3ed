"""The view-copy functions (torch.view_copy, transpose_copy, split_copy, ...): a view's elements as a new
contiguous tensor of their own. Their nodes are the view's, under the view's name with `_copy` added
(ViewBackward0_copy), with the view's formulas: each is made by the view function itself, then renamed, so the
values, checks and gradients are the view's. detach_copy has no derivative (NotImplemented), as in PyTorch."""

from __future__ import annotations

import copy
import re

import numpy as np

from gradcli.engine import forward, signatures
from gradcli.engine.autograd import OutputSlot
from gradcli.engine.layout import contiguous
from gradcli.engine.ops import complexops, elementwise, indexing, shape
from gradcli.engine.recording import apply, wrap_dim
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_RENAMED: dict = {}         # a view's row -> its _copy row


def _copy_row(op):
    row = _RENAMED.get(op)
    if row is None:
        row = _RENAMED[op] = copy.copy(op)
        row.node = op.node + "_copy"
    return row


def _owned(view: Tensor) -> Tensor:
    """The view's elements as a contiguous tensor of their own, its node the view's renamed."""
    out = Tensor(contiguous(np.array(view._a, order="C")))
    fn = view.grad_fn
    if fn is not None:
        node = fn.parent if fn.__class__ is OutputSlot else fn
        node.op = _copy_row(node.op)
        out.grad_fn, out.requires_grad = fn, True
    if STATE.fw_level is not None:
        forward.copy_tangents(out, view)
    return out


def _named(name: str, view_name: str, call):
    """`call()`, its argument errors said of `name` (PyTorch's parser names the _copy function)."""
    try:
        return call()
    except TypeError as e:
        text = str(e)
        renamed = re.sub(rf"^{view_name}\(\)", f"{name}()", text)
        if renamed == text:
            raise
        raise TypeError(renamed) from None


def _function(name: str, view_name: str, method):
    def function(input, *args, **kwargs):
        if input.__class__ is not Tensor:
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{signatures.type_name(input)}")
        result = _named(name, view_name, lambda: method(input, *args, **kwargs))
        if result.__class__ in (tuple, list):
            return tuple(_owned(v) for v in result)
        return _owned(result)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}: Tensor.{view_name}'s elements as a new contiguous tensor."
    return function


def _split_copy(input, split_size, dim=0):
    if split_size.__class__ in (list, tuple):       # (no overload of split_copy takes a list)
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{signatures.type_name(split_size)}")
    return Tensor.split(input, split_size, dim)


def _slice(input, dim=0, start=None, end=None, step=1):
    """x[..., start:end:step] along `dim` (SliceBackward0 even when it covers the whole dim)."""
    x = input._a
    d = wrap_dim(dim, x.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    key = (slice(None),) * d + (slice(start, end, step),)
    return shape._view_of(input, x[key], indexing.SLICE, (x.shape, key))


def _alias(input):
    return shape.alias(input)


def _unsqueeze(input, dim):
    return Tensor.unsqueeze(input, dim)


def _transpose(input, dim0, dim1):
    return Tensor.transpose(input, dim0, dim1)


alias_copy = _function("alias_copy", "alias", _alias)
as_strided_copy = _function("as_strided_copy", "as_strided", shape.as_strided_view)
diagonal_copy = _function("diagonal_copy", "diagonal", Tensor.diagonal)
expand_copy = _function("expand_copy", "expand", Tensor.expand)
permute_copy = _function("permute_copy", "permute", Tensor.permute)
select_copy = _function("select_copy", "select", Tensor.select)
slice_copy = _function("slice_copy", "slice", _slice)
split_copy = _function("split_copy", "split", _split_copy)
split_with_sizes_copy = _function("split_with_sizes_copy", "split_with_sizes", Tensor.split_with_sizes)
squeeze_copy = _function("squeeze_copy", "squeeze", Tensor.squeeze)
t_copy = _function("t_copy", "t", Tensor.t)
transpose_copy = _function("transpose_copy", "transpose", _transpose)
unbind_copy = _function("unbind_copy", "unbind", Tensor.unbind)
unfold_copy = _function("unfold_copy", "unfold", Tensor.unfold)
unsqueeze_copy = _function("unsqueeze_copy", "unsqueeze", _unsqueeze)
view_as_real_copy = _function("view_as_real_copy", "view_as_real", complexops.view_as_real)
_view_as_complex_copy = _function("view_as_complex_copy", "view_as_complex", complexops.view_as_complex)


def view_as_complex_copy(input, *args, **kwargs):
    """torch.view_as_complex_copy: refused under autograd, as PyTorch refuses a complex result of it."""
    if input.__class__ is Tensor and input.requires_grad and STATE.recording:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return _view_as_complex_copy(input, *args, **kwargs)


def view_copy(*args, **kwargs):
    """torch.view_copy(input, size | dtype): as view, but of any layout (the elements in their logical order),
    so its node is made here: ViewBackward0_copy, the view's row renamed."""
    form, values = signatures.bound("torch.view_copy", args, kwargs)
    input = values["input"]
    if form == 0:
        return _owned(shape.view(input, values["dtype"]))
    x = input._a
    size = shape._infer_size(_named("view_copy", "view", lambda: shape.int_list((values["size"],), "view", "size", 2)),
                             x.size)
    return apply(_copy_row(shape.VIEW), contiguous(np.array(x.reshape(size), order="C")), (input,), (x.shape,))


def detach_copy(input):
    """torch.detach_copy: a copy with no derivative (its node NotImplemented, as PyTorch's)."""
    if input.__class__ is not Tensor:
        raise TypeError(f"detach_copy(): argument 'input' (position 1) must be Tensor, not "
                        f"{signatures.type_name(input)}")
    out = contiguous(np.array(input._a, order="C"))
    if STATE.recording and input.requires_grad:
        return elementwise.not_implemented(out, (input,), "detach_copy")
    return Tensor(out)


NAMES = ("alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy", "select_copy",
         "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy",
         "unfold_copy", "unsqueeze_copy", "view_copy", "view_as_real_copy", "view_as_complex_copy")
