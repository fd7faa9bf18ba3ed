"""Saved input tensors that only their node can reach, kept as bare arrays and made Tensors again on demand.

A node saves the input tensors its formulas need, with a version check each (recording.apply). In a
chain such as `y = y.sin()` the script soon drops the input, and the node is then the only holder of
a Tensor, its version counter and its check: over half of what a node costs. Once nothing else can
reach such a tensor (nothing holds it or its counter, no weak reference, no state of its own but its
history), nothing can change it in place or tell it from a twin, so the node may keep its array alone
(autograd.SlimSaved, checks dropped). A node whose one saved value is such a small array that nothing
else references keeps its bytes instead (a bytes object is a third of an array's size), its shape and
dtype in an autograd.Frozen shared by all nodes alike; the sweep reads the bytes as a read-only array.
`restore` makes the twin when a saved value is asked for as a tensor
(`grad_fn._saved_self`, create_graph, hooks, tools): a Tensor of the same array, history and version,
stored back in the node so every later read gives that same object, with its check again.

`slim` runs when a node gains a consumer (the next op on its output): by then a loop has rebound its
variable. A tensor the script still holds is left as it is, and so is one whose id() or hash() the
script took (`keep`): PyTorch's saved tensor is the same object, whose id a script may compare later.
So is one whose array `t.data = ...` replaced (keep again): its check names the array it was saved with.
"""

from __future__ import annotations

from sys import getrefcount
from weakref import getweakrefcount, ref

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.autograd import Frozen, Node, SlimSaved
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_ndarray = np.ndarray
_SMALL = 256            # bytes: larger arrays stay arrays (their copy would cost time, their header is small beside them)
_FROZEN: dict = {}      # (shape, dtype) -> its Frozen


def _held_here() -> int:
    """What getrefcount counts besides the object's holders when a local variable holds it (its own
    argument, the local): measured once, so a tensor the script holds is never taken for one it does not."""
    holder = [object()]
    probe = holder[0]
    return getrefcount(probe) - 1


_HELD_HERE = _held_here()


def slim(node, checks: tuple) -> None:
    """Keep the arrays of `node`'s saved input tensors instead of the tensors, when every one of its
    version checks is for such a tensor that nothing else can reach."""
    saved = node.saved
    # (while a forward-mode level is in force a tensor may carry a tangent, which a twin would lack)
    # (a Node with checks is apply's, whose op has a plan: restore reads it)
    if saved.__class__ is not tuple or node.__class__ is not Node or STATE.fw_level is not None:
        return
    for tensor, box, expected, shape, legacy, owner in checks:
        # the tensor: held by `saved` and its check only; the counter: by the tensor and the check only
        if (tensor is None or getrefcount(tensor) != _HELD_HERE + 2 or getrefcount(box) != _HELD_HERE + 2
                or expected != 0 or box[0] != 0 or getweakrefcount(tensor)):
            return
        # no state a twin would lack: a non-leaf with its history, no .grad, not a view, not retaining its
        # grad; its array the one it was saved with (`t.data = ...` keeps a tensor whole: keep())
        fn = tensor.grad_fn
        if (fn is None or tensor.grad is not None or tensor._base is not None or tensor._inference
                or tensor.requires_grad is not True or fn.retained is not None or tensor._version is not box
                or tensor._a.__class__ is not _ndarray):
            return
    if len(saved) == 1:
        a = tensor._a
        del tensor, box, fn
        # the array: held by the tensor alone (no view of it, no other tensor on it), its own data, C order
        if (a.nbytes <= _SMALL and getrefcount(a) == _HELD_HERE + 1 and a.base is None
                and a.flags.c_contiguous):
            key = (shape, legacy)       # the array's, as it was saved
            frozen = _FROZEN.get(key)
            if frozen is None:
                if len(_FROZEN) >= 1024:
                    _FROZEN.clear()
                frozen = _FROZEN[key] = Frozen(shape, a.dtype)
            node.saved = a.tobytes()
            node.checks = frozen
            return
    values = list(saved)
    for entry in checks:
        tensor = entry[0]
        for k, v in enumerate(values):
            if v is tensor:         # by identity: a Tensor's == is elementwise
                values[k] = tensor._a
                break
    node.saved = SlimSaved(values)
    node.checks = None


def restore(node) -> tuple:
    """`node.saved` with each slimmed input a Tensor again (each made once; the node keeps it and its
    version check, as when it was first saved)."""
    saved = node.saved
    if saved.__class__ is bytes:
        # a copy the twin owns: the bytes are immutable, and the twin may be changed in place
        values = [node.checks.thaw(saved)[0].copy()]
    elif saved.__class__ is SlimSaved:
        values = list(saved)
    else:
        return saved
    checks = []
    inputs = node.inputs
    for k, c in enumerate(node.op.plan):
        # an input position with an edge holds a Tensor unless slim made it an array
        if c >= 0 and inputs[c] is not None and values[k].__class__ is _ndarray:
            a = values[k]
            t = Tensor.__new__(Tensor)     # not Tensor(a): a replay (--check-grads) must not see a new tensor
            t._a = a
            t.requires_grad = True
            t.grad = None
            t.grad_fn = inputs[c]
            t._version = [0]
            t._acc = t._base = None
            t._inference = False
            values[k] = t
            checks.append((t, t._version, 0, a.shape, dtypes.of_array(a).message, None))
    node.saved = saved = tuple(values)
    node.checks = tuple(checks)
    return saved


# id -> weak reference, for the tensors a script took the id() or hash() of while they live (the weak
# reference is what makes slim leave them be); an entry goes when its tensor dies
_KEPT: dict = {}


def keep(t: Tensor) -> None:
    key = id(t)
    if key not in _KEPT:
        _KEPT[key] = ref(t, lambda _, key=key: _KEPT.pop(key, None))
