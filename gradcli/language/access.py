"""Which attributes a script may read or write on which objects: the language's allow-list.

Everything a script touches goes through `get_attr` / `set_attr`, so nothing outside this table
(object internals, numpy arrays, file or module access) is reachable. Names starting with `_` are
refused by the parser before a script ever runs.
"""

from __future__ import annotations

import functools
import itertools as _itertools
import sys
from types import FunctionType, GeneratorType, MappingProxyType, MethodType

from gradcli.language import bounds, classes, formatting, pycollections
from gradcli.language import torchapi
from gradcli.engine import addresses, autograd, custom, dtypes, factories, forward, rng, saved, savedhooks, typeinfo
from gradcli.engine.ops.reduce import RETURN_FIELDS, RETURN_KINDS
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Size, Tensor, _Device, parameter_marks, uninitialized_marks
from gradcli.language import stdlib
from gradcli.language.stdlib import Builtin, ScriptModule, type_name
from gradcli.language.classes import ScriptType

# What PyTorch has but a script may not reach, with the reason given when it tries.
_NO_ARRAYS = "scripts cannot reach numpy arrays (use .tolist() or .item())"
_NO_POINTERS = "scripts cannot reach memory addresses"
REFUSED_TENSOR_ATTRS = {
    "numpy": _NO_ARRAYS, "__array__": _NO_ARRAYS, "share_memory_": _NO_POINTERS,
    "pin_memory": _NO_POINTERS, "tofile": "scripts cannot write files",
}
_NO_FILES = "scripts cannot read or write files"
_OS_ERROR = frozenset(("errno", "strerror", "filename", "filename2"))
REFUSED_TORCH_MEMBERS = {
    "from_file": _NO_FILES, "from_numpy": _NO_ARRAYS,
    "frombuffer": _NO_POINTERS, "hub": "scripts cannot download code", "jit": "scripts cannot compile code", "ops": "scripts cannot load native code",
    "classes": "scripts cannot load native code",
}

# Python's modules' functions that reach what scripts may not: (module, name) -> the reason
REFUSED_PYTHON_MEMBERS = {("json", "dump"): _NO_FILES, ("json", "load"): _NO_FILES}
# Methods of Python's values that scripts hold (io.BytesIO's getbuffer) left out, with the reason: class -> {name:
# reason}, filled by the module offering the class
REFUSED_HELD: dict = {}

TENSOR_ATTRS = frozenset(n for n in dir(Tensor) if not n.startswith("_") and n not in REFUSED_TENSOR_ATTRS)
TENSOR_METHODS = frozenset(n for n in TENSOR_ATTRS if callable(getattr(Tensor, n)))

# str.encode is left out: bytes are outside the language
_STR = ("capitalize", "casefold", "center", "count", "endswith", "expandtabs", "find", "format", "format_map",
        "index", "isalnum", "isalpha", "isascii", "isdigit", "isdecimal", "isidentifier", "islower", "isnumeric",
        "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip", "maketrans",
        "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition",
        "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title", "translate",
        "upper", "zfill")
_LIST = ("append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse", "sort")
_NUMBER = ("real", "imag", "conjugate", "is_integer", "as_integer_ratio", "bit_length")
# (dict.fromkeys, a classmethod that builds a dict from any iterable, is offered bounded: _dict_fromkeys)
_DICT = ("clear", "copy", "get", "items", "keys", "pop", "popitem", "setdefault", "update", "values")
_DEQUE = ("append", "appendleft", "clear", "copy", "count", "extend", "extendleft", "index", "insert", "maxlen",
          "pop", "popleft", "remove", "reverse", "rotate")
_SET = ("add", "clear", "copy", "difference", "difference_update", "discard", "intersection",
        "intersection_update", "isdisjoint", "issubset", "issuperset", "pop", "remove", "symmetric_difference",
        "symmetric_difference_update", "union", "update")

_STORAGE = ("nbytes", "size", "element_size", "device", "data_ptr", "tolist", "is_shared", "is_pinned", "cpu", "type")

ALLOWED = {
    str: frozenset(_STR),
    list: frozenset(_LIST),
    tuple: frozenset(("count", "index")),
    dict: frozenset(_DICT),
    set: frozenset(_SET),
    Size: frozenset(("count", "index", "numel")),
    int: frozenset(_NUMBER),
    float: frozenset(_NUMBER),
    bool: frozenset(_NUMBER),
    complex: frozenset(("real", "imag", "conjugate")),
    range: frozenset(("start", "stop", "step", "count", "index")),
    slice: frozenset(("start", "stop", "step", "indices")),
    dtypes.DType: frozenset(("is_floating_point", "is_signed", "itemsize", "is_complex", "to_real", "to_complex")),
    typeinfo.FInfo: frozenset(typeinfo.FInfo.__slots__),
    typeinfo.IInfo: frozenset(typeinfo.IInfo.__slots__),
    autograd.Node: frozenset(("name", "next_functions", "metadata", "register_hook", "register_prehook")),
    autograd.AccumulateGrad: frozenset(("name", "next_functions", "variable", "metadata", "register_hook",
                                        "register_prehook")),
    rng.Generator: frozenset(("seed", "initial_seed", "device")),
    # storages as a tensor's untyped_storage() and storage() give them (read-only, virtual addresses)
    addresses.UntypedStorage: frozenset(_STORAGE),
    addresses.TypedStorage: frozenset(_STORAGE + ("dtype",)),
    _Device: frozenset(("type", "index")),
    autograd.RemovableHandle: frozenset(("remove",)),
    autograd.MultiHandle: frozenset(("remove", "handles")),
    savedhooks.SavedTensor: frozenset(("register_hooks",)),
    savedhooks.saved_tensors_hooks: frozenset(("pack_hook", "unpack_hook")),
    **{kind: frozenset(RETURN_FIELDS[name] + ("count", "index")) for name, kind in RETURN_KINDS.items()},
    forward.UnpackedDualTensor: frozenset(("primal", "tangent", "count", "index")),
    pycollections.defaultdict: frozenset(_DICT + ("default_factory",)),
    pycollections.OrderedDict: frozenset(_DICT + ("move_to_end",)),
    pycollections.Counter: frozenset(_DICT + ("elements", "most_common", "subtract", "total")),
    pycollections.deque: frozenset(_DEQUE),
}
ALLOWED[classes.AttributeDict] = ALLOWED[dict]      # an instance's __dict__, as scripts hold it
ALLOWED[MappingProxyType] = frozenset(("copy", "get", "items", "keys", "values"))      # a class's


def _allow_lstm_node(module) -> None:
    """oneDNN's LSTM layer node (three outputs) reads like any other node; only torch.nn's LSTM makes one."""
    from gradcli.engine.ops import rnn
    ALLOWED[rnn.LstmLayerNode] = ALLOWED[autograd.Node]

