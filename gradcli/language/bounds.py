"""The language's bounds: integers past MAX_INT_BITS and strings, lists and tuples past the budget's
STATE.max_items are refused before they are built (`**`, `<<`, `*`, `+`, `%`, format specs, and the builtins,
methods and math functions below), and C loops over long ranges run in slices, so the deadline's timer
can stop them and the report can say where.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from types import MappingProxyType

from gradcli.engine.state import STATE

# Integers past MAX_INT_BITS would make single operations slow enough to matter: at a million bits a
# product takes 0.1 s and a division or gcd under a second, and they run in C, where the timer cannot
# stop them (only the supervisor can, by ending the process). At four million bits, division took 15 s
# and gcd 25 s.
MAX_INT_BITS = 1_000_000    # about 300,000 decimal digits
CHUNK = 1 << 20             # C loops over longer ranges run in slices of this size, so the timer can stop them


def _too_many(kind: str, n: int) -> MemoryError:
    return MemoryError(f"a {kind} of {n} items is too large (gradcli allows at most {STATE.max_items})")


def built_too_many(kind: str) -> MemoryError:
    """A comprehension that built more items than a list may hold."""
    return MemoryError(f"a {kind} of more than {STATE.max_items} items is too large (gradcli allows at most "
                       f"{STATE.max_items})")


def _int_too_large(what: str = "") -> MemoryError:
    return MemoryError(f"{what}integer results are limited to about 300,000 digits in gradcli")


_SEQUENCES = (str, list, tuple, bytes)      # (bytes: what an io.BytesIO holds)


def _sequence(x) -> bool:
    """Whether `x * n` and `x + y` build a sequence as long as the operands together (a deque with a
    maxlen keeps only that many)."""
    return isinstance(x, _SEQUENCES) or (x.__class__ is deque and x.maxlen is None)


def _count(n):
    """`n` as a repetition count, or None when it is not one (the operation then fails by itself)."""
    if n.__class__ is int:
        return n
    if n.__class__ is bool or n.__class__ in _SEQUENCES or n.__class__ is float:
        return None
    try:
        return n.__index__()
    except Exception:
        return None


def _check_mul(a, b) -> None:
    if a.__class__ is int and b.__class__ is int:
        if a and b and a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise _int_too_large()
        return
    for seq, n in ((a, b), (b, a)):
        if _sequence(seq):
            n = _count(n)
            if n is not None and n > 0 and len(seq) * n > STATE.max_items:
                if n > sys.maxsize:             # CPython's own error, before any memory is asked for
                    raise OverflowError("cannot fit 'int' into an index-sized integer")
                raise _too_many(type(seq).__name__, len(seq) * n)


def _check_add(a, b) -> None:
    if _sequence(a) and _sequence(b) and len(a) + len(b) > STATE.max_items:
        raise _too_many(type(a).__name__, len(a) + len(b))


def _check_pow(a, b) -> None:
    if a.__class__ is int and b.__class__ is int and b > 0 and abs(a) > 1:
        if b * math.log2(abs(a)) > MAX_INT_BITS:
            raise _int_too_large(f"{a if abs(a) < 10**6 else 'integer'} ** {b} is too large: ")


def _check_lshift(a, b) -> None:
    if a.__class__ is int and b.__class__ is int and a and b > 0 and a.bit_length() + b > MAX_INT_BITS:
        raise _int_too_large()


def _check_mod(a, b) -> None:
    if a.__class__ is str and "%" in a:
        check_percent_format(a, b)
        # '%s%s' % (s, s): each string given is written once (a mapping's may be named again: not counted)
        n = len(a) + sum([len(v) for v in (b if b.__class__ is tuple else (b,)) if v.__class__ is str])
        if n > STATE.max_items:
            raise _too_many("str", n)


# operator name (compiler.py's) -> check(a, b), run before the operation on any operands that are
# not tensors; the rest of the operators cannot grow a value past its operands' size
BINOP_CHECKS = {"mul": _check_mul, "add": _check_add, "pow": _check_pow, "lshift": _check_lshift,
                "mod": _check_mod}


def _width(digits: str) -> int:
    return int(digits) if len(digits) < 12 else STATE.max_items + 1


def check_format_spec(spec: str) -> None:
    """A format spec (f'{x:>{w}}') whose width or precision would build a huge string."""
    run = ""
    for ch in spec + " ":
        if "0" <= ch <= "9":
            run += ch
        elif run:
            if _width(run) > STATE.max_items:
                raise MemoryError(f"format width or precision {run} is too large (gradcli allows at most "
                                  f"{STATE.max_items})")
            run = ""


def check_percent_format(fmt: str, args) -> None:
    """`fmt % args`: widths and precisions, written in fmt or taken from args by '*'."""
    i, n = 0, len(fmt)
    while True:
        i = fmt.find("%", i)
        if i < 0 or i + 1 >= n:
            return
        j = i + 1
        while j < n and fmt[j] in "-+ #0":
            j += 1
        if j < n and fmt[j] == "(":                 # %(name)s: a mapping key
            j = fmt.find(")", j) + 1 or n
            while j < n and fmt[j] in "-+ #0":
                j += 1
        for _ in range(2):                          # the width, then the precision after a '.'
            start = j
            while j < n and fmt[j].isdigit():
                j += 1
            if j > start:
                check_format_spec(fmt[start:j])
            elif j < n and fmt[j] == "*":
                for v in (args if args.__class__ is tuple else (args,)):
                    if v.__class__ is int and abs(v) > STATE.max_items:
                        raise MemoryError(f"format width or precision {abs(v)} is too large (gradcli allows "
                                          f"at most {STATE.max_items})")
                j += 1
            if j < n and fmt[j] == ".":
                j += 1
            else:
                break
        i = j + 1 if j < n and fmt[j] == "%" else j


# ---- builtins, methods and math functions that can build big values

class Bounded:
    """A builtin, method or math function with a bound on what it builds; shown as the original."""

    __slots__ = ("fn", "shown", "original")

    def __init__(self, original, fn):
        self.fn = fn
        self.shown = repr(original)
        self.original = original        # what it stands for (list, dict, ...: isinstance takes it as the class)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return self.shown

    # `list | None` in an annotation: a union, as the class it stands for makes (gradcli.language.pytyping)
    def __or__(self, other):
        return _union(self, other) if isinstance(self.original, type) else NotImplemented

    def __ror__(self, other):
        return _union(other, self) if isinstance(self.original, type) else NotImplemented


def _union(left, right):
    return UNION_OR[0](left, right)


# typing's `a | b` for classes (gradcli.language.pytyping.union_or), set where that module may be imported
# from (gradcli.session): pytyping sits above this module
UNION_OR = [None]


class BoundedMethod:
    """`obj.name` for a method of BOUNDED_METHODS: calls fn(obj, ...), shown as the original method."""

    __slots__ = ("obj", "name", "fn")

    def __init__(self, obj, name: str, fn):
        self.obj, self.name, self.fn = obj, name, fn

    def __call__(self, *args, **kwargs):
        return self.fn(self.obj, *args, **kwargs)

    def __repr__(self) -> str:
        return repr(getattr(self.obj, self.name))


def take(iterable, kind: str, room: int | None = None) -> list:
    """The items of `iterable` as a list, refusing more than `room` (MAX_ITEMS) of them before building
    them all."""
    if room is None:
        room = STATE.max_items
    if iterable.__class__ in (list, tuple, str, range):
        n = len(iterable)
        if n > room:
            raise _too_many(kind, n)
        return list(iterable)
    it = iter(iterable)
    out = []
    append = out.append
    for x in it:
        append(x)
        if len(out) > room:
            raise MemoryError(f"a {kind} of more than {room} items is too large (gradcli allows at most "
                              f"{STATE.max_items})")
    return out




# Each bounded function takes the original's arguments as they come and, after its check, calls the
# original with them, so wrong arguments get Python's own messages.

def _list(*args, **kwargs):
    if len(args) == 1 and not kwargs:
        return take(args[0], "list")
    return list(*args, **kwargs)


def _tuple(*args, **kwargs):
    if len(args) == 1 and not kwargs and args[0].__class__ is not tuple:
        return tuple(take(args[0], "tuple"))
    return tuple(*args, **kwargs)


def _sorted(*args, **kwargs):
    if len(args) == 1:
        return sorted(take(args[0], "list"), **kwargs)
    return sorted(*args, **kwargs)


def _sum(*args, **kwargs):
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if args and isinstance(start, (list, tuple)):
        items = take(args[0], "list")
        total = len(start)
        for x in items:
            if isinstance(x, (list, tuple)):
                total += len(x)
                if total > STATE.max_items:
                    raise _too_many(type(start).__name__, total)
        return sum(items, *args[1:], **kwargs)
    return sum(*args, **kwargs)


_POWMOD_WORK = 2e7      # pow(b, e, m) costs about bits(e) * (bits(m) / 64) ** 1.6 of these: 25 s at 3e8


def _pow(*args, **kwargs):
    if len(args) == 2 and not kwargs:
        _check_pow(*args)
    elif len(args) == 3 and not kwargs and all(a.__class__ is int for a in args):
        e, m = args[1].bit_length(), args[2].bit_length()
        if e * max(1.0, m / 64) ** 1.6 > _POWMOD_WORK:
            raise MemoryError(f"pow() with a {e}-bit exponent and a {m}-bit modulus is too large to compute "
                              "in gradcli")
    return pow(*args, **kwargs)


# ---- C loops over long ranges: sum(range(10**12)) would hold the interpreter for hours, where no
# signal is seen; in slices, the deadline's timer gets its turn between two of them.

def _long_range(x) -> bool:
    if x.__class__ is not range:
        return False
    try:
        return len(x) > CHUNK
    except OverflowError:           # more than sys.maxsize items
        return True


def _slices(r: range):
    i = 0
    while True:
        piece = r[i:i + CHUNK]
        if not piece:
            return
        yield piece
        i += CHUNK


def _sum_range(*args, **kwargs):
    if args and _long_range(args[0]):
        total = args[1] if len(args) > 1 else kwargs.get("start", 0)
        for piece in _slices(args[0]):
            total = total + sum(piece)
        return total
    return _sum(*args, **kwargs)


def _extreme(builtin):
    def fn(*args, **kwargs):
        if len(args) == 1 and _long_range(args[0]) and set(kwargs) <= {"key", "default"}:
            key = kwargs.get("key")
            best = [builtin(piece, key=key) for piece in _slices(args[0])]
            return builtin(best, key=key)
        return builtin(*args, **kwargs)
    return fn


def _any(*args):
    if len(args) == 1 and _long_range(args[0]):
        return any(any(piece) for piece in _slices(args[0]))
    return any(*args)


def _all(*args):
    if len(args) == 1 and _long_range(args[0]):
        return all(all(piece) for piece in _slices(args[0]))
    return all(*args)


def contains(container, item) -> bool:
    """`item in container`; an int in a range is O(1), anything else is a scan, sliced when long."""
    if container.__class__ is range and item.__class__ is not int and _long_range(container):
        for piece in _slices(container):
            if item in piece:
                return True
        return False
    try:
        return item in container
    except TypeError:
        warn = CONTAINS_WARNINGS.get(container.__class__)
        if warn is not None:
            warn(container, item)
        raise


# What Python warns of before an `in` it refuses, by the container's class -> a function (container, item) that
# gives the warning through the session (CPython's enum: `1 in Act` is a DeprecationWarning, then a TypeError)
CONTAINS_WARNINGS: dict = {}


def _range_count(r, *args):
    if len(args) == 1 and args[0].__class__ is not int and _long_range(r):
        return sum(piece.count(args[0]) for piece in _slices(r))
    return r.count(*args)


def _range_index(r, *args):
    if len(args) == 1 and args[0].__class__ is not int and _long_range(r):
        for n, piece in enumerate(_slices(r)):
            if args[0] in piece:
                return n * CHUNK + piece.index(args[0])
    return r.index(*args)


def _round(*args, **kwargs):
    if len(args) == 2 and not kwargs:
        number, ndigits = args
        if number.__class__ is int and ndigits.__class__ is int and ndigits < 0 \
                and -ndigits > number.bit_length() // 3 + 2:
            # |number| < 10**-ndigits / 2: Python's answer is 0, after computing 10**-ndigits (for ages)
            return 0
    return round(*args, **kwargs)


def _factorial(*args):
    if len(args) == 1:
        n = args[0]
        if n.__class__ is int and 1 < n < 1 << 63 and math.lgamma(n + 1) / math.log(2) > MAX_INT_BITS:
            raise _int_too_large(f"factorial({n}) is too large: ")
    return math.factorial(*args)


def _log2_product(n: int, k: int) -> float:
    """log2 of n * (n-1) * ... * (n-k+1), without computing it."""
    if k * n.bit_length() <= MAX_INT_BITS:
        return 0.0                  # below n**k, so small enough whatever it is
    if n >= 1 << 1000:
        return math.inf
    return (math.lgamma(n + 1) - math.lgamma(n - k + 1)) / math.log(2)


def _comb(*args):
    if len(args) == 2 and args[0].__class__ is int and args[1].__class__ is int:
        n, k = args
        k = min(k, n - k)
        if k > 0 and _log2_product(n, k) - math.lgamma(k + 1) / math.log(2) > MAX_INT_BITS:
            raise _int_too_large(f"comb({n}, {args[1]}) is too large: ")
    return math.comb(*args)


def _perm(*args):
    if args and all(a.__class__ is int for a in args) and len(args) <= 2:
        n = args[0]
        k = args[1] if len(args) == 2 else n
        if 0 < k <= n and _log2_product(n, k) > MAX_INT_BITS:
            raise _int_too_large(f"perm({n}, {k}) is too large: ")
    return math.perm(*args)


def _prod(*args, **kwargs):
    if len(args) == 1:
        items = take(args[0], "list")
        start = kwargs.get("start", 1)
        bits = start.bit_length() if start.__class__ is int else 0
        for x in items:
            if x.__class__ is int:
                bits += x.bit_length()
        if bits > MAX_INT_BITS:
            raise _int_too_large()
        return math.prod(items, **kwargs)
    return math.prod(*args, **kwargs)


def _lcm(*args):
    """lcm(a, b, ...) is at most their product: refused when that could pass MAX_INT_BITS."""
    if sum(a.bit_length() for a in args if a.__class__ is int) > MAX_INT_BITS:
        raise _int_too_large()
    return math.lcm(*args)


def _fsum(*args):
    return math.fsum(take(args[0], "list")) if len(args) == 1 else math.fsum(*args)


def _collection(kind):
    """dict, set or frozenset of an iterable: its items are taken as a list first, within the bound
    (a dict, set or frozenset given as it is, and a mapping proxy: a class's __dict__, a Pattern's groupindex)."""
    def fn(*args, **kwargs):
        if len(args) == 1 and not isinstance(args[0], (dict, set, frozenset, MappingProxyType)):
            args = (take(args[0], "list"),)
        return kind(*args, **kwargs)
    return fn


def bounded_builtins() -> dict:
    import builtins
    table = {"list": _list, "tuple": _tuple, "sorted": _sorted, "sum": _sum_range, "pow": _pow, "round": _round,
             "min": _extreme(min), "max": _extreme(max), "any": _any, "all": _all, "dict": _collection(dict),
             "set": _collection(set), "frozenset": _collection(frozenset)}
    return {name: Bounded(getattr(builtins, name), fn) for name, fn in table.items()}


def bounded_math() -> dict:
    table = {"factorial": _factorial, "comb": _comb, "perm": _perm, "prod": _prod, "fsum": _fsum, "lcm": _lcm}
    return {name: Bounded(getattr(math, name), fn) for name, fn in table.items() if hasattr(math, name)}


def _widened(name: str):
    method = getattr(str, name)

    def fn(s, /, *args, **kwargs):
        if args and args[0].__class__ is int and args[0] > STATE.max_items:
            raise _too_many("str", args[0])
        return method(s, *args, **kwargs)
    return fn


def _replace(s, /, *args, **kwargs):
    if len(args) >= 2 and args[0].__class__ is str and args[1].__class__ is str:
        old, new = args[0], args[1]
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        if len(new) > len(old):
            times = s.count(old) if old else len(s) + 1
            if count.__class__ is int and count >= 0:
                times = min(times, count)
            n = len(s) + times * (len(new) - len(old))
            if n > STATE.max_items:
                raise _too_many("str", n)
    return s.replace(*args, **kwargs)


def _expandtabs(s, /, *args, **kwargs):
    size = args[0] if args else kwargs.get("tabsize", 8)
    if size.__class__ is int and size > 1:
        n = len(s) + s.count("\t") * (size - 1)       # at most: each tab fills to the next stop
        if n > STATE.max_items:
            raise _too_many("str", n)
    return s.expandtabs(*args, **kwargs)


def _translate(s, *args):
    """str.translate: the table is read once for each distinct character (as CPython reads it, a
    LookupError leaving the character as it is), so the result's length is known before it is built."""
    if len(args) != 1:
        return s.translate(*args)
    table, plain = args[0], {}
    for c in set(s):
        try:
            plain[ord(c)] = table[ord(c)]
        except LookupError:
            pass
    n = len(s)
    for code, value in plain.items():
        if value.__class__ is str and len(value) > 1:
            n += s.count(chr(code)) * (len(value) - 1)
    if n > STATE.max_items:
        raise _too_many("str", n)
    return s.translate(plain)


