"""Module backward hooks: `register_full_backward_hook`, `register_full_backward_pre_hook` and the deprecated
`register_backward_hook`, as PyTorch 2.13 runs them.

A full hook needs the gradients with respect to the module's inputs and outputs together. PyTorch gets them
by passing the tensor inputs, and then the outputs, through an identity autograd Function
(`BackwardHookFunction`, whose nodes print as `BackwardHookFunctionBackward`): the output node's hook
records the output gradients (the pre-hooks may replace them), the input node's hook hands both to the
user's hooks, which may replace the input gradients. When no input requires grad, the hooks are called from
the output node with `None` for every input gradient (and PyTorch's warning). A non-full hook is a plain
hook on the grad_fn of the module's first output tensor, with PyTorch's deprecation warnings for the cases
where it misses gradients. The order, the tuples of None for non-tensor arguments and the errors are
PyTorch's (torch/utils/hooks.py BackwardHook, Module._call_impl).
"""

from __future__ import annotations

from gradcli.engine import autograd, custom
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_BOTH = "Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only one of them."


def choose_kind(d: dict, full: bool) -> None:
    """A module takes full or non-full backward hooks, never both (for its whole life, as PyTorch's)."""
    if d.get("_is_full_backward_hook") is (not full):
        raise RuntimeError(_BOTH)
    d["_is_full_backward_hook"] = full


def hook_lists(d: dict) -> tuple:
    """(full hooks, non-full hooks, backward pre-hooks) of a module, in registration order."""
    hooks = list(d.get("_backward_hooks", {}).values())
    pre = list(d.get("_backward_pre_hooks", {}).values())
    full = d.get("_is_full_backward_hook")
    return (hooks if full is True else [], hooks if full is False else [], pre)


def _warn(message: str, category: str = "UserWarning") -> None:
    if STATE.warn is not None:
        STATE.warn(category, message)


def _identity_forward(ctx, *args):
    ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
    return args


def _identity_backward(ctx, *grads):
    return grads


def _node_of(t: Tensor):
    fn = t.grad_fn
    return fn.parent if fn.__class__ is autograd.OutputSlot else fn


class BackwardHook:
    """One call's hooks: made before the forward runs, when the module has full hooks or pre-hooks."""

    def __init__(self, module, user_hooks: list, user_pre_hooks: list):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size: int) -> tuple:
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    def _set_user_hook(self, node) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:       # the gradient reached the inputs without passing the outputs
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return tuple(res[idx] for idx in self.input_tensors_index)
        node.register_hook(hook)

    def _apply_on_tensors(self, fn, args: tuple):
        index = [i for i, a in enumerate(args) if a.__class__ is Tensor]
        tensors = [args[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and autograd.is_grad_enabled()):
            return args, None
        new = custom.apply("BackwardHookFunction", _identity_forward, None, _identity_backward, tuple(tensors), {})
        if new.__class__ is not tuple:
            new = (new,)
        nodes = [_node_of(t) for t in new if t.grad_fn is not None]
        fn(nodes[0])
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args: tuple) -> tuple:
        res, index = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = index
        return res

    def setup_output_hook(self, result):
        if not (result.__class__ is Tensor or isinstance(result, tuple)):
            _warn("For backward hooks to be called, module output should be a Tensor or a tuple of Tensors but "
                  f"received {_class_text(result)}")

        def fn(node) -> None:
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
                if self.user_pre_hooks:
                    expected = len(self.grad_outputs)
                    for pre_hook in self.user_pre_hooks:
                        replaced = pre_hook(self.module, self.grad_outputs)
                        if replaced is None:
                            continue
                        if len(replaced) != expected:
                            raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                               f"got {len(replaced)}, but expected {expected}")
                        self.grad_outputs = replaced
                local = self.grad_outputs
                if self.input_tensors_index is None:       # no input requires grad: the hooks run here
                    _warn("Full backward hook is firing when gradients are computed with respect to module "
                          "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                          "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                          "details.")
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                            raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                               "always return None or None for all gradients.")
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in self.output_tensors_index)
                return None
            node.register_hook(hook)

        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, index = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = index
        return res if is_tuple else res[0]


def _class_text(value) -> str:
    return repr(type(value))


def attach_non_full(module, hooks: list, args: tuple, result) -> None:
    """register_backward_hook's hooks: on the grad_fn of the first tensor of the output, each called as
    hook(module, grad_input, grad_output) with that node's gradients, with PyTorch's warnings."""
    var = result
    while var.__class__ is not Tensor:
        if isinstance(var, dict):
            var = next(v for v in var.values() if v.__class__ is Tensor)
        else:
            var = var[0]
    node = var.grad_fn
    if node is None:
        return
    node = _node_of(var)
    for hook in hooks:
        node.register_hook(lambda grad_input, grad_output, hook=hook: hook(module, grad_input, grad_output))
    _maybe_warn(args, result, node)


def _tensors(value, kind: str, missing: str):
    """`value` as a tuple of tensors, or None after PyTorch's warning that the hook will miss some gradients."""
    if value.__class__ is Tensor:
        return (value,)
    if isinstance(value, tuple) and all(v.__class__ is Tensor for v in value):
        return value
    _warn(f"Using non-full backward hooks on a Module that does not {kind} a single Tensor or a tuple of Tensors "
          f"is deprecated and will be removed in future versions. This hook will be missing some of the {missing}. "
          "Please use register_full_backward_hook to get the documented behavior.", "FutureWarning")
    return None


def _maybe_warn(inputs, result, node) -> None:
    result = _tensors(result, "return", "grad_output")
    if result is None:
        return
    inputs = _tensors(inputs, "take as input", "grad_input")
    if inputs is None:
        return
    out_nodes = {id(_node_of(r)): _node_of(r) for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and id(node) not in out_nodes):
        _warn("Using a non-full backward hook when outputs are nested in python data structure is deprecated and "
              "will be removed in future versions. This hook will be missing some grad_output.", "FutureWarning")
    elif len(out_nodes) > 1:
        _warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is deprecated "
              "and will be removed in future versions. This hook will be missing some grad_output. Please use "
              "register_full_backward_hook to get the documented behavior.", "FutureWarning")
    else:
        input_nodes = {id(_node_of(i)) for i in inputs if i.grad_fn is not None}
        next_nodes = {id(n[0]) for n in node.next_functions}
        if input_nodes != next_nodes:
            _warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
                  "and will be removed in future versions. This hook will be missing some grad_input. Please use "
                  "register_full_backward_hook to get the documented behavior.", "FutureWarning")
