"""Custom autograd Functions: the node that is also the forward's `ctx`, what `Function.apply` records, and
the one call the backward sweep makes to a script's `backward`.

As in PyTorch, `ctx` and `grad_fn` are one object (a `FunctionNode`, printed as
`<torch.autograd.function.MyReLUBackward object at 0x...>`). The engine only calls what it is given:
the language (gradcli.language.functions) hands it the script's forward, setup_context and backward as
callables, so the engine still knows nothing of scripts. Scripts reach a node only through
`script_attr` / `script_set_attr`, which allow PyTorch's public ctx API and the attributes the script
set itself (kept in a dict of their own, never on the Python object).
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, dtypes, savedhooks
from gradcli.engine import forward as forward_ad
from gradcli.engine.addresses import address
from gradcli.engine.autograd import FREED, FREED_MESSAGE, Node, OutputGrads, OutputSlot, RunOp, edge
from gradcli.engine.layout import writable
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


_EMPTY = ()


class FunctionNode(Node):
    """A custom Function's node and ctx.

      attrs         the attributes the script set on ctx (`ctx.constant = 2`);
      backward_fn   the script's backward, called as `backward_fn(ctx, *grads)`;
      arg_edges     per forward argument, its index in `inputs` (tensors), or -1 (anything else);
      needs_input_grad  per forward argument, whether it requires grad (PyTorch's tuple);
      to_save       what save_for_backward received, until apply turns it into `stored`;
      stored        per saved tensor: the tensor (an input or an intermediate), or for an output a
                    tuple (array, version box, requires_grad, its index among the node's outputs),
                    rebuilt on access with this node as its grad_fn (holding the output tensor itself
                    would be a cycle); FREED once a backward without retain_graph ran;
      saved_checks  the version each saved tensor had when saved;
      in_meta       per input edge, the (shape, dtype) its gradient must have;
      out_meta      per forward output, its (shape, dtype), or None for a value that is not a tensor: the
                    backward receives one gradient per output, zeros where none flowed (materialized);
      out_index     {forward output's position: its index among the outputs the node made}; with more
                    than one, each has an OutputSlot as its grad_fn (see autograd.OutputSlot);
      materialize   set_materialize_grads's flag; `dirty`, `non_diff` the tensors marked;
      for_forward   what save_for_forward received: `saved_tensors` while the script's jvp runs (`in_jvp`).
    """

    __slots__ = ("attrs", "backward_fn", "arg_edges", "needs_input_grad", "to_save", "stored", "saved_checks",
                 "in_meta", "out_meta", "out_index", "materialize", "dirty", "non_diff", "for_forward", "in_jvp",
                 "hook_view")

    def __init__(self, name: str, backward_fn):
        super().__init__(RunOp(name + "Backward"), (), None)
        self.attrs = {}
        self.backward_fn = backward_fn
        self.arg_edges = _EMPTY
        self.needs_input_grad = _EMPTY
        self.to_save = None
        self.stored = _EMPTY
        self.saved_checks = None
        self.in_meta = _EMPTY
        self.out_meta = _EMPTY
        self.out_index = None
        self.materialize = True
        self.dirty = _EMPTY
        self.non_diff = _EMPTY
        self.for_forward = None
        self.in_jvp = False
        self.hook_view = None

    def name(self) -> str:
        return self.op.node

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{self.op.node} object at {address(self)}>"

    # ------------------------------------------------------------------------------ the ctx API
    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and t.__class__ is not Tensor:
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{_type_name(t)}")
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        if not all(t is None or t.__class__ is Tensor for t in tensors):
            raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                 "non-tensors as attributes on ctx.")
        self.for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self.in_jvp:
            return self.for_forward or ()
        stored = self.stored
        if stored is FREED:
            raise autograd._error(FREED_MESSAGE, node=self)
        if self.saved_checks is not None:
            autograd._check_versions(self, self.saved_checks)
        return tuple([s if s is None or s.__class__ is Tensor else
                      s.visible(self) if s.__class__ is savedhooks.Packed else self._output(s) for s in stored])

    def _output(self, entry) -> Tensor:
        """A saved output, as PyTorch unpacks it: a new tensor on the same data, made by this node."""
        a, box, requires_grad, k = entry
        t = Tensor(a)
        t._version = box
        if requires_grad:
            t.requires_grad = True
            count = len(self.out_index)
            t.grad_fn = self if count == 1 else OutputSlot(self, k, count)
        return t

    def mark_dirty(self, *tensors) -> None:
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self.non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize = bool(value)

    # ------------------------------------------------------------------------------ the backward call
    def run(self, g, F, free: bool) -> list:
        """The script's backward on the output's gradient `g` (None when none flowed): one gradient per
        input edge, checked and fitted as PyTorch's validate_outputs does, in F's kind (numpy arrays, or
        Tensors under create_graph)."""
        # the gradient of each output the node made: one, or one per OutputSlot (OutputGrads)
        if g.__class__ is OutputGrads:
            made = g.grads
        else:
            made = (g,) if g is not None or self.out_index is None else (None,) * len(self.out_index)
        received = made                 # (in F's kind: what hooks see)
        if not F.tensors:
            made = [None if m is None else Tensor(writable(m)) for m in made]
        # one gradient per forward output: None for a value that is not a tensor; for the other tensors
        # (marked non-differentiable), and where no gradient flowed, zeros unless set_materialize_grads(False)
        grads = []
        for i, meta in enumerate(self.out_meta):
            k = self.out_index.get(i) if self.out_index is not None else None
            if k is not None and made[k] is not None:
                grads.append(made[k])
            elif meta is None or not self.materialize:
                grads.append(None)
            else:
                grads.append(Tensor(np.zeros(meta[0], dtype=meta[1])))
        # the script's backward is user code: the ops it runs are recorded as ops, not formula steps
        inside, STATE.in_formula = STATE.in_formula, False
        try:
            result = self.backward_fn(self, *grads)
        finally:
            STATE.in_formula = inside
        if free:
            self.stored = FREED
            self.saved_checks = None
        grads_in = self._validate(result, F)
        if self.hooks is not None and self.hooks.post:
            self.hook_view = self._hook_view(result, received)
        return grads_in

    def _hook_view(self, result, made) -> tuple:
        """What PyTorch's hooks on this node see (Node.register_hook, a module's full backward hook): as
        grad_inputs, also what the backward returned for a tensor input that does not require grad
        (`{edge: tensor}`, handed on to no one); as grad_outputs, one entry per tensor output of the
        forward, None for a non-differentiable one."""
        if result.__class__ is not tuple:
            result = (result,)
        dead = {e: r for r, e in zip(result, self.arg_edges)
                if e >= 0 and r.__class__ is Tensor and self.inputs[e] is None}
        outs = tuple((made[self.out_index[i]] if self.out_index is not None and i in self.out_index else None)
                     for i, meta in enumerate(self.out_meta) if meta is not None)
        return dead, outs

    def _validate(self, result, F) -> list:
        name = self.op.node
        if result.__class__ is not tuple:
            result = (result,)
        expected, got = len(self.arg_edges), len(result)
        if got != expected:
            if got > expected and all(r is None for r in result[expected:]):
                result = result[:expected]
            else:
                raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected "
                                   f"{expected}, got {got})")
        grads = [None] * len(self.inputs)
        for i, (r, e) in enumerate(zip(result, self.arg_edges)):
            if r is None:
                continue
            if e < 0:
                raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                                   "but the corresponding forward input was not a Variable")
            if r.__class__ is not Tensor:
                raise RuntimeError(f"expected Variable or None (got {_type_name(r)})")
            grads[e] = r
        for i, (r, child) in enumerate(zip(grads, self.inputs)):
            if r is None or child is None:
                grads[i] = None
                continue
            shape, dtype = self.in_meta[i]
            have = r._a.shape
            if have != shape and not _expandable(shape, have):
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got "
                                   f"[{', '.join(map(str, have))}] but expected shape compatible with "
                                   f"[{', '.join(map(str, shape))}]")
            grads[i] = autograd._fit(F, r if F.tensors else r._a, (shape, dtype))
        return grads


def _expandable(shape: tuple, to: tuple) -> bool:
    """Whether `shape` broadcasts to `to` (the gradient may then be summed back to `shape`)."""
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to)))


def _type_name(value) -> str:
    return "Tensor" if value.__class__ is Tensor else type(value).__name__


# ------------------------------------------------------------------------------------------------ apply

def apply(name: str, forward, setup_context, backward_fn, args: tuple, kwargs: dict, jvp_fn=None):
    """`Function.apply(*args)`: run the forward with grad mode off (with `ctx` first, or without it and
    then `setup_context(ctx, inputs, output)`), then, when grad mode is on and a tensor argument requires
    grad, attach the node to the tensors it returned; when a tensor argument has a tangent (a dual level
    is in force), give the outputs the tangents the script's `jvp` returns."""
    ctx = FunctionNode(name, backward_fn)
    ctx.needs_input_grad = tuple([a.__class__ is Tensor and a.requires_grad for a in args])
    level = STATE.fw_level
    tangents = None
    if level is not None:
        tangents = [forward_ad.tangent_of(a) if a.__class__ is Tensor else None for a in args]
        if all(t is None for t in tangents):
            tangents = None
    STATE.fw_level = None               # the forward sees primals alone, as PyTorch runs it
    try:
        with autograd.set_grad_enabled(False):
            if setup_context is None:
                output = forward(ctx, *args, **kwargs)
            else:
                output = forward(*args, **kwargs)
                setup_context(ctx, args, output)
    finally:
        STATE.fw_level = level
    result = _record(ctx, output, args)
    if tangents is not None:
        _forward_mode(ctx, jvp_fn, args, tangents, output, result)
    ctx.for_forward = None
    return result


def _record(ctx: FunctionNode, output, args: tuple):
    """The forward's output as apply returns it: with the node attached when it records one."""
    if not (autograd.is_grad_enabled() and any(ctx.needs_input_grad)):
        # nothing to record; an input returned as it is still comes back as a new tensor on its data
        keep = ctx.dirty
        if output.__class__ is tuple:
            return tuple([_alias(out) if _is_arg(out, args) and not _is_arg(out, keep) else out for out in output])
        return _alias(output) if _is_arg(output, args) and not _is_arg(output, keep) else output
    arg_edges, inputs, meta = [], [], []
    for a in args:
        if a.__class__ is Tensor:
            arg_edges.append(len(inputs))
            inputs.append(edge(a))
            meta.append((a._a.shape, a._a.dtype))
        else:
            arg_edges.append(-1)
    ctx.arg_edges, ctx.inputs, ctx.in_meta = tuple(arg_edges), tuple(inputs), tuple(meta)
    several = output.__class__ is tuple
    outputs = output if several else (output,)
    wrapped = [_wrap(ctx, out, args) if out.__class__ is Tensor else out for out in outputs]
    made = [i for i, t in enumerate(wrapped) if t.__class__ is Tensor and t.grad_fn is ctx]
    ctx.out_index = {i: k for k, i in enumerate(made)}
    if len(made) > 1:
        for k, i in enumerate(made):
            wrapped[i].grad_fn = OutputSlot(ctx, k, len(made))
    ctx.out_meta = tuple([(t._a.shape, t._a.dtype) if t.__class__ is Tensor else None for t in wrapped])
    observer = STATE.observer
    if observer is not None:            # the node's outputs, as recording reports an op's result
        tensors = tuple([a for a in args if a.__class__ is Tensor])
        for i in made:
            observer.op(ctx.op, wrapped[i], tensors)
    _store(ctx, outputs, wrapped)
    return tuple(wrapped) if several else wrapped[0]


def _forward_mode(ctx: FunctionNode, jvp_fn, args: tuple, tangents: list, output, result) -> None:
    """PyTorch's forward mode through a custom Function: `jvp(ctx, *input_tangents)` (zeros for a tensor
    argument without a tangent, None for any other argument), run with the primals alone in sight and
    `ctx.saved_tensors` giving what save_for_forward received; one tangent per forward output."""
    inputs = [None if a.__class__ is not Tensor else t if t is not None else Tensor(np.zeros_like(a._a))
              for a, t in zip(args, tangents)]
    level = STATE.fw_level
    STATE.fw_level = None
    ctx.in_jvp = True
    try:
        grads = jvp_fn(ctx, *inputs)
    finally:
        ctx.in_jvp = False
        STATE.fw_level = level
    outputs = output if output.__class__ is tuple else (output,)
    made = result if result.__class__ is tuple else (result,)
    if grads.__class__ is not tuple:
        grads = (grads,)
    if len(grads) != len(outputs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                           f"{len(outputs)} but got {len(grads)})")
    for out, t, g in zip(outputs, made, grads):
        if t.__class__ is not Tensor or g is None or t._a.dtype.kind not in "fcV":
            continue
        if g.__class__ is not Tensor:
            raise TypeError(f"expected Tensor or None (got {_type_name(g)})")
        if g._a.shape != t._a.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(t._a.shape)} "
                               f"while the given forward gradient is of size {list(g._a.shape)}.")
        if _is_arg(out, args) and not _is_arg(out, ctx.dirty) and g._base is None:
            raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the jvp "
                               "is not returning a view.")
        forward_ad.set_tangent(t, g)


