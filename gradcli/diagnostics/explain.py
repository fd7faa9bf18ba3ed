"""What `gradcli explain SCRIPT NAME` and the REPL's `%why` show: the chain rule as a backward call applied it, node by
node from the output to NAME.

The script runs in a diagnostic session (gradcli.diagnostics.why.replay: provenance on, output discarded)
with a why.Recorder observing it. When a sweep starts, the nodes on a path from its roots
to NAME are found (NAME's AccumulateGrad for a leaf, its grad_fn otherwise); while it runs, each of
them is recorded with the gradient it received and what it passed on along those paths, in the
order the engine ran them. Gradients of at most SMALL elements are kept and shown in PyTorch's
display; larger ones are summarised when they are seen (shape, min, max, mean, nan and inf counts),
since the engine may later write into the buffer. The call explained is the last one that reached
NAME, or the last one made on the line given.
"""

from __future__ import annotations

SMALL = 20      # gradients of at most this many elements are shown in full


def target_name(text: str) -> str | None:
    """The name NAME or NAME.grad refers to, or None when it is not an identifier."""
    name = text.strip()
    if name.endswith(".grad"):
        name = name[:-len(".grad")]
    return name if name.isidentifier() else None


def explain_units(units: list, seed, name: str, line: int | None = None, number: int | None = None, live=None):
    """Replay `units` (gradcli.diagnostics.replay.Unit) from `seed` and explain the last call that reached `name`
    (on `line`, if given; the `number`-th of them, if given). Returns (text, problem, error): the
    explanation, or why there is none, or the ScriptError the replay ended in. `live`, the value the
    session asking holds under `name`, is compared with the replay's, and a difference is said."""
    from gradcli.diagnostics import why
    chain = _Chain(name)
    recorder = why.Recorder(watcher=chain)
    error = why.replay(units, seed, recorder, unlimited=True)
    chain.session, chain.provenance = recorder.session, recorder.provenance
    if error is not None:
        return None, None, error
    traces = [t for t in chain.traces if t.steps]
    lines = sorted({t.call.site.line for t in traces if t.call.site is not None})
    if line is not None:
        traces = [t for t in traces if t.call.site is not None and t.call.site.line == line]
    if not traces:
        if line is not None and lines:
            return None, f"no call on line {line} reached {name}; calls on {_listed(lines)} did", None
        return None, _nothing(chain, name), None
    if number is not None:
        if not (1 <= number <= len(traces) or -len(traces) <= number <= -1):
            return None, (f"--call {number}: {len(traces)} call{'s' if len(traces) != 1 else ''} reached {name}"
                          + (f" on line {line}" if line is not None else "")), None
        trace = traces[number - 1 if number > 0 else number]
    else:
        trace = traces[-1]
    text = _render(trace, chain, name)
    if len(traces) > 1 and number is None:
        others = len(traces) - 1
        text += f"{others} earlier call{'s' if others != 1 else ''} also reached {name}"
        if chain.provenance.main:               # a script, not REPL input: its lines and the options
            earlier = sorted({t.call.site.line for t in traces[:-1] if t.call.site is not None})
            text += f", on {_listed(earlier)} (--call K or --line N picks one)"
        text += "\n"
    text += _compare(chain, name, live)
    return text, None, None


def _nothing(chain, name: str) -> str:
    from gradcli.engine.tensor import Tensor
    namespace = chain.session.globals if chain.session is not None else {}
    value = namespace.get(name)
    differentiable = [n for n, v in namespace.items() if v.__class__ is Tensor and v.requires_grad]
    hint = f" (tensors that require grad: {', '.join(differentiable)})" if differentiable else ""
    if value is None and name not in namespace:
        return f"no backward() or autograd.grad() call reached a tensor named {name}{hint}"
    if value.__class__ is not Tensor:
        return f"'{name}' is not a tensor but a value of type {type(value).__name__}{hint}"
    if not value.requires_grad:
        return f"'{name}' does not require grad, so no gradient flows to it{hint}"
    return f"no backward() or autograd.grad() call reached {name}"


def _compare(chain, name: str, live) -> str:
    """A line when the session asking (the REPL) holds a different `.grad` under `name` than the replay."""
    import numpy as np
    from gradcli.engine.tensor import Tensor
    if live is None:
        return ""
    replayed = chain.session.globals.get(name)
    mine = getattr(replayed, "grad", None) if replayed.__class__ is Tensor else None
    theirs = getattr(live, "grad", None) if live.__class__ is Tensor else None
    if (mine is None) == (theirs is None) and (
            mine is None or (mine._a.shape == theirs._a.shape and np.array_equal(mine._a, theirs._a, equal_nan=True))):
        return ""
    return (f"note: replaying this session's inputs gave a different {name}.grad than the session holds "
            "(an input that failed part-way is not replayed); the steps above are the replay's\n")


