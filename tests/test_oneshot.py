"""`gradcli grad | jacobian | hessian`: the goldens PyTorch wrote (tools/oneshot_goldens.py), inputs,
usage and runtime errors with their exit statuses, --format jsonl, and a real process."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli import cli

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = ROOT / "tests" / "oneshot"
CASES = sorted(p.stem for p in GOLDENS.glob("*.args"))


def _load_tool():
    spec = importlib.util.spec_from_file_location("oneshot_goldens", ROOT / "tools" / "oneshot_goldens.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = _load_tool()


def gradcli(capsys, *args):
    """Run `gradcli ARGS` in this process: (status, stdout, stderr)."""
    status = cli.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def events_of(out: str) -> list:
    return [json.loads(line) for line in out.splitlines()]


def golden(name: str, suffix: str) -> str | None:
    path = GOLDENS / f"{name}{suffix}"
    return path.read_text(encoding="utf-8") if path.exists() else None


# ----------------------------------------------------------------------------- PyTorch's numbers

def test_the_goldens_cover_the_cases_the_issue_names():
    assert len(CASES) >= 20
    for needed in ("tutorial", "polynomial", "softmax_cross_entropy", "two_layer_network", "newton_root",
                   "newton_rosenbrock_hessian", "hessian_two_inputs", "newton_rosenbrock_hvp"):
        assert needed in CASES
    assert set(CASES) == set(TOOL.CASES)            # the tool's table and the files agree


@pytest.mark.parametrize("name", CASES)
def test_text_output_is_pytorchs_byte_for_byte(capsys, name):
    args = json.loads(golden(name, ".args"))
    status, out, err = gradcli(capsys, *args)
    assert out == golden(name, ".out")
    expected_error = golden(name, ".err")
    if expected_error is None:
        assert status == 0
        assert all(line.startswith(f"gradcli {args[0]}: note: ") for line in err.splitlines())
    else:
        assert status == 1
        assert err.splitlines()[0].endswith(": " + expected_error.strip())


@pytest.mark.parametrize("name", CASES)
def test_jsonl_events_hold_pytorchs_numbers(capsys, name):
    args = json.loads(golden(name, ".args"))
    status, out, err = gradcli(capsys, *args, "--format", "jsonl")
    assert err == ""
    events = events_of(out)
    end = events.pop()
    assert end["event"] == "end" and end["file"] == "<expr>"
    expected_error = golden(name, ".err")
    if expected_error is None:
        assert (status, end["ok"]) == (0, True)
        expected = events_of(golden(name, ".jsonl"))
        assert TOOL.same_events(events, expected), (events, expected)
    else:
        assert (status, end["ok"]) == (1, False)
        error = events[-1]
        assert error["event"] == "error"
        assert f"{error['type']}: {error['message']}" == expected_error.strip()


def test_same_events_allows_float32_rounding_only():
    a = [{"event": "grad", "value": {"data": [0.3029682, 1.0], "dtype": "float32"}}]
    b = [{"event": "grad", "value": {"data": [0.30296814, 1.0], "dtype": "float32"}}]
    assert TOOL.same_events(a, b)
    assert not TOOL.same_events(a, [{"event": "grad", "value": {"data": [0.3031, 1.0], "dtype": "float32"}}])
    assert not TOOL.same_events(a, [{"event": "grad", "value": {"data": [0.3029682, 1.0], "dtype": "float64"}}])
    assert not TOOL.same_events([1.0], [1.0, 2.0])
    assert not TOOL.same_events([True], [1.0])


# -------------------------------------------------------------------------------------- the layout

TUTORIAL_OUT = """\
value:
tensor(27.)
x.grad:
tensor([[4.5000, 4.5000],
        [4.5000, 4.5000]])
