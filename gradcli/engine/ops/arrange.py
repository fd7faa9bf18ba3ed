"""Grids, differences, repetition, rotation and block matrices: rot90 and block_diag, rows of their own
(Rot90Backward0, BlockDiagBackward0), and the ops PyTorch composes from other ops (in Python or as
CompositeImplicitAutograd kernels): meshgrid, cartesian_prod, diff, repeat_interleave and take_along_dim. Those
are built here from the same ops in the same order, so their grad_fn chains are PyTorch's, node for node
(meshgrid's outputs are ExpandBackward0 over ViewBackward0, diff's SubBackward0 over SliceBackward0, ...).
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, ops, signatures
from gradcli.engine.ops.shape import _EachInput
from gradcli.engine.recording import Op, apply, index_arg, int64_arg, is_meta, result_dtype, type_word, wrap_dim
from gradcli.engine.signatures import type_name
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

def _rot90_jvp(F, ts, xs, result, k, dims):
    return rot90(ts[0], k, dims)


def _block_diag_part(F, g, i, shapes, spans):
    """Input i's block of the gradient (the rows and columns `spans` gives), in its shape."""
    r0, r1, c0, c1 = spans[i]
    block = F.getitem(g, (slice(r0, r1), slice(c0, c1)))
    return block if len(shapes[i]) == 2 else F.reshape(block, shapes[i])


def _block_diag_jvp(F, ts, xs, result, shapes, spans):
    return block_diag(*[t if t is not None else Tensor(np.zeros(x._a.shape, x._a.dtype)) for t, x in zip(ts, xs)])


def _masked_select_backward(F, g, self, mask):
    """masked_select_backward: zeros of the broadcast shape with g scattered where the mask is true (the
    engine sums a broadcast input's share back to its shape)."""
    return F.masked_select_backward(g, self, mask)


def _masked_scatter_source(F, g, mask, source_shape):
    """masked_scatter_backward: the gradient where the mask is true, in order, as the source's shape."""
    if F.tensors:
        return F.reshape(masked_select(g, mask), source_shape)
    m = mask._a if mask.__class__ is Tensor else np.asanyarray(mask, dtype=bool)
    return g[np.broadcast_to(m, g.shape)].reshape(source_shape)


def _channel_shuffle_grad(F, g, groups):
    """channel_shuffle's derivative: the gradient shuffled back, in C / groups groups."""
    back = g.shape[1] // groups
    return channel_shuffle(g, back) if F.tensors else channel_shuffle_array(g, back)


# fmt: off
#                 node                 forward saves                formulas
MASKED_SELECT  = Op("MaskedSelectBackward0",  None, ("self", "mask"), (_masked_select_backward,), fits=True,
                    quiet=True, jvp=lambda F, ts, xs, result, mask: masked_select(ts[0], mask))
# masked_select's gradient recorded under create_graph: zeros (a constant) with the gradient scattered in
MASKED_SCATTER = Op("MaskedScatterBackward0", None, ("mask", "source_shape"),
                    (lambda F, g, mask, source_shape: F.masked_zero(g, mask), _masked_scatter_source),
                    inputs=("self", "source"), quiet=True,
                    jvp=lambda F, ts, xs, result, mask, source_shape: masked_scatter_zeros(
                        ts[1], mask, result._a.shape))
ROT90      = Op("Rot90Backward0",     None, ("k", "dims"),         (lambda F, g, k, dims: F.rot90(g, -k, dims),),
                quiet=True, jvp=_rot90_jvp)
PIXEL_SHUFFLE   = Op("PixelShuffleBackward0",   None, ("upscale_factor",),
                     (lambda F, g, upscale_factor: F.pixel_unshuffle(g, upscale_factor),), quiet=True,
                     jvp=lambda F, ts, xs, result, upscale_factor: pixel_shuffle(ts[0], upscale_factor))
