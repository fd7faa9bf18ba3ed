"""Python's "Did you mean" for an uncaught NameError or AttributeError, chosen as CPython 3.11 chooses it.

When Python reports an unknown name or attribute it looks for a close one: among the function's local
variables, then the module's globals, then the builtins (for a name), or in `dir(obj)` (for an attribute),
each list read in its own order and skipped whole when it holds 750 names or more. The distance is
Levenshtein's over the names' UTF-8 bytes, with a cost of 2 for an insertion, deletion or substitution and 1
for a substitution that changes only ASCII case, after the common start and end are cut off; a name
qualifies when no more than about a third of the characters involved change, and the first closest one wins.

The compiler and the attribute reader attach what this needs to the exceptions they raise (`name`, and
`obj` or the lists of names in scope); `offer` runs only for an error that reaches the top of a script.
"""

from __future__ import annotations

import builtins

_MOVE, _CASE = 2, 1
_MAX_ITEMS, _MAX_LEN = 750, 40
# what CPython puts in a module's globals before the script's first statement, in its order
_MODULE_NAMES = ("__name__", "__doc__", "__package__", "__loader__", "__spec__", "__annotations__", "__builtins__")


def _cost(a: int, b: int) -> int:
    if a == b:
        return 0
    if 65 <= a <= 90:
        a += 32
    if 65 <= b <= 90:
        b += 32
    return _CASE if a == b else _MOVE


def distance(a: bytes, b: bytes, limit: int) -> int:
    """The weighted edit distance of a and b, or limit + 1 once it is certain to exceed limit."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    end = 0
    while end < len(a) and end < len(b) and a[-1 - end] == b[-1 - end]:
        end += 1
    if end:
        a, b = a[:-end], b[:-end]
    if not a or not b:
        return (len(a) + len(b)) * _MOVE
    if len(a) > _MAX_LEN or len(b) > _MAX_LEN:
        return limit + 1
    if len(b) < len(a):
        a, b = b, a
    if (len(b) - len(a)) * _MOVE > limit:
        return limit + 1
    row = [(i + 1) * _MOVE for i in range(len(a))]      # cost of a[:i+1] from b[:0]
    result = 0
    for j, cb in enumerate(b):
        diagonal = result = j * _MOVE                    # cost of b[:j] from a[:0]
        lowest = None
        for i, ca in enumerate(a):
            substitute = diagonal + _cost(cb, ca)
            diagonal = row[i]
            result = min(min(result, diagonal) + _MOVE, substitute)
            row[i] = result
            if lowest is None or result < lowest:
                lowest = result
        if lowest > limit:
            return limit + 1
    return result


def closest(names, wrong: str) -> str | None:
    """The first of `names` closest to `wrong` within a third of the characters, else None."""
    names = list(names)
    if len(names) >= _MAX_ITEMS:
        return None
    target = wrong.encode("utf-8", "surrogatepass")
    best, best_distance = None, None
    for name in names:
        if name.__class__ is not str or name == wrong:
            continue
        item = name.encode("utf-8", "surrogatepass")
        limit = (len(target) + len(item) + 3) * _MOVE // 6
        if best_distance is not None:
            limit = min(limit, best_distance - 1)
        d = distance(target, item, limit)
        if d <= limit and (best is None or d < best_distance):
            best, best_distance = name, d
    return best


def for_name(wrong: str, local_names, globals_: dict) -> str | None:
    """The suggestion for an unknown name: the function's locals, then the globals, then the builtins."""
    if local_names:
        found = closest(local_names, wrong)
        if found is not None:
            return found
    module = [n for n in _MODULE_NAMES if n not in globals_] + list(globals_)
    return closest(module, wrong) or closest(vars(builtins), wrong)


def offer(e: BaseException, python_dir=None) -> str | None:
    """The name to suggest for an uncaught NameError or AttributeError, or None. `python_dir(obj)` gives
    dir(obj) as PyTorch and Python would list it (None where gradcli cannot know it)."""
    wrong = getattr(e, "name", None)
    if wrong.__class__ is not str:
        return None
    if isinstance(e, NameError):
        from gradcli.language.compiler import NAMES_IN_SCOPE        # (loaded: it raised the error)
        names = getattr(e, NAMES_IN_SCOPE, None)
        if names is None:
            return None
        local_names, globals_ = names()
        return for_name(wrong, local_names, globals_)
    if isinstance(e, AttributeError) and python_dir is not None:
        try:
            listed = python_dir(e.obj)
        except Exception:
            return None
        if listed is not None:
            return closest(listed, wrong)
    return None
