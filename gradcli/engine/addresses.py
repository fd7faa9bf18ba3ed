"""The address in `<AddBackward0 object at 0x7f3b555a9ee0>`: id() as PyTorch shows it, or a stable one.

PyTorch prints real memory addresses, which change from run to run and defeat diffs and golden
files. With stable addresses on (`--stable-ids`), the n-th object shown gets 0x7f0000000000 + 16 n:
the same text for the same script every run, in the shape of a real address, so tools that parse
PyTorch's text still work. Objects given a stable address are kept alive while the numbering lasts,
so an id() is never reused for a different object within it.
"""

from __future__ import annotations

from gradcli.engine.state import STATE

_BASE = 0x7F0000000000


def address(obj) -> str:
    table = STATE.addresses         # id(obj) -> (obj, address text), while stable addresses are on
    if table is None:
        return hex(id(obj))
    entry = table.get(id(obj))
    if entry is None:
        entry = table[id(obj)] = (obj, hex(_BASE + 16 * (len(table) + 1)))
    return entry[1]


def use_stable(stable: bool) -> None:
    """Start a fresh numbering (stable) or go back to real addresses."""
    STATE.addresses = {} if stable else None
