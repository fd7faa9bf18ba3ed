"""Python's `logging` module for scripts: loggers (getLogger, the dotted hierarchy, propagation), the levels,
basicConfig, StreamHandler and NullHandler, Formatter with its three styles, Filter, LoggerAdapter and LogRecord,
written here to CPython 3.11's rules so a script prints what CPython prints. Made on the first `import logging`.

Nothing here is the process's: the real `logging` module, its root logger and the real sys.stderr are never
touched. A handler writes to the script's streams (sys.stdout and sys.stderr as the script holds them: the
session's, or what contextlib.redirect_stdout put there, or an io.StringIO), and a script's own objects (a
stream, a filter, a handler of its own class) are reached through the language's allow-list only. What a script
configures lasts one session: it lives in the engine state (STATE.logging, a Run: the loggers, the root logger's
attributes, logging.disable's level, the level names), which each session resets and a replay's isolation keeps
apart; logging.root is one object whose attributes are the running session's.

The classes are library classes of the language (ScriptType), so a script may derive from Handler, Formatter,
Filter, Logger and LoggerAdapter as in CPython. Their objects hold CPython's attributes only (name, level,
handlers, parent, stream, ...), and their methods take only their own class's objects as `self`. A record holds
the exception it reports without its traceback (exc_info's third item is None). Files, sockets, logging.config,
logging.handlers and the process-wide hooks (setLoggerClass, setLogRecordFactory) are outside the language."""

from __future__ import annotations

import _string
import os
import re
import string
import sys
import threading
import time
from types import FunctionType

from gradcli.engine.state import STATE
from gradcli.language.classes import ScriptObject, ScriptType
from gradcli.language.pysys import held_stream as _held, script_stream as _script_stream, write_to as _write

CRITICAL = FATAL = 50
ERROR = 40
WARNING = WARN = 30
INFO = 20
DEBUG = 10
NOTSET = 0
BASIC_FORMAT = "%(levelname)s:%(name)s:%(message)s"
_LEVEL_NAMES = {CRITICAL: "CRITICAL", ERROR: "ERROR", WARNING: "WARNING", INFO: "INFO", DEBUG: "DEBUG",
                NOTSET: "NOTSET"}
_NAME_LEVELS = {"CRITICAL": CRITICAL, "FATAL": FATAL, "ERROR": ERROR, "WARN": WARNING, "WARNING": WARNING,
                "INFO": INFO, "DEBUG": DEBUG, "NOTSET": NOTSET}
_MODULE = "logging"
_NO_FILES = "scripts cannot write files or reach the network (log to a stream: StreamHandler, basicConfig(stream=))"


class Run:
    """One session's logging (STATE.logging, which a replay's isolation keeps apart): the root logger's
    attributes, the loggers getLogger made (by name), logging.disable's level, the level names (addLevelName adds
    some), when logging started (relativeCreated) and CPython's last-resort handler."""

    __slots__ = ("root", "loggers", "disable", "level_names", "name_levels", "start", "last_resort", "traced")

    def __init__(self):
        self.root = {"name": "root", "level": WARNING, "parent": None, "propagate": True, "handlers": [],
                     "disabled": False, "filters": [], "_cache": {}}
        self.loggers = {}
        self.disable = 0
        self.level_names = dict(_LEVEL_NAMES)
        self.name_levels = dict(_NAME_LEVELS)
        self.start = time.time()
        self.last_resort = None
        self.traced = {}        # id -> the exc_info tuples made of an exception, whose traceback CPython's would hold


def _run() -> Run:
    run = STATE.logging
    if run is None:
        run = STATE.logging = Run()
        run.last_resort = _StderrHandler(WARNING)
    return run


def reset() -> None:
    """A new session's logging.root: without the attributes a script set on it (the rest is STATE.logging's)."""
    ROOT.__dict__.clear()


# ---- reaching the script's objects: through the language's allow-list, as the script itself would

def _get(obj, name: str):
    """`obj.name` for an object a script may have put anywhere (a handler, a filter, a stream)."""
    if type(type(obj)) is ScriptType:
        return getattr(obj, name)
    from gradcli.language import access
    return access.read_attr(obj, name)


def _has(obj, name: str):
    """`obj.name` if the script's object has it, else None."""
    try:
        return _get(obj, name)
    except AttributeError:
        return None


def _own_methods(cls):
    """A class decorator: each method of the class (its properties' functions too) refuses another kind of object
    as `self`. Called through the class (`Logger.__init__(print, 'x')`, `Handler.format('{0.__class__}', r)`), a
    method would set CPython's attribute names on gradcli's own objects or call their methods by name."""
    for name, value in list(cls.__dict__.items()):
        if isinstance(value, FunctionType):
            setattr(cls, name, _checked(cls, name, value))
        elif isinstance(value, property):
            setattr(cls, name, property(*(f and _checked(cls, name, f) for f in (value.fget, value.fset)),
                                        doc=value.__doc__))
    return cls


