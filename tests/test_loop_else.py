"""`for ... else` and `while ... else`: the else block runs when the loop ends without break, compared
with CPython."""

import pytest

from conftest import cpython_output, gradcli_output

SNIPPETS = [
    "for i in range(3):\n    pass\nelse:\n    print('done', i)",
    "for i in range(5):\n    if i == 2:\n        break\nelse:\n    print('never')\nprint(i)",
    "for i in []:\n    pass\nelse:\n    print('empty loop runs else')",
    "n = 3\nwhile n:\n    n -= 1\nelse:\n    print('while else', n)",
    "n = 3\nwhile n:\n    n -= 1\n    if n == 1:\n        break\nelse:\n    print('never')\nprint(n)",
    "def find(xs, t):\n    for i, x in enumerate(xs):\n        if x == t:\n            return i\n    else:\n        return -1\n"
    "print(find([4, 5], 5), find([4, 5], 9))",
    "for i in range(3):\n    for j in range(3):\n        if j == i:\n            break\n    else:\n        continue\n    print(i, j)",
    "primes = []\nfor n in range(2, 20):\n    for d in primes:\n        if n % d == 0:\n            break\n    else:\n"
    "        primes.append(n)\nprint(primes)",
    "for i in range(2):\n    continue\nelse:\n    print('continue does not skip else')",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)
