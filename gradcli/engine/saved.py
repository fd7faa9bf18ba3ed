"""What a node saved, as PyTorch shows it: `grad_fn._saved_self`, `_saved_dim`, `_saved_result`, ...

PyTorch gives each node type its own `_saved_*` attributes (public API despite the underscore), named
after the derivative formula's inputs. The names per node type, and the kind of value each gives, come
from the oracle (tools/saved_attrs.py writes data/saved_attrs.json); this module reads the file on the
first such access only. A name the table lacks for a node is PyTorch's AttributeError. The values come
from the node's `saved` tuple (the row's `saves` names, recording.Op); where gradcli keeps a value in
another form (a shape for `self_sym_sizes`, a dims tuple for `dim`) the value is converted to PyTorch's
view of it, and where gradcli does not keep what PyTorch saves, a NotImplementedError says so.
"""

from __future__ import annotations

import operator
import os

import numpy as np

from gradcli.engine import autograd, savedhooks, slim
from gradcli.engine.recording import GivenDims, Out
from gradcli.engine.tensor import Tensor

_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data", "saved_attrs.json")
_table: dict | None = None        # node type -> {attribute: kind}
_orders: dict | None = None       # node type -> its `_saved_*` tensor names in PyTorch's pack order



def _kind(node) -> str:
    """The node type whose saved values `node` has: a view-copy's node (ViewBackward0_copy) has its view's."""
    return node.op.node.removesuffix("_copy")


def _nodes() -> dict:
    global _table, _orders
    if _table is None:
        import json         # on the first access only: json costs start-up 1 ms
        with open(_DATA, encoding="utf-8") as f:
            data = json.load(f)
        _table, _orders = data["nodes"], data["pack order"]
    return _table


def pack_order(node, indices: list) -> list:
    """Of `indices` (tensors in `node.saved`), those PyTorch saves for this node type (a tensor gradcli
    alone keeps is not packed: PyTorch's hooks would not see it), in the order PyTorch packs them."""
    kinds = _nodes().get(_kind(node))
    if kinds is None:               # a node type the oracle's corpus did not reach: every tensor, in order
        return indices
    saves = tuple(_PYTORCH_NAMES.get((_kind(node), name), name) for name in node.op.saves)
    indices = [i for i in indices if "_saved_" + saves[i] in kinds]
    order = _orders.get(_kind(node))
    if order is None or len(indices) < 2:
        return indices
    rank = {saves.index(a[7:]): r for r, a in enumerate(order) if a[7:] in saves}
    return sorted(indices, key=lambda i: (rank.get(i, len(rank)), i))


def names(node) -> tuple:
    """The saved-value attributes PyTorch has on `node`'s type, in PyTorch's dir() order."""
    return tuple(_nodes().get(_kind(node), ()))


def has(node, name: str) -> bool:
    return name in _nodes().get(_kind(node), ())


def attribute(node, name: str):
    """`node.name` for a `_saved_*` or `_raw_saved_*` name, as PyTorch gives it."""
    kinds = _nodes().get(_kind(node), {})
    kind = kinds.get(name)
    if kind is None:
        raise AttributeError(f"'{node.op.node}' object has no attribute '{name}'")
    saved = slim.restore(node)
    if name.startswith("_raw_saved_"):
        key = _ALIASES.get((_kind(node), name[len("_raw_saved_"):]), name[len("_raw_saved_"):])
        saves = node.op.saves
        if kind == "SavedTensor" and key in saves:
            return savedhooks.SavedTensor(node, saves.index(key))
        raise NotImplementedError(f"gradcli does not save {node.op.node}.{name}")
    key = _ALIASES.get((_kind(node), name[len("_saved_"):]), name[len("_saved_"):])
    if saved is autograd.FREED:
        if kind == "Tensor" or kind == "?" or kind == "None":
            raise RuntimeError(autograd.FREED_MESSAGE)
        # PyTorch keeps a node's numbers and sizes after a backward; gradcli frees everything
        raise NotImplementedError(f"gradcli does not keep {node.op.node}.{name} after a backward pass "
                                  "freed the graph")
    if node.checks and key in node.op.saves:
        _check_version(node, saved[node.op.saves.index(key)])
    value = _value(node, key, kind)
    if value is _MISSING:
        raise NotImplementedError(f"gradcli does not save {node.op.node}.{name}")
    return value


def _check_version(node, raw) -> None:
    """PyTorch's error for reading a saved tensor that was changed in place since (SavedVariable::unpack
    checks its version on every read, as the backward pass does)."""
    if raw.__class__ is Tensor:
        entries = tuple(e for e in node.checks if e[0] is raw)
    elif raw.__class__ is Out:          # the node's own result: its check is the one without a tensor
        entries = tuple(e for e in node.checks if e[0] is None)
    else:
        return
    if entries:
        autograd._check_versions(node, entries)