def _checked(cls, name: str, function):
    def method(self, *args, **kwargs):
        if not isinstance(self, cls):
            raise TypeError(f"{cls.__name__}.{name}() of a '{_type_name(self)}' object is outside gradcli's "
                            f"language: it takes logging.{cls.__name__} objects")
        return function(self, *args, **kwargs)
    # named and documented as the method (no __wrapped__: that would hand a script the unchecked function)
    method.__name__, method.__qualname__ = function.__name__, function.__qualname__
    method.__module__, method.__doc__ = function.__module__, function.__doc__
    return method


def _record(record) -> None:
    """A record given to a formatter, filter or handler: a LogRecord, or an object of the script's own class."""
    if type(type(record)) is not ScriptType:
        raise TypeError(f"a log record must be a logging.LogRecord, not '{_type_name(record)}'")


def _type_name(x) -> str:
    from gradcli.language import stdlib
    return stdlib.type_name(x)


def _flush(stream) -> None:
    from gradcli.language import pysys
    if stream.__class__ is pysys.TextIOWrapper:
        STATE.streams[1](stream.stream)
        return
    flush = _has(stream, "flush")
    if flush is not None:
        flush()


def _stream_name(stream) -> str:
    """What CPython's StreamHandler repr shows of its stream: its `name` ('<stderr>'), else nothing."""
    from gradcli.language import pysys
    if stream.__class__ is pysys.TextIOWrapper:
        return f"<{stream.stream}>"
    try:
        name = _has(stream, "name")
    except Exception:
        return ""
    return str(name) if name is not None and name != "" else ""


# ---- levels

def _check_level(level) -> int:
    if isinstance(level, int):
        return level
    if isinstance(level, str):
        found = _run().name_levels.get(level)
        if found is None:
            raise ValueError(f"Unknown level: {level!r}")
        return found
    raise TypeError(f"Level not an integer or a valid string: {level!r}")


def getLevelName(level):
    """The name of a level (an int), or the level of a name; 'Level N' for one with no name."""
    run = _run()
    found = run.level_names.get(level) if _hashable(level) else None
    if found is not None:
        return found
    found = run.name_levels.get(level) if _hashable(level) else None
    if found is not None:
        return found
    return f"Level {level}"


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def addLevelName(level, levelName):
    """Name a level (for the session): records of that level show the name."""
    run = _run()
    run.level_names[level] = levelName
    run.name_levels[levelName] = level


def getLevelNamesMapping():
    """The level names and their numbers, as a new dict."""
    return dict(_run().name_levels)


def disable(level=CRITICAL):
    """Drop every record at `level` or below, whatever the loggers' levels (disable(NOTSET) undoes it)."""
    _run().disable = _check_level(level)
    _clear_caches()


def _clear_caches() -> None:
    """Forget what isEnabledFor found, for the loggers getLogger made and the root (CPython's manager forgets
    those only: a logger made directly keeps its answers, and so does one whose level a script set by assignment
    rather than setLevel)."""
    run = _run()
    for logger in run.loggers.values():
        logger._cache.clear()
    run.root["_cache"].clear()


# ---- where a record comes from: the script's frames

def _frames() -> list:
    from gradcli.language import frames
    return frames._walk()


def _frame_name(found: list, index: int) -> str:
    from gradcli.language import frames
    return frames.Frame(found, index).name()


def _filename() -> str:
    """The script's file as CPython's code objects name it (gradcli.language.pytraceback)."""
    from gradcli.language import pytraceback
    return pytraceback.filename()


def _stack_text(found: list, index: int) -> str:
    """The script's frames from the outermost to `index`, as CPython's traceback.print_stack writes them."""
    filename = _filename()
    source_line = STATE.streams[4] if STATE.streams is not None and len(STATE.streams) > 4 else None
    out = []
    for i in range(len(found) - 1, index - 1, -1):
        line = found[i][2] or 0
        out.append(f'  File "{filename}", line {line}, in {_frame_name(found, i)}\n')
        text = source_line(line) if source_line is not None else None
        if text is not None and text.strip():
            out.append(f"    {text.strip()}\n")
    return "".join(out)


def _caller(stacklevel: int, stack_info: bool):
    """(file name, line, function name, stack text or None) of the script's frame that logged, `stacklevel`
    frames out (CPython's findCaller: past the outermost, the frame that called)."""
    found = _frames()
    if not found:
        return "(unknown file)", 0, "(unknown function)", None
    index = stacklevel - 1 if 1 <= stacklevel <= len(found) else 0
    sinfo = None
    if stack_info:
        sinfo = "Stack (most recent call last):\n" + _stack_text(found, index)
        if sinfo.endswith("\n"):
            sinfo = sinfo[:-1]
    return _filename(), found[index][2] or 0, _frame_name(found, index), sinfo


