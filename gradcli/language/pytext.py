"""Python's `pprint` and `textwrap` modules for scripts: CPython's own formatting (tensors inside print through
their repr, as PyTorch's do), with what they build bounded: pprint writes into a buffer that stops at the bound of a
string, and textwrap's indents and tabs are counted before any text is made. pprint writes where print writes
(sys.stdout, or sys.stderr when given it). Made on the first `import pprint` or `import textwrap`."""

from __future__ import annotations

import pprint as _pprint
import textwrap as _textwrap

from gradcli.engine.state import STATE
from gradcli.language import bounds, stdlib


class _Buffer:
    """Where PrettyPrinter writes: its pieces, refused past the bound of a string."""

    __slots__ = ("pieces", "size")

    def __init__(self):
        self.pieces, self.size = [], 0

    def write(self, text: str) -> None:
        self.size += len(text)
        if self.size > STATE.max_items:
            raise bounds.built_too_many("str")
        self.pieces.append(text)


def _formatted(obj, indent, width, depth, compact, sort_dicts, underscore_numbers) -> str:
    """pformat(obj, ...) as CPython's PrettyPrinter writes it (its checks of the arguments first)."""
    if indent.__class__ is int and indent > STATE.max_items:
        raise bounds.built_too_many("str")
    buffer = _Buffer()
    _pprint.PrettyPrinter(indent=indent, width=width, depth=depth, stream=buffer, compact=compact,
                          sort_dicts=sort_dicts, underscore_numbers=underscore_numbers).pprint(obj)
    return "".join(buffer.pieces)[:-1]


def pformat(object, indent=1, width=80, depth=None, *, compact=False, sort_dicts=True, underscore_numbers=False):
    """object's repr laid out over lines of at most `width` characters, nested items indented."""
    return _formatted(object, indent, width, depth, compact, sort_dicts, underscore_numbers)


def pprint(object, stream=None, indent=1, width=80, depth=None, *, compact=False, sort_dicts=True,
           underscore_numbers=False):
    """Print pformat(object, ...) and a newline: where print writes, or to sys.stderr or a script's object."""
    text = _formatted(object, indent, width, depth, compact, sort_dicts, underscore_numbers) + "\n"
    _write(stream, text, object)


def pp(object, *args, sort_dicts=False, **kwargs):
    """pprint with the dict keys in their own order."""
    pprint(object, *args, sort_dicts=sort_dicts, **kwargs)


def _write(stream, text: str, obj) -> None:
    from gradcli.language import pysys
    if stream is None or stream is pysys.STDOUT or stream is pysys.STDERR:
        stdlib.stream_write("stderr" if stream is pysys.STDERR else "stdout", text, (obj,))
        return
    from gradcli.language import access
    access.get_method(stream, "write")(text)        # a script's object: its write, as the script reads it


# ------------------------------------------------------------------------------------------- textwrap

def _check_room(text, kwargs: dict) -> None:
    """Refuse, before any text is made, what the indents (one per line: at most one line per character) and the
    tabs (expanded) could make past the bound of a string."""
    if not isinstance(text, str):
        return
    room = STATE.max_items
    tabsize = kwargs.get("tabsize", 8)
    if kwargs.get("expand_tabs", True) and tabsize.__class__ is int and tabsize * text.count("\t") > room:
        raise bounds.built_too_many("str")
    longest = max((len(kwargs[k]) for k in ("initial_indent", "subsequent_indent", "placeholder")
                   if isinstance(kwargs.get(k), str)), default=0)
    if longest * (len(text) + 1) > room:
        raise bounds.built_too_many("str")


def wrap(text, width=70, **kwargs):
    """The text's words in lines of at most `width` characters (a list of the lines)."""
    _check_room(text, kwargs)
    return _textwrap.wrap(text, width, **kwargs)


def fill(text, width=70, **kwargs):
    """wrap()'s lines joined into one string."""
    _check_room(text, kwargs)
    return _textwrap.fill(text, width, **kwargs)


def shorten(text, width, **kwargs):
    """The text's words, whitespace collapsed, cut to fit `width` with the placeholder at the end."""
    _check_room(text, kwargs)
    return _textwrap.shorten(text, width, **kwargs)


def indent(text, prefix, predicate=None):
    """The text with `prefix` before each line (each line that is not blank, or for which predicate is true)."""
    if isinstance(text, str) and isinstance(prefix, str) and \
            len(prefix) * (text.count("\n") + 1) + len(text) > STATE.max_items:
        raise bounds.built_too_many("str")
    return _textwrap.indent(text, prefix, predicate)


def pprint_members() -> dict:
    from gradcli.language.stdlib import Builtin
    return {name: Builtin("pprint", name, fn) for name, fn in (
        ("pprint", pprint), ("pformat", pformat), ("pp", pp), ("saferepr", _pprint.saferepr),
        ("isreadable", _pprint.isreadable), ("isrecursive", _pprint.isrecursive))}


def textwrap_members() -> dict:
    from gradcli.language.stdlib import Builtin
    return {name: Builtin("textwrap", name, fn) for name, fn in (
        ("wrap", wrap), ("fill", fill), ("shorten", shorten), ("dedent", _textwrap.dedent), ("indent", indent))}
