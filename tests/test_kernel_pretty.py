"""The text a notebook shows for a value (gradcli.kernel.pretty) is IPython's, the text PyTorch's kernel shows:
exact strings for the script's values, and a differential run against IPython's own printer on random nested
containers of multi-line reprs (where the line breaking is subtle)."""

from __future__ import annotations

import random

import pytest

from gradcli.kernel.pretty import pretty
from gradcli.session import Session


def _values(source: str) -> dict:
    session = Session(stable_ids=True)
    session.run_source("import torch\n" + source)
    return session.globals


def test_containers_of_tensors_break_as_ipython_breaks_them():
    g = _values("x = torch.ones(2, 2, requires_grad=True)\nz = x * 3\nout = z.mean()\n")
    assert pretty((g["z"], g["out"])) == ("(tensor([[3., 3.],\n         [3., 3.]], grad_fn=<MulBackward0>),\n"
                                          " tensor(3., grad_fn=<MeanBackward0>))")
    assert pretty({"a": [g["out"]] * 3}) == ("{'a': [tensor(3., grad_fn=<MeanBackward0>),\n"
                                             "  tensor(3., grad_fn=<MeanBackward0>),\n"
                                             "  tensor(3., grad_fn=<MeanBackward0>)]}")
    assert pretty(g["z"]) == repr(g["z"])
    assert pretty(list(range(3))) == "[0, 1, 2]" and pretty(list(range(30))).count("\n") == 29
    assert pretty((1,)) == "(1,)" and pretty(set()) == "set()" and pretty({3, 1, 2}) == "{1, 2, 3}"


def test_an_object_with_python_s_default_repr_shows_without_object():
    g = _values("y = torch.ones(1, requires_grad=True) + 1\nclass A:\n    pass\na = A()\n")
    assert pretty(g["y"].grad_fn) == "<AddBackward0 at 0x7f0000000010>"
    assert pretty(g["a"]).startswith("<__main__.A at 0x")


def test_a_script_s_function_shows_its_signature_as_ipython_shows_python_s():
    g = _values("def f(a, b=2, *args, c, d=[1], **kw):\n    pass\ng = lambda x, y=1.5: x\n"
                "def k(a, /, b):\n    pass\n")
    assert pretty(g["f"]) == "<function __main__.f(a, b=2, *args, c, d=[1], **kw)>"
    assert pretty([g["g"], g["k"]]) == "[<function __main__.<lambda>(x, y=1.5)>, <function __main__.k(a, /, b)>]"


class _Lines:
    def __init__(self, lines):
        self.lines = lines

    def __repr__(self):
        return "\n".join(self.lines)


def _random_value(r: random.Random, depth: int):
    kind = r.randrange(8 if depth < 4 else 4)
    if kind == 0:
        return r.randrange(-10 ** r.randrange(1, 12), 10 ** r.randrange(1, 12))
    if kind == 1:
        return "s" * r.randrange(0, 30)
    if kind == 2:
        return _Lines(["tensor([[" + "1., " * r.randrange(1, 8) + "],"]
                      + ["        [" + "2., " * r.randrange(1, 8) + "]]"] * r.randrange(0, 3))
    if kind == 3:
        return r.random()
    if kind == 4:
        return tuple(_random_value(r, depth + 1) for _ in range(r.randrange(0, 6)))
    if kind == 5:
        return [_random_value(r, depth + 1) for _ in range(r.randrange(0, 8))]
    if kind == 6:
        return {f"k{i}": _random_value(r, depth + 1) for i in range(r.randrange(0, 5))}
    return {r.randrange(100) for _ in range(r.randrange(0, 12))}


def test_the_layout_is_ipython_s_on_random_containers():
    ipython = pytest.importorskip("IPython.lib.pretty", reason="IPython comes with the jupyter extra")
    for seed in range(300):
        value = _random_value(random.Random(seed), 0)
        assert pretty(value) == ipython.pretty(value), seed
