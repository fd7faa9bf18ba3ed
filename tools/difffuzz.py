#!/usr/bin/env python3
"""Differential fuzzer: mutate the project's and the shared scripts, run each variant through gradcli and
PyTorch 2.13, and report where the exit class, the exception type, the message or stdout differ.

Seeds: every ``.grad`` under tests/conformance, tests/checks, tests/diagnostics, examples/ and the shared
conformance cases (``../shared/conformance/cases`` beside the repository, else /work/shared).
Variant N of seed S is a pure function of (S, N): one to three mutations drawn from
``random.Random(f"{S}:{N}")`` applied to one script chosen by the same generator, so a run is
reproducible from its seed and count. Mutations work on Python tokens: swap a function or method for
a compatible one, a literal for an edge value (0, -0.0, 1e308, nan, inf, 2**63, ...), an operator for
another, a dtype, a shape for an empty / 0-d / broadcasting one, a keyword's value; add or remove
``requires_grad``; drop or repeat a line.

Each variant runs in a gradcli worker and a PyTorch worker (tools/differential.py), from a fresh
namespace seeded with torch.manual_seed(0). Differences are grouped by class (what differs, and the
message's shape with numbers elided; printed-output differences by the mutation that caused them),
and each class is shown with a minimal reproducer (the first variant, shortened line by line while its
class holds) and its count. Timeouts, memory-bound messages and scripts PyTorch cannot parse are set
aside and counted.

Usage::

    python tools/difffuzz.py --seed 1 --count 5000 --jobs 2            # report on stdout
    python tools/difffuzz.py --count 300 --only autograd_ --report out.md
    python tools/difffuzz.py --count 400 --save-golden tests/fuzz        # the suite's fixed slice
    python tools/difffuzz.py --check tests/fuzz                          # re-verify it with PyTorch
"""

from __future__ import annotations

import argparse
import functools
import re
import io
import random
import sys
import tokenize
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import differential as dt  # noqa: E402

ROOT = dt.REPO_ROOT
SEED_DIRS = ("tests/conformance", "tests/checks", "tests/diagnostics", "examples")
GOLDEN_NAME = "difffuzz.jsonl"


def shared_cases() -> Path | None:
    for p in (ROOT.parent / "shared" / "conformance" / "cases", Path("/work/shared/conformance/cases")):
        if p.is_dir():
            return p
    return None


def seed_scripts(only: str | None = None) -> list[tuple[str, str]]:
    """(name, text) of every seed script, sorted by name so variant numbers are stable."""
    files = [p for d in SEED_DIRS for p in (ROOT / d).glob("*.grad")]
    shared = shared_cases()
    if shared is not None:
        files += shared.glob("*.grad")
    scripts = {}
    for p in files:
        name = f"{p.parent.name}/{p.stem}"
        if only and only not in name:
            continue
        scripts[name] = p.read_text(encoding="utf-8")
    return sorted(scripts.items())


# ============================================================================== mutations

# Names that can stand for each other (as torch.NAME(...), x.NAME(...) or F.NAME(...)).
GROUPS = [
    "exp log sin cos tan tanh sigmoid relu abs sqrt neg exp2 expm1 log1p log2 log10 sign sgn floor ceil round "
    "trunc frac erf rsqrt reciprocal square asin acos atan sinh cosh logical_not isnan isinf isfinite".split(),
    "gelu silu softplus elu relu6 leaky_relu hardtanh softsign logsigmoid relu sigmoid tanh".split(),
    "sum mean prod max min amax amin std var logsumexp argmax argmin norm all any".split(),
    "cumsum cumprod softmax log_softmax".split(),
    "add sub mul div maximum minimum pow atan2 eq ne lt le gt ge remainder floor_divide logical_and "
    "logical_or logical_xor".split(),
    # (not empty / empty_like: their values are unspecified)
    "ones zeros rand randn".split(),
    "ones_like zeros_like rand_like randn_like".split(),
    "float32 float64 float16 bfloat16 int64 int32 int16 int8 uint8 bool double float long int half".split(),
    "view reshape".split(),
    "squeeze unsqueeze flatten".split(),
    "transpose swapaxes swapdims movedim".split(),
    "mm matmul bmm mv dot outer".split(),
    "mse_loss l1_loss binary_cross_entropy binary_cross_entropy_with_logits".split(),
    "cross_entropy nll_loss".split(),
    "cat stack hstack vstack".split(),
    "no_grad enable_grad inference_mode".split(),
    "True False None".split(),
    "tril triu".split(),
    "t detach clone".split(),
]
SWAP = {}
for _g in GROUPS:
    for _n in _g:
        SWAP.setdefault(_n, []).extend(m for m in _g if m != _n)

