"""Modern (PyTorch 2.x) text of tensors, torch.Size and torch.return_types, with the print options that shape it."""

from __future__ import annotations

import math

import numpy as np

_FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
# Non-empty tensors of these dtypes print without a `dtype=` suffix.
_IMPLIED_DTYPES = frozenset({"float32", "int64", "bool", "complex64"})
# the default complex dtype of each default float dtype: it too prints without `dtype=`
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
# torch.get_default_dtype()'s name: tensors of it print without `dtype=` (set by gradcli.engine.dtypes)
default_float = "float32"
_PREFIX = "tensor("
_INDENT = len(_PREFIX)

# name: (precision, threshold, edgeitems, linewidth)
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


class PrintOptions:
    """The state torch.set_printoptions changes; one instance per session."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode", "display")

    def __init__(self) -> None:
        self.precision, self.threshold, self.edgeitems, self.linewidth = _PROFILES["default"]
        self.sci_mode: bool | None = None
        # "modern" or "legacy" (PyTorch 0.3's "Variable containing:" text). A choice made by whoever runs the script,
        # so set() (torch.set_printoptions, and the reset before every script) leaves it alone.
        self.display = "modern"

    def set(self, precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None) -> None:
        # An unknown profile name is silently ignored, as in PyTorch.
        if profile in _PROFILES:
            self.precision, self.threshold, self.edgeitems, self.linewidth = _PROFILES[profile]
        if precision is not None:
            self.precision = precision
        if threshold is not None:
            self.threshold = threshold
        if edgeitems is not None:
            self.edgeitems = edgeitems
        if linewidth is not None:
            self.linewidth = linewidth
        # Not guarded by `is not None`: every call resets a forced sci_mode (a PyTorch quirk we reproduce).
        self.sci_mode = sci_mode

    def __repr__(self) -> str:
        return (f"PrintOptions(precision={self.precision}, threshold={self.threshold}, edgeitems={self.edgeitems}, "
                f"linewidth={self.linewidth}, sci_mode={self.sci_mode})")


_DEFAULT_OPTS = PrintOptions()


# ---------------------------------------------------------------------------------------------------------------
# Scan: pick the shown elements, choose the element mode, render every shown element to one common width.
# ---------------------------------------------------------------------------------------------------------------

def _shown_block(data: np.ndarray, edge: int) -> tuple[np.ndarray, list[bool]]:
    """The compact array of elements a summarized print shows, and which axes lost their middle."""
    cut = [n > 2 * edge for n in data.shape]
    if any(cut) and not hasattr(edge, "__index__"):     # PyTorch slices by it: a float edgeitems fails there
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    shown = data
    for axis, n in enumerate(data.shape):
        if cut[axis]:
            keep = np.r_[0:edge, n - edge:n]
            shown = np.take(shown, keep, axis=axis)
    return shown, cut


def _render_floats(flat: np.ndarray, opts: PrintOptions) -> tuple[list[str], int]:
    """Unpadded element strings and the common width.

    Only non-zero finite values (the reference set) decide the mode and the width: zeros, inf and nan are rendered
    in whatever mode the others chose and may overflow the width, which is why PyTorch columns can look uneven.
    """
    finite = np.isfinite(flat)
    is_ref = finite & (flat != 0)
    ref = flat[is_ref]
    if ref.size == 0:
        int_mode, sci = True, False
    else:
        # Integer test in the stored dtype; range test on the float64 image (float32 1e-4 is just below 1e-4).
        int_mode = bool((ref == np.ceil(ref)).all())
        if opts.sci_mode is not None:
            sci = bool(opts.sci_mode)
        else:
            mag = np.abs(ref).astype(np.float64)
            mx, mn = float(mag.max()), float(mag.min())
            sci = mx / mn > 1000.0 or mx > 1.0e8 or mn < 1.0e-4

    values = flat.tolist()  # exact float64 images of the stored values
    if sci:
        spec = f".{opts.precision}e"
        strs = [format(v, spec) for v in values]
    elif int_mode:
        # The trailing dot marks a float tensor; inf and nan have no room for it.
        strs = [format(v, ".0f") + "." if ok else format(v, ".0f") for v, ok in zip(values, finite.tolist())]
    else:
        spec = f".{opts.precision}f"
        strs = [format(v, spec) for v in values]

    width = max((len(s) for s, ok in zip(strs, is_ref.tolist()) if ok), default=1)
    return strs, max(width, 1)


def _render_complex(flat: np.ndarray, opts: PrintOptions) -> tuple[list[str], int]:
    """Complex elements: the real and imaginary parts each rendered as a float tensor of their own (mode and width
    chosen by that part alone), joined as `re+imj`: the real part padded to its width, the imaginary part not
    (its padding is stripped after its sign). The width a line fits counts both parts' widths and the `j`."""
    reals, rw = _render_floats(flat.real, opts)
    imags, iw = _render_floats(flat.imag, opts)
    cells = []
    for r, i in zip(reals, imags):
        i = i.lstrip()
        cells.append(r.rjust(rw) + (i if i[0] in "+-" else "+" + i) + "j")
    return cells, rw + iw + 1


