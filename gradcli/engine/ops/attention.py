"""F.scaled_dot_product_attention on the CPU: PyTorch 2.13's choice between its flash-attention kernel and the
composite math path, the row ScaledDotProductFlashAttentionForCpuBackward0 with that kernel's forward and
backward, and SafeSoftmaxBackward0 (the math path's softmax, which gives rows masked out entirely zeros).

The choice (sdp_utils_cpp.cpp, use_flash_attention_cpp): the flash kernel takes query, key and value that are
all 4-d, of one batch size and one head count, with the same head size, no empty sequence, a last dim of
stride 1, dtype float32 or float64, dropout_p not above 0 and a mask that is absent, or 2-d or 4-d broadcasting
to (batch, heads, L, S) and not requiring grad. Everything else runs the math path, composed here from the ops
PyTorch composes it from (so grad_fn chains print as PyTorch's): q * sqrt(scale), k.transpose(-2, -1) *
sqrt(scale), matmul, the mask added, _safe_softmax, dropout (always in training mode), matmul.

The flash kernel (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp) is followed step for step: query blocks of
32 rows (64 from 192 query positions, 256 from 768), key blocks of 512, q @ kᵀ as a product of the block
matrices, the scale applied (fused with the mask's add when there is a mask), the running maximum and the
online softmax, exp(x - max) in the kernel's vector body by PyTorch's own polynomial exp_u20 (float32; float64's
is the library exp) and in its scalar tail by the C library's exp, the sums in the vector lanes' order, then the
product with v, 1 / sum and the stored log-sum-exp. The vector width is this machine's kernel build, AVX2 (8
float32, 4 float64 lanes). The products go through linalg.matprod (MKL's order where it is known). The
backward rebuilds the probabilities from the log-sum-exp with the library exp, as the kernel does.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget, elementary, ops
from gradcli.engine.ops import arith, arrange, elementwise, linalg, nn, reduce, shape
from gradcli.engine.recording import autocast_policy, Op, apply, wrap_dim
from gradcli.engine.rng import _fma32, _fma64
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_F32 = np.dtype(np.float32)
_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}     # FlashAttentionKernel.cpp's AVX2 build
_KV_SPLIT = 512
_BACKWARD = "_scaled_dot_product_flash_attention_for_cpu_backward"


def _f32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(np.float32)[()]


# exp_u20's constants (vec256_float.h): its Taylor-like coefficients as float literals, log2(e), ln(2) and
# the range bounds as bit patterns
_C1, _C2, _C3, _C4, _C5 = (np.float32(c) for c in (0.999999701, 0.499991506, 0.166676521, 0.0418978221,
                                                    0.00828929059))
_LOG2E, _LN2, _LN_MIN, _LN_MAX = _f32(0x3fb8aa3b), _f32(0x3f317218), _f32(0xc2aeac50), _f32(0x42b17218)


def exp_u20(x: np.ndarray) -> np.ndarray:
    """PyTorch's float32 Vectorized::exp_u20: exp(x) = 2^n * p(r) with n = floor(x log2(e) + 1/2), r = x - n ln 2
    (one fused step), p a degree-5 polynomial by fused Horner steps, 2^(n-1) built from its bits, times 2."""
    small = x < _LN_MIN
    src = np.maximum(np.minimum(x, _LN_MAX), _LN_MIN)
    fx = np.floor(_fma32(src, _LOG2E, np.float32(0.5)))
    r = _fma32(-fx, _LN2, src)
    p = _fma32(r, _C5, _C4)
    for c in (_C3, _C2, _C1, np.float32(1)):
        p = _fma32(r, p, c)
    n = (fx - np.float32(1)).astype(np.int32)
    two_n = ((n + 127) << 23).astype(np.int32).view(np.float32)
    two_n = np.where(small, np.float32(0), two_n)
    return (p * two_n) * np.float32(2)


def _vector_exp(x: np.ndarray) -> np.ndarray:
    """The exp of the kernel's vector body: exp_u20 for float32, the vector library's exp for float64."""
    return exp_u20(x) if x.dtype == _F32 else elementary.exp(x)


def _lane_sum(a: np.ndarray) -> np.ndarray:
    """vec_reduce_all(+) of vector accumulators `a` (..., lanes): float32 by AVX2's shuffle tree (lane i + lane
    i+4, then i+2, then i+1), float64 left to right."""
    if a.dtype == _F32:
        a = a[..., :4] + a[..., 4:]
        a = a[..., :2] + a[..., 2:]
        return a[..., 0] + a[..., 1]
    total = a[..., 0]
    for j in range(1, a.shape[-1]):
        total = total + a[..., j]
    return total


def _exp_sum(x: np.ndarray, row_max: np.ndarray) -> tuple:
    """_exp_reduce_sum_fusion_kernel on rows x (..., n): exp(x - max) and the rows' sums (vector body: lane
    accumulators from zero, reduced, then the scalar tail added one by one)."""
    n = x.shape[-1]
    lanes = _LANES[x.dtype]
    body = n - n % lanes
    shifted = x - row_max[..., None]
    e = np.empty_like(shifted)
    e[..., :body] = _vector_exp(shifted[..., :body])
    e[..., body:] = elementary.exp(shifted[..., body:])
    acc = np.zeros(x.shape[:-1] + (lanes,), x.dtype)
    for start in range(0, body, lanes):
        acc += e[..., start:start + lanes]
    total = _lane_sum(acc)
    for j in range(body, n):
        total = total + e[..., j]
    return e, total


def _fma(a, b, c):
    return _fma32(a, b, c) if np.result_type(a, b, c) == _F32 else _fma64(a, b, c)


def _masked(qk: np.ndarray, factor, mask: np.ndarray) -> np.ndarray:
    """_scale_attn_mask_fusion_kernel: qk * factor + mask, fused. A float mask on float64 scores steps its
    vector loop by the mask's 8 floats but converts and stores only 4 doubles a step, so in each whole group
    of 8 positions the last 4 keep their scores as they were (PyTorch 2.13's kernel; the scalar tail is whole)."""
    out = _fma(qk, factor, mask.astype(qk.dtype))
    if qk.dtype == np.float64 and mask.dtype == _F32:
        n = qk.shape[-1]
        skipped = (np.arange(n) % 8 >= 4) & (np.arange(n) < n - n % 8)
        out[..., skipped] = qk[..., skipped]
    return out


def _splits(q_len: int) -> int:
    """The kernel's query block size, chosen by the query length (the key block is always 512)."""
    return 256 if q_len >= 768 else 64 if q_len >= 192 else 32


def _products(x: np.ndarray, y: np.ndarray, ta: bool = False, tb: bool = False) -> np.ndarray:
    """x @ y for each matrix of two (B, H, ., .) batches, where `ta`/`tb` say the operand is passed transposed
    (x or y is then the untransposed array): one BLAS product per matrix in the kernel, here one batched
    linalg.matprod over B * H matrices, which sums each matrix as mm's rules say."""
    lead = x.shape[:2]
    xs = x.reshape((-1,) + x.shape[2:])
    ys = y.reshape((-1,) + y.shape[2:])
    out = linalg.matprod(np.swapaxes(xs, -1, -2) if ta else xs, np.swapaxes(ys, -1, -2) if tb else ys)
    return out.reshape(lead + out.shape[1:])


def _causal_cut(m: int, n: int, rows: int, cols: int) -> np.ndarray:
    """The positions (row, col) of a block at query m and key n that is_causal masks: key past the query."""
    return (n + np.arange(cols))[None, :] > (m + np.arange(rows))[:, None]


def flash_forward(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask, causal: bool, scale: float) -> tuple:
    """cpu_flash_attention on (B, H, L, E) arrays: the output and the log-sum-exp (B, H, L)."""
    dt = q.dtype
    B, H, L, E = q.shape
    S = k.shape[2]
    factor = dt.type(scale)
    out = np.empty(q.shape, dt)
    lse = np.empty((B, H, L), dt)
    if mask is not None:
        mask = np.broadcast_to(mask, (B, H, L, S))
    q_split = min(_splits(L), L)
    kv_split = min(_KV_SPLIT, S)
    neg_inf = dt.type(-np.inf)
    for m in range(0, L, q_split):
        rows = min(q_split, L - m)
        qb = q[:, :, m:m + rows]
        row_max = np.full((B, H, rows), neg_inf)
        row_sum = np.zeros((B, H, rows), dt)
        dst = np.zeros((B, H, rows, E), dt)
        keys = min(m + rows, S) if causal else S
        for n in range(0, keys, kv_split):
            cols = min(kv_split, S - n)
            qk = _products(qb, k[:, :, n:n + cols], tb=True)
            if causal and keys - n <= kv_split:
                qk[..., _causal_cut(m, n, rows, cols)] = neg_inf
            if mask is not None:
                qk = _masked(qk, factor, mask[:, :, m:m + rows, n:n + cols])
            else:
                qk = qk * factor
            block_max = np.maximum(row_max, qk.max(axis=-1))
            dead = block_max == neg_inf
            e, block_sum = _exp_sum(qk, np.where(dead, dt.type(0), block_max))
            e[dead] = 0
            factor_old = elementary.exp(row_max - np.where(dead, dt.type(0), block_max))
            new_sum = _fma(factor_old, row_sum, block_sum)
            row_sum = np.where(dead, row_sum, new_sum)
            if n > 0:
                dst = np.where(dead[..., None], dst, dst * factor_old[..., None])
            row_max = np.where(dead, row_max, block_max)
            product = _products(e, v[:, :, n:n + cols])
            dst = product if n == 0 else dst + product
        row_max = np.where(row_max == neg_inf, dt.type(0), row_max)
        row_sum = np.where(row_sum == 0, dt.type(1), row_sum)
        out[:, :, m:m + rows] = dst * (dt.type(1) / row_sum)[..., None]
        lse[:, :, m:m + rows] = row_max + elementary.log(row_sum)
    return out, lse


def _row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """vec::map2_reduce_all(x * y, x + y) along the last dim: the products rounded, lane accumulators started
    by the first vector, a short last vector added into the low lanes, then vec_reduce_all; a row shorter
    than one vector is summed left to right."""
    p = a * b
    n = p.shape[-1]
    lanes = _LANES[p.dtype]
    if n < lanes:
        total = p[..., 0] if n else np.zeros(p.shape[:-1], p.dtype)
        for j in range(1, n):
            total = total + p[..., j]
        return total
    acc = p[..., :lanes].copy()
    body = n - n % lanes
    for start in range(lanes, body, lanes):
        acc += p[..., start:start + lanes]
    if body < n:
        acc[..., :n - body] += p[..., body:]
    return _lane_sum(acc)


def flash_backward(g, q, k, v, out, lse, mask, causal: bool, scale: float) -> tuple:
    """cpu_flash_attention_backward: the gradients of query, key and value."""
    dt = q.dtype
    B, H, L, E = q.shape
    S = k.shape[2]
    factor = dt.type(scale)
    g = np.ascontiguousarray(g)
    if mask is not None:
        mask = np.broadcast_to(mask, (B, H, L, S))
    gq, gk, gv = np.zeros(q.shape, dt), np.zeros(k.shape, dt), np.zeros(v.shape, dt)
    q_split = min(_splits(L), L)
    kv_split = min(_KV_SPLIT, S)
    for m in range(0, L, q_split):
        rows = min(q_split, L - m)
        qb, gb = q[:, :, m:m + rows], g[:, :, m:m + rows]
        dsum = _row_dot(gb, out[:, :, m:m + rows])
        keys = min(m + rows, S) if causal else S
        for n in range(0, keys, kv_split):
            cols = min(kv_split, S - n)
            kb, vb = k[:, :, n:n + cols], v[:, :, n:n + cols]
            attn = _products(qb, kb, tb=True) * factor
            if mask is not None:
                attn = _masked(attn, dt.type(1), mask[:, :, m:m + rows, n:n + cols])
            attn = elementary.exp(attn - lse[:, :, m:m + rows, None])
            if causal and keys - n <= kv_split:
                attn[..., _causal_cut(m, n, rows, cols)] = 0
            gv[:, :, n:n + cols] = gv[:, :, n:n + cols] + _products(attn, gb, ta=True)
            grad_attn = _products(gb, vb, tb=True)
            grad_attn = attn * (grad_attn - dsum[..., None])
            gq[:, :, m:m + rows] = gq[:, :, m:m + rows] + _products(grad_attn, kb) * factor
            gk[:, :, n:n + cols] = gk[:, :, n:n + cols] + _products(grad_attn, qb, ta=True) * factor
    return gq, gk, gv


def _flash_grad(which: int):
    def formula(F, g, query, key, value, result, logsumexp, attn_mask, dropout_p, is_causal, scale):
        g_, q, k, v, out, lse, mask = (x._a if x.__class__ is Tensor else x
                                        for x in (g, query, key, value, result, logsumexp, attn_mask))
        grads = flash_backward(g_, q, _heads(k, q.shape[1]), _heads(v, q.shape[1]), out, lse, mask, is_causal,
                               _scale_of(q, scale))
        if which and k.shape[1] != q.shape[1]:          # a shared head's gradient: its group's, added in order
            grouped = grads[which].reshape(k.shape[:2] + (q.shape[1] // k.shape[1],) + k.shape[2:])
            total = grouped[:, :, 0]
            for j in range(1, grouped.shape[2]):
                total = total + grouped[:, :, j]
            grads = grads[:which] + (total,) + grads[which + 1:]
        if F.tensors:       # PyTorch has no formula for the backward kernel: a node that refuses to run
            return apply(elementwise.NOT_IMPLEMENTED, grads[which], (g, query), (_BACKWARD,))
        return grads[which]
    return formula


def _safe_softmax_grad(F, g, result, dim):
    """_safe_softmax's derivative is softmax's (_softmax_backward_data), rows of zeros included; `dim` is kept
    as given (PyTorch shows the saved -1 as its unsigned 64 bits)."""
    return F.softmax_backward(g, result, (dim % len(result.shape),))


def _flash_jvp(F, tangents, inputs, result, *args):
    raise NotImplementedError("Trying to use forward AD with _scaled_dot_product_flash_attention_for_cpu that does "
                              "not support it because it has not been implemented yet.\nPlease file an issue to "
                              "PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml "
                              "so that we can prioritize its implementation or submit a PR adding the implementation "
                              "to derivatives.yaml")


def _safe_softmax_jvp(F, tangents, inputs, result, dim):
    """result * (tangent - sum(result * tangent)) along dim: zeros for the rows masked out entirely."""
    t = tangents[0]
    return result * (t - reduce.reduce_sum(result * t, (dim % inputs[0]._a.ndim,), True))


# fmt: off
FLASH        = Op("ScaledDotProductFlashAttentionForCpuBackward0", None,
                  ("query", "key", "value", "result", "logsumexp", "attn_mask", "dropout_p", "is_causal", "scale"),
                  (_flash_grad(0), _flash_grad(1), _flash_grad(2)),
                  inputs=("query", "key", "value"), saves_tensors=True, quiet=True, jvp=_flash_jvp)
SAFE_SOFTMAX = Op("SafeSoftmaxBackward0", None, ("result", "dim"), (_safe_softmax_grad,), quiet=True,
                  jvp=_safe_softmax_jvp)
# fmt: on


def _scale_of(q: np.ndarray, scale) -> float:
    """sdp::calculate_scale: the given scale, else 1 / sqrt(E), in double."""
    if scale is not None:
        return scale
    return 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] else math.inf


def safe_softmax(a: Tensor, dim: int) -> Tensor:
    """at::_safe_softmax: softmax along `dim`, with rows that are -inf throughout giving zeros."""
    x = a._a
    d = dim % x.ndim
    dead = np.all(x == -np.inf, axis=d, keepdims=True)
    out = np.where(dead, x.dtype.type(0), nn.softmax_values(x, d, False))
    return apply(SAFE_SOFTMAX, out, (a,), (dim,))


# ---------------------------------------------------------------------------------------- the function

def _dtype_name(x: np.ndarray) -> str:
    return linalg.cxx_type(x.dtype)


def _check(query: Tensor, key: Tensor, value: Tensor, attn_mask) -> None:
    """validate_sdpa_input, in PyTorch's words."""
    q, k, v = query._a, key._a, value._a
    if not q.dtype == k.dtype == v.dtype:
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_dtype_name(q)} key.dtype: {_dtype_name(k)} and value.dtype: {_dtype_name(v)} instead.")
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{q.ndim} key.dim: {k.ndim} and value.dim: {v.ndim} instead.")
    if attn_mask is not None:
        md = attn_mask._a.dtype
        if md not in (np.dtype(np.bool_), _F32, q.dtype):
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_dtype_name(attn_mask._a)} and  query.dtype: {_dtype_name(q)} "
                               "instead.")


