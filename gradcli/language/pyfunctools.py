"""Python's functools module as scripts reach it: reduce, partial and cmp_to_key as CPython has them, and
gradcli's own lru_cache, cache, cached_property, total_ordering, partialmethod, singledispatch,
singledispatchmethod, wraps and update_wrapper, with CPython 3.11's semantics and messages.

CPython's decorators are Python functions and C types that would hand scripts their internals (a wrapper's
__dict__, the globals of functools' own functions) and print with heap addresses. These are gradcli's: the
functions they hold sit in slots no script reaches (gradcli.language.access lets scripts read a wrapper's
names, docstring and the methods CPython's has), each prints as CPython's with the address gradcli shows,
and the script's functions, __hash__ and __eq__ are called as Python calls them, as a dict key's are.

An lru_cache's keys are CPython's (a lone int or str argument as it is, else the arguments, a marker and the
keyword items in the order given, with their types when typed=True), hashed once a call; its order of
eviction is CPython's (least recently used first). A cache holds at most STATE.max_items entries, the bound
of the language's lists (gradcli.language.bounds): past it a call fails with MemoryError, so maxsize=None
cannot grow a cache beyond what --max-memory allows."""

from __future__ import annotations

import builtins
import functools as _functools
import sys
import weakref
from types import MappingProxyType, MethodType

from gradcli.engine.addresses import address
from gradcli.engine.state import STATE
from gradcli.language import access, bounds, classes, pycollections, stdlib
from gradcli.language.stdlib import Builtin

CacheInfo = _functools._CacheInfo      # CPython's named tuple: prints as functools.CacheInfo
pycollections.NAMEDTUPLES.add(CacheInfo)

_MISSING = object()


# ------------------------------------------------------------------------------------------- names

def _read(obj, name: str, default=None):
    """`obj.name` as the script would read it (what the language does not reach is missing)."""
    try:
        return access.read_attr(obj, name)
    except (AttributeError, NotImplementedError):
        return default


def _named_after(wrapper, wrapped) -> None:
    """What functools.update_wrapper copies, for gradcli's wrappers: name, qualified name, docstring,
    annotations, and __wrapped__."""
    wrapper.name = _read(wrapped, "__name__")
    wrapper.qualname = _read(wrapped, "__qualname__")
    wrapper.doc = _read(wrapped, "__doc__")
    wrapper.annotations = _read(wrapped, "__annotations__")
    wrapper.wrapped = wrapped
    attrs = getattr(wrapped, "attrs", None) if wrapped.__class__ in classes.FUNCTION_TYPES else None
    wrapper.attrs = dict(attrs) if attrs else None     # (CPython's wrapper.__dict__.update(wrapped.__dict__))


class _Wrapper:
    """What gradcli's function-like wrappers share: the names they copy from what they wrap, read by
    scripts as a function's (__name__, __qualname__, __doc__, __wrapped__), and binding as a method."""

    __slots__ = ("name", "qualname", "doc", "annotations", "wrapped", "attrs")
    kind = "function"       # the class CPython's messages name

    @property
    def __name__(self):
        if self.name is None:
            raise AttributeError(f"'{self.kind}' object has no attribute '__name__'")
        return self.name

    def __getattr__(self, name):        # (a class body cannot define __qualname__ as a property)
        if name == "__qualname__" and self.qualname is not None:
            return self.qualname
        if name == "__wrapped__" and self.wrapped is not _MISSING:
            return self.wrapped
        if name == "__annotations__" and self.annotations is not None:
            return self.annotations
        attrs = self.attrs
        if attrs is not None and name in attrs:
            return attrs[name]
        raise AttributeError(f"'{self.kind}' object has no attribute '{name}'")

    def __get__(self, obj, owner=None):
        return self if obj is None else MethodType(self, obj)

    def __repr__(self) -> str:
        return f"<function {self.qualname} at {address(self)}>"


class _Local(_Wrapper):
    """A function CPython's functools makes inside another, named as it names it
    (`singledispatch.<locals>.register`)."""

    __slots__ = ("_fn",)

    def __init__(self, qualname: str, fn):
        self.name, self.qualname = qualname.rpartition(".")[2], qualname
        self.doc, self.annotations, self.wrapped, self.attrs = None, None, _MISSING, None
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)


def _method(owner, name: str, fn) -> Builtin:
    """A method of one of CPython's C types, bound to `owner`: `<built-in method NAME of TYPE object at ...>`."""
    return Builtin(f"method of {owner.kind}", name, fn, owner)


