"""--format jsonl: every line is JSON that matches the schema of docs/jsonl.md, print events carry
exactly the text mode's output, and backward / grad / error / end events report what happened."""

from __future__ import annotations

import io
import json
import math
import os
import re
import sys

import pytest

from conftest import ROOT, normalize, run_script

from gradcli import cli
from gradcli.diagnostics.jsonl import JsonLines
from gradcli.repl.shell import Options, Shell
from gradcli.session import Session

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

# ------------------------------------------------------------------------------ the schema, by hand

NON_FINITE = ("nan", "inf", "-inf")
DTYPES = {"float16": "float", "bfloat16": "float", "float32": "float", "float64": "float", "int8": "int", "int16": "int",
          "int32": "int", "int64": "int", "uint8": "int", "bool": "bool",
          "complex64": "complex", "complex128": "complex"}

# event name -> {field: kind}; a kind ending in "?" may be null; fields marked with a leading "~"
# are optional. Every event has exactly these fields.
EVENTS = {
    "print": {"file": "string", "line": "int?", "text": "string", "values": "values", "~stream": "string"},
    "result": {"file": "string", "line": "int?", "text": "string", "value": "value"},
    "backward": {"file": "string", "line": "int?", "call": "call", "root": "string?", "nodes": "int",
                 "retain_graph": "bool", "create_graph": "bool"},
    "grad": {"file": "string", "line": "int?", "var": "string?", "~index": "int", "value": "tensor?"},
    "warning": {"file": "string", "line": "int?", "col": "int?", "category": "string", "message": "string",
                "~why": "string"},
    "error": {"file": "string", "line": "int?", "col": "int?", "type": "string", "message": "string",
              "~why": "string"},
    "message": {"text": "string"},
    "end": {"file": "string?", "ok": "bool", "seconds": "seconds"},
}


class SchemaError(AssertionError):
    pass


def check(cond, what):
    """`what` is the message, or a function that makes it (a message showing a value costs its repr, and
    the checks run on every value of every conformance case's events)."""
    if not cond:
        raise SchemaError(what() if callable(what) else what)


def _is_int(v):
    return v.__class__ is int


def _is_number(v):
    return (v.__class__ is int or v.__class__ is float) and math.isfinite(v)


def check_field(kind: str, v, where: str):
    if kind.endswith("?"):
        if v is None:
            return
        kind = kind[:-1]
    if kind == "string":
        check(isinstance(v, str), lambda: f"{where}: expected a string, got {v!r}")
    elif kind == "int":
        check(_is_int(v) and v >= 0, lambda: f"{where}: expected a non-negative integer, got {v!r}")
    elif kind == "bool":
        check(v is True or v is False, lambda: f"{where}: expected a boolean, got {v!r}")
    elif kind == "seconds":
        check(_is_number(v) and v >= 0, lambda: f"{where}: expected seconds, got {v!r}")
    elif kind == "call":
        check(v in ("backward", "autograd.grad"), lambda: f"{where}: unknown call {v!r}")
    elif kind == "values":
        check(isinstance(v, list), f"{where}: expected a list of values")
        for i, x in enumerate(v):
            check_value(x, f"{where}[{i}]")
    elif kind == "value":
        check_value(v, where)
    elif kind == "tensor":
        check(isinstance(v, dict) and v.get("type") == "tensor", lambda: f"{where}: expected a tensor, got {v!r}")
        check_value(v, where)
    else:
        raise AssertionError(f"unknown kind {kind}")


