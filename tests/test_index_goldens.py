"""Every stored indexing case (tests/indexing/goldens.jsonl, made on PyTorch by tools/index_goldens.py)
replayed on gradcli: reading, writing, `+=`, gradients and errors must match exactly."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from gradcli import stdlib

HERE = Path(__file__).resolve().parent / "indexing"
sys.path.insert(0, str(HERE))
import cases  # noqa: E402

GOLDENS = [json.loads(line) for line in (HERE / "goldens.jsonl").read_text(encoding="utf-8").splitlines()]
CHUNKS = 8


def _describe(case) -> str:
    return f"#{case['id']} shape={case['shape']} key={case['key']!r} single={case['single']} " \
           f"mode={case['mode']} value={case.get('value')}"


def test_the_stored_cases_cover_every_mode_and_many_keys():
    modes = {g["case"]["mode"] for g in GOLDENS}
    assert modes == {"get", "set", "setv", "iadd", "leaf"}
    assert len(GOLDENS) > 3000
    ok = sum("err" not in g["expect"] for g in GOLDENS)
    assert ok > len(GOLDENS) // 3     # most keys are valid, not only errors


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_indexing_matches_pytorch(chunk):
    torch = types.SimpleNamespace(**stdlib.module("torch").members)
    failures = []
    for g in GOLDENS[chunk::CHUNKS]:
        got = cases.run(torch, g["case"])
        if got != g["expect"]:
            failures.append(f"{_describe(g['case'])}\n    expected {g['expect']}\n    got      {got}")
    assert not failures, f"{len(failures)} cases differ from PyTorch:\n" + "\n".join(failures[:15])
