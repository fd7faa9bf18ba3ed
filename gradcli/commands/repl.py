"""`gradcli repl` (and `gradcli` alone on a terminal): the interactive REPL, with the shared options it honours."""

from __future__ import annotations

import sys

from gradcli.commands.common import refused
from gradcli.errors import EXIT_USAGE

# The shared options the REPL honours: the rest concern one script's run (--timeout: Ctrl-C stops a
# running input, and `gradcli run -` runs piped input as a script).
REPL_OPTIONS = ("seed", "display", "format", "stable-ids", "color", "max-memory")

def run_repl(args) -> int:
    """The interactive REPL; imports prompt_toolkit, which nothing else on the command line needs."""
    from gradcli.repl.prompt import main as repl_main
    from gradcli.repl.shell import Options
    problem = refused(args, "repl", REPL_OPTIONS)
    if problem:
        sys.stderr.write(problem + "\n")
        return EXIT_USAGE
    colour = {"always": True, "never": False}.get(args.color)
    return repl_main(Options(vi=getattr(args, "vi", False), auto_suggest=getattr(args, "auto_suggest", False),
                             toolbar=not getattr(args, "no_toolbar", False), seed=args.seed, display=args.display,
                             format=args.format or "text", stable_ids=args.stable_ids, colour=colour))


