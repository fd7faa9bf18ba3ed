#!/usr/bin/env python3
"""Write tests/optim_bits.json: the exact float32 parameters PyTorch's optimisers leave, step after step.

Each case of tests/test_optim.py's BIT_CASES runs, as a script, under an oracle Python with PyTorch 2.13
on this machine's native CPU kernels (vector fused multiply-adds), with the gradients set by arithmetic
that rounds the same everywhere (no reductions), so only the optimiser's update order decides the bits.
The file keeps, per case, the SHA-256 of the whole trace (every step's `.tolist()`) and the last step.

PyTorch computes `Tensor.sqrt()` on CPU with MKL's vsSqrt, which is not correctly rounded (about one
float32 value in five differs from the nearest by one unit in the last place). gradcli's engine uses
numpy's correctly rounded square root, so the cases that take a square root (Adam, AdamW, RMSprop,
Adagrad) are recorded with the oracle's `sqrt` replaced by numpy's: they pin every other rounding of
PyTorch's update order. The SGD cases run unchanged.

Usage: .venv/bin/python tools/optim_bits.py [--python /work/oracle/bin/python]   (gradcli importable: it reads the
cases from tests/test_optim.py)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_optim import BIT_CASES, bit_script  # noqa: E402

_CORRECT_SQRT = """import numpy as _np, torch as _torch
_torch.Tensor.sqrt = lambda self: _torch.from_numpy(_np.sqrt(self.detach().numpy()))
def _sqrt_(self):
    self.copy_(_torch.from_numpy(_np.sqrt(self.detach().numpy())))
    return self
_torch.Tensor.sqrt_ = _sqrt_
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="/work/oracle/bin/python")
    args = parser.parse_args()
    table = {}
    for name, ctor in BIT_CASES.items():
        source = bit_script(ctor)
        if not ctor.startswith("torch.optim.SGD"):
            source = _CORRECT_SQRT + source
        out = subprocess.run([args.python, "-c", source], capture_output=True, text=True, check=True).stdout
        lines = out.splitlines()
        table[name] = {"sha256": hashlib.sha256(out.encode()).hexdigest(), "last": lines[-1]}
        print(name, table[name]["sha256"][:12])
    (ROOT / "tests" / "optim_bits.json").write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
