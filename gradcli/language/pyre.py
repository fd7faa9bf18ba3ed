"""Python's `re` and `unicodedata` modules for scripts: CPython's own matcher, pattern and match objects and
Unicode tables (so every result, repr and message is CPython's), with what they build bounded. Made on the first
`import re` or `import unicodedata`.

CPython's matcher checks for signals while it runs, so the deadline's timer stops a catastrophic pattern
(`(a+)+$`) at the script's line, and under `--timeout` the supervisor ends any C call anyway. What a call builds
is bounded before it is built: findall, split and sub/subn take an upper bound of their result's size (list and
tuple slots and characters) from the string's length, the pattern's group count and widths (read once from
CPython's parser) and the replacement's length and group references; past STATE.max_items they run match by
match, counting what they have made, and stop at the bound. A Match's groups(), groupdict(), group(...) and
expand(), escape(), normalize() and is_normalized() count what they would make the same way. A pattern longer
than an eighth of the bound is refused (compiling takes about 120 bytes a character). Bytes patterns and strings
are outside the language; re.DEBUG (whose dump writes to the process's stdout), TEMPLATE and template() are
refused. Pattern.scanner (the matcher's internals) is not in the language. The warnings CPython's parser gives
(FutureWarning: Possible nested set) go through the script's warnings, once per pattern and run as CPython's
cache gives them."""

from __future__ import annotations

import re as _re
import warnings as _warnings
from re import _parser

from gradcli.engine.state import STATE
from gradcli.language import bounds

Pattern, Match = _re.Pattern, _re.Match
_DEBUG = _re.DEBUG.value
_BYTES = (bytes, bytearray, memoryview)
_NO_BYTES = "re on bytes is outside gradcli's language: patterns and strings are str (scripts have no bytes literals)"
_CHARS_PER_ITEM = 8         # a pattern compiles to about 120 bytes a character: at most max_items // 8 characters

PATTERN_NAMES = frozenset(("pattern", "flags", "groups", "groupindex", "match", "fullmatch", "search", "sub", "subn",
                           "split", "findall", "finditer"))
MATCH_NAMES = frozenset(("group", "groups", "groupdict", "start", "end", "span", "expand", "string", "re", "pos",
                         "endpos", "lastindex", "lastgroup"))
ERROR_FIELDS = frozenset(("msg", "pattern", "pos", "lineno", "colno"))
FLAG_FIELDS = frozenset(("name", "value"))
_INTERNAL = "it is internal to CPython's matcher"


def _too_many(kind: str, n: int) -> MemoryError:
    return MemoryError(f"a {kind} of {n} items is too large (gradcli allows at most {STATE.max_items})")


# ----------------------------------------------------------------------------------- compiling, warnings

class _Caught:
    """CPython's warnings raised inside the block, kept (category name, message) instead of shown."""

    __slots__ = ("context", "items")

    def __enter__(self):
        self.context = _warnings.catch_warnings(record=True)
        self.items = self.context.__enter__()
        _warnings.simplefilter("always")
        return self

    def __exit__(self, kind, error, trace):
        self.context.__exit__(kind, error, trace)
        # (those CPython places in re's own files, as re.TEMPLATE's DeprecationWarning, are library warnings its
        # default filters do not show; the parser's own name the caller's line: here, pyre's)
        self.items = [(w.category.__name__, str(w.message)) for w in self.items if not w.filename.startswith(_RE_DIR)]
        if isinstance(error, Exception) and self.items and STATE.warn is not None:
            for category, message in self.items:        # given before the error, as CPython gives them
                STATE.warn(category, message)
        return False


_RE_DIR = _re.__file__.rpartition("/")[0] + "/"


_GIVEN: dict = {}       # key of a compiled pattern or template -> the warnings CPython gave compiling it
_MAX_KEPT = 512         # (as CPython's cache of patterns: the oldest forgotten first)


def _keep(table: dict, key, value) -> None:
    if len(table) >= _MAX_KEPT:
        del table[next(iter(table))]
    table[key] = value


