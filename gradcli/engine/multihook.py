"""torch.autograd.graph.register_multi_grad_hook: one hook over the gradients of several tensors.

As PyTorch builds it, from one tensor hook per tensor. In mode "all" the hooks count, per backward pass,
the gradients that arrive; at the first they ask the engine how many of the tensors' nodes this pass
runs (autograd.will_execute), and the hook that completes that count calls `fn` with the gradients in
the tensors' order, None for those that got none. In mode "any" the first gradient of a pass is handed
to `fn`, alone. `fn`'s result is ignored in both: it cannot replace a gradient. The number of calls to
wait for is one figure shared by every pass, as in PyTorch (a pass started inside `fn` sets it anew).
"""

from __future__ import annotations

from gradcli.engine import autograd, backward, signatures
from gradcli.engine.tensor import Tensor

MODES = ("all", "any")


def _node(t):
    """The node whose gradient is t's: its grad_fn, or for a leaf its AccumulateGrad."""
    if _requires_grad(t) and t.grad_fn is None:
        return autograd.pinned_accumulator(t)
    if t.grad_fn is None:
        raise AssertionError("Expected gradient function to be set")
    return t.grad_fn


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    if mode not in MODES:
        raise ValueError(f"Expects mode to be one of {MODES} but got {mode}")
    if mode == "all":
        nodes = [_node(t) for t in tensors]
        size = len(tensors)
        counts, buffers = {}, {}
        calls = [None]

        def waiting_for(i):
            def hook(grad):
                task = autograd.TASKS[-1][0]
                counts.setdefault(task, 0)
                buffer = buffers.setdefault(task, [None] * size)
                seen = counts[task]
                counts[task] = seen + 1
                if seen == 0:
                    calls[0] = sum(map(autograd.will_execute, nodes))
                buffer[i] = grad
                if seen == calls[0] - 1:
                    fn(buffer)
                    del counts[task], buffers[task]
            hook.__name__ = "inner_hook"
            return hook

        return autograd.MultiHandle(tuple(backward.register_hook(t, waiting_for(i)) for i, t in enumerate(tensors)))
    ran = set()

    def first(grad):
        task = autograd.TASKS[-1][0]
        if task in ran:
            return
        ran.add(task)
        fn(grad)
    first.__name__ = getattr(fn, "__name__", "wrapped_fn")
    return autograd.MultiHandle(tuple(backward.register_hook(t, first) for t in tensors if _requires_grad(t)))


def _requires_grad(t) -> bool:
    if t.__class__ is not Tensor:
        raise AttributeError(f"'{signatures.type_name(t)}' object has no attribute 'requires_grad'")
    return t.requires_grad
