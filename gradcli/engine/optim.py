"""torch.optim's optimisers and their Optimizer base, updating in PyTorch's single-tensor CPU arithmetic order."""

from __future__ import annotations

import weakref
from collections import defaultdict

import numpy as np

from gradcli.engine import elementary
from gradcli.engine.fma import fma, sum_rounded
from gradcli.engine.ops import arith
from gradcli.engine.recording import checked_scalar, number_operand, scalar_int, scalar_param
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

def _lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """start.lerp_(end, weight) with a scalar weight, as PyTorch's vectorised CPU kernel: one fused
    multiply-add from the nearer end (float16: in float, rounded once)."""
    if start.dtype.char in "eE":
        s32 = start.astype(_F32)
        _lerp_(s32, end.astype(_F32), weight)
        start[...] = s32
        return
    w = start.dtype.type(weight)
    diff = end - start
    if abs(w) < 0.5:
        fma(w, diff, start, start)
    else:
        fma(w - start.dtype.type(1), diff, end, start)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _checked(value, dtype) -> float:
    """A hyperparameter PyTorch's update passes as an `alpha=` or `value=` (param.add_(grad, alpha=-lr), ...),
    which it converts to the parameter's dtype with an overflow check: its RuntimeError past float32's range."""
    if value.__class__ is float and -_FLOAT32_MAX <= value <= _FLOAT32_MAX and dtype.itemsize >= 4:
        return value                    # (the usual case, once a step: without checked_scalar's lookups)
    return checked_scalar(value, np.dtype(dtype))


def _scalar_ints(group: dict, names: tuple) -> None:
    """Hyperparameters PyTorch's update hands to tensor ops as Scalars (`denom.add_(eps)`,
    `buf.mul_(momentum)`): an int past 64 bits is its OverflowError, once a parameter has a gradient."""
    for name in names:
        value = group[name]
        if value.__class__ is int and not -(1 << 63) <= value < (1 << 64) and any(
                p.grad is not None for p in group["params"]):
            scalar_int(value)


def _scalar(value) -> float:
    """A hyperparameter as the update uses it: a Python number, or a one-element tensor's value."""
    if value.__class__ is Tensor:
        return value._a.item()
    return value


class _Required:
    """The default of a hyperparameter a param group must give (PyTorch's `required`)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def _typename(obj) -> str:
    """torch.typename(obj) for what is not a tensor: the class's name, with its module unless a builtin."""
    cls = obj.__class__
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


class Optimizer:
    """torch.optim.Optimizer: param groups (dicts scripts read and change), per-parameter state, zero_grad,
    state dicts; subclasses give `defaults` and `_update`."""

    def __init__(self, params, defaults: dict):
        STATE.gradient_given()          # making an optimiser imports sympy in PyTorch (STATE.gradient_given)
        name = type(self).__name__
        if defaults.get("fused"):
            if defaults.get("differentiable"):
                raise RuntimeError("`fused` does not support `differentiable`")
            if defaults.get("foreach"):
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
            # PyTorch's fused CPU kernels round differently from its default loop, which is what gradcli follows
            raise NotImplementedError(f"gradcli does not implement torch.optim.{name}(fused=True)")
        if defaults.get("differentiable"):
            raise NotImplementedError(f"gradcli does not implement torch.optim.{name}(differentiable=True)")
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_tensor_typename(params)}")
        self.state = defaultdict(dict)
        self.param_groups = []
        self._sched_wrapped = False     # a scheduler watches step() (the order warning of lr_scheduler)
        self._opt_called = False
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            if STATE.warn is not None:
                STATE.warn("UserWarning", "optimizer contains a parameter group with duplicate parameters; in "
                           "future, this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                           "more information")
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad = False
                        g._a[...] = 0
                        g._version[0] += 1

    def step(self, closure=None):
        """One update of every parameter that has a gradient; with `closure`, first re-evaluate the loss
        (under grad mode) and return it."""
        if self._sched_wrapped:
            self._opt_called = True
        loss = None
        if closure is not None:
            saved = STATE.recording
            STATE.recording = True          # torch.enable_grad() around the closure
            try:
                loss = closure()
            finally:
                STATE.recording = saved
        for group in self.param_groups:
            if group.get("foreach") and any(p.grad is not None and p._a.dtype.char in "eE" for p in group["params"]):
                # PyTorch's foreach kernels round float16 otherwise (its in-place ones with a number in Half)
                raise NotImplementedError(f"gradcli does not implement torch.optim.{type(self).__name__}"
                                          "(foreach=True) on float16 parameters")
            if any(p.grad is not None and p.grad.__class__ is not Tensor for p in group["params"]) and \
                    type(self).__name__ != "SparseAdam":
                from gradcli.engine import sparse_adam      # a sparse gradient (nn.Embedding(sparse=True))
                sparse_adam.sparse_step(self, group)
                continue
            self._update(group)
        return loss

    def _update(self, group: dict) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        index: dict = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict) -> None:
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = _copy(state_dict["param_groups"], 0)
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for old_id, p in zip(s["params"], g["params"]):
                id_map[old_id] = p
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast_state(param, v)
            else:
                state[k] = v
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
        self.state = state
        self.param_groups = saved_groups


_COPY_DEPTH = 50


def _copy(value, depth: int):
    """copy.deepcopy of a state dict's param groups, for the values a state dict holds (containers,
    tensors, numbers, strings): it never calls a script's own __deepcopy__, and stops at a depth."""
    if depth > _COPY_DEPTH:
        raise RecursionError("the state dict's param groups are nested too deeply to copy")
    cls = value.__class__
    if cls is dict:
        return {k: _copy(v, depth + 1) for k, v in value.items()}
    if cls is list:
        return [_copy(v, depth + 1) for v in value]
    if cls is tuple:
        return tuple(_copy(v, depth + 1) for v in value)
    if cls is Tensor:
        t = Tensor(value._a.copy(order="K"))      # (a state keeps its layout, as deepcopy keeps it)
        t.requires_grad = value.requires_grad
        return t
    return value


