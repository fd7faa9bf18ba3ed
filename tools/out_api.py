#!/usr/bin/env python3
"""Write gradcli/data/out_api.txt: which PyTorch functions take `out=`, and in what form, from the oracle.

Run with a Python that has PyTorch 2.13 (the oracle); gradcli never needs PyTorch:

    /path/to/oracle/bin/python tools/out_api.py            # rewrite the data file
    /path/to/oracle/bin/python tools/out_api.py --check    # exit 1 if the stored file differs

gradcli reads the file (gradcli/language/outkeyword.py) only when a script writes `out=` in a call, to
route the call of a function that takes it through gradcli/engine/outarg.py.

Format, UTF-8 text: a first line `version <torch.__version__>`, then one line per function that takes
`out=` in at least one of its overloads, `NAMESPACE<TAB>NAME<TAB>PARSER<TAB>FORM`. PARSER is the name
PyTorch's argument parser gives the function in its messages (`linalg_qr`, `special_expit`). FORM is
`tensor` (out is one tensor), `tuple N I` (out is a tuple of N tensors, the parameter at index I of the
signature, as PyTorch's messages count it) or both, joined by `|` (torch.max: a tensor without `dim`, a
pair with it).

How it is found: the functions of `torch` from PyTorch's own generated stubs (torch/_C/_VariableFunctions.pyi,
every overload with its `out` parameter); functions written in Python from their signature; the others
(torch.linalg, torch.special, torch.fft, ...) by calling each with tensors and an `out=` and reading the
parser's answer (an unexpected keyword, a tuple wanted, or a call that got past the parser).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import re
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_api import NAMESPACES      # noqa: E402  (every namespace whose names gradcli records)

OUT = Path(__file__).resolve().parents[1] / "gradcli" / "data" / "out_api.txt"
PREFIX = {"torch.linalg": "linalg_", "torch.special": "special_", "torch.fft": "fft_"}


def _stub_forms(torch) -> dict:
    """name -> forms of out= in torch/_C/_VariableFunctions.pyi, one per overload that has it."""
    path = os.path.join(os.path.dirname(torch.__file__), "_C", "_VariableFunctions.pyi")
    forms: dict = {}
    for node in ast.parse(Path(path).read_text()).body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        for index, p in enumerate(params):
            if p.arg != "out":
                continue
            text = ast.unparse(p.annotation)
            if "tuple" in text.lower() or "list" in text.lower():
                returns = ast.unparse(node.returns)
                kind = getattr(torch.return_types, returns.rpartition(".")[2], None)
                n = kind.n_fields if kind is not None else returns.count("Tensor")    # tuple[Tensor, ...]
                forms.setdefault(node.name, set()).add(f"tuple {n} {index}")
            else:
                forms.setdefault(node.name, set()).add("tensor")
    return forms


def _probe(torch, f) -> set:
    """The forms of out= a C function takes, found by calling it with 0..5 tensors and an out=."""
    for k in range(6):
        args = [torch.ones(2, 2)] * k
        try:
            f(*args, out=torch.empty(0))
            return {"tensor"}
        except TypeError as e:
            m = str(e)
            if "unexpected keyword argument 'out'" in m:
                return set()
            if "missing" in m and "required" in m:
                continue
            if "argument 'out' must be tuple of Tensors" in m:
                return {_tuple_form(torch, f, args)}
            if "expected one of" in m:
                shown = m.split("expected one of", 1)[1]
                return {"tensor"} if re.search(r"Tensor out = None", shown) else set()
            # a positional argument of another type: the parser stopped before `out`; the docstring says
            doc = (f.__doc__ or "").strip().split("\n", 1)[0]
            return {"tensor"} if "out=None" in doc else set()
        except Exception:
            return {"tensor"}       # past the parser: out= was taken
    raise SystemExit(f"out_api: cannot probe {f}")


def _parser_name(torch, f) -> str | None:
    """The name PyTorch's parser gives `f` in its messages, from its answer to an out= of the wrong type."""
    if type(f).__name__ != "builtin_function_or_method":
        return None
    for k in range(6):
        try:
            f(*[torch.ones(2, 2)] * k, out="?")
        except TypeError as e:
            found = re.match(r"(\w+)\(\): argument 'out'", str(e))
            if found:
                return found.group(1)
        except Exception:
            pass
    return None


def _tuple_form(torch, f, args) -> str:
    many = tuple(torch.empty(0) for _ in range(9))
    try:
        f(*args, out=many)
    except TypeError as e:
        n = int(re.search(r"expected tuple of (\d+) elements", str(e)).group(1))
    try:
        f(*args, out=(torch.empty(0), 1) + tuple(torch.empty(0) for _ in range(n - 2)))
    except TypeError as e:
        index = int(re.search(r"element 1 in argument (\d+)", str(e)).group(1))
    return f"tuple {n} {index}"


def collect() -> list[str]:
    import torch
    warnings.simplefilter("ignore")
    stubs = _stub_forms(torch)
    lines = [f"version {torch.__version__}"]
    for path in NAMESPACES:
        module = importlib.import_module(path)
        for name in sorted(n for n in dir(module) if not n.startswith("_")):
            f = getattr(module, name, None)
            if not callable(f) or inspect.isclass(f) or inspect.ismodule(f):
                continue
            if inspect.isfunction(f):           # written in Python (torch.functional, torch.nn.functional)
                try:
                    forms = {"tensor"} if "out" in inspect.signature(f).parameters else set()
                except (TypeError, ValueError):
                    forms = set()
            elif path == "torch":
                forms = stubs.get(name, set())
            elif type(f).__name__ == "builtin_function_or_method":
                forms = _probe(torch, f)
            else:
                forms = set()           # a callable object (typing's aliases, operators): no parser of PyTorch's
            if forms:
                parser = _parser_name(torch, f) or PREFIX.get(path, "") + name
                lines.append(f"{path}\t{name}\t{parser}\t{'|'.join(sorted(forms))}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored file instead of writing it")
    args = parser.parse_args()
    data = "\n".join(collect()) + "\n"
    if args.check:
        same = OUT.exists() and OUT.read_text() == data
        print("out_api: up to date" if same else "out_api: differs from the oracle")
        return 0 if same else 1
    OUT.write_text(data)
    print(f"out_api: wrote {OUT} ({data.count(chr(10)) - 1} functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
