"""The bottom toolbar's text: the session's tensors that take part in autograd, with their shapes."""

from __future__ import annotations

from gradcli.engine.tensor import Tensor

HINT = "%help lists the commands"


def live_tensors(namespace: dict) -> list:
    """(name, tensor) for the session's named tensors that require grad or hold a .grad, by name."""
    found = []
    for name, value in namespace.items():
        if value.__class__ is Tensor and not name.startswith("_"):
            if value.requires_grad or value.grad is not None:
                found.append((name, value))
    return sorted(found, key=lambda item: item[0])


def summary(namespace: dict, limit: int = 12) -> str:
    """One line, e.g. `x [2, 2] leaf, grad [2, 2] │ out [] MeanBackward0`."""
    items = live_tensors(namespace)
    if not items:
        return f" no tensors require grad yet · {HINT}"
    parts = []
    for name, t in items[:limit]:
        shape = list(t.shape)
        if t.grad_fn is not None:
            state = t.grad_fn.op.node
        else:
            state = "leaf"
        if t.grad is not None:
            state += ", grad" if list(t.grad.shape) == shape else f", grad {list(t.grad.shape)}"
        parts.append(f"{name} {shape} {state}")
    more = f" │ +{len(items) - limit} more" if len(items) > limit else ""
    return " " + " │ ".join(parts) + more