def _give(key) -> None:
    """The warnings of what `key` names, once a run (as once per compile, CPython's cache keeping the compiled
    pattern: purge() forgets that they were given)."""
    found = _GIVEN.get(key)
    if found and ("re", key) not in STATE.warned_once:
        STATE.warned_once.add(("re", key))
        if STATE.warn is not None:
            for category, message in found:
                STATE.warn(category, message)


def _compile(pattern, flags):
    """re._compile(pattern, flags), as re.compile and the module's functions call it, bounded and checked."""
    if isinstance(pattern, _BYTES):
        raise TypeError(_NO_BYTES)
    if isinstance(flags, int):
        flags = int.__index__(flags)        # (re.I, True, a script's IntFlag member: the number, as CPython keys it)
    elif isinstance(pattern, str):          # (CPython would call a script's __and__, and its dump on a true result)
        hash(flags)
        raise TypeError(f"unsupported operand type(s) for &: '{type(flags).__name__}' and 'RegexFlag'")
    if not isinstance(pattern, str):
        return _re._compile(pattern, flags)         # (a Pattern; CPython's errors)
    if flags & _DEBUG:
        raise NotImplementedError("gradcli does not implement re.DEBUG: its dump of a pattern writes to the "
                                  "process's stdout")
    key = (str, pattern, flags)
    compiled = _re._cache.get(key)
    if compiled is None:
        limit = STATE.max_items // _CHARS_PER_ITEM
        if len(pattern) > limit:
            raise MemoryError(f"a pattern of {len(pattern)} characters is too large to compile (gradcli compiles "
                              f"at most {limit})")
        with _Caught() as caught:
            compiled = _re._compile(pattern, flags)
        if caught.items:
            _keep(_GIVEN, key, caught.items)
    _give(key)
    return compiled


class _Template:
    """A replacement string as CPython's sub compiles it (re._compile_repl): its group references and literal
    parts, their length, and the replacement CPython's C sub is given (the literal, or a function expanding the
    template, as re._subx makes them), so the C function never parses a template itself."""

    __slots__ = ("parsed", "refs", "literal", "plain")

    def __init__(self, parsed):
        self.parsed = parsed
        self.refs = [group for _, group in parsed[0]]
        self.literal = sum(len(text) for text in parsed[1] if text)
        if not parsed[0] and len(parsed[1]) == 1 and "\\" not in parsed[1][0]:
            self.plain = parsed[1][0]       # (CPython's C sub takes a string without a backslash as it is)
        else:
            self.plain = lambda m: _parser.expand_template(parsed, m)

    def counted(self, m):
        """The match's replacement, refused when it alone would pass the bound (before it is made)."""
        spans = m.regs
        if self.literal + sum([spans[g][1] - spans[g][0] for g in self.refs]) > STATE.max_items:
            raise bounds.built_too_many("str")
        return _parser.expand_template(self.parsed, m)


_TEMPLATES: dict = {}


def _template(repl: str, pattern: Pattern) -> _Template:
    """The compiled replacement, its warnings given (once a template and run, as CPython's cache gives them)."""
    key = ("repl", repl, pattern)
    template = _TEMPLATES.get(key)
    if template is None:
        with _Caught() as caught:
            template = _Template(_re._compile_repl(repl, pattern))
        if caught.items:
            _keep(_GIVEN, key, caught.items)
        _keep(_TEMPLATES, key, template)
    _give(key)
    return template


def purge():
    """Clear the regular expression caches"""
    _re.purge()
    STATE.warned_once = {k for k in STATE.warned_once if k.__class__ is not tuple or k[0] != "re"}


# ------------------------------------------------------------------------------ what a pattern can make

class _Shape:
    """What a pattern's matches can hold: the fewest characters a match takes, and each group's widest text and
    whether it lies inside a lookaround (whose text may lie outside the match's)."""

    __slots__ = ("least", "groups")

    def __init__(self, pattern: Pattern):
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            parsed = _parser.parse(pattern.pattern, pattern.flags)
        self.least = parsed.getwidth()[0]
        self.groups = {}
        stack = [(parsed, False)]
        while stack:
            sub, around = stack.pop()
            for op, av in sub.data:
                name = str(op)
                if name == "SUBPATTERN":
                    if av[0] is not None:
                        self.groups[av[0]] = (av[3].getwidth()[1], around)
                    stack.append((av[3], around))
                elif name in ("ASSERT", "ASSERT_NOT"):
                    stack.append((av[1], True))
                elif name == "BRANCH":
                    stack.extend((p, around) for p in av[1])
                elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                    stack.append((av[2], around))
                elif name == "ATOMIC_GROUP":
                    stack.append((av, around))
                elif name == "GROUPREF_EXISTS":
                    stack.extend((p, around) for p in av[1:] if p is not None)