def _join(sep, /, *args, **kwargs):
    if len(args) == 1 and not kwargs:
        items = take(args[0], "list")
        n = len(sep) * max(len(items) - 1, 0)
        for x in items:
            if x.__class__ is str:
                n += len(x)
        if n > STATE.max_items:
            raise _too_many("str", n)
        return sep.join(items)
    return sep.join(*args, **kwargs)


def _extend(lst, /, *args, **kwargs):
    if len(args) == 1 and not kwargs:
        return lst.extend(take(args[0], "list", STATE.max_items - len(lst)))
    return lst.extend(*args, **kwargs)


def _dict_update(d, /, *args, **kwargs):
    """dict.update from pairs: the pairs are taken as a list first, within the bound (a dict as it is)."""
    if len(args) == 1 and not isinstance(args[0], dict):
        args = (take(args[0], "list", STATE.max_items - len(d)),)
    return d.update(*args, **kwargs)


def _set_method(name: str):
    """A set method that takes iterables (union, update, issubset, ...): each is taken as a list first,
    within the bound, so a huge range cannot hold the interpreter in C."""
    method = getattr(set, name)

    def fn(s, *args):
        return method(s, *[a if a.__class__ in (set, frozenset, dict) else take(a, "list") for a in args])
    return fn


_SET_ITERABLE_METHODS = ("difference", "difference_update", "intersection", "intersection_update", "isdisjoint",
                         "issubset", "issuperset", "symmetric_difference", "symmetric_difference_update",
                         "union", "update")