def _wrap(ctx: FunctionNode, out: Tensor, args: tuple) -> Tensor:
    """An output of the forward made the node's: a returned input, or a leaf that requires grad, becomes
    a new tensor on the same data (a view of the input, as in PyTorch), so the input keeps its own
    history; a tensor marked non-differentiable stays without grad."""
    if any(out is t for t in ctx.non_diff):
        out.requires_grad = False
        return out
    if out._a.dtype.kind not in "fcV":     # an integer or bool output is never differentiable (PyTorch's
        # isDifferentiableType): no node, no grad (the node still counts it); an input handed back as it is
        # comes back as a new tensor on its data, as PyTorch's view of it without grad
        return _alias(out) if _is_arg(out, args) and not any(out is t for t in ctx.dirty) else out
    if any(out is t for t in ctx.dirty):      # changed in place by the forward: now this node's output
        if out.requires_grad and out.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        out._version[0] += 1
    elif _is_arg(out, args) or (out.requires_grad and out.grad_fn is None):
        out = _alias(out)
    out.grad_fn = ctx
    out.requires_grad = True
    return out


def _is_arg(value, args) -> bool:
    return value.__class__ is Tensor and any(value is a for a in args)


def _alias(t: Tensor) -> Tensor:
    """A new tensor on `t`'s data and version counter, a view of it (PyTorch's view_as(self))."""
    view = Tensor(t._a)
    view._version = t._version
    view._base = t if t._base is None else t._base
    return view