# torch.optim: what PyTorch's optimisers and schedulers offer a script (their hooks and private state excepted)
_OPTIMIZER = ("defaults", "state", "param_groups", "step", "zero_grad", "add_param_group", "state_dict",
              "load_state_dict")
_SCHEDULER = ("optimizer", "base_lrs", "last_epoch", "step", "get_last_lr", "get_lr", "state_dict", "load_state_dict")
_SCHEDULER_OWN = {
    "LambdaLR": ("lr_lambdas",), "MultiplicativeLR": ("lr_lambdas",), "StepLR": ("step_size", "gamma"),
    "MultiStepLR": ("milestones", "gamma"), "ConstantLR": ("factor", "total_iters"),
    "LinearLR": ("start_factor", "end_factor", "total_iters"), "PolynomialLR": ("total_iters", "power"),
    "ExponentialLR": ("gamma",), "CosineAnnealingLR": ("T_max", "eta_min"),
    "OneCycleLR": ("total_steps", "cycle_momentum", "use_beta1"),
    "CosineAnnealingWarmRestarts": ("T_0", "T_i", "T_mult", "eta_min", "T_cur"),
    "CyclicLR": ("max_lrs", "total_size", "step_ratio", "mode", "gamma", "scale_mode", "scale_fn", "cycle_momentum",
                 "use_beta1", "base_momentums", "max_momentums"),
    "SequentialLR": ("optimizer", "last_epoch", "step", "get_last_lr", "get_lr", "state_dict", "load_state_dict",
                     "recursive_undo"),
    "ChainedScheduler": ("optimizer", "step", "get_last_lr", "get_lr", "state_dict", "load_state_dict"),
    "ReduceLROnPlateau": ("optimizer", "last_epoch", "step", "get_last_lr", "state_dict", "load_state_dict", "factor",
                          "min_lrs", "default_min_lr", "patience", "cooldown", "eps", "mode", "threshold",
                          "threshold_mode", "best", "mode_worse", "cooldown_counter", "num_bad_epochs", "in_cooldown"),
}
# the schedulers without LRScheduler's state (no base_lrs...): the names above are all they offer
_WHOLE_LIST = frozenset(("ReduceLROnPlateau", "SequentialLR", "ChainedScheduler"))
_BOUND_METHOD_OWNERS: set = set()       # PyTorch's Python classes (the optimisers and schedulers)


def _allow_optim(module) -> None:
    """torch.optim's classes, once a script reaches torch.optim (stdlib makes it then)."""
    from gradcli.engine import lbfgs, lr_scheduler
    ALLOWED.update((cls, frozenset(_OPTIMIZER)) for cls in lbfgs.OPTIMIZERS)
    ALLOWED.update((cls, frozenset(_SCHEDULER_OWN[cls.__name__] + (
        () if cls.__name__ in _WHOLE_LIST else _SCHEDULER)))
        for cls in lr_scheduler.SCHEDULERS if cls.__name__ in _SCHEDULER_OWN)
    ALLOWED[lr_scheduler.LRScheduler] = frozenset(_SCHEDULER)
    _BOUND_METHOD_OWNERS.update(lbfgs.OPTIMIZERS + lr_scheduler.SCHEDULERS)


stdlib.when_made("torch.optim", _allow_optim)


def _allow_swa_utils(module) -> None:
    """torch.optim.swa_utils' SWALR (AveragedModel is a module: nn.Module's rules read it)."""
    from gradcli.engine import swa
    ALLOWED[swa.SWALR] = frozenset(_SCHEDULER + ("anneal_epochs", "anneal_func"))
    _HOLDERS[swa.SWALR] = frozenset(("anneal_func",))     # a function it holds, not a method
    _BOUND_METHOD_OWNERS.add(swa.SWALR)


stdlib.when_made("torch.optim.swa_utils", _allow_swa_utils)


def _allow_amp(module) -> None:
    """torch.amp's GradScaler (and autocast objects' public attributes), once a script reaches torch.amp or
    torch.cpu.amp."""
    from gradcli.engine import autocast, gradscaler
    ALLOWED[gradscaler.GradScaler] = frozenset((
        "scale", "unscale_", "step", "update", "get_scale", "get_growth_factor", "set_growth_factor",
        "get_backoff_factor", "set_backoff_factor", "get_growth_interval", "set_growth_interval", "is_enabled",
        "state_dict", "load_state_dict"))
    ALLOWED[autocast.autocast] = frozenset(("device", "fast_dtype"))
    _BOUND_METHOD_OWNERS.add(gradscaler.GradScaler)


stdlib.when_made("torch.amp", _allow_amp)


def _allow_random(module) -> None:
    """Python's random.Random (a script's own `random.Random(3)`), once a script imports random."""
    import random
    ALLOWED[random.Random] = frozenset(n for n in stdlib._RANDOM_NAMES if hasattr(random.Random, n))
    _BOUNDED_METHODS[random.Random] = bounds.RANDOM_METHODS


stdlib.when_made("torch.nn", _allow_lstm_node)



def _allow_packed(module) -> None:
    """torch.nn.utils.rnn's PackedSequence: a named tuple of tensors with PyTorch's conversions."""
    from gradcli.engine.ops import packed
    ALLOWED[packed.PackedSequence] = frozenset(packed.PackedSequence._fields + (
        "_fields", "to", "cpu", "double", "float", "half", "bfloat16", "long", "int", "short", "char", "byte", "is_cuda",
        "is_pinned", "count", "index"))


stdlib.when_made("torch.nn.utils.rnn", _allow_packed)


# Classes whose attributes hold values (a class, a factory) rather than methods: given as they are
_HOLDERS: dict = {}


def allow_held(cls, names) -> None:
    """Let scripts read `names` of `cls`'s instances, each a value held as it is (dataclasses.Field's name,
    type, default...: gradcli.session registers it when the dataclasses module is made)."""
    ALLOWED[cls] = _HOLDERS[cls] = names


def _allow_chunk_options(module) -> None:
    """nn.LinearCrossEntropyOptions: its five fields read as they are held (a frozen dataclass: set_attr refuses
    them with dataclasses' error)."""
    from gradcli.language.nn.losses import LinearCrossEntropyOptions
    allow_held(LinearCrossEntropyOptions, frozenset(LinearCrossEntropyOptions.__dataclass_fields__))


stdlib.when_made("torch.nn", _allow_chunk_options)


def allow_methods(cls, names) -> None:
    """Let scripts call the methods `names` of `cls`'s instances, printed as bound methods of the Python class
    that defines each (contextlib.ExitStack's: gradcli.language.pycontextlib registers them when the module is
    made)."""
    ALLOWED[cls] = frozenset(names)
    _BOUND_METHOD_OWNERS.add(cls)
    _SHOWN_BY_DEFINER.add(cls)


