"""Every stored indexing case (tests/indexing/goldens.jsonl.gz, made on PyTorch by tools/index_goldens.py)
replayed on gradcli: reading, writing, `+=`, gradients and errors must match exactly; and every
torch.Size expression (size_goldens.jsonl) run as a script must print what PyTorch printed."""

from __future__ import annotations

import gzip
import json
import sys
import types
from pathlib import Path

import pytest

from conftest import run_script
from gradcli.language import stdlib

HERE = Path(__file__).resolve().parent / "indexing"
sys.path.insert(0, str(HERE))
import cases  # noqa: E402
import size_cases  # noqa: E402

CHUNKS = 8


def goldens(chunk: int | None = None) -> list[dict]:
    """The stored cases (all, or every CHUNKS-th from `chunk` on), read when a test asks: parsed once at
    import they held 38 MB in each test worker for the whole run."""
    lines = gzip.decompress((HERE / "goldens.jsonl.gz").read_bytes()).splitlines()
    return [json.loads(line) for line in (lines if chunk is None else lines[chunk::CHUNKS])]


SIZES = [json.loads(line) for line in (HERE / "size_goldens.jsonl").read_text(encoding="utf-8").splitlines()]


def _describe(case) -> str:
    return f"#{case['id']} shape={case['shape']} key={case['key']!r} single={case['single']} " \
           f"mode={case['mode']} value={case.get('value')}"


def test_the_stored_cases_cover_every_mode_and_many_keys():
    stored = goldens()
    modes = {g["case"]["mode"] for g in stored}
    assert modes == {"get", "set", "setv", "iadd", "leaf", "number", "dtype"}
    assert len(stored) > 3000
    ok = sum("err" not in g["expect"] for g in stored)
    assert ok > len(stored) // 3     # most keys are valid, not only errors


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_indexing_matches_pytorch(chunk):
    torch = types.SimpleNamespace(**stdlib.module("torch").members)
    failures = []
    for g in goldens(chunk):
        got = cases.run(torch, g["case"])
        if got != g["expect"]:
            failures.append(f"{_describe(g['case'])}\n    expected {g['expect']}\n    got      {got}")
    assert not failures, f"{len(failures)} cases differ from PyTorch:\n" + "\n".join(failures[:15])


def test_the_size_cases_are_the_stored_ones():
    assert [c["expr"] for c in SIZES] == size_cases.EXPRS


@pytest.mark.parametrize("case", SIZES, ids=[c["expr"] for c in SIZES])
def test_torch_size_matches_pytorch(case):
    result = run_script(size_cases.SETUP + f"print(repr({case['expr']}))\n")
    if "err" in case:
        assert result.error is not None, f"expected {case['err']}, got {result.out!r}"
        assert [result.error.kind, result.error.message] == case["err"]
    else:
        assert result.error is None, f"{result.error.kind}: {result.error.message}"
        assert result.out == case["out"]
