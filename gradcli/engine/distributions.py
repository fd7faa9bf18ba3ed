"""PyTorch's other random draws, bit for bit: bernoulli, multinomial, poisson and the in-place fills
exponential_, geometric_, cauchy_, log_normal_ (their kernels, checks, autograd rows and script entry points).

Every kernel here is PyTorch's default CPU kernel, the one an AMD machine runs (Intel builds hand the
scalar bernoulli to MKL instead): one draw per element in the target's memory order, each transformed in
double with glibc's functions and rounded to the dtype at the end. Uniform doubles take one 64-bit draw
(rng.Generator._u53); the float32 uniform of a bernoulli with a float32 probability tensor takes one
32-bit draw (_u24).
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget, dtypes, rng
from gradcli.engine.autograd import runs_first
from gradcli.engine.factories import (_draw_like, _memory_order, _not_implemented, _SCALAR_NAMES,
                                      _type_name, _zero_tangent)
from gradcli.engine.layout import preserved
from gradcli.engine.recording import int64_arg, Op, apply
from gradcli.engine.ops.elementwise import unimplemented
from gradcli.engine.ops.special import _PSI_10, _PSI_ASYMPTOTIC
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_PI = math.pi
# The C++ type names cauchy_'s dtype check prints (typeid names as GCC spells them).
_CXX_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _g(gen, name: str) -> rng.Generator:
    if gen is None:
        return rng.default_generator
    if gen.__class__ is not rng.Generator:
        raise TypeError(f"{name}(): argument 'generator' must be torch.Generator, not {_type_name(gen)}")
    return gen


_CHUNK = 1 << 16        # elements per Python list: a big tensor never becomes one list of floats


def _map(fn, x: np.ndarray) -> np.ndarray:
    """fn (a math-module function: glibc's, as libtorch's) element by element."""
    flat = x.reshape(-1)
    if flat.size <= _CHUNK:
        return np.fromiter(map(fn, flat.tolist()), np.float64, flat.size)
    out = np.empty(flat.size, np.float64)
    for i in range(0, flat.size, _CHUNK):
        part = flat[i:i + _CHUNK]
        out[i:i + part.size] = np.fromiter(map(fn, part.tolist()), np.float64, part.size)
    return out


def _cast(v: np.ndarray, dt: np.dtype) -> np.ndarray:
    """static_cast<scalar_t>(double) as x86-64 code does it: float16 through float; integers truncate
    toward zero, and a value out of range (or NaN) becomes the "integer indefinite" (the lowest value) of
    the 64- or 32-bit conversion, narrower types keeping the low bits of the 32-bit one."""
    if dt.kind in "fV":
        return v.astype(np.float32).astype(dt) if dt == np.float16 else v.astype(dt)
    if dt == np.bool_:
        return v != 0
    with np.errstate(invalid="ignore"):
        if dt == np.int64:
            ok = np.abs(v) < 2.0 ** 63
            return np.where(ok, v, 0).astype(np.int64) | np.where(ok, 0, np.int64(-2 ** 63))
        ok = np.abs(v) < 2.0 ** 31
        wide = np.where(ok, v, 0).astype(np.int64) | np.where(ok, 0, np.int64(-2 ** 31))
    return wide.astype(dt)      # keeps the low bits, as the narrowing store does


def _fill(g: rng.Generator, a: np.ndarray, values) -> np.ndarray:
    """`values(n)` (float64, one per element) drawn in `a`'s memory order, cast to `a`'s dtype."""
    def draw(shape, _):
        if STATE.vmap is not None:
            return STATE.vmap.random(lambda s: _cast(values(math.prod(s)), a.dtype).reshape(s), shape)
        return _cast(values(math.prod(shape)), a.dtype).reshape(shape)
    return _draw_like(a, draw)


def _float_kernel(a: np.ndarray, kernel: str):
    if a.dtype.kind not in "fV":
        raise _not_implemented(kernel, a.dtype)


# ---- the kernels: values of one element each, from the generator's stream ----------------------

def exponential_draws(g: rng.Generator, n: int, lambd: float) -> np.ndarray:
    """-1/lambda * log1p(-u): CPU's transformation::exponential."""
    return (-1.0 / lambd) * _map(math.log1p, -g._u53(n))


def geometric_draws(g: rng.Generator, n: int, p: float) -> np.ndarray:
    """ceil(log(u) / log1p(-p))."""
    u = g._u53(n)
    denom = math.log1p(-p)
    with np.errstate(divide="ignore"):
        return np.ceil(_map(_log, u) / denom)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def cauchy_draws(g: rng.Generator, n: int, median: float, sigma: float) -> np.ndarray:
    """median + sigma * tan(pi * (u - 0.5)), the multiply-add fused as the compiled kernel fuses it."""
    t = _map(math.tan, _PI * (g._u53(n) - 0.5))
    return rng._fma64(sigma, t, median)


def log_normal_draws(g: rng.Generator, n: int, mean: float, std: float) -> np.ndarray:
    """exp of the scalar Box-Muller normal (its cached second value included)."""
    return _map(_exp, g._normal_scalar(n, mean, std))


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


# ---- in-place fills (Tensor.exponential_ ...): values for Tensor._inplace -------------------------

def _positive(name: str, what: str, value) -> float:
    v = float(value)
    if not v > 0.0:
        raise RuntimeError(f"{name} expects {what} > 0.0, but found {what}={rng._cxx_double(v)}")
    return v


def _continuous(a: np.ndarray, name: str, type_name: str, empty_too: bool):
    # exponential_ checks inside its kernel, which an empty tensor never reaches; cauchy_ checks first
    if a.dtype.kind not in "fV" and (a.size or empty_too):
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {type_name}")


