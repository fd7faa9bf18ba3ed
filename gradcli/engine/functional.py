"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp and vhp, built on autograd.grad as PyTorch
builds them, with its argument checks and messages.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, forward, ops
from gradcli.engine.backward import _zeros_like, differentiate
from gradcli.engine.tensor import Size, Tensor


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
    return differentiate(tuple(new_outputs), inputs, tuple(new_grads), allow_unused=True, create_graph=create_graph,
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
    """One vector-Jacobian product per output element (vectorize gives the same values, so it takes the
    same path); forward-mode: one Jacobian-vector product per input element (_jacfwd)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more '
                             'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please '
                                      'either set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
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


def _jacfwd(func, inputs, strict, vectorize):
    """jacobian(strategy="forward-mode", vectorize=True): the function on dual inputs whose tangents are
    the standard basis. PyTorch runs it once under vmap over the basis; here it runs once per basis
    vector and the tangents are stacked, then split per input, permuted and reshaped as PyTorch does
    (a result that requires grad ends in the same node: ReshapeAliasBackward0, ViewBackward0)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                           'are not supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    numels = [inp._a.size for inp in inputs]
    total = sum(numels)
    columns = is_outputs_tuple = primals = None
    for j in range(total):
        with forward.dual_level():
            duals, start = [], 0
            for inp, n in zip(inputs, numels):
                basis = np.zeros(n, dtype=inp._a.dtype)
                if start <= j < start + n:
                    basis[j - start] = 1
                duals.append(forward.make_dual(inp, Tensor(basis.reshape(inp._a.shape))))
                start += n
            is_outputs_tuple, outputs = _as_tuple(func(*duals), "outputs", "None")
            unpacked = [forward.unpack_dual(out) for out in outputs]
        primals = [u.primal for u in unpacked]
        if columns is None:
            columns = [[] for _ in unpacked]
        for col, (primal, tangent) in zip(columns, unpacked):
            col.append(tangent if tangent is not None else _zeros_like(primal))
    result = []
    for col, out in zip(columns, primals):
        jac = ops.stack(col) if col else Tensor(np.zeros((0,) + out._a.shape, dtype=out._a.dtype))
        per_input = []
        for piece, inp in zip(ops.split_with_sizes(jac, numels, 0), inputs):
            moved = ops.permute(piece, tuple(range(1, piece._a.ndim)) + (0,))
            per_input.append(ops.reshape(moved, tuple(out._a.shape) + tuple(inp._a.shape)))
        result.append(per_input)
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
