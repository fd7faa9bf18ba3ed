"""Error values with source positions: one type for syntax errors, one for script runtime errors."""

from __future__ import annotations

import io
from itertools import islice

# Exit statuses, documented in the README.
EXIT_OK = 0
EXIT_SCRIPT_ERROR = 1
EXIT_USAGE = 2

# A message past this many characters (an assert with a 100 MB message, a huge string quoted by an
# error) is cut, saying how much was left out: reports stay readable and cheap to write.
MAX_MESSAGE = 4096


def shortened(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    return f"{message[:MAX_MESSAGE]}... [{len(message) - MAX_MESSAGE:,} more characters]"


def source_line(source: str, line: int) -> str | None:
    """Line `line` (1-based) of `source` without its newline, or None. Lines end at "\n" only, as the
    lexer counts them; the lines before are read one at a time, so a script of millions of lines
    costs no list of them."""
    if line < 1:
        return None
    found = next(islice(io.StringIO(source, newline="\n"), line - 1, None), None)
    if found is None:       # past the last line read, but split("\n") has one more, empty, after a final "\n"
        return "" if source.count("\n") == line - 1 else None
    return found.rstrip("\n")


def source_lines(source: str, wanted: set) -> dict:
    """{line: its text} for the line numbers in `wanted`, read in one pass that stops at the last."""
    found = {}
    last = max(wanted, default=0)
    for number, text in enumerate(io.StringIO(source, newline="\n"), 1):
        if number > last:
            break
        if number in wanted:
            found[number] = text.rstrip("\n")
    for number in wanted - found.keys():
        text = source_line(source, number)
        if text is not None:
            found[number] = text
    return found


class ScriptError(Exception):
    """An error in a script, located at FILE:LINE:COL (line and col are 1-based; 0 means unknown)."""

    exit_status = EXIT_SCRIPT_ERROR
    # a close name for an unknown one, which the report adds as CPython's traceback does (not part of the
    # message, which is the exception's str())
    suggestion: str | None = None

    def __init__(self, kind: str, message: str, filename: str = "<script>", line: int = 0,
                 col: int = 0, source_line: str | None = None):
        message = shortened(message)
        super().__init__(message)
        self.kind = kind            # the exception type a Python user would see: "RuntimeError", ...
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.source_line = source_line

    def located(self, filename: str, source: str) -> "ScriptError":
        """Fill in the file name and the text of the offending line from the script source."""
        self.filename = filename
        if self.source_line is None and self.line > 0:
            self.source_line = source_line(source, self.line)
        return self

    def headline(self) -> str:
        where = self.filename
        if self.line:
            where += f":{self.line}"
            if self.col:
                where += f":{self.col}"
        message = self.message.split("\n", 1)[0]
        if self.suggestion is not None:
            message += f". Did you mean: '{self.suggestion}'?"
        message = _shown(message, escape=True)
        return f"{where}: {self.kind}: {message}" if message else f"{where}: {self.kind}"

    def render(self, paint=None) -> str:
        """The message's first line after the place, its other lines as they are (PyTorch's "expected
        one of:" lists, a script's own multi-line message, as Python's traceback shows them), then the
        source line and a caret under the column (when known). `paint(text)` colours that report
        (gradcli.display.terminal.paint_error)."""
        out = [self.headline()]
        out.extend(_shown(line, escape=True) for line in self.message.split("\n")[1:])
        if self.source_line is not None and self.source_line.strip():
            text = _shown(self.source_line.expandtabs(8).rstrip("\n"), escape=False)
            if len(text) > 200:                 # keep the report readable for absurd lines
                start = max(0, min(self.col - 1, len(text)) - 100)
                text = text[start:start + 200]
                col = self.col - start
            else:
                col = self.col
            out.append("    " + text)
            if col > 0:
                out.append("    " + " " * (col - 1) + "^")
        text = "\n".join(out)
        return paint(text) if paint is not None else text

    def __str__(self) -> str:
        return self.headline()


def _shown(text: str, escape: bool) -> str:
    """Text from a script made safe to write to a terminal: control characters (an escape sequence in
    a comment or an assert message, a form feed) are written as \\x1b in a message, and as one
    replacement character in a source line, so the caret below it keeps its column."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif escape:
            out.append(repr(ch)[1:-1])
        else:
            out.append("\ufffd")
    return "".join(out)


class ScriptExit(ScriptError):
    """The script ended itself: sys.exit(code) or `raise SystemExit(code)`. The exit status is CPython's: 0 for
    None, an int's low byte (255 past a C long), else 1, with the code's text written to stderr (`text`)."""

    def __init__(self, code, text: str, filename: str = "<script>"):
        super().__init__("SystemExit", text if text or code is None else str(code), filename)     # (str(SystemExit))
        if code is None:
            self.exit_status = EXIT_OK
        elif isinstance(code, int):
            self.exit_status = (code if -(1 << 63) <= code < (1 << 63) else -1) & 0xFF
        else:
            self.exit_status = EXIT_SCRIPT_ERROR
        self.text = text        # what CPython writes to stderr: the code's str() when it is no int nor None


class ScriptSyntaxError(ScriptError):
    """The script does not parse, or uses a construct outside gradcli's language.

    One error stands for all the problems one run found (gradcli.language.syntaxerrors.Problems):
    it is the first of them by position, `others` the next ones in order, `omitted` how many more
    were found than are listed."""

    exit_status = EXIT_USAGE
    others: list = []
    omitted = 0

    def __init__(self, message: str, filename: str = "<script>", line: int = 0, col: int = 0,
                 source_line: str | None = None):
        super().__init__("SyntaxError", message, filename, line, col, source_line)

    def all(self) -> list:
        """This error and its others, in source order."""
        return [self, *self.others]

    def located(self, filename: str, source: str) -> "ScriptSyntaxError":
        if not self.others:
            return super().located(filename, source)
        wanted = {e.line for e in self.all() if e.source_line is None and e.line > 0}
        lines = source_lines(source, wanted)
        for e in self.all():
            e.filename = filename
            if e.source_line is None:
                e.source_line = lines.get(e.line)
        return self

    def render(self, paint=None) -> str:
        if not self.others and not self.omitted:
            return super().render(paint)
        out = [ScriptError.render(e, paint) for e in self.all()]
        if self.omitted:
            out.append(f"... and {self.omitted:,} more")
        return "\n".join(out)
