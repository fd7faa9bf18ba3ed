"""Householder reflectors: torch.geqrf (a QR factorisation as LAPACK stores it: R above the diagonal, the reflectors'
vectors below it, their scales tau) and linalg.householder_product / torch.orgqr (the product of the reflectors,
Q's first n columns)."""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, forward
from gradcli.engine.ops import elementwise, linalg as la
from gradcli.engine.recording import autocast_policy, Op, apply, tensor_arg, type_word
from gradcli.engine.tensor import Tensor


# ------------------------------------------------------------------------------------------ the derivative
# Q = H_1 ... H_k E (E: the first n columns of the identity), H_i = I - tau_i v_i v_i^H with v_i the i-th column of
# the input below the diagonal and 1 on it. With G_i = (H_1 ... H_i-1)^H (gQ E^H) (H_i+1 ... H_k)^H, the gradient
# reaching H_i: tau_i's is -v_i^H G_i v_i, v_i's -tau_i (G_i + G_i^H) v_i (its entries below the diagonal). The same
# terms as PyTorch's householder_product_backward, which sweeps the reflectors with their inverses instead of
# forming the partial products; values agree to rounding.

def _const(F, x: np.ndarray, batch: tuple = ()):
    """A constant matrix, over the batch in a plain backward (whose products do not broadcast)."""
    return Tensor(x) if F.tensors else np.broadcast_to(x, batch + x.shape)


def _dims(x) -> tuple:
    return x._a.shape if x.__class__ is Tensor else x.shape


def _reflectors(F, input, tau):
    """The vectors v_i (m x 1 each) and scales tau_i (1 x 1 each, batched) of the first k reflectors."""
    shape = _dims(input)
    m, n, k = shape[-2], shape[-1], _dims(tau)[-1]
    nd = len(shape)
    V = F.tril(input, -1) + _const(F, np.eye(m, n, dtype=_dtype(input)), shape[:-2])
    vs = [F.narrow(V, nd - 1, i, 1) for i in range(k)]
    taus = [F.unsqueeze_dims(F.narrow(tau, nd - 2, i, 1), (nd - 2,)) for i in range(k)]
    return vs, taus


def _dtype(x):
    return x._a.dtype if x.__class__ is Tensor else x.dtype


def _reflector(F, v, t, eye):
    return eye - t * F.matmul(v, F.mT(v))


def _partials(F, vs, taus, eye):
    """The products H_1 ... H_i-1 (before) and H_i+1 ... H_k (after) of each reflector."""
    H = [_reflector(F, v, t, eye) for v, t in zip(vs, taus)]
    before, after = [eye], [eye]
    for h in H[:-1]:
        before.append(F.matmul(before[-1], h))
    for h in reversed(H[1:]):
        after.append(F.matmul(h, after[-1]))
    return before, after[::-1]


def _householder_grads(F, g, input, tau, result):
    shape = _dims(input)
    m, n = shape[-2:]
    return _reflector_grads(F, lambda M: F.matmul(g, _const(F, np.eye(n, m, dtype=_dtype(input)), shape[:-2])),
                            input, tau)


def _reflector_grads(F, product_grad, input, tau):
    """The gradients of the reflectors' vectors (input, below the diagonal) and scales, given the gradient of their
    full product M = H_1 ... H_k as `product_grad(M)`."""
    shape = _dims(input)
    m, n, k = shape[-2], shape[-1], _dims(tau)[-1]
    if k == 0 or 0 in shape:
        return F.zeros_like(input), F.zeros_like(tau)
    eye = _const(F, np.eye(m, dtype=_dtype(input)), shape[:-2])
    vs, taus = _reflectors(F, input, tau)
    before, after = _partials(F, vs, taus, eye)
    gM = product_grad(F.matmul(before[-1], _reflector(F, vs[-1], taus[-1], eye)))
    gv, gt = [], []
    for i in range(k):
        G = F.matmul(F.matmul(F.mT(before[i]), gM), F.mT(after[i]))
        Gv = F.matmul(G + F.mT(G), vs[i])
        gv.append(-taus[i] * Gv)
        gt.append(-F.matmul(F.mT(vs[i]), F.matmul(G, vs[i])))
    nd = len(shape)
    if k < n:
        gv.append(F.zeros(shape[:-1] + (n - k,), input))
    g_input = F.tril(F.cat(gv, nd - 1), -1)
    g_tau = F.squeeze(F.cat(gt, nd - 1), nd - 2)
    return g_input, g_tau


def _grad_input(F, g, input, tau, result):
    return _householder_grads(F, g, input, tau, result)[0]


def _grad_tau(F, g, input, tau, result):
    return _householder_grads(F, g, input, tau, result)[1]


