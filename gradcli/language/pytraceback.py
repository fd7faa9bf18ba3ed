"""Python's `traceback` module for scripts: print_exc, format_exc, print_exception, format_exception,
format_exception_only, print_stack and format_stack, printing what CPython 3.11's traceback.py prints for the same
script. Made on the first `import traceback`.

No traceback or frame object reaches the script: the functions take the exception itself (or sys.exc_info()'s)
and read the script's frames from gradcli's own record of its passage, the Python traceback of the exception
through the compiler's closures (found as gradcli.language.frames finds a running script's frames: each run of
closures sharing one `env` is one frame of the script, and the innermost closure of a frame that holds a `line`
is where that frame was). The source lines are the session's (never a file), and the position markers follow
CPython 3.11's rules (StackSummary.format_frame_summary): the span of the failing expression, found in the
session's source with Python's own parser, underlined with `^`, or `~~^~~` with the operator of a binary
operation or the brackets of a subscript marked; nothing when the span is the whole line.

Frames inside PyTorch (CPython shows torch's own files) are not shown: a traceback ends at the script's frame
that called into torch."""

from __future__ import annotations

import ast
import os
import sys

from gradcli.engine.state import STATE
from gradcli.language.generators import GENERATOR_NAME

_RECURSIVE_CUTOFF = 3       # CPython's: more repeats of one line than this are counted, not shown
_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"
_MODULE = "traceback"

# The closure that located an error (its code's name) -> the kind of node CPython's instruction is positioned at
_NODES = {"binop": ast.BinOp, "unary": ast.UnaryOp, "compare": ast.Compare, "chain": ast.Compare,
          "subscript": ast.Subscript, "load_attr": ast.Attribute, "load_grad": ast.Attribute,
          "store_attr": ast.Attribute, "store_item": ast.Subscript, "del_item": ast.Subscript,
          "del_attr": ast.Attribute, "run_raise": ast.Raise, "run_assert": ast.Assert, "aug_name": ast.AugAssign,
          "aug_attr": ast.AugAssign, "aug_item": ast.AugAssign, "store_unpack": (ast.Tuple, ast.List),
          "make": (ast.ListComp, ast.SetComp, ast.DictComp), "make_dict": ast.Dict, "make_set": ast.Set,
          "items": (ast.List, ast.Tuple, ast.Set), "fstring": ast.JoinedStr, "del_name": ast.Name}


def _node_kind(name: str):
    kind = _NODES.get(name)
    if kind is None:
        if name.startswith("call"):
            return ast.Call
        if name.startswith("load_"):
            return ast.Name
    return kind


# ---- the script's frames an exception passed through

class _Entry:
    """One frame of the script in a traceback: its env, function, comprehension name, and where it was (the
    innermost located closure: line, col, the closure's name, and how many closures of that kind at that place
    it is nested in)."""
    __slots__ = ("env", "function", "name", "spot", "seen", "closed")

    def __init__(self, env):
        self.env = env
        self.closed = False     # a `raise e` of an exception with frames already: CPython's new entry ends here
        self.function = None
        self.name = None
        self.spot = None
        self.seen = {}      # (line, col, kind) -> how many closures located there the exception passed

    @property
    def depth(self) -> int:
        return self.seen.get(self.spot, 0)


def _entries(tb) -> list:
    """The script's frames a Python traceback passed through, outermost first."""
    from gradcli.language import frames
    files = frames._language_files()
    calls = frames.CALL_CODES
    comprehensions = frames._COMPREHENSION_CODES
    out: list = []
    named: dict = {}           # id(a comprehension's scope) -> its frame's name
    last = None
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        if code.co_qualname in comprehensions and code.co_filename in files:
            inner = frame.f_locals.get("inner")
            if isinstance(inner, dict):
                named[id(inner)] = frames._COMPREHENSION_NAMES.get(frame.f_locals.get("kind"), "<genexpr>")
        if frame is last:           # (one closure re-raising an error it made of the one it caught)
            pass
        elif code in calls:
            local = frame.f_locals
            env = local.get("env")
            if env is not None:
                if not out or out[-1].env is not env or out[-1].closed:
                    out.append(_Entry(env))
                out[-1].function = local.get("self")
        elif code.co_filename in files and "env" in code.co_varnames:
            local = frame.f_locals
            env = local.get("env")
            if isinstance(env, dict):
                if not out or out[-1].env is not env or out[-1].closed:
                    out.append(_Entry(env))
                    out[-1].name = named.get(id(env))
                line, col = local.get("line"), local.get("col")
                if "line" in code.co_freevars and line.__class__ is int:
                    spot = (line, col if col.__class__ is int else 0, _node_kind(code.co_name))
                    entry = out[-1]
                    entry.seen[spot] = entry.seen.get(spot, 0) + 1
                    entry.spot = spot
                    if code.co_name == "run_raise" and tb.tb_next is not None and local.get("exc") is not None:
                        entry.closed = True
        last = frame
        tb = tb.tb_next
    return [e for e in out if e.spot is not None]