def _listed(lines) -> str:
    """`line 6`, `lines 5, 6`."""
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(str(n) for n in lines)


# ----------------------------------------------------------------------------------------- recording

class _Shown:
    """A gradient as it was when the engine passed it: kept when small, summarised when large."""

    __slots__ = ("array", "summary")

    def __init__(self, g):
        import numpy as np
        a = g._a if hasattr(g, "_a") else np.asanyarray(g)
        if a.__class__ is not np.ndarray and isinstance(a, np.ndarray):     # a meta gradient: no values
            from gradcli.display import meta_repr
            self.array, self.summary = None, meta_repr(a.shape, a.dtype.name)
        elif a.size <= SMALL:
            self.array, self.summary = np.array(a, copy=True), None
        else:
            self.array, self.summary = None, summary(a)

    def text(self) -> str:
        if self.array is None:
            return self.summary
        from gradcli.display import tensor_repr
        return tensor_repr(self.array, self.array.dtype.name)


def summary(a) -> str:
    """`[128, 10] float32  min -0.0312  max 0.0458  mean 1.25e-05  nan 0  inf 0` (over the finite elements)."""
    import numpy as np
    head = f"{list(a.shape)} {a.dtype.name}"
    if a.dtype.kind not in "fcV":
        a = a.astype(np.float64)
    finite = a[np.isfinite(a)]
    nan = int(np.isnan(a).sum())
    inf = int(np.isinf(a).sum())
    if finite.size:
        low, high, mean = float(finite.min()), float(finite.max()), float(finite.mean(dtype=np.float64))
        values = f"min {low:.4g}  max {high:.4g}  mean {mean:.4g}"
    else:
        values = "no finite elements"
    return f"{head}  {values}  nan {nan}  inf {inf}"


class _Step:
    __slots__ = ("node", "received", "passed")

    def __init__(self, node, received, passed):
        self.node, self.received, self.passed = node, received, passed


class _Trace:
    """One sweep that reached NAME: its Call, the target nodes, the nodes on paths to them, the steps.
    The incoming gradient a node's step shows is the one the engine handed the observer, which the
    engine leaves unchanged while an observer watches (Op.joint may otherwise compute in its buffer)."""

    __slots__ = ("call", "targets", "on_path", "steps", "leaves", "before", "after", "returned")

    def __init__(self, call, targets, on_path, leaves):
        self.call, self.targets, self.on_path, self.leaves = call, targets, on_path, leaves
        self.steps: list = []
        self.before = [None if t.grad is None else _Shown(t.grad) for t in leaves]
        self.after = None
        self.returned = None


class _Chain:
    """What `explain` watches a replay for (the why.Recorder's watcher): a _Trace for each sweep
    that reached NAME. `session` and `provenance` are the replay's, once it has started."""

    def __init__(self, name: str):
        self.name = name
        self.traces: list = []
        self._trace = None
        self.session = self.provenance = None

    def call_opened(self, recorder, call, roots) -> None:
        from gradcli.engine.autograd import reachable
        self.session, self.provenance = recorder.session, recorder.provenance
        self._trace = None
        nodes = list(reachable(roots))
        targets, leaves = self._targets(nodes)
        if not targets:
            return
        self._trace = _Trace(call, targets, _on_path(nodes, targets), leaves)
        self.traces.append(self._trace)

    def _targets(self, nodes):
        from gradcli.engine.autograd import AccumulateGrad
        from gradcli.engine.tensor import Tensor
        value = self.session.globals.get(self.name)
        if value.__class__ is not Tensor:
            value = None
        provenance = self.provenance
        targets, leaves = [], []
        for node in nodes:
            if node.__class__ is AccumulateGrad:
                leaf = node.variable
                if leaf is None:
                    continue
                bound = provenance.leaf(leaf)
                if leaf is value or (bound is not None and bound[0] == self.name):
                    targets.append(node)
                    leaves.append(leaf)
            elif value is not None and node is value.grad_fn:
                targets.append(node)
        return targets, leaves

    def node_ran(self, recorder, call, node, grad, grads_in) -> None:
        trace = self._trace
        if trace is None or trace.call is not call or node not in trace.on_path:
            return
        passed = []
        if grads_in is not None and node not in trace.targets:
            from gradcli.engine.autograd import shown_inputs
            inputs = shown_inputs(node)
            # one tensor on both edges (`y * y`): the engine sends the sum along the first edge only (Op.joint)
            joint = len(inputs) == 2 and inputs[0] is inputs[1] and grads_in[0] is not None and grads_in[1] is None
            for i, (child, gi) in enumerate(zip(inputs, grads_in)):
                if child is not None and gi is not None and child in trace.on_path:
                    passed.append((i, child, _Shown(gi), joint))
        trace.steps.append(_Step(node, _Shown(grad) if grad is not None else None, passed))

    def call_done(self, recorder, call, inputs=None, result=None) -> None:
        trace = self._trace
        if trace is None or trace.call is not call:
            return
        if result is not None:
            for t, g in zip(inputs, result):
                if g is not None and (t in trace.leaves or (t.grad_fn is not None and t.grad_fn in trace.targets)):
                    trace.returned = _Shown(g)
                    break
        elif trace.leaves:
            leaf = trace.leaves[0]
            trace.after = _Shown(leaf.grad) if leaf.grad is not None else None


