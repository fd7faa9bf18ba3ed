"""Python's collections module in the language: defaultdict, Counter, OrderedDict, deque and namedtuple with
CPython's results and messages, what they copy, count or repeat bounded, nothing behind them reachable."""

import pytest

from conftest import cpython_output, gradcli_output, located_error, normalize, run_script
from gradcli.engine.state import STATE
from gradcli.language import stdlib

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

C = "from collections import defaultdict, Counter, OrderedDict, deque, namedtuple\n"

SNIPPETS = [
    # defaultdict: a missing key calls the factory (any callable), through subscripts and methods
    "d = defaultdict(list)\nd['a'].append(1)\nd['b']\nprint(d, d['a'], len(d), 'c' in d, d.get('c'))",
    "d = defaultdict(int)\nfor w in 'the cat the hat'.split():\n    d[w] += 1\nprint(d, dict(d), sorted(d.items()))",
    "d = defaultdict(lambda: 'n/a')\nprint(d[1], d)",
    "def zero():\n    return 0\nd = defaultdict(zero, {'x': 1})\nd['y'] += 2\nprint(d)",
    "d = defaultdict(None)\nprint(d, d.default_factory)\ntry:\n    d[1]\nexcept KeyError as e:\n    print('KeyError', e)",
    "d = defaultdict(set, [('a', {1})])\nd['a'].add(2)\nd.update(b={3})\nprint(d, d.default_factory, d.copy())",
    "d = defaultdict(list)\nd[0].append(1)\nprint(d == {0: [1]}, isinstance(d, dict), isinstance(d, defaultdict))",
    # Counter
    "c = Counter('abracadabra')\nprint(c, c['a'], c['z'], c.most_common(2), c.most_common(), c.total())",
    "c = Counter(['x', 'y', 'x'])\nc.update(['x', 'z'])\nc.update({'y': 5})\nc.subtract(['x'])\nprint(c)",
    "c = Counter(a=3, b=1)\nprint(sorted(c.elements()), list(Counter(a=0, b=-1).elements()), c + Counter(a=1))",
    "c = Counter(a=3, b=1)\nd = Counter(a=1, b=2)\nprint(c - d, c | d, c & d, +Counter(a=-1, b=2), -Counter(a=-1))",
    "c = Counter()\nfor label in [2, 0, 2, 1, 2]:\n    c[label] += 1\nprint(c, dict(c), c.most_common(1)[0])",
    "c = Counter({'a': 2})\ndel c['a']\ndel c['b']\nprint(c, Counter('aab') == Counter('aba'))",
    # OrderedDict, printed as 3.11 prints it
    "o = OrderedDict()\no['b'] = 1\no['a'] = 2\nprint(o, list(o), OrderedDict())",
    "o = OrderedDict([('x', 1), ('y', 2), ('z', 3)])\no.move_to_end('x')\no.move_to_end('z', last=False)\nprint(o)",
    "o = OrderedDict(a=1, b=2, c=3)\nprint(o.popitem(), o.popitem(last=False), o)",
    "o = OrderedDict(a=1)\no.update([('b', 2)])\nprint(o == {'b': 2, 'a': 1}, o == OrderedDict(b=2, a=1), o.copy())",
    # deque
    "q = deque([1, 2, 3])\nq.append(4)\nq.appendleft(0)\nprint(q, q.pop(), q.popleft(), q, len(q), q[0], q[-1])",
    "q = deque(range(5), maxlen=3)\nprint(q, q.maxlen)\nq.extend([7, 8])\nq.extendleft([9])\nprint(q)",
    "q = deque('abcde')\nq.rotate(2)\nprint(q)\nq.rotate(-3)\nprint(q, q.count('a'), q.index('c'))",
    "q = deque([1, 2])\nq.insert(1, 5)\nq.remove(1)\nq.reverse()\nprint(q, q * 2, q + deque([0]), deque(), q.copy())",
    "q = deque(maxlen=2)\nprint(q, q.maxlen, deque([1, 2, 3], 2) * 3)",
    # namedtuple
    "P = namedtuple('Point', 'x y')\np = P(1, y=2)\nprint(p, p.x, p[1], p._fields, P._fields, p._asdict())",
    "P = namedtuple('Point', ['x', 'y'])\np = P(1, 2)\nprint(p._replace(x=10), P._make([3, 4]), P._make(range(2)))",
    "P = namedtuple('P', 'a, b c', defaults=[0])\nprint(P(1, 2), P(1, 2, 3), isinstance(P(1, 2), tuple), isinstance(P(1, 2), P))",
    "P = namedtuple('P', 'f g')\np = P(len, 'ab')\nprint(p.f(p.g), p)",
    "P = namedtuple('P', 'x y')\nx, y = P(1, 2)\nprint(x + y, P(1, 2) == (1, 2), sum(P(3, 4)), P(1, 2).count(1), P(1, 2).index(2))",
    "P = namedtuple('P', 'x def _y x', rename=True)\nprint(P._fields, P(1, 2, 3, 4))",
    "P = namedtuple('P', 'x y')\nprint(P, type(P(1, 2)) is P, type(P(1, 2)).__name__)",
    "P = namedtuple('P', 'x y')\nprint(P(1, 2)._asdict, P._make)",
    "P = namedtuple('P', 'x', module='mymod')\nprint(P, P(1))",
    # the module and its classes print as CPython's
    "import collections\nprint(collections.Counter, collections.defaultdict, collections.OrderedDict, collections.deque)",
    "print(defaultdict, Counter, OrderedDict, deque)",
    "import collections\nprint(type(collections.Counter('a')) is collections.Counter, type(deque()) is deque)",
    # collections.abc: Python's abstract classes, for isinstance and issubclass (a batch that is a Mapping)
    "import collections.abc\nfrom collections.abc import Mapping, Sequence, Iterable, Callable, Sized, Hashable\n"
    "P = namedtuple('P', 'x y')\nclass A:\n    def __len__(self):\n        return 0\n"
    "vals = [{}, OrderedDict(), defaultdict(list), Counter(), [], (), 's', deque(), P(1, 2), range(2), 3, None, len, "
    "A(), A, (i for i in [])]\nfor c in (Mapping, Sequence, Iterable, Callable, Sized, Hashable, "
    "collections.abc.MutableMapping, collections.abc.Iterator):\n    print(c, [isinstance(v, c) for v in vals])\n"
    "print(issubclass(A, Sized), issubclass(dict, Mapping), type(Mapping), Mapping[str, int], Callable[[int], str])\n"
    "def f(x: Mapping[str, int]) -> Sequence[int]:\n    return list(x.values())\nprint(f({'a': 1}), f.__annotations__)\n"
    "try:\n    Mapping()\nexcept TypeError as e:\n    print(e)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_results(snippet):
    source = C + snippet + "\n"
    assert normalize(gradcli_output(source)) == normalize(cpython_output(source))


def test_with_autograd():
    source = C + (
        "import torch\n"
        "losses = defaultdict(list)\n"
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "for epoch in range(2):\n"
        "    loss = (w * w).sum()\n"
        "    loss.backward()\n"
        "    losses[epoch].append(loss.item())\n"
        "print(losses, w.grad)\n"
        "print(Counter(torch.tensor([2, 0, 2]).tolist()))\n")
    assert gradcli_output(source) == ("defaultdict(<class 'list'>, {0: [5.0], 1: [5.0]}) tensor([4., 8.])\n"
                                      "Counter({2: 2, 0: 1})\n")


@pytest.mark.parametrize("source, message", [
    ("namedtuple('P', 'x def')", "2:1: ValueError: Type names and field names cannot be a keyword: 'def'"),
    ("namedtuple('P', ['x', '_y'])", "2:1: ValueError: Field names cannot start with an underscore: '_y'"),
    ("namedtuple('P', 'x y x')", "2:1: ValueError: Encountered duplicate field name: 'x'"),
    ("namedtuple('1P', 'x')", "2:1: ValueError: Type names and field names must be valid identifiers: '1P'"),
    ("namedtuple('P', 'x')(1, 2)", "2:1: TypeError: P.__new__() takes 2 positional arguments but 3 were given"),
    ("namedtuple('P', 'x y')._make([1])", "2:1: TypeError: Expected 2 arguments, got 1"),
    ("namedtuple('P', 'x')(1)._replace(z=1)", "2:1: ValueError: Got unexpected field names: ['z']"),
    ("namedtuple('P', 'x', defaults=[1, 2])", "2:1: TypeError: Got more default values than field names"),
    ("namedtuple('P', 'x')(1).y", "2:1: AttributeError: 'P' object has no attribute 'y'"),
    ("defaultdict(1)", "2:1: TypeError: first argument must be callable or None"),
    ("Counter(1)", "2:1: TypeError: 'int' object is not iterable"),
    ("deque([1], maxlen=-1)", "2:1: ValueError: maxlen must be non-negative"),
    ("deque().pop()", "2:1: IndexError: pop from an empty deque"),
    ("OrderedDict().popitem()", "2:1: KeyError: 'dictionary is empty'"),
    ("OrderedDict().move_to_end('a')", "2:1: KeyError: 'a'"),
    ("x = {}\nx['a']", "3:1: KeyError: 'a'"),
])
def test_errors_as_cpython_reports_them(source, message):
    assert located_error(C + source) == message


@pytest.mark.parametrize("source, message", [
    ("Counter(range(10**12))", "2:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("list(Counter({'a': 10**12}).elements())",
     "2:1: MemoryError: a list of more than {items} items is too large (gradcli allows at most {items})"),
    ("sorted(Counter(a=10**15).elements())",
     "2:1: MemoryError: a list of more than {items} items is too large (gradcli allows at most {items})"),
    ("c = Counter()\nc.update(range(10**12))",
     "3:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("c = Counter()\nc.subtract(range(10**12))",
     "3:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("deque(range(10**12))", "2:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("deque([1]) * 10**12", "2:1: MemoryError: a deque of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("q = deque([1, 2])\nq *= 10**12", "3:1: MemoryError: a deque of 2000000000000 items is too large (gradcli allows at most {items})"),
    ("q = deque()\nq.extend(range(10**12))",
     "3:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("q = deque()\nq.extendleft(range(10**12))",
     "3:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("defaultdict(list, range(10**12))",
     "2:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("OrderedDict(range(10**12))",
     "2:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("o = OrderedDict()\no.update(range(10**12))",
     "3:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("namedtuple('P', ['f%d' % i for i in range(20000)])",
     "2:1: MemoryError: a namedtuple of 20000 fields is too large (gradcli allows at most 10000)"),
    ("namedtuple('P', ' '.join(['f%d' % i for i in range(20000)]))",
     "2:1: MemoryError: a namedtuple of 20000 fields is too large (gradcli allows at most 10000)"),
    ("namedtuple('P', range(10**12))",
     "2:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("namedtuple('P', 'x', defaults=range(10**12))",
     "2:1: MemoryError: a tuple of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("namedtuple('P', 'x y')(1, 2)._make(range(10**12))",
     "2:1: MemoryError: a tuple of 1000000000000 items is too large (gradcli allows at most {items})"),
    ("namedtuple('P', 'x y')._make(range(10**12))",
     "2:1: MemoryError: a tuple of 1000000000000 items is too large (gradcli allows at most {items})"),
])
def test_what_they_copy_and_repeat_is_bounded(source, message):
    before, STATE.max_items = STATE.max_items, 10 ** 6      # the bound, lowered: reaching it stays quick
    try:
        assert located_error(C + source) == message.format(items=STATE.max_items)
    finally:
        STATE.max_items = before


def test_a_long_count_is_iterated_lazily():
    """elements() of a huge count is a lazy chain, as in CPython; a maxlen deque keeps the last items of
    a long iterable, read in slices."""
    source = C + ("import itertools\nc = Counter(a=10**18)\nprint(list(itertools.islice(c.elements(), 3)))\n"
                  "print(deque(range(3 * 10**6), maxlen=2))\n")
    assert gradcli_output(source) == "['a', 'a', 'a']\ndeque([2999998, 2999999], maxlen=2)\n"


def test_a_factory_that_recurses_ends_in_a_recursion_error():
    assert located_error(C + "d = defaultdict(lambda: d[0])\nd[1]") == \
        "2:25: RecursionError: maximum recursion depth exceeded"


@pytest.mark.parametrize("field_names", [
    "['a) or __import__(\"os\").system(\"echo\") or (', 'b']",
    "'x, y=__import__(\"os\")'",
    "['x', 'y\\n import os']",
    "['__class__']",
    "['x', 'lambda']",
])
def test_field_names_carry_no_code(field_names):
    """namedtuple compiles a constructor from the field names: CPython's checks (identifiers, no keywords,
    no leading '_') leave no script text in it, with rename=True too (bad names become _0, _1, ...)."""
    result = run_script(C + f"P = namedtuple('P', {field_names})\n")
    assert result.error is not None and result.error.kind == "ValueError"
    result = run_script(C + f"P = namedtuple('P', {field_names}, rename=True)\nprint(P._fields)\n")
    assert result.error is None and "import" not in result.out and "class" not in result.out


@pytest.mark.parametrize("source, message", [
    ("P = namedtuple('P', 'x')\nP.x", "3:1: AttributeError: 'type' object attribute 'x' is outside gradcli's language"),
    ("P = namedtuple('P', 'x')\nP(1)._field_defaults", "3:1: AttributeError: 'P' object attribute '_field_defaults' "
                                                       "is outside gradcli's language"),
    ("P = namedtuple('P', 'x')\ngetattr(P(1), '_field_defaults')",
     "3:1: AttributeError: 'P' object attribute '_field_defaults' is outside gradcli's language"),
    ("P = namedtuple('P', 'x')\ngetattr(P, '__new__')",
     "3:1: AttributeError: 'type' object attribute '__new__' is outside gradcli's language"),
    ("P = namedtuple('P', 'x')\ngetattr(P(1)._asdict, '__func__')",
     "3:1: AttributeError: 'method' object has no attribute '__func__'"),
    ("d = defaultdict(list)\ngetattr(d, '__missing__')",
     "3:1: AttributeError: 'defaultdict' object attribute '__missing__' is outside gradcli's language"),
    ("getattr(Counter(), '_keep_positive')",
     "2:1: AttributeError: 'Counter' object attribute '_keep_positive' is outside gradcli's language"),
    ("Counter.fromkeys", "2:1: AttributeError: 'type' object attribute 'fromkeys' is outside gradcli's language"),
    ("OrderedDict.fromkeys", "2:1: AttributeError: 'type' object attribute 'fromkeys' is outside gradcli's language"),
    ("getattr(namedtuple, '__globals__')",
     "2:1: AttributeError: 'function' object attribute '__globals__' is outside gradcli's language"),
    ("getattr(Counter, 'fn')", "2:1: AttributeError: type object 'Counter' has no attribute 'fn'"),
    ("import collections.abc\ncollections.abc.Mapping.register",
     "3:1: AttributeError: 'ABCMeta' object attribute 'register' is outside gradcli's language"),
    ("from collections.abc import Mapping\nMapping.__subclasses__",
     "3:1: AttributeError: 'ABCMeta' object attribute '__subclasses__' is outside gradcli's language"),
    ("from collections.abc import Mapping\nMapping._abc_impl",
     "3:1: AttributeError: 'ABCMeta' object attribute '_abc_impl' is outside gradcli's language"),
    ("from collections.abc import Mapping\ntype(Mapping)('M', (), {})", "3:1: TypeError: cannot create "
                                                                       "'abc.ABCMeta' instances"),
    ("from collections.abc import Mapping\nclass M(Mapping):\n    pass", "3:1: TypeError: subclassing 'Mapping' is "
     "outside gradcli's language: a script's class may derive from its own classes, object, dict, list, tuple, set, "
     "frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the exception classes and the "
     "library classes gradcli provides"),
    ("from collections.abc import Buffer", "2:1: ImportError: cannot import name 'Buffer' from 'collections.abc' "
                                           "(unknown location)"),
    ("import collections\ncollections.ChainMap", "3:1: AttributeError: module 'collections' has no attribute 'ChainMap'"),
    ("import collections.abcd", "2:1: ImportError: import of 'collections.abcd' is outside gradcli's language: "
                                "scripts can import only torch, abc, argparse, bisect, collections, contextlib, copy, dataclasses, "
                                "enum, functools, heapq, inspect, io, itertools, json, logging, math, operator, pprint, random, "
                                "re, statistics, string, sys, textwrap, time, traceback, types, typing, unicodedata and warnings"),
    ("from collections import UserDict", "2:1: ImportError: cannot import name 'UserDict' from 'collections' "
                                         "(unknown location)"),
    ("d = defaultdict(list)\nd.default_factory = dict",
     "3:1: AttributeError: 'defaultdict' object attribute 'default_factory' is read-only"),
])
def test_nothing_behind_them_is_reachable(source, message):
    assert located_error(C + source) == message


def test_the_module_is_importable_and_completed():
    assert "collections" in stdlib.modules()
    assert set(stdlib.COLLECTIONS.members) == {"defaultdict", "Counter", "OrderedDict", "deque", "namedtuple", "abc"}
    import collections.abc
    assert set(stdlib.COLLECTIONS.members["abc"].members) == set(collections.abc.__all__)


@pytest.mark.parametrize("source", [
    "from collections import Counter\nprint(sum(Counter({1: 10**15}).elements()))",
    "from collections import deque\nimport itertools\nprint(deque(itertools.count(), maxlen=2))",
])
def test_timeout_stops_a_long_count_in_c(source):
    """sum() of a huge elements() and a maxlen deque of an endless iterator return to Python every
    2**20 items, so the deadline's timer stops them on time (not the supervisor, a second later)."""
    p = launcher.run(["--timeout", "0.5", "-c", source], timeout=60)
    assert p.returncode == 124
    assert p.stderr.splitlines()[0].endswith(": TimeoutError: stopped after 0.5 seconds (--timeout 0.5)")
    assert "inside a computation" not in p.stderr


def test_keywords_named_like_the_methods_own_parameters():
    """`d.update(d=1)`, `'{s}'.format(s=1)`: a keyword is the caller's, whatever gradcli's wrapper names its
    receiver (CPython 3.11's output)."""
    source = ("import collections\nx = {}\nx.update(d=4)\nprint(x)\nprint('{s} {sep}'.format(s=1, sep=2))\n"
              "c = collections.Counter()\nc.update(counter=2)\nc.subtract(counter=1)\nprint(c)\n"
              "dd = collections.defaultdict(int)\ndd.update(d=3)\nprint(dd)\n")
    assert gradcli_output(source) == cpython_output(source)
