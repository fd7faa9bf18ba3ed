"""--timeout from outside: the `gradcli` command forks, the child (the worker) runs the command, and the
parent waits and ends the worker when it overstays its deadline.

The in-process timer (gradcli.deadline.Deadline) stops a script between two bytecodes and names its
line, but a C call holding the interpreter lock (`max(zip(range(10**12)))`, sorting a huge list, a
long numpy call) never lets it run, nor any thread. A second process is the one place that can
always act. The worker publishes each deadline on a shared page (deadline.Board) as it starts a
script, and keeps the running statement's line there; the supervisor sleeps until the latest
deadline plus GRACE (more once the timer has fired and the worker is reporting), then kills
the worker, reports the timeout itself and exits with status 124.

What the worker does reaches the terminal as before: it writes to the same stdout and stderr
(stdout line-buffered, so a killed worker has written every line it printed), its exit status is
the command's, Ctrl-C from the terminal reaches it directly (it is in the same process group, so it
can also read the terminal), and signals sent to the supervisor's pid (kill, a CI runner's SIGTERM)
are passed on. A worker whose supervisor dies gets SIGKILL (PR_SET_PDEATHSIG), so no worker
outlives the command; the worker's own children (the --check-grads replays) are tied to it the
same way. Without --timeout none of this happens: no fork, no page, no line tracking.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from gradcli import deadline

# Seconds past the deadline before the supervisor acts: time for the timer to land and report. Once
# it has landed (the worker is unwinding and reporting, which a loaded machine may slow), twice more.
GRACE = 1.0
POLL = 0.1                  # seconds between two looks at the page

# Signals passed on to the worker when a process sends them to the supervisor. From the terminal
# (si_code SI_KERNEL), Ctrl-C and Ctrl-\ reach the worker by themselves, in the same process group.
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def available() -> bool:
    return hasattr(os, "fork") and hasattr(signal, "sigtimedwait") and hasattr(signal, "pthread_sigmask")


def supervise(seconds: float, name: str, jsonl: bool) -> None:
    """Fork. In the worker, return (the command goes on, its deadlines published); in the
    supervisor, wait for the worker and exit with its status, never returning. `name` is what a
    timeout names until the worker has published a script of its own."""
    try:
        board = deadline.Board()
    except OSError:
        return                  # no shared memory: the in-process timer alone, as without a supervisor
    board.publish(time.monotonic() + deadline.OWN_TIME + seconds, seconds, name)     # starting up
    sys.stdout.flush()
    sys.stderr.flush()
    watched = set(_FORWARDED) | {signal.SIGCHLD}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:             # out of processes: the same
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        return
    if pid == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        deadline.end_with_parent(parent)
        deadline.supervised_by(board)
        try:
            sys.stdout.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):
            pass
        return
    status = _wait(pid, board, watched, jsonl)
    os._exit(status)


def _wait(pid: int, board: deadline.Board, watched: set, jsonl: bool) -> int:
    """Wait for the worker: its exit status, or EXIT_TIMEOUT after killing it."""
    while True:
        done = _reap(pid)
        if done is not None:
            return done
        due, seconds, fired, _, _ = board.read()
        left = due + GRACE * (3 if fired else 1) - time.monotonic()
        if left <= 0:
            # the deadline may have moved (a new script) while we slept: read it again first
            if board.read()[0] == due:
                return _stop(pid, board, jsonl)
            continue
        # wake often: the worker moves its deadline (a new script) without telling us
        info = signal.sigtimedwait(watched, min(left, POLL))
        if info is not None and info.si_signo != signal.SIGCHLD and info.si_code <= 0:
            try:
                os.kill(pid, info.si_signo)      # sent by a process (kill, a test runner): pass it on
            except ProcessLookupError:
                pass


def _reap(pid: int):
    """The worker's status as the command's exit status, once it has ended; else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 1
    if done == 0:
        return None
    if os.WIFSIGNALED(status):
        _die_like(os.WTERMSIG(status))
        return 128 + os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


def _die_like(signum: int) -> None:
    """End the supervisor by the signal that ended the worker, so the shell sees the same."""
    if signum in (signal.SIGKILL, signal.SIGSTOP):
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
    except (OSError, ValueError):
        pass


def _stop(pid: int, board: deadline.Board, jsonl: bool) -> int:
    """Kill the worker that overstayed its deadline and say so, as the timer would have."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
    due, seconds, _, name, line = board.read()
    message = f"{deadline.timeout_message(seconds)}, {deadline.UNINTERRUPTIBLE}"
    if jsonl:
        import json
        events = [{"event": "error", "file": name, "line": line or None, "col": None, "type": "TimeoutError",
                   "message": message},
                  {"event": "end", "file": name, "ok": False,
                   "seconds": round(time.monotonic() - due + seconds, 6)}]
        text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
        _write(1, text)
    else:
        where = f"{name}:{line}" if line else name
        if not line:
            message += " (its line could not be known)"
        _write(2, f"{where}: TimeoutError: {message}\n")
    return deadline.EXIT_TIMEOUT


def _write(fd: int, text: str) -> None:
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    except OSError:
        pass