def exponential_values(t: Tensor, lambd=1.0, generator=None) -> Tensor:
    g = _g(generator, "exponential_")
    lambd = _positive("exponential_", "lambda", _number("exponential_", "lambd", 1, lambd))
    a = t._a
    _continuous(a, "Exponential", _SCALAR_NAMES.get(a.dtype.name, a.dtype.name), False)
    return apply(EXPONENTIAL, _fill(g, a, lambda n: exponential_draws(g, n, lambd)), (t,))


def geometric_values(t: Tensor, p, generator=None) -> Tensor:
    g = _g(generator, "geometric_")
    p = float(_number("geometric_", "p", 1, p))
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={rng._cxx_double(p)}")
    a = t._a
    if a.dtype == np.bool_ and a.size:
        raise _not_implemented("geometric_cpu", a.dtype)
    return apply(GEOMETRIC, _fill(g, a, lambda n: geometric_draws(g, n, p)), (t,))


def cauchy_values(t: Tensor, median=0.0, sigma=1.0, generator=None) -> Tensor:
    g = _g(generator, "cauchy_")
    median = float(_number("cauchy_", "median", 1, median))
    sigma = _positive("cauchy_", "sigma", _number("cauchy_", "sigma", 2, sigma))
    a = t._a
    _continuous(a, "Cauchy", _CXX_NAMES.get(a.dtype.name, a.dtype.name), True)
    return apply(CAUCHY, _fill(g, a, lambda n: cauchy_draws(g, n, median, sigma)), (t,))


def log_normal_values(t: Tensor, mean=1.0, std=2.0, generator=None) -> Tensor:
    g = _g(generator, "log_normal_")
    mean = float(_number("log_normal_", "mean", 1, mean))
    std = _positive("log_normal_", "std", _number("log_normal_", "std", 2, std))
    a = t._a
    if a.size:
        _float_kernel(a, "log_normal_cpu")
    return apply(LOG_NORMAL, _fill(g, a, lambda n: log_normal_draws(g, n, mean, std)), (t,))


def _number(name: str, arg: str, position: int, value):
    """A float argument as PyTorch's parser takes it: numbers and one-element tensors."""
    if isinstance(value, (int, float)):
        return value
    if value.__class__ is Tensor and value._a.size == 1:
        return value._a.reshape(()).item()
    raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be float, not {_type_name(value)}")


_SAME_BATCHED = ("Vmap does not currently support same randomness with a batched tensor input. Please file an "
                 "issue with functorch")


def _per_element(draw) -> np.ndarray:
    """A draw whose parameters are tensors (batched under vmap): inside vmap(randomness='different') each
    element draws in turn, as PyTorch's batched draw goes through the batch; 'same' is refused as PyTorch
    refuses it, and 'error' by the vmap."""
    vm = STATE.vmap
    if vm is None:
        return draw()
    if vm.randomness == "same":
        raise RuntimeError(_SAME_BATCHED)
    return vm.random(lambda _: draw(), None)


# ---- bernoulli -----------------------------------------------------------------------------------

_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
            "improved?  If so, please report an enhancement request to PyTorch.)")
_BERNOULLI_SIGNATURES = (" * (Tensor p, *, torch.Generator generator = None)\n"
                         " * (float p = 0.5, *, torch.Generator generator = None)\n")


def _bernoulli_scalar(g: rng.Generator, a: np.ndarray, p: float) -> np.ndarray:
    """bernoulli_(p): a double uniform per element, in memory order, below p."""
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={rng._cxx_double(p)}")
    return _fill(g, a, lambda n: (g._u53(n) < p).astype(np.float64))


def _bernoulli_tensor(g: rng.Generator, a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """bernoulli_(p_tensor): p expanded to the target, one uniform per element in the target's memory
    order (a float32 uniform, one 32-bit word, for float32 p; a double for float64 p), below its p.
    An element outside [0, 1] stops the loop there, after the draws of the elements before it."""
    if p.dtype.kind not in "fV":
        raise _not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
    if p.dtype == np.float16:
        p = p.astype(np.float32)        # compared as float, with a float uniform
    p = _expand_to(p, a.shape)
    perm = _memory_order(a)
    order = np.transpose(p, perm).reshape(-1)          # p's values in the target's memory order
    bad = np.flatnonzero(~((order >= 0) & (order <= 1)))
    uniforms = g._u24 if p.dtype == np.float32 else g._u53
    if bad.size:
        uniforms(int(bad[0]))       # the draws of the elements before the one that stops the loop
        raise RuntimeError(_P_RANGE)
    u = uniforms(order.size)
    hits = _cast((u < order).astype(np.float64), a.dtype)
    shape = tuple(a.shape[i] for i in perm)
    # (a copy in C order, not np.ascontiguousarray, which makes a 0-d target 1-d)
    return np.transpose(hits.reshape(shape), np.argsort(perm)).copy(order="C")


def _expand_to(p: np.ndarray, shape: tuple) -> np.ndarray:
    """expand_inplace(self, p): p broadcast to the target's shape, with expand's messages."""
    if p.ndim > len(shape):
        raise RuntimeError(f"expand(torch.{_TENSOR_TYPES.get(p.dtype.name, 'Tensor')}{{{list(p.shape)}}}, "
                           f"size={list(shape)}): the number of sizes provided ({len(shape)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({p.ndim})")
    for i in range(1, p.ndim + 1):
        if p.shape[-i] != 1 and p.shape[-i] != shape[-i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[-i]}) must match the existing size "
                               f"({p.shape[-i]}) at non-singleton dimension {len(shape) - i}.  Target sizes: "
                               f"{list(shape)}.  Tensor sizes: {list(p.shape)}")
    return np.broadcast_to(p, shape)


