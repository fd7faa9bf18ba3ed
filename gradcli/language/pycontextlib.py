"""Python's contextlib module as scripts reach it: `contextmanager`, `nullcontext`, `suppress` and `ExitStack`,
with CPython 3.11's semantics and messages.

CPython's own classes would hand their internals to whoever holds them (a context manager's generator and
its frame, an ExitStack's list of callbacks) and its decorators make Python functions that print and bind
unlike a script's. These are gradcli's: the generator, the function and the callbacks sit in slots that no
script reaches (gradcli.language.access allows an ExitStack's methods and nothing else), a generator is
driven with send/throw/close only if it is a script's own, and what `@contextmanager` returns is a script
function (compiler.ScriptFunction) carrying the decorated one's name, as functools.wraps makes it.

A `with` left by --timeout or Ctrl-C (a BaseException a script never catches) gives these contexts'
__exit__ the exception, as Python would (flow.FULL_EXIT): a generator's `finally` runs, as a `try` of the
script's own does; an ExitStack unwinds as a nest of `with` statements would. Neither ever suppresses it.
redirect_stdout and redirect_stderr put the script's object (an io.StringIO) where print, sys.stdout's write,
pprint and warnings write while they are in force (STATE.redirects; the process's streams are never touched);
chdir would reach the directory: refused (stdlib.REFUSED_MEMBERS); the rest of the module is not implemented."""

from __future__ import annotations

from gradcli.engine.addresses import address
from gradcli.engine.state import STATE
from gradcli.language import access, classes, flow, stdlib, syntax
from gradcli.language.compiler import ScriptFunction, Signature
from gradcli.language.flow import CATCHABLE, Return


def _aborting(typ) -> bool:
    """Whether a context is left by an exception no script handles (the timeout of --timeout, Ctrl-C)."""
    return typ is not None and not issubclass(typ, CATCHABLE)


class _ContextObject:
    """What contextlib's classes share: CPython's repr, with the address gradcli shows."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<contextlib.{type(self).__qualname__} object at {address(self)}>"


class _GeneratorContextManager(_ContextObject):
    """What a @contextmanager function returns: its generator, run to its `yield` on entry and on from there
    on exit (the `with` block's exception thrown in at the `yield`)."""

    __slots__ = ("_gen", "_func", "_args", "_kwds")

    def __init__(self, func, args, kwds):
        self._gen = func(*args, **kwds)
        self._func, self._args, self._kwds = func, args, kwds

    def _recreate(self) -> "_GeneratorContextManager":
        return _GeneratorContextManager(self._func, self._args, self._kwds)

    def _driven(self, name: str):
        """The generator's send/throw/close: a script's generator's, through the language (gradcli's own
        generators are iterated, never driven)."""
        return access.get_method(self._gen, name)

    def __enter__(self):
        if self._func is None:          # (CPython deletes the arguments on entry: a second entry misses them)
            raise AttributeError("'_GeneratorContextManager' object has no attribute 'args'")
        self._func = self._args = self._kwds = None
        try:
            return next(self._gen)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, typ, value, traceback):
        if typ is None:
            try:
                next(self._gen)
            except StopIteration:
                return False
            try:
                raise RuntimeError("generator didn't stop")
            finally:
                self._driven("close")()
        if value is None:
            value = typ()
        aborting = _aborting(typ)
        passage = value.__traceback__       # (kept, as CPython's is: the exception's frames do not gain the generator's)
        try:
            self._driven("throw")(value)
        except StopIteration as exc:
            return exc is not value and not aborting      # (the generator returned: it handled the exception)
        except RuntimeError as exc:
            if exc is value:
                exc.__traceback__ = passage
                return False
            if isinstance(value, StopIteration) and exc.__cause__ is value:
                value.__traceback__ = passage
                return False
            raise
        except BaseException as exc:
            if exc is not value:
                raise
            exc.__traceback__ = passage
            return False
        if aborting:        # (it yielded again in a `finally`: the timeout goes on, as it would past a loop)
            return False
        try:
            raise RuntimeError("generator didn't stop after throw()")
        finally:
            self._driven("close")()

    def __call__(self, func):
        """A @contextmanager context used as a decorator: a function running `func` inside a fresh one each
        call (CPython's ContextDecorator)."""
        def run(env):
            with self._recreate():
                return Return(func(*env["args"], **env["kwds"]))
        return _wrapper(func, run)


def _wrapper(func, body) -> ScriptFunction:
    """A script function `(*args, **kwds)` running body(env), named as `func` (functools.wraps)."""
    signature = Signature([syntax.Param("args", None, "var_positional", None),
                           syntax.Param("kwds", None, "var_keyword", None)])
    name = getattr(func, "__name__", None)
    if name.__class__ is not str:
        name = type(func).__name__
    qualname = getattr(func, "__qualname__", name)
    fn = ScriptFunction(name, qualname if qualname.__class__ is str else name, [], [], body, {}, signature=signature)
    fn.wrapped = func
    if func.__class__ is ScriptFunction:         # (functools.wraps copies its __annotations__ and __dict__)
        fn.annotations = func.annotations
        if func.attrs:
            fn.attrs = dict(func.attrs)
    return fn


def contextmanager(func):
    """@contextmanager: a function whose call makes a context manager of `func`'s generator."""
    def helper(env):
        return Return(_GeneratorContextManager(func, env["args"], env["kwds"]))
    return _wrapper(func, helper)


class nullcontext(_ContextObject):
    """A context that does nothing; `as` binds what it was given."""

    __slots__ = ("_result",)

    def __init__(self, enter_result=None):
        self._result = enter_result

    def __enter__(self):
        return self._result

    def __exit__(self, *excinfo):
        return None


