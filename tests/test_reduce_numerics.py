"""Reductions other than sum give PyTorch 2.13's bits: softmax/log_softmax forward and softmax backward,
var/std, cumsum/cumprod, prod, nll_loss and cross_entropy, the vector norms and clip_grad_norm_'s total,
the mean and sum of mse_loss, smooth_l1_loss and huber_loss, logsumexp, on the cases of tests/reduce_bits.json (written by
tools/reduce_bits.py --write from the oracle: float32 and float64, contiguous and transposed, along each
dim and over all, sizes 1 to 1000). The softmax family's cases are those where PyTorch's own exp rounds
correctly on every element (its vector exp is not correctly rounded; gradcli's is)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import check_each, in_groups
from gradcli.engine import vecorder

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import reduce_bits  # noqa: E402

CASES = json.loads((ROOT / "tests" / "reduce_bits.json").read_text())
EXACT = [c for c in CASES if c["exact"]]


def test_the_cases_cover_every_op_dtype_and_layout():
    assert {c["op"] for c in EXACT} == set(reduce_bits.COMMITTED)
    assert {c["dtype"] for c in EXACT} == {"float32", "float64"}
    assert {c["layout"] for c in EXACT} == {"c", "t"}
    assert len(EXACT) > 400


def _id(case) -> str:
    return f"{case['op']}-{case['dtype'][5:]}-{case['seed']}"


def _check(case) -> None:
    assert reduce_bits.digest(reduce_bits.gradcli_result(case)) == case["out"]


@pytest.mark.parametrize("cases", in_groups(EXACT, _id))
def test_reductions_match_pytorch_bit_for_bit(cases):
    np.seterr(all="ignore")
    check_each(cases, _check, _id)


def test_lane_sum_is_the_avx512_order():
    # 17 float32 elements: lanes 0..15 take elements 0..15, lane 0 adds element 16, then the halving tree
    a = np.float32(2.0) ** -np.arange(17, dtype=np.float32) * np.float32(1 + 2 ** -20)
    a[0] = np.float32(2 ** 24)
    lanes = a[:16].copy()
    lanes[0] += a[16]
    while lanes.size > 1:
        lanes = lanes[:lanes.size // 2] + lanes[lanes.size // 2:]
    assert vecorder.lane_sum(a[None])[0] == lanes[0]
    # float64: 8 lanes added left to right
    b = np.arange(1.0, 12.0) * 0.1
    acc = b[:8].copy()
    acc[:3] += b[8:]
    total = acc[0]
    for v in acc[1:]:
        total = total + v
    assert vecorder.lane_sum(b[None])[0] == total
