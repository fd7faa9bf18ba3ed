"""torch.distributions built on transforms, and the others beside them: TransformedDistribution, LogNormal, Gumbel,
HalfNormal, HalfCauchy, Weibull, Pareto, Kumaraswamy, LogisticNormal, LogitRelaxedBernoulli, RelaxedBernoulli,
ExpRelaxedCategorical, RelaxedOneHotCategorical, Cauchy, Geometric, Multinomial, NegativeBinomial,
ContinuousBernoulli, VonMises, FisherSnedecor, MixtureSameFamily, LowRankMultivariateNormal, LKJCholesky, and the
kl_divergence pairs PyTorch registers for them (added to gradcli.language.distributions' registry when this
module loads).

As in gradcli.language.distributions, every method is PyTorch 2.13's sequence of tensor operations in PyTorch's
order, so the values, the grad_fn chains and the random draws (Tensor.uniform_, normal_, cauchy_, torch.rand,
torch.randn, torch.poisson and the Gamma and Dirichlet samplers on the default generator) are PyTorch's.
"""

from __future__ import annotations

import math

from gradcli.engine import autograd, dtypes, factories, ops
from gradcli.engine import distributions as draws
from gradcli.engine.ops import nn as nn_ops
from gradcli.engine.tensor import Size
from gradcli.language import distributions as D
from gradcli.language.distributions import Distribution, broadcast_all, lazy_property, _is_number, _finfo
from gradcli.language.transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                                         PowerTransform, SigmoidTransform, StickBreakingTransform, Transform)

_INF = math.inf
_EULER = D._EULER_GAMMA


