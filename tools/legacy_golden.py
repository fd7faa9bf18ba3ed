#!/usr/bin/env python3
"""Write (or check) the legacy-display golden of an example from the text of a PyTorch 0.3 notebook.

The notebook text (one of the project's seeds) is a notebook saved as plain text: markdown, then for each code cell an
``In [N]:`` line, the cell's code, a blank line, and what the cell printed, followed by two blank lines. The printed
text of every cell, in order, is the expected ``gradcli run --display legacy`` output of the example script, which
must hold the same code as the notebook's cells (comments and blank lines aside; this is checked).

Written file: ``tests/examples/NAME.legacy.out``, the concatenated outputs, byte for byte as in the notebook.

Usage::

    python tools/legacy_golden.py                  # examples/variable_notebook.grad from seed 001
    python tools/legacy_golden.py --check          # compare with the stored golden, exit 1 on a difference
    python tools/legacy_golden.py --seed PATH --example examples/NAME.grad

Standard library only; tests/test_display_legacy.py imports ``notebook_cells`` from here.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SEED = REPO_ROOT.parent / "shared" / "seeds" / "001_f872a66c1752ac43.txt"
DEFAULT_EXAMPLE = REPO_ROOT / "examples" / "variable_notebook.grad"

CELL_HEADER = re.compile(r"^In \[\d*\]:[ \t]*$", re.MULTILINE)
# The end of a cell's output: two or more empty lines (the separator the notebook text puts after every output).
OUTPUT_END = re.compile(r"\n\n\n+")


def _is_code(paragraph: str) -> bool:
    """A paragraph is code when it parses as Python and is more than one bare literal (an output such as `None`
    or `27` parses too)."""
    try:
        tree = ast.parse(paragraph)
    except SyntaxError:
        return False
    return not (len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr)
                and isinstance(tree.body[0].value, ast.Constant))


def notebook_cells(text: str) -> list[tuple[str, str]]:
    """(code, printed output) of every code cell, in order.

    A cell's code is its leading run of blank-line-separated paragraphs that are code; its output starts after the
    blank line that follows and runs to the first pair of empty lines, which the notebook text adds after every
    output (the output's own final newline is kept).
    """
    headers = list(CELL_HEADER.finditer(text))
    cells = []
    for k, header in enumerate(headers):
        end = headers[k + 1].start() if k + 1 < len(headers) else len(text)
        body = text[header.end() + 1:end]
        paragraphs = body.split("\n\n")
        n_code = 0
        while n_code < len(paragraphs) and paragraphs[n_code].strip() and _is_code(paragraphs[n_code]):
            n_code += 1
        code = "\n\n".join(paragraphs[:n_code]).strip("\n") + "\n"
        rest = "\n\n".join(paragraphs[n_code:])
        stop = OUTPUT_END.search(rest)
        output = rest[:stop.end() - 2] if stop else rest.rstrip("\n") + "\n" if rest.strip() else ""
        cells.append((code, output))
    return cells


def _statements(code: str) -> list[str]:
    """Code lines without comments and blank lines, for comparing two copies of the same script."""
    lines = (line.split("#", 1)[0].rstrip() for line in code.splitlines())
    return [line for line in lines if line]


def golden_text(seed_text: str, example_code: str) -> str:
    cells = notebook_cells(seed_text)
    seed_code = "".join(code for code, _ in cells)
    if _statements(seed_code) != _statements(example_code):
        raise ValueError("the example's code differs from the notebook's code cells")
    return "".join(output for _, output in cells)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Write the legacy-display golden of an example from a 0.3 notebook text.")
    p.add_argument("--seed", type=Path, default=DEFAULT_SEED, help="the notebook text (default: shared seed 001)")
    p.add_argument("--example", type=Path, default=DEFAULT_EXAMPLE, help="the example script with the same code")
    p.add_argument("--check", action="store_true", help="compare with the stored golden instead of writing")
    args = p.parse_args(argv)

    try:
        expected = golden_text(args.seed.read_text(encoding="utf-8"), args.example.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"legacy_golden: {e}", file=sys.stderr)
        return 2
    target = REPO_ROOT / "tests" / "examples" / (args.example.stem + ".legacy.out")
    if args.check:
        same = target.exists() and target.read_text(encoding="utf-8") == expected
        print(f"legacy_golden: {target.name} {'unchanged' if same else 'differs'}")
        return 0 if same else 1
    target.write_text(expected, encoding="utf-8")
    print(f"legacy_golden: wrote {target.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
