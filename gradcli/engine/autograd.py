"""The autograd mechanics, once: graph nodes (nodes with several outputs too), grad/inference/anomaly modes,
broadcast reduction, freeing, tensor hooks and the backward sweep.

Ops (ops.py) only say what to save and how each input's gradient is computed; everything that is the
same for every op lives here. Two rules keep deep graphs cheap:
  * no reference cycles: a node holds its inputs' nodes and what it saved, never its own output tensor,
    so a graph is freed by reference counting the moment it becomes unreachable;
  * no recursion: graph walks use explicit stacks, so a chain of a million nodes is fine.
The sweep runs ready nodes in PyTorch's order (see `_next_seq`), so hooks fire, and gradients that
meet add up, in the order PyTorch's engine uses; hooks cost nothing to nodes that have none.
"""

from __future__ import annotations

from types import MethodType

import itertools
import weakref

import numpy as np

from gradcli.engine import workers
from gradcli.engine.addresses import address
from gradcli.engine.cascade import sum_array
from gradcli.engine.layout import contract_copy, dense, obeys_contract
from gradcli.engine.state import STATE

# ---------------------------------------------------------------------------------------------- grad mode

# The modes live in the engine's one state object (gradcli.engine.state): `STATE.recording` is what
# recording reads, `STATE.grad_in_inference` the grad mode torch.is_grad_enabled() reports inside
# inference mode. The tool watching a run, if any, is `STATE.observer` (gradcli.engine.observe).


def is_grad_enabled() -> bool:
    return STATE.grad_in_inference if STATE.inference else STATE.recording


def _set_grad_mode(mode: bool) -> None:
    if STATE.inference:
        STATE.grad_in_inference = mode
    else:
        STATE.recording = mode


def is_inference_mode_enabled() -> bool:
    return STATE.inference


def reset_modes() -> None:
    """A fresh interpreter's modes: grad mode on, inference and anomaly detection off."""
    STATE.reset_modes()


class ModeDecorated:
    """A function decorated with a grad-mode context (`@torch.no_grad()`, `@torch.enable_grad`,
    `@torch.inference_mode()`, `@torch.set_grad_enabled(False)`): each call runs inside a fresh context
    from `make_context()`. It prints, binds as a method and names itself as the function it wraps, as
    PyTorch's functools.wraps wrapper does."""

    __slots__ = ("__wrapped__", "make_context")

    def __init__(self, func, make_context):
        # PyTorch wraps anything, callable or not: calling the wrapper is what fails ('int' object is not
        # callable), inside the context
        self.__wrapped__ = func
        self.make_context = make_context

    def __call__(self, *args, **kwargs):
        func = self.__wrapped__
        if getattr(func, "is_generator_function", False):
            # a script's generator function: as PyTorch wraps one, every step of the generator (not its
            # creation) runs inside a fresh context (gradcli.language.generators.in_context)
            return func.in_context(self.make_context, args, kwargs)
        with self.make_context():
            return func(*args, **kwargs)

    def __get__(self, obj, owner=None):
        return self if obj is None else MethodType(self, obj)

    @property
    def __name__(self):
        # functools.wraps copies only what the wrapped object has: a number keeps the wrapper's own name
        return getattr(self.__wrapped__, "__name__", "decorate_context")

    def __getattr__(self, name):        # __qualname__ (a class body cannot define it as a property)
        if name == "__qualname__":
            return getattr(self.__wrapped__, "__qualname__", "context_decorator.<locals>.decorate_context")
        raise AttributeError(f"'function' object has no attribute '{name}'")

    def __repr__(self):
        return f"<function {self.__qualname__} at {address(self)}>"


ModeDecorated.__name__ = ModeDecorated.__qualname__ = "function"     # what type() and Python's messages call it


class CompiledFunction(ModeDecorated):
    """What torch.compile gives for a function: called, the function as its compiled form runs it
    (gradcli.engine.compiled, imported at the first call). It names, prints and binds as ModeDecorated."""

    __slots__ = ("eager",)

    def __init__(self, function, eager: bool):
        super().__init__(function, None)
        self.eager = eager              # an eager backend's: the function's own nodes, no compiled one

    def __call__(self, *args, **kwargs):
        if self.eager:
            return self.__wrapped__(*args, **kwargs)
        from gradcli.engine import compiled
        return compiled.call(self.__wrapped__, args, kwargs)


CompiledFunction.__name__ = CompiledFunction.__qualname__ = "function"     # what type() calls it, as Python's


class set_multithreading_enabled:
    """torch.autograd.set_multithreading_enabled(mode): sets the flag is_multithreading_enabled reads (at once,
    and back on leaving a `with` block; as a decorator, around each call); gradcli's backward runs on one
    thread either way."""

    __slots__ = ("_mode", "_prev")

    def __init__(self, mode):
        if mode.__class__ is not bool:
            raise TypeError(f"set_multithreading_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(mode).__name__}")
        self._prev = STATE.multithreading
        self._mode = STATE.multithreading = mode    # set at once, as set_grad_enabled is

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        STATE.multithreading = self._prev
        return False

    def __call__(self, func):
        mode = self._mode
        return ModeDecorated(func, lambda: set_multithreading_enabled(mode))


def is_multithreading_enabled() -> bool:
    return STATE.multithreading


class set_grad_enabled:
    """Context manager (and plain call) that sets grad mode, restoring the previous mode on exit."""

    __slots__ = ("_prev", "_mode")

    def __init__(self, mode: bool):
        if mode.__class__ is not bool:
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(mode).__name__}")
        self._prev = is_grad_enabled()
        self._mode = mode
        _set_grad_mode(self._mode)      # like PyTorch, calling it without `with` sets the mode at once

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _set_grad_mode(self._prev)
        return False

    def __call__(self, func):
        """As a decorator: the mode this call set is undone, and set again around each call of func."""
        _set_grad_mode(self._prev)
        mode = self._mode
        return ModeDecorated(func, lambda: set_grad_enabled(mode))

    def __repr__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self._mode})"


class _NoParamDecoratorContextManager:     # PyTorch's name for it, which its argument errors give
    __slots__ = ("_prev",)
    _mode = True
    _label = ""

    def __new__(cls, func=None):
        """`torch.no_grad()` makes a context; `@torch.no_grad` (without the call) decorates at once."""
        if func is not None:
            return ModeDecorated(func, cls)
        return super().__new__(cls)

    def __init__(self, func=None):
        pass

    def __call__(self, func):
        return ModeDecorated(func, type(self))

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_grad_mode(self._mode)
        return None

    def __exit__(self, *exc):
        _set_grad_mode(self._prev)
        return False

    def __repr__(self):
        return f"<torch.autograd.grad_mode.{self._label} object at {address(self)}>"


class no_grad(_NoParamDecoratorContextManager):
    __slots__ = ()
    _mode = False
    _label = "no_grad"


class enable_grad(_NoParamDecoratorContextManager):
    __slots__ = ()
    _mode = True
    _label = "enable_grad"


