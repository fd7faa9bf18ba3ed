"""Completion candidates for the REPL, computed from the session without running any of its code.

`x.` is resolved by looking `x` up in the session's globals and following plain attribute access
(and integer indexing of tuples, for `next_functions[0][0].`) through the language's allow-lists.
Nothing is called: a method or a computed property is never run, a tensor-valued property (`.T`,
`.data`) is completed from the Tensor class instead of being evaluated. Only names the language
accepts are offered, never one starting with `_`.
"""

from __future__ import annotations

import os
import re

from gradcli.language import access, stdlib
from gradcli.language.bounds import Bounded
from gradcli.language.compiler import ScriptFunction
from gradcli.language.stdlib import Builtin
from gradcli.engine.tensor import Size, Tensor
from gradcli.repl import magics, scan
from gradcli.language.stdlib import ScriptModule
from gradcli.language import classes
from gradcli.language.classes import ScriptType

# The language's keywords (the parser refuses Python's other ones).
KEYWORDS = ("False", "None", "True", "and", "as", "assert", "break", "class", "continue", "def", "del", "elif",
            "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
            "not", "or", "pass", "raise", "return", "try", "while", "with")

# Tensor attributes read when completing a chain through them: stored fields and cheap properties
# that compute nothing.
_TENSOR_FIELDS = frozenset(("grad", "grad_fn", "requires_grad", "is_leaf", "shape", "dtype", "device",
                            "ndim", "retains_grad"))
# Properties that return a new Tensor: completed as "some Tensor" without computing them.
_TENSOR_VALUED = frozenset(("T", "mT", "H", "mH", "data"))
_NODE_FIELDS = frozenset(("next_functions", "variable"))
# print's keywords as the language has them (its `file=` is refused).
_PRINT_KEYWORDS = ("sep", "end")


class _TensorType:
    """Stands for "a Tensor" when a chain goes through a property that is not evaluated."""


TENSOR = _TensorType()


def complete(text: str, namespace: dict, builtins: dict, requested: bool = True) -> tuple[int, list]:
    """Candidates for the end of `text` (the input before the cursor).

    Returns (length of the word being completed, [(candidate, meta), ...]); the candidate replaces
    the word. When not `requested` (the menu that follows typing, rather than Tab), nothing is
    offered before a word is begun, except members after a '.' and keyword arguments after '('.
    """
    first = text.lstrip()
    if first.startswith("%") and "\n" not in first:
        return _complete_magic(first, namespace)
    info = scan.scan(text)
    if info.string is not None or info.in_comment:
        return 0, []
    line = text[text.rfind("\n") + 1:]
    imported = _complete_import(line)
    if imported is not None:
        return imported
    word = _trailing_identifier(text)
    before = text[:len(text) - len(word)]
    if word[:1].isdigit():
        return 0, []
    if before.endswith("."):
        obj = _resolve_chain(before[:-1], namespace)
        if obj is None:
            return 0, []
        return len(word), _matching(_members(obj), word)
    found = []
    if info.brackets and info.brackets[-1][0] == "(" and before.rstrip().endswith(("(", ",")):
        opening = info.brackets[-1][1]
        callee = _resolve_chain(text[:opening], namespace, builtins)
        if callee is not None:
            given = set(re.findall(r"([A-Za-z_]\w*)\s*=(?!=)", text[opening:]))
            found += [(f"{name}=", "keyword argument") for name in _parameters(callee, builtins)
                      if name.startswith(word) and name not in given]
    if not word and not requested:
        return 0, found
    names = {}
    for name in KEYWORDS:
        names[name] = "keyword"
    for name in builtins:
        names[name] = "builtin"
    for name, value in namespace.items():
        names[name] = _kind(value)
    found += _matching(names, word)
    return len(word), found


def _matching(candidates: dict, word: str) -> list:
    # `_`-led names (a namedtuple's _asdict, a class's __name__) once the word asks for them
    return [(name, candidates[name]) for name in sorted(candidates)
            if name.startswith(word) and (not name.startswith("_") or word.startswith("_"))]


def _trailing_identifier(text: str) -> str:
    i = len(text)
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
        i -= 1
    return text[i:]


# ------------------------------------------------------------------------------------ resolving
_STEP = re.compile(r"(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\])")