def check_value(v, where: str):
    """A typed value: JSON scalars, arrays of values, or an object with a "type"."""
    if v is None or v is True or v is False or isinstance(v, str):
        return
    if v.__class__ in (int, float):
        check(_is_number(v), lambda: f"{where}: non-finite number {v!r}")
        return
    if isinstance(v, list):
        for i, x in enumerate(v):
            check_value(x, f"{where}[{i}]")
        return
    check(isinstance(v, dict) and isinstance(v.get("type"), str), lambda: f"{where}: not a value: {v!r}")
    kind = v["type"]
    if kind == "tensor":
        meta = v.get("device") == "meta"       # a meta tensor: no data
        check(set(v) == {"type", "dtype", "shape", "data", "requires_grad", "grad_fn"} | ({"device"} if meta else set()),
              f"{where}: tensor fields {sorted(v)}")
        check(v["dtype"] in DTYPES, lambda: f"{where}: dtype {v['dtype']!r}")
        check(isinstance(v["shape"], list) and all(_is_int(d) and d >= 0 for d in v["shape"]), f"{where}: shape")
        check(v["requires_grad"] in (True, False), f"{where}: requires_grad")
        check(v["grad_fn"] is None or isinstance(v["grad_fn"], str), f"{where}: grad_fn")
        complex_pairs = DTYPES[v["dtype"]] == "complex"     # each element a [real, imaginary] pair of floats
        if meta:
            check(v["data"] is None, f"{where}: a meta tensor's data")
        else:
            check_data(v["data"], v["shape"] + [2] * complex_pairs, "float" if complex_pairs else DTYPES[v["dtype"]],
                       f"{where}.data")
    elif kind == "complex":
        check(set(v) == {"type", "real", "imag"} and all(_is_number(v[k]) or v[k] in NON_FINITE
                                                         for k in ("real", "imag")), f"{where}: complex {v!r}")
    elif kind == "grad_fn":
        check(set(v) == {"type", "name", "next"}, lambda: f"{where}: grad_fn fields {sorted(v)}")
        check(isinstance(v["name"], str), f"{where}: name")
        check(isinstance(v["next"], list) and all(n is None or isinstance(n, str) for n in v["next"]),
              f"{where}: next")
    else:
        check(set(v) == {"type", "repr"} and isinstance(v["repr"], str), lambda: f"{where}: other value {v!r}")


def check_data(data, shape, element: str, where: str):
    """The nested lists of a tensor's data match its shape and dtype. The elements are checked level by
    level without naming each one; only data that fails is walked again to name the first bad element."""
    level, fits = [data], True
    for n in shape:
        if not all(isinstance(x, list) and len(x) == n for x in level):
            fits = False
            break
        level = [x for row in level for x in row]
    if not (fits and all(map(_ELEMENT_OK[element], level))):
        _name_bad_data(data, shape, element, where)
        raise SchemaError(f"{where}: data of shape {shape} and {element} elements expected")


_ELEMENT_OK = {"float": lambda x: _is_number(x) or x in NON_FINITE, "int": _is_int,
               "bool": lambda x: x is True or x is False}


def _name_bad_data(data, shape, element: str, where: str):
    if not shape:
        if element == "float":
            check(_is_number(data) or data in NON_FINITE, lambda: f"{where}: float element {data!r}")
        elif element == "int":
            check(_is_int(data), lambda: f"{where}: int element {data!r}")
        else:
            check(data is True or data is False, lambda: f"{where}: bool element {data!r}")
        return
    check(isinstance(data, list) and len(data) == shape[0], f"{where}: expected {shape[0]} items")
    for i, x in enumerate(data):
        _name_bad_data(x, shape[1:], element, f"{where}[{i}]")


def _no_constants(name):
    raise SchemaError(f"non-JSON token {name}")


def parse(output: str) -> list[dict]:
    """Every line of `output` as a JSON object that matches its event's schema."""
    events = []
    check(output == "" or output.endswith("\n"), "the output must end with a newline")
    for n, line in enumerate(output.splitlines(), 1):
        event = json.loads(line, parse_constant=_no_constants)
        check(isinstance(event, dict), f"line {n}: not an object")
        name = event.get("event")
        check(name in EVENTS, lambda: f"line {n}: unknown event {name!r}")
        fields = EVENTS[name]
        required = {f for f in fields if not f.startswith("~")}
        allowed = {f.lstrip("~") for f in fields} | {"event"}
        check(required <= set(event) <= allowed, lambda: f"line {n}: {name} fields {sorted(event)}")
        for f, kind in fields.items():
            if f.lstrip("~") in event:
                check_field(kind, event[f.lstrip("~")], f"line {n}: {name}.{f.lstrip('~')}")
        events.append(event)
    return events


