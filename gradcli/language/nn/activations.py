"""The activation modules: each calls its functional op with the settings it was made with."""

from __future__ import annotations

from gradcli.engine import ops
from gradcli.engine.ops import composed, elementwise
from gradcli.language.nn.module import Module


def _inplace_text(inplace: bool, lead: str = "") -> str:
    return f"{lead}inplace=True" if inplace else ""


class _InplaceActivation(Module):
    """An activation whose only setting is `inplace` (ReLU, SiLU, Mish, SELU, ...): the subclass names
    its function in `forward`."""

    __module__ = "torch.nn.modules.activation"

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return _inplace_text(self.inplace)


class ReLU(_InplaceActivation):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return elementwise.functional_relu(input, self.inplace)


class LeakyReLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return elementwise.functional_leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_text(self.inplace, ', ')}"


class Tanh(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return input.sigmoid()


class GELU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return ops.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return elementwise.functional_silu(input, self.inplace)


class Mish(_InplaceActivation):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return elementwise.functional_mish(input, self.inplace)


class GLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return elementwise.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Hardshrink(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return elementwise.hardshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Softshrink(Hardshrink):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return elementwise.softshrink(input, self.lambd)


class PairwiseDistance(Module):
    __module__ = "torch.nn.modules.distance"

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return composed.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class SELU(_InplaceActivation):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return elementwise.selu(input, self.inplace)


class CELU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return elementwise.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return ops.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class ELU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return elementwise.functional_elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_text(self.inplace, ', ')}"


class Softmax(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return ops.functional_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return ops.functional_log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Hardtanh(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input):
        return elementwise.functional_hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_text(self.inplace, ', ')}"


class Threshold(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return elementwise.functional_threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_text(self.inplace, ', ')}"


class ReLU6(Hardtanh):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_text(self.inplace)


class LogSigmoid(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return ops.logsigmoid(input)


class Softsign(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return elementwise.functional_softsign(input)


class Tanhshrink(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return composed.tanhshrink(input)


class Softmin(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return composed.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class CosineSimilarity(Module):
    __module__ = "torch.nn.modules.distance"

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return composed.cosine_similarity(x1, x2, self.dim, self.eps)


class Hardsigmoid(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return elementwise.functional_hardsigmoid(input, self.inplace)


class Hardswish(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return elementwise.functional_hardswish(input, self.inplace)


class RReLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return ops.randomized.functional_rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_text(self.inplace, ', ')}"


class Softmax2d(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return ops.functional_softmax(input, -3)
