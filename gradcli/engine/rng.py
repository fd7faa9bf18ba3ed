"""Random streams: MT19937 generators reproducing PyTorch's CPU rand/randn/randint/randperm bit for bit."""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.addresses import address
from gradcli.engine.state import STATE

# The seed a fresh torch.Generator() starts from.
DEFAULT_GENERATOR_SEED = 67280421310721

_U64 = 1 << 64
_TWO_PI = 6.283185307179586          # 2*M_PI in double
_STATE_SIZE = 5056                   # sizeof(CPUGeneratorImplState) in PyTorch
_SCALAR_LIMIT = 16                   # below this many elements randn takes the scalar path
_TWO_M53 = 2.0 ** -53
_TWO_M24 = np.float32(2.0 ** -24)


def _f32(bits: int) -> np.float32:
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


# Constants of the float32 AVX2 normal kernel (Cephes-style log and sincos), given by bit pattern
# so that no decimal round trip can perturb them.
_LOG_P = [_f32(b) for b in (0x3d9021bb, 0xbdebd1b8, 0x3def251a, 0xbdfe5d4f, 0x3e11e9bf,
                            0xbe2aae50, 0x3e4cceac, 0xbe7ffffc, 0x3eaaaaaa)]
_LOG_Q1 = _f32(0xb95e8083)
_LOG_Q2 = _f32(0x3f318000)
_SQRTHF = _f32(0x3f3504f3)
_FOPI = _f32(0x3fa2f983)
_DP1, _DP2, _DP3 = _f32(0xbf490000), _f32(0xb97da000), _f32(0xb3222169)
_COS_C = [_f32(b) for b in (0x37ccf5ce, 0xbab6061a, 0x3d2aaaa5)]
_SIN_S = [_f32(b) for b in (0xb94ca1f9, 0x3c08839e, 0xbe2aaaa3)]
_TWO_PI_F32 = _f32(0x40c90fdb)
_ONE_F32 = np.float32(1.0)
_HALF_F32 = np.float32(0.5)
_MINUS_TWO_F32 = np.float32(-2.0)


# --------------------------------------------------------------------------------------------
# Exactly rounded fused multiply-add, which numpy lacks.
# --------------------------------------------------------------------------------------------

