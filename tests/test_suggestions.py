"""Python's "Did you mean" after an unknown name or attribute (gradcli/language/suggestions.py): the choice
checked against CPython's own (its error display, which computes it in C), and the reports of scripts
against what PyTorch 2.13 under CPython 3.11 prints."""

from __future__ import annotations

import contextlib
import io
import random
import re
import sys

import pytest

from conftest import run_script
from gradcli.language import suggestions

SHOWN = re.compile(r"Did you mean: '(.*)'\?$")


def _cpython_choice(names: list, wrong: str) -> str | None:
    """What CPython's error display suggests for attribute `wrong` of an object whose dir() is `names`."""
    class Listed:
        def __dir__(self):
            return names
    try:
        getattr(Listed(), wrong)
    except AttributeError as e:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            sys.__excepthook__(type(e), e, None)
        found = SHOWN.search(err.getvalue().strip())
        return found.group(1) if found else None
    raise AssertionError("no AttributeError")


def _mutations(rng: random.Random, name: str) -> str:
    letters = "abcdefgxyzABCXYZ_0é"
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(name) + 1)
        kind = rng.randrange(5)
        if kind == 0:
            name = name[:i] + rng.choice(letters) + name[i:]
        elif kind == 1 and len(name) > 1:
            name = name[:i] + name[i + 1:]
        elif kind == 2 and i < len(name):
            name = name[:i] + rng.choice(letters) + name[i + 1:]
        elif kind == 3 and i < len(name):
            name = name[:i] + name[i].swapcase() + name[i + 1:]
        elif i + 1 < len(name):
            name = name[:i] + name[i + 1] + name[i] + name[i + 2:]
    return name


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the rules of CPython 3.11, the oracle's Python")
@pytest.mark.parametrize("seed", range(4))
def test_the_choice_is_cpythons(seed):
    rng = random.Random(seed)
    words = ["weight", "bias", "grad", "grad_fn", "requires_grad", "size", "shape", "numel", "backward", "Linear",
             "relu", "relu_", "relu6", "apple", "alpha", "learning_rate", "lr", "None", "x", "xs", "éta", "a" * 45,
             "prefix_" + "b" * 38 + "_suffix", "Adam", "AdamW", "zero_grad", "step", "item", "tolist"]
    for _ in range(150):
        names = rng.sample(words, rng.randint(1, len(words)))
        if rng.random() < 0.05:
            names = names + [f"n{i}" for i in range(760)]       # past the 750 names CPython reads
        wrong = _mutations(rng, rng.choice(names))
        # dir() lists the names sorted
        assert suggestions.closest(sorted(names), wrong) == _cpython_choice(names, wrong), (names, wrong)


# What PyTorch 2.13 under CPython 3.11 prints for each (its error's last line).
CASES = {
    "apple = 1\nprint(appel)": "NameError: name 'appel' is not defined. Did you mean: 'apple'?",
    "print(nope)": "NameError: name 'nope' is not defined. Did you mean: 'None'?",
    "x = torch.ones(2)\nprint(x.sizee)": "AttributeError: 'Tensor' object has no attribute 'sizee'. Did you mean: 'size'?",
    "print(torch.nn.Lineer)":
        "AttributeError: module 'torch.nn' has no attribute 'Lineer'. Did you mean: 'Linear'?",
    "import torch.nn.functional as F\nprint(F.relue)":
        "AttributeError: module 'torch.nn.functional' has no attribute 'relue'. Did you mean: 'relu'?",
    "print(torch.optim.Adamm)": "AttributeError: module 'torch.optim' has no attribute 'Adamm'. Did you mean: 'Adam'?",
    "torch.manual_sed(0)": "AttributeError: module 'torch' has no attribute 'manual_sed'",      # 1495 names: none
    "print(torch.nn.Parameter(torch.ones(1)).gard)": "AttributeError: 'Parameter' object has no attribute 'gard'",
    "[1].apend(2)": "AttributeError: 'list' object has no attribute 'apend'. Did you mean: 'append'?",
    "{}.iteritems()": "AttributeError: 'dict' object has no attribute 'iteritems'",
    "'a'.startwith('a')": "AttributeError: 'str' object has no attribute 'startwith'. Did you mean: 'startswith'?",
    "torch.ones(2).backwrd()":
        "AttributeError: 'Tensor' object has no attribute 'backwrd'. Did you mean: 'backward'?",
    "print(torch.Size([1]).numell())":
        "AttributeError: 'torch.Size' object has no attribute 'numell'. Did you mean: 'numel'?",
    "import math\nprint(math.sqr(2))": "AttributeError: module 'math' has no attribute 'sqr'. Did you mean: 'sqrt'?",
    "class Net:\n    def __init__(self):\n        self.weight = 1\n    def forward(self):\n        return self.weigth\n"
    "Net().forward()": "AttributeError: 'Net' object has no attribute 'weigth'. Did you mean: 'weight'?",
    "class A:\n    counter = 0\nprint(A.countr)":
        "AttributeError: type object 'A' has no attribute 'countr'. Did you mean: 'counter'?",
    "def f(alpha, beta):\n    gamma = 1\n    return alpah + gamma\nf(1, 2)":
        "NameError: name 'alpah' is not defined. Did you mean: 'alpha'?",
    "def f(items):\n    return lenn(items)\nf([1])": "NameError: name 'lenn' is not defined. Did you mean: 'len'?",
    "x = [i for i in rang(3)]": "NameError: name 'rang' is not defined. Did you mean: 'range'?",
    "lr = 0.1\nfor step in range(2):\n    loss = step * l": "NameError: name 'l' is not defined. Did you mean: 'lr'?",
    "class E(Exception):\n    pass\nE().agrs": "AttributeError: 'E' object has no attribute 'agrs'",
}


@pytest.mark.parametrize("source", list(CASES))
def test_a_scripts_report_suggests_what_python_does(source):
    result = run_script("import torch\n" + source)
    assert result.error is not None
    headline = result.error.headline()
    assert headline.split(": ", 1)[1] == CASES[source]
    assert "Did you mean" not in result.error.message      # the exception's str() is Python's own


def test_a_caught_error_has_no_suggestion_in_its_text():
    result = run_script("apple = 1\ntry:\n    appel\nexcept NameError as e:\n    print(e)\n")
    assert result.error is None and result.out == "name 'appel' is not defined\n"


def test_a_builtin_outside_the_language_gets_no_suggestion():
    result = run_script("eval('1')")
    assert result.error.suggestion is None
    assert "outside gradcli's language" in result.error.message
