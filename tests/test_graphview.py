"""The grad_fn graph views and the provenance a session records: exact text for small graphs, shared
nodes, limits, deep graphs, statements and lines, weak references, DOT and JSON walks."""

from __future__ import annotations

import gc
import io
import json
import weakref

import pytest

from gradcli.diagnostics import graphview
from gradcli.engine import dtypes, factories as torch
from gradcli.session import Session


def tutorial():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return x, y, z, out


def test_tutorial_graph_with_names_and_a_shared_node():
    x, y, z, out = tutorial()
    names = {id(x): "x", id(y.grad_fn): "y", id(out.grad_fn): "out"}
    assert graphview.render(out, names) == (
        "MeanBackward0 ─ out\n"
        "└── MulBackward0\n"
        "    └── MulBackward0\n"
        "        ├── AddBackward0 ─ y [#1]\n"
        "        │   └── AccumulateGrad ─ x: [2, 2] float32\n"
        "        └── AddBackward0 ─ y [#1, shown above]")


def test_ascii_and_unnamed_leaves():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, dtype=dtypes.ALIASES["float64"], requires_grad=True)
    c = (a * b).sum()
    assert graphview.render(c, ascii=True) == (
        "SumBackward0\n"
        "`-- MulBackward0\n"
        "    |-- AccumulateGrad - leaf [3] float32\n"
        "    `-- AccumulateGrad - leaf [3] float64")


def test_inputs_without_grad_are_not_drawn_and_a_node_can_be_the_root():
    x = torch.ones(2, requires_grad=True)
    y = x * torch.ones(2)             # the second input needs no gradient: (None, 0)
    assert graphview.render(y.grad_fn) == "MulBackward0\n└── AccumulateGrad ─ leaf [2] float32"


def test_leaf_and_tensor_without_graph():
    x = torch.ones(2, requires_grad=True)
    assert graphview.render(x, {id(x): "x"}) == "AccumulateGrad ─ x: [2] float32"
    assert graphview.render(torch.ones(2)) == "the tensor does not require grad: it has no backward graph"


def test_diamond_numbers_each_shared_node_in_drawing_order():
    x = torch.ones(1, requires_grad=True)
    a = x * 2
    b = a.exp()
    c = a.sin()
    d = b + c + b
    lines = graphview.render(d, {id(x): "x"}).split("\n")
    assert lines == [
        "AddBackward0",
        "├── AddBackward0",
        "│   ├── ExpBackward0 [#1]",
        "│   │   └── MulBackward0 [#2]",
        "│   │       └── AccumulateGrad ─ x: [1] float32",
        "│   └── SinBackward0",
        "│       └── MulBackward0 [#2, shown above]",
        "└── ExpBackward0 [#1, shown above]",
    ]


def test_limits_bound_a_deep_chain_without_recursion():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(20000):            # far deeper than Python's recursion limit
        y = y * 1.0
    text = graphview.render(y, max_depth=3)
    assert text.split("\n") == ["MulBackward0", "└── MulBackward0", "    └── MulBackward0",
                                "        └── … (1 input below max_depth=3)"]
    text = graphview.render(y, max_depth=100000, max_nodes=5)
    assert text.split("\n")[-1].endswith("… (stopped after 5 nodes)")
    assert len(text.split("\n")) == 6


def test_not_a_tensor():
    with pytest.raises(TypeError, match="expected a Tensor or a grad_fn node, not int"):
        graphview.render(3)


# ------------------------------------------------------------------------- provenance (a session's record)
def traced(source: str, filename: str = "t.grad") -> Session:
    session = Session(out=io.StringIO(), err=io.StringIO(), provenance=True)
    session.provenance.main = filename
    session.run_source(source, filename)
    return session


def draw(session, name, **options):
    value = session.globals[name]
    return graphview.render(value, {id(value): name}, provenance=session.provenance, **options)


TUTORIAL = ("import torch\n"
            "x = torch.ones(2, 2, requires_grad=True)\n"
            "y = x + 2\n"
            "z = y * y * 3\n"
            "out = z.mean()\n"
            "out.backward()\n")