def _two_sum_err(a, b, s):
    """The exact rounding error of s = a + b (Knuth's TwoSum, valid without overflow)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def _round_to_odd_fix(s, err):
    """Where err != 0, move s one ulp towards err if its last mantissa bit is even.

    The result is s rounded to odd: it never sits on a boundary of any coarser format, so a later
    rounding to a narrower precision (float32, or a final double add) is as good as a single rounding.
    """
    bits = s.view(np.uint64)
    need = (err != 0) & ((bits & 1) == 0)
    if need.any():
        away = (err > 0) == (s > 0)                  # same sign: magnitude grows, so bits + 1
        step = np.where(away, np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF))
        bits = bits.copy()
        bits[need] += step[need]
        s = bits.view(np.float64)
    return s


_LOW29 = np.uint64(0x1FFFFFFF)
_HALF29 = np.uint64(0x10000000)
_EXP64 = np.uint64(0x7FF0000000000000)
_TINY32 = np.uint64((1023 - 125) << 52)     # below 2**-125: near float32's subnormal range


_GUARD_NONE, _GUARD_HALFWAY, _GUARD_ALL = 0, 1, 2


def _fma32(a, b, c, guard: int = _GUARD_ALL) -> np.ndarray:
    """float32 fma(a, b, c) rounded once, elementwise (arguments: float32 arrays or scalars).

    guard says which double-rounding hazards to look for: _GUARD_ALL everything; _GUARD_HALFWAY
    skips the one for results below 2**-125, for callers whose results provably never get there
    (exact zeros need no correction); _GUARD_NONE is for sums provably exact in double.
    """
    s = np.asanyarray(np.multiply(a, b, dtype=np.float64))   # exact: 24x24 bits fit in 53
    s += c                                          # one double rounding of the true sum
    if guard == _GUARD_NONE:
        return s.astype(np.float32)
    # Rounding to double and then to float32 is wrong only when the double lands exactly on a
    # float32 halfway point (low 29 bits 1000...0) while the true sum was not that point, or in the
    # float32 subnormal range where the halfway points sit elsewhere.  Both are rare: redo them.
    bits = s.view(np.uint64)
    sus = (bits & _LOW29) == _HALF29
    if guard == _GUARD_ALL:
        sus |= (bits & _EXP64) < _TINY32
    if np.count_nonzero(sus):
        idx = np.flatnonzero(sus)
        def pick(v):
            return np.broadcast_to(v, s.shape).reshape(-1)[idx].astype(np.float64)
        p = pick(a) * pick(b)
        cc = pick(c)
        ss = p + cc
        with np.errstate(invalid="ignore"):
            err = _two_sum_err(p, cc, ss)
        err = np.where(np.isfinite(ss), err, 0.0)
        s.reshape(-1)[idx] = _round_to_odd_fix(ss, err)
    return s.astype(np.float32)


_SPLIT = 134217729.0   # 2**27 + 1, Veltkamp's splitting constant for doubles


def _split(a):
    t = a * _SPLIT
    hi = t - (t - a)
    return hi, a - hi


def _fma64(a, b, c) -> np.ndarray:
    """float64 fma(a, b, c) rounded once, elementwise, on float64 arrays (broadcasting).

    Exact product by Dekker's TwoProduct, then Boldo and Melquiond's emulation: add the low parts
    with rounding to odd and the high parts normally; that final sum rounds exactly once.
    Elements whose magnitudes could break the splitting (huge, tiny or non-finite) go through
    exact rational arithmetic instead.
    """
    a, b, c = np.broadcast_arrays(np.asanyarray(a, np.float64), np.asanyarray(b, np.float64),
                                  np.asanyarray(c, np.float64))
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pl = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        th = c + p
        tl = _two_sum_err(c, p, th)
        v = tl + pl
        v = _round_to_odd_fix(v, _two_sum_err(tl, pl, v))
        # th itself where nothing is left to add: -0.0 + +0.0 would lose the sign fma gives (a*b and c both -0.0)
        out = np.where(v == 0, th, th + v)
        ap, aa, ab, ac = np.abs(p), np.abs(a), np.abs(b), np.abs(c)
        safe = (aa < 2.0 ** 990) & (ab < 2.0 ** 990) & (ac < 2.0 ** 1000) & (ap < 2.0 ** 1000) & \
               ((ap > 2.0 ** -900) | (aa == 0) | (ab == 0))
    if not safe.all():
        idx = np.flatnonzero(~safe.ravel())
        out = np.array(out, dtype=np.float64)
        flat = out.reshape(-1)
        af, bf, cf = a.reshape(-1), b.reshape(-1), c.reshape(-1)
        for i in idx.tolist():
            flat[i] = _fma_exact(float(af[i]), float(bf[i]), float(cf[i]))
    return out


def _fma_exact(a: float, b: float, c: float) -> float:
    """One double fma by rational arithmetic (for the rare operands the fast paths avoid)."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c           # infinities and NaNs: no rounding is involved
    if a == 0.0 or b == 0.0:
        return a * b + c           # exact product: signed-zero rules as for fma
    from fractions import Fraction
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return 0.0                 # exact cancellation gives +0 in round-to-nearest
    try:
        return float(exact)        # Fraction -> float rounds correctly (half to even)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def _fma_scalar(a: float, b: float, c: float) -> float:
    """One double fma on Python floats: exact product split in two, then fsum rounds once."""
    p = a * b
    if 2.0 ** -900 < abs(p) < 2.0 ** 1000 and abs(a) < 2.0 ** 990 and abs(b) < 2.0 ** 990 \
            and abs(c) < 2.0 ** 1000:
        t = a * _SPLIT
        ah = t - (t - a)
        al = a - ah
        t = b * _SPLIT
        bh = t - (t - b)
        bl = b - bh
        pl = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        r = math.fsum((p, pl, c))   # fsum is correctly rounded
        if r == 0.0:
            return 0.0
        return r
    return _fma_exact(a, b, c)


_fma_scalar_impl = getattr(math, "fma", None) or _fma_scalar   # Python >= 3.13 has it built in


# --------------------------------------------------------------------------------------------
# The float32 AVX2 normal kernel: Cephes log and sincos as the compiled kernel evaluates them.
# --------------------------------------------------------------------------------------------

