"""The benchmark suite keeps working: the runner prints its table, and every workload runs at tiny sizes.
No test here looks at a timing."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
HEADER = "| workload"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


params = load("params")


def runner(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / "run.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def table_rows(stdout: str) -> list[list[str]]:
    lines = [line for line in stdout.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_quick_parse_prints_the_table():
    p = runner("--quick", "--no-torch", "--only", "parse")
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout)
    assert rows[0] == ["workload", "gradcli", "numpy floor", "PyTorch", "ratio", "target", "met?"]
    assert [r[0] for r in rows[1:]] == ["parse: 1,000-line script (in-process)",
                                        "parse: 10,000-line script (in-process)",
                                        "parse: linearity, 10,000 / (10 x 1,000 lines)"]
    assert rows[2][5] == "<= 0.200 s" and rows[2][6] in ("yes", "**no**")
    assert "PyTorch column skipped" in p.stdout


def test_smoke_runs_every_workload_without_torch():
    p = runner("--smoke", "--no-torch")
    assert p.returncode == 0, p.stderr
    names = [r[0] for r in table_rows(p.stdout)[1:]]
    for start in ("start-up:", "per-op:", "classes", "MLP 784-512-10", "`((x*x).exp()", "deep chain", "parse:"):
        assert any(n.startswith(start) for n in names), (start, names)
    assert all(r[3] == "skipped" for r in table_rows(p.stdout)[1:] if r[0].startswith(("start-up", "per-op")))
    assert all(r[6] in ("n/a", "-") for r in table_rows(p.stdout)[1:])      # no verdicts at smoke sizes


def test_unknown_workload_is_a_usage_error():
    p = runner("--only", "parse,nonesuch")
    assert p.returncode == 2
    assert "unknown workload: nonesuch" in p.stderr


# Each .grad workload at tiny sizes, run as a user runs it, with what it must print.
TINY = {
    "perop.grad": (dict(N=3), r"tensor\(\[\[1\.0003, 1\.0003\],\n        \[1\.0003, 1\.0003\]\]\)\n"),
    "mlp.grad": (dict(STEPS=2, BATCH=4), r"loss \d+\.\d{4}\n"),
    "elementwise.grad": (dict(REPS=2, ROWS=3), r"\d+\.\d{4}\n"),
    "chain.grad": (dict(N=5), r"\d\.\d\de-0\d\n"),
    "train.grad": (dict(STEPS=3), r"loss \d\.\d{3}\n"),
    "rnn.grad": (dict(STEPS=3), r"loss \d\.\d{3}\n"),
    "convnet.grad": (dict(STEPS=2), r"loss \d\.\d{3}\n"),
    "classes.grad": (dict(STEPS=3), r"\{0: \d\.\d+\} -?\d+\.\d{4}\n"),
}


def test_every_grad_workload_is_checked_here():
    assert sorted(TINY) == sorted(p.name for p in BENCH.glob("*.grad"))


@pytest.mark.parametrize("name", sorted(TINY))
def test_grad_workload_runs_on_gradcli_at_tiny_size(name, tmp_path):
    sizes, expected = TINY[name]
    script = params.instantiate(BENCH / name, tmp_path, **sizes)
    p = launcher.run(["run", script], timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert re.fullmatch(expected, p.stdout), p.stdout


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.grad")) + sorted(BENCH.glob("*_numpy.py")),
                         ids=lambda p: p.name)
def test_workload_sizes_are_parameters(path):
    assert params.defaults(path), f"{path.name} declares no `NAME = value  # param` line"


def test_with_params_rewrites_only_the_named_sizes():
    source = "import torch\nN = 20000  # param\nB = True  # param\nM = 3\n"
    assert params.with_params(source, N=7) == "import torch\nN = 7  # param\nB = True  # param\nM = 3\n"
    assert params.with_params(source, B=False).splitlines()[2] == "B = False  # param"
    with pytest.raises(KeyError, match="no such parameter: M"):
        params.with_params(source, M=1)