_SHOWN_BY_DEFINER: set = set()


def allow_bounded(cls, names, methods: dict) -> None:
    """Let scripts read `names` of `cls`'s instances (CPython's C objects: re's Pattern and Match), calling each of
    `methods` as function(obj, ...) in place of the object's own method of that name (what it builds bounded:
    gradcli.language.pyre registers them when the module is made)."""
    ALLOWED[cls] = frozenset(names)
    _SCRIPT_METHODS[cls] = methods


# Methods whose script-facing form differs from the engine's (argument checks as PyTorch's Python
# binding does them, numpy arrays in and out as Tensors): name -> function(obj, *args).
def _format(s, /, *args, **kwargs):
    return formatting.format_string(s, args, kwargs, read_attr)


def _format_map(s, mapping):
    return formatting.format_string(s, None, mapping, read_attr)


_SCRIPT_METHODS = {
    str: {"format": _format, "format_map": _format_map},
    rng.Generator: {"manual_seed": factories.generator_manual_seed, "get_state": factories.generator_get_state,
                    "set_state": factories.generator_set_state, "seed": factories.generator_seed,
                    "initial_seed": factories.generator_initial_seed},
}

# type(x).__name__: the only dunder attributes in the language, and only on classes
CLASS_NAMES = frozenset(("__name__", "__qualname__"))
_BOUNDED_METHODS = {**bounds.BOUNDED_METHODS, **pycollections.BOUNDED_METHODS}
stdlib.when_made("random", _allow_random)

_WRITABLE_TENSOR = {"requires_grad": Tensor._set_requires_grad, "data": Tensor._set_data,
                    "grad": Tensor._set_grad}


def read_attr(obj, name: str):
    """`obj.name` for a name known only when it runs (getattr, hasattr, a `str.format` field): `__class__`
    is `type(obj)`, as in Python (the compiler does the same for a written `obj.__class__`); the rest as
    get_attr reads them."""
    if name == "__class__":
        return stdlib.script_type(obj)
    return get_attr(obj, name)


def get_attr(obj, name: str):
    """`obj.name` as a script reads it: a method comes as a value that prints as PyTorch's or
    CPython's own (gradcli.language.stdlib.Builtin)."""
    cls = obj.__class__
    if cls is ScriptModule:
        if name in obj.members:
            return obj.members[name]
        return get_method(obj, name)        # raises
    if cls.__class__ is ScriptType or cls is ScriptType or cls in _PYTHON_OBJECTS:
        return get_method(obj, name)        # a script's own objects: Python's values, printed as Python prints them
    if _METACLASS_RULES and (cls.__class__ in _METACLASS_RULES or cls in _METACLASS_RULES):
        return get_method(obj, name)        # an enum and its members, likewise
    value = get_method(obj, name)
    if callable(value) and value.__class__ is not Builtin and not pycollections.holds(obj, name) \
            and name not in _HOLDERS.get(cls, ()) and value.__class__ not in _SPECIALS_AS_THEY_ARE:
        if obj.__class__ is Tensor:     # a method; else what the script set (x.hook = f), as it was set
            return Builtin("torch.Tensor", name, value) if name in TENSOR_ATTRS else value
        return Builtin(_method_namespace(obj, name), name, value, obj)
    return value


# What a lazy module's placeholder (UninitializedParameter, UninitializedBuffer) answers before its first call:
# these read as on any tensor; its shape is PyTorch's RuntimeError, every other method its ValueError
_UNINITIALIZED_ATTRS = frozenset(("dtype", "device", "requires_grad", "grad", "is_leaf", "data", "size", "grad_fn",
                                  "is_floating_point", "type"))


def _check_uninitialized(obj, name: str) -> None:
    if name in _UNINITIALIZED_ATTRS:
        return
    if name == "shape":
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")
    if name in TENSOR_METHODS:
        from gradcli.engine import parameter     # (only a lazy module's placeholder gets here: not at start-up)
        raise parameter.uninitialized_error(obj, name)


# the modules whose functions refuse complex tensors they have not been checked with (complexops.guarded)
_COMPLEX_GUARDED = frozenset(("torch", "torch.nn.functional", "torch.linalg", "torch.special"))    # (torch.fft: its own)


def _complex_method(obj, name: str):
    """`obj.name` once the session has complex tensors: a complex tensor's method as complexops.method gives it."""
    if obj._a.dtype.kind != "c":
        return getattr(obj, name)
    from gradcli.engine.ops import complexops
    return complexops.method(obj, name, getattr(obj, name))


