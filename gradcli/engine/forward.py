"""Forward-mode AD: dual levels, dual tensors (torch.autograd.forward_ad) and the tangent each op gives its result.

Inside `with dual_level():`, `make_dual(x, v)` returns a view of `x` whose tangent is `v`, and every op
row whose inputs carry tangents gives its result one too (`propagate`, called by recording.apply), from
the row's `jvp` column: "auto" for elementwise rows (the backward formulas with the tangent in place of
the incoming gradient, which is how PyTorch derives them), or the row's own formula. Formulas run on
Tensors (backmath.TENSOR) with forward mode suspended, so a tangent of a tensor that requires grad is
itself part of the reverse-mode graph, as in PyTorch (`tangent=tensor(..., grad_fn=<AddBackward0>)`).

A tensor's tangents live in its `_fw` slot, a dict {level: tangent}, and count only while their level
is in force: leaving a level drops its tangents at once, without visiting the tensors. Scripts get one
level at a time, numbered 0, as in PyTorch 2.13's forward_ad; torch.func's forward transforms nest
levels (jacfwd(jacfwd(f))), each level's formulas running with the outer ones in force.
"""

from __future__ import annotations

import weakref

import numpy as np

from gradcli.engine.addresses import address
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

NO_LEVEL = ("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first.")


class Level:
    """One dual level in force (a fresh object each time one is entered, so tangents of an earlier level
    never count again). Levels nest only inside torch.func's forward transforms (jvp of jvp, jacfwd of
    jacfwd): `outer` is the level this one was entered in, and a level's tangent formulas run with the
    outer levels in force, so a tangent carries its own tangents there (higher derivatives)."""

    __slots__ = ("number", "outer", "script")

    def __init__(self, number: int, outer=None, script: bool = True):
        self.number = number
        self.outer = outer
        self.script = script        # entered by the script's forward_ad, not by a torch.func transform


NESTED = "Nested forward mode AD is not supported at the moment"


def levels() -> list:
    """The levels in force, outermost first."""
    found = []
    level = STATE.fw_level
    while level is not None:
        found.append(level)
        level = level.outer
    found.reverse()
    return found


class NotDifferentiable:
    """The `jvp` of the row of ops PyTorch has no derivative for (`//`, `number % tensor`), whose aten
    name the forward passes first: forward mode refuses them in PyTorch's words. (Every other op gradcli
    has, PyTorch differentiates in forward mode too.)"""

    __slots__ = ()


NOT_DIFFERENTIABLE = NotDifferentiable()

NOT_YET = ("Trying to use forward AD with {} that does not support it because it has not been implemented yet.\n"
           "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template="
           "feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
           "implementation to derivatives.yaml")


def no_tangent(op_name: str):
    """The forward column of a row whose forward-mode formula PyTorch has not implemented: its message, naming
    the ATen op (`_embedding_bag`, `_unique2`, ...)."""
    def jvp(F, tangents, inputs, result, *args):
        raise NotImplementedError(NOT_YET.format(op_name))
    return jvp


# ----------------------------------------------------------------------------------------- tangents

def tangent_of(t, level=None) -> Tensor | None:
    """The tangent `t` has at `level` (the innermost level in force by default), or None. A view without
    one of its own sees its region of its base's tangent, if the base got one after the view was made
    (as PyTorch's views do)."""
    if level is None:
        level = STATE.fw_level
        if level is None:
            return None
    fw = getattr(t, "_fw", None)
    if fw is not None and level in fw:
        return fw[level]            # None: a view that must not look at its base (unpack_dual)
    base = getattr(t, "_base", None)
    if base is None:
        return None
    whole = getattr(base, "_fw", None)
    if whole is None or whole.get(level) is None:
        return None
    return _view_tangent(t, base, whole[level], level)


def is_dual(t) -> bool:
    """Whether `t` has a tangent at some level in force."""
    level = STATE.fw_level
    while level is not None:
        if tangent_of(t, level) is not None:
            return True
        level = level.outer
    return False


def put(t: Tensor, level: Level, tangent) -> None:
    """Give `t` the tangent `tangent` at `level` (None: none, not even its base's)."""
    fw = getattr(t, "_fw", None)
    if fw is None:
        t._fw = fw = {}
    fw[level] = tangent


def hide(t: Tensor) -> None:
    """`t` has no tangent at any level in force (detach_)."""
    for level in levels():
        put(t, level, None)


def keep_hidden(view: Tensor, source: Tensor) -> None:
    """A view of a tensor whose base's tangent is hidden from it at some level (unpack_dual's primal, a
    detached alias) is hidden from it too: PyTorch's primal is a view that forward mode does not see
    through, so views of it have no tangent either (unless they got one of their own)."""
    own = getattr(view, "_fw", None)
    for level, tangent in source._fw.items():
        if tangent is None and (own is None or level not in own):
            put(view, level, None)
            own = view._fw


