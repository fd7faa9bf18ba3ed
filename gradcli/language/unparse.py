"""An expression's text as CPython 3.11 writes an annotation under `from __future__ import annotations`.

CPython does not keep the annotation's source: it writes the expression back from its tree
(Python/ast_unparse.c), with its own spacing, the fewest parentheses its precedence needs, and the repr of
each literal. This writes gradcli's syntax tree the same way. Only scripts that import the feature load it.
"""

from __future__ import annotations

import re

from gradcli.language import syntax

# precedence levels, loosest first (ast_unparse.c's PR_* values)
TUPLE, TEST, OR, AND, NOT, CMP, BOR, BXOR, BAND, SHIFT, ARITH, TERM, FACTOR, POWER, AWAIT, ATOM = range(16)

_BINARY = {"add": ("+", ARITH), "sub": ("-", ARITH), "mul": ("*", TERM), "matmul": ("@", TERM),
           "truediv": ("/", TERM), "mod": ("%", TERM), "floordiv": ("//", TERM), "pow": ("**", POWER),
           "lshift": ("<<", SHIFT), "rshift": (">>", SHIFT), "or_": ("|", BOR), "xor": ("^", BXOR),
           "and_": ("&", BAND)}
_UNARY = {"not_": ("not ", NOT), "neg": ("-", FACTOR), "pos": ("+", FACTOR), "invert": ("~", FACTOR)}
_COMPARE = {"lt": "<", "gt": ">", "eq": "==", "ne": "!=", "le": "<=", "ge": ">=", "in": "in", "not_in": "not in",
            "is": "is", "is_not": "is not"}


def unparse(node, private: str | None = None) -> str:
    """The annotation's text. `private` is the private-name prefix of the class it is in ('_Net'): the tree
    holds `__x` mangled (`_Net__x`), and CPython writes the name as the script spelt it."""
    text = _expr(node, TEST)
    if private is not None and private + "__" in text:
        text = re.sub(r"\b" + re.escape(private) + r"(__\w)", r"\1", text)
    return text


def _paren(text: str, level: int, own: int) -> str:
    return f"({text})" if level > own else text


def _expr(node, level: int) -> str:
    kind = node.__class__
    if kind is syntax.Name:
        return node.id
    if kind is syntax.Constant:
        return _constant(node.value)
    if kind is syntax.Attribute:
        value = _expr(node.value, ATOM)
        if node.value.__class__ is syntax.Constant and node.value.value.__class__ is int:
            value += " "        # 1 .real: `1.real` would read as a float
        return f"{value}.{node.attr}"
    if kind is syntax.Subscript:
        return f"{_expr(node.value, ATOM)}[{_expr(node.index, TUPLE)}]"
    if kind is syntax.BinOp:
        op, own = _BINARY[node.op]
        right_assoc = node.op == "pow"
        text = f"{_expr(node.left, own + right_assoc)} {op} {_expr(node.right, own + (not right_assoc))}"
        return _paren(text, level, own)
    if kind is syntax.UnaryOp:
        op, own = _UNARY[node.op]
        return _paren(op + _expr(node.operand, own), level, own)
    if kind is syntax.BoolOp:
        own = AND if node.op == "and" else OR
        return _paren(f" {node.op} ".join(_expr(v, own + 1) for v in node.values), level, own)
    if kind is syntax.Compare:
        text = _expr(node.left, CMP + 1) + "".join(
            f" {_COMPARE[op]} {_expr(c, CMP + 1)}" for op, c in zip(node.ops, node.comparators))
        return _paren(text, level, CMP)
    if kind is syntax.IfExp:
        text = f"{_expr(node.body, TEST + 1)} if {_expr(node.test, TEST + 1)} else {_expr(node.orelse, TEST)}"
        return _paren(text, level, TEST)
    if kind is syntax.Tuple:
        if not node.elts:
            return "()"
        text = ", ".join(_expr(e, TEST) for e in node.elts) + ("," if len(node.elts) == 1 else "")
        return _paren(text, level, TUPLE)
    if kind is syntax.List:
        return "[" + ", ".join(_expr(e, TEST) for e in node.elts) + "]"
    if kind is syntax.Set:
        return "{" + ", ".join(_expr(e, TEST) for e in node.elts) + "}" if node.elts else "{*()}"
    if kind is syntax.Dict:
        return "{" + ", ".join(f"**{_expr(v, BOR)}" if k is None else f"{_expr(k, TEST)}: {_expr(v, TEST)}"
                               for k, v in zip(node.keys, node.values)) + "}"
    if kind is syntax.Starred:
        return "*" + _expr(node.value, BOR)
    if kind is syntax.Slice:
        text = (_expr(node.lower, TEST) if node.lower else "") + ":" + (_expr(node.upper, TEST) if node.upper else "")
        return text + (":" + _expr(node.step, TEST) if node.step else "")
    if kind is syntax.Call:
        return f"{_expr(node.func, ATOM)}({_arguments(node)})"
    if kind is syntax.Lambda:
        # (CPython writes no space after `lambda` unless a positional parameter comes first: `lambda*a: 0`)
        positional = any(p.kind in syntax.POSITIONAL_KINDS for p in node.params)
        head = ("lambda " if positional else "lambda") + _params(node.params)
        return _paren(f"{head}: " + _expr(node.body, TEST), level, TEST)
    if kind in (syntax.ListComp, syntax.SetComp, syntax.GeneratorExp, syntax.DictComp):
        return _comprehension(node)
    if kind is syntax.JoinedStr:
        return "f" + repr(_fstring_body(node))
    if kind is syntax.Yield:
        return _paren("yield" + (" " + _expr(node.value, TEST) if node.value is not None else ""), level, ATOM)
    if kind is syntax.YieldFrom:
        return _paren("yield from " + _expr(node.value, TEST), level, ATOM)
    raise NotImplementedError(f"gradcli does not implement the text of a {kind.__name__} annotation")