def get_method(obj, name: str):
    """`obj.name` to be called at once (`obj.name(...)`): the function itself, with nothing to print."""
    cls = obj.__class__
    if cls is Tensor:
        if uninitialized_marks and id(obj) in uninitialized_marks:
            _check_uninitialized(obj, name)
        if name in TENSOR_ATTRS:
            if name == "grad_fn":
                fn = autograd.checked_grad_fn(obj)
                return fn.parent if fn.__class__ is autograd.OutputSlot else fn   # one output of several
            if STATE.complex_seen:      # a complex tensor's methods: only those checked for complex values
                return _complex_method(obj, name)
            return getattr(obj, name)
        if name == "_version":              # the in-place counter PyTorch's tutorials show (read-only)
            return obj._version[0]
        own = getattr(obj, "_attrs", None)      # the script's own (x.g = ...)
        if own is not None and name in own:
            return own[name]
        if name == "__dict__":
            return tensor_dict(obj)
        if name in REFUSED_TENSOR_ATTRS:
            raise AttributeError(f"'Tensor' object attribute '{name}' is outside gradcli's language: "
                                 f"{REFUSED_TENSOR_ATTRS[name]}")
        if classes.is_dunder(name):         # Python's internals: never a PyTorch feature to implement
            raise AttributeError(f"'Tensor' object attribute '{name}' is outside gradcli's language")
        kind = "Parameter" if id(obj) in parameter_marks else "Tensor"      # nn.Parameter: its own class
        raise _missing("torch.Tensor", name, f"'{kind}' object has no attribute '{name}'", obj)
    if cls is ScriptModule:
        try:
            value = obj.members[name]
        except KeyError:
            if obj.name == "torch" and name in REFUSED_TORCH_MEMBERS:
                raise AttributeError(f"module 'torch' attribute '{name}' is outside gradcli's language: "
                                     f"{REFUSED_TORCH_MEMBERS[name]}") from None
            if (obj.name, name) in REFUSED_PYTHON_MEMBERS:
                raise AttributeError(f"module '{obj.name}' attribute '{name}' is outside gradcli's language: "
                                     f"{REFUSED_PYTHON_MEMBERS[obj.name, name]}") from None
            if obj.name == "torch.utils":      # its data loading only: the rest reaches files and processes
                raise AttributeError(f"module 'torch.utils' attribute '{name}' is outside gradcli's language: "
                                     "scripts cannot reach files, processes or the network") from None
            reason = stdlib.refused_member(obj.name, name)
            if reason is not None:
                raise AttributeError(f"module '{obj.name}' attribute '{name}' is outside gradcli's language: "
                                     f"{reason}") from None
            if name[:1] == "_" or stdlib.python_internal(obj.name, name):     # Python's and PyTorch's internals
                raise AttributeError(f"module '{obj.name}' attribute '{name}' is outside gradcli's language") \
                    from None
            raise _missing(obj.name, name, f"module '{obj.name}' has no attribute '{name}'", obj) from None
        # called at once: the function itself, without the Builtin's partial layer
        if STATE.complex_seen and obj.name in _COMPLEX_GUARDED and value.__class__ is Builtin:
            from gradcli.engine.ops import complexops
            return complexops.guarded(value.func, name, obj.name)
        return value.func if value.__class__ is Builtin else value
    if cls.__class__ is ScriptType:    # an instance of a script's class
        try:
            return classes.instance_attr(obj, name)
        except AttributeError:
            _refuse_pytorch_api(obj, name)      # (a DataLoader's name PyTorch has)
            raise
    if cls is ScriptType:
        return classes.class_attr(obj, name)
    if cls is custom.FunctionNode:     # a custom Function's ctx (and grad_fn): its API and the script's attributes
        if name[:2] == "__" and classes.is_dunder(name):
            raise AttributeError(f"'{obj.name()}' object attribute '{name}' is outside gradcli's language")
        return custom.script_attr(obj, name)
    if _METACLASS_RULES:
        rules = _METACLASS_RULES.get(cls.__class__)
        if rules is not None:          # a member of an enum
            return rules.member_attr(obj, name)
        rules = _METACLASS_RULES.get(cls)
        if rules is not None:          # an enum class
            return rules.class_attr(obj, name)
    python = _PYTHON_OBJECTS.get(cls)
    if python is not None:             # super(), property, a script's function
        if (name == "__doc__" or name == "__module__") and (cls is MethodType or cls in classes.FUNCTION_TYPES):
            return classes.function_info(obj, name)
        if name in python:
            return getattr(obj, name)
        if cls is super:
            return classes.super_attr(obj, name)
        if name[:2] != "__":            # what the script set on its function, read as Python reads it,
            function = obj.__func__ if cls is MethodType else obj       # also through a bound method
            attrs = getattr(function, "attrs", None)
            if attrs is not None and name in attrs:
                return attrs[name]
    if cls is Builtin:
        return _class_attribute(obj, name)
    found = value_method(obj, cls, name)
    if found is not ABSENT:
        return found
    allowed = ALLOWED.get(cls)
    if allowed is None and is_sparse_tensor(obj):
        return _sparse_attr(obj, name)
    if cls is GeneratorType and name in GENERATOR_METHODS and obj.gi_code in _SCRIPT_GENERATOR_CODES:
        return getattr(obj, name)
    if cls is autograd.Node and name[:1] == "_" and saved.has(obj, name):   # grad_fn._saved_self, by node type
        return saved.attribute(obj, name)
    if cls is savedhooks.SavedTensor and name in savedhooks.SAVED_TENSOR_LATER:
        raise NotImplementedError(f"gradcli does not implement torch._C._autograd.SavedTensor.{name}")
    if cls in pycollections.NAMEDTUPLES and (name in pycollections.NAMEDTUPLE_METHODS or name in cls._fields
                                             or name in pycollections.SCRIPT_MEMBERS.get(cls, ())):
        if name == "_make":             # bounded, as on the class
            return functools.partial(pycollections.namedtuple_make, cls)
        return getattr(obj, name)
    return _class_attribute(obj, name)


# Metaclasses other than ScriptType whose classes and instances have rules of their own -> an object with
# class_attr(cls, name), member_attr(obj, name), set_attr(obj, name, value), del_attr(obj, name), attribute_names(obj)
# (enum.EnumType: gradcli.language.pyenum registers its rules when the enum module is made; types.SimpleNamespace,
# a plain class, is looked up by its instances' class the same way, and adds instance_dict(obj) for vars())
_METACLASS_RULES: dict = {}


def register_metaclass_rules(metaclass, rules) -> None:
    _METACLASS_RULES[metaclass] = rules


ABSENT = object()


def value_method(obj, kind, name: str):
    """`obj.name` as the tables give it for objects of class `kind` (for an IntEnum's member or a str enum's: as
    the language offers it on the value itself), or ABSENT."""
    methods = _SCRIPT_METHODS.get(kind)
    if methods is not None and name in methods:
        return functools.partial(methods[name], obj)
    bounded = _BOUNDED_METHODS.get(kind)
    if bounded is not None and name in bounded:
        return bounds.BoundedMethod(obj, name, bounded[name])
    allowed = ALLOWED.get(kind)
    if allowed is not None and name in allowed:
        return getattr(obj, name)
    return ABSENT


def is_sparse_tensor(obj) -> bool:
    """Whether `obj` is a sparse tensor (gradcli.engine.sparse, loaded only once a script makes one)."""
    module = sys.modules.get("gradcli.engine.sparse")
    return module is not None and obj.__class__ is module.SparseTensor


def _sparse_attr(obj, name: str):
    """`s.name` on a sparse tensor: what gradcli.engine.sparse offers; another Tensor name refused honestly."""
    from gradcli.engine import sparse
    if name == "grad_fn" or name in sparse.SCRIPT_ATTRS:
        return getattr(obj, name)
    if name in REFUSED_TENSOR_ATTRS:
        raise AttributeError(f"'Tensor' object attribute '{name}' is outside gradcli's language: "
                             f"{REFUSED_TENSOR_ATTRS[name]}")
    if name in TENSOR_ATTRS:
        raise obj.refused(name)
    raise _missing("torch.Tensor", name, f"'Tensor' object has no attribute '{name}'", obj)


# functools.partial's parts; gradcli's own partials (a list's method, a namedtuple's _make) keep theirs
_PARTIAL_PARTS = _HOLDERS[functools.partial] = frozenset(("func", "args", "keywords"))


def _gradcli_function(func) -> bool:
    """Whether `func` is one of gradcli's own Python functions (a script's are compiler.ScriptFunction)."""
    return func.__class__ is FunctionType and func.__module__.startswith("gradcli.")


