"""The front end: script text to a syntax.Module, through the LALR(1) tables Lark builds from grammar/gradcli.lark."""

from __future__ import annotations

import bisect
import gc
import hashlib
import os
import re
import sys
import unicodedata
from pathlib import Path

from gradcli.errors import ScriptSyntaxError
from gradcli.syntax import (
    Assert, Assign, Attribute, AugAssign, BinOp, BoolOp, Break, Call, Compare, Constant, Continue,
    Delete, ExprStmt, For, FormattedValue, FunctionDef, If, IfExp, Import, ImportFrom, JoinedStr,
    Keyword, List, Module, Name, Param, Pass, Return, Slice, Subscript, Tuple, UnaryOp, While,
    With, WithItem,
)

MAX_NESTING = 200           # brackets (and runs of prefix operators), as CPython's tokenizer allows
MAX_INDENT_LEVELS = 100     # CPython's limit too
TAB_SIZE = 8

ALLOWED_MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.autograd",
                   "torch.autograd.functional", "torch.linalg", "math")

# Python keywords outside the language. They lex as NAME; the layout pass refuses them.
REFUSED_KEYWORDS = {
    "class": "class definitions are",
    "lambda": "lambda expressions are",
    "try": "try statements (try/except/finally) are",
    "except": "try statements (try/except/finally) are",
    "finally": "try statements (try/except/finally) are",
    "raise": "raise statements are",
    "global": "global and nonlocal declarations are",
    "nonlocal": "global and nonlocal declarations are",
    "yield": "generators (yield) are",
    "async": "async code (async/await) is",
    "await": "async code (async/await) is",
}
REFUSED_TOKENS = {
    "{": "dicts and sets ({...}, and their comprehensions) are",
    ":=": "assignment expressions (:=) are",
    "->": "annotations are",
}
COMPREHENSIONS = {"LPAR": "generator expressions are", "LSQB": "list comprehensions are"}


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


def _error(message: str, line: int, col: int) -> ScriptSyntaxError:
    return ScriptSyntaxError(message, "<script>", line, col)


def _error_at(message: str, where) -> ScriptSyntaxError:
    """An error at a token or node: both carry `line` and `col`."""
    return ScriptSyntaxError(message, "<script>", where.line, where.col)


def _refused(what: str, where) -> ScriptSyntaxError:
    return _error_at(f"{what} not part of gradcli's language", where)


# ================================================================ loading the grammar, once

_FRONTEND = None


def _frontend() -> "_Frontend":
    global _FRONTEND
    if _FRONTEND is None:
        _FRONTEND = _Frontend(_load_lark())
    return _FRONTEND


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
    options = dict(_LARK_OPTIONS, postlex=_Layout(), transformer=_Builder())
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
    return lark.Lark(grammar, cache=str(cache), **options)


class _Frontend:
    """The pieces of one loaded grammar: scanner, layout pass and LALR driver."""

    def __init__(self, lark_parser):
        terminals = lark_parser.lexer_conf.terminals
        self.scanner = _Scanner(terminals, lark_parser.lexer_conf.ignore)
        self.layout = _Layout(self.scanner.names)
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


# ================================================================ scanner

class _Token:
    __slots__ = ("type", "value", "line", "col")

    def __init__(self, type: str, value: str, line: int, col: int):
        self.type = type
        self.value = value
        self.line = line
        self.col = col

    def __repr__(self):
        return f"Token({self.type}, {self.value!r}, {self.line}:{self.col})"


