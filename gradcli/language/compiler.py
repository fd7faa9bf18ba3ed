"""Compile a syntax tree once into nested Python closures, so running a loop never re-walks the tree.

An expression compiles to `f(env) -> value`, a statement to `f(env) -> signal`: None to go on, or
BREAK / CONTINUE / a _Return, which the enclosing loop or function consumes. `env` is the dict of
the current scope: the session's globals at top level, a fresh dict per call inside a function.

Errors carry positions without slowing the happy path: the closures that can fail (operators, calls,
attribute and item access) catch, stamp the exception with their line and column unless an inner
closure already did, and re-raise; a try block costs nothing in CPython 3.11 until it raises.
"""

from __future__ import annotations

import builtins
import sys
import operator
from types import MethodType
from itertools import islice

from gradcli.language import access, bounds, classes, formatting, scopes, stdlib, syntax, torchapi, treebuild
from gradcli.language.scopes import CLASS_CELL, EMPTY, Cell
from gradcli.language.flow import (BREAK, CATCHABLE, CONTINUE, POSITION, YIELDS as _YIELDS, Return as _Return,
                                   abort, enter, has_yield as _has_yield, iterate, locate, matches as _matches,
                                   not_iterable as _not_iterable, tracked as _tracked)
from gradcli.engine.addresses import address
from gradcli.engine import custom
from gradcli.engine.autograd import CompiledFunction, ModeDecorated
from gradcli.engine.state import STATE
from gradcli.errors import ScriptSyntaxError
from gradcli.language.syntaxerrors import Problems
from gradcli.engine.tensor import Tensor, uninitialized_marks


MAX_CALL_DEPTH = 300               # user-function recursion limit (each level costs several Python frames)
STATE.call_limit = MAX_CALL_DEPTH   # (a script may lower it for its run: sys.setrecursionlimit)
MAX_EXPRESSION_DEPTH = 1000


_ARGUMENT_ERRORS = (TypeError, AttributeError, ValueError)    # what arguments that do not fit may raise


def _call_error(exc: BaseException, f, args, kwargs, line: int, col: int) -> BaseException:
    """The located error to raise for a failed call: arguments that do not fit a torch function
    get PyTorch's message (stdlib.argument_error), unless an inner call already reported them.
    Raised in the call's own except clause, it is either the exception caught (re-raised with its
    traceback) or a new one in its place."""
    if exc.__class__ in _ARGUMENT_ERRORS and getattr(exc, POSITION, None) is None:
        replaced = stdlib.argument_error(exc, f, args, kwargs)
        if replaced is not exc:
            replaced.__suppress_context__ = True        # as `raise ... from None`: it stands for exc
            exc = replaced
    locate(exc, line, col)
    return exc


_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "matmul": operator.matmul,
    "or_": operator.or_, "xor": operator.xor, "and_": operator.and_, "lshift": operator.lshift,
    "rshift": operator.rshift,
}
_INPLACE = {
    "add": operator.iadd, "sub": operator.isub, "mul": operator.imul, "truediv": operator.itruediv,
    "floordiv": operator.ifloordiv, "mod": operator.imod, "pow": operator.ipow, "matmul": operator.imatmul,
    "lshift": operator.ilshift, "rshift": operator.irshift, "and_": operator.iand, "or_": operator.ior,
    "xor": operator.ixor,
}
_UNARY = {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert, "not_": operator.not_}
_COMPARE = {
    "lt": operator.lt, "gt": operator.gt, "eq": operator.eq, "ne": operator.ne, "le": operator.le,
    "ge": operator.ge, "is": operator.is_, "is_not": operator.is_not,
    "in": lambda a, b: bounds.contains(b, a), "not_in": lambda a, b: not bounds.contains(b, a),
}


class Signature:
    """The parameters of a function that has more than plain ones: positional-only ones (before `/`),
    `*args`, keyword-only ones (after `*` or `*args`), `**kwargs`. Plain functions have none, so the
    common call binds its arguments without looking here."""

    __slots__ = ("positional", "posonly", "varargs", "kwonly", "varkw", "named", "shown")

    def __init__(self, params: list):
        self.positional = tuple(p.name for p in params if p.kind in syntax.POSITIONAL_KINDS)
        self.posonly = sum(p.kind == "positional_only" for p in params)
        self.varargs = next((p.name for p in params if p.kind == "var_positional"), None)
        self.kwonly = tuple(p.name for p in params if p.kind == "keyword_only")
        self.varkw = next((p.name for p in params if p.kind == "var_keyword"), None)
        self.named = frozenset(self.positional[self.posonly:] + self.kwonly)    # what keywords may fill
        shown = list(self.positional)
        if self.posonly:
            shown.insert(self.posonly, "/")
        if self.varargs is not None or self.kwonly:
            shown.append("*" + (self.varargs or ""))
        shown.extend(self.kwonly)
        if self.varkw is not None:
            shown.append("**" + self.varkw)
        self.shown = tuple(shown)


def docstring(body: list):
    """The docstring of a def's or class's body: its first statement when that is a string literal."""
    first = body[0] if body else None
    if first.__class__ is syntax.ExprStmt and first.value.__class__ is syntax.Constant \
            and first.value.value.__class__ is str:
        return first.value.value
    return None


class ScriptFunction:
    """A function defined with `def` or `lambda` in a script. In a class it is a method: reading it
    through an instance binds it (`__get__`), as a Python function is bound."""

    __slots__ = ("name", "qualname", "params", "defaults", "body", "globals", "cells", "frees", "closure",
                 "signature", "kwdefaults", "wrapped", "attrs", "annotations", "doc")

    def __init__(self, name, qualname, params, defaults, body, globals_, cells=None, frees=(), closure=(),
                 signature=None, kwdefaults=None, doc=None):
        self.name = name
        self.doc = doc                # __doc__: its docstring, or None
        self.qualname = qualname      # as Python's: outer.<locals>.name, which its messages use
        self.wrapped = None           # what functools.wraps made it stand for
        self.attrs = None             # what the script set on it (`f.calls = 0`): Python's function __dict__
        self.annotations = None       # __annotations__: {name: value, 'return': value}, made when first read
        self.params = params          # the names of the parameters filled by position, in order
        self.defaults = defaults      # values for the trailing ones of those that have defaults
        self.body = body
        self.globals = globals_
        # Closures (gradcli.language.scopes): None for a function that neither reads an enclosing function's
        # variables nor has variables read by functions nested in it, so plain calls pay one test.
        self.cells = cells            # its locals that nested functions read: each call puts them in Cells
        self.frees = frees            # names it reads from enclosing functions ...
        self.closure = closure        # ... and their Cells, taken when the `def` ran
        self.signature = signature    # a Signature when it has `/`, `*`, `*args`, `**kwargs`; else None
        self.kwdefaults = kwdefaults  # {keyword-only name: default}, or None

    def __repr__(self):
        return f"<function {self.qualname} at {address(self)}>"

    def parameters(self) -> tuple:
        """Its parameter list as written, without defaults: ('a', '/', 'b', '*args', 'c', '**kw')."""
        return tuple(self.params) if self.signature is None else self.signature.shown

    @property
    def is_generator_function(self) -> bool:
        """Whether its body has a yield: a call returns a generator (gradcli.language.generators)."""
        return getattr(self.body, "makes_generator", False)

    def in_context(self, make_context, args: tuple, kwargs: dict):
        """The generator a call returns, each of whose steps runs inside a fresh `make_context()`: what a
        grad-mode decorator (`@torch.no_grad()`) makes of a generator function, as PyTorch's does."""
        from gradcli.language import generators
        return generators.in_context(self(*args, **kwargs), make_context)

    def keyword_names(self) -> tuple:
        """The parameters a keyword argument can fill."""
        if self.signature is None:
            return tuple(self.params)
        sig = self.signature
        return sig.positional[sig.posonly:] + sig.kwonly

    def __get__(self, obj, owner=None):
        return self if obj is None else MethodType(self, obj)

    @property
    def __name__(self):             # read by Python's bound-method repr, and by scripts (f.__name__)
        return self.name

    @property
    def __doc__(self):              # its docstring, for Python's own readers (property, bound methods) too
        return self.doc

    def __getattr__(self, name):    # __qualname__ (a class body cannot define it as a property)
        if name == "__qualname__":
            return self.qualname
        if name == "__wrapped__" and self.wrapped is not None:
            return self.wrapped
        if name == "__annotations__":
            if self.annotations is None:
                self.annotations = {}
            return self.annotations
        attrs = self.attrs
        if attrs is not None and name in attrs:
            return attrs[name]
        raise AttributeError(f"'function' object has no attribute '{name}'")

    def __call__(self, *args, **kwargs):
        if self.signature is not None:
            env = self._bind(args, kwargs)
        else:
            params = self.params
            n = len(params)
            if len(args) > n:
                raise TypeError(_too_many_positional(self, len(args), 0))
            env = dict(zip(params, args))
            if kwargs:
                for k, v in kwargs.items():
                    if k not in params:
                        raise TypeError(f"{self.qualname}() got an unexpected keyword argument '{k}'")
                    if k in env:
                        raise TypeError(f"{self.qualname}() got multiple values for argument '{k}'")
                    env[k] = v
            if len(env) < n:            # defaults, written out here: a method call would cost plain calls
                first_default = n - len(self.defaults)
                missing = []
                for i, p in enumerate(params):
                    if p not in env:
                        if i >= first_default:
                            env[p] = self.defaults[i - first_default]
                        else:
                            missing.append(p)
                if missing:
                    raise TypeError(_missing(self, missing, "positional"))
        if self.cells is not None:
            for name in self.cells:
                env[name] = Cell(env.get(name, EMPTY))
            env.update(zip(self.frees, self.closure))
        state = STATE
        if state.call_depth >= state.call_limit:
            raise RecursionError("maximum recursion depth exceeded")
        state.call_depth += 1
        try:
            signal = self.body(env)
        finally:
            state.call_depth -= 1
        if signal.__class__ is _Return:
            return signal.value
        return None

    def _fill_defaults(self, env: dict, given: int) -> None:
        """The positional parameters that arguments left unset take their defaults, or the call fails
        with CPython's message naming every one that has none (for _bind; plain calls do it inline)."""
        params = self.params
        first_default = len(params) - len(self.defaults)
        missing = [p for p in params[given:first_default] if p not in env]
        if missing:
            raise TypeError(_missing(self, missing, "positional"))
        for i in range(max(given, first_default), len(params)):
            if params[i] not in env:
                env[params[i]] = self.defaults[i - first_default]

    def _bind(self, args: tuple, kwargs: dict) -> dict:
        """The new frame's variables for a call of a function with a Signature, bound in CPython's
        order (positional, *args, keywords, **kwargs, then defaults) and failing with its messages."""
        sig = self.signature
        positional = sig.positional
        env = dict(zip(positional, args))
        if sig.varargs is not None:
            env[sig.varargs] = args[len(positional):]
        extra = None
        if sig.varkw is not None:
            extra = env[sig.varkw] = {}
        named = sig.named
        for k, v in kwargs.items():
            if k not in named:
                if extra is not None:
                    extra[k] = v
                    continue
                passed = [p for p in positional[:sig.posonly] if p in kwargs]
                if passed:
                    raise TypeError(f"{self.qualname}() got some positional-only arguments passed as keyword "
                                    f"arguments: '{', '.join(passed)}'")
                raise TypeError(f"{self.qualname}() got an unexpected keyword argument '{k}'")
            if k in env:
                raise TypeError(f"{self.qualname}() got multiple values for argument '{k}'")
            env[k] = v
        if len(args) > len(positional) and sig.varargs is None:
            raise TypeError(_too_many_positional(self, len(args), sum(k in env for k in sig.kwonly)))
        self._fill_defaults(env, len(args))
        if sig.kwonly:
            kwdefaults = self.kwdefaults or {}
            missing = []
            for k in sig.kwonly:
                if k not in env:
                    if k in kwdefaults:
                        env[k] = kwdefaults[k]
                    else:
                        missing.append(k)
            if missing:
                raise TypeError(_missing(self, missing, "keyword-only"))
        return env


