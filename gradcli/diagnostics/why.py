"""Why an error happened: one line after PyTorch's message, found by replaying the script with recording on.

A plain run records nothing: it must not pay for diagnostics. When a script ends in one of the
autograd errors people hit most, or reads `.grad` of a non-leaf tensor, the front end (cli.run_text,
the REPL) asks `error_note` or `warning_note` for one line to print after PyTorch's text, which
stays first and unchanged:

    s.grad:6:1: RuntimeError: Trying to backward through the graph a second time (...)
        out.backward()
        ^
      why: the backward() call on line 5 (out.backward()) already went through this graph ...

Most notes need to know where things came from, which the plain run did not record, so the script
is run again ("replayed") in a diagnostic session: output discarded, the random stream started from
the same seed, provenance and line tracking on, and the engine's observers watching every op and
every backward node. The replay must fail the same way; the note is then read off what was recorded
and off the facts the engine's error carries (autograd._error) and the statement that failed (the
provenance wrapper notes it on the error). A first run that
took longer than REPLAY_AFTER seconds is not replayed, a replay is abandoned after REPLAY_BUDGET
seconds, and any failure of the diagnosis itself only drops the note. The replay leaves the
process-wide engine state (grad mode, random stream, print options, addresses) as it found it, so
the REPL, and a script that warned, go on unchanged.

`gradcli explain` and `%why` (gradcli/diagnostics/explain.py) replay with the same machinery. docs/diagnostics.md
describes each note.
"""

from __future__ import annotations

import math
import re
import time
import weakref

from gradcli.language import compiler
from gradcli.language import provenance as provenance_module
from gradcli import session as session_module
from gradcli.engine import autograd, rng
from gradcli.engine.autograd import AccumulateGrad
from gradcli.engine.observe import Observer
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.errors import ScriptError
from gradcli.diagnostics import replay as replays
from gradcli.diagnostics.replay import Call, Stop, Unit, repl_units  # noqa: F401 (Unit, repl_units: the front ends')
from gradcli.language.provenance import _ByIdentity

PREFIX = "  why: "          # how a note is shown after an error's text or a warning's source line
REPLAY_AFTER = 3.0          # seconds: a first run (up to its error) longer than this is not replayed
REPLAY_BUDGET = 5.0         # seconds a diagnostic replay may take before it is abandoned

SCALAR_MESSAGE = "grad can be implicitly created only for scalar outputs"
_NO_GRAD_MESSAGE = re.compile(r"element (\d+) of tensors does not require grad and does not have a grad_fn")
_INPLACE_MESSAGE = "one of the variables needed for gradient computation has been modified by an inplace operation"


def why_line(note: str) -> str:
    return PREFIX + note


# ------------------------------------------------------------------------------------------ the notes

def error_note(err: ScriptError, session, units: list, elapsed: float) -> str | None:
    """The note for `err`, raised by `session` running `units` (the last one failed) after `elapsed`
    seconds; None for an error without one, or when the diagnosis cannot tell."""
    try:
        message = err.message
        if message == SCALAR_MESSAGE:
            return _not_scalar(err, session)
        if elapsed > REPLAY_AFTER or session is None:
            return None
        if message == autograd.FREED_MESSAGE:
            return _freed(err, session, units)
        match = _NO_GRAD_MESSAGE.fullmatch(message)
        if match:
            return _no_grad(err, session, units, int(match.group(1)))
        if message.startswith(_INPLACE_MESSAGE):
            return _modified(err, session, units)
    except (Exception, KeyboardInterrupt, Stop):       # the diagnosis must never be the failure
        if session_module.DEBUG:
            raise
    return None


