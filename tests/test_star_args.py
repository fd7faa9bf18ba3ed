"""Signatures (`/`, `*args`, a bare `*`, keyword-only parameters, `**kwargs`) and star-unpacking in calls,
displays and targets, compared with CPython: values, binding order, and the errors with their positions."""

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.engine.state import STATE

SNIPPETS = [
    # parameters of every kind
    "def f(a, /, b, *args, c, d=4, **kw):\n    return a, b, args, c, d, kw\n"
    "print(f(1, 2, 3, 4, c=5, e=6))\nprint(f(1, b=2, c=3))\nprint(f(1, 2, c=3, a=9))",
    "def f(*args):\n    return args\nprint(f(), f(1), f(1, 2, 3), isinstance(f(1), tuple))",
    "def f(**kwargs):\n    return kwargs\nprint(f(), f(a=1, b=2), list(f(z=1, y=2, x=3)))",
    "def f(a, b=2, *rest, key=None, **extra):\n    return a, b, rest, key, extra\n"
    "print(f(1))\nprint(f(1, 5, 6, 7, key='k', other=True))\nprint(f(a=0, extra=1))",
    "def f(*, lr=0.1, momentum):\n    return lr, momentum\nprint(f(momentum=0.9), f(lr=1, momentum=0))",
    "def f(a, b, /):\n    return a - b\nprint(f(5, 3))",
    "def f(a, /, **kw):\n    return a, kw\nprint(f(1, a=2))",
    "def f(a, b=1, /, c=2, *, d=3):\n    return a, b, c, d\nprint(f(0), f(0, 9), f(0, c=8, d=7))",
    "def f(*args, **kwargs):\n    return args, kwargs\nprint(f(args=1, kwargs=2))",
    # defaults: positional ones, then keyword-only ones, evaluated once, when the def runs
    "log = []\ndef note(v):\n    log.append(v)\n    return v\n"
    "def f(a=note(1), *, b=note(2), c=note(3)):\n    return a, b, c\nprint(log, f(), f(c=0))",
    "def f(*, acc=[]):\n    acc.append(1)\n    return acc\nf()\nprint(f())",
    # lambdas
    "g = lambda *a, **k: (a, k)\nprint(g(1, 2, x=3), g())",
    "g = lambda x, *, scale=2: x * scale\nprint(g(3), g(3, scale=10))",
    "g = lambda a, /, b=1: a + b\nprint(g(1), g(1, b=5))",
    "print((lambda *xs: sum(xs))(*range(5)))",
    "print(sorted([3, 1, 2], key=lambda *v: -v[0]))",
    # closures and late binding with star parameters
    "def make(*scales, offset=0):\n    def apply(x):\n        return [x * s + offset for s in scales]\n    return apply\n"
    "print(make(1, 2, 3, offset=1)(10))",
    "def counter(**start):\n    n = start.get('n', 0)\n    def step(*incs):\n        nonlocal n\n        n += sum(incs)\n"
    "        return n\n    return step\nc = counter(n=5)\nprint(c(1, 2), c(), c(*[10, 20]))",
    "fs = [lambda *a, i=i: (i, a) for i in range(3)]\nprint([f('x') for f in fs])",
    "def outer(*args):\n    return [lambda: args for _ in range(2)]\nprint([g() for g in outer(1, 2)])",
    "def wrap(fn):\n    def inner(*args, **kwargs):\n        return fn(*args, **kwargs) * 2\n    return inner\n"
    "add = wrap(lambda a, b=1: a + b)\nprint(add(1), add(1, 2), add(a=3, b=4), add(*(5,), **{'b': 5}))",
    "def outer():\n    def inner(a, *, b):\n        pass\n    return inner\nprint(str(outer()).split(' at ')[0])",
    # calls with * and **
    "xs = [1, 2, 3]\nprint(*xs)\nprint(*xs, sep='-')\nprint(*xs, *'ab', 4, *(), sep=',')",
    "def f(a, b, c, d, k=0, **e):\n    return a, b, c, d, k, e\nb, d, e = [2], (4,), {'z': 9}\n"
    "print(f(1, *b, 3, *d, k=1, **e))",
    "def f(*a, **k):\n    return a, k\nprint(f(x=1, *[1, 2]), f(**{'a': 1}, b=2, **{'c': 3}))",
    "print(max(*[3, 9, 2]), min(*range(5, 8)), list(zip(*[[1, 2], [3, 4]])))",
    "d = {'sep': '|', 'end': '!\\n'}\nprint('a', 'b', **d)",
    "def f(**kw):\n    return kw\nprint(f(**dict(a=1), **{'b': 2}))",
    "def gen():\n    yield_ = [1, 2]\n    return iter(yield_)\nprint(*gen(), *(i * i for i in range(3)))",
    "def f(a, b):\n    return a, b\nprint(f(*'xy'), f(*range(2)), f(*{'k': 0, 'j': 1}))",
    "order = []\ndef v(x):\n    order.append(x)\n    return x\ndef f(*a, **k):\n    return a, k\n"
    "print(f(v(1), *[v(2)], k=v(3), *[v(4)], **{'j': v(5)}), order)",
    # displays
    "a, b = [1, 2], (3, 4)\nprint([*a, *b], (*a, 1), [*a], (*b,), [0, *a, 9], [*range(3), *'xy'])",
    "a = [1, 2]\nprint(sorted({*a, *a, 3}), {*'aa'})",
    "d1, d2 = {'a': 1, 'b': 2}, {'b': 3}\nprint({**d1, 'k': 1, **d2}, {'b': 0, **d1}, {**d1, 'a': 9}, {**{}})",
    "x = *range(3), *[4]\nprint(x)",
    "print([*(i * 2 for i in range(3))], [*{'x': 1}])",
    # starred targets
    "a, *rest = [1, 2, 3]\n*init, last = 'abcd'\nfirst, *mid, end = range(5)\nprint(a, rest, init, last, first, mid, end)",
    "*a, = (1, 2)\n[b, *c] = [3]\nprint(a, b, c)",
    "(a, *b), c = [1, 2, 3], 4\nprint(a, b, c)",
    "a, *b = iter([1, 2, 3])\nprint(a, b)",
    "for a, *b in [(1, 2, 3), (4,), 'xyz']:\n    print(a, b)",
    "print([b for a, *b in [(1, 2), (3, 4, 5)]])",
    "x = a, *b = 1, 2, 3\nprint(x, a, b)",
    "def f(rows):\n    out = []\n    for head, *tail in rows:\n        out.append((head, tail))\n    return out\nprint(f([[1, 2], [3]]))",
    "def f():\n    return *[1, 2], 3\nprint(f())",
    "for x in *[1, 2], *[3]:\n    print(x, end=' ')\nprint()",
    "d = {}\nd['k'], *d['rest'] = 1, 2, 3\nprint(d)",
    # qualified names in messages and reprs, as CPython gives them
    "def f(a, *, b):\n    pass\ntry:\n    f(1)\nexcept TypeError as e:\n    print(e)",
    "def outer():\n    def inner(a):\n        pass\n    inner(1, 2)\ntry:\n    outer()\nexcept TypeError as e:\n    print(e)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


# Each failing call, with CPython's message; compared with CPython's own message too (below).
BINDING_ERRORS = [
    ("def f(a, *, b): pass\nf(1)", "f() missing 1 required keyword-only argument: 'b'"),
    ("def f(*, a, b, c): pass\nf()", "f() missing 3 required keyword-only arguments: 'a', 'b', and 'c'"),
    ("def f(a, b, c, d): pass\nf()", "f() missing 4 required positional arguments: 'a', 'b', 'c', and 'd'"),
    ("def f(a, b, c): pass\nf(b=1)", "f() missing 2 required positional arguments: 'a' and 'c'"),
    ("def f(a, *, b): pass\nf(1, 2, b=1)",
     "f() takes 1 positional argument but 2 positional arguments (and 1 keyword-only argument) were given"),
    ("def f(a=1, *, b): pass\nf(1, 2, 3)", "f() takes from 0 to 1 positional arguments but 3 were given"),
    ("def f(a, b=2): pass\nf(1, 2, 3, 4)", "f() takes from 1 to 2 positional arguments but 4 were given"),
    ("def f(): pass\nf(1)", "f() takes 0 positional arguments but 1 was given"),
    ("def f(a, /, b): pass\nf(a=1, b=2)", "f() got some positional-only arguments passed as keyword arguments: 'a'"),
    ("def f(a, b, /, c): pass\nf(1, a=1, b=2, c=3)",
     "f() got some positional-only arguments passed as keyword arguments: 'a, b'"),
    ("def f(a, b, /, c): pass\nf(1, 2, 3, 4, c=1)", "f() got multiple values for argument 'c'"),
    ("def f(a, *args): pass\nf(1, 2, a=3)", "f() got multiple values for argument 'a'"),
    ("def f(*args): pass\nf(x=1)", "f() got an unexpected keyword argument 'x'"),
    ("def f(a): pass\nf(1, **{'b': 2})", "f() got an unexpected keyword argument 'b'"),
    ("def f(a): pass\nf(**{'a': 1}, **{'a': 2})", "__main__.f() got multiple values for keyword argument 'a'"),
    ("def f(a): pass\nf(a=1, **{'a': 2})", "__main__.f() got multiple values for keyword argument 'a'"),
    ("def f(a): pass\nf(**{'a': 1}, a=2)", "__main__.f() got multiple values for keyword argument 'a'"),
    ("def f(*a): pass\nf(*5)", "__main__.f() argument after * must be an iterable, not int"),
    ("def f(*a): pass\nf(*None, k=1)", "__main__.f() argument after * must be an iterable, not NoneType"),
    ("def f(*a): pass\nf(1, *5)", "Value after * must be an iterable, not int"),
    ("def f(*a): pass\nf(*[1], *5)", "Value after * must be an iterable, not int"),
    ("def f(**k): pass\nf(**[])", "__main__.f() argument after ** must be a mapping, not list"),
    ("def f(**k): pass\nf(k=1, **None)", "__main__.f() argument after ** must be a mapping, not NoneType"),
    ("def f(**k): pass\nf(**{1: 2})", "keywords must be strings"),
    ("g = lambda *a: 0\ng(**[])", "__main__.<lambda>() argument after ** must be a mapping, not list"),
    ("print(*5)", "print() argument after * must be an iterable, not int"),
    ("print(**[])", "print() argument after ** must be a mapping, not list"),
    ("print(**{'sep': 1}, **{'sep': 2})", "print() got multiple values for keyword argument 'sep'"),
    ("dict(**5)", "dict() argument after ** must be a mapping, not int"),        # (builtins with a bound on
    ("list(*5)", "list() argument after * must be an iterable, not int"),          # what they build: named as
    ("sorted(*None)", "sorted() argument after * must be an iterable, not NoneType"),  # the builtin)
    ("def o():\n    def i(a): pass\n    i()\no()", "o.<locals>.i() missing 1 required positional argument: 'a'"),
    ("def o():\n    return [lambda: 0 for _ in [1]][0]\no()(1)",
     "o.<locals>.<listcomp>.<lambda>() takes 0 positional arguments but 1 was given"),
]


@pytest.mark.parametrize("source, message", BINDING_ERRORS)
def test_binding_errors_are_cpythons(source, message):
    probe = f"try:\n{_indent(source)}\nexcept TypeError as e:\n    print(e)\n"
    assert cpython_output(probe) == message + "\n"
    assert gradcli_output(probe) == message + "\n"
    assert located_error(source).endswith(f": TypeError: {message}")


def _indent(source: str) -> str:
    return "\n".join("    " + line for line in source.split("\n"))


@pytest.mark.parametrize("source, error", [
    # runtime errors point at the call, display or target, as CPython's traceback does
    ("def f(a): pass\nx = 1\nf(x, 2)", "3:1: TypeError: f() takes 1 positional argument but 2 were given"),
    ("xs = 5\ny = [*xs]", "2:5: TypeError: Value after * must be an iterable, not int"),
    ("xs = 5\ny = (1, *xs)", "2:5: TypeError: Value after * must be an iterable, not int"),
    ("xs = 5\ny = {*xs}", "2:5: TypeError: 'int' object is not iterable"),
    ("y = {**[1]}", "1:5: TypeError: 'list' object is not a mapping"),
    ("y = {'a': 1, **5}", "1:5: TypeError: 'int' object is not a mapping"),
    ("y = {*[[1]]}", "1:5: TypeError: unhashable type: 'list'"),
    ("a, *b, c = [1]", "1:1: ValueError: not enough values to unpack (expected at least 2, got 1)"),
    ("a, *b = 5", "1:1: TypeError: cannot unpack non-iterable int object"),
    ("for a, *b in [[]]:\n    pass", "1:5: ValueError: not enough values to unpack (expected at least 1, got 0)"),
    ("a, b = [1, 2, 3]", "1:1: ValueError: too many values to unpack (expected 2)"),
    # misplaced starred expressions: SyntaxErrors before anything runs
    ("print(1)\nx = *a", "2:5: SyntaxError: can't use starred expression here"),
    ("*a", "1:1: SyntaxError: can't use starred expression here"),
    ("def f(a):\n    return *a", "2:12: SyntaxError: can't use starred expression here"),
    ("*a = [1]", "1:1: SyntaxError: starred assignment target must be in a list or tuple"),
    ("a, *b, *c = [1, 2]", "1:1: SyntaxError: multiple starred expressions in assignment"),
])
def test_errors_as_python_reports_them(source, error):
    assert located_error(source) == error


def test_numpy_keywords_from_a_mapping_work_as_written_ones():
    source = ("import torch\nx = torch.tensor([[1.0, 2.0], [3.0, 4.0]])\nopts = {'axis': 1, 'keepdims': True}\n"
              "print(torch.sum(x, **opts))\nprint(x.sum(**{'axis': 0}))\nprint(torch.sum(x, axis=1, keepdims=True))\n")
    assert gradcli_output(source) == ("tensor([[3.],\n        [7.]])\ntensor([4., 6.])\n"
                                      "tensor([[3.],\n        [7.]])\n")


def test_keyword_arguments_from_a_mapping_reach_torch():
    source = ("import torch\nopts = dict(requires_grad=True, dtype=torch.float64)\nx = torch.ones(2, **opts)\n"
              "def apply_all(*tensors, scale=1.0, **opts):\n    return [t * scale for t in tensors]\n"
              "y, z = apply_all(x, x * 2, scale=3.0, unused=1)\n(y + z).sum().backward()\nprint(x.grad)\n")
    assert gradcli_output(source) == "tensor([9., 9.], dtype=torch.float64)\n"


# ---------------------------------------------------------------- the sandbox and the bounds

@pytest.mark.parametrize("source, kind", [
    ("def f(*a): pass\nf(*range(10**12))", "list"),
    ("y = [*range(10**12)]", "list"),
    ("y = (*range(10**12),)", "tuple"),
    ("y = {*range(10**12)}", "set"),
    ("a, *b = range(10**12)", "list"),
])
def test_unpacking_a_huge_range_is_refused_before_it_is_built(source, kind, monkeypatch):
    monkeypatch.setattr(STATE, "max_items", 5)
    assert located_error(source).endswith(f"MemoryError: a {kind} of 1000000000000 items is too large (gradcli allows at most 5)")


@pytest.mark.parametrize("source", [
    "import itertools\ndef f(*a): pass\nf(*itertools.count())",
    "import itertools\ny = [*itertools.count()]",
    "import itertools\na, *b = itertools.count()",
    "def f(*a): pass\nf(*(i for i in range(10**12)))",
    "def f(*a): pass\nf(1, 2, *(i for i in range(10)))",
])
def test_unpacking_an_endless_iterable_stops_at_the_bound(source, monkeypatch):
    monkeypatch.setattr(STATE, "max_items", 5)
    message = located_error(source)
    assert "MemoryError: a " in message and "(gradcli allows at most 5)" in message


def test_plain_unpacking_of_an_endless_iterable_stops_at_one_more_item():
    assert located_error("import itertools\na, b = itertools.count()") == \
        "2:1: ValueError: too many values to unpack (expected 2)"


@pytest.mark.parametrize("source, message", [
    # keyword names starting with '_' never reach gradcli's own functions, whatever their **mapping
    ("import torch\ntorch.ones(2, **{'_internal': 1})",
     "2:1: TypeError: torch.ones() got the keyword argument '_internal': names starting with '_' are outside "
     "gradcli's language"),
    ("print(1, **{'__class__': 1})",
     "1:1: TypeError: print() got the keyword argument '__class__': names starting with '_' are outside "
     "gradcli's language"),
    ("import torch\nx = torch.ones(1)\nx.sum(**{'_x': 0})",
     "3:1: TypeError: sum() got the keyword argument '_x': names starting with '_' are outside gradcli's language"),
    # a script's function takes them as Python does: unexpected, or into its own **kwargs
    ("def f(a): pass\nf(**{'_a': 1})", "2:1: TypeError: f() got an unexpected keyword argument '_a'"),
    # ** takes dicts only: no route through an object's keys() or __getitem__
    ("import torch\nprint(**torch.ones(2))", "2:1: TypeError: print() argument after ** must be a mapping, not Tensor"),
    ("def f(**k): pass\nf(**'ab')", "2:1: TypeError: __main__.f() argument after ** must be a mapping, not str"),
    ("def f(**k): pass\nf(**[('a', 1)])", "2:1: TypeError: __main__.f() argument after ** must be a mapping, not list"),
    ("y = {**[('a', 1)]}", "1:5: TypeError: 'list' object is not a mapping"),
    ("y = {**print}", "1:5: TypeError: 'builtin_function_or_method' object is not a mapping"),
])
def test_unpacking_reaches_nothing_outside_the_language(source, message):
    assert located_error(source) == message


def test_a_scripts_kwargs_hold_any_string_key_as_data():
    source = "def f(**kw):\n    return sorted(kw)\nprint(f(**{'_a': 1, '__class__': 2, 'b c': 3}))\n"
    assert gradcli_output(source) == cpython_output(source)


def test_star_parameters_do_not_reach_the_callers_frame():
    source = ("def f(*args, **kwargs):\n    args = 1\n    kwargs['x'] = 2\n    return args\n"
              "d = {'y': 0}\nt = (1,)\nprint(f(*t, **d), d, t)\n")
    assert gradcli_output(source) == cpython_output(source)


# ---------------------------------------------------------------- help and completion read the signature

def test_help_shows_the_parameter_list_as_written():
    source = "def f(a, /, b=1, *args, c, **kw):\n    pass\nhelp(f)\nhelp(lambda *xs, k=0: 0)\n"
    assert gradcli_output(source) == ("f(a, /, b, *args, c, **kw)\n    A function defined in this session.\n"
                                      "<lambda>(*xs, k)\n    A function defined in this session.\n")


def test_completion_offers_the_keywords_a_call_can_take():
    import io

    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from gradcli.repl import completion
    from gradcli.repl.shell import Options, Shell
    shell = Shell(Options(colour=False), out=io.StringIO(), err=io.StringIO())
    shell.execute("def f(alpha, /, beta, *args, gamma, delta=1, **kwargs):\n    return alpha")
    completer = completion.make_completer(shell)
    found = [c.text for c in completer.get_completions(Document("f(1, "), CompleteEvent(completion_requested=False))]
    assert found == ["beta=", "gamma=", "delta="]
