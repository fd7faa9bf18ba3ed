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


class Wakeup:
    """`with Wakeup(fd) as wake:` around reading lines typed at a dumb terminal; `wake.wait()` before
    each read returns once the terminal has input, or raises KeyboardInterrupt for a Ctrl-C typed at
    any time since the prompt was written.

    Python runs its SIGINT handler between bytecodes. A Ctrl-C that lands while the prompt is being
    written, or on the way into readline's read(), is noted by the C handler and then waits behind a
    read that blocks: the terminal dropped the typed line with the ^C, so nothing comes until the
    user types another line. With the signal module's wakeup fd every signal also leaves a byte in a
    pipe; `wait` selects on the terminal and that pipe, so such a signal ends the wait at once and its
    handler runs (raising here). What is left is the moment between the terminal becoming readable
    and the read, in which a ^C would also have to follow the user's Enter. Outside the main thread,
    or without a file descriptor, `wait` returns at once and reading is as before."""

    def __init__(self, fd: int | None):
        self.fd = fd
        self._pipe = None
        self._previous = None

    def __enter__(self) -> "Wakeup":
        if self.fd is None or threading.current_thread() is not threading.main_thread():
            return self
        import os
        import signal
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        try:
            self._previous = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except (ValueError, OSError):
            os.close(r)
            os.close(w)
            return self
        self._pipe = (r, w)
        return self

    def __exit__(self, *exc) -> None:
        if self._pipe is None:
            return
        import os
        import signal
        signal.set_wakeup_fd(self._previous)
        for fd in self._pipe:
            os.close(fd)
        self._pipe = None

    def wait(self) -> None:
        if self._pipe is None:
            return
        import os
        import select
        r = self._pipe[0]
        while True:
            try:                    # bytes of signals already handled (a Ctrl-C during the last run)
                while os.read(r, 512):
                    pass
            except BlockingIOError:
                pass
            ready, _, _ = select.select([self.fd, r], [], [])
            if self.fd in ready:
                return
            # only the pipe: a signal arrived; its handler runs before the loop goes round
