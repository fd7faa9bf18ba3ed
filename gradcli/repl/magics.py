"""The REPL's `%` commands: one table of name -> (usage, help, function), run on a Shell."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from gradcli.engine.tensor import Tensor


class MagicError(Exception):
    """A magic command was used wrongly; the message is shown as `%name: message`."""


@dataclass(frozen=True)
class Magic:
    name: str
    usage: str
    summary: str        # one line, for %help and the completion menu
    argument: str       # what follows the name, for completion: none, tensor, file, choice, magic, code, int
    run: object         # run(shell, argument_text)
    choices: tuple = ()


MAGICS: dict = {}


def magic(usage: str, summary: str, argument: str = "none", choices: tuple = (), aliases: tuple = ()):
    def register(fn):
        name = usage.split()[0][1:]
        for n in (name, *aliases):
            MAGICS[n] = Magic(n, usage if n == name else usage.replace(name, n, 1), summary, argument, fn,
                              choices)
        return fn
    return register


def run(shell, line: str) -> bool:
    """Run one magic line (starting with '%'); False when it asks to leave the REPL."""
    name, _, arg = line.strip()[1:].partition(" ")
    entry = MAGICS.get(name)
    if entry is None:
        shell.error_line(f"%{name}: unknown command; %help lists the commands")
        return True
    try:
        return entry.run(shell, arg.strip()) is not False
    except MagicError as e:
        shell.error_line(f"%{name}: {e}")
        return True


# ------------------------------------------------------------------------------------ commands
@magic("%help [COMMAND]", "list the commands, or explain one", "magic")
def _help(shell, arg):
    if arg:
        entry = MAGICS.get(arg.lstrip("%"))
        if entry is None:
            raise MagicError(f"no command %{arg.lstrip('%')}")
        shell.write(f"{entry.usage}\n    {entry.summary}\n")
        return
    width = max(len(m.usage) for m in MAGICS.values())
    lines = ["Type statements as in a .grad script; an expression shows its value.",
             "Enter runs the input (a blank line ends a block); Ctrl-C interrupts; Ctrl-D on an empty line exits.",
             "Tab completes names, torch.*, tensor attributes and keyword arguments.",
             "",
             "Commands:"]
    shown = set()
    for m in MAGICS.values():
        if m.run in shown:
            continue
        shown.add(m.run)
        lines.append(f"  {m.usage.ljust(width)}  {m.summary}")
    shell.write("\n".join(lines) + "\n")


@magic("%vars", "list the session's names; tensors with shape, dtype, requires_grad, grad_fn and grad")
def _vars(shell, arg):
    if arg:
        raise MagicError("takes no argument")
    namespace = shell.session.globals
    rows = [("name", "shape", "dtype", "requires_grad", "grad_fn", "grad")]
    others = []
    for name in sorted(namespace):
        value = namespace[name]
        if value.__class__ is Tensor:
            grad = value.grad
            rows.append((name, str(list(value.shape)), _dtype(value), str(value.requires_grad),
                         value.grad_fn.op.node if value.grad_fn is not None else "-",
                         str(list(grad.shape)) if grad is not None else "-"))
        else:
            others.append(f"{name} ({_kind(value)})")
    if len(rows) == 1 and not others:
        shell.write("no names defined yet\n")
        return
    if len(rows) > 1:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            shell.write("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() + "\n")
    if others:
        shell.write(f"other names: {', '.join(others)}\n")


def _dtype(t) -> str:
    text = repr(t.dtype)
    return text[6:] if text.startswith("torch.") else text


def _kind(value) -> str:
    from gradcli.language.compiler import ScriptFunction
    from gradcli.language.stdlib import ScriptModule
    if value.__class__ is ScriptFunction:
        return "function"
    if value.__class__ is ScriptModule:
        return "module"
    return type(value).__name__


@magic("%graph NAME [--ascii] [--depth N]", "draw the grad_fn graph behind a tensor as a tree", "tensor")
def _graph(shell, arg):
    words = arg.split()
    ascii_, depth, target = False, 40, []
    i = 0
    while i < len(words):
        if words[i] == "--ascii":
            ascii_ = True
        elif words[i] == "--depth" and i + 1 < len(words) and words[i + 1].isdigit():
            depth = int(words[i + 1])
            i += 1
        else:
            target.append(words[i])
        i += 1
    if not target:
        raise MagicError("give a tensor, e.g. %graph out")
    text = " ".join(target)
    found, value = shell.lookup(text)
    if not found:
        return
    if value is None:
        raise MagicError(f"{text} is None: there is no graph to draw")
    names = {id(value): text}
    for name, v in shell.session.globals.items():
        if v.__class__ is Tensor:
            names.setdefault(id(v), name)
            if v.grad_fn is not None:
                names.setdefault(id(v.grad_fn), name)
    try:
        shell.show_graph(value, text, names, max(depth, 1), ascii_)
    except TypeError as e:
        raise MagicError(str(e)) from None


@magic("%why NAME[.grad]", "show how backward computed NAME's gradient: the chain rule, node by node", "tensor")
def _why(shell, arg):
    # The session's backward already ran and kept nothing, so its inputs are replayed in a scratch
    # session with the chain recorder (gradcli.diagnostics.explain); nothing is recorded while they first run.
    from gradcli.diagnostics import why, explain
    if not arg:
        raise MagicError("give a tensor, e.g. %why x.grad")
    name = explain.target_name(arg)
    if name is None:
        raise MagicError(f"give the name of a tensor (x or x.grad), not '{arg}'")
    text, problem, error = explain.explain_units(why.repl_units(shell.accepted), shell.session.seeds,
                                                 name, live=shell.session.globals.get(name))
    if error is not None:
        raise MagicError(f"replaying this session's inputs failed: {error.headline()}")
    if problem:
        raise MagicError(problem)
    shell.write(text)


@magic("%time STATEMENT", "run a statement and show how long it took", "code")
def _time(shell, arg):
    if not arg:
        raise MagicError("give a statement to time, e.g. %time out.backward()")
    wall, cpu = time.perf_counter(), time.process_time()
    ok = shell.run_code(arg)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if ok:
        shell.write(f"time: {_duration(wall)} wall, {_duration(cpu)} CPU\n")


def _duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


@magic("%reset", "forget every name and start afresh (grad mode, print options, random seed)")
def _reset(shell, arg):
    if arg:
        raise MagicError("takes no argument")
    shell.reset()
    shell.write("session reset\n")


@magic("%seed N", "seed the random number generator, like torch.manual_seed(N)", "int")
def _seed(shell, arg):
    try:
        seed = int(arg)
    except ValueError:
        raise MagicError("give an integer seed, e.g. %seed 0") from None
    from gradcli.engine import factories
    try:
        factories.manual_seed(seed)
    except Exception as e:        # the engine's own range check, with PyTorch's message
        raise MagicError(str(e)) from None
    shell.accepted.append(f"# %seed {seed}\n")


@magic("%display [legacy|modern]", "show or choose how tensors print", "choice", ("legacy", "modern"))
def _display(shell, arg):
    if not arg:
        shell.write(f"display: {shell.display_mode()}\n")
        return
    if arg not in ("legacy", "modern"):
        raise MagicError("choose legacy or modern")
    problem = shell.set_display(arg)
    if problem:
        raise MagicError(problem)


@magic("%format [jsonl|text]", "show or choose the output: text, or one JSON object per event (docs/jsonl.md)",
       "choice", ("jsonl", "text"))
def _format(shell, arg):
    if not arg:
        shell.write(f"format: {shell.format_mode()}\n")
        return
    problem = shell.set_format(arg)
    if problem:
        raise MagicError(problem)


@magic("%load FILE.grad", "run a script in this session (its names stay defined)", "file")
def _load(shell, arg):
    if not arg:
        raise MagicError("give a script to run, e.g. %load examples/tutorial.grad")
    path = os.path.expanduser(arg)
    try:
        with open(path, "rb") as f:
            data = f.read()
        source = data.decode("utf-8")
    except OSError as e:
        raise MagicError(f"cannot read '{arg}': {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise MagicError(f"'{arg}' is not UTF-8 text") from None
    if shell.run_code(source, filename=arg, echo=False, record=False):
        shell.accepted.append(f"# %load {arg}\n{source if source.endswith(chr(10)) else source + chr(10)}")


@magic("%save FILE.grad", "write the input that ran without error as a script", "file")
def _save(shell, arg):
    if not arg:
        raise MagicError("give a file name, e.g. %save session.grad")
    path = os.path.expanduser(arg)
    text = "# saved from a gradcli REPL session\n" + "".join(shell.accepted)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise MagicError(f"cannot write '{arg}': {e.strerror or e}") from None
    n = len(shell.accepted)
    shell.write(f"saved {n} input{'s' if n != 1 else ''} to {arg}\n")


@magic("%history [N]", "show the last N inputs of this session (all by default)", "int")
def _history(shell, arg):
    entries = shell.inputs[:-1]           # without this %history line itself
    if arg:
        if not arg.isdigit():
            raise MagicError("give a number of inputs, e.g. %history 10")
        entries = entries[-int(arg):] if int(arg) else []
    start = len(shell.inputs) - 1 - len(entries)
    for i, text in enumerate(entries, start + 1):
        lines = text.split("\n")
        shell.write(f"{i:>4}  {lines[0]}\n" + "".join(f"      {line}\n" for line in lines[1:]))


@magic("%toolbar", "show or hide the bottom toolbar")
def _toolbar(shell, arg):
    shell.toolbar = not shell.toolbar


@magic("%exit", "leave the REPL (Ctrl-D does the same)", aliases=("quit",))
def _exit(shell, arg):
    return False
