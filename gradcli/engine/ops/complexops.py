"""Complex tensors: their own op rows (the gradients PyTorch's convention gives a real loss of complex inputs:
the conjugate Wirtinger derivative, so formulas multiply by conjugates), the views between complex and real
(`real`, `imag`, view_as_real, view_as_complex), and the one table of what a complex tensor may meet.

An op gradcli has not checked on complex tensors is refused, never computed, from one table (CALLABLE,
IMPLEMENTED, ROWS, CARRIED, PYTORCH_REFUSALS), with PyTorch's own error where PyTorch refuses complex inputs
itself (`<`, max, clamp, sort, ...) and `gradcli does not implement complex tensors in torch.NAME` otherwise.
Once a session may meet complex values (STATE.complex_seen: its text has an imaginary literal or a complex name
(gradcli.session), or a complex dtype was made) the language hands out torch functions and a complex tensor's
methods through `guarded` and `method`, which refuse before the function runs, and recording.apply runs `check`
on every op row, which catches what reaches the engine another way (an nn module's forward). A complex value no
text announces (`(-1) ** 0.5`) made inside a call whose function was already read meets the engine's own checks
(compare, max/min, sort, topk, argmax, median, the apply check). Until then real tensors pay nothing for any of it.
"""

from __future__ import annotations

import functools
import weakref

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.recording import autocast_policy, Op, apply
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


def seen() -> None:
    """A complex tensor exists in this session: from now on recording.apply checks each op (check)."""
    STATE.complex_seen = True


def _numpy_only(formula, node: str):
    """A complex row's formula, which computes on numpy arrays: a backward with create_graph=True (formulas on
    Tensors, recording their own graph) is refused through it."""
    @functools.wraps(formula)           # (its signature is the formula's: tests read what it takes)
    def checked(F, g, *saved):
        if F.tensors:
            raise NotImplementedError(f"gradcli does not implement create_graph=True through complex tensors "
                                      f"({node})")
        return formula(F, g, *saved)
    return checked


def _sgn(z):
    """z / |z|, 0 where z is 0, as torch.sgn computes it: each part divided by |z| (hypot, as abs computes it;
    numpy's complex-by-real division rounds otherwise in 46% of complex64 elements)."""
    a = np.hypot(z.real, z.imag)
    safe = np.where(a == 0, 1, a)
    out = np.empty(np.shape(z), z.dtype)
    out.real = np.where(a == 0, 0, z.real / safe)
    out.imag = np.where(a == 0, 0, z.imag / safe)
    return out


def _abs_grad(F, g, self):
    return g * _sgn(self)


def _angle_grad(F, g, self):
    with np.errstate(invalid="ignore", divide="ignore"):
        r = product(g * self / (np.hypot(self.real, self.imag) ** 2), np.asarray(1j, self.dtype))
    return np.where(self == 0, 0, r).astype(self.dtype)


def _view_as_complex_of(g):
    g = np.ascontiguousarray(g)
    return g.view(dtypes.by_name("complex128" if g.dtype == np.float64 else "complex64").np)[..., 0]


def _polar_abs(F, g, result):
    return np.real(product(g.conj(), _sgn(result)))


def _polar_angle(F, g, result):
    return np.real(product(product(g.conj(), result), np.asarray(1j, result.dtype)))


def _part(F, part):
    """g.real or g.imag as a gradient of its own (numpy's are views of g)."""
    return part.copy()


def _c(x):
    """x.conj() for an array or a number."""
    return x.conj() if hasattr(x, "conj") else np.conj(x)


def _times_conj(F, g, x):
    """g * conj(x), multiplied as PyTorch's kernel multiplies (product: measured, the same bits)."""
    return product(g, _c(x))


def _power(z, exponent):
    """z ** exponent (a number) as pow_ computes it."""
    if exponent == 2:
        return product(z, z)
    if exponent == 0.5:
        return np.sqrt(z)
    if exponent == 1:
        return np.array(z, copy=True)
    return np.power(z, np.asarray(exponent, z.real.dtype))


def _mm_self(F, g, self, other):
    return g @ np.swapaxes(_c(other), -1, -2)


def _mm_other(F, g, self, other):
    return np.swapaxes(_c(self), -1, -2) @ g


def _pow_grad(F, g, self, exponent):
    if exponent == 0:
        return np.zeros_like(g)
    return _times_conj(F, g, exponent * _power(self, exponent - 1))


def _view_as_real_backward(F, g):
    if F.tensors:           # (create_graph: the gradient's complex view, itself recorded)
        from gradcli.engine.ops.shape import contiguous
        return view_as_complex(contiguous(g))
    return _view_as_complex_of(g)


