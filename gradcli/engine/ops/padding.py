"""F.pad's modes other than constant: reflect and replicate (rows ReflectionPad1D/2D/3DBackward0,
ReplicationPad1D/2D/3DBackward0 and, for create_graph, their BackwardBackward0 rows), and circular, which
PyTorch composes from slices and in-place copies (so its graph is CopySlices over SliceBackward0 nodes).

Both row kinds are gathers: each output element reads one input element, found by a flat index per
(batch, channel) plane. Their backward adds the gradient back with np.add.at, in the order of the output
elements, which is the order PyTorch's CPU kernels add them in, so float32 sums round alike.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget
from gradcli.engine.recording import Op, apply, is_meta
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


def _size_list(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _source_index(spatial, pad, mode: str) -> np.ndarray:
    """For each output position of the padded dims (the last len(spatial)), the flat index of the input
    position it reads, in row-major order of the output."""
    per_dim = []
    for i, n in enumerate(spatial):
        k = len(spatial) - 1 - i                         # pad[2k], pad[2k+1] pad dim i (the last dim first)
        left, right = pad[2 * k], pad[2 * k + 1]
        j = np.arange(-left, n + right)
        if mode == "reflect":
            j = np.abs(j)
            j = np.where(j > n - 1, 2 * (n - 1) - j, j)
        else:
            j = np.clip(j, 0, n - 1)
        per_dim.append(j)
    budget.check_tensor(tuple(len(j) for j in per_dim), 8)       # the flat index, one int64 an output position
    grids = np.ix_(*per_dim)
    return np.ravel_multi_index(grids, spatial).reshape(-1)


def gather_array(x: np.ndarray, pad, mode: str) -> np.ndarray:
    k = len(pad) // 2
    spatial, lead = x.shape[x.ndim - k:], x.shape[:x.ndim - k]
    out_spatial = tuple(n + pad[2 * (k - 1 - i)] + pad[2 * (k - 1 - i) + 1] for i, n in enumerate(spatial))
    budget.check_tensor(lead + out_spatial, x.itemsize)
    if is_meta(x):                      # the padded shape alone
        from gradcli.engine.meta import meta_full
        return meta_full(lead + out_spatial, 0, x.dtype)
    planes = x.reshape(-1, int(np.prod(spatial)))
    return planes[:, _source_index(spatial, pad, mode)].reshape(lead + out_spatial)


def _scatter(g: np.ndarray, in_shape, pad, mode: str) -> np.ndarray:
    """The gradient of gather_array: each output element's gradient added to the input element it read."""
    if is_meta(g):                      # the input's shape alone
        from gradcli.engine.meta import meta_full
        return meta_full(tuple(in_shape), 0, g.dtype)
    k = len(pad) // 2
    spatial = tuple(in_shape[len(in_shape) - k:])
    out = np.zeros((int(np.prod(in_shape[:len(in_shape) - k], dtype=np.int64)), int(np.prod(spatial))),
                   dtype=g.dtype)
    index = _source_index(spatial, pad, mode)
    np.add.at(out, (slice(None), index), g.reshape(out.shape[0], -1))
    return out.reshape(in_shape)


def _pad_grad(F, g, self, padding, mode):
    return F.pad_backward(g, self, padding, mode)


def _pad_jvp(F, ts, xs, result, padding, mode):
    """auto_linear: the padding of the tangent."""
    return pad_mode(ts[0], padding, mode)


def _double_grad_output(F, gg, grad_output, self, padding, mode):
    return F.pad_mode(gg, padding, mode)


def _double_self(F, gg, grad_output, self, padding, mode):
    return F.zeros_like(self)


def _backward_jvp(F, ts, xs, result, padding, mode):
    if ts[0] is None:
        return None
    return pad_backward(ts[0], xs[1], padding, mode)


