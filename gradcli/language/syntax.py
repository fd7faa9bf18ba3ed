"""Syntax tree of a script: small slotted classes named after grammar rules and Python's ast."""

from __future__ import annotations

from types import FunctionType
from typing import Any, Optional, Union


class Node:
    """A node's own fields are its class's annotations, in order (also its `__slots__`); `line` and
    `col`, the 1-based position of its first token, come after them and may be left out (`Name("x")`,
    `Name("x", line=3, col=5)`), and take no part in `==` or `repr`, so trees compare by structure.
    The tree builder passes them by position (`Name("x", 3, 5)`): a class call with keywords costs
    twice as much, and it makes a node per grammar reduction.

    (Hand-written rather than dataclasses: importing dataclasses and generating ~40 classes cost
    about 25 ms of every start-up.)"""

    __slots__ = ("line", "col")
    _fields: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = tuple(cls.__dict__.get("__annotations__", {}))
        cls._fields = fields = cls.__mro__[1]._fields + own
        if fields:
            # a plain __init__ per class, as fast as a dataclass's (the tree builder makes one node
            # per grammar reduction, so this is on the parser's hot path)
            cls.__init__ = _init_for(fields)

    def __init__(self, line: int = 0, col: int = 0):
        self.line = line
        self.col = col

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields) + ")"


_INIT_TEMPLATES: dict = {}      # number of fields -> an __init__ with placeholder names


def _init_for(fields: tuple):
    """`def __init__(self, <fields>, line=0, col=0)` storing each argument in its attribute (the tree builder
    passes the position by place: a call with keywords cost twice as much). Compiled once per number of
    fields, then renamed: compiling one per class (with exec) cost start-up 3-5 ms."""
    template = _INIT_TEMPLATES.get(len(fields))
    if template is None:
        names = [f"_{i}" for i in range(len(fields))]
        body = "".join(f"    self.{n} = {n}\n" for n in names)
        namespace: dict = {}
        exec(f"def __init__(self, {', '.join(names)}, line=0, col=0):\n{body}    self.line = line\n"
             f"    self.col = col\n", namespace)
        template = _INIT_TEMPLATES[len(fields)] = namespace["__init__"]
    # the template stores argument i under the attribute name i (co_names) from the local i (co_varnames)
    code = template.__code__.replace(co_varnames=("self", *fields, "line", "col"), co_names=(*fields, "line", "col"))
    return FunctionType(code, {}, "__init__", template.__defaults__)


class Statement(Node):
    __slots__ = ()


class Expression(Node):
    __slots__ = ()


class Module(Node):
    # (`yields`, not a field: how many yield nodes the tree builder made for it, so that compiling a module
    # without any skips looking for them; a Module made by hand lacks it, and is searched)
    __slots__ = ("body", "yields")
    body: list


# ---------------------------------------------------------------- statements

class ExprStmt(Statement):
    __slots__ = ("value",)
    value: Expression


class Assign(Statement):
    __slots__ = ("targets", "value")
    targets: list           # a = b = 1 has two targets
    value: Expression


class AugAssign(Statement):
    __slots__ = ("target", "op", "value")
    target: Expression
    op: str                 # add sub mul truediv matmul floordiv mod pow
    value: Expression


class AnnAssign(Statement):
    """`target: annotation [= value]`: one target, a name, an attribute or a subscript."""
    __slots__ = ("target", "annotation", "value", "simple")
    target: Expression
    annotation: Expression
    value: Optional[Expression]     # None for a bare annotation (`x: int`), which binds nothing
    simple: bool            # a name not in parentheses: the one kind of target a module or class records


class Import(Statement):
    __slots__ = ("module", "alias")
    module: str             # dotted: "torch.nn.functional"
    alias: Optional[str]


class ImportFrom(Statement):
    __slots__ = ("module", "names")
    module: str
    names: list             # of (name, alias or None)


class If(Statement):
    __slots__ = ("test", "body", "orelse")
    test: Expression
    body: list
    orelse: list            # an elif chain nests: orelse == [If(...)]


class While(Statement):
    __slots__ = ("test", "body", "orelse")
    test: Expression
    body: list
    orelse: list            # runs when the loop ends without break


