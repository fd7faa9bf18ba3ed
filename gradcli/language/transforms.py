"""torch.distributions.transforms: the bijections TransformedDistribution is built from (Exp, Affine, Sigmoid,
Tanh, Softmax, Power, Abs, StickBreaking, Softplus, LowerCholesky, PositiveDefinite, CumulativeDistribution,
Compose, Independent, Reshape and the inverse of each).

Each transform is PyTorch 2.13's sequence of tensor operations on the engine's ops, so its values, float32 bits
and grad_fn chains are PyTorch's; `domain` and `codomain` are the constraints of gradcli.language.distributions.
A script's own transform derives from Transform and defines `_call`, `_inverse` and `log_abs_det_jacobian`.
"""

from __future__ import annotations

import math

from gradcli.engine import factories, ops
from gradcli.engine.tensor import Size, Tensor
from gradcli.language import distributions as D
from gradcli.language.classes import ScriptObject, ScriptType

_MODULE = "torch.distributions.transforms"


class Transform(ScriptObject, metaclass=ScriptType):
    """An invertible (or at least computable) map with a log |det J|; with cache_size=1 it remembers its
    last (x, y) pair, so the inverse of the last output is the last input itself."""

    __module__ = _MODULE
    bijective = False

    def __init__(self, cache_size=0):
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError("cache_size must be 0 or 1")

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None            # (so a copied inverse transform has lost its transform, as in PyTorch)
        return state

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform (`t.inv`): calls the transform's inverse, and its inverse is the transform."""

    __module__ = _MODULE

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    def _forward(self):
        """The transform this inverts (None in a copy: PyTorch's AssertionError)."""
        if self._inv is None:
            raise AssertionError("_inv must not be None")
        return self._inv

    @D._DependentProperty
    def domain(self):
        return self._forward().codomain

    @D._DependentProperty
    def codomain(self):
        return self._forward().domain

    @property
    def bijective(self):
        return self._forward().bijective

    @property
    def sign(self):
        return self._forward().sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self._forward().with_cache(cache_size).inv

    def __eq__(self, other):
        if not isinstance(other, _InverseTransform):
            return False
        return self._forward() == other._inv

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._forward()._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._forward().log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """The transforms of `parts` applied in order; its log |det J| sums theirs (over the dims each adds)."""

    __module__ = _MODULE

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    @D._DependentProperty
    def domain(self):
        if not self.parts:
            return D.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = D._IndependentConstraint(domain, event_dim - domain.event_dim)
        return domain

    @D._DependentProperty
    def codomain(self):
        if not self.parts:
            return D.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = D._IndependentConstraint(codomain, event_dim - codomain.event_dim)
        return codomain

    @D.lazy_property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @D.lazy_property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return factories.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = None
        event_dim = self.domain.event_dim
        for part, x, y in zip(self.parts, xs[:-1], xs[1:]):
            term = D._sum_rightmost(part.log_abs_det_jacobian(x, y), event_dim - part.domain.event_dim)
            total = term if total is None else total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return type(self).__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


