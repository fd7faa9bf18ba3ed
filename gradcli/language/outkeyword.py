"""The `out=` keyword of a call (torch.sin(x, out=o)): which torch functions take it, read from data/out_api.txt
(written from the oracle by tools/out_api.py) on the first call that gives one, and such a call routed to the
engine's one mechanism (gradcli.engine.outarg). The compiler sends here only calls that write `out=`, so a
call without it costs nothing more."""

from __future__ import annotations

import os

from gradcli.language import stdlib

_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data", "out_api.txt")
_table: dict | None = None      # "torch.linalg.qr" -> (parser name, forms)
_OWN = ("torch.fft.",)          # the namespaces whose functions take out= themselves (gradcli.engine.ops.fft)


def table() -> dict:
    """Every torch function that takes out= in PyTorch: its full name -> (the parser's name for it, its forms)."""
    global _table
    if _table is None:
        with open(_DATA, encoding="utf-8") as f:
            lines = f.read().splitlines()
        _table = {f"{namespace}.{name}": (parser, forms)
                  for namespace, name, parser, forms in (line.split("\t") for line in lines[1:])}
    return _table


def call(f, args, kwargs: dict):
    """f(*args, **kwargs) for a call whose keywords include `out`: through the out= mechanism when `f` is a
    torch function that takes it (out=None is no out at all), else as written (a function without it refuses
    the keyword with its own words; a script's own function takes its own `out` parameter)."""
    # the name the script called it by (torch.special.erf, not the torch.erf it shares its function with)
    key = f"{f.namespace}.{f.name}" if f.__class__ is stdlib.Builtin else stdlib.torch_name(f)
    entry = table().get(key) if key is not None else None
    if entry is None or key.startswith(_OWN):
        return f(*args, **kwargs)
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    if out is None:
        return f(*args, **kwargs)
    from gradcli.engine import outarg
    return outarg.call(key, entry[0], entry[1], f, tuple(args), kwargs, out)


def as_parsed(kwargs: dict) -> dict:
    """The keywords as PyTorch's parser judges them when it chooses an overload: an out= tuple or list as one
    of tensors (its elements are checked once the overload is chosen, by gradcli.engine.outarg)."""
    from gradcli.engine import outarg
    return {**kwargs, "out": outarg.as_parsed(kwargs["out"])}
