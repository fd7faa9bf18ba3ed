"""The compute threads for big arrays: a per-process pool that runs disjoint pieces of one numpy job at once.

numpy lets go of the GIL inside its loops, so a job cut into pieces that write disjoint parts of one
result (ranges of elements, blocks of rows) runs on several cores at once, and each element or row is
computed by exactly the code that one thread would run: the bits cannot change. PyTorch computes big
work on `torch.get_num_threads()` threads; gradcli does too, at most one a core, and only from BIG
elements on, where a split's cost (tens of microseconds) is small beside the work. docs/threads.md
says what runs here and the conditions it keeps:

- nothing is started, and neither `threading` nor `queue` imported, until a job is big enough to split;
- the pool belongs to the process that made it: a forked child (tests/launcher.py) makes its own;
- a thread that cannot be started (a memory limit) means fewer threads, down to the caller's alone;
- `split` returns, or raises, only after every piece has finished, also when a signal's handler (the
  --timeout timer, Ctrl-C) raises while it waits: no worker is still writing when the script goes on;
- workers see numpy arrays and functions of the engine, never an object a script can reach.
"""

from __future__ import annotations

import math
import os

import numpy as np

from gradcli.engine.state import STATE

BIG = 1 << 18                   # elements: below it, one thread. A split costs 20-50 µs on an idle machine,
                                # and a worker that the machine runs late can keep the caller waiting; an
                                # elementary function or an ordered sum takes 0.3-0.5 ms at this size
BIG_BINARY = 1 << 20            # the same for the memory-bound + - * / (0.2-0.3 ms at this size)
PIECES = 4                      # ranges a thread: a thread that the machine runs less takes fewer of them
STACK = 256 << 10               # bytes of stack a worker gets: numpy's loops need little, and stacks count
                                # against the memory limit (RLIMIT_DATA) the gradcli command sets


class _Pool:
    """The workers of one process, each waiting on a box for its next job."""

    __slots__ = ("pid", "boxes", "new_box", "put", "copy_context")

    def __init__(self):
        import contextvars
        import queue

        self.pid = os.getpid()
        self.boxes: list = []
        self.new_box = queue.SimpleQueue
        self.put = queue.SimpleQueue.put
        self.copy_context = contextvars.copy_context

    def grow(self, want: int) -> None:
        """Start workers until there are `want`, or until one cannot be started."""
        import queue
        import threading

        try:
            before = threading.stack_size(STACK)
        except (ValueError, RuntimeError):      # a platform without settable stacks: its default
            before = None
        try:
            while len(self.boxes) < want:
                box = queue.SimpleQueue()
                worker = threading.Thread(target=_serve, args=(box,), daemon=True,
                                          name=f"gradcli-worker-{len(self.boxes) + 1}")
                try:
                    worker.start()
                except (RuntimeError, MemoryError):     # "can't start new thread": compute with fewer
                    break
                self.boxes.append(box)
        finally:
            if before is not None:
                threading.stack_size(before)


def _serve(box) -> None:
    """A worker's life: take part in each job it is handed, in the caller's context (numpy's error state)."""
    while True:
        context, shared, task, finished, stop = box.get()
        context.run(_take, shared, task, finished, stop)
        del context, shared, task, finished, stop       # let the job's arrays go while waiting for the next


_pool: _Pool | None = None
_cores: tuple = (0, 1)          # (pid, cores this process may run on), read once per process


def cores() -> int:
    global _cores
    pid = os.getpid()
    if _cores[0] != pid:
        try:
            n = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            n = os.cpu_count() or 1
        _cores = (pid, max(1, n))
    return _cores[1]


def threads() -> int:
    """The threads big work runs on: torch.get_num_threads(), at most one a core."""
    n = STATE.threads
    return 1 if n < 2 else min(n, cores())


def _workers(want: int) -> _Pool | None:
    """This process's pool with up to `want` workers started (None when none could be)."""
    global _pool
    pool = _pool
    if pool is None or pool.pid != os.getpid():     # none yet, or the parent's, whose threads did not survive fork
        pool = _pool = _Pool()
    if len(pool.boxes) < want:
        pool.grow(want)
    return pool if pool.boxes else None


def split(n: int, task, align: int = 1, parts: int | None = None) -> None:
    """Run task(begin, end) over range(n), cut into ranges (at most `parts`; default PIECES a thread)
    whose inner boundaries are multiples of `align`, on the workers and the calling thread at once.
    Returns when every range is done; raises the first error any of them raised."""
    want = threads()
    cuts = ranges(n, want * PIECES if parts is None else parts, align)
    pool = _workers(min(want, len(cuts)) - 1) if len(cuts) > 1 and want > 1 else None
    if pool is None:
        for begin, end in cuts:
            task(begin, end)
    else:
        # no lock: jobs from two threads, or a split inside a piece, queue up in the workers' boxes, and
        # a caller only ever waits for pieces that a running thread has taken
        _run(pool, min(want, len(cuts)) - 1, cuts, task)


