#!/usr/bin/env python3
"""Regenerate (or check) tests/indexing/goldens.jsonl: thousands of indexing cases run on PyTorch.

The cases and the steps each one runs live in tests/indexing/cases.py (shared with the test that
replays them on gradcli): every one-element key and a few hundred random longer keys built from
ints, slices (steps, negative and out-of-range bounds), `...`, None, Python bools, int/bool/float
tensors, lists and floats, on 0-d to 4-d tensors (and one with a zero-size dim), read, written
with scalars and with tensors, and `+=`, forward and backward. The oracle interpreter runs them;
each line of the output is one case and what PyTorch did (values, shapes, dtypes, grad_fn chains,
gradients, or the error's type and message).

Usage::

    python tools/index_goldens.py            # write tests/indexing/goldens.jsonl
    python tools/index_goldens.py --check    # re-run on the oracle, exit 1 if the stored file differs
    python tools/index_goldens.py --python /work/oracle/bin/python

The launcher needs the standard library only; the worker (``--worker``) imports torch.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = REPO_ROOT / "tests" / "indexing"
GOLDENS = CASES_DIR / "goldens.jsonl"


def worker() -> None:
    import warnings

    import torch
    sys.path.insert(0, str(CASES_DIR))
    import cases
    warnings.simplefilter("ignore")     # deprecation warnings (uint8 masks, list keys) go to stderr
    lines = []
    for case in cases.generate():
        lines.append(json.dumps({"case": case, "expect": cases.run(torch, case)}, separators=(",", ":")))
    sys.stdout.write("\n".join(lines) + "\n")


def _run_worker(python: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8")
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--worker"], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"index_goldens: the worker failed under {python}:\n{proc.stderr}")
    return proc.stdout


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Regenerate tests/indexing/goldens.jsonl from PyTorch 2.13.")
    p.add_argument("--check", action="store_true", help="compare with the stored file; exit 1 on a difference")
    p.add_argument("--python", metavar="PATH", help="oracle interpreter (default: $ORACLE_PYTHON, else .oracle-venv/)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker()
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from regen_goldens import choose_python
    text = _run_worker(choose_python(args.python))
    n = text.count("\n")
    if args.check:
        stored = GOLDENS.read_text(encoding="utf-8") if GOLDENS.exists() else ""
        new, old = text.splitlines(), stored.splitlines()
        differ = [i for i in range(max(len(new), len(old)))
                  if (new[i] if i < len(new) else None) != (old[i] if i < len(old) else None)]
        for i in differ[:20]:
            print(f"differs   line {i + 1}")
        print(f"check: {n} cases: {n - len(differ)} ok, {len(differ)} differ")
        return 1 if differ else 0
    GOLDENS.write_text(text, encoding="utf-8")
    print(f"regen: {n} cases written to {GOLDENS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
