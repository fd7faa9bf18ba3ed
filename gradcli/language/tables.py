"""The grammar's parse tables as plain data: built once with Lark, then loaded from a cache without it.

Lark is only the table generator. From `grammar/gradcli.lark` it derives the terminals, the LALR(1)
action and goto tables, and, for each rule, how its children are filtered before the tree builder
sees them. All of that is written out here as lists, dicts, strings and numbers, stored once per
grammar text with marshal, and loaded by later runs in a fraction of a millisecond. So `gradcli run` does not import lark
(2.7 MB and 15-20 ms) nor keep lark's table objects (3.1 MB) when the cache is warm.

The data (FORMAT names its layout; a change of layout must change FORMAT):
  scanner   regex (one alternation, a group per pattern terminal, then PUNCT and ERROR),
            keywords {text: terminal}, punctuation {text: terminal}, names {text: terminal},
            ignore [terminal]
  actions   per state {terminal: shift state (>= 0) or ~rule (< 0)}
  gotos     per state {nonterminal: state}
  rules     per rule (callback, size, origin, unit, expand1, keep)
              callback  the tree builder's method name, or None for an inlined `_rule`
                        (its children are spliced into the parent's)
              keep      None when every child is passed on as it is; else (picks, trailing_nones)
                        with picks a tuple of (index, splice, nones_before): the children kept,
                        whether each one is an inlined rule's list to splice, and how many None
                        placeholders (absent [optional] parts) come before it
  start_states, end_states   {start symbol: state}

The cache is read as data that cannot run code, and only from where nobody else can write (a file
that anyone could plant would otherwise run as the next user of gradcli): a folder owned by the
user and writable by nobody else (not a link to one), a regular file of the user's in it, opened
without following a link and without blocking (a FIFO), of bounded size, whose CRC matches its
content; then marshal of plain values (it builds numbers, strings, containers and code objects,
which nothing here calls) and a check of every value's type and range. Anything else is ignored and
the tables are rebuilt; the XDG spec's relative $XDG_CACHE_HOME is ignored too.
"""

from __future__ import annotations

import marshal
import os
import re
import stat
import sys
import zlib

FORMAT = "gradcli-tables-3"
START = ["file_input", "fstring_expr"]
LARK_OPTIONS = dict(parser="lalr", lexer="basic", start=START, maybe_placeholders=True)


MAGIC = FORMAT.encode() + b"\n"
MAX_BYTES = 16 << 20        # today's tables take 95 KB; a bigger file is not ours