def _dict_fromkeys(*args, **kwargs) -> dict:
    """dict.fromkeys: the keys taken within the bound of a dict before the dict is built."""
    if kwargs:
        raise TypeError("dict.fromkeys() takes no keyword arguments")
    if not 1 <= len(args) <= 2:
        raise TypeError(f"fromkeys expected at {'least 1 argument' if not args else 'most 2 arguments'}, "
                        f"got {len(args)}")
    return dict.fromkeys(bounds.take(args[0], "dict"), *args[1:])


def _class_attribute(obj, name: str):
    """`obj.name` past the tables of methods: on a class a script holds, its __name__ and __qualname__,
    a namedtuple's _fields and _make, str's methods unbound (`map(str.upper, words)`); a caught
    exception's args. Anything else: CPython's AttributeError, or the language's refusal."""
    if obj.__class__ in stdlib.OPAQUE_CLASSES:         # typing's values: nothing of them is in the language
        raise AttributeError(f"'{stdlib.type_name(obj)}' object attribute '{name}' is outside "
                             "gradcli's language")
    if name in CLASS_NAMES:
        text = stdlib.class_name(obj)
        if text is None and name == "__name__":
            text = stdlib.function_name(obj)
        if text is not None:
            return text
    if pycollections.is_namedtuple_class(obj) and name == "__match_args__":
        return obj.__match_args__       # its fields, for a class pattern's positional parts
    if pycollections.is_namedtuple_class(obj) and name in pycollections.NAMEDTUPLE_CLASS_ATTRS:
        return obj._fields if name == "_fields" else functools.partial(pycollections.namedtuple_make, obj)
    if pycollections.is_namedtuple_class(obj) and obj in pycollections.SCRIPT_MEMBERS and (
            name in pycollections.SCRIPT_MEMBERS[obj] or name == "__annotations__"):
        return getattr(obj, name)       # what a typing.NamedTuple class's body defined, and its annotations
    if name == "__doc__" and (pycollections.is_namedtuple_class(obj) or obj.__class__ in pycollections.NAMEDTUPLES):
        return obj.__doc__              # its docstring, or CPython's 'Point(x, y)'
    if obj is str and name in ALLOWED[str]:
        return _SCRIPT_METHODS[str].get(name) or _BOUNDED_METHODS[str].get(name) or getattr(str, name)
    if name == "fromkeys" and getattr(obj, "original", obj) is dict:
        return _dict_fromkeys
    if name in classes.SPECIAL_METHODS and (obj is object or getattr(obj, "original", None) in classes.CONTAINER_BASES):
        return _unbound_special(getattr(obj, "original", obj), name)
    if name == "from_iterable" and obj is _itertools.chain:
        return _itertools.chain.from_iterable       # (lazy: what takes its items is bounded, as for chain itself)
    if name == "__cause__" and isinstance(obj, BaseException):
        return classes.exception_cause(obj)
    if name == "__suppress_context__" and isinstance(obj, BaseException):     # set by the script's `raise ... from`
        return getattr(obj, "__gradcli_from__", False)
    if name[:2] == "__" and classes.is_dunder(name):       # Python's internals, on every object that has them
        _refuse_internal(obj, name)
    if obj.__class__ is Builtin:       # a function, method or class: none of its attributes are in the language
        if obj.func is factories.legacy_tensor and name[:1] != "_":       # torch.Tensor's methods
            if name in TENSOR_METHODS:
                return stdlib.unbound_tensor_method(name)         # torch.Tensor.add, called with the tensor first
            if name in REFUSED_TENSOR_ATTRS:
                raise AttributeError(f"type object 'Tensor' attribute '{name}' is outside gradcli's language: "
                                     f"{REFUSED_TENSOR_ATTRS[name]}")
            if name not in TENSOR_ATTRS:
                raise _missing("torch.Tensor", name, obj.no_attribute(name), obj)
            # a property (grad, shape): PyTorch's attribute descriptor, which scripts read from tensors
            raise NotImplementedError(f"gradcli does not implement torch.Tensor.{name} read from the class")
        raise AttributeError(obj.no_attribute(name))
    if name == "args" and isinstance(obj, (Exception, SystemExit)):     # an exception a script caught: its arguments
        return obj.args
    if name == "code" and isinstance(obj, SystemExit):        # sys.exit's status
        return obj.code
    if name == "value" and isinstance(obj, StopIteration):    # what a generator returned
        return obj.value
    if name in _OS_ERROR and isinstance(obj, OSError):        # torch.load's FileNotFoundError: its parts
        return getattr(obj, name)
    if obj.__class__ is functools.partial and name in _PARTIAL_PARTS and not _gradcli_function(obj.func):
        return getattr(obj, name)       # a partial the script made: its function and arguments, as the script gave them
    target = obj.original if obj.__class__ is bounds.Bounded else obj       # list, Counter as scripts hold them
    while target.__class__ in _SPECIALS_AS_THEY_ARE:
        target = target.function
    # (a value standing for one of Python's, as sys.stdout does, names what Python's has: PYTHON_NAMES)
    if hasattr(target, name) or name in getattr(type(target), "PYTHON_NAMES", ()):
        reason = REFUSED_HELD.get(target.__class__, {}).get(name)
        raise AttributeError(f"'{type_name(obj)}' object attribute '{name}' is outside gradcli's language"
                             + (f": {reason}" if reason else ""))
    if isinstance(target, type) or target.__class__ is stdlib.ClassValue:
        raise AttributeError(f"type object '{stdlib.class_name(target)}' has no attribute '{name}'", name=name,
                             obj=obj)
    _refuse_pytorch_api(obj, name)
    raise AttributeError(f"'{type_name(obj)}' object has no attribute '{name}'", name=name, obj=obj)


def _unbound_special(cls, name: str):
    """`object.__setattr__`, `dict.__getitem__`, `list.__len__`: the special method of a class a script may derive
    from, unbound, for a class body to take (`__getattr__ = dict.__getitem__`) or a method to call on its object.
    The setters come guarded (classes.GuardedSetter); the methods that change a dict or a list refuse an object's
    __dict__ (classes.AttributeDict), which takes what setattr takes only through its own methods."""
    if not hasattr(cls, name):
        raise AttributeError(f"type object '{cls.__name__}' has no attribute '{name}'", name=name, obj=cls)
    function = getattr(cls, name)
    if name in classes.SETTERS:
        return classes.GuardedSetter(function, f"type object '{cls.__name__}'", False)
    if name == "__new__":
        return classes.GuardedNew(function, cls)
    return classes.ContainerSlot(function, name in _CHANGING_SLOTS)


_CHANGING_SLOTS = frozenset(("__init__", "__setitem__", "__delitem__", "__ior__", "__iadd__", "__imul__"))


# (the unbound special methods above print as CPython's and bind as functions: held as they are, not as a Builtin)
_SPECIALS_AS_THEY_ARE = (classes.GuardedSetter, classes.ContainerSlot, classes.GuardedNew)