PIXEL_UNSHUFFLE = Op("PixelUnshuffleBackward0", None, ("downscale_factor",),
                     (lambda F, g, downscale_factor: F.pixel_shuffle(g, downscale_factor),), quiet=True,
                     jvp=lambda F, ts, xs, result, downscale_factor: pixel_unshuffle(ts[0], downscale_factor))
CHANNEL_SHUFFLE = Op("ChannelShuffleBackward0", None, ("groups",), (_channel_shuffle_grad,), quiet=True,
                     jvp=lambda F, ts, xs, result, groups: channel_shuffle(ts[0], groups))
BLOCK_DIAG = Op("BlockDiagBackward0", None, ("shapes", "spans"),   _EachInput(_block_diag_part), fits="dtype",
                quiet=True, jvp=_block_diag_jvp)
# fmt: on

_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
                     "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)")


def _tensor_list(tensors: tuple, unpack: bool = False) -> list:
    """The tensors of a call that takes them one by one (or, `unpack`, also as one sequence: torch.meshgrid([a, b]))
    with PyTorch's message for anything else."""
    if unpack and len(tensors) == 1 and tensors[0].__class__ in (list, tuple):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if t.__class__ is not Tensor:
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
    return list(tensors)


def _cpp_text(t: Tensor) -> str:
    """A tensor as ATen's operator<< prints it into a message, for a matrix: the 0.3 body (PyTorch's old Python
    printer followed the C++ one) and `[ torch.FloatTensor{2,2} ]`."""
    from gradcli.display import legacy
    x = t._a
    if x.ndim != 2 or x.size == 0:
        raise NotImplementedError("gradcli does not implement torch.meshgrid's message for a tensor of "
                                  f"{x.ndim} dims in the list (it prints the tensor as ATen's C++ does)")
    body = legacy.tensor_str(x, x.dtype.name, STATE.print_options)[1:].split("\n[")[0]
    return f"{body}\n[ {legacy.typename(x.dtype.name)}{{{','.join(map(str, x.shape))}}} ]"


def meshgrid(*tensors, indexing=None) -> tuple:
    """torch.meshgrid: each 0-d or 1-d input viewed along its own dim and expanded to the grid; 'xy' swaps the
    first two dims. Without `indexing` it is 'ij', with PyTorch's warning (once per process)."""
    tensors = _tensor_list(tensors, unpack=True)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t, u in zip(tensors, tensors[1:]):
        if t._a.dtype != u._a.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing is None:
        STATE.warn_once("meshgrid indexing", "UserWarning", _MESHGRID_WARNING)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t._a.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: " + _cpp_text(t))
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t._a.size for t in tensors)
    n = len(tensors)
    grids = [ops.expand(ops.view(t, tuple(-1 if j == i else 1 for j in range(n))), shape)
             for i, t in enumerate(tensors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    """torch.cartesian_prod: the meshgrid's grids flattened and stacked as columns (one input: itself)."""
    tensors = _tensor_list(tensors)
    if len(tensors) == 1:
        return tensors[0]
    for t in tensors:
        if t._a.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._a.shape)}")
    grids = meshgrid(tensors, indexing="ij")
    budget.check_tensor(grids[0]._a.shape, grids[0]._a.itemsize)    # each grid's copy, before any is made
    return ops.stack([ops.reshape(g, (-1,)) for g in grids], 1)


# ------------------------------------------------------------------------------------------------- diff

def diff(*args, **kwargs) -> Tensor:
    """torch.diff: the n-th forward difference along dim, after putting `prepend` and `append` at the ends
    (CatBackward0), each step out[i] = x[i + 1] - x[i] (logical_xor for bool)."""
    _, values = signatures.bound("torch.diff", args, kwargs)
    return _diff(values["input"], values)