class For(Statement):
    __slots__ = ("target", "iter", "body", "orelse")
    target: Expression      # Name, or Tuple/List of targets
    iter: Expression
    body: list
    orelse: list            # runs when the loop ends without break


class Break(Statement):
    __slots__ = ()
    pass


class Continue(Statement):
    __slots__ = ()
    pass


class Try(Statement):
    __slots__ = ("body", "handlers", "orelse", "finalbody")
    body: list
    handlers: list          # of ExceptHandler
    orelse: list
    finalbody: list


class ExceptHandler(Node):
    __slots__ = ("type", "name", "body")
    type: Optional[Expression]      # None: a bare `except:`
    name: Optional[str]
    body: list


class Raise(Statement):
    __slots__ = ("exc", "cause")
    exc: Optional[Expression]       # None: a bare `raise`
    cause: Optional[Expression]


class Global(Statement):
    __slots__ = ("names",)
    names: list             # of str


class Nonlocal(Statement):
    __slots__ = ("names",)
    names: list             # of str


class Pass(Statement):
    __slots__ = ()
    pass


class Param(Node):
    __slots__ = ("name", "default", "kind", "annotation")
    name: str
    default: Optional[Expression]   # None when the parameter has no default
    kind: str               # as Python's inspect names them: POSITIONAL_KINDS, "var_positional" (*args),
                            # "keyword_only" (after * or *args), "var_keyword" (**kwargs)
    annotation: Optional[Expression]    # a def's `x: int`; None when it has none, and in a lambda


# Parameters that arguments fill by position: before `/`, and the usual ones.
POSITIONAL_KINDS = ("positional_only", "positional")


class FunctionDef(Statement):
    __slots__ = ("name", "params", "body", "decorators", "returns")
    name: str
    params: list            # of Param
    body: list
    decorators: list        # of Expression, top to bottom
    returns: Optional[Expression]   # the `-> T` annotation


class ClassDef(Statement):
    __slots__ = ("name", "bases", "body", "decorators")
    name: str
    bases: list             # of Expression
    body: list
    decorators: list        # of Expression, top to bottom


class Return(Statement):
    __slots__ = ("value",)
    value: Optional[Expression]     # None for a bare `return`


class WithItem(Node):
    __slots__ = ("context", "target")
    context: Expression
    target: Optional[Expression]


class With(Statement):
    __slots__ = ("items", "body")
    items: list             # of WithItem
    body: list


class Delete(Statement):
    __slots__ = ("targets",)
    targets: list


class Assert(Statement):
    __slots__ = ("test", "msg")
    test: Expression
    msg: Optional[Expression]


class Match(Statement):
    __slots__ = ("subject", "cases")
    subject: Expression
    cases: list             # of MatchCase, tried in order


class MatchCase(Node):
    __slots__ = ("pattern", "guard", "body")
    pattern: "Pattern"
    guard: Optional[Expression]
    body: list


# ---------------------------------------------------------------- patterns (named as Python's ast names them)

class Pattern(Node):
    __slots__ = ()


class MatchValue(Pattern):
    """A number, a string or a dotted name: matches what compares equal (==)."""
    __slots__ = ("value",)
    value: Expression


class MatchSingleton(Pattern):
    """None, True or False: matches that very object (is)."""
    __slots__ = ("value",)
    value: Any


class MatchSequence(Pattern):
    __slots__ = ("patterns",)
    patterns: list          # of Pattern, at most one of them a MatchStar


class MatchMapping(Pattern):
    __slots__ = ("keys", "patterns", "rest")
    keys: list              # of Expression (literals and dotted names)
    patterns: list          # patterns[i] matches the value under keys[i]
    rest: Optional[str]     # `**rest`: the other items, as a dict


class MatchClass(Pattern):
    __slots__ = ("cls", "patterns", "kwd_attrs", "kwd_patterns")
    cls: Expression         # a name or a dotted name
    patterns: list          # positional: through cls.__match_args__
    kwd_attrs: list         # of str
    kwd_patterns: list


class MatchStar(Pattern):
    """`*rest` in a sequence pattern: the items left over, as a list; `*_` binds nothing."""
    __slots__ = ("name",)
    name: Optional[str]


class MatchAs(Pattern):
    """`pattern as name`, a capture (`name`, pattern None) or the wildcard `_` (both None)."""
    __slots__ = ("pattern", "name")
    pattern: Optional[Pattern]
    name: Optional[str]


