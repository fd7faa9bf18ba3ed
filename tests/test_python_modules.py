"""Python's itertools, functools, string and time modules and `from __future__` in the language: CPython's
results, bounded copies, nothing behind them reachable."""

import io

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.engine.state import STATE
from gradcli.errors import ScriptError, ScriptSyntaxError
from gradcli.session import Session

SNIPPETS = [
    "import itertools\nprint(list(itertools.product('ab', [1, 2])), list(itertools.product(range(2), repeat=3)))",
    "import itertools\nprint(list(itertools.permutations([1, 2, 3], 2)), list(itertools.combinations('abcd', 2)))",
    "import itertools\nprint(list(itertools.combinations_with_replacement([1, 2], 2)), list(itertools.islice(itertools.cycle('xy'), 5)))",
    "import itertools\nprint(list(itertools.accumulate([1, 2, 3, 4])), list(itertools.accumulate([3, 1, 4], max)))",
    "import itertools\nprint(list(itertools.chain([1], (2, 3), 'ab')), list(itertools.islice(itertools.count(5, 2), 4)))",
    "import itertools\nprint(list(itertools.zip_longest([1, 2, 3], 'ab', fillvalue=0)), list(itertools.pairwise([1, 2, 4])))",
    "import itertools\nfor k, g in itertools.groupby('aabbbc'):\n    print(k, list(g))",
    "import itertools\nprint(list(itertools.repeat(7, 3)), list(itertools.compress('abcd', [1, 0, 1, 0])))",
    "import itertools\nprint(list(itertools.takewhile(bool, [1, 2, 0, 3])), list(itertools.dropwhile(bool, [1, 0, 2])))",
    "import itertools\nprint(list(itertools.starmap(pow, [(2, 3), (3, 2)])), list(itertools.filterfalse(bool, [0, 1, 0])))",
    "import functools\nprint(functools.reduce(max, [3, 1, 4, 1, 5]), functools.reduce(pow, [2, 3], 1))",
    "import functools\np = functools.partial(max, 10)\nprint(p(3), p(30))",
    "import string\nprint(string.ascii_letters, string.digits, string.hexdigits, string.octdigits)",
    "import string\nprint(repr(string.whitespace), string.punctuation, string.capwords('hello autograd world'))",
    "import time\na = time.time()\nb = time.perf_counter()\nprint(a > 1e9, b > 0, time.perf_counter() >= b)",
    "from itertools import product as p, islice\nprint(list(p([1], [2])), list(islice('abc', 2)))",
    '"""A docstring first."""\nfrom __future__ import annotations\nfrom __future__ import division, print_function\nprint(annotations)',
    "import itertools, functools, string, time\nprint(itertools, time, functools, string)",
    # statistics: CPython's own functions, their results and errors to the last digit
    "import statistics\nlosses = [0.91, 0.52, 0.33, 0.33, 0.2]\nprint(statistics.mean(losses), statistics.fmean(losses), "
    "statistics.median(losses), statistics.mode(losses))\nprint(statistics.stdev(losses), statistics.pstdev(losses), "
    "statistics.variance(losses))",
    "from statistics import mean, median, stdev, variance, fmean, mode\nprint(mean([1, 2, 3, 4]), median([1, 2, 3, 4]), "
    "stdev([1, 2, 3, 4]), variance([1, 2, 3], 2), fmean([1, 2, 3], weights=[3, 2, 1]), mode('abb'))\n"
    "print(mean(x * 0.5 for x in range(5)), median((3, 1, 2)), mean([1.5, 2]))",
    "import statistics\nfor bad in ([], [1]):\n    try:\n        statistics.stdev(bad)\n"
    "    except statistics.StatisticsError as e:\n        print(type(e).__name__, e, isinstance(e, ValueError))\n"
    "try:\n    statistics.mean()\nexcept TypeError as e:\n    print(e)\nprint(statistics)",
    # importing what a language module holds that is not a module: Python's own error, at run time
    "try:\n    import math.pi\nexcept ModuleNotFoundError as e:\n    print(e)\n"
    "try:\n    import random.random as r\nexcept ImportError as e:\n    print(type(e).__name__, e)\n"
    "try:\n    from collections.deque import x\nexcept ImportError as e:\n    print(type(e).__name__, e)\n"
    "try:\n    import math.nothing\nexcept ImportError as e:\n    print(type(e).__name__, e)",
    # dict.fromkeys (its keys taken within the dict bound) and itertools.chain.from_iterable
    "import itertools\nprint(dict.fromkeys('hello'), dict.fromkeys(range(3), 0), dict.fromkeys(('a', 'b'), []))\n"
    "print(list(itertools.chain.from_iterable([[1], (2, 3), 'ab'])), list(itertools.chain.from_iterable([])))\n"
    "for bad in (lambda: dict.fromkeys(), lambda: dict.fromkeys(1, 2, 3), lambda: dict.fromkeys(5),\n"
    "            lambda: dict.fromkeys([1], value=2), lambda: list(itertools.chain.from_iterable([3]))):\n"
    "    try:\n        bad()\n    except TypeError as e:\n        print(e)",
]



