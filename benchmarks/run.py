"""The benchmark suite in one command: every workload, timed against its numpy floor and PyTorch, as one table.

    .venv/bin/python benchmarks/run.py [--quick | --smoke] [--torch-python PATH | --no-torch]
                                       [--only NAME,...] [--runs N] [--profile NAME]

Workloads are small files beside this one, each runnable on its own: `.grad` scripts run unchanged by
gradcli and by a PyTorch interpreter, numpy floors are plain `.py` files, and their sizes are
`NAME = value  # param` lines (params.py) that the runner rewrites for --quick and --smoke.
Every figure is a median over --runs runs, taken after one warm-up run of each command (so the
bytecode and grammar caches are warm; --smoke, which only checks that everything runs, skips it),
with the runs of the commands compared interleaved.
Start-up is whole-process wall time and peak RSS (wait4's ru_maxrss). The other workloads run
under timed.py, which starts its clock after the imports; a workload's cost is its time minus the
time of the same file with its size set to 0, as the median of the per-round differences.
Nothing here asserts on time: `met?` is a report.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from params import instantiate  # noqa: E402

# Sizes per mode. --smoke only checks that every workload runs: its figures mean nothing.
SIZES = {
    "full": dict(verdicts=True, runs=5, perop=20_000, train=2_000, rnn=200, classes=300, mlp=20, batch=256, reps=20, rows=4096,
                 convnet=20, chain=(100_000, 1_000_000), memory=100_000, parse=(1_000, 10_000, 100_000)),
    "quick": dict(verdicts=True, runs=2, perop=5_000, train=500, rnn=50, classes=100, mlp=5, batch=256, reps=5, rows=4096,
                  convnet=5, chain=(10_000, 100_000), memory=10_000, parse=(1_000, 10_000)),
    "smoke": dict(verdicts=False, warm_up=False, runs=1, perop=10, train=2, rnn=2, classes=2, mlp=1, batch=8, reps=1, rows=8, convnet=1,
                  chain=(10, 100), memory=10, parse=(10, 100)),
}
WORKLOADS = ("startup", "perop", "train", "rnn", "classes", "mlp", "elementwise", "deep", "parse", "convnet")
HEADER = ("workload", "gradcli", "numpy floor", "PyTorch", "ratio", "target", "met?")
TIMEFILE = "<timefile>"     # in a command: the file timed.py writes its in-process seconds to
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def user_env() -> dict[str, str]:
    """The environment a user's shell would give: this shell's, without the variables that make every
    Python start recompile its modules (PYTHONDONTWRITEBYTECODE) or write unbuffered."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")}


# ================================================================ running and timing processes

@dataclass
class Timing:
    runs: list[tuple[float, int]]   # (wall seconds, peak RSS bytes) of each timed run, in round order
    stdout: str                     # from the warm-up run

    @property
    def seconds(self) -> float:
        return statistics.median(s for s, _ in self.runs)

    @property
    def peak_rss(self) -> float:
        return statistics.median(r for _, r in self.runs)