# ---------------------------------------------------------------------------------- lru_cache, cache

class _Key:
    """A cache key that is not a lone int or str: the arguments, hashed once (as CPython hashes its key
    once a call), compared item by item."""

    __slots__ = ("items", "hash")

    def __init__(self, items: tuple):
        self.items = items
        self.hash = hash(items)

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        return other.__class__ is _Key and self.items == other.items


_KWD_MARK = object()       # between the positional arguments and the keyword items of a key


def _make_key(args: tuple, kwargs: dict, typed: bool):
    if not kwargs and not typed:
        if len(args) == 1 and (args[0].__class__ is int or args[0].__class__ is str):
            return args[0]
        return _Key(args)
    items = args
    if kwargs:
        items += (_KWD_MARK,)
        for item in kwargs.items():
            items += item
    if typed:
        items += tuple([type(a) for a in args])
        if kwargs:
            items += tuple([type(v) for v in kwargs.values()])
    return _Key(items)


def _too_many() -> MemoryError:
    return MemoryError(f"an lru_cache of more than {STATE.max_items} entries is too large (gradcli allows at most "
                       f"{STATE.max_items})")


class _lru_cache_wrapper(_Wrapper):
    """What lru_cache makes of a function: calls with the same arguments answered from its cache.

    Its dict is used as CPython's C wrapper uses its own (a lookup, a second one after the call, a pop of the
    oldest entry, an insertion), so a script's __eq__ is called as often, in the same order; the order of use
    is a ring of links [previous, next, key, result] around `_root`, as CPython keeps it."""

    __slots__ = ("_func", "_maxsize", "_typed", "_cache", "_root", "_hits", "_misses", "cache_parameters")
    kind = "functools._lru_cache_wrapper"

    def __init__(self, func, maxsize, typed, made_in: str):
        self._func, self._maxsize, self._typed = func, None if maxsize is None else int(maxsize), bool(typed)
        # what cache_parameters() shows: the arguments as given; a lambda of the function that made the wrapper
        self.cache_parameters = _Local(f"{made_in}.<locals>.<lambda>", lambda: {"maxsize": maxsize, "typed": typed})
        self._cache = {}                    # key -> result (maxsize None) or its link
        self._root = root = []
        root[:] = [root, root, None, None]
        self._hits = self._misses = 0
        _named_after(self, func)

    def __call__(self, *args, **kwargs):
        maxsize = self._maxsize
        if maxsize == 0:                # (no key is made: unhashable arguments are fine)
            self._misses += 1
            return self._func(*args, **kwargs)
        key = _make_key(args, kwargs, self._typed)
        cache = self._cache
        if maxsize is None:
            result = cache.get(key, _MISSING)
            if result is not _MISSING:
                self._hits += 1
                return result
            self._misses += 1
            result = self._func(*args, **kwargs)
            if len(cache) >= STATE.max_items:
                raise _too_many()
            cache[key] = result
            return result
        link = cache.get(key)
        root = self._root
        if link is not None:            # to the newest end of the ring
            link[0][1], link[1][0] = link[1], link[0]
            last = root[0]
            last[1] = root[0] = link
            link[0], link[1] = last, root
            self._hits += 1
            return link[3]
        self._misses += 1
        result = self._func(*args, **kwargs)
        if key in cache:                # the call itself (a recursion) cached these arguments: kept as they are
            return result
        if len(cache) < maxsize or root[1] is root:
            if len(cache) >= STATE.max_items:
                raise _too_many()
            link = [None, None, key, result]
        else:                           # the oldest link leaves the cache and is reused
            link = root[1]
            link[0][1], link[1][0] = link[1], link[0]
            del cache[link[2]]
            link[2], link[3] = key, result
        cache[key] = link
        last = root[0]
        last[1] = root[0] = link
        link[0], link[1] = last, root
        return result

    def __repr__(self) -> str:
        return f"<functools._lru_cache_wrapper object at {address(self)}>"

    @property
    def cache_info(self):
        return _method(self, "cache_info", lambda: CacheInfo(self._hits, self._misses, self._maxsize,
                                                                len(self._cache)))

    @property
    def cache_clear(self):
        def clear():
            self._cache.clear()
            self._root[:] = [self._root, self._root, None, None]
            self._hits = self._misses = 0
        return _method(self, "cache_clear", clear)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def lru_cache(maxsize=128, typed=False):
    """@lru_cache, @lru_cache(maxsize=N, typed=...): a function remembering the results of its last calls."""
    if isinstance(maxsize, int):
        if maxsize < 0:
            maxsize = 0
    elif callable(maxsize) and isinstance(typed, bool):       # @lru_cache without parentheses
        return _lru_cache_wrapper(maxsize, 128, typed, "lru_cache")
    elif maxsize is not None:
        raise TypeError("Expected first argument to be an integer, a callable, or None")

    def decorating_function(user_function):
        return _lru_cache_wrapper(user_function, maxsize, typed, "lru_cache.<locals>.decorating_function")
    return _Local("lru_cache.<locals>.decorating_function", decorating_function)


