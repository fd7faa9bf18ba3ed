"""Sums, means and the gradients sum_to reduces equal PyTorch 2.13's bit for bit (its cascade order, see
gradcli/engine/cascade.py), on the cases of tests/sum_bits.json written by tools/sum_bits.py from the
oracle, and a few properties of the order that need no oracle."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli.engine import cascade
from conftest import check_each, in_groups, run_script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import sum_bits  # noqa: E402

CASES = json.loads((ROOT / "tests" / "sum_bits.json").read_text())


def test_the_cases_cover_every_layout():
    kinds = {c["kind"] for c in CASES}
    assert kinds == {"sum", "mean", "sum_to"}
    assert {c["view"] for c in CASES} >= {"none", "t", "perm", "step"}
    assert any(np.prod(c["shape"]) >= cascade.GRAIN for c in CASES)
    assert any(c.get("as_double") for c in CASES) and any(c.get("keepdim") for c in CASES)


def _id(case) -> str:
    return f"{case['kind']}-{case['seed']}"


def _check(case) -> None:
    assert sum_bits.run(case, "gradcli") == case["expect"]


@pytest.mark.parametrize("cases", in_groups(CASES, _id))
def test_sums_match_pytorch_bit_for_bit(cases):
    check_each(cases, _check, _id)


def test_numpy_alone_would_not():
    """The cases tell the orders apart: numpy's pairwise sum misses most of them."""
    plain = [c for c in CASES if c["kind"] != "sum_to"]
    assert sum(sum_bits.numpy_digest(c) == c["expect"] for c in plain) < len(plain) * 0.6


def test_five_numbers_use_four_accumulators():
    x = np.array([1e8, 1.0, -1e8, 1.0, 1.0], dtype=np.float32)
    # ((x0 + x4) + x1) + x2 + x3: both 1.0s added to 1e8 are lost (PyTorch prints 1.0); in order it is 2.0
    assert cascade.sum_array(x).item() == 1.0


def test_accumulators_start_at_positive_zero():
    z = np.full(37, -0.0, dtype=np.float32)
    assert not np.signbit(cascade.sum_array(z))
    assert not np.signbit(cascade.sum_array(z.reshape(37, 1), (0,))).any()


def test_the_order_does_not_depend_on_a_copy():
    """A transposed view sums as PyTorch's strided kernel does, not as a contiguous copy would."""
    x = sum_bits.values((40, 33), 3, "float32")
    assert not np.array_equal(cascade.sum_array(x.T, (1,)), cascade.sum_array(np.ascontiguousarray(x.T), (1,)))


def test_set_num_threads_changes_the_split_and_is_bounded():
    out = run_script("import torch\nx = torch.arange(70000.) / 7\nprint(torch.get_num_threads())\n"
                         "a = x.sum().item()\ntorch.set_num_threads(1)\nb = x.sum().item()\n"
                         "print(a != b, torch.get_num_threads())\ntorch.set_num_threads(2)\n"
                         "print(x.sum().item() == a)\ntorch.set_num_threads(10 ** 6)\n")
    assert out.out == "2\nTrue 1\nTrue\n"
    assert "gradcli follows at most 65536 threads, got 1000000" in str(out.error)


def test_the_thread_count_is_part_of_the_isolated_state():
    from gradcli.engine.state import STATE
    with STATE.isolated():
        cascade.set_num_threads(5)
        assert cascade.get_num_threads() == 5
    assert cascade.get_num_threads() == 2


def test_a_view_flipped_along_a_length_one_dim_sums():
    """numpy calls such a view contiguous although one stride is negative: its sum took the
    negative-stride plan forever (a RecursionError in fliplr's backward of a (2, 1, 3) tensor)."""
    from gradcli.engine import cascade
    x = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    for view in (x[:, ::-1], x[::-1, ::-1], x[:, ::-1, ::-1]):
        for dims in (None, (0,), (2,), (0, 1)):
            got = cascade.sum_array(view, dims)
            assert np.array_equal(got, np.ascontiguousarray(view).sum(axis=dims)), (view.strides, dims)
