"""The command line: dispatch; its parser is gradcli.commands.parsing, the commands are gradcli.commands."""

from __future__ import annotations

import importlib
import os
import sys
import time
import types

from gradcli.engine import budget  # first, so numpy loads before the rest: about 10 ms less start-up, measured
from gradcli import PYTORCH_VERSION, __version__, deadline
from gradcli.commands import COMMAND_MODULES
from gradcli.commands.common import SHARED_OPTIONS, Terminal, fail, read_script, refused, report, timing_footer
from gradcli.commands.repl import REPL_OPTIONS, run_repl
from gradcli.commands.run import run_scripts, run_text
from gradcli.display.terminal import colour_wanted
from gradcli.errors import EXIT_OK, EXIT_USAGE, ScriptError

EXIT_INTERRUPTED = 130


def _parser(argv=None):
    """The command line's argparse parser (gradcli.commands.parsing), built when a command line needs it."""
    from gradcli.commands import parsing
    return parsing.parser(argv)


def _plain_run(words: list):
    """`gradcli run SCRIPT...` with no option, the command line nearly every run has: the namespace
    argparse would make of it, without importing or building the parser (several ms of start-up;
    tests/test_startup.py checks the two agree). None for any other command line."""
    if len(words) < 2 or words[0] != "run" or any(w[:1] == "-" for w in words[1:]):
        return None
    return types.SimpleNamespace(
        code=None, seed=None, display=None, color=None, timing=False, format=None, stable_ids=False,
        check_grads=False, nan_check=False, timeout=None, max_memory=None, command="run", scripts=words[1:],
        script_args=(), write=False, allow_errors=False, honoured=SHARED_OPTIONS, top_parser=None)


def _runs_repl(args) -> bool:
    return args.code is None and (args.command == "repl" or (args.command is None and sys.stdin.isatty()))


def _supervise(args) -> None:
    """With --timeout, run the rest of the command in a worker process that a supervisor ends when it
    overstays (gradcli.supervisor); without, nothing is forked nor imported."""
    if not args.timeout or _runs_repl(args) or getattr(args, "write", False):
        return          # (--write: the kernel that runs the notebook's cells has the --timeout, not this process)
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
        report(deadline.timed_out(e, "", subject))
        return deadline.EXIT_TIMEOUT
    finally:
        timer.cancel()
        sys.stdout.flush()
        if Terminal.timing:
            timing_footer(time.perf_counter() - started)


def main(argv=None) -> int:
    """The `gradcli` command. Only the command itself (argv taken from sys.argv) may fork a supervisor
    for --timeout: a caller in the same process (a test, a program embedding gradcli) must not be
    forked and then ended by the supervisor's exit."""
    words = sys.argv[1:] if argv is None else list(argv)
    args = _plain_run(words)
    if args is None:
        parser = _parser(words)
        args = parser.parse_args(words)
        if args.command == "run" and "--" in words and "run" in words[:words.index("--")]:
            at = words.index("--")      # `run SCRIPT... -- ARG...`: the scripts' arguments, as `python SCRIPT ARG...`
            args = parser.parse_args(words[:at])
            args.script_args = tuple(words[at + 1:])
        args.top_parser = parser        # for `gradcli help` and `completion`, which read the commands from it
    if argv is None:
        _supervise(args)
    Terminal.colour = colour_wanted(sys.stderr, args.color or "auto")
    Terminal.timing = args.timing
    options = dict(seed=args.seed, display=args.display, fmt=args.format, stable_ids=args.stable_ids,
                   check_grads=args.check_grads, nan_check=args.nan_check, timeout=args.timeout)
    budget_before = budget.max_memory()                 # put back after: a caller in this process keeps its own
    memory = budget.limit_process(args.max_memory)      # the tensor budget, and RLIMIT_DATA as a backstop
    try:
        if args.code is not None:
            if args.command:
                sys.stderr.write("gradcli: give either -c CODE or a command, not both\n")
                return EXIT_USAGE
            return run_text(args.code, "<string>", **options)
        if args.command == "run":
            return run_scripts(args, options)
        if args.command in COMMAND_MODULES:
            return run_command(args)
        if args.command == "repl" or sys.stdin.isatty():
            return run_repl(args)
        try:
            source, name = read_script("-", args.timeout)
        except OSError as e:
            sys.stderr.write(f"{e}\n")
            return EXIT_USAGE
        return run_text(source, name, **options)
    except KeyboardInterrupt:
        sys.stdout.flush()
        sys.stderr.write("KeyboardInterrupt\n")
        return EXIT_INTERRUPTED
    except ScriptError as e:              # before a script could run: not UTF-8, --timeout while reading
        fail(e, args.format)
        return e.exit_status
    except BrokenPipeError:
        # the reader went away (`gradcli run s.grad | head`): stop quietly, as shell tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    finally:
        budget.restore_process(memory)
        budget.set_max_memory(budget_before)


def command() -> None:
    """The `gradcli` command (the console script and `python -m gradcli`): main(), then the process ends
    once what it wrote is flushed, without Python's teardown of numpy's and gradcli's modules (15-20 ms
    of every run, measured). Nothing of gradcli runs at exit: no atexit handler, no temporary file, no
    buffered file left open."""
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:         # the reader went away after main() returned: as main() treats it
        pass
    except ValueError:              # a stream closed by the script's caller
        pass
    os._exit(status)


__all__ = ["main", "command"]