# fmt: off
REFLECTION_PAD1D, REFLECTION_PAD2D, REFLECTION_PAD3D = (Op("ReflectionPad1DBackward0",  None, ("self", "padding", "mode"), (_pad_grad,), jvp=_pad_jvp),
                                                        Op("ReflectionPad2DBackward0",  None, ("self", "padding", "mode"), (_pad_grad,), jvp=_pad_jvp),
                                                        Op("ReflectionPad3DBackward0",  None, ("self", "padding", "mode"), (_pad_grad,), jvp=_pad_jvp))
REPLICATION_PAD1D, REPLICATION_PAD2D, REPLICATION_PAD3D = (Op("ReplicationPad1DBackward0", None, ("self", "padding", "mode"), (_pad_grad,), jvp=_pad_jvp),
                                                           Op("ReplicationPad2DBackward0", None, ("self", "padding", "mode"), (_pad_grad,), jvp=_pad_jvp),
                                                           Op("ReplicationPad3DBackward0", None, ("self", "padding", "mode"), (_pad_grad,), jvp=_pad_jvp))
_BACKWARD = ("grad_output", "self", "padding", "mode")
_DOUBLE = (_double_grad_output, _double_self)
REFLECTION_PAD1D_BACKWARD  = Op("ReflectionPad1DBackwardBackward0",  None, _BACKWARD, _DOUBLE, inputs=_BACKWARD[:2], jvp=_backward_jvp)
REFLECTION_PAD2D_BACKWARD  = Op("ReflectionPad2DBackwardBackward0",  None, _BACKWARD, _DOUBLE, inputs=_BACKWARD[:2], jvp=_backward_jvp)
REFLECTION_PAD3D_BACKWARD  = Op("ReflectionPad3DBackwardBackward0",  None, _BACKWARD, _DOUBLE, inputs=_BACKWARD[:2], jvp=_backward_jvp)
REPLICATION_PAD1D_BACKWARD = Op("ReplicationPad1DBackwardBackward0", None, _BACKWARD, _DOUBLE, inputs=_BACKWARD[:2], jvp=_backward_jvp)
REPLICATION_PAD2D_BACKWARD = Op("ReplicationPad2DBackwardBackward0", None, _BACKWARD, _DOUBLE, inputs=_BACKWARD[:2], jvp=_backward_jvp)
REPLICATION_PAD3D_BACKWARD = Op("ReplicationPad3DBackwardBackward0", None, _BACKWARD, _DOUBLE, inputs=_BACKWARD[:2], jvp=_backward_jvp)
# fmt: on

_FORWARD_ROWS = {("reflect", 1): REFLECTION_PAD1D, ("reflect", 2): REFLECTION_PAD2D, ("reflect", 3): REFLECTION_PAD3D,
                 ("replicate", 1): REPLICATION_PAD1D, ("replicate", 2): REPLICATION_PAD2D,
                 ("replicate", 3): REPLICATION_PAD3D}
_BACKWARD_ROWS = {("reflect", 1): REFLECTION_PAD1D_BACKWARD, ("reflect", 2): REFLECTION_PAD2D_BACKWARD,
                  ("reflect", 3): REFLECTION_PAD3D_BACKWARD, ("replicate", 1): REPLICATION_PAD1D_BACKWARD,
                  ("replicate", 2): REPLICATION_PAD2D_BACKWARD, ("replicate", 3): REPLICATION_PAD3D_BACKWARD}