# type -> {method name: function(obj, *args)}, for access.py's table of script-facing methods
def _random_choices(rng, /, *args, **kwargs):
    k = kwargs.get("k", 1)
    if k.__class__ is int and k > STATE.max_items:
        raise _too_many("list", k)
    return rng.choices(*args, **kwargs)


def _random_sample(rng, /, *args, **kwargs):
    k = args[1] if len(args) > 1 else kwargs.get("k")
    if k.__class__ is int and k > STATE.max_items:
        raise _too_many("list", k)
    return rng.sample(*args, **kwargs)


def _random_getrandbits(rng, *args):
    if args and args[0].__class__ is int and args[0] > MAX_INT_BITS:
        raise _int_too_large()
    return rng.getrandbits(*args)


# Python's random module: what a random.Random builds, bounded (k items, k bits)
RANDOM_METHODS = {"choices": _random_choices, "sample": _random_sample, "getrandbits": _random_getrandbits}

def _pools(fn, every: bool):
    """An itertools function that first copies the iterables it is given into tuples (product copies
    every positional argument; permutations, combinations and cycle their first): the copies are
    bounded as lists are."""
    def bounded(*args, **kwargs):
        if every:
            args = [take(a, "list") for a in args]
        elif args:
            args = [take(args[0], "list"), *args[1:]]
        return fn(*args, **kwargs)
    return bounded


def bounded_itertools() -> dict:
    import itertools
    every = {"product": True, "permutations": False, "combinations": False, "combinations_with_replacement": False,
             "cycle": False}
    return {name: Bounded(getattr(itertools, name), _pools(getattr(itertools, name), all_args))
            for name, all_args in every.items()}


BOUNDED_METHODS = {
    str: {"center": _widened("center"), "ljust": _widened("ljust"), "rjust": _widened("rjust"),
          "zfill": _widened("zfill"), "replace": _replace, "join": _join, "expandtabs": _expandtabs,
          "translate": _translate},
    list: {"extend": _extend},
    dict: {"update": _dict_update},
    set: {name: _set_method(name) for name in _SET_ITERABLE_METHODS},
    range: {"count": _range_count, "index": _range_index},
}                                   # (random.Random: RANDOM_METHODS, once a script imports random: access.py)
