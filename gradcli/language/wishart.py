"""torch.distributions.Wishart: symmetric positive definite matrices, given df and the covariance, the precision
matrix or the scale's Cholesky factor; samples by the Bartlett decomposition.

As in gradcli.language.distributions, every method is PyTorch 2.13's sequence of tensor operations in its order,
so the values, the grad_fn chains and the draws are PyTorch's: a sample takes sqrt(Chi2(df - i)) draws (the
Gamma sampler) for the diagonal and torch.randn for the lower triangle, then L @ A (L @ A)^T. PyTorch's rsample
then tests the samples with the positive-definite constraint and, where it holds (its first test is not
negated, so a good sample counts as singular), warns "Singular sample detected." and draws those again (up to
`max_try_correction` times while any redraw is not positive definite): the same draws, the same warning.
"""

from __future__ import annotations

import math

from gradcli.engine import factories, ops
from gradcli.engine.tensor import Size
from gradcli.language import distributions as D
from gradcli.language.distributions import Distribution, ExponentialFamily, _finfo, _is_number, _warn, lazy_property

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma: sum over i < p of digamma(x - i / 2)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    offsets = factories.arange(p, dtype=x.dtype).div(2).expand(tuple(x.shape) + (-1,))
    return ops.special.digamma(x.unsqueeze(-1) - offsets).sum(-1)


def _chi2(df, p: int, batch_shape, dtype):
    """Chi2(df - i) for i < p: the squared diagonal of the Bartlett factor."""
    return D.Chi2(df=df.unsqueeze(-1) - factories.arange(p, dtype=dtype).expand(batch_shape + (-1,)))


class Wishart(ExponentialFamily):
    """W(df, Sigma): the distribution of sum of df outer products x x^T, x ~ N(0, Sigma) (any real df > p - 1)."""

    __module__ = "torch.distributions.wishart"
    support = D.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": D.positive_definite, "precision_matrix": D.positive_definite,
                "scale_tril": D.lower_cholesky, "df": D._GreaterThan(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if _is_number(df):
            batch_shape = Size(param.shape[:-2])
            self.df = factories.tensor(df, dtype=param.dtype)
        else:
            batch_shape = ops.shape.torch_broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if bool(self.df.lt(event_shape[-1]).any()):
            _warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.")
        Distribution.__init__(self, batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ops.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = D._precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = _chi2(self.df, self._event_shape[-1], batch_shape, self._unbroadcasted_scale_tril.dtype)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        new._dist_chi2 = _chi2(new.df, self.event_shape[-1], batch_shape, new._unbroadcasted_scale_tril.dtype)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ops.matmul(L, L.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = factories.eye(self._event_shape[-1], dtype=L.dtype)
        return ops.cholesky_solve(identity, L).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + ops.einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = chi.clamp(min=float(_finfo(chi.dtype).eps)).diag_embed(dim1=-2, dim2=-1)
        index = factories.tril_indices(p, p, offset=-1)
        noise[..., index[0], index[1]] = factories.randn(Size(sample_shape) + self._batch_shape + (int(p * (p - 1) / 2),),
                                                         dtype=noise.dtype)
        chol = ops.matmul(self._unbroadcasted_scale_tril, noise)
        return ops.matmul(chol, chol.transpose(-2, -1))

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self.support.check(sample)        # (sic: PyTorch's first test is not negated)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            _warn("Singular sample detected.")
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - ops.special.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * ops.linalg.slogdet(value)[1]
                - ops.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + ops.special.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-ops.linalg.slogdet(-2 * x)[1] + _LOG_2 * p)
                + ops.special.mvlgamma(y + (p + 1) / 2, p=p))


CLASSES = (Wishart,)