class _Scanner:
    """Lexer for the grammar's terminals: one regular expression, matched once per token.

    The terminals come from Lark, so the grammar file stays their only definition; Lark's
    basic lexer would do the same job three times slower. Like Lark's, it tries terminals
    in order of priority, then longest possible match, then longest pattern, and turns names
    that spell a keyword into that keyword's terminal.
    """

    def __init__(self, terminals, ignore):
        name_re = next(re.compile(t.pattern.to_regexp()) for t in terminals if t.name == "NAME")
        self.keywords = {}          # "if" -> "IF"
        self.punctuation = {}       # "**=" -> "__ANON_7"
        self.names = {}             # the text of every literal terminal -> its name
        patterns = []
        for t in terminals:
            if t.pattern.type == "str":
                self.names[t.pattern.value] = t.name
                if name_re.fullmatch(t.pattern.value):
                    self.keywords[t.pattern.value] = t.name
                else:
                    self.punctuation[t.pattern.value] = t.name
            else:
                patterns.append(t)
        patterns.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
        # Punctuation shares one group, longest text first, looked up by its text afterwards:
        # each group of an alternation costs a failed attempt on every token. It comes after
        # the patterns, so that ".5" is a number, not ".".
        groups = [f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in patterns]
        groups.append("(?P<PUNCT>%s)" % "|".join(map(re.escape, sorted(self.punctuation, key=len, reverse=True))))
        groups.append(r"(?P<ERROR>[\s\S])")
        self.regex = re.compile("|".join(groups))
        self.ignore = frozenset(ignore)

    def tokens(self, text: str, line: int = 1, col: int = 1):
        """Tokens of text, positioned as if text[0] sat at (line, col) of the script."""
        keywords, punctuation, ignore = self.keywords, self.punctuation, self.ignore
        line_start = 1 - col            # col == pos - line_start + 1 on the first line too
        last_end = 0
        for m in self.regex.finditer(text):
            kind = m.lastgroup
            value = m.group()
            if kind == "NAME":
                kind = keywords.get(value, "NAME")
            elif kind == "PUNCT":
                kind = punctuation[value]
            elif kind in ignore:
                if value[0] == "\\" and m.end() == len(text):
                    raise _error("unexpected end of file after line continuation character",
                                 line, m.start() - line_start + 1)
                if "\n" in value:
                    line += value.count("\n")
                    line_start = m.start() + value.rindex("\n") + 1
                continue
            elif kind == "ERROR":
                raise self._bad_character(text, m.start(), line, m.start() - line_start + 1)
            start = m.start()
            if kind == "_NEWLINE":
                # Placed at the end of the line's last token: "expected ':'" points there.
                at = last_end if last_end > line_start else start
                yield _Token(kind, value, line, at - line_start + 1)
            else:
                yield _Token(kind, value, line, start - line_start + 1)
            if "\n" in value:
                line += value.count("\n")
                line_start = start + value.rindex("\n") + 1
            last_end = m.end()

    @staticmethod
    def _bad_character(text: str, pos: int, line: int, col: int) -> ScriptSyntaxError:
        char = text[pos]
        if char in "'\"":
            start = pos         # point at the string's prefix letters (f'...), if it has any
            while start > 0 and pos - start < 2 and text[start - 1] in "rRbBfFuU":
                start -= 1
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start = pos     # the letters end a longer name
            col -= pos - start
            triple = "triple-quoted " if text.startswith(char * 3, pos) else ""
            return _error(f"unterminated {triple}string", line, col)
        if char == "\\":
            return _error("unexpected character after line continuation character", line, col)
        shown = char if char.isprintable() else repr(char)[1:-1]
        code = f" (U+{ord(char):04X})" if not char.isascii() or not char.isprintable() else ""
        return _error(f"invalid character '{shown}'{code}", line, col)


# ================================================================ layout: indentation and brackets