def test_the_validator_rejects_what_the_schema_forbids():
    good = '{"event":"print","file":"a","line":1,"text":"x\\n","values":[1.5,"nan",null]}\n'
    assert parse(good)[0]["values"] == [1.5, "nan", None]
    bad = [
        '{"event":"print","file":"a","line":1,"text":"x","values":[NaN]}\n',             # a NaN token
        '{"event":"print","file":"a","line":1,"text":"x","values":[Infinity]}\n',
        '{"event":"print","file":"a","line":1,"text":"x"}\n',                            # missing values
        '{"event":"print","file":"a","line":1,"text":"x","values":[],"extra":1}\n',
        '{"event":"nope"}\n',
        '{"event":"end","file":null,"ok":1,"seconds":0.1}\n',
        '{"event":"grad","file":"a","line":1,"var":"x","value":{"type":"tensor","dtype":"float32",'
        '"shape":[2],"data":[1.0],"requires_grad":false,"grad_fn":null}}\n',            # data vs shape
        '{"event":"grad","file":"a","line":1,"var":"x","value":{"type":"tensor","dtype":"int64",'
        '"shape":[1],"data":[1.5],"requires_grad":false,"grad_fn":null}}\n',            # int dtype, float data
        '{"event":"print","file":"a","line":1,"text":"x","values":[{"type":"torch.Size"}]}\n',
    ]
    for line in bad:
        with pytest.raises(SchemaError):
            parse(line)


# ----------------------------------------------------------------------------- running scripts