def _view_as_complex_backward(F, g):
    if F.tensors:
        from gradcli.engine.ops.arith import clone
        return clone(view_as_real(resolve_conj(g)))
    return np.stack((g.real, g.imag), -1)


# fmt: off
CONJ         = Op("ConjBackward0",          None, (),                 (lambda F, g: conj(g) if F.tensors else g.conj(),))
CONJ_PHYS    = Op("ConjPhysicalBackward0",  None, (),                 (lambda F, g: conj_physical(g) if F.tensors
                                                                       else g.conj(),))
ABS          = Op("AbsBackward0",           None, ("self",),          (_abs_grad,), inputs=("self",))
ANGLE        = Op("AngleBackward0",         None, ("self",),          (_angle_grad,), inputs=("self",))
VIEW_AS_REAL = Op("ViewAsRealBackward0",    None, (),                 (_view_as_real_backward,))
VIEW_AS_CPLX = Op("ViewAsComplexBackward0", None, (),                 (_view_as_complex_backward,))
COMPLEX      = Op("ComplexBackward0",       None, ("real", "imag"),   (lambda F, g, real, imag: _part(F, g.real),
                                                                       lambda F, g, real, imag: _part(F, g.imag)),
                  inputs=("real", "imag"))
POLAR        = Op("PolarBackward0",         None, ("result",),        (_polar_abs, _polar_angle),
                  inputs=("abs", "angle"))
MUL          = Op("MulBackward0",           None, ("self", "other"),  (lambda F, g, self, other: _times_conj(F, g, other),
                                                                       lambda F, g, self, other: _times_conj(F, g, self)),
                  fits=True)
DIV          = Op("DivBackward0",           None, ("self", "other"),
                  (lambda F, g, self, other: g / _c(other),
                   lambda F, g, self, other: -g * _c(self / other / other)), fits=True)
EXP          = Op("ExpBackward0",           None, ("result",),        (lambda F, g, result: _times_conj(F, g, result),),
                  inputs=("self",))
LOG          = Op("LogBackward0",           None, ("self",),          (lambda F, g, self: g / _c(self),))
SQRT         = Op("SqrtBackward0",          None, ("result",),        (lambda F, g, result: g / (2 * _c(result)),),
                  inputs=("self",))
NEG_VIEW     = Op("NegViewBackward0",       None, (),                 (lambda F, g: -g,))
RECIPROCAL   = Op("ReciprocalBackward0",    None, ("result",),        (lambda F, g, result:
                                                                       _times_conj(F, -g, product(result, result)),),
                  inputs=("self",))
POW          = Op("PowBackward0",           None, ("self", "exponent"), (_pow_grad,), inputs=("self",))
MM           = Op("MmBackward0",            None, ("self", "other"),  (_mm_self, _mm_other), fits=("dtype", "dtype"))
DOT          = Op("DotBackward0",           None, ("self", "other"),  (lambda F, g, self, other: _times_conj(F, g, other),
                                                                       lambda F, g, self, other: _times_conj(F, g, self)),
                  fits="dtype")
VDOT         = Op("VdotBackward0",          None, ("self", "other"),  (lambda F, g, self, other: product(_c(g), other),
                                                                       lambda F, g, self, other: product(g, self)),
                  fits="dtype")
# fmt: on


# Forward-mode columns (gradcli.engine.forward): (F, tangents, inputs, result, *saved) -> the result's tangent.
# A holomorphic op's tangent is f'(z) * t; abs and angle (real results of a complex input) take the real part
# of the matching product. The derivatives are numbers computed here, so a tangent is exact to first order
# (forward over reverse through these rows is not differentiated further).

def _const(a) -> Tensor:
    return Tensor(np.asarray(a))


def _times(t, factor):
    """t * factor (an array), None where t is None."""
    return None if t is None else t * _const(factor)


def _sum_terms(*terms):
    from gradcli.engine.forward import add_tangents
    out = None
    for t in terms:
        out = add_tangents(out, t)
    return out


def _unary_jvp(derivative):
    return lambda F, ts, xs, result, *saved: _times(ts[0], derivative(_array(xs[0]), result._a))


def _array(x):
    return x._a if x.__class__ is Tensor else np.asarray(x)


def _abs_jvp(F, ts, xs, result, *saved):
    return real(ts[0] * _const(np.conj(_sgn(xs[0]._a))))


