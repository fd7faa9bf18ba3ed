"""The REPL driven through prompt_toolkit's pipe input and a dummy output, on a real Session.

Keys are sent as a terminal would send them: "\\r" is Enter, "\\x1b[200~...\\x1b[201~" a bracketed
paste, "\\x03" Ctrl-C, "\\x1b[A" Up. When the keys run out the prompt sees end of input, as after
Ctrl-D, and the REPL returns its exit status.
"""

from __future__ import annotations

import _thread
import concurrent.futures
import io
import select
import threading
import time
import weakref
from unittest import mock

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from gradcli.engine import autograd
from gradcli.engine.tensor import print_options
from gradcli.repl import completion, prompt, scan, toolbar
from gradcli.repl.history import history_path
from gradcli.repl.shell import Options, Shell

# every REPL test ends within this, whatever happens to the keys or the interrupt (pytest-timeout)
pytestmark = pytest.mark.timeout(60)

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


class Run:
    def __init__(self, status, shell):
        self.status, self.shell = status, shell
        self.out, self.err = shell.out.getvalue(), shell.err.getvalue()


def new_shell(**options) -> Shell:
    options.setdefault("colour", False)
    return Shell(Options(**options), out=io.StringIO(), err=io.StringIO())


def drive(keys, shell=None, history="memory", **options) -> Run:
    """Type `keys` into a REPL. A string is sent at once (what follows an Enter waits as typeahead);
    a list is typed piece by piece, each piece once the prompt has settled (see `settle`), as a
    user types after seeing the screen. history="file" uses the history file, as `gradcli repl` does."""
    shell = shell or new_shell(**options)
    sessions, problems = [], []
    make_prompt = prompt.make_prompt

    def recording(*args, **kwargs):
        session = make_prompt(*args, **kwargs)
        sessions.append(session)
        return session

    with create_pipe_input() as pipe, mock.patch.object(prompt, "make_prompt", recording):
        feeder = None
        if isinstance(keys, str):
            pipe.send_text(keys)
            pipe.close()
        else:
            feeder = threading.Thread(target=type_pieces, args=(pipe, keys, sessions, problems), daemon=True)
            feeder.start()
        status = prompt.run(shell, input=pipe, output=DummyOutput(),
                            history=InMemoryHistory() if history == "memory" else None)
        if feeder is not None:
            # the feeder's pipe.close() must be over before the `with` closes the pipe again:
            # prompt_toolkit's pipe is not thread-safe (a double close is EBADF, or closes another file)
            feeder.join(PATIENCE)
    assert not problems, problems
    return Run(status, shell)


PATIENCE = 20.0         # seconds the prompt may take to settle, on a loaded machine
# prompt_toolkit's own asynchronous work on typed text: completion, suggestion, validation (each
# wrapped in `new_coroutine`) and loading the history
_BUSY = frozenset(("new_coroutine", "load_history", "async_completer", "async_suggestor", "async_validator"))


def type_pieces(pipe, pieces, sessions, problems):
    try:
        for piece in pieces:
            settle(pipe, sessions)
            pipe.send_text(piece)
        settle(pipe, sessions)
    except AssertionError as e:
        problems.append(str(e))
    finally:
        pipe.close()