def pad_mode(a: Tensor, padding: tuple, mode: str) -> Tensor:
    """reflection_padNd / replication_padNd on checked arguments (autocast runs all but reflection_pad3d in
    float32, as PyTorch lists them). Their kernels take no bool tensor (the shapes are checked first)."""
    if a._a.dtype == np.bool_:
        kernel = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f"\"{kernel}_pad{len(padding) // 2}d\" not implemented for 'Bool'")
    if STATE.autocast is not None and (mode, len(padding)) != ("reflect", 6):
        from gradcli.engine import autocast
        return autocast.run(autocast.FP32, pad_mode, (a, padding, mode), {})
    return apply(_FORWARD_ROWS[mode, len(padding) // 2], gather_array(a._a, padding, mode), (a,), (padding, mode))


def pad_backward(g: Tensor, self: Tensor, padding: tuple, mode: str) -> Tensor:
    """reflection_padNd_backward / replication_padNd_backward, recorded (create_graph)."""
    out = _scatter(g._a, self._a.shape, padding, mode)
    return apply(_BACKWARD_ROWS[mode, len(padding) // 2], out, (g, self), (padding, mode))


def scatter_array(g, self, padding, mode):
    """pad_backward on arrays (a plain backward pass)."""
    return _scatter(g, self.shape, padding, mode)


def _check_sizes(x: np.ndarray, pad: tuple, mode: str) -> None:
    """The checks reflection_pad and replication_pad make: no empty dim but the batch, reflect's amounts
    below the dim's size, and no negative output size (in PyTorch's words for each)."""
    k = len(pad) // 2
    if any(n == 0 for n in x.shape[1:]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {_size_list(x.shape)}")
    shape = list(x.shape)
    for i in range(k):
        d = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        n = x.shape[d]
        if mode == "reflect" and not (left < n and right < n):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({left}, {right}) at dimension {d} of input "
                               f"{_size_list(x.shape)}")
        shape[d] = n + left + right
    _check_output(x.shape[-k:], shape[-k:], mode)
    if any(n < 0 for n in shape):
        if mode == "reflect" and k == 2:
            raise RuntimeError("numel: integer multiplication overflow")
        negative = next(n for n in shape if n < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: {_size_list(shape)}")


def _check_output(sizes, out, mode: str) -> None:
    """The kernels' check that the output is not empty in every padded dim (one dim: W; two: H and W both; three:
    D, H and W all), in PyTorch's words for each (replication's 2-d message has its stray space)."""
    if any(n >= 1 for n in out):
        return
    if len(out) == 1:
        raise RuntimeError(f"input (W: {sizes[0]}) is too small. Calculated output W: {out[0]}")
    if len(out) == 2:
        space = " " if mode == "replicate" else ""
        raise RuntimeError(f"input (H: {sizes[0]}, W: {sizes[1]}{space}) is too small. Calculated output H: {out[0]} "
                           f"W: {out[1]}")
    raise RuntimeError(f"input (D: {sizes[0]} H: {sizes[1]}, W: {sizes[2]}) is too small. Calculated output "
                       f"D: {out[0]} H: {out[1]} W: {out[2]}")


def circular(a: Tensor, pad: tuple) -> Tensor:
    """_pad_circular as ATen composes it: an empty result, the input copied into its middle, then each
    padded dim (the last first) filled from the result's own far side, left then right."""
    x = a._a
    k = len(pad) // 2
    shape = list(x.shape)
    for i in range(k):
        d = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        size = x.shape[d]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        shape[d] = size + left + right
        if shape[d] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    budget.check_tensor(tuple(shape), x.itemsize)
    out = Tensor(np.empty(shape, dtype=x.dtype))
    dst, src = out, a
    for i in range(k):
        d = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        dst = dst.narrow(d, max(left, 0), shape[d] - max(left, 0) - max(right, 0))
        src = src.narrow(d, max(-left, 0), x.shape[d] - max(-left, 0) - max(-right, 0))
    dst.copy_(src)
    for i in range(k):
        d = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left > 0:
            out.narrow(d, 0, left).copy_(out.narrow(d, shape[d] - left - max(right, 0), left))
        if right > 0:
            out.narrow(d, shape[d] - right, right).copy_(out.narrow(d, max(left, 0), right))
    return out


def other_mode(a: Tensor, pad: tuple, mode: str, value) -> Tensor:
    """F.pad with mode reflect, replicate or circular (the lengths already checked)."""
    x = a._a
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if not (len(pad) in (2, 4, 6) and x.ndim in (k + 1, k + 2)):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {x.ndim}D input tensor.\n"
                                  "Supported combinations for non-constant padding:\n"
                                  "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                                  "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                                  "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return circular(a, pad)
    _check_sizes(x, pad, mode)
    return pad_mode(a, pad, mode)