def _log_avx2(u: np.ndarray) -> np.ndarray:
    """Natural log of float32 u in [2**-24, 1], step for step as the AVX2 kernel computes it."""
    ub = u.view(np.uint32)
    e = ((ub >> 23).astype(np.int32) - 126).astype(np.float32)       # float(E) + 1, exact
    m = ((ub & np.uint32(0x807fffff)) | np.uint32(0x3f000000)).view(np.float32)
    small = m < _SQRTHF
    e = np.where(small, e - _ONE_F32, e)
    x = m - _ONE_F32                                  # exact (Sterbenz)
    x = np.where(small, x + m, x)
    z = x * x
    y = _fma32(_LOG_P[0], x, _LOG_P[1], _GUARD_HALFWAY)
    for pk in _LOG_P[2:]:
        y = _fma32(y, x, pk, _GUARD_HALFWAY)
    y = x * y
    y = _fma32(y, z, e * _LOG_Q1, _GUARD_HALFWAY)
    y = y - _HALF_F32 * z
    x = x + y
    # e*Q2 has at most 14 significant bits above 2**-9 and |e| <= 25, while |x| >= 2**-24 or
    # e == 0, so the double sum spans at most 53 bits: exact, no halfway check needed.
    return _fma32(e, _LOG_Q2, x, _GUARD_NONE)


def _sincos_avx2(theta: np.ndarray):
    """(sin, cos) of float32 theta >= 0, step for step as the AVX2 kernel computes them."""
    x = theta
    j = (x * _FOPI).astype(np.int32)                 # truncation towards zero
    j = (j + 1) & ~1
    yf = j.astype(np.float32)
    # yf*DP1 is a multiple of 2**-8 below 8 and x is a multiple of 2**-24 whenever yf != 0
    # (theta >= pi/4), so this sum is exact in double.
    x = _fma32(yf, _DP1, x, _GUARD_NONE)
    x = _fma32(yf, _DP2, x, _GUARD_HALFWAY)
    x = _fma32(yf, _DP3, x, _GUARD_HALFWAY)
    z = x * x
    c = _fma32(_COS_C[0], z, _COS_C[1], _GUARD_HALFWAY)
    c = _fma32(c, z, _COS_C[2], _GUARD_HALFWAY)
    c = z * c
    c = _fma32(z, c, -(_HALF_F32 * z), _GUARD_HALFWAY)
    c = c + _ONE_F32
    s = _fma32(_SIN_S[0], z, _SIN_S[1], _GUARD_HALFWAY)
    s = _fma32(s, z, _SIN_S[2], _GUARD_HALFWAY)
    s = z * s
    s = _fma32(x, s, x, _GUARD_HALFWAY)
    swap = (j & 2) != 0
    sin = np.where(swap, c, s)
    cos = np.where(swap, s, c)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where(((j - 2) & 4) == 0, -cos, cos)
    return sin, cos


