"""Where each grad_fn node of a script came from: the statement that made it and the name it was bound to.

Recorded only by a session created with `provenance=True` (`gradcli graph`, the REPL): the compiler
then wraps each statement with `Provenance.block`. Sessions without it compile plain statements and
pay nothing. The views in gradcli/diagnostics/graphview.py read it.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_right

from gradcli.language import syntax
from gradcli.language.scopes import Cell
from gradcli.engine import autograd
from gradcli.engine.tensor import Tensor

# The attribute under which an error carries (site, env) of the statement it failed in.
FAILED_STATEMENT = "failed_statement"


class Site:
    """One statement of a script: its file, line and source text (one line, without a comment)."""

    __slots__ = ("file", "line", "text")

    def __init__(self, file: str, line: int, text: str):
        self.file, self.line, self.text = file, line, text

    def __repr__(self):
        return f"Site({self.file!r}, {self.line}, {self.text!r})"


class _ByIdentity:
    """A map from live objects to values, holding the objects weakly.

    Keyed by id() with a weak reference beside each value, so neither a tensor's elementwise `==`
    nor a reused id can confuse it: an entry goes when its object dies, and a lookup checks that the
    entry's object is the one asked about."""

    __slots__ = ("_items", "__weakref__")

    def __init__(self):
        self._items: dict = {}

    def get(self, obj):
        entry = self._items.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return None

    def setdefault(self, obj, value) -> None:
        key = id(obj)
        entry = self._items.get(key)
        if entry is not None and entry[0]() is obj:
            return
        items = self._items

        def forget(ref, key=key):
            current = items.get(key)
            if current is not None and current[0] is ref:
                del items[key]
        self._items[key] = (weakref.ref(obj, forget), value)

    def __len__(self):
        return len(self._items)


class Provenance:
    """Where the grad_fn nodes of one session came from.

    Two records, both filled while the script runs:
      * a timeline of the statement running at each moment, in the engine's node numbering
        (`Node.seq` grows by one per node created). Each statement takes a number when it starts and
        when it ends (the numbers only order nodes, so taking some changes nothing), and a node
        belongs to the statement whose span holds its number, even one the script never named (the
        inner `y * y` of `z = y * y * 3`) or one made inside a function the statement called;
      * the name each node and each leaf tensor was first bound to by an assignment, and where.
    Nodes and tensors are held weakly: recording keeps no graph alive.
    """

    def __init__(self, session):
        self._session = session          # its file name and source lines, read while compiling
        self.main = None                 # the file whose lines are shown as "line N" (others: "FILE line N")
        self._tick = autograd._next_seq
        self._seqs: list = []            # node numbers at which the running statement changed ...
        self._sites: list = []           # ... and the statement from then on (None: between statements)
        self._stack: list = []           # statements in progress (a call runs a function's statements)
        self._nodes = _ByIdentity()      # node -> (name, site of the assignment)
        self._leaves = _ByIdentity()     # tensor -> (name, site of the assignment)
        self._recent: dict = {}          # top-level names assigned a tensor with a grad_fn, latest last

    # -------------------------------------------------------------------------- recording
    def block(self, stmts, compiled, top_level: bool) -> list:
        """The compiler's hook: `compiled` [(line, run)] for `stmts`, each run wrapped to record."""
        lines = self._session._lines
        file = self._session._filename
        wrapped = []
        for i, (stmt, (line, run)) in enumerate(zip(stmts, compiled)):
            following = stmts[i + 1] if i + 1 < len(stmts) else None
            site = Site(file, stmt.line, _statement_text(lines, stmt, following))
            wrapped.append((line, self._wrap(run, site, _bound_names(stmt), top_level)))
        return wrapped

    def _wrap(self, run, site, names, top_level):
        stack, mark, bind = self._stack, self._mark, self._bind

        def recorded(env):
            stack.append(site)
            mark(site)
            try:
                signal = run(env)
            except BaseException as e:
                # the innermost statement an error comes through is the one that failed (the `why:`
                # notes, gradcli.diagnostics.why, read it with the names the statement ran with)
                if getattr(e, FAILED_STATEMENT, None) is None:
                    setattr(e, FAILED_STATEMENT, (site, env))
                raise
            finally:
                stack.pop()
                mark(stack[-1] if stack else None)
            if names:
                bind(env, names, site, top_level)
            return signal
        return recorded

    def _mark(self, site) -> None:
        n = self._tick()
        seqs = self._seqs
        if seqs and seqs[-1] == n - 1:       # no node was made since the last mark: replace it
            seqs[-1] = n
            self._sites[-1] = site
        else:
            seqs.append(n)
            self._sites.append(site)

    def _bind(self, env, names, site, top_level) -> None:
        for name in names:
            value = env.get(name)
            if value.__class__ is Cell:          # a variable a nested function reads (gradcli.language.scopes)
                value = value.value
            if value.__class__ is not Tensor:
                continue
            fn = value.grad_fn
            if fn is None:
                self._leaves.setdefault(value, (name, site))
                continue
            self._nodes.setdefault(fn, (name, site))
            if top_level:
                self._recent.pop(name, None)
                self._recent[name] = None

    # ---------------------------------------------------------------------------- queries
    def created(self, node) -> Site | None:
        """The statement that was running when `node` was made."""
        i = bisect_right(self._seqs, node.seq) - 1
        return self._sites[i] if i >= 0 else None

    def running(self) -> tuple:
        """The statements in progress, outermost first (a `with` block, then the statement inside it,
        then the statements of a function it called); empty between statements."""
        return tuple(self._stack)

    def binding(self, node):
        """(name, site) of the first assignment that bound `node`'s tensor, or None."""
        return self._nodes.get(node)

    def leaf(self, tensor):
        """(name, site) of the first assignment that bound the leaf `tensor`, or None."""
        return self._leaves.get(tensor)

    def default_name(self, namespace: dict) -> str | None:
        """The name last assigned (at top level) a tensor that has a grad_fn and still holds one."""
        for name in reversed(self._recent):
            value = namespace.get(name)
            if value.__class__ is Tensor and value.grad_fn is not None:
                return name
        return None

    def where(self, site: Site) -> str:
        """`line 3` for the main file, `file.grad line 3` for another, nothing for REPL input (its
        text says more than its line number, which restarts at 1 for each input)."""
        if site.file == self.main:
            return f"line {site.line}"
        if site.file == "<stdin>":
            return ""
        return f"{site.file} line {site.line}"


