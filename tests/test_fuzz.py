"""Fuzzing the parser and the evaluator: scripts generated from the grammar, conformance cases mutated, and
plain text, run in-process under a short deadline and a small memory budget. Whatever a script does, only
gradcli's own errors may come out (ScriptError, ScriptSyntaxError, the timeout's TimedOut): any other
exception is a crash of gradcli.

The CI run is small and deterministic (its example counts were halved to keep the suite within 90
seconds: the differential fuzzer, tools/difffuzz.py, now runs the long mutated-script searches). A longer,
random run, by hand:

    GRADCLI_FUZZ_EXAMPLES=100000 .venv/bin/python -m pytest tests/test_fuzz.py -x

(the count is per test; failures print the script that broke gradcli).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gradcli.engine import budget
from gradcli import deadline
from gradcli import cli
from gradcli.commands import common
from gradcli.errors import ScriptError
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


def fuzz_settings(examples: int):
    return settings(max_examples=LONG_RUN or examples, deadline=None, derandomize=not LONG_RUN, database=None,
                    print_blob=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(autouse=True, scope="module")
def small_budget():
    before = budget.max_memory()
    budget.set_max_memory(MEMORY)
    yield
    budget.set_max_memory(before)


def run(source: str, events: bool = False) -> ScriptError | None:
    """Run `source` in a fresh session; return the ScriptError it ended in (anything else fails the test)."""
    out = io.StringIO()
    session = Session(out=out, err=io.StringIO(), seed=0, events=JsonLines(out) if events else None)
    try:
        with deadline.Deadline(SECONDS):
            session.run_source(source, "<fuzz>")
    except ScriptError as e:
        assert e.exit_status in (1, 2, deadline.EXIT_TIMEOUT)
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


def _fill(template: str, draw, depth: int) -> str:
    while "{e}" in template:
        template = template.replace("{e}", draw(expressions(depth - 1)), 1)
    return template


@st.composite
def expressions(draw, depth: int = 3) -> str:
    if depth <= 0:
        return draw(st.sampled_from(NAMES + NUMBERS + ["'s'", "[1, 2]", "(1, 2.5)", "torch.ones(2)"]))
    kind = draw(st.integers(0, 9))
    if kind <= 1:
        return draw(st.sampled_from(NAMES + NUMBERS))
    if kind == 2:
        template = draw(st.sampled_from(FACTORIES))
        return template.format(s=draw(st.sampled_from(SHAPES)), n=draw(st.sampled_from(NUMBERS[:12])),
                               k=draw(st.sampled_from(KWARGS)))
    if kind == 3:
        return f"({draw(expressions(depth - 1))}).{_fill(draw(st.sampled_from(METHODS)), draw, depth)}"
    if kind == 4:
        return _fill(draw(st.sampled_from(FUNCTIONS)), draw, depth)
    if kind in (5, 6):
        return f"({draw(expressions(depth - 1))} {draw(st.sampled_from(BINOPS))} {draw(expressions(depth - 1))})"
    if kind == 7:
        return f"({draw(st.sampled_from(UNARY))}{draw(expressions(depth - 1))})"
    if kind == 8:
        return f"({draw(expressions(depth - 1))} if {draw(expressions(depth - 1))} else {draw(expressions(depth - 1))})"
    return f"{draw(st.sampled_from(NAMES))}.{_fill(draw(st.sampled_from(METHODS)), draw, depth)}"


@st.composite
def statements(draw, indent: int = 0, depth: int = 2) -> list:
    pad = "    " * indent
    e = lambda: draw(expressions(2))          # noqa: E731
    kind = draw(st.integers(0, 14 if depth > 0 else 8))
    name = draw(st.sampled_from(NAMES))
    if kind <= 3:
        return [f"{pad}{name} = {e()}"]
    if kind == 4:
        return [f"{pad}{name} {draw(st.sampled_from(['+=', '-=', '*=', '/=', '**=', '@=', '//=', '%=']))} {e()}"]
    if kind == 5:
        return [f"{pad}print({e()})"]
    if kind == 6:
        return [f"{pad}{e()}"]
    if kind == 7:
        return [f"{pad}{name}.{draw(st.sampled_from(['requires_grad', 'data', 'grad']))} = {e()}"]
    if kind == 8:
        return [f"{pad}{draw(st.sampled_from(['del ' + name, 'assert ' + name, 'pass', 'import math', 'x[0] = 1.']))}"]
    body = draw(blocks(indent + 1, depth - 1))
    if kind == 9:
        return [f"{pad}if {e()}:"] + body + ([f"{pad}else:"] + draw(blocks(indent + 1, depth - 1))
                                             if draw(st.booleans()) else [])
    if kind == 10:
        return [f"{pad}for {name} in {draw(st.sampled_from(['range(3)', 'range(0)', '[1, 2]', 'x', 'zip(x, x)']))}:"] + body
    if kind == 11:
        return [f"{pad}with torch.no_grad():"] + body
    if kind == 12:
        return [f"{pad}k = 0", f"{pad}while k < 3:", f"{pad}    k += 1"] + body
    if kind == 13:
        fname = draw(st.sampled_from(["f", "g"]))
        return [f"{pad}def {fname}(a, b=1):"] + body + [f"{pad}    return {e()}"]
    return [f"{pad}{name} = {e()}", f"{pad}{name}.sum().backward()"]


@st.composite
def blocks(draw, indent: int = 0, depth: int = 2) -> list:
    lines = []
    for stmt in draw(st.lists(statements(indent, depth), min_size=1, max_size=5)):
        lines.extend(stmt)
    return lines


@st.composite
def units(draw) -> list:
    """A program as its top-level statements, each a string (of several lines for a block)."""
    return PRELUDE + ["\n".join(stmt) for stmt in draw(st.lists(statements(0, 2), min_size=1, max_size=8))]


PRELUDE = ["import torch", "import math", "x = torch.randn(2, 2, requires_grad=True)", "y = torch.ones(2)",
           "t = torch.tensor([0, 1])", "n = 2", "z = x * 3", "w = torch.eye(2, dtype=torch.float64)",
           "out = z.sum()", "loss = (x ** 2).mean()", "h = [1, 2.5, 'a']", "i = 1", "k = 0",
           "def f(a):\n    return a * 2", "def g(a, b):\n    return a + b"]


def programs():
    return units().map(lambda parts: "\n".join(parts) + "\n")


@fuzz_settings(250)
@given(programs())
def test_generated_scripts_raise_only_gradcli_errors(source):
    run(source)


@fuzz_settings(100)
@given(programs())
def test_generated_scripts_with_jsonl_events(source):
    run(source, events=True)


@fuzz_settings(150)
@given(units())
def test_generated_statements_one_by_one(parts):
    """As the REPL runs them: each statement in the session the ones before left, errors or not, so the
    statements after a failing one still run."""
    session = Session(out=io.StringIO(), err=io.StringIO(), seed=0)
    for part in parts:
        try:
            with deadline.Deadline(SECONDS):
                session.run_unit(part, "<fuzz>")
        except ScriptError as e:
            assert e.exit_status in (1, 2, deadline.EXIT_TIMEOUT) and e.render()


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


@st.composite
def mutated(draw) -> str:
    text = draw(st.sampled_from(CASES))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        kind = draw(st.integers(0, 7))
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 40)))
        if kind == 0:                               # delete a span
            text = text[:i] + text[j:]
        elif kind == 1:                             # insert a token
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif kind == 2:                             # copy a span elsewhere
            k = draw(st.integers(0, n))
            text = text[:k] + text[i:j] + text[k:]
        elif kind == 3:                             # another number
            spots = list(NUMBER.finditer(text))
            if spots:
                m = draw(st.sampled_from(spots))
                text = text[:m.start()] + draw(st.sampled_from(NUMBERS)) + text[m.end():]
        elif kind == 4:                             # another name
            spots = list(IDENT.finditer(text))
            if spots:
                m = draw(st.sampled_from(spots))
                text = text[:m.start()] + draw(st.sampled_from(NAMES + ["torch", "grad", "backward", "sum",
                                                                        "requires_grad", "print", "range"])) \
                    + text[m.end():]
        elif kind == 5:                             # swap two lines
            lines = text.split("\n")
            a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        elif kind == 6:                             # re-indent a line
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            lines[a] = draw(st.sampled_from(["", " ", "    ", "\t", "        "])) + lines[a].lstrip()
            text = "\n".join(lines)
        else:                                       # a few random characters
            text = text[:i] + draw(st.text(max_size=5)) + text[j:]
    return text


@pytest.mark.skipif(not CASES, reason="no conformance cases")
@fuzz_settings(800)
@given(mutated())
def test_mutated_conformance_cases_raise_only_gradcli_errors(source):
    run(source)


@pytest.mark.skipif(not CASES, reason="no conformance cases")
@fuzz_settings(100)
@given(st.sampled_from(CASES))
def test_unmutated_cases_run(source):
    """The mutations' starting points run too (those that end in an error end in gradcli's)."""
    run(source)


# ===================================================================== plain text and raw bytes

@fuzz_settings(600)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200)
       | st.lists(st.sampled_from(TOKENS + ["x", "1", " ", "torch.ones(2)"]), max_size=60).map("".join))
def test_any_text_raises_only_gradcli_errors(source):
    run(source)


@fuzz_settings(300)
@given(st.binary(max_size=200))
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


@fuzz_settings(300)
@given(mutated() if CASES else programs())
def test_the_repl_survives_mutated_scripts(source):
    assume(source.strip() not in ("exit", "quit", "exit()", "quit()"))
    assume(not source.lstrip().startswith("%"))     # a magic such as %save would write files
    sh = shell()
    with deadline.Deadline(SECONDS):
        sh.execute(source)
    assert "internal error" not in sh.err.getvalue()
