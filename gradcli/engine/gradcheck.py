"""torch.autograd.gradcheck and gradgradcheck: analytical against numerical Jacobians, with PyTorch's
tolerances and messages.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import closeness, autograd, rng
from gradcli.engine.custom import FunctionNode
from gradcli.engine.backward import differentiate, differentiate_undefined
from gradcli.engine.tensor import Tensor

# ------------------------------------------------------------------------------------------ gradcheck

class GradcheckError(RuntimeError):
    """torch.autograd.gradcheck.GradcheckError."""


# Python prints an exception raised from a module other than builtins with its module path, and so
# does gradcli's error report, which names exceptions by __name__.
GradcheckError.__name__ = GradcheckError.__qualname__ = "torch.autograd.gradcheck.GradcheckError"


def _tuple_of(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable(outputs) -> tuple:
    return tuple(o for o in _tuple_of(outputs) if o.requires_grad)


def _diff_inputs(inputs) -> list:
    return [t for t in inputs if t.__class__ is Tensor and t.requires_grad]


def _check_inputs(inputs):
    found = False
    for idx, inp in enumerate(inputs):
        if inp.__class__ is Tensor and inp.requires_grad:
            a = inp._a
            if not all(st > 0 or sz <= 1 for st, sz in zip(a.strides, a.shape)):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                                   "inputs that are non-overlapping to be able to compute the numerical "
                                   "gradients correctly. You should call .contiguous on the input before "
                                   "passing it to gradcheck.")
            found = True
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them "
                         "have requires_grad=True.")


def _numerical_jacobian(func, inputs, outputs, eps) -> list:
    """jac[k][i]: d output i / d input k (the k-th input requiring grad), as an (input numel, output
    numel) array in the output's dtype, by central differences perturbing one element at a time."""
    float_outputs = [o for o in outputs if o._a.dtype.kind in "fV"]
    result = []
    for x in _diff_inputs(inputs):
        a = x._a
        jacs = [np.zeros((a.size, o._a.size), dtype=o._a.dtype) for o in float_outputs]
        for d_idx, idx in enumerate(np.ndindex(a.shape)):
            orig = a[idx].copy()
            a[idx] = orig - eps
            out_a = [o._a.copy() for o in _tuple_of(func(*inputs))]
            a[idx] = orig + eps
            out_b = [o._a.copy() for o in _tuple_of(func(*inputs))]
            a[idx] = orig
            if any(o.dtype == np.bool_ for o in out_b):     # PyTorch subtracts every output, a bool one too
                raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                                   "`^` or `logical_xor()` operator instead.")
            cols = [((ob - oa) / (2 * eps)).reshape(-1) for oa, ob in zip(out_a, out_b) if ob.dtype.kind in "fV"]
            for jac, col in zip(jacs, cols):
                jac[d_idx] = col
        result.append(jacs)
    return result


def _analytical_jacobian(inputs, output) -> list:
    """One (input numel, output numel) array per input requiring grad: a vector-Jacobian product per
    output element (computed twice, as PyTorch does to check that backward is reentrant)."""
    diff = _diff_inputs(inputs)
    n = output._a.size
    runs = []
    for _ in range(2):
        jacs = [np.zeros((t._a.size, n), dtype=t._a.dtype) for t in diff]
        for j in range(n):
            onehot = np.zeros(n, dtype=output._a.dtype)
            onehot[j] = 1
            grads = differentiate(output, diff, Tensor(onehot.reshape(output._a.shape)), retain_graph=True,
                         allow_unused=True)
            for jac, g, t in zip(jacs, grads, diff):
                if g is not None:
                    if g._a.shape != t._a.shape:
                        raise GradcheckError("Analytical gradient has incorrect size")
                    jac[:, j] = g._a.reshape(-1)
        runs.append(jacs)
    return runs[0]


