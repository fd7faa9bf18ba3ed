"""The engine's one-line cases (tests/engine_cases/*.txt, plus the generated 0-d probe of every unary,
binary and reduction op) against what PyTorch printed or raised for each, stored by tools/engine_cases.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, check_each, in_groups, run_script

CASES = ROOT / "tests" / "engine_cases"
EXPECTED = json.loads((CASES / "expected.json").read_text())
PRELUDE = "import torch\nimport torch.nn.functional as F\n"


def _result(case: str) -> str:
    """What gradcli gives for a case, in the form tools/engine_cases.py stores PyTorch's."""
    result = run_script(PRELUDE + case.replace("; ", "\n") + "\n", "<case>", seed=0)
    if result.error is not None:
        return result.out + f"!! {result.error.kind}: {result.error.message.strip()}"
    return result.out


def _listed() -> list[str]:
    cases = []
    for path in sorted(CASES.glob("*.txt")):
        cases += [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return list(dict.fromkeys(cases))


def test_every_listed_case_has_an_expected_result():
    missing = [c for c in _listed() if c not in EXPECTED]
    assert not missing, f"run tools/engine_cases.py: {len(missing)} cases have no expected result, e.g. {missing[0]}"


def test_no_case_stops_at_a_name_the_prelude_lacks():
    """A case whose expected result is a NameError (`nn.Linear` where the prelude imports only torch and F)
    compares nothing of the op it was written for."""
    unnamed = [c for c, v in EXPECTED.items() if v.startswith("!! NameError")]
    assert not unnamed, f"{len(unnamed)} cases fail on a name before reaching their op, e.g. {unnamed[0]}"


def _check(case: str) -> None:
    assert _result(case) == EXPECTED[case]


def _id(case: str) -> str:
    return case[:40]


@pytest.mark.parametrize("cases", in_groups(sorted(EXPECTED), _id))
def test_cases(cases):
    check_each(cases, _check, _id)