def _exception_text(e) -> str:
    """The script's exception as CPython's traceback.print_exception writes it (gradcli.language.pytraceback)."""
    from gradcli.language import pytraceback
    return pytraceback.exception_text(e)


# ---- records

@_own_methods
class LogRecord(ScriptObject, metaclass=ScriptType):
    """One logged event: its logger's name, level, message and arguments, where it was logged, and when."""

    __module__ = _MODULE

    def __init__(self, name, level, pathname, lineno, msg, args, exc_info, func=None, sinfo=None, **kwargs):
        now = time.time()
        self.name = name
        self.msg = msg
        if args and len(args) == 1 and _is_mapping(args[0]) and args[0]:
            args = args[0]
        self.args = args
        self.levelname = getLevelName(level)
        self.levelno = level
        self.pathname = pathname
        try:
            self.filename = os.path.basename(pathname)
            self.module = os.path.splitext(self.filename)[0]
        except (TypeError, ValueError, AttributeError):
            self.filename = pathname
            self.module = "Unknown module"
        self.exc_info = exc_info
        self.exc_text = None
        self.stack_info = sinfo
        self.lineno = lineno
        self.funcName = func
        self.created = now
        self.msecs = int((now - int(now)) * 1000) + 0.0
        self.relativeCreated = (now - _run().start) * 1000
        self.thread = threading.get_ident()
        self.threadName = threading.current_thread().name
        self.processName = "MainProcess"
        self.process = os.getpid()

    def __repr__(self):
        return f'<LogRecord: {self.name}, {self.levelno}, {self.pathname}, {self.lineno}, "{self.msg}">'

    def getMessage(self):
        """The message with its arguments put in (`msg % args`)."""
        msg = str(self.msg)
        if self.args:
            from gradcli.language import bounds
            bounds.check_percent_format(msg, self.args)
            msg = msg % self.args
        return msg


def _is_mapping(x) -> bool:
    from collections.abc import Mapping
    return isinstance(x, Mapping)


def makeLogRecord(dict):
    """A record whose attributes are the dict's items (the others as an empty record has them)."""
    record = LogRecord(None, None, "", 0, "", (), None, None)
    _set_items(record, dict)
    return record


def _set_items(record, items) -> None:
    from gradcli.language import classes
    for key in items:
        classes.check_dict_key(key)
        record.__dict__[key] = items[key]


# ---- formatters and their styles

# what the styles' validate() accepts: a %-field, a {}-field's name and its format spec (CPython's patterns)
_PERCENT_FIELD = re.compile(r"%\(\w+\)[#0+ -]*(\*|\d+)?(\.(\*|\d+))?[diouxefgcrsa%]", re.I)
_FIELD_NAME = re.compile(r"^(\d+|\w+)(\.\w+|\[[^]]+\])*$")
_FIELD_SPEC = re.compile(r"^(.?[<>=^])?[+ -]?#?0?(\d+|{\w+})?[,_]?(\.(\d+|{\w+}))?[bcdefgnosx%]?$", re.I)


@_own_methods
class PercentStyle(ScriptObject, metaclass=ScriptType):
    """A format of %-fields: '%(levelname)s:%(message)s'."""

    __module__ = _MODULE
    default_format = "%(message)s"
    asctime_format = "%(asctime)s"
    asctime_search = "%(asctime)"

    def __init__(self, fmt, *, defaults=None):
        self._fmt = fmt or self.default_format
        self._defaults = defaults

    def usesTime(self):
        return self._fmt.find(self.asctime_search) >= 0

    def validate(self):
        if not _PERCENT_FIELD.search(self._fmt):
            raise ValueError(f"Invalid format '{self._fmt}' for '{self.default_format[0]}' style")

    def _values(self, record) -> dict:
        defaults = self._defaults
        return defaults | record.__dict__ if defaults else record.__dict__

    def _format(self, record):
        values = self._values(record)
        if self._fmt.__class__ is str:
            from gradcli.language import bounds
            bounds.check_percent_format(self._fmt, values)
        return self._fmt % values

    def format(self, record):
        try:
            return self._format(record)
        except KeyError as e:
            raise ValueError(f"Formatting field not found in record: {e}") from None


@_own_methods
class StrFormatStyle(PercentStyle):
    """A format of {}-fields: '{levelname}:{message}', read through the language's str.format."""

    __module__ = _MODULE
    default_format = "{message}"
    asctime_format = "{asctime}"
    asctime_search = "{asctime"

    def _format(self, record):
        from gradcli.language import access, formatting
        return formatting.format_string(self._fmt, (), self._values(record), access.read_attr)

    def validate(self):
        fields = set()
        try:
            for _, field, spec, conversion in _string.formatter_parser(self._fmt):
                if field:
                    if not _FIELD_NAME.match(field):
                        raise ValueError(f"invalid field name/expression: {field!r}")
                    fields.add(field)
                if conversion and conversion not in "rsa":
                    raise ValueError(f"invalid conversion: {conversion!r}")
                if spec and not _FIELD_SPEC.match(spec):
                    raise ValueError(f"bad specifier: {spec!r}")
        except ValueError as e:
            raise ValueError(f"invalid format: {e}") from None
        if not fields:
            raise ValueError("invalid format: no fields")


