"""The Jupyter kernel through a real client: jupyter_client starts `python -m gradcli.kernel` from a kernelspec
written into a temporary Jupyter folder (never the user's), and talks the protocol to it over loopback.

One kernel serves the whole module (a kernel takes about a second to start): the tests run in file order and
each defines the names it uses. The kernel runs with --timeout and --max-memory, so those are tested too;
the restart test comes last."""

from __future__ import annotations

import re
import shutil
import time

import pytest

pytest.importorskip("ipykernel", reason="the Jupyter kernel needs the jupyter extra: pip install -e '.[test,jupyter]'")
pytest.importorskip("jupyter_client", reason="the kernel tests need the jupyter extra: pip install -e '.[test,jupyter]'")

from test_sandbox import ESCAPES  # noqa: E402  -- the same escapes the REPL and `gradcli -c` refuse

TIMEOUT = 2.0           # the kernel's --timeout: seconds a cell may run
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def jupyter_dirs(tmp_path_factory):
    """A Jupyter data folder holding the gradcli kernelspec, and every other Jupyter folder in temp too."""
    from gradcli.kernel import spec
    root = tmp_path_factory.mktemp("jupyter")
    spec.write(str(root / "data"), ["--timeout", str(TIMEOUT), "--max-memory", "64M", "--seed", "0"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root / "data"))
        mp.setenv("JUPYTER_DATA_DIR", str(root / "data"))
        mp.setenv("JUPYTER_CONFIG_DIR", str(root / "config"))
        mp.setenv("JUPYTER_RUNTIME_DIR", str(root / "runtime"))
        mp.setenv("IPYTHONDIR", str(root / "ipython"))
        mp.setenv("JUPYTER_PLATFORM_DIRS", "1")
        yield root


@pytest.fixture(scope="module")
def kernel(jupyter_dirs):
    from jupyter_client.manager import start_new_kernel
    km, kc = start_new_kernel(kernel_name="gradcli", startup_timeout=60)
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run(kc, code: str, timeout: float = 30):
    """(the execute_reply's content, [(msg_type, content)] of what the cell sent on IOPub)."""
    outputs = []

    def hook(msg):
        if msg["msg_type"] in ("stream", "execute_result", "display_data", "error"):
            outputs.append((msg["msg_type"], msg["content"]))
    # stop_on_error=False: after a failed cell ipykernel aborts, for a moment, what arrives next (in any
    # kernel); these tests send the next cell at once and mean it to run
    reply = kc.execute_interactive(code, output_hook=hook, timeout=timeout, stop_on_error=False)
    return reply["content"], outputs


def texts(outputs) -> list:
    """Each output as one short string: 'stdout: ...', 'result: ...', 'error: Name: value'."""
    out = []
    for kind, content in outputs:
        if kind == "stream":
            out.append(f"{content['name']}: {content['text']}")
        elif kind == "execute_result":
            out.append(f"result: {content['data']['text/plain']}")
        elif kind == "display_data":
            out.append(f"display: {content['data']['text/plain']}")
        else:
            out.append(f"error: {content['ename']}: {content['evalue']}")
    return out


def request(kc, send, *args):
    msg_id = send(*args)
    while True:
        reply = kc.get_shell_msg(timeout=20)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


def test_kernel_info_names_the_language(kernel):
    _, kc = kernel
    info = request(kc, kc.kernel_info)
    assert info["implementation"] == "gradcli"
    assert info["language_info"]["name"] == "gradcli"
    assert info["language_info"]["file_extension"] == ".grad"


def test_prints_are_streams_and_a_last_expression_is_the_result(kernel):
    _, kc = kernel
    reply, outputs = run(kc, "import torch\nx = torch.ones(2, 2, requires_grad=True)\nprint(x)\ny = x + 2\ny.sum()\ny")
    assert reply["status"] == "ok"
    assert texts(outputs) == ["stdout: tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)\n",
                              "result: tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)"]
    result = next(c for k, c in outputs if k == "execute_result")
    assert result["execution_count"] == reply["execution_count"]
    # state carries across cells; ';' hides the value; a loop's expressions are not shown (IPython's last_expr)
    assert texts(run(kc, "out = (y * y * 3).mean()\nout.backward()\nx.grad")[1]) == [
        "result: tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"]
    assert run(kc, "x.grad;  # hidden")[1] == []
    assert run(kc, "for i in range(3):\n    i")[1] == []


def test_sys_exit_is_the_cells_error_and_the_kernel_goes_on(kernel):
    # as IPython shows it (SystemExit: 3); the kernel is not left, and warnings' filters last to the next cell
    _, kc = kernel
    run(kc, "import sys, warnings")
    reply, _ = run(kc, "warnings.simplefilter('error')\nsys.exit(3)")
    assert (reply["status"], reply["ename"], reply["evalue"]) == ("error", "SystemExit", "3")
    reply, outputs = run(kc, "try:\n    warnings.warn('w')\nexcept UserWarning as e:\n    print('caught', e)\n"
                             "warnings.simplefilter('default')")
    assert texts(outputs) == ["stdout: caught w\n"]


