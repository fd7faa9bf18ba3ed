"""Resource limits (gradcli/deadline.py, gradcli/engine/budget.py, gradcli/language/bounds.py): --timeout, --max-memory, bounded integers, strings and lists,
recursion and nesting depth. Every limit ends the script with one clear error, never a hang, an OOM
kill or a traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import error_line, run_script
from gradcli.engine import budget as budget_module
from gradcli.engine.state import STATE
from gradcli import deadline
from gradcli.engine import autograd
from gradcli.errors import ScriptError
from gradcli.repl.shell import Options, Shell
from gradcli.session import Session

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent


def gradcli(*args, stdin=None, timeout=60):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    started = time.monotonic()
    p = launcher.run(args, input=stdin, env=env, timeout=timeout)
    p.seconds = time.monotonic() - started
    return p


def one_error(stderr: str) -> str:
    """The error line of a report (message, then at most the source line and a caret)."""
    lines = stderr.splitlines()
    assert 1 <= len(lines) <= 3, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture
def budget():
    """Set budget_module.set_max_memory for one test, and put the default back after."""
    before = budget_module.max_memory()
    yield budget_module.set_max_memory
    budget_module.set_max_memory(before)


# ================================================================================ --timeout

def test_timeout_stops_a_loop_with_status_124():
    p = gradcli("--timeout", "0.5", "-c", "print('before')\ni = 0\nwhile True:\n    i += 1")
    assert p.returncode == 124
    assert p.stdout == "before\n"
    line = one_error(p.stderr)
    assert line.startswith("<string>:") and line.endswith(": TimeoutError: stopped after 0.5 seconds (--timeout 0.5)")
    assert p.seconds < 10


def test_timeout_stops_a_script_function_called_per_element():
    # Tensor.apply_ calls the script's function once per element: the deadline holds inside it
    p = gradcli("--timeout", "0.5", "-c", "import torch\nx = torch.ones(10 ** 7)\nx.apply_(lambda v: v + 1)")
    assert p.returncode == 124
    assert one_error(p.stderr).endswith(": TimeoutError: stopped after 0.5 seconds (--timeout 0.5)")
    assert p.seconds < 10


def test_timeout_with_run_and_a_file(tmp_path):
    script = tmp_path / "spin.grad"
    script.write_text("def f():\n    while True:\n        pass\nf()\n")
    p = gradcli("run", "--timeout", "0.5", str(script))
    assert p.returncode == 124
    assert one_error(p.stderr).startswith(f"{script}:")
    assert "TimeoutError: stopped after 0.5 seconds (--timeout 0.5)" in p.stderr


def test_timeout_in_jsonl_is_an_error_event(tmp_path):
    p = gradcli("--format", "jsonl", "--timeout", "0.5", "-c", "while True:\n    pass")
    assert p.returncode == 124
    events = [json.loads(line) for line in p.stdout.splitlines()]
    assert [e["event"] for e in events] == ["error", "end"]
    assert (events[0]["type"], events[0]["message"]) == ("TimeoutError", "stopped after 0.5 seconds (--timeout 0.5)")
    assert events[1]["ok"] is False


def test_timeout_stops_a_numpy_call_in_progress():
    # An int64 product has no BLAS: numpy takes tens of seconds over it, in one C call, where no
    # signal is seen; the supervisor ends the worker, naming the line from the page they share. Two
    # seconds, not less: on a loaded machine a shorter limit ended the run before its first print.
    p = gradcli("--timeout", "2", "-c", "import torch\nx = torch.ones(3000, 3000, dtype=torch.int64)\n"
                                        "print('start')\ny = x @ x\nprint('never')")
    assert p.returncode == 124
    assert p.stdout == "start\n"
    assert p.stderr == ("<string>:4: TimeoutError: stopped after 2 seconds (--timeout 2), inside a computation "
                        "that could not be interrupted\n")
    assert p.seconds < 20


def test_scripts_within_the_timeout_are_unaffected():
    p = gradcli("--timeout", "30", "run", "--seed", "0", "--stable-ids", str(ROOT / "examples" / "tutorial.grad"))
    q = gradcli("run", "--seed", "0", "--stable-ids", str(ROOT / "examples" / "tutorial.grad"))
    assert (p.returncode, p.stdout, p.stderr) == (q.returncode, q.stdout, q.stderr) == (0, q.stdout, "")


@pytest.mark.parametrize("value, message", [
    ("abc", "argument --timeout: invalid number of seconds 'abc'"),
    ("-1", "argument --timeout: invalid number of seconds '-1'"),
])
def test_timeout_option_values(value, message):
    p = gradcli("--timeout", value, "-c", "print(1)")
    assert p.returncode == 2
    assert p.stderr.splitlines()[-1] == f"gradcli: error: {message}"


def test_timeout_zero_means_no_limit():
    p = gradcli("--timeout", "0", "-c", "s = 0\nfor i in range(10**5):\n    s += i\nprint(s)")
    assert (p.returncode, p.stdout) == (0, "4999950000\n")


def run_with_deadline(source: str, seconds: float = 0.3, session=None):
    session = session or Session(out=io.StringIO(), err=io.StringIO())
    started = time.monotonic()
    with pytest.raises(ScriptError) as caught:
        with deadline.Deadline(seconds):
            session.run_source(source, "t.grad")
    return caught.value, time.monotonic() - started


@pytest.mark.parametrize("source, line", [
    ("while True:\n    pass", None),
    ("x = sum(range(10**12))", 1),
    ("x = max(range(10**12))", 1),
    ("x = min(range(10**12), key=abs)", 1),
    ("x = all(range(1, 10**13))", 1),
    ("x = 1.5 in range(10**12)", 1),
    ("x = range(10**12).count(1.5)", 1),
    ("for i in range(10**12):\n    pass", None),
])
def test_the_timer_stops_python_loops_and_c_loops_over_huge_ranges(source, line):
    err, seconds = run_with_deadline(source)
    assert (err.kind, err.message, err.exit_status) == ("TimeoutError", "stopped after 0.3 seconds (--timeout 0.3)",
                                                       124)
    assert err.line == line if line is not None else err.line in (1, 2)    # the loop's test or its body
    assert seconds < 3


def test_timeout_inside_no_grad_restores_grad_mode():
    err, _ = run_with_deadline("import torch\nwith torch.no_grad():\n    while True:\n        pass")
    assert err.kind == "TimeoutError"
    assert autograd.is_grad_enabled()


def test_timeout_while_parsing_a_huge_script():
    source = "x = 1\n" * 2_000_000
    err, seconds = run_with_deadline(source, 0.2)
    assert (err.kind, err.line, err.exit_status) == ("TimeoutError", 0, 124)
    assert seconds < 5


def test_the_repl_survives_a_timeout():
    shell = Shell(Options(colour=False), out=io.StringIO(), err=io.StringIO())
    shell.execute("n = 5")
    with deadline.Deadline(0.3):
        assert shell.execute("while True:\n    n += 1")
    assert shell.err.getvalue().startswith("<stdin>:")
    assert "TimeoutError: stopped after 0.3 seconds (--timeout 0.3)" in shell.err.getvalue()
    shell.execute("print(n > 5)")
    assert shell.out.getvalue().endswith("True\n")


def test_no_seconds_arms_nothing():
    d = deadline.Deadline(None).start()
    assert not d.armed
    d.cancel()


# ============================================================================= --max-memory

ALLOC = ("RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
         "you tried to allocate {} bytes. Error code 12 (Cannot allocate memory)")


@pytest.mark.parametrize("expression, nbytes", [
    ("torch.ones(10**6, 10**6)", 4 * 10**12),              # PyTorch 2.13 says this, word for word
    ("torch.zeros(10**6, 10**6, dtype=torch.float64)", 8 * 10**12),
    ("torch.ones(10**6, 10**6, dtype=torch.bool)", 10**12),
    ("torch.empty(10**13)", 4 * 10**13),
    ("torch.full((10**7, 10**6), 1.5)", 4 * 10**13),
    ("torch.rand(10**13)", 4 * 10**13),
    ("torch.randn(10**7, 10**7)", 4 * 10**14),
    ("torch.randint(0, 5, (10**7, 10**7))", 8 * 10**14),
    ("torch.normal(0., 1., (10**13,))", 4 * 10**13),
    ("torch.arange(10**13)", 8 * 10**13),
    ("torch.linspace(0, 1, 10**13)", 4 * 10**13),
    ("torch.eye(10**7)", 4 * 10**14),
    ("torch.randperm(10**13)", 8 * 10**13),
    ("torch.ones(2, 2).new_ones(10**7, 10**7)", 4 * 10**14),
    ("torch.ones(1).repeat(10**7, 10**7)", 4 * 10**14),
    ("torch.ones(10**6, 1) + torch.ones(1, 10**6)", 4 * 10**12),
    ("torch.ones(10**6, 1) @ torch.ones(1, 10**6)", 4 * 10**12),
    ("torch.outer(torch.ones(10**6), torch.ones(10**6))", 4 * 10**12),
    ("torch.einsum('i,j->ij', torch.ones(10**6), torch.ones(10**6))", 4 * 10**12),
    ("torch.ones(1).expand(10**13).clone()", 4 * 10**13),
    ("torch.ones(3).expand(10**13, 3).contiguous()", 12 * 10**13),
    ("torch.ones(1).expand(10**7, 10**7) + 1", 4 * 10**14),
    ("torch.cat([torch.ones(10**7)] * 10**6)", 4 * 10**13),
    ("torch.stack([torch.ones(10**7)] * 10**6)", 4 * 10**13),
])
def test_huge_tensors_fail_at_once_with_pytorchs_message(expression, nbytes):
    started = time.process_time()     # CPU time: a loaded machine stretches the wall clock, not this
    assert error_line(f"import torch\nx = {expression}") == ALLOC.format(nbytes)
    assert time.process_time() - started < 5


@pytest.mark.parametrize("expression, message", [
    ("torch.ones(10**7, 10**7, 10**7)", "RuntimeError: Storage size calculation overflowed with "
                                        "sizes=[10000000, 10000000, 10000000]"),
    ("torch.zeros(2**62, 4)", "RuntimeError: Storage size calculation overflowed with sizes=[4611686018427387904, 4]"),
    ("torch.ones(10**30)", "TypeError: ones(): argument 'size' failed to unpack the object at pos 1 with error "
                           "\"Overflow when unpacking long long\""),
    ("torch.ones(10**6, 1).expand(10**6, 10**6).tolist()", "MemoryError: tolist() of 1000000000000 elements is "
                                                          "too large (gradcli allows at most 100000000)"),
    # an empty tensor whose other sizes span 2**63 bytes: PyTorch keeps it as sizes, numpy cannot hold it
    ("torch.zeros(0, 2**63 - 1)", "NotImplementedError: gradcli does not make an empty tensor of sizes "
                                  "[0, 9223372036854775807]: its arrays stop short of 2**63 bytes across their "
                                  "non-zero sizes (PyTorch makes it, as sizes only)"),
    ("torch.eye(0, 2**62)", "NotImplementedError: gradcli does not make an empty tensor of sizes "
                            "[0, 4611686018427387904]: its arrays stop short of 2**63 bytes across their non-zero "
                            "sizes (PyTorch makes it, as sizes only)"),
])
def test_sizes_past_64_bits_and_python_lists(expression, message):
    assert error_line(f"import torch\nx = {expression}") == message


def test_past_the_budget_but_within_the_machine_says_which_limit(budget):
    budget(100 << 20)
    assert error_line("import torch\nx = torch.ones(10**8)") == (
        ALLOC.format(4 * 10**8) + " (gradcli's --max-memory is 100.0 MiB)")
    assert error_line("import torch\nx = torch.ones(10**4, 1) * torch.ones(1, 10**4)") == (
        ALLOC.format(4 * 10**8) + " (gradcli's --max-memory is 100.0 MiB)")
    r = run_script("import torch\nx = torch.ones(10**6)\nprint(x.shape)")
    assert r.out == "torch.Size([1000000])\n"


def test_no_budget_with_zero(budget):
    budget(0)
    assert budget_module.max_memory() == 0
    assert run_script("import torch\nprint(torch.ones(10**6).sum())").out == "tensor(1000000.)\n"


def test_the_command_caps_all_of_a_scripts_data():
    """Many tensors under the per-tensor size: the process limit turns the last one into an error."""
    p = gradcli("--max-memory", "200M", "-c", "import torch\nkeep = []\nfor i in range(1000):\n"
                                             "    keep.append(torch.ones(10**7))")
    assert p.returncode == 1
    line = one_error(p.stderr)
    assert line.startswith("<string>:4:")
    assert "can't allocate memory" in line or "MemoryError: out of memory" in line


def test_the_command_caps_python_values_too():
    # Strings of a few kilobytes (allocated by malloc, as those of a few hundred bytes were): the process's
    # limit, the budget plus the room gradcli keeps for its own runtime (about 480 MB here), is reached after
    # about 80,000 of them, where strings of 600 bytes took 740,000 appends and 4.5 s
    p = gradcli("--max-memory", "100M", "-c", "x = []\nfor i in range(10**8):\n    x.append(str(i) * 1000)")
    assert p.returncode == 1
    line = one_error(p.stderr)        # out of memory, the position may not have been recorded
    assert line.startswith("<string>") and line.endswith(": MemoryError: out of memory (gradcli's --max-memory "
                                                         "is 100.0 MiB)")


@pytest.mark.parametrize("text, nbytes", [
    ("1000", 1000), ("512K", 512 << 10), ("512M", 512 << 20), ("2G", 2 << 30), ("1.5GiB", 3 << 29), ("1T", 1 << 40),
    ("64mb", 64 << 20), ("0", 0),
])
def test_sizes(text, nbytes):
    assert budget_module.parse_size(text) == nbytes


def test_bad_size_is_a_usage_error():
    p = gradcli("--max-memory", "lots", "-c", "print(1)")
    assert p.returncode == 2
    assert p.stderr.splitlines()[-1] == ("gradcli: error: argument --max-memory: invalid size 'lots' (expected "
                                         "bytes, or a number with K, M, G or T)")


def test_default_budget_is_half_the_machines_memory():
    total = budget_module.machine_memory()
    assert total and budget_module.default_max_memory() == total // 2


# ================================================================ integers, strings and lists

# The cases below run under a 256 MiB budget, which caps strings, lists and tuples at 2**24 items
# (budget_module.set_max_memory); the default budget caps them at budget_module.ITEMS_CAP.
BOUNDS_BUDGET = 256 << 20
CAP = 1 << 24
TOO_MANY = "MemoryError: a {} of {} items is too large (gradcli allows at most %d)" % CAP
INT_LIMIT = "integer results are limited to about 300,000 digits in gradcli"


BOUNDED = [
    ("x = 10 ** 10 ** 10", f"MemoryError: 10 ** 10000000000 is too large: {INT_LIMIT}"),
    ("x = pow(10, 10 ** 10)", f"MemoryError: 10 ** 10000000000 is too large: {INT_LIMIT}"),
    ("x = 2 << 10 ** 10", f"MemoryError: {INT_LIMIT}"),
    ("x = 3\nwhile True:\n    x = x * x", f"MemoryError: {INT_LIMIT}"),
    ("x = 3\nwhile True:\n    x *= x", f"MemoryError: {INT_LIMIT}"),
    ("x = 3\nwhile True:\n    x **= 2", f"MemoryError: integer ** 2 is too large: {INT_LIMIT}"),
    ("x = pow(3, 2 ** 100000, 2 ** 10000 + 1)", "MemoryError: pow() with a 100001-bit exponent and a 10001-bit "
                                               "modulus is too large to compute in gradcli"),
    ("import math\nx = math.factorial(10 ** 8)", f"MemoryError: factorial(100000000) is too large: {INT_LIMIT}"),
    ("import math\nx = math.comb(10 ** 8, 5 * 10 ** 7)", "MemoryError: comb(100000000, 50000000) is too large: "
                                                        f"{INT_LIMIT}"),
    ("import math\nx = math.perm(10 ** 7)", f"MemoryError: perm(10000000, 10000000) is too large: {INT_LIMIT}"),
    ("import math\nx = math.prod([2 ** 999999] * 3)", f"MemoryError: {INT_LIMIT}"),
    ("import math\nx = math.lcm(2 ** 600000 + 1, 2 ** 600000 + 3)", f"MemoryError: {INT_LIMIT}"),
    ("x = str(10 ** 100000)", "ValueError: Exceeds the limit (4300 digits) for integer string conversion; use "
                              "sys.set_int_max_str_digits() to increase the limit"),
    ("x = int('9' * 5000)", "ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has "
                            "5000 digits; use sys.set_int_max_str_digits() to increase the limit"),
    ("x = 'a' * 10 ** 11", TOO_MANY.format("str", 10**11)),
    ("x = 10 ** 11 * 'a'", TOO_MANY.format("str", 10**11)),
    ("x = [0] * 10 ** 10", TOO_MANY.format("list", 10**10)),
    ("x = (0,) * 10 ** 10", TOO_MANY.format("tuple", 10**10)),
    ("import torch\nx = [0] * torch.tensor(10 ** 10)", TOO_MANY.format("list", 10**10)),
    # a tensor leaves `t * sequence` to the sequence (NotImplemented), which repeats itself t times
    ("import torch\nx = torch.tensor(10 ** 10) * [0]", TOO_MANY.format("list", 10**10)),
    ("import torch\nx = torch.tensor(10 ** 11) * 'a'", TOO_MANY.format("str", 10**11)),
    ("x = 'a'\nx *= 10 ** 11", TOO_MANY.format("str", 10**11)),
    ("s = 'ab'\nwhile True:\n    s = s + s", TOO_MANY.format("str", 2**25)),
    ("s = [1]\nwhile True:\n    s += s", TOO_MANY.format("list", 2**25)),
    ("x = list(range(10 ** 10))", TOO_MANY.format("list", 10**10)),
    ("x = tuple(range(10 ** 10))", TOO_MANY.format("tuple", 10**10)),
    ("x = sorted(range(10 ** 10))", TOO_MANY.format("list", 10**10)),
    ("x = sum([[0] * 10 ** 7] * 20, [])", TOO_MANY.format("list", 20_000_000)),
    ("x = [1]\nx.extend(range(10 ** 10))", TOO_MANY.format("list", 10**10)),
    ("x = 'a'.center(10 ** 10)", TOO_MANY.format("str", 10**10)),
    ("x = 'a'.ljust(10 ** 10)", TOO_MANY.format("str", 10**10)),
    ("x = 'a'.rjust(10 ** 10, '*')", TOO_MANY.format("str", 10**10)),
    ("x = '1'.zfill(10 ** 10)", TOO_MANY.format("str", 10**10)),
    ("x = ('a' * 10 ** 6).replace('a', 'b' * 101)", TOO_MANY.format("str", 101_000_000)),
    ("x = ('a' * 10 ** 7).join(['b'] * 11)", TOO_MANY.format("str", 100_000_011)),
    ("x = '%0999999999d' % 1", "MemoryError: format width or precision 999999999 is too large (gradcli allows at "
                               f"most {CAP})"),
    ("x = '%*d' % (10 ** 9, 1)", "MemoryError: format width or precision 1000000000 is too large (gradcli allows "
                                 f"at most {CAP})"),
    ("x = '%.*f' % (10 ** 9, 1.5)", "MemoryError: format width or precision 1000000000 is too large (gradcli "
                                    f"allows at most {CAP})"),
    ("x = f'{1:999999999}'", "MemoryError: format width or precision 999999999 is too large (gradcli allows at "
                             f"most {CAP})"),
    ("w = 10 ** 9\nx = f'{1.5:>{w}.2f}'", "MemoryError: format width or precision 1000000000 is too large "
                                          f"(gradcli allows at most {CAP})"),
    ("import torch\ntorch.set_printoptions(precision=10 ** 9)", "MemoryError: precision=1000000000 is too large "
                                                                "(gradcli prints at most 10000 digits)"),
]


# Reaching a bound builds values as large as the bound allows (a list of 2**24 items before the 2**25
# one is refused). They run in one child process for all the cases, so the test worker's heap stays
# small: every fork after them (the --check-grads replays) would copy its page tables.
_BOUNDS_CHILD = """
import io, json, sys, time
sys.path.insert(0, sys.argv[1])
from conftest import error_line
from gradcli.engine import budget as budget_module
from gradcli.engine.state import STATE
from gradcli import deadline
from gradcli.repl.shell import Options, Shell
budget_module.set_max_memory(int(sys.argv[2]))
sources, repl_sources = json.load(sys.stdin)
results = []
for source in sources:
    started = time.monotonic()
    results.append((error_line(source), time.monotonic() - started))
