"""Match statements: each case's pattern compiled once into a matcher closure, run as CPython 3.11 runs it.

A matcher is `m(env, subject, found) -> bool`: whether `subject` matches, appending to `found` a
(binder, value) pair for each name the pattern captures. The names are bound only once the whole
pattern has matched, then the guard runs (a guard that fails leaves them bound, as in CPython); the
first case that matches and passes its guard runs, and no other.

What CPython decides per type, gradcli decides the same way: a sequence pattern matches what CPython
flags as a sequence (list, tuple, range, deque, torch.Size... never str, nor a tensor), a mapping
pattern what it flags as a mapping (dict and its kin); a class pattern checks isinstance with the
class as the script names it (torch.Tensor, int, a script's class), then reads attributes as `obj.name`
does, so a class pattern reaches nothing attribute access does not (`case object(__dict__=d)` is refused
as `x.__dict__` is).

This module is imported only when a script has a match statement.
"""

from __future__ import annotations

from gradcli.language import access, classes, stdlib, syntax
from gradcli.language.flow import locate

_SEQUENCE = 1 << 5          # CPython's Py_TPFLAGS_SEQUENCE and Py_TPFLAGS_MAPPING, which its own
_MAPPING = 1 << 6           # MATCH_SEQUENCE and MATCH_MAPPING test
# the builtins whose one positional sub-pattern matches the subject itself (`case int(n)`)
_MATCH_SELF = frozenset((bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple))
_MISSING = object()
_REFUSED = "is outside gradcli's language"      # an attribute the language does not reach (gradcli.language.access)


def chooser(compiler, node: syntax.Match):
    """A function (env) -> the index of the case to run, or -1: it evaluates the subject, tries the
    patterns in order, binds the names of the one that matches and checks its guard."""
    subject_fn = compiler.expr(node.subject)
    cases = []
    for case in node.cases:
        matcher = _pattern(compiler, case.pattern)
        guard = compiler.expr(case.guard) if case.guard is not None else None
        cases.append((matcher, guard))

    def choose(env):
        subject = subject_fn(env)
        for i, (matcher, guard) in enumerate(cases):
            found = []
            if not matcher(env, subject, found):
                continue
            for bind, value in found:
                bind(env, value)
            if guard is None or guard(env):
                return i
        return -1
    return choose


def _pattern(compiler, p):
    return _MAKERS[p.__class__](compiler, p)


def _match_value(compiler, p):
    value_fn = compiler.expr(p.value)
    return lambda env, subject, found: bool(subject == value_fn(env))


def _match_singleton(compiler, p):
    value = p.value
    return lambda env, subject, found: subject is value


def _match_as(compiler, p):
    bind = compiler.binder(p.name) if p.name is not None else None
    inner = _pattern(compiler, p.pattern) if p.pattern is not None else None
    if inner is None:
        if bind is None:
            return lambda env, subject, found: True         # the wildcard `_`

        def capture(env, subject, found):
            found.append((bind, subject))
            return True
        return capture

    def match_as(env, subject, found):
        if not inner(env, subject, found):
            return False
        if bind is not None:
            found.append((bind, subject))
        return True
    return match_as


def _match_or(compiler, p):
    alternatives = [_pattern(compiler, alt) for alt in p.patterns]

    def match_or(env, subject, found):
        for alt in alternatives:
            mine = []
            if alt(env, subject, mine):
                found.extend(mine)
                return True
        return False
    return match_or


def _match_sequence(compiler, p):
    star = next((i for i, sub in enumerate(p.patterns) if sub.__class__ is syntax.MatchStar), None)
    subs = [_pattern(compiler, sub) if sub.__class__ is not syntax.MatchStar else None for sub in p.patterns]
    size = len(subs)
    if star is None:
        def match_fixed(env, subject, found):
            if not type(subject).__flags__ & _SEQUENCE or len(subject) != size:
                return False
            return all(sub(env, item, found) for sub, item in zip(subs, list(subject)))
        return match_fixed
    before, after = subs[:star], subs[star + 1:]
    name = p.patterns[star].name
    bind = compiler.binder(name) if name is not None else None

    def match_starred(env, subject, found):
        if not type(subject).__flags__ & _SEQUENCE or len(subject) < size - 1:
            return False
        if bind is None:        # `*_`: the items around it are read by index, as CPython does
            n = len(subject)
            items = [subject[i] for i in range(len(before))] + [subject[i] for i in range(n - len(after), n)]
            return all(sub(env, item, found) for sub, item in zip(before + after, items))
        items = list(subject)
        end = len(items) - len(after)
        if not all(sub(env, item, found) for sub, item in zip(before, items)):
            return False
        found.append((bind, items[len(before):end]))
        return all(sub(env, item, found) for sub, item in zip(after, items[end:]))
    return match_starred


