"""The command line: `gradcli run`, `gradcli -c`, `gradcli repl`, options, and turning errors into text and exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import time

from gradcli.engine import budget
from gradcli import deadline
from gradcli import PYTORCH_VERSION, __version__
from gradcli.display.terminal import COLOR_MODES, colour_wanted, paint_error
from gradcli.errors import EXIT_OK, EXIT_SCRIPT_ERROR, EXIT_USAGE, ScriptError, ScriptSyntaxError

EXIT_INTERRUPTED = 130

EPILOG = """\
examples:
  gradcli                              open the interactive REPL (on a terminal; otherwise run stdin)
  gradcli run tutorial.grad            run a script, print what PyTorch would print
  gradcli run --seed 0 a.grad b.grad   run scripts in turn, each in a fresh namespace
  cat s.grad | gradcli run -           read the script from standard input
  gradcli graph tutorial.grad out      draw the backward graph of `out` (also --format dot|json, -o FILE.svg)
  gradcli grad "sin(x) * x**2" x=1.0   the value of an expression and its gradient
  gradcli explain tutorial.grad x      how backward() computed x.grad, node by node
  gradcli run --check-grads s.grad     check every backward() against finite differences
  gradcli -c 'import torch; x = torch.ones(2, requires_grad=True); (x * x).sum().backward(); print(x.grad)'
  gradcli help                         the documentation's topics (gradcli help TOPIC shows one)
  gradcli completion bash              a bash completion script (also zsh; see gradcli help usage)

exit status: 0 ok, 1 script error (runtime), 2 usage or syntax error, 3 --check-grads mismatch,
  4 --nan-check found a nan or inf, 124 stopped by --timeout, 130 interrupted
"""


DISPLAYS = ("modern", "legacy")
FORMATS = ("text", "jsonl")
_HELP = {
    "seed": "as if each script began with torch.manual_seed(N)",
    "display": "how tensors print: modern (default) or legacy (PyTorch 0.3's 'Variable containing:')",
    "color": "colour error messages: auto (default: on a terminal, unless NO_COLOR is set), always or never",
    "timing": "after each script, print its running time on stderr, as the tutorial gallery's footer",
    "format": "text (default), or jsonl: one JSON object per event on stdout (docs/jsonl.md)",
    "stable-ids": "print numbered addresses in '<AddBackward0 object at 0x...>', the same on every run",
    "check-grads": "then check every backward()/autograd.grad() call against finite differences in float64, "
                   "reporting on stderr; exit status 3 on a mismatch (docs/checks.md)",
    "nan-check": "stop at the first op or backward node that makes a nan or inf, naming it and its line; "
                 "exit status 4 (docs/checks.md)",
    "timeout": "stop a script still running after SECONDS, with a message and exit status 124 (docs/security.md)",
    "max-memory": "memory a script may use, as bytes or with K, M, G: one tensor at most, and all of its data "
                  "(default: half the machine's memory; 0: no limit)",
}


def _option_type(parse):
    """An argparse type from a gradcli.engine.budget or gradcli.deadline parser, with its own message for a bad value."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return convert


class _Terminal:
    """How this process reports: set once from the command line."""
    colour = False
    timing = False


SHARED_OPTIONS = tuple(_HELP)
# A value that is the option's default, given explicitly: every command accepts it (it changes nothing).
_NEUTRAL = {"format": "text", "display": "modern"}