def _find_functions(lists: list) -> None:
    """The function of each frame whose call the exception did not leave (the frame that caught it): known from
    another exception of the chain that left it, or from the stack while it still runs."""
    if all(e.function is not None for entries in lists for e in entries):
        return
    from gradcli.language import frames
    functions = {id(env): function for env, function, _, _ in frames._walk() if function is not None}
    functions.update((id(e.env), e.function) for entries in lists for e in entries if e.function is not None)
    for entries in lists:
        for e in entries:
            if e.function is None:
                e.function = functions.get(id(e.env))


def _name(entry: _Entry, globals_) -> str:
    """The frame's name as CPython's code object has it: that of the function, lambda, comprehension or class
    whose code holds its place in the source (a function functools.wraps renamed keeps its own), else what the
    run knows of the frame."""
    if entry.env is globals_:
        return "<module>"
    line, col, _ = entry.spot
    if col > 0 and _starts():
        return _scope_name(line, col - 1)
    if entry.function is not None:
        return entry.function.name
    generator = entry.env.get(GENERATOR_NAME)
    if generator is not None:
        return generator
    if entry.name is not None:
        return entry.name
    qualname = entry.env.get("__qualname__")
    if qualname.__class__ is str and entry.env.get("__module__") == "__main__":
        return qualname.rpartition(".")[2]          # a class body
    return "<listcomp>"


_SCOPE_NAMES = {ast.Lambda: "<lambda>", ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>",
                ast.DictComp: "<dictcomp>", ast.GeneratorExp: "<genexpr>"}


def _scope_name(line: int, col: int) -> str:
    """The name of the code the source's place (line, character offset) belongs to, as CPython names its code
    objects: the innermost function, lambda, comprehension or class whose own code holds it (a frame whose call
    the exception did not leave, once it has ended)."""
    known = _parsed()[3]
    name = known.get((line, col))
    if name is None:
        best, name = None, "<module>"
        for first, last, own in _parsed()[2]:
            if first <= (line, col) < last and (best is None or first > best):
                best, name = first, own
        known[line, col] = name
    return name


def _scopes(starts: dict, lines: list) -> list:
    """[(start, end, name)] of the source's code regions that are not the module's: the bodies of functions,
    lambdas and classes, and the parts of comprehensions their own code runs (all but the first iterable)."""
    def place(node, end: bool) -> tuple:
        line = node.end_lineno if end else node.lineno
        text = lines[line - 1] if line <= len(lines) else ""
        return line, _chars(text, node.end_col_offset if end else node.col_offset)
    out = []
    for nodes in starts.values():
        for node in nodes:
            kind = node.__class__
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                regions, own = node.body, node.name
            elif kind is ast.Lambda:
                regions, own = [node.body], "<lambda>"
            elif kind in _SCOPE_NAMES:
                regions = [node.key, node.value] if kind is ast.DictComp else [node.elt]
                for i, clause in enumerate(node.generators):
                    regions += [clause.target, *clause.ifs] + ([clause.iter] if i else [])
                own = _SCOPE_NAMES[kind]
            else:
                continue
            out += [(place(region, False), place(region, True), own) for region in regions]
    return out


def _globals():
    from gradcli.language import frames
    found = frames._walk()
    return found[-1][0] if found else None


def filename() -> str:
    """The script's file as CPython's code objects name it: its absolute path ('<string>' for -c, '<stdin>')."""
    streams = STATE.streams
    name = streams[2] if streams else "<string>"
    return name if name.startswith("<") else os.path.abspath(name)


def _source_line(line: int) -> str | None:
    """The script's line (None where CPython has no file to read: -c, stdin, the REPL)."""
    streams = STATE.streams
    if not streams or streams[2].startswith("<") or len(streams) <= 4:
        return None
    return streams[4](line)


# ---- the position markers

# the source -> ({(line, character offset): [nodes starting there, outermost first]}, its lines, _scopes(), and the
# names and spans found so far)
_TREES: dict = {}


