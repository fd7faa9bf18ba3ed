"""Fuzzing the parser and the evaluator: scripts generated from the grammar, conformance cases mutated, and
plain text, run in-process under a short deadline and a small memory budget. Whatever a script does, only
gradcli's own errors may come out (ScriptError, ScriptSyntaxError, the timeout's TimedOut): any other
exception is a crash of gradcli.

The CI run is small and deterministic (its example counts were halved to keep the suite within 90
seconds: the differential fuzzer, tools/difffuzz.py, now runs the long mutated-script searches). Its
inputs come from a seeded random.Random, each example from its own seed: hypothesis's drawing and
mutation machinery cost more CPU than gradcli's running of the scripts did. The generators make their
choices through a Draws object, so the longer, random run, by hand, draws the same choices from
hypothesis instead (its search and its shrinking):

    GRADCLI_FUZZ_EXAMPLES=100000 .venv/bin/python -m pytest tests/test_fuzz.py -x

(the count is per test; failures print the script that broke gradcli).
"""

from __future__ import annotations

import functools
import io
import os
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from gradcli.engine import budget
from gradcli import deadline
from gradcli import cli
from gradcli.commands import common
from gradcli.errors import ScriptError, ScriptExit
from gradcli.diagnostics.jsonl import JsonLines
from gradcli.repl.shell import Options, Shell
from gradcli.session import Session

ROOT = Path(__file__).resolve().parent.parent
LONG_RUN = int(os.environ.get("GRADCLI_FUZZ_EXAMPLES", "0"))
# Per example. The suite's slice stops each script at half a second: a timeout is one of the outcomes
# allowed, and the few conformance cases that train for longer are still mutated and run that far (their
# loops' bodies run in the first iterations); the long run gives each the two seconds a slow one needs.
SECONDS = 2.0 if LONG_RUN else 0.5
MEMORY = 256 << 20              # tensors past this fail at once, as under --max-memory 256M


class Draws:
    """A generator's choices, from a random.Random seeded for one example. Sizes follow hypothesis's lists
    and text (a geometric length with its average, cut at the maximum); characters and bytes, its mix
    (about half ASCII, the rest over all of Unicode but the surrogates, or the high bytes)."""

    def __init__(self, seed: str):
        self.rng = random.Random(seed)

    def pick(self, options):
        return self.rng.choice(options)

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def size(self, low: int, high: int) -> int:
        n, more = low, _p_continue(low, high)
        while n < high and self.rng.random() < more:
            n += 1
        return n

    def text(self, max_size: int) -> str:
        return "".join(map(chr, (self._code_point() for _ in range(self.size(0, max_size)))))

    def binary(self, max_size: int) -> bytes:
        return bytes(self.rng.randrange(128) if self.boolean() else self.rng.randrange(128, 256)
                     for _ in range(self.size(0, max_size)))

    def _code_point(self) -> int:
        if self.boolean():
            return self.rng.randrange(128)
        while True:
            c = self.rng.randrange(128, 0x110000 if self.boolean() else 0x10000)
            if not 0xD800 <= c < 0xE000:
                return c


@functools.lru_cache(maxsize=None)
def _p_continue(low: int, high: int) -> float:
    """The chance of one more element that gives hypothesis's average size, min(max(2 low, low + 5),
    (low + high) / 2), to a length cut at `high`."""
    want = min(max(2 * low, low + 5), (low + high) / 2) - low

    def average(p):
        return sum(p ** k for k in range(1, high - low + 1))
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if average(mid) < want else (lo, mid)
    return lo


