"""What every command shares: the shared options (and which command honours which), reading a script,
reporting an error, the --timing footer and the --format jsonl event sink."""

from __future__ import annotations

import os
import sys
import time

from gradcli import deadline
from gradcli.display.terminal import COLOR_MODES, paint_error
from gradcli.engine import budget
from gradcli.errors import ScriptError, ScriptSyntaxError

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
            import argparse     # (only a command line that needs argparse gets here: gradcli.cli._plain_run)
            raise argparse.ArgumentTypeError(str(e)) from None
    return convert


class Terminal:
    """How this process reports: set once from the command line."""
    colour = False
    timing = False


SHARED_OPTIONS = tuple(_HELP)
# {command: the shared options it honours}, filled by script_options as the command parsers are built
_HONOURED: dict = {}
# A value that is the option's default, given explicitly: every command accepts it (it changes nothing).
_NEUTRAL = {"format": "text", "display": "modern"}


def script_options(parser, names=SHARED_OPTIONS, top: bool = False, own=()) -> None:
    """Options shared by the ways of running scripts. They may come before the command or after it
    (`gradcli --seed 0 run s.grad`, `gradcli run --seed 0 s.grad`): a command's parser leaves an
    option it was not given unset, so the one given at the top level stands.
    A command honours `names`; it accepts the others too (hidden from its --help) so that
    `refused()` can say in one line that they do not apply, wherever they were given. `own` names
    shared options the command defines itself, with a meaning of its own (graph's --format)."""
    import argparse
    unset = {} if top else {"default": argparse.SUPPRESS}
    if not top:
        parser.set_defaults(honoured=tuple(names) + tuple(own))
        _HONOURED[parser.prog.split()[-1]] = tuple(names) + tuple(own)

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
        where = [c for c, names in honoured_by().items() if name in names and c != command]
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


def honoured_by() -> dict:
    """{command: the shared options it honours}, as the command parsers declared them ("-c" honours them all)."""
    return dict(_HONOURED, **{"-c": SHARED_OPTIONS})



def decode(data: bytes, filename: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line = before.count(b"\n") + 1
        col = e.start - (before.rfind(b"\n") + 1) + 1
        raise ScriptSyntaxError(f"invalid UTF-8 byte 0x{data[e.start]:02x} (scripts must be UTF-8 text)",
                                filename, line, col) from None


def read_script(path: str, timeout=None) -> tuple[str, str]:
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
    return decode(data, name), name


def report(err: ScriptError, why: str | None = None) -> None:
    sys.stdout.flush()
    sys.stderr.write(err.render(paint_error if Terminal.colour else None) + "\n")
    if why:
        from gradcli.diagnostics.why import why_line
        sys.stderr.write(why_line(why) + "\n")
    sys.stderr.flush()


def timing_footer(seconds: float) -> None:
    """The footer of PyTorch's tutorial gallery, with this run's time."""
    minutes, rest = divmod(seconds, 60)
    sys.stdout.flush()
    sys.stderr.write(f"Total running time of the script: ( {int(minutes)} minutes {rest:.3f} seconds)\n")
    sys.stderr.flush()


def events_for(fmt):
    """The event sink for --format jsonl, writing to stdout; None for text."""
    if fmt != "jsonl":
        return None
    from gradcli.diagnostics.jsonl import JsonLines
    return JsonLines(sys.stdout)


def fail(err: ScriptError, fmt) -> None:
    """Report an error met before a script could run (unreadable file, invalid UTF-8): as text, or
    in jsonl as that script's error and end events."""
    events = events_for(fmt)
    if events is None:
        report(err)
        return
    events.error(err)
    events.end(False, time.perf_counter(), err.filename)


def subcommands(parser) -> dict:
    """{command: its parser} of the top-level parser."""
    import argparse
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
