"""Colour on the terminal: when to use it (--color, NO_COLOR, FORCE_COLOR, TERM=dumb, a TTY) and how errors are painted."""

from __future__ import annotations

import os

RED = "\x1b[31m"
BOLD_RED = "\x1b[1;31m"
RESET = "\x1b[0m"
COLOR_MODES = ("auto", "always", "never")


def colour_wanted(stream, mode: str = "auto") -> bool:
    """`always` and `never` are what they say; `auto` colours a terminal, as the common conventions
    ask (CPython 3.13 reads them in this order):

    * NO_COLOR (any non-empty value) turns colour off; only an explicit `--color always` overrides
      it, as no-color.org asks of command-line flags;
    * FORCE_COLOR (any non-empty value) turns it on, even when the stream is not a terminal;
    * TERM=dumb turns it off: a dumb terminal shows escape sequences as text."""
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if dumb_terminal():
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):    # no isatty, or a closed stream
        return False


def dumb_terminal() -> bool:
    """TERM=dumb (or unknown, as prompt_toolkit counts it): a terminal that shows text and nothing
    else, no colour and no cursor movement (Emacs' shell buffers, some CI logs)."""
    return os.environ.get("TERM", "").lower() in ("dumb", "unknown")


def paint_error(text: str) -> str:
    """An error report (ScriptError.render()): the headline in bold red, the caret line in red."""
    lines = text.split("\n")
    lines[0] = BOLD_RED + lines[0] + RESET
    if len(lines) == 3:
        lines[2] = RED + lines[2] + RESET
    return "\n".join(lines)
