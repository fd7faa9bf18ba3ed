"""Generator functions (`yield`, `yield from`, send/throw/close), compared with CPython running the same text;
the places yield is refused; and what a script's generators may and may not reach."""

from __future__ import annotations

import pytest

import launcher
from conftest import cpython_output, gradcli_output, located_error, run_script

SAME_AS_CPYTHON = [
    # a counter, iterated, listed, summed and stepped with next()
    "def count(n):\n    i = 0\n    while i < n:\n        yield i\n        i += 1\n"
    "print(list(count(4)), sum(count(5)), max(count(3)))\ng = count(2)\nprint(next(g), next(g), next(g, 'end'))",
    # batches of a list, as a data loader written by hand does
    "def batches(xs, size):\n    for i in range(0, len(xs), size):\n        yield xs[i:i + size]\n"
    "for b in batches(list(range(7)), 3):\n    print(b)",
    # several values, tuples, unpacked in a for
    "def pairs():\n    yield 1, 'a'\n    yield 2, 'b'\nfor n, s in pairs():\n    print(n, s)\nprint(dict(pairs()))",
    # StopIteration's value is what the generator returned
    "def g():\n    yield 1\n    return 'done'\nit = g()\nnext(it)\ntry:\n    next(it)\nexcept StopIteration as e:\n"
    "    print('stopped', e.value, e.args)",
    # send(): a running total
    "def total():\n    t = 0\n    while True:\n        x = yield t\n        if x is None:\n            return t\n        t += x\n"
    "acc = total()\nprint(next(acc), acc.send(2), acc.send(5))\ntry:\n    acc.send(None)\nexcept StopIteration as e:\n"
    "    print('final', e.value)",
    # yield from another generator, a list, a range; its value is the inner generator's return
    "def inner():\n    yield 1\n    yield 2\n    return 'r'\ndef outer():\n    r = yield from inner()\n    yield r\n"
    "    yield from [3, 4]\n    yield from range(5, 7)\nprint(list(outer()))",
    # send() passes through yield from
    "def echo():\n    while True:\n        got = yield\n        if got == 'stop':\n            return 'echo done'\n"
    "        print('echo', got)\ndef relay():\n    r = yield from echo()\n    print('relay got', r)\n    yield 'end'\n"
    "it = relay()\nnext(it)\nit.send('a')\nprint(it.send('stop'))",
    # throw(): caught inside, and not caught
    "def g():\n    while True:\n        try:\n            yield 'ok'\n        except ValueError as e:\n            print('caught', e)\n"
    "it = g()\nnext(it)\nprint(it.throw(ValueError('bad')))\ntry:\n    it.throw(KeyError('k'))\nexcept KeyError as e:\n"
    "    print('escaped', repr(e))\nprint(list(it))",
    # close() runs finally and except GeneratorExit; a closed generator is exhausted
    "def g():\n    try:\n        yield 1\n        yield 2\n    except GeneratorExit:\n        print('exit')\n        raise\n"
    "    finally:\n        print('finally')\nit = g()\nprint(next(it))\nit.close()\nprint(list(it))\nit.close()",
    # a generator left early by break is closed when freed
    "def g():\n    try:\n        for i in range(10):\n            yield i\n    finally:\n        print('cleaned up')\n"
    "for x in g():\n    if x == 2:\n        break\nprint('after', x)",
    # loops with else, continue, break inside the generator
    "def g():\n    for i in range(5):\n        if i % 2:\n            continue\n        yield i\n    else:\n        yield 'for-else'\n"
    "    n = 0\n    while n < 10:\n        n += 1\n        if n == 3:\n            break\n        yield n\n    else:\n"
    "        yield 'never'\nprint(list(g()))",
    # if/elif/else and try/except/else around yields
    "def g(xs):\n    for x in xs:\n        if x < 0:\n            yield 'neg'\n        elif x == 0:\n            yield 'zero'\n"
    "        else:\n            try:\n                yield 10 // x\n            except ZeroDivisionError:\n"
    "                yield 'never'\n            else:\n                yield 'ok'\nprint(list(g([-1, 0, 3])))",
    # a with block around a yield (the context stays entered while suspended)
    "class Ctx:\n    def __enter__(self):\n        print('enter')\n        return self\n"
    "    def __exit__(self, *exc):\n        print('exit', exc[0])\n        return False\n"
    "def g():\n    with Ctx() as c:\n        yield 1\n        yield 2\nprint(list(g()))\nit = g()\nnext(it)\nit.close()",
    # closures, defaults, generators as methods and as __iter__
    "def make(step):\n    def gen(n, start=0):\n        for i in range(n):\n            yield start + i * step\n    return gen\n"
    "print(list(make(3)(4)), list(make(2)(2, start=10)))\n"
    "class Bag:\n    def __init__(self, *items):\n        self.items = items\n    def __iter__(self):\n"
    "        for x in self.items:\n            yield x\n    def doubled(self):\n        for x in self:\n            yield 2 * x\n"
    "b = Bag(1, 2, 3)\nprint(list(b), list(b.doubled()), 2 in b, sorted(b, reverse=True))",
    # an endless generator, taken from with zip and a counter
    "def fib():\n    a, b = 0, 1\n    while True:\n        yield a\n        a, b = b, a + b\n"
    "print([x for _, x in zip(range(10), fib())])\nit = fib()\nprint([next(it) for _ in range(5)])",
    # generators of generators; generator expressions over a generator
    "def nums():\n    yield from range(4)\ndef squares(xs):\n    for x in xs:\n        yield x * x\n"
    "print(list(squares(nums())), sum(x for x in squares(nums()) if x > 1))",
    # the generator and its function print as CPython prints them; names and qualified names
    "def gen():\n    yield 1\nclass A:\n    def m(self):\n        yield 2\ng = gen()\nprint(type(g), gen.__name__)\n"
    "print(str(g).split(' at ')[0], str(A().m()).split(' at ')[0])\n"
    "def outer():\n    def inner():\n        yield 3\n    return inner()\nprint(str(outer()).split(' at ')[0])",
    # nothing runs until the first next(); arguments are bound at the call
    "def g(x):\n    print('started with', x)\n    yield x\nit = g(5)\nprint('made')\nprint(next(it))",
    # a bare yield gives None; assignment targets of several kinds
    "def g():\n    yield\n    a, b = yield 'pair'\n    d = {}\n    d['k'] = yield 'key'\n    yield a + b, d\n"
    "it = g()\nprint(next(it), next(it), it.send((1, 2)), it.send('v'))",
    # StopIteration raised inside a generator is a RuntimeError (PEP 479)
    "def g():\n    yield 1\n    raise StopIteration\ntry:\n    list(g())\nexcept RuntimeError as e:\n    print('RuntimeError', e)",
    # running a generator that is already running raises ValueError
    "def g():\n    yield next(it)\nit = g()\ntry:\n    next(it)\nexcept ValueError as e:\n    print(e)",
    # nonlocal and global from inside a generator
    "calls = 0\ndef g():\n    global calls\n    n = 0\n    def bump():\n        nonlocal n\n        n += 1\n"
    "    while n < 3:\n        bump()\n        calls += 1\n        yield n\nprint(list(g()), calls)",
]