def warning_note(session, line: int, col: int, category: str, message: str, units: list | None,
                 elapsed: float) -> str | None:
    """The note for a warning `session` is showing: reading `.grad` of a non-leaf tensor says which
    op made it, where, and how to keep its gradient. Called while the script runs (from Session.warn),
    so a replay, when one is needed, runs inside the first run and leaves it as it was."""
    try:
        if message != compiler.NON_LEAF_GRAD_WARNING:
            return None
        tensor = session.warning_subject
        if tensor.__class__ is not Tensor or tensor.grad_fn is None:
            return None
        node = tensor.grad_fn
        provenance, namespace = session.provenance, session.globals
        if provenance is None and units and elapsed <= REPLAY_AFTER:
            recorder = Recorder()
            recorder.stop_at_warning = (session.filename, line, col, message)
            replay(units, session.seeds, recorder)
            found = recorder.found
            if found is not None and found.grad_fn is not None and found.grad_fn.op is node.op:
                tensor, node = found, found.grad_fn
                provenance, namespace = recorder.provenance, recorder.session.globals
        return _non_leaf_note(tensor, node, provenance, namespace)
    except (Exception, KeyboardInterrupt, Stop):
        if session_module.DEBUG:
            raise
    return None


def _not_scalar(err, session) -> str | None:
    """`grad can be implicitly created only for scalar outputs`: the engine's error names the output
    and the call, so no replay is needed."""
    original = err.__context__
    out = getattr(original, "output", None)
    if out.__class__ is not Tensor:
        return None
    name = _name_in(out, session.globals if session is not None else {})
    shape = list(out._a.shape)
    via_grad = getattr(original, "via", None) == "grad"
    if name is None:
        what = f"the output has shape {shape}"
        fixes = ("reduce it to one number first (.sum() or .mean())" +
                 (", or pass grad_outputs= a tensor of that shape" if via_grad else
                  ", or pass gradient= a tensor of that shape"))
        return f"{what}: {fixes}"
    if via_grad:
        return (f"{name} has shape {shape}, not a single number: differentiate {name}.sum() instead, or pass "
                f"grad_outputs=torch.ones_like({name}) (any tensor of that shape weighs the elements)")
    return (f"{name} has shape {shape}, not a single number: call {name}.sum().backward() (or .mean()), or "
            f"pass a gradient of that shape, {name}.backward(gradient=torch.ones_like({name}))")


def _freed(err, session, units) -> str | None:
    """Backward through a freed graph: which earlier call freed it, and where retain_graph=True goes."""
    recorder = Recorder()
    failure = _replay_same(err, session, units, recorder)
    node = getattr(failure, "node", None)
    call = recorder.ran_by.get(node) if node is not None else None
    if call is None or call.site is None:
        return None
    provenance = recorder.provenance
    made = provenance.created(node)
    which = f"{node.op.node} ({_where(provenance, made)})" if made is not None else node.op.node
    what = {"backward": "backward()", "grad": "autograd.grad()"}.get(call.kind, "autograd")
    fix = _with_retain(call.site.text, call.kind)
    fix = f"write {fix} there" if fix else "pass retain_graph=True to that call"
    failing = _failed_statement(failure)
    if failing is not None and failing[0] is call.site:       # the same statement, run again
        return (f"an earlier run of this {what} call freed the graph's saved tensors, which {which} needs "
                f"again now; {fix} to go through the graph again, or build the graph anew before each call")
    return (f"the {what} call at {_at(provenance, call.site)} already went through this graph and freed its "
            f"saved tensors, which {which} needs again now; {fix} to go through the graph again")


