"""Python's warnings module in the language: CPython 3.11's output, filters, registries and catch_warnings for the
script's warnings, the same filters over the engine's (PyTorch's) warnings, and filters that last one run."""

import io
import subprocess
import sys

import pytest

from conftest import located_error
from gradcli import cli
from gradcli.session import Session


def cpython_run(source: str, tmp_path) -> tuple:
    """(stdout, stderr, status) of CPython running the script as s.py in tmp_path (its path shown relative)."""
    (tmp_path / "s.py").write_text(source)
    proc = subprocess.run([sys.executable, "s.py"], cwd=tmp_path, capture_output=True, text=True)
    return proc.stdout, proc.stderr.replace(f"{tmp_path}/", ""), proc.returncode


def gradcli_run(source: str, tmp_path, capsys, monkeypatch) -> tuple:
    (tmp_path / "s.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    status = cli.main(["run", "s.py"])
    out, err = capsys.readouterr()
    return out, err, status


SCRIPTS = [
    # categories, a message that is a Warning or no string, the default once-per-place registry in loops
    'import warnings\nfor i in range(3):\n    warnings.warn("hello")\n    warnings.warn(f"hello {i % 2}")\n'
    'warnings.warn("dep", DeprecationWarning)\nwarnings.warn("fut", FutureWarning)\n'
    'warnings.warn("rt", category=RuntimeWarning)\nwarnings.warn(UserWarning("inst"))\nwarnings.warn(5)\n'
    'warnings.warn("pending", PendingDeprecationWarning)\nwarnings.warn("x", SyntaxWarning)\nprint(warnings)\n',
    # stacklevel through the script's functions, and past its outermost frame (sys:1)
    'import warnings\ndef f():\n    warnings.warn("lvl3", stacklevel=3)\ndef g():\n    f()\ng()\ng()\n'
    'def h():\n    warnings.warn("lvl2", stacklevel=2)\nh()\nwarnings.warn("top", stacklevel=2)\n'
    'warnings.warn("zero", stacklevel=0)\n',
    # stacklevel=2 in a comprehension, a generator, a lambda, a method: CPython's frames
    'import warnings\nx = [warnings.warn(f"c{i}", stacklevel=2) for i in range(2)]\ndef gen():\n'
    '    warnings.warn("g", stacklevel=2)\n    yield 1\nfor v in gen():\n    pass\n'
    'y = list(warnings.warn("ge", stacklevel=2) for _ in range(1))\nf = lambda: warnings.warn("lam", stacklevel=2)\n'
    'f()\nclass A:\n    def m(self):\n        warnings.warn("meth", stacklevel=2)\nA().m()\n'
    'z = [warnings.warn("c1") for i in range(2)]\nd = {k: warnings.warn("dc", stacklevel=2) for k in "ab"}\n',
    # the actions once, module, always, default, and a script's own category
    'import warnings\nclass MyW(UserWarning):\n    pass\nwarnings.warn("mine", MyW)\nwarnings.warn(MyW("a", 2))\n'
    'warnings.simplefilter("once")\nfor i in range(3):\n    warnings.warn("o")\nwarnings.warn("o")\n'
    'warnings.simplefilter("module")\nfor i in range(2):\n    warnings.warn("m")\nwarnings.warn("m")\n'
    'warnings.simplefilter("always")\nfor i in range(2):\n    warnings.warn("a")\n'
    'warnings.simplefilter("default")\nfor i in range(2):\n    warnings.warn("d")\n',
    # filterwarnings: message (a regular expression from the start, any case), category, module, lineno, append
    'import warnings\nwarnings.filterwarnings("ignore", message="spam")\nwarnings.warn("SPAM and eggs")\n'
    'warnings.warn("eggs and spam")\nwarnings.filterwarnings("ignore", category=FutureWarning)\n'
    'warnings.warn("f", FutureWarning)\nwarnings.filterwarnings("error", module="torch")\nwarnings.warn("main")\n'
    'warnings.filterwarnings("ignore", lineno=10)\nwarnings.warn("line 10")\nwarnings.warn("line 11")\n'
    'warnings.filterwarnings("error", append=True)\nwarnings.warn("still shown")\n'
    'warnings.resetwarnings()\nwarnings.warn("after reset", DeprecationWarning)\n'
    'warnings.warn("pd", PendingDeprecationWarning)\n',
    # "error": raised, caught by its category, and at the end of the run
    'import warnings\nwarnings.simplefilter("error")\ntry:\n    warnings.warn("boom")\nexcept UserWarning as e:\n'
    '    print("caught", repr(e), e.args)\ntry:\n    warnings.warn("d", DeprecationWarning)\nexcept Warning as e:\n'
    '    print(type(e).__name__, e)\nwarnings.warn("uncaught")\nprint("not reached")\n',
    # catch_warnings: the filters put back, the records, action= of CPython 3.11
    'import warnings\nwarnings.warn("w")\nwith warnings.catch_warnings(record=True) as w:\n    warnings.warn("w")\n'
    '    warnings.warn("w")\n    warnings.warn("d", DeprecationWarning)\n    warnings.simplefilter("always")\n'
    '    warnings.warn("r", RuntimeWarning)\n    warnings.warn("r", RuntimeWarning)\nprint(len(w))\nfor r in w:\n'
    '    print(r.category, r.category.__name__, r.lineno, r.message, repr(r.message), r.filename.endswith("s.py"), r.line, r.file, '
    'r.source)\nprint(str(w[0]).replace(w[0].filename, "F"))\nwarnings.warn("w")\nwith warnings.catch_warnings():\n    warnings.simplefilter("ignore")\n'
    '    warnings.warn("quiet")\nwarnings.warn("loud")\nwith warnings.catch_warnings(action="error"):\n    try:\n'
    '        warnings.warn("as error")\n    except UserWarning as e:\n        print("caught", e)\n'
    'with warnings.catch_warnings(record=True, action="ignore", category=DeprecationWarning) as w2:\n'
    '    warnings.warn("d", DeprecationWarning)\n    warnings.warn("u")\nprint([str(m.message) for m in w2])\n'
    'print(warnings.catch_warnings, warnings.warn, warnings.catch_warnings(record=True), warnings.catch_warnings())\n'
    'c = warnings.catch_warnings()\nwith c:\n    pass\ntry:\n    with c:\n        pass\nexcept RuntimeError as e:\n'
    '    print(e)\nprint(warnings.formatwarning("msg", UserWarning, "f.py", 3), end="|")\n'
    'print(warnings.formatwarning("msg", UserWarning, "f.py", 3, "  the line  "), end="|")\n',
    # CPython's argument errors
    'import warnings\nfor bad in [lambda: warnings.warn("x", 5), lambda: warnings.warn("x", str),\n'
    '            lambda: warnings.filterwarnings("bogus"), lambda: warnings.filterwarnings("ignore", message=5),\n'
    '            lambda: warnings.simplefilter("ignore", lineno=-1), lambda: warnings.filterwarnings("ignore", category=int),\n'
    '            lambda: warnings.warn("x", stacklevel="a"), lambda: warnings.warn(), lambda: warnings.warn("x", foo=1),\n'
    '            lambda: warnings.warn("x", UserWarning, 1, None, 5), lambda: warnings.simplefilter(),\n'
    '            lambda: warnings.filterwarnings("ignore", "", Warning, "", 0, False, 7),\n'
    '            lambda: warnings.catch_warnings(True), lambda: warnings.catch_warnings(foo=1),\n'
    '            lambda: warnings.filterwarnings("ignore", module=3), lambda: warnings.resetwarnings(1),\n'
    '            lambda: warnings.simplefilter("ignore", lineno=1.5)]:\n'
    '    try:\n        bad()\n    except Exception as e:\n        print(type(e).__name__, e)\n',
]


@pytest.mark.parametrize("source", SCRIPTS)
def test_cpythons_output_stderr_and_status(source, tmp_path, capsys, monkeypatch):
    out, err, status = cpython_run(source, tmp_path)
    got_out, got_err, got_status = gradcli_run(source, tmp_path, capsys, monkeypatch)
    assert (got_out, got_status) == (out, status)
    if "Traceback" in err:      # the warnings before it are CPython's; the error is gradcli's report of it
        before, _, rest = err.partition("Traceback (most recent call last):\n")
        kind_message = rest.strip().splitlines()[-1]
        got_before, _, got_error = got_err.rpartition("s.py:")
        assert got_before == before
        assert got_error.split(": ", 1)[1].startswith(kind_message)
    else:
        assert got_err == err


# What PyTorch 2.13 prints for these scripts (checked with the oracle, whose paths are absolute): its engine's
# warnings go through Python's warnings module, so the script's filters govern them
SIZE = ("UserWarning: Using a target size (torch.Size([3])) that is different to the input size (torch.Size([3, 1])). "
        "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.")
SCALAR = ("UserWarning: Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
          "Consider using tensor.detach() first. (Triggered internally at "
          "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")
ENGINE = "import torch\nimport warnings\nimport torch.nn.functional as F\nx = torch.ones(3, 1)\ny = torch.ones(3)\n"


def run(source: str):
    out, err = io.StringIO(), io.StringIO()
    Session(out=out, err=err).run_source(source, "s.grad")
    return out.getvalue(), err.getvalue()


def test_the_engines_warnings_are_filtered_recorded_and_raised():
    source = ENGINE + (
        "for i in range(2):\n    F.mse_loss(x, y)\nwith warnings.catch_warnings(record=True) as w:\n"
        "    for i in range(3):\n        F.l1_loss(x, y)\n    warnings.warn('mine')\nprint(len(w), w[0].category, w[0].lineno, "
        "str(w[0].message)[:20], w[1].lineno)\nwith warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n    for i in range(3):\n        F.mse_loss(x, y)\nprint(len(w))\n"
        "F.mse_loss(x, y)\nwith warnings.catch_warnings():\n    warnings.filterwarnings('ignore', message='Using a target')\n"
        "    F.mse_loss(x, y)\nF.mse_loss(x, y)\n")
    out, err = run(source)
    assert out == "2 <class 'UserWarning'> 10 Using a target size  11\n3\n"
    assert err == (f"s.grad:7: {SIZE}\n  F.mse_loss(x, y)\ns.grad:18: {SIZE}\n  F.mse_loss(x, y)\n"
                   f"s.grad:22: {SIZE}\n  F.mse_loss(x, y)\n")


def test_an_error_filter_raises_pytorchs_message_which_the_script_catches():
    source = ENGINE + (
        "warnings.simplefilter('error')\nt = torch.ones(1, requires_grad=True)\n"
        "for f in [lambda: float(t), lambda: F.mse_loss(x, y), lambda: torch.chain_matmul(torch.eye(2), torch.eye(2))]:\n"
        "    try:\n        f()\n        print('no error')\n    except UserWarning as e:\n        print(type(e).__name__, '|', e)\n"
        "warnings.resetwarnings()\nfloat(t)\n")       # PyTorch's once-per-process warning was given (as an error)
    out, err = run(source)
    assert out == (f"UserWarning | {SCALAR[len('UserWarning: '):]}\nUserWarning | {SIZE[len('UserWarning: '):]}\n"
                   "UserWarning | torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                   "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                   "parameters. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:1102.)\n")
    assert err == ""
    assert located_error(ENGINE + "warnings.filterwarnings('error', category=UserWarning)\nl = F.mse_loss(x, y)") == \
        f"7:5: {SIZE}"


def test_ignoring_silences_the_engine_too():
    source = ENGINE + ("warnings.filterwarnings('ignore')\nt = torch.ones(1, requires_grad=True)\nfloat(t)\n"
                       "F.mse_loss(x, y)\nwarnings.warn('x')\n")
    assert run(source) == ("", "")


def test_filters_last_one_run():
    first = Session(out=io.StringIO(), err=io.StringIO())
    first.run_source("import warnings\nwarnings.simplefilter('error')\n", "a.grad")
    out, err = run("import warnings\nwarnings.warn('shown again')\n")
    assert err == "s.grad:2: UserWarning: shown again\n  warnings.warn('shown again')\n"
    assert run(ENGINE + "F.mse_loss(x, y)\n")[1] == f"s.grad:6: {SIZE}\n  F.mse_loss(x, y)\n"


def test_the_repl_shows_a_warning_again_for_each_input_and_keeps_the_filters():
    session = Session(out=io.StringIO(), err=io.StringIO())
    session.run_unit("import warnings\nwarnings.warn('w')\n")
    session.run_unit("warnings.warn('w')\n")
    session.run_unit("warnings.simplefilter('ignore')\n")
    session.run_unit("warnings.warn('w')\n")
    assert session.err.getvalue() == "<stdin>:2: UserWarning: w\n  warnings.warn('w')\n" \
                                     "<stdin>:1: UserWarning: w\n  warnings.warn('w')\n"


@pytest.mark.parametrize("source, message", [
    ("import warnings\nwarnings.filterwarnings('ignore', message='(a+)+$')",
     "2:1: ValueError: the warnings filter pattern '(a+)+$' repeats a repetition or alternatives: outside gradcli's "
     "language (its matching time could grow without bound)"),
    ("import warnings\nwarnings.filterwarnings('ignore', module='(a|aa)*b')",
     "2:1: ValueError: the warnings filter pattern '(a|aa)*b' repeats a repetition or alternatives: outside "
     "gradcli's language (its matching time could grow without bound)"),
    ("import warnings\nwarnings.filterwarnings('ignore', message='x' * 2000)",
     "2:1: ValueError: a warnings filter pattern of 2000 characters is outside gradcli's language (at most 1000)"),
    ("import warnings\nwarnings.filters", "2:1: AttributeError: module 'warnings' attribute 'filters' is outside "
                                          "gradcli's language"),
    ("import warnings\nwarnings.showwarning", "2:1: NotImplementedError: gradcli does not implement "
                                              "warnings.showwarning"),
    ("import warnings\nwarnings.sys", "2:1: AttributeError: module 'warnings' attribute 'sys' is outside gradcli's "
                                      "language"),
    ("import warnings\nwarnings.catch_warnings(module=warnings)",
     "2:1: TypeError: catch_warnings(module=...) is outside gradcli's language"),
    ("import warnings\nwith warnings.catch_warnings(record=True) as w:\n    warnings.warn('x')\n"
     "w[0].message.__traceback__", "4:1: AttributeError: 'UserWarning' object attribute '__traceback__' is outside "
                                   "gradcli's language"),
    ("import warnings\nwith warnings.catch_warnings(record=True) as w:\n    warnings.warn('x')\n"
     "w[0].category.__subclasses__", "4:1: AttributeError: 'type' object attribute '__subclasses__' is outside "
                                     "gradcli's language"),
    ("import warnings\nwarnings.catch_warnings().__enter__.__globals__",
     "2:1: AttributeError: 'catch_warnings' object attribute '__enter__' is outside gradcli's language"),
    ("import warnings\nwarnings.warn.__self__", "2:1: AttributeError: 'builtin_function_or_method' object attribute "
                                                "'__self__' is outside gradcli's language"),
])
def test_nothing_behind_the_module_is_reachable(source, message):
    assert located_error(source) == message