def _normal_blocks_f32(d: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Transform rows of 16 float32 uniforms into 16 normals each (AVX2 kernel)."""
    first, second = d[:, :8], d[:, 8:]
    radius = np.sqrt(_log_avx2(_ONE_F32 - first) * _MINUS_TWO_F32)
    sin, cos = _sincos_avx2(_TWO_PI_F32 * second)
    out = np.empty(d.shape, np.float32)
    mean_f, std_f = np.float32(mean), np.float32(std)
    if mean_f == 0 and std_f == 1:
        # fma(n, 1, 0) is n itself, except that -0 becomes +0: adding +0 does exactly that
        np.add(radius * cos, np.float32(0), out=out[:, :8])
        np.add(radius * sin, np.float32(0), out=out[:, 8:])
    else:
        out[:, :8] = _fma32(radius * cos, std_f, mean_f)
        out[:, 8:] = _fma32(radius * sin, std_f, mean_f)
    return out


def _map_to_array(fn, arr: np.ndarray) -> np.ndarray:
    """Apply a math-module (glibc) function element by element; numpy's own SIMD versions of
    log, sin and cos differ from glibc in the last bit on some inputs."""
    return np.fromiter(map(fn, arr.ravel().tolist()), np.float64, arr.size).reshape(arr.shape)


def _normal_blocks_f64(d: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Transform rows of 16 float64 uniforms into 16 normals each (glibc log, sin, cos)."""
    first, second = d[:, :8], d[:, 8:]
    radius = np.sqrt(-2.0 * _map_to_array(math.log, 1.0 - first))
    theta = _TWO_PI * second
    n1 = radius * _map_to_array(math.cos, theta)
    n2 = radius * _map_to_array(math.sin, theta)
    out = np.empty(d.shape, np.float64)
    out[:, :8] = n1
    out[:, 8:] = n2
    return _affine64(out, mean, std)


def _affine64(z: np.ndarray, mean: float, std: float) -> np.ndarray:
    """fma(z, std, mean) in double, rounded once."""
    if std == 1.0 and mean == 0.0:
        return z + 0.0          # the fma with +0 still turns -0 into +0
    return _fma64(z, std, mean)


def _cxx_double(x: float) -> str:
    """A double as C++ iostreams print it by default (like %g), for error messages."""
    return "%g" % x


# C++ type names as PyTorch's range-check messages spell them.
_CXX_INT_NAMES = {
    np.dtype(np.int64): "long", np.dtype(np.int32): "int", np.dtype(np.int16): "short",
    np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char", np.dtype(np.bool_): "bool",
}
_CXX_TYPE_NAMES = {
    np.dtype(np.int64): "int64_t", np.dtype(np.int32): "int32_t", np.dtype(np.int16): "int16_t",
    np.dtype(np.int8): "int8_t", np.dtype(np.uint8): "uint8_t",
}


def _int_bounds(dt: np.dtype):
    """The values an integer or bool dtype holds (random_ rejects from/to - 1 outside them)."""
    if dt == np.bool_:
        return 0, 1
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


_FLOAT_DIGITS = {"float32": (24, "float"), "float64": (53, "double"), "float16": (11, "c10::Half"), "bfloat16": (8, "c10::BFloat16")}


def _warn_float_range(dt: np.dtype, low: int, high: int) -> None:
    """random_ into floats: PyTorch warns when a bound lies past the integers the dtype holds exactly."""
    digits, name = _FLOAT_DIGITS.get(dt.name, (None, None))
    if digits is None or STATE.warn is None:
        return
    bound = 1 << digits
    for what, value, line in (("from", low, 110), ("to - 1", high - 1, 111)):
        if not -bound <= value <= bound:
            STATE.warn("UserWarning", f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                       f"limitations {name} can support discrete uniform distribution only within this range. "
                       "This warning will become an error in version 1.7 release, please fix the code in advance "
                       "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/DistributionTemplates.h:"
                       f"{line}.)")


def _float_dtype(dtype) -> np.dtype:
    """float32 or float64 (uniform and normal take float16 and bfloat16 through float32)."""
    dt = np.dtype(dtype)
    if dt != np.float32 and dt != np.float64:
        raise NotImplementedError("random floats of dtype %s are not supported" % dt)
    return dt


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------


# ---- the MT19937 engine ---------------------------------------------------------------------
# Small draws (every randn of a few elements, every manual_seed) run on a vectorised twister of our
# own, so that a script never pays for importing numpy.random (13 ms and 6.7 MB at start-up); big
# draws hand the state (the 624-word key and the read position) to numpy's C engine and take it back.

_UPPER, _LOWER, _MATRIX_A = 0x80000000, 0x7FFFFFFF, 0x9908B0DF
_BIG_DRAW = 20_000           # words: past this, numpy's C engine is worth its import


def _seeded_key(s32: int) -> np.ndarray:
    """The twister's 624 words after init_genrand(s32) (Matsumoto and Nishimura's seeding), as a fresh
    array: the generator twists its key in place."""
    return _seed_words(s32).copy()


@functools.lru_cache(maxsize=16)
def _seed_words(s32: int) -> np.ndarray:
    """_seeded_key's words, read-only and kept for the last few seeds: every Session seeds its generator
    and scripts seed again and again with the same few numbers, and the 623 steps in Python cost 0.3 ms."""
    mt = [s32]
    prev = s32
    for i in range(1, 624):
        prev = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
        mt.append(prev)
    words = np.array(mt, dtype=np.uint32)
    words.flags.writeable = False
    return words


def _twist(mt: np.ndarray) -> None:
    """Regenerate the 624 words in place. Word i reads word i+1 (not yet regenerated) and word i+397
    (mod 624): regenerated already once i >= 227, hence the three blocks, then the last word."""
    for lo, hi, src in ((0, 227, 397), (227, 454, 0), (454, 623, 227)):
        y = (mt[lo:hi] & _UPPER) | (mt[lo + 1:hi + 1] & _LOWER)
        mt[lo:hi] = mt[src:src + hi - lo] ^ (y >> 1) ^ ((y & 1) * np.uint32(_MATRIX_A))
    y = (int(mt[623]) & _UPPER) | (int(mt[0]) & _LOWER)
    mt[623] = int(mt[396]) ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)


