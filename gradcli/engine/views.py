"""In-place ops on views: the base's history gains a CopySlices node, the view an AsStridedBackward0.

When `v = y.view(6)` (or `y[0]`, `y.t()`, ...) is changed in place by an op recorded as node N, the
values of `y` change too, so `y`'s history must include N. As in PyTorch, `y.grad_fn` becomes a
CopySlices node whose inputs are y's previous history and N's other inputs: its backward takes
the region of the incoming gradient that the view covers, runs N's formulas on it ("replays" N),
and writes N's gradient for the view back into that region. The view itself becomes a strided
window onto the new `y` (AsStridedBackward0). The region is found once, as the flat positions of
the view's elements inside the base's buffer.
"""

from __future__ import annotations

import weakref

import numpy as np

from gradcli.engine import autograd
from gradcli.engine.autograd import FREED, FREED_MESSAGE, Node, edge
from gradcli.engine.recording import Op
from gradcli.engine.slim import restore


def replay(F, node: Node, i: int, g):
    """The gradient node `node` sends to its input `i` for incoming gradient `g`."""
    saved = node.saved
    if saved is FREED:
        raise RuntimeError(FREED_MESSAGE)
    checks = node.checks
    if checks.__class__ is autograd.Frozen:
        saved = checks.thaw(saved)
    elif checks is not None:
        autograd._check_versions(node)
    if saved.__class__ is autograd.SlimSaved and F.tensors:
        saved = restore(node)
    if saved.__class__ is autograd.PackedSaved:
        saved = autograd.unpacked(node, F)
    values = F.unpack(saved, node) if saved else saved
    gi = node.op.backward[i](F, g, *values)
    fit = node.fit
    if fit is not None and fit[i] is not None:
        gi = autograd._fit(F, gi, fit[i])
    return gi


def _base_gradient(F, g, node, positions, shape):
    """CopySlices, input 0 (the base's previous history): the incoming gradient, with the view's
    region replaced by what the in-place op sends back to the view's old values."""
    region = F.take(g, positions)
    inner = replay(F, node, 0, region) if node.inputs[0] is not None else F.zeros_like(region)
    return F.put(g, positions, inner)


def _other_gradient(i):
    def formula(F, g, node, positions, shape):
        return replay(F, node, i, F.take(g, positions))
    return formula


def _as_strided_gradient(F, g, positions, shape):
    if positions is None:
        raise NotImplementedError("gradcli cannot yet differentiate through a view of a non-contiguous tensor "
                                  "whose base was changed in place since the view was made")
    return F.spread(g, positions, shape)


def _stale_multi_output(F, g, message):
    raise RuntimeError(message)


_COPY_SLICES_FORMULAS = (_base_gradient, _other_gradient(1), _other_gradient(2), _other_gradient(3))


# Forward mode. A view's tangent is its region of the base's tangent (PyTorch's as_strided is auto_linear).
# CopySlices is not an op of its own there: the in-place op's row gives the view its tangent and
# forward.inplace_tangent writes it into the base's, as PyTorch's set_fw_grad does; these nodes are made
# by `rebase` below, never by recording.apply, so their column is never asked for a tangent.

def _as_strided_jvp(F, ts, xs, result, positions, shape):
    return F.take(ts[0], positions)


def _copy_slices_jvp(F, ts, xs, result, node, positions, shape):
    raise RuntimeError("CopySlices nodes are made by views.rebase after the tangents are written, not by "
                       "recording.apply")

# CopySlices frees what the in-place op saved exactly when that op's own node would.
# fmt: off
#                     node                  forward  saves                           formulas, one per input
COPY_SLICES      = Op("CopySlices",         None,    ("node", "positions", "shape"), _COPY_SLICES_FORMULAS,
                      saves_tensors=False, jvp=_copy_slices_jvp)
COPY_SLICES_SAVE = Op("CopySlices",         None,    ("node", "positions", "shape"), _COPY_SLICES_FORMULAS,
                      saves_tensors=True, jvp=_copy_slices_jvp)
AS_STRIDED       = Op("AsStridedBackward0", None,    ("positions", "shape"),         (_as_strided_gradient,),
                      jvp=_as_strided_jvp)
# the nodes of the views a function returns several of, and the name PyTorch's messages give the function
MULTI_VIEW = {"SplitBackward0": "Split", "SplitWithSizesBackward0": "SplitWithSizes", "UnbindBackward0": "Unbind"}
# an output of split/chunk/unbind whose base was changed in place since: any gradient through it is refused
STALE_MULTI = {name: Op(name, None, ("message",), (_stale_multi_output,), jvp=_stale_multi_output)
               for name in MULTI_VIEW}
autograd.UNUSABLE.update(STALE_MULTI.values())
# fmt: on