_MISSING = object()
# (node, PyTorch's saved name) -> the row's name for it, where PyTorch calls the node's own result otherwise
_ALIASES = {("ScaledDotProductFlashAttentionForCpuBackward0", "output"): "result",
            ("LinalgCholeskyExBackward0", "L"): "result", ("LinalgLuFactorExBackward0", "LU"): "result",
            ("LinalgLstsqBackward0", "solution"): "result", ("LinalgVectorNormBackward0", "ord"): "p", ("TriangularSolveBackward0", "solution"): "result",
            ("CtcLossBackward0", "result0"): "result", ("UnfoldBackwardBackward0", "dim"): "dimension"}
_PYTORCH_NAMES = {(node, ours): theirs for (node, theirs), ours in _ALIASES.items()}
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}        # at::Reduction, as a loss node saves it


def _lookup(node, key: str):
    saves = node.op.saves
    if key in saves:
        value = node.saved[saves.index(key)]
        if value.__class__ is savedhooks.Packed:    # it went through a pack hook: unpack runs on each read
            return value.visible(node)
        return value
    return _MISSING


def _value(node, key: str, kind: str):
    if key in _INDEX_NAMES and _kind(node) in _INDEX_NODES:
        return _index_value(node, key)
    for v in node.saved:                    # a value the script gave, kept on a tuple the node uses
        if v.__class__ is GivenDims:
            given = v.given
            if given.__class__ is dict:
                if key in given:
                    return _given(given[key], kind) if "dim" in key else _as_kind(node, given[key], kind)
            elif key == "dim" or key == "dims":
                return _given(given, kind)
    value = _lookup(node, key)
    if value is not _MISSING:
        if key == "padding_idx" and value is None:     # PyTorch saves -1, shown as its unsigned 64 bits
            return _unsigned(-1)
        if key == "reduction" and value.__class__ is str:      # PyTorch saves the enum's int
            return _REDUCTIONS.get(value, _MISSING)
        if key == "total_weight" and value.__class__ is float:     # nll_loss's, a 0-d tensor of the input's dtype
            x = _lookup(node, "self")
            return Tensor(np.array(value, (x._a if x.__class__ is Tensor else x).dtype))
        if value.__class__ is int and value < 0 and key in _UNSIGNED_INTS.get(_kind(node), ()):
            return _unsigned(value)         # int64 arguments as given, shown as their unsigned 64 bits
        if key in _DIM_KEYS and value.__class__ is int and value < 0 and _kind(node) in _GIVEN_DIM_NODES:
            return _unsigned(value)         # an int64 dim as given, shown as its unsigned 64 bits
        if key in _DIM_KEYS and value.__class__ is tuple and _kind(node) in _GIVEN_DIM_NODES:
            return tuple(_unsigned(d) for d in value)
        if value is None and key == "dims" and _kind(node) == "RollBackward0":
            return ()                       # a roll of the flattened tensor saved no dims
        if _kind(node) == "Rot90Backward0":      # k and dims as given, unsigned too
            return _unsigned(value) if key == "k" else tuple(_unsigned(d) for d in value)
        return _as_kind(node, value, kind)
    if key == "dim":                        # gradcli keeps a reduction's dims as a tuple
        dims = _lookup(node, "dims")
        if dims is not _MISSING:
            return _as_kind(node, dims, kind)
    if key.endswith("_sym_sizes") or key.endswith("_sym_numel"):
        shape = _shape(node, key[:-len("_sym_sizes")])
        if shape is _MISSING:
            return _MISSING
        if key.endswith("_sym_numel"):
            return int(np.prod(shape, dtype=np.int64))
        return shape
    return _MISSING


_GIVEN_DIM_NODES = frozenset(("CumsumBackward0", "CumprodBackward0", "ProdBackward1", "StackBackward0", "RenormBackward0", "MaxBackward0", "MinBackward0", "SortBackward0", "SortBackward1", "TopkBackward0",
                              "TransposeBackward0", "TransposeBackward1", "UnsqueezeBackward0", "UnsqueezeBackward1",
                              "SqueezeBackward1", "SqueezeBackward4", "GluBackward0", "GluBackwardBackward0",
                              "NansumBackward0", "VarMeanBackward0", "StdMeanBackward0",
                              "ScatterBackward0", "ScatterBackward1", "ScatterAddBackward0", "IndexAddBackward0",
                              "SafeSoftmaxBackward0", "MedianBackward1", "NanmedianBackward1", "KthvalueBackward0",
                              "ModeBackward0", "CummaxBackward0", "CumminBackward0", "LogcumsumexpBackward0",
                              "AminmaxBackward0", "LinalgCrossBackward0", "SelectScatterBackward0",
                              "SliceScatterBackward0", "IndexFillBackward0", "IndexFillBackward1",
                              "IndexCopyBackward0", "ScatterReduceBackward0", "IndexReduceBackward0"))