class HypothesisDraws:
    """The same choices drawn from hypothesis, for the long run."""

    def __init__(self, data):
        self.draw = data.draw

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def boolean(self) -> bool:
        return self.draw(st.booleans())

    def size(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def text(self, max_size: int) -> str:
        return self.draw(st.text(alphabet=st.characters(codec="utf-8"), max_size=max_size))

    def binary(self, max_size: int) -> bytes:
        return self.draw(st.binary(max_size=max_size))


def fuzz(examples: int, generate, accept=None):
    """Run the test on `examples` distinct inputs `generate(draws)` (as hypothesis runs no choice sequence
    twice), each from the seed 'TEST N', in order; those `accept` refuses are drawn again. A failure names
    the example and its input. Under GRADCLI_FUZZ_EXAMPLES, hypothesis draws them, that many per test."""
    def decorate(test):
        if LONG_RUN:
            @settings(max_examples=LONG_RUN, deadline=None, database=None, print_blob=True,
                      suppress_health_check=list(HealthCheck))
            @given(st.data())
            def long_run(data):
                value = generate(HypothesisDraws(data))
                assume(accept is None or accept(value))
                note(f"input: {value!r}")
                test(value)
            long_run.__name__, long_run.__doc__ = test.__name__, test.__doc__
            return long_run

        def ci_slice():
            seen, n = set(), 0
            while len(seen) < examples:
                seed = f"{test.__name__} {n}"
                n += 1
                value = generate(Draws(seed))
                key = tuple(value) if isinstance(value, list) else value
                if key in seen or (accept is not None and not accept(value)):
                    assert n < 100 * examples, f"{test.__name__}: the generator repeats itself"
                    continue
                seen.add(key)
                try:
                    test(value)
                except Exception as e:
                    raise AssertionError(f"example {len(seen)} (seed {seed!r}) broke gradcli:\n{value!r}") from e
        ci_slice.__name__, ci_slice.__doc__ = test.__name__, test.__doc__
        return ci_slice
    return decorate


@pytest.fixture(autouse=True, scope="module")
def small_budget():
    before = budget.max_memory()
    budget.set_max_memory(MEMORY)
    yield
    budget.set_max_memory(before)


def _documented_status(e: ScriptError) -> bool:
    """A script error's exit status is one the README documents; a script's own sys.exit(n) (a mutated case
    may end in one, sys.exit(0) included) ends with CPython's status, 0 to 255."""
    if e.__class__ is ScriptExit:
        return 0 <= e.exit_status <= 255
    return e.exit_status in (1, 2, deadline.EXIT_TIMEOUT)


def run(source: str, events: bool = False) -> ScriptError | None:
    """Run `source` in a fresh session; return the ScriptError it ended in (anything else fails the test)."""
    out = io.StringIO()
    session = Session(out=out, err=io.StringIO(), seed=0, events=JsonLines(out) if events else None)
    try:
        with deadline.Deadline(SECONDS):
            session.run_source(source, "<fuzz>")
    except ScriptError as e:
        assert _documented_status(e)
        assert e.kind and isinstance(e.message, str)
        text = e.render()                      # the report itself must not fail either
        assert text.splitlines()[0] == e.headline()
        return e
    return None


# ============================================================================ from the grammar

NAMES = ["x", "y", "z", "w", "t", "n", "i", "f", "out", "loss", "h"]
NUMBERS = ["0", "1", "2", "3", "-1", "7", "0.5", "2.0", "-0.0", "1e-8", "1e308", "100", "10**6", "2**31", "2**63",
           "10**20", "True", "False", "None"]
SHAPES = ["2", "3", "2, 3", "(2, 3)", "[2, 2]", "1, 1", "0", "0, 2", "4, 1, 2", "()", "-1", "10**6", "2, 10**6",
          "torch.Size([2])"]
KWARGS = ["", ", requires_grad=True", ", dtype=torch.float64", ", dtype=torch.int64", ", dtype=torch.bool",
          ", requires_grad=True, dtype=torch.float64", ", dtype=torch.float16"]
FACTORIES = ["torch.ones({s}{k})", "torch.zeros({s}{k})", "torch.randn({s}{k})", "torch.rand({s}{k})",
             "torch.empty({s}{k})", "torch.full(({s},), 1.5{k})", "torch.arange({n}{k})", "torch.eye({n}{k})",
             "torch.tensor([[1., 2.], [3., 4.]]{k})", "torch.tensor([1, 2, 3]{k})", "torch.tensor({n}{k})",
             "torch.linspace(0, 1, {n}{k})", "torch.randint(0, 5, ({s},){k})", "torch.randperm({n}{k})"]
METHODS = ["sum()", "mean()", "exp()", "log()", "sqrt()", "relu()", "sigmoid()", "tanh()", "t()", "abs()",
           "view(-1)", "reshape(2, -1)", "unsqueeze(0)", "squeeze()", "transpose(0, 1)", "permute(1, 0)",
           "expand(3, -1)", "repeat(2, 1)", "detach()", "clone()", "item()", "tolist()", "max()", "min(dim=0)",
           "argmax()", "softmax(0)", "norm()", "pow(2)", "clamp(min=0)", "flip(0)", "cumsum(0)", "var()", "std()",
           "requires_grad_()", "retain_grad()", "zero_()", "add_(1)", "mul_(2)", "fill_(3)", "backward()",
           "backward(retain_graph=True)", "sum().backward()", "mean().backward(create_graph=True)", "data", "grad",
           "grad_fn", "shape", "size()", "dim()", "numel()", "T", "is_leaf", "requires_grad", "dtype", "float()",
           "long()", "bool()", "double()", "contiguous()", "masked_fill({e} > 0, 0.)", "index_select(0, {e})",
           "gather(0, {e})", "split(1)", "chunk(2)", "unbind()", "mm({e})", "matmul({e})", "dot({e})",
           "register_hook(print)", "new_ones(2)", "type(torch.float64)", "to(torch.int64)", "all()", "any()",
           "isnan()", "where({e} > 0, {e})", "lerp({e}, 0.5)", "diag()", "tril()", "triu()", "trace()", "det()",
           "inverse()", "logsumexp(0)", "log_softmax(0)", "amax(0)", "roll(1)", "narrow(0, 0, 1)", "flatten()",
           "grad_fn.next_functions", "grad_fn.name()", "size(0)", "unflatten(0, (1, -1))", "movedim(0, -1)",
           "sort()" , "topk(1)", "uniform_()", "normal_()", "random_(0, 5)", "copy_({e})", "set_({e})"]
FUNCTIONS = ["torch.cat([{e}, {e}])", "torch.stack([{e}, {e}])", "torch.where({e} > 0, {e}, {e})",
             "torch.einsum('ij,jk->ik', {e}, {e})", "torch.autograd.grad({e}, {e})",
             "torch.autograd.grad({e}.sum(), [{e}], create_graph=True)", "torch.nn.functional.relu({e})",
             "torch.nn.functional.softmax({e}, dim=0)", "torch.nn.functional.mse_loss({e}, {e})",
             "torch.nn.functional.cross_entropy({e}, {e})", "torch.maximum({e}, {e})", "torch.matmul({e}, {e})",
             "torch.outer({e}, {e})", "torch.broadcast_to({e}, (2, 2))", "torch.autograd.functional.jacobian(f, {e})",
             "torch.linalg.norm({e})", "torch.linalg.solve({e}, {e})", "math.sqrt({e})", "math.factorial({e})",
             "len({e})", "sum({e})", "min({e})", "max({e})", "list({e})", "tuple({e})", "sorted({e})", "str({e})",
             "repr({e})", "float({e})", "int({e})", "abs({e})", "round({e}, 2)", "range({e})", "enumerate({e})",
             "zip({e}, {e})", "reversed({e})", "divmod({e}, {e})", "pow({e}, {e})", "bool({e})", "any({e})",
             "f({e})", "g({e}, {e})", "print({e}, {e}, sep='|')", "torch.manual_seed({e})", "torch.is_grad_enabled()",
             "torch.set_printoptions(precision={e})", "torch.no_grad()", "'%s|%5.2f' % ({e}, {e})", "'ab' * {e}",
             "f'{{e}:.3f}'", "f'{{e}!r:>8}'", "[{e}, {e}][{e}]", "({e}, {e})", "[{e}] * {e}", "{e}[{e}]",
             "{e}[{e}:{e}]", "{e}[..., None]", "{e}[0, ::-1]",
             # values the limits bound (gradcli/language/bounds.py)
             "'%*d' % ({e}, 1)", "'%.*f' % ({e}, 1.5)", "[0] * {e}", "'a'.center({e})", "'ab'.replace('a', 'b' * {e})",
             "range({e}).count(0.5)", "0.5 in range({e})", "sum(range({e}))", "max(range({e}))", "math.comb({e}, {e})",
             "math.perm({e})", "math.prod([{e}, {e}])", "pow({e}, {e}, {e})", "round({e}, {e})", "torch.ones({e}, {e})",
             "torch.ones(2).repeat({e})", "torch.zeros({e}).tolist()", "torch.tensor([[{e}]] * 3)",
             "f'{1.5:{{e}}}'", "str({e}) * {e}"]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>", "<", "<=", "==", "!=", ">", "and",
          "or", "is", "in", "not in"]
