"""Match statements: CPython 3.11's semantics, its compile-time errors and its runtime TypeErrors, compared with
CPython; torch's classes in class patterns are compared with PyTorch in the conformance golden."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

POINT = ("class Point:\n    __match_args__ = ('x', 'y')\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n")

SNIPPETS = [
    # literals, captures, the wildcard, no fall-through
    "for v in [0, 1, 2, -1, 2.5, 'a', None, True]:\n    match v:\n        case 0: print('zero')\n"
    "        case 1 | 2: print('small', v)\n        case -1: print('minus')\n        case 2.5: print('float')\n"
    "        case 'a': print('str')\n        case None: print('none')\n        case _: print('other', v)",
    "match 1.0:\n    case 1: print('1.0 == 1')",
    "match True:\n    case 1: print('True == 1')",
    "match 1:\n    case True: print('is True')\n    case _: print('1 is not True')",
    "match 'x':\n    case other: print('captured', other)\nprint(other)",
    "match 5:\n    case _:\n        pass\ntry:\n    print(_)\nexcept NameError as e:\n    print(e)",
    # value patterns (dotted names), not captures
    "class Mode:\n    TRAIN = 'train'\n    EVAL = 'eval'\nfor m in ['eval', 'train', 'test']:\n    match m:\n"
    "        case Mode.TRAIN: print('training')\n        case Mode.EVAL: print('evaluating')\n        case _: print(m)",
    # sequences: lists, tuples, ranges match; strings do not
    "for s in [[1, 2], (1, 2, 3), [], 'ab', range(3), [1, [2, 3]]]:\n    match s:\n        case []: print('empty')\n"
    "        case [a, b]: print('two', a, b)\n        case [first, *rest]: print('first', first, rest)\n"
    "        case _: print('not a sequence', s)",
    "match [1, [2, 3, 4]]:\n    case [a, [b, *mid, c]] as whole: print(a, b, mid, c, whole)",
    "match (1, 2, 3, 4):\n    case (*_, x, y): print(x, y)",
    "match [1, 2, 3]:\n    case [*init, last]: print(init, last)",
    "match (1,):\n    case (x,): print('one', x)",
    "match [1, 2]:\n    case 1, x: print('open sequence', x)",
    # mappings: extra keys are fine, **rest gets them
    "cfg = {'opt': 'sgd', 'lr': 0.1, 'steps': 3}\nmatch cfg:\n    case {'opt': 'adam'}: print('adam')\n"
    "    case {'opt': 'sgd', 'lr': lr, **rest}: print('sgd', lr, rest)",
    "match {}:\n    case {'k': _}: print('has k')\n    case {}: print('any mapping')",
    "match [('a', 1)]:\n    case {}: print('mapping')\n    case _: print('a list is no mapping')",
    "from collections import defaultdict, OrderedDict\nd = defaultdict(int)\nmatch d:\n    case {'missing': _}: pass\n"
    "    case _: print(dict(d))\nmatch OrderedDict(a=1):\n    case {'a': v}: print(v)",
    # class patterns
    POINT + "for p in [Point(0, 0), Point(0, 5), Point(3, 0), Point(2, 2), 7]:\n    match p:\n"
    "        case Point(x=0, y=0): print('origin')\n        case Point(0, y): print('on y', y)\n"
    "        case Point(x, 0): print('on x', x)\n        case Point(x, y) if x == y: print('diagonal', x)\n"
    "        case _: print('elsewhere')",
    "for v in [1, 2.0, 'three', [4], (5,), {'six': 6}, True]:\n    match v:\n        case bool(b): print('bool', b)\n"
    "        case int(n): print('int', n)\n        case float(f): print('float', f)\n        case str(s): print('str', s)\n"
    "        case list([x]): print('list of', x)\n        case tuple(t): print('tuple', t)\n        case dict(d): print('dict', d)",
    "from dataclasses import dataclass\n@dataclass\nclass Cfg:\n    name: str\n    lr: float = 0.1\n"
    "print(Cfg.__match_args__)\nmatch Cfg('adam', 0.01):\n    case Cfg('sgd'): print('sgd')\n"
    "    case Cfg(name, lr=lr): print(name, lr)",
    "from dataclasses import dataclass, field\n@dataclass(match_args=False)\nclass A:\n    x: int\n"
    "print(hasattr(A, '__match_args__'))\n@dataclass\nclass B:\n    x: int\n    y: int = field(kw_only=True, default=0)\n"
    "print(B.__match_args__)",
    "from collections import namedtuple\nStep = namedtuple('Step', 'epoch loss')\nprint(Step.__match_args__)\n"
    "match Step(3, 0.25):\n    case Step(epoch, loss) if loss < 0.5: print(epoch, loss)",
    "class Base:\n    pass\nclass Child(Base):\n    pass\nmatch Child():\n    case Base(): print('isinstance')",
    POINT + "match Point(1, 2):\n    case Point(missing=_): print('no')\n    case Point(): print('no attribute: no match')",
    # binding: only once the whole pattern matched; a failed guard leaves them bound
    "match (1, 2):\n    case (x, 3): pass\n    case _: pass\ntry:\n    print(x)\nexcept NameError as e:\n    print(e)",
    "match (1, 2):\n    case (x, y) if y > 5: pass\n    case _: pass\nprint(x, y)",
    "match 3:\n    case 1 | 2 as n: print('small')\n    case n: print('bound', n)",
    # guards, walrus in guards and subjects
    "match [3, 4]:\n    case [a, b] if (s := a + b) > 5: print('big', s)",
    "match (n := 10):\n    case 10: print('ten', n)",
    "match 1, 2:\n    case (a, b): print('tuple subject', a, b)",
    # in functions: return, nested functions read captured names, loops break out
    "def kind(v):\n    match v:\n        case int() | float(): return 'number'\n        case str(): return 'text'\n"
    "    return 'unknown'\nprint(kind(1), kind('a'), kind(None))",
    "def f(v):\n    match v:\n        case [x]:\n            return lambda: x\nprint(f([9])())",
    "for v in range(5):\n    match v:\n        case 3: break\n        case _: continue\nprint(v)",
    "def gen(items):\n    for item in items:\n        match item:\n            case (k, v):\n                yield k\n"
    "                yield v\n            case _:\n                yield '?'\nprint(list(gen([(1, 2), 3])))",
    # the soft keywords stay names
    "match = {'case': 1}\ncase = 'case'\nprint(match[case])\nmatch match:\n    case {'case': case}: print(case)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("source, message", [
    ("match 5:\n    case len(): pass", "2:10: TypeError: called match pattern must be a type"),
    ("T = (int, float)\nmatch 5:\n    case T(): pass", "3:10: TypeError: called match pattern must be a type"),
    ("match 5:\n    case int(1, 2): pass", "2:10: TypeError: int() accepts 1 positional sub-pattern (2 given)"),
    ("class P:\n    pass\nmatch P():\n    case P(1): pass",
     "4:10: TypeError: P() accepts 0 positional sub-patterns (1 given)"),
    ("class Q:\n    __match_args__ = ['a']\nmatch Q():\n    case Q(1): pass",
     "4:10: TypeError: Q.__match_args__ must be a tuple (got list)"),
    ("class R:\n    __match_args__ = ('a', 1)\n    a = 1\nmatch R():\n    case R(1, 2): pass",
     "5:10: TypeError: __match_args__ elements must be strings (got int)"),
    ("class R:\n    __match_args__ = ('a',)\n    a = 1\nmatch R():\n    case R(1, a=2): pass",
     "5:10: TypeError: R() got multiple sub-patterns for attribute 'a'"),
    ("class K:\n    a = 'k'\n    b = 'k'\nmatch {'k': 1, 'j': 2}:\n    case {K.a: 1, K.b: _}: pass",
     "5:10: ValueError: mapping pattern checks duplicate key ('k')"),
    ("class P:\n    pass\nprint(P.__match_args__)", "3:7: AttributeError: type object 'P' has no attribute "
     "'__match_args__'"),
    ("match [1, 2]:\n    case [a, b] if c: pass", "2:20: NameError: name 'c' is not defined"),
])
def test_errors_in_pythons_words(source, message):
    assert located_error(source) == message


def test_a_match_in_a_class_body_binds_class_attributes():
    source = "class A:\n    match (1, 2):\n        case (first, second): pass\nprint(A.first, A.second)\n"
    assert gradcli_output(source) == cpython_output(source) == "1 2\n"
