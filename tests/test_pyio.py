"""Python's io module in the language (its in-memory streams, CPython's own classes) and contextlib's
redirect_stdout/redirect_stderr, compared with CPython 3.11; torch.save and torch.load on an io.BytesIO, compared
with PyTorch 2.13; no stream reaches the OS, and what a script writes stays within the bound of a string."""

import builtins
import io
import os
import subprocess
import sys

import pytest

from conftest import cpython_output, gradcli_output, located_error
from gradcli.engine.state import STATE
from gradcli.language import helptext
from gradcli.session import Session

TRY = "def t(f):\n    try:\n        print(repr(f()))\n    except Exception as e:\n        print(type(e).__name__, e)\n"

SNIPPETS = [
    # StringIO: writing, reading, lines, seeking, truncating, its attributes
    "import io\nfrom io import StringIO\ns = StringIO()\nprint('hello', 1, 2.5, file=s)\n"
    "print('world', file=s, end='!')\n"
    "print(repr(s.getvalue()), s.tell(), s.closed)\ns.seek(0)\nprint(s.readline(), end='')\nprint(s.read())\n"
    "s.seek(0)\nfor line in s:\n    print(repr(line))\nprint(s.readlines(), s.seekable(), s.readable(), s.writable())\n"
    "s.seek(0)\nprint(s.readlines(), s.isatty())\ns.seek(0)\nprint(s.readlines(4), s.read(0), s.read(-1))\n"
    "print(s.truncate(3), repr(s.getvalue()), s.tell(), s.write('Z'), repr(s.getvalue()))\n"
    "print(s.encoding, s.errors, s.line_buffering, s.newlines, s.seek(0, io.SEEK_END), s.seek(1), s.read(2))\n"
    "print(type(s), io.StringIO, isinstance(s, io.StringIO), type(s).__name__, io.SEEK_SET, io.SEEK_CUR)\n"
    "s = io.StringIO('a\\nb\\r\\nc\\rd', newline=None)\nprint(s.readlines(), s.newlines)\n"
    "s = io.StringIO(newline='\\r\\n')\ns.write('a\\nb')\nprint(repr(s.getvalue()))\n"
    "s = io.StringIO('x\\ry', newline='')\nprint(s.readlines())\ns = io.StringIO('hello')\ns.seek(8)\ns.write('x')\n"
    "print(repr(s.getvalue()))\ns = io.StringIO()\ns.writelines(['a', 'b\\n', 'c'])\nprint(repr(s.getvalue()))\n"
    "s = io.StringIO(initial_value='abc')\nprint(s.tell(), s.read(), s.flush())",
    # copies (their own buffer, value, position and newline mode), the classes as type() gives them
    "import io, copy\ns = io.StringIO('ab\\ncd', newline='\\r\\n')\ns.seek(2)\nc = copy.copy(s)\nd = copy.deepcopy(s)\n"
    "c.write('X\\n')\nprint(repr(s.getvalue()), repr(c.getvalue()), c.tell(), d.tell(), repr(d.read()))\n"
    "b = io.BytesIO()\nprint(type(b) is io.BytesIO, type(s) is io.StringIO, type(s)('new').read(), type(b).__name__, "
    "io.StringIO.__name__, io.BytesIO.__qualname__, copy.copy(b).getvalue())\ns.close()\ntry:\n    copy.copy(s)\n"
    "except ValueError as e:\n    print(e)",
    # BytesIO: what an empty one gives; its refusals of text
    TRY + "import io\nb = io.BytesIO()\n"
    "print(b.tell(), b.getvalue(), b.read(), b.read1(), b.readline(), b.readlines())\n"
    "print(b.readable(), b.writable(), b.seekable(), b.isatty(), b.closed, b.flush(), b.truncate(), list(b))\n"
    "t(lambda: b.write('x'))\nt(lambda: b.writelines(['x']))\nt(lambda: io.BytesIO('abc'))\n"
    "t(lambda: b.write(b.getvalue()))\nc = io.BytesIO(b.getvalue())\nprint(c.getvalue(), type(c), io.BytesIO)\n"
    "t(lambda: b.seek(-1))\nt(lambda: b.seek(0, 3))\nt(lambda: b.read('x'))\nt(lambda: b.readinto(5))",
    # errors: closed streams, wrong types, what an in-memory stream does not offer
    TRY + "import io\ns = io.StringIO()\nt(lambda: s.write(io.BytesIO().getvalue()))\nt(lambda: s.write(5))\n"
    "t(lambda: io.StringIO(1))\nt(lambda: io.StringIO(newline='x'))\nt(lambda: io.StringIO('a', 'b', 'c'))\n"
    "t(lambda: s.seek(1, 1))\nt(lambda: s.seek(-1))\nt(lambda: s.seek(0, 5))\nt(lambda: s.truncate(-1))\n"
    "for st in (io.BytesIO(), io.StringIO()):\n    for name in ('fileno', 'detach'):\n"
    "        try:\n            getattr(st, name)()\n        except io.UnsupportedOperation as e:\n"
    "            print(type(e), repr(e), isinstance(e, OSError), isinstance(e, ValueError))\n"
    "    st.close()\n    st.close()\n    print(st.closed)\n"
    "    for f in (st.getvalue, st.tell, st.read, st.readline, st.readable, st.writable, st.seekable, st.flush,\n"
    "              lambda: st.seek(0), lambda: list(st), lambda: st.truncate(0), lambda: st.write(st)):\n"
    "        t(f)\nt(lambda: print('x', file=s))\nt(lambda: print('x', file=io.BytesIO()))\n"
    "with io.StringIO('abc') as w:\n    print(w.read(2), w.closed)\nprint(w.closed)\n"
    "def again():\n    with w:\n        pass\nt(again)\nt(lambda: io.BytesIO().foo)\nt(lambda: io.StringIO().foo)",
    # redirect_stdout and redirect_stderr: print, sys.stdout, pprint and warnings write to the target
    "import io, sys, contextlib, pprint, warnings\nbuf = io.StringIO()\nr = contextlib.redirect_stdout(buf)\n"
    "print(type(r), contextlib.redirect_stdout)\nwith r as f:\n    print('inside', f is buf)\n"
    "    sys.stdout.write('via sys\\n')\n    print('to stdout', file=sys.stdout)\n    pprint.pprint({'a': [1, 2]})\n"
    "    sys.stdout.flush()\nprint('after', repr(buf.getvalue()))\nerr = io.StringIO()\n"
    "with contextlib.redirect_stderr(err):\n    print('e1', file=sys.stderr)\n    sys.stderr.write('e2\\n')\n"
    "    print('visible')\nprint(repr(err.getvalue()))\nwith contextlib.redirect_stdout(None):\n    print('lost')\n"
    "b1, b2 = io.StringIO(), io.StringIO()\nwith contextlib.redirect_stdout(b1):\n    print('one')\n"
    "    with contextlib.redirect_stdout(b2):\n        print('two')\n    print('three')\n"
    "print(repr(b1.getvalue()), repr(b2.getvalue()))\nrr = contextlib.redirect_stdout(b1)\nwith rr:\n    with rr:\n"
    "        print('re')\nprint(repr(b1.getvalue()))\ntry:\n    with contextlib.redirect_stdout(b2):\n"
    "        raise ValueError('out')\nexcept ValueError as e:\n    print('caught', e, repr(b2.getvalue()))\n"
    "with contextlib.ExitStack() as stack:\n    b3 = stack.enter_context(contextlib.redirect_stdout(io.StringIO()))\n"
    "    print('in stack')\nprint(repr(b3.getvalue()))\nwith contextlib.redirect_stderr(None):\n"
    "    warnings.warn('lost too')\nwith contextlib.redirect_stdout(io.BytesIO()):\n    try:\n        print('x')\n"
    "    except TypeError as e:\n        sys.stderr.write(str(e) + '\\n')",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_io(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


def test_reprs_and_help():
    out = gradcli_output("import io, contextlib\nprint(io, io.BytesIO(), io.StringIO(), io.StringIO().write, "
                         "contextlib.redirect_stdout(None))\n")
    assert out.startswith("<module 'io' (frozen)> <_io.BytesIO object at 0x")
    assert "<_io.StringIO object at 0x" in out and "<built-in method write of _io.StringIO object at 0x" in out
    assert "<contextlib.redirect_stdout object at 0x" in out
    for name, first in (("io", "module io"), ("io.BytesIO", "class BytesIO(initial_bytes=b'')"),
                        ("io.StringIO().readline", "StringIO.readline(size=-1, /)"),
                        ("io.BytesIO().write", "BytesIO.write(b, /)"),
                        ("contextlib.redirect_stderr", "class redirect_stderr(new_target)")):
        assert gradcli_output(f"import io, contextlib\nhelp({name})\n").startswith(first + "\n    ")


# checked against PyTorch 2.13 (the buffer's length and its position after a load are not PyTorch's: README)
ROUND_TRIP = """\
import torch, io
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model(torch.ones(1, 3)).sum().backward()
opt.step()
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, buffer)
print(buffer.tell() == len(buffer.getvalue()) > 0)
buffer.seek(0)
ck = torch.load(buffer)
fresh = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
print(fresh.load_state_dict(ck["model"]), ck["epoch"])
opt2 = torch.optim.SGD(fresh.parameters(), lr=0.1, momentum=0.9)
opt2.load_state_dict(ck["opt"])
print(opt2.state_dict()["state"][0]["momentum_buffer"])
print(torch.equal(fresh[0].weight, model[0].weight))
copy = io.BytesIO(buffer.getvalue())
print(torch.load(copy, weights_only=True)["model"]["0.bias"])
buffer.seek(0, io.SEEK_END)
for kw in ({}, {"weights_only": False}):
    try:
        torch.load(buffer, **kw)
    except EOFError as e:
        print("EOFError", repr(str(e)))
try:
    torch.save(1, io.StringIO())
except TypeError as e:
    print(e)
s = io.StringIO("abc")
try:
    torch.load(s)
except AssertionError as e:
    print(e, s.tell())
buffer.seek(0)
try:
    torch.load(buffer, mmap=True)
except ValueError as e:
    print(e)
try:
    torch.load(io.BytesIO(), mmap=True)
except RuntimeError as e:
    print(e)
bad = io.BytesIO()
try:
    torch.save(lambda: 1, bad)
except Exception as e:
    print(type(e).__name__)
bad.seek(0)
try:
    torch.load(bad, weights_only=False)
except RuntimeError as e:
    print(e[:60] if False else str(e)[:60])
m = io.BytesIO()
torch.save(model, m)
m.seek(0)
try:
    torch.load(m)
except Exception as e:
    print(type(e).__name__, str(e)[-120:])
m.seek(0)
print(type(torch.load(m, weights_only=False, map_location="cpu")).__name__)
m.close()
for f in (lambda: torch.save(1, m), lambda: torch.load(m)):
    try:
        f()
    except ValueError as e:
        print(e)
two = io.BytesIO()
torch.save(torch.ones(2), two)
middle = two.tell()
torch.save(torch.zeros(2), two)
two.seek(middle)
print(torch.load(two))
two.seek(0)
print(torch.load(two))
"""
ROUND_TRIP_OUT = """\
True
<All keys matched successfully> 3
tensor([[0., 0., 0.],
        [0., 0., 0.]])
True
tensor([-0.0114,  0.4578])
EOFError ''
EOFError 'Ran out of input'
string argument expected, got 'memoryview'
Expected bytes, got str 1
f must be a file path in order to use the mmap argument
mmap can only be used with files saved with `torch.save(_use_new_zipfile_serialization=True), please torch.save your checkpoint with this option in order to use mmap.
PicklingError
PytorchStreamReader failed locating file data.pkl: file not 
UnpicklingError  learn more about types accepted by default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.
Sequential
I/O operation on closed file.
I/O operation on closed file.
tensor([0., 0.])
tensor([1., 1.])
"""


def test_torch_save_and_load_on_a_bytesio():
    assert gradcli_output(ROUND_TRIP) == ROUND_TRIP_OUT


def test_a_stream_inside_a_checkpoint():
    """Checked against PyTorch 2.13: a StringIO saved in a dict loads with weights_only=False (a copy, its value and
    position kept); the default weights-only load names CPython's class."""
    source = ("import io, torch\ns = io.StringIO('ab\\ncd')\ns.seek(3)\nb = io.BytesIO()\ntorch.save({'s': s}, b)\n"
              "b.seek(0)\nback = torch.load(b, weights_only=False)['s']\n"
              "print(back.getvalue(), back.tell(), back is s)\n"
              "b.seek(0)\ntry:\n    torch.load(b)\nexcept Exception as e:\n"
              "    print(type(e).__name__, 'GLOBAL _io.StringIO was not an allowed global' in str(e))\n")
    assert gradcli_output(source) == "ab\ncd 3 False\nUnpicklingError True\n"


def test_a_record_is_the_sessions_own():
    """What a BytesIO's record keeps is held for the session that saved it; a new session has none of it."""
    source = "import io, torch\nb = io.BytesIO()\ntorch.save(torch.ones(1), b)\nkept = b.getvalue()\n"
    session = Session(out=io.StringIO())
    session.run_source(source)
    kept = session.globals["kept"]
    assert kept.startswith(b"GRADCLI checkpoint")
    fresh = Session(out=io.StringIO())
    fresh.globals["kept"] = kept
    fresh.run_source("import io, torch\ntry:\n    torch.load(io.BytesIO(kept))\nexcept Exception as e:\n"
                     "    print(type(e).__name__, e)\n")
    assert fresh.out.getvalue() == "UnpicklingError invalid load key, 'G'.\n"


def test_streams_never_reach_the_os(monkeypatch):
    """Every method a script may call on either stream runs with the process's ways to files shut."""
    def shut(*args, **kwargs):
        raise AssertionError("a stream reached the OS")
    methods = ("print(s.write(x), s.writelines([x, x]), s.tell(), s.seek(0), s.read(), s.seek(0), s.readline(), "
               "s.readlines(), s.truncate(1), s.getvalue(), s.flush(), s.isatty(), s.readable(), s.writable(), "
               "s.seekable(), s.closed, list(s))\n")
    source = ("import io, torch, contextlib\nb = io.BytesIO()\ntorch.save(torch.ones(1), b)\n"
              "for s, x in ((io.BytesIO(), b.getvalue()), (io.StringIO(), 'text\\n')):\n    " + methods
              + "    try:\n        s.fileno()\n    except io.UnsupportedOperation as e:\n        print(e)\n"
              "    with s:\n        pass\nwith contextlib.redirect_stdout(io.StringIO()) as r:\n    print('in')\n"
              "b.seek(0)\nprint(torch.load(b), r.getvalue())\n")
    gradcli_output("import io, torch, contextlib\n")     # (the modules made before the ways are shut)
    with monkeypatch.context() as patched:
        for owner, name in ((builtins, "open"), (io, "open"), (os, "open"), (os, "fdopen"), (io, "FileIO")):
            patched.setattr(owner, name, shut)
        out = gradcli_output(source)
    assert out.count("fileno") == 2 and out.endswith("tensor([1.]) in\n\n")


def test_a_redirection_ends_with_its_run():
    """A run stopped inside a redirect_stdout block leaves nothing redirected for the next one."""
    session = Session(out=io.StringIO())
    with pytest.raises(Exception):
        session.run_source("import io, contextlib\nr = contextlib.redirect_stdout(io.StringIO())\n"
                           "with r:\n    1 / 0\n")
    assert STATE.redirects is None
    session.run_source("print('shown')\n")
    assert session.out.getvalue() == "shown\n"


@pytest.mark.parametrize("body", [
    "s = io.StringIO()\nwhile True:\n    s.write('x')\n    s.seek(0)\n",
    "with contextlib.redirect_stdout(io.StringIO()):\n    while True:\n        print('x', end='')\n",
])
def test_the_timeout_stops_a_loop_of_writes(tmp_path, body):
    script = tmp_path / "spin.grad"
    script.write_text("import io, contextlib\n" + body)
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", "--timeout", "0.5", str(script)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 124 and done.stdout == ""


@pytest.mark.parametrize("source, message", [
    # growth: refused where a string that long would be (the bound of a session with no memory budget)
    ("import io\ns = io.StringIO()\nwhile True:\n    s.write('x' * 10 ** 6)",
     "4:5: MemoryError: a str of 101000000 items is too large (gradcli allows at most 100000000)"),
    ("import io, torch\nb = io.BytesIO()\ntorch.save(1, b)\nwhile True:\n    b.write(b.getvalue())",
     "5:5: MemoryError: a bytes of 113246208 items is too large (gradcli allows at most 100000000)"),
    ("import io, torch\nb = io.BytesIO()\ntorch.save(1, b)\nb.getvalue() * 10 ** 8",
     "4:1: MemoryError: a bytes of 2700000000 items is too large (gradcli allows at most 100000000)"),
    ("import io\nio.StringIO(newline='\\r\\n').writelines(['\\n' * 60000000])",
     "2:1: MemoryError: a str of 120000000 items is too large (gradcli allows at most 100000000)"),
    ("import io\nio.StringIO('\\n' * 60000000, '\\r\\n')",
     "2:1: MemoryError: a str of 120000000 items is too large (gradcli allows at most 100000000)"),
    ("import io\nio.IOBase", "2:1: NotImplementedError: gradcli does not implement io.IOBase"),
    ("from io import FileIO", "1:1: ImportError: cannot import name 'FileIO' from 'io': it is outside gradcli's "
     "language (gradcli's io has the in-memory streams (BytesIO, StringIO) only: scripts cannot read or write files)"),
    ("import io\nio.nothing", "2:1: AttributeError: module 'io' has no attribute 'nothing'"),
    ("import io, torch\ntorch.load(io.BytesIO())", "2:1: EOFError: "),
    ("import torch\nclass W:\n    def write(self, b):\n        return len(b)\ntorch.save(1, W())",
     "5:1: NotImplementedError: gradcli does not implement torch.save with a file-like object other than io.BytesIO"),
    ("import io, torch\nb = io.BytesIO()\ntorch.save(1, b)\nb.seek(3)\ntorch.load(b)",
     "5:1: _pickle.UnpicklingError: invalid load key, 'D'."),
])
def test_errors(source, message):
    assert located_error(source) == message
