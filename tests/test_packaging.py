"""A plain (non-editable) install carries the grammar inside the package and runs from any directory."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_contains_grammar_and_runs_outside_the_checkout(tmp_path):
    wheels = tmp_path / "wheels"
    # with the backend the test extra installs (an isolated build environment cost 5 s a run)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(wheels), str(ROOT)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("gradcli-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "gradcli/grammar/gradcli.lark" in names
    # the docs `gradcli help` shows: every page of docs/ and the README
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert pages and sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("gradcli/docs/")) == \
        sorted(pages + ["README.md"])
    target = tmp_path / "site"
    inst = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert inst.returncode == 0, inst.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(target), XDG_CACHE_HOME=str(tmp_path / "cache"))
    code = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * x).sum().backward()\nprint(x.grad)\n"
    p = subprocess.run([sys.executable, "-c", "import gradcli, sys; print(gradcli.__file__)"],
                       cwd=elsewhere, env=env, capture_output=True, text=True)
    assert p.stdout.startswith(str(target))
    p = subprocess.run([sys.executable, "-m", "gradcli", "-c", code], cwd=elsewhere, env=env,
                       capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "tensor([2., 2.])\n", "")
    p = subprocess.run([sys.executable, "-m", "gradcli", "help", "checks"], cwd=elsewhere, env=env,
                       capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout) == (0, (ROOT / "docs" / "checks.md").read_text(encoding="utf-8"))
    p = subprocess.run([sys.executable, "-m", "gradcli", "help", "usage"], cwd=elsewhere, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("## Usage\n")