class _Layout:
    """Lark post-lexer: indentation becomes _INDENT/_DEDENT, newlines inside brackets vanish.

    It plays the part of Lark's Indenter, written afresh because that one has no Python
    error messages (an unmatched ')' is an AssertionError there), accepts inconsistent tabs
    and keeps its state on the instance, while f-string fields parse re-entrantly. It is
    also where tokens outside the language are refused by name, and where nesting is capped
    before it can get deep enough to exhaust Python's stack in later passes.
    """

    # Lark keeps these terminals though no rule uses them, so the scanner can produce them.
    always_accept = ("_NEWLINE", "LBRACE", "RBRACE", "WALRUS", "ARROW")

    def __init__(self, names: dict | None = None):
        names = names or {}
        self.openers = {names.get("(", "LPAR"): ")", names.get("[", "LSQB"): "]", names.get("{", "LBRACE"): "}"}
        self.closers = {names.get(")", "RPAR"): "(", names.get("]", "RSQB"): "[", names.get("}", "RBRACE"): "{"}
        self.refused = {names[text]: what for text, what in REFUSED_TOKENS.items() if text in names}
        # After one of these a '*', '-' or '@' is binary; anywhere else it is a prefix.
        self.operand_ends = {"NAME", "INT_NUMBER", "FLOAT_NUMBER", "IMAG_NUMBER", "STRING"} | {
            names.get(text, text) for text in (")", "]", "}", "True", "False", "None", "...")}
        self.stars = {names.get("*"), names.get("**")}
        self.prefix_ops = {names.get("-"), names.get("+"), names.get("~"), names.get("not")}
        self.statement_starts = {"_NEWLINE", names.get(";")}
        self.at = names.get("@")
        self.for_ = names.get("for")
        self.import_ = names.get("import")
        self.special = ({"_NEWLINE", "NAME", self.at, self.for_} | set(self.openers) | set(self.closers)
                        | set(self.refused) | self.stars | self.prefix_ops) - {None}

    def process(self, tokens, inside_brackets: bool = False):
        indents = [0]           # indentation widths with tabs to multiples of 8...
        alt_indents = [0]       # ...and with tabs as 1, which must agree (Python's TabError rule)
        brackets = [None] if inside_brackets else []    # opening tokens; None: an f-string field's braces
        prefix_run = 0          # prefix operators in a row: - - - x nests as deep as brackets do
        prev = "_NEWLINE"
        last = None
        special, operand_ends = self.special, self.operand_ends
        for tok in tokens:
            kind = tok.type
            if last is None and not inside_brackets and kind != "_NEWLINE" and tok.col > 1:
                raise _error_at("unexpected indent", tok)
            last = tok
            if kind not in special:
                prefix_run = 0
            elif kind == "NAME":
                name = tok.value
                if name[0] == "_" and name != "_":
                    raise _error_at("names starting with '_' are outside gradcli's language", tok)
                if name in REFUSED_KEYWORDS:
                    raise _refused(REFUSED_KEYWORDS[name], tok)
                prefix_run = 0
            elif kind == "_NEWLINE":
                if brackets:
                    continue
                prev = kind
                yield tok
                yield from self._indentation(tok, indents, alt_indents)
                continue
            elif kind in self.refused:
                raise _refused(self.refused[kind], tok)
            elif kind in self.openers:
                if len(brackets) >= MAX_NESTING + inside_brackets:
                    raise _error_at(f"too deeply nested (more than {MAX_NESTING} levels)", tok)
                brackets.append(tok)
                prefix_run = 0
            elif kind in self.closers:
                if not brackets or brackets[-1] is None:
                    raise _error_at(f"unmatched '{tok.value}'", tok)
                opener = brackets.pop()
                if self.closers[kind] != opener.value:
                    raise _error_at(f"closing parenthesis '{tok.value}' does not match opening "
                                    f"parenthesis '{opener.value}'", tok)
            elif kind == self.for_:
                if brackets and brackets[-1] is not None:
                    raise _refused(COMPREHENSIONS.get(brackets[-1].type, "comprehensions are"), tok)
            elif prev not in operand_ends:
                # '*', '**', '@', '-', '+', '~' and 'not' in prefix position: not after an operand.
                if kind in self.stars:
                    if prev == self.import_:
                        raise _refused("'from ... import *' is", tok)
                    raise _refused("star-args and starred expressions (*x, **x) are", tok)
                if kind == self.at:
                    if prev in self.statement_starts:
                        raise _refused("decorators are", tok)
                else:
                    prefix_run += 1
                    if prefix_run > MAX_NESTING:
                        raise _error_at(f"too deeply nested (more than {MAX_NESTING} levels)", tok)
            prev = kind
            yield tok
        if brackets and brackets[-1] is not None:
            raise _error_at(f"'{brackets[-1].value}' was never closed", brackets[-1])
        line, col = 1, 1
        if last is not None:        # just after the last token
            text = last.value
            if "\n" in text:
                line, col = last.line + text.count("\n"), len(text) - text.rindex("\n")
            else:
                line, col = last.line, last.col + len(text)
        for _ in range(len(indents) - 1):
            yield _Token("_DEDENT", "", line, col)
        yield _Token("$END", "", line, col)

    def _indentation(self, newline: _Token, indents: list, alt_indents: list):
        text = newline.value
        cut = text.rfind("\n")
        if cut < 0:                 # a comment at the very end: no next line
            return
        line = newline.line + text.count("\n")
        margin = text[cut + 1:]
        if "\f" in margin:          # a form feed resets the column, as in CPython
            margin = margin[margin.rindex("\f") + 1:]
        width = len(margin.expandtabs(TAB_SIZE)) if "\t" in margin else len(margin)
        alt_width = len(margin)
        if width > indents[-1]:
            if alt_width <= alt_indents[-1]:
                raise _error("inconsistent use of tabs and spaces in indentation", line, len(margin) + 1)
            if len(indents) >= MAX_INDENT_LEVELS:
                raise _error("too many levels of indentation", line, len(margin) + 1)
            indents.append(width)
            alt_indents.append(alt_width)
            yield _Token("_INDENT", margin, line, len(margin) + 1)
            return
        while width < indents[-1]:
            indents.pop()
            alt_indents.pop()
            yield _Token("_DEDENT", "", line, len(margin) + 1)
        if width != indents[-1]:
            raise _error("unindent does not match any outer indentation level", line, len(margin) + 1)
        if alt_width != alt_indents[-1]:
            raise _error("inconsistent use of tabs and spaces in indentation", line, len(margin) + 1)


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

    def __init__(self, scanner: _Scanner, driver: _Driver):
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
            return _error_at("unexpected indent", tok)
        if "_INDENT" in expected:
            return _error_at("expected an indented block", tok)
        found = self.found(tok) if not (fragment and tok.type == "$END") else "'}'"
        wanted = self.wanted(expected)
        if fragment:        # an f-string field ends where its expression does
            wanted = ["'}'" if word == "end of file" else word for word in wanted]
        if len(wanted) == 1 and wanted[0].startswith("'"):
            return _error_at(f"expected {wanted[0]}", tok)
        if wanted:
            listed = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " or " + wanted[-1]
            return _error_at(f"unexpected {found} (expected {listed})", tok)
        return _error_at(f"unexpected {found}", tok)

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


