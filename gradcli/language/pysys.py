"""Python's `sys` module for scripts, a safe part of it: exit, argv, the interpreter's version and number
facts, stdout and stderr as objects that only write where the script's print writes, and the recursion limit
(the language's, which a script may lower, never raise). Nothing that reaches modules, paths, frames or the
interpreter's hooks. Made on the first `import sys`."""

from __future__ import annotations

import io as _io
import sys as _sys

from gradcli.engine.state import STATE


class TextIOWrapper:
    """sys.stdout or sys.stderr as a script holds it: write(text) and flush(), to where print writes (the
    session's stdout or stderr, or its event sink). It holds no stream: the running session's is looked up
    at each write."""

    __slots__ = ("stream",)
    # what CPython's has (its encoding, buffer, fileno, ...): outside the language, not missing
    PYTHON_NAMES = frozenset(n for n in dir(_io.TextIOWrapper) if not n.startswith("_"))

    def __init__(self, stream: str):
        self.stream = stream        # "stdout" or "stderr"

    def write(self, s):
        redirects = STATE.redirects
        if redirects is not None and self.stream in redirects:     # contextlib.redirect_stdout(target): its write
            from gradcli.language import access
            return access.get_method(redirects[self.stream], "write")(s)
        if s.__class__ is not str and not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {_type_name(s)}")
        STATE.streams[0](self.stream, str(s), (s,))
        return len(s)

    def flush(self):
        redirects = STATE.redirects
        if redirects is not None and self.stream in redirects:
            from gradcli.language import access
            access.get_method(redirects[self.stream], "flush")()
        else:
            STATE.streams[1](self.stream)

    def __repr__(self) -> str:
        return f"<_io.TextIOWrapper name='<{self.stream}>' mode='w' encoding='utf-8'>"


TextIOWrapper.__module__ = "_io"           # type(sys.stdout), as CPython names it
STDOUT, STDERR = TextIOWrapper("stdout"), TextIOWrapper("stderr")
STREAM_METHODS = frozenset(("write", "flush"))
# the facts sys.version_info, float_info and int_info hold (CPython's named tuples): readable by name
INFO_FIELDS = {type(_sys.version_info): ("major", "minor", "micro", "releaselevel", "serial"),
               type(_sys.float_info): ("max", "max_exp", "max_10_exp", "min", "min_exp", "min_10_exp", "dig",
                                       "mant_dig", "epsilon", "radix", "rounds"),
               type(_sys.int_info): ("bits_per_digit", "sizeof_digit", "default_max_str_digits",
                                     "str_digits_check_threshold")}


def script_stream(name: str):
    """sys.stdout or sys.stderr as the script sees it now: what redirect_stdout/redirect_stderr put there, or
    the session's stream."""
    redirects = STATE.redirects
    if redirects is not None and name in redirects:
        return redirects[name]
    return STDOUT if name == "stdout" else STDERR


def held_stream(stream):
    """The stream a handler or a file= argument is given, as CPython's would hold it: the script's `sys.stdout`
    read while redirect_stdout is in force is the redirect's target (gradcli's sys.stdout follows it at each
    write instead)."""
    if stream.__class__ is TextIOWrapper:
        return script_stream(stream.stream)
    return stream


def write_to(stream, text: str) -> None:
    """Write to a stream held as above: the session's own (as CPython's handler holds the real sys.stderr it was
    given, whatever redirect comes later), or the script's object (its `write` read as the script reads it)."""
    if stream.__class__ is TextIOWrapper:
        STATE.streams[0](stream.stream, text, (text,))
        return
    from gradcli.language import access, classes
    write = getattr(stream, "write") if type(type(stream)) is classes.ScriptType else access.read_attr(stream, "write")
    write(text)


def _type_name(x) -> str:
    from gradcli.language import stdlib
    return stdlib.type_name(x)


def exit(*args):
    """sys.exit([status]): raises SystemExit, which ends the run with CPython's exit status."""
    if len(args) > 1:
        raise TypeError(f"exit expected at most 1 argument, got {len(args)}")
    raise SystemExit(*args)


def _index(n, what: str = "integer") -> int:
    if n.__class__ is int:
        return n
    if isinstance(n, float) or not hasattr(type(n), "__index__"):
        raise TypeError(f"'{_type_name(n)}' object cannot be interpreted as an integer")
    return n.__index__()


def getrecursionlimit():
    """The deepest the script's function calls may nest: the language's limit, or the lower one set."""
    return STATE.call_limit


def setrecursionlimit(limit):
    """Lower the run's recursion limit; a value past the language's own leaves that one in force."""
    from gradcli.language.compiler import MAX_CALL_DEPTH
    limit = _index(limit)
    if limit >= 1 << 31:
        raise OverflowError("Python int too large to convert to C int")
    if limit < 1:
        raise ValueError("recursion limit must be greater or equal than 1")
    if limit <= STATE.call_depth:
        raise RecursionError(f"cannot set the recursion limit to {limit} at the recursion depth "
                             f"{STATE.call_depth + 1}: the limit is too low")
    STATE.call_limit = min(limit, MAX_CALL_DEPTH)


def argv(filename: str, args=()) -> list:
    """sys.argv as CPython has it for a script run as gradcli runs this one: its path as given ('-c' for
    `gradcli -c`, '' for standard input and the REPL), then the arguments given after `--`
    (`gradcli run SCRIPT -- ARG...`, as `python SCRIPT ARG...`)."""
    return ["-c" if filename == "<string>" else "" if filename in ("<stdin>", "<script>") else filename, *args]


def script_argv() -> list:
    """A new sys.argv for the running script (STATE.streams holds its file name and arguments)."""
    streams = STATE.streams
    return argv(streams[2], streams[3]) if streams is not None else argv("<script>")


def members() -> dict:
    from gradcli.language import access
    from gradcli.language.stdlib import Builtin
    for cls, fields in INFO_FIELDS.items():
        access.allow_held(cls, frozenset(fields + ("count", "index")))
    access.ALLOWED[TextIOWrapper] = STREAM_METHODS
    out = {name: Builtin("builtins", name, fn) for name, fn in (
        ("exit", exit), ("getrecursionlimit", getrecursionlimit), ("setrecursionlimit", setrecursionlimit))}
    out.update(argv=script_argv(),
               version=_sys.version, version_info=_sys.version_info, hexversion=_sys.hexversion,
               maxsize=_sys.maxsize, float_info=_sys.float_info, int_info=_sys.int_info, byteorder=_sys.byteorder,
               platform=_sys.platform, stdout=STDOUT, stderr=STDERR)
    return out
