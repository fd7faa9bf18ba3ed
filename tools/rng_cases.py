#!/usr/bin/env python3
"""Write tests/rng_distributions_expected.json: what PyTorch prints for each case of tests/test_distributions.py
(the cases live here, where both PyTorch and the test read them).

Run with the oracle (a Python with PyTorch 2.13) from the repository's root:

    PYTHONPATH=$PWD /work/oracle/bin/python tools/rng_cases.py            # rewrite the file
    PYTHONPATH=$PWD /work/oracle/bin/python tools/rng_cases.py --check    # exit 1 if it differs

Each case is a script; its printed text (or its error, as `ExcType: message`) is stored as a digest.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

import hashlib

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = ROOT / "tests" / "rng_distributions_expected.json"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _cases() -> dict:
    cases = {}

    def add(name, body, seed=0):
        cases[f"{name}-s{seed}"] = f"import torch\ntorch.manual_seed({seed})\n{body}\n"

    # multinomial: 1-d and 2-d, both dtypes, with and without replacement, zero weights, layouts
    shapes = [(3,), (7,), (64,), (200,), (5, 4), (3, 130), (1, 1000)]
    for seed in (0, 1, 7, 123):
        for shape in shapes:
            cats = shape[-1]
            for dt in ("float32", "float64"):
                probs = f"p = torch.rand({shape}, dtype=torch.{dt})\n"
                for n in sorted({1, 2, min(3, cats), cats // 2 or 1, cats}):
                    add(f"multinomial-{shape}-{dt}-{n}-norep",
                        probs + f"print(torch.multinomial(p, {n}).tolist())", seed)
                    add(f"multinomial-{shape}-{dt}-{n}-zeros",
                        probs + "p = p * (torch.rand(p.shape) > 0.6)\np[..., 0] = 0.5\n"
                        f"print(torch.multinomial(p, {n}).tolist())", seed)
                for n in (1, 5, 40):
                    add(f"multinomial-{shape}-{dt}-{n}-rep",
                        probs + f"print(torch.multinomial(p, {n}, replacement=True).tolist())", seed)
                    add(f"multinomial-{shape}-{dt}-{n}-rep-zeros",
                        probs + "p = p * (torch.rand(p.shape) > 0.5)\np[..., -1] = 1.0\n"
                        f"print(torch.multinomial(p, {n}, True).tolist())", seed)
    for seed in (0, 3):
        add("multinomial-transposed", "p = torch.rand(6, 5).t()\nprint(p.multinomial(3).tolist(), "
            "p.multinomial(4, True).tolist())", seed)
        add("multinomial-generator", "g = torch.Generator()\ng.manual_seed(5)\np = torch.rand(10)\n"
            "print(torch.multinomial(p, 4, generator=g).tolist(), torch.multinomial(p, 4, True, generator=g).tolist(),"
            " torch.rand(2).tolist())", seed)
        add("multinomial-one-hot-ties", "for n, k in [(4, 3), (10, 8), (100, 3), (200, 4), (129, 3), (20, 20), "
            "(1000, 10)]:\n    p = torch.zeros(n)\n    p[n // 3] = 1.0\n    print(torch.multinomial(p, k).tolist())",
            seed)
        add("multinomial-subnormal", "p = torch.tensor([1e-45, 0.0, 1e-45])\n"
            "print(torch.multinomial(p, 8, True).tolist(), torch.multinomial(p, 2).tolist())", seed)
        add("multinomial-half", "p = torch.rand(9).half()\nprint(torch.multinomial(p, 4).tolist(), "
            "torch.multinomial(p, 6, True).tolist())", seed)

    # bernoulli: probability tensors, a scalar p, dtypes of the target, layouts, generators
    for seed in (0, 2, 11):
        for shape in [(1,), (5,), (16,), (33,), (4, 7), (2, 3, 5)]:
            for dt in ("float32", "float64"):
                add(f"bernoulli-tensor-{shape}-{dt}",
                    f"p = torch.rand({shape}, dtype=torch.{dt})\nprint(torch.bernoulli(p).tolist())", seed)
                add(f"bernoulli-p-{shape}-{dt}",
                    f"x = torch.rand({shape}, dtype=torch.{dt})\nprint(torch.bernoulli(x, 0.3).tolist(), "
                    "x.bernoulli(p=0.8).tolist(), x.bernoulli().tolist())", seed)
            for dt in ("float32", "float64", "int64", "int32", "uint8", "bool"):
                add(f"bernoulli_-{shape}-{dt}",
                    f"x = torch.zeros({shape}, dtype=torch.{dt})\nprint(x.bernoulli_(0.4).tolist(), "
                    "x.bernoulli_().tolist())", seed)
                add(f"bernoulli_-ptensor-{shape}-{dt}",
                    f"x = torch.zeros({shape}, dtype=torch.{dt})\np = torch.rand({shape[-1]})\n"
                    "print(x.bernoulli_(p).tolist(), x.bernoulli_(p.double()).tolist())", seed)
        add("bernoulli-transposed", "p = torch.rand(5, 3).t()\nx = torch.zeros(4, 6).t()\n"
            "print(torch.bernoulli(p).tolist(), x.bernoulli_(0.5).tolist(), x.bernoulli_(torch.rand(6, 4)).tolist(),"
            " x.bernoulli_(torch.rand(6, 4).t().contiguous().t()).tolist())", seed)
        add("bernoulli-generator", "g = torch.Generator()\ng.manual_seed(9)\np = torch.rand(7)\n"
            "print(torch.bernoulli(p, generator=g).tolist(), torch.bernoulli(p, 0.5, generator=g).tolist(), "
            "torch.zeros(3).bernoulli_(0.2, generator=g).tolist(), p.bernoulli(generator=g).tolist(), "
            "torch.rand(2).tolist())", seed)
        add("bernoulli-scalar-tensor-p", "x = torch.rand(5)\nprint(torch.bernoulli(x, torch.tensor(0.3)).tolist(), "
            "torch.zeros(5).bernoulli_(torch.tensor(0.3)).tolist())", seed)

    # the continuous fills and geometric_: dtypes, parameters, sizes around the vector widths, layouts
    fills = [("exponential_", ["", "2.5", "lambd=0.1"], ("float32", "float64", "float16")),
             ("geometric_", ["0.3", "p=0.01", "0.999"], ("float32", "float64", "int64", "int32", "int16",
                                                         "int8", "uint8")),
             ("cauchy_", ["", "1.5, 2.0", "median=-3.0, sigma=0.25"], ("float32", "float64", "float16")),
             ("log_normal_", ["", "0.0, 1.0", "mean=-0.5, std=0.3"], ("float32", "float64"))]
    for seed in (0, 5, 42):
        for name, params, dts in fills:
            for dt in dts:
                for shape in [(1,), (3,), (16,), (17,), (100,), (6, 7)]:
                    for param in params:
                        add(f"{name}-{dt}-{shape}-{param}",
                            f"x = torch.zeros({shape}, dtype=torch.{dt})\nprint(x.{name}({param}).tolist())", seed)
            add(f"{name}-transposed", f"x = torch.zeros(5, 4).t()\nprint(x.{name}({params[1]}).tolist())", seed)
            add(f"{name}-generator", f"g = torch.Generator()\ng.manual_seed(3)\n"
                f"x = torch.zeros(9, dtype=torch.float64)\nprint(x.{name}({params[1]}, generator=g).tolist(), "
                "torch.rand(2).tolist())", seed)
        add("log_normal-cache", "print(torch.randn(1).tolist(), torch.zeros(3).log_normal_().tolist(), "
            "torch.randn(1, dtype=torch.float64).tolist(), torch.zeros(1).log_normal_().tolist(), "
            "torch.randn(2).tolist())", seed)
        add("geometric-huge", "print(torch.zeros(4, dtype=torch.int64).geometric_(1e-300).tolist(), "
            "torch.zeros(4, dtype=torch.int16).geometric_(1e-6).tolist(), "
            "torch.zeros(4, dtype=torch.uint8).geometric_(1e-9).tolist(), torch.zeros(2).geometric_(1e-300).tolist())",
            seed)
        add("exponential-inf", "print(torch.zeros(3).exponential_(float('inf')).tolist(), "
            "torch.zeros(3, dtype=torch.float64).exponential_(1e-320).tolist())", seed)

    # poisson: both algorithms (rates below and from 10), dtypes, layouts, a generator
    for seed in (0, 4, 99):
        for dt in ("float32", "float64"):
            for scale in (0.5, 8.0, 30.0, 1000.0):
                add(f"poisson-{dt}-{scale}", f"r = torch.rand(6, 7, dtype=torch.{dt}) * {scale}\n"
                    "print(torch.poisson(r).tolist(), torch.poisson(r.t()).tolist())", seed)
        add("poisson-edges", "r = torch.tensor([0.0, 1e-300, 9.999999, 10.0, 1e6, 1e12])\n"
            "print(torch.poisson(r).tolist(), torch.poisson(r.double()).tolist())", seed)
        add("poisson-generator", "g = torch.Generator()\ng.manual_seed(8)\n"
            "print(torch.poisson(torch.rand(5) * 20, generator=g).tolist(), torch.rand(2).tolist())", seed)

    # an error part-way through a draw leaves the stream where PyTorch's loop stopped
    for seed in (0, 6):
        add("stream-after-errors", "for bad in [lambda: torch.poisson(torch.tensor([1., 20., -1.])),\n"
            "            lambda: torch.multinomial(torch.tensor([[1., 2.], [1., -1.]]), 3, True),\n"
            "            lambda: torch.multinomial(torch.tensor([[1., 2.], [0., 0.]]), 2, True),\n"
            "            lambda: torch.zeros(4).bernoulli_(torch.tensor([0.5, 0.5, 2.0, 0.5])),\n"
            "            lambda: torch.zeros(4).bernoulli_(torch.tensor([0.5, 0.5, 0.5, -1.0], dtype=torch.float64)),\n"
            "            lambda: torch.multinomial(torch.tensor([1., -1.]), 1)]:\n"
            "    try:\n        bad()\n    except RuntimeError as e:\n        print(e)\n"
            "    print(torch.rand(2).tolist())", seed)

    # the older draws, checked beside them: normal's four overloads, random_'s forms, the *_like factories
    for seed in (0, 8):
        add("normal-overloads", "m = torch.rand(5, 4)\ns = torch.rand(5, 4)\n"
            "print(torch.normal(m, s).tolist(), torch.normal(m, 2.0).tolist(), torch.normal(1.5, s).tolist(), "
            "torch.normal(0.5, 2.0, (20,)).tolist(), torch.normal(m.t(), s.t()).tolist(), "
            "torch.normal(m.double(), 0.5).tolist(), torch.normal(0.0, 1.0, size=(3,), dtype=torch.float64).tolist())",
            seed)
        add("random_-forms", "for dt in [torch.float32, torch.float64, torch.int64, torch.int32, torch.int16, "
            "torch.int8, torch.uint8, torch.bool]:\n    x = torch.zeros(6, dtype=dt)\n"
            "    print(x.random_().tolist(), x.random_(2).tolist(), x.random_(0, 2).tolist(), x.t().random_(1, 2).tolist())",
            seed)
        add("random_-wide", "x = torch.zeros(6, dtype=torch.int64)\nprint(x.random_(-2**63, None).tolist(), "
            "x.random_(-5, 2**40).tolist(), x.random_(3, to=9).tolist(), torch.zeros(4).random_(-3, None).tolist())", seed)
        add("like-factories", "x = torch.zeros(5, 4).t()\nprint(torch.rand_like(x).tolist(), torch.randn_like(x).tolist(), "
            "torch.randint_like(x, 10).tolist(), torch.randint_like(x, -3, 3).tolist(), "
            "torch.randn_like(torch.zeros(20, dtype=torch.float64)).tolist(), "
            "torch.rand_like(x, dtype=torch.float64).tolist(), torch.randint_like(torch.zeros(3, dtype=torch.int32), 5).tolist())",
            seed)
        add("like-generator", "g = torch.Generator()\nx = torch.zeros(17)\nprint(torch.rand_like(x, generator=g).tolist(), "
            "torch.randn_like(x, generator=g).tolist(), torch.randint_like(x, 4, generator=g).tolist())", seed)
    # the argument forms of the fills and factories, and their refusals, printed as the script sees them
    add("argument-forms", ARGUMENT_FORMS)
    # float16, empty tensors and vmap's randomness modes
    add("half-empty-vmap", HALF_EMPTY_VMAP)
    # forward-mode tangents through the fills and draws
    add("forward-mode", "import torch.autograd.forward_ad as fwAD\n" + FORWARD_MODE)
    return cases


ARGUMENT_FORMS = """cases = [
    lambda: torch.zeros(3).normal_(1, 2, torch.Generator()),
    lambda: torch.zeros(3).uniform_(1, 2, torch.Generator()),
    lambda: torch.zeros(3).random_(1, 5, torch.Generator()),
    lambda: torch.zeros(3).normal_(mean=1, std=2, generator=torch.Generator()),
    lambda: torch.zeros(3).uniform_(to=3),
    lambda: torch.zeros(3).random_(to=5),
    lambda: torch.zeros(3).random_(0, to=5),
    lambda: torch.zeros(3).random_(generator=torch.Generator()),
    lambda: torch.zeros(3).random_(3, generator=torch.Generator()),
    lambda: torch.zeros(3).random_(5, 2),
    lambda: torch.zeros(3).random_(-1),
    lambda: torch.zeros(3, dtype=torch.uint8).random_(-1, 3),
    lambda: torch.zeros(3).random_(1.5),
    lambda: torch.zeros(3).normal_(0, -1),
    lambda: torch.zeros(3).normal_('a'),
    lambda: torch.zeros(3, dtype=torch.int64).normal_(),
    lambda: torch.zeros(3, dtype=torch.int64).uniform_(),
    lambda: torch.normal(torch.zeros(3), torch.ones(3), generator=torch.Generator()),
    lambda: torch.normal(torch.zeros(3)),
    lambda: torch.normal(torch.zeros(3), -1.0),
    lambda: torch.normal(torch.zeros(3), torch.tensor([1., -1., 1.])),
    lambda: torch.normal(1.0, torch.ones(2, 2)),
    lambda: torch.normal(0.0, 1.0, (2, 2), generator=torch.Generator()),
    lambda: torch.normal(0.0, 1.0, size=(2,), requires_grad=True),
    lambda: torch.normal(0.0, 1.0),
    lambda: torch.normal(torch.zeros(2, 3), torch.ones(3)),
    lambda: torch.normal(torch.zeros(2), torch.ones(3)),
    lambda: torch.normal(torch.zeros(3, dtype=torch.float64), torch.ones(3)),
    lambda: torch.normal(torch.zeros(3, dtype=torch.int64), 1.0),
    lambda: torch.rand_like(torch.zeros(3), generator=torch.Generator()),
    lambda: torch.randn_like(torch.zeros(3, dtype=torch.int64)),
    lambda: torch.rand_like(torch.zeros(3, dtype=torch.int64)),
    lambda: torch.randint_like(torch.zeros(3), 10, generator=torch.Generator()),
    lambda: torch.randint_like(torch.zeros(3), low=2, high=10),
    lambda: torch.randint_like(torch.zeros(3), 5, 2),
    lambda: torch.randint_like(torch.zeros(3), 10, dtype=torch.int64),
    lambda: torch.randint_like(torch.zeros(3)),
    lambda: torch.randint_like(torch.zeros(3), high=4, requires_grad=True),
    lambda: torch.rand_like(torch.zeros(2, 2), requires_grad=True),
    lambda: torch.randn_like(torch.zeros(2), dtype=torch.float64),
    lambda: torch.zeros(2, dtype=torch.float64).random_(2**53 + 1),
    lambda: torch.zeros(2).random_(2**24 + 2),
    lambda: torch.zeros(2, dtype=torch.bool).random_(),
    lambda: torch.zeros(2, dtype=torch.bool).random_(0, 2),
    lambda: torch.zeros(2, dtype=torch.int8).random_(-128, 128),
]
for i, c in enumerate(cases):
    try:
        print(i, c())
    except Exception as e:
        print(i, type(e).__name__, e)