@_own_methods
class StringTemplateStyle(PercentStyle):
    """A format of $-fields: '${levelname}:${message}' (string.Template)."""

    __module__ = _MODULE
    default_format = "${message}"
    asctime_format = "${asctime}"
    asctime_search = "${asctime}"

    def usesTime(self):
        return self._fmt.find("$asctime") >= 0 or self._fmt.find(self.asctime_search) >= 0

    def validate(self):
        fields = set()
        for m in string.Template.pattern.finditer(self._fmt):
            d = m.groupdict()
            if d["named"]:
                fields.add(d["named"])
            elif d["braced"]:
                fields.add(d["braced"])
            elif m.group(0) == "$":
                raise ValueError("invalid format: bare '$' not allowed")
        if not fields:
            raise ValueError("invalid format: no fields")

    def _format(self, record):
        values = self._values(record)
        return string.Template(self._fmt).substitute(**{k: v for k, v in values.items() if k.__class__ is str})


_STYLES = {"%": (PercentStyle, BASIC_FORMAT), "{": (StrFormatStyle, "{levelname}:{name}:{message}"),
           "$": (StringTemplateStyle, "${levelname}:${name}:${message}")}


def _check_style(style) -> None:
    if style not in _STYLES:
        raise ValueError(f"Style must be one of: {','.join(_STYLES)}")


# the most characters one strftime directive writes for two of the format ('%c': 'Sat Nov 28 18:14:00 2026')
_STRFTIME_GROWTH = 16


def _time_format(fmt):
    """A date format for time.strftime, refused if what it could write would pass the bound of a string."""
    if isinstance(fmt, str) and len(fmt) * _STRFTIME_GROWTH > STATE.max_items:
        raise MemoryError(f"a date format of {len(fmt)} characters is too large (gradcli allows at most "
                          f"{STATE.max_items // _STRFTIME_GROWTH})")
    return fmt


@_own_methods
class Formatter(ScriptObject, metaclass=ScriptType):
    """Turns a record into text: the format's fields filled from the record's attributes, then the exception
    and the stack it carries."""

    __module__ = _MODULE
    default_time_format = "%Y-%m-%d %H:%M:%S"
    default_msec_format = "%s,%03d"

    def __init__(self, fmt=None, datefmt=None, style="%", validate=True, *, defaults=None):
        _check_style(style)
        self._style = _STYLES[style][0](fmt, defaults=defaults)
        if validate:
            self._style.validate()
        self._fmt = self._style._fmt
        self.datefmt = datefmt

    def formatTime(self, record, datefmt=None):
        """The record's time: time.strftime(datefmt), or '2024-01-31 12:00:00,123'."""
        when = time.localtime(record.created)
        if datefmt:
            return time.strftime(_time_format(datefmt), when)
        text = time.strftime(_time_format(self.default_time_format), when)
        msec_format = self.default_msec_format
        if msec_format:
            args = (text, record.msecs)
            if msec_format.__class__ is str:
                from gradcli.language import bounds
                bounds.check_percent_format(msec_format, args)
            text = msec_format % args
        return text

    def formatException(self, ei):
        """The text of exc_info's exception: its traceback, as CPython's traceback.print_exception writes it."""
        if ei[1] is None:
            return f"{type(ei[1]).__name__}: {ei[1]}"
        from gradcli.language import pytraceback
        traced = _run().traced.get(id(ei)) is ei
        text = pytraceback.exception_text(ei[1], traced)
        return text[:-1] if text.endswith("\n") else text

    def usesTime(self):
        return self._style.usesTime()

    def formatMessage(self, record):
        return self._style.format(record)

    def formatStack(self, stack_info):
        return stack_info

    def format(self, record):
        _record(record)
        record.message = record.getMessage()
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        text = self.formatMessage(record)
        if record.exc_info:
            if not record.exc_text:
                record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            if text[-1:] != "\n":
                text += "\n"
            text += record.exc_text
        if record.stack_info:
            if text[-1:] != "\n":
                text += "\n"
            text += self.formatStack(record.stack_info)
        return text


_DEFAULT_FORMATTER = Formatter()


# ---- filters and handlers

@_own_methods
class Filter(ScriptObject, metaclass=ScriptType):
    """Lets through the records of one logger and its descendants (all of them for the name '')."""

    __module__ = _MODULE

    def __init__(self, name=""):
        self.name = name
        self.nlen = len(name)

    def filter(self, record):
        _record(record)
        if self.nlen == 0 or self.name == record.name:
            return True
        if record.name.find(self.name, 0, self.nlen) != 0:
            return False
        return record.name[self.nlen] == "."


