#!/usr/bin/env python3
"""Regenerate (or check) the expected outputs of gradcli's notebooks from PyTorch's own kernel, and write the
notebook version of the 0.3-era Variable tutorial.

Each notebook in NOTEBOOKS runs with nbclient on ipykernel in an oracle Python that has PyTorch 2.13, as a
notebook user runs it: cells in order, stopping at the first error unless the cell is tagged
``raises-exception``. A notebook with a seed runs as if it began with ``torch.manual_seed(SEED)`` (an
``exec_lines`` of the kernel that defines no name), as gradcli's kernel does with ``--seed SEED``.

Written files: ``tests/notebooks/NAME.outputs.json``, the outputs of every code cell, normalised by
``normalise`` (which tests/test_notebooks.py uses on gradcli's outputs too):

* consecutive stream outputs of the same stream are one (where ipykernel splits a stream is timing);
* every ``0x[0-9a-f]+`` address is ``0xADDR``;
* an error is its name and value only (PyTorch's kernel shows an IPython traceback, gradcli its own report);
* a warning's file name (ipykernel's ``/tmp/ipykernel_N/M.py``, gradcli's ``<cell N>``) is ``<cell>``,
  gradcli's ``why:`` line under it is left out, and so is PyTorch's ``(Triggered internally at PATH:LINE.)``,
  the place in PyTorch's build that raised it (gradcli's .grad-of-a-non-leaf warning does not give it).

``examples/variable_notebook.ipynb`` is written from the notebook text of shared seed 001 (its code cells
unchanged; tools/legacy_golden.py reads the same text), and ``examples/variable_tutorial.ipynb`` from
``examples/variable_tutorial.grad``, one cell per paragraph.

Usage::

    python tools/notebook_goldens.py                 # write the example notebooks and every golden
    python tools/notebook_goldens.py --check         # compare with the stored files, exit 1 on a difference
    python tools/notebook_goldens.py --python /work/oracle/bin/python

Oracle interpreter: as tools/regen_goldens.py chooses it; it also needs ``pip install ipykernel nbclient
nbformat``. Standard library only, apart from the oracle's own run (``--execute``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
GOLDENS = REPO_ROOT / "tests" / "notebooks"
# (notebook, seed): the notebooks whose outputs are compared with PyTorch's
NOTEBOOKS = (("examples/variable_notebook.ipynb", None), ("examples/variable_tutorial.ipynb", 0),
             ("tests/notebooks/kernel_cells.ipynb", None))
SEED_TEXT = REPO_ROOT.parent / "shared" / "seeds" / "001_f872a66c1752ac43.txt"
TUTORIAL = REPO_ROOT / "examples" / "variable_tutorial.grad"

ADDR = re.compile(r"0x[0-9a-f]+")
# "FILE:LINE: CategoryWarning: " at the start of a warning's line, FILE being ipykernel's or gradcli's cell
WARNING = re.compile(r"^\S[^\n]*?:(\d+): (\w*Warning): ", re.MULTILINE)
WHY = re.compile(r"^  why: [^\n]*\n", re.MULTILINE)
# where in PyTorch's build a C++ warning was raised: a build path, which gradcli's warnings may leave out
BUILD_PLACE = re.compile(r" \(Triggered internally at [^\n]*?\)")


# ---------------------------------------------------------------------------------------------
# Normalising outputs (shared with the tests)

def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def normalise_output(output: dict) -> dict:
    kind = output["output_type"]
    if kind == "stream":
        text = ADDR.sub("0xADDR", _text(output["text"]))
        if output["name"] == "stderr":
            text = BUILD_PLACE.sub("", WHY.sub("", WARNING.sub(r"<cell>:\1: \2: ", text)))
        return {"stream": output["name"], "text": text}
    if kind == "error":
        return {"error": output["ename"], "value": ADDR.sub("0xADDR", output["evalue"])}
    data = output.get("data", {})
    key = "result" if kind == "execute_result" else "display"
    return {key: ADDR.sub("0xADDR", _text(data.get("text/plain", "")))}


def normalise(cells: list) -> list:
    """The outputs of each code cell (cells as in a notebook's JSON), normalised as the module says."""
    out = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        merged: list = []
        for output in cell.get("outputs", []):
            item = normalise_output(output)
            if "stream" in item and merged and merged[-1].get("stream") == item["stream"]:
                merged[-1] = {"stream": item["stream"], "text": merged[-1]["text"] + item["text"]}
            else:
                merged.append(item)
        out.append(merged)
    return out


def terminal_text(golden: list) -> tuple:
    """(stdout, the error names in order) that `gradcli run NOTEBOOK` shows for these outputs: what
    the cells printed and the values of last expressions (stderr aside)."""
    out, errors = [], []
    for outputs in golden:
        for item in outputs:
            if item.get("stream") == "stdout":
                out.append(item["text"])
            elif "result" in item or "display" in item:
                out.append(item.get("result", item.get("display")) + "\n")
            elif "error" in item:
                errors.append(item["error"])
    return "".join(out), errors


# ---------------------------------------------------------------------------------------------
# The example notebooks

def _notebook(cells: list, title: str) -> dict:
    def code(source: str) -> dict:
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                "source": source.strip("\n")}
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": title}] + [code(c) for c in cells],
            "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 4}


