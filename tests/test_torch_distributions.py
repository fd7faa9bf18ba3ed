"""torch.distributions (gradcli.language.distributions): what the engine cases in
tests/engine_cases/distributions.txt cannot hold: scripts deriving from the classes, the validation default
lasting one session, the corners gradcli refuses, and what a script may not reach through the objects.

Values, gradients, seeded samples, reprs and PyTorch's errors are pinned against the oracle by those
engine cases and by the dist_*.grad goldens in tests/conformance."""

import pytest

from conftest import error_line, gradcli_output, run_script

_IMPORT = "import torch\nfrom torch.distributions import Normal, Categorical, Bernoulli, Uniform, Distribution\n"


def test_a_script_class_derives_from_a_distribution():
    out = gradcli_output(_IMPORT + (
        "class Shifted(Normal):\n"
        "    def __init__(self, loc, scale, shift):\n"
        "        super().__init__(loc + shift, scale)\n"
        "        self.shift = shift\n"
        "s = Shifted(torch.zeros(2), torch.ones(2), 3.0)\n"
        "print(s, type(s).__name__, isinstance(s, Normal), isinstance(s, Distribution), s.mean.tolist())\n"
        "print(torch.distributions.kl_divergence(s, Normal(0.0, 1.0)).tolist())\n"))
    assert out == ("Shifted(loc: torch.Size([2]), scale: torch.Size([2])) Shifted True True [3.0, 3.0]\n"
                   "[4.5, 4.5]\n")


def test_a_subclass_with_its_own_init_needs_its_own_expand():
    assert error_line(_IMPORT + (
        "class S(Normal):\n"
        "    def __init__(self):\n"
        "        super().__init__(0.0, 1.0)\n"
        "S().expand((2,))\n")) == ("NotImplementedError: Subclass S of Normal that defines a custom __init__ method "
                                   "must also define a custom .expand() method.")


def test_a_distribution_of_a_script_uses_the_base_class_machinery():
    out = gradcli_output(_IMPORT + (
        "class Coin(Distribution):\n"
        "    def __init__(self, p):\n"
        "        self.p = p\n"
        "        super().__init__(torch.Size([2]), validate_args=False)\n"
        "    def rsample(self, sample_shape=torch.Size()):\n"
        "        return torch.rand(self._extended_shape(sample_shape)) < self.p\n"
        "c = Coin(0.5)\n"
        "print(c.sample((3,)).shape, c.batch_shape, c.event_shape, c.has_rsample)\n"))
    assert out == "torch.Size([3, 2]) torch.Size([2]) torch.Size([]) False\n"


def test_the_validation_default_lasts_one_session():
    off = _IMPORT + ("Distribution.set_default_validate_args(False)\n"
                     "print(Normal(0.0, -1.0).scale.item())\n")
    assert gradcli_output(off) == "-1.0\n"
    assert error_line(_IMPORT + "Normal(0.0, -1.0)\n").startswith(
        "ValueError: Expected parameter scale (Tensor of shape ()) of distribution Normal(loc: 0.0, scale: -1.0)")


def test_set_default_validate_args_takes_only_a_bool():
    assert error_line(_IMPORT + "Distribution.set_default_validate_args(2)\n") == "ValueError: "


def test_a_nan_concentration_samples_the_smallest_number():
    # PyTorch's rejection loop never ends on NaN; gradcli's sampler gives NaN, which std::max(min, sample)
    # turns into the dtype's smallest normal number, as for every other degenerate sample
    out = gradcli_output(_IMPORT + "d = torch.distributions.Gamma(torch.tensor([float('nan'), 0.0]), 1.0, "
                                   "validate_args=False)\nprint(d.sample().tolist())\n")
    assert out == "[1.1754943508222875e-38, 1.1754943508222875e-38]\n"


def test_kl_divergence_by_bregman_divergence_is_refused_honestly():
    assert error_line(_IMPORT + (
        "from torch.distributions import ExponentialFamily\n"
        "class E(ExponentialFamily):\n"
        "    pass\n"
        "torch.distributions.kl_divergence(E(validate_args=False), E(validate_args=False))\n")) == (
        "NotImplementedError: gradcli does not implement torch.distributions.kl_divergence by Bregman divergence "
        "(for E)")