def _parsed() -> tuple:
    """The session's source parsed by Python's own parser (for the positions CPython's code objects hold)."""
    streams = STATE.streams
    source = streams[5]() if streams and len(streams) > 5 else None
    if source is None:
        return {}, [], [], {}, {}
    found = _TREES.get(source)
    if found is None:
        starts = {}
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")       # (the parser's lines)
        if tree is not None:
            for node in ast.walk(tree):     # (breadth first: an outer node before the inner ones at its place)
                if hasattr(node, "end_col_offset") and node.end_col_offset is not None:
                    text = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
                    starts.setdefault((node.lineno, _chars(text, node.col_offset)), []).append(node)
        _TREES.clear()
        found = _TREES[source] = (starts, lines, _scopes(starts, lines), {}, {})
    return found


def _starts() -> dict:
    return _parsed()[0]


def _chars(text: str, offset: int) -> int:
    return len(text.encode("utf-8")[:offset].decode("utf-8", errors="replace"))


def _span(line: int, col: int, kind, depth: int):
    """_find_span, once for each place of a source (a deep recursion's frames share theirs)."""
    known = _parsed()[4]
    key = (line, col, kind, depth)
    if key not in known:
        known[key] = _find_span(line, col, kind, depth)
    return known[key]


def _find_span(line: int, col: int, kind, depth: int):
    """The node CPython's failing instruction is positioned at, for a frame located at (line, col) by a closure
    of `kind`, `depth` closures of that kind deep at that place: (line, col, end line, end col), byte offsets."""
    if kind is None:
        return None
    starts = _starts()
    text = _source_line(line) or ""
    fitting = [n for n in starts.get((line, col - 1), ()) if isinstance(n, kind)]
    while not fitting and text[col - 1:col] in ("(", " ", "\t"):    # (gradcli's place of `(a + b)` is its bracket)
        col += 1
        fitting = [n for n in starts.get((line, col - 1), ()) if isinstance(n, kind)]
    if not fitting:
        return None
    node = fitting[min(depth, len(fitting)) - 1]
    if node.__class__ is ast.Assert:
        node = _assert_place(node)
        if node is None:
            return None
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def _assert_place(node: ast.Assert):
    """Where CPython 3.11 places a failing assert: at the last comparison its test makes (in the order of the
    code), else at the whole statement."""
    found = node
    todo = [node.test]
    while todo:
        item = todo.pop()
        if item.__class__ in (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp):
            continue
        if item.__class__ is ast.Compare:
            found = item
            continue
        todo += reversed(list(ast.iter_child_nodes(item)))
    return found


def _anchors(segment: str):
    """CPython 3.11's _extract_caret_anchors_from_line_segment: (left end, right start) of the operator of a
    binary operation or the brackets of a subscript, else None."""
    try:
        tree = ast.parse(segment)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1 or tree.body[0].__class__ is not ast.Expr:
        return None
    expr = tree.body[0].value

    def normalize(offset):
        return _chars(segment, offset)
    if expr.__class__ is ast.BinOp:
        operator_start = normalize(expr.left.end_col_offset)
        operator_end = normalize(expr.right.col_offset)
        operator_str = segment[operator_start:operator_end]
        operator_offset = len(operator_str) - len(operator_str.lstrip())
        left = expr.left.end_col_offset + operator_offset
        right = left + 1
        if operator_offset + 1 < len(operator_str) and not operator_str[operator_offset + 1].isspace():
            right += 1
        while left < len(segment) and (segment[left].isspace() or segment[left] in ")#"):
            left += 1
            right += 1
        return normalize(left), normalize(right)
    if expr.__class__ is ast.Subscript:
        left = normalize(expr.value.end_col_offset)
        right = normalize(expr.slice.end_col_offset + 1)
        while left < len(segment) and (segment[left].isspace() or segment[left] != "["):
            left += 1
        while right < len(segment) and (segment[right].isspace() or segment[right] != "]"):
            right += 1
        if right < len(segment):
            right += 1
        return left, right
    return None


def _width(text: str, offset: int) -> int:
    if text.isascii():
        return offset
    import unicodedata
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text[:offset])


def _frame_text(filename: str, line: int, name: str, span) -> str:
    """CPython 3.11's StackSummary.format_frame_summary for a frame without locals."""
    row = [f'  File "{filename}", line {line}, in {name}\n']
    original = _source_line(line) if line else None
    if not original or not original.strip():
        return row[0]
    stripped = original.strip()
    row.append(f"    {stripped}\n")
    if span is None:
        return "".join(row)
    _, col, end_line, end_col = span
    stripped_characters = len(original) + 1 - len(stripped)       # (CPython's line ends in its newline)
    start = _chars(original, col)
    end = _chars(original, end_col)
    segment = original[start:end]
    anchors = None
    if end_line == line:
        anchors = _anchors(segment)
    else:
        end = len(original.rstrip())
    if end - start < len(stripped) or (anchors and anchors[1] - anchors[0] > 0):
        dp_start, dp_end = _width(original, start) + 1, _width(original, end) + 1
        row.append("    " + " " * (dp_start - stripped_characters))
        if anchors:
            left, right = _width(segment, anchors[0]), _width(segment, anchors[1])
            row.append("~" * left + "^" * (right - left) + "~" * (dp_end - dp_start - right))
        else:
            row.append("^" * (dp_end - dp_start))
        row.append("\n")
    return "".join(row)


