"""Grammar tests: valid and invalid snippets per construct; valid ones must parse as CPython parses them."""

import ast
import bisect
import io
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradcli.language import parser, tables
from gradcli.language import syntax as S
from gradcli.errors import ScriptSyntaxError
from gradcli.language.lexer import Layout
from gradcli.language.parser import parse
from gradcli.language.treebuild import Builder

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = REPO.parent / "shared" / "conformance" / "cases"


# ================================================================ CPython's tree in gradcli's terms

OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
       ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitOr: "or_", ast.BitXor: "xor",
       ast.BitAnd: "and_", ast.LShift: "lshift", ast.RShift: "rshift", ast.USub: "neg", ast.UAdd: "pos",
       ast.Invert: "invert", ast.Not: "not_", ast.And: "and", ast.Or: "or", ast.Lt: "lt", ast.Gt: "gt",
       ast.Eq: "eq", ast.NotEq: "ne", ast.LtE: "le", ast.GtE: "ge", ast.In: "in", ast.NotIn: "not_in",
       ast.Is: "is", ast.IsNot: "is_not"}
CONVERSIONS = {-1: None, ord("r"): "r", ord("s"): "s", ord("a"): "a"}


def from_python(node):
    """CPython's parse of the same source, as gradcli nodes with 1-based positions."""
    if isinstance(node, list):
        out = []
        for item in node:
            converted = from_python(item)
            out.extend(converted) if isinstance(converted, list) else out.append(converted)
        return out
    if node is None:
        return None
    at = {"line": node.lineno, "col": node.col_offset + 1} if hasattr(node, "lineno") else {}
    c = from_python
    match node:
        case ast.Module():
            return S.Module(c(node.body), line=1, col=1)
        case ast.Expr():
            return S.ExprStmt(c(node.value), **at)
        case ast.Assign():
            return S.Assign(c(node.targets), c(node.value), **at)
        case ast.AugAssign():
            return S.AugAssign(c(node.target), OPS[type(node.op)], c(node.value), **at)
        case ast.AnnAssign():
            return S.AnnAssign(c(node.target), c(node.annotation), c(node.value), bool(node.simple), **at)
        case ast.Import():
            return [S.Import(a.name, a.asname, **at) for a in node.names]
        case ast.ImportFrom():
            return S.ImportFrom(node.module, [(a.name, a.asname) for a in node.names], **at)
        case ast.If():
            return S.If(c(node.test), c(node.body), c(node.orelse), **at)
        case ast.While():
            return S.While(c(node.test), c(node.body), c(node.orelse), **at)
        case ast.For():
            return S.For(c(node.target), c(node.iter), c(node.body), c(node.orelse), **at)
        case ast.Break():
            return S.Break(**at)
        case ast.Continue():
            return S.Continue(**at)
        case ast.Global():
            return S.Global(node.names, **at)
        case ast.Nonlocal():
            return S.Nonlocal(node.names, **at)
        case ast.Try():
            return S.Try(c(node.body), c(node.handlers), c(node.orelse), c(node.finalbody), **at)
        case ast.ExceptHandler():
            return S.ExceptHandler(c(node.type), node.name, c(node.body), **at)
        case ast.Raise():
            return S.Raise(c(node.exc), c(node.cause), **at)
        case ast.Pass():
            return S.Pass(**at)
        case ast.FunctionDef():
            return S.FunctionDef(node.name, parameters(node.args), c(node.body), c(node.decorator_list),
                                 c(node.returns), **at)
        case ast.ClassDef():
            # (`metaclass=M`, the one class keyword, stays with the bases)
            keywords = [S.Keyword(k.arg, c(k.value), line=k.lineno, col=k.col_offset + 1) for k in node.keywords]
            return S.ClassDef(node.name, c(node.bases) + keywords, c(node.body), c(node.decorator_list), **at)
        case ast.Return():
            return S.Return(c(node.value), **at)
        case ast.With():
            return S.With([S.WithItem(c(i.context_expr), c(i.optional_vars)) for i in node.items], c(node.body), **at)
        case ast.Delete():
            return S.Delete(c(node.targets), **at)
        case ast.Assert():
            return S.Assert(c(node.test), c(node.msg), **at)
        case ast.Name():
            return S.Name(node.id, **at)
        case ast.Constant():
            return S.Constant(node.value, **at)
        case ast.JoinedStr():
            return S.JoinedStr([v.value if isinstance(v, ast.Constant) else c(v) for v in node.values], **at)
        case ast.FormattedValue():
            return S.FormattedValue(c(node.value), CONVERSIONS[node.conversion], c(node.format_spec), **at)
        case ast.List():
            return S.List(c(node.elts), **at)
        case ast.Tuple():
            return S.Tuple(c(node.elts), **at)
        case ast.Lambda():
            return S.Lambda(parameters(node.args), c(node.body), **at)
        case ast.ListComp():
            return S.ListComp(c(node.elt), c(node.generators), **at)
        case ast.SetComp():
            return S.SetComp(c(node.elt), c(node.generators), **at)
        case ast.GeneratorExp():
            return S.GeneratorExp(c(node.elt), c(node.generators), **at)
        case ast.DictComp():
            return S.DictComp(c(node.key), c(node.value), c(node.generators), **at)
        case ast.comprehension():
            return S.Comprehension(c(node.target), c(node.iter), c(node.ifs))
        case ast.Dict():
            return S.Dict([c(k) for k in node.keys], c(node.values), **at)
        case ast.Starred():
            return S.Starred(c(node.value), **at)
        case ast.Set():
            return S.Set(c(node.elts), **at)
        case ast.BinOp():
            return S.BinOp(c(node.left), OPS[type(node.op)], c(node.right), **at)
        case ast.UnaryOp():
            return S.UnaryOp(OPS[type(node.op)], c(node.operand), **at)
        case ast.BoolOp():
            return S.BoolOp(OPS[type(node.op)], c(node.values), **at)
        case ast.Compare():
            return S.Compare(c(node.left), [OPS[type(op)] for op in node.ops], c(node.comparators), **at)
        case ast.IfExp():
            return S.IfExp(c(node.test), c(node.body), c(node.orelse), **at)
        case ast.Call():
            keywords = [S.Keyword(k.arg, c(k.value), line=k.lineno, col=k.col_offset + 1) for k in node.keywords]
            return S.Call(c(node.func), c(node.args), keywords, **at)
        case ast.Attribute():
            return S.Attribute(c(node.value), node.attr, **at)
        case ast.Subscript():
            return S.Subscript(c(node.value), c(node.slice), **at)
        case ast.Slice():
            return S.Slice(c(node.lower), c(node.upper), c(node.step), **at)
        case ast.NamedExpr():
            return S.NamedExpr(c(node.target), c(node.value), **at)
        case ast.Match():
            return S.Match(c(node.subject), c(node.cases), **at)
        case ast.match_case():
            return S.MatchCase(c(node.pattern), c(node.guard), c(node.body))
        case ast.MatchValue():
            return S.MatchValue(literal(node.value), **at)
        case ast.MatchSingleton():
            return S.MatchSingleton(node.value, **at)
        case ast.MatchSequence():
            return S.MatchSequence(c(node.patterns), **at)
        case ast.MatchMapping():
            return S.MatchMapping([literal(k) for k in node.keys], c(node.patterns), node.rest, **at)
        case ast.MatchClass():
            return S.MatchClass(c(node.cls), c(node.patterns), node.kwd_attrs, c(node.kwd_patterns), **at)
        case ast.MatchStar():
            return S.MatchStar(node.name, **at)
        case ast.MatchAs():
            return S.MatchAs(c(node.pattern), node.name, **at)
        case ast.MatchOr():
            return S.MatchOr(c(node.patterns), **at)
    raise AssertionError(f"no gradcli counterpart for {ast.dump(node)}")