@pytest.mark.parametrize("source", SAME_AS_CPYTHON, ids=range(len(SAME_AS_CPYTHON)))
def test_generators_behave_as_in_cpython(source):
    assert gradcli_output(source) == cpython_output(source)


def test_a_generator_of_tensors_as_a_data_iterator():
    out = gradcli_output(
        "import torch\n"
        "def data_iter(batch_size, features, labels):\n"
        "    n = len(features)\n"
        "    for i in range(0, n, batch_size):\n"
        "        j = torch.tensor(list(range(i, min(i + batch_size, n))))\n"
        "        yield features[j], labels[j]\n"
        "X = torch.arange(10.).reshape(5, 2)\ny = torch.arange(5.)\n"
        "w = torch.zeros(2, requires_grad=True)\n"
        "for xb, yb in data_iter(2, X, y):\n"
        "    loss = ((xb @ w - yb) ** 2).mean()\n"
        "    loss.backward()\n"
        "print(w.grad)\n"
        "def no_grad_gen():\n    with torch.no_grad():\n        yield torch.is_grad_enabled()\n"
        "    yield torch.is_grad_enabled()\n"
        "print(list(no_grad_gen()), torch.is_grad_enabled())\n")
    assert out == "tensor([ -92., -106.])\n[False, True] True\n"      # (PyTorch 2.13 prints the same)


