"""The autograd API: backward / autograd.grad (entry points into the sweep), tensor hooks,
torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp), gradcheck and gradgradcheck.

The argument handling follows torch/autograd/__init__.py and the C++ `run_backward` step by step,
so the same mistake fails with the same message at the same moment.
"""

from __future__ import annotations

import sys

import numpy as np

from gradcli.engine import autograd, backmath, dtypes, ops, rng
from gradcli.engine.tensor import Size, Tensor

# --------------------------------------------------------------------------------- backward and grad

# What watches the script's backward() and autograd.grad() calls (a session's event sink, see
# gradcli.diagnostics.jsonl), or None. The calls this module makes itself (jacobian, vjp, gradcheck...) are not
# the script's: a caller in this module is not reported.
observer = None


def _outputs_tuple(tensors) -> tuple:
    """`tensors` / `outputs`: one tensor, or any iterable of them."""
    return (tensors,) if tensors.__class__ is Tensor else tuple(tensors)


def _grads_tuple(grads, length: int) -> tuple:
    if grads is None:
        return (None,) * length
    return (grads,) if grads.__class__ is Tensor else tuple(grads)


def _make_grads(outputs: tuple, grads: tuple, batched: bool) -> list:
    """torch.autograd._make_grads: check given gradients' shapes, make the implicit ones for scalars."""
    new = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if out.__class__ is not Tensor:
            raise AssertionError("Expected output to be a torch.Tensor")
        if g.__class__ is Tensor:
            shape = g._a.shape[1:] if batched else g._a.shape
            if shape != out._a.shape:
                if batched:
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
                        "as the batch dimension. The sizes of the remaining dimensions are expected to "
                        f"match the shape of corresponding output, but a mismatch was detected: "
                        f"grad_output[{i}] has a shape of {Size(shape)!r} and output[{i}] has a shape of "
                        f"{Size(out._a.shape)!r}. If you only want some tensors in `grad_output` to be "
                        "considered batched, consider using vmap.")
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(shape)!r} "
                                   f"and output[{i}] has a shape of {Size(out._a.shape)!r}.")
            new.append(g)
        elif g is None:
            if out.requires_grad:
                if out._a.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._a.dtype.kind != "f":
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype}")
                new.append(Tensor(np.ones(out._a.shape, dtype=out._a.dtype)))
            else:
                new.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return new


class _Unreachable:
    """The node of a differentiated tensor that no graph can reach (PyTorch's Identity stand-in)."""

    __slots__ = ()


def _engine(outputs: tuple, grads: list, retain_graph: bool, create_graph: bool, inputs, accumulate: bool):
    """The C++ run_backward: check roots and inputs, then sweep. Returns the captured gradients of
    `inputs` (autograd.grad) or None (backward)."""
    if len(outputs) != len(grads):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    roots = []
    for i, out in enumerate(outputs):
        node = autograd.edge(out)
        if node is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
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
    F = backmath.TENSOR if create_graph else backmath.NUMPY
    start = []
    for out, g in zip(outputs, grads):
        if create_graph:
            if g._a.dtype != out._a.dtype:
                g = ops.to_dtype(g, dtypes.of_array(out._a))
            start.append(g)
        else:
            start.append(g._a if g._a.dtype == out._a.dtype else g._a.astype(out._a.dtype))
    with autograd.set_grad_enabled(create_graph):
        captured = autograd.run_backward(roots, start, retain_graph, F, targets, capture=not accumulate)
    if accumulate:
        return None
    result = []
    for t, node in zip(inputs, targets):
        g = captured.get(node)
        if g is None:
            result.append(None)
        elif create_graph:
            result.append(g)
        else:
            result.append(Tensor(np.array(np.broadcast_to(g, t._a.shape), dtype=t._a.dtype)))
    return result


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
    grads = _make_grads(outputs, _grads_tuple(grad_tensors, len(outputs)), False)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    done = None
    if observer is not None and sys._getframe(1).f_globals is not globals():
        done = observer.backward_call(outputs, inputs_tuple, retain, bool(create_graph))
    _engine(outputs, grads, retain, bool(create_graph), inputs_tuple, accumulate=True)
    if done is not None:
        done()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: the gradients of `outputs` with respect to `inputs`, as a tuple; `.grad`
    fields are left untouched (except those of tensors that retain their gradient)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _outputs_tuple(outputs)
    inputs_tuple = (inputs,) if inputs.__class__ is Tensor else tuple(inputs)
    if not inputs_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _make_grads(outputs, _grads_tuple(grad_outputs, len(outputs)), bool(is_grads_batched))
    retain = create_graph if retain_graph is None else bool(retain_graph)
    create_graph = bool(create_graph)
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
    if observer is not None and sys._getframe(1).f_globals is not globals():
        observer.grad_call(outputs, inputs_tuple, retain, create_graph, result)
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
        z.requires_grad = True
    return z


