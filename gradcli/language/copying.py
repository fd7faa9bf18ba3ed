"""`import copy`: `copy.copy` and `copy.deepcopy` of the values a script holds, as CPython's copy module and
PyTorch's `Tensor.__deepcopy__` make them (a model kept as the best so far, a target network, an EMA copy).

Python's own copy module would reach each object through `__reduce_ex__`, which for gradcli's internal
objects builds states no script should hold. This walks the values a script can hold, type by type, and
refuses the rest by name:

* immutable values, functions, classes and modules are their own copies (`deepcopy(f) is f`, as in Python);
* lists, tuples, dicts, sets and the `collections` types copy item by item, with Python's memo: an object
  reached twice is copied once, and cycles close;
* a tensor follows `Tensor.__deepcopy__`: only a leaf may be copied (PyTorch's RuntimeError otherwise), the
  copy keeps `requires_grad`, gets a copy of `.grad`, and views of one storage copied together stay views
  of one new storage; an `nn.Parameter` is `Parameter(data.clone(), requires_grad)`, without its grad.
  `copy.copy` of a tensor shares its data, as PyTorch's (through its pickling path) does;
* an instance of a script's class (and of the library classes a script may subclass: `nn.Module`,
  optimisers, datasets) is a new object of the class with its attributes copied, unless its class defines
  `__deepcopy__` / `__copy__`, which are called as Python calls them;
* a `types.SimpleNamespace` is a new namespace holding (deep) copies of its values;
* a `torch.Generator` copies its state, and so does an io stream (CPython's copy of its value, position and
  newline mode, a new buffer of its own); an autograd node and a generator are CPython's "cannot pickle"
  TypeError; anything else is an honest NotImplementedError.

Storage sharing is tracked beside the memo (never in it: the memo is handed to a script's `__deepcopy__`
and holds only script values).
"""

from __future__ import annotations

import collections
import functools
import types

import numpy as np

from gradcli.engine import autograd, budget, dtypes, parameter, rng
from gradcli.engine.tensor import Size, Tensor, _Device
from gradcli.language import bounds, classes, pycollections
from gradcli.language.classes import ScriptType

_NOT_A_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
               "moment.  If you were attempting to deepcopy a module, this may be because of a "
               "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")

# Values that are their own copies: immutable ones, and functions, classes and modules (as in Python)
_ATOMIC = {int, float, bool, str, complex, type(None), type(...), type(NotImplemented), range, slice, Size,
           dtypes.DType, dtypes.MemoryFormat, _Device, bounds.Bounded, types.BuiltinFunctionType, types.FunctionType, type,
           ScriptType, types.ModuleType}
_UNPICKLABLE = (types.GeneratorType, autograd.Node, autograd.AccumulateGrad)
# Classes of Python's whose objects hold only plain data in CPython's pickled state (io's streams): copied, deep or
# shallow, as CPython's copy module copies them (registered by the module offering them)
STATE_COPIED: set = set()
# Those of them that pickle refuses (re.Match: torch.save's TypeError), though copy gives them as they are
UNPICKLABLE: set = set()

class PicklingError(Exception):
    """pickle's error for what it cannot save (torch.save)."""


class UnpicklingError(Exception):
    """pickle's error for what it will not load (torch.load's weights-only unpickler)."""


for _cls in (PicklingError, UnpicklingError):
    _cls.__module__ = "_pickle"         # as a traceback names them: _pickle.UnpicklingError

# the storages already copied in one deepcopy, by id(memo): {id(root array): new root array}
_STORAGES: dict = {}
# "save" or "load" while pickled() copies: pickle's rules instead of deepcopy's (see pickled)
_PICKLING = [False]


# ---------------------------------------------------------------------------------------------- deepcopy

def deepcopy(x, memo=None):
    """copy.deepcopy(x, memo=None)."""
    if memo is None:
        memo = {}
    elif memo.__class__ is not dict:         # CPython reads it with memo.get
        raise AttributeError(f"'{type(memo).__name__}' object has no attribute 'get'")
    top = id(memo) not in _STORAGES
    if top:
        _STORAGES[id(memo)] = {}
    try:
        return _deep(x, memo)
    finally:
        if top:
            del _STORAGES[id(memo)]