def cache_base() -> str:
    """$XDG_CACHE_HOME, or ~/.cache: the XDG base directory spec says to ignore a relative path."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return base


def cache_path(grammar: str):
    """Where the tables for this grammar text, built by this version of this module, are kept (a Path)."""
    from pathlib import Path
    return Path(_cache_file(grammar))


def _cache_file(grammar: str) -> str:
    """cache_path as a string: the run path does not import pathlib (3 ms of start-up with urllib)."""
    # hashlib would load OpenSSL (3.5 MB of resident memory) for a file name; a CRC names the file
    # and the grammar text stored inside it confirms the match. The module's own source is part of
    # the key: tables built by other code (an older gradcli, an edit being tried) are never reused.
    data = "\0".join([FORMAT, grammar]).encode() + b"\0" + _own_source()
    return os.path.join(cache_base(), "gradcli", f"grammar-{zlib.crc32(data):08x}{len(data):06x}.tables")


def _own_source() -> bytes:
    try:
        with open(__file__, "rb") as f:
            return f.read()
    except OSError:         # run from a zip or a frozen build: the FORMAT name alone
        return b""


def load(grammar: str, builder_type) -> dict:
    """The tables for `grammar`: from the cache when it holds them, else built and cached.

    A missing, unreadable, corrupt, foreign or unsafe cache file is rebuilt quietly; an unwritable
    or unsafe cache folder leaves the tables uncached. Writes go through a temporary file and a
    rename, so a concurrent gradcli never reads half a file.
    """
    parent, name = os.path.split(_cache_file(grammar))
    folder = _open_folder(parent)
    try:
        tables = _read(folder, name, grammar, builder_type) if folder is not None else None
        if tables is not None:
            return tables
        tables = build(grammar, builder_type)
        if folder is None and not os.path.lexists(parent):
            try:
                os.makedirs(parent, mode=0o700)
            except OSError:
                return tables
            folder = _open_folder(parent)
        if folder is not None and _write(folder, name, tables):
            _remove_stale(folder, name)
        return tables
    finally:
        if folder is not None:
            os.close(folder)


_NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _private(st) -> bool:
    """Owned by this user and writable by no one else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _open_folder(folder: str):
    """A descriptor of the cache folder when it is a directory (not a link to one) of this user's
    that no one else may write; else None. The files in it are reached through the descriptor, so
    the folder checked is the folder read, whatever is renamed meanwhile."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    except OSError:
        return None
    try:
        if _private(os.fstat(fd)):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _read(folder: int, name: str, grammar: str, builder_type):
    """The cached tables, or None: anything but a private regular file holding intact tables for
    this grammar is ignored (a link is never followed, a FIFO never waited for)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=folder)
    except OSError:             # missing, a symbolic link, unreadable
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _private(st) or st.st_size > MAX_BYTES:
            return None
        data = os.read(fd, st.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        tables = decode(data)
        return tables if tables is not None and _valid(tables, grammar, builder_type) else None
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, re.error):
        return None


def encode(tables: dict) -> bytes:
    """The cache file's bytes: MAGIC, the CRC-32 of the rest, then the tables marshalled."""
    payload = marshal.dumps(tables, 4)
    return MAGIC + zlib.crc32(payload).to_bytes(4, "big") + payload


def decode(data: bytes):
    """What a cache file holds, unchecked but for its CRC: None when it is not intact."""
    head = len(MAGIC) + 4
    if len(data) < head or not data.startswith(MAGIC):
        return None
    payload = data[head:]
    if zlib.crc32(payload) != int.from_bytes(data[len(MAGIC):head], "big"):
        return None             # truncated or damaged
    try:
        return marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None


_KEYS = {"format", "grammar", "lark", "scanner", "actions", "gotos", "rules", "start_states", "end_states"}
_SCANNER_KEYS = {"regex", "keywords", "punctuation", "names", "ignore"}


def _names(d) -> bool:
    """A dict of strings to strings."""
    return d.__class__ is dict and all(k.__class__ is str and v.__class__ is str for k, v in d.items())


def _states(d, n: int, low: int = 0) -> bool:
    """A dict of strings to integers in range(low, n)."""
    return d.__class__ is dict and all(k.__class__ is str and v.__class__ is int and low <= v < n
                                       for k, v in d.items())


def _recipe(rule, builder_type) -> bool:
    """A rule's recipe as _rule_recipe makes it (so callbacks() can build from it)."""
    if rule.__class__ is not tuple or len(rule) != 6:
        return False
    callback, size, origin, unit, expand1, keep = rule
    if callback is not None and (callback.__class__ is not str or callback.startswith("_")
                                 or not callable(getattr(builder_type, callback, None))):
        return False
    if size.__class__ is not int or size < 0 or origin.__class__ is not str \
            or unit.__class__ is not bool or expand1.__class__ is not bool:
        return False
    if keep is None:
        return True
    if keep.__class__ is not tuple or len(keep) != 2 or keep[1].__class__ is not int or keep[0].__class__ is not tuple:
        return False
    return all(p.__class__ is tuple and len(p) == 3 and p[0].__class__ is int and 0 <= p[0] < size
               and p[1].__class__ is bool and p[2].__class__ is int for p in keep[0])


