#!/usr/bin/env python3
"""Bit agreement with PyTorch, by op row: runs every row's cases (tools/numerics_cases.py) through gradcli's engine
and through PyTorch in a subprocess, and counts the elements that are bit-identical, within one ulp, and how far.

For each op row of the engine's tables, float32 and float64, each size (1 ... 10^5 elements), contiguous and strided
inputs (a rank-1 input as every other element of a longer vector, a matrix as a transposed view), it compares the
forward result and the gradient of every differentiable input (out.backward with a random gradient). PyTorch runs
in the oracle interpreter (`--python`, default /work/oracle/bin/python) as tools/numerics_oracle.py; gradcli never
imports torch.

Classes: "algorithmic" rows are fixed by PyTorch's own kernels (goal: 100% bit-identical); "library" rows pass
through a platform elementary function, BLAS/LAPACK or oneDNN (goal: the correctly rounded rate, shown as the
share of PyTorch's float32 elements equal to the float64 computation rounded once). "cond" is, for an elementwise
gradient, the bit agreement among elements whose forward result agrees: the backward kernel's own arithmetic.

Usage:
    python tools/numerics.py                    # the full table (a few minutes)
    python tools/numerics.py --quick            # sizes 1, 8, 33, 1000 (about 30 s)
    python tools/numerics.py --only tanh,sum    # rows whose node or key contains one of these
    python tools/numerics.py --json out.json    # every (case, dtype, size, layout) figure as JSON
    python tools/numerics.py --doc              # rewrite the table's section of docs/numerics.md
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numerics_cases as nc  # noqa: E402

DOC = ROOT / "docs" / "numerics.md"
HEADING = "## Bit agreement with PyTorch, by op"
DTYPES = ("float32", "float64")
LAYOUTS = ("contiguous", "strided")
_ORDER_INT = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}


# ---- gradcli's side

class _Namespace:
    """A script-level module (gradcli.language.stdlib.ScriptModule) as a Python attribute namespace."""

    def __init__(self, module):
        self._m = module

    def __getattr__(self, name):
        from gradcli.language.stdlib import ScriptModule
        value = self._m.members[name]
        return _Namespace(value) if isinstance(value, ScriptModule) else value


def gradcli_torch():
    from gradcli.language.stdlib import TORCH
    return _Namespace(TORCH)


def _gradcli_tensor(arr, dtype_name, requires_grad):
    from gradcli.engine.tensor import Tensor
    if dtype_name is None:
        return Tensor(np.array(arr))
    t = Tensor(np.array(arr, dtype=np.dtype(dtype_name)))
    if requires_grad:
        t.requires_grad = True
    return t


def engine_rows() -> list:
    """[(key, Op)] for every row of the engine's tables, in table order."""
    from gradcli.engine import ops
    rows = []
    for group in ops.GROUPS:
        short = group.__name__.rsplit(".", 1)[1]
        for attr, value in vars(group).items():
            if value.__class__.__name__ == "Op":
                rows.append((f"{short}.{attr}", value))
    return rows


def _records(out, node: str) -> bool:
    seen, stack = set(), [getattr(out, "grad_fn", None)]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if n.op.node == node:
            return True
        stack.extend(n.inputs)
    return False


def run_gradcli(torch, cases, index, dtype_name, n, layout, node, absolute=False):
    """(results as numpy arrays, whether the row's node was recorded)."""
    from gradcli.engine import autograd
    with autograd.enable_grad(), np.errstate(all="ignore"):
        results = nc.run_case(torch, cases[index], index, dtype_name, n, layout, _gradcli_tensor, absolute)
    recorded = node is None or _records(results["out"], node) or any(_records(t, node) for t in results.values())
    return {k: np.array(v._a) for k, v in results.items()}, recorded


# ---- comparison

def _ordered(a: np.ndarray) -> np.ndarray:
    """Floats as integers in the order of the reals (adjacent floats differ by 1; -0.0 and 0.0 are both 0)."""
    i = a.view(_ORDER_INT[a.dtype]).astype(np.int64)
    mag = i & np.int64(np.iinfo(_ORDER_INT[a.dtype]).max)
    return np.where(i < 0, -mag, mag).astype(np.float64)