# ================================================================ tree builder (the Lark transformer)

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
         IfExp: "a conditional expression", Slice: "a slice", Tuple: "a tuple", List: "a list"}


def _what(node) -> str:
    if type(node) is Constant and (node.value is None or node.value is True or node.value is False):
        return str(node.value)
    if type(node) is Constant and node.value is Ellipsis:
        return "'...'"
    return _WHAT.get(type(node), "an expression")


def _check_target(node, verb: str, where) -> None:
    """Targets are names, attributes, subscripts, and tuples or lists of targets."""
    kind = type(node)
    if kind is Name or kind is Attribute or kind is Subscript:
        return
    if kind is Tuple or kind is List:
        for elt in node.elts:
            _check_target(elt, verb, where)
        return
    raise _error_at(f"cannot {verb} {_what(node)}", where if where is not None else node)


def _check_context(body: list, in_function: bool, in_loop: bool) -> None:
    """return only in a def, break and continue only in a loop: SyntaxErrors in Python too."""
    for stmt in body:
        kind = type(stmt)
        if kind is Return and not in_function:
            raise _error_at("'return' outside function", stmt)
        if kind is Break and not in_loop:
            raise _error_at("'break' outside loop", stmt)
        if kind is Continue and not in_loop:
            raise _error_at("'continue' not properly in loop", stmt)
        if kind is FunctionDef:
            _check_context(stmt.body, True, False)
        elif kind is For or kind is While:
            _check_context(stmt.body, in_function, True)
        elif kind is If:
            _check_context(stmt.body, in_function, in_loop)
            _check_context(stmt.orelse, in_function, in_loop)
        elif kind is With:
            _check_context(stmt.body, in_function, in_loop)


def _module(names: list) -> str:
    module = ".".join(t.value for t in names)
    if module not in ALLOWED_MODULES:
        if names[0].value == "torch":
            allowed = ", ".join(m for m in ALLOWED_MODULES if m.startswith("torch"))
            raise _error_at(f"import of '{module}' is not allowed: gradcli knows only {allowed} and math",
                            names[0])
        raise _error_at(f"import of '{module}' is not allowed: gradcli scripts can import only torch and math",
                        names[0])
    return module


