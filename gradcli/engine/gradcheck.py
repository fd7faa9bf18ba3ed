"""torch.autograd.gradcheck and gradgradcheck: analytical against numerical Jacobians, with PyTorch's
tolerances and messages.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import closeness, autograd, rng
from gradcli.engine.custom import FunctionNode
from gradcli.engine.backward import differentiate, differentiate_undefined
from gradcli.engine.state import STATE
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
            if a.dtype != np.float64 and a.dtype != np.complex128:
                # a Python warning from one line of PyTorch's gradcheck: shown once per message
                message = (f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                           "This check will likely fail if all the inputs are not of double precision floating point "
                           "or complex. ")
                STATE.warn_python("UserWarning", message)
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


def _analytical_jacobian(inputs, output, nondet_tol: float, v=None) -> list:
    """One (input numel, output numel) array per input requiring grad: a vector-Jacobian product per
    output element, computed twice, as PyTorch does: the two must agree within `nondet_tol` (backward is
    "reentrant"), else PyTorch's GradcheckError."""
    diff = _diff_inputs(inputs)
    n = output._a.size if v is None else 1      # fast mode: one row, the product with v
    STATE.gradient_given()              # (PyTorch's vector-Jacobian products give their gradients as tensors)
    runs = []
    for _ in range(2):
        jacs = [np.zeros((t._a.size, n), dtype=t._a.dtype) for t in diff]
        for j in range(n):
            if v is None:
                row = np.zeros(output._a.size, dtype=output._a.dtype)
                row[j] = 1
            else:
                row = v
            grads = differentiate(output, diff, Tensor(row.reshape(output._a.shape)), retain_graph=True,
                         allow_unused=True)
            for jac, g, t in zip(jacs, grads, diff):
                if g is not None:
                    if g._a.shape != t._a.shape:
                        raise GradcheckError("Analytical gradient has incorrect size")
                    jac[:, j] = g._a.reshape(-1)
        runs.append(jacs)
    for first, second in zip(*runs):
        if first.size:
            with np.errstate(all="ignore"):
                if np.abs(first - second).max() > nondet_tol:     # NaN compares False, as in PyTorch
                    raise GradcheckError(_not_reentrant(nondet_tol))
    return runs[0]