def _householder_jvp(F, ts, xs, result):
    """householder_product_jvp: dQ = sum_i H_1 ... H_i-1 dH_i H_i+1 ... H_k E, dH_i = -dtau_i v v^H - tau_i (dv v^H
    + v dv^H), a missing tangent as zeros."""
    input, tau = xs
    dinput, dtau = forward.tangent_or_zeros(ts, xs, 0), forward.tangent_or_zeros(ts, xs, 1)
    shape = input._a.shape
    m, n, k = shape[-2], shape[-1], tau._a.shape[-1]
    if k == 0 or 0 in shape:
        return Tensor(np.zeros_like(result._a))
    eye = Tensor(np.eye(m, dtype=input._a.dtype))
    vs, taus = _reflectors(F, input, tau)
    dvs = [F.narrow(F.tril(dinput, -1), len(shape) - 1, i, 1) for i in range(k)]
    dtaus = [F.unsqueeze_dims(F.narrow(dtau, len(shape) - 2, i, 1), (len(shape) - 2,)) for i in range(k)]
    before, after = _partials(F, vs, taus, eye)
    total = None
    for i in range(k):
        v, dv = vs[i], dvs[i]
        dH = -(dtaus[i] * F.matmul(v, F.mT(v))) - taus[i] * (F.matmul(dv, F.mT(v)) + F.matmul(v, F.mT(dv)))
        term = F.matmul(F.matmul(before[i], dH), after[i])
        total = term if total is None else total + term
    return F.matmul(total, Tensor(np.eye(m, n, dtype=input._a.dtype)))




def _ormqr_product_grad(F, g, other, left, transpose):
    """The gradient of M for result = op(M) C (left) or C op(M), op a transpose when `transpose`."""
    if left:
        return (lambda M: F.matmul(other, F.mT(g))) if transpose else (lambda M: F.matmul(g, F.mT(other)))
    return (lambda M: F.matmul(F.mT(g), other)) if transpose else (lambda M: F.matmul(F.mT(other), g))


def _ormqr_reflectors(F, g, self, input2, input3, result, left, transpose):
    return _reflector_grads(F, _ormqr_product_grad(F, g, input3, left, transpose), self, input2)


def _ormqr_self(F, g, self, input2, input3, result, left, transpose):
    return _ormqr_reflectors(F, g, self, input2, input3, result, left, transpose)[0]


def _ormqr_tau(F, g, self, input2, input3, result, left, transpose):
    return _ormqr_reflectors(F, g, self, input2, input3, result, left, transpose)[1]


def _ormqr_other(F, g, self, input2, input3, result, left, transpose):
    """ormqr_backward's other_grad: ormqr(self, tau, grad, left, not transpose)."""
    return F.ormqr(self, input2, g, left, not transpose)


# fmt: off
HOUSEHOLDER_PRODUCT = Op("LinalgHouseholderProductBackward0", None, ("input", "tau", "result"),
                         (_grad_input, _grad_tau), inputs=("input", "tau"), quiet=True, jvp=_householder_jvp)
ORMQR               = Op("OrmqrBackward0", None, ("self", "input2", "input3", "result", "left", "transpose"),
                         (_ormqr_self, _ormqr_tau, _ormqr_other), inputs=("self", "input2", "input3"), quiet=True,
                         jvp=forward.no_tangent("ormqr"))
GEQRF               = Op("GeqrfBackward0", None, (), (elementwise.unimplemented("geqrf"),), quiet=True,
                         jvp=forward.no_tangent("geqrf"))
# fmt: on


# ------------------------------------------------------------------------------------------ the forward