UNARY = ["-", "+", "~", "not "]
LEAVES = NAMES + NUMBERS + ["'s'", "[1, 2]", "(1, 2.5)", "torch.ones(2)"]


def _fill(template: str, d, depth: int) -> str:
    while "{e}" in template:
        template = template.replace("{e}", expressions(d, depth - 1), 1)
    return template


def expressions(d, depth: int = 3) -> str:
    if depth <= 0:
        return d.pick(LEAVES)
    kind = d.integer(0, 9)
    if kind <= 1:
        return d.pick(NAMES + NUMBERS)
    if kind == 2:
        template = d.pick(FACTORIES)
        return template.format(s=d.pick(SHAPES), n=d.pick(NUMBERS[:12]), k=d.pick(KWARGS))
    if kind == 3:
        return f"({expressions(d, depth - 1)}).{_fill(d.pick(METHODS), d, depth)}"
    if kind == 4:
        return _fill(d.pick(FUNCTIONS), d, depth)
    if kind in (5, 6):
        return f"({expressions(d, depth - 1)} {d.pick(BINOPS)} {expressions(d, depth - 1)})"
    if kind == 7:
        return f"({d.pick(UNARY)}{expressions(d, depth - 1)})"
    if kind == 8:
        return f"({expressions(d, depth - 1)} if {expressions(d, depth - 1)} else {expressions(d, depth - 1)})"
    return f"{d.pick(NAMES)}.{_fill(d.pick(METHODS), d, depth)}"