_SHAPES: dict = {}


def _shape(pattern: Pattern) -> _Shape:
    shape = _SHAPES.get(pattern)
    if shape is None:
        shape = _Shape(pattern)
        _keep(_SHAPES, pattern, shape)
    return shape


def _count(shape: _Shape, window: int, limit: int) -> int:
    """The most matches a window of `window` characters holds (an empty match may follow a match at its end:
    at most two a position), at most `limit` when that is positive."""
    most = window // shape.least if shape.least else 2 * window + 1
    return min(most, limit) if limit > 0 else most


def _group_text(shape: _Shape, group: int, count: int, window: int, n: int) -> int:
    """The most characters `count` matches' texts of `group` hold (group 0: the matches themselves, which do not
    overlap; a group outside lookarounds lies inside its match)."""
    if group == 0:
        return window
    width, around = shape.groups.get(group, (n, True))
    text = count * min(width, n)
    return text if around else min(window, text)


def _window(string: str, pos, endpos) -> int:
    n = len(string)
    if pos.__class__ is not int or endpos.__class__ is not int:
        return n                # (an object's __index__: the whole string, which holds any window)
    start = min(max(pos, 0), n)
    return max(0, min(max(endpos, 0), n) - start)


# ------------------------------------------------------------------------------------- Pattern's methods

_UNSET = object()


def _bind(args: tuple, kwargs: dict, names: tuple, defaults: dict):
    """The arguments as CPython's C method takes them, in order, or None when it would refuse them (then it is
    called, and gives its own error)."""
    given = len(args)
    if given > len(names):
        return None
    if not kwargs:
        if all(name in defaults for name in names[given:]):
            return [*args, *[defaults[name] for name in names[given:]]]
        return None
    values = list(args) + [_UNSET] * (len(names) - given)
    for key, value in kwargs.items():
        if key not in names or names.index(key) < given:
            return None
        values[names.index(key)] = value
    for i, value in enumerate(values):
        if value is _UNSET:
            if names[i] not in defaults:
                return None
            values[i] = defaults[names[i]]
    return values


def _text(string) -> bool:
    """Whether `string` is text to bound (bytes are refused; anything else gets CPython's TypeError)."""
    if isinstance(string, _BYTES):
        raise TypeError(_NO_BYTES)
    return isinstance(string, str)


_WINDOW = {"pos": 0, "endpos": 2 ** 63 - 1}


def findall(pattern: Pattern, /, *args, **kwargs):
    bound = _bind(args, kwargs, ("string", "pos", "endpos"), _WINDOW)
    if bound is None or not _text(bound[0]):
        return pattern.findall(*args, **kwargs)
    string, pos, endpos = bound
    window, g = _window(string, pos, endpos), pattern.groups
    most = 2 * window + 1
    if most * (1 + g) <= STATE.max_items and window + most * g * len(string) <= STATE.max_items:
        return pattern.findall(*args, **kwargs)         # (short strings: at once)
    shape = _shape(pattern)
    count = _count(shape, window, 0)
    slots = 1 + (g if g > 1 else 0)
    text = window if g == 0 else sum(_group_text(shape, i, count, window, len(string)) for i in range(1, g + 1))
    if count * slots <= STATE.max_items and text <= STATE.max_items:
        return pattern.findall(*args, **kwargs)
    found, made = [], _Made(_texts(shape, g))
    for m in pattern.finditer(*args, **kwargs):
        made.add(slots, m, 0)
        found.append(m.group() if g == 0 else (m.group(1) or "") if g == 1 else m.groups(""))
    return found


