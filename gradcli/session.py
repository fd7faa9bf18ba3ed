"""A session: one namespace, one output sink, one entry point (`run_source`) shared by the CLI, REPL and tests."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import sys
from types import MethodType

import numpy as np

from gradcli.language import access, bounds, classes, compiler, parser, stdlib
from gradcli.engine import budget
from gradcli import deadline
from gradcli.display import DISPLAY_MODES
from gradcli.engine import addresses, dtypes
from gradcli.engine.state import DEFAULT_THREADS, STATE
from gradcli.errors import ScriptError, ScriptExit, ScriptSyntaxError, source_line
from gradcli.language.syntaxerrors import Problems

# Show the Python traceback of a script error (for debugging gradcli itself): GRADCLI_TRACEBACK set
# to anything but 0, false, no, off or nothing.
DEBUG = os.environ.get("GRADCLI_TRACEBACK", "").strip().lower() not in ("", "0", "false", "no", "off")

# User recursion is capped by compiler.MAX_CALL_DEPTH and expression nesting by
# compiler.MAX_EXPRESSION_DEPTH; each of their levels costs a few Python frames.
RECURSION_LIMIT = 20000
# The Python modules whose exception classes scripts meet: CPython's traceback names these with their module
_PYTHON_MODULE_ERRORS = frozenset(("dataclasses", "_pickle", "json.decoder", "io", "re"))


# `typing`, `dataclasses` and `operator` (gradcli.language.pytyping, pydataclasses, pyoperator) import the
# language's lower modules,
# so those reach them only through what is set here, loading them when a script first needs them
def _typing_members() -> dict:
    from gradcli.language import pytyping
    return pytyping.members()


def _dataclasses_members() -> dict:
    import dataclasses      # (CPython's, for its file name and the names gradcli leaves out)
    from gradcli.language import pydataclasses
    del dataclasses
    return pydataclasses.members()


def _allow_dataclasses(module) -> None:
    """dataclasses.Field: what fields() lists, its name, type, default... readable (held values all)."""
    from gradcli.language import pydataclasses
    access.allow_held(pydataclasses.Field, pydataclasses.FIELD_ATTRIBUTES)


def _union_or(left, right):
    from gradcli.language import pytyping
    return pytyping.union_or(left, right)


def _instance_classes(classinfo, fn, real_classes):
    from gradcli.language import pytyping
    return pytyping.instance_classes(classinfo, fn, real_classes)


def _operator_members() -> dict:
    from gradcli.language import pyoperator
    return pyoperator.members()


def _abc_members() -> dict:
    import abc      # (CPython's, for its file name and the names gradcli leaves out)
    from gradcli.language import pyabc
    del abc
    return pyabc.members()


def _contextlib_members() -> dict:
    import contextlib       # (CPython's, for its file name and the names gradcli leaves out)
    from gradcli.language import pycontextlib
    del contextlib
    return pycontextlib.members()


def _functools_members() -> dict:
    from gradcli.language import pyfunctools
    return pyfunctools.members()


def _inspect_members() -> dict:
    from gradcli.language import pyinspect
    return pyinspect.members()


def _enum_members() -> dict:
    from gradcli.language import pyenum
    return pyenum.members()


stdlib.LATER_MAKERS.update(typing=_typing_members, dataclasses=_dataclasses_members, operator=_operator_members,
                           abc=_abc_members, contextlib=_contextlib_members, enum=_enum_members,
                           functools=_functools_members, inspect=_inspect_members)
stdlib.when_made("dataclasses", _allow_dataclasses)
stdlib.TYPING_INSTANCE_CLASSES[0] = _instance_classes
bounds.UNION_OR[0] = _union_or


@contextlib.contextmanager
def _collector_tuned():
    """Run a script with Python's cyclic garbage collector mostly out of the way.

    The engine's graphs have no reference cycles (they are freed by reference counting), yet every
    tensor and node counts towards the collector's allocation threshold, and a collection walks
    every young object: with the default threshold (700) that was half the cost of building a graph
    of small ops (a 400k-node chain: 1.79 s forward, 1.08 s at 10,000, 0.92 s with the collector off;
    a 1M-node chain of sin() through a session: 9.96 s at (10,000, 10, 10), 6.89 s at (100,000, 20,
    1000), 6.69 s with the collector off).
    Freezing what was imported and raising the threshold keeps cycle collection for scripts that do
    make cycles (a list holding itself) at a small fraction of the cost."""
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 20, 1000)
    try:
        yield
    finally:
        # freezing again empties the young generation's count before the old threshold returns: what the
        # script left alive (a whole graph, say) would otherwise be walked by a collection at the next
        # allocation, about 1k instructions per node of a chain, and it joins the oldest generation instead
        gc.freeze()
        gc.set_threshold(*previous)
        gc.unfreeze()


_HEAP_TUNED = [False]

# The script this process replays and its syntax tree: --check-grads and the other diagnostics replay a
# script hundreds of times, and compiling never changes a tree, so it is parsed once (only a parse
# with no problems is kept: the others are reported by parsing again).
_REPLAYED: list = [None]


def _replayed_tree(source: str):
    last = _REPLAYED[0]
    return last[1] if last is not None and last[0] == source else None


def _keep_heap_memory() -> None:
    """Let freed tensor buffers be reused instead of handed back to the OS (glibc only; once).

    glibc maps each buffer of a few MB or more afresh and unmaps it when freed, so every new
    temporary of a large op starts with a page fault per 4 KB. Measured on a 4096x1000 float32
    workload (benchmarks/elementwise.grad): 0.9 s -> 0.7 s for the whole run. Buffers up to 32 MB
    now come from the heap, which is no longer trimmed back to the OS while the process lives."""
    if _HEAP_TUNED[0]:
        return
    _HEAP_TUNED[0] = True
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 32 * 1024 * 1024)     # M_MMAP_THRESHOLD: at most 32 MB is accepted
        libc.mallopt(-1, 1024 * 1024 * 1024)   # M_TRIM_THRESHOLD
    except (OSError, AttributeError, TypeError):
        pass                                   # not glibc: keep the allocator's defaults


def _help_text(builtins: dict, *obj) -> str:
    """What help() and help(obj) print in a script (gradcli.language.helptext, imported when first asked)."""
    from gradcli.language import helptext
    return helptext.text_for(obj[0], builtins) if obj else helptext.USAGE


# what a script that may make complex values has in its text: an imaginary literal, or a name with "complex" in it
# (complex(), complex64, complex128, view_as_complex, to_complex) or cfloat, cdouble, chalf, polar, fft
# (linear in the text: a run of digits is tried from its first character only, and never backtracked into)
_COMPLEX_TEXT = re.compile(r"(?<![A-Za-z0-9_.])[0-9.][0-9_.]*+(?:[eE][+-]?[0-9_]++)?[jJ](?![A-Za-z0-9_])|complex|"
                           r"cfloat|cdouble|chalf|polar|fft")


# What CPython runs as a frame of its own (warnings.warn's stacklevel counts them): a call of the script's function,
# a step of its generator, a comprehension
_PYTHON_FRAMES = frozenset(("ScriptFunction.__call__", "_generator", "Compiler._comprehension.<locals>.make",
                            "Compiler._comprehension.<locals>.genexpr"))
_FRAME_MODULES = frozenset(("gradcli.language.compiler", "gradcli.language.generators"))


def _script_exit(e: SystemExit, filename: str) -> ScriptExit:
    code = e.code
    text = ""
    if code is not None and not isinstance(code, int):
        try:
            text = str(code)            # (a script's object may define __str__)
        except Exception:
            text = "<exception str() failed>"
    return ScriptExit(code, text, filename)


class Session:
    """Runs script text. Script output goes to `out`, warnings to `err`; errors are raised as
    ScriptError values carrying file, line and column, never printed here.

    With an event sink (`events`, a gradcli.diagnostics.jsonl.JsonLines) the session reports instead of writing:
    every print call, every backward() / autograd.grad() call of the script, and warnings go to the
    sink, which reads the running statement's line from `where`."""

    # Keep `where` up to date without an event sink too (--nan-check names lines); set before compiling.
    track_lines = False
    # A replay of the script a run already parsed (gradcli.diagnostics.replay): its syntax tree is reused.
    replaying = False

    def __init__(self, out=None, err=None, seed: int | None = None, echo=None, display: str | None = None,
                 events=None, provenance: bool = False, stable_ids: bool = False, python_seed: int | None = None,
                 script_args=()):
        if display not in (None, *DISPLAY_MODES):
            raise ValueError(f"unknown display mode {display!r}; expected one of {', '.join(DISPLAY_MODES)}")
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.globals: dict = {}
        self._timeout_held = None       # --timeout that fired inside a __del__ (the unraisable hook holds it)
        self.builtins = stdlib.make_builtins(self._write, _help_text, access.attribute_builtins())
        self.echo = echo
        self._warned: set = set()      # the places a warning was shown once (CPython's registry), and the
        self._warned_version = (0, 0)   # version of the filters they were shown under, and STATE.registry_epoch
        # whether an interactive input (run_unit) imported `from __future__ import annotations`, which the inputs
        # after it keep, as in CPython's interactive mode; and whether one is being compiled
        self._future_annotations = False
        self._in_unit = False
        self._filename = "<script>"
        self.script_args = tuple(script_args)      # what sys.argv holds after the script's name (`run S -- ARG...`)
        self._source, self._split = "", None
        # where[0]: the line of the statement running. Kept up to date only by code compiled while an
        # event sink is set, or under --timeout's supervisor (a word of a page it reads, so it can
        # name the line of a script it had to stop), so other scripts pay nothing for it.
        slot = deadline.line_slot()
        self.where = [0] if slot is None else slot
        self._supervised = slot is not None
        self.events = None
        # with provenance (`gradcli graph`), statements record which of them made each grad_fn node
        # (gradcli.language.provenance); sessions without it compile plain statements and pay nothing
        self.provenance = None
        if provenance:
            from gradcli.language.provenance import Provenance
            self.provenance = Provenance(self)
        # why(line, col, category, message) -> str | None: one more line for a warning, saying why it
        # happened (set by the front ends to gradcli.diagnostics.why, which is imported only when asked)
        self.why = None
        self.warning_subject = None     # what the warning being shown is about (see warn)
        self.set_events(events)
        _keep_heap_memory()
        # The engine's state (modes, print options, the random stream, numbered addresses): one per
        # process, owned by the session running in it, which resets it here and before each script.
        self.state = STATE
        self.reset_state(seed, python_seed)
        # The display style ("modern" or "legacy") outlives reset_state: it belongs to whoever runs the scripts.
        STATE.print_options.display = display or "modern"
        # `<AddBackward0 object at 0x...>` with real addresses, or numbered afresh for each session
        addresses.use_stable(stable_ids)

    def reset_state(self, seed: int | None = None, python_seed: int | None = None) -> None:
        """Process-wide engine state back to a fresh interpreter's: grad mode on, default print options,
        and the random stream seeded from the OS (or from `seed`, like torch.manual_seed); the stream of
        the language's `random` module seeded from the OS too (or from `python_seed`)."""
        state = self.state
        state.reset_modes()             # grad mode on, inference and anomaly modes off
        state.complex_seen = False      # no complex tensor yet: ops skip complexops' check
        state.warn = self._engine_warning
        state.warning_filters = None    # CPython's default filters (the warnings module changes them)
        state.logging = None            # and the logging module's loggers, handlers and levels
        state.call_limit = compiler.MAX_CALL_DEPTH      # (sys.setrecursionlimit lowers it for a run)
        state.streams = self._streams(self._filename)     # sys.stdout, sys.argv
        state.redirects = None          # (contextlib.redirect_stdout: a run left inside one ends it)
        state.warned_once = set()
        state.registry_epoch = 0
        np.seterr(all="ignore")         # PyTorch computes inf and nan silently; so do we
        state.print_options.set(profile="default")
        dtypes.set_default_float(dtypes.float32)       # torch.set_default_dtype lasts one session
        state.threads = DEFAULT_THREADS                 # and so does torch.set_num_threads
        state.default_device, state.device_stack = None, []     # and torch.set_default_device
        classes.undo_library_changes()          # a script's changes to the library's classes last one script
        classes.FINALIZERS[0] = False           # and so does finalize's collection for a class with a __del__
        distributions = sys.modules.get("gradcli.language.distributions")     # (made when a script first uses it)
        if distributions is not None:
            distributions.reset_defaults()      # and Distribution.set_default_validate_args
        backends = sys.modules.get("gradcli.language.backends")
        if backends is not None:
            backends.reset()                    # and torch.backends' flags, the matmul precision, determinism
        saving = sys.modules.get("gradcli.language.saving")
        if saving is not None:
            saving.forget()                     # and the files torch.save kept
        logging = sys.modules.get("gradcli.language.pylogging")
        if logging is not None:
            logging.reset()                     # and what a script set on logging.root
        if seed is None:
            state.generator.seed()
        else:
            state.generator.manual_seed(seed)
        # the seed the random stream started from, drawn from the OS or given: a diagnostic replay
        # (gradcli.diagnostics.why) starts from it to see the same values
        self.initial_seed = state.generator.initial_seed()
        # Python's random module starts from the OS as CPython's does; the seed is kept for replays
        self.python_seed = int.from_bytes(os.urandom(32), "big") if python_seed is None else python_seed
        state.python_seed = self.python_seed
        if state.python_random is not None:     # (else the stream starts from it when a script imports random)
            state.python_random.seed(self.python_seed)

    @property
    def seeds(self) -> tuple:
        """(torch's initial seed, the `random` module's seed): what a replay of this session starts from."""
        return self.initial_seed, self.python_seed

    def _write(self, text: str) -> None:
        self.out.write(text)

    def _streams(self, filename: str) -> tuple:
        """STATE.streams while this session runs `filename`: where sys.stdout and sys.stderr write, the file name
        and the script's arguments (sys.argv), and for the logging and traceback modules the script's lines and its
        source (traceback's position markers)."""
        return (self._script_write, self._script_flush, filename, self.script_args, self._script_line,
                self._script_source)

    def _script_source(self) -> str | None:
        """The whole script's source (None in a REPL input or a notebook cell: code an earlier input compiled
        belongs to another source)."""
        return None if self._in_unit else self._source

    def _script_line(self, line: int) -> str | None:
        return source_line(self._source, line)

    def _script_write(self, stream: str, text: str, args: tuple) -> None:
        """What the script writes to sys.stdout or sys.stderr (print(file=...) too): where print writes, or an
        event of the sink."""
        if self.events is not None:
            self.events.print(text, args, stream)
        elif stream == "stdout":
            self.out.write(text)
        else:
            self.out.flush()
            self.err.write(text)

    def _script_flush(self, stream: str) -> None:
        if self.events is None:
            (self.out if stream == "stdout" else self.err).flush()

    @property
    def filename(self) -> str:
        """The file name of the source running (or that ran last)."""
        return self._filename

    def set_events(self, events) -> None:
        """Report to the event sink `events` from now on, or write text again with None. Line
        tracking is compiled in, so code compiled earlier (a function defined before the switch)
        reports the line of the statement that called it."""
        self.events = events
        if events is not None:
            events.session = self
        self.builtins["print"] = stdlib.make_print(self._write, events.print if events is not None else None)

    def _engine_warning(self, category, message, stacklevel: int = 1) -> None:
        """A warning the engine (or the script's warnings.warn) gives while the script runs, placed at the script's
        line that caused it: the innermost compiled closure on the stack, which knows its line and column (found
        only when a warning is given, so running costs nothing); with `stacklevel` n, the line that called the
        script's function n - 1 calls out, or CPython's "sys:1" past the outermost, as warnings.warn places it."""
        frame = sys._getframe(1)
        level = 1
        found = None
        while frame is not None:
            code, module = frame.f_code, frame.f_globals.get("__name__")
            if code.co_qualname in _PYTHON_FRAMES and module in _FRAME_MODULES and found is not None:
                level += 1                      # a script's function (or comprehension), run from the level above
                found = None
            # (a comprehension's own closure is placed too: the line its frame runs in the level above)
            if found is None and module == "gradcli.language.compiler" and "line" in code.co_freevars:
                found = frame.f_locals
                if level >= stacklevel:
                    self.warn(found["line"], found.get("col", 0), category, message)
                    return
            frame = frame.f_back
        if found is not None or level > 1:          # past the script's outermost frame
            self.warn(1, 0, category, message, module="sys")

    def warn(self, line: int, col: int, category, message, subject=None, module: str = "__main__") -> None:
        """A warning, filtered as Python's warnings module filters it (CPython's default filters, or the script's:
        STATE.warning_filters), shown once per place by default, to stderr (or the event sink), raised under an
        "error" filter, listed inside catch_warnings(record=True). `category` is a Warning class or the name of
        one of Python's; `message` a string or a Warning. `subject` is the value the warning is about (the tensor
        whose `.grad` is read), kept in `warning_subject` for the diagnosis (gradcli.diagnostics.why) while the
        warning is shown."""
        self.warning_subject = subject
        filters = STATE.warning_filters
        version = (0 if filters is None else filters.version, STATE.registry_epoch)
        if version != self._warned_version:     # the filters changed: every place may warn again (CPython)
            self._warned.clear()
            self._warned_version = version
        text = message
        if filters is None and category.__class__ is str:    # the engine's, under CPython's default filters
            key = (module, text, category, line)
            if key in self._warned:
                return
            self._warned.add(key)
        else:
            from gradcli.language import pywarnings
            category = pywarnings.category_class(category)
            if isinstance(message, Warning):
                text, category = str(message), message.__class__
            act = pywarnings.action(filters, text, category, module, line)
            if act == "ignore":
                return
            if act == "error":
                raise message if isinstance(message, Warning) else category(message)
            key = (module, text, category.__name__ if category.__module__ == "builtins" else category, line)
            if pywarnings.seen(filters, act, self._warned, key):
                return
            if filters is not None and filters.record is not None:
                instance = message if isinstance(message, Warning) else category(message)
                filename = self._filename if module == "__main__" else module
                filters.record.append(pywarnings.WarningMessage(instance, category, filename, line))
                return
            text = str(message if isinstance(message, Warning) else category(message))
            category = category.__name__
        self._show(line, col, category, text, module)

    def _show(self, line: int, col: int, category: str, message: str, module: str) -> None:
        """A warning's text on stderr as CPython's warnings module writes it (or its event)."""
        why = self.why(line, col, category, message) if self.why is not None and module == "__main__" else None
        if STATE.redirects is not None and "stderr" in STATE.redirects:     # redirect_stderr: to the script's object
            shown = source_line(self._source, line) if module == "__main__" else None
            text = f"{self._filename if module == '__main__' else module}:{line}: {category}: {message}\n"
            stdlib.stream_write("stderr", text + ("  " + shown.strip() + "\n" if shown is not None else ""), ())
            return
        if self.events is not None:
            if why:
                self.events.warning(line, col, category, message, why=why)
            else:
                self.events.warning(line, col, category, message)
            return
        self.out.flush()
        if module != "__main__":        # past the script's outermost frame: CPython's sys module, line 1
            self.err.write(f"{module}:{line}: {category}: {message}\n")
            self.err.flush()
            return
        text = f"{self._filename}:{line}: {category}: {message}\n"
        shown = source_line(self._source, line)
        if shown is not None:
            text += "  " + shown.strip() + "\n"
        if why:
            text += f"  why: {why}\n"          # the prefix of gradcli.diagnostics.why.PREFIX
        self.err.write(text)
        self.err.flush()

    @property
    def _lines(self) -> list[str]:
        """The script's lines, split when a tool first asks (a plain run never does)."""
        if self._split is None:
            self._split = self._source.split("\n")
        return self._split

    def compile(self, source: str, filename: str = "<script>", echo_last: bool = False):
        """Parse and compile `source`; raises ScriptSyntaxError. With `echo_last`, only a last statement
        that is an expression is echoed (a notebook cell), instead of every top-level expression."""
        self._filename = filename
        self._source, self._split = source, None
        STATE.streams = self._streams(filename)
        if not self._in_unit and stdlib.SYS.made:        # sys.argv: this script's, as CPython gives it
            from gradcli.language import pysys
            stdlib.SYS.members["argv"] = pysys.argv(filename, self.script_args)
        if sys.getrecursionlimit() < RECURSION_LIMIT:
            sys.setrecursionlimit(RECURSION_LIMIT)
        try:
            # one list of problems for the parse and the compile, so that one run reports them all
            problems = Problems()
            tree = _replayed_tree(source) if self.replaying else None
            if tree is None:
                tree = parser.parse(source, filename, problems)
                if self.replaying and not problems:
                    _REPLAYED[0] = (source, tree)
            tracked = self.events is not None or self.track_lines or self._supervised
            where = self.where if tracked else None
            made = compiler.Compiler(self.globals, self.builtins, self.warn, self.echo, where,
                                     provenance=self.provenance, problems=problems, echo_last=echo_last)
            if self._in_unit:
                made.future_annotations = self._future_annotations
            program = made.module(tree)
            if self._in_unit:
                self._future_annotations = made.future_annotations
            return program
        except ScriptSyntaxError as e:
            raise e.located(filename, source)
        except deadline.ScriptTimeout as e:          # --timeout while parsing a huge script
            raise deadline.timed_out(e, source, filename, getattr(e, compiler.POSITION, None)) from None
        except MemoryError:                        # a huge script, past --max-memory
            raise ScriptError("MemoryError", "out of memory while parsing the script", filename) from None

    def run_source(self, source: str, filename: str = "<script>", echo_last: bool = False) -> None:
        """Run script text in this session's namespace; raises ScriptError (syntax or runtime)."""
        program = self.compile(source, filename, echo_last)
        if not STATE.complex_seen and _COMPLEX_TEXT.search(source):
            # complex values may come: from the first statement on, ops refuse those they have not been checked
            # with (gradcli.engine.ops.complexops), also where a call's function is read before its complex
            # arguments are made (`torch.max(torch.tensor([1j]))`)
            STATE.complex_seen = True
        # the session's event sink watches the script's backward/grad calls, unless a tool already
        # watches the whole run (and tells the sink itself: gradcli.diagnostics.nancheck)
        observer = STATE.observer
        if observer is None:
            STATE.observer = self.events
        hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable(source, filename)
        try:
            with _collector_tuned():
                program(self.globals)
            self._raise_held_timeout(source, filename)
        except (ScriptError, BrokenPipeError):
            raise
        except deadline.ScriptTimeout as e:          # --timeout (gradcli.deadline.Deadline)
            raise deadline.timed_out(e, source, filename, getattr(e, compiler.POSITION, None)) from None
        except RecursionError as e:
            raise self._script_error(e, source, filename) from None
        except SystemExit as e:         # sys.exit(): the run ends with CPython's status
            raise _script_exit(e, filename) from None
        except compiler.CATCHABLE as e:         # (a script may raise GeneratorExit itself)
            if DEBUG:
                raise
            raise self._script_error(e, source, filename) from None
        finally:
            sys.unraisablehook = hook
            STATE.observer = observer
            self.where[0] = 0

    def _raise_held_timeout(self, source: str, filename: str) -> None:
        """--timeout that fired inside a `__del__`, which Python cannot raise from: raised now, as the run's."""
        e, self._timeout_held = self._timeout_held, None
        if e is not None:
            raise deadline.timed_out(e, source, filename, getattr(e, compiler.POSITION, None)) from None

    def finalize(self) -> None:
        """What CPython does to `__main__` when the interpreter exits: its names bound to None, the ones with a
        single leading underscore first, then the others, each in order, so that the objects freed then run their
        `__del__` (their errors reported as CPython reports them). `gradcli run` calls it after the script; it does
        nothing unless a class with a `__del__` was made (classes.FINALIZERS)."""
        if not classes.FINALIZERS[0]:       # no class with a __del__: nothing to see, nothing to pay for
            return
        g = self.globals
        hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable(self._source, self._filename)
        try:
            for key in [k for k in g if k.__class__ is str and k[:1] == "_" and k[1:2] != "_"]:
                g[key] = None
            for key in list(g):
                if g.get(key, None) is not None:
                    g[key] = None
            gc.collect()            # (CPython's last collection frees the objects in cycles, whose __del__ runs then)
            self.out.flush()
        except deadline.ScriptTimeout as e:
            raise deadline.timed_out(e, self._source, self._filename, getattr(e, compiler.POSITION, None)) from None
        finally:
            sys.unraisablehook = hook
        self._raise_held_timeout(self._source, self._filename)

    def _unraisable(self, source: str, filename: str):
        """Python's hook for an error it cannot raise, while a script runs: a generator of the script's that
        Python closes when it is freed, whose `finally` fails or yields again. Reported as CPython reports it
        ("Exception ignored in: <generator object f at 0x...>"), with the script's place, and the run goes
        on."""
        previous = sys.unraisablehook

        def report(unraisable):
            e = unraisable.exc_value
            if isinstance(e, deadline.ScriptTimeout):   # --timeout fired in a __del__: the run stops when it is back
                self._timeout_held = e
                return
            if not isinstance(e, Exception):        # Ctrl-C: the REPL's hook redelivers it
                previous(unraisable)
                return
            if getattr(e, compiler.POSITION, None) is None:       # raised by Python's close(), at no line
                text = f"{type(e).__qualname__}: {e}"
            else:
                text = self._script_error(e, source, filename).render()
            found = unraisable.object
            if found.__class__ is MethodType and getattr(found.__func__, "name", None) == "__del__":
                found = found.__func__          # (CPython names the finalizer's function, not a bound method)
            shown = repr(found) if found is not None else "None"
            self.out.flush()
            self.err.write(f"Exception ignored in: {shown}\n{text}\n")
            self.err.flush()
        return report

    def run_unit(self, source: str, filename: str = "<stdin>", echo=None, echo_last: bool = False) -> None:
        """Run one REPL input (or notebook cell) in the session as it stands (nothing is reset between inputs).

        `echo(value)` receives the value of each top-level expression statement (with `echo_last`, of
        the last statement only, when it is an expression). Each input is new source, so a warning
        shown for line 1 of an earlier input is shown again for this one."""
        saved = self.echo
        self.echo = echo
        self._warned = set()
        self._in_unit = True
        try:
            self.run_source(source, filename, echo_last)
        finally:
            self.echo = saved
            self._in_unit = False

    @staticmethod
    def _script_error(e: BaseException, source: str, filename: str) -> ScriptError:
        e = budget.script_exception(e)             # numpy's MemoryError as PyTorch's allocator error
        line, col = getattr(e, compiler.POSITION, None) or (0, 0)
        try:
            message = str(e)            # a script's exception class may define __str__
            if isinstance(e, KeyError) and e.args:
                message = repr(e.args[0])
        except Exception:
            message = "<exception str() failed>"        # as CPython's traceback shows it
        # a script's class by its qualified name (`Outer.Error`), as CPython's traceback names it, with its
        # module when it is another Python module's (dataclasses.FrozenInstanceError)
        kind = type(e).__qualname__
        if type(e).__module__ in _PYTHON_MODULE_ERRORS:
            kind = f"{type(e).__module__}.{kind}"
        err = ScriptError(kind, message, filename, line, col)
        if isinstance(e, (NameError, AttributeError)):
            from gradcli.language import suggestions        # only for an error that reaches the top
            err.suggestion = suggestions.offer(e, access.python_dir)
        return err.located(filename, source)