def _cast_state(param: Tensor, value, key=None):
    """A loaded state value for `param`: tensors (but the step count) in the parameter's dtype."""
    if value.__class__ is Tensor:
        if key != "step" and param._a.dtype.kind in "fV" and value._a.dtype != param._a.dtype:
            return Tensor(value._a.astype(param._a.dtype))
        return value
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    return value


def _tensor_typename(t: Tensor) -> str:
    return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "int64": "torch.LongTensor",
            "int32": "torch.IntTensor", "bool": "torch.BoolTensor", "float16": "torch.HalfTensor", "bfloat16": "torch.BFloat16Tensor"}.get(
        t._a.dtype.name, "torch.Tensor")


def _step_tensor() -> Tensor:
    return Tensor(np.array(0.0, dtype=np.float32))


def _count_step(state: dict) -> float:
    """state['step'] += 1 (a float32 tensor, as PyTorch keeps it), and its value."""
    t = state["step"]
    a = t._a
    a += 1
    t._version[0] += 1
    return float(a)


def _grad_of(p: Tensor, maximize: bool) -> np.ndarray:
    g = p.grad._a
    return -g if maximize else g


def _real_with_grads(group: dict, name: str):
    """The group's parameters that have a gradient, in order, each checked as it comes: a complex one is
    `name`'s RuntimeError (the optimisers whose loops take real parameters only: Adafactor, Muon)."""
    for p in group["params"]:
        if p.grad is not None:
            if p._a.dtype.kind == "c":
                raise RuntimeError(f"{name} does not support complex parameters")
            yield p


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(not lr < 0.0, f"Invalid learning rate: {lr}")
        _check(not momentum < 0.0, f"Invalid momentum value: {momentum}")
        _check(not weight_decay < 0.0, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, wd = _scalar(group["lr"]), _scalar(group["weight_decay"])
        momentum, dampening = _scalar(group["momentum"]), _scalar(group["dampening"])
        nesterov, maximize = group["nesterov"], group["maximize"]
        flat = _Flat.of(self, group, ("momentum_buffer",) if momentum != 0 else (), counted=False)
        if flat is not None:
            self._update_flat(flat, lr, wd, momentum, dampening, nesterov, maximize)
            return
        state = self.state
        consts: dict = {}               # the scalars in each parameter dtype, made once a step
        for p in group["params"]:
            if p.grad is None:
                continue
            a = p._a
            # float16: PyTorch's Half kernels (_half_axpy, _half_scale); else fused in the parameter's type
            half = a.dtype.char in "eE"
            k = consts.get(a.dtype)
            if k is None:
                t = a.dtype.type
                k = consts[a.dtype] = (t(wd), t(momentum), t(1 - dampening), t(-lr))
            c_wd, c_momentum, c_dampening, c_lr = k
            grad = _grad_of(p, maximize)
            if wd != 0:
                _checked(wd, a.dtype)
                grad = _half_axpy(a, wd, grad) if half else fma(a, c_wd, grad)
            if momentum != 0:
                st = state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = Tensor(grad.copy(order="K"))     # torch.clone: grad's layout
                else:
                    scalar_param(momentum)      # buf.mul_(momentum): an int past 64 bits is PyTorch's OverflowError
                    b = buf._a
                    if half:
                        _half_scale(b, momentum)
                    else:
                        b *= c_momentum
                    _checked(1 - dampening, a.dtype)
                    if dampening == 0:
                        b += grad               # add_(alpha=1): one rounding either way
                    elif half:
                        b[...] = _half_axpy(grad, 1 - dampening, b)
                    else:
                        fma(grad, c_dampening, b, b)
                    buf._version[0] += 1
                if nesterov:
                    _checked(momentum, a.dtype)
                    grad = _half_axpy(buf._a, momentum, grad) if half else fma(buf._a, c_momentum, grad)
                else:
                    grad = buf._a
            _checked(-lr, a.dtype)
            if half:
                a[...] = _half_axpy(grad, -lr, a)
            else:
                fma(grad, c_lr, a, a)
            p._version[0] += 1

    @staticmethod
    def _update_flat(flat: "_Flat", lr, wd, momentum, dampening, nesterov, maximize) -> None:
        """_update's arithmetic on the whole group at once (see _Flat): the same elementwise operations
        with the same scalars, so every element rounds as in the loop over parameters."""
        t = flat.dtype.type
        grad = flat.grads(maximize)
        params = flat.params_flat()
        if wd != 0:
            grad = fma(params, t(_checked(wd, flat.dtype)), grad)
        changed = False
        if momentum != 0:
            buf = flat.buffers[0]
            if flat.fresh:              # PyTorch's first step: the buffer is a copy of the gradient
                np.copyto(buf, grad)
            else:
                scalar_param(momentum)          # (as _update)
                buf *= t(momentum)
                _checked(1 - dampening, flat.dtype)
                if dampening == 0:
                    buf += grad
                else:
                    fma(grad, t(1 - dampening), buf, buf)
                changed = True
            grad = fma(buf, t(_checked(momentum, flat.dtype)), grad) if nesterov else buf
        flat.fresh = False
        fma(grad, t(_checked(-lr, flat.dtype)), params, params)
        flat.store_params(params, changed)


_F32 = np.dtype(np.float32)


def _half_scale(b: np.ndarray, factor) -> None:
    """b.mul_(factor) for a float16 array as PyTorch computes it: in float, the scalar a float, rounded once."""
    b[...] = (b.astype(_F32) * _F32.type(factor)).astype(b.dtype)


def _half_axpy(x: np.ndarray, alpha, z: np.ndarray) -> np.ndarray:
    """z + alpha * x for float16 arrays as PyTorch's add kernel computes `add(z, x, alpha)` there, alpha
    as a float16: its vector body in float (the product exact, the sum rounded once to float16), its
    scalar tail (and a strided operand) in Half's arithmetic (rounded after the product and the sum):
    the engine's own add (arith._add_scaled, which follows TensorIterator's rows)."""
    from gradcli.engine.ops import arith
    return arith._add_scaled(z, x, alpha)


# The optimisers' kernels (but SGD's and the _Flat group updates') for a parameter of any float dtype: for float16
# (bfloat16 alike), PyTorch's Half kernels compute in float and round to float16 once (lerp_, addcmul_ fused; mul_ and div by
# a scalar with the scalar a float), except add with an alpha (_half_axpy) and add of a scalar (the scalar a
# float16, numpy's float16 arithmetic as it is); elsewhere the parameter's own type, fused where PyTorch fuses.

def _axpy(z: np.ndarray, x: np.ndarray, alpha, out: np.ndarray | None = None) -> np.ndarray:
    """z.add(x, alpha=alpha), into `out` if given (z itself for add_), alpha converted as PyTorch checks it."""
    alpha = _checked(alpha, z.dtype)
    if z.dtype.char not in "eE":
        return fma(x, z.dtype.type(alpha), z, out)
    r = _half_axpy(x, alpha, z)
    if out is None:
        return r
    out[...] = r
    return out


def _scale_(x: np.ndarray, factor) -> None:
    """x.mul_(factor) for a Python number (x an array, 0-d ones included: not a numpy scalar)."""
    if x.dtype.char in "eE":
        _half_scale(x, factor)
    else:
        x *= x.dtype.type(factor)


def _over(x: np.ndarray, divisor) -> np.ndarray:
    """x.div(divisor) for a Python number (a division, not a product by the reciprocal)."""
    if x.dtype.char in "eE":
        return (x.astype(_F32) / _F32.type(divisor)).astype(x.dtype)
    return x / x.dtype.type(divisor)


def _addcmul_(x: np.ndarray, t1: np.ndarray, t2: np.ndarray, value) -> None:
    """x.addcmul_(t1, t2, value=value): fma(value * t1, t2, x)."""
    if x.dtype.char in "eE":
        x[...] = fma(_F32.type(value) * t1.astype(_F32), t2.astype(_F32), x.astype(_F32)).astype(x.dtype)
    else:
        fma(x.dtype.type(value) * t1, t2, x, x)


def _addcdiv_(x: np.ndarray, t1: np.ndarray, t2: np.ndarray, value) -> None:
    """x.addcdiv_(t1, t2, value=value): x + (value * t1) / t2, each operation rounded; value converted as
    PyTorch checks it (float16's kernel reads it as a float: its range is float's)."""
    value = _checked(value, _F32 if x.dtype.char in "eE" else x.dtype)
    if x.dtype.char in "eE":
        u = _F32.type(value) * t1.astype(_F32)
        u /= t2.astype(_F32)
        x[...] = (x.astype(_F32) + u).astype(x.dtype)
    else:
        u = x.dtype.type(value) * t1
        u /= t2
        x += u                          # self + value*t1/t2: the addition commutes


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    _STATE_KEYS = ("exp_avg", "exp_avg_sq")

    def _update(self, group: dict) -> None:
        lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), _scalar(group["eps"])
        _scalar_ints(group, ("eps",))
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        amsgrad, maximize, decoupled = group["amsgrad"], group["maximize"], group["decoupled_weight_decay"]
        keys = self._STATE_KEYS + ("max_exp_avg_sq",) if amsgrad else self._STATE_KEYS
        if group["capturable"]:         # refused on a CPU once the state is made (its foreach loop: without XLA)
            _stepped(self, group, _state_init(*keys), devices=_NO_XLA if group["foreach"] else _CAPTURABLE_DEVICES)
        k = _lr_type(group)
        flat = _Flat.of(self, group, keys)
        if flat is not None:
            self._update_flat(flat, lr, wd, eps, beta1, beta2, amsgrad, maximize, decoupled, k)
            return
        state = self.state
        for p in group["params"]:
            if p.grad is None:
                continue
            a = p._a
            st = state[p]
            if not st:
                st["step"] = _step_tensor()
                st["exp_avg"] = Tensor(np.zeros_like(a))
                st["exp_avg_sq"] = Tensor(np.zeros_like(a))
                if amsgrad:
                    st["max_exp_avg_sq"] = Tensor(np.zeros_like(a))
            grad = _grad_of(p, maximize)
            step = _count_step(st)
            grad = _weight_decay(a, grad, _decay(lr, wd, k), wd, decoupled)
            va = _moments(st, grad, beta1, beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = _lr_over(lr, bias_correction1, k)
            if amsgrad:
                vmax = st["max_exp_avg_sq"]
                np.maximum(vmax._a, va, out=vmax._a)
                vmax._version[0] += 1
                va = vmax._a
            denom = _over(elementary.sqrt(va), bias_correction2 ** 0.5)
            denom += a.dtype.type(eps)
            _addcdiv_(a, st["exp_avg"]._a, denom, -step_size)
            p._version[0] += 1

    def _update_flat(self, flat: "_Flat", lr, wd, eps, beta1, beta2, amsgrad, maximize, decoupled, k) -> None:
        """_update's arithmetic on the whole group at once: the same elementwise operations with the same
        scalars, so every element rounds as in the loop over parameters."""
        t = flat.dtype.type
        grad = flat.grads(maximize)
        step = flat.count_step()
        if wd != 0:
            if decoupled:
                flat.scale_params(t(_decay(lr, wd, k)))
            else:
                grad = fma(flat.params_flat(), t(_checked(wd, flat.dtype)), grad)
        m, v = flat.buffers[0], flat.buffers[1]
        block = flat.block
        w = _constant(block, 1 - beta1)
        v *= _constant(block, beta2)
        if flat.dtype == np.float32 and abs(w) < 0.5:
            # _lerp_ and the fma below at once: m and v are the rows of one array, so their two fused
            # multiply-adds share one sum and one tie test (the same roundings, one call each fewer)
            products = np.empty((2, m.size))
            np.multiply(w, grad - m, out=products[0], dtype=np.float64)
            np.multiply(_constant(block, 1 - beta2) * grad, grad, out=products[1], dtype=np.float64)
            sum_rounded(products, flat.block[:2], flat.block[:2])
        else:
            _lerp_(m, grad, 1 - beta1)
            fma(t(1 - beta2) * grad, grad, v, v)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = _lr_over(lr, bias_correction1, k)
        if amsgrad:
            vmax = flat.buffers[2]
            np.maximum(vmax, v, out=vmax)
            v = vmax
        denom = elementary.sqrt(v)
        denom /= t(bias_correction2 ** 0.5)
        denom += _constant(block, eps)
        update = np.multiply(t(_checked(-step_size, flat.dtype)), m, out=flat.update)
        update /= denom
        flat.add_update()


def _constant(block: np.ndarray, value: float):
    """A hyperparameter in the state's dtype, as `block.dtype.type(value)` makes it (the same rounding), from
    recording's table of numbers: a new numpy scalar each step cost about 3k instructions."""
    c = number_operand(block, value)
    return c if c.__class__ is np.ndarray else block.dtype.type(value)


# Each optimizer's _Flat packs, by id(group), kept here rather than on the optimizer, where a script's own
# subclass could reach them (its instance attributes are the script's); dropped with the optimizer.
_PACKS: dict = {}


def _packs_of(opt) -> dict:
    key = id(opt)
    entry = _PACKS.get(key)
    if entry is not None and entry[0]() is opt:
        return entry[1]
    packs: dict = {}
    _PACKS[key] = (weakref.ref(opt, lambda _, key=key: _PACKS.pop(key, None)), packs)
    return packs


class _Flat:
    """An optimizer's state for one param group in one flat array per quantity, each parameter's state
    tensor a view of its slice, so that a step is a few numpy calls for the whole group rather than a
    few per parameter. Made on the group's first step when every parameter of the group has a gradient,
    no state yet and one float dtype; kept while the parameters with gradients, their shapes and the
    state tensors are still the same objects and every step count is equal. Anything else (a script
    that replaces a state tensor, loads a state dict, leaves a gradient None) drops it, and the
    per-parameter loop carries on with the same state tensors (views are tensors like any other).
    `keys` name the state tensors; `counted` adds PyTorch's float32 `step` count (Adam's, not SGD's)."""

    __slots__ = ("params", "shapes", "offsets", "dtype", "block", "buffers", "steps", "step_bytes", "tensors", "arrays",
                 "counted", "fresh", "_key", "update", "update_views")

    @classmethod
    def of(cls, opt: Optimizer, group: dict, keys: tuple, counted: bool = True) -> "_Flat | None":
        packs = _packs_of(opt)
        key = id(group)
        flat = packs.get(key)
        if flat is not None:
            if flat._key == keys and flat.counted == counted and flat.still_valid(opt.state, group["params"]):
                return flat
            del packs[key]
            return None
        params = group["params"]
        if len(params) < 2:             # nothing to gain
            return None
        state = opt.state
        dtype = params[0]._a.dtype
        for p in params:
            if p.grad is None or p._a.__class__ is not np.ndarray or p._a.dtype != dtype or dtype.kind not in "fV" or dtype.char in "eE" or state.get(p) or \
                    p.grad._a.shape != p._a.shape or not p._a.flags.c_contiguous:
                return None             # (a channels-last parameter's state keeps its layout: the loop's zeros_like)
        if len({id(p) for p in params}) != len(params):
            return None
        packs[key] = flat = cls(opt.state, params, dtype, keys, counted)
        return flat

    def __init__(self, state, params, dtype, keys, counted):
        self.params = list(params)
        self.shapes = [p._a.shape for p in params]
        sizes = [p._a.size for p in params]
        self.offsets = np.concatenate(([0], np.cumsum(sizes))).tolist()
        self.dtype = dtype
        self._key = keys
        self.counted = counted
        self.fresh = True               # no step taken yet: the state tensors hold no values of PyTorch's
        total = self.offsets[-1]
        self.block = np.zeros((len(keys), total), dtype)
        self.buffers = list(self.block)        # one row per state name (Adam's m and v: see _update_flat)
        # the step's update (Adam's), and each parameter's slice of it shaped as the parameter: made once, so
        # adding it costs one numpy call per parameter instead of three (a slice, a reshape, the add)
        self.update = np.empty(total, dtype)
        self.update_views = [self.update[self.offsets[i]:self.offsets[i + 1]].reshape(self.shapes[i])
                             for i in range(len(params))]
        self.steps = np.zeros(len(params), np.float32)
        self.step_bytes = self.steps.tobytes()      # what the counts must still be at the next step
        self.tensors = []               # per parameter: its state tensors, in keys' order (then its step)
        self.arrays = []                # ... and the views they hold
        for i, p in enumerate(params):
            start, end = self.offsets[i], self.offsets[i + 1]
            own = [Tensor(b[start:end].reshape(self.shapes[i])) for b in self.buffers]
            if counted:
                own.append(Tensor(self.steps[i:i + 1].reshape(())))
            if own:
                st = state[p]
                if counted:
                    st["step"] = own[-1]
                for name, tensor in zip(keys, own):
                    st[name] = tensor
            self.tensors.append(own)
            self.arrays.append([tensor._a for tensor in own])

    def still_valid(self, state, params) -> bool:
        if len(params) != len(self.params):
            return False
        keys, counted = self._key, self.counted
        for i, p in enumerate(params):
            if p is not self.params[i] or p.grad is None or p._a.shape != self.shapes[i]:
                return False
            own = self.tensors[i]
            if not own:
                continue
            st = state.get(p)
            arrays = self.arrays[i]
            if st is None or counted and (st.get("step") is not own[-1] or own[-1]._a is not arrays[-1]):
                return False
            for j, name in enumerate(keys):
                if st.get(name) is not own[j] or own[j]._a is not arrays[j]:
                    return False
        return not counted or self.steps.tobytes() == self.step_bytes

    def grads(self, maximize: bool) -> np.ndarray:
        g = np.concatenate([p.grad._a.reshape(-1) for p in self.params])
        if maximize:
            np.negative(g, out=g)
        return g

    def params_flat(self) -> np.ndarray:
        return np.concatenate([p._a.reshape(-1) for p in self.params])

    def count_step(self) -> float:
        """Every state['step'] += 1 (their version counters move in add_update), and the count."""
        steps = self.steps
        steps += 1
        self.step_bytes = steps.tobytes()
        return float(steps[0])

    def scale_params(self, factor) -> None:
        for p in self.params:
            p._a *= factor

    def add_update(self) -> None:
        """Each parameter += its slice of `self.update`; then every tensor the step changed counts a version."""
        views = self.update_views
        for i, p in enumerate(self.params):
            p._a += views[i]
            p._version[0] += 1
            for tensor in self.tensors[i]:
                tensor._version[0] += 1

    def store_params(self, values: np.ndarray, states_changed: bool) -> None:
        """Each parameter's data := its slice of `values`, counting a version (and its state tensors' when
        the step changed them)."""
        offsets, shapes = self.offsets, self.shapes
        for i, p in enumerate(self.params):
            p._a[...] = values[offsets[i]:offsets[i + 1]].reshape(shapes[i])
            p._version[0] += 1
            if states_changed:
                for tensor in self.tensors[i]:
                    tensor._version[0] += 1


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), _scalar(group["eps"])
        _scalar_ints(group, ("alpha", "eps", "momentum"))
        alpha, momentum = _scalar(group["alpha"]), _scalar(group["momentum"])
        centered, maximize = group["centered"], group["maximize"]
        state = self.state
        init = _state_init("square_avg", *("momentum_buffer",) * (momentum > 0), *("grad_avg",) * bool(centered))
        for p in _stepped(self, group, init):
            a = p._a
            t = a.dtype.type
            st = state[p]
            grad = _grad_of(p, maximize)
            _count_step(st)
            if wd != 0:
                grad = _axpy(grad, a, wd)
            sq = st["square_avg"]
            s = sq._a
            _scale_(s, alpha)
            _addcmul_(s, grad, grad, 1 - alpha)
            sq._version[0] += 1
            if centered:
                ga = st["grad_avg"]
                _lerp_(ga._a, grad, 1 - alpha)
                ga._version[0] += 1
                avg = s.copy()          # square_avg.addcmul(grad_avg, grad_avg, value=-1)
                _addcmul_(avg, ga._a, ga._a, -1)
                avg = elementary.sqrt(avg)
            else:
                avg = elementary.sqrt(s)
            avg += t(eps)
            if momentum > 0:
                buf = st["momentum_buffer"]
                _scale_(buf._a, momentum)
                _addcdiv_(buf._a, grad, avg, 1)
                buf._version[0] += 1
                _axpy(a, buf._a, -lr, a)
            else:
                _addcdiv_(a, grad, avg, -lr)
            p._version[0] += 1