def settle(pipe, sessions):
    """Wait until the prompt waits for keys: it runs, has read every key sent, and has no completion,
    suggestion or history loading under way. Asked in the prompt's event loop, between two of its
    callbacks, so never halfway through handling a key."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        app = sessions[0].app if sessions else None
        loop = app.loop if app is not None else None
        if loop is not None and app.is_running:
            answer = concurrent.futures.Future()

            def idle():
                busy = [t for t in app._background_tasks if not t.done() and t.get_coro().__name__ in _BUSY]
                answer.set_result(app.is_running and not app.is_done and not busy
                                  and not select.select([pipe.pipe.read_fd], [], [], 0)[0])
            try:
                loop.call_soon_threadsafe(idle)
                if answer.result(timeout=1.0):
                    return
            except (RuntimeError, concurrent.futures.TimeoutError):   # the loop ended meanwhile
                pass
        time.sleep(0.01)
    raise AssertionError("the prompt did not settle")


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm")
    yield
    autograd.reset_modes()
    print_options.display = "modern"


# ------------------------------------------------------------------------------------------- echo
def test_tutorial_line_by_line_shows_pytorch_output():
    r = drive("import torch\rx = torch.ones(2, 2, requires_grad=True)\rx\ry = x + 2\ry\r"
              "y.grad_fn\rz = y * y * 3\rout = z.mean()\rz, out\rout.backward()\rprint(x.grad)\r")
    assert r.status == 0
    text = r.out.replace(hex(id(r.shell.session.globals["y"].grad_fn)), "0xADDR")
    assert text == (
        "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)\n"
        "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)\n"
        "<AddBackward0 object at 0xADDR>\n"
        "(tensor([[27., 27.],\n        [27., 27.]], grad_fn=<MulBackward0>), "
        "tensor(27., grad_fn=<MeanBackward0>))\n"
        "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n")
    assert "Error" not in r.err


def test_echo_is_repr_and_nothing_for_none():
    r = drive("'a'\rNone\r1; 2\rprint('a')\rx = 5\rlen([1, 2])\r")
    assert r.out == "'a'\n1\n2\na\n2\n"


def test_echo_inside_loops_and_ifs_but_not_functions():
    # Python's interactive mode shows expression statements of compound statements too
    r = drive("for i in range(3): i\r\rif True:\r'yes'\r\rdef f():\r5\rreturn 1\r\rf()\r")
    assert r.out == "0\n1\n2\n'yes'\n1\n"


def test_classes_and_decorators_are_typed_over_several_lines():
    r = drive("class A:\rdef f(self):\rreturn 2\r\r\r@staticmethod\rdef g():\rreturn 3\r\rA().f(), g()\r")
    assert r.out == "(2, 3)\n"


def test_state_and_random_stream_carry_on_between_inputs():
    r = drive("import torch\rtorch.manual_seed(0)\ra = torch.randn(2)\rb = torch.randn(1)\ra, b\r"
              "torch.set_grad_enabled(False)\rtorch.is_grad_enabled()\r")
    assert r.out.splitlines()[:2] == ["<torch._C.Generator object at " + r.out.split(" at ")[1].split(">")[0] + ">",
                                      "(tensor([ 1.5410, -0.2934]), tensor([-2.1788]))"]
    assert r.out.splitlines()[-1] == "False"     # a plain call changes the mode for later inputs, as in Python


def test_seed_option():
    r = drive("import torch\rtorch.rand(2)\r", seed=0)
    assert r.out == "tensor([0.4963, 0.7682])\n"


# ------------------------------------------------------------------------------------- multi-line
def test_block_typed_across_lines_with_auto_indent():
    # after "while ...:" the next line starts indented; a blank line ends the block
    r = drive("i = 0\rwhile i < 3:\ri += 1\rprint(i)\r\ri\r")
    assert r.out == "1\n2\n3\n3\n"
    assert r.shell.inputs[1] == "while i < 3:\n    i += 1\n    print(i)"


def test_match_statements_and_assignment_expressions_at_the_prompt():
    r = drive("x = [1, 2]\rmatch x:\rcase [a, b]:\rprint('two', a, b)\r\x7fcase _:\rprint('other')\r\r"
              "if (n := len(x)) > 1:\rprint(n)\r\rmatch = 3\rmatch\r")
    assert r.out == "two 1 2\n2\n3\n"
    assert "Error" not in r.err


def test_unclosed_brackets_continue_and_dedent_keys():
    r = drive("t = (1,\r2)\rt\rif t:\rif 1:\rprint('in')\r\x7fprint('out')\r\r")
    assert r.out == "(1, 2)\nin\nout\n"


def test_bracketed_paste_runs_as_one_unit_and_keeps_indentation():
    block = "for i in range(3):\n  if i:\n\n        print(i)\nprint('done')\n"
    r = drive(PASTE_START + block + PASTE_END + "i\r")
    assert r.out == "1\n2\ndone\n2\n"
    assert r.shell.inputs[0] == block.rstrip()


def test_paste_without_final_newline_waits_for_enter():
    r = drive(PASTE_START + "x = 1\ny = x + 1" + PASTE_END + "\ry\r")
    assert r.out == "2\n"


# ------------------------------------------------------------------------------ errors and keys
def test_errors_keep_the_session_and_use_stdin_positions():
    r = drive("x = 1\r1/0\rx = = 2\rif x:\ry = 2\rz = q\r\rx, y\r")
    assert r.out == "(1, 2)\n"
    lines = r.err.splitlines()
    assert lines[1:4] == ["<stdin>:1:1: ZeroDivisionError: division by zero", "    1/0", "    ^"]
    assert lines[4].startswith("<stdin>:1:5: SyntaxError: ")
    assert lines[5:7] == ["    x = = 2", "        ^"]
    assert lines[7:10] == ["<stdin>:3:9: NameError: name 'q' is not defined", "        z = q", "            ^"]


def test_runtime_error_is_pytorch_message():
    r = drive("import torch\rtorch.ones(2) + torch.ones(3)\r")
    assert ("<stdin>:1:1: RuntimeError: The size of tensor a (2) must match the size of tensor b (3) "
            "at non-singleton dimension 0") in r.err


def test_ctrl_c_while_typing_clears_the_line():
    r = drive("abc = 1\x03x = 2\rx\r")
    assert r.out == "2\n"
    assert "abc" not in r.shell.session.globals
    assert r.err.splitlines()[1:] == ["KeyboardInterrupt"]      # as Python's REPL shows it


# ------------------------------------------------------------------------------------ _ and help
def test_underscore_holds_the_last_echoed_value():
    shell = new_shell()
    for line in ("1 + 1", "_", "_ * 10", "None", "x = 7", "print('p')", "_", "for i in range(3): i\n",
                 "_", "_ = 'mine'", "5", "_", "del _", "_"):
        shell.execute(line)
    # None, assignments and print leave `_` alone; a loop's echoes each set it; a script's own `_`
    # shadows the builtin until deleted; echoing it sets the builtin too: all as in CPython
    assert shell.out.getvalue().splitlines() == ["2", "2", "20", "p", "20", "0", "1", "2", "2", "5", "'mine'",
                                                 "'mine'"]
    fresh = new_shell()
    fresh.execute("_")
    assert "NameError: name '_' is not defined" in fresh.err.getvalue()


def test_question_mark_and_help_describe_without_running():
    shell = new_shell()
    shell.execute("import torch\nx = torch.ones(2, requires_grad=True)\ndef f(a, b=1):\n    return a")
    for line in ("torch.ones?", "x.sum?", "x.grad?", "len?", "f?", "help(torch.ones)", "torch.nn.functional.relu?",
                 "x.T.backward?", "torch.pi?", "nope?", "(x * 2)?"):
        shell.execute(line)
    out = shell.out.getvalue()
    blocks = out.split("\n    ")
    assert out.startswith("torch.ones(*size, dtype=None, requires_grad=False, device=None, out=None)\n    A new tensor")
    assert "\nTensor.sum(dim=None, keepdim=False, dtype=None)\n" in out
    assert "\nTensor.grad\n    The gradient backward accumulated" in out
    assert "\nlen(obj, /)\n" in out and "\nf(a, b)\n    A function defined in this session.\n" in out
    assert out.count("torch.ones(*size, dtype=None, requires_grad=False, device=None, out=None)\n") == 2   # ? and help()
    assert "\ntorch.nn.functional.relu(input)\n" in out
    assert "\nTensor.backward(gradient=None, retain_graph=None, create_graph=False, inputs=None)\n" in out
    assert "\ntorch.pi = 3.141592653589793\n    The constant pi.\n" in out
    # out= only where PyTorch gives it (torch.ones), never gradcli's own parameter of that name
    assert len(blocks) > 8 and "out=" not in out.replace(", out=None)", ")") and "**kw" not in out
    assert shell.err.getvalue().splitlines() == [
        "nope?: nothing to describe; give a name, e.g. torch.ones? or x.sum?",
        "(x * 2)?: nothing to describe; give a name, e.g. torch.ones? or x.sum?"]
    assert shell.session.globals["x"].grad is None        # nothing ran


def test_help_covers_every_name_scripts_reach():
    from gradcli.language import access, helptext, stdlib
    builtins = stdlib.make_builtins(lambda text: None)
    generic = helptext.what("no_such_name")
    missing = []

    def walk(module):
        for name, value in module.members.items():
            if value.__class__ is stdlib.ScriptModule:
                walk(value)
            elif callable(value) and helptext.what(name) == generic:
                missing.append(f"{module.name}.{name}")
    walk(stdlib.TORCH)
    missing += [f"Tensor.{n}" for n in access.TENSOR_ATTRS if helptext.what(n) == generic]
    missing += [n for n in builtins if n not in helptext._BUILTINS]
    assert not missing
    for name, value in builtins.items():
        if name not in ("__name__", "__annotations__", "NotImplemented"):      # values, not functions
            assert helptext.text_for(value, builtins).startswith(name + "(")


def test_leave_with_exit_or_end_of_input():
    r = drive("1\rexit\r2\r")
    assert (r.status, r.out) == (0, "1\n")
    r = drive("%quit\r2\r")
    assert (r.status, r.out) == (0, "")


def test_internal_errors_are_one_line_and_the_session_goes_on(monkeypatch):
    shell = new_shell()

    def broken(*args, **kwargs):
        raise IndexError("something inside gradcli")
    monkeypatch.setattr(shell.session, "compile", broken)
    r = drive("1\r", shell=shell)
    monkeypatch.undo()
    assert r.err.splitlines()[1] == ("gradcli: internal error: IndexError: something inside gradcli "
                                     "(please report it; the session goes on)")
    assert shell.execute("x = 3") and shell.session.globals["x"] == 3


def interrupt_when(ready, backup=5.0):
    """Ctrl-C as the terminal delivers it (KeyboardInterrupt in the main thread) once `ready()` says
    the input is running (never with `ready` None). If the input is still running `backup` seconds later the interrupt was lost:
    interrupt again so that the test fails instead of hanging. Returns the list of lost interrupts."""
    lost = []
    done = threading.Event()

    def watch():
        if ready is not None:
            while not ready():
                time.sleep(0.005)
            _thread.interrupt_main()
        while not done.wait(backup):
            lost.append(time.monotonic())
            _thread.interrupt_main()
    threading.Thread(target=watch, daemon=True).start()
    return done, lost


def run_interrupted(shell, text, ready):
    done, lost = interrupt_when(ready)
    try:
        shell.execute(text)
    finally:
        done.set()
    return lost


def test_ctrl_c_interrupts_a_run_keeps_state_and_restores_grad_mode():
    shell = new_shell()
    shell.execute("import torch\nx = torch.ones(2, requires_grad=True)\nn = 0")
    lost = run_interrupted(shell, "with torch.no_grad():\n    inside = torch.is_grad_enabled()\n    while True:\n"
                           "        n += 1", ready=lambda: shell.session.globals.get("n", 0) > 0)
    assert not lost
    assert shell.err.getvalue().endswith("KeyboardInterrupt\n")
    assert shell.session.globals["inside"] is False and shell.session.globals["n"] > 0
    shell.execute("torch.is_grad_enabled(), (x * 2).requires_grad, x.shape")
    assert shell.out.getvalue() == "(True, True, torch.Size([2]))\n"


def test_ctrl_c_inside_a_function_and_inference_mode():
    shell = new_shell()
    shell.execute("import torch\ndef spin():\n    with torch.inference_mode():\n        while True:\n"
                  "            pass")
    lost = run_interrupted(shell, "spin()", ready=autograd.is_inference_mode_enabled)
    assert not lost
    shell.execute("torch.is_inference_mode_enabled(), torch.is_grad_enabled()\nspin")
    assert shell.out.getvalue().startswith("(False, True)\n<function spin at 0x")


def test_ctrl_c_landing_in_a_weakref_callback_is_delivered_again():
    # Python cannot raise KeyboardInterrupt out of a weakref callback called from C: it reports it
    # to sys.unraisablehook and goes on. Here the interrupt arrives while a callback runs (as it does
    # when Ctrl-C lands while a dead tensor's provenance entry is forgotten, or in a long garbage
    # collection): the REPL must still stop the loop that follows.
    shell = new_shell()
    shell.execute("import torch\nx = torch.ones(2)\nn = 0")
    fired = []

    def callback(ref):
        fired.append(ref)
        _thread.interrupt_main()        # handled at the next check, inside this callback
        sum(range(10))
    ref = weakref.ref(shell.session.globals["x"], callback)
    lost = run_interrupted(shell, "del x\nwhile True:\n    n += 1", ready=None)
    assert fired and ref() is None
    assert not lost, "the interrupt was swallowed by the callback and the loop went on"
    assert shell.err.getvalue().endswith("KeyboardInterrupt\n")
    shell.execute("n > 0")
    assert shell.out.getvalue() == "True\n"


# -------------------------------------------------------------------------------------- colour
def test_colour_of_errors_follows_the_option_and_no_color(monkeypatch):
    shell = new_shell(colour=True)
    shell.execute("nope")
    assert shell.err.getvalue().startswith("\x1b[1;31m<stdin>:1:1: NameError: name 'nope' is not defined. "
                                           "Did you mean: 'None'?\x1b[0m\n")      # (CPython's suggestion too)
    monkeypatch.setenv("NO_COLOR", "1")
    shell = Shell(Options(), out=io.StringIO(), err=io.StringIO())
    shell.execute("nope")
    assert "\x1b[" not in shell.err.getvalue() and not shell.colour
    monkeypatch.delenv("NO_COLOR")
    shell = Shell(Options(), out=io.StringIO(), err=io.StringIO())   # not a terminal
    assert not shell.colour


def test_highlighting_colours_tokens():
    from gradcli.repl import highlight
    pieces = highlight.lines("import torch\nx = 'a  # b' + 1.5e3  # c\nawait")
    assert pieces[0] == [("class:keyword", "import"), ("", " "), ("class:module", "torch")]
    assert ("class:string", "'a  # b'") in pieces[1] and ("class:number", "1.5e3") in pieces[1]
    assert pieces[1][-1] == ("class:comment", "# c")
    assert pieces[2] == [("class:refused", "await")]
    assert highlight.lines('s = """open\nstill')[1] == [("class:string", "still")]


