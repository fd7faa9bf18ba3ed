#!/usr/bin/env python3
"""Record the strides PyTorch gives elementwise results of operands in mixed layouts: tests/layout_strides.json.

Each case is two or three operands, each a view of a fresh tensor (transposed, permuted, stepped, expanded,
or made of a smaller shape that broadcasts), and one elementwise op on them (add, mul, lt, sub, maximum,
clamp_min, addcmul, where, clamp, lerp, addcdiv). The oracle runs them and stores the result's shape and
strides; tests/test_layout.py runs the same views through gradcli and compares the strides of every dim
longer than one (engine/layout.py, docs/numerics.md "Result layout").

    python tools/layout_strides.py [--python ORACLE] [--cases N] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "layout_strides.json"

BINARY = ("add", "mul", "lt", "sub", "maximum", "clamp_min")
TERNARY = ("addcmul", "where", "clamp", "lerp", "addcdiv")


def view_of(t, spec):
    """Apply a view spec [kind, arg] to a tensor of either engine (or a numpy-like with the same methods)."""
    kind, arg = spec
    if kind == "permute":
        return t.permute(*arg)
    if kind == "step":
        return t[tuple(slice(None, None, 2) if d == arg else slice(None) for d in range(t.dim()))]
    if kind == "expand":
        return t.expand(*arg)
    return t


def run_op(torch, name, ts):
    """The op `name` on tensors ts, for either engine's torch."""
    if name == "add":
        return ts[0] + ts[1]
    if name == "mul":
        return ts[0] * ts[1]
    if name == "lt":
        return ts[0] < ts[1]
    if name == "sub":
        return ts[0] - ts[1]
    if name == "maximum":
        return torch.maximum(ts[0], ts[1])
    if name == "clamp_min":
        return ts[0].clamp_min(ts[1])
    if name == "addcmul":
        return torch.addcmul(*ts)
    if name == "where":
        return torch.where(ts[0] > 0, ts[1], ts[2])
    if name == "clamp":
        return torch.clamp(*ts)
    if name == "lerp":
        return torch.lerp(ts[0], ts[1], ts[2])
    return torch.addcdiv(*ts)


def _operand(rng: random.Random, shape: list) -> dict:
    """A base shape and a view of it whose shape is `shape`."""
    nd = len(shape)
    kind = rng.choice(["c", "permute", "step", "expand", "size1"])
    if kind == "permute" and nd >= 2:
        p = list(range(nd))
        rng.shuffle(p)
        return {"base": [shape[i] for i in p], "view": ["permute", [p.index(i) for i in range(nd)]]}
    if kind == "step":
        d = rng.randrange(nd)
        base = list(shape)
        base[d] *= 2
        return {"base": base, "view": ["step", d]}
    if kind == "expand":
        d = rng.randrange(nd)
        base = list(shape)
        base[d] = 1
        return {"base": base, "view": ["expand", list(shape)]}
    if kind == "size1":             # a dim of one left by a step (strides a contiguous tensor would not have)
        d = rng.randrange(nd)
        base = list(shape)
        base[d] = 2
        return {"base": base, "view": ["step", d]} if shape[d] == 1 else {"base": list(shape), "view": ["c", None]}
    return {"base": list(shape), "view": ["c", None]}


def make_cases(n: int, seed: int) -> list:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        nd = rng.choice([2, 2, 3, 3, 4])
        shape = [rng.choice([1, 2, 3, 4, 5]) for _ in range(nd)]
        op = rng.choice(BINARY + TERNARY)
        operands = []
        for _ in range(2 if op in BINARY else 3):
            sh = list(shape)
            if rng.random() < 0.3:
                sh = sh[rng.randrange(nd):]
            if rng.random() < 0.3:
                sh[rng.randrange(len(sh))] = 1
            operands.append(_operand(rng, sh))
        cases.append({"op": op, "operands": operands})
    return cases


_RUNNER = r'''
import json, sys
import torch
sys.path.insert(0, sys.argv[1])
from layout_strides import run_op, view_of
cases = json.load(sys.stdin)
for c in cases:
    ts = [view_of(torch.randn(o["base"]), o["view"]) for o in c["operands"]]
    r = run_op(torch, c["op"], ts)
    c["shape"], c["strides"] = list(r.shape), list(r.stride())
json.dump(cases, sys.stdout)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=os.environ.get("ORACLE_PYTHON", "/work/oracle/bin/python"))
    parser.add_argument("--cases", type=int, default=600)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    cases = make_cases(args.cases, args.seed)
    done = subprocess.run([args.python, "-c", _RUNNER, str(ROOT / "tools")], input=json.dumps(cases),
                          capture_output=True, text=True, check=True)
    OUT.write_text(json.dumps(json.loads(done.stdout), separators=(",", ":")) + "\n")
    print(f"{args.cases} cases written to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
