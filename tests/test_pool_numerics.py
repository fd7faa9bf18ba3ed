"""Pooling's float results equal PyTorch 2.13's bit for bit: forward and backward of avg_pool2d/3d,
max_pool2d/3d, adaptive_avg_pool2d/3d and adaptive_max_pool2d/3d on the cases of tests/pool_bits.json and
tests/pool3d_bits.json (written by tools/pool_bits.py from the oracle: many sizes, strides, paddings,
dilations, ceil and divisor modes, float32 and float64, ties)."""

import json
import sys
from pathlib import Path

import pytest

from gradcli.engine import ops
from gradcli.engine.tensor import Tensor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import pool_bits  # noqa: E402

CASES = {n: json.loads(path.read_text()) for n, path in pool_bits.OUT.items()}
FNS = {n: {kind: getattr(ops.pool, f"{kind}_pool{n}d") for kind in ("avg", "max", "adaptive_avg", "adaptive_max")}
       for n in (2, 3)}


@pytest.mark.parametrize("n", [2, 3])
def test_the_cases_cover_every_kind(n):
    assert len(CASES[n]) > 100
    assert {c["kind"] for c in CASES[n]} == set(FNS[n])
    assert any(c.get("ties") for c in CASES[n]) and any(c["dtype"] == "float64" for c in CASES[n])


@pytest.mark.parametrize("n, case", [(n, c) for n in (2, 3) for c in CASES[n]],
                         ids=lambda c: f"{c['kind']}-{c['seed']}" if isinstance(c, dict) else f"{c}d")
def test_pooling_matches_pytorch_bit_for_bit(n, case):
    x = Tensor(pool_bits.case_input(case))
    x.requires_grad = True
    y = FNS[n][case["kind"]](x, **case["args"])
    g = Tensor(pool_bits.inputs(tuple(y._a.shape), case["seed"] + 1000, case["dtype"]))
    y.backward(g)
    assert pool_bits.digest(y._a) == case["out"]
    assert pool_bits.digest(x.grad._a) == case["grad"]
