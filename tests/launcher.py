"""Running the `gradcli` command from the tests: one process per call, forked from a warm one.

Hundreds of tests run `python -m gradcli ...` to check what a user sees of the command: its exit status,
what it writes to stdout and stderr, its signals and limits. Each such process spends most of its 0.2 s
starting Python and importing numpy and gradcli, the same in every one. `run` instead asks a server
process (one per test worker, started on first use) that did those imports once to fork a child per call.
The child takes the call's arguments, environment, working directory and standard streams, then runs
gradcli's `__main__` exactly as `python -m gradcli` does; the server reports its exit status. What is
process-level stays real: each call is a process of its own, with its own pipes, exit status, signals,
--timeout supervisor and memory limits.

What a fork cannot show is start-up itself: which modules are imported, the module path, the grammar
table cache. Tests of those start real processes (subprocess directly). A server is started with the
environment of the calls it serves, as far as start-up reads it: calls whose environments differ in
anything but `_AT_RUN_TIME` (what gradcli reads while it runs) go to different servers. A call that sets
its own table cache folder or home (`_CACHES`), or GRADCLI_TEST_SUBPROCESS=1 (real processes throughout),
starts a real `python -m gradcli`.
"""

from __future__ import annotations

import json
import locale
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [sys.executable, "-m", "gradcli"]
ADDRESS = re.compile(r"0x[0-9a-f]+")        # heap addresses differ from process to process

# Read by gradcli while a command runs, so a forked child sees them as a new process would; and pytest's
# PYTEST_CURRENT_TEST, which it sets anew for every test and nothing at start-up reads (in the key, it
# made every test a server of its own, and past _MAX_SERVERS a real process).
_AT_RUN_TIME = frozenset(("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "XDG_STATE_HOME", "PYTEST_CURRENT_TEST"))
# Where the grammar's tables are cached: a server loads them before any call, so a call that points
# elsewhere would not see its own cache used (tests of the cache run real processes).
_CACHES = ("XDG_CACHE_HOME", "HOME")
_MAX_SERVERS = 4

_SERVER = r'''
import json, os, signal, socket, sys
sock = socket.socket(fileno=int(sys.argv[1]))
# what a gradcli command imports before it runs a script, and the grammar's tables
import numpy, runpy
import gradcli.cli, gradcli.session, gradcli.commands.run
from gradcli.language import parser
parser.load()
sys.argv = ["-m"]
while True:
    try:
        message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
    except (OSError, KeyboardInterrupt):
        break
    if not message:
        break
    call = json.loads(message)
    pid = os.fork()
    if pid == 0:
        sock.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(call["cwd"])
        os.environ.clear()
        os.environ.update(call["env"])
        sys.argv = [os.path.join(os.path.dirname(gradcli.__file__), "__main__.py"), *call["args"]]
        runpy.run_module("gradcli", run_name="__main__", alter_sys=True)
        sys.exit(0)
    for fd in fds:
        os.close(fd)
    sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    sock.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
'''


class _Server:
    """A warm process of this test worker, and the socket to it."""

    def __init__(self, env: dict):
        ours, theirs = socket.socketpair()
        self.env = env
        self.process = subprocess.Popen([sys.executable, "-c", _SERVER, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                        cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL)
        theirs.close()
        self.sock = ours
        self.replies = ours.makefile("rb")

    def alive(self) -> bool:
        return self.process.poll() is None

    def call(self, args: list, env: dict, cwd: str, fds: list) -> int:
        """Start a child on the given stdin, stdout and stderr descriptors; returns its pid."""
        socket.send_fds(self.sock, [json.dumps({"args": args, "env": env, "cwd": cwd}).encode()], fds)
        return self._reply()["pid"]

    def status(self) -> int:
        return self._reply()["status"]

    def _reply(self) -> dict:
        line = self.replies.readline()
        if not line:        # it could not start (its error is on the test's stderr), or was killed
            raise RuntimeError(f"the warm gradcli process ended (status {self.process.wait()})")
        return json.loads(line)


_servers: dict = {}         # the environment as start-up reads it -> its server
_lock = threading.Lock()


def _forkable(env: dict) -> bool:
    """Whether a child forked from a server can start as `python -m gradcli` would with `env`."""
    if os.environ.get("GRADCLI_TEST_SUBPROCESS") == "1" or not hasattr(socket, "send_fds") or not hasattr(os, "fork"):
        return False
    return all(env.get(k) == os.environ.get(k) for k in _CACHES)


def _server_for(env: dict) -> _Server | None:
    key = tuple(sorted((k, v) for k, v in env.items() if k not in _AT_RUN_TIME))
    server = _servers.get(key)
    if server is None or not server.alive():
        if server is None and len(_servers) >= _MAX_SERVERS:
            return None
        server = _servers[key] = _Server({k: v for k, v in key})
    return server


def _text(data: bytes) -> str:
    """What subprocess.run(text=True) gives: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def run(args, *, input=None, text: bool = True, env: dict | None = None, cwd=None, timeout: float | None = None,
        capture_output: bool = True, check: bool = False) -> subprocess.CompletedProcess:
    """`subprocess.run(["python", "-m", "gradcli", *args], ...)`, in a child forked from the warm server."""
    args = [str(a) for a in args]
    call_env = dict(os.environ if env is None else env)
    if not capture_output or not _forkable(call_env):
        return subprocess.run([*COMMAND, *args], input=input, text=text, env=env, cwd=cwd, timeout=timeout,
                              capture_output=capture_output, check=check)
    with _lock:
        server = _server_for(call_env)
        if server is None:
            return subprocess.run([*COMMAND, *args], input=input, text=text, env=env, cwd=cwd, timeout=timeout,
                                  capture_output=capture_output, check=check)
        data = input.encode() if isinstance(input, str) else input
        if data is not None:
            stdin_r, stdin_w = os.pipe()
        else:
            stdin_r, stdin_w = os.dup(0), None
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            pid = server.call(args, call_env, str(cwd or os.getcwd()),
                              [stdin_r, out_w, err_w])
        finally:
            for fd in (stdin_r, out_w, err_w):
                os.close(fd)
        chunks = {out_r: [], err_r: []}

        def drain(fd):
            with open(fd, "rb", closefd=True) as f:
                chunks[fd].append(f.read())

        def feed():
            with open(stdin_w, "wb", closefd=True) as f:
                try:
                    f.write(data)
                except BrokenPipeError:
                    pass
        threads = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in (out_r, err_r)]
        if stdin_w is not None:
            threads.append(threading.Thread(target=feed, daemon=True))
        for t in threads:
            t.start()
        timed_out = False
        for t in threads:
            t.join(timeout)
            if t.is_alive():
                timed_out = True
                break
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        status = server.status()
        for t in threads:
            t.join()
    out, err = b"".join(chunks[out_r]), b"".join(chunks[err_r])
    if text:
        out, err = _text(out), _text(err)
    command = [*COMMAND, *args]
    if timed_out:
        raise subprocess.TimeoutExpired(command, timeout, out, err)
    done = subprocess.CompletedProcess(command, status, out, err)
    if check:
        done.check_returncode()
    return done