def test_each_node_shows_the_statement_and_line_that_made_it():
    session = traced(TUTORIAL)
    assert draw(session, "out") == (
        "MeanBackward0  out = z.mean()  (line 5)\n"
        "└── MulBackward0  z = y * y * 3  (line 4)\n"
        "    └── MulBackward0  in z = y * y * 3  (line 4)\n"
        "        ├── AddBackward0  y = x + 2  (line 3) [#1]\n"
        "        │   └── AccumulateGrad ─ x: [2, 2] float32  (line 2)\n"
        "        └── AddBackward0  y = x + 2  (line 3) [#1, shown above]")
    assert session.provenance.default_name(session.globals) == "out"


def test_functions_unpacking_item_assignment_and_augmented_assignment():
    session = traced(
        "import torch\n"
        "def f(a):\n"
        "    b = a * 2\n"
        "    return b.exp()   # the result\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "p, q = x.sin(), x.cos()\n"
        "z = f(x)\n"
        "z[0] = p[1]\n"
        "z += q\n")
    assert draw(session, "z").split("\n") == [
        "AddBackward0  z += q  (line 9)",
        "├── CopySlices  z[0] = p[1]  (line 8)",
        # made by the function's return statement, first bound to a name by `z = f(x)`
        "│   ├── ExpBackward0 ─ z  in return b.exp()  (line 4)",
        "│   │   └── MulBackward0  b = a * 2  (line 3)",
        "│   │       └── AccumulateGrad ─ x: [3] float32  (line 5) [#1]",
        "│   └── SelectBackward0  in z[0] = p[1]  (line 8)",
        "│       └── SinBackward0  p, q = x.sin(), x.cos()  (line 6)",
        "│           └── AccumulateGrad ─ x: [3] float32  (line 5) [#1, shown above]",
        "└── CosBackward0  p, q = x.sin(), x.cos()  (line 6)",
        "    └── AccumulateGrad ─ x: [3] float32  (line 5) [#1, shown above]"]


def test_statement_text_one_line_bodies_semicolons_comments_and_continued_lines():
    session = traced(
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)  # '#' in a comment\n"
        "s = 'a # b'; loss = (x * 2 +\n"
        "        x.exp()).sum()\n"
        "for i in range(2): x2 = x * 3; x3 = x2 + 1\n"
        "out = loss + x3.sum(); print(s)\n")
    assert draw(session, "out", ascii=True).split("\n") == [
        "AddBackward0  out = loss + x3.sum()  (line 6)",
        "|-- SumBackward0  loss = (x * 2 + ...  (line 3)",
        "|   `-- AddBackward0  in loss = (x * 2 + ...  (line 3)",
        "|       |-- MulBackward0  in loss = (x * 2 + ...  (line 3)",
        "|       |   `-- AccumulateGrad - x: [2] float32  (line 2) [#1]",
        "|       `-- ExpBackward0  in loss = (x * 2 + ...  (line 3)",
        "|           `-- AccumulateGrad - x: [2] float32  (line 2) [#1, shown above]",
        "`-- SumBackward0  in out = loss + x3.sum()  (line 6)",
        "    `-- AddBackward0  x3 = x2 + 1  (line 5)",
        "        `-- MulBackward0  x2 = x * 3  (line 5)",
        "            `-- AccumulateGrad - x: [2] float32  (line 2) [#1, shown above]"]


def test_a_node_made_by_a_statement_that_kept_no_name_still_gets_its_line():
    session = traced(
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "parts = [x * 2]\n"
        "parts.append(x.exp())\n"
        "y = parts[1] + parts[0]\n")
    assert draw(session, "y").split("\n") == [
        "AddBackward0  y = parts[1] + parts[0]  (line 5)",
        "├── ExpBackward0  in parts.append(x.exp())  (line 4)",
        "│   └── AccumulateGrad ─ x: [2] float32  (line 2) [#1]",
        "└── MulBackward0  in parts = [x * 2]  (line 3)",
        "    └── AccumulateGrad ─ x: [2] float32  (line 2) [#1, shown above]"]


