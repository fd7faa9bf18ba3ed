"""What the process takes from its surroundings: `python -m gradcli` imports nothing from the current
directory, and GRADCLI_TRACEBACK turns tracebacks on only when it says so."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def python_m_gradcli(*args, cwd, **env):
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, cwd=cwd,
                          env=environment, timeout=120)


def test_modules_in_the_current_directory_are_not_imported(tmp_path):
    marker = tmp_path / "imported"
    for name in ("numpy", "torch", "lark", "json", "ctypes"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write('{name} ')\n"
                                             f"raise SystemExit('{name}.py of the current directory ran')\n")
    p = python_m_gradcli("--format", "jsonl", "--timeout", "30", "-c", "import torch\nprint(torch.ones(2))",
                         cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert '"text":"tensor([1., 1.])\\n"' in p.stdout
    assert not marker.exists()


@pytest.mark.parametrize("value, shown", [
    ("0", False), ("No", False), (" OFF ", False), ("", False), ("1", True),
])
def test_gradcli_traceback_is_off_unless_asked_for(value, shown):
    p = python_m_gradcli("-c", "x = [1][5]", cwd=ROOT, GRADCLI_TRACEBACK=value)
    assert ("Traceback" in p.stderr) is shown, p.stderr
    if not shown:
        assert (p.returncode, p.stderr.splitlines()[0]) == (1, "<string>:1:5: IndexError: list index out of range")