def test_errors_are_error_messages_with_gradcli_s_report(kernel):
    _, kc = kernel
    reply, outputs = run(kc, "import torch\nw = torch.ones(2)\n\nw.foo()")
    assert reply["status"] == "error"
    assert (reply["ename"], reply["evalue"]) == ("AttributeError", "'Tensor' object has no attribute 'foo'")
    (kind, content), = outputs
    assert kind == "error"
    assert content["traceback"] == [f"<cell {reply['execution_count']}>:4:1: AttributeError: 'Tensor' object has no "
                                    "attribute 'foo'", "    w.foo()", "    ^"]
    # the why: line comes along; no Python traceback ever does
    run(kc, "a = torch.ones(2, requires_grad=True)\nb = (a * a).sum()\nb.backward()")
    reply, outputs = run(kc, "b.backward()")
    assert reply["ename"] == "RuntimeError" and reply["evalue"].startswith("Trying to backward through the graph")
    assert reply["traceback"][-1].startswith("  why: the backward() call at b.backward() already went through")
    assert not any("Traceback" in line or ".py" in line for line in reply["traceback"])
    reply, _ = run(kc, "def f(:\n    pass")
    assert reply["ename"] == "SyntaxError"


def test_an_interrupt_stops_a_running_loop_and_keeps_the_state(kernel):
    import queue
    km, kc = kernel
    run(kc, "n = 0")
    # stop_on_error=False: otherwise ipykernel aborts what arrives just after the failed cell (its queue is
    # aborted for a moment after an error, in any kernel), and the next cell's reply could be 'aborted'
    msg_id = kc.execute("print('looping')\nwhile True:\n    n += 1", stop_on_error=False)
    while True:        # wait until the loop runs: what the cell printed before it has arrived
        msg = kc.get_iopub_msg(timeout=20)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
            break
    km.interrupt_kernel()
    sent = time.monotonic()
    while True:
        try:
            reply = kc.get_shell_msg(timeout=1)
        except queue.Empty:
            # a second interrupt only turns a lost one into a failure instead of a hang
            assert time.monotonic() - sent < 5, "the interrupt was lost"
            continue
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    content = reply["content"]
    assert (content["status"], content.get("ename")) == ("error", "KeyboardInterrupt"), content
    assert content["traceback"] == ["KeyboardInterrupt"]
    after = run(kc, "n > 0")
    assert texts(after[1]) == ["result: True"], after


def test_a_cell_past_the_timeout_stops_and_the_session_goes_on(kernel):
    _, kc = kernel
    started = time.monotonic()
    reply, outputs = run(kc, "k = 0\nwhile True:\n    k += 1")
    assert time.monotonic() - started < TIMEOUT + 5
    assert (reply["ename"], reply["evalue"]) == ("TimeoutError", f"stopped after {TIMEOUT:g} seconds (--timeout {TIMEOUT:g})")
    assert reply["traceback"][1] in ("    while True:", "        k += 1")      # where the timer landed
    assert texts(run(kc, "k > 0")[1]) == ["result: True"]


def test_the_memory_limit_holds_per_cell(kernel):
    _, kc = kernel
    reply, _ = run(kc, "import torch\nbig = torch.ones(100_000_000)")
    assert reply["ename"] == "RuntimeError" and reply["evalue"].endswith("(gradcli's --max-memory is 64.0 MiB)")
    assert texts(run(kc, "torch.ones(1)")[1]) == ["result: tensor([1.])"]


def test_complete_inspect_and_is_complete(kernel):
    _, kc = kernel
    run(kc, "import torch\nv = torch.ones(3, requires_grad=True)")
    found = request(kc, kc.complete, "torch.zer", 9)
    assert found["matches"] == ["zero_", "zeros", "zeros_like"] and (found["cursor_start"], found["cursor_end"]) == (6, 9)
    assert "grad_fn" in request(kc, kc.complete, "v.gr", 4)["matches"]
    magics = request(kc, kc.complete, "%", 1)["matches"]
    assert "%graph" in magics and "%load" not in magics and "%toolbar" not in magics
    shown = request(kc, kc.inspect, "torch.ones(2, ", 14)
    assert shown["found"] and shown["data"]["text/plain"].startswith("torch.ones(*size")
    assert request(kc, kc.inspect, "v.sum", 3)["data"]["text/plain"].startswith("Tensor.sum(")
    assert not request(kc, kc.inspect, "nothing_here", 4)["found"]
    reply, outputs = run(kc, "torch.ones?")       # help for the pager, as IPython's NAME? gives it
    assert outputs == [] and reply["payload"][0]["data"]["text/plain"].startswith("torch.ones(*size")
    assert run(kc, "nothing_here?")[0]["ename"] == "UsageError"
    assert request(kc, kc.is_complete, "for i in range(3):") == {"status": "incomplete", "indent": "    "}
    assert request(kc, kc.is_complete, "x = (1,")["status"] == "incomplete"
    assert request(kc, kc.is_complete, "x = 1")["status"] == "complete"


