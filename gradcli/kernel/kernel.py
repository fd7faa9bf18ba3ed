"""The Jupyter kernel: ipykernel's kernel base speaks the protocol, a CellShell runs the cells.

Each cell runs in one gradcli Session (the REPL's), so state, grad mode and the random stream carry from
cell to cell.

Output: what a cell prints goes through ipykernel's captured sys.stdout/sys.stderr (`stream` messages,
warnings on stderr as Python's are); the value of a last expression is an `execute_result` with the text
the REPL shows; a failure is an `error` message whose traceback is gradcli's own report (one line,
the source line, the caret and the `why:` line), never a Python traceback.

Interrupt: the kernelspec asks for SIGINT, and ipykernel's kernel base installs Python's default
SIGINT handler while it handles a request, so a running cell stops with KeyboardInterrupt as in the
REPL, and the session keeps its names.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from ipykernel.kernelbase import Kernel

from gradcli import PYTORCH_VERSION, __version__
from gradcli.kernel import rich
from gradcli.kernel.cells import NOTEBOOK_MAGICS, CellShell, Front
from gradcli.repl import scan
from gradcli.repl.shell import Options


@dataclass
class KernelOptions:
    """The kernel's command-line options (written into its kernelspec by `gradcli kernel install`)."""
    seed: int | None = None
    display: str | None = None
    timeout: float | None = None        # seconds a cell may run
    max_memory: int | None = None       # bytes of tensor data (None: half the machine's, as `gradcli run`)
    stable_ids: bool = False


class KernelFront(Front):
    """A cell's results as protocol messages on the IOPub channel."""

    def __init__(self, kernel: "GradcliKernel"):
        super().__init__(sys.stdout, sys.stderr)
        self.kernel = kernel
        self.silent = False
        self.payload: list = []         # what the reply carries for the front end (help for its pager)
        self.event_stream = EventStream(self)

    def _send(self, msg_type: str, content: dict) -> None:
        if self.silent:
            return
        sys.stdout.flush()      # what the cell printed before comes first
        sys.stderr.flush()
        self.kernel.send_response(self.kernel.iopub_socket, msg_type, content)

    def result(self, value) -> None:
        self._send("execute_result", {"execution_count": self.kernel.execution_count,
                                      "data": rich.value_bundle(value), "metadata": {}})

    def error(self, ename: str, evalue: str, lines: list) -> None:
        self._send("error", {"ename": ename, "evalue": evalue, "traceback": lines})

    def page(self, text: str) -> None:
        """`NAME?`: help for the front end's pager, as a payload of the reply (IPython's way)."""
        self.payload.append({"source": "page", "data": {"text/plain": text}, "start": 0})

    def graph(self, value, name, names, depth, ascii_, provenance) -> None:
        self._send("display_data", {"data": rich.graph_bundle(value, name, names, depth, ascii_, provenance),
                                    "metadata": {}, "transient": {}})

    def event(self, record: dict, line: str) -> None:
        """One JSON Lines event (%format jsonl), as application/json with its line as the text."""
        self._send("display_data", {"data": {"application/json": record, "text/plain": line},
                                    "metadata": {}, "transient": {}})


class EventStream:
    """The text stream a JSON Lines sink writes to (%format jsonl): each line becomes one output."""

    def __init__(self, front: KernelFront):
        self.front = front
        self.pending = ""

    def write(self, text: str) -> None:
        lines = (self.pending + text).split("\n")
        self.pending = lines.pop()
        for line in lines:
            if line:
                self.front.event(json.loads(line), line)

    def flush(self) -> None:
        pass


