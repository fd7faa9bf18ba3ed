"""Pure value-to-text display: the repr of tensors, Size and return_types, in the modern or the legacy (0.3) style."""

from gradcli.display import legacy, modern
from gradcli.display.modern import PrintOptions, meta_repr, return_fields_repr, return_types_repr, size_repr

DISPLAY_MODES = ("modern", "legacy")


def tensor_repr(data, dtype_name: str, *, grad_fn_name: str | None = None, requires_grad: bool = False,
                opts: PrintOptions | None = None, variable: bool | None = None, tangent: str | None = None) -> str:
    """The repr of a tensor in the style `opts.display` names (modern when no options are given).

    `variable` is for the legacy style: whether PyTorch 0.3 would have held the tensor in a Variable
    (None: when it requires grad or has a grad_fn). `tangent` is the text of a forward-mode tangent
    (modern style only: PyTorch 0.3 had no forward mode)."""
    if opts is not None and opts.display == "legacy":
        if variable is None:
            variable = requires_grad or grad_fn_name is not None
        return legacy.tensor_repr(data, dtype_name, opts=opts, variable=variable)
    return modern.tensor_repr(data, dtype_name, grad_fn_name=grad_fn_name, requires_grad=requires_grad, opts=opts,
                               tangent=tangent)


__all__ = ["DISPLAY_MODES", "PrintOptions", "meta_repr", "return_fields_repr", "return_types_repr", "size_repr", "tensor_repr"]
