"""The entry points into the backward sweep: Tensor.backward / torch.autograd.backward, torch.autograd.grad
(batched or not), and tensor hooks.

`backward` and `grad` are the script's calls: they tell the observer (gradcli.engine.observe) about
them. torch.autograd.functional and gradcheck differentiate through `differentiate`, which does not.

The argument handling follows torch/autograd/__init__.py and the C++ `run_backward` step by step,
so the same mistake fails with the same message at the same moment.
"""

from __future__ import annotations

import operator

import numpy as np

from gradcli.engine import autograd, backmath, dtypes, ops
from gradcli.engine.layout import writable
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Size, Tensor

# --------------------------------------------------------------------------------- backward and grad


def _outputs_tuple(tensors) -> tuple:
    """`tensors` / `outputs`: one tensor, or any iterable of them."""
    return (tensors,) if tensors.__class__ is Tensor else tuple(tensors)


def _grads_tuple(grads, length: int) -> tuple:
    if grads is None:
        return (None,) * length
    return (grads,) if grads.__class__ is Tensor else tuple(grads)


def _make_grads(outputs: tuple, grads: tuple, batched: bool, via: str) -> list:
    """torch.autograd._make_grads: check given gradients' shapes, make the implicit ones for scalars.
    `via` ("backward" or "grad") names the call, for the error's facts."""
    new = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if out.__class__ is not Tensor:
            raise AssertionError("Expected output to be a torch.Tensor")
        if g.__class__ is Tensor:
            shape = g._a.shape[1:] if batched else g._a.shape
            if shape != out._a.shape:
                if batched:     # (PyTorch's message drops the first dim of the first grad again)
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
                        "as the batch dimension. The sizes of the remaining dimensions are expected to "
                        f"match the shape of corresponding output, but a mismatch was detected: "
                        f"grad_output[{i}] has a shape of {Size(shape[1:])!r} and output[{i}] has a shape of "
                        f"{Size(out._a.shape)!r}. If you only want some tensors in `grad_output` to be "
                        "considered batched, consider using vmap.")
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(shape)!r} "
                                   f"and output[{i}] has a shape of {Size(out._a.shape)!r}.")
            new.append(g)
        elif g is None:
            if out.requires_grad:
                if out._a.size != 1:
                    raise autograd._error("grad can be implicitly created only for scalar outputs",
                                          output=out, via=via)
                if out._a.dtype.kind not in "fV":
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype}")
                a = out._a          # a 0-d one made in one call (np.ones is Python around two): loss.backward()
                if a.__class__ is not np.ndarray:       # a meta output: a meta gradient
                    new.append(Tensor(np.ones_like(a)))
                    continue
                new.append(Tensor(np.array(1, a.dtype) if not a.ndim else np.ones(a.shape, dtype=a.dtype)))
            else:
                new.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return new


class _Unreachable:
    """The node of a differentiated tensor that no graph can reach (PyTorch's Identity stand-in)."""

    __slots__ = ()


# Engine::execute's warning for backward() (not autograd.grad) under create_graph, once per process
CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)")


