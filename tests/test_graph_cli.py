"""`gradcli graph`: the tree, DOT and JSON of a script's tensors, limits, files, errors and exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli import cli

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = str(ROOT / "examples" / "tutorial.grad")

TUTORIAL_OUT = (
    "MeanBackward0  out = z.mean()  (line 13)\n"
    "└── MulBackward0  z = y * y * 3  (line 12)\n"
    "    └── MulBackward0  in z = y * y * 3  (line 12)\n"
    "        ├── AddBackward0  y = x + 2  (line 7) [#1]\n"
    "        │   └── AccumulateGrad ─ x: [2, 2] float32  (line 4)\n"
    "        └── AddBackward0  y = x + 2  (line 7) [#1, shown above]\n")

CHAIN = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x\nfor i in range({n}):\n    y = y * 1.0001\n"


def graph(capsys, *args):
    """Run `gradcli graph ARGS` in this process: (status, stdout, stderr)."""
    status = cli.main(["graph", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def script(tmp_path, text, name="s.grad") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ------------------------------------------------------------------------------------------ the tree
def test_tutorial_tree_names_lines_statements_and_a_shared_node(capsys):
    assert graph(capsys, TUTORIAL, "out") == (0, TUTORIAL_OUT, "")


def test_default_is_the_last_tensor_assigned_that_has_a_grad_fn(capsys):
    # the tutorial ends with `y = y * 2` in a while loop; its length depends on randn, hence the seed
    status, out, err = graph(capsys, TUTORIAL, "--seed", "0")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "MulBackward0  y = y * 2  (line 32)"
    assert lines[-2].endswith("└── MulBackward0  y = x * 2  (line 30)")
    assert lines[-1].endswith("└── AccumulateGrad ─ x: [3] float32  (line 28)")   # the second x
    assert all(line.endswith("MulBackward0  y = y * 2  (line 32)") for line in lines[1:-2])


def test_ascii_tree(capsys):
    status, out, _ = graph(capsys, TUTORIAL, "out", "--ascii")
    assert status == 0
    assert out == (
        "MeanBackward0  out = z.mean()  (line 13)\n"
        "`-- MulBackward0  z = y * y * 3  (line 12)\n"
        "    `-- MulBackward0  in z = y * y * 3  (line 12)\n"
        "        |-- AddBackward0  y = x + 2  (line 7) [#1]\n"
        "        |   `-- AccumulateGrad - x: [2, 2] float32  (line 4)\n"
        "        `-- AddBackward0  y = x + 2  (line 7) [#1, shown above]\n")
    assert out.isascii()


def test_shared_nodes_are_numbered_and_referred_to(capsys, tmp_path):
    path = script(tmp_path, "import torch\nw = torch.ones(1, requires_grad=True)\n"
                            "a = w * 2\nb = a.exp()\nc = a.sin()\nd = b + c + b\n")
    status, out, _ = graph(capsys, path, "d")
    assert status == 0
    assert out.splitlines() == [
        "AddBackward0  d = b + c + b  (line 6)",
        "├── AddBackward0  in d = b + c + b  (line 6)",
        "│   ├── ExpBackward0  b = a.exp()  (line 4) [#1]",
        "│   │   └── MulBackward0  a = w * 2  (line 3) [#2]",
        "│   │       └── AccumulateGrad ─ w: [1] float32  (line 2)",
        "│   └── SinBackward0  c = a.sin()  (line 5)",
        "│       └── MulBackward0  a = w * 2  (line 3) [#2, shown above]",
        "└── ExpBackward0  b = a.exp()  (line 4) [#1, shown above]"]


def test_max_depth_and_max_nodes(capsys):
    status, out, _ = graph(capsys, TUTORIAL, "out", "--max-depth", "2")
    assert (status, out) == (0, "MeanBackward0  out = z.mean()  (line 13)\n"
                                "└── MulBackward0  z = y * y * 3  (line 12)\n"
                                "    └── … (1 input below max_depth=2)\n")
    status, out, _ = graph(capsys, TUTORIAL, "out", "--max-nodes", "3")
    assert (status, out) == (0, "MeanBackward0  out = z.mean()  (line 13)\n"
                                "└── MulBackward0  z = y * y * 3  (line 12)\n"
                                "    └── MulBackward0  in z = y * y * 3  (line 12)\n"
                                "        ├── … (stopped after 3 nodes)\n")
    assert graph(capsys, TUTORIAL, "out", "--max-depth", "0", "--max-nodes", "0")[1] == TUTORIAL_OUT


def test_a_leaf_is_its_accumulate_grad_line(capsys, tmp_path):
    path = script(tmp_path, "import torch\nw = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)\n")
    assert graph(capsys, path, "w") == (0, "AccumulateGrad ─ w: [2, 3] float64  (line 2)\n", "")


# --------------------------------------------------------------------------------------- DOT and JSON
def check_dot(text: str) -> tuple[set, list]:
    """A small DOT checker: braces balance outside strings, every statement ends in ';', and every
    edge joins declared nodes. Returns (declared node ids, edges)."""
    depth, quoted, escaped = 0, False, False
    for c in text:
        if quoted:
            quoted = escaped or c != '"'
            escaped = not escaped and c == "\\"
        elif c == '"':
            quoted = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            assert depth >= 0, "unbalanced braces"
    assert depth == 0 and not quoted
    lines = text.strip().splitlines()
    assert lines[0].startswith("digraph ") and lines[0].endswith("{") and lines[-1] == "}"
    declared, edges = set(), []
    for line in lines[1:-1]:
        line = line.strip()
        if line.startswith("//"):
            continue
        assert line.endswith(";"), line
        edge = re.match(r"(\w+) -> (\w+)( \[.*\])?;$", line)
        if edge:
            edges.append((edge[1], edge[2]))
            continue
        node = re.match(r'(\w+) \[label=".*"(, [\w]+=[^,\]]+)*\];$', line)
        if node and node[1] not in ("graph", "node", "edge"):
            declared.add(node[1])
    for a, b in edges:
        assert a in declared and b in declared, (a, b)
    return declared, edges


def test_dot_output_is_valid_and_coloured_like_torchviz(capsys):
    status, out, err = graph(capsys, TUTORIAL, "b", "--format", "dot")
    assert (status, err) == (0, "")
    declared, edges = check_dot(out)
    assert 'output [label="b\\n[] float32", fillcolor=darkolivegreen1];' in out
    assert 'n0 [label="SumBackward0\\nb = (a * a).sum()\\nline 21"];' in out
    assert 'n1 [label="MulBackward0\\nin b = (a * a).sum()\\nline 21"];' in out
    assert 'n2 [label="a\\n[2, 2] float32\\nAccumulateGrad\\nline 17", fillcolor=lightblue];' in out
    assert 'n1_s0 [label="saved\\n[2, 2] float32", fillcolor=orange];' in out   # b had no backward
    # backward direction: output -> root -> ... -> the leaf; `a * a` has two edges to the leaf
    assert [e for e in edges if not e[0].endswith(("_s0", "_s1"))] == [
        ("output", "n0"), ("n0", "n1"), ("n1", "n2"), ("n1", "n2")]
    assert declared == {"output", "n0", "n1", "n1_s0", "n1_s1", "n2"}


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_dot_renders_with_graphviz(capsys, tmp_path):
    status, out, _ = graph(capsys, TUTORIAL, "out", "--format", "dot")
    assert status == 0
    plain = subprocess.run(["dot", "-Tplain"], input=out, capture_output=True, text=True, check=True).stdout
    assert plain.count("\nnode ") == 6 and plain.count("\nedge ") == 6
    svg = tmp_path / "out.svg"
    assert graph(capsys, TUTORIAL, "out", "-o", str(svg)) == (0, "", "")
    assert "<svg" in svg.read_text() and "MeanBackward0" in svg.read_text()


def check_graph_json(document: dict) -> None:
    """The schema of `--format json` (docs/graph.md)."""
    assert set(document) == {"file", "tensor", "root", "truncated", "nodes", "edges"}
    ids = [n["id"] for n in document["nodes"]]
    assert ids == list(range(len(ids)))
    assert document["root"] == 0
    for node in document["nodes"]:
        assert isinstance(node["name"], str) and node["variable"] is None or isinstance(node["variable"], str)
        if node["name"] == "AccumulateGrad":
            assert isinstance(node["shape"], list) and isinstance(node["dtype"], str)
        else:
            assert node["saved"] is None or all({"kind", "shape", "dtype"} == set(s) for s in node["saved"])
        if "line" in node:
            assert isinstance(node["line"], int) and isinstance(node["source"], str)
    for edge in document["edges"]:
        assert set(edge) == {"from", "to", "input"}
        assert edge["from"] in ids and edge["to"] in ids


def test_json_output(capsys):
    status, out, _ = graph(capsys, TUTORIAL, "out", "--format", "json")
    assert status == 0
    document = json.loads(out)
    check_graph_json(document)
    assert document["file"] == TUTORIAL and document["truncated"] is False
    assert document["tensor"] == {"name": "out", "shape": [], "dtype": "float32", "requires_grad": True,
                                  "grad_fn": "MeanBackward0"}
    nodes = document["nodes"]
    assert [(n["name"], n["variable"], n.get("line")) for n in nodes] == [
        ("MeanBackward0", "out", 13), ("MulBackward0", "z", 12), ("MulBackward0", None, 12),
        ("AddBackward0", "y", 7), ("AccumulateGrad", "x", 4)]
    assert nodes[2] == {"id": 2, "name": "MulBackward0", "variable": None, "line": 12,
                        "source": "z = y * y * 3", "bound": False, "saved": None}   # freed by backward()
    assert nodes[4] == {"id": 4, "name": "AccumulateGrad", "variable": "x", "line": 4,
                        "source": "x = torch.ones(2, 2, requires_grad=True)", "shape": [2, 2], "dtype": "float32"}
    assert [(e["from"], e["to"], e["input"]) for e in document["edges"]] == [
        (0, 1, 0), (1, 2, 0), (2, 3, 0), (2, 3, 1), (3, 4, 0)]


# -------------------------------------------------------------------------------------- a deep chain
def test_a_deep_chain_in_every_format(capsys, tmp_path):
    """The whole of a 100,000-node chain as JSON (every node walked, none by recursion); the limits of the
    text and DOT formats on a chain of 2,000 (they stop at their depth whatever lies below)."""
    path = script(tmp_path, CHAIN.format(n=100000))
    status, out, _ = graph(capsys, path, "--format", "json", "--max-depth", "0", "--max-nodes", "0")
    document = json.loads(out)
    assert len(document["nodes"]) == 100001 and len(document["edges"]) == 100000
    assert document["nodes"][-1]["variable"] == "x" and document["nodes"][-1]["line"] == 2
    path = script(tmp_path, CHAIN.format(n=2000), "short.grad")
    status, out, err = graph(capsys, path, "--max-depth", "3")
    assert (status, err) == (0, "")
    assert out == ("MulBackward0  y = y * 1.0001  (line 5)\n"
                   "└── MulBackward0  y = y * 1.0001  (line 5)\n"
                   "    └── MulBackward0  y = y * 1.0001  (line 5)\n"
                   "        └── … (1 input below max_depth=3)\n")
    status, out, _ = graph(capsys, path, "--max-depth", "0", "--max-nodes", "5")
    assert out.splitlines()[-1] == "                └── … (stopped after 5 nodes)"
    status, out, _ = graph(capsys, path, "--format", "dot")            # default limits: 40 levels
    declared, edges = check_dot(out)
    assert len(declared) == 1 + 40 + 1 and "n39_more" in declared and ("n39", "n39_more") in edges


# ------------------------------------------------------------------------------------------ -o FILE
def test_output_files_by_extension(capsys, tmp_path):
    for ext, check in ((".txt", lambda t: t == TUTORIAL_OUT), (".json", lambda t: json.loads(t)["root"] == 0),
                       (".dot", lambda t: bool(check_dot(t)))):
        target = tmp_path / f"g{ext}"
        assert graph(capsys, TUTORIAL, "out", "-o", str(target)) == (0, "", "")
        assert check(target.read_text(encoding="utf-8"))
    status, _, err = graph(capsys, TUTORIAL, "out", "-o", str(tmp_path / "g.bmp"))
    assert status == 2 and err.startswith("gradcli graph: -o ") and "give a file ending in .txt" in err
    status, _, err = graph(capsys, TUTORIAL, "out", "--format", "json", "-o", str(tmp_path / "g.dot"))
    assert status == 2 and "--format json does not match -o" in err


def test_pictures_without_graphviz_say_how_to_install_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    target = tmp_path / "g.svg"
    status, out, err = graph(capsys, TUTORIAL, "out", "-o", str(target))
    assert (status, out) == (2, "")
    assert err == (f"gradcli graph: drawing {target} needs Graphviz's dot program, which is not installed: "
                   "install Graphviz (apt install graphviz, dnf install graphviz or brew install graphviz), "
                   f"or write DOT with -o {tmp_path / 'g'}.dot\n")
    assert not target.exists()


def test_pictures_without_graphviz_end_to_end(tmp_path):
    """The installed command, with no `dot` on PATH (whether or not this machine has Graphviz)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=str(tmp_path))
    p = subprocess.run([sys.executable, "-m", "gradcli", "graph", TUTORIAL, "out", "-o", str(tmp_path / "g.png")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and "apt install graphviz" in p.stderr


# ------------------------------------------------------------------------------------------- errors
def test_names_that_cannot_be_drawn(capsys, tmp_path):
    path = script(tmp_path, "import torch\nx = torch.ones(2, requires_grad=True)\nn = 3\nc = torch.ones(2)\n"
                            "def f(a):\n    return a\n")
    hint = " (tensors that require grad: x)\n"
    assert graph(capsys, path, "nope") == (2, "", f"gradcli graph: {path} defines no name 'nope'{hint}")
    assert graph(capsys, path, "n") == (2, "", f"gradcli graph: 'n' is not a tensor but a value of type int{hint}")
    assert graph(capsys, path, "f") == (2, "", f"gradcli graph: 'f' is not a tensor but a function{hint}")
    assert graph(capsys, path, "torch") == (2, "", f"gradcli graph: 'torch' is not a tensor but a module{hint}")
    assert graph(capsys, path, "c") == (
        2, "", f"gradcli graph: 'c' does not require grad, so it has no backward graph{hint}")
    assert graph(capsys, path) == (
        2, "", f"gradcli graph: {path} assigns no tensor that has a grad_fn; name one: gradcli graph SCRIPT NAME{hint}")


def test_script_errors_are_reported_as_run_reports_them(capsys, tmp_path):
    path = script(tmp_path, "import torch\nx = torch.ones(2, requires_grad=True)\nprint('hidden')\n"
                            "y = x * torch.ones(3)\n")
    status, out, err = graph(capsys, path)
    assert (status, out) == (1, "")
    assert err.splitlines() == [
        f"{path}:4:5: RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at "
        "non-singleton dimension 0", "    y = x * torch.ones(3)", "        ^"]
    path = script(tmp_path, "import torch\nx = (1\n", "bad.grad")
    status, out, err = graph(capsys, path)
    assert (status, out) == (2, "") and err.startswith(f"{path}:2:5: SyntaxError: ")
    status, out, err = graph(capsys, str(tmp_path / "missing.grad"))
    assert (status, out) == (2, "") and "cannot read" in err


def test_bad_limits_are_usage_errors(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["graph", TUTORIAL, "--max-depth", "-1"])
    assert stop.value.code == 2
    assert "argument --max-depth: expected a whole number, 0 or more (0: no limit), not '-1'" in capsys.readouterr().err


def test_script_from_stdin_and_the_console_script(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = launcher.run(["graph", "-", "--ascii"],
                     input="import torch\nx = torch.ones(2, requires_grad=True)\nprint(x)\ny = (x * 2).sum()\n",
                     env=env, timeout=60)
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout == ("SumBackward0  y = (x * 2).sum()  (line 4)\n"      # the script's print is not shown
                        "`-- MulBackward0  in y = (x * 2).sum()  (line 4)\n"
                        "    `-- AccumulateGrad - x: [2] float32  (line 2)\n")


def test_run_never_loads_the_graph_module(tmp_path):
    """Provenance costs `gradcli run` nothing: not even the import of gradcli.diagnostics.graphview."""
    path = script(tmp_path, "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n")
    code = ("import sys\nfrom gradcli import cli\nstatus = cli.main(['run', sys.argv[1]])\n"
            "print(status, 'gradcli.diagnostics.graphview' in sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.stdout == "0 False\n"