class Unflushed:
    """A captured stream whose flush() waits for ipykernel's: Python's print and warnings never flush, so
    in PyTorch's kernel a short cell's stdout comes before its stderr (both are sent when the cell ends);
    gradcli's session flushes stdout before each warning, which would put warnings first."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(text)

    def flush(self) -> None:
        pass

    def __getattr__(self, name):
        return getattr(self.stream, name)


class GradcliKernel(Kernel):
    """A wrapper kernel: ipykernel handles the sockets and the protocol, do_* answer from the CellShell."""

    implementation = "gradcli"
    implementation_version = __version__
    banner = (f"gradcli {__version__}: PyTorch-style autograd scripts on gradcli's own engine, printing what "
              f"PyTorch {PYTORCH_VERSION} prints. %help lists the notebook commands.")
    language_info = {
        "name": "gradcli",
        "version": __version__,
        "mimetype": "text/x-python",
        "file_extension": ".grad",
        "pygments_lexer": "python3",        # the language is a subset of Python: Python's colours fit
        "codemirror_mode": {"name": "python", "version": 3},
    }

    options = KernelOptions()       # set by gradcli.kernel.__main__ before the kernel starts

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        from gradcli.engine import budget
        # the same limit as `gradcli run`: the tensor budget, and RLIMIT_DATA as a backstop
        budget.limit_process(self.options.max_memory)
        self.front = KernelFront(self)
        self.cells = CellShell(self.front, Options(seed=self.options.seed, display=self.options.display,
                                                   stable_ids=self.options.stable_ids),
                               timeout=self.options.timeout, out=Unflushed(sys.stdout), err=Unflushed(sys.stderr))

    def set_parent(self, ident, parent, channel="shell"):
        """Tie what the cell prints to the request that ran it: the captured streams send `stream`
        messages under the parent header they were given last (IPython's shell does this for its kernel)."""
        super().set_parent(ident, parent, channel)
        if channel == "shell":
            for stream in (sys.stdout, sys.stderr):
                if hasattr(stream, "set_parent"):
                    stream.set_parent(parent)

    # -------------------------------------------------------------------------------- requests
    async def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False,
                         **_):
        self.front.silent, self.front.payload = silent, []
        try:
            ok = self.cells.run_cell(code, f"<cell {self.execution_count}>")
        finally:
            self.front.silent = False
        if ok:
            return {"status": "ok", "execution_count": self.execution_count, "payload": self.front.payload,
                    "user_expressions": {}}
        ename, evalue, lines = self.cells.failure
        return {"status": "error", "execution_count": self.execution_count, "ename": ename, "evalue": evalue,
                "traceback": lines}

    async def do_complete(self, code, cursor_pos):
        from gradcli.repl import completion
        before = code[:cursor_pos]
        line = before.rpartition("\n")[2]
        text = line if line.startswith("%") else before        # a magic is completed on its own line
        session = self.cells.session
        try:
            length, found = completion.complete(text, session.globals, session.builtins, True)
        except Exception:           # completion must never fail a request
            length, found = 0, []
        found = [(t, meta) for t, meta in found if not _hidden_magic(text, t)]
        return {"status": "ok", "matches": [t for t, _ in found], "cursor_start": cursor_pos - length,
                "cursor_end": cursor_pos,
                "metadata": {"_jupyter_types_experimental": [
                    {"start": cursor_pos - length, "end": cursor_pos, "text": t, "type": meta} for t, meta in found]}}

    async def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        name = name_at(code, cursor_pos)
        text = None
        if name:
            try:
                text = self.cells.help_for(name)
            except Exception:
                text = None
        if text is None:
            return {"status": "ok", "found": False, "data": {}, "metadata": {}}
        return {"status": "ok", "found": True, "data": {"text/plain": text}, "metadata": {}}

    async def do_is_complete(self, code):
        if scan.needs_more(code):
            last = code.rstrip("\n").rpartition("\n")[2]
            return {"status": "incomplete", "indent": " " * scan.indent_after(last)}
        return {"status": "complete"}

    async def do_shutdown(self, restart):
        return {"status": "ok", "restart": restart}


def _hidden_magic(text: str, candidate: str) -> bool:
    """A REPL command a notebook does not have, offered by the REPL's completer (%load, %toolbar...)."""
    if not text.lstrip().startswith("%"):
        return False
    name = candidate.lstrip("%")
    words = text.lstrip().split()
    if len(words) <= 1 and not text.endswith(" "):
        return name not in NOTEBOOK_MAGICS                 # the command's name being typed
    return words[0] == "%help" and name not in NOTEBOOK_MAGICS


def name_at(code: str, cursor_pos: int) -> str:
    """The name or attribute chain at the cursor (Shift-Tab), or the callee when the cursor is inside
    a call's parentheses: `torch.ones(2, |` asks about torch.ones."""
    def chain_end_at(i: int) -> int:
        while i < len(code) and (code[i].isalnum() or code[i] == "_"):
            i += 1
        return i

    def chain_start(i: int) -> int:
        while i > 0 and (code[i - 1].isalnum() or code[i - 1] in "._"):
            i -= 1
        return i

    end = chain_end_at(cursor_pos)
    start = chain_start(end)
    if start < end:
        return code[start:end].strip(".")
    depth = 0
    for i in range(cursor_pos - 1, -1, -1):        # back to the unclosed '(' of the call the cursor is in
        c = code[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                if c != "(":
                    return ""
                j = i
                while j > 0 and code[j - 1] == " ":
                    j -= 1
                return code[chain_start(j):j].strip(".")
            depth -= 1
        elif c == "\n" and depth == 0 and i < cursor_pos - 1 and not code[i + 1:i + 2].isspace():
            break
    return ""