class _Builder:
    """Lark transformer: one method per grammar rule or alias, building syntax nodes.

    Lark calls each method with the rule's children as soon as the parser reduces it,
    tokens included where the grammar keeps them (`!` rules), None for absent optionals.
    """

    # ---------------------------------------------------------------- module and blocks
    def file_input(self, c):
        body = _flatten(c)
        _check_context(body, in_function=False, in_loop=False)
        return Module(body, line=1, col=1)

    def fstring_expr(self, c):
        return c[0]

    def simple_stmts(self, c):
        return _flatten(c)

    def block(self, c):
        return _flatten(c)

    # ---------------------------------------------------------------- simple statements
    def expr_stmt(self, c):
        value = c[0]
        return ExprStmt(value, line=value.line, col=value.col)

    def assign(self, c):
        targets = c[0:-1:2]
        for target, equals in zip(targets, c[1:-1:2]):
            _check_target(target, "assign to", equals)
        first = targets[0]
        return Assign(targets, c[-1], line=first.line, col=first.col)

    def aug_assign(self, c):
        target, (op, tok), value = c
        if type(target) not in (Name, Attribute, Subscript):
            raise _error_at(f"cannot use augmented assignment ('{tok.value}') on {_what(target)}", tok)
        return AugAssign(target, op, value, line=target.line, col=target.col)

    # fmt: off
    def iadd(self, c):      return "add", c[0]
    def isub(self, c):      return "sub", c[0]
    def imul(self, c):      return "mul", c[0]
    def itruediv(self, c):  return "truediv", c[0]
    def imatmul(self, c):   return "matmul", c[0]
    def ifloordiv(self, c): return "floordiv", c[0]
    def imod(self, c):      return "mod", c[0]
    def ipow(self, c):      return "pow", c[0]
    # fmt: on

    def return_stmt(self, c):
        tok, value = c
        return Return(value, line=tok.line, col=tok.col)

    def pass_stmt(self, c):
        return Pass(line=c[0].line, col=c[0].col)

    def break_stmt(self, c):
        return Break(line=c[0].line, col=c[0].col)

    def continue_stmt(self, c):
        return Continue(line=c[0].line, col=c[0].col)

    def del_stmt(self, c):
        tok, targets = c
        for target in targets:
            _check_target(target, "delete", None)
        return Delete(targets, line=tok.line, col=tok.col)

    def del_targets(self, c):
        return [x for x in c[0::2] if x is not None]

    def assert_stmt(self, c):
        tok, test, _, msg = c
        return Assert(test, msg, line=tok.line, col=tok.col)

    def import_name(self, c):
        tok = c[0]
        # `import torch, math` makes one Import per module; the enclosing block flattens the list.
        return [Import(_module(names), alias, line=tok.line, col=tok.col) for names, alias in c[1::2]]

    def dotted_as_name(self, c):
        names, alias = c
        return names, (alias.value if alias is not None else None)

    def dotted_name(self, c):
        return c

    def import_from(self, c):
        tok, names, _, items = c
        return ImportFrom(_module(names), items, line=tok.line, col=tok.col)

    def import_from_as_names(self, c):
        return c

    def import_from_as_name(self, c):
        name, alias = c
        return name.value, (alias.value if alias is not None else None)

    # ---------------------------------------------------------------- compound statements
    def function_def(self, c):
        tok, name, _, params, _, _, body = c
        return FunctionDef(name.value, params or [], body, line=tok.line, col=tok.col)

    def params(self, c):
        seen = set()
        defaults = False
        for param in c:
            if param.name in seen:
                raise _error_at(f"duplicate parameter '{param.name}' in function definition", param)
            seen.add(param.name)
            if param.default is not None:
                defaults = True
            elif defaults:
                raise _error_at("parameter without a default follows parameter with a default", param)
        return c

    def param(self, c):
        name, default = c
        return Param(name.value, default, line=name.line, col=name.col)

    def if_stmt(self, c):
        tok, test, _, body, orelse = c
        return If(test, body, _orelse(orelse), line=tok.line, col=tok.col)

    elif_stmt = if_stmt

    def else_block(self, c):
        return c

    def for_stmt(self, c):
        tok, target, _, iterable, _, body, orelse = c
        if orelse is not None:
            raise _refused("'for ... else' is", orelse[0])
        _check_target(target, "assign to", None)
        return For(target, iterable, body, line=tok.line, col=tok.col)

    def while_stmt(self, c):
        tok, test, _, body, orelse = c
        if orelse is not None:
            raise _refused("'while ... else' is", orelse[0])
        return While(test, body, line=tok.line, col=tok.col)

    def with_stmt(self, c):
        tok = c[0]
        items = [item for item in c if type(item) is WithItem]
        if len(items) == 1 and items[0].target is None and type(items[0].context) is Tuple and items[0].context.elts:
            # `with (a, b):` holds two context managers, as in Python 3.10+, not a tuple.
            items = [WithItem(e, None, line=e.line, col=e.col) for e in items[0].context.elts]
        return With(items, c[-1], line=tok.line, col=tok.col)

    def with_item(self, c):
        context, target = c
        if target is not None:
            _check_target(target, "assign to", None)
        return WithItem(context, target, line=context.line, col=context.col)

    def target_list(self, c):
        # c is [t1, ",", t2, ..., "," or None]: a comma anywhere makes a tuple, as in `for x, in xs`.
        if c[1] is None:
            return c[0]
        elts = [x for x in c[0::2] if x is not None]
        return Tuple(elts, line=elts[0].line, col=elts[0].col)

    # ---------------------------------------------------------------- expressions
    def tuple(self, c):
        return Tuple(c, line=c[0].line, col=c[0].col)

    def if_exp(self, c):
        body, test, orelse = c
        return IfExp(test, body, orelse, line=body.line, col=body.col)

    def disjunction(self, c):
        return BoolOp("or", c, line=c[0].line, col=c[0].col)

    def conjunction(self, c):
        return BoolOp("and", c, line=c[0].line, col=c[0].col)

    def not_(self, c):
        return UnaryOp("not_", c[1], line=c[0].line, col=c[0].col)

    def comparison(self, c):
        left = c[0]
        return Compare(left, c[1::2], c[2::2], line=left.line, col=left.col)

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

    def or_(self, c):       return BinOp(c[0], "or_", c[1], line=c[0].line, col=c[0].col)
    def xor(self, c):       return BinOp(c[0], "xor", c[1], line=c[0].line, col=c[0].col)
    def and_(self, c):      return BinOp(c[0], "and_", c[1], line=c[0].line, col=c[0].col)
    def lshift(self, c):    return BinOp(c[0], "lshift", c[1], line=c[0].line, col=c[0].col)
    def rshift(self, c):    return BinOp(c[0], "rshift", c[1], line=c[0].line, col=c[0].col)
    def add(self, c):       return BinOp(c[0], "add", c[1], line=c[0].line, col=c[0].col)
    def sub(self, c):       return BinOp(c[0], "sub", c[1], line=c[0].line, col=c[0].col)
    def mul(self, c):       return BinOp(c[0], "mul", c[1], line=c[0].line, col=c[0].col)
    def truediv(self, c):   return BinOp(c[0], "truediv", c[1], line=c[0].line, col=c[0].col)
    def floordiv(self, c):  return BinOp(c[0], "floordiv", c[1], line=c[0].line, col=c[0].col)
    def mod(self, c):       return BinOp(c[0], "mod", c[1], line=c[0].line, col=c[0].col)
    def matmul(self, c):    return BinOp(c[0], "matmul", c[1], line=c[0].line, col=c[0].col)
    def pow(self, c):       return BinOp(c[0], "pow", c[1], line=c[0].line, col=c[0].col)

    def pos(self, c):       return UnaryOp("pos", c[1], line=c[0].line, col=c[0].col)
    def neg(self, c):       return UnaryOp("neg", c[1], line=c[0].line, col=c[0].col)
    def invert(self, c):    return UnaryOp("invert", c[1], line=c[0].line, col=c[0].col)
    # fmt: on

    # ---------------------------------------------------------------- trailers
    def attribute(self, c):
        value, name = c
        return Attribute(value, name.value, line=value.line, col=value.col)

    def call(self, c):
        func, arguments = c
        args, keywords = arguments if arguments is not None else ([], [])
        return Call(func, args, keywords, line=func.line, col=func.col)

    def arguments(self, c):
        args, keywords = [], []
        for arg in c:
            if type(arg) is Keyword:
                if any(k.name == arg.name for k in keywords):
                    raise _error_at(f"keyword argument repeated: {arg.name}", arg)
                keywords.append(arg)
            elif keywords:
                raise _error_at("positional argument follows keyword argument", arg)
            else:
                args.append(arg)
        return args, keywords

    def keyword(self, c):
        name, value = c
        return Keyword(name.value, value, line=name.line, col=name.col)

    def subscript(self, c):
        value, index = c
        return Subscript(value, index, line=value.line, col=value.col)

    def slice(self, c):
        lower, colon, upper, _, step = c
        first = lower if lower is not None else colon
        return Slice(lower, upper, step, line=first.line, col=first.col)

    # ---------------------------------------------------------------- atoms
    def name(self, c):
        tok = c[0]
        return Name(tok.value, line=tok.line, col=tok.col)

    def true(self, c):
        return Constant(True, line=c[0].line, col=c[0].col)

    def false(self, c):
        return Constant(False, line=c[0].line, col=c[0].col)

    def none(self, c):
        return Constant(None, line=c[0].line, col=c[0].col)

    def ellipsis(self, c):
        return Constant(Ellipsis, line=c[0].line, col=c[0].col)

    def integer(self, c):
        tok = c[0]
        return Constant(int(tok.value, 0), line=tok.line, col=tok.col)

    def float_number(self, c):
        tok = c[0]
        return Constant(float(tok.value), line=tok.line, col=tok.col)

    def imaginary(self, c):
        raise _refused("complex numbers (imaginary literals like 1j) are", c[0])

    def strings(self, c):
        return _strings(c)

    def group(self, c):
        # A parenthesised expression starts at its '(' (as a tuple's does): nodes built on
        # it, like the call in (a + b).sum(), then start there too.
        node = c[1]
        node.line, node.col = c[0].line, c[0].col
        return node

    def paren_tuple(self, c):
        elts = [] if len(c) == 2 else [c[1]] + (c[3] or [])
        return Tuple(elts, line=c[0].line, col=c[0].col)

    def list(self, c):
        return List(c[1] or [], line=c[0].line, col=c[0].col)

    def star_named_expressions(self, c):
        return c