def _engine(outputs: tuple, grads: list, retain_graph: bool, create_graph: bool, inputs, accumulate: bool):
    """The C++ run_backward: check roots and inputs, then sweep. Returns the captured gradients of
    `inputs` (autograd.grad) or None (backward)."""
    if len(outputs) != len(grads):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    roots = []
    for i, out in enumerate(outputs):
        node = autograd.edge(out)
        if node is None:
            raise autograd._error(f"element {i} of tensors does not require grad and does not have a grad_fn",
                                  output=out, index=i)
        roots.append(node)
    targets = None
    if inputs is not None:
        targets = []
        for t in inputs:
            if t.__class__ is not Tensor:
                raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
            node = t.grad_fn if t.grad_fn is not None else autograd.existing_accumulator(t)
            if accumulate:
                t.retain_grad()
            if not t.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.append(node if node is not None else _Unreachable())
    if create_graph and accumulate:
        STATE.warn_once("backward create_graph", "UserWarning", CREATE_GRAPH_WARNING)
    F = backmath.TENSOR if create_graph else backmath.NUMPY
    start = []
    for out, g in zip(outputs, grads):
        if g is None:               # an undefined gradient (differentiate_undefined)
            start.append(None)
        elif create_graph:
            if g._a.dtype != out._a.dtype:
                g = ops.to_dtype(g, dtypes.of_array(out._a))
            start.append(g)
        else:
            start.append(g._a if g._a.dtype == out._a.dtype else g._a.astype(out._a.dtype))
    targeted, STATE.sweep_targeted = STATE.sweep_targeted, targets is not None
    try:
        with autograd.set_grad_enabled(bool(create_graph)):
            captured = autograd.run_backward(roots, start, retain_graph, F, targets, capture=not accumulate)
    finally:
        STATE.sweep_targeted = targeted
    if accumulate:
        return None
    # PyTorch's engine hands a gradient on as the same tensor through a formula that returns it unchanged
    # (AddBackward0's `self`, FracBackward0, CloneBackward0): an input whose whole gradient is a grad_outputs
    # tensor gets that tensor itself, which may require grad (`g is v`)
    given = {id(a): g for a, g in zip(start, grads) if a is not None and not create_graph and a is g._a}
    result = []
    for t, node in zip(inputs, targets):
        g = captured.get(node)
        if g is None:
            result.append(None)
        elif create_graph:
            result.append(g)
        elif id(g) in given and g.shape == t._a.shape and given[id(g)]._a is g:
            result.append(given[id(g)])
        else:
            result.append(Tensor(np.array(np.broadcast_to(g, t._a.shape), dtype=t._a.dtype)))
    return result


def differentiate_undefined(outputs, inputs) -> list:
    """The gradients `inputs` receive when every output's gradient is undefined (PyTorch's UndefinedGrad,
    which gradcheck's check_undefined_grad puts on them): None, unless a custom Function's backward makes
    one of them. The graph is kept."""
    return _engine(tuple(outputs), [None] * len(outputs), True, False, tuple(inputs), accumulate=False)


def _engine_flags(retain_graph, create_graph) -> tuple:
    """retain_graph (None: as create_graph) and create_graph as PyTorch's engine reads them, as unsigned
    bytes: None, a float or a string is its TypeError, and so is a number outside 0-255 its OverflowError."""
    return _byte(create_graph if retain_graph is None else retain_graph), _byte(create_graph)


def _byte(value) -> bool:
    if value.__class__ is bool:
        return value
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer") from None
    if n < 0:
        raise OverflowError("unsigned byte integer is less than minimum")
    if n > 255:
        raise OverflowError("unsigned byte integer is greater than maximum")
    return bool(n)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None, *,
             grad_variables=None) -> None:
    """torch.autograd.backward (and Tensor.backward): sum gradients into the leaves' `.grad`, or with
    `inputs` only into those tensors (non-leaf ones start retaining their gradient)."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                               "`backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    inputs_tuple = None
    if inputs is not None:
        inputs_tuple = (inputs,) if inputs.__class__ is Tensor else tuple(inputs)
        if not inputs_tuple:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _outputs_tuple(tensors)
    given = _grads_tuple(grad_tensors, len(outputs))
    if STATE.registry_epoch == 0 and any(g.__class__ is Tensor for g in given):
        STATE.gradient_given()          # PyTorch imports sympy for a gradient given as a tensor
    grads = _make_grads(outputs, given, False, "backward")
    retain, create_graph = _engine_flags(retain_graph, create_graph)
    done = None
    observer = STATE.observer
    if observer is not None:
        observer.gradients_made(outputs, grads)
        done = observer.script_backward(outputs, inputs_tuple, retain, create_graph)
    _engine(outputs, grads, retain, create_graph, inputs_tuple, accumulate=True)
    if done is not None:
        done()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: the gradients of `outputs` with respect to `inputs`, as a tuple; `.grad`
    fields are left untouched (except those of tensors that retain their gradient). The script's
    call: the observer hears of it."""
    return differentiate(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs, allow_unused,
                         is_grads_batched, materialize_grads, script=True)