def _no_grad(err, session, units, index: int) -> str | None:
    """`element i of tensors does not require grad`: the leaves without requires_grad=True, the
    statement run under torch.no_grad(), or the .detach() that the output comes from."""
    recorder = Recorder(grad_sources=True)
    failure = _replay_same(err, session, units, recorder)
    out = getattr(failure, "output", None)
    if out.__class__ is not Tensor or getattr(failure, "index", None) != index:
        return None
    provenance, namespace = recorder.provenance, recorder.session.globals
    failing = _failed_statement(failure)
    if failing is not None and failing[1] is not namespace and isinstance(failing[1], dict):
        namespace = {**namespace, **failing[1]}     # failed inside a script function: its local names first
    name = _name_in(out, namespace, provenance)
    subject = name or ("the output" if index == 0 else f"output {index}")
    causes = _no_grad_causes(out, recorder, namespace, failing[0] if failing else None)
    if not causes:
        return None
    first = causes[0]
    direct = first.tensor is not None and first.tensor() is out     # the cause is about `out` itself
    at = _at(provenance, first.site) if first.site is not None else ""
    if first.kind == "no_grad":
        mode = _grad_off_block(provenance, first.blocks)
        if direct:
            return f"{subject} was computed at {at} {mode}, so it has no grad_fn; compute it outside that block"
        return (f"{subject} is computed from {at}, which ran {mode} and so recorded no grad_fn; compute that "
                "outside the block")
    if first.kind in ("detach", "data"):
        cut = ".detach()" if first.kind == "detach" else ".data"
        return (f"{subject} is computed from the {cut} at {at}, which cuts the graph there; use the tensor "
                "itself where gradients should flow")
    if first.kind == "gradient":
        made = f"{subject} is a gradient" if direct else f"{subject} is computed from a gradient"
        return (f"{made} taken at {at} without create_graph=True, which has no graph of its own; pass "
                "create_graph=True there to differentiate it again")
    if first.kind == "untracked":
        made = f"{subject} was made" if direct else f"{subject} is computed from a tensor made"
        return (f"{made} at {at} from tensors that require grad, by an operation gradients do not flow "
                "through (argmax, a comparison, .item(), an integer result...)")
    described = [d for d in (_leaf_text(c, provenance, namespace) for c in causes if c.kind == "leaf") if d]
    if not described:
        return None
    if direct:
        fix = f" (or call {name}.requires_grad_() before using it)" if name else ""
        return f"{described[0]} was created without requires_grad=True; create it with requires_grad=True{fix}"
    listed = described[0] if len(described) == 1 else ", ".join(described[:-1]) + " and " + described[-1]
    return (f"{subject} is computed only from tensors that do not require grad: {listed}, created "
            "without requires_grad=True; create the ones to differentiate with requires_grad=True")


_GRADIENT = re.compile(r"\bgrad\(|\.grad\b")      # a statement reading gradients: autograd.grad, x.grad
_NAME = re.compile(r"""(?<![.\w'"])([A-Za-z_]\w*)\b(?!\s*=[^=])""")
_MAX_TRACED = 64


def _no_grad_causes(out, recorder, namespace, failing_site) -> list:
    """Why `out` does not require grad, walking back from it statement by statement: a tensor cut
    off by .detach() or .data, one assigned by a statement that ran with grad mode off, or else the
    tensors named in the statement that assigned it (a statement without such names made a leaf).
    The engine's fast path computes ops on tensors that need no grad without recording anything, so
    the walk follows the names a statement reads, looked up in the replay's namespace: exact for
    top-level code, an approximation for names rebound later or local to a function."""
    provenance = recorder.provenance
    causes: list = []
    seen: set = set()
    queue = [(out, failing_site)]
    while queue and len(seen) < _MAX_TRACED:
        t, fallback = queue.pop(0)
        if id(t) in seen:
            continue
        seen.add(id(t))
        cut = recorder.cuts.get(t)
        if cut is not None:
            causes.append(cut)
            continue
        bound = provenance.leaf(t)
        site = bound[1] if bound is not None else fallback
        if site is None:
            causes.append(Cause("leaf", None, t))
            continue
        blocks = recorder.grad_off.get(site)
        if blocks is not None:
            causes.append(Cause("no_grad", site, t, blocks))
            continue
        kind = recorder.cut_sites.get(site)
        if kind is not None:
            causes.append(Cause(kind, site, t))
            continue
        read = [v for v in _tensors_read(site.text, namespace) if v is not t]
        waiting = [v for v in read if not v.requires_grad]
        if not read:
            causes.append(Cause("leaf", site, t))
        elif not waiting:           # made from tensors that require grad, yet it does not
            causes.append(Cause("gradient" if _GRADIENT.search(site.text) else "untracked", site, t))
        queue.extend((v, None) for v in waiting)
    causes.sort(key=lambda c: _RANK[c.kind])
    leaves = [c for c in causes if c.kind == "leaf"][:_MAX_LEAVES]
    return [c for c in causes if c.kind != "leaf"][:1] or leaves