def _resolve_chain(text: str, namespace: dict, builtins: dict | None = None):
    """The object a chain like `x.grad_fn.next_functions[0][0]` at the end of `text` names, or None.

    Only a plain chain is followed: `(x * 2).` or `f(x).` end in a call or a bracket and resolve to
    nothing, since finding their value would mean running code."""
    match = re.search(r"([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*)\Z", text)
    if match is None:
        return None
    start = match.start()
    if start > 0 and (text[start - 1] in ".)]'\"" or text[start - 1].isalnum()):
        return None
    base = match.group(1)
    if base.startswith("_"):
        return None
    if base in namespace:
        obj = namespace[base]
    elif builtins is not None and base in builtins:
        obj = builtins[base]
    else:
        return None
    for attr, index in _STEP.findall(match.group(2)):
        obj = _step(obj, attr, index)
        if obj is None:
            return None
    return obj


def resolve(text: str, namespace: dict) -> tuple[bool, object]:
    """(True, value) when `text` is exactly a plain chain (`out`, `x.grad_fn.next_functions[0][0]`)
    whose value can be read without running code; (False, None) otherwise."""
    text = text.strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*", text):
        return False, None
    obj = _resolve_chain(text, namespace)
    if obj is None or obj is TENSOR or obj.__class__ is _Method:
        return False, None
    return True, obj


def _step(obj, attr: str, index: str):
    if index:
        if obj.__class__ in (tuple, list, Size):
            i = int(index)
            return obj[i] if i < len(obj) else None
        return None
    if attr.startswith("_"):
        return None
    if obj is TENSOR or obj.__class__ is Tensor:
        if attr in _TENSOR_VALUED:
            return TENSOR
        if attr in _TENSOR_FIELDS:       # a value only a real tensor has
            return None if obj is TENSOR else getattr(obj, attr)
        if attr in access.TENSOR_ATTRS:
            return _Method(getattr(Tensor, attr), attr)
        return None
    if obj.__class__ is ScriptModule:
        return obj.members.get(attr)
    if obj.__class__.__class__ is ScriptType or obj.__class__ is ScriptType:
        return classes.static_attr(obj, attr)      # never a property's or __getattr__'s code: nothing runs
    if attr in _NODE_FIELDS and attr in access.ALLOWED.get(obj.__class__, ()):
        return getattr(obj, attr)
    return None


class _Method:
    """A Tensor method named in a chain: its function, for its keyword arguments."""

    def __init__(self, function, name):
        self.function = function
        self.name = name


def _members(obj) -> dict:
    if obj is TENSOR or obj.__class__ is Tensor:
        return {name: _tensor_kind(name) for name in access.TENSOR_ATTRS}
    if obj.__class__ is ScriptModule:
        return {name: "constant" if value.__class__ in (int, float) else _kind(value)
                for name, value in obj.members.items()}
    names = access.attribute_names(obj)
    if obj.__class__.__class__ is ScriptType or obj.__class__ is ScriptType:
        return {name: "method" if callable(classes.static_attr(obj, name)) else "attribute" for name in names}
    return {name: "method" if callable(getattr(obj.__class__, name, None)) else "attribute" for name in names}


def _tensor_kind(name: str) -> str:
    if name in _TENSOR_FIELDS or name in _TENSOR_VALUED:
        return "attribute"
    return "method"


def _kind(value) -> str:
    """A short word for the completion menu."""
    if value.__class__ is Tensor:
        return f"tensor {list(value.shape)}"
    if value.__class__ is ScriptModule:
        return "module"
    if value.__class__ is ScriptFunction:
        return "function"
    if isinstance(value, type) or (value.__class__ is Builtin and repr(value).startswith("<class ")) \
            or (value.__class__ is Bounded and isinstance(value.original, type)):      # list, collections.Counter
        return "class"
    if callable(value):
        return "function"
    name = type(value).__name__
    return "dtype" if name == "torch.dtype" else name


