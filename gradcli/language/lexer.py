"""Script text to tokens: the scanner, and the layout pass (indentation, brackets, tokens outside the language)."""

from __future__ import annotations

import re

from itertools import chain

from gradcli.errors import ScriptSyntaxError
from gradcli.language.syntaxerrors import Problems, error, error_at

MAX_NESTING = 200           # brackets (and runs of prefix operators), as CPython's tokenizer allows
MAX_INDENT_LEVELS = 100     # CPython's limit too
TAB_SIZE = 8

# The stand-in for a refused token (below) that puts nothing in its place.
NOTHING = ""
# Python keywords outside the language. They lex as NAME; the layout pass refuses them. So that one run
# reports all of a script's refused constructs, each is replaced by a stand-in on which the parse goes on:
# the text of another token, or one of the above.
REFUSED_KEYWORDS = {
    "async": ("async code (async/await) is", NOTHING),
    "await": ("async code (async/await) is", NOTHING),
}
REFUSED_TOKENS: dict = {}
# Python's soft keywords: the scanner lexes them as names, and the layout pass decides (Layout.process).
SOFT_KEYWORDS = frozenset(("match", "case"))


# ================================================================ scanner

class Token:
    """A terminal of the grammar at its place in the script. It has no __init__: the scanner makes one
    per token as `Token()` and fills it in place, which costs a quarter less than a class call that
    runs an __init__ or than `object.__new__(Token)` (callgrind: about 980 instructions against
    1,270 and 1,920, freeing included); elsewhere `token()` makes one."""
    __slots__ = ("type", "value", "line", "col")

    def __repr__(self):
        return f"Token({self.type}, {self.value!r}, {self.line}:{self.col})"


def token(type: str, value: str, line: int, col: int) -> Token:
    tok = Token()
    tok.type = type
    tok.value = value
    tok.line = line
    tok.col = col
    return tok