def _tensors_read(text: str, namespace: dict) -> list:
    """The tensors a statement's text names (not assignment targets or keyword argument names)."""
    found = []
    for name in _NAME.findall(text.split("=", 1)[1] if _assigns(text) else text):
        value = namespace.get(name)
        if value.__class__ is Tensor and not any(value is f for f in found):
            found.append(value)
    return found


def _assigns(text: str) -> bool:
    """Whether a statement's text is an assignment `targets = value` (not `==`, `<=`, `+=` ...)."""
    match = re.match(r"[\w\s,.\[\]]*?=(?!=)", text)
    return match is not None and text[match.end() - 2:match.end() - 1] not in "=!<>+-*/%@&|^"


def _modified(err, session, units) -> str | None:
    """The in-place version error: the statement that modified the saved tensor. A first replay finds
    the node whose check failed; a second one watches that saved tensor's version counter statement
    by statement, which is what PyTorch's anomaly mode can only approximate with a backtrace."""
    first = Recorder()
    deadline = time.perf_counter() + REPLAY_BUDGET          # for both replays together
    failure = _replay_same(err, session, units, first, deadline)
    node, index = getattr(failure, "node", None), getattr(failure, "index", None)
    if node is None or index is None or not _checks(node):
        return None
    provenance = first.provenance
    saved = failure.tensor
    name = None
    if saved is not None:
        name = _name_in(saved, first.session.globals, provenance)
        base = saved._base
        if name is None and base is not None:
            name = _name_in(base, first.session.globals, provenance)
            name = f"a view of {name}" if name else None
        what = f"saved by {node.op.node}"
    else:
        bound = provenance.binding(node)
        name = bound[0] if bound is not None else None
        what = f"the result {node.op.node} saved"
    made = provenance.created(node)
    if made is not None:
        what += f" at {_where(provenance, made)}"
    what = f"{name}, {what}," if name else ("a tensor " + what if saved is not None else what)
    watch = _VersionWatch(node.seq - first.base, index, node.op)
    replay(units, session.seeds, watch, deadline=deadline)
    if watch.found is None:
        return None
    return (f"{what} was modified in place at {_at(watch.provenance, watch.found)}; make that change out "
            "of place, or make it on a .clone()")


def _checks(node):
    """The version checks of what `node` saved: an op's, or a custom Function's (checked when its
    backward reads ctx.saved_tensors)."""
    return node.checks if node.checks is not None else getattr(node, "saved_checks", None)


def _non_leaf_note(tensor, node, provenance, namespace) -> str:
    name = _name_in(tensor, namespace, provenance)
    made = provenance.created(node) if provenance is not None else None
    where = f" at {_at(provenance, made)}" if made is not None else ""
    leaves = [f"{n}.grad" for n in _leaves_below(node, namespace, provenance)]
    instead = ""
    if leaves:
        instead = ", or read " + (leaves[0] if len(leaves) == 1 else ", ".join(leaves[:-1]) + " or " + leaves[-1])
    if name:
        return (f"{name} is not a leaf: {node.op.node} made it{where}; call {name}.retain_grad() before "
                f"backward() to keep its gradient{instead}")
    return (f"this tensor is not a leaf: {node.op.node} made it{where}; call .retain_grad() on it before "
            f"backward() to keep its gradient{instead}")


# ------------------------------------------------------------------------------------------- wording

def _where(provenance, site) -> str:
    """`line 3` (or `file.grad line 3`); for REPL input, whose lines restart each time, the statement."""
    text = provenance.where(site) if provenance is not None else ""
    return text or site.text


def _at(provenance, site) -> str:
    """`line 5 (out.backward())`, or the statement alone for REPL input."""
    where = provenance.where(site) if provenance is not None else ""
    return f"{where} ({site.text})" if where else site.text