def _valid(tables, grammar: str, builder_type) -> bool:
    """Whether `tables` has the layout FORMAT names, for this grammar, every value of its type and
    every state and rule number in range: content that passes cannot make the parser fail."""
    if tables.__class__ is not dict or tables.keys() != _KEYS or tables["format"] != FORMAT \
            or tables["grammar"] != grammar or tables["lark"].__class__ is not str:
        return False
    scanner, actions, gotos, rules = tables["scanner"], tables["actions"], tables["gotos"], tables["rules"]
    if scanner.__class__ is not dict or scanner.keys() != _SCANNER_KEYS or scanner["regex"].__class__ is not str \
            or not all(_names(scanner[k]) for k in ("keywords", "punctuation", "names")) \
            or scanner["ignore"].__class__ is not list or not all(t.__class__ is str for t in scanner["ignore"]):
        return False
    if actions.__class__ is not list or gotos.__class__ is not list or rules.__class__ is not list \
            or len(actions) != len(gotos):
        return False
    n = len(actions)
    if not all(_states(row, n, -len(rules)) for row in actions) or not all(_states(row, n) for row in gotos):
        return False
    if not all(_recipe(rule, builder_type) for rule in rules):
        return False
    if not _states(tables["start_states"], n) or not _states(tables["end_states"], n):
        return False
    re.compile(scanner["regex"])        # or re.error; the scanner reuses the compiled pattern
    return True


def _write(folder: int, name: str, tables: dict) -> bool:
    """Write the tables to a new private file (mode 0600, never an existing file or a link), renamed
    into place."""
    temporary = f"{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder)
        with open(fd, "wb") as f:
            f.write(encode(tables))
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        return True
    except OSError:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        return False


KEPT_OTHERS = 3       # tables of other gradcli versions kept beside the current one (the newest written)


def _remove_stale(folder: int, current: str) -> None:
    """Delete the tables of older grammar versions (and older cache layouts), as far as we can.

    Each grammar edit writes a file under a new name, and they would pile up. Yet two gradcli versions
    used side by side (two environments, a checkout beside an installed copy) would delete each other's
    tables at every run and rebuild them (importing lark: 0.1 s): so the KEPT_OTHERS newest files of
    other versions stay. Only a write comes here, so a run that loads cached tables never lists the folder.
    """
    try:
        names = os.listdir(folder)
    except OSError:
        return
    others = []
    for name in names:
        if name == current or not name.startswith("grammar-"):
            continue
        if name.endswith(".lark-cache"):
            others.append((-1, name))           # an older layout: always removed
        elif name.endswith(".tables"):
            try:
                others.append((os.stat(name, dir_fd=folder, follow_symlinks=False).st_mtime_ns, name))
            except OSError:
                pass
    others.sort(reverse=True)
    for stamp, name in others[KEPT_OTHERS:] + [o for o in others[:KEPT_OTHERS] if o[0] < 0]:
        try:
            os.unlink(name, dir_fd=folder)
        except OSError:
            pass


# ================================================================ building, with lark

def build(grammar: str, builder_type) -> dict:
    """Derive the tables from the grammar with Lark (read by `_read_lark`, the only place gradcli imports it)."""
    lark = _read_lark(grammar)
    rules, index = [], {}
    actions_out = [{} for _ in range(lark["n_states"])]
    gotos_out = [{} for _ in range(lark["n_states"])]
    for state, actions in lark["states"].items():
        for symbol, (shift, arg) in actions.items():
            if shift and symbol in lark["nonterminals"]:
                gotos_out[state][symbol] = arg
            elif shift:
                actions_out[state][symbol] = arg
            else:
                if arg not in index:
                    index[arg] = len(rules)
                    rules.append(lark["rules"][arg])
                actions_out[state][symbol] = ~index[arg]
    return {
        "format": FORMAT,
        "grammar": grammar,
        "lark": lark["version"],
        "scanner": _scanner_spec(lark["terminals"], lark["ignore"]),
        "actions": actions_out,
        "gotos": gotos_out,
        "rules": [_rule_recipe(rule, builder_type) for rule in rules],
        "start_states": lark["start_states"],
        "end_states": lark["end_states"],
    }