@_own_methods
class Filterer(ScriptObject, metaclass=ScriptType):
    """What loggers and handlers share: a list of filters (Filter objects, or functions of a record)."""

    __module__ = _MODULE

    def __init__(self):
        self.filters = []

    def addFilter(self, filter):
        if filter not in self.filters:
            self.filters.append(filter)

    def removeFilter(self, filter):
        if filter in self.filters:
            self.filters.remove(filter)

    def filter(self, record):
        for f in self.filters:
            method = _has(f, "filter")
            result = method(record) if method is not None else f(record)
            if not result:
                return False
        return True


@_own_methods
class Handler(Filterer):
    """Where records go: emit(record) writes one (a subclass defines it); a level and filters choose which."""

    __module__ = _MODULE

    def __init__(self, level=NOTSET):
        Filterer.__init__(self)
        self._name = None
        self.level = _check_level(level)
        self.formatter = None
        self._closed = False

    def get_name(self):
        return self._name

    def set_name(self, name):
        self._name = name

    name = property(get_name, set_name)

    def createLock(self):
        pass

    def acquire(self):
        pass

    def release(self):
        pass

    def setLevel(self, level):
        self.level = _check_level(level)

    def format(self, record):
        formatter = self.formatter or _DEFAULT_FORMATTER
        return _get(formatter, "format")(record)

    def emit(self, record):
        raise NotImplementedError("emit must be implemented by Handler subclasses")

    def handle(self, record):
        _record(record)
        passed = self.filter(record)
        if passed:
            self.emit(record)
        return passed

    def setFormatter(self, fmt):
        self.formatter = fmt

    def flush(self):
        pass

    def close(self):
        self._closed = True

    def __deepcopy__(self, memo):
        raise TypeError("cannot pickle '_thread.RLock' object")     # (CPython's handler holds a lock)

    def handleError(self, record):
        _report_error(record, sys.exc_info()[1])

    def __repr__(self):
        return f"<{type(self).__name__} ({getLevelName(self.level)})>"


def _report_error(record, e) -> None:
    """CPython's report of a record a handler could not emit, on the script's sys.stderr: the error (as gradcli
    shows a script's), the script's frames that logged, the message and its arguments."""
    stream = _script_stream("stderr")
    if not stream:
        return
    found = _frames()
    text = "--- Logging error ---\n" + _exception_text(e).rstrip("\n") + "\nCall stack:\n"
    text += _stack_text(found, 0) if found else \
        f"Logged from file {record.filename}, line {record.lineno}\n"
    try:
        text += f"Message: {record.msg!r}\nArguments: {record.args}\n"
    except RecursionError:
        raise
    except Exception:
        text += ("Unable to print the message and arguments - possible formatting error.\nUse the traceback above "
                 "to help find the error.\n")
    _write(stream, text)


@_own_methods
class StreamHandler(Handler):
    """Writes each record's text and a newline to a stream: the script's sys.stderr by default, sys.stdout, or an
    io.StringIO."""

    __module__ = _MODULE
    terminator = "\n"

    def __init__(self, stream=None):
        Handler.__init__(self)
        self.stream = _script_stream("stderr") if stream is None else _held(stream)

    def flush(self):
        if self.stream and _has(self.stream, "flush") is not None:
            _flush(self.stream)

    def emit(self, record):
        try:
            text = self.format(record)
            _write(self.stream, text + self.terminator)
            self.flush()
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)

    def setStream(self, stream):
        stream = _held(stream)
        if stream is self.stream:
            return None
        old = self.stream
        self.flush()
        self.stream = _held(stream)
        return old

    def __repr__(self):
        name = _stream_name(self.stream)
        if name:
            name += " "
        return f"<{type(self).__name__} {name}({getLevelName(self.level)})>"


@_own_methods
class _StderrHandler(StreamHandler):
    """CPython's last resort: the script's sys.stderr as it is at each record, for a logger with no handler."""

    __module__ = _MODULE

    def __init__(self, level=NOTSET):
        Handler.__init__(self, level)

    @property
    def stream(self):
        return _script_stream("stderr")


@_own_methods
class NullHandler(Handler):
    """A handler that does nothing (a library's loggers get one so they print nothing by default)."""

    __module__ = _MODULE

    def handle(self, record):
        pass

    def emit(self, record):
        pass

    def createLock(self):
        pass


# ---- loggers

class _Refused:
    """A name CPython's class has that reaches its process-wide machinery: outside the language."""

    __slots__ = ("name",)

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        what = f"'{type(obj).__name__}' object" if obj is not None else f"type object '{owner.__name__}'"
        raise AttributeError(f"{what} attribute '{self.name}' is outside gradcli's language")


