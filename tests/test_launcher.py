"""tests/launcher.py runs the gradcli command in children forked from a warm process: each call must give
what a real `python -m gradcli` process gives (status, stdout, stderr), or start a real one."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import launcher

ROOT = Path(__file__).resolve().parent.parent
SECONDS = re.compile(r'"seconds":[0-9.e-]+')       # jsonl's end event times the run
ENV = {k: v for k, v in dict(os.environ, PYTHONPATH=str(ROOT)).items() if k != "GRADCLI_TRACEBACK"}

CALLS = [
    (["--seed", "0", "run", "examples/tutorial.grad"], None),
    (["-c", "import torch\nx = torch.ones(2, requires_grad=True)\nprint((x * x).sum())\nx.grad.zero_()"], None),
    (["-c", "x = (1,"], None),                                        # syntax error: 2
    (["--format", "jsonl", "-c", "print(1)\nprint(undefined)"], None),  # runtime error: 1
    (["--timeout", "0.5", "-c", "while True: pass"], None),             # 124
    (["run", "-"], "import torch\nprint(torch.arange(3.) * 2)\n"),      # standard input
    (["rnu", "x.grad"], None),                                          # usage: 2
    (["--seed", "3", "-c", "import torch\nprint(torch.rand(2))"], None),
    (["--color", "always", "-c", "1/0"], None),
    (["--check-grads", "-c", "import torch\nx = torch.ones(2, requires_grad=True)\n(x.sin() * x).sum().backward()"],
     None),
]


@pytest.mark.parametrize("args, stdin", CALLS)
def test_a_forked_call_gives_what_a_process_gives(args, stdin):
    real = subprocess.run([sys.executable, "-m", "gradcli", *args], input=stdin, capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=60)
    forked = launcher.run(args, input=stdin, env=ENV, cwd=ROOT, timeout=60)
    masked = [SECONDS.sub("seconds", launcher.ADDRESS.sub("0x?", t))
              for t in (real.stdout, real.stderr, forked.stdout, forked.stderr)]
    assert (forked.returncode, masked[2], masked[3]) == (real.returncode, masked[0], masked[1])


def test_the_call_is_its_own_process_with_its_arguments_environment_and_folder(tmp_path):
    (tmp_path / "s.grad").write_text("print(1)\n")
    narrow = launcher.run(["run", "--help"], env=dict(ENV, COLUMNS="40"), cwd=tmp_path, timeout=60).stdout
    wide = launcher.run(["run", "--help"], env=dict(ENV, COLUMNS="200"), cwd=tmp_path, timeout=60).stdout
    assert narrow != wide and narrow == subprocess.run([sys.executable, "-m", "gradcli", "run", "--help"], text=True,
                                                       capture_output=True, env=dict(ENV, COLUMNS="40")).stdout
    assert launcher.run(["run", "s.grad"], env=ENV, cwd=tmp_path, timeout=60).stdout == "1\n"


def test_a_call_that_overstays_is_killed_as_subprocess_run_kills_it():
    with pytest.raises(subprocess.TimeoutExpired):
        launcher.run(["-c", "while True:\n    pass"], env=ENV, timeout=1)
    assert launcher.run(["-c", "print(2)"], env=ENV, timeout=60).stdout == "2\n"     # the server carries on


def test_what_start_up_reads_starts_a_real_process(tmp_path, monkeypatch):
    calls = []
    real = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    launcher.run(["-c", "print(1)"], env=dict(ENV, XDG_CACHE_HOME=str(tmp_path)), timeout=60)
    monkeypatch.setenv("GRADCLI_TEST_SUBPROCESS", "1")
    launcher.run(["-c", "print(1)"], env=ENV, timeout=60)
    assert calls == [[sys.executable, "-m", "gradcli", "-c", "print(1)"]] * 2