class TransformedDistribution(Distribution):
    """A base distribution pushed through a list of transforms: log p(y) = log p(x) - log |det dy/dx|."""

    __module__ = "torch.distributions.transformed_distribution"
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = Size(transform.forward_shape(base_shape))
        expanded_base_shape = Size(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_distribution = base_distribution.expand(expanded_base_shape[:len(expanded_base_shape)
                                                                             - base_event_dim])
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = D.Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        Distribution.__init__(self, forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = Size(t.inverse_shape(shape))
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @D._DependentProperty(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = D._IndependentConstraint(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=Size()):
        with autograd.no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=Size()):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - D._sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                   event_dim - transform.domain.event_dim)
            y = x
        return log_prob + D._sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value


def _base_param(name, doc):
    return property(lambda self: getattr(self.base_dist, name), doc=doc)


class LogNormal(TransformedDistribution):
    """exp of a Normal(loc, scale)."""

    __module__ = "torch.distributions.log_normal"
    arg_constraints = {"loc": D.real, "scale": D.positive}
    support = D.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = D.Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    loc = _base_param("loc", "The mean of the log.")
    scale = _base_param("scale", "The standard deviation of the log.")

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution of median loc and half width scale."""

    __module__ = "torch.distributions.cauchy"
    arg_constraints = {"loc": D.real, "scale": D.positive}
    support = D.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        D._loc_scale_init(self, loc, scale, validate_args)

    def expand(self, batch_shape, _instance=None):
        return D._expanded(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return factories.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return factories.full(self._extended_shape(), _INF, dtype=self.loc.dtype)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = factories.empty(shape, dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(TransformedDistribution):
    """The Gumbel (extreme value) distribution: loc - scale * log(-log(U))."""

    __module__ = "torch.distributions.gumbel"
    arg_constraints = {"loc": D.real, "scale": D.positive}
    support = D.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = _finfo(self.loc.dtype)
        tiny, top = float(finfo.tiny), 1 - float(finfo.eps)
        if _is_number(loc) and _is_number(scale):
            base_dist = D.Uniform(tiny, top, validate_args=validate_args)
        else:
            base_dist = D.Uniform(factories.full_like(self.loc, tiny), factories.full_like(self.loc, top),
                                  validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-factories.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + _EULER)


def _half_log_prob(d, value):
    """HalfNormal's and HalfCauchy's log_prob: twice the base density on x >= 0, -inf below."""
    log_prob = d.base_dist.log_prob(value) + math.log(2)
    return ops.where(value >= 0, log_prob, -_INF)


def _half_cdf(self, value):
    if self._validate_args:
        self._validate_sample(value)
    return 2 * self.base_dist.cdf(value) - 1


def _half_icdf(self, prob):
    return self.base_dist.icdf((prob + 1) / 2)


def _half_entropy(self):
    return self.base_dist.entropy() - math.log(2)


# what HalfNormal and HalfCauchy share (|X| for X centred at 0), as attributes of each class
_HALF = {"scale": _base_param("scale", "The scale of the distribution folded at 0."),
         "mode": property(lambda self: factories.zeros_like(self.scale)),
         "cdf": _half_cdf, "icdf": _half_icdf, "entropy": _half_entropy}


class HalfNormal(TransformedDistribution):
    """|X| for X ~ Normal(0, scale)."""

    __module__ = "torch.distributions.half_normal"
    arg_constraints = {"scale": D.positive}
    support = D.nonnegative
    has_rsample = True
    scale, mode, cdf, icdf, entropy = _HALF.values()

    def __init__(self, scale, validate_args=None):
        base_dist = D.Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _half_log_prob(self, value)


class HalfCauchy(TransformedDistribution):
    """|X| for X ~ Cauchy(0, scale)."""

    __module__ = "torch.distributions.half_cauchy"
    arg_constraints = {"scale": D.positive}
    support = D.nonnegative
    has_rsample = True
    scale, mode, cdf, icdf, entropy = _HALF.values()

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return factories.full(self._extended_shape(), _INF, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = D._as_tensor(value, self.base_dist.scale.dtype)
        return _half_log_prob(self, value)


class Weibull(TransformedDistribution):
    """scale * E^(1 / concentration) for E ~ Exponential(1)."""

    __module__ = "torch.distributions.weibull"
    arg_constraints = {"scale": D.positive, "concentration": D.positive}
    support = D.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = D.Exponential(factories.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * ops.special.lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        lgamma = ops.special.lgamma
        return self.scale.pow(2) * (lgamma(1 + 2 * self.concentration_reciprocal).exp()
                                    - (2 * lgamma(1 + self.concentration_reciprocal)).exp())

    def entropy(self):
        return (_EULER * (1 - self.concentration_reciprocal) + (self.scale * self.concentration_reciprocal).log()
                + 1)


class Pareto(TransformedDistribution):
    """scale * exp(E) for E ~ Exponential(alpha): density alpha scale^alpha / x^(alpha + 1) on x >= scale."""

    __module__ = "torch.distributions.pareto"
    arg_constraints = {"alpha": D.positive, "scale": D.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = D.Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @D._DependentProperty(is_discrete=False, event_dim=0)
    def support(self):
        return D._GreaterThanEq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class LogisticNormal(TransformedDistribution):
    """The stick-breaking image of a Normal(loc, scale) vector: points of the simplex."""

    __module__ = "torch.distributions.logistic_normal"
    arg_constraints = {"loc": D.real, "scale": D.positive}
    support = D.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = D.Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale


def _clamp_probs(probs):
    eps = float(_finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli: (logit(U) + logits) / temperature."""

    __module__ = "torch.distributions.relaxed_bernoulli"
    arg_constraints = {"probs": D.unit_interval, "logits": D.real}
    support = D.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        Distribution.__init__(self, D._binary_param(self, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = D._expanded(self, LogitRelaxedBernoulli, batch_shape, _instance, ("probs", "logits"))
        new.temperature = self.temperature
        return new

    logits, probs, param_shape = D._BINARY_PARAMETERS

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = _clamp_probs(self.probs.expand(shape))
        uniforms = _clamp_probs(factories.rand(shape, dtype=probs.dtype))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """The sigmoid of a LogitRelaxedBernoulli: a differentiable relaxation of Bernoulli samples."""

    __module__ = "torch.distributions.relaxed_bernoulli"
    arg_constraints = {"probs": D.unit_interval, "logits": D.real}
    support = D.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    temperature = _base_param("temperature", "The relaxation temperature.")
    logits = _base_param("logits", "The log-odds.")
    probs = _base_param("probs", "The probabilities.")


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample: log-softmax of (logits + Gumbel noise) / temperature."""

    __module__ = "torch.distributions.relaxed_categorical"
    arg_constraints = {"probs": D.simplex, "logits": D.real_vector}
    support = D.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = D.Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        Distribution.__init__(self, batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return D._categorical_expanded(self, ExpRelaxedCategorical, batch_shape, _instance)

    probs, logits, param_shape = D._CATEGORICAL_PARAMETERS

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        uniforms = _clamp_probs(factories.rand(shape, dtype=self.logits.dtype))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (ops.special.lgamma(factories.full_like(self.temperature, float(K)))
                     - self.temperature.log().mul(-(K - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """The exp of an ExpRelaxedCategorical: a differentiable relaxation of one-hot samples (Gumbel-softmax)."""

    __module__ = "torch.distributions.relaxed_categorical"
    arg_constraints = {"probs": D.simplex, "logits": D.real_vector}
    support = D.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    temperature = _base_param("temperature", "The relaxation temperature.")
    logits = _base_param("logits", "The unnormalised log-probabilities.")
    probs = _base_param("probs", "The probabilities.")


class Geometric(Distribution):
    """The number of failures before the first success of Bernoulli(probs) trials."""

    __module__ = "torch.distributions.geometric"
    arg_constraints = {"probs": D.unit_interval, "logits": D.real}
    support = D.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = Size() if _is_number(given) else given.size()
        Distribution.__init__(self, batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to be positive but found invalid values:\n"
                                 f"{value.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return factories.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    logits, probs = D._BINARY_PARAMETERS[:2]

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = float(_finfo(self.probs.dtype).tiny)
        with autograd.no_grad():
            u = factories.empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return nn_ops.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class MixtureSameFamily(Distribution):
    """A mixture of the components of one batched distribution (its rightmost batch dim), weighted by a
    Categorical: log_prob is the logsumexp of the components' log_prob plus the log weights."""

    __module__ = "torch.distributions.mixture_same_family"
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, D.Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        Distribution.__init__(self, cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @D._DependentProperty
    def support(self):
        return D.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(dim=-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self.component_distribution.variance).sum(dim=dim)
        var_cond_mean = (probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(dim=dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(dim=-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = nn_ops.log_softmax(self.mixture_distribution.logits, dim=-1)
        return (log_prob_x + log_mix_prob).logsumexp(dim=-1)

    def sample(self, sample_shape=Size()):
        with autograd.no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = self.event_shape
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = mix_sample.shape
            comp_samples = self.component_distribution.sample(sample_shape)
            mix_sample_r = mix_sample.reshape(mix_shape + Size([1] * (len(es) + 1)))
            mix_sample_r = mix_sample_r.repeat(Size([1] * len(mix_shape)) + Size([1]) + es)
            return comp_samples.gather(gather_dim, mix_sample_r).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = x.shape
        return x.reshape(xs[:-1] + Size(pad_ndims * [1]) + xs[-1:] + Size(self._event_ndims * [1]))

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"


class Multinomial(Distribution):
    """Counts of total_count draws of a Categorical(probs or logits) over its K classes."""

    __module__ = "torch.distributions.multinomial"
    arg_constraints = {"probs": D.simplex, "logits": D.real_vector}

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = D.Categorical(probs=probs, logits=logits)
        self._binomial = D.Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        Distribution.__init__(self, batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        return D._categorical_expanded(self, Multinomial, batch_shape, new)

    @D._DependentProperty(is_discrete=True, event_dim=1)
    def support(self):
        return D._Multinomial(self.total_count)

    probs, logits, param_shape = D._CATEGORICAL_PARAMETERS

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        shifted_idx = list(range(samples.dim()))
        shifted_idx.append(shifted_idx.pop(0))
        samples = samples.permute(*shifted_idx)
        counts = factories.zeros(self._extended_shape(sample_shape), dtype=samples.dtype)
        counts.scatter_add_(-1, samples, factories.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        lgamma = ops.special.lgamma
        n = factories.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lgamma = ops.special.lgamma
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -_INF)] = 0
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers


class NegativeBinomial(Distribution):
    """The number of successes before total_count failures of Bernoulli(probs) trials (a Gamma-Poisson mixture)."""

    __module__ = "torch.distributions.negative_binomial"
    arg_constraints = {"total_count": D._GreaterThanEq(0), "probs": D._HalfOpenInterval(0.0, 1.0), "logits": D.real}
    support = D.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        D._count_and_param(self, total_count, probs, logits)
        Distribution.__init__(self, self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return D._count_and_param_expanded(self, NegativeBinomial, batch_shape, _instance)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    logits, probs, param_shape = D._BINARY_PARAMETERS

    @lazy_property
    def _gamma(self):
        return D.Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=Size()):
        with autograd.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return draws.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid, lgamma = ops.elementwise.logsigmoid, ops.special.lgamma
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -lgamma(self.total_count + value) + lgamma(1.0 + value) + lgamma(self.total_count)
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization


class ContinuousBernoulli(D.ExponentialFamily):
    """The continuous Bernoulli on [0, 1]: density proportional to probs^x (1 - probs)^(1 - x); near probs = 1/2
    (within lims) the normaliser and moments are Taylor series."""

    __module__ = "torch.distributions.continuous_bernoulli"
    arg_constraints = {"probs": D.unit_interval, "logits": D.real}
    support = D.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = _is_number(probs)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None:
                if not self.arg_constraints["probs"].check(self.probs).all():
                    raise ValueError("The parameter probs has invalid values")
            self.probs = _clamp_probs(self.probs)
        else:
            is_scalar = _is_number(logits)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        Distribution.__init__(self, batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = D._expanded(self, ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        return new

    def _outside_unstable_region(self):
        return ops.maximum(self.probs.le(self._lims[0]), self.probs.gt(self._lims[1]))

    def _cut_probs(self):
        return ops.where(self._outside_unstable_region(), self.probs,
                         self._lims[0] * factories.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut_probs = self._cut_probs()
        below = ops.where(cut_probs.le(0.5), cut_probs, factories.zeros_like(cut_probs))
        above = ops.where(cut_probs.ge(0.5), cut_probs, factories.ones_like(cut_probs))
        log_norm = ((-cut_probs).log1p() - cut_probs.log()).abs().log() - ops.where(
            cut_probs.le(0.5), (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / ((-cut_probs).log1p() - cut_probs.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars = (cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2)
                + 1.0 / ((-cut_probs).log1p() - cut_probs.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ops.where(self._outside_unstable_region(), vars, taylor)

    @lazy_property
    def logits(self):
        return D._probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return _clamp_probs(D._logits_to_probs(self.logits, is_binary=True))

    param_shape = D._BINARY_PARAMETERS[2]

    def sample(self, sample_shape=Size()):
        u = factories.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with autograd.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        u = factories.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-nn_ops.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0) / (2.0 * cut_probs - 1.0)
        unbounded_cdfs = ops.where(self._outside_unstable_region(), cdfs, value)
        return ops.where(value.le(0.0), factories.zeros_like(value),
                         ops.where(value.ge(1.0), factories.ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return ops.where(self._outside_unstable_region(),
                         ((-cut_probs + value * (2.0 * cut_probs - 1.0)).log1p() - (-cut_probs).log1p())
                         / (cut_probs.log() - (-cut_probs).log1p()), value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0


# the Numerical Recipes polynomials of log I0 and log I1 (small: x < 3.75, in (x / 3.75)^2; large: in 3.75 / x)
_BESSEL_SMALL = ((1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2),
                 (0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3))
_BESSEL_LARGE = ((0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
                  -0.1647633e-1, 0.392377e-2),
                 (0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
                  0.1787654e-1, -0.420059e-2))


def _eval_poly(y, coef):
    """Horner's rule, from the last coefficient (a number) down, as PyTorch's _eval_poly."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for order 0 or 1, by the two polynomial fits either side of 3.75."""
    y = x / 3.75
    y = y * y
    small = _eval_poly(y, _BESSEL_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    y = 3.75 / x
    large = x - 0.5 * x.log() + _eval_poly(y, _BESSEL_LARGE[order]).log()
    return ops.where(x < 3.75, small, large)


_VON_MISES_ROUNDS = 1_000      # rounds of the rejection loop before gradcli gives up (PyTorch's never ends)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's rejection sampler, as PyTorch runs it: each round draws torch.rand((3,) + shape) for every
    element (accepted ones too) and keeps the first accepted proposal of each."""
    done = factories.zeros(x.shape, dtype=dtypes.bool_)
    rounds = 0
    while not done.all():
        rounds += 1
        if rounds > _VON_MISES_ROUNDS:
            raise NotImplementedError(f"gradcli does not implement VonMises.sample for parameters that accept no "
                                      f"proposal in {_VON_MISES_ROUNDS} rounds (NaN or infinite ones: PyTorch's "
                                      "loop never ends)")
        u = factories.rand((3,) + tuple(x.shape), dtype=loc.dtype)
        u1, u2, u3 = u.unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = ops.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises (circular normal) distribution of mean direction loc and concentration."""

    __module__ = "torch.distributions.von_mises"
    arg_constraints = {"loc": D.real, "concentration": D.positive}
    support = D.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        Distribution.__init__(self, self.loc.shape, Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self):
        return self.loc.to(dtypes.float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(dtypes.float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        proposal_r_taylor = 1 / kappa + kappa
        return ops.where(kappa < 1e-5, proposal_r_taylor, proposal_r)

    def sample(self, sample_shape=Size()):
        with autograd.no_grad():
            shape = self._extended_shape(sample_shape)
            x = factories.empty(shape, dtype=self._loc.dtype)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()


def _moments(a, b, n):
    lgamma = ops.special.lgamma
    arg1 = 1 + n / a
    log_value = lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """(1 - U^(1 / concentration0))^(1 / concentration1) for U ~ Uniform(0, 1): a Beta-like law on [0, 1]."""

    __module__ = "torch.distributions.kumaraswamy"
    arg_constraints = {"concentration1": D.positive, "concentration0": D.positive}
    support = D.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = D.Uniform(factories.full_like(self.concentration0, 0), factories.full_like(self.concentration0, 1),
                              validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        log_mode[(self.concentration0 < 1) | (self.concentration1 < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = ops.special.digamma(self.concentration0 + 1) + _EULER
        return t0 + t1 * H0 - self.concentration1.log() - self.concentration0.log()


class FisherSnedecor(Distribution):
    """The F distribution of df1 and df2 degrees of freedom: a ratio of two scaled Gamma draws."""

    __module__ = "torch.distributions.fishersnedecor"
    arg_constraints = {"df1": D.positive, "df2": D.positive}
    support = D.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = D.Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = D.Gamma(self.df2 * 0.5, self.df2)
        batch_shape = Size() if _is_number(df1) and _is_number(df2) else self.df1.size()
        Distribution.__init__(self, batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2.clone()
        df2[df2 <= 2] = math.nan
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = math.nan
        return mode

    @property
    def variance(self):
        df2 = self.df2.clone()
        df2[df2 <= 4] = math.nan
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        X1 = self._gamma1.rsample(sample_shape).view(shape)
        X2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = float(_finfo(X2.dtype).tiny)
        X2.clamp_(min=tiny)
        Y = X1 / X2
        Y.clamp_(min=tiny)
        return Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lgamma = ops.special.lgamma
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3


def _batch_capacitance_tril(W, D_):
    """The Cholesky factor of I + W^T D^-1 W (the identity added in place on K's diagonal, as PyTorch does)."""
    m = W.size(-1)
    Wt_Dinv = W.mT / D_.unsqueeze(-2)
    K = ops.matmul(Wt_Dinv, W).contiguous()
    diagonal = K.view(-1, m * m)[:, ::m + 1]
    diagonal += 1
    return ops.linalg.cholesky(K)


def _batch_lowrank_logdet(W, D_, capacitance_tril):
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D_.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D_, x, capacitance_tril):
    Wt_Dinv = W.mT / D_.unsqueeze(-2)
    Wt_Dinv_x = D._batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x.pow(2) / D_).sum(-1)
    mahalanobis_term2 = D._batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    """N(loc, cov_factor @ cov_factor^T + diag(cov_diag)): every computation through the capacitance matrix's
    Cholesky factor (Woodbury's identity), as in PyTorch."""

    __module__ = "torch.distributions.lowrank_multivariate_normal"
    arg_constraints = {"loc": D.real_vector, "cov_factor": D._IndependentConstraint(D.real, 2),
                       "cov_diag": D._IndependentConstraint(D.positive, 1)}
    support = D.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_all(loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from None
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        Distribution.__init__(self, self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    mean = mode = D._LOC

    def _full(self, value):
        return value.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def variance(self):
        W, D_ = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D_).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        n = self._event_shape[0]
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        K = ops.matmul(Dinvsqrt_W, Dinvsqrt_W.mT).contiguous()
        diagonal = K.view(-1, n * n)[:, ::n + 1]
        diagonal += 1
        return self._full(cov_diag_sqrt_unsqueeze * ops.linalg.cholesky(K))

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return self._full(ops.matmul(W, W.mT) + self._unbroadcasted_cov_diag.diag_embed())

    @lazy_property
    def precision_matrix(self):
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = ops.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return self._full(self._unbroadcasted_cov_diag.reciprocal().diag_embed() - ops.matmul(A.mT, A))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        W_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_W = factories.empty(W_shape, dtype=self.loc.dtype).normal_()
        eps_D = factories.empty(shape, dtype=self.loc.dtype).normal_()
        return (self.loc + D._batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                     self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self):
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)


class LKJCholesky(Distribution):
    """The LKJ distribution of correlation matrices, over their lower Cholesky factors, by the onion method
    (Beta draws for the rows' lengths, normal draws for their directions)."""

    __module__ = "torch.distributions.lkj_cholesky"
    arg_constraints = {"concentration": D.positive}
    support = D.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = factories.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = ops.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = D.Beta(beta_conc1, beta_conc0)
        Distribution.__init__(self, batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = factories.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)
        w = y.sqrt() * u_hypersphere
        eps = float(_finfo(w.dtype).tiny)
        diag_elems = (1 - (w ** 2).sum(dim=-1)).clamp(min=eps).sqrt()
        w += diag_elems.diag_embed()
        return w

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = factories.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ops.special.lgamma(alpha) * dm1
        numerator = ops.special.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term


# ----------------------------------------------------------------------------------------- kl_divergence

def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return D.kl_divergence(p.base_dist, q.base_dist)


def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * _EULER
    t3 = (ct2 + ops.special.lgamma(1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + _EULER)


def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


def _kl_halfnormal_halfnormal(p, q):
    return D._kl_normal_normal(p.base_dist, q.base_dist)


def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    result[p.support.lower_bound < q.support.lower_bound] = _INF
    return result


def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = loc_scale_ratio.exp() * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


def _kl_gamma_gumbel(p, q):
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    c = p.concentration
    t1 = (c - 1) * ops.special.digamma(c) - ops.special.lgamma(c) - c
    t2 = beta_scale_prod.log() + c / beta_scale_prod
    t3 = loc_scale_ratio.exp() * (1 + beta_scale_prod.reciprocal()).pow(-c) - loc_scale_ratio
    return t1 + t2 + t3


def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = (-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio).exp()
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


def _kl_pareto_infinity(p, q):
    return factories.full_like(p.scale, _INF)


def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    result = t1 - t2 + t3 - 1
    result[p.alpha <= 1] = _INF
    return result


def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = ops.special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    result = t1 + t2 + t3 + t4 - 1
    result[p.alpha <= 1] = _INF
    return result


def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    result = t1 - t2 + (t3 + t4) / var_normal - 1
    result[p.alpha <= 2] = _INF
    return result


def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * ((-high_loc_diff).exp() - (-low_loc_diff).exp())
    return t1 - t2


def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (D._x_log_x(p.high) - D._x_log_x(p.low) - support_uniform) / support_uniform
    result = t2 * (q.alpha + 1) - t1
    result[p.low < q.support.lower_bound] = _INF
    return result


def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


def _kl_to_continuous_bernoulli(p, q):      # (from a Beta or a Uniform, whose mean and entropy it needs)
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


def _kl_uniform_continuous_bernoulli(p, q):
    result = _kl_to_continuous_bernoulli(p, q)
    outside = ops.maximum(p.high.ge(q.support.upper_bound), p.low.le(q.support.lower_bound))
    return ops.where(outside, factories.ones_like(result) * _INF, result)


def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return t1 + t2 + t3


def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = ops.maximum(q.low.ge(p.support.lower_bound), q.high.le(p.support.upper_bound))
    return ops.where(outside, factories.ones_like(result) * _INF, result)


def _kl_continuous_bernoulli_infinity(p, q):
    return factories.full_like(p.probs, _INF)


def _lowrank_terms(q, p_loc):
    """What each KL to a LowRankMultivariateNormal q needs: q's log-determinant, the Mahalanobis term of the
    means' difference and A = C^-1 W^T D^-1 (C q's capacitance factor)."""
    W, D_ = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    log_det = _batch_lowrank_logdet(W, D_, q._capacitance_tril)
    term3 = _batch_lowrank_mahalanobis(W, D_, q.loc - p_loc, q._capacitance_tril)
    A = ops.linalg.solve_triangular(q._capacitance_tril, W.mT / D_.unsqueeze(-2), upper=False)
    return log_det, term3, A


_DIFFERENT_EVENTS = "KL-divergence between two {}Multivariate Normals with" + " " * 26 + \
    "different event shapes cannot be computed"


def _kl_lowrank_lowrank(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_DIFFERENT_EVENTS.format("Low Rank "))
    q_log_det, term3, A = _lowrank_terms(q, p.loc)
    term1 = q_log_det - p._log_det()
    pW, pD, qD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    term21 = (pD / qD).sum(-1)
    term22 = D._batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
    term23 = D._batch_trace_XXT(A * pD.sqrt().unsqueeze(-2))
    term24 = D._batch_trace_XXT(A.matmul(pW))
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


def _kl_mvn_lowrank(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_DIFFERENT_EVENTS.format("(Low Rank) "))
    q_log_det, term3, A = _lowrank_terms(q, p.loc)
    term1 = q_log_det - 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term21 = D._batch_trace_XXT(p._unbroadcasted_scale_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = D._batch_trace_XXT(A.matmul(p._unbroadcasted_scale_tril))
    return 0.5 * (term1 + (term21 - term22) + term3 - p.event_shape[0])


def _kl_lowrank_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_DIFFERENT_EVENTS.format("(Low Rank) "))
    term1 = 2 * q._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) - p._log_det()
    term3 = D._batch_mahalanobis(q._unbroadcasted_scale_tril, (q.loc - p.loc))
    combined_batch_shape = Size(ops.shape.torch_broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                                                    p._unbroadcasted_cov_factor.shape[:-2]))
    n = p.event_shape[0]
    q_scale_tril = q._unbroadcasted_scale_tril.expand(combined_batch_shape + (n, n))
    p_cov_factor = p._unbroadcasted_cov_factor.expand(combined_batch_shape + (n, p.cov_factor.size(-1)))
    p_cov_diag = p._unbroadcasted_cov_diag.sqrt().diag_embed().expand(combined_batch_shape + (n, n))
    solve = ops.linalg.solve_triangular
    term21 = D._batch_trace_XXT(solve(q_scale_tril, p_cov_factor, upper=False))
    term22 = D._batch_trace_XXT(solve(q_scale_tril, p_cov_diag, upper=False))
    return 0.5 * (term1 + (term21 + term22) + term3 - p.event_shape[0])


_infinite_loc = D._kl_normal_infinity           # full_like(p.loc, inf)
_KL_PAIRS = {
    (TransformedDistribution, TransformedDistribution): _kl_transformed_transformed,
    (Gumbel, Gumbel): _kl_gumbel_gumbel, (Geometric, Geometric): _kl_geometric_geometric,
    (HalfNormal, HalfNormal): _kl_halfnormal_halfnormal, (Pareto, Pareto): _kl_pareto_pareto,
    (Cauchy, Cauchy): _kl_cauchy_cauchy,
    (D.Beta, Pareto): D._kl_beta_infinity, (D.Exponential, Pareto): D._kl_exponential_infinity,
    (D.Exponential, Gumbel): _kl_exponential_gumbel, (D.Gamma, Pareto): D._kl_gamma_infinity,
    (D.Gamma, Gumbel): _kl_gamma_gumbel,
    (Gumbel, D.Beta): _infinite_loc, (Gumbel, D.Exponential): _infinite_loc, (Gumbel, D.Gamma): _infinite_loc,
    (Gumbel, Pareto): _infinite_loc, (Gumbel, D.Uniform): _infinite_loc, (Gumbel, D.Normal): _kl_gumbel_normal,
    (D.Laplace, Pareto): _infinite_loc, (D.Normal, Pareto): _infinite_loc, (D.Normal, Gumbel): _kl_normal_gumbel,
    (Pareto, D.Beta): _kl_pareto_infinity, (Pareto, D.Uniform): _kl_pareto_infinity,
    (Pareto, D.Exponential): _kl_pareto_exponential, (Pareto, D.Gamma): _kl_pareto_gamma,
    (Pareto, D.Normal): _kl_pareto_normal, (D.Uniform, Gumbel): _kl_uniform_gumbel,
    (D.Uniform, Pareto): _kl_uniform_pareto,
    (ContinuousBernoulli, ContinuousBernoulli): _kl_continuous_bernoulli_continuous_bernoulli,
    (D.Beta, ContinuousBernoulli): _kl_to_continuous_bernoulli,
    (D.Uniform, ContinuousBernoulli): _kl_uniform_continuous_bernoulli,
    (ContinuousBernoulli, Pareto): _kl_continuous_bernoulli_infinity,
    (ContinuousBernoulli, D.Exponential): _kl_continuous_bernoulli_exponential,
    (ContinuousBernoulli, D.Normal): _kl_continuous_bernoulli_normal,
    (ContinuousBernoulli, D.Uniform): _kl_continuous_bernoulli_uniform,
    (D.Exponential, ContinuousBernoulli): D._kl_exponential_infinity, (D.Gamma, ContinuousBernoulli): D._kl_gamma_infinity,
    (Gumbel, ContinuousBernoulli): _infinite_loc, (D.Laplace, ContinuousBernoulli): _infinite_loc,
    (D.Normal, ContinuousBernoulli): _infinite_loc, (Pareto, ContinuousBernoulli): _kl_pareto_infinity,
    (LowRankMultivariateNormal, LowRankMultivariateNormal): _kl_lowrank_lowrank,
    (D.MultivariateNormal, LowRankMultivariateNormal): _kl_mvn_lowrank,
    (LowRankMultivariateNormal, D.MultivariateNormal): _kl_lowrank_mvn,
}
D.add_built_in_kl(_KL_PAIRS)

CLASSES = (TransformedDistribution, LogNormal, Gumbel, HalfNormal, HalfCauchy, Weibull, Pareto, LogisticNormal,
           RelaxedBernoulli, RelaxedOneHotCategorical, Cauchy, Geometric, MixtureSameFamily, NegativeBinomial,
           ContinuousBernoulli, VonMises, Kumaraswamy, FisherSnedecor, LowRankMultivariateNormal, Multinomial,
           LKJCholesky)
# in their modules only, as in PyTorch (torch.distributions.relaxed_bernoulli.LogitRelaxedBernoulli)
MODULE_ONLY = (LogitRelaxedBernoulli, ExpRelaxedCategorical)
