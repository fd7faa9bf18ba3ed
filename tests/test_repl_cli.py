"""`gradcli repl` and bare `gradcli` from the command line, when stdin is not a terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

# every REPL test ends within this, whatever happens to the keys or the interrupt (pytest-timeout)
pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parent.parent


def gradcli(*args, stdin="", tmp_path=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    if tmp_path is not None:
        env["XDG_STATE_HOME"] = str(tmp_path)
    return launcher.run(args, input=stdin, env=env, timeout=60)


def test_repl_reads_units_from_a_pipe_and_echoes(tmp_path):
    p = gradcli("repl", "--seed", "0", stdin=(
        "import torch\nx = torch.rand(2, requires_grad=True)\nx\nfor i in range(2):\n    print(i)\n\n"
        "nope\ny = (x *\n  2)\ny.sum()\n%vars\n"), tmp_path=tmp_path)
    assert p.returncode == 0
    assert p.stdout == ("tensor([0.4963, 0.7682], requires_grad=True)\n0\n1\n"
                        "tensor(2.5290, grad_fn=<SumBackward0>)\n"
                        "name  shape  dtype    requires_grad  grad_fn       grad\n"
                        "x     [2]    float32  True           -             -\n"
                        "y     [2]    float32  True           MulBackward0  -\n"
                        "other names: i (int), torch (module)\n")
    assert p.stderr == "<stdin>:1:1: NameError: name 'nope' is not defined. Did you mean: 'None'?\n    nope\n    ^\n"
    assert not (tmp_path / "gradcli").exists()     # no history without a terminal


def test_repl_display_option():
    p = gradcli("repl", "--display", "legacy", stdin="import torch\ntorch.ones(1)\n")
    assert p.stdout == "\n 1\n[torch.FloatTensor of size 1]\n\n"
    p = gradcli("repl", "--display", "fancy")
    assert p.returncode == 2 and "invalid choice: 'fancy'" in p.stderr


def test_a_seed_manual_seed_refuses_is_a_usage_error():
    for args in (["repl", "--seed", "99999999999999999999999"], ["--seed", "99999999999999999999999", "-c", "1"]):
        p = gradcli(*args, stdin="1\n")
        assert p.returncode == 2
        assert p.stderr == "gradcli: --seed 99999999999999999999999: Overflow when unpacking long long\n"


def test_repl_help_lists_its_options():
    p = gradcli("repl", "--help")
    for option in ("--vi", "--auto-suggest", "--no-toolbar", "--seed N", "--display"):
        assert option in p.stdout


def test_bare_gradcli_runs_a_piped_script_without_echo():
    p = gradcli(stdin="1 + 1\nprint('one')\n")
    assert (p.returncode, p.stdout) == (0, "one\n")


def test_only_the_repl_imports_prompt_toolkit(tmp_path):
    script = tmp_path / "s.grad"
    script.write_text("import torch\nprint(torch.ones(1))\n")
    probe = ("import sys\nfrom gradcli import cli\nstatus = cli.main(sys.argv[1:])\n"
             "print(status, any(m.split('.')[0] == 'prompt_toolkit' for m in sys.modules))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args, stdin in ((["run", str(script)], ""), (["-c", "print(2)"], ""), ([], "print(3)\n"),
                        (["repl"], "4\n")):
        p = subprocess.run([sys.executable, "-c", probe, *args], input=stdin, capture_output=True, text=True,
                           env=env, timeout=60)
        expected = "True" if args == ["repl"] else "False"
        assert p.stdout.splitlines()[-1] == f"0 {expected}", (args, p.stdout, p.stderr)


def test_run_imports_nothing_of_the_kernel_or_jupyter(tmp_path):
    """`gradcli run` starts as fast with the jupyter extra installed: the kernel, ipykernel, zmq,
    jupyter_client, nbformat and nbclient are imported only by the kernel and the notebook writer."""
    script = tmp_path / "s.grad"
    script.write_text("import torch\nprint(torch.ones(1))\n")
    jupyter = ("ipykernel", "zmq", "jupyter_client", "jupyter_core", "nbformat", "nbclient", "IPython", "tornado")
    probe = ("import sys\nfrom gradcli import cli\nstatus = cli.main(sys.argv[1:])\n"
             f"print(status, sorted({{m.split('.')[0] for m in sys.modules}} & set({jupyter!r})),"
             " 'gradcli.kernel' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args in (["run", str(script)], ["-c", "print(2)"]):
        p = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env, timeout=60)
        assert p.stdout.splitlines()[-1] == "0 [] False", (args, p.stdout, p.stderr)


def test_the_kernel_uses_the_repl_s_shell_without_prompt_toolkit():
    pytest.importorskip("ipykernel", reason="the Jupyter kernel needs the jupyter extra: pip install -e '.[jupyter]'")
    probe = ("import sys\nimport gradcli.kernel.__main__, gradcli.kernel.kernel\n"
             "print('gradcli.repl.shell' in sys.modules, any(m.split('.')[0] == 'prompt_toolkit' for m in sys.modules))\n")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert p.stdout.splitlines()[-1] == "True False", p.stderr


def test_one_colour_policy_for_run_and_the_repl(monkeypatch):
    """FORCE_COLOR colours off a terminal, NO_COLOR wins over it (but not over --color always),
    TERM=dumb turns colour off; `gradcli -c` and `gradcli repl` follow the same rule."""
    from gradcli.display.terminal import colour_wanted

    class Tty:
        def isatty(self):
            return True
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "dumb")
    assert not colour_wanted(Tty()) and colour_wanted(Tty(), "always")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert colour_wanted(Tty()) and colour_wanted(object())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(Tty()) and colour_wanted(Tty(), "always")
    monkeypatch.setenv("FORCE_COLOR", "")
    monkeypatch.delenv("NO_COLOR")
    assert not colour_wanted(object())

    red = "\x1b[1;31m"
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "GRADCLI_TRACEBACK")}
    env["PYTHONPATH"] = str(ROOT)
    for args, stdin in ((["-c", "nope"], ""), (["repl"], "nope\n")):
        def stderr(**extra):
            return launcher.run([*args, *extra.pop("flags", [])], input=stdin, env=dict(env, **extra),
                                timeout=60).stderr
        assert red not in stderr()                                   # not a terminal
        assert stderr(FORCE_COLOR="1").startswith(red)
        assert red not in stderr(FORCE_COLOR="1", NO_COLOR="1")
        assert stderr(NO_COLOR="1", flags=["--color", "always"]).startswith(red)