def test_magics(kernel):
    _, kc = kernel
    # %why replays the inputs that ran without error: the interrupted and timed-out cells above defined
    # names that such a replay would miss, so start afresh
    assert texts(run(kc, "%reset")[1]) == ["stdout: session reset\n"]
    assert texts(run(kc, "%seed 0\nimport torch\ntorch.randn(2)")[1]) == ["result: tensor([ 1.5410, -0.2934])"]
    run(kc, "p = torch.ones(2, requires_grad=True)\nq = (p * 2).sum()")
    _, outputs = run(kc, "%graph q")
    (kind, content), = outputs
    assert kind == "display_data"
    tree = content["data"]["text/plain"].splitlines()
    assert tree[0].startswith("SumBackward0  q = (p * 2).sum()  (<cell ") and tree[1].startswith("└── MulBackward0")
    assert texts(run(kc, "%display legacy\np")[1]) == [
        "result: Variable containing:\n 1\n 1\n[torch.FloatTensor of size 2]"]     # IPython's text: no last newline
    run(kc, "%display modern")
    timed = texts(run(kc, "%time q.backward()")[1])
    assert len(timed) == 1 and timed[0].startswith("stdout: time: ")
    why = texts(run(kc, "%why p.grad")[1])
    assert why and "MulBackward0" in "".join(why)
    reply, _ = run(kc, "%load /etc/passwd")
    assert (reply["ename"], reply["evalue"].split(":")[0]) == ("UsageError", "%load")
    assert run(kc, "%nope")[0]["ename"] == "UsageError"
    helped = texts(run(kc, "%help")[1])[0]
    assert "%graph" in helped and "%load" not in helped


def test_graph_is_a_picture_when_graphviz_is_installed(kernel):
    _, kc = kernel
    run(kc, "import torch\nleaf = torch.ones(2, requires_grad=True)\nroot = (leaf.exp() * 2).sum()")
    (kind, content), = run(kc, "%graph root")[1]
    assert kind == "display_data" and content["data"]["text/plain"].startswith("SumBackward0")
    if shutil.which("dot") is None:
        assert "image/svg+xml" not in content["data"]     # the text tree alone
        pytest.skip("Graphviz's dot is not installed: the picture is not drawn")
    svg = content["data"]["image/svg+xml"]
    assert "<svg" in svg and "ExpBackward0" in svg and "AccumulateGrad" in svg


def test_events_as_application_json(kernel):
    _, kc = kernel
    _, outputs = run(kc, "%format jsonl\nprint(1, 2)\n3")
    run(kc, "%format text")
    data = [c["data"] for k, c in outputs if k == "display_data"]
    assert [d["application/json"]["event"] for d in data] == ["print", "result", "end"]
    assert data[0]["application/json"]["text"] == "1 2\n"


def test_escapes_from_the_language_are_refused_through_the_kernel(kernel):
    _, kc = kernel
    for source, status, expected in ESCAPES:
        reply, outputs = run(kc, source)
        assert reply["status"] == "error", source
        # sizes "at most N" follow the kernel's --max-memory (64M here), not `gradcli -c`'s default
        first = re.sub(r"at most \d+", "at most N", reply["traceback"][0])
        assert first == re.sub(r"at most \d+", "at most N", f"<cell {reply['execution_count']}>:{expected}"), source
        assert not any("Traceback" in line or "internal error" in line for line in reply["traceback"])
    assert texts(run(kc, "print(6 * 7)")[1]) == ["stdout: 42\n"]


def test_restart_forgets_the_names(kernel):
    km, kc = kernel
    run(kc, "kept = 1\nkept + 1")
    assert texts(run(kc, "_")[1]) == ["result: 2"]        # the last value shown, as IPython keeps it

    km.restart_kernel(now=True)
    kc.wait_for_ready(timeout=60)
    reply, _ = run(kc, "kept")
    assert (reply["ename"], reply["execution_count"]) == ("NameError", 1)
    assert texts(run(kc, "import torch\ntorch.ones(1) * 2")[1]) == ["result: tensor([2.])"]


def test_kernel_install_writes_a_kernelspec_with_the_cell_options(tmp_path, capsys):
    import json
    from gradcli import cli
    from gradcli.engine import budget
    before = budget.max_memory()        # `gradcli` sets the process's budget from --max-memory: put it back
    try:
        assert cli.main(["kernel", "install", "--prefix", str(tmp_path), "--timeout", "5", "--max-memory", "1G",
                         "--display", "legacy"]) == 0
    finally:
        budget.set_max_memory(before)
    folder = tmp_path / "share" / "jupyter" / "kernels" / "gradcli"
    assert capsys.readouterr().out == f"Installed kernelspec gradcli in {folder}\n"
    spec = json.loads((folder / "kernel.json").read_text())
    assert spec["argv"][1:] == ["-m", "gradcli.kernel", "-f", "{connection_file}", "--display", "legacy",
                                "--timeout", "5", "--max-memory", str(2 ** 30)]
    assert (spec["language"], spec["interrupt_mode"]) == ("gradcli", "signal")
