"""A progress line on stderr for work that takes more than about a second, shown on a terminal only.

    with Progress("gradcli graph: running s.grad") as progress:
        ...
        progress.step("drawing the graph")

Nothing is written when stderr is not a terminal, nor for work that ends within DELAY seconds. A
thread redraws the line in place (a carriage return, the text padded over the previous one) while
the main thread works, and erases it when the work ends. Text written through the Progress (it is
a stream: a session's `err`) erases the line first; an error reported inside the `with` calls
finish() first.
"""

from __future__ import annotations

import sys
import threading
import time

DELAY = 1.0         # seconds of work before the line appears
INTERVAL = 0.25     # seconds between redraws


def on_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):      # closed, or not a file
        return False


class Progress:
    def __init__(self, what: str, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.what = what
        self.detail = ""
        self.started = time.perf_counter()
        self.shown = 0              # the length of the line on screen, 0 when there is none
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = None

    def __enter__(self) -> "Progress":
        if on_terminal(self.stream):
            self.thread = threading.Thread(target=self._run, name="gradcli-progress", daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.finish()

    def finish(self) -> None:
        """End the line for good (before an error is reported inside the `with`)."""
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        self.clear()

    def write(self, text: str) -> int:
        """Write to the stream under the line (a warning while it is shown): erase it first."""
        self.clear()
        with self.lock:
            return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def step(self, detail: str) -> None:
        """What the work is doing now, shown after the label."""
        self.detail = detail

    def clear(self) -> None:
        """Erase the line, if it is shown (the next redraw puts it back)."""
        with self.lock:
            if self.shown:
                self._write("\r" + " " * self.shown + "\r")
                self.shown = 0

    def _run(self) -> None:
        if self.stop.wait(DELAY):
            return
        while True:
            seconds = int(time.perf_counter() - self.started)
            text = f"{self.what}{': ' + self.detail if self.detail else ''} ({seconds} s)"
            with self.lock:
                if self.stop.is_set():
                    return
                self._write("\r" + text.ljust(self.shown))
                self.shown = len(text)
            if self.stop.wait(INTERVAL):
                return

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):       # the terminal went away: the work goes on without the line
            pass
