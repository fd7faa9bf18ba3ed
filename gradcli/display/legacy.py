"""Legacy (PyTorch 0.3, "Variable containing:") text of tensors: the shared number format, 1-D/2-D/N-d layouts, footer.

Scan once over every element to choose one format (integer, fixed, scaled fixed or scientific) and its width; lay the
values out one per line (1-D), as rows with column blocks (2-D), or as a run of `(i ,.,.) = ` matrix slices (N-d);
then add the `[torch.FloatTensor of size 2x3]` footer and the `Variable containing:` header. The rules come from
facts/display.md, section 5, checked against 0.3 notebook outputs.
"""

from __future__ import annotations

import math

import numpy as np

# 0.3 had no bool dtype (comparisons gave ByteTensors): bool tensors show as the ByteTensor they would have been.
_TYPENAMES = {
    "float32": "torch.FloatTensor",
    "float64": "torch.DoubleTensor",
    "float16": "torch.HalfTensor", "bfloat16": "torch.BFloat16Tensor",
    "uint8": "torch.ByteTensor",
    "bool": "torch.ByteTensor",
    "int8": "torch.CharTensor",
    "int16": "torch.ShortTensor",
    "int32": "torch.IntTensor",
    "int64": "torch.LongTensor",
}
VARIABLE_HEADER = "Variable containing:"
# 10 ** -323 is the smallest power of ten a double can hold (as a subnormal); the scale never goes below it.
_MIN_LOG_SCALE = -323
_VDOTS = "\u22ee"   # ⋮
_DDOTS = "\u22f1"   # ⋱
# Between the left and right edge items of a row cut short.
_HDOTS = "  ...  "


def typename(dtype_name: str) -> str:
    """torch.typename() of a 0.3 CPU tensor of this dtype."""
    return _TYPENAMES.get(dtype_name, f"torch.{dtype_name}")


# ---------------------------------------------------------------------------------------------------------------
# Scan: one number format for the whole tensor, from all of its elements.
# ---------------------------------------------------------------------------------------------------------------

class NumberFormat:
    """A format spec applied to value / scale, the common cell width, and the scale (1 when there is no scale line)."""

    __slots__ = ("spec", "width", "scale")

    def __init__(self, spec: str, width: int, scale: float = 1) -> None:
        self.spec, self.width, self.scale = spec, width, scale

    @property
    def scaled(self) -> bool:
        return self.scale != 1

    def cell(self, value) -> str:
        return format(value / self.scale, self.spec)

    def cells(self, values) -> list[str]:
        return [format(v / self.scale, self.spec) for v in values]

    def scale_line(self) -> str:
        return format(self.scale, ".5e") + " *"

    def __repr__(self) -> str:
        return f"NumberFormat({self.spec!r}, {self.width}, {self.scale!r})"


def _digits_before_point(magnitude: float) -> int:
    """How many digits precede the decimal point (negative below 0.1); a zero counts as one digit."""
    if magnitude == 0:
        return 1
    return math.floor(math.log10(magnitude)) + 1


def number_format(values: np.ndarray, precision: int = 4, min_width: int = -1) -> NumberFormat:
    """The format 0.3 chose for a non-empty set of values.

    Unlike the modern formatter, zeros take part in the magnitude range, and inf/nan stand in for the first finite
    magnitude (so they affect only the minimum width, which must fit `inf`).
    """
    min_width = max(min_width, 2)
    mag = np.abs(np.asarray(values, dtype=np.float64).ravel())
    bad = ~np.isfinite(mag)
    if bad.any():
        finite = mag[~bad]
        mag = np.where(bad, finite[0] if finite.size else 0.0, mag)
        min_width = max(min_width, 3)
    int_mode = bool((mag == np.ceil(mag)).all())
    exp_min = _digits_before_point(float(mag.min()))
    exp_max = _digits_before_point(float(mag.max()))
    p = precision

    if int_mode:
        if exp_max > p + 1:
            return NumberFormat(f"11.{p}e", max(min_width, 7 + p))
        width = max(min_width, exp_max + 1)
        return NumberFormat(f"{width}.0f", width)
    if exp_max - exp_min > p:
        width = 7 + p
        if abs(exp_max) > 99 or abs(exp_min) > 99:
            width += 1       # three-digit exponents
        width = max(min_width, width)
        return NumberFormat(f"{width}.{p}e", width)
    if exp_max > p + 1 or exp_max < 0:
        width = max(min_width, 7)
        return NumberFormat(f"{width}.{p}f", width, math.pow(10, max(exp_max - 1, _MIN_LOG_SCALE)))
    width = max(min_width, 7 if exp_max == 0 else exp_max + 6)
    return NumberFormat(f"{width}.{p}f", width)