_TENSOR_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
                 "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
                 "uint8": "ByteTensor", "bool": "BoolTensor"}


def bernoulli_values(t: Tensor, *args, generator=None, **kw) -> Tensor:
    """Tensor.bernoulli_(p=0.5) / bernoulli_(p_tensor): the two overloads PyTorch's parser tells apart."""
    if len(args) > 1 or any(k != "p" for k in kw) or (args and kw):
        got = [_got_name(x) for x in args] + [f"{k}={_got_name(v)}" for k, v in kw.items()]
        if kw and not args:
            got.append("")
        raise TypeError(f"bernoulli_() received an invalid combination of arguments - got ({', '.join(got)}), "
                        f"but expected one of:\n{_BERNOULLI_SIGNATURES}")
    p = args[0] if args else kw.get("p", 0.5)
    g = _g(generator, "bernoulli_")
    if p.__class__ is Tensor:
        values = _per_element(lambda: _bernoulli_tensor(g, t._a, p._a))
        return apply(BERNOULLI_TENSOR_, values, (t, p))
    if not isinstance(p, (int, float)):
        got = f"p={_type_name(p)}, " if kw else _type_name(p)
        raise TypeError(f"bernoulli_() received an invalid combination of arguments - got ({got}), but "
                        f"expected one of:\n{_BERNOULLI_SIGNATURES}")
    return apply(BERNOULLI_SCALAR_, _bernoulli_scalar(g, t._a, float(p)), (t,))


def bernoulli(input, *args, generator=None, out=None, **kw) -> Tensor:
    """torch.bernoulli(input) (input holds the probabilities) / torch.bernoulli(input, p); Tensor.bernoulli.
    The result is a new contiguous tensor of input's dtype."""
    if input.__class__ is not Tensor:
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}")
    if out is not None:
        raise NotImplementedError("bernoulli(out=...) is not available in gradcli")
    if len(args) > 1 or any(k != "p" for k in kw) or (args and kw):
        raise TypeError(_bernoulli_combination(input, args, kw))
    if generator is not None and generator.__class__ is not rng.Generator:
        raise TypeError(_bernoulli_combination(input, args, dict(kw, generator=generator)))
    g = _g(generator, "bernoulli")
    x = input._a
    if x.__class__ is np.ndarray:
        budget.check_tensor(x.shape, x.dtype.itemsize)
    target = np.empty(x.shape, x.dtype)
    if args or kw:
        p = args[0] if args else kw["p"]
        if p.__class__ is Tensor and p._a.size == 1 and p._a.ndim == 0:
            p = p._a.item()
        if p.__class__ is Tensor or not isinstance(p, (int, float)):
            raise TypeError(_bernoulli_combination(input, args, kw))
        if x.__class__ is not np.ndarray:   # a meta input: nothing drawn
            return apply(BERNOULLI_P, x.copy(), (input,))
        return runs_first(apply(BERNOULLI_P, _bernoulli_scalar(g, target, float(p)), (input,)))
    if x.__class__ is not np.ndarray:
        return apply(BERNOULLI, x.copy(), (input,))
    return apply(BERNOULLI, _per_element(lambda: _bernoulli_tensor(g, target, x)), (input,))


def _got_name(x) -> str:
    """A type as the "invalid combination" messages list what they got."""
    return "torch._C.Generator" if x.__class__ is rng.Generator else _type_name(x)


def _bernoulli_combination(input, args, kw) -> str:
    got = ["Tensor"] + [_got_name(x) for x in args] + [f"{k}={_got_name(v)}" for k, v in kw.items()]
    return ("bernoulli() received an invalid combination of arguments - got (" + ", ".join(got) + "), but "
            "expected one of:\n * (Tensor input, *, torch.Generator generator = None, Tensor out = None)\n"
            " * (Tensor input, float p, *, torch.Generator generator = None)\n")


# ---- multinomial ---------------------------------------------------------------------------------

_MAX_CATEGORIES = 1 << 24


def multinomial(input, num_samples=None, replacement=False, *, generator=None, out=None) -> Tensor:
    """torch.multinomial / Tensor.multinomial: int64 indices, one row per distribution."""
    if input.__class__ is not Tensor:
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}")
    if num_samples is None:
        raise TypeError('multinomial() missing 1 required positional arguments: "num_samples"')
    if num_samples.__class__ is Tensor and num_samples._a.size == 1 and num_samples._a.dtype.kind in "iu":
        num_samples = int(num_samples._a.ravel()[0])
    if num_samples.__class__ is bool or not isinstance(num_samples, int):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{_type_name(num_samples)}")
    int64_arg(num_samples)          # the parser reads it into 64 bits first
    if replacement.__class__ is not bool:
        raise TypeError(f"multinomial(): argument 'replacement' (position 3) must be bool, not "
                        f"{_type_name(replacement)}")
    g = _g(generator, "multinomial")
    if out is not None:
        raise NotImplementedError("multinomial(out=...) is not available in gradcli")
    probs = input._a
    if not 0 < probs.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind not in "fV":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_SCALAR_NAMES[probs.dtype.name]}")
    n = int(num_samples)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = probs.shape[-1]
    if not replacement and n > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if categories > _MAX_CATEGORIES:
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = (n,) if probs.ndim == 1 else (probs.shape[0], n)
    if probs.__class__ is not np.ndarray:       # a meta input: the samples' shape, nothing drawn
        from gradcli.engine import meta
        return Tensor(meta.meta_full(shape, 0, np.int64))
    budget.check_tensor(shape, 8)
    if math.prod(shape) == 0:
        return Tensor(np.empty(shape, np.int64))
    rows = probs.reshape(shape[0] if probs.ndim == 2 else 1, categories)
    if not replacement or n == 1:           # the checks of the Gumbel path; the other checks row by row
        if not (np.isfinite(rows) & (rows >= 0)).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows == 0).all(axis=1).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    return Tensor(_per_element(lambda: _multinomial(g, probs, rows, n, replacement)).reshape(shape))


