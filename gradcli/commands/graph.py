"""`gradcli graph SCRIPT [NAME]`: run a script with provenance recording on, then draw one tensor's graph."""

from __future__ import annotations

import argparse
import os
import sys

from gradcli.commands.common import read_script, refusal, report
from gradcli.errors import EXIT_OK, EXIT_SCRIPT_ERROR, EXIT_USAGE, ScriptError

GRAPH_FORMATS = ("text", "dot", "json")
# what -o FILE writes, by the file's extension: a text format, or a picture drawn by Graphviz's dot
GRAPH_FILES = {".txt": "text", ".dot": "dot", ".gv": "dot", ".json": "json",
               ".svg": "svg", ".png": "png", ".pdf": "pdf"}
# the shared options (gradcli.commands.common.script_options) graph honours; it refuses the others
GRAPH_OPTIONS = ("seed", "color", "timing", "nan-check", "timeout", "max-memory")
INSTALL_GRAPHVIZ = "install Graphviz (apt install graphviz, dnf install graphviz or brew install graphviz)"


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more (0: no limit), not '{text}'")
    return value


def add_parser(sub, script_options) -> None:
    graph = sub.add_parser(
        "graph", help="run a script and draw the backward (grad_fn) graph of one of its tensors",
        description="Run SCRIPT (its own output is not shown), then draw the grad_fn graph behind the tensor "
                    "bound to NAME: each node with the script line and statement that made it. NAME defaults "
                    "to the last tensor the script assigned that has a grad_fn. See docs/graph.md.")
    graph.add_argument("script", metavar="SCRIPT", help="the .grad script ('-' reads standard input)")
    graph.add_argument("name", nargs="?", metavar="NAME", help="the tensor to draw (a name the script binds)")
    # jsonl is accepted only to be refused in one line (the shared --format jsonl does not apply here)
    graph.add_argument("--format", choices=GRAPH_FORMATS + ("jsonl",), default=None, dest="graph_format",
                       metavar="{text,dot,json}",
                       help="text: a tree (the default); dot: Graphviz DOT; json: nodes and edges")
    graph.add_argument("-o", "--output", metavar="FILE", dest="graph_output",
                       help="write to FILE instead of stdout: .txt, .dot, .json, or a picture drawn with "
                            "Graphviz's dot program: .svg, .png, .pdf")
    graph.add_argument("--ascii", action="store_true", help="draw the tree with ASCII characters only")
    graph.add_argument("--max-depth", type=_limit, default=40, metavar="N",
                       help="draw at most N levels of nodes (default 40; 0: no limit)")
    graph.add_argument("--max-nodes", type=_limit, default=400, metavar="N",
                       help="draw at most N nodes (default 400; 0: no limit)")
    script_options(graph, GRAPH_OPTIONS, own=("format",))


def run(args) -> int:
    """`gradcli graph`: run a script with provenance recording on, then draw one tensor's graph."""
    import shutil
    import subprocess
    from gradcli.diagnostics import graphview
    from gradcli.engine.tensor import Tensor
    from gradcli.commands.progress import Progress
    from gradcli.session import Session

    progress = Progress("gradcli graph: running the script")

    def fail(message: str, status: int = EXIT_USAGE) -> int:
        progress.finish()
        sys.stderr.write(f"gradcli graph: {message}\n")
        return status

    # --format given before the command is the shared option: text is graph's text, jsonl is refused
    fmt, output, picture = args.graph_format or args.format, args.graph_output, None
    if fmt == "jsonl":
        sys.stderr.write(refusal("--format jsonl", "graph", "its formats are text, dot and json") + "\n")
        return EXIT_USAGE
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
        source, filename = read_script(args.script)
    except OSError as e:
        sys.stderr.write(f"{e}\n")
        return EXIT_USAGE
    seed = args.seed
    progress.what = f"gradcli graph: running {filename}"
    with open(os.devnull, "w") as devnull, progress:     # the script's own output is not shown
        try:
            session = Session(out=devnull, err=progress, seed=seed, provenance=True)
        except (ValueError, RuntimeError) as e:
            return fail(f"--seed {seed}: {e}")
        session.provenance.main = filename
        try:
            if args.nan_check:
                from gradcli.diagnostics.nancheck import run_watched
                run_watched(session, source, filename)
            else:
                session.run_source(source, filename)
        except ScriptError as e:
            if e.exit_status:           # (sys.exit(0): the script ended, and its graph is drawn)
                progress.finish()
                if e.kind != "SystemExit" or e.text:
                    report(e) if e.kind != "SystemExit" else sys.stderr.write(e.text + "\n")
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
        kind = {"module": "a module", "function": "a function"}.get(
            type(value).__name__, f"a value of type {type(value).__name__}")
        return fail(f"'{name}' is not a tensor but {kind}{hint}")
    if not value.requires_grad:
        return fail(f"'{name}' does not require grad, so it has no backward graph{hint}")
    names = {id(value): name}
    if value.grad_fn is not None:
        names[id(value.grad_fn)] = name
    with Progress(f"gradcli graph: drawing {name}"):
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


