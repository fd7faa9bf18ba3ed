"""try/except/else/finally and raise: Python's semantics compared with CPython; the timeout, Ctrl-C and
exits stay out of every except's reach."""

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.deadline import Deadline, TimedOut
from gradcli.errors import ScriptError
from gradcli.session import Session

SNIPPETS = [
    "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print('caught', e, e.args)",
    "for v in (1, -2):\n    try:\n        if v < 0:\n            raise ValueError(f'negative: {v}')\n"
    "    except ValueError as e:\n        print('bad', e)\n    else:\n        print('ok', v)\n    finally:\n        print('done', v)",
    "def f():\n    for i in range(3):\n        try:\n            if i == 1:\n                return 'returned'\n"
    "        finally:\n            print('finally', i)\nprint(f())",
    "try:\n    {}['k']\nexcept (KeyError, IndexError) as e:\n    print('lookup', repr(e))",
    "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        raise ValueError('wrapped')\nexcept ValueError as e:\n    print(e)",
    "try:\n    raise\nexcept RuntimeError as e:\n    print(e)",
    "try:\n    [][1]\nexcept:\n    print('bare')",
    "def g():\n    try:\n        return 1\n    finally:\n        print('cleanup')\nprint(g())",
    "def h():\n    try:\n        raise KeyError('x')\n    except KeyError:\n        raise\ntry:\n    h()\nexcept LookupError as e:\n    print('reraised', repr(e))",
    "try:\n    int('x')\nexcept ValueError as err:\n    pass\nprint('err' in str(globals) if False else 'name deleted')",
    "n = 0\nwhile True:\n    try:\n        n += 1\n        if n > 2:\n            break\n    finally:\n        print('tick', n)\nprint(n)",
    "try:\n    raise TypeError('t') from ValueError('v')\nexcept TypeError as e:\n    print(e)",
    "for i in range(3):\n    try:\n        continue\n    finally:\n        print('f', i)",
    # __cause__: what `raise ... from` gave, on Python's exceptions and a script's own
    'def parse(s):\n'
    '    try:\n'
    '        return int(s)\n'
    '    except ValueError as e:\n'
    '        raise KeyError(s) from e\n'
    'try:\n'
    "    parse('x')\n"
    'except KeyError as e:\n'
    '    print(repr(e), type(e.__cause__).__name__, e.__cause__)\n'
    'class MyError(Exception):\n'
    '    pass\n'
    'try:\n'
    '    try:\n'
    '        1 / 0\n'
    '    except ZeroDivisionError as z:\n'
    "        raise MyError('mine') from z\n"
    'except MyError as e:\n'
    '    print(e, repr(e.__cause__), isinstance(e.__cause__, ArithmeticError))\n'
    'try:\n'
    "    raise RuntimeError('r') from None\n"
    'except RuntimeError as e:\n'
    '    print(e.__cause__)\n'
    'try:\n'
    '    [][0]\n'
    'except IndexError as e:\n'
    '    print(e.__cause__)',
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_semantics(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


@pytest.mark.parametrize("source, message", [
    ("raise ValueError('boom')", "1:1: ValueError: boom"),
    ("def f():\n    raise KeyError('k')\nf()", "2:5: KeyError: 'k'"),
    ("raise 5", "1:1: TypeError: exceptions must derive from BaseException"),
    ("try:\n    1 / 0\nexcept 5:\n    pass", "3:1: TypeError: catching classes that do not inherit from BaseException "
                                          "is not allowed"),
    ("try:\n    1 / 0\nexcept ValueError as e:\n    pass", "2:5: ZeroDivisionError: division by zero"),
    ("try:\n    x = 1\nexcept ValueError as e:\n    pass\nprint(e)", "5:7: NameError: name 'e' is not defined"),
])
def test_errors_as_python_reports_them(source, message):
    assert located_error(source) == message


@pytest.mark.parametrize("handler", ["except:", "except Exception:", "except (Exception, RuntimeError):"])
def test_no_except_catches_the_timeout(handler):
    source = f"while True:\n    try:\n        while True:\n            pass\n    {handler}\n        pass\n"
    with pytest.raises(ScriptError) as info:
        with Deadline(0.3):
            Session().run_source(source)
    assert isinstance(info.value, TimedOut)
