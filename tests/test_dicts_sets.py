"""Dict and set displays in the language: CPython's semantics and errors, their methods, bounds, sandbox."""

import io

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.engine.state import STATE
from gradcli.errors import ScriptError
from gradcli.session import Session

SNIPPETS = [
    "d = {'a': 1, 'b': 2}\nprint(d, d['a'], len(d), 'a' in d, 'z' not in d)",
    "d = {}\nd['x'] = 1\nd['y'] = [1, 2]\nd['x'] += 5\nprint(d, list(d), list(d.items()), list(d.values()))",
    "d = {1: 'a', 1.0: 'b', True: 'c'}\nprint(d)",
    "d = {'k': 1}\nprint(d.get('k'), d.get('q'), d.get('q', 0), d.setdefault('n', []), d)",
    "d = {'a': 1, 'b': 2, 'c': 3}\nprint(d.pop('b'), d.pop('z', None), d.popitem(), d)",
    "d = {'a': 1}\nd.update({'b': 2}, c=3)\nd.update([('d', 4)])\ne = d.copy()\nd.clear()\nprint(d, e)",
    "d = {'b': 2, 'a': 1}\nfor k in d:\n    print(k, d[k])\nprint(sorted(d), max(d), sum(d.values()))",
    "d = {(1, 2): 'pair', 'n': None}\ndel d['n']\nprint(d, d[(1, 2)], d[1, 2])",
    "s = {3, 1, 2, 3}\nprint(s, len(s), 2 in s)",
    "s = {1, 2}\ns.add(3)\ns.discard(9)\ns.remove(1)\nprint(s, s | {7}, s & {2}, s - {2}, s ^ {2, 8})",
    "s = {1, 2, 3}\nprint(s.union([4]), s.intersection(range(3)), s.difference([1]), s.symmetric_difference([3, 4]))",
    "s = {1, 2}\nprint(s.issubset(range(5)), s.issuperset([1]), s.isdisjoint([7]), s == {2, 1}, s < {1, 2, 3})",
    "s = {1, 2}\ns.update([5], (6,))\ns.intersection_update([1, 5, 6])\nt = s.copy()\ns.clear()\nprint(s, t)",
    "print({'nested': {'a': [1, {2}]}, 't': (1,)}, {}, {()})",
    "d = {'a': 1}\nprint(f'{d}', f\"{d['a']:03d}\", str(d), repr({'q': 'x'}))",
    "x = 0\ndef f():\n    global_marker = 1\n    return {'v': x + 1}\nprint(f())",
    "order = []\ndef k(n):\n    order.append(('k', n))\n    return n\ndef v(n):\n    order.append(('v', n))\n    return n\n"
    "d = {k(1): v(10), k(2): v(20)}\nprint(order, d)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)



@pytest.mark.parametrize("source, message", [
    ("d = {[1]: 2}", "1:5: TypeError: unhashable type: 'list'"),
    ("s = {1, [2]}", "1:5: TypeError: unhashable type: 'list'"),
    ("d = {}\nd['missing']", "2:1: KeyError: 'missing'"),
    ("d = {}\ndel d['missing']", "2:5: KeyError: 'missing'"),
    ("s = {1}\ns.remove(5)", "2:1: KeyError: 5"),
    ("d = {}\nd.popitem()", "2:1: KeyError: 'popitem(): dictionary is empty'"),
    ("d = {'a': 1}\nd.nope", "2:1: AttributeError: 'dict' object has no attribute 'nope'"),
])
def test_errors_in_pythons_words(source, message):
    assert located_error(source) == message


@pytest.mark.parametrize("source", [
    "d = {}\nd.update(zip(range(10**10), range(10**10)))",
    "s = set()\ns = {1}\ns.update(range(10**10))",
    "s = {1}\ns.issubset(range(10**12))",
    "s = {1}\ns.union(range(10**10))",
    "s = {1}\ns.isdisjoint(range(10**12))",
])
def test_what_methods_take_in_is_bounded(source):
    before, STATE.max_items = STATE.max_items, 10 ** 5
    try:
        message = located_error(source.replace("s = set()\n", ""))
    finally:
        STATE.max_items = before
    assert message.split(": ", 1)[1].startswith("MemoryError: a list of ")


@pytest.mark.parametrize("source, message", [
    ("d = {}\nd.fromkeys(range(3))", "2:1: AttributeError: 'dict' object attribute 'fromkeys' is outside gradcli's language"),
    ("d = {}\nd.keys().mapping", "2:1: AttributeError: 'dict_keys' object attribute 'mapping' is outside gradcli's language"),
    ("d = {}\nx = d.__reduce__", "2:5: AttributeError: 'dict' object attribute '__reduce__' is outside gradcli's language"),
    ("x = {1: 2}\ny = '{0.__reduce__}'.format(x)", None),
])
def test_nothing_behind_a_dict_is_reachable(source, message):
    with pytest.raises(ScriptError) as info:
        Session(out=io.StringIO()).run_source(source + "\n")
    e = info.value
    if message is not None:
        assert f"{e.line}:{e.col}: {e.kind}: {e.message}" == message
    else:
        assert e.kind in ("AttributeError", "SyntaxError", "ValueError")