def _mask_fits(mask: Tensor, q: np.ndarray, k: np.ndarray) -> bool:
    """check_attn_mask_shape: a mask the flash kernel takes."""
    if mask.requires_grad:
        return False
    m = mask._a.shape
    if len(m) not in (2, 4) or m[-2] not in (1, q.shape[2]) or m[-1] not in (1, k.shape[2]):
        return False
    return len(m) == 2 or (m[0] in (1, q.shape[0]) and m[1] in (1, q.shape[1]))


_WHERE = "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/transformers/"
_FUSED_DTYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long int", "int16": "short int",
                 "int8": "signed char", "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _sizes(x: np.ndarray) -> str:
    return "[" + ", ".join(map(str, x.shape)) + "]"


def _flash_refusal(query: Tensor, key: Tensor, value: Tensor, mask, dropout_p: float, gqa: bool) -> str | None:
    """use_flash_attention_cpp's gates, in its order: None when the flash kernel takes the inputs, else the warning
    its debug mode gives for the first gate they fail (with enable_gqa, key and value may share fewer heads than
    the query, a divisor of its heads)."""
    q, k, v = query._a, key._a, value._a
    if dropout_p > 0:
        return f"Both fused kernels do not support non-zero dropout. {_WHERE}sdp_utils_cpp.h:241.)"
    if not q.ndim == k.ndim == v.ndim == 4:
        return (f"All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: {q.ndim}, "
                f"Key dim: {k.ndim}, Value dim: {v.ndim} instead. {_WHERE}sdp_utils_cpp.h:327.)")
    if not q.shape[0] == k.shape[0] == v.shape[0]:
        return (f"For dense inputs, both fused kernels require query, key and value to have the same batch_size. "
                f"Query.sizes(): {_sizes(q)}, Key.sizes(): {_sizes(k)}, Value.sizes(): {_sizes(v)} instead. To "
                f"broadcast dense inputs, try using unsqueeze and expand_to before passing them into the kernel. "
                f"{_WHERE}sdp_utils_cpp.h:417.)")
    if gqa:
        if k.shape[1] != v.shape[1]:
            return (f"Both fused kernels require key and value to have the same num_heads and batch_size but got: "
                    f"Key sizes: {_sizes(k)}, Value sizes: {_sizes(v)}, Query sizes: {_sizes(q)} instead. "
                    f"{_WHERE}sdp_utils_cpp.h:365.)")
        if q.shape[1] % k.shape[1]:
            return (f"The number of heads in key/value must divide number of heads in query.Got input Key sizes(): "
                    f"{k.shape[1]}, Value sizes(): {v.shape[1]}, Query sizes(): {q.shape[1]} instead. "
                    f"{_WHERE}sdp_utils_cpp.h:381.)")
    elif not q.shape[1] == k.shape[1] == v.shape[1]:
        return (f"For dense input, both fused kernels require query, key and value to have the same num_heads. "
                f"Query.sizes(): {_sizes(q)}, Key sizes(): {_sizes(k)}, Value sizes(): {_sizes(v)} instead. To "
                f"broadcast dense inputs, try using unsqueeze and expand_to before passing them into the kernel. "
                f"{_WHERE}sdp_utils_cpp.h:437.)")
    if mask is not None and not _mask_fits(mask, q, k):
        return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); 4d - "
                "({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1}) " + _WHERE + "sdp_utils_cpp.h:314.)")
    if not q.shape[3] == k.shape[3] == v.shape[3]:
        return (f"Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): {q.shape[3]}, "
                f"Key.size(-1): {k.shape[3]}, Value.size(-1): {v.shape[3]} instead. {_WHERE}sdp_utils_cpp.cpp:21.)")
    if q.shape[2] == 0 or k.shape[2] == 0:
        return "an empty sequence"          # (never shown: the op answers an empty one before choosing a kernel)
    strides = [x.strides[-1] // x.itemsize if x.shape[-1] > 1 else 1 for x in (q, k, v)]
    if strides != [1, 1, 1]:
        return (f"All fused kernels require the last dimension of the input to have stride 1. Got Query.stride(-1): "
                f"{strides[0]}, Key.stride(-1): {strides[1]}, Value.stride(-1): {strides[2]} {_WHERE}"
                f"sdp_utils_cpp.h:546.)")
    if q.dtype not in _LANES:
        words = [_FUSED_DTYPES.get(x.dtype.name, x.dtype.name) for x in (q, k, v)]
        return (f"Expected query, key and value to all be of dtype: {{Float, Double, BFloat16, Half}}. Got Query "
                f"dtype: {words[0]}, Key dtype: {words[1]}, and Value dtype: {words[2]} instead. {_WHERE}"
                f"sdp_utils_cpp.h:91.)")
    return None


def _use_flash(query: Tensor, key: Tensor, value: Tensor, mask, dropout_p: float, gqa: bool) -> bool:
    """Whether PyTorch's CPU runs the flash kernel: its switch on (torch.backends.cuda.enable_flash_sdp, sdpa_kernel)
    and the inputs through its gates; with neither it nor the math path on, PyTorch's refusals (after the warnings
    that say why the flash kernel could not run, as its debug pass gives them)."""
    flash_on, _, math_on = STATE.sdp
    if not flash_on and not math_on:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    reason = _flash_refusal(query, key, value, mask, dropout_p, gqa) if flash_on else "off"
    if reason is None:
        return True
    if not math_on:
        if STATE.warn is not None:
            STATE.warn("UserWarning", f"Flash attention kernel not used because: {_WHERE}sdp_utils_cpp.cpp:99.)")
            STATE.warn("UserWarning", reason)
        raise RuntimeError("No available kernel.  Aborting execution.")
    return False


def _float_mask(mask, dtype) -> Tensor | None:
    """convert_boolean_attn_mask: a bool mask as zeros where True and -inf where False, in the query's dtype."""
    if mask is None or mask._a.dtype != np.bool_:
        return mask
    return Tensor(np.where(mask._a, dtype.type(0), dtype.type(-np.inf)))


@autocast_policy("lower_precision_fp")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False) -> Tensor:
    """F.scaled_dot_product_attention: the flash kernel where PyTorch's CPU takes it, else the math path."""
    for name, position, x in (("query", 1, query), ("key", 2, key), ("value", 3, value)):
        if x.__class__ is not Tensor:
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(x).__name__}")
    if attn_mask is not None and attn_mask.__class__ is not Tensor:
        raise TypeError("scaled_dot_product_attention(): argument 'attn_mask' (position 4) must be Tensor, not "
                        f"{type(attn_mask).__name__}")
    _check(query, key, value, attn_mask)
    q = query._a
    if q.dtype == np.float16:
        raise NotImplementedError("gradcli does not implement scaled_dot_product_attention for float16 tensors")
    k, v = key._a, value._a
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:          # the math path's matmul says it in PyTorch's words
        batch = None
    if batch is not None and (q.shape[-2] == 0 or k.shape[-2] == 0 or 0 in batch):
        # no attention weight to compute: zeros, tied to every input by a sum times zero (PyTorch's graph)
        zeros = Tensor(np.zeros(batch + (q.shape[-2], v.shape[-1]), q.dtype))
        total = ops.add(ops.add(ops.reduce_sum(query), ops.reduce_sum(key)), ops.reduce_sum(value))
        return ops.add(zeros, arith.mul_scalar(total, 0))
    mask = _float_mask(attn_mask, q.dtype if q.dtype.kind in "fV" else np.dtype(np.float32))
    if _use_flash(query, key, value, attn_mask, dropout_p, bool(enable_gqa)):
        if dropout_p != 0:
            raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0")
        return _flash(query, key, value, mask, bool(is_causal), scale)
    return _math(query, key, value, mask, dropout_p, bool(is_causal), scale, bool(enable_gqa))