def _angle_jvp(F, ts, xs, result, *saved):
    """Re(conj(t) * z / |z|^2 * i): angle_backward's formula on the conjugate tangent (its signed zeros too)."""
    z = xs[0]._a
    t = conj_physical(ts[0]) * _const(z) / _const(np.abs(z) ** 2) * _const(np.asarray(1j, z.dtype))
    return real(t * _const(z != 0) if (z == 0).any() else t)     # (0 where z is 0: its nan made a number)


def _mul_jvp(F, ts, xs, result):
    a, b = xs
    return _sum_terms(_times(ts[0], _array(b)), _times(ts[1], _array(a)))


def _div_jvp(F, ts, xs, result):
    a, b = _array(xs[0]), _array(xs[1])
    return _sum_terms(_times(ts[0], 1 / b), _times(ts[1], -(a / b) / b))


def _pow_jvp(F, ts, xs, result, exponent):
    z = xs[0]._a
    return _times(ts[0], np.zeros_like(z) if exponent == 0 else exponent * z ** (exponent - 1))


def _mm_jvp(F, ts, xs, result):
    from gradcli.engine.ops.arith import add
    a, b = xs
    terms = [ts[0] @ b if ts[0] is not None else None, a @ ts[1] if ts[1] is not None else None]
    terms = [t for t in terms if t is not None]
    return terms[0] if len(terms) == 1 else add(*terms)


def _dot_jvp(F, ts, xs, result, conj_first=False):
    a, b = xs
    first = conj_physical(ts[0]) if conj_first and ts[0] is not None else ts[0]
    left = conj_physical(a) if conj_first else a
    return _sum_terms(None if first is None else dot(first, b), None if ts[1] is None else dot(left, ts[1]))


def _complex_jvp(F, ts, xs, result):
    from gradcli.engine import factories
    tr, ti = ts
    tr = tr if tr is not None else factories.zeros_like(ti)
    ti = ti if ti is not None else factories.zeros_like(tr)
    return complex_(tr, ti)


def _polar_jvp(F, ts, xs, result):
    r = result._a
    return _sum_terms(None if ts[0] is None else ts[0] * _const(_sgn(r)),
                      None if ts[1] is None else ts[1] * _const(r * np.asarray(1j, r.dtype)))


def _views():
    """view_as_real's and view_as_complex's columns: the tangent through the same view."""
    from gradcli.engine.ops.shape import _linear_view
    VIEW_AS_REAL.jvp = _linear_view(VIEW_AS_REAL, lambda t, r: _real_view(t))
    VIEW_AS_CPLX.jvp = _linear_view(VIEW_AS_CPLX, lambda t, r: _view_as_complex_of(t))


ROWS = frozenset((CONJ, CONJ_PHYS, ABS, ANGLE, VIEW_AS_REAL, VIEW_AS_CPLX, COMPLEX, POLAR, MUL, DIV, EXP, LOG, SQRT,
                  POW, MM, DOT, VDOT, RECIPROCAL, NEG_VIEW))

CONJ.jvp = CONJ_PHYS.jvp = lambda F, ts, xs, result: conj_physical(ts[0])
NEG_VIEW.jvp = lambda F, ts, xs, result: -ts[0]
ABS.jvp, ANGLE.jvp = _abs_jvp, _angle_jvp
EXP.jvp = _unary_jvp(lambda z, r: r)
LOG.jvp = _unary_jvp(lambda z, r: 1 / z)
SQRT.jvp = _unary_jvp(lambda z, r: 1 / (2 * r))
RECIPROCAL.jvp = _unary_jvp(lambda z, r: -(r * r))
MUL.jvp, DIV.jvp, POW.jvp, MM.jvp = _mul_jvp, _div_jvp, _pow_jvp, _mm_jvp
DOT.jvp = _dot_jvp
VDOT.jvp = lambda F, ts, xs, result: _dot_jvp(F, ts, xs, result, conj_first=True)
COMPLEX.jvp, POLAR.jvp = _complex_jvp, _polar_jvp
_views()

def _numpy_formulas() -> None:
    for row in ROWS - _LINEAR:
        row.backward = tuple(_numpy_only(f, row.node) for f in row.backward)


# the linear rows whose formulas also run on Tensors (conjugates, views, negation): create_graph goes through them
_LINEAR = frozenset((CONJ, CONJ_PHYS, VIEW_AS_REAL, VIEW_AS_CPLX, NEG_VIEW))
_numpy_formulas()