def pickled(x, loading: bool = False):
    """What pickling x and unpickling it gives (torch.save, then torch.load; gradcli.language.saving): a copy
    as deepcopy makes it, except that a tensor with a history is saved too (a leaf again, keeping
    requires_grad), no tensor keeps its .grad, a class's __deepcopy__ is not called, and functions go by
    name: a script's top-level function or method comes back as itself, a lambda or a nested function
    is pickle's error. Saving runs none of the script's code (pickle only reduces objects); `loading` makes
    objects as the unpickler does (a script's OrderedDict subclass is called, its items set through it)."""
    _PICKLING[0] = "load" if loading else "save"
    try:
        return deepcopy(x)
    finally:
        _PICKLING[0] = False


def _deep(x, memo):
    cls = x.__class__
    if cls in _ATOMIC:
        if _PICKLING[0] and cls in classes.FUNCTION_TYPES:
            _by_name(x)
        return x
    if cls in classes.HELD_METACLASSES or cls.__class__ in classes.HELD_METACLASSES:    # an enum, its members
        return x
    if cls is Tensor:
        return _deep_tensor(x, memo)       # (its leaf check comes before the memo, as PyTorch's)
    d = id(x)
    y = memo.get(d, memo)
    if y is not memo:
        return y
    if cls is list:
        y = []
        memo[d] = y
        y.extend(_deep(v, memo) for v in x)
    elif cls is tuple or cls in pycollections.NAMEDTUPLES:
        items = [_deep(v, memo) for v in x]
        if d in memo:                       # a cycle through the tuple made it already
            return memo[d]
        if all(a is b for a, b in zip(items, x)):
            y = x
        else:
            y = tuple(items) if cls is tuple else cls(*items)
    elif cls is dict or cls is collections.OrderedDict or cls is collections.Counter or cls is classes.AttributeDict:
        y = dict() if cls is classes.AttributeDict else cls()     # (an instance's __dict__ a script held: a dict)
        memo[d] = y
        for k, v in x.items():
            y[_deep(k, memo)] = _deep(v, memo)
        metadata = getattr(x, "__dict__", {}).get("_metadata")
        if metadata is not None and cls is collections.OrderedDict:     # a state dict's module versions, as
            y._metadata = _deep(metadata, memo)                        # CPython's deepcopy keeps its attributes
    elif cls is collections.defaultdict:
        y = cls(_deep(x.default_factory, memo))
        memo[d] = y
        for k, v in x.items():
            y[_deep(k, memo)] = _deep(v, memo)
    elif cls is set or cls is frozenset:
        y = cls(_deep(v, memo) for v in x)
    elif cls is collections.deque:
        y = cls(maxlen=x.maxlen)
        memo[d] = y
        y.extend(_deep(v, memo) for v in x)
    elif cls is types.MethodType:           # a bound method: the same function bound to a copy of its object
        y = types.MethodType(x.__func__, _deep(x.__self__, memo))
    elif cls is types.SimpleNamespace:      # CPython's: a new namespace holding copies of the values
        y = types.SimpleNamespace()
        memo[d] = y
        y.__dict__.update(_deep(x.__dict__, memo))
    elif cls is rng.Generator:
        y = _copy_generator(x)
    elif cls is functools.partial:          # CPython's: its function, arguments and keywords, copied deeply
        y = partial_of(_deep(x.func, memo), _deep(x.args, memo), _deep(x.keywords, memo))
    elif cls in STATE_COPIED:
        if _PICKLING[0] and cls in UNPICKLABLE:
            raise TypeError(f"cannot pickle '{_TYPE_NAME[0](x)}' object")
        y = _python_copy(x)
    elif cls.__class__ is ScriptType:
        return _deep_instance(x, cls, memo)
    elif isinstance(x, BaseException) and cls.__module__ == "builtins":
        y = cls(*_deep(x.args, memo))
    else:
        _refuse(x, "deepcopy")
    memo[d] = y
    return y