def script_options(parser, names=SHARED_OPTIONS, top: bool = False, own=()) -> None:
    """Options shared by the ways of running scripts. They may come before the command or after it
    (`gradcli --seed 0 run s.grad`, `gradcli run --seed 0 s.grad`): a command's parser leaves an
    option it was not given unset, so the one given at the top level stands.
    A command honours `names`; it accepts the others too (hidden from its --help) so that
    `refused()` can say in one line that they do not apply, wherever they were given. `own` names
    shared options the command defines itself, with a meaning of its own (graph's --format)."""
    unset = {} if top else {"default": argparse.SUPPRESS}
    if not top:
        parser.set_defaults(honoured=tuple(names) + tuple(own))

    def add(name, *flags, **kw):
        if name in own:
            return
        shown = name in names
        parser.add_argument(*flags, help=_HELP[name] if shown else argparse.SUPPRESS, **kw, **unset)
    add("seed", "--seed", type=int, metavar="N")
    add("display", "--display", choices=DISPLAYS)
    add("color", "--color", choices=COLOR_MODES)
    add("timing", "--timing", action="store_true")
    add("format", "--format", choices=FORMATS)
    add("stable-ids", "--stable-ids", action="store_true")
    add("check-grads", "--check-grads", action="store_true")
    add("nan-check", "--nan-check", action="store_true")
    add("timeout", "--timeout", type=_option_type(deadline.parse_seconds), metavar="SECONDS")
    add("max-memory", "--max-memory", type=_option_type(budget.parse_size), metavar="SIZE")


def given(args, name: str) -> bool:
    """Whether the shared option `name` was given (before or after the command) with an effect."""
    value = getattr(args, name.replace("-", "_"), None)
    return value is not None and value is not False and value != _NEUTRAL.get(name)    # --seed 0 == False


def refusal(option: str, command: str, why: str | None = None) -> str:
    """The one line saying that `option` (e.g. "--format jsonl") does not apply to `command`, and
    why (by default: the commands it applies to)."""
    if why is None:
        name = option.split()[0].lstrip("-")
        where = [c for c, names in _honoured_by().items() if name in names and c != command]
        why = f"it applies to {', '.join(where)}" if where else None
    return f"gradcli {command}: {option} does not apply to this command" + (f" ({why})" if why else "")


def refused(args, command: str, honoured=None) -> str | None:
    """The refusal line for the first shared option given to `command` that it does not honour."""
    if honoured is None:
        honoured = getattr(args, "honoured", SHARED_OPTIONS)
    for name in SHARED_OPTIONS:
        if name not in honoured and given(args, name):
            value = getattr(args, name.replace("-", "_"))
            return refusal(f"--{name}" if value is True else f"--{name} {_shown(name, value)}", command)
    return None


def _shown(name: str, value) -> str:
    return f"{value:g}" if name == "timeout" else str(value)


def _honoured_by() -> dict:
    """{command: the shared options it honours}, from the parser ("run" and "-c" honour them all)."""
    table = {command: parser.get_default("honoured") for command, parser in subcommands(_parser()).items()}
    table["-c"] = SHARED_OPTIONS
    return table


# The shared options the REPL honours: the rest concern one script's run (--timeout: Ctrl-C stops a
# running input, and `gradcli run -` runs piped input as a script).
REPL_OPTIONS = ("seed", "display", "format", "stable-ids", "color", "max-memory")

# Commands that live in modules of their own: each module has add_parser(subparsers, script_options)
# and run(args) -> exit status, and imports what it needs only inside run().
COMMAND_MODULES = {"graph": "gradcli.commands.graph",
                   "grad": "gradcli.commands.oneshot", "jacobian": "gradcli.commands.oneshot", "hessian": "gradcli.commands.oneshot",
                   "explain": "gradcli.diagnostics.explain", "help": "gradcli.commands.help", "completion": "gradcli.commands.help"}


_INVALID_CHOICE = re.compile(r"argument COMMAND: invalid choice: '(.*?)'")


class _Parser(argparse.ArgumentParser):
    """The top-level parser: an unknown command is answered with the command meant, in one line."""

    argv: list = []

    def parse_known_args(self, args=None, namespace=None):
        self.argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        m = _INVALID_CHOICE.match(message)
        if m is None:
            super().error(message)
        self.exit(EXIT_USAGE, unknown_command(m[1], self.argv, list(subcommands(self))) + "\n")


