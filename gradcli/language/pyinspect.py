"""Python's `inspect` module for scripts, the part that looks at the script's own code: its frames
(currentframe, getargvalues: what d2l's `save_hyperparameters` reads), the signatures of its functions and
classes (signature, Signature, Parameter, BoundArguments, whose text, binding and messages are CPython's own, as
these are CPython's classes under the language's attribute rules) and the tests of what a value is (isclass,
isfunction, ...). Nothing here looks at gradcli's own code: the signature of a torch function is not
implemented, and Signature.from_callable takes what signature() takes. Made on the first `import inspect`."""

from __future__ import annotations

import inspect as _inspect
from types import BuiltinFunctionType, GeneratorType, MethodType

from gradcli.language import access, classes, frames, pycollections, stdlib
from gradcli.language.classes import ScriptObject, ScriptType
from gradcli.language.stdlib import Builtin

_empty = _inspect.Parameter.empty


class Parameter(_inspect.Parameter, metaclass=ScriptType):
    """inspect.Parameter: CPython's, held by scripts by the language's rules."""

    __module__ = "inspect"
    __slots__ = ()
    # (CPython's class attributes, here so that scripts reach them as this class's)
    POSITIONAL_ONLY = _inspect.Parameter.POSITIONAL_ONLY
    POSITIONAL_OR_KEYWORD = _inspect.Parameter.POSITIONAL_OR_KEYWORD
    VAR_POSITIONAL = _inspect.Parameter.VAR_POSITIONAL
    KEYWORD_ONLY = _inspect.Parameter.KEYWORD_ONLY
    VAR_KEYWORD = _inspect.Parameter.VAR_KEYWORD
    empty = _inspect.Parameter.empty


class BoundArguments(_inspect.BoundArguments, metaclass=ScriptType):
    """inspect.BoundArguments: what Signature.bind gives."""

    __module__ = "inspect"
    __slots__ = ()


class Signature(_inspect.Signature, metaclass=ScriptType):
    """inspect.Signature, whose parameters and bound arguments are the classes above."""

    __module__ = "inspect"
    __slots__ = ()
    empty = _inspect.Signature.empty
    _parameter_cls = Parameter
    _bound_arguments_cls = BoundArguments

    @classmethod
    def from_callable(cls, obj, *, follow_wrapped=True, globals=None, locals=None, eval_str=False):
        return signature(obj, follow_wrapped=follow_wrapped, globals=globals, locals=locals, eval_str=eval_str)


class _Shown:
    """An annotation CPython would print by its name (a torch class scripts hold as a Builtin: `torch.Tensor`)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _annotation(value):
    """An annotation as the Signature holds it: the value itself, or, for a class gradcli holds in another form
    (list, torch.Tensor), what formats as CPython formats that class."""
    if value.__class__ is stdlib.bounds.Bounded and isinstance(value.original, type):
        return value.original
    if value.__class__ is Builtin:
        text = repr(value)
        if text.startswith("<class '") and text.endswith("'>"):
            return _Shown(text[8:-2])
    return value


def _function_signature(fn, skip_first: bool) -> Signature:
    sig = fn.signature
    annotations = fn.annotations or {}
    kinds = _inspect.Parameter
    if sig is None:
        positional, posonly, varargs, kwonly, varkw = tuple(fn.params), 0, None, (), None
    else:
        positional, posonly, varargs, kwonly, varkw = sig.positional, sig.posonly, sig.varargs, sig.kwonly, sig.varkw
    first_default = len(positional) - len(fn.defaults)
    params = []

    def add(name, kind, default=_empty):
        params.append(Parameter(name, kind, default=default, annotation=_annotation(annotations.get(name, _empty))))

    for i, name in enumerate(positional):
        kind = kinds.POSITIONAL_ONLY if i < posonly else kinds.POSITIONAL_OR_KEYWORD
        add(name, kind, fn.defaults[i - first_default] if i >= first_default else _empty)
    if varargs is not None:
        add(varargs, kinds.VAR_POSITIONAL)
    kwdefaults = fn.kwdefaults or {}
    for name in kwonly:
        add(name, kinds.KEYWORD_ONLY, kwdefaults.get(name, _empty))
    if varkw is not None:
        add(varkw, kinds.VAR_KEYWORD)
    if skip_first:
        if not params or params[0].kind in (kinds.KEYWORD_ONLY, kinds.VAR_KEYWORD):
            raise ValueError("invalid method signature")
        if params[0].kind is not kinds.VAR_POSITIONAL:
            params = params[1:]
    return Signature(params, return_annotation=_annotation(annotations.get("return", _empty)))


def _script_init(cls):
    """The __init__ a script's class gets from its classes (None: object's)."""
    for klass in cls.__mro__:
        if klass is ScriptObject or klass is object:
            return None
        if "__init__" in klass.__dict__:
            init = klass.__dict__["__init__"]
            if init.__class__ in classes.FUNCTION_TYPES or klass in classes._SCRIPT_MADE:
                return init
            return False                # a library class's own: not the script's code
    return None


def signature(obj, *, follow_wrapped=True, globals=None, locals=None, eval_str=False):
    """inspect.signature for a script's function, lambda, method or class (and what functools.wraps made of one)."""
    if not callable(obj):
        raise TypeError(f"{obj!r} is not a callable object")
    fn, skip_first = obj, False
    if fn.__class__ is MethodType:
        fn, skip_first = fn.__func__, True
    while follow_wrapped and fn.__class__ in classes.FUNCTION_TYPES and getattr(fn, "wrapped", None) is not None:
        fn = fn.wrapped
    if fn.__class__ is ScriptType and classes.script_made(fn):
        init = _script_init(fn)
        if init is None:
            return Signature([])
        if init is not False and init.__class__ in classes.FUNCTION_TYPES and hasattr(init, "params"):
            return _function_signature(init, True)
        if init is not False and hasattr(init, "__code__"):     # what dataclasses wrote
            return _python_signature(init, True)
    elif fn.__class__ in classes.FUNCTION_TYPES and hasattr(fn, "params"):
        return _function_signature(fn, skip_first)
    raise NotImplementedError(f"gradcli does not implement inspect.signature of {stdlib.type_name(obj)} objects "
                              "other than a script's functions and classes")