def _bound_names(stmt) -> tuple:
    """The names an assignment statement (re)binds: targets, unpacked targets, and the tensor named at
    the base of an item or attribute target (`x[0] = v` gives `x` a new grad_fn)."""
    if isinstance(stmt, syntax.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, syntax.AugAssign) or isinstance(stmt, syntax.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    else:
        return ()
    names = []
    while targets:
        t = targets.pop(0)
        if isinstance(t, syntax.Name):
            if t.id not in names:
                names.append(t.id)
        elif isinstance(t, (syntax.Tuple, syntax.List)):
            targets[:0] = t.elts
        elif isinstance(t, (syntax.Subscript, syntax.Attribute)) and isinstance(t.value, syntax.Name):
            if t.value.id not in names:
                names.append(t.value.id)
    return tuple(names)


def _statement_text(lines: list, stmt, following) -> str:
    """The source of a statement on its first line: from its column to the next statement on the same
    line (`a = 1; b = 2`) or the body of a one-line block (`for ...: body`), without a comment."""
    if not 0 < stmt.line <= len(lines):
        return ""
    text = lines[stmt.line - 1]
    end = len(text)
    body = getattr(stmt, "body", None)
    for nxt in (following, body[0] if body else None):
        if nxt is not None and nxt.line == stmt.line and nxt.col > stmt.col:
            end = min(end, nxt.col - 1)
    text, open_brackets = _code_part(text[max(stmt.col - 1, 0):end])
    text = text.strip().rstrip(";").rstrip()
    return f"{text} ..." if open_brackets else text   # the statement goes on over more lines


def _code_part(text: str):
    """`text` up to a comment, and whether it leaves a bracket open (quotes are skipped). The scan
    jumps from one character that matters to the next (a statement may be a 10 MB line)."""
    quote = None
    depth = 0
    i, n = 0, len(text)
    while i < n:
        if quote is not None:
            i = _IN_QUOTES[quote].match(text, i).end()     # to the closing quote, a last backslash or the end
            if i >= n or text[i] == "\\":
                break
            i += len(quote)
            quote = None
            continue
        m = _CODE_SPECIAL.search(text, i)
        if m is None:
            break
        i = m.start()
        c = text[i]
        if c in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else c
            i += len(quote)
            continue
        if c == "#":
            return text[:i], depth > 0
        depth += 1 if c in "([{" else -1
        i += 1
    return text, depth > 0 or quote is not None


_CODE_SPECIAL = re.compile(r"""['"#()\[\]{}]""")


def _inside(quote: str):
    """The inside of a string up to its closing `quote`: runs of other characters, and escapes (a backslash
    and the character after it) or, in a triple-quoted string, a quote character that does not close it."""
    other = rf"[^\\{quote[0]}]*"
    step = r"\\[\s\S]" + (f"|{quote[0]}(?!{quote[1:]})" if len(quote) == 3 else "")
    return re.compile(rf"{other}(?:(?:{step}){other})*")


_IN_QUOTES = {q: _inside(q) for q in ("'", '"', "'''", '"""')}
