"""Resource limits for scripts gradcli did not write: a wall-clock deadline, a memory budget, and
bounds on the integers, strings and lists a script can build.

Three layers, from the most precise message to the bluntest guarantee:

  * checks before the fact, with messages a user can act on: tensor factories and the ops whose
    results outgrow their inputs (broadcasting, products, repeat, cat) compare the bytes they are
    about to allocate with the budget and fail with PyTorch's allocator message; `**`, `<<`, `*`,
    `+`, `%`, format specs and a few builtins and methods refuse integers past MAX_INT_BITS and
    strings or lists past MAX_ITEMS;
  * a process-wide backstop, set only by the `gradcli` command (never in-process, where the
    caller owns the process): RLIMIT_DATA caps the process's writable memory at its start-up
    footprint plus the budget, so any allocation past it fails with MemoryError instead of
    waking the kernel's OOM killer; numpy's MemoryError is reported as PyTorch reports it;
  * the deadline: SIGALRM raises ScriptTimeout into the script (a `while True: pass` stops at
    once, and the report names its line). A C call does not see the signal until it returns (a
    long numpy call, `max(zip(range(10**12)))`, a sort of a huge list), so the `gradcli` command
    runs under a supervising process (gradcli.supervisor) that ends it when a deadline published
    here on a shared page has passed by more than a grace period; the running statement's line is
    kept on that page too, so even then the report names it. The C loops gradcli can cut short
    (builtins over huge ranges, big integers) are bounded or run in slices, so the timer can stop
    them and say where.

This module is a leaf: it imports nothing of gradcli but its errors, so the engine, the
compiler and the command line can all use it.
"""

from __future__ import annotations

import math
import mmap
import os
import select
import signal
import struct
import sys
import threading
import time

from gradcli.errors import ScriptError

EXIT_TIMEOUT = 124          # as GNU timeout(1)

# Integers past MAX_INT_BITS would make single operations slow enough to matter: at a million bits a
# product takes 0.1 s and a division or gcd under a second, and they run in C, where the timer cannot
# stop them (only the supervisor can, by ending the process). At four million bits, division took 15 s
# and gcd 25 s.
MAX_INT_BITS = 1_000_000    # about 300,000 decimal digits
ITEMS_CAP = 10 ** 8         # the longest string, list or tuple a script may build in one step ...
MAX_ITEMS = ITEMS_CAP       # ... or fewer under a small --max-memory (set_max_memory): 8 bytes an item
CHUNK = 1 << 20             # C loops over longer ranges run in slices of this size, so the timer can stop them
INPUT_SHARE = 8             # a script's text may take this share of the memory budget (parsing takes more)


# ============================================================================ the memory budget

_FALLBACK_MEMORY = 4 << 30      # when the machine's memory cannot be read (not Linux, no sysconf)
_SLACK = 256 << 20              # room for gradcli's own runtime above its start-up footprint...
_SLACK_PER_CPU = 64 << 20       # ...and for the BLAS threads' buffers, allocated on first use


def machine_memory() -> int | None:
    """The memory this process may use: MemTotal from /proc/meminfo (or sysconf), lowered to the
    cgroup's memory limit when the process runs in a container that has one; None when unknown."""
    total = None
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemTotal:"):
                    total = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if total is None:
        try:
            total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            return None
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, "rb") as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < total:
            total = int(text)
    return total


def default_max_memory() -> int:
    """Half of the machine's memory (4 GiB when that cannot be read)."""
    total = machine_memory()
    return total // 2 if total else _FALLBACK_MEMORY


# _BUDGET[0]: bytes one tensor (and, under the gradcli command, the script's data) may take; 0 is no
# limit. LARGE_RESULT[0]: an element count below which no op result can come near the budget, so the
# engine tests one product against it and computes exact sizes only past it.
_BUDGET = [0]
LARGE_RESULT = [1 << 62]


def max_memory() -> int:
    """The memory budget in bytes (0: none)."""
    return _BUDGET[0]


