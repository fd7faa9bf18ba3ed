"""One run reports every construct outside the language (and every failed check of the tree), each at the
place CPython's ast or tokenizer puts it, in source order; text that does not parse still stops at its
first error, reported with the problems before it."""

import ast
import io
import json
import time
import tokenize

import pytest

from gradcli import cli
from gradcli.errors import ScriptSyntaxError
from gradcli.language import parser
from gradcli.language.syntaxerrors import SHOWN
from gradcli.repl.shell import Options, Shell
from gradcli.session import Session

YIELD_OUTSIDE = "'yield' outside function"
ASYNC = "async code (async/await) is not part of gradcli's language"
BYTES = "bytes literals (b'...') are not part of gradcli's language"
STAR_IMPORT = "'from ... import *' is not part of gradcli's language"
METACLASS = "class keywords other than metaclass= are not part of gradcli's language"


def problems(source: str) -> list:
    """(line, col, message) of every problem one run reports, in the order it reports them."""
    with pytest.raises(ScriptSyntaxError) as info:
        Session(out=io.StringIO()).run_source(source)
    return [(e.line, e.col, e.message) for e in info.value.all()]


def node_at(source: str, kind) -> list:
    """(line, col) of CPython's nodes of a kind, 1-based, in source order."""
    return sorted((n.lineno, n.col_offset + 1) for n in ast.walk(ast.parse(source)) if isinstance(n, kind))


def token_at(source: str, text: str) -> list:
    """(line, col) of CPython's tokens with that text, 1-based."""
    return [(t.start[0], t.start[1] + 1) for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.string == text]


def test_two_refusals_at_cpythons_places():
    source = "import torch\ndef f(x):\n    await x * 2\nz = torch.ones(2) * b'j'\n"
    literal = [(n.lineno, n.col_offset + 1) for n in ast.walk(ast.parse(source))
               if isinstance(n, ast.Constant) and isinstance(n.value, bytes)]
    assert problems(source) == [(*node_at(source, ast.Await)[0], ASYNC), (*literal[0], BYTES)]


FIVE = """\
from math import *
async def f(x):
    return await x
if b'3':
    print(b'raw')
"""


def test_five_refusals_in_source_order():
    assert problems(FIVE) == [
        (*token_at(FIVE, "*")[0], STAR_IMPORT),
        (*node_at(FIVE, ast.AsyncFunctionDef)[0], ASYNC),
        (*node_at(FIVE, ast.Await)[0], ASYNC),
        (*[p for p in node_at(FIVE, ast.Constant) if p[0] == 4][0], BYTES),
        (*[p for p in node_at(FIVE, ast.Constant) if p[0] == 5][0], BYTES),
    ]