def _summary(entries: list, names: list, filename: str) -> list:
    """StackSummary.format: each frame's text, a run of more than three of one line counted, not shown."""
    out = []
    last = None
    count = 0
    for entry, name in zip(entries, names):
        line, col, kind = entry.spot
        span = _span(line, col, kind, entry.depth)
        if span is not None:
            line = span[0]          # (an assert's place may be a later line of its test)
        key = (line, name)
        if key != last:
            if count > _RECURSIVE_CUTOFF:
                n = count - _RECURSIVE_CUTOFF
                out.append(f'  [Previous line repeated {n} more time{"s" if n > 1 else ""}]\n')
            last = key
            count = 0
        count += 1
        if count > _RECURSIVE_CUTOFF:
            continue
        out.append(_frame_text(filename, line, name, span))
    if count > _RECURSIVE_CUTOFF:
        n = count - _RECURSIVE_CUTOFF
        out.append(f'  [Previous line repeated {n} more time{"s" if n > 1 else ""}]\n')
    return out


def _limited(items: list, limit, from_top: bool) -> list:
    """The frames `limit` keeps: for a traceback, the outermost `limit` (a negative one: the innermost); for a
    stack, the innermost."""
    if limit is None:
        return items
    if limit.__class__ is not int:
        raise TypeError(f"'<' not supported between instances of '{type(limit).__name__}' and 'int'")
    if from_top:
        return items[:limit] if limit >= 0 else items[limit:]
    return items[-limit:] if limit > 0 else (items[:-limit] if limit < 0 else [])


def _traceback_lines(entries: list, limit) -> list:
    entries = _limited(entries, limit, True)
    if not entries:
        return []
    globals_ = _globals()
    names = [_name(entry, globals_) for entry in entries]
    return ["Traceback (most recent call last):\n"] + _summary(entries, names, filename())


# ---- the exception's own line

def _type_name(kind) -> str:
    name = kind.__qualname__
    module = kind.__module__
    if module in ("__main__", "builtins") or module.__class__ is not str or module.startswith("gradcli"):
        return name if module.__class__ is str else "<unknown>." + name
    return f"{module}.{name}"


def _message(e: BaseException) -> str:
    """str(e) (CPython 3.11's traceback module adds no "Did you mean": its uncaught-error printer does)."""
    try:
        return str(e)
    except Exception:
        return "<exception str() failed>"


def _only(kind, value: BaseException) -> list:
    """format_exception_only: the exception's line (its type, then its message if it has one), then its notes."""
    name = _type_name(kind)
    text = _message(value)
    out = [f"{name}: {text}\n" if text else f"{name}\n"]
    notes = getattr(value, "__notes__", None)
    if isinstance(notes, (list, tuple)):
        for note in notes:
            out += [line + "\n" for line in _safe(note).split("\n")]
    elif notes is not None:
        out.append(_safe(notes, repr))
    return out


def _safe(value, convert=str) -> str:
    """A note as text (CPython's _safe_string for notes)."""
    try:
        return convert(value)
    except Exception:
        return f"<note {convert.__name__}() failed>"


def _handled(e: BaseException) -> bool:
    """Whether the script's `try` was handling `e` (its traceback starts at the statement's closure)."""
    tb = e.__traceback__
    return tb is not None and tb.tb_frame.f_code.co_name == "run_try"


def _script_context(e: BaseException):
    """The exception the script was handling when `e` was raised: `e.__context__`, past those gradcli raised and
    handled inside itself (which never passed through the script's frames)."""
    seen = set()
    context = e.__context__
    while context is not None and id(context) not in seen and not _handled(context):
        seen.add(id(context))
        context = context.__context__
    return context