# gradcli's classes whose PyTorch counterparts' public attributes gradcli/data/torch_api.z lists (nn.Module
# checks its own, in its __getattr__): (module, class name, PyTorch's path), read once the module is loaded
_LIBRARY_APIS = (("gradcli.engine.optim", "Optimizer", "torch.optim.Optimizer"),
                 ("gradcli.engine.lr_scheduler", "LRScheduler", "torch.optim.lr_scheduler.LRScheduler"),
                 ("gradcli.language.torchdata", "DataLoader", "torch.utils.data.DataLoader"),
                 ("gradcli.engine.addresses", "TypedStorage", "torch.TypedStorage"),
                 ("gradcli.engine.addresses", "UntypedStorage", "torch.UntypedStorage"))


def _refuse_pytorch_api(obj, name: str) -> None:
    """An attribute PyTorch's class has and gradcli's lacks: an honest NotImplementedError."""
    if name[:1] == "_":
        return
    for module_name, class_name, path in _LIBRARY_APIS:
        module = sys.modules.get(module_name)
        if module is not None and isinstance(obj, getattr(module, class_name)) and torchapi.has(path, name):
            raise NotImplementedError(f"gradcli does not implement {path}.{name}")


# Python objects that scripts make with `def`, `class`, super() and @property, and what they may read of them
_PYTHON_OBJECTS = {super: frozenset(), property: frozenset(("setter", "getter", "deleter", "fget", "fset", "fdel", "__doc__")),
                   staticmethod: frozenset(), classmethod: frozenset(),
                   MethodType: classes.FUNCTION_INFO}      # a script's method bound to its object


# The code of the generators a script's generator functions return (gradcli.language.generators): only
# those offer send(), throw() and close(); gradcli's own generators (a module's parameters()) do not.
_SCRIPT_GENERATOR_CODES: set = set()
GENERATOR_METHODS = frozenset(("send", "throw", "close"))


def register_generator_code(code) -> None:
    _SCRIPT_GENERATOR_CODES.add(code)


def register_function_type(cls, script_function=False, names=(), holds_attributes=False) -> None:
    """Let scripts read a function's __name__ and __qualname__ (gradcli.language.compiler.ScriptFunction,
    which this module cannot import), and `names` besides (an lru_cache wrapper's cache_info); `script_function`:
    cls is ScriptFunction, whose attributes a script may also set and delete (its `attrs`), as it may those of
    a class that `holds_attributes` (functools' wrappers, which have a __dict__ in CPython)."""
    _PYTHON_OBJECTS[cls] = classes.FUNCTION_INFO | frozenset(names)
    classes.FUNCTION_TYPES.add(cls)
    if script_function:
        _FUNCTION_TYPE[0] = cls
    if script_function or holds_attributes:
        _ATTRIBUTE_HOLDERS.add(cls)


_FUNCTION_TYPE = [None]         # compiler.ScriptFunction, once registered
_ATTRIBUTE_HOLDERS: set = set()     # the function types whose instances keep the script's attributes in `attrs`


def script_function_type():
    """compiler.ScriptFunction (which this module cannot import)."""
    return _FUNCTION_TYPE[0]


def _refuse_internal(obj, name: str) -> None:
    """Refuse `obj.name` for a dunder name Python has on `obj` (on what a Builtin or a bounded builtin
    stands for); one it lacks gets CPython's "has no attribute" from the caller."""
    if obj.__class__ is Builtin:        # it stands for a C function or class: what one of those has
        prefix = obj.no_attribute(name).partition(" has no attribute")[0]
        real = int if prefix.startswith("type object") else len
    else:
        real = obj.original if obj.__class__ is bounds.Bounded else obj
        while real.__class__ in _SPECIALS_AS_THEY_ARE:     # what it stands for: a slot wrapper, a bound method
            real = real.function
        if obj.__class__ in _PYTHON_OBJECTS:        # a script's function or method: what Python's have
            real = _refuse_internal
        prefix = f"'{type_name(obj)}' object"
    if hasattr(real, name):
        raise AttributeError(f"{prefix} attribute '{name}' is outside gradcli's language")


def _missing(namespace: str, name: str, message: str, obj=None) -> Exception:
    """PyTorch's AttributeError for a name PyTorch lacks too; for one PyTorch has, an honest
    NotImplementedError (a later gradcli that adds the name serves it before this is reached)."""
    if namespace.startswith("torch") and torchapi.has(namespace, name) or stdlib.python_has(namespace, name):
        return NotImplementedError(f"gradcli does not implement {namespace}.{name}")
    return AttributeError(message, name=name, obj=obj)


_PYTHON_VALUES = frozenset((list, dict, str, int, float, tuple, set, frozenset, bool, bytes, complex, range, slice,
                            type(None)))


def python_dir(obj) -> list | None:
    """dir(obj) as the script's Python and PyTorch would list it, for Python's "Did you mean" after an
    unknown attribute (gradcli.language.suggestions); None where gradcli cannot know the list."""
    cls = obj.__class__
    if cls is Tensor:
        names = torchapi.dir_names("torch.nn.Parameter" if id(obj) in parameter_marks else "torch.Tensor")
        own = getattr(obj, "_attrs", None)
        return names if not own or names is None else sorted(set(names) | own.keys())
    if cls is Size:
        return torchapi.dir_names("torch.Size")
    if cls is ScriptModule:
        if obj.name == "torch" or obj.name.startswith("torch."):
            return torchapi.dir_names(obj.name)
        module = sys.modules.get(obj.name)        # every other script module mirrors Python's own (math, ...)
        return dir(module) if module is not None else None
    if cls is bounds.Bounded:
        obj, cls = obj.original, obj.original.__class__
    if cls in _PYTHON_VALUES:
        return dir(obj)
    if cls.__class__ is ScriptType or cls is ScriptType:
        # a script's own class (or its instance): Python's dir, unless a library class gradcli provides
        # (nn.Module, Function, Dataset) is among its bases, whose attributes are PyTorch's
        for klass in (obj if cls is ScriptType else cls).__mro__:
            if not (classes.script_made(klass) or klass is classes.ScriptObject or klass is object
                    or klass in classes.CONTAINER_BASES or klass in pycollections.NAMEDTUPLES
                    or (klass.__module__ == "builtins" and issubclass(klass, BaseException))):
                return None
        names = dir(obj)
        mro = (obj if cls is ScriptType else cls).__mro__
        if "__slots__" in names and not any("__slots__" in k.__dict__ for k in mro if classes.script_made(k)):
            names.remove("__slots__")       # (ScriptObject's, which stands for object, has none in CPython)
        return names
    return None