def _multinomial(g, probs, rows, n, replacement) -> np.ndarray:
    if replacement and n > 1:
        return np.stack([_with_replacement(g, row, n) for row in rows])
    # Gumbel top-k (also for one sample with replacement): q ~ Exp(1) drawn over empty_like(probs) (its
    # memory order), then the n largest of p / q by PyTorch's topk (argmax for one sample)
    dt = probs.dtype
    q = _fill(g, preserved(probs), lambda k: exponential_draws(g, k, 1.0)).astype(dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = (probs / q).astype(dt).reshape(rows.shape)
    if n == 1:
        return np.argmax(keys, axis=1)[:, None]
    return np.stack([_top(row, n) for row in keys])


def _with_replacement(g, row: np.ndarray, n: int) -> np.ndarray:
    """Inverse-CDF sampling: the running sum in the row's dtype (float for float16), each entry divided
    by the total, the last set to 1; the first entry not below a double uniform is the sample."""
    bad = np.flatnonzero(~(np.isfinite(row) & (row >= 0)))
    if bad.size:
        message = "< 0" if not row[bad[0]] >= 0 else "= infinity or NaN"
        raise RuntimeError(f"invalid multinomial distribution (encountering probability entry {message})")
    acc = np.float32 if row.dtype == np.float16 else row.dtype
    if not row.size or not np.cumsum(row.astype(acc), dtype=acc)[-1] > 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    with np.errstate(over="ignore"):
        cum = np.cumsum(row.astype(acc), dtype=acc)         # sequential, as the kernel's loop
        total = cum[-1]
        cum = (cum / total).astype(acc)
    cum[-1] = 1
    cum = cum.astype(np.float64)
    out = np.empty(n, np.int64)
    for i in range(0, n, 1 << 20):          # the uniforms in slices: memory stays near the result's
        m = min(1 << 20, n - i)
        out[i:i + m] = np.searchsorted(cum, g._u53(m), side="left")
    return out


def _top(keys: np.ndarray, k: int) -> np.ndarray:
    """The indices topk(keys, k) returns on the CPU, ties in the order libstdc++'s selection leaves."""
    from gradcli.engine.ops import sorting
    return sorting.top_indices(keys, k)


# ---- poisson ---------------------------------------------------------------------------------------

def poisson(input, generator=None) -> Tensor:
    """torch.poisson(rates): one count per rate, in row-major order, in the rates' dtype."""
    if input.__class__ is not Tensor:
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}")
    g = _g(generator, "poisson")
    rates = input._a
    if rates.dtype.kind not in "fV":
        raise _not_implemented("poisson_cpu", rates.dtype)
    budget.check_tensor(rates.shape, rates.dtype.itemsize)
    return apply(POISSON, _per_element(lambda: _poisson_counts(g, rates)), (input,))


def _poisson_counts(g: rng.Generator, rates: np.ndarray) -> np.ndarray:
    with _Draws(g) as draws:
        counts = [_poisson_one(draws, lam) for lam in np.ascontiguousarray(rates).reshape(-1).tolist()]
    return _cast(np.array(counts, dtype=np.float64), rates.dtype).reshape(rates.shape)


