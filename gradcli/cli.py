"""The command line: argparse and dispatch. The commands themselves live in gradcli.commands."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import time

from gradcli.engine import budget  # first, so numpy loads before the rest: about 10 ms less start-up, measured
from gradcli import PYTORCH_VERSION, __version__, deadline
from gradcli.commands.common import (Terminal, fail, read_script, refused, report, script_options, subcommands,
                                     timing_footer)
from gradcli.commands.repl import REPL_OPTIONS, run_repl
from gradcli.commands.run import run_scripts, run_text
from gradcli.display.terminal import colour_wanted
from gradcli.errors import EXIT_OK, EXIT_USAGE, ScriptError

EXIT_INTERRUPTED = 130

EPILOG = """\
examples:
  gradcli                              open the interactive REPL (on a terminal; otherwise run stdin)
  gradcli run tutorial.grad            run a script, print what PyTorch would print
  gradcli run --seed 0 a.grad b.grad   run scripts in turn, each in a fresh namespace
  gradcli run lesson.ipynb             run a notebook's code cells (--write saves the outputs into it)
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


# Commands that live in modules of their own: each module has add_parser(subparsers, script_options)
# and run(args) -> exit status, and imports what it needs only inside run().
COMMAND_MODULES = {"graph": "gradcli.commands.graph",
                   "grad": "gradcli.commands.oneshot", "jacobian": "gradcli.commands.oneshot", "hessian": "gradcli.commands.oneshot",
                   "explain": "gradcli.commands.explain", "help": "gradcli.commands.help", "completion": "gradcli.commands.help",
                   "kernel": "gradcli.commands.kernel"}


_INVALID_CHOICE = re.compile(r"argument COMMAND: invalid choice: '(.*?)'")


class _Parser(argparse.ArgumentParser):
    """The top-level parser: an unknown command is answered with the command meant, in one line."""

    argv: list = []

    def parse_known_args(self, args=None, namespace=None):
        self.argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def _get_formatter(self):
        # argparse asks shutil for the terminal's width each time it formats (and it formats every
        # argument as it is added), and shutil brings bz2, lzma and zlib: 2 ms of start-up
        return self.formatter_class(prog=self.prog, width=_columns() - 2)

    def error(self, message):
        m = _INVALID_CHOICE.match(message)
        if m is None:
            super().error(message)
        self.exit(EXIT_USAGE, unknown_command(m[1], self.argv, list(subcommands(self))) + "\n")


_TERMINAL_COLUMNS: list = []        # the terminal's width, asked once (argparse asks at every argument)


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size gives it: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        if not _TERMINAL_COLUMNS:
            try:
                _TERMINAL_COLUMNS.append(os.get_terminal_size(sys.__stdout__.fileno()).columns)
            except (AttributeError, ValueError, OSError):
                _TERMINAL_COLUMNS.append(0)
        columns = _TERMINAL_COLUMNS[0]
    return columns or 80


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


class _Unbuilt:
    """A command's parser that this run does not need: it takes the arguments a command module declares
    and keeps none of them (argparse's checks and help formatting of ~150 arguments cost 5 ms of every
    start-up). The command is still listed, with its help line, and `script_options` still records what
    it honours (refusal messages name every command)."""

    def __init__(self, name: str):
        self.prog = f"gradcli {name}"

    def add_argument(self, *args, **kwargs):
        return None

    def set_defaults(self, **kwargs):
        return None

    def add_mutually_exclusive_group(self, **kwargs):
        return self

    add_argument_group = add_mutually_exclusive_group


class _Commands:
    """The subparsers action as command modules see it: a command named on the command line (or every
    one, for `help` and `completion`, which read them all) gets its real parser; the others a stub."""

    def __init__(self, sub, wanted):
        self.sub = sub
        self.wanted = wanted

    def add_parser(self, name: str, **kwargs):
        if self.wanted is None or name in self.wanted:
            return self.sub.add_parser(name, **kwargs)
        # listed (its line of --help, a valid choice) without an ArgumentParser: making one costs 0.3 ms
        # (argparse's gettext looks for message catalogues three times per parser)
        unbuilt = _Unbuilt(name)
        self.sub._name_parser_map[name] = unbuilt
        self.sub._choices_actions.append(argparse._SubParsersAction._ChoicesPseudoAction(name, (), kwargs.get("help")))
        return unbuilt


_EVERY_PARSER = ("help", "completion")        # commands that read every command's parser


def _parser(argv=None) -> argparse.ArgumentParser:
    """The command line's parser. Only the commands named in `argv` (the words of the command line) get
    their arguments; without `argv`, every command does."""
    wanted = None
    if argv is not None:
        wanted = set(argv)
        if wanted.intersection(_EVERY_PARSER):
            wanted = None
    p = _Parser(
        prog="gradcli",
        description="Run PyTorch-style autograd scripts on gradcli's own engine; output matches PyTorch's.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"gradcli {__version__} (mirrors PyTorch {PYTORCH_VERSION})")
    p.add_argument("-c", metavar="CODE", dest="code", help="run CODE as a script")
    script_options(p, top=True)
    sub = _Commands(p.add_subparsers(dest="command", metavar="COMMAND"), wanted)
    run = sub.add_parser("run", help="run one or more .grad scripts ('-' reads standard input)",
                         epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("scripts", nargs="+", metavar="SCRIPT")
    run.add_argument("--write", action="store_true",
                     help="for notebooks (.ipynb): execute them on the gradcli kernel with nbclient and save the "
                          "outputs into them (needs gradcli[jupyter]; docs/notebooks.md)")
    run.add_argument("--allow-errors", action="store_true",
                     help="for notebooks: run the cells after a failing one too (nbclient's allow_errors)")
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
    parser = _parser(words)
    args = parser.parse_args(words)
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