def literal(node):
    """A pattern's value: gradcli folds the sign of a negative number into the constant."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return S.Constant(-node.operand.value, line=node.lineno, col=node.col_offset + 1)
    return from_python(node)


def parameters(args: ast.arguments) -> list:
    """CPython's parameter list as gradcli's Params, in the order they are written."""
    def param(a, default, kind):
        return S.Param(a.arg, from_python(default), kind, from_python(a.annotation), line=a.lineno,
                       col=a.col_offset + 1)
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + args.defaults
    kinds = ["positional_only"] * len(args.posonlyargs) + ["positional"] * len(args.args)
    out = [param(a, d, k) for a, d, k in zip(positional, defaults, kinds)]
    if args.vararg is not None:
        out.append(param(args.vararg, None, "var_positional"))
    out += [param(a, d, "keyword_only") for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        out.append(param(args.kwarg, None, "var_keyword"))
    return out


def children(node):
    if isinstance(node, list):
        return node
    if isinstance(node, tuple):
        return list(node)
    if isinstance(node, S.Node):
        return [getattr(node, f) for f in node._fields]
    return []


def assert_same_positions(mine, theirs, source: str):
    """Positions agree, except that gradcli starts a parenthesised node at its '(' (CPython gives a
    comprehension's `for` clause no position; gradcli's is the `for`)."""
    lines = source.split("\n")
    pending = [(mine, theirs)]
    while pending:
        a, b = pending.pop()
        if isinstance(a, S.Node) and not isinstance(a, (S.Module, S.WithItem, S.FormattedValue, S.Comprehension,
                                                        S.MatchCase)) \
                and not (isinstance(a, S.JoinedStr) and b.line == 0):
            # (CPython's ast counts a column in UTF-8 bytes, gradcli in characters, as CPython's messages do)
            b_col = len(lines[b.line - 1].encode()[:b.col - 1].decode()) + 1 if b.line > 0 else b.col
            if (a.line, a.col) != (b.line, b_col):
                between = lines[a.line - 1][a.col - 1:b_col - 1] if a.line == b.line and a.col < b_col else "?"
                assert set(between) <= set("( "), f"{a!r} at {a.line}:{a.col}, CPython says {b.line}:{b_col}"
        if isinstance(a, S.FormattedValue):        # CPython 3.11 places these oddly: check inside only
            pending.append((a.value, b.value))
            continue
        pending.extend(zip(children(a), children(b)))


def assert_like_python(source: str):
    mine = parse(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # CPython warns about escapes like "\d"; gradcli keeps them quietly
        theirs = from_python(ast.parse(source))
    assert mine == theirs
    assert_same_positions(mine, theirs, source)
    return mine


# ================================================================ valid snippets, per construct

VALID = {
    "expression statements": [
        "x", "f(x)", "x.y.z()", "1", "'doc'", "x; y", "x;", "x; y;", "(a + b).sum()", "a, b",
    ],
    "names": [
        "café = 1", "ᾱ = alphabar[t]", "b\u0304_t = 1 - ᾱ", "x\u0302 = f(x)", "\u2118 = 1", "\ufb01le = 1", "σ.grad",
        "def f(ᾱ=1, *β, **γ): pass", "class Λ: pass", "f(ε=1e-5)", "x = 'a' if ᾱ else b\u0304",
    ],
    "assignment": [
        "a = 1", "a = b = 1", "a, b = 1, 2", "(a, b) = t", "[a, b] = t", "a, = t", "a, (b, c) = t",
        "x.requires_grad = True", "w.data = w.data - 0.1 * w.grad", "x[0] = 1.0", "x[mask] = 0",
        "x[0][1] = 2", "x[1:3] = y", "x[0, :] = y", "(a) = 1", "a = yield_ = 1", "[a, [b, c]] = t",
    ],
    "annotations": [
        "x: int", "x: int = 1", "x: List[int] = []", "self.w: Tensor", "self.w: Tensor = t", "a[0]: int = 1",
        "a[i:j]: int", "(x): int = 1", "x: 'str'", "x: int | None = None", "x: int = *a, b",
        "x: Callable[[int], int] = f", "x: int; y: str = 'a'",
        "def f(x: int) -> int:\n    pass", "def f(x: int = 1, *a: int, k: str = 'a', **kw: float) -> int: pass",
        "def f(a: int, /, b, *, c: 'c'): pass", "def f(*a: int): pass", "def f(**k: dict[str, int]): pass",
        "def f() -> torch.Tensor | None: pass", "def f(x: lambda y: y = 1): pass",
        "class C:\n    x: int\n    y: float = 1.0",
        "f = lambda x, *a, k=1, **kw: x", "f = lambda: 0",
    ],
    "augmented assignment": [
        "x += 1", "x -= 1", "x *= 2", "x /= 2", "x @= w", "x //= 2", "x %= 2", "x **= 2",
        "x <<= 1", "x >>= 1", "x &= m", "x |= m", "x ^= m", "x[0] <<= 2", "x.y ^= True",
        "x.grad *= 0", "x[0] /= 2", "w.data -= lr * w.grad",
    ],
    "imports": [
        "import torch", "import torch as t", "import math", "import math as m",
        "import torch.nn.functional as F", "import torch.nn as nn", "import torch, math",
        "import torch.linalg", "from torch.autograd import Variable, grad", "from torch import nn",
        "from torch.nn import functional as F", "from math import pi, sqrt as root",
        "from torch.autograd import (Variable, grad,)", "from torch.autograd.functional import jacobian",
        "from torch.autograd import grad as g, Variable",
    ],
    "if": [
        "if x:\n    pass", "if x:\n    a = 1\nelse:\n    a = 2",
        "if a:\n    pass\nelif b:\n    pass\nelif c:\n    pass\nelse:\n    pass",
        "if x: y = 1", "if x: y = 1; z = 2", "if x:\n    if y:\n        pass\n    z = 1",
        "if x:\n    pass\nelif y: pass", "if (a and\n        b):\n    pass",
    ],
    "while": [
        "while x < 3:\n    x += 1", "while True:\n    break", "while x:\n    continue",
        "while x:\n    if y:\n        break\n    x -= 1",
    ],
    "for": [
        "for i in range(3):\n    print(i)", "for i, j in pairs:\n    pass", "for (i, j) in pairs:\n    pass",
        "for [i, j] in pairs:\n    pass", "for x in a, b:\n    pass", "for x, in t:\n    pass",
        "for x.y in z: pass", "for x[0] in z: pass", "for _ in range(3):\n    pass",
        "for i in range(3):\n    for j in range(i):\n        continue",
        "for x in y:\n    break\nelse:\n    z = 1", "while x:\n    x -= 1\nelse:\n    done = True",
        "for i in a:\n    for j in b:\n        pass\n    else:\n        continue\n    break",
    ],
    "def and return": [
        "def f():\n    return", "def f(a, b=2, c=None):\n    return a + b", "def f(a,):\n    return a",
        "def f(x): return x * 2", "def f(x):\n    def g(y):\n        return y\n    return g(x)",
        "def f(x, y=-1.5):\n    return x, y", "def f():\n    pass", "def loss(w):\n    for x in w:\n        return x",
        "def _f(_a=1):\n    return _a", "_x = 1", "x = torch._C", "f(_a=1)", "x = f'{y.__dict__}'",
    ],
    "classes and decorators": [
        "class A:\n    pass", "class A(B):\n    x = 1", "class A(B, C,):\n    def f(self):\n        return self.x",
        "class A(): pass", "class A(nn.Module):\n    def __init__(self):\n        super().__init__()",
        "@dec\ndef f():\n    pass", "@a.b(1, c=2)\n@d\ndef f(x): return x", "@torch.no_grad()\ndef step(): pass",
        "@dataclass\nclass P:\n    x = 0",
        "class A:\n    @staticmethod\n    def f():\n        pass\n    @property\n    def g(self):\n        return 1",
        "class A:\n    class B:\n        pass", "@x[0]\ndef f(): pass", "@(lambda f: f)\ndef f(): pass",
        "class A:\n    'doc'\n    __doc__ = 'x'", "class A(B, metaclass=ABCMeta):\n    __slots__ = ('x',)", "if x:\n    class A:\n        pass\nelse:\n    @d\n    def f(): pass",
    ],
    "with": [
        "with torch.no_grad():\n    y = x * 2", "with torch.no_grad() as g:\n    pass",
        "with a as b, c as d:\n    pass", "with a, b:\n    pass", "with a as (b, c): pass",
        "with torch.enable_grad(): y = x", "with (a, b):\n    pass", "with (a,): pass", "with (): pass",
        "with (a, b) as c: pass", "with (a, b), c: pass",
    ],
    "del": ["del x", "del x, y", "del x[0]", "del x.grad", "del (a, b)", "del [a, b]", "del x[0], y.z"],
    "assert": ["assert x", "assert x > 0, 'must be positive'", "assert x, f'{x}'"],
    "layout": [
        "x = 1  # comment", "# only a comment", "x = (1 +\n     2)", "x = [1,\n     2,\n]",
        "x = 1 + \\\n    2", "f(a,\n  b=2)", "if x:\n    a = 1\n\n  # odd comment\n    b = 2",
        "\n\n# header\n\nx = 1\n", "x = 1\n\n\n", "if x:\n\ty = 1", "", "\n", "   \n", "# c",
        "if x:\n    a = 1\n# dedented comment\n    b = 2\n", "if x:\n    pass\n    \n", "x = 1   ",
        "if x:\n  if y:\n        a = 1\n  b = 2\nc = 3", "x = [\n]", "f(\n)\n", "x = 1;\n",
        "if x:\n    pass\n\n\n\nelse:\n    pass",
    ],
    "precedence": [
        "-x**2", "2**-1", "a**b**c", "a + b * c", "(a + b) * c", "a - b - c", "a / b / c", "a // b % c",
        "a @ b @ c", "x @ y.T", "a < b < c", "a < b == c", "not a == b", "not a and b or c", "a or b or c",
        "a and b and c", "a if c else b", "a if c else b if d else e", "-a.b", "~x", "+x", "- - x",
        "a | b ^ c & d", "a << b >> c", "a + b << c", "x is None", "x is not None", "x in y", "x not in y",
        "not x in y", "a if b else c, d", "-x[0]", "a * -b", "-2 ** 2", "(-2) ** 2", "a ** -b ** c",
        "not not x", "a == b != c", "x <= y >= z", "(a or b) and c", "a if (b or c) else d",
        "~a ** b", "a @ b * c", "a - -b", "a**-b", "x.grad.data.zero_()", "a and not b",
    ],
    "calls": [
        "f()", "f(a)", "f(a, b)", "f(a, b=1)", "f(a, b=1,)", "f(b=1, c=2)", "f(a,)",
        "torch.tensor([1.0, 2.0], requires_grad=True)", "f(a)(b)", "f(a)[0].b", "print('a', 'b', sep='-', end='!')",
        "f(a if b else c, d=e or f)", "f(x=(1, 2))",
    ],
    "star-args and keyword-only parameters": [
        "f(*a)", "f(**k)", "f(*a, **k)", "f(a, *b, c, *d, k=1, **e)", "f(a=1, *b)", "f(**d, k=1)", "f(**a, **b)",
        "f(*a or b)", "f(*a if b else c)", "f(*a, )", "f(*[1, 2], *(3,))", "f(x, *args, key=v, **kwargs)",
        "def f(*args):\n    pass", "def f(**kwargs):\n    pass", "def f(a, *args, b, c=1, **kw):\n    pass",
        "def f(*, a):\n    pass", "def f(*, a=1, b):\n    pass", "def f(a, /):\n    pass",
        "def f(a, b=1, /, c=2, *, d, e=3, **f):\n    pass", "def f(a, /, b):\n    pass", "def f(*a,):\n    pass",
        "def f(**k,):\n    pass", "def f(a, /, *, b):\n    pass", "lambda *a: a", "lambda **k: k",
        "lambda *, k=1: k", "lambda a, /, b=2: a", "lambda *a, **k: (a, k)", "lambda x, *ys: [x, *ys]",
    ],
    "starred expressions and targets": [
        "[*a]", "[*a, *b]", "[1, *a, 2]", "(*a,)", "(*a, 1)", "*a, b", "x = *a, *b", "{*a}", "{*a, *b, 1}",
        "{**d}", "{**d1, 'k': 1, **d2}", "{'a': 1, **d}", "{**d,}", "[*a | b]", "[*a + b]", "[*f(x), *x[0]]",
        "a, *rest = xs", "*init, last = xs", "*a, = xs", "[a, *b] = xs", "a, *b, c = xs", "(a, *b), c = xs",
        "a, (b, *c) = xs", "*a.b, c[0] = d", "for a, *b in rows:\n    pass", "for *a, b in rows:\n    pass",
        "for x in *a, *b:\n    pass", "[x for a, *x in rows]", "a = b, *c = xs", "def f():\n    return *a, b",
        "with a as (b, *c): pass",
    ],
    "subscripts": [
        "x[0]", "x[-1]", "x[0, 1]", "x[1:]", "x[:2]", "x[:]", "x[::2]", "x[1:2:3]", "x[::-1]", "x[::]",
        "x[0, 1:, None, ...]", "x[mask]", "x[i][j]", "x[..., 0]", "x[:, None]", "x[a:b, c]", "x[0,]",
        "x[(1, 2)]", "x[1:2, ::3]", "x[i + 1:j - 1]", "x[x > 0]", "x[[0, 2]]", "x[:, :, 0]", "x[a:b:c, ...]",
    ],
    "numbers": [
        "0", "7", "1_000", "0x1F", "0o17", "0b101", "0_0", "00", "1.", ".5", "1e-3", "1_000.0",
        "1.5e+10", "1E5", "0.0", "1_0.0_1e1_0", "0XFF", "123456789012345678901234567890",
        "1j", "1.5J", "1e3j", "1_0j", ".5j", "0j", "-2j", "1 + 2j", "00j", "1_0.5e-1_0j",
    ],
    "strings": [
        "'a'", '"a"', "'''a\nb'''", '"""x"""', "'it\\'s'", "'\\n\\t\\\\'", "r'\\n'", "'a' 'b'",
        "'a' \"b\"", "'\\x41\\u00e9\\N{BULLET}\\U0001F600'", "u'x'", "'é'", "''", '""', "''''''",
        "'\\d'", "'a\\\nb'", "'\\101\\0'", "R'x'", "'a' \\\n 'b'", "('a'\n 'b')",
    ],
    "constants and displays": [
        "True", "False", "None", "...", "[]", "[1]", "[1, 2,]", "[[1, 2], [3, 4]]", "()", "(1,)",
        "(1, 2)", "1,", "(1)", "((1))", "[(1, 2)]", "([],)", "(1, 2,)",
        "{}", "{'a': 1}", "{'a': 1,}", "{1: 2, 3: 4}", "{x: [y, {z}]}", "d = {}", "{1}", "{1, 2,}",
        "{(1, 2)}", "{'k': {'n': {}}}", "[x for x in y]", "[x for x in y if x if not x]", "{x for x in y}",
        "{k: v for k, v in d.items()}", "(x for x in y)", "f(x for x in y)", "sum(x * x for x in y if x > 0)",
        "[(a, b) for a in x for b in y]", "[[c for c in r] for r in m]", "[x for x, in y]", "[x for (a, b) in y]",
        "f((x for x in y), 1)", "[x if x else 0 for x in y]", "[x for x in (y if z else w)]",
        "global x", "def f():\n    global a, b\n    a = 1", "raise", "raise E", "raise E(1) from e",
        "try:\n    x\nexcept:\n    y", "try:\n    x\nexcept E as e:\n    y\nexcept (A, B):\n    z\nelse:\n    w\nfinally:\n    v",
        "try:\n    x\nfinally:\n    y", "def f():\n    x = 1\n    def g():\n        nonlocal x\n        x = 2",
        "lambda: 0", "f = lambda x: x", "f = lambda x, y=2,: x * y", "sorted(p, key=lambda t: t[1])",
        "lambda x: lambda y: x + y", "lambda: (yield_ for yield_ in x)", "[lambda: i for i in x]",
        "lambda x=lambda: 1: x", "f(lambda: 0, 1)", "lambda x: x if x else -x", "{\n    'a': 1,\n    'b': 2,\n}", "{a + b: f(c)}", "x = {1: 2}['k']",
    ],
    "f-strings": [
        "f'{x}'", 'f"{x!r}"', "f'{x:.4f}'", "f'{x:>{width}}'", "f'{{}} {x}'", "f'{x=}'", "f'{x = }'",
        "f'{x=:.2f}'", "f'{x=!s}'", "f\"{d['k']}\"", "f'a' 'b' f'{c}'", "f'{x!s:>10}'", "f'{a + b}'",
        "f'{f(a, b=1)}'", "f'{x[1:2]}'", "f'{x if y else z}'", "rf'\\d{x}'", "f'''{x}\n{y}'''",
        "f'{x:{w}.{p}f}'", "f''", "f'{x!a}'", "f'{ x }'", "f'{x:}'", "f'\\n{x}'", "f'{x:%Y-%m-%d}'",
        "f'{3.14:.1f}'", "f'{a}{b}'", "f'{x}' 'tail'", "'head' f'{x}'", "f'{x == y}'", "f'{x != y}'",
        "f'{(x, y)}'", "f'{[1, 2][0]}'", "f\"{f'{x}'}\"", "f'{x}}}'", "f'{{{x}'", "F'{x}'", "fr'{x}\\n'",
        "f'{x:{{}}>5}'" if sys.version_info >= (3, 12) else "f'{x:*^{w}}'", "f'\\N{BULLET} {x}'",
        "f'''{\nx\n}'''", "f'{x:=^10}'",
    ],
    "assignment expressions": [
        "(x := 1)", "if (n := len(a)) > 10: pass", "if n := len(a): pass", "while (line := f()) is not None: pass",
        "while chunk := read(): pass", "elif_ = 1\nif a: pass\nelif (b := 2): pass", "print(x := 1)",
        "f(a, x := 1, k=2)", "a[x := 1]", "a[x := 1, 2]", "[x := 1, 2]", "{x := 1, 2}", "(x, y := 1, 2)",
        "[y := f(x), y ** 2]", "[y for x in data if (y := f(x)) is not None]", "[(y := x) for x in xs]",
        "x = (y := (z := 1))", "(x := a if b else c)", "(x := lambda: 1)", "(x := yield_)", "f((x := 1))",
        "@(d := deco)\ndef f(): pass", "@d := deco\ndef f(): pass", "x = [1, 2] if (n := 3) else 4",
        "def f():\n    global y\n    [(y := x) for x in xs]", "print(f'{(x := 10)}')", "print(f'{x:=10}')",
        "(total := total + v)", "assert (x := 1)", "with (x := cm()): pass", "for i in (xs := [1, 2]): pass",
    ],
    "match statements": [
        "match x:\n    case 1: pass", "match x:\n    case 1:\n        pass\n    case 2:\n        pass",
        "match x:\n    case -1 | 0 | 1.5 | -2.5e3 | 0x10: pass",
        "match x:\n    case 1j | -2.5j | 1 + 2j | 2.5 - 2j | 0x10 + 1e3j: pass", "match x:\n    case 'a' \"b\" | r'c': pass",
        "match x:\n    case None | True | False: pass", "match x:\n    case y: pass", "match x:\n    case _: pass",
        "match x:\n    case a.b: pass", "match x:\n    case a.b.c: pass", "match x:\n    case (1): pass",
        "match x:\n    case [a, b]: pass", "match x:\n    case [a, *rest]: pass", "match x:\n    case [*_, last]: pass",
        "match x:\n    case (a, b): pass", "match x:\n    case (a,): pass", "match x:\n    case (): pass",
        "match x:\n    case []: pass", "match x:\n    case a, *b: pass", "match x:\n    case 1, 2,: pass",
        "match x:\n    case {}: pass", "match x:\n    case {'k': v}: pass", "match x:\n    case {'k': v, **rest}: pass",
        "match x:\n    case {1: _, a.b: [c], None: d,}: pass", "match x:\n    case {**rest}: pass",
        "match x:\n    case {-1: y}: pass", "match x:\n    case Point(): pass", "match x:\n    case Point(1, y): pass",
        "match x:\n    case Point(x=0, y=yy): pass", "match x:\n    case Point(1, y=2,): pass",
        "match x:\n    case torch.Tensor(shape=s): pass", "match x:\n    case int(n) | float(n): pass",
        "match x:\n    case [1, 2] as pair: pass", "match x:\n    case (1 | 2) as n: pass",
        "match x:\n    case [(1 | b.c) as c, *_]: pass", "match x:\n    case (a), b: pass", "match x:\n    case n if n > 0: pass",
        "match x:\n    case n if (m := n) > 0: pass", "match x, y:\n    case a, b: pass",
        "match *xs, y:\n    case _: pass", "match (y := f()):\n    case 1: pass", "match y := f():\n    case 1: pass",
        "match (x):\n    case 1: pass", "match [a, b]:\n    case [1, 2]: pass", "match -x:\n    case 1: pass",
        "match x.y[0]:\n    case {'a': [1, {'b': c}]}: pass",
        "match x:\n    case 1:\n        match y:\n            case 2: pass\n    case 3: pass",
        "def f(x):\n    match x:\n        case 1:\n            return 'one'\n        case _:\n            return 'other'",
        "match x:  # comment\n    case 1:  # comment\n        pass",
    ],
    "soft keywords as names": [
        "match = 1", "case = 2", "match.x = 1", "match[0] = 1", "match(x)", "match(x).y = 1", "print(match, case)",
        "match, case = 1, 2", "match = re.match(p, s)", "def match(case): return case", "case(1)",
        "x = match if case else 0", "match: int = 1", "match - 1", "match * x", "f(match=1, case=2)",
        "[match for match in xs]", "if match:\n    case = 1", "match x:\n    case case: pass",
        "match match:\n    case match: pass", "match x:\n    case 1:\n        case = 2", "lambda match: match",
        "class A:\n    match = 1\n    case = 2", "for case in cases: pass", "match . x",
    ],
    # Deeper than the parser's stacks start (64 entries), which then grow.
    "deep nesting": [
        "x = " + "(" * 150 + "1" + ")" * 150, "x = " + "[" * 100 + "]" * 100, "x = " + "-" * 150 + "1",
        "x = " + "f(" * 100 + "y" + ")" * 100, "x = " + "not " * 100 + "y", "x = " + "a.b[0](" * 40 + ")" * 40,
        "".join(" " * i + "if x:\n" for i in range(90)) + " " * 90 + "pass",
    ],
}

CASES = [pytest.param(src, id=f"{construct}: {src!r}") for construct, snippets in VALID.items() for src in snippets]


@pytest.mark.parametrize("source", CASES)
def test_valid_snippet_parses_as_cpython_does(source):
    assert_like_python(source)


# ================================================================ key trees, spelled out

N, C = S.Name, S.Constant


def expr(source):
    (stmt,) = parse(source).body
    return stmt.value


@pytest.mark.parametrize("source, tree", [
    ("-x**2", S.UnaryOp("neg", S.BinOp(N("x"), "pow", C(2)))),
    ("2 ** -1", S.BinOp(C(2), "pow", S.UnaryOp("neg", C(1)))),
    ("a ** b ** c", S.BinOp(N("a"), "pow", S.BinOp(N("b"), "pow", N("c")))),
    ("a + b * c", S.BinOp(N("a"), "add", S.BinOp(N("b"), "mul", N("c")))),
    ("a - b - c", S.BinOp(S.BinOp(N("a"), "sub", N("b")), "sub", N("c"))),
    ("a < b < c", S.Compare(N("a"), ["lt", "lt"], [N("b"), N("c")])),
    ("not a == b", S.UnaryOp("not_", S.Compare(N("a"), ["eq"], [N("b")]))),
    ("x @ y.T", S.BinOp(N("x"), "matmul", S.Attribute(N("y"), "T"))),
    ("a or b or c", S.BoolOp("or", [N("a"), N("b"), N("c")])),
    ("a or b and c", S.BoolOp("or", [N("a"), S.BoolOp("and", [N("b"), N("c")])])),
    ("a if c else b", S.IfExp(N("c"), N("a"), N("b"))),
    ("x is not None", S.Compare(N("x"), ["is_not"], [C(None)])),
    ("x not in y", S.Compare(N("x"), ["not_in"], [N("y")])),
    ("x[0, 1:, None, ...]", S.Subscript(N("x"), S.Tuple([C(0), S.Slice(C(1), None, None), C(None), C(Ellipsis)]))),
    ("x[::2]", S.Subscript(N("x"), S.Slice(None, None, C(2)))),
    ("f(a, b=1)", S.Call(N("f"), [N("a")], [S.Keyword("b", C(1))])),
    ("'a' 'b'", C("ab")),
    ("f'{x:.4f}'", S.JoinedStr([S.FormattedValue(N("x"), None, S.JoinedStr([".4f"]))])),
    ("f'{x!r:>{width}}'",
     S.JoinedStr([S.FormattedValue(N("x"), "r", S.JoinedStr([">", S.FormattedValue(N("width"), None, None)]))])),
    ("f'{{}} {x=}'", S.JoinedStr(["{} x=", S.FormattedValue(N("x"), "r", None)])),
    ("f'a' 'b' f'{c}'", S.JoinedStr(["ab", S.FormattedValue(N("c"), None, None)])),
    ("0x1F + 0o17 + 0b101 + 1_000", S.BinOp(S.BinOp(S.BinOp(C(31), "add", C(15)), "add", C(5)), "add", C(1000))),
    ("...", C(Ellipsis)),
    ("f'{x,}'", S.JoinedStr([S.FormattedValue(S.Tuple([N("x")]), None, None)])),
    ("f'{*x,}'", S.JoinedStr([S.FormattedValue(S.Tuple([S.Starred(N("x"))]), None, None)])),
    ("f(a, *b, k=1, **c)", S.Call(N("f"), [N("a"), S.Starred(N("b"))], [S.Keyword("k", C(1)), S.Keyword(None, N("c"))])),
    ("{**d, 'k': 1}", S.Dict([None, C("k")], [N("d"), C(1)])),
])
def test_tree(source, tree):
    assert expr(source) == tree


def test_statement_trees():
    (aug, imp1, imp2, frm, with_, func) = parse(
        "x.grad *= 0\nimport torch.nn.functional as F, math\nfrom torch.autograd import Variable, grad as g\n"
        "with torch.no_grad() as ng:\n    pass\ndef f(a, b=2):\n    return\n").body
    assert aug == S.AugAssign(S.Attribute(N("x"), "grad"), "mul", C(0))
    assert (imp1, imp2) == (S.Import("torch.nn.functional", "F"), S.Import("math", None))
    assert frm == S.ImportFrom("torch.autograd", [("Variable", None), ("grad", "g")])
    assert with_ == S.With([S.WithItem(S.Call(S.Attribute(N("torch"), "no_grad"), [], []), N("ng"))], [S.Pass()])
    assert func == S.FunctionDef("f", [S.Param("a", None, "positional", None),
                                       S.Param("b", C(2), "positional", None)], [S.Return(None)], [], None)


def test_elif_chains_nest():
    (stmt,) = parse("if a:\n    x\nelif b:\n    y\nelse:\n    z\n").body
    assert stmt.orelse == [S.If(N("b"), [S.ExprStmt(N("y"))], [S.ExprStmt(N("z"))])]
    assert (stmt.orelse[0].line, stmt.orelse[0].col) == (3, 1)


def test_positions_are_one_based_first_tokens():
    module = parse("x = 1\nif y:\n    z = f(a)[0] + -b\n")
    assign, if_ = module.body
    assert (assign.line, assign.col) == (1, 1)
    binop = if_.body[0].value
    assert (binop.line, binop.col) == (3, 9)
    assert (binop.right.line, binop.right.col) == (3, 19)
    assert (binop.left.value.func.line, binop.left.value.func.col) == (3, 9)


def test_windows_and_old_mac_newlines_count_as_newlines():
    module = parse("x = 1\r\nif y:\r\n    z = 2\r\nw = 3\rv = 4")
    assert [(s.line, s.col) for s in module.body] == [(1, 1), (2, 1), (4, 1), (5, 1)]
    assert (module.body[1].body[0].line, module.body[1].body[0].col) == (3, 5)


def test_fstring_fields_carry_script_positions():
    value = expr("print(f'ab{x + y:>{w}}'\n      f'''\n{z}''')").args[0]
    field, spec_field = value.parts[1], value.parts[1].format_spec.parts[1]
    assert (field.value.line, field.value.col) == (1, 12)
    assert (spec_field.value.line, spec_field.value.col) == (1, 20)
    last = value.parts[-1]
    assert last.value == N("z") and (last.value.line, last.value.col) == (3, 2)


# ================================================================ invalid snippets

NOT_OURS = "not part of gradcli's language"
ONLY_TORCH = "gradcli scripts can import only torch, abc, argparse, bisect, collections, contextlib, copy, dataclasses, enum, functools, heapq, inspect, io, itertools, json, logging, math, operator, pprint, random, re, statistics, string, sys, textwrap, time, traceback, types, typing, unicodedata and warnings"

INVALID = {
    "unexpected tokens": [
        ("f(x=)", "unexpected ')' (expected an expression)", 1, 5),
        ("(1 + )", "unexpected ')' (expected an expression)", 1, 6),
        ("x = 1 +", "unexpected end of line (expected an expression)", 1, 8),
        ("x = 1 2", "unexpected number 2 (expected ',' or end of line)", 1, 7),
        ("f(1 2)", "unexpected number 2 (expected ',' or ')')", 1, 5),
        ("if x\n    pass", "expected ':'", 1, 5),
        ("if x  # no colon\n    pass", "expected ':'", 1, 5),
        ("def f(x)\n    return x", "expected ':'", 1, 9),
        ("for x in y\n    pass", "expected ':'", 1, 11),
        ("x = a if b", "expected 'else'", 1, 11),
        ("else:\n    pass", "unexpected 'else'", 1, 1),
        ("x = = 1", "unexpected '=' (expected an expression)", 1, 5),
        ("from torch import", "unexpected end of line (expected a name or '(')", 1, 18),
        ("import", "unexpected end of line (expected a name)", 1, 7),
        ("def f(1): pass", "unexpected number 1 (expected a name, '*', '**', '/' or ')')", 1, 7),
        ("x = [1, 2 3]", "unexpected number 3 (expected ',' or ']')", 1, 11),
        ("x = @y", "unexpected '@' (expected an expression)", 1, 5),
        ("return x = 1", "unexpected '=' (expected end of line)", 1, 10),
    ],
    "indentation": [
        ("  x = 1", "unexpected indent", 1, 3),
        ("x = 1\n    y = 2", "unexpected indent", 2, 5),
        ("if x:\npass", "expected an indented block after 'if' statement on line 1", 2, 1),
        ("if x:\n", "expected an indented block after 'if' statement on line 1", 2, 1),
        ("def f(x):\nreturn x", "expected an indented block after function definition on line 1", 2, 1),
        ("if x:\n    a = 1\n  b = 2", "unindent does not match any outer indentation level", 3, 3),
        ("if x:\n    pass\n  else:\n    pass", "unindent does not match any outer indentation level", 3, 3),
        ("if x:\n\tif y:\n        pass", "inconsistent use of tabs and spaces in indentation", 3, 9),
        ("if x:\n        a = 1\n\tb = 2", "inconsistent use of tabs and spaces in indentation", 3, 2),
        ("".join(f"{' ' * i}if x:\n" for i in range(101)) + " " * 101 + "pass",
         "too many levels of indentation", 101, 101),
    ],
    "brackets": [
        ("x = )", "unmatched ')'", 1, 5),
        ("x = 1)", "unmatched ')'", 1, 6),
        ("x = (1, 2", "'(' was never closed", 1, 5),
        ("x = [1,\n\n", "'[' was never closed", 1, 5),
        ("x = [1, 2)", "closing parenthesis ')' does not match opening parenthesis '['", 1, 10),
        ("x = " + "(" * 300 + "1" + ")" * 300, "too deeply nested (more than 200 levels)", 1, 205),
        ("x = " + "[" * 5000, "too deeply nested (more than 200 levels)", 1, 205),
        ("x = " + "-" * 300 + "1", "too deeply nested (more than 200 levels)", 1, 205),
        ("x = " + "not " * 300 + "y", "too deeply nested (more than 200 levels)", 1, 805),
    ],
    "tokens": [
        ("x = 'abc", "unterminated string", 1, 5),
        ("x = f'abc", "unterminated string", 1, 5),
        ("x = '''abc\n\n", "unterminated triple-quoted string", 1, 5),
        ("x = $", "invalid character '$'", 1, 5),
        ("x = 1 ? 2", "invalid character '?'", 1, 7),
        ("x = 1 ! 2", "invalid character '!'", 1, 7),
        ("x = €", "invalid character '€' (U+20AC)", 1, 5),
        ("x\u00b2 = 1", "invalid character '\u00b2' (U+00B2)", 1, 2),
        ("a\u2192b = 1", "invalid character '\u2192' (U+2192)", 1, 2),
        ("x = \ufb01\u00b2", "invalid character '\u00b2' (U+00B2)", 1, 6),
        ("\u0304x = 1", "invalid character '\u0304' (U+0304)", 1, 1),
        ("x = \x07", "invalid character '\\x07' (U+0007)", 1, 5),
        ("x = 1\0", "source code cannot contain null bytes", 1, 6),
        ("x = 1 \\ 2", "unexpected character after line continuation character", 1, 7),
        ("x = b'abc'", "bytes literals (b'...') are " + NOT_OURS, 1, 5),
        ("x = rr'abc'", "invalid string prefix 'rr'", 1, 5),
        ("x = '\\x4'", "truncated \\xXX escape", 1, 6),
        ("x = '\\N{NOT A NAME}'", "unknown Unicode character name 'NOT A NAME'", 1, 6),
    ],
    "annotations": [
        ("a, b: int = 1", "only single target (not tuple) can be annotated", 1, 1),
        ("[a]: int", "only single target (not list) can be annotated", 1, 1),
        ("f(): int", "illegal target for annotation", 1, 1),
        ("a + 1: int", "illegal target for annotation", 1, 1),
        ("lambda x: int: x", "illegal target for annotation", 1, 1),
        ("x: int = 1 = 2", "unexpected '=' (expected end of line)", 1, 12),
        ("def f(x: int = 1, y: str): pass", "non-default argument follows default argument", 1, 19),
        ("f = lambda x: int, y: x", "unexpected ':' (expected end of line)", 1, 21),
    ],
    "outside the language": [
        ("f = lambda x, x: x", "duplicate argument 'x' in function definition", 1, 15),
        ("f = lambda x=1, y: x", "non-default argument follows default argument", 1, 17),
        ("f = lambda: x = 1", "cannot assign to an expression", 1, 15),
        ("[x for x in y if a else b]", "expected ']'", 1, 20),
        ("f(x for x in y, 1)", "expected ')'", 1, 15),
        ("[x for 1 in y]", "cannot assign to a literal", 1, 4),
        ("[x async for x in y]", "async code (async/await) is " + NOT_OURS, 1, 4),
        ("{1: 2} = x", "cannot assign to a dict literal", 1, 8),
        ("{1} = x", "cannot assign to a set display", 1, 5),
        ("d = {1: }", "unexpected '}' (expected an expression)", 1, 9),
        ("d = {1: 2, 3}", "expected ':'", 1, 13),
        ("try:\n    pass\nexcept:\n    pass\nexcept ValueError:\n    pass", "default 'except:' must be last", 3, 1),
        ("try:\n    pass\nx = 1", "unexpected name 'x' (expected 'except' or 'finally')", 3, 1),
                ("async def f():\n    pass", "async code (async/await) is " + NOT_OURS, 1, 1),
        ("x = await y", "async code (async/await) is " + NOT_OURS, 1, 5),
        ("from torch import *", "'from ... import *' is " + NOT_OURS, 1, 19),
        ("class A(B, **opts):\n    pass", "`**` in a class's keywords is " + NOT_OURS, 1, 12),
        ("class A:\n    def __getattribute__(self, n): pass", "defining __getattribute__ in a class is " + NOT_OURS, 2, 5),
        ("class A:\n    __set_name__ = 1", "defining __set_name__ in a class is " + NOT_OURS, 2, 5),
        ("class A:\n    return 1", "'return' outside function", 2, 5),
        ("for x in y:\n    class A:\n        break", "'break' outside loop", 3, 9),
        ("@dec\nx = 1", "unexpected name 'x'", 2, 1),
        ("@\ndef f(): pass", "unexpected end of line (expected an expression)", 1, 2),
        ("for x in y:\n    pass\nelse:\n    break", "'break' outside loop", 4, 5),
    ],
    "targets": [
        ("f() = 1", "cannot assign to a function call", 1, 5),
        ("1 = x", "cannot assign to a literal", 1, 3),
        ("a + b = c", "cannot assign to an expression", 1, 7),
        ("(a, f()) = t", "cannot assign to a function call", 1, 10),
        ("x = f() = 1", "cannot assign to a function call", 1, 9),
        ("None = 1", "cannot assign to None", 1, 6),
        ("a < b = 1", "cannot assign to a comparison", 1, 7),
        ("f'{x}' = 1", "cannot assign to an f-string", 1, 8),
        ("f() += 1", "cannot use augmented assignment ('+=') on a function call", 1, 5),
        ("a, b += 1", "cannot use augmented assignment ('+=') on a tuple", 1, 6),
        ("[a] -= 1", "cannot use augmented assignment ('-=') on a list", 1, 5),
        ("for f() in x:\n    pass", "cannot assign to a function call", 1, 5),
        ("with a as f():\n    pass", "cannot assign to a function call", 1, 11),
        ("del f()", "cannot delete a function call", 1, 5),
        ("del 1", "cannot delete a literal", 1, 5),
    ],
    "calls and definitions": [
        ("f(a=1, b)", "positional argument follows keyword argument", 1, 8),
        ("f(a=1, a=2)", "keyword argument repeated: a", 1, 8),
        ("def f(a=1, b):\n    pass", "non-default argument follows default argument", 1, 12),
        ("def f(a, a):\n    pass", "duplicate argument 'a' in function definition", 1, 10),
        ("return 1", "'return' outside function", 1, 1),
        ("if x:\n    break", "'break' outside loop", 2, 5),
        ("continue", "'continue' not properly in loop", 1, 1),
        ("for x in y:\n    def f():\n        break", "'break' outside loop", 3, 9),
    ],
    "star-args and parameter lists": [
        ("def f(*): pass", "named arguments must follow bare *", 1, 7),
        ("def f(*, **k): pass", "named arguments must follow bare *", 1, 7),
        ("def f(*,): pass", "named arguments must follow bare *", 1, 7),
        ("lambda *: 0", "named arguments must follow bare *", 1, 8),
        ("def f(a, /, /): pass", "/ may appear only once", 1, 13),
        ("def f(*, a, /): pass", "/ must be ahead of *", 1, 13),
        ("def f(*a, /): pass", "/ must be ahead of *", 1, 11),
        ("def f(/): pass", "at least one argument must precede /", 1, 7),
        ("def f(*a, *b): pass", "* argument may appear only once", 1, 11),
        ("def f(*, a, *b): pass", "* argument may appear only once", 1, 13),
        ("lambda *a, *b: 0", "* argument may appear only once", 1, 12),
        ("def f(**k, a): pass", "arguments cannot follow var-keyword argument", 1, 12),
        ("def f(**k, *a): pass", "arguments cannot follow var-keyword argument", 1, 12),
        ("def f(**k, /): pass", "arguments cannot follow var-keyword argument", 1, 12),
        ("lambda **k, a: 0", "arguments cannot follow var-keyword argument", 1, 13),
        ("def f(**k=1): pass", "var-keyword argument cannot have default value", 1, 10),
        ("def f(*a=1): pass", "var-positional argument cannot have default value", 1, 9),
        ("def f(a=1, /, b): pass", "non-default argument follows default argument", 1, 15),
        ("def f(a, *a): pass", "duplicate argument 'a' in function definition", 1, 11),
        ("def f(a, **a): pass", "duplicate argument 'a' in function definition", 1, 12),
        ("def f(*, a, a): pass", "duplicate argument 'a' in function definition", 1, 13),
        ("f(**d, *a)", "iterable argument unpacking follows keyword argument unpacking", 1, 8),
        ("f(**d, a)", "positional argument follows keyword argument unpacking", 1, 8),
        ("f(*a, b=1, c)", "positional argument follows keyword argument", 1, 12),
        ("f(*)", "unexpected ')' (expected an expression)", 1, 4),
        ("f(**)", "unexpected ')' (expected an expression)", 1, 5),
        ("f(x=*a)", "unexpected '*' (expected an expression)", 1, 5),
        ("a + *b", "unexpected '*' (expected an expression)", 1, 5),
        ("from torch import *", "'from ... import *' is " + NOT_OURS, 1, 19),
    ],
    "starred targets and displays": [
        ("*a = b", "starred assignment target must be in a list or tuple", 1, 1),
        ("a, *b, *c = d", "multiple starred expressions in assignment", 1, 1),
        ("[a, *b, *c] = d", "multiple starred expressions in assignment", 1, 1),
        ("a, (*b, *c) = d", "multiple starred expressions in assignment", 1, 4),
        ("for *a in b: pass", "starred assignment target must be in a list or tuple", 1, 5),
        ("for a, *b, *c in d: pass", "multiple starred expressions in assignment", 1, 5),
        ("[x for *a in b]", "starred assignment target must be in a list or tuple", 1, 8),
        ("a, (*b) = d", "cannot use starred expression here", 1, 5),
        ("(*a)", "cannot use starred expression here", 1, 2),
        ("print((*a))", "cannot use starred expression here", 1, 8),
        ("del *a", "cannot delete starred", 1, 5),
        ("del a, *b", "cannot delete starred", 1, 8),
        ("[*a for a in b]", "iterable unpacking cannot be used in comprehension", 1, 2),
        ("{*a for a in b}", "iterable unpacking cannot be used in comprehension", 1, 2),
        ("(*a for a in b)", "iterable unpacking cannot be used in comprehension", 1, 2),
        ("{**d for d in b}", "dict unpacking cannot be used in dict comprehension", 1, 2),
        ("*a += 1", "cannot use augmented assignment ('+=') on a starred expression", 1, 4),
        ("[*a if b else c]", "unexpected 'if' (expected ',' or ']')", 1, 5),
        ("f'{*a}'", "f-string: cannot use starred expression here", 1, 4),
    ],
    "f-strings": [
        ("f'{}'", "f-string: empty expression not allowed", 1, 3),
        ("f'{ }'", "f-string: empty expression not allowed", 1, 3),
        ("f'{x'", "f-string: expecting '}'", 1, 3),
        ("f'{x:'", "f-string: expecting '}'", 1, 6),
        ("f'}'", "f-string: single '}' is not allowed", 1, 3),
        ("f'{x!z}'", "f-string: invalid conversion character 'z': expected 's', 'r', or 'a'", 1, 6),
        ("f'{x y}'", "unexpected name 'y' (expected ',' or '}')", 1, 6),
        ("f'{x +}'", "unexpected '}' (expected an expression)", 1, 7),
        ("f'{a:{b:{c}}}'", "f-string: expressions nested too deeply", 1, 9),
        ("f'{x # c}'", "f-string expression part cannot include '#'", 1, 6),
        ("f'{\"\\n\"}'", "f-string expression part cannot include a backslash", 1, 4),
        ("x = 1\nprint(f'a {x)} b')", "unmatched ')'", 2, 13),
        ("f'{lambda: 1}'", "unexpected '}' (expected a name, '*', '**', '/' or ':')", 1, 10),
    ],
    # CPython's messages and places for what it refuses by name; its "invalid syntax" is said in gradcli's words
    "assignment expressions": [
        ('x := 1', "unexpected ':=' (expected ',', ':' or end of line)", 1, 3),
        ('(a.b := 1)', 'cannot use assignment expressions with attribute', 1, 2),
        ('(a[0] := 1)', 'cannot use assignment expressions with subscript', 1, 2),
        ('((a, b) := 1)', 'cannot use assignment expressions with tuple', 1, 2),
        ('(a + b := 1)', 'cannot use assignment expressions with expression', 1, 2),
        ('(f() := 1)', 'cannot use assignment expressions with function call', 1, 2),
        ('(True := 1)', 'cannot use assignment expressions with True', 1, 2),
        ('(1 := 1)', 'cannot use assignment expressions with literal', 1, 2),
        ('[x for x in [1] if y := x]', "expected ']'", 1, 22),
        ('def f(x := 1): pass', "unexpected ':=' (expected ',', ':' or ')')", 1, 9),
        ('f(a=x := 1)', "unexpected ':=' (expected ',' or ')')", 1, 7),
        ('a[1:x := 2]', "unexpected ':=' (expected ',', ':' or ']')", 1, 7),
        ('{x := 1: 2}', "unexpected ':' (expected ',' or '}')", 1, 8),
        ('x = y := 1', "unexpected ':=' (expected ',' or end of line)", 1, 7),
        ('y := f(x)', "unexpected ':=' (expected ',', ':' or end of line)", 1, 3),
        ('def f():\n    x := 1', "unexpected ':=' (expected ',', ':' or end of line)", 2, 7),
        ('lambda: x := 1', "unexpected ':=' (expected ',', ':' or end of line)", 1, 11),
        ('assert x := 1', "unexpected ':=' (expected ',' or end of line)", 1, 10),
        ('return x := 1', "unexpected ':=' (expected ',' or end of line)", 1, 10),
        ('x, y := 1, 2', "unexpected ':=' (expected ',', ':' or end of line)", 1, 6),
        ('with x := 1: pass', "unexpected ':=' (expected ',', ':' or 'as')", 1, 8),
        ('for x in y := [1]: pass', "unexpected ':=' (expected ',' or ':')", 1, 12),
        ('del (x := 1)', 'cannot delete a named expression', 1, 5),
        ('(x := 1) = 2', 'cannot assign to a named expression', 1, 10),
        ('(None := 1)', 'cannot use assignment expressions with None', 1, 2),
        ('(x := 1 := 2)', "unexpected ':=' (expected ',' or ')')", 1, 9),
        ('(x := y := 2)', "unexpected ':=' (expected ',' or ')')", 1, 9),
        ('foo(x = y := 2)', "unexpected ':=' (expected ',' or ')')", 1, 11),
        ('(yield := 1)', "unexpected ':='", 1, 8),
        ('(x.y := 1) or (a.b := 2)', 'cannot use assignment expressions with attribute', 1, 2),
    ],
    "match statements": [
        ('match x:\n    case y: pass\n    case 1: pass', "name capture 'y' makes remaining patterns unreachable", 2, 10),
        ('match x:\n    case _: pass\n    case 1: pass', 'wildcard makes remaining patterns unreachable', 2, 10),
        ('match x:\n    case (y): pass\n    case 1: pass', "name capture 'y' makes remaining patterns unreachable", 2, 11),
        ('match x:\n    case y | 1: pass', "name capture 'y' makes remaining patterns unreachable", 2, 10),
        ('match x:\n    case _ | 1: pass', 'wildcard makes remaining patterns unreachable', 2, 10),
        ('match x:\n    case 1 | y: pass', 'alternative patterns bind different names', 2, 14),
        ('match x:\n    case [a, a]: pass', "multiple assignments to name 'a' in pattern", 2, 14),
        ('match x:\n    case [a, *b, *c]: pass', 'multiple starred names in sequence pattern', 2, 10),
        ('match x:\n    case *a: pass', "expected ','", 2, 12),
        ('match x:\n    case a | [b]: pass', "name capture 'a' makes remaining patterns unreachable", 2, 10),
        ('match x:\n    case {**_}: pass', 'invalid syntax', 2, 13),
        ('match x:\n    case {"a": 1, "a": 2}: pass', "mapping pattern checks duplicate key ('a')", 2, 10),
        ('match x:\n    case {a: 1}: pass', "unexpected ':'", 2, 12),
        ('match x:\n    case {f(): 1}: pass', "unexpected '('", 2, 12),
        ('match x:\n    case f(y=1, 2): pass', 'positional patterns follow keyword patterns', 2, 17),
        ('match x:\n    case f(y=1, y=2): pass', 'attribute name repeated in class pattern: y', 2, 19),
        ('match x:\n    case 1 + 2: pass', 'imaginary number required in complex literal', 2, 14),
        ('match x:\n    case 1j + 1: pass', 'real number required in complex literal', 2, 10),
        ('match x:\n    case 1j + 2j: pass', 'real number required in complex literal', 2, 10),
        ('match x:\n    case f"a": pass', 'patterns may only match literals and attribute lookups', 2, 10),
        ('match x:\n    case 1 as _: pass', "cannot use '_' as a target", 2, 15),
        ('match x:\n    case 1 as a.b: pass', "unexpected '.' (expected ',' or ':')", 2, 16),
        ('match x:\n    case a as a: pass', "multiple assignments to name 'a' in pattern", 2, 10),
        ('match x:\n    case [*_, *_]: pass', 'multiple starred names in sequence pattern', 2, 10),
        ('match x:\n    case {**rest, "a": 1}: pass', 'invalid syntax', 2, 19),
        ('match x:\npass', "expected an indented block after 'match' statement on line 1", 2, 1),
        ('match x:\n    pass', "expected 'case'", 2, 5),
        ('match x: pass', "unexpected 'pass' (expected end of line)", 1, 10),
        ('match x', "unexpected end of line (expected ',' or ':')", 1, 8),
        ('match x:\n    case 1:\n    pass', "expected an indented block after 'case' statement on line 2", 3, 5),
        ('match:\n    case 1: pass', 'unexpected end of line (expected an expression)', 1, 7),
        ('match x:\n    case 1: break', "'break' outside loop", 2, 13),
        ('match x:\n    case _ | _: pass', 'wildcard makes remaining patterns unreachable', 2, 10),
        ('match x:\n    case y:\n        pass\n    case _:\n        pass', "name capture 'y' makes remaining patterns unreachable", 2, 10),
        ('match x:\n    case (a | b): pass', "name capture 'a' makes remaining patterns unreachable", 2, 11),
        ('match x:\n    case A(x=1, x=2): pass', 'attribute name repeated in class pattern: x', 2, 19),
        ('match x:\n    case A(a, b=1, c): pass', 'positional patterns follow keyword patterns', 2, 20),
        ('match x:\n    case 1: pass\n    case 2: pass\nelse: pass', "unexpected 'else'", 4, 1),
        ('match x:\n    case {1: _, 1: _}: pass', 'mapping pattern checks duplicate key (1)', 2, 10),
        ('match x:\n    case {True: _, 1: _}: pass', 'mapping pattern checks duplicate key (1)', 2, 10),
        ('match x:\n    case {-0: _, 0: _}: pass', 'mapping pattern checks duplicate key (0)', 2, 10),
        ('match x:\n    case {**r, **s}: pass', 'invalid syntax', 2, 16),
        ('match x:\n    case a.b.c | d: pass', 'alternative patterns bind different names', 2, 18),
        ('match x:\n    case [a] | (b): pass\n', 'alternative patterns bind different names', 2, 17),
    ],
}

INVALID_CASES = [pytest.param(*case, id=f"{construct}: {case[0][:40]!r}")
                 for construct, cases in INVALID.items() for case in cases]


@pytest.mark.parametrize("source, message, line, col", INVALID_CASES)
def test_invalid_snippet_is_refused_with_its_position(source, message, line, col):
    with pytest.raises(ScriptSyntaxError) as info:
        parse(source, "bad.grad")
    err = info.value
    assert (err.message, err.line, err.col) == (message, line, col)
    # CPython's subclasses of SyntaxError for the indentation errors
    expected_kind = ("TabError" if message.startswith("inconsistent use of tabs") else "IndentationError"
                     if "indent" in message.split("(")[0] else "SyntaxError")
    assert err.filename == "bad.grad" and err.kind == expected_kind
    assert err.source_line == source.split("\n")[line - 1].replace("\0", " ")
    assert "\n" not in err.message


def test_error_renders_with_a_caret():
    with pytest.raises(ScriptSyntaxError) as info:
        parse("x = 1\ny = (1 + )\n", "s.grad")
    assert info.value.render() == ("s.grad:2:10: SyntaxError: unexpected ')' (expected an expression)\n"
                                   "    y = (1 + )\n"
                                   "             ^")


# ================================================================ robustness

# The long texts are built when their test runs (held in the parameter list, tens of MB would stay in the
# test worker for the whole run).
@pytest.mark.parametrize("source", [
    b"x = '\xff\xfe'\n\xc3(\n".decode("utf-8", errors="replace"),
    "x = 1\0\ny = 2",
    "if x:\n\t  \ty = 1\n",
    "\t\n  \n",
    "",
    lambda: "x = '" + "a" * 10_000_000 + "'",
    lambda: "x = '" + "a\\'" * 3_000_000,
    lambda: "x = '''" + "a'\\\n" * 2_000_000,
    lambda: "# " + "c" * 10_000_000,
    lambda: "x = " + "$" * 10_000_000,
    lambda: "(" * 100_000,
    lambda: ")" * 100_000,
    "[" * 3000 + "]" * 3000,
    lambda: "-" * 100_000,
    "f'" + "{" * 5000 + "'",
    "x = " + "1 + " * 20_000 + "1",
    "\\",
    "'''",
    "f'{'",
    "if x:\n" * 2000,
    "\ufeffx = 1",
    "x = 1\r\ny = 2\rz = 3",
    lambda: "f'" + "{x}" * 100_000 + "'",
    lambda: 'f"""' + "{x}\n" * 50_000 + '"""',
    lambda: "f'" + "{{" * 300_000 + "'",
    lambda: "'" + "\\n" * 300_000 + "'",
])
def test_any_input_parses_or_raises_a_syntax_error(source):
    if callable(source):
        source = source()
    try:
        result = parse(source)
    except ScriptSyntaxError as err:
        assert err.line >= 1 and err.col >= 1
        assert "\n" not in err.message
    else:
        assert isinstance(result, S.Module)


PIECES = list("abxy_01239.,:;=+-*/%@<>!&|^~()[]{}'\"#\\ \t\nfrLRjJ") + [
    "if ", "else", "for ", " in ", "not ", "def ", "return", "while ", "import ", "lambda", "f'{", "}'",
    "    ", "'''", "\n    ", "torch", "**", "x.y", "0x", "1e", "\\N{", "!r", ":>", "{{", "}}"]
PYTHONISH = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
SNIPPETS = [s for snippets in VALID.values() for s in snippets]
SEED = "\n".join(SNIPPETS)
STARTS = [0]                        # where each snippet starts in SEED
for _snippet in SNIPPETS[:-1]:
    STARTS.append(STARTS[-1] + len(_snippet) + 1)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PYTHONISH)
def test_fuzz_random_text(source):
    try:
        parse(source)
    except ScriptSyntaxError as err:
        assert err.line >= 1 and err.col >= 1 and "\n" not in err.message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(SEED)), st.integers(0, 12), PYTHONISH)
def test_fuzz_mutated_snippets(at, cut, insert):
    """A mutation at `at` in the snippets' text, parsed with the snippets on either side of it (the whole
    text at every example took 17 s, and a mutation's syntax error is found within its neighbours)."""
    i = bisect.bisect_right(STARTS, at) - 1
    lo = STARTS[max(i - 1, 0)]
    hi = STARTS[i + 2] - 1 if i + 2 < len(STARTS) else len(SEED)
    source = SEED[lo:at] + insert + SEED[at + cut:max(hi, at + cut)]
    try:
        parse(source)
    except ScriptSyntaxError as err:
        assert err.line >= 1 and err.col >= 1 and "\n" not in err.message


