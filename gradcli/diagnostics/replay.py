"""Replays of a script: the one place a replay session is built (`session`), for the `why:` notes and
`explain` (gradcli.diagnostics.why.replay) and for --check-grads (`Run`: silent float64 runs that record
backward calls, or perturb chosen tensors at chosen moments and report the value of one call's root).

Every replay is a fresh Session on the same seed, its output discarded, an observer watching, inside
`STATE.isolated()`: the session it replays (a REPL, or a script still running after a warning) goes on
with its engine state as it was.

A --check-grads replay (`Run`) is the engine state's `replay` and `observer` while it runs, so plain
runs never pay for it:
  * each tensor made (Tensor.__init__ asks Run.tensor_made) has a float32 array upcast to float64
    (random streams keep their float32 values exactly), is counted (its creation index) and may be
    perturbed;
  * `.float()` / `.to(torch.float32)` leave float64 tensors alone, as they left float32 ones;
  * the session's `where` line tracking ticks at every statement start and end;
  * torch.seed() draws from a fixed sequence (Run.next_seed), so every replay sees the same values.
Creation indices and ticks count from the start of the run, so they name the same moment in every
replay: the moments at which tensors are perturbed ("tick", i) / ("new", c).

A planning replay (`on_call`) records every backward() / autograd.grad() call as a Call: the tensors
it differentiates, their analytic gradients (captured through Observer.node, or autograd.grad's
result), when to perturb each, and the call's graph. A probing replay answers
Probes: it forks at each probe's first moment (the child applies the perturbation, runs on to the
probe's call, sends back sum(root * gradient) and exits), or, with `single`, runs one probe from the
start and raises Stop with the value.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import select
import signal
import time
import weakref
from bisect import bisect_right

import numpy as np

from gradcli import deadline
from gradcli.engine import autograd
from gradcli.engine.observe import Observer
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.errors import ScriptError

# Children run at once, and how long one may take (a perturbed `while` may never end).
PARALLEL = max(1, min(os.cpu_count() or 1, 8))
PROBE_TIMEOUT = 300.0
# Nodes of a call's graph kept for locating a mismatch (nearest the root first).
MAX_NODES = 200

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)


# ------------------------------------------------------------------------------------------ plans

class Checked:
    """A tensor a call differentiates: where it is made, when to perturb it, its analytic gradient."""

    __slots__ = ("name", "shape", "c", "point", "key", "analytic")

    def __init__(self, name, shape, c, point, key, analytic):
        self.name = name            # the script's name for it, or a description
        self.shape = shape
        self.c = c                  # creation index: the how-many-th tensor the run made
        self.point = point          # ("tick", i) or ("new", c): the moment it is perturbed
        self.key = key              # that moment's place on the run's timeline (sortable)
        self.analytic = analytic    # float64 array, until the plan has taken what it needs


class GraphNode:
    """One node of a call's graph, as locating a mismatch needs it."""

    __slots__ = ("name", "line", "c", "shape", "inputs", "checked", "relevant", "status", "values")

    def __init__(self, name, line, c, shape, inputs, checked):
        self.name, self.line, self.c, self.shape = name, line, c, shape
        self.inputs = inputs        # indices of input nodes in the call's node list (-1: not kept)
        self.checked = checked      # index into the call's tensors when this is a checked tensor's node
        self.relevant = False       # has a path to a checked tensor
        self.status = None          # "ok", "bad" or None (not checked)
        self.values = None          # probes, then (analytic, numeric) along its direction


class Call:
    """One backward() / autograd.grad() call a replay saw. `kind`: "backward", "grad", or None for a
    sweep the script did not ask for itself (those of torch.autograd.functional); `site` the statement
    running (with provenance), `retain` whether it kept the graph, `sweep` the engine's sweep while it
    runs (the `why:` notes). --check-grads plans it (`tensors`, `graph`, `note`) and records results."""

    def __init__(self, index, kind, line=0, site=None, retain=None, sweep=None):
        self.index = index          # 1-based, in the order the script made them
        self.kind = kind
        self.line = line
        self.site, self.retain, self.sweep = site, retain, sweep
        self.tensors: list = []     # [Checked], in creation order
        self.graph = None           # [GraphNode], nearest the root first
        self.node_dots = None       # locating: key -> analytic value along that key's direction
        self.note = None            # why the call is not checked