def _poisson_one(g: "_Draws", lam: float) -> int:
    """PyTorch's sample_poisson (numpy's algorithms): Hoermann's transformed rejection for rates of 10
    and more, multiplied uniforms below; every step in double, as the C++ computes it."""
    if not lam >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = g.uniform() - 0.5
            v = g.uniform()
            us = 0.5 - abs(u)
            k = _int64_floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (_log(v) + math.log(invalpha) - math.log(a / (us * us) + b)) <= \
                    (-lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    count, prod = 0, 1.0
    while True:
        prod *= g.uniform()
        if prod > enlam:
            count += 1
        else:
            return count


def _int64_floor(x: float) -> int:
    """`(int64_t)std::floor(x)` as x86-64 converts it: a value outside int64's range, infinite or NaN, becomes
    INT64_MIN (a rate past 2**63 samples -9223372036854775808 in PyTorch)."""
    if x != x or not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return -(1 << 63)
    return math.floor(x)


# ---- gamma -------------------------------------------------------------------------------------------

class _Draws:
    """The generator's stream read one 32-bit word at a time, for the samplers that draw a few doubles per
    element (gamma, Dirichlet, binomial): the words of the current 624-word block tempered once, the
    position and the double normal cache written back to the generator at the end (`with`)."""

    __slots__ = ("g", "key", "pos", "block")

    def __init__(self, g: rng.Generator):
        self.g, self.key, self.pos, self.block = g, g._key, g._pos, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.g._key, self.g._pos = self.key, self.pos

    def word(self) -> int:
        if self.pos == 624:
            self.key = self.key.copy()          # (the generator's saved states may hold the old block)
            rng._twist(self.key)
            self.pos, self.block = 0, None
        if self.block is None:
            self.block = rng._temper(self.key).tolist()
        w = self.block[self.pos]
        self.pos += 1
        return w

    def uniform(self) -> float:
        """uniform_real_distribution<double>(0, 1): the low 53 bits of one 64-bit draw."""
        high = self.word()
        return (((high & 0x1FFFFF) << 32) | self.word()) * 2.0 ** -53

    def normal(self) -> float:
        """normal_distribution<double>(0, 1): the cached second value of the last Box-Muller pair, else a new
        pair (its sine kept in the cache)."""
        g = self.g
        if g._cache is not None:
            v, g._cache = g._cache, None
            return v + 0.0
        u1, u2 = self.uniform(), self.uniform()
        radius = math.sqrt(-2.0 * math.log1p(-u2))
        theta = rng._TWO_PI * u1
        g._cache = radius * math.sin(theta)
        return radius * math.cos(theta) + 0.0

_THIRD_F = float(np.float32(1.0) / np.float32(3.0))     # the kernel's 1.0f / 3.0f, for double alphas too
_C0331_F = float(np.float32(0.0331))


def standard_gamma(alpha: Tensor, generator=None) -> Tensor:
    """torch._standard_gamma(alpha): one Gamma(alpha, 1) draw per element, in row-major order, in alpha's
    dtype (StandardGammaBackward0 when alpha requires grad)."""
    g = _g(generator, "_standard_gamma")
    a = alpha._a
    if a.dtype.kind not in "fV" or a.dtype.char in "eE":
        raise _not_implemented("gamma_cpu", a.dtype)
    budget.check_tensor(a.shape, a.dtype.itemsize)
    return apply(STANDARD_GAMMA, _per_element(lambda: _gamma_values(g, a)), (alpha,))


def _gamma_values(g: rng.Generator, alphas: np.ndarray) -> np.ndarray:
    single = alphas.dtype == np.float32
    tiny = float(dtypes.finfo(alphas.dtype).tiny)
    out = []
    with _Draws(g) as draws:
        for alpha in np.ascontiguousarray(alphas).reshape(-1).tolist():
            v = float(alphas.dtype.type(_gamma_one(draws, alpha, single)))
            out.append(v if tiny < v else tiny)     # std::max(min, sample): a NaN sample becomes min too
    return np.array(out, dtype=alphas.dtype).reshape(alphas.shape)


def _gamma_one(draws: _Draws, alpha: float, single: bool) -> float:
    """sample_gamma (numpy's algorithm, Marsaglia and Tsang's rejection, alpha below 1 boosted by u^(1/alpha)):
    double arithmetic with the uniform and normal draws of the generator's double distributions (the normal
    through its cached second value); alpha's own steps in float for a float tensor, and the kernel's float
    constants. A NaN or negative alpha, on which PyTorch's loop never ends, gives NaN."""
    if not alpha >= 0.0:
        return math.nan
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        power = float(np.float32(1.0) / np.float32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1.0 - draws.uniform(), power)
        alpha = float(np.float32(alpha) + np.float32(1.0)) if single else alpha + 1.0
    d = float(np.float32(alpha) - np.float32(_THIRD_F)) if single else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = draws.normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1.0 - draws.uniform()
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx:
            return scale * d * v
        if _log(u) < 0.5 * xx + d * (1.0 - v + _log(v)):
            return scale * d * v


def standard_gamma_grad_array(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """_standard_gamma_grad: d(sample)/d(alpha) of a Gamma(alpha, 1) sample x, element by element in double."""
    a, b = np.broadcast_arrays(alpha, x)
    values = [_gamma_grad_one(p, q) for p, q in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())]
    return np.array(values, dtype=np.float64).astype(alpha.dtype).reshape(a.shape)


_F08, _F09, _F11 = (float(np.float32(v)) for v in (0.8, 0.9, 1.1))
_GAMMA_GRAD_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
                  (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
                   -0.00058392623),
                  (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
                   0.00085092367, -1.5247877e-07))


def _gamma_grad_one(alpha: float, x: float) -> float:
    """standard_gamma_grad_one: -(d/dalpha cdf(x; alpha)) / pdf(x; alpha) by a Taylor series below x = 0.8,
    Rice's saddle point expansion for alpha past 8, a bivariate rational approximation otherwise."""
    with np.errstate(all="ignore"):
        if x < _F08:
            numer, denom = 1.0, alpha
            series1, series2 = numer / denom, numer / (denom * denom)
            for i in range(1, 6):
                numer *= -x / i
                denom += 1
                series1 += numer / denom
                series2 += numer / (denom * denom)
            pow_x_alpha = _pow(x, alpha)
            gamma_pdf = _pow(x, alpha - 1) * _exp(-x)
            gamma_cdf = pow_x_alpha * series1
            gamma_cdf_alpha = (_log(x) - _digamma_one(alpha)) * gamma_cdf - pow_x_alpha * series2
            result = _div(-gamma_cdf_alpha, gamma_pdf)
            return 0.0 if result != result else result
        if alpha > 8.0:
            if _F09 * alpha <= x <= _F11 * alpha:
                numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
                numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                           + alpha * (107 + 3600 * x))
                denom = 1244160 * (alpha * alpha) * (alpha * alpha)
                return numer_1 * numer_2 / denom
            denom = math.sqrt(8 * alpha)
            term2 = _div(denom, alpha - x)
            term3 = _pow(x - alpha - alpha * _log(x / alpha), -1.5)
            term23 = term2 - term3 if x < alpha else term2 + term3
            term1 = _log(x / alpha) * term23 - _div(math.sqrt(2 / alpha) * (alpha + x), (alpha - x) * (alpha - x))
            stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
            numer = x * term1
            return -stirling * numer / denom
        u = _log(x / alpha)
        v = _log(alpha)
        c = [_GAMMA_GRAD_UV[0][i] + u * (_GAMMA_GRAD_UV[1][i] + u * _GAMMA_GRAD_UV[2][i]) for i in range(8)]
        p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
        q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
        return _exp(_div(p, q))


