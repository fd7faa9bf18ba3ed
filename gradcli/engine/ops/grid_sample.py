"""F.grid_sample, torch.grid_sampler and torch.grid_sampler_2d/3d: sampling an input at the points of a grid, with
PyTorch's nodes GridSampler2DBackward0 and GridSampler3DBackward0 (saved input, grid, interpolation_mode,
padding_mode, align_corners).

The 2-d kernel is ATen's vectorised CPU kernel (cpu/GridSamplerKernel.cpp, its AVX2 build): every coordinate is
mapped to a source location in the vector's dtype, in lanes of 8 floats (4 doubles), and GCC fuses its products
into the sums that follow them (`fma`). The input's gradient is scattered lane by lane: within a vector of
output positions, corner by corner (bilinear) or tap by tap (bicubic), so where two positions feed one input
element their terms are added in that order. The grid is walked in vectors over the flattened H x W when its
(H, W, 2) block is contiguous (or its H, W plane is, coordinates apart), else row by row.

The 3-d kernel is ATen's scalar loop (GridSampler.cpp: grid_sampler_3d_cpu_impl, no fused products): coordinates
unnormalised by GridSampler.h's formulas, eight corners added in order (out-of-bounds corners skipped), the
input's gradient added position by position.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, signatures
from gradcli.engine.autograd import runs_first
from gradcli.engine.fma import fma
from gradcli.engine.forward import no_tangent
from gradcli.engine.ops.affine_grid import warn_default_align_corners
from gradcli.engine.recording import autocast_policy, Op, apply, type_word
from gradcli.engine.tensor import Tensor

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_A = -0.75                      # the cubic convolution's constant, UpSampleBicubic2d's


def _lanes(dtype) -> int:
    return 8 if dtype == np.float32 else 4


# ---------------------------------------------------------------- 2-d: the vectorised kernel's arithmetic


def _unnormalize_vec(c, size: int, align: bool):
    """ComputeLocationBase.unnormalize, and its scaling factor."""
    t = c.dtype.type
    if align:
        sf = t(size - 1) / t(2)
        return (c + t(1)) * sf, sf
    sf = t(size) / t(2)
    return fma(c + t(1), sf, np.full_like(c, -0.5)), sf


def _clip_vec(x, size: int):
    """clip_coordinates: NaN becomes 0 (max(0, x) with 0 first), then at most size - 1."""
    t = x.dtype.type
    return np.minimum(np.where(x > 0, x, t(0)), t(size - 1))


def _clip_vec_grad(x, size: int):
    """clip_coordinates_get_grad: NaN kept; the border itself counts as out of bounds (multiplier 0)."""
    t = x.dtype.type
    lo = np.where(np.isnan(x) | (x > 0), x, t(0))
    res = np.where(np.isnan(lo) | (lo < t(size - 1)), lo, t(size - 1))
    inside = (lo.view(_int_of(x)) != 0) & (res.view(_int_of(x)) != np.array(t(size - 1)).view(_int_of(x)))
    return res, inside


def _int_of(x):
    return np.int32 if x.dtype == np.float32 else np.int64


def _reflect_parts(x, size: int, align: bool):
    t = x.dtype.type
    if align:
        span2, low = t(size - 1) * t(2), None
        d = x
    else:
        span2, low = t(size) * t(2), t(-0.5)
        d = x - low
    a = np.abs(d)
    flips = np.trunc(a / span2)
    extra = fma(-flips, span2, a)
    return d, extra, span2 - extra, low


def _reflect_vec(x, size: int, align: bool):
    if align and size <= 1:
        return np.zeros_like(x)
    _, extra, other, low = _reflect_parts(x, size, align)
    r = np.where(np.isnan(extra) | np.isnan(other), np.nan, np.minimum(extra, other)).astype(x.dtype)
    return r if low is None else r + low


def _reflect_vec_grad(x, size: int, align: bool):
    if align and size <= 1:
        return np.zeros_like(x), np.zeros_like(x)
    d, extra, other, low = _reflect_parts(x, size, align)
    flip = extra > other
    r = np.where(flip, other, extra)
    sign = np.where(flip ^ (d < 0), x.dtype.type(-1), x.dtype.type(1))
    return (r if low is None else r + low), sign


def _location(c, size: int, padding: int, align: bool):
    """ComputeLocation.apply: the source coordinate of grid values `c` along a dim of `size`."""
    x, _ = _unnormalize_vec(c, size, align)
    if padding == 1:
        return _clip_vec(x, size)
    if padding == 2:
        return _clip_vec(_reflect_vec(x, size, align), size)
    return x


def _location_grad(c, size: int, padding: int, align: bool):
    """ComputeLocation.apply_get_grad: the source coordinate and d(coordinate)/d(grid value)."""
    x, sf = _unnormalize_vec(c, size, align)
    if padding == 0:
        return x, np.full_like(x, sf)
    if padding == 1:
        res, inside = _clip_vec_grad(x, size)
        return res, np.where(inside, sf, x.dtype.type(0))
    r, sign = _reflect_vec_grad(x, size, align)
    res, inside = _clip_vec_grad(r, size)
    return res, np.where(inside, sign * sf, x.dtype.type(0))


def _coordinates(x, size: int, padding: int, align: bool):
    """ComputeLocation.compute_coordinates (bicubic's taps): padding applied to an unnormalised coordinate."""
    if padding == 1:
        return _clip_vec(x, size)
    if padding == 2:
        return _clip_vec(_reflect_vec(x, size, align), size)
    return x


def _to_int(x):
    """convert_to_int_of_same_size: truncation; NaN and out-of-range values become the integer minimum."""
    ints = _int_of(x)
    info = np.iinfo(ints)
    bad = ~(np.abs(x) < -float(info.min))
    with np.errstate(invalid="ignore"):
        out = np.trunc(np.where(bad, 0, x)).astype(ints)
    out[bad] = info.min
    return out


def _chunks(grid: np.ndarray) -> np.ndarray:
    """The vector each output position of a 2-d grid (N, H, W, 2) is sampled in, as grid_sample_2d_grid_slice_
    iterator walks it: over the flattened H x W when contiguous, else along each row."""
    _, h, w, _ = grid.shape
    step = _lanes(grid.dtype)
    if _flat(grid):
        return np.arange(h * w) // step
    return (np.arange(h)[:, None] * -(-w // step) + np.arange(w)[None, :] // step).reshape(-1)


def _flat(grid: np.ndarray) -> bool:
    """Whether the kernel walks the grid's (H, W) plane as one flat run (its (H, W, 2) block contiguous, or its
    H, W plane with coordinates apart), else row by row."""
    _, h, w, _ = grid.shape
    s = [v // grid.itemsize for v in grid.strides[1:]]
    return _contiguous((h, w, 2), s) or ((s[1] == 1 or w == 1) and _contiguous((h, w), s[:2]))


def _contiguous(sizes, strides) -> bool:
    """at::geometry_is_contiguous: dims of size 1 say nothing; an empty block is contiguous."""
    if 0 in sizes:
        return True
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _scatter(target: np.ndarray, where: list, values: list, chunk: np.ndarray, lanes: int) -> None:
    """mask_scatter_add, vector by vector: `where` and `values` hold one (N, C, P) array per corner or tap (flat
    offsets into each (n, c) plane of `target`, -1 where masked out), added to `target` (N, C, plane) in the
    kernel's order: vector, then corner, then lane."""
    n, c, plane = target.shape
    k, p = len(where), chunk.shape[0]
    lane = np.arange(p) - np.searchsorted(chunk, chunk) if p else np.arange(0)
    key = (chunk[None, :] * k + np.arange(k)[:, None]) * lanes + lane[None, :]
    order = np.argsort(key.reshape(-1), kind="stable")
    idx = np.stack(where, 2).reshape(n, c, k * p)[:, :, order]
    val = np.stack(values, 2).reshape(n, c, k * p)[:, :, order]
    base = (np.arange(n * c) * plane).reshape(n, c, 1)
    keep = idx >= 0
    np.add.at(target.reshape(-1), (idx + base)[keep], val[keep])


def _gather(x: np.ndarray, iy, ix, ok):
    """mask_gather: x (N, C, H, W) at (iy, ix) (N, P) where `ok`, else 0; (N, C, P)."""
    n, c, h, w = x.shape
    flat = np.where(ok, iy * w + ix, 0)
    vals = np.take_along_axis(x.reshape(n, c, h * w), np.broadcast_to(flat[:, None, :], (n, c, flat.shape[1])), 2)
    return np.where(ok[:, None, :], vals, x.dtype.type(0))


def _bilinear_params(x, y, h: int, w: int, padding: int):
    """compute_interp_params: the four weights, the four masks and the nw corner."""
    t = x.dtype.type
    xw, yn = np.floor(x), np.floor(y)
    we = x - xw
    e = t(1) - we
    nn = y - yn
    s = t(1) - nn
    ixw, iyn = _to_int(xw), _to_int(yn)
    ixe, iys = ixw + 1, iyn + 1
    if padding:
        wm = nm = np.ones(x.shape, bool)
        em, sm = ixe < w, iys < h
    else:
        wm, nm = (ixw > -1) & (ixw < w), (iyn > -1) & (iyn < h)
        em, sm = (ixe > -1) & (ixe < w), (iys > -1) & (iys < h)
    weights = (s * e, s * we, nn * e, nn * we)
    masks = (wm & nm, em & nm, wm & sm, em & sm)
    corners = ((iyn, ixw), (iyn, ixe), (iys, ixw), (iys, ixe))
    return (nn, s, we, e), weights, masks, corners


def _cubic(t):
    """get_cubic_coefficients of the distances t: the outer taps' polynomial rounds each step, the inner
    taps' fuses its products into the sums (as the AVX2 build computes them)."""
    dt = t.dtype.type
    a = dt(_A)

    def outer(x):
        return ((a * x - dt(5 * _A)) * x + dt(8 * _A)) * x - dt(4 * _A)

    def inner(x):
        q = fma(np.full_like(x, a + 2), x, np.full_like(x, -(_A + 3)))
        return fma(q * x, x, np.full_like(x, 1))
    return outer(t + dt(1)), inner(t), inner(dt(1) - t), outer(dt(2) - t)


def _cubic_grad(t):
    """get_cubic_coefficients_grad: d coefficient / d t, each step rounded."""
    dt = t.dtype.type
    x0, x1, x2, x3 = dt(-1) - t, dt(0) - t, dt(1) - t, dt(2) - t
    return ((dt(-3 * _A) * x0 - dt(10 * _A)) * x0 - dt(8 * _A),
            (dt(-3 * (_A + 2)) * x1 - dt(2 * (_A + 3))) * x1,
            (dt(3 * (_A + 2)) * x2 - dt(2 * (_A + 3))) * x2,
            (dt(3 * _A) * x3 - dt(10 * _A)) * x3 + dt(8 * _A))


def _cubic_taps(x, y, h: int, w: int, padding: int, align: bool):
    """The 16 taps (i along x, j along y, i outer) of bicubic: (flat offset, in-bounds mask) per tap."""
    t = x.dtype.type
    ix, iy = np.floor(x), np.floor(y)
    taps = []
    for i in range(4):
        xx = _to_int(_coordinates(ix + t(-1 + i), w, padding, align))
        mx = np.ones(x.shape, bool) if padding else (xx > -1) & (xx < w)
        for j in range(4):
            yy = _to_int(_coordinates(iy + t(-1 + j), h, padding, align))
            my = np.ones(x.shape, bool) if padding else (yy > -1) & (yy < h)
            taps.append((yy, xx, mx & my))
    return ix, iy, taps


def _sample_2d(x: np.ndarray, grid: np.ndarray, mode: int, padding: int, align: bool) -> np.ndarray:
    """grid_sampler_2d_cpu_kernel: (N, C, H_out, W_out)."""
    n, c, h, w = x.shape
    ho, wo = grid.shape[1:3]
    gx = grid[..., 0].reshape(n, ho * wo)
    gy = grid[..., 1].reshape(n, ho * wo)
    if mode == 2:
        ux, _ = _unnormalize_vec(gx, w, align)
        uy, _ = _unnormalize_vec(gy, h, align)
        ix, iy, taps = _cubic_taps(ux, uy, h, w, padding, align)
        cx, cy = _cubic(ux - ix), _cubic(uy - iy)
        # GCC contracts the two sums differently where the kernel is inlined into the row-by-row walk of a
        # reflected float32 grid: every product fused there (measured against PyTorch; float64 grids walked
        # row by row round differently again, in ways not pinned down: docs/nn.md)
        fused = x.dtype == np.float32 and padding == 2 and not _flat(grid)
        rows = []
        for j in range(4):     # along x: the first two products fused, then plain sums (or fused)
            v = [_gather(x, *taps[4 * i + j]) for i in range(4)]
            c0, c1, c2, c3 = (k[:, None, :] for k in cx)
            first = fma(c0, v[0], c1 * v[1])
            rows.append(fma(c3, v[3], fma(c2, v[2], first)) if fused else first + c2 * v[2] + c3 * v[3])
        c0, c1, c2, c3 = (k[:, None, :] for k in cy)
        out = fma(c0, rows[0], c1 * rows[1]) if fused else fma(c1, rows[1], c0 * rows[0])
        out = fma(c3, rows[3], fma(c2, rows[2], out))
        return out.reshape(n, c, ho, wo)
    lx = _location(gx, w, padding, align)
    ly = _location(gy, h, padding, align)
    if mode == 1:
        ix, iy = _to_int(np.rint(lx)), _to_int(np.rint(ly))
        ok = np.ones(ix.shape, bool) if padding else (ix > -1) & (ix < w) & (iy > -1) & (iy < h)
        return _gather(x, iy, ix, ok).reshape(n, c, ho, wo)
    _, weights, masks, corners = _bilinear_params(lx, ly, h, w, padding)
    out = None
    for wt, ok, (iy, ix) in zip(weights, masks, corners):
        v = _gather(x, iy, ix, ok)
        out = v * wt[:, None, :] if out is None else fma(v, wt[:, None, :], out)
    return out.reshape(n, c, ho, wo)


def _sample_2d_backward(g: np.ndarray, x: np.ndarray, grid: np.ndarray, mode: int, padding: int, align: bool,
                        which: int) -> np.ndarray:
    """grid_sampler_2d_backward_cpu_kernel: the input's gradient (which=0) or the grid's (which=1)."""
    n, c, h, w = x.shape
    ho, wo = grid.shape[1:3]
    p = ho * wo
    t = x.dtype.type
    go = np.ascontiguousarray(g).reshape(n, c, p)
    gxs = grid[..., 0].reshape(n, p)
    gys = grid[..., 1].reshape(n, p)
    if which == 1 and mode == 1:
        return np.zeros(grid.shape, x.dtype)
    if which == 0:
        target = np.zeros((n, c, h * w), x.dtype)
        if p == 0:
            return target.reshape(x.shape)
    if mode == 2:
        ux, sfx = _unnormalize_vec(gxs, w, align)
        uy, sfy = _unnormalize_vec(gys, h, align)
        ix, iy, taps = _cubic_taps(ux, uy, h, w, padding, align)
        cx, cy = _cubic(ux - ix), _cubic(uy - iy)
        if which == 0:
            where, values = [], []
            for i in range(4):
                for j in range(4):
                    yy, xx, ok = taps[4 * i + j]
                    where.append(np.broadcast_to(np.where(ok, yy * w + xx, -1)[:, None, :], go.shape))
                    values.append(go * cx[i][:, None, :] * cy[j][:, None, :])
            _scatter(target, where, values, _chunks(grid), _lanes(x.dtype))
            return target.reshape(x.shape)
        dx, dy = _cubic_grad(ux - ix), _cubic_grad(uy - iy)
        gx = np.zeros((n, p), x.dtype)
        gy = np.zeros((n, p), x.dtype)
        for ch in range(c):
            gout = go[:, ch]
            for i in range(4):
                for j in range(4):
                    yy, xx, ok = taps[4 * i + j]
                    val = _gather(x[:, ch:ch + 1], yy, xx, ok)[:, 0]
                    vg = val * gout
                    gx = fma(-(vg * dx[i]), cy[j], gx)
                    gy = fma(-(vg * dy[j]), cx[i], gy)
        return _interleave(gx * sfx, gy * sfy, grid.shape)
    if mode == 1:
        lx = _location(gxs, w, padding, align)
        ly = _location(gys, h, padding, align)
        ix, iy = _to_int(np.rint(lx)), _to_int(np.rint(ly))
        ok = np.ones(ix.shape, bool) if padding else (ix > -1) & (ix < w) & (iy > -1) & (iy < h)
        where = np.broadcast_to(np.where(ok, iy * w + ix, -1)[:, None, :], go.shape)
        _scatter(target, [where], [go], _chunks(grid), _lanes(x.dtype))
        return target.reshape(x.shape)
    lx, mx = _location_grad(gxs, w, padding, align)
    ly, my = _location_grad(gys, h, padding, align)
    (nn, s, we, e), weights, masks, corners = _bilinear_params(lx, ly, h, w, padding)
    if which == 0:
        where = [np.broadcast_to(np.where(ok, iy * w + ix, -1)[:, None, :], go.shape)
                 for ok, (iy, ix) in zip(masks, corners)]
        _scatter(target, where, [wt[:, None, :] * go for wt in weights], _chunks(grid), _lanes(x.dtype))
        return target.reshape(x.shape)
    nw, ne, sw, se = (_gather(x, iy, ix, ok) for ok, (iy, ix) in zip(masks, corners))
    gx = np.zeros((n, p), x.dtype)
    gy = np.zeros((n, p), x.dtype)
    for ch in range(c):
        gout = go[:, ch]
        gx = fma(fma(se[:, ch] - sw[:, ch], nn, (ne[:, ch] - nw[:, ch]) * s), gout, gx)
        gy = fma(fma(se[:, ch] - ne[:, ch], we, (sw[:, ch] - nw[:, ch]) * e), gout, gy)
    return _interleave(gx * mx, gy * my, grid.shape)


def _interleave(gx, gy, shape):
    return np.stack((gx, gy), -1).reshape(shape)


# ---------------------------------------------------------------- 3-d: the scalar loop's arithmetic


def _unnormalize_scalar(c, size: int, align: bool):
    """grid_sampler_unnormalize(_set_grad) of GridSampler.h, and its multiplier."""
    t = c.dtype.type
    if align:
        return ((c + t(1)) / t(2)) * t(size - 1), t(size - 1) / t(2)
    return ((c + t(1)) * t(size) - t(1)) / t(2), t(size) / t(2)


def _clip_scalar(x, size: int):
    """clip_coordinates: std::min(size - 1, std::max(x, 0)) (NaN becomes size - 1)."""
    t = x.dtype.type
    lo = np.where(x < 0, t(0), x)
    return np.where(t(size - 1) > lo, lo, t(size - 1))


def _reflect_scalar(x, size: int, align: bool, grad: bool):
    """reflect_coordinates(_set_grad) between -0.5 and size - 0.5 (0 and size - 1 with align_corners)."""
    t = x.dtype.type
    low2, high2 = (0, 2 * (size - 1)) if align else (-1, 2 * size - 1)
    if low2 == high2:
        return np.zeros_like(x), np.zeros_like(x)
    lo, span = t(low2) / t(2), t(high2 - low2) / t(2)
    d = x - lo
    a = np.abs(d)
    extra = np.fmod(a, span)
    with np.errstate(invalid="ignore"):
        flips = np.floor(a / span)
    even = np.fmod(flips, 2) == 0
    r = np.where(even, extra + lo, (span - extra) + lo)
    if not grad:
        return r, None
    sign = np.where(d < 0, t(-1), t(1))
    return r, np.where(even, sign, -sign)


def _source_scalar(c, size: int, padding: int, align: bool):
    x, _ = _unnormalize_scalar(c, size, align)
    if padding == 2:
        x, _ = _reflect_scalar(x, size, align, False)
    return _clip_scalar(x, size) if padding else x


def _source_scalar_grad(c, size: int, padding: int, align: bool):
    """grid_sampler_compute_source_index_set_grad: the coordinate and its multiplier."""
    t = c.dtype.type
    x, mult = _unnormalize_scalar(c, size, align)
    mult = np.full_like(x, mult)
    if padding == 0:
        return x, mult
    if padding == 2:
        x, refl = _reflect_scalar(x, size, align, True)
        mult = mult * refl
    inside = (x > 0) & (x < t(size - 1))
    x = np.where(x <= 0, t(0), np.where(x >= t(size - 1), t(size - 1), x))
    return x, mult * np.where(inside, t(1), t(0))


def _corners_3d(ix, iy, iz, d: int, h: int, w: int):
    """The eight corners tnw, tne, tsw, tse, bnw, bne, bsw, bse: (z, y, x) and in-bounds mask of each, with the
    three distance factors of each corner's weight."""
    x0, y0, z0 = (_to_int64(np.floor(v)) for v in (ix, iy, iz))
    t = ix.dtype.type
    fx0, fy0, fz0 = x0.astype(ix.dtype), y0.astype(ix.dtype), z0.astype(ix.dtype)
    fx1, fy1, fz1 = fx0 + t(1), fy0 + t(1), fz0 + t(1)
    out = []
    for dz in (0, 1):
        for dy in (0, 1):
            for dx in (0, 1):
                zz, yy, xx = z0 + dz, y0 + dy, x0 + dx
                ok = (zz >= 0) & (zz < d) & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
                fx = (ix - fx0) if dx else (fx1 - ix)
                fy = (iy - fy0) if dy else (fy1 - iy)
                fz = (iz - fz0) if dz else (fz1 - iz)
                sx, sy, sz = (1 if dx else -1), (1 if dy else -1), (1 if dz else -1)
                out.append(((zz, yy, xx), ok, (fx, fy, fz), (sx, sy, sz)))
    return out


def _to_int64(x):
    """static_cast<int64_t> of a float: NaN and out-of-range values become the integer minimum."""
    bad = ~(np.abs(x) < 2.0 ** 63)
    with np.errstate(invalid="ignore"):
        out = np.where(bad, 0, x).astype(np.int64)
    out[bad] = np.iinfo(np.int64).min
    return out


def _gather_3d(x: np.ndarray, where, ok):
    n, c, d, h, w = x.shape
    zz, yy, xx = where
    flat = np.where(ok, (zz * h + yy) * w + xx, 0)
    vals = np.take_along_axis(x.reshape(n, c, -1), np.broadcast_to(flat[:, None, :], (n, c, flat.shape[1])), 2)
    return np.where(ok[:, None, :], vals, x.dtype.type(0))


def _sample_3d(x: np.ndarray, grid: np.ndarray, mode: int, padding: int, align: bool) -> np.ndarray:
    n, c, d, h, w = x.shape
    out_shape = (n, c) + grid.shape[1:4]
    p = grid.shape[1] * grid.shape[2] * grid.shape[3]
    gx, gy, gz = (grid[..., k].reshape(n, p) for k in range(3))
    ix = _source_scalar(gx, w, padding, align)
    iy = _source_scalar(gy, h, padding, align)
    iz = _source_scalar(gz, d, padding, align)
    if mode == 1:
        where = tuple(_to_int64(np.rint(v)) for v in (iz, iy, ix))
        zz, yy, xx = where
        ok = (zz >= 0) & (zz < d) & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        return _gather_3d(x, where, ok).reshape(out_shape)
    out = np.zeros((n, c, p), x.dtype)
    for where, ok, (fx, fy, fz), _ in _corners_3d(ix, iy, iz, d, h, w):
        term = _gather_3d(x, where, ok) * ((fx * fy) * fz)[:, None, :]
        out = np.where(ok[:, None, :], out + term, out)
    return out.reshape(out_shape)


def _sample_3d_backward(g: np.ndarray, x: np.ndarray, grid: np.ndarray, mode: int, padding: int, align: bool,
                        which: int) -> np.ndarray:
    n, c, d, h, w = x.shape
    p = grid.shape[1] * grid.shape[2] * grid.shape[3]
    go = np.ascontiguousarray(g).reshape(n, c, p)
    if which == 1 and mode == 1:
        return np.zeros(grid.shape, x.dtype)
    gxs, gys, gzs = (grid[..., k].reshape(n, p) for k in range(3))
    ix, mx = _source_scalar_grad(gxs, w, padding, align)
    iy, my = _source_scalar_grad(gys, h, padding, align)
    iz, mz = _source_scalar_grad(gzs, d, padding, align)
    if which == 0:
        target = np.zeros((n, c, d * h * w), x.dtype)
        if mode == 1:
            where = tuple(_to_int64(np.rint(v)) for v in (iz, iy, ix))
            zz, yy, xx = where
            ok = (zz >= 0) & (zz < d) & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            flat = [np.broadcast_to(np.where(ok, (zz * h + yy) * w + xx, -1)[:, None, :], go.shape)]
            _scatter(target, flat, [go], np.arange(p), 1)
            return target.reshape(x.shape)
        flat, values = [], []
        for (zz, yy, xx), ok, (fx, fy, fz), _ in _corners_3d(ix, iy, iz, d, h, w):
            flat.append(np.broadcast_to(np.where(ok, (zz * h + yy) * w + xx, -1)[:, None, :], go.shape))
            values.append(((fx * fy) * fz)[:, None, :] * go)
        _scatter(target, flat, values, np.arange(p), 1)
        return target.reshape(x.shape)
    gix, giy, giz = (np.zeros((n, p), x.dtype) for _ in range(3))
    corners = _corners_3d(ix, iy, iz, d, h, w)
    for ch in range(c):
        gout = go[:, ch]
        for where, ok, (fx, fy, fz), (sx, sy, sz) in corners:
            val = _gather_3d(x[:, ch:ch + 1], where, ok)[:, 0]
            gix = np.where(ok, _step(gix, ((val * fy) * fz) * gout, sx), gix)
            giy = np.where(ok, _step(giy, ((val * fx) * fz) * gout, sy), giy)
            giz = np.where(ok, _step(giz, ((val * fx) * fy) * gout, sz), giz)
    return np.stack((mx * gix, my * giy, mz * giz), -1).reshape(grid.shape)


def _step(acc, term, sign):
    return acc + term if sign > 0 else acc - term



# ---------------------------------------------------------------- rows and functions


def _grad(which: int, dims: int):
    """grid_sampler_{2,3}d_backward's gradient of the input (which=0) or the grid (which=1)."""
    def formula(F, g, input, grid, interpolation_mode, padding_mode, align_corners):
        arrays = [v._a if v.__class__ is Tensor else v for v in (g, input, grid)]
        kernel = _sample_2d_backward if dims == 2 else _sample_3d_backward
        out = kernel(arrays[0], arrays[1], arrays[2], interpolation_mode, padding_mode, align_corners, which)
        if F.tensors:           # the gradient of the backward kernel: a node gradcli cannot run
            return runs_first(apply(_SECOND[dims], out, (g, input, grid),
                                    (interpolation_mode, padding_mode, align_corners)))
        return out
    return formula


def _no_second(dims: int):
    def formula(F, g, grad_output, input, grid, interpolation_mode, padding_mode, align_corners):
        raise NotImplementedError(f"gradcli does not implement the derivative of grid_sampler_{dims}d_backward "
                                  f"(GridSampler{dims}DBackwardBackward0)")
    return formula


# fmt: off
_SAVES = ("input", "grid", "interpolation_mode", "padding_mode", "align_corners")
GRID_SAMPLER_2D = Op("GridSampler2DBackward0", None, _SAVES, (_grad(0, 2), _grad(1, 2)), inputs=("input", "grid"),
                     quiet=True, jvp=no_tangent("grid_sampler_2d"))
GRID_SAMPLER_3D = Op("GridSampler3DBackward0", None, _SAVES, (_grad(0, 3), _grad(1, 3)), inputs=("input", "grid"),
                     quiet=True, jvp=no_tangent("grid_sampler_3d"))
_SAVES_BACKWARD = ("grad_output",) + _SAVES
GRID_SAMPLER_2D_BACKWARD = Op("GridSampler2DBackwardBackward0", None, _SAVES_BACKWARD, (_no_second(2),) * 3,
                              inputs=("grad_output", "input", "grid"), quiet=True,
                              jvp=no_tangent("grid_sampler_2d_backward"))
GRID_SAMPLER_3D_BACKWARD = Op("GridSampler3DBackwardBackward0", None, _SAVES_BACKWARD, (_no_second(3),) * 3,
                              inputs=("grad_output", "input", "grid"), quiet=True,
                              jvp=no_tangent("grid_sampler_3d_backward"))
# fmt: on
_SECOND = {2: GRID_SAMPLER_2D_BACKWARD, 3: GRID_SAMPLER_3D_BACKWARD}


def _sizes(x: np.ndarray) -> str:
    return "[" + ", ".join(str(d) for d in x.shape) + "]"


def _check_common(a: np.ndarray, g: np.ndarray) -> None:
    """check_grid_sampler_common: batch sizes, the grid's last dim, non-empty spatial dims."""
    if a.ndim == 0 or g.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if a.shape[0] != g.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {_sizes(a)} and grid with sizes {_sizes(g)}")
    if g.shape[-1] != a.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {a.ndim - 2} in last dimension, but got "
                           f"grid with sizes {_sizes(g)}")
    for i in range(2, a.ndim):
        if a.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                               f"has sizes {_sizes(a)} with dimension {i} being empty")


def _check_dims(a: np.ndarray, g: np.ndarray, dims: int, mode: int) -> None:
    if a.ndim != dims + 2 or g.ndim != a.ndim:
        raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same number of dimensions, "
                           f"but got input with sizes {_sizes(a)} and grid with sizes {_sizes(g)}")
    if dims == 3 and mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _check_dtypes(a: np.ndarray, g: np.ndarray, kernel: str) -> None:
    if a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_word(a)}'")
    if a.dtype.itemsize == 2:
        raise NotImplementedError(f"gradcli does not implement grid_sample for {a.dtype.name} tensors")
    if g.dtype != a.dtype:
        raise RuntimeError(f"expected scalar type {type_word(a)} but found {type_word(g)}")