_DIM_KEYS = frozenset(("dim", "dim0", "dim1"))
_UNSIGNED_INTS = {"DiagonalBackward0": ("offset",), "TrilBackward0": ("diagonal",), "TriuBackward0": ("diagonal",), "UnfoldBackward0": ("dimension",),
                  "SelectScatterBackward0": ("index",), "DiagonalScatterBackward0": ("offset", "dim1", "dim2"),
                  **dict.fromkeys(("NllLossBackward0", "NllLoss2DBackward0", "NllLossBackwardBackward0",
                                   "NllLoss2DBackwardBackward0"), ("ignore_index",))}
_INDEX_NODES = {"SelectBackward0": "key", "SliceBackward0": "key", "UnbindBackward0": "index"}
_INDEX_NAMES = frozenset(("dim", "index", "start", "end", "step"))
_INT64_MAX = (1 << 63) - 1


def _given(dim, kind: str):
    """A dim= as the script gave it, as PyTorch's node shows it: None, an int, or a tuple of ints (a
    0-d integer tensor read as its int), each negative one as its unsigned 64 bits."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return tuple(_unsigned(operator.index(d)) for d in dim)
    d = _unsigned(operator.index(dim) if dim.__class__ is not Tensor else int(dim._a))
    return d if kind == "int" else (d,)


def _unsigned(v: int) -> int:
    """A negative int64 as PyTorch shows a saved SymInt or int64 of these nodes: as its unsigned 64 bits."""
    return v + (1 << 64) if v < 0 else v


def _index_value(node, name: str):
    """select's, slice's and unbind's dim, index, start, end and step, read off the numpy key the node keeps:
    the step's own element after leading full slices (a dim counted from the left, as indexing gives it), or
    right after an Ellipsis and before trailing full slices (a negative dim a script gave select(), narrow()
    or unbind(), which PyTorch keeps as given). Slice bounds as the script wrote them, a missing end as
    INT64_MAX and a missing start or step as 0 and 1."""
    key = _lookup(node, _INDEX_NODES[_kind(node)])
    if key.__class__ is not tuple or not key:
        return _MISSING
    items = list(key)
    if items[0] is Ellipsis and len(items) > 1:
        element, dim = items[1], 1 - len(items)
    else:
        while items and items[-1] is Ellipsis:
            items.pop()
        if not items:
            return _MISSING
        element, dim = items[-1], len(items) - 1
    if name == "dim":
        return _unsigned(dim)
    if element.__class__ is slice:
        if name == "index":
            return _MISSING
        value = {"start": element.start, "end": element.stop, "step": element.step}[name]
        if value is None:
            return {"start": 0, "end": _INT64_MAX, "step": 1}[name]
        return _unsigned(operator.index(value))
    if name != "index":
        return _MISSING
    return _unsigned(operator.index(element))


def _shape(node, base: str):
    """The shape of input `base` when the node saved it, or the shape it kept for it (`shape`)."""
    value = _lookup(node, base)
    if value.__class__ is Tensor:
        return tuple(value._a.shape)
    if isinstance(value, np.ndarray):
        return tuple(value.shape)
    shape = _lookup(node, "shape" if base == "self" else base + "_shape")
    if shape.__class__ is tuple and all(d.__class__ is int for d in shape):
        return shape
    return _MISSING


def _as_kind(node, value, kind: str):
    """A saved value as PyTorch gives it: a tensor for a tensor, a tuple of ints for an int[] argument."""
    if value.__class__ is Out:             # the node's own result: a new tensor whose grad_fn is the node
        t = Tensor(value.a)
        t.grad_fn = node
        t.requires_grad = True
        return t
    if isinstance(value, np.ndarray):
        if kind != "Tensor" and kind != "?" and kind != "None":
            return _MISSING                 # an array where PyTorch saves a number: gradcli's own form
        return Tensor(value)
    if value is None or value.__class__ is Tensor:
        return value
    if kind == "tuple[Tensor]" and value.__class__ is tuple and all(v.__class__ is Tensor for v in value):
        return value                        # a list of tensors (index_put's indices)
    if kind.startswith("tuple["):
        if value.__class__ is int:
            return (value,)
        if value.__class__ in (tuple, list) and all(v.__class__ is int for v in value):
            return tuple(value)
        return _MISSING
    if kind == "int" and value.__class__ is tuple and len(value) == 1:
        return value[0]
    if kind == "Tensor" and value.__class__ in _NUMBERS:
        # a Python number operand: PyTorch saved it wrapped in a 0-d tensor (int64, float64 or bool)
        return Tensor(np.array(value, dtype=_WRAPPED[value.__class__]))
    if value.__class__ in _NUMBERS and (kind in _NUMBERS_BY_NAME or kind == "?" or kind == "None"):
        if value.__class__ is int and not -(1 << 63) <= value < 1 << 63:
            # a Scalar from 2**63 on is kept unsigned; PyTorch reads it back as an int64
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return value                        # a Scalar: PyTorch gives it as the script passed it
    if value.__class__ is str and kind == "str":
        return value
    return _MISSING


_NUMBERS = (int, float, bool)
_WRAPPED = {int: np.int64, float: np.float64, bool: np.bool_}
_NUMBERS_BY_NAME = ("int", "float", "bool")
