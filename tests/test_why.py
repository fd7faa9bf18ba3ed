"""Errors that say why (gradcli/diagnostics/why.py): PyTorch's message first, unchanged, then one `why:` line.

Each variant below breaks one of the scripts with known answers (tests/diagnostics/*.grad and the
tutorial) in one of the five ways the notes cover. The headline of every variant was checked against
PyTorch 2.13 (the same exception type and message, or the same UserWarning), so the expected text is
PyTorch's message, gradcli's source line and caret, and the note.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradcli import cli
from gradcli.diagnostics import why
from gradcli.repl.shell import Options, Shell

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "diagnostics"

# PyTorch's messages, word for word
FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they "
         "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
         "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second "
         "time or if you need to access saved tensors after calling backward.")
NO_GRAD = "element 0 of tensors does not require grad and does not have a grad_fn"
SCALAR = "grad can be implicitly created only for scalar outputs"
HINT = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


def inplace(tensor: str, owner: str | None = None) -> str:
    which = f", which is output 0 of {owner}," if owner else ""
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{tensor}]{which} is at version 1; expected version 0 instead.{HINT}")


NON_LEAF = ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
            "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
            "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
            "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
            "for more information. (Triggered internally at "
            "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")


def base(name: str) -> str:
    path = ROOT / "examples" / "tutorial.grad" if name == "tutorial" else SCRIPTS / f"{name}.grad"
    return path.read_text()


# name: (script, edits, (line, col), message, why). An edit is (old, new), or ("+", text) to append;
# col None marks a warning (line only) rather than an error.
VARIANTS = {
    "tutorial_scalar": ("tutorial", [("y.backward(gradients)\n", "y.backward()\n")], (37, 1), SCALAR,
                        "y has shape [3], not a single number: call y.sum().backward() (or .mean()), or pass a "
                        "gradient of that shape, y.backward(gradient=torch.ones_like(y))"),
    "tutorial_freed": ("tutorial", [("+", "out.backward()\n")], (46, 1), FREED,
                       "the backward() call at line 24 (out.backward()) already went through this graph and freed "
                       "its saved tensors, which MulBackward0 (line 12) needs again now; write "
                       "out.backward(retain_graph=True) there to go through the graph again"),
    "tutorial_no_grad": ("tutorial", [("+", "with torch.no_grad():\n    s = (x * 2).sum()\ns.backward()\n")],
                         (48, 1), NO_GRAD,
                         "s was computed at line 47 (s = (x * 2).sum()) inside with torch.no_grad(): (line 46), so "
                         "it has no grad_fn; compute it outside that block"),
    "tutorial_inplace": ("tutorial", [("z = y * y * 3\n", "z = y * y * 3\ny.mul_(2)\n")], (25, 1),
                         inplace("torch.FloatTensor [2, 2]", "Mul"),
                         "y, saved by MulBackward0 at line 12, was modified in place at line 13 (y.mul_(2)); make "
                         "that change out of place, or make it on a .clone()"),
    "tutorial_non_leaf": ("tutorial", [("+", "print(y.grad)\n")], (46, None), NON_LEAF,
                          "y is not a leaf: MulBackward0 made it at line 32 (y = y * 2); call y.retain_grad() "
                          "before backward() to keep its gradient, or read x.grad"),
    "polynomial_freed": ("polynomial", [("+", "total.backward()\n")], (8, 1), FREED,
                         "the backward() call at line 6 (total.backward()) already went through this graph and freed "
                         "its saved tensors, which MulBackward0 (line 4) needs again now; write "
                         "total.backward(retain_graph=True) there to go through the graph again"),
    "polynomial_scalar": ("polynomial", [("total.backward()\n", "p.backward()\n")], (6, 1), SCALAR,
                          "p has shape [3], not a single number: call p.sum().backward() (or .mean()), or pass a "
                          "gradient of that shape, p.backward(gradient=torch.ones_like(p))"),
    "polynomial_leaf": ("polynomial", [(", requires_grad=True)", ")")], (6, 1), NO_GRAD,
                        "total is computed only from tensors that do not require grad: x (line 3), created without "
                        "requires_grad=True; create the ones to differentiate with requires_grad=True"),
    "polynomial_inplace": ("polynomial",
                           [("total = p.sum()\n", "total = p.sum()\nwith torch.no_grad():\n    x.add_(1)\n")],
                           (8, 1), inplace("torch.FloatTensor [3]"),
                           "x, saved by PowBackward0 at line 4, was modified in place at line 7 (x.add_(1)); make "
                           "that change out of place, or make it on a .clone()"),
    "polynomial_non_leaf": ("polynomial", [("print(x.grad)\n", "print(p.grad)\n")], (7, None), NON_LEAF,
                            "p is not a leaf: SubBackward0 made it at line 4 (p = 3 * x ** 3 - 2 * x ** 2 + x - 5); "
                            "call p.retain_grad() before backward() to keep its gradient, or read x.grad"),
    "softmax_ce_freed": ("softmax_ce", [("+", "loss.backward()\n")], (12, 1), FREED,
                         "the backward() call at line 9 (loss.backward()) already went through this graph and freed "
                         "its saved tensors, which IndexBackward0 (line 7) needs again now; write "
                         "loss.backward(retain_graph=True) there to go through the graph again"),
    "softmax_ce_scalar": ("softmax_ce", [("loss.backward()\n", "picked.backward()\n")], (9, 1), SCALAR,
                          "picked has shape [2], not a single number: call picked.sum().backward() (or .mean()), or "
                          "pass a gradient of that shape, picked.backward(gradient=torch.ones_like(picked))"),
    "softmax_ce_detach": ("softmax_ce", [("logits.log_softmax", "logits.detach().log_softmax")], (9, 1), NO_GRAD,
                          "loss is computed from the .detach() at line 6 (log_probs = "
                          "logits.detach().log_softmax(dim=1)), which cuts the graph there; use the tensor itself "
                          "where gradients should flow"),
    "softmax_ce_inplace": ("softmax_ce", [("log_probs = logits.log_softmax(dim=1)\n",
                                           "log_probs = logits.log_softmax(dim=1)\nlog_probs.mul_(2)\n")],
                           (10, 1), inplace("torch.FloatTensor [2, 3]", "LogSoftmax"),
                           "log_probs, the result LogSoftmaxBackward0 saved at line 6, was modified in place at line "
                           "7 (log_probs.mul_(2)); make that change out of place, or make it on a .clone()"),
    "softmax_ce_non_leaf": ("softmax_ce", [("print(logits.grad)\n", "print(log_probs.grad)\n")], (11, None), NON_LEAF,
                            "log_probs is not a leaf: LogSoftmaxBackward0 made it at line 6 (log_probs = "
                            "logits.log_softmax(dim=1)); call log_probs.retain_grad() before backward() to keep its "
                            "gradient, or read logits.grad"),
    "mlp_freed": ("mlp", [("+", "loss.backward()\n")], (15, 1), FREED,
                  "the backward() call at line 12 (loss.backward()) already went through this graph and freed its "
                  "saved tensors, which PowBackward0 (line 11) needs again now; write "
                  "loss.backward(retain_graph=True) there to go through the graph again"),
    "mlp_scalar": ("mlp", [("loss.backward()\n", "pred.backward()\n")], (12, 1), SCALAR,
                   "pred has shape [4, 1], not a single number: call pred.sum().backward() (or .mean()), or pass a "
                   "gradient of that shape, pred.backward(gradient=torch.ones_like(pred))"),
    "mlp_no_grad": ("mlp", [("loss = ((pred", "with torch.no_grad():\n    loss = ((pred")], (13, 1), NO_GRAD,
                    "loss was computed at line 12 (loss = ((pred - t) ** 2).mean()) inside with torch.no_grad(): "
                    "(line 11), so it has no grad_fn; compute it outside that block"),
    "mlp_inplace": ("mlp", [("loss.backward()\n", "with torch.no_grad():\n    w2 -= 0.1 * w2\nloss.backward()\n")],
                    (14, 1), inplace("torch.FloatTensor [5, 1]"),
                    "w2, saved by MmBackward0 at line 10, was modified in place at line 13 (w2 -= 0.1 * w2); make "
                    "that change out of place, or make it on a .clone()"),
    "mlp_non_leaf": ("mlp", [("print(w1.grad)\n", "print(h.grad)\n")], (14, None), NON_LEAF,
                     "h is not a leaf: TanhBackward0 made it at line 9 (h = torch.tanh(x @ w1 + b1)); call "
                     "h.retain_grad() before backward() to keep its gradient, or read b1.grad or w1.grad"),
    "newton_freed_in_loop": ("newton", [("    with torch.no_grad():\n        x -= f / x.grad\n    x.grad.zero_()\n",
                                         "    x = x - f / x.grad\n")], (6, 5), FREED,
                             "an earlier run of this backward() call freed the graph's saved tensors, which "
                             "MulBackward0 (line 5) needs again now; write f.backward(retain_graph=True) there to go "
                             "through the graph again, or build the graph anew before each call"),
    "newton_freed": ("newton", [("    f.backward()\n", "    f.backward()\n    f.backward()\n")], (7, 5), FREED,
                     "the backward() call at line 6 (f.backward()) already went through this graph and freed its "
                     "saved tensors, which MulBackward0 (line 5) needs again now; write f.backward(retain_graph=True) "
                     "there to go through the graph again"),
    "newton_detach": ("newton", [("    f = x ** 3 - 2 * x - 5\n", "    f = x ** 3 - 2 * x - 5\n    f = f.detach()\n")],
                      (7, 5), NO_GRAD,
                      "f is computed from the .detach() at line 6 (f = f.detach()), which cuts the graph there; use "
                      "the tensor itself where gradients should flow"),
    "newton_scalar": ("newton", [("torch.tensor(2.0, ", "torch.tensor([2.0, 3.0], ")], (6, 5), SCALAR,
                      "f has shape [2], not a single number: call f.sum().backward() (or .mean()), or pass a gradient "
                      "of that shape, f.backward(gradient=torch.ones_like(f))"),
    "newton_non_leaf": ("newton", [("+", "print(f.grad)\n")], (11, None), NON_LEAF,
                        "f is not a leaf: SubBackward0 made it at line 5 (f = x ** 3 - 2 * x - 5); call "
                        "f.retain_grad() before backward() to keep its gradient, or read x.grad"),
    "hessian_scalar": ("hessian", [("grad(g[0], x, retain_graph=True)", "grad(g, x, retain_graph=True)")], (6, 7),
                       SCALAR,
                       "g has shape [2], not a single number: differentiate g.sum() instead, or pass "
                       "grad_outputs=torch.ones_like(g) (any tensor of that shape weighs the elements)"),
    "hessian_freed": ("hessian", [(", retain_graph=True)", ")")], (7, 7), FREED,
                      "the autograd.grad() call at line 6 (h0, = torch.autograd.grad(g[0], x)) already went through "
                      "this graph and freed its saved tensors, which MulBackward0 (line 5) needs again now; write "
                      "h0, = torch.autograd.grad(g[0], x, retain_graph=True) there to go through the graph again"),
    "hessian_no_graph": ("hessian", [(", create_graph=True)", ")")], (6, 7), NO_GRAD,
                         "the output is computed from a gradient taken at line 5 (g, = torch.autograd.grad(f, x)) "
                         "without create_graph=True, which has no graph of its own; pass create_graph=True there to "
                         "differentiate it again"),
    "hessian_inplace": ("hessian", [("h0, = torch.autograd.grad(g[0], x, retain_graph=True)\n",
                                     "n = (g * g).sum()\ng.mul_(2)\nh0, = torch.autograd.grad(n, x)\n")], (8, 7),
                        inplace("torch.FloatTensor [2]", "Mul"),
                        "g, saved by MulBackward0 at line 6, was modified in place at line 7 (g.mul_(2)); make that "
                        "change out of place, or make it on a .clone()"),
    "hessian_non_leaf": ("hessian", [("+", "print(g.grad)\n")], (10, None), NON_LEAF,
                         "g is not a leaf: AddBackward0 made it at line 5 (g, = torch.autograd.grad(f, x, "
                         "create_graph=True)); call g.retain_grad() before backward() to keep its gradient, or read "
                         "x.grad"),
}


def variant_text(name: str) -> str:
    script, edits, *_ = VARIANTS[name]
    text = base(script)
    for old, new in edits:
        if old == "+":
            text += new
        else:
            assert old in text, (name, old)
            text = text.replace(old, new)
    return text


def run_cli(capsys, *args):
    status = cli.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_note_on_each_script(name, tmp_path, monkeypatch, capsys):
    text = variant_text(name)
    monkeypatch.chdir(tmp_path)
    Path(f"{name}.grad").write_text(text)
    status, out, err = run_cli(capsys, "run", "--seed", "0", f"{name}.grad")
    (line, col), message, why = VARIANTS[name][2:]
    source = text.splitlines()[line - 1]
    if col is None:         # a warning: the script goes on
        assert status == 0
        assert err == f"{name}.grad:{line}: UserWarning: {message}\n  {source.strip()}\n  why: {why}\n"
    else:
        assert status == 1
        caret = " " * (col - 1) + "^"
        assert err == f"{name}.grad:{line}:{col}: RuntimeError: {message}\n    {source}\n    {caret}\n  why: {why}\n"


def test_the_scripts_themselves_run_clean(capsys):
    for script in ("polynomial", "softmax_ce", "mlp", "newton", "hessian"):
        status, out, err = run_cli(capsys, "run", str(SCRIPTS / f"{script}.grad"))
        assert (status, err) == (0, ""), script


# ---------------------------------------------------------------------------------- plain runs pay nothing
def test_plain_runs_never_load_the_diagnosis():
    code = ("import sys; from gradcli import cli; cli.main(['run', 'examples/tutorial.grad']); "
            "cli.main(['run', 'tests/diagnostics/mlp.grad']); "
            "sys.stderr.write(str('gradcli.diagnostics.why' in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert p.stderr == "False"


def test_errors_without_a_note_do_not_replay(monkeypatch, capsys, tmp_path):
    calls = []
    monkeypatch.setattr(why, "replay", lambda *a, **k: calls.append(a))
    script = tmp_path / "s.grad"
    script.write_text("import torch\nx = torch.ones(2) + torch.ones(3)\n")
    status, out, err = run_cli(capsys, "run", str(script))
    assert status == 1 and "why:" not in err and calls == []
    script.write_text("import torch\nx = torch.ones(2, 2, requires_grad=True)\n(x * 2).backward()\n")
    status, out, err = run_cli(capsys, "run", str(script))      # the shape comes from the failed call: no replay
    assert "why: the output has shape [2, 2]" in err and calls == []


def test_a_long_first_run_gets_no_replay(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(why, "REPLAY_AFTER", 0.0)
    script = tmp_path / "s.grad"
    script.write_text(variant_text("polynomial_freed"))
    status, out, err = run_cli(capsys, "run", str(script))
    assert status == 1 and err.startswith(f"{script}:8:1: RuntimeError: {FREED}\n") and "why:" not in err


def test_a_replay_that_runs_out_of_time_is_abandoned(monkeypatch, capsys, tmp_path):
    script = tmp_path / "s.grad"
    script.write_text(variant_text("polynomial_freed"))
    monkeypatch.setattr(why, "REPLAY_BUDGET", 0.2)
    monkeypatch.setattr(why.Recorder, "statement", _slow_statement)     # each replayed statement: 50 ms
    started = time.perf_counter()
    status, out, err = run_cli(capsys, "run", str(script))
    assert status == 1 and "why:" not in err and time.perf_counter() - started < 2


def _slow_statement(self, site):
    time.sleep(0.05)
    if time.perf_counter() > self._deadline:
        raise why.Stop("out of time")


def test_a_failing_diagnosis_only_drops_the_note(monkeypatch, capsys, tmp_path):
    def broken(*args):
        raise IndexError("a bug in the diagnosis")
    monkeypatch.setattr(why, "_freed", broken)
    monkeypatch.setattr(why, "_non_leaf_note", broken)
    script = tmp_path / "s.grad"
    script.write_text(variant_text("polynomial_freed") + "print(p.grad)\n")
    status, out, err = run_cli(capsys, "run", str(script))
    assert status == 1 and "why:" not in err and "Traceback" not in err
    assert err.startswith(f"{script}:8:1: RuntimeError: {FREED}\n")


def test_a_warning_replay_leaves_the_run_as_it_was(tmp_path, capsys):
    # the replay runs inside the first run: the random stream, grad mode, print options and numbered
    # addresses must go on as if it had not happened
    script = tmp_path / "s.grad"
    script.write_text("import torch\ntorch.set_printoptions(precision=2)\nx = torch.randn(3, requires_grad=True)\n"
                      "y = x * 2\nprint(y.grad_fn)\nwith torch.no_grad():\n    print(y.grad)\n"
                      "    print(torch.randn(2))\n"
                      "print(torch.is_grad_enabled(), torch.randn(2), y.grad_fn)\n")
    status, out, err = run_cli(capsys, "run", "--seed", "1", "--stable-ids", str(script))
    assert "why: y is not a leaf" in err
    assert out == ("<MulBackward0 object at 0x7f0000000010>\nNone\ntensor([ 0.62, -0.45])\n"
                   "True tensor([-0.17, -1.52]) <MulBackward0 object at 0x7f0000000010>\n")


def test_unseeded_scripts_replay_from_the_seed_they_started_with(tmp_path, capsys):
    # without --seed the stream starts from the OS; the replay must see the same values to fail the same way
    script = tmp_path / "s.grad"
    script.write_text("import torch\nx = torch.randn(3, requires_grad=True)\nif x[0] > 0:\n    y = (x * x).sum()\n"
                      "else:\n    y = (x * x * x).sum()\ny.backward()\ny.backward()\n")
    for _ in range(4):
        status, out, err = run_cli(capsys, "run", str(script))
        assert "why: the backward() call at line 7 (y.backward())" in err


def test_jsonl_error_and_warning_events_carry_the_note(tmp_path, capsys):
    script = tmp_path / "s.grad"
    script.write_text(variant_text("polynomial_freed").replace("print(x.grad)\n", "print(p.grad)\n"))
    status, out, err = run_cli(capsys, "run", "--format", "jsonl", str(script))
    events = [json.loads(line) for line in out.splitlines()]
    warning = next(e for e in events if e["event"] == "warning")
    error = next(e for e in events if e["event"] == "error")
    assert warning["why"].startswith("p is not a leaf: SubBackward0 made it at line 4")
    assert error["message"] == FREED and error["why"] == VARIANTS["polynomial_freed"][4]
    assert err == ""


def test_with_retain_adds_the_argument_to_the_call():
    assert why._with_retain("out.backward()", "backward") == "out.backward(retain_graph=True)"
    assert why._with_retain("y.backward(g[0])", "backward") == "y.backward(g[0], retain_graph=True)"
    assert (why._with_retain("g, = torch.autograd.grad(f(a, b), [x])", "grad")
            == "g, = torch.autograd.grad(f(a, b), [x], retain_graph=True)")
    assert why._with_retain("y.backward(retain_graph=False)", "backward") == "y.backward(retain_graph=True)"
    assert why._with_retain("loss.sum()", "backward") is None
    assert why._with_retain("h = hessian(f, x)", None) is None


# --------------------------------------------------------------------------------------------- the REPL
def new_shell(**options) -> Shell:
    options.setdefault("colour", False)
    return Shell(Options(**options), out=io.StringIO(), err=io.StringIO())


def test_repl_errors_say_why_by_replaying_the_session():
    shell = new_shell(seed=0)
    for line in ("import torch", "x = torch.ones(2, requires_grad=True)", "y = x * x", "out = y.sum()",
                 "out.backward()", "out.backward()", "w = torch.ones(2)", "(w * 2).sum().backward()",
                 "z = x.exp()", "z.add_(1)", "z.sum().backward()", "%seed 3", "r = torch.randn(2)", "r.backward()"):
        shell.execute(line)
    why = [line for line in shell.err.getvalue().splitlines() if line.startswith("  why: ")]
    assert why == [
        "  why: the backward() call at out.backward() already went through this graph and freed its saved "
        "tensors, which MulBackward0 (y = x * x) needs again now; write out.backward(retain_graph=True) there to "
        "go through the graph again",
        "  why: the output is computed only from tensors that do not require grad: w (w = torch.ones(2)), created "
        "without requires_grad=True; create the ones to differentiate with requires_grad=True",
        "  why: z, the result ExpBackward0 saved at z = x.exp(), was modified in place at z.add_(1); make that "
        "change out of place, or make it on a .clone()",
        "  why: r (r = torch.randn(2)) was created without requires_grad=True; create it with requires_grad=True "
        "(or call r.requires_grad_() before using it)"]
    # the session goes on with its own state: the replays changed nothing
    shell.execute("torch.randn(1)")
    fresh = new_shell(seed=0)
    for line in ("import torch", "%seed 3", "torch.randn(2)", "torch.randn(1)"):
        fresh.execute(line)
    assert shell.out.getvalue().splitlines()[-1] == fresh.out.getvalue().splitlines()[-1]


def test_repl_warning_answers_from_the_session_provenance(monkeypatch):
    monkeypatch.setattr(why, "replay", None)           # no replay is needed: calling it would fail
    shell = new_shell()
    for line in ("import torch", "x = torch.ones(2, requires_grad=True)", "y = x + 2", "(y * y).sum().backward()",
                 "y.grad"):
        shell.execute(line)
    assert shell.err.getvalue().splitlines()[-1] == (
        "  why: y is not a leaf: AddBackward0 made it at y = x + 2; call y.retain_grad() before backward() to keep "
        "its gradient, or read x.grad")


def test_repl_jsonl_error_event_has_the_note():
    shell = new_shell(format="jsonl")
    for line in ("import torch", "x = torch.ones(2, 2, requires_grad=True)", "(x * 3).backward()"):
        shell.execute(line)
    errors = [json.loads(line) for line in shell.out.getvalue().splitlines() if '"error"' in line]
    assert errors[-1]["why"].startswith("the output has shape [2, 2]")