def _deep_instance(x, cls, memo):
    """An object of a script's class, or of a library class a script may subclass (nn.Module, ...): its
    class's __deepcopy__, else a new object of the class with a deep copy of its attributes (Python's
    default, which sets them without calling __init__ or __setattr__)."""
    copier = None if _PICKLING[0] else _special(cls, "__deepcopy__")
    if copier is not None:
        y = copier(x, memo)
        memo[id(x)] = y
        return y
    if isinstance(x, _CONTAINERS):
        return _container(x, cls, lambda v: _deep(v, memo), memo)
    # (what torch.save keeps is made running none of the script's code, a __new__ of its own included, as pickling
    # runs none; a copy and torch.load call the class's __new__, as copyreg's __newobj__ does)
    y = object.__new__(cls) if _PICKLING[0] == "save" and _own_new(cls) else cls.__new__(cls)
    memo[id(x)] = y
    if isinstance(x, BaseException):
        y.args = _deep(x.args, memo)
    state = _state(x, cls)
    if state:
        y.__dict__.update(_deep(state, memo))
    for name, value in slot_values(x, cls):
        setattr(y, name, _deep(value, memo))
    return y


def _own_new(cls) -> bool:
    """Whether a script's class (or one of its classes) defines __new__."""
    return any("__new__" in klass.__dict__ for klass in cls.__mro__ if classes.script_made(klass))


def _container(x, cls, copied, memo=None):
    """A copy of an object of a script's class deriving from dict or list (classes.CONTAINER_BASES), made as CPython
    makes one from the class's reduction: a Counter anew from its items, a defaultdict by calling the class with its
    default factory (neither keeps its attributes), an OrderedDict by calling the class, a dict or list without
    calling it; then its attributes, then its items through the class's own item setting and append (the
    unpickler's extend). What torch.save keeps is made running none of the script's code, as pickling runs none."""
    saving = _PICKLING[0] == "save"
    base = next(b for b in cls.__mro__ if b in classes.CONTAINER_BASES)
    if base is tuple or base is set or base is frozenset:
        return _collection(x, cls, base, copied, memo, saving)
    if saving:
        y = base.__new__(cls)
        if base is collections.defaultdict:
            collections.defaultdict.__init__(y, copied(x.default_factory))
    elif base is collections.Counter:
        y = cls(copied(dict(x)))
    elif base is collections.defaultdict:
        y = cls(copied(x.default_factory))
    elif base is collections.OrderedDict:
        y = cls()
    else:
        y = cls.__new__(cls)
    if memo is not None:
        memo[id(x)] = y
    if base is collections.Counter and not saving:
        return y
    state = _state(x, cls)
    if state and (saving or base is not collections.defaultdict):
        y.__dict__.update(copied(state))
    if base is list:
        items = [copied(item) for item in list(x)]
        if saving:
            list.extend(y, items)
        elif _PICKLING[0] == "load":
            y.extend(items)
        else:
            for item in items:
                y.append(item)
    else:
        for key, value in list(x.items()):
            if saving:
                base.__setitem__(y, copied(key), copied(value))
            else:
                y[copied(key)] = copied(value)
    return y


_CONTAINERS = (dict, list, tuple, set, frozenset)


def _collection(x, cls, base, copied, memo, saving: bool):
    """A copy of an object of a script's class deriving from tuple (a namedtuple's included), set or frozenset, as
    CPython makes one: a tuple's made by the class's __new__ from its items (a namedtuple's __new__ takes them one
    by one), a set's by calling the class with their list (what torch.save keeps is made without calling it); then
    its attributes."""
    if base is tuple:
        items = copied(tuple(x))
        namedtuple = any(k in pycollections.NAMEDTUPLES for k in cls.__mro__)
        y = cls.__new__(cls, *items) if namedtuple else cls.__new__(cls, items)
    elif saving:
        y = base.__new__(cls)
        base.__init__(y, copied(list(x)))
    else:
        y = cls(copied(list(x)))
    if memo is not None:
        memo[id(x)] = y
    state = _state(x, cls)
    if state:
        y.__dict__.update(copied(state))
    for name, value in slot_values(x, cls):
        setattr(y, name, copied(value))
    return y


