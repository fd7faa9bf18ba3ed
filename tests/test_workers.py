"""The worker threads for big arrays (gradcli/engine/workers.py): the same bits as one thread, started only
when a job is big, per process across fork, fewer when a thread cannot start, and never still running when
an op returns or raises (errors, Ctrl-C, --timeout)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gradcli.engine import cascade, workers
from gradcli.engine import elementary as cr
from gradcli.engine import factories as torch
from gradcli.engine.state import STATE

import launcher

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cores(monkeypatch):
    """Compute on `n` cores, whatever this machine has (one core: the split runs inline, but runs); the
    test fails if nothing was split."""
    splits = []
    split = workers.split

    def counted(*args, **kwargs):
        splits.append(args[0])
        return split(*args, **kwargs)

    def use(n: int) -> None:
        monkeypatch.setattr(workers, "cores", lambda: n)
        cascade._PLANS.clear()          # a plan is made for the thread count it will run with
    monkeypatch.setattr(workers, "split", counted)
    before = STATE.threads
    STATE.threads = 2
    yield use
    STATE.threads = before
    cascade._PLANS.clear()
    assert splits, "nothing was big enough to split"


def _bits(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _sample(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(n).astype(np.float32) * rng.choice([1e-3, 1, 10, 100], n).astype(np.float32)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, 88.7, -103.9, 1e30], np.float32)
    v[::97] = special[rng.integers(0, special.size, v[::97].size)]
    return v


# ---------------------------------------------------------------------------------------------- bits

@pytest.mark.parametrize("n", [workers.BIG, workers.BIG + 13, 600_001, (1 << 20) + 77])
def test_elementary_functions_give_one_threads_bits(cores, n):
    x = _sample(n, n)
    names = ("exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
             "atan", "sinh", "cosh", "tanh")
    with np.errstate(all="ignore"):
        cores(1)
        alone = [_bits(getattr(cr, name)(x)) for name in names]
        cores(2)
        split = [_bits(getattr(cr, name)(x)) for name in names]
    assert [name for name, a, b in zip(names, alone, split) if a != b] == []


@pytest.mark.parametrize("shape, dims", [(shape, dims) for shape in [(4096, 1000), (300, 1000), (1000, 300), (4000, 77),
                                                                 (65536, 8), (3, 100_000)] for dims in [(1,), None]]
)
def test_sums_give_one_threads_bits(cores, shape, dims):
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    cores(1)
    alone = cascade.sum_array(x, dims)
    cores(2)
    assert _bits(cascade.sum_array(x, dims)) == _bits(alone)


def test_binary_ops_give_one_threads_bits_and_a_fresh_result(cores):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2048, 600)).astype(np.float32)
    col = rng.standard_normal((2048, 1)).astype(np.float32)
    flat = rng.standard_normal(workers.BIG_BINARY + 5)
    cases = [(np.multiply, x, x), (np.true_divide, x, col), (np.subtract, col, x), (np.add, flat, flat[::-1])]
    cores(1)
    alone = [_bits(workers.binary(f, a, b)) for f, a, b in cases]
    cores(2)
    assert [_bits(workers.binary(f, a, b)) for f, a, b in cases] == alone
    into = x.copy()
    workers.binary(np.add, into, x, out=into)
    assert _bits(into) == _bits(x + x)


_PRODUCT_SHAPES = [(256, 784, 512), (784, 256, 512), (1000, 200, 100), (300, 200, 1000), (1001, 300, 300),
                   (517, 200, 700)]


def test_matrix_products_split_by_rows_give_one_threads_bits():
    # Products are split only when numpy's BLAS runs on one thread, which OpenBLAS reads when it starts: so in
    # a fresh interpreter with OPENBLAS_NUM_THREADS=1. OpenBLAS sums a row in another order when the row lies in
    # a call of at most 100^3 multiply-adds (small-matrix kernels) or among the rows left over after a call's
    # last whole tile of rows (12 on Haswell and Zen): every piece of every block stays above the first, every
    # piece starts on a tile boundary, and the last ends with the whole product's leftover rows.
    got = _fresh(f"""
        import os
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
        import numpy as np
        from gradcli.engine import workers
        from gradcli.engine.ops import linalg
        from gradcli.engine.state import STATE
        tile = linalg._row_tile()
        print("tile", tile in linalg._TILES)
        # the tile found: rows from a multiple of it on, computed alone, are the whole product's; from half a
        # tile past one they are not
        rng = np.random.default_rng(5)
        x = rng.standard_normal((5 * tile + 100, 128)).astype(np.float32)
        y = rng.standard_normal((128, 384)).astype(np.float32)
        whole = x @ y
        print("aligned", all(np.array_equal(x[s:] @ y, whole[s:]) for s in range(0, 5 * tile, tile)))
        print("unaligned", tile < 2 or not np.array_equal(x[tile // 2 + 1:] @ y, whole[tile // 2 + 1:]))
        STATE.threads = 2
        for m, k, n in {_PRODUCT_SHAPES!r}:
            rng = np.random.default_rng(m + k + n)
            x = rng.standard_normal((m, k)).astype(np.float32)
            y = rng.standard_normal((k, n)).astype(np.float32)
            shortest = k % linalg._BLOCK or linalg._BLOCK
            for a, b in ((x, y), (np.asfortranarray(x), y), (x, np.asfortranarray(y))):
                workers.cores = lambda: 1
                alone = linalg._blocked(a, b)
                workers.cores = lambda: 2
                cuts = linalg._row_cuts(m, k, n)
                ok = (len(cuts) > 2 and cuts[0] == 0 and cuts[-1] == m
                      and all(cut % tile == 0 for cut in cuts[:-1])
                      # a piece's last block (k % 128 inner indices) is its smallest sgemm
                      and min(e - b for b, e in zip(cuts, cuts[1:])) * shortest * n > linalg._SMALL_GEMM
                      and np.array_equal(linalg._blocked(a, b).view(np.uint32), alone.view(np.uint32)))
                print(f"{{m}}x{{k}}x{{n}}", ok)
        """)
    assert got == ["tile", "True", "aligned", "True", "unaligned", "True"] + \
        [word for m, k, n in _PRODUCT_SHAPES for word in (f"{m}x{k}x{n}", "True") * 3]


def test_the_elementwise_workload_gives_one_threads_gradient(cores):
    def grad():
        torch.manual_seed(0)
        x = torch.randn(1100, 1000, requires_grad=True)     # big enough for every kind of split
        for _ in range(2):
            out = ((x * x).exp().sum(1).log()).mean()
            out.backward()
        return _bits(out._a) + _bits(x.grad._a)
    cores(1)
    alone = grad()
    cores(2)
    assert grad() == alone


# ---------------------------------------------------------------------------------------- the split

def test_split_runs_every_range_once_on_aligned_boundaries(cores):
    cores(2)
    seen = []
    workers.split(1000, lambda b, e: seen.append((b, e)), align=64)
    seen.sort()
    assert seen[0][0] == 0 and seen[-1][1] == 1000
    assert all(e == b2 for (_, e), (b2, _) in zip(seen, seen[1:]))
    assert all(b % 64 == 0 for b, _ in seen)


def test_an_error_in_a_piece_is_raised_after_every_piece_has_ended(cores):
    cores(2)
    ended = []

    def task(begin, end):
        if begin == 0:
            raise MemoryError("out of memory")
        time.sleep(0.02)
        ended.append(begin)

    cuts = workers.ranges(800, workers.threads() * workers.PIECES)
    with pytest.raises(MemoryError):
        workers.split(800, task)
    running = len(ended)
    time.sleep(0.1)
    assert len(ended) == running                # nothing was still running when split raised
    assert len(ended) < len(cuts)               # and the pieces after the error were skipped
    done = []
    workers.split(800, lambda b, e: done.append(b))     # the pool still works
    assert sorted(done) == [b for b, _ in cuts]


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill")
@pytest.mark.parametrize("where", ["in a piece", "waiting"])
def test_ctrl_c_while_workers_run_waits_for_them_then_raises(cores, where):
    cores(2)
    ended = []
    started = threading.Event()

    def task(begin, end):
        if threading.current_thread() is threading.main_thread():
            started.wait(5)                     # a worker has taken a piece
            if where == "in a piece":
                time.sleep(0.3)                 # the interrupt lands in the caller's own piece
            return                              # else the caller is done first, and waits for the worker
        started.set()
        time.sleep(0.3)
        ended.append(begin)

    main = threading.main_thread().ident
    timer = threading.Timer(0.1, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            workers.split(800, task)
        running = len(ended)
        assert running >= 1                     # the interrupt came while a worker was busy...
        time.sleep(0.4)
        assert len(ended) == running            # ...and split waited for it before raising
    finally:
        timer.cancel()
    n = workers.BIG_BINARY
    assert workers.binary(np.add, np.ones(n), np.ones(n)).sum() == 2 * n      # the pool still works


def _fresh(code: str) -> str:
    # (Python 3.12 warns that fork() in a process with threads may deadlock: the fork test forks one)
    out = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", textwrap.dedent(code)],
                         capture_output=True, text=True, cwd=ROOT,
                         timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    return out.stdout.split()


_WORKERS = "sum(t.name.startswith('gradcli-worker') for t in __import__('threading').enumerate())"


def test_threads_start_with_the_first_big_op_and_follow_set_num_threads():
    got = _fresh(f"""
        import sys
        from gradcli.engine import workers
        workers.cores = lambda: 2
        from gradcli.session import Session
        s = Session()
        s.run_source("import torch\\nx = torch.ones(100, 100)\\ny = (x * x).exp().sum()")
        print('threading' in sys.modules, 'queue' in sys.modules)
        s.run_source("torch.set_num_threads(1)\\nx = torch.ones(1000, 1000)\\ny = (x * x).exp().sum(1)")
        print('threading' in sys.modules)
        s.run_source("torch.set_num_threads(2)\\ny = (x * x).exp().sum(1)")
        print({_WORKERS})
        """)
    assert got == ["False", "False", "False", "1"]


def test_a_forked_child_makes_its_own_pool():
    got = _fresh(f"""
        import os
        import numpy as np
        from gradcli.engine import workers, elementary
        workers.cores = lambda: 2
        x = np.linspace(-3, 3, 1 << 20, dtype=np.float32)
        want = elementary.exp(x).tobytes()
        parent = workers._pool.pid
        pid = os.fork()
        if pid == 0:
            same = elementary.exp(x).tobytes() == want
            os._exit(0 if same and workers._pool.pid == os.getpid() != parent and {_WORKERS} == 1 else 1)
        print(os.waitpid(pid, 0)[1], {_WORKERS})
        """)
    assert got == ["0", "1"]


def test_a_thread_that_cannot_start_means_one_thread_not_an_error():
    got = _fresh(f"""
        import threading
        import numpy as np
        from gradcli.engine import workers, elementary
        workers.cores = lambda: 2
        def refuse(self):
            raise RuntimeError("can't start new thread")
        threading.Thread.start = refuse
        x = np.linspace(-3, 3, 1 << 20, dtype=np.float32)
        same = elementary.exp(x).tobytes() == np.exp(x.astype(np.float64)).astype(np.float32).tobytes()
        print(same, len(workers._pool.boxes), {_WORKERS})
        """)
    assert got == ["True", "0", "0"]


def test_a_memory_limit_too_small_for_a_stack_means_one_thread():
    got = _fresh("""
        import resource
        import numpy as np
        from gradcli.engine import workers
        workers.cores = lambda: 2
        a = np.ones(1 << 20)
        out = np.empty_like(a)
        import contextvars, queue, threading          # imported before the limit, as a pool would need them
        with open("/proc/self/status") as f:
            data = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:"))
        resource.setrlimit(resource.RLIMIT_DATA, (data + (4 << 20), resource.RLIM_INFINITY))
        workers.STACK = 64 << 20                      # a stack bigger than what is left
        workers.binary(np.add, a, a, out=out)
        print(out.sum() == 2 * a.size, len(workers._pool.boxes))
        """)
    assert got == ["True", "0"]


def test_timeout_stops_a_script_of_big_ops_at_its_line():
    p = launcher.run(["--timeout", "0.5", "-c", "import torch\nx = torch.ones(300, 1000)\nwhile True:\n"
                      "    y = (x * x).exp().sum(1)\n"], env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert p.returncode == 124
    assert "Traceback" not in p.stderr
    # the loop's line (with the column of the op it was in), as for any script stopped there; on a loaded
    # machine (a CI run of the whole suite, once) the supervisor may act before the timer has reported,
    # and names the same line
    assert re.match(r"<string>:[34](:\d+)?: TimeoutError: stopped after 0\.5 seconds \(--timeout 0\.5\)"
                    r"(, inside a computation that could not be interrupted)?\n", p.stderr)


def test_scripts_reach_no_thread():
    p = launcher.run(["-c", "import torch\nx = torch.randn(1000, 100)\ny = (x * x).exp().sum(1)\nimport threading"],
                     env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    q = launcher.run(["-c", "import threading"], env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert p.returncode == q.returncode != 0
    assert p.stderr.replace("<string>:4", "<string>:1") == q.stderr


def test_an_output_overlapping_an_input_is_computed_as_one_call(cores):
    cores(2)
    base = np.arange(workers.BIG_BINARY + 2048, dtype=np.float64).reshape(-1, 1024)
    want = base[1:] + base[:-1]                 # numpy: as if the inputs were copied first
    workers.binary(np.add, base[1:], base[:-1], out=base[:-1])
    assert _bits(base[:-1]) == _bits(want)
    workers.binary(np.add, base, base, out=base)        # element for element: split


def test_a_split_inside_a_piece_and_splits_from_two_threads_all_finish(cores):
    cores(2)
    done = []

    def inner(begin, end):
        done.append(("inner", begin))

    def outer(begin, end):
        workers.split(64, inner)
        done.append(("outer", begin))

    def job():
        workers.split(64, outer)

    other = threading.Thread(target=job)
    other.start()
    job()
    other.join(30)
    assert not other.is_alive()
    cuts = len(workers.ranges(64, workers.threads() * workers.PIECES))
    assert sum(kind == "outer" for kind, _ in done) == 2 * cuts
    assert sum(kind == "inner" for kind, _ in done) == 2 * cuts * cuts


def test_results_keep_the_layout_numpy_gives_them(cores):
    cores(2)
    x = np.random.default_rng(4).standard_normal((2048, 600)).astype(np.float32)
    f = np.asfortranarray(x)
    col = np.broadcast_to(x[:, :1], x.shape)
    for a, b in ((x, x), (f, f), (x, f), (x[:, ::-1], x), (col, x), (x[:, :1], x), (f, x[0])):
        want = np.multiply(a, b)
        got = workers.binary(np.multiply, a, b)
        assert (got.strides, _bits(got)) == (want.strides, _bits(want))
