#!/usr/bin/env python3
"""Per-op probe: every torch function, torch.nn.functional and torch.linalg function and Tensor method that
gradcli exposes, called on 0-d, empty and broadcasting inputs of several dtypes, forward and backward,
in gradcli and in PyTorch 2.13; a table of where value, dtype, shape, gradient or error differ.

Names are discovered from gradcli's own namespaces (gradcli.language.stdlib.TORCH and the Tensor attributes a
script may read, gradcli.language.access.TENSOR_ATTRS). How to call each one is discovered from PyTorch: the
first of a few argument patterns (``(x)``, ``(x, y)``, ``(x, 0)``, ...) that PyTorch accepts on a plain
2x3 float tensor. Each probe is then a small script: build the inputs, call, print the result (its
values, dtype and shape show in the printed tensor), and for floating inputs that require grad, call
``backward`` on the result's sum and print the gradient. Scripts run through tools/differential.py,
exactly like the fuzzer's variants.

Usage::

    python tools/probe.py --jobs 2 --report probe.md          # the full probe (a table)
    python tools/probe.py --only cumsum                       # the probes of names containing "cumsum"
    python tools/probe.py --sample 300 --save-golden tests/fuzz   # the suite's fixed slice
    python tools/probe.py --check tests/fuzz                  # re-verify it with PyTorch
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import differential as dt  # noqa: E402

GOLDEN_NAME = "probe.jsonl"
# Names that do something other than compute (state, hooks, printing setup) or need arguments no
# pattern below supplies usefully.
SKIP = {"manual_seed", "seed", "initial_seed", "set_printoptions", "set_rng_state", "get_rng_state", "backward",
        "register_hook", "retain_grad", "Generator", "no_grad", "enable_grad", "set_grad_enabled",
        "inference_mode", "set_detect_anomaly", "detect_anomaly", "is_grad_enabled", "is_inference_mode_enabled",
        "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "gradcheck", "gradgradcheck", "jacobian", "hessian",
        "vjp", "jvp", "hvp", "vhp", "grad", "Variable", "Size", "dtype", "LinAlgError", "GradcheckError",
        "default_generator", "einsum", "apply_", "map_", "requires_grad_"}

# (the input's expression, the other arguments); None as the expression: a function-only pattern, written whole
PATTERNS = [("x", ""), ("x", "y"), ("x", "0"), ("x", "0, 1"), ("x", "1"), ("x", "2, 3"), ("x", "-1"),
            ("x", "y > 0, 0.5"), ("x", "0, i"), ("x", "y, 0.5"), ("x", "y.t()"), ("x", "y, y"), ("x", "[0]"),
            ("x", "0, 0, 1"), ("x", "1, 2"), ("x", "y[0]"), ("x", "[1, 0]"), ("x", "(2, 2, 3)"), ("x", "(3, 2)"),
            ("x", "0, torch.tensor([1, 0])"), ("x", "1, (3, 1)"), ("x", "(2, 2, 3), 0.5"), ("x", "y.sigmoid()"),
            ("x", "torch.tensor([1, 0])"), ("x", "[1, 2]"), ("x.flatten()", "y.flatten()"), ("x.flatten()", ""),
            ("x[:, :2]", ""), ("x[:, :2]", "y[:, :2]"), ("x.expand(4, 2, 3)", "y.t().expand(4, 3, 2)"),
            (None, "y > 0, x, y"), (None, "[x, y]")]
# dtype name -> (is floating, values of a 2x3 input)
DTYPES = {"float32": True, "float64": True, "int64": False, "bool": False}
# kind -> (x, y) builders from a dtype name; y broadcasts against x where the kind says so
KINDS = {
    "0-d": ("torch.tensor(0.5, dtype={d})", "torch.tensor(-2.0, dtype={d})"),
    "0-d -0.0": ("torch.tensor(-0.0, dtype={d})", "torch.tensor(0.0, dtype={d})"),
    "empty (0,)": ("torch.ones(0, dtype={d})", "torch.ones(0, dtype={d})"),
    "empty (2, 0)": ("torch.ones(2, 0, dtype={d})", "torch.ones(2, 0, dtype={d})"),
    "broadcast (2,1,3)x(4,1)": ("torch.tensor([[[0.5, -1.5, 2.0]], [[-0.0, 3.0, -0.25]]], dtype={d})",
                                "torch.tensor([[1.0], [-2.0], [0.0], [0.5]], dtype={d})"),
}
STANDARD = ("x = torch.tensor([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]])\n"
            "y = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]])\ni = torch.tensor([[0, 1, 1], [1, 0, 0]])\n")
# Results whose values are unspecified (uninitialised memory): only their shape and dtype are compared.
UNSPECIFIED = {"torch.empty_like", "Tensor.new_empty", "torch.empty"}
HEADER = "import torch\nimport torch.nn.functional as F\n"


def exposed() -> list[str]:
    """Every callable a script reaches: 'torch.NAME', 'F.NAME', 'torch.linalg.NAME' and 'Tensor.NAME'."""
    from gradcli.language import access, stdlib
    from gradcli.engine.tensor import Tensor

    out = []
    for prefix, mod in (("torch.", stdlib.TORCH), ("F.", stdlib.module("torch.nn.functional")),
                        ("torch.linalg.", stdlib.module("torch.linalg"))):
        for name, value in sorted(mod.members.items()):
            if name not in SKIP and callable(value) and not isinstance(value, stdlib.ScriptModule) \
                    and not isinstance(value, type):
                out.append(prefix + name)
    for name in sorted(access.TENSOR_ATTRS):
        if name not in SKIP and callable(getattr(Tensor, name, None)) and not isinstance(getattr(Tensor, name), property):
            out.append("Tensor." + name)
    return out


def call(name: str, pattern: tuple) -> str | None:
    """`name` called with `pattern`, or None when a method cannot take that pattern."""
    first, rest = pattern
    if name.startswith("Tensor."):
        return None if first is None else f"{first}.{name[len('Tensor.'):]}({rest})"
    return f"{name}({rest})" if first is None else f"{name}({first}{', ' if rest else ''}{rest})"


def discover(names: list[str], jobs: int, seconds: float) -> dict:
    """name -> (pattern, result kind: 'tensor', 'tensors' or 'other') from PyTorch, for the names it can call."""
    cases = {}
    for name in names:
        for k, pattern in enumerate(PATTERNS):
            if call(name, pattern) is None:
                continue
            cases[f"{name}#{k}"] = (HEADER + STANDARD + f"r = {call(name, pattern)}\n"
                                    "print(type(r).__name__, type(r[0]).__name__ if isinstance(r, (tuple, list)) and r "
                                    "else '')\n")
    pool = dt.Pool("torch", jobs, seconds)
    try:
        res = pool.run_all(cases)
    finally:
        pool.close()
    found = {}
    for name in names:
        for k, pattern in enumerate(PATTERNS):
            o = res.get(f"{name}#{k}")
            if o is not None and o["status"] == "ok":
                top, _, first = o["stdout"].strip().partition(" ")
                kind = "tensor" if top == "Tensor" else "tensors" if first == "Tensor" else "other"
                found[name] = (pattern, kind)
                break
    return found


def probes(found: dict) -> list[dict]:
    """One script per (name, input kind, dtype, forward or backward), in a fixed order."""
    out = []
    for name, (pattern, kind) in sorted(found.items()):
        for kname, (xb, yb) in KINDS.items():
            for d, floating in DTYPES.items():
                for backward in ((False, True) if floating and kind != "other" else (False,)):
                    if backward and d != "float32" and kname != "0-d":
                        continue            # backward in float32 (and float64 for 0-d) is enough
                    x = xb.format(d=f"torch.{d}")
                    lines = [HEADER + f"x = {x}" + (".requires_grad_()" if backward else ""),
                             f"y = {yb.format(d=f'torch.{d}')}", "i = torch.zeros(x.shape, dtype=torch.int64)",
                             f"r = {call(name, pattern)}",
                             "print(r.shape, r.dtype, r.requires_grad)" if name in UNSPECIFIED else "print(r)"]
                    if backward:
                        first = "r" if kind == "tensor" else "r[0]"
                        lines += [f"if {first}.requires_grad:", f"    {first}.sum().backward()", "    print(x.grad)"]
                    pid = f"{name}|{kname}|{d}|{'backward' if backward else 'forward'}"
                    out.append({"id": pid.replace(" ", "_"), "name": name, "call": call(name, pattern), "kind": kname, "dtype": d,
                                "pass": "backward" if backward else "forward", "source": "\n".join(lines) + "\n"})
    return out


def what_differs(g: dict, w: dict) -> str:
    kind = dt.compare(g, w)
    if kind in ("status", "type"):
        return "runs/raises" if "ok" in (g["status"], w["status"]) else "error type"
    if kind == "message":
        return "error message"
    a, b = dt.first_stdout_difference(g["stdout"], w["stdout"])
    if a.startswith("tensor") and b.startswith("tensor"):
        if a.split("dtype=")[-1:] != b.split("dtype=")[-1:] and "dtype=" in a + b:
            return "dtype"
        if ("size=" in a) != ("size=" in b) or a.count("[") != b.count("["):
            return "shape"
    return "value"


def table(cases: list[dict], got: dict, want: dict, found: dict, names: list[str]) -> str:
    by_name = defaultdict(Counter)
    rows = defaultdict(list)
    totals = Counter()
    for c in cases:
        g, w = got[c["id"]], want[c["id"]]
        kind = dt.compare(g, w)
        if kind is None:
            totals["agree"] += 1
            continue
        why = dt.ignorable(g, w)
        if why:
            totals[f"set aside ({why})"] += 1
            continue
        d = what_differs(g, w) if kind != "stdout" or g["status"] == w["status"] else "runs/raises"
        if c["pass"] == "backward" and kind == "stdout" and g["stdout"].split("\n", 1)[0] == w["stdout"].split("\n", 1)[0]:
            d = "grad"
        totals[d] += 1
        by_name[c["name"]][d] += 1
        rows[c["name"]].append((c, d, g, w))
    undiscovered = [n for n in names if n not in found]
    out = ["# probe: 0-d, empty and broadcasting inputs, per op", "",
           f"{len(names)} names exposed by gradcli; {len(found)} callable in PyTorch with a probe pattern "
           f"({len(undiscovered)} not: {', '.join(undiscovered) or 'none'}).", "",
           f"{len(cases)} probes: " + ", ".join(f"{k}: {v}" for k, v in totals.most_common()), "",
           "| input kind | probes | agree | differ | set aside |", "|---|---|---|---|---|"]
    for kname in KINDS:
        mine = [c for c in cases if c["kind"] == kname]
        differ = sum(1 for c in mine for rs in rows.get(c["name"], ()) if rs[0] is c)
        agree = sum(1 for c in mine if dt.compare(got[c["id"]], want[c["id"]]) is None)
        out.append(f"| {kname} | {len(mine)} | {agree} | {differ} | {len(mine) - agree - differ} |")
    out += ["", "| name | differing probes | what differs | first example: call (input, dtype, pass) | PyTorch | gradcli |",
            "|---|---|---|---|---|---|"]
    for name in sorted(by_name, key=lambda n: (-sum(by_name[n].values()), n)):
        c, d, g, w = rows[name][0]

        def short(o):
            if o["status"] != "ok":
                return f"{o['type']}: {(o['message'] or '').splitlines()[0][:110] if o['message'] else ''}"
            a, b = dt.first_stdout_difference(g["stdout"], w["stdout"])
            return (a if o is g else b)[:110]
        cell = lambda s: s.replace("|", "\\|").replace("\n", " ")
        what = ", ".join(f"{k} {v}" for k, v in by_name[name].most_common())
        out.append(f"| `{name}` | {sum(by_name[name].values())} | {what} | `{c['call']}` ({c['kind']}, {c['dtype']}, {c['pass']}) "
                   f"| {cell(short(w))} | {cell(short(g))} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", metavar="PATTERN", help="only names containing PATTERN")
    ap.add_argument("--seconds", type=float, default=dt.SECONDS)
    ap.add_argument("--report", metavar="FILE")
    ap.add_argument("--sample", type=int, help="a fixed sample of this many probes (seeded with --seed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save-golden", metavar="DIR", type=Path)
    ap.add_argument("--check", metavar="DIR", type=Path)
    args = ap.parse_args(argv)
    if args.check:
        return dt.check_slice(args.check / GOLDEN_NAME, args.jobs, args.seconds)

    names = [n for n in exposed() if not args.only or args.only in n]
    found = discover(names, args.jobs, args.seconds)
    cases = probes(found)
    if args.sample:
        cases = sorted(random.Random(args.seed).sample(cases, min(args.sample, len(cases))), key=lambda c: c["id"])
    if args.save_golden:
        dt.save_slice(args.save_golden / GOLDEN_NAME, cases, args.jobs, args.seconds)
        return 0
    print(f"{len(names)} names, {len(found)} callable, {len(cases)} probes", file=sys.stderr)
    got, want, gpool, tpool = dt.run_sides(cases, args.jobs, args.seconds)
    gpool.close()
    tpool.close()
    dt.emit(table(cases, got, want, found, names), args.report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
