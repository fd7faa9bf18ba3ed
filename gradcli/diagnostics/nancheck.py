"""`--nan-check`: stop a script at the first op or backward node that makes a nan or an inf, and name it.

While the script runs, a NanWatch observes it (gradcli.engine.observe): it looks at every op result and at every gradient a backward node passes on. The first one holding a
kind of non-finite value (nan, or an infinity) that none of its own inputs held ends the script with
`NanFound`, an error of exit status 4 that names the node and the script line that made it.
Non-finite values that enter the graph from outside it (data, or the results of ops on tensors that
do not require grad, which the engine does not record) are not reported, nor is what is computed
from them: a backward node is blamed only for a kind that neither its incoming gradient nor what its
forward pass saved held.

    s.grad:4: --nan-check: LogBackward0 produced inf in the forward pass (y = torch.log(x))
    s.grad:5: --nan-check: DivBackward0 (made by z = x / y) passed nan to the gradient of x during
              the backward pass on line 9      (one line)

Lines come from the session's line tracking (compiled in only for sessions that ask for it). A node
is matched to the line that made it through the engine's node numbering (Node.seq): each op result
the observer sees takes a number first, so a node made by that op comes after it in the numbering.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from gradcli.engine import autograd, slim
from gradcli.engine.observe import Observer
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.errors import ScriptError
from gradcli.engine.state import STATE

# The exit status of a script stopped by --nan-check (README, "Exit status").
EXIT_NAN = 4


class NanFound(ScriptError):
    """A non-finite value made by an op or a backward node, located at the line that made it."""

    exit_status = EXIT_NAN

    def __init__(self, message: str, filename: str, line: int):
        super().__init__("--nan-check", message, filename, line)

    def render(self, paint=None) -> str:
        return paint(self.headline()) if paint is not None else self.headline()


def _kinds(a) -> set:
    """The kinds of non-finite values in a float array: {"nan", "inf"}, or empty."""
    if a.dtype.kind not in "fV" or np.isfinite(a).all():
        return set()
    found = set()
    if np.isnan(a).any():
        found.add("nan")
    if np.isinf(a).any():
        found.add("inf")
    return found


def _words(kinds: set) -> str:
    return " and ".join(k for k in ("nan", "inf") if k in kinds)


class NanWatch(Observer):
    """Watches one session's script for the first nan or inf (see the module docstring)."""

    def __init__(self, session):
        self.session = session
        self._seqs: list = []       # node numbers at which the running line changed ...
        self._lines: list = []      # ... and the line from then on

    def run(self, source: str, filename: str) -> None:
        """Run the script in the session with the observers installed; raises NanFound."""
        session = self.session
        session.track_lines = True
        outer, STATE.observer = STATE.observer, self
        try:
            session.run_source(source, filename)
        finally:
            STATE.observer = outer

    # --------------------------------------------------------------------------- the observer
    def script_backward(self, outputs, inputs, retain_graph, create_graph):
        # the session's event sink (--format jsonl) still hears of the script's calls
        events = self.session.events
        return events.script_backward(outputs, inputs, retain_graph, create_graph) if events is not None else None

    def script_grad(self, outputs, inputs, retain_graph, create_graph, result) -> None:
        events = self.session.events
        if events is not None:
            events.script_grad(outputs, inputs, retain_graph, create_graph, result)

    def op(self, op, t, inputs) -> None:
        line = self.session.where[0]
        if not self._lines or self._lines[-1] != line:
            self._seqs.append(autograd._next_seq())   # numbers only order nodes: taking one changes nothing
            self._lines.append(line)
        if STATE.in_formula:
            return                  # a formula step of a create_graph backward: _backward reports it
        made = _kinds(t._a)
        if not made:
            return
        for x in inputs:
            if x.__class__ is Tensor:
                made -= _kinds(x._a)
        if made:
            raise self._found(line, f"{op.node} produced {_words(made)} in the forward pass")

    def node(self, node, g, grads_in) -> None:
        if grads_in is None:
            return
        # (g is None for a node with several outputs, whose gradients came one per output)
        had = _kinds(g._a if g.__class__ is Tensor else g) if g is not None else set()
        for value in slim.restore(node) or ():      # what the forward pass saved: non-finite there is inherited
            a = value._a if value.__class__ is Tensor else getattr(value, "a", value)
            if a.__class__ is np.ndarray:
                had |= _kinds(a)
        for child, gi in zip(node.inputs, grads_in):
            if gi is None or child is None:
                continue
            made = _kinds(gi._a if gi.__class__ is Tensor else gi) - had
            if made:
                line = self._line_of(node) or self.session.where[0]
                text = self._text(line)
                made_by = f" (made by {text})" if text else ""
                raise NanFound(f"{node.op.node}{made_by} passed {_words(made)} to {self._describe(child)} "
                               f"during the backward pass on line {self.session.where[0]}",
                               self.session.filename, line)

    # ------------------------------------------------------------------------------- wording
    def _line_of(self, node) -> int:
        i = bisect_right(self._seqs, node.seq) - 1
        return self._lines[i] if i >= 0 else 0

    def _describe(self, child) -> str:
        if child.__class__ is autograd.AccumulateGrad:
            t = child.variable
            for name, v in self.session.globals.items():
                if v is t:
                    return f"the gradient of {name}"
            return "the gradient of a leaf tensor"
        return child.op.node

    def _text(self, line: int) -> str:
        """The source of a line, without a comment."""
        lines = self.session._lines
        if not 0 < line <= len(lines):
            return ""
        text = lines[line - 1]
        if "'" not in text and '"' not in text:     # then a '#' starts a comment
            text = text.split("#", 1)[0]
        return text.strip()

    def _found(self, line: int, message: str) -> NanFound:
        text = self._text(line)
        return NanFound(f"{message} ({text})" if text else message, self.session.filename, line)


def run_watched(session, source: str, filename: str) -> None:
    """Run `source` in `session` under --nan-check; raises NanFound (a ScriptError) at the first nan or inf."""
    NanWatch(session).run(source, filename)