def _not_reentrant(nondet_tol: float) -> str:
    return ("Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
            "gives different values, although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + _FAILED_NONDET)


def _workaround(keyword: str, opinfo: str) -> str:
    """The paragraph PyTorch's gradcheck messages share, telling how a test can turn a check off."""
    return ("If you are adding a new operator, please file an issue and then use one of the\n"
            "workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.\n"
            "If the test\n"
            "- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck\n"
            f"  with `{keyword}` as a keyword argument.\n"
            "- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test\n"
            f"  to have `{opinfo}")


_FAILED_NONDET = ("\n\nNOTE: If your op relies on non-deterministic operations i.e., it is listed here:\n"
                  "https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html\n"
                  "this failure might be expected.\n\n"
                  + _workaround("nondet_tol=<tol>", "gradcheck_nondet_tol=<tol>`.") + "\n"
                  "- is a Module test (e.g., in common_nn.py), then modify the corresponding\n"
                  "  module_test entry to have `gradcheck_nondet_tol=<tol>`\n")


def _forward_jacobian(func, inputs, func_out, all_u=None) -> list:
    """jac[k][i]: forward mode's Jacobian of float output i with respect to the k-th input requiring grad,
    an (input numel, output numel) array in the output's dtype, one tangent column at a time (PyTorch's
    _get_analytical_jacobian_forward_ad): every input requiring grad is a dual tensor with a zero tangent,
    and one element of one tangent at a time is 1."""
    from gradcli.engine import forward
    float_outs = [o for o in _tuple_of(func_out) if o.__class__ is Tensor and o._a.dtype.kind in "fcV"]
    positions = [k for k, t in enumerate(inputs) if t.__class__ is Tensor and t.requires_grad]
    rows = [1 if all_u else inputs[k]._a.size for k in positions]      # fast mode: one column, J u
    jacs = [[np.zeros((r, o._a.size), dtype=o._a.dtype) for o in float_outs] for r in rows]
    forward.enter_dual_level()
    try:
        duals = list(inputs)
        tangents = []
        for k in positions:
            duals[k] = forward.make_dual(inputs[k].detach(), Tensor(np.zeros_like(inputs[k]._a)))
            tangents.append(forward.unpack_dual(duals[k])[1]._a)
        for n, (jac, tangent) in enumerate(zip(jacs, tangents)):
            if all_u:
                settings = [(0, ..., all_u[n].reshape(tangent.shape))]
            else:
                settings = [(col, idx, 1) for col, idx in enumerate(np.ndindex(tangent.shape))]
            for col, idx, value in settings:
                tangent[idx] = value
                outs = [o for o in _tuple_of(func(*duals)) if o.__class__ is Tensor and o._a.dtype.kind in "fcV"]
                for out_jac, o in zip(jac, outs):
                    res = forward.unpack_dual(o)[1]
                    out_jac[col] = 0 if res is None else res._a.reshape(-1)
                tangent[idx] = 0
    finally:
        forward.exit_dual_level()
    return jacs


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


def _part_of_outputs(func, part: str):
    """func with the real or imaginary part of each complex output in its place."""
    def wrapped(*args):
        return tuple(getattr(o, part) if o.__class__ is Tensor and o._a.dtype.kind == "c" else o
                     for o in _tuple_of(func(*args)))
    return wrapped


def _prefix(complex_outputs, i: int) -> str:
    """PyTorch's words before a mismatch of output i when the check is of one part of complex outputs."""
    if complex_outputs is None or i not in complex_outputs[1]:
        return ""
    part = "imaginary" if complex_outputs[0] == "imag" else "real"
    return f"While considering the {part} part of complex outputs only, "


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, nondet_tol, forward_ad=False,
                    complex_outputs=None):
    if not outputs:
        for jacs in _numerical_jacobian(func, inputs, _tuple_of(func_out), eps):
            for jac in jacs:
                if np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    numerical_by_input = _numerical_jacobian(func, inputs, _tuple_of(func_out), eps)
    numerical = [list(col) for col in zip(*numerical_by_input)]
    numerical = [nj for o, nj in zip(_tuple_of(func_out), numerical) if o.requires_grad]
    if forward_ad:
        analytical_forward = _forward_jacobian(func, inputs, func_out)
        for i, per_input in enumerate(numerical):
            for j, n in enumerate(per_input):
                a = analytical_forward[j][i]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_mismatch(a, n, i, j, "computed with forward mode "))
        return
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o, nondet_tol)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_prefix(complex_outputs, i) + _mismatch(a, n, i, j))


def _mismatch(a, n, i: int, j: int, mode: str = "") -> str:
    # f-string formatting, as PyTorch's message: a 0-d tensor (fast mode's products) shows as its number
    a, n = (Tensor(np.asarray(x._a if x.__class__ is Tensor else x)) for x in (a, n))
    return f"Jacobian {mode}mismatch for output {i:d} with respect to input {j:d},\nnumerical:{n}\nanalytical:{a}\n"


def _undefined_forward(func, inputs):
    """PyTorch's check that forward mode treats a zero tangent and no tangent alike: with every input
    requiring grad dual (tangents from _fast_vectors), each such input in turn is given a zero tangent,
    then none, and the outputs' tangents must be allclose."""
    from gradcli.engine import forward
    positions = [k for k, t in enumerate(inputs) if t.__class__ is Tensor and t.requires_grad]
    vectors = _fast_vectors([inputs[k] for k in positions])
    forward.enter_dual_level()
    try:
        duals = list(inputs)
        for k, u in zip(positions, vectors):
            duals[k] = forward.make_dual(inputs[k].detach(), Tensor(np.zeros_like(inputs[k]._a)))
            forward.unpack_dual(duals[k])[1]._a[...] = u.reshape(inputs[k]._a.shape)
        for k in positions:
            kept = duals[k]
            duals[k] = forward.make_dual(inputs[k].detach(), Tensor(np.zeros_like(inputs[k]._a)))
            first = [o for o in _tuple_of(func(*duals)) if o.__class__ is Tensor and o._a.dtype.kind in "fcV"]
            duals[k] = inputs[k].detach()
            second = [o for o in _tuple_of(func(*duals)) if o.__class__ is Tensor and o._a.dtype.kind in "fcV"]
            duals[k] = kept
            for index, (o1, o2) in enumerate(zip(first, second)):
                r1, r2 = forward.unpack_dual(o1)[1], forward.unpack_dual(o2)[1]
                if r1 is not None and r2 is not None and not closeness.allclose(r1, r2):
                    raise GradcheckError("Mismatch in tangent values for output with index: ", index,
                                         " when input: ", inputs[k], " has an undefined tangent value. ",
                                         " Got: ", r1, " but expected: ", r2)
    finally:
        forward.exit_dual_level()