def _python_signature(init, skip_first: bool) -> Signature:
    """The signature of an __init__ gradcli wrote in Python for a script's class (a dataclass's)."""
    found = _inspect.signature(init)
    params = [Parameter(p.name, p.kind, default=p.default, annotation=_annotation(p.annotation))
              for p in found.parameters.values()]
    return Signature(params[1:] if skip_first else params, return_annotation=_empty)


def currentframe():
    """The script's frame that calls it (gradcli.language.frames)."""
    return frames.current_frame()


def getargvalues(frame):
    """ArgInfo(args, varargs, keywords, locals) of a frame: its function's parameter names and its variables."""
    if frame.__class__ is not frames.Frame:
        raise TypeError(f"{frame!r} is not a frame object" if not hasattr(frame, "f_locals") else
                        "getargvalues() of what is not one of the script's frames is outside gradcli's language")
    fn = frame.function()
    args, varargs, varkw = [], None, None
    if fn is not None:
        sig = fn.signature
        if sig is None:
            args = list(fn.params)
        else:
            args = list(sig.positional) + list(sig.kwonly)
            varargs, varkw = sig.varargs, sig.varkw
    return ARG_INFO(args, varargs, varkw, frame.f_locals)


ARG_INFO = pycollections.named_tuple("ArgInfo", ["args", "varargs", "keywords", "locals"], [], "inspect")


def isclass(obj) -> bool:
    return obj.__class__ is ScriptType or isinstance(obj, type) or (
        obj.__class__ is Builtin and repr(obj).startswith("<class '")) or (
        obj.__class__ is stdlib.bounds.Bounded and isinstance(obj.original, type))


def isfunction(obj) -> bool:
    return obj.__class__ in classes.FUNCTION_TYPES and hasattr(obj, "params")


def ismethod(obj) -> bool:
    return obj.__class__ is MethodType


def isgeneratorfunction(obj) -> bool:
    if obj.__class__ is MethodType:
        obj = obj.__func__
    return isfunction(obj) and obj.is_generator_function


def isgenerator(obj) -> bool:
    return obj.__class__ is GeneratorType


def isbuiltin(obj) -> bool:
    return (obj.__class__ in (Builtin, stdlib.bounds.Bounded) and not isclass(obj)) or \
        obj.__class__ is BuiltinFunctionType


def isroutine(obj) -> bool:
    return isbuiltin(obj) or isfunction(obj) or ismethod(obj)


def isabstract(obj) -> bool:
    return obj.__class__ is ScriptType and bool(getattr(obj, "__abstractmethods__", ()))


def getdoc(obj):
    """The docstring of a script's function, method or class, cleaned as CPython cleans it."""
    doc = access.read_attr(obj, "__doc__") if (obj.__class__ is ScriptType or isroutine(obj)) else None
    return _inspect.cleandoc(doc) if doc.__class__ is str else None


def members() -> dict:
    def held(name, fn):
        return Builtin("inspect", name, fn)
    out = {name: held(name, fn) for name, fn in (
        ("currentframe", currentframe), ("getargvalues", getargvalues), ("signature", signature),
        ("isclass", isclass), ("isfunction", isfunction), ("ismethod", ismethod),
        ("isgeneratorfunction", isgeneratorfunction), ("isgenerator", isgenerator), ("isbuiltin", isbuiltin),
        ("isroutine", isroutine), ("isabstract", isabstract), ("getdoc", getdoc),
        ("cleandoc", _inspect.cleandoc))}
    out.update(Signature=Signature, Parameter=Parameter, BoundArguments=BoundArguments, ArgInfo=ARG_INFO)
    return out


access.ALLOWED[type(_inspect.Parameter.POSITIONAL_ONLY)] = frozenset(("name", "value", "description"))
access.ALLOWED[frames.Frame] = frozenset(("f_back", "f_locals", "f_globals", "f_code", "f_lineno"))
access.ALLOWED[frames.Code] = frozenset(("co_name", "co_filename", "co_argcount"))