def test_a_10000_line_script_parses():
    block = ("w = torch.tensor([0.5, -1.0], requires_grad=True)\n"
             "for step in range(3):\n"
             "    loss = ((w * x - y) ** 2).sum() / n\n"
             "    loss.backward()\n"
             "    with torch.no_grad():\n"
             "        w -= lr * w.grad\n"
             "    w.grad.zero_()\n"
             "    if step % 2 == 0:\n"
             "        print(f\"step {step}: loss={loss.item():.4f}\", w[0, 1:])\n"
             "print(w)\n")
    module = parse(block * 1000)
    assert len(module.body) == 3000
    assert module.body[-1].line == 10_000


# ================================================================ the conformance scripts

CONFORMANCE_SCRIPTS = sorted(CONFORMANCE.glob("*.grad")) if CONFORMANCE.is_dir() else []


@pytest.mark.skipif(not CONFORMANCE_SCRIPTS, reason="shared/conformance/cases is not beside the repository")
@pytest.mark.parametrize("path", CONFORMANCE_SCRIPTS, ids=lambda p: p.stem)
def test_conformance_script_parses_as_cpython_does(path):
    assert_like_python(path.read_text(encoding="utf-8"))


# ================================================================ loading

def run_python(code: str, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env}, cwd=REPO)


