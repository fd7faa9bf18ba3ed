"""Hooks on saved tensors: torch.autograd.graph.saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks, and the SavedTensor objects of `grad_fn._raw_saved_*`.

While a `saved_tensors_hooks(pack, unpack)` is in force (STATE.saved_hooks), each tensor an op saves
goes through `pack` once the node exists (recording.apply calls `pack_node`), and the node keeps what
`pack` returned; whoever reads the saved values (the backward sweep, `grad_fn._saved_self`) gets them
through `unpack`, once per read, in the order PyTorch packs them (data/saved_attrs.json, "pack order").
A node whose values went through hooks holds an autograd.PackedSaved tuple instead of the plain one, so
the sweep pays one class test per node, and nothing else, when no hook was ever in force.
"""

from __future__ import annotations

from gradcli.engine import autograd, slim
from gradcli.engine.addresses import address
from gradcli.engine.recording import Out
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_REGISTER_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
    "to backward through the graph a second time or if you need to access saved variables after calling "
    "backward.")


class Packed:
    """What `pack` made of one saved tensor, with the `unpack` that turns it back; `result` says the
    tensor was the node's own output (kept as recording.Out once unpacked); `origin` what the saved tensor
    was to autograd when it was packed (its grad_fn, else its AccumulateGrad when it is a leaf that
    requires grad, else None)."""

    __slots__ = ("value", "unpack", "result", "origin")

    def __init__(self, value, unpack, result: bool, origin=None):
        self.value, self.unpack, self.result, self.origin = value, unpack, result, origin

    def open(self, node):
        """The saved value as the formulas take it: the tensor `unpack` returns (or its Out)."""
        t = self.unpack(self.value)
        if t.__class__ is not Tensor:
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                            f"type {_type_name(t)}")
        return Out(t._a) if self.result else t

    def visible(self, node):
        """The saved input as a script reads it (`grad_fn._saved_self`, `ctx.saved_tensors`): as PyTorch's
        SavedVariable unpacks through hooks, a new tensor on the unpacked data that is to autograd what the
        saved tensor was (its grad_fn, or the same leaf's AccumulateGrad, so gradients still reach it)."""
        t = self.open(node)
        if self.result:
            return t
        w = Tensor(t._a)
        w._version = t._version
        origin = self.origin
        if origin.__class__ is autograd.AccumulateGrad:
            w.requires_grad = True
            w._acc = origin
        elif origin is not None:
            w.requires_grad = True
            w.grad_fn = origin
        return w


def origin(t) -> object:
    """What Packed.origin keeps of a tensor being packed."""
    if t.__class__ is not Tensor or not t.requires_grad:
        return None
    return t.grad_fn if t.grad_fn is not None else autograd.grad_accumulator(t)


def _type_name(value) -> str:
    name = type(value).__name__
    return "NoneType" if value is None else name


def _packed(values: list, order: list) -> autograd.PackedSaved:
    saved = autograd.PackedSaved(values)
    saved.order = order
    return saved


class Hooks:
    """One saved_tensors_hooks pair in force, and the pair it covers (restored when it ends)."""

    __slots__ = ("pack", "unpack", "outer")

    def __init__(self, pack, unpack, outer):
        self.pack, self.unpack, self.outer = pack, unpack, outer

    def pack_node(self, node) -> None:
        """Pack each tensor `node` saved, in PyTorch's order; the node keeps what `pack` returned."""
        saved = node.saved
        values = list(saved)
        tensors = [i for i, v in enumerate(values) if v.__class__ is Tensor or v.__class__ is Out]
        if not tensors:
            return
        from gradcli.engine import saved as saved_attrs
        order = saved_attrs.pack_order(node, tensors)
        for i in order:
            value = values[i]
            result = value.__class__ is Out
            values[i] = Packed(_pack(self.pack, _result_tensor(node, value) if result else value),
                               self.unpack, result, None if result else origin(value))
        node.saved = _packed(values, order)
        _unchecked(node, [saved[i] for i in order])

    def pack_one(self, t: Tensor) -> Packed:
        """One tensor a custom Function saved (ctx.save_for_backward), packed."""
        return Packed(_pack(self.pack, t), self.unpack, False, origin(t))


