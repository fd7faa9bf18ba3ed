"""Python's scopes for a script's functions, resolved once before compiling: local, enclosing, global.

As CPython's symbol table does, every name a function binds anywhere in its body is local to the
whole body; a name a function reads without binding it is *free* when an enclosing function binds
it, and global (then builtin) otherwise. A local that a nested function reads is a *cell*: it lives
in a Cell, shared by the function's frame and the closures made in it, so a closure sees the value
the variable has when the closure runs, not when it was made (late binding, as in Python). A
function whose nested functions need a name from further out gets that name as a free variable of
its own, which it passes on.

A lambda is a function whose body is one expression. A comprehension is a scope too, as in Python 3:
its `for` targets are local to it, and it reads the names around it as a nested function would;
only its first iterable is evaluated outside it. An assignment expression (`n := len(xs)`) binds in
the scope it is in, but in a comprehension it binds in the function (or module) around it, as
CPython's symbol table has it; a match statement's patterns bind their names as assignments do.
`global` and `nonlocal` declarations take a name out of a function's locals: a global one is the
module's, for the function and the functions nested in it; a nonlocal one is the enclosing function's
Cell.

A class body is a scope of its own, run once with the class's namespace as its variables: a name it
binds is the class's attribute, a name it reads is looked up in the namespace, then (if an enclosing
function binds it) in that function's Cell, else among the globals and builtins. The functions defined
in a class body do not see its names (a method reads a class attribute through `self` or the class),
so a class scope is skipped when a nested function's free names are resolved; it passes the Cells of
the functions around it on to its methods. A method that calls `super()` (or names `__class__`) reads
the implicit free variable `__class__`, a Cell of the class body that holds the class once it is made.
"""

from __future__ import annotations

from gradcli.errors import ScriptSyntaxError
from gradcli.language import syntax
from gradcli.language.syntaxerrors import Problems