def _store(ctx: FunctionNode, outputs: tuple, wrapped: list) -> None:
    """What save_for_backward received, as the node keeps it (see FunctionNode), with each tensor's
    version now: changing one in place later fails `saved_tensors` with PyTorch's message."""
    to_save = ctx.to_save
    ctx.to_save = None
    if not to_save:
        return
    stored, checks, positions = [], [], []
    for t in to_save:
        if t is None:
            stored.append(None)
            positions.append(None)
            continue
        index = next((i for i, out in enumerate(outputs) if out is t), -1)
        positions.append(index)
        a = t._a
        legacy = dtypes.of_array(a).legacy
        if index >= 0:
            made = wrapped[index]
            fn = made.grad_fn
            stored.append((a, made._version, fn is ctx or fn.__class__ is OutputSlot, ctx.out_index.get(index)))
            checks.append((None, made._version, made._version[0], a.shape, legacy, ctx.op.node))
        else:
            stored.append(t)
            checks.append((t, t._version, t._version[0], a.shape, legacy, None))
    hooks = STATE.saved_hooks
    if hooks is not None:       # saved_tensors_hooks in force: each saved tensor goes through pack now
        stored = [s if s is None else hooks.pack_one(s if s.__class__ is Tensor else wrapped[k])
                  for s, k in zip(stored, positions)]
        checks = []         # (a hooked saved tensor is not checked for in-place changes, as in PyTorch)
    ctx.stored = tuple(stored)
    ctx.saved_checks = tuple(checks) or None