def _adagrad_state(st: dict, p: Tensor, initial) -> None:
    """Adagrad's state of a parameter, made for each parameter at construction and on a step for one without
    state (a param group added later), as PyTorch makes it: the sum starts at the constructor's
    initial_accumulator_value, whatever a param group says."""
    st["step"] = _step_tensor()
    initial = _scalar(initial)
    if initial.__class__ is int:
        scalar_int(initial)             # (torch.full_like's reading of the number)
    st["sum"] = Tensor(np.full_like(p._a, initial))


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                _adagrad_state(self.state[p], p, initial_accumulator_value)

    def _update(self, group: dict) -> None:
        lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), _scalar(group["eps"])
        _scalar_ints(group, ("eps",))
        lr_decay, maximize, k = _scalar(group["lr_decay"]), group["maximize"], _lr_type(group)
        state = self.state
        for p in group["params"]:
            if p.grad is None:
                continue
            a = p._a
            t = a.dtype.type
            st = state[p]
            if not st:
                _adagrad_state(st, p, self.defaults["initial_accumulator_value"])
            step = _count_step(st)
            grad = _grad_of(p, maximize)
            if wd != 0:
                grad = _axpy(grad, a, wd)
            clr = _lr_over(lr, 1 + (step - 1) * lr_decay, k)
            total = st["sum"]
            _addcmul_(total._a, grad, grad, 1)
            total._version[0] += 1
            std = elementary.sqrt(total._a)
            std += t(eps)
            _addcdiv_(a, grad, std, -clr)
            p._version[0] += 1


