"""Python's `warnings` module for scripts: warn, the filters (filterwarnings, simplefilter, resetwarnings) and
catch_warnings, with CPython 3.11's rules and messages. The filters of a run live in the engine's state
(STATE.warning_filters), and gradcli.session's `warn` consults them for every warning, the script's and the
engine's (PyTorch's warnings go through Python's warnings module too). Made on the first `import warnings`."""

from __future__ import annotations

import builtins
import itertools
import re

from gradcli.engine.state import STATE

ACTIONS = ("error", "ignore", "always", "default", "module", "once")
# the categories scripts name (builtins): Warning and every subclass CPython 3.11 has
CATEGORIES = ("Warning", "UserWarning", "DeprecationWarning", "PendingDeprecationWarning", "SyntaxWarning",
              "RuntimeWarning", "FutureWarning", "ImportWarning", "UnicodeWarning", "BytesWarning", "ResourceWarning",
              "EncodingWarning")
# each change of the filters gets a new number: the places that warned once are forgotten then, as CPython's
# registries are when its filters change
_VERSIONS = itertools.count(1)
# a script's message pattern is matched against every warning, also those given outside the script's own code,
# where the deadline's timer does not raise (CPython's matcher sees its signal, but the handler lets gradcli's own
# work finish): patterns whose time can grow exponentially with the text (a repetition holding another, or
# alternatives) are refused, as nothing but the supervisor would stop them there
_MAX_PATTERN = 1000


def _defaults() -> list:
    """CPython 3.11's filters when it starts without -W: DeprecationWarning shown in __main__ only."""
    return [("default", None, DeprecationWarning, "__main__", 0), ("ignore", None, DeprecationWarning, None, 0),
            ("ignore", None, PendingDeprecationWarning, None, 0), ("ignore", None, ImportWarning, None, 0),
            ("ignore", None, ResourceWarning, None, 0)]


class Filters:
    """warnings.filters of one run, CPython's "once" registry, and the list catch_warnings(record=True) fills."""

    __slots__ = ("items", "version", "once", "record")

    def __init__(self, items=None, once=None, record=None):
        self.items = _defaults() if items is None else items
        self.version = next(_VERSIONS)
        self.once = set() if once is None else once
        self.record = record

    def copy(self) -> "Filters":
        return Filters(list(self.items), self.once, self.record)

    def changed(self) -> None:
        self.version = next(_VERSIONS)


def current() -> Filters:
    """The run's filters, made (as CPython's defaults) when a script first changes them."""
    filters = STATE.warning_filters
    if filters is None:
        filters = STATE.warning_filters = Filters()
    return filters


def action(filters: Filters | None, text, category, module: str, lineno: int) -> str:
    """The action of the first filter that matches, as CPython's warn_explicit finds it."""
    items = _defaults() if filters is None else filters.items
    for act, msg, cat, mod, ln in items:
        if ((msg is None or msg.match(text)) and issubclass(category, cat)
                and (mod is None or (mod == module if mod.__class__ is str else mod.match(module)))
                and (ln == 0 or lineno == ln)):
            return act
    return "default"


def seen(filters: Filters | None, act: str, registry: set, key: tuple) -> bool:
    """Whether a warning whose filter says `act` was shown already where it counts (CPython's registries);
    records it as shown. `key` is (module, text, category, line)."""
    if act == "always":
        return False
    if key in registry:
        return True
    registry.add(key)
    if act == "once":
        once = filters.once if filters is not None else set()
        if key[1:3] in once:
            return True
        once.add(key[1:3])
    elif act == "module":
        whole = key[:3] + (0,)
        if whole in registry:
            return True
        registry.add(whole)
    return False


