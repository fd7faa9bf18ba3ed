"""Python's `heapq` and `bisect` modules for scripts: CPython's own functions (a heap of the best losses, a sorted
list of thresholds). What they take whole (nlargest, nsmallest) is taken within the list bound first; the
script's `key` functions run as any call of the script's does; insort into something other than a list calls
its `insert` as a script reads it. Made on the first `import heapq` or `import bisect`."""

from __future__ import annotations

import bisect as _bisect
import heapq as _heapq

from gradcli.engine.tensor import Tensor
from gradcli.language import bounds

_HEAPQ_C = ("heappush", "heappop", "heapify", "heapreplace", "heappushpop")
_BISECT_C = ("bisect_left", "bisect_right")


def _taking(fn):
    """nlargest / nsmallest: CPython's, with the iterable taken within the list bound first (for n >= its size
    CPython sorts all of it; a generator without end would never stop)."""
    def bounded(n, iterable, key=None):
        return fn(n, bounds.take(iterable, "list"), key=key)
    bounded.__name__ = bounded.__qualname__ = fn.__name__
    return bounded


def _bisecting(fn):
    """bisect_left / bisect_right: CPython's; a tensor, which PyTorch defines with a subscript but not as a
    sequence, is refused as CPython refuses it there (once an item would be read)."""
    def bisect(a, x, lo=0, hi=None, *, key=None):
        if a.__class__ is Tensor:
            if lo.__class__ is int and lo < 0:
                raise ValueError("lo must be non-negative")
            if (len(a) if hi is None else hi) > lo:
                raise TypeError("Tensor is not a sequence")
        return fn(a, x, lo, hi, key=key)
    bisect.__name__ = bisect.__qualname__ = fn.__name__
    return bisect


def _insort(fn_list, bisect_fn, name: str):
    """insort_left / insort_right: CPython's for a list; for another sequence, its `insert` as the language reads
    it (CPython calls any object's insert method)."""
    def insort(a, x, lo=0, hi=None, *, key=None):
        if isinstance(a, list):
            return fn_list(a, x, lo, hi, key=key)
        from gradcli.language import access
        index = bisect_fn(a, x if key is None else key(x), lo, hi, key=key)
        access.get_method(a, "insert")(index, x)
        return None
    insort.__name__ = insort.__qualname__ = name
    return insort


def heapq_members() -> dict:
    from gradcli.language.stdlib import Builtin
    out = {name: Builtin("builtins", name, getattr(_heapq, name)) for name in _HEAPQ_C}
    out.update((name, Builtin("heapq", name, _taking(getattr(_heapq, name)))) for name in ("nlargest", "nsmallest"))
    out["merge"] = Builtin("heapq", "merge", _heapq.merge)       # lazy: it takes an item of each at a time
    return out


def bisect_members() -> dict:
    from gradcli.language.stdlib import Builtin
    out = {name: Builtin("builtins", name, _bisecting(getattr(_bisect, name))) for name in _BISECT_C}
    out["bisect"] = out["bisect_right"]
    for side in ("left", "right"):
        out["insort_" + side] = Builtin("builtins", "insort_" + side, _insort(
            getattr(_bisect, "insort_" + side), out["bisect_" + side].func, "insort_" + side))
    out["insort"] = out["insort_right"]
    return out