@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_results(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)



@pytest.mark.parametrize("source, message", [
    ("from __future__ import foo", "1:1: SyntaxError: future feature foo is not defined"),
    ("x = 1\nfrom __future__ import annotations", "2:1: SyntaxError: from __future__ imports must occur at the "
                                                   "beginning of the file"),
    ("from __future__ import braces", "1:1: SyntaxError: not a chance"),
    ("from __future__ import barry_as_FLUFL", "1:1: SyntaxError: future feature barry_as_FLUFL is not part of "
                                               "gradcli's language"),
    ("x = __future__", "1:5: NameError: name '__future__' is not defined"),
])
def test_future_imports_follow_cpythons_rules(source, message):
    assert located_error(source) == message


@pytest.mark.parametrize("source, message", [
    ("import itertools\nx = itertools.product(range(10**10))",
     "2:5: MemoryError: a list of 10000000000 items is too large (gradcli allows at most {items})"),
    ("import itertools\nx = itertools.permutations(range(10**10), 2)",
     "2:5: MemoryError: a list of 10000000000 items is too large (gradcli allows at most {items})"),
    ("import itertools\nx = itertools.cycle(range(10**10))",
     "2:5: MemoryError: a list of 10000000000 items is too large (gradcli allows at most {items})"),
    ("x = dict.fromkeys(range(10 ** 9))",
     "1:5: MemoryError: a dict of 1000000000 items is too large (gradcli allows at most {items})"),
    ("import itertools\nx = list(itertools.count())",
     "2:5: MemoryError: a list of more than {items} items is too large (gradcli allows at most {items})"),
])
def test_what_the_copies_take_is_bounded(source, message):
    STATE.max_items, before = 10 ** 5, STATE.max_items
    try:
        assert located_error(source) == message.format(items=STATE.max_items)
    finally:
        STATE.max_items = before


@pytest.mark.parametrize("source, message", [
    ("import itertools\nitertools.tee", "2:1: AttributeError: module 'itertools' has no attribute 'tee'"),
    ("import functools\nfunctools.partial(max, 1).__setstate__",
     "2:1: AttributeError: 'partial' object attribute '__setstate__' is outside gradcli's language"),
    ("import functools\nfunctools.RLock", "2:1: AttributeError: module 'functools' attribute 'RLock' is outside "
     "gradcli's language"),
    ("import string\nstring.Template", "2:1: AttributeError: module 'string' has no attribute 'Template'"),
    ("import string\nstring.Formatter", "2:1: AttributeError: module 'string' has no attribute 'Formatter'"),
    ("import time\ntime.sleep(100)", "2:1: AttributeError: module 'time' has no attribute 'sleep'"),
    ("import statistics\nstatistics.quantiles([1, 2])", "2:1: NotImplementedError: gradcli does not implement "
     "statistics.quantiles"),
    ("import statistics\nstatistics.sys", "2:1: AttributeError: module 'statistics' attribute 'sys' is outside "
     "gradcli's language"),
    ("import os", "1:1: ImportError: import of 'os' is outside gradcli's language: scripts can import only torch, "
                  "abc, argparse, bisect, collections, contextlib, copy, dataclasses, enum, functools, heapq, inspect, io, itertools, json, logging, math, operator, "
                  "pprint, random, re, statistics, string, sys, textwrap, time, traceback, types, typing, unicodedata and warnings"),
])
def test_nothing_else_is_reachable(source, message):
    assert located_error(source) == message


def test_a_parse_error_is_a_syntax_error_value():
    with pytest.raises(ScriptSyntaxError):
        Session().compile("from __future__ import nope\n")


@pytest.mark.parametrize("source, message", [
    ("import math.pi", "ModuleNotFoundError: No module named 'math.pi'; 'math' is not a package"),
    ("import torch.nn.functional.relu", "ModuleNotFoundError: No module named 'torch.nn.functional.relu'; "
                                        "'torch.nn.functional' is not a package"),
    ("import torch.nn.Linear", "ModuleNotFoundError: No module named 'torch.nn.Linear'"),
    # an attribute in PyTorch, not a module: `from torch.backends.cuda import matmul` still works
    ("import torch.backends.cuda.matmul", "ModuleNotFoundError: No module named 'torch.backends.cuda.matmul'"),
])
def test_importing_a_non_module_fails_at_run_time_in_pythons_words(source, message):
    # Python's own error, raised when the line runs (the lines before it print), not a refusal before the run
    out = io.StringIO()
    with pytest.raises(ScriptError) as info:
        Session(out=out).run_source("import torch\nprint('before')\n" + source + "\n")
    assert out.getvalue() == "before\n"
    e = info.value
    assert f"{e.line}:{e.col}: {e.kind}: {e.message}" == "3:1: " + message


def test_an_attribute_namespace_is_still_reachable_by_from_import():
    source = ("import torch\nfrom torch.backends.cuda import matmul\nimport torch.backends.cuda\n"
              "print(matmul.allow_tf32, torch.backends.cuda.matmul is matmul)\n")
    assert gradcli_output(source) == "False True\n"

