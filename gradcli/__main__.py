"""Entry point for `python -m gradcli`."""
import os
import sys

# `python -m` puts the current directory first on the module path, so a numpy.py or torch.py lying
# there would be imported in place of the real one (and run). gradcli itself is imported by now;
# nothing else may come from the current directory (what Python 3.11's -P does).
if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.curdir, os.getcwd()):
    del sys.path[0]

from gradcli.cli import command  # noqa: E402  -- after the path is made safe

command()