# The real rows that carry complex values through unchanged in meaning (their formulas are linear: a gradient
# passes, reshaped, summed or negated), checked against PyTorch on complex tensors.
CARRIED = frozenset((
    "AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1", "RsubBackward0", "RsubBackward1", "NegBackward0",
    "SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1", "CloneBackward0", "CatBackward0",
    "StackBackward0", "SelectBackward0", "SliceBackward0", "IndexBackward0", "ViewBackward0", "ReshapeAliasBackward0",
    "UnsafeViewBackward0", "TBackward0", "TransposeBackward0", "TransposeBackward1", "PermuteBackward0",
    "ExpandBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0",
    "AliasBackward0", "Identity", "ToCopyBackward0", "UnbindBackward0", "SplitBackward0", "SplitWithSizesBackward0",
    "NarrowBackward0", "FlipBackward0", "RollBackward0", "AsStridedBackward0", "CopySlices", "CopyBackwards",
    "DetachBackward0", "PosBackward0", "WhereBackward0", "ExpandAsBackward0", "RepeatBackward0",
    "DiagonalBackward0", "DiagonalBackward0_copy", "DiagBackward0", "DiagEmbedBackward0", "TrilBackward0", "TriuBackward0",
    "MaskedFillBackward0", "MaskedFillBackward1", "IndexSelectBackward0", "GatherBackward0", "TakeBackward0",
    "ConstantPadNdBackward0",
    # torch.stft's and istft's steps (gradcli.engine.ops.stft): their formulas move values, linear in them
    "SqueezeBackward4", "UnfoldBackwardBackward0", "ReflectionPad1DBackward0", "ReplicationPad1DBackward0",
))
# the rows of torch.fft (gradcli.engine.ops.fft, not imported here), made for complex values
SPECTRAL = frozenset(("FftC2CBackward0", "FftR2CBackward0", "FftC2RBackward0"))

# What scripts may call with a complex tensor: Tensor methods and torch functions, by name. A name in IMPLEMENTED
# has a complex function here (called instead of the real one), the rest are the real functions, which carry
# complex values through.
IMPLEMENTED = {}            # filled below: name -> function
CALLABLE = frozenset((
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg", "negative", "positive",
    "sum", "mean", "reshape", "view", "view_as", "reshape_as", "transpose", "t", "permute", "squeeze", "unsqueeze",
    "flatten", "expand", "expand_as", "clone", "detach", "detach_", "cat", "concat", "concatenate", "stack", "select",
    "narrow", "unbind", "split", "chunk", "flip", "contiguous", "size", "dim", "numel", "item", "tolist", "type",
    "is_complex", "is_floating_point", "is_neg", "resolve_neg", "to", "requires_grad_", "backward",
    "register_hook", "retain_grad", "element_size", "is_contiguous", "stride", "storage_offset",
    "isclose", "allclose", "equal", "eq", "ne", "isfinite", "isnan", "isinf", "zeros_like", "ones_like",
    "full_like", "empty_like", "new_zeros", "new_ones", "new_full", "new_empty",
    "new_tensor", "cfloat", "cdouble", "is_same_size", "nelement", "ndimension",
    "cpu", "copy_", "zero_", "fill_", "is_inference", "tensor", "as_tensor", "movedim", "moveaxis", "swapaxes",
    "swapdims", "ravel", "is_tensor", "view_as_complex", "complex", "polar", "get_device", "is_nonzero",
    "float", "double", "real", "imag", "where", "stft", "istft",
    "result_type", "promote_types", "can_cast", "randn_like", "rand_like", "is_signed", "long", "int", "bool",
    "half", "short", "byte", "char", "nonzero", "count_nonzero", "repeat", "adjoint", "mT", "mH", "H", "T",
    "tile", "roll", "diagonal", "diag", "tril", "triu", "masked_fill", "index_select", "gather", "take",
    "max", "min",               # (their engine functions refuse complex values with the words PyTorch has per form)
    # the view-copy functions of the views above (gradcli.engine.ops.viewcopy: the view's node, renamed)
    "alias_copy", "t_copy", "transpose_copy", "permute_copy", "select_copy", "slice_copy", "squeeze_copy",
    "unsqueeze_copy", "expand_copy", "unbind_copy", "split_copy", "split_with_sizes_copy", "view_copy",
    "view_as_real_copy", "view_as_complex_copy", "diagonal_copy",
))