def statements(d, indent: int = 0, depth: int = 2) -> list:
    pad = "    " * indent
    e = lambda: expressions(d, 2)          # noqa: E731
    kind = d.integer(0, 14 if depth > 0 else 8)
    name = d.pick(NAMES)
    if kind <= 3:
        return [f"{pad}{name} = {e()}"]
    if kind == 4:
        return [f"{pad}{name} {d.pick(['+=', '-=', '*=', '/=', '**=', '@=', '//=', '%='])} {e()}"]
    if kind == 5:
        return [f"{pad}print({e()})"]
    if kind == 6:
        return [f"{pad}{e()}"]
    if kind == 7:
        return [f"{pad}{name}.{d.pick(['requires_grad', 'data', 'grad'])} = {e()}"]
    if kind == 8:
        return [f"{pad}{d.pick(['del ' + name, 'assert ' + name, 'pass', 'import math', 'x[0] = 1.'])}"]
    body = blocks(d, indent + 1, depth - 1)
    if kind == 9:
        return [f"{pad}if {e()}:"] + body + ([f"{pad}else:"] + blocks(d, indent + 1, depth - 1)
                                             if d.boolean() else [])
    if kind == 10:
        return [f"{pad}for {name} in {d.pick(['range(3)', 'range(0)', '[1, 2]', 'x', 'zip(x, x)'])}:"] + body
    if kind == 11:
        return [f"{pad}with torch.no_grad():"] + body
    if kind == 12:
        return [f"{pad}k = 0", f"{pad}while k < 3:", f"{pad}    k += 1"] + body
    if kind == 13:
        fname = d.pick(["f", "g"])
        return [f"{pad}def {fname}(a, b=1):"] + body + [f"{pad}    return {e()}"]
    return [f"{pad}{name} = {e()}", f"{pad}{name}.sum().backward()"]


def blocks(d, indent: int = 0, depth: int = 2) -> list:
    lines = []
    for _ in range(d.size(1, 5)):
        lines.extend(statements(d, indent, depth))
    return lines


def units(d) -> list:
    """A program as its top-level statements, each a string (of several lines for a block)."""
    return PRELUDE + ["\n".join(statements(d, 0, 2)) for _ in range(d.size(1, 8))]


PRELUDE = ["import torch", "import math", "x = torch.randn(2, 2, requires_grad=True)", "y = torch.ones(2)",
           "t = torch.tensor([0, 1])", "n = 2", "z = x * 3", "w = torch.eye(2, dtype=torch.float64)",
           "out = z.sum()", "loss = (x ** 2).mean()", "h = [1, 2.5, 'a']", "i = 1", "k = 0",
           "def f(a):\n    return a * 2", "def g(a, b):\n    return a + b"]


def programs(d) -> str:
    return "\n".join(units(d)) + "\n"


@fuzz(250, programs)
def test_generated_scripts_raise_only_gradcli_errors(source):
    run(source)


@fuzz(100, programs)
def test_generated_scripts_with_jsonl_events(source):
    run(source, events=True)


@fuzz(150, units)
def test_generated_statements_one_by_one(parts):
    """As the REPL runs them: each statement in the session the ones before left, errors or not, so the
    statements after a failing one still run."""
    session = Session(out=io.StringIO(), err=io.StringIO(), seed=0)
    for part in parts:
        try:
            with deadline.Deadline(SECONDS):
                session.run_unit(part, "<fuzz>")
        except ScriptError as e:
            assert _documented_status(e) and e.render()


# ====================================================================== mutated conformance cases

