"""Python's traceback in the language: what CPython 3.11 prints for the same script, byte for byte (the frames,
their lines and position markers, chained exceptions, the message line), on the script's streams; built from
gradcli's record of the exception, so no traceback, frame or file reaches the script."""

import io
import re
import subprocess
import sys

import pytest

from conftest import both_as_file, gradcli_as_file
from gradcli.session import Session


def both(source: str, tmp_path) -> tuple:
    """(gradcli's (stdout, stderr), CPython's) for the script, both run as the same file."""
    return both_as_file(source, tmp_path / "train_tb.py")


SHOW = "import traceback, sys\ndef show(f):\n    try:\n        f()\n    except Exception:\n        traceback.print_exc()\n"

SNIPPETS = [
    # nested calls, a method, a property, a lambda, a comprehension, a generator expression, a generator function
    SHOW + "def f(x):\n    return 1 / x\ndef g(x):\n    return f(x) + 1\nshow(lambda: g(0))\n"
    "class Box:\n    def __init__(self, v):\n        self.v = v\n    def __getitem__(self, k):\n        return self.v[k]\n"
    "    @property\n    def p(self):\n        return self.v.nope\n    def twice(self):\n        return self\n"
    "show(lambda: Box([1]).twice().p)\nshow(lambda: Box({})['q'])\n"
    "show(lambda: [1 / v for v in [1, 0]])\nshow(lambda: sum(1 / v for v in [1, 0]))\n"
    "show(lambda: {k: 1 / k for k in [0]})\nshow(lambda: sorted([3, 1], key=lambda v: v / 0))\n"
    "def gen():\n    yield 1\n    raise ValueError('in gen')\nshow(lambda: list(gen()))\n"
    "def outer():\n    def inner():\n        return undefined_q\n    return inner()\nshow(outer)\n"
    "import contextlib, functools\n@contextlib.contextmanager\ndef ctx():\n    yield 1\ndef w():\n    with ctx() as v:\n"
    "        v.nope\nshow(w)\ndef stacked():\n    with contextlib.ExitStack() as stack:\n        a = stack.enter_context(ctx())\n"
    "        stack.callback(lambda: None)\n        a.other\nshow(stacked)\ndef deco(f):\n    @functools.wraps(f)\n    def wrapper(*a):\n        return f(*a)\n"
    "    return wrapper\n@deco\ndef wrapped():\n    return {}['k']\nshow(wrapped)\nclass Body:\n    try:\n"
    "        y = 1 / 0\n    except ZeroDivisionError:\n        traceback.print_exc()\n"
    "def caught():\n    try:\n        return [1 / v for v in [0]]\n    except ZeroDivisionError as e:\n        return e\n"
    "traceback.print_exception(caught())\n",
    # each marker: a binary operation, a subscript, an attribute, a call in a chain, a unary operation, a
    # comparison, an assert's test, an augmented assignment, an operation over two lines, a parenthesized one,
    # a line with a wide character, a raise (the whole line: no marker)
    SHOW + "x = {'a': [1, 2]}\nshow(lambda: x['a'][5])\nshow(lambda: x['b'])\nshow(lambda: x.nope)\n"
    "show(lambda: 'abc'.upper().nope())\nshow(lambda: str(1).zfill('x').upper())\nshow(lambda: -'s')\n"
    "show(lambda: 1 < 'x')\ndef a():\n    assert 1 == 2, 'nope'\nshow(a)\ndef b():\n    n = 1\n    n += 's'\nshow(b)\n"
    "def c():\n    return (1 +\n            's')\nshow(c)\ndef d():\n    return (  1  +  's' )\nshow(d)\n"
    "def asserts():\n    assert x['a'][0] == 1 and (x['a'][1]\n                               == 3)\nshow(asserts)\n"
    "def e():\n    return 'é' + x['a'][0]\nshow(e)\ndef h():\n    return x['a'] [ 3 ]\nshow(h)\n"
    "def r():\n    raise KeyError('k')\nshow(r)\nshow(lambda: len(5))\nshow(lambda: int('x'))\n"
    "show(lambda: {[]: 1})\nshow(lambda: {[1], 2})\nshow(lambda: f\"{1:d}\" + f\"{'s':d}\")\nshow(lambda: [*5])\n"
    "show(lambda: {**[]})\ndef u():\n    [a, b] = [1]\nshow(u)\ndef dl():\n    del gone\nshow(dl)\n"
    "def st():\n    t = (1, 2)\n    t[0] = 1\nshow(st)\n",
    # chained exceptions: raise from, the implicit context, from None, a bare re-raise, a finally
    "import traceback\ntry:\n    try:\n        {}['a']\n    except KeyError as e:\n        raise ValueError('bad') from e\n"
    "except ValueError:\n    traceback.print_exc()\ntry:\n    try:\n        [1][2]\n    except IndexError:\n"
    "        undefined_nm\nexcept NameError:\n    traceback.print_exc()\n    traceback.print_exc(chain=False)\n"
    "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        raise RuntimeError('quiet') from None\n"
    "except RuntimeError:\n    traceback.print_exc()\ndef again():\n    try:\n        1 / 0\n    except ZeroDivisionError:\n"
    "        raise\ntry:\n    again()\nexcept ZeroDivisionError:\n    traceback.print_exc()\n"
    "def fin():\n    try:\n        {}['x']\n    finally:\n        [][0]\ntry:\n    fin()\nexcept IndexError:\n"
    "    traceback.print_exc()\n"
    # `raise e` of an exception that has frames already: a new entry for the raise, then its frames
    "def f():\n    return {}['k']\ntry:\n    try:\n        f()\n    except KeyError as e:\n        err = e\n    raise err\n"
    "except KeyError:\n    traceback.print_exc()\ndef g():\n    try:\n        f()\n    except KeyError as e:\n"
    "        return e\ndef h():\n    raise g()\ntry:\n    h()\nexcept KeyError:\n    traceback.print_exc()\n"
    "try:\n    try:\n        f()\n    except KeyError as e:\n        raise e\nexcept KeyError:\n    traceback.print_exc()\n",
    # the module's functions, their arguments and errors, streams, the message line
    "import traceback, sys, io\ndef inner():\n    raise TypeError('deep')\ndef middle():\n    inner()\n"
    "try:\n    middle()\nexcept TypeError as e:\n    print(repr(traceback.format_exc()))\n"
    "    traceback.print_exc(file=sys.stdout)\n    traceback.print_exception(e)\n"
    "    print(traceback.format_exception(e, limit=1))\n    print(traceback.format_exception(e, limit=-1))\n"
    "    print(traceback.format_exception(type(e), e, None))\n    print(traceback.format_exception(None, e, None))\n"
    "    print(traceback.format_exception_only(type(e), e), traceback.format_exception_only(e))\n"
    "    buf = io.StringIO()\n    traceback.print_exception(e, file=buf, limit=0)\n    print(repr(buf.getvalue()))\n"
    "    traceback.print_exc(limit=2)\n"
    "print(repr(traceback.format_exc()), traceback.format_exception(None), traceback.format_exception_only(None))\n"
    "traceback.print_exc()\nfor args in [(ValueError, ValueError('x'), 5), (ValueError,), ('x',), "
    "(ValueError, ValueError('x')), (None, 'x', None)]:\n    try:\n        traceback.format_exception(*args)\n"
    "    except Exception as ex:\n        print(type(ex).__name__, ex)\n"
    "class MyError(Exception):\n    pass\nclass Outer:\n    class Inner(Exception):\n        pass\n"
    "class Bad(Exception):\n    def __str__(self):\n        raise ValueError\n"
    "for e in [KeyError('x'), KeyError(), MyError(), MyError('m'), Outer.Inner('i'), Bad(), ValueError(''), "
    "OSError(2, 'gone'), SystemExit(3)]:\n    print(traceback.format_exception_only(e))\n"
    "try:\n    raise MyError('mine')\nexcept MyError:\n    traceback.print_exc()\n",
    # the stack, and a recursion's repeated lines
    "import traceback, sys\ndef h():\n    print(''.join(traceback.format_stack()), end='')\n"
    "    traceback.print_stack(file=sys.stdout)\n    traceback.print_stack(limit=1)\nh()\n"
    "def rec(n):\n    return rec(n + 1) if n < 10 else 1 / 0\ntry:\n    rec(0)\nexcept ZeroDivisionError:\n"
    "    traceback.print_exc()\n",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_traceback(snippet, tmp_path):
    got, expected = both(snippet, tmp_path)
    assert got == expected


def test_a_deep_recursion_is_bounded_with_its_repeats_counted(tmp_path):
    """CPython's rule: more than three frames of one line are counted. gradcli's recursion limit counts the calls
    of the script's functions (CPython's counts the module's frame too): one repeat more."""
    source = ("import sys, traceback\nsys.setrecursionlimit(60)\ndef rec(n):\n    return rec(n + 1)\ntry:\n    rec(0)\n"
              "except RecursionError:\n    traceback.print_exc()\n")
    (out, err), (_, expected) = both(source, tmp_path)
    assert "  [Previous line repeated 56 more times]\n" in expected
    assert err == expected.replace("repeated 56 more", "repeated 57 more")
    out, err = gradcli_as_file(source.replace("sys.setrecursionlimit(60)", "pass"), tmp_path / "t.py")
    assert "  [Previous line repeated 297 more times]\n" in err and len(err.splitlines()) == 14


def test_the_file_name_of_c_and_stdin_has_no_source_line(tmp_path):
    import launcher
    source = "import traceback\ndef f():\n    return 1 / 0\ntry:\n    f()\nexcept Exception:\n    traceback.print_exc()\n"
    for args, given in [(["-c", source], None), (["run", "-"], source)]:
        p = launcher.run(args, input=given, timeout=60)
        cpython = [sys.executable, "-c", source] if given is None else [sys.executable, "-"]
        expected = subprocess.run(cpython, input=given, capture_output=True, text=True, timeout=60)
        assert (p.returncode, p.stdout, p.stderr) == (expected.returncode, expected.stdout, expected.stderr)
        assert '  File "<' in p.stderr


def test_gradcli_run_prints_what_cpython_prints(tmp_path):
    """A whole run: the script's path made absolute, as CPython names it; the run goes on after each."""
    import launcher
    source = ("import traceback\nfor i in [1, 0, 2]:\n    try:\n        print(10 / i)\n    except ZeroDivisionError:\n"
              "        traceback.print_exc()\nprint('done')\n")
    (tmp_path / "run_tb.py").write_text(source)
    p = launcher.run(["run", "run_tb.py"], cwd=tmp_path, timeout=60)
    expected = subprocess.run([sys.executable, "run_tb.py"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, expected.stdout, expected.stderr)
    assert f'File "{tmp_path / "run_tb.py"}", line 4, in <module>' in p.stderr


def test_pytorchs_errors_end_at_the_scripts_frame(tmp_path):
    """An error of the engine: the script's frames (PyTorch's own Python files, which CPython shows under a call
    of a module, are not gradcli's); the message is PyTorch's (from torch 2.13)."""
    source = ("import torch, traceback\ndef step(a, b):\n    return (a @ b).sum()\ntry:\n"
              "    step(torch.ones(2, 3), torch.ones(2, 3))\nexcept RuntimeError:\n    traceback.print_exc()\n")
    out, err = gradcli_as_file(source, tmp_path / "t.py")
    path = tmp_path / "t.py"
    assert out == ""
    assert err == (f'Traceback (most recent call last):\n  File "{path}", line 5, in <module>\n'
                   "    step(torch.ones(2, 3), torch.ones(2, 3))\n"
                   f'  File "{path}", line 3, in step\n    return (a @ b).sum()\n            ~~^~~\n'
                   "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)\n")
    # a module's forward: CPython shows torch's module.py (_wrapped_call_impl, _call_impl) and linear.py frames
    # between these
    source = ("import torch, traceback\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.fc = torch.nn.Linear(3, 2)\n    def forward(self, x):\n        return self.fc(x).relu()\n"
              "try:\n    Net()(torch.ones(2, 4))\nexcept RuntimeError:\n    traceback.print_exc()\n")
    out, err = gradcli_as_file(source, path)
    assert err == (f'Traceback (most recent call last):\n  File "{path}", line 9, in <module>\n'
                   "    Net()(torch.ones(2, 4))\n"
                   f'  File "{path}", line 7, in forward\n    return self.fc(x).relu()\n           ^^^^^^^^^^\n'
                   "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x4 and 3x2)\n")


ESCAPES = [
    # what CPython reads a traceback from is not the script's to give
    ("traceback.print_exception(type(e), e, e)", "AttributeError: 'ZeroDivisionError' object has no attribute "
                                                 "'tb_frame'"),
    ("traceback.format_exception(e, e, None)[0].__class__.__subclasses__()",
     "AttributeError: 'type' object attribute '__subclasses__' is outside gradcli's language"),
    ("traceback.format_exc.__code__", "AttributeError: 'function' object has no attribute '__code__'"),
    ("traceback.print_exc.__self__", "AttributeError: 'function' object attribute '__self__' is outside gradcli's "
                                   "language"),
    ("traceback.__dict__", "AttributeError: module 'traceback' attribute '__dict__' is outside gradcli's language"),
    ("traceback.format_stack(f=1)", "TypeError: traceback.format_stack() of a frame is outside gradcli's language: "
                                    "scripts hold no frame objects"),
    ("traceback.extract_stack()", "NotImplementedError: gradcli does not implement traceback.extract_stack"),
]


@pytest.mark.parametrize("attempt, expected", ESCAPES)
def test_no_path_to_frames_code_or_files(attempt, expected):
    out, err = io.StringIO(), io.StringIO()
    source = f"import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    {attempt}\n"
    try:
        Session(out=out, err=err).run_source(source, "<string>")
    except Exception as error:      # the script's error, as gradcli reports it
        text = str(error)
    else:
        text = ""
    assert expected in text, text


def test_a_script_that_prints_no_traceback_loads_no_module(tmp_path):
    """traceback's module is made on its import only, and never reads a file."""
    out, _ = gradcli_as_file("import traceback\ntry:\n    {}['k']\nexcept KeyError:\n    print(traceback.format_exc()"
                      ".splitlines()[-1])\n", tmp_path / "nowhere" / "t.py")
    assert out == "KeyError: 'k'\n"


def test_help_describes_every_name_of_the_module():
    from conftest import gradcli_output
    from gradcli.language import stdlib
    names = sorted(stdlib.TRACEBACK.members)
    out = gradcli_output("import traceback\n" + "".join(f"help(traceback.{n})\n" for n in names))
    assert [line.split("(")[0] for line in out.splitlines() if not line.startswith(" ")] == \
        [f"traceback.{n}" for n in names]
    assert re.search(r"module traceback\n    Python's traceback module", gradcli_output("import traceback\n"
                                                                                       "help(traceback)\n"))
