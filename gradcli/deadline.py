"""The deadline of `--timeout`: SIGALRM raises ScriptTimeout into the running script, and the page
shared with the supervising process (gradcli.supervisor) says when the script's time is up.

A `while True: pass` stops at once, and the report names its line. A C call does not see the signal
until it returns (a long numpy call, a sort of a huge list), so the `gradcli` command runs under a
supervising process that ends it when a deadline published here has passed by more than a grace
period; the running statement's line is kept on that page too, so even then the report names it.
The C loops gradcli can cut short (builtins over huge ranges, big integers) are bounded or run in
slices (gradcli.language.bounds), so the timer can stop them and say where.
"""

from __future__ import annotations

import math
import os
import struct
import sys
import time

from gradcli.engine import budget
from gradcli.errors import ScriptError

EXIT_TIMEOUT = 124          # as GNU timeout(1)
CHUNK = 1 << 20             # input is read in chunks of this size, so the timer and the budget can stop it
INPUT_SHARE = 8             # a script's text may take this share of the memory budget (parsing takes more)

def parse_seconds(text: str) -> float:
    """`--timeout`: seconds, a positive number; 0 means no limit."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"invalid number of seconds {text!r}") from None
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"invalid number of seconds {text!r}")
    return value



class ScriptTimeout(BaseException):
    """Raised into the running script by the deadline's timer. A BaseException, as KeyboardInterrupt
    is, so the `except Exception` blocks of gradcli's machinery let it through untouched."""


class TimedOut(ScriptError):
    """A script stopped by --timeout: reported like any script error, exit status 124."""

    exit_status = EXIT_TIMEOUT


_RETRY = 1.0        # the timer fires again at this interval until the script has stopped


def _seconds(s: float) -> str:
    return f"{s:g}"


def timeout_message(seconds: float) -> str:
    unit = "second" if seconds == 1 else "seconds"
    return f"stopped after {_seconds(seconds)} {unit} (--timeout {_seconds(seconds)})"


UNINTERRUPTIBLE = "inside a computation that could not be interrupted"


def _source_file(module: str) -> str | None:
    """The file a module's code objects name (co_filename), once it is imported."""
    return getattr(sys.modules.get(module), "__file__", None)


def _in_script(frame) -> bool:
    """Whether a script is being parsed or run: frames of compiler.py (the compiled closures) or
    parser.py (the parse loop) are on the stack. The timer raises only then, never while gradcli
    reports an error or tidies up after the script."""
    files = (_source_file("gradcli.language.compiler"), _source_file("gradcli.language.parser"))
    while frame is not None:
        if frame.f_code.co_filename in files:
            return True
        frame = frame.f_back
    return False


def timed_out(e: ScriptTimeout, source: str, filename: str, position=None) -> TimedOut:
    """The script error for a timeout, placed where the script was: `position` is the (line, column)
    the compiled closures noted on the exception as it passed through them (the innermost running
    statement or expression), or None when the timer landed outside the script's code (a parse)."""
    line, col = position or (0, 0)
    seconds = e.args[0] if e.args else 0
    return TimedOut("TimeoutError", timeout_message(seconds), filename, line, col).located(filename, source)


