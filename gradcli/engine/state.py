"""The engine's dynamic state in one object (interim: the observer slots, until the lead's EngineState lands)."""

from __future__ import annotations


class EngineState:
    __slots__ = ("observer", "replay")

    def __init__(self):
        self.observer = None        # the tool watching the run (gradcli.engine.observe.Observer), or None
        self.replay = None          # a float64 replay's switches (gradcli.diagnostics.replay), or None


STATE = EngineState()