@pytest.mark.parametrize("source, expected", [
    ("yield 1", "1:1: SyntaxError: 'yield' outside function"),
    ("x = yield from [1]", "1:5: SyntaxError: 'yield' outside function"),
    ("class A:\n    yield 1", "2:5: SyntaxError: 'yield' outside function"),
    ("def f():\n    return [(yield) for x in y]", "2:13: SyntaxError: 'yield' inside list comprehension"),
    ("def f():\n    return {(yield) for x in y}", "2:13: SyntaxError: 'yield' inside set comprehension"),
    ("def f():\n    return {x: (yield) for x in y}", "2:16: SyntaxError: 'yield' inside dict comprehension"),
    ("def f():\n    return ((yield) for x in y)", "2:13: SyntaxError: 'yield' inside generator expression"),
    ("f = lambda: (yield)", "1:13: SyntaxError: yield in a lambda is not part of gradcli's language"),
    ("def f():\n    print((yield))", "2:11: SyntaxError: yield inside an expression (use it as a statement or "
                                      "alone on the right of '=') is not part of gradcli's language"),
    ("def f():\n    x = 1 + (yield)", "2:13: SyntaxError: yield inside an expression (use it as a statement or "
                                       "alone on the right of '=') is not part of gradcli's language"),
    ("def f():\n    x += yield", "2:10: SyntaxError: yield inside an expression (use it as a statement or "
                                  "alone on the right of '=') is not part of gradcli's language"),
])
def test_misplaced_yields_are_refused_before_anything_runs(source, expected):
    r = run_script("print('ran')\n" + source)
    assert r.out == ""
    line, col, want = expected.split(":", 2)
    assert (r.error.line - 1, r.error.col, f"{r.error.kind}: {r.error.message}") == (int(line), int(col), want.strip())
    assert r.error.exit_status == 2


@pytest.mark.parametrize("source, expected", [
    ("def f():\n    yield from 3\nlist(f())", "2:16: TypeError: 'int' object is not iterable"),
    ("def f():\n    yield 1\n    raise ValueError('bad')\ng = f()\nnext(g)\nnext(g)", "3:5: ValueError: bad"),
    ("def f(n):\n    yield n\nf()", "3:1: TypeError: f() missing 1 required positional argument: 'n'"),
    ("def f():\n    yield 1\ng = f()\nnext(g)\nnext(g)", "5:1: StopIteration: "),
    ("def f():\n    yield 1\n    return 'r'\ng = f()\nnext(g)\nnext(g)", "6:1: StopIteration: r"),
])
def test_errors_in_generators_name_their_line(source, expected):
    assert located_error(source) == expected