def _temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> 11)
    y ^= (y << 7) & np.uint32(0x9D2C5680)
    y ^= (y << 15) & np.uint32(0xEFC60000)
    return y ^ (y >> 18)


def _c_engine(key: np.ndarray, pos: int):
    import numpy.random        # only for big draws: see above
    bitgen = numpy.random.MT19937(0)
    bitgen.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
    return bitgen


class Generator:
    """One PyTorch CPU generator: an MT19937 engine plus the one-double normal cache."""

    __slots__ = ("_seed", "_key", "_pos", "_cache")

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {address(self)}>"

    @property
    def device(self):
        """Every generator gradcli makes is a CPU one (torch.Generator refuses other devices)."""
        from gradcli.engine.tensor import _CPU
        return _CPU

    def __init__(self, seed: int | None = None):
        self._key = None            # the twister's 624 words, and the next one to read (624: twist first)
        self._pos = 624
        self._cache: float | None = None
        self._seed = 0
        self.manual_seed(DEFAULT_GENERATOR_SEED if seed is None else seed)

    # ---- seeding and state -----------------------------------------------------------------

    def manual_seed(self, seed) -> "Generator":
        s = int(seed)
        if not -(1 << 63) <= s < _U64:
            raise ValueError("Overflow when unpacking long long")
        s %= _U64
        self._key = _seeded_key(s & 0xFFFFFFFF)      # only the low 32 bits reach the twister
        self._pos = 624
        self._seed = s
        self._cache = None
        return self

    def seed(self) -> int:
        if STATE.replay is not None:            # a --check-grads replay: the same seeds in every replay
            return self.manual_seed(STATE.replay.next_seed())
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> np.ndarray:
        """The state as torch.get_rng_state() lays it out: 5056 bytes (uint8) of a C struct.

        Fields: initial seed (u64), left (i32), seeded (i32), next (u64), the 624 twister words
        (each widened to u64), normal_x, normal_y, normal_rho (f64), normal_is_valid (i32), then
        a float cache and its flag that this PyTorch leaves at zero.  The double normal cache
        travels in normal_y.
        """
        key, pos = self._key, self._pos
        # The twister regenerates its block when the read index reaches 624.  PyTorch counts
        # "left" down to the next regeneration; straight after seeding it reports next = 0
        # rather than 624 (same future stream, different bytes).
        nxt = 0 if pos == 624 and self._is_freshly_seeded(key) else pos
        buf = np.zeros(_STATE_SIZE, dtype=np.uint8)
        head = np.array([self._seed], dtype="<u8").tobytes() + \
            np.array([625 - pos, 1], dtype="<i4").tobytes() + np.array([nxt], dtype="<u8").tobytes()
        buf[:24] = np.frombuffer(head, dtype=np.uint8)
        buf[24:24 + 624 * 8] = key.astype("<u8").view(np.uint8)
        if self._cache is not None:
            buf[5024:5032] = np.array([self._cache], dtype="<f8").view(np.uint8)
            buf[5040:5044] = np.array([1], dtype="<i4").view(np.uint8)
        return buf

    def set_state(self, state) -> "Generator":
        """Restore a state produced by get_state() (or by torch.get_rng_state())."""
        buf = np.asanyarray(state)
        if buf.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        buf = np.ascontiguousarray(buf).reshape(-1)
        if buf.size != _STATE_SIZE:
            raise RuntimeError("Expected a CPUGeneratorImplState of size %d but found the input RNG "
                               "state size to be %d" % (_STATE_SIZE, buf.size))
        seed = int(buf[0:8].view("<u8")[0])
        left = int(buf[8:12].view("<i4")[0])
        nxt = int(buf[16:24].view("<u8")[0])
        key = buf[24:24 + 624 * 8].view("<u8").astype(np.uint32)
        pos = 624 if left == 1 else min(nxt, 624)
        self._key, self._pos = key.copy(), pos
        self._seed = seed
        valid = int(buf[5040:5044].view("<i4")[0])
        self._cache = float(buf[5024:5032].view("<f8")[0]) if valid else None
        return self

    def _is_freshly_seeded(self, key: np.ndarray) -> bool:
        """Whether key is still the unregenerated block that seeding s32 produces."""
        if int(key[0]) != self._seed & 0xFFFFFFFF:
            return False
        return bool(np.array_equal(_seeded_key(self._seed & 0xFFFFFFFF), key))

    # ---- raw draws -------------------------------------------------------------------------

    def _words(self, k: int) -> np.ndarray:
        """k raw 32-bit twister outputs, as uint64."""
        return self._words32(k).astype(np.uint64)

    def _words32(self, k: int) -> np.ndarray:
        """k raw 32-bit twister outputs, as uint32."""
        if k >= _BIG_DRAW:
            bitgen = _c_engine(self._key, self._pos)
            # randint over the full uint32 range hands out the raw words, straight into uint32
            import numpy.random
            out = numpy.random.RandomState(bitgen).randint(0, 1 << 32, size=k, dtype=np.uint32)
            state = bitgen.state["state"]
            self._key, self._pos = state["key"].astype(np.uint32), int(state["pos"])
            return out
        key, pos = self._key, self._pos
        parts = []
        while k > 0:
            if pos == 624:
                key = key.copy()            # get_state() may hold the previous block
                _twist(key)
                pos = 0
            take = min(k, 624 - pos)
            parts.append(_temper(key[pos:pos + take]))
            pos += take
            k -= take
        self._key, self._pos = key, pos
        if not parts:
            return np.empty(0, dtype=np.uint32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _u53(self, k: int) -> np.ndarray:
        """k float64 uniforms in [0, 1) from 64-bit draws: the low 53 bits times 2**-53."""
        w = self._words32(2 * k)
        # high 21 bits from the first word, low 32 from the second; the sum is exact
        return (w[0::2] & np.uint32(0x1FFFFF)).astype(np.float64) * 2.0 ** -21 + \
            w[1::2].astype(np.float64) * _TWO_M53

    def _u24(self, k: int) -> np.ndarray:
        """k float32 uniforms in [0, 1): the low 24 bits of one word times 2**-24."""
        return (self._words32(k) & np.uint32(0xFFFFFF)).astype(np.float32) * _TWO_M24

    # ---- uniform ---------------------------------------------------------------------------

    def rand(self, shape: tuple, dtype=np.float32) -> np.ndarray:
        """uniform_(0, 1): one uniform per element, in memory order."""
        if STATE.vmap is not None:
            return STATE.vmap.random(lambda s: self.rand(s, dtype), shape)
        dt = _float_dtype(dtype)
        n = math.prod(shape)
        x = self._u24(n) if dt == np.float32 else self._u53(n)
        return x.astype(dt, copy=False).reshape(shape)

    def uniform(self, shape, dtype, low: float, high: float) -> np.ndarray:
        """uniform_(low, high): fma(x, high - low, low) rounded once; high itself maps to low."""
        if STATE.vmap is not None:
            return STATE.vmap.random(lambda s: self.uniform(s, dtype, low, high), shape)
        half = np.dtype(dtype).itemsize == 2          # float16 or bfloat16
        dt = np.dtype(dtype) if half else _float_dtype(dtype)
        low, high = float(low), float(high)
        if dt != np.float64:
            top = float(dtypes.finfo(dt).max)
            name = ("c10::BFloat16" if dt.kind == "V" else "c10::Half") if half else "float"
            if not -top <= low <= top:
                raise RuntimeError("from is out of bounds for " + name)
            if not -top <= high <= top:
                raise RuntimeError("to is out of bounds for " + name)
        if not low <= high:
            raise RuntimeError("uniform_ expects to return a [from, to) range, but found from=%s > to=%s"
                               % (_cxx_double(low), _cxx_double(high)))
        limit = float(dtypes.finfo(dt).max)
        if high - low > limit:
            raise RuntimeError(
                "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%s and "
                "from=%s which result in to-from to exceed the limit"
                % (("BFloat16" if dt.kind == "V" else "Half") if half else "Float" if dt == np.float32 else "Double",
                   _cxx_double(high),
                   _cxx_double(low)))
        if half:
            # computed in float32 and rounded; a value that rounds to `high` becomes `low`, as `high` itself does
            v = self.uniform(shape, np.float32, low, high).astype(dt)
            v[v == dt.type(high)] = dt.type(low)
            return v
        n = math.prod(shape)
        if dt == np.float32:
            f, t = np.float32(low), np.float32(high)
            span = np.float32(t - f)
            x = self._u24(n)
            if f == 0 and span == 1:
                v = x
            else:
                v = _fma32(x, span, f)
                v[v == t] = f
        else:
            f, t = low, high
            span = t - f
            x = self._u53(n)
            if f == 0.0 and span == 1.0:
                v = x
            else:
                v = _fma64(x, span, f)
                v[v == t] = f
        return v.astype(dt, copy=False).reshape(shape)

    # ---- normal ----------------------------------------------------------------------------

    def randn(self, shape: tuple, dtype=np.float32, contiguous: bool = True) -> np.ndarray:
        return self.normal(shape, dtype, 0.0, 1.0, contiguous)

    def normal(self, shape, dtype, mean: float = 0.0, std: float = 1.0,
               contiguous: bool = True) -> np.ndarray:
        """normal_(mean, std) over a fresh tensor of this shape, values in memory order.

        contiguous=False selects the scalar path whatever the size, as PyTorch does for
        non-contiguous targets (transposed views, channels-last *_like outputs).
        """
        if STATE.vmap is not None:
            return STATE.vmap.random(lambda s: self.normal(s, dtype, mean, std, contiguous), shape)
        mean, std = float(mean), float(std)
        if not std >= 0.0:
            raise RuntimeError("normal expects std >= 0.0, but found std %s" % _cxx_double(std))
        if np.dtype(dtype).itemsize == 2:
            # PyTorch 2.13 computes float16 (and bfloat16) normals in float32, rounded at the end; its blocks of 16
            # draw their uniforms block by block, so the redone last block takes the 16 draws after the whole blocks'
            n = math.prod(shape)
            if n >= _SCALAR_LIMIT and contiguous:
                out = self._normal_block(n, np.dtype(np.float32), mean, std, per_block=True)
            else:
                out = self._normal_scalar(n, mean, std).astype(np.float32)
            return out.astype(dtype).reshape(shape)
        dt = _float_dtype(dtype)
        n = math.prod(shape)
        if n >= _SCALAR_LIMIT and contiguous:
            out = self._normal_block(n, dt, mean, std)
        else:
            out = self._normal_scalar(n, mean, std)
        return out.astype(dt, copy=False).reshape(shape)

    def _normal_scalar(self, n: int, mean: float, std: float) -> np.ndarray:
        """Element by element in double with the Box-Muller pair cache (the < 16 path)."""
        vals = []
        if n and self._cache is not None:
            vals.append(self._cache)
            self._cache = None
        pairs = (n - len(vals) + 1) // 2
        if pairs:
            w = self._words(4 * pairs).tolist()
            log1p, sqrt, sin, cos = math.log1p, math.sqrt, math.sin, math.cos
            for k in range(0, 4 * pairs, 4):
                u1 = (((w[k] & 0x1FFFFF) << 32) | w[k + 1]) * _TWO_M53
                u2 = (((w[k + 2] & 0x1FFFFF) << 32) | w[k + 3]) * _TWO_M53
                radius = sqrt(-2.0 * log1p(-u2))
                theta = _TWO_PI * u1
                vals.append(radius * cos(theta))
                vals.append(radius * sin(theta))
            if len(vals) > n:
                self._cache = vals.pop()
        if std == 1.0 and mean == 0.0:
            return np.array(vals, dtype=np.float64) + 0.0
        if n > 32:
            return _fma64(np.array(vals, dtype=np.float64), std, mean)
        fma = _fma_scalar_impl
        return np.array([fma(v, std, mean) for v in vals], dtype=np.float64)

    def _normal_block(self, n: int, dt: np.dtype, mean: float, std: float, per_block: bool = False) -> np.ndarray:
        """The vectorised path: blocks of 16 uniforms, the tail redone with 16 fresh ones. The uniforms are
        drawn for every element first (float32, float64), or block by block (`per_block`: float16), where the
        elements past the last whole block get no draw of their own."""
        f32 = dt == np.float32
        tail = n % 16 != 0
        nb = n // 16
        drawn = 16 * (nb + tail) if per_block else n + 16 * tail
        d = self._u24(drawn) if f32 else self._u53(drawn)
        if tail and not per_block:
            rows = np.concatenate((d[:nb * 16], d[n:])).reshape(nb + 1, 16)
        else:
            rows = d.reshape(nb + tail, 16)
        z = _normal_blocks_f32(rows, mean, std) if f32 else _normal_blocks_f64(rows, mean, std)
        out = np.empty(n, z.dtype)
        out[:nb * 16] = z[:nb].reshape(-1)
        if tail:
            out[n - 16:] = z[nb]
        return out

    # ---- integers --------------------------------------------------------------------------

    def randint(self, low: int, high: int, shape, dtype=np.int64) -> np.ndarray:
        """random_(low, high): one draw per element, modulo the range (bias and all)."""
        if STATE.vmap is not None:
            return STATE.vmap.random(lambda s: self.randint(low, high, s, dtype), shape)
        dt = np.dtype(dtype)
        low, high = int(low), int(high)
        if low >= high:
            raise RuntimeError("random_ expects 'from' to be less than 'to', but got from=%d >= to=%d"
                               % (low, high))
        if dt.kind in "fV":
            _warn_float_range(dt, low, high)
        if dt.kind in "iub":
            lo_b, hi_b = _int_bounds(dt)
            name = _CXX_INT_NAMES.get(dt, str(dt))
            if not lo_b <= low <= hi_b:
                raise RuntimeError("from is out of bounds for %s" % name)
            if not lo_b <= high - 1 <= hi_b:
                raise RuntimeError("to - 1 is out of bounds for %s" % name)
        span = high - low
        if span > _U64:
            raise RuntimeError("Overflow when unpacking long long")
        n = math.prod(shape)
        if span >= 1 << 28:
            w = self._words(2 * n)
            v = (w[0::2] << np.uint64(32)) | w[1::2]
            if span < _U64:
                v = v % np.uint64(span)
            else:
                low = 0     # the full 64-bit range is the raw draw itself, with no offset
        else:
            v = self._words(n) % np.uint64(span)
        r = (v + np.uint64(low % _U64)).view(np.int64)       # wraps like int64 arithmetic
        if dt == np.bool_:
            r = r != 0
        return r.astype(dt, copy=False).reshape(shape)

    def randperm(self, n: int, dtype=np.int64) -> np.ndarray:
        """Fisher-Yates driven by 32-bit draws (64-bit inside-out shuffle for huge n)."""
        if STATE.vmap is not None:          # one permutation per element: no batched form
            return STATE.vmap.random(lambda s: self.randperm(n, dtype), None)
        dt = np.dtype(dtype)
        n = int(n)
        if n < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: [%d]" % (n, n))
        if dt == np.bool_:
            raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
        if dt.kind in "iu" and n > 0 and n - 1 > np.iinfo(dt).max:
            raise RuntimeError("value cannot be converted to type %s without overflow"
                               % _CXX_TYPE_NAMES.get(dt, str(dt)))
        if n < 214748364:
            a = list(range(n))
            if n > 1:
                count = n - 1
                base = np.arange(count, dtype=np.uint64)
                z = (self._words(count) % (np.uint64(n) - base) + base).tolist()
                for i, k in enumerate(z):
                    a[i], a[k] = a[k], a[i]
            return np.array(a, dtype=np.int64).astype(dt, copy=False)
        # Inside-out variant for very large n (read from the source, not verified).
        a = np.empty(n, dtype=np.int64)
        chunk = 1 << 20
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            w = self._words(2 * m)
            r = ((w[0::2] << np.uint64(32)) | w[1::2]) % (np.arange(start, start + m,
                                                                    dtype=np.uint64) + np.uint64(1))
            for off, zk in enumerate(r.tolist()):
                i = start + off
                a[i] = a[zk]
                a[zk] = i
        return a.astype(dt, copy=False)


def _fresh_default() -> Generator:
    g = Generator()
    g.seed()        # PyTorch seeds its default generator from the OS at start-up
    return g


default_generator: Generator = _fresh_default()
STATE.generator = default_generator


Generator.__name__ = "torch._C.Generator"      # (in CPython's own messages, as PyTorch's C type)