def _state(x, cls):
    """What Python's copy module copies of an object: its class's __getstate__() (a library class's, such as
    torch.distributions' Transform, which leaves out its inverse), else its __dict__."""
    for klass in cls.__mro__:
        if klass is not object and "__getstate__" in klass.__dict__:
            return x.__getstate__()
    return getattr(x, "__dict__", None)


def slot_values(x, cls) -> list:
    """[(name, value)] of the slots of x's classes that hold a value (`__slots__` in a script's class), as
    copyreg's state of a slotted object: the names in each class's `__slots__`, private ones mangled."""
    found = []
    for klass in cls.__mro__:
        names = klass.__dict__.get("__slots__")
        if names is None or not classes.script_made(klass):
            continue
        for name in (names,) if names.__class__ is str else names:
            if name in ("__dict__", "__weakref__"):
                continue
            if name[:2] == "__" and name[-2:] != "__":
                name = f"_{klass.__name__.lstrip('_')}{name}"
            if hasattr(x, name):
                found.append((name, getattr(x, name)))
    return found


def _by_name(f) -> None:
    """pickle's check of a function it saves by name: a lambda or a nested function has none to find."""
    qualname = getattr(f, "qualname", None)
    if qualname is None:
        return
    if "<locals>" in qualname:
        raise AttributeError(f"Can't pickle local object '{qualname}'")
    if qualname.endswith("<lambda>"):
        raise PicklingError(f"Can't pickle {f!r}: attribute lookup <lambda> on __main__ failed")


def _deep_tensor(t: Tensor, memo) -> Tensor:
    if t.grad_fn is not None and not _PICKLING[0]:
        raise RuntimeError(_NOT_A_LEAF)
    y = memo.get(id(t))
    if y is not None:
        return y
    if parameter.is_parameter(t):          # Parameter.__deepcopy__: Parameter(data.clone(), requires_grad)
        if t._a.__class__ is np.ndarray:
            budget.check_tensor(t._a.shape, t._a.itemsize)
        y = parameter.mark(_new_leaf(t._a.copy(), t.requires_grad))
        memo[id(t)] = y
        if _PICKLING[0]:            # (its pickled state keeps the script's attributes; its deepcopy does not)
            _deep_own(t, y, memo)
        return parameter.carry_uninitialized(t, y)       # a lazy module's placeholder stays one
    y = _new_leaf(_copied_storage(t._a, _STORAGES.setdefault(id(memo), {})), t.requires_grad)
    parameter.carry_uninitialized(t, y)
    if t.grad is not None and not _PICKLING[0]:
        y.grad = _deep_tensor(t.grad, memo)
    memo[id(t)] = y
    _deep_own(t, y, memo)
    return y


def _deep_own(t: Tensor, y: Tensor, memo) -> None:
    """The script's own attributes of `t` (x.g = ...), deep-copied onto its copy `y`, as its __dict__ is."""
    own = getattr(t, "_attrs", None)
    if own:
        y._attrs = _deep(own, memo)


def _new_leaf(a: np.ndarray, requires_grad: bool) -> Tensor:
    y = Tensor(a)
    y.requires_grad = requires_grad
    return y


def _copied_storage(a: np.ndarray, storages: dict) -> np.ndarray:
    """A copy of `a` on a copy of its storage: views of one storage copied in one deepcopy share the new
    one, at the same offsets and strides. A meta tensor's copy is another of one element (gradcli.engine.meta)."""
    if a.__class__ is not np.ndarray:
        return a.copy()
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous:         # (numpy's own layouts: copied alone)
        budget.check_tensor(a.shape, a.itemsize)
        return np.array(a, copy=True)
    new_root = storages.get(id(root))
    if new_root is None:
        budget.check_tensor(root.shape, root.itemsize)      # new memory, within the tensor budget
        new_root = storages[id(root)] = root.copy()
    if root is a:
        return new_root
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(a.shape, a.dtype, buffer=new_root, offset=offset, strides=a.strides)


