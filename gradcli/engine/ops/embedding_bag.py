"""torch.embedding_bag and F.embedding_bag: the rows of a weight table summed, averaged or maxed per bag, in the
arithmetic of PyTorch 2.13's CPU kernels (FBGEMM's float32 loop, ATen's float64 one), and their row
EmbeddingBagBackward0."""

from __future__ import annotations

import numpy as np

from gradcli.engine import factories
from gradcli.engine.fma import fma
from gradcli.engine.forward import no_tangent
from gradcli.engine.ops import linalg, nn, sorting
from gradcli.engine.recording import Op, apply, needs_grad
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

# ------------------------------------------------------------------------------------------- backward

def _weight_grad(F, g, weight, indices, offsets, per_sample_weights, mode, padding_idx, scale_grad_by_freq, sparse,
                 weight_sym_argsize_0, result1, result2, result3, bags, sizes, max_indices):
    """_embedding_bag_dense_backward: sum and mean add each entry's bag gradient into its weight row, scaled by
    its per-sample weight, 1 / its index's count (scale_grad_by_freq) and 1 / its bag's size (mean), the scale
    a double rounded to the weight's dtype, one fused multiply-add per element, entries in index order; max adds
    each element's gradient into the row that gave the maximum, bag after bag."""
    if F.tensors:
        raise NotImplementedError("gradcli does not implement the gradient of embedding_bag under "
                                  "create_graph=True")
    rows = weight_sym_argsize_0
    if mode == 2:
        out = np.zeros((rows, g.shape[1]), dtype=g.dtype)
        filled = np.nonzero(sizes)[0]
        cols = np.broadcast_to(np.arange(g.shape[1]), (filled.size, g.shape[1]))
        np.add.at(out, (max_indices[filled], cols), g[filled])
        return out
    indices = _array(indices)
    # the entries in the order of PyTorch's (unstable) sort of the indices, group by group
    order = sorting.sort(Tensor(indices))[1]._a
    keys = indices[order]
    scale = np.ones(indices.shape, dtype=np.float64)
    if per_sample_weights is not None:
        scale = _array(per_sample_weights).astype(np.float64)[order]
    if scale_grad_by_freq:
        # PyTorch divides each group by the count of the index at the group's number in the sorted indices
        # (counts[sorted[i]] for group i), not by its own index's count
        group = np.cumsum(np.r_[0, keys[1:] != keys[:-1]]) if keys.size else keys
        scale = scale / np.bincount(indices, minlength=rows)[keys[group]]
    if mode == 1:
        scale = scale / np.maximum(sizes[bags[order]], 1)
    keep = keys != padding_idx if padding_idx is not None else np.ones(keys.shape, dtype=bool)
    out = np.zeros((rows, g.shape[1]), dtype=g.dtype)
    rows_g, k, scale = g[bags[order]][keep], keys[keep], scale[keep].astype(g.dtype)[:, None]
    if k.size:
        rank = np.arange(k.size) - np.searchsorted(k, k)        # (k is sorted: each occurrence's number)
        for r in range(int(rank.max()) + 1):
            at = rank == r
            out[k[at]] = fma(rows_g[at], scale[at], out[k[at]])
    return out


def _sample_weights_grad(F, g, weight, indices, offsets, per_sample_weights, mode, padding_idx, scale_grad_by_freq,
                         sparse, weight_sym_argsize_0, result1, result2, result3, bags, sizes, max_indices):
    """_embedding_bag_per_sample_weights_backward: each entry's weight row dotted with its bag's gradient
    (0 for the padding index)."""
    if F.tensors:
        raise NotImplementedError("gradcli does not implement the gradient of embedding_bag under "
                                  "create_graph=True")
    w, indices = _array(weight), _array(indices)
    out = np.zeros(indices.shape, dtype=g.dtype)
    for i, (row, bag) in enumerate(zip(indices.tolist(), bags.tolist())):
        if row != padding_idx:
            out[i] = linalg.dot_array(g[bag], w[row])
    return out


# PyTorch's saved names (result1-3: the op's other three results), then what the formulas read
_SAVES = ("weight", "indices", "offsets", "per_sample_weights", "mode", "padding_idx", "scale_grad_by_freq", "sparse",
          "weight_sym_argsize_0", "result1", "result2", "result3", "bags", "sizes", "max_indices")