def test_long_statements_are_cut_and_other_files_are_named():
    session = traced("import torch\nx = torch.ones(1, requires_grad=True)\n"
                     "long_name = x * 1 + x * 2 + x * 3 + x * 4 + x * 5 + x * 6 + x * 7 + x * 8\n")
    first = draw(session, "long_name").split("\n")[0]
    assert first == "AddBackward0  long_name = x * 1 + x * 2 + x * 3 + x * 4 + x * 5 + x * 6 +…  (line 3)"
    session.provenance.main = "other.grad"
    assert draw(session, "long_name", max_depth=1).split("\n")[0].endswith("(t.grad line 3)")


def test_provenance_holds_nodes_and_leaves_weakly():
    session = traced("import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n")
    node = weakref.ref(session.globals["y"].grad_fn)
    leaf = weakref.ref(session.globals["x"])
    assert len(session.provenance._nodes) == 1 and len(session.provenance._leaves) == 1
    session.run_source("del y\ndel x\n", "t.grad")
    gc.collect()
    assert node() is None and leaf() is None
    assert len(session.provenance._nodes) == 0 and len(session.provenance._leaves) == 0


def test_sessions_without_provenance_compile_plain_statements(monkeypatch):
    def refuse(*args):
        raise AssertionError("statements were wrapped")
    monkeypatch.setattr(graphview.Provenance, "block", refuse)
    session = Session(out=io.StringIO())
    assert session.provenance is None
    session.run_source("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n")
    with pytest.raises(AssertionError, match="wrapped"):
        traced("y = 1\n")


def test_repl_graph_magic_shows_provenance_when_the_session_records_it():
    from gradcli.repl.shell import Options, Shell
    shell = Shell(Options(colour=False), out=io.StringIO(), err=io.StringIO())
    shell.session = Session(out=shell.out, err=shell.err, provenance=True)
    for line in ("import torch", "x = torch.ones(2, requires_grad=True)", "out = (x * x).sum()",
                 "%graph out"):
        shell.execute(line)
    assert shell.out.getvalue() == (
        "SumBackward0  out = (x * x).sum()\n"          # REPL inputs: no line numbers, they restart at 1
        "└── MulBackward0  in out = (x * x).sum()\n"
        "    ├── AccumulateGrad ─ x: [2] float32 [#1]\n"
        "    └── AccumulateGrad ─ x: [2] float32 [#1, shown above]\n")


# ------------------------------------------------------------------------------------ DOT and JSON
def test_collect_is_breadth_first_each_node_once_with_cut_inputs_counted():
    x = torch.ones(1, requires_grad=True)
    a = x * 2
    d = a.exp() + a.sin()
    nodes, edges, cut = graphview.collect(d)
    assert [n.op.node for n in nodes] == ["AddBackward0", "ExpBackward0", "SinBackward0", "MulBackward0",
                                          "AccumulateGrad"]
    assert edges == [(0, 1, 0), (0, 2, 1), (1, 3, 0), (2, 3, 0), (3, 4, 0)]
    assert cut == {}
    nodes, edges, cut = graphview.collect(d, max_depth=2)
    assert len(nodes) == 3 and cut == {1: 1, 2: 1}
    nodes, edges, cut = graphview.collect(d, max_nodes=2)
    assert len(nodes) == 2 and cut == {0: 1, 1: 1}


def test_dot_and_json_walk_a_deep_chain_without_recursion():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0
    document = json.loads(graphview.to_json(y, "y"))
    assert len(document["nodes"]) == 20001 and len(document["edges"]) == 20000
    assert document["nodes"][-1]["name"] == "AccumulateGrad" and document["truncated"] is False
    dot = graphview.to_dot(y, "y", max_nodes=10)
    assert dot.count("[label=") == 12           # the output, 10 nodes, the "1 more input" note
    assert "n9 -> n9_more [style=dashed];" in dot