class IndependentTransform(Transform):
    """A transform whose last `reinterpreted_batch_ndims` batch dims count as event dims."""

    __module__ = _MODULE

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @D._DependentProperty
    def domain(self):
        return D._IndependentConstraint(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @D._DependentProperty
    def codomain(self):
        return D._IndependentConstraint(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return D._sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """A reshape of the rightmost dims from in_shape to out_shape (log |det J| zero)."""

    __module__ = _MODULE
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @D._DependentProperty
    def domain(self):
        return D._IndependentConstraint(D.real, len(self.in_shape))

    @D._DependentProperty
    def codomain(self):
        return D._IndependentConstraint(D.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = x.shape[:x.dim() - len(self.in_shape)]
        return x.reshape(batch_shape + self.out_shape)

    def _inverse(self, y):
        batch_shape = y.shape[:y.dim() - len(self.out_shape)]
        return y.reshape(batch_shape + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch_shape = x.shape[:x.dim() - len(self.in_shape)]
        return x.new_zeros(batch_shape)

    def forward_shape(self, shape):
        return _reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return _reshaped(shape, self.out_shape, self.in_shape)


def _reshaped(shape, old, new):
    if len(shape) < len(old):
        raise ValueError("Too few dimensions on input")
    cut = len(shape) - len(old)
    if shape[cut:] != old:
        raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
    return shape[:cut] + new


class ExpTransform(Transform):
    """y = exp(x)."""

    __module__ = _MODULE
    domain = D.real
    codomain = D.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


def _param_shape(value):
    """getattr(value, 'shape', ()): a tensor's shape, a number's ()."""
    return value.shape if value.__class__ is Tensor else ()


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    __module__ = _MODULE
    domain = D.positive
    codomain = D.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = D.broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @D.lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return self.exponent.eq(other.exponent).all().item()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return ops.shape.torch_broadcast_shapes(shape, _param_shape(self.exponent))

    inverse_shape = forward_shape


def _clipped_sigmoid(x):
    finfo = D._finfo(x.dtype)
    return x.sigmoid().clamp(min=float(finfo.tiny), max=1.0 - float(finfo.eps))


class SigmoidTransform(Transform):
    """y = sigmoid(x), clipped to [tiny, 1 - eps]."""

    __module__ = _MODULE
    domain = D.real
    codomain = D.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        finfo = D._finfo(y.dtype)
        y = y.clamp(min=float(finfo.tiny), max=1.0 - float(finfo.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -ops.softplus(-x) - ops.softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    __module__ = _MODULE
    domain = D.real
    codomain = D.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def _call(self, x):
        return ops.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -ops.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x); the inverse is atanh, unclamped (use cache_size=1 near the boundary)."""

    __module__ = _MODULE
    domain = D.real
    codomain = D._Interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - ops.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not bijective: its inverse is the identity)."""

    __module__ = _MODULE
    domain = D.real
    codomain = D.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, over `event_dim` rightmost dims."""

    __module__ = _MODULE
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @D._DependentProperty
    def domain(self):
        return D.real if self.event_dim == 0 else D._IndependentConstraint(D.real, self.event_dim)

    @D._DependentProperty
    def codomain(self):
        return D.real if self.event_dim == 0 else D._IndependentConstraint(D.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if D._is_number(mine) and D._is_number(theirs):
                if mine != theirs:
                    return False
            elif not (mine == theirs).all().item():
                return False
        return True

    @property
    def sign(self):
        if D._is_number(self.scale):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if D._is_number(scale):
            result = factories.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self.event_dim:
            result = result.view(result.size()[:-self.event_dim] + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return ops.shape.torch_broadcast_shapes(shape, _param_shape(self.loc), _param_shape(self.scale))

    inverse_shape = forward_shape


def _at_least_one_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return shape


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim (not bijective: its inverse is log)."""

    __module__ = _MODULE
    domain = D.real_vector
    codomain = D.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        return _at_least_one_dim(shape)

    def inverse_shape(self, shape):
        return _at_least_one_dim(shape)


class StickBreakingTransform(Transform):
    """The real vectors of length K - 1 onto the simplex of K coordinates, by stick breaking."""

    __module__ = _MODULE
    domain = D.real_vector
    codomain = D.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        pad = ops.shape.functional_pad
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        sf = 1 - y_crop.cumsum(-1)
        sf = sf.clamp(min=float(D._finfo(y.dtype).tiny))
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        return (-x + ops.elementwise.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        shape = _at_least_one_dim(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        shape = _at_least_one_dim(shape)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices to lower-triangular ones with a positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated."""

    __module__ = _MODULE
    domain = D._IndependentConstraint(D.real, 2)
    codomain = D.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive-definite ones: L @ L^T of their LowerCholeskyTransform."""

    __module__ = _MODULE
    domain = D._IndependentConstraint(D.real, 2)
    codomain = D.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return ops.matmul(x, x.mT)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(ops.linalg.cholesky(y))


class CumulativeDistributionTransform(Transform):
    """A distribution's cdf as a transform onto [0, 1] (its inverse the icdf, its log |det J| the log_prob)."""

    __module__ = _MODULE
    bijective = True
    codomain = D.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


def _tril_mask(n, diag):
    arange = factories.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def _tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (below diagonal `diag`) of the last two dims, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def _vec_to_tril_matrix(vec, diag=0):
    """The inverse: a vector's elements written row by row into the lower triangle of a square matrix."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = float(D._finfo(vec.dtype).eps)
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + Size((n, n)))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length D(D-1)/2 onto Cholesky factors of D x D correlation matrices (tanh, then
    stick breaking on the squared rows)."""

    __module__ = _MODULE
    domain = D.real_vector
    codomain = D.corr_cholesky
    bijective = True

    def _call(self, x):
        x = x.tanh()
        eps = float(D._finfo(x.dtype).eps)
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = _vec_to_tril_matrix(x, diag=-1)
        z = r ** 2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        r = r + factories.eye(r.shape[-1], dtype=r.dtype)
        return r * ops.shape.functional_pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(dim=-1)
        y_cumsum_shifted = ops.shape.functional_pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = _tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = _tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = _tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + ops.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D_ = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D_ * (D_ - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (D_, D_)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D_ = shape[-1]
        return shape[:-2] + (D_ * (D_ - 1) // 2,)


def _transform_list(tseq, cache_size) -> list:
    """CatTransform's and StackTransform's parts, checked, each with the cache asked for."""
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")
    return [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)


class CatTransform(Transform):
    """The transforms of `tseq` on consecutive slices of `lengths` along `dim`, joined by torch.cat."""

    __module__ = _MODULE

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        self.transforms = _transform_list(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @D.lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @D.lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _checked(self, value, name):
        D._check_dim(self.dim, value, "tensor" if name is None else name)
        if value.size(self.dim) != self.length:
            raise AssertionError(f"{name or 'x'}.size({self.dim}) = {value.size(self.dim)} must equal length "
                                 f"{self.length}")

    def _slices(self, value):
        start = 0
        for length in self.lengths:
            yield value.narrow(self.dim, start, length)
            start = start + length

    def _call(self, x):
        self._checked(x, None)
        return ops.cat([t(s) for t, s in zip(self.transforms, self._slices(x))], dim=self.dim)

    def _inverse(self, y):
        D._check_dim(self.dim, y, "tensor")
        if y.size(self.dim) != self.length:
            raise AssertionError(f"y.size({self.dim}) = {y.size(self.dim)} must equal length {self.length}")
        return ops.cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._checked(x, "x")
        self._checked(y, "y")
        logdetjacs = []
        for trans, xslice, yslice in zip(self.transforms, self._slices(x), self._slices(y)):
            logdetjac = trans.log_abs_det_jacobian(xslice, yslice)
            if trans.event_dim < self.event_dim:
                logdetjac = D._sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return ops.cat(logdetjacs, dim=dim)
        return sum(logdetjacs)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @D._DependentProperty
    def domain(self):
        return D._Cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @D._DependentProperty
    def codomain(self):
        return D._Cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """The transforms of `tseq` on the slices along `dim`, joined by torch.stack."""

    __module__ = _MODULE

    def __init__(self, tseq, dim=0, cache_size=0):
        self.transforms = _transform_list(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _checked(self, value, name):
        D._check_dim(self.dim, value, "tensor" if name is None else name)
        if value.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name or 'x'}.size({self.dim}) = {value.size(self.dim)} must equal "
                                 f"len(transforms) {len(self.transforms)}")

    def _call(self, x):
        self._checked(x, None)
        return ops.stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        D._check_dim(self.dim, y, "tensor")
        if y.size(self.dim) != len(self.transforms):
            raise AssertionError(f"y.size({self.dim}) = {y.size(self.dim)} must equal len(transforms) "
                                 f"{len(self.transforms)}")
        return ops.stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._checked(x, "x")
        self._checked(y, "y")
        return ops.stack([t.log_abs_det_jacobian(xs, ys)
                          for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @D._DependentProperty
    def domain(self):
        return D._Stack([t.domain for t in self.transforms], self.dim)

    @D._DependentProperty
    def codomain(self):
        return D._Stack([t.codomain for t in self.transforms], self.dim)


identity_transform = ComposeTransform([])

CLASSES = (Transform, ComposeTransform, IndependentTransform, ReshapeTransform, ExpTransform, PowerTransform,
           SigmoidTransform, SoftplusTransform, TanhTransform, AbsTransform, AffineTransform, SoftmaxTransform,
           StickBreakingTransform, LowerCholeskyTransform, PositiveDefiniteTransform, CumulativeDistributionTransform,
           CorrCholeskyTransform, CatTransform, StackTransform)
