#!/usr/bin/env python3
"""Run script texts through gradcli and through the PyTorch oracle, many per process, and compare them.

The shared half of tools/difffuzz.py and tools/probe.py (and of the fast slice in tests/test_difffuzz.py):

* an outcome is what one script did: ``{"status": "ok" | "error" | "syntax" | "timeout" | "crash",
  "type": exception type or None, "message": its text or None, "stdout": what it printed}``, with every
  ``0x[0-9a-f]+`` written ``0xADDR``;
* ``run_gradcli(source)`` runs a script in this process, in a fresh gradcli Session seeded with 0;
* a *worker* runs scripts one after another in one long-lived process, so PyTorch is imported once:
  ``python tools/differential.py --worker torch`` (in the oracle's interpreter) or ``--worker gradcli``
  reads ``{"id", "source"}`` JSON lines on stdin and answers one outcome per line. Each script starts
  from a fresh namespace and a fresh engine state (grad mode on, default print options,
  ``torch.manual_seed(0)``), with its stdout captured;
* ``Pool`` drives several workers of one side from threads, restarting a worker that hangs past the
  per-script limit or dies (that script's outcome is "timeout" or "crash");
* ``compare(gradcli, torch)`` names the first way two outcomes differ, ``class_key`` groups differences
  by their shape (exception type and message with numbers elided) and ``minimize`` shortens a reproducer
  line by line while its difference keeps its class.

Standard library only at import time: the torch worker must not import gradcli, nor the gradcli
worker torch.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ORACLE_PYTHON = os.environ.get("ORACLE_PYTHON", "/work/oracle/bin/python")
SEED = 0                      # every script runs as if it began with torch.manual_seed(0)
SECONDS = 5.0                 # per script, in a worker
MAX_STDOUT = 20_000           # characters of stdout kept (both sides cut at the same length)
MEMORY = 2 << 30              # gradcli's --max-memory in the worker; the oracle's address-space room

ADDR = re.compile(r"0x[0-9a-f]+")
# Messages that depend on the machine's memory rather than on semantics: never a difference of interest.
RESOURCE = re.compile(r"allocate|out of memory|MemoryError|too large|can't allocate|not enough memory",
                      re.IGNORECASE)


def normalize(text: str | None) -> str | None:
    return None if text is None else ADDR.sub("0xADDR", text)


def outcome(status: str, stdout: str, kind: str | None = None, message: str | None = None) -> dict:
    if len(stdout) > MAX_STDOUT:
        stdout = stdout[:MAX_STDOUT] + "\n[...cut]"
    return {"status": status, "type": kind, "message": normalize(message), "stdout": normalize(stdout)}


# ============================================================================== gradcli, in this process

def run_gradcli(source: str, seconds: float = SECONDS, memory: int = MEMORY) -> dict:
    """One script through a fresh gradcli Session (seeded with SEED), in this process."""
    import io

    from gradcli.engine import budget
    from gradcli import deadline
    from gradcli.errors import ScriptError, ScriptSyntaxError
    from gradcli.session import Session

    out = io.StringIO()
    before = budget.max_memory()
    budget.set_max_memory(memory)
    try:
        session = Session(out=out, err=io.StringIO(), seed=SEED)
        with deadline.Deadline(seconds):
            session.run_source(source, "<variant>")
    except ScriptSyntaxError as e:
        return outcome("syntax", out.getvalue(), e.kind, e.message)
    except ScriptError as e:
        if e.exit_status == deadline.EXIT_TIMEOUT:
            return outcome("timeout", out.getvalue(), e.kind, e.message)
        return outcome("error", out.getvalue(), e.kind, e.message)
    except BaseException as e:          # gradcli itself broke: a finding of its own
        return outcome("crash", out.getvalue(), type(e).__name__, str(e))
    finally:
        budget.set_max_memory(before)
    return outcome("ok", out.getvalue())


# ============================================================================== PyTorch, in the oracle

def _torch_runner():
    """A function running one script under PyTorch in a fresh namespace (imports torch once)."""
    import builtins
    import io
    import resource
    import signal
    import types
    import warnings

    import torch

    warnings.simplefilter("ignore")
    # Room for the scripts' tensors above what the import mapped, so a huge tensor fails rather than
    # swapping the machine (its message is then set aside as a resource difference).
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + 2 * MEMORY, vm + 2 * MEMORY))

    class Alarm(BaseException):
        pass

    def alarm(signum, frame):
        raise Alarm()

    signal.signal(signal.SIGALRM, alarm)
    import torch.distributions.kl as kl
    kl_registry, kl_memo = kl._KL_REGISTRY, kl._KL_MEMOIZE
    kl_built_in = dict(kl_registry)

    def run(source: str, seconds: float) -> dict:
        for name in os.listdir("."):        # the files an earlier script saved (gradcli's sessions start with none)
            path = os.path.join(".", name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        # the reference machine's thread count, as a gradcli session starts with (and a script may have
        # changed it): large sums add in the order of that many threads
        torch.set_num_threads(2)
        torch.manual_seed(SEED)
        torch.set_grad_enabled(True)
        torch.set_printoptions(profile="default")
        torch.set_default_dtype(torch.float32)
        torch.autograd.set_detect_anomaly(False)
        # and the other process-wide settings a gradcli session starts afresh (Session.reset_state), which an
        # earlier script in this worker may have changed: argument validation, determinism, the matmul
        # precision, the default device, the KL functions a script registered
        torch.distributions.Distribution.set_default_validate_args(True)
        torch.use_deterministic_algorithms(False)
        torch.set_float32_matmul_precision("highest")
        torch.set_default_device(None)
        kl_registry.clear()
        kl_registry.update(kl_built_in)
        kl_memo.clear()
        # a module of its own as __main__, as `python script.py` has: pickle (torch.save) finds the script's
        # classes and functions there by name
        main = types.ModuleType("__main__")
        main.__builtins__ = builtins
        namespace = main.__dict__
        out = io.StringIO()
        saved, saved_main = sys.stdout, sys.modules["__main__"]
        sys.stdout = out
        sys.modules["__main__"] = main
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            code = compile(source, "<variant>", "exec", dont_inherit=True)     # (not this file's __future__ flags)
            exec(code, namespace)
        except SyntaxError as e:
            return outcome("syntax", out.getvalue(), type(e).__name__, e.msg)
        except Alarm:
            return outcome("timeout", out.getvalue(), "TimeoutError", f"ran past {seconds} s")
        except BaseException as e:
            message = repr(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
            return outcome("error", out.getvalue(), _type_name(type(e)), message)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdout = saved
            sys.modules["__main__"] = saved_main
        return outcome("ok", out.getvalue())

    return run


def _type_name(cls) -> str:
    """An exception type as a traceback's last line names it (torch._C._LinAlgError, RuntimeError)."""
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", "__main__") else f"{module}.{cls.__qualname__}"


