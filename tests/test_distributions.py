"""Bit-exact random draws against PyTorch 2.13 (CPU, the default kernels an AMD machine runs):
multinomial, bernoulli, exponential_, geometric_, cauchy_, log_normal_, and the normal / random_ /
*_like draws they sit beside, on many seeds, shapes, dtypes, layouts and parameters.

Each case is a small script that prints its draws with `.tolist()` (every float printed exactly).
tools/rng_cases.py (which holds CASES) ran the same scripts under PyTorch and stored the SHA-256 of what they printed in
tests/rng_distributions_expected.json; here gradcli runs them and the digests must match. Regenerate
with `PYTHONPATH=$PWD /work/oracle/bin/python tools/rng_cases.py` after changing CASES.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conftest import run_script


def _tool():
    spec = importlib.util.spec_from_file_location("rng_cases", Path(__file__).parents[1] / "tools" / "rng_cases.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


_TOOL = _tool()
CASES, EXPECTED, digest = _TOOL.CASES, _TOOL.EXPECTED, _TOOL.digest


def _expected() -> dict:
    return json.loads(EXPECTED.read_text())


def _chunks(n=8):
    names = sorted(CASES)
    return [names[i::n] for i in range(n)]


@pytest.mark.parametrize("names", _chunks(), ids=[f"chunk{i}" for i in range(8)])
def test_draws_match_pytorch_bit_for_bit(names):
    expected = _expected()
    wrong = []
    for name in names:
        result = run_script(CASES[name], f"<{name}>")
        got = result.error.render() if result.error is not None else result.out
        if digest(got) != expected[name]:
            wrong.append(name)
    assert wrong == []


def test_every_case_has_an_expectation():
    assert sorted(_expected()) == sorted(CASES)
    assert len(CASES) > 1000
