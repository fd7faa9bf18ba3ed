"""Running one notebook cell on the REPL's Shell, as IPython runs a cell.

The value of a last expression is shown (not every expression's), `;` at its end hides it, `%` lines are
magics, and every failure is handed to a front end as (name, value, report lines) instead of being
written to a terminal.

Two front ends use it: the Jupyter kernel (gradcli.kernel.kernel), which turns results and errors into
protocol messages, and `gradcli run NOTEBOOK.ipynb` (gradcli.kernel.notebook), which writes them as a
terminal shows a script's. Nothing here imports a Jupyter library.
"""

from __future__ import annotations

import traceback

from gradcli import deadline
from gradcli import session as session_module
from gradcli.kernel.pretty import pretty
from gradcli.errors import EXIT_SCRIPT_ERROR, EXIT_USAGE, ScriptError
from gradcli.repl import magics, scan
from gradcli.repl.shell import Options, Shell

# The REPL's `%` commands that make sense in a notebook. Left out: %toolbar and %exit (no prompt),
# %load and %save (they read and write files: a notebook handed out by someone else must not touch the
# reader's files; cells reach nothing but what the language provides).
NOTEBOOK_MAGICS = ("help", "vars", "graph", "why", "time", "seed", "display", "format", "reset", "history")

EXIT_INTERRUPTED = 130      # as `gradcli run` stopped by Ctrl-C

HELP = ("A cell holds statements as in a .grad script; the value of a last expression is shown "
        "(a trailing ';' hides it).\nA line starting with % runs one of these commands:\n")


class Front:
    """Where a cell's results go; the notebook runner's front writes them as a terminal would."""

    def __init__(self, out, err):
        self.out, self.err = out, err

    def result(self, value) -> None:
        """The value of a cell's last expression (Jupyter's execute_result), as the notebook shows it."""
        self.out.write(pretty(value) + "\n")

    def error(self, ename: str, evalue: str, lines: list) -> None:
        """A failure: the exception's name and message, and the report as a terminal shows it."""
        self.out.flush()
        self.err.write("\n".join(lines) + "\n")
        self.err.flush()


def hides_result(code: str) -> bool:
    """Whether the last line ends with ';' (a comment after it aside): IPython shows no value then."""
    lines = [line for line in code.rstrip().split("\n") if line.strip()]
    if not lines:
        return False
    last = lines[-1]
    if scan.scan(last).in_comment:
        last = last[:last.rindex("#")]
    return last.rstrip().endswith(";")


def split_cell(code: str) -> list:
    """The cell as [(kind, text, first line)]: kind "code" for statements (several lines), "magic" for
    one `%` line at column 0 outside any open bracket or string. The first line is 1-based."""
    parts: list = []
    chunk: list = []
    start = 1
    for number, line in enumerate(code.split("\n"), 1):
        if line.startswith("%") and not (chunk and scan.scan("\n".join(chunk)).open):
            if any(c.strip() for c in chunk):
                parts.append(("code", "\n".join(chunk), start))
            parts.append(("magic", line.strip(), number))
            chunk, start = [], number + 1
            continue
        chunk.append(line)
    if any(c.strip() for c in chunk):
        parts.append(("code", "\n".join(chunk), start))
    return parts