def _dir(*args):
    """dir(): the caller's names, sorted; dir(obj): the names Python or PyTorch would list for obj (python_dir),
    where gradcli knows them."""
    if len(args) > 1:
        raise TypeError(f"dir expected at most 1 argument, got {len(args)}")
    if not args:
        from gradcli.language import frames
        return sorted(k for k in frames.script_locals() if k.__class__ is str)
    names = python_dir(args[0])
    if names is None:
        raise NotImplementedError(f"gradcli does not implement dir() of {type_name(args[0])} objects")
    return sorted(n for n in names if n.__class__ is str and n[:1] != "\0")



def _method_namespace(obj, name: str) -> str:
    """The Builtin namespace of a method bound to `obj` (not a tensor): 'method of TYPE'."""
    if obj.__class__ is autograd.RemovableHandle:        # Python classes in PyTorch
        return "bound method of RemovableHandle"
    if obj.__class__ is autograd.MultiHandle:
        return "bound method of _MultiHandle"
    if obj.__class__ in _BOUND_METHOD_OWNERS:
        if obj.__class__ in _SHOWN_BY_DEFINER:       # (contextlib's: printed as the class defining the method)
            return f"bound method of {next(k for k in obj.__class__.__mro__ if name in k.__dict__).__name__}"
        return f"bound method of {obj.__class__.__name__}"
    if pycollections.is_namedtuple_class(obj):          # Point._make: a classmethod bound to the class
        return f"bound method of {obj.__name__}"
    if obj.__class__ in pycollections.NAMEDTUPLES:       # p._asdict: a method written in Python
        return f"bound method of {obj.__class__.__name__}"
    return f"method of {type_name(obj)}"


def attribute_names(obj) -> frozenset:
    """Every attribute name get_attr lets a script read on `obj` (for completion in the REPL)."""
    cls = obj.__class__
    if cls is Tensor:
        return frozenset(TENSOR_ATTRS).union(getattr(obj, "_attrs", None) or ())
    if cls is ScriptModule:
        return frozenset(obj.members)
    if cls.__class__ is ScriptType or cls is ScriptType:
        return classes.attribute_names(obj)
    rules = _METACLASS_RULES.get(cls.__class__) or _METACLASS_RULES.get(cls)
    if rules is not None:
        return rules.attribute_names(obj)
    if cls is custom.FunctionNode:
        return custom.script_attr_names(obj)
    if cls in pycollections.NAMEDTUPLES:
        return pycollections.NAMEDTUPLE_METHODS | frozenset(cls._fields)
    if pycollections.is_namedtuple_class(obj):
        return pycollections.NAMEDTUPLE_CLASS_ATTRS | CLASS_NAMES
    if stdlib.class_name(obj) is not None:
        return CLASS_NAMES
    if cls is autograd.Node:
        return ALLOWED[cls] | frozenset(saved.names(obj))
    return frozenset(ALLOWED.get(cls, ())) | frozenset(_SCRIPT_METHODS.get(cls, ()))


def set_attr(obj, name: str, value) -> None:
    if obj.__class__ is Tensor:
        setter = _WRITABLE_TENSOR.get(name)
        if setter is not None:
            setter(obj, value)
            return
        if name in TENSOR_ATTRS and name not in TENSOR_METHODS or name == "_version":
            raise AttributeError(f"attribute '{name}' of 'torch._C.TensorBase' objects is not writable")
        _set_tensor_own(obj, name, value)
        return
    if obj.__class__ is custom.FunctionNode:
        if classes.is_dunder(name):
            raise AttributeError(f"'{obj.name()}' object attribute '{name}' is outside gradcli's language")
        custom.script_set_attr(obj, name, value)
        return
    if obj.__class__ is ScriptModule:
        if obj.name.startswith("torch.backends."):
            from gradcli.language import backends
            if backends.set_flag(obj.name, name, value):
                return
        raise AttributeError(f"cannot set attributes of module '{obj.name}' in gradcli's language")
    if obj.__class__.__class__ is ScriptType or obj.__class__ is ScriptType:
        classes.set_attr(obj, name, value)
        return
    rules = _METACLASS_RULES.get(obj.__class__.__class__) or _METACLASS_RULES.get(obj.__class__)
    if rules is not None:
        rules.set_attr(obj, name, value)
        return
    if obj.__class__ is _FUNCTION_TYPE[0] and name == "__doc__":      # (Python's functions take a new docstring)
        obj.doc = value
        return
    if obj.__class__ in _ATTRIBUTE_HOLDERS and name[:2] != "__":    # a script's function: its own attributes
        if obj.attrs is None:
            obj.attrs = {}
        obj.attrs[name] = value
        return
    if is_sparse_tensor(obj):
        if name == "grad" and (value is None or is_sparse_tensor(value)):
            obj.grad = value
            return
        if name == "requires_grad":
            obj.requires_grad_(bool(value))
            return
        raise AttributeError(f"cannot set attribute '{name}' on a sparse Tensor: gradcli's language only sets "
                             "requires_grad and grad")
    if obj.__class__ is MethodType and name[:2] != "__":      # CPython's words: a bound method has no __dict__
        raise AttributeError(f"'method' object has no attribute '{name}'")
    if name in _HOLDERS.get(obj.__class__, ()) and getattr(getattr(obj.__class__, "__dataclass_params__", None),
                                                          "frozen", False):
        setattr(obj, name, value)       # (gradcli's own frozen dataclasses: their __setattr__ raises dataclasses' error)
    if obj.__class__ in _PYTHON_VALUES:     # no instance of Python's value types takes an attribute or a __class__:
        setattr(obj, name, value)           # CPython's own error ('int' object has no attribute 'foo'), nothing set
    raise AttributeError(f"'{type_name(obj)}' object attribute '{name}' is read-only")



def _set_tensor_own(obj: Tensor, name: str, value) -> None:
    """`x.name = value` for a name of the script's own, kept as PyTorch's tensors keep it (their `__dict__`);
    a name PyTorch's Tensor has would hide its method or attribute, which the language does not allow."""
    if classes.is_dunder(name):
        raise AttributeError(f"'Tensor' object attribute '{name}' is outside gradcli's language")
    _no_tensor_name(name)
    own = getattr(obj, "_attrs", None)
    if own is None:
        obj._attrs = own = {}
    own[name] = value


def _no_tensor_name(name: str) -> None:
    if name in TENSOR_ATTRS or name in _tensor_api_names():
        raise AttributeError(f"cannot set attribute '{name}' on a Tensor: in gradcli's language a tensor's own "
                             f"attribute may not hide PyTorch's Tensor.{name}")