shell = Shell(Options(colour=False), out=io.StringIO(), err=io.StringIO())
errors = []
for source in repl_sources:
    shell.err.seek(0), shell.err.truncate()
    shell.execute(source)
    errors.append(shell.err.getvalue())
shell.execute("print('still here')")
json.dump({"bounded": results, "repl": errors, "repl_out": shell.out.getvalue()}, sys.stdout)
"""
REPL_SOURCES = [s for s, _ in BOUNDED] + ["import torch\nx = torch.ones(10**6, 10**6)", "x = " + "(" * 300 + ")" * 300,
                                         "def f(n):\n    return f(n + 1)\nf(0)"]


@pytest.fixture(scope="module")
def bounds_child():
    done = subprocess.run([sys.executable, "-c", _BOUNDS_CHILD, str(Path(__file__).parent), str(BOUNDS_BUDGET)], capture_output=True,
                          text=True, input=json.dumps([[s for s, _ in BOUNDED], REPL_SOURCES]), timeout=240)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("index", range(len(BOUNDED)), ids=[s for s, _ in BOUNDED])
def test_values_past_the_bounds_are_refused(index, bounds_child):
    line, seconds = bounds_child["bounded"][index]
    assert line == BOUNDED[index][1]
    assert seconds < 10


def test_the_repl_survives_every_bound(bounds_child):
    for source, err in zip(REPL_SOURCES, bounds_child["repl"]):
        assert "internal error" not in err
        assert err.startswith("<stdin>:"), source
    assert bounds_child["repl_out"].endswith("still here\n")


@pytest.mark.parametrize("source, out", [
    ("print(round(1, -10 ** 9), round(-5, -1000), round(123456, -3))", "0 0 123000\n"),
    ("print(len('ab' * 1000), len([0] * 10 ** 6), (2 ** 1000).bit_length(), len(str(10 ** 4000)))",
     "2000 1000000 1001 4001\n"),
    ("print('%5.1f|%-3d|%s|%%' % (1.25, 7, 'x'), f'{3.14159:8.3f}', '{' + '}')", "  1.2|7  |x|%    3.142 {}\n"),
    ("x = 2 ** 999000\nprint(x.bit_length(), (x * 3) % 7, pow(3, 10 ** 6, 1000))", "999001 3 1\n"),
])
def test_values_within_the_bounds_behave_as_in_python(source, out):
    assert run_script(source).out == out


def test_huge_integer_literal_is_a_syntax_error():
    r = run_script("x = " + "9" * 5000)
    assert (r.error.kind, r.error.exit_status, r.error.line, r.error.col) == ("SyntaxError", 2, 1, 5)
    assert r.error.message == ("Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; "
                               "use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for "
                               "huge integer literals to avoid decimal conversion limits.")


# ===================================================================== recursion and nesting

@pytest.mark.parametrize("source, where", [
    ("def f(n):\n    return f(n + 1)\nf(0)", (2, 12)),
    ("def f(n):\n    return g(n)\ndef g(n):\n    return f(n)\nf(0)", (4, 12)),
    ("def f(n):\n    return [f(n + 1)]\nf(0)", (2, 13)),
    ("import torch\nx = torch.ones(1, requires_grad=True)\ndef h(g):\n    return h(g)\nx.register_hook(h)\n"
     "x.sum().backward()", (4, 12)),
])
def test_deep_recursion_is_a_recursion_error(source, where):
    r = run_script(source)
    assert (r.error.kind, r.error.message, r.error.exit_status) == ("RecursionError",
                                                                    "maximum recursion depth exceeded", 1)
    assert (r.error.line, r.error.col) == where


def test_deeply_nested_data_is_a_recursion_error_when_printed():
    r = run_script("a = []\nfor i in range(100000):\n    a = [a]\nprint(a)")
    assert (r.error.kind, r.error.message) == ("RecursionError",
                                               "maximum recursion depth exceeded while getting the repr of an object")


@pytest.mark.parametrize("source, message", [
    ("x = " + "(" * 5000 + "1" + ")" * 5000, "too deeply nested (more than 200 levels)"),
    ("x = " + "[" * 5000 + "]" * 5000, "too deeply nested (more than 200 levels)"),
    ("x = " + "-" * 5000 + "1", "too deeply nested (more than 200 levels)"),
    ("x = " + "not " * 5000 + "1", "too deeply nested (more than 200 levels)"),
    ("x = " + "1 + " * 5000 + "1", "expression too deeply nested (more than 1000 levels of operators or calls)"),
    ("x = 1" + "[0]" * 5000, "expression too deeply nested (more than 1000 levels of operators or calls)"),
    ("x = print" + "()" * 5000, "expression too deeply nested (more than 1000 levels of operators or calls)"),
    ("x = " + "1 if 1 else " * 5000 + "1", "expression too deeply nested (more than 1000 levels of operators or "
                                             "calls)"),
    ("x = " + "2 ** " * 5000 + "1", "expression too deeply nested (more than 1000 levels of operators or calls)"),
    ("".join("    " * i + "if 1:\n" for i in range(150)) + "    " * 150 + "pass", "too many levels of indentation"),
])
def test_very_deep_nesting_in_the_source_is_a_syntax_error(source, message):
    r = run_script(source)
    kind = "IndentationError" if "indentation" in message else "SyntaxError"      # (CPython's subclass)
    assert (r.error.kind, r.error.message, r.error.exit_status) == (kind, message, 2)


def test_the_bounds_on_strings_and_lists_follow_the_budget():
    before = budget_module.max_memory()
    try:
        budget_module.set_max_memory(BOUNDS_BUDGET)
        assert STATE.max_items == CAP
        budget_module.set_max_memory(16 << 20)
        assert STATE.max_items == 1 << 20
        assert error_line("s = [1]\nwhile True:\n    s += s") == \
            "MemoryError: a list of 2097152 items is too large (gradcli allows at most 1048576)"
        budget_module.set_max_memory(64 << 30)
        assert STATE.max_items == budget_module.ITEMS_CAP == 10 ** 8
        budget_module.set_max_memory(0)                # no budget: the fixed cap
        assert STATE.max_items == budget_module.ITEMS_CAP
        budget_module.set_max_memory(1 << 20)          # a tiny budget still allows a million items
        assert STATE.max_items == 1 << 20
    finally:
        budget_module.set_max_memory(before)