def copy_tangents(dst: Tensor, src: Tensor, outer_only: bool = False) -> None:
    """`dst` gets `src`'s tangents at the levels in force (or at the levels outside the innermost)."""
    chain = levels()
    if outer_only:
        chain = chain[:-1]
    for level in chain:
        tangent = tangent_of(src, level)
        if tangent is not None:
            put(dst, level, tangent)


def _view_tangent(view: Tensor, base: Tensor, whole: Tensor, level) -> Tensor:
    """The region of `whole`, the base's tangent, that `view` covers: a numpy view of it when both are laid
    out alike (kept as the view's tangent, so later in-place changes of either show in the other), else a
    copy of those elements."""
    v, b, w = view._a, base._a, whole._a
    item, titem = b.itemsize, w.itemsize      # a tangent may have another dtype than its primal
    if w.shape == b.shape and all(s > 0 for s in b.strides) and \
            tuple(s // item for s in b.strides) == tuple(s // titem for s in w.strides):
        span = sum((n - 1) * s for n, s in zip(b.shape, b.strides)) // item + 1
        start = (v.__array_interface__["data"][0] - b.__array_interface__["data"][0]) // item
        memory = np.lib.stride_tricks.as_strided(w, shape=(span,), strides=(titem,))
        tangent = Tensor(np.lib.stride_tricks.as_strided(memory[start:], shape=v.shape,
                                                         strides=tuple(s // item * titem for s in v.strides)))
        tangent._base = whole if whole._base is None else whole._base
        tangent._version = whole._version
        put(view, level, tangent)
        return tangent
    from gradcli.engine import views
    where = views.positions(v, b)
    return Tensor(np.ascontiguousarray(w).reshape(-1)[where].astype(w.dtype, copy=False))


def set_tangent(t: Tensor, tangent: Tensor | None) -> None:
    """`t`'s tangent at the innermost level in force."""
    if tangent is None:
        fw = getattr(t, "_fw", None)
        if fw is not None:
            fw.pop(STATE.fw_level, None)
    else:
        put(t, STATE.fw_level, tangent)


def tangent_text(t: Tensor) -> str | None:
    """The `tangent=` suffix's value in the repr of `t`: a 0-d tangent prints as a Python number."""
    tangent = tangent_of(t)
    if tangent is None:
        return None
    if tangent._a.ndim == 0:
        return repr(tangent._a.item())
    return repr(tangent)


class suspended:
    """Forward mode off while a tangent formula runs: its ops see the primals alone. For the formula of
    one level (`suspended(level)`), the levels outside it stay in force."""

    __slots__ = ("level", "inside", "to")

    def __init__(self, level=None):
        self.to = None if level is None else level.outer

    def __enter__(self):
        self.level, self.inside = STATE.fw_level, STATE.in_formula
        STATE.fw_level, STATE.in_formula = self.to, True

    def __exit__(self, *exc):
        STATE.fw_level, STATE.in_formula = self.level, self.inside


def propagate(op, t: Tensor, inputs: tuple, args: tuple) -> Tensor:
    """Give `t`, the result of row `op` on `inputs`, its tangent at each level in force where some input
    has one: the outermost level first, so a formula of an inner level that reads the result sees the
    result's outer tangents."""
    if STATE.inference or t._a.dtype.kind not in "fcV":
        return t                # inference mode computes no tangents; integer results have none
    level = STATE.fw_level
    if level.outer is None:
        _propagate(op, t, inputs, args, level)
    else:
        for level in levels():
            _propagate(op, t, inputs, args, level)
    return t


def _propagate(op, t: Tensor, inputs: tuple, args: tuple, level: Level) -> None:
    tangents = []
    found = False
    for x in inputs:
        tangent = tangent_of(x, level) if isinstance(x, Tensor) else None
        tangents.append(tangent)
        if tangent is not None:
            found = True
    if not found:
        return
    jvp = op.jvp
    if jvp is None:
        raise NotImplementedError(f"gradcli cannot compute forward-mode tangents through {op.node} yet")
    if jvp.__class__ is NotDifferentiable:
        raise NotImplementedError(f"Trying to use forward AD with aten::{args[0]} that does not support it.")
    from gradcli.engine.backmath import TENSOR
    with suspended(level):
        if jvp == "auto":
            value = _elementwise(TENSOR, op, tangents, inputs, t, args)
        else:
            value = jvp(TENSOR, tuple(tangents), inputs, t, *args)
        if value is not None and value._a.shape != t._a.shape:
            from gradcli.engine.ops import shape
            value = _private(shape.expand(value, t._a.shape))
        elif value is not None and any(value is x for x in tangents):
            value = _private(value)
    if value is not None:
        put(t, level, value)


def _private(value: Tensor) -> Tensor:
    """A tangent of its own for a result whose formula handed back an input's tangent, or a view of one
    (where PyTorch adds a zero tangent, making a new tensor): in-place ops change a result's tangent in
    place, which must not reach the input's."""
    if value.requires_grad and value.grad_fn is None:
        from gradcli.engine.ops import arith
        return arith.clone(value)
    out = Tensor(np.array(value._a))
    out.grad_fn, out.requires_grad = value.grad_fn, value.requires_grad
    if STATE.fw_level is not None:      # the tangent's own tangents at the levels outside (nested levels)
        copy_tangents(out, value)
    return out


def each_output(op, results, source: Tensor, args: list) -> None:
    """Tangents for the results of an op whose outputs each get a node of row `op` outside `apply`
    (unbind, split, chunk): result i as `apply` would give it with the values args[i]."""
    for t, values in zip(results, args):
        propagate(op, t, (source,), values)


def _elementwise(F, op, tangents, inputs, result, args):
    """PyTorch's auto_element_wise: each input's backward formula with its tangent as the incoming
    gradient, summed over the inputs that have tangents."""
    plan = op.plan
    if plan is None:
        saved = args
    else:
        saved = [inputs[c] if c >= 0 else (result if c == -1 else args[-2 - c]) for c in plan]
    value = None
    for formula, tangent in zip(op.backward, tangents):
        if tangent is None:
            continue
        term = formula(F, tangent, *saved)
        value = term if value is None else F.add(value, term)
    return value


def inplace_tangent(target: Tensor, result: Tensor) -> None:
    """After an in-place op wrote `result` into `target`: the result's tangent becomes the target's, at
    each level in force. As in PyTorch, a tangent the target already has is overwritten in place (copy_,
    so views of it and of its base see the change); a view without one first gives its base a tangent
    of zeros, of which the view's tangent is then its region."""
    for level in levels():
        _inplace_at(target, result, level)


def _inplace_at(target: Tensor, result: Tensor, level: Level) -> None:
    tangent = tangent_of(result, level)
    if tangent is None:
        return
    old = tangent_of(target, level)
    if old is None:
        base = target._base
        if base is None or base._a.dtype.kind not in "fcV":
            if 0 in tangent._a.strides and tangent._a.size > 1:
                tangent = _private(tangent)     # a broadcast (copy_'s): a tangent laid out as the target
            put(target, level, tangent)
            return
        if tangent_of(base, level) is None:
            put(base, level, Tensor(np.zeros_like(base._a)))
        fw = getattr(target, "_fw", None)
        if fw is not None:
            fw.pop(level, None)         # the target's tangent is now its region of the base's
        old = tangent_of(target, level)
        if old is None:             # a base laid out so that no view of its tangent matches the target's
            put(target, level, tangent)
            return
    with suspended(level):
        old._inplace(_copy, tangent)


def _copy(a, src):
    from gradcli.engine import ops
    return ops.copy(a, src)


# Missing tangents in formulas. PyTorch stands in a zero tensor for a tangent an input lacks; its ops
# give the other operand exactly, but where a factor requires grad they are still recorded, so the
# tangent's grad_fn shows the add or sub the formula wrote.

class _Dropped:
    """A term whose tangent factor is PyTorch's zero tensor but whose other factor requires grad: the
    product is zero, yet recorded, so the add it goes into records a node too."""

    __slots__ = ()


DROPPED = _Dropped()


def dropped(*factors):
    """The term a missing tangent leaves in a product with `factors`: None, or DROPPED when one of them
    requires grad (and grad mode records)."""
    if STATE.recording:
        for f in factors:
            if f.__class__ is Tensor and f.requires_grad:
                return DROPPED
    return None


def add_tangents(a, b, shape=()):
    """a + b, where None (or DROPPED) is PyTorch's efficient zero tensor: the add gives the other term
    exactly (broadcast to `shape`, the zero term's), with an AddBackward0 node when either side requires
    grad."""
    if a is None or a is DROPPED:
        a, b = b, a
    if a is None or a is DROPPED:
        return None
    if b is None or b is DROPPED:
        return a if not (a.requires_grad or b is DROPPED) else a + _zero(a, -0.0, b, shape)   # x + -0.0 is x
    return a + b


def sub_tangents(a, b, shape=()):
    """a - b, where None (or DROPPED) is PyTorch's efficient zero tensor (0 - b gives -b, signed zeros
    included; `shape` as in add_tangents)."""
    if b is None or b is DROPPED:
        if a is None or a is DROPPED:
            return None
        return a if not (a.requires_grad or b is DROPPED) else a - _zero(a, 0.0, b, shape)
    if a is None or a is DROPPED:
        return -b if not (b.requires_grad or a is DROPPED) else _zero(b, -0.0, a, shape) - b
    return a - b


def _zero(like: Tensor, value: float, term, shape) -> Tensor:
    """The zero an add or sub stands in for a dropped term with, requiring grad as that term would (a
    leaf of its own, a constant: is_stand_in)."""
    zero = Tensor(np.full(shape, value, dtype=like._a.dtype))
    if term is not DROPPED:
        return zero
    _STAND_INS.add(zero)
    return zero.requires_grad_()


_STAND_INS = weakref.WeakSet()


def is_stand_in(t: Tensor) -> bool:
    """Whether `t` is a zero standing in for a dropped term (a constant leaf, not the script's)."""
    return t in _STAND_INS


def tangent_or_zeros(tangents, inputs, i):
    """Input i's tangent, or zeros of its shape (a Python number's: 0)."""
    tangent = tangents[i]
    if tangent is not None:
        return tangent
    x = inputs[i]
    return Tensor(np.zeros_like(x._a)) if x.__class__ is Tensor else 0


# ---------------------------------------------------------------------------------- the public API

def enter_dual_level(*, nested: bool = False) -> int:
    """A new level, numbered from 0. Scripts get one at a time, as in PyTorch 2.13's forward_ad;
    torch.func's forward transforms nest theirs (`nested`)."""
    outer = STATE.fw_level
    if outer is not None and (not nested or _script_level(outer)):
        raise RuntimeError(NESTED)          # PyTorch's words inside a script's level, whoever enters
    level = Level(0 if outer is None else outer.number + 1, outer, script=not nested)
    STATE.fw_level = level
    return level.number


def _script_level(level) -> bool:
    while level is not None:
        if level.script:
            return True
        level = level.outer
    return False


def exit_dual_level(*, level=None) -> None:
    current = STATE.fw_level
    if level is None:
        level = -1 if current is None else current.number
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if current is None or level != current.number:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    STATE.fw_level = current.outer


class dual_level:
    """`with dual_level():` enters a forward AD level for its body and leaves it afterwards."""

    __slots__ = ()

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __repr__(self) -> str:
        return f"<torch.autograd.forward_ad.dual_level object at {address(self)}>"


def _level_number(level) -> int:
    if level is None:
        return -1 if STATE.fw_level is None else STATE.fw_level.number
    return level


def _floating(x, what: str) -> None:
    if not isinstance(x, Tensor):
        raise AttributeError(f"'{type(x).__name__}' object has no attribute 'is_floating_point'")
    if x._a.dtype.kind not in "fcV":
        from gradcli.engine import dtypes
        raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                         f"torch.{dtypes.of_array(x._a).name}")


def make_dual(tensor, tangent, *, level=None) -> Tensor:
    """A view of `tensor` whose tangent is `tangent` (kept as it is, not copied)."""
    number = _level_number(level)
    if number < 0:
        raise RuntimeError(NO_LEVEL)
    _floating(tensor, "primal")
    _floating(tangent, "tangent")
    if number != STATE.fw_level.number:
        raise RuntimeError(f"Trying to create a dual Tensor for forward AD at level {number} which is not "
                           "the current level.")
    if tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {number} is not supported.")
    if tangent._a.shape != tensor._a.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor._a.shape)} while the "
                           f"given forward gradient is of size {list(tangent._a.shape)}.")
    from gradcli.engine.ops import shape
    dual = shape.view(tensor, tensor._a.shape)
    put(dual, STATE.fw_level, tangent)
    return dual


class UnpackedDualTensor(tuple):
    """torch.autograd.forward_ad.UnpackedDualTensor: the (primal, tangent) pair unpack_dual returns."""

    def __new__(cls, primal, tangent):
        return tuple.__new__(cls, (primal, tangent))

    @property
    def primal(self):
        return self[0]

    @property
    def tangent(self):
        return self[1]

    def __repr__(self) -> str:
        return f"UnpackedDualTensor(primal={self[0]!r}, tangent={self[1]!r})"

    __str__ = __repr__


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """The primal of `tensor` (a view without the tangent) and its tangent at the level, or None."""
    number = _level_number(level)
    if number < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    from gradcli.engine.ops import indexing, shape
    level = STATE.fw_level
    tangent = tangent_of(tensor)
    with suspended(level):              # the levels outside this one still reach the primal
        STATE.in_formula = False
        primal = shape._view_of(tensor, tensor._a.view(), indexing.IDENTITY, ())
    put(primal, level, None)            # a view that never sees its base's tangent
    return UnpackedDualTensor(primal, tangent)
