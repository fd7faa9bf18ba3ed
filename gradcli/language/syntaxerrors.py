"""The syntax errors the front-end passes raise, placed in "<script>" until parse() names the file, and the
list of problems one parse and compile pass over, so that one run reports every one of them."""

from __future__ import annotations

from gradcli.errors import ScriptSyntaxError

# A report lists this many problems, then says how many more there are: a script of a million refused
# lines must not flood the terminal, nor keep a million errors in memory.
SHOWN = 50


# the indentation errors, under the subclasses of SyntaxError CPython raises them as
_KINDS = {"unexpected indent": "IndentationError", "unindent does not match any outer indentation level":
          "IndentationError", "too many levels of indentation": "IndentationError",
          "inconsistent use of tabs and spaces in indentation": "TabError"}


def error(message: str, line: int, col: int) -> ScriptSyntaxError:
    return _typed(ScriptSyntaxError(message, "<script>", line, col))


def error_at(message: str, where) -> ScriptSyntaxError:
    """An error at a token or node: both carry `line` and `col`."""
    return _typed(ScriptSyntaxError(message, "<script>", where.line, where.col))


def _typed(err: ScriptSyntaxError) -> ScriptSyntaxError:
    kind = _KINDS.get(err.message)
    if kind is not None or err.message.startswith("expected an indented block"):
        err.kind = kind or "IndentationError"
    return err


def header_words(keyword: str) -> str:
    """How CPython names the compound statement whose block is missing: "'for' statement", "function
    definition", ..."""
    if keyword == "def":
        return "function definition"
    if keyword == "class":
        return "class definition"
    return f"'{keyword}' statement"


def refusal(what: str) -> str:
    """The message for a construct outside the language: `what` is its name with its verb ("... are")."""
    return f"{what} not part of gradcli's language"


class Problems:
    """What is wrong with a script that the front end can pass over and go on checking after: constructs
    outside the language (the layout pass puts a stand-in for the refused token, so the parse goes on), and
    checks of a complete tree (targets, 'return' outside a function, global/nonlocal, future imports).
    Text that does not parse still stops everything at its first error, as in CPython; the problems met
    before it are reported with it (`error`).

    `dirty` is set while the logical line being parsed holds a stand-in that changed its tokens: a parse
    error or a tree check there may be the stand-in's doing rather than the script's, so it is not
    reported (the refusal is; once the script is fixed, the next run shows the rest)."""

    __slots__ = ("found", "count", "dirty")

    def __init__(self):
        self.found = []         # (line, col, message, kind): the first SHOWN by position, once trimmed
        self.count = 0          # how many were found in all
        self.dirty = False

    def __bool__(self) -> bool:
        return self.count > 0

    def add(self, message: str, line: int, col: int, kind: str = "SyntaxError") -> None:
        """`kind` is the type a Python user would see: SyntaxError, or for an import of a module outside
        the language in a script that will not run anyway, the ImportError it would raise."""
        found = self.found
        found.append((line, col, message, kind))
        self.count += 1
        if len(found) > 8 * SHOWN:      # keep memory bounded: only the first SHOWN by position are shown
            found.sort(key=_position)
            del found[SHOWN:]

    def refuse(self, what: str, where) -> None:
        """A construct outside the language, at a token or node: always reported."""
        self.add(refusal(what), where.line, where.col)

    def invalid(self, err: ScriptSyntaxError) -> None:
        """A check of the tree failed (a SyntaxError in Python too): reported unless a stand-in on this
        logical line may have caused it."""
        if not self.dirty:
            self.add(err.message, err.line, err.col)

    def error(self, stop: ScriptSyntaxError | None = None) -> ScriptSyntaxError | None:
        """The error to raise: the first problem by position, carrying the next ones (up to SHOWN in
        all) as `others` and how many more there are as `omitted`. `stop` is the error that ended the
        parse or compile, if one did; None when there is nothing to report."""
        if stop is not None and not (self.dirty and self.count):
            if not self.count:
                return stop
            self.add(stop.message, stop.line, stop.col, stop.kind)
        if not self.count:
            return None
        self.found.sort(key=_position)
        shown = [_error(*problem) for problem in self.found[:SHOWN]]
        first = shown[0]
        if stop is not None and (first.line, first.col, first.message) == (stop.line, stop.col, stop.message):
            first = stop            # keeps what the stop knew (its source line, for a null byte)
        first.others = shown[1:]
        first.omitted = self.count - len(shown)
        return first


def _error(line: int, col: int, message: str, kind: str) -> ScriptSyntaxError:
    err = ScriptSyntaxError(message, "<script>", line, col)
    err.kind = kind
    return err


def _position(problem: tuple) -> tuple:
    return problem[0], problem[1]