class Scanner:
    """Lexer for the grammar's terminals: one regular expression, matched once per token.

    The terminals come from Lark, so the grammar file stays their only definition; Lark's
    basic lexer would do the same job three times slower. Like Lark's, it tries terminals
    in order of priority, then longest possible match, then longest pattern, and turns names
    that spell a keyword into that keyword's terminal.
    """

    def __init__(self, spec: dict):
        """`spec` is the scanner part of the grammar's tables (gradcli.language.tables)."""
        self.keywords = spec["keywords"]        # "if" -> "IF"
        self.punctuation = spec["punctuation"]  # "**=" -> "__ANON_7"
        self.names = spec["names"]              # the text of every literal terminal -> its name
        self.regex = re.compile(spec["regex"])
        self.ignore = frozenset(spec["ignore"])

    def tokens(self, text: str, line: int = 1, col: int = 1):
        """Tokens of text, positioned as if text[0] sat at (line, col) of the script."""
        keywords, punctuation, ignore = self.keywords, self.punctuation, self.ignore
        line_start = 1 - col            # col == pos - line_start + 1 on the first line too
        last_end = 0
        # Each match is the blanks before a token, then the token (gradcli.language.tables): the token's
        # text is its group's, and it ends where the match does.
        for m in self.regex.finditer(text):
            kind = m.lastgroup
            value = m[kind]
            end = m.end()
            if kind == "NAME":
                if value in keywords:       # a test and a subscript cost less than a call of get()
                    kind = keywords[value]
                elif not value.isascii():   # placed where it is written (NFKC may change its length)
                    yield token(kind, self._unicode_name(text, value, end, line, line_start), line,
                                end - len(value) - line_start + 1)
                    last_end = end
                    continue
            elif kind == "PUNCT":
                kind = punctuation[value]
            elif kind == "_NEWLINE":
                # Placed at the end of the line's last token: "expected ':'" points there.
                start = end - len(value)
                yield token(kind, value, line, (last_end if last_end > line_start else start) - line_start + 1)
                if "\n" in value:      # not for a comment at the very end
                    line += value.count("\n")
                    line_start = start + value.rindex("\n") + 1
                last_end = end
                continue
            elif kind == "STRING":      # triple-quoted strings may span lines
                start = end - len(value)
                yield token(kind, value, line, start - line_start + 1)
                if "\n" in value:
                    line += value.count("\n")
                    line_start = start + value.rindex("\n") + 1
                last_end = end
                continue
            elif kind == "NAME_":        # a name right before a quote: not a string prefix after all
                kind = keywords.get(value, "NAME")
                if not value.isascii():
                    yield token(kind, self._unicode_name(text, value, end, line, line_start), line,
                                end - len(value) - line_start + 1)
                    last_end = end
                    continue
            elif kind in ignore:
                if value[0] == "\\" and end == len(text):
                    raise error("unexpected end of file after line continuation character",
                                line, end - len(value) - line_start + 1)
                if "\n" in value:
                    line += value.count("\n")
                    line_start = end - len(value) + value.rindex("\n") + 1
                continue
            elif kind == "ERROR":
                raise self._bad_character(text, end - 1, line, end - line_start)
            # names, keywords, punctuation and numbers: never a line break inside
            tok = Token()
            tok.type = kind
            tok.value = value
            tok.line = line
            tok.col = end - len(value) - line_start + 1
            yield tok
            last_end = end

    def _unicode_name(self, text: str, value: str, end: int, line: int, line_start: int) -> str:
        """A name with characters beyond ASCII, as CPython's tokenizer takes it: each character must be one
        Python allows in identifiers (else its "invalid character" at the first that is not), and the name
        is normalised to NFKC (`ﬁle` is `file`, `café` with a combining accent is `café`)."""
        if not value.isidentifier():
            start = end - len(value)
            bad = next(i for i in range(len(value)) if not value[:i + 1].isidentifier())
            raise self._bad_character(text, start + bad, line, start + bad - line_start + 1)
        import unicodedata      # (only scripts with such names need it)
        return unicodedata.normalize("NFKC", value)

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
            return error(f"unterminated {triple}string", line, col)
        if char == "\\":
            return error("unexpected character after line continuation character", line, col)
        shown = char if char.isprintable() else repr(char)[1:-1]
        code = f" (U+{ord(char):04X})" if not char.isascii() or not char.isprintable() else ""
        return error(f"invalid character '{shown}'{code}", line, col)


# ================================================================ layout: indentation and brackets