def _render_exact(flat: np.ndarray) -> tuple[list[str], int]:
    """Integer and bool elements: plain str(), width over every shown element."""
    strs = [str(v) for v in flat.tolist()]
    return strs, max((len(s) for s in strs), default=1)


# ---------------------------------------------------------------------------------------------------------------
# Layout: nested brackets over the dimensions of the shown block.
# ---------------------------------------------------------------------------------------------------------------

def _layout(cells: list[str], shape: tuple, cut: list[bool], width: int, opts: PrintOptions) -> str:
    """Bracketed text of a block of padded cells (row-major), inserting `...` after the first edge items of cut axes."""
    ndim = len(shape)
    edge = opts.edgeitems
    strides = [1] * ndim
    for axis in range(ndim - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    # Each cell takes its width plus ", "; at least one per line whatever the linewidth.
    per_line_room = width + 2

    def block(axis: int, start: int, indent: int) -> str:
        n = shape[axis]
        if axis == ndim - 1:
            row = cells[start:start + n]
            if cut[axis]:
                row[edge:edge] = [" ..."]
            per_line = max(1, int((opts.linewidth - indent) // per_line_room))
            lines = [", ".join(row[i:i + per_line]) for i in range(0, len(row), per_line)]
            return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
        step = strides[axis]
        parts = [block(axis + 1, start + i * step, indent + 1) for i in range(n)]
        if cut[axis]:
            parts[edge:edge] = ["..."]
        # Deeper nesting separates blocks by more blank lines: one newline per remaining dimension.
        sep = "," + "\n" * (ndim - 1 - axis) + " " * (indent + 1)
        return "[" + sep.join(parts) + "]"

    return block(0, 0, _INDENT)


def _body(data: np.ndarray, is_float: bool, opts: PrintOptions) -> str:
    summarize = data.size > opts.threshold
    if summarize and data.ndim > 0:
        if opts.edgeitems <= 0:
            return "[...]"
        shown, cut = _shown_block(data, opts.edgeitems)
    else:
        shown, cut = data, [False] * data.ndim
    flat = shown.ravel()
    if flat.dtype.kind == "c":
        strs, width = _render_complex(flat, opts)
        cells = strs
        if data.ndim == 0:
            return cells[0]
        return _layout(cells, shown.shape, cut, width, opts)
    if flat.dtype.kind == "V":          # bfloat16 (ml_dtypes): shown from its float value, which float32 holds
        flat = flat.astype(np.float32)
    strs, width = _render_floats(flat, opts) if is_float else _render_exact(flat)
    cells = [s.rjust(width) for s in strs]
    if data.ndim == 0:
        return cells[0]
    return _layout(cells, shown.shape, cut, width, opts)


# ---------------------------------------------------------------------------------------------------------------
# Suffixes and wrapping.
# ---------------------------------------------------------------------------------------------------------------

def _suffixes(data: np.ndarray, dtype_name: str, grad_fn_name: str | None, requires_grad: bool,
              opts: PrintOptions) -> list[str]:
    out = []
    if data.size == 0:
        # No element can hint at the dtype, so everything but the default float dtype is named.
        if data.ndim != 1:
            out.append(f"size={tuple(data.shape)!r}")
        if dtype_name != default_float:
            out.append(f"dtype=torch.{dtype_name}")
    else:
        if opts.edgeitems == 0:
            out.append(f"size={tuple(data.shape)!r}")
        if dtype_name not in _IMPLIED_DTYPES if default_float == "float32" else \
                dtype_name not in ("int64", "bool", default_float, _COMPLEX_OF[default_float]):   # set_default_dtype
            out.append(f"dtype=torch.{dtype_name}")
    if grad_fn_name is not None:
        out.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        out.append("requires_grad=True")
    return out


def _join_suffixes(text: str, suffixes: list[str], linewidth, used=None) -> str:
    # PyTorch counts the last line as two characters longer than it is, so a suffix stays on the body's line only if
    # that line, closing parenthesis included, is at most linewidth - 1 characters. After a wrap the count is exact
    # (`used`: a caller that wrapped already gives it).
    if used is None:
        used = len(text) - text.rfind("\n") + 1
    pieces = [text]
    for suffix in suffixes:
        if used + len(suffix) + 2 > linewidth:
            pieces.append(",\n" + " " * _INDENT + suffix)
            used = _INDENT + len(suffix)
        else:
            pieces.append(", " + suffix)
            used += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


# ---------------------------------------------------------------------------------------------------------------
# Public entry points.
# ---------------------------------------------------------------------------------------------------------------

def tensor_repr(data: np.ndarray, dtype_name: str, *, grad_fn_name: str | None = None,
                requires_grad: bool = False, opts: PrintOptions | None = None, tangent: str | None = None) -> str:
    """PyTorch's repr of a tensor holding `data`, whose numpy dtype matches dtype_name ('float32', 'int64', ...);
    `tangent` is the text of its forward-mode tangent, the last suffix."""
    if opts is None:
        opts = _DEFAULT_OPTS
    data = np.asarray(data)
    body = "[]" if data.size == 0 else _body(data, dtype_name in _FLOAT_DTYPES, opts)
    suffixes = _suffixes(data, dtype_name, grad_fn_name, requires_grad, opts)
    if tangent is not None:
        suffixes.append("tangent=" + tangent)
    return _join_suffixes(_PREFIX + body, suffixes, opts.linewidth)


def meta_repr(shape: tuple, dtype_name: str, *, grad_fn_name: str | None = None, requires_grad: bool = False,
              opts: PrintOptions | None = None) -> str:
    """PyTorch's repr of a meta tensor, which has no values: `tensor(..., device='meta', size=(3, 2))`, the dtype
    named unless it is the default float one."""
    suffixes = ["device='meta'", f"size={tuple(shape)!r}"]
    if dtype_name != default_float:
        suffixes.append(f"dtype=torch.{dtype_name}")
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _join_suffixes(_PREFIX + "...", suffixes, (opts or _DEFAULT_OPTS).linewidth)


def size_repr(shape: tuple) -> str:
    """repr(torch.Size(shape))."""
    return "torch.Size([" + ", ".join(str(int(d)) for d in shape) + "])"


def return_types_repr(name: str, values_repr: str, indices_repr: str, fields=("values", "indices")) -> str:
    """repr of a torch.return_types.<name> pair, the inner tensor texts inserted as they are."""
    return return_fields_repr(name, fields, (values_repr, indices_repr))


def return_fields_repr(name: str, fields: tuple, reprs: tuple) -> str:
    """repr of any torch.return_types.<name>: one `field=repr` a line."""
    body = ",\n".join(f"{f}={r}" for f, r in zip(fields, reprs))
    return f"torch.return_types.{name}(\n{body})"


def _part_text(data: np.ndarray, dtype_name: str, extra: int, opts: PrintOptions) -> str:
    """A sparse tensor's indices or values as PyTorch's _tensor_str lays them out `extra` columns further in:
    as many elements a line as fit the narrower width, each line after the first indented by `extra`."""
    if data.size == 0:
        return f"[], size={tuple(data.shape)!r}"
    narrow = PrintOptions()
    narrow.precision, narrow.threshold, narrow.edgeitems, narrow.sci_mode = (opts.precision, opts.threshold,
                                                                            opts.edgeitems, opts.sci_mode)
    narrow.linewidth = opts.linewidth - extra
    return _body(data, dtype_name in _FLOAT_DTYPES, narrow).replace("\n", "\n" + " " * extra)


def sparse_repr(indices: np.ndarray, values: np.ndarray, shape: tuple, dtype_name: str, *,
                grad_fn_name: str | None = None, requires_grad: bool = False, opts: PrintOptions | None = None) -> str:
    """PyTorch's repr of a sparse COO tensor: its indices and values, then size, nnz, dtype (unless implied),
    layout and grad_fn or requires_grad, the first of those always on a line of its own."""
    if opts is None:
        opts = _DEFAULT_OPTS
    text = (_PREFIX + "indices=tensor(" + _part_text(indices, "int64", _INDENT + len("indices="), opts) + "),\n"
            + " " * _INDENT + "values=tensor(" + _part_text(values, dtype_name, _INDENT + len("values="), opts) + ")")
    suffixes = [f"size={tuple(shape)!r}", f"nnz={indices.shape[1]}"]
    if dtype_name != default_float and not (default_float == "float32" and dtype_name in _IMPLIED_DTYPES):
        suffixes.append(f"dtype=torch.{dtype_name}")
    suffixes.append("layout=torch.sparse_coo")
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    text += ",\n" + " " * _INDENT + suffixes[0]
    return _join_suffixes(text, suffixes[1:], opts.linewidth, _INDENT + len(suffixes[0]))
