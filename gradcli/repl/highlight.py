"""Syntax colours for the input line: a small regular-expression lexer for the language.

Small on purpose: it must colour half-typed input (an open string, a refused keyword) without
ever failing, and it spares the REPL a dependency on pygments.
"""

from __future__ import annotations

import re

from gradcli.language import stdlib
from gradcli.language.lexer import REFUSED_KEYWORDS
from gradcli.repl.completion import KEYWORDS

_STRING_PREFIX = r"(?:[rR][bBfF]?|[bBfF][rR]?|[uU])?"
_TOKEN = re.compile(r"""
    (?P<magic>\A[ \t]*%[A-Za-z_]*)
  | (?P<comment>\#[^\n]*)
  | (?P<string>""" + _STRING_PREFIX + r"""
        (?: '''(?:\\.|(?!''')[^\\])*(?:'''|\Z)
          | \"\"\"(?:\\.|(?!\"\"\")[^\\])*(?:\"\"\"|\Z)
          | '(?:\\.|[^'\\\n])*(?:'|(?=\n)|\Z)
          | "(?:\\.|[^"\\\n])*(?:"|(?=\n)|\Z) ))
  | (?P<number>(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)(?![\w.]))
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<operator>[-+*/%@<>=!&|^~:.,;()\[\]{}]+)
""", re.VERBOSE | re.DOTALL)

_CONSTANTS = frozenset(("True", "False", "None"))
_KEYWORDS = frozenset(KEYWORDS) - _CONSTANTS
_REFUSED = frozenset(REFUSED_KEYWORDS)
_BUILTINS = frozenset(stdlib.make_builtins(lambda text: None))

STYLES = {
    "keyword": "ansimagenta bold",
    "constant": "ansimagenta",
    "builtin": "ansicyan",
    "module": "ansiblue",
    "string": "ansigreen",
    "number": "ansiyellow",
    "comment": "ansibrightblack italic",
    "magic": "ansiblue bold",
    "refused": "ansired underline",
    "prompt": "ansigreen bold",
    "prompt.continuation": "ansibrightblack",
}


def fragments(text: str) -> list:
    """(style class, text) pieces covering `text`."""
    out = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() > pos:
            out.append(("", text[pos:m.start()]))
        kind = m.lastgroup
        value = m.group()
        if kind == "name":
            if value in _KEYWORDS:
                kind = "keyword"
            elif value in _CONSTANTS:
                kind = "constant"
            elif value in _REFUSED:
                kind = "refused"
            elif value in _BUILTINS:
                kind = "builtin"
            elif value in ("torch", "math"):
                kind = "module"
            else:
                kind = ""
        elif kind == "operator":
            kind = ""
        out.append((f"class:{kind}" if kind else "", value))
        pos = m.end()
    if pos < len(text):
        out.append(("", text[pos:]))
    return out


def lines(text: str) -> list:
    """The fragments split at line ends: one list per line of `text`."""
    result = [[]]
    for style, value in fragments(text):
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                result.append([])
            if part:
                result[-1].append((style, part))
    return result


def make_lexer():
    """A prompt_toolkit Lexer colouring the whole input at once (strings can span lines)."""
    from prompt_toolkit.lexers import Lexer

    class GradLexer(Lexer):
        def lex_document(self, document):
            try:
                by_line = lines(document.text)
            except Exception:          # colouring must never get in the way of typing
                by_line = [[("", line)] for line in document.lines]

            def get_line(lineno):
                return by_line[lineno] if lineno < len(by_line) else []
            return get_line

    return GradLexer()
