"""Syntax tree of a script: dataclasses named after grammar rules and Python's ast; keyword-only line/col come last."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union


@dataclass(slots=True)
class Node:
    """`line` and `col`: the 1-based position of the node's first token. They come after the
    node's own fields and are keyword-only (`Name("x")`, `Name("x", line=3, col=5)`), and
    take no part in `==` or `repr`, so trees compare by structure alone."""

    line: int = field(default=0, kw_only=True, compare=False, repr=False)
    col: int = field(default=0, kw_only=True, compare=False, repr=False)


class Statement(Node):
    __slots__ = ()


class Expression(Node):
    __slots__ = ()


@dataclass(slots=True)
class Module(Node):
    body: list


# ---------------------------------------------------------------- statements

@dataclass(slots=True)
class ExprStmt(Statement):
    value: Expression


@dataclass(slots=True)
class Assign(Statement):
    targets: list           # a = b = 1 has two targets
    value: Expression


@dataclass(slots=True)
class AugAssign(Statement):
    target: Expression
    op: str                 # add sub mul truediv matmul floordiv mod pow
    value: Expression


@dataclass(slots=True)
class Import(Statement):
    module: str             # dotted: "torch.nn.functional"
    alias: Optional[str]


@dataclass(slots=True)
class ImportFrom(Statement):
    module: str
    names: list             # of (name, alias or None)


@dataclass(slots=True)
class If(Statement):
    test: Expression
    body: list
    orelse: list            # an elif chain nests: orelse == [If(...)]


@dataclass(slots=True)
class While(Statement):
    test: Expression
    body: list


@dataclass(slots=True)
class For(Statement):
    target: Expression      # Name, or Tuple/List of targets
    iter: Expression
    body: list


@dataclass(slots=True)
class Break(Statement):
    pass


@dataclass(slots=True)
class Continue(Statement):
    pass


@dataclass(slots=True)
class Pass(Statement):
    pass


@dataclass(slots=True)
class Param(Node):
    name: str
    default: Optional[Expression]   # None when the parameter has no default


@dataclass(slots=True)
class FunctionDef(Statement):
    name: str
    params: list            # of Param
    body: list


@dataclass(slots=True)
class Return(Statement):
    value: Optional[Expression]     # None for a bare `return`


@dataclass(slots=True)
class WithItem(Node):
    context: Expression
    target: Optional[Expression]


@dataclass(slots=True)
class With(Statement):
    items: list             # of WithItem
    body: list


@dataclass(slots=True)
class Delete(Statement):
    targets: list


@dataclass(slots=True)
class Assert(Statement):
    test: Expression
    msg: Optional[Expression]


# ---------------------------------------------------------------- expressions

@dataclass(slots=True)
class Name(Expression):
    id: str


@dataclass(slots=True)
class Constant(Expression):
    value: Any              # int, float, str, bool, None or Ellipsis


@dataclass(slots=True)
class FormattedValue(Expression):
    value: Expression
    conversion: Optional[str]       # 'r', 's', 'a' or None
    format_spec: Optional["JoinedStr"]


@dataclass(slots=True)
class JoinedStr(Expression):
    parts: list             # of str and FormattedValue, adjacent strs merged


@dataclass(slots=True)
class List(Expression):
    elts: list


@dataclass(slots=True)
class Tuple(Expression):
    elts: list


@dataclass(slots=True)
class BinOp(Expression):
    left: Expression
    op: str                 # add sub mul truediv floordiv mod pow matmul or_ xor and_ lshift rshift
    right: Expression


@dataclass(slots=True)
class UnaryOp(Expression):
    op: str                 # neg pos invert not_
    operand: Expression


@dataclass(slots=True)
class BoolOp(Expression):
    op: str                 # 'and' or 'or'
    values: list            # flat: a or b or c has three values


@dataclass(slots=True)
class Compare(Expression):
    left: Expression
    ops: list               # of lt gt eq ne le ge in not_in is is_not
    comparators: list


@dataclass(slots=True)
class IfExp(Expression):
    test: Expression
    body: Expression
    orelse: Expression


@dataclass(slots=True)
class Keyword(Node):
    name: str
    value: Expression


@dataclass(slots=True)
class Call(Expression):
    func: Expression
    args: list
    keywords: list          # of Keyword


@dataclass(slots=True)
class Attribute(Expression):
    value: Expression
    attr: str


@dataclass(slots=True)
class Slice(Expression):
    lower: Optional[Expression]
    upper: Optional[Expression]
    step: Optional[Expression]


@dataclass(slots=True)
class Subscript(Expression):
    value: Expression
    index: Union[Expression, Slice]     # or a Tuple whose elts may be Slices