def set_max_memory(nbytes: int | None) -> None:
    """Set the budget: bytes, 0 for none, None for the default (half the machine's memory)."""
    global MAX_ITEMS
    budget = default_max_memory() if nbytes is None else int(nbytes)
    _BUDGET[0] = budget
    LARGE_RESULT[0] = budget // 8 if budget else 1 << 62       # 8: the widest element (int64, float64)
    # A list holds a pointer an item, and the values it builds by doubling peak at twice that: the
    # language's bounds on strings, lists and tuples follow the budget, as tensors do
    MAX_ITEMS = ITEMS_CAP if not budget else max(1 << 20, min(ITEMS_CAP, budget // 16))


set_max_memory(None)


def parse_size(text: str) -> int:
    """`--max-memory`: bytes, or a number with K, M, G or T (powers of 1024, an optional B or iB);
    0 means no limit."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = 1
    if t and t[-1] in "KMGT":
        scale = 1024 ** ("KMGT".index(t[-1]) + 1)
        t = t[:-1]
    try:
        value = float(t)
    except ValueError:
        raise ValueError(f"invalid size {text!r} (expected bytes, or a number with K, M, G or T)") from None
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"invalid size {text!r} (expected bytes, or a number with K, M, G or T)")
    return int(value * scale)


def parse_seconds(text: str) -> float:
    """`--timeout`: seconds, a positive number; 0 means no limit."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"invalid number of seconds {text!r}") from None
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"invalid number of seconds {text!r}")
    return value


def show_bytes(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def allocation_error(nbytes: int) -> RuntimeError:
    """PyTorch's message when its CPU allocator fails; past the budget but within the machine's
    memory, where PyTorch would have succeeded, it says which limit refused."""
    message = (f"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
               f"you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)")
    total = machine_memory()
    if total is None or nbytes <= total:
        message += f" (gradcli's --max-memory is {show_bytes(_BUDGET[0])})"
    return RuntimeError(message)


def check_tensor(shape, itemsize: int) -> None:
    """Refuse a tensor of `shape` and element size `itemsize` before allocating it: PyTorch's
    overflow message when its byte count does not fit in 64 bits, its allocator message past the
    budget."""
    n = 1
    for d in shape:
        n *= d
    nbytes = n * itemsize
    if nbytes <= _BUDGET[0] or (not _BUDGET[0] and nbytes < 1 << 63):
        return
    if nbytes >= 1 << 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{', '.join(map(str, shape))}]")
    if _BUDGET[0]:
        raise allocation_error(nbytes)


def check_broadcast(x, y) -> None:
    """The result of a binary op on numpy operands x and y (already in the result dtype), called
    only when x.size * y.size passes the threshold."""
    import numpy as np
    try:
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    except ValueError:
        return                      # the op itself reports PyTorch's broadcast message
    check_tensor(shape, np.asarray(x).dtype.itemsize)


def script_exception(e: BaseException) -> BaseException:
    """The exception a script sees for `e`: numpy's MemoryError (the allocation failed, past the
    process's limit or the machine's memory) becomes PyTorch's allocator RuntimeError, and a bare
    MemoryError gets a message. The position stamped on `e` carries over."""
    if not isinstance(e, MemoryError):
        return e
    _RESERVE[0] = None      # what the script built is still there: give the report room to be made
    shape, dtype = getattr(e, "shape", None), getattr(e, "dtype", None)
    if shape is not None and dtype is not None:
        n = 1
        for d in shape:
            n *= d
        new = allocation_error(n * dtype.itemsize)
    elif not str(e):
        limit = f" (gradcli's --max-memory is {show_bytes(_BUDGET[0])})" if _BUDGET[0] else ""
        new = MemoryError(f"out of memory{limit}")
    else:
        return e
    position = getattr(e, "gradcli_position", None)
    if position is not None:
        new.gradcli_position = position
    return new


def _status_bytes(key: bytes) -> int | None:
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


# Held back by limit_process and let go when a script runs out of memory: what the script built stays
# referenced until its error is reported, and reporting needs a little memory of its own.
_RESERVE = [None]
_RESERVE_BYTES = 16 << 20


def limit_process(nbytes: int | None):
    """The `gradcli` command's backstop: cap the process's writable memory (RLIMIT_DATA) at what it
    uses now plus `nbytes` and some slack, so an allocation past the budget fails with MemoryError
    instead of the machine running out. Sets the tensor budget too. Returns what `restore_process`
    needs, or None when nothing was changed (no limit, not Linux)."""
    set_max_memory(nbytes)
    budget = _BUDGET[0]
    if not budget:
        return None
    try:
        import resource
        import numpy  # noqa: F401  -- numpy and its BLAS threads are part of the footprint measured
    except ImportError:
        return None
    used = _status_bytes(b"VmData:")
    if used is None:
        return None
    try:
        previous = resource.getrlimit(resource.RLIMIT_DATA)
        soft, hard = previous
        want = used + budget + _SLACK + _SLACK_PER_CPU * (os.cpu_count() or 1)
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        if soft != resource.RLIM_INFINITY and soft <= want:
            return None             # already tighter: keep it
        resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
    except (ValueError, OSError):
        return None
    try:
        import mmap             # private and writable, so counted in RLIMIT_DATA; never touched, so no RSS
        _RESERVE[0] = mmap.mmap(-1, _RESERVE_BYTES, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (ImportError, OSError, AttributeError, ValueError):
        pass
    return previous


def restore_process(previous) -> None:
    _RESERVE[0] = None
    if previous is None:
        return
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_DATA, previous)
    except (ValueError, OSError):
        pass


# ================================================================================ the deadline

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


def timed_out(e: ScriptTimeout, source: str, filename: str) -> TimedOut:
    """The script error for a timeout, placed where the script was: the innermost compiled closure
    on the stack when the signal landed knows its line and column (as the variables `line`, `col`
    it was compiled with)."""
    line = col = 0
    compiler = _source_file("gradcli.language.compiler")
    tb = e.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename == compiler:
            names = frame.f_locals
            if names.get("line").__class__ is int:
                line = names["line"]
                c = names.get("col")
                col = c if c.__class__ is int else 0
        tb = tb.tb_next
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
        if not self.seconds or threading.current_thread() is not threading.main_thread() \
                or not hasattr(signal, "setitimer"):
            return self
        _publish(self.seconds, self.filename)
        self.previous = signal.signal(signal.SIGALRM, self._alarm)
        signal.setitimer(signal.ITIMER_REAL, self.seconds, _RETRY)
        self.armed = True
        return self

    def cancel(self) -> None:
        if self.armed:
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
    budget = _BUDGET[0]
    most = budget // INPUT_SHARE if budget else None
    end = time.monotonic() + seconds if seconds else None
    if seconds:
        _publish(seconds, name)
    data = bytearray()
    while True:
        if end is not None:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimedOut("TimeoutError", f"{timeout_message(seconds)}, while reading the script", name)
        chunk = os.read(fd, CHUNK)
        if not chunk:
            if seconds:
                _publish(seconds, name, own=True)
            return bytes(data)
        data += chunk
        if most is not None and len(data) > most:
            raise OSError(f"the script is over {show_bytes(most)}, more than gradcli can parse within "
                          f"--max-memory ({show_bytes(budget)})")


# ============================================================== integers, strings and lists

def _too_many(kind: str, n: int) -> MemoryError:
    return MemoryError(f"a {kind} of {n} items is too large (gradcli allows at most {MAX_ITEMS})")


def _int_too_large(what: str = "") -> MemoryError:
    return MemoryError(f"{what}integer results are limited to about 300,000 digits in gradcli")


_SEQUENCES = (str, list, tuple)


def _count(n):
    """`n` as a repetition count, or None when it is not one (the operation then fails by itself)."""
    if n.__class__ is int:
        return n
    if n.__class__ is bool or n.__class__ in _SEQUENCES or n.__class__ is float:
        return None
    try:
        return n.__index__()
    except Exception:
        return None


def _check_mul(a, b) -> None:
    if a.__class__ is int and b.__class__ is int:
        if a and b and a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise _int_too_large()
        return
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, _SEQUENCES):
            n = _count(n)
            if n is not None and n > 0 and len(seq) * n > MAX_ITEMS:
                raise _too_many(type(seq).__name__, len(seq) * n)