# PyTorch's own refusals of complex inputs, by function name: (error class, message)
_FLOAT_NAME = {np.dtype(np.complex64): "ComplexFloat", np.dtype(np.complex128): "ComplexDouble"}
PYTORCH_REFUSALS = {
    "lt": (NotImplementedError, '"lt_cpu" not implemented for \'{kind}\''),
    "less": (NotImplementedError, '"lt_cpu" not implemented for \'{kind}\''),
    "gt": (NotImplementedError, '"gt_cpu" not implemented for \'{kind}\''),
    "greater": (NotImplementedError, '"gt_cpu" not implemented for \'{kind}\''),
    "le": (NotImplementedError, '"le_cpu" not implemented for \'{kind}\''),
    "less_equal": (NotImplementedError, '"le_cpu" not implemented for \'{kind}\''),
    "ge": (NotImplementedError, '"ge_cpu" not implemented for \'{kind}\''),
    "greater_equal": (NotImplementedError, '"ge_cpu" not implemented for \'{kind}\''),
    "max": (NotImplementedError, '"max_all" not implemented for \'{kind}\''),
    "min": (NotImplementedError, '"min_all" not implemented for \'{kind}\''),
    "max_dim": (RuntimeError, "max(): does not support complex input"),
    "min_dim": (RuntimeError, "min(): does not support complex input"),
    "amax": (NotImplementedError, '"max_values_cpu" not implemented for \'{kind}\''),
    "amin": (NotImplementedError, '"min_values_cpu" not implemented for \'{kind}\''),
    "median": (NotImplementedError, '"median_cpu" not implemented for \'{kind}\''),
    "kthvalue": (NotImplementedError, '"kthvalue_cpu" not implemented for \'{kind}\''),
    "mode": (NotImplementedError, '"mode_cpu" not implemented for \'{kind}\''),
    "unique": (NotImplementedError, '"unique" not implemented for \'{kind}\''),
    "relu": (NotImplementedError, "clamp is not supported for complex types"),
    "clamp": (NotImplementedError, "clamp is not supported for complex types"),
    "clip": (NotImplementedError, "clamp is not supported for complex types"),
    "floor": (NotImplementedError, "floor is not supported for complex inputs"),
    "ceil": (NotImplementedError, "ceil is not supported for complex inputs"),
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "sort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "topk": (RuntimeError, " topk does not support complex dtypes on CPU"),
    "remainder": (NotImplementedError, '"remainder_cpu" not implemented for \'{kind}\''),
    "fmod": (NotImplementedError, '"fmod_cpu" not implemented for \'{kind}\''),
    "floor_divide": (NotImplementedError, '"div_floor_cpu" not implemented for \'{kind}\''),
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "round": (NotImplementedError, '"round_vml_cpu" not implemented for \'{kind}\''),
    "sign": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead."),
}
# the operators that reach these functions
OPERATOR_NAMES = {"__lt__": "lt", "__gt__": "gt", "__le__": "le", "__ge__": "ge", "__mod__": "remainder",
                  "__floordiv__": "floor_divide"}


def is_complex(x) -> bool:
    return x.__class__ is Tensor and x._a.dtype.kind == "c"


def refusal(name: str, kind: np.dtype, namespace: str = "torch") -> Exception:
    """The error for `name` called with a complex tensor of numpy dtype `kind`."""
    known = PYTORCH_REFUSALS.get(name)
    if known is not None:
        return known[0](known[1].format(kind=_FLOAT_NAME.get(kind, "ComplexFloat")))
    return NotImplementedError(f"gradcli does not implement complex tensors in {namespace}.{name}")


def first_complex(args, kwargs):
    """The numpy dtype of the first complex tensor among a call's arguments (one level into lists), or None."""
    for v in (*args, *kwargs.values()):
        if v.__class__ is Tensor:
            if v._a.dtype.kind == "c":
                return v._a.dtype
        elif v.__class__ is list or v.__class__ is tuple:
            for w in v:
                if w.__class__ is Tensor and w._a.dtype.kind == "c":
                    return w._a.dtype
    return None


def guarded(function, name: str, namespace: str):
    """`function` (a torch function a script called once complex tensors exist): refused when an argument is
    complex and `name` is not one gradcli has checked; a name with a complex implementation runs it."""
    own = IMPLEMENTED.get(name) if namespace == "torch" else None
    allowed = namespace == "torch" and name in CALLABLE

    def call(*args, **kwargs):
        kind = first_complex(args, kwargs)
        if kind is None:
            return function(*args, **kwargs)
        if own is not None:
            return own(*args, **kwargs)
        if allowed:
            return function(*args, **kwargs)
        raise refusal(name, kind, namespace)
    call.guarded = function         # the function itself, whose argument errors the language words as PyTorch's
    return call


