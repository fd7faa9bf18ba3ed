"""The text a notebook shows for a value: IPython's pretty-printed text/plain, as PyTorch's kernel shows it.

It is reproduced here for the values a script makes.

IPython does not show repr() for everything. Containers are laid out to a 79-column line: a tuple of
tensors breaks after its commas, and the lines of a multi-line repr inside a container are indented by
the container's depth (`(tensor([[27., 27.],` then `         [27., 27.]], ...),`). An object with
Python's default repr shows as `<AddBackward0 at 0x...>`, without the word `object`. Everything else
(tensors, numbers, strings) is its repr.

The layout is Oppen's pretty-printing algorithm as IPython runs it: text goes to a buffer with the
breakable separators of nested groups; whenever the buffered line passes the width, the outermost
group that still has separators pending is broken (all of its separators, pending and later, become
line breaks), and text before the next pending separator is written out. A repr's own line breaks are
forced breaks, which break the outermost pending group first. Which group IPython picks among several
at the same depth is reproduced as it is, since the text must be the same.
"""

from __future__ import annotations

import re
from collections import deque

from gradcli.language.compiler import ScriptFunction

WIDTH = 79              # IPython's PlainTextFormatter.max_width
MAX_ITEMS = 1000        # and its max_seq_length: longer containers end with `...`
_DEFAULT_REPR = re.compile(r"<([\w.<>]+) object at (0x[0-9a-f]+)>")


class _Group:
    __slots__ = ("depth", "pending", "broken")

    def __init__(self, depth: int):
        self.depth = depth
        self.pending: deque = deque()      # separators of this group still in the buffer
        self.broken = False


class _Separator:
    __slots__ = ("text", "group", "indent")

    def __init__(self, text: str, group: _Group, indent: int):
        self.text, self.group, self.indent = text, group, indent


class Layout:
    """Text and separators in, the laid-out text out (`str(layout)`)."""

    def __init__(self, width: int = WIDTH):
        self.width = width
        self.out: list = []
        self.column = 0             # columns written on the current output line
        self.buffered = 0           # columns waiting in the buffer
        self.buffer: deque = deque()    # str or _Separator, in order
        self.indent = 0
        root = _Group(0)
        self.stack = [root]
        self.waiting: list = [[root]]       # groups by depth that may still be broken

    def __str__(self) -> str:
        self.flush()
        return "".join(self.out)

    # -------------------------------------------------------------------------- the operations
    def text(self, s: str) -> None:
        if not self.buffer:
            self.out.append(s)
            self.column += len(s)
            return
        self.buffer.append(s)
        self.buffered += len(s)
        self._fit()

    def separator(self, s: str = " ") -> None:
        group = self.stack[-1]
        if group.broken:
            self.flush()
            self._newline(self.indent)
            return
        sep = _Separator(s, group, self.indent)
        group.pending.append(sep)
        self.buffer.append(sep)
        self.buffered += len(s)
        self._fit()

    def newline(self) -> None:
        """A line break the text itself has (a multi-line repr)."""
        group = self._outermost()
        if group is not None:
            self._release(group)
        self.flush()
        self._newline(self.indent)

    def open(self, indent: int, s: str) -> None:
        if s:
            self.text(s)
        group = _Group(self.stack[-1].depth + 1)
        self.stack.append(group)
        while len(self.waiting) <= group.depth:
            self.waiting.append([])
        self.waiting[group.depth].append(group)
        self.indent += indent

    def close(self, dedent: int, s: str) -> None:
        self.indent -= dedent
        group = self.stack.pop()
        if not group.pending:
            self._forget(group)
        if s:
            self.text(s)

    def flush(self) -> None:
        for item in self.buffer:
            self.column = self._emit(item, self.column)
        self.buffer.clear()
        self.buffered = 0

    # -------------------------------------------------------------------------- the mechanism
    def _newline(self, indent: int) -> None:
        self.out.append("\n" + " " * indent)
        self.column, self.buffered = indent, 0

    def _emit(self, item, column: int) -> int:
        if item.__class__ is str:
            self.out.append(item)
            return column + len(item)
        group = item.group
        group.pending.popleft()
        if group.broken:
            self.out.append("\n" + " " * item.indent)
            return item.indent
        if not group.pending:
            self._forget(group)
        self.out.append(item.text)
        return column + len(item.text)

    def _forget(self, group: _Group) -> None:
        try:
            self.waiting[group.depth].remove(group)
        except ValueError:
            pass

    def _outermost(self):
        """The group to break: the shallowest with a pending separator, marked broken and no longer
        waiting. Like IPython, it scans a depth's groups newest first but removes the one at the same
        index counted from the oldest, and marks every group of a depth without pending separators broken."""
        for groups in self.waiting:
            for index, group in enumerate(reversed(groups)):
                if group.pending:
                    del groups[index]
                    group.broken = True
                    return group
            for group in groups:
                group.broken = True
            groups.clear()
        return None

    def _release(self, group: _Group) -> None:
        """Write the buffer up to the group's last pending separator (now line breaks), and the text after it."""
        while group.pending:
            item = self.buffer.popleft()
            self.column = self._emit(item, self.column)
            self.buffered -= _width(item)
        while self.buffer and self.buffer[0].__class__ is str:
            item = self.buffer.popleft()
            self.column = self._emit(item, self.column)
            self.buffered -= len(item)

    def _fit(self) -> None:
        while self.column + self.buffered > self.width:
            group = self._outermost()
            if group is None:
                return
            self._release(group)