def _fast_vectors(tensors) -> list:
    """PyTorch's fast-mode vectors: from a new Generator (its default seed, so the script's stream is
    untouched), float32 uniforms for each tensor in turn, in that tensor's dtype, divided by their norm:
    flat float arrays."""
    generator = rng.Generator()
    vectors = []
    for t in tensors:
        v = Tensor(generator.rand((t._a.size,), np.float32).astype(t._a.dtype))
        vectors.append((v / v.norm())._a)
    return vectors


def _fast_numerical(func, inputs, positions, func_out, all_u, all_v, eps) -> list:
    """Fast mode's numerical side: per input requiring grad, the outputs' central differences along u
    (scaled by eps), each dotted with its output's v (backward mode) or kept whole (forward mode)."""
    reduced = []
    for k, u in zip(positions, all_u):
        a = inputs[k]._a
        delta = eps * u.reshape(a.shape)
        orig = a.copy()
        a[...] = orig - delta
        out_a = [o._a.copy() for o in _tuple_of(func(*inputs))]
        a[...] = orig + delta
        out_b = [o._a.copy() for o in _tuple_of(func(*inputs))]
        a[...] = orig
        ju = []
        for oa, ob, o in zip(out_a, out_b, _tuple_of(func_out)):
            if ob.dtype == np.bool_:
                raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                                   "`^` or `logical_xor()` operator instead.")
            if ob.dtype.kind in "fV":
                ju.append(Tensor(((Tensor(ob) - Tensor(oa)) / (2 * eps))._a.reshape(-1)))
        if all_v is None:
            reduced.append(ju)
        else:
            reduced.append([(Tensor(v) * j).sum() for v, j in zip(all_v, ju)])
    return reduced


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, nondet_tol, forward_ad=False,
                    complex_outputs=None):
    """PyTorch's fast mode: the Jacobian projected on random vectors, v^T J u (backward mode) or J u
    (forward mode), numerically and analytically; on a mismatch the slow mode's Jacobians of that pair
    are computed for the message."""
    positions = [k for k, t in enumerate(inputs) if t.__class__ is Tensor and t.requires_grad]
    vectors = _fast_vectors([inputs[k] for k in positions] + ([] if forward_ad else list(outputs)))
    all_u = vectors[:len(positions)]
    all_v = None if forward_ad else vectors[len(positions):]
    numerical = _fast_numerical(func, inputs, positions, func_out, all_u, all_v, eps)
    if forward_ad:
        analytical = _forward_jacobian(func, inputs, func_out, all_u)
    else:
        if not outputs:
            for k, u in zip(positions, all_u):
                for jvp in _fast_numerical(func, inputs, [k], func_out, [u], None, eps)[0]:
                    if jvp._a.size and np.abs(jvp._a).max() > nondet_tol:
                        raise GradcheckError("Numerical gradient for function expected to be zero")
        analytical = []
        for output, v in zip(outputs, all_v):
            vjs = _analytical_jacobian(inputs, output, nondet_tol, v)
            analytical.append([Tensor(vj[:, 0]).dot(Tensor(u)) for vj, u in zip(vjs, all_u)])
    for i, per_input in enumerate(numerical):
        for j, n in enumerate(per_input):
            a = analytical[i][j] if forward_ad else analytical[j][i]
            if forward_ad:
                a = Tensor(a[0])
            scale = float(Tensor(all_u[i]).sum()) * (float(Tensor(all_v[j]).sum()) if all_v else 1.0)
            if not _allclose(a._a, n._a, rtol, atol * scale):
                raise GradcheckError(_prefix(complex_outputs, j)
                                     + _mismatch(a, n, j, i, "computed with forward mode " if forward_ad else "")
                                     + _slow_details(func, inputs, outputs, i, j, rtol, atol, eps, forward_ad))