class Cell:
    """One variable shared between a function's frame and its closures. `value` is EMPTY while the
    variable is unbound. Scripts never see a Cell: every read of the variable unwraps it."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


EMPTY = object()
# The prefix of gradcli's own keys in a scope's dict (a class body's Cells, a frame's locals): no Python name has it
CLASS_CELL = "\0"


class Scope:
    """What the compiler needs to know about the names of one function."""

    __slots__ = ("locals", "cells", "frees", "free_set", "parent", "children", "declared_global", "is_class",
                 "node")

    def __init__(self, locals_: frozenset, parent: "Scope | None", is_class: bool = False):
        self.locals = locals_             # every name the function binds
        self.cells: frozenset = frozenset()   # locals that nested functions read (held in Cells)
        self.frees: tuple = ()            # names read from enclosing functions, in closure order
        self.free_set: frozenset = frozenset()
        self.parent = parent
        self.children: dict = {}          # id(nested FunctionDef) -> its Scope
        self.declared_global: frozenset = frozenset()     # names its `global` statements declare
        self.is_class = is_class          # a class body: its names are the class namespace's
        self.node = None                  # the function's syntax node (for varnames, on an error only)

    def varnames(self) -> list:
        """The local variables in CPython's order (co_varnames): the parameters, positional ones first,
        then keyword-only ones, *args and **kwargs, then the other locals as the code first names them.
        A class body has none (its names live in the class namespace)."""
        fn = self.node
        if self.is_class or fn is None:
            return []
        params = list(getattr(fn, "params", ()))
        rank = {"var_positional": 2, "keyword_only": 1, "var_keyword": 3}
        order = [p.name for p in sorted(params, key=lambda p: rank.get(p.kind, 0))]
        if isinstance(fn, syntax.COMPREHENSIONS):
            order = [".0"]
        seen = set(order)
        found = _occurrences(fn) if isinstance(fn, syntax.FunctionDef) else {}
        rest = sorted((n for n in self.locals if n not in seen),
                      key=lambda n: (min(found[n])[:2] if n in found else (1 << 30, 0), n))
        return order + rest

    def kind(self, name: str) -> str:
        """'cell', 'local', 'free' or 'global' for a name used in this function; in a class body,
        'global' (declared so), 'classfree' (read from an enclosing function's Cell unless the namespace
        has it) or 'class' (the namespace, then the globals and builtins)."""
        if self.is_class:
            if name in self.declared_global:
                return "global"
            if name in self.free_set and name not in self.locals:
                return "classfree"
            return "class"
        if name in self.cells:
            return "cell"
        if name in self.locals:
            return "local"
        if name in self.free_set:
            return "free"
        return "global"


def analyze(fn, parent: Scope | None = None, problems: Problems | None = None) -> Scope:
    """The Scope of `fn` (a FunctionDef, a ClassDef, a Lambda or a comprehension) and, through `children`,
    of every function, class, lambda and comprehension nested in it. A declaration that breaks Python's
    rules is noted in `problems` (raised at once without it) and left out."""
    used: set = set()
    nested: list = []
    named: list = []            # the targets of the assignment expressions that bind in this scope
    declared_global: frozenset = frozenset()
    if isinstance(fn, syntax.ClassDef):
        declared_global, declared_nonlocal = _declarations(fn, parent, problems)
        for stmt in fn.body:
            _collect(stmt, used, nested, named)
        scope = Scope(_bound_names(fn.body) - declared_global - declared_nonlocal, parent, is_class=True)
        scope.declared_global = declared_global
        used.update(declared_nonlocal)
    elif isinstance(fn, syntax.COMPREHENSIONS):
        scope = Scope(_comprehension_locals(fn), parent)
        for part in _comprehension_inside(fn):
            _collect(part, used, nested)
        _check_named_in_comprehension(fn, parent, problems)
    elif isinstance(fn, syntax.Lambda):
        _collect(fn.body, used, nested, named)
        scope = Scope(frozenset(p.name for p in fn.params), parent)
    else:
        declared_global, declared_nonlocal = _declarations(fn, parent, problems)
        for stmt in fn.body:
            _collect(stmt, used, nested, named)
        scope = Scope(local_names(fn) - declared_global - declared_nonlocal, parent)
        scope.declared_global = declared_global
        used.update(declared_nonlocal)      # read and written in the enclosing function's Cell
    if named:
        body = fn.body if fn.__class__ is not syntax.Lambda else ()
        declared = declared_global | frozenset(n for st in own_statements(body)
                                               if isinstance(st, syntax.Nonlocal) for n in st.names)
        scope.locals = scope.locals | (frozenset(t.id for t in named) - declared)
    scope.node = fn
    if ("super" in used or "__class__" in used) and not scope.is_class and _in_class(parent):
        used.add("__class__")               # zero-argument super() reads the class being defined
    captured: set = set()
    for child in nested:
        child_scope = analyze(child, scope, problems)
        scope.children[id(child)] = child_scope
        captured.update(child_scope.frees)
    if scope.is_class:
        # its own names are not its methods': it passes on every name they read from further out
        scope.cells = frozenset(captured & {"__class__"})
        frees = sorted(n for n in ((used - scope.locals) | captured) - {"__class__"} - declared_global
                       if _bound_outside(parent, n))
        scope.frees = tuple(frees)
        scope.free_set = frozenset(frees)
        return scope
    scope.cells = frozenset(captured & scope.locals)
    frees = sorted(n for n in (used | captured) - scope.locals - declared_global if _bound_outside(parent, n))
    scope.frees = tuple(frees)
    scope.free_set = frozenset(frees)
    return scope


MODULE_NONLOCAL = "nonlocal declaration not allowed at module level"


def check_module(mod: syntax.Module, problems: Problems) -> None:
    """The module's own `global` statements, checked as CPython checks them (a name the module used or
    assigned before declaring it global); `nonlocal` there is the compiler's to refuse."""
    _declarations(mod, None, problems)


def check_declarations(body: list, problems: Problems) -> None:
    """The declaration checks compiling a module makes, without compiling it (its parse found problems
    already, so it will not run): `nonlocal` outside functions, and every function's declarations."""
    for st in own_statements(body):
        if isinstance(st, syntax.Nonlocal):
            problems.invalid(ScriptSyntaxError(MODULE_NONLOCAL, line=st.line, col=st.col))
    nested: list = []
    for st in body:
        _collect(st, set(), nested)
    for fn in nested:
        analyze(fn, None, problems)


