"""Pooling's float results equal PyTorch 2.13's bit for bit: forward and backward of avg_pool2d,
max_pool2d, adaptive_avg_pool2d and adaptive_max_pool2d on the cases of tests/pool_bits.json (written by
tools/pool_bits.py from the oracle: many sizes, strides, paddings, dilations, ceil and divisor modes,
float32 and float64, ties)."""

import json
import sys
from pathlib import Path

import pytest

from gradcli.engine import ops
from gradcli.engine.tensor import Tensor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import pool_bits  # noqa: E402

CASES = json.loads((ROOT / "tests" / "pool_bits.json").read_text())
FNS = {"avg": ops.pool.avg_pool2d, "max": ops.pool.max_pool2d, "adaptive_avg": ops.pool.adaptive_avg_pool2d,
       "adaptive_max": ops.pool.adaptive_max_pool2d}


def test_the_cases_cover_every_kind():
    assert len(CASES) > 100
    assert {c["kind"] for c in CASES} == set(FNS)
    assert any(c.get("ties") for c in CASES) and any(c["dtype"] == "float64" for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['kind']}-{c['seed']}")
def test_pooling_matches_pytorch_bit_for_bit(case):
    x = Tensor(pool_bits.case_input(case))
    x.requires_grad = True
    y = FNS[case["kind"]](x, **case["args"])
    g = Tensor(pool_bits.inputs(tuple(y._a.shape), case["seed"] + 1000, case["dtype"]))
    y.backward(g)
    assert pool_bits.digest(y._a) == case["out"]
    assert pool_bits.digest(x.grad._a) == case["grad"]