def _cases() -> list[str]:
    folders = [ROOT / "tests" / "conformance", ROOT.parent / "shared" / "conformance" / "cases"]
    texts = []
    for folder in folders:
        if folder.is_dir():
            texts.extend(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.grad")))
    return texts


CASES = _cases()
TOKENS = ["(", ")", "[", "]", ":", ",", ".", "=", "==", "+", "*", "**", "@", "-", "/", "%", "<<", "not ", " and ",
          "\n", "\n    ", "\t", "'", '"', "f'", "#", "\\", "{", "}", "lambda", "__class__", "_x", "eval", "open",
          "getattr", "torch", "torch.", "x", ".grad", ".backward()", ".sum()", "None", "True", "0", "1e309",
          "10**9", "2**64", "-1", "1j", "...", ";", "del ", "return ", "yield", "if ", "else:", "for i in ", "while ",
          "with ", "def ", "import ", "from ", "\x00", "\ufeff", "\u200b", "é", "\U0001f600", "\r", "\x0c"]
NUMBER = re.compile(r"(?<![\w.])\d+(\.\d*)?(e-?\d+)?")
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def mutated(d) -> str:
    text = d.pick(CASES)
    for _ in range(d.integer(1, 4)):
        n = len(text)
        kind = d.integer(0, 7)
        i = d.integer(0, n)
        j = d.integer(i, min(n, i + 40))
        if kind == 0:                               # delete a span
            text = text[:i] + text[j:]
        elif kind == 1:                             # insert a token
            text = text[:i] + d.pick(TOKENS) + text[i:]
        elif kind == 2:                             # copy a span elsewhere
            k = d.integer(0, n)
            text = text[:k] + text[i:j] + text[k:]
        elif kind == 3:                             # another number
            spots = list(NUMBER.finditer(text))
            if spots:
                m = d.pick(spots)
                text = text[:m.start()] + d.pick(NUMBERS) + text[m.end():]
        elif kind == 4:                             # another name
            spots = list(IDENT.finditer(text))
            if spots:
                m = d.pick(spots)
                text = text[:m.start()] + d.pick(NAMES + ["torch", "grad", "backward", "sum", "requires_grad",
                                                          "print", "range"]) + text[m.end():]
        elif kind == 5:                             # swap two lines
            lines = text.split("\n")
            a, b = d.integer(0, len(lines) - 1), d.integer(0, len(lines) - 1)
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        elif kind == 6:                             # re-indent a line
            lines = text.split("\n")
            a = d.integer(0, len(lines) - 1)
            lines[a] = d.pick(["", " ", "    ", "\t", "        "]) + lines[a].lstrip()
            text = "\n".join(lines)
        else:                                       # a few random characters
            text = text[:i] + d.text(5) + text[j:]
    return text


@pytest.mark.skipif(not CASES, reason="no conformance cases")
@fuzz(800, mutated)
def test_mutated_conformance_cases_raise_only_gradcli_errors(source):
    """(The unmutated cases, the mutations' starting points, run in test_conformance, each against its golden.)"""
    run(source)


# ===================================================================== plain text and raw bytes

def any_text(d) -> str:
    if d.boolean():
        return d.text(200)
    return "".join(d.pick(TOKENS + ["x", "1", " ", "torch.ones(2)"]) for _ in range(d.size(0, 60)))


@fuzz(600, any_text)
def test_any_text_raises_only_gradcli_errors(source):
    run(source)


@fuzz(300, lambda d: d.binary(200))
def test_any_bytes_decode_or_fail_as_syntax_errors(data):
    try:
        source = common.decode(data, "<fuzz>")
    except ScriptError as e:
        assert e.exit_status == 2 and e.render()
        return
    run(source)


# ============================================================================ the REPL

_SHELL = []


def shell() -> Shell:
    """One REPL for a run of inputs, as a user types them; a fresh one now and then, since a REPL keeps
    every input and what it made."""
    if not _SHELL or len(_SHELL[0].inputs) >= 50:
        _SHELL[:] = [Shell(Options(colour=False), out=io.StringIO(), err=io.StringIO())]
    sh = _SHELL[0]
    sh.out.seek(0), sh.out.truncate()
    sh.err.seek(0), sh.err.truncate()
    return sh


def _typed(source: str) -> bool:
    return (source.strip() not in ("exit", "quit", "exit()", "quit()")
            and not source.lstrip().startswith("%"))     # a magic such as %save would write files


@fuzz(300, mutated if CASES else programs, accept=_typed)
def test_the_repl_survives_mutated_scripts(source):
    sh = shell()
    with deadline.Deadline(SECONDS):
        sh.execute(source)
    assert "internal error" not in sh.err.getvalue()