def _declarations(fn, parent: Scope | None, problems: Problems | None) -> tuple:
    """The names `fn` declares `global` and `nonlocal` (its own statements, not its nested functions'),
    checked as CPython's symbol table checks them. For the module, only its `global` statements."""
    def wrong(message: str, where) -> None:
        err = ScriptSyntaxError(message, line=where.line, col=where.col)
        if problems is None:
            raise err
        problems.invalid(err)

    found = {}
    kinds = syntax.Global if fn.__class__ is syntax.Module else (syntax.Global, syntax.Nonlocal)
    for st in own_statements(fn.body):
        if isinstance(st, kinds):
            for name in st.names:
                found.setdefault(name, []).append(st)
    if not found:
        return frozenset(), frozenset()
    params = {p.name for p in getattr(fn, "params", ())}
    occurrences = _occurrences(fn)
    annotated = {(st.target.id, st.target.line, st.target.col) for st in own_statements(fn.body)
                 if st.__class__ is syntax.AnnAssign and st.simple}
    globals_, nonlocals = set(), set()
    for name, statements in found.items():
        first = min(statements, key=lambda s: (s.line, s.col))
        kinds = {type(s) for s in statements}
        word = "global" if syntax.Global in kinds else "nonlocal"
        if len(kinds) == 2:
            wrong(f"name '{name}' is nonlocal and global", first)
            continue
        if name in params:
            wrong(f"name '{name}' is parameter and {word}", first)
            continue
        misplaced = False
        for st in statements:
            earlier = [o for o in occurrences.get(name, ()) if (o[0], o[1]) < (st.line, st.col)]
            if earlier:
                stored = min(earlier)[2]
                if stored and (name, *min(earlier)[:2]) in annotated:
                    wrong(f"annotated name '{name}' can't be {word}", st)
                    misplaced = True
                    break
                what = "is assigned to before" if stored else "is used prior to"
                wrong(f"name '{name}' {what} {word} declaration", st)
                misplaced = True
                break
        if misplaced:
            continue
        if word == "nonlocal" and not _bound_outside(parent, name):
            wrong(f"no binding for nonlocal '{name}' found", first)
            continue
        (globals_ if word == "global" else nonlocals).add(name)
    if fn.__class__ is not syntax.Module:
        for st in own_statements(fn.body):
            if st.__class__ is syntax.AnnAssign and st.simple and st.target.id in (globals_ | nonlocals):
                word = "global" if st.target.id in globals_ else "nonlocal"
                wrong(f"annotated name '{st.target.id}' can't be {word}", st.target)
    return frozenset(globals_), frozenset(nonlocals)


def _occurrences(fn) -> dict:
    """name -> [(line, col, stored)] of every Name in `fn`'s own code (not in its nested scopes)."""
    stores = set()
    for t in _assigned_targets(fn.body):
        stores.add(id(t))
    out: dict = {}
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, syntax.Name):
            out.setdefault(n.id, []).append((n.line, n.col, id(n) in stores))
            continue
        if n.__class__ is syntax.NamedExpr:
            stores.add(id(n.target))
        if isinstance(n, (syntax.FunctionDef, syntax.ClassDef, syntax.Lambda, *syntax.COMPREHENSIONS)):
            continue
        stack.extend(_children(n))
    return out


def _assigned_targets(body: list) -> list:
    """The Name nodes that a function's own statements bind (assignment, loop and with targets, del)."""
    names = []
    for st in own_statements(body):
        if isinstance(st, (syntax.Assign, syntax.Delete)):
            targets = st.targets
        elif isinstance(st, (syntax.AugAssign, syntax.For)):
            targets = [st.target]
        elif isinstance(st, syntax.AnnAssign):
            # `x: int` makes x local though it binds nothing; `(x): int` does not, `(x): int = 1` does
            targets = [st.target] if st.simple or st.value is not None else []
        elif isinstance(st, syntax.With):
            targets = [item.target for item in st.items if item.target is not None]
        else:
            continue
        for t in targets:
            names.extend(_target_nodes(t))
    return names