def cache(user_function, /):
    """@cache: lru_cache(maxsize=None), a cache that never evicts."""
    return _lru_cache_wrapper(user_function, None, False, "lru_cache.<locals>.decorating_function")


# ---------------------------------------------------------------------------------- cached_property

class cached_property:
    """A property computed by its function on first reading, then kept in the instance's attributes."""

    __slots__ = ("func", "attrname", "doc")

    def __init__(self, func):
        self.func = func
        self.attrname = None
        self.doc = _read(func, "__doc__")

    def __set_name__(self, owner, name):
        if self.attrname is None:
            self.attrname = name
        elif name != self.attrname:
            raise TypeError("Cannot assign the same cached_property to two different names "
                            f"({self.attrname!r} and {name!r}).")

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        if self.attrname is None:
            raise TypeError("Cannot use cached_property instance without calling __set_name__ on it.")
        try:
            held = instance.__dict__
        except AttributeError:
            raise TypeError(f"No '__dict__' attribute on {type(instance).__name__!r} instance to cache "
                            f"{self.attrname!r} property.") from None
        value = held.get(self.attrname, _MISSING)
        if value is _MISSING:
            value = self.func(instance)
            held[self.attrname] = value
        return value

    @property
    def __doc__(self):
        return self.doc

    def __repr__(self) -> str:
        return f"<functools.cached_property object at {address(self)}>"


# ---------------------------------------------------------------------------------- total_ordering

def _derived(root: str, flip: bool, combine: str):
    """A comparison derived from `root` (CPython's rule): its result negated if `flip`, then, for `combine`
    'and_ne' / 'or_eq', and-ed with `self != other` or or-ed with `self == other`."""
    def compare(self, other):
        result = getattr(type(self), root)(self, other)
        if result is NotImplemented:
            return result
        if flip:
            result = not result
        if combine == "and_ne":
            return result and self != other
        if combine == "or_eq":
            return result or self == other
        return result
    return compare


# root -> [(derived name, CPython's function name, flip, combine)], in CPython's order
_ORDERINGS = {
    "__lt__": [("__gt__", "_gt_from_lt", True, "and_ne"), ("__le__", "_le_from_lt", False, "or_eq"),
               ("__ge__", "_ge_from_lt", True, None)],
    "__le__": [("__ge__", "_ge_from_le", True, "or_eq"), ("__lt__", "_lt_from_le", False, "and_ne"),
               ("__gt__", "_gt_from_le", True, None)],
    "__gt__": [("__lt__", "_lt_from_gt", True, "and_ne"), ("__ge__", "_ge_from_gt", False, "or_eq"),
               ("__le__", "_le_from_gt", True, None)],
    "__ge__": [("__le__", "_le_from_ge", True, "or_eq"), ("__gt__", "_gt_from_ge", False, "and_ne"),
               ("__lt__", "_lt_from_ge", True, None)],
}


class _Derived(_Wrapper):
    """A comparison total_ordering adds to a class: named as CPython's (__name__ the operator's,
    __qualname__ its function's)."""

    __slots__ = ("_compare",)

    def __init__(self, name: str, qualname: str, compare):
        self.name, self.qualname, self.doc, self.annotations, self.wrapped = name, qualname, None, None, _MISSING
        self.attrs = None
        self._compare = compare

    def __call__(self, this, other):
        return self._compare(this, other)


def total_ordering(cls):
    """@total_ordering: the comparisons a class lacks, derived from the one it defines and __eq__."""
    if cls.__class__ is not classes.ScriptType:
        raise TypeError("total_ordering() takes a script's class in gradcli's language")
    roots = {op for op in _ORDERINGS if getattr(cls, op, None) is not getattr(object, op, None)}
    if not roots:
        raise ValueError("must define at least one ordering operation: < > <= >=")
    root = max(roots)
    for name, qualname, flip, combine in _ORDERINGS[root]:
        if name not in roots:
            setattr(cls, name, _Derived(name, qualname, _derived(root, flip, combine)))
    return cls


