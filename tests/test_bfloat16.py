"""bfloat16 against PyTorch 2.13 on every finite input: the 65,280 finite bfloat16 values through 48 ops (elementwise
kernels, number and tensor operands, casts) and 13 gradients that are bit-exact, float32 and float64 values at and
beside every rounding midpoint cast to bfloat16, and the display of all of them; each result is compared
by its SHA-256 with what PyTorch printed for the same script (NaNs as one NaN: PyTorch's vector conversion writes
0xFFFF, its scalar one 0x7FC0, and gradcli 0x7FC0; nothing prints the difference)."""

import hashlib
import io

from gradcli.session import Session

SCRIPT = """\
import torch
import torch.nn.functional as F
x = torch.arange(-32768, 32768, dtype=torch.int16).view(torch.bfloat16)
x = x[torch.isfinite(x)]
ops = {"exp": torch.exp, "log": torch.log, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "tanh": torch.tanh,
       "sigmoid": torch.sigmoid, "erf": torch.erf, "erfc": torch.erfc, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
       "reciprocal": torch.reciprocal, "expm1": torch.expm1, "exp2": torch.exp2, "log1p": torch.log1p, "log2": torch.log2,
       "log10": torch.log10, "asin": torch.asin, "atan": torch.atan, "abs": torch.abs, "relu": torch.relu, "silu": F.silu,
       "softplus": F.softplus, "elu": F.elu, "selu": F.selu, "mish": F.mish, "hardswish": F.hardswish, "square": torch.square,
       "floor": torch.floor, "round": torch.round, "frac": torch.frac, "mul": lambda t: t * 3.3, "add": lambda t: t + 0.1,
       "div": lambda t: t / 3.3, "pow2": lambda t: t ** 2, "pow15": lambda t: t ** 1.5, "mul_t": lambda t: t * t.flip(0),
       "div_t": lambda t: t / t.flip(0), "atan2": lambda t: torch.atan2(t, t.flip(0)),
       "to_float": lambda t: t.float().mul(1.7).bfloat16(), "to_half": lambda t: t.half().bfloat16(),
       "to_double": lambda t: (t.double() * 1.1).bfloat16(), "celu": F.celu, "hardtanh": F.hardtanh,
       "sign": torch.sign, "clamp": lambda t: t.clamp(-1.5, 2.5), "maximum": lambda t: torch.maximum(t, t.flip(0)),
       "sub_t": lambda t: t - t.flip(0), "leaky_relu": F.leaky_relu}
for name, f in ops.items():
    print(name, f(x).view(torch.int16).tolist())
grads = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "exp": torch.exp, "sin": torch.sin, "log": torch.log, "relu": torch.relu, "silu": F.silu,
         "softplus": F.softplus, "erf": torch.erf, "sqrt": torch.sqrt, "pow15": lambda t: t ** 1.5,
         "mul": lambda t: t * 3.3, "div": lambda t: t / 3.3}
for name, f in grads.items():
    t = x.clone().requires_grad_()
    y = f(t)
    y.backward(torch.full_like(y, 0.7))
    print(name + "_grad", t.grad.view(torch.int16).tolist())
bits = torch.arange(-32768, 32768, dtype=torch.int32) * 65536
for low in (0x8000, 0x8001, 0x7FFF, 0x1234):
    print("round", low, (bits + low).view(torch.float32).bfloat16().view(torch.int16).tolist())
    print("round64", low, ((bits + low).view(torch.float32).double() * (1 + 2.0 ** -30)).bfloat16().view(torch.int16).tolist())
for i in range(0, x.numel(), 16):
    print(x[i:i + 16])
for v in x[::97]:
    print(v, v.item())
"""

