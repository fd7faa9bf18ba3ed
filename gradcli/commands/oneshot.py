"""`gradcli grad | jacobian | hessian EXPR NAME=VALUE...`: derivatives of one expression given on the command line."""

from __future__ import annotations

import argparse
import keyword
import re
import sys
import time

from gradcli.commands.common import report
from gradcli.errors import EXIT_OK, EXIT_USAGE, ScriptError, ScriptSyntaxError

# The file name errors in EXPR, --grad-output and --hvp carry; an input's value is "<NAME>".
EXPR_FILE = "<expr>"

_SHARED_EPILOG = """
EXPR and every VALUE are expressions of gradcli's language, evaluated in order (a VALUE may use
the inputs before it). torch's names may be written without `torch.` (sin(x), randn(3),
ones(2, 2)), F is torch.nn.functional, and an input's name wins over them. A float, or a list of
numbers, becomes a tensor as torch.tensor makes it (float32 for floats); floating point inputs
require grad, the others are held constant. Options go before EXPR or after the inputs.
See docs/oneshot.md.

exit status: 0 ok, 1 error while evaluating or differentiating (PyTorch's message),
2 usage or syntax error
"""

_COMMANDS = {
    "grad": (
        "the value of a scalar expression and its gradient with respect to each input",
        """\
Evaluate EXPR, a scalar expression of the inputs, call backward() on it, then print its
value and the .grad of every input, each under a label line, as PyTorch prints them.""",
        """examples:
  gradcli grad "(3*(x+2)**2).mean()" x="torch.ones(2, 2)"
  gradcli grad "sin(x) * x**2" x=2.0
  gradcli grad "x**2" x="[1., 2., 3.]" --grad-output "[1., 1., 1.]"
  gradcli grad --seed 0 --wrt w,b "((x @ w + b - y)**2).mean()" w="randn(3, 1)" b=0.0 \\
               x="randn(8, 3)" y="randn(8, 1)"
"""),
    "jacobian": (
        "the Jacobian of an expression (torch.autograd.functional.jacobian)",
        """\
Evaluate EXPR, then print its value and its Jacobian with respect to the inputs, computed as
torch.autograd.functional.jacobian computes it. With several inputs (or an EXPR that is a
tuple) the Jacobian is PyTorch's tuple: each element is printed under its index.""",
        """examples:
  gradcli jacobian "x**3 - x" x="[1., 2., 3.]"
  gradcli jacobian "x * y" x="[1., 2.]" y="[3., 4.]"
  gradcli jacobian "softmax(z, dim=0)" z="[1., 2., 3.]"
"""),
    "hessian": (
        "the Hessian of a scalar expression (torch.autograd.functional.hessian), or --hvp",
        """\
Evaluate EXPR, a scalar expression of the inputs, then print its value and its Hessian,
computed as torch.autograd.functional.hessian computes it (PyTorch's tuple of tuples for
several inputs). With --hvp V, print the Hessian-vector product H·V instead
(torch.autograd.functional.hvp), which never forms the Hessian.""",
        """examples:
  gradcli hessian "x**2 * y + y**3" x=1.0 y=2.0
  gradcli hessian "(1 - x[0])**2 + 100*(x[1] - x[0]**2)**2" x="[-1.2, 1.0]"
  gradcli hessian --hvp "[1., 0.]" "(1 - x[0])**2 + 100*(x[1] - x[0]**2)**2" x="[-1.2, 1.0]"
"""),
}


# The shared options (gradcli.commands.common.script_options) these commands honour; they refuse the others.
# Not --stable-ids: no address is ever printed (the results are tensors, detached).
ONESHOT_OPTIONS = ("seed", "format", "display", "color", "timing", "timeout", "max-memory")


class _Usage(Exception):
    """A command line that cannot be used (exit status 2), reported as one line of text."""