def example_notebooks() -> dict:
    """{path: notebook JSON text} of the example notebooks, from their sources."""
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import legacy_golden
    seed_cells = [code for code, _ in legacy_golden.notebook_cells(SEED_TEXT.read_text(encoding="utf-8"))]
    tutorial = TUTORIAL.read_text(encoding="utf-8").split("\n", 1)[1]        # its first line describes the file
    paragraphs = [p for p in tutorial.split("\n\n") if p.strip()]
    notebooks = {
        "examples/variable_notebook.ipynb": _notebook(
            seed_cells, "# Autograd: automatic differentiation [Variables, Functions & Gradients]\n\n"
                        "The notebook of the PyTorch 0.3 era, its code cells unchanged. `gradcli run --display legacy` "
                        "prints what it printed then (`Variable containing:`)."),
        "examples/variable_tutorial.ipynb": _notebook(
            paragraphs, "# Autograd\n\nThe 0.3-era autograd tutorial built on `Variable`, its code unchanged. "
                        "It draws random numbers: run it with `--seed 0` to see the stored outputs."),
    }
    return {path: json.dumps(nb, indent=1, ensure_ascii=False) + "\n" for path, nb in notebooks.items()}


# ---------------------------------------------------------------------------------------------
# Running a notebook on PyTorch's kernel (inside the oracle Python)

def execute(path: str, seed: int | None) -> list:
    """Run the notebook with nbclient on ipykernel; the executed cells (JSON-able)."""
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="notebook-goldens-") as folder:
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        if seed is not None:
            argv.append(f"--IPKernelApp.exec_lines=__import__('torch').manual_seed({seed})")
        where = Path(folder, "kernels", "torch")
        where.mkdir(parents=True)
        (where / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "torch", "language": "python"}))
        manager = KernelManager(kernel_name="torch", transport="ipc", ip=os.path.join(folder, "kernel"),
                                kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(where.parent)]))
        client = NotebookClient(notebook, km=manager, kernel_name="torch", timeout=120,
                                resources={"metadata": {"path": str(Path(path).parent)}})
        try:
            client.execute()
        except CellExecutionError:
            pass            # stopped at the first error, as a user's run does: the outputs so far are the golden
    return json.loads(nbformat.writes(notebook))["cells"]


def run_on_oracle(python: str, path: Path, seed: int | None) -> list:
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8")
    with tempfile.TemporaryDirectory(prefix="notebook-goldens-jupyter-") as home:
        for name in ("JUPYTER_PATH", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
            env[name] = os.path.join(home, name.lower())
        argv = [python, str(Path(__file__).resolve()), "--execute", str(path)]
        if seed is not None:
            argv += ["--seed", str(seed)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"notebook_goldens: {path.name} failed on the oracle:\n{done.stderr}")
    return json.loads(done.stdout)


def golden_path(notebook: str) -> Path:
    return GOLDENS / (Path(notebook).stem + ".outputs.json")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Regenerate the notebook goldens from PyTorch's kernel.")
    p.add_argument("--check", action="store_true", help="compare with the stored files instead of writing")
    p.add_argument("--python", help="the oracle interpreter (default: as tools/regen_goldens.py chooses)")
    p.add_argument("--execute", metavar="NOTEBOOK", help=argparse.SUPPRESS)     # inside the oracle
    p.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.execute:
        json.dump(execute(args.execute, args.seed), sys.stdout)
        return 0

    sys.path.insert(0, str(REPO_ROOT / "tools"))
    from regen_goldens import choose_python
    differs = 0
    for path, text in example_notebooks().items():
        target = REPO_ROOT / path
        if args.check:
            same = target.exists() and target.read_text(encoding="utf-8") == text
            differs += not same
            print(f"notebook_goldens: {path} {'unchanged' if same else 'differs'}")
        else:
            target.write_text(text, encoding="utf-8")
            print(f"notebook_goldens: wrote {path}")
    python = choose_python(args.python)
    for path, seed in NOTEBOOKS:
        golden = {"notebook": path, "seed": seed, "cells": normalise(run_on_oracle(python, REPO_ROOT / path, seed))}
        text = json.dumps(golden, indent=1, ensure_ascii=False) + "\n"
        target = golden_path(path)
        if args.check:
            same = target.exists() and target.read_text(encoding="utf-8") == text
            differs += not same
            print(f"notebook_goldens: {target.relative_to(REPO_ROOT)} {'unchanged' if same else 'differs'}")
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            print(f"notebook_goldens: wrote {target.relative_to(REPO_ROOT)}")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