def _allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """torch.allclose of a Jacobian pair, with its checks of the tolerances (PyTorch's gradcheck meets
    them at its first comparison, even with raise_exception=False)."""
    closeness.check_tolerances(rtol, atol)
    dt = np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dt), b.astype(dt)
    with np.errstate(all="ignore"):
        allowed = atol + np.abs(rtol * b)
        actual = np.abs(a - b)
        close = (a == b) | (np.isfinite(actual) & (actual <= allowed))
    return bool(close.all())


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol):
    if not outputs:
        for jacs in _numerical_jacobian(func, inputs, _tuple_of(func_out), eps):
            for jac in jacs:
                if np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    numerical_by_input = _numerical_jacobian(func, inputs, _tuple_of(func_out), eps)
    numerical = [list(col) for col in zip(*numerical_by_input)]
    numerical = [nj for o, nj in zip(_tuple_of(func_out), numerical) if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                                     f"numerical:{Tensor(n)!r}\nanalytical:{Tensor(a)!r}\n")


def _backward_mul_by_grad_output(outputs, inputs):
    diff = _diff_inputs(inputs)
    grads = differentiate(outputs, diff, [Tensor(np.zeros_like(o._a)) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        if np.count_nonzero(gi._a):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi._a.dtype != di._a.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi._a.shape != di._a.shape:
            raise GradcheckError("grad is incorrect size")


def _undefined_backward(func, outputs, inputs):
    """PyTorch's check that backward copes with undefined output gradients: the function is run again
    (once, and once more per output when it has several), then each set of outputs is differentiated
    with undefined gradients. Built-in nodes can only pass such gradients on, so only the calls are made;
    a custom Function's backward receives them (as zeros, or None after set_materialize_grads(False))
    and must return zeros or None."""
    sets = [_differentiable(func(*inputs))]
    if len(sets[0]) > 1:
        for _ in range(len(outputs)):
            sets.append(_differentiable(func(*inputs)))
    diff = _diff_inputs(inputs)
    for outs in sets:
        roots = [o.grad_fn for o in outs if o.grad_fn is not None]
        if not any(isinstance(n, FunctionNode) for n in autograd.reachable(roots)):
            continue
        grads = differentiate_undefined(outs, diff)
        if any(gi is not None and np.count_nonzero(gi._a) for gi in grads):
            raise GradcheckError(_UNDEFINED_MESSAGE)


_UNDEFINED_MESSAGE = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by default, but it "
    "may break existing callers of this function. If this is true for you, you can call this function with "
    "\"check_undefined_grad=False\" to disable the feature")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """torch.autograd.gradcheck in its slow (full Jacobian) mode: True, or GradcheckError."""
    try:
        inputs = _tuple_of(inputs)
        _check_inputs(inputs)
        func_out = func(*inputs)
        outputs = _differentiable(func_out)
        if check_backward_ad:
            _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol)
            _backward_mul_by_grad_output(outputs, inputs)
            if check_undefined_grad:
                _undefined_backward(func, outputs, inputs)
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the function's gradient (taken with create_graph=True) with respect to both the
    inputs and the grad_outputs; missing grad_outputs are uniform in [-1, 1) from the global stream,
    as torch.testing.make_tensor draws them."""
    inputs = _tuple_of(inputs)
    if grad_outputs is None:
        outputs = _differentiable(func(*inputs))
        grad_outs = []
        for x in outputs:
            dt = x._a.dtype if x._a.dtype.kind in "fV" else np.dtype(np.float64)
            g = Tensor(rng.default_generator.uniform(x._a.shape, dt, -1.0, 1.0))
            g.requires_grad = True
            grad_outs.append(g)
        grad_outs = tuple(grad_outs)
    else:
        grad_outs = _tuple_of(grad_outputs)
    num_outputs = len(grad_outs)
    diff_in = {i for i, x in enumerate(inputs) if x.__class__ is Tensor and x.requires_grad}
    diff_out = {i for i, x in enumerate(grad_outs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_in else x for i, x in enumerate(args[:-num_outputs]))
        outs = _differentiable(func(*input_args))
        g_outs = tuple(x.requires_grad_() if i in diff_out else x for i, x in enumerate(args[-num_outputs:]))
        diff_args = tuple(x for i, x in enumerate(input_args) if i in diff_in)
        grads = differentiate(outs, diff_args, g_outs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_undefined_grad=check_undefined_grad)