# ------------------------------------------------------------------------------------ what scripts reach

# The public ctx and node API PyTorch documents, as scripts read it; every other name is an attribute the
# script set (`ctx.constant`), kept in `attrs`.
_METHODS = frozenset({"save_for_backward", "save_for_forward", "mark_dirty", "mark_non_differentiable",
                      "set_materialize_grads", "name", "register_hook", "register_prehook"})
_READ_ONLY = frozenset({"saved_tensors", "next_functions", "metadata"})


def script_attr(node: FunctionNode, name: str):
    """`ctx.name` (or `grad_fn.name`) as a script reads it."""
    if name in _METHODS or name in _READ_ONLY:
        return getattr(node, name)
    if name == "needs_input_grad" and "needs_input_grad" not in node.attrs:
        return node.needs_input_grad
    try:
        return node.attrs[name]
    except KeyError:
        raise AttributeError(f"'{node.op.node}' object has no attribute '{name}'") from None


def script_set_attr(node: FunctionNode, name: str, value) -> None:
    if name in _READ_ONLY:
        raise AttributeError(f"attribute '{name}' of 'torch._C._FunctionBase' objects is not writable")
    if name in _METHODS:
        raise AttributeError(f"'{node.op.node}' object attribute '{name}' is read-only")
    node.attrs[name] = value


