"""The interactive loop: a prompt_toolkit prompt in front of a Shell.

The loop's one rule is ptpython's: nothing that happens in it ends the session except Ctrl-D on
an empty line (or %exit). Ctrl-C while typing drops the line and shows KeyboardInterrupt, as
Python's REPL does; Ctrl-C while input runs is turned into `KeyboardInterrupt` by the Shell; the
prompt's own helpers (completion, colouring, toolbar) swallow their errors.

On a dumb terminal (TERM=dumb) there is no prompt_toolkit editing at all: the prompts are written
as text and lines are read as the terminal's own line discipline delivers them (Shell.run_lines).
"""

from __future__ import annotations

import os
import sys

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.enums import EditingMode
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style

from gradcli import __version__
from gradcli.errors import EXIT_USAGE
from gradcli.repl import highlight
from gradcli.repl.completion import make_completer
from gradcli.repl.history import open_history
from gradcli.repl.keys import key_bindings
from gradcli.repl.shell import Shell
from gradcli.display.terminal import dumb_terminal

PROMPT = ">>> "
CONTINUATION = "... "


def banner() -> str:
    return (f"gradcli {__version__}: PyTorch-style autograd on gradcli's engine. "
            "%help lists the commands, Ctrl-D exits.")


def make_prompt(shell: Shell, input=None, output=None, history=None) -> PromptSession:
    options = shell.options
    if history is None:
        history = open_history(shell.err)
    return PromptSession(
        message=[("class:prompt", PROMPT)],
        prompt_continuation=lambda width, line_number, wrap_count: [("class:prompt.continuation",
                                                                     CONTINUATION.rjust(width))],
        multiline=True,
        key_bindings=key_bindings(),
        lexer=highlight.make_lexer(),
        completer=make_completer(shell),
        complete_while_typing=True,
        auto_suggest=AutoSuggestFromHistory() if options.auto_suggest else None,
        history=history,
        editing_mode=EditingMode.VI if options.vi else EditingMode.EMACS,
        style=Style.from_dict(highlight.STYLES),
        include_default_pygments_style=False,
        color_depth=_colour_depth(shell),
        search_ignore_case=True,
        enable_open_in_editor=False,
        tempfile_suffix=".grad",
        input=input,
        output=output,
    )


def _colour_depth(shell: Shell):
    if not shell.colour:
        return ColorDepth.MONOCHROME
    # prompt_toolkit reads NO_COLOR itself: an explicit --color always must still colour
    return ColorDepth.DEPTH_8_BIT if os.environ.get("NO_COLOR") else None


def run(shell: Shell, input=None, output=None, history=None) -> int:
    """Read, run and show until Ctrl-D; returns the exit status (0)."""
    prompt = make_prompt(shell, input, output, history)
    shell.err.write(banner() + "\n")
    shell.err.flush()

    def bottom_toolbar():
        return shell.toolbar_text

    while True:
        # set on the session, not passed to prompt(): there None means "as before", so a toolbar
        # once shown could never be hidden
        prompt.bottom_toolbar = bottom_toolbar if shell.toolbar else None
        try:
            text = prompt.prompt()
        except KeyboardInterrupt:                     # Ctrl-C while typing: a fresh, empty line
            shell.interrupted()
            continue
        except EOFError:
            return 0
        try:
            if not shell.execute(text):
                return shell.exit_status or 0
        except KeyboardInterrupt:                     # between the run and the next prompt
            shell.interrupted()
        except BrokenPipeError:
            return 0


def main(options) -> int:
    """`gradcli repl`: interactive on a terminal, plain line reading otherwise."""
    try:
        shell = Shell(options)
    except (ValueError, RuntimeError) as e:      # a --seed that manual_seed refuses
        sys.stderr.write(f"gradcli: --seed {options.seed}: {e}\n")
        return EXIT_USAGE
    if not sys.stdin.isatty():
        return shell.run_lines(sys.stdin)
    if dumb_terminal():
        shell.err.write(banner() + "\n")
        return shell.run_lines(sys.stdin, prompts=(PROMPT, CONTINUATION))
    return run(shell)
