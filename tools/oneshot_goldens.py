#!/usr/bin/env python3
"""Regenerate (or check) the expected outputs of `gradcli grad | jacobian | hessian` from real PyTorch.

Each case in CASES below is a gradcli command line. An oracle interpreter with PyTorch 2.13 does in
PyTorch what the command does (docs/oneshot.md): it evaluates the inputs in a namespace holding
torch's public names (and ``torch``, ``F``, ``math``), turns floats and lists of numbers into tensors
with ``torch.tensor``, makes the float ones require grad, evaluates EXPR and differentiates it with
``backward()`` or ``torch.autograd.functional``; then it prints the results in gradcli's layout
(a label line, then ``str()`` of the value, as PyTorch prints it).

Written to ``tests/oneshot/`` for case NAME:

* ``NAME.args``: the command line after ``gradcli``, as a JSON array (what the tests run);
* ``NAME.out``: the expected stdout of the text format;
* ``NAME.err``: only for a case that fails: ``Type: message`` of the exception PyTorch raised;
* ``NAME.jsonl``: the expected ``--format jsonl`` events, without ``end`` (which holds a time).
  Only for cases that succeed.

Files of cases no longer in CASES are deleted. Every case runs twice, with
``ATEN_CPU_CAPABILITY=default`` (scalar kernels) and unset (SIMD kernels); a case whose runs
differ is reported as NONDET and nothing is written for it.

Oracle interpreter, as for tools/regen_goldens.py: ``--python PATH``, ``$ORACLE_PYTHON``, else a
virtual environment created on demand at ``.oracle-venv/``.

Usage::

    python tools/oneshot_goldens.py            # write tests/oneshot/
    python tools/oneshot_goldens.py --check    # compare with the stored files, exit 1 on a difference
    python tools/oneshot_goldens.py --python /work/oracle/bin/python

The launcher needs the standard library only; the worker (``--worker``, run by the launcher with
the oracle interpreter) imports torch and numpy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = REPO_ROOT / "tests" / "oneshot"

ROSENBROCK = "(1 - x[0])**2 + 100*(x[1] - x[0]**2)**2"
NET = "((tanh(X @ W1 + b1) @ W2 + b2 - Y)**2).mean()"

# name: the command line after `gradcli`. Known answers are noted where they are not obvious.
CASES = {
    # the tutorial: out = (3*(x+2)**2).mean() at x = ones(2, 2): 27, and d out/dx = 4.5 everywhere
    "tutorial": ["grad", "(3*(x+2)**2).mean()", "x=torch.ones(2, 2)"],
    # the tutorial's vector-Jacobian product: y = x * 1024, y.backward(v) gives 1024 * v
    "tutorial_vjp": ["grad", "x * 1024", "x=[1., 2., 3.]", "--grad-output", "[0.1, 1.0, 0.0001]"],
    # polynomial: p(2) = 48 - 8 + 2 - 7 = 35, p'(2) = 96 - 8 + 1 = 89
    "polynomial": ["grad", "3*x**4 - 2*x**2 + x - 7", "x=2.0"],
    # elementwise polynomial: the Jacobian is diag(3x² - 1) = diag(2, 11, 26)
    "polynomial_jacobian": ["jacobian", "x**3 - x", "x=[1., 2., 3.]"],
    # polynomial: second derivative 36x² - 4 at 2 = 140
    "polynomial_hessian": ["hessian", "3*x**4 - 2*x**2 + x - 7", "x=2.0"],
    # bare names: d/dx sin(x)·x² = cos(x)·x² + 2x·sin(x)
    "bare_functions": ["grad", "(sin(x) * x**2).sum()", "x=[0.5, 1.0, 1.5]"],
    # softmax cross-entropy: the gradient is (softmax(logits) - onehot(target)) / batch
    "softmax_cross_entropy": ["grad", "F.cross_entropy(logits, target)",
                              "logits=[[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]]", "target=[0, 1]"],
    # softmax: the Jacobian is diag(s) - s sᵀ
    "softmax_jacobian": ["jacobian", "softmax(z, dim=0)", "z=[1., 2., 3.]"],
    # a 2-layer network: gradients of the mean squared error with respect to the parameters only
    "two_layer_network": ["grad", "--seed", "0", "--wrt", "W1,b1,W2,b2", NET,
                          "W1=randn(3, 4)", "b1=zeros(4)", "W2=randn(4, 1)", "b2=zeros(1)",
                          "X=randn(5, 3)", "Y=randn(5, 1)"],
    # Newton's method for a root of x³ - 2x - 5 from 2: f = -1, f' = 10, so the next x is 2.1
    "newton_root": ["grad", "x**3 - 2*x - 5", "x=2.0"],
    # Newton's method on the Rosenbrock function at (-1.2, 1): gradient and Hessian
    "newton_rosenbrock_grad": ["grad", ROSENBROCK, "x=[-1.2, 1.0]"],
    "newton_rosenbrock_hessian": ["hessian", ROSENBROCK, "x=[-1.2, 1.0]"],
    "newton_rosenbrock_hvp": ["hessian", "--hvp", "[1., 0.]", ROSENBROCK, "x=[-1.2, 1.0]"],
    # a quadratic form ½ xᵀAx: the Hessian is A (symmetric); A is a constant
    "quadratic_hessian": ["hessian", "--wrt", "x", "0.5 * (x @ A @ x)", "A=[[2., 1.], [1., 3.]]", "x=[1., -1.]"],
    # several inputs: PyTorch's tuple of tuples; x²y + y³ at (1, 2): [[2y, 2x], [2x, 6y]] = [[4, 2], [2, 12]]
    "hessian_two_inputs": ["hessian", "x**2 * y + y**3", "x=1.0", "y=2.0"],
    "hvp_two_inputs": ["hessian", "--hvp", "([1., 0.], [0., 1.])", "(x * y).sum()", "x=[1., 2.]", "y=[3., 4.]"],
    "jacobian_two_inputs": ["jacobian", "x * y", "x=[1., 2.]", "y=[3., 4.]"],
    "jacobian_tuple_output": ["jacobian", "(x**2, x.sum())", "x=[1., 2.]"],
    # a linear map: the Jacobian of A @ x is A; the second value uses the first
    "jacobian_linear": ["jacobian", "--wrt", "x", "A @ x", "A=[[1., 2.], [3., 4.]]", "x=ones(2) * A[0, 0]"],
    "float64": ["grad", "(x**2).sum()", "x=torch.tensor([1., 2.], dtype=torch.float64)"],
    "unused_input": ["grad", "x * 2", "x=1.0", "y=2.0"],
    "integer_input": ["grad", "x ** n", "x=2.0", "n=3"],
    "seeded_randn": ["grad", "--seed", "0", "(x**2).sum()", "x=randn(3)"],
    # errors: PyTorch's message
    "err_not_scalar": ["grad", "x**2", "x=[1., 2.]"],
    "err_size_mismatch": ["grad", "(x + ones(3)).sum()", "x=ones(2)"],
    "err_unknown_name": ["grad", "x * y", "x=2.0"],
    "err_hessian_not_scalar": ["hessian", "x * 2", "x=[1., 2.]"],
    "err_hvp_size": ["hessian", "--hvp", "[1., 0., 0.]", "(x * x).sum()", "x=[1., 2.]"],
    "err_grad_output_shape": ["grad", "x**2", "x=[1., 2.]", "--grad-output", "[1., 1., 1.]"],
}

RUNS = (("default", "default"), ("native", None))


# ============================================================================ the worker (PyTorch)

def _command(argv: list[str]):
    p = argparse.ArgumentParser(prog="gradcli", add_help=False)
    p.add_argument("command")
    p.add_argument("expr")
    p.add_argument("inputs", nargs="*")
    p.add_argument("--seed", type=int)
    p.add_argument("--wrt")
    p.add_argument("--grad-output")
    p.add_argument("--hvp")
    return p.parse_args(argv)


def _oracle(argv: list[str]) -> dict:
    """What gradcli should print for one command line, computed with PyTorch."""
    import math

    import torch

    args = _command(argv)
    if args.seed is not None:
        torch.manual_seed(args.seed)
    ns = {n: getattr(torch, n) for n in dir(torch) if not n.startswith("_")}
    ns.update(torch=torch, F=torch.nn.functional, math=math)

    def numbers(v) -> bool:
        return all(numbers(x) if isinstance(x, list) else type(x) in (int, float, bool) for x in v)

    def as_tensor(v):
        if type(v) is float or (type(v) is list and numbers(v)):
            return torch.tensor(v)
        return v

    def floating(v) -> bool:
        return isinstance(v, torch.Tensor) and v.is_floating_point()

    events, blocks = [], []
    try:
        texts = dict(item.split("=", 1) for item in args.inputs)
        wrt = args.wrt.split(",") if args.wrt else list(texts)
        names = []
        for name, text in texts.items():
            v = as_tensor(eval(text, ns))
            if name in wrt and floating(v):
                if v.grad_fn is not None:
                    v = v.detach()
                v.requires_grad_(True)
                names.append(name)
            elif isinstance(v, torch.Tensor) and v.requires_grad:
                v = v.detach()
            ns[name] = v
        for name in texts:
            events.append({"event": "input", "var": name, "differentiated": name in names, "value": _typed(ns[name])})

        def add(label, fields, value):
            blocks.append(label + "\n" + str(value) + "\n")
            events.append({**fields, "value": _typed(value)})

        def add_values(value):
            if isinstance(value, tuple):
                for i, v in enumerate(value):
                    add(f"value[{i}]:", {"event": "value", "index": [i]}, v.detach())
            else:
                add("value:", {"event": "value", "index": []}, value.detach())

        seen = [None]

        def func(*tensors):
            ns.update(zip(names, tensors))
            seen[0] = eval(args.expr, ns)
            return seen[0]

        inputs = tuple(ns[n] for n in names)
        several = len(names) > 1
        if args.command == "grad":
            out = eval(args.expr, ns)
            gradient = as_tensor(eval(args.grad_output, ns)) if args.grad_output is not None else None
            out.backward(gradient)
            add_values(out)
            for name in names:
                add(f"{name}.grad:", {"event": "grad", "var": name}, ns[name].grad)
        elif args.command == "jacobian":
            jac = torch.autograd.functional.jacobian(func, inputs if several else inputs[0])
            add_values(seen[0])
            tupled = isinstance(seen[0], tuple)
            for o in range(len(seen[0]) if tupled else 1):
                row = jac[o] if tupled else jac
                for k, name in enumerate(names):
                    path = ([o] if tupled else []) + ([k] if several else [])
                    of = [f"value[{o}]"] if tupled else []
                    add(f"jacobian{_index(path)} ({', '.join(of + [name])}):",
                        {"event": "jacobian", "index": path, "output": o if tupled else None, "var": name},
                        row[k] if several else row)
        elif args.hvp is not None:
            v = eval(args.hvp, ns)
            v = tuple(as_tensor(x) for x in v) if isinstance(v, tuple) else as_tensor(v)
            value, product = torch.autograd.functional.hvp(func, inputs if several else inputs[0], v)
            add_values(value)
            for k, name in enumerate(names):
                add(f"hvp{_index([k] if several else [])} ({name}):",
                    {"event": "hvp", "index": [k] if several else [], "var": name},
                    product[k] if several else product)
        else:
            hess = torch.autograd.functional.hessian(func, inputs if several else inputs[0])
            add_values(seen[0])
            for i, a in enumerate(names):
                for j, b in enumerate(names):
                    add(f"hessian{_index([i, j] if several else [])} ({a}, {b}):" if several
                        else f"hessian ({a}):",
                        {"event": "hessian", "index": [i, j] if several else [], "vars": [a, b]},
                        hess[i][j] if several else hess)
    except Exception as e:
        return {"out": "", "err": f"{type(e).__name__}: {e}", "events": None}
    return {"out": "".join(blocks), "err": None, "events": events}


def _index(path) -> str:
    return "".join(f"[{i}]" for i in path)


def _typed(v):
    """A value as gradcli's jsonl writes it (gradcli/diagnostics/jsonl.py: value)."""
    import numpy as np
    import torch
    if v is None or type(v) in (bool, int, str):
        return v
    if isinstance(v, torch.Tensor):
        a = v.detach().numpy()
        if a.dtype.kind != "f":
            data = a.tolist()
        else:
            flat = [float(s) for s in a.ravel().astype(str).tolist()] if a.dtype.itemsize < 8 else a.ravel().tolist()
            data = flat[0] if a.ndim == 0 else np.array(flat, dtype=object).reshape(a.shape).tolist()
        fn = v.grad_fn
        return {"type": "tensor", "dtype": str(v.dtype).removeprefix("torch."), "shape": list(v.shape),
                "data": data, "requires_grad": v.requires_grad, "grad_fn": type(fn).__name__ if fn else None}
    if isinstance(v, (list, tuple)):
        return [_typed(x) for x in v]
    return {"type": type(v).__name__, "repr": repr(v)}


