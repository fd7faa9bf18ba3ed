"""torch.distributions as scripts use it: Distribution, Normal, Laplace, Uniform, Exponential, Categorical,
OneHotCategorical, Bernoulli, Independent, Gamma, Chi2, Poisson, Dirichlet, Beta, StudentT, Binomial,
MultivariateNormal, their constraints, kl_divergence and register_kl (the transforms and the other classes:
gradcli.language.transforms and gradcli.language.distributions_more, which add their KL pairs here).

Each class is a library class of the language (a ScriptType class, as torch.utils.data.Dataset is): a
script's `class MyNormal(Normal)` derives from it, `type(d)` prints PyTorch's module path. Every method
is PyTorch's sequence of tensor operations, in PyTorch's order, on the engine's own ops: the values,
the float32 bits, the `grad_fn` chains and the random draws (torch.normal, Tensor.normal_, torch.rand,
torch.multinomial, torch.bernoulli on the default generator) are PyTorch's. Everything an instance
holds, and so everything a script can reach through it, is a value of the language (tensors, Sizes,
numbers, dicts of constraints).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from gradcli.engine import autograd, dtypes, factories, ops, typeinfo
from gradcli.engine import distributions as draws
from gradcli.engine.ops import nn as nn_ops
from gradcli.engine.addresses import address
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Size, Tensor
from gradcli.language import devices
from gradcli.language.classes import ScriptObject, ScriptType

_NUMBER = (int, float, bool)
_INF = math.inf
_NAN = math.nan


def _is_number(v) -> bool:
    """isinstance(v, torch.types._Number): an int, float or bool."""
    return isinstance(v, _NUMBER)


def _all_true(valid: Tensor) -> bool:
    """torch._is_all_true: every element of a bool tensor set."""
    return bool(valid._a.all())


def _finfo(dtype):
    """torch.finfo(dtype): the float type's limits (PyTorch's TypeError for an integer or bool dtype, which a
    distribution given integer parameters meets: Gumbel(torch.tensor(0), 1.0))."""
    return typeinfo.finfo(dtype)


def _warn(message: str, category: str = "UserWarning") -> None:
    """A warning at the script's line that made the call (PyTorch's stacklevel=2)."""
    if STATE.warn is not None:
        STATE.warn(category, message)


def broadcast_all(*values) -> tuple:
    """Numbers become tensors of the first tensor's dtype (the default dtype when there is none), then
    everything broadcasts as torch.broadcast_tensors does: a tensor already of the common shape is itself,
    any other its expanded view."""
    if not all(v.__class__ is Tensor or _is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(v.__class__ is Tensor for v in values):
        first = next((v for v in values if v.__class__ is Tensor), None)
        dtype = first.dtype if first is not None else devices.get_default_dtype()
        values = [v if v.__class__ is Tensor else factories.tensor(v, dtype=dtype) for v in values]
    return ops.shape.broadcast_tensors(*values)


class lazy_property:
    """A parameter computed from the other one at its first read (Categorical's probs from its logits),
    then kept in the instance (so the repr names it from then on). Computed with grad enabled, as
    PyTorch does."""

    __slots__ = ("_fn", "_name")

    def __init__(self, fn):
        self._fn = fn
        self._name = fn.__name__

    def __repr__(self):
        return f"<torch.distributions.utils._lazy_property_and_property object at {address(self)}>"

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with autograd.enable_grad():
            value = self._fn(instance)
        setattr(instance, self._name, value)
        return value


# ------------------------------------------------------------------------------------------- constraints

class Constraint(ScriptObject, metaclass=ScriptType):
    """A region of values: `check(value)` is a bool tensor, True where a value lies in it."""

    __module__ = "torch.distributions.constraints"
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Real(Constraint):
    __module__ = "torch.distributions.constraints"

    def check(self, value):
        return value == value           # False at NaN


class _Boolean(Constraint):
    __module__ = "torch.distributions.constraints"
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Bounded(Constraint):
    """A constraint with bounds, printed `Name(lower_bound=..., upper_bound=...)`."""

    __module__ = "torch.distributions.constraints"
    _bounds: tuple = ()

    def __repr__(self):
        inner = ", ".join(f"{name}={getattr(self, name)}" for name in self._bounds)
        return f"{type(self).__name__[1:]}({inner})"


class _GreaterThan(_Bounded):
    __module__ = "torch.distributions.constraints"
    _bounds = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value


class _LessThan(_Bounded):
    __module__ = "torch.distributions.constraints"
    _bounds = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bounded):
    __module__ = "torch.distributions.constraints"
    _bounds = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerInterval(_Interval):
    __module__ = "torch.distributions.constraints"
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _Simplex(Constraint):
    __module__ = "torch.distributions.constraints"
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _IndependentConstraint(Constraint):
    """A constraint over the last `reinterpreted_batch_ndims` dims together (real_vector: real in each)."""

    __module__ = "torch.distributions.constraints"

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.base_constraint.event_dim + n} but got {value.dim()}")
        result = result.reshape(tuple(result.shape[:result.dim() - n]) + (-1,))
        return result.all(-1)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Square(Constraint):
    """Square matrices: one bool per matrix of the batch."""

    __module__ = "torch.distributions.constraints"
    event_dim = 2

    def check(self, value):
        return factories.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=dtypes.bool_)


class _Symmetric(_Square):
    __module__ = "torch.distributions.constraints"

    def check(self, value):
        square = super().check(value)
        if not _all_true(square):
            return square
        return value.isclose(value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factor (PyTorch asks linalg.cholesky_ex's info)."""

    __module__ = "torch.distributions.constraints"

    def check(self, value):
        symmetric = super().check(value)
        if not _all_true(symmetric):
            return symmetric
        return Tensor(np.asarray(ops.linalg.cholesky_array(value._a)[1] == 0))


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""

    __module__ = "torch.distributions.constraints"
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).view(tuple(value.shape[:-2]) + (-1,)).min(-1)[0]
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1)[0]
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal whose rows have unit length (within 10 * n * eps)."""

    __module__ = "torch.distributions.constraints"
    event_dim = 2

    def check(self, value):
        tol = float(_finfo(value.dtype).eps) * value.size(-1) * 10
        row_norm = ops.linalg.norm(value.detach(), dim=-1)
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_row_norm


def _check_dim(dim, value, what="value"):
    if not (-value.dim() <= dim < value.dim()):
        raise AssertionError(f"dim {dim} out of range for {what} with {value.dim()} dimensions")


def _constraint_list(cseq) -> list:
    if not all(isinstance(c, Constraint) for c in cseq):
        raise AssertionError("All elements of cseq must be Constraint instances")
    return list(cseq)


# cat's and stack's is_discrete: whether any of their constraints is
_ANY_DISCRETE = property(lambda self: any(c.is_discrete for c in self.cseq))


class _Cat(Constraint):
    """The constraints of `cseq` on consecutive slices of `lengths` along `dim` (as torch.cat joins them)."""

    __module__ = "torch.distributions.constraints"
    is_discrete = _ANY_DISCRETE

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = _constraint_list(cseq)
        if lengths is None:
            lengths = [1] * len(self.cseq)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        _check_dim(self.dim, value)
        checks = []
        start = 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start = start + length
        return ops.cat(checks, self.dim)


class _Stack(Constraint):
    """The constraints of `cseq` on the slices along `dim` (as torch.stack joins them)."""

    __module__ = "torch.distributions.constraints"
    is_discrete = _ANY_DISCRETE

    def __init__(self, cseq, dim=0):
        self.cseq = _constraint_list(cseq)
        self.dim = dim

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value):
        _check_dim(self.dim, value)
        vs = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return ops.stack([constr.check(v) for v, constr in zip(vs, self.cseq)], self.dim)


class _GreaterThanEq(_Bounded):
    __module__ = "torch.distributions.constraints"
    _bounds = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound <= value


class _HalfOpenInterval(_Interval):
    __module__ = "torch.distributions.constraints"

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _IntegerGreaterThan(_GreaterThanEq):
    __module__ = "torch.distributions.constraints"
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Dependent(Constraint):
    """A constraint that depends on the distribution's parameters (the support of Categorical and
    Uniform): never checked as an argument; its is_discrete and event_dim only if it was given them."""

    __module__ = "torch.distributions.constraints"

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


class _DependentProperty(property, _Dependent):
    """A property on an instance (the support computed from its parameters), a dependent constraint on the
    class; `@constraints.dependent_property(is_discrete=..., event_dim=...)` gives it those."""

    __module__ = "torch.distributions.constraints"

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _OneHot(Constraint):
    __module__ = "torch.distributions.constraints"
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        is_normalized = value.sum(-1).eq(1)
        return is_boolean.all(-1) & is_normalized


class _Multinomial(Constraint):
    """Nonnegative counts whose sum is at most upper_bound (PyTorch's weaker check than the sum's equality)."""

    __module__ = "torch.distributions.constraints"
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


class MixtureSameFamilyConstraint(Constraint):
    """The support of a MixtureSameFamily: its component's constraint, checked with the components' dim put back."""

    __module__ = "torch.distributions.constraints"

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


dependent = _Dependent()
real = _Real()
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
real_vector = _IndependentConstraint(real, 1)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
one_hot = _OneHot()
square = _Square()
symmetric = _Symmetric()
positive_definite = _PositiveDefinite()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()

# torch.distributions.constraints as scripts reach it: the constraints, and the classes of those with bounds
CONSTRAINTS = {"Constraint": Constraint, "dependent": dependent, "dependent_property": _DependentProperty,
               "is_dependent": is_dependent, "independent": _IndependentConstraint, "boolean": boolean,
               "real": real, "real_vector": real_vector, "positive": positive, "nonnegative": nonnegative,
               "unit_interval": unit_interval, "simplex": simplex, "nonnegative_integer": nonnegative_integer,
               "positive_integer": positive_integer, "one_hot": one_hot, "interval": _Interval,
               "half_open_interval": _HalfOpenInterval,
               "greater_than": _GreaterThan, "greater_than_eq": _GreaterThanEq, "less_than": _LessThan,
               "integer_interval": _IntegerInterval, "square": square, "symmetric": symmetric,
               "positive_definite": positive_definite, "lower_cholesky": lower_cholesky,
               "MixtureSameFamilyConstraint": MixtureSameFamilyConstraint, "multinomial": _Multinomial,
               "corr_cholesky": corr_cholesky, "cat": _Cat, "stack": _Stack}


# ------------------------------------------------------------------------------------------ the classes

class Distribution(ScriptObject, metaclass=ScriptType):
    """The base of the distributions: batch and event shapes, argument and sample validation, the repr."""

    __module__ = "torch.distributions.distribution"
    has_rsample = False
    has_enumerate_support = False
    _validate_args = True

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                _warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` or "
                      "initialize the distribution with `validate_args=False` to turn off validation.")
            for param, constraint in arg_constraints.items():
                if is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue            # the parameter not given: checked through the one that was
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    def sample(self, sample_shape=Size()):
        with autograd.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError

    def sample_n(self, n):
        _warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", "FutureWarning")
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        if value.__class__ is not Tensor:
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs "
                                 f"{expected}.")
        try:
            support = self.support
        except NotImplementedError:
            _warn(f"{self.__class__} does not define `support` to enable sample validation. Please initialize the "
                  "distribution with `validate_args=False` to turn off validation.")
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not _all_true(support.check(value)):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                             f"to be within the support ({support!r}) of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ is not cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return object.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        d = self.__dict__
        names = [k for k in self.arg_constraints if k in d]
        args = ", ".join(f"{p}: {d[p] if d[p].numel() == 1 else d[p].size()}" for p in names)
        return f"{type(self).__name__}({args})"


def _expanded(d, cls, batch_shape, _instance, names, event=()):
    """`d.expand(batch_shape)`: a distribution of d's class whose parameters (those of `names` d holds) are
    views expanded to batch_shape + event, not validated again; probs or logits, whichever it has (logits
    if both), is its `_param`, and a Categorical keeps its number of events."""
    new = d._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        if name in d.__dict__:
            value = getattr(d, name).expand(batch_shape + Size(event))
            setattr(new, name, value)
            if "_param" in d.__dict__:
                new._param = value
    if event:
        new._num_events = d._num_events
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = d._validate_args
    return new


def _loc_scale_init(d, loc, scale, validate_args):
    """The __init__ of Normal and Laplace: loc and scale broadcast, a batch shape unless both are numbers."""
    d.loc, d.scale = broadcast_all(loc, scale)
    batch_shape = Size() if _is_number(loc) and _is_number(scale) else d.loc.size()
    Distribution.__init__(d, batch_shape, validate_args=validate_args)


_LOC = property(lambda self: self.loc,
                doc="The location: the mean and the mode of Normal, Laplace and MultivariateNormal.")


class ExponentialFamily(Distribution):
    __module__ = "torch.distributions.exp_family"


class Normal(ExponentialFamily):
    """N(loc, scale²)."""

    __module__ = "torch.distributions.normal"
    arg_constraints = {"loc": real, "scale": positive}
    support = real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        _loc_scale_init(self, loc, scale, validate_args)

    mean = mode = _LOC

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Normal, batch_shape, _instance, ("loc", "scale"))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with autograd.no_grad():
            return factories.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = factories.empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value):
        return self.loc + self.scale * ops.special.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Laplace(Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale)."""

    __module__ = "torch.distributions.laplace"
    arg_constraints = {"loc": real, "scale": positive}
    support = real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        _loc_scale_init(self, loc, scale, validate_args)

    mean = mode = _LOC

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = float(_finfo(self.loc.dtype).eps)
        u = factories.empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class Uniform(Distribution):
    """U[low, high)."""

    __module__ = "torch.distributions.uniform"
    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": _LessThan(self.high), "high": _GreaterThan(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = Size() if _is_number(low) and _is_number(high) else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return _NAN * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Uniform, batch_shape, _instance, ("low", "high"))

    @_DependentProperty
    def support(self):
        return _Interval(self.low, self.high)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        rand = factories.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return lb.mul(ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(ExponentialFamily):
    """Rate λ: density λ·exp(-λx) on x ≥ 0."""

    __module__ = "torch.distributions.exponential"
    arg_constraints = {"rate": positive}
    support = nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if _is_number(rate) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return factories.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Exponential, batch_shape, _instance, ("rate",))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return factories.empty(shape, dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


def _probs_to_logits(probs, is_binary=False):
    eps = float(_finfo(probs.dtype).eps)
    clamped = probs.clamp(min=eps, max=1 - eps)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


def _logits_to_probs(logits, is_binary=False):
    if is_binary:
        return logits.sigmoid()
    return nn_ops.functional_softmax(logits, dim=-1)


def _binary_parameters() -> tuple:
    """Bernoulli's and Binomial's parameters: logits (log-odds) computed from probs or probs from logits at
    the first read, and the shape of the one given."""
    def logits(self):
        return _probs_to_logits(self.probs, is_binary=True)

    def probs(self):
        return _logits_to_probs(self.logits, is_binary=True)

    return lazy_property(logits), lazy_property(probs), property(lambda self: self._param.size())


_BINARY_PARAMETERS = _binary_parameters()


def _binary_param(d, probs, logits) -> Size:
    """Bernoulli's (and LogitRelaxedBernoulli's) probs or logits, whichever was given, as a tensor (also `_param`);
    the batch shape: its shape, none for a number."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        (d.probs,) = broadcast_all(probs)
        d._param = d.probs
    else:
        (d.logits,) = broadcast_all(logits)
        d._param = d.logits
    return Size() if _is_number(probs if probs is not None else logits) else d._param.size()


class Categorical(Distribution):
    """One of K classes, by probabilities (normalised to sum 1) or logits (normalised by logsumexp)."""

    __module__ = "torch.distributions.categorical"
    arg_constraints = {"probs": simplex, "logits": real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Categorical, batch_shape, _instance, ("probs", "logits"), (self._num_events,))

    @_DependentProperty
    def support(self):
        return _IntegerInterval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return _probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return _logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return factories.full(self._extended_shape(), _NAN, dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return factories.full(self._extended_shape(), _NAN, dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = draws.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_all(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = float(_finfo(self.logits.dtype).min)
        logits = self.logits.clamp(min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        values = factories.arange(self._num_events, dtype=dtypes.int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


def _categorical_expanded(d, cls, batch_shape, _instance):
    """`d.expand(batch_shape)` for a distribution that holds a Categorical (`_categorical`) and its temperature
    if it has one (OneHotCategorical, ExpRelaxedCategorical)."""
    new = d._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    if "temperature" in d.__dict__:
        new.temperature = d.temperature
    new._categorical = d._categorical.expand(batch_shape)
    Distribution.__init__(new, batch_shape, d.event_shape, validate_args=False)
    new._validate_args = d._validate_args
    return new


# probs, logits and param_shape of a distribution that holds a Categorical: the Categorical's
_CATEGORICAL_PARAMETERS = (property(lambda self: self._categorical.probs), property(lambda self: self._categorical.logits),
                           property(lambda self: self._categorical.param_shape))


class OneHotCategorical(Distribution):
    """A Categorical whose samples are one-hot vectors (the event dim is the classes')."""

    __module__ = "torch.distributions.one_hot_categorical"
    arg_constraints = {"probs": simplex, "logits": real_vector}
    support = one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _categorical_expanded(self, OneHotCategorical, batch_shape, _instance)

    @property
    def _param(self):
        return self._categorical._param

    probs, logits, param_shape = _CATEGORICAL_PARAMETERS

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        mode = probs.argmax(dim=-1)
        return nn_ops.one_hot(mode, num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return nn_ops.one_hot(indices, num_events).to(probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = factories.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A OneHotCategorical whose rsample passes the gradient of probs straight through the one-hot sample."""

    __module__ = "torch.distributions.one_hot_categorical"
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Bernoulli(ExponentialFamily):
    """1 with probability p, else 0; by probs or logits (log-odds)."""

    __module__ = "torch.distributions.bernoulli"
    arg_constraints = {"probs": unit_interval, "logits": real}
    support = boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(_binary_param(self, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Bernoulli, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = _NAN
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    logits, probs, param_shape = _BINARY_PARAMETERS

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with autograd.no_grad():
            return draws.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -nn_ops.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return nn_ops.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = factories.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


def _sum_rightmost(value, dim):
    """The sum over the last `dim` dims (none: the value itself)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


class Independent(Distribution):
    """A distribution whose last `reinterpreted_batch_ndims` batch dims count as event dims: log_prob and
    entropy sum over them."""

    __module__ = "torch.distributions.independent"
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        batch_shape = shape[:len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim:]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape + self.event_shape[:self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @_DependentProperty
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = _IndependentConstraint(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


def _as_tensor(value, dtype):
    """torch.as_tensor(value, dtype=dtype): a number as a tensor of dtype, a tensor converted to it."""
    if value.__class__ is Tensor:
        return value if value.dtype is dtype else value.to(dtype)
    return factories.tensor(value, dtype=dtype)


class Gamma(ExponentialFamily):
    """Shape `concentration` (alpha) and `rate` (beta): density beta^alpha x^(alpha-1) e^(-beta x) / Gamma(alpha)."""

    __module__ = "torch.distributions.gamma"
    arg_constraints = {"concentration": positive, "rate": positive}
    support = nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = Size() if _is_number(concentration) and _is_number(rate) else self.concentration.size()
        Distribution.__init__(self, batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = draws.standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=float(_finfo(value.dtype).tiny))     # not recorded
        return value

    def log_prob(self, value):
        value = _as_tensor(value, self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        xlogy = ops.elementwise.xlogy
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - ops.special.lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ops.igamma.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + ops.special.lgamma(c) + (1.0 - c) * ops.special.digamma(c)


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""

    __module__ = "torch.distributions.chi2"
    arg_constraints = {"df": positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class Poisson(ExponentialFamily):
    """Counts with mean `rate`: rate^k e^(-rate) / k!."""

    __module__ = "torch.distributions.poisson"
    arg_constraints = {"rate": nonnegative}
    support = nonnegative_integer

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if _is_number(rate) else self.rate.size()
        Distribution.__init__(self, batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Poisson, batch_shape, _instance, ("rate",))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with autograd.no_grad():
            return draws.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - ops.special.lgamma(value + 1)


def _clamp_by_zero(x):
    """clamp(x, min=0) with a gradient of 1/2 at 0."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _count_and_param(d, total_count, probs, logits) -> None:
    """Binomial's and NegativeBinomial's parameters: total_count broadcast with probs or logits (whichever was
    given, also `_param`) and of its dtype."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        d.total_count, d.probs = broadcast_all(total_count, probs)
        d.total_count = d.total_count.type_as(d.probs)
    else:
        d.total_count, d.logits = broadcast_all(total_count, logits)
        d.total_count = d.total_count.type_as(d.logits)
    d._param = d.probs if probs is not None else d.logits


def _count_and_param_expanded(d, cls, batch_shape, _instance):
    new = d._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    new.total_count = d.total_count.expand(batch_shape)
    for name in ("probs", "logits"):
        if name in d.__dict__:
            setattr(new, name, getattr(d, name).expand(batch_shape))
            new._param = getattr(new, name)
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = d._validate_args
    return new


class Binomial(Distribution):
    """The number of successes in `total_count` trials of probability `probs` (or log-odds `logits`)."""

    __module__ = "torch.distributions.binomial"
    arg_constraints = {"total_count": nonnegative_integer, "probs": unit_interval, "logits": real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _count_and_param(self, total_count, probs, logits)
        Distribution.__init__(self, self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _count_and_param_expanded(self, Binomial, batch_shape, _instance)

    @_DependentProperty(is_discrete=True, event_dim=0)
    def support(self):
        return _IntegerInterval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    logits, probs, param_shape = _BINARY_PARAMETERS

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with autograd.no_grad():
            return draws.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lgamma = ops.special.lgamma
        log_factorial_n = lgamma(self.total_count + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(self.total_count - value + 1)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * (-self.logits.abs()).exp().log1p() - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = factories.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`."""

    __module__ = "torch.distributions.studentT"
    arg_constraints = {"df": positive, "loc": real, "scale": positive}
    support = real
    has_rsample = True

    @property
    def mean(self):
        m = self.loc.clone()        # (contiguous: the parameters are dense or expanded)
        m[self.df <= 1] = _NAN
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.df.clone()
        big = self.df > 2
        m[big] = self.scale[big].pow(2) * self.df[big] / (self.df[big] - 2)
        m[(self.df <= 2) & (self.df > 1)] = _INF
        m[self.df <= 1] = _NAN
        return m

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        Distribution.__init__(self, self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = factories.empty(shape, dtype=self.df.dtype).normal_()
        z = self._chi2.rsample(sample_shape)
        y = x * (z / self.df).rsqrt()
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lgamma = ops.special.lgamma
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df)
             - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def entropy(self):
        lgamma, digamma = ops.special.lgamma, ops.special.digamma
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class Dirichlet(ExponentialFamily):
    """Points of the simplex with density proportional to prod x_i^(concentration_i - 1)."""

    __module__ = "torch.distributions.dirichlet"
    arg_constraints = {"concentration": _IndependentConstraint(positive, 1)}
    support = simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        Distribution.__init__(self, Size(shape[:-1]), Size(shape[-1:]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return draws.dirichlet_rsample(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (ops.elementwise.xlogy(c - 1.0, value).sum(-1) + ops.special.lgamma(c.sum(-1))
                - ops.special.lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = nn_ops.one_hot(mode[mask].argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        lgamma, digamma = ops.special.lgamma, ops.special.digamma
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))


class Beta(ExponentialFamily):
    """A Dirichlet on two coordinates, the first of which is the sample: density x^(a-1) (1-x)^(b-1) / B(a, b)."""

    __module__ = "torch.distributions.beta"
    arg_constraints = {"concentration1": positive, "concentration0": positive}
    support = unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if _is_number(concentration1) and _is_number(concentration0):
            both = factories.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = ops.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        Distribution.__init__(self, self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ops.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]


# ------------------------------------------------------------------------------------ MultivariateNormal

def _batch_mv(bmat, bvec):
    return ops.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for batches of L and x whose shapes broadcast, by PyTorch's reshapes and one batched
    triangular solve (the same ops in the same order)."""
    n = bx.size(-1)
    bx_batch_shape = bx.shape[:-1]
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    bx_new_shape = tuple(bx.shape[:outer_batch_dims])
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += (sx // sL, sL)
    bx_new_shape += (n,)
    bx = bx.reshape(bx_new_shape)
    permute_dims = (list(range(outer_batch_dims)) + list(range(outer_batch_dims, new_batch_dims, 2))
                    + list(range(outer_batch_dims + 1, new_batch_dims, 2)) + [new_batch_dims])
    bx = bx.permute(permute_dims)
    flat_L = bL.reshape(-1, n, n)
    flat_x = bx.reshape(-1, flat_L.size(0), n)
    flat_x_swap = flat_x.permute(1, 2, 0)
    M_swap = ops.linalg.solve_triangular(flat_L, flat_x_swap, upper=False).pow(2).sum(-2)
    M = M_swap.t()
    permuted_M = M.reshape(tuple(bx.shape[:-1]))
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    reshaped_M = permuted_M.permute(permute_inv_dims)
    return reshaped_M.reshape(tuple(bx_batch_shape))


def _precision_to_scale_tril(P):
    """The Cholesky factor of P^-1: the reversed Cholesky factor of the reversed P, inverted."""
    Lf = ops.linalg.cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    Id = factories.eye(P.shape[-1], dtype=P.dtype)
    return ops.linalg.solve_triangular(L_inv, Id, upper=False)


def _matrix_batch(name, value, loc):
    """The batch shape of a matrix parameter with loc's, after PyTorch's check of its dims."""
    if value.__class__ is not Tensor:
        raise AttributeError(f"'{type(value).__name__}' object has no attribute 'dim'")
    if value.dim() < 2:
        raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
    return ops.shape.torch_broadcast_shapes(value.shape[:-2], loc.shape[:-1])


class MultivariateNormal(Distribution):
    """N(loc, covariance_matrix), given by the covariance, the precision matrix or the Cholesky factor
    scale_tril; every computation goes through the (unbroadcast) Cholesky factor, as in PyTorch."""

    __module__ = "torch.distributions.multivariate_normal"
    arg_constraints = {"loc": real_vector, "covariance_matrix": positive_definite,
                       "precision_matrix": positive_definite, "scale_tril": lower_cholesky}
    support = real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.__class__ is not Tensor:
            raise AttributeError(f"'{type(loc).__name__}' object has no attribute 'dim'")
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        if scale_tril is not None:
            batch_shape = _matrix_batch("scale_tril matrix", scale_tril, loc)
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            batch_shape = _matrix_batch("covariance_matrix", covariance_matrix, loc)
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            batch_shape = _matrix_batch("precision_matrix", precision_matrix, loc)
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        Distribution.__init__(self, batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ops.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ops.matmul(L, L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return ops.linalg.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    mean = mode = _LOC

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = factories.empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._half_log_det()
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)


def reset_defaults() -> None:
    """A new session's defaults: arguments validated and PyTorch's KL functions only
    (Distribution.set_default_validate_args and register_kl last one session)."""
    Distribution._validate_args = True
    _KL_REGISTRY.clear()
    _KL_REGISTRY.update(_BUILT_IN_KL)
    _KL_MEMOIZE.clear()


# ----------------------------------------------------------------------------------------- kl_divergence

def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = _INF
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


def _kl_bernoulli_bernoulli(p, q):
    softplus = ops.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1[q.probs == 0] = _INF
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2[q.probs == 1] = _INF
    t2[p.probs == 1] = 0
    return t1 + t2


def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = _INF
    return result


def _kl_normal_infinity(p, q):      # (and Laplace's: an infinite KL for each of p's locations)
    return factories.full_like(p.loc, _INF)


def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                                  "                            be computed using Bregman divergences")
    raise NotImplementedError("gradcli does not implement torch.distributions.kl_divergence by Bregman divergence "
                              f"(for {type(p).__name__})")


def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    t1 = -rate_ratio.log()
    return t1 + rate_ratio - 1


def _kl_exponential_infinity(p, q):
    return factories.full_like(p.rate, _INF)


def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    result[p.low < q.support.lower_bound] = _INF
    return result


def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * scale_sqr_var_ratio / math.pi).log()
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = scale_ratio.log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * (math.sqrt(0.5) * loc_diff_scale_ratio).erf()
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


_EULER_GAMMA = 0.57721566490153286060


def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = ops.special.lgamma(q.concentration) - ops.special.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ops.special.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


def _kl_gamma_infinity(p, q):
    return factories.full_like(p.concentration, _INF)


def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    lgamma, digamma = ops.special.lgamma, ops.special.digamma
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - p.concentration - lgamma(p.concentration)
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * digamma(p.concentration) + (t2 - t3 + t4) / var_normal


def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return (t1 + ratio + ops.special.lgamma(q.concentration) + q.concentration * _EULER_GAMMA
            - (1 + _EULER_GAMMA))


def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = ops.special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    result[p.low < q.support.lower_bound] = _INF
    return result


def _x_log_x(tensor):
    return tensor * tensor.log()


def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _kl_poisson_infinity(p, q):
    return factories.full_like(p.rate, _INF)


def _kl_binomial_binomial(p, q):
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    inf_idxs = p.total_count > q.total_count
    kl[inf_idxs] = factories.full_like(kl[inf_idxs], _INF)
    return kl


def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


def _kl_beta_beta(p, q):
    lgamma, digamma = ops.special.lgamma, ops.special.digamma
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_params_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_params_q)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


def _kl_dirichlet_dirichlet(p, q):
    lgamma, digamma = ops.special.lgamma, ops.special.digamma
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = lgamma(sum_p_concentration) - lgamma(sum_q_concentration)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p_concentration).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


def _kl_beta_infinity(p, q):
    return factories.full_like(p.concentration1, _INF)


def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))


def _kl_beta_gamma(p, q):
    digamma = ops.special.digamma
    t1 = -p.entropy()
    t2 = ops.special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (digamma(p.concentration1) - digamma(p.concentration1 + p.concentration0))
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


def _kl_beta_normal(p, q):
    e_beta = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (e_beta * (1 - e_beta) / (p.concentration1 + p.concentration0 + 1) + e_beta.pow(2)) * 0.5
    t4 = q.loc * e_beta
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    result[(q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)] = _INF
    return result


def _kl_uniform_beta(p, q):
    lgamma = ops.special.lgamma
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term) / common_term
    t4 = lgamma(q.concentration1) + lgamma(q.concentration0) - lgamma(q.concentration1 + q.concentration0)
    result = t3 + t4 - t1 - t2
    result[(p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)] = _INF
    return result


def _batch_trace_XXT(bmat):
    n = bmat.size(-1)
    m = bmat.size(-2)
    flat_trace = bmat.reshape(-1, m * n).pow(2).sum(-1)
    return flat_trace.reshape(tuple(bmat.shape[:-2]))


def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with" + " " * 26
                         + "different event shapes cannot be computed")
    half_term1 = q._half_log_det() - p._half_log_det()
    combined_batch_shape = Size(ops.shape.broadcast_shapes(tuple(q._unbroadcasted_scale_tril.shape[:-2]),
                                                           tuple(p._unbroadcasted_scale_tril.shape[:-2])))
    n = p.event_shape[0]
    q_scale_tril = q._unbroadcasted_scale_tril.expand(combined_batch_shape + (n, n))
    p_scale_tril = p._unbroadcasted_scale_tril.expand(combined_batch_shape + (n, n))
    term2 = _batch_trace_XXT(ops.linalg.solve_triangular(q_scale_tril, p_scale_tril, upper=False))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, (q.loc - p.loc))
    return half_term1 + 0.5 * (term2 + term3 - n)


def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# PyTorch's registry for these classes, and the pairs a script registers (register_kl) for the session
_BUILT_IN_KL = {
    (Bernoulli, Bernoulli): _kl_bernoulli_bernoulli, (Categorical, Categorical): _kl_categorical_categorical,
    (ExponentialFamily, ExponentialFamily): _kl_expfamily_expfamily, (Normal, Normal): _kl_normal_normal,
    (Uniform, Uniform): _kl_uniform_uniform, (Normal, Uniform): _kl_normal_infinity,
    (Uniform, Normal): _kl_uniform_normal, (Independent, Independent): _kl_independent_independent,
    (Exponential, Exponential): _kl_exponential_exponential, (Exponential, Uniform): _kl_exponential_infinity,
    (Exponential, Normal): _kl_exponential_normal, (Normal, Exponential): _kl_normal_infinity,
    (Uniform, Exponential): _kl_uniform_exponential,
    (OneHotCategorical, OneHotCategorical): _kl_onehotcategorical_onehotcategorical,
    (Laplace, Laplace): _kl_laplace_laplace, (Laplace, Uniform): _kl_normal_infinity,
    (Laplace, Exponential): _kl_normal_infinity, (Laplace, Normal): _kl_laplace_normal,
    (Normal, Laplace): _kl_normal_laplace, (Gamma, Gamma): _kl_gamma_gamma, (Gamma, Uniform): _kl_gamma_infinity,
    (Gamma, Exponential): _kl_gamma_exponential, (Gamma, Normal): _kl_gamma_normal,
    (Exponential, Gamma): _kl_exponential_gamma, (Laplace, Gamma): _kl_normal_infinity,
    (Normal, Gamma): _kl_normal_infinity, (Uniform, Gamma): _kl_uniform_gamma, (Poisson, Poisson): _kl_poisson_poisson,
    (Bernoulli, Poisson): _kl_bernoulli_poisson, (Poisson, Bernoulli): _kl_poisson_infinity,
    (Beta, Beta): _kl_beta_beta, (Dirichlet, Dirichlet): _kl_dirichlet_dirichlet, (Beta, Exponential): _kl_beta_exponential,
    (Beta, Gamma): _kl_beta_gamma, (Beta, Normal): _kl_beta_normal, (Beta, Uniform): _kl_beta_uniform,
    (Uniform, Beta): _kl_uniform_beta, (Exponential, Beta): _kl_exponential_infinity, (Gamma, Beta): _kl_gamma_infinity,
    (Laplace, Beta): _kl_normal_infinity, (Normal, Beta): _kl_normal_infinity,
    (Binomial, Binomial): _kl_binomial_binomial,
    (MultivariateNormal, MultivariateNormal): _kl_multivariatenormal_multivariatenormal, (Poisson, Binomial): _kl_poisson_infinity}
_KL_REGISTRY = dict(_BUILT_IN_KL)
_KL_MEMOIZE: dict = {}


def add_built_in_kl(pairs: dict) -> None:
    """PyTorch's pairs for the classes of another module (gradcli.language.distributions_more), added when it
    loads: they stay through reset_defaults, as this module's own do."""
    _BUILT_IN_KL.update(pairs)
    _KL_REGISTRY.update(pairs)
    _KL_MEMOIZE.clear()


def register_kl(type_p, type_q):
    """A decorator registering `fun(p, q)` as KL(p || q) for p of type_p and q of type_q (and their subclasses)."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


@functools.total_ordering
class _Match:
    """A registered pair, ordered by how specific it is (a pair of subclasses before their bases)."""

    __slots__ = ("types",)

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """PyTorch's choice: the most specific registered pair, by p's class first; a warning when ordering by
    q's class first would choose another function."""
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    if left_fun is not _KL_REGISTRY[right_p, right_q]:
        if STATE.warn is not None:
            STATE.warn("RuntimeWarning", f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                                         f"Please register_kl({left_p.__name__}, {right_q.__name__})")
    return left_fun


def kl_divergence(p, q):
    """KL(p || q), by the function registered for the pair of classes."""
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


CLASSES = (Distribution, ExponentialFamily, Normal, Uniform, Categorical, Bernoulli, Independent, Exponential,
           OneHotCategorical, OneHotCategoricalStraightThrough, Laplace, Gamma, Chi2, Poisson, Dirichlet, Beta, StudentT, Binomial, MultivariateNormal)
