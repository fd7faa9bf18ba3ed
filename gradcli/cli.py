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
  gradcli graph tutorial.grad out      draw the backward graph of `out` (also --format dot|json, -o FILE.svg)
  gradcli -c 'import torch; x = torch.ones(2, requires_grad=True); (x * x).sum().backward(); print(x.grad)'

exit status: 0 ok, 1 script error (runtime), 2 usage or syntax error, 130 interrupted
"""


DISPLAYS = ("modern", "legacy")
DISPLAY_HELP = "how tensors print: modern (default) or legacy (PyTorch 0.3's 'Variable containing:')"
COLOR_HELP = "colour error messages: auto (default: on a terminal, unless NO_COLOR is set), always or never"
TIMING_HELP = "after each script, print its running time on stderr, as the tutorial gallery's footer"
FORMATS = ("text", "jsonl")
FORMAT_HELP = "text (default), or jsonl: one JSON object per event on stdout (docs/jsonl.md)"


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
    p.add_argument("--format", choices=FORMATS, default=None, help=FORMAT_HELP)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run one or more .grad scripts ('-' reads standard input)",
                         epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("scripts", nargs="+", metavar="SCRIPT")
    run.add_argument("--seed", type=int, metavar="N", dest="run_seed",
                     help="as if each script began with torch.manual_seed(N)")
    run.add_argument("--display", choices=DISPLAYS, default=None, dest="run_display", help=DISPLAY_HELP)
    run.add_argument("--color", choices=COLOR_MODES, default=None, dest="run_color", help=COLOR_HELP)
    run.add_argument("--timing", action="store_true", dest="run_timing", help=TIMING_HELP)
    run.add_argument("--format", choices=FORMATS, default=None, dest="run_format", help=FORMAT_HELP)
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
    repl.add_argument("--format", choices=FORMATS, default=None, dest="repl_format", help=FORMAT_HELP)
    _add_graph_parser(sub)
    return p


GRAPH_FORMATS = ("text", "dot", "json")
# what -o FILE writes, by the file's extension: a text format, or a picture drawn by Graphviz's dot
GRAPH_FILES = {".txt": "text", ".dot": "dot", ".gv": "dot", ".json": "json",
               ".svg": "svg", ".png": "png", ".pdf": "pdf"}
INSTALL_GRAPHVIZ = "install Graphviz (apt install graphviz, dnf install graphviz or brew install graphviz)"


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more (0: no limit), not '{text}'")
    return value


def _add_graph_parser(sub) -> None:
    graph = sub.add_parser(
        "graph", help="run a script and draw the backward (grad_fn) graph of one of its tensors",
        description="Run SCRIPT (its own output is not shown), then draw the grad_fn graph behind the tensor "
                    "bound to NAME: each node with the script line and statement that made it. NAME defaults "
                    "to the last tensor the script assigned that has a grad_fn. See docs/graph.md.")
    graph.add_argument("script", metavar="SCRIPT", help="the .grad script ('-' reads standard input)")
    graph.add_argument("name", nargs="?", metavar="NAME", help="the tensor to draw (a name the script binds)")
    graph.add_argument("--format", choices=GRAPH_FORMATS, default=None, dest="graph_format",
                       help="text: a tree (the default); dot: Graphviz DOT; json: nodes and edges")
    graph.add_argument("-o", "--output", metavar="FILE", dest="graph_output",
                       help="write to FILE instead of stdout: .txt, .dot, .json, or a picture drawn with "
                            "Graphviz's dot program: .svg, .png, .pdf")
    graph.add_argument("--ascii", action="store_true", help="draw the tree with ASCII characters only")
    graph.add_argument("--max-depth", type=_limit, default=40, metavar="N",
                       help="draw at most N levels of nodes (default 40; 0: no limit)")
    graph.add_argument("--max-nodes", type=_limit, default=400, metavar="N",
                       help="draw at most N nodes (default 400; 0: no limit)")
    graph.add_argument("--seed", type=int, metavar="N", dest="graph_seed",
                       help="as if the script began with torch.manual_seed(N)")


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


def _events(fmt):
    """The event sink for --format jsonl, writing to stdout; None for text."""
    if fmt != "jsonl":
        return None
    from gradcli.jsonl import JsonLines
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


def run_text(source: str, filename: str, seed, display=None, fmt=None) -> int:
    """Run one script in a fresh session; report any error; return the exit status."""
    from gradcli.session import Session
    started = time.perf_counter()
    events = _events(fmt)
    try:
        session = Session(seed=seed, display=display, events=events)
    except (ValueError, RuntimeError) as e:      # a --seed that manual_seed refuses
        sys.stderr.write(f"gradcli: --seed {seed}: {e}\n")
        return EXIT_USAGE
    try:
        session.run_source(source, filename)
    except ScriptError as e:
        if events is None:
            _report(e)
        else:
            events.error(e)
            events.end(False, started, filename)
        return e.exit_status
    except KeyboardInterrupt:
        if events is not None:
            events.error(ScriptError("KeyboardInterrupt", "", filename))
            events.end(False, started, filename)
        raise
    finally:
        sys.stdout.flush()
        if _Terminal.timing:
            _timing_footer(time.perf_counter() - started)
    if events is not None:
        events.end(True, started, filename)
    return EXIT_OK


def run_repl(seed=None, vi=False, auto_suggest=False, toolbar=True, display=None, fmt=None) -> int:
    """The interactive REPL; imports prompt_toolkit, which nothing else on the command line needs."""
    from gradcli.repl.prompt import main as repl_main
    from gradcli.repl.shell import Options
    return repl_main(Options(vi=vi, auto_suggest=auto_suggest, toolbar=toolbar, seed=seed, display=display,
                             format=fmt or "text"))


def run_graph(args) -> int:
    """`gradcli graph`: run a script with provenance recording on, then draw one tensor's graph."""
    import shutil
    import subprocess
    from gradcli import graphview
    from gradcli.engine.tensor import Tensor
    from gradcli.session import Session

    def fail(message: str, status: int = EXIT_USAGE) -> int:
        sys.stderr.write(f"gradcli graph: {message}\n")
        return status

    fmt, output, picture = args.graph_format, args.graph_output, None
    if output is not None:
        kind = GRAPH_FILES.get(os.path.splitext(output)[1].lower())
        if kind is None:
            return fail(f"-o {output}: give a file ending in {', '.join(GRAPH_FILES)}")
        picture = kind if kind in ("svg", "png", "pdf") else None
        wanted = "dot" if picture else kind
        if fmt is not None and fmt != wanted:
            return fail(f"--format {fmt} does not match -o {output}")
        fmt = wanted
        if picture and shutil.which("dot") is None:
            return fail(f"drawing {output} needs Graphviz's dot program, which is not installed: "
                        f"{INSTALL_GRAPHVIZ}, or write DOT with -o {os.path.splitext(output)[0]}.dot")
    fmt = fmt or "text"
    try:
        source, filename = _read(args.script)
    except OSError as e:
        sys.stderr.write(f"{e}\n")
        return EXIT_USAGE
    seed = args.graph_seed if args.graph_seed is not None else args.seed
    with open(os.devnull, "w") as devnull:          # the script's own output is not shown
        try:
            session = Session(out=devnull, seed=seed, provenance=True)
        except (ValueError, RuntimeError) as e:
            return fail(f"--seed {seed}: {e}")
        session.provenance.main = filename
        try:
            session.run_source(source, filename)
        except ScriptError as e:
            _report(e)
            return e.exit_status
    namespace, provenance = session.globals, session.provenance
    name = args.name or provenance.default_name(namespace)
    drawable = [n for n, v in namespace.items() if v.__class__ is Tensor and v.requires_grad]
    hint = f" (tensors that require grad: {', '.join(drawable)})" if drawable else ""
    if name is None:
        return fail(f"{filename} assigns no tensor that has a grad_fn; name one: gradcli graph SCRIPT NAME{hint}")
    if name not in namespace:
        return fail(f"{filename} defines no name '{name}'{hint}")
    value = namespace[name]
    if value.__class__ is not Tensor:
        kind = {"ScriptModule": "a module", "ScriptFunction": "a function"}.get(
            type(value).__name__, f"a value of type {type(value).__name__}")
        return fail(f"'{name}' is not a tensor but {kind}{hint}")
    if not value.requires_grad:
        return fail(f"'{name}' does not require grad, so it has no backward graph{hint}")
    names = {id(value): name}
    if value.grad_fn is not None:
        names[id(value.grad_fn)] = name
    if fmt == "dot":
        text = graphview.to_dot(value, name, provenance, names, args.max_depth, args.max_nodes)
    elif fmt == "json":
        text = graphview.to_json(value, name, provenance, names, args.max_depth, args.max_nodes, filename)
    else:
        text = graphview.render(value, names, args.max_depth, args.max_nodes, args.ascii, provenance) + "\n"
    if picture:
        done = subprocess.run(["dot", f"-T{picture}", "-o", output], input=text, text=True,
                              capture_output=True)
        if done.returncode != 0:
            problem = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
            return fail(f"dot could not draw {output}: {problem}", EXIT_SCRIPT_ERROR)
    elif output is not None:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            return fail(f"cannot write '{output}': {e.strerror or e}")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return EXIT_OK


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    _Terminal.colour = colour_wanted(sys.stderr, getattr(args, "run_color", None) or args.color or "auto")
    _Terminal.timing = bool(getattr(args, "run_timing", False) or args.timing)
    try:
        if args.code is not None:
            if args.command:
                sys.stderr.write("gradcli: give either -c CODE or a command, not both\n")
                return EXIT_USAGE
            return run_text(args.code, "<string>", args.seed, args.display, args.format)
        if args.command == "run":
            seed = args.run_seed if args.run_seed is not None else args.seed
            display = args.run_display or args.display
            fmt = args.run_format or args.format
            status = EXIT_OK
            for path in args.scripts:
                try:
                    source, name = _read(path)
                except OSError as e:
                    if fmt == "jsonl":
                        _fail(ScriptError("OSError", str(e).removeprefix("gradcli: "), path), fmt)
                    else:
                        sys.stderr.write(f"{e}\n")
                    status = status or EXIT_USAGE
                    continue
                except ScriptSyntaxError as e:
                    _fail(e, fmt)
                    status = status or e.exit_status
                    continue
                result = run_text(source, name, seed, display, fmt)
                status = status or result
            return status
        if args.command == "graph":
            return run_graph(args)
        if args.command == "repl":
            seed = args.repl_seed if args.repl_seed is not None else args.seed
            return run_repl(seed, args.vi, args.auto_suggest, not args.no_toolbar, args.repl_display or args.display,
                            args.repl_format or args.format)
        if not sys.stdin.isatty():
            source, name = _read("-")
            return run_text(source, name, args.seed, args.display, args.format)
        return run_repl(args.seed, display=args.display, fmt=args.format)
    except KeyboardInterrupt:
        sys.stdout.flush()
        sys.stderr.write("KeyboardInterrupt\n")
        return EXIT_INTERRUPTED
    except ScriptSyntaxError as e:
        _fail(e, args.format)
        return e.exit_status
    except BrokenPipeError:
        # the reader went away (`gradcli run s.grad | head`): stop quietly, as shell tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


__all__ = ["main", "EXIT_OK", "EXIT_SCRIPT_ERROR", "EXIT_USAGE"]
