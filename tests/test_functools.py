"""functools: lru_cache and cache (keys, eviction order, CacheInfo, methods, recursion), cached_property,
total_ordering, partialmethod, singledispatch, wraps/update_wrapper, and __doc__/__module__ of a script's
functions and classes, compared with CPython 3.11; the cache's bound; nothing behind them reachable."""

import re

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.engine.state import STATE

IMPORTS = ("import functools\nfrom functools import lru_cache, cache, cached_property, total_ordering, partialmethod, "
           "singledispatch, singledispatchmethod, wraps, update_wrapper\n")
TRY = "def t(f):\n    try:\n        print(f())\n    except Exception as e:\n        print(type(e).__name__, e)\n"


def _shown(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x", text)


SNIPPETS = [
    # lru_cache: bare, with maxsize, typed, None; the info, the parameters, clearing
    "@lru_cache\ndef fib(n):\n    'Fibonacci.'\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
    "print(fib(25), fib.cache_info(), fib.cache_parameters(), fib.__name__, fib.__qualname__, fib.__doc__)\n"
    "print(fib, fib.cache_info, type(fib), fib.__wrapped__, fib.__module__)\nfib.cache_clear()\nprint(fib.cache_info())\n"
    "info = fib.cache_info()\nprint(info.hits, info.maxsize, info._fields, type(info), info[1])",
    "@lru_cache(maxsize=3)\ndef sq(x):\n    print('compute', x)\n    return x * x\n"
    "for x in [1, 2, 3, 1, 4, 2, 1, 5, 3]:\n    sq(x)\nprint(sq.cache_info())",
    TRY + "@lru_cache(maxsize=None, typed=True)\ndef kind(x):\n    return type(x).__name__\n"
    "print(kind(1), kind(1.0), kind(True), kind(1), kind.cache_info(), kind.cache_parameters())\n"
    "t(lambda: kind([1]))\nt(lambda: kind({'a': 1}))\nt(lambda: lru_cache(2.5))\nt(lambda: lru_cache('x'))\n"
    "print(lru_cache(maxsize=-1)(len).cache_parameters(), lru_cache(True)(len).cache_parameters())\n"
    "z = lru_cache(maxsize=0)(len)\nprint(z([1, 2]), z([1]), z.cache_info())\n@lru_cache\ndef plain(x):\n    return x\n"
    "print(plain(1), plain(1.0), plain(True), plain.cache_info())",
    "@cache\ndef k(a, b=1):\n    print('k', a, b)\n    return a + b\n"
    "k(1, b=2)\nk(b=2, a=1)\nk(a=1, b=2)\nk(1, 2)\nk(1, 2)\nk(1)\nprint(k.cache_info(), k.cache_parameters())",
    # a script's __hash__ and __eq__, called as CPython calls them; methods; recursion into the cache
    "class Key:\n    def __init__(self, v):\n        self.v = v\n    def __hash__(self):\n        print('hash', self.v)\n"
    "        return hash(self.v % 2)\n    def __eq__(self, other):\n        print('eq', self.v, other.v)\n"
    "        return self.v == other.v\n@lru_cache(maxsize=2)\ndef f(k):\n    return k.v * 10\n"
    "a, b = Key(1), Key(3)\nprint(f(a), f(b), f(Key(1)), f(a), f(Key(5)), f(b))\nprint(f.cache_info())",
    "class Model:\n    def __init__(self, scale):\n        self.scale = scale\n    @lru_cache(maxsize=8)\n"
    "    def weight(self, n):\n        print('weight', n)\n        return self.scale * n\n    def __hash__(self):\n"
    "        return self.scale\nm = Model(3)\nprint(m.weight(2), m.weight(2), Model(3).weight(2), Model.weight.cache_info())\n"
    "print(Model.weight.__qualname__, m.weight.__name__, m.weight.__doc__)\n"
    "@lru_cache(None)\ndef depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\nprint(depth(150), depth.cache_info())\n"
    "@lru_cache(maxsize=2)\ndef ways(n):\n    return 1 if n < 2 else ways(n - 1) + ways(n - 2)\nprint(ways(30), ways.cache_info())",
    # cached_property
    TRY + "class Config:\n    def __init__(self, width):\n        self.width = width\n        self.calls = 0\n"
    "    @cached_property\n    def area(self):\n        'The area.'\n        self.calls += 1\n        return self.width ** 2\n"
    "c = Config(4)\nprint(c.area, c.area, c.calls, Config.area.attrname, Config.area.__doc__, type(Config.area))\n"
    "del c.area\nprint(c.area, c.calls)\nc.area = 7\nprint(c.area)\n"
    "class Slotted:\n    __slots__ = ('x',)\n    @cached_property\n    def p(self):\n        return 1\nt(lambda: Slotted().p)\n"
    "cp = cached_property(lambda self: 1)\nclass Later:\n    pass\nLater.q = cp\nt(lambda: Later().q)\n"
    "def two():\n    class R:\n        a = cp\n        b = cp\nt(two)\ntry:\n    two()\nexcept RuntimeError as e:\n"
    "    print(repr(e.__cause__))",
    # total_ordering
    TRY + "@total_ordering\nclass Version:\n    def __init__(self, n):\n        self.n = n\n    def __eq__(self, o):\n"
    "        return self.n == o.n\n    def __lt__(self, o):\n        if not isinstance(o, Version):\n"
    "            return NotImplemented\n        return self.n < o.n\n"
    "a, b = Version(1), Version(2)\nprint(a < b, a > b, a <= b, a >= b, b >= b, a <= a, sorted([b, a])[0].n)\n"
    "print(Version.__gt__.__name__, Version.__gt__.__qualname__, Version.__ge__.__name__)\nt(lambda: a > 3)\n"
    "def none():\n    @total_ordering\n    class N:\n        pass\nt(none)\n"
    "@total_ordering\nclass G:\n    def __init__(self, n):\n        self.n = n\n    def __eq__(self, o):\n"
    "        return self.n == o.n\n    def __ge__(self, o):\n        return self.n >= o.n\n"
    "print(G(1) < G(2), G(1) <= G(1), G(3) > G(2), G.__lt__.__qualname__)",
    # partialmethod
    "class Cell:\n    def __init__(self):\n        self.alive = False\n    def set_state(self, state, note=''):\n"
    "        self.alive = state\n        return note\n    set_alive = partialmethod(set_state, True, note='up')\n"
    "    set_dead = partialmethod(set_state, False)\nc = Cell()\nprint(c.set_alive(), c.alive, c.set_dead(note='x'), c.alive)\n"
    "print(Cell.set_alive(c), c.alive, Cell.set_alive.__name__)\n"
    "nested = partialmethod(partialmethod(Cell.set_state, True), note='n')\nprint(nested.args, nested.keywords)",
    # singledispatch
    TRY + "@singledispatch\ndef show(x):\n    'Show anything.'\n    return 'object ' + repr(x)\n@show.register\n"
    "def _(x: int):\n    return 'int ' + str(x)\n@show.register(list)\ndef _(x):\n    return 'list of ' + str(len(x))\n"
    "@show.register(float | str)\ndef _(x):\n    return 'float or str'\nclass Base:\n    pass\nclass Child(Base):\n"
    "    pass\nshow.register(Base, lambda x: 'a Base')\n"
    "print(show(1), show(True), show([1, 2]), show(2.5), show('s'), show(None), show(Child()), show((1,)))\n"
    "print(show.dispatch(bool) is show.dispatch(int), show.__name__, show.__doc__, list(show.registry.keys())[:3])\n"
    "print(show.registry[object] is show.__wrapped__)\nt(lambda: show.register(3))\nt(lambda: show())\n"
    "def bad(x: 3):\n    pass\nt(lambda: show.register(bad))\ndef noann(x):\n    pass\nt(lambda: show.register(noann))\n"
    "t(lambda: show.register(int, 5) and 'ok')",
    "class Fmt:\n    @singledispatchmethod\n    def fmt(self, x):\n        return 'other'\n    @fmt.register\n"
    "    def _(self, x: int):\n        return 'int'\n    @fmt.register(list)\n    def _(self, x):\n        return 'list'\n"
    "f = Fmt()\nprint(f.fmt(1), f.fmt([]), f.fmt('s'), f.fmt.__name__)",
    # wraps, update_wrapper, __doc__ and __module__
    "def deco(fn):\n    @wraps(fn)\n    def inner(*a, **k):\n        'inner doc'\n        return fn(*a, **k)\n    return inner\n"
    "@deco\ndef g(x: int) -> int:\n    'G doc.'\n    return x\nprint(g.__doc__, g.__name__, g.__wrapped__.__name__, "
    "g.__module__, g.__annotations__)\n"
    "def w(*a):\n    return 1\nprint(update_wrapper(w, g) is w, w.__name__, w.__doc__, w.__qualname__)\n"
    "def deco2(fn):\n    @wraps(fn, assigned=functools.WRAPPER_ASSIGNMENTS)\n    def inner():\n        return fn()\n"
    "    return inner\n@deco2\ndef h():\n    pass\nprint(h.__doc__, h.__name__, functools.WRAPPER_UPDATES)",
    "def f():\n    'One line.'\n    return 1\ndef g():\n    x = 'not a docstring'\ndef h():\n    '''Two\n    lines.'''\n"
    "class A:\n    'A doc.'\n    def m(self):\n        'M doc.'\n    @staticmethod\n    def s():\n        'S doc.'\n"
    "    @classmethod\n    def c(cls):\n        'C doc.'\nclass B(A):\n    pass\n"
    "print(f.__doc__, g.__doc__, repr(h.__doc__), (lambda: 1).__doc__)\n"
    "print(A.__doc__, A().__doc__, A.m.__doc__, A().m.__doc__, A.s.__doc__, A.c.__doc__, B.__doc__, B().__doc__)\n"
    "print(f.__module__, A.__module__, A().__module__, A().m.__module__, (lambda: 1).__module__)\n"
    "f.__doc__ = 'changed'\nprint(f.__doc__)\nclass Q:\n    @property\n    def pr(self):\n        'Pr doc.'\n"
    "        return 1\n    @property\n    def nd(self):\n        return 1\n"
    "print(Q.pr.__doc__, Q.nd.__doc__, property(lambda self: 1, doc='given').__doc__)\n"
    "class W:\n    p = property(lru_cache(f))\n    q = property(singledispatch(h))\nprint(W.p.__doc__, repr(W.q.__doc__))",
    TRY + "from functools import partial\ns = singledispatch(partial(max, 1))\nprint(s.__name__)\n@singledispatch\n"
    "def g(x):\n    return 0\ndef ann(x: list[int]):\n    pass\nt(lambda: g.register(ann))\n"
    "t(lambda: g.register(list[int]))\ndef ann2(x: int | list[int]):\n    pass\nt(lambda: g.register(ann2))\n"
    "w = lru_cache(partial(max, 1))\nt(lambda: w.__name__)\nprint(w(3))\nt(lambda: g.dispatch(3))\n"
    "t(lambda: g.dispatch(len))\nimport typing\ng.register(typing.Union[list, dict], lambda x: 'union')\n"
    "print(g([]), g({}), g(1))",
    # partial's parts, as the script gave them (a partial of a partial merges, as CPython's), and its copies
    TRY + "import copy\nfrom functools import partial\ndef f(a, b, c=3):\n    return a + b + c\np = partial(f, 1, c=5)\n"
    "q = partial(p, 2)\nprint(p.func is f, p.args, p.keywords, p(2), q.func is f, q.args, q.keywords, q())\n"
    "s = partial(max, key=abs)\nprint(s.func, s.keywords, s([-5, 3]), s, wraps(f).func, wraps(f).keywords['wrapped'] is f)\n"
    "c = copy.copy(q)\nd = copy.deepcopy(q)\nprint(c.func is f, c.args, d.func is f, d.keywords, d(), type(d) is partial)\n"
    "class A:\n    def m(self, x):\n        return x\na = A()\nb = copy.deepcopy(partial(a.m, 4))\n"
    "print(b.func == a.m, b(), isinstance(b, partial), type(b), partial)\n"
    "t(lambda: partial())\nt(lambda: partial(1))\nt(lambda: partial(func=f))",
    # what they make prints as CPython's
    "def f(x):\n    return x\nprint(lru_cache(f).cache_parameters, lru_cache(3)(f).cache_parameters, "
    "cache(f).cache_parameters, lru_cache(3))\ns = singledispatch(f)\nprint(s.register, s.dispatch, s.register(int), "
    "s.register is s.register, s.dispatch == s.dispatch, s.register.__name__, s.register.__qualname__)\n"
    "print(wraps(f))\nclass A:\n    @singledispatchmethod\n    def m(self, x):\n        return x\n"
    "    print(m.register, m)\ng = lru_cache(f)\nprint(A.m, A().m, g.cache_info == g.cache_info, "
    "g.cache_parameters is g.cache_parameters, g.cache_info is g.cache_info)",
    # wrappers keep the script's attributes, as CPython's __dict__
    TRY + "def f(x):\n    return x\nf.tag = 't'\ng = lru_cache(f)\ng.calls = 3\nprint(g.tag, g.calls)\ndel g.calls\n"
    "t(lambda: g.calls)\ndef d():\n    del g.calls\nt(d)\ns = singledispatch(f)\n@wraps(g)\ndef h():\n    pass\n"
    "print(s.tag, h.tag, h.__wrapped__ is g)",
    "from dataclasses import dataclass\nfrom typing import NamedTuple\nfrom enum import Enum\nimport collections\n"
    "@dataclass\nclass P:\n    x: int\n    y: float = 1.0\nclass NT(NamedTuple):\n    'NT doc.'\n    a: int\n"
    "Pt = collections.namedtuple('Pt', 'x y')\nclass E(Enum):\n    'E doc.'\n    A = 1\nclass Err(Exception):\n    pass\n"
    "print(P.__doc__, P(1).__doc__, NT.__doc__, NT(1).__doc__, Pt.__doc__, Pt(1, 2).__doc__)\n"
    "print(E.__doc__, E.A.__doc__, E.A.__module__, Err.__doc__, Err().__doc__, Err.__module__)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_functools(snippet):
    source = IMPORTS + snippet + "\n"
    assert _shown(gradcli_output(source)) == _shown(cpython_output(source))


def test_string_annotations_register_as_get_type_hints_reads_them():
    source = ("from __future__ import annotations\n" + IMPORTS + TRY + "class A:\n    pass\n@singledispatch\n"
              "def s(x):\n    return 'object'\n@s.register\ndef _(x: A):\n    return 'A'\n@s.register\n"
              "def _(x: int):\n    return 'int'\ndef bad(x: nope):\n    pass\nt(lambda: s.register(bad))\n"
              "print(s(A()), s(1), s('x'))\n")
    assert gradcli_output(source) == cpython_output(source)


def test_tensors_are_keys_by_identity_as_in_pytorch():
    """Checked against PyTorch 2.13: a tensor argument hashes by identity, an equal tensor is another key."""
    source = ("import torch\n" + IMPORTS + "@cache\ndef total(t, scale=1.0):\n    print('computing')\n"
              "    return (t * scale).sum()\nx = torch.tensor([1.0, 2.0])\n"
              "print(total(x), total(x), total(torch.tensor([1.0, 2.0])), total(x, scale=2.0), total.cache_info())\n")
    assert gradcli_output(source) == ("computing\ncomputing\ncomputing\ntensor(3.) tensor(3.) tensor(3.) tensor(6.) "
                                      "CacheInfo(hits=1, misses=3, maxsize=None, currsize=3)\n")


def test_torch_classes_dispatch_as_in_pytorch():
    """Checked against PyTorch 2.13: torch.Tensor registered by class, by annotation and in a union; a Parameter
    is a Tensor."""
    source = ("import torch\n" + IMPORTS + "@singledispatch\ndef g(x):\n    return 'object'\n"
              "g.register(list | int, lambda x: 'list or int')\n@g.register\ndef _(x: torch.Tensor | float):\n"
              "    return 'tensor or float'\nprint(g([1]), g(3), g(torch.ones(1)), g(torch.nn.Parameter(torch.ones(1))), "
              "g(1.5), g('s'), list(g.registry))\n")
    assert gradcli_output(source) == ("list or int list or int tensor or float tensor or float tensor or float object "
                                      "[<class 'object'>, <class 'list'>, <class 'int'>, <class 'torch.Tensor'>, "
                                      "<class 'float'>]\n")


def test_an_unbounded_cache_stays_within_the_item_limit():
    source = IMPORTS + "@cache\ndef f(n):\n    return n\nfor i in range(10 ** 6):\n    f(i)\n"
    STATE.max_items, before = 1000, STATE.max_items
    try:
        assert located_error(source) == ("7:5: MemoryError: an lru_cache of more than 1000 entries is too large "
                                          "(gradcli allows at most 1000)")
        # a bounded cache evicts instead
        out = gradcli_output(IMPORTS + "@lru_cache(maxsize=10)\ndef f(n):\n    return n\nfor i in range(5000):\n"
                                       "    f(i)\nprint(f.cache_info())\n")
        assert out == "CacheInfo(hits=0, misses=5000, maxsize=10, currsize=10)\n"
    finally:
        STATE.max_items = before


def test_the_timeout_stops_a_cached_function(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "spin.grad"
    script.write_text("import torch\n" + IMPORTS + "@cache\ndef spin(n):\n    while True:\n        pass\nspin(1)\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", "--timeout", "0.5", str(script)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 124 and "TimeoutError: stopped after 0.5 seconds" in done.stderr


@pytest.mark.parametrize("source, message", [
    ("@lru_cache\ndef f(x):\n    return x\nf([1])", "6:1: TypeError: unhashable type: 'list'"),
    ("lru_cache('x')", "3:1: TypeError: Expected first argument to be an integer, a callable, or None"),
    ("total_ordering(3)", "3:1: TypeError: total_ordering() takes a script's class in gradcli's language"),
    ("@total_ordering\nclass A:\n    pass", "3:2: ValueError: must define at least one ordering operation: < > <= >="),
    ("@lru_cache\ndef f(x):\n    return x\nf.nope", "6:1: AttributeError: 'functools._lru_cache_wrapper' object has no "
                                                 "attribute 'nope'"),
    ("partialmethod(3)", "3:1: TypeError: 3 is not callable or a descriptor"),
    ("wraps(len, assigned=('__name__',))", "3:1: TypeError: functools.wraps(assigned=, updated=) other than "
     "WRAPPER_ASSIGNMENTS and WRAPPER_UPDATES is outside gradcli's language"),
])
def test_errors(source, message):
    assert located_error(IMPORTS + source) == message


SETUP = ("@lru_cache\ndef f(x):\n    return x\n@singledispatch\ndef s(x):\n    return x\nclass A:\n"
         "    @cached_property\n    def c(self):\n        return 1\n    def m(self, a, b):\n        return a\n"
         "    p = partialmethod(m, 1)\n    @singledispatchmethod\n    def d(self, x):\n        return x\n"
         "@total_ordering\nclass O:\n    def __lt__(self, o):\n        return True\n")
ESCAPES = [
    "f._func", "f._cache", "f.__dict__", "f.__globals__", "f.__call__", "f.cache_info.__self__", "f.cache_info.func",
    "f.__wrapped__.__globals__", "f.__class__.__init__", "type(f).__init__", "s._registry", "s._real", "s.__dict__",
    "s.register.func", "s.dispatch.__self__", "s.registry.__class__.__init__", "A.c.__set_name__", "A.c.__get__",
    "A.c.__dict__", "A.p.__get__", "A.p.__dict__", "O.__gt__._compare", "O.__gt__.__globals__", "O.__gt__.__closure__",
    "A().p.func.__self__", "A.d.__get__", "A().d.__wrapped__.__globals__", "A().d._call", "functools.__dict__",
    "functools._functools", "functools.RLock", "functools._lru_cache_wrapper", "functools._CacheInfo",
    "f.cache_info().__class__.__init__.__globals__", "functools.partial(f).func.__globals__",
    "functools.partial(max).func.__self__", "functools.wraps(f).func.__globals__", "functools.partial(f).__dict__",
    "functools.partial(f).__setstate__",
]


@pytest.mark.parametrize("expression", ESCAPES)
def test_nothing_behind_them_is_reachable(expression):
    message = located_error(IMPORTS + SETUP + f"x = {expression}")
    name = expression.rpartition(".")[2]
    assert message.endswith("is outside gradcli's language") or message.endswith(f"has no attribute '{name}'") \
        or message.endswith(f"does not implement functools.{name}"), message


def test_a_script_cannot_reach_python_through_the_functions_it_gives():
    """What the decorators call is the script's own: a function they hand back is the script's or gradcli's."""
    source = (IMPORTS + SETUP + "print(type(f.cache_info), type(s.register), type(O.__gt__), type(A.p), type(A.c), "
              "type(A().p))\n")
    assert _shown(gradcli_output(source)) == ("<class 'builtin_function_or_method'> <class 'function'> <class "
                                             "'function'> <class 'function'> <class 'functools.cached_property'> "
                                             "<class 'functools.partial'>\n")


def test_functools_is_loaded_only_by_scripts_that_use_it():
    import subprocess
    import sys
    code = ("import sys, io\nfrom gradcli.session import Session\nSession(out=io.StringIO()).run_source('x = 1\\n')\n"
            "print('gradcli.language.pyfunctools' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"


def test_help_describes_them():
    out = gradcli_output(IMPORTS + "@lru_cache\ndef fib(n):\n    'Fibonacci numbers.'\n    return n\n@singledispatch\n"
                                   "def show(x, indent=0):\n    return x\nhelp(fib)\nhelp(show)\nhelp(lru_cache)\n"
                                   "help(cached_property)\nhelp(functools)\n")
    flat = " ".join(out.split())          # (the paragraphs are wrapped to the terminal's width)
    assert flat.startswith("fib(n) Fibonacci numbers. (Its results are cached by functools.lru_cache: cache_info(), "
                           "cache_clear().) show(x, indent) A function defined in this session. (A generic "
                           "function of functools.singledispatch: register(), dispatch(), registry.) "
                           "lru_cache(maxsize=128, typed=False) ")
    assert "class cached_property(func)\n" in out and "module functools\n" in out and "singledispatchmethod" in out
