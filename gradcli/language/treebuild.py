"""The tree builder: the Lark callbacks that turn reduced rules into syntax nodes, and the checks made on them."""

from __future__ import annotations

from collections.abc import Callable

from gradcli.language.lexer import Token
from gradcli.language.strings import string_literal
from gradcli.language.syntax import (
    AnnAssign, Assert, Assign, Attribute, AugAssign, BinOp, BoolOp, Break, Call, ClassDef, Compare, Comprehension,
    Constant, Continue,
    Delete, Dict, DictComp, ExceptHandler, ExprStmt, GeneratorExp, Global, Lambda, ListComp, Match, MatchAs,
    MatchCase, MatchClass, MatchMapping, MatchOr, MatchSequence, MatchSingleton, MatchStar, MatchValue, NamedExpr,
    Nonlocal, Raise,
    SetComp, Try, For, FunctionDef, If, IfExp, Import, ImportFrom, JoinedStr, Keyword, List,
    Module, Name, Node, Param, Pass, Return, Set, Slice, Starred, Subscript, Tuple, UnaryOp, While, With,
    WithItem, Yield, YieldFrom,
)
from gradcli.language.classes import CLASS_DUNDERS, SPECIAL_METHODS, is_dunder
from gradcli.language.syntaxerrors import Problems, error_at

_new = object.__new__


def _flatten(items: list) -> list:
    out = []
    for item in items:
        if type(item) is list:
            out.extend(item)
        else:
            out.append(item)
    return out


def _orelse(branch) -> list:
    """The else part of an if: an elif's If node, an else block's children, or nothing."""
    if branch is None:
        return []
    if type(branch) is If:
        return [branch]
    return branch[2]        # else_block's children: "else" ":" block


_WHAT = {Call: "a function call", Constant: "a literal", JoinedStr: "an f-string", BinOp: "an expression",
         UnaryOp: "an expression", BoolOp: "an expression", Compare: "a comparison",
         IfExp: "a conditional expression", Slice: "a slice", Tuple: "a tuple", List: "a list",
         Dict: "a dict literal", Set: "a set display", Starred: "a starred expression",
         NamedExpr: "a named expression"}


def _what(node) -> str:
    if type(node) is Constant and (node.value is None or node.value is True or node.value is False):
        return str(node.value)
    if type(node) is Constant and node.value is Ellipsis:
        return "'...'"
    return _WHAT.get(type(node), "an expression")


# CPython's names for expressions in its messages about targets (_PyPegen_get_expr_name)
_EXPR_NAMES = {Attribute: "attribute", Subscript: "subscript", Tuple: "tuple", List: "list", Call: "function call",
               BinOp: "expression", BoolOp: "expression", UnaryOp: "expression", Compare: "comparison",
               IfExp: "conditional expression", Lambda: "lambda", NamedExpr: "named expression",
               JoinedStr: "f-string expression", Starred: "starred", Dict: "dict literal", Set: "set display",
               ListComp: "list comprehension", SetComp: "set comprehension", DictComp: "dict comprehension",
               GeneratorExp: "generator expression", Yield: "yield expression", YieldFrom: "yield expression"}


def _expr_name(node) -> str:
    if type(node) is Constant:
        value = node.value
        if value is None or value is True or value is False:
            return str(value)
        return "ellipsis" if value is Ellipsis else "literal"
    return _EXPR_NAMES.get(type(node), "expression")


def _check_target(node, verb: str, where, problems: Problems) -> None:
    """Targets are names, attributes, subscripts, and tuples or lists of targets, of which one may be
    starred (`first, *rest = xs`); a starred target stands only inside a tuple or list."""
    kind = type(node)
    if kind is Name or kind is Attribute or kind is Subscript:
        return
    if kind is Tuple or kind is List:
        starred = False
        for elt in node.elts:
            if type(elt) is Starred:
                if verb == "delete":
                    problems.invalid(error_at("cannot delete starred", elt))
                if starred:
                    problems.invalid(error_at("multiple starred expressions in assignment", node))
                starred = True
                _check_target(elt.value, verb, where, problems)
            else:
                _check_target(elt, verb, where, problems)
        return
    if kind is Starred:
        if verb == "delete":
            problems.invalid(error_at("cannot delete starred", node))
        else:
            problems.invalid(error_at("starred assignment target must be in a list or tuple", node))
        return
    problems.invalid(error_at(f"cannot {verb} {_what(node)}", where if where is not None else node))


