"""tools/regen_goldens.py without torch: the oracle is a tiny fake interpreter that runs the case
script as plain Python, so these tests check the tool's own behaviour (normalisation, .err
extraction, stale files, --check, --only, NONDET detection, interpreter selection)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "regen_goldens.py"

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the fake interpreter relies on a #! line")


def _load_tool():
    spec = importlib.util.spec_from_file_location("regen_goldens", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


regen = _load_tool()


@pytest.fixture
def fake_python(tmp_path: Path) -> Path:
    """An executable that behaves like `python SCRIPT` for scripts that do not import torch."""
    path = tmp_path / "bin" / "fakepython"
    path.parent.mkdir()
    path.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        script = sys.argv[1]
        sys.argv = sys.argv[1:]
        with open(script) as f:
            code = compile(f.read(), script, "exec")
        exec(code, {{"__name__": "__main__"}})
        """))
    path.chmod(0o755)
    return path


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    d = tmp_path / "cases"
    d.mkdir()
    return d


def write_case(cases: Path, name: str, body: str) -> Path:
    script = cases / f"{name}.grad"
    script.write_text(textwrap.dedent(body))
    return script


def run_tool(*args, env_extra=None, drop_oracle_env=True):
    env = dict(os.environ)
    if drop_oracle_env:
        env.pop("ORACLE_PYTHON", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, str(TOOL), *map(str, args), "--jobs", "2"],
                          capture_output=True, text=True, env=env, timeout=120)


# ---------------------------------------------------------------------------------------------
# helpers in the module


def test_normalize_replaces_lowercase_hex_addresses_only():
    text = "<MulBackward0 object at 0x7f3a5d8911b0> 0x1f 0xABC 0xdeadBEEF 10x5"
    assert regen.normalize(text) == "<MulBackward0 object at 0xADDR> 0xADDR 0xABC 0xADDRBEEF 10xADDR"