def test_the_modules_name_their_classes():
    out = gradcli_output("import torch\nfrom torch.distributions.normal import Normal\n"
                         "from torch.distributions.categorical import Categorical\n"
                         "from torch.distributions.kl import kl_divergence\nimport torch.distributions as D\n"
                         "print(Normal is D.Normal, Categorical is D.Categorical, kl_divergence is D.kl_divergence)\n"
                         "print(D.normal, D.kl)\nprint(type(D.Bernoulli(0.5)), D.Uniform)\n")
    assert out == ("True True True\n"
                   "<module 'torch.distributions.normal' from 'torch/distributions/normal.py'> "
                   "<module 'torch.distributions.kl' from 'torch/distributions/kl.py'>\n"
                   "<class 'torch.distributions.bernoulli.Bernoulli'> <class 'torch.distributions.uniform.Uniform'>\n")


def test_names_pytorch_has_and_gradcli_lacks():
    assert error_line("import torch\ntorch.distributions.GeneralizedPareto\n") == (
        "NotImplementedError: gradcli does not implement torch.distributions.GeneralizedPareto")
    assert error_line("import torch\nfrom torch.distributions import constraints\nconstraints.lower_triangular\n") == (
        "NotImplementedError: gradcli does not implement torch.distributions.constraints.lower_triangular")


