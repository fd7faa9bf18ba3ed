"""Reading unfinished input: open brackets and strings, logical lines, and what Enter should do.

This is a deliberately small scanner, not the language's lexer: it must work on text that is
half typed (an open string, a dangling bracket) without raising, and it runs on every Enter and
every completion request, so it only tracks what those two need. The parser stays the judge of
what is valid; this module only decides whether to wait for more lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ACCEPT = "accept"
NEWLINE = "newline"

# Statements whose body follows on the next lines: Python's REPL waits for a blank line after them.
COMPOUND = frozenset(("if", "elif", "else", "while", "for", "def", "class", "with", "try", "except", "finally"))
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}


@dataclass
class Line:
    """One logical line: a statement, possibly spread over physical lines by brackets."""
    indent: int              # columns of leading whitespace of its first physical line
    first_word: str          # the identifier it starts with ("" if none)
    ends_with_colon: bool    # its last code character (comments aside) is ':'


@dataclass
class Scan:
    brackets: list = field(default_factory=list)   # (char, offset) of brackets still open, outermost first
    string: tuple | None = None     # (quote, offset of the opening quote, triple) of a string still open
    in_comment: bool = False        # the text ends inside a comment
    continuation: bool = False      # the text ends with a backslash continuation
    unmatched_closer: bool = False  # a closing bracket with nothing to close (a syntax error)
    lines: list = field(default_factory=list)       # logical lines with code

    @property
    def open(self) -> bool:
        """The text cannot be complete yet: a bracket, a triple-quoted string or a `\\` continues it."""
        if self.unmatched_closer:
            return False
        return bool(self.brackets) or self.continuation or (self.string is not None and self.string[2])


def scan(text: str) -> Scan:
    """Scan `text` from the start; never raises."""
    result = Scan()
    n = len(text)
    i = 0
    line_start = True        # at the start of a logical line (outside brackets)
    current: Line | None = None
    last_code = ""           # last code character of the current logical line
    while i < n:
        c = text[i]
        if line_start:
            j = i
            while j < n and text[j] in " \t\f":
                j += 1
            if j < n and text[j] not in "\n#":
                indent = len(text[i:j].expandtabs(8))
                k = j
                while k < n and (text[k].isalnum() or text[k] == "_"):
                    k += 1
                word = text[j:k] if k > j and not text[j].isdigit() else ""
                if text[j] == "@":
                    word = "@"              # a decorator: its def or class follows
                current = Line(indent, word, False)
                result.lines.append(current)
                last_code = ""
            line_start = False
            i = j
            continue
        if c == "#":
            end = text.find("\n", i)
            if end < 0:
                result.in_comment = True
                break
            i = end
            continue
        if c == "\\":
            if i + 1 >= n:
                result.continuation = True
                break
            if text[i + 1] == "\n":
                i += 2
                continue
        if c in "'\"":
            quote_start = i
            triple = text.startswith(c * 3, i)
            quote = c * 3 if triple else c
            i += len(quote)
            closed = False
            while i < n:
                d = text[i]
                if d == "\\":
                    i += 2
                    continue
                if not triple and d == "\n":
                    break               # an unterminated one-line string: the parser will say so
                if text.startswith(quote, i):
                    i += len(quote)
                    closed = True
                    break
                i += 1
            if not closed:
                if i >= n:
                    result.string = (quote, quote_start, triple)
                    break
                continue                # at the newline ending an unterminated one-line string
            last_code = c
            continue
        if c in _OPENERS:
            result.brackets.append((c, i))
        elif c in _CLOSERS:
            if result.brackets and _OPENERS[result.brackets[-1][0]] == c:
                result.brackets.pop()
            else:
                result.unmatched_closer = True
        elif c == "\n":
            if not result.brackets:
                if current is not None:
                    current.ends_with_colon = last_code == ":"
                current = None
                line_start = True
            i += 1
            continue
        if not c.isspace():
            last_code = c
        i += 1
    if current is not None:
        current.ends_with_colon = last_code == ":" and not result.brackets
    return result


def needs_more(text: str) -> bool:
    """Whether a REPL should keep reading lines before running `text` (at the end of the input)."""
    return enter_action(text, at_end=True) == NEWLINE


def enter_action(text: str, at_end: bool = True) -> str:
    """What Enter does in the REPL: ACCEPT runs the input, NEWLINE starts another line of it.

    The rules are Python's REPL's: open brackets, triple-quoted strings and `\\` continue; a line
    ending in ':' asks for a body; a compound statement (if, while, for, def, with) ends with a
    blank line; anything else runs at once, including input with a syntax error, so the error is
    shown as soon as the line is entered.
    """
    if not text.strip():
        return ACCEPT
    if text.lstrip().startswith("%") and "\n" not in text.strip():
        return ACCEPT                  # a magic command is one line
    result = scan(text)
    if result.open:
        return NEWLINE
    physical = text.split("\n")
    multi = len(physical) > 1
    if multi and not physical[-1].strip():
        return ACCEPT                  # a blank line ends the input
    if multi and not at_end:
        return NEWLINE                 # editing inside a recalled block: Enter splits the line
    if not result.lines:
        return ACCEPT                  # only comments
    if result.lines[-1].ends_with_colon or result.lines[-1].first_word == "@":
        return NEWLINE
    top = [line for line in result.lines if line.indent == 0]
    if top and (top[-1].first_word in COMPOUND or top[-1].first_word == "match" and top[-1].ends_with_colon):
        return NEWLINE                 # the block may go on: wait for the blank line (`match = 1` runs at once)
    return ACCEPT


def indent_after(line: str) -> int:
    """The indentation (in columns) for a new line typed after `line`."""
    stripped = line.lstrip(" \t")
    indent = len(line[:len(line) - len(stripped)].expandtabs(8))
    info = scan(line)
    if info.brackets:
        return indent                  # inside brackets keep the line's indentation
    if info.lines and info.lines[-1].ends_with_colon:
        return indent + 4
    if info.lines and info.lines[-1].first_word in ("return", "pass", "break", "continue"):
        return max(indent - 4, 0)
    return indent
