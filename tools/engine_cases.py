#!/usr/bin/env python3
"""Generate the expected results of the engine's one-line cases from real PyTorch.

Each case is a few statements run after `import torch` and `import torch.nn.functional as F`; its
expected result is what it prints, or, when it raises, the `ExceptionType: message` it ends in.
Cases come from two places:

* the hand-written lists `tests/engine_cases/*.txt` (one case a line, `;` separating statements);
* generated probes, written by `--probe`: every unary, binary and reduction method on 0-d inputs
  (`-0.0`, `1.5`, `-2`, `True`) in `probe_0d.txt`; the most used functions and methods called with
  arguments that do not fit, in `probe_arguments.txt` (PyTorch's exact argument errors).

The results go to `tests/engine_cases/expected.json`; `tests/test_engine_cases.py` runs every case
through gradcli and compares. With `--diff` the cases also run through gradcli here and the
differences are printed (for finding bugs; the test does the same).

Usage::

    python tools/engine_cases.py [--python ORACLE] [--probe] [--new] [--diff]

With `--new` only the cases expected.json lacks run through the oracle; the others keep their stored
results. Those came from the reference machine, and a few of PyTorch's own results depend on the processor
it runs on (its vector kernels differ between AVX2 and AVX-512: `F.gelu` of inf is inf on AVX2, nan on
AVX-512), so adding cases on another machine must not rewrite them.

The oracle interpreter: `--python`, else `$ORACLE_PYTHON`. Standard library only (plus gradcli for --diff).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "engine_cases"
EXPECTED = CASES / "expected.json"
PRELUDE = "import torch\nimport torch.nn.functional as F\n"

# Run by the oracle: reads the cases as JSON on stdin, writes {case: result} as JSON.
_ORACLE_RUNNER = r'''
import contextlib, io, json, sys
import torch
import torch.nn.functional as F
torch.set_printoptions(profile="default")
cases = json.load(sys.stdin)
results = {}
for case in cases:
    out = io.StringIO()
    ns = {"torch": torch, "F": F}
    torch.manual_seed(0)
    try:
        with contextlib.redirect_stdout(out):
            exec(case.replace("; ", "\n"), ns)
        results[case] = out.getvalue()
    except Exception as e:
        text = str(e) if not isinstance(e, KeyError) else repr(e.args[0]) if len(e.args) == 1 else str(e)
        results[case] = out.getvalue() + "!! " + type(e).__name__ + ": " + text.strip()
json.dump(results, sys.stdout)
'''

UNARY = (
    "abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square sin cos tan asin acos atan sinh cosh "
    "tanh sigmoid relu erf floor ceil round trunc frac sign sgn reciprocal logical_not isnan isinf "
    "isfinite negative clone detach float double long int bool half sum mean prod amax amin argmax "
    "argmin all any std var norm t flatten fliplr flipud numel item tolist"
).split()
UNARY_INPLACE = (
    "abs_ neg_ exp_ exp2_ expm1_ log_ log2_ log10_ log1p_ sqrt_ rsqrt_ square_ sin_ cos_ tan_ asin_ "
    "acos_ atan_ sinh_ cosh_ tanh_ sigmoid_ relu_ erf_ floor_ ceil_ round_ trunc_ frac_ sign_ sgn_ "
    "reciprocal_ zero_"
).split()
BINARY = (
    "add sub mul div pow atan2 maximum minimum floor_divide remainder logical_and logical_or logical_xor "
    "eq ne lt le gt ge"
).split()
DIM_REDUCE = "sum mean prod amax amin argmax argmin all any logsumexp cumsum cumprod softmax log_softmax std var".split()
FUNCTIONAL = "relu gelu silu elu softplus logsigmoid sigmoid tanh leaky_relu relu6 hardtanh softsign".split()
OPERATORS = "+ - * / // % ** < > == & | ^ << >>".split()
ZERO_D = ("torch.tensor(-0.0)", "torch.tensor(1.5)", "torch.tensor(-2)", "torch.tensor(True)")


def probe_cases() -> list[str]:
    """Every op of the lists above on each 0-d input (and on a 0-d pair for binary ops)."""
    cases = []
    for x in ZERO_D:
        cases += [f"print({x}.{m}())" for m in UNARY]
        cases += [f"x = {x}; x.{m}(); print(x)" for m in UNARY_INPLACE]
        cases += [f"print({x}.{m}(0))" for m in DIM_REDUCE]
        cases += [f"print({x}.{m}(0, keepdim=True))" for m in ("sum", "mean", "amax", "logsumexp", "any")]
        cases += [f"print(F.{m}({x}))" for m in FUNCTIONAL]
        cases += [f"print(torch.{m}({x}))" for m in ("relu", "sigmoid", "tanh", "erf", "exp", "abs")]
        for y in ZERO_D:
            cases += [f"print({x}.{m}({y}))" for m in BINARY]
            cases += [f"print({x} {op} {y})" for op in OPERATORS]
    return cases


# The functions whose argument errors gradcli words exactly as PyTorch (engine/signatures.py), each
# called in the ways a script gets wrong.
ARGUMENT_FUNCTIONS = "matmul mm add sub mul div sum mean ones zeros tensor full pow any all std max".split()
ARGUMENT_METHODS = "matmul mm add sub mul div sum mean to any all std max prod cumsum".split()
WRONG_ARGUMENTS = ("()", "(zzz=1)", "('s')", "(x, 's')", "(x, x, x, x, x, x)", "(x, zzz=1)", "(x, dim='s')",
                   "(1, 2)", "(x, alpha='a')", "(x, keepdim=1)", "(0, 1)", "(dtype=1)",
                   "(2, 3.5)", "((2,), 3)", "(x, input=x)", "(requires_grad=True)", "(x, dim=0, keepdim='a')")


def argument_cases() -> list[str]:
    prelude = "x = torch.ones(2, 2); "
    cases = [f"{prelude}print(torch.{f}{args})" for f in ARGUMENT_FUNCTIONS for args in WRONG_ARGUMENTS]
    cases += [f"{prelude}print(x.{m}{args})" for m in ARGUMENT_METHODS for args in WRONG_ARGUMENTS]
    return cases


def load_cases() -> list[str]:
    cases = []
    for path in sorted(CASES.glob("*.txt")):
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                cases.append(line)
    return list(dict.fromkeys(cases))


def run_oracle(python: str, cases: list[str]) -> dict:
    # in a folder of its own: the files a case saves (torch.save) go there, not into the checkout
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.run([python, "-c", _ORACLE_RUNNER], input=json.dumps(cases), capture_output=True,
                              text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True, cwd=folder)
    return json.loads(proc.stdout)


def run_gradcli(case: str) -> str:
    """What gradcli gives for a case, in the oracle's form."""
    import io
    from gradcli.errors import ScriptError
    from gradcli.session import Session
    out = io.StringIO()
    session = Session(out=out, err=io.StringIO(), seed=0)
    try:
        session.run_source(PRELUDE + case.replace("; ", "\n") + "\n", "<case>")
    except ScriptError as e:
        return out.getvalue() + f"!! {e.kind}: {e.message.strip()}"
    return out.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=os.environ.get("ORACLE_PYTHON"))
    ap.add_argument("--probe", action="store_true", help="rewrite probe_0d.txt from the op lists first")
    ap.add_argument("--diff", action="store_true", help="print where gradcli differs")
    ap.add_argument("--new", action="store_true", help="run only the cases expected.json lacks; keep the rest")
    args = ap.parse_args()
    if not args.python:
        ap.error("no oracle interpreter: pass --python or set ORACLE_PYTHON")
    if args.probe:
        (CASES / "probe_0d.txt").write_text("\n".join(probe_cases()) + "\n")
        (CASES / "probe_arguments.txt").write_text("\n".join(argument_cases()) + "\n")
    cases = load_cases()
    if args.new:
        stored = json.loads(EXPECTED.read_text()) if EXPECTED.exists() else {}
        fresh = run_oracle(args.python, [case for case in cases if case not in stored])
        expected = {case: fresh[case] if case in fresh else stored[case] for case in cases}
        print(f"{len(fresh)} new cases run through the oracle")
    else:
        expected = run_oracle(args.python, cases)
    EXPECTED.write_text(json.dumps(expected, indent=0, sort_keys=True) + "\n")
    print(f"{len(expected)} cases written to {EXPECTED.relative_to(ROOT)}")
    if args.diff:
        sys.path.insert(0, str(ROOT))
        differ = 0
        for case in cases:
            got = run_gradcli(case)
            if got != expected[case]:
                differ += 1
                print(f"--- {case}\n  torch:   {expected[case]!r}\n  gradcli: {got!r}")
        print(f"{differ} of {len(cases)} differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