def method(t: Tensor, name: str, function):
    """`t.name` (a complex tensor's method): its complex implementation, the real one that carries complex
    values, or the refusal, raised when called (PyTorch's own refusals too)."""
    own = IMPLEMENTED.get(name)
    if own is not None:
        return lambda *args, **kwargs: own(t, *args, **kwargs)
    if name in CALLABLE or not callable(function):
        return function

    def refused(*args, **kwargs):
        raise refusal(name, t._a.dtype, "torch.Tensor" if name not in _TORCH_TOO else "torch")
    return refused


_TORCH_TOO = frozenset(PYTORCH_REFUSALS)


def check(op: Op, out, inputs) -> None:
    """recording.apply's check, once the session has complex tensors: a row not made or checked for complex
    values refuses them (an input or the result complex)."""
    if op in ROWS or op.node in CARRIED or op.node in SPECTRAL or op.node.removesuffix("_copy") in CARRIED:
        return
    kind = out.dtype if out.dtype.kind == "c" else None
    if kind is None:
        for x in inputs:
            if x.__class__ is Tensor and x._a.dtype.kind == "c":
                kind = x._a.dtype
                break
            if x.__class__ is complex:
                kind = np.dtype(np.complex64)
                break
    if kind is not None:
        name = op.node.rstrip("0123456789")
        raise refusal((name[:-8] if name.endswith("Backward") else name).lower(), kind)


# ------------------------------------------------------------------------------------------------ functions

def _real_view(a: np.ndarray) -> np.ndarray:
    """The (..., 2) real array aliasing a complex array's memory, whatever its strides."""
    part = a.real
    return np.lib.stride_tricks.as_strided(part, a.shape + (2,), part.strides + (part.itemsize,))


def view_as_real(z: Tensor) -> Tensor:
    from gradcli.engine.ops.shape import _view_of
    if z.__class__ is not Tensor:
        raise TypeError(f"view_as_real(): argument 'input' (position 1) must be Tensor, not {type(z).__name__}")
    if z._a.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(z):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return _view_of(z, _real_view(z._a), VIEW_AS_REAL, ())