def _digamma_one(x: float) -> float:
    """Distributions.h's digamma (the reflection through tan(pi x) itself, inf at the poles), in double."""
    if x == 0:
        return math.inf
    extra = 0.0
    if x < 0:
        if x == math.floor(x):
            return math.inf
        extra = -math.pi / math.tan(math.pi * x)
        x = 1 - x
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10 + extra
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        p = 0.0
        for a in _PSI_ASYMPTOTIC:
            p = p * z + a           # (this file is compiled without fused multiply-adds)
        y = z * p
    return result + _log(x) - (0.5 / x) - y + extra


def _pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except (ValueError, OverflowError, ZeroDivisionError):
        return float(np.power(np.float64(x), np.float64(y)))


def _div(x: float, y: float) -> float:
    return float(np.float64(x) / np.float64(y))


# ---- autograd rows ----------------------------------------------------------------------------------

def _zeros(F, g):
    return F.zeros_like(g)


def _no_forward_ad(message: str):
    """The jvp column of an op forward mode refuses, in PyTorch's words."""
    def jvp(F, ts, xs, result, *args):
        raise NotImplementedError(message)
    return jvp


_NOT_YET = ("Trying to use forward AD with {} that does not support it because it has not been implemented yet.\n"
            "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml "
            "so that we can prioritize its implementation or submit a PR adding the implementation to derivatives.yaml")


def _binomial_backward(F, g):
    raise RuntimeError("derivative for aten::binomial is not implemented")


def _not_implemented_backward(F, g):
    raise RuntimeError("derivative for aten::bernoulli is not implemented")


# In-place fills record a node whose gradient is zero (PyTorch's `self: zeros_like(grad)`); torch.bernoulli
# of probabilities that require grad passes zeros back to them, and bernoulli(input, p) has no derivative.
# fmt: off
EXPONENTIAL       = Op("ExponentialBackward0", None, (), (_zeros,), quiet=True, jvp=_zero_tangent)
GEOMETRIC         = Op("GeometricBackward0",   None, (), (_zeros,), quiet=True, jvp=_zero_tangent)
CAUCHY            = Op("CauchyBackward0",      None, (), (_zeros,), quiet=True, jvp=_zero_tangent)
LOG_NORMAL        = Op("LogNormalBackward0",   None, (), (_zeros,), quiet=True, jvp=_zero_tangent)
BERNOULLI_SCALAR_ = Op("BernoulliBackward2",   None, (), (_zeros,), quiet=True, jvp=_zero_tangent)
BERNOULLI_TENSOR_ = Op("BernoulliBackward1",   None, (), (_zeros, _zeros), inputs=("self", "p"), fits=True,
                       quiet=True, jvp=lambda F, ts, xs, result: None if ts[0] is None else _zero_tangent(F, ts, xs, result))
BERNOULLI         = Op("BernoulliBackward0",   None, (), (_zeros,), quiet=True,
                       jvp=lambda F, ts, xs, result: F.zeros_like(ts[0]))
BERNOULLI_P       = Op("NotImplemented",       None, (), (_not_implemented_backward,), quiet=True,
                       jvp=lambda F, ts, xs, result: _not_implemented_backward(F, None))
POISSON           = Op("PoissonBackward0",     None, (), (_zeros,), quiet=True,
                       jvp=lambda F, ts, xs, result: F.zeros_like(ts[0]))
BINOMIAL          = Op("NotImplemented",       None, (), (_binomial_backward, _binomial_backward),
                       inputs=("count", "prob"), quiet=True,
                       jvp=_no_forward_ad("Trying to use forward AD with aten::binomial that does not support it."))
STANDARD_GAMMA    = Op("StandardGammaBackward0", None, ("self", "result"),
                       (lambda F, g, self, result: g * F.standard_gamma_grad(self, result),), quiet=True,
                       jvp=_no_forward_ad(_NOT_YET.format("_standard_gamma")))
# fmt: on

# _standard_gamma_grad itself has no derivative (PyTorch's not_implemented)
STANDARD_GAMMA_GRAD = Op("StandardGammaGradBackward0", None, (), (unimplemented("_standard_gamma_grad"),
                                                                    unimplemented("_standard_gamma_grad")),
                         inputs=("self", "output"), quiet=True, jvp=_no_forward_ad(_NOT_YET.format("_standard_gamma_grad")))


def standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """torch._standard_gamma_grad(alpha, x): the array kernel, recorded (for create_graph) as PyTorch's
    node without a derivative."""
    return apply(STANDARD_GAMMA_GRAD, standard_gamma_grad_array(alpha._a, x._a), (alpha, x))


# ---- dirichlet ---------------------------------------------------------------------------------------

def sample_dirichlet(alpha: Tensor, generator=None) -> Tensor:
    """torch._sample_dirichlet(alpha): a Gamma(alpha, 1) draw per element in double (row-major order), each
    divided by its row's ordered sum over the last dim, clamped to [min, 1 - ulp] in alpha's dtype."""
    g = _g(generator, "_sample_dirichlet")
    a = alpha._a
    if a.dtype.kind not in "fV" or a.dtype.char in "eE":
        raise _not_implemented("dirichlet", a.dtype)
    budget.check_tensor(a.shape, 8)
    return Tensor(_per_element(lambda: _dirichlet_values(g, a)))