def test_the_command_line_reports_all_and_exits_2(tmp_path, capsys):
    script = tmp_path / "five.grad"
    script.write_text(FIVE)
    assert cli.main(["run", str(script)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 15         # each: headline, source line, caret
    assert lines[0::3] == [f"{script}:{line}:{col}: SyntaxError: {message}" for line, col, message in problems(FIVE)]
    assert lines[1:6] == ["    from math import *", "                     ^", f"{script}:2:1: SyntaxError: {ASYNC}",
                          "    async def f(x):", "    ^"]


def test_many_refusals_are_capped_with_a_count(tmp_path, capsys):
    kinds = ["await p{i}", "x{i} = b'{i}x'", "async def g{i}(): pass", "z{i} = b'{i}'", "w{i} = await q"]
    source = "".join(kinds[i % len(kinds)].format(i=i) + "\n" for i in range(200))
    tree = ast.parse(source)
    where = sorted((n.lineno, n.col_offset + 1) for n in ast.walk(tree)
                   if isinstance(n, (ast.Yield, ast.Await, ast.AsyncFunctionDef))
                   or isinstance(n, ast.Constant) and isinstance(n.value, (complex, bytes)))
    assert len(where) == 200
    found = problems(source)
    assert [(line, col) for line, col, _ in found] == where[:SHOWN]
    script = tmp_path / "many.grad"
    script.write_text(source)
    assert cli.main(["run", str(script)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 * SHOWN + 1
    assert err[-1] == f"... and {200 - SHOWN} more"


def test_positions_of_many_match_cpython():
    source = "".join(f"def f{i}(a):\n    await a\n    v = a * b'{i}'\n" for i in range(10))
    expected = [(*p, ASYNC) for p in node_at(source, ast.Await)]
    expected += [(*p, BYTES) for p in node_at(source, ast.Constant) if "b'" in source.splitlines()[p[0] - 1]]
    assert problems(source) == sorted(expected)


def test_a_megabyte_of_refusals_is_quick_and_short(tmp_path, capsys):
    script = tmp_path / "awaits.grad"
    lines = 1_000_000 // len("await 1\n")
    script.write_text("await 1\n" * lines)
    started = time.perf_counter()
    assert cli.main(["run", str(script)]) == 2
    assert time.perf_counter() - started < 60
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 * SHOWN + 1
    assert err[0] == f"{script}:1:1: SyntaxError: {ASYNC}"
    assert err[-1] == f"... and {lines - SHOWN:,} more"


def _seconds(source: str) -> float:
    started = time.perf_counter()
    try:
        Session(out=io.StringIO()).compile(source)
    except ScriptSyntaxError:
        pass
    return time.perf_counter() - started


def test_refusals_cost_about_what_a_clean_script_does():
    # a refusal on every line, compared with the same lines without them (best of interleaved runs)
    clean = "".join(f"x{i} = y * {i} + 1\n" for i in range(3_000))
    refused = "".join(f"x{i} = await y * {i} + b'1'\n" for i in range(3_000))
    parser.load()
    times = {clean: [], refused: []}
    for _ in range(2):
        for source in times:
            times[source].append(_seconds(source))
    assert min(times[refused]) < 1.5 * min(times[clean]) + 0.05


def test_refusals_before_a_real_syntax_error_come_with_it():
    source = "await 1\nx = b'2'\ny = = 3\nz = b'after'\n"
    assert problems(source) == [(1, 1, ASYNC), (2, 5, BYTES), (3, 5, "unexpected '=' (expected an expression)")]


def test_a_real_syntax_error_alone_is_reported_as_before():
    with pytest.raises(ScriptSyntaxError) as info:
        Session(out=io.StringIO()).run_source("x = 1\ny = = 3\nz = b'1'\n")
    assert (info.value.line, info.value.col, info.value.others, info.value.omitted) == (2, 5, [], 0)


def test_each_report_is_coloured_on_its_own():
    from gradcli.display.terminal import paint_error
    with pytest.raises(ScriptSyntaxError) as info:
        Session(out=io.StringIO()).run_source("await 1\nawait 2\n")
    painted = info.value.render(paint_error).splitlines()
    assert painted[0::3] == [paint_error(f"<script>:{n}:1: SyntaxError: {ASYNC}") for n in (1, 2)]
    assert painted[1::3] == [f"    await {n}" for n in (1, 2)]


def test_one_refusal_prints_what_it_printed_before(tmp_path, capsys):
    script = tmp_path / "one.grad"
    script.write_text("x = 1\nawait x\n")
    assert cli.main(["run", str(script)]) == 2
    assert capsys.readouterr().err == f"{script}:2:1: SyntaxError: {ASYNC}\n    await x\n    ^\n"


def test_an_error_a_stand_in_may_have_caused_is_not_reported():
    # `await` is dropped and the parse goes on; the target check that then fails on the same line could be
    # the stand-in's doing, so only the refusal is reported (the rest shows once it is fixed).
    assert problems("await f() = 4\n") == [(1, 1, ASYNC)]


def test_stand_ins_keep_the_parse_going():
    source = ("class A(B, **M):\n    def m(self):\n        return (n := self._v)\n"
              "def g():\n    x = await q\n    y = (await q)\n    await r\n"
              "def h() -> dict[str, int]:\n    return {'a': 1}\n"
              "k = [n async for n in q]\nprint(b'1')\n")
    found = problems(source)
    assert [(line, col) for line, col, _ in found] == [
        (1, 12), (5, 9), (6, 10), (7, 5), (10, 8), (11, 7)]
    assert (node_at(source, ast.keyword)[0], node_at(source, ast.Await)) == ((1, 12), [(5, 9), (6, 10), (7, 5)])


def test_checks_of_the_tree_are_all_reported_too():
    source = "1 = x\nreturn 2\nf(a=1, 2)\ndef g(a, a):\n    pass\nbreak\n"
    assert problems(source) == [
        (1, 3, "cannot assign to a literal"), (2, 1, "'return' outside function"),
        (3, 8, "positional argument follows keyword argument"),
        (4, 10, "duplicate argument 'a' in function definition"), (6, 1, "'break' outside loop")]


def test_compile_time_checks_join_the_parse_time_ones():
    source = ("from __future__ import braces\nnonlocal q\nyield 1\n"
              "def f():\n    print(v)\n    global v\nx = b'1'\n")
    assert problems(source) == [
        (1, 1, "not a chance"), (2, 1, "nonlocal declaration not allowed at module level"), (3, 1, YIELD_OUTSIDE),
        (6, 5, "name 'v' is used prior to global declaration"), (7, 5, BYTES)]


def test_refusals_inside_f_string_fields():
    source = "print(f'{b\"1\"} {await b}')\nz = b'1'\n"
    assert problems(source) == [(1, 10, BYTES), (1, 17, ASYNC), (2, 5, BYTES)]


def test_the_repl_reports_all_of_an_input():
    shell = Shell(Options(colour=False), out=io.StringIO(), err=io.StringIO())
    shell.execute("def f(x):\n    await x\n    return b'y' * b'2'\n")
    assert shell.err.getvalue().splitlines()[0::3] == [
        f"<stdin>:2:5: SyntaxError: {ASYNC}", f"<stdin>:3:12: SyntaxError: {BYTES}",
        f"<stdin>:3:19: SyntaxError: {BYTES}"]
    shell.execute("print(3)")       # the session goes on
    assert shell.out.getvalue() == "3\n"


def test_jsonl_has_one_error_event_for_each(tmp_path, capsys):
    script = tmp_path / "five.grad"
    script.write_text(FIVE)
    assert cli.main(["run", "--format", "jsonl", str(script)]) == 2
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in events] == ["error"] * 5 + ["end"]
    assert [(e["line"], e["col"], e["type"], e["message"]) for e in events[:5]] == [
        (line, col, "SyntaxError", message) for line, col, message in problems(FIVE)]
    assert all("more" not in e for e in events)


def test_jsonl_says_how_many_more(tmp_path, capsys):
    script = tmp_path / "many.grad"
    script.write_text("await 1\n" * (SHOWN + 7))
    assert cli.main(["run", "--format", "jsonl", str(script)]) == 2
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(events) == SHOWN + 1
    assert events[SHOWN - 1]["more"] == 7 and "more" not in events[0]


@pytest.mark.parametrize("argv", [["graph", "{}", "y"], ["explain", "{}", "y"], ["-c", "{source}"]])
def test_every_command_that_parses_reports_all(argv, tmp_path, capsys):
    source = "y = 1\nawait y\nz = b'1'\n"
    script = tmp_path / "s.grad"
    script.write_text(source)
    assert cli.main([a.format(script, source=source) for a in argv]) == 2
    headlines = capsys.readouterr().err.splitlines()[0::3]
    assert [h.split(": ", 1)[1] for h in headlines] == [f"SyntaxError: {ASYNC}", f"SyntaxError: {BYTES}"]
    assert [h.split(":")[-4:-2] for h in headlines] == [["2", "1"], ["3", "5"]]


def test_oneshot_expression_reports_all(capsys):
    assert cli.main(["grad", "b'a' * b'j' + x", "x=1.0"]) == 2
    headlines = capsys.readouterr().err.splitlines()[0::3]
    assert headlines == [f"<expr>:1:1: SyntaxError: {BYTES}", f"<expr>:1:8: SyntaxError: {BYTES}"]


@pytest.mark.parametrize("source", ["x = 1\nglobal x\n", "print(y)\nif y:\n    global y\n", "global z\nz = 2\n"])
def test_global_at_module_level_as_cpython_checks_it(source):
    try:
        compile(source, "<s>", "exec")
    except SyntaxError as e:
        expected = [(e.lineno, e.offset, e.msg)]
    else:
        expected = []
    if not expected:
        Session(out=io.StringIO()).run_source(source)
    else:
        assert problems(source) == expected


def test_global_misuse_comes_with_the_refusals():
    source = "x = 1\nglobal x\nyield x\n"
    assert problems(source) == [(2, 1, "name 'x' is assigned to before global declaration"), (3, 1, YIELD_OUTSIDE)]


def test_imports_outside_the_language_join_a_report_of_refusals():
    source = "import numpy as np\nimport torch\nif flag:\n    import os\nfrom os import path\nawait 1\n"
    with pytest.raises(ScriptSyntaxError) as info:
        Session(out=io.StringIO()).run_source(source)
    # the import inside `if` is not listed: a script may guard an import
    assert [(e.line, e.col, e.kind) for e in info.value.all()] == [
        (1, 1, "ImportError"), (5, 1, "ImportError"), (6, 1, "SyntaxError")]
    assert info.value.message.startswith("import of 'numpy' is outside gradcli's language")
    assert info.value.exit_status == 2


def test_an_import_alone_still_fails_when_it_runs(capsys):
    assert cli.main(["-c", "print(1)\nimport numpy"]) == 1
    out, err = capsys.readouterr()
    assert out == "1\n" and err.startswith("<string>:2:1: ImportError: import of 'numpy'")


ANNOTATED = """\
def step(x: float, rate=lambda v: v / 2, table: dict[str, int] = {}) -> float:
    total: float = x * 2
    return total
self.w: list
await 1
(y := 2)
"""


def test_annotations_are_in_the_language_and_the_refusals_around_them_are_reported():
    # the lambda's ':' and the def's are no annotation; the annotated lines parse, the rest is refused
    assert problems(ANNOTATED) == [(5, 1, ASYNC)]


@pytest.mark.parametrize("source", ["def f(x: int): pass\n", "x: int = 1\n", "x: int\n"])
def test_an_annotation_is_no_refusal(source):
    Session(out=io.StringIO()).run_source(source)


@pytest.mark.parametrize("source", ["f(a: 1)\n", "x = [a: 1]\n"])
def test_a_colon_that_cannot_be_an_annotation_is_a_syntax_error(source):
    [(line, col, message)] = problems(source)
    assert (line, col) == token_at(source, ":")[0] and message.startswith(("unexpected ':'", "expected"))