@autocast_policy("fp32")
def view_as_complex(x: Tensor) -> Tensor:
    from gradcli.engine.ops.shape import _view_of
    if x.__class__ is not Tensor:
        raise TypeError(f"view_as_complex(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    a = x._a
    if a.dtype != np.float32 and a.dtype != np.float64:
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {_SCALAR_NAMES.get(a.dtype.name, a.dtype.name)}")
    if a.ndim == 0 or a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if a.strides[-1] != a.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    for s in a.strides[:-1]:
        if s % (2 * a.itemsize):
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    seen()
    ctype = np.complex128 if a.dtype == np.float64 else np.complex64
    owner = _owner(a)
    if owner.flags.c_contiguous or owner.flags.f_contiguous:
        out = np.ndarray(a.shape[:-1], ctype, buffer=owner, offset=_offset(a), strides=a.strides[:-1])
    else:       # (a strided view at the root, as a real view of a transposed complex tensor: numpy's own view)
        out = a.view(ctype)[..., 0]
    return _view_of(x, out, VIEW_AS_CPLX, ())


_SCALAR_NAMES = {"float16": "Half", "int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte",
                 "int8": "Char", "int16": "Short", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _owner(a: np.ndarray) -> np.ndarray:
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _offset(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0] - _owner(a).__array_interface__["data"][0]


def real(z: Tensor) -> Tensor:
    """z.real: a view of z's real parts (SelectBackward0 of view_as_real), through conj() for a conjugate
    view as PyTorch reads one (its parts are those of the conjugate of the conjugate)."""
    if z._a.dtype.kind != "c":
        return z
    from gradcli.engine.ops.indexing import select
    return select(view_as_real(conj(z) if is_conj(z) else z), -1, 0)


def imag(z: Tensor) -> Tensor:
    """z.imag; of a conjugate view, the negated imaginary parts of its conjugate (NegViewBackward0)."""
    if z._a.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    from gradcli.engine.ops.indexing import select
    if is_conj(z):
        return select(_neg_view(view_as_real(conj(z))), -1, 1)
    return select(view_as_real(z), -1, 1)


def _neg_view(x: Tensor) -> Tensor:
    out = np.asarray(-x._a)
    out.flags.writeable = False         # (a lazy negative view in PyTorch; a copy here, refusing writes)
    return apply(NEG_VIEW, out, (x,))


# the tensors conj() made: PyTorch's lazy conjugate views, whose is_conj() is True. PyTorch's share their input's
# memory; gradcli's are copies, so they refuse writes (numpy's read-only flag, which their views inherit) rather
# than let a write miss the input it would reach in PyTorch.
_CONJ = weakref.WeakValueDictionary()     # id -> tensor
CONJ_WRITE = ("gradcli does not implement writing through a conjugate view (PyTorch's conj() shares its input's "
              "memory; gradcli's is a copy): write to the input, or to conj_physical() or resolve_conj()")


def conj(z: Tensor) -> Tensor:
    if z._a.dtype.kind != "c":
        return z
    out = np.asarray(np.conj(z._a))
    out.flags.writeable = False
    t = apply(CONJ, out, (z,))
    if not is_conj(z):                  # the conjugate of a conjugate view is a plain view of its input
        _CONJ[id(t)] = t
    return t


def is_conj(z: Tensor) -> bool:
    return _CONJ.get(id(z)) is z


def resolve_conj(z: Tensor) -> Tensor:
    if not is_conj(z):
        return z
    from gradcli.engine.ops.arith import clone
    return clone(z)


def conj_physical(z: Tensor) -> Tensor:
    if z._a.dtype.kind != "c":
        return z
    return apply(CONJ_PHYS, np.conj(z._a), (z,))


def abs_(z: Tensor) -> Tensor:
    if z._a.dtype.kind != "c":
        from gradcli.engine import ops
        return ops.abs(z)
    return apply(ABS, np.hypot(z._a.real, z._a.imag), (z,))     # (hypot: PyTorch's bits, where np.abs differs)


def angle(z: Tensor) -> Tensor:
    if z._a.dtype.kind != "c":
        from gradcli.engine import ops
        return ops.angle(z)
    from gradcli.engine import elementary
    return apply(ANGLE, np.asarray(elementary.atan2(z._a.imag, z._a.real)), (z,))


def complex_(real: Tensor, imag: Tensor) -> Tensor:
    """torch.complex(real, imag)."""
    for v, which in ((real, "real"), (imag, "imag")):
        if v.__class__ is not Tensor:
            raise TypeError(f"complex(): argument '{which}' (position {1 if which == 'real' else 2}) must be "
                            f"Tensor, not {type(v).__name__}")
    a, b = real._a, imag._a
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_SCALAR_NAMES.get(a.dtype.name, a.dtype.name)} and "
                           f"{_SCALAR_NAMES.get(b.dtype.name, b.dtype.name)}")
    if a.dtype != b.dtype:
        names = {"float32": "Float", "float64": "Double", "float16": "Half"}
        raise RuntimeError(f"Expected object of scalar type {names[a.dtype.name]} but got scalar type "
                           f"{names[b.dtype.name]} for second argument")
    if a.dtype == np.float16:
        raise NotImplementedError(dtypes.COMPLEX32)
    seen()
    ctype = np.complex128 if a.dtype == np.float64 else np.complex64
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = np.empty(shape, ctype)
    out.real, out.imag = a, b
    return apply(COMPLEX, out, (real, imag))


@autocast_policy("fp32")
def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """torch.polar(abs, angle): abs * (cos(angle) + i sin(angle))."""
    a, t = abs._a, angle._a
    if a.dtype.kind != "f" or a.dtype != t.dtype:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_SCALAR_NAMES.get(a.dtype.name, a.dtype.name)} and "
                           f"{_SCALAR_NAMES.get(t.dtype.name, t.dtype.name)}")
    seen()
    ctype = np.complex128 if a.dtype == np.float64 else np.complex64
    shape = np.broadcast_shapes(a.shape, t.shape)
    out = np.empty(shape, ctype)
    out.real, out.imag = a * np.cos(t), a * np.sin(t)
    return apply(POLAR, out, (abs, angle))


def product(x, y) -> np.ndarray:
    """x * y as PyTorch's CPU kernel multiplies complex numbers: (ac - bd) + (ad + bc)i. Its vector body rounds
    the four products and two sums each; the scalar tail, compiled with contracted multiply-adds, rounds
    fma(a, c, -bd) and fma(a, d, bc) (complex64: GCC vectorises the tail by pairs, so an odd last element is
    the plain formula's again). Measured on the oracle for every tail length of contiguous operands of one
    shape; other layouts (broadcasting, strides) take the plain formula, which PyTorch's differs from in some
    elements there (docs/numerics.md, Complex tensors). numpy's own complex multiply differs from PyTorch's in
    the last bits of 47% of complex64 products."""
    x, y = np.asarray(x), np.asarray(y)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.result_type(x, y))
    out.real = a * c - b * d
    out.imag = a * d + b * c
    if x.shape == y.shape and out.size and x.flags.c_contiguous and y.flags.c_contiguous:
        _fused_tails(out, a, b, c, d)
    return out