def _check_add(a, b) -> None:
    if isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES) and len(a) + len(b) > MAX_ITEMS:
        raise _too_many(type(a).__name__, len(a) + len(b))


def _check_pow(a, b) -> None:
    if a.__class__ is int and b.__class__ is int and b > 0 and abs(a) > 1:
        if b * math.log2(abs(a)) > MAX_INT_BITS:
            raise _int_too_large(f"{a if abs(a) < 10**6 else 'integer'} ** {b} is too large: ")


def _check_lshift(a, b) -> None:
    if a.__class__ is int and b.__class__ is int and a and b > 0 and a.bit_length() + b > MAX_INT_BITS:
        raise _int_too_large()


def _check_mod(a, b) -> None:
    if a.__class__ is str and "%" in a:
        check_percent_format(a, b)


# operator name (compiler.py's) -> check(a, b), run before the operation on any operands that are
# not tensors; the rest of the operators cannot grow a value past its operands' size
BINOP_CHECKS = {"mul": _check_mul, "add": _check_add, "pow": _check_pow, "lshift": _check_lshift,
                "mod": _check_mod}


def _width(digits: str) -> int:
    return int(digits) if len(digits) < 12 else MAX_ITEMS + 1


def check_format_spec(spec: str) -> None:
    """A format spec (f'{x:>{w}}') whose width or precision would build a huge string."""
    run = ""
    for ch in spec + " ":
        if "0" <= ch <= "9":
            run += ch
        elif run:
            if _width(run) > MAX_ITEMS:
                raise MemoryError(f"format width or precision {run} is too large (gradcli allows at most "
                                  f"{MAX_ITEMS})")
            run = ""


