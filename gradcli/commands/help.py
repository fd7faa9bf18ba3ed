"""`gradcli help [TOPIC]` (the README's sections and the docs, as installed) and `gradcli completion SHELL`."""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING

from gradcli.commands.common import subcommands
from gradcli.errors import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from pathlib import Path

SHELLS = ("bash", "zsh")
_HEADING = re.compile(r"^(#{1,2}) (.+)$")
_FENCE = re.compile(r"^(```|~~~)")


def add_parser(sub, script_options) -> None:
    helper = sub.add_parser(
        "help", help="show a topic of gradcli's documentation (without TOPIC: list them)",
        description="Show one topic of gradcli's documentation, as installed with it: a section of the "
                    "README or a page of docs/. Without TOPIC, list the topics. A command's name shows "
                    "its --help. A topic may be shortened to a prefix that no other topic has.")
    helper.add_argument("topic", nargs="?", metavar="TOPIC", help="a topic, as `gradcli help` lists them")
    script_options(helper, ())
    completion = sub.add_parser(
        "completion", help="print a shell completion script (bash or zsh)",
        description="Print the completion script for SHELL on stdout. Install it once:\n"
                    "  bash: gradcli completion bash > ~/.local/share/bash-completion/completions/gradcli\n"
                    "  zsh:  gradcli completion zsh > ~/.zfunc/_gradcli   (with fpath=(~/.zfunc $fpath) "
                    "before compinit in ~/.zshrc)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    completion.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash or zsh")
    script_options(completion, ())


def run(args) -> int:
    if args.command == "completion":
        return _completion(args.shell, args.top_parser)
    return _help(args.topic, args.top_parser)


# ------------------------------------------------------------------------------------------- topics

def docs_folder() -> Path | None:
    """The wheel carries the docs (and the README) inside the package; a checkout keeps them at the top."""
    from pathlib import Path        # here: every command builds this module's parser, only `help` reads files
    package = Path(__file__).resolve().parents[1]      # the gradcli package
    for folder, readme in ((package / "docs", package / "docs" / "README.md"),
                           (package.parent / "docs", package.parent / "README.md")):
        if folder.is_dir() and readme.is_file():
            return folder
    return None


def _readme(folder: Path) -> Path:
    inside = folder / "README.md"
    return inside if inside.is_file() else folder.parent / "README.md"


def _slug(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower().replace("'", ""))
    return "-".join(words)


def topics() -> dict:
    """{name: (title, text, where)}: the README's sections (## headings, outside code blocks), then
    each page of docs/ under its file name (a section of the same name is readme-NAME)."""
    folder = docs_folder()
    if folder is None:
        return {}
    found: dict = {}
    pages = {page.stem for page in folder.glob("*.md")}
    readme = _readme(folder)
    title, lines, fenced = None, [], False
    for line in readme.read_text(encoding="utf-8").splitlines() + ["## (end)"]:
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m and len(m[1]) == 2:            # a section: from its ## heading to the next one
            if title is not None:
                # a section named as a page (## Notebooks, docs/notebooks.md): the page keeps the name
                name = _slug(title) if _slug(title) not in pages else f"readme-{_slug(title)}"
                found.setdefault(name, (title, "\n".join(lines).rstrip() + "\n", "README.md"))
            title, lines = m[2].strip(), [line]
        elif title is not None:
            lines.append(line)
    for page in sorted(folder.glob("*.md")):
        if page.name == "README.md":
            continue
        text = page.read_text(encoding="utf-8")
        first = next((m[2] for m in map(_HEADING.match, text.splitlines()) if m), page.stem)
        found.setdefault(page.stem, (first.replace("`", ""), text, f"docs/{page.name}"))
    return found


def _help(topic: str | None, top_parser) -> int:
    found = topics()
    if not found:
        sys.stderr.write("gradcli help: the documentation is not installed with this gradcli\n")
        return EXIT_USAGE
    if topic is None:
        width = max(map(len, found)) + 2
        out = ["gradcli help TOPIC shows one of these (gradcli help COMMAND shows a command's options):", ""]
        out += [f"  {name:<{width}}{title}  ({where})" for name, (title, _, where) in found.items()]
        sys.stdout.write("\n".join(out) + "\n")
        return EXIT_OK
    name = topic.lower()
    commands = subcommands(top_parser)
    if name not in found and name in commands:
        sys.stdout.write(commands[name].format_help())
        return EXIT_OK
    matches = [n for n in found if n.startswith(name)] if name not in found else [name]
    if len(matches) != 1:
        import difflib
        close = difflib.get_close_matches(name, list(found), n=1, cutoff=0.6) if not matches else []
        if matches:
            why = f"'{topic}' could be {', '.join(matches)}"
        elif close:
            why = f"no topic '{topic}'; did you mean '{close[0]}'?"
        else:
            why = f"no topic '{topic}' (gradcli help lists them)"
        sys.stderr.write(f"gradcli help: {why}\n")
        return EXIT_USAGE
    sys.stdout.write(found[matches[0]][1])
    return EXIT_OK


# --------------------------------------------------------------------------------------- completion

def _completion(shell: str, parser) -> int:
    """The completion script from shtab, generated from the parser (imported here only)."""
    import shtab
    stack = [parser]
    while stack:                    # script arguments complete file names; the rest what argparse knows
        p = stack.pop()
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
            elif action.dest in ("script", "scripts") or action.dest == "graph_output":
                action.complete = shtab.FILE
            elif action.dest == "topic":
                action.choices = list(topics())
            elif action.dest == "graph_format":       # jsonl is accepted only to be refused
                action.choices = [c for c in action.choices if c != "jsonl"]
    sys.stdout.write(shtab.complete(parser, shell=shell))
    return EXIT_OK