class Probe:
    """One replay's perturbation for call `call`: actions [(key, point, c, flat index or None, delta)],
    the delta a number added to one element, or an Along added to the whole tensor."""

    __slots__ = ("call", "actions", "result")

    def __init__(self, call, actions):
        self.call = call
        self.actions = sorted(actions, key=lambda a: a[0])
        self.result = None          # the root's value, or a string saying why there is none


def direction(call: int, c: int, shape, purpose: int = 0) -> np.ndarray:
    """A random direction for tensor `c` of call `call`, the same in every replay and process."""
    return np.random.default_rng([purpose, call, c]).standard_normal(shape)


class Along:
    """`scale` times direction(call, c, shape, purpose), made only when used (probes of large tensors
    wait in their thousands; their directions need not)."""

    __slots__ = ("args", "scale")

    def __init__(self, call, c, shape, purpose=0, scale=1.0):
        self.args = (call, c, shape, purpose)
        self.scale = scale

    def array(self) -> np.ndarray:
        return self.scale * direction(*self.args)


def moment_key(point, tick_counts) -> tuple:
    """Where a moment falls on the timeline: tick i comes after the tensors made before it."""
    kind, i = point
    return (tick_counts[i], 0, i) if kind == "tick" else (i, 1, 0)


# ------------------------------------------------------------------------------------- sessions

class Stop(BaseException):
    """Ends a replay early: a single probe's at its call (`value`: the answer), a diagnosis out of time
    or having found what it looked for. A BaseException, so script code and the session pass it on."""

    def __init__(self, value=None):
        super().__init__(value)
        self.value = value


class Unit:
    """What a replay runs, in order: a script's text (or one REPL input) under its file name, or, with
    `source` None, a reseed (the REPL's `%seed N`). `lines`: whether its line numbers mean something
    to the reader (not for REPL input, whose lines restart at 1 each time: its statements are shown)."""

    __slots__ = ("source", "filename", "seed", "lines")

    def __init__(self, source: str | None, filename: str = "<script>", seed: int | None = None,
                 lines: bool = True):
        self.source, self.filename, self.seed, self.lines = source, filename, seed, lines


def repl_units(accepted: list) -> list:
    """The REPL's inputs that ran without error (Shell.accepted) as units to replay: `# %seed N`
    reseeds, `# %load FILE` runs FILE's text under FILE's name, anything else is one input."""
    units = []
    for entry in accepted:
        first, _, rest = entry.partition("\n")
        if first.startswith("# %seed ") and not rest:
            units.append(Unit(None, seed=int(first[len("# %seed "):])))
        elif first.startswith("# %load "):
            units.append(Unit(rest, first[len("# %load "):]))
        else:
            units.append(Unit(entry, "<stdin>", lines=False))
    return units


class _Discard:
    """Where a replay's output goes."""

    def write(self, text) -> int:
        return len(text)

    def flush(self) -> None:
        pass


@contextlib.contextmanager
def session(seed, events, observer, provenance: bool = False, float64=None):
    """A fresh Session for a replay, output discarded, the random streams seeded with `seed` (torch's
    seed, or the pair Session.seeds: torch's and the `random` module's), reporting to `events` and
    watched by `observer` (with `float64`, a Run, tensors are made float64), inside STATE.isolated():
    the engine state is put back as it was when the replay ends. The script sees the arguments of the run it
    replays (`gradcli run S -- ARG...`), which the engine state holds until the replay's session sets its own."""
    seed, python_seed = seed if seed.__class__ is tuple else (seed, None)
    script_args = STATE.streams[3] if STATE.streams is not None else ()
    frozen = gc.get_freeze_count()      # a replay inside a run unfreezes what the run froze (session._collector_tuned)
    try:
        with STATE.isolated():
            from gradcli.session import Session
            STATE.replay, STATE.observer = float64, observer
            sink = _Discard()
            replayed = Session(out=sink, err=sink, seed=seed, events=events, provenance=provenance,
                               python_seed=python_seed, script_args=script_args)
            replayed.replaying = True
            yield replayed
    finally:
        if frozen and not gc.get_freeze_count():
            gc.freeze()


# ------------------------------------------------------------------------------------- the replay


class _Ticker(list):
    """The session's `where` [line]: compiled statements set it as they start and end; each set ticks."""

    __slots__ = ("run",)

    def __setitem__(self, i, line):
        list.__setitem__(self, i, line)
        self.run.tick(line)


class _Sink:
    """The replay's event sink: prints and warnings vanish (the Run observes backward/grad calls)."""

    session = None

    def __init__(self, run):
        self.run = run

    def print(self, text, args, stream="stdout"):
        pass

    def result(self, value):
        pass

    def warning(self, *args, **kwargs):
        pass