def _parameters(callee, builtins: dict) -> list:
    """Keyword parameters of something a script can call, read from its definition."""
    if callee.__class__ is ScriptFunction:
        return list(callee.keyword_names())
    if callee is builtins.get("print"):
        return list(_PRINT_KEYWORDS)
    if callee.__class__ is _Method:
        function, name = callee.function, callee.name
    elif callee.__class__ is Builtin:        # torch.X as scripts see it: the function inside
        function, name = callee.func, callee.func.__name__
    else:
        function, name = callee, getattr(callee, "__name__", "")
    params = _signature_parameters(function)
    if params is None:
        return []
    names, variadic = params
    if variadic and name in access.TENSOR_ATTRS:
        # torch.X(input, *args, **kwargs) forwards to Tensor.X: offer the method's keywords too
        method = _signature_parameters(getattr(Tensor, name))
        if method is not None:
            names = names + [n for n in method[0] if n not in names]
    return [n for n in names if n != "self" and not n.startswith("_")]


def _signature_parameters(function):
    import inspect       # here: only completion of call arguments needs it
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    names, variadic = [], False
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            variadic = True
        elif p.kind != p.POSITIONAL_ONLY:
            names.append(p.name)
    return names, variadic


# --------------------------------------------------------------------------------- import lines


def _complete_import(line: str):
    m = re.match(r"\s*import\s+([\w.]*)\Z", line)
    if m:
        word = m.group(1)
        return len(word), [(name, "module") for name in sorted(stdlib.modules()) if name.startswith(word)]
    m = re.match(r"\s*from\s+([\w.]*)\Z", line)
    if m:
        word = m.group(1)
        return len(word), [(name, "module") for name in sorted(stdlib.modules()) if name.startswith(word)]
    m = re.match(r"\s*from\s+([\w.]+)\s+import\s+(?:[\w]+\s*,\s*)*(\w*)\Z", line)
    if m:
        module, word = stdlib.module(m.group(1)), m.group(2)
        if module is None:
            return 0, []
        return len(word), _matching({n: _kind(v) for n, v in module.members.items()}, word)
    return None


# -------------------------------------------------------------------------------------- magics
def _complete_magic(text: str, namespace: dict) -> tuple[int, list]:
    if " " not in text:
        return len(text), [(f"%{name}", magic.summary) for name, magic in sorted(magics.MAGICS.items())
                           if f"%{name}".startswith(text)]
    name, _, arg = text[1:].partition(" ")
    magic = magics.MAGICS.get(name)
    if magic is None:
        return 0, []
    arg = arg.lstrip()
    if magic.argument == "tensor":
        word = _trailing_identifier(arg)
        if word != arg:
            before = arg[:len(arg) - len(word)]
            if before.endswith("."):
                obj = _resolve_chain(before[:-1], namespace)
                return (len(word), _matching(_members(obj), word)) if obj is not None else (0, [])
            return 0, []
        return len(word), [(n, _kind(v)) for n, v in sorted(namespace.items())
                           if n.startswith(word) and not n.startswith("_")
                           and v.__class__ is Tensor]
    if magic.argument == "file":
        return _complete_path(arg)
    if magic.argument == "choice":
        return len(arg), [(c, "") for c in magic.choices if c.startswith(arg)]
    if magic.argument == "magic":
        return len(arg), [(n, m.summary) for n, m in sorted(magics.MAGICS.items()) if n.startswith(arg)]
    return 0, []


def _complete_path(arg: str) -> tuple[int, list]:
    """.grad files and folders for %load and %save."""
    folder, _, stem = arg.rpartition("/")
    where = os.path.expanduser(folder + "/" if folder or arg.startswith("/") else ".")
    try:
        entries = sorted(os.listdir(where or "/"))
    except OSError:
        return 0, []
    found = []
    for entry in entries:
        if not entry.startswith(stem) or (entry.startswith(".") and not stem.startswith(".")):
            continue
        if os.path.isdir(os.path.join(where, entry)):
            found.append((entry + "/", "folder"))
        elif entry.endswith(".grad"):
            found.append((entry, "script"))
    return len(stem), found


# ---------------------------------------------------------------------------------- prompt_toolkit
def make_completer(shell):
    """A prompt_toolkit Completer over `shell`'s session (imported here: `gradcli run` never loads it)."""
    from prompt_toolkit.completion import Completer, Completion

    class GradCompleter(Completer):
        def get_completions(self, document, complete_event):
            try:
                session = shell.session
                length, found = complete(document.text_before_cursor, session.globals, session.builtins,
                                         complete_event.completion_requested)
            except Exception:       # a completion problem must never disturb typing
                return
            for text, meta in found:
                yield Completion(text, start_position=-length, display_meta=meta)

    return GradCompleter()
