"""The engine's one state object (gradcli/engine/state.py): every mode, option and stream a script can
change is in it, a session resets it, and `isolated()` puts all of it back."""

import numpy as np

from gradcli.engine import addresses, autograd, budget
from gradcli.engine.state import STATE, EngineState
from gradcli.session import Session

# A script that changes everything a script can change and leaves it changed.
CHANGES_EVERYTHING = """\
import torch
torch.set_grad_enabled(False)
torch.autograd.set_detect_anomaly(True, check_nan=False)
torch.set_printoptions(precision=2, linewidth=40, sci_mode=True)
torch.manual_seed(123)
torch.rand(3)
with torch.inference_mode():
    t = torch.ones(1)
"""


def _observable():
    """What scripts and tools can see of the state, as plain values."""
    options = STATE.print_options
    return (STATE.recording, STATE.inference, STATE.grad_in_inference, STATE.anomaly, STATE.anomaly_nan,
            STATE.observer, (options.precision, options.linewidth, options.sci_mode, options.display),
            STATE.generator.get_state().tobytes(), STATE.addresses, STATE.call_depth, STATE.max_memory,
            STATE.max_items, tuple(sorted(np.geterr().items())))


def test_isolated_puts_back_what_a_script_changed():
    session = Session(seed=7)
    before = _observable()
    with STATE.isolated():
        Session(seed=1, stable_ids=True, display="legacy").run_source(CHANGES_EVERYTHING)
        budget.set_max_memory(1 << 20)
        np.seterr(all="raise")
        STATE.observer = object()
        assert _observable() != before
    assert _observable() == before
    session.run_source("import torch\nx = torch.ones(1, requires_grad=True)\nassert (x * 2).requires_grad\n")


def test_isolated_starts_script_functions_at_depth_zero():
    STATE.call_depth = 5
    try:
        with STATE.isolated():
            assert STATE.call_depth == 0
        assert STATE.call_depth == 5
    finally:
        STATE.call_depth = 0


def test_a_session_resets_the_modes_a_previous_script_left():
    Session(seed=1).run_source(CHANGES_EVERYTHING)
    assert STATE.inference_seen and STATE.anomaly and not autograd.is_grad_enabled()
    Session(seed=1)
    assert (STATE.recording, STATE.inference, STATE.anomaly, STATE.anomaly_nan) == (True, False, False, True)
    assert (STATE.print_options.precision, STATE.print_options.sci_mode) == (4, None)


def test_the_session_owns_the_process_state_and_the_engine_reads_it():
    session = Session(stable_ids=True)
    assert session.state is STATE
    assert addresses.address(object()) == "0x7f0000000010"
    Session()
    assert STATE.addresses is None


def test_every_slot_is_in_the_snapshot():
    """A slot added to EngineState without a place in snapshot/restore would leak between replays."""
    fresh = EngineState()
    fresh.generator = STATE.generator
    snap = fresh.snapshot()
    assert len(snap) == len(EngineState.__slots__) + 1           # + numpy's error handling


def test_a_command_run_in_process_puts_the_memory_budget_back(capsys):
    """cli.main called in a process (a test, a program embedding gradcli) leaves the tensor budget as it
    found it: --max-memory is the command's own (it leaked into later tests once, failing them)."""
    from gradcli import cli
    before = budget.max_memory()
    assert cli.main(["--max-memory", "1M", "-c", "x = 1"]) == 0
    assert budget.max_memory() == before
    capsys.readouterr()