class WarningMessage:
    """What catch_warnings(record=True) lists: one warning's message, category, filename, lineno, ..."""

    __slots__ = ("message", "category", "filename", "lineno", "file", "line", "source")

    def __init__(self, message, category, filename, lineno, file=None, line=None, source=None):
        self.message, self.category, self.filename, self.lineno = message, category, filename, lineno
        self.file, self.line, self.source = file, line, source

    def __str__(self) -> str:
        return (f"{{message : {self.message!r}, category : {self.category.__name__!r}, filename : "
                f"{self.filename!r}, lineno : {self.lineno}, line : {self.line!r}}}")


ATTRIBUTES = frozenset(WarningMessage.__slots__)


def warn(*args, **kwargs):
    """warnings.warn(message, category=None, stacklevel=1, source=None), CPython's C function's checks."""
    names = ("message", "category", "stacklevel", "source")
    if len(args) > 4:
        raise TypeError(f"warn() takes at most 4 arguments ({len(args) + len(kwargs)} given)")
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"'{k}' is an invalid keyword argument for warn()")
        if k in given:
            position = names.index(k) + 1
            raise TypeError(f"argument for warn() given by name ('{k}') and position ({position})")
        given[k] = v
    if "message" not in given:
        raise TypeError("warn() missing required argument 'message' (pos 1)")
    message, category = given["message"], given.get("category")
    stacklevel = given.get("stacklevel", 1)
    if stacklevel.__class__ is not int:
        stacklevel = _index(stacklevel)
    if isinstance(message, Warning):
        category = message.__class__
    elif category is None:
        category = UserWarning
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"category must be a Warning subclass, not '{_type_name(category)}'")
    STATE.warn(category, message, stacklevel)


def _index(n) -> int:
    if isinstance(n, float) or not hasattr(type(n), "__index__"):
        raise TypeError(f"'{_type_name(n)}' object cannot be interpreted as an integer")
    return n.__index__()


def _type_name(x) -> str:
    from gradcli.language import stdlib
    return stdlib.type_name(x)


def _check_action(action) -> None:
    if action not in ACTIONS:
        raise AssertionError(f"invalid action: {action!r}")


def _check_lineno(lineno) -> None:
    if not (isinstance(lineno, int) and lineno >= 0):
        raise AssertionError("lineno must be an int >= 0")


def _pattern(text: str, flags: int = 0):
    """re.compile(text, flags) for a filter, refusing what could run without end in C."""
    if len(text) > _MAX_PATTERN:
        raise ValueError(f"a warnings filter pattern of {len(text)} characters is outside gradcli's language "
                         f"(at most {_MAX_PATTERN})")
    compiled = re.compile(text, flags)
    if _can_backtrack_without_bound(text, flags):
        raise ValueError(f"the warnings filter pattern {text!r} repeats a repetition or alternatives: outside "
                         "gradcli's language (its matching time could grow without bound)")
    return compiled


def _can_backtrack_without_bound(text: str, flags: int) -> bool:
    """Whether a repetition in the pattern holds another repetition or a branch: the shapes whose matching
    time grows exponentially with the text (`(a+)+$`, `(a|a)*$`)."""
    try:
        from re import _parser as parser          # (CPython 3.11's sre_parse)
    except ImportError:                           # pragma: no cover
        import sre_parse as parser
    constants = parser
    repeats = (constants.MAX_REPEAT, constants.MIN_REPEAT, getattr(constants, "POSSESSIVE_REPEAT", None))
    stack = [(parser.parse(text, flags), False)]
    while stack:
        items, inside = stack.pop()
        for op, av in items:
            if op in repeats:
                low, high, sub = av
                if inside:
                    return True
                stack.append((sub, high > 1))
            elif op is constants.BRANCH:
                if inside:
                    return True
                stack.extend((branch, inside) for branch in av[1])
            elif op is constants.SUBPATTERN:
                stack.append((av[-1], inside))
            elif op in (constants.ASSERT, constants.ASSERT_NOT):
                stack.append((av[1], inside))
            elif op is getattr(constants, "ATOMIC_GROUP", None):      # (it backtracks inside while it matches)
                stack.append((av, inside))
            elif op is constants.GROUPREF_EXISTS:
                stack.extend((branch, inside) for branch in av[1:] if branch is not None)
    return False


