"""Entry point for `python -m gradcli`."""
import sys

from gradcli.cli import main

sys.exit(main())