"""
HALF_EMPTY_VMAP = """for f in [lambda: torch.zeros(3, dtype=torch.float16).bernoulli_(0.5), lambda: torch.zeros(3, dtype=torch.float16).bernoulli_(torch.rand(3)),
          lambda: torch.bernoulli(torch.rand(3).half()), lambda: torch.zeros(3, dtype=torch.float16).geometric_(0.3),
          lambda: torch.zeros(3, dtype=torch.float16).log_normal_(), lambda: torch.poisson(torch.rand(3).half()),
          lambda: torch.zeros(3, dtype=torch.int8).bernoulli_(torch.rand(3).double()),
          lambda: torch.func.vmap(lambda x: x.bernoulli_(0.5))(torch.zeros(2, 3)),
          lambda: torch.func.vmap(lambda x: torch.multinomial(x, 2))(torch.ones(2, 3)),
          lambda: torch.func.vmap(lambda x: torch.bernoulli(x), randomness='same')(torch.rand(2, 3)),
          lambda: torch.func.vmap(lambda x: x.exponential_(), randomness='different')(torch.zeros(2, 3)),
          lambda: torch.rand(3).bernoulli_(0.5).grad_fn, lambda: torch.rand(2, 3).t().exponential_(),
          lambda: torch.ones(5).multinomial(2, generator=torch.Generator()),
          lambda: torch.zeros(0).exponential_(), lambda: torch.zeros(0, dtype=torch.int64).cauchy_(),
          lambda: torch.zeros(0, dtype=torch.int64).log_normal_(), lambda: torch.zeros(0, dtype=torch.bool).geometric_(0.5),
          lambda: torch.bernoulli(torch.zeros(0)), lambda: torch.zeros(2, 0).multinomial(1)]:
    try:
        print(f())
    except Exception as e:
        print(type(e).__name__, e)
"""
FORWARD_MODE = """p = torch.tensor([0.3, 0.6])
with fwAD.dual_level():
    x = fwAD.make_dual(torch.zeros(2), torch.ones(2))
    y = x * 2
    y.bernoulli_(0.5)
    print(fwAD.unpack_dual(y).tangent)
    q = fwAD.make_dual(p, torch.ones(2))
    z = torch.zeros(2)
    z.bernoulli_(q)
    print(fwAD.unpack_dual(z).tangent)
    w = x * 3
    w.exponential_()
    print(fwAD.unpack_dual(w).tangent)
    b = torch.bernoulli(q)
    print(fwAD.unpack_dual(b).tangent)
    print(fwAD.unpack_dual(torch.poisson(q * 3)).tangent)
"""
CASES = _cases()



def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    results = {}
    for name, source in sorted(CASES.items()):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(source, f"<{name}>", "exec"), {"__name__": "__main__"})
        results[name] = digest(buf.getvalue())
    text = json.dumps(results, indent=0, sort_keys=True) + "\n"
    if args.check:
        return 0 if EXPECTED.read_text() == text else 1
    EXPECTED.write_text(text)
    print(f"{len(results)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