def _width(item) -> int:
    return len(item) if item.__class__ is str else len(item.text)


# ------------------------------------------------------------------------------------------ values
def pretty(value, width: int = WIDTH) -> str:
    layout = Layout(width)
    _value(layout, value, set())
    return str(layout)


def _value(layout: Layout, value, seen: set) -> None:
    kind = value.__class__
    if kind in (tuple, list):
        opening, closing = ("(", ")") if kind is tuple else ("[", "]")
        if id(value) in seen:
            layout.text(opening + "..." + closing)
            return
        _items(layout, value, seen, opening, closing, lambda item: _value(layout, item, seen))
        return
    if kind is dict:
        if id(value) in seen:
            layout.text("{...}")
            return

        def entry(key):
            _value(layout, key, seen)
            layout.text(": ")
            _value(layout, value[key], seen)
        _items(layout, value, seen, "{", "}", entry)
        return
    if kind in (set, frozenset):
        name = kind.__name__
        if not value:
            layout.text(name + "()")
            return
        try:
            items = sorted(value) if len(value) < MAX_ITEMS else list(value)
        except TypeError:
            items = list(value)
        opening, closing = ("{", "}") if kind is set else ("frozenset({", "})")
        _items(layout, items, seen, opening, closing, lambda item: _value(layout, item, seen))
        return
    _repr(layout, value)


def _items(layout: Layout, items, seen: set, opening: str, closing: str, show) -> None:
    seen.add(id(items))
    layout.open(len(opening), opening)
    for index, item in enumerate(items):
        if index:
            layout.text(",")
            layout.separator()
        if index >= MAX_ITEMS:
            layout.text("...")
            break
        show(item)
    if items.__class__ is tuple and len(items) == 1:
        layout.text(",")
    layout.close(len(opening), closing)
    seen.discard(id(items))


def function_text(f: ScriptFunction) -> str:
    """A script's function as IPython shows a Python function: `<function __main__.f(a, b=2)>`."""
    shown = list(f.parameters())
    positional = [p for p in shown if p != "/" and not p.startswith("*")]
    if f.signature is not None:
        positional = list(f.signature.positional)
    defaults = dict(zip(positional[len(positional) - len(f.defaults or ()):], f.defaults or ()))
    defaults.update(f.kwdefaults or {})
    params = [f"{p}={defaults[p]!r}" if p in defaults else p for p in shown]
    return f"<function __main__.{f.qualname}({', '.join(params)})>"


def _repr(layout: Layout, value) -> None:
    if value.__class__ is ScriptFunction:
        layout.text(function_text(value))
        return
    text = repr(value)
    default = _DEFAULT_REPR.fullmatch(text)
    if default is not None:         # Python's own repr: IPython names the class without "object"
        layout.open(1, "<")
        layout.text(f"{default.group(1)} at {default.group(2)}")
        layout.close(1, ">")
        return
    layout.open(0, "")
    for number, line in enumerate(text.splitlines()):
        if number:
            layout.newline()
        layout.text(line)
    layout.close(0, "")
