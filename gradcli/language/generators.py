"""Generator functions: a `def` whose body has `yield` in it.

Calling one binds its arguments and returns a generator without running any of its body, as in Python.
The body compiles here, statement by statement, into Python generators: a statement with a `yield` in it
(the `yield` itself, an `if`, a loop, a `try` or a `with` around one) becomes a Python generator function
`run(env)` whose own yields are the script's and whose return value is the statement's signal (None,
BREAK, CONTINUE or a Return), and the statements around it delegate to it with `yield from`. A
statement without a `yield` is the compiler's ordinary closure, called as it is elsewhere. The generator
a script gets is CPython's own: next(), send(), throw() and close(), StopIteration's value from `return
x`, `yield from` delegating to another generator, a `finally` run when the generator is closed, all
behave as Python's do because Python runs them.

`yield` stands as a statement (`yield x`, `yield`, `yield from xs`) or alone on the right of `=` (`reply
= yield x`); inside a larger expression (`print((yield))`) or a lambda it is refused by name, and outside
a function or in a comprehension it is CPython's SyntaxError (the compiler's `_misplaced_yield`).

Only a script's own generators offer send(), throw() and close() (gradcli.language.access): gradcli's
generators (a module's parameters(), say) are iterated, never driven.

This module is imported only when a script defines a generator function.
"""

from __future__ import annotations

from gradcli.language import access, classes, syntax
from gradcli.language.flow import (BREAK, CATCHABLE, CONTINUE, YIELDS, Return, abort, enter, has_yield,
                                   iterate, locate, matches, tracked)

GENERATOR_NAME = "\0generator"      # the key of a generator's frame name in its env (traceback's frames)


def body(compiler, stmts: list, name: str, qualname: str):
    """The body of a generator function, compiled: a closure (env) -> Return(generator) that the
    function's call returns at once, before any of the body runs."""
    run = _block(compiler, stmts)

    def start(env):
        env[GENERATOR_NAME] = name
        made = _generator(run, env)
        made.__name__ = name                # as CPython names the generator after its function
        made.__qualname__ = qualname
        return Return(made)
    start.makes_generator = True            # (ScriptFunction.is_generator_function reads it)
    return start


def _generator(run, env):
    """The generator a script's generator function returns: its body run with `env` as its frame."""
    signal = yield from run(env)
    if signal.__class__ is Return:
        return signal.value                 # StopIteration's value, and `yield from`'s
    return None


def in_context(gen, make_context):
    """`gen` driven so that each of its steps (the first next(), every send(), throw() and close()) runs
    inside a fresh `make_context()`, as PyTorch's grad-mode decorators drive a generator function's: the
    mode holds while the body runs and not while the generator waits."""
    made = _in_context(gen, make_context)
    made.__name__, made.__qualname__ = gen.__name__, gen.__qualname__
    return made


def _in_context(gen, make_context):
    try:
        with make_context():
            response = gen.send(None)
        while True:
            try:
                request = yield response
            except GeneratorExit:
                with make_context():
                    gen.close()
                raise
            except CATCHABLE as e:          # what the consumer threw in, handed on
                with make_context():
                    response = gen.throw(e)
            else:
                with make_context():
                    response = gen.send(request)
    except StopIteration as e:
        return e.value


access.register_generator_code(_generator.__code__)
access.register_generator_code(_in_context.__code__)


def _block(compiler, stmts: list):
    """A run of statements as a generator function run(env) -> signal."""
    steps = [(s.line, *_statement(compiler, s)) for s in stmts]
    if compiler.provenance is not None:
        # statements are recorded as the compiler's block records them, but a statement that yields is
        # suspended in the middle: it runs unwrapped (the plain statements inside it are recorded)
        wrapped = compiler.provenance.block(stmts, [(line, run) for line, run, _ in steps], compiler.scope is None)
        steps = [(line, run if g else w, g) for (_, w), (line, run, g) in zip(wrapped, steps)]
    if compiler.where is not None:
        steps = [(line, run if g else tracked(run, line, compiler.where), g) for line, run, g in steps]
    compiled = steps

    def run_block(env):
        line = 0
        try:
            for line, st, is_generator in compiled:
                if is_generator:
                    signal = yield from st(env)
                else:
                    signal = st(env)
                if signal is not None:
                    return signal
        except BaseException as e:
            locate(e, line, 0)
            raise
        return None
    return run_block


def _statement(compiler, node) -> tuple:
    """(run, is_generator): a generator function for a statement with a yield in a place this module
    runs, the compiler's closure for any other (which refuses a yield where it finds one)."""
    if has_yield(node):
        make = _MAKERS.get(node.__class__)
        if make is not None:
            made = make(compiler, node)
            if made is not None:
                return made, True
    return compiler.stmt(node), False


def _yield_value(compiler, node):
    """A generator function (env) -> the value of `node`, a yield: what send() passed in, or for
    `yield from xs` what xs's generator returned."""
    if node.__class__ is syntax.YieldFrom:
        value = compiler.expr(node.value)
        line, col = node.value.line, node.value.col

        def delegate(env):
            return (yield from iterate(value(env), line, col))
        return delegate
    value = compiler.expr(node.value) if node.value is not None else None

    def give(env):
        return (yield value(env) if value is not None else None)
    return give