_FAST_FAIL_SLOW_OK = """Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`"""


def _slow_details(func, inputs, outputs, input_idx, output_idx, rtol, atol, eps, forward_ad) -> str:
    """The slow mode's Jacobians of one input and output, as fast mode's failure prints them."""
    numerical = Tensor(_numerical_jacobian(func, inputs, outputs, eps)[input_idx][output_idx])
    if forward_ad:
        def one_input(x):
            args = list(inputs)
            args[input_idx] = x             # (PyTorch counts this index among the inputs requiring grad)
            return _tuple_of(func(*args))[output_idx]
        analytical = Tensor(_forward_jacobian(one_input, (inputs[input_idx],), (outputs[output_idx],))[0][0])
    else:
        analytical = Tensor(_analytical_jacobian(inputs, outputs[output_idx], float("inf"))[input_idx])
    max_diff = (numerical - analytical).abs().max()
    text = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
            "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
            "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
            f"Numerical:\n {numerical}\nAnalytical:\n{analytical}\n\n"
            f"The max per-element difference (slow mode) is: {Tensor(np.asarray(max_diff._a))}.\n")
    if closeness.allclose(analytical, numerical, rtol, atol):
        text += _FAST_FAIL_SLOW_OK
    return text


_BATCHED_HELP = ("gradcheck or gradgradcheck failed while testing batched gradient computation.\n"
                 "This could have been invoked in a number of ways (via a test that calls\n"
                 "gradcheck/gradgradcheck directly or via an autogenerated test).\n\n"
                 + _workaround("check_batched_grad=False",
                               "check_batched_grad=False` and/or `check_batched_gradgrad=False`.") + "\n\n"
                 "If you're modifying an existing operator that supports batched grad computation,\n"
                 "or wish to make a new operator work with batched grad computation, please read\n"
                 "the following.\n\n"
                 "To compute batched grads (e.g., jacobians, hessians), we vmap over the backward\n"
                 "computation. The most common failure case is if there is a 'vmap-incompatible\n"
                 "operation' in the backward pass. Please see\n"
                 "NOTE: [How to write vmap-compatible backward formulas]\n"
                 "in the codebase for an explanation of how to fix this.")

_BATCHED_FORWARD_HELP = ("\ngradcheck failed while testing batched gradient computation with forward-mode AD.\n"
                         "This test is enabled automatically when both `check_batched_grad=True`\n"
                         "and `check_forward_ad=True`, but can be disabled in the following ways\n"
                         "dependong on how the test was invoked (via a test that calls gradcheck\n"
                         "directly or via an autogenerated test).\n\n"
                         + _workaround("check_batched_forward_grad=False", "check_batched_forward_grad=False`")
                         + "\n")


def _batched_failure(output_idx: int, input_idx: int, res, exp, forward_ad: bool = False) -> str:
    help_text = _BATCHED_FORWARD_HELP if forward_ad else _BATCHED_HELP
    return f"For output {output_idx} and input {input_idx}:\n\n{help_text}\n\nGot:\n{res}\n\nExpected:\n{exp}".strip()


def _compare_batched(result, expected, output_idx, forward_ad=False):
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        if not closeness.allclose(res, exp):
            raise GradcheckError(_batched_failure(input_idx if forward_ad else output_idx, input_idx, res, exp,
                                                  forward_ad))


def _batched_grad(inputs, output, output_idx: int):
    """check_batched_grad: two vector-Jacobian products with randn_like grad_outputs (from the script's
    stream, as in PyTorch), against the same two computed at once under vmap."""
    diff = _diff_inputs(inputs)

    def vjp(v):
        grads = differentiate(output, diff, v, retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else Tensor(np.broadcast_to(np.zeros((), t._a.dtype), t._a.shape))
                     for g, t in zip(grads, diff))

    _batched_against_looped(vjp, output, output_idx, False)


def _batched_against_looped(fn, like: Tensor, index: int, forward_ad: bool):
    """fn of two randn_like(like) vectors (from the script's stream, as in PyTorch), one at a time and at
    once under the older vmap; a failure of the vmap, or results that are not allclose, is the error."""
    from gradcli.engine import factories, functorch
    from gradcli.engine.ops.shape import stack
    vectors = [factories.randn_like(like) for _ in range(2)]
    expected = [stack(list(shards)) for shards in zip(*[fn(v) for v in vectors])]
    try:
        result = functorch.legacy_vmap(fn)(stack(vectors))
    except RuntimeError as ex:
        help_text = _BATCHED_FORWARD_HELP if forward_ad else _BATCHED_HELP
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{help_text}") from ex
    _compare_batched(result, expected, index, forward_ad)