def split(pattern: Pattern, /, *args, **kwargs):
    bound = _bind(args, kwargs, ("string", "maxsplit"), {"maxsplit": 0})
    if bound is None or not _text(bound[0]) or bound[1].__class__ is not int:
        return pattern.split(*args, **kwargs)
    string, maxsplit = bound
    n, g = len(string), pattern.groups
    if (2 * n + 2) * (1 + g) <= STATE.max_items and n + (2 * n + 1) * g * n <= STATE.max_items:
        return pattern.split(*args, **kwargs)           # (short strings: at once)
    shape = _shape(pattern)
    count = 0 if maxsplit < 0 else _count(shape, n, maxsplit)
    text = n + sum(_group_text(shape, i, count, n, n) for i in range(1, g + 1))
    if count * (1 + g) + 1 <= STATE.max_items and text <= STATE.max_items:
        return pattern.split(*args, **kwargs)
    pieces, last, made = [], 0, _Made(_texts(shape, g) if g else ())
    for done, m in enumerate(pattern.finditer(string)):
        if maxsplit and done >= maxsplit:
            break
        start, end = m.span()
        made.add(1 + g, m, start - last)
        pieces.append(string[last:start])
        pieces.extend(m.groups())
        last = end
    made.add(1, None, n - last)
    pieces.append(string[last:])
    return pieces


class _Made:
    """What findall or split has made so far, match by match: the list's slots and the characters of its strings,
    each refused past the bound before it is made."""

    __slots__ = ("slots", "chars", "texts")

    def __init__(self, texts: tuple):
        self.slots = self.chars = 0
        self.texts = texts      # the groups whose texts may be longer than nothing (0: the match itself)

    def add(self, slots: int, m, chars: int) -> None:
        self.slots += slots
        if m is not None and self.texts:
            spans = m.regs      # (an unmatched group's span is (-1, -1))
            chars += sum([spans[i][1] - spans[i][0] for i in self.texts])
        self.chars += chars
        if self.slots > STATE.max_items or self.chars > STATE.max_items:
            raise bounds.built_too_many("list")


def _texts(shape: _Shape, g: int) -> tuple:
    """The groups whose texts may be longer than nothing (group 0 when there are none)."""
    return tuple(i for i in range(1, g + 1) if shape.groups.get(i, (1, True))[0]) if g else (0,)


def sub(pattern: Pattern, /, *args, **kwargs):
    return _substituted(pattern, "sub", args, kwargs)


def subn(pattern: Pattern, /, *args, **kwargs):
    return _substituted(pattern, "subn", args, kwargs)


def _substituted(pattern: Pattern, name: str, args: tuple, kwargs: dict):
    """Pattern.sub or subn: CPython's, when the result's bound is within STATE.max_items; else with a replacement
    function that counts the result as it grows and stops it at the bound."""
    method = getattr(pattern, name)
    bound = _bind(args, kwargs, ("repl", "string", "count"), {"count": 0})
    if bound is None or not _text(bound[1]) or bound[2].__class__ is not int:
        return method(*args, **kwargs)
    repl, string, count = bound
    if isinstance(repl, _BYTES):
        raise TypeError(_NO_BYTES)
    if callable(repl):
        return method(_Counted(repl, len(string)), string, count)
    if not isinstance(repl, str):
        return method(*args, **kwargs)
    template = _template(repl, pattern)
    n = len(string)
    room = STATE.max_items
    if n + (2 * n + 1) * (template.literal + len(template.refs) * n) > room:     # (short strings: at once)
        shape = _shape(pattern)
        matches = _count(shape, n, count)
        size = n + matches * template.literal + sum(_group_text(shape, g, matches, n, n) for g in template.refs)
        if size > room:
            return method(_Counted(template.counted, n), string, count)
    return method(template.plain, string, count)


class _Counted:
    """The replacement function CPython's sub calls: the script's (or the template's), with the result's length
    counted as it grows (the string's length, less each match's, plus each replacement's)."""

    __slots__ = ("repl", "size")

    def __init__(self, repl, n: int):
        self.repl, self.size = repl, n

    def __call__(self, m):
        text = self.repl(m)
        start, end = m.span()
        self.size += (len(text) if isinstance(text, str) else 0) - (end - start)
        if self.size > STATE.max_items:
            raise bounds.built_too_many("str")
        return text