def _dirichlet_values(g: rng.Generator, alphas: np.ndarray) -> np.ndarray:
    from gradcli.engine.cascade import sum_array
    tiny = float(np.finfo(np.float64).tiny)
    gammas = []
    with _Draws(g) as draws:
        for alpha in np.ascontiguousarray(alphas).reshape(-1).tolist():
            v = _gamma_one(draws, alpha, False)
            gammas.append(v if tiny < v else tiny)
    gamma = np.array(gammas, dtype=np.float64).reshape(alphas.shape)
    if gamma.ndim == 0:
        total = gamma
    else:
        total = sum_array(gamma, (gamma.ndim - 1,), keepdim=True)
    with np.errstate(all="ignore"):
        out = (gamma / total).astype(alphas.dtype)
    low, high = dtypes.finfo(alphas.dtype).tiny, np.nextafter(alphas.dtype.type(1), alphas.dtype.type(0))
    out = np.where(low < out, out, low)             # std::max(min, x): NaN becomes min
    return np.where(out < high, out, high).astype(alphas.dtype)


def dirichlet_grad_array(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """_dirichlet_grad: the scaled reparameterised gradient of each Beta(alpha, total - alpha) coordinate,
    element by element (float tensors in float where the kernel's template computes in its scalar type)."""
    a, b, c = np.broadcast_arrays(x, alpha, total)
    t = np.float32 if x.dtype == np.float32 else np.float64
    values = [_dirichlet_grad_one(t(p), t(q), t(r)) for p, q, r in
              zip(a.reshape(-1).tolist(), b.reshape(-1).tolist(), c.reshape(-1).tolist())]
    return np.array(values, dtype=x.dtype).reshape(a.shape)


def _scalar_log(v):
    """std::log of the scalar type: correctly rounded."""
    with np.errstate(all="ignore"):
        return v.dtype.type(np.log(np.float64(v)))


def _scalar_pow(v, e):
    with np.errstate(all="ignore"):
        return v.dtype.type(np.power(np.float64(v), np.float64(e)))


def _digamma_typed(x):
    """digamma_one<scalar_t, double>: x's own steps in its type (tan and log too), the sums in double."""
    t = x.dtype.type
    if x == 0:
        return t(np.inf)
    extra = np.float64(0.0)
    if x < 0:
        if x == np.floor(x):
            return t(np.inf)
        with np.errstate(all="ignore"):
            extra = np.float64(-t(math.pi) / t(np.tan(np.float64(t(math.pi) * x))))
        x = t(1) - x
    result = np.float64(0.0)
    while x < 10:
        result -= np.float64(t(1) / x)
        x = x + t(1)
    if x == 10:
        return t(result + np.float64(_PSI_10) + extra)
    y = np.float64(0.0)
    if x < np.float32(1.0e17):
        z = np.float64(1.0) / np.float64(x * x)
        p = np.float64(0.0)
        for a in _PSI_ASYMPTOTIC:
            p = p * z + a
        y = z * p
    return t(result + np.float64(_scalar_log(x)) - np.float64(t(0.5) / x) - y + extra)


def _beta_grad_alpha_small(x, alpha, beta):
    t = x.dtype.type
    with np.errstate(all="ignore"):
        factor = t(_digamma_typed(alpha) - _digamma_typed(t(alpha + beta)) - _scalar_log(x))
        numer = t(1)
        series = numer / alpha * (factor + t(1) / alpha)
        for i in range(1, 11):
            ti = t(i)
            numer = numer * ((ti - beta) * x / ti)
            denom = alpha + ti
            series = series + numer / denom * (factor + t(1) / denom)
        result = x * _scalar_pow(t(1) - x, -beta) * series
    return t(0) if result != result else result


def _beta_grad_beta_small(x, alpha, beta):
    t = x.dtype.type
    with np.errstate(all="ignore"):
        factor = t(_digamma_typed(t(alpha + beta)) - _digamma_typed(beta))
        numer, betas, dbetas = t(1), t(1), t(0)
        series = factor / alpha
        for i in range(1, 9):
            ti = t(i)
            numer = numer * (-x / ti)
            dbetas = dbetas * (beta - ti) + betas
            betas = betas * (beta - ti)
            series = series + numer / (alpha + ti) * (dbetas + factor * betas)
        result = -_scalar_pow(t(1) - x, t(1) - beta) * series
    return t(0) if result != result else result


def _beta_grad_alpha_mid(x: float, alpha: float, beta: float) -> float:
    """Rice's saddle point expansion for large alpha and beta, in double."""
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:
        poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = math.sqrt(2 * alpha / beta) * _pow(total, 1.5) * axbx * axbx
    term1 = _div(term1_num, term1_den)
    term2 = 0.5 * _log(alpha / (total * x))
    term3 = _div(math.sqrt(8 * alpha * beta / total), beta * x + alpha * (x - 1))
    term4_base = beta * _log(beta / (total * (1 - x))) + alpha * _log(alpha / (total * x))
    term4 = _pow(term4_base, -1.5)
    term1234 = term1 + term2 * (term3 + (term4 if x < mean else -term4))
    return stirling * prefactor * term1234


_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))))