# The Lark release whose internals `_read_lark` reads (pyproject.toml pins the minor version).
LARK_VERSION = "1.3.1"


def _read_lark(grammar: str) -> dict:
    """Everything gradcli needs from Lark's LALR analysis of `grammar`, as plain data: the one
    function that reads Lark's internal objects (its parse table, rules and terminals), written for
    LARK_VERSION. The rest of this module works on what it returns.

    states: {state: {symbol: (True, next state) for a shift, (False, rule id) for a reduction}};
    rules: {rule id: the rule's name, origin, whether it has an alias, its symbols as (name, is a
    terminal, filtered out), Lark's empty_indices, keep_all_tokens and expand1 options};
    terminals: name, "str" or "re", its text, its regular expression, the longest match, the priority.
    """
    import lark
    from lark.parsers.lalr_analysis import Shift

    from gradcli.language.lexer import Layout

    # Layout as the post-lexer tells Lark which declared terminals it may produce (_INDENT...).
    lark_parser = lark.Lark(grammar, postlex=Layout(), **LARK_OPTIONS)
    table = lark_parser.parser.parser.parser.parse_table
    states, rules, ids, nonterminals = {}, {}, {}, set()
    for state, actions in table.states.items():
        out = states[state] = {}
        for symbol, (action, arg) in actions.items():
            if action is Shift:
                out[str(symbol)] = (True, arg)
                continue
            if arg not in ids:
                ids[arg] = rule_id = len(ids)
                options = arg.options
                rules[rule_id] = {
                    "name": str(arg.alias or options.template_source or arg.origin.name),
                    "origin": str(arg.origin.name), "alias": bool(arg.alias),
                    "expansion": tuple((str(sym.name), bool(sym.is_term), bool(sym.is_term and sym.filter_out))
                                       for sym in arg.expansion),
                    "empty_indices": tuple(options.empty_indices or ()),
                    "keep_all_tokens": bool(options.keep_all_tokens), "expand1": bool(options.expand1)}
                nonterminals.add(str(arg.origin.name))
            out[str(symbol)] = (False, ids[arg])
    terminals = [{"name": t.name, "type": t.pattern.type, "value": t.pattern.value, "regexp": t.pattern.to_regexp(),
                  "max_width": t.pattern.max_width, "priority": t.priority}
                 for t in lark_parser.lexer_conf.terminals]
    return {"version": lark.__version__, "states": states, "n_states": max(table.states) + 1, "rules": rules,
            "nonterminals": nonterminals, "terminals": terminals, "ignore": list(lark_parser.lexer_conf.ignore),
            "start_states": {str(k): v for k, v in table.start_states.items()},
            "end_states": {str(k): v for k, v in table.end_states.items()}}