# ---------------------------------------------------------------------------------------------- hooks

def _legacy_type(a) -> str:
    return dtypes.of_array(a).legacy


class _TensorHook:
    """A script's `fn(grad)` as the engine calls it: on the gradient in F's representation, with
    PyTorch's checks on a replacement (same dtype, then same size)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def _name(self) -> str:
        fn = self.fn
        name = getattr(fn, "__name__", None)
        return name if isinstance(name, str) else getattr(fn, "name", "<unknown>")

    def __call__(self, g, F):
        if F.tensors:
            arg = g
        else:
            # the hook may change the gradient in place: hand it a writable array of its own
            arg = Tensor(g if g.__class__ is np.ndarray and g.flags.writeable else np.array(g))
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


def register_hook(t: Tensor, fn):
    """Tensor.register_hook: `fn(grad)` runs when the gradient of `t` is computed and may return a
    replacement. Non-leaf hooks live on t's node, leaf hooks on its AccumulateGrad."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = t.grad_fn if t.grad_fn is not None else autograd.pinned_accumulator(t)
    return autograd.add_hook(node, _TensorHook(fn))


# ------------------------------------------------------------------------------ autograd.functional

def _as_tuple(inp, arg_name: str, fn_name: str):
    """(was it a tuple, the tuple): a tensor or a tuple of tensors, with PyTorch's TypeError."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if el.__class__ is not Tensor:
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                            f"but the {where} has type {_py_type(el)}.")
    return is_tuple, items


def _py_type(x) -> str:
    cls = type(x)
    if cls is Tensor:
        return "<class 'torch.Tensor'>"
    return f"<class '{cls.__name__}'>"


def _package(outputs, result, create_graph, outputs_tuple, result_tuple):
    """The (outputs, result) pair vjp, jvp, vhp and hvp return: detached unless create_graph, and
    unpacked from 1-tuples where the caller passed single tensors."""
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, outputs_tuple), _tuple_postprocess(result, result_tuple)


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool) -> tuple:
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(ops.shape.view_as(inp, inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph: bool):
    if inputs[0].__class__ is Tensor:
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v._a.shape != el_other._a.shape:
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {Size(el_other._a.shape)!r} but got "
                               f"{Size(el_v._a.shape)!r}.")


_STRICT_MESSAGES = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of "
                "the input. This is not allowed in strict mode. You should ensure that your function is "
                "thrice differentiable and that the hessian depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with "
                 "respect to input {i} is independent of the input. This is not allowed in strict mode. You "
                 "should ensure that your function is twice differentiable and that the jacobian depends on "
                 "the inputs (this would be violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be "
                "computed in a differentiable manner from the input when running in strict mode."),
}


def _check_requires_grad(inputs, input_type: str, strict: bool):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This "
                               "is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grads = [], []
    for out, g in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grads.append(g)
    if not new_outputs:
        return (None,) * len(inputs)
    return grad(tuple(new_outputs), inputs, tuple(new_grads), allow_unused=True, create_graph=create_graph,
                retain_graph=retain_graph)


_FILL_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs "
                  "when using the double backward trick to compute forward mode gradients. This is not "
                  "allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not "
                   "allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
                         "double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MESSAGES[stage].format(i=i))
            g = _zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            which = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {which} of the user-provided function is independent of input {i}. This "
                               "is not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with autograd.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph, True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph, False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0]._a.size != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
    with autograd.set_grad_enabled(True if create_graph else autograd.is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return _package(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Forward-mode products by the double-backward trick, as torch.autograd.functional.jvp does."""
    with autograd.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph, True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph, False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0]._a.size != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        grad_outputs = tuple(_zeros_like(out, True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with autograd.set_grad_enabled(True if create_graph else autograd.is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return _package(outputs, result, create_graph, is_outputs_tuple, is_outputs_tuple)


def _stack_view(pieces, shape, create_graph: bool) -> Tensor:
    """torch.stack(pieces).view(shape), recorded only when the result must be differentiable."""
    if not pieces:
        raise RuntimeError("stack expects a non-empty TensorList")
    if create_graph:
        return ops.shape.view(ops.shape.stack(pieces), tuple(shape))
    return Tensor(np.stack([p._a for p in pieces]).reshape(shape))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """One vector-Jacobian product per output element (vectorize and forward-mode give the same
    values, so they take the same path)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more '
                             'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please '
                                      'either set `create_graph=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
    with autograd.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph, True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                               "not supported together. Please either set `strict=False` or "
                               "`vectorize=False`.")
        result = []
        for i, out in enumerate(outputs):
            columns = tuple([] for _ in inputs)
            n = out._a.size
            for j in range(n):
                onehot = np.zeros(n, dtype=out._a.dtype)
                onehot[j] = 1
                vj = _autograd_grad((out,), inputs, (Tensor(onehot.reshape(out._a.shape)),),
                                    create_graph=create_graph, retain_graph=True)
                for el_idx, (col, vj_el, inp) in enumerate(zip(columns, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(f"The jacobian of the user-provided function is independent of "
                                               f"input {i}. This is not allowed in strict mode when "
                                               "create_graph=True.")
                        col.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                               f"input {el_idx}. This is not allowed in strict mode.")
                        col.append(_zeros_like(inp))
            result.append(tuple(_stack_view(col, out._a.shape + inputs[k]._a.shape, create_graph)
                                for k, col in enumerate(columns)))
        result = _grad_postprocess(tuple(result), create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or out.__class__ is not Tensor:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out._a.size != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        return ops.squeeze(out)

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _single_output(outputs, is_outputs_tuple, name: str):
    if is_outputs_tuple or outputs[0].__class__ is not Tensor:
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0]._a.size != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single "
                           "element")


def _hessian_setup(func, inputs, v, create_graph, strict, name):
    with autograd.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _grad_preprocess(inputs, create_graph, True)
        if v is not None:
            _, v = _as_tuple(v, "v", name)
            v = _grad_preprocess(v, create_graph, False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0]._a.size != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
        _check_requires_grad(outputs, "outputs", strict)
        _single_output(outputs, is_outputs_tuple, name)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _hessian_setup(func, inputs, v, create_graph,
                                                                                strict, "vhp")
    with autograd.set_grad_enabled(True if create_graph else autograd.is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return _package(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _hessian_setup(func, inputs, v, create_graph,
                                                                                strict, "hvp")
    with autograd.enable_grad():
        grad_jac = tuple(_zeros_like(inp, True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with autograd.set_grad_enabled(True if create_graph else autograd.is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return _package(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)


# ------------------------------------------------------------------------------------------ gradcheck

class GradcheckError(RuntimeError):
    """torch.autograd.gradcheck.GradcheckError."""


# Python prints an exception raised from a module other than builtins with its module path, and so
# does gradcli's error report, which names exceptions by __name__.
GradcheckError.__name__ = GradcheckError.__qualname__ = "torch.autograd.gradcheck.GradcheckError"


def _tuple_of(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable(outputs) -> tuple:
    return tuple(o for o in _tuple_of(outputs) if o.requires_grad)


def _diff_inputs(inputs) -> list:
    return [t for t in inputs if t.__class__ is Tensor and t.requires_grad]


def _check_inputs(inputs):
    found = False
    for idx, inp in enumerate(inputs):
        if inp.__class__ is Tensor and inp.requires_grad:
            a = inp._a
            if not all(st > 0 or sz <= 1 for st, sz in zip(a.strides, a.shape)):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                                   "inputs that are non-overlapping to be able to compute the numerical "
                                   "gradients correctly. You should call .contiguous on the input before "
                                   "passing it to gradcheck.")
            found = True
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them "
                         "have requires_grad=True.")


def _numerical_jacobian(func, inputs, outputs, eps) -> list:
    """jac[k][i]: d output i / d input k (the k-th input requiring grad), as an (input numel, output
    numel) array in the output's dtype, by central differences perturbing one element at a time."""
    float_outputs = [o for o in outputs if o._a.dtype.kind == "f"]
    result = []
    for x in _diff_inputs(inputs):
        a = x._a
        jacs = [np.zeros((a.size, o._a.size), dtype=o._a.dtype) for o in float_outputs]
        for d_idx, idx in enumerate(np.ndindex(a.shape)):
            orig = a[idx].copy()
            a[idx] = orig - eps
            out_a = [o._a.copy() for o in _tuple_of(func(*inputs))]
            a[idx] = orig + eps
            out_b = [o._a.copy() for o in _tuple_of(func(*inputs))]
            a[idx] = orig
            cols = [((ob - oa) / (2 * eps)).reshape(-1) for oa, ob in zip(out_a, out_b)]
            for jac, col in zip(jacs, cols):
                jac[d_idx] = col
        result.append(jacs)
    return result


def _analytical_jacobian(inputs, output) -> list:
    """One (input numel, output numel) array per input requiring grad: a vector-Jacobian product per
    output element (computed twice, as PyTorch does to check that backward is reentrant)."""
    diff = _diff_inputs(inputs)
    n = output._a.size
    runs = []
    for _ in range(2):
        jacs = [np.zeros((t._a.size, n), dtype=t._a.dtype) for t in diff]
        for j in range(n):
            onehot = np.zeros(n, dtype=output._a.dtype)
            onehot[j] = 1
            grads = grad(output, diff, Tensor(onehot.reshape(output._a.shape)), retain_graph=True,
                         allow_unused=True)
            for jac, g, t in zip(jacs, grads, diff):
                if g is not None:
                    if g._a.shape != t._a.shape:
                        raise GradcheckError("Analytical gradient has incorrect size")
                    jac[:, j] = g._a.reshape(-1)
        runs.append(jacs)
    return runs[0]


def _allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    dt = np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dt), b.astype(dt)
    with np.errstate(all="ignore"):
        allowed = atol + np.abs(rtol * b)
        actual = np.abs(a - b)
        close = (a == b) | (np.isfinite(actual) & (actual <= allowed))
    return bool(close.all())


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol):
    if not outputs:
        for jacs in _numerical_jacobian(func, inputs, _tuple_of(func_out), eps):
            for jac in jacs:
                if np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    numerical_by_input = _numerical_jacobian(func, inputs, _tuple_of(func_out), eps)
    numerical = [list(col) for col in zip(*numerical_by_input)]
    numerical = [nj for o, nj in zip(_tuple_of(func_out), numerical) if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                                     f"numerical:{Tensor(n)!r}\nanalytical:{Tensor(a)!r}\n")


def _backward_mul_by_grad_output(outputs, inputs):
    diff = _diff_inputs(inputs)
    grads = grad(outputs, diff, [Tensor(np.zeros_like(o._a)) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        if np.count_nonzero(gi._a):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi._a.dtype != di._a.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi._a.shape != di._a.shape:
            raise GradcheckError("grad is incorrect size")


def _undefined_backward(func, outputs, inputs):
    """PyTorch re-runs the function to feed undefined gradients through its graph: here such a
    pass cannot produce anything but undefined gradients, so only the calls are made."""
    first = _differentiable(func(*inputs))
    if len(first) > 1:
        for _ in range(len(outputs)):
            _differentiable(func(*inputs))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """torch.autograd.gradcheck in its slow (full Jacobian) mode: True, or GradcheckError."""
    try:
        inputs = _tuple_of(inputs)
        _check_inputs(inputs)
        func_out = func(*inputs)
        outputs = _differentiable(func_out)
        if check_backward_ad:
            _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol)
            _backward_mul_by_grad_output(outputs, inputs)
            if check_undefined_grad:
                _undefined_backward(func, outputs, inputs)
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the function's gradient (taken with create_graph=True) with respect to both the
    inputs and the grad_outputs; missing grad_outputs are uniform in [-1, 1) from the global stream,
    as torch.testing.make_tensor draws them."""
    inputs = _tuple_of(inputs)
    if grad_outputs is None:
        outputs = _differentiable(func(*inputs))
        grad_outs = []
        for x in outputs:
            dt = x._a.dtype if x._a.dtype.kind == "f" else np.dtype(np.float64)
            g = Tensor(rng.default_generator.uniform(x._a.shape, dt, -1.0, 1.0))
            g.requires_grad = True
            grad_outs.append(g)
        grad_outs = tuple(grad_outs)
    else:
        grad_outs = _tuple_of(grad_outputs)
    num_outputs = len(grad_outs)
    diff_in = {i for i, x in enumerate(inputs) if x.__class__ is Tensor and x.requires_grad}
    diff_out = {i for i, x in enumerate(grad_outs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_in else x for i, x in enumerate(args[:-num_outputs]))
        outs = _differentiable(func(*input_args))
        g_outs = tuple(x.requires_grad_() if i in diff_out else x for i, x in enumerate(args[-num_outputs:]))
        diff_args = tuple(x for i, x in enumerate(input_args) if i in diff_in)
        grads = grad(outs, diff_args, g_outs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_undefined_grad=check_undefined_grad)