# PyTorch's loops check capturable=True against these device types (some without XLA)
_CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"
_NO_XLA = "['cuda', 'xpu', 'hpu', 'privateuseone']"


def _stepped(opt: Optimizer, group: dict, init, tensors: str = "params and state_steps",
             devices: str = _CAPTURABLE_DEVICES) -> list:
    """The parameters of `group` with a gradient, each with its state (`init(state, p)` fills an empty one),
    as PyTorch's `_init_group` gathers them; then what its loop refuses on a CPU: capturable=True (its
    AssertionError naming `tensors` and `devices`, the new state kept)."""
    params = [p for p in group["params"] if p.grad is not None]
    state = opt.state
    for p in params:
        st = state[p]
        if not st:
            init(st, p)
    if params and group["capturable"]:
        raise AssertionError(f"If capturable=True, {tensors} must be on supported devices: {devices}.")
    return params


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check(0.0 <= lr, f"Invalid learning rate: {lr}")


def _check_betas(betas) -> None:
    _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")


def _bump(*tensors: Tensor) -> None:
    """Count a version of each tensor an in-place step changed."""
    for t in tensors:
        t._version[0] += 1


def _lr_type(group: dict):
    """The numpy scalar type PyTorch's arithmetic with a tensor lr runs in (its float dtype, float32 for an
    integer one: `lr / bias_correction` is then a 0-d tensor's quotient, rounded in that type), or None
    for a Python number (Python's float arithmetic)."""
    lr = group["lr"]
    if lr.__class__ is not Tensor:
        return None
    dt = lr._a.dtype
    return dt.type if dt.kind in "fV" else np.float32