def _on_path(nodes, targets) -> set:
    """The targets and every node with a path to one of them."""
    from gradcli.engine.autograd import shown_inputs
    parents: dict = {}
    for node in nodes:
        for child in shown_inputs(node):
            if child is not None:
                parents.setdefault(child, []).append(node)
    found = set(targets)
    stack = list(targets)
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in found:
                found.add(parent)
                stack.append(parent)
    return found


# ------------------------------------------------------------------------------------------- the text

def _render(trace, chain, name: str) -> str:
    from gradcli.engine.tensor import Tensor
    provenance = chain.provenance
    names: dict = {}
    for n, v in chain.session.globals.items():
        if v.__class__ is Tensor:
            names.setdefault(id(v), n)
            if v.grad_fn is not None:
                names.setdefault(id(v.grad_fn), n)
    call, steps = trace.call, trace.steps
    numbers = {step.node: i for i, step in enumerate(steps, 1)}
    statement = call.site.text if call.site is not None else "a backward call"
    where = provenance.where(call.site) if call.site is not None else ""
    made = f"{statement} ({where})" if where else statement
    leaf = bool(trace.leaves)
    what = f"{name}.grad" if leaf and call.kind != "grad" else f"the gradient for {name}"
    out = [f"How {made} computed {what}, node by node from the output:",
           f"(in: the gradient a node received; out: what it passed on toward {name})", ""]
    width = len(str(len(steps)))
    for i, step in enumerate(steps, 1):
        out.append(f"[{i:>{width}}] {_label(step.node, names, provenance)}")
        pad = " " * (width + 3)
        if step.received is not None:
            out.extend(_value(pad + "in   ", step.received.text()))
        many = len({c for _, c, _, _ in step.passed}) > 1 or len(step.passed) > 1
        for index, child, shown, joint in step.passed:
            to = f"[{numbers[child]}]" if child in numbers else _label(child, names, provenance)
            if joint:
                to += " (both operands, summed)"
            elif many:
                to += f" (input {index})"
            out.extend(_value(pad + "out  ", shown.text(), f"  → {to}"))
    out.append("")
    if trace.returned is not None:
        out.extend(_value(f"autograd.grad returned for {name}: ", trace.returned.text()))
    elif leaf:
        if trace.before[0] is not None:
            out.extend(_value(f"{name}.grad before this call: ", trace.before[0].text()))
        if trace.after is not None:
            out.extend(_value(f"{name}.grad after this call:  " if trace.before[0] is not None
                              else f"{name}.grad after this call: ", trace.after.text()))
    else:
        target = next((numbers[t] for t in trace.targets if t in numbers), None)
        if target is not None:
            out.append(f"the gradient with respect to {name} is what [{target}] received")
    return "\n".join(out) + "\n"


def _value(head: str, text: str, tail: str = "") -> list:
    """`head` then a (possibly multi-line) value, its later lines aligned under its first."""
    lines = text.split("\n")
    pad = " " * len(head)
    result = [head + lines[0]] + [pad + line for line in lines[1:]]
    result[-1] += tail
    return result


def _label(node, names, provenance) -> str:
    """A node as the graph view names it: PyTorch's name, then the statement that made it and its line."""
    from gradcli.diagnostics import graphview
    label = graphview.describe(node, names, provenance)
    where = f"  ({label.where})" if label.where else ""
    if label.kind == "AccumulateGrad":
        if label.leaf is None:
            return "AccumulateGrad (its leaf tensor no longer exists)"
        shown = f"{label.variable}: " if label.variable else "leaf "
        return f"AccumulateGrad  {shown}{graphview.tensor_summary(label.leaf)}{where}"
    if label.site is None or not label.site.text:
        return f"{label.kind}  {label.variable}" if label.variable else label.kind
    if label.bound:
        return f"{label.kind}  {label.site.text}{where}"
    return f"{label.kind}  in {label.site.text}{where}"
