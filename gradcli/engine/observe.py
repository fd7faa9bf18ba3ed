"""The observer protocol: the named callbacks through which a tool (gradcli.diagnostics) watches a run.

One tool watches at a time, from `STATE.observer` (gradcli.engine.state); a plain run leaves it None
and each place that would call it pays one attribute read and a None test. The engine calls the
observer with what a tool needs, so no tool reads another function's locals or
patches a class: an `Observer` subclass overrides the callbacks it cares about, the rest do nothing.
Facts a tool needs after the fact travel with what it receives instead: engine errors carry the node,
tensor or output they are about (autograd._error), the non-leaf `.grad` warning its tensor
(Session.warn's `subject`).
"""

from __future__ import annotations


class Observer:
    """What the engine tells a watching tool, in the order a run meets it."""

    __slots__ = ()

    def op(self, op, result, inputs) -> None:
        """recording made `result` for the op row `op` from `inputs`, before attaching its node."""

    def gradients_made(self, outputs: tuple, grads) -> None:
        """backward() or autograd.grad() checked the given gradients and made the implicit ones
        (`grads`, or None when they are batched): a sweep is about to start, the script's or one
        torch.autograd.functional makes for it."""

    def script_backward(self, outputs: tuple, inputs, retain_graph: bool, create_graph: bool):
        """The script called backward() (not torch.autograd.functional or gradcheck on its behalf);
        may return a function to call once its sweep succeeded."""
        return None

    def script_grad(self, outputs: tuple, inputs: tuple, retain_graph: bool, create_graph: bool, result) -> None:
        """The script's autograd.grad() call returned `result` (one gradient or None per input)."""

    def sweep_start(self, roots: list, retain_graph: bool, create_graph: bool, targets) -> None:
        """A backward sweep starts from the nodes `roots` (towards the nodes `targets`, or all leaves)."""

    def node(self, node, grad, grads_in) -> None:
        """The sweep ran `node` on its incoming gradient `grad`; `grads_in` are the gradients it passes
        on, one per input (None for an AccumulateGrad). The engine hands `grad` over unchanged; it is
        None for a node with several outputs (a custom Function's), which received one per output."""

    def sweep_end(self) -> None:
        """The sweep that started last (and is still open) ended, or failed."""

    def detached(self, tensor, kind: str) -> None:
        """`tensor` was made by .detach() (`kind` "detach") or .data ("data"): cut off the graph."""