def compare(mine: np.ndarray, theirs: np.ndarray) -> tuple:
    """(elements, bit-identical, within 1 ulp, max ulp, per-element bit-identical mask)."""
    mine, theirs = np.ascontiguousarray(mine), np.ascontiguousarray(theirs)
    if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
        raise ValueError(f"result {mine.dtype}{list(mine.shape)} vs PyTorch's {theirs.dtype}{list(theirs.shape)}")
    if mine.dtype not in _ORDER_INT:
        same = mine == theirs
        return mine.size, int(same.sum()), int(same.sum()), 0.0 if same.all() else float("inf"), same
    nan_m, nan_t = np.isnan(mine), np.isnan(theirs)
    same = (mine.view(_ORDER_INT[mine.dtype]) == theirs.view(_ORDER_INT[mine.dtype])) | (nan_m & nan_t)
    with np.errstate(invalid="ignore"):
        ulp = np.abs(_ordered(mine) - _ordered(theirs))
    ulp = np.where(nan_m & nan_t, 0.0, np.where(nan_m | nan_t, np.inf, ulp))
    return mine.size, int(same.sum()), int((ulp <= 1).sum()), float(ulp.max()) if ulp.size else 0.0, same


def _view_of_grad(arr: np.ndarray, case, name: str, layout: str) -> np.ndarray:
    """A strided input's gradient as the view the snippet saw (the base's other elements are zeros in both)."""
    if layout != "strided":
        return arr
    if arr.ndim == 1:
        return arr[::2]
    return np.swapaxes(arr, -1, -2) if arr.ndim >= 2 else arr


def ulp_error(x: np.ndarray, exact: np.ndarray, scale=None) -> np.ndarray:
    """|x - exact| in units of the float32 spacing at |exact| (or at `scale`), finite elements only."""
    with np.errstate(all="ignore"):
        at = np.abs(exact) if scale is None else scale
        spacing = np.spacing(at.astype(np.float32)).astype(np.float64)
        err = np.abs(x.astype(np.float64) - exact) / spacing
    return err[np.isfinite(err)]


def _add_error(acc: list, exact, mine, theirs, scale=None) -> None:
    e_mine, e_theirs = ulp_error(mine, exact, scale), ulp_error(theirs, exact, scale)
    if e_mine.size and e_theirs.size:
        acc[0] += float(e_mine.sum())
        acc[1] = max(acc[1], float(e_mine.max()))
        acc[2] += float(e_theirs.sum())
        acc[3] = max(acc[3], float(e_theirs.max()))
        acc[4] += min(e_mine.size, e_theirs.size)


class Tally:
    """Sums of one (row, output, dtype) over its cases, sizes and layouts."""

    __slots__ = ("elements", "same", "ulp1", "max_ulp", "ref_elements", "ref_torch", "ref_gradcli", "cond_n",
                 "cond_same", "worst", "error", "scaled")

    def __init__(self):
        self.elements = self.same = self.ulp1 = self.ref_elements = self.ref_torch = self.ref_gradcli = 0
        self.cond_n = self.cond_same = 0
        self.max_ulp = 0.0
        self.worst = None
        self.error = [0.0, 0.0, 0.0, 0.0, 0]    # against float64: gradcli sum, max; PyTorch sum, max; count
        self.scaled = [0.0, 0.0, 0.0, 0.0, 0]   # the same in float32 ulps of each element's scale (products)

    def add(self, elements, same, ulp1, max_ulp, where):
        self.elements += elements
        self.same += same
        self.ulp1 += ulp1
        if max_ulp > self.max_ulp or (self.worst is None and same < elements):
            self.max_ulp = max(self.max_ulp, max_ulp)
            self.worst = where


# ---- the oracle process