# ---------------------------------------------------------------------------------- partialmethod

class _UnboundPartialMethod(_Wrapper):
    """A partialmethod read from its class: a function taking the instance first."""

    __slots__ = ("_partial",)

    def __init__(self, partial):
        self.name, self.qualname = "_method", "partialmethod._make_unbound_method.<locals>._method"
        self.doc, self.annotations, self.wrapped, self.attrs = None, None, _MISSING, None
        self._partial = partial

    def __call__(self, cls_or_self, /, *args, **keywords):
        p = self._partial
        return p.func(cls_or_self, *p.args, *args, **{**p.keywords, **keywords})


class partialmethod:
    """A method with some of its arguments given, as functools.partial gives them to a function."""

    __slots__ = ("func", "args", "keywords")

    def __init__(self, func, /, *args, **keywords):
        if not callable(func) and not hasattr(func, "__get__"):
            raise TypeError(f"{func!r} is not callable or a descriptor")
        if func.__class__ is partialmethod:
            self.func, self.args, self.keywords = func.func, func.args + args, {**func.keywords, **keywords}
        else:
            self.func, self.args, self.keywords = func, args, keywords

    def __repr__(self) -> str:          # (CPython's, its trailing ', ' included)
        args = ", ".join(map(repr, self.args))
        keywords = ", ".join(f"{k}={v!r}" for k, v in self.keywords.items())
        return f"functools.partialmethod({self.func!r}, {args}, {keywords})"

    def __get__(self, obj, cls=None):
        get = getattr(type(self.func), "__get__", None)
        if get is not None:
            bound = get(self.func, obj, cls)
            if bound is not self.func:
                return _functools.partial(bound, *self.args, **self.keywords)
        return _UnboundPartialMethod(self).__get__(obj, cls)


# ---------------------------------------------------------------------------------- singledispatch

def _dispatch_class(value):
    """The Python class a script's class value stands for (torch.Tensor: gradcli's Tensor), or None."""
    if value.__class__ is stdlib._UNION_TYPE:
        return None
    try:
        real = stdlib._real_classes(value)
    except TypeError:
        return None
    return real if isinstance(real, type) else None


def _union_args(value):
    """The members of a union (`int | float`, `torch.Tensor | None`, typing.Union[...]), or None."""
    if value.__class__ is stdlib._UNION_TYPE:
        return value.__args__
    pytyping = sys.modules.get("gradcli.language.pytyping")     # (loaded if the script made a union of its own)
    if pytyping is not None and isinstance(value, pytyping.UnionForm):
        return value.args
    return None


def _union_members(value):
    """The classes of a union each of whose members is a class, or None."""
    members = _union_args(value)
    return members if members is not None and all(_dispatch_class(m) is not None for m in members) else None


def _resolved(text: str, func):
    """A string annotation as a class: a name, or a dotted path, in the function's globals or the builtins."""
    first, *rest = text.split(".")
    found = getattr(func, "globals", {}).get(first, _MISSING)
    if found is _MISSING:
        found = getattr(builtins, first, None)
        if not isinstance(found, type):
            raise NameError(f"name '{first}' is not defined", name=first)
    for name in rest:
        found = _read(found, name, text)
    return found