# What a script may not reach through a distribution: Python's internals behind its objects and functions.
_SETUP = _IMPORT + "n = Normal(torch.zeros(2), torch.ones(2))\nc = Categorical(logits=torch.zeros(3))\n"
_OUTSIDE = "is outside gradcli's language"
ESCAPES = [
    ("n.__reduce__", f"AttributeError: 'Normal' object attribute '__reduce__' {_OUTSIDE}"),
    ("n.__dict__", f"AttributeError: 'Normal' object attribute '__dict__' {_OUTSIDE}"),
    ("c.__dict__['probs']", f"AttributeError: 'Categorical' object attribute '__dict__' {_OUTSIDE}"),
    ("n.sample.__func__", f"AttributeError: 'method' object attribute '__func__' {_OUTSIDE}"),
    ("n.sample.__globals__", f"AttributeError: 'method' object attribute '__globals__' {_OUTSIDE}"),
    ("n._extended_shape.__self__", f"AttributeError: 'method' object attribute '__self__' {_OUTSIDE}"),
    ("Normal.__subclasses__", f"AttributeError: type object 'Normal' attribute '__subclasses__' {_OUTSIDE}"),
    ("Normal.__mro__", f"AttributeError: type object 'Normal' attribute '__mro__' {_OUTSIDE}"),
    ("Normal.sample.__globals__", f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("Normal.sample.__code__", f"AttributeError: 'function' object attribute '__code__' {_OUTSIDE}"),
    ("type(n).__init__.__globals__", f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("Normal.mean.fget.__globals__", f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("Categorical.support.fget.__globals__", f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("Categorical.support.__set__", f"AttributeError: '_DependentProperty' object attribute '__set__' {_OUTSIDE}"),
    ("Categorical.probs._fn", f"AttributeError: 'lazy_property' object attribute '_fn' {_OUTSIDE}"),
    ("Categorical.probs.__get__", f"AttributeError: 'lazy_property' object attribute '__get__' {_OUTSIDE}"),
    ("n.arg_constraints['scale'].__reduce__", f"AttributeError: '_GreaterThan' object attribute '__reduce__' {_OUTSIDE}"),
    ("n.arg_constraints['scale'].check.__globals__",
     f"AttributeError: 'method' object attribute '__globals__' {_OUTSIDE}"),
    ("n.support.__reduce__.__bases__", f"AttributeError: '_Real' object attribute '__reduce__' {_OUTSIDE}"),
    ("Distribution.set_default_validate_args.__globals__",
     f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("torch.distributions.kl.__dict__",
     f"AttributeError: module 'torch.distributions.kl' attribute '__dict__' {_OUTSIDE}"),
    ("torch.distributions.normal.math", "AttributeError: module 'torch.distributions.normal' has no attribute 'math'"),
    ("torch.distributions.kl_divergence.func", "AttributeError: 'function' object has no attribute 'func'"),
    ("torch.distributions.constraints.interval.__subclasses__",
     f"AttributeError: type object '_Interval' attribute '__subclasses__' {_OUTSIDE}"),
    ("torch.distributions.constraints.real.__dict__",
     f"AttributeError: '_Real' object attribute '__dict__' {_OUTSIDE}"),
    ("torch.distributions.Gamma(1.0, 2.0).rsample.__func__",
     f"AttributeError: 'method' object attribute '__func__' {_OUTSIDE}"),
    ("torch.distributions.Chi2.df.fget.__globals__", f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("torch.distributions.Poisson(1.0).__dict__", f"AttributeError: 'Poisson' object attribute '__dict__' {_OUTSIDE}"),
    ("n.loc.numpy()", "AttributeError: 'Tensor' object attribute 'numpy' is outside gradcli's language: scripts cannot "
                      "reach numpy arrays (use .tolist() or .item())"),
    ("torch.distributions.transforms.ExpTransform().__call__.__globals__",
     f"AttributeError: 'method' object attribute '__globals__' {_OUTSIDE}"),
    ("torch.distributions.transforms.ExpTransform().__dict__",
     f"AttributeError: 'ExpTransform' object attribute '__dict__' {_OUTSIDE}"),
    ("torch.distributions.transforms.identity_transform.__reduce__",
     f"AttributeError: 'ComposeTransform' object attribute '__reduce__' {_OUTSIDE}"),
    ("torch.distributions.transforms.AffineTransform.domain.fget.__globals__",
     f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("torch.distributions.LogNormal.loc.fget.__globals__",
     f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("torch.distributions.HalfNormal.cdf.__globals__", f"AttributeError: 'function' object attribute '__globals__' {_OUTSIDE}"),
    ("torch.distributions.HalfCauchy.mode.fget.__code__",
     f"AttributeError: 'function' object attribute '__code__' {_OUTSIDE}"),
    ("torch.distributions.VonMises(0.0, 1.0).sample.__func__",
     f"AttributeError: 'method' object attribute '__func__' {_OUTSIDE}"),
    ("torch.distributions.LogNormal(0.0, 1.0).transforms[0].__class__.__subclasses__",
     f"AttributeError: type object 'ExpTransform' attribute '__subclasses__' {_OUTSIDE}"),
]


@pytest.mark.parametrize("expr, expected", ESCAPES, ids=[e for e, _ in ESCAPES])
def test_scripts_reach_no_internals(expr, expected):
    assert error_line(_SETUP + f"print({expr})\n") == expected


def test_what_an_instance_holds_is_values_of_the_language():
    """Everything in an instance's dict (which a script reaches as attributes) is a tensor, a Size, a number
    or a bool: nothing of Python's or numpy's."""
    from gradcli.engine import factories
    from gradcli.engine.tensor import Size, Tensor
    from gradcli.language import distributions as dist
    t = factories.tensor([0.2, 0.8])
    made = [dist.Normal(t, 1.0), dist.Uniform(0.0, t), dist.Categorical(t), dist.Bernoulli(logits=t),
            dist.Normal(t, t).expand((3, 2)), dist.Exponential(t), dist.Independent(dist.Normal(t, 1.0), 1),
            dist.OneHotCategorical(t), dist.Laplace(t, 2.0)]
    made[2].logits, made[3].probs       # the lazy parameters, computed and kept
    for d in made:
        for name, value in vars(d).items():
            assert value.__class__ in (Tensor, Size, int, bool) or isinstance(value, dist.Distribution), (d, name)


def test_what_the_transformed_and_other_distributions_hold_is_values_of_the_language():
    """The same for the classes of distributions_more and the transforms they hold (lists of transforms, the
    cache's tuple, ContinuousBernoulli's lims)."""
    from gradcli.engine import factories
    from gradcli.engine.tensor import Size, Tensor
    from gradcli.language import distributions as dist, distributions_more as more, transforms
    t = factories.tensor([0.2, 0.8])
    made = [more.LogNormal(t, 1.0), more.Gumbel(t, 2.0), more.HalfNormal(t), more.HalfCauchy(t), more.Weibull(t, 2.0),
            more.Pareto(t, 2.0), more.LogisticNormal(t, 1.0), more.RelaxedBernoulli(t, probs=t),
            more.RelaxedOneHotCategorical(t, logits=t), more.Cauchy(t, 1.0), more.Geometric(t),
            more.MixtureSameFamily(dist.Categorical(t), dist.Normal(t, 1.0)), more.NegativeBinomial(3.0, t),
            more.ContinuousBernoulli(t), more.VonMises(t, 1.0), more.Kumaraswamy(t, 2.0), more.FisherSnedecor(t, 2.0),
            more.LowRankMultivariateNormal(t, factories.ones(2, 1), t)]
    made[14].sample()           # its lazy double copies, kept
    allowed = (Tensor, Size, int, float, bool, tuple, list, type(None))
    seen, stack = set(), list(made)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        values = vars(obj).values() if isinstance(obj, (dist.Distribution, transforms.Transform)) else obj
        for value in values:
            assert value.__class__ in allowed or isinstance(value, (dist.Distribution, transforms.Transform,
                                                                    dist.Constraint)), (obj, value)
            if isinstance(value, (dist.Distribution, transforms.Transform, tuple, list)):
                stack.append(value)


@pytest.mark.parametrize("expr", [
    "Normal(0.0, 1.0).sample((10**6, 10**6))", "Normal(0.0, 1.0).rsample((10**6, 10**6))",
    "Uniform(0.0, 1.0).sample((10**6, 10**6))", "Categorical(logits=torch.zeros(3)).sample((10**6, 10**6))",
    "Bernoulli(0.5).sample((10**6, 10**6))", "Categorical(logits=torch.zeros(3)).expand((10**6, 10**6)).mean",
    "Normal(0.0, 1.0).expand((10**6, 10**6)).log_prob(torch.tensor(0.))",
    "torch.distributions.Cauchy(0.0, 1.0).sample((10**6, 10**6))",
    "torch.distributions.Geometric(0.5).sample((10**6, 10**6))",
    "torch.distributions.Gumbel(0.0, 1.0).sample((10**6, 10**6))",
    "torch.distributions.VonMises(0.0, 1.0).sample((10**6, 10**6))",
    "torch.distributions.LogNormal(0.0, 1.0).rsample((10**6, 10**6))",
    "torch.distributions.RelaxedOneHotCategorical(torch.tensor(1.), logits=torch.zeros(3)).rsample((10**6, 10**6))",
    "torch.distributions.ContinuousBernoulli(0.3).sample((10**6, 10**6))",
    "torch.distributions.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), torch.ones(2)).rsample((10**6, 10**6))",
    "torch.distributions.MixtureSameFamily(Categorical(logits=torch.zeros(2)), Normal(torch.zeros(2), 1.)).sample((10**6, 10**6))",
])
def test_samples_of_a_script_given_size_go_through_the_memory_budget(expr):
    assert "can't allocate memory" in error_line(_IMPORT + f"x = {expr}\n")


_TWO_KLS = _IMPORT + ("from torch.distributions import register_kl, kl_divergence\n"
                      "class A(Normal):\n    pass\n"
                      "class B(Normal):\n    pass\n"
                      "@register_kl(A, Normal)\ndef f(p, q):\n    return torch.tensor(1.0)\n"
                      "@register_kl(Normal, B)\ndef g(p, q):\n    return torch.tensor(2.0)\n")


def test_an_ambiguous_kl_warns_and_takes_the_match_on_p_first():
    result = run_script(_TWO_KLS + "print(kl_divergence(A(0.0, 1.0), B(0.0, 1.0)))\n")
    assert result.out == "tensor(1.)\n"
    assert "RuntimeWarning: Ambiguous kl_divergence(A, B). Please register_kl(A, B)" in result.err


def test_register_kl_lasts_one_session():
    assert gradcli_output(_IMPORT + "from torch.distributions import register_kl, kl_divergence\n"
                          "@register_kl(Normal, Normal)\ndef f(p, q):\n    return torch.tensor(5.0)\n"
                          "print(kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)))\n") == "tensor(5.)\n"
    assert gradcli_output(_IMPORT + "print(torch.distributions.kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)))\n") \
        == "tensor(0.)\n"


def test_sample_n_warns_as_pytorch_does():
    result = run_script(_IMPORT + "torch.manual_seed(0)\nprint(Normal(0.0, 1.0).sample_n(3))\n")
    assert result.out == "tensor([ 1.5410, -0.2934, -2.1788])\n"
    assert "FutureWarning: `sample_n(n)` will be deprecated. Use `sample((n,))` instead." in result.err


def test_a_distribution_without_arg_constraints_warns_when_validating():
    result = run_script(_IMPORT + "class D(Distribution):\n    pass\nD()\n")
    assert result.error is None
    assert ("UserWarning: <class '__main__.D'> does not define `arg_constraints`. Please set `arg_constraints = {}` "
            "or initialize the distribution with `validate_args=False` to turn off validation.") in result.err


def test_von_mises_refuses_a_sample_that_never_accepts():
    # PyTorch's rejection loop never ends on a NaN concentration; gradcli's stops after 1,000 rounds, honestly
    assert error_line(_IMPORT + "torch.distributions.VonMises(torch.tensor([0., 1.]), torch.tensor([float('nan'), 1.]), "
                                "validate_args=False).sample()\n") == (
        "NotImplementedError: gradcli does not implement VonMises.sample for parameters that accept no proposal in "
        "1000 rounds (NaN or infinite ones: PyTorch's loop never ends)")
