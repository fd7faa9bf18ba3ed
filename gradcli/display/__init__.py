"""Pure value-to-text display: the modern PyTorch repr of tensors, Size and return_types."""

from gradcli.display.modern import PrintOptions, return_types_repr, size_repr, tensor_repr

__all__ = ["PrintOptions", "return_types_repr", "size_repr", "tensor_repr"]