class Layout:
    """Lark post-lexer: indentation becomes _INDENT/_DEDENT, newlines inside brackets vanish.

    It plays the part of Lark's Indenter, written afresh because that one has no Python
    error messages (an unmatched ')' is an AssertionError there), accepts inconsistent tabs
    and keeps its state on the instance, while f-string fields parse re-entrantly. It is
    also where tokens outside the language are refused by name (noted, with a stand-in put in
    their place so that the parse goes on to the script's other problems), and where nesting
    is capped before it can get deep enough to exhaust Python's stack in later passes.

    It also reads Python's soft keywords as CPython's parser does. `match` that starts a logical line
    ending in ':' is the MATCH keyword (no statement of names ends so: compound statements start with
    keywords), as is one followed by what cannot follow a name (`match x`), so the line is read ahead before
    it is passed on; `case` that starts a line directly in
    a match block is CASE (nothing else may stand there). Anywhere else both are names.
    """

    # Lark keeps these terminals though no rule uses them, so the scanner can produce them.
    always_accept = ("_NEWLINE", "LBRACE", "RBRACE", "WALRUS")

    def __init__(self, names: dict | None = None):
        names = names or {}
        self.openers = {names.get("(", "LPAR"): ")", names.get("[", "LSQB"): "]", names.get("{", "LBRACE"): "}"}
        self.closers = {names.get(")", "RPAR"): "(", names.get("]", "RSQB"): "[", names.get("}", "RBRACE"): "{"}
        self.names = names
        self.refused = {names[text]: refusal for text, refusal in REFUSED_TOKENS.items() if text in names}
        # After one of these a '*', '-' or '@' is binary; anywhere else it is a prefix.
        self.operand_ends = {"NAME", "INT_NUMBER", "FLOAT_NUMBER", "IMAG_NUMBER", "STRING"} | {
            names.get(text, text) for text in (")", "]", "}", "True", "False", "None", "...")}
        self.stars = {names.get("*"), names.get("**")}
        self.prefix_ops = {names.get("-"), names.get("+"), names.get("~"), names.get("not")}
        self.at = names.get("@")
        self.for_ = names.get("for")
        self.import_ = names.get("import")
        self.match_ = names.get("match")
        self.case_ = names.get("case")
        self.colon = names.get(":")
        # what may follow `match` only when it begins a match statement (as a name, `match x` never parses): the
        # line is then read as one, so that a mistake in it gets CPython's error (`match x: pass`)
        self.subject_only = {"NAME", "INT_NUMBER", "FLOAT_NUMBER", "IMAG_NUMBER", "STRING"} | {
            names[text] for text in ("None", "True", "False", "lambda", "{", "~") if text in names}
        self.unusual_names = frozenset(REFUSED_KEYWORDS) | SOFT_KEYWORDS    # names the NAME branch looks at
        self.special = ({"_NEWLINE", "NAME", self.at, self.for_}
                        | set(self.openers) | set(self.closers) | set(self.refused) | self.stars
                        | self.prefix_ops) - {None}

    def process(self, tokens, problems: Problems | None = None, inside_brackets: bool = False):
        """The tokens the parser reads. Tokens outside the language are noted in `problems` (a fresh list
        when none is given) and replaced by their stand-ins; text that cannot parse raises."""
        if problems is None:
            problems = Problems()
        indents = [0]           # indentation widths with tabs to multiples of 8...
        alt_indents = [0]       # ...and with tabs as 1, which must agree (Python's TabError rule)
        brackets = [None] if inside_brackets else []    # opening tokens; None: an f-string field's braces
        prefix_run = 0          # prefix operators in a row: - - - x nests as deep as brackets do
        prev = "_NEWLINE"
        last = None
        special, operand_ends, unusual_names = self.special, self.operand_ends, self.unusual_names
        openers, closers, refused = self.openers, self.closers, self.refused
        raw = iter(tokens)
        source = raw
        match_blocks = []       # len(indents) inside each open match statement's block, innermost last
        opened_match = False    # the logical line being read is a match statement's header
        # `for tok in source` is left only to read a `match` line ahead, then resumed on what it read and the rest
        while True:
            for tok in source:
                kind = tok.type
                if last is None and not inside_brackets and kind != "_NEWLINE" and tok.col > 1:
                    raise error_at("unexpected indent", tok)
                last = tok
                if kind not in special:
                    prefix_run = 0
                elif kind == "NAME":
                    prefix_run = 0
                    name = tok.value
                    if name not in unusual_names:
                        pass
                    elif name in REFUSED_KEYWORDS:
                        tok = self._stand_in(REFUSED_KEYWORDS[name], tok, problems)
                        if tok is None:
                            continue
                        kind = tok.type
                    elif prev != "_NEWLINE" or brackets:
                        pass            # not at the start of a statement: a name
                    elif name == "case":
                        if match_blocks and match_blocks[-1] == len(indents):
                            tok.type = kind = self.case_
                    else:
                        ahead = self._logical_line(raw)
                        if self._ends_with_colon(ahead) or ahead and ahead[0].type in self.subject_only:
                            tok.type = kind = self.match_
                            opened_match = True
                        source = chain(ahead, raw)
                        prev = kind
                        yield tok
                        break
                elif kind == "_NEWLINE":
                    if brackets:
                        continue
                    prev = kind
                    yield tok
                    depth = len(indents)
                    yield from self._indentation(tok, indents, alt_indents)
                    if opened_match:
                        opened_match = False
                        if len(indents) > depth:
                            match_blocks.append(len(indents))
                    while match_blocks and match_blocks[-1] > len(indents):
                        match_blocks.pop()
                    problems.dirty = False      # the next logical line starts: stand-ins above no longer matter
                    continue
                elif kind in refused:
                    stand_in = self._stand_in(refused[kind], tok, problems)
                    if stand_in is None:
                        continue
                    tok, kind = stand_in, stand_in.type
                elif kind in openers:
                    if len(brackets) >= MAX_NESTING + inside_brackets:
                        raise error_at(f"too deeply nested (more than {MAX_NESTING} levels)", tok)
                    brackets.append(tok)
                    prefix_run = 0
                elif kind in closers:
                    if not brackets or brackets[-1] is None:
                        raise error_at(f"unmatched '{tok.value}'", tok)
                    opener = brackets.pop()
                    if closers[kind] != opener.value:
                        raise error_at(f"closing parenthesis '{tok.value}' does not match opening "
                                       f"parenthesis '{opener.value}'", tok)
                elif prev not in operand_ends:
                    # '*', '**', '@', '-', '+', '~' and 'not' in prefix position: not after an operand.
                    # A prefix `*`/`**` unpacks (f(*xs), [*a, *b], def f(*args)) and never nests deeper.
                    if kind in self.stars:
                        if prev == self.import_:
                            problems.refuse("'from ... import *' is", tok)
                            tok = token("NAME", "*", tok.line, tok.col)     # a name the parse goes on with
                            kind = "NAME"
                    elif kind != self.at:           # a decorator's '@' starts a statement
                        prefix_run += 1
                        if prefix_run > MAX_NESTING:
                            raise error_at(f"too deeply nested (more than {MAX_NESTING} levels)", tok)
                prev = kind
                yield tok
            else:
                break
        if brackets and brackets[-1] is not None:
            raise error_at(f"'{brackets[-1].value}' was never closed", brackets[-1])
        line, col = 1, 1
        if last is not None:        # just after the last token
            text = last.value
            if "\n" in text:
                line, col = last.line + text.count("\n"), len(text) - text.rindex("\n")
            else:
                line, col = last.line, last.col + len(text)
        for _ in range(len(indents) - 1):
            yield token("_DEDENT", "", line, col)
        yield token("$END", "", line, col)

    def _logical_line(self, raw) -> list:
        """The raw tokens from here to the end of the logical line, its newline included."""
        openers, closers = self.openers, self.closers
        ahead = []
        depth = 0
        for tok in raw:
            ahead.append(tok)
            kind = tok.type
            if kind in openers:
                depth += 1
            elif kind in closers:
                depth -= 1
            elif kind == "_NEWLINE" and depth <= 0:
                break
        return ahead

    def _ends_with_colon(self, ahead: list) -> bool:
        """Whether a line read ahead (what follows a `match`) ends in ':' and has something before it."""
        kinds = [tok.type for tok in ahead if tok.type != "_NEWLINE"]
        return len(kinds) > 1 and kinds[-1] == self.colon

    def _stand_in(self, refusal: tuple, tok: Token, problems: Problems) -> Token | None:
        """Note a refused token; the token that stands in for it, or None for nothing."""
        what, stand_in = refusal
        problems.refuse(what, tok)
        problems.dirty = True
        if stand_in == NOTHING:
            return None
        return token(self.names.get(stand_in, stand_in), stand_in, tok.line, tok.col)

    def _indentation(self, newline: Token, indents: list, alt_indents: list):
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
                raise error("inconsistent use of tabs and spaces in indentation", line, len(margin) + 1)
            if len(indents) >= MAX_INDENT_LEVELS:
                raise error("too many levels of indentation", line, len(margin) + 1)
            indents.append(width)
            alt_indents.append(alt_width)
            yield token("_INDENT", margin, line, len(margin) + 1)
            return
        while width < indents[-1]:
            indents.pop()
            alt_indents.pop()
            yield token("_DEDENT", "", line, len(margin) + 1)
        if width != indents[-1]:
            raise error("unindent does not match any outer indentation level", line, len(margin) + 1)
        if alt_width != alt_indents[-1]:
            raise error("inconsistent use of tabs and spaces in indentation", line, len(margin) + 1)