def _copy_generator(g: rng.Generator) -> rng.Generator:
    """A generator in the same state (PyTorch's Generator pickles its state)."""
    y = rng.Generator.__new__(rng.Generator)
    y._seed, y._key, y._pos, y._cache = g._seed, g._key.copy(), g._pos, g._cache
    return y


# -------------------------------------------------------------------------------------------------- copy

def copy(x):
    """copy.copy(x): a shallow copy."""
    cls = x.__class__
    if cls in _ATOMIC or cls is tuple or cls is frozenset or cls in classes.HELD_METACLASSES or \
            cls.__class__ in classes.HELD_METACLASSES:
        return x
    if cls is list:
        return list(x)
    if cls in (dict, set, collections.OrderedDict, collections.Counter, collections.defaultdict, collections.deque,
               classes.AttributeDict):
        return x.copy()
    if cls in pycollections.NAMEDTUPLES:
        return cls(*x)
    if cls is Tensor:                       # PyTorch's pickling path: a leaf on the same data, no grad
        y = parameter.carry_uninitialized(x, _new_leaf(x._a, x.requires_grad))
        own = getattr(x, "_attrs", None)
        if own:
            y._attrs = dict(own)            # (its __dict__, copied shallowly)
        return parameter.mark(y) if parameter.is_parameter(x) else y
    if cls is types.MethodType:
        return x
    if cls is types.SimpleNamespace:
        return types.SimpleNamespace(**x.__dict__)
    if cls is rng.Generator:
        return _copy_generator(x)
    if cls is functools.partial:
        return partial_of(x.func, x.args, x.keywords)
    if cls in STATE_COPIED:
        return _python_copy(x)
    if cls.__class__ is ScriptType:
        copier = _special(cls, "__copy__")
        if copier is not None:
            return copier(x)
        if isinstance(x, _CONTAINERS):
            return _container(x, cls, lambda v: v)
        y = cls.__new__(cls)
        if isinstance(x, BaseException):
            y.args = x.args
        state = _state(x, cls)
        if state:
            y.__dict__.update(state)
        for name, value in slot_values(x, cls):
            setattr(y, name, value)
        return y
    if isinstance(x, BaseException) and cls.__module__ == "builtins":
        return cls(*x.args)
    _refuse(x, "copy")


def partial_of(func, args: tuple, keywords: dict) -> functools.partial:
    """functools.partial(func, *args, **keywords) set as its state: as CPython's copy and pickle remake one,
    with `func` kept whole (the constructor would merge a torch function, itself a partial, into it)."""
    made = functools.partial(print)
    made.__setstate__((func, args, keywords, None))
    return made


def _python_copy(x):
    import copy as python_copy
    return python_copy.copy(x)


def _special(cls, name: str):
    """The class's own __deepcopy__ / __copy__ (a script's classes may define them), else None."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return getattr(cls, name)
    return None


def _refuse(x, what: str):
    type_name = _TYPE_NAME[0]
    if isinstance(x, _UNPICKLABLE):
        name = x.name() if isinstance(x, autograd.Node) else type_name(x)
        raise TypeError(f"cannot pickle '{name}' object")
    raise NotImplementedError(f"gradcli does not implement copy.{what} of a '{type_name(x)}' object")


def make_module(builtin, own_types, type_name) -> dict:
    """The members of `import copy`, made when a script first imports it (gradcli.language.stdlib, which
    this module cannot import, hands in its Builtin class, the classes of its values that are their own
    copies (Builtin, ScriptModule, ClassValue) and its type_name)."""
    import copy as python_copy  # noqa: F401  (the module prints with the file of CPython's, as imported)
    _ATOMIC.update(own_types)
    _ATOMIC.update(classes.FUNCTION_TYPES)          # a script's functions, decorated ones too
    _TYPE_NAME[0] = type_name
    return {"copy": builtin("copy", "copy", copy), "deepcopy": builtin("copy", "deepcopy", deepcopy)}


_TYPE_NAME = [None]
