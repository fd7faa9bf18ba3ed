"""--check-grads and --nan-check: scripts with known answers pass, a wrong backward formula is caught
and located, nan and inf are stopped at the op or node that made them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli.diagnostics import checks, replay
from gradcli import cli
from gradcli.engine import backward
from gradcli.engine.ops import arith, reduce
from gradcli.engine.tensor import Tensor

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ROOT / "tests" / "checks"
OK = re.compile(r"^(.+):(\d+): (backward|autograd\.grad)\(\)(, call \d+ of \d+)?: ok, \d+ (leaf|leaves|input|inputs), "
                r".*elements? checked.* \(max abs error (\S+)\)$")


def gradcli(*args, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    return launcher.run(args, input=stdin, env=env, timeout=300)


def main(capsys, *args):
    """Run the command line in this process (so a test can patch the engine); (status, stdout, stderr)."""
    status = cli.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def ok_lines(stderr: str) -> list:
    """The per-call lines of a report in which every call is ok, with their max abs errors checked."""
    lines = [line for line in stderr.splitlines() if "--check-grads:" not in line]
    for line in lines:
        m = OK.match(line)
        assert m, line
        assert float(m.group(6)) < 1e-6, line      # float64: float32 differences would be far larger
    return lines


# ---------------------------------------------------------------------------- known answers

@pytest.mark.parametrize("name", sorted(p.stem for p in CHECKS.glob("*.grad")))
def test_scripts_with_known_answers_check_ok(name):
    """Each script prints PyTorch's numbers (the .out made by tools/regen_goldens.py) and every one
    of its calls checks out."""
    p = gradcli("run", "--check-grads", str(CHECKS / f"{name}.grad"))
    assert p.stdout == (CHECKS / f"{name}.out").read_text()
    assert p.returncode == 0, p.stderr
    assert ok_lines(p.stderr)


def test_tutorial_checks_ok():
    tutorial = ROOT / "examples" / "tutorial.grad"
    p = gradcli("run", "--seed", "0", "--check-grads", str(tutorial))
    golden = (ROOT / "tests" / "examples" / "tutorial.seed0.out").read_text()
    assert re.sub(r"0x[0-9a-f]+", "0xADDR", p.stdout) == golden
    assert p.returncode == 0
    lines = ok_lines(p.stderr)
    assert [line.split(": ok, ")[1].split(" (")[0] for line in lines] == [
        "1 leaf, 4 elements checked", "1 leaf, 3 elements checked"]
    assert p.stderr.splitlines()[-1] == f"{tutorial}: --check-grads: 2 calls, all ok"


def test_report_of_one_call(tmp_path):
    script = tmp_path / "s.grad"
    script.write_text("import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = x + 2\n"
                      "z = y * y * 3\nout = z.mean()\nout.backward()\nprint(x.grad)\n")
    p = gradcli("run", "--check-grads", str(script))
    assert p.returncode == 0
    assert p.stdout == "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n"
    assert re.fullmatch(rf"{re.escape(str(script))}:6: backward\(\): ok, 1 leaf, 4 elements checked "
                        r"\(max abs error \d\.\de-\d\d\)\n", p.stderr)


def test_options_on_dash_c_and_stdin():
    code = "import torch\nx = torch.ones(3, requires_grad=True)\n(x * x).sum().backward()\n"
    p = gradcli("-c", code, "--check-grads")
    assert p.returncode == 0 and p.stderr.startswith("<string>:3: backward(): ok, 1 leaf, 3 elements checked")
    p = gradcli("run", "--check-grads", "-", stdin=code)
    assert p.returncode == 0 and p.stderr.startswith("<stdin>:3: backward(): ok")
    p = gradcli("--nan-check", "-c", "import torch\nprint(torch.log(torch.zeros(1, requires_grad=True)))")
    assert (p.returncode, p.stdout) == (4, "")
    assert "--check-grads" in gradcli("run", "--help").stdout and "--nan-check" in gradcli("--help").stdout


# ------------------------------------------------------------------------ wrong formulas

TUTORIAL = ("import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = x + 2\nz = y * y * 3\n"
            "out = z.mean()\nout.backward()\nprint(x.grad)\n")


@pytest.fixture
def wrong_mul(monkeypatch):
    """MulBackward0 passing twice the right gradient to its second input."""
    monkeypatch.setattr(arith.MUL, "backward", (arith.MUL.backward[0], lambda F, g, self, other: g * self * 2))
    monkeypatch.setattr(arith.MUL, "joint", None)


@pytest.mark.parametrize("fork", [False, True])
def test_wrong_mul_formula_is_caught_and_located(tmp_path, capsys, monkeypatch, wrong_mul, fork):
    monkeypatch.setattr(checks, "FORK_ABOVE", 0.0 if fork else 1e9)
    if fork and not hasattr(os, "fork"):
        pytest.skip("no os.fork here")
    script = tmp_path / "s.grad"
    script.write_text(TUTORIAL)
    status, out, err = main(capsys, "run", "--check-grads", str(script))
    assert status == checks.EXIT_GRADS_MISMATCH == 3
    assert out == "tensor([[6.7500, 6.7500],\n        [6.7500, 6.7500]])\n"     # the wrong gradient
    first, second, summary = err.splitlines()
    # every element is wrong by the same amount: the worst is the first that disagrees most
    assert re.fullmatch(rf"{re.escape(str(script))}:6: backward\(\): MISMATCH in x\[\d, \d\]: analytic 6\.75, "
                        r"numeric 4\.5 \(node MulBackward0 from line 4, the 1st of 2 made there: z = y \* y \* 3\)",
                        first), first
    assert re.fullmatch(r"    4 of 4 elements checked disagree, in 1 leaf; max abs error 2\.[23], "
                        r"allowed 1e-05 \+ 0\.001 \* \|numeric\|", second), second
    assert summary == f"{script}: --check-grads: 1 call, 1 MISMATCH"


def test_the_outer_node_is_named_when_it_is_the_wrong_one(tmp_path, capsys, monkeypatch):
    """(y * y) * w with w a tensor: a wrong formula for the second input is the outer node's."""
    monkeypatch.setattr(arith.MUL, "backward", (arith.MUL.backward[0], lambda F, g, self, other: g * self * 2))
    monkeypatch.setattr(arith.MUL, "joint", None)
    script = tmp_path / "s.grad"
    script.write_text("import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                      "w = torch.tensor([3.0, -1.0], requires_grad=True)\n"
                      "z = x.exp() * w\n"
                      "z.sum().backward()\n")
    status, _, err = main(capsys, "run", "--check-grads", str(script))
    assert status == 3
    assert "MISMATCH in w[1]: analytic 14.7781, numeric 7.38906 (node MulBackward0 from line 4: z = x.exp() * w)" in err