class inference_mode:
    """torch.inference_mode(mode=True): a context manager only (constructing it changes nothing).

    Entering inference mode turns grad mode off and recording off even if grad mode is turned back
    on inside; inference_mode(False) turns both back on. Exit restores the whole state, as
    c10::InferenceMode does.
    """

    __slots__ = ("_mode", "_prev")

    def __new__(cls, mode=True):
        if mode.__class__ is not bool:  # @torch.inference_mode without the call; PyTorch wraps any non-bool
            return ModeDecorated(mode, cls)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self._mode = bool(mode)

    def __call__(self, func):
        mode = self._mode
        return ModeDecorated(func, lambda: inference_mode(mode))

    def __enter__(self):
        state = STATE
        self._prev = (state.recording, state.inference, state.grad_in_inference)
        if self._mode:
            state.recording = False
            state.inference, state.grad_in_inference = True, False
            state.inference_seen = True
        else:
            state.recording = True
            state.inference = False
        return None

    def __exit__(self, *exc):
        STATE.recording, STATE.inference, STATE.grad_in_inference = self._prev
        return False

    def __repr__(self):
        return f"<torch.autograd.grad_mode.inference_mode object at {address(self)}>"


# ---------------------------------------------------------------------------------------- anomaly mode

def is_anomaly_enabled() -> bool:
    return STATE.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.anomaly_nan


def set_anomaly_enabled(enabled, check_nan=True) -> None:
    """torch.set_anomaly_enabled: both flags must be bools, as PyTorch's parser takes them."""
    for value, name, position in ((enabled, "enabled", 1), (check_nan, "check_nan", 2)):
        if value.__class__ is not bool:
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {position}) must be bool, not "
                            f"{type(value).__name__}")
    STATE.anomaly, STATE.anomaly_nan = enabled, check_nan