def _scanner_spec(terminals, ignore) -> dict:
    """One regular expression for all terminals, ordered as Lark's basic lexer tries them: by
    priority, then longest possible match, then longest pattern."""
    from gradcli.language.lexer import SOFT_KEYWORDS
    name_re = next(re.compile(t["regexp"]) for t in terminals if t["name"] == "NAME")
    keywords, punctuation, names, patterns = {}, {}, {}, []
    for t in terminals:
        if t["type"] == "str":
            names[t["value"]] = t["name"]
            if t["value"] in SOFT_KEYWORDS:
                pass            # lexed as NAME: the layout pass decides (gradcli.language.lexer)
            elif name_re.fullmatch(t["value"]):
                keywords[t["value"]] = t["name"]
            else:
                punctuation[t["value"]] = t["name"]
        else:
            patterns.append(t)
    patterns.sort(key=lambda t: (-t["priority"], -t["max_width"], -len(t["value"]), t["name"]))
    # Spaces and tabs between tokens are skipped by a prefix of every match rather than matched on
    # their own: half as many matches (a 10k-line script: 151,000 -> 117,500), half the regex time.
    blank = _only_blanks([t for t in patterns if t["name"] in ignore])
    groups = []
    for t in patterns:
        if t is blank:
            continue
        if t["name"] == "NAME":
            # Names are most of the tokens, so they are tried first; a name directly followed by
            # a quote may be a string prefix (f"..."), so that case waits for the string pattern,
            # and NAME_ (reported as NAME) takes what is left of it afterwards.
            groups.insert(0, f"(?P<NAME>(?>{t['regexp']})(?![\'\"]))")
            groups.append(f"(?P<NAME_>{t['regexp']})")
        else:
            groups.append(f"(?P<{t['name']}>{t['regexp']})")
    # Punctuation shares one group, longest text first, looked up by its text afterwards: each
    # group of an alternation costs a failed attempt on every token. It is tried right after names
    # (the two make most tokens: 0.046 -> 0.032 s of matching on the 10k-line benchmark); a
    # punctuation mark that also starts a number (".5") gives way when a digit follows.
    numbers = [re.compile(t["regexp"]) for t in patterns if t["name"] != "NAME"]
    marks = []
    for text in sorted(punctuation, key=len, reverse=True):
        starts_number = any(regex.fullmatch(text + "5") for regex in numbers)
        marks.append(re.escape(text) + ("(?![0-9])" if starts_number else ""))
    groups.insert(1, "(?P<PUNCT>%s)" % "|".join(marks))
    groups.append(r"(?P<ERROR>[\s\S])")
    return {"regex": "(?:%s)?+(?:%s)" % (blank["regexp"], "|".join(groups)), "keywords": keywords,
            "punctuation": punctuation, "names": names, "ignore": sorted(ignore)}


def _only_blanks(ignored: list):
    """The ignored terminal that is a run of spaces and tabs: [ \\t\\f]+ in some spelling."""
    for t in ignored:
        regex = re.compile(t["regexp"])
        if all(regex.fullmatch(text) for text in (" ", "\t", " \t\f ")) and not regex.search("\n"):
            return t
    raise ValueError("the grammar ignores no run of blanks, which the scanner expects")


def _rule_recipe(rule, builder_type) -> tuple:
    """How a reduction by `rule` becomes a value: which children reach which builder method.

    Lark's rules for this: tokens of anonymous or `_` terminals are dropped (unless the rule keeps
    all tokens, `!rule`); children that are `_rule`s are spliced in; each absent `[optional]` part
    is a None (maybe_placeholders); a `?rule` with one child left is that child.
    """
    name = rule["name"]
    expansion = rule["expansion"]
    # How many placeholders precede each symbol (and follow the last): runs of True in
    # empty_indices, which marks with True each absent optional part among the symbols.
    nones = [0] * (len(expansion) + 1)
    if rule["empty_indices"]:
        position = 0
        for absent in rule["empty_indices"]:
            if absent:
                nones[position] += 1
            else:
                position += 1
    picks, pending = [], 0
    for i, (sym_name, is_term, filter_out) in enumerate(expansion):
        pending += nones[i]
        if rule["keep_all_tokens"] or not filter_out:
            picks.append((i, not is_term and sym_name.startswith("_"), pending))
            pending = 0
    trailing = pending + nones[len(expansion)]
    plain = trailing == 0 and len(picks) == len(expansion) and not any(s or n for _, s, n in picks)
    keep = None if plain else (tuple(picks), trailing)

    expand1 = rule["expand1"] and not rule["alias"]
    if hasattr(builder_type, name):
        callback = name
    elif name.startswith("_"):
        callback = None
    elif expand1 and len(picks) == 1 and not picks[0][1] and not trailing and not any(n for _, _, n in picks):
        callback = None         # always exactly one child, which a ?rule passes on
    else:
        raise ValueError(f"grammar rule {name!r} has no method in {builder_type.__name__}")
    unit = (len(expansion) == 1 and expand1 and not expansion[0][1]
            and not expansion[0][0].startswith("_") and not rule["empty_indices"])
    return (callback, len(expansion), sys.intern(rule["origin"]), unit, expand1, keep)


