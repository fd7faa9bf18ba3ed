"""Workload sizes as parameters: a line `NAME = value  # param` in a .grad or .py workload is a size
the runner may rewrite, so every workload runs unchanged at its default sizes and smaller on demand."""

from __future__ import annotations

import re
from pathlib import Path

PARAM = re.compile(r"^(?P<name>[A-Z_]+) = (?P<value>.+?)  # param$", re.MULTILINE)


def defaults(path: Path) -> dict[str, str]:
    """The parameters a workload declares, with their default values as source text."""
    return {m["name"]: m["value"] for m in PARAM.finditer(path.read_text())}


def with_params(source: str, **params) -> str:
    """`source` with the named parameters set (values written with repr); unknown names are errors."""
    unknown = set(params) - {m["name"] for m in PARAM.finditer(source)}
    if unknown:
        raise KeyError(f"no such parameter: {', '.join(sorted(unknown))}")
    return PARAM.sub(lambda m: f"{m['name']} = {repr(params[m['name']]) if m['name'] in params else m['value']}"
                               "  # param", source)


def instantiate(path: Path, directory: Path, **params) -> Path:
    """A copy of workload `path` in `directory`, same file name, with `params` written in."""
    target = directory / path.name
    target.write_text(with_params(path.read_text(), **params))
    return target