def _silent_print(*args, **kwargs):
    return None


class Run(Observer):
    """One float64 replay of the script (see the module docstring).

    on_call(call): plan the calls (those numbered in `wanted`, or all); it receives each Call with
    its tensors' analytic gradients, and may keep what it needs of them. `directions`: call ->
    {key: Along} whose analytic values along them the plan records in call.node_dots (keys:
    ("tensor", k) for checked tensors, a creation index for a node's output). `fork`: probes to
    answer by forking. `single`: the one probe this replay answers (from the start, raising Stop)."""

    def __init__(self, source, filename, seed, *, on_call=None, wanted=None, fork=(), single=None,
                 directions=None, max_ticks=None):
        self.source, self.filename, self.seed = source, filename, seed
        self.on_call = on_call
        self.wanted = wanted
        self.calls: list = []           # planned Calls
        self.count = 0                  # tensors made so far
        self.ticks = 0                  # statement boundaries so far
        self.ncalls = 0                 # backward/grad calls so far
        self.error = None               # the replay's own ScriptError, if it failed
        self.session = None
        # the timeline (planning): per tick, a node number taken at it, the tensor count, the line
        self.tick_seqs: list = []
        self.tick_counts: list = []
        self.tick_lines: list = []
        self.ids: dict = {}             # id(tensor) -> creation index (right for every live tensor)
        self.node_out: dict = {}        # id(node) -> (weakref(node), creation index, shape) of its output
        self.pending = None             # the op result whose node is about to be attached
        self.pending_c = 0
        self.captured = None            # AccumulateGrad node -> gradient, while a backward() is planned
        self.directions = directions or {}
        self.node_dots = None           # key -> direction, then analytic value, for the next call
        self.last_grads = None          # (outputs, gradients) of the latest backward._make_grads
        # probing
        self.fork_tick: dict = {}
        self.fork_new: dict = {}
        self.apply_tick: dict = {}
        self.apply_new: dict = {}
        self.refs: dict = {}            # creation index -> weakref(tensor), for tick moments
        self.want_refs: set = set()
        self.stop = None                # the call at which this process answers (a probe's)
        self.fd = None                  # a forked child's pipe to its parent
        self.seeds = itertools.count(0x5EED)
        # a probe's replay gives up after this many statement boundaries: a perturbed `while` may not end
        self.max_ticks = max_ticks
        for probe in fork:
            point = probe.actions[0][1]
            table = self.fork_tick if point[0] == "tick" else self.fork_new
            table.setdefault(point[1], []).append(probe)
            self.want_refs.update(a[2] for a in probe.actions if a[1][0] == "tick")
        if single is not None:
            self._take(single)

    @property
    def planning(self) -> bool:
        return self.on_call is not None

    # ----------------------------------------------------------------------------- running
    def execute(self) -> None:
        """Run the replay. A probe's replay ends with its answer (Stop, or the child's exit)."""
        try:
            with session(self.seed, _Sink(self), self, float64=self) as replayed:
                replayed.builtins["print"] = _silent_print
                ticker = _Ticker([0])
                ticker.run = self
                replayed.where = ticker
                self.session = replayed
                try:
                    replayed.run_source(self.source, self.filename)
                except deadline.TimedOut:
                    raise                   # --timeout: the check stops, as the script would have
                except ScriptError as e:
                    self.error = e if e.exit_status else None       # (sys.exit(0) ends a run that succeeded)
        except Stop:
            raise
        except BaseException as e:
            if self.fd is None:
                raise
            self._answer(f"the replay stopped: {type(e).__name__}")
        if self.stop is not None:
            reason = f"the replay failed ({self.error.headline()})" if self.error else "the replay ended"
            self._answer(f"{reason} before reaching call {self.stop}")

    def _answer(self, value) -> None:
        """A probe's answer: from a forked child, down the pipe (then the child ends); else by Stop."""
        if self.fd is None:
            raise Stop(value)
        try:
            os.write(self.fd, repr(value).encode() if isinstance(value, float) else b"!" + value.encode())
        finally:
            os._exit(0)

    # ------------------------------------------------------------------------------- hooks
    def tensor_made(self, t, a: np.ndarray) -> np.ndarray:
        """Tensor.__init__ during the replay, before `t` takes `a`: upcast, count, perturb, remember;
        returns the array `t` takes."""
        c = self.count
        self.count = c + 1
        if a.dtype == _F32:
            a = a.astype(_F64)
        elif a.dtype == _C64:           # complex64 is replayed as complex128, as float32 as float64
            a = a.astype(_C128)
        if self.pending is not None:
            self._associate()
        if self.fork_new:
            probes = self.fork_new.pop(c, None)
            if probes is not None:
                self._spawn(probes)
        if self.apply_new:
            actions = self.apply_new.pop(c, None)
            if actions is not None:
                a = np.array(a, copy=True)
                for flat, delta in actions:
                    _perturb(a, flat, delta)
        if self.on_call is not None:
            self.ids[id(t)] = c
        if c in self.want_refs:
            self.refs[c] = weakref.ref(t)
        return a

    def next_seed(self) -> int:
        """torch.seed() during the replay."""
        return next(self.seeds)

    def tick(self, line) -> None:
        i = self.ticks
        self.ticks = i + 1
        if self.stop is not None and self.max_ticks is not None and i > self.max_ticks:
            self._answer("the replay ran on far longer than the script did")
        if self.on_call is not None:
            if self.pending is not None:
                self._associate()
            self.tick_seqs.append(autograd._next_seq())   # numbers only order nodes: taking one changes nothing
            self.tick_counts.append(self.count)
            self.tick_lines.append(line)
        if self.fork_tick:
            probes = self.fork_tick.pop(i, None)
            if probes is not None:
                self._spawn(probes)
        if self.apply_tick:
            for c, flat, delta in self.apply_tick.pop(i, ()):
                ref = self.refs.get(c)
                t = ref() if ref is not None else None
                if t is not None:
                    if not t._a.flags.writeable:
                        t._a = t._a.copy()
                    _perturb(t._a, flat, delta)

    def op(self, op, t, inputs) -> None:
        if self.on_call is None:
            return
        if self.pending is not None:
            self._associate()
        self.pending = t
        # recording made `t` just before calling the observer; a custom Function's output may be older
        self.pending_c = self.ids.get(id(t), self.count - 1)

    def node(self, node, g, grads_in) -> None:
        if g is None or self.on_call is None:
            return
        if grads_in is None and self.captured is not None:
            self.captured[node] = np.array(g._a if g.__class__ is Tensor else g, dtype=_F64)
        dots = self.node_dots
        if dots is not None:
            c = self._node_c(node)
            v = dots.get(c) if c is not None else None
            if v.__class__ is Along:
                dots[c] = float((np.asarray(g._a if g.__class__ is Tensor else g, dtype=_F64) * v.array()).sum())

    def gradients_made(self, outputs, grads) -> None:
        """A backward pass is about to start (the script's, or one that torch.autograd.functional
        makes for it)."""
        self.last_grads = (outputs, grads) if grads is not None else None
        if self.directions:
            wanted = self.directions.get(self.ncalls + 1)
            self.node_dots = dict(wanted) if wanted is not None else None

    def _associate(self) -> None:
        t, self.pending = self.pending, None
        fn = t.grad_fn
        if fn is not None:
            self.node_out[id(fn)] = (weakref.ref(fn), self.pending_c, t._a.shape)

    def _node_c(self, node):
        entry = self.node_out.get(id(node))
        return entry[1] if entry is not None and entry[0]() is node else None

    # ------------------------------------------------------------------------------- calls
    def script_backward(self, outputs, inputs, retain_graph, create_graph):
        return self.call("backward", outputs, inputs, None)

    def script_grad(self, outputs, inputs, retain_graph, create_graph, result) -> None:
        self.call("grad", outputs, inputs, result)

    def call(self, kind, outputs, inputs, result):
        n = self.ncalls = self.ncalls + 1
        if n == self.stop:
            self._answer(_root_value(outputs, self.last_grads))
        if self.on_call is None or (self.wanted is not None and n not in self.wanted):
            return None
        if self.pending is not None:
            self._associate()
        call = Call(n, kind, self.session.where[0])
        grads = self.last_grads
        if kind == "grad":
            self._plan(call, outputs, grads, list(zip(inputs, result)))
            return None
        self.captured = {}

        def done():
            captured, self.captured = self.captured, None
            pairs = [(node.variable, g) for node, g in captured.items() if node.variable is not None]
            self._plan(call, outputs, grads, pairs)
        return done

    def _plan(self, call, outputs, grads, pairs) -> None:
        """Fill in `call` from the tensors it differentiated and their gradients, then hand it on."""
        self.calls.append(call)
        dots, self.node_dots = self.node_dots, None
        if grads is None or grads[0] is not outputs:
            call.note = "batched gradients (is_grads_batched=True) are not checked"
            return
        if any(o.__class__ is Tensor and o._a.__class__ is not np.ndarray for o in outputs):
            call.note = "meta tensors have no values to differentiate numerically"
            return
        roots = [autograd.shown(r) for r in (autograd.edge(o) for o in outputs if o.__class__ is Tensor)
                 if r is not None]
        reach = autograd.reachable(roots)
        first_use = {}                  # a leaf's AccumulateGrad -> number of the first node reading it
        for node in reach:
            for child in autograd.shown_inputs(node):
                if child.__class__ is autograd.AccumulateGrad:
                    seen = first_use.get(child)
                    if seen is None or node.seq < seen:
                        first_use[child] = node.seq
        names = {}
        for name, v in self.session.globals.items():
            if v.__class__ is Tensor:
                names.setdefault(id(v), name)
        checked = []
        for i, (t, g) in enumerate(pairs):
            c = self.ids.get(id(t))
            if c is None:
                continue
            shape = t._a.shape
            if g is None:
                analytic = np.zeros(shape)
            else:
                g = g._a if g.__class__ is Tensor else g
                # (a complex leaf: the real part, dL/dx of z = x + iy, which perturbing its real part measures)
                analytic = np.array(np.broadcast_to(g, shape).real, dtype=_F64)
            point = self._moment(t, c, first_use)
            name = names.get(id(t))
            if name is None:
                made = f" (made on line {self.made_on(c)})" if self.made_on(c) else ""
                name = (f"inputs[{i}]" if call.kind == "grad" else "a leaf") + made
            checked.append(Checked(name, shape, c, point, moment_key(point, self.tick_counts), analytic))
        checked.sort(key=lambda x: x.c)
        call.tensors = checked
        if not checked:
            call.note = "no tensor received a gradient"
            return
        call.graph = self._graph(roots, reach, checked)
        if dots is not None:
            for k, x in enumerate(checked):
                v = dots.get(("tensor", k))
                if v.__class__ is Along:
                    dots[("tensor", k)] = float((x.analytic * v.array()).sum())
            call.node_dots = {key: v for key, v in dots.items() if v.__class__ is float}
        self.on_call(call)
        for x in checked:
            x.analytic = None

    def made_on(self, c) -> int:
        """The line running when tensor `c` was made (0 when unknown)."""
        i = bisect_right(self.tick_counts, c) - 1
        return self.tick_lines[i] if i >= 0 else 0

    def _moment(self, t, c, first_use):
        """When to perturb tensor `t` (creation index c): a non-leaf as it is made, a leaf at the last
        statement boundary before the first node of the call's graph that reads it (when the leaf
        was made after that boundary, as it is made)."""
        if t.grad_fn is not None or not self.tick_seqs:
            return ("new", c)
        acc = autograd.existing_accumulator(t)
        first = first_use.get(acc) if acc is not None else None
        i = len(self.tick_seqs) - 1 if first is None else bisect_right(self.tick_seqs, first) - 1
        if i < 0 or c >= self.tick_counts[i]:
            return ("new", c)
        return ("tick", i)

    def _graph(self, roots, reach, checked) -> list:
        """The call's nodes nearest the root first (at most MAX_NODES), for locating a mismatch."""
        indegree = dict.fromkeys(reach, 0)
        for node in reach:
            for child in autograd.shown_inputs(node):
                if child is not None:
                    indegree[child] += 1
        ready = [n for n in dict.fromkeys(roots) if indegree[n] == 0]
        order = []
        while ready and len(order) < MAX_NODES:
            node = ready.pop(0)
            order.append(node)
            for child in autograd.shown_inputs(node):
                if child is not None:
                    indegree[child] -= 1
                    if indegree[child] == 0:
                        ready.append(child)
        index = {node: i for i, node in enumerate(order)}
        by_c = {x.c: k for k, x in enumerate(checked)}
        graph = []
        for node in order:
            if node.__class__ is autograd.AccumulateGrad:
                t = node.variable
                c = self.ids.get(id(t)) if t is not None else None
                entry = GraphNode("AccumulateGrad", self.made_on(c) if c is not None else 0, c,
                                  t._a.shape if t is not None else (), [], by_c.get(c))
            else:
                out = self.node_out.get(id(node))
                c, shape = (out[1], out[2]) if out is not None and out[0]() is node else (None, None)
                i = bisect_right(self.tick_seqs, node.seq) - 1
                entry = GraphNode(node.op.node, self.tick_lines[i] if i >= 0 else 0, c, shape,
                                  [index.get(child, -1) for child in autograd.shown_inputs(node) if child is not None],
                                  by_c.get(c) if c is not None else None)
            graph.append(entry)
        parents = [[] for _ in graph]
        for i, entry in enumerate(graph):
            for j in entry.inputs:
                if j >= 0:
                    parents[j].append(i)
        stack = [i for i, entry in enumerate(graph) if entry.checked is not None]
        while stack:
            i = stack.pop()
            if not graph[i].relevant:
                graph[i].relevant = True
                stack.extend(parents[i])
        return graph

    # ------------------------------------------------------------------------------ forking
    def _take(self, probe) -> None:
        """Become the replay of `probe`: apply its actions at their moments, answer at its call."""
        self.fork_tick, self.fork_new = {}, {}
        self.apply_tick, self.apply_new = {}, {}
        for key, point, c, flat, delta in probe.actions:
            if point[0] == "tick":
                self.apply_tick.setdefault(point[1], []).append((c, flat, delta))
                self.want_refs.add(c)
            else:
                self.apply_new.setdefault(point[1], []).append((flat, delta))
        self.stop = probe.call
        self.on_call = None
        self.directions = {}
        self.node_dots = None
        self.captured = None

    def _spawn(self, probes) -> None:
        """Answer `probes` in children forked here, PARALLEL at a time. A child returns from here as
        the replay of its probe and goes on with the script."""
        queue = list(probes)
        running = {}                    # read end -> (pid, probe, started, chunks)
        parent = os.getpid()
        try:
            while queue or running:
                while queue and len(running) < PARALLEL:
                    probe = queue.pop(0)
                    r, w = os.pipe()
                    pid = os.fork()
                    if pid == 0:
                        deadline.end_with_parent(parent)     # however the parent ends, the children end with it
                        os.close(r)
                        for other in running:
                            os.close(other)
                        running = {}
                        self.fd = w
                        self._take(probe)
                        return
                    os.close(w)
                    running[r] = (pid, probe, time.monotonic(), [])
                ready, _, _ = select.select(list(running), [], [], 1.0)
                for r in ready:
                    chunk = os.read(r, 65536)
                    if chunk:
                        running[r][3].append(chunk)
                        continue
                    pid, probe, _, chunks = running.pop(r)
                    os.close(r)
                    os.waitpid(pid, 0)
                    probe.result = _parse(b"".join(chunks))
                now = time.monotonic()
                for r, (pid, probe, started, _) in list(running.items()):
                    if now - started > PROBE_TIMEOUT:
                        _end(pid, r)
                        del running[r]
                        probe.result = f"the replay took more than {PROBE_TIMEOUT:.0f} s"
        finally:
            # stopped early (--timeout, Ctrl-C): the children still running are of no use now
            for r, (pid, *_) in running.items():
                _end(pid, r)


