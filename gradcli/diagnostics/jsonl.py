"""`--format jsonl`: what a session reports (prints, backward calls, gradients, warnings, errors) as JSON Lines.

A JsonLines object is the event sink a Session reports to (`Session(events=...)`): the print
builtin, the session's warnings and the backward / autograd.grad entry points call it, and the front
ends (cli, REPL) hand it errors and the end of each run. It writes one JSON object per event and
flushes it, so a reader sees each event as it happens. docs/jsonl.md is the schema.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np

from gradcli.engine.autograd import AccumulateGrad, Node, edge, reachable
from gradcli.engine.observe import Observer
from gradcli.engine.tensor import Size, Tensor

# Nesting of lists and tuples written as JSON arrays; deeper ones (and a list holding itself) are
# written as {"type": "list", "repr": ...} so encoding never exhausts the stack.
MAX_NESTING = 100
# json.dumps(event, allow_nan=False, separators=(",", ":")) with one encoder for all events (dumps makes one a call)
_encode = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode


class JsonLines(Observer):
    """Writes a session's events to `out` (a text stream), one JSON object per line."""

    def __init__(self, out):
        self.out = out
        self.session = None     # set by Session.set_events: where events happen, and the names of tensors

    def emit(self, event: dict) -> None:
        # allow_nan=False: a NaN or infinity that escaped value() must fail here, not become a token
        # (NaN, Infinity) that JSON parsers reject
        self.out.write(_encode(event) + "\n")
        self.out.flush()

    def _where(self) -> tuple:
        session = self.session
        return (session.filename, session.where[0] or None) if session is not None else (None, None)

    # ----------------------------------------------------------------- reported while a script runs
    def print(self, text: str, args: tuple, stream: str = "stdout") -> None:
        """A call of the print builtin (or a write to sys.stdout): `text` is exactly what text mode writes, `args`
        its arguments; to sys.stderr, the event says `"stream": "stderr"`."""
        file, line = self._where()
        event = {"event": "print", "file": file, "line": line, "text": text, "values": [value(a) for a in args]}
        if stream != "stdout":
            event["stream"] = stream
        self.emit(event)

    def result(self, v) -> None:
        """The REPL's display of an expression statement's value."""
        file, line = self._where()
        self.emit({"event": "result", "file": file, "line": line, "text": repr(v) + "\n", "value": value(v)})

    def warning(self, line: int, col: int, category: str, message: str, why: str | None = None) -> None:
        file = self.session.filename if self.session is not None else None
        event = {"event": "warning", "file": file, "line": line or None, "col": col or None,
                 "category": category, "message": message}
        if why:
            event["why"] = why          # gradcli.diagnostics.why: why it happened, when it can tell
        self.emit(event)

    def script_backward(self, outputs: tuple, inputs, retain_graph: bool, create_graph: bool):
        """The script's backward() is about to sweep: note the `.grad` of every tensor it may write, and
        return the function it calls once the sweep succeeded (it writes the events)."""
        roots = [r for r in (edge(t) for t in outputs) if r is not None]
        nodes = reachable(roots)
        watched = _grad_holders(nodes, inputs)
        before = [(t, t.grad, _version(t.grad)) for t in watched]

        def done() -> None:
            self._backward("backward", roots, len(nodes), retain_graph, create_graph)
            file, line = self._where()
            for t, grad, version in before:
                if t.grad is not grad or _version(t.grad) != version:
                    self.emit({"event": "grad", "file": file, "line": line, "var": self._name(t),
                               "value": value(t.grad)})
        return done

    def script_grad(self, outputs: tuple, inputs: tuple, retain_graph: bool, create_graph: bool, result) -> None:
        """The script's autograd.grad() returned `result`, one gradient (or None) per input."""
        roots = [r for r in (edge(t) for t in outputs) if r is not None]
        self._backward("autograd.grad", roots, len(reachable(roots)), retain_graph, create_graph)
        file, line = self._where()
        for i, (t, g) in enumerate(zip(inputs, result)):
            self.emit({"event": "grad", "file": file, "line": line, "var": self._name(t), "index": i,
                       "value": value(g)})

    def _backward(self, call, roots, nodes, retain_graph, create_graph) -> None:
        file, line = self._where()
        self.emit({"event": "backward", "file": file, "line": line, "call": call,
                   "root": roots[0].op.node if roots else None, "nodes": nodes,
                   "retain_graph": bool(retain_graph), "create_graph": bool(create_graph)})

    def _name(self, t) -> str | None:
        """The first name (in order of first assignment) the session's globals bind to `t`."""
        if self.session is not None:
            for name, v in self.session.globals.items():
                if v is t:
                    return name
        return None

    # ------------------------------------------------------------------------ from the front ends
    def error(self, err) -> None:
        """A ScriptError (syntax or runtime), or an error met before the script ran. A syntax error that
        stands for several problems writes one event for each, in source order; the last says how many
        more there were than are listed (`more`), if any."""
        errors = [err, *getattr(err, "others", ())]
        for e in errors:
            event = {"event": "error", "file": e.filename, "line": e.line or None, "col": e.col or None,
                     "type": e.kind, "message": e.message}
            if e is errors[-1] and getattr(err, "omitted", 0):
                event["more"] = err.omitted
            why = getattr(e, "why", None)
            if why:
                event["why"] = why          # gradcli.diagnostics.why: why it happened, when it can tell
            self.emit(event)

    def message(self, text: str) -> None:
        """Text a REPL command (%help, %vars, %time...) shows."""
        self.emit({"event": "message", "text": text})

    def end(self, ok: bool, started: float, file: str | None = None) -> None:
        """The run that began at time.perf_counter() == `started` is over."""
        self.emit({"event": "end", "file": file, "ok": ok, "seconds": round(time.perf_counter() - started, 6)})

    # ---------------------------------------------------- `gradcli grad | jacobian | hessian` (oneshot)
    def input(self, var: str, differentiated: bool, v) -> None:
        """An input given on the command line, as EXPR sees it, and whether it is differentiated."""
        self.emit({"event": "input", "var": var, "differentiated": differentiated, "value": value(v)})

    def derivative(self, event: str, fields: dict, v) -> None:
        """One result: EXPR's value ("value"), a gradient ("grad"), or an element of a Jacobian,
        Hessian or Hessian-vector product ("jacobian", "hessian", "hvp"), with the fields saying
        which (docs/jsonl.md)."""
        self.emit({"event": event, **fields, "value": value(v)})