def _heads(x: np.ndarray, heads: int) -> np.ndarray:
    """Key or value heads as the query heads read them (grouped-query attention: head j reads j // group)."""
    return x if x.shape[1] == heads else np.repeat(x, heads // x.shape[1], axis=1)


def _flash(query: Tensor, key: Tensor, value: Tensor, mask, causal: bool, scale) -> Tensor:
    q, k, v = query._a, key._a, value._a
    k, v = _heads(k, q.shape[1]), _heads(v, q.shape[1])
    m = mask._a if mask is not None else None
    out, lse = flash_forward(q, k, v, m, causal, _scale_of(q, scale))
    return apply(FLASH, out, (query, key, value), (Tensor(lse), mask, 0.0, causal, scale))


def _times(t: Tensor, factor: float) -> Tensor:
    """`tensor * factor` as C++ records it (MulBackward1); integer tensors become float as at::mul makes them."""
    return arith.mul_scalar(t, factor) if t._a.dtype.kind in "fV" else ops.mul(t, factor)


def _grouped(query: Tensor, key: Tensor, value: Tensor) -> tuple:
    """pre_process_group_query_attention_input: key and value heads repeated to the query's."""
    hq, hk, hv = (t._a.shape[wrap_dim(-3, t._a.ndim)] for t in (query, key, value))
    if hq == hk == hv:
        return key, value
    if hq % hk or hq % hv:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return arrange.repeat_interleave_method(key, hq // hk, -3), arrange.repeat_interleave_method(value, hq // hv, -3)


def _math(query: Tensor, key: Tensor, value: Tensor, mask, dropout_p: float, causal: bool, scale,
          gqa: bool = False) -> Tensor:
    """_scaled_dot_product_attention_math, op for op."""
    negative = scale is not None and scale < 0
    root = math.sqrt(_scale_of(query._a, abs(scale) if negative else scale))
    q = _times(query, -root if negative else root)
    if causal:
        if mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        L, S = query._a.shape[-2], key._a.shape[-2]
        budget.check_tensor((L, S), q._a.itemsize)
        keep = np.tril(np.ones((L, S), np.bool_))
        mask = Tensor(np.where(keep, q._a.dtype.type(0), q._a.dtype.type(-np.inf)))
    if gqa:
        key, value = _grouped(q, key, value)
    attn = linalg.matmul(q, _times(shape.transpose(key, -2, -1), root))
    if mask is not None:
        attn = ops.add(attn, mask)
    attn = safe_softmax(attn, -1)
    if dropout_p > 0:
        attn = nn._dropout(attn, dropout_p, True, False)
    return linalg.matmul(attn, value)


# ------------------------------------------------------------------------ multi-head attention (functional)

def _shape_text(shape) -> str:
    return "torch.Size([" + ", ".join(str(d) for d in shape) + "])"


def _mha_is_batched(query, key, value, key_padding_mask, attn_mask, num_heads: int) -> bool:
    """_mha_shape_check: 3-d inputs are a batch, 2-d ones one sequence; the masks' dims must agree."""
    qd, kd, vd = query._a.ndim, key._a.ndim, value._a.ndim
    if qd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {qd}-D query tensor")
    word, name = ("batched (3-D)", "3-D") if qd == 3 else ("unbatched (2-D)", "2-D")
    if kd != qd or vd != qd:
        raise AssertionError(f"For {word} `query`, expected `key` and `value` to be {name}"
                             f" but found {kd}-D and {vd}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask._a.ndim != qd - 1:
        raise AssertionError(f"For {word} `query`, expected `key_padding_mask` to be `None` or {qd - 1}-D"
                             f" but found {key_padding_mask._a.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask._a.ndim not in (2, 3):
            raise AssertionError(f"For {word} `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                                 f" but found {attn_mask._a.ndim}-D tensor instead")
        if qd == 2 and attn_mask._a.ndim == 3:
            expected = (num_heads, query._a.shape[0], key._a.shape[0])
            if attn_mask._a.shape != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{_shape_text(attn_mask._a.shape)}")
    return qd == 3


def canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type, check_other=True):
    """F._canonical_mask: a bool mask as a float one (-inf where True), in the target dtype."""
    if mask is None:
        return None
    md = mask._a.dtype
    if md != np.bool_ and md.kind not in "fV":
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and md != other_type:
        STATE.warn("UserWarning", f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                                  "Use same type for both instead.")
    if md.kind not in "fV":
        out = np.where(mask._a, target_type.type(-np.inf), target_type.type(0))
        return Tensor(out)
    return mask


def _in_projection_packed(q, k, v, w, b) -> tuple:
    """The packed in-projection: one linear for self-attention (split by an unflatten and transposes, as
    PyTorch's), a query linear and a key-value one when key is value, else three."""
    E = q._a.shape[-1]
    if k is v:
        if q is k:
            proj = nn.linear(q, w, b)
            proj = shape.contiguous(shape.squeeze(shape.transpose(shape.unsqueeze(shape.unflatten(proj, -1, (3, E)),
                                                                                   0), 0, -2), -2))
            return ops.getitem(proj, 0), ops.getitem(proj, 1), ops.getitem(proj, 2)
        w_q, w_kv = shape.split(w, [E, E * 2])
        b_q, b_kv = shape.split(b, [E, E * 2]) if b is not None else (None, None)
        q_proj = nn.linear(q, w_q, b_q)
        kv = nn.linear(k, w_kv, b_kv)
        kv = shape.contiguous(shape.squeeze(shape.transpose(shape.unsqueeze(shape.unflatten(kv, -1, (2, E)), 0),
                                                            0, -2), -2))
        return q_proj, ops.getitem(kv, 0), ops.getitem(kv, 1)
    w_q, w_k, w_v = shape.chunk(w, 3)
    b_q, b_k, b_v = shape.chunk(b, 3) if b is not None else (None, None, None)
    return nn.linear(q, w_q, b_q), nn.linear(k, w_k, b_k), nn.linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v) -> tuple:
    """The separate in-projections (kdim, vdim differ from embed_dim), with PyTorch's shape assertions."""
    Eq, Ek, Ev = q._a.shape[-1], k._a.shape[-1], v._a.shape[-1]
    for name, w, want in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if w._a.shape != want:
            raise AssertionError(f"expecting {name} weights shape of {want}, but got {_shape_text(w._a.shape)}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and b._a.shape != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {_shape_text(b._a.shape)}")
    return nn.linear(q, w_q, b_q), nn.linear(k, w_k, b_k), nn.linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False) -> tuple:
    """F.multi_head_attention_forward, step for step as PyTorch 2.13's: the in-projections, bias_k/bias_v and
    the zero attention column, the heads as a batch, then either the explicit weights (baddbmm or bmm of the
    scaled query, softmax, dropout, bmm) when need_weights, or scaled_dot_product_attention, and the out
    projection."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("gradcli does not implement multi_head_attention_forward's static_k and "
                                  "static_v")
    is_batched = _mha_is_batched(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = (shape.unsqueeze(x, 1) for x in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = shape.unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query._a.shape
    src_len = key._a.shape[0]
    dt = query._a.dtype
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask",
                                      attn_mask._a.dtype if attn_mask is not None else None, "attn_mask", dt)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", dt, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key._a.shape[:2] != value._a.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {_shape_text(key._a.shape[:2])} do not match "
                                 f"value's {_shape_text(value._a.shape[:2])}")
    elif key._a.shape != value._a.shape:
        raise AssertionError(f"key shape {_shape_text(key._a.shape)} does not match value shape "
                             f"{_shape_text(value._a.shape)}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        biases = shape.chunk(in_proj_bias, 3) if in_proj_bias is not None else (None, None, None)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, *biases)
    if attn_mask is not None:
        if attn_mask._a.ndim == 2:
            if attn_mask._a.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {_shape_text(attn_mask._a.shape)}, but should "
                                   f"be {(tgt_len, src_len)}.")
            attn_mask = shape.unsqueeze(attn_mask, 0)
        elif attn_mask._a.ndim == 3:
            if attn_mask._a.shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {_shape_text(attn_mask._a.shape)}, but should "
                                   f"be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask._a.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        k = shape.cat([k, shape.repeat(bias_k, 1, bsz, 1)])
        v = shape.cat([v, shape.repeat(bias_v, 1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = shape.functional_pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = shape.functional_pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = shape.transpose(shape.view(q, tgt_len, bsz * num_heads, head_dim), 0, 1)
    k = shape.transpose(shape.view(k, k._a.shape[0], bsz * num_heads, head_dim), 0, 1)
    v = shape.transpose(shape.view(v, v._a.shape[0], bsz * num_heads, head_dim), 0, 1)
    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = shape.cat([k, Tensor(np.zeros(zeros, k._a.dtype))], 1)
        v = shape.cat([v, Tensor(np.zeros(zeros, v._a.dtype))], 1)
        if attn_mask is not None:
            attn_mask = shape.functional_pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = shape.functional_pad(key_padding_mask, (0, 1))
    src_len = k._a.shape[1]
    if key_padding_mask is not None:
        got = key_padding_mask._a.shape
        if got[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {got[0]}")
        if got[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got {got[1]}")
        key_padding_mask = shape.reshape(shape.expand(shape.view(key_padding_mask, bsz, 1, 1, src_len),
                                                      -1, num_heads, -1, -1), bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else ops.add(attn_mask, key_padding_mask)
    if not training:
        dropout_p = 0.0
    if need_weights:
        E = q._a.shape[-1]
        q_scaled = ops.mul(q, math.sqrt(1.0 / float(E)))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = ops.baddbmm(attn_mask, q_scaled, shape.transpose(k, -2, -1))
        else:
            weights = ops.bmm(q_scaled, shape.transpose(k, -2, -1))
        weights = nn.functional_softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = nn.dropout(weights, p=dropout_p)
        out = ops.bmm(weights, v)
        out = shape.reshape(shape.transpose(out, 0, 1), tgt_len * bsz, embed_dim)
        out = nn.linear(out, out_proj_weight, out_proj_bias)
        out = shape.view(out, tgt_len, bsz, out._a.shape[1])
        weights = shape.view(weights, bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = ops.mean(weights, dim=1)
        if not is_batched:
            out, weights = shape.squeeze(out, 1), shape.squeeze(weights, 0)
        return out, weights
    if attn_mask is not None:
        if attn_mask._a.shape[0] == 1 and attn_mask._a.ndim == 3:
            attn_mask = shape.unsqueeze(attn_mask, 0)
        else:
            attn_mask = shape.view(attn_mask, bsz, num_heads, -1, src_len)
    q = shape.view(q, bsz, num_heads, tgt_len, head_dim)
    k = shape.view(k, bsz, num_heads, src_len, head_dim)
    v = shape.view(v, bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = shape.reshape(shape.permute(out, 2, 0, 1, 3), bsz * tgt_len, embed_dim)
    out = nn.linear(out, out_proj_weight, out_proj_bias)
    out = shape.view(out, tgt_len, bsz, out._a.shape[1])
    if not is_batched:
        out = shape.squeeze(out, 1)
    return out, None