def test_importing_the_parser_does_not_import_lark():
    result = run_python("import sys, gradcli.language.parser; print('lark' in sys.modules)")
    assert result.stdout.strip() == "False", result.stderr


def test_grammar_loads_once_per_process(monkeypatch):
    parse("x = 1")

    def load_again():
        raise AssertionError("the grammar was loaded a second time")

    monkeypatch.setattr(parser, "_load_tables", load_again)
    assert parse("y = 2").body[0].targets == [N("y")]


@pytest.fixture(scope="module")
def cold_then_warm(tmp_path_factory):
    """Two processes parsing with the same cache folder, empty at first: (the folder, the table file the
    first wrote and its mtime then, the first's result, the second's). Building the tables costs a second
    of CPU: the tests of the cache's writing, reading and keeping Lark unimported share these two runs."""
    folder = tmp_path_factory.mktemp("cold")
    code = ("import sys, gradcli.language.parser as p; m = p.parse('x = f\"{1 + 2}\"'); "
            "print(m.body[0].targets[0].id, 'lark' in sys.modules)")
    first = run_python(code, XDG_CACHE_HOME=str(folder))
    assert first.stdout.split()[0] == "x", first.stderr
    (cached,) = (folder / "gradcli").iterdir()
    stamp = cached.stat().st_mtime_ns
    second = run_python(code, XDG_CACHE_HOME=str(folder))
    return folder, cached, stamp, first, second