def diff_method(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = signatures.bound("Tensor.diff", args, kwargs)
    return _diff(self, values)


def _diff(a: Tensor, values: dict) -> Tensor:
    n = 1 if values["n"] is None else index_arg(values["n"])
    dim = -1 if values["dim"] is None else index_arg(values["dim"])
    prepend, append = values["prepend"], values["append"]
    x = a._a
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, x.ndim)
    for extra in (prepend, append):
        if extra is None:
            continue
        if extra._a.ndim != x.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for k in range(x.ndim):
            if k != d and extra._a.shape[k] != x.shape[k]:
                raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                                   f"except along the differencing dimension; input.size({k}) = {x.shape[k]}, but "
                                   f"got tensor.size({k}) = {extra._a.shape[k]}")
    if n == 0:          # zeros_like(input).copy_(input): CopyBackwards, prepend and append left out
        return Tensor(np.zeros_like(x)).copy_(a)
    if prepend is not None or append is not None:
        a = ops.cat([t for t in (prepend, a, append) if t is not None], d)
    length = a._a.shape[d]
    step = ops.logical_xor if a._a.dtype == np.bool_ else ops.sub
    for _ in range(min(n, length)):
        length -= 1
        a = step(ops.narrow(a, d, 1, length), ops.narrow(a, d, 0, length))
    return a


# -------------------------------------------------------------------------------------- repeat_interleave

def repeat_interleave(*args, **kwargs) -> Tensor:
    """torch.repeat_interleave: each element (or slice along dim) repeated; `repeats` an int, a tensor of one
    count or of one count per slice; alone, the indices of a repeat by those counts."""
    form, values = signatures.bound("torch.repeat_interleave", args, kwargs)
    if form == 1:
        return _repeat_indices(values["repeats"], values["output_size"])
    return _repeat(values["input"], values["repeats"], values["dim"], values["output_size"])


def repeat_interleave_method(self: Tensor, *args, **kwargs) -> Tensor:
    form, values = signatures.bound("Tensor.repeat_interleave", args, kwargs)
    return _repeat(self, values["repeats"], values["dim"], values["output_size"])


def _repeat(a: Tensor, repeats, dim, output_size) -> Tensor:
    if dim is None:
        a, d = ops.flatten(a), 0
    else:
        d = wrap_dim(index_arg(dim), a._a.ndim)
    if repeats.__class__ is Tensor:
        r = repeats._a
        size = a._a.shape[d] if a._a.ndim else 1
        if r.ndim == 0 or (r.ndim == 1 and r.shape[0] == 1):
            repeats = ops.expand(ops.reshape(repeats, (1,)), (size,))
        elif r.ndim == 1:
            if r.shape[0] != size:
                raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                                   f"{r.shape[0]} and input.size(0) = {size}")
        else:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return ops.index_select(a, d, _repeat_indices(repeats, output_size))
    repeats = index_arg(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x = a._a
    size = x.shape[d] if x.ndim else 1
    if output_size is not None and index_arg(output_size) != size * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {size * repeats} but got "
                           f"{index_arg(output_size)}")
    if x.ndim == 0:
        a = ops.reshape(a, (1,))
    shape = list(a._a.shape)
    shape.insert(d + 1, repeats)
    budget.check_tensor(shape, x.itemsize)          # the copy the expanded view is cloned into
    expanded = ops.expand(ops.unsqueeze(a, d + 1), tuple(shape))
    return ops.flatten(ops.arith.contiguous_clone(expanded), d, d + 1)


