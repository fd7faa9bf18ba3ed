"""The autograd mechanics, once: graph nodes, grad mode, broadcast reduction, freeing, and the backward sweep.

Ops (ops.py) only say what to save and how each input's gradient is computed; everything that is the
same for every op lives here. Two rules keep deep graphs cheap:
  * no reference cycles: a node holds its inputs' nodes and what it saved, never its own output tensor,
    so a graph is freed by reference counting the moment it becomes unreachable;
  * no recursion: graph walks use explicit stacks, so a chain of a million nodes is fine.
"""

from __future__ import annotations

import weakref

import numpy as np

# ---------------------------------------------------------------------------------------------- grad mode

_grad_enabled = [True]          # a one-element list so the mode is shared without `global` statements


def is_grad_enabled() -> bool:
    return _grad_enabled[0]


class set_grad_enabled:
    """Context manager (and plain call) that sets grad mode, restoring the previous mode on exit."""

    __slots__ = ("_prev", "_mode")

    def __init__(self, mode: bool):
        self._prev = _grad_enabled[0]
        self._mode = bool(mode)
        _grad_enabled[0] = self._mode      # like PyTorch, calling it without `with` sets the mode at once

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _grad_enabled[0] = self._prev
        return False

    def __repr__(self):
        return f"<torch.autograd.grad_mode.set_grad_enabled object at {hex(id(self))}>"


class _GradModeContext:
    __slots__ = ("_prev",)
    _mode = True
    _label = ""

    def __enter__(self):
        self._prev = _grad_enabled[0]
        _grad_enabled[0] = self._mode
        return None

    def __exit__(self, *exc):
        _grad_enabled[0] = self._prev
        return False

    def __repr__(self):
        return f"<torch.autograd.grad_mode.{self._label} object at {hex(id(self))}>"


class no_grad(_GradModeContext):
    __slots__ = ()
    _mode = False
    _label = "no_grad"


class enable_grad(_GradModeContext):
    __slots__ = ()
    _mode = True
    _label = "enable_grad"


# -------------------------------------------------------------------------------------------------- nodes

FREED = object()      # marks a node whose saved tensors were released by a backward pass


class Node:
    """One recorded op: `op` is its row in the op table, `inputs` the nodes its gradients flow to.

    `saved` is what the op's backward formulas receive after the incoming gradient; `checks` lists
    saved tensors' version counters, `fit` the (shape, dtype) each input's gradient must be reduced
    or cast to when it differs from the output's (broadcasting, mixed dtypes).
    """

    __slots__ = ("op", "inputs", "saved", "checks", "fit", "retained", "__weakref__")

    def __init__(self, op, inputs, saved, checks=None, fit=None):
        self.op = op
        self.inputs = inputs
        self.saved = saved
        self.checks = checks
        self.fit = fit
        self.retained = None       # weakref to the output tensor when it called retain_grad()

    @property
    def next_functions(self):
        return tuple((n, 0) for n in self.inputs)

    def name(self) -> str:
        return self.op.node

    def __repr__(self) -> str:
        return f"<{self.op.node} object at {hex(id(self))}>"


class _AccumulateOp:
    node = "AccumulateGrad"
    saves_tensors = False


class AccumulateGrad(Node):
    """The sink of a leaf tensor: gradients reaching it are added into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(_AccumulateOp, (), None)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"


def grad_accumulator(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad node: the same object while any graph still uses it (a tensor holds it
    only weakly, so no tensor -> node -> tensor cycle keeps either alive)."""
    ref = t._acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._acc = weakref.ref(node)
    return node


def edge(t):
    """The node a gradient for tensor `t` flows into, or None when `t` does not require grad."""
    fn = t.grad_fn
    if fn is not None:
        return fn
    if t.requires_grad:
        return grad_accumulator(t)
    return None


# ------------------------------------------------------------------------------------ gradient shaping

def sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Reduce a broadcast gradient back to `shape` (the one place broadcasting is undone)."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1 and g.shape[i + lead] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if lead:
        g = g.reshape(shape)
    return g


def _fit(F, g, target):
    shape, dtype = target
    if F.tensors:
        if g._a.shape != shape:
            g = F.sum_to(g, shape)
        if g._a.dtype != dtype:
            g = F.cast(g, dtype)
        return g
    if g.shape != shape:
        g = sum_to(g, shape)
    if g.dtype != dtype:
        g = g.astype(dtype)
    return g


# ---------------------------------------------------------------------------------------------- errors

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")

