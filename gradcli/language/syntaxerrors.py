"""The syntax errors the front-end passes raise, placed in "<script>" until parse() names the file."""

from __future__ import annotations

from gradcli.errors import ScriptSyntaxError


def error(message: str, line: int, col: int) -> ScriptSyntaxError:
    return ScriptSyntaxError(message, "<script>", line, col)


def error_at(message: str, where) -> ScriptSyntaxError:
    """An error at a token or node: both carry `line` and `col`."""
    return ScriptSyntaxError(message, "<script>", where.line, where.col)


def refused(what: str, where) -> ScriptSyntaxError:
    return error_at(f"{what} not part of gradcli's language", where)