class CellShell(Shell):
    """A Shell whose inputs are notebook cells and whose reports go to a Front. `timeout`: seconds a
    cell may run (--timeout of a kernel), None for no limit. `failure` holds the first failure of the
    cell that ran last, as (name, value, lines), or None; `failure_status` the exit status `gradcli run`
    gives it (1 for a runtime error, 2 for a syntax or usage error, 124 past --timeout, 130 interrupted)."""

    leaves_on_exit = False          # sys.exit() is the cell's error (SystemExit: 3), as IPython shows it

    echo_last = True

    def __init__(self, front: Front, options: Options | None = None, timeout: float | None = None,
                 out=None, err=None):
        self.front = front
        self.timeout = timeout
        self.failure = None
        self.failure_status = 0
        options = options or Options()
        options.colour = False          # a notebook shows plain text; Jupyter colours nothing of ours
        super().__init__(options, out=out, err=err)

    # ------------------------------------------------------------------------------------ a cell
    def run_cell(self, code: str, filename: str) -> bool:
        """Run a cell's parts in order, stopping at the first failure; True when all ran."""
        self.failure = None
        stripped = code.strip()
        if stripped.endswith("?") and "\n" not in stripped and not stripped.startswith("%"):
            self.show_help(stripped[:-1].strip())
            return self.failure is None
        parts = split_cell(code)
        timer = deadline.Deadline(self.timeout, filename).start()
        try:
            for k, (kind, text, first) in enumerate(parts):
                if kind == "magic":
                    self._magic(text)
                else:
                    # blank lines before the part, so errors count lines from the cell's start
                    source = "\n" * (first - 1) + text
                    last = k == len(parts) - 1 and not hides_result(text)
                    self.inputs.append(text)
                    self.run_code(source, filename, echo=last)
                if self.failure is not None:
                    return False
        except KeyboardInterrupt:           # landed between the parts, outside run_code's own handling
            self.interrupted()
            return False
        except deadline.ScriptTimeout as e:        # the timer landed in a magic's own work
            message = deadline.timeout_message(e.args[0] if e.args else 0)
            self._fail("TimeoutError", message, [f"{filename}: TimeoutError: {message}"], deadline.EXIT_TIMEOUT)
            return False
        finally:
            timer.cancel()
        return True

    def _magic(self, line: str) -> None:
        name, _, arg = line[1:].partition(" ")
        if name in magics.MAGICS and name not in NOTEBOOK_MAGICS:
            self.error_line(f"%{name}: not available in a notebook (its commands: "
                            f"{', '.join('%' + n for n in NOTEBOOK_MAGICS)})")
            return
        if name == "help" and not arg.strip():
            width = max(len(magics.MAGICS[n].usage) for n in NOTEBOOK_MAGICS)
            self.write(HELP + "".join(f"  {magics.MAGICS[n].usage.ljust(width)}  {magics.MAGICS[n].summary}\n"
                                      for n in NOTEBOOK_MAGICS))
            return
        self.execute(line)              # (which keeps the line for %history)

    # --------------------------------------------------------------------------- reports to the front
    def _fail(self, ename: str, evalue: str, lines: list, status: int = EXIT_SCRIPT_ERROR) -> None:
        if self.failure is None:
            self.failure, self.failure_status = (ename, evalue, lines), status
            self.front.error(ename, evalue, lines)

    def _echo(self, value) -> None:
        if value is None:
            return
        if self.events is not None:
            self.events.result(value)
        else:
            self.front.result(value)
        self.session.builtins["_"] = value

    def report(self, error: ScriptError, unit=None, elapsed: float = 0.0) -> None:
        why = self._why(error, unit, elapsed) if unit is not None else None
        if self.events is not None:         # %format jsonl: the error is an event like the others
            super().report(error, unit, elapsed)
            if self.failure is None:
                self.failure, self.failure_status = (error.kind, error.message, []), error.exit_status
            return
        lines = error.render().split("\n")
        if why:
            from gradcli.diagnostics.why import why_line
            lines.append(why_line(why))
        self._fail(error.kind, error.message, lines, error.exit_status)

    def interrupted(self) -> None:
        self._fail("KeyboardInterrupt", "", ["KeyboardInterrupt"], EXIT_INTERRUPTED)

    def error_line(self, text: str) -> None:
        """A magic used wrongly, an unknown one, `NAME?` with nothing to describe: as IPython's UsageError."""
        self._fail("UsageError", text, [f"UsageError: {text}"], EXIT_USAGE)

    def internal_error(self, e: BaseException) -> None:
        if session_module.DEBUG:            # GRADCLI_TRACEBACK=1: debugging gradcli itself
            traceback.print_exception(type(e), e, e.__traceback__, file=self.err)
        message = str(e).split("\n", 1)[0]
        self._fail("InternalError", f"{type(e).__name__}: {message}",
                   [f"gradcli: internal error: {type(e).__name__}: {message} (please report it; the session goes on)"])

    def show_help(self, text: str) -> None:
        """`NAME?`: the help goes to the front's pager when it has one (Jupyter's help panel), as IPython's does."""
        page = getattr(self.front, "page", None)
        found = self.help_for(text) if page is not None else None
        if found is None:
            super().show_help(text)
            return
        page(found)

    def set_format(self, fmt: str) -> str | None:
        """%format jsonl: the events go where the front wants them (the kernel: application/json outputs)."""
        problem = super().set_format(fmt)
        stream = getattr(self.front, "event_stream", None)
        if problem is None and self.events is not None and stream is not None:
            self.events.out = stream
        return problem

    def show_graph(self, value, name: str, names: dict, depth: int, ascii_: bool) -> None:
        show = getattr(self.front, "graph", None)
        if show is None:
            super().show_graph(value, name, names, depth, ascii_)
            return
        show(value, name, names, depth, ascii_, getattr(self.session, "provenance", None))
