"""Where the REPL keeps its input history, and what it does when it cannot write there."""

from __future__ import annotations

import os
from pathlib import Path


def history_path() -> Path:
    """$XDG_STATE_HOME/gradcli/history, or ~/.local/state/gradcli/history (the XDG default)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):           # unset, empty or relative: the spec says to ignore it
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "gradcli" / "history"


def open_history(err):
    """A prompt_toolkit history backed by the history file, or kept in memory (with a one-line
    warning on `err`) when the file cannot be written."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    class _History(FileHistory):
        """FileHistory that survives the file going away or filling the disk mid-session."""
        failed = False

        def load_history_strings(self):
            try:
                yield from super().load_history_strings()
            except OSError:
                return

        def store_string(self, string: str) -> None:
            try:
                super().store_string(string)
            except OSError as e:
                if not self.failed:
                    self.failed = True
                    _warn(err, self.filename, e)

    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab"):
            pass
    except OSError as e:
        _warn(err, path, e)
        return InMemoryHistory()
    return _History(str(path))


def _warn(err, path, e: OSError) -> None:
    err.write(f"gradcli: cannot write the history file {path} ({e.strerror or e}); "
              "history is kept for this session only\n")
    err.flush()