def run_process(cmd: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Seconds, peak RSS in bytes and stdout of one run; raises if it fails. The seconds are the
    process's wall time, or what it wrote to TIMEFILE when that stands in its command (timed.py)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as timefile:
        cmd = [timefile.name if arg == TIMEFILE else arg for arg in cmd]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{err.read().decode()}")
        if timefile.name in cmd:
            seconds = float(timefile.read())
        return seconds, usage.ru_maxrss * 1024, out.read().decode()


def measure(cmds: dict, env: dict[str, str], runs: int, warm_up: bool = True) -> dict:
    """Time every command: one warm-up run each, then `runs` rounds, interleaved so that drift in the
    machine's speed falls on every command alike. Without `warm_up` (--smoke, whose figures mean
    nothing), the first round's output stands in for the warm-up's."""
    warm = {key: run_process(cmd, env)[2] for key, cmd in cmds.items()} if warm_up else {}
    samples: dict = {key: [] for key in cmds}
    for _ in range(runs):
        for key, cmd in cmds.items():
            seconds, rss, out = run_process(cmd, env)
            samples[key].append((seconds, rss))
            warm.setdefault(key, out)
    return {key: Timing(samples[key], warm[key]) for key in cmds}


def difference(full: Timing, base: Timing) -> tuple[float, float, float]:
    """The cost of what `full` does beyond `base`: the median of the per-round differences (each pair
    ran back to back), with the smallest and largest difference to show how noisy it was."""
    diffs = sorted(f - b for (f, _), (b, _) in zip(full.runs, base.runs))
    return statistics.median(diffs), diffs[0], diffs[-1]


# ================================================================ the table

@dataclass
class Row:
    workload: str
    gradcli: str
    floor: str = "-"
    torch: str = "-"
    ratio: str = "-"
    target: str = "-"
    met: str = "-"


def seconds(t: float) -> str:
    return f"{t:.3f} s"


def millis(t: float) -> str:
    return f"{t * 1000:.1f} ms"


def megabytes(b: float) -> str:
    return f"{b / 2**20:.1f} MB"


def micros(t: float) -> str:
    return f"{t * 1e6:.2f} µs"


def table(rows: list[Row]) -> str:
    cells = [HEADER] + [(r.workload, r.gradcli, r.floor, r.torch, r.ratio, r.target, r.met) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(line, widths)) + " |" for line in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


# ================================================================ the workloads

class Suite:
    """The workloads, each a method returning its table rows."""

    def __init__(self, sizes: dict, torch_python: str | None, workdir: Path):
        self.sizes = sizes
        self.runs = sizes["runs"]
        self.torch = torch_python
        self.workdir = workdir
        self.notes: list[str] = []
        self.gradcli = self._gradcli_command()
        self.judge = sizes["verdicts"]
        self.warm_up = sizes.get("warm_up", True)

    def verdict(self, ok: bool) -> str:
        """The met? cell; smoke sizes are too small for a verdict to mean anything."""
        return "n/a" if not self.judge else "yes" if ok else "**no**"

    @staticmethod
    def _gradcli_command() -> list[str]:
        script = Path(sys.executable).parent / "gradcli"     # the console script users run
        return [str(script)] if script.exists() else [sys.executable, "-m", "gradcli"]

    def script(self, name: str, tag: str, **params) -> Path:
        """Workload `name` with `params` written in, as its own file (same name, so messages match)."""
        directory = self.workdir / tag
        directory.mkdir(exist_ok=True)
        return instantiate(HERE / name, directory, **params)

    def commands(self, grad: Path, floor: Path | None = None) -> dict:
        """The .grad script run by gradcli and by PyTorch, and its numpy floor, each under timed.py."""
        timed = str(HERE / "timed.py")
        cmds = {"gradcli": [sys.executable, timed, "gradcli", str(grad), TIMEFILE]}
        if floor is not None:
            cmds["floor"] = [sys.executable, timed, "python", str(floor), TIMEFILE]
        if self.torch:
            cmds["torch"] = [self.torch, timed, "python", str(grad), TIMEFILE]
        return cmds

    def measure_variants(self, variants: dict, env: dict) -> dict:
        """`variants` maps a variant name to commands by engine; returns timings by (variant, engine),
        all measured in one interleaved batch, and notes where gradcli and PyTorch printed different
        things for the same seeded script."""
        flat = {(v, engine): cmd for v, cmds in variants.items() for engine, cmd in cmds.items()}
        result = measure(flat, env, self.runs, self.warm_up)
        for v in variants:
            if self.torch and result[v, "gradcli"].stdout != result[v, "torch"].stdout:
                self.notes.append(f"{v}: gradcli and PyTorch printed different output "
                                  f"({result[v, 'gradcli'].stdout.strip()[:60]!r} vs "
                                  f"{result[v, 'torch'].stdout.strip()[:60]!r})")
        return result

    def cost(self, what: str, full: Timing, base: Timing) -> float:
        """difference(), noting it when the runs disagree by more than half the figure."""
        median, low, high = difference(full, base)
        if self.judge and high - low > 0.5 * abs(median):
            self.notes.append(f"{what}: noisy, the {len(full.runs)} runs gave {low:.3f} s to {high:.3f} s "
                              f"(median {median:.3f} s); try --runs 9")
        return median

    def torch_cell(self, value) -> str:
        return value if self.torch else "skipped"

    # ---------------------------------------------------------------- 1. start-up

    def startup(self) -> list[Row]:
        tutorial = REPO / "examples" / "tutorial.grad"
        cmds = {"gradcli": self.gradcli + ["run", str(tutorial)], "floor": [sys.executable, "-c", "import numpy"]}
        if self.torch:
            cmds["torch"] = [self.torch, str(tutorial)]
        t = measure(cmds, user_env(), self.runs, self.warm_up)
        g, f = t["gradcli"], t["floor"]
        rows = [Row("start-up: `gradcli run examples/tutorial.grad`, wall", seconds(g.seconds), seconds(f.seconds)),
                Row("start-up: the same, peak RSS", megabytes(g.peak_rss), megabytes(f.peak_rss))]
        if self.torch:
            speedup, memory = t["torch"].seconds / g.seconds, g.peak_rss / t["torch"].peak_rss
            rows[0].torch, rows[1].torch = seconds(t["torch"].seconds), megabytes(t["torch"].peak_rss)
            rows[0].ratio, rows[0].target = f"PyTorch / gradcli {speedup:.1f}x", ">= 15x (issue 19)"
            rows[1].ratio, rows[1].target = f"gradcli / PyTorch {memory:.3f}", "<= 1/9 (0.111)"
            rows[0].met, rows[1].met = self.verdict(speedup >= 15), self.verdict(memory <= 1 / 9)
        else:
            rows[0].torch = rows[1].torch = "skipped"
        floor = g.seconds / f.seconds
        rows[0].ratio = (rows[0].ratio + "; " if self.torch else "") + f"gradcli / floor {floor:.2f}x"
        rows[0].target = (rows[0].target + "; " if self.torch else "") + "<= 1.3x the floor"
        rows[0].met = (rows[0].met + " / " if self.torch else "") + self.verdict(floor <= 1.3)
        return rows

    # ---------------------------------------------------------------- 2. per-op overhead

    def perop(self) -> list[Row]:
        n = self.sizes["perop"]
        variants = {}
        for name, params in (("start", dict(N=0, BACKWARD=False)), ("loop", dict(N=n, BACKWARD=False)),
                             ("loop+backward", dict(N=n, BACKWARD=True))):
            variants[f"perop {name}"] = self.commands(self.script("perop.grad", name, **params),
                                                      self.script("tape_numpy.py", name, **params))
        t = self.measure_variants(variants, {**user_env(), **SINGLE_THREADED})

        def figures(engine):
            start, loop, full = (t[f"perop {v}", engine] for v in ("start", "loop", "loop+backward"))
            ops = 2 * n                 # one mul and one add per iteration; backward has a node for each
            return (self.cost(f"per-op total ({engine})", full, start),
                    self.cost(f"per-op forward ({engine})", loop, start) / ops,
                    self.cost(f"per-op backward ({engine})", full, loop) / ops)

        g, f = figures("gradcli"), figures("floor")
        tt = figures("torch") if self.torch else None
        labels = (f"per-op: {n:,} iterations of `y = y * 1.0001 + 0.5` + backward", "per-op: forward, per op",
                  "per-op: backward, per node")
        rows = []
        for i, (label, fmt) in enumerate(zip(labels, (seconds, micros, micros))):
            ratio = f"gradcli / floor {g[i] / f[i]:.1f}x"
            if tt:
                ratio = f"gradcli / PyTorch {g[i] / tt[i]:.2f}x; " + ratio
            rows.append(Row(label, fmt(g[i]), fmt(f[i]), self.torch_cell(tt and fmt(tt[i])), ratio))
        for row, value, limit in ((rows[1], g[1], 2.0e-6), (rows[2], g[2], 1.5e-6)):    # issue 19's targets
            row.target, row.met = f"<= {limit * 1e6:.1f} µs", self.verdict(value <= limit)
        return rows

    # ---------------------------------------------------------------- 2b. a small training loop

    def train(self) -> list[Row]:
        """Issue 16's loop: nn.Linear layers, CrossEntropyLoss and Adam on a batch of 32, where the
        per-op overhead of the framework is most of the time. Target: at least 2x PyTorch's speed."""
        n = self.sizes["train"]
        variants = {f"train STEPS={k}": self.commands(self.script("train.grad", f"train-{k}", STEPS=k))
                    for k in (0, n)}
        t = self.measure_variants(variants, {**user_env(), **SINGLE_THREADED})
        engines = ("gradcli", "torch") if self.torch else ("gradcli",)
        cost = {e: self.cost(f"train ({e})", t[f"train STEPS={n}", e], t["train STEPS=0", e]) for e in engines}
        label = f"training loop: MLP 20-64-5 (nn.Linear, CrossEntropyLoss, Adam), batch 32, {n:,} steps"
        if not self.torch:
            return [Row(label, seconds(cost["gradcli"]), torch="skipped")]
        ratio = cost["gradcli"] / cost["torch"]
        return [Row(label, seconds(cost["gradcli"]), torch=seconds(cost["torch"]),
                    ratio=f"gradcli / PyTorch {ratio:.2f}x", target="<= 0.50x", met=self.verdict(ratio <= 0.5))]

    # ---------------------------------------------------------------- 2c. a recurrent training loop

    def rnn(self) -> list[Row]:
        """An LSTM step: gradcli's one node per layer (oneDNN's, as PyTorch records it) and PyTorch's."""
        n = self.sizes["rnn"]
        variants = {f"rnn STEPS={k}": self.commands(self.script("rnn.grad", f"rnn-{k}", STEPS=k)) for k in (0, n)}
        t = self.measure_variants(variants, {**user_env(), **SINGLE_THREADED})
        engines = ("gradcli", "torch") if self.torch else ("gradcli",)
        cost = {e: self.cost(f"rnn ({e})", t[f"rnn STEPS={n}", e], t["rnn STEPS=0", e]) for e in engines}
        label = f"recurrent loop: LSTM(8, 32) over 20 steps + Linear, MSELoss, Adam, batch 16, {n:,} steps"
        if not self.torch:
            return [Row(label, seconds(cost["gradcli"]), torch="skipped")]
        ratio = cost["gradcli"] / cost["torch"]
        return [Row(label, seconds(cost["gradcli"]), torch=seconds(cost["torch"]),
                    ratio=f"gradcli / PyTorch {ratio:.2f}x")]

    # ---------------------------------------------------------------- 2d. script classes in the loop

    def classes(self) -> list[Row]:
        """Issue 19's script with classes and comprehensions in its inner loop (particles as script objects,
        method calls, attribute reads and writes, comprehensions, a closure, a backward per step): its
        time against PyTorch's, and the interpreter's share of gradcli's time against the engine's
        (share.py: cProfile's own times, charged to gradcli/language or gradcli/engine and numpy)."""
        n = self.sizes["classes"]
        variants = {f"classes STEPS={k}": self.commands(self.script("classes.grad", f"classes-{k}", STEPS=k))
                    for k in (0, n)}
        env = {**user_env(), **SINGLE_THREADED}
        t = self.measure_variants(variants, env)
        engines = ("gradcli", "torch") if self.torch else ("gradcli",)
        cost = {e: self.cost(f"classes ({e})", t[f"classes STEPS={n}", e], t["classes STEPS=0", e]) for e in engines}
        label = f"classes and comprehensions in the loop: 8 particles as script objects, {n:,} steps"
        row = Row(label, seconds(cost["gradcli"]), torch="skipped")
        if self.torch:
            row.torch = seconds(cost["torch"])
            row.ratio = f"gradcli / PyTorch {cost['gradcli'] / cost['torch']:.2f}x"
            row.target = "(reported)"
        share_file = self.workdir / "classes-share.json"
        run_process([sys.executable, str(HERE / "share.py"), str(self.script("classes.grad", f"classes-{n}", STEPS=n)),
                     str(share_file)], env)
        share = json.loads(share_file.read_text())
        interpreter, engine = share["interpreter"], share["engine"]
        return [row, Row("classes: the interpreter's share of gradcli's time (cProfile)", f"{interpreter:.0%}",
                         ratio=f"interpreter {interpreter:.0%} / engine {engine:.0%}", target="< the engine's",
                         met=self.verdict(interpreter < engine))]

    # ---------------------------------------------------------------- 2e. a convolutional training step

    def convnet(self) -> list[Row]:
        """A small conv net's SGD step (Conv2d, relu, max pool, Conv2d, relu, max pool, Linear, cross_entropy),
        batch 16 of 28x28:
        the convolutions' im2col matmuls against PyTorch's oneDNN kernels, in seconds per step."""
        n = self.sizes["convnet"]
        variants = {f"convnet STEPS={k}": self.commands(self.script("convnet.grad", f"convnet-{k}", STEPS=k))
                    for k in (0, n)}
        t = self.measure_variants(variants, {**user_env(), **SINGLE_THREADED})
        engines = ("gradcli", "torch") if self.torch else ("gradcli",)
        per_step = {e: self.cost(f"convnet ({e})", t[f"convnet STEPS={n}", e], t["convnet STEPS=0", e]) / n
                    for e in engines}
        label = (f"conv net step: Conv2d(1,8,3), MaxPool2d, Conv2d(8,16,3), MaxPool2d, Linear, batch 16 of 28x28, "
                 f"SGD (per step, {n} steps)")
        if not self.torch:
            return [Row(label, millis(per_step["gradcli"]), torch="skipped")]
        ratio = per_step["gradcli"] / per_step["torch"]
        return [Row(label, millis(per_step["gradcli"]), torch=millis(per_step["torch"]),
                    ratio=f"gradcli / PyTorch {ratio:.2f}x", target="(reported)")]

    # ---------------------------------------------------------------- 3. big tensors

    def big(self, label: str, grad: str, floor: str, size: str, n: int, target: float, **fixed) -> Row:
        """`size` (a parameter of both files) at 0 and at n: the difference is the computation's cost."""
        variants = {f"{grad} {size}={k}": self.commands(self.script(grad, f"{grad}-{k}", **{size: k}, **fixed),
                                                        self.script(floor, f"{grad}-{k}", **{size: k}, **fixed))
                    for k in (0, n)}
        t = self.measure_variants(variants, {**user_env(), **SINGLE_THREADED})
        cost = {e: self.cost(f"{grad} ({e})", t[f"{grad} {size}={n}", e], t[f"{grad} {size}=0", e])
                for e in ("gradcli", "floor", "torch") if e != "torch" or self.torch}
        ratio = cost["gradcli"] / cost["floor"]
        return Row(label.format(n=n, **fixed), seconds(cost["gradcli"]), seconds(cost["floor"]),
                   self.torch_cell(self.torch and seconds(cost["torch"])),
                   f"gradcli / floor {ratio:.2f}x", f"<= {target:.2f}x", self.verdict(ratio <= target))

    def mlp(self) -> list[Row]:
        return [self.big("MLP 784-512-10, batch {BATCH}, {n} SGD steps", "mlp.grad", "mlp_numpy.py",
                         "STEPS", self.sizes["mlp"], 1.05, BATCH=self.sizes["batch"])]

    def elementwise(self) -> list[Row]:
        return [self.big("`((x*x).exp().sum(1).log()).mean()` + backward, {ROWS}x1000, x{n}", "elementwise.grad",
                         "elementwise_numpy.py", "REPS", self.sizes["reps"], 0.80, ROWS=self.sizes["rows"])]

    # ---------------------------------------------------------------- 4. deep graphs

    def deep(self) -> list[Row]:
        small, big = self.sizes["chain"]
        variants = {f"chain N={k}": self.commands(self.script("chain.grad", f"chain-{k}", N=k))
                    for k in (0, small, big)}
        t = self.measure_variants(variants, {**user_env(), **SINGLE_THREADED})
        engines = ("gradcli", "torch") if self.torch else ("gradcli",)
        cost = {(k, e): self.cost(f"chain N={k} ({e})", t[f"chain N={k}", e], t["chain N=0", e])
                for k in (small, big) for e in engines}
        per_node = {e: (t[f"chain N={big}", e].peak_rss - t["chain N=0", e].peak_rss) / big for e in engines}
        scale = cost[big, "gradcli"] / (big / small * cost[small, "gradcli"])
        rows = [Row(f"deep chain of `y.sin()`: {small:,} ops + backward", seconds(cost[small, "gradcli"]),
                    torch=self.torch_cell(self.torch and seconds(cost[small, "torch"]))),
                Row(f"deep chain: {big:,} ops + backward", seconds(cost[big, "gradcli"]),
                    torch=self.torch_cell(self.torch and seconds(cost[big, "torch"])),
                    ratio=f"{big:,} / ({big // small} x {small:,}) {scale:.2f}", target="<= 1.20",
                    met=self.verdict(scale <= 1.2)),
                Row(f"deep chain: peak RSS per node ({big:,})", f"{per_node['gradcli']:.0f} B",
                    torch=self.torch_cell(self.torch and f"{per_node['torch']:.0f} B"), target="<= 400 B",
                    met=self.verdict(per_node["gradcli"] <= 400))]
        if self.torch:
            rows[0].ratio = f"gradcli / PyTorch {cost[small, 'gradcli'] / cost[small, 'torch']:.2f}x"
        # In-process, with tracemalloc: what is still allocated once backward has run, and once the
        # output is dropped (the allocator may keep the pages, so RSS would not show it).
        n = self.sizes["memory"]
        _, _, out = run_process([sys.executable, str(HERE / "deep_memory.py"), str(n), "--traced"], user_env())
        mem = json.loads(out)
        rows.append(Row(f"deep chain: live graph, {n:,} ops (tracemalloc)", f"{mem['built']:.0f} B/node"))
        rows.append(Row("deep chain: still allocated after backward, output alive",
                        f"{mem['after_backward']:.0f} B/node",
                        ratio=f"{mem['after_backward'] / mem['built']:.0%} of the live graph"))
        after = mem["after_del"] / mem["built"]
        rows.append(Row("deep chain: still allocated after the output is dropped", f"{mem['after_del']:.1f} B/node",
                        ratio=f"{after:.1%} of the live graph", target="<= 1%", met=self.verdict(after <= 0.01)))
        return rows

    # ---------------------------------------------------------------- 5. parsing

    def parse(self) -> list[Row]:
        sizes = self.sizes["parse"]
        cmd = [sys.executable, str(HERE / "parse_bench.py"), "--json", "--runs", str(self.runs), *map(str, sizes)]
        _, _, out = run_process(cmd, user_env())
        t = {int(k): v for k, v in json.loads(out).items()}
        rows = []
        for n in sizes:
            row = Row(f"parse: {n:,}-line script (in-process)", seconds(t[n]))
            if n == 10_000:
                row.target, row.met = "<= 0.200 s", self.verdict(t[n] <= 0.2)
            rows.append(row)
        small, big = sizes[-2:]
        scale = t[big] / (big / small * t[small])
        rows.append(Row(f"parse: linearity, {big:,} / ({big // small} x {small:,} lines)", f"{scale:.2f}",
                        target="<= 1.20", met=self.verdict(scale <= 1.2)))
        return rows


# ================================================================ machine, profile, main

def machine(torch_python: str | None) -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown CPU")
    import numpy
    text = (f"machine: {os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}, numpy {numpy.__version__}")
    if torch_python:
        version = subprocess.run([torch_python, "-c", "import torch; print(torch.__version__)"], env=user_env(),
                                 capture_output=True, text=True).stdout.strip()
        text += f"; PyTorch {version} ({torch_python})"
    return text


def profile(name: str, sizes: dict, workdir: Path) -> None:
    """Print cProfile's top entries (by own time) for gradcli on one workload at the chosen sizes: the
    whole process for start-up, the part timed.py times for the others, parse() for parsing."""
    env = {**user_env(), **SINGLE_THREADED}
    if name == "startup":
        cmd = [sys.executable, "-m", "cProfile", "-s", "tottime", "-m", "gradcli", "run",
               str(REPO / "examples" / "tutorial.grad")]
        env = user_env()
    elif name == "parse":
        cmd = [sys.executable, "-m", "cProfile", "-s", "tottime", str(HERE / "parse_bench.py"), "--json",
               "--runs", "1", str(sizes["parse"][-1])]
    else:
        path, params = {"perop": ("perop.grad", dict(N=sizes["perop"])),
                        "train": ("train.grad", dict(STEPS=sizes["train"])),
                        "rnn": ("rnn.grad", dict(STEPS=sizes["rnn"])),
                        "classes": ("classes.grad", dict(STEPS=sizes["classes"])),
                        "mlp": ("mlp.grad", dict(STEPS=sizes["mlp"], BATCH=sizes["batch"])),
                        "elementwise": ("elementwise.grad", dict(REPS=sizes["reps"], ROWS=sizes["rows"])),
                        "deep": ("chain.grad", dict(N=sizes["chain"][-1])),
                        "convnet": ("convnet.grad", dict(STEPS=sizes["convnet"]))}[name]
        cmd = [sys.executable, str(HERE / "timed.py"), "gradcli", str(instantiate(HERE / path, workdir, **params)),
               str(workdir / "seconds"), "--profile"]
    out = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
    lines = (out.stdout + out.stderr).splitlines()
    start = next((i for i, line in enumerate(lines) if "function calls" in line), 0)
    print("\n".join(line for line in lines[start:start + 40] if line.strip()))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="2 runs and smaller sizes")
    mode.add_argument("--smoke", action="store_true", help="tiny sizes, 1 run, no warm-up: checks that everything runs")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--torch-python", metavar="PATH", help="Python with torch (default: $ORACLE_PYTHON)")
    who.add_argument("--no-torch", action="store_true", help="leave out the PyTorch column")
    p.add_argument("--only", metavar="NAME,...", help=f"some of: {', '.join(WORKLOADS)}")
    p.add_argument("--runs", type=int, help="runs per measurement (median taken)")
    p.add_argument("--profile", metavar="NAME", choices=WORKLOADS, help="cProfile gradcli on one workload instead")
    args = p.parse_args(argv)

    sizes = SIZES["quick" if args.quick else "smoke" if args.smoke else "full"]
    if args.runs:
        sizes = {**sizes, "runs": args.runs}
    only = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = set(only) - set(WORKLOADS)
    if unknown:
        p.error(f"unknown workload: {', '.join(sorted(unknown))} (choose from {', '.join(WORKLOADS)})")
    torch_python = None if args.no_torch else args.torch_python or os.environ.get("ORACLE_PYTHON")

    with tempfile.TemporaryDirectory(prefix="gradcli-bench-") as tmp:
        if args.profile:
            profile(args.profile, sizes, Path(tmp))
            return 0
        print(machine(torch_python))
        print(f"sizes: {'smoke' if args.smoke else 'quick' if args.quick else 'full'}, median of {sizes['runs']} "
              f"run(s); BLAS single-threaded except for start-up\n", flush=True)
        suite = Suite(sizes, torch_python, Path(tmp))
        rows = []
        for name in only:
            rows += getattr(suite, name)()
        print(table(rows))
        notes = suite.notes
        if not torch_python:
            notes = ["PyTorch column skipped: " + ("--no-torch" if args.no_torch else
                                                   "no --torch-python given and $ORACLE_PYTHON unset")] + notes
        if notes:
            print("\n" + "\n".join(f"note: {note}" for note in notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
