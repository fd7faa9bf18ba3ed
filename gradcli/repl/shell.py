"""One REPL session apart from the terminal: runs input units and magics, and never dies of them.

The error policy lives here. A script error (syntax or runtime) is shown as `gradcli run` shows
it, with `<stdin>` for the file name and lines counted from the start of the input; Ctrl-C during
a run prints KeyboardInterrupt; any other exception (a bug in gradcli) is one line. In every case
the names defined so far stay, and the next prompt comes.

Nothing is reset between inputs: grad mode, print options and the random stream carry on, as in
Python's REPL. An interrupt inside `with torch.no_grad():` still restores grad mode, because the
compiled with-statement calls `__exit__` for every exception, KeyboardInterrupt included.
"""

from __future__ import annotations

import sys
import time
import traceback
from dataclasses import dataclass

from gradcli import session as session_module
from gradcli.display import DISPLAY_MODES
from gradcli.engine.tensor import print_options
from gradcli.errors import EXIT_SCRIPT_ERROR, ScriptError, ScriptExit
from gradcli.repl import magics, scan, toolbar
from gradcli.repl.interrupt import Guard, Wakeup
from gradcli.session import Session
from gradcli.language.stdlib import ScriptModule
from gradcli.display.terminal import RED, RESET, colour_wanted, paint_error

FORMATS = ("text", "jsonl")


def access_tensor_attrs():
    from gradcli.language.access import TENSOR_ATTRS
    return TENSOR_ATTRS
_LEAVE = ("exit", "quit", "exit()", "quit()")


def _warning_why(session):
    """The session's hook for a line saying why a warning happened: the session records provenance,
    so gradcli.diagnostics.why answers from it without a replay."""
    def why(line, col, category, message):
        from gradcli.diagnostics.why import warning_note
        return warning_note(session, line, col, category, message, None, 0.0)
    return why


@dataclass
class Options:
    """What `gradcli repl` was asked for on its command line."""
    vi: bool = False
    auto_suggest: bool = False
    toolbar: bool = True
    seed: int | None = None
    display: str | None = None
    colour: bool | None = None      # None: colour unless NO_COLOR is set or stdout is not a terminal
    format: str = "text"            # "jsonl": what inputs print, show and raise as JSON lines (gradcli.diagnostics.jsonl)
    stable_ids: bool = False        # numbered addresses in `<AddBackward0 object at 0x...>` (gradcli.engine.addresses)