@_own_methods
class Logger(Filterer):
    """A named channel of records: logger.info("epoch %d", e) makes a record if the level lets it through and
    hands it to its handlers and its ancestors' (getLogger('a.b') is a child of getLogger('a'))."""

    __module__ = _MODULE
    manager = _Refused()
    root = _Refused()

    def __init__(self, name, level=NOTSET):
        Filterer.__init__(self)
        self.name = name
        self.level = _check_level(level)
        self.parent = None
        self.propagate = True
        self.handlers = []
        self.disabled = False
        self._cache = {}

    def setLevel(self, level):
        self.level = _check_level(level)
        _clear_caches()

    def debug(self, msg, *args, **kwargs):
        if self.isEnabledFor(DEBUG):
            self._log(DEBUG, msg, args, **kwargs)

    def info(self, msg, *args, **kwargs):
        if self.isEnabledFor(INFO):
            self._log(INFO, msg, args, **kwargs)

    def warning(self, msg, *args, **kwargs):
        if self.isEnabledFor(WARNING):
            self._log(WARNING, msg, args, **kwargs)

    def warn(self, msg, *args, **kwargs):
        STATE.warn(DeprecationWarning, "The 'warn' method is deprecated, use 'warning' instead", 1)
        self.warning(msg, *args, **kwargs)

    def error(self, msg, *args, **kwargs):
        if self.isEnabledFor(ERROR):
            self._log(ERROR, msg, args, **kwargs)

    def exception(self, msg, *args, exc_info=True, **kwargs):
        self.error(msg, *args, exc_info=exc_info, **kwargs)

    def critical(self, msg, *args, **kwargs):
        if self.isEnabledFor(CRITICAL):
            self._log(CRITICAL, msg, args, **kwargs)

    fatal = critical

    def log(self, level, msg, *args, **kwargs):
        if not isinstance(level, int):
            raise TypeError("level must be an integer")
        if self.isEnabledFor(level):
            self._log(level, msg, args, **kwargs)

    def findCaller(self, stack_info=False, stacklevel=1):
        return _caller(stacklevel, stack_info)

    def makeRecord(self, name, level, fn, lno, msg, args, exc_info, func=None, extra=None, sinfo=None):
        record = LogRecord(name, level, fn, lno, msg, args, exc_info, func, sinfo)
        if extra is not None:
            for key in extra:
                if key in ("message", "asctime") or key in record.__dict__:
                    raise KeyError(f"Attempt to overwrite {key!r} in LogRecord")
            _set_items(record, extra)
        return record

    def _log(self, level, msg, args, exc_info=None, extra=None, stack_info=False, stacklevel=1):
        fn, lno, func, sinfo = _caller(stacklevel, stack_info)
        if exc_info and not isinstance(exc_info, tuple):
            if isinstance(exc_info, BaseException):
                exc_info = (type(exc_info), exc_info, None)
            else:
                kind, value, _ = sys.exc_info()
                exc_info = (kind, value, None)      # (never the traceback: its frames are gradcli's)
            if exc_info[1] is not None:
                _run().traced[id(exc_info)] = exc_info      # (shown with its traceback, as CPython's is)
        record = self.makeRecord(self.name, level, fn, lno, msg, args, exc_info, func, extra, sinfo)
        self.handle(record)

    def handle(self, record):
        _record(record)
        if not self.disabled and self.filter(record):
            self.callHandlers(record)

    def addHandler(self, hdlr):
        if hdlr not in self.handlers:
            self.handlers.append(hdlr)

    def removeHandler(self, hdlr):
        if hdlr in self.handlers:
            self.handlers.remove(hdlr)

    def hasHandlers(self):
        c = self
        while c:
            if _get(c, "handlers"):
                return True
            if not _get(c, "propagate"):
                break
            c = _get(c, "parent")
        return False

    def callHandlers(self, record):
        c = self
        found = 0
        while c:
            for handler in _get(c, "handlers"):
                found += 1
                if record.levelno >= _get(handler, "level"):
                    _get(handler, "handle")(record)
            c = _get(c, "parent") if _get(c, "propagate") else None
        if found == 0:
            last = _run().last_resort
            if record.levelno >= last.level:
                last.handle(record)

    def getEffectiveLevel(self):
        logger = self
        while logger:
            level = _get(logger, "level")
            if level:
                return level
            logger = _get(logger, "parent")
        return NOTSET

    def isEnabledFor(self, level):
        if self.disabled:
            return False
        cache = self._cache
        try:
            return cache[level]
        except KeyError:
            enabled = cache[level] = False if _run().disable >= level else level >= self.getEffectiveLevel()
            return enabled

    # copy.copy and copy.deepcopy give the logger itself, as CPython's pickling of a logger by name does
    def __copy__(self):
        if getLogger(self.name) is not self:
            from gradcli.language import copying
            raise copying.PicklingError("logger cannot be pickled")
        return self

    def __deepcopy__(self, memo):
        return self.__copy__()

    def getChild(self, suffix):
        if self is not ROOT:
            suffix = ".".join((self.name, suffix))
        return _logger(suffix)

    def __repr__(self):
        return f"<{type(self).__name__} {self.name} ({getLevelName(self.getEffectiveLevel())})>"


