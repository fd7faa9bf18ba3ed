"""Python's re and unicodedata in the language (gradcli.language.pyre): CPython's results, reprs and messages, errors
at the script's positions, what they build refused past the bounds before it is built, catastrophic patterns
stopped by --timeout, the parser's warnings given as the script's, and help for every name."""

import io
import sys

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli import deadline
from gradcli.engine.state import STATE
from gradcli.errors import ScriptError
from gradcli.session import Session
import launcher

TRY = "def t(f):\n    try:\n        print(repr(f()))\n    except Exception as e:\n        print(type(e).__name__, e)\n"

SNIPPETS = [
    # the tutorials' normalisation and tokenisers (PyTorch's seq2seq, Raschka's LLM book)
    "import re, unicodedata\n"
    "def unicode_to_ascii(s):\n    return ''.join(c for c in unicodedata.normalize('NFD', s)\n"
    "                   if unicodedata.category(c) != 'Mn')\n"
    "def normalize_string(s):\n    s = unicode_to_ascii(s.lower().strip())\n    s = re.sub(r'([.!?])', r' \\1', s)\n"
    "    s = re.sub(r'[^a-zA-Z!?]+', r' ', s)\n    return s.strip()\n"
    "print(normalize_string(' Ça va?  Très bien!  '), normalize_string('Je suis désolé...'))\n"
    "text = 'Hello, world. Is this-- a test? \"Yes\" (it is)!'\n"
    "toks = re.split(r'([,.:;?_!\"()\\']|--|\\s)', text)\nprint(toks)\nprint([t.strip() for t in toks if t.strip()])\n"
    "print(re.sub(r'\\s+([,.?!\"()\\'])', r'\\1', ' '.join(t for t in toks if t.strip())))\n"
    "print(re.findall(r\"\\w+|[^\\w\\s]\", \"Don't stop-believing!\"), re.split(r'\\s+', '  a b  c '))\n",
    # compile, flags, Pattern's attributes and methods with pos and endpos, reprs
    "import re\np = re.compile(r'(?P<word>\\w+)\\s+(?P<num>\\d+)', re.I | re.M)\n"
    "print(p, repr(p), p.pattern, p.flags, p.groups, p.groupindex, dict(p.groupindex))\n"
    "print(re.I, re.M, re.S, re.X, re.A, re.U, re.L, re.NOFLAG, re.I | re.M | re.S, int(re.X), re.IGNORECASE is re.I)\n"
    "print(re.compile('a+'), re.compile('a', re.I), re.compile('x' * 300), re.compile('a\\nb', re.X | re.S))\n"
    "print(p.match('foo 1'), p.match('  foo 1'), p.match('  foo 1', 2), p.fullmatch('foo 1 '), p.fullmatch('foo 1 ', 0, 5))\n"
    "print(p.search('xx foo 7', 3), p.search('xx foo 7', 0, 4), p.findall('a 1 b 2', 0, 5), p.findall('a 1 b 2', -5, 100))\n"
    "print([m.span() for m in p.finditer('a 1 b 2 c 3', 2)], p.split('a 1 b 2 c'), p.sub('<\\\\2>', 'a 1 b 2'))\n"
    "print(p.subn(r'\\g<num>:\\g<word>', 'a 1 b 2', 1), p.split('a 1 b 2 c', 1), p == re.compile(p.pattern, p.flags))\n"
    "print(hash(p) == hash(re.compile(p.pattern, re.I | re.M)), re.compile(p) is p, re.compile('a') is re.compile('a'))\n"
    "print(re.I.name, re.I.value, type(re.I), re.RegexFlag, (re.I | re.M).name, re.RegexFlag(3), re.I & 2, ~re.I)\n",
    # Match objects
    "import re\nm = re.search(r'(?P<a>x)(y)?(?P<c>z)', '--xz--')\n"
    "print(m, repr(m), bool(m), m.group(), m.group(0), m.group(1, 2, 3), m.group('a', 'c'), m[0], m[1], m[2], m['c'])\n"
    "print(m.groups(), m.groups('-'), m.groupdict(), m.groupdict(0), m.start(), m.end(), m.span(), m.start(2), m.span('c'))\n"
    "print(m.string, m.re, m.pos, m.endpos, m.lastindex, m.lastgroup, m.expand(r'[\\3\\1\\g<a>\\g<2>]'))\n"
    "m2 = re.compile('b').search('abc', 1, 2)\nprint(m2, m2.pos, m2.endpos, m2.lastindex, m2.lastgroup)\n"
    "print(type(m), type(m) is re.Match, isinstance(m, re.Match), type(re.compile('')), re.Pattern, re.Match)\n"
    "print(re.match('(a)|(b)', 'b').lastindex, re.match('a' * 60, 'a' * 60), re.match('x', 'y'))\n"
    "import copy\nprint(copy.copy(m) is m, copy.deepcopy(m.re) is m.re)\n",
    # the module's functions
    "import re\nprint(re.match('a', 'ab'), re.fullmatch('a|b', 'b'), re.search('b+', 'abbc'), re.match('(?i)ABC', 'abc'))\n"
    "print(re.findall(r'\\w+', 'a bb ccc'), re.findall(r'(\\w)(\\w)?', 'abc'), re.findall('(a)|b', 'ab'), re.findall('', 'ab'))\n"
    "print(list(re.finditer(r'\\d', 'a1b2')), re.finditer('a', 'a').__class__.__name__)\n"
    "print(re.split(r'\\W+', 'a, b, c'), re.split(r'(\\W+)', 'a, b'), re.split(r'\\W+', 'a, b, c', maxsplit=1), "
    "re.split(r'\\W+', 'a, b, c', 1), re.split('x*', 'axbc'), re.split('a', 'bab', maxsplit=-1), re.split('(a)|b', 'xbyaz'))\n"
    "print(re.sub('a', 'b', 'aaa'), re.sub('a', 'b', 'aaa', 2), re.sub('a', 'b', 'aaa', count=1), re.sub('x*', '-', 'abxd'))\n"
    "print(re.sub('|a', '-', 'aaa'), re.subn('a', 'b', 'aaa'), re.subn('(a)', r'\\1\\1', 'a-a', 1), re.sub('a', r'\\n\\t', 'a'))\n"
    "print(re.sub(r'\\d+', lambda m: str(int(m.group()) * 2), 'a1 b22 c333'), re.sub('a', lambda m: '', 'banana'))\n"
    "print(re.sub('(?P<x>a)', r'\\g<x>\\g<0>\\g<1>', 'ba'), re.sub('a', 'b', 'A', flags=re.I), re.sub('^a', 'b', 'a\\na', 0, re.M))\n"
    "print(re.escape('a.b*c?(d)[e]{f}|g^h$ i-j#k&l~m\\n'), re.escape(''), re.escape('ÿé'), re.purge())\n"
    "print(re.search(r'''\\d+  # digits\n  \\.  # a point''', 'x 12.5', re.VERBOSE), re.match(r'\\w', 'é', re.A), "
    "re.match('.', '\\n', re.S), re.findall('^a', 'a\\na', re.M))\n",
    # errors: CPython's messages and positions, argument errors, a script's replacement function
    TRY + "import re\n"
    "for bad in ['(', 'a{2,1}', '[a', '(?P<x>a)(?P<x>b)', r'\\k', '*', 'a)', '(?<=a+)', r'(?P<1>a)', 'a(?i)']:\n"
    "    try:\n        re.compile(bad)\n    except re.error as e:\n"
    "        print(type(e).__name__, e, '|', e.msg, repr(e.pattern), e.pos, e.lineno, e.colno, isinstance(e, Exception))\n"
    "try:\n    re.compile('a\\n(b\\nc')\nexcept re.error as e:\n    print(e, e.lineno, e.colno)\n"
    "t(lambda: re.sub('a', r'\\3', 'a'))\nt(lambda: re.sub('(a)', r'\\g<x>', 'a'))\nt(lambda: re.sub('a', '\\\\', 'a'))\n"
    "t(lambda: re.match(5, 'a'))\nt(lambda: re.match('a', 5))\nt(lambda: re.compile(re.compile('a'), re.I))\n"
    "t(lambda: re.compile('a', re.L))\nt(lambda: re.sub('a', 5, 'a'))\nt(lambda: re.sub('a', lambda m: 5, 'a'))\n"
    "t(lambda: re.sub('a', lambda m: None, 'bab'))\nt(lambda: re.sub('a'))\nt(lambda: re.compile('a').sub('b'))\n"
    "t(lambda: re.compile('a').findall('a', pos='x'))\nt(lambda: re.compile('a').split('a', 1, 2))\n"
    "t(lambda: re.compile('a').match(string='a', foo=1))\nt(lambda: re.match('(a)', 'a').group(2))\n"
    "t(lambda: re.match('(a)', 'a').group('x'))\nt(lambda: re.match('a', 'a').expand(r'\\1'))\nt(lambda: re.match('a', 'a')[1])\n"
    "t(lambda: len(re.match('a', 'a')))\nt(lambda: list(re.match('a', 'a')))\nt(lambda: re.Pattern())\n"
    "t(lambda: re.match('a', 'a').foo)\nt(lambda: re.compile('a').foo)\nt(lambda: re.split('a', 'b', 'c'))\n"
    "t(lambda: re.sub('a', 'b', 'a', 'x'))\nt(lambda: re.escape(5))\nt(lambda: re.findall('a', None))\n"
    "t(lambda: re.compile('(?P<x>a)').sub(r'\\g<-1>', 'a'))\nt(lambda: re.compile('a', flags='x'))\n"
    "t(lambda: re.compile('a', 1.5))\nt(lambda: re.compile('a', []))\nt(lambda: re.compile('a', None))\n"
    "import enum\nclass F(enum.IntFlag):\n    I = 2\nprint(re.compile('a', True), re.compile('A', F.I).match('a'))\n",
    # keyword arguments and argument errors of the methods gradcli bounds: CPython's own
    "import re\np = re.compile(r'(\\w)(\\d)?')\nprint(p.sub(repl='x', string='abc'), p.subn(repl=r'\\1', string='a1b', count=1), p.split(string='a b', maxsplit=1))\nprint(p.findall(string='a1 b2', pos=1), p.findall('a1 b2', endpos=2), p.finditer(string='ab', pos=1).__class__)\nm = p.match('a')\nprint(m.expand(template=r'\\1'), m.groups(default=''), m.group(), m.groupdict(default=1), m.group(0, 1, 2))\nprint(re.sub(pattern='a', repl='b', string='a'), re.split(pattern=',', string='a,b', maxsplit=1))\nprint(re.findall(pattern='a', string='aa', flags=re.I), re.subn('a', count=1, repl='b', string='aa'))\nfor f in [lambda: p.sub('x'), lambda: p.sub('x', 'a', 1, 2), lambda: p.sub('x', 'a', count='1'), lambda: p.split('a', maxsplit='x'),\n          lambda: p.findall('a', 1, 2, 3), lambda: m.expand(), lambda: m.expand(5), lambda: m.groups(1, 2), lambda: m.group(1.5),\n          lambda: p.sub('x', string=5), lambda: p.split(5), lambda: p.sub(lambda: 1, 'a'), lambda: re.escape(None),\n          lambda: p.findall('aa', 'x'), lambda: p.sub(None, 'a'), lambda: p.subn('\\\\', 'a')]:\n    try:\n        print(repr(f()))\n    except Exception as e:\n        print(type(e).__name__, e)\n",
    # Pattern and Match among the language's other values: json, copies, formatting, dict keys, ordering
    TRY + "import re, json, copy\nm = re.match('a', 'a')\nt(lambda: json.dumps(m))\nt(lambda: copy.deepcopy(m) is m)\n"
    "t(lambda: str(re.compile('a')))\nt(lambda: f'{m}')\nt(lambda: '{0.re.pattern}'.format(m))\n"
    "t(lambda: {re.compile('a'): 1}[re.compile('a')])\nt(lambda: sorted([re.compile('b'), re.compile('a')]))\n",
    # a replacement function that is a script's: its calls, its errors, state it keeps
    "import re\ncount = {'n': 0}\ndef up(m):\n    count['n'] += 1\n    return m.group(1).upper() + str(m.start())\n"
    "print(re.sub(r'(\\w+)', up, 'ab cd ef'), count, re.subn(r'(\\w)', up, 'xy', count=1))\n"
    "class R:\n    def __call__(self, m):\n        return '<' + m[0] + '>'\nprint(re.sub('b', R(), 'abcb'))\n"
    "def bad(m):\n    raise KeyError(m.group())\ntry:\n    re.sub('b', bad, 'abc')\nexcept KeyError as e:\n    print('caught', e)\n",
    # unicodedata
    TRY + "import unicodedata as u\n"
    "for form in ('NFC', 'NFD', 'NFKC', 'NFKD'):\n"
    "    print(form, [hex(ord(c)) for c in u.normalize(form, 'é ﬁ ①Å')], u.is_normalized(form, 'é'))\n"
    "print(u.name('é'), u.name('\\x00', 'none'), u.lookup('LATIN SMALL LETTER E WITH ACUTE'), u.lookup('SNOWMAN'))\n"
    "print(u.decimal('7'), u.decimal('a', -1), u.digit('²'), u.numeric('½'), u.numeric('Ⅻ'), u.category('A'), "
    "u.category('\\u0301'), u.category('1'), u.category(' '))\n"
    "print(u.combining('\\u0301'), u.combining('a'), u.east_asian_width('Ａ'), u.east_asian_width('a'), u.mirrored('('), "
    "u.mirrored('a'), u.bidirectional('a'), u.bidirectional('\\u05d0'), u.decomposition('é'), u.unidata_version)\n"
    "t(lambda: u.name('\\x00'))\nt(lambda: u.lookup('NO SUCH NAME'))\nt(lambda: u.decimal('a'))\nt(lambda: u.category('ab'))\n"
    "t(lambda: u.normalize('NFX', 'a'))\nt(lambda: u.normalize('NFC'))\nt(lambda: u.normalize('NFC', 'a', 'b'))\n"
    "t(lambda: u.normalize('NFC', 5))\nt(lambda: u.numeric('a'))\nt(lambda: u.is_normalized('NFC', 1))\n"
    "print(u.normalize, u.category, u.is_normalized)\n",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_re_and_unicodedata(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


def test_reprs_and_help():
    out = gradcli_output("import re, unicodedata\nprint(re.sub, re.compile('a').sub, re.match('a', 'a').span, "
                         "unicodedata.normalize, type(re.finditer('a', 'a')))\n")
    assert out.startswith("<function sub at 0x") and "<built-in method sub of re.Pattern object at 0x" in out
    assert "<built-in method span of re.Match object at 0x" in out
    assert out.endswith("<built-in function normalize> <class 'callable_iterator'>\n")
    for name, first in (("re", "module re"), ("unicodedata", "module unicodedata"),
                        ("re.sub", "re.sub(pattern, repl, string, count=0, flags=0)"),
                        ("re.compile('a').split", "Pattern.split(string, maxsplit=0)"),
                        ("re.match('a', 'a').expand", "Match.expand(template)"), ("re.Match", "class Match"),
                        ("re.error", "class error(msg, pattern=None, pos=None)"),
                        ("unicodedata.category", "unicodedata.category(chr, /)")):
        assert gradcli_output(f"import re, unicodedata\nhelp({name})\n").startswith(first + "\n    ")
    from gradcli.language import helptext, pyre
    for names, kind in ((pyre.PATTERN_NAMES, "method of re.Pattern"), (pyre.MATCH_NAMES, "method of re.Match")):
        methods = [n for n in names if n not in ("pattern", "flags", "groups", "groupindex", "string", "re", "pos",
                                                 "endpos", "lastindex", "lastgroup")]
        assert [n for n in methods if (kind, n) not in helptext._PYTHON_FUNCTIONS] == []
    members = gradcli_output("import re, unicodedata\nprint([n for n in dir(re) if not n.startswith('_')])\n")
    assert "sub" in members


@pytest.mark.parametrize("source, message", [
    ("import re\nre.compile('(')", "2:1: re.error: missing ), unterminated subpattern at position 0"),
    ("import re\n\nx = re.sub('a', r'\\2', 'a')", "3:5: re.error: invalid group reference 2 at position 1"),
    ("import re\ndef f(m):\n    return m.group(1)\nre.sub('a', f, 'a')", "3:12: IndexError: no such group"),
    ("import re\nre.sub('a', lambda m: 1 / 0, 'a')", "2:23: ZeroDivisionError: division by zero"),
    ("import re\nre.compile('a', re.DEBUG)", "2:17: AttributeError: module 're' attribute 'DEBUG' is outside "
     "gradcli's language: its dump of a pattern writes to the process's stdout"),
    ("import re\nre.compile('a', 128)", "2:1: NotImplementedError: gradcli does not implement re.DEBUG: its dump of "
     "a pattern writes to the process's stdout"),
    ("import re\nre.template('a')", "2:1: AttributeError: module 're' attribute 'template' is outside gradcli's "
     "language: deprecated in Python 3.11 (use re.compile)"),
    ("import re, torch, io\nb = io.BytesIO()\ntorch.save(1, b)\nre.findall('a', b.getvalue())",
     "4:1: TypeError: re on bytes is outside gradcli's language: patterns and strings are str (scripts have no bytes "
     "literals)"),
    ("import re\nre.nothing", "2:1: AttributeError: module 're' has no attribute 'nothing'"),
    ("import unicodedata\nunicodedata.ucd_3_2_0", "2:1: AttributeError: module 'unicodedata' attribute 'ucd_3_2_0' "
     "is outside gradcli's language: gradcli offers the current Unicode database only"),
    ("import unicodedata\nunicodedata.lookup('X Y')", "2:1: KeyError: \"undefined character name 'X Y'\""),
])
def test_errors(source, message):
    assert located_error(source) == message


def test_torch_save_takes_a_pattern_and_refuses_a_match():
    """Checked against PyTorch 2.13: a Pattern pickles (as re._compile and its arguments), a Match does not."""
    out = gradcli_output("import re, io, torch\nb = io.BytesIO()\ntorch.save({'p': re.compile('a+', re.I)}, b)\n"
                         "b.seek(0)\nprint(torch.load(b, weights_only=False))\nb.seek(0)\ntry:\n    torch.load(b)\n"
                         "except Exception as e:\n    print(type(e).__name__, 'GLOBAL re._compile was not an allowed' in "
                         "str(e))\ntry:\n    torch.save(re.match('a', 'a'), io.BytesIO())\nexcept TypeError as e:\n"
                         "    print(e)\n")
    assert out == ("{'p': re.compile('a+', re.IGNORECASE)}\nUnpicklingError True\ncannot pickle 're.Match' object\n")


def test_the_parsers_warnings_are_the_scripts():
    """CPython's FutureWarning for a possible nested set, at the script's line, once a pattern (its cache keeps
    the compiled pattern); a new run warns again, as a new process does; purge() forgets the pattern."""
    source = ("import re, warnings\nx = re.compile('[[a]')\ny = re.compile('[[a]')\nre.purge()\nz = re.compile('[[a]')\n"
              "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    re.purge()\n"
              "    re.compile('[a-z--b]')\nprint([(r.category.__name__, str(r.message), r.lineno) for r in w])\n")
    for _ in range(2):
        out, err = io.StringIO(), io.StringIO()
        Session(out=out, err=err).run_source(source, "w.grad")
        assert err.getvalue() == ("w.grad:2: FutureWarning: Possible nested set at position 1\n"
                                  "  x = re.compile('[[a]')\n"
                                  "w.grad:5: FutureWarning: Possible nested set at position 1\n"
                                  "  z = re.compile('[[a]')\n")
        assert out.getvalue() == "[('FutureWarning', 'Possible set difference at position 4', 9)]\n"


def test_a_warning_before_an_error_is_given_too():
    out, err = io.StringIO(), io.StringIO()
    Session(out=out, err=err).run_source("import re\ntry:\n    re.compile('[[a')\nexcept re.error as e:\n"
                                         "    print(e)\n", "w.grad")
    assert (out.getvalue(), err.getvalue()) == ("unterminated character set at position 0\n",
                                                "w.grad:3: FutureWarning: Possible nested set at position 1\n"
                                                "  re.compile('[[a')\n")


# What these build is refused past the bound, before the memory is asked for: an empty pattern replaced by a long
# text at every position, many groups over a long string, lookahead groups holding the rest of the string at each
# position, a template repeating a group, a replacement function's long results, a long pattern
BOUNDED = [
    ("import re\nre.sub('', 'x' * 10 ** 4, 'a' * 10 ** 3)", "str", None),
    ("import re\nre.subn('', 'x' * 10 ** 4, 'a' * 10 ** 3)", "str", None),
    ("import re\nre.compile('').sub('x' * 10 ** 4, 'a' * 10 ** 3)", "str", None),
    ("import re\nre.sub('(a)', r'\\1' * 2000, 'a' * 10 ** 3)", "str", None),
    ("import re\nre.sub('(?=(a*))', r'\\1', 'a' * 10 ** 4)", "str", None),
    ("import re\nre.sub('a', lambda m: 'x' * 10 ** 4, 'a' * 10 ** 3)", "str", None),
    ("import re\nre.findall('()' * 100, 'a' * 10 ** 4)", "list", None),
    ("import re\nre.findall('(?=(a*))', 'a' * 10 ** 4)", "list", None),
    ("import re\nre.compile('(?=(a*))').findall('a' * 10 ** 4, 1)", "list", None),
    ("import re\nre.split('', 'a' * 10 ** 6)", "list", None),
    ("import re\nre.split('()' * 100, 'a' * 10 ** 4)", "list", None),
    ("import re\nre.split('(?=(a*))', 'a' * 10 ** 4)", "list", None),
    ("import re\nm = re.match('(?=(a*))' * 200, 'a' * 10 ** 4)\nm.groups()", None, "a str of 2000000 items"),
    ("import re\nm = re.match('(?=(?P<x>a*))', 'a' * 10 ** 4)\nm.group(*['x'] * 200)", None, "a str of 2000000 items"),
    ("import re\nm = re.match('(?=(a*))' * 200, 'a' * 10 ** 4)\nm.groupdict()\nm.group(*range(1, 201))", None,
     "a str of 2000000 items"),
    ("import re\nm = re.match('(a*)', 'a' * 10 ** 4)\nm.expand(r'\\1' * 200)", None, "a str of 2000000 items"),
    ("import re\nre.escape('.' * 600000)", None, "a str of 1200000 items"),
    ("import re\nre.compile('a' * 200000)", None, "MemoryError: a pattern of 200000 characters is too large to "
                                                  "compile (gradcli compiles at most 125000)"),
    ("import unicodedata\nunicodedata.normalize('NFKD', '\\ufdfa' * 60000)", None, "a str of 1080000 items"),
    ("import unicodedata\nunicodedata.normalize('NFKC', '\\ufdfa' * 60000)", "str", None),
    ("import unicodedata\nunicodedata.is_normalized('NFD', '\\uac01' * 400000)", None, "a str of 1200000 items"),
]


@pytest.mark.parametrize("source, kind, text", BOUNDED)
def test_what_they_build_is_bounded(source, kind, text):
    STATE.max_items, before = 10 ** 6, STATE.max_items
    try:
        got = located_error(source)
    finally:
        STATE.max_items = before
    line = source.count("\n") + 1
    if kind is not None:
        assert got.startswith(f"{line}:") and got.endswith(f": MemoryError: a {kind} of more than 1000000 items is "
                                                           "too large (gradcli allows at most 1000000)")
    elif text.startswith("MemoryError"):
        assert got.endswith(text)
    else:
        assert got.endswith(f": MemoryError: {text} is too large (gradcli allows at most 1000000)")


@pytest.mark.parametrize("source", [
    # past the first bound, run match by match to their end within it: CPython's results
    "import re\nprint(len(re.sub('', '-', 'ab' * 200000)), re.sub('a', '-', 'ab' * 300000)[:9])\n"
    "print(len(re.findall('(?=(a*))', 'a' * 1000)), re.findall('(a)(b)?', 'ab' * 300000)[:3])\n"
    "print(len(re.split('(b)', 'ab' * 300000)), re.split('(?=(a*))', 'aab')[:6], re.split('(b)', 'abab', 1))\n"
    "print(re.findall('(a)|(b)', 'ab' * 100000)[-3:], re.findall('a', 'ab' * 300000, )[-1:], "
    "re.compile('(?=(b))').findall('ab' * 300000, 5, 11))\n"
    "print(len(re.sub('(a)', r'\\1\\1', 'ab' * 200000)), re.subn('(?=(a*))', r'[\\1]', 'aa'), "
    "re.sub('(a)', lambda m: m[1] * 2, 'ab' * 200000)[:8])\n"
    "print(re.sub('(a)|(b)', r'\\2', 'ab' * 200000)[:5], re.split('', 'abc'), re.split('x*', 'ab' * 300000)[-3:])\n",
])
def test_past_the_first_bound_the_results_are_cpythons(source):
    STATE.max_items, before = 10 ** 6, STATE.max_items
    try:
        got = gradcli_output(source)
    finally:
        STATE.max_items = before
    assert got == cpython_output(source)


CATASTROPHIC = [
    "re.match(r'(a+)+$', 'a' * 40 + 'b')",
    "re.search(r'(a|aa)*c', 'a' * 60)",
    "re.compile(r'(x+x+)+y').sub('', 'x' * 50)",
    "re.split(r'(a*)*b', 'a' * 50)",
    "re.findall(r'(?:a+)+$', 'a' * 50 + 'b')",
    "re.fullmatch(r'(a|a)*', 'a' * 60 + 'b')",
    "list(re.finditer(r'(a+)+$', 'a' * 50 + 'b'))",
    # long inputs: a quadratic scan of a million characters
    "re.findall(r'\\w+\\d', 'a' * 10 ** 6)",
    "re.sub(r'\\w+\\d', '', 'a' * 10 ** 6)",
    "re.compile(r'\\w+\\d').search('a' * 10 ** 6, 5)",
]


@pytest.mark.parametrize("call", CATASTROPHIC)
def test_the_deadline_stops_the_matcher(call):
    session = Session(out=io.StringIO(), err=io.StringIO())
    session.run_source("import re\n")         # (the grammar's tables loaded before the timer starts)
    with pytest.raises(ScriptError) as caught:
        with deadline.Deadline(0.3):
            session.run_source("import re\nx = 1\ny = " + call + "\n", "t.grad")
    err = caught.value
    assert (err.kind, err.message, err.exit_status, err.line) == (
        "TimeoutError", "stopped after 0.3 seconds (--timeout 0.3)", 124, 3)


@pytest.mark.parametrize("call", [CATASTROPHIC[0], CATASTROPHIC[2], "re.sub('a', lambda m: 'b', 'a' * 10 ** 8)"])
def test_the_timeout_option_stops_the_matcher(call):
    done = launcher.run(["--timeout", "0.5", "-c",
                         "import re\nprint('before')\ny = " + call + "\n"], timeout=60)
    assert (done.returncode, done.stdout) == (124, "before\n")
    assert done.stderr.splitlines()[0].startswith("<string>:3") and "TimeoutError: stopped after 0.5 seconds" in \
        done.stderr


def test_the_modules_are_made_only_by_scripts_that_import_them():
    import subprocess
    code = ("import sys, io\nfrom gradcli.session import Session\nSession(out=io.StringIO()).run_source('print(1)\\n')\n"
            "print('gradcli.language.pyre' in sys.modules, 'unicodedata' in sys.modules)\n"
            "Session(out=io.StringIO()).run_source('import unicodedata\\nunicodedata.category(\"a\")\\n')\n"
            "print('gradcli.language.pyre' in sys.modules, 'unicodedata' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False False\nTrue True\n"
