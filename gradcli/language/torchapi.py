"""PyTorch 2.13's public names and how PyTorch prints them, read from data/torch_api.z on first need.

The data comes from the oracle (tools/torch_api.py). Start-up never reads it: only a script that
reaches a name gradcli lacks (to say whether PyTorch has it) or prints a function, class or module.
"""

from __future__ import annotations

import os
import zlib

VERSION = "2.13.0+cpu"          # the PyTorch gradcli mirrors: torch.__version__
_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data", "torch_api.z")
_table: dict | None = None       # namespace -> {name: repr template}


def _read() -> bytes:
    with open(_DATA, "rb") as f:
        return f.read()


def _load() -> dict:
    global _table
    if _table is None:
        table: dict = {}
        lines = zlib.decompress(_read()).decode().splitlines()
        for line in lines[1:]:
            namespace, name, text = line.split("\t")
            table.setdefault(namespace, {})[name] = text.replace("\\n", "\n")
        _table = table
    return _table


def version() -> str:
    """The PyTorch version the data was taken from."""
    return zlib.decompress(_read()).split(b"\n", 1)[0].decode().split(" ", 1)[1]


def has(namespace: str, name: str) -> bool:
    """Whether PyTorch has `namespace.name` (namespace: a module path, or 'torch.Tensor')."""
    return name in _load().get(namespace, ())


def is_module(path: str) -> bool:
    """Whether PyTorch has a module of that path (`torch.optim`)."""
    parent, _, name = path.rpartition(".")
    table = _load()
    return path in table[""] or table.get(parent, {}).get(name, "").startswith("<module ")


def text(namespace: str, name: str, addr: str = "", self_text: str = "") -> str | None:
    """How PyTorch prints `namespace.name` (a function, class or module), with `addr` for its
    address and `self_text` for the tensor a method is bound to; None if PyTorch lacks it or
    prints it as a plain value."""
    template = _load().get(namespace, {}).get(name)
    if not template:
        return None
    return template.replace("{addr}", addr).replace("{self}", self_text)


def dir_names(subject: str) -> list | None:
    """dir() as PyTorch lists it for `subject` (a module path, 'torch.Tensor', 'torch.nn.Parameter' or
    'torch.Size'), every name in its order; None for anything else."""
    text = _load().get("dir", {}).get(subject)
    return None if text is None else text.split(" ")