class Oracle:
    """tools/numerics_oracle.py running in the oracle interpreter, one request at a time (sent ahead, so PyTorch
    computes a row while gradcli computes it too)."""

    def __init__(self, python: str):
        script = Path(__file__).resolve().parent / "numerics_oracle.py"
        # idle OpenMP threads sleep instead of spinning (PyTorch waits while gradcli computes): no effect on values
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
        self.proc = subprocess.Popen([python, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, cwd=str(ROOT), env=env)
        self.dir = tempfile.mkdtemp(prefix="numerics-")
        self.count = 0
        self.path = None

    def send(self, jobs: list) -> None:
        self.count += 1
        self.path = os.path.join(self.dir, f"r{self.count}.npz")
        self.proc.stdin.write(json.dumps({"jobs": jobs, "path": self.path}) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> tuple:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the oracle process ended (is --python an interpreter with PyTorch and numpy?)")
        errors = json.loads(line)["errors"]
        with np.load(self.path) as data:
            arrays = {k: data[k] for k in data.files}
        os.unlink(self.path)
        return arrays, errors

    def close(self) -> None:
        try:
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- the measurement

def _jobs_of(table, indices, sizes, dtypes, layouts) -> list:
    jobs, cases = [], nc.TABLES[table]
    for index in indices:
        for dtype_name in dtypes:
            for n in cases[index].sizes(sizes):
                for layout in (la for la in layouts if la in cases[index].layouts):
                    jobs.append([f"{index}/{dtype_name}/{n}/{layout}", table, index, dtype_name, n, layout])
    return jobs


def _plan(table: str, only) -> tuple:
    """([(key, node, case indices)], {key: node} of rows without cases) for the chosen table and filter."""
    cases = nc.TABLES[table]
    cases_of: dict = {}
    for index, c in enumerate(cases):
        cases_of.setdefault(c.row, []).append(index)
    if table == "ops":
        rows = [(k, op.node) for k, op in engine_rows()]
        missing = sorted(set(cases_of) - {k for k, _ in rows})
        if missing:
            raise SystemExit(f"numerics_cases: no op row {missing[0]}")
    else:
        rows = [(label, None) for label in cases_of]
    wanted = [(k, node) for k, node in rows
              if not only or any(w.lower() in k.lower() or w.lower() in (node or "").lower() for w in only)]
    return [(k, node, cases_of[k]) for k, node in wanted if k in cases_of], \
        {k: node for k, node in wanted if k not in cases_of}


def measure(python: str, sizes, dtypes=DTYPES, layouts=LAYOUTS, only=None, progress=None, table="ops") -> dict:
    """Run a table ("ops": every op row; "products": matrix products at tutorial shapes); returns
    {"rows": [...], "cases": [...], "not_driven": {...}, "seconds": s}."""
    started = time.perf_counter()
    torch = gradcli_torch()
    cases = nc.TABLES[table]
    plan_run, undriven = _plan(table, only)
    report = {"table": table, "rows": [], "cases": [], "not_driven": {}, "sizes": list(sizes),
              "dtypes": list(dtypes), "layouts": list(layouts)}
    for k, node in undriven.items():
        report["not_driven"][k] = {"node": node, "why": nc.NOT_DRIVEN.get(k, "no case in numerics_cases.py")}
    oracle = Oracle(python)
    try:
        if plan_run:
            oracle.send(_jobs_of(table, plan_run[0][2], sizes, dtypes, layouts))
        for step, (key, node, indices) in enumerate(plan_run):
            row_started = time.perf_counter()
            jobs = _jobs_of(table, indices, sizes, dtypes, layouts)
            mine, my_errors, recorded = {}, {}, {}
            for job_key, _, index, dtype_name, n, layout in jobs:
                try:
                    mine[job_key], rec = run_gradcli(torch, cases, index, dtype_name, n, layout, node)
                    recorded[index] = recorded.get(index, False) or rec
                    if table == "products" and dtype_name == "float64":     # each element's scale
                        mine[job_key + "|scale"] = run_gradcli(torch, cases, index, dtype_name, n, layout, None,
                                                               True)[0]
                except Exception as exc:        # the table lists the snippet gradcli refused
                    my_errors[job_key] = f"{type(exc).__name__}: {exc}"[:300]
            mine_seconds = time.perf_counter() - row_started
            theirs, their_errors = oracle.receive()
            report.setdefault("timing", {})[key] = [round(mine_seconds, 2),
                                                    round(time.perf_counter() - row_started, 2)]
            if step + 1 < len(plan_run):
                oracle.send(_jobs_of(table, plan_run[step + 1][2], sizes, dtypes, layouts))
            _tally_row(report, cases, key, node or key, indices, jobs, mine, my_errors, theirs, their_errors,
                       recorded)
            if progress:
                progress(step + 1, len(plan_run), key)
    finally:
        oracle.close()
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def _tally_row(report, cases, key, node, indices, jobs, mine, my_errors, theirs, their_errors, recorded):
    tallies: dict = {}
    kinds = {cases[i].kind for i in indices}
    kind = "library" if "library" in kinds else kinds.pop()
    for job_key, _, index, dtype_name, n, layout in jobs:
        c = cases[index]
        shapes = "x".join(str(list(s(n))) for _, s in c.inputs) if c.fixed else None
        entry = {"row": key, "node": node, "case": c.code.removeprefix("out = "), "dtype": dtype_name, "n": n,
                 "layout": layout}
        error = my_errors.get(job_key) or their_errors.get(job_key)
        if error:
            entry["error"] = ("gradcli: " if job_key in my_errors else "PyTorch: ") + error
            report["cases"].append(entry)
            continue
        results = mine[job_key]
        reference = mine.get(job_key.replace("float32", "float64")) if dtype_name == "float32" else None
        entry["outputs"] = {}
        forward_same = None
        for name, arr in results.items():
            other = theirs.get(f"{job_key}|{name}")
            if other is None:
                entry["outputs"][name] = "PyTorch has no such gradient"
                continue
            if name != "out":
                arr, other = _view_of_grad(arr, c, name, layout), _view_of_grad(other, c, name, layout)
            try:
                elements, same, ulp1, max_ulp, mask = compare(arr, other)
            except ValueError as exc:
                entry["outputs"][name] = str(exc)
                continue
            if name == "out":
                forward_same = mask
            t = tallies.setdefault((name, dtype_name), Tally())
            t.add(elements, same, ulp1, max_ulp, f"n={n} {layout}")
            entry["outputs"][name] = {"elements": elements, "same": same, "ulp1": ulp1, "max_ulp": max_ulp}
            if name != "out" and c.elementwise and forward_same is not None and forward_same.shape == mask.shape:
                t.cond_n += int(forward_same.sum())
                t.cond_same += int((mask & forward_same).sum())
            if reference is not None and name in reference and arr.dtype == np.float32:
                ref = reference[name]
                if name != "out":
                    ref = _view_of_grad(ref, c, name, layout)
                with np.errstate(over="ignore", invalid="ignore"):
                    rounded = ref.astype(np.float32)
                if rounded.shape == arr.shape:
                    t.ref_elements += arr.size
                    t.ref_torch += compare(rounded, other)[1]
                    t.ref_gradcli += compare(rounded, arr)[1]
                    _add_error(t.error, ref, arr, other)
                    scale = mine.get(job_key.replace("float32", "float64") + "|scale", {}).get(name)
                    if scale is not None:
                        if name != "out":
                            scale = _view_of_grad(scale, c, name, layout)
                        _add_error(t.scaled, ref, arr, other, scale)
        report["cases"].append(entry)
    outputs = sorted({name for name, _ in tallies}, key=lambda s: (s != "out", s))
    unrecorded = [cases[i].code.removeprefix("out = ") for i in indices if recorded.get(i) is False]
    for name in outputs:
        row = {"row": key, "node": node, "output": name, "class": kind, "unrecorded": unrecorded}
        for dtype_name in DTYPES:
            t = tallies.get((name, dtype_name))
            if t is None:
                continue
            row[dtype_name] = {"elements": t.elements, "same": t.same, "ulp1": t.ulp1, "max_ulp": t.max_ulp,
                               "worst": t.worst, "cond": [t.cond_same, t.cond_n],
                               "ref": [t.ref_torch, t.ref_gradcli, t.ref_elements], "error": t.error,
                               "scaled": t.scaled}
        report["rows"].append(row)
    errors = [e for e in report["cases"] if e["row"] == key and "error" in e]
    if not outputs:
        report["rows"].append({"row": key, "node": node, "output": "-", "class": kind, "unrecorded": unrecorded,
                               "error": errors[0]["error"] if errors else "no output"})
    elif errors:
        report["rows"][-1]["partial_errors"] = len(errors)


# ---- the table

def _pct(num: int, den: int) -> str:
    if den == 0:
        return "-"
    if num == den:
        return "100"
    value = 100.0 * num / den
    return f"{min(value, 99.99):.2f}" if value >= 0.01 else ("0" if num == 0 else "<0.01")


def _ulps(x: float) -> str:
    if x == float("inf"):
        return "nan/inf"
    return f"{x:.0f}" if x < 1e6 else f"{x:.1e}"


def table(report: dict) -> str:
    """The report as a markdown table, then the rows that could not be driven and the snippets that failed."""
    lines = ["| row | output | class | f32 same % | f32 ≤1 ulp % | f32 max ulp | f32 cond % | f64 same % "
             "| f64 ≤1 ulp % | f64 max ulp | PyTorch f32 = CR % | gradcli f32 = CR % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for r in report["rows"]:
        label = r["node"] + ("" if r["output"] != "out" else "")
        if "error" in r:
            lines.append(f"| {label} | - | {r['class']} | failed: {r['error'][:80]} |" + " |" * 8)
            continue
        cells = [label, r["output"], r["class"]]
        for dtype_name in DTYPES:
            t = r.get(dtype_name)
            if t is None:
                cells += ["-"] * (4 if dtype_name == "float32" else 3)
                continue
            cells += [_pct(t["same"], t["elements"]), _pct(t["ulp1"], t["elements"]), _ulps(t["max_ulp"])]
            if dtype_name == "float32":
                cells.append(_pct(*t["cond"]) if r["output"] != "out" else "")
        ref = r.get("float32", {}).get("ref", [0, 0, 0])
        cells += [_pct(ref[0], ref[2]), _pct(ref[1], ref[2])]
        lines.append("| " + " | ".join(cells) + " |")
        if r.get("unrecorded") and r["output"] == "out":
            notes.append(f"- {r['node']} ({r['row']}): the snippet `{r['unrecorded'][0]}` does not record the row "
                         "in gradcli (the figures measure the snippet, not the row)")
        if r.get("partial_errors") and r["output"] != "out":
            pass
    failed = {}
    for e in report["cases"]:
        if "error" in e:
            failed.setdefault((e["row"], e["case"]), e["error"])
    out = "\n".join(lines)
    if report["not_driven"]:
        out += "\n\nRows not driven automatically:\n\n" + "\n".join(
            f"- {v['node']} ({k}): {v['why']}" for k, v in report["not_driven"].items())
    if failed:
        out += "\n\nSnippets that failed (first error of each):\n\n" + "\n".join(
            f"- {row}: `{code}`: {err}" for (row, code), err in failed.items())
    if notes:
        out += "\n\nNotes:\n\n" + "\n".join(notes)
    return out


def products_table(report: dict) -> str:
    """The matrix-product report: per op, bit agreement with PyTorch and both engines' float32 error against the
    float64 product of the same inputs (in float32 ulps at the exact value)."""
    lines = ["| op | output | shapes | same % | ≤1 ulp % | max ulp apart | gradcli err mean / max (ulp) "
             "| PyTorch err mean / max (ulp) | gradcli scaled err mean / max | PyTorch scaled err mean / max "
             "| gradcli = CR % | PyTorch = CR % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    shapes: dict = {}
    for e in report["cases"]:
        if "outputs" in e and e["dtype"] == "float32":
            shapes.setdefault(e["row"], 0)
            shapes[e["row"]] += 1
    for r in report["rows"]:
        t = r.get("float32")
        if t is None:
            continue
        err, sc = t["error"], t["scaled"]
        count = max(err[4], 1)
        ref = t["ref"]
        lines.append(f"| {r['row']} | {r['output']} | {shapes.get(r['row'], 0)} | {_pct(t['same'], t['elements'])} "
                     f"| {_pct(t['ulp1'], t['elements'])} | {_ulps(t['max_ulp'])} "
                     f"| {err[0] / count:.3f} / {err[1]:.1f} | {err[2] / count:.3f} / {err[3]:.1f} "
                     f"| {sc[0] / max(sc[4], 1):.4f} / {sc[1]:.3f} | {sc[2] / max(sc[4], 1):.4f} / {sc[3]:.3f} "
                     f"| {_pct(ref[1], ref[2])} | {_pct(ref[0], ref[2])} |")
    return "\n".join(lines)


def doc_section(report: dict, command: str) -> str:
    sizes = ", ".join(str(n) for n in report["sizes"])
    return (f"{HEADING}\n\n"
            "Written by `tools/numerics.py` (regenerate this section with "
            f"`{command}`; it replaces everything from this heading to the next `## `). "
            f"Each row's cases (tools/numerics_cases.py) ran at sizes {sizes} (elements; matrices about that many), "
            "float32 and float64, contiguous and strided (a vector as every other element, a matrix transposed), "
            "through gradcli and through PyTorch 2.13 on this machine, seeded. Outputs: `out` is the forward result, "
            "`grad a` the gradient of input `a` after `out.backward(g)` with a random `g`. \"same\" counts "
            "bit-identical elements, \"≤1 ulp\" those at most one float apart, \"cond\" (elementwise gradients) the "
            "bit agreement among elements whose forward result agreed. \"CR\": the share of float32 elements equal "
            "to the float64 computation of the same inputs rounded once, for PyTorch and for gradcli: for a "
            "library row (elementary function, BLAS/LAPACK, oneDNN) that rate, not 100%, is the goal; an "
            "algorithmic row's goal is 100% same. "
            f"Run time: {report['seconds']} s.\n\n" + table(report) + "\n")


def write_doc(report: dict, command: str) -> None:
    section = doc_section(report, command)
    text = DOC.read_text() if DOC.exists() else "# Numerics: gradcli's float results against PyTorch's\n\n"
    pattern = re.compile(re.escape(HEADING) + r"\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda m: section + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOC.write_text(text.rstrip("\n") + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=os.environ.get("ORACLE_PYTHON", "/work/oracle/bin/python"),
                        help="an interpreter with PyTorch 2.13 and numpy (default /work/oracle/bin/python)")
    parser.add_argument("--sizes", help="comma-separated element counts (default %s)" % ",".join(map(str, nc.SIZES)))
    parser.add_argument("--quick", action="store_true", help="sizes %s only" % ",".join(map(str, nc.QUICK_SIZES)))
    parser.add_argument("--only", help="comma-separated substrings of row keys or node names")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--json", metavar="PATH", help="also write every figure as JSON ('-': stdout only)")
    parser.add_argument("--doc", action="store_true", help=f"rewrite '{HEADING[3:]}' in docs/numerics.md")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--products", action="store_true",
                        help="the matrix-product study instead: mm, matmul, linear, addmm, mv, dot, bmm at tutorial "
                             "shapes, float32, with each engine's error against float64")
    args = parser.parse_args(argv)
    sizes = nc.QUICK_SIZES if args.quick else nc.SIZES
    if args.sizes:
        sizes = tuple(int(s) for s in args.sizes.split(","))
    only = [w for w in args.only.split(",") if w] if args.only else None

    def progress(done, total, key):
        print(f"\r{done}/{total} {key:<40}", end="", file=sys.stderr, flush=True)

    table_name = "products" if args.products else "ops"
    report = measure(args.python, sizes, tuple(args.dtypes.split(",")), tuple(args.layouts.split(",")), only,
                     None if args.quiet else progress, table=table_name)
    if not args.quiet:
        print(file=sys.stderr)
    if args.json == "-":
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    print(products_table(report) if args.products else table(report))
    print(f"\n{report['seconds']} s")
    if args.doc and not args.products:
        write_doc(report, "python tools/numerics.py --doc" + (" --quick" if args.quick else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