# ================================================================ string literals and f-strings

_PREFIXES = {"", "r", "u", "f", "b", "rb", "br", "fr", "rf"}
_SIMPLE_ESCAPES = {"\n": "", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t", "v": "\v"}
_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})"
                     r"|N\{([^}\n]*)\}|([\s\S]))")
_FSTRING_SPECIAL = re.compile(r"[{}\\]")


def _strings(tokens: list):
    """Adjacent string literals, concatenated: a Constant, or a JoinedStr if any is an f-string."""
    first = tokens[0]
    parts, formatted = [], False
    for tok in tokens:
        where = _Locator(tok)
        text = tok.value
        quote = 0
        while text[quote] not in "'\"":
            quote += 1
        prefix = text[:quote].lower()
        if prefix not in _PREFIXES:
            raise _error_at(f"invalid string prefix '{text[:quote]}'", tok)
        if "b" in prefix:
            raise _refused("bytes literals (b'...') are", tok)
        size = 3 if len(text) - quote >= 6 and text.startswith(text[quote] * 3, quote) else 1
        body_at = quote + size
        body = text[body_at:len(text) - size]
        raw = "r" in prefix
        if "f" in prefix:
            formatted = True
            parts.extend(_fstring(where, body, body_at, raw, 0, False)[0])
        else:
            parts.append(_unescape(body, raw, where, body_at))
    if not formatted:
        return Constant("".join(parts), line=first.line, col=first.col)
    merged, run = [], []        # runs of literal text are joined once, not grown piece by piece
    for part in parts:
        if type(part) is str:
            run.append(part)
            continue
        if run and "".join(run):
            merged.append("".join(run))
        run = []
        merged.append(part)
    if run and "".join(run):
        merged.append("".join(run))
    return JoinedStr(merged, line=first.line, col=first.col)


