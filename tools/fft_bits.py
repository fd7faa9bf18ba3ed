#!/usr/bin/env python3
"""How often numpy's FFT (pocketfft, what gradcli computes with: gradcli/engine/ops/fft.py) gives PyTorch 2.13's
CPU results (MKL's DFTI on the x86-64 wheel) bit for bit, and how often the printed tensors are the same text.

    /work/oracle/bin/python tools/fft_bits.py

Run with the oracle (PyTorch and numpy). The numpy side makes gradcli's calls: fftn/ifftn for a complex input,
rfftn for a real one (the two-sided spectrum filled in by conjugate symmetry, as gradcli fills it), irfftn for
C2R, in the input's precision. The printed side formats both results with PyTorch's printer, which gradcli's
display follows byte for byte, so a difference there is a difference a script would show. Inputs: random normal
values (seeded) and the structured signals tutorials use (a sampled sine, a ramp, an impulse, ones), whose exact
transforms have zeros that each library rounds its own way.
"""

from __future__ import annotations

import numpy as np
import torch

SIZES = {"powers of two": (2, 4, 8, 16, 32, 64, 128, 256, 1024), "primes": (3, 5, 7, 11, 13, 31, 97),
         "other": (6, 10, 12, 100)}
SHAPES_2D = ((2, 2), (3, 3), (4, 4), (4, 5), (8, 8), (16, 16), (28, 28))


def _signals(n: int, dtype, rng) -> list:
    t = np.arange(n)
    return [rng.standard_normal(n), rng.standard_normal(n), np.sin(2 * np.pi * 3 * t / n), t.astype(float),
            (t == 0).astype(float), np.ones(n)]


def _numpy(kind: str, x: np.ndarray) -> np.ndarray:
    if kind == "fft":
        half = np.fft.rfft(x)
        n = x.shape[-1]
        return np.concatenate((half, np.conj(half[..., 1:n - n // 2][..., ::-1])), axis=-1).astype(
            np.complex64 if x.dtype == np.float32 else np.complex128)
    if kind == "fft complex":
        return np.fft.fft(x)
    if kind == "rfft":
        return np.fft.rfft(x)
    if kind == "irfft":
        return np.fft.irfft(x)
    if kind == "fft2":
        return np.fft.fft2(x)
    raise ValueError(kind)


def _torch(kind: str, x: np.ndarray) -> np.ndarray:
    t = torch.from_numpy(x)
    f = {"fft": torch.fft.fft, "fft complex": torch.fft.fft, "rfft": torch.fft.rfft, "irfft": torch.fft.irfft,
         "fft2": torch.fft.fft2}[kind]
    return f(t).numpy()


def _compare(kind: str, inputs: list) -> tuple:
    same = total = printed = 0
    for x in inputs:
        a, b = _torch(kind, x), _numpy(kind, x).astype(_torch(kind, x).dtype)
        av, bv = a.view(a.real.dtype), b.view(b.real.dtype)
        same += int((av == bv).sum())
        total += av.size
        printed += str(torch.from_numpy(a)) == str(torch.from_numpy(b))
    return 100 * same / total, 100 * printed / len(inputs)


def _inputs(kind: str, n, dtype, rng) -> list:
    if kind == "fft2":
        xs = [rng.standard_normal(n), rng.standard_normal(n), np.ones(n), np.arange(np.prod(n)).reshape(n) * 1.0]
        return [(x + 1j * rng.standard_normal(n)).astype(dtype) for x in xs[:2]] + [x.astype(dtype) for x in xs[2:]]
    xs = _signals(n, dtype, rng)
    if kind == "fft complex":
        return [(x + 1j * rng.standard_normal(n)).astype(dtype) for x in xs]
    if kind == "irfft":
        return [np.fft.rfft(x).astype(dtype) for x in xs if n > 1]
    return [x.astype(dtype) for x in xs]


def main() -> None:
    rng = np.random.default_rng(0)
    print("| transform | dtype | sizes | bits the same % | printed the same % |")
    print("|---|---|---|---|---|")
    for kind in ("fft", "fft complex", "rfft", "irfft", "fft2"):
        for real, cplx in ((np.float32, np.complex64), (np.float64, np.complex128)):
            dtype = real if kind in ("fft", "rfft") else cplx
            groups = {"2-d": SHAPES_2D} if kind == "fft2" else SIZES
            for label, sizes in groups.items():
                bits, text = zip(*(_compare(kind, _inputs(kind, n, dtype, rng)) for n in sizes))
                print(f"| {kind} | {np.dtype(dtype).name} | {label} {sizes} | {np.mean(bits):.0f} | "
                      f"{np.mean(text):.0f} |")


if __name__ == "__main__":
    main()
