"""Python's collections module as scripts reach it: CPython's own defaultdict, Counter, OrderedDict and
deque, and namedtuple with CPython's checks, with everything they copy, count or repeat bounded."""

from __future__ import annotations

import collections as _collections
import itertools
import weakref

from gradcli.language import bounds
from gradcli.engine.state import STATE

defaultdict, Counter, OrderedDict, deque = (_collections.defaultdict, _collections.Counter,
                                            _collections.OrderedDict, _collections.deque)

# More fields than this make namedtuple compile a constructor for seconds (100,000 fields: 0.7 s)
MAX_FIELDS = 10_000

# The classes namedtuple made for scripts: their instances' fields and _fields, _asdict, _replace and
# _make are in the language (gradcli.language.access). Weak, so a class lives only while a script holds it.
NAMEDTUPLES: weakref.WeakSet = weakref.WeakSet()
NAMEDTUPLE_METHODS = frozenset(("count", "index", "_fields", "_asdict", "_replace", "_make"))
NAMEDTUPLE_CLASS_ATTRS = frozenset(("_fields", "_make"))


def is_namedtuple_class(obj) -> bool:
    return isinstance(obj, type) and obj in NAMEDTUPLES


def holds(obj, name: str) -> bool:
    """Whether `obj.name` is a value the object holds (a namedtuple's field, a defaultdict's factory),
    not a method: a function held there is given as it is."""
    cls = obj.__class__
    if cls is defaultdict:
        return name == "default_factory"
    if cls in NAMEDTUPLES:
        return name in cls._fields or name in SCRIPT_MEMBERS.get(cls, ())
    return isinstance(obj, type) and obj in NAMEDTUPLES and name in SCRIPT_MEMBERS.get(obj, ())


def _items(args: tuple) -> tuple:
    """The positional arguments of a constructor or update, an iterable among them taken as a list
    within the bound first (a mapping as it is: it is already in memory)."""
    if len(args) == 1 and not isinstance(args[0], dict):
        return (bounds.take(args[0], "list"),)
    return args


def _defaultdict(*args, **kwargs):
    if len(args) == 2 and not isinstance(args[1], dict):
        args = (args[0], bounds.take(args[1], "list"))
    return defaultdict(*args, **kwargs)


def _counter(*args, **kwargs):
    return Counter(*_items(args), **kwargs)


def _ordereddict(*args, **kwargs):
    return OrderedDict(*_items(args), **kwargs)


def _deque(*args, **kwargs):
    if not args:
        return deque(*args, **kwargs)
    maxlen = args[1] if len(args) > 1 else kwargs.get("maxlen")
    if maxlen is None:
        return deque(bounds.take(args[0], "list"), *args[1:], **kwargs)
    # deque(iterable, maxlen=3) keeps the last three of any number: fed in slices, so the deadline's
    # timer can stop a long run (in one C loop it could not)
    d = deque((), *args[1:], **kwargs)
    it = iter(args[0])
    while True:
        piece = list(itertools.islice(it, bounds.CHUNK))
        if not piece:
            return d
        d.extend(piece)


def counter_update(counter, /, *args, **kwargs):
    return counter.update(*_items(args), **kwargs)


def counter_subtract(counter, /, *args, **kwargs):
    return counter.subtract(*_items(args), **kwargs)


def counter_elements(counter):
    """Counter.elements(): CPython's chain of repeats, each repeat at most bounds.CHUNK long, so a count of
    10**18 is still iterated lazily and the deadline's timer can stop a C loop (sum(c.elements()))."""
    def pieces():
        for elem, count in counter.items():
            while count > bounds.CHUNK:
                yield itertools.repeat(elem, bounds.CHUNK)
                count -= bounds.CHUNK
            yield itertools.repeat(elem, count)
    return itertools.chain.from_iterable(pieces())


def dict_update(d, /, *args, **kwargs):
    return d.update(*_items(args), **kwargs)


def deque_extend(d, *args):
    if len(args) == 1 and d.maxlen is None:
        args = (bounds.take(args[0], "list", STATE.max_items - len(d)),)
    return d.extend(*args)


def deque_extendleft(d, *args):
    if len(args) == 1 and d.maxlen is None:
        args = (bounds.take(args[0], "list", STATE.max_items - len(d)),)
    return d.extendleft(*args)


# The attributes a typing.NamedTuple class's body gave it (its methods, properties, constants): readable as
# its fields are (gradcli.language.access)
SCRIPT_MEMBERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def named_tuple(typename: str, field_names: list, defaults: list, module) -> type:
    """A namedtuple class for typing.NamedTuple, with the checks of `namedtuple` below."""
    return _namedtuple(typename, field_names, defaults=defaults or None, module=module)


def _namedtuple(typename, field_names, *, rename=False, defaults=None, module=None):
    """namedtuple with CPython's own checks of the names (identifiers, no keywords, no '_' first, no
    repeats), which leave no text of the script's in the code namedtuple compiles. The class is
    `__main__`'s, as in a script CPython runs."""
    if field_names.__class__ is not str:
        field_names = bounds.take(field_names, "list")
        n = len(field_names)
    else:
        n = len(field_names.replace(",", " ").split())
    if n > MAX_FIELDS:
        raise MemoryError(f"a namedtuple of {n} fields is too large (gradcli allows at most {MAX_FIELDS})")
    if defaults is not None:
        defaults = bounds.take(defaults, "tuple")
    cls = _collections.namedtuple(typename, field_names, rename=rename, defaults=defaults,
                                  module="__main__" if module is None else module)
    NAMEDTUPLES.add(cls)
    return cls


def namedtuple_make(cls, iterable):
    """Point._make(iterable): the items taken within the bound before the tuple is built."""
    return cls._make(bounds.take(iterable, "tuple"))


def members() -> dict:
    """The module's names as scripts see them: each class prints as CPython's own."""
    table = {"defaultdict": _defaultdict, "Counter": _counter, "OrderedDict": _ordereddict, "deque": _deque}
    out = {name: bounds.Bounded(getattr(_collections, name), fn) for name, fn in table.items()}
    out["namedtuple"] = bounds.Bounded(_collections.namedtuple, _namedtuple)
    return out


# type -> {method: function(obj, *args)}: the bounded methods (gradcli.language.bounds.BOUNDED_METHODS)
BOUNDED_METHODS = {
    defaultdict: {"update": dict_update},
    OrderedDict: {"update": dict_update},
    Counter: {"update": counter_update, "subtract": counter_subtract, "elements": counter_elements},
    deque: {"extend": deque_extend, "extendleft": deque_extendleft},
}


def abc_members() -> dict:
    """collections.abc: Python's abstract classes themselves, for isinstance and issubclass."""
    import collections.abc as _abc
    return {name: getattr(_abc, name) for name in _abc.__all__}