def _array(value) -> np.ndarray:
    """A saved input as the formulas read it: a tensor's array (a plain backward passes the array itself)."""
    return value._a if value.__class__ is Tensor else value
# fmt: off
EMBEDDING_BAG = Op("EmbeddingBagBackward0", None, _SAVES,
                   (_weight_grad,
                    _sample_weights_grad), inputs=("weight", "per_sample_weights"), saves_tensors=True,
                   needed_by={"weight": "per_sample_weights"}, jvp=no_tangent("_embedding_bag"))
# fmt: on


# ------------------------------------------------------------------------------------------- forward

def _bag_of_each(offsets: np.ndarray, n: int, include_last_offset: bool) -> tuple:
    """(the bag of each index, -1 before the first bag; the number of bags)."""
    bags_n = offsets.size - 1 if include_last_offset else offsets.size
    starts = offsets[:bags_n]
    # each index in the last bag that starts at or before it (an empty bag gives way to the next one); the
    # last bag runs to the end of the input, even past a last offset that include_last_offset gives
    bag = np.searchsorted(starts, np.arange(n), side="right").astype(np.int64) - 1
    return bag, bags_n


def _in_order(values: np.ndarray, bag: np.ndarray, bags_n: int, step) -> np.ndarray:
    """out[bag[i]] = step(out[bag[i]], i, r) for each entry i, the r-th of its bag, in order: the r-th entries of
    all bags together (one vector step per r)."""
    out = np.zeros((bags_n, values.shape[-1]), dtype=values.dtype)
    live = np.nonzero(bag >= 0)[0]
    if not live.size:
        return out
    keys = bag[live]
    rank = np.arange(keys.size) - np.searchsorted(keys, keys)
    for r in range(int(rank.max()) + 1):
        picked = live[rank == r]
        out[bag[picked]] = step(out[bag[picked]], picked, r)
    return out


