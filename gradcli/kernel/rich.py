"""What the kernel shows beyond text: MIME bundles for values and for %graph (SVG when Graphviz's dot exists)."""

from __future__ import annotations

import shutil
import subprocess

from gradcli.diagnostics import graphview
from gradcli.kernel.pretty import pretty

# A picture of more nodes than this is unreadable inline; the text tree says where it stopped.
MAX_PICTURE_NODES = 400
DOT_SECONDS = 20


def value_bundle(value) -> dict:
    """A last expression's value as PyTorch's own kernel shows it: IPython's text (gradcli.kernel.pretty).
    Tensors stay text, exactly as PyTorch prints them."""
    return {"text/plain": pretty(value)}


def graph_bundle(value, name: str, names: dict, depth: int, ascii_: bool, provenance) -> dict:
    """%graph NAME: the text tree always (the REPL's), and an SVG drawing when dot is installed."""
    bundle = {"text/plain": graphview.render(value, names, max_depth=depth, ascii=ascii_, provenance=provenance)}
    svg = draw_svg(graphview.to_dot(value, name, provenance, names, depth, MAX_PICTURE_NODES))
    if svg is not None:
        bundle["image/svg+xml"] = svg
    return bundle


def draw_svg(dot_source: str) -> str | None:
    """The SVG Graphviz draws for a DOT text, or None without Graphviz (or when it fails)."""
    program = shutil.which("dot")
    if program is None:
        return None
    try:
        done = subprocess.run([program, "-Tsvg"], input=dot_source, text=True, capture_output=True,
                              timeout=DOT_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 and "<svg" in done.stdout else None