def _lr_over(lr: float, divisor: float, k) -> float:
    """lr / divisor (a step size over a bias correction): Python floats, or a tensor lr's type `k`."""
    return lr / divisor if k is None else float(k(lr) / k(divisor))


def _decay(lr: float, wd: float, k) -> float:
    """1 - lr * weight_decay, decoupled weight decay's factor: Python floats, or a tensor lr's type `k`."""
    return 1 - lr * wd if k is None else float(k(1) - k(lr) * k(wd))


def _state_init(*names: str, **scalars: float):
    """A state maker for _stepped: PyTorch's float32 `step` count, then each of `scalars` as a float32 0-d
    tensor, then a tensor of zeros like the parameter for each of `names` (in PyTorch's order)."""
    def init(st: dict, p: Tensor) -> None:
        st["step"] = _step_tensor()
        for name, value in scalars.items():
            st[name] = Tensor(np.array(value, dtype=np.float32))
        for name in names:
            st[name] = Tensor(np.zeros_like(p._a))
    return init


# Each optimiser's state makers (module values, out of reach of a script's subclass)
_ADAMAX_STATE = _state_init("exp_avg", "exp_inf")
_NADAM_STATE = _state_init("exp_avg", "exp_avg_sq", mu_product=1.0)
_RADAM_STATE = _state_init("exp_avg", "exp_avg_sq")
_ADADELTA_STATE = _state_init("square_avg", "acc_delta")
_RPROP_PREV = _state_init("prev")


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), _scalar(group["eps"])
        _scalar_ints(group, ("eps",))
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        maximize, k = group["maximize"], _lr_type(group)
        state = self.state
        # (its foreach loop checks capturable against devices without XLA)
        for p in _stepped(self, group, _ADAMAX_STATE, devices=_NO_XLA if group["foreach"] else _CAPTURABLE_DEVICES):
            a = p._a
            t = a.dtype.type
            st = state[p]
            grad = _grad_of(p, maximize)
            step = _count_step(st)
            if wd != 0:
                grad = _axpy(grad, a, wd)
            m, u = st["exp_avg"], st["exp_inf"]
            _lerp_(m._a, grad, 1 - beta1)
            ua = u._a
            _scale_(ua, beta2)                              # torch.maximum(exp_inf.mul_(beta2), |grad| + eps)
            np.maximum(ua, np.abs(grad) + t(eps), out=ua)   # (NaN wins, as in PyTorch)
            _bump(m, u)
            bias_correction = 1 - beta1 ** step
            clr = _lr_over(lr, bias_correction, k)
            _addcdiv_(a, m._a, ua, -clr)
            p._version[0] += 1