def check_percent_format(fmt: str, args) -> None:
    """`fmt % args`: widths and precisions, written in fmt or taken from args by '*'."""
    i, n = 0, len(fmt)
    while True:
        i = fmt.find("%", i)
        if i < 0 or i + 1 >= n:
            return
        j = i + 1
        while j < n and fmt[j] in "-+ #0":
            j += 1
        if j < n and fmt[j] == "(":                 # %(name)s: a mapping key
            j = fmt.find(")", j) + 1 or n
            while j < n and fmt[j] in "-+ #0":
                j += 1
        for _ in range(2):                          # the width, then the precision after a '.'
            start = j
            while j < n and fmt[j].isdigit():
                j += 1
            if j > start:
                check_format_spec(fmt[start:j])
            elif j < n and fmt[j] == "*":
                for v in (args if args.__class__ is tuple else (args,)):
                    if v.__class__ is int and abs(v) > MAX_ITEMS:
                        raise MemoryError(f"format width or precision {abs(v)} is too large (gradcli allows "
                                          f"at most {MAX_ITEMS})")
                j += 1
            if j < n and fmt[j] == ".":
                j += 1
            else:
                break
        i = j + 1 if j < n and fmt[j] == "%" else j


# ---- builtins, methods and math functions that can build big values

class Bounded:
    """A builtin, method or math function with a bound on what it builds; shown as the original."""

    __slots__ = ("fn", "shown")

    def __init__(self, original, fn):
        self.fn = fn
        self.shown = repr(original)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return self.shown


class BoundedMethod:
    """`obj.name` for a method of BOUNDED_METHODS: calls fn(obj, ...), shown as the original method."""

    __slots__ = ("obj", "name", "fn")

    def __init__(self, obj, name: str, fn):
        self.obj, self.name, self.fn = obj, name, fn

    def __call__(self, *args, **kwargs):
        return self.fn(self.obj, *args, **kwargs)

    def __repr__(self) -> str:
        return repr(getattr(self.obj, self.name))


def _take(iterable, kind: str, room: int | None = None) -> list:
    """The items of `iterable` as a list, refusing more than `room` (MAX_ITEMS) of them before building
    them all."""
    if room is None:
        room = MAX_ITEMS
    if iterable.__class__ in (list, tuple, str, range):
        n = len(iterable)
        if n > room:
            raise _too_many(kind, n)
        return list(iterable)
    it = iter(iterable)
    out = []
    append = out.append
    for x in it:
        append(x)
        if len(out) > room:
            raise MemoryError(f"a {kind} of more than {room} items is too large (gradcli allows at most "
                              f"{MAX_ITEMS})")
    return out


# Each bounded function takes the original's arguments as they come and, after its check, calls the
# original with them, so wrong arguments get Python's own messages.

def _list(*args, **kwargs):
    if len(args) == 1 and not kwargs:
        return _take(args[0], "list")
    return list(*args, **kwargs)