def _fused_tails(out: np.ndarray, a, b, c, d) -> None:
    """The scalar tails' elements of `product`, rounded with fused multiply-adds."""
    from gradcli.engine.fma import fma, vector_body
    flat = out.reshape(-1)
    a, b, c, d = (p.reshape(-1) for p in (a, b, c, d))
    pairs = out.dtype.itemsize == 8         # complex64: two to a 16-byte vector
    for _, tail, end in vector_body(flat.size, out.dtype):
        stop = end - (end - tail) % 2 if pairs else end
        if stop > tail:
            s = slice(tail, stop)
            flat.real[s] = fma(a[s], c[s], -(b[s] * d[s]))
            flat.imag[s] = fma(a[s], d[s], b[s] * c[s])


def mul(a, b, x, y) -> Tensor:
    """a * b with the operands x, y in the complex result dtype (recording.operands)."""
    return apply(MUL, product(x, y), (a, b), (), (x, y if b.__class__ is Tensor else b))


def div(a, b, x, y) -> Tensor:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _divide(x, y)
    return apply(DIV, out, (a, b), (), (x, y if b.__class__ is Tensor else b))


def _divide(x, y):
    """PyTorch's complex division (c10::complex's operator/, Smith's scaled algorithm): a zero divisor gives
    inf/nan parts the way C++ does, where numpy's would give nan."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    out = np.asarray(x / y)
    zero = y == 0
    if zero.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            out.real[zero] = x.real[zero] / np.abs(y.real[zero])
            out.imag[zero] = x.imag[zero] / np.abs(y.real[zero])
    return out


def reciprocal(z: Tensor) -> Tensor:
    with np.errstate(divide="ignore", invalid="ignore"):
        return apply(RECIPROCAL, _divide(np.ones((), z._a.dtype), z._a), (z,))


def exp(z: Tensor) -> Tensor:
    return apply(EXP, np.exp(z._a), (z,))


def log(z: Tensor) -> Tensor:
    with np.errstate(divide="ignore", invalid="ignore"):
        return apply(LOG, np.log(z._a), (z,))


def sqrt(z: Tensor) -> Tensor:
    return apply(SQRT, np.sqrt(z._a), (z,))


def pow_(z: Tensor, exponent) -> Tensor:
    if exponent.__class__ not in (int, float, bool):
        raise NotImplementedError("gradcli does not implement complex tensors in torch.pow with a tensor or "
                                  "complex exponent")
    a = z._a
    return apply(POW, _power(a, exponent).astype(a.dtype), (z,), (exponent,))


def mm(a: Tensor, b: Tensor) -> Tensor:
    x, y = a._a, b._a
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
        raise NotImplementedError("gradcli does not implement complex tensors in torch.matmul beyond "
                                  "(n, k) @ (k, m) matrices and 1-d dot products")
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_dt(x)} != {_dt(y)}")
    return apply(MM, x @ y, (a, b))


def _dt(a) -> str:
    return {"float32": "float", "float64": "double", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}.get(a.dtype.name, a.dtype.name)


def _vectors(a: Tensor, b: Tensor) -> tuple:
    """dot's and vdot's checks, in PyTorch's words (vdot's mismatch message names dot too, as PyTorch's does)."""
    from gradcli.engine.ops.linalg import vector_checks
    x, y = a._a, b._a
    vector_checks(x, y, "dot")
    return x, y


def dot(a: Tensor, b: Tensor) -> Tensor:
    x, y = _vectors(a, b)
    return apply(DOT, np.asarray(np.dot(x, y)), (a, b))


def vdot(a: Tensor, b: Tensor) -> Tensor:
    x, y = _vectors(a, b)
    return apply(VDOT, np.asarray(np.vdot(x, y)), (a, b))


def matmul(a: Tensor, b: Tensor) -> Tensor:
    if a._a.ndim == 1 and b._a.ndim == 1:
        return dot(a, b)
    return mm(a, b)


# torch's functions of these names (gradcli.language.stdlib reads them at their first call)
complex_function, polar_function = complex_, polar
view_as_real_function, view_as_complex_function = view_as_real, view_as_complex

IMPLEMENTED.update({
    "conj": conj, "conj_physical": conj_physical, "resolve_conj": resolve_conj, "is_conj": is_conj,
    "abs": abs_, "absolute": abs_, "reciprocal": reciprocal, "angle": angle, "exp": exp, "log": log, "sqrt": sqrt, "pow": pow_,
    "mm": mm, "matmul": matmul, "dot": dot, "vdot": vdot, "view_as_real": view_as_real, "real": real, "imag": imag,
})
