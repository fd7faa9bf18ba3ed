"""str's methods, str.format / format_map and `%` formatting with CPython's results and messages; format
fields read attributes only through the allow-list, and widths and results stay within the string bound.
Also the builtins around them (print's flush, min/max's key and default, divmod, pow, sorted, reversed,
any, all)."""

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.engine.state import STATE

SNIPPETS = [
    # str.format: positions, names, automatic numbering, items, attributes, conversions, specs
    "print('{} + {} = {}'.format(1, 2, 3), '{1}{0}{1}'.format('a', 'b'), '{x}-{y}'.format(x=1, y='z'))",
    "print('{0[1]} {0[-1]}'.format([1, 2, 3]) if False else '{0[1]} {d[k]}'.format([1, 2], d={'k': 'v'}))",
    "print('{0.real} {0.imag} {x.start}'.format(5, x=range(2, 9)), '{.real}'.format(2.5))",
    "print('{!r} {!s} {!a} {!r:>8}'.format('é', 'b', 'é', 'c'))",
    "print('{:>8.3f}|{:<6}|{:^7}|{:+d}|{:08.2e}|{:,}|{:_x}|{:%}'.format(3.14159, 'ab', 'mid', 5, 1234.5, 10**6, 255, 0.25))",
    "print('{0:{1}.{2}f}'.format(3.14159, 10, 2), '{:{}}|'.format('x', 5), '{:*^{w}}'.format('c', w=7))",
    "print('{{}} {{{}}}'.format(1), 'no fields'.format(1, 2), ''.format())",
    "print('{:b} {:o} {:X} {:#x} {:c}'.format(10, 8, 255, 255, 65), '{:.2%}'.format(1 / 3))",
    "print('epoch {:3d}: loss {:.4f}'.format(7, 0.123456), 'lr={lr:g}'.format(lr=1e-3))",
    "print('{name}: {n:.3f}'.format_map({'name': 'loss', 'n': 1.23456}), '{a}'.format_map({'a': [1]}))",
    "print(str.format('{}-{}', 1, 2), list(map(str.upper, ['a', 'b'])), str.join(',', 'abc'))",
    "print('{0}'.format, str.format('{0.real}', 4))",
    # % formatting
    "print('%d %s %r %.2f %5.1f %-4d| %x %o %e %%' % (1, 'a', 'b', 3.14159, 2.5, 7, 255, 8, 12345.678))",
    "print('%(name)s=%(v).3f' % {'name': 'w', 'v': 0.5}, '%*d|%-*d|' % (5, 1, 4, 2), '%s' % [1, 2], '%c' % 65)",
    # the other methods
    "print('a\\tbc\\td'.expandtabs(), 'a\\tb'.expandtabs(4), 'x\\ty'.expandtabs(tabsize=1))",
    "print('x1'.isidentifier(), '1x'.isidentifier(), 'def'.isidentifier(), 'ab'.isprintable(), 'a\\n'.isprintable())",
    "print('abc'.isascii(), 'é'.isascii(), ''.isascii(), '٣'.isdecimal(), '²'.isdigit(), '½'.isnumeric())",
    "t = str.maketrans('abc', 'xyz', 'd')\nprint('abcd'.translate(t), 'hello'.translate({ord('l'): None}), "
    "str.maketrans({'a': 'b'}))",
    "print('a\\nb\\r\\nc'.splitlines(), 'a\\nb\\r\\nc\\n'.splitlines(keepends=True), 'x'.splitlines(True))",
    "print('Hello'.casefold(), 'ab'.center(6, '*'), 'hello world'.title(), 'a,b,,c'.split(','), 'a b'.rsplit(None, 1))",
    "print('abc'.removeprefix('a'), 'abc'.removesuffix('c'), 'a-b-c'.rpartition('-'), 'ab'.zfill(5), 'x'.ljust(3) + '|')",
    "from collections import defaultdict\nprint('abc'.translate(defaultdict(lambda: 'zz', {98: None})), "
    "'abc'.translate('xyz'), 'abc'.translate([0] * 98 + [66]))",
    "print((1, 2, 2, 3).count(2), (1, 2, 3).index(3), (1, 2, 3, 2).index(2, 2))",
    # the builtins around them
    "print(1, 2, sep='-', end='!\\n', flush=True)\nprint('x', flush=False)",
    "print(min([3, 1, 2], key=lambda v: -v), max('abc', key=ord), min([], default=0), max([], key=abs, default=None))",
    "print(min(3, 1, 2, key=lambda v: (v - 2) ** 2), max(('a', 2), ('b', 1), key=lambda p: p[1]))",
    "print(divmod(7, 2), divmod(-7, 2), divmod(7.5, 2), pow(2, 10), pow(3, 4, 5), pow(2, -1, 5), pow(2.0, 0.5))",
    "print(sorted([3, 1, 2], reverse=True), sorted('bca', key=str.upper, reverse=True), list(reversed((1, 2, 3))))",
    "print(list(reversed(range(3))), list(reversed('ab')), any([]), all([]), any(x > 2 for x in [1, 3]), all([1, 0]))",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_results(snippet):
    source = snippet + "\n"
    assert gradcli_output(source).split(" at 0x")[0] == cpython_output(source).split(" at 0x")[0]


def test_format_with_tensors_as_pytorch_prints_them():
    source = ("import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x ** 2\ny.backward()\n"
              "print('grad: {}, {:.3f}, {g}'.format(x.grad, x.grad.item(), g=x.grad))\n"
              "print('%s %.1f' % (y, y.item()))\n")
    assert gradcli_output(source) == ("grad: 4.0, 4.000, 4.0\n"
                                      "tensor(4., grad_fn=<PowBackward0>) 4.0\n")


@pytest.mark.parametrize("source, message", [
    ("'{'.format(1)", "1:1: ValueError: Single '{' encountered in format string"),
    ("'}'.format(1)", "1:1: ValueError: Single '}' encountered in format string"),
    ("'{0'.format(1)", "1:1: ValueError: expected '}' before end of string"),
    ("'{1}'.format(1)", "1:1: IndexError: Replacement index 1 out of range for positional args tuple"),
    ("'{}'.format()", "1:1: IndexError: Replacement index 0 out of range for positional args tuple"),
    ("'{x}'.format(1)", "1:1: KeyError: 'x'"),
    ("'{}{0}'.format(1, 2)", "1:1: ValueError: cannot switch from automatic field numbering to manual field "
                             "specification"),
    ("'{0}{}'.format(1, 2)", "1:1: ValueError: cannot switch from manual field specification to automatic field "
                             "numbering"),
    ("'{!x}'.format(1)", "1:1: ValueError: Unknown conversion specifier x"),
    ("'{0:{1:{2}}}'.format(1, 2, 3)", "1:1: ValueError: Max string recursion exceeded"),
    ("'{:d}'.format('a')", "1:1: ValueError: Unknown format code 'd' for object of type 'str'"),
    ("'{0.nothing}'.format(1)", "1:1: AttributeError: 'int' object has no attribute 'nothing'"),
    ("'{0[5]}'.format([1])", "1:1: IndexError: list index out of range"),
    ("'{0.}'.format(1)", "1:1: ValueError: Empty attribute in format string"),
    ("'{}'.format_map({})", "1:1: ValueError: Format string contains positional fields"),
    ("'{a}'.format_map({})", "1:1: KeyError: 'a'"),
    ("'{a}'.format_map(1)", "1:1: TypeError: 'int' object is not subscriptable"),
    ("'%d' % 'a'", "1:1: TypeError: %d format: a real number is required, not str"),
    ("'%s %s' % (1,)", "1:1: TypeError: not enough arguments for format string"),
    ("'a'.encode()", "1:1: AttributeError: 'str' object attribute 'encode' is outside gradcli's language"),
    ("'a'.translate(1)", "1:1: TypeError: 'int' object is not subscriptable"),
    ("min([])", "1:1: ValueError: min() arg is an empty sequence"),
    ("max(1, 2, default=0)", "1:1: TypeError: Cannot specify a default for max() with multiple positional arguments"),
    ("divmod(1, 0)", "1:1: ZeroDivisionError: integer division or modulo by zero"),
    ("pow(2, 3, 0)", "1:1: ValueError: pow() 3rd argument cannot be 0"),
    ("print(1, flush=1, bad=2)", "1:1: TypeError: 'bad' is an invalid keyword argument for print()"),
])
def test_errors_as_cpython_reports_them(source, message):
    assert located_error(source) == message


@pytest.mark.parametrize("source, message", [
    # format fields read attributes through the language's allow-list
    ("'{x.__reduce__}'.format(x=1)", "1:1: AttributeError: 'int' object attribute '__reduce__' is outside gradcli's "
                                    "language"),
    ("def f():\n    pass\n'{0.__globals__}'.format(f)", "3:1: AttributeError: 'function' object attribute "
                                                        "'__globals__' is outside gradcli's language"),
    ("def f():\n    pass\n'{0.globals}'.format(f)", "3:1: AttributeError: 'function' object attribute 'globals' is "
                                                    "outside gradcli's language"),
    ("'{0.__self__}'.format(len)", "1:1: AttributeError: 'builtin_function_or_method' object attribute '__self__' "
                                   "is outside gradcli's language"),
    ("'{0.real.__reduce__.__mro__}'.format(1)", "1:1: AttributeError: 'int' object attribute '__reduce__' is outside "
                                               "gradcli's language"),
    ("'{0.fn}'.format(sorted)", "1:1: AttributeError: 'builtin_function_or_method' object has no attribute 'fn'"),
    ("import torch\n'{0.numpy}'.format(torch.ones(1))", "2:1: AttributeError: 'Tensor' object attribute 'numpy' is "
                                                        "outside gradcli's language: scripts cannot reach numpy "
                                                        "arrays (use .tolist() or .item())"),
    ("import math\n'{m.__loader__}'.format_map({'m': math})", "2:1: AttributeError: module 'math' attribute "
                                                             "'__loader__' is outside gradcli's language"),
    ("'{0.__class__}'.format_map", None),
    ("str.format('{0.__reduce__}', 1)", "1:1: AttributeError: 'int' object attribute '__reduce__' is outside gradcli's "
                                       "language"),
    ("'%(__class__)s' % {}", "1:1: KeyError: '__class__'"),
    ("getattr('{0.__reduce__}', 'format')(1)", "1:1: AttributeError: 'int' object attribute '__reduce__' is "
                                                  "outside gradcli's language"),
    # widths, precisions and results within the string bound
    ("'{:99999999999}'.format(1)", "1:1: MemoryError: format width or precision 99999999999 is too large (gradcli "
                                   "allows at most {items})"),
    ("'{:.99999999999f}'.format(1.0)", "1:1: MemoryError: format width or precision 99999999999 is too large "
                                       "(gradcli allows at most {items})"),
    ("'{0:{1}}'.format(1, 10**9)", "1:1: MemoryError: format width or precision 1000000000 is too large (gradcli "
                                   "allows at most {items})"),
    ("'{v:>{w}}'.format_map({'v': 1, 'w': 10**9})", "1:1: MemoryError: format width or precision 1000000000 is too large "
                                           "(gradcli allows at most {items})"),
    ("'%99999999999d' % 1", "1:1: MemoryError: format width or precision 99999999999 is too large (gradcli allows "
                            "at most {items})"),
    ("'%*d' % (10**9, 1)", "1:1: MemoryError: format width or precision 1000000000 is too large (gradcli allows at "
                           "most {items})"),
    ("s = 'a' * 60000\n('{0}' * 2).format(s)", "2:1: MemoryError: a str of more than {items} items is too large "
                                               "(gradcli allows at most {items})"),
    ("s = 'a' * 60000\n('%s' * 2) % (s, s)", "2:1: MemoryError: a str of 120004 items is too large (gradcli allows "
                                             "at most {items})"),
    ("('a' * 1000).translate({97: 'b' * 1000})", "1:1: MemoryError: a str of 1000000 items is too large (gradcli "
                                                  "allows at most {items})"),
    ("from collections import defaultdict\n('ab' * 500).translate(defaultdict(lambda: 'c' * 1000))",
     "2:1: MemoryError: a str of 1000000 items is too large (gradcli allows at most {items})"),
    ("'ab'.expandtabs(10**12)", "1:1: OverflowError: Python int too large to convert to C int"),
    ("('\\t' * 1000).expandtabs(10**6)", "1:1: MemoryError: a str of 1000000000 items is too large (gradcli allows "
                                         "at most {items})"),
])
def test_formatting_is_fenced(source, message):
    STATE.max_items, before = 10 ** 5, STATE.max_items
    try:
        if message is None:
            gradcli_output(source + "\n")
        else:
            assert located_error(source) == message.format(items=STATE.max_items)
    finally:
        STATE.max_items = before