def torch_embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                        per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.embedding_bag: (output, offset2bag, bag_size, max_indices)."""
    w, idx, off = weight._a, indices._a, offsets._a
    if idx.dtype != off.dtype:          # promoteIndicesAndOffsets: both in their common type (torch's promotion)
        common = indices.dtype if off.dtype.kind in "iub" and idx.dtype.kind in "fV" else \
            offsets.dtype if idx.dtype.kind in "iub" and off.dtype.kind in "fV" else np.result_type(idx, off)
        common = getattr(common, "np", common)
        idx, off = idx.astype(common), off.astype(common)
    if idx.dtype.kind not in "iu" or idx.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {_legacy(idx)} instead (while checking arguments for embedding_bag)")
    if w.dtype.kind not in "fV":
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                           f"Half, BFloat16, Float, Double; but got {_legacy(w)} instead (while checking arguments "
                           f"for embedding_bag)")
    if w.dtype == np.float16:
        raise NotImplementedError("gradcli does not implement embedding_bag on float16 weights")
    if off.size:
        if off[0] != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {int(off[0])}\n[ {_legacy(off)}{{}} ]")
        if off[-1] > idx.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx.shape[0]} but got "
                               f"offsets[-1] of {int(off[-1])}")
    if per_sample_weights is not None:
        if mode != 0:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights._a.dtype != w.dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for "
                               f"argument #1 'per_sample_weights'; but type {_legacy(w)} does not equal "
                               f"{_legacy(per_sample_weights._a)} (while checking arguments for embedding_bag)")
    if include_last_offset and off.size < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    rows = w.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{rows} through {rows - 1}, "
                               f"but got {padding_idx}")
        padding_idx = padding_idx % rows if rows else padding_idx
    idx64 = idx.astype(np.int64)
    bad = (idx64 < 0) | (idx64 >= rows)
    if bad.any():
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")
    if sparse and needs_grad(weight):
        raise NotImplementedError("gradcli does not implement embedding_bag(sparse=True) with a gradient for the "
                                  "weight; use sparse=False (the same values, as a dense gradient)")
    bag, bags_n = _bag_of_each(off.astype(np.int64), idx.shape[0], include_last_offset)
    used = bag.copy()
    if padding_idx is not None:
        used[idx64 == padding_idx] = -1
    sizes = np.bincount(used[used >= 0], minlength=bags_n).astype(np.int64)[:bags_n]
    picked = w[idx64]
    max_indices = np.zeros((bags_n, w.shape[1]), dtype=np.int64)
    if w.dtype == np.float32 and mode != 2 and include_last_offset and off.size:
        used = used.copy()              # FBGEMM's float loop stops at the last offset (the sizes do not)
        used[int(off[-1]):] = -1
    if mode == 2:
        out = _bag_max(picked, idx64, used, bags_n, max_indices)
    elif per_sample_weights is not None:
        p = per_sample_weights._a
        if w.dtype == np.float32:           # FBGEMM: one fused multiply-add per element
            out = _in_order(picked, used, bags_n, lambda acc, i, r: fma(p[i][:, None], picked[i], acc))
        else:                               # ATen's loop: the product rounded, then added
            out = _in_order(picked, used, bags_n, lambda acc, i, r: acc + p[i][:, None] * picked[i])
    else:
        out = _in_order(picked, used, bags_n, lambda acc, i, r: acc + picked[i])
        if mode == 1:
            out = np.where(sizes[:, None] > 0, out / np.maximum(sizes, 1)[:, None].astype(w.dtype), out)
    # the other three results as PyTorch's CPU kernel leaves them: its sum path needs no bag of each index
    if mode == 0:
        bags = bag if padding_idx is not None else np.zeros(0, np.int64)
        extras = Tensor(bags), Tensor(np.zeros(off.size, np.int64)), Tensor(np.zeros(off.size, np.int64))
    else:
        extras = Tensor(bag.clip(0)), Tensor(sizes), Tensor(max_indices if mode == 2 else sizes.copy())
    result = apply(EMBEDDING_BAG, out.astype(w.dtype, copy=False), (weight, per_sample_weights),
                   (Tensor(idx64), Tensor(off.astype(np.int64)), mode, padding_idx, bool(scale_grad_by_freq),
                    bool(sparse), rows)
                   + extras + (bag, sizes, max_indices))
    return (result,) + extras


def _bag_max(picked: np.ndarray, idx: np.ndarray, used: np.ndarray, bags_n: int, max_indices: np.ndarray):
    """Each bag's elementwise maximum, the first entry kept on a tie (a later one must be strictly greater), and
    the weight row each element came from (into max_indices); empty bags zero."""
    def step(current, at, r):
        better = np.ones(current.shape, dtype=bool) if r == 0 else picked[at] > current
        b = used[at]
        max_indices[b] = np.where(better, idx[at][:, None], max_indices[b])
        return np.where(better, picked[at], current)
    return _in_order(picked, used, bags_n, step)


def _legacy(a: np.ndarray) -> str:
    return "CPUBoolType" if a.dtype == np.bool_ else {
        "float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor", "bfloat16": "torch.BFloat16Tensor",
        "int64": "torch.LongTensor", "int32": "torch.IntTensor", "int16": "torch.ShortTensor",
        "int8": "torch.CharTensor", "uint8": "torch.ByteTensor"}.get(a.dtype.name, str(a.dtype))


# ------------------------------------------------------------------------------------------- F.embedding_bag

def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
               sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """F.embedding_bag: PyTorch's Python checks, 2-D input as bags of equal length, then torch.embedding_bag."""
    if weight._a.dtype == np.int64 and input.is_floating_point():
        STATE.warn("UserWarning", "Argument order of nn.functional.embedding_bag was changed. Usage "
                   "`embedding_bag(weight, input, ...)` is deprecated, and should now be `embedding_bag(input, "
                   "weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {_type_text(offsets)}")
        offsets = factories.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        nn.embedding_renorm_(weight, input._a, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    return torch_embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum, sparse, per_sample_weights,
                               include_last_offset, padding_idx)[0]


def _type_text(value) -> str:
    cls = type(value)
    if cls is Tensor:
        return "<class 'torch.Tensor'>"
    module = cls.__module__
    return f"<class '{cls.__qualname__ if module == 'builtins' else module + '.' + cls.__qualname__}'>"
