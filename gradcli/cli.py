"""The command line: `gradcli run`, `gradcli -c`, `gradcli repl`, options, and turning errors into text and exit codes."""

from __future__ import annotations

import argparse
import os
import sys
import time

from gradcli import __version__
from gradcli.terminal import COLOR_MODES, colour_wanted, paint_error
from gradcli.errors import EXIT_OK, EXIT_SCRIPT_ERROR, EXIT_USAGE, ScriptError, ScriptSyntaxError

EXIT_INTERRUPTED = 130

EPILOG = """\
examples:
  gradcli                              open the interactive REPL (on a terminal; otherwise run stdin)
  gradcli run tutorial.grad            run a script, print what PyTorch would print
  gradcli run --seed 0 a.grad b.grad   run scripts in turn, each in a fresh namespace
  cat s.grad | gradcli run -           read the script from standard input
  gradcli -c 'import torch; x = torch.ones(2, requires_grad=True); (x * x).sum().backward(); print(x.grad)'

exit status: 0 ok, 1 script error (runtime), 2 usage or syntax error, 130 interrupted
"""


DISPLAYS = ("modern", "legacy")
DISPLAY_HELP = "how tensors print: modern (default) or legacy (PyTorch 0.3's 'Variable containing:')"
COLOR_HELP = "colour error messages: auto (default: on a terminal, unless NO_COLOR is set), always or never"
TIMING_HELP = "after each script, print its running time on stderr, as the tutorial gallery's footer"


class _Terminal:
    """How this process reports: set once from the command line."""
    colour = False
    timing = False


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gradcli",
        description="Run PyTorch-style autograd scripts on gradcli's own engine; output matches PyTorch's.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"gradcli {__version__}")
    p.add_argument("-c", metavar="CODE", dest="code", help="run CODE as a script")
    p.add_argument("--seed", type=int, metavar="N", help="as if the script began with torch.manual_seed(N)")
    p.add_argument("--display", choices=DISPLAYS, default=None, help=DISPLAY_HELP)
    p.add_argument("--color", choices=COLOR_MODES, default=None, help=COLOR_HELP)
    p.add_argument("--timing", action="store_true", help=TIMING_HELP)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run one or more .grad scripts ('-' reads standard input)",
                         epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("scripts", nargs="+", metavar="SCRIPT")
    run.add_argument("--seed", type=int, metavar="N", dest="run_seed",
                     help="as if each script began with torch.manual_seed(N)")
    run.add_argument("--display", choices=DISPLAYS, default=None, dest="run_display", help=DISPLAY_HELP)
    run.add_argument("--color", choices=COLOR_MODES, default=None, dest="run_color", help=COLOR_HELP)
    run.add_argument("--timing", action="store_true", dest="run_timing", help=TIMING_HELP)
    repl = sub.add_parser("repl", help="the interactive REPL (also `gradcli` alone on a terminal)",
                          description="An interactive session on the same language and engine as `gradcli run`. "
                                      "Type %help in it for its commands.")
    repl.add_argument("--vi", action="store_true", help="Vi key bindings (Emacs bindings by default)")
    repl.add_argument("--auto-suggest", action="store_true",
                      help="suggest the rest of the line from history, fish-style (accept with Right)")
    repl.add_argument("--no-toolbar", action="store_true", help="hide the bottom toolbar of live tensors")
    repl.add_argument("--seed", type=int, metavar="N", dest="repl_seed",
                      help="start as if with torch.manual_seed(N)")
    repl.add_argument("--display", choices=DISPLAYS, default=None, dest="repl_display", help=DISPLAY_HELP)
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


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return _decode(sys.stdin.buffer.read(), "<stdin>"), "<stdin>"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise OSError(f"gradcli: cannot read '{path}': {e.strerror or e}") from None
    return _decode(data, path), path


def _report(err: ScriptError) -> None:
    sys.stdout.flush()
    text = err.render()
    sys.stderr.write((paint_error(text) if _Terminal.colour else text) + "\n")
    sys.stderr.flush()


def _timing_footer(seconds: float) -> None:
    """The footer of PyTorch's tutorial gallery, with this run's time."""
    minutes, rest = divmod(seconds, 60)
    sys.stdout.flush()
    sys.stderr.write(f"Total running time of the script: ( {int(minutes)} minutes {rest:.3f} seconds)\n")
    sys.stderr.flush()


def run_text(source: str, filename: str, seed, display=None) -> int:
    """Run one script in a fresh session; report any error; return the exit status."""
    from gradcli.session import Session
    started = time.perf_counter()
    try:
        session = Session(seed=seed, display=display)
    except (ValueError, RuntimeError) as e:      # a --seed that manual_seed refuses
        sys.stderr.write(f"gradcli: --seed {seed}: {e}\n")
        return EXIT_USAGE
    try:
        session.run_source(source, filename)
    except ScriptError as e:
        _report(e)
        return e.exit_status
    finally:
        sys.stdout.flush()
        if _Terminal.timing:
            _timing_footer(time.perf_counter() - started)
    return EXIT_OK


def run_repl(seed=None, vi=False, auto_suggest=False, toolbar=True, display=None) -> int:
    """The interactive REPL; imports prompt_toolkit, which nothing else on the command line needs."""
    from gradcli.repl.prompt import main as repl_main
    from gradcli.repl.shell import Options
    return repl_main(Options(vi=vi, auto_suggest=auto_suggest, toolbar=toolbar, seed=seed, display=display))


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    _Terminal.colour = colour_wanted(sys.stderr, getattr(args, "run_color", None) or args.color or "auto")
    _Terminal.timing = bool(getattr(args, "run_timing", False) or args.timing)
    try:
        if args.code is not None:
            if args.command:
                sys.stderr.write("gradcli: give either -c CODE or a command, not both\n")
                return EXIT_USAGE
            return run_text(args.code, "<string>", args.seed, args.display)
        if args.command == "run":
            seed = args.run_seed if args.run_seed is not None else args.seed
            display = args.run_display or args.display
            status = EXIT_OK
            for path in args.scripts:
                try:
                    source, name = _read(path)
                except OSError as e:
                    sys.stderr.write(f"{e}\n")
                    status = status or EXIT_USAGE
                    continue
                except ScriptSyntaxError as e:
                    _report(e)
                    status = status or e.exit_status
                    continue
                result = run_text(source, name, seed, display)
                status = status or result
            return status
        if args.command == "repl":
            seed = args.repl_seed if args.repl_seed is not None else args.seed
            return run_repl(seed, args.vi, args.auto_suggest, not args.no_toolbar, args.repl_display or args.display)
        if not sys.stdin.isatty():
            source, name = _read("-")
            return run_text(source, name, args.seed, args.display)
        return run_repl(args.seed, display=args.display)
    except KeyboardInterrupt:
        sys.stdout.flush()
        sys.stderr.write("KeyboardInterrupt\n")
        return EXIT_INTERRUPTED
    except ScriptSyntaxError as e:
        _report(e)
        return e.exit_status
    except BrokenPipeError:
        # the reader went away (`gradcli run s.grad | head`): stop quietly, as shell tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


__all__ = ["main", "EXIT_OK", "EXIT_SCRIPT_ERROR", "EXIT_USAGE"]