def _center(text: str, width: int) -> str:
    # format()'s centring, which puts the odd space on the right (str.center may put it on the left).
    return format(text, f"^{width}")


# ---------------------------------------------------------------------------------------------------------------
# Layout. Every function returns text whose lines all end in "\n".
# ---------------------------------------------------------------------------------------------------------------

def _vector_text(vec: np.ndarray, opts) -> str:
    """One element per line; the middle becomes a ⋮ line when the vector reaches the threshold."""
    fmt = number_format(vec, opts.precision)
    pad = " " if fmt.scaled else ""
    head = fmt.scale_line() + "\n" if fmt.scaled else ""
    values = vec.tolist()
    if vec.size < opts.threshold:
        return head + "".join(pad + c + "\n" for c in fmt.cells(values))
    edge = opts.edgeitems
    first, last = fmt.cells(values[:edge]), fmt.cells(values[-edge:])
    return (head + "".join(pad + c + "\n" for c in first) + pad + _center(_VDOTS, fmt.width) + "\n"
            + "".join(pad + c + "\n" for c in last))


def _matrix_text(mat: np.ndarray, opts, fmt: NumberFormat | None = None, indent: str = "",
                 force_summary: bool = False) -> str:
    """Rows of one space-separated cells; wide matrices split into `Columns a to b` blocks, big ones cut to edges."""
    n_rows, n_cols = mat.shape
    edge = opts.edgeitems
    has_hdots, has_vdots = n_cols > 2 * edge, n_rows > 2 * edge
    small = not has_hdots and not has_vdots
    if fmt is None:
        fmt = number_format(mat, opts.precision, 0 if small else 5)
    rows = mat.tolist()

    if not force_summary and (mat.size < opts.threshold or small):
        pieces = []
        per_block = max(1, int((opts.linewidth - len(indent)) // (fmt.width + 1)))
        row_pad = indent + (" " if fmt.scaled else "")
        first = 0
        while first < n_cols:
            last = min(first + per_block, n_cols) - 1
            if per_block < n_cols:
                # 0.3 skipped the separating blank line for a block starting at column 1, not column 0: every block
                # gets one unless there is one column per block. The header is followed by a stray indent.
                if first != 1:
                    pieces.append("\n")
                pieces.append(f"Columns {first} to {last} \n{indent}")
            if fmt.scaled:
                pieces.append(fmt.scale_line() + "\n")
            for row in rows:
                pieces.append(row_pad + " ".join(fmt.cells(row[first:last + 1])) + "\n")
            first = last + 1
        return "".join(pieces)

    # Summarized: the scale line once, and no extra space before scaled rows.
    pieces = [fmt.scale_line() + "\n"] if fmt.scaled else []

    def full(row) -> str:
        return " ".join(fmt.cells(row))

    def cut(row) -> str:
        return " ".join(fmt.cells(row[:edge])) + _HDOTS + " ".join(fmt.cells(row[-edge:]))

    if has_hdots and has_vdots:
        dots = _center("...", (fmt.width + 1) * edge - 1)
        pieces += [indent + cut(row) + "\n" for row in rows[:edge]]
        pieces.append(indent + " ".join([dots, _center(_DDOTS, 5), dots]) + "\n")
        pieces += [indent + cut(row) + "\n" for row in rows[-edge:]]
    elif has_hdots:
        pieces += [indent + cut(row) + "\n" for row in rows]
    elif has_vdots:
        # Centred over a full row plus one, and not indented.
        pieces += [indent + full(row) + "\n" for row in rows[:edge]]
        pieces.append(_center(_VDOTS, len(full(rows[0])) + 1) + "\n")
        pieces += [indent + full(row) + "\n" for row in rows[-edge:]]
    else:
        pieces += [indent + full(row) + "\n" for row in rows]
    return "".join(pieces)


def _slice_indices(shape: tuple, summarize: bool, edge: int):
    """Leading indices of the 2-D slices in row-major order, each with the dims that skipped their middle and the
    dims that wrapped back to 0 on the way there (the dims after the first one that moved, as in an odometer)."""
    k = len(shape)
    counter = [0] * k
    counter[-1] = -1
    while True:
        skipped, restarted = [False] * k, [False] * k
        for i in range(k - 1, -1, -1):
            counter[i] += 1
            if summarize and counter[i] == edge and shape[i] > 2 * edge:
                counter[i] = shape[i] - edge
                skipped[i] = True
            if counter[i] == shape[i]:
                if i == 0:
                    return
                counter[i] = 0
                restarted[i] = True
            else:
                break
        yield tuple(counter), skipped, restarted


def _tensor_text(data: np.ndarray, opts) -> str:
    """Three or more dims: a `(i ,j ,.,.) = ` header and an indented matrix per slice, one format for all."""
    edge = opts.edgeitems
    small_slices = data.shape[-1] <= 2 * edge and data.shape[-2] <= 2 * edge
    fmt = number_format(data, opts.precision, 0 if small_slices else 3)
    summarize = data.size >= opts.threshold
    index_width = max(2, max(len(str(n)) for n in data.shape))
    pieces = []
    for index, skipped, restarted in _slice_indices(data.shape[:-2], summarize, edge):
        if summarize:
            if any(skipped):
                pieces.append("".join(_center("..." if s else "", index_width + 1) for s in skipped) + "\n")
            if any(restarted):
                pieces.append(" " + "".join(_center(_VDOTS if r else "", index_width + 1) for r in restarted) + "\n")
        if pieces:
            pieces.append("\n")
        pieces.append("(" + ",".join(_center(str(i), index_width) for i in index) + ",.,.) = \n")
        pieces.append(_matrix_text(data[index], opts, fmt, " ", summarize))
    return "".join(pieces)


# ---------------------------------------------------------------------------------------------------------------
# Public entry point.
# ---------------------------------------------------------------------------------------------------------------

def tensor_str(data: np.ndarray, dtype_name: str, opts) -> str:
    """str() of a 0.3 tensor: a leading newline, the body, the footer line, a trailing newline.

    0.3 had no zero-dimensional tensors holding a value: reductions gave tensors of size 1, so a 0-d array prints as
    one. Empty tensors had no dimensions at all and print only a footer saying so.
    """
    data = np.asarray(data)
    if data.dtype.kind == "c":
        raise NotImplementedError("gradcli's legacy display (PyTorch 0.3's text, --display legacy) has no complex "
                                  "tensors: PyTorch 0.3 had none")
    name = typename(dtype_name)
    if data.size == 0:
        return f"[{name} with no dimension]\n"
    if data.ndim == 0:
        data = data.reshape(1)
    if data.dtype == np.bool_:
        data = data.astype(np.uint8)
    if data.ndim == 1:
        body = _vector_text(data, opts)
    elif data.ndim == 2:
        body = _matrix_text(data, opts)
    else:
        body = _tensor_text(data, opts)
    size = "x".join(str(n) for n in data.shape)
    return f"\n{body}[{name} of size {size}]\n"


def tensor_repr(data: np.ndarray, dtype_name: str, *, opts, variable: bool = True) -> str:
    """repr() of a 0.3 Variable holding `data` (or, with variable=False, of the plain tensor).

    Nothing of the autograd state shows: no grad_fn, no requires_grad.
    """
    text = tensor_str(data, dtype_name, opts)
    return VARIABLE_HEADER + text if variable else text
