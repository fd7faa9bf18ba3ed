"""`--check-grads`: every backward() and autograd.grad() call of a script checked against central
finite differences in float64, reporting the worst element and the node where the gradients part.

The engine keeps no forward functions, so numeric derivatives come from replaying the script
(gradcli/diagnostics/replay.py: silent float64 runs on the same seed), in up to three replays:
  1. plan: each call's differentiated tensors (the leaves that received a gradient, or
     autograd.grad's inputs), their analytic gradients, and the moment to perturb each one: a
     non-leaf as it is made, a leaf just before the first op of the call's graph that reads it, so
     an SGD loop's in-place updates before that op are not differentiated;
  2. probe: for each element checked, the call's root value, sum(root * gradient), with the element
     moved by +eps and by -eps (a process forked at the moment to perturb, or one replay from the
     start each when replays are short), and the same along one random direction through every
     element when only a sample of them is checked one by one;
  3. locate, for calls that mismatched: the same along a random direction for the output of every
     node on the call's graph with a path to a checked tensor. The node reported is the first one,
     walking from the root, whose own incoming gradient agrees with finite differences while the
     gradient it passes to one of its inputs does not: the node whose backward formula is wrong.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from gradcli.diagnostics import replay
from gradcli.diagnostics.replay import Along, direction

# PyTorch's gradcheck defaults: |analytic - numeric| <= ATOL + RTOL * |numeric|, element by element.
EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3
# Elements checked one by one per call: all up to MAX_ELEMENTS, else a sample and a random direction.
# A script making many calls shares BUDGET elements among them, MIN_ELEMENTS at least per call.
MAX_ELEMENTS, MIN_ELEMENTS, BUDGET = 32, 2, 1024
# Mismatching calls located per source line (a loop repeats the same mistake).
LOCATE_PER_LINE = 3
# Probes fork at their moment (where os.fork exists) once a replay takes longer than this; shorter
# replays are cheaper to run again from the start than a fork is (about 4 ms here).
FORK_ABOVE = 0.01
USE_FORK = hasattr(os, "fork")

# The exit status when a check fails (README, "Exit status").
EXIT_GRADS_MISMATCH = 3


# ------------------------------------------------------------------------------------- sampling

def _sample(call) -> None:
    """Keep what the checks need of a planned call's analytic gradients: up to MAX_ELEMENTS elements
    in the order they are given up when the budget is shared (one of each tensor first, then the
    rest at random), their values, and the value along the call's random direction."""
    sizes = [int(np.prod(x.shape)) for x in call.tensors]
    call.total = total = sum(sizes)
    pick = np.random.default_rng(call.index)
    chosen = {}
    for k, n in enumerate(sizes):
        if n and len(chosen) < MAX_ELEMENTS:
            chosen[(k, int(pick.integers(n)))] = None
    starts = np.cumsum([0] + sizes)
    if total <= 4 * MAX_ELEMENTS:
        rest = pick.permutation(total)
    else:
        rest = pick.integers(total, size=4 * MAX_ELEMENTS)
    for flat in rest:
        if len(chosen) >= min(MAX_ELEMENTS, total):
            break
        k = int(np.searchsorted(starts, flat, side="right") - 1)
        chosen.setdefault((k, int(flat) - int(starts[k])), None)
    call.sample = list(chosen)
    call.analytic = [float(call.tensors[k].analytic.reshape(-1)[i]) for k, i in call.sample]
    call.direction = sum(float((x.analytic * direction(call.index, x.c, x.shape)).sum()) for x in call.tensors)
    call.sampled = False
    call.numeric = call.direction_numeric = None
    call.failures = []
    call.culprits = None
    call.unlocated = None