def _missing(f: ScriptFunction, names: list, kind: str) -> str:
    """CPython's message for required arguments a call left out: 'a', 'a' and 'b', 'a', 'b', and 'c'."""
    quoted = [repr(n) for n in names]
    listed = quoted[0] if len(quoted) == 1 else (
        f"{quoted[0]} and {quoted[1]}" if len(quoted) == 2 else ", ".join(quoted[:-1]) + ", and " + quoted[-1])
    return f"{f.qualname}() missing {len(names)} required {kind} argument{'s' if len(names) != 1 else ''}: {listed}"


def _too_many_positional(f: ScriptFunction, given: int, kwonly_given: int) -> str:
    """CPython's message for more positional arguments than a function without *args takes."""
    n, defaults = len(f.params), len(f.defaults)
    if defaults:
        takes, plural = f"from {n - defaults} to {n}", "s"
    else:
        takes, plural = str(n), "s" if n != 1 else ""
    also = ""
    if kwonly_given:
        also = (f" positional argument{'s' if given != 1 else ''} (and {kwonly_given} keyword-only "
                f"argument{'s' if kwonly_given != 1 else ''})")
    were = "was" if given == 1 and not kwonly_given else "were"
    return f"{f.qualname}() takes {takes} positional argument{plural} but {given}{also} {were} given"


def _function_str(f) -> str:
    """How CPython names a callee in the errors of argument unpacking: module.qualname(), the module
    left out for builtins."""
    if f.__class__ is bounds.Bounded:       # (a builtin with a bound on what it builds: named as the builtin)
        f = f.original
    if f.__class__ is ScriptFunction:
        return f"__main__.{f.qualname}()"
    name = stdlib.torch_name(f)
    if name is not None:
        return name + "()"
    if f.__class__ is stdlib.Builtin:
        return f"{f.name}()"
    return f"{getattr(f, '__name__', access.type_name(f))}()"


def _unpacked(value, f, room: int, kind: str = "list") -> list:
    """The items of `*value` in a call (f: the callee when `*value` is its only positional argument,
    else None) or in a display (kind: the display's type), refused past `room` of them before they
    are all built (gradcli.language.bounds)."""
    if value.__class__ not in _SIZED:
        try:
            value = iter(value)
        except TypeError as exc:
            if kind == "set" or not _not_iterable(exc):
                raise
            where = f"{_function_str(f)} argument" if f is not None else "Value"
            raise TypeError(f"{where} after * must be an iterable, not {access.type_name(value)}") from None
    return bounds.take(value, kind, room)


def _merge_keywords(kw: dict, mapping, f) -> None:
    """`**mapping` in a call to f: its items join the keyword arguments `kw`, none of them twice."""
    if not isinstance(mapping, dict):
        raise TypeError(f"{_function_str(f)} argument after ** must be a mapping, not {access.type_name(mapping)}")
    for k, v in mapping.items():
        if k in kw:
            raise TypeError(f"{_function_str(f)} got multiple values for keyword argument '{k}'")
        kw[k] = v


access.register_function_type(ScriptFunction, script_function=True)
access.register_function_type(ModeDecorated)
access.register_function_type(CompiledFunction)
access.register_function_type(custom.OnceDifferentiable)


