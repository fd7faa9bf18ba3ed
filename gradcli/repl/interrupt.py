"""Ctrl-C while an input runs is never lost, even when it lands where Python cannot raise it.

Python raises KeyboardInterrupt in whatever Python code the main thread runs when it next checks
for signals. When that code is a weakref callback or a finalizer called from C (the provenance
record forgets each dead tensor through one; the cycle collector runs many at once, and a full
collection of a big heap takes long enough for a Ctrl-C to land in it), the exception cannot
propagate: Python hands it to sys.unraisablehook and goes on, and the loop the user wanted to stop
runs forever. While an input runs, the Shell installs the hook below: a KeyboardInterrupt reported
there is delivered again a moment later, from a helper thread, by when the main thread is back in
the script. Nothing is delivered once the input has ended.
"""

from __future__ import annotations

import _thread
import sys
import threading

AGAIN = 0.01        # seconds before a lost interrupt is delivered again (the callback has returned by then)


class Guard:
    """`with Guard():` around running one input; does nothing outside the main thread, where
    Ctrl-C never arrives."""

    def __init__(self):
        self._lock = threading.Lock()
        self._running = False
        self._previous = None

    def __enter__(self) -> "Guard":
        if threading.current_thread() is threading.main_thread():
            self._previous = sys.unraisablehook
            self._running = True
            sys.unraisablehook = self._hook
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is None:
            return
        with self._lock:            # no helper delivers after this
            self._running = False
        sys.unraisablehook, self._previous = self._previous, None

    def _hook(self, unraisable) -> None:
        if self._running and unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            try:
                again = threading.Timer(AGAIN, self._deliver)
                again.daemon = True
                again.start()
            except KeyboardInterrupt:        # a second Ctrl-C inside this hook: one delivery is enough
                pass
            return
        previous = self._previous or sys.__unraisablehook__
        previous(unraisable)

    def _deliver(self) -> None:
        with self._lock:
            if self._running:
                _thread.interrupt_main()