def _comprehension_locals(comp) -> frozenset:
    return frozenset(n.id for clause in comp.generators for n in _target_nodes(clause.target))


def _comprehension_inside(comp) -> list:
    """What a comprehension evaluates in its own scope: all but its first iterable."""
    first, *rest = comp.generators
    parts = [first.target, *first.ifs]
    for clause in rest:
        parts += [clause.target, clause.iter, *clause.ifs]
    if isinstance(comp, syntax.DictComp):
        return parts + [comp.key, comp.value]
    return parts + [comp.elt]


def _children(node):
    """The syntax nodes directly inside `node`, field by field."""
    for field in node._fields:
        value = getattr(node, field)
        if isinstance(value, syntax.Node):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, syntax.Node))


def _target_nodes(t):
    """The Name nodes an assignment target binds (a name, or a tuple or list of targets, one of which
    may be starred)."""
    if isinstance(t, syntax.Name):
        yield t
    elif isinstance(t, (syntax.Tuple, syntax.List)):
        for e in t.elts:
            yield from _target_nodes(e)
    elif isinstance(t, syntax.Starred):
        yield from _target_nodes(t.value)


def _in_class(scope: Scope | None) -> bool:
    while scope is not None:
        if scope.is_class:
            return True
        scope = scope.parent
    return False


def _bound_outside(scope: Scope | None, name: str) -> bool:
    """Whether an enclosing function binds `name` (a function that declares it global ends the search:
    inside it, and in the functions nested in it, the name is the module's). Class bodies are passed
    over, but for the `__class__` they give their methods."""
    while scope is not None:
        if scope.is_class:
            if name == "__class__":
                return True
            scope = scope.parent
            continue
        if name in scope.declared_global:
            return False
        if name in scope.locals:
            return True
        scope = scope.parent
    return False


