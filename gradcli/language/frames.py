"""The script's frames, as locals(), globals(), vars() and inspect.currentframe() show them.

Every closure the compiler makes runs with `env`, the dict of the scope it belongs to (gradcli.language.compiler):
the session's globals at top level, a fresh dict for each call of a script's function, a class body's namespace,
a comprehension's own scope. So the script's frames are found by walking gradcli's own Python stack, innermost
first: each run of language frames sharing one `env` is one frame of the script, and the frame of
ScriptFunction.__call__ names the function an `env` belongs to. Nothing is recorded while a script runs: a call
pays nothing for this, and only the functions below walk the stack.

A function's variables in its `env` are plain values, or Cells (gradcli.language.scopes) for those its nested
functions share; a frame's locals are a snapshot with the Cells unwrapped and the unbound ones left out, ordered
as CPython 3.11 orders a frame's: the parameters, the other variables, then the shared ones and those read from
enclosing functions (`__class__` among them in a method that calls super()), each group as CPython sorts it.
At top level the locals are the globals themselves, as in CPython.
"""

from __future__ import annotations

import os
import sys

from gradcli.engine.addresses import address
from gradcli.language.scopes import CLASS_CELL, EMPTY, Cell

# The code object of the function that runs a script's function body (ScriptFunction.__call__), and the files of
# the modules whose closures take `env`
CALL_CODES: set = set()
_LANGUAGE_FILES = frozenset()


def _language_files() -> frozenset:
    """(Found through the compiler, which a running script has imported: this module imports none of them.)"""
    global _LANGUAGE_FILES
    if not _LANGUAGE_FILES:
        compiler = sys.modules["gradcli.language.compiler"]
        CALL_CODES.add(compiler.ScriptFunction.__call__.__code__)
        folder = os.path.dirname(compiler.__file__)
        _LANGUAGE_FILES = frozenset(os.path.join(folder, name + ".py")
                                    for name in ("compiler", "flow", "generators", "patterns"))
    return _LANGUAGE_FILES


# The compiler's functions that run a comprehension (their local `inner` is its scope), and the names CPython gives
# each kind's frame
_COMPREHENSION_CODES = frozenset(("Compiler._comprehension.<locals>.make", "Compiler._comprehension.<locals>.genexpr"))
_COMPREHENSION_NAMES = {"list": "<listcomp>", "set": "<setcomp>", "dict": "<dictcomp>"}


def _walk() -> list:
    """[[env, function or None, line or None, name or None]] for the script's frames, innermost first. The line is
    where the frame is: that of the innermost expression of its own that can fail (those closures hold their
    `line`); the name is a comprehension's ('<genexpr>'), found from the function that runs it."""
    files = _language_files()
    found: list = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if found and code.co_qualname in _COMPREHENSION_CODES and code.co_filename in files:
            local = frame.f_locals
            if found[-1][0] is local.get("inner") and found[-1][3] is None:
                found[-1][3] = _COMPREHENSION_NAMES.get(local.get("kind"), "<genexpr>")
        if code in CALL_CODES:
            env = frame.f_locals.get("env")
            if found and found[-1][0] is env:
                found[-1][1] = frame.f_locals.get("self")
            elif env is not None:
                found.append([env, frame.f_locals.get("self"), None, None])
        elif code.co_filename in files and "env" in code.co_varnames:
            local = frame.f_locals
            env = local.get("env")
            if isinstance(env, dict):
                if not found or found[-1][0] is not env:
                    found.append([env, None, None, None])
                if found[-1][2] is None and "line" in code.co_freevars and local.get("line").__class__ is int:
                    found[-1][2] = local["line"]
        frame = frame.f_back
    return found


def _filename() -> str:
    from gradcli.engine.state import STATE
    streams = STATE.streams
    return streams[2] if streams else "<script>"


def _globals_of(frames: list):
    return frames[-1][0] if frames else {}


_LOCALS = CLASS_CELL + "locals"      # the key of a frame's dict of locals in its env (no Python name has the prefix)