def _scale_0d(t: Tensor, factor: float) -> float:
    """A 0-d state tensor `*=` a Python float (NAdam's mu_product, in its own dtype: float32, or the
    parameter's once a state dict is loaded), and its new value."""
    a = t._a
    a *= a.dtype.type(factor)
    t._version[0] += 1
    return float(a)


def _moments(st: dict, grad: np.ndarray, beta1: float, beta2: float) -> np.ndarray:
    """Adam's running averages, in place: exp_avg.lerp_(grad, 1 - beta1) and
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2); the new exp_avg_sq."""
    m, v = st["exp_avg"], st["exp_avg_sq"]
    _lerp_(m._a, grad, 1 - beta1)
    va = v._a
    _scale_(va, beta2)
    _addcmul_(va, grad, grad, 1 - beta2)
    _bump(m, v)
    return va


def _weight_decay(a: np.ndarray, grad: np.ndarray, decay: float, wd: float, decoupled: bool) -> np.ndarray:
    """The gradient after weight decay: param.mul_(decay) (decoupled: _decay's factor), else
    grad.add(param, alpha=weight_decay)."""
    if wd == 0:
        return grad
    if decoupled:
        _scale_(a, decay)
        return grad
    return _axpy(grad, a, wd)


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), _scalar(group["eps"])
        _scalar_ints(group, ("eps",))
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        momentum_decay, maximize = _scalar(group["momentum_decay"]), group["maximize"]
        decoupled, k, foreach = group["decoupled_weight_decay"], _lr_type(group), group["foreach"]
        decay = _decay(lr, wd, k)
        if foreach:                     # its foreach loop takes a tensor lr's value for the step sizes
            k = None
        state = self.state
        tensors = "params, mu_products, and state_steps" if foreach else "params, mu_products and state_steps"
        params = _stepped(self, group, _NADAM_STATE, tensors, _NO_XLA if foreach else _CAPTURABLE_DEVICES)
        for p in params:
            a = p._a
            t = a.dtype.type
            st = state[p]
            grad = _grad_of(p, maximize)
            step = _count_step(st)
            bias_correction2 = 1 - beta2 ** step
            grad = _weight_decay(a, grad, decay, wd, decoupled)
            # the momentum cache mu_t and mu_{t+1}, in Python floats; their product so far in a 0-d tensor
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product = _scale_0d(st["mu_product"], mu)
            va = _moments(st, grad, beta1, beta2)
            if foreach:                 # the root first, divided by the root of the bias correction
                denom = _over(elementary.sqrt(va), bias_correction2 ** 0.5)
            else:
                denom = elementary.sqrt(_over(va, bias_correction2))
            mu_product_next = mu_product * mu_next
            denom += t(eps)
            # two addcdiv_: the gradient's share, then the running average's
            if k is None:
                value1 = -lr * (1.0 - mu) / (1.0 - mu_product)
                value2 = (-lr * mu_next) / (1.0 - mu_product_next)
            else:
                value1 = float(-k(lr) * k(1.0 - mu) / k(1.0 - mu_product))
                value2 = float(-k(lr) * k(mu_next) / k(1.0 - mu_product_next))
            _addcdiv_(a, grad, denom, value1)
            _addcdiv_(a, st["exp_avg"]._a, denom, value2)
            p._version[0] += 1


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), _scalar(group["eps"])
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        maximize, decoupled, foreach = group["maximize"], group["decoupled_weight_decay"], group["foreach"]
        k = _lr_type(group)
        decay = _decay(lr, wd, k)
        state = self.state
        params = _stepped(self, group, _RADAM_STATE, devices=_NO_XLA if foreach else _CAPTURABLE_DEVICES)
        if params and foreach and k is not None:
            raise NotImplementedError("gradcli does not implement torch.optim.RAdam(foreach=True) with a tensor lr")
        for p in params:
            a = p._a
            t = a.dtype.type
            st = state[p]
            grad = _grad_of(p, maximize)
            step = _count_step(st)
            grad = _weight_decay(a, grad, decay, wd, decoupled)
            va = _moments(st, grad, beta1, beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            # the length of the approximated simple moving average, and its limit
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if foreach:
                self._foreach_step(a, st["exp_avg"]._a, va, lr, eps, rho_inf, rho_t, bias_correction1,
                                   bias_correction2)
                p._version[0] += 1
                continue
            update = np.asanyarray(_over(st["exp_avg"]._a, bias_correction1))    # (scaled in place below, 0-d too)
            _scale_(update, lr)
            if rho_t > 5.0:
                denom = elementary.sqrt(va)
                denom += t(eps)
                # (bias_correction2 ** 0.5) / denom is PyTorch's Tensor.__rtruediv__: reciprocal, then a product
                adaptive = np.asanyarray(np.reciprocal(denom))
                _scale_(adaptive, bias_correction2 ** 0.5)
                update *= adaptive
                _scale_(update, _rectification(rho_t, rho_inf))
            a -= update                 # param.add_(update, alpha=-1.0): one rounding
            p._version[0] += 1

    @staticmethod
    def _foreach_step(a, m, va, lr, eps, rho_inf, rho_t, bias_correction1, bias_correction2) -> None:
        """PyTorch's foreach loop: one factor per element, 1 / ((sqrt(exp_avg_sq) + eps) / scale) plus the
        unrectified step size (one of the two Python floats is -0.0: a division by it gives -inf, whose
        reciprocal adds nothing), then param.addcmul_(exp_avg, factor)."""
        t = a.dtype.type
        rect = _rectification(rho_t, rho_inf) if rho_t > 5 else 0
        unrectified = (lr * (0 if rect > 0 else 1.0) / bias_correction1) * -1
        scale = (bias_correction2 ** 0.5) * (lr * rect / bias_correction1) * -1
        factor = np.asanyarray(elementary.sqrt(va)) + t(eps)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.reciprocal(_over(factor, scale))
        fma(m, factor + t(unrectified), a, a)


def _rectification(rho_t: float, rho_inf: float) -> float:
    """RAdam's variance rectification term, in Python floats."""
    return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), _scalar(group["eps"])
        _scalar_ints(group, ("eps",))
        rho, maximize = _scalar(group["rho"]), group["maximize"]
        state = self.state
        # (PyTorch checks capturable before its loop, against devices without XLA)
        for p in _stepped(self, group, _ADADELTA_STATE, devices=_NO_XLA):
            a = p._a
            t = a.dtype.type
            st = state[p]
            _count_step(st)
            grad = _grad_of(p, maximize)
            if wd != 0:
                grad = _axpy(grad, a, wd)
            sq, acc = st["square_avg"], st["acc_delta"]
            s = sq._a
            _scale_(s, rho)
            _addcmul_(s, grad, grad, 1 - rho)
            std = elementary.sqrt(s + t(eps))
            delta = elementary.sqrt(acc._a + t(eps))
            delta /= std
            delta *= grad
            d = acc._a
            _scale_(d, rho)
            _addcmul_(d, delta, delta, 1 - rho)
            _bump(sq, acc)
            _axpy(a, delta, -lr, a)
            p._version[0] += 1