def run_jsonl(source: str, filename: str = "t.grad", seed=0) -> tuple[int, str, str]:
    """The CLI's own path (cli.run_text) with --format jsonl: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = cli.run_text(source, filename, seed, None, "jsonl")
    finally:
        sys.stdout, sys.stderr = saved
    return status, out.getvalue(), err.getvalue()


def events_of(source: str, **kw) -> list[dict]:
    status, out, err = run_jsonl(source, **kw)
    assert err == ""
    return parse(out)


def kinds(events, name):
    return [e for e in events if e["event"] == name]


# Text-mode warnings: "FILE:LINE: Category: message" then the source line.
WARNING_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<category>\w+): ", re.M)


def check_jsonl_agrees(source: str, name: str, text) -> None:
    """The issue's property, which every conformance case must keep (test_conformance.test_case checks it
    on the text mode's run it compares with the golden, `text`, made with seed 0): each line parses and
    matches the schema, and the print events' texts joined are the text mode's stdout (both runs seeded
    alike). Errors and warnings are the same ones, as events; the exit status does not change."""
    status, out, err = run_jsonl(source, name, seed=0)
    assert err == ""
    events = parse(out)
    printed = "".join(e["text"] for e in kinds(events, "print") if "stream" not in e)      # (stdout's)
    assert normalize(printed) == normalize(text.out)
    assert events[-1]["event"] == "end" and len(kinds(events, "end")) == 1
    assert events[-1]["ok"] is (text.error is None)
    errors = kinds(events, "error")
    if text.error is None:
        assert status == 0 and errors == []
    else:
        assert status == text.error.exit_status
        assert len(errors) == 1 and errors[0] is events[-2]
        e = errors[0]
        assert (e["type"], normalize(e["message"])) == (text.error.kind, normalize(text.error.message))
        assert (e["line"] or 0, e["col"] or 0) == (text.error.line, text.error.col)
    warned = [(int(m["line"]), m["category"]) for m in WARNING_LINE.finditer(text.err)]
    assert [(w["line"], w["category"]) for w in kinds(events, "warning")] == warned
    for e in kinds(events, "backward"):
        assert e["nodes"] >= 1


# --------------------------------------------------------------------------------- each event

TUTORIAL = """import torch
x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
out.backward()
print(x.grad)
"""


def test_tutorial_backward_and_grad_events():
    events = events_of(TUTORIAL)
    assert [e["event"] for e in events] == ["backward", "grad", "print", "end"]
    backward, grad, printed, end = events
    assert backward == {"event": "backward", "file": "t.grad", "line": 6, "call": "backward",
                        "root": "MeanBackward0", "nodes": 5, "retain_graph": False, "create_graph": False}
    assert grad == {"event": "grad", "file": "t.grad", "line": 6, "var": "x",
                    "value": {"type": "tensor", "dtype": "float32", "shape": [2, 2],
                              "data": [[4.5, 4.5], [4.5, 4.5]], "requires_grad": False, "grad_fn": None}}
    assert printed["text"] == "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n"
    assert printed["line"] == 7 and printed["values"] == [grad["value"]]
    assert end["ok"] is True and end["file"] == "t.grad" and end["seconds"] >= 0


def test_every_event_kind_matches_the_schema():
    shell = Shell(Options(format="jsonl"), out=io.StringIO(), err=io.StringIO())
    for unit in ("import torch", "x = torch.tensor([1.0, 2.0], requires_grad=True)", "y = (x * x).sum()",
                 "y.backward(retain_graph=True)", "g = torch.autograd.grad(y, x)", "print(g, y.grad_fn)",
                 "y", "y.grad", "%format", "x + torch.ones(3)"):
        shell.execute(unit)
    events = parse(shell.out.getvalue())
    seen = {e["event"] for e in events}
    assert seen == set(EVENTS)
    assert shell.err.getvalue() == ""


def test_print_text_includes_sep_and_end_and_values_are_typed():
    events = events_of("import torch\nprint(1, 2.5, 'a', None, True, sep='-', end='!')\n"
                       "print([1, (2, [3])], torch.Size([2, 3]), torch.float64, torch.ones(1).dtype)\n")
    first, second = kinds(events, "print")
    assert first["text"] == "1-2.5-a-None-True!"
    assert first["values"] == [1, 2.5, "a", None, True]
    assert second["values"] == [[1, [2, [3]]], {"type": "torch.Size", "repr": "torch.Size([2, 3])"},
                                {"type": "torch.dtype", "repr": "torch.float64"},
                                {"type": "torch.dtype", "repr": "torch.float32"}]


def test_non_finite_numbers_are_strings_never_tokens():
    status, out, _ = run_jsonl("import torch\nimport math\n"
                               "t = torch.tensor([1.0, float('nan'), float('inf'), -float('inf')])\n"
                               "print(t, math.nan, math.inf, -math.inf, t.double(), t.half())\n"
                               "print(torch.tensor(float('nan')))\n")
    assert status == 0
    assert "NaN" not in out and "Infinity" not in out
    first, second = kinds(parse(out), "print")
    data = [1.0, "nan", "inf", "-inf"]
    assert first["values"][0]["data"] == data
    assert first["values"][1:4] == ["nan", "inf", "-inf"]
    assert first["values"][4]["data"] == data and first["values"][4]["dtype"] == "float64"
    assert first["values"][5]["data"] == data and first["values"][5]["dtype"] == "float16"
    assert second["values"][0]["data"] == "nan" and second["values"][0]["shape"] == []


def test_tensor_data_by_dtype_and_shape():
    events = events_of("import torch\n"
                       "print(torch.tensor([0.1, 1e-8, 3.0]))\n"              # float32: shortest decimals
                       "print(torch.tensor([0.1], dtype=torch.float64))\n"     # float64: exact
                       "print(torch.tensor([[1, 2], [3, 4]]))\n"
                       "print(torch.tensor([True, False]))\n"
                       "print(torch.zeros(0, 3), torch.zeros(2, 0), torch.tensor(7))\n")
    values = [e["values"] for e in kinds(events, "print")]
    assert values[0][0]["data"] == [0.1, 1e-8, 3.0]
    assert values[1][0]["data"] == [0.1] and values[1][0]["dtype"] == "float64"
    assert values[2][0]["data"] == [[1, 2], [3, 4]] and values[2][0]["dtype"] == "int64"
    assert values[3][0]["data"] == [True, False] and values[3][0]["dtype"] == "bool"
    assert [v["data"] for v in values[4]] == [[], [[], []], 7]
    assert [v["shape"] for v in values[4]] == [[0, 3], [2, 0], []]


def test_float32_data_reads_back_as_the_same_float32():
    import numpy as np
    events = events_of("import torch\ntorch.manual_seed(3)\nprint(torch.randn(50) * 1000)\n")
    t = kinds(events, "print")[0]["values"][0]
    session = Session(out=io.StringIO(), seed=0)
    session.run_source("import torch\ntorch.manual_seed(3)\nt = torch.randn(50) * 1000\n")
    assert np.array_equal(np.array(t["data"], dtype=np.float32), session.globals["t"]._a)


def test_grad_fn_values_and_cycles():
    events = events_of("import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2 + x\n"
                       "print(y.grad_fn)\nl = [1]\nl.append(l)\nprint(l)\n")
    first, second = kinds(events, "print")
    assert first["values"] == [{"type": "grad_fn", "name": "AddBackward0", "next": ["MulBackward0", "AccumulateGrad"]}]
    assert second["text"] == "[1, [...]]\n"
    assert second["values"] == [[1, {"type": "list", "repr": "[1, [...]]"}]]


def test_grad_events_only_for_tensors_whose_grad_changed():
    events = events_of("import torch\na = torch.ones(2, requires_grad=True)\nb = torch.ones(2, requires_grad=True)\n"
                       "c = torch.ones(2, requires_grad=True)\n"
                       "loss = (a * b).sum() + c.sum()\n"
                       "loss.backward(inputs=[a], retain_graph=True)\n"     # only a.grad changes
                       "loss.backward()\n"                                   # a accumulates in place; b, c new
                       "unused = torch.ones(1, requires_grad=True)\n")
    b1, b2 = kinds(events, "backward")
    assert (b1["line"], b1["retain_graph"], b2["line"], b2["retain_graph"]) == (6, True, 7, False)
    assert b1["root"] == "AddBackward0" and b1["nodes"] == b2["nodes"] == 7
    grads = kinds(events, "grad")
    assert [(g["line"], g["var"], g["value"]["data"]) for g in grads] == [
        (6, "a", [1.0, 1.0]), (7, "a", [2.0, 2.0]), (7, "b", [1.0, 1.0]), (7, "c", [1.0, 1.0])]


def test_retained_non_leaf_gradients_are_reported():
    events = events_of("import torch\nx = torch.ones(2, requires_grad=True)\nh = x * 3\nh.retain_grad()\n"
                       "h.sum().backward()\n")
    assert [(g["var"], g["value"]["data"]) for g in kinds(events, "grad")] == [("h", [1.0, 1.0]), ("x", [3.0, 3.0])]


def test_var_is_the_first_assigned_name_or_null():
    events = events_of("import torch\nw = torch.ones(1, requires_grad=True)\nalias = w\n"
                       "params = [torch.ones(1, requires_grad=True)]\n"
                       "(w * 2).sum().backward()\n(params[0] * 2).sum().backward()\n"
                       "w = None\n(alias * 2).sum().backward()\n")
    assert [g["var"] for g in kinds(events, "grad")] == ["w", None, "alias"]


def test_autograd_grad_reports_each_input_with_its_returned_gradient():
    events = events_of("import torch\nx = torch.ones(2, requires_grad=True)\nu = torch.ones(1, requires_grad=True)\n"
                       "gx, gu = torch.autograd.grad((x * x).sum(), [x, u], allow_unused=True, create_graph=True)\n")
    (backward,) = kinds(events, "backward")
    assert (backward["call"], backward["root"], backward["create_graph"], backward["retain_graph"]) == \
        ("autograd.grad", "SumBackward0", True, True)
    gx, gu = kinds(events, "grad")
    assert (gx["var"], gx["index"], gx["value"]["data"], gx["value"]["grad_fn"]) == ("x", 0, [2.0, 2.0], "AddBackward0")
    assert (gu["var"], gu["index"], gu["value"]) == ("u", 1, None)


def test_gradcli_own_grad_calls_are_not_events_but_prints_inside_are():
    events = events_of("import torch\ndef f(v):\n    print('f called')\n    return v * v\n"
                       "j = torch.autograd.functional.jacobian(f, torch.ones(2))\n"
                       "x = torch.ones(2, dtype=torch.float64, requires_grad=True)\n"
                       "def g(v):\n    return (v * v).sum()\n"
                       "print(torch.autograd.gradcheck(g, (x,)))\n")
    assert kinds(events, "backward") == [] and kinds(events, "grad") == []
    assert [(e["line"], e["text"]) for e in kinds(events, "print")] == [(3, "f called\n"), (9, "True\n")]


def test_lines_are_the_running_statement_and_come_back_after_a_call():
    events = events_of("import torch\ndef f(a):\n    print('in f')\n    a.sum().backward()\n    return 1\n"
                       "x = torch.ones(2, requires_grad=True)\n"
                       "print(f(x * 2),\n      'after')\n"
                       "for i in range(2):\n    if i:\n        print(i)\n")
    assert [(e["event"], e["line"]) for e in events if e["event"] != "end"] == [
        ("print", 3), ("backward", 4), ("grad", 4), ("print", 7), ("print", 11)]


def test_backward_that_fails_gives_only_the_error():
    status, out, err = run_jsonl("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\n"
                                 "y.backward()\ny.backward()\n")
    events = parse(out)
    assert status == 1 and err == ""
    assert [e["event"] for e in events] == ["backward", "grad", "error", "end"]
    assert events[2]["line"] == 5 and events[2]["type"] == "RuntimeError"
    assert events[2]["message"].startswith("Trying to backward through the graph a second time")
    assert events[3]["ok"] is False


def test_warnings_are_events_once_per_line():
    events = events_of("import torch\nx = torch.ones(1, requires_grad=True)\ny = x * 2\n"
                       "for i in range(3):\n    y.grad\n")
    (w,) = kinds(events, "warning")
    assert (w["file"], w["line"], w["col"], w["category"]) == ("t.grad", 5, 5, "UserWarning")
    assert w["message"].startswith("The .grad attribute of a Tensor that is not a leaf Tensor")


def test_events_are_flushed_as_they_happen():
    class Recorder(io.StringIO):
        flushed: list

        def flush(self):
            self.flushed.append(self.getvalue())

    out = Recorder()
    out.flushed = []
    session = Session(out=io.StringIO(), events=JsonLines(out))
    session.run_source("print(1)\nprint(2)\n")
    assert out.flushed[:2] == ['{"event":"print","file":"<script>","line":1,"text":"1\\n","values":[1]}\n',
                               out.getvalue()]


def _statement_runners(program) -> list:
    """The names of the functions a compiled module's block runs, one per statement."""
    compiled = program.__closure__[program.__code__.co_freevars.index("compiled")].cell_contents
    return [st.__name__ for _, st in compiled]