def _constant(value) -> str:
    if value is Ellipsis:
        return "..."
    if value.__class__ is float and value in (float("inf"), float("-inf")):
        return "1e309" if value > 0 else "-1e309"
    return repr(value)


def _arguments(node) -> str:
    if len(node.args) == 1 and not node.keywords and node.args[0].__class__ is syntax.GeneratorExp:
        return _comprehension(node.args[0])[1:-1]        # f(x for x in y): the call's parentheses serve
    parts = [_expr(a, TEST) for a in node.args]
    parts += [f"**{_expr(k.value, TEST)}" if k.name is None else f"{k.name}={_expr(k.value, TEST)}"
              for k in node.keywords]
    return ", ".join(parts)


def _params(params: list) -> str:
    out = []
    star = False
    for i, p in enumerate(params):
        if p.kind == "keyword_only" and not star:
            out.append("*")
            star = True
        if p.kind == "var_positional":
            out.append("*" + p.name)
            star = True
        elif p.kind == "var_keyword":
            out.append("**" + p.name)
        else:
            out.append(p.name + ("=" + _expr(p.default, TEST) if p.default is not None else ""))
        if p.kind == "positional_only" and (i + 1 == len(params) or params[i + 1].kind != "positional_only"):
            out.append("/")
    return ", ".join(out)


def _comprehension(node) -> str:
    clauses = "".join(
        f" for {_expr(c.target, TUPLE)} in {_expr(c.iter, TEST + 1)}" + "".join(
            f" if {_expr(i, TEST + 1)}" for i in c.ifs) for c in node.generators)
    if node.__class__ is syntax.DictComp:
        return "{" + f"{_expr(node.key, TEST)}: {_expr(node.value, TEST)}{clauses}" + "}"
    opener, closer = {syntax.ListComp: "[]", syntax.SetComp: "{}", syntax.GeneratorExp: "()"}[node.__class__]
    return opener + _expr(node.elt, TEST) + clauses + closer


def _fstring_body(node) -> str:
    out = []
    for part in node.parts:
        if part.__class__ is str:
            out.append(part.replace("{", "{{").replace("}", "}}"))
            continue
        inner = _expr(part.value, TEST + 1)
        field = "{" + (" " if inner.startswith("{") else "") + inner
        if part.conversion is not None:
            field += "!" + part.conversion
        if part.format_spec is not None:
            field += ":" + _fstring_body(part.format_spec)
        out.append(field + "}")
    return "".join(out)