def _unchecked(node, packed: list) -> None:
    """A saved value that went through hooks is not checked for in-place changes when unpacked (PyTorch's
    SavedVariable checks its version only without hooks): the node's checks of `packed` are dropped."""
    checks = node.checks
    if checks.__class__ is not tuple:
        return
    results = any(v.__class__ is Out for v in packed)
    kept = tuple(e for e in checks if not (e[0] is None and results or
                                           e[0] is not None and any(e[0] is v for v in packed)))
    node.checks = kept or None



def _result_tensor(node, out: Out) -> Tensor:
    """The node's output as the pack hook and `_saved_result` see it: a tensor whose grad_fn is the node."""
    t = Tensor(out.a)
    t.grad_fn = node
    t.requires_grad = True
    return t


def _pack(pack, t):
    """`pack(t)` as PyTorch calls it: in no-grad mode, so what the hook computes records nothing."""
    previous = autograd.is_grad_enabled()
    autograd._set_grad_mode(False)
    try:
        return pack(t)
    finally:
        autograd._set_grad_mode(previous)


class saved_tensors_hooks:
    """torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook): a context manager."""

    __slots__ = ("pack_hook", "unpack_hook", "_entered")

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook
        self._entered = []

    def __enter__(self):
        if STATE.saved_hooks_off is not None:
            raise RuntimeError(STATE.saved_hooks_off)
        self._entered.append(STATE.saved_hooks)
        STATE.saved_hooks = Hooks(self.pack_hook, self.unpack_hook, STATE.saved_hooks)
        return None

    def __exit__(self, *exc):
        STATE.saved_hooks = self._entered.pop()
        return False

    def __repr__(self):
        return f"<torch.autograd.graph.{type(self).__name__} object at {address(self)}>"


def _to_cpu(t):
    return (t.device, t)        # every gradcli tensor is on the CPU already: PyTorch's copy is the tensor


def _from_cpu(packed):
    return packed[1]


class save_on_cpu(saved_tensors_hooks):
    """torch.autograd.graph.save_on_cpu(pin_memory=False, device_type='cuda'): saved tensors move to the
    CPU, where gradcli's already are; the hooks are in force all the same (nested hooks, disabling)."""

    __slots__ = ()

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(_to_cpu, _from_cpu)


class disable_saved_tensors_hooks:
    """torch.autograd.graph.disable_saved_tensors_hooks(error_message): entering saved_tensors_hooks
    inside it raises RuntimeError(error_message)."""

    __slots__ = ("message", "_entered")

    def __init__(self, error_message):
        self.message = error_message
        self._entered = []

    def __enter__(self):
        self._entered.append(STATE.saved_hooks_off)
        STATE.saved_hooks_off = self.message
        return None

    def __exit__(self, *exc):
        STATE.saved_hooks_off = self._entered.pop()
        return False


# ------------------------------------------------------------------ allow_mutation_on_saved_tensors
# PyTorch packs every tensor saved inside the block with a handle and, from a dispatch mode, clones a saved
# tensor just before an in-place op first changes it; unpacking gives the clone if there is one, else the
# tensor. gradcli keeps a copy of the values when the tensor is saved instead, and unpacking gives the
# tensor while its version is still the one it was saved at, else (once) a tensor of that copy: the same
# values and the same tensors, at the price of a copy of each saved tensor while the block lasts.

_MUTATION_ENABLED = [False]         # PyTorch's _allow_mutation_on_saved_tensors_enabled
_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph was "
            "originally recorded.")     # (PyTorch's two string pieces join without a space)