def locals_of(env: dict, function, globals_: dict) -> dict:
    """A frame's locals as CPython 3.11 shows them: at top level the globals themselves; elsewhere one dict per
    frame, brought up to date at each call (locals() and f_locals give the same dict, as in CPython 3.11)."""
    if env is globals_:
        return env
    if function is None:            # a class body or a comprehension: its variables, without gradcli's keys
        order = [k for k in env if k.__class__ is not str or k[:1] != CLASS_CELL]
    else:
        shown = [p for p in function.parameters() if p not in ("/", "*")]      # (CPython's order: the named
        params = [p for p in shown if p[0] != "*"] + [p.lstrip("*") for p in shown if p[0] == "*"]   # ones first)
        shared = set(function.cells or ()) | set(function.frees or ())
        order = [p for p in params if p in env]
        order += [k for k in env if k not in shared and k not in params and k[:1] != CLASS_CELL]
        order += sorted(k for k in function.cells or () if k not in params)
        order += sorted(function.frees or ())
    out = env.get(_LOCALS)
    if out is None:
        out = env[_LOCALS] = {}
    bound = set()
    for k in order:
        v = env.get(k, EMPTY)
        if v.__class__ is Cell:
            v = v.value
        if v is not EMPTY:
            out[k] = v
            bound.add(k)
    for k in [k for k in out if k not in bound]:
        del out[k]
    return out


def script_locals() -> dict:
    """locals(), for the script's frame that called it."""
    frames = _walk()
    if not frames:
        return {}
    env, function = frames[0][:2]
    return locals_of(env, function, _globals_of(frames))


def script_globals() -> dict:
    """globals(): the session's globals, which every frame of a script shares."""
    return _globals_of(_walk())


class Frame:
    """A frame of the script as inspect.currentframe() gives it: its caller (f_back), its variables (f_locals, read
    when asked, as CPython's are), the globals, and its code's name and file (f_code)."""

    __slots__ = ("_frames", "_index")
    # what CPython's frames have besides: there, so that scripts are told they are outside the language
    f_builtins = f_lasti = f_trace = f_trace_lines = f_trace_opcodes = clear = None

    def __init__(self, frames: list, index: int):
        self._frames = frames
        self._index = index

    @property
    def f_back(self):
        return Frame(self._frames, self._index + 1) if self._index + 1 < len(self._frames) else None

    @property
    def f_locals(self) -> dict:
        env, function = self._frames[self._index][:2]
        return locals_of(env, function, _globals_of(self._frames))

    @property
    def f_globals(self) -> dict:
        return _globals_of(self._frames)

    @property
    def f_code(self):
        return Code(self)

    def function(self):
        return self._frames[self._index][1]

    @property
    def f_lineno(self):
        """The line the frame is at: found again on the stack while it runs, else the last one seen."""
        entry = self._frames[self._index]
        for env, _, line, _ in _walk():
            if env is entry[0] and line is not None:
                entry[2] = line
                break
        return entry[2]

    def name(self) -> str:
        env, function, _, comprehension = self._frames[self._index]
        if function is not None:
            return function.name
        if self._index == len(self._frames) - 1:
            return "<module>"
        qualname = env.get("__qualname__")
        if qualname.__class__ is str and env.get("__module__") == "__main__":
            return qualname.rpartition(".")[2]          # a class body
        return comprehension or "<listcomp>"       # (a comprehension: CPython names it after its kind)

    def __eq__(self, other):
        return other.__class__ is Frame and self._frames[self._index][0] is other._frames[other._index][0]

    def __hash__(self):
        return id(self._frames[self._index][0])

    def __repr__(self) -> str:
        line = self.f_lineno
        where = f", line {line}" if line is not None else ""
        return f"<frame at {address(self._frames[self._index][0])}, file {_filename()!r}{where}, code {self.name()}>"


class Code:
    """A frame's f_code: its name (co_name), file (co_filename) and argument names (co_varnames' first ones)."""

    __slots__ = ("_frame",)
    co_code = co_consts = co_names = co_varnames = co_freevars = co_cellvars = co_flags = co_firstlineno = None
    co_lnotab = co_linetable = co_exceptiontable = co_stacksize = co_nlocals = co_posonlyargcount = None
    co_kwonlyargcount = co_qualname = co_positions = co_lines = replace = None

    def __init__(self, frame: Frame):
        self._frame = frame

    @property
    def co_name(self) -> str:
        return self._frame.name()

    @property
    def co_filename(self) -> str:
        return _filename()

    @property
    def co_argcount(self) -> int:
        function = self._frame.function()
        if function is None:
            return 0
        sig = function.signature
        return len(function.params) if sig is None else len(sig.positional)

    def __repr__(self) -> str:
        return f'<code object {self.co_name} at {address(self)}, file "{self.co_filename}">'


def current_frame() -> Frame | None:
    """inspect.currentframe(): the script's frame that called it."""
    frames = _walk()
    return Frame(frames, 0) if frames else None


Frame.__name__ = Frame.__qualname__ = "frame"      # (CPython's names for them, in messages and type())
Code.__name__ = Code.__qualname__ = "code"