def _check_context(body: list, in_function: bool, in_loop: bool, problems: Problems) -> None:
    """return only in a def, break and continue only in a loop: SyntaxErrors in Python too."""
    for stmt in body:
        kind = type(stmt)
        if kind is Return and not in_function:
            problems.invalid(error_at("'return' outside function", stmt))
        elif kind is Break and not in_loop:
            problems.invalid(error_at("'break' outside loop", stmt))
        elif kind is Continue and not in_loop:
            problems.invalid(error_at("'continue' not properly in loop", stmt))
        elif kind is FunctionDef:
            _check_context(stmt.body, True, False, problems)
        elif kind is ClassDef:
            _check_context(stmt.body, False, False, problems)      # a class body is neither a function nor a loop
        elif kind is For or kind is While:
            _check_context(stmt.body, in_function, True, problems)
            _check_context(stmt.orelse, in_function, in_loop, problems)     # a loop's else is outside it
        elif kind is If:
            _check_context(stmt.body, in_function, in_loop, problems)
            _check_context(stmt.orelse, in_function, in_loop, problems)
        elif kind is With:
            _check_context(stmt.body, in_function, in_loop, problems)
        elif kind is Match:
            for case in stmt.cases:
                _check_context(case.body, in_function, in_loop, problems)
        elif kind is Try:
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *[h.body for h in stmt.handlers]):
                _check_context(block, in_function, in_loop, problems)


def _check_class_body(body: list, problems: Problems) -> None:
    """A class body may define the special methods of SPECIAL_METHODS and no other dunder name."""
    for stmt in body:
        if type(stmt) is FunctionDef:
            names = [(stmt.name, stmt)]
        elif type(stmt) is Assign:
            names = [(t.id, t) for t in stmt.targets if type(t) is Name]
        elif type(stmt) is AnnAssign and type(stmt.target) is Name:
            names = [(stmt.target.id, stmt.target)]
        else:
            continue
        for name, where in names:
            if is_dunder(name) and name not in SPECIAL_METHODS and name not in CLASS_DUNDERS:
                problems.refuse(f"defining {name} in a class is", where)


def private_prefix(class_name: str):
    """What Python puts before a private name (`__x`) used in the class `class_name`: `_Net` for Net and
    _Net; None for a name of underscores only, whose private names stay as they are."""
    stripped = class_name.lstrip("_")
    return "_" + stripped if stripped else None


def _mangled(name: str, prefix: str) -> str:
    if name[:2] == "__" and name[-2:] != "__":
        return prefix + name
    return name


def _mangle(body: list, prefix: str) -> None:
    """Python's private names: in a class body, and in the functions in it, every identifier `__x` (not
    ending in `__`) that a name, attribute, parameter, def, class, except or global/nonlocal statement
    spells is `_Class__x`. A nested class's body has its own prefix (given when it was built, before its
    enclosing class's); keyword argument names are not mangled, as in Python."""
    stack = list(body)
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is Name:
            n.id = _mangled(n.id, prefix)
            continue
        if kind is Attribute:
            n.attr = _mangled(n.attr, prefix)
        elif kind is Param or kind is FunctionDef:
            n.name = _mangled(n.name, prefix)
        elif kind is ClassDef:
            n.name = _mangled(n.name, prefix)
            stack.extend(n.bases)
            stack.extend(n.decorators)
            continue
        elif kind is Global or kind is Nonlocal:
            n.names = [_mangled(x, prefix) for x in n.names]
        elif kind is ExceptHandler and n.name is not None:
            n.name = _mangled(n.name, prefix)
        for field in n._fields:
            value = getattr(n, field)
            if isinstance(value, Node):
                stack.append(value)
            elif type(value) is list:
                stack.extend(v for v in value if isinstance(v, Node))


def _element(node):
    """The element of a list or set comprehension or a generator expression: never starred."""
    if type(node) is Starred:
        raise error_at("iterable unpacking cannot be used in comprehension", node)
    return node


def _loop_else(orelse) -> list:
    """The statements of a loop's `else:` block (the else_block's children: "else" ":" block), or []."""
    return orelse[2] if orelse is not None else []


def _module(names: list) -> str:
    """The dotted name of an import. Modules outside the language are refused when the import runs
    (an ImportError, as Python raises for a missing module), see compiler.outside_import."""
    return ".".join(t.value for t in names)


# ================================================================ match statements and their patterns

_SINGLETONS = {"None": None, "True": True, "False": False}


