"""String literals and f-strings: STRING tokens to a Constant or a JoinedStr of text and FormattedValues."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from gradcli.language.syntax import Constant, FormattedValue, JoinedStr
from gradcli.language.syntaxerrors import Problems, error, error_at

_PREFIXES = {"", "r", "u", "f", "b", "rb", "br", "fr", "rf"}
_SIMPLE_ESCAPES = {"\n": "", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t", "v": "\v"}
_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})"
                     r"|N\{([^}\n]*)\}|([\s\S]))")
_FSTRING_SPECIAL = re.compile(r"[{}\\]")
# The characters that can end or nest a field's expression, or need a look (see _fstring_expression_end).
_FIELD_SPECIAL = re.compile(r"[\'\"()\[\]{}#!:=<>]")


def string_literal(tokens: list, parse_fragment: Callable, problems: Problems):
    """Adjacent string literals, concatenated: a Constant, or a JoinedStr if any is an f-string.

    parse_fragment(text, line, col) parses an f-string field's expression into a syntax node; a bytes
    literal is noted in `problems` and read on as a string.
    """
    first = tokens[0]
    parts, formatted = [], False
    for tok in tokens:
        where = _Locator(tok)
        text = tok.value
        quote = 0
        while text[quote] not in "'\"":
            quote += 1
        prefix = text[:quote].lower()
        if prefix not in _PREFIXES:
            raise error_at(f"invalid string prefix '{text[:quote]}'", tok)
        if "b" in prefix:
            problems.refuse("bytes literals (b'...') are", tok)
        size = 3 if len(text) - quote >= 6 and text.startswith(text[quote] * 3, quote) else 1
        body_at = quote + size
        body = text[body_at:len(text) - size]
        raw = "r" in prefix
        if "f" in prefix:
            formatted = True
            parts.extend(_fstring(parse_fragment, where, body, body_at, raw, 0, False)[0])
        else:
            parts.append(_unescape(body, raw, where, body_at))
    if not formatted:
        return Constant("".join(parts), first.line, first.col)
    merged, run = [], []        # runs of literal text are joined once, not grown piece by piece
    for part in parts:
        if type(part) is str:
            run.append(part)
            continue
        if run and "".join(run):
            merged.append("".join(run))
        run = []
        merged.append(part)
    if run and "".join(run):
        merged.append("".join(run))
    return JoinedStr(merged, first.line, first.col)


class _Locator:
    """(line, col) of a character of a string token, which may span lines: f-string fields
    and bad escapes are reported where they are in the script."""

    def __init__(self, tok):
        self.tok = tok
        self.breaks = [m.start() for m in re.finditer("\n", tok.value)] if "\n" in tok.value else []

    def __call__(self, offset: int):
        before = bisect.bisect_left(self.breaks, offset)
        if not before:
            return self.tok.line, self.tok.col + offset
        return self.tok.line + before, offset - self.breaks[before - 1]


def _unescape(body: str, raw: bool, where: _Locator, at: int) -> str:
    if raw or "\\" not in body:
        return body

    def replace(m):
        octal, hex2, hex4, hex8, name, other = m.groups()
        if other is not None:
            if other in "xuUN":
                line, col = where(at + m.start())
                kind = {"x": "\\xXX", "u": "\\uXXXX", "U": "\\UXXXXXXXX", "N": "\\N{...}"}[other]
                raise error(f"truncated {kind} escape" if other != "N" else "malformed \\N character escape",
                            line, col)
            return _SIMPLE_ESCAPES.get(other, m.group())    # unknown escapes keep their backslash
        if name is not None:
            try:
                import unicodedata      # \N{...} escapes only
                return unicodedata.lookup(name)
            except KeyError:
                raise error(f"unknown Unicode character name '{name}'", *where(at + m.start())) from None
        code = int(octal, 8) if octal else int(hex2 or hex4 or hex8, 16)
        if code > 0x10FFFF:
            raise error("illegal Unicode character", *where(at + m.start()))
        return chr(code)

    return _ESCAPE.sub(replace, body)


def _fstring(parse_fragment: Callable, where: _Locator, body: str, at: int, raw: bool, depth: int, in_spec: bool,
             i: int = 0):
    """The parts of an f-string body (or of a format spec, which ends at its '}').

    Returns (parts, index where scanning stopped). `at` is the body's offset in the token.
    """
    parts, start, n = [], i, len(body)
    while True:
        m = _FSTRING_SPECIAL.search(body, i)
        if m is None:
            if in_spec:
                raise error("f-string: expecting '}'", *where(at + n))
            parts.append(_unescape(body[start:], raw, where, at + start))
            return parts, n
        j = m.start()
        char = body[j]
        if char == "\\":
            if raw or body[j + 1:j + 2] in ("{", "}"):
                i = j + 1
            elif body.startswith("N{", j + 1):     # \N{NAME}: its braces are not a field
                close = body.find("}", j)
                i = close + 1 if close >= 0 else n
            else:
                i = j + 2
            continue
        if in_spec and char == "}":
            parts.append(_unescape(body[start:j], raw, where, at + start))
            return parts, j
        if not in_spec and body.startswith(char, j + 1):      # {{ and }} are literal braces
            parts.append(_unescape(body[start:j + 1], raw, where, at + start))
            i = start = j + 2
            continue
        if char == "}":
            raise error("f-string: single '}' is not allowed", *where(at + j))
        parts.append(_unescape(body[start:j], raw, where, at + start))
        i = start = _fstring_field(parse_fragment, where, body, at, raw, depth, j, parts)


def _fstring_field(parse_fragment: Callable, where: _Locator, body: str, at: int, raw: bool, depth: int, brace: int,
                   parts: list) -> int:
    """Parse the field {expr[=][!c][:spec]} opening at body[brace]; append it; return where it ends."""
    if depth >= 2:
        raise error("f-string: expressions nested too deeply", *where(at + brace))
    start = brace + 1
    end = _fstring_expression_end(where, body, at, start)
    n = len(body)
    if end >= n:
        raise error("f-string: expecting '}'", *where(at + brace))
    source = body[start:end]
    if not source.strip():
        raise error("f-string: empty expression not allowed", *where(at + brace))
    if "\\" in source:
        raise error("f-string expression part cannot include a backslash", *where(at + start))
    value = parse_fragment(source, *where(at + start))
    conversion = None
    self_documenting = body[end] == "="
    if self_documenting:            # f"{x=}" prints "x=" and then repr(x)
        end += 1
        while end < n and body[end] == " ":
            end += 1
        parts.append(body[start:end])
    if end < n and body[end] == "!":
        conversion = body[end + 1:end + 2]
        if conversion not in ("r", "s", "a"):
            raise error(f"f-string: invalid conversion character '{conversion}': expected 's', 'r', or 'a'",
                        *where(at + end + 1))
        end += 2
    spec = None
    if end < n and body[end] == ":":
        line, col = where(at + end + 1)
        spec_parts, end = _fstring(parse_fragment, where, body, at, raw, depth + 1, True, end + 1)
        spec = JoinedStr([p for p in spec_parts if p != ""], line, col)
    if end >= n or body[end] != "}":
        raise error("f-string: expecting '}'", *where(at + min(end, n)))
    if self_documenting and conversion is None and spec is None:
        conversion = "r"
    line, col = where(at + brace)
    parts.append(FormattedValue(value, conversion, spec, line, col))
    return end + 1


def _fstring_expression_end(where: _Locator, body: str, at: int, i: int) -> int:
    """Where a field's expression stops: a top-level '}', '!', ':' or self-documenting '='."""
    n, depth = len(body), 0
    search = _FIELD_SPECIAL.search
    while i < n:
        m = search(body, i)            # skip the plain characters of names, numbers and dots at once
        if m is None:
            return n
        i = m.start()
        char = body[i]
        if char in "'\"":
            quote = char * 3 if body.startswith(char * 3, i) else char
            close = body.find(quote, i + len(quote))
            if close < 0:
                raise error("f-string: unterminated string", *where(at + i))
            i = close + len(quote)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0 and char == "}":
                return i
            depth = max(depth - 1, 0)
        elif char == "#":
            raise error("f-string expression part cannot include '#'", *where(at + i))
        elif depth == 0:
            two = body[i:i + 2]
            if two in ("!=", "==", "<=", ">="):
                i += 2
                continue
            if char in "!:" or char == "=":
                return i
        i += 1
    return n