def _sampler(input, grid, mode: int, padding: int, align: bool, dims: int) -> Tensor:
    a, g = input._a, grid._a
    _check_common(a, g)
    _check_dims(a, g, dims, mode)
    if mode not in (0, 1, 2) or padding not in (0, 1, 2):
        raise NotImplementedError(f"gradcli does not implement grid_sampler with interpolation_mode {mode} and "
                                  f"padding_mode {padding} (PyTorch's modes are 0-2 and 0-2)")
    out_shape = a.shape[:2] + g.shape[1:-1]
    if dims == 3 or 0 not in out_shape:
        _check_dtypes(a, g, "grid_sampler_2d_cpu_kernel_impl" if dims == 2 else "grid_sampler3d_cpu")
    budget.check_tensor(out_shape, a.itemsize * (16 if mode == 2 else 4))     # the taps gathered at once
    if 0 in out_shape:
        out = np.zeros(out_shape, a.dtype)
    else:
        out = (_sample_2d if dims == 2 else _sample_3d)(a, g, mode, padding, align)
    row = GRID_SAMPLER_2D if dims == 2 else GRID_SAMPLER_3D
    return apply(row, out, (input, grid), (mode, padding, align))


def _arguments(key: str, args, kwargs):
    v = signatures.parsed(key, args, kwargs, {})
    return (v["input"], v["grid"], int(v["interpolation_mode"]), int(v["padding_mode"]),
            bool(v["align_corners"]))


def grid_sampler(*args, **kwargs) -> Tensor:
    """torch.grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners): 2-d or 3-d by the
    input's dims (cuDNN's path aside, as on a CPU)."""
    input, grid, mode, padding, align = _arguments("torch.grid_sampler", args, kwargs)
    _check_common(input._a, grid._a)
    return _sampler(input, grid, mode, padding, align, 2 if input._a.ndim == 4 else 3)


def grid_sampler_2d(*args, **kwargs) -> Tensor:
    input, grid, mode, padding, align = _arguments("torch.grid_sampler_2d", args, kwargs)
    return _sampler(input, grid, mode, padding, align, 2)


def grid_sampler_3d(*args, **kwargs) -> Tensor:
    input, grid, mode, padding, align = _arguments("torch.grid_sampler_3d", args, kwargs)
    return _sampler(input, grid, mode, padding, align, 3)


@autocast_policy("fp32")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None) -> Tensor:
    """F.grid_sample: its Python checks and warning, then torch.grid_sampler."""
    if mode.__class__ is not str or mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode.__class__ is not str or padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warn_default_align_corners()
        align_corners = False
    return grid_sampler(input, grid, _MODES.index(mode), _PADDINGS.index(padding_mode), align_corners)