class Shell:
    """A session plus what the REPL keeps about it: its inputs, the toolbar text, the display."""

    # Show every top-level expression's value (the REPL), or only a last one (a notebook cell: gradcli.kernel.cells)
    echo_last = False

    # sys.exit() in an input ends the REPL (a notebook's kernel reports it as the cell's error, as IPython does)
    leaves_on_exit = True

    def __init__(self, options: Options | None = None, out=None, err=None):
        self.options = options or Options()
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        wanted = self.options.colour
        self.colour = colour_wanted(self.out) if wanted is None else wanted
        self.error_colour = self.colour and (wanted or colour_wanted(self.err))
        self.toolbar = self.options.toolbar
        self.inputs: list[str] = []       # every input, for %history
        self.accepted: list[str] = []     # inputs that ran without error, for %save
        self.events = None                # the JSON Lines sink while the format is jsonl
        self.exit_status = None           # set when an input called sys.exit(): the REPL ends with it
        self.session = self._new_session(self.options.display)
        problem = self.set_format(self.options.format)
        if problem:
            raise ValueError(problem)
        self.toolbar_text = toolbar.summary(self.session.globals)

    def _new_session(self, display: str | None) -> Session:
        # Provenance costs about 5 µs a statement, nothing at typing speed, and lets %graph show the
        # input that made each node.
        session = Session(out=self.out, err=self.err, seed=self.options.seed, display=display, events=self.events,
                          provenance=True, stable_ids=self.options.stable_ids)
        session.why = _warning_why(session)
        return session

    # ------------------------------------------------------------------------------------ input
    def execute(self, text: str) -> bool:
        """Run one input (a unit of statements or a magic line); False when it asks to leave."""
        source = text.rstrip()
        if not source.strip():
            return True
        self.inputs.append(source)
        stripped = source.strip()
        if stripped.startswith("%"):
            try:
                return magics.run(self, stripped)
            except KeyboardInterrupt:
                self.interrupted()
            except BrokenPipeError:
                raise
            except Exception as e:
                self.internal_error(e)
            finally:
                self.refresh_toolbar()
            return True
        if stripped in _LEAVE and stripped.rstrip("()") not in self.session.globals:
            return False
        if stripped.endswith("?") and "\n" not in stripped:
            self.show_help(stripped[:-1].strip())
            return True
        self.run_code(source)
        return self.exit_status is None

    def run_code(self, source: str, filename: str = "<stdin>", echo=True, record: bool = True) -> bool:
        """Run statements in the session, reporting any error; True when they ran to the end.

        `echo`: True shows expression values as the REPL does, False shows nothing, a function
        receives them."""
        if echo is True:
            echo = self._echo
        started = time.perf_counter()
        try:
            with Guard():
                self.session.run_unit(source, filename, echo=echo or None, echo_last=self.echo_last)
        except ScriptError as e:
            if e.__class__ is ScriptExit and self.leaves_on_exit:
                # sys.exit(): the REPL ends, as CPython's does, with the script's status
                if e.text:
                    self.error_line(e.text)
                self.exit_status = e.exit_status
                self._end(not e.exit_status, started, filename)
                return False
            self.report(e, (source, filename), time.perf_counter() - started)
            self._end(False, started, filename)
            return False
        except KeyboardInterrupt:
            if self.events is not None:
                self.events.error(ScriptError("KeyboardInterrupt", "", filename))
            else:
                self.interrupted()
            self._end(False, started, filename)
            return False
        except BrokenPipeError:
            raise
        except Exception as e:
            self.internal_error(e)
            self._end(False, started, filename)
            return False
        finally:
            self.refresh_toolbar()
        self._end(True, started, filename)
        if record:
            self.accepted.append(source + "\n")
        return True

    def _end(self, ok: bool, started: float, filename: str) -> None:
        if self.events is not None:
            self.events.end(ok, started, filename)

    def _echo(self, value) -> None:
        # As Python's sys.displayhook: a value other than None is shown and kept as the builtin `_`,
        # which a script's own `_ = ...` shadows (it is a global).
        if value is not None:
            if self.events is not None:
                self.events.result(value)
            else:
                self.out.write(repr(value) + "\n")
            self.session.builtins["_"] = value

    def show_graph(self, value, name: str, names: dict, depth: int, ascii_: bool) -> None:
        """%graph: the grad_fn graph behind `value` as a text tree (a notebook shows a picture too:
        gradcli.kernel). With a session that records provenance, nodes also show the statement that made them."""
        from gradcli.diagnostics import graphview
        self.write(graphview.render(value, names, max_depth=depth, ascii=ascii_,
                                    provenance=getattr(self.session, "provenance", None)) + "\n")

    def show_help(self, text: str) -> None:
        """`NAME?`: the help for a name or a plain attribute chain, found without running code."""
        found = self.help_for(text)
        if found is None:
            self.error_line(f"{text}?: nothing to describe; give a name, e.g. torch.ones? or x.sum?")
            return
        self.write(found)

    def help_for(self, text: str) -> str | None:
        """The help text for a name or a plain attribute chain (`NAME?`, a notebook's Shift-Tab), or None."""
        from gradcli.language import helptext
        from gradcli.repl.completion import TENSOR, Tensor, _Method, _resolve_chain
        session = self.session
        head, dot, attr = text.rpartition(".")
        if dot and attr.isidentifier() and not attr.startswith("_"):
            owner = _resolve_chain(head, session.globals, session.builtins)
            if (owner is TENSOR or owner.__class__ is Tensor) and attr in access_tensor_attrs():
                return helptext.method_text(attr)
            member = owner.members.get(attr) if owner.__class__ is ScriptModule else None
            if member.__class__ in (int, float):
                return helptext.constant_text(owner.name, attr, member)
        obj = _resolve_chain(text, session.globals, session.builtins) if text.isascii() else None
        if obj is None or obj is TENSOR or text.rstrip(" ?") != text:
            return None
        if obj.__class__ is _Method:
            return helptext.method_text(obj.name)
        return helptext.text_for(obj, session.builtins)

    def run_lines(self, stream, prompts=None) -> int:
        """Read input units from a stream without editing: piped input (no prompt), or with
        `prompts` (first line, continuation) a dumb terminal, where Ctrl-C while typing drops the
        lines typed so far and shows KeyboardInterrupt, as Python's REPL does."""
        fd = None
        if prompts is not None:
            try:
                fd = stream.fileno()
            except (AttributeError, OSError, ValueError):
                pass
        with Wakeup(fd) as wake:
            return self._read_lines(stream, prompts, wake)

    def _read_lines(self, stream, prompts, wake) -> int:
        lines: list[str] = []
        while True:
            try:                # a Ctrl-C landing while the prompt is written counts as one while reading
                if prompts is not None:
                    self.err.write(prompts[1 if lines else 0])
                    self.err.flush()
                    wake.wait()
                raw = stream.readline()
            except KeyboardInterrupt:
                if prompts is None:
                    raise
                self.err.write("\n")
                self.interrupted()
                lines = []
                continue
            if not raw:
                break
            lines.append(raw.rstrip("\r\n"))
            text = "\n".join(lines)
            if scan.enter_action(text) == scan.ACCEPT:
                lines = []
                if not self.execute(text):
                    return self.exit_status or 0
        if lines:
            self.execute("\n".join(lines))
        if prompts is not None:
            self.err.write("\n")
        return 0

    # ---------------------------------------------------------------------------------- reports
    def write(self, text: str) -> None:
        if self.events is not None:
            self.events.message(text)
            return
        self.out.write(text)
        self.out.flush()

    def error_line(self, text: str) -> None:
        """A one-line message on stderr, in red when colour is on."""
        self.out.flush()
        self.err.write(f"{RED}{text}{RESET}\n" if self.error_colour else text + "\n")
        self.err.flush()

    def report(self, error: ScriptError, unit=None, elapsed: float = 0.0) -> None:
        """Show a script error; with `unit` (the input that failed: source, filename) also a line
        saying why, when gradcli.diagnostics.why can tell by replaying the session's inputs."""
        why = self._why(error, unit, elapsed) if unit is not None else None
        if self.events is not None:
            if why:
                error.why = why
            self.events.error(error)
            return
        self.out.flush()
        self.err.write(error.render(paint_error if self.error_colour else None) + "\n")
        if why:
            from gradcli.diagnostics.why import why_line
            self.err.write(why_line(why) + "\n")
        self.err.flush()

    def _why(self, error: ScriptError, unit, elapsed: float):
        if error.exit_status != EXIT_SCRIPT_ERROR:
            return None
        from gradcli.diagnostics import why
        units = why.repl_units(self.accepted) + [why.Unit(*unit, lines=False)]
        return why.error_note(error, self.session, units, elapsed)

    def interrupted(self) -> None:
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass
        self.error_line("KeyboardInterrupt")

    def internal_error(self, e: BaseException) -> None:
        """A failure inside gradcli itself: one line (the traceback with GRADCLI_TRACEBACK=1)."""
        if session_module.DEBUG:
            self.out.flush()
            traceback.print_exception(type(e), e, e.__traceback__, file=self.err)
        message = str(e).split("\n", 1)[0]
        self.error_line(f"gradcli: internal error: {type(e).__name__}: {message} "
                        "(please report it; the session goes on)")

    # ------------------------------------------------------------------------------- state
    def refresh_toolbar(self) -> None:
        try:
            self.toolbar_text = toolbar.summary(self.session.globals)
        except Exception:                   # the toolbar is a convenience: never an error
            self.toolbar_text = ""

    def reset(self) -> None:
        """A fresh namespace and fresh engine state, keeping the display style and the seed option."""
        self.session = self._new_session(self.display_mode())
        self.accepted = []
        self.refresh_toolbar()

    def display_mode(self) -> str:
        return getattr(print_options, "display", "modern")

    def set_display(self, mode: str) -> str | None:
        """Switch the tensor display; returns a problem to report, or None."""
        if mode not in DISPLAY_MODES:
            return f"unknown display {mode!r}; choose {' or '.join(DISPLAY_MODES)}"
        print_options.display = mode
        return None

    def format_mode(self) -> str:
        return "jsonl" if self.events is not None else "text"

    def set_format(self, fmt: str) -> str | None:
        """Switch between text and JSON Lines output (gradcli.diagnostics.jsonl); returns a problem to report, or None."""
        if fmt not in FORMATS:
            return f"unknown format {fmt!r}; choose {' or '.join(FORMATS)}"
        if fmt == "jsonl" and self.events is None:
            from gradcli.diagnostics.jsonl import JsonLines
            self.events = JsonLines(self.out)
        elif fmt == "text":
            self.events = None
        self.session.set_events(self.events)
        return None

    def lookup(self, text: str):
        """The value a magic's argument names: a name or a plain attribute chain is looked up without
        running code; anything else is evaluated as an expression (its errors reported as usual).
        Returns (True, value), or (False, None) after reporting why there is none."""
        from gradcli.repl.completion import resolve
        found, value = resolve(text, self.session.globals)
        if found:
            return True, value
        captured: list = []
        if not self.run_code(text, echo=captured.append, record=False):
            return False, None
        if not captured:
            self.error_line(f"'{text}' is not an expression")
            return False, None
        return True, captured[-1]
