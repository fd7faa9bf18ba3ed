"""torch.optim.LBFGS: limited-memory BFGS over all parameters as one flat vector, with an optional strong-Wolfe
line search, computed with the engine's tensors in the order of PyTorch 2.13's loop."""

from __future__ import annotations

from gradcli.engine import factories, ops, optim
from gradcli.engine.adafactor import Adafactor
from gradcli.engine.muon import Muon
from gradcli.engine.sparse_adam import SparseAdam
from gradcli.engine.optim import Optimizer
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

# Why tensors and not numpy: PyTorch's loop mixes Python floats and 0-d tensors (`t` is a float or a float32
# tensor depending on the first gradient's size, `gtd` is a tensor, the losses are floats), and each mixture
# rounds in its own way; the engine's tensors round as PyTorch's do, so the same expressions on them give the
# same bits.


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, kept inside `bounds`
    (default: between the two points); their midpoint when the cubic has no minimum."""
    if bounds is not None:
        low, high = bounds
    else:
        low, high = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    discriminant = d1 ** 2 - g1 * g2
    if not discriminant >= 0:
        return (low + high) / 2.0
    d2 = discriminant.sqrt()
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


class _Bracket:
    """The line search's interval: step sizes, losses, flat gradients and directional derivatives of its ends."""

    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t: list, f: list, g: list, gtd: list | None):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd

    def ends(self) -> tuple[int, int]:
        """(low, high): the end with the smaller loss first (the first end on a tie)."""
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)

    def set(self, i: int, t, f, g, gtd) -> None:
        self.t[i], self.f[i], self.g[i], self.gtd[i] = t, f, g, gtd


def _strong_wolfe(evaluate, t, d: Tensor, f: float, g: Tensor, gtd: Tensor, c1=1e-4, c2=0.9,
                  tolerance_change=1e-9, max_ls=25):
    """Moré and Thuente's bracketing and zoom (PyTorch's port of lswolfe.lua): a step along `d` whose loss
    decreases enough (Armijo, c1) and whose slope has shrunk enough (curvature, c2). Returns the loss, flat
    gradient and size of the step taken, and the number of evaluations."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new])
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = _Bracket([t], [f_new], [g_new], None)
            done = True
            break
        if gtd_new >= 0:
            bracket = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new])
            break
        # extrapolate: a cubic step between 1.01 and 10 times the current one
        lowest = t + 0.01 * (t - t_prev)
        highest = t * 10
        before = t
        t = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lowest, highest))
        t_prev, f_prev, g_prev, gtd_prev = before, f_new, g_new.clone(), gtd_new
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:               # out of evaluations: no zoom follows
        bracket = _Bracket([0, t], [f, f_new], [g, g_new], None)
    elif bracket is None:               # a negative max_ls (max_eval below the evaluations made): PyTorch's error
        raise UnboundLocalError("cannot access local variable 'bracket_f' where it is not associated with a value")
    # zoom: shrink the bracket around a point that satisfies both conditions
    insufficient = False
    low, high = bracket.ends()
    while not done and ls_iter < max_ls:
        if abs(bracket.t[1] - bracket.t[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket.t[0], bracket.f[0], bracket.gtd[0], bracket.t[1], bracket.f[1], bracket.gtd[1])
        # too near an end (twice running, or outside): move a tenth of the bracket inside it
        top, bottom = max(bracket.t), min(bracket.t)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.f[low]:
            bracket.set(high, t, f_new, g_new.clone(), gtd_new)
            low, high = (0, 1) if bracket.f[0] <= bracket.f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket.t[high] - bracket.t[low]) >= 0:
                bracket.set(high, bracket.t[low], bracket.f[low], bracket.g[low], bracket.gtd[low])
            bracket.set(low, t, f_new, g_new.clone(), gtd_new)
    return bracket.f[low], bracket.g[low], bracket.t[low], evals


class LBFGS(Optimizer):
    """torch.optim.LBFGS: one param group; `step(closure)` runs up to `max_iter` iterations, each a two-loop
    recursion over the last `history_size` steps and gradient changes, then a fixed step of `lr` (the first
    scaled down by the gradient's 1-norm) or a strong-Wolfe line search. Its whole state lives under the first
    parameter, as in PyTorch."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    # ------------------------------------------------------------------------------ the flat vector
    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _flat_grad(self) -> Tensor:
        """Every parameter's gradient (zeros where it has none) viewed flat and joined, as torch.cat joins them."""
        pieces = []
        for p in self._params:
            if p.grad is None:
                pieces.append(factories.zeros_like(p).view(-1))
            else:
                pieces.append(p.grad.view(-1))
        return ops.cat(pieces, 0)

    def _move(self, step, direction: Tensor) -> None:
        """Each parameter += step * its slice of the flat direction."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=step)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _evaluate_at(self, closure, start: list, step, direction: Tensor):
        """The loss and flat gradient at start + step * direction, then the parameters put back to `start`."""
        self._move(step, direction)
        loss = float(closure())
        flat_grad = self._flat_grad()
        for p, value in zip(self._params, start):
            p.copy_(value)
        return loss, flat_grad

    # ------------------------------------------------------------------------------ the step
    def step(self, closure):
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        if self._sched_wrapped:
            self._opt_called = True
        saved = STATE.recording
        STATE.recording = False             # @torch.no_grad(); the closure runs under torch.enable_grad()
        try:
            return self._run(lambda: _with_grad(closure))
        finally:
            STATE.recording = saved

    def _run(self, closure):
        group = self.param_groups[0]
        lr = group["lr"]
        if isinstance(lr, Tensor) and lr.dim() != 0:
            lr = lr.squeeze()
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the search direction
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:              # curvature: remember the pair (the oldest forgotten when full)
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if "al" not in state:
                    if isinstance(history_size, int) and history_size > STATE.max_items:  # (as a script's list)
                        raise MemoryError(f"a list of {history_size} items is too large (gradcli allows at most "
                                          f"{STATE.max_items})")
                    state["al"] = [None] * history_size
                d = _two_loop(flat_grad, old_dirs, old_stps, ro, H_diag, state["al"])

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the step length
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                start = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda step, direction: self._evaluate_at(closure, start, step, direction),
                    t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._move(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._move(t, d)
                opt_cond = False
                if n_iter != max_iter:      # the last iteration's loss is the next step's business
                    loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_stps, ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return orig_loss


def _two_loop(flat_grad: Tensor, old_dirs: list, old_stps: list, ro: list, H_diag, al: list) -> Tensor:
    """The L-BFGS direction -H g by the two-loop recursion, in one buffer; `al` (kept in the state, as PyTorch
    keeps it) receives the first loop's coefficients."""
    q = flat_grad.neg()
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q.add_(old_dirs[i], alpha=-al[i])
    r = ops.mul(q, H_diag)
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r.add_(old_stps[i], alpha=al[i] - be_i)
    return r


def _with_grad(closure):
    """The script's closure under grad mode (torch.enable_grad() around it)."""
    saved = STATE.recording
    STATE.recording = True
    try:
        return closure()
    finally:
        STATE.recording = saved


OPTIMIZERS = optim.OPTIMIZERS + (LBFGS, Adafactor, SparseAdam, Muon)        # every optimiser a script can reach