@pytest.mark.parametrize("source, message", [
    # a generator's frame and code are Python's internals
    ("def f():\n    yield 1\nf().gi_frame", "'generator' object attribute 'gi_frame' is outside gradcli's language"),
    ("def f():\n    yield 1\nf().gi_code", "'generator' object attribute 'gi_code' is outside gradcli's language"),
    ("def f():\n    yield 1\nf().gi_yieldfrom",
     "'generator' object attribute 'gi_yieldfrom' is outside gradcli's language"),
    # gradcli's own generators are iterated, never driven
    ("import torch\nm = torch.nn.Linear(1, 1)\nm.parameters().throw(ValueError)",
     "'generator' object attribute 'throw' is outside gradcli's language"),
    ("import torch\nm = torch.nn.Linear(1, 1)\nm.named_parameters().send(None)",
     "'generator' object attribute 'send' is outside gradcli's language"),
    ("g = (i for i in range(2))\ng.close()", "'generator' object attribute 'close' is outside gradcli's language"),
])
def test_what_a_generator_does_not_reach(source, message):
    assert located_error(source).split(": ", 2)[1:] == ["AttributeError", message]


def test_throwing_what_is_not_an_exception_is_pythons_type_error():
    assert located_error("def f():\n    yield 1\ng = f()\ng.throw(3)").endswith(
        "TypeError: exceptions must be classes or instances deriving from BaseException, not int")


def test_an_error_when_a_freed_generator_closes_is_reported_and_the_run_goes_on():
    r = run_script("def f():\n    try:\n        yield 1\n    finally:\n        raise ValueError('in finally')\n"
                   "g = f()\nnext(g)\ndel g\nprint('after')\n")
    assert r.error is None and r.out == "after\n"
    lines = r.err.splitlines()
    assert lines[0].startswith("Exception ignored in: <generator object f at 0x")
    assert lines[1] == "<test>:5:9: ValueError: in finally"


def test_a_timeout_stops_an_endless_generator():
    p = launcher.run(["--timeout", "0.5", "-c", "def count():\n    i = 0\n    while True:\n        yield i\n"
                      "        i += 1\ntotal = sum(count())\n"])
    assert p.returncode == 124
    assert p.stderr.splitlines()[0].endswith("TimeoutError: stopped after 0.5 seconds (--timeout 0.5)")


def test_a_script_that_raises_generator_exit_itself_gets_a_located_error():
    assert located_error("raise GeneratorExit('x')") == "1:1: GeneratorExit: x"
    assert gradcli_output("try:\n    raise GeneratorExit\nexcept GeneratorExit:\n    print('caught')\n") == "caught\n"


def test_a_script_without_generators_does_not_load_their_compiler():
    import subprocess
    import sys
    code = ("import sys\nfrom gradcli.session import Session\nimport io\n"
            "Session(out=io.StringIO()).run_source('def f(x):\\n    return [i for i in range(x)]\\nf(3)\\n')\n"
            "print('gradcli.language.generators' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout == "False\n"


def test_grad_mode_decorators_run_each_step_of_a_generator_in_the_mode():
    """As PyTorch's decorators wrap a generator function: the mode holds while the body runs, not while
    the generator waits (PyTorch 2.13 prints the same lines)."""
    out = gradcli_output(
        "import torch\n@torch.no_grad()\ndef gen(x):\n    yield torch.is_grad_enabled(), (x * 2).requires_grad\n"
        "    r = yield torch.is_grad_enabled()\n    return r\n"
        "x = torch.ones(2, requires_grad=True)\ng = gen(x)\nprint(next(g), torch.is_grad_enabled())\n"
        "print(next(g), torch.is_grad_enabled())\ntry:\n    g.send('back')\nexcept StopIteration as e:\n"
        "    print(e.value)\n"
        "@torch.enable_grad()\ndef gen2():\n    yield torch.is_grad_enabled()\nwith torch.no_grad():\n"
        "    print(list(gen2()))\n@torch.inference_mode()\ndef gen3():\n    yield torch.is_inference_mode_enabled()\n"
        "print(list(gen3()), str(gen3()).split(' at ')[0])\n")
    assert out == ("(False, False) True\nFalse True\nback\n[True]\n[True] <generator object gen3\n")
