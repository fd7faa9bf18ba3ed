"""sort, argsort, msort and topk beyond the engine cases (which compare them with PyTorch): what must hold of
any answer, on many rows with ties and NaN, and what gradcli does not implement."""

import math

import numpy as np
import pytest

from conftest import gradcli_output
from gradcli.engine import cxxsort
from gradcli.errors import ScriptError
from gradcli.engine.ops import sorting


def _rows(seed: int, n: int, dtype) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 5, size=(6, n)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        rows[rng.random(rows.shape) < 0.1] = np.nan
        rows[rng.random(rows.shape) < 0.1] = -0.0
    return rows


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8])
@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 40, 300])
@pytest.mark.parametrize("descending", [False, True])
def test_every_sort_is_a_permutation_in_order(dtype, n, descending):
    rows = _rows(n, n, dtype)
    for stable in (False, True):
        order = sorting._sorted_rows(rows, descending, stable)
        for row, o in zip(rows, order):
            assert sorted(o.tolist()) == list(range(n))
            keys = [(math.inf if math.isnan(v) else v) for v in row[o].astype(np.float64).tolist()]
            assert keys == sorted(keys, reverse=descending) or (descending and keys[:1] == [math.inf])
            if stable:      # equal keys keep their order
                for a, b in zip(o[:-1], o[1:]):
                    if row[a] == row[b] or (np.isnan(row[a]) and np.isnan(row[b])):
                        assert a < b


@pytest.mark.parametrize("k", [1, 3, 7, 40])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_selects_the_k_extremes(k, largest):
    rows = _rows(k, 40, np.float32)
    for row in rows:
        for sorted_ in (True, False):
            idx = sorting.top_indices(row, k, largest, sorted_)
            assert len(set(idx.tolist())) == k
            chosen = sorted((math.inf if math.isnan(v) else v) for v in row[idx].tolist())
            everything = sorted((math.inf if math.isnan(v) else v) for v in row.tolist())
            assert chosen == (everything[-k:] if largest else everything[:k])


def test_the_emulated_sort_agrees_with_numpy_where_keys_are_distinct():
    keys = np.random.default_rng(0).permutation(200).astype(np.float32)
    queue = list(zip(keys.tolist(), range(200)))
    cxxsort.sort(queue, 200, sorting._ascending)
    assert [i for _, i in queue] == np.argsort(keys).tolist()


def test_out_takes_pytorch_s_dtypes():
    # PyTorch 2.13's words (checked with the oracle): topk's indices are int64 (tests/engine_cases/out_argument.txt)
    with pytest.raises(ScriptError) as info:
        gradcli_output("import torch\ntorch.topk(torch.ones(3), 1, out=(torch.ones(1), torch.ones(1)))\n")
    assert "RuntimeError: Expected out tensor to have dtype long int, but got float instead" in str(info.value)
