"""The front end: script text to a syntax.Module, through the LALR(1) tables Lark builds from grammar/gradcli.lark."""

from __future__ import annotations

import gc
import hashlib
import os
import sys
from pathlib import Path

from gradcli.errors import ScriptSyntaxError
from gradcli.lexer import Layout, Scanner
from gradcli.syntax import Module
from gradcli.syntaxerrors import error_at
from gradcli.treebuild import Builder


def parse(source: str, filename: str = "<script>") -> Module:
    """Parse a whole script; every problem with it raises ScriptSyntaxError."""
    text = source
    collecting = gc.isenabled()
    # The tree has no reference cycles, so collections triggered by its hundreds of thousands
    # of fresh objects would only rescan them: a third of the parse time on long scripts.
    gc.disable()
    try:
        text = _normalize(source)
        return _frontend().parse(text, "file_input")
    except ScriptSyntaxError as err:
        lines = text.split("\n")       # not splitlines(), which also breaks at \f, \x1c, \u2028...
        if err.source_line is None and 0 < err.line <= len(lines):
            err.source_line = lines[err.line - 1]
        raise err.located(filename, text)
    finally:
        if collecting:
            gc.enable()


def _normalize(source: str) -> str:
    if source.startswith("\ufeff"):
        source = source[1:]
    if "\r" in source:                  # universal newlines, as Python reads scripts
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    nul = source.find("\0")
    if nul >= 0:
        start = source.rfind("\n", 0, nul) + 1
        end = source.find("\n", nul)
        shown = source[start:end if end >= 0 else len(source)].replace("\0", " ")
        raise ScriptSyntaxError("source code cannot contain null bytes", "<script>",
                                source.count("\n", 0, nul) + 1, nul - start + 1, shown)
    if not source.endswith("\n"):
        source += "\n"
    return source


# ================================================================ loading the grammar, once

_FRONTEND = None


def _frontend() -> "_Frontend":
    global _FRONTEND
    if _FRONTEND is None:
        _FRONTEND = _Frontend(_load_lark())
    return _FRONTEND


def _parse_fragment(text: str, line: int, col: int):
    """An f-string field's expression: the tree builder calls back here for each field it meets."""
    return _frontend().parse_fragment(text, line, col)