def _root_attribute(name: str) -> property:
    """An attribute of logging.root, which is the session's (Run.root): the one object a script's `logging.root`
    names in every session, its state each session's own. (Another RootLogger a script makes keeps its own.)"""

    def get(self):
        if self is ROOT:
            return _run().root[name]
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'") from None

    def put(self, value):
        if self is ROOT:
            _run().root[name] = value
        else:
            self.__dict__[name] = value
    return property(get, put)


@_own_methods
class RootLogger(Logger):
    """The logger at the top of the hierarchy, named 'root': getLogger() and the module's functions use it."""

    __module__ = _MODULE
    name, level, parent, propagate, handlers, disabled, filters, _cache = map(
        _root_attribute, ("name", "level", "parent", "propagate", "handlers", "disabled", "filters", "_cache"))

    def __init__(self, level):
        Logger.__init__(self, "root", level)


ROOT = RootLogger.__new__(RootLogger)      # (its attributes are the session's: Run.root)


def _ancestors(name: str):
    """The names CPython looks for a logger's parent under, nearest first ('a.b.c': 'a.b', 'a')."""
    i = name.rfind(".")
    while i > 0:
        yield name[:i]
        i = name.rfind(".", 0, i - 1)


def _logger(name):
    """The session's logger called `name`, made (and placed in the hierarchy) on first use."""
    if not isinstance(name, str):
        raise TypeError("A logger name must be a string")
    loggers = _run().loggers
    found = loggers.get(name)
    if found is not None:
        return found
    made = Logger(name)
    for other in loggers.values():       # the loggers made before it whose parent it now is
        if name in _ancestors(other.name) and str(_has(other.parent, "name"))[:len(name)] != name:
            other.parent = made
    made.parent = next((loggers[a] for a in _ancestors(name) if a in loggers), ROOT)
    loggers[name] = made
    return made


def getLogger(name=None):
    """The logger called `name` (the same object every time), the root logger without one."""
    if not name or isinstance(name, str) and name == ROOT.name:
        return ROOT
    return _logger(name)


def getLoggerClass():
    return Logger


@_own_methods
class LoggerAdapter(ScriptObject, metaclass=ScriptType):
    """A logger with context: process(msg, kwargs) adds `extra` to every record it logs."""

    __module__ = _MODULE
    manager = _Refused()

    def __init__(self, logger, extra=None):
        self.logger = logger
        self.extra = extra

    def process(self, msg, kwargs):
        kwargs["extra"] = self.extra
        return msg, kwargs

    def debug(self, msg, *args, **kwargs):
        self.log(DEBUG, msg, *args, **kwargs)

    def info(self, msg, *args, **kwargs):
        self.log(INFO, msg, *args, **kwargs)

    def warning(self, msg, *args, **kwargs):
        self.log(WARNING, msg, *args, **kwargs)

    def warn(self, msg, *args, **kwargs):
        STATE.warn(DeprecationWarning, "The 'warn' method is deprecated, use 'warning' instead", 1)
        self.warning(msg, *args, **kwargs)

    def error(self, msg, *args, **kwargs):
        self.log(ERROR, msg, *args, **kwargs)

    def exception(self, msg, *args, exc_info=True, **kwargs):
        self.log(ERROR, msg, *args, exc_info=exc_info, **kwargs)

    def critical(self, msg, *args, **kwargs):
        self.log(CRITICAL, msg, *args, **kwargs)

    def log(self, level, msg, *args, **kwargs):
        if self.isEnabledFor(level):
            msg, kwargs = self.process(msg, kwargs)
            _get(self.logger, "log")(level, msg, *args, **kwargs)

    def isEnabledFor(self, level):
        return _get(self.logger, "isEnabledFor")(level)

    def setLevel(self, level):
        _get(self.logger, "setLevel")(level)

    def getEffectiveLevel(self):
        return _get(self.logger, "getEffectiveLevel")()

    def hasHandlers(self):
        return _get(self.logger, "hasHandlers")()

    @property
    def name(self):
        return _get(self.logger, "name")

    def __repr__(self):
        logger = self.logger
        return f"<{type(self).__name__} {_get(logger, 'name')} ({getLevelName(_get(logger, 'getEffectiveLevel')())})>"


# ---- the module's functions

