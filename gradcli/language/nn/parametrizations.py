"""torch.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as parametrizations (parametrize.py).

weight_norm keeps the magnitude and the direction as `original0` and `original1` and recomputes the weight with
torch._weight_norm on every read. spectral_norm divides the weight by its largest singular value, estimated by
power iteration on buffers `_u` and `_v` that it draws (u, then v: normal_ on new tensors of the weight matrix's
height and width) and refines 15 times when registered, then once per read in training mode, in place.
orthogonal keeps a matrix (or batch) orthogonal through the matrix exponential or the Cayley map of the
skew-symmetric part of its unconstrained original (square weights), or a product of Householder reflectors
(others), times a `base` buffer that assignment sets (use_trivialization); its last bits are those of gradcli's
LAPACK (docs/numerics.md).
"""

from __future__ import annotations

from gradcli.engine import autograd, closeness, factories, ops, typeinfo
from gradcli.engine.ops import householder, linalg
from gradcli.engine.ops import weight_norm as weight_norm_ops
from gradcli.engine.tensor import Tensor
from gradcli.language.classes import ScriptObject, ScriptType
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

    def old_names(state_dict, prefix):
        """A checkpoint of the hook-based weight_norm loads: its `name_g`, `name_v` become original0, original1."""
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.__dict__["_load_state_dict_pre_hooks"][("weight_norm", name)] = old_names
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
    try:
        weight = getattr(module, name)
    except (AttributeError, NotImplementedError):   # (a method of PyTorch's Module gradcli lacks: no tensor either)
        weight = None
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


class _OrthMap(ScriptObject, metaclass=ScriptType):
    """A member of PyTorch's enum _OrthMaps (matrix_exp, cayley, householder): its name and value."""

    __module__ = _MODULE

    def __init__(self, name, value):
        self.name = name
        self.value = value

    def __repr__(self):
        return f"<_OrthMaps.{self.name}: {self.value}>"

    def __str__(self):
        return f"_OrthMaps.{self.name}"


_OrthMap.__name__ = _OrthMap.__qualname__ = "_OrthMaps"
_ORTH_MAPS = {name: _OrthMap(name, i + 1) for i, name in enumerate(("matrix_exp", "cayley", "householder"))}


def _is_orthogonal(Q) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eye = factories.eye(k, dtype=Q.dtype)
    return closeness.allclose(ops.matmul(Q.mH, Q), eye, atol=10.0 * n * typeinfo.finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """Q of A's QR, its columns signed by R's diagonal (the reflectors' product, as PyTorch computes it)."""
    X, tau = householder.geqrf(A)
    Q = householder.householder_product(X, tau)
    return Q.mul_(X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2))


class _Orthogonal(Module):
    __module__ = _MODULE

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map is _ORTH_MAPS["householder"]:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:
                X = ops.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], -1)
            A = X - X.mH
            if self.orthogonal_map is _ORTH_MAPS["matrix_exp"]:
                Q = linalg.matrix_exp(A)
            else:
                eye = factories.eye(n, dtype=A.dtype)
                Q = linalg.solve(ops.add(eye, A, alpha=-0.5), ops.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        if _has_base(self):
            Q = ops.matmul(self.base, Q)
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with autograd.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not _has_base(self):
            if self.orthogonal_map is not _ORTH_MAPS["householder"]:
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = householder.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            N = factories.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(ops.cat([Q, N], -1))
        self.base = Q
        neg_id = factories.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def _has_base(module) -> bool:
    return "base" in module.__dict__["_buffers"]


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    weight = _weight_of(module, name)
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    orth_enum = _ORTH_MAPS.get(orthogonal_map) if orthogonal_map.__class__ is str else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: '
                         f"{orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def names() -> dict:
    """torch.nn.utils.parametrizations's members."""
    return {"weight_norm": weight_norm, "spectral_norm": spectral_norm, "orthogonal": orthogonal}