def _run(pool: _Pool, helpers: int, cuts: list, task) -> None:
    """Every thread takes the next range until none is left, so a thread that the machine runs less
    (other processes, a worker still asleep) simply takes fewer; each range taken is reported done on
    `finished`, and the caller returns once all are, never waiting for a worker that took none."""
    shared, finished, stop = iter(cuts), pool.new_box(), []
    copy_context = pool.copy_context
    items = [(copy_context(), shared, task, finished, stop) for _ in range(min(helpers, len(pool.boxes)))]
    error = None
    sent = False
    while True:
        try:
            if not sent:
                sent = True
                list(map(pool.put, pool.boxes, items))  # one C loop: all are sent before a signal's handler runs
            _take(shared, task, finished, stop)
            break
        except BaseException as raised:         # a handler raised between two ranges (--timeout, Ctrl-C)
            error = error or raised
            stop.append(raised)                 # the ranges left are skipped, and still reported
    left = len(cuts)
    while left:
        # SimpleQueue.get runs signal handlers while it blocks, and one may raise: keep the first error and
        # wait on, so that no worker is still writing into an array when the caller goes on
        try:
            report = finished.get()
        except BaseException as raised:
            error = error or raised
            stop.append(raised)
            continue
        left -= 1
        if report is not None and error is None:
            error = report
    if error is not None:
        raise error


def _take(shared, task, finished, stop) -> None:
    """Run ranges from `shared` (a list iterator: taking one is a single step under the GIL) until none is
    left, reporting each; after an error anywhere (`stop`), the ranges still taken are only reported."""
    for begin, end in shared:
        if stop:
            finished.put(None)
            continue
        try:
            task(begin, end)
        except BaseException as error:
            stop.append(error)
            finished.put(error)
        else:
            finished.put(None)


def ranges(n: int, parts: int, align: int = 1) -> list:
    """range(n) cut into at most `parts` nearly equal ranges, each inner boundary a multiple of `align`."""
    units = -(-n // align)
    parts = max(1, min(parts, units))
    cuts = [min(n, (units * i // parts) * align) for i in range(parts + 1)]
    return [(b, e) for b, e in zip(cuts, cuts[1:]) if b < e]


_blas: tuple = (0, False)        # (pid, whether numpy's BLAS runs on one thread), read once per process


def blas_alone() -> bool:
    """Whether numpy's BLAS computes on one thread (OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or OMP_NUM_THREADS,
    the first one set, is 1, as OpenBLAS reads them): only then are matrix products split here; otherwise
    BLAS's own threads already use the cores."""
    global _blas
    pid = os.getpid()
    if _blas[0] != pid:
        setting = next((os.environ[name] for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
                        if os.environ.get(name)), "")
        _blas = (pid, setting.strip() == "1")
    return _blas[1]


def worth(size: int, least: int = BIG) -> bool:
    """Whether a job over `size` elements is split: `least` or more, and more than one thread to split it on."""
    return size >= least and STATE.threads > 1 and cores() > 1


# --------------------------------------------------------------------------------------- elementwise
# IEEE addition, subtraction, multiplication and division round each element on its own, whatever
# numpy's loop (vector or scalar, where a piece starts): pieces of rows give the bits of one call.
EXACT = frozenset((np.add, np.subtract, np.multiply, np.true_divide))


def binary(ufunc, x, y, out=None):
    """ufunc(x, y) (into `out` when given), split by rows over the threads when the result is big, both
    operands are arrays of one floating dtype and ufunc rounds elementwise (EXACT); else ufunc(x, y)."""
    if (ufunc in EXACT and x.__class__ is np.ndarray and y.__class__ is np.ndarray and x.dtype == y.dtype
            and x.dtype.kind in "fV"):
        shape = x.shape if x.shape == y.shape else np.broadcast_shapes(x.shape, y.shape)
        size = math.prod(shape)
        if worth(size, BIG_BINARY) and shape:
            if out is None:
                if not (_c_ordered(x) and _c_ordered(y)):
                    return ufunc(x, y)          # numpy lays the result out after its inputs: keep its layout
                out = np.empty(shape, x.dtype)
            elif out.shape != shape or out.dtype != x.dtype or _overlaps(x, out) or _overlaps(y, out):
                return ufunc(x, y, out=out)
            xs = x if x.shape == shape else np.broadcast_to(x, shape)
            ys = y if y.shape == shape else np.broadcast_to(y, shape)
            if len(shape) == 1 or shape[0] < 2 * threads():     # too few rows: pieces of the flat run
                xs, ys, target = _flat(xs), _flat(ys), _flat(out)
                if xs is None or ys is None or target is None:
                    return ufunc(x, y, out=out)
            else:
                target = out

            def piece(begin, end):
                ufunc(xs[begin:end], ys[begin:end], out=target[begin:end])
            split(len(target), piece)
            return out
    return ufunc(x, y) if out is None else ufunc(x, y, out=out)


def multiply(a, b):
    """a * b for backward formulas: by binary() when both are big arrays, else the operator itself
    (on Tensors when the formula is recorded)."""
    if a.__class__ is np.ndarray and b.__class__ is np.ndarray and (a.size >= BIG_BINARY or b.size >= BIG_BINARY):
        return binary(np.multiply, a, b)
    return a * b


def _c_ordered(a: np.ndarray) -> bool:
    """Whether a's elements lie in C order (C-contiguous, or a slice or broadcast view of such an array): for
    two such operands numpy makes a C-contiguous result, as binary() does (checked on 101 pairs of layouts)."""
    if a.flags.c_contiguous:
        return True
    last = None
    for n, stride in zip(a.shape, a.strides):
        if n > 1 and stride != 0:
            if stride < 0 or (last is not None and stride >= last):
                return False
            last = stride
    return True


def _overlaps(a: np.ndarray, out: np.ndarray) -> bool:
    """Whether `a` may share memory with `out` other than element for element (`out` itself, as `x += y`
    is): then one call, which numpy makes as if the inputs were copied first, and pieces would not."""
    if a is out or not np.may_share_memory(a, out):
        return False
    return not (a.shape == out.shape and a.strides == out.strides
                and a.__array_interface__["data"][0] == out.__array_interface__["data"][0])


def _flat(a):
    """a as one run of elements without a copy, or None."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    return None