def add_parser(sub, script_options) -> None:
    for command, (summary, description, examples) in _COMMANDS.items():
        p = sub.add_parser(command, help=summary, description=description, epilog=examples + _SHARED_EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("expr", metavar="EXPR", help="the expression to differentiate (start it with -- if it "
                                                    "begins with '-': gradcli grad -- '-x**2' x=1.0)")
        p.add_argument("inputs", nargs="*", metavar="NAME=VALUE",
                       help="an input and its value, evaluated in order (a value may use the names before it)")
        p.add_argument("--wrt", metavar="NAME[,NAME...]",
                       help="differentiate with respect to these inputs only; the others are constants "
                            "(default: every float input)")
        if command == "grad":
            p.add_argument("--grad-output", metavar="VALUE",
                           help="the gradient to start backward() from, for an EXPR that is not a scalar "
                                "(out.backward(gradient=VALUE))")
        if command == "hessian":
            p.add_argument("--hvp", metavar="V",
                           help="print the Hessian-vector product H·V without forming H (a tuple of "
                                "tensors for several inputs)")
        script_options(p, ONESHOT_OPTIONS)


# ----------------------------------------------------------------------------------------- inputs

def _parse_inputs(items: list[str]) -> dict[str, str]:
    """NAME=VALUE arguments as {name: value text}, in order."""
    inputs: dict[str, str] = {}
    for item in items:
        name, eq, text = item.partition("=")
        if not eq:
            raise _Usage(f"expected NAME=VALUE, got '{item}' (EXPR comes first, then the inputs: "
                         f"gradcli grad 'x**2' x=3.0)")
        if not name.isidentifier() or keyword.iskeyword(name):
            raise _Usage(f"'{name}' in '{item}' is not a valid name (a letter or _, then letters, digits or _)")
        if name in inputs:
            raise _Usage(f"{name} is given twice")
        if not text.strip():
            raise _Usage(f"{name}= has no value (for example {name}=2.0)")
        inputs[name] = text
    return inputs


def _parse_wrt(option, inputs: dict) -> list | None:
    if option is None:
        return None
    names = [n.strip() for n in option.split(",") if n.strip()]
    if not names:
        raise _Usage("--wrt needs at least one input name")
    for n in names:
        if n not in inputs:
            given = ", ".join(inputs) or "none"
            raise _Usage(f"--wrt {n}: no input is named {n} (inputs given: {given})")
    return list(dict.fromkeys(names))


def _namespace() -> dict:
    """What EXPR and the values can name besides the inputs: torch's functions as bare names, and
    the modules torch, F (torch.nn.functional) and math."""
    from gradcli.language import stdlib
    names = dict(stdlib.TORCH.members)
    names.update(torch=stdlib.TORCH, F=stdlib.module("torch.nn.functional"), math=stdlib.MATH)
    return names


def _one_expression(text: str, filename: str) -> None:
    """Raise ScriptSyntaxError unless `text` parses as exactly one expression."""
    from gradcli.language import parser, syntax
    body = parser.parse(text, filename).body
    if len(body) == 1 and isinstance(body[0], syntax.ExprStmt):
        return
    what = "EXPR" if filename == EXPR_FILE else f"the value of {filename.strip('<>')}"
    if not body:
        raise ScriptSyntaxError(f"{what} is empty: give an expression", filename)
    stmt = body[0] if not isinstance(body[0], syntax.ExprStmt) else body[1]
    raise ScriptSyntaxError(f"{what} must be one expression, not a statement or several",
                            filename, stmt.line, stmt.col).located(filename, text)


def _evaluate(session, text: str, filename: str):
    """The value of one expression, run in the session's namespace."""
    box = []
    session.run_unit(text, filename, echo=box.append)
    return box[0]


def _as_tensor(value):
    """A float, or a list of numbers (nested lists for more dimensions), as torch.tensor makes it;
    anything else as it is (a tuple stays a tuple: it may be a shape)."""
    from gradcli.engine import factories
    if value.__class__ is float or (value.__class__ is list and _numbers(value)):
        return factories.tensor(value)
    return value


def _numbers(items: list) -> bool:
    stack = [items]
    while stack:
        for x in stack.pop():
            if x.__class__ is list:
                stack.append(x)
            elif x.__class__ not in (int, float, bool):
                return False
    return True


def _differentiable(value) -> bool:
    from gradcli.engine.tensor import Tensor
    return value.__class__ is Tensor and value._a.dtype.kind in "fV"


def _as_input(value, differentiate: bool):
    """An input's value as the expression sees it: floats and lists of numbers become tensors, as
    torch.tensor makes them (float32 for floats); a float tensor to differentiate becomes a leaf that
    requires grad (a computed one is detached first, so its .grad is filled in)."""
    from gradcli.engine.tensor import Tensor
    value = _as_tensor(value)
    if differentiate and _differentiable(value):
        if value.grad_fn is not None:
            value = value.detach()
        if not value.requires_grad:
            value = value.requires_grad_(True)
    elif value.__class__ is Tensor and value.requires_grad:
        value = value.detach()          # a constant (--wrt left it out): no gradient flows through it
    return value


def _numeric(value) -> bool:
    """Numbers and tensors: the inputs a user may have meant to differentiate."""
    from gradcli.engine.tensor import Tensor
    return value.__class__ in (int, bool, Tensor)


def _not_differentiated(name: str, value) -> str:
    """Why the input `name` is held constant, for the note on stderr."""
    from gradcli.engine.tensor import Tensor
    if value.__class__ is bool:
        return f"{name}={value} is a bool, so it is not differentiated"
    if value.__class__ is int:
        return f"{name}={value} is an integer, so it is not differentiated (write {value}.0 to differentiate it)"
    if value.__class__ is Tensor:
        return f"{name} is a tensor of {value.dtype}, so it is not differentiated"
    return f"{name} is a {type(value).__name__}, so it is not differentiated"


# --------------------------------------------------------------------------------------- commands

def _engine_call(fn, filename: str = EXPR_FILE):
    """Call into the engine; a PyTorch error it raises becomes a ScriptError about EXPR (or the
    input whose value it was converting)."""
    try:
        return fn()
    except ScriptError:
        raise
    except Exception as e:          # the engine raises PyTorch's exception types and messages
        raise ScriptError(type(e).__name__, str(e), filename) from None


def _grad(session, expr, names, grad_output):
    """[(label, (event, fields), value)] of `gradcli grad`: the results, in the order they print."""
    from gradcli.engine.tensor import Tensor
    out = _evaluate(session, expr, EXPR_FILE)
    gradient = None
    if grad_output is not None:
        _one_expression(grad_output, "<grad-output>")
        gradient = _as_tensor(_evaluate(session, grad_output, "<grad-output>"))
    if out.__class__ is not Tensor:
        raise ScriptError("AttributeError", f"'{type(out).__name__}' object has no attribute 'backward'", EXPR_FILE)
    try:
        _engine_call(lambda: out.backward(gradient))
    except ScriptError as e:
        if e.message == "grad can be implicitly created only for scalar outputs":
            e.hint = (f"hint: EXPR has shape {list(out._a.shape)}: reduce it to one number (.sum(), .mean()) "
                      f"or give --grad-output VALUE of that shape")
        raise
    results = [("value:", ("value", {"index": []}), out.detach())]
    for name in names:
        results.append((f"{name}.grad:", ("grad", {"var": name}), session.globals[name].grad))
    return results


def _function(session, expr, names, seen):
    """EXPR as a function of the differentiated inputs, as torch.autograd.functional wants it;
    `seen[0]` keeps its last value."""
    def func(*tensors):
        session.globals.update(zip(names, tensors))
        seen[0] = _evaluate(session, expr, EXPR_FILE)
        return seen[0]
    return func


def _values(value) -> list:
    """The value lines: one tensor, or each element of a tuple under its index."""
    if isinstance(value, tuple):
        return [(f"value[{i}]:", ("value", {"index": [i]}), _detached(v)) for i, v in enumerate(value)]
    return [("value:", ("value", {"index": []}), _detached(value))]


def _detached(v):
    from gradcli.engine.tensor import Tensor
    return v.detach() if v.__class__ is Tensor else v


def _index(path) -> str:
    return "".join(f"[{i}]" for i in path)


def _jacobian(session, expr, names):
    from gradcli.engine import functional
    seen = [None]
    func = _function(session, expr, names, seen)
    inputs = tuple(session.globals[n] for n in names)
    several = len(names) > 1
    jac = _engine_call(lambda: functional.jacobian(func, inputs if several else inputs[0]))
    results = _values(seen[0])
    outputs = seen[0] if isinstance(seen[0], tuple) else None
    for o in range(len(outputs) if outputs is not None else 1):
        row = jac[o] if outputs is not None else jac
        for k, name in enumerate(names):
            path = ([o] if outputs is not None else []) + ([k] if several else [])
            element = row[k] if several else row
            of = [f"value[{o}]"] if outputs is not None else []
            results.append((f"jacobian{_index(path)} ({', '.join(of + [name])}):",
                            ("jacobian", {"index": path, "output": o if outputs is not None else None,
                                          "var": name}), element))
    return results


def _hessian(session, expr, names):
    from gradcli.engine import functional
    seen = [None]
    func = _function(session, expr, names, seen)
    inputs = tuple(session.globals[n] for n in names)
    several = len(names) > 1
    hess = _engine_call(lambda: functional.hessian(func, inputs if several else inputs[0]))
    results = _values(seen[0])
    if not several:
        return results + [(f"hessian ({names[0]}):", ("hessian", {"index": [], "vars": names * 2}), hess)]
    for i, row_name in enumerate(names):
        for j, col_name in enumerate(names):
            results.append((f"hessian[{i}][{j}] ({row_name}, {col_name}):",
                            ("hessian", {"index": [i, j], "vars": [row_name, col_name]}), hess[i][j]))
    return results


def _hvp(session, expr, names, v_text):
    from gradcli.engine import functional
    _one_expression(v_text, "<hvp>")
    v = _evaluate(session, v_text, "<hvp>")
    v = tuple(_as_tensor(x) for x in v) if isinstance(v, tuple) else _as_tensor(v)
    func = _function(session, expr, names, [None])
    inputs = tuple(session.globals[n] for n in names)
    several = len(names) > 1
    value, product = _engine_call(lambda: functional.hvp(func, inputs if several else inputs[0], v))
    results = _values(value)
    if not several:
        return results + [(f"hvp ({names[0]}):", ("hvp", {"index": [], "var": names[0]}), product)]
    return results + [(f"hvp[{k}] ({name}):", ("hvp", {"index": [k], "var": name}), product[k])
                      for k, name in enumerate(names)]


# ---------------------------------------------------------------------------------------- running

_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined")


def _hint(err: ScriptError) -> str | None:
    """One line after PyTorch's message, saying what to change on the command line."""
    hint = getattr(err, "hint", None)
    if hint is None and err.filename == EXPR_FILE and err.kind == "NameError":
        m = _NOT_DEFINED.fullmatch(err.message)
        if m:
            hint = f"hint: give {m[1]} a value on the command line: {m[1]}=VALUE"
    return hint


def run(args) -> int:
    """Evaluate the inputs, then EXPR, differentiate it and print the results (text or jsonl)."""
    from gradcli.commands.progress import Progress
    from gradcli.session import Session

    command = args.command
    started = time.perf_counter()
    events = None
    if args.format == "jsonl":
        from gradcli.diagnostics.jsonl import JsonLines
        events = JsonLines(sys.stdout)
    try:
        texts = _parse_inputs(args.inputs)
        wrt = _parse_wrt(args.wrt, texts)
    except _Usage as e:
        sys.stderr.write(f"gradcli {command}: {e}\n")
        return EXIT_USAGE
    try:
        session = Session(seed=args.seed, display=args.display, events=events)
    except (ValueError, RuntimeError) as e:      # a --seed that manual_seed refuses
        sys.stderr.write(f"gradcli: --seed {args.seed}: {e}\n")
        return EXIT_USAGE
    session.globals.update(_namespace())
    try:
        _one_expression(args.expr, EXPR_FILE)
        names, notes = [], []
        for name, text in texts.items():    # in order: a value may use the inputs before it, as EXPR sees them
            filename = f"<{name}>"
            _one_expression(text, filename)
            value = _evaluate(session, text, filename)
            wanted = name in wrt if wrt is not None else True
            value = session.globals[name] = _engine_call(lambda: _as_input(value, wanted), filename)
            if wanted and _differentiable(value):
                names.append(name)
            elif wrt is not None and wanted:
                raise _Usage(f"--wrt {name}: {_not_differentiated(name, value)}")
            elif wanted and _numeric(value):
                notes.append(_not_differentiated(name, value))
        if not names:
            raise _Usage("nothing to differentiate: no input is a float or a floating point tensor "
                         "(give one, for example x=2.0)")
        if events is not None:
            for name in texts:
                events.input(name, name in names, session.globals[name])
        else:
            for note in notes:
                sys.stderr.write(f"gradcli {command}: note: {note}\n")
            sys.stderr.flush()
        with Progress(f"gradcli {command}: computing"):
            if command == "grad":
                results = _grad(session, args.expr, names, args.grad_output)
            elif command == "jacobian":
                results = _jacobian(session, args.expr, names)
            elif args.hvp is not None:
                results = _hvp(session, args.expr, names, args.hvp)
            else:
                results = _hessian(session, args.expr, names)
    except _Usage as e:
        sys.stderr.write(f"gradcli {command}: {e}\n")
        return EXIT_USAGE
    except ScriptError as e:
        hint = _hint(e)
        if events is None:
            report(e)
            if hint:
                sys.stderr.write(hint + "\n")
                sys.stderr.flush()
        else:
            events.error(e)
            events.end(False, started, EXPR_FILE)
        return e.exit_status
    if events is None:
        # str(), not an f-string: a 0-d tensor formats as a bare number, as in PyTorch
        text = "".join(label + "\n" + str(value) + "\n" for label, _, value in results)
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        for _, (event, fields), value in results:
            events.derivative(event, fields, value)
        events.end(True, started, EXPR_FILE)
    return EXIT_OK
