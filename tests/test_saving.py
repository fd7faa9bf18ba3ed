"""torch.save and torch.load: files kept in memory for the session, never on the disk (gradcli.language.saving)."""

from __future__ import annotations

import io
import subprocess
import sys

from conftest import ROOT, error_line, run_script
from gradcli.session import Session


def test_nothing_reaches_the_disk(tmp_path):
    """A script that saves and loads runs as under PyTorch, and its folder stays empty."""
    script = tmp_path / "ckpt.grad"
    target = tmp_path / "elsewhere"
    script.write_text("import torch\n"
                      "torch.save({'w': torch.ones(2)}, 'model.pt')\n"
                      f"torch.save(torch.ones(1), {str(target / 'x.pt')!r})\n"
                      "print(torch.load('model.pt')['w'])\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", script.name], cwd=tmp_path,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "tensor([1., 1.])\n", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.grad"]


def test_files_last_the_session():
    """A new session (a new run) starts with none; a REPL's or kernel's session keeps them from cell to cell."""
    run_script("import torch\ntorch.save(torch.ones(1), 'kept.pt')\n")
    assert error_line("import torch\ntorch.load('kept.pt')") == (
        "FileNotFoundError: [Errno 2] No such file or directory: 'kept.pt'")
    out = io.StringIO()
    session = Session(out=out)
    session.run_source("import torch\ntorch.save(torch.arange(3), 'kept.pt')\n")
    session.run_source("print(torch.load('kept.pt'))\n")
    assert out.getvalue() == "tensor([0, 1, 2])\n"


def test_a_file_is_a_snapshot_and_each_load_a_copy_of_its_own():
    result = run_script("import torch\n"
                        "w = torch.ones(2)\n"
                        "torch.save({'w': w, 'view': w[1:]}, 'f.pt')\n"
                        "w.add_(1)\n"
                        "a, b = torch.load('f.pt'), torch.load('f.pt')\n"
                        "a['w'].add_(5)\n"
                        "print(a['w'], a['view'], b['w'], w)\n")
    assert result.error is None
    # the view shares the loaded tensor's storage, as it shared the saved one's; other loads are untouched
    assert result.out == "tensor([6., 6.]) tensor([6.]) tensor([1., 1.]) tensor([2., 2.])\n"


def test_a_save_that_fails_leaves_a_corrupt_file():
    """PyTorch opens the archive before it pickles: a pickling error leaves a file without its data."""
    assert error_line("import torch\n"
                      "try:\n    torch.save([torch.ones(1), lambda v: v], 'bad.pt')\nexcept Exception as e:\n"
                      "    print(type(e).__name__)\n"
                      "torch.load('bad.pt')") == (
        "RuntimeError: PytorchStreamReader failed locating file data.pkl: file not found. This is an internal miniz "
        "error. If you are seeing this error, there is a high likelihood that your checkpoint file is corrupted. This "
        "can happen if the checkpoint was not saved properly, was transferred incorrectly, or the file was modified "
        "after saving.")


def test_an_uncaught_unpickling_error_is_named_as_a_traceback_names_it():
    line = error_line("import torch\ntorch.save(torch.nn.Linear(1, 1), 'm.pt')\ntorch.load('m.pt')")
    assert line.startswith("_pickle.UnpicklingError: Weights only load failed.")
    assert "GLOBAL torch.nn.modules.linear.Linear was not an allowed global" in line


def test_functions_are_saved_by_name():
    """A top-level function comes back as itself; a nested one or a lambda is pickle's error, and a class's
    __deepcopy__ plays no part."""
    result = run_script("import torch\n"
                        "def f(v):\n    return v\n"
                        "def outer():\n    def inner(v):\n        return v\n    return inner\n"
                        "torch.save({'f': f}, 'f.pt')\n"
                        "print(torch.load('f.pt', weights_only=False)['f'] is f)\n"
                        "try:\n    torch.save(outer(), 'g.pt')\nexcept AttributeError as e:\n    print(e)\n"
                        "class Keep:\n    def __deepcopy__(self, memo):\n        print('not called')\n        return self\n"
                        "k = Keep()\ntorch.save(k, 'k.pt')\nprint(torch.load('k.pt', weights_only=False) is k)\n")
    assert result.error is None
    assert result.out == "True\nCan't pickle local object 'outer.<locals>.inner'\nFalse\n"