def worker(side: str, seconds: float) -> None:
    """Answer {"id", "source"} lines from stdin with {"id", "outcome"} lines, one script at a time."""
    run = _torch_runner() if side == "torch" else (lambda source, s: run_gradcli(source, s))
    stdout = sys.stdout
    for line in sys.stdin:
        case = json.loads(line)
        result = run(case["source"], seconds)
        stdout.write(json.dumps({"id": case["id"], "outcome": result}) + "\n")
        stdout.flush()


# ============================================================================== a pool of workers

def _worker_argv(side: str, seconds: float) -> list[str]:
    python = ORACLE_PYTHON if side == "torch" else sys.executable
    return [python, str(Path(__file__).resolve()), "--worker", side, "--seconds", str(seconds)]


class _Worker:
    def __init__(self, side: str, seconds: float):
        self.side = side
        self.seconds = seconds
        self.proc = None

    def start(self) -> None:
        env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   PYTHONPATH=str(REPO_ROOT) if self.side == "gradcli" else "")
        # in a folder of its own: the files a script saves (torch.save) go there, not into the checkout
        self.folder = tempfile.mkdtemp(prefix=f"difffuzz-{self.side}-")
        self.proc = subprocess.Popen(_worker_argv(self.side, self.seconds), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                     cwd=self.folder, bufsize=0)
        self.buffer = b""

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            shutil.rmtree(self.folder, ignore_errors=True)

    def _readline(self, limit: float) -> bytes | None:
        end = time.monotonic() + limit
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = end - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return b""
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def run(self, case_id: str, source: str, _again: bool = False) -> dict:
        if self.proc is None:
            self.start()
        try:
            self.proc.stdin.write((json.dumps({"id": case_id, "source": source}) + "\n").encode())
            # the first script of a torch worker also waits for `import torch`
            line = self._readline(self.seconds + 30)
        except BrokenPipeError:
            line = b""
        if not line:
            self.stop()
            status = "timeout" if line is None else "crash"
            return outcome(status, "", "TimeoutError" if line is None else "WorkerDied", "the worker stopped")
        answer = json.loads(line)
        assert answer["id"] == case_id
        result = answer["outcome"]
        if self.side == "torch":
            # A script stopped by the time limit may have stopped PyTorch halfway through importing one of its
            # lazily loaded modules (torch._dynamo, which optimisers and torch.func load on first use): every
            # later script of this worker would then fail on the half-made module. Start afresh after a
            # timeout, and run again a script that met such a module.
            half_made = "partially initialized module" in (result["message"] or "") + result["stdout"]
            if result["status"] == "timeout" or half_made:
                self.stop()
            if half_made and not _again:
                return self.run(case_id, source, _again=True)
        return result


