"""F.affine_grid and torch.affine_grid_generator: the sampling grid of a batch of affine maps, one node
(AffineGridGeneratorBackward0) as in PyTorch, whose C++ builds a base grid of (x, y[, z], 1) rows from
linspace(-1, 1) (scaled by (n - 1) / n without align_corners) and multiplies it by each theta transposed (bmm).

Its gradient is PyTorch's composite affine_grid_generator_backward: the base grid transposed times the incoming
gradient (bmm), transposed back; under create_graph those are recorded ops (BmmBackward0, TransposeBackward0).
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, dtypes, factories
from gradcli.engine.ops import linalg, shape
from gradcli.engine.recording import Op, apply, tensor_arg
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


def _linspace_from_neg_one(dtype, steps: int, align_corners: bool) -> Tensor:
    if steps <= 1:
        return factories.tensor(0, dtype=dtype)
    line = factories.linspace(-1, 1, steps, dtype=dtype)
    if not align_corners:
        line = line * (steps - 1) / steps
    return line


def _base_grid(dtype, size, align_corners: bool) -> Tensor:
    """(N, *spatial, k + 1): x (the last spatial dim's positions), y, [z,] then ones."""
    n, spatial = size[0], tuple(size[2:])
    base = factories.empty(n, *spatial, len(spatial) + 1, dtype=dtype)
    for axis, steps in enumerate(reversed(spatial)):        # x along W, y along H, z along D
        line = _linspace_from_neg_one(dtype, steps, align_corners)
        line = line.view(line.shape + (1,) * axis) if line.dim() else line
        base.select(-1, axis).copy_(line)
    base.select(-1, len(spatial)).fill_(1)
    return base


def _grid_grad(F, g, size, align_corners):
    """affine_grid_generator_backward: base.view(N, P, k + 1).transpose(1, 2).bmm(grad.view(N, P, k)),
    transposed back."""
    dtype = dtypes.of_array(g._a if g.__class__ is Tensor else g)
    base = _base_grid(dtype, size, align_corners)
    n, points, k = size[0], 1, len(size) - 2
    for d in size[2:]:
        points *= d
    base = shape.transpose(shape.view(base, (n, points, k + 1)), 1, 2)
    if F.tensors:
        return shape.transpose(linalg.bmm(base, shape.view(g, (n, points, k))), 1, 2)
    with autograd.no_grad():
        return shape.transpose(linalg.bmm(base, Tensor(np.ascontiguousarray(g)).view(n, points, k)), 1, 2)._a


# fmt: off
AFFINE_GRID = Op("AffineGridGeneratorBackward0", None, ("size", "align_corners"), (_grid_grad,), quiet=True,
                 jvp=lambda F, ts, xs, result, size, align_corners: affine_grid_generator(ts[0], size, align_corners))
# fmt: on


def affine_grid_generator(theta, size, align_corners) -> Tensor:
    """torch.affine_grid_generator(theta, size, align_corners): the base grid times each theta transposed."""
    tensor_arg(theta, "affine_grid_generator", "theta", 1)
    size = shape.int_list((size,), "affine_grid_generator", "size", 2)
    if align_corners.__class__ is not bool:
        raise TypeError(f"affine_grid_generator(): argument 'align_corners' (position 3) must be bool, not "
                        f"{type(align_corners).__name__}")
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    n, points, k = size[0], 1, len(size) - 2
    for d in size[2:]:
        points *= d
    from gradcli.engine import budget
    budget.check_tensor((n, points, k + 1), theta._a.itemsize)
    with autograd.no_grad():
        base = _base_grid(dtypes.of_array(theta._a), size, align_corners)
        grid = linalg.bmm(base.view(n, points, k + 1), shape.transpose(theta, 1, 2))
    return apply(AFFINE_GRID, grid._a.reshape((n,) + tuple(size[2:]) + (k,)), (theta,), (tuple(size), align_corners))


def warn_default_align_corners() -> None:
    """The warning F.affine_grid and F.grid_sample give when align_corners is not passed."""
    if STATE.warn is not None:
        STATE.warn("UserWarning", "Default grid_sample and affine_grid behavior has changed to align_corners=False "
                   "since 1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                   "documentation of grid_sample for details.")


def affine_grid(theta, size, align_corners=None) -> Tensor:
    """F.affine_grid: PyTorch's Python checks and warnings, then torch.affine_grid_generator."""
    if align_corners is None:
        warn_default_align_corners()
        align_corners = False
    if theta.__class__ is not Tensor:
        raise AttributeError(f"'{type(theta).__name__}' object has no attribute 'is_floating_point'")
    if theta._a.dtype.kind not in "fV":
        raise ValueError(f"Expected theta to have floating point type, but got {dtypes.of_array(theta._a)}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        if STATE.warn is not None:
            STATE.warn("UserWarning", "Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                       "when align_corners=True. This is not an intended use case of affine_grid. See the "
                       "documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, align_corners)
