"""The progress line on stderr: shown on a terminal for work past about a second, never elsewhere."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from gradcli.commands import progress as progress_module
from gradcli.commands.progress import Progress

ROOT = Path(__file__).resolve().parent.parent


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_nothing_for_a_stream_that_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    stream = io.StringIO()
    with Progress("gradcli graph: running s.grad", stream):
        time.sleep(0.3)
    assert stream.getvalue() == ""


def test_nothing_for_quick_work_on_a_terminal():
    stream = Terminal()
    with Progress("gradcli graph: running s.grad", stream):
        pass
    assert stream.getvalue() == ""


def test_long_work_on_a_terminal_shows_a_line_then_erases_it(monkeypatch):
    monkeypatch.setattr(progress_module, "DELAY", 0.05)
    monkeypatch.setattr(progress_module, "INTERVAL", 0.02)
    stream = Terminal()

    def drawn(line: str) -> str:
        """The line as the progress thread drew it, waited for (a loaded machine may run the thread late)."""
        pattern = re.compile("\r" + re.escape(line) + r" \(\d+ s\)")
        end = time.monotonic() + 30
        while not pattern.search(stream.getvalue()) and time.monotonic() < end:
            time.sleep(0.01)
        found = pattern.findall(stream.getvalue())
        assert found, (line, stream.getvalue())
        return found[-1][1:]

    with Progress("gradcli graph: running s.grad", stream) as p:
        drawn("gradcli graph: running s.grad")
        p.step("drawing the graph")
        shown = drawn("gradcli graph: running s.grad: drawing the graph")
        p.write("s.grad:3: UserWarning: something\n")      # a warning meanwhile: the line is erased first
        time.sleep(0.1)
    text = stream.getvalue()
    assert "\r" + " " * len(shown) + "\rs.grad:3: UserWarning" in text
    assert text.endswith("\r")                                  # erased at the end
    last = text.rsplit("\r", 2)
    assert last[-2].strip() == "" and last[-1] == ""


# A child gradcli whose line appears after 0.05 s instead of a second, so a short script shows it.
CHILD = ("import sys\nfrom gradcli import cli\nfrom gradcli.commands import progress\nprogress.DELAY = 0.05\nprogress.INTERVAL = 0.02\n"
         "sys.exit(cli.main(sys.argv[1:]))\n")


def _gradcli(argv, stderr):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    return subprocess.Popen([sys.executable, "-c", CHILD, *argv], stdout=subprocess.PIPE, stderr=stderr,
                            stdin=subprocess.DEVNULL, env=env)


def _with_stderr_on_a_pty(argv):
    """Run gradcli with stderr on a pseudo-terminal: (status, stdout, what the terminal received)."""
    master, slave = pty.openpty()
    child = _gradcli(argv, slave)
    os.close(slave)
    received = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:             # the child closed the terminal
            break
        if not data:
            break
        received += data
    out = child.stdout.read().decode()
    child.wait(60)
    os.close(master)
    return child.returncode, out, received.decode()


def _piped(argv):
    child = _gradcli(argv, subprocess.PIPE)
    out, err = child.communicate(timeout=120)
    return child.returncode, out.decode(), err.decode()


# Work that lasts past the line's delay (CHILD's 0.05 s) on any machine: about 0.1 s of summing in four
# statements (a fast machine ran the 3,000 ops alone within the delay, and nothing was drawn). A fixed number of
# statements, not a loop that waits for the clock: --check-grads stops a replay that runs far more statements than
# the script did, and a clock-bound loop ran more of them in a replay whenever the machine's load fell meanwhile.
SLOW = ("import torch\nimport time\nx = torch.ones(3, requires_grad=True)\ny = x\n"
        "for i in range(3000):\n    y = y * 1.0\ntotal = 0\nfor chunk in range(4):\n"
        "    total += sum(range(2 * 10 ** 6))\nout = y.sum()\nout.backward()\n")


def _erased(terminal: str) -> bool:
    """The last drawing of the progress line was erased (spaces over it, back to the line's start)."""
    last = terminal.rfind(" s)")
    return last > 0 and re.search(r"\r +\r", terminal[last:]) is not None


def test_graph_shows_progress_on_a_terminal_only(tmp_path):
    path = tmp_path / "slow.grad"
    path.write_text(SLOW)
    argv = ["graph", str(path), "out", "--max-nodes", "3"]
    status, out, terminal = _with_stderr_on_a_pty(argv)
    assert status == 0 and out.startswith("SumBackward0")
    assert f"\rgradcli graph: running {path} (0 s)" in terminal and _erased(terminal)
    assert _piped(argv) == (0, out, "")


def test_check_grads_shows_its_steps_on_a_terminal_only(tmp_path):
    path = tmp_path / "slow.grad"
    path.write_text(SLOW)
    argv = ["run", "--check-grads", str(path)]
    status, out, terminal = _with_stderr_on_a_pty(argv)
    assert status == 0
    assert f"\r{path}: --check-grads: replaying in float64 (0 s)" in terminal
    assert f"\r{path}: --check-grads: replaying in float64: 1 call, " in terminal
    report = f"{path}:11: backward(): ok"
    assert report in terminal and _erased(terminal)
    status, out, err = _piped(argv)
    assert status == 0 and err.startswith(report) and "\r" not in err
