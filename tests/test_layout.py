"""Elementwise results laid out as PyTorch lays them out (engine/layout.py): the strides PyTorch 2.13 gave 600
ops on operands in mixed layouts (tests/layout_strides.json, written by tools/layout_strides.py), and the
hot path's promise that C-contiguous operands are left alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import check_each, in_groups
from gradcli.engine import layout
from gradcli.engine.tensor import Tensor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import layout_strides  # noqa: E402
import numerics  # noqa: E402

CASES = json.loads((ROOT / "tests" / "layout_strides.json").read_text())


@pytest.fixture(scope="module")
def torch():
    return numerics.gradcli_torch()


def _strides(a: np.ndarray) -> list:
    return [s // a.itemsize for s in a.strides]


def test_the_recorded_cases_mix_layouts():
    """The file is not all contiguous operands: on the two-operand ops, numpy's own layout (np.add) differs
    from PyTorch's on many of them."""
    assert len(CASES) == 600
    numpy_differs = 0
    for c in CASES:
        if c["op"] not in layout_strides.BINARY:
            continue
        arrays = [Tensor(np.zeros(o["base"], np.float32)) for o in c["operands"]]
        out = np.add(*[layout_strides.view_of(t, o["view"])._a for t, o in zip(arrays, c["operands"])])
        numpy_differs += not all(m == s or n == 1 for m, s, n in zip(_strides(out), c["strides"], c["shape"]))
    assert numpy_differs > 20


@pytest.mark.parametrize("indices", in_groups(range(len(CASES)), str))
def test_result_strides_are_pytorchs(torch, indices):
    def check(index):
        c = CASES[index]
        rng = np.random.default_rng(index)
        ts = [layout_strides.view_of(Tensor(rng.standard_normal(o["base"]).astype(np.float32)), o["view"])
              for o in c["operands"]]
        out = layout_strides.run_op(torch, c["op"], ts)._a
        assert list(out.shape) == c["shape"]
        mine = _strides(out)
        assert all(m == s or n == 1 for m, s, n in zip(mine, c["strides"], c["shape"])), (c, mine)
    check_each(indices, check, str)


def test_contiguous_operands_are_returned_as_they_are():
    a, b = np.ones((3, 4), np.float32), np.ones(4, np.float32)
    out = a + b
    assert layout.laid_out(out, a, b) is out
    t = np.ones((4, 3), np.float32).T
    assert layout.laid_out(t + a, t, a).strides == t.strides           # the first operand decides
    assert layout.laid_out(a + t, a, t).flags.c_contiguous


def test_a_kept_size_one_dim_takes_part_in_the_order():
    """x[::2] of (2, 5, 1) and a permuted (1, 5, 1): both contiguous, yet PyTorch lays the (5, 5, 1) sum out
    with its first dim fastest, because of the strides the views left on their size-1 dims."""
    x = np.ones((2, 5, 1), np.float32)[::2]
    y = np.ones((1, 5, 1), np.float32).transpose(1, 2, 0)
    out = layout.laid_out(x + y, x, y)
    assert _strides(out) == [1, 5, 25]


# ---------------------------------------------------------------------------------------------- stride()

def test_stride_refuses_the_dims_whose_stride_gradcli_does_not_follow():
    """A dim of size 1 (or any dim of an empty tensor) takes no part in where the elements lie, and PyTorch's
    stride for it depends on how the tensor was made (x.t().unsqueeze(2) is (1, 3, 1), a contiguous (3, 4, 1)
    would be (4, 1, 1)): stride() says gradcli does not follow it rather than guess; the other dims answer."""
    from conftest import run_script
    result = run_script("import torch\nx = torch.ones(3, 1, 4)\nprint(x.stride(0), x.stride(-1))\nx.stride()\n")
    assert result.out == "4 1\n"
    assert result.error.kind == "NotImplementedError"
    assert "gradcli does not implement torch.Tensor.stride for a dimension of size 1" in result.error.message
    for source in ("torch.ones(3, 1, 4).stride(1)", "torch.zeros(2, 0).stride(0)", "torch.ones(4)[None].stride()"):
        result = run_script(f"import torch\n{source}\n")
        assert result.error.kind == "NotImplementedError", source
    assert run_script("import torch\nprint(torch.tensor(2.).stride(), torch.ones(5).stride())\n").out == "() (1,)\n"


def test_copies_keep_a_dense_layout_and_infer_one_for_the_rest():
    """clone() and the *_like factories (memory_format=torch.preserve_format): a dense layout kept, a gappy
    one made dense in the same order of dims (the strides PyTorch 2.13 gave)."""
    x = np.random.default_rng(0).standard_normal((3, 8, 5)).astype(np.float32).transpose(2, 0, 1)[:, :, ::2]
    assert _strides(layout.preserved(x)) == [1, 20, 5]
    assert _strides(layout.preserved(x.transpose(1, 2, 0))) == [20, 5, 1]
    assert _strides(layout.preserved(np.ones((4, 6))[:, ::3])) == [2, 1]
    assert layout.dense(x.transpose(2, 0, 1).copy().transpose(1, 2, 0)) and not layout.dense(x)