def _sign(x: np.ndarray) -> np.ndarray:
    """Tensor.sign() of a float array: 1, -1 or 0, and 0 for NaN (numpy's sign keeps NaN); an array also
    for a 0-d one (where numpy's operators give scalars)."""
    return np.asanyarray(np.greater(x, 0).astype(x.dtype) - np.less(x, 0))


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, maximize = _scalar(group["lr"]), group["maximize"]
        etaminus, etaplus = (_scalar(e) for e in group["etas"])
        size_min, size_max = (_scalar(v) for v in group["step_sizes"])

        def init(st: dict, p: Tensor) -> None:
            _RPROP_PREV(st, p)
            g = p.grad._a              # torch.full_like(grad, lr)
            st["step_size"] = Tensor(np.full_like(g, checked_scalar(lr, g.dtype)))

        state = self.state
        for p in _stepped(self, group, init):
            a = p._a
            st = state[p]
            grad = _grad_of(p, maximize)
            _count_step(st)
            prev, step_size = st["prev"], st["step_size"]
            # the sign of grad * prev, then etaplus where positive, etaminus where negative, 1 where 0, in turn
            sign = _sign(grad * prev._a)
            c = sign.dtype.type
            sign[sign > 0] = c(_checked(etaplus, sign.dtype))
            sign[sign < 0] = c(_checked(etaminus, sign.dtype))
            sign[sign == 0] = 1
            ss = step_size._a
            ss *= sign
            s_min, s_max = _checked(size_min, ss.dtype), _checked(size_max, ss.dtype)
            np.minimum(np.maximum(ss, ss.dtype.type(s_min)), ss.dtype.type(s_max), out=ss)   # clamp_ (NaN kept)
            grad = np.array(grad)                    # a copy (an array also when 0-d)
            grad[sign == c(etaminus)] = 0            # no step where the gradient changed sign
            fma(-_sign(grad), ss, a, a)              # param.addcmul_(grad.sign(), step_size, value=-1)
            prev._a[...] = grad
            _bump(prev, step_size)
            p._version[0] += 1