def _repeat_indices(repeats, output_size) -> Tensor:
    """repeat_interleave(repeats): i repeated repeats[i] times, in the counts' dtype."""
    if repeats.__class__ is not Tensor:
        raise TypeError(f"repeat_interleave(): argument 'repeats' (position 1) must be Tensor, not "
                        f"{type_name(repeats)}")
    r = repeats._a
    if r.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if r.dtype not in (np.int64, np.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{type_word(r)}'")
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(r.sum(dtype=np.int64)) if r.size else 0
    if output_size is not None and index_arg(output_size) != total:
        raise RuntimeError("allocated size does not match required size")
    budget.check_tensor((total,), r.itemsize)
    return Tensor(np.repeat(np.arange(r.size, dtype=r.dtype), r))


# ----------------------------------------------------------------------------------------- take_along_dim

def take_along_dim(*args, **kwargs) -> Tensor:
    """torch.take_along_dim: gather along dim with the input and indices broadcast to each other (every dim
    but dim), or, without a dim, from the flattened input."""
    _, values = signatures.bound("torch.take_along_dim", args, kwargs)
    return _take(values["input"], values["indices"], values["dim"])


def take_along_dim_method(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = signatures.bound("Tensor.take_along_dim", args, kwargs)
    return _take(self, values["indices"], values["dim"])


def _take(a: Tensor, indices: Tensor, dim) -> Tensor:
    idx = indices._a
    if idx.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {type_word(idx)}")
    if dim is None:
        return ops.gather(ops.view(a, (-1,)), 0, ops.view(indices, (-1,)))
    x = a._a
    d = wrap_dim(index_arg(dim), x.ndim)
    if x.ndim != idx.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {x.ndim} dimensions for input, and {idx.ndim} dimensions for indices")
    self_sizes, index_sizes = list(x.shape), list(idx.shape)
    self_sizes[d] = idx.shape[d]
    self_sizes = list(_broadcast_shape(self_sizes, index_sizes))
    index_sizes = list(self_sizes)
    self_sizes[d] = x.shape[d]
    size = x.shape[d] if x.ndim else 1
    if idx.size and size and (idx.min() < 0 or idx.max() >= size):
        # PyTorch's kernel here takes any index modulo the size (-1 the last, size + 1 the second), unchecked
        indices = Tensor(np.mod(idx, size))
    picked = ops.broadcast_to(indices, tuple(index_sizes))
    return ops.gather(ops.broadcast_to(a, tuple(self_sizes)), d, picked)


def _broadcast_shape(a: list, b: list) -> tuple:
    """infer_size: PyTorch's message when the two do not broadcast."""
    ndim = max(len(a), len(b))
    out = []
    for i in range(ndim):
        da = a[i - ndim + len(a)] if i - ndim + len(a) >= 0 else 1
        db = b[i - ndim + len(b)] if i - ndim + len(b) >= 0 else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                               f"non-singleton dimension {i}")
        out.append(db if da == 1 else da)
    return tuple(out)


# ------------------------------------------------------------------------------------------- rot90

def _tensor_and_int(name: str, a, what: str, value) -> int:
    """The parser's checks of a C++ function's (Tensor input, int <what>) arguments: the int (a 0-d integer tensor
    counts as one), or PyTorch's TypeError."""
    if a.__class__ is not Tensor:
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(a)}")
    value = index_arg(value)
    if value.__class__ is not int:
        raise TypeError(f"{name}(): argument '{what}' (position 2) must be int, not {type_name(value)}")
    int64_arg(value)
    return value