def _tuple(*args, **kwargs):
    if len(args) == 1 and not kwargs and args[0].__class__ is not tuple:
        return tuple(_take(args[0], "tuple"))
    return tuple(*args, **kwargs)


def _sorted(*args, **kwargs):
    if len(args) == 1:
        return sorted(_take(args[0], "list"), **kwargs)
    return sorted(*args, **kwargs)


def _sum(*args, **kwargs):
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if args and isinstance(start, (list, tuple)):
        items = _take(args[0], "list")
        total = len(start)
        for x in items:
            if isinstance(x, (list, tuple)):
                total += len(x)
                if total > MAX_ITEMS:
                    raise _too_many(type(start).__name__, total)
        return sum(items, *args[1:], **kwargs)
    return sum(*args, **kwargs)


_POWMOD_WORK = 2e7      # pow(b, e, m) costs about bits(e) * (bits(m) / 64) ** 1.6 of these: 25 s at 3e8


def _pow(*args, **kwargs):
    if len(args) == 2 and not kwargs:
        _check_pow(*args)
    elif len(args) == 3 and not kwargs and all(a.__class__ is int for a in args):
        e, m = args[1].bit_length(), args[2].bit_length()
        if e * max(1.0, m / 64) ** 1.6 > _POWMOD_WORK:
            raise MemoryError(f"pow() with a {e}-bit exponent and a {m}-bit modulus is too large to compute "
                              "in gradcli")
    return pow(*args, **kwargs)


# ---- C loops over long ranges: sum(range(10**12)) would hold the interpreter for hours, where no
# signal is seen; in slices, the deadline's timer gets its turn between two of them.

def _long_range(x) -> bool:
    if x.__class__ is not range:
        return False
    try:
        return len(x) > CHUNK
    except OverflowError:           # more than sys.maxsize items
        return True


def _slices(r: range):
    i = 0
    while True:
        piece = r[i:i + CHUNK]
        if not piece:
            return
        yield piece
        i += CHUNK


def _sum_range(*args, **kwargs):
    if args and _long_range(args[0]):
        total = args[1] if len(args) > 1 else kwargs.get("start", 0)
        for piece in _slices(args[0]):
            total = total + sum(piece)
        return total
    return _sum(*args, **kwargs)


def _extreme(builtin):
    def fn(*args, **kwargs):
        if len(args) == 1 and _long_range(args[0]) and set(kwargs) <= {"key", "default"}:
            key = kwargs.get("key")
            best = [builtin(piece, key=key) for piece in _slices(args[0])]
            return builtin(best, key=key)
        return builtin(*args, **kwargs)
    return fn


def _any(*args):
    if len(args) == 1 and _long_range(args[0]):
        return any(any(piece) for piece in _slices(args[0]))
    return any(*args)


def _all(*args):
    if len(args) == 1 and _long_range(args[0]):
        return all(all(piece) for piece in _slices(args[0]))
    return all(*args)


def contains(container, item) -> bool:
    """`item in container`; an int in a range is O(1), anything else is a scan, sliced when long."""
    if container.__class__ is range and item.__class__ is not int and _long_range(container):
        for piece in _slices(container):
            if item in piece:
                return True
        return False
    return item in container


def _range_count(r, *args):
    if len(args) == 1 and args[0].__class__ is not int and _long_range(r):
        return sum(piece.count(args[0]) for piece in _slices(r))
    return r.count(*args)


def _range_index(r, *args):
    if len(args) == 1 and args[0].__class__ is not int and _long_range(r):
        for n, piece in enumerate(_slices(r)):
            if args[0] in piece:
                return n * CHUNK + piece.index(args[0])
    return r.index(*args)


def _round(*args, **kwargs):
    if len(args) == 2 and not kwargs:
        number, ndigits = args
        if number.__class__ is int and ndigits.__class__ is int and ndigits < 0 \
                and -ndigits > number.bit_length() // 3 + 2:
            # |number| < 10**-ndigits / 2: Python's answer is 0, after computing 10**-ndigits (for ages)
            return 0
    return round(*args, **kwargs)


def _factorial(*args):
    if len(args) == 1:
        n = args[0]
        if n.__class__ is int and 1 < n < 1 << 63 and math.lgamma(n + 1) / math.log(2) > MAX_INT_BITS:
            raise _int_too_large(f"factorial({n}) is too large: ")
    return math.factorial(*args)