class Board:
    """A page shared between the `gradcli` command's supervisor and its worker (made before the fork):
    the worker publishes the deadline of what it runs (monotonic time, the --timeout seconds, the
    script's name), whether the timer has fired, and the running statement's line; the supervisor
    reads them. time.monotonic() is the machine's clock, the same in both processes.

    Layout: a sequence number, odd while the worker writes (the reader retries), then the deadline,
    the seconds, the fired flag, the name's length, the name; the line on a word of its own, written
    by the compiled statements (Session.where) without the sequence number (one aligned word)."""

    _HEAD = struct.Struct("=QddQQ")
    _LINE = _HEAD.size
    _NAME = _LINE + 8
    MAX_NAME = 2048

    def __init__(self):
        import mmap
        self.page = mmap.mmap(-1, self._NAME + self.MAX_NAME, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
        self.line = memoryview(self.page)[self._LINE:self._NAME].cast("q")
        self.seq = 0

    def publish(self, deadline: float, seconds: float, name: str, fired: bool = False) -> None:
        data = name.encode("utf-8", "replace")[:self.MAX_NAME]
        self.seq += 1
        self.page[0:8] = struct.pack("=Q", self.seq * 2 - 1)
        self.page[self._NAME:self._NAME + len(data)] = data
        self.page[0:self._HEAD.size] = self._HEAD.pack(self.seq * 2 - 1, deadline, seconds, fired, len(data))
        self.page[0:8] = struct.pack("=Q", self.seq * 2)

    def read(self) -> tuple:
        """(deadline, seconds, fired, name, line), as the worker last published them."""
        while True:
            seq, deadline, seconds, fired, n = self._HEAD.unpack_from(self.page)
            name = self.page[self._NAME:self._NAME + min(n, self.MAX_NAME)].decode("utf-8", "replace")
            if not seq & 1 and struct.unpack_from("=Q", self.page)[0] == seq:
                return deadline, seconds, bool(fired), name, self.line[0]
            time.sleep(0.001)


# The board of this process when it is the worker of a supervised `gradcli` command, else None.
_BOARD = [None]


def supervised_by(board: Board | None) -> None:
    _BOARD[0] = board


def line_slot():
    """Where a session keeps the running statement's line when a supervisor should be able to name
    it (a one-item view of the shared page), or None when nobody is watching."""
    board = _BOARD[0]
    return board.line if board is not None else None


# Seconds the supervisor allows gradcli's own work between the deadlines of scripts (imports, the parse
# tables, which a cold cache builds afresh, reports, the next file), on top of --timeout: that is not
# the script's time, and a loaded machine may take seconds over it.
OWN_TIME = 5.0


def _publish(seconds: float, name: str, fired: bool = False, own: bool = False) -> None:
    """Tell the supervisor the next `seconds` belong to `name`: a script (or reading one) starts;
    with `own`, gradcli's own work goes on, with OWN_TIME more."""
    board = _BOARD[0]
    if board is not None:
        board.publish(time.monotonic() + seconds + (OWN_TIME if own else 0), seconds, name, fired)


class Deadline:
    """Stop the script after `seconds` of wall time: `with Deadline(s): session.run_source(...)`, or
    start() / cancel(). The session turns the ScriptTimeout into a TimedOut error (exit status 124).

    The timer is SIGALRM (setitimer), so it works in the main thread only (elsewhere, and with no
    seconds, it does nothing). Its handler raises between two bytecodes of the script, which stops
    any loop of the script's own; a numpy call or a C builtin runs to its end first, and under the
    `gradcli` command the supervisor ends the process when that takes too long."""

    def __init__(self, seconds: float | None, filename: str = "<script>"):
        self.seconds = seconds or 0
        self.filename = filename
        self.fired = False
        self.armed = False
        self.previous = None

    def start(self) -> "Deadline":
        if not self.seconds:
            return self
        # (signal and threading only when a limit is set: a run without one imports neither)
        import signal
        import threading
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            return self
        _publish(self.seconds, self.filename)
        self.previous = signal.signal(signal.SIGALRM, self._alarm)
        signal.setitimer(signal.ITIMER_REAL, self.seconds, _RETRY)
        self.armed = True
        return self

    def cancel(self) -> None:
        if self.armed:
            import signal
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous if self.previous is not None else signal.SIG_DFL)
            _publish(self.seconds, self.filename, own=True)

    def __enter__(self) -> "Deadline":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.cancel()

    def _alarm(self, signum, frame) -> None:
        if not self.armed or not _in_script(frame):
            return                  # not inside the script right now: the timer fires again soon
        if not self.fired:
            self.fired = True
            _publish(self.seconds, self.filename, fired=True)     # reporting: a grace period more
        raise ScriptTimeout(self.seconds)


_PR_SET_PDEATHSIG = 1


def end_with_parent(parent: int) -> None:
    """In a child just forked from `parent`: be killed when the parent ends, however it ends (Linux's
    PR_SET_PDEATHSIG, which SIGKILL of the parent cannot skip); if it has already ended, end now."""
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass                    # not Linux: the parent's own cleanup is all there is
    if os.getppid() != parent:
        os._exit(1)


def read_input(fd: int, name: str, seconds: float | None) -> bytes:
    """All the bytes of an open file (a script, standard input), read in chunks so that endless or
    huge input stops with an error: past `seconds` (--timeout) a TimedOut, past what gradcli could
    parse within the memory budget an OSError saying so."""
    limit = budget.max_memory()
    most = limit // INPUT_SHARE if limit else None
    end = time.monotonic() + seconds if seconds else None
    if seconds:
        _publish(seconds, name)
    data = bytearray()
    while True:
        if end is not None:
            left = end - time.monotonic()
            import select
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimedOut("TimeoutError", f"{timeout_message(seconds)}, while reading the script", name)
        chunk = os.read(fd, CHUNK)
        if not chunk:
            if seconds:
                _publish(seconds, name, own=True)
            return bytes(data)
        data += chunk
        if most is not None and len(data) > most:
            raise OSError(f"the script is over {budget.show_bytes(most)}, more than gradcli can parse within "
                          f"--max-memory ({budget.show_bytes(limit)})")