def rot90(a: Tensor, k=1, dims=(0, 1)) -> Tensor:
    """torch.rot90 / Tensor.rot90: a quarter turn k times from dims[0] towards dims[1], laid out as PyTorch's
    flip then transpose leave it (a transposed view of the flipped copy for an odd k)."""
    k = _tensor_and_int("rot90", a, "k", k)
    dims = tuple(index_arg(d) for d in dims)
    x = a._a
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    d0, d1 = wrap_dim(dims[0], x.ndim), wrap_dim(dims[1], x.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return apply(ROT90, rot90_array(x, k, (d0, d1)), (a,), (k, dims))


def rot90_array(x: np.ndarray, k: int, dims) -> np.ndarray:
    """rot90's values (and its gradient's in a plain backward pass: rot90 by -k)."""
    d0, d1 = (d % x.ndim for d in dims)
    turns = k % 4
    if turns == 0:
        return ops.arith.clone_array(x)
    if turns == 2:
        return np.flip(x, (d0, d1)).copy()
    return np.swapaxes(np.flip(x, d1 if turns == 1 else d0).copy(), d0, d1)


# -------------------------------------------------------------------------------------------- block_diag

def block_diag(*tensors) -> Tensor:
    """torch.block_diag: the inputs (0-d as 1x1, 1-d as one row) down the diagonal of a zero matrix, in their
    promoted dtype."""
    tensors = _tensor_list(tensors)
    for i, t in enumerate(tensors):
        if t._a.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t._a.ndim} dimensions")
    dtype = result_dtype(*tensors).np if tensors else np.dtype(np.float32)
    blocks = [t._a.reshape(t._a.shape if t._a.ndim == 2 else (1, t._a.size)) for t in tensors]
    rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
    if not tensors:
        rows = 1
    budget.check_tensor((rows, cols), dtype.itemsize)
    out = np.zeros((rows, cols), dtype)
    spans, r, c = [], 0, 0
    for t, b in zip(tensors, blocks):
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        spans.append((r, r + b.shape[0], c, c + b.shape[1]))
        r, c = r + b.shape[0], c + b.shape[1]
    return apply(BLOCK_DIAG, out, tuple(tensors), (tuple(t._a.shape for t in tensors), tuple(spans)))


# ------------------------------------------------------------------------------------ pixel_shuffle and its inverse

