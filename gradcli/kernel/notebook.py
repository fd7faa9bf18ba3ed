"""Notebooks from the command line: `gradcli run NOTEBOOK.ipynb` and `gradcli run --write NOTEBOOK.ipynb`.

The first runs the code cells in order and writes their outputs as a terminal shows a script's; --write
executes the notebook with nbclient on the gradcli kernel and saves the outputs into it.

Reading needs no Jupyter library: a notebook is JSON (nbformat 4), read with the standard library, so
`gradcli run NOTEBOOK.ipynb` works on the plain install. Writing uses the maintained libraries (nbformat,
nbclient, jupyter_client), from the jupyter extra.

Errors follow nbclient, as a PyTorch notebook run with it behaves: the run stops at the first cell that
fails, unless errors are allowed (--allow-errors, nbclient's allow_errors) or the cell is tagged
`raises-exception` (nbclient's own tag for a cell meant to fail). The exit status is the first failure's,
as `gradcli run` gives it (with --write, 1: only the error's name comes back from the kernel), and 0 when
every failure was expected by its tag.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from gradcli.errors import EXIT_OK, EXIT_SCRIPT_ERROR, EXIT_USAGE
from gradcli.kernel.cells import CellShell, Front
from gradcli.repl.shell import Options

NEEDS_EXTRA = "writing a notebook needs the jupyter extra: pip install 'gradcli[jupyter]'"
EXPECTED_FAILURE = "raises-exception"       # nbclient's tag for a cell that is meant to fail
KERNEL_NAME = "gradcli"


def code_cells(text: str, name: str) -> list:
    """[(source, tags)] of a notebook's code cells, in order; ValueError when `text` is not a notebook."""
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"'{name}' is not a notebook: not JSON ({e.msg}, line {e.lineno})") from None
    except RecursionError:          # json's decoder recurses once per level of nesting
        raise ValueError(f"'{name}' is not a notebook: its JSON is nested too deeply") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError(f"'{name}' is not a notebook: it has no list of cells")
    if not isinstance(notebook.get("nbformat"), int) or notebook["nbformat"] < 4:
        raise ValueError(f"'{name}' is a notebook of format {notebook.get('nbformat')}; gradcli reads format 4 "
                         "(jupyter nbconvert --to notebook converts it)")
    cells = []
    for cell in notebook["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        elif not isinstance(source, str):
            raise ValueError(f"'{name}' is not a notebook: a code cell's source is {type(source).__name__}, not "
                             "text or a list of lines")
        metadata = cell.get("metadata")
        tags = metadata.get("tags", ()) if isinstance(metadata, dict) else ()
        cells.append((source, tuple(tags) if isinstance(tags, list) else ()))
    return cells


def run_notebook(text: str, name: str, seed=None, display=None, fmt=None, stable_ids: bool = False,
                 timeout=None, allow_errors: bool = False) -> int:
    """Run a notebook's code cells in one session, as the kernel would; returns the exit status."""
    try:
        cells = code_cells(text, name)
    except ValueError as e:
        sys.stderr.write(f"gradcli: {e}\n")
        return EXIT_USAGE
    shell = CellShell(Front(sys.stdout, sys.stderr),
                      Options(seed=seed, display=display, format=fmt or "text", stable_ids=stable_ids),
                      timeout=timeout)
    status = EXIT_OK
    for number, (source, tags) in enumerate(cells, 1):
        if shell.run_cell(source, f"{name}[{number}]") or EXPECTED_FAILURE in tags:
            continue
        status = status or shell.failure_status
        if not allow_errors:
            break
    sys.stdout.flush()
    return status


def write_outputs(path: str, kernel_options: list, allow_errors: bool = False) -> int:
    """Execute the notebook at `path` with nbclient on a gradcli kernel started with `kernel_options`,
    and save it with the outputs (also when a cell failed: what ran is kept, as a reader wants to see
    the error). The kernelspec is written into a temporary folder, so none needs to be installed."""
    try:
        import nbformat
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError
        from gradcli.kernel import spec
    except ImportError:
        sys.stderr.write(f"gradcli: {NEEDS_EXTRA}\n")
        return EXIT_USAGE
    try:
        notebook = nbformat.read(path, as_version=4)
    except OSError as e:
        sys.stderr.write(f"gradcli: cannot read '{path}': {e.strerror or e}\n")
        return EXIT_USAGE
    except Exception as e:          # nbformat's reader raises several kinds for a file that is not a notebook
        sys.stderr.write(f"gradcli: '{path}' is not a notebook: {str(e).splitlines()[0] if str(e) else type(e).__name__}\n")
        return EXIT_USAGE
    status = EXIT_OK
    with tempfile.TemporaryDirectory(prefix="gradcli-kernelspec-") as folder:
        spec.write(folder, kernel_options, KERNEL_NAME)
        # ipc: the kernel's sockets are files in the private temporary folder, not ports on loopback
        manager = KernelManager(kernel_name=KERNEL_NAME, transport="ipc", ip=os.path.join(folder, "kernel"),
                                kernel_spec_manager=KernelSpecManager(kernel_dirs=[os.path.join(folder, "kernels")]))
        # timeout=None: a cell's time is the kernel's --timeout to limit, not the client's
        client = NotebookClient(notebook, km=manager, kernel_name=KERNEL_NAME, allow_errors=allow_errors,
                                timeout=None, startup_timeout=120,
                                resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
        try:
            client.execute()
        except CellExecutionError:
            status = EXIT_SCRIPT_ERROR
    notebook.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": spec.DISPLAY_NAME, "language": "gradcli"}
    failed = _first_error(notebook)
    if failed is not None:
        sys.stderr.write("\n".join(failed.get("traceback") or [f"{failed['ename']}: {failed['evalue']}"]) + "\n")
        status = status or EXIT_SCRIPT_ERROR
    try:
        nbformat.write(notebook, path)
    except OSError as e:
        sys.stderr.write(f"gradcli: cannot write '{path}': {e.strerror or e}\n")
        return EXIT_USAGE
    return status


def _first_error(notebook):
    """The first error output of a cell not tagged raises-exception, or None."""
    for cell in notebook.cells:
        if cell.cell_type != "code" or EXPECTED_FAILURE in cell.get("metadata", {}).get("tags", ()):
            continue
        for output in cell.get("outputs", ()):
            if output.get("output_type") == "error":
                return output
    return None