def _log2_product(n: int, k: int) -> float:
    """log2 of n * (n-1) * ... * (n-k+1), without computing it."""
    if k * n.bit_length() <= MAX_INT_BITS:
        return 0.0                  # below n**k, so small enough whatever it is
    if n >= 1 << 1000:
        return math.inf
    return (math.lgamma(n + 1) - math.lgamma(n - k + 1)) / math.log(2)


def _comb(*args):
    if len(args) == 2 and args[0].__class__ is int and args[1].__class__ is int:
        n, k = args
        k = min(k, n - k)
        if k > 0 and _log2_product(n, k) - math.lgamma(k + 1) / math.log(2) > MAX_INT_BITS:
            raise _int_too_large(f"comb({n}, {args[1]}) is too large: ")
    return math.comb(*args)


def _perm(*args):
    if args and all(a.__class__ is int for a in args) and len(args) <= 2:
        n = args[0]
        k = args[1] if len(args) == 2 else n
        if 0 < k <= n and _log2_product(n, k) > MAX_INT_BITS:
            raise _int_too_large(f"perm({n}, {k}) is too large: ")
    return math.perm(*args)


def _prod(*args, **kwargs):
    if len(args) == 1:
        items = _take(args[0], "list")
        start = kwargs.get("start", 1)
        bits = start.bit_length() if start.__class__ is int else 0
        for x in items:
            if x.__class__ is int:
                bits += x.bit_length()
        if bits > MAX_INT_BITS:
            raise _int_too_large()
        return math.prod(items, **kwargs)
    return math.prod(*args, **kwargs)


def _fsum(*args):
    return math.fsum(_take(args[0], "list")) if len(args) == 1 else math.fsum(*args)


def bounded_builtins() -> dict:
    import builtins
    table = {"list": _list, "tuple": _tuple, "sorted": _sorted, "sum": _sum_range, "pow": _pow, "round": _round,
             "min": _extreme(min), "max": _extreme(max), "any": _any, "all": _all}
    return {name: Bounded(getattr(builtins, name), fn) for name, fn in table.items()}


def bounded_math() -> dict:
    table = {"factorial": _factorial, "comb": _comb, "perm": _perm, "prod": _prod, "fsum": _fsum}
    return {name: Bounded(getattr(math, name), fn) for name, fn in table.items() if hasattr(math, name)}


def _widened(name: str):
    method = getattr(str, name)

    def fn(s, *args, **kwargs):
        if args and args[0].__class__ is int and args[0] > MAX_ITEMS:
            raise _too_many("str", args[0])
        return method(s, *args, **kwargs)
    return fn


def _replace(s, *args, **kwargs):
    if len(args) >= 2 and args[0].__class__ is str and args[1].__class__ is str:
        old, new = args[0], args[1]
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        if len(new) > len(old):
            times = s.count(old) if old else len(s) + 1
            if count.__class__ is int and count >= 0:
                times = min(times, count)
            n = len(s) + times * (len(new) - len(old))
            if n > MAX_ITEMS:
                raise _too_many("str", n)
    return s.replace(*args, **kwargs)


def _join(sep, *args, **kwargs):
    if len(args) == 1 and not kwargs:
        items = _take(args[0], "list")
        n = len(sep) * max(len(items) - 1, 0)
        for x in items:
            if x.__class__ is str:
                n += len(x)
        if n > MAX_ITEMS:
            raise _too_many("str", n)
        return sep.join(items)
    return sep.join(*args, **kwargs)


def _extend(lst, *args, **kwargs):
    if len(args) == 1 and not kwargs:
        return lst.extend(_take(args[0], "list", MAX_ITEMS - len(lst)))
    return lst.extend(*args, **kwargs)


# type -> {method name: function(obj, *args)}, for access.py's table of script-facing methods
BOUNDED_METHODS = {
    str: {"center": _widened("center"), "ljust": _widened("ljust"), "rjust": _widened("rjust"),
          "zfill": _widened("zfill"), "replace": _replace, "join": _join},
    list: {"extend": _extend},
    range: {"count": _range_count, "index": _range_index},
}