def test_line_tracking_is_compiled_in_only_with_an_event_sink():
    plain = Session(out=io.StringIO(), err=io.StringIO())
    tracked = Session(out=io.StringIO(), err=io.StringIO(), events=JsonLines(io.StringIO()))
    source = "x = 1\nprint(x)\n"
    assert "run_tracked" not in _statement_runners(plain.compile(source))
    assert _statement_runners(tracked.compile(source)) == ["run_tracked", "run_tracked"]
    plain.run_source("print(1, end='')\n")
    assert plain.out.getvalue() == "1"
    tracked.set_events(None)                       # back to text: print writes again
    tracked.run_source("print(2)\n")
    assert tracked.out.getvalue() == "2\n" and "run_tracked" not in _statement_runners(tracked.compile(source))


# ----------------------------------------------------------------------------- the command line

def gradcli(*args, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    return launcher.run(args, input=stdin, env=env, timeout=60)


def test_cli_run_statuses_and_stdout_only(tmp_path):
    ok, err, bad, syntax = (tmp_path / n for n in ("ok.grad", "err.grad", "bad.grad", "syn.grad"))
    ok.write_text(TUTORIAL)
    err.write_text("import torch\nprint('before')\ny = torch.ones(2) + torch.ones(3)\n")
    syntax.write_text("x = (1 +\n")
    bad.write_bytes(b"x = 1\n\xff\n")
    p = gradcli("run", "--format", "jsonl", str(ok))
    assert p.returncode == 0 and p.stderr == ""
    assert [e["event"] for e in parse(p.stdout)] == ["backward", "grad", "print", "end"]

    p = gradcli("run", "--format", "jsonl", str(err), str(ok))
    assert p.returncode == 1 and p.stderr == ""
    events = parse(p.stdout)
    assert [e["event"] for e in events][:3] == ["print", "error", "end"]
    assert {k: events[1][k] for k in ("file", "line", "col", "type")} == \
        {"file": str(err), "line": 3, "col": 5, "type": "RuntimeError"}
    assert len(kinds(events, "end")) == 2 and events[-1] == {**events[-1], "ok": True, "file": str(ok)}

    for path, kind in ((syntax, "SyntaxError"), (bad, "SyntaxError"), (tmp_path / "missing.grad", "OSError")):
        p = gradcli("--format", "jsonl", "run", str(path))
        assert p.returncode == 2 and p.stderr == "", path
        error, end = parse(p.stdout)
        assert error["type"] == kind and error["file"] == str(path) and end["ok"] is False


def test_cli_dash_c_and_stdin():
    p = gradcli("--format", "jsonl", "-c", "print(1 / 3)")
    assert p.returncode == 0
    printed, end = parse(p.stdout)
    assert (printed["file"], printed["line"], printed["values"]) == ("<string>", 1, [1 / 3])
    p = gradcli("run", "--format", "jsonl", "-", stdin="print('from stdin')\n")
    assert parse(p.stdout)[0]["file"] == "<stdin>"


def test_cli_text_mode_output_is_unchanged(tmp_path):
    script = tmp_path / "t.grad"
    script.write_text(TUTORIAL)
    p = gradcli("run", str(script))
    assert p.stdout == "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n"


# ---------------------------------------------------------------------------------------- REPL

def test_repl_format_switch():
    shell = Shell(Options(), out=io.StringIO(), err=io.StringIO())
    shell.execute("import torch")
    shell.execute("1 + 1")
    assert shell.out.getvalue() == "2\n"
    shell.execute("%format jsonl")
    shell.execute("x = torch.ones(2, requires_grad=True)\n(x * 3).sum().backward()\nx.grad")
    shell.execute("y = x +")
    shell.execute("%format")
    shell.execute("%format text")
    shell.execute("x.grad")
    shell.execute("%format yaml")
    text, _, tail = shell.out.getvalue()[len("2\n"):].rpartition("}\n")
    events = parse(text + "}\n")
    assert [e["event"] for e in events] == ["backward", "grad", "result", "end", "error", "end", "message"]
    assert events[2]["text"] == "tensor([3., 3.])\n" and events[2]["line"] == 3 and events[2]["file"] == "<stdin>"
    assert events[4]["type"] == "SyntaxError" and events[5]["ok"] is False
    assert events[6]["text"] == "format: jsonl\n"
    assert tail == "tensor([3., 3.])\n"
    assert "%format: unknown format 'yaml'; choose text or jsonl" in shell.err.getvalue()


def test_repl_format_survives_reset():
    shell = Shell(Options(format="jsonl"), out=io.StringIO(), err=io.StringIO())
    shell.execute("%reset")
    shell.execute("print('after reset')")
    events = parse(shell.out.getvalue())
    assert [e["event"] for e in events] == ["message", "print", "end"]


def test_gradcli_repl_format_option_on_piped_input():
    p = gradcli("repl", "--format", "jsonl", stdin="import torch\nt = torch.tensor([1.5])\nt\nprint(t.item())\n")
    assert p.returncode == 0
    events = parse(p.stdout)
    assert [e["event"] for e in events] == ["end", "end", "result", "end", "print", "end"]
    assert events[2]["value"]["data"] == [1.5] and events[4]["values"] == [1.5]


def test_complex_values_are_pairs():
    """A complex tensor's elements are [real, imaginary] pairs (view_as_real's data); a Python complex is typed."""
    status, out, err = run_jsonl("import torch\nprint(torch.tensor([1+2j, -0.5j]), 3-1j, "
                                 "torch.tensor(1j, dtype=torch.complex128))\n", "c")
    values = [e for e in parse(out) if e["event"] == "print"][0]["values"]
    assert values[0]["data"] == [[1.0, 2.0], [0.0, -0.5]] and values[0]["dtype"] == "complex64"
    assert values[1] == {"type": "complex", "real": 3.0, "imag": -1.0}
    assert values[2]["data"] == [0.0, 1.0] and values[2]["shape"] == []