def _with_retain(text: str, kind) -> str | None:
    """The statement with retain_graph=True given to its backward() or autograd.grad() call."""
    marker = {"backward": ".backward(", "grad": "grad("}.get(kind)
    start = text.find(marker) if marker else -1
    if start < 0:
        return None
    open_at = start + len(marker) - 1
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text[i], 0)
        if depth == 0:
            inside = text[open_at + 1:i].strip()
            if re.search(r"\bretain_graph\s*=", inside):
                inside = re.sub(r"\bretain_graph\s*=\s*[^,]*", "retain_graph=True", inside)
            else:
                inside = f"{inside}, retain_graph=True" if inside else "retain_graph=True"
            return text[:open_at + 1] + inside + text[i:]
    return None


def _grad_off_block(provenance, blocks) -> str:
    for site in reversed(blocks):
        if site.text.startswith("with "):
            where = provenance.where(site)
            return f"inside {site.text} ({where})" if where else f"inside {site.text}"
    return "with grad mode off"


def _leaf_text(cause, provenance, namespace) -> str | None:
    tensor = cause.tensor() if cause.tensor is not None else None
    name, site = None, cause.site
    if tensor is not None:
        found = provenance.leaf(tensor)
        if found is not None:
            name, site = found
        name = name or _name_in(tensor, namespace)
    if site is None:
        return name
    return f"{name} ({_where(provenance, site)})" if name else f"a tensor made at {_at(provenance, site)}"


def _name_in(tensor, namespace: dict, provenance=None) -> str | None:
    """The first name `namespace` binds to `tensor`, else the name provenance saw it bound to."""
    for name, value in namespace.items():
        if value is tensor:
            return name
    if provenance is not None:
        fn = tensor.grad_fn
        found = provenance.leaf(tensor) if fn is None else provenance.binding(fn)
        if found is not None:
            return found[0]
    return None


def _leaves_below(node, namespace, provenance, most: int = 3, limit: int = 10_000) -> list:
    """The names of the leaves this node's gradient flows to (breadth first, the nearest first)."""
    seen = {node}
    queue = [node]
    names: list = []
    for current in queue:
        if len(seen) > limit or len(names) >= most:
            break
        for child in autograd.shown_inputs(current):
            if child is None or child in seen:
                continue
            seen.add(child)
            if child.__class__ is AccumulateGrad:
                leaf = child.variable
                if leaf is not None:
                    name = _name_in(leaf, namespace, provenance)
                    if name and name not in names and len(names) < most:
                        names.append(name)
            else:
                queue.append(child)
    return names


# ---------------------------------------------------------------------------------------- failures

def _failed_statement(exc):
    """(site, env) of the innermost statement `exc` came through in the replay (noted on it by the
    provenance wrapper, gradcli.language.provenance), or None."""
    return getattr(exc, provenance_module.FAILED_STATEMENT, None) if exc is not None else None


# ----------------------------------------------------------------------------------------- recording

class _Sweep:
    """One sweep the engine started (Observer.sweep_start): its roots; its identity tells a nested
    sweep (one a hook starts) from the sweep it interrupted."""

    __slots__ = ("roots",)

    def __init__(self, roots):
        self.roots = roots


class Cause:
    """Why a tensor does not require grad: made under grad mode off (`no_grad`, with the statements in
    progress then), cut off by .detach() or .data, or a leaf created without requires_grad=True.
    `tensor` is a weak reference to the tensor the cause is about, `site` the statement then."""

    __slots__ = ("kind", "site", "tensor", "blocks")

    def __init__(self, kind, site, tensor, blocks=()):
        self.kind, self.site, self.blocks = kind, site, blocks
        self.tensor = weakref.ref(tensor) if tensor is not None else None


_RANK = {"no_grad": 0, "detach": 1, "data": 1, "gradient": 1, "untracked": 2, "leaf": 3}
_MAX_LEAVES = 3