class _SingleDispatch(_Wrapper):
    """What singledispatch makes of a function: a call runs the function registered for the class of its
    first argument (the nearest in that class's method resolution order), else the original."""

    __slots__ = ("_registry", "_real", "register", "dispatch")

    def __init__(self, func):
        _named_after(self, func)
        if self.name is None:           # (what the wrapper is called when func has no name to give it)
            self.name, self.qualname = "wrapper", "singledispatch.<locals>.wrapper"
        self._registry = {}         # the script's class values -> function, in the order registered
        self._real = {}             # the Python classes they stand for -> function
        self._add(object, object, func)
        self.register = _Local("singledispatch.<locals>.register", self._register)
        self.dispatch = _Local("singledispatch.<locals>.dispatch", self._dispatch)

    def _add(self, shown, real, func) -> None:
        self._registry[shown] = func
        self._real[real] = func

    def _find(self, real):
        table = self._real
        for klass in real.__mro__:
            func = table.get(klass)
            if func is not None:
                return func
        return table[object]

    def __call__(self, *args, **kwargs):
        if not args:
            raise TypeError(f"{self.name if self.name is not None else 'singledispatch function'} requires at "
                            "least 1 positional argument")
        return self._find(args[0].__class__)(*args, **kwargs)

    def _dispatch(self, cls):
        real = _dispatch_class(cls)
        if real is None:                # (CPython's errors: its cache's weak reference, then the missing __mro__)
            try:
                weakref.ref(cls)
            except TypeError:
                raise TypeError(f"cannot create weak reference to '{stdlib.type_name(cls)}' object") from None
            raise AttributeError(f"'{stdlib.type_name(cls)}' object has no attribute '__mro__'")
        return self._find(real)

    @property
    def registry(self):
        return MappingProxyType(dict(self._registry))

    def _register(self, cls, func=None):
        members = _union_members(cls)
        if _dispatch_class(cls) is not None or members is not None:
            if func is None:
                return _Local("singledispatch.<locals>.register.<locals>.<lambda>", lambda f: self._register(cls, f))
        else:
            if func is not None:
                raise TypeError(f"Invalid first argument to `register()`. {cls!r} is not a class or union type.")
            annotations = _read(cls, "__annotations__") or {}
            if not annotations:
                raise TypeError(f"Invalid first argument to `register()`: {cls!r}. Use either "
                                "`@register(some_class)` or plain `@register` on an annotated function.")
            func = cls
            argname, cls = next(iter(annotations.items()))
            if cls.__class__ is str:            # (from __future__ import annotations: typing.get_type_hints's work)
                cls = _resolved(cls, func)
            if cls is None:
                cls = type(None)
            members = _union_members(cls)
            if _dispatch_class(cls) is None and members is None:
                if _union_args(cls) is not None:
                    raise TypeError(f"Invalid annotation for {argname!r}. {cls!r} not all arguments are classes.")
                raise TypeError(f"Invalid annotation for {argname!r}. {cls!r} is not a class.")
        for member in members or (cls,):
            self._add(member, _dispatch_class(member), func)
        return func


def singledispatch(func):
    """@singledispatch: a generic function, its implementations chosen by the class of the first argument."""
    return _SingleDispatch(func)


class singledispatchmethod:
    """singledispatch for methods: dispatched on the first argument after self (or cls)."""

    __slots__ = ("dispatcher", "func")

    def __init__(self, func):
        if not callable(func) and not hasattr(func, "__get__"):
            raise TypeError(f"{func!r} is not callable or a descriptor")
        self.dispatcher = _SingleDispatch(func)
        self.func = func

    @property
    def register(self):
        return Builtin("bound method of singledispatchmethod", "register",
                       lambda cls, method=None: self.dispatcher._register(cls, method), self)

    def __get__(self, obj, cls=None):
        dispatcher = self.dispatcher

        def _method(*args, **kwargs):
            method = dispatcher._find(args[0].__class__)
            get = getattr(type(method), "__get__", None)
            return (get(method, obj, cls) if get is not None else method)(*args, **kwargs)
        made = _BoundDispatch(self.func, _method)
        return made

    def __repr__(self) -> str:
        return f"<functools.singledispatchmethod object at {address(self)}>"


class _BoundDispatch(_Wrapper):
    """A singledispatchmethod read from an instance or its class: a function named as the method."""

    __slots__ = ("_call",)

    def __init__(self, func, call):
        _named_after(self, func)
        if self.name is None:
            self.name, self.qualname = "_method", "singledispatchmethod.__get__.<locals>._method"
        self._call = call

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)


# ---------------------------------------------------------------------------------- wraps, update_wrapper

WRAPPER_ASSIGNMENTS = _functools.WRAPPER_ASSIGNMENTS      # ('__module__', '__name__', ...): what is copied
WRAPPER_UPDATES = _functools.WRAPPER_UPDATES


def _check_lists(assigned, updated, fn: str) -> None:
    """Only CPython's own lists of what is copied (a script's functions have the attributes they name)."""
    if assigned not in (None, WRAPPER_ASSIGNMENTS) or updated not in (None, WRAPPER_UPDATES):
        raise TypeError(f"functools.{fn}(assigned=, updated=) other than WRAPPER_ASSIGNMENTS and WRAPPER_UPDATES "
                        "is outside gradcli's language")


