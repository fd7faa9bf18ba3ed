"""Notebooks: `gradcli run NOTEBOOK.ipynb` prints what the notebook's cells show; `gradcli run --write` runs it with
nbclient on the gradcli kernel, and the outputs equal those PyTorch's own kernel gave (tests/notebooks/*.outputs.json,
written by tools/notebook_goldens.py). The notebook version of the 0.3-era tutorial also prints, with
--display legacy, what the 0.3 notebook printed (`Variable containing:`)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil

import pytest

from conftest import ROOT
from gradcli import cli

TOOL = ROOT / "tools" / "notebook_goldens.py"
LEGACY_GOLDEN = ROOT / "tests" / "examples" / "variable_notebook.legacy.out"
ADDR = re.compile(r"0x[0-9a-f]+")


def _load_tool():
    spec = importlib.util.spec_from_file_location("notebook_goldens", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


goldens = _load_tool()
CASES = [(path, seed) for path, seed in goldens.NOTEBOOKS]


def _golden(path: str) -> list:
    return json.loads(goldens.golden_path(path).read_text(encoding="utf-8"))["cells"]


def _seed(seed) -> list:
    return [] if seed is None else ["--seed", str(seed)]


@pytest.mark.parametrize("path, seed", CASES, ids=[p for p, _ in CASES])
def test_run_prints_what_the_cells_show(path, seed, capsys):
    expected, errors = goldens.terminal_text(_golden(path))
    status = cli.main(["run", *_seed(seed), str(ROOT / path)])
    captured = capsys.readouterr()
    assert ADDR.sub("0xADDR", captured.out) == expected
    shown = re.findall(r"\.ipynb\[\d+\]:\d+:\d+: (\w+):", captured.err)
    assert shown == errors
    # the run stops at an error, except in a cell tagged raises-exception (as nbclient does)
    assert status == (1 if len(errors) > sum("raises-exception" in str(c) for c in _tagged(path)) else 0)


def _tagged(path: str) -> list:
    notebook = json.loads((ROOT / path).read_text(encoding="utf-8"))
    return [c.get("metadata", {}).get("tags", []) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_the_tutorial_notebook_prints_the_0_3_display_with_display_legacy(capsys):
    assert cli.main(["run", "--display", "legacy", str(ROOT / "examples" / "variable_notebook.ipynb")]) == 0
    assert capsys.readouterr().out == LEGACY_GOLDEN.read_text(encoding="utf-8")


def test_the_example_notebooks_are_the_tool_s(capsys):
    for path, text in goldens.example_notebooks().items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, f"{path}: run tools/notebook_goldens.py"


def test_what_is_not_a_notebook_is_a_usage_error(tmp_path, capsys):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    assert cli.main(["run", str(bad)]) == 2
    assert capsys.readouterr().err == f"gradcli: '{bad}' is not a notebook: not JSON (Expecting property name " \
                                      "enclosed in double quotes, line 1)\n"
    old = tmp_path / "old.ipynb"
    old.write_text('{"nbformat": 3, "cells": []}')
    assert cli.main(["run", str(old)]) == 2
    assert "gradcli reads format 4" in capsys.readouterr().err
    assert cli.main(["run", "--write", str(ROOT / "examples" / "tutorial.grad")]) == 2
    assert capsys.readouterr().err == "gradcli run: --write writes the outputs of notebooks (.ipynb files), not scripts\n"
    assert cli.main(["run", "--check-grads", str(ROOT / "examples" / "variable_notebook.ipynb")]) == 2
    assert "--check-grads does not apply to a notebook" in capsys.readouterr().err


@pytest.mark.parametrize("text, why", [
    ("[" * 100_000 + "]" * 100_000, "its JSON is nested too deeply"),
    ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}',
     "a code cell's source is int, not text or a list of lines"),
    ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": ["print(1)\\n", 2]}]}',
     "a code cell's source is list, not text or a list of lines"),
])
def test_a_hostile_notebook_is_a_usage_error_not_a_traceback(tmp_path, capsys, text, why):
    bad = tmp_path / "bad.ipynb"
    bad.write_text(text)
    assert cli.main(["run", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"gradcli: '{bad}' is not a notebook: {why}\n")


def test_a_cell_s_magics_and_allow_errors(tmp_path, capsys):
    notebook = {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
        for source in ("import torch\nx = torch.ones(2, requires_grad=True)", "%display legacy\nx.sum()",
                       "x.nope", "%display modern\nx.sum()")]}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(notebook))
    assert cli.main(["run", "--allow-errors", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "Variable containing:\n 2\n[torch.FloatTensor of size 1]\n" \
                           "tensor(2., grad_fn=<SumBackward0>)\n"
    assert captured.err == f"{path}[3]:1:1: AttributeError: 'Tensor' object has no attribute 'nope'\n" \
                           "    x.nope\n    ^\n"


# ------------------------------------------------------------------------------- through nbclient
@pytest.fixture(scope="module")
def jupyter_home(tmp_path_factory):
    pytest.importorskip("nbclient", reason="writing notebooks needs the jupyter extra: pip install -e '.[test,jupyter]'")
    pytest.importorskip("ipykernel", reason="the kernel needs the jupyter extra: pip install -e '.[test,jupyter]'")
    root = tmp_path_factory.mktemp("jupyter-home")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("JUPYTER_PATH", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
            mp.setenv(name, str(root / name.lower()))
        yield root


def _written(tmp_path, path: str, *options) -> tuple:
    copy = tmp_path / (path.replace("/", "_"))
    shutil.copy(ROOT / path, copy)
    status = cli.main(["run", "--write", *options, str(copy)])
    return status, json.loads(copy.read_text(encoding="utf-8"))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("path, seed", CASES, ids=[p for p, _ in CASES])
def test_nbclient_on_the_gradcli_kernel_gives_pytorch_s_outputs(jupyter_home, tmp_path, path, seed, capsys):
    status, notebook = _written(tmp_path, path, *_seed(seed))
    assert goldens.normalise(notebook["cells"]) == _golden(path)
    assert notebook["metadata"]["kernelspec"]["name"] == "gradcli"
    failed = [c for c in notebook["cells"] if any(o["output_type"] == "error" for o in c.get("outputs", []))
              and "raises-exception" not in c["metadata"].get("tags", [])]
    assert status == (1 if failed else 0)
    if failed:        # the failing cell's report, as the terminal shows it
        assert capsys.readouterr().err.startswith(f"<cell {failed[0]['execution_count']}>:1:1: RuntimeError: ")


@pytest.mark.timeout(120)
def test_the_tutorial_notebook_in_legacy_display_through_nbclient(jupyter_home, tmp_path):
    status, notebook = _written(tmp_path, "examples/variable_notebook.ipynb", "--display", "legacy")
    printed = "".join("".join(o["text"]) for c in notebook["cells"] if c["cell_type"] == "code"
                      for o in c["outputs"] if o.get("name") == "stdout")
    assert status == 0 and printed == LEGACY_GOLDEN.read_text(encoding="utf-8")