def _share_budget(calls) -> None:
    """Trim each call's sample to its share of BUDGET; a trimmed call is also checked along its direction."""
    share = max(MIN_ELEMENTS, min(MAX_ELEMENTS, BUDGET // max(1, len(calls))))
    for call in calls:
        if call.total > share:
            call.sample = call.sample[:share]
            call.analytic = call.analytic[:share]
            call.sampled = True


def _probes(call) -> list:
    probes = []
    for k, flat in call.sample:
        x = call.tensors[k]
        for sign in (1.0, -1.0):
            probes.append(replay.Probe(call.index, [(x.key, x.point, x.c, flat, sign * EPS)]))
    if call.sampled:
        for sign in (1.0, -1.0):
            probes.append(replay.Probe(call.index, [(x.key, x.point, x.c, None,
                                                     Along(call.index, x.c, x.shape, 0, sign * EPS))
                                                    for x in call.tensors]))
    return probes


def _numeric(plus, minus):
    """The central difference, or the reason one of the two replays gave no value."""
    if isinstance(plus, str) or isinstance(minus, str):
        return plus if isinstance(plus, str) else minus
    return (plus - minus) / (2 * EPS)


def _agrees(analytic: float, numeric: float) -> bool:
    return abs(analytic - numeric) <= ATOL + RTOL * abs(numeric)


# ------------------------------------------------------------------------------------- locating

def _locate(source, filename, seed, calls, fork: bool, limit: int) -> None:
    """Check the relevant nodes of each call's graph along random directions; set their status."""
    directions = {}
    probes = []
    for call in calls:
        wanted = {}
        for entry in call.graph:
            if not entry.relevant:
                continue
            if entry.checked is not None:
                x = call.tensors[entry.checked]
                key, target, shape = ("tensor", entry.checked), (x.key, x.point, x.c), x.shape
            elif entry.c is not None and entry.shape is not None:
                key, target, shape = entry.c, ((entry.c, 1, 0), ("new", entry.c), entry.c), entry.shape
            else:
                continue
            wanted[key] = Along(call.index, target[2], shape, 1)
            entry.values = (key, [replay.Probe(call.index, [(*target, None, Along(call.index, target[2], shape, 1,
                                                                                  sign * EPS))])
                                  for sign in (1.0, -1.0)])
            probes.extend(entry.values[1])
        directions[call.index] = wanted
    run = replay.answer(source, filename, seed, probes, fork, limit, on_call=lambda call: None,
                        wanted=set(directions), directions=directions)
    again = {c.index: c for c in run.calls}
    for call in calls:
        replayed = again.get(call.index)
        dots = (replayed.node_dots if replayed is not None else None) or {}
        fed = {j for entry in call.graph for j in entry.inputs}
        for i, entry in enumerate(call.graph):
            if i not in fed:
                entry.status = "ok"             # a root: its incoming gradient is the call's own
            if entry.values is None:
                continue
            key, (plus, minus) = entry.values
            numeric = _numeric(plus.result, minus.result)
            if isinstance(numeric, str):
                entry.values = None
                continue
            entry.values = (dots.get(key, 0.0), numeric)    # no value: the backward pass never reached it
            if i in fed:
                entry.status = "ok" if _agrees(*entry.values) else "bad"


def _culprits(call) -> list:
    """The nodes whose incoming gradient agrees with finite differences while the gradient they pass
    on does not: the nodes feeding the first disagreeing gradient from the root, when all of them agree."""
    graph = call.graph
    for i, entry in enumerate(graph):
        if entry.status != "bad":
            continue
        feeding = [e for e in graph if i in e.inputs]
        if feeding and all(e.status == "ok" for e in feeding):
            return feeding
    return []


# ------------------------------------------------------------------------------------ reporting

def _number(x: float) -> str:
    text = f"{x:.6g}"
    return text if any(ch in text for ch in ".einf") else text + ".0"


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


class _Report:
    """Writes one block per call (a line, and a second line for a mismatch) to `out`."""

    def __init__(self, filename, source, out):
        self.filename = filename
        self.lines = source.splitlines()
        self.out = out

    def write(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _text(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def _node(self, call, entry) -> str:
        """`MulBackward0 from line 4: z = y * y * 3`, saying which one when the line made several."""
        twins = sorted((e.c for e in call.graph if e.name == entry.name and e.line == entry.line
                        and e.c is not None), key=int)
        which = f", the {_ordinal(twins.index(entry.c) + 1)} of {len(twins)} made there" \
            if len(twins) > 1 and entry.c in twins else ""
        text = self._text(entry.line)
        where = f" from line {entry.line}{which}" if entry.line else ""
        return f"{entry.name}{where}" + (f": {text}" if text else "")

    def call(self, call, label: str) -> bool:
        """The block for one call; returns False when it mismatched."""
        head = f"{self.filename}:{call.line}: {label}:"
        if call.note:
            self.write(f"{head} not checked: {call.note}")
            return True
        if call.failures:
            self.write(f"{head} not checked: {call.failures[0]}")
            return True
        kind = ("leaf", "leaves") if call.kind == "backward" else ("input", "inputs")
        tensors = _count(len(call.tensors), *kind)
        analytic, numeric = np.array(call.analytic), np.array(call.numeric)
        errors = np.abs(analytic - numeric)
        errors[np.isnan(errors)] = np.inf
        allowed = ATOL + RTOL * np.abs(numeric)
        bad = ~(errors <= allowed)
        worst_error = float(errors.max()) if errors.size else 0.0
        direction_bad = call.sampled and not _agrees(call.direction, call.direction_numeric)
        if not call.sampled:
            checked = f"{_count(len(call.sample), 'element', 'elements')} checked"
        else:
            checked = (f"{len(call.sample):,} of {call.total:,} elements checked (sampled) "
                       "and all along a random direction")
        if not bad.any() and not direction_bad:
            self.write(f"{head} ok, {tensors}, {checked} (max abs error {worst_error:.1e})")
            return True
        if call.culprits:
            node = f" (node {' or '.join(self._node(call, e) for e in call.culprits)})"
        else:
            node = f" (node not located: {call.unlocated})" if call.unlocated else " (node not located)"
        if bad.any():
            w = int(np.argmax(np.where(bad, errors / allowed, -1.0)))
            k, flat = call.sample[w]
            x = call.tensors[k]
            element = x.name if not x.shape else \
                f"{x.name}[{', '.join(str(int(i)) for i in np.unravel_index(flat, x.shape))}]"
            self.write(f"{head} MISMATCH in {element}: analytic {_number(analytic[w])}, "
                       f"numeric {_number(numeric[w])}{node}")
            of = f" (sampled from {call.total:,})" if call.sampled else ""
            self.write(f"    {int(bad.sum()):,} of {len(call.sample):,} elements checked disagree{of}, in {tensors}; "
                       f"max abs error {worst_error:.2g}, allowed {ATOL:g} + {RTOL:g} * |numeric|")
        else:
            self.write(f"{head} MISMATCH along a random direction through all {call.total:,} elements: "
                       f"analytic {_number(call.direction)}, numeric {_number(call.direction_numeric)}{node}")
            self.write(f"    the {len(call.sample):,} elements checked one by one agree ({tensors})")
        return False


# -------------------------------------------------------------------------------------- the run

def check_script(source: str, filename: str, seed, out=None, progress=None) -> int:
    """Check every backward() / autograd.grad() call of a script that has just run with random seed
    `seed` (torch's seed, or the session's pair of seeds, Session.seeds). Writes one block per call to `out` (stderr by default) and returns 0, or
    EXIT_GRADS_MISMATCH when a check failed. `progress` (a gradcli.commands.progress.Progress) is told each step."""
    step = progress.step if progress is not None else lambda text: None
    out = out if out is not None else sys.stderr
    sys.stdout.flush()
    report = _Report(filename, source, out)
    started = time.perf_counter()
    plan = replay.Run(source, filename, seed, on_call=lambda call: _sample(call))
    plan.execute()
    fork = USE_FORK and time.perf_counter() - started > FORK_ABOVE
    calls = plan.calls
    if plan.error is not None:
        report.write(f"{filename}: --check-grads: the float64 replay failed, so only the calls before it "
                     f"failed are checked: {plan.error.headline()}")
    if not calls:
        report.write(f"{filename}: --check-grads: the script made no backward() or autograd.grad() call")
        return 0
    checked = [c for c in calls if c.note is None]
    _share_budget(checked)
    probes = {c.index: _probes(c) for c in checked}
    limit = 2 * plan.ticks + 10_000
    step(f"{_count(len(checked), 'call', 'calls')}, "
         f"{_count(sum(map(len, probes.values())), 'finite difference', 'finite differences')}")
    replay.answer(source, filename, seed, [p for ps in probes.values() for p in ps], fork, limit)
    mismatched = []
    for call in checked:
        results = [p.result for p in probes[call.index]]
        call.failures = [r for r in results if isinstance(r, str)]
        if call.failures:
            continue
        pairs = list(zip(results[0::2], results[1::2]))
        if call.sampled:
            call.direction_numeric = _numeric(*pairs.pop())
        call.numeric = [_numeric(p, m) for p, m in pairs]
        if not all(map(_agrees, call.analytic, call.numeric)) or \
                (call.sampled and not _agrees(call.direction, call.direction_numeric)):
            mismatched.append(call)
    per_line: dict = {}
    located = []
    for call in mismatched:
        per_line[call.line] = per_line.get(call.line, 0) + 1
        if per_line[call.line] <= LOCATE_PER_LINE:
            located.append(call)
        else:
            call.unlocated = f"only the first {LOCATE_PER_LINE} mismatching calls of a line are located"
    if located:
        step(f"locating {_count(len(located), 'mismatch', 'mismatches')}")
        _locate(source, filename, seed, located, fork, limit)
        for call in located:
            call.culprits = _culprits(call)
            if not call.culprits:
                call.unlocated = "no node was found whose incoming gradient agrees while what it passes on does not"
    return _write_all(report, calls, filename)


def _write_all(report, calls, filename) -> int:
    totals: dict = {}
    for call in calls:
        totals[call.line] = totals.get(call.line, 0) + 1
    seen: dict = {}
    failed = unchecked = 0
    for call in calls:
        seen[call.line] = seen.get(call.line, 0) + 1
        label = "backward()" if call.kind == "backward" else "autograd.grad()"
        if totals[call.line] > 1:
            label += f", call {seen[call.line]} of {totals[call.line]}"
        if not report.call(call, label):
            failed += 1
        elif call.note or call.failures:
            unchecked += 1
    if len(calls) > 1 or failed or unchecked:
        summary = f"{filename}: --check-grads: {_count(len(calls), 'call', 'calls')}"
        if failed:
            summary += f", {failed:,} MISMATCH"
        if unchecked:
            summary += f", {unchecked:,} not checked"
        report.write(summary + (", all ok" if not failed and not unchecked else ""))
    return EXIT_GRADS_MISMATCH if failed else 0
