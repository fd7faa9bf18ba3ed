"""F.ctc_loss and torch.ctc_loss: the connectionist temporal classification loss, ATen's CPU kernel (LossCTC.cpp)
with its node CtcLossBackward0 (saved log_probs, targets, input_lengths, target_lengths, blank, zero_infinity,
result0 = the per-sequence loss, result1 = log_alpha).

The forward is the log-alpha recursion of Graves et al. in PyTorch's order: for each time step, each state s of
the blank-augmented target takes log(exp(a1 - m) + exp(a2 - m) + exp(a3 - m)) + m + log_probs[t, target'(s)]
(m the largest of the three, 0 when all are -inf); the loss is minus the log-sum of the last two states. The
backward runs the beta recursion from the last step down, s descending, gathering log(alpha * beta) per
character in that order, then (exp(lp) - exp(gathered + nll - lp)) * grad. The wrapper's reduction, the
zero_infinity `where` and the unbatched unsqueeze/squeeze are recorded ops, as in PyTorch's composite.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, dtypes, factories, signatures
from gradcli.engine import elementary as cr
from gradcli.engine.forward import no_tangent
from gradcli.engine.ops import arith, elementwise, reduce, shape
from gradcli.engine.recording import autocast_policy, Op, apply, type_word
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_CHECKED = " (while checking arguments for ctc_loss_allocate_outputs)"
_REDUCTIONS = ("none", "mean", "sum")


def _logsumexp3(a1, a2, a3):
    """log(exp(a1 - m) + exp(a2 - m) + exp(a3 - m)) + m, m the largest (0 when it is -inf)."""
    m = np.where(a2 > a1, a2, a1)
    m = np.where(a3 > m, a3, m)
    m = np.where(m == -np.inf, m.dtype.type(0), m)
    with np.errstate(all="ignore"):
        return cr.log(cr.exp(a1 - m) + cr.exp(a2 - m) + cr.exp(a3 - m)) + m


def _primes(targets: np.ndarray, offsets, lengths, blank: int, width: int) -> np.ndarray:
    """target'(s) of each batch element: blank at even s, the target's s // 2-th label at odd s (blank past
    the element's own 2 * length + 1 states)."""
    b = len(lengths)
    out = np.full((b, width), blank, np.int64)
    for i, (off, n) in enumerate(zip(offsets, lengths)):
        if n:
            labels = targets[off:off + n] if targets.ndim == 1 else targets[i, :n]
            out[i, 1:2 * n:2] = labels
    return out


def _forward(lp: np.ndarray, primes: np.ndarray, in_lens, tg_lens, blank: int):
    """(nll (B,), log_alpha (B, T, S)) of log_probs (T, B, C)."""
    t_max, b, _ = lp.shape
    width = primes.shape[1]
    dt = lp.dtype.type
    alpha = np.full((b, t_max, width), -np.inf, lp.dtype)
    nll = np.zeros(b, lp.dtype)
    lens = np.array(in_lens, np.int64)
    states = 2 * np.array(tg_lens, np.int64) + 1
    rows = np.arange(b)
    if t_max:
        alpha[:, 0, 0] = lp[0, rows, blank]
        some = states > 1
        if some.any():
            alpha[some, 0, 1] = lp[0, rows[some], primes[some, 1]]
    s = np.arange(width)
    skip = np.zeros((b, width), bool)
    skip[:, 2:] = primes[:, 2:] != primes[:, :-2]
    inside = s[None, :] < states[:, None]
    for t in range(1, t_max):
        prev = alpha[:, t - 1]
        a2 = np.concatenate((np.full((b, 1), -np.inf, lp.dtype), prev[:, :-1]), 1)
        a3 = np.where(skip, np.concatenate((np.full((b, 2), -np.inf, lp.dtype), prev[:, :-2]), 1)[:, :width], dt(-np.inf))
        value = _logsumexp3(prev, a2, a3) + np.take_along_axis(lp[t], primes, 1)
        live = inside & (t < lens)[:, None]
        alpha[:, t] = np.where(live, value, alpha[:, t])
    for i in range(b):
        n, L = lens[i], tg_lens[i]
        if n == 0:
            nll[i] = -(dt(0) if L == 0 else dt(-np.inf))
        elif L == 0:
            nll[i] = -alpha[i, n - 1, 0]
        else:
            l1, l2 = alpha[i, n - 1, 2 * L], alpha[i, n - 1, 2 * L - 1]
            m = l2 if l1 < l2 else l1
            m = dt(0) if m == -np.inf else m
            with np.errstate(all="ignore"):
                nll[i] = -(cr.log(cr.exp(np.array(l1 - m)) + cr.exp(np.array(l2 - m))) + m)
    return nll, alpha


