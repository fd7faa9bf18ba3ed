"""PyTorch's fused CPU kernels (backward formulas, one-kernel forwards, optimiser steps) give PyTorch 2.13's
bits: every case of tools/fused_bits.py whose kernel calls no library function, float32 and float64, 0-d
and 1 to 1000 elements, contiguous and strided, against the digests of the oracle's results in
tests/fused_bits.json (written by `tools/fused_bits.py --write-golden`, never by hand)."""

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import fused_bits  # noqa: E402

GOLDEN = json.loads(fused_bits.GOLDEN.read_text())
NAMES = fused_bits.golden_names()


@pytest.fixture(scope="module")
def arrays():
    drawn = fused_bits.draw(NAMES, tuple(GOLDEN["sizes"]))
    assert fused_bits.inputs_digest(drawn) == GOLDEN["inputs"], \
        "numpy's random streams changed: regenerate with tools/fused_bits.py --write-golden"
    return drawn


@pytest.fixture(scope="module")
def ours(arrays):
    return fused_bits.gradcli_side(arrays)


def _differing(results: dict, name: str) -> list:
    return [key for key, want in GOLDEN["results"].items()
            if key.split("|")[0] == name and (key not in results or fused_bits.digest(results[key]) != want)]


def test_the_golden_covers_every_exact_kernel():
    covered = {key.split("|")[0] for key in GOLDEN["results"]}
    assert covered == set(NAMES)
    cells = defaultdict(set)
    for key in GOLDEN["results"]:
        name, dtype, size, layout, _ = key.split("|")
        cells[name].add((dtype, layout, size))
    for name, seen in cells.items():    # both dtypes, strided and contiguous, 0-d and past a vector body
        assert {d for d, _, _ in seen} == {"float32", "float64"}, name
        assert ("float32", "s", "37") in seen or "softmax" in name, name
        assert ("float64", "c", "0") in seen, name


@pytest.mark.parametrize("name", NAMES)
def test_kernel_matches_pytorch_bit_for_bit(ours, name):
    assert _differing(ours, name) == []


def test_op_by_op_rounding_would_be_caught(arrays, monkeypatch):
    """The data tell the fused arithmetic from the plain one: with every fused multiply-add rounded twice,
    tanh's backward kernel, add with alpha and the optimisers no longer give PyTorch's bits."""
    from gradcli.engine import fma as fused
    from gradcli.engine.ops import arith, elementwise, nn
    from gradcli.engine import optim

    def twice(x, y, z, out=None):
        r = np.asarray(np.multiply(x, y) + z)
        if out is None:
            return r
        np.copyto(out, r, casting="same_kind")
        return out

    for module in (fused, arith, elementwise, nn, optim):
        monkeypatch.setattr(module, "fma", twice)
    keep = ("aten.tanh_backward", "add(alpha)", "optim SGD(nesterov)", "optim Adam")
    plain = fused_bits.gradcli_side({k: v for k, v in arrays.items() if k.split("|")[0] in keep})
    for name in keep:
        assert _differing(plain, name), name


def test_fma32_halfway_sums_exact_and_inexact():
    # fma's float32 path: a float64 sum on a float32 halfway point is nudged only when it was rounded
    # (log_softmax's backward meets exact ones at its targets in most steps: -(e + 1) / 32)
    from gradcli.engine.fma import fma
    inexact = (np.float32(1 - 2.0 ** -23), np.float32(2.0 ** -10 * (1 + 2.0 ** -23)),
               np.float32(1 - 2.0 ** -10 + 3 * 2.0 ** -24))          # double rounding: 1 + 2**-23, not 1 + 2**-22
    exact = (np.float32(2.0 ** -12), np.float32(2.0 ** -12), np.float32(1))     # 1 + 2**-24 exactly: even, 1
    plain = (np.float32(0.75), np.float32(1.5), np.float32(-0.25))
    for rows in ([inexact, exact, plain], [exact, plain], [exact, exact], [inexact]):
        x, y, z = (np.array(col, np.float32) for col in zip(*rows))
        want = [{inexact: np.float32(1 + 2.0 ** -23), exact: np.float32(1), plain: np.float32(0.875)}[r] for r in rows]
        assert fma(x, y, z).tolist() == want
        out = np.empty_like(z)
        assert fma(x, y, z, out) is out and out.tolist() == want


def test_one_minus_square_is_the_fused_result():
    # tanh's derivative from its output, 1 - y*y rounded once: the float64 shortcut for values in [-1, 1]
    # gives fma's own bits (checked against exact rational arithmetic), and anything else takes fma's path
    from fractions import Fraction
    from gradcli.engine.fma import fma, one_minus_square
    rng = np.random.default_rng(7)
    y = np.tanh(rng.standard_normal(4000) * 3)
    edges = [0.0, -0.0, 1.0, -1.0, 1e-300, 5e-324, 2.0 ** -27, 0.5, 0.7071067811865476, 1 - 2.0 ** -53,
             -1 + 2.0 ** -53, 0.9999999999999999, 2.0 ** -26 + 2.0 ** -52]
    y = np.concatenate([np.array(edges), y, -y])
    got = one_minus_square(y)
    assert got.view(np.int64).tolist() == fma(-y, y, np.float64(1)).view(np.int64).tolist()
    for v, r in zip(y[:60].tolist(), got[:60].tolist()):
        assert r == float(1 - Fraction(v) * Fraction(v))
    for odd in (np.array([1.5, 0.25]), np.array([np.nan, 0.5]), np.array([0.5, -0.25], np.float32), np.zeros((0,))):
        assert np.array_equal(one_minus_square(odd), fma(-odd, odd, odd.dtype.type(1)), equal_nan=True)