_HINT = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
         "with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def _check_versions(node):
    for tensor, box, expected, shape, legacy, owner in node.checks:
        if box[0] != expected:
            dims = ", ".join(str(d) for d in shape)
            if tensor is not None:             # a saved input: named after the op that now owns it
                fn = tensor.grad_fn
                owner = fn.op.node if fn is not None else None
            which = ""
            if owner is not None:
                short = owner.rsplit("Backward", 1)[0] if "Backward" in owner else "torch::autograd::" + owner
                which = f", which is output 0 of {short},"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{legacy} [{dims}]]{which} is at version {box[0]}; expected version "
                f"{expected} instead.{_HINT}")


# -------------------------------------------------------------------------------------- backward sweep

def _count_dependencies(roots):
    """How many edges enter each node reachable from the roots (iterative DFS)."""
    deps = {}
    stack = []
    for r in roots:
        if r not in deps:
            deps[r] = 0
            stack.append(r)
    while stack:
        node = stack.pop()
        for child in node.inputs:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                stack.append(child)
    return deps


def run_backward(roots, grads, retain_graph: bool, F, capture=None, accumulate=True):
    """Propagate `grads` from the `roots` nodes down to the leaves, with formulas evaluated by `F`:
    numpy arrays (backmath.NUMPY) or, for create_graph, recorded Tensor ops (backmath.TENSOR).

    With `accumulate`, leaves' `.grad` receive the sums (backward()); with `capture`, a dict
    node -> None, the gradient reaching each of those nodes is recorded instead (autograd.grad()).
    """
    as_tensors = F.tensors
    deps = _count_dependencies(roots)
    pending = {}
    for r, g in zip(roots, grads):
        pending[r] = pending[r] + g if r in pending else g
    ready = [r for r in dict.fromkeys(roots) if deps[r] == 0]
    while ready:
        node = ready.pop()
        g = pending.pop(node, None)
        if capture is not None and node in capture:
            capture[node] = g
        op = node.op
        if op is _AccumulateOp:
            if g is not None and accumulate:
                (_accumulate_tensor if as_tensors else _accumulate)(node.variable, g)
            continue
        if g is not None and node.retained is not None:
            t = node.retained()
            if t is not None:
                (_accumulate_tensor if as_tensors else _accumulate)(t, g)
        saved = node.saved
        if saved is FREED:
            raise RuntimeError(FREED_MESSAGE)
        if node.checks is not None:
            _check_versions(node)
        inputs = node.inputs
        if g is None:
            grads_in = (None,) * len(inputs)
        else:
            formulas = op.backward
            fit = node.fit
            values = F.unpack(saved, node) if saved else saved
            grads_in = []
            for i, child in enumerate(inputs):
                if child is None:
                    grads_in.append(None)
                    continue
                gi = formulas[i](F, g, *values)
                if fit is not None and fit[i] is not None:
                    gi = _fit(F, gi, fit[i])
                grads_in.append(gi)
        if not retain_graph and op.saves_tensors:
            node.saved = FREED
            node.checks = None
        for child, gi in zip(inputs, grads_in):
            if child is None:
                continue
            if gi is not None:
                prev = pending.get(child)
                pending[child] = gi if prev is None else F.add(prev, gi)
            n = deps[child] - 1
            deps[child] = n
            if n == 0:
                ready.append(child)


def _accumulate(t, g):
    """Add a gradient into `t.grad`: a fresh copy the first time (so no two leaves share a buffer), in
    place afterwards (so a script holding `t.grad` sees the sum, as in PyTorch)."""
    dtype = t._a.dtype
    if g.__class__ is not np.ndarray:
        g = np.asarray(g)
    if g.shape != t._a.shape:
        g = np.broadcast_to(g, t._a.shape)
    current = t.grad
    if current is None:
        t.grad = t.__class__(np.array(g, dtype=dtype, copy=True))
    else:
        buf = current._a
        np.add(buf, g, out=buf, casting="unsafe")
        current._version[0] += 1


def _accumulate_tensor(t, g):
    """create_graph: `.grad` becomes (or grows by) a tensor that remembers how it was computed."""
    if g._a.shape != t._a.shape or g._a.dtype != t._a.dtype:
        raise RuntimeError("gradient does not match the tensor it accumulates into")
    current = t.grad
    if current is None:
        alias = g.__class__(g._a)           # its own Tensor object: two leaves must not share one
        alias.grad_fn = g.grad_fn
        alias.requires_grad = g.requires_grad
        t.grad = alias
    else:
        t.grad = current + g