class set_detect_anomaly:
    """Context manager (and plain call) that sets anomaly detection, restoring it on exit."""

    __slots__ = ("_prev",)

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (STATE.anomaly, STATE.anomaly_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        STATE.anomaly, STATE.anomaly_nan = self._prev
        return False

    def __repr__(self):
        return f"<torch.autograd.anomaly_mode.set_detect_anomaly object at {address(self)}>"


class detect_anomaly:
    """Context manager turning anomaly detection on inside (the previous state is taken at creation)."""

    __slots__ = ("_prev", "_check_nan")

    def __init__(self, check_nan: bool = True):
        self._prev = (STATE.anomaly, STATE.anomaly_nan)
        self._check_nan = check_nan
        if STATE.warn is not None:      # PyTorch warns on each creation (set_detect_anomaly does not)
            STATE.warn("UserWarning", "Anomaly Detection has been enabled. This mode will increase the runtime and "
                                      "should only be enabled for debugging.")

    def __enter__(self):
        set_anomaly_enabled(True, self._check_nan)
        return None

    def __exit__(self, *exc):
        STATE.anomaly, STATE.anomaly_nan = self._prev
        return False

    def __repr__(self):
        return f"<torch.autograd.anomaly_mode.detect_anomaly object at {address(self)}>"


# -------------------------------------------------------------------------------------------------- nodes

FREED = object()      # marks a node whose saved tensors were released by a backward pass

# Nodes are numbered in creation order. PyTorch's engine runs, among the nodes that are ready, the
# most recently created one first (and leaves' AccumulateGrad before anything else), so hooks fire
# and gradients add up in the same order here.
_next_seq = itertools.count().__next__
LEAF_SEQ = (1 << 64) - 1          # AccumulateGrad's sequence number in PyTorch: UINT64_MAX


def runs_first(t):
    """`t`, a result whose node raises when the backward pass reaches it (PyTorch's NotImplemented), with that
    node numbered as PyTorch numbers its error nodes, as AccumulateGrad (UINT64_MAX): among the nodes ready in a
    backward pass it runs first, so the pass fails before any other node's hook fires."""
    node = t.grad_fn
    if node is not None:
        node.seq = LEAF_SEQ
    return t


class Node:
    """One recorded op: `op` is its row in the op table, `inputs` the nodes its gradients flow to.

    `saved` is what the op's backward formulas receive after the incoming gradient; `checks` lists
    saved tensors' version counters, `fit` the (shape, dtype) each input's gradient must be reduced
    or cast to when it differs from the output's (broadcasting, mixed dtypes). `hooks` (None until
    a hook is registered, `metadata` read or the output tensor retains its grad) holds the output
    tensor's gradient hooks, the node's own, its metadata and `retained` (NodeHooks): nodes that have
    none pay no memory for them (a slot less is 16 bytes a node in a deep chain).
    """

    __slots__ = ("op", "inputs", "saved", "checks", "fit", "hooks", "seq", "__weakref__")

    def __init__(self, op, inputs, saved, checks=None, fit=None):
        self.op = op
        self.inputs = inputs
        self.saved = saved
        self.checks = checks
        self.fit = fit
        self.hooks = None
        self.seq = _next_seq()

    @property
    def retained(self):
        """A weak reference to the output tensor once it called retain_grad(), else None."""
        hooks = self.hooks
        return hooks.retained if hooks is not None else None

    @retained.setter
    def retained(self, ref) -> None:
        hooks = self.hooks
        if hooks is None:
            hooks = self.hooks = NodeHooks()
        hooks.retained = ref

    @property
    def next_functions(self):
        return tuple((n.parent, n.index) if n.__class__ is OutputSlot else (None if n is DEAD_END else n, 0)
                     for n in self.inputs)

    def name(self) -> str:
        # nodes generated from an op's derivative end in a number (MulBackward0) or in _copy, those of PyTorch's own
        # Python Functions (_DirichletBackward) in Backward; the others (CopySlices, CopyBackwards,
        # NotImplemented, ...) are C++ classes of PyTorch's autograd namespace, and name() says so
        node = self.op.node
        if node[-1].isdigit() or node.endswith(("Backward", "_copy")):      # (ViewBackward0_copy: a view-copy's)
            return node
        return "torch::autograd::" + node

    def __repr__(self) -> str:
        node = self.op.node
        if node.endswith("Backward"):               # a Python Function's node class
            node = "torch.autograd.function." + node
        return f"<{node} object at {address(self)}>"

    @property
    def metadata(self) -> dict:
        """torch.autograd.graph.Node.metadata: a dict of the script's own, made on first use."""
        hooks = self.hooks
        if hooks is None:
            hooks = self.hooks = NodeHooks()
        if hooks.meta is None:
            hooks.meta = {}
        return hooks.meta

    def register_hook(self, fn):
        """Node.register_hook: `fn(grad_inputs, grad_outputs)` runs after the node (see backward.py)."""
        from gradcli.engine import backward
        return add_hook(self, backward.NodePostHook(fn), "post")

    def register_prehook(self, fn):
        """Node.register_prehook: `fn(grad_outputs)` runs before the node (see backward.py)."""
        from gradcli.engine import backward
        return add_hook(self, backward.NodePreHook(fn), "pre")


class RunOp:
    """The op of a node that computes all its inputs' gradients in one call, its `run(g, F, free)`,
    instead of one formula per input: a custom Function's node (gradcli.engine.custom) and an
    OutputSlot. `backward` None is the sweep's sign for it. Such a node frees what it saved itself,
    when it runs, so `saves_tensors` is False for the sweep. `relay`: the node only hands its gradient
    on (an OutputSlot), so neither anomaly mode nor an observer looks at it."""

    __slots__ = ("node", "relay")
    backward = None
    joint = None
    fresh = False
    saves_tensors = False
    quiet = False

    def __init__(self, node: str, relay: bool = False):
        self.node = node
        self.relay = relay

    def __repr__(self):
        return f"RunOp({self.node})"


class OutputSlot(Node):
    """Output `index` of a node with several outputs (a custom Function returning two differentiable
    tensors): the grad_fn that output tensor holds, so the edges into it say which output they feed.
    Scripts never see a slot: they see `parent` (tensor.grad_fn, next_functions as `(parent, index)`).

    In the sweep a slot runs like a node whose only input is its parent and hands it its gradient as
    OutputGrads, one entry per output; the gradients of several slots meet in one OutputGrads
    (_receive), so the parent runs once, with every output's gradient, when all its slots have run.
    A slot is numbered as its parent, so it runs where PyTorch's engine would run the parent's input.
    """

    __slots__ = ("parent", "index", "count")

    def __init__(self, parent, index: int, count: int):
        super().__init__(RunOp(parent.op.node, relay=True), (parent,), None)
        self.parent = parent
        self.index = index
        self.count = count
        self.seq = parent.seq

    def run(self, g, F, free):
        return [None if g is None else OutputGrads(self.count, self.index, g)]

    def name(self) -> str:
        return self.parent.name()

    def __repr__(self) -> str:
        return repr(self.parent)


class OutputGrads:
    """The gradients pending for a node with several outputs, one per output (None where none came)."""

    __slots__ = ("grads",)

    def __init__(self, count: int, index: int, g):
        self.grads = [None] * count
        self.grads[index] = g

    def merge(self, other: "OutputGrads", F) -> None:
        grads = self.grads
        for k, g in enumerate(other.grads):
            if g is not None:
                grads[k] = g if grads[k] is None else F.add(grads[k], g)


class _AccumulateOp:
    node = "AccumulateGrad"
    saves_tensors = False


class AccumulateGrad(Node):
    """The sink of a leaf tensor: gradients reaching it (after the leaf's hooks) are added into
    `variable.grad`.

    Normally the node holds its leaf and the leaf holds the node weakly, so the node lives exactly as
    long as some graph uses it. A leaf with hooks must keep its hooks when no graph exists, so it
    holds the node strongly instead ("pinned") and the node refers back to it weakly: still no cycle.
    """

    __slots__ = ("_leaf",)

    def __init__(self, variable):
        super().__init__(_AccumulateOp, (), None)
        self.seq = LEAF_SEQ
        self._leaf = variable

    @property
    def variable(self):
        leaf = self._leaf
        return leaf() if leaf.__class__ is weakref.ref else leaf

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"


class NoGradView:
    """The mark (in a tensor's `_acc`) of a view made in no-grad mode of a tensor that requires grad, and
    not itself set to require grad since. As in PyTorch, such a view reports requires_grad=True (its
    base's), so ops on it in grad mode record nodes, but it has no AccumulateGrad: its edge is DEAD_END,
    and the gradient that reaches it goes into neither its .grad nor its base's. Once the data it shares
    has changed in place (`version`, the counter's value when it was made), it has no valid grad_fn:
    reading it, or recording an op on the view, is PyTorch's STALE_VIEW error, and it prints
    `grad_fn=<Invalid>`. `inference`: made in inference mode, which PyTorch's messages name instead."""
    __slots__ = ("version", "inference")

    def __init__(self, version: int, inference: bool = False):
        self.version = version
        self.inference = inference


class OfNoGradView:
    """The mark (in `_acc`, which a tensor with a grad_fn does not use otherwise) of a view recorded in grad
    mode from a no-grad view (NoGradView) or from another such view: PyTorch's views inherit how their
    base view was made, so writing into one in place is refused as writing into that view is."""
    __slots__ = ("inference",)

    def __init__(self, inference: bool):
        self.inference = inference


NO_GRAD_VIEW_MARKS = (NoGradView, OfNoGradView)


def made_from_no_grad_view(view, source) -> None:
    """Mark `view`, recorded from `source`, a no-grad view or a view made from one."""
    view._acc = OfNoGradView(source._acc.inference)


def view_mode_error(t, what: str) -> RuntimeError:
    """PyTorch's error for a view made without a node (see NoGradView) that is written to, or whose data
    was, in grad mode: `what` is "{made}" then the rest of the message's first sentence, in which "{made}"
    and "{now}" stand for the modes PyTorch names (no-grad or inference mode, and the mode of the write)."""
    acc = t._acc
    if acc.__class__ in NO_GRAD_VIEW_MARKS and acc.inference:
        made, now, block = "inference mode", "in normal mode", "inference_mode"
    else:
        made, now, block = "no_grad mode", "with grad mode enabled", "no_grad"
    return RuntimeError(what.format(made=made, now=now) + " Given that this use case is ambiguous and error-prone, "
                        "it is forbidden. You can clarify your code by moving both the view and the inplace either "
                        f"both inside the {block} block (if you don't want the inplace to be tracked) or both "
                        "outside (if you want the inplace to be tracked).")


STALE_VIEW = "A view was created in {made} and its base or another view of its base has been modified inplace {now}."
# The edge of a no-grad view: an AccumulateGrad without a variable, which the sweep passes over as it
# does a freed leaf's. next_functions shows it as None, PyTorch's null edge.
DEAD_END = AccumulateGrad(None)


def unrecorded_view(view, base) -> None:
    """A view of `base` made without a node (no-grad or inference mode): it requires grad while its
    base does, as a NoGradView."""
    if view.grad_fn is None and base.requires_grad:
        view.requires_grad = True
        view._acc = NoGradView(view._version[0], STATE.inference)


def stale_view(t) -> bool:
    """Whether `t` is a no-grad view whose data changed in place since it was made (see NoGradView)."""
    acc = t._acc
    return acc.__class__ is NoGradView and acc.version != t._version[0]


# the rows of views whose history an in-place change made unusable (views.STALE_MULTI): reading it is an error
UNUSABLE = set()


def checked_grad_fn(t):
    """`t.grad_fn` as a script reads it: a stale no-grad view has none to give, an output of split or unbind
    whose base changed in place since, none that may be used."""
    if stale_view(t):
        raise view_mode_error(t, STALE_VIEW)
    fn = t.grad_fn
    if fn is not None and fn.op in UNUSABLE:
        raise RuntimeError(fn.saved[0])
    return fn


def grad_accumulator(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad node: the same object while any graph still uses it (a tensor holds it
    only weakly, so no tensor -> node -> tensor cycle keeps either alive). A no-grad view's is a node no
    graph reaches (hooks on it never run; autograd.grad finds it unused)."""
    ref = t._acc
    if ref.__class__ is AccumulateGrad:
        return ref
    if ref.__class__ is NoGradView:
        return AccumulateGrad(t)
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._acc = weakref.ref(node)
    return node


def existing_accumulator(t):
    """The leaf's AccumulateGrad if some graph (or a hook) keeps one alive, else None."""
    ref = t._acc
    if ref is None or ref.__class__ is AccumulateGrad:
        return ref
    if ref.__class__ is NoGradView:
        return None
    return ref()


def pinned_accumulator(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad, from now on owned by the leaf (see AccumulateGrad)."""
    node = grad_accumulator(t)
    if t._acc is not node and t._acc.__class__ is not NoGradView:
        t._acc = node
        node._leaf = weakref.ref(t)
    return node


def edge(t):
    """The node a gradient for tensor `t` flows into, or None when `t` does not require grad."""
    fn = t.grad_fn
    if fn is not None:
        return fn
    if t.requires_grad:
        acc = t._acc
        if acc.__class__ is NoGradView:
            if acc.version != t._version[0]:
                raise view_mode_error(t, STALE_VIEW)
            return DEAD_END
        return grad_accumulator(t)
    return None


class NodeHooks(dict):
    """A node's hooks, in registration order: as a dict (handle id -> `hook(g, F) -> g`) the hooks of
    the tensor the node made (or, on an AccumulateGrad, of the leaf); then the node's own, each a dict
    handle id -> hook: `pre` (Node.register_prehook, `hook(grads, F) -> grads`), `post`
    (Node.register_hook, `hook(grads_in, grads_out, F) -> grads_in`) and, on an AccumulateGrad, `acc`
    (Tensor.register_post_accumulate_grad_hook, `hook(tensor)`). `meta` is Node.metadata, once read;
    `retained` a weak reference to the output tensor once it called retain_grad() (Node.retained)."""

    __slots__ = ("pre", "post", "acc", "meta", "retained")

    def __init__(self):
        super().__init__()
        self.pre, self.post, self.acc = {}, {}, {}
        self.meta = self.retained = None

    def empty(self) -> bool:
        return not (self or self.pre or self.post or self.acc) and self.meta is None and self.retained is None


class RemovableHandle:
    """What register_hook returns: `remove()` takes the hook off its node (a second call is a no-op)."""

    __slots__ = ("id", "_node")
    _next_id = itertools.count().__next__

    def __init__(self, node):
        self.id = RemovableHandle._next_id()
        self._node = weakref.ref(node)

    def remove(self) -> None:
        node = self._node()
        hooks = node.hooks if node is not None else None
        if hooks is not None:
            for table in (hooks, hooks.pre, hooks.post, hooks.acc):
                table.pop(self.id, None)
            if hooks.empty():
                node.hooks = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at {address(self)}>"


class MultiHandle(RemovableHandle):
    """torch.autograd.graph._MultiHandle, what register_multi_grad_hook returns (gradcli.engine.multihook):
    the tensor hooks' handles, all removed by `remove()`."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple):
        self.handles = handles                  # (no `id`: PyTorch's has none)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __repr__(self) -> str:
        return f"<torch.autograd.graph._MultiHandle object at {address(self)}>"


def add_hook(node, hook, kind: str = "") -> RemovableHandle:
    """Attach a hook to a node: by default a tensor hook `hook(grad, F) -> grad` on the node whose
    incoming gradient it transforms; `kind` "pre", "post" or "acc" for the node's own (NodeHooks)."""
    handle = RemovableHandle(node)
    hooks = node.hooks
    if hooks is None:
        hooks = node.hooks = NodeHooks()
    (getattr(hooks, kind) if kind else hooks)[handle.id] = hook
    return handle


# ------------------------------------------------------------------------------------ gradient shaping

def sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Reduce a broadcast gradient back to `shape` (the one place broadcasting is undone)."""
    if g.shape == shape:
        return g
    key = (g.shape, shape)
    axes = _SUM_TO_AXES.get(key)
    if axes is None:
        # the dims to sum depend on the shapes only: worked out once per pair (a training loop's bias
        # gradients meet the same pair every step)
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1 and g.shape[i + lead] != 1)
        if len(_SUM_TO_AXES) >= 4096:
            _SUM_TO_AXES.clear()
        _SUM_TO_AXES[key] = axes
    lead = g.ndim - len(shape)
    if axes:
        g = sum_array(g, axes, True)                       # in PyTorch's order, as its sum_to does
    if lead:
        g = g.reshape(shape)
    return g


_SUM_TO_AXES: dict = {}


def _fit(F, g, target):
    if g is None:               # a formula that gives no gradient (norm_backward for p = 0)
        return None
    shape, dtype = target
    if F.tensors:
        if g._a.shape != shape:
            g = F.sum_to(g, shape)
        if g._a.dtype != dtype:
            g = F.cast(g.real if g._a.dtype.kind == "c" and dtype.kind != "c" else g, dtype)
        return g
    if g.shape != shape:
        g = sum_to(g, shape)
    if g.dtype != dtype:
        # a real input of a complex op takes the real part of its gradient (PyTorch's handle_r_to_c)
        g = (g.real if g.dtype.kind == "c" and dtype.kind != "c" else g).astype(dtype)
    return g


# ---------------------------------------------------------------------------------------------- errors

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")

_HINT = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
         "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
_ANOMALY_HINT = (" Hint: the backtrace further above shows the operation that failed to compute its "
                 "gradient. The variable in question was changed in there or anywhere later. Good luck!")


def _error(message: str, **facts) -> RuntimeError:
    """PyTorch's RuntimeError, carrying as attributes the facts a `why:` note reads
    (gradcli.diagnostics.why): the node that failed, the saved tensor, the output concerned."""
    err = RuntimeError(message)
    err.__dict__.update(facts)
    return err


_VIEW_NODES = frozenset(("SliceBackward0", "SelectBackward0", "ViewBackward0", "UnsqueezeBackward0",
                         "SqueezeBackward0", "SqueezeBackward1", "TransposeBackward0", "TBackward0", "ExpandBackward0",
                         "PermuteBackward0", "DiagonalBackward0", "UnfoldBackward0", "AliasBackward0",
                         "SplitBackward0", "SplitWithSizesBackward0", "UnbindBackward0"))


def _check_versions(node, checks=None):
    """PyTorch's error when a tensor the node saved (`checks`, by default the node's own) has changed
    version since."""
    for index, (tensor, box, expected, shape, legacy, owner) in enumerate(checks or node.checks):
        if box[0] != expected:
            output = 0                         # which output of its node (a saved result: owner names both)
            if tensor is not None:             # a saved input: named after the op that now owns it, with
                fn = tensor.grad_fn            # the shape it has now (an in-place t_() changes it)
                owner = fn.op.node if fn is not None else None
                output = fn.index if fn.__class__ is OutputSlot else 0
                if owner in _VIEW_NODES and tensor._base is not None:
                    # a view whose base changed through another view: PyTorch regenerates its grad_fn
                    # when read, as a strided window onto the new base
                    owner = "AsStridedBackward0"
                shape = tensor._a.shape
            elif owner.__class__ is tuple:
                owner, output = owner
            dims = ", ".join(str(d) for d in shape)
            which = ""
            if owner is not None:
                if "Backward" in owner:        # ExpBackward0 is 'Exp', TBackward1 'T1', as PyTorch names them
                    base, _, number = owner.rpartition("Backward")
                    short = base if number == "0" else base + number
                else:
                    short = "torch::autograd::" + owner
                which = f", which is output {output} of {short},"
            raise _error(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{legacy} [{dims}]]{which} is at version {box[0]}; expected version "
                f"{expected} instead.{_ANOMALY_HINT if STATE.anomaly else _HINT}", node=node, index=index,
                tensor=tensor)


def _check_nan(node, grads_in, F):
    """Anomaly mode: PyTorch's error when a node's backward produced NaN in one of its outputs."""
    for i, gi in enumerate(grads_in):
        if gi is not None:
            if np.isnan(gi._a if F.tensors else gi).any():
                raise RuntimeError(f"Function '{node.op.node}' returned nan values in its {i}th output.")


# -------------------------------------------------------------------------------------- backward sweep

def _count_dependencies(roots) -> dict:
    """How many edges enter each node reachable from the roots (iterative DFS)."""
    deps = {}
    # two Nones under the nodes: popping the last node of a list frees its storage and the next push
    # allocates it again (a chain pops and pushes one node at a time); the first None ends the walk
    stack = [None, None]
    for r in roots:
        if r not in deps:
            deps[r] = 0
            stack.append(r)
    pop, push = stack.pop, stack.append
    node = pop()
    while node is not None:
        for child in node.inputs:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                push(child)
        node = pop()
    return deps


def shown(node):
    """The node a tool shows for `node`: PyTorch's node itself for one of its OutputSlots, and no node for
    DEAD_END (PyTorch's null edge)."""
    return node.parent if node.__class__ is OutputSlot else None if node is DEAD_END else node


def shown_inputs(node) -> tuple:
    """A node's inputs as PyTorch draws them (an OutputSlot is its node)."""
    return tuple([shown(n) if n is not None else None for n in node.inputs or ()])


def reachable(roots, limit=None) -> dict:
    """The nodes reachable from `roots`, each once, as the keys of a dict in depth-first preorder
    (a node's inputs in order), the first `limit` of them if given; iterative. The graph walk every
    tool shares: it shows a node with several outputs once, never its OutputSlots."""
    seen: dict = {}
    stack = [shown(r) for r in reversed(roots) if r is not None]
    while stack:
        node = stack.pop()
        if node in seen or node is None:
            continue
        seen[node] = None
        if limit is not None and len(seen) >= limit:
            break
        stack.extend([shown(c) for c in reversed(node.inputs or ()) if c is not None])
    return seen


def _ancestors(deps: dict, targets) -> set:
    """The nodes with a path to one of the targets (a target itself only when it is reached again
    through another target)."""
    parents = {}
    for node in deps:
        for child in node.inputs:
            if child is not None:
                parents.setdefault(child, []).append(node)
    ancestors = set()
    stack = [t for t in targets if t in deps]
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in ancestors:
                ancestors.add(parent)
                stack.append(parent)
    return ancestors


# The ready queue is std::priority_queue as libstdc++ implements it (push_heap / pop_heap with
# "less by sequence number"), so that ties between leaves break exactly as in PyTorch.

def _heap_push(heap, node):
    heap.append(node)
    seq = node.seq
    hole = len(heap) - 1
    while hole > 0:
        parent = (hole - 1) // 2
        if not heap[parent].seq < seq:
            break
        heap[hole] = heap[parent]
        hole = parent
    heap[hole] = node


def _heap_pop_rest(heap, last):
    """The rest of std::pop_heap once `last` (the back element) has been popped off a non-empty heap:
    returns the top and sifts `last` into its place."""
    top = heap[0]
    n = len(heap)
    hole = 0
    child = 0
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if heap[child].seq < heap[child - 1].seq:
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if n & 1 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    seq = last.seq
    while hole > 0:
        parent = (hole - 1) // 2
        if not heap[parent].seq < seq:
            break
        heap[hole] = heap[parent]
        hole = parent
    heap[hole] = last
    return top


def _run_hooks(hooks, *args):
    """Call each hook in turn on what the one before returned (its first argument). Hooks are user
    code: ops they run are recorded as user ops, not as formula steps."""
    inside, STATE.in_formula = STATE.in_formula, False
    try:
        first, rest = args[0], args[1:]
        for hook in list(hooks.values()):
            first = hook(first, *rest)
    finally:
        STATE.in_formula = inside
    return first


def _pre_hooks(node, g, F, accumulate_fn, own=True):
    """What PyTorch runs before a node: the tensor's hooks, retain_grad's accumulation, then (`own`:
    the node runs, not only captured by autograd.grad) the node's pre-hooks on its grad_outputs."""
    hooks = node.hooks
    if hooks is not None:
        g = _run_hooks(hooks, g, F)
    retained = node.retained
    if retained is not None:
        t = retained()
        if t is not None:
            _retain(t, g, F)
    hooks = node.hooks
    if own and hooks is not None and hooks.pre:
        several = g.__class__ is OutputGrads
        grads = _run_hooks(hooks.pre, tuple(g.grads) if several else (g,), F)
        if several:
            g.grads = list(grads)
        else:
            g = grads[0]
    return g


def _post_hooks(node, grads_in, g, F):
    """The node's post-hooks (Node.register_hook) on what it computed and what it received."""
    view = getattr(node, "hook_view", None)      # a custom Function's node: PyTorch's view of both
    if view is not None:
        node.hook_view = None
        dead, grads_out = view
        shown = list(grads_in)
        for i, r in dead.items():
            shown[i] = r if F.tensors else r._a
        result = list(_run_hooks(node.hooks.post, tuple(shown), grads_out, F))
        for i in dead:                          # an input that does not require grad receives nothing
            result[i] = None
        return result
    grads_out = tuple(g.grads) if g.__class__ is OutputGrads else (g,)
    return list(_run_hooks(node.hooks.post, tuple(grads_in), grads_out, F))


def _accumulated(node, t, g, F) -> None:
    """After AccumulateGrad added into `t.grad`: the leaf's post-accumulate hooks, then the node's
    post-hooks (which see no grad_inputs: the node has no inputs)."""
    hooks = node.hooks
    if hooks is not None and hooks.acc:
        _run_hooks(hooks.acc, t)
    hooks = node.hooks
    if hooks is not None and hooks.post:
        _run_hooks(hooks.post, (), (g,), F)


# The backward passes running now, the innermost last (a hook may run a backward of its own), each as
# (id, deps, runs, targets, capture) of its _sweep: what hooks may ask of the pass they run in
# (torch.autograd.graph.register_multi_grad_hook, gradcli.engine.multihook).
TASKS: list = []
_next_task = itertools.count().__next__

LEAF_IN_GRAD = ("A leaf node was passed to _will_engine_execute_node but we are currently running autograd.grad(). "
                "This is currently not supported.")


def will_execute(node) -> bool:
    """torch._C._will_engine_execute_node in the innermost backward running: whether `node` is in its
    graph and, in a pass towards given inputs, on a path to one of them or one of them. Asking about
    a leaf's AccumulateGrad that autograd.grad() captures is PyTorch's error."""
    if not TASKS:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    _, deps, runs, targets, capture = TASKS[-1]
    if node not in deps:
        return False
    if targets is None:
        return True
    target = any(t is node for t in targets)
    if not target and node not in runs:
        return False
    if capture and target and all(child is None for child in node.inputs):
        raise RuntimeError(LEAF_IN_GRAD)
    return True


def run_backward(roots, grads, retain_graph: bool, F, targets=None, capture=False):
    """Propagate `grads` from the `roots` nodes down to the leaves, with formulas evaluated by `F`:
    numpy arrays (backmath.NUMPY) or, for create_graph, recorded Tensor ops (backmath.TENSOR).

    Without `targets` every reachable node runs and leaves' `.grad` receive the sums (backward()).
    With `targets` (a list of nodes) only nodes with a path to a target run. With `capture`
    (autograd.grad()) the gradient reaching each target is returned in a dict instead of being
    accumulated; a target that no other target needs is not run at all, only its hooks are, as in
    PyTorch. Otherwise (backward(inputs=...)) the targets run and accumulate like any node.
    """
    observer = STATE.observer
    if observer is not None:
        observer.sweep_start(roots, retain_graph, F.tensors, targets)
    outer = STATE.in_formula
    if F.tensors:
        STATE.in_formula = True
    depth = len(TASKS)
    try:
        return _sweep(roots, grads, retain_graph, F, targets, capture, observer)
    finally:
        del TASKS[depth:]
        STATE.in_formula = outer
        if observer is not None:
            observer.sweep_end()


def _sweep(roots, grads, retain_graph, F, targets, capture, observer):
    """Run each ready node on its pending gradient and hand what it computes to its inputs, in
    PyTorch's order, until no node is ready."""
    accumulate_fn = _accumulate_tensor if F.tensors else _accumulate
    anomaly = STATE.anomaly and STATE.anomaly_nan
    # Op.joint shortcuts: numpy only, and not under anomaly detection, which checks each formula's
    # output as PyTorch computes it
    joints = not F.tensors and not anomaly
    watched = anomaly or observer is not None       # someone looks at each node's gradients
    free = not retain_graph
    deps = _count_dependencies(roots)
    captured, runs, visits = _restrict(deps, targets, capture)
    TASKS.append((_next_task(), deps, runs, targets, capture))
    pending = {}
    owned = {}              # the nodes whose pending gradient the sweep owns, as keys (see _receive)
    heap = _graph_root(roots, grads, deps, pending, visits, F)
    unpack = F.unpack
    # The one ready node while the heap is empty waits in `ready`, not in the heap: a chain would
    # otherwise empty the list and push one node back, and each list that empties frees its storage.
    ready = None
    while True:
        if ready is not None:
            node = ready
            ready = None
        elif heap:
            node = heap.pop()
            if heap:
                node = _heap_pop_rest(heap, node)
        else:
            break
        g = pending.pop(node, None)
        mine = owned.pop(node, False)
        if captured is not None and node in captured:
            if node not in runs:        # a target no other target needs: only its tensor's hooks run
                captured[node] = g if g is None else _pre_hooks(node, g, F, accumulate_fn, False)
                continue
            captured[node] = g          # a target some other target needs: before its hooks
            mine = False                # autograd.grad() returns it
        hooks = node.hooks              # read once: nodes without hooks (or retain_grad) pay one test below
        if g is not None and hooks is not None:
            g = _pre_hooks(node, g, F, accumulate_fn)
            mine = False                # a hook may have kept it, or returned an array of its own
        if node.op is _AccumulateOp:
            if observer is not None:
                observer.node(node, g, None)
            if g is not None:
                t = node.variable
                if t is not None:
                    accumulate_fn(t, g, mine)
                    if hooks is not None:
                        _accumulated(node, t, g, F)
            continue
        inputs = node.inputs
        if visits is not None:          # only the edges towards a target carry gradients
            inputs = [child if child in visits else None for child in inputs]
        # the node's step, inline (a call per node costs about 3% of a chain's backward): its saved
        # values must still be there, unchanged; then one gradient per input (None where none flows)
        saved = node.saved
        if saved is FREED:
            raise _error(FREED_MESSAGE, node=node)
        checks = node.checks
        if checks is not None:
            if checks.__class__ is Frozen:      # one small saved array, kept as bytes (slim.py): Frozen.thaw, inline
                saved = SlimSaved((_ndarray(checks.shape, checks.dtype, saved),))
            else:
                for entry in checks:        # (the error and its wording: _check_versions; a call a node saved)
                    if entry[1][0] != entry[2]:
                        _check_versions(node)
        if saved.__class__ is PackedSaved:      # saved through hooks: their unpack runs now
            saved = unpacked(node, F)
        op = node.op
        fresh = op.fresh            # the gradients are new arrays the sweep owns (see _receive)
        if op.backward is None:     # a custom Function (or an OutputSlot): one call for all inputs
            grads_in = node.run(g, F, free)
            if visits is not None:
                grads_in = [gi if child is not None else None for gi, child in zip(grads_in, inputs)]
            if not op.relay:        # a slot only hands its gradient on, as OutputGrads: no tool's business
                if anomaly:
                    _check_nan(node, grads_in, F)
                if observer is not None and g is not None:
                    # a node with several outputs received one gradient per output: tools see None
                    observer.node(node, None if g.__class__ is OutputGrads else g, grads_in)
        elif g is None:
            grads_in = (None,) * len(inputs)
        else:
            fit = node.fit
            # a row that saves no tensor (Op.saves_tensors) saves numbers, shapes and arrays: as they are
            # (saved arrays, SlimSaved, need unpacking only to be tensors again: create_graph)
            values = unpack(saved, node) if op.saves_tensors and (saved.__class__ is not SlimSaved or F.tensors) \
                else saved
            grads_in = None
            if (op.joint is not None and joints and inputs[0] is inputs[1] and inputs[0] is not None
                    and inputs[0] not in pending):
                # with an observer, g must reach it unchanged: the joint formula may not write into it
                grads_in = _joint(op, g, values, fit, F, mine and observer is None)
                fresh = grads_in is not None or fresh
            if grads_in is None and (F.tensors or watched or hooks is not None):     # (one test on the plain path)
                if F.tensors and op.combined is not None:
                    # one formula for all the inputs under create_graph (Op.combined), its gradients then fitted
                    grads_in = list(op.combined(F, g, node, tuple(child is not None for child in inputs), *values))
                    if fit is not None:
                        grads_in = [gi if gi is None or fit[i] is None else _fit(F, gi, fit[i])
                                    for i, gi in enumerate(grads_in)]
                elif watched or hooks is not None or op.order is not None:
                    # a tool or a post-hook sees all the gradients before they are handed on; under create_graph
                    # a row whose formulas PyTorch runs in another order than its inputs' runs them in that order
                    grads_in = _formulas(op.backward, inputs, g, values, fit, F, op.order if F.tensors else None)
            if watched and grads_in is not None:
                if anomaly:
                    _check_nan(node, grads_in, F)
                if observer is not None:      # (a row with several outputs, var_mean's: tools see None)
                    observer.node(node, None if g.__class__ is OutputGrads else g, grads_in)
        if hooks is not None and g is not None and node.hooks is not None and node.hooks.post:
            grads_in = _post_hooks(node, grads_in, g, F)
        if free and op.saves_tensors:
            # without retain_graph a node's saved values go once it has run: a second backward through
            # it fails with FREED_MESSAGE, and the memory is back at once
            node.saved = FREED
            node.checks = None
        # Hand each input its gradient. Unless computed above, each formula runs here, just before its
        # gradient is handed on (one loop, no list: about a fifth of a small node's cost); formulas are
        # pure and only gradients the sweep owns are written in place, so the values are the same.
        formulas = op.backward
        if grads_in is None:
            nv = len(values)
        i = -1
        for child in inputs:
            i += 1
            if child is None:
                continue
            if grads_in is None:
                # a call with as many arguments as the formula has runs in the same interpreter loop; a
                # call with *values builds a list and a tuple and recurses into a new one
                if nv == 1:
                    gi = formulas[i](F, g, values[0])
                elif nv == 2:
                    gi = formulas[i](F, g, values[0], values[1])
                elif nv == 0:
                    gi = formulas[i](F, g)
                else:
                    gi = formulas[i](F, g, *values)
                if fit is not None and fit[i] is not None:
                    gi = _fit(F, gi, fit[i])
            else:
                gi = grads_in[i]
            if gi is not None:
                prev = pending.get(child)
                if prev is None:
                    pending[child] = gi
                    if fresh and gi.__class__ is np.ndarray:
                        owned[child] = True
                else:
                    _receive(pending, owned, child, prev, gi, F)
            n = deps[child] - 1
            deps[child] = n
            if n == 0:
                if heap:
                    _heap_push(heap, child)
                elif ready is None:
                    ready = child
                else:                   # a second ready node: both go into the heap, in order
                    heap.append(ready)
                    ready = None
                    _heap_push(heap, child)
    return captured


def _formulas(formulas, inputs, g, values, fit, F, order=None) -> list:
    """A node's gradients, one per input (None where none flows), all at once. With an `order` (Op.order)
    the formulas run in it, and then each gradient is fitted to its input in the inputs' order, as PyTorch's
    engine fits a node's outputs (validate_outputs) after its apply."""
    if order is not None:
        grads_in = [None] * len(inputs)
        for i in order:
            if inputs[i] is not None:
                grads_in[i] = formulas[i](F, g, *values)
        if fit is not None:
            for i, gi in enumerate(grads_in):
                if gi is not None and fit[i] is not None:
                    grads_in[i] = _fit(F, gi, fit[i])
        return grads_in
    grads_in = []
    for i, child in enumerate(inputs):
        if child is None:
            grads_in.append(None)
            continue
        gi = formulas[i](F, g, *values)
        if fit is not None and fit[i] is not None:
            gi = _fit(F, gi, fit[i])
        grads_in.append(gi)
    return grads_in


def _restrict(deps: dict, targets, capture: bool):
    """(captured, runs, visits) for a sweep towards `targets`: the dict autograd.grad() fills, the
    nodes that run, the nodes gradients flow into; all None for a sweep over the whole graph."""
    if targets is None:
        return None, None, None
    captured = None
    runs = _ancestors(deps, targets)
    if capture:
        captured = dict.fromkeys(targets)
    else:
        runs.update(t for t in targets if t in deps)
    return captured, runs, runs | {t for t in targets if t in deps}


def _graph_root(roots, grads, deps, pending, visits, F) -> list:
    """PyTorch's GraphRoot: one edge per root, in order, carrying its gradient. Returns the ready heap."""
    heap = []
    for r in roots:
        deps[r] += 1
    for r, g in zip(roots, grads):
        pending[r] = F.add(pending[r], g) if r in pending else g
        n = deps[r] - 1
        deps[r] = n
        if n == 0 and (visits is None or r in visits):
            _heap_push(heap, r)
    return heap


class SlimSaved(tuple):
    """A node's saved tuple in which input tensors that only the node could reach are their arrays
    (gradcli.engine.slim)."""

    __slots__ = ()


class Frozen:
    """The `checks` of a node whose one saved value, a small array only the node could reach, it keeps as
    bytes in `saved` (gradcli.engine.slim): the array's shape and dtype, one object for all such nodes.
    Nothing can change those bytes, so it checks nothing and reads as no checks."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype):
        self.shape, self.dtype = shape, dtype

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def thaw(self, data: bytes) -> SlimSaved:
        """The saved values again: a read-only array on the bytes (formulas only read saved arrays)."""
        return SlimSaved((_ndarray(self.shape, self.dtype, data),))


_ndarray = np.ndarray


class PackedSaved(tuple):
    """A node's saved tuple in which tensors went through saved-tensor hooks (gradcli.engine.savedhooks):
    those entries are Packed values, and `order` lists their indices in the order PyTorch unpacks them."""

    order = ()


def unpacked(node, F) -> tuple:
    """The node's saved values with each packed tensor unpacked by its hook. Hooks are user code, run as
    PyTorch runs them in a backward pass: grad mode on only under create_graph."""
    saved = node.saved
    inside, STATE.in_formula = STATE.in_formula, False
    grad = is_grad_enabled()
    _set_grad_mode(bool(F.tensors))
    try:
        values = list(saved)
        for i in saved.order:
            values[i] = values[i].open(node)
    finally:
        _set_grad_mode(grad)
        STATE.in_formula = inside
    return tuple(values)


def _joint(op, g, values, fit, F, in_place):
    """One tensor as both inputs (`x * x`), with no gradient waiting for it yet: the sum of both
    formulas at once (Op.joint; in `g` itself when `in_place`), sent along the first edge; None when
    the op has no shortcut for these values. With a gradient already waiting, PyTorch's order of adds,
    (waiting + first) + second, would round differently, so the formulas run as usual then."""
    gi = op.joint(g, *values, in_place)
    if gi is None:
        return None
    if fit is not None and fit[0] is not None:
        gi = _fit(F, gi, fit[0])
    return (gi, None)               # the second edge's share is already in the first


# Buffer ownership: a node's pending gradient is owned by the sweep when it is a new array (from a
# formula of a `fresh` row, or a sum of two gradients) that nothing outside this sweep references.
# Only those are written in place: a second gradient is added into it, MulBackward0 of `x * x` doubles
# into it, AccumulateGrad takes it as `.grad`. A user's `gradient=`, a broadcast view, a saved tensor,
# or anything a hook has seen or autograd.grad() captured is never owned. Numpy arrays only: under
# create_graph gradients are Tensors and nothing is reused. The owned nodes are the keys of a dict,
# which they leave when they run (one pop both tells and removes): a set that only grew cost about
# 0.17 us a node on a 40,000-node chain, against about 0.1 us for the whole bookkeeping with removal.

def _receive(pending, owned, child, prev, gi, F) -> None:
    """A second gradient `gi` for `child`, whose pending gradient is `prev`: their sum, added into
    prev when the sweep owns it (the same values as prev + gi without a new full-size array)."""
    if child in owned and gi.__class__ is np.ndarray and gi.shape == prev.shape and gi.dtype == prev.dtype:
        np.add(prev, gi, out=prev)
        return
    if gi.__class__ is OutputGrads or prev.__class__ is OutputGrads:     # gradients of two outputs of one node meet
        # (a gradient through the node's own edge is its output 0's)
        if prev.__class__ is not OutputGrads:
            prev = pending[child] = OutputGrads(len(gi.grads), 0, prev)
        prev.merge(gi if gi.__class__ is OutputGrads else OutputGrads(len(prev.grads), 0, gi), F)
        return
    total = F.add(prev, gi)
    pending[child] = total
    if total.__class__ is np.ndarray:       # a new sum (a Tensor under create_graph)
        owned[child] = True
    else:
        owned.pop(child, None)


# Tensors that PyTorch 0.3 would have held in a Variable although they need no grad: the results of
# torch.autograd.Variable(...) and gradients (.grad). Only the legacy display asks. id -> weak
# reference, whose callback forgets the entry when the tensor dies (a Tensor's == is elementwise, so
# a WeakSet cannot hold them).
legacy_variables: dict = {}


def mark_variable(t):
    key = id(t)
    if key not in legacy_variables:
        legacy_variables[key] = weakref.ref(t, lambda _, key=key: legacy_variables.pop(key, None))
    return t


def _accumulate(t, g, owned=False):
    """Add a gradient into `t.grad`: a fresh copy the first time (so no two leaves share a buffer), in
    place afterwards (so a script holding `t.grad` sees the sum, as in PyTorch).

    `owned` says the sweep owns `g` (see _sweep): nothing else references it, so the first time it
    becomes `.grad` itself, as PyTorch's AccumulateGrad steals a gradient nobody else holds. That
    saves a full-size copy (about 1 ms on 4096x1000 float32)."""
    dtype = t._a.dtype
    if g.__class__ is not np.ndarray:
        if isinstance(g, np.ndarray):       # a meta gradient (gradcli.engine.meta)
            _accumulate_meta(t, g)
            return
        if hasattr(g, "accumulate_into"):   # a sparse gradient (gradcli.engine.sparse): a sparse .grad
            g.accumulate_into(t)
            return
        g = np.asanyarray(g)
        owned = False
    if g.shape != t._a.shape:
        g = np.broadcast_to(g, t._a.shape)
        owned = False
    if t._a.__class__ is not np.ndarray:    # a meta leaf whose gradient some formula computed in full
        _accumulate_meta(t, g)
        return
    current = t.grad
    if current is None:
        if owned and g.dtype == dtype and g.base is None and obeys_contract(g, t._a):
            t.grad = mark_variable(t.__class__(g))
        else:
            t.grad = mark_variable(t.__class__(contract_copy(g, t._a, dtype)))
    else:
        buf = current._a
        if buf.size >= workers.BIG_BINARY and g.dtype == buf.dtype:
            workers.binary(np.add, buf, g, out=buf)     # on the worker threads, when it pays
        else:
            np.add(buf, g, out=buf, casting="unsafe")
        current._version[0] += 1


def _accumulate_meta(t, g) -> None:
    """A meta gradient reaching a leaf: its `.grad` (a meta tensor of its shape and dtype) the first time, nothing
    to add afterwards; a CPU leaf cannot take it, as PyTorch cannot copy out of a meta tensor."""
    from gradcli.engine import meta
    if t._a.__class__ is np.ndarray and g.__class__ is not np.ndarray:
        raise NotImplementedError(meta.NO_DATA)
    if t.grad is None:
        t.grad = mark_variable(t.__class__(meta.meta_like(t._a)))
    else:
        t.grad._version[0] += 1


def _retain(t, g, F) -> None:
    """retain_grad's hook: the first gradient becomes `.grad` as a contiguous clone (recorded, CloneBackward0,
    under create_graph), and each later one makes a new `.grad`, the sum `t.grad + g`; PyTorch never adds into
    a retained .grad in place, so a script holding the old one keeps it."""
    if g.__class__ is not t.__class__:
        g = np.asanyarray(g)
        if g.shape != t._a.shape:
            g = np.broadcast_to(g, t._a.shape)
        g = t.__class__(g)
    current = t.grad
    if current is not None:
        t.grad = mark_variable(current + g)
    elif F.tensors and g.requires_grad:
        from gradcli.engine.ops.arith import contiguous_clone        # (ops build on this module)
        t.grad = mark_variable(contiguous_clone(g))
    else:
        t.grad = mark_variable(t.__class__(np.array(g._a, order="C")))


def _accumulate_tensor(t, g, owned=False):
    """create_graph: `.grad` becomes (or grows by) a tensor that remembers how it was computed."""
    if g._a.shape != t._a.shape or g._a.dtype != t._a.dtype:
        raise RuntimeError("gradient does not match the tensor it accumulates into")
    current = t.grad
    if current is None:
        # in grad mode PyTorch always copies the first gradient, into the contract's layout: a copy into a
        # buffer with a dense leaf's strides (CopyBackwards, whose first input, the buffer, needs no grad), or
        # a contiguous clone (CloneBackward0) for a leaf that is not dense
        if not g.requires_grad:
            t.grad = mark_variable(g.__class__(contract_copy(g._a, t._a, g._a.dtype)))
        elif dense(t._a):
            from gradcli.engine.ops.elementwise import copy        # (ops build on this module)
            t.grad = mark_variable(copy(g.__class__(np.empty_like(t._a, g._a.dtype)), g))
        else:
            from gradcli.engine.ops.arith import contiguous_clone
            t.grad = mark_variable(contiguous_clone(g))
    else:
        t.grad = current + g
