#!/usr/bin/env python3
"""Write tests/optim_bits.json: the exact float32 parameters PyTorch's optimisers leave, step after step.

Each case of tests/test_optim.py's BIT_CASES and STATE_BIT_CASES (the later optimisers, float32 and
float64, their state traced too) runs, as a script, under an oracle Python with PyTorch 2.13
on this machine's native CPU kernels (vector fused multiply-adds), with the gradients set by arithmetic
that rounds the same everywhere (no reductions), so only the optimiser's update order decides the bits.
The file keeps, per case, the SHA-256 of the whole output (every step's `.tolist()`) and the last step's line.

PyTorch computes `Tensor.sqrt()` on CPU with MKL's vsSqrt, which is not correctly rounded (about one
float32 value in five differs from the nearest by one unit in the last place). gradcli's engine uses
numpy's correctly rounded square root, so the cases that take a square root (Adam, AdamW, RMSprop,
Adagrad, NAdam, RAdam, Adadelta) are recorded with the oracle's `sqrt` replaced by numpy's: they pin every
other rounding of PyTorch's update order. The cases of the optimisers without a square root (SGD, Adamax,
Rprop, ASGD) run unchanged.

Usage: .venv/bin/python tools/optim_bits.py [--python /work/oracle/bin/python] [--only NAME ...]
(gradcli importable: it reads the cases from tests/test_optim.py). With --only, only the named cases are
recorded again, the others kept as stored.
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

from test_optim import BIT_CASES, STATE_BIT_CASES, bit_script, last_step, state_bit_script  # noqa: E402

_SQRT_FREE = ("torch.optim.SGD", "torch.optim.Adamax", "torch.optim.Rprop", "torch.optim.ASGD")
_CORRECT_SQRT = """import numpy as _np, torch as _torch
_torch.Tensor.sqrt = lambda self: _torch.from_numpy(_np.asarray(_np.sqrt(self.detach().numpy())))
def _sqrt_(self):
    self.copy_(_torch.from_numpy(_np.asarray(_np.sqrt(self.detach().numpy()))))
    return self
_torch.Tensor.sqrt_ = _sqrt_
_torch._foreach_sqrt = lambda ts: [t.sqrt() for t in ts]
_torch._foreach_sqrt_ = lambda ts: [t.sqrt_() for t in ts]
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="/work/oracle/bin/python")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="record only these cases, keep the others")
    args = parser.parse_args()
    path = ROOT / "tests" / "optim_bits.json"
    table = json.loads(path.read_text()) if args.only else {}
    runs = {name: (ctor, bit_script(ctor)) for name, ctor in BIT_CASES.items()}
    runs.update((name, (case[0], state_bit_script(*case))) for name, case in STATE_BIT_CASES.items())
    for name, (ctor, source) in runs.items():
        if args.only and name not in args.only:
            continue
        if not ctor.startswith(_SQRT_FREE):
            source = _CORRECT_SQRT + source
        out = subprocess.run([args.python, "-c", source], capture_output=True, text=True, check=True).stdout
        table[name] = {"sha256": hashlib.sha256(out.encode()).hexdigest(), "last": last_step(out)}
        print(name, table[name]["sha256"][:12])
    path.write_text(json.dumps({name: table[name] for name in runs if name in table}, indent=1) + "\n")


if __name__ == "__main__":
    main()
