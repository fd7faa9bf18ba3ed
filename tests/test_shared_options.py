"""Every shared option on every command: each (command, option) pair either changes what the command
does, as documented, or is refused with a usage error (exit status 2) in one line, whether the
option comes before the command or after it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gradcli import cli
from gradcli.commands import common

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent

ALL = ("seed", "display", "color", "timing", "format", "stable-ids", "check-grads", "nan-check", "timeout",
       "max-memory")
# What each command honours; every other shared option is refused.
HONOURED = {
    "run": ALL,
    "repl": ("seed", "display", "color", "format", "stable-ids", "max-memory"),
    "graph": ("seed", "color", "timing", "nan-check", "timeout", "max-memory"),
    "explain": ("seed", "color", "timing", "timeout", "max-memory"),
    "grad": ("seed", "display", "color", "timing", "format", "timeout", "max-memory"),
    "jacobian": ("seed", "display", "color", "timing", "format", "timeout", "max-memory"),
    "hessian": ("seed", "display", "color", "timing", "format", "timeout", "max-memory"),
    "help": (),
    "completion": (),
}
VALUE = {"seed": ["0"], "display": ["legacy"], "color": ["always"], "format": ["jsonl"], "timeout": ["0.5"],
         "max-memory": ["1M"]}

# The inputs that show each option's effect: an ordinary script (its branch depends on the seed, it
# prints a grad_fn address), one that fails, one that makes an inf, one that never ends, one that
# allocates 4 MB. The endless ones loop in Python, where the in-process timer stops them (a C loop is
# the supervising process's to end).
SCRIPTS = {
    "plain": "import torch\nx = torch.rand(2, requires_grad=True)\nif x[0].item() > 0.5:\n    y = (x * x).sum()\n"
             "else:\n    y = (x + x).sum()\ny.backward()\nprint(x.grad)\nprint(y.grad_fn)\n",
    "error": "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\nz = 1 / 0\n",
    "nan": "import torch\nx = torch.zeros(2, requires_grad=True)\ny = torch.log(x).sum()\ny.backward()\n",
    "loop": "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\n"
            "while True:\n    pass\n",
    "big": "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x.sum() * torch.zeros(10**6)).sum()\ny.backward()\n",
}
EXPRESSIONS = {"plain": "(x * x).sum()", "error": "(x * q).sum()", "nan": "log(x).sum()",
               "loop": "x.sum() * len(str(ones(10**6).split(1)))", "big": "(x.sum() * zeros(10**6)).sum()"}
ONESHOT_EXPR = {"grad": "{}", "jacobian": "{}", "hessian": "({})**2"}
REPL_INPUT = {"plain": "import torch\nx = torch.rand(2, requires_grad=True)\nprint((x * 2).grad_fn)\nx\n",
              "error": "1 / 0\n", "big": "import torch\ny = torch.zeros(10**6)\n"}


def _input(command, kind, tmp_path):
    """(the arguments after the command, stdin) for input `kind`."""
    if command in ONESHOT_EXPR:
        value = "zeros(2)" if kind == "nan" else "rand(2)"
        return [ONESHOT_EXPR[command].format(EXPRESSIONS[kind]), f"x={value}"], None
    if command == "repl":
        return [], REPL_INPUT.get(kind, REPL_INPUT["plain"])
    if command in ("help", "completion"):
        return [{"help": "usage", "completion": "bash"}[command]], None
    path = tmp_path / f"{kind}.grad"
    path.write_text(SCRIPTS[kind])
    return [str(path)] + {"graph": ["y"], "explain": ["x"]}.get(command, []), None


def _gradcli(argv, stdin, capsys, in_process):
    """(status, stdout, stderr) of `gradcli ARGV`: in this process, or in a child for the REPL, which
    reads stdin."""
    if in_process:
        status = cli.main(argv)
        captured = capsys.readouterr()
        return status, captured.out, captured.err
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    p = launcher.run(argv, input=stdin or "", env=env, timeout=60)
    return p.returncode, p.stdout, p.stderr


_BASES: dict = {}


def _base(command, kind, rest, stdin, capsys, in_process):
    """The run without the option, once per command and input (the REPL's runs are child processes)."""
    if (command, kind) not in _BASES:
        _BASES[command, kind] = _gradcli([command, *rest], stdin, capsys, in_process)
    return _BASES[command, kind]


def _kind(option):
    return {"color": "error", "nan-check": "nan", "timeout": "loop", "max-memory": "big"}.get(option, "plain")


def _argv(command, option, value, rest, before):
    flag = [f"--{option}", *value]
    return [*flag, command, *rest] if before else [command, *flag, *rest]


def _effect(option, base, got, other, repl=False):
    """Assert that `got` (with the option) shows the option's documented effect and `base` does not.
    `other` is the run with a second value (--seed 1)."""
    status, out, err = got
    if option == "seed":
        assert base[0] == status == other[0] == 0
        assert out != other[1]
    elif option == "display":
        assert "[torch.FloatTensor of size" in out and "[torch.FloatTensor" not in base[1]
    elif option == "color":
        assert "\x1b[" in err and "\x1b[" not in base[2] and status == base[0] and "Error" in err
    elif option == "timing":
        assert "Total running time of the script:" in err and "Total running time" not in base[2]
    elif option == "format":
        events = [json.loads(line) for line in out.splitlines()]
        assert events and all("event" in e for e in events)
    elif option == "stable-ids":
        assert "object at 0x7f00000000" in out and "object at 0x7f00000000" not in base[1]
    elif option == "check-grads":
        assert "elements checked" in err and "checked" not in base[2]
    elif option == "nan-check":
        assert (base[0], status) == (0, 4) and "--nan-check" in err
    elif option == "timeout":
        assert status == 124 and "TimeoutError" in err
    elif option == "max-memory":
        assert "--max-memory" not in base[2] and "--max-memory is 1.0 MiB" in err
        assert base[0] == 0 and status == (0 if repl else 1)     # the REPL reports the error and goes on
    if option not in ("color", "nan-check", "timeout", "max-memory"):
        assert status == 0


def test_the_table_is_what_the_parser_says():
    expected = dict(HONOURED, graph=HONOURED["graph"] + ("format",))   # graph's own --format: text, dot, json
    # `gradcli kernel install` writes these into the kernelspec, for every cell (tests/test_kernel.py)
    expected["kernel"] = ("seed", "display", "timeout", "max-memory", "stable-ids")
    cli._parser()                   # the command parsers declare what they honour as they are built
    assert {c: sorted(n) for c, n in common.honoured_by().items()} == \
        {**{c: sorted(n) for c, n in expected.items()}, "-c": sorted(ALL)}


CASES = [(c, o) for c in HONOURED for o in ALL]


@pytest.mark.parametrize("command,option", CASES, ids=[f"{c}-{o}" for c, o in CASES])
def test_every_option_is_honoured_or_refused(command, option, tmp_path, capsys):
    honoured = option in HONOURED[command]
    kind = _kind(option) if honoured else "plain"
    rest, stdin = _input(command, kind, tmp_path)
    in_process = command != "repl" or not honoured      # a refusal comes before the REPL reads stdin
    value = VALUE.get(option, [])
    if not honoured:
        for before in (True, False):
            status, out, err = _gradcli(_argv(command, option, value, rest, before), stdin, capsys, in_process)
            assert status == 2 and out == ""
            assert err.count("\n") == 1 and f"--{option}" in err and "does not apply to this command" in err, err
        return
    base = (0, "", "") if option == "timeout" else _base(command, kind, rest, stdin, capsys, in_process)
    positions = (True, False) if in_process else (True,)
    for before in positions:
        got = _gradcli(_argv(command, option, value, rest, before), stdin, capsys, in_process)
        other = _gradcli(_argv(command, option, ["1"], rest, before), stdin, capsys, in_process) \
            if option == "seed" else None
        _effect(option, base, got, other, command == "repl")


def test_a_refusal_names_where_the_option_applies(capsys):
    assert cli.main(["--check-grads", "graph", "s.grad"]) == 2
    assert capsys.readouterr().err == "gradcli graph: --check-grads does not apply to this command " \
                                      "(it applies to run, -c)\n"
    assert cli.main(["graph", "--format", "jsonl", "s.grad"]) == 2
    assert capsys.readouterr().err == "gradcli graph: --format jsonl does not apply to this command " \
                                      "(its formats are text, dot and json)\n"


def test_an_option_given_with_its_default_value_is_accepted(tmp_path, capsys):
    rest, _ = _input("explain", "plain", tmp_path)
    assert cli.main(["--format", "text", "--display", "modern", "explain", *rest]) == 0
    assert "How y.backward()" in capsys.readouterr().out