# ================================================================ callbacks for the driver

def callbacks(rules: list, builder) -> list:
    """One function per rule, from its recipe: children list -> value."""
    return [_callback(recipe, builder) for recipe in rules]


def pairs(rules: list, builder) -> list:
    """For each rule whose builder method takes two of its children, or one and an absent optional part
    after it, and nothing else (`primary "." NAME`, `primary "(" [arguments] ")"`): (method, i, j) with
    i and j the children's places (j == -1: None after child i; j is None: child i alone), for the driver
    to pass them without slicing the stack or calling a filter; None for the other rules. About a third
    of a parse's reductions take this way."""
    out = []
    for name, size, _origin, _unit, expand1, keep in rules:
        pair = None
        if name is not None and keep is not None and not expand1:
            picks, trailing = keep
            plain = not any(splice or nones for _, splice, nones in picks)
            if plain and len(picks) == 2 and not trailing:
                pair = (getattr(builder, name), picks[0][0], picks[1][0])
            elif plain and len(picks) == 1 and trailing <= 1:
                pair = (getattr(builder, name), picks[0][0], -1 if trailing else None)
        out.append(pair)
    return out


def _callback(recipe: tuple, builder):
    name, _size, _origin, _unit, expand1, keep = recipe
    method = getattr(builder, name) if name is not None else _as_list
    if expand1:
        inner = method

        def method(children):
            return children[0] if len(children) == 1 else inner(children)
    if keep is None:
        return method
    picks, trailing = keep
    shaped = _shaped(picks, trailing, method)
    if shaped is not None:
        return shaped

    def filtered(children):
        kept = []
        for i, splice, nones in picks:
            if nones:
                kept += [None] * nones
            if splice:
                if kept:
                    kept += children[i]
                else:               # left recursion: reuse the inlined rule's list
                    kept = children[i]
            else:
                kept.append(children[i])
        if trailing:
            kept += [None] * trailing
        return method(kept)
    return filtered


def _shaped(picks: tuple, trailing: int, method):
    """A function of its own for the common shapes of child filtering, or None: a parse makes about
    one callback per token, and the general loop costs twice as much as these."""
    if any(nones for _, _, nones in picks):
        return None
    plain = tuple(i for i, splice, _ in picks if not splice)
    if len(plain) == len(picks):                        # no inlined rule among the children
        if trailing == 1 and len(plain) == 1:           # [child, None]: an absent optional at the end
            (only,) = plain
            return lambda children: method([children[only], None])
        if trailing:
            return None
        if len(plain) == 1:
            (only,) = plain
            if method is _as_list:
                return lambda children: [children[only]]
            return lambda children: method([children[only]])
        if plain == (0, 2):
            return lambda children: method([children[0], children[2]])
        return lambda children: method([children[i] for i in plain])
    if trailing:
        return None
    if len(picks) == 1:                                 # just an inlined rule's list
        (only, _, _), = picks
        return lambda children: method(children[only])
    if len(picks) == 2 and picks[0][1] and not picks[1][1]:
        # A left-recursive list, items then item: the list grows in place (copying it each time
        # would make long lists quadratic).
        (items_at, _, _), (item_at, _, _) = picks
        if method is _as_list:
            def grown(children):
                items = children[items_at]
                items.append(children[item_at])
                return items
            return grown

        def grown_then(children):
            items = children[items_at]
            items.append(children[item_at])
            return method(items)
        return grown_then
    if len(picks) == 2 and not picks[0][1] and picks[1][1]:     # an item, then an inlined rule's list
        (first, _, _), (rest, _, _) = picks
        return lambda children: method([children[first], *children[rest]])
    return None


def _as_list(children: list) -> list:
    """An inlined `_rule`: its children, for the parent to splice in."""
    return children