class _Locator:
    """(line, col) of a character of a string token, which may span lines: f-string fields
    and bad escapes are reported where they are in the script."""

    def __init__(self, tok):
        self.tok = tok
        self.breaks = [m.start() for m in re.finditer("\n", tok.value)] if "\n" in tok.value else []

    def __call__(self, offset: int):
        before = bisect.bisect_left(self.breaks, offset)
        if not before:
            return self.tok.line, self.tok.col + offset
        return self.tok.line + before, offset - self.breaks[before - 1]


def _unescape(body: str, raw: bool, where: _Locator, at: int) -> str:
    if raw or "\\" not in body:
        return body

    def replace(m):
        octal, hex2, hex4, hex8, name, other = m.groups()
        if other is not None:
            if other in "xuUN":
                line, col = where(at + m.start())
                kind = {"x": "\\xXX", "u": "\\uXXXX", "U": "\\UXXXXXXXX", "N": "\\N{...}"}[other]
                raise _error(f"truncated {kind} escape" if other != "N" else "malformed \\N character escape",
                             line, col)
            return _SIMPLE_ESCAPES.get(other, m.group())    # unknown escapes keep their backslash
        if name is not None:
            try:
                return unicodedata.lookup(name)
            except KeyError:
                raise _error(f"unknown Unicode character name '{name}'", *where(at + m.start())) from None
        code = int(octal, 8) if octal else int(hex2 or hex4 or hex8, 16)
        if code > 0x10FFFF:
            raise _error("illegal Unicode character", *where(at + m.start()))
        return chr(code)

    return _ESCAPE.sub(replace, body)


