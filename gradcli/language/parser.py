"""The front end: script text to a syntax.Module, through the LALR(1) tables Lark builds from grammar/gradcli.lark."""

from __future__ import annotations

import gc
import os
import sys

from gradcli.errors import ScriptSyntaxError
from gradcli.language.lexer import REFUSED_KEYWORDS, Layout, Scanner, token
from gradcli.language.syntax import Module
from gradcli.language.syntaxerrors import Problems, error_at, header_words
from gradcli.language.treebuild import Builder


def parse(source: str, filename: str = "<script>", problems: Problems | None = None) -> Module:
    """Parse a whole script; its problems raise one ScriptSyntaxError that lists them all.

    With `problems` given, the problems that let the parse go on (syntaxerrors.Problems) are left
    there for the caller, who checks more (the compiler) and then raises them; text that does not
    parse raises at once, with the problems met before it."""
    text = source
    own = problems is None
    if own:
        problems = Problems()
    collecting = gc.isenabled()
    # The tree has no reference cycles, so collections triggered by its hundreds of thousands
    # of fresh objects would only rescan them: a third of the parse time on long scripts.
    gc.disable()
    try:
        text = _normalize(source)
        tree = _frontend().parse(text, "file_input", problems)
    except ScriptSyntaxError as err:
        raise problems.error(err).located(filename, text) from None
    finally:
        if collecting:
            gc.enable()
    if own and problems:
        raise problems.error().located(filename, text)
    return tree


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
        _FRONTEND = _Frontend(_load_tables())
    return _FRONTEND


def load() -> None:
    """Load the grammar's tables now, so a script's --timeout does not count building them."""
    _frontend()


def _parse_fragment(text: str, line: int, col: int):
    """An f-string field's expression: the tree builder calls back here for each field it meets."""
    return _frontend().parse_fragment(text, line, col)


def grammar_path():
    """The grammar file, as a Path."""
    from pathlib import Path
    return Path(grammar_file())


def grammar_file() -> str:
    """The wheel carries the grammar inside the package; a source checkout keeps it at the top. (A
    string: the run path does not import pathlib.)"""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))     # the gradcli package
    folders = (os.path.join(package, "grammar"), os.path.join(os.path.dirname(package), "grammar"))
    for folder in folders:
        candidate = os.path.join(folder, "gradcli.lark")
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(f"gradcli's grammar is missing from {folders[0]} and {folders[1]}")


def _load_tables() -> dict:
    """The grammar's parse tables: cached once per grammar text, so a run with a warm cache
    never imports lark (gradcli.language.tables)."""
    from gradcli.language import tables
    with open(grammar_file(), encoding="utf-8") as f:
        return tables.load(f.read(), Builder)


class _Frontend:
    """The pieces of one loaded grammar: scanner, layout pass and LALR driver."""

    def __init__(self, tables: dict):
        from gradcli.language.tables import callbacks, pairs
        self.scanner = Scanner(tables["scanner"])
        self.layout = Layout(self.scanner.names)
        self.builder = Builder(_parse_fragment)
        self.driver = _Driver(tables, callbacks(tables["rules"], self.builder), pairs(tables["rules"], self.builder))
        self.describe = _Describer(self.scanner, self.driver)
        # names the lexer makes something else of: keywords, and the refused ones it notes as problems
        self.not_plain_names = frozenset(self.scanner.keywords) | frozenset(REFUSED_KEYWORDS)

    def parse(self, text: str, start: str, problems: Problems | None = None):
        # The builder and the f-string fields it parses note their problems in the same list.
        self.builder.problems = problems = problems if problems is not None else Problems()
        tokens = self.layout.process(self.scanner.tokens(text), problems)
        try:
            return self.driver.run(tokens, start)
        except _Unexpected as failure:
            err = self.describe.failure(failure)
            if err.message == "expected an indented block":
                err = self._missing_block(text, failure.token, err)
            raise err from None

    # the first tokens of the headers of compound statements, as CPython names them in its message
    _HEADERS = frozenset(("for", "if", "elif", "else", "while", "try", "except", "finally", "with", "def", "class",
                          "match", "case"))

    def _missing_block(self, text: str, failing, err):
        """CPython's words for a block that is not indented: "expected an indented block after 'for' statement on
        line 2". The header is the logical line before the failing token's; the text is scanned again to find
        where it starts (only on this error: the parse itself keeps no history)."""
        header, starts_line = None, True
        try:
            for tok in self.layout.process(self.scanner.tokens(text), Problems()):
                if tok.line == failing.line and tok.col == failing.col and tok.type == failing.type:
                    break
                if tok.type in ("_NEWLINE", "_INDENT", "_DEDENT"):
                    starts_line = True
                    continue
                if starts_line:
                    header, starts_line = tok, False
        except ScriptSyntaxError:
            return err
        if header is None or header.value not in self._HEADERS:
            return err
        return error_at(f"expected an indented block after {header_words(header.value)} on line {header.line}",
                        failing)

    def parse_fragment(self, text: str, line: int, col: int):
        """An f-string field's expression, at its place in the script (line and col of text[0])."""
        if text.isascii() and text.isidentifier() and text not in self.not_plain_names:
            # most fields are one name, f"{loss}": the Name the driver would build, without the driver
            return self.builder.name([token("NAME", text, line, col)])
        tokens = self.layout.process(self.scanner.tokens(text, line, col), self.builder.problems,
                                     inside_brackets=True)
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


