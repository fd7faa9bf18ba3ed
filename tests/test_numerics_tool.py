"""tools/numerics.py measured against a stand-in oracle: gradcli itself posing as torch, with one op nudged by an ulp.

The real oracle (PyTorch) is not needed: the stand-in checks the tool's plumbing (the subprocess protocol, inputs
drawn the same on both sides, strided views, gradients, ulp counting, the table and its doc section), and the
coverage test keeps every op row either measured or listed with a reason.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import numerics  # noqa: E402
import numerics_cases  # noqa: E402

# A `torch` module for the oracle subprocess: gradcli's script namespace, except that torch.where's result is
# nudged up by half its ulp or more (r + r * 2**-24, exact until the add): one ulp, never two.
FAKE_TORCH = '''
"""Stand-in torch for tests/test_numerics_tool.py."""
import numpy as np
from gradcli.engine.tensor import Tensor
from gradcli.language.stdlib import TORCH
from numerics import gradcli_torch

_top = gradcli_torch()
float32, float64 = TORCH.members["float32"], TORCH.members["float64"]


def tensor(arr, dtype):
    return Tensor(np.array(arr, dtype=np.float32 if dtype is float32 else np.float64))


def from_numpy(arr):
    return Tensor(np.array(arr))


def numerics_array(t):
    return np.array(t._a)


def where(m, a, b):
    r = _top.where(m, a, b)
    return r + r * 2.0 ** -24


def __getattr__(name):
    return getattr(_top, name)
'''


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    fake = tmp_path_factory.mktemp("fake_torch")
    (fake / "torch.py").write_text(textwrap.dedent(FAKE_TORCH))
    out = tmp_path_factory.mktemp("out") / "report.json"
    mp = pytest.MonkeyPatch()
    mp.setenv("PYTHONPATH", f"{fake}:{ROOT}:{ROOT / 'tools'}")
    try:
        numerics.main(["--python", sys.executable, "--only", "SumBackward1,WhereBackward0,MmBackward0,NotImplemented",
                       "--sizes", "1,8,33", "--json", str(out), "--quiet"])
    finally:
        mp.undo()
    return json.loads(out.read_text())


def _row(report, node, output):
    return next(r for r in report["rows"] if r["node"] == node and r["output"] == output)


def test_identical_engines_agree_in_every_bit(report):
    for node, outputs in (("SumBackward1", ("out", "grad a")), ("MmBackward0", ("out", "grad a", "grad b"))):
        for output in outputs:
            for dtype in ("float32", "float64"):
                t = _row(report, node, output)[dtype]
                assert t["elements"] > 0
                assert t["same"] == t["ulp1"] == t["elements"] and t["max_ulp"] == 0


def test_a_one_ulp_nudge_is_counted(report):
    t = _row(report, "WhereBackward0", "out")["float32"]
    assert t["same"] < t["elements"]
    assert t["ulp1"] == t["elements"] and t["max_ulp"] == 1
    # the float64 "reference" is gradcli's own float64 result: the nudged float32 values miss it
    torch_cr, gradcli_cr, n = t["ref"]
    assert gradcli_cr == n and torch_cr < n


def test_sizes_layouts_and_dtypes_are_all_run(report):
    runs = {(c["dtype"], c["n"], c["layout"]) for c in report["cases"] if c["row"] == "reduce.SUM_DIM"}
    assert runs == {(d, n, layout) for d in ("float32", "float64") for n in (1, 8, 33)
                    for layout in ("contiguous", "strided")}
    assert not [c for c in report["cases"] if "error" in c]


def test_rows_without_numbers_are_listed_not_skipped(report):
    assert report["not_driven"]["elementwise.NOT_IMPLEMENTED"]["node"] == "NotImplemented"
    text = numerics.table(report)
    assert "Rows not driven automatically" in text and "NotImplemented" in text


def test_doc_section_is_replaced_in_place(report, tmp_path, monkeypatch):
    doc = tmp_path / "numerics.md"
    doc.write_text("# Numerics\n\n## Other\n\nkept\n\n" + numerics.HEADING + "\n\nold table\n\n## After\n\nkept too\n")
    monkeypatch.setattr(numerics, "DOC", doc)
    numerics.write_doc(report, "python tools/numerics.py --doc")
    text = doc.read_text()
    assert "old table" not in text and text.count(numerics.HEADING) == 1
    assert "kept\n" in text and "## After\n\nkept too" in text
    assert "| WhereBackward0 | out | algorithmic |" in text


def test_every_op_row_has_a_case_or_a_reason():
    rows = dict(numerics.engine_rows())
    cased = {c.row for c in numerics_cases.CASES}
    assert cased <= set(rows)
    assert sorted(set(rows) - cased - set(numerics_cases.NOT_DRIVEN)) == []
    assert not cased & set(numerics_cases.NOT_DRIVEN)


def test_ulp_distance_across_zero_and_nan():
    a = np.array([0.0, -0.0, 1.0, np.nan, np.inf], dtype=np.float32)
    b = np.array([-0.0, np.float32(2 ** -149), np.nextafter(np.float32(1), np.float32(2)), np.nan, np.inf],
                 dtype=np.float32)
    n, same, ulp1, max_ulp, mask = numerics.compare(a, b)
    assert (n, same, ulp1, max_ulp) == (5, 2, 5, 1.0)
    assert mask.tolist() == [False, False, False, True, True]