def householder_array(V: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Q's first n columns for reflectors stored as V (m x n, vectors below the diagonal) and tau (k), as orgqr
    forms them: the reflectors applied from the last to the first to E, in float64, rounded once."""
    m, n = V.shape[-2:]
    k = tau.shape[-1]
    V64 = np.tril(np.asanyarray(V, np.float64), -1) + np.eye(m, n)
    Q = np.broadcast_to(np.eye(m, n), V.shape).copy()
    for i in range(k - 1, -1, -1):
        v = V64[..., :, i:i + 1]
        Q -= tau[..., i, None, None].astype(np.float64) * np.matmul(v, np.matmul(np.swapaxes(v, -1, -2), Q))
    return Q.astype(V.dtype)


@autocast_policy("fp32")
def householder_product(input: Tensor, tau: Tensor) -> Tensor:
    """torch.linalg.householder_product and torch.orgqr / Tensor.orgqr (LinalgHouseholderProductBackward0)."""
    tensor_arg(input, "linalg_householder_product", "input", 1)
    tensor_arg(tau, "linalg_householder_product", "tau", 2)
    x, t = input._a, tau._a
    fn = "torch.linalg.householder_product"
    if x.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if x.shape[-2] < x.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if x.shape[-1] < (t.shape[-1] if t.ndim else 1):
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if t.ndim != x.ndim - 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{t.ndim} and input.ndim is equal to {x.ndim}")
    if t.shape[:-1] != x.shape[:-2]:
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{la._size_list(t.shape[:-1])}")
    if t.dtype != x.dtype:
        raise RuntimeError(f"{fn}: tau dtype {type_word(t)} does not match input dtype {type_word(x)}")
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{type_word(x)}'")
    budget.check_tensor(x.shape[:-2] + (x.shape[-2],) * 2, 8)
    return apply(HOUSEHOLDER_PRODUCT, la._column_major(householder_array(x, t)), (input, tau))


def ormqr_array(V: np.ndarray, tau: np.ndarray, C: np.ndarray, left: bool, transpose: bool) -> np.ndarray:
    """op(Q) C or C op(Q) for Q = H_1 ... H_k (m x m) from the reflectors, in float64, rounded once."""
    m = V.shape[-2]
    k = tau.shape[-1]
    square = np.zeros(V.shape[:-2] + (m, m), np.float64)
    square[..., :, :k] = V[..., :, :k]
    Q = householder_array(square, np.asanyarray(tau, np.float64))
    op = np.swapaxes(Q, -1, -2) if transpose else Q
    C64 = np.asanyarray(C, np.float64)
    return (np.matmul(op, C64) if left else np.matmul(C64, op)).astype(C.dtype)


@autocast_policy("fp32")
def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left=True, transpose=False) -> Tensor:
    """torch.ormqr and Tensor.ormqr (OrmqrBackward0): op(Q) other or other op(Q), Q the product of the reflectors
    stored in input and input2 (tau), with the checks of PyTorch's kernel in its order."""
    tensor_arg(input, "ormqr", "input", 1)
    tensor_arg(input2, "ormqr", "input2", 2)
    tensor_arg(input3, "ormqr", "input3", 3)
    left, transpose = la._bool_arg(left, "left"), la._bool_arg(transpose, "transpose")
    x, t, c = input._a, input2._a, input3._a
    fn = "torch.ormqr"
    if x.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError(f"{fn}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if c.shape[side] != x.shape[-2]:
        raise RuntimeError(f"{fn}: other.shape[{side}] must be equal to input.shape[-2]")
    if t.ndim and t.shape[-1] != min(c.shape[side], x.shape[-1]):      # (its words say -2 for either side)
        raise RuntimeError(f"{fn}: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])")
    if x.ndim - t.ndim != 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{t.ndim} and input.ndim is equal to {x.ndim}")
    if x.ndim != c.ndim:
        raise RuntimeError(f"{fn}: Expected other to have the same number of dimensions as input, but got other.ndim "
                           f"equal to {c.ndim} and input.ndim is equal to {x.ndim}")
    for name, got in (("tau", t.shape[:-1]), ("other", c.shape[:-2])):
        if got != x.shape[:-2]:
            raise RuntimeError(f"{fn}: Expected batch dimensions of {name} to be equal to input.shape[:-2], but got "
                               f"{la._size_list(got)}")
    for name, other in (("tau", t), ("other", c)):
        if other.dtype != x.dtype:
            raise RuntimeError(f"{fn}: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{type_word(x)} and {name} has dtype {type_word(other)}")
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"ormqr_cpu\" not implemented for '{type_word(x)}'")
    budget.check_tensor(x.shape[:-2] + (x.shape[-2],) * 2, 8)
    out = la._column_major(ormqr_array(x, t, c, left, transpose))
    return apply(ORMQR, out, (input, input2, input3), (left, transpose))


def _ormqr_positional(input, tau, other, left, transpose):
    return ormqr(input, tau, other, left, transpose)


@autocast_policy("fp32")
def geqrf(input: Tensor) -> tuple:
    """torch.geqrf and Tensor.geqrf: torch.return_types.geqrf(a, tau), LAPACK's storage of a QR factorisation
    (numpy's LAPACK in float64, rounded once: the reflectors' signs are LAPACK's convention, as in linalg.qr).
    Its node, GeqrfBackward0, has no derivative in PyTorch."""
    tensor_arg(input, "geqrf", "input", 1)
    x = input._a
    if x.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{type_word(x)}'")
    m, n = x.shape[-2:]
    budget.check_tensor(x.shape, 8)
    count = int(np.prod(x.shape[:-2], dtype=np.int64))
    flat = np.asanyarray(x, np.float64).reshape((count, m, n))
    a = np.empty((count, m, n))
    tau = np.zeros((count, min(m, n)))
    for b in range(count):
        if min(m, n):
            h, t = np.linalg.qr(flat[b], mode="raw")
            a[b], tau[b] = h.T, t
    a = la._column_major(a.reshape(x.shape).astype(x.dtype))
    tau = np.ascontiguousarray(tau.reshape(x.shape[:-2] + (min(m, n),)).astype(x.dtype))
    return la._outputs(GEQRF, "geqrf", (a, tau), input, {}, ())