def tensor_dict(obj: Tensor):
    """`vars(x)` and `x.__dict__` of a tensor: its own attributes (x.g = ...), live, as PyTorch's tensors' __dict__;
    what a script writes into it takes what `x.name = value` takes (classes.AttributeDict)."""
    from gradcli.engine import parameter        # (not at start-up)
    if parameter.buffer_persistence(obj) is not None:
        raise NotImplementedError("gradcli does not implement vars() of an nn.Buffer (PyTorch's holds its persistence "
                                  "there)")
    own = getattr(obj, "_attrs", None)
    if own.__class__ is not classes.AttributeDict:
        own = classes.AttributeDict(own or ())
        own.refuse = _no_tensor_name
        obj._attrs = own
    return own


@functools.cache
def _tensor_api_names() -> frozenset:
    return frozenset(torchapi.dir_names("torch.Tensor") or ())


_MISSING = object()


def _name_of(name) -> str:
    if name.__class__ is not str:               # CPython 3.11's words, for each of the four
        raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
    return name


def _getattr(obj, name, default=_MISSING):
    """getattr as a script calls it: the same rules as `obj.name` (a name the language does not reach
    is missing, whatever Python has)."""
    try:
        return read_attr(obj, _name_of(name))
    except AttributeError:
        if default is _MISSING:
            raise
        return default


def _hasattr(obj, name) -> bool:
    try:
        read_attr(obj, _name_of(name))
    except AttributeError:
        return False
    return True


def _setattr(obj, name, value) -> None:
    set_attr(obj, _name_of(name), value)


def _delattr(obj, name) -> None:
    del_attr(obj, _name_of(name))


def attribute_builtins() -> dict:
    """getattr, hasattr, setattr and delattr for scripts, within the allow-list; they print as Python's own."""
    import builtins
    return {"getattr": bounds.Bounded(builtins.getattr, _getattr),
            "hasattr": bounds.Bounded(builtins.hasattr, _hasattr),
            "setattr": bounds.Bounded(builtins.setattr, _setattr),
            "delattr": bounds.Bounded(builtins.delattr, _delattr),
            "vars": bounds.Bounded(builtins.vars, _vars),
            "locals": bounds.Bounded(builtins.locals, _locals),
            "globals": bounds.Bounded(builtins.globals, _globals),
            "dir": bounds.Bounded(builtins.dir, _dir)}


def _vars(*args):
    """vars(): the caller's locals; vars(obj): the live __dict__ of a script's object or a torch.nn module
    (gradcli.language.classes.instance_dict), CPython's TypeError for a value that has none."""
    if len(args) > 1:
        raise TypeError(f"vars expected at most 1 argument, got {len(args)}")
    if not args:
        from gradcli.language import frames
        return frames.script_locals()
    obj = args[0]
    cls = obj.__class__
    if cls.__class__ is ScriptType:
        try:
            return classes.instance_dict(obj)
        except AttributeError as e:
            if e.name == "__dict__":        # (CPython's words in vars(): a class whose classes all have slots)
                raise TypeError("vars() argument must have __dict__ attribute") from None
            raise
    if cls in _PYTHON_OBJECTS and (cls is MethodType or cls in classes.FUNCTION_TYPES):
        function = obj.__func__ if cls is MethodType else obj     # (a method's is its function's)
        if hasattr(type(function), "attrs"):        # what the script set on it (`f.calls = 0`), live
            if function.attrs is None:
                function.attrs = {}
            return function.attrs
    if cls is ScriptType and classes.script_made(obj):
        return classes.class_dict(obj)
    if cls is Tensor:
        return tensor_dict(obj)
    if cls is ScriptType or cls is ScriptModule or cls is Builtin:
        kind = {ScriptType: "a class", ScriptModule: "a module", Builtin: "a class or builtin"}[cls]
        raise NotImplementedError(f"gradcli does not implement vars() of {kind}")
    if cls in _PYTHON_VALUES or cls in pycollections.NAMEDTUPLES or cls is Size:     # (none has a __dict__)
        raise TypeError("vars() argument must have __dict__ attribute")
    rules = _METACLASS_RULES.get(cls)
    if rules is not None and hasattr(rules, "instance_dict"):      # a types.SimpleNamespace: what it holds
        return rules.instance_dict(obj)
    raise AttributeError(f"'{type_name(obj)}' object attribute '__dict__' is outside gradcli's language")


def _locals():
    """locals(): the variables of the script's frame that called it (gradcli.language.frames)."""
    from gradcli.language import frames
    return frames.script_locals()


def _globals():
    """globals(): the script's globals."""
    from gradcli.language import frames
    return frames.script_globals()


def del_attr(obj, name: str) -> None:
    """`del obj.name` and delattr, with PyTorch's and Python's words where they refuse."""
    if obj.__class__ is Tensor:
        if name == "grad":
            obj.grad = None
            return
        if name == "data":
            raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")
        if name == "requires_grad":
            raise RuntimeError("requires_grad must be a bool")
        if name in TENSOR_ATTRS and name not in TENSOR_METHODS or name == "_version":
            raise AttributeError(f"attribute '{name}' of 'torch._C.TensorBase' objects is not writable")
        own = getattr(obj, "_attrs", None)
        if own is not None and name in own:
            del own[name]
            return
        kind = "Parameter" if id(obj) in parameter_marks else "Tensor"
        raise AttributeError(f"'{kind}' object has no attribute '{name}'")
    if obj.__class__.__class__ is ScriptType or obj.__class__ is ScriptType:
        classes.del_attr(obj, name)
        return
    rules = _METACLASS_RULES.get(obj.__class__.__class__) or _METACLASS_RULES.get(obj.__class__)
    if rules is not None:
        rules.del_attr(obj, name)
        return
    if obj.__class__ is custom.FunctionNode:
        custom.script_del_attr(obj, name)
        return
    if obj.__class__ is ScriptModule:
        raise AttributeError(f"cannot delete attributes of module '{obj.name}' in gradcli's language")
    if obj.__class__ in _ATTRIBUTE_HOLDERS and name[:2] != "__":    # what the script set on its function
        if obj.attrs is None or name not in obj.attrs:
            raise AttributeError(f"'{type_name(obj)}' object has no attribute '{name}'")
        del obj.attrs[name]
        return
    if classes.is_dunder(name):
        get_attr(obj, name)             # a name outside the language: its refusal
    else:
        try:
            get_attr(obj, name)
        except AttributeError:
            raise AttributeError(f"'{type_name(obj)}' object has no attribute '{name}'") from None
    if type(getattr(type(obj), name, None)).__name__ in ("getset_descriptor", "member_descriptor"):
        raise AttributeError(f"attribute '{name}' of '{type_name(obj)}' objects is not writable")
    raise AttributeError(f"'{type_name(obj)}' object attribute '{name}' is read-only")


stdlib.READ_METHOD[0] = get_method      # print(file=obj) reads obj.write as a script does
