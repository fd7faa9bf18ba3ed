"""The command line end to end, as a user runs it: exit codes, stdout/stderr separation, error formats."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent


def gradcli(*args, stdin=None, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    return launcher.run(args, input=stdin, cwd=cwd, env=env, timeout=60)


def test_run_prints_tutorial_output(tmp_path):
    script = tmp_path / "t.grad"
    script.write_text("import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = x + 2\n"
                      "out = (y * y * 3).mean()\nout.backward()\nprint(out)\nprint(x.grad)\n")
    p = gradcli("run", str(script))
    assert p.returncode == 0
    assert p.stdout == ("tensor(27., grad_fn=<MeanBackward0>)\n"
                        "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n")
    assert p.stderr == ""


def test_syntax_error_format_and_status(tmp_path):
    script = tmp_path / "bad.grad"
    script.write_text("import torch\nx = torch.ones(2)\ny = (x + 2\n")
    p = gradcli("run", str(script))
    assert p.returncode == 2
    first, source, caret = p.stderr.splitlines()[:3]
    assert first.startswith(f"{script}:3:") and ": SyntaxError: " in first
    assert source == "    y = (x + 2"
    assert caret.strip() == "^"
    assert p.stdout == ""


def test_runtime_error_format_status_and_earlier_output(tmp_path):
    script = tmp_path / "err.grad"
    script.write_text("import torch\nx = torch.ones(2, requires_grad=True)\nprint('before')\n"
                      "y = x * torch.ones(3)\n")
    p = gradcli("run", str(script))
    assert p.returncode == 1
    assert p.stdout == "before\n"
    lines = p.stderr.splitlines()
    assert lines[0] == (f"{script}:4:5: RuntimeError: The size of tensor a (2) must match the size of "
                        "tensor b (3) at non-singleton dimension 0")
    assert lines[1] == "    y = x * torch.ones(3)"
    assert lines[2] == "        ^"
    assert "Traceback" not in p.stderr


def test_refused_construct_is_a_syntax_error():
    p = gradcli("-c", "def f():\n    print((yield))")
    assert p.returncode == 2
    assert p.stderr.startswith("<string>:2:11: SyntaxError: ")
    assert "yield" in p.stderr.splitlines()[0]


def test_dash_c_and_stdin():
    p = gradcli("-c", "import torch; print(torch.tensor([1.5, 2.]))")
    assert (p.returncode, p.stdout) == (0, "tensor([1.5000, 2.0000])\n")
    p = gradcli("run", "-", stdin="import torch\nprint(torch.zeros(2, dtype=torch.long))\n")
    assert (p.returncode, p.stdout) == (0, "tensor([0, 0])\n")


def test_seed_option_matches_manual_seed():
    p = gradcli("run", "--seed", "0", "-", stdin="import torch\nprint(torch.randn(3))\n")
    assert p.stdout == "tensor([ 1.5410, -0.2934, -2.1788])\n"
    p = gradcli("--seed", "0", "-c", "import torch\nprint(torch.rand(2))")
    assert p.stdout == "tensor([0.4963, 0.7682])\n"


def test_without_seed_streams_differ_between_runs():
    code = "import torch\nprint(torch.rand(4).tolist())"
    assert gradcli("-c", code).stdout != gradcli("-c", code).stdout


def test_each_script_gets_a_fresh_namespace(tmp_path):
    a, b = tmp_path / "a.grad", tmp_path / "b.grad"
    a.write_text("x = 1\nprint('a', x)\n")
    b.write_text("print('b', x)\n")
    p = gradcli("run", str(a), str(b))
    assert p.stdout == "a 1\n"
    assert p.returncode == 1
    assert f"{b}:1:12: NameError: name 'x' is not defined" in p.stderr


def test_missing_file_is_a_usage_error():
    p = gradcli("run", "does-not-exist.grad")
    assert p.returncode == 2
    assert p.stderr.strip() == "gradcli: cannot read 'does-not-exist.grad': No such file or directory"


def test_invalid_utf8_is_a_syntax_error(tmp_path):
    script = tmp_path / "bin.grad"
    script.write_bytes(b"x = 1\ny = '\xff'\n")
    p = gradcli("run", str(script))
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == f"{script}:2:6: SyntaxError: invalid UTF-8 byte 0xff (scripts must be UTF-8 text)"


def test_nonleaf_grad_warning_goes_to_stderr_once_per_line():
    code = ("import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\nprint(y.grad)\n"
            "for i in range(3):\n    g = y.grad\n")
    p = gradcli("run", "-", stdin=code)
    assert p.stdout == "None\n"
    warnings = [l for l in p.stderr.splitlines() if "UserWarning" in l]
    assert [w.split(": UserWarning")[0] for w in warnings] == ["<stdin>:4", "<stdin>:6"]
    assert "  print(y.grad)" in p.stderr.splitlines()


def test_version_and_help():
    p = gradcli("--version")
    assert p.returncode == 0 and p.stdout.startswith("gradcli ")
    p = gradcli("--help")
    assert p.returncode == 0 and "gradcli run" in p.stdout and "exit status" in p.stdout


def test_unknown_option_is_a_usage_error():
    p = gradcli("--no-such-option")
    assert p.returncode == 2


def test_output_pipes_into_a_closed_reader(tmp_path):
    script = tmp_path / "many.grad"
    script.write_text("for i in range(100000):\n    print(i)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run(f"{sys.executable} -m gradcli run {script} | head -n 2", shell=True,
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.stdout == "0\n1\n"
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples").glob("*.grad")))
def test_examples_run_and_match_pytorch(name):
    """Each example against PyTorch's output for the same script after torch.manual_seed(0)."""
    p = gradcli("run", "--seed", "0", str(ROOT / "examples" / name))
    assert p.returncode == 0, p.stderr
    expected = (ROOT / "tests" / "examples" / (name[:-5] + ".seed0.out")).read_text()
    import re
    assert re.sub(r"0x[0-9a-f]+", "0xADDR", p.stdout) == expected