EDGE_NUMBERS = ["0", "-0.0", "1", "-1", "2", "0.5", "1e308", "-1e308", "1e-45", "float('nan')", "float('inf')",
                "-float('inf')", "2**63", "2**63 - 1", "-2**63", "2**31", "3", "True", "10**20"]
OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "@"]
COMPARISONS = ["<", "<=", ">", ">=", "==", "!="]
AUGMENTED = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "@="]
SHAPES = ["()", "0", "2, 0", "0, 3", "1", "1, 3", "3, 1", "2, 1, 3", "[]", "(0,)"]
FACTORIES = {"ones", "zeros", "rand", "randn", "empty", "full", "tensor", "arange", "linspace", "eye",
             "ones_like", "zeros_like", "full_like", "randint", "Tensor"}
SHAPED = {"ones", "zeros", "rand", "randn", "empty"}
DTYPES = ["torch.float32", "torch.float64", "torch.int64", "torch.bool", "torch.float16", "torch.int32",
          "torch.uint8"]
KEYWORD_VALUES = {"dim": ["0", "1", "-1", "2", "-3", "(0, 1)", "None"], "keepdim": ["True", "False", "1"],
                  "retain_graph": ["True", "False"], "create_graph": ["True", "False"],
                  "p": ["0", "1", "0.5", "float('nan')", "-1"], "alpha": ["2", "True", "0.5"],
                  "min": ["0", "-1e308", "float('nan')"], "max": ["0", "1e308", "float('inf')"]}


class Script:
    """A script as tokens with character offsets, and its calls (name token, open paren, close paren)."""

    def __init__(self, text: str):
        self.text = text
        starts = [0]
        for line in text.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        self.tokens = []
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NAME, tokenize.NUMBER, tokenize.OP, tokenize.STRING):
                a = starts[tok.start[0] - 1] + tok.start[1]
                b = starts[tok.end[0] - 1] + tok.end[1]
                self.tokens.append((tok.type, tok.string, a, b))
        self.calls = []
        stack = []
        for i, (_, s, _, _) in enumerate(self.tokens):
            if s in "([{":
                stack.append(i)
            elif s in ")]}" and stack:
                j = stack.pop()
                if s == ")" and j > 0 and self.tokens[j - 1][0] == tokenize.NAME:
                    self.calls.append((j - 1, j, i))

    def prev(self, i: int) -> str:
        return self.tokens[i - 1][1] if i > 0 else ""


def _candidates(s: Script) -> list:
    """Every mutation this script allows, as (label, start, end, replacement)."""
    out = []
    toks = s.tokens
    for i, (typ, text, a, b) in enumerate(toks):
        if typ == tokenize.NAME and text in SWAP and (s.prev(i) == "." or text in ("True", "False", "None")):
            for new in SWAP[text]:
                out.append((f"swap {text}->{new}", a, b, new))
        elif typ == tokenize.NUMBER:
            for new in EDGE_NUMBERS:
                if new != text:
                    out.append((f"number {new}", a, b, new))
        elif typ == tokenize.OP and text in OPERATORS:
            if s.prev(i) in ("(", ",", "=", "[", "") or toks[i - 1][0] == tokenize.OP and s.prev(i) not in ")]":
                continue        # a unary sign, not a binary operator
            for new in OPERATORS:
                if new != text:
                    out.append((f"operator {text}->{new}", a, b, new))
        elif typ == tokenize.OP and text in COMPARISONS:
            for new in COMPARISONS:
                if new != text:
                    out.append((f"comparison {text}->{new}", a, b, new))
        elif typ == tokenize.OP and text in AUGMENTED:
            for new in AUGMENTED:
                if new != text:
                    out.append((f"augmented {text}->{new}", a, b, new))
        elif typ == tokenize.NAME and text in KEYWORD_VALUES and i + 2 < len(toks) and toks[i + 1][1] == "=":
            v = toks[i + 2]
            for new in KEYWORD_VALUES[text]:
                out.append((f"keyword {text}={new}", v[2], v[3], new))
        elif typ == tokenize.NAME and text == "requires_grad" and i + 2 < len(toks) and toks[i + 1][1] == "=":
            # remove the keyword (with the comma before it)
            start = toks[i - 1][2] if s.prev(i) == "," else a
            out.append(("drop requires_grad", start, toks[i + 2][3], ""))
    for name_i, open_i, close_i in s.calls:
        name = toks[name_i][1]
        if name not in FACTORIES:
            continue
        inner = s.text[toks[open_i][3]:toks[close_i][2]]
        at = toks[close_i][2]
        if "requires_grad" not in inner:
            out.append(("add requires_grad", at, at, ", requires_grad=True" if inner.strip() else "requires_grad=True"))
        if "dtype" not in inner and inner.strip():
            for d in DTYPES:
                out.append((f"add dtype={d}", at, at, f", dtype={d}"))
        if name in SHAPED:
            # the positional arguments: up to the first keyword
            end = close_i
            for k in range(open_i + 1, close_i):
                if toks[k][0] == tokenize.NAME and toks[k + 1][1] == "=" and s.prev(k) in ("(", ","):
                    end = k - 1 if s.prev(k) == "," else k
                    break
            if end > open_i + 1:
                a, b = toks[open_i][3], toks[end][2]
                for shape in SHAPES:
                    out.append((f"shape ({shape})", a, b, shape))
    return out


