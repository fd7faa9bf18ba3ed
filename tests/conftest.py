"""Shared test helpers: run script text through a real Session and capture what it prints."""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pytest


# OpenBLAS's worker threads spin for about 2**28 cycles after they start (and after each call) before they
# sleep: a tenth of a second of a core for every process that imports numpy, and the suite starts hundreds
# (`python -c 'import numpy'`: 0.21 s of CPU, 0.12 s with this). Threads, and so every result, stay as they
# are; only the spinning is shortened. Set before anything here imports numpy; the processes the tests start
# inherit it.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def _compile_gradcli_once() -> None:
    """Hundreds of tests start `gradcli` as a process. Where PYTHONDONTWRITEBYTECODE is set (as on the CI
    machines) Python never writes bytecode, so in a fresh clone each of those processes would compile every
    module it imports from source again (0.5 s of a 0.2 s start-up). The controlling process compiles
    the package once, before the workers start; compileall writes whatever the variable says."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import compileall
    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "gradcli"), quiet=2)


_compile_gradcli_once()

# The test modules' bytecode: pytest rewrites the asserts of each test module it imports (6 s of CPU for
# the suite's modules, in each worker) and keeps the result in tests/__pycache__ only where bytecode may be
# written. Where PYTHONDONTWRITEBYTECODE is set, every worker of every run rewrote them all again; as for
# the package above, the suite writes them (this process only: the processes the tests start keep the
# variable). Set before pytest imports the test modules, which it does after this file.
sys.dont_write_bytecode = False


def _interruptible() -> None:
    """A suite started in the background of a non-interactive shell (`cmd &`) inherits SIGINT ignored, and
    so would every gradcli process it starts (an ignored signal stays ignored across exec): the tests of
    Ctrl-C would then fail. The tests expect Python's own handling, as on a terminal; a handler (unlike
    an ignored signal) is reset to the default in the processes a test starts."""
    import signal
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_interruptible()

from gradcli.errors import ScriptError  # noqa: E402  (after the compile above, so this import uses it)
from gradcli import session as session_module
from gradcli.session import Session

# A test worker runs thousands of sessions in one process. The heap tuning a `gradcli run` makes for its
# one script (freed buffers kept, the heap never trimmed: gradcli.session._keep_heap_memory) would keep
# each worker at the largest size any test reached, and every fork after that (the --check-grads
# replays) copies its page tables: the workers keep glibc's defaults.
session_module._HEAP_TUNED[0] = True

ROOT = Path(__file__).resolve().parent.parent
SHARED_CASES = ROOT.parent / "shared" / "conformance" / "cases"
ADDR = re.compile(r"0x[0-9a-f]+")


def normalize(text: str) -> str:
    return ADDR.sub("0xADDR", text)


class Result:
    def __init__(self, out: str, err: str, error: ScriptError | None):
        self.out, self.err, self.error = out, err, error


def run_script(source: str, filename: str = "<test>", seed=None) -> Result:
    out, err = io.StringIO(), io.StringIO()
    session = Session(out=out, err=err, seed=seed)
    error = None
    try:
        session.run_source(source, filename)
    except ScriptError as e:
        error = e if e.exit_status else None        # (sys.exit(0) ends a run that succeeded)
    return Result(out.getvalue(), err.getvalue(), error)


@pytest.fixture
def small_budget():
    """A 64 MB tensor budget for one test, the default put back after."""
    from gradcli.engine import budget
    before = budget.max_memory()
    budget.set_max_memory(64 << 20)
    yield
    budget.set_max_memory(before)


@pytest.fixture
def run():
    return run_script


# A test item costs about 2 ms of pytest and xdist bookkeeping (its report is made, pickled, sent to the
# controlling process and printed), as much as the cheapest cases take to check; the files of thousands
# of one-line cases pass them in groups.
GROUP = 25


def in_groups(cases: list, ids, size: int = GROUP) -> list:
    """`cases` as pytest parameters of `size` cases each, a group named by its first and last case's id
    (`-k` still finds a case's group by the ids of its ends)."""
    return [pytest.param(cases[i:i + size], id=f"{ids(cases[i])}..{ids(cases[min(i + size, len(cases)) - 1])}")
            for i in range(0, len(cases), size)]


def check_each(cases: list, check, ids) -> None:
    """Run `check(case)` on every case of a group, and fail with the id and assertion message of each one
    that failed (the others still run)."""
    failed = []
    for case in cases:
        try:
            check(case)
        except AssertionError as e:
            failed.append(f"{ids(case)}: {e}")
    if failed:
        pytest.fail(f"{len(failed)} of {len(cases)} cases failed:\n\n" + "\n\n".join(failed), pytrace=False)


def error_line(source: str) -> str:
    """`Type: message` of the error a script ends in (the line PyTorch's traceback ends with)."""
    result = run_script(source)
    assert result.error is not None, "expected the script to fail"
    return f"{result.error.kind}: {result.error.message}"


def gradcli_output(source: str) -> str:
    """What a script prints under gradcli (errors raise)."""
    out = io.StringIO()
    Session(out=out).run_source(source)
    return out.getvalue()


# One CPython process per test worker runs every snippet, each as a fresh `__main__` module, so the several
# hundred snippets compared with CPython pay for one interpreter start-up rather than one each.
_CPYTHON_SERVER = r"""
import contextlib, io, sys, traceback
read, write = sys.stdin.buffer, sys.stdout.buffer
while True:
    size = read.readline()
    if not size:
        break
    source = read.read(int(size)).decode()
    printed, status = io.StringIO(), 0
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(source, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    except BaseException:
        status = 1
        printed.write(traceback.format_exc())
    data = printed.getvalue().encode()
    write.write(b"%d %d\n" % (status, len(data)) + data)
    write.flush()
"""
_cpython = None


def cpython_output(source: str) -> str:
    """What the same text prints under CPython: the reference for Python's own semantics (a snippet that
    raises fails the test, with CPython's traceback)."""
    import subprocess
    import sys
    global _cpython
    if _cpython is None or _cpython.poll() is not None:
        _cpython = subprocess.Popen([sys.executable, "-c", _CPYTHON_SERVER], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE)
    data = source.encode()
    _cpython.stdin.write(b"%d\n" % len(data) + data)
    _cpython.stdin.flush()
    status, size = map(int, _cpython.stdout.readline().split())
    text = _cpython.stdout.read(size).decode()
    if status:
        raise subprocess.CalledProcessError(status, "python", output=text)
    return text


def gradcli_as_file(source: str, path) -> tuple:
    """gradcli's (stdout, stderr) for the script run in a session as the file named `path` (not written)."""
    out, err = io.StringIO(), io.StringIO()
    Session(out=out, err=err).run_source(source, str(path))
    return out.getvalue(), err.getvalue()


def both_as_file(source: str, path) -> tuple:
    """(gradcli's (stdout, stderr), CPython's) for the script run as the file `path` (written here; CPython must
    end it with status 0): for what names the script's file, as tracebacks do."""
    import subprocess
    got = gradcli_as_file(source, path)
    path.write_text(source)
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return got, (p.stdout, p.stderr)


def located_error(source: str) -> str:
    """The error a script ends in, as 'line:col: Kind: message' (the script must fail)."""
    with pytest.raises(ScriptError) as info:
        Session(out=io.StringIO()).run_source(source + "\n")
    e = info.value
    return f"{e.line}:{e.col}: {e.kind}: {e.message}"


@pytest.fixture(autouse=True)
def _default_thread_count():
    """Each test starts with PyTorch's thread count of the reference machine: a script's
    torch.set_num_threads lasts until the next session, and engine-level tests make none."""
    from gradcli.engine.state import DEFAULT_THREADS, STATE
    STATE.threads = DEFAULT_THREADS
    yield


_TRIM_ABOVE = [0]


def pytest_runtest_teardown(item, nextitem):
    """Hand a test's freed memory back to the OS once the worker has grown by 64 MB since the last time.
    A worker runs thousands of tests, a few of them large (a 100,000-node graph, 10 MB scripts); glibc
    keeps the memory they freed, so the worker grew to 800 MB, and each of the hundreds of forks the
    --check-grads tests make copied the page tables of all of it (a fork of a 400 MB process costs 26 ms,
    of a small one 1 ms). Reading the resident size costs microseconds; the trim runs a few times a run."""
    try:
        with open("/proc/self/statm", "rb") as f:
            resident = int(f.read().split()[1]) * 4096
    except OSError:
        return                                          # not Linux: nothing to measure or trim
    if resident <= _TRIM_ABOVE[0]:
        return
    import ctypes
    import gc
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass                                            # not glibc
    with open("/proc/self/statm", "rb") as f:
        _TRIM_ABOVE[0] = int(f.read().split()[1]) * 4096 + (64 << 20)
