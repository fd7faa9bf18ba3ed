"""What scripts see of functions, classes and modules: PyTorch's and CPython's printing, never gradcli's
insides; PyTorch's names gradcli lacks (NotImplementedError); torch.__version__.

The expected reprs come from the oracle through gradcli/data/torch_api.z (tools/torch_api.py).
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

from conftest import error_line, run_script
from gradcli.language import access, stdlib, torchapi
from gradcli.engine import addresses
from gradcli.engine.tensor import Tensor
from gradcli.session import Session

_ADDRESS = re.compile(r"0x[0-9a-f]+")
_STABLE = re.compile(r"0x7f0000[0-9a-f]{6}")


@pytest.fixture
def stable_ids():
    addresses.use_stable(True)
    yield
    addresses.use_stable(False)


def _reachable():
    """(path, value) for every member of every module, every builtin, every attribute of a tensor and
    every listed attribute of the other values a script reaches."""
    stack = [stdlib.TORCH, stdlib.MATH]
    while stack:
        mod = stack.pop()
        for name, value in mod.members.items():
            yield f"{mod.name}.{name}", value
            if isinstance(value, stdlib.ScriptModule):
                stack.append(value)
                yield mod.name, mod
    for name, value in stdlib.make_builtins(print).items():
        yield name, value
    t = stdlib.TORCH.members["ones"](2, requires_grad=True)
    y = t * 2
    handle = t.register_hook(lambda g: g)
    owners = [t, y.grad_fn, t.shape, [1], "s", (1,), 1, 1.5, True, range(2), stdlib.TORCH.members["float32"],
              stdlib.TORCH.members["default_generator"], handle, t.max(0)]
    for obj in owners:
        for name in sorted(access.attribute_names(obj) | access.attribute_names.__globals__["ALLOWED"].get(
                obj.__class__, frozenset())):
            try:
                value = access.get_attr(obj, name)
            except Exception:        # a property that needs a grad, ...
                continue
            yield f"{type(obj).__name__}.{name}", value


def test_nothing_a_script_reaches_prints_gradcli_internals(stable_ids):
    seen = 0
    for path, value in _reachable():
        for text in (repr(value), str(value)):
            if isinstance(value, Tensor):
                continue
            own = torchapi.text(*path.rsplit(".", 1), "0xADDR") if "." in path else None
            if own is not None and _ADDRESS.sub("0xADDR", text) == own and "gradcli" not in text:
                continue                # PyTorch's own print (F.max_pool2d: boolean_dispatch.<locals>.fn)
            assert "gradcli" not in text and "<locals>" not in text and "lambda" not in text, (path, text)
            for a in _ADDRESS.findall(text):
                assert _STABLE.fullmatch(a), (path, text)      # from the address table, not id()
        seen += 1
    assert seen > 600


def test_functions_classes_and_modules_print_as_pytorch_does(stable_ids):
    checked = 0
    stack = [stdlib.TORCH]
    while stack:
        mod = stack.pop()
        expected = torchapi.text("", mod.name)
        if expected is not None:
            assert repr(mod) == expected
        for name, value in mod.members.items():
            if isinstance(value, stdlib.ScriptModule):
                stack.append(value)
                continue
            expected = torchapi.text(mod.name, name, "0xADDR")
            if expected is None or value.__class__ is not stdlib.Builtin:
                continue
            assert _ADDRESS.sub("0xADDR", repr(value)) == expected, (mod.name, name)
            checked += 1
    t = stdlib.TORCH.members["ones"](2, requires_grad=True)
    for name in sorted(access.TENSOR_METHODS):
        expected = torchapi.text("torch.Tensor", name, "0xADDR", repr(t))
        if expected is not None:
            assert _ADDRESS.sub("0xADDR", repr(access.get_attr(t, name))) == expected, name
            checked += 1
    assert checked > 400


@pytest.mark.parametrize("source, expected", [
    ("print(torch.ones)", "<built-in method ones of type object at 0x7f0000000010>\n"),
    ("print(torch.ones, torch.zeros)", "<built-in method ones of type object at 0x7f0000000010> "
                                       "<built-in method zeros of type object at 0x7f0000000010>\n"),
    ("print(torch.Size, torch.Tensor, torch.dtype)", "<class 'torch.Size'> <class 'torch.Tensor'> <class 'torch.dtype'>\n"),
    ("print(torch.float32, [torch.int64])", "torch.float32 [torch.int64]\n"),
    ("x = torch.ones(2)\nprint(x.add)", "<built-in method add of Tensor object at 0x7f0000000010>\n"),
    ("x = torch.ones(2)\nprint(x.backward)", "<bound method Tensor.backward of tensor([1., 1.])>\n"),
    ("import torch.nn.functional as F\nprint(F.relu, [F.mse_loss])",
     "<function relu at 0x7f0000000010> [<function mse_loss at 0x7f0000000020>]\n"),
    ("def f():\n    pass\nprint(f)", "<function f at 0x7f0000000010>\n"),
    ("print(torch)", "<module 'torch' from 'torch/__init__.py'>\n"),
    ("import torch.nn.functional as F\nprint(F)", "<module 'torch.nn.functional' from 'torch/nn/functional.py'>\n"),
    ("import math\nprint(math, math.sin)", "<module 'math' (built-in)> <built-in function sin>\n"),
    ("print(print, len, range, sorted, list)", "<built-in function print> <built-in function len> <class 'range'> "
                                               "<built-in function sorted> <class 'list'>\n"),
    ("print(torch.no_grad, torch.linalg.norm)", "<class 'torch.autograd.grad_mode.no_grad'> "
                                                "<built-in function linalg_norm>\n"),
    ("print(torch.Generator, torch.autograd.grad)", "<class 'torch._C.Generator'> <function grad at 0x7f0000000010>\n"),
    ("print([1].count)", "<built-in method count of list object at 0x7f0000000010>\n"),
    ("print(torch.__version__, torch.version.__version__)", "2.13.0+cpu 2.13.0+cpu\n"),
])
def test_printing(source, expected):
    out = io.StringIO()
    Session(out=out, stable_ids=True).run_source("import torch\n" + source)
    assert out.getvalue() == expected


def test_print_passes_its_keywords_on():
    assert run_script("print(1, 2, sep='-', end='!')").out == "1-2!"


@pytest.mark.parametrize("source, expected", [
    ("torch.nn.CrossMapLRN2d", "NotImplementedError: gradcli does not implement torch.nn.CrossMapLRN2d"),
    ("torch.distributions.GeneralizedPareto",
     "NotImplementedError: gradcli does not implement torch.distributions.GeneralizedPareto"),
    ("torch.linalg.common_notes", "NotImplementedError: gradcli does not implement torch.linalg.common_notes"),
    ("torch.linalg.eig(torch.eye(2))", "NotImplementedError: gradcli does not implement torch.linalg.eig: its results "
                                       "are complex tensors (complex64/complex128), and gradcli has no complex dtypes"),
    ("torch.linalg.eigvals(torch.eye(2))", "NotImplementedError: gradcli does not implement torch.linalg.eigvals: its "
                                           "results are complex tensors (complex64/complex128), and gradcli has no "
                                           "complex dtypes"),
    ("torch.ones(2).q_scale", "NotImplementedError: gradcli does not implement torch.Tensor.q_scale"),
    ("torch.nn.functional.conv_tbc",
     "NotImplementedError: gradcli does not implement torch.nn.functional.conv_tbc"),
    ("torch.fft.ifft(torch.ones(2, requires_grad=True), out=torch.empty(2, dtype=torch.cfloat))",
     "NotImplementedError: gradcli does not implement torch.fft.ifft of a real tensor that requires grad with out= "
     "(PyTorch returns the output with a NotImplemented grad_fn)"),
    ("torch.fft.rfft(torch.zeros(4, device='meta'))",
     "NotImplementedError: gradcli does not implement torch.fft.rfft of meta tensors"),
    ("torch.autograd.forward_ad.make_dual(1)", "TypeError: make_dual() missing 1 required positional argument: 'tangent'"),
    ("torch.foo", "AttributeError: module 'torch' has no attribute 'foo'"),
    ("torch.nn.foo", "AttributeError: module 'torch.nn' has no attribute 'foo'"),
    ("torch.ones(2).foo", "AttributeError: 'Tensor' object has no attribute 'foo'"),
    ("from torch.nn import CrossMapLRN2d",
     "NotImplementedError: gradcli does not implement torch.nn.CrossMapLRN2d"),
    ("from torch.nn import Foo", "ImportError: cannot import name 'Foo' from 'torch.nn' (unknown location)"),
    ("from torch.distributions import GeneralizedPareto",
     "NotImplementedError: gradcli does not implement torch.distributions.GeneralizedPareto"),
])
def test_pytorch_names_gradcli_lacks(source, expected):
    assert error_line("import torch\n" + source) == expected


def test_a_missing_name_is_an_exit_1_with_its_position(tmp_path, capsys):
    from gradcli import cli
    script = tmp_path / "s.grad"
    script.write_text("import torch\nx = torch.nn.CrossMapLRN2d(3)\n")
    assert cli.main(["run", str(script)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{script}:2:5: NotImplementedError: gradcli does not implement torch.nn.CrossMapLRN2d")


def test_the_data_is_of_the_pytorch_gradcli_mirrors():
    assert torchapi.version() == torchapi.VERSION == "2.13.0+cpu"


def test_start_up_does_not_read_the_data():
    import subprocess
    import sys
    code = ("import gradcli.language.torchapi as t, gradcli.cli as c, io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    c.main(['-c', 'import torch\\nx = torch.ones(2, requires_grad=True)\\n(x * 2).sum().backward()\\nprint(x.grad)'])\n"
            "print(t._table is None)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout == "True\n"


# gradcli's own additions to PyTorch's namespaces, each deliberate
_EXTRAS = {("torch.autograd", "GradcheckError")}     # PyTorch keeps it in torch.autograd.gradcheck
_EXTRAS |= {("torch.optim.lr_scheduler", "_LRScheduler")}      # private (the data lists public names only)
# The data lacks torch.cuda and torch.backends; these names were checked with PyTorch 2.13's CPU build
_EXTRAS |= {("torch", "backends"), ("torch.backends", "mps"), ("torch.backends", "cuda"),
            ("torch.backends.cuda", "is_built"), ("torch.backends.mps", "is_available"), ("torch.backends.mps", "is_built")}
_EXTRAS |= {("torch.cuda", n) for n in ("is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
                                         "seed", "seed_all", "synchronize", "current_device", "get_device_name",
                                         "empty_cache")}

# The data lists torch.distributions' own names and those of .constraints and .kl, not those of its other
# modules; PyTorch 2.13 defines each class in the module named after it (Normal in torch.distributions.normal),
# as its __module__ says
_EXTRAS |= {("torch.distributions.distribution", "Distribution"),
            ("torch.distributions.exp_family", "ExponentialFamily"), ("torch.distributions.normal", "Normal"),
            ("torch.distributions.uniform", "Uniform"), ("torch.distributions.categorical", "Categorical"),
            ("torch.distributions.bernoulli", "Bernoulli"), ("torch.distributions.independent", "Independent"),
            ("torch.distributions.exponential", "Exponential"),
            ("torch.distributions.one_hot_categorical", "OneHotCategorical"), ("torch.distributions.laplace", "Laplace"),
            ("torch.distributions.gamma", "Gamma"), ("torch.distributions.chi2", "Chi2"),
            ("torch.distributions.poisson", "Poisson"), ("torch.distributions.beta", "Beta"),
            ("torch.distributions.dirichlet", "Dirichlet"), ("torch.distributions.studentT", "StudentT"),
            ("torch.distributions.binomial", "Binomial"),
            ("torch.distributions.multivariate_normal", "MultivariateNormal"),
            ("torch.distributions.transformed_distribution", "TransformedDistribution"),
            ("torch.distributions.log_normal", "LogNormal"), ("torch.distributions.gumbel", "Gumbel"),
            ("torch.distributions.half_normal", "HalfNormal"), ("torch.distributions.half_cauchy", "HalfCauchy"),
            ("torch.distributions.weibull", "Weibull"), ("torch.distributions.pareto", "Pareto"),
            ("torch.distributions.logistic_normal", "LogisticNormal"),
            ("torch.distributions.relaxed_bernoulli", "RelaxedBernoulli"),
            ("torch.distributions.relaxed_bernoulli", "LogitRelaxedBernoulli"),
            ("torch.distributions.relaxed_categorical", "RelaxedOneHotCategorical"),
            ("torch.distributions.relaxed_categorical", "ExpRelaxedCategorical"),
            ("torch.distributions.cauchy", "Cauchy"), ("torch.distributions.geometric", "Geometric"),
            ("torch.distributions.mixture_same_family", "MixtureSameFamily"),
            ("torch.distributions.negative_binomial", "NegativeBinomial"),
            ("torch.distributions.continuous_bernoulli", "ContinuousBernoulli"),
            ("torch.distributions.von_mises", "VonMises"), ("torch.distributions.kumaraswamy", "Kumaraswamy"),
            ("torch.distributions.fishersnedecor", "FisherSnedecor"),
            ("torch.distributions.lowrank_multivariate_normal", "LowRankMultivariateNormal"),
            ("torch.distributions.multinomial", "Multinomial"),
            ("torch.distributions.one_hot_categorical", "OneHotCategoricalStraightThrough"),
            ("torch.distributions.lkj_cholesky", "LKJCholesky"), ("torch.distributions.wishart", "Wishart")}
_EXTRAS |= {("torch.distributions.transforms", n) for n in (
    "Transform", "ComposeTransform", "IndependentTransform", "ReshapeTransform", "ExpTransform", "PowerTransform",
    "SigmoidTransform", "SoftplusTransform", "TanhTransform", "AbsTransform", "AffineTransform", "SoftmaxTransform",
    "StickBreakingTransform", "identity_transform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "CumulativeDistributionTransform", "CorrCholeskyTransform", "CatTransform", "StackTransform")}
# nor those of torch.nn.utils.rnn (each checked with PyTorch 2.13)
_EXTRAS |= {("torch.nn.utils.rnn", n) for n in ("PackedSequence", "pad_sequence", "pack_padded_sequence",
                                                "pad_packed_sequence", "pack_sequence", "unpad_sequence",
                                                "unpack_sequence", "invert_permutation")}
# nor those of torch.nn.utils.parametrize and .parametrizations
_EXTRAS |= {("torch.nn.utils.parametrize", n) for n in ("cached", "ParametrizationList", "register_parametrization",
                                                        "is_parametrized", "remove_parametrizations",
                                                        "type_before_parametrizations",
                                                        "transfer_parametrizations_and_params")}
_EXTRAS |= {("torch.nn.utils.parametrizations", n) for n in ("weight_norm", "spectral_norm", "orthogonal")}
# nor torch.backends' switches, properties of module subclasses and of an object dir() lists without them
# (each read and set in tests/engine_cases/backends_flags.txt against PyTorch 2.13)
_EXTRAS |= {("torch.backends.cudnn", n) for n in ("enabled", "benchmark", "deterministic", "allow_tf32",
                                                  "benchmark_limit", "is_available", "version")}
_EXTRAS |= {("torch.backends.mkldnn", n) for n in ("enabled", "is_available")}
_EXTRAS |= {("torch.backends.cuda.matmul", n) for n in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                                                        "allow_bf16_reduced_precision_reduction")}
# torch.nn.utils gains `prune` when a script imports torch.nn.utils.prune (whose names the data has)
_EXTRAS.add(("torch.nn.utils", "prune"))


def test_every_name_gradcli_offers_is_a_pytorch_name():
    """Catches a misspelt or invented member: the data says what PyTorch 2.13 has."""
    stack, unknown = [stdlib.TORCH], []
    while stack:
        mod = stack.pop()
        for name, value in mod.members.items():
            if isinstance(value, stdlib.ScriptModule):
                stack.append(value)
            if not name.startswith("__") and not torchapi.has(mod.name, name) and (mod.name, name) not in _EXTRAS:
                unknown.append(f"{mod.name}.{name}")
    unknown += [f"torch.Tensor.{n}" for n in sorted(access.TENSOR_ATTRS) if not torchapi.has("torch.Tensor", n)]
    assert unknown == []


@pytest.mark.parametrize("expr, type_name", [
    ("x.grad_fn", "MulBackward0"), ("x.grad_fn.next_functions[0][0]", "AccumulateGrad"),
    ("torch.float32", "torch.dtype"), ("x.device", "torch.device"), ("f", "function"),
    ("torch.Generator()", "torch._C.Generator"), ("x.max(0)", "torch.return_types.max"),
    ("torch.no_grad()", "no_grad"), ("x.shape", "torch.Size"),
])
def test_messages_name_types_as_pytorch_does(expr, type_name):
    """As the oracle words it, never gradcli's class (Node, DType, _Device, ScriptFunction, ...)."""
    source = f"import torch\nx = torch.ones(1, requires_grad=True) * 2\ndef f():\n    pass\n{expr}.zzz"
    assert error_line(source) == f"AttributeError: '{type_name}' object has no attribute 'zzz'"