def _line_mutations(text: str) -> list:
    lines = text.splitlines(keepends=True)
    out, pos = [], 0
    for line in lines:
        stripped = line.strip()
        indent = line[:len(line) - len(line.lstrip())]
        if stripped and not stripped.startswith(("import", "from", "#", "def ", "for ", "if ", "while ", "with ",
                                                  "else", "elif", "try", "except", "class ", "return")) \
                and not stripped.endswith(":"):
            out.append(("drop a line", pos, pos + len(line), indent + "pass\n"))
            out.append(("repeat a line", pos, pos, line))
        pos += len(line)
    return out


@functools.lru_cache(maxsize=256)
def _mutations(text: str) -> tuple[list, list] | None:
    """(the token mutations, the line mutations) of `text`, or None if it does not tokenize. Cached: every
    variant starts from one of a few hundred seed scripts, and tokenizing them again was most of the time."""
    try:
        script = Script(text)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return _candidates(script), _line_mutations(text)


def mutate(text: str, rng: random.Random) -> tuple[str, list[str]] | None:
    """One to three mutations of `text`, drawn from `rng`: (variant, labels), or None if none applies."""
    labels = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        found = _mutations(text)
        if found is None:
            break
        options, lines = found
        if lines and rng.random() < 0.15:
            options = lines
        if not options:
            break
        label, a, b, new = rng.choice(options)
        text = text[:a] + new + text[b:]
        labels.append(label)
    return (text, labels) if labels else None


def variants(seed: int, count: int, only: str | None = None) -> list[dict]:
    """Variant 0..count-1 of `seed`: {"id", "base", "labels", "source"}; the same every run."""
    scripts = seed_scripts(only)
    if not scripts:
        raise SystemExit(f"no seed scripts match {only!r}")
    out, seen = [], set()
    n = 0
    while len(out) < count and n < count * 4:
        rng = random.Random(f"{seed}:{n}")
        # the seed script whose own draw for this variant is highest: a script added later takes over only
        # the variants it wins, so the stored slice stays mostly what a fresh draw gives
        name, text = max(scripts, key=lambda s: random.Random(f"{seed}:{n}:{s[0]}").random())
        m = mutate(text, rng)
        n += 1
        if m is None or m[0] in seen or m[0] == text:
            continue
        seen.add(m[0])
        out.append({"id": f"s{seed}-{n - 1}", "base": name, "labels": m[1], "source": m[0]})
    return out


# ============================================================================== running and reporting

def label_of(case: dict) -> str:
    return "; ".join(sorted(set(case.get("labels", [])))) or case.get("base", "")


def key_for(case: dict):
    def key(g, w):
        kind = dt.compare(g, w)
        if kind is None or dt.ignorable(g, w):
            return None
        return dt.class_key(g, w, kind, label_of(case))
    return key


# Families of classes for the report's summary: the first pattern that matches a class key names it.
FAMILIES = [
    ("crash: gradcli's process died or a Python exception escaped", r"crash"),
    ("integer overflow: PyTorch's OverflowError / 'cannot be converted ... without overflow' / 'Overflow when "
     "unpacking'", r"[Oo]verflow|too big to convert|out of bounds for uint8|negative int to unsigned|SymInt"),
    ("argument checking: PyTorch's parser messages for a wrong argument type or count ('received an invalid "
     "combination', 'must be int, not float', 'takes N positional arguments')",
     r"TypeError|invalid combination|must be (int|bool|tuple)|positional argument|unexpected keyword"),
    ("printed output: values, grad_fn names or gradients differ", r"^printed output"),
    ("gradcli raises where PyTorch runs", r"^gradcli error where PyTorch runs"),
    ("gradcli runs where PyTorch raises", r"^gradcli runs where"),
    ("another exception type", r" instead of "),
    ("another message for the same exception type", r"^message"),
]