def _expr_stmt(compiler, node):
    if node.value.__class__ not in YIELDS:
        return None
    value = _yield_value(compiler, node.value)

    def run_yield(env):
        yield from value(env)
        return None
    return run_yield


def _assign(compiler, node):
    if node.value.__class__ not in YIELDS:
        return None
    value = _yield_value(compiler, node.value)
    stores = [compiler.store(t) for t in node.targets]

    def run_assign(env):
        v = yield from value(env)
        for store in stores:
            store(env, v)
        return None
    return run_assign


def _ann_assign(compiler, node):
    """`x: int = yield v` in a generator function: a function evaluates no annotation of its own names,
    so this is the assignment (a parenthesised or non-name target is bound the same way)."""
    return _assign(compiler, syntax.Assign([node.target], node.value, node.line, node.col))


def _if(compiler, node):
    test, body_ = compiler.expr(node.test), _block(compiler, node.body)
    orelse = _block(compiler, node.orelse) if node.orelse else None

    def run_if(env):
        if test(env):
            return (yield from body_(env))
        if orelse is not None:
            return (yield from orelse(env))
        return None
    return run_if


def _while(compiler, node):
    test, body_ = compiler.expr(node.test), _block(compiler, node.body)
    orelse = _block(compiler, node.orelse) if node.orelse else None

    def run_while(env):
        while test(env):
            signal = yield from body_(env)
            if signal is not None:
                if signal is BREAK:
                    return None
                if signal is not CONTINUE:
                    return signal
        return (yield from orelse(env)) if orelse is not None else None
    return run_while


def _for(compiler, node):
    iterable, body_ = compiler.expr(node.iter), _block(compiler, node.body)
    orelse = _block(compiler, node.orelse) if node.orelse else None
    line, col = node.iter.line, node.iter.col
    bind = compiler.store(node.target)

    def run_for(env):
        for v in iterate(iterable(env), line, col):
            bind(env, v)
            signal = yield from body_(env)
            if signal is not None:
                if signal is BREAK:
                    return None
                if signal is not CONTINUE:
                    return signal
        return (yield from orelse(env)) if orelse is not None else None
    return run_for


def _try(compiler, node):
    body_ = _block(compiler, node.body)
    orelse = _block(compiler, node.orelse) if node.orelse else None
    finalbody = _block(compiler, node.finalbody) if node.finalbody else None
    handlers = []
    for h in node.handlers:
        kind = compiler.expr(h.type) if h.type is not None else None
        bind = compiler.binder(h.name) if h.name is not None else None
        unbind = compiler.deleter(syntax.Name(h.name, line=h.line, col=h.col)) if h.name is not None else None
        handlers.append((kind, bind, unbind, _block(compiler, h.body), h.line, h.col))

    def handle(env, e):
        for kind, bind, unbind, handler_body, line, col in handlers:
            if matches(e, env, kind, line, col):
                if bind is None:
                    return True, (yield from handler_body(env))
                bind(env, e)
                try:
                    return True, (yield from handler_body(env))
                finally:
                    unbind(env)
        return False, None

    def run_try(env):
        try:
            try:
                signal = yield from body_(env)
            except CATCHABLE as e:
                handled, signal = yield from handle(env, e)
                if not handled:
                    raise
                return signal
            if signal is None and orelse is not None:
                signal = yield from orelse(env)
            return signal
        finally:
            if finalbody is not None:
                final_signal = yield from finalbody(env)
                if final_signal is not None:
                    return final_signal     # noqa: B012 -- a return/break in finally wins, as in Python
    return run_try


def _with(compiler, node):
    items = [(compiler.expr(i.context), compiler.store(i.target) if i.target is not None else None,
              i.context.line, i.context.col) for i in node.items]
    body_ = _block(compiler, node.body)

    def run_with(env, k=0):
        if k == len(items):
            return (yield from body_(env))
        ctx_fn, bind, line, col = items[k]
        ctx = ctx_fn(env)
        value, exit_ = enter(ctx, line, col)
        if bind is not None:
            bind(env, value)
        try:
            signal = yield from run_with(env, k + 1)
        except (Exception, GeneratorExit) as e:     # the generator closed while suspended in the block
            if not exit_(ctx, type(e), e, None):
                raise
            return None
        except BaseException as e:      # --timeout or Ctrl-C: never the script's __exit__ to swallow
            if type(ctx).__class__ is not classes.ScriptType:
                abort(ctx, exit_, e)
            raise
        try:
            exit_(ctx, None, None, None)
        except Exception as e:      # (a context's own error on the way out: "generator didn't stop")
            locate(e, line, col)
            raise
        return signal
    return run_with


def _match(compiler, node):
    from gradcli.language import patterns
    choose = patterns.chooser(compiler, node)
    bodies = [_block(compiler, case.body) for case in node.cases]

    def run_match(env):
        i = choose(env)
        if i < 0:
            return None
        return (yield from bodies[i](env))
    return run_match


_MAKERS = {syntax.ExprStmt: _expr_stmt, syntax.Assign: _assign, syntax.AnnAssign: _ann_assign, syntax.If: _if,
           syntax.While: _while,
           syntax.For: _for, syntax.Try: _try, syntax.With: _with, syntax.Match: _match}