# ---------------------------------------------------------------------------------- completion
def completions(text: str, shell: Shell, requested=True):
    completer = completion.make_completer(shell)
    event = CompleteEvent(completion_requested=requested)
    return [(c.text, c.start_position) for c in completer.get_completions(Document(text), event)]


@pytest.fixture
def session_shell():
    shell = new_shell()
    shell.execute("import torch\nx = torch.ones(2, requires_grad=True)\nout = (x * x).sum()\n"
                  "def f(alpha, beta=2):\n    return alpha\nvalue = 1")
    return shell


def test_completes_torch_names(session_shell):
    found = completions("torch.ra", session_shell)
    assert [t for t, _ in found] == ["rad2deg", "rad2deg_", "rand", "rand_like", "randint", "randint_like", "randn",
                                     "randn_like", "random", "randperm", "range", "ravel"]
    assert {start for _, start in found} == {-2}
    assert ("float32", -5) in completions("torch.float", session_shell)
    assert [t for t, _ in completions("torch.nn.functional.rel", session_shell)] == ["relu", "relu6", "relu_"]


def test_completes_the_distributions_and_transforms(session_shell):
    assert [t for t, _ in completions("torch.distributions.Lo", session_shell)] == [
        "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "LowerCholeskyTransform"]
    assert [t for t, _ in completions("torch.distributions.transforms.S", session_shell)] == [
        "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform"]
    session_shell.execute("d = torch.distributions.Gumbel(0.0, 1.0)\nt = torch.distributions.transforms.ExpTransform()")
    assert [t for t, _ in completions("d.tra", session_shell)] == ["transforms"]
    assert [t for t, _ in completions("t.in", session_shell)] == ["inv", "inverse_shape"]


def test_completes_tensor_attributes_and_backward_keywords(session_shell):
    assert [t for t, _ in completions("x.gr", session_shell)] == ["grad", "grad_fn", "greater", "greater_",
                                                                          "greater_equal", "greater_equal_"]
    names = [t for t, _ in completions("out.", session_shell)]
    assert "backward" in names and "register_hook" in names and not any(n.startswith("_") for n in names)
    assert [t for t, _ in completions("out.backward(", session_shell, requested=False)] == \
        ["gradient=", "retain_graph=", "create_graph=", "inputs="]
    assert [t for t, _ in completions("out.backward(retain_graph=True, c", session_shell)][:1] == ["create_graph="]
    assert [t for t, _ in completions("torch.autograd.grad(out, x, cre", session_shell)] == ["create_graph="]
    assert [t for t, _ in completions("f(1, b", session_shell)] == ["beta=", "bin", "bool", "break"]


def test_completes_collections_and_namedtuple_fields(session_shell):
    session_shell.execute("from collections import namedtuple, Counter\nimport collections\n"
                          "P = namedtuple('P', 'x loss')\np = P(1, 2.0)\nc = Counter('ab')")
    assert [t for t, _ in completions("import coll", session_shell)] == ["collections"]
    assert [t for t, _ in completions("collections.", session_shell)] == \
        ["Counter", "OrderedDict", "abc", "defaultdict", "deque", "namedtuple"]
    assert [t for t, _ in completions("collections.abc.Ma", session_shell)] == ["Mapping", "MappingView"]
    assert [t for t, _ in completions("p.", session_shell)] == ["count", "index", "loss", "x"]
    assert [t for t, _ in completions("p._", session_shell)] == ["_asdict", "_fields", "_make", "_replace"]
    assert [t for t, _ in completions("c.most", session_shell)] == ["most_common"]
    assert [t for t, _ in completions("P.__", session_shell)] == ["__name__", "__qualname__"]


def test_completes_grad_fn_chain_without_running_code(session_shell):
    node_attrs = ["metadata", "name", "next_functions", "register_hook", "register_prehook"]
    assert [t for t, _ in completions("out.grad_fn.", session_shell)] == node_attrs
    assert [t for t, _ in completions("out.grad_fn.next_functions[0][0].", session_shell)] == node_attrs
    # x.T is a property computing a new tensor: completed from the class, never evaluated
    assert "sum" in [t for t, _ in completions("x.T.s", session_shell)]
    # anything that would need a call or an operator to find its value is not completed
    assert completions("(x * 2).su", session_shell) == []
    assert completions("f(x).", session_shell) == []


def test_completes_session_names_keywords_and_builtins(session_shell):
    assert [t for t, _ in completions("va", session_shell)] == ["value", "vars"]
    assert [t for t, _ in completions("wh", session_shell)] == ["while"]
    assert [t for t, _ in completions("pri", session_shell)] == ["print"]
    assert [t for t, _ in completions("print(1, ", session_shell, requested=False)] == ["sep=", "end="]
    assert completions("", session_shell, requested=False) == []     # no menu before a word starts
    assert completions("'x.", session_shell) == [] and completions("# x.", session_shell) == []
    assert completions("x._", session_shell) == [] and completions("x.__cl", session_shell) == []


def test_completes_imports_and_magics(session_shell, tmp_path, monkeypatch):
    assert [t for t, _ in completions("import torch.n", session_shell)] == ["torch.nn", "torch.nn.attention",
                                                                        "torch.nn.functional",
                                                                        "torch.nn.grad",
                                                                        "torch.nn.init", "torch.nn.utils",
                                                                        "torch.nn.utils.parametrizations",
                                                                        "torch.nn.utils.parametrize",
                                                                        "torch.nn.utils.prune",
                                                                        "torch.nn.utils.rnn"]
    assert [t for t, _ in completions("from torch.autograd import V", session_shell)] == ["Variable"]
    assert [t for t, _ in completions("import torch.ff", session_shell)] == ["torch.fft"]
    assert [t for t, _ in completions("from torch.fft import rf", session_shell)] == ["rfft", "rfft2", "rfftfreq",
                                                                                  "rfftn"]
    assert [t for t, _ in completions("import torch.optim.", session_shell)] == ["torch.optim.lr_scheduler",
                                                                             "torch.optim.swa_utils"]
    assert [t for t, _ in completions("from torch.optim.swa_utils import ", session_shell)] == [
        "AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
        "get_swa_multi_avg_fn", "update_bn"]
    assert [t for t, _ in completions("from torch.nn.utils.prune import l", session_shell)] == [
        "l1_unstructured", "ln_structured"]
    assert [t for t, _ in completions("import i", session_shell)] == ["inspect", "io", "itertools"]
    assert [t for t, _ in completions("import r", session_shell)] == ["random", "re"]
    assert [t for t, _ in completions("import u", session_shell)] == ["unicodedata"]
    assert [t for t, _ in completions("from re import f", session_shell)] == ["findall", "finditer", "fullmatch"]
    assert [t for t, _ in completions("from io import ", session_shell)] == [
        "BytesIO", "DEFAULT_BUFFER_SIZE", "SEEK_CUR", "SEEK_END", "SEEK_SET", "StringIO", "UnsupportedOperation"]
    assert [t for t, _ in completions("import lo", session_shell)] == ["logging"]
    assert [t for t, _ in completions("import tr", session_shell)] == ["traceback"]
    assert [t for t, _ in completions("from traceback import print_", session_shell)] == [
        "print_exc", "print_exception", "print_stack"]
    assert [t for t, _ in completions("from logging import getL", session_shell)] == [
        "getLevelName", "getLevelNamesMapping", "getLogger", "getLoggerClass"]
    session_shell.execute("import io\nbuf = io.StringIO()")
    session_shell.execute("import logging\nlog = logging.getLogger('x')")
    assert [t for t, _ in completions("log.set", session_shell)] == ["setLevel"]
    assert [t for t, _ in completions("buf.read", session_shell)] == ["read", "readable", "readline", "readlines"]
    session_shell.execute("import re\nm = re.match('(a)', 'ab')\np = m.re")
    assert [t for t, _ in completions("m.gr", session_shell)] == ["group", "groupdict", "groups"]
    assert [t for t, _ in completions("p.s", session_shell)] == ["search", "split", "sub", "subn"]
    assert [t for t, _ in completions("%gr", session_shell)] == ["%graph"]
    assert [t for t, _ in completions("%graph o", session_shell)] == ["out"]
    assert [t for t, _ in completions("%display l", session_shell)] == ["legacy"]
    (tmp_path / "scripts").mkdir()
    (tmp_path / "one.grad").write_text("")
    (tmp_path / "notes.txt").write_text("")
    monkeypatch.chdir(tmp_path)
    assert [t for t, _ in completions("%load ", session_shell)] == ["one.grad", "scripts/"]


def test_tab_completes_in_the_prompt():
    r = drive(["import torch\r", "torch.ran", "\t", "n(3).shape\r", "y = torch.ones(1, requires_grad=True)\r",
               "(y * 2).sum().backward()\r", "y.gr", "\t", "\r", "\r"])
    # Tab took the first of grad, grad_fn; the first Enter keeps the choice, the second runs the line
    assert r.out == "torch.Size([3])\ntensor([2.])\n"


# -------------------------------------------------------------------------------------- magics
def test_vars_and_graph(session_shell):
    session_shell.execute("%vars")
    assert session_shell.out.getvalue() == (
        "name  shape  dtype    requires_grad  grad_fn       grad\n"
        "out   []     float32  True           SumBackward0  -\n"
        "x     [2]    float32  True           -             -\n"
        "other names: f (function), torch (module), value (int)\n")
    session_shell.out.truncate(0)
    session_shell.out.seek(0)
    session_shell.execute("%graph out")
    assert session_shell.out.getvalue() == (
        "SumBackward0  out = (x * x).sum()\n"
        "└── MulBackward0  in out = (x * x).sum()\n"
        "    ├── AccumulateGrad ─ x: [2] float32 [#1]\n"
        "    └── AccumulateGrad ─ x: [2] float32 [#1, shown above]\n")


def test_graph_arguments_and_errors(session_shell):
    shell = session_shell
    shell.execute("%graph out.grad_fn --ascii --depth 1")
    shell.execute("%graph value")
    shell.execute("%graph x.grad")
    shell.execute("%graph missing")
    shell.execute("%graph (x * 3).sum()")
    shell.execute("%graph")
    assert shell.out.getvalue() == (
        "SumBackward0  out = (x * x).sum()\n`-- ... (1 input below max_depth=1)\n"
        "SumBackward0  in (x * 3).sum()\n└── MulBackward0  in (x * 3).sum()\n    └── AccumulateGrad ─ x: [2] float32\n")
    assert shell.err.getvalue().splitlines() == [
        "%graph: expected a Tensor or a grad_fn node, not int",
        "%graph: x.grad is None: there is no graph to draw",
        "<stdin>:1:1: NameError: name 'missing' is not defined", "    missing", "    ^",
        "%graph: give a tensor, e.g. %graph out"]


def test_time_reset_seed_history_and_unknown():
    shell = new_shell()
    for line in ("import torch", "%time s = torch.ones(3).sum()", "%time s", "%seed 0", "torch.randn(2)",
                 "%seed x", "%history 2", "%reset", "s", "%nope", "%help vars"):
        shell.execute(line)
    out = shell.out.getvalue().splitlines()
    assert out[0].startswith("time: ") and out[0].endswith(" CPU")
    assert out[1:3] == ["tensor(3.)", out[2]] and out[2].startswith("time: ")
    assert out[3] == "tensor([ 1.5410, -0.2934])"
    assert out[4:6] == ["   5  torch.randn(2)", "   6  %seed x"]
    assert out[6:] == ["session reset", "%vars", "    list the session's names; tensors with shape, dtype, "
                       "requires_grad, grad_fn and grad"]
    err = shell.err.getvalue().splitlines()
    assert err[0] == "%seed: give an integer seed, e.g. %seed 0"
    assert err[1] == "<stdin>:1:1: NameError: name 's' is not defined"
    assert err[-1] == "%nope: unknown command; %help lists the commands"


def test_help_lists_every_command():
    shell = new_shell()
    shell.execute("%help")
    text = shell.out.getvalue()
    for name in ("%help", "%vars", "%graph", "%reset", "%time", "%display", "%load", "%save", "%seed",
                 "%history", "%toolbar", "%exit"):
        assert f"\n  {name}" in text


def test_display_switches_between_legacy_and_modern():
    shell = new_shell()
    for line in ("import torch", "%display", "%display legacy", "torch.ones(2)", "%display modern",
                 "torch.ones(2)", "%display fancy"):
        shell.execute(line)
    assert shell.out.getvalue() == ("display: modern\n"
                                    "\n 1\n 1\n[torch.FloatTensor of size 2]\n\n"
                                    "tensor([1., 1.])\n")
    assert shell.err.getvalue() == "%display: choose legacy or modern\n"


def test_display_option_and_reset_keeps_it():
    shell = new_shell(display="legacy")
    shell.execute("import torch\nx = torch.ones(1)\n%reset")
    shell.execute("%display")
    assert shell.out.getvalue().endswith("display: legacy\n")


def test_save_then_load(tmp_path):
    shell = new_shell()
    for line in ("import torch", "x = torch.ones(2, requires_grad=True)", "bad = nope", "y = (x * 3).sum()",
                 "y.backward()", "%vars", f"%save {tmp_path / 's.grad'}"):
        shell.execute(line)
    saved = (tmp_path / "s.grad").read_text()
    assert saved == ("# saved from a gradcli REPL session\nimport torch\nx = torch.ones(2, requires_grad=True)\n"
                     "y = (x * 3).sum()\ny.backward()\n")
    assert shell.out.getvalue().endswith(f"saved 4 inputs to {tmp_path / 's.grad'}\n")
    fresh = new_shell()
    fresh.execute(f"%load {tmp_path / 's.grad'}")
    fresh.execute("x.grad")
    assert fresh.out.getvalue() == "tensor([3., 3.])\n"      # a loaded script's expressions do not echo
    fresh.execute(f"%load {tmp_path / 'missing.grad'}")
    fresh.execute(f"%save {tmp_path / 'no' / 'such' / 'dir.grad'}")
    err = fresh.err.getvalue().splitlines()
    assert err[0].startswith("%load: cannot read '") and err[0].endswith("No such file or directory")
    assert err[1].startswith("%save: cannot write '")


def test_load_reports_errors_with_the_file_name(tmp_path):
    script = tmp_path / "broken.grad"
    script.write_text("a = 1\nb = a +\n")
    shell = new_shell()
    shell.execute(f"%load {script}")
    assert shell.err.getvalue().startswith(f"{script}:2:8: SyntaxError: ")


# ------------------------------------------------------------------------------ toolbar, history
def test_toolbar_lists_tensors_taking_part_in_autograd():
    shell = new_shell()
    assert shell.toolbar_text.startswith(" no tensors require grad yet")
    shell.execute("import torch\nw = torch.ones(2, 3, requires_grad=True)\nc = torch.zeros(2)\n"
                  "loss = (w * 2).sum()\nloss.backward()")
    assert shell.toolbar_text == " loss [] SumBackward0 │ w [2, 3] leaf, grad"
    shell.execute("%toolbar")
    assert shell.toolbar is False
    assert toolbar.summary({f"t{i}": shell.session.globals["w"] for i in range(14)}, limit=2).endswith("│ +12 more")


def test_history_file_in_xdg_state_dir_and_recall_with_up(tmp_path):
    r = drive("41 + 1\r%vars\r", history="file")
    path = tmp_path / "state" / "gradcli" / "history"
    assert history_path() == path
    assert "\n+41 + 1\n" in path.read_text() and "\n+%vars\n" in path.read_text()
    # Up twice: the input before %vars (history loads while the prompt first draws: wait for it)
    r = drive(["", "\x1b[A", "\x1b[A", "\r"], history="file")
    assert r.out == "42\n"


def test_ctrl_r_searches_history_and_meta_enter_runs_at_once():
    r = drive(["41 + 1\r", "7\r", "\x12", "41", "\r", "\r", "x = (1,\x1b\r"])
    assert r.out == "42\n7\n42\n"
    assert "SyntaxError: '(' was never closed" in r.err      # Meta-Enter ran the unfinished line


@pytest.mark.parametrize("blocked", ["file as folder", "folder as file"])
def test_unwritable_history_falls_back_to_memory(tmp_path, monkeypatch, blocked):
    # blocked in ways that hold for root too (permission bits do not stop root)
    blocker = tmp_path / "file"
    if blocked == "file as folder":
        blocker.write_text("")                              # mkdir fails: ENOTDIR
    else:
        (blocker / "gradcli" / "history").mkdir(parents=True)   # open fails: EISDIR
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    r = drive(["1 + 1\r", "\x1b[A", "\r"], history="file")
    assert r.out == "2\n2\n"
    warning = [line for line in r.err.splitlines() if "history" in line]
    assert len(warning) == 1 and warning[0].startswith(f"gradcli: cannot write the history file {blocker}")
    assert warning[0].endswith("history is kept for this session only")


def test_auto_suggest_is_off_by_default_and_right_accepts_a_suggestion():
    keys = ["41 + 1\r", "4", "\x1b[C", "\r"]          # Right arrow after typing "4"
    assert drive(keys).out == "42\n4\n"
    assert drive(keys, auto_suggest=True).out == "42\n42\n"


def test_auto_suggest_and_vi_options_build_the_prompt():
    shell = new_shell(vi=True, auto_suggest=True)
    with create_pipe_input() as pipe:
        session = prompt.make_prompt(shell, input=pipe, output=DummyOutput(), history=InMemoryHistory())
    from prompt_toolkit.enums import EditingMode
    assert session.editing_mode == EditingMode.VI and session.auto_suggest is not None
    r = drive("x = 2\rx\r", vi=True)
    assert r.out == "2\n"


# --------------------------------------------------------------------------- what Enter does
@pytest.mark.parametrize("text, action", [
    ("x = 1", scan.ACCEPT),
    ("", scan.ACCEPT),
    ("   ", scan.ACCEPT),
    ("# just a comment", scan.ACCEPT),
    ("%graph out", scan.ACCEPT),
    ("x = (1,", scan.NEWLINE),
    ("x = [1, (2,\n3)", scan.NEWLINE),
    ("s = '''abc", scan.NEWLINE),
    ("x = 1 + \\", scan.NEWLINE),
    ("if x:", scan.NEWLINE),
    ("if x:  # why", scan.NEWLINE),
    ("if x: pass", scan.NEWLINE),                    # a compound statement waits for a blank line
    ("for i in range(3):\n    print(i)", scan.NEWLINE),
    ("for i in range(3):\n    print(i)\n", scan.ACCEPT),
    ("for i in range(3):\n    print(i)\n    ", scan.ACCEPT),
    ("if x:\n    ", scan.ACCEPT),                   # blank line after a header: the parser reports it
    ("def f():\n    return 1\nf()", scan.ACCEPT),
    ("x = (1,\n\n", scan.NEWLINE),                   # brackets outlast blank lines
    ("x = 'abc", scan.ACCEPT),                       # an unterminated one-line string is an error now
    ("x = 1)", scan.ACCEPT),
    ("y = x[0] + ':'", scan.ACCEPT),
    ("elif_ = 3", scan.ACCEPT),
    ("match x:", scan.NEWLINE),
    ("match x:\n    case 1:\n        pass", scan.NEWLINE),      # more cases may follow: wait for a blank line
    ("match x:\n    case 1:\n        pass\n", scan.ACCEPT),
    ("match = 3", scan.ACCEPT),                       # `match` and `case` are names too
    ("match(x)", scan.ACCEPT),
    ("case = 1", scan.ACCEPT),
    ("class A:", scan.NEWLINE),
    ("class A:\n    x = 1", scan.NEWLINE),             # a class body waits for a blank line, as a def's does
    ("class A:\n    x = 1\n", scan.ACCEPT),
    ("@torch.no_grad()", scan.NEWLINE),              # a decorator: its def or class follows
    ("@dec\ndef f():\n    pass", scan.NEWLINE),
    ("x = a @ b", scan.ACCEPT),
])
def test_enter_action(text, action):
    assert scan.enter_action(text) == action


def test_enter_inside_a_recalled_block_splits_the_line():
    assert scan.enter_action("x = (1,\n2)", at_end=False) == scan.NEWLINE
    assert scan.enter_action("x = 1", at_end=False) == scan.ACCEPT


@pytest.mark.parametrize("line, indent", [
    ("if x:", 4), ("    for i in y:", 8), ("    x = 1", 4), ("        return x", 4), ("pass", 0),
    ("f(a,", 0), ("  # comment", 2),
])
def test_indent_after(line, indent):
    assert scan.indent_after(line) == indent


def test_attribute_names_are_exactly_what_scripts_can_read():
    from gradcli.language import access
    from gradcli.engine import rng
    import numpy as np

    from gradcli.engine.tensor import Tensor
    t = Tensor(np.ones((2, 2), np.float32))
    for obj in (t, Tensor(np.ones((2, 2), np.complex64)), rng.default_generator):
        names = access.attribute_names(obj)
        assert names and not any(name.startswith("_") for name in names)
        for name in names:
            if name == "imag" and obj is t:
                continue                        # a real tensor's imag: PyTorch's RuntimeError, as in PyTorch
            access.get_attr(obj, name)          # readable; raises AttributeError otherwise


def test_stable_ids_option():
    r = drive("import torch\rx = torch.ones(1, requires_grad=True)\rx.exp().grad_fn\rx.exp().grad_fn\r",
              stable_ids=True)
    assert r.out == ("<ExpBackward0 object at 0x7f0000000010>\n"
                     "<ExpBackward0 object at 0x7f0000000020>\n")


def test_help_on_everything_reachable_shows_no_internals():
    """help() on every torch member, tensor attribute and builtin: a signature line and a paragraph,
    never an address, a gradcli path or an engine-internal parameter."""
    from gradcli.language import access, stdlib
    names = ["torch", "math"] + [f"torch.{n}" for n in stdlib.TORCH.members]
    names += [f"torch.nn.functional.{n}" for n in stdlib.TORCH.members["nn"].members["functional"].members]
    names += [f"x.{n}" for n in sorted(access.TENSOR_ATTRS) if n not in ("grad", "grad_fn", "imag")]
    names += ["torch.ones(1, dtype=torch.cfloat).imag"]     # (a real tensor's imag is PyTorch's RuntimeError)
    names += sorted(stdlib.make_builtins(print))
    shell = new_shell()
    shell.execute("import torch\nimport math\nx = torch.ones(2, 2)\n" + "".join(f"help({n})\n" for n in names))
    assert shell.err.getvalue() == ""
    out = shell.out.getvalue()
    assert out.count("\n    ") >= len(names)
    out = out.replace(", *, out=None)", ")").replace(", out=None)", ")")     # PyTorch's out= (data/out_api.txt)
    for leak in ("0x", "<locals>", "gradcli.engine", "gradcli/", "out=", "**kw"):
        assert leak not in out, leak
    # gradcli's own function _matmul; torch.chain_matmul and the float32 matmul precision's are PyTorch's
    assert "_matmul" not in out.replace("chain_matmul", "").replace("float32_matmul", "")


def test_help_on_a_memory_format_describes_it():
    """help(torch.channels_last) names the format and says what layout it asks for, as help on a dtype does."""
    shell = new_shell()
    shell.execute("import torch\nhelp(torch.channels_last)\nhelp(torch.preserve_format)\n")
    out = shell.out.getvalue()
    assert out.startswith("torch.channels_last\n    The memory format of a 4-d (N, C, H, W) tensor laid out as N, H, W, C")
    assert "torch.preserve_format\n    The memory format that keeps the input's" in out