def family_of(key: str) -> str:
    return next((name for name, pattern in FAMILIES if re.search(pattern, key)), "other")


def classify(cases: list[dict], got: dict, want: dict):
    classes = defaultdict(list)
    set_aside = defaultdict(int)
    same = 0
    for c in cases:
        g, w = got[c["id"]], want[c["id"]]
        kind = dt.compare(g, w)
        if kind is None:
            same += 1
            continue
        why = dt.ignorable(g, w)
        if why:
            set_aside[why] += 1
            continue
        classes[dt.class_key(g, w, kind, label_of(c))].append(c)
    return same, classes, set_aside


def report(title: str, cases: list[dict], got: dict, want: dict, gpool, tpool, minimal: bool = True) -> str:
    same, classes, set_aside = classify(cases, got, want)
    differing = sum(len(v) for v in classes.values())
    crashes = sum(1 for c in cases if got[c["id"]]["status"] == "crash")
    out = [f"# {title}", "",
           f"{len(cases)} variants: {same} agree, {differing} differ in {len(classes)} classes, "
           f"{sum(set_aside.values())} set aside ({', '.join(f'{k}: {v}' for k, v in sorted(set_aside.items())) or 'none'}); "
           f"gradcli crashed (a Python exception escaped) on {crashes}.", ""]
    families = defaultdict(lambda: [0, 0])
    for key, members in classes.items():
        families[family_of(key)][0] += 1
        families[family_of(key)][1] += len(members)
    out += ["| family | classes | variants |", "|---|---|---|"]
    out += [f"| {name} | {c} | {v} |" for name, (c, v) in sorted(families.items(), key=lambda kv: -kv[1][1])]
    out.append("")
    run_both = dt.both_runner(gpool, tpool)
    for n, (key, members) in enumerate(sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])), 1):
        first = members[0]
        source = first["source"]
        if minimal:
            source = dt.minimize(source, key_for(first), run_both)
        g, w = run_both({"r": source})["r"]
        out += [f"## {n}. {key}", "", f"family: {family_of(key)}", "",
                f"{len(members)} variant(s); first: {first['id']} (from {first['base']}: {label_of(first)})", "",
                "```python", source.rstrip("\n"), "```", ""]
        out += [f"- {line}" for line in dt.describe(g, w)] + [""]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000, help="variants to run (default 1000)")
    ap.add_argument("--jobs", type=int, default=1, help="workers per side (default 1)")
    ap.add_argument("--only", metavar="PATTERN", help="only seed scripts whose dir/name contains PATTERN")
    ap.add_argument("--seconds", type=float, default=dt.SECONDS, help="time limit per variant and side")
    ap.add_argument("--report", metavar="FILE", help="write the report here (default: stdout)")
    ap.add_argument("--no-minimize", action="store_true", help="show each class's first variant as it is")
    ap.add_argument("--save-golden", metavar="DIR", type=Path,
                    help=f"write the variants and PyTorch's outcomes to DIR/{GOLDEN_NAME} instead of a report")
    ap.add_argument("--check", metavar="DIR", type=Path, help=f"re-verify DIR/{GOLDEN_NAME} with PyTorch")
    ap.add_argument("--list", action="store_true", help="print the variants and stop")
    args = ap.parse_args(argv)

    if args.check:
        return dt.check_slice(args.check / GOLDEN_NAME, args.jobs, args.seconds)
    cases = variants(args.seed, args.count, args.only)
    if args.list:
        for c in cases:
            print(f"### {c['id']} ({c['base']}: {label_of(c)})\n{c['source']}")
        return 0
    if args.save_golden:
        dt.save_slice(args.save_golden / GOLDEN_NAME, cases, args.jobs, args.seconds)
        return 0
    got, want, gpool, tpool = dt.run_sides(cases, args.jobs, args.seconds)
    try:
        text = report(f"difffuzz --seed {args.seed} --count {args.count}" + (f" --only {args.only}" if args.only else ""),
                      cases, got, want, gpool, tpool, minimal=not args.no_minimize)
    finally:
        gpool.close()
        tpool.close()
    dt.emit(text, args.report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
