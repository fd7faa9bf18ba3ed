"""float32 matrix products against PyTorch 2.13's on the AMD EPYC reference (tests/matmul_bits.json, written by
tools/matmul_bits.py from the oracle there; on an Intel CPU MKL sums otherwise, docs/numerics.md): bit for bit wherever gradcli claims MKL's order (linalg.mkl_order) or
PyTorch's own bmm kernel; elsewhere the sequential sum (linalg.sequential_guess) or the float64 product rounded once
(docs/numerics.md, "Matrix products").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import check_each, in_groups
from gradcli.engine.ops import blas, linalg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import matmul_bits  # noqa: E402

CASES = json.loads((Path(__file__).parent / "matmul_bits.json").read_text())


def _claimed(case, x, y) -> bool:
    """Whether gradcli reproduces PyTorch's order for this case."""
    if case["op"] == "bmm":
        if case["k"] * case["m"] * case["n"] < 400:
            return True
        x, y = x[0], y[0]
    order = linalg.mkl_order(x, y)
    return linalg.affordable(order, case["m"], case["k"], case["n"] * case.get("batch", 1)) is not None


def _gradcli(case, x, y, bias):
    if case["op"] == "addmm":
        return blas.addmm_array(bias, x, y)
    return linalg.matprod(x, y)


def _id(case) -> str:
    return f"{case['op']}-{case['m']}x{case['k']}x{case['n']}-{case['layout']}"


@pytest.mark.parametrize("cases", in_groups(CASES, _id))
def test_matrix_product_bits(cases):
    check_each(cases, _check, _id)


def _check(case) -> None:
    x, y, bias = matmul_bits.operands(case)
    got = _gradcli(case, x, y, bias)
    assert got.dtype == np.float32
    if _claimed(case, x, y):
        assert matmul_bits.digest(got) == case["digest"]
    elif linalg.mkl_order(*((x[0], y[0]) if x.ndim == 3 else (x, y))) == "fma":      # too big to follow
        expected = np.matmul(x, y)
        assert np.array_equal(got, expected + bias if case["op"] == "addmm" else expected)
    elif linalg.sequential_guess(case["m"], case["k"]):
        expected = linalg.in_order(x, y, np.zeros(got.shape, dtype=np.float32), False)
        assert np.array_equal(got, expected + bias if case["op"] == "addmm" else expected)
    else:
        exact = np.matmul(x.astype(np.float64), y.astype(np.float64))
        if case["op"] == "addmm":
            exact = exact + bias
        assert np.array_equal(got, exact.astype(np.float32))


def test_most_cases_are_claimed():
    claimed = sum(_claimed(c, *matmul_bits.operands(c)[:2]) for c in CASES)
    assert claimed > 0.6 * len(CASES)