class Recorder(Observer):
    """A replay's event sink (what a JsonLines sink would be told) and its observer.

    It records every backward sweep (a Call) and, for each node that saves tensors, the last call that
    ran it: that call freed it unless it kept the graph. With `grad_sources`, it also notes where
    tensors stop requiring grad: the statements run with grad mode off (with the blocks around them),
    and the tensors made by .detach() or .data and the statements that made them. Subclasses watch
    more through five hooks: call_opened, node_ran, call_done, op_seen and statement; a `watcher`
    (gradcli.diagnostics.explain) receives the first three without subclassing."""

    def __init__(self, grad_sources: bool = False, watcher=None):
        self.watcher = watcher           # an object with the hooks below, each given this recorder first
        self.session = None
        self.provenance = None
        self.base = 0                    # the engine's node number when the replay started
        self.calls: list = []
        self.ran_by = weakref.WeakKeyDictionary()
        self.grad_sources = grad_sources
        self.grad_off: dict = {}         # Site -> the statements in progress when it ran with grad mode off
        self.cut_sites: dict = {}        # Site -> "detach" or "data": it cut a tensor off the graph
        self.cuts = _ByIdentity()        # tensor made by .detach() or .data -> Cause
        self.stop_at_warning = None      # (file, line, col, message): stop the replay at that warning ...
        self.found = None                # ... with the tensor whose .grad was read
        self._open = None
        self._sweeps: list = []          # the sweeps in progress, the innermost last
        self._label = None               # (kind, retain_graph) given by backward() before its sweep
        self._deadline = math.inf
        self._ops = 0

    def start(self, session, deadline: float) -> None:
        self.session, self.provenance, self._deadline = session, session.provenance, deadline
        plain = session.provenance._mark

        def mark(site):
            plain(site)
            self.statement(site)
        # Provenance._wrap binds `self._mark` when statements are compiled: an instance attribute set
        # now is what every statement of the replay calls at its start and end
        session.provenance._mark = mark

    def site(self):
        """The statement running (the innermost), or None."""
        running = self.provenance.running()
        return running[-1] if running else None

    # ------------------------------------------------------------ hooks for subclasses
    def statement(self, site) -> None:
        """A statement starts (`site`) or ends (`site` is the enclosing one, or None)."""
        if time.perf_counter() > self._deadline:
            raise Stop("out of time")
        if self.grad_sources and site is not None and not STATE.recording:
            self.grad_off.setdefault(site, self.provenance.running())

    def call_opened(self, call, roots) -> None:
        """A backward sweep from the nodes `roots` ran its first node."""
        if self.watcher is not None:
            self.watcher.call_opened(self, call, roots)

    def node_ran(self, call, node, grad, grads_in) -> None:
        """The sweep ran `node` (see Observer.node)."""
        if self.watcher is not None:
            self.watcher.node_ran(self, call, node, grad, grads_in)

    def call_done(self, call, inputs=None, result=None) -> None:
        """backward() or autograd.grad() returned (with autograd.grad's `inputs` and `result`)."""
        if self.watcher is not None:
            self.watcher.call_done(self, call, inputs, result)

    def op_seen(self, op, result, inputs) -> None:
        """An op made `result` (see Observer.op)."""

    # ------------------------------------------------------------ the observer
    def op(self, op, result, inputs) -> None:
        self._ops += 1
        if not self._ops & 255 and time.perf_counter() > self._deadline:
            raise Stop("out of time")
        self.op_seen(op, result, inputs)

    def sweep_start(self, roots, retain_graph, create_graph, targets) -> None:
        self._sweeps.append(_Sweep(roots))

    def sweep_end(self) -> None:
        self._sweeps.pop()

    def node(self, node, grad, grads_in) -> None:
        sweep = self._sweeps[-1]
        call = self._open
        if call is None or call.sweep is not sweep:
            kind, retain = self._label or (None, None)
            self._label = None
            if call is not None:
                call.sweep = None
            call = self._open = Call(len(self.calls) + 1, kind, site=self.site(), retain=retain, sweep=sweep)
            self.calls.append(call)
            self.call_opened(call, sweep.roots)
        if node.op.saves_tensors or node.op.__class__ is autograd.RunOp:    # a custom node frees when it runs
            self.ran_by[node] = call
        self.node_ran(call, node, grad, grads_in)

    def detached(self, tensor, kind) -> None:
        """Note the results of .detach() and .data, and the statements that made them."""
        if self.grad_sources:
            site = self.site()
            self.cuts.setdefault(tensor, Cause(kind, site, tensor))
            if site is not None:
                self.cut_sites.setdefault(site, kind)

    def script_backward(self, outputs, inputs, retain_graph, create_graph):
        self._label = ("backward", bool(retain_graph))

        def done():
            call = self._open
            if call is not None and call.kind == "backward":
                self.call_done(call)
            self._close()
        return done

    def script_grad(self, outputs, inputs, retain_graph, create_graph, result) -> None:
        call = self._open
        if call is not None:
            if call.kind is None:
                call.kind, call.retain = "grad", bool(retain_graph)
            self.call_done(call, inputs, result)
        self._close()

    def _close(self) -> None:
        if self._open is not None:
            self._open.sweep = None
        self._open = None
        self._label = None

    # ------------------------------------------------------------ the event sink
    def warning(self, line, col, category, message, why=None) -> None:
        if self.stop_at_warning == (self.session.filename, line, col, message):
            self.found = self.session.warning_subject
            raise Stop("found")

    def print(self, text, args, stream="stdout") -> None:
        pass

    def result(self, value) -> None:
        pass

    def message(self, text) -> None:
        pass

    def error(self, err) -> None:
        pass

    def end(self, ok, started, file=None) -> None:
        pass