class MutationContext:
    """torch.autograd.graph._AllowMutationOnSavedContext: what `with allow_mutation_on_saved_tensors() as
    ctx` gives; it keeps the block's saved tensors until the block ends."""

    __slots__ = ("kept", "open", "_hooks")

    def __init__(self):
        self.kept = []
        self.open = True
        self._hooks = None

    def __repr__(self):
        return f"<torch.autograd.graph._AllowMutationOnSavedContext object at {address(self)}>"


class _Kept:
    __slots__ = ("tensor", "version", "copy", "clone", "ctx")

    def __init__(self, t: Tensor, ctx: MutationContext):
        self.tensor, self.version, self.copy, self.clone, self.ctx = t, t._version[0], t._a.copy(), None, ctx


def _keeper(ctx: MutationContext):
    def pack(t):
        kept = _Kept(t, ctx)
        ctx.kept.append(kept)
        return kept

    def unpack(kept):
        if not _MUTATION_ENABLED[0] or not kept.ctx.open:
            raise AssertionError(_OUTSIDE)
        t = kept.tensor
        if t._version[0] == kept.version:
            return t
        if kept.clone is None:          # changed in place since it was saved: the values it was saved with
            kept.clone = Tensor(kept.copy)
        return kept.clone
    return pack, unpack


class allow_mutation_on_saved_tensors:
    """torch.autograd.graph.allow_mutation_on_saved_tensors(): a context manager under which a tensor saved
    for backward may be changed in place; the backward pass sees the values it was saved with."""

    __slots__ = ("_entered",)

    def __init__(self):
        self._entered = []

    def __enter__(self) -> MutationContext:
        ctx = MutationContext()
        ctx._hooks = saved_tensors_hooks(*_keeper(ctx))
        ctx._hooks.__enter__()          # (inside disable_saved_tensors_hooks: its message)
        if _MUTATION_ENABLED[0]:
            ctx._hooks.__exit__(None, None, None)
            ctx.open = False
            _MUTATION_ENABLED[0] = False        # (as PyTorch's finally clause leaves it)
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _MUTATION_ENABLED[0] = True
        self._entered.append(ctx)
        return ctx

    def __exit__(self, *exc):
        ctx = self._entered.pop()
        ctx.open = False
        ctx.kept.clear()
        _MUTATION_ENABLED[0] = False
        ctx._hooks.__exit__(None, None, None)
        return False

    def __repr__(self):
        return f"<contextlib._GeneratorContextManager object at {address(self)}>"


# what PyTorch's SavedTensor has besides register_hooks (undocumented there): refused as not implemented
SAVED_TENSOR_LATER = frozenset(("data", "unpack", "unpack_hook"))


class SavedTensor:
    """`grad_fn._raw_saved_NAME`: one saved tensor of a node, on which `register_hooks(pack, unpack)`
    sets the hooks of that tensor alone."""

    __slots__ = ("node", "index")

    def __init__(self, node, index: int):
        self.node, self.index = node, index

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument types are "
                "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                "arg1: collections.abc.Callable) -> None\n\nInvoked with: "
                f"{self!r}, {_arg_text(pack_hook)}, {_arg_text(unpack_hook)}")
        node = self.node
        saved = slim.restore(node)
        if saved is autograd.FREED:
            raise RuntimeError(_REGISTER_FREED)
        value = saved[self.index]
        if value is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if value.__class__ is Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        result = value.__class__ is Out
        values = list(saved)
        # a result reaches this pack hook as plain data (PyTorch gives it no grad_fn here)
        values[self.index] = Packed(_pack(pack_hook, Tensor(value.a) if result else value), unpack_hook, result,
                                    None if result else origin(value))
        order = [i for i, v in enumerate(values) if v.__class__ is Packed]
        from gradcli.engine import saved as saved_attrs
        node.saved = _packed(values, saved_attrs.pack_order(node, order))
        _unchecked(node, [value])

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {address(self)}>"


def _arg_text(value) -> str:
    if value.__class__ is str:
        return repr(value)
    return str(value)
