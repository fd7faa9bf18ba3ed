"""The tree builder's methods for match statements and their patterns, with the checks CPython's compiler makes."""

from __future__ import annotations

from gradcli.language.lexer import Token
from gradcli.language.syntax import (
    Attribute, Constant, JoinedStr, Match, MatchAs, MatchCase, MatchClass, MatchMapping, MatchOr, MatchSequence,
    MatchSingleton, MatchStar, MatchValue, Name, Tuple, UnaryOp,
)
from gradcli.language.syntaxerrors import error_at

_SINGLETONS = {"None": None, "True": True, "False": False}


class PatternBuilder:
    """Mixed into treebuild.Builder: one method per pattern rule or alias of the grammar."""

    # ---------------------------------------------------------------- the statement
    def match_stmt(self, c):
        tok, subject = c[0], c[1]
        cases = [x for x in c[2:] if type(x) is MatchCase]
        last = len(cases) - 1
        for i, case in enumerate(cases):
            # CPython's compiler: an irrefutable pattern (without a guard) before the last case hides the rest
            self._check_pattern(case.pattern, case.guard is not None or i == last, set())
        return Match(subject, cases, tok.line, tok.col)

    def subject_tuple(self, c):
        first, rest = c
        elts = [first, *(rest or [])]
        return Tuple(elts, first.line, first.col)

    def case_block(self, c):
        tok, pattern = c[0], c[1]
        guard = next((x for x in c[2:-1] if x is not None and type(x) is not Token), None)
        return MatchCase(pattern, guard, c[-1], tok.line, tok.col)

    # ---------------------------------------------------------------- patterns
    def open_sequence_pattern(self, c):
        first, rest = c
        start = self._start(first)
        return MatchSequence([first, *(rest or [])], start.line, start.col)

    def maybe_sequence_pattern(self, c):
        return c

    def as_pattern(self, c):
        pattern, name = c
        if name.value == "_":
            self.problems.invalid(error_at("cannot use '_' as a target", name))
        start = self._start(pattern)
        return MatchAs(pattern, name.value, start.line, start.col)

    def or_pattern(self, c):
        start = self._start(c[0])
        return MatchOr(c, start.line, start.col)

    def capture_pattern(self, c):
        tok = c[0]
        return MatchAs(None, None if tok.value == "_" else tok.value, tok.line, tok.col)

    def value_pattern(self, c):
        node = c[0]
        return MatchValue(node, node.line, node.col)

    def group_pattern(self, c):
        # (p) is p, at p's own place (CPython's errors point inside the parentheses); a pattern that starts
        # with it (`(1 | 2) as n`) starts at the '('
        self.pattern_groups[id(c[1])] = c[0]
        return c[1]

    def _start(self, p):
        """The token or node where a pattern that begins with `p` begins."""
        return self.pattern_groups.get(id(p), p)

    def list_pattern(self, c):
        return MatchSequence(c[1] or [], c[0].line, c[0].col)

    def tuple_pattern(self, c):
        # "(" ")" or "(" first "," [rest] ")"
        elts = [] if len(c) == 2 else [c[1], *(c[3] or [])]
        return MatchSequence(elts, c[0].line, c[0].col)

    def star_pattern(self, c):
        tok, name = c
        return MatchStar(None if name.value == "_" else name.value, tok.line, tok.col)

    def mapping_pattern(self, c):
        brace, items = c[0], c[1] or []
        keys, patterns, rest = [], [], None
        for item in items:
            if rest is not None:        # `**rest` must come last: CPython's parser stops at what follows
                self.problems.invalid(error_at("invalid syntax", item[0]))
                break
            if type(item) is list:      # double_star_pattern
                if item[1].value == "_":
                    self.problems.invalid(error_at("invalid syntax", item[1]))
                rest = item[1].value
            else:
                keys.append(item[0])
                patterns.append(item[1])
        node = MatchMapping(keys, patterns, rest, brace.line, brace.col)
        seen = {}
        for key in keys:
            if type(key) is Constant:
                if key.value in seen:
                    self.problems.invalid(error_at(f"mapping pattern checks duplicate key ({key.value!r})", node))
                    break
                seen[key.value] = key
        return node

    def mapping_items(self, c):
        return c

    def key_value_pattern(self, c):
        key, pattern = c
        if type(key) is MatchValue:
            key = key.value
        elif type(key) is MatchSingleton:
            key = Constant(key.value, key.line, key.col)
        return key, pattern

    def double_star_pattern(self, c):
        return list(c)          # ["**", NAME]: a list tells it from a (key, pattern) pair (mapping_pattern)

    def class_pattern(self, c):
        cls, arguments = c[0], c[2] or []
        positional, names, keywords = [], [], []
        for arg in arguments:
            if type(arg) is tuple:
                name, pattern = arg
                if name.value in names:
                    self.problems.invalid(error_at(f"attribute name repeated in class pattern: {name.value}",
                                                   pattern))
                names.append(name.value)
                keywords.append(pattern)
            elif keywords:
                self.problems.invalid(error_at("positional patterns follow keyword patterns", arg))
            else:
                positional.append(arg)
        return MatchClass(cls, positional, names, keywords, cls.line, cls.col)

    def pattern_arguments(self, c):
        return c

    def keyword_pattern(self, c):
        return c[0], c[1]

    def attr(self, c):
        value, name = c
        return Attribute(value, name.value, value.line, value.col)

    # ---------------------------------------------------------------- literals
    def number_pattern(self, c):
        number = c[0]
        return MatchValue(number, number.line, number.col)

    def complex_pattern(self, c):
        real, sign, imaginary = c
        if imaginary.type != "IMAG_NUMBER":
            self.problems.invalid(error_at("imaginary number required in complex literal", imaginary))
        else:
            self.imaginary([imaginary])             # refused, as complex numbers are
        return MatchValue(real, real.line, real.col)

    def signed_number(self, c):
        tok = c[-1]
        if tok.type == "IMAG_NUMBER":
            node = self.imaginary([tok])            # refused, as complex numbers are
        elif tok.type == "INT_NUMBER":
            node = self.integer([tok])
        else:
            node = self.float_number([tok])
        if len(c) == 2:
            node.value = -node.value
            node.line, node.col = c[0].line, c[0].col
        return node

    def string_pattern(self, c):
        node = self.strings(c)
        if type(node) is JoinedStr:
            self.problems.invalid(error_at("patterns may only match literals and attribute lookups", node))
            node = Constant("", node.line, node.col)
        return MatchValue(node, node.line, node.col)

    def singleton_pattern(self, c):
        tok = c[0]
        return MatchSingleton(_SINGLETONS[tok.value], tok.line, tok.col)

    # ---------------------------------------------------------------- CPython's compile-time checks
    def _check_pattern(self, p, allow_irrefutable: bool, bound: set) -> None:
        """The names a pattern binds go in `bound`; what CPython's compiler refuses is noted: a name
        bound twice, alternatives binding different names, an irrefutable pattern that hides others,
        two starred names in one sequence."""
        kind = type(p)
        if kind is MatchAs:
            if p.pattern is None:
                if not allow_irrefutable:
                    what = f"name capture {p.name!r}" if p.name is not None else "wildcard"
                    self.problems.invalid(error_at(f"{what} makes remaining patterns unreachable", p))
            else:
                self._check_pattern(p.pattern, allow_irrefutable, bound)
            if p.name is not None:
                self._bind(p.name, p, bound)
        elif kind is MatchOr:
            names = None
            last = len(p.patterns) - 1
            for i, alt in enumerate(p.patterns):
                alt_bound = set(bound)
                self._check_pattern(alt, allow_irrefutable and i == last, alt_bound)
                if names is None:
                    names = alt_bound
                elif alt_bound != names:
                    self.problems.invalid(error_at("alternative patterns bind different names", alt))
            bound |= names
        elif kind is MatchSequence:
            stars = [x for x in p.patterns if type(x) is MatchStar]
            if len(stars) > 1:
                self.problems.invalid(error_at("multiple starred names in sequence pattern", p))
            for sub in p.patterns:
                if type(sub) is MatchStar:
                    if sub.name is not None:
                        self._bind(sub.name, sub, bound)
                else:
                    self._check_pattern(sub, True, bound)
        elif kind is MatchMapping:
            for sub in p.patterns:
                self._check_pattern(sub, True, bound)
            if p.rest is not None:
                self._bind(p.rest, p, bound)
        elif kind is MatchClass:
            for sub in p.patterns + p.kwd_patterns:
                self._check_pattern(sub, True, bound)

    def _bind(self, name: str, where, bound: set) -> None:
        if name in bound:
            self.problems.invalid(error_at(f"multiple assignments to name {name!r} in pattern", where))
        bound.add(name)