def positions(view: np.ndarray, base: np.ndarray):
    """Flat (C-order) indices into `base` of each element of `view` (a numpy view of base's buffer),
    or None when base's buffer is not one dense block with positive strides (any dim order: a
    transposed result such as `a.t() * 1` is one)."""
    item = base.itemsize
    if base.flags.c_contiguous:
        memory = np.arange(base.size)
    else:
        # the logical index of every element, laid out in memory as base's elements are
        ids = np.empty_like(base, dtype=np.intp)
        if any(s <= 0 for s in base.strides) or \
                tuple(s // item for s in base.strides) != tuple(s // ids.itemsize for s in ids.strides):
            return None
        ids[...] = np.arange(base.size).reshape(base.shape)
        memory = ids.ravel(order="K")
        if not np.shares_memory(memory, ids):
            return None
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    window = np.lib.stride_tricks.as_strided(memory[start:], shape=view.shape,
                                             strides=tuple(s // item * memory.itemsize for s in view.strides))
    return window.copy()


def follow(view) -> None:
    """A view whose base was just changed in place through another view of it (fill_diagonal_'s strided
    windows): its history becomes a window onto the base's new one, as PyTorch regenerates a view's grad_fn
    when its base's version moves on."""
    base = view._base
    view.grad_fn = Node(AS_STRIDED, (base.grad_fn,), (positions(view._a, base._a), base._a.shape))
    view.requires_grad = True


# id(base tensor) -> (a weak reference to it, weak references to the recorded views made of it): when the base
# changes in place through itself or one of them, the others' histories are made anew (views.regenerate). Keyed
# by identity: a tensor's == is elementwise.
_VIEWS = {}


def track(view, base) -> None:
    """Remember `view`, a recorded view of `base` (a tensor with a history of its own)."""
    key = id(base)
    entry = _VIEWS.get(key)
    if entry is None or entry[0]() is not base:
        entry = _VIEWS[key] = (weakref.ref(base, lambda ref, key=key: _forget(key, ref)), [])
    refs = entry[1]
    refs.append(weakref.ref(view))
    n = len(refs)
    if n >= 64 and not n & (n - 1):         # a long-lived base viewed again and again: drop the dead views
        refs[:] = [ref for ref in refs if ref() is not None]


def _forget(key: int, ref) -> None:
    entry = _VIEWS.get(key)
    if entry is not None and entry[0] is ref:
        del _VIEWS[key]


def output_index(fn) -> int:
    """Which output of split/chunk/unbind the node `fn` is (0 once a backward freed what it kept)."""
    saved = fn.saved
    if saved.__class__ is not tuple:
        return 0
    return saved[-1] if fn.op.node != "UnbindBackward0" else saved[-1][-1]


def regenerate(base, changed) -> None:
    """`changed` (`base` or a view of it) was just changed in place by a recorded op: every other live view of
    `base` now windows base's new history (AsStridedBackward0), as PyTorch regenerates a view's grad_fn once
    its base's version has moved on, so gradients through them see the change. An output of split, chunk or
    unbind cannot be regenerated: PyTorch refuses any use of its history, and gradcli any gradient through it."""
    entry = _VIEWS.get(id(base))
    if entry is None or entry[0]() is not base:
        return
    refs = entry[1]
    alive = []
    for ref in refs:
        view = ref()
        if view is None:
            continue
        alive.append(ref)
        fn = view.grad_fn
        if view is changed or fn is None:
            continue
        name = fn.op.node
        if name in STALE_MULTI:
            view.grad_fn = Node(STALE_MULTI[name], fn.inputs, (
                f"Output {output_index(fn)} of {MULTI_VIEW[name]} is a view and its base or another view of its base has been modified "
                "inplace. This view is the output of a function that returns multiple views. Such functions do "
                "not allow the output views to be modified inplace. You should replace the inplace operation by "
                "an out-of-place one.",))
        elif fn.op is not STALE_MULTI.get(name):
            follow(view)
    refs[:] = alive


def rebase(view, node: Node) -> None:
    """Make the in-place op recorded as `node` on `view` part of the history of the view's base."""
    base = view._base
    where = positions(view._a, base._a)
    if where is None:
        raise RuntimeError("gradcli cannot yet record an in-place operation on a view of a non-contiguous "
                           "tensor; call .contiguous() on the base first")
    if len(node.inputs) > len(_COPY_SLICES_FORMULAS):
        raise RuntimeError(f"gradcli cannot yet record in-place {node.op.node} on a view")
    row = COPY_SLICES_SAVE if node.op.saves_tensors else COPY_SLICES
    copy_slices = Node(row, (edge(base),) + tuple(node.inputs[1:]), (node, where, base._a.shape))
    base.grad_fn = copy_slices
    base.requires_grad = True
    view.grad_fn = Node(AS_STRIDED, (copy_slices,), (where, base._a.shape))
    view.requires_grad = True