def subcommands(parser) -> dict:
    """{command: its parser} of the top-level parser."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def unknown_command(word: str, argv: list, commands: list) -> str:
    """What to say for `gradcli WORD` when WORD is not a command: a script given where the command
    goes is meant for `run`, a misspelt command for the nearest one."""
    import difflib
    import shlex
    if word.endswith(".grad") or os.path.isfile(word):
        at = argv.index(word) if word in argv else len(argv)
        meant = shlex.join(["gradcli", *argv[:at], "run", *argv[at:]])
        return f"gradcli: '{word}' is not a command; did you mean '{meant}'?"
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    if close:
        return f"gradcli: '{word}' is not a command; did you mean '{close[0]}'?"
    return f"gradcli: '{word}' is not a command (commands: {', '.join(commands)}; gradcli --help tells more)"


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="gradcli",
        description="Run PyTorch-style autograd scripts on gradcli's own engine; output matches PyTorch's.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"gradcli {__version__} (mirrors PyTorch {PYTORCH_VERSION})")
    p.add_argument("-c", metavar="CODE", dest="code", help="run CODE as a script")
    script_options(p, top=True)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run one or more .grad scripts ('-' reads standard input)",
                         epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("scripts", nargs="+", metavar="SCRIPT")
    script_options(run)
    repl = sub.add_parser("repl", help="the interactive REPL (also `gradcli` alone on a terminal)",
                          description="An interactive session on the same language and engine as `gradcli run`. "
                                      "Type %help in it for its commands.")
    repl.add_argument("--vi", action="store_true", help="Vi key bindings (Emacs bindings by default)")
    repl.add_argument("--auto-suggest", action="store_true",
                      help="suggest the rest of the line from history, fish-style (accept with Right)")
    repl.add_argument("--no-toolbar", action="store_true", help="hide the bottom toolbar of live tensors")
    script_options(repl, REPL_OPTIONS)
    for module in dict.fromkeys(COMMAND_MODULES.values()):    # a module may register several commands
        importlib.import_module(module).add_parser(sub, script_options)
    return p


def _decode(data: bytes, filename: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line = before.count(b"\n") + 1
        col = e.start - (before.rfind(b"\n") + 1) + 1
        raise ScriptSyntaxError(f"invalid UTF-8 byte 0x{data[e.start]:02x} (scripts must be UTF-8 text)",
                                filename, line, col) from None


def _read(path: str, timeout=None) -> tuple[str, str]:
    """A script's text and the name it is reported under: read in chunks, within --max-memory and
    (for standard input, which may never end) --timeout."""
    name = "<stdin>" if path == "-" else path
    try:
        fd = sys.stdin.fileno() if path == "-" else os.open(path, os.O_RDONLY)
        try:
            data = deadline.read_input(fd, name, timeout)
        finally:
            if path != "-":
                os.close(fd)
    except OSError as e:
        raise OSError(f"gradcli: cannot read '{name}': {e.strerror or e}") from None
    return _decode(data, name), name


def _report(err: ScriptError, why: str | None = None) -> None:
    sys.stdout.flush()
    text = err.render()
    sys.stderr.write((paint_error(text) if _Terminal.colour else text) + "\n")
    if why:
        from gradcli.diagnostics.why import why_line
        sys.stderr.write(why_line(why) + "\n")
    sys.stderr.flush()


def _diagnosis(session, source: str, filename: str, started: float):
    """The session's hook for a line saying why a warning happened, and a function giving the line
    for an error; both import gradcli.diagnostics.why only when called, so plain runs never load it."""
    def units():
        from gradcli.diagnostics.why import Unit
        return [Unit(source, filename)]

    def warning(line, col, category, message):
        from gradcli.language.compiler import NON_LEAF_GRAD_WARNING
        if message != NON_LEAF_GRAD_WARNING:        # the only warning with a note
            return None
        from gradcli.diagnostics.why import warning_note
        return warning_note(session, line, col, category, message, units(), time.perf_counter() - started)

    def error(err: ScriptError):
        if err.exit_status != EXIT_SCRIPT_ERROR:
            return None
        from gradcli.diagnostics.why import error_note
        return error_note(err, session, units(), time.perf_counter() - started)
    session.why = warning
    return error


def _timing_footer(seconds: float) -> None:
    """The footer of PyTorch's tutorial gallery, with this run's time."""
    minutes, rest = divmod(seconds, 60)
    sys.stdout.flush()
    sys.stderr.write(f"Total running time of the script: ( {int(minutes)} minutes {rest:.3f} seconds)\n")
    sys.stderr.flush()


def _events(fmt):
    """The event sink for --format jsonl, writing to stdout; None for text."""
    if fmt != "jsonl":
        return None
    from gradcli.diagnostics.jsonl import JsonLines
    return JsonLines(sys.stdout)


def _fail(err: ScriptError, fmt) -> None:
    """Report an error met before a script could run (unreadable file, invalid UTF-8): as text, or
    in jsonl as that script's error and end events."""
    events = _events(fmt)
    if events is None:
        _report(err)
        return
    events.error(err)
    events.end(False, time.perf_counter(), err.filename)