def basicConfig(**kwargs):
    """Give the root logger a handler (a StreamHandler on the script's sys.stderr, or `stream`, or `handlers`)
    with a Formatter of `format`, `datefmt` and `style`, and set its `level`; nothing if it has a handler
    already, unless force=True."""
    force = kwargs.pop("force", False)
    kwargs.pop("encoding", None)
    kwargs.pop("errors", "backslashreplace")
    if force:
        for h in ROOT.handlers[:]:
            ROOT.removeHandler(h)
            _get(h, "close")()
    if len(ROOT.handlers) == 0:
        handlers = kwargs.pop("handlers", None)
        if handlers is None:
            if "stream" in kwargs and "filename" in kwargs:
                raise ValueError("'stream' and 'filename' should not be specified together")
        elif "stream" in kwargs or "filename" in kwargs:
            raise ValueError("'stream' or 'filename' should not be specified together with 'handlers'")
        if handlers is None:
            if kwargs.get("filename"):
                raise ValueError(f"logging.basicConfig(filename=...) is outside gradcli's language: {_NO_FILES}")
            kwargs.pop("filename", None)
            kwargs.pop("filemode", None)
            handlers = [StreamHandler(kwargs.pop("stream", None))]
        datefmt = kwargs.pop("datefmt", None)
        style = kwargs.pop("style", "%")
        _check_style(style)
        fmt = kwargs.pop("format", _STYLES[style][1])
        formatter = Formatter(fmt, datefmt, style)
        for h in handlers:
            if _get(h, "formatter") is None:
                _get(h, "setFormatter")(formatter)
            ROOT.addHandler(h)
        level = kwargs.pop("level", None)
        if level is not None:
            ROOT.setLevel(level)
        if kwargs:
            raise ValueError(f"Unrecognised argument(s): {', '.join(kwargs)}")


def _configured():
    if len(ROOT.handlers) == 0:
        basicConfig()


def critical(msg, *args, **kwargs):
    _configured()
    ROOT.critical(msg, *args, **kwargs)


def error(msg, *args, **kwargs):
    _configured()
    ROOT.error(msg, *args, **kwargs)


def exception(msg, *args, exc_info=True, **kwargs):
    error(msg, *args, exc_info=exc_info, **kwargs)


def warning(msg, *args, **kwargs):
    _configured()
    ROOT.warning(msg, *args, **kwargs)


def warn(msg, *args, **kwargs):
    STATE.warn(DeprecationWarning, "The 'warn' function is deprecated, use 'warning' instead", 1)
    warning(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    _configured()
    ROOT.info(msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    _configured()
    ROOT.debug(msg, *args, **kwargs)


def log(level, msg, *args, **kwargs):
    _configured()
    ROOT.log(level, msg, *args, **kwargs)


def shutdown():
    """Flush the handlers of the session's loggers (nothing else is held open)."""
    for logger in (ROOT, *_run().loggers.values()):
        for h in list(_get(logger, "handlers")):
            flush = _has(h, "flush")
            if flush is not None:
                flush()


# what CPython's logging has that reaches files, sockets or the process's own machinery, with the reason
REFUSED = {**{name: _NO_FILES for name in ("FileHandler", "handlers", "config")},
           "BufferingFormatter": "gradcli offers Formatter only",
           "setLoggerClass": "a script's loggers are logging.Logger objects (derive from it and make one directly)",
           "setLogRecordFactory": "records are logging.LogRecord objects",
           "getLogRecordFactory": "records are logging.LogRecord objects",
           "captureWarnings": "the warnings module shows its warnings on sys.stderr itself",
           "lastResort": "the last-resort handler is the session's",
           "raiseExceptions": "logging errors are reported on sys.stderr, as CPython's default does"}


def members() -> dict:
    import logging as _python_logging        # (only for the module's repr, which names CPython's file: untouched)
    from gradcli.language import classes, stdlib
    del _python_logging
    stdlib.SYS.members          # (the streams a handler holds are sys's: their write and flush readable)
    stdlib.REFUSED_MEMBERS["logging"] = REFUSED
    classes.DICT_LIBRARY_CLASSES.add(LogRecord)       # vars(record): CPython's attributes, as JSON formatters read
    out = {name: globals()[name] for name in (
        "CRITICAL", "FATAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET", "BASIC_FORMAT",
        "Logger", "RootLogger", "Handler", "StreamHandler", "NullHandler", "Formatter", "Filter", "Filterer",
        "LoggerAdapter", "LogRecord", "PercentStyle", "StrFormatStyle", "StringTemplateStyle")}
    out.update({name: stdlib.Builtin(_MODULE, name, globals()[name]) for name in (
        "basicConfig", "getLogger", "getLoggerClass", "debug", "info", "warning", "warn", "error", "critical",
        "exception", "log", "disable", "getLevelName", "addLevelName", "getLevelNamesMapping", "makeLogRecord",
        "shutdown")})
    out["fatal"] = stdlib.Builtin(_MODULE, "critical", critical)
    out["root"] = ROOT
    return out
