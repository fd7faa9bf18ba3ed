"""contextlib: contextmanager (in `with`, as a decorator, on methods), nullcontext, suppress and ExitStack, compared
with CPython 3.11; PyTorch's own contexts inside an ExitStack; --timeout through them; nothing behind them reachable."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

IMPORTS = "import contextlib\nfrom contextlib import contextmanager, nullcontext, suppress, ExitStack\n"
TRY = "def t(f):\n    try:\n        print(f())\n    except Exception as e:\n        print(type(e).__name__, e)\n"
CTX = ("@contextmanager\ndef ctx(tag):\n    print('enter', tag)\n    try:\n        yield tag * 2\n    except ValueError as e:\n"
       "        print('caught', e)\n    finally:\n        print('exit', tag)\n")
RES = ("class Res:\n    def __init__(self, n):\n        self.n = n\n    def __enter__(self):\n        print('enter res', self.n)\n"
       "        return self\n    def __exit__(self, *a):\n        print('exit res', self.n, a[0].__name__ if a[0] else None)\n"
       "        return False\n")

SNIPPETS = [
    CTX + TRY + "with ctx(2) as v:\n    print('body', v)\nwith ctx(3):\n    raise ValueError('boom')\n"
    "def kerr():\n    with ctx(4):\n        raise KeyError('k')\nt(kerr)\nprint(type(ctx(1)), ctx.__name__, ctx.__wrapped__.__name__)",
    TRY + "@contextmanager\ndef noyield():\n    if False:\n        yield\ndef f1():\n    with noyield():\n        pass\nt(f1)\n"
    "@contextmanager\ndef twice():\n    yield 1\n    yield 2\ndef f2():\n    with twice():\n        pass\nt(f2)\n"
    "def f3():\n    with twice():\n        raise ValueError('x')\nt(f3)\n"
    "@contextmanager\ndef swallow():\n    try:\n        yield\n    except Exception:\n        pass\n"
    "with swallow():\n    raise RuntimeError('gone')\nprint('after')\n"
    "@contextmanager\ndef reraise():\n    try:\n        yield\n    except Exception as e:\n        raise TypeError('new') from e\n"
    "def f4():\n    with reraise():\n        raise ValueError('old')\nt(f4)\n"
    "@contextmanager\ndef stopit():\n    yield\ndef f9():\n    with stopit():\n        raise StopIteration('s')\nt(f9)\n"
    "@contextmanager\ndef again():\n    try:\n        yield\n    except ValueError:\n        yield\ndef f5():\n"
    "    with again():\n        raise ValueError('y')\nt(f5)",
    CTX + TRY + "@ctx(7)\ndef decorated(x):\n    print('in decorated', x)\n    return x + 1\n"
    "print(decorated(5), decorated(6), decorated.__name__)\ncm = ctx(10)\nwith cm:\n    pass\ndef f8():\n    with cm:\n"
    "        pass\nt(f8)\nt(lambda: ctx(1, 2))\n@contextmanager\ndef gen_with_return():\n    yield 1\n    return 5\n"
    "with gen_with_return() as g:\n    print(g)\nwith ctx(1) as a, ctx(2) as b:\n    print(a, b)",
    TRY + "with nullcontext(5) as n:\n    print(n)\nwith nullcontext() as n:\n    print(n)\n"
    "with suppress(ValueError, KeyError):\n    raise KeyError('s')\ndef f5():\n    with suppress(ValueError):\n"
    "        raise TypeError('not suppressed')\nt(f5)\ndef f6():\n    with suppress(3):\n        raise ValueError('x')\nt(f6)\n"
    "with suppress():\n    print('empty')\nprint(type(nullcontext()), type(suppress()), nullcontext, suppress)",
    CTX + RES + TRY + "with ExitStack() as stack:\n    a = stack.enter_context(ctx(8))\n    stack.callback(print, 'callback', 1)\n"
    "    stack.callback(lambda: print('lambda cb'))\n    print('a', a)\n"
    "s = ExitStack()\ns.enter_context(ctx(9))\ns2 = s.pop_all()\nprint('popped')\ns2.close()\ns.close()\n"
    "def f6():\n    with ExitStack() as st:\n        st.enter_context(3)\nt(f6)\n"
    "def f7():\n    with ExitStack() as st:\n        st.enter_context(suppress(ZeroDivisionError))\n        1 / 0\n"
    "    return 'suppressed by stack'\nt(f7)\n"
    "def f1():\n    with ExitStack() as st:\n        rs = [st.enter_context(Res(i)) for i in range(3)]\n"
    "        print([r.n for r in rs])\n        raise ValueError('v')\nt(f1)\n"
    "def handler(typ, val, tb):\n    print('handler', typ.__name__, val)\n    return True\n"
    "def f2():\n    with ExitStack() as st:\n        st.push(handler)\n        st.push(Res(5))\n        raise KeyError('k')\n"
    "    return 'handled'\nt(f2)\ndef f3():\n    with ExitStack() as st:\n        st.callback(lambda: 1 / 0)\n"
    "        st.callback(print, 'first')\n    return 'no'\nt(f3)\nprint(ExitStack().callback(print) is print, type(ExitStack()))",
    "class Trainer:\n    @contextmanager\n    def phase(self, name):\n        print('begin', name)\n        yield self\n"
    "        print('end', name)\nwith Trainer().phase('val') as tr:\n    print(type(tr).__name__)\n"
    "print(Trainer.phase.__name__, Trainer.phase.__qualname__)\n"
    "try:\n    Trainer().phase()\nexcept TypeError as e:\n    print(e)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_contextlib(snippet):
    source = IMPORTS + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


def test_pytorchs_contexts_inside_an_exit_stack():
    """Checked against PyTorch 2.13: grad mode, inference mode and autocast entered through an ExitStack, and a
    @contextmanager that puts a model in eval mode and restores it."""
    source = ("import torch\n" + IMPORTS + "with ExitStack() as stack:\n    stack.enter_context(torch.no_grad())\n"
              "    x = torch.ones(2, requires_grad=True) * 2\n    print(x.requires_grad, torch.is_grad_enabled())\n"
              "print(torch.is_grad_enabled())\nwith ExitStack() as st:\n"
              "    st.enter_context(torch.autocast('cpu', dtype=torch.bfloat16))\n    a = torch.ones(2, 2)\n"
              "    print((a @ a).dtype)\nprint((a @ a).dtype)\nwith ExitStack() as st:\n"
              "    st.enter_context(torch.enable_grad())\n    st.enter_context(torch.inference_mode())\n"
              "    print(torch.is_inference_mode_enabled())\nprint(torch.is_inference_mode_enabled())\n"
              "m = torch.nn.Linear(2, 2)\n@contextmanager\ndef evaluating(model):\n    was = model.training\n"
              "    model.eval()\n    try:\n        yield model\n    finally:\n        model.train(was)\n"
              "with evaluating(m) as mm:\n    print(mm is m, m.training)\nprint(m.training)\n")
    assert gradcli_output(source) == ("False False\nTrue\ntorch.bfloat16\ntorch.float32\nTrue\nFalse\nTrue False\n"
                                      "True\n")


@pytest.mark.parametrize("source, message", [
    ("@contextmanager\ndef g():\n    if False:\n        yield\nwith g():\n    pass",
     "7:6: RuntimeError: generator didn't yield"),
    ("@contextmanager\ndef g():\n    yield\n    yield\nwith g():\n    pass", "7:6: RuntimeError: generator didn't stop"),
    ("@contextmanager\ndef g():\n    yield\n    x = 1 / 0\nwith g():\n    pass", "6:9: ZeroDivisionError: division by zero"),
    ("with ExitStack() as s:\n    s.enter_context(3)", "4:5: TypeError: 'builtins.int' object does not support the "
                                                        "context manager protocol"),
    ("with contextlib.redirect_stdout(5):\n    print('x')", "4:5: AttributeError: 'int' object has no attribute "
                                                         "'write'"),
    ("contextlib.chdir", "3:1: AttributeError: module 'contextlib' attribute 'chdir' is outside gradcli's language: "
                         "scripts cannot reach files or directories"),
    ("from contextlib import closing", "3:1: NotImplementedError: gradcli does not implement contextlib.closing"),
    ("contextlib.sys", "3:1: AttributeError: module 'contextlib' attribute 'sys' is outside gradcli's language"),
])
def test_errors(source, message):
    assert located_error(IMPORTS + source) == message


ESCAPES = [
    "contextlib.__dict__", "contextlib.__loader__", "ctx(1)._gen", "ctx(1)._func", "ctx(1).__dict__", "ctx(1).__exit__",
    "ctx.__globals__", "ctx.__code__", "ctx.__closure__", "ctx.__wrapped__.__globals__", "ExitStack()._exits",
    "ExitStack()._exit_callbacks", "ExitStack().__exit__", "ExitStack().enter_context.__self__",
    "ExitStack().enter_context.__func__", "ExitStack.__dict__", "ExitStack.__subclasses__", "nullcontext(3)._result",
    "suppress(ValueError)._exceptions", "contextmanager.__globals__", "ExitStack.enter_context",
    "type(ctx(1)).__init__",
]


@pytest.mark.parametrize("expression", ESCAPES)
def test_nothing_behind_them_is_reachable(expression):
    message = located_error(IMPORTS + CTX + f"x = {expression}")
    assert message.endswith("is outside gradcli's language") or message.endswith(
        f"has no attribute '{expression.rpartition('.')[2]}'")       # (what gradcli's classes lack)


def test_gradclis_generators_are_iterated_never_driven():
    """A context made of a generator gradcli made (a module's parameters()) may be entered; throwing into it or
    closing it is the language's refusal, as `g.throw` on it is."""
    source = ("import torch\n" + IMPORTS + "m = torch.nn.Linear(1, 1)\ncm = contextmanager(m.parameters)()\n"
              "with cm as p:\n    raise ValueError('into the generator')\n")
    assert located_error(source).endswith("attribute 'throw' is outside gradcli's language")


@pytest.mark.parametrize("body, printed", [
    # the generator's `finally` runs, as a script's own `try` would; the timeout is never suppressed
    ("@contextmanager\ndef spin():\n    print('start')\n    try:\n        yield\n    finally:\n        print('cleanup')\n"
     "    print('after yield')\nwith suppress(Exception):\n    with spin():\n        while True:\n            pass\n",
     "start\ncleanup\n"),
    ("@contextmanager\ndef forever():\n    while True:\n        pass\n    yield\nwith forever():\n    pass\n", ""),
    ("@contextmanager\ndef swallow():\n    try:\n        yield\n    finally:\n        return\n"
     "with torch.enable_grad(), ExitStack() as s:\n    s.enter_context(swallow())\n    s.enter_context(torch.no_grad())\n"
     "    s.callback(print, 'callback ran')\n    while True:\n        pass\n", "callback ran\n"),
    ("@contextmanager\ndef ctx():\n    yield\n@ctx()\ndef f():\n    while True:\n        pass\nf()\n", ""),
])
def test_the_timeout_stops_code_run_through_them(tmp_path, body, printed):
    import subprocess
    import sys
    script = tmp_path / "spin.grad"
    script.write_text("import torch\n" + IMPORTS + body)
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", "--timeout", "0.5", str(script)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 124 and done.stdout == printed
    assert "TimeoutError: stopped after 0.5 seconds" in done.stderr


def test_contextlib_is_loaded_only_by_scripts_that_use_it():
    import subprocess
    import sys
    code = ("import sys, io\nfrom gradcli.session import Session\nSession(out=io.StringIO()).run_source('with "
            "open:\\n    pass\\n') if False else None\nprint('gradcli.language.pycontextlib' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"


def test_exit_stack_methods_print_as_cpythons():
    """As CPython 3.11 prints them: each named by the class that defines it."""
    import re
    out = gradcli_output(IMPORTS + "s = ExitStack()\nprint(s.enter_context, s.close)\n")
    assert re.sub(r"0x[0-9a-f]+", "0x", out) == (
        "<bound method _BaseExitStack.enter_context of <contextlib.ExitStack object at 0x>> "
        "<bound method ExitStack.close of <contextlib.ExitStack object at 0x>>\n")