def update_wrapper(wrapper, wrapped, assigned=None, updated=None):
    """functools.update_wrapper: a script's function `wrapper` takes the name, qualified name, docstring,
    annotations, attributes and __wrapped__ of `wrapped`."""
    _check_lists(assigned, updated, "update_wrapper")
    if wrapper.__class__ is access.script_function_type():
        name = _read(wrapped, "__name__")
        if isinstance(name, str):
            wrapper.name = name
            qualname = _read(wrapped, "__qualname__", name)
            wrapper.qualname = qualname if isinstance(qualname, str) else name
        wrapper.doc = _read(wrapped, "__doc__")
        annotations = _read(wrapped, "__annotations__")
        if isinstance(annotations, dict):
            wrapper.annotations = annotations
        wrapper.wrapped = wrapped
        attrs = getattr(wrapped, "attrs", None) if wrapped.__class__ in classes.FUNCTION_TYPES else None
        if attrs:                   # (Python's wrapper.__dict__.update(wrapped.__dict__))
            wrapper.attrs = {**(wrapper.attrs or {}), **attrs}
    return wrapper


_UPDATE_WRAPPER = Builtin("functools", "update_wrapper", update_wrapper)


def wraps(wrapped, assigned=None, updated=None):
    """functools.wraps(wrapped): a decorator applying update_wrapper(wrapper, wrapped)."""
    _check_lists(assigned, updated, "wraps")
    return _partial(_UPDATE_WRAPPER, wrapped=wrapped, assigned=WRAPPER_ASSIGNMENTS, updated=WRAPPER_UPDATES)


# ---------------------------------------------------------------------------------- the module

_TYPE_NAMES = {_lru_cache_wrapper: "functools._lru_cache_wrapper", _Derived: "function",
               _UnboundPartialMethod: "function", _SingleDispatch: "function", _BoundDispatch: "function", _Local: "function",
               cached_property: "functools.cached_property", partialmethod: "functools.partialmethod",
               singledispatchmethod: "functools.singledispatchmethod"}
for _cls in (cached_property, partialmethod, singledispatchmethod):
    _cls.__module__ = "functools"
stdlib._TYPE_NAMES.update(_TYPE_NAMES)
access.register_function_type(_lru_cache_wrapper, names=("cache_info", "cache_clear", "cache_parameters"),
                              holds_attributes=True)
access.register_function_type(_SingleDispatch, names=("register", "dispatch", "registry"), holds_attributes=True)
for _cls in (_Derived, _UnboundPartialMethod, _BoundDispatch, _Local):
    access.register_function_type(_cls, holds_attributes=True)
# a wrapper's __doc__ is what it copied, for Python's own readers too (property(lru_cache(f)) takes f's docstring)
for _cls in (_lru_cache_wrapper, _SingleDispatch, _Derived, _UnboundPartialMethod, _BoundDispatch, _Local):
    _cls.__doc__ = property(lambda self: self.doc)
access.allow_held(cached_property, frozenset(("func", "attrname", "__doc__")))
access.allow_held(partialmethod, frozenset(("func", "args", "keywords")))
access.allow_held(singledispatchmethod, frozenset(("register", "dispatcher", "func")))
access.ALLOWED[MappingProxyType] = frozenset(("keys", "values", "items", "get", "copy"))     # singledispatch's registry


# ------------------------------------------------------------------------------------------- partial

def _partial(*args, **keywords):
    """functools.partial(func, ...) as CPython makes it, except that a torch function (a Builtin, which is
    itself a partial of gradcli's function) stays whole, as PyTorch's builtins do: CPython's constructor
    would merge it into the new partial, whose `func` would then be gradcli's own function."""
    if args and args[0].__class__ is Builtin:
        from gradcli.language import copying
        return copying.partial_of(args[0], args[1:], keywords)
    return _functools.partial(*args, **keywords)


_PARTIAL = bounds.Bounded(_functools.partial, _partial)
stdlib._HELD_CLASSES[_functools.partial] = _PARTIAL       # type(p) is partial


def members() -> dict:
    return {"reduce": _functools.reduce, "partial": _PARTIAL, "cmp_to_key": _functools.cmp_to_key,
            "wraps": Builtin("functools", "wraps", wraps),
            "update_wrapper": _UPDATE_WRAPPER,
            "lru_cache": Builtin("functools", "lru_cache", lru_cache), "cache": Builtin("functools", "cache", cache),
            "cached_property": cached_property, "total_ordering": Builtin("functools", "total_ordering", total_ordering),
            "partialmethod": partialmethod, "singledispatch": Builtin("functools", "singledispatch", singledispatch),
            "singledispatchmethod": singledispatchmethod, "WRAPPER_ASSIGNMENTS": WRAPPER_ASSIGNMENTS,
            "WRAPPER_UPDATES": WRAPPER_UPDATES}
