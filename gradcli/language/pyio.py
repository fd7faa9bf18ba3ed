"""Python's `io` module for scripts, its in-memory streams only: BytesIO and StringIO, with CPython's own
methods (so every result and message is CPython's), growth refused past the bound of a string, and the seek
constants and UnsupportedOperation. Files, the process's streams and the wrappers around raw streams (open,
FileIO, TextIOWrapper, the Buffered classes) are outside the language. Made on the first `import io`.

The streams are CPython's classes, subclassed only to count what a write would make before it is made: a
write at position p of n items makes the value at least p + n long (a seek past the end pads with zeros), so
p + n past STATE.max_items is refused as a string that long is. Nothing here holds a file descriptor: fileno()
is CPython's UnsupportedOperation, as for any in-memory stream. Bytes reach a script only from a BytesIO
(torch.save writes into one; b'' literals and str.encode are outside the language)."""

from __future__ import annotations

import io as _io

from gradcli.engine.addresses import address
from gradcli.engine.state import STATE

# what a script may call or read on each stream (getbuffer, which hands out a memoryview, is refused below)
BYTES_METHODS = frozenset(("close", "closed", "detach", "fileno", "flush", "getvalue", "isatty", "read", "read1",
                           "readable", "readinto", "readinto1", "readline", "readlines", "seek", "seekable", "tell",
                           "truncate", "writable", "write", "writelines"))
TEXT_METHODS = frozenset(("close", "closed", "detach", "encoding", "errors", "fileno", "flush", "getvalue",
                          "isatty", "line_buffering", "newlines", "read", "readable", "readline", "readlines", "seek",
                          "seekable", "tell", "truncate", "writable", "write", "writelines"))
_NO_VIEWS = "scripts cannot hold memoryviews (use getvalue() or read())"


def _too_large(kind: str, n: int) -> MemoryError:
    return MemoryError(f"a {kind} of {n} items is too large (gradcli allows at most {STATE.max_items})")


class BytesIO(_io.BytesIO):
    """io.BytesIO: CPython's, its writes counted against the bound of a string."""

    __slots__ = ()

    def write(self, b, /):
        if not self.closed:
            n = _nbytes(b)
            if n and self.tell() + n > STATE.max_items:     # (an empty write grows nothing)
                raise _too_large("bytes", self.tell() + n)
        return super().write(b)

    def writelines(self, lines, /):
        if self.closed:
            super().writelines(())          # (CPython's error for a closed stream)
        for line in lines:
            self.write(line)

    def __repr__(self) -> str:
        return f"<_io.BytesIO object at {address(self)}>"


def _nbytes(b) -> int | None:
    """How many bytes writing `b` adds (None: not bytes-like; CPython's write then refuses it)."""
    try:
        with memoryview(b) as view:
            return view.nbytes
    except TypeError:
        return None


class StringIO(_io.StringIO):
    """io.StringIO: CPython's, its writes counted against the bound of a string (a newline of '\\r\\n' writes
    two characters for each '\\n': `_wide`, kept in the object's __dict__, which CPython's copies carry)."""

    def __init__(self, *args, **kwargs):
        # (CPython's own __init__ checks the arguments: only a valid pair is counted)
        initial = args[0] if args else kwargs.get("initial_value", "")
        self._wide = (args[1] if len(args) > 1 else kwargs.get("newline", "\n")) == "\r\n"
        if self._wide and isinstance(initial, str):
            n = len(initial) + initial.count("\n")
            if n > STATE.max_items:
                raise _too_large("str", n)
        super().__init__(*args, **kwargs)

    def write(self, s, /):
        if not self.closed and isinstance(s, str) and s:
            n = self.tell() + len(s) + (s.count("\n") if self._wide else 0)
            if n > STATE.max_items:
                raise _too_large("str", n)
        return super().write(s)

    def __repr__(self) -> str:
        return f"<_io.StringIO object at {address(self)}>"


for _cls in (BytesIO, StringIO):
    # type(buf) and the class print as CPython's; Python's own messages name a class by its __name__, CPython's C
    # types by their dotted name ('_io.BytesIO' object is not subscriptable): __name__ is that (scripts read the
    # last part, as CPython gives it: stdlib.class_name)
    _cls.__module__ = "_io"
    _cls.__name__ = f"_io.{_cls.__qualname__}"


def members() -> dict:
    from gradcli.language import access, copying, stdlib
    access.ALLOWED[BytesIO] = BYTES_METHODS
    access.ALLOWED[StringIO] = TEXT_METHODS
    access.REFUSED_HELD[BytesIO] = {"getbuffer": _NO_VIEWS}
    stdlib._TYPE_NAMES.update({BytesIO: "_io.BytesIO", StringIO: "_io.StringIO"})
    stdlib._HELD_CLASSES.update({BytesIO: BytesIO, StringIO: StringIO})      # type(buf) is io.BytesIO
    copying.STATE_COPIED.update((BytesIO, StringIO))
    return {"BytesIO": BytesIO, "StringIO": StringIO, "UnsupportedOperation": _io.UnsupportedOperation,
            "SEEK_SET": _io.SEEK_SET, "SEEK_CUR": _io.SEEK_CUR, "SEEK_END": _io.SEEK_END,
            "DEFAULT_BUFFER_SIZE": _io.DEFAULT_BUFFER_SIZE}