def _collect(node, used: set, nested: list, named: list | None = None) -> None:
    """Every name `node` mentions, outside the bodies of functions defined in it (which are listed in
    `nested`; their parameters' defaults are evaluated here, so those count); in `named`, the targets of
    the assignment expressions that bind in the scope `node` is in, those in its comprehensions included."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, syntax.Name):
            used.add(n.id)
            continue
        if n.__class__ is syntax.NamedExpr and named is not None:
            named.append(n.target)
        if isinstance(n, (syntax.FunctionDef, syntax.Lambda)):
            nested.append(n)
            stack.extend(p.default for p in n.params if p.default is not None)
            if n.__class__ is syntax.FunctionDef:
                stack.extend(n.decorators)      # evaluated where the def is, as are its annotations
                stack.extend(p.annotation for p in n.params if p.annotation is not None)
                if n.returns is not None:
                    stack.append(n.returns)
            continue
        if isinstance(n, syntax.ClassDef):
            nested.append(n)
            stack.extend(n.decorators)
            stack.extend(n.bases)
            continue
        if isinstance(n, syntax.COMPREHENSIONS):
            nested.append(n)
            stack.append(n.generators[0].iter)      # evaluated where the comprehension is
            if named is not None:
                named.extend(e.target for e in _named_in(_comprehension_inside(n), True))
            continue
        stack.extend(_children(n))


def _named_in(nodes: list, through_comprehensions: bool) -> list:
    """The assignment expressions in `nodes`, not those in the functions, lambdas and classes defined
    there; those in comprehensions too if `through_comprehensions`."""
    out = []
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n.__class__ is syntax.NamedExpr:
            out.append(n)
        elif isinstance(n, (syntax.FunctionDef, syntax.Lambda, syntax.ClassDef)):
            continue
        elif not through_comprehensions and isinstance(n, syntax.COMPREHENSIONS):
            continue
        stack.extend(_children(n))
    return out


def named_expressions(node) -> list:
    """The assignment expressions in an expression (those in its comprehensions too), outermost first."""
    return sorted(_named_in([node], True), key=lambda n: (n.target.line, n.target.col))


def _check_named_in_comprehension(comp, parent: Scope | None, problems: Problems | None) -> None:
    """CPython's symbol-table errors for assignment expressions in a comprehension, in the order it visits
    the comprehension: the first iterable, then each clause's target, iterable and conditions, then the
    element. (Nested comprehensions check their own when they are analysed, seeing this one's targets.)"""
    def wrong(message: str, where) -> None:
        err = ScriptSyntaxError(message, line=where.line, col=where.col)
        if problems is None:
            raise err
        problems.invalid(err)

    outer, enclosing = parent, set()
    while outer is not None and isinstance(outer.node, syntax.COMPREHENSIONS):
        enclosing |= outer.locals
        outer = outer.parent
    in_class = outer is not None and outer.is_class
    iteration, targets = set(), set()

    def visit(part, iterable: bool) -> None:
        for named in _named_in([part], iterable):
            name, where = named.target.id, named.target
            if iterable:
                wrong("assignment expression cannot be used in a comprehension iterable expression", where)
            elif name in iteration or name in enclosing:
                wrong(f"assignment expression cannot rebind comprehension iteration variable '{name}'", where)
            elif in_class:
                wrong("assignment expression within a comprehension cannot be used in a class body", where)
            else:
                targets.add(name)

    visit(comp.generators[0].iter, True)
    for i, clause in enumerate(comp.generators):
        for t in _target_nodes(clause.target):
            if t.id in targets:
                wrong(f"comprehension inner loop cannot rebind assignment expression target '{t.id}'", t)
            iteration.add(t.id)
        if i:
            visit(clause.iter, True)
        for condition in clause.ifs:
            visit(condition, False)
    for part in ([comp.key, comp.value] if isinstance(comp, syntax.DictComp) else [comp.elt]):
        visit(part, False)


def local_names(fn: syntax.FunctionDef) -> frozenset:
    """Names a function binds (parameters of every kind, *args and **kwargs included, assignment and loop
    targets, starred ones included, imports, nested defs and classes, `del`): Python treats every such
    name as local to the whole function body."""
    return frozenset(p.name for p in fn.params) | _bound_names(fn.body)


def _bound_names(body: list) -> frozenset:
    """Names a function's or a class's own statements bind."""
    names = {t.id for t in _assigned_targets(body)}
    for st in own_statements(body):
        if isinstance(st, (syntax.FunctionDef, syntax.ClassDef)):
            names.add(st.name)
        elif isinstance(st, syntax.Import):
            names.add(st.alias or st.module.split(".")[0])
        elif isinstance(st, syntax.ImportFrom):
            for name, alias in st.names:
                names.add(alias or name)
        elif isinstance(st, syntax.Try):
            names.update(h.name for h in st.handlers if h.name is not None)
        elif isinstance(st, syntax.Match):
            for case in st.cases:
                names.update(pattern_names(case.pattern))
    return frozenset(names)


def pattern_names(pattern) -> list:
    """The names a match statement's pattern binds (captures, `as` names, `*rest`, `**rest`)."""
    out = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        kind = p.__class__
        if kind is syntax.MatchAs or kind is syntax.MatchStar:
            if p.name is not None:
                out.append(p.name)
            if kind is syntax.MatchAs and p.pattern is not None:
                stack.append(p.pattern)
        elif kind is syntax.MatchMapping:
            if p.rest is not None:
                out.append(p.rest)
            stack.extend(p.patterns)
        elif kind is syntax.MatchSequence or kind is syntax.MatchOr:
            stack.extend(p.patterns)
        elif kind is syntax.MatchClass:
            stack.extend(p.patterns)
            stack.extend(p.kwd_patterns)
    return out


def own_statements(body: list):
    """Every statement of a function's own code: its body and the blocks of its compound statements,
    not the bodies of the functions and classes it defines."""
    stack = list(body)
    while stack:
        st = stack.pop()
        yield st
        if isinstance(st, (syntax.For, syntax.While, syntax.If)):
            stack.extend(st.body)
            stack.extend(st.orelse)
        elif isinstance(st, syntax.With):
            stack.extend(st.body)
        elif isinstance(st, syntax.Match):
            for case in st.cases:
                stack.extend(case.body)
        elif isinstance(st, syntax.Try):
            stack.extend(st.body)
            stack.extend(st.orelse)
            stack.extend(st.finalbody)
            for handler in st.handlers:
                stack.extend(handler.body)