def test_last_traceback_line_takes_the_final_exception_of_a_chain():
    stderr = textwrap.dedent("""\
        /x.py:3: UserWarning: something
          warnings.warn("something")
        Traceback (most recent call last):
          File "a.grad", line 4, in <module>
        KeyError: 'k'

        During handling of the above exception, another exception occurred:

        Traceback (most recent call last):
          File "a.grad", line 6, in <module>
            y.backward()
            ^^^^^^^^^^^^
        RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
        """)
    assert regen.last_traceback_line(stderr) == (
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn")
    assert regen.last_traceback_line("just a warning\n") is None


# ---------------------------------------------------------------------------------------------
# the command line, with the fake interpreter


def test_writes_normalised_out_without_err(cases, fake_python):
    write_case(cases, "disp_01", """\
        # addresses are normalised
        print("<AddBackward0 object at 0x7f00ab12cd34>", "0xff")
        print("no newline at the end", end="")
        """)
    (cases / "disp_01.err").write_text("RuntimeError: stale\n")
    result = run_tool(cases, "--python", fake_python)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (cases / "disp_01.out").read_bytes() == (
        b"<AddBackward0 object at 0xADDR> 0xADDR\nno newline at the end")
    assert not (cases / "disp_01.err").exists(), "a stale .err must be deleted"
    assert "regen: 1 cases" in result.stdout.splitlines()[-1]


def test_err_is_the_last_traceback_line_and_stdout_is_kept(cases, fake_python):
    write_case(cases, "err_01", """\
        # ends in an exception whose message has an address
        import sys
        print("before")
        print("a warning", file=sys.stderr)
        def f():
            raise ValueError("bad thing at 0x55d1c0ffee")
        f()
        print("unreachable")
        """)
    result = run_tool(cases, "--python", fake_python)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (cases / "err_01.out").read_text() == "before\n"
    assert (cases / "err_01.err").read_text() == "ValueError: bad thing at 0xADDR\n"


def test_runs_in_a_folder_of_its_own_with_fixed_hash_seed(cases, fake_python):
    """The oracle runs a copy of the script in a temporary folder: what the script writes (torch.save's
    checkpoints) stays out of the cases' folder."""
    write_case(cases, "env_01", """\
        # working directory and PYTHONHASHSEED
        import os
        print(sorted(os.listdir(".")))
        open("model.pt", "w").write("saved")
        print(os.environ.get("PYTHONHASHSEED"))
        """)
    result = run_tool(cases, "--python", fake_python)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (cases / "env_01.out").read_text() == "['env_01.grad']\n0\n"
    assert not (cases / "model.pt").exists()


def test_nondet_case_writes_nothing_and_fails(cases, fake_python):
    write_case(cases, "nondet_01", """\
        # output depends on the SIMD capability
        import os
        print(os.environ.get("ATEN_CPU_CAPABILITY", "unset"))
        """)
    (cases / "nondet_01.out").write_text("old\n")
    write_case(cases, "good_01", """\
        # stable
        print(1)
        """)
    result = run_tool(cases, "--python", fake_python)
    assert result.returncode == 1
    assert "NONDET" in result.stdout and "nondet_01" in result.stdout
    assert "1 NONDET" in result.stdout.splitlines()[-1]
    assert (cases / "nondet_01.out").read_text() == "old\n"
    assert not (cases / "nondet_01.err").exists()
    assert (cases / "good_01.out").read_text() == "1\n"


def test_nondet_error_message_is_detected(cases, fake_python):
    write_case(cases, "nondet_02", """\
        # the exception differs between runs
        import os
        raise RuntimeError(os.environ.get("ATEN_CPU_CAPABILITY", "native"))
        """)
    result = run_tool(cases, "--python", fake_python)
    assert result.returncode == 1
    assert "NONDET" in result.stdout
    assert not (cases / "nondet_02.out").exists()
    assert not (cases / "nondet_02.err").exists()


def test_check_mode(cases, fake_python):
    write_case(cases, "a_01", """\
        # raises
        print("x")
        raise IndexError("index 2 is out of bounds for dimension 0 with size 2")
        """)
    write_case(cases, "b_01", """\
        # plain
        print("y")
        """)
    assert run_tool(cases, "--python", fake_python).returncode == 0
    ok = run_tool(cases, "--check", "--python", fake_python)
    assert ok.returncode == 0, ok.stdout
    assert ok.stdout.splitlines()[-1].startswith("check: 2 cases: 2 ok, 0 differs")

    (cases / "b_01.out").write_text("changed\n")
    (cases / "a_01.err").unlink()
    bad = run_tool(cases, "--check", "--python", fake_python)
    assert bad.returncode == 1
    assert "b_01" in bad.stdout and "a_01" in bad.stdout
    assert "2 differs" in bad.stdout.splitlines()[-1]
    # --check writes nothing
    assert (cases / "b_01.out").read_text() == "changed\n"
    assert not (cases / "a_01.err").exists()

    (cases / "b_01.err").write_text("RuntimeError: stale\n")
    (cases / "b_01.out").write_text("y\n")
    stale = run_tool(cases, "--check", "--only", "b_", "--python", fake_python)
    assert stale.returncode == 1 and "stale .err" in stale.stdout


def test_check_reports_missing_out(cases, fake_python):
    write_case(cases, "new_01", """\
        # never generated
        print("hello")
        """)
    result = run_tool(cases, "--check", "--python", fake_python)
    assert result.returncode == 1
    assert not (cases / "new_01.out").exists()


def test_only_filters_by_substring(cases, fake_python):
    for name in ("lang_01_x", "lang_02_y", "err_01_z"):
        write_case(cases, name, f"""\
            # {name}
            print("{name}")
            """)
    result = run_tool(cases, "--only", "lang_", "--python", fake_python)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (cases / "lang_01_x.out").exists() and (cases / "lang_02_y.out").exists()
    assert not (cases / "err_01_z.out").exists()
    assert "regen: 2 cases" in result.stdout


def test_unchanged_files_are_reported_as_such(cases, fake_python):
    write_case(cases, "c_01", """\
        # stable
        print(2)
        """)
    run_tool(cases, "--python", fake_python)
    again = run_tool(cases, "--python", fake_python)
    assert again.returncode == 0
    assert again.stdout.splitlines()[-1] == "regen: 1 cases: 0 written, 1 unchanged, 0 NONDET, 0 ERROR"


def test_oracle_python_environment_variable(cases, fake_python):
    write_case(cases, "d_01", """\
        # uses $ORACLE_PYTHON
        print(3)
        """)
    result = run_tool(cases, env_extra={"ORACLE_PYTHON": str(fake_python)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert (cases / "d_01.out").read_text() == "3\n"


def test_crash_without_traceback_is_an_error(cases, fake_python):
    write_case(cases, "crash_01", """\
        # dies without a traceback
        import os
        print("partial", flush=True)
        os._exit(3)
        """)
    result = run_tool(cases, "--python", fake_python)
    assert result.returncode == 1
    assert "ERROR" in result.stdout and "crash_01" in result.stdout
    assert not (cases / "crash_01.out").exists()


def test_no_matching_cases_is_a_usage_error(cases, fake_python):
    result = run_tool(cases, "--only", "nothing", "--python", fake_python)
    assert result.returncode == 2
