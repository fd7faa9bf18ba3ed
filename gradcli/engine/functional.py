"""Entry points into the backward sweep: Tensor.backward / torch.autograd.backward and torch.autograd.grad."""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, backmath
from gradcli.engine.tensor import Size, Tensor


def _as_tuple(x, what: str) -> tuple:
    if x.__class__ is Tensor:
        return (x,)
    if isinstance(x, (list, tuple)):
        for t in x:
            if t.__class__ is not Tensor:
                raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, "
                                f"but got an element of type {type(t).__name__}")
        return tuple(x)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, not {type(x).__name__}")


def _root_grads(outputs: tuple, grads) -> list:
    """The gradient each output starts with: given ones checked for shape, implicit ones for scalars."""
    if grads is None:
        grads = (None,) * len(outputs)
    elif grads.__class__ is Tensor or grads is None:
        grads = (grads,)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} tensors and {len(outputs)} gradients")
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        a = out._a
        if g is None:
            if out.requires_grad and a.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.requires_grad and a.dtype.kind != "f":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                   f"{out.dtype}")
            result.append(np.ones(a.shape, dtype=a.dtype))
            continue
        if g.__class__ is not Tensor:
            raise TypeError(f"gradient must be a Tensor or None, not {type(g).__name__}")
        if g._a.shape != a.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._a.shape)!r} "
                               f"and output[{i}] has a shape of {Size(a.shape)!r}.")
        result.append(g._a.astype(a.dtype, copy=False))
    return result


def _roots(outputs: tuple) -> list:
    roots = []
    for i, out in enumerate(outputs):
        node = autograd.edge(out)
        if node is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(node)
    return roots


def _math(create_graph: bool):
    return backmath.TENSOR if create_graph else backmath.NUMPY


def _start(grads: list, create_graph: bool) -> list:
    return [Tensor(g) for g in grads] if create_graph else grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not available yet in gradcli")
    outputs = _as_tuple(tensors, "tensors")
    grads = _root_grads(outputs, grad_tensors)
    roots = _roots(outputs)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    with autograd.set_grad_enabled(bool(create_graph)):
        autograd.run_backward(roots, _start(grads, create_graph), retain, _math(create_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """torch.autograd.grad: the gradients of `outputs` with respect to `inputs`, as a tuple; `.grad`
    fields are left untouched."""
    outs = _as_tuple(outputs, "outputs")
    ins = _as_tuple(inputs, "inputs")
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _root_grads(outs, grad_outputs)
    roots = _roots(outs)
    capture = {}
    targets = []
    for t in ins:
        node = t.grad_fn if t.grad_fn is not None else autograd.grad_accumulator(t)
        capture[node] = None
        targets.append(node)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    with autograd.set_grad_enabled(bool(create_graph)):
        autograd.run_backward(roots, _start(grads, create_graph), retain, _math(create_graph),
                              capture=capture, accumulate=False)
    result = []
    for t, node in zip(ins, targets):
        g = capture[node]
        if g is None:
            if not (allow_unused or materialize_grads):
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(Tensor(np.zeros_like(t._a)) if materialize_grads else None)
        elif create_graph:
            result.append(g)
        else:
            result.append(Tensor(np.array(np.broadcast_to(g, t._a.shape), dtype=t._a.dtype, copy=True)))
    return tuple(result)