def _add(item: tuple, append: bool) -> None:
    filters = current()
    if not append:
        try:
            filters.items.remove(item)
        except ValueError:
            pass
        filters.items.insert(0, item)
    elif item not in filters.items:
        filters.items.append(item)
    filters.changed()


def filterwarnings(action, message="", category=Warning, module="", lineno=0, append=False):
    """Insert a filter: action for warnings whose text matches `message` (a regular expression, any case),
    whose category is `category` or a subclass, from a module matching `module`, at line `lineno` (0: any)."""
    _check_action(action)
    if not isinstance(message, str):
        raise AssertionError("message must be a string")
    if not isinstance(category, type):
        raise AssertionError("category must be a class")
    if not issubclass(category, Warning):
        raise AssertionError("category must be a Warning subclass")
    if not isinstance(module, str):
        raise AssertionError("module must be a string")
    _check_lineno(lineno)
    _add((action, _pattern(message, re.I) if message else None, category, _pattern(module) if module else None,
          lineno), append=append)


def simplefilter(action, category=Warning, lineno=0, append=False):
    """Insert a filter for every message and module."""
    _check_action(action)
    _check_lineno(lineno)
    _add((action, None, category, None, lineno), append=append)


def resetwarnings():
    """Clear the filters, CPython's defaults included: every warning then shows once per place."""
    filters = current()
    filters.items[:] = []
    filters.changed()


def formatwarning(message, category, filename, lineno, line=None):
    """A warning's text as shown on stderr (the script's line, if given, below it)."""
    text = f"{filename}:{lineno}: {category.__name__}: {message}\n"
    if line:
        text += f"  {line.strip()}\n"
    return text


class catch_warnings:
    """A context manager that keeps the filters as they were on entering and puts them back on leaving;
    with record=True it lists the warnings given inside instead of showing them."""

    __slots__ = ("_record", "_filter", "_entered", "_saved")

    def __init__(self, *, record=False, module=None, action=None, category=Warning, lineno=0, append=False):
        if module is not None:
            raise TypeError("catch_warnings(module=...) is outside gradcli's language")
        self._record = record
        self._filter = None if action is None else (action, category, lineno, append)
        self._entered = False
        self._saved = None

    def __repr__(self) -> str:
        return "catch_warnings(record=True)" if self._record else "catch_warnings()"

    def __enter__(self):
        if self._entered:
            raise RuntimeError(f"Cannot enter {self!r} twice")
        self._entered = True
        self._saved = current()
        inner = STATE.warning_filters = self._saved.copy()
        if self._filter is not None:
            simplefilter(*self._filter)
        if self._record:
            inner.record = []
            return inner.record
        return None

    def __exit__(self, *exc_info):
        if not self._entered:
            raise RuntimeError(f"Cannot exit {self!r} without entering first")
        STATE.warning_filters = self._saved
        self._saved.changed()           # a place that warned inside may warn again, as after CPython's exit
        return None


def members() -> dict:
    from gradcli.language import access
    from gradcli.language.stdlib import Builtin
    access.allow_held(WarningMessage, ATTRIBUTES)        # what catch_warnings(record=True) lists: all readable
    out = {name: Builtin("warnings", name, fn) for name, fn in (
        ("warn", warn), ("filterwarnings", filterwarnings), ("simplefilter", simplefilter),
        ("resetwarnings", resetwarnings), ("formatwarning", formatwarning))}
    out["warn"] = Builtin("builtins", "warn", warn)         # CPython's C function
    out["catch_warnings"] = Builtin("warnings", "catch_warnings", catch_warnings)
    return out


def category_class(category):
    """The class of a category the engine names ("UserWarning"), or the class itself."""
    return getattr(builtins, category) if category.__class__ is str else category
