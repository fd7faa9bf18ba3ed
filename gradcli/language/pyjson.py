"""Python's `json` module for scripts: dumps and loads of strings with CPython's own encoder and decoder (so every
character and message is CPython's), JSONDecodeError; dump and load, which take files, are outside the language.
dumps writes its text piece by piece within the bound of a string, and calls the script's `default` as any call
of the script's function runs. Made on the first `import json`."""

from __future__ import annotations

import json as _json

from gradcli.engine.state import STATE
from gradcli.language import bounds

DECODE_ERROR_FIELDS = frozenset(("msg", "doc", "pos", "lineno", "colno"))
_ENCODER_OPTIONS = ("skipkeys", "ensure_ascii", "check_circular", "allow_nan", "indent", "separators", "default",
                    "sort_keys")


def _type_name(x) -> str:
    from gradcli.language import stdlib
    return stdlib.type_name(x)


def _not_serializable(o):
    """JSONEncoder.default's refusal, naming the class as the script knows it (Tensor, a script's class)."""
    raise TypeError(f"Object of type {_type_name(o).rpartition('.')[2]} is not JSON serializable")


def dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True, allow_nan=True, cls=None, indent=None,
          separators=None, default=None, sort_keys=False, **kw):
    """obj as a JSON string: CPython's encoder, its text taken piece by piece within the bound of a string."""
    if cls is not None:
        raise TypeError("json.dumps(cls=...) is outside gradcli's language")
    if kw:
        raise TypeError(f"JSONEncoder.__init__() got an unexpected keyword argument '{next(iter(kw))}'")
    if indent.__class__ is int and indent > STATE.max_items:
        raise MemoryError(f"a str of {indent} items is too large (gradcli allows at most {STATE.max_items})")
    encoder = _json.JSONEncoder(skipkeys=skipkeys, ensure_ascii=ensure_ascii, check_circular=check_circular,
                                allow_nan=allow_nan, indent=indent, separators=separators,
                                default=_not_serializable if default is None else default, sort_keys=sort_keys)
    # iterencode without _one_shot is CPython's Python encoder, which yields the text in pieces: counted as they
    # come, the text stops at the bound (an indent or a shared list repeated without end would not)
    room = STATE.max_items
    pieces = []
    size = 0
    try:
        for piece in encoder.iterencode(obj):
            size += len(piece)
            if size > room:
                raise bounds.built_too_many("str")
            pieces.append(piece)
    except ValueError as e:
        # CPython encodes without indent in C, whose message does not name the value
        if indent is None and str(e).startswith(_OUT_OF_RANGE):
            raise ValueError(_OUT_OF_RANGE) from None
        raise
    return "".join(pieces)


_OUT_OF_RANGE = "Out of range float values are not JSON compliant"


def loads(s, *, cls=None, object_hook=None, parse_float=None, parse_int=None, parse_constant=None,
          object_pairs_hook=None, **kw):
    """The value a JSON string holds (CPython's decoder; the hooks are the script's functions)."""
    if cls is not None:
        raise TypeError("json.loads(cls=...) is outside gradcli's language")
    if kw:
        raise TypeError(f"JSONDecoder.__init__() got an unexpected keyword argument '{next(iter(kw))}'")
    return _json.loads(s, object_hook=object_hook, parse_float=parse_float, parse_int=parse_int,
                       parse_constant=parse_constant, object_pairs_hook=object_pairs_hook)


def members() -> dict:
    from gradcli.language import access
    from gradcli.language.stdlib import Builtin
    access.allow_held(_json.JSONDecodeError, DECODE_ERROR_FIELDS)     # where the text went wrong
    return {"dumps": Builtin("json", "dumps", dumps), "loads": Builtin("json", "loads", loads),
            "JSONDecodeError": _json.JSONDecodeError}