# ---------------------------------------------------------------------------------------- Match's methods

def _groups_text(m: Match, groups) -> int:
    spans = m.regs
    return sum(spans[g][1] - spans[g][0] for g in groups if spans[g][0] >= 0)


def _check_text(m: Match, groups) -> None:
    """Refuse what taking the texts of `groups` of `m` would make past the bound (each at most the string)."""
    if len(groups) * len(m.string) > STATE.max_items:
        n = _groups_text(m, groups)
        if n > STATE.max_items:
            raise _too_many("str", n)


def group(m: Match, /, *args):
    index = m.re.groupindex
    _check_text(m, [index.get(a) if a.__class__ is str else a for a in args
                    if a.__class__ is int and 0 <= a <= m.re.groups or a.__class__ is str and a in index])
    return m.group(*args)


def groups(m: Match, /, *args, **kwargs):
    _check_text(m, range(1, m.re.groups + 1))
    return m.groups(*args, **kwargs)


def groupdict(m: Match, /, *args, **kwargs):
    _check_text(m, tuple(m.re.groupindex.values()))
    return m.groupdict(*args, **kwargs)


def expand(m: Match, /, *args, **kwargs):
    bound = _bind(args, kwargs, ("template",), {})
    if bound is None or not _text(bound[0]):
        return m.expand(*args, **kwargs)
    template = _template(bound[0], m.re)
    n = template.literal + _groups_text(m, template.refs)
    if n > STATE.max_items:
        raise _too_many("str", n)
    return _parser.expand_template(template.parsed, m)      # (CPython's Match.expand: re._expand, parsed here)


# ------------------------------------------------------------------------------------- the module's functions

def match(pattern, string, flags=0):
    """Try to apply the pattern at the start of the string, returning
    a Match object, or None if no match was found."""
    return _compile(pattern, flags).match(string)


def fullmatch(pattern, string, flags=0):
    """Try to apply the pattern to all of the string, returning
    a Match object, or None if no match was found."""
    return _compile(pattern, flags).fullmatch(string)


def search(pattern, string, flags=0):
    """Scan through string looking for a match to the pattern, returning
    a Match object, or None if no match was found."""
    return _compile(pattern, flags).search(string)


def _sub(pattern, repl, string, count=0, flags=0):
    """Return the string obtained by replacing the leftmost
    non-overlapping occurrences of the pattern in string by the
    replacement repl."""
    return sub(_compile(pattern, flags), repl, string, count)


def _subn(pattern, repl, string, count=0, flags=0):
    """Return a 2-tuple containing (new_string, number)."""
    return subn(_compile(pattern, flags), repl, string, count)


def _split(pattern, string, maxsplit=0, flags=0):
    """Split the source string by the occurrences of the pattern,
    returning a list containing the resulting substrings."""
    return split(_compile(pattern, flags), string, maxsplit)


def _findall(pattern, string, flags=0):
    """Return a list of all non-overlapping matches in the string."""
    return findall(_compile(pattern, flags), string)


def finditer(pattern, string, flags=0):
    """Return an iterator over all non-overlapping matches in the
    string.  For each match, the iterator returns a Match object."""
    return _compile(pattern, flags).finditer(string)


def compile(pattern, flags=0):
    "Compile a regular expression pattern, returning a Pattern object."
    return _compile(pattern, flags)


_SPECIAL = "()[]{}?*+-|^$\\.&~# \t\n\r\v\f"


def escape(pattern):
    """Escape special characters in a string."""
    if isinstance(pattern, _BYTES):
        raise TypeError(_NO_BYTES)
    if isinstance(pattern, str) and 2 * len(pattern) > STATE.max_items:
        n = len(pattern) + sum(pattern.count(c) for c in _SPECIAL)
        if n > STATE.max_items:
            raise _too_many("str", n)
    return _re.escape(pattern)


for _fn, _name in ((_sub, "sub"), (_subn, "subn"), (_split, "split"), (_findall, "findall")):
    _fn.__name__ = _fn.__qualname__ = _name      # (their argument errors name them as CPython's: sub() missing...)