def test_display_legacy_on_run_dash_c_and_stdin():
    repo = Path(__file__).resolve().parent.parent
    expected = (repo / "tests" / "examples" / "variable_notebook.legacy.out").read_text()
    for args in (["run", "--display", "legacy"], ["--display", "legacy", "run"]):
        result = gradcli(*args, str(repo / "examples" / "variable_notebook.grad"))
        assert result.returncode == 0, result.stderr
        assert result.stdout == expected
    code = "import torch; print(torch.tensor([1.5, 20.0]))"
    legacy = "\n  1.5000\n 20.0000\n[torch.FloatTensor of size 2]\n\n"       # a plain tensor: no Variable
    assert gradcli("--display", "legacy", "-c", code).stdout == legacy
    assert gradcli("--display", "legacy", stdin=code).stdout == legacy
    assert gradcli("-c", code).stdout == "tensor([ 1.5000, 20.0000])\n"
    bad = gradcli("run", "--display", "old", "x.grad")
    assert bad.returncode == 2 and "invalid choice: 'old'" in bad.stderr


def test_timing_footer_goes_to_stderr():
    import re
    result = gradcli("--timing", "-c", "print(1)")
    assert result.stdout == "1\n"
    assert re.fullmatch(r"Total running time of the script: \( 0 minutes \d+\.\d{3} seconds\)\n", result.stderr)
    both = gradcli("run", "--timing", str(ROOT / "examples" / "tutorial.grad"), str(ROOT / "examples" / "tutorial.grad"))
    assert both.stderr.count("Total running time of the script: ( 0 minutes ") == 2
    assert "Total running time" not in gradcli("-c", "print(1)").stderr


def test_colour_of_error_messages(tmp_path):
    script = tmp_path / "e.grad"
    script.write_text("x = 1\ny = x +\n")
    plain = gradcli("run", str(script))
    assert "\x1b[" not in plain.stderr                  # not a terminal: no colour by default
    painted = gradcli("run", "--color", "always", str(script))
    headline, source, caret = painted.stderr.splitlines()
    assert headline == f"\x1b[1;31m{script}:2:8: SyntaxError: unexpected end of line (expected an expression)\x1b[0m"
    assert (source, caret) == ("    y = x +", "\x1b[31m           ^\x1b[0m")
    assert painted.returncode == plain.returncode == 2
    assert gradcli("--color", "never", "run", str(script)).stderr == plain.stderr


def test_colour_auto_follows_the_terminal_and_no_color(monkeypatch):
    from gradcli.display.terminal import colour_wanted

    class Tty:
        def isatty(self):
            return True
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour_wanted(Tty()) and not colour_wanted(Tty(), "never")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(Tty()) and colour_wanted(Tty(), "always")


STABLE_SCRIPT = """\
import torch
x = torch.ones(2, requires_grad=True)
y = (x * 2).sum()
print(y.grad_fn)
print(y.grad_fn.next_functions)
print(y.grad_fn)
def f():
    pass
print(f, torch.no_grad(), torch.Generator())
"""


def test_stable_ids_are_the_same_every_run(tmp_path):
    import re
    script = tmp_path / "s.grad"
    script.write_text(STABLE_SCRIPT)
    first = gradcli("run", "--stable-ids", str(script))
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == "<SumBackward0 object at 0x7f0000000010>"
    assert lines[1] == "((<MulBackward0 object at 0x7f0000000020>, 0),)"
    assert lines[2] == lines[0]                                 # the same object keeps its address
    assert lines[3] == ("<function f at 0x7f0000000030> <torch.autograd.grad_mode.no_grad object at "
                        "0x7f0000000040> <torch._C.Generator object at 0x7f0000000050>")
    for option in (["--stable-ids", "run"], ["run", "--stable-ids"], ["--stable-ids", "-c", STABLE_SCRIPT]):
        args = option if "-c" in option else option + [str(script)]
        assert gradcli(*args).stdout == first.stdout
    plain = gradcli("run", str(script)).stdout.splitlines()
    assert re.fullmatch(r"<SumBackward0 object at 0x[0-9a-f]+>", plain[0]) and plain[0] != lines[0]


def test_stable_ids_restart_for_each_script(tmp_path):
    script = tmp_path / "s.grad"
    script.write_text("import torch\nprint(torch.ones(1, requires_grad=True).exp().grad_fn)\n")
    both = gradcli("run", "--stable-ids", str(script), str(script))
    assert both.stdout == "<ExpBackward0 object at 0x7f0000000010>\n" * 2