def _store_0d(t: Tensor, value) -> None:
    """t.copy_(torch.as_tensor(value)) for a 0-d state tensor: as_tensor makes a float32 of a Python number
    (complex64 of a complex, whose copy into a real tensor keeps the real part, with PyTorch's warning) and
    keeps a tensor's value (here a numpy value) in its dtype."""
    if value.__class__ is complex:
        if STATE.warn is not None:
            STATE.warn("UserWarning", "Casting complex values to real discards the imaginary part")
        value = value.real
    t._a[...] = np.float32(value) if value.__class__ in (float, int) else value
    t._version[0] += 1


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, wd, maximize = _scalar(group["lr"]), _scalar(group["weight_decay"]), group["maximize"]
        lambd, alpha, t0 = _scalar(group["lambd"]), _scalar(group["alpha"]), _scalar(group["t0"])
        k, foreach = _lr_type(group), group["foreach"]
        state = self.state
        params = _stepped(self, group, _state_init("ax", eta=lr, mu=1.0), "params, mus, etas, and state_steps",
                          _NO_XLA if foreach else _CAPTURABLE_DEVICES)
        for p in params:
            a = p._a
            st = state[p]
            grad = _grad_of(p, maximize)
            eta, mu, ax = st["eta"], st["mu"], st["ax"]
            step = _count_step(st)
            if wd != 0:
                grad = _axpy(grad, a, wd)
            if foreach:
                self._foreach_step(a, grad, ax, eta, mu, lr, lambd, alpha, step, k)
                p._version[0] += 1
                ax._version[0] += 1
                _store_0d(mu, 1 / max(1, step - t0))
                continue
            eta_value = float(eta._a)
            _scale_(a, 1 - lambd * eta_value)       # the decay term
            _axpy(a, grad, -eta_value, a)           # the update
            p._version[0] += 1
            # averaging
            x = ax._a
            if float(mu._a) != 1:
                diff = np.asanyarray(a - x)
                _scale_(diff, float(mu._a))         # (a 0-d tensor: PyTorch's kernel takes its value as a scalar)
                x += diff
            else:
                x[...] = a
            ax._version[0] += 1
            if k is None:
                _store_0d(eta, lr / ((1 + lambd * lr * step) ** alpha))
            else:                       # in 0-d tensors of the lr's dtype, torch.pow's scalar loop included
                _store_0d(eta, k(lr) / arith.scalar_power(np.asanyarray(k(1) + k(lambd) * k(lr) * k(step)), alpha))
            _store_0d(mu, 1 / max(1, step - t0))

    @staticmethod
    def _foreach_step(a, grad, ax, eta, mu, lr, lambd, alpha, step, k) -> None:
        """PyTorch's foreach loop: the gradient plus lambd * param, param.addcmul_(that, eta, value=-1),
        ax.addcmul_(param - ax, mu) (every step), and the new eta from the float32 step tensor: with a Python
        lr, float32 arithmetic ending in Tensor.__rtruediv__ (reciprocal, then a product)."""
        t = a.dtype.type
        g = _axpy(grad, a, lambd)
        fma(-g, t(eta._a), a, a)
        x = ax._a
        fma(np.asanyarray(a - x), t(mu._a), x, x)
        if k is None:
            f = np.float32
            base = f(1) + f(step) * f(lambd * lr)
            _store_0d(eta, np.reciprocal(arith.scalar_power(np.asanyarray(base), alpha)) * f(lr))
        else:
            _store_0d(eta, k(lr) / arith.scalar_power(np.asanyarray(k(1) + k(lambd) * k(lr) * k(step)), alpha))


OPTIMIZERS = (Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD)
# the modules PyTorch defines them in: type(opt) prints <class 'torch.optim.sgd.SGD'>
MODULES = {Optimizer: "torch.optim.optimizer", SGD: "torch.optim.sgd", Adam: "torch.optim.adam",
           AdamW: "torch.optim.adamw", RMSprop: "torch.optim.rmsprop", Adagrad: "torch.optim.adagrad",
           Adamax: "torch.optim.adamax", NAdam: "torch.optim.nadam", RAdam: "torch.optim.radam",
           Adadelta: "torch.optim.adadelta", Rprop: "torch.optim.rprop", ASGD: "torch.optim.asgd"}