def _backward(g: np.ndarray, lp: np.ndarray, primes, in_lens, tg_lens, nll, alpha, blank: int,
              zero_infinity: bool) -> np.ndarray:
    """_ctc_loss_backward: the gradient of each sequence's loss (times g) with respect to log_probs."""
    t_max, b, c = lp.shape
    dt = lp.dtype.type
    grad = np.full((b, t_max, c), -np.inf, lp.dtype)
    lpb = lp.transpose(1, 0, 2)
    with np.errstate(all="ignore"):
        for i in range(b):
            if zero_infinity and nll[i] == np.inf:
                grad[i] = 0
                continue
            n, L = int(in_lens[i]), int(tg_lens[i])
            width = 2 * L + 1
            pr = primes[i, :width]
            la = alpha[i]
            beta = np.full((max(n, 1), width), -np.inf, lp.dtype)
            if n > 0:
                beta[n - 1, 2 * L] = lpb[i, n - 1, blank]
                grad[i, n - 1, blank] = la[n - 1, 2 * L] + beta[n - 1, 2 * L]
                if L > 0:
                    beta[n - 1, 2 * L - 1] = lpb[i, n - 1, pr[2 * L - 1]]
                    grad[i, n - 1, pr[2 * L - 1]] = la[n - 1, 2 * L - 1] + beta[n - 1, 2 * L - 1]
            skip = np.zeros(width, bool)
            skip[:-2] = pr[2:] != pr[:-2]
            for t in range(n - 2, -1, -1):
                nxt = beta[t + 1]
                b2 = np.append(nxt[1:], dt(-np.inf))
                b3 = np.where(skip, np.append(nxt[2:], [dt(-np.inf)] * min(2, width))[:width], dt(-np.inf))
                beta[t] = _logsumexp3(nxt, b2, b3) + lpb[i, t, pr]
                ab = la[t, :width] + beta[t]
                row = grad[i, t]
                for s in range(width - 1, -1, -1):
                    k = pr[s]
                    cur = row[k]
                    if cur == -np.inf:
                        row[k] = ab[s]
                    else:
                        m = ab[s] if cur < ab[s] else cur
                        row[k] = cr.log(cr.exp(np.array(cur - m)) + cr.exp(np.array(ab[s] - m))) + m
            gr = g[i]
            part = lpb[i, :n]
            grad[i, :n] = (cr.exp(part) - cr.exp(grad[i, :n] + nll[i] - part)) * gr
            grad[i, n:] = 0
    return np.ascontiguousarray(grad.transpose(1, 0, 2))


def _grad(F, g, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result, result1):
    lp = log_probs._a if log_probs.__class__ is Tensor else log_probs
    garr = g._a if g.__class__ is Tensor else g
    tg = targets._a if targets.__class__ is Tensor else targets
    nll = result._a if result.__class__ is Tensor else result
    la = result1._a if result1.__class__ is Tensor else result1
    offsets = _offsets(tg, target_lengths)
    primes = _primes(tg, offsets, target_lengths, blank, la.shape[2])
    out = _backward(np.broadcast_to(garr, nll.shape), lp, primes, input_lengths, target_lengths, nll, la, blank,
                    zero_infinity)
    if F.tensors:           # PyTorch has no derivative for the backward kernel: a node that refuses to run
        return elementwise.not_implemented(out, (g, log_probs, result), "_ctc_loss_backward")
    return out


# fmt: off
CTC_LOSS = Op("CtcLossBackward0", None, ("log_probs", "targets", "input_lengths", "target_lengths", "blank",
                                         "zero_infinity", "result", "result1"),
              (_grad,), inputs=("log_probs",), saves_tensors=True, quiet=True, jvp=no_tangent("_ctc_loss"))
# fmt: on


def _offsets(targets: np.ndarray, lengths) -> list:
    if targets.ndim == 1:
        return list(np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)[:-1]))) if len(lengths) else []
    return [0] * len(lengths)


def _lengths(v, name: str) -> tuple:
    """A lengths argument as ints: a tuple of ints as given, a tensor (any shape) of an integer dtype."""
    if v.__class__ is Tensor:
        if v._a.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(x) for x in v._a.reshape(-1))
    return tuple(int(x) for x in v)


