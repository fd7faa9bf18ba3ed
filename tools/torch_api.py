#!/usr/bin/env python3
"""Write gradcli/data/torch_api.z: PyTorch's public names, and how PyTorch prints each, from the oracle.

Run with a Python that has PyTorch 2.13 (the oracle); gradcli never needs PyTorch:

    /path/to/oracle/bin/python tools/torch_api.py            # rewrite the data file
    /path/to/oracle/bin/python tools/torch_api.py --check    # exit 1 if the stored file differs

gradcli reads the file (gradcli/language/torchapi.py) only when a script reaches a name gradcli lacks, to
tell a name PyTorch has (NotImplementedError) from one it does not (PyTorch's AttributeError), and
when a script prints a function, class or module, to print it as PyTorch does.

Format, zlib-compressed UTF-8 text: a first line `version <torch.__version__>`, then one line per
public name, `NAMESPACE<TAB>NAME<TAB>REPR`. NAMESPACE is a module path, `torch.Tensor` or one of CLASSES
(`torch.nn.Module`: the class's public attributes, with an empty REPR), or empty
for the line of a module itself (NAME is then its path), or `dir` for the line listing `dir()` of a tensor, a
parameter, a torch.Size or a module (NAME is then its path, REPR its names separated by spaces). REPR is
PyTorch's repr of a module, class or function with its address written `{addr}` (a module's file
is named relative to site-packages: `torch/nn/__init__.py`); for a bound method of a tensor, the tensor's
own repr is `{self}`; it is empty for other values (numbers, dtypes, ...), whose printing gradcli
does not take from here.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import warnings
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "gradcli" / "data" / "torch_api.z"

NAMESPACES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.autograd",
    "torch.autograd.function", "torch.autograd.functional", "torch.testing", "torch.autograd.forward_ad", "torch.autograd.graph", "torch.optim",
    "torch.optim.lr_scheduler", "torch.optim.swa_utils", "torch.linalg", "torch.utils", "torch.utils.data",
    "torch.utils.checkpoint", "torch.func",
    "torch.distributions", "torch.distributions.constraints", "torch.distributions.kl", "torch.random", "torch.fft",
    "torch.special", "torch.nn.utils", "torch.version", "torch.nn.grad", "torch.amp", "torch.amp.autocast_mode",
    "torch.amp.grad_scaler", "torch.cpu", "torch.cpu.amp", "torch.cuda", "torch.cuda.amp", "torch.compiler",
    "torch.nn.utils.prune", "torch.nn.attention", "torch.backends", "torch.backends.cuda", "torch.backends.cudnn", "torch.backends.mkldnn",
    "torch.backends.openmp", "torch.backends.mkl", "torch.backends.mps", "torch.sparse",
)
CLASSES = ("torch.nn.Module", "torch.optim.Optimizer", "torch.optim.lr_scheduler.LRScheduler",
           "torch.utils.data.DataLoader", "torch.TypedStorage", "torch.UntypedStorage")
_ADDRESS = re.compile(r"0x[0-9a-f]+")


def _repr(value, tensor=None) -> str:
    import torch
    if inspect.ismodule(value):
        return re.sub(r" from '[^']*/site-packages/", " from '", repr(value))
    if not (inspect.isclass(value) or callable(value)):
        return ""
    text = repr(value)
    if tensor is not None:
        text = text.replace(repr(tensor), "{self}")
    return _ADDRESS.sub("{addr}", text).replace("\n", "\\n")


def collect() -> list[str]:
    import torch
    warnings.simplefilter("ignore")     # reading deprecated attributes (Tensor.volatile, .T) warns
    lines = [f"version {torch.__version__}"]
    for path in NAMESPACES:
        module = importlib.import_module(path)
        lines.append(f"\t{path}\t{_repr(module)}")      # the module itself, in namespace ""
        for name in sorted(n for n in dir(module) if not n.startswith("_")):
            try:
                value = getattr(module, name)
            except Exception:          # a lazy attribute that fails to load: still a public name
                value = None
            lines.append(f"{path}\t{name}\t{_repr(value)}")
    t = torch.ones(2, requires_grad=True)
    for name in sorted(n for n in dir(torch.Tensor) if not n.startswith("_")):
        try:
            value = getattr(t, name)
        except Exception:
            value = None
        lines.append(f"torch.Tensor\t{name}\t{_repr(value, t) if inspect.isroutine(value) else ''}")
    # the public attributes of the classes whose instances scripts hold as gradcli's own (a module, an
    # optimiser): an attribute PyTorch has there and gradcli lacks is an honest NotImplementedError
    for path in CLASSES:
        module_path, _, class_name = path.rpartition(".")
        cls = getattr(importlib.import_module(module_path), class_name)
        lines.extend(f"{path}\t{name}\t" for name in sorted(n for n in dir(cls) if not n.startswith("_")))
    # dir() of what a script's misspelt attribute may be read on, every name (private ones too): Python's
    # "Did you mean" chooses among them (gradcli/language/suggestions.py)
    subjects = {"torch.Tensor": torch.ones(2), "torch.nn.Parameter": torch.nn.Parameter(torch.ones(2)),
                "torch.Size": torch.Size([2])}
    subjects.update((path, importlib.import_module(path)) for path in NAMESPACES)
    for subject, value in subjects.items():
        lines.append(f"dir\t{subject}\t{' '.join(dir(value))}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored file instead of writing it")
    args = parser.parse_args()
    data = ("\n".join(collect()) + "\n").encode()
    if args.check:
        same = OUT.exists() and zlib.decompress(OUT.read_bytes()) == data
        print("torch_api: up to date" if same else "torch_api: differs from the oracle")
        return 0 if same else 1
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_bytes(zlib.compress(data, 9))
    names = data.count(b"\n") - 1
    print(f"torch_api: wrote {OUT} ({names} names, {OUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
