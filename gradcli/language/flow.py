"""What compiled statements share with the generator compiler (gradcli.language.generators): the signals a
statement returns, the positions errors carry, which exceptions a script's `except` catches, and which
statements have a yield of their own."""

from __future__ import annotations

from gradcli.language import syntax

BREAK = object()
CONTINUE = object()

POSITION = "gradcli_position"      # attribute set on exceptions: (line, col) of the failing expression


class Return:
    """The signal of a `return` statement: the value its function returns."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def locate(exc: BaseException, line: int, col: int) -> None:
    """Remember where `exc` arose, keeping the innermost position. The closures locate any exception
    passing through them, --timeout's ScriptTimeout (a BaseException) included, so a timeout names the
    innermost statement or expression that was running."""
    if getattr(exc, POSITION, None) is None:
        try:
            setattr(exc, POSITION, (line, col))
        except (AttributeError, TypeError, MemoryError):     # out of memory: the original error goes on
            pass


def not_iterable(exc: TypeError) -> bool:
    """Whether `exc` is Python's own refusal to iterate a value (which gradcli rewords as CPython words it
    there), not an error raised while starting to iterate it (a script's __iter__, a 0-d tensor's)."""
    return getattr(exc, POSITION, None) is None and str(exc).endswith("is not iterable")


def iterate(value, line: int, col: int):
    """iter(value) for a `for` loop or a `yield from`: Python's refusal of a value that is not iterable
    reworded as CPython words it there and located at the iterable; an error a script's __iter__ raised, or
    Python's "iter() returned non-iterator", goes on as it is."""
    try:
        return iter(value)
    except TypeError as exc:
        if not not_iterable(exc):
            locate(exc, line, col)
            raise
        e = TypeError(f"'{type(value).__name__}' object is not iterable")
        locate(e, line, col)
        raise e from None


def enter(ctx, line: int, col: int) -> tuple:
    """A `with` statement entering `ctx`: (what its `as` binds, the __exit__ to call), or CPython's TypeError
    for what is no context manager; an error __enter__ raises (an engine context refusing to start) is
    located at the expression."""
    enter_ = getattr(type(ctx), "__enter__", None)
    exit_ = getattr(type(ctx), "__exit__", None)
    if enter_ is None or exit_ is None:
        e = TypeError(f"'{type(ctx).__name__}' object does not support the context manager protocol")
        locate(e, line, col)
        raise e
    try:
        return enter_(ctx), exit_
    except Exception as e:
        locate(e, line, col)
        raise


# The contexts of the language's own whose __exit__ runs a script's code (contextlib's generator contexts and
# ExitStack): a `with` left by a BaseException (--timeout, Ctrl-C) gives them the exception, as Python does, so
# a script's `finally` runs; they never suppress it. Every other context of gradcli's is told only to restore
# its state (__exit__(None, None, None)), and a script class's __exit__ is not called.
FULL_EXIT: set = set()


def abort(ctx, exit_, e: BaseException) -> None:
    """What a `with` does with a context of gradcli's own (not a script class's) when a BaseException leaves it."""
    if type(ctx) in FULL_EXIT:
        exit_(ctx, type(e), e, None)
    else:
        exit_(ctx, None, None, None)


# The library's exception classes as scripts hold them (torch.linalg.LinAlgError is a Builtin that prints as
# PyTorch's class): id(what the script holds) -> the class, put here by gradcli.language.stdlib
HELD_EXCEPTIONS: dict = {}


def matches(e, env, kind, line: int, col: int) -> bool:
    """Whether the `except` clause whose class expression is `kind` (None for a bare `except:`) catches e."""
    if kind is None:
        return True
    wanted = kind(env)
    if HELD_EXCEPTIONS:
        held = HELD_EXCEPTIONS
        wanted = tuple([held.get(id(w), w) for w in wanted]) if wanted.__class__ is tuple else \
            held.get(id(wanted), wanted)
    try:
        return isinstance(e, wanted) and catchable(wanted)
    except TypeError:
        error = TypeError("catching classes that do not inherit from BaseException is not allowed")
        locate(error, line, col)
        raise error from None


# What a script's `except` may catch: Exception's subclasses, GeneratorExit (a generator of the script's
# being closed) and SystemExit (its own sys.exit); never BaseException's others, such as the timeout of
# --timeout or Ctrl-C.
CATCHABLE = (Exception, GeneratorExit, SystemExit)


def catchable(wanted) -> bool:
    """`except X:` catches only exceptions a script may handle (CATCHABLE)."""
    classes = wanted if wanted.__class__ is tuple else (wanted,)
    return all(issubclass(c, CATCHABLE) for c in classes)


SCOPES = (syntax.FunctionDef, syntax.ClassDef, syntax.Lambda) + syntax.COMPREHENSIONS
YIELDS = (syntax.Yield, syntax.YieldFrom)


def has_yield(node) -> bool:
    """Whether `node` (a statement, or a def's body) has a yield of its own: outside the functions,
    classes, lambdas and comprehensions defined in it. A def whose body has one is a generator."""
    stack = list(node) if node.__class__ is list else [node]
    while stack:
        n = stack.pop()
        if n.__class__ in YIELDS:
            return True
        if isinstance(n, SCOPES) and n is not node:
            continue
        for field in n._fields:
            value = getattr(n, field)
            if isinstance(value, syntax.Node):
                stack.append(value)
            elif value.__class__ is list:
                for v in value:
                    if isinstance(v, syntax.Node):
                        stack.append(v)
                    elif v.__class__ is tuple:          # (name, alias) pairs and the like
                        stack.extend(w for w in v if isinstance(w, syntax.Node))
    return False


def tracked(st, line: int, where: list):
    """A statement of a session with an event sink: where[0] holds its line while it runs, for print
    and backward events to read, and gets back the line it had when it ends, so `print(f(1))` reports
    its own line, not the last line of f's body. Only sessions with a sink compile this wrapper; plain
    statements stay free of the bookkeeping."""
    def run_tracked(env):
        outer = where[0]
        where[0] = line
        try:
            return st(env)
        finally:
            where[0] = outer
    return run_tracked