def run_text(source: str, filename: str, seed, display=None, fmt=None, stable_ids=False, check_grads=False,
             nan_check=False, timeout=None) -> int:
    """Run one script in a fresh session; report any error; return the exit status."""
    from gradcli.session import Session
    started = time.perf_counter()
    events = _events(fmt)
    try:
        session = Session(seed=seed, display=display, events=events, stable_ids=stable_ids)
    except (ValueError, RuntimeError) as e:      # a --seed that manual_seed refuses
        sys.stderr.write(f"gradcli: --seed {seed}: {e}\n")
        return EXIT_USAGE
    why = _diagnosis(session, source, filename, started)
    if timeout:
        from gradcli.language import parser
        parser.load()       # the grammar's tables (built afresh when the cache is cold): not the script's time
    timer = deadline.Deadline(timeout, filename).start()     # --timeout: TimedOut, status 124
    try:
        if nan_check:
            from gradcli.diagnostics.nancheck import run_watched
            run_watched(session, source, filename)
        else:
            session.run_source(source, filename)
    except ScriptError as e:
        if events is None:
            _report(e, why(e))
        else:
            e.why = why(e)
            events.error(e)
            events.end(False, started, filename)
        return e.exit_status
    except KeyboardInterrupt:
        if events is not None:
            events.error(ScriptError("KeyboardInterrupt", "", filename))
            events.end(False, started, filename)
        raise
    finally:
        timer.cancel()
        sys.stdout.flush()
        if _Terminal.timing:
            _timing_footer(time.perf_counter() - started)
    if events is not None:
        events.end(True, started, filename)
    if check_grads:
        return _check_grads(source, filename, session.initial_seed, timeout)
    return EXIT_OK


def _check_grads(source: str, filename: str, seed, timeout) -> int:
    """--check-grads, after the script has run: its replays get --timeout seconds of their own."""
    from gradcli.diagnostics.checks import check_script
    from gradcli.commands.progress import Progress
    try:
        with deadline.Deadline(timeout, filename), Progress(f"{filename}: --check-grads: replaying in float64") as progress:
            return check_script(source, filename, seed, out=progress, progress=progress)
    except deadline.TimedOut as e:
        e.message += ", while --check-grads replayed the script"
        _report(e)
        return e.exit_status


def run_repl(args) -> int:
    """The interactive REPL; imports prompt_toolkit, which nothing else on the command line needs."""
    from gradcli.repl.prompt import main as repl_main
    from gradcli.repl.shell import Options
    problem = refused(args, "repl", REPL_OPTIONS)
    if problem:
        sys.stderr.write(problem + "\n")
        return EXIT_USAGE
    colour = {"always": True, "never": False}.get(args.color)
    return repl_main(Options(vi=getattr(args, "vi", False), auto_suggest=getattr(args, "auto_suggest", False),
                             toolbar=not getattr(args, "no_toolbar", False), seed=args.seed, display=args.display,
                             format=args.format or "text", stable_ids=args.stable_ids, colour=colour))


def _runs_repl(args) -> bool:
    return args.code is None and (args.command == "repl" or (args.command is None and sys.stdin.isatty()))


def _supervise(args) -> None:
    """With --timeout, run the rest of the command in a worker process that a supervisor ends when it
    overstays (gradcli.supervisor); without, nothing is forked nor imported."""
    if not args.timeout or _runs_repl(args):
        return
    from gradcli import supervisor
    if supervisor.available():
        supervisor.supervise(args.timeout, _timed_name(args), args.format == "jsonl")