def _dirichlet_grad_one(x, alpha, total):
    """dirichlet_grad_one: series near 0 and near 1, the saddle point for two large concentrations, else a
    rational correction of an analytic approximation (in double)."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        beta = total - alpha
        boundary = total * x * (t(1) - x)
        if x <= t(0.5) and boundary < t(2.5):
            return _beta_grad_alpha_small(x, alpha, beta)
        if x >= t(0.5) and boundary < t(0.75):
            return -_beta_grad_beta_small(t(1) - x, beta, alpha)
        x_, alpha_, total_ = float(x), float(alpha), float(total)
        beta_ = total_ - alpha_
        if alpha > 6 and beta > 6:
            return t(_beta_grad_alpha_mid(x_, alpha_, beta_))
        u = _log(x_)
        a = _log(alpha_) - u
        b = _log(total_) - a
        pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
        p = q = 0.0
        for i in range(3):
            for j in range(3):
                ua = pow_u[i] * pow_a[j]
                cp, cq = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
                p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
                q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
        # (digamma_one<scalar_t, ...> takes its argument in the scalar type)
        approx = x_ * (float(_digamma_typed(t(total_))) - float(_digamma_typed(t(alpha_)))) / beta_
        return t(_div(p, q) * approx)


def _dirichlet_backward(F, g, result, self):
    """_Dirichlet_backward: grad * (grad_output - (x * grad_output).sum(-1, True)), grad the _dirichlet_grad of
    x, concentration and its total; once_differentiable (computed without a graph under create_graph too)."""
    x, alpha = (result._a, self._a) if F.tensors else (result, self)
    g = g._a if F.tensors else g
    from gradcli.engine.cascade import sum_array
    last = (x.ndim - 1,)
    total = np.broadcast_to(sum_array(alpha, last, keepdim=True), alpha.shape)
    grad = dirichlet_grad_array(x, alpha, total)
    out = grad * (g - sum_array(x * g, last, keepdim=True))
    return Tensor(out) if F.tensors else out


DIRICHLET = Op("_DirichletBackward", None, ("result", "self"), (_dirichlet_backward,), quiet=True,
               jvp=_no_forward_ad("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD."))


def dirichlet_rsample(concentration: Tensor, generator=None) -> Tensor:
    """_Dirichlet.apply(concentration): the sample, recorded as PyTorch's custom function node."""
    if concentration._a.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    x = sample_dirichlet(concentration, generator)
    return apply(DIRICHLET, x._a, (concentration,))


# ---- binomial ----------------------------------------------------------------------------------------

def binomial(count, prob, generator=None) -> Tensor:
    """torch.binomial(count, prob): one Binomial(count, prob) draw per element of their broadcast, in
    row-major order, in their (common) dtype."""
    for name, value, position in (("count", count, 1), ("prob", prob, 2)):
        if value.__class__ is not Tensor:
            raise TypeError(f"binomial(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{_type_name(value)}")
    g = _g(generator, "binomial")
    c, p = count._a, prob._a
    if c.dtype.kind not in "fV":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_SCALAR_NAMES[c.dtype.name]}")
    if p.dtype != c.dtype:
        raise RuntimeError(f"Found dtype {_SCALAR_NAMES[p.dtype.name]} but expected {_SCALAR_NAMES[c.dtype.name]}")
    if c.dtype == np.float16:
        raise _not_implemented("binomial_cpu", c.dtype)
    shape = np.broadcast_shapes(c.shape, p.shape)
    budget.check_tensor(shape, c.dtype.itemsize)
    c, p = np.broadcast_to(c, shape), np.broadcast_to(p, shape)
    out = _per_element(lambda: _binomial_values(g, c, p))
    return runs_first(apply(BINOMIAL, out, (count, prob)))


def _binomial_values(g: rng.Generator, counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    t = counts.dtype.type
    with _Draws(g) as draws:
        values = [_binomial_one(draws, t(n), t(q)) for n, q in zip(counts.reshape(-1).tolist(), probs.reshape(-1).tolist())]
    return np.array(values, dtype=counts.dtype).reshape(counts.shape)


def _binomial_one(g: _Draws, count, prob):
    """sample_binomial: BTRS (Hormann's transformed rejection) when count * min(p, 1-p) >= 10, else the
    inversion by geometric gaps; the count's and probability's own steps in the tensor's type."""
    t = count.dtype.type
    with np.errstate(all="ignore"):
        if count <= 0.0 or prob <= 0.0:
            return t(0)
        if prob >= 1.0:
            return count
        if prob <= 0.5:
            return _btrs(g, count, prob) if count * prob >= 10.0 else _binomial_inversion(g, count, prob)
        if prob > 0.5:
            qprob = t(1.0 - float(prob))
            return count - (_btrs(g, count, qprob) if count * qprob >= 10.0 else _binomial_inversion(g, count, qprob))
        return t(np.nan)


def _binomial_inversion(g: _Draws, count, prob):
    t = count.dtype.type
    geom_sum, num_geom = 0.0, t(0)
    logprob = float(t(math.log1p(-float(prob))))
    while True:
        geom = math.ceil(_div(_log(g.uniform()), logprob)) if logprob != 0 else math.inf
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom = num_geom + t(1)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k < len(_STIRLING_TAIL):
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(g: _Draws, count, prob):
    t = count.dtype.type
    one = t(1)
    stddev = float(np.sqrt(count * prob * (one - prob)))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(prob / (one - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(np.floor((count + one) * prob))
    n = float(count)
    while True:
        u = g.uniform() - 0.5
        v = g.uniform()
        us = 0.5 - abs(u)
        x = (2 * a / us + b) * u + c
        k = t(math.floor(x) if math.isfinite(x) else x)      # (floor keeps an infinite count's inf and NaN)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(v * alpha / (a / (us * us) + b))
        kf = float(k)
        upper = ((m + 0.5) * _log((m + 1) / (r * (n - m + 1)))
                 + float(count + one) * _log((n - m + 1) / float(count - k + one))
                 + (kf + 0.5) * _log(r * float(count - k + one) / float(k + one))
                 + _stirling_tail(m) + _stirling_tail(n - m) - _stirling_tail(kf) - _stirling_tail(float(count - k)))
        if v <= upper:
            return k