# ------------------------------------------------------------------------------------ the graph

def _grad_holders(nodes: dict, inputs) -> list:
    """The tensors whose `.grad` a backward over `nodes` may write: the leaves, the tensors that
    retain their gradient, and the `inputs=` tensors (backward makes non-leaf ones retain it)."""
    found: dict = {}
    for node in nodes:
        if node.__class__ is AccumulateGrad:
            t = node.variable
        elif node.retained is not None:
            t = node.retained()
        else:
            continue
        if t is not None:
            found.setdefault(id(t), t)
    for t in inputs or ():
        if t.__class__ is Tensor:           # anything else: the engine is about to refuse it
            found.setdefault(id(t), t)
    return list(found.values())


def _version(grad):
    # in-place accumulation (the second backward into a leaf) bumps the version of the same object
    return None if grad is None else grad._version[0]


# ------------------------------------------------------------------------------- typed values

def value(v, _active: set | None = None):
    """A script value as JSON data: None, booleans, numbers and strings as themselves, lists and
    tuples as arrays, tensors and grad_fn nodes as typed objects, anything else as its type and repr."""
    cls = v.__class__
    if v is None or cls is bool or cls is str or cls is int:
        return v
    if cls is float:
        return _number(v)
    if cls is complex:
        return {"type": "complex", "real": _number(v.real), "imag": _number(v.imag)}
    if cls is Tensor:
        return tensor(v)
    sparse = sys.modules.get("gradcli.engine.sparse")
    if sparse is not None and cls is sparse.SparseTensor:     # written as its dense values
        return tensor(v)
    if isinstance(v, Node):
        return grad_fn(v)
    if cls is list or cls is tuple:
        active = _active if _active is not None else set()
        if id(v) in active or len(active) >= MAX_NESTING:
            return {"type": cls.__name__, "repr": _repr(v)}
        active.add(id(v))
        try:
            return [value(x, active) for x in v]
        finally:
            active.discard(id(v))
    if isinstance(v, np.generic):
        return value(v.item(), _active)
    return {"type": _kind(v), "repr": _repr(v)}


def _number(x: float):
    if math.isfinite(x):
        return x
    return "nan" if x != x else ("inf" if x > 0 else "-inf")


def tensor(t: Tensor) -> dict:
    fn = t.grad_fn
    a = t._a
    meta = a.__class__ is not np.ndarray        # a meta tensor: no data to write
    return {"type": "tensor", "dtype": a.dtype.name, "shape": list(a.shape), "data": None if meta else data(a),
            **({"device": "meta"} if meta else {}),
            "requires_grad": bool(t.requires_grad), "grad_fn": fn.op.node if fn is not None else None}


def data(a: np.ndarray):
    """Nested lists of a tensor's elements (a bare number for a 0-d tensor). float16, bfloat16 and float32
    elements are written as the shortest decimal that reads back as the same value in that dtype
    (numpy's repr of it: 0.1, not 0.10000000149011612); float64 ones exactly. Non-finite numbers
    are the strings "nan", "inf" and "-inf". A complex element is the pair [real, imaginary], each part written
    as its float dtype's."""
    if a.dtype.kind == "c":
        return data(np.stack((a.real, a.imag), -1))
    if a.dtype.kind not in "fV":
        return a.tolist()                            # ints as ints, bools as bools
    if a.dtype.kind == "V":                          # bfloat16 (ml_dtypes): its scalars' str is that decimal
        flat = [float(str(s)) for s in a.ravel()]
    elif a.dtype.itemsize < 8:
        flat = [float(s) for s in a.ravel().astype(str).tolist()]
    else:
        flat = a.ravel().tolist()
    if not np.isfinite(a).all():
        flat = [_number(x) for x in flat]
    if a.ndim == 0:
        return flat[0]
    nested = np.empty(len(flat), dtype=object)
    nested[:] = flat
    return nested.reshape(a.shape).tolist()


def grad_fn(node: Node) -> dict:
    return {"type": "grad_fn", "name": node.op.node,
            "next": [n.op.node if n is not None else None for n, _ in node.next_functions]}


def _kind(v) -> str:
    cls = v.__class__
    if cls is Size:
        return "torch.Size"
    name = cls.__name__         # torch.return_types.max and its kin are named as PyTorch names them
    return _KINDS.get(name, name)


_KINDS = {"torch._C.Generator": "torch.Generator", "_Device": "torch.device",
          "ScriptFunction": "function", "builtin_function_or_method": "builtin_function",
          "ScriptModule": "module", "Builtin": "builtin_function"}


def _repr(v) -> str:
    try:
        return repr(v)
    except Exception as e:          # a repr gradcli cannot produce must not end the script
        return f"<{type(v).__name__}: repr failed: {type(e).__name__}>"