def test_parse_tables_are_cached_and_reused(cold_then_warm):
    folder, cached, stamp, first, second = cold_then_warm
    assert first.stdout.split()[0] == "x", first.stderr
    assert second.stdout.split()[0] == "x", second.stderr
    assert [p.name for p in (folder / "gradcli").iterdir()] == [cached.name]
    assert cached.stat().st_mtime_ns == stamp


@pytest.fixture
def quick_build(monkeypatch, cold_then_warm):
    """tables.build made cheap for the tests of the cache's bookkeeping: it hands back (a copy of) the tables
    a real process built and wrote in cold_then_warm, and counts its calls. Building costs a second of CPU;
    what these tests check is when gradcli builds and what it writes, reads and removes. (The tables a real
    build makes are compared with the cached ones in test_tables_from_the_cache_equal_freshly_built_ones.)"""
    good = tables.decode(cold_then_warm[1].read_bytes())
    calls = []

    def build(grammar, builder_type):
        calls.append(grammar)
        return tables.decode(tables.encode(good))

    monkeypatch.setattr(tables, "build", build)
    return calls


def _load_with_cache(monkeypatch, folder) -> dict:
    """The tables as a process whose XDG_CACHE_HOME is `folder` loads them."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return tables.load(parser.grammar_path().read_text(encoding="utf-8"), Builder)


def test_writing_new_tables_removes_stale_ones(tmp_path, monkeypatch, quick_build):
    """The newest tables of other versions stay (gradcli versions used side by side would otherwise rebuild
    each other's at every run); older ones, and an older cache layout, go."""
    folder = tmp_path / "gradcli"
    folder.mkdir()
    versions = [folder / f"grammar-0123456789abcdef012{i}.tables" for i in range(tables.KEPT_OTHERS + 2)]
    for age, path in enumerate(versions):
        path.write_bytes(b"tables of another grammar")
        os.utime(path, ns=(10**18 - age * 10**12, 10**18 - age * 10**12))     # versions[0] is the newest
    stale = versions[-1]
    older_layout = folder / "grammar-0123456789abcdef0123.lark-cache"     # what gradcli once wrote
    older_layout.write_bytes(b"lark's own cache")
    (folder / "notes.txt").write_text("not a cache file")
    _load_with_cache(monkeypatch, tmp_path)
    assert len(quick_build) == 1
    current = tables.cache_path(parser.grammar_path().read_text(encoding="utf-8")).name
    kept = [p.name for p in versions[:tables.KEPT_OTHERS]]
    assert sorted(p.name for p in folder.iterdir()) == sorted([current, *kept, "notes.txt"])
    (folder / current).unlink()
    (folder / "grammar-stuck.tables").mkdir()     # cannot be unlinked: skipped quietly
    os.utime(folder / "grammar-stuck.tables", ns=(0, 0))
    _load_with_cache(monkeypatch, tmp_path)
    assert len(quick_build) == 2
    assert sorted(p.name for p in folder.iterdir()) == sorted([current, *kept, "grammar-stuck.tables", "notes.txt"])
    # Loading cached tables writes nothing, so it leaves the folder as it is.
    stale.write_bytes(b"tables of an older grammar")
    _load_with_cache(monkeypatch, tmp_path)
    assert len(quick_build) == 2
    assert stale.exists()


def test_warm_cache_parses_without_importing_lark(cold_then_warm):
    _, _, _, first, second = cold_then_warm
    assert first.stdout.split() == ["x", "True"], first.stderr       # built the tables with lark
    assert second.stdout.split() == ["x", "False"], second.stderr


@pytest.fixture(scope="module")
def cache_file(cold_then_warm) -> Path:
    """The table file a process with an empty cache folder writes (for the tests that damage it: copies)."""
    return cold_then_warm[1]


@pytest.mark.parametrize("damage", [b"", b"not a table file", b"\x80\x04K\x01.", None])
def test_damaged_cache_is_rebuilt(tmp_path, damage, cache_file, monkeypatch, quick_build):
    (tmp_path / "gradcli").mkdir()
    cached = tmp_path / "gradcli" / cache_file.name
    good = cache_file.read_bytes()
    if damage is None:          # intact tables for another grammar text
        data = tables.decode(good)
        data["grammar"] = "start: NAME"
        damage = tables.encode(data)
    cached.write_bytes(damage)
    loaded = _load_with_cache(monkeypatch, tmp_path)
    assert len(quick_build) == 1
    assert parser._Frontend(loaded).parse(parser._normalize("y = 2\n"), "file_input").body[0].targets == [N("y")]
    assert tables.decode(cached.read_bytes()) == loaded           # rewritten


def test_tables_from_the_cache_equal_freshly_built_ones(monkeypatch, cold_then_warm):
    grammar = parser.grammar_path().read_text(encoding="utf-8")
    built = _load_with_cache(monkeypatch, cold_then_warm[0])        # what a real process built and wrote
    # Lark numbers states and rules differently from one build to the next, so compare what
    # the tables do: a fresh build parses every construct to the same tree as the cached one.
    script = (Path(__file__).parent.parent / "examples" / "tutorial.grad").read_text() + (
        "def f(a, b=2):\n    return a if b else -a ** 2\n"
        "for i in range(3):\n    while i < 2:\n        i += 1\n"
        "    if i:\n        pass\n    elif i > 1:\n        break\n    else:\n        continue\n"
        "with torch.no_grad():\n    y = x[0, 1:, ..., None] @ x.T\n"
        "z = not (a < b <= c) and d or e is not None\nprint(f'{z!r:>10} {[1, 2][0]}')\n"
        "from torch import nn as n, autograd\nassert x, 'msg'\ndel x[0], y\n")
    cached = parser._Frontend(built).parse(parser._normalize(script), "file_input")
    fresh = parser._Frontend(tables.build(grammar, Builder)).parse(parser._normalize(script), "file_input")
    assert repr(fresh) == repr(cached)


def test_unwritable_cache_dir_still_parses(tmp_path, monkeypatch, quick_build):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    loaded = _load_with_cache(monkeypatch, blocker)
    assert len(quick_build) == 1 and blocker.read_text() == "not a directory"
    assert len(parser._Frontend(loaded).parse(parser._normalize("x = 1\n"), "file_input").body) == 1


def test_cache_key_follows_grammar_and_table_layout(monkeypatch):
    grammar = parser.grammar_path().read_text()
    base = tables.cache_path(grammar)
    assert tables.cache_path(grammar + "\n") != base
    assert tables.cache_path(grammar) == base
    monkeypatch.setattr(tables, "FORMAT", tables.FORMAT + "-next")
    assert tables.cache_path(grammar) != base
    monkeypatch.undo()
    monkeypatch.setattr(tables, "_own_source", lambda: b"tables.py as edited")
    assert tables.cache_path(grammar) != base


def test_grammar_is_lalr1_without_conflicts():
    # Lark resolves a shift/reduce conflict silently as a shift; in debug mode it logs each one.
    import lark

    log = io.StringIO()
    handler = logging.StreamHandler(log)
    level = lark.logger.level
    lark.logger.addHandler(handler)
    lark.logger.setLevel(logging.DEBUG)
    try:
        lark.Lark(parser.grammar_path().read_text(), debug=True, postlex=Layout(), **tables.LARK_OPTIONS)
    finally:
        lark.logger.removeHandler(handler)
        lark.logger.setLevel(level)
    assert "conflict" not in log.getvalue().lower(), log.getvalue()


def test_grammar_is_found_in_the_source_checkout():
    assert parser.grammar_path() == REPO / "grammar" / "gradcli.lark"


@pytest.mark.parametrize("source", [
    "x = 1 if y else'a'\n", "z = 'a' in'abc'\n", "w = f'{1}' if not'' else r''\n",
    "u = u'x' + f\"{u!r}\" + rf'{u}'\n",
])
def test_keyword_or_name_right_before_a_quote(source):
    # Names are scanned first unless a quote follows, when they may be a string prefix instead.
    assert_like_python(source)


def test_keyword_before_an_unterminated_string():
    with pytest.raises(ScriptSyntaxError) as info:
        parse("for step in''' range(5):\n    pass\n")
    assert (info.value.line, info.value.col, info.value.message) == (1, 12, "unterminated triple-quoted string")


@pytest.mark.parametrize("source", ["import os", "import numpy as np", "from os import path", "import torch, sys",
                                    "import torch.utils", "from math.x import y"])
def test_imports_of_other_modules_parse(source):
    # they are refused when they run, with an ImportError (tests/test_sandbox.py), as Python
    # refuses a missing module
    parse(source)


@pytest.mark.parametrize("source", [lambda: "x = '''" + "a'\\\n" * 2_000_000,
                                    lambda: "x = '" + "a\\'" * 3_000_000])
def test_an_unclosed_huge_literal_costs_little_memory(source, tmp_path):
    """The string loops are possessive and error lines are found without splitting the script: these
    8 MB scripts took 1.3 GB and 0.6 GB before; now a few tens of MB above the interpreter's own."""
    script = tmp_path / "s.grad"
    script.write_text(source())
    probe = ("import resource, sys, io\n"
             "from gradcli.session import Session\nfrom gradcli.errors import ScriptError\n"
             "text = open(sys.argv[1]).read()\nbase = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
             "try:\n    Session(out=io.StringIO(), err=io.StringIO()).run_source(text, 's.grad')\n"
             "except ScriptError as e:\n    print(e.message)\n"
             "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(script)], capture_output=True, text=True, timeout=60)
    message, grown = done.stdout.splitlines()
    assert message.startswith("unterminated")
    assert int(grown) < 150, f"{grown} MiB"


@pytest.mark.parametrize("source", ["", "a", "a\n", "a\nb", "a\n\nb\n", "x\x0cy\nz\x1c", "\n\n"])
def test_error_lines_are_counted_at_newlines_only(source):
    from gradcli.errors import source_line
    lines = source.split("\n")
    for n in range(0, len(lines) + 2):
        assert source_line(source, n) == (lines[n - 1] if 0 < n <= len(lines) else None)


def test_a_million_digit_literal_costs_little_memory():
    """The digit loops are possessive: this took 283 MB of regex state before, now next to nothing."""
    probe = ("import resource, io\nfrom gradcli.session import Session\nfrom gradcli.errors import ScriptError\n"
             "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
             "try:\n    Session(out=io.StringIO(), err=io.StringIO()).run_source('x = ' + '9' * 10**6, 's.grad')\n"
             "except ScriptError as e:\n    print(e.message[:22])\n"
             "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    message, grown = done.stdout.splitlines()
    assert message == "Exceeds the limit (430" and int(grown) < 60, done.stdout


@pytest.mark.parametrize("snippet", [
    "\ufb01le = 3\nprint(file, \ufb01le)\n\uff38 = 2\nprint(X)",
    "caf\u00e9 = 1\nprint(cafe\u0301)\nb\u0304_t = 2\nb_t = 3\nprint(b\u0304_t, b_t)",
    "def f(\u1fb1=1, *\u03b2, \u03b5=1e-5):\n    return \u1fb1, \u03b2, \u03b5\nprint(f(2, 3, \u03b5=0.1), f(\u1fb1=4))",
    "class \u039b:\n    x\u0302 = 1\n    def \u0192(self):\n        return self.x\u0302\nprint(\u039b().\u0192(), \u039b.x\u0302, "
    "f'{\u039b.x\u0302}', [x\u0302 * 2 for x\u0302 in (1, 2)])",
    "\u2118 = 5\nprint(\u2118, \u2118 + 1)",
])
def test_unicode_names_are_pythons(snippet):
    """Names with letters beyond ASCII and combining marks (`b̄_t`, as course notebooks write them) are
    normalised (NFKC) as CPython normalises them: `ﬁle` is `file`, a composed and a decomposed `é` agree."""
    from conftest import cpython_output, gradcli_output
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)