def _match_mapping(compiler, p):
    keys = [compiler.expr(k) for k in p.keys]
    subs = [_pattern(compiler, sub) for sub in p.patterns]
    bind = compiler.binder(p.rest) if p.rest is not None else None
    line, col = p.line, p.col

    def match_mapping(env, subject, found):
        if not type(subject).__flags__ & _MAPPING:
            return False
        if keys and len(subject) < len(keys):
            return False
        wanted = [k(env) for k in keys]
        seen = []
        get = subject.get
        values = []
        for key in wanted:
            if key in seen:
                e = ValueError(f"mapping pattern checks duplicate key ({key!r})")
                locate(e, line, col)
                raise e
            seen.append(key)
            value = get(key, _MISSING)
            if value is _MISSING:
                return False
            values.append(value)
        if not all(sub(env, value, found) for sub, value in zip(subs, values)):
            return False
        if bind is not None:
            rest = dict(subject)
            for key in wanted:
                del rest[key]
            found.append((bind, rest))
        return True
    return match_mapping


def _match_class(compiler, p):
    cls_fn = compiler.expr(p.cls)
    positional = [_pattern(compiler, sub) for sub in p.patterns]
    names = list(p.kwd_attrs)
    keywords = [_pattern(compiler, sub) for sub in p.kwd_patterns]
    line, col = p.cls.line, p.cls.col

    def match_class(env, subject, found):
        cls = cls_fn(env)
        real = stdlib.pattern_class(cls)
        if real is None:
            raise _located(TypeError("called match pattern must be a type"), line, col)
        if classes.PROTOCOLS and real in classes.PROTOCOLS:      # typing.Protocol's own check
            if not classes.PROTOCOL_CHECKS[0](subject, real, stdlib.isinstance_of):
                return False
        elif not isinstance(subject, real) and not (
                classes.VIRTUAL and classes.virtual_subclass(subject.__class__, real)):       # (abc's register)
            return False
        attrs = names
        if positional:
            match_args = getattr(real, "__match_args__", _MISSING)
            shown = stdlib.class_name(cls) or real.__name__
            if match_args is _MISSING:
                if real in _MATCH_SELF or any(base in _MATCH_SELF for base in real.__mro__[1:]):
                    if len(positional) > 1:
                        raise _located(TypeError(f"{shown}() accepts 1 positional sub-pattern "
                                                 f"({len(positional)} given)"), line, col)
                    if not positional[0](env, subject, found):
                        return False
                    return _keywords(env, subject, found, names, keywords, line, col)
                match_args = ()
            if match_args.__class__ is not tuple:
                raise _located(TypeError(f"{shown}.__match_args__ must be a tuple (got "
                                         f"{stdlib.type_name(match_args)})"), line, col)
            if len(positional) > len(match_args):
                plural = "" if len(match_args) == 1 else "s"
                raise _located(TypeError(f"{shown}() accepts {len(match_args)} positional sub-pattern{plural} "
                                         f"({len(positional)} given)"), line, col)
            for name in match_args[:len(positional)]:
                if name.__class__ is not str:
                    raise _located(TypeError(f"__match_args__ elements must be strings (got "
                                             f"{stdlib.type_name(name)})"), line, col)
            attrs = list(match_args[:len(positional)]) + names
            for i, name in enumerate(attrs):
                if name in attrs[:i]:
                    raise _located(TypeError(f"{shown}() got multiple sub-patterns for attribute {name!r}"),
                                   line, col)
            return _keywords(env, subject, found, attrs, positional + keywords, line, col)
        return _keywords(env, subject, found, attrs, keywords, line, col)
    return match_class


def _keywords(env, subject, found, names: list, subs: list, line: int, col: int) -> bool:
    """Read every named attribute (a missing one fails the match), then match each against its pattern."""
    values = []
    for name in names:
        try:
            values.append(access.read_attr(subject, name))
        except AttributeError as e:
            if _REFUSED in str(e):          # not missing: out of the language's reach, and said so
                raise _located(e, line, col)
            return False
    return all(sub(env, value, found) for sub, value in zip(subs, values))


def _located(e: BaseException, line: int, col: int) -> BaseException:
    locate(e, line, col)
    return e


_MAKERS = {syntax.MatchValue: _match_value, syntax.MatchSingleton: _match_singleton, syntax.MatchAs: _match_as,
           syntax.MatchOr: _match_or, syntax.MatchSequence: _match_sequence, syntax.MatchMapping: _match_mapping,
           syntax.MatchClass: _match_class}