# the methods scripts call on Pattern and Match objects that build what may be large: name -> function(obj, ...)
PATTERN_METHODS = {"findall": findall, "split": split, "sub": sub, "subn": subn}
MATCH_METHODS = {"group": group, "groups": groups, "groupdict": groupdict, "expand": expand}
FLAGS = ("A", "I", "L", "M", "S", "X", "U", "ASCII", "IGNORECASE", "LOCALE", "MULTILINE", "DOTALL", "VERBOSE",
         "UNICODE", "NOFLAG")


def re_members() -> dict:
    from gradcli.language import access, copying, stdlib
    from gradcli.language.stdlib import Builtin
    access.allow_bounded(Pattern, PATTERN_NAMES, PATTERN_METHODS)
    access.allow_bounded(Match, MATCH_NAMES, MATCH_METHODS)
    access.allow_held(_re.error, ERROR_FIELDS)
    access.allow_held(_re.RegexFlag, FLAG_FIELDS)
    access.REFUSED_HELD[Pattern] = {"scanner": _INTERNAL}
    access.REFUSED_HELD[Match] = {"regs": _INTERNAL}
    stdlib._TYPE_NAMES.update({Pattern: "re.Pattern", Match: "re.Match"})
    stdlib._HELD_CLASSES.update({Pattern: Pattern, Match: Match, _re.RegexFlag: _re.RegexFlag})    # type(m) is re.Match
    copying.STATE_COPIED.update((Pattern, Match))                       # (their copies are themselves)
    copying.UNPICKLABLE.add(Match)
    members = {name: Builtin("re", name, fn) for name, fn in (
        ("compile", compile), ("match", match), ("fullmatch", fullmatch), ("search", search), ("sub", _sub),
        ("subn", _subn), ("split", _split), ("findall", _findall), ("finditer", finditer), ("escape", escape),
        ("purge", purge))}
    members.update((name, getattr(_re, name)) for name in FLAGS)
    members.update({"error": _re.error, "Pattern": Pattern, "Match": Match, "RegexFlag": _re.RegexFlag})
    return members


# ------------------------------------------------------------------------------------------- unicodedata

_GROWTH = {"NFC": 3, "NFD": 4, "NFKC": 18, "NFKD": 18}      # the most characters one becomes (Unicode's UAX #15)
_DECOMPOSED = {"NFC": "NFD", "NFD": "NFD", "NFKC": "NFKD", "NFKD": "NFKD"}


def _check_normal(form, unistr) -> None:
    """Refuse a normal form longer than the bound, measured piece by piece (a decomposition is as long as its
    characters' decompositions, and composing only shortens it)."""
    import unicodedata
    if form.__class__ is not str or form not in _GROWTH or not isinstance(unistr, str):
        return
    room = STATE.max_items
    if len(unistr) * _GROWTH[form] <= room:
        return
    decomposed = _DECOMPOSED[form]
    n = sum(len(unicodedata.normalize(decomposed, unistr[i:i + bounds.CHUNK]))
            for i in range(0, len(unistr), bounds.CHUNK))
    if n > room:
        raise _too_many("str", n) if form == decomposed else bounds.built_too_many("str")


def normalize(*args, **kwargs):
    import unicodedata
    if len(args) == 2 and not kwargs:
        _check_normal(*args)
    return unicodedata.normalize(*args, **kwargs)


def is_normalized(*args, **kwargs):
    import unicodedata
    if len(args) == 2 and not kwargs:
        _check_normal(*args)
    return unicodedata.is_normalized(*args, **kwargs)


UNICODEDATA_FUNCTIONS = ("lookup", "name", "decimal", "digit", "numeric", "category", "bidirectional", "combining",
                         "east_asian_width", "mirrored", "decomposition")


def unicodedata_members() -> dict:
    import unicodedata
    from gradcli.language.stdlib import Builtin
    members = {name: Builtin("builtins", name, getattr(unicodedata, name)) for name in UNICODEDATA_FUNCTIONS}
    members["normalize"] = Builtin("builtins", "normalize", normalize)
    members["is_normalized"] = Builtin("builtins", "is_normalized", is_normalized)
    members["unidata_version"] = unicodedata.unidata_version
    return members
