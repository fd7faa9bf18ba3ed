"""torch.compile: a compiled function or module runs the same ops, under one node, as PyTorch's AOT autograd.

gradcli compiles nothing: a "compiled" function runs the script's function as it is (eagerly, the same
values). What PyTorch's compiled graph shows of itself is its autograd node: the outputs that require grad
hang from one CompiledFunctionBackward node whose inputs are the tensors from outside the function that
its ops used (in the order of first use, which is the order Dynamo lifts them in for the common cases: a
function's arguments as its ops meet them; a Linear layer's weight and bias before its input). Its backward
runs the function's own graph, recorded as usual, back to those tensors. A gradient taken through it with
create_graph=True hangs from a CompiledFunctionBackwardBackward node, through which PyTorch refuses to go
further ("does not currently support double backward"). Outside grad mode, or when no output needs a
gradient, the function's results come back as they are.
"""

from __future__ import annotations

from gradcli.engine import autograd, custom
from gradcli.engine.observe import Observer
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


class _Uses(Observer):
    """Collects, while the function runs, the tensors its ops take that no op of the function made (the
    graph's inputs), in the order of first use, passing every call on to the tool already watching."""

    __slots__ = ("made", "inputs", "seen", "outer", "given")

    def __init__(self, outer, given: set):
        self.made, self.inputs, self.seen, self.outer, self.given = set(), [], set(), outer, given

    def op(self, op, result, inputs) -> None:
        for x in inputs:
            if x.__class__ is Tensor and (x.requires_grad or id(x) in self.given) and id(x) not in self.made \
                    and id(x) not in self.seen:
                self.seen.add(id(x))
                self.inputs.append(x)
        for r in (result if result.__class__ is tuple else (result,)):
            if r.__class__ is Tensor:
                self.made.add(id(r))
        if self.outer is not None:
            self.outer.op(op, result, inputs)

    def __getattr__(self, name):            # the other callbacks: the outer tool's, or nothing
        if self.outer is not None:
            return getattr(self.outer, name)
        return getattr(Observer, name).__get__(self)


def _leaves(value, found: list) -> None:
    """The tensors in a value (in tuples, lists and dicts, in order)."""
    if value.__class__ is Tensor:
        found.append(value)
    elif value.__class__ in (tuple, list):
        for v in value:
            _leaves(v, found)
    elif value.__class__ is dict:
        for v in value.values():
            _leaves(v, found)


def _rebuild(value, swap: dict):
    if value.__class__ is Tensor:
        return swap.get(id(value), value)
    if value.__class__ in (tuple, list):
        return value.__class__(_rebuild(v, swap) for v in value)
    if value.__class__ is dict:
        return {k: _rebuild(v, swap) for k, v in value.items()}
    return value


def call(function, args: tuple, kwargs: dict):
    """`function(*args, **kwargs)` as its compiled form runs it (see the module's docstring)."""
    if not STATE.recording:
        return function(*args, **kwargs)
    given = []
    _leaves((args, kwargs), given)
    watcher = _Uses(STATE.observer, {id(t) for t in given})
    STATE.observer = watcher
    try:
        result = function(*args, **kwargs)
    finally:
        STATE.observer = watcher.outer
    outputs = []
    _leaves(result, outputs)
    routed = [t for t in outputs if t.requires_grad and id(t) in watcher.made]
    if not routed or not any(t.requires_grad for t in watcher.inputs):
        return result
    boundary = watcher.inputs

    def forward(ctx, *inputs):
        ctx.save_for_backward(*inputs)
        return tuple(t.detach() for t in routed)

    def backward(ctx, *grads):
        saved = ctx.saved_tensors           # (PyTorch's error on a second backward through freed tensors)
        recording = STATE.recording
        pairs = [(t, g) for t, g in zip(routed, grads) if g is not None]
        from gradcli.engine import backward as backward_api
        wanted = [t for t in boundary if t.requires_grad]
        with autograd.set_grad_enabled(False):
            grads_of = dict(zip(map(id, wanted), backward_api.grad(
                [t for t, _ in pairs], wanted, [g for _, g in pairs], retain_graph=True, allow_unused=True)))
        found = tuple(grads_of.get(id(t)) for t in boundary)
        if recording:                       # create_graph: the gradients hang from a node of their own
            return _double(found, saved)
        return found

    made = custom.apply("CompiledFunction", forward, None, backward, tuple(boundary), {})
    made = made if made.__class__ is tuple else (made,)
    return _rebuild(result, {id(t): m for t, m in zip(routed, made)})


def _double(found: tuple, saved: tuple) -> tuple:
    """The first-order gradients under a CompiledFunctionBackwardBackward node (its inputs the compiled
    graph's), whose backward refuses."""
    def forward(ctx, *inputs):
        return tuple(g.detach() if g is not None else None for g in found)

    def backward(ctx, *grads):
        raise RuntimeError(DOUBLE_BACKWARD)

    made = custom.apply("CompiledFunctionBackward", forward, None, backward, saved, {})
    return made if made.__class__ is tuple else (made,)


# torch.compile's modes and backends, checked for the language's torch.compile and Module.compile
_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_EAGER = ("eager", "eager_debug", "eager_noexcept", "pre_dispatch_eager")     # no AOT autograd: eager nodes
_AOT = ("inductor", "aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner")
_OTHERS = ("aot_eager_decomp_partition_crossref", "aot_eager_decomp_partition_with_mode", "aot_ts", "cudagraphs",
           "dynamo_accuracy_minifier_backend", "dynamo_minifier_backend", "invoke_subgraph", "openxla",
           "openxla_eval", "ts", "tvm")


def compiled_kind(*, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, disable=False):
    """torch.compile's options checked as PyTorch checks them: None when compiling is disabled, else whether the
    backend runs AOT autograd (one CompiledFunctionBackward node) rather than the eager nodes."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend.__class__ is not str:
        raise NotImplementedError("gradcli does not implement torch.compile with a backend function (a backend "
                                  "receives the captured graph, which gradcli does not make)")
    if backend in _OTHERS:
        raise NotImplementedError(f"gradcli does not implement torch.compile's backend '{backend}'")
    if backend not in _EAGER and backend not in _AOT:
        raise RuntimeError(f"Invalid backend: '{backend}', see `torch._dynamo.list_backends()` for available "
                           "backends.")
    if disable:
        return None
    return backend not in _EAGER