# the oracle's hashes of the same script's lines (/work/oracle/bin/python with the script above)
EXPECTED = {
    "exp": "892f8b9ae4e88a55",
    "log": "9247f72a8078c6a0",
    "sin": "62f521987dffe0a8",
    "cos": "ba4a4f2c50f52ee4",
    "tan": "a28c3fe3d18c0c38",
    "tanh": "c8846885c9502aeb",
    "sigmoid": "0e57dc823e8be8ae",
    "erf": "36cac11d994f00e1",
    "erfc": "2c231275b14a7e31",
    "sqrt": "123e0f82e69498fb",
    "rsqrt": "12b48098c2f097e1",
    "reciprocal": "3700a7e9e06545aa",
    "expm1": "b78ef631f5f397d2",
    "exp2": "4faf506669df1fd8",
    "log1p": "d5e05bb870e456ee",
    "log2": "62e434e2fb35f0ac",
    "log10": "cf0f00b7cbe4a013",
    "asin": "e7b20a94975fe93c",
    "atan": "5bd19c8e1661834f",
    "abs": "49489250f44b5dfc",
    "relu": "c28b9534f4089822",
    "silu": "6d4556d60cff0cf4",
    "softplus": "1457ac19652d1afa",
    "elu": "c4c7eb5605f48fe8",
    "selu": "f28746f99a7fe4dc",
    "mish": "810c21c0df98fa66",
    "hardswish": "72ec5d2cc1d58161",
    "square": "629f5075aee82901",
    "floor": "414007d12cae7588",
    "round": "555da50ee9d08ca0",
    "frac": "91ab8ec92f84c9a1",
    "mul": "129620b624cc307b",
    "add": "fe8b3b22793aeb7c",
    "div": "0685dc7115d6bcb0",
    "pow2": "629f5075aee82901",
    "pow15": "3ee12dd7fae54678",
    "mul_t": "0915ade76e9aa0d0",
    "div_t": "a6331f785805be0d",
    "atan2": "36c10d53008e074a",
    "to_float": "d24800c62056ad26",
    "to_half": "33fd052698def2b2",
    "to_double": "4a257729d70e9526",
    "celu": "c4c7eb5605f48fe8",
    "hardtanh": "137829044282a180",
    "sign": "ddcf45801610fa9e",
    "clamp": "6b7e41309dfdc6e1",
    "maximum": "ba258cea18bdcb46",
    "sub_t": "5f9aed0f9ed730b1",
    "leaky_relu": "e5b3e951997cb2d6",
    "tanh_grad": "5207d9f51feea9cf",
    "sigmoid_grad": "3faf69249532d2b5",
    "exp_grad": "d0d7c33f7f9ad1d1",
    "sin_grad": "b01a354dd890dd8a",
    "log_grad": "14b66998adaf213e",
    "relu_grad": "c4e8ae6427f0fbff",
    "silu_grad": "a37a9c095e8220d5",
    "softplus_grad": "65aab37ea0b03e35",
    "erf_grad": "895b01f567b46893",
    "sqrt_grad": "72b074137c5bb621",
    "pow15_grad": "4e557be823fc204e",
    "mul_grad": "43641b016ea3f792",
    "div_grad": "b0ce7f9376d9c515",
    "round 32768": "c5a2426857e259a5",
    "round64 32768": "c5a2426857e259a5",
    "round 32769": "5e255e0cff741a43",
    "round64 32769": "5e255e0cff741a43",
    "round 32767": "ae05348b37c5ec8f",
    "round64 32767": "ae05348b37c5ec8f",
    "round 4660": "ae05348b37c5ec8f",
    "round64 4660": "ae05348b37c5ec8f",
    "display": "3016dec2c85d46eb",
}


def _hashes(text: str) -> dict:
    """Each result line's hash (its NaNs made one NaN), and one for all the display lines."""
    out, display = {}, []
    for line in text.splitlines():
        if not line[:1].isalpha() or line.startswith("tensor"):
            display.append(line)
            continue
        head, _, rest = line.partition(" [")
        values = [int(v) for v in rest.rstrip("]").split(", ")]
        values = [0x7FC0 if (v & 0x7F80) == 0x7F80 and (v & 0x7F) else v & 0xFFFF for v in values]
        out[head] = hashlib.sha256(",".join(map(str, values)).encode()).hexdigest()[:16]
    out["display"] = hashlib.sha256("\n".join(display).encode()).hexdigest()[:16]
    return out


def test_every_finite_bfloat16_input_agrees_with_pytorch():
    out = io.StringIO()
    Session(out=out, err=io.StringIO(), seed=0).run_source(SCRIPT, "<bfloat16>")
    got = _hashes(out.getvalue())
    assert {k: v for k, v in got.items() if v != EXPECTED.get(k)} == {}
    assert set(got) == set(EXPECTED)