def _ctc(log_probs: Tensor, targets: Tensor, in_lens: tuple, tg_lens: tuple, blank: int, zero_infinity: bool):
    """_ctc_loss: ATen's checks in its words, then the per-sequence losses (a CtcLossBackward0 node)."""
    lp = log_probs._a
    if lp.size == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if lp.dtype.kind not in "fV":
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{type_word(lp)}'")
    if lp.dtype.itemsize == 2:
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{type_word(lp)}'")
    tg = targets._a
    if lp.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional tensor for argument #1 "
                           f"'log_probs'{_CHECKED}")
    if not 1 <= tg.ndim < 3:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {tg.ndim}-dimensional tensor for argument #2 "
                           f"'targets'{_CHECKED}")
    t_max, b, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if len(in_lens) != b:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tg_lens) != b:
        raise RuntimeError("target_lengths must be of size batch_size")
    for n in tg_lens:
        if n < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {n}{_CHECKED}")
    longest = max(tg_lens, default=0)
    if tg.ndim == 1:
        if tg.shape[0] != sum(tg_lens):
            raise RuntimeError(f"Expected tensor to have size {sum(tg_lens)} at dimension 0, but got size "
                               f"{tg.shape[0]} for argument #2 'targets'{_CHECKED}")
    else:
        if tg.shape[0] != b:
            raise RuntimeError(f"Expected tensor to have size {b} at dimension 0, but got size {tg.shape[0]} for "
                               f"argument #2 'targets'{_CHECKED}")
        if tg.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{tg.shape[1]} for argument #2 'targets'{_CHECKED}")
    for n in in_lens:
        if n < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {n}{_CHECKED}")
        if n > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {n}{_CHECKED}")
    offsets = _offsets(tg, tg_lens)
    used = [tg[o:o + n] if tg.ndim == 1 else tg[i, :n] for i, (o, n) in enumerate(zip(offsets, tg_lens))]
    if any(((u < 0) | (u >= c)).any() for u in used):
        raise NotImplementedError("gradcli does not implement ctc_loss with a target label outside [0, "
                                  f"{c}) (PyTorch reads outside log_probs there)")
    width = 2 * longest + 1
    budget.check_tensor((b, t_max, width), lp.itemsize * 6)
    primes = _primes(tg, offsets, tg_lens, blank, width)
    nll, alpha = _forward(lp, primes, in_lens, tg_lens, blank)
    return apply(CTC_LOSS, nll, (log_probs,), (targets, in_lens, tg_lens, blank, zero_infinity, alpha))


_SIGNATURE_TAIL = "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)"


def torch_ctc_loss(*args, **kwargs) -> Tensor:
    """torch.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction, zero_infinity=False):
    the lengths as tuples of ints or as integer tensors. The signature shows at::Reduction::Mean as the default,
    but PyTorch's parser reads that text as 0: called without it, torch.ctc_loss does not reduce."""
    v = signatures.parsed("torch.ctc_loss", args, kwargs, {"blank": 0, "reduction": 0, "zero_infinity": False})
    log_probs, targets = v["log_probs"], v["targets"]
    in_lens = _lengths(v["input_lengths"], "input_lengths")
    tg_lens = _lengths(v["target_lengths"], "target_lengths")
    blank, reduction, zero_infinity = int(v["blank"]), int(v["reduction"]), bool(v["zero_infinity"])
    batched = log_probs._a.ndim == 3
    lp = log_probs if batched else shape.unsqueeze(log_probs, 1)
    tg = targets if targets._a.dtype == np.int64 else Tensor(targets._a.astype(np.int64))
    res = _ctc(lp, tg, in_lens, tg_lens, blank, zero_infinity)
    if zero_infinity:
        res = elementwise.where(res == float("inf"), factories.zeros((), dtype=dtypes.of_array(res._a)), res)
    if reduction == 1:
        lengths = factories.tensor(list(tg_lens), dtype=dtypes.of_array(res._a))
        return reduce.mean(arith.div(res, elementwise.clamp_min(lengths, 1)))
    if reduction == 2:
        return reduce.reduce_sum(res)
    return res if batched else shape.squeeze(res, 0)


@autocast_policy("fp32")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False) -> Tensor:
    """F.ctc_loss: the reduction's name as its enum, then torch.ctc_loss."""
    if reduction == "elementwise_mean":
        if STATE.warn is not None:
            STATE.warn("UserWarning", "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
        reduction = "mean"
    if reduction.__class__ is not str or reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return torch_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _REDUCTIONS.index(reduction),
                          zero_infinity)