class Compiler:
    """Turns one module's syntax tree into a runnable closure bound to a session's globals."""

    def __init__(self, globals_: dict, builtins: dict, warn, echo=None, where=None, provenance=None,
                 problems: Problems | None = None, echo_last: bool = False):
        self.globals = globals_
        self.builtins = builtins
        self.warn = warn              # warn(line, col, category, message[, subject]): the session's warning sink
        self.echo = echo              # echo(value): REPL display of expression statements outside functions
        # echo_last: only the module's last statement is echoed, and only when it is an expression, as a
        # notebook cell shows its value (IPython's "last_expr"); otherwise every top-level expression is
        self.echo_last = echo_last
        self._echoed = None           # with echo_last: the one statement echoed (set by module())
        self.where = where            # [line]: kept at the running statement's line (for an event sink), or None
        self.provenance = provenance  # provenance.Provenance: wraps statements to record where nodes come from, or None
        self.scope = None             # scopes.Scope of the function being compiled, None at top level
        self.prefix = ""              # the start of the qualified names of functions defined here
        self.first_param = None       # the first parameter of the function being compiled (super() reads it)
        self.private = None           # the private-name prefix of the class being compiled in ('_Net'), or None
        self.depth = 0                # expression nesting while compiling
        self.yields = True            # whether the module has yields to look for (module() reads its tree's count)
        self.future_annotations = False     # `from __future__ import annotations`: annotations are their text
        # problems found so far (the parser's, when it was given the same list); the checks made while
        # compiling add theirs, and module() raises them all
        self.problems = problems if problems is not None else Problems()

    # ------------------------------------------------------------------------------------ entry
    def module(self, mod: syntax.Module):
        problems = self.problems
        problems.dirty = False
        if _check_future_imports(mod.body, problems):
            self.future_annotations = True
        scopes.check_module(mod, problems)
        self.yields = getattr(mod, "yields", 1) > 0     # (a tree built by hand has no count: searched)
        if self.yields:
            _check_yields(mod.body, problems)
        if problems:
            # the parse found problems: the script will not run, so only the checks compiling makes are
            # made, and the imports it could not make are named with the rest
            scopes.check_declarations(mod.body, problems)
            _check_imports(mod.body, problems)
            raise problems.error()
        if self.echo_last:
            last = mod.body[-1] if mod.body else None
            self._echoed = last if isinstance(last, syntax.ExprStmt) else None
        try:
            program = self.block(mod.body)
        except ScriptSyntaxError as e:
            raise problems.error(e) from None
        if problems:
            raise problems.error()
        return program

    def block(self, stmts):
        compiled = [(s.line, self.stmt(s)) for s in stmts]
        if self.provenance is not None:       # decided here, once: without it statements run unwrapped
            compiled = self.provenance.block(stmts, compiled, self.scope is None)
        if self.where is not None:
            compiled = [(line, _tracked(st, line, self.where)) for line, st in compiled]

        if len(compiled) == 1:
            (line, only), = compiled

            def run_one(env):
                try:
                    return only(env)
                except BaseException as e:
                    locate(e, line, 0)
                    raise
            return run_one

        def run(env):
            line = 0
            try:
                for line, st in compiled:
                    signal = st(env)
                    if signal is not None:
                        return signal
            except BaseException as e:
                locate(e, line, 0)
                raise
            return None
        return run

    # ------------------------------------------------------------------------------- statements
    def stmt(self, node):
        method = getattr(self, "s_" + type(node).__name__, None)
        if method is None:
            raise NotImplementedError(f"statement {type(node).__name__}")
        # The REPL shows expression statements outside functions, inside loops and ifs too, as
        # Python's interactive mode does (`for i in range(3): i` shows 0, 1, 2).
        if self.echo is not None and self.scope is None and isinstance(node, syntax.ExprStmt) \
                and (not self.echo_last or node is self._echoed):
            return self.s_ExprStmt_echo(node)
        return method(node)

    def s_ExprStmt(self, node):
        value = self.expr(node.value)

        def run(env):
            value(env)
        return run

    def s_ExprStmt_echo(self, node):
        value, echo = self.expr(node.value), self.echo

        def run(env):
            echo(value(env))
        return run

    def s_Try(self, node):
        body = self.block(node.body)
        orelse = self.block(node.orelse) if node.orelse else None
        finalbody = self.block(node.finalbody) if node.finalbody else None
        handlers = []
        for h in node.handlers:
            # a bare `except:` catches what `except Exception:` does: never the timeout of --timeout, a
            # Ctrl-C or an exit, which are not the script's to handle
            kind = self.expr(h.type) if h.type is not None else None
            bind = self.binder(h.name) if h.name is not None else None
            unbind = self.deleter(syntax.Name(h.name, line=h.line, col=h.col)) if h.name is not None else None
            handlers.append((kind, bind, unbind, self.block(h.body), h.line, h.col))

        def handle(env, e):
            for kind, bind, unbind, handler_body, line, col in handlers:
                if _matches(e, env, kind, line, col):
                    if bind is None:
                        return True, handler_body(env)
                    bind(env, e)
                    try:
                        return True, handler_body(env)
                    finally:
                        unbind(env)         # as Python deletes the name at the end of the clause
            return False, None

        def run_try(env):
            try:
                try:
                    signal = body(env)
                except CATCHABLE as e:
                    handled, signal = handle(env, e)
                    if not handled:
                        raise
                    return signal
                if signal is None and orelse is not None:
                    signal = orelse(env)
                return signal
            finally:
                if finalbody is not None:
                    final_signal = finalbody(env)
                    if final_signal is not None:
                        return final_signal     # noqa: B012 -- a return/break in finally wins, as in Python
        return run_try

    def s_Raise(self, node):
        exc = self.expr(node.exc) if node.exc is not None else None
        cause = self.expr(node.cause) if node.cause is not None else None
        line, col = node.line, node.col

        def run_raise(env):
            if exc is None:
                current = sys.exc_info()[1]
                if current is None:
                    e = RuntimeError("No active exception to reraise")
                    locate(e, line, col)
                    raise e
                raise current
            value = exc(env)
            try:
                if cause is None:
                    raise value
                raise value from cause(env)
            except BaseException as e:
                locate(e, line, col)
                if cause is not None:
                    e.__gradcli_from__ = True       # `raise ... from`: `e.__suppress_context__` reads it (classes)
                    if e.__cause__ is not None:
                        e.__gradcli_cause__ = True      # set by the script: `e.__cause__` reads it (classes)
                raise
        return run_raise

    def s_Global(self, node):
        return lambda env: None         # resolved when the function is compiled (gradcli.language.scopes)

    def s_Nonlocal(self, node):
        if self.scope is None:
            self.problems.invalid(ScriptSyntaxError(scopes.MODULE_NONLOCAL, line=node.line, col=node.col))
        return lambda env: None

    def s_Pass(self, node):
        return lambda env: None

    def s_Break(self, node):
        return lambda env: BREAK

    def s_Continue(self, node):
        return lambda env: CONTINUE

    def s_Return(self, node):
        if node.value is None:
            return lambda env: _Return(None)
        value = self.expr(node.value)
        return lambda env: _Return(value(env))

    def s_Assign(self, node):
        value = self.expr(node.value)
        stores = [self.store(t) for t in node.targets]
        if len(stores) == 1:
            store = stores[0]
            if isinstance(node.targets[0], syntax.Name) and self.scope_kind(node.targets[0].id) in ("local", "top"):
                name = node.targets[0].id

                def assign_name(env):
                    env[name] = value(env)
                return assign_name

            def assign(env):
                store(env, value(env))
            return assign

        def assign_many(env):
            v = value(env)
            for store in stores:
                store(env, v)
        return assign_many

    def s_AnnAssign(self, node):
        """`target: annotation [= value]`, in CPython 3.11's order: the value, then the target bound (its
        parts evaluated), then, in a module or class body, the annotation, recorded in `__annotations__`
        when the target is a plain name. A function evaluates none of its locals' annotations. A bare
        annotation binds nothing; on an attribute or subscript it evaluates the target's parts."""
        target, line, col = node.target, node.line, node.col
        value = self.expr(node.value) if node.value is not None else None
        store = self.store(target) if value is not None else None
        parts = []
        if value is None and target.__class__ is syntax.Attribute:
            parts = [self.expr(target.value)]
        elif value is None and target.__class__ is syntax.Subscript:
            parts = [self.expr(target.value)] + _subscript_parts(self, target.index)
        in_function = self.scope is not None and not self.scope.is_class
        annotation = table = None
        if not in_function and (node.simple or not self.future_annotations):
            annotation = self.annotation(node.annotation)
        if not in_function and node.simple:
            table = self._annotations_table(line, col)
        key = target.id if node.simple else None

        def ann_assign(env):
            if store is not None:
                store(env, value(env))
            for part in parts:
                part(env)
            if annotation is not None:
                found = annotation(env)
                if table is not None:
                    _put_item(table(env), key, found, line, col)
        return ann_assign

    def annotation(self, node):
        """A function (env) -> the value of an annotation: the expression's, or under `from __future__
        import annotations` its text as CPython writes it (gradcli.language.unparse)."""
        if self.future_annotations:
            from gradcli.language.unparse import unparse
            named = scopes.named_expressions(node)
            if named:       # CPython's symbol table refuses them in an annotation it does not evaluate
                where = named[0].target
                raise ScriptSyntaxError("'named expression' can not be used within an annotation", line=where.line,
                                        col=where.col)
            text = unparse(node, self.private)
            return lambda env: text
        return self.expr(node)

    def _annotations_table(self, line: int, col: int):
        """A function (env) -> the `__annotations__` an annotation is recorded in, looked up as CPython's
        LOAD_NAME does (the class namespace, the globals, the builtins, which hold the main module's)."""
        name = "__annotations__"
        undefined = _undefined(name, self.builtins)
        if self.scope is not None and self.scope.is_class:
            return self._class_name(name, "class", undefined, line, col)
        return self._global_name(name, undefined, line, col)

    def s_AugAssign(self, node):
        fn = _INPLACE[node.op]
        value = self.expr(node.value)
        target = node.target
        line, col = node.line, node.col
        check = _size_check(node.op, target, node.value)
        if check is not None:               # x *= n, s += s, ...: as the operators (e_BinOp)
            inplace = fn

            def fn(a, b):
                if a.__class__ is not Tensor:
                    check(a, b)
                return inplace(a, b)
        if isinstance(target, syntax.Name):
            load, bind = self.expr(target), self.binder(target.id)

            def aug_name(env):
                try:
                    bind(env, fn(load(env), value(env)))
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return aug_name
        if isinstance(target, syntax.Attribute):
            obj_fn, attr = self.expr(target.value), target.attr

            def aug_attr(env):
                obj = obj_fn(env)
                try:
                    access.set_attr(obj, attr, fn(access.get_attr(obj, attr), value(env)))
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return aug_attr
        if isinstance(target, syntax.Subscript):
            obj_fn, index_fn = self.expr(target.value), self.index(target.index)

            def aug_item(env):
                obj, key = obj_fn(env), index_fn(env)
                try:
                    obj[key] = fn(obj[key], value(env))
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return aug_item
        raise NotImplementedError("augmented assignment target")

    def store(self, target):
        """A function (env, value) that binds `value` to an assignment target."""
        if isinstance(target, syntax.Name):
            return self.binder(target.id)
        line, col = target.line, target.col
        if isinstance(target, syntax.Attribute):
            obj_fn, attr = self.expr(target.value), target.attr

            def store_attr(env, v):
                obj = obj_fn(env)
                try:
                    access.set_attr(obj, attr, v)
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return store_attr
        if isinstance(target, syntax.Subscript):
            obj_fn, index_fn = self.expr(target.value), self.index(target.index)

            def store_item(env, v):
                obj, key = obj_fn(env), index_fn(env)
                try:
                    obj[key] = v
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return store_item
        if isinstance(target, (syntax.Tuple, syntax.List)):
            if any(t.__class__ is syntax.Starred for t in target.elts):
                return self._store_starred(target)
            stores = [self.store(t) for t in target.elts]
            n = len(stores)

            def store_unpack(env, v):
                try:
                    # one more item than the targets tells "too many" without taking an endless iterable
                    items = list(islice(v, n + 1)) if v.__class__ is not tuple and v.__class__ is not list else v
                except TypeError as exc:
                    if not _not_iterable(exc):
                        locate(exc, line, col)
                        raise
                    e = TypeError(f"cannot unpack non-iterable {type(v).__name__} object")
                    locate(e, line, col)
                    raise e from None
                if len(items) != n:
                    if len(items) > n:
                        e = ValueError(f"too many values to unpack (expected {n})")
                    else:
                        e = ValueError(f"not enough values to unpack (expected {n}, got {len(items)})")
                    locate(e, line, col)
                    raise e
                for store, item in zip(stores, items):
                    store(env, item)
            return store_unpack
        raise NotImplementedError(f"assignment to {type(target).__name__}")

    def _store_starred(self, target):
        """A function (env, value) for a target such as `first, *rest, last`: the starred one takes the
        items the others leave, as a list; the whole iterable is taken, within the list bound."""
        elts = target.elts
        at = next(i for i, t in enumerate(elts) if t.__class__ is syntax.Starred)
        before = [self.store(t) for t in elts[:at]]
        rest = self.store(elts[at].value)
        after = [self.store(t) for t in elts[at + 1:]]
        needed = len(before) + len(after)
        line, col = target.line, target.col

        def store_starred(env, v):
            try:
                if v.__class__ not in _SIZED:
                    try:
                        v = iter(v)
                    except TypeError as exc:
                        if not _not_iterable(exc):
                            raise
                        raise TypeError(f"cannot unpack non-iterable {access.type_name(v)} object") from None
                items = bounds.take(v, "list")
                if len(items) < needed:
                    raise ValueError(f"not enough values to unpack (expected at least {needed}, got {len(items)})")
            except BaseException as e:
                locate(e, line, col)
                raise
            for store, item in zip(before, items):
                store(env, item)
            end = len(items) - len(after)
            rest(env, items[len(before):end])
            for store, item in zip(after, items[end:]):
                store(env, item)
        return store_starred

    def s_If(self, node):
        test, body = self.expr(node.test), self.block(node.body)
        orelse = self.block(node.orelse) if node.orelse else None

        def run_if(env):
            if test(env):
                return body(env)
            if orelse is not None:
                return orelse(env)
            return None
        return run_if

    def s_While(self, node):
        test, body = self.expr(node.test), self.block(node.body)
        orelse = self.block(node.orelse) if node.orelse else None

        def run_while(env):
            while test(env):
                signal = body(env)
                if signal is not None:
                    if signal is BREAK:
                        return None             # a break skips the loop's else
                    if signal is not CONTINUE:
                        return signal
            return orelse(env) if orelse is not None else None
        return run_while

    def s_Match(self, node):
        from gradcli.language import patterns     # (only scripts with a match statement load it)
        choose = patterns.chooser(self, node)
        bodies = [self.block(case.body) for case in node.cases]

        def run_match(env):
            i = choose(env)
            return bodies[i](env) if i >= 0 else None
        return run_match

    def s_For(self, node):
        iterable, body = self.expr(node.iter), self.block(node.body)
        orelse = self.block(node.orelse) if node.orelse else None
        line, col = node.iter.line, node.iter.col
        bind = self.store(node.target)

        def run_for(env):
            for v in iterate(iterable(env), line, col):
                bind(env, v)
                signal = body(env)
                if signal is not None:
                    if signal is BREAK:
                        return None             # a break skips the loop's else
                    if signal is not CONTINUE:
                        return signal
            return orelse(env) if orelse is not None else None
        return run_for

    def _unmangled(self, name: str) -> str:
        """A def's or class's own name as it prints (`__helper`), though it binds its private form
        (`_Net__helper`, gradcli.language.treebuild._mangle)."""
        private = self.private
        if private is not None and name.startswith(private + "__"):
            return name[len(private):]
        return name

    def s_FunctionDef(self, node):
        decorators = self._decorators(node)
        name = self._unmangled(node.name)
        if self.yields and _has_yield(node.body):
            from gradcli.language import generators     # (only scripts that define generators load it)
            make = self._function(name, node, lambda stmts: generators.body(self, stmts, name,
                                                                            self.prefix[:-len(".<locals>.")]))
        else:
            make = self._function(name, node, self.block)
        bind = self.binder(node.name)
        if decorators is None:
            def define(env):
                bind(env, make(env))
            return define

        def define_decorated(env):
            bind(env, decorators(env, make))
        return define_decorated

    def _decorators(self, node):
        """None, or a function (env, make) that evaluates a definition's decorators top to bottom, makes
        the function or class with make(env), then applies them bottom to top, as Python does."""
        if not node.decorators:
            return None
        found = [(self.expr(d), d.line, d.col) for d in node.decorators]

        def decorate(env, make):
            fns = [(fn(env), line, col) for fn, line, col in found]
            value = make(env)
            for fn, line, col in reversed(fns):
                try:
                    value = fn(value)
                except Exception as e:
                    raise _call_error(e, fn, (value,), {}, line, col)
            return value
        return decorate

    def s_ClassDef(self, node):
        """A class: its bases evaluated, its body run once with a fresh namespace as its variables, then
        the class made from that namespace (gradcli.language.classes), decorated and bound."""
        decorators = self._decorators(node)
        bases = [self.expr(b) for b in node.bases if b.__class__ is not syntax.Keyword]
        keywords = [k for k in node.bases if k.__class__ is syntax.Keyword]
        metaclass = [self.expr(k.value) for k in keywords if k.name == "metaclass"]      # metaclass=M
        class_kwargs = [(k.name, self.expr(k.value)) for k in keywords if k.name != "metaclass"]    # __init_subclass__'s
        outer, outer_prefix, outer_private = self.scope, self.prefix, self.private
        scope = scopes.analyze(node, None, self.problems) if outer is None else outer.children[id(node)]
        shown = self._unmangled(node.name)
        qualname = outer_prefix + shown
        self.scope, self.prefix, self.private = scope, qualname + ".", treebuild.private_prefix(shown)
        try:
            body = self.block(node.body)
        finally:
            self.scope, self.prefix, self.private = outer, outer_prefix, outer_private
        keys = [(CLASS_CELL + n, self._outer_key(n)) for n in scope.frees]
        class_cell = "__class__" in scope.cells
        annotated = any(st.__class__ is syntax.AnnAssign for st in scopes.own_statements(node.body))
        globals_ = self.globals
        name, line, col = shown, node.line, node.col
        make_class = classes.make_class
        doc = docstring(node.body)

        def make(env):
            found = [b(env) for b in bases]
            kind = metaclass[0](env) if metaclass else None
            given = {key: value(env) for key, value in class_kwargs} if class_kwargs else None
            try:
                namespace = classes.prepare(name, found, kind)
            except Exception as e:
                locate(e, line, col)
                raise
            namespace["__module__"], namespace["__qualname__"] = "__main__", qualname
            if doc is not None:
                namespace["__doc__"] = doc
            if annotated:
                namespace["__annotations__"] = {}
            for key, outer_key in keys:
                dict.__setitem__(namespace, key, env[outer_key])    # (never an enum's member)
            cell = None
            if class_cell:
                cell = Cell(EMPTY)
                dict.__setitem__(namespace, CLASS_CELL + "__class__", cell)
            body(namespace)
            for key in [k for k in namespace if k[:1] == CLASS_CELL]:
                del namespace[key]
            try:
                cls = make_class(name, found, namespace, kind, given)
            except Exception as e:
                locate(e, line, col)
                raise
            if cell is not None:
                cell.value = cls
            if annotated:           # (for @dataclass, which reads string annotations as CPython does)
                classes.MODULE_GLOBALS[cls] = globals_
            return cls
        bind = self.binder(node.name)
        if decorators is None:
            return lambda env: bind(env, make(env))
        return lambda env: bind(env, decorators(env, make))

    def _outer_key(self, name: str) -> str:
        """The key under which the scope being compiled holds the Cell of a name its nested functions
        read from further out: the name itself in a function, a key no Python name can be in a class
        body (whose variables are the class namespace)."""
        return CLASS_CELL + name if self.scope is not None and self.scope.is_class else name

    def e_Yield(self, node):
        """A yield the generator compiler did not take (gradcli.language.generators): one that
        _check_yields reported before compiling began, so this closure never runs."""
        return lambda env: None

    e_YieldFrom = e_Yield

    def e_Lambda(self, node):
        def body(expression):
            value = self.expr(expression)
            return lambda env: _Return(value(env))
        return self._function("<lambda>", node, body)

    def _function(self, name: str, node, compile_body):
        """A function (env) -> ScriptFunction for a def or a lambda: its defaults evaluated when it is
        made (positional ones, then keyword-only ones, as in CPython), its body compiled once in its own
        scope, its closure taken from the enclosing call."""
        positional = [p for p in node.params if p.kind in syntax.POSITIONAL_KINDS]
        params = [p.name for p in positional]
        defaults = [self.expr(p.default) for p in positional if p.default is not None]
        kwdefaults = [(p.name, self.expr(p.default)) for p in node.params
                      if p.kind == "keyword_only" and p.default is not None]
        annotations = self._parameter_annotations(node) if node.__class__ is syntax.FunctionDef else None
        signature = None
        if len(positional) < len(node.params) or any(p.kind == "positional_only" for p in positional):
            signature = Signature(node.params)
        qualname = self.prefix + name
        outer, outer_prefix, outer_first = self.scope, self.prefix, self.first_param
        scope = scopes.analyze(node, None, self.problems) if outer is None else outer.children[id(node)]
        self.scope, self.prefix = scope, qualname + ".<locals>."
        self.first_param = node.params[0].name if node.params and node.params[0].kind in syntax.POSITIONAL_KINDS \
            else None
        try:
            body = compile_body(node.body)
        finally:
            self.scope, self.prefix, self.first_param = outer, outer_prefix, outer_first
        globals_ = self.globals
        doc = docstring(node.body) if node.__class__ is syntax.FunctionDef else None
        if signature is None and not scope.cells and not scope.frees and annotations is None:
            return lambda env: ScriptFunction(name, qualname, params, [d(env) for d in defaults], body, globals_,
                                              doc=doc)
        cells = tuple(sorted(scope.cells)) if scope.cells or scope.frees else None
        frees = scope.frees
        keys = [self._outer_key(n) for n in frees]

        def make_function(env):
            # the Cells of the enclosing call that hold the names this function reads from it
            closure = tuple([env[k] for k in keys])
            made_defaults = [d(env) for d in defaults]
            made_kwdefaults = {n: d(env) for n, d in kwdefaults} if kwdefaults else None
            f = ScriptFunction(name, qualname, params, made_defaults, body, globals_, cells, frees, closure,
                               signature, made_kwdefaults, doc)
            if annotations is not None:
                f.annotations = {key: annotation(env) for key, annotation in annotations}
            return f
        return make_function

    def _parameter_annotations(self, node):
        """[(name, function (env) -> value)] for a def's annotations in the order CPython 3.11 evaluates
        and records them (after the defaults): the plain parameters, then the positional-only ones, then
        *args, the keyword-only ones, **kwargs, and 'return' last. None when it has none."""
        order = ("positional", "positional_only", "var_positional", "keyword_only", "var_keyword")
        found = [(p.name, p.annotation) for kind in order for p in node.params
                 if p.kind == kind and p.annotation is not None]
        if node.returns is not None:
            found.append(("return", node.returns))
        if not found:
            return None
        return [(key, self.annotation(annotation)) for key, annotation in found]

    def binder(self, name: str):
        """A function (env, value) that binds the variable `name` in the scope being compiled: a local,
        a Cell (a local that closures read, or an enclosing function's declared `nonlocal`), or a
        module global the function declared `global`."""
        kind = self.scope_kind(name)
        if kind == "cell" or kind == "free":
            def store_cell(env, v):
                env[name].value = v
            return store_cell
        if kind == "class" or kind == "classfree":
            def store_class(env, v):        # the class namespace
                env[name] = v
            return store_class
        if kind == "global":
            globals_ = self.globals

            def store_global(env, v):
                globals_[name] = v
            return store_global

        def store_name(env, v):
            env[name] = v
        return store_name

    def s_With(self, node):
        items = [(self.expr(i.context), self.store(i.target) if i.target is not None else None,
                  i.context.line, i.context.col) for i in node.items]
        body = self.block(node.body)

        def run_with(env, k=0):
            if k == len(items):
                return body(env)
            ctx_fn, bind, line, col = items[k]
            ctx = ctx_fn(env)
            value, exit_ = enter(ctx, line, col)
            if bind is not None:
                bind(env, value)
            try:
                signal = run_with(env, k + 1)
            except Exception as e:
                if not exit_(ctx, type(e), e, None):
                    raise
                return None
            except BaseException as e:      # --timeout or Ctrl-C: never the script's __exit__ to swallow
                if type(ctx).__class__ is not classes.ScriptType:
                    abort(ctx, exit_, e)        # gradcli's own contexts restore the grad mode
                raise
            try:
                exit_(ctx, None, None, None)
            except Exception as e:      # (a context's own error on the way out: "generator didn't stop")
                locate(e, line, col)
                raise
            return signal
        return run_with

    def s_Delete(self, node):
        deleters = [self.deleter(t) for t in node.targets]

        def run_del(env):
            for d in deleters:
                d(env)
        return run_del

    def deleter(self, target):
        line, col = target.line, target.col
        if isinstance(target, syntax.Name):
            name = target.id
            kind = self.scope_kind(name)
            if kind == "global":            # declared global in a function
                env_of = self.globals
                kind = "top"
            else:
                env_of = None
                if kind == "class" or kind == "classfree":      # the class namespace
                    kind = "top"
            if kind == "cell" or kind == "free":
                def del_cell(env):
                    cell = env[name]
                    if cell.value is EMPTY:
                        e = UnboundLocalError(_unbound_local(name))
                        locate(e, line, col)
                        raise e
                    cell.value = EMPTY
                return del_cell
            error = NameError if kind == "top" else UnboundLocalError
            message = f"name '{name}' is not defined" if kind == "top" else _unbound_local(name)

            def del_name(env):
                namespace = env if env_of is None else env_of
                if name not in namespace:
                    e = error(message)
                    locate(e, line, col)
                    raise e
                del namespace[name]
            return del_name
        if isinstance(target, syntax.Subscript):
            obj_fn, index_fn = self.expr(target.value), self.index(target.index)

            def del_item(env):
                obj, key = obj_fn(env), index_fn(env)
                try:
                    del obj[key]
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return del_item
        if isinstance(target, syntax.Attribute):
            obj_fn, attr = self.expr(target.value), target.attr

            def del_attr(env):
                try:
                    access.del_attr(obj_fn(env), attr)
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return del_attr
        if isinstance(target, (syntax.Tuple, syntax.List)):
            parts = [self.deleter(t) for t in target.elts]

            def del_all(env):
                for p in parts:
                    p(env)
            return del_all
        raise NotImplementedError("del target")

    def s_Assert(self, node):
        test = self.expr(node.test)
        msg = self.expr(node.msg) if node.msg is not None else None
        line, col = node.line, node.col

        def run_assert(env):
            if not test(env):
                e = AssertionError(str(msg(env))) if msg is not None else AssertionError()
                locate(e, line, col)
                raise e
        return run_assert

    def s_Import(self, node):
        mod = stdlib.module(node.module)
        line, col = node.line, node.col
        if node.alias is not None:
            name, value = node.alias, mod
        else:                          # `import torch.nn.functional` binds `torch`
            name = node.module.split(".")[0]
            value = stdlib.module(name)
        bind = self.binder(name)

        def run_import(env):
            if mod is None:
                e = outside_import(node.module)
                locate(e, line, col)
                raise e
            bind(env, value)
        return run_import

    def s_ImportFrom(self, node):
        mod = stdlib.module(node.module)
        line, col = node.line, node.col
        names = [(name, self.binder(alias or name)) for name, alias in node.names]

        def run_from(env):
            if mod is None:
                e = outside_import(node.module)
                locate(e, line, col)
                raise e
            for name, bind in names:
                if name not in mod.members:
                    reason = access.REFUSED_TORCH_MEMBERS.get(name) if mod.name == "torch" else \
                        stdlib.refused_member(mod.name, name)
                    if reason is not None:
                        e = ImportError(f"cannot import name '{name}' from '{mod.name}': it is outside gradcli's "
                                        f"language ({reason})")
                    elif mod.name.startswith("torch") and torchapi.has(mod.name, name) \
                            or stdlib.python_has(mod.name, name):
                        e = NotImplementedError(f"gradcli does not implement {mod.name}.{name}")
                    else:
                        e = ImportError(f"cannot import name '{name}' from '{mod.name}' (unknown location)")
                    locate(e, line, col)
                    raise e
                bind(env, mod.members[name])
        return run_from

    # ------------------------------------------------------------------------------ expressions
    def expr(self, node):
        # A chain like 1+1+...+1 nests one level per operator; past this depth the closures would
        # exhaust Python's stack when run, so refuse the script as a syntax error instead.
        self.depth += 1
        try:
            if self.depth > MAX_EXPRESSION_DEPTH:
                raise ScriptSyntaxError(f"expression too deeply nested (more than {MAX_EXPRESSION_DEPTH} "
                                        "levels of operators or calls)", line=node.line, col=node.col)
            return getattr(self, "e_" + type(node).__name__)(node)
        finally:
            self.depth -= 1

    def e_Constant(self, node):
        value = node.value
        return lambda env: value

    def scope_kind(self, name: str) -> str:
        """How `name` resolves where the compiler is: 'top' (the module), or a function's 'local',
        'cell', 'free' or 'global' (gradcli.language.scopes)."""
        return "top" if self.scope is None else self.scope.kind(name)

    def e_Name(self, node):
        name, line, col = node.id, node.line, node.col
        builtins = self.builtins
        undefined = _undefined(name, builtins)
        kind = self.scope_kind(name)
        if kind == "local":
            def load_local(env):
                try:
                    return env[name]
                except KeyError:
                    e = UnboundLocalError(_unbound_local(name))
                    locate(e, line, col)
                    raise e from None
            return load_local
        if kind == "cell" or kind == "free":
            if kind == "cell":
                error, message = UnboundLocalError, _unbound_local(name)
            else:
                error, message = NameError, (f"cannot access free variable '{name}' where it is not "
                                             "associated with a value in enclosing scope")

            def load_cell(env):
                value = env[name].value
                if value is EMPTY:
                    e = error(message)
                    locate(e, line, col)
                    raise e
                return value
            return load_cell
        if kind == "class" or kind == "classfree":
            return self._class_name(name, kind, undefined, line, col)
        # a global read in a function, or any name at top level (where the variables are the globals)
        return self._global_name(name, undefined, line, col)

    def _global_name(self, name, undefined, line, col):
        """A module global read in a function: the globals, then the builtins."""
        globals_, builtins, scope = self.globals, self.builtins, self.scope
        plain = name not in _PYTHON_BUILTINS        # (one the language leaves out is no misspelling)

        def names_in_scope():           # for Python's "Did you mean", only if the error reaches the top
            return (scope.varnames() if scope is not None else []), globals_

        def load_global(env):
            try:
                return globals_[name]
            except KeyError:
                pass
            try:
                return builtins[name]
            except KeyError:
                e = NameError(undefined, name=name)
                if plain:
                    setattr(e, NAMES_IN_SCOPE, names_in_scope)
                locate(e, line, col)
                raise e from None
        return load_global

    def _class_name(self, name, kind, undefined, line, col):
        """A name read in a class body: the class namespace first; then, for a name an enclosing function
        binds, that function's Cell, else the globals and builtins (as CPython's LOAD_CLASSDEREF and
        LOAD_NAME)."""
        if kind == "classfree":
            key = CLASS_CELL + name
            message = (f"cannot access free variable '{name}' where it is not associated with a value in "
                       "enclosing scope")

            def load_class_free(env):
                try:
                    return env[name]
                except KeyError:
                    pass
                value = env[key].value
                if value is EMPTY:
                    e = NameError(message)
                    locate(e, line, col)
                    raise e
                return value
            return load_class_free

        load_global = self._global_name(name, undefined, line, col)

        def load_class_name(env):
            try:
                return env[name]
            except KeyError:
                return load_global(env)
        return load_class_name

    def e_List(self, node):
        items = self._items(node, "list")
        if items is not None:
            return items
        elts = [self.expr(e) for e in node.elts]
        return lambda env: [e(env) for e in elts]

    def e_Dict(self, node):
        # CPython evaluates each key, then its value, left to right; a later equal key replaces an earlier one
        # `**mapping` (a None key) merges its items in at its place, within the bound of a dict's size
        pairs = [(self.expr(k) if k is not None else None, self.expr(v)) for k, v in zip(node.keys, node.values)]
        line, col = node.line, node.col

        def make_dict(env):
            d = {}
            for key, value in pairs:
                if key is None:
                    _update(d, value(env), line, col)
                    continue
                k = key(env)
                _put(d, k, value(env), line, col)
            return d
        return make_dict

    def e_Set(self, node):
        line, col = node.line, node.col
        items = self._items(node, "set")
        if items is not None:
            return lambda env: _as_set(items(env), line, col)
        elts = [self.expr(e) for e in node.elts]

        def make_set(env):
            return _as_set([e(env) for e in elts], line, col)
        return make_set

    # ------------------------------------------------------------------- comprehensions
    # A comprehension runs in a scope of its own (Python 3): a fresh namespace holds its `for` targets,
    # the Cells of the names it reads from an enclosing function, and Cells of its own for nested
    # comprehensions. Its first iterable is evaluated in the enclosing scope, when the comprehension
    # is, even for a generator expression, whose body then runs as it is iterated.

    def e_ListComp(self, node):
        return self._comprehension(node, "list")

    def e_SetComp(self, node):
        return self._comprehension(node, "set")

    def e_DictComp(self, node):
        return self._comprehension(node, "dict")

    def e_GeneratorExp(self, node):
        return self._comprehension(node, "generator")

    def _comprehension(self, node, kind: str):
        outer, outer_prefix, outer_first = self.scope, self.prefix, self.first_param
        scope = scopes.analyze(node, None, self.problems) if outer is None else outer.children[id(node)]
        first = self.expr(node.generators[0].iter)
        self.scope = scope
        self.first_param = None
        # lambdas in it are named as CPython names them: <listcomp>.<lambda>, f.<locals>.<genexpr>.<lambda>
        self.prefix = outer_prefix + {"list": "<listcomp>.", "set": "<setcomp>.", "dict": "<dictcomp>.",
                                      "generator": "<genexpr>."}[kind]
        try:
            clauses = [(self.store(c.target), self.expr(c.iter) if i else None, [self.expr(t) for t in c.ifs])
                       for i, c in enumerate(node.generators)]
            if kind == "dict":
                key, value = self.expr(node.key), self.expr(node.value)
            else:
                elt = self.expr(node.elt)
        finally:
            self.scope, self.prefix, self.first_param = outer, outer_prefix, outer_first
        frees, cells = scope.frees, tuple(sorted(scope.cells))
        keys = [(name, self._outer_key(name)) for name in frees]
        last = len(clauses) - 1
        line, col = node.line, node.col

        def namespace(env):
            inner = {name: env[key] for name, key in keys}
            for name in cells:
                inner[name] = Cell(EMPTY)
            return inner

        def iterate(value):
            try:
                return iter(value)
            except TypeError as e:              # not iterable: CPython points at the comprehension
                locate(e, line, col)
                raise

        def items(inner, k, iterable):
            """The comprehension's values from clause k on, in order."""
            bind, _, conditions = clauses[k]
            for item in iterable:
                bind(inner, item)
                for condition in conditions:
                    if not condition(inner):
                        break
                else:
                    if k == last:
                        yield inner
                    else:
                        yield from items(inner, k + 1, iterate(clauses[k + 1][1](inner)))

        if kind == "generator":
            def genexpr(inner, iterable):
                for scope_now in items(inner, 0, iterable):
                    yield elt(scope_now)
            genexpr.__name__ = genexpr.__qualname__ = "<genexpr>"      # as CPython names it

            def make_generator(env):
                return genexpr(namespace(env), iterate(first(env)))
            return make_generator

        limit_kind = "list" if kind == "list" else kind

        def make(env):
            iterable = iterate(first(env))
            inner = namespace(env)
            if kind == "dict":
                out = {}
                for scope_now in items(inner, 0, iterable):
                    _put(out, key(scope_now), value(scope_now), line, col)
                    if len(out) > STATE.max_items:
                        raise _located(bounds.built_too_many(limit_kind), line, col)
                return out
            out = []
            append = out.append
            for scope_now in items(inner, 0, iterable):
                append(elt(scope_now))
                if len(out) > STATE.max_items:
                    raise _located(bounds.built_too_many(limit_kind), line, col)
            return _as_set(out, line, col) if kind == "set" else out
        return make

    def e_Tuple(self, node):
        items = self._items(node, "tuple")
        if items is not None:
            return lambda env: tuple(items(env))
        elts = [self.expr(e) for e in node.elts]
        return lambda env: tuple([e(env) for e in elts])

    def e_BinOp(self, node):
        fn = _BINARY[node.op]
        left, right = self.expr(node.left), self.expr(node.right)
        line, col = node.line, node.col
        check = _size_check(node.op, node.left, node.right)
        method = _TENSOR_BINARY.get(node.op)
        if check is None and method is not None and isinstance(node.right, syntax.Constant) \
                and node.right.value.__class__ in _DIRECT_OPERANDS:
            return _tensor_number_binop(fn, method, left, node.right.value, line, col)
        if check is not None or method is not None:
            return self._tensor_binop(fn, method, check, left, right, line, col)

        def binop(env):
            try:
                return fn(left(env), right(env))
            except BaseException as e:
                locate(e, line, col)
                raise
        return binop

    def _tensor_binop(self, fn, method, check, left, right, line, col):
        """An operator that a Tensor defines (`method`, else None), or that can build numbers or strings
        big enough to hang or exhaust the machine from a one-line script (`**`, `<<`, `*`, `+` and `%`:
        `check`, else None, refuses those before they are computed). A tensor on the left grows that way
        only with a sequence on the right (`t * [1, 2]`: the Tensor leaves it to the list, which repeats
        itself t times), so tensor arithmetic pays two class tests."""
        def binop(env):
            a, b = left(env), right(env)
            try:
                if a.__class__ is Tensor and b.__class__ in _DIRECT_OPERANDS:
                    if method is not None:
                        out = method(a, b)
                        if out is not NotImplemented:
                            return out
                elif check is not None:
                    check(a, b)
                return fn(a, b)
            except BaseException as e:
                locate(e, line, col)
                raise
        return binop

    def e_UnaryOp(self, node):
        operand = self.expr(node.operand)
        line, col = node.line, node.col
        if node.op == "not_":
            return lambda env: not operand(env)
        fn = _UNARY[node.op]

        def unary(env):
            try:
                return fn(operand(env))
            except BaseException as e:
                locate(e, line, col)
                raise
        return unary

    def e_BoolOp(self, node):
        # as CPython: each operand but the last is tested for truth; the last is the value, never tested
        # (`None or t` is t even when t is a tensor with no single truth value)
        *tested, last = [self.expr(v) for v in node.values]
        if node.op == "and":
            def and_(env):
                for f in tested:
                    v = f(env)
                    if not v:
                        return v
                return last(env)
            return and_

        def or_(env):
            for f in tested:
                v = f(env)
                if v:
                    return v
            return last(env)
        return or_

    def e_Compare(self, node):
        left = self.expr(node.left)
        ops = [_COMPARE[o] for o in node.ops]
        rights = [self.expr(c) for c in node.comparators]
        line, col = node.line, node.col
        if len(ops) == 1:
            fn, right = ops[0], rights[0]

            def compare(env):
                try:
                    return fn(left(env), right(env))
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return compare
        pairs = list(zip(ops, rights))

        def chain(env):
            a = left(env)
            result = True
            try:
                for fn, right in pairs:
                    b = right(env)
                    result = fn(a, b)
                    if not result:
                        return result
                    a = b
            except BaseException as e:
                locate(e, line, col)
                raise
            return result
        return chain

    def e_NamedExpr(self, node):
        """`name := value`: the value, bound in the scope the name resolves to (a comprehension's
        target binds in the function or module around it: gradcli.language.scopes)."""
        value, bind = self.expr(node.value), self.binder(node.target.id)

        def named(env):
            v = value(env)
            bind(env, v)
            return v
        return named

    def e_IfExp(self, node):
        test, body, orelse = self.expr(node.test), self.expr(node.body), self.expr(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)

    def e_Attribute(self, node, called=False):
        """`obj.name`; `called`: it is called at once (`obj.name(...)`), so a method need not be made
        into a value that prints as PyTorch's (access.get_attr) and is fetched as it is."""
        obj_fn, name = self.expr(node.value), node.attr
        line, col = node.line, node.col
        get_attr = access.get_method if called else access.get_attr
        if name == "__class__":         # type(obj), as in Python; the class's own dunders stay refused
            script_type = stdlib.script_type
            return lambda env: script_type(obj_fn(env))
        if name == "grad":
            warn = self.warn

            def load_grad(env):
                obj = obj_fn(env)
                if obj.__class__ is Tensor:
                    if obj.grad_fn is not None and obj.grad is None and not obj.retains_grad:
                        warn(line, col, "UserWarning", NON_LEAF_GRAD_WARNING, obj)
                    return obj.grad
                try:
                    return get_attr(obj, name)
                except BaseException as e:
                    locate(e, line, col)
                    raise
            return load_grad
        tensor_attrs = access.TENSOR_ATTRS
        if not called and name in access.TENSOR_METHODS or name == "grad_fn":
            tensor_attrs = ()           # a bare tensor method: get_attr wraps it; grad_fn: see access

        lazy = uninitialized_marks          # a lazy module's placeholders: their reads go through access

        def load_attr(env):
            obj = obj_fn(env)
            if obj.__class__ is Tensor and name in tensor_attrs and not (lazy and id(obj) in lazy or
                                                                         called and STATE.complex_seen):
                return getattr(obj, name)
            try:
                return get_attr(obj, name)
            except BaseException as e:
                locate(e, line, col)
                raise
        return load_attr

    def e_Subscript(self, node):
        obj_fn, index_fn = self.expr(node.value), self.index(node.index)
        line, col = node.line, node.col

        def subscript(env):
            obj, key = obj_fn(env), index_fn(env)
            try:
                return obj[key]
            except BaseException as e:
                if e.__class__ is TypeError and (obj.__class__ is bounds.Bounded
                                                 or obj.__class__ is classes.ScriptType and classes.GENERIC_PARAMETERS):
                    return _class_subscript(obj, key, e, line, col)     # list[int], Box[int]
                locate(e, line, col)
                raise
        return subscript

    def index(self, node):
        if isinstance(node, syntax.Slice):
            parts = [self.expr(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
            lo, hi, st = parts
            return lambda env: slice(lo(env) if lo else None, hi(env) if hi else None, st(env) if st else None)
        if isinstance(node, syntax.Tuple):
            elts = [self.index(e) for e in node.elts]
            return lambda env: tuple([e(env) for e in elts])
        return self.expr(node)

    def e_Slice(self, node):
        return self.index(node)

    def e_Call(self, node):
        if (not node.args and not node.keywords and node.func.__class__ is syntax.Name and node.func.id == "super"
                and self.scope is not None and self.scope.kind("__class__") == "free"):
            return self._super_call(node)
        if isinstance(node.func, syntax.Attribute):
            self.depth += 1
            try:
                # a call with out= reads the function as a value: its name tells whether it takes out=
                func = self.e_Attribute(node.func, called=not any(k.name == "out" for k in node.keywords))
            finally:
                self.depth -= 1
        else:
            func = self.expr(node.func)
        if any(a.__class__ is syntax.Starred for a in node.args) or any(k.name is None for k in node.keywords):
            return self._call_unpacking(node, func)
        args = [self.expr(a) for a in node.args]
        kwnames = [k.name for k in node.keywords]
        kwvalues = [self.expr(k.value) for k in node.keywords]
        line, col = node.line, node.col
        if "out" in kwnames:                # the only calls that pay for out= (gradcli.language.outkeyword)
            from gradcli.language import outkeyword
            out_call, numpy_keywords = outkeyword.call, stdlib.numpy_keywords
            numpy = bool(set(kwnames) & stdlib.NUMPY_KEYWORDS.keys())

            def call_out(env):
                f = func(env)
                a = [x(env) for x in args]
                kw = {n: v(env) for n, v in zip(kwnames, kwvalues)}
                if numpy:
                    kw = numpy_keywords(f, kw)
                try:
                    return out_call(f, a, kw)
                except Exception as e:
                    raise _call_error(e, f, a, outkeyword.as_parsed(kw), line, col)
            return call_out
        if set(kwnames) & stdlib.NUMPY_KEYWORDS.keys():
            numpy_keywords = stdlib.numpy_keywords

            def call_numpy_kw(env):         # axis=, keepdims=, ...: PyTorch's aliases, when f takes them
                f = func(env)
                a = [x(env) for x in args]
                kw = numpy_keywords(f, {n: v(env) for n, v in zip(kwnames, kwvalues)})
                try:
                    return f(*a, **kw)
                except Exception as e:
                    raise _call_error(e, f, a, kw, line, col)
            return call_numpy_kw
        if kwnames:
            def call_kw(env):
                f = func(env)
                a = [x(env) for x in args]
                kw = {n: v(env) for n, v in zip(kwnames, kwvalues)}
                try:
                    return f(*a, **kw)
                except Exception as e:
                    raise _call_error(e, f, a, kw, line, col)
            return call_kw
        if len(args) == 0:
            def call0(env):
                f = func(env)
                try:
                    return f()
                except Exception as e:
                    raise _call_error(e, f, (), {}, line, col)
            return call0
        if len(args) == 1:
            a0 = args[0]

            def call1(env):
                f = func(env)
                x = a0(env)
                try:
                    return f(x)
                except Exception as e:
                    raise _call_error(e, f, (x,), {}, line, col)
            return call1

        def call(env):
            f = func(env)
            a = [x(env) for x in args]
            try:
                return f(*a)
            except Exception as e:
                raise _call_error(e, f, a, {}, line, col)
        return call

    def _super_call(self, node):
        """`super()` in a method: super(the class being defined, the method's first argument), as CPython
        makes it from the implicit `__class__` Cell and the frame's first local."""
        load_super = self.expr(node.func)
        first = self.first_param
        load_first = self.e_Name(syntax.Name(first, line=node.line, col=node.col)) if first is not None else None
        line, col = node.line, node.col

        def call_super(env):
            f = load_super(env)
            if f is not classes.SUPER:          # `super` rebound by the script: an ordinary call
                try:
                    return f()
                except Exception as e:
                    raise _call_error(e, f, (), {}, line, col)
            try:
                if load_first is None:
                    raise RuntimeError("super(): no arguments")
                cls = env["__class__"].value
                if cls is EMPTY:
                    raise RuntimeError("super(): empty __class__ cell")
                return super(cls, load_first(env))
            except Exception as e:
                locate(e, line, col)
                raise
        return call_super

    def _call_unpacking(self, node, func):
        """A call with `*iterable` or `**mapping` arguments: CPython evaluates the callee, the positional
        and `*` arguments, then the keyword and `**` ones, each in order, and checks them as it goes."""
        args = [(a.__class__ is syntax.Starred, self.expr(a.value if a.__class__ is syntax.Starred else a))
                for a in node.args]
        keywords = [(k.name, self.expr(k.value)) for k in node.keywords]
        alone = len(args) == 1          # `f(*xs)`: the errors name f
        line, col = node.line, node.col
        numpy_names = stdlib.NUMPY_KEYWORDS.keys()
        numpy_keywords = stdlib.numpy_keywords

        def call_unpacking(env):
            f = func(env)
            try:
                a = []
                for star, arg in args:
                    if star:
                        a += _unpacked(arg(env), f if alone else None, STATE.max_items - len(a))
                    else:
                        a.append(arg(env))
                kw = {}
                for name, arg in keywords:
                    if name is None:
                        _merge_keywords(kw, arg(env), f)
                    elif name in kw:
                        raise TypeError(f"{_function_str(f)} got multiple values for keyword argument '{name}'")
                    else:
                        kw[name] = arg(env)
                for name in kw:
                    if name.__class__ is not str:
                        raise TypeError("keywords must be strings")
                if f.__class__ is not ScriptFunction and kw:
                    for name in kw:
                        if name.startswith("_"):    # never a private keyword of gradcli's own functions
                            raise TypeError(f"{_function_str(f)} got the keyword argument '{name}': names "
                                            "starting with '_' are outside gradcli's language")
                    if kw.keys() & numpy_names:     # axis=, keepdims=, ... from **d: as when written out
                        kw = numpy_keywords(f, kw)
            except BaseException as e:
                locate(e, line, col)
                raise
            if "out" in kw:
                from gradcli.language import outkeyword
                try:
                    return outkeyword.call(f, a, kw)
                except Exception as e:
                    raise _call_error(e, f, a, outkeyword.as_parsed(kw), line, col)
            try:
                return f(*a, **kw)
            except Exception as e:
                raise _call_error(e, f, a, kw, line, col)
        return call_unpacking

    def e_Starred(self, node):
        # displays, calls and targets take their Starred elements themselves: any other is misplaced
        raise ScriptSyntaxError("can't use starred expression here", line=node.line, col=node.col)

    def _items(self, node, kind: str):
        """(env) -> the items of a tuple, list or set display that unpacks `*iterable`s, within the list
        bound; or None when it has no starred element."""
        if not any(e.__class__ is syntax.Starred for e in node.elts):
            return None
        parts = [(e.__class__ is syntax.Starred, self.expr(e.value if e.__class__ is syntax.Starred else e))
                 for e in node.elts]
        line, col = node.line, node.col

        def items(env):
            out = []
            try:
                for star, part in parts:
                    if star:
                        out += _unpacked(part(env), None, STATE.max_items - len(out), kind)
                    else:
                        out.append(part(env))
            except BaseException as e:
                locate(e, line, col)
                raise
            return out
        return items

    def e_JoinedStr(self, node):
        parts = []
        for p in node.parts:
            if isinstance(p, str):
                parts.append((p, None, None, None))
            else:
                spec = self.e_JoinedStr(p.format_spec) if p.format_spec is not None else None
                parts.append((None, self.expr(p.value), formatting.CONVERSIONS.get(p.conversion), spec))
        line, col = node.line, node.col
        check_spec = bounds.check_format_spec

        def fstring(env):
            out = []
            try:
                for text, value, conversion, spec in parts:
                    if text is not None:
                        out.append(text)
                        continue
                    v = value(env)
                    if conversion is not None:      # !r, !s, !a
                        v = conversion(v)
                    if spec is None:
                        out.append(format(v, ""))
                    else:
                        s = spec(env)
                        check_spec(s)       # f"{x:999999999}" would build a string that long
                        out.append(format(v, s))
            except BaseException as e:
                locate(e, line, col)
                raise
            return "".join(out)
        return fstring


# `from __future__ import ...`: the features of Python 3 that are on anyway; barry_as_FLUFL (`<>`) is not
FUTURE_FEATURES = ("nested_scopes", "generators", "division", "absolute_import", "with_statement", "print_function",
                   "unicode_literals", "generator_stop", "annotations")


def _located(exc: BaseException, line: int, col: int) -> BaseException:
    locate(exc, line, col)
    return exc


def _check_future_imports(body: list, problems: Problems) -> bool:
    """CPython's rules for future imports: only at the top of the file (after a docstring and other
    future imports), only features Python knows. What breaks them is noted in `problems`. Returns
    whether the annotations feature is among them."""
    top = True
    annotations = False
    for i, st in enumerate(body):
        if st.__class__ is syntax.ImportFrom and st.module == "__future__":
            if not top:
                problems.add("from __future__ imports must occur at the beginning of the file", st.line, st.col)
                continue
            for name, _ in st.names:
                if name == "braces":
                    problems.add("not a chance", st.line, st.col)
                elif name == "barry_as_FLUFL":
                    problems.refuse("future feature barry_as_FLUFL is", st)
                elif name not in FUTURE_FEATURES:
                    problems.add(f"future feature {name} is not defined", st.line, st.col)
                elif name == "annotations":
                    annotations = True
        elif not (i == 0 and st.__class__ is syntax.ExprStmt and st.value.__class__ is syntax.Constant
                  and st.value.value.__class__ is str):
            top = False
    return annotations


def _check_imports(body: list, problems: Problems) -> None:
    """The module-level imports of modules outside the language, which would raise ImportError when they
    ran (only those outside any `if` or `try`: a script may guard an import)."""
    for st in body:
        if (st.__class__ is syntax.Import or st.__class__ is syntax.ImportFrom) and st.module != "__future__" \
                and stdlib.module(st.module) is None and stdlib.missing_module(st.module) is None:
            e = outside_import(st.module)
            problems.add(str(e), st.line, st.col, type(e).__name__)


def _class_subscript(obj, key, error: TypeError, line: int, col: int):
    """`list[int]` (PEP 585) for a class the script's builtins hold bounded, `Box[int]` for a script's class
    made generic; else the error the subscript raised, in CPython's words. (typing's forms are loaded only
    by the scripts that build one.)"""
    from gradcli.language import pytyping
    try:
        if obj.__class__ is bounds.Bounded:
            made = pytyping.subscript_class(obj, key)
            if made is None:
                error = TypeError(f"'{stdlib.type_name(obj)}' object is not subscriptable")
        else:
            made = pytyping.subscript_generic(obj, key)
    except TypeError as e:
        made, error = None, e
    if made is None:
        locate(error, line, col)
        raise error
    return made


def _put_item(table, key, value, line: int, col: int) -> None:
    """table[key] = value for an annotation recorded in `__annotations__`, whatever a script bound there."""
    try:
        table[key] = value
    except BaseException as e:
        locate(e, line, col)
        raise


def _subscript_parts(compiler, index) -> list:
    """What a bare annotated subscript (`a[i:j]: int`) evaluates of its index, as CPython's
    check_ann_subscr: a slice's bounds, a tuple's elements, or the index."""
    if index.__class__ is syntax.Slice:
        return [compiler.expr(e) for e in (index.lower, index.upper, index.step) if e is not None]
    if index.__class__ is syntax.Tuple:
        return [f for e in index.elts for f in _subscript_parts(compiler, e)]
    return [compiler.expr(index)]


def _put(d: dict, key, value, line: int, col: int) -> None:
    """d[key] = value for a dict display or comprehension: an unhashable key is located at it."""
    try:
        d[key] = value
    except TypeError as e:
        locate(e, line, col)
        raise


_SIZED = (list, tuple, range, str)       # what bounds.take measures before copying


def _update(d: dict, mapping, line: int, col: int) -> None:
    """`**mapping` in a dict display: its items join d's, later keys winning."""
    try:
        if not isinstance(mapping, dict):
            raise TypeError(f"'{access.type_name(mapping)}' object is not a mapping")
        d.update(mapping)
        if len(d) > STATE.max_items:
            raise bounds.built_too_many("dict")
    except BaseException as e:
        locate(e, line, col)
        raise


def _as_set(items: list, line: int, col: int) -> set:
    """The set of a set display or comprehension: an unhashable item is located at it."""
    try:
        return set(items)
    except TypeError as e:
        locate(e, line, col)
        raise


def outside_import(module: str) -> Exception:
    """The error for importing a module gradcli does not provide."""
    missing = stdlib.missing_module(module)
    if missing is not None:
        return missing
    if module.split(".")[0] == "torch":
        parts = module.split(".")
        refused = len(parts) > 1 and (parts[1] in access.REFUSED_TORCH_MEMBERS or (
            parts[1] == "utils" and len(parts) > 2 and parts[2] != "data"))     # torch.utils: data loading only
        if not refused and torchapi.is_module(module):
            return NotImplementedError(f"gradcli does not implement {module}")
        known = ", ".join(m for m in stdlib.modules() if m.startswith("torch"))
        return ImportError(f"import of '{module}' is outside gradcli's language: gradcli knows only {known} and math")
    parent, _, name = module.rpartition(".")
    reason = stdlib.refused_member(parent, name) if parent else None     # logging.handlers: files
    if reason is not None:
        return ImportError(f"import of '{module}' is outside gradcli's language: {reason}")
    tops = [m for m in stdlib.modules() if "." not in m]
    return ImportError(f"import of '{module}' is outside gradcli's language: scripts can import only "
                       f"{', '.join(tops[:-1])} and {tops[-1]}")


_YIELD_PLACES = {syntax.ListComp: "inside list comprehension", syntax.SetComp: "inside set comprehension",
                 syntax.DictComp: "inside dict comprehension", syntax.GeneratorExp: "inside generator expression"}


def _check_yields(body: list, problems: Problems) -> None:
    """Every yield of a module in a place gradcli runs it: a statement of a def (`yield x`, `yield from
    xs`) or alone on the right of its `=`. Elsewhere, CPython's SyntaxError (outside a function, in a
    comprehension) or the language's refusal (in a lambda, inside a larger expression)."""
    stack = [(n, "outside function") for n in body]
    while stack:
        node, where = stack.pop()
        cls = node.__class__
        if cls in _YIELDS:
            if where == "def":
                problems.refuse("yield inside an expression (use it as a statement or alone on the right of "
                                "'=') is", node)
            elif where == "lambda":
                problems.refuse("yield in a lambda is", node)
            else:
                problems.invalid(ScriptSyntaxError(f"'yield' {where}", line=node.line, col=node.col))
            if node.value is not None:
                stack.append((node.value, where))
            continue
        if cls is syntax.FunctionDef:
            stack.extend((d, where) for d in node.decorators)
            stack.extend((p.default, where) for p in node.params if p.default is not None)
            stack.extend((p.annotation, where) for p in node.params if p.annotation is not None)
            if node.returns is not None:
                stack.append((node.returns, where))
            stack.extend((n, "def") for n in node.body)
            continue
        if cls is syntax.Lambda:
            stack.extend((p.default, where) for p in node.params if p.default is not None)
            stack.append((node.body, "lambda"))
            continue
        if cls is syntax.ClassDef:
            stack.extend((d, where) for d in node.decorators)
            stack.extend((b, where) for b in node.bases)
            stack.extend((n, "outside function") for n in node.body)
            continue
        if cls in _YIELD_PLACES:
            stack.append((node.generators[0].iter, where))
            inner = _YIELD_PLACES[cls]
            stack.extend((n, inner) for n in scopes._comprehension_inside(node))
            continue
        if where == "def" and (cls is syntax.ExprStmt or cls is syntax.Assign or cls is syntax.AnnAssign) \
                and node.value.__class__ in _YIELDS:
            if cls is syntax.Assign:
                stack.extend((t, where) for t in node.targets)
            elif cls is syntax.AnnAssign:
                stack.append((node.target, where))        # (a function evaluates no annotation of its own)
            if node.value.value is not None:
                stack.append((node.value.value, where))       # the yield itself is in its place
            continue
        for field in node._fields:
            value = getattr(node, field)
            if isinstance(value, syntax.Node):
                stack.append((value, where))
            elif value.__class__ is list:
                for v in value:
                    if isinstance(v, syntax.Node):
                        stack.append((v, where))
                    elif v.__class__ is tuple:
                        stack.extend((w, where) for w in v if isinstance(w, syntax.Node))


NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
    "for more information. (Triggered internally at "
    "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")

# On a NameError for a global name: a function giving (the function's local names, the globals), which
# gradcli.language.suggestions reads for Python's "Did you mean" when the error reaches the top.
NAMES_IN_SCOPE = "_gradcli_names"


def _unbound_local(name: str) -> str:
    return f"cannot access local variable '{name}' where it is not associated with a value"


def _undefined(name: str, builtins: dict) -> str:
    """NameError's message: Python's, and for a Python builtin the language leaves out (eval, open,
    getattr, ...), that it is outside the language."""
    message = f"name '{name}' is not defined"
    if name not in builtins and name in _PYTHON_BUILTINS:
        message += f": Python's builtin '{name}' is outside gradcli's language"
    return message


_PYTHON_BUILTINS = frozenset(n for n in vars(builtins) if not n.startswith("_"))


# `tensor <op> x` calls the Tensor's method from here when x is a Tensor, float or int, whose classes give
# no reflected method priority over it, so the operator would call that method first; this skips the
# operator's way through C, which starts a new interpreter loop for the method (about 1k instructions)
_TENSOR_BINARY = {"add": Tensor.__add__, "sub": Tensor.__sub__, "mul": Tensor.__mul__,
                  "truediv": Tensor.__truediv__, "pow": Tensor.__pow__, "matmul": Tensor.__matmul__}
_DIRECT_OPERANDS = frozenset((Tensor, float, int))


def _tensor_number_binop(fn, method, left, number, line, col):
    """`left <op> number` for a float or int literal that no size check needs (`y * 1.0001`, `x - 1`): the
    hot case of small-op loops, in the fewest steps."""
    def binop(env):
        a = left(env)
        try:
            out = method(a, number) if a.__class__ is Tensor else NotImplemented
            return fn(a, number) if out is NotImplemented else out
        except BaseException as e:
            locate(e, line, col)
            raise
    return binop


def _size_check(op: str, left, right):
    """The check (gradcli.language.bounds) an operator needs before it runs, or None when it cannot build a
    big value: operators other than ** << * + %, and any of them with a float literal operand (or a
    number literal, for +), which no string, list or integer grows by."""
    check = bounds.BINOP_CHECKS.get(op)
    if check is None:
        return None
    safe = (float,) if op != "add" else (float, int, bool, type(None))
    for operand in (left, right):
        if isinstance(operand, syntax.Constant) and operand.value.__class__ in safe:
            return None
    return check


# CPython's own messages name a value's class by its __name__ ("bad operand type for unary -: 'function'");
# a script's function is Python's function there, never gradcli's class.
ScriptFunction.__name__ = "function"
