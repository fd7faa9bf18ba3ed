"""torch.nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations (parametrize.py).

weight_norm keeps the magnitude and the direction as `original0` and `original1` and recomputes the weight
with torch._weight_norm on every read. spectral_norm divides the weight by its largest singular value,
estimated by power iteration on buffers `_u` and `_v` that it draws (u, then v: normal_ on new tensors
of the weight matrix's height and width) and refines 15 times when registered, then once per read in
training mode, in place.
"""

from __future__ import annotations

from gradcli.engine import autograd, ops
from gradcli.engine.ops import weight_norm as weight_norm_ops
from gradcli.engine.tensor import Tensor
from gradcli.language.nn import parametrize
from gradcli.language.nn.module import Module

_MODULE = "torch.nn.utils.parametrizations"


class _WeightNorm(Module):
    __module__ = _MODULE

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_ops.weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return weight_norm_ops.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


def normalized_into(out: Tensor, x: Tensor, eps) -> Tensor:
    """F.normalize(x, dim=0, eps=eps, out=out): the values written into `out` (one write), which is returned."""
    out.copy_(ops.normalize(x, 2.0, 0, eps))
    return out


def matrix_of(weight: Tensor, dim: int) -> Tensor:
    """The weight as a matrix whose rows run along `dim`."""
    if dim != 0:
        weight = ops.permute(weight, (dim,) + tuple(d for d in range(weight._a.ndim) if d != dim))
    return ops.flatten(weight, 1)


class _SpectralNorm(Module):
    __module__ = _MODULE

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", ops.normalize(u, 2.0, 0, self.eps))
            self.register_buffer("_v", ops.normalize(v, 2.0, 0, self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        return matrix_of(weight, self.dim)

    def _power_method(self, weight_mat, n_power_iterations):
        with autograd.no_grad():
            for _ in range(n_power_iterations):
                self._u = normalized_into(self._u, ops.mv(weight_mat, self._v), self.eps)
                self._v = normalized_into(self._v, ops.mv(weight_mat.H, self._u), self.eps)

    def forward(self, weight):
        if weight.ndim == 1:
            return ops.normalize(weight, 2.0, 0, self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ops.vdot(u, ops.mv(weight_mat, v))
        return ops.div(weight, sigma)

    def right_inverse(self, value):
        return value


def _weight_of(module, name: str):
    weight = getattr(module, name, None)
    if weight.__class__ is not Tensor:
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    return weight


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    weight = _weight_of(module, name)
    if dim is None:
        dim = 1 if _transposed(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _transposed(module) -> bool:
    """Whether the module is one of the transposed convolutions, whose weights hold the output channels in dim 1."""
    from gradcli.language.nn import conv
    return isinstance(module, (conv.ConvTranspose1d, conv.ConvTranspose2d, conv.ConvTranspose3d))


def names() -> dict:
    """torch.nn.utils.parametrizations's members."""
    return {"weight_norm": weight_norm, "spectral_norm": spectral_norm}
