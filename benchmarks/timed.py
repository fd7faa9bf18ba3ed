"""Runs one workload file and writes how long it took, leaving out interpreter start-up and imports.

    python benchmarks/timed.py gradcli SCRIPT.grad TIMEFILE     as `gradcli run SCRIPT.grad`
    python benchmarks/timed.py python SCRIPT TIMEFILE           as `python SCRIPT` (PyTorch, numpy floors)
    ... TIMEFILE --profile                                      and cProfile's top entries to stderr

Start-up is measured on its own (run.py's first rows); taken out here, it no longer swamps the small
differences between a workload's variants with its own jitter (importing torch varies by 0.3 s from
run to run on a busy machine). The script's stdout is untouched; the seconds go to TIMEFILE.
"""

import cProfile
import pstats
import sys
import time

engine, script, timefile = sys.argv[1:4]
profiler = cProfile.Profile() if sys.argv[4:] == ["--profile"] else None
if engine == "gradcli":
    from gradcli import cli, session  # noqa: F401  (what `gradcli run` imports, before the clock)
    from gradcli.engine import ops
    from gradcli.language import parser, stdlib

    parser.parse("x = 1\n")             # and the grammar's tables loaded
    # and what gradcli loads on first use (the op groups, torch.nn, torch.optim, ...), as `import torch`
    # loads all of PyTorch before the other engine's clock: a workload's size-0 variant may not reach them
    ops.GROUPS, stdlib.modules()

    def run():
        return cli.main(["run", script])
else:
    import runpy

    import numpy  # noqa: F401
    try:
        import torch  # noqa: F401
        import torch.nn.functional  # noqa: F401
    except ImportError:                 # a numpy floor, run by the project's Python
        pass

    def run():
        runpy.run_path(script, run_name="__main__")
        return 0
sys.argv = [script]
start = time.perf_counter()
status = profiler.runcall(run) if profiler else run()
elapsed = time.perf_counter() - start
sys.stdout.flush()
with open(timefile, "w") as f:
    f.write(repr(elapsed))
if profiler:
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(30)
sys.exit(status)