class Pool:
    """`jobs` workers of one side ("torch" or "gradcli"); run_all maps {id: source} to {id: outcome}."""

    def __init__(self, side: str, jobs: int = 1, seconds: float = SECONDS):
        self.workers = [_Worker(side, seconds) for _ in range(max(1, jobs))]
        self.free = list(self.workers)
        self.lock = threading.Lock()

    def _one(self, item):
        with self.lock:
            w = self.free.pop()
        try:
            return item[0], w.run(*item)
        finally:
            with self.lock:
                self.free.append(w)

    def run_all(self, cases: dict, progress=None) -> dict:
        results = {}
        with ThreadPoolExecutor(len(self.workers)) as ex:
            for n, (cid, res) in enumerate(ex.map(self._one, cases.items()), 1):
                results[cid] = res
                if progress and n % 500 == 0:
                    progress(n, len(cases))
        return results

    def close(self) -> None:
        for w in self.workers:
            w.stop()


# ============================================================================== comparing

def compare(got: dict, want: dict) -> str | None:
    """The first way gradcli's outcome `got` differs from PyTorch's `want`, or None when they agree."""
    if got["status"] != want["status"]:
        return "status"
    if got["type"] != want["type"]:
        return "type"
    if got["status"] == "error" and _message(got["message"]) != _message(want["message"]):
        return "message"
    if got["stdout"] != want["stdout"] and _stdout(got["stdout"]) != _stdout(want["stdout"]):
        return "stdout"
    return None


# The C++ stack trace some of PyTorch's messages carry inside them (a parser's "Overflow when unpacking long
# long" is followed by "Exception raised from THPUtils_unpackLong at ..." and the frames, then the quote that
# closes the message): an artefact of the build, left out when messages are compared.
_CXX_TRACE = re.compile(r"\nException raised from .*\n(?=\"?$)", re.S)


# The same trace in a message a script printed (`print(e)`): the frames stand on lines of their own, and the
# closing quote follows them.
_CXX_TRACE_LINES = re.compile(r"\nException raised from [^\n]*\n(?:(?:frame #|<omitting)[^\n]*\n)*")


def _stdout(text: str | None) -> str:
    return _CXX_TRACE_LINES.sub("", text or "")


def _message(text: str | None) -> str:
    return " ".join(_CXX_TRACE.sub("", text or "").split())


def ignorable(got: dict, want: dict) -> str | None:
    """Why a difference says nothing about semantics (time, memory or the language subset), or None."""
    if "timeout" in (got["status"], want["status"]):
        return "timeout"
    for o in (got, want):
        if o["status"] in ("error", "crash") and RESOURCE.search(f"{o['type']} {o['message']}"):
            return "resource"
    if want["status"] == "syntax":
        return "syntax"
    return None


_NUMBER = re.compile(r"-?\b\d+(\.\d+)?(e[+-]?\d+)?\b")


def shape_of(text: str | None, limit: int = 160) -> str:
    """A message with its numbers elided, so messages that differ only in sizes and values group."""
    text = _NUMBER.sub("N", " ".join((text or "").split()))
    return text[:limit]