class PatternBuilder:
    """The tree builder's methods for match statements and their patterns (mixed into Builder), with the
    checks CPython's compiler makes on patterns."""

    # ---------------------------------------------------------------- the statement
    def match_stmt(self, c):
        tok, subject = c[0], c[1]
        cases = [x for x in c[2:] if type(x) is MatchCase]
        last = len(cases) - 1
        for i, case in enumerate(cases):
            # CPython's compiler: an irrefutable pattern (without a guard) before the last case hides the rest
            self._check_pattern(case.pattern, case.guard is not None or i == last, set())
        return Match(subject, cases, tok.line, tok.col)

    def subject_tuple(self, c):
        first, rest = c
        elts = [first, *(rest or [])]
        return Tuple(elts, first.line, first.col)

    def case_block(self, c):
        tok, pattern = c[0], c[1]
        guard = next((x for x in c[2:-1] if x is not None and type(x) is not Token), None)
        return MatchCase(pattern, guard, c[-1], tok.line, tok.col)

    # ---------------------------------------------------------------- patterns
    def open_sequence_pattern(self, c):
        first, rest = c
        start = self._start(first)
        return MatchSequence([first, *(rest or [])], start.line, start.col)

    def maybe_sequence_pattern(self, c):
        return c

    def as_pattern(self, c):
        pattern, name = c
        if name.value == "_":
            self.problems.invalid(error_at("cannot use '_' as a target", name))
        start = self._start(pattern)
        return MatchAs(pattern, name.value, start.line, start.col)

    def or_pattern(self, c):
        start = self._start(c[0])
        return MatchOr(c, start.line, start.col)

    def capture_pattern(self, c):
        tok = c[0]
        return MatchAs(None, None if tok.value == "_" else tok.value, tok.line, tok.col)

    def value_pattern(self, c):
        node = c[0]
        return MatchValue(node, node.line, node.col)

    def group_pattern(self, c):
        # (p) is p, at p's own place (CPython's errors point inside the parentheses); a pattern that starts
        # with it (`(1 | 2) as n`) starts at the '('
        self.pattern_groups[id(c[1])] = c[0]
        return c[1]

    def _start(self, p):
        """The token or node where a pattern that begins with `p` begins."""
        return self.pattern_groups.get(id(p), p)

    def list_pattern(self, c):
        return MatchSequence(c[1] or [], c[0].line, c[0].col)

    def tuple_pattern(self, c):
        # "(" ")" or "(" first "," [rest] ")"
        elts = [] if len(c) == 2 else [c[1], *(c[3] or [])]
        return MatchSequence(elts, c[0].line, c[0].col)

    def star_pattern(self, c):
        tok, name = c
        return MatchStar(None if name.value == "_" else name.value, tok.line, tok.col)

    def mapping_pattern(self, c):
        brace, items = c[0], c[1] or []
        keys, patterns, rest = [], [], None
        for item in items:
            if rest is not None:        # `**rest` must come last: CPython's parser stops at what follows
                self.problems.invalid(error_at("invalid syntax", item[0]))
                break
            if type(item) is list:      # double_star_pattern
                if item[1].value == "_":
                    self.problems.invalid(error_at("invalid syntax", item[1]))
                rest = item[1].value
            else:
                keys.append(item[0])
                patterns.append(item[1])
        node = MatchMapping(keys, patterns, rest, brace.line, brace.col)
        seen = {}
        for key in keys:
            if type(key) is Constant:
                if key.value in seen:
                    self.problems.invalid(error_at(f"mapping pattern checks duplicate key ({key.value!r})", node))
                    break
                seen[key.value] = key
        return node

    def mapping_items(self, c):
        return c

    def key_value_pattern(self, c):
        key, pattern = c
        if type(key) is MatchValue:
            key = key.value
        elif type(key) is MatchSingleton:
            key = Constant(key.value, key.line, key.col)
        return key, pattern

    def double_star_pattern(self, c):
        return list(c)          # ["**", NAME]: a list tells it from a (key, pattern) pair (mapping_pattern)

    def class_pattern(self, c):
        cls, arguments = c[0], c[2] or []
        positional, names, keywords = [], [], []
        for arg in arguments:
            if type(arg) is tuple:
                name, pattern = arg
                if name.value in names:
                    self.problems.invalid(error_at(f"attribute name repeated in class pattern: {name.value}",
                                                   pattern))
                names.append(name.value)
                keywords.append(pattern)
            elif keywords:
                self.problems.invalid(error_at("positional patterns follow keyword patterns", arg))
            else:
                positional.append(arg)
        return MatchClass(cls, positional, names, keywords, cls.line, cls.col)

    def pattern_arguments(self, c):
        return c

    def keyword_pattern(self, c):
        return c[0], c[1]

    def attr(self, c):
        value, name = c
        return Attribute(value, name.value, value.line, value.col)

    # ---------------------------------------------------------------- literals
    def number_pattern(self, c):
        number = c[0]
        return MatchValue(number, number.line, number.col)

    def complex_pattern(self, c):
        real, sign, imaginary = c
        if isinstance(real.value, complex):         # (CPython checks the real part first)
            self.problems.invalid(error_at("real number required in complex literal", real))
        elif imaginary.type != "IMAG_NUMBER":
            self.problems.invalid(error_at("imaginary number required in complex literal", imaginary))
        else:       # a sum, as CPython's tree has it (its value is computed when the pattern is compiled)
            value = BinOp(real, "add" if sign.value == "+" else "sub", self.imaginary([imaginary]), real.line, real.col)
            return MatchValue(value, real.line, real.col)
        return MatchValue(real, real.line, real.col)

    def signed_number(self, c):
        tok = c[-1]
        if tok.type == "IMAG_NUMBER":
            node = self.imaginary([tok])
        elif tok.type == "INT_NUMBER":
            node = self.integer([tok])
        else:
            node = self.float_number([tok])
        if len(c) == 2:
            node.value = -node.value
            node.line, node.col = c[0].line, c[0].col
        return node

    def string_pattern(self, c):
        node = self.strings(c)
        if type(node) is JoinedStr:
            self.problems.invalid(error_at("patterns may only match literals and attribute lookups", node))
            node = Constant("", node.line, node.col)
        return MatchValue(node, node.line, node.col)

    def singleton_pattern(self, c):
        tok = c[0]
        return MatchSingleton(_SINGLETONS[tok.value], tok.line, tok.col)

    # ---------------------------------------------------------------- CPython's compile-time checks
    def _check_pattern(self, p, allow_irrefutable: bool, bound: set) -> None:
        """The names a pattern binds go in `bound`; what CPython's compiler refuses is noted: a name
        bound twice, alternatives binding different names, an irrefutable pattern that hides others,
        two starred names in one sequence."""
        kind = type(p)
        if kind is MatchAs:
            if p.pattern is None:
                if not allow_irrefutable:
                    what = f"name capture {p.name!r}" if p.name is not None else "wildcard"
                    self.problems.invalid(error_at(f"{what} makes remaining patterns unreachable", p))
            else:
                self._check_pattern(p.pattern, allow_irrefutable, bound)
            if p.name is not None:
                self._bind(p.name, p, bound)
        elif kind is MatchOr:
            names = None
            last = len(p.patterns) - 1
            for i, alt in enumerate(p.patterns):
                alt_bound = set(bound)
                self._check_pattern(alt, allow_irrefutable and i == last, alt_bound)
                if names is None:
                    names = alt_bound
                elif alt_bound != names:
                    self.problems.invalid(error_at("alternative patterns bind different names", alt))
            bound |= names
        elif kind is MatchSequence:
            stars = [x for x in p.patterns if type(x) is MatchStar]
            if len(stars) > 1:
                self.problems.invalid(error_at("multiple starred names in sequence pattern", p))
            for sub in p.patterns:
                if type(sub) is MatchStar:
                    if sub.name is not None:
                        self._bind(sub.name, sub, bound)
                else:
                    self._check_pattern(sub, True, bound)
        elif kind is MatchMapping:
            for sub in p.patterns:
                self._check_pattern(sub, True, bound)
            if p.rest is not None:
                self._bind(p.rest, p, bound)
        elif kind is MatchClass:
            for sub in p.patterns + p.kwd_patterns:
                self._check_pattern(sub, True, bound)

    def _bind(self, name: str, where, bound: set) -> None:
        if name in bound:
            self.problems.invalid(error_at(f"multiple assignments to name {name!r} in pattern", where))
        bound.add(name)