def _end(pid: int, r: int) -> None:
    """Kill a probe's child and close its pipe."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
    os.close(r)


def _parse(data: bytes):
    if not data:
        return "the replay ended without an answer"
    if data.startswith(b"!"):
        return data[1:].decode(errors="replace")
    return float(data.decode())


def _perturb(a: np.ndarray, flat, delta) -> None:
    if delta.__class__ is Along:
        delta = delta.array()
    if flat is None:
        a += delta
    else:
        a[np.unravel_index(flat, a.shape)] += delta


def _root_value(outputs, last) -> float:
    """sum(root * gradient) over the call's outputs: the scalar whose derivative the call computes."""
    if last is None or last[0] is not outputs:
        return float("nan")
    total = 0.0
    for out, g in zip(outputs, last[1]):
        if g is not None:
            total += float((np.asarray(out._a, dtype=_F64) * np.asarray(g._a, dtype=_F64)).sum())
    return total


def answer(source, filename, seed, probes, fork: bool, max_ticks=None, **plan) -> Run:
    """Answer every probe (probe.result), by forking or by one replay each; returns the replay that
    forked them, or, without forking, a replay of its own when `plan` asks for planning."""
    if fork:
        run = Run(source, filename, seed, fork=probes, max_ticks=max_ticks, **plan)
        run.execute()
        return run
    for probe in probes:
        try:
            Run(source, filename, seed, single=probe, max_ticks=max_ticks).execute()
        except Stop as stop:
            probe.result = stop.value
    run = Run(source, filename, seed, **plan)
    if plan:
        run.execute()
    return run