# A gradcli with a wrong TanhBackward0, forking its replays or not: the command line of this test.
WRONG_TANH = ("import sys\n"
              "from gradcli import cli\nfrom gradcli.diagnostics import checks\n"
              "from gradcli.engine.ops import elementwise\n"
              "elementwise.TANH.backward = (lambda F, g, result: g * (1 - result),)\n"
              "checks.FORK_ABOVE = float(sys.argv[1])\n"
              "sys.exit(cli.main(sys.argv[2:]))\n")


def test_wrong_formula_in_a_training_loop():
    """A wrong TanhBackward0 in the two-layer network: every call mismatches, the first three are
    located at the tanh, and the report is the same with or without forking. Each run is a fresh
    process: the replays fork about 400 times, and a fork costs in proportion to the memory of the
    process that forks (a test worker's is several times a gradcli's)."""
    script = str(CHECKS / "two_layer_net.grad")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    reports = []
    for fork_above in ("1e9", "0.0"):
        if fork_above == "0.0" and not hasattr(os, "fork"):
            continue
        p = subprocess.run([sys.executable, "-c", WRONG_TANH, fork_above, "run", "--check-grads", script],
                           capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 3, p.stderr
        reports.append(p.stderr)
    lines = reports[0].splitlines()
    heads = [line for line in lines if ": MISMATCH in " in line]
    assert len(heads) == 5
    node = "(node TanhBackward0 from line 14: h = (x @ w1 + b1).tanh())"
    assert all(line.endswith(node) for line in heads[:3])
    assert all(line.endswith("(node not located: only the first 3 mismatching calls of a line are located)")
               for line in heads[3:])
    assert "of 32 elements checked disagree (sampled from 260), in 3 leaves" in lines[1]
    assert lines[-1] == f"{script}: --check-grads: 5 calls, 5 MISMATCH"
    assert len(set(reports)) == 1


def test_a_wrong_node_next_to_the_leaf(tmp_path, capsys, monkeypatch):
    """AddBackward0 doubling its first input's gradient: located at y = x + 2, below the two
    MulBackward0 nodes of y * y * 3 (whose incoming gradients agree)."""
    monkeypatch.setattr(arith.ADD, "backward", (lambda F, g, alpha: g * 2, arith.ADD.backward[1]))
    script = tmp_path / "s.grad"
    script.write_text(TUTORIAL)
    status, _, err = main(capsys, "run", "--check-grads", str(script))
    assert status == 3
    assert err.splitlines()[0].endswith(": MISMATCH in x[0, 1]: analytic 9.0, numeric 4.5 "
                                        "(node AddBackward0 from line 3: y = x + 2)")


def test_backward_observer_sees_the_incoming_gradient_of_a_square():
    """`x * x` doubles the incoming gradient in place when it may; not while an observer watches."""
    from gradcli.engine import factories as torch
    from gradcli.engine.observe import Observer
    from gradcli.engine.state import STATE
    seen = []

    class Watch(Observer):
        def node(self, node, g, out):
            seen.append((node.op.node, np.array(g).tolist()))
    STATE.observer = Watch()
    try:
        x = torch.ones(3, requires_grad=True)
        ((x * x) * 5).sum().backward()
    finally:
        STATE.observer = None
    assert seen == [("SumBackward0", 1.0), ("MulBackward0", [1.0] * 3), ("MulBackward0", [5.0] * 3),
                    ("AccumulateGrad", [10.0] * 3)]
    assert x.grad.tolist() == [10.0, 10.0, 10.0]


def test_a_wrong_element_outside_the_sample_is_caught_by_the_direction(tmp_path, capsys, monkeypatch):
    """SumBackward0 wrong for the last of 2000 elements only, which the sample of 32 misses."""
    formula = reduce.SUM.backward[0]

    def wrong(F, g, shape):
        out = np.array(formula(F, g, shape))
        out.reshape(-1)[-1] *= 3
        return out
    monkeypatch.setattr(reduce.SUM, "backward", (wrong,))
    script = tmp_path / "s.grad"
    script.write_text("import torch\nx = torch.linspace(0, 1, 2000, requires_grad=True)\n(x * 2).sum().backward()\n")
    status, _, err = main(capsys, "run", "--check-grads", str(script))
    assert status == 3
    first, second, _ = err.splitlines()
    assert re.fullmatch(r".*:3: backward\(\): MISMATCH along a random direction through all 2,000 elements: "
                        r"analytic \S+, numeric \S+ "
                        r"\(node SumBackward0 from line 3: \(x \* 2\)\.sum\(\)\.backward\(\)\)",
                        first), first
    assert second == "    the 32 elements checked one by one agree (1 leaf)"


def test_analytic_values_are_those_of_the_run_without_a_seed(tmp_path, capsys, wrong_mul):
    """An unseeded script: the replays start from the seed the run drew, so they see its values."""
    script = tmp_path / "s.grad"
    script.write_text("import torch\nx = torch.randn(3, requires_grad=True)\n(x * x).sum().backward()\n"
                      "print(x.grad.tolist())\n")
    status, out, err = main(capsys, "run", "--check-grads", str(script))
    assert status == 3
    printed = eval(out)                                       # the run's (wrong) gradient: 3x
    m = re.search(r"MISMATCH in x\[(\d)\]: analytic (\S+), numeric (\S+)", err)
    i, analytic, numeric = int(m.group(1)), float(m.group(2)), float(m.group(3))
    assert analytic == pytest.approx(printed[i], rel=1e-5)
    assert numeric == pytest.approx(printed[i] * 2 / 3, rel=1e-5)


# ------------------------------------------------------------------------------ the method

def test_leaves_are_perturbed_as_they_were_at_each_call(tmp_path, capsys):
    """w ** 3 minimised by SGD, in place under no_grad: each call is checked at that step's w, so
    the in-place updates before it are not differentiated through (that would disagree)."""
    script = tmp_path / "s.grad"
    script.write_text("import torch\nw = torch.tensor([1.0, -0.5], requires_grad=True)\nfor i in range(4):\n"
                      "    loss = (w ** 3).sum()\n    loss.backward()\n    with torch.no_grad():\n"
                      "        w -= 0.1 * w.grad\n    w.grad.zero_()\n")
    status, _, err = main(capsys, "run", "--check-grads", str(script))
    assert status == 0, err
    assert len(ok_lines(err)) == 4 and "backward(), call 4 of 4: ok" in err


def test_many_calls_share_the_budget(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(checks, "BUDGET", 40)
    script = tmp_path / "s.grad"
    script.write_text("import torch\nx = torch.ones(10, requires_grad=True)\nfor i in range(5):\n"
                      "    (x * x * i).sum().backward()\n")
    status, _, err = main(capsys, "run", "--check-grads", str(script))
    assert status == 0
    assert err.count("8 of 10 elements checked (sampled) and all along a random direction") == 5


def test_kink_is_reported_as_gradcheck_would(capsys):
    status, _, err = main(capsys, "-c", "import torch\nx = torch.tensor([0.0, 1.0], requires_grad=True)\n"
                                        "torch.relu(x).sum().backward()", "--check-grads")
    assert status == 3
    assert "MISMATCH in x[0]: analytic 0.0, numeric 0.5 (node ReluBackward0 from line 3" in err


def test_no_calls_and_failed_scripts(capsys):
    status, out, err = main(capsys, "-c", "print(1)", "--check-grads")
    assert (status, out, err) == (0, "1\n", "<string>: --check-grads: the script made no backward() or "
                                            "autograd.grad() call\n")
    status, _, err = main(capsys, "-c", "import torch\nx = torch.ones(2, requires_grad=True)\n"
                                        "(x * 2).sum().backward()\ny = x + torch.ones(3)", "--check-grads")
    assert status == 1 and "--check-grads" not in err      # the script's error, no checks


def test_a_replay_that_never_ends_is_given_up(capsys):
    """Moving x by eps makes the `while` spin for ever: that call is reported as not checked."""
    status, _, err = main(capsys, "-c", "import torch\nx = torch.tensor(1.0, requires_grad=True)\nz = x * 1\n"
                                        "v = z.item()\nwhile v != 1.0:\n    v = v * 1.0\nz.backward()", "--check-grads")
    assert status == 0
    assert err == ("<string>:7: backward(): not checked: the replay ran on far longer than the script did\n"
                   "<string>: --check-grads: 1 call, 1 not checked\n")


def test_plain_runs_are_left_unpatched(capsys):
    from gradcli.engine.state import STATE
    before = (Tensor.__init__, arith.to_dtype, backward._make_grads, STATE.observer, STATE.replay)
    main(capsys, "-c", "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()",
         "--check-grads", "--nan-check")
    after = (Tensor.__init__, arith.to_dtype, backward._make_grads, STATE.observer, STATE.replay)
    assert after == before and before[3:] == (None, None)
    assert Tensor(np.ones(2, np.float32))._a.dtype == np.float32


def test_replays_are_float64_and_count_every_tensor():
    calls = []
    run = replay.Run("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 3).float()\n"
                     "y.sum().backward()\n", "<t>", 0, on_call=calls.append)
    run.execute()
    (call,) = calls
    assert call.kind == "backward" and call.line == 4 and call.note is None
    (x,) = call.tensors
    assert (x.name, x.shape, x.c) == ("x", (2,), 0)
    assert x.point[0] == "tick"           # perturbed before the statement that first reads it
    assert [e.name for e in call.graph] == ["SumBackward0", "MulBackward0", "AccumulateGrad"]
    assert call.graph[1].shape == (2,) and call.graph[1].line == 3


# ------------------------------------------------------------------------------- --nan-check

def nan_check(tmp_path, text):
    script = tmp_path / "s.grad"
    script.write_text(text)
    p = gradcli("run", "--nan-check", str(script))
    return p, str(script)


def test_nan_check_forward(tmp_path):
    p, s = nan_check(tmp_path, "import torch\nx = torch.tensor([1.0, 0.0], requires_grad=True)\nprint('before')\n"
                               "y = torch.log(x)  # log of 0\nprint('after')\n")
    assert (p.returncode, p.stdout) == (4, "before\n")
    assert p.stderr == f"{s}:4: --nan-check: LogBackward0 produced inf in the forward pass (y = torch.log(x))\n"


def test_nan_check_backward(tmp_path):
    p, s = nan_check(tmp_path, "import torch\nx = torch.tensor([1.0, 0.0], requires_grad=True)\ny = x.sqrt()\n"
                               "s = y.sum()\nprint(s)\n\ns.backward()\nprint(x.grad)\n")
    assert p.returncode == 4
    assert p.stdout == "tensor(1., grad_fn=<SumBackward0>)\n"
    assert p.stderr == (f"{s}:3: --nan-check: SqrtBackward0 (made by y = x.sqrt()) passed inf to the gradient "
                        "of x during the backward pass on line 7\n")


def test_nan_check_names_the_op_that_made_the_kind(tmp_path):
    # inf came in with the data (not an op's doing); inf - inf makes the first nan
    p, s = nan_check(tmp_path, "import torch\nx = torch.tensor([float('inf'), 1.0])\ny = x * 2\n"
                               "def f(v):\n    return v - v\nz = f(y)\n")
    assert p.returncode == 4
    assert p.stderr == f"{s}:5: --nan-check: SubBackward0 produced nan in the forward pass (return v - v)\n"


def test_nan_check_passes_clean_scripts_and_inherited_nan(tmp_path):
    p, _ = nan_check(tmp_path, "import torch\nx = torch.tensor([float('nan'), 1.0], requires_grad=True)\n"
                               "(x * 2).sum().backward()\nprint(x.grad)\n")
    assert (p.returncode, p.stdout, p.stderr) == (0, "tensor([2., 2.])\n", "")
    # data made non-finite outside the graph, then used in it: nothing of it is reported
    p, _ = nan_check(tmp_path, "import torch\nd = torch.log(torch.zeros(2))\nw = torch.ones(2, requires_grad=True)\n"
                               "loss = (w * d).sum()\nloss.backward()\nprint(w.grad)\n")
    assert (p.returncode, p.stdout, p.stderr) == (0, "tensor([-inf, -inf])\n", "")
    p = gradcli("run", "--nan-check", "--seed", "0", str(CHECKS / "two_layer_net.grad"))
    assert (p.returncode, p.stderr) == (0, "")


def test_nan_check_in_a_create_graph_backward(tmp_path):
    p, s = nan_check(tmp_path, "import torch\nx = torch.tensor(0.0, requires_grad=True)\ny = x.sqrt() * 0 + x\n"
                               "g, = torch.autograd.grad(y, x, create_graph=True)\n")
    assert p.returncode == 4
    assert p.stderr.startswith(f"{s}:3: --nan-check: SqrtBackward0 (made by y = x.sqrt() * 0 + x) passed ")
    assert p.stderr.endswith("during the backward pass on line 4\n")


def test_nan_check_jsonl_error_event(tmp_path):
    script = tmp_path / "s.grad"
    script.write_text("import torch\ny = torch.tensor([1.0]) / 0\n")
    p = gradcli("run", "--nan-check", "--format", "jsonl", str(script))
    assert p.returncode == 4
    assert ('{"event":"error","file":"%s","line":2,"col":null,"type":"--nan-check",'
            '"message":"DivBackward0 produced inf in the forward pass (y = torch.tensor([1.0]) / 0)"}' % script) \
        in p.stdout.splitlines()