def class_key(got: dict, want: dict, kind: str, label: str = "") -> str:
    """The class of a difference: what differs, and the shape of the messages (or, for printed output,
    `label`: the op or mutation that produced it)."""
    g, w = got, want
    if kind == "status":
        if w["status"] == "ok":
            return f"gradcli {g['status']} where PyTorch runs: {g['type']}: {shape_of(g['message'])}"
        if g["status"] == "ok":
            return f"gradcli runs where PyTorch raises {w['type']}: {shape_of(w['message'])}"
        return f"gradcli {g['status']} {g['type']} where PyTorch {w['status']} {w['type']}: {shape_of(w['message'])}"
    if kind == "type":
        return f"{g['type']} instead of {w['type']}: {shape_of(w['message'])}"
    if kind == "message":
        return f"message ({w['type']}): PyTorch '{shape_of(w['message'], 100)}' / gradcli '{shape_of(g['message'], 100)}'"
    return f"printed output differs: {label}"


def first_stdout_difference(got: str, want: str) -> tuple[str, str]:
    a, b = got.splitlines(), want.splitlines()
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<nothing>"
        y = b[i] if i < len(b) else "<nothing>"
        if x != y:
            return x, y
    return "", ""


def describe(got: dict, want: dict) -> list[str]:
    """Lines showing both outcomes for a report."""
    def one(o):
        if o["status"] == "ok":
            return "ok"
        return f"{o['status']}: {o['type']}: {(o['message'] or '').splitlines()[0][:300] if o['message'] else ''}"
    lines = [f"PyTorch: {one(want)}", f"gradcli: {one(got)}"]
    if got["stdout"] != want["stdout"]:
        g, w = first_stdout_difference(got["stdout"], want["stdout"])
        lines += [f"first differing line, PyTorch: {w[:300]}", f"first differing line, gradcli: {g[:300]}"]
    return lines


def minimize(source: str, key_of, run_both, rounds: int = 30) -> str:
    """Drop lines of `source` one at a time while `key_of(gradcli, torch)` stays what it is for the whole
    script (`run_both({id: source})` -> {id: (gradcli outcome, torch outcome)}). Greedy, batched: each
    round tries every single-line deletion at once and keeps the first that holds."""
    base = run_both({"0": source})["0"]
    target = key_of(*base)
    lines = source.splitlines()
    for _ in range(rounds):
        trials = {}
        for i, line in enumerate(lines):
            if line.startswith("import ") or line.startswith("from ") or not line.strip():
                continue
            trials[str(i)] = "\n".join(lines[:i] + lines[i + 1:]) + "\n"
        if not trials:
            break
        results = run_both(trials)
        kept = next((i for i in sorted(trials, key=int) if key_of(*results[i]) == target), None)
        if kept is None:
            break
        lines = trials[kept].splitlines()
    return "\n".join(line for line in lines if line.strip()) + "\n"


def both_runner(gradcli_pool: Pool, torch_pool: Pool):
    """run_both for minimize: the same cases through both pools."""
    def run_both(cases: dict) -> dict:
        g = gradcli_pool.run_all(cases)
        t = torch_pool.run_all(cases)
        return {cid: (g[cid], t[cid]) for cid in cases}
    return run_both


# ============================================================================== stored slices

def load_cases(path: Path) -> list[dict]:
    """A stored slice: one {"id", "source", "expect"} JSON object per line."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def save_cases(path: Path, cases: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for case in cases:
            f.write(json.dumps(case, sort_keys=True, ensure_ascii=False) + "\n")


def load_known(path: Path) -> dict:
    """The known differences: `ID  reason` per line ('#' starts a comment) -> {id: reason}."""
    known = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                cid, _, reason = line.partition(" ")
                known[cid] = reason.strip()
    return known


def deterministic(cases: dict, jobs: int, seconds: float) -> dict:
    """PyTorch's outcome of each case, or None for a case whose outcome depends on the CPU kernels used
    (scalar ATEN_CPU_CAPABILITY=default against the native SIMD ones), a timeout or the machine's memory."""
    results = []
    for capability in ("default", None):
        saved = os.environ.get("ATEN_CPU_CAPABILITY")
        if capability is None:
            os.environ.pop("ATEN_CPU_CAPABILITY", None)
        else:
            os.environ["ATEN_CPU_CAPABILITY"] = capability
        pool = Pool("torch", jobs, seconds)
        try:
            results.append(pool.run_all(cases))
        finally:
            pool.close()
            if saved is None:
                os.environ.pop("ATEN_CPU_CAPABILITY", None)
            else:
                os.environ["ATEN_CPU_CAPABILITY"] = saved
    kept = {}
    for cid in cases:
        a, b = results[0][cid], results[1][cid]
        if a != b or a["status"] in ("timeout", "crash") or ignorable(a, a):
            kept[cid] = None
        else:
            kept[cid] = a
    return kept