def _fstring(where: _Locator, body: str, at: int, raw: bool, depth: int, in_spec: bool, i: int = 0):
    """The parts of an f-string body (or of a format spec, which ends at its '}').

    Returns (parts, index where scanning stopped). `at` is the body's offset in the token.
    """
    parts, start, n = [], i, len(body)
    while True:
        m = _FSTRING_SPECIAL.search(body, i)
        if m is None:
            if in_spec:
                raise _error("f-string: expecting '}'", *where(at + n))
            parts.append(_unescape(body[start:], raw, where, at + start))
            return parts, n
        j = m.start()
        char = body[j]
        if char == "\\":
            if raw or body[j + 1:j + 2] in ("{", "}"):
                i = j + 1
            elif body.startswith("N{", j + 1):     # \N{NAME}: its braces are not a field
                close = body.find("}", j)
                i = close + 1 if close >= 0 else n
            else:
                i = j + 2
            continue
        if in_spec and char == "}":
            parts.append(_unescape(body[start:j], raw, where, at + start))
            return parts, j
        if not in_spec and body.startswith(char, j + 1):      # {{ and }} are literal braces
            parts.append(_unescape(body[start:j + 1], raw, where, at + start))
            i = start = j + 2
            continue
        if char == "}":
            raise _error("f-string: single '}' is not allowed", *where(at + j))
        parts.append(_unescape(body[start:j], raw, where, at + start))
        i = start = _fstring_field(where, body, at, raw, depth, j, parts)


def _fstring_field(where: _Locator, body: str, at: int, raw: bool, depth: int, brace: int, parts: list) -> int:
    """Parse the field {expr[=][!c][:spec]} opening at body[brace]; append it; return where it ends."""
    if depth >= 2:
        raise _error("f-string: expressions nested too deeply", *where(at + brace))
    start = brace + 1
    end = _fstring_expression_end(where, body, at, start)
    n = len(body)
    if end >= n:
        raise _error("f-string: expecting '}'", *where(at + brace))
    source = body[start:end]
    if not source.strip():
        raise _error("f-string: empty expression not allowed", *where(at + brace))
    if "\\" in source:
        raise _error("f-string expression part cannot include a backslash", *where(at + start))
    value = _frontend().parse_fragment(source, *where(at + start))
    conversion = None
    self_documenting = body[end] == "="
    if self_documenting:            # f"{x=}" prints "x=" and then repr(x)
        end += 1
        while end < n and body[end] == " ":
            end += 1
        parts.append(body[start:end])
    if end < n and body[end] == "!":
        conversion = body[end + 1:end + 2]
        if conversion not in ("r", "s", "a"):
            raise _error(f"f-string: invalid conversion character '{conversion}': expected 's', 'r', or 'a'",
                         *where(at + end + 1))
        end += 2
    spec = None
    if end < n and body[end] == ":":
        line, col = where(at + end + 1)
        spec_parts, end = _fstring(where, body, at, raw, depth + 1, True, end + 1)
        spec = JoinedStr([p for p in spec_parts if p != ""], line=line, col=col)
    if end >= n or body[end] != "}":
        raise _error("f-string: expecting '}'", *where(at + min(end, n)))
    if self_documenting and conversion is None and spec is None:
        conversion = "r"
    line, col = where(at + brace)
    parts.append(FormattedValue(value, conversion, spec, line=line, col=col))
    return end + 1


def _fstring_expression_end(where: _Locator, body: str, at: int, i: int) -> int:
    """Where a field's expression stops: a top-level '}', '!', ':' or self-documenting '='."""
    n, depth = len(body), 0
    while i < n:
        char = body[i]
        if char in "'\"":
            quote = char * 3 if body.startswith(char * 3, i) else char
            close = body.find(quote, i + len(quote))
            if close < 0:
                raise _error("f-string: unterminated string", *where(at + i))
            i = close + len(quote)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0 and char == "}":
                return i
            depth = max(depth - 1, 0)
        elif char == "#":
            raise _error("f-string expression part cannot include '#'", *where(at + i))
        elif depth == 0:
            two = body[i:i + 2]
            if two in ("!=", "==", "<=", ">="):
                i += 2
                continue
            if char in "!:" or char == "=":
                return i
        i += 1
    return n
