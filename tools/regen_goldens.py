#!/usr/bin/env python3
"""Regenerate (or check) the expected outputs of gradcli's own golden cases from real PyTorch.

Every ``NAME.grad`` in the case directory (default: ``tests/conformance/``) is run with an oracle
Python interpreter that has PyTorch 2.13 (CPU) and numpy, in the case's own directory, with
``PYTHONHASHSEED=0``. Each case runs twice: once with ``ATEN_CPU_CAPABILITY=avx2`` and once with the
variable unset (the machine's widest kernels, AVX512 here). What PyTorch prints on x86-64 is what its
vectorised kernels compute, and the two builds agree on almost all of it (docs/numerics.md); a case whose
two runs disagree depends on something else (threads, timing, the vector width, as softmax's row sums do)
and is reported as NONDET, with nothing written for it. The scalar build (``default``), which no x86-64 user runs, adds in
another order and is not a reference.

Written files:

* ``NAME.out``: the script's stdout, with every ``0x[0-9a-f]+`` replaced by ``0xADDR``;
* ``NAME.err``: only when the script raised: the last line of the traceback, normalised the same
  way (``ExceptionType: message``). A stale ``NAME.err`` is deleted when the script succeeds.

Oracle interpreter, first that applies: ``--python PATH``, ``$ORACLE_PYTHON``, else a virtual
environment created on demand at ``.oracle-venv/`` in the repository root
(``pip install torch==2.13.0 numpy``).

Usage::

    python tools/regen_goldens.py                    # regenerate tests/conformance/
    python tools/regen_goldens.py --only err_        # only cases whose name contains "err_"
    python tools/regen_goldens.py --check            # compare with the stored files, exit 1 on a difference
    python tools/regen_goldens.py DIR --python /path/to/venv/bin/python

Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CASES = REPO_ROOT / "tests" / "conformance"
ORACLE_VENV = REPO_ROOT / ".oracle-venv"
ORACLE_REQUIREMENTS = ["torch==2.13.0", "numpy"]

ADDR = re.compile(r"0x[0-9a-f]+")
TRACEBACK_HEADER = "Traceback (most recent call last):"
# (label, value of ATEN_CPU_CAPABILITY; None means "unset")
RUNS = (("avx2", "avx2"), ("native", None))


def normalize(text: str) -> str:
    """Replace every object address (``0x`` followed by lowercase hex digits) with ``0xADDR``."""
    return ADDR.sub("0xADDR", text)


def last_traceback_line(stderr: str) -> str | None:
    """The last non-empty line of the last traceback in ``stderr`` (``Type: message``), or None
    when stderr holds no traceback (e.g. the interpreter was killed by a signal)."""
    start = stderr.rfind(TRACEBACK_HEADER)
    if start < 0:
        return None
    lines = [line.rstrip() for line in stderr[start:].splitlines() if line.strip()]
    return lines[-1] if len(lines) > 1 else None


# ---------------------------------------------------------------------------------------------
# The oracle interpreter


def _venv_python(root: Path) -> Path:
    if os.name == "nt":
        return root / "Scripts" / "python.exe"
    return root / "bin" / "python"


def _has_torch(python: Path) -> bool:
    probe = subprocess.run([str(python), "-c", "import torch, numpy"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return probe.returncode == 0


def ensure_oracle_venv(root: Path = ORACLE_VENV) -> Path:
    """Create ``root`` (a venv with torch 2.13 and numpy) unless it already works; return its python."""
    python = _venv_python(root)
    if python.exists() and _has_torch(python):
        return python
    if not python.exists():
        print(f"creating oracle venv at {root} ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=root.exists()).create(root)
    print(f"installing {' '.join(ORACLE_REQUIREMENTS)} into {root} ...", file=sys.stderr)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *ORACLE_REQUIREMENTS], check=True)
    if not _has_torch(python):
        raise SystemExit(f"regen_goldens: {python} still cannot import torch and numpy")
    return python


def choose_python(option: str | None) -> str:
    if option:
        return option
    env = os.environ.get("ORACLE_PYTHON")
    if env:
        return env
    return str(ensure_oracle_venv())


# ---------------------------------------------------------------------------------------------
# Running one case


@dataclass
class Outcome:
    """The normalised result of one run of a script."""
    out: str
    err: str | None  # last traceback line when the script raised, else None
    problem: str | None = None  # set when the run could not be interpreted (crash, timeout)

    def key(self):
        return (self.out, self.err, self.problem)


# How an example runs: as the script itself, after torch.manual_seed(SEED) (examples draw random numbers).
SEEDED = ("import sys, torch; torch.manual_seed({seed}); sys.argv = [{name!r}]; "
          "exec(compile(open({name!r}).read(), {name!r}, 'exec'), {{'__name__': '__main__'}})")


def run_once(python: str, script: Path, capability: str | None, timeout: float, seed: int | None = None) -> Outcome:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("ATEN_CPU_CAPABILITY", None)
    if capability is not None:
        env["ATEN_CPU_CAPABILITY"] = capability
    # in a folder of its own, with a copy of the script: the files a script saves (torch.save) go there
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(script, folder)
        return _outcome(python, script, seed, env, folder, timeout)


def _outcome(python: str, script: Path, seed, env: dict, folder: str, timeout: float) -> Outcome:
    try:
        argv = [python, script.name] if seed is None else [python, "-c", SEEDED.format(seed=seed, name=script.name)]
        proc = subprocess.run(argv, cwd=folder, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome("", None, f"timed out after {timeout:g}s")
    except OSError as e:
        return Outcome("", None, f"cannot run {python}: {e}")
    out = normalize(proc.stdout.decode("utf-8", errors="replace"))
    if proc.returncode == 0:
        return Outcome(out, None)
    stderr = proc.stderr.decode("utf-8", errors="replace")
    line = last_traceback_line(stderr)
    if line is None:
        tail = stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return Outcome(out, None, f"exit status {proc.returncode} without a traceback: {tail[0]}")
    return Outcome(out, normalize(line))


@dataclass
class CaseResult:
    name: str
    status: str  # written | unchanged | ok | differs | NONDET | ERROR
    detail: str = ""


def _read(path: Path) -> str | None:
    return path.read_bytes().decode("utf-8", errors="replace") if path.exists() else None


def process_case(python: str, script: Path, check: bool, timeout: float, seed: int | None = None,
                 out_dir: Path | None = None) -> CaseResult:
    name = script.stem
    outcomes = [(label, run_once(python, script, cap, timeout, seed)) for label, cap in RUNS]
    first_label, first = outcomes[0]
    for label, other in outcomes[1:]:
        if other.key() != first.key():
            return CaseResult(name, "NONDET", f"{first_label} and {label} runs differ"
                                                + _first_difference(first, other))
    if first.problem:
        return CaseResult(name, "ERROR", first.problem)

    if seed is None:
        out_path, err_path = script.with_suffix(".out"), script.with_suffix(".err")
    else:
        out_path, err_path = out_dir / f"{name}.seed{seed}.out", out_dir / f"{name}.seed{seed}.err"
    want_out = first.out
    want_err = first.err + "\n" if first.err is not None else None
    have_out, have_err = _read(out_path), _read(err_path)
    same = have_out == want_out and have_err == want_err

    if check:
        if same:
            return CaseResult(name, "ok")
        what = []
        if have_out != want_out:
            what.append(".out missing" if have_out is None else ".out differs")
        if have_err != want_err:
            if want_err is None:
                what.append("stale .err")
            elif have_err is None:
                what.append(".err missing")
            else:
                what.append(".err differs")
        return CaseResult(name, "differs", ", ".join(what))

    if same:
        return CaseResult(name, "unchanged")
    out_path.write_bytes(want_out.encode("utf-8"))
    if want_err is None:
        if err_path.exists():
            err_path.unlink()
    else:
        err_path.write_bytes(want_err.encode("utf-8"))
    detail = f"raises {first.err}" if first.err is not None else ""
    return CaseResult(name, "written", detail)


def _first_difference(a: Outcome, b: Outcome) -> str:
    if a.problem != b.problem:
        return f": {a.problem!r} vs {b.problem!r}"
    if a.err != b.err:
        return f": error {a.err!r} vs {b.err!r}"
    la, lb = a.out.splitlines(), b.out.splitlines()
    for i, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            return f" at stdout line {i}: {x!r} vs {y!r}"
    return f": stdout has {len(la)} vs {len(lb)} lines"


# ---------------------------------------------------------------------------------------------
# Command line


def parse_args(argv):
    p = argparse.ArgumentParser(description="Regenerate gradcli's golden outputs from PyTorch 2.13.")
    p.add_argument("dirs", nargs="*", type=Path,
                   help=f"case directories (default: {DEFAULT_CASES.relative_to(REPO_ROOT)})")
    p.add_argument("--examples", action="store_true",
                   help="the examples/ scripts instead: PyTorch's output after torch.manual_seed(0), "
                        "written to tests/examples/NAME.seed0.out")
    p.add_argument("--only", metavar="SUBSTRING", help="only cases whose name contains SUBSTRING")
    p.add_argument("--check", action="store_true",
                   help="compare with the stored files instead of writing; exit 1 on any difference")
    p.add_argument("--python", metavar="PATH",
                   help="oracle interpreter (default: $ORACLE_PYTHON, else .oracle-venv/)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per run (default 300)")
    p.add_argument("--jobs", "-j", type=int, default=min(4, os.cpu_count() or 1),
                   help="cases run in parallel (default: min(4, CPUs))")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    seed, out_dir = (0, REPO_ROOT / "tests" / "examples") if args.examples else (None, None)
    dirs = args.dirs or [REPO_ROOT / "examples" if args.examples else DEFAULT_CASES]
    scripts = []
    for d in dirs:
        if not d.is_dir():
            print(f"regen_goldens: not a directory: {d}", file=sys.stderr)
            return 2
        scripts += [s for s in sorted(d.glob("*.grad")) if not args.only or args.only in s.stem]
    if not scripts:
        print("regen_goldens: no cases" + (f" matching {args.only!r}" if args.only else ""), file=sys.stderr)
        return 2

    python = choose_python(args.python)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda s: process_case(python, s, args.check, args.timeout, seed, out_dir),
                                 scripts))

    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.status not in ("ok", "unchanged"):
            print(f"{r.status:9} {r.name}" + (f"  ({r.detail})" if r.detail else ""))

    order = ("ok", "differs") if args.check else ("written", "unchanged")
    parts = [f"{counts.get(k, 0)} {k}" for k in order + ("NONDET", "ERROR")]
    mode = "check" if args.check else "regen"
    print(f"{mode}: {len(results)} cases: " + ", ".join(parts))
    bad = counts.get("NONDET", 0) + counts.get("ERROR", 0) + counts.get("differs", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
