"""str.format and str.format_map as scripts call them: CPython's results and messages, with each field's
attributes read through the language's allow-list and every width and the result within the string bound."""

from __future__ import annotations

import _string

from gradcli.language.bounds import check_format_spec
from gradcli.engine.state import STATE

CONVERSIONS = {"r": repr, "s": str, "a": ascii}     # '{x!r}' and f'{x!r}'

# CPython allows a replacement field inside a format spec, and none inside that
_MAX_DEPTH = 2


class _Fields:
    """One call's state: the arguments, how fields are numbered (auto or manual) and the text's size."""

    __slots__ = ("args", "kwargs", "get_attr", "auto", "next_index", "size")

    def __init__(self, args, kwargs, get_attr):
        self.args, self.kwargs, self.get_attr = args, kwargs, get_attr
        self.auto = None            # True: '{}' fields seen, False: '{0}' fields seen
        self.next_index = 0
        self.size = 0

    def grow(self, n: int) -> None:
        self.size += n
        if self.size > STATE.max_items:
            raise MemoryError(f"a str of more than {STATE.max_items} items is too large (gradcli allows at most "
                              f"{STATE.max_items})")

    def lookup(self, field: str):
        first, rest = _string.formatter_field_name_split(field)
        if first == "":
            if self.auto is False:
                raise ValueError("cannot switch from manual field specification to automatic field numbering")
            self.auto = True
            first = self.next_index
            self.next_index += 1
        elif first.__class__ is int:
            if self.auto:
                raise ValueError("cannot switch from automatic field numbering to manual field specification")
            self.auto = False
        if first.__class__ is int:
            if self.args is None:
                raise ValueError("Format string contains positional fields")
            if first >= len(self.args):
                raise IndexError(f"Replacement index {first} out of range for positional args tuple")
            value = self.args[first]
        else:
            value = self.kwargs[first]
        for is_attribute, key in rest:
            # '{0.__class__}' reads an attribute: the language's rules, as for `x.name` in a script
            value = self.get_attr(value, key) if is_attribute else value[key]
        return value

    def render(self, text: str, depth: int) -> str:
        if depth <= 0:
            raise ValueError("Max string recursion exceeded")
        out = []
        for literal, field, spec, conversion in _string.formatter_parser(text):
            if literal:
                self.grow(len(literal))
                out.append(literal)
            if field is None:
                continue
            value = self.lookup(field)
            if conversion is not None:
                convert = CONVERSIONS.get(conversion)
                if convert is None:
                    raise ValueError(f"Unknown conversion specifier {conversion}")
                value = convert(value)
            if spec and "{" in spec:
                spec = self.render(spec, depth - 1)
            check_format_spec(spec)         # '{:99999999}' would build a string that long
            piece = format(value, spec)
            self.grow(len(piece))
            out.append(piece)
        return "".join(out)


def format_string(text: str, args: tuple | None, kwargs: dict, get_attr) -> str:
    """text.format(*args, **kwargs); with args None, text.format_map(kwargs)."""
    return _Fields(args, kwargs, get_attr).render(text, _MAX_DEPTH)