# ================================================================ the tree builder

class Builder(PatternBuilder):
    """The tree builder: one method per grammar rule or alias, building syntax nodes.

    The parser (gradcli.language.parser) calls each method with the rule's children as soon as it
    reduces the rule, tokens included where the grammar keeps them (`!` rules), None for absent
    optionals, as Lark's own tree building would pass them. A check that fails notes its error in
    `problems` (set by the parser for each parse) and the tree is built on, so that one run reports
    all of them.
    """

    def __init__(self, parse_fragment: Callable):
        self.parse_fragment = parse_fragment    # (text, line, col) -> node, for f-string fields
        self.problems = Problems()
        self.yields = 0                         # Yield nodes made since the last module (Module.yields)
        self.parenthesized = set()              # ids of the Names written in parentheses: `(x): int` records nothing
        self.pattern_groups = {}                # id of a pattern written in parentheses -> its '(' token

    # ---------------------------------------------------------------- module and blocks
    def file_input(self, c):
        body = _flatten(c)
        _check_context(body, False, False, self.problems)
        module = Module(body, 1, 1)
        module.yields, self.yields = self.yields, 0
        self.parenthesized.clear()
        self.pattern_groups.clear()
        return module

    def fstring_expr(self, c):
        if type(c[0]) is Starred:          # f"{*a}": a field is one value (f"{*a,}" is a tuple)
            raise error_at("f-string: cannot use starred expression here", c[0])
        return c[0]

    def simple_stmts(self, c):
        if len(c) == 1 and type(c[0]) is not list:     # one statement on the line: most lines
            return c
        return _flatten(c)

    def block(self, c):
        return _flatten(c)

    # ---------------------------------------------------------------- simple statements
    def expr_stmt(self, c):
        value = c[0]
        return ExprStmt(value, value.line, value.col)

    def assign(self, c):
        targets = c[0:-1:2]
        for target, equals in zip(targets, c[1:-1:2]):
            _check_target(target, "assign to", equals, self.problems)
        first = targets[0]
        return Assign(targets, c[-1], first.line, first.col)

    def aug_assign(self, c):
        target, (op, tok), value = c
        if type(target) not in (Name, Attribute, Subscript):
            self.problems.invalid(error_at(f"cannot use augmented assignment ('{tok.value}') on {_what(target)}",
                                           tok))
        return AugAssign(target, op, value, target.line, target.col)

    def ann_assign(self, c):
        # target ":" annotation ["=" value]
        target, colon, annotation = c[0], c[1], c[2]
        value = c[4] if len(c) > 3 else None
        kind = type(target)
        if kind is Tuple or kind is List:
            self.problems.invalid(error_at(
                f"only single target (not {'tuple' if kind is Tuple else 'list'}) can be annotated", target))
        elif kind is Starred:
            self.problems.invalid(error_at("invalid syntax", colon))
        elif kind is not Name and kind is not Attribute and kind is not Subscript:
            self.problems.invalid(error_at("illegal target for annotation", target))
        simple = kind is Name and id(target) not in self.parenthesized
        return AnnAssign(target, annotation, value, simple, target.line, target.col)

    # fmt: off
    def iadd(self, c):      return "add", c[0]
    def isub(self, c):      return "sub", c[0]
    def imul(self, c):      return "mul", c[0]
    def itruediv(self, c):  return "truediv", c[0]
    def imatmul(self, c):   return "matmul", c[0]
    def ifloordiv(self, c): return "floordiv", c[0]
    def imod(self, c):      return "mod", c[0]
    def ipow(self, c):      return "pow", c[0]
    def ilshift(self, c):   return "lshift", c[0]
    def irshift(self, c):   return "rshift", c[0]
    def iand(self, c):      return "and_", c[0]
    def ior(self, c):       return "or_", c[0]
    def ixor(self, c):      return "xor", c[0]
    # fmt: on

    def return_stmt(self, c):
        tok, value = c
        return Return(value, tok.line, tok.col)

    def global_stmt(self, c):
        return Global([t.value for t in c[1::2]], c[0].line, c[0].col)

    def nonlocal_stmt(self, c):
        return Nonlocal([t.value for t in c[1::2]], c[0].line, c[0].col)

    def pass_stmt(self, c):
        return Pass(c[0].line, c[0].col)

    def break_stmt(self, c):
        return Break(c[0].line, c[0].col)

    def continue_stmt(self, c):
        return Continue(c[0].line, c[0].col)

    def del_stmt(self, c):
        tok, targets = c
        for target in targets:
            _check_target(target, "delete", None, self.problems)
        return Delete(targets, tok.line, tok.col)

    def del_targets(self, c):
        return [x for x in c[0::2] if x is not None]

    def assert_stmt(self, c):
        tok, test, _, msg = c
        return Assert(test, msg, tok.line, tok.col)

    def import_name(self, c):
        tok = c[0]
        # `import torch, math` makes one Import per module; the enclosing block flattens the list.
        return [Import(_module(names), alias, tok.line, tok.col) for names, alias in c[1::2]]

    def dotted_as_name(self, c):
        names, alias = c
        return names, (alias.value if alias is not None else None)

    def dotted_name(self, c):
        return c

    def import_from(self, c):
        tok, names, _, items = c
        return ImportFrom(_module(names), items, tok.line, tok.col)

    def import_from_as_names(self, c):
        return c

    def import_from_as_name(self, c):
        name, alias = c
        return name.value, (alias.value if alias is not None else None)

    # ---------------------------------------------------------------- compound statements
    def function_def(self, c):
        tok, name, _, params, _, _, returns, _, body = c
        return FunctionDef(name.value, params or [], body, [], returns, tok.line, tok.col)

    def class_def(self, c):
        tok, name, _, arguments, _, _, body = c
        bases, keywords = arguments if arguments is not None else ([], [])
        for keyword in keywords:        # the keywords stay with the bases: `metaclass=M` for gradcli.language.classes,
            if keyword.name is None:    # the others for the bases' __init_subclass__
                self.problems.refuse("`**` in a class's keywords is", keyword)
        bases = bases + list(keywords)
        _check_class_body(body, self.problems)
        prefix = private_prefix(name.value)
        if prefix is not None:
            _mangle(body, prefix)
        return ClassDef(name.value, bases, body, [], tok.line, tok.col)

    def decorated(self, c):
        *decorators, definition = c
        definition.decorators = decorators
        return definition

    def decorator(self, c):
        return c[1]

    def yield_(self, c):
        tok, value = c
        self.yields += 1
        return Yield(value, tok.line, tok.col)

    def yield_from(self, c):
        tok, _, value = c
        self.yields += 1
        return YieldFrom(value, tok.line, tok.col)

    def lambdef(self, c):
        tok, params, _, body = c
        return Lambda(params or [], body, tok.line, tok.col)

    def lambda_params(self, c):
        return self.params(c)

    def lambda_param(self, c):
        name, default = c
        return Param(name.value, default, "positional", None, name.line, name.col)

    def lambda_star_param(self, c):
        tok, name, equals, _ = c
        return self._star_param(tok, name, None, equals)

    def lambda_double_star_param(self, c):
        tok, name, equals, _ = c
        return self._double_star_param(name, None, equals)

    def params(self, c):
        """The Params in order, each with its kind, from the items of a parameter list: Params, the
        tokens of `/` and of a bare `*`, and (token, Param) for *args; checked in CPython's words."""
        out = []
        seen = set()
        defaults = False
        star = None             # the token of a bare `*` or of *args, once it has come
        bare_star = False
        var_keyword = False
        for item in c:
            if var_keyword:
                self.problems.invalid(error_at("arguments cannot follow var-keyword argument",
                                               item[0] if type(item) is tuple else item))
            if type(item) is tuple or type(item) is not Param and item.value == "*":
                tok, param = item if type(item) is tuple else (item, None)
                if star is not None:
                    self.problems.invalid(error_at("* argument may appear only once", tok))
                star, bare_star = tok, param is None
                if param is None:
                    continue
                item = param
            elif type(item) is not Param:       # `/`
                wrong = ("/ may appear only once" if any(p.kind == "positional_only" for p in out) else
                         "/ must be ahead of *" if star is not None else
                         "at least one argument must precede /" if not out else None)
                if wrong is not None:
                    self.problems.invalid(error_at(wrong, item))
                    continue
                for param in out:
                    param.kind = "positional_only"
                continue
            if item.name in seen:
                self.problems.invalid(error_at(f"duplicate argument '{item.name}' in function definition", item))
            seen.add(item.name)
            if item.kind == "var_keyword":
                var_keyword = True
            elif item.kind == "positional" and star is not None:
                item.kind = "keyword_only"
            elif item.kind == "positional":
                if item.default is not None:
                    defaults = True
                elif defaults:
                    self.problems.invalid(error_at("non-default argument follows default argument", item))
            out.append(item)
        if bare_star and not any(p.kind == "keyword_only" for p in out):
            self.problems.invalid(error_at("named arguments must follow bare *", star))
        return out

    def param(self, c):
        name, annotation, default = c
        return Param(name.value, default, "positional", annotation, name.line, name.col)

    def star_param(self, c):
        # "*" [NAME [":" expression] ["=" expression]]: a bare `*` (its token), or *args as (token, Param)
        tok, name, _, annotation, equals, _ = c
        return self._star_param(tok, name, annotation, equals)

    def double_star_param(self, c):
        tok, name, _, annotation, equals, _ = c
        return self._double_star_param(name, annotation, equals)

    def _star_param(self, tok, name, annotation, equals):
        if name is None:
            return tok
        if equals is not None:
            self.problems.invalid(error_at("var-positional argument cannot have default value", equals))
        return tok, Param(name.value, None, "var_positional", annotation, name.line, name.col)

    def _double_star_param(self, name, annotation, equals):
        if equals is not None:
            self.problems.invalid(error_at("var-keyword argument cannot have default value", equals))
        return Param(name.value, None, "var_keyword", annotation, name.line, name.col)

    def slash(self, c):
        return c[0]

    def if_stmt(self, c):
        tok, test, _, body, orelse = c
        return If(test, body, _orelse(orelse), tok.line, tok.col)

    elif_stmt = if_stmt

    def else_block(self, c):
        return c

    def for_stmt(self, c):
        tok, target, _, iterable, _, body, orelse = c
        _check_target(target, "assign to", None, self.problems)
        return For(target, iterable, body, _loop_else(orelse), tok.line, tok.col)

    def while_stmt(self, c):
        tok, test, _, body, orelse = c
        return While(test, body, _loop_else(orelse), tok.line, tok.col)

    def try_stmt(self, c):
        tok, body = c[0], c[2]
        handlers = [h for h in c[3:] if type(h) is ExceptHandler]
        orelse = finalbody = []
        for part in c[3:]:
            if type(part) is list and part and getattr(part[0], "value", None) == "else":
                orelse = part[2]
            elif type(part) is tuple:
                finalbody = part[1]
        for h in handlers[:-1]:
            if h.type is None:
                self.problems.invalid(error_at("default 'except:' must be last", h))
        return Try(body, handlers, orelse, finalbody, tok.line, tok.col)

    def except_clause(self, c):
        # "except" [expression ["as" NAME]] ":" block; absent parts are None
        tok, kind, body = c[0], c[1], c[-1]
        names = [t for t in c[2:-1] if t is not None and getattr(t, "type", None) == "NAME"]
        return ExceptHandler(kind, names[0].value if names else None, body, tok.line, tok.col)

    def finally_block(self, c):
        return ("finally", c[2])

    def raise_stmt(self, c):
        tok, exc, cause = c[0], c[1] if len(c) > 1 else None, c[3] if len(c) > 3 else None
        return Raise(exc, cause, tok.line, tok.col)

    def with_stmt(self, c):
        tok = c[0]
        items = [item for item in c if type(item) is WithItem]
        if len(items) == 1 and items[0].target is None and type(items[0].context) is Tuple and items[0].context.elts:
            # `with (a, b):` holds two context managers, as in Python 3.10+, not a tuple.
            items = [WithItem(e, None, e.line, e.col) for e in items[0].context.elts]
        return With(items, c[-1], tok.line, tok.col)

    def with_item(self, c):
        context, target = c
        if target is not None:
            _check_target(target, "assign to", None, self.problems)
        return WithItem(context, target, context.line, context.col)

    def target_list(self, c):
        # c is [t1, ",", t2, ..., "," or None]: a comma anywhere makes a tuple, as in `for x, in xs`.
        if c[1] is None:
            return c[0]
        elts = [x for x in c[0::2] if x is not None]
        return Tuple(elts, elts[0].line, elts[0].col)

    # ---------------------------------------------------------------- expressions
    def tuple(self, c):
        return Tuple(c, c[0].line, c[0].col)

    def named_expr(self, c):
        target, value = c
        if type(target) is not Name:
            self.problems.invalid(error_at(f"cannot use assignment expressions with {_expr_name(target)}", target))
        return NamedExpr(target, value, target.line, target.col)

    def if_exp(self, c):
        body, test, orelse = c
        return IfExp(test, body, orelse, body.line, body.col)

    def disjunction(self, c):
        return BoolOp("or", c, c[0].line, c[0].col)

    def conjunction(self, c):
        return BoolOp("and", c, c[0].line, c[0].col)

    def not_(self, c):
        return UnaryOp("not_", c[1], c[0].line, c[0].col)

    def comparison(self, c):
        left = c[0]
        return Compare(left, c[1::2], c[2::2], left.line, left.col)

    # fmt: off
    def lt(self, c):        return "lt"
    def gt(self, c):        return "gt"
    def eq(self, c):        return "eq"
    def ne(self, c):        return "ne"
    def le(self, c):        return "le"
    def ge(self, c):        return "ge"
    def in_(self, c):       return "in"
    def not_in(self, c):    return "not_in"
    def is_(self, c):       return "is"
    def is_not(self, c):    return "is_not"

    def or_(self, c):       return BinOp(c[0], "or_", c[1], c[0].line, c[0].col)
    def xor(self, c):       return BinOp(c[0], "xor", c[1], c[0].line, c[0].col)
    def and_(self, c):      return BinOp(c[0], "and_", c[1], c[0].line, c[0].col)
    def lshift(self, c):    return BinOp(c[0], "lshift", c[1], c[0].line, c[0].col)
    def rshift(self, c):    return BinOp(c[0], "rshift", c[1], c[0].line, c[0].col)
    def add(self, c):       return BinOp(c[0], "add", c[1], c[0].line, c[0].col)
    def sub(self, c):       return BinOp(c[0], "sub", c[1], c[0].line, c[0].col)
    def mul(self, c):       return BinOp(c[0], "mul", c[1], c[0].line, c[0].col)
    def truediv(self, c):   return BinOp(c[0], "truediv", c[1], c[0].line, c[0].col)
    def floordiv(self, c):  return BinOp(c[0], "floordiv", c[1], c[0].line, c[0].col)
    def mod(self, c):       return BinOp(c[0], "mod", c[1], c[0].line, c[0].col)
    def matmul(self, c):    return BinOp(c[0], "matmul", c[1], c[0].line, c[0].col)
    def pow(self, c):       return BinOp(c[0], "pow", c[1], c[0].line, c[0].col)

    def pos(self, c):       return UnaryOp("pos", c[1], c[0].line, c[0].col)
    def neg(self, c):       return UnaryOp("neg", c[1], c[0].line, c[0].col)
    def invert(self, c):    return UnaryOp("invert", c[1], c[0].line, c[0].col)
    # fmt: on

    # ---------------------------------------------------------------- trailers
    # The commonest nodes (names, attributes, calls, numbers: a third of a script's tokens) are
    # filled in place: a class call runs __init__ in a frame of its own from C, 1,900 instructions
    # against 1,300 (callgrind).
    def attribute(self, c):
        value, name = c
        node = _new(Attribute)
        node.value = value
        node.attr = name.value
        node.line = value.line
        node.col = value.col
        return node

    def call(self, c):
        func, arguments = c
        node = _new(Call)
        node.func = func
        node.args, node.keywords = arguments if arguments is not None else ([], [])
        node.line = func.line
        node.col = func.col
        return node

    def arguments(self, c):
        # Python's order: positional and `*x` arguments, then keyword and `**x` ones, though a `*x` may
        # follow a keyword argument (it is still evaluated with the positional ones, as in CPython).
        args, keywords = [], []
        unpacking = False       # a `**x` has come
        for arg in c:
            if type(arg) is Keyword:
                if arg.name is None:
                    unpacking = True
                elif any(k.name == arg.name for k in keywords):
                    self.problems.invalid(error_at(f"keyword argument repeated: {arg.name}", arg))
                keywords.append(arg)
            elif type(arg) is Starred:
                if unpacking:
                    self.problems.invalid(error_at("iterable argument unpacking follows keyword argument "
                                                   "unpacking", arg))
                args.append(arg)
            else:
                if keywords:
                    self.problems.invalid(error_at("positional argument follows keyword argument unpacking"
                                                   if unpacking else "positional argument follows keyword "
                                                   "argument", arg))
                args.append(arg)
        return args, keywords

    def keyword(self, c):
        name, value = c
        return Keyword(name.value, value, name.line, name.col)

    def starred_arg(self, c):
        return Starred(c[1], c[0].line, c[0].col)

    star_expr = starred_arg

    def double_starred_arg(self, c):
        return Keyword(None, c[1], c[0].line, c[0].col)

    def subscript(self, c):
        value, index = c
        return Subscript(value, index, value.line, value.col)

    def slice(self, c):
        lower, colon, upper, _, step = c
        first = lower if lower is not None else colon
        return Slice(lower, upper, step, first.line, first.col)

    # ---------------------------------------------------------------- atoms
    def name(self, c):
        tok = c[0]
        node = _new(Name)
        node.id, node.line, node.col = tok.value, tok.line, tok.col
        return node

    def true(self, c):
        return Constant(True, c[0].line, c[0].col)

    def false(self, c):
        return Constant(False, c[0].line, c[0].col)

    def none(self, c):
        return Constant(None, c[0].line, c[0].col)

    def ellipsis(self, c):
        return Constant(Ellipsis, c[0].line, c[0].col)

    def integer(self, c):
        tok = c[0]
        try:
            value = int(tok.value, 0)
        except ValueError as e:     # more than 4300 decimal digits: Python's limit, and its words
            self.problems.invalid(error_at(f"{e} - Consider hexadecimal for huge integer literals to avoid "
                                           "decimal conversion limits.", tok))
            value = 0
        node = _new(Constant)
        node.value, node.line, node.col = value, tok.line, tok.col
        return node

    def float_number(self, c):
        tok = c[0]
        node = _new(Constant)
        node.value, node.line, node.col = float(tok.value), tok.line, tok.col
        return node

    def imaginary(self, c):
        tok = c[0]
        node = _new(Constant)
        node.value, node.line, node.col = complex(0.0, float(tok.value[:-1])), tok.line, tok.col
        return node

    def strings(self, c):
        return string_literal(c, self.parse_fragment, self.problems)

    def group(self, c):
        # A parenthesised expression starts at its '(' (as a tuple's does): nodes built on
        # it, like the call in (a + b).sum(), then start there too.
        node = c[1]
        if type(node) is Starred:
            raise error_at("cannot use starred expression here", node)
        node.line, node.col = c[0].line, c[0].col
        if type(node) is Name:
            self.parenthesized.add(id(node))
        return node

    def paren_tuple(self, c):
        elts = [] if len(c) == 2 else [c[1]] + (c[3] or [])
        return Tuple(elts, c[0].line, c[0].col)

    def list(self, c):
        return List(c[1] or [], c[0].line, c[0].col)

    def star_named_expressions(self, c):
        return c

    def empty_dict(self, c):
        return Dict([], [], c[0].line, c[0].col)

    def dict(self, c):
        keys = [None if type(k) is Token else k for k, _ in c[1]]
        return Dict(keys, [v for _, v in c[1]], c[0].line, c[0].col)

    def dict_items(self, c):
        return c

    def dict_item(self, c):
        return c[0], c[2]

    def dict_unpack(self, c):
        return c[0], c[1]       # the `**` token stands for the key until the display is built

    def set(self, c):
        return Set(c[1], c[0].line, c[0].col)

    # ---------------------------------------------------------------- comprehensions
    def genexp(self, c):
        return GeneratorExp(_element(c[1]), c[2], c[0].line, c[0].col)

    def call_genexp(self, c):
        func, gen = c
        return Call(func, [gen], [], func.line, func.col)

    def listcomp(self, c):
        return ListComp(_element(c[1]), c[2], c[0].line, c[0].col)

    def setcomp(self, c):
        return SetComp(_element(c[1]), c[2], c[0].line, c[0].col)

    def dictcomp(self, c):
        (key, value), clauses = c[1], c[2]
        if type(key) is Token:
            raise error_at("dict unpacking cannot be used in dict comprehension", key)
        return DictComp(key, value, clauses, c[0].line, c[0].col)

    def comp_for(self, c):
        return c

    def comp_clause(self, c):
        tok, target, _, iterable, *ifs = c
        _check_target(target, "assign to", tok, self.problems)
        return Comprehension(target, iterable, ifs, tok.line, tok.col)

    def comp_if(self, c):
        return c[0]