def _batched_forward_grad(func, inputs):
    """check_batched_forward_grad: for each input requiring grad, two jvps with randn_like tangents
    against the same two at once under vmap."""
    from gradcli.engine import forward
    for input_idx, current in enumerate(inputs):
        if not (current.__class__ is Tensor and current.requires_grad):
            continue

        def jvp(tangent, input_idx=input_idx, current=current):
            forward.enter_dual_level()
            try:
                dual = forward.make_dual(current.detach(), tangent)
                args = tuple(dual if k == input_idx else (t.detach() if t.__class__ is Tensor else t)
                             for k, t in enumerate(inputs))
                found = []
                for o in _tuple_of(func(*args)):
                    if o is None:
                        continue
                    primal, tangent_out = forward.unpack_dual(o)
                    found.append(tangent_out if tangent_out is not None else
                                 Tensor(np.broadcast_to(np.zeros((), primal._a.dtype), primal._a.shape)))
                return tuple(found)
            finally:
                forward.exit_dual_level()

        if current._a.dtype.kind in "fcV":
            _batched_against_looped(jvp, current, input_idx, True)


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
    """torch.autograd.gradcheck: True, or GradcheckError (False with raise_exception=False), running
    PyTorch's checks in its order: backward mode's Jacobians (full, or in fast mode one random
    projection), forward mode's with check_forward_ad, the batched checks under vmap, backward
    multiplied by grad_output, undefined gradients. check_grad_dtypes and masked change nothing gradcli
    can reach: its engine gives every gradient its input's dtype, and its sparse inputs are dense here."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        inputs = _tuple_of(inputs)
        _check_inputs(inputs)
        func_out = func(*inputs)
        outputs = _differentiable(func_out)
        check = _fast_gradcheck if fast_mode else _slow_gradcheck
        if check_backward_ad:
            complex_outputs = [i for i, o in enumerate(outputs) if o._a.dtype.kind == "c"]
            if any(o.__class__ is Tensor and o._a.dtype.kind == "c" for o in _tuple_of(func_out)):
                # PyTorch checks the imaginary parts of complex outputs, then the real parts
                for part in ("imag", "real"):
                    part_func = _part_of_outputs(func, part)
                    part_out = part_func(*inputs)
                    check(part_func, part_out, inputs, _differentiable(part_out), eps, rtol, atol, nondet_tol,
                          complex_outputs=(part, complex_outputs))
            else:
                check(func, func_out, inputs, outputs, eps, rtol, atol, nondet_tol)
        if check_forward_ad:
            check(func, func_out, inputs, outputs, eps, rtol, atol, nondet_tol, forward_ad=True)
            if check_undefined_grad:
                _undefined_forward(func, inputs)
        if check_batched_forward_grad:
            _batched_forward_grad(func, inputs)
        if not check_backward_ad:
            return True
        if check_batched_grad:
            for i, o in enumerate(outputs):
                _batched_grad(inputs, o, i)
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
    as torch.testing.make_tensor draws them (with gen_non_contig_grad_outputs, every other element of
    a tensor twice as wide in its last dim, from the second). check_fwd_over_rev is gradcheck's
    check_forward_ad of that function, check_rev_over_rev its check_backward_ad."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _tuple_of(inputs)
    if grad_outputs is None:
        outputs = _differentiable(func(*inputs))
        grad_outs = []
        for x in outputs:
            dt = x._a.dtype if x._a.dtype.kind in "fcV" else np.dtype(np.float64)
            if gen_non_contig_grad_outputs and x._a.size > 1:     # twice as wide, every other element from the 2nd
                a = rng.default_generator.uniform(x._a.shape[:-1] + (2 * x._a.shape[-1],), dt, -1.0, 1.0)[..., 1::2]
            else:
                a = rng.default_generator.uniform(x._a.shape, dt, -1.0, 1.0)
            g = Tensor(a)
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

    return gradcheck(new_func, inputs + grad_outs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)