def differentiate(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
                  allow_unused=None, is_grads_batched=False, materialize_grads=False, script=False):
    """torch.autograd.grad as gradcli's own code calls it (torch.autograd.functional, gradcheck): not
    reported to the observer as the script's call unless `script`."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _outputs_tuple(outputs)
    inputs_tuple = (inputs,) if inputs.__class__ is Tensor else tuple(inputs)
    if not inputs_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    given = _grads_tuple(grad_outputs, len(outputs))
    if script and STATE.registry_epoch == 0 and any(g.__class__ is Tensor for g in given):
        STATE.gradient_given()          # PyTorch imports sympy for a gradient given as a tensor
    grads = _make_grads(outputs, given, bool(is_grads_batched), "grad")
    observer = STATE.observer
    if observer is not None:
        observer.gradients_made(outputs, None if is_grads_batched else grads)
    retain, create_graph = _engine_flags(retain_graph, create_graph)
    if is_grads_batched:
        result = _batched_grad(outputs, grads, retain, create_graph, inputs_tuple)
    else:
        result = _engine(outputs, grads, retain, create_graph, inputs_tuple, accumulate=False)
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in "
                               "the graph. Set allow_unused=True if this is the desired behavior.")
    if materialize_grads:
        result = [g if g is not None else _zeros_like(t, create_graph) for g, t in zip(result, inputs_tuple)]
    if STATE.meta_seen:                     # a meta input's gradient, however the formulas computed it
        result = [_on_device_of(g, t) for g, t in zip(result, inputs_tuple)]
    if script and observer is not None:
        observer.script_grad(outputs, inputs_tuple, retain, create_graph, result)
    return tuple(result)


def _batched_grad(outputs, grads, retain, create_graph, inputs) -> list:
    """is_grads_batched: one vector-Jacobian product per slice of the grad_outputs' first dim."""
    sizes = set()
    for g in grads:
        if g is not None:
            if g._a.ndim == 0:
                raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that "
                                 "input is a Tensor of dimensionality 0 so expected in_dim to satisfy "
                                 "0 <= in_dim < 0.")
            sizes.add(g._a.shape[0])
    batch = sizes.pop() if sizes else 0
    rows = []
    for b in range(batch):
        slices = [None if g is None else Tensor(g._a[b]) for g in grads]
        rows.append(_engine(outputs, slices, retain or b < batch - 1, create_graph, inputs, accumulate=False))
    result = []
    for k, t in enumerate(inputs):
        column = [row[k] for row in rows]
        if not column or any(c is None for c in column):
            result.append(None)
        elif create_graph:
            result.append(ops.shape.stack(column))
        else:
            result.append(Tensor(np.stack([c._a for c in column])))
    return result


def _zeros_like(t: Tensor, requires_grad: bool = False) -> Tensor:
    z = Tensor(np.zeros_like(t._a))
    if requires_grad:
        if z._a.dtype.kind not in "fVc":      # torch.zeros_like(t, requires_grad=True) of a bool or int t
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        z.requires_grad = True
    return z


# ---------------------------------------------------------------------------------------------- hooks

def _legacy_type(a) -> str:
    """The type name a hook's dtype message uses (dtypes.message_type)."""
    return dtypes.of_array(a).message