class suppress(_ContextObject):
    """A context that suppresses the exceptions of the classes it was given."""

    __slots__ = ("_exceptions",)

    def __init__(self, *exceptions):
        held = flow.HELD_EXCEPTIONS        # (torch.linalg.LinAlgError as scripts hold it: the class)
        self._exceptions = tuple(held.get(id(e), e) for e in exceptions)

    def __enter__(self):
        return None

    def __exit__(self, exctype, excinst, exctb):
        if exctype is None or _aborting(exctype):
            return False
        return issubclass(exctype, self._exceptions)


class _RedirectStream(_ContextObject):
    """redirect_stdout / redirect_stderr: while in force, what the script writes to its stream goes to the
    target's write (the target is returned by `as`). Reusable and reentrant, as CPython's: each entry keeps
    what it replaced."""

    __slots__ = ("_new_target", "_old_targets")
    _stream = ""

    def __init__(self, new_target):
        self._new_target = new_target
        self._old_targets = []

    def __enter__(self):
        redirects = STATE.redirects or {}
        self._old_targets.append(redirects.get(self._stream, _STREAM))
        STATE.redirects = {**redirects, self._stream: self._new_target}
        return self._new_target

    def __exit__(self, exctype, excinst, exctb):
        old = self._old_targets.pop()
        redirects = dict(STATE.redirects or {})
        if old is _STREAM:
            redirects.pop(self._stream, None)
        else:
            redirects[self._stream] = old
        STATE.redirects = redirects or None


_STREAM = object()      # what a redirection replaced was the stream itself


class redirect_stdout(_RedirectStream):
    """Print and sys.stdout write to the target while in force."""

    __slots__ = ()
    _stream = "stdout"


class redirect_stderr(_RedirectStream):
    """print(file=sys.stderr), sys.stderr and warnings write to the target while in force."""

    __slots__ = ()
    _stream = "stderr"


class _BaseExitStack(_ContextObject):
    """A stack of exits (contexts entered, callbacks) run last first when it closes, as nested `with`
    statements would run them. (CPython's name: ExitStack's methods print as its.)"""

    __slots__ = ("_exits",)

    def __init__(self):
        # [(the exit, its kind: 'script' a script's __exit__ or function, 'own' gradcli's context's, 'full' a
        # context of FULL_EXIT's, 'call' a callback)]
        self._exits = []

    def enter_context(self, cm):
        cls = type(cm)
        enter, exit_ = getattr(cls, "__enter__", None), getattr(cls, "__exit__", None)
        if enter is None or exit_ is None:
            path = repr(stdlib.script_type(cm))[8:-2]
            raise TypeError(f"'{path if '.' in path else 'builtins.' + path}' object does not support the context "
                            "manager protocol")
        result = enter(cm)
        self._push_exit(cm, exit_)
        return result

    def _push_exit(self, cm, exit_) -> None:
        if type(cm).__class__ is classes.ScriptType:
            kind = "script"
        else:
            kind = "full" if type(cm) in flow.FULL_EXIT else "own"
        self._exits.append((lambda *details: exit_(cm, *details), kind))

    def push(self, exit):
        """A context manager's __exit__, or a function taking (exc_type, exc, traceback), run on closing."""
        exit_ = getattr(type(exit), "__exit__", None)
        if exit_ is not None:
            self._push_exit(exit, exit_)
        else:
            self._exits.append((exit, "script"))
        return exit

    def callback(self, callback, /, *args, **kwds):
        """callback(*args, **kwds) run on closing, whatever exception is passing."""
        self._exits.append((lambda *details: callback(*args, **kwds), "call"))
        return callback

    def pop_all(self) -> "ExitStack":
        """A new stack holding this one's exits; this one is left empty."""
        new = ExitStack()
        new._exits, self._exits = self._exits, []
        return new


class ExitStack(_BaseExitStack):
    """contextlib.ExitStack: a _BaseExitStack used in `with`."""

    __slots__ = ()

    def __enter__(self):
        return self

    def close(self) -> None:
        self.__exit__(None, None, None)

    def __exit__(self, *details):
        received = details[0] is not None
        aborting = _aborting(details[0])
        suppressed = pending = False
        while self._exits:
            exit_, kind = self._exits.pop()
            if aborting and kind != "full" and kind != "call":
                if kind == "own":
                    exit_(None, None, None)     # (gradcli's contexts restore their state; a script's never runs)
                continue
            try:
                if exit_(*details) and not aborting:
                    suppressed, pending = True, False
                    details = (None, None, None)
            except BaseException as e:
                if aborting and isinstance(e, CATCHABLE):
                    continue                     # (the timeout goes on, past what a `finally` raised)
                pending = True
                details = (type(e), e, None)
        if pending:
            raise details[1]
        return received and suppressed


for _cls in (_GeneratorContextManager, nullcontext, suppress, _RedirectStream, redirect_stdout, redirect_stderr,
             _BaseExitStack, ExitStack):
    _cls.__module__ = "contextlib"
flow.FULL_EXIT.update((_GeneratorContextManager, ExitStack))
access.allow_methods(ExitStack, ("enter_context", "callback", "push", "pop_all", "close"))


def members() -> dict:
    stdlib._HELD_CLASSES.update((cls, cls) for cls in (nullcontext, suppress, ExitStack, redirect_stdout,
                                                         redirect_stderr))      # type(x) is the class the script holds
    return {"contextmanager": contextmanager, "nullcontext": nullcontext, "suppress": suppress, "ExitStack": ExitStack,
            "redirect_stdout": redirect_stdout, "redirect_stderr": redirect_stderr}