def save_slice(path: Path, cases: list[dict], jobs: int, seconds: float) -> None:
    """Store the cases whose PyTorch outcome is deterministic, with that outcome as their expectation."""
    expected = deterministic({c["id"]: c["source"] for c in cases}, jobs, seconds)
    kept = [{"id": c["id"], "source": c["source"], "expect": expected[c["id"]]}
            for c in cases if expected[c["id"]] is not None]
    save_cases(path, kept)
    print(f"{path}: {len(kept)} of {len(cases)} cases stored ({len(cases) - len(kept)} left out: "
          "nondeterministic, timeouts or memory-bound)")


def run_sides(cases: list[dict], jobs: int, seconds: float, progress: bool = True):
    """Every case through gradcli and PyTorch: (gradcli outcomes, PyTorch outcomes, gradcli pool, PyTorch
    pool), the pools still open (for minimize); the caller closes them."""
    sources = {c["id"]: c["source"] for c in cases}
    say = (lambda n, total: print(f"  {n}/{total}", file=sys.stderr)) if progress else None
    gpool, tpool = Pool("gradcli", jobs, seconds), Pool("torch", jobs, seconds)
    t0 = time.monotonic()
    got = gpool.run_all(sources, say)
    t1 = time.monotonic()
    want = tpool.run_all(sources, say)
    if progress:
        print(f"gradcli {t1 - t0:.1f} s, PyTorch {time.monotonic() - t1:.1f} s for {len(cases)} cases",
              file=sys.stderr)
    return got, want, gpool, tpool


def emit(text: str, path: str | None) -> None:
    """A report to the file `path`, or to stdout."""
    if path:
        Path(path).write_text(text, encoding="utf-8")
    else:
        print(text)


def check_slice(path: Path, jobs: int, seconds: float) -> int:
    """Re-run a stored slice's scripts under PyTorch; 1 when a stored expectation is not what it prints."""
    cases = load_cases(path)
    fresh = Pool("torch", jobs, seconds)
    try:
        now = fresh.run_all({c["id"]: c["source"] for c in cases})
    finally:
        fresh.close()
    bad = [c["id"] for c in cases if now[c["id"]] != c["expect"]]
    for cid in bad:
        print(f"{path.name}: {cid}: PyTorch's outcome is no longer the stored one", file=sys.stderr)
    print(f"{path}: {len(cases) - len(bad)} of {len(cases)} stored outcomes confirmed by PyTorch")
    return 1 if bad else 0


def draft_known(directory: Path) -> None:
    """Print `ID  class of the difference` for every stored case gradcli does not match today: the draft
    of DIR/known_differences.txt (each line's reason is then made specific by hand)."""
    known = load_known(directory / "known_differences.txt")
    for path in sorted(directory.glob("*.jsonl")):
        for case in load_cases(path):
            got = run_gradcli(case["source"], SECONDS, 256 << 20)
            kind = compare(got, case["expect"])
            if kind is not None:
                print(f"{case['id']}  {known.get(case['id']) or class_key(got, case['expect'], kind, 'values')}")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=("torch", "gradcli"))
    ap.add_argument("--seconds", type=float, default=SECONDS)
    ap.add_argument("--draft-known", metavar="DIR", type=Path,
                    help="list the stored cases gradcli gets wrong today, as lines of known_differences.txt")
    args = ap.parse_args()
    if args.worker == "gradcli" or args.draft_known:
        sys.path.insert(0, str(REPO_ROOT))
    if args.draft_known:
        draft_known(args.draft_known)
    elif args.worker:
        worker(args.worker, args.seconds)
    else:
        ap.error("give --worker or --draft-known")