def script_del_attr(node: FunctionNode, name: str) -> None:
    if name not in node.attrs:
        raise AttributeError(f"'{node.op.node}' object has no attribute '{name}'")
    del node.attrs[name]


def script_attr_names(node: FunctionNode) -> frozenset:
    return _METHODS | _READ_ONLY | {"needs_input_grad"} | frozenset(node.attrs)


# ------------------------------------------------------------------------------------ once_differentiable

class DelayedError(Node):
    """PyTorch's DelayedError node (printed `<Error object at 0x...>`): put on what a once-differentiable
    backward returns under create_graph, so differentiating that again fails, only then, with its message."""

    __slots__ = ("message",)

    def __init__(self, t: Tensor, message: str = "trying to differentiate twice a function that was marked with "
                                                 "@once_differentiable"):
        super().__init__(RunOp("Error"), (edge(t),), None)
        self.message = message

    def run(self, g, F, free):
        raise RuntimeError(self.message)


class OnceDifferentiable(autograd.ModeDecorated):
    """`@torch.autograd.function.once_differentiable` on a backward: it runs with grad mode off, and when
    a gradient it received requires grad (create_graph), what it returns gets an Error node."""

    __slots__ = ()

    def __init__(self, func):
        super().__init__(func, autograd.no_grad)

    def __call__(self, ctx, *args):
        with autograd.no_grad():
            outputs = self.__wrapped__(ctx, *args)
        if not autograd.is_grad_enabled():
            return outputs
        if not any(a.__class__ is Tensor and a.requires_grad for a in args):
            return outputs
        single = outputs.__class__ is not tuple
        wrapped = tuple([_delayed_error(t) if t.__class__ is Tensor else t
                         for t in ((outputs,) if single else outputs)])
        return wrapped[0] if single else wrapped


def _delayed_error(t: Tensor, *message: str) -> Tensor:
    out = Tensor(t._a)
    out.grad_fn = DelayedError(t, *message)
    out.requires_grad = True
    return out
