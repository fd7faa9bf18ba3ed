"""The memory budget: how many bytes one tensor (and, under the `gradcli` command, the whole process)
may take, checked before allocating with PyTorch's allocator message, and numpy's MemoryError reported
as PyTorch reports it.

Two layers: checks before the fact (tensor factories and the ops whose results outgrow their inputs
compare the bytes they are about to allocate with the budget), and a process-wide backstop set only by
the `gradcli` command (never in-process, where the caller owns the process): RLIMIT_DATA caps the
process's writable memory at its start-up footprint plus the budget, so any allocation past it fails
with MemoryError instead of waking the kernel's OOM killer.

The budget also bounds the language's strings, lists and tuples (STATE.max_items, read by
gradcli.language.bounds and Tensor.tolist): a list holds a pointer an item. The figures live in the
engine's state (gradcli.engine.state), which a session owns.
"""

from __future__ import annotations

import math
import os

from gradcli.engine.state import STATE

ITEMS_CAP = 10 ** 8         # the longest string, list or tuple a script may build in one step, or fewer
                            # under a small --max-memory (set_max_memory): 8 bytes an item


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


# STATE.max_memory: bytes one tensor (and, under the gradcli command, the script's data) may take; 0 is no
# limit. STATE.large_result: an element count below which no op result can come near the budget, so the
# engine tests one product against it and computes exact sizes only past it.


def max_memory() -> int:
    """The memory budget in bytes (0: none)."""
    return STATE.max_memory


def set_max_memory(nbytes: int | None) -> None:
    """Set the budget: bytes, 0 for none, None for the default (half the machine's memory)."""
    budget = default_max_memory() if nbytes is None else int(nbytes)
    STATE.max_memory = budget
    STATE.large_result = budget // 8 if budget else 1 << 62       # 8: the widest element (int64, float64)
    # A list holds a pointer an item, and the values it builds by doubling peak at twice that: the
    # language's bounds on strings, lists and tuples follow the budget, as tensors do
    STATE.max_items = ITEMS_CAP if not budget else max(1 << 20, min(ITEMS_CAP, budget // 16))


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
        message += f" (gradcli's --max-memory is {show_bytes(STATE.max_memory)})"
    return RuntimeError(message)


def check_tensor(shape, itemsize: int) -> None:
    """Refuse a tensor of `shape` and element size `itemsize` before allocating it: PyTorch's
    overflow message when its byte count does not fit in 64 bits, its allocator message past the
    budget."""
    n = 1
    for d in shape:
        n *= d
    nbytes = n * itemsize
    if nbytes <= STATE.max_memory or (not STATE.max_memory and nbytes < 1 << 63):
        if n == 0:
            _empty_within_numpy(shape, itemsize)
        return
    if nbytes >= 1 << 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{', '.join(map(str, shape))}]")
    if STATE.max_memory:
        raise allocation_error(nbytes)


def _empty_within_numpy(shape, itemsize: int) -> None:
    """An empty tensor is no memory, but numpy still refuses one whose non-zero sizes would span 2**63 bytes
    (PyTorch keeps the sizes only): a clear refusal instead of numpy's own error."""
    span = itemsize
    for d in shape:
        span *= d or 1
    if span >= 1 << 63:
        raise NotImplementedError(f"gradcli does not make an empty tensor of sizes [{', '.join(map(str, shape))}]: "
                                  "its arrays stop short of 2**63 bytes across their non-zero sizes (PyTorch makes "
                                  "it, as sizes only)")


def check_broadcast(x, y) -> None:
    """The result of a binary op on numpy operands x and y (already in the result dtype), called
    only when x.size * y.size passes the threshold. A meta operand's result takes one element (gradcli.engine.meta):
    nothing to check."""
    import numpy as np
    if any(isinstance(v, np.ndarray) and v.__class__ is not np.ndarray for v in (x, y)):
        return
    try:
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    except ValueError:
        return                      # the op itself reports PyTorch's broadcast message
    check_tensor(shape, np.asanyarray(x).dtype.itemsize)


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
        limit = f" (gradcli's --max-memory is {show_bytes(STATE.max_memory)})" if STATE.max_memory else ""
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
    budget = STATE.max_memory
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