class _VersionWatch(Recorder):
    """The second replay for the in-place error: finds the node numbered `offset` after the replay's
    start (the one whose check failed), takes the version counter of its saved tensor number `index`,
    and stops at the first statement boundary where that counter has moved: the statement that ran
    just before is the one that modified the tensor."""

    def __init__(self, offset: int, index: int, op):
        super().__init__()
        self._offset, self._index, self._op = offset, index, op
        self._span: list = []            # op results made since the last statement boundary
        self._box = None
        self._expected = None
        self._previous = None            # the statement that ran since the last boundary

    def op_seen(self, op, result, inputs) -> None:
        if self._box is None:
            self._span.append(result)

    def statement(self, site) -> None:
        super().statement(site)
        if self._box is None:
            target = self.base + self._offset
            for t in self._span:
                fn = t.grad_fn
                if fn is not None and fn.seq == target and fn.op.node == self._op.node and _checks(fn):
                    entry = _checks(fn)[self._index]
                    self._box, self._expected = entry[1], entry[2]
                    break
            self._span.clear()
        if self._box is not None and self._box[0] != self._expected:
            self.found = self._previous
            raise Stop("found")
        self._previous = site


# ------------------------------------------------------------------------------------------- replays

def replay(units: list, seed, recorder: Recorder, unlimited: bool = False,
           deadline: float | None = None) -> ScriptError | None:
    """Run `units` in a fresh diagnostic session (provenance and line tracking on, output discarded,
    the random stream seeded with `seed`) watched by `recorder`; returns the ScriptError it ended in,
    or None. It ends early, returning None, at `deadline` (time.perf_counter(); by default
    REPLAY_BUDGET seconds from now) unless `unlimited`, or when the recorder found what it looked for."""
    if unlimited:
        deadline = math.inf
    elif deadline is None:
        deadline = time.perf_counter() + REPLAY_BUDGET
    with replays.session(seed, recorder, recorder, provenance=True) as session:
        last = units[-1] if units else None
        session.provenance.main = last.filename if last is not None and last.lines else None
        recorder.start(session, deadline)
        recorder.base = autograd._next_seq()
        for unit in units:
            if unit.source is None:
                rng.default_generator.manual_seed(unit.seed)
                continue
            try:
                session.run_unit(unit.source, unit.filename)
            except ScriptError as e:
                if e.exit_status:           # (sys.exit(0) ends a run that succeeded)
                    return e
                break
            except Stop:
                return None
    return None


def _replay_same(err, session, units, recorder, deadline=None):
    """Replay, and return the engine's exception when the replay failed exactly as `err` did."""
    got = replay(units, session.seeds, recorder, deadline=deadline)
    if (got is None or got.kind != err.kind or got.message != err.message or got.line != err.line
            or got.filename != err.filename):
        return None
    return got.__context__