class MatchOr(Pattern):
    __slots__ = ("patterns",)
    patterns: list


# ---------------------------------------------------------------- expressions

class NamedExpr(Expression):
    """`target := value`: binds the name (in a comprehension, in the scope around it) and gives the value."""
    __slots__ = ("target", "value")
    target: Expression      # a Name (anything else is refused by the tree builder)
    value: Expression


class Name(Expression):
    __slots__ = ("id",)
    id: str


class Constant(Expression):
    __slots__ = ("value",)
    value: Any              # int, float, str, bool, None or Ellipsis


class FormattedValue(Expression):
    __slots__ = ("value", "conversion", "format_spec")
    value: Expression
    conversion: Optional[str]       # 'r', 's', 'a' or None
    format_spec: Optional["JoinedStr"]


class JoinedStr(Expression):
    __slots__ = ("parts",)
    parts: list             # of str and FormattedValue, adjacent strs merged


class List(Expression):
    __slots__ = ("elts",)
    elts: list


class Yield(Expression):
    __slots__ = ("value",)
    value: Optional[Expression]     # None for a bare `yield`


class YieldFrom(Expression):
    __slots__ = ("value",)
    value: Expression


class Lambda(Expression):
    __slots__ = ("params", "body")
    params: list            # of Param
    body: Expression


class Comprehension(Node):
    """One `for target in iter if ... if ...` clause of a comprehension."""
    __slots__ = ("target", "iter", "ifs")
    target: Expression
    iter: Expression
    ifs: list


class ListComp(Expression):
    __slots__ = ("elt", "generators")
    elt: Expression
    generators: list        # of Comprehension, outermost first


class SetComp(Expression):
    __slots__ = ("elt", "generators")
    elt: Expression
    generators: list


class GeneratorExp(Expression):
    __slots__ = ("elt", "generators")
    elt: Expression
    generators: list


class DictComp(Expression):
    __slots__ = ("key", "value", "generators")
    key: Expression
    value: Expression
    generators: list


# The expressions that are scopes of their own (Python 3): their `for` targets are local to them.
COMPREHENSIONS = (ListComp, SetComp, GeneratorExp, DictComp)


class Dict(Expression):
    __slots__ = ("keys", "values")
    keys: list              # None where `**mapping` unpacks values[i]
    values: list            # values[i] goes with keys[i]


class Set(Expression):
    __slots__ = ("elts",)
    elts: list


class Tuple(Expression):
    __slots__ = ("elts",)
    elts: list


class BinOp(Expression):
    __slots__ = ("left", "op", "right")
    left: Expression
    op: str                 # add sub mul truediv floordiv mod pow matmul or_ xor and_ lshift rshift
    right: Expression


class UnaryOp(Expression):
    __slots__ = ("op", "operand")
    op: str                 # neg pos invert not_
    operand: Expression


class BoolOp(Expression):
    __slots__ = ("op", "values")
    op: str                 # 'and' or 'or'
    values: list            # flat: a or b or c has three values


class Compare(Expression):
    __slots__ = ("left", "ops", "comparators")
    left: Expression
    ops: list               # of lt gt eq ne le ge in not_in is is_not
    comparators: list


class IfExp(Expression):
    __slots__ = ("test", "body", "orelse")
    test: Expression
    body: Expression
    orelse: Expression


class Keyword(Node):
    __slots__ = ("name", "value")
    name: Optional[str]     # None for `**mapping`
    value: Expression


class Starred(Expression):
    """`*value`: unpacked into a call's arguments or a display, or a target taking the items left over."""
    __slots__ = ("value",)
    value: Expression


class Call(Expression):
    __slots__ = ("func", "args", "keywords")
    func: Expression
    args: list              # expressions and Starred, in order
    keywords: list          # of Keyword, `**mapping` ones included, in order


class Attribute(Expression):
    __slots__ = ("value", "attr")
    value: Expression
    attr: str


class Slice(Expression):
    __slots__ = ("lower", "upper", "step")
    lower: Optional[Expression]
    upper: Optional[Expression]
    step: Optional[Expression]


class Subscript(Expression):
    __slots__ = ("value", "index")
    value: Expression
    index: Union[Expression, Slice]     # or a Tuple whose elts may be Slices