"""


def test_the_tutorial_in_a_real_process():
    done = launcher.run(["grad", "(3*(x+2)**2).mean()", "x=torch.ones(2,2)"], cwd=ROOT)
    assert (done.returncode, done.stdout, done.stderr) == (0, TUTORIAL_OUT, "")


def test_a_runtime_error_in_a_real_process_exits_1_with_pytorchs_message():
    done = launcher.run(["grad", "x**2", "x=[1., 2.]"], cwd=ROOT, env={**os.environ, "NO_COLOR": "1"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("<expr>: RuntimeError: grad can be implicitly created only for scalar outputs\n"
                           "hint: EXPR has shape [2]: reduce it to one number (.sum(), .mean()) or give "
                           "--grad-output VALUE of that shape\n")


def test_bare_names_and_the_torch_prefix_are_the_same(capsys):
    bare = gradcli(capsys, "grad", "(sin(x) * x**2).sum()", "x=ones(3)")
    prefixed = gradcli(capsys, "grad", "(torch.sin(x) * x**2).sum()", "x=torch.ones(3)")
    assert bare == prefixed and bare[0] == 0


def test_inputs_win_over_torch_names(capsys):
    # t, e and sum are torch names (torch.t, torch.e, torch.sum): given as inputs, the inputs win
    status, out, err = gradcli(capsys, "grad", "t * e * sum", "t=2.0", "e=3.0", "sum=4.0")
    assert (status, err) == (0, "")
    assert out == "value:\ntensor(24.)\nt.grad:\ntensor(12.)\ne.grad:\ntensor(8.)\nsum.grad:\ntensor(6.)\n"


def test_F_is_torch_nn_functional(capsys):
    assert gradcli(capsys, "grad", "F.relu(x).sum()", "x=[-1., 2.]")[1] == \
        gradcli(capsys, "grad", "torch.nn.functional.relu(x).sum()", "x=[-1., 2.]")[1]


def test_integers_are_constants_with_a_note(capsys):
    status, out, err = gradcli(capsys, "grad", "x ** n", "x=2.0", "n=3")
    assert status == 0
    assert out == "value:\ntensor(8.)\nx.grad:\ntensor(12.)\n"
    assert err == "gradcli grad: note: n=3 is an integer, so it is not differentiated (write 3.0 to differentiate it)\n"


def test_an_integer_tensor_is_a_constant_with_a_note(capsys):
    status, out, err = gradcli(capsys, "grad", "(x * k).sum()", "x=[1., 2.]", "k=[3, 4]")
    assert (status, out) == (0, "value:\ntensor(11.)\nx.grad:\ntensor([3., 4.])\n")
    assert err.startswith("gradcli grad: note: k is a tensor of torch.int64, so it is not differentiated")


def test_a_tuple_stays_a_tuple_without_a_note(capsys):
    status, out, err = gradcli(capsys, "grad", "x.reshape(s).sum()", "x=[1., 2., 3., 4.]", "s=(2, 2)")
    assert (status, err) == (0, "")
    assert out.endswith("x.grad:\ntensor([1., 1., 1., 1.])\n")


def test_a_computed_tensor_becomes_a_leaf_input(capsys):
    # y is computed from x, yet as an input it is a leaf of its own: its gradient is y.grad, and
    # none of it flows back into x
    status, out, _ = gradcli(capsys, "grad", "x * y", "x=2.0", "y=x * 3")
    assert status == 0
    assert out == "value:\ntensor(12.)\nx.grad:\ntensor(6.)\ny.grad:\ntensor(2.)\n"


def test_wrt_holds_the_other_inputs_constant(capsys):
    status, out, err = gradcli(capsys, "grad", "--wrt", "w", "(w * x).sum()", "w=[1., 2.]", "x=[3., 4.]")
    assert (status, err) == (0, "")
    assert out == "value:\ntensor(11.)\nw.grad:\ntensor([3., 4.])\n"


def test_seed_before_or_after_the_command(capsys):
    after = gradcli(capsys, "grad", "--seed", "0", "(x**2).sum()", "x=randn(3)")
    before = gradcli(capsys, "--seed", "0", "grad", "(x**2).sum()", "x=randn(3)")
    trailing = gradcli(capsys, "grad", "(x**2).sum()", "x=randn(3)", "--seed", "0")
    assert after == before == trailing
    assert after[1] == golden("seeded_randn", ".out")


def test_an_expression_starting_with_a_minus_after_double_dash(capsys):
    assert gradcli(capsys, "grad", "--", "-x**2", "x=1.0") == (0, "value:\ntensor(-1.)\nx.grad:\ntensor(-2.)\n", "")


def test_legacy_display(capsys):
    status, out, _ = gradcli(capsys, "grad", "--display", "legacy", "(x * x).sum()", "x=[1., 2.]")
    assert status == 0
    assert "x.grad:\nVariable containing:\n 2\n 4\n[torch.FloatTensor of size 2]\n" in out


def test_jacobian_of_a_scalar_is_its_gradient(capsys):
    _, jac, _ = gradcli(capsys, "jacobian", "(x**3).sum()", "x=[1., 2.]")
    _, grad, _ = gradcli(capsys, "grad", "(x**3).sum()", "x=[1., 2.]")
    assert jac.split("\n", 2)[2] == "jacobian (x):\ntensor([ 3., 12.])\n"
    assert grad.split("\n", 2)[2] == "x.grad:\ntensor([ 3., 12.])\n"


# ----------------------------------------------------------------------------------------- errors

@pytest.mark.parametrize("args, message", [
    (["grad", "x**2", "x"], "gradcli grad: expected NAME=VALUE, got 'x'"),
    (["grad", "x**2", "1x=2.0"], "gradcli grad: '1x' in '1x=2.0' is not a valid name"),
    (["grad", "x**2", "for=2.0"], "gradcli grad: 'for' in 'for=2.0' is not a valid name"),
    (["grad", "x**2", "x=1.0", "x=2.0"], "gradcli grad: x is given twice"),
    (["grad", "x**2", "x="], "gradcli grad: x= has no value"),
    (["grad", "--wrt", "q", "x**2", "x=1.0"], "gradcli grad: --wrt q: no input is named q (inputs given: x)"),
    (["grad", "--wrt", "n", "x**n", "x=1.0", "n=2"], "gradcli grad: --wrt n: n=2 is an integer"),
    (["grad", "n * 2", "n=3"], "gradcli grad: nothing to differentiate"),
    (["jacobian", "sin(1.0)"], "gradcli jacobian: nothing to differentiate"),
])
def test_usage_errors_exit_2_with_one_line(capsys, args, message):
    status, out, err = gradcli(capsys, *args)
    assert (status, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1


def test_a_syntax_error_in_expr_has_its_column_and_exits_2(capsys):
    status, out, err = gradcli(capsys, "grad", "sin(x", "x=1.0")
    assert (status, out) == (2, "")
    assert err == "<expr>:1:4: SyntaxError: '(' was never closed\n    sin(x\n       ^\n"


def test_a_statement_is_not_an_expression(capsys):
    status, _, err = gradcli(capsys, "grad", "y = x", "x=1.0")
    assert status == 2
    assert err.startswith("<expr>:1:1: SyntaxError: EXPR must be one expression")


def test_a_syntax_error_in_a_value_names_the_input(capsys):
    status, _, err = gradcli(capsys, "grad", "x", "x=ones(2")
    assert status == 2
    assert err == "<x>:1:5: SyntaxError: '(' was never closed\n    ones(2\n        ^\n"


def test_a_value_that_fails_to_evaluate_exits_1(capsys):
    status, _, err = gradcli(capsys, "grad", "x", "x=foo(3)")
    assert status == 1
    assert err == "<x>:1:1: NameError: name 'foo' is not defined\n    foo(3)\n    ^\n"


def test_an_unknown_name_in_expr_gets_a_hint(capsys):
    status, out, err = gradcli(capsys, "grad", "x * y", "x=2.0")
    assert (status, out) == (1, "")
    assert err == ("<expr>:1:5: NameError: name 'y' is not defined\n    x * y\n        ^\n"
                   "hint: give y a value on the command line: y=VALUE\n")


def test_a_runtime_error_in_expr_is_located(capsys):
    status, _, err = gradcli(capsys, "grad", "(x + ones(3)).sum()", "x=ones(2)")
    assert status == 1
    first, source, caret = err.splitlines()
    assert first.startswith("<expr>:1:") and first.endswith(
        ": RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0")
    assert (source, caret.strip()) == ("    (x + ones(3)).sum()", "^")


def test_a_value_that_is_not_a_tensor_cannot_backward(capsys):
    status, _, err = gradcli(capsys, "grad", "(x, x)", "x=1.0")
    assert status == 1
    assert err == "<expr>: AttributeError: 'tuple' object has no attribute 'backward'\n"


def test_errors_in_jsonl_are_events(capsys):
    status, out, err = gradcli(capsys, "grad", "--format", "jsonl", "x * y", "x=2.0")
    assert (status, err) == (1, "")
    kinds = [e["event"] for e in events_of(out)]
    assert kinds == ["input", "error", "end"]
    error = events_of(out)[1]
    fields = ("event", "file", "line", "col", "type", "message")
    assert {k: error[k] for k in fields} == {"event": "error", "file": "<expr>", "line": 1, "col": 5,
                                             "type": "NameError", "message": "name 'y' is not defined"}


def test_jsonl_inputs_say_what_is_differentiated(capsys):
    status, out, _ = gradcli(capsys, "grad", "--format", "jsonl", "x ** n", "x=2.0", "n=3")
    inputs = [e for e in events_of(out) if e["event"] == "input"]
    assert [(e["var"], e["differentiated"]) for e in inputs] == [("x", True), ("n", False)]
    assert inputs[1]["value"] == 3 and inputs[0]["value"]["requires_grad"] is True


@pytest.mark.skipif(not os.environ.get("ORACLE_PYTHON"), reason="needs $ORACLE_PYTHON, a Python with PyTorch 2.13")
def test_the_goldens_are_what_pytorch_prints_today():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "oneshot_goldens.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