def worker() -> None:
    results = {name: _oracle(argv) for name, argv in CASES.items()}
    json.dump(results, sys.stdout)


# ============================================================================ the launcher (stdlib)

def _run_worker(python: str, capability: str | None) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8")
    env.pop("ATEN_CPU_CAPABILITY", None)
    if capability is not None:
        env["ATEN_CPU_CAPABILITY"] = capability
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--worker"], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"oneshot_goldens: the worker failed under {python}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def same_events(a, b, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Events (or any JSON data) equal but for floating point numbers, which may differ by
    |a - b| <= atol + rtol * |b|: a few float32 ulps, as the order of a sum changes them."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            return abs(a - b) <= atol + rtol * abs(b)
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_events(a[k], b[k], rtol, atol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_events(x, y, rtol, atol) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def same_result(a: dict, b: dict) -> bool:
    """Two runs of the oracle agree: the same text and error, and events within same_events."""
    return a["out"] == b["out"] and a["err"] == b["err"] and same_events(a["events"], b["events"])


def _files(name: str, result: dict) -> dict:
    """The files of one case: {file name: text, or None for a file that must not exist}."""
    events = result["events"]
    return {
        f"{name}.args": json.dumps(CASES[name], ensure_ascii=False) + "\n",
        f"{name}.out": result["out"],
        f"{name}.err": result["err"] + "\n" if result["err"] is not None else None,
        f"{name}.jsonl": "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
        if events is not None else None,
    }


def _matches(files: dict) -> bool:
    for f, text in files.items():
        path = OUT_DIR / f
        if text is None:
            if path.exists():
                return False
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            return False
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Regenerate tests/oneshot/ from PyTorch 2.13.")
    p.add_argument("--check", action="store_true", help="compare with the stored files; exit 1 on a difference")
    p.add_argument("--python", metavar="PATH", help="oracle interpreter (default: $ORACLE_PYTHON, else .oracle-venv/)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker()
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from regen_goldens import choose_python
    python = choose_python(args.python)
    runs = [(label, _run_worker(python, capability)) for label, capability in RUNS]
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    counts = {"written": 0, "unchanged": 0, "ok": 0, "differs": 0, "NONDET": 0}
    for name in CASES:
        first = runs[0][1][name]
        if any(not same_result(r[name], first) for _, r in runs[1:]):
            counts["NONDET"] += 1
            print(f"NONDET    {name}")
            continue
        files = _files(name, first)
        same = _matches(files)
        if args.check:
            counts["ok" if same else "differs"] += 1
            if not same:
                print(f"differs   {name}")
            continue
        if same:
            counts["unchanged"] += 1
            continue
        for f, text in files.items():
            path = OUT_DIR / f
            if text is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(text, encoding="utf-8")
        counts["written"] += 1
        print(f"written   {name}" + (f"  (raises {first['err']})" if first["err"] else ""))
    stale = sorted(f.name for f in OUT_DIR.iterdir()
                   if f.suffix in (".args", ".out", ".err", ".jsonl") and f.stem not in CASES)
    for f in stale:
        if args.check:
            print(f"stale     {f}")
            counts["differs"] += 1
        else:
            (OUT_DIR / f).unlink()
            print(f"deleted   {f}")
    order = ("ok", "differs") if args.check else ("written", "unchanged")
    print(f"{'check' if args.check else 'regen'}: {len(CASES)} cases: "
          + ", ".join(f"{counts[k]} {k}" for k in order + ("NONDET",)))
    return 1 if counts["differs"] or counts["NONDET"] else 0


if __name__ == "__main__":
    sys.exit(main())