def _pixel_operand(name: str, what: str, a, factor) -> int:
    """pixel_shuffle's and pixel_unshuffle's checks of their input and factor, in PyTorch's words and order."""
    factor = _tensor_and_int(name, a, what, factor)
    if a._a.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{a._a.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")
    return factor


def pixel_shuffle(a: Tensor, upscale_factor) -> Tensor:
    """F.pixel_shuffle / torch.pixel_shuffle: (*, C r^2, H, W) to (*, C, H r, W r), a contiguous copy."""
    r = _pixel_operand("pixel_shuffle", "upscale_factor", a, upscale_factor)
    c = a._a.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return apply(PIXEL_SHUFFLE, pixel_shuffle_array(a._a, r), (a,), (r,))


def pixel_unshuffle(a: Tensor, downscale_factor) -> Tensor:
    """F.pixel_unshuffle / torch.pixel_unshuffle: (*, C, H r, W r) to (*, C r^2, H, W), a contiguous copy."""
    r = _pixel_operand("pixel_unshuffle", "downscale_factor", a, downscale_factor)
    height, width = a._a.shape[-2:]
    for word, size, dim in (("height", height, -2), ("width", width, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {word} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    # an empty input comes back in its own shape (PyTorch's kernel returns before reshaping it)
    out = a._a.copy() if a._a.size == 0 else pixel_unshuffle_array(a._a, r)
    return apply(PIXEL_UNSHUFFLE, out, (a,), (r,))


def channel_shuffle(a: Tensor, groups) -> Tensor:
    """F.channel_shuffle / torch.channel_shuffle / nn.ChannelShuffle: the channels (dim 1) of (N, C, *) read as a
    (groups, C / groups) grid and written out by columns (ChannelShuffleBackward0)."""
    groups = _shuffle_checks("channel_shuffle", a, groups)
    return apply(CHANNEL_SHUFFLE, channel_shuffle_array(a._a, groups), (a,), (groups,))


def native_channel_shuffle(a: Tensor, groups) -> Tensor:
    """torch.native_channel_shuffle: the same values; PyTorch has no derivative for it (a NotImplemented node)."""
    groups = _shuffle_checks("native_channel_shuffle", a, groups)
    from gradcli.engine.ops import elementwise
    return elementwise.not_implemented(channel_shuffle_array(a._a, groups), (a,), "native_channel_shuffle")


def _shuffle_checks(name: str, a, groups) -> int:
    groups = _tensor_and_int(name, a, "groups", groups)
    x = a._a
    if x.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(x.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if x.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {x.shape[1]} channels and "
                           f"{groups} groups.")
    return groups


def channel_shuffle_array(x: np.ndarray, groups: int) -> np.ndarray:
    if is_meta(x):                      # the shape alone
        from gradcli.engine.meta import meta_full
        return meta_full(x.shape, 0, x.dtype)
    n, c = x.shape[:2]
    y = x.reshape((n, groups, c // groups) + x.shape[2:])
    return np.ascontiguousarray(np.swapaxes(y, 1, 2)).reshape(x.shape)


def pixel_shuffle_array(x: np.ndarray, r: int) -> np.ndarray:
    """Channel c*r*r + i*r + j of each input pixel (h, w) goes to output pixel (h*r + i, w*r + j) of channel c."""
    if is_meta(x):                      # the shape alone
        from gradcli.engine.meta import meta_full
        return meta_full(x.shape[:-3] + (x.shape[-3] // (r * r), x.shape[-2] * r, x.shape[-1] * r), 0, x.dtype)
    *batch, c, h, w = x.shape
    y = x.reshape(*batch, c // (r * r), r, r, h, w)
    nb = len(batch)
    order = list(range(nb)) + [nb, nb + 3, nb + 1, nb + 4, nb + 2]
    return np.ascontiguousarray(y.transpose(order)).reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle_array(x: np.ndarray, r: int) -> np.ndarray:
    """pixel_shuffle's inverse."""
    if is_meta(x):                      # the shape alone
        from gradcli.engine.meta import meta_full
        return meta_full(x.shape[:-3] + (x.shape[-3] * r * r, x.shape[-2] // r, x.shape[-1] // r), 0, x.dtype)
    *batch, c, height, width = x.shape
    h, w = height // r, width // r
    y = x.reshape(*batch, c, h, r, w, r)
    nb = len(batch)
    order = list(range(nb)) + [nb, nb + 2, nb + 4, nb + 1, nb + 3]
    return np.ascontiguousarray(y.transpose(order)).reshape(*batch, c * r * r, h, w)


# ------------------------------------------------------------------- tensor_split, hsplit, atleast_nd, stacks

def tensor_split(*args, **kwargs) -> tuple:
    """torch.tensor_split: views along dim (SliceBackward0 each), `sections` pieces as even as can be (the first
    n % sections one longer), or the pieces between the given indices (slice bounds: clamped, negatives
    counted from the end)."""
    form, values = signatures.bound("torch.tensor_split", args, kwargs)
    return _tensor_split(values["input"], form, values, "tensor_split")


def tensor_split_method(self: Tensor, *args, **kwargs) -> tuple:
    form, values = signatures.bound("Tensor.tensor_split", args, kwargs)
    return _tensor_split(self, form, values, "tensor_split")


def _tensor_split(a: Tensor, form: int, values: dict, name: str) -> tuple:
    x = a._a
    if x.ndim == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(index_arg(values["dim"] if values["dim"] is not None else 0), x.ndim)
    if form == 1:           # a tensor of sections (0-d) or of indices (1-d)
        t = values["tensor_indices_or_sections"]._a
        if t.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {t.ndim} dims")
        if t.dtype != np.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{type_word(t)}")
        if t.ndim == 0:
            return _split_sections(a, int(t), d)
        return _split_indices(a, t.tolist(), d)
    if form == 2:
        return _split_sections(a, index_arg(values["sections"]), d)
    indices = values["indices"]
    if index_arg(indices).__class__ is int:         # (an int the tuple-of-ints form took)
        return _split_sections(a, index_arg(indices), d)
    return _split_indices(a, [index_arg(i) for i in indices], d)


def _split_sections(a: Tensor, sections: int, d: int) -> tuple:
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    n = a._a.shape[d]
    size, extra = divmod(n, sections)
    bounds, start = [], 0
    for i in range(sections):
        stop = start + size + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return tuple(_slice_view(a, d, s, e) for s, e in bounds)


def _split_indices(a: Tensor, indices: list, d: int) -> tuple:
    starts = [0] + indices
    stops = indices + [None]
    return tuple(_slice_view(a, d, s, e) for s, e in zip(starts, stops))


def _slice_view(a: Tensor, d: int, start, stop) -> Tensor:
    """a.slice(d, start, stop): a view, SliceBackward0 even when it covers the whole dim."""
    x = a._a
    key = (slice(None),) * d + (slice(start, stop),)
    return ops.shape._view_of(a, x[key], ops.indexing.SLICE, (x.shape, key))


def _directional_split(name: str, dim: int, min_dim: int):
    """hsplit (dim 1, or 0 of a vector), vsplit (dim 0), dsplit (dim 2): tensor_split by a number of equal
    sections (which must divide the dim) or at indices."""
    def split(input: Tensor, form: int, values: dict) -> tuple:
        x = input._a
        if x.ndim < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                               f"with {x.ndim} dimensions!")
        d = 0 if name == "hsplit" and x.ndim == 1 else dim
        if form == 0:
            sections = index_arg(values["sections"])
            n = x.shape[d]
            if sections == 0 or n % sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {n} is not divisible by the split_size {sections}!")
            return _split_sections(input, sections, d)
        return _split_indices(input, [index_arg(i) for i in values["indices"]], d)

    def function(*args, **kwargs) -> tuple:
        form, values = signatures.bound(f"torch.{name}", args, kwargs)
        return split(values["input"], form, values)

    def method(self: Tensor, *args, **kwargs) -> tuple:
        form, values = signatures.bound(f"Tensor.{name}", args, kwargs)
        return split(self, form, values)
    function.__name__ = function.__qualname__ = name
    method.__name__ = method.__qualname__ = f"{name}_method"
    return function, method


hsplit, hsplit_method = _directional_split("hsplit", 1, 1)
vsplit, vsplit_method = _directional_split("vsplit", 0, 2)
dsplit, dsplit_method = _directional_split("dsplit", 2, 3)


def _at_least(n: int):
    """atleast_1d/2d/3d: one tensor given, one returned; several (or one sequence), a tuple. A 0-d tensor is
    reshaped (ViewBackward0), a smaller one unsqueezed (UnsqueezeBackward0: at the front, and for 3-d also at the
    end), a large enough one returned as it is."""
    name = f"atleast_{n}d"

    def raise_(t: Tensor) -> Tensor:
        k = t._a.ndim
        if k >= n:
            return t
        if k == 0:
            return t.reshape((1,) * n)
        if n == 2 or (n == 3 and k == 1):
            t = t.unsqueeze(0)
        return t.unsqueeze(-1) if n == 3 else t

    def function(*tensors):
        if len(tensors) == 1 and tensors[0].__class__ is Tensor:
            return raise_(tensors[0])
        if len(tensors) == 1 and tensors[0].__class__ in (list, tuple):
            tensors = tuple(tensors[0])
        if len(tensors) == 1:
            signatures.bound(f"torch.atleast.{name}", tensors, {})      # PyTorch's message for a non-tensor
        for i, t in enumerate(tensors):
            if t.__class__ is not Tensor:
                raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
        return tuple(raise_(t) for t in tensors)
    function.__name__ = function.__qualname__ = name
    return function


atleast_1d = _at_least(1)
atleast_2d = _at_least(2)
atleast_3d = _at_least(3)


def column_stack(tensors) -> Tensor:
    """torch.column_stack: vectors (and 0-d tensors) as columns (reshape to (n, 1)), then hstack."""
    tensors = ops.shape._tensor_list(tensors, "column_stack")
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [t.reshape(t._a.size, 1) if t._a.ndim <= 1 else t for t in tensors]
    return ops.hstack(columns)


def dstack(tensors) -> Tensor:
    """torch.dstack: atleast_3d of each, then cat along dim 2."""
    tensors = ops.shape._tensor_list(tensors, "dstack")
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return ops.cat([atleast_3d(t) for t in tensors], 2)


# ----------------------------------------------------------------------------- masked_select, combinations, vander

def masked_select(input, mask) -> Tensor:
    """torch.masked_select / Tensor.masked_select: the elements where the (broadcast) mask is true, as a 1-d
    tensor in row-major order (MaskedSelectBackward0)."""
    if input.__class__ is not Tensor:
        raise TypeError(f"masked_select(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
    if mask.__class__ is not Tensor:
        raise TypeError(f"masked_select(): argument 'mask' (position 2) must be Tensor, not {type_name(mask)}")
    m = mask._a
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    x = input._a
    shape = _broadcast_shape(list(m.shape), list(x.shape))
    out = np.ascontiguousarray(np.broadcast_to(x, shape)[np.broadcast_to(m, shape)])
    return apply(MASKED_SELECT, out, (input,), (mask,))


def masked_select_method(self: Tensor, mask) -> Tensor:
    return masked_select(self, mask)


def masked_select_backward_array(g: np.ndarray, self: np.ndarray, mask) -> np.ndarray:
    m = mask._a if mask.__class__ is Tensor else np.asanyarray(mask, dtype=bool)
    shape = np.broadcast_shapes(self.shape, m.shape)
    out = np.zeros(shape, g.dtype)
    out[np.broadcast_to(m, shape)] = g
    return out


def masked_select_backward(g: Tensor, self: Tensor, mask: Tensor) -> Tensor:
    """The same, recorded: zeros(...).masked_scatter_(mask, grad) (MaskedScatterBackward0)."""
    return masked_scatter_zeros(g, mask, np.broadcast_shapes(self._a.shape, mask._a.shape))


def masked_scatter_zeros(g: Tensor, mask: Tensor, shape: tuple) -> Tensor:
    out = masked_select_backward_array(g._a, np.zeros(shape, g._a.dtype), mask)
    return apply(MASKED_SCATTER, out, (None, g), (mask, tuple(g._a.shape)))


def combinations(input, r=2, with_replacement=False) -> Tensor:
    """torch.combinations: the r-element combinations of a vector's elements (with_replacement: with repeats)
    as rows, by PyTorch's composition: a meshgrid of r copies, each masked_select'ed by the indices' order,
    then stacked (StackBackward0 over MaskedSelectBackward0 over ExpandBackward0 over ViewBackward0)."""
    if input.__class__ is not Tensor:
        raise TypeError(f"combinations(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
    x = input._a
    r = index_arg(r)
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape [{', '.join(map(str, x.shape))}]")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor(np.empty(0, x.dtype))
    n = x.shape[0]
    budget.check_tensor((n,) * r, 1)
    grids = meshgrid(*([input] * r), indexing="ij")
    index = np.indices((n,) * r)
    mask = np.ones((n,) * r, dtype=bool)
    for i in range(r - 1):
        mask &= (index[i] <= index[i + 1]) if with_replacement else (index[i] < index[i + 1])
    mask_t = Tensor(mask)
    return ops.stack([masked_select(g, mask_t) for g in grids], 1)


def vander(x, N=None, increasing=False) -> Tensor:
    """torch.vander: the powers of x as columns (highest first unless increasing), by PyTorch's composition:
    ones, the columns after the first set to x, then to their running product (two CopySlices), then flip."""
    if x.__class__ is not Tensor:
        raise TypeError(f"vander(): argument 'x' (position 1) must be Tensor, not {type_name(x)}")
    a = x._a
    if a.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = a.shape[0]
    if N is not None:
        n = index_arg(N)
        if n < 0:
            raise RuntimeError("N must be non-negative.")
    dtype = np.int64 if a.dtype.kind in "iub" else a.dtype
    budget.check_tensor((a.shape[0], n), np.dtype(dtype).itemsize)
    result = Tensor(np.empty((a.shape[0], n), dtype))
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(ops.cumprod(result[:, 1:], 1))
    if not increasing:
        return ops.flip(result, (1,))
    return result