def grammar_path() -> Path:
    """The wheel carries the grammar inside the package; a source checkout keeps it at the top."""
    package = Path(__file__).resolve().parent
    for candidate in (package / "grammar" / "gradcli.lark", package.parent / "grammar" / "gradcli.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"gradcli's grammar is missing from {package / 'grammar'} and {package.parent / 'grammar'}")


_LARK_OPTIONS = dict(parser="lalr", lexer="basic", start=["file_input", "fstring_expr"],
                     maybe_placeholders=True)


def cache_path(grammar: str, lark_version: str) -> Path:
    """Where the parse tables for this grammar text, lark version and Python version are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = hashlib.sha256("\0".join([grammar, lark_version, sys.version, repr(sorted(_LARK_OPTIONS.items()))])
                         .encode()).hexdigest()[:20]
    return Path(base) / "gradcli" / f"grammar-{key}.lark-cache"


def _load_lark():
    import lark     # here, not at the top: `gradcli run` pays for lark only when it parses

    grammar = grammar_path().read_text(encoding="utf-8")
    options = dict(_LARK_OPTIONS, postlex=Layout(), transformer=Builder(_parse_fragment))
    # Building the LALR tables takes longer than parsing a long script, so they are pickled
    # once per grammar text, lark version and Python version: the file name hashes all three.
    # Lark checks the file's own hash of grammar, options and versions before trusting it, and
    # rebuilds (quietly) when the file is unreadable, corrupt or half-written by a concurrent
    # gradcli; when it cannot write the file, the tables simply stay uncached.
    cache = cache_path(grammar, lark.__version__)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return lark.Lark(grammar, **options)
    before = _stamp(cache)
    lark_parser = lark.Lark(grammar, cache=str(cache), **options)
    after = _stamp(cache)
    if after is not None and after != before:      # Lark built the tables and wrote them
        _remove_stale_caches(cache)
    return lark_parser


def _stamp(path: Path):
    """Tells one version of a file from the next; None when there is no file."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _remove_stale_caches(current: Path) -> None:
    """Delete the tables of other grammar, lark and Python versions, as far as we can.

    Each grammar edit and each lark or Python upgrade writes a file under a new name, and they
    would pile up. Only a write comes here, so a run that loads cached tables never lists the folder.
    """
    try:
        stale = [path for path in current.parent.glob("grammar-*.lark-cache") if path.name != current.name]
    except OSError:
        return
    for path in stale:
        try:
            path.unlink()
        except OSError:
            pass


class _Frontend:
    """The pieces of one loaded grammar: scanner, layout pass and LALR driver."""

    def __init__(self, lark_parser):
        terminals = lark_parser.lexer_conf.terminals
        self.scanner = Scanner(terminals, lark_parser.lexer_conf.ignore)
        self.layout = Layout(self.scanner.names)
        # Lark's own parse loop spends most of its time walking unit rules of the precedence
        # ladder one by one; our driver runs on the same tables and callbacks but skips them.
        lalr = lark_parser.parser.parser.parser
        self.driver = _Driver(lalr.parse_table, lalr.callbacks)
        self.describe = _Describer(self.scanner, self.driver)

    def parse(self, text: str, start: str):
        tokens = self.layout.process(self.scanner.tokens(text))
        try:
            return self.driver.run(tokens, start)
        except _Unexpected as failure:
            raise self.describe.failure(failure) from None

    def parse_fragment(self, text: str, line: int, col: int):
        """An f-string field's expression, at its place in the script (line and col of text[0])."""
        tokens = self.layout.process(self.scanner.tokens(text, line, col), inside_brackets=True)
        try:
            return self.driver.run(tokens, "fstring_expr")
        except _Unexpected as failure:
            raise self.describe.failure(failure, fragment=True) from None


# ================================================================ LALR driver

class _Unexpected(Exception):
    """The driver found no action for a token; states is its stack at that moment."""

    def __init__(self, token, states: list, start: str):
        self.token = token
        self.states = states
        self.start = start


class _Driver:
    """Runs Lark's LALR(1) tables, calling the callbacks Lark made from our transformer.

    The one thing it does beyond Lark's loop: a reduction by a unit rule of the precedence
    ladder (`?sum: term`, a rule whose callback returns its only child) changes no value,
    only the state, and the state it ends in after a chain of them depends only on the state
    below, the current state and the lookahead. Those chains are followed once and
    remembered, so an atom climbs the fifteen-rung ladder in one step.
    """

    def __init__(self, table, callbacks):
        from lark.parsers.lalr_analysis import Shift
        rules, index = [], {}
        nonterminals = set()
        for actions in table.states.values():
            for symbol, (action, arg) in actions.items():
                if action is not Shift and arg not in index:
                    index[arg] = len(rules)
                    rules.append(arg)
                    nonterminals.add(str(arg.origin.name))
        n_states = max(table.states) + 1
        # actions[state][terminal] is a state to shift to (>= 0) or ~rule to reduce by (< 0);
        # gotos[state][nonterminal] is the state after reducing to that nonterminal.
        self.actions = [dict() for _ in range(n_states)]
        self.gotos = [dict() for _ in range(n_states)]
        for state, actions in table.states.items():
            for symbol, (action, arg) in actions.items():
                symbol = sys.intern(str(symbol))
                if action is Shift and symbol in nonterminals:
                    self.gotos[state][symbol] = arg
                else:
                    self.actions[state][symbol] = arg if action is Shift else ~index[arg]
        self.sizes = [len(r.expansion) for r in rules]
        self.origins = [sys.intern(str(r.origin.name)) for r in rules]
        self.callbacks = [callbacks[r] for r in rules]
        self.unit = [len(r.expansion) == 1 and r.options.expand1 and not r.alias
                     and not r.expansion[0].is_term and not r.expansion[0].name.startswith("_")
                     and not r.options.empty_indices for r in rules]
        self.start_states = dict(table.start_states)
        self.end_states = dict(table.end_states)
        self.unit_chains = {}   # (state below, state, lookahead) -> state after the unit reductions

    def run(self, tokens, start: str):
        actions, gotos, sizes, origins, callbacks, unit = (
            self.actions, self.gotos, self.sizes, self.origins, self.callbacks, self.unit)
        chains = self.unit_chains
        end = self.end_states[start]
        state = self.start_states[start]
        states = [state]
        values = []
        push_state, push_value = states.append, values.append
        for tok in tokens:
            kind = tok.type
            while True:
                code = actions[state].get(kind)
                if code is None:
                    raise _Unexpected(tok, states, start)
                if code >= 0:
                    state = code
                    push_state(state)
                    push_value(tok)
                    break
                rule = ~code
                if unit[rule]:
                    key = (states[-2], state, kind)
                    target = chains.get(key)
                    if target is None:
                        target = chains[key] = self._climb(states[-2], state, kind)
                    state = states[-1] = target
                    continue
                size = sizes[rule]
                if size:
                    children = values[-size:]
                    del values[-size:]
                    del states[-size:]
                else:
                    children = []
                push_value(callbacks[rule](children))
                state = gotos[states[-1]][origins[rule]]
                if state == end:
                    return values[-1]
                push_state(state)
        raise AssertionError("token stream ended without $END")

    def _climb(self, below: int, state: int, kind: str) -> int:
        while True:
            code = self.actions[state].get(kind)
            if code is None or code >= 0 or not self.unit[~code]:
                return state
            state = self.gotos[below][self.origins[~code]]

    def expected_at(self, start: str) -> set:
        return set(self.actions[self.start_states[start]])

    def expected(self, states: list, start: str) -> set:
        """The terminals the parser would really shift next, from a stack where it failed.

        An LALR state may reduce on lookaheads that are valid only in some other context
        (states with the same core merge their lookaheads), so its table row overstates
        what can follow. Running each candidate's reductions on a copy of the stack keeps
        the ones that would then be shifted.
        """
        end = self.end_states[start]
        return {kind for kind in self.actions[states[-1]] if self._viable(list(states), kind, end)}

    def _viable(self, states: list, kind: str, end: int) -> bool:
        while True:
            code = self.actions[states[-1]].get(kind)
            if code is None:
                return False
            if code >= 0:
                return True
            size = self.sizes[~code]
            if size:
                del states[-size:]
            state = self.gotos[states[-1]][self.origins[~code]]
            if state == end:
                return True
            states.append(state)


# ================================================================ error messages

# Tokens that continue a complete expression; listing them all would drown the message.
_CONTINUATIONS = {"+", "-", "*", "/", "//", "%", "@", "**", "<<", ">>", "&", "|", "^", "<", ">", "==", "!=",
                  "<=", ">=", "in", "not", "is", "and", "or", "if", ".", "(", "[", "=", "+=", "-=", "*=",
                  "/=", "@=", "//=", "%=", "**="}
_TOKEN_WORDS = {"_NEWLINE": "end of line", "$END": "end of file", "_INDENT": "indent", "_DEDENT": "dedent",
                "NAME": "a name", "STRING": "a string", "INT_NUMBER": "a number", "FLOAT_NUMBER": "a number",
                "IMAG_NUMBER": "a number"}


class _Describer:
    """Turns "token T in a state expecting {terminals}" into a one-line message in plain words."""

    def __init__(self, scanner: Scanner, driver: _Driver):
        self.driver = driver
        self.text = {name: text for text, name in scanner.names.items()}
        self.expression_starts = driver.expected_at("fstring_expr")
        self.continuations = {scanner.names[t] for t in _CONTINUATIONS if t in scanner.names}
        self.statement_starts = (driver.expected_at("file_input") - self.expression_starts - self.continuations
                                 - {"_NEWLINE", "$END"})
        # Tokens that can only start an operand: seeing one expected means "an expression".
        self.operands = self.expression_starts - self.continuations - {"NAME"}
        self.semicolon = scanner.names.get(";")

    def failure(self, failure: _Unexpected, fragment: bool = False) -> ScriptSyntaxError:
        tok = failure.token
        expected = self.driver.expected(failure.states, failure.start)
        if tok.type == "_INDENT":
            return error_at("unexpected indent", tok)
        if "_INDENT" in expected:
            return error_at("expected an indented block", tok)
        found = self.found(tok) if not (fragment and tok.type == "$END") else "'}'"
        wanted = self.wanted(expected)
        if fragment:        # an f-string field ends where its expression does
            wanted = ["'}'" if word == "end of file" else word for word in wanted]
        if len(wanted) == 1 and wanted[0].startswith("'"):
            return error_at(f"expected {wanted[0]}", tok)
        if wanted:
            listed = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " or " + wanted[-1]
            return error_at(f"unexpected {found} (expected {listed})", tok)
        return error_at(f"unexpected {found}", tok)

    def found(self, tok) -> str:
        kind, value = tok.type, tok.value
        shown = value.split("\n", 1)[0]
        if len(shown) > 20 or shown != value:
            value = shown[:17] + "..."
        if kind == "NAME":
            return f"name '{value}'"
        if kind in ("INT_NUMBER", "FLOAT_NUMBER", "IMAG_NUMBER"):
            return f"number {value}"
        if kind == "STRING":
            return f"string {value}"
        if kind in _TOKEN_WORDS:
            return _TOKEN_WORDS[kind]
        return f"'{value}'"

    def wanted(self, expected: set) -> list:
        if expected & self.statement_starts:
            return []               # a statement may start here: nothing in particular is expected
        words = []
        if expected & self.operands:
            words.append("an expression")
            expected = expected - self.expression_starts
        elif "NAME" in expected:
            words.append("a name")
            expected = expected - {"NAME"}
        else:                   # after a complete expression
            expected = expected - self.continuations
        expected = expected - {"_DEDENT"}
        if "_NEWLINE" in expected:
            expected.discard(self.semicolon)
        # Separators first, closing brackets next, keywords, then end of line/file.
        for name in sorted(expected, key=lambda n: (n in ("_NEWLINE", "$END"), self.text.get(n) in (")", "]", "}"),
                                                     self.text.get(n, n))):
            words.append(f"'{self.text[name]}'" if name in self.text else _TOKEN_WORDS.get(name, name))
        return words