STACK = 64         # the driver's stacks start with room for this many entries, and double when full


class _Driver:
    """Runs the LALR(1) tables Lark derived from the grammar, calling the tree builder's callbacks.

    The one thing it does beyond Lark's loop: a reduction by a unit rule of the precedence
    ladder (`?sum: term`, a rule whose callback returns its only child) changes no value,
    only the state, and the state it ends in after a chain of them depends only on the state
    below, the current state and the lookahead. Those chains are followed once and
    remembered, so an atom climbs the fifteen-rung ladder in one step.
    """

    def __init__(self, tables: dict, callbacks: list, pairs: list):
        # actions[state][terminal] is a state to shift to (>= 0) or ~rule to reduce by (< 0);
        # gotos[state][nonterminal] is the state after reducing to that nonterminal.
        intern = sys.intern
        self.actions = [{intern(k): v for k, v in row.items()} for row in tables["actions"]]
        self.gotos = [{intern(k): v for k, v in row.items()} for row in tables["gotos"]]
        rules = tables["rules"]
        self.sizes = [rule[1] for rule in rules]
        self.origins = [intern(rule[2]) for rule in rules]
        self.unit = [rule[3] for rule in rules]
        self.callbacks = callbacks
        self.pairs = pairs      # [rule]: (builder method, child, child, -1 for a None or None) or None
        self.start_states = dict(tables["start_states"])
        self.end_states = dict(tables["end_states"])
        self.unit_chains = {}   # [state][lookahead][state below] -> state after the unit reductions

    def run(self, tokens, start: str):
        """The tree of the tokens."""
        actions, gotos, sizes, origins, callbacks, unit = (
            self.actions, self.gotos, self.sizes, self.origins, self.callbacks, self.unit)
        chains, pairs = self.unit_chains, self.pairs
        end = self.end_states[start]
        state = self.start_states[start]
        # The stacks are lists that never shrink, read and written at `top`: `del values[-size:]` and
        # negative indexes (which Python 3.11 does not specialise) cost a twentieth of the parse.
        # states[top] is the current state, values[top] the value shifted or reduced into it.
        states = [state] * STACK
        values = [None] * STACK
        top = 0
        for tok in tokens:
            kind = tok.type
            while True:
                try:                    # a subscript is cheaper than .get(), and a miss is an error
                    code = actions[state][kind]
                except KeyError:
                    raise _Unexpected(tok, states[:top + 1], start) from None
                if code >= 0:
                    state = code
                    top += 1
                    try:
                        states[top] = state
                    except IndexError:          # full: twice the room
                        states += states
                        values += values
                        states[top] = state
                    values[top] = tok
                    break
                rule = ~code
                if unit[rule]:
                    try:            # nested dicts: no key tuple to build and hash
                        state = states[top] = chains[state][kind][states[top - 1]]
                    except KeyError:
                        state = states[top] = self._chain(states[top - 1], state, kind)
                    continue
                size = sizes[rule]
                if size == 1:           # a third of all reductions: replace the top in place
                    value = callbacks[rule]([values[top]])
                    state = gotos[states[top - 1]][origins[rule]]
                    if state == end:
                        return value
                    values[top] = value
                    states[top] = state
                    continue
                first = top - size + 1          # where the rule's children start
                pair = pairs[rule]
                if pair is not None:    # children to the builder with no slice, no filter call
                    method, one, other = pair
                    if other is None:
                        value = method([values[first + one]])
                    else:
                        value = method([values[first + one], values[first + other] if other >= 0 else None])
                else:
                    value = callbacks[rule](values[first:top + 1] if size else [])
                top = first
                state = gotos[states[top - 1]][origins[rule]]
                if state == end:
                    return value
                try:
                    states[top] = state
                except IndexError:          # a rule of no children, on a full stack
                    states += states
                    values += values
                    states[top] = state
                values[top] = value
        raise AssertionError("token stream ended without $END")

    def _chain(self, below: int, state: int, kind: str) -> int:
        target = self._climb(below, state, kind)
        self.unit_chains.setdefault(state, {}).setdefault(kind, {})[below] = target
        return target

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

# Tokens that continue a complete expression (and a def's `->`); listing them all would drown the message.
_CONTINUATIONS = {"->", "+", "-", "*", "/", "//", "%", "@", "**", "<<", ">>", "&", "|", "^", "<", ">", "==", "!=",
                  "<=", ">=", "in", "not", "is", "and", "or", "if", "for", ".", "(", "[", "=", ":=", "+=", "-=", "*=",
                  "/=", "@=", "//=", "%=", "**=", "<<=", ">>=", "&=", "|=", "^="}
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
        # `yield` starts a statement and (on the right of `=`, in parentheses) an expression: where it may come,
        # an expression may too, and it goes unnamed as the expression's own words do
        self.yield_ = scanner.names.get("yield")
        self.statement_starts = (driver.expected_at("file_input") - self.expression_starts - self.continuations
                                 - {"_NEWLINE", "$END", self.yield_})
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
        expected = expected - {self.yield_}
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

