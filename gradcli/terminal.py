"""Colour on the terminal: when to use it (--color, NO_COLOR, a TTY) and how errors are painted."""

from __future__ import annotations

import os

RED = "\x1b[31m"
BOLD_RED = "\x1b[1;31m"
RESET = "\x1b[0m"
COLOR_MODES = ("auto", "always", "never")


def colour_wanted(stream, mode: str = "auto") -> bool:
    """`always` and `never` are what they say; `auto` colours a terminal unless NO_COLOR is set.

    An explicit `--color always` overrides NO_COLOR, as no-color.org asks of command-line flags."""
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):    # no isatty, or a closed stream
        return False


def paint_error(text: str) -> str:
    """An error report (ScriptError.render()): the headline in bold red, the caret line in red."""
    lines = text.split("\n")
    lines[0] = BOLD_RED + lines[0] + RESET
    if len(lines) == 3:
        lines[2] = RED + lines[2] + RESET
    return "\n".join(lines)
