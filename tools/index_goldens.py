#!/usr/bin/env python3
"""Regenerate (or check) tests/indexing/*.jsonl*: thousands of indexing cases, and torch.Size's, run on PyTorch.

The cases and the steps each one runs live in tests/indexing/cases.py (shared with the test that
replays them on gradcli): every one-element key and a few hundred random longer keys built from
ints, slices (steps, negative and out-of-range bounds), `...`, None, Python bools, int/bool/float
tensors, lists and floats, on 0-d to 4-d tensors (and one with a zero-size dim), read, written
with scalars and with tensors, and `+=`, forward and backward. The oracle interpreter runs them;
each line of the output is one case and what PyTorch did (values, shapes, dtypes, grad_fn chains,
gradients, or the error's type and message). tests/indexing/size_cases.py lists expressions on
torch.Size (slicing, + and *, methods, comparisons, text, construction, Sizes as function
arguments); size_goldens.jsonl holds what PyTorch prints for each.

Usage::

    python tools/index_goldens.py            # write tests/indexing/goldens.jsonl.gz and size_goldens.jsonl
    python tools/index_goldens.py --check    # re-run on the oracle, exit 1 if the stored file differs
    python tools/index_goldens.py --python /work/oracle/bin/python

The launcher needs the standard library only; the worker (``--worker``) imports torch.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = REPO_ROOT / "tests" / "indexing"
GOLDENS = CASES_DIR / "goldens.jsonl.gz"      # 4 MB of text, 160 kB compressed
SIZE_GOLDENS = CASES_DIR / "size_goldens.jsonl"


def _size_case(expr: str) -> dict:
    """What PyTorch prints for size_cases.SETUP then print(repr(EXPR)), or the error it raises."""
    import contextlib
    import io

    import size_cases
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(size_cases.SETUP + f"print(repr({expr}))\n", {})
    except Exception as e:
        return {"expr": expr, "err": [type(e).__name__, str(e)]}
    return {"expr": expr, "out": out.getvalue()}


def worker() -> None:
    import warnings

    import torch
    sys.path.insert(0, str(CASES_DIR))
    import cases
    import size_cases
    warnings.simplefilter("ignore")     # deprecation warnings (uint8 masks, list keys) go to stderr
    lines = []
    for case in cases.generate():
        lines.append(json.dumps({"case": case, "expect": cases.run(torch, case)}, separators=(",", ":")))
    sizes = [json.dumps(_size_case(e), separators=(",", ":")) for e in size_cases.EXPRS]
    json.dump({"index": "\n".join(lines) + "\n", "size": "\n".join(sizes) + "\n"}, sys.stdout)


def _run_worker(python: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8")
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--worker"], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"index_goldens: the worker failed under {python}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def _read(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Regenerate tests/indexing/*.jsonl from PyTorch 2.13.")
    p.add_argument("--check", action="store_true", help="compare with the stored file; exit 1 on a difference")
    p.add_argument("--python", metavar="PATH", help="oracle interpreter (default: $ORACLE_PYTHON, else .oracle-venv/)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker()
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from regen_goldens import choose_python
    texts = _run_worker(choose_python(args.python))
    failed = 0
    for name, path in (("index", GOLDENS), ("size", SIZE_GOLDENS)):
        text = texts[name]
        n = text.count("\n")
        if args.check:
            stored = _read(path) if path.exists() else ""
            new, old = text.splitlines(), stored.splitlines()
            differ = [i for i in range(max(len(new), len(old)))
                      if (new[i] if i < len(new) else None) != (old[i] if i < len(old) else None)]
            for i in differ[:20]:
                print(f"differs   {path.name} line {i + 1}")
            print(f"check: {path.name}: {n} cases: {n - len(differ)} ok, {len(differ)} differ")
            failed += len(differ)
        else:
            data = text.encode("utf-8")
            path.write_bytes(gzip.compress(data, 9, mtime=0) if path.suffix == ".gz" else data)
            print(f"regen: {n} cases written to {path.relative_to(REPO_ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