def _exception_lines(e: BaseException, limit, chain: bool, own_traceback: bool = True) -> list:
    """TracebackException(...).format(chain=chain): the chained exceptions first, each traceback and line."""
    from gradcli.language import classes
    chained = []
    seen = set()
    current, message = e, None
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chained.append((message, current))
        cause = classes.exception_cause(current)
        if cause is not None:
            current, message = cause, _CAUSE
        elif not getattr(current, "__gradcli_from__", False):     # (the script's `raise ... from` suppresses it)
            current, message = _script_context(current), _CONTEXT
        else:
            current = None
    lists = [_entries(exc.__traceback__) for _, exc in chained]
    _find_functions(lists)
    if not chain:
        chained = chained[:1]
    out = []
    for index in range(len(chained) - 1, -1, -1):
        exc = chained[index][1]
        if index or own_traceback:
            out += _traceback_lines(lists[index], limit)
        out += _only(type(exc), exc)
        if index > 0:
            out.append(chained[index][0])
    return out


# ---- the module's functions

_SENTINEL = object()


def _value_and_traceback(exc, value, tb) -> tuple:
    """CPython's _parse_value_tb: (the exception, whether its own traceback is shown) for the 3.10+ one-argument
    form or the older (type, value, traceback) one. A script holds no traceback: its third argument is None (the
    exception shown without its own), or an object CPython's walk would fail on."""
    if (value is _SENTINEL) != (tb is _SENTINEL):
        raise ValueError("Both or neither of value and tb must be given")
    if value is _SENTINEL:
        if exc is None:
            return None, False
        if not isinstance(exc, BaseException):
            raise TypeError(f"Exception expected for value, {type(exc).__name__} found")
        return exc, True
    if tb is not None:
        raise AttributeError(f"'{type(tb).__name__}' object has no attribute 'tb_frame'")
    return _exception_value(value), False


def _exception_value(value):
    if value is not None and not isinstance(value, BaseException):
        raise AttributeError(f"'{type(value).__name__}' object has no attribute '__suppress_context__'")
    return value


def format_exception(exc, /, value=_SENTINEL, tb=_SENTINEL, limit=None, chain=True):
    e, own = _value_and_traceback(exc, value, tb)
    if e is None:
        return ["NoneType: None\n"]
    return _exception_lines(e, limit, chain, own)


def print_exception(exc, /, value=_SENTINEL, tb=_SENTINEL, limit=None, file=None, chain=True):
    _print(format_exception(exc, value, tb, limit, chain), file)


def format_exception_only(exc, /, value=_SENTINEL):
    """The exception's line (CPython 3.11 takes the type from the value: `exc` is read only when alone)."""
    value = _exception_value(exc if value is _SENTINEL else value)
    return _only(type(value), value) if value is not None else ["NoneType: None\n"]


def format_exc(limit=None, chain=True):
    return "".join(format_exception(sys.exc_info()[1], limit=limit, chain=chain))


def print_exc(limit=None, file=None, chain=True):
    print_exception(sys.exc_info()[1], limit=limit, file=file, chain=chain)


def format_stack(f=None, limit=None):
    """The script's frames that called it, outermost first (`f`: only None, as scripts hold no frames)."""
    if f is not None:
        raise TypeError("traceback.format_stack() of a frame is outside gradcli's language: "
                        "scripts hold no frame objects")
    from gradcli.language import frames
    found = frames._walk()
    globals_ = found[-1][0] if found else None
    entries = []
    for env, function, line, name in reversed(found):
        entry = _Entry(env)
        entry.function, entry.name = function, name
        entry.spot = (line or 0, 0, None)
        entries.append(entry)
    entries = _limited(entries, limit, False)
    names = [_name(entry, globals_) for entry in entries]
    return _summary(entries, names, filename())


def print_stack(f=None, limit=None, file=None):
    _print(format_stack(f, limit), file)


def _print(lines: list, file) -> None:
    """Each line to `file` (the script's sys.stderr by default), as CPython prints them: one write a line."""
    from gradcli.language import pysys
    stream = pysys.script_stream("stderr") if file is None else pysys.held_stream(file)
    for line in lines:
        pysys.write_to(stream, line)


def exception_text(e: BaseException, own_traceback: bool = True) -> str:
    """logging's text of an exception (Formatter.formatException): what CPython's print_exception writes, with
    the exception's own traceback or (an exc_info tuple the script made, whose traceback is None) without."""
    return "".join(_exception_lines(e, None, True, own_traceback))


def members() -> dict:
    import traceback as _python_traceback      # (only for the module's repr, which names CPython's file: untouched)
    from gradcli.language import stdlib
    del _python_traceback
    return {name: stdlib.Builtin(_MODULE, name, globals()[name]) for name in (
        "print_exc", "format_exc", "print_exception", "format_exception", "format_exception_only", "print_stack",
        "format_stack")}