class _TensorHook:
    """A script's `fn(grad)` as the engine calls it: on the gradient in F's representation, with
    PyTorch's checks on a replacement (same dtype, then same size)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def _name(self) -> str:
        return _hook_name(self.fn)

    def __call__(self, g, F):
        if F.tensors:
            arg = g
        else:
            # the hook may change the gradient in place: hand it a writable array of its own
            arg = Tensor(writable(g) if isinstance(g, np.ndarray) else np.array(g))
        result = self.fn(arg)
        if result is None:
            return g if F.tensors else arg._a
        if result.__class__ is not Tensor:
            raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
        before = arg._a
        if result._a.dtype != before.dtype:
            raise RuntimeError(f"hook '{self._name()}' has changed the type of value (was "
                               f"{_legacy_type(before)} got {_legacy_type(result._a)})")
        if result._a.shape != before.shape:
            raise RuntimeError(f"hook '{self._name()}' has changed the size of value")
        return result if F.tensors else result._a


def _hook_name(fn) -> str:
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else getattr(fn, "name", "<unknown>")


def _on_device_of(g, t):
    """The gradient `g` of the input `t` on t's device (meta when t is: backward formulas compute on arrays that
    may have lost it)."""
    if g is not None and t._a.__class__ is not np.ndarray and g._a.__class__ is np.ndarray:
        from gradcli.engine import meta
        g._a = meta.meta_like(g._a)
    return g


def _as_tensor(g, F):
    """A gradient as a hook receives it: a Tensor of its own (writable), or None."""
    if g is None or F.tensors:
        return g
    return Tensor(writable(g) if isinstance(g, np.ndarray) else np.array(g))


def _replacement(fn, result, before: tuple, F) -> tuple:
    """A node hook's returned tuple, checked as PyTorch checks it against what the hook received,
    in F's representation."""
    if result.__class__ is not tuple:
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(before):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got "
                           f"{len(result)}, but expected {len(before)})")
    out = []
    for value, old in zip(result, before):
        if value is None:
            out.append(None)
            continue
        if value.__class__ is not Tensor:
            raise TypeError(f"expected Variable, but hook returned '{type(value).__name__}'")
        if old is not None:
            if value._a.dtype != old._a.dtype:
                raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the type of value (was "
                                   f"{_legacy_type(old._a)} got {_legacy_type(value._a)})")
            if value._a.shape != old._a.shape:
                raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
        out.append(value if F.tensors else value._a)
    return tuple(out)


class NodePreHook:
    """A script's `fn(grad_outputs)` (Node.register_prehook): a tuple of Tensors (None where no gradient
    came) before the node runs; a returned tuple replaces them."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, grads: tuple, F) -> tuple:
        args = tuple(_as_tensor(g, F) for g in grads)
        result = self.fn(args)
        if result is None:
            return grads if F.tensors else tuple(None if a is None else a._a for a in args)
        return _replacement(self.fn, result, args, F)


class NodePostHook:
    """A script's `fn(grad_inputs, grad_outputs)` (Node.register_hook), after the node ran: what it
    computed per input (None where nothing flows) and what it received; a returned tuple replaces
    grad_inputs."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, grads_in: tuple, grads_out: tuple, F) -> tuple:
        args = tuple(_as_tensor(g, F) for g in grads_in)
        result = self.fn(args, tuple(_as_tensor(g, F) for g in grads_out))
        if result is None:
            return grads_in if F.tensors else tuple(None if a is None else a._a for a in args)
        return _replacement(self.fn, result, args, F)


class _AccumulatedHook:
    """A script's `fn(tensor)` (Tensor.register_post_accumulate_grad_hook), once `.grad` has the sum."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, t: Tensor) -> Tensor:
        result = self.fn(t)
        if result is not None and result.__class__ is not Tensor:
            raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
        return t


def register_post_accumulate_grad_hook(t: Tensor, fn):
    """Tensor.register_post_accumulate_grad_hook: `fn(t)` runs each time a backward has added into
    the leaf's `.grad`."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    return autograd.add_hook(autograd.pinned_accumulator(t), _AccumulatedHook(fn), "acc")


def increment_version(tensors) -> None:
    """torch.autograd.graph.increment_version: as if each tensor had been changed in place."""
    if tensors.__class__ is Tensor:
        tensors = (tensors,)
    elif isinstance(tensors, (str, bytes)) or not hasattr(tensors, "__iter__"):
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
    for t in tensors:
        if t.__class__ is not Tensor:
            raise RuntimeError("increment_version expects each element of the iterable to be a tensor")
        t._version[0] += 1


def register_hook(t: Tensor, fn):
    """Tensor.register_hook: `fn(grad)` runs when the gradient of `t` is computed and may return a
    replacement. Non-leaf hooks live on t's node, leaf hooks on its AccumulateGrad."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = t.grad_fn if t.grad_fn is not None else autograd.pinned_accumulator(t)
    return autograd.add_hook(node, _TensorHook(fn))
