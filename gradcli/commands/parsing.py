"""The command line's argparse parser: the top level, `run`, `repl`, and each command module's own
(COMMAND_MODULES). Imported only when a command line is not a plain `gradcli run SCRIPT...`
(gradcli.cli._plain_run)."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from gradcli import PYTORCH_VERSION, __version__
from gradcli.commands import COMMAND_MODULES
from gradcli.commands.common import script_options, subcommands
from gradcli.commands.repl import REPL_OPTIONS
from gradcli.errors import EXIT_USAGE

EPILOG = """\
examples:
  gradcli                              open the interactive REPL (on a terminal; otherwise run stdin)
  gradcli run tutorial.grad            run a script, print what PyTorch would print
  gradcli run --seed 0 a.grad b.grad   run scripts in turn, each in a fresh namespace
  gradcli run train.grad -- --lr 0.5   give the script arguments: its sys.argv, as `python train.grad --lr 0.5`
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


def parser(argv=None) -> argparse.ArgumentParser:
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
    run.set_defaults(script_args=())        # (the words after `--`: gradcli.cli.main)
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