def _timed_name(args) -> str:
    """What a timeout names until the worker starts a script: the script given, or the command."""
    if args.code is not None:
        return "<string>"
    if args.command is None:
        return "<stdin>"
    name = (getattr(args, "scripts", None) or [getattr(args, "script", None)])[0]
    return "<stdin>" if name == "-" else name or f"gradcli {args.command}"


def run_command(args) -> int:
    """A command of its own module, under the options every command shares: a refusal (exit status 2)
    for one it does not honour, the --timeout deadline `run` uses, and the --timing footer."""
    problem = refused(args, args.command)
    if problem:
        sys.stderr.write(problem + "\n")
        return EXIT_USAGE
    module = importlib.import_module(COMMAND_MODULES[args.command])
    if args.timeout:
        # the session and the grammar's tables before the deadline starts: its timer would take the
        # import of gradcli.language.compiler, or a cold cache's table build, for the script running
        importlib.import_module("gradcli.session")
        from gradcli.language import parser
        parser.load()
    started = time.perf_counter()
    script = getattr(args, "script", None)
    subject = "<stdin>" if script == "-" else script or "<expr>"
    timer = deadline.Deadline(args.timeout, subject).start()
    try:
        return module.run(args)
    except deadline.ScriptTimeout as e:     # the timer landed outside a session's own handling (a parse)
        _report(deadline.timed_out(e, "", subject))
        return deadline.EXIT_TIMEOUT
    finally:
        timer.cancel()
        sys.stdout.flush()
        if _Terminal.timing:
            _timing_footer(time.perf_counter() - started)


def main(argv=None) -> int:
    """The `gradcli` command. Only the command itself (argv taken from sys.argv) may fork a supervisor
    for --timeout: a caller in the same process (a test, a program embedding gradcli) must not be
    forked and then ended by the supervisor's exit."""
    args = _parser().parse_args(argv)
    if argv is None:
        _supervise(args)
    _Terminal.colour = colour_wanted(sys.stderr, args.color or "auto")
    _Terminal.timing = args.timing
    options = dict(seed=args.seed, display=args.display, fmt=args.format, stable_ids=args.stable_ids,
                   check_grads=args.check_grads, nan_check=args.nan_check, timeout=args.timeout)
    memory = budget.limit_process(args.max_memory)      # the tensor budget, and RLIMIT_DATA as a backstop
    try:
        if args.code is not None:
            if args.command:
                sys.stderr.write("gradcli: give either -c CODE or a command, not both\n")
                return EXIT_USAGE
            return run_text(args.code, "<string>", **options)
        if args.command == "run":
            status = EXIT_OK
            for path in args.scripts:
                try:
                    source, name = _read(path, args.timeout)
                except OSError as e:
                    if args.format == "jsonl":
                        _fail(ScriptError("OSError", str(e).removeprefix("gradcli: "), path), args.format)
                    else:
                        sys.stderr.write(f"{e}\n")
                    status = status or EXIT_USAGE
                    continue
                except ScriptError as e:          # not UTF-8, or --timeout while reading standard input
                    _fail(e, args.format)
                    status = status or e.exit_status
                    continue
                result = run_text(source, name, **options)     # every script runs, whatever came before
                status = status or result
            return status
        if args.command in COMMAND_MODULES:
            return run_command(args)
        if args.command == "repl" or sys.stdin.isatty():
            return run_repl(args)
        try:
            source, name = _read("-", args.timeout)
        except OSError as e:
            sys.stderr.write(f"{e}\n")
            return EXIT_USAGE
        return run_text(source, name, **options)
    except KeyboardInterrupt:
        sys.stdout.flush()
        sys.stderr.write("KeyboardInterrupt\n")
        return EXIT_INTERRUPTED
    except ScriptError as e:              # before a script could run: not UTF-8, --timeout while reading
        _fail(e, args.format)
        return e.exit_status
    except BrokenPipeError:
        # the reader went away (`gradcli run s.grad | head`): stop quietly, as shell tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    finally:
        budget.restore_process(memory)


__all__ = ["main", "EXIT_OK", "EXIT_SCRIPT_ERROR", "EXIT_USAGE"]
