"""Golden cases: every NAME.grad must print NAME.out exactly (addresses normalised) and, with NAME.err,
end in that `Type: message`. Runs the project's own cases and, when present, ../shared's."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, SHARED_CASES, normalize, run_script
from test_jsonl import check_jsonl_agrees

OWN_CASES = ROOT / "tests" / "conformance"
PENDING_FILE = ROOT / "tests" / "conformance_pending.txt"


def _pending() -> dict:
    """Shared cases that need features of a later issue: name -> reason. Strict xfail, so a case
    that starts passing must be taken off the list."""
    table = {}
    if PENDING_FILE.exists():
        for line in PENDING_FILE.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, why = line.partition(" ")
                table[name] = why.strip()
    return table


PENDING = _pending()


def _cases():
    dirs = [OWN_CASES] + ([SHARED_CASES] if SHARED_CASES.is_dir() else [])
    for d in dirs:
        for script in sorted(d.glob("*.grad")):
            yield pytest.param(script, id=f"{d.parent.name if d == SHARED_CASES else 'own'}/{script.stem}")


@pytest.mark.parametrize("script", list(_cases()))
def test_case(script: Path):
    """The golden, and the same run's agreement with --format jsonl (test_jsonl.check_jsonl_agrees), which a
    case still pending must keep all the same. A pending case is an expected failure of the golden alone,
    strict: one that matches must be taken off the list."""
    source = script.read_text()
    result = run_script(source, script.name, seed=0)
    check_jsonl_agrees(source, script.name, result)
    if script.parent == SHARED_CASES and script.stem in PENDING:
        try:
            _matches_golden(script, result)
        except AssertionError:
            pytest.xfail(PENDING[script.stem])
        pytest.fail(f"{script.stem} matches its golden: take it off {PENDING_FILE.name}")
    _matches_golden(script, result)


def _matches_golden(script: Path, result) -> None:
    expected_out = normalize(script.with_suffix(".out").read_text()) if script.with_suffix(".out").exists() else ""
    err_file = script.with_suffix(".err")
    if err_file.exists():
        want = normalize(err_file.read_text().strip())
        assert result.error is not None, f"expected the script to fail with {want}"
        assert normalize(f"{result.error.kind}: {result.error.message}") == want
    else:
        assert result.error is None, result.error.render() if result.error else ""
    assert normalize(result.out) == expected_out
