"""torch.func (gradcli/engine/functorch.py): grad, grad_and_value, vjp, jacrev and vmap against what
PyTorch 2.13 prints for the same lines (captured from it), their errors with the script's line and
column, what stays as PyTorch has it after an error, and the sandbox around the functions they return.
The longer tutorial-style scripts are goldens: tests/conformance/torchfunc_*.grad."""

from __future__ import annotations

import pytest

from conftest import gradcli_output, located_error, normalize, run_script
from gradcli import cli
from gradcli.engine import functorch
from gradcli.engine.state import STATE

T = "import torch\nfrom torch.func import grad, grad_and_value, vjp, jacrev, vmap, jvp, jacfwd, hessian\n"

# (script lines after T, what PyTorch 2.13 prints)
OUTPUTS = [
    ("print(grad(lambda x: (x ** 2).sum())(torch.tensor([1., 2., 3.])))", "tensor([2., 4., 6.])\n"),
    # a result stays in the enclosing graph when its input requires grad
    ("x = torch.tensor([1., 2., 3.], requires_grad=True)\nprint(grad(lambda t: (t ** 2).sum())(x))",
     "tensor([2., 4., 6.], grad_fn=<MulBackward0>)\n"),
    ("x = torch.ones(3, requires_grad=True)\nprint(grad(lambda t: t.sum())(x))", "tensor([1., 1., 1.])\n"),
    ("x = torch.ones(3, requires_grad=True)\nprint(vjp(lambda t: t, x)[0])", "tensor([1., 1., 1.], requires_grad=True)\n"),
    ("x = torch.ones(3, requires_grad=True)\nprint(jacrev(lambda t: t * 2)(x))",
     "tensor([[2., 0., 0.],\n        [0., 2., 0.],\n        [0., 0., 2.]])\n"),
    ("w = torch.tensor([1., 2., 3.], requires_grad=True)\nprint(grad(lambda t: (w * t ** 2).sum())(torch.ones(3)))",
     "tensor([2., 4., 6.], grad_fn=<MulBackward0>)\n"),
    # higher order, and a closure over the outer variable (the inner level treats it as a constant)
    ("print(grad(grad(grad(lambda t: t ** 4)))(torch.tensor(2.)))", "tensor(48.)\n"),
    ("x = torch.tensor([1., 2.])\nprint(grad(lambda a: grad(lambda b: (a * b).sum())(a).sum())(x))",
     "tensor([1., 1.])\n"),
    ("x = torch.tensor([1., 2.])\nprint(grad(lambda a: (grad(lambda b: (b ** 2).sum())(a) * a).sum())(x))",
     "tensor([4., 8.])\n"),
    # jacrev's rows are vector-Jacobian products: -0. where PyTorch has it, +0. where two outputs add
    ("print(jacrev(lambda t: t.sin())(torch.tensor([1., 2.])))",
     "tensor([[ 0.5403, -0.0000],\n        [ 0.0000, -0.4161]])\n"),
    ("print(jacrev(lambda t: (t.sin(), t.sum()))(torch.tensor([1., 2.]))[0])",
     "tensor([[ 0.5403,  0.0000],\n        [ 0.0000, -0.4161]])\n"),
    ("print(grad(lambda x, y: (x * y).sum())(torch.ones(2), 2))", "tensor([2., 2.])\n"),
    ("print(grad(lambda d: d['a'].sum())({'a': torch.ones(2)}))", "{'a': tensor([1., 1.])}\n"),
    ("print(grad(lambda x, y: x.sum(), argnums=True)(torch.ones(2), torch.ones(1)))", "tensor([0.])\n"),
    ("print(vmap(lambda x: x.sum(), in_dims=1, out_dims=-1)(torch.ones(2, 3)))", "tensor([2., 2., 2.])\n"),
    ("print(vmap(lambda x: torch.ones(2), out_dims=None)(torch.ones(3)))", "tensor([1., 1.])\n"),
    ("print(vmap(lambda x: x.sum())(torch.ones(0, 3)))", "tensor([])\n"),
    ("print(vmap(lambda x: x * 2, chunk_size=1)(torch.ones(2)))", "tensor([2., 2.])\n"),
    ("torch.manual_seed(0)\nprint(vmap(lambda x: torch.randn(3), randomness='different')(torch.ones(6, 1))[5])\n"
     "print(torch.randn(2))", "tensor([-0.8437,  0.9318,  1.2590])\ntensor([0.4087, 1.4214])\n"),
    ("torch.manual_seed(0)\nprint(vmap(lambda x: torch.randperm(5), randomness='different')(torch.ones(3)))",
     "tensor([[4, 0, 1, 3, 2],\n        [3, 4, 0, 1, 2],\n        [2, 4, 1, 3, 0]])\n"),
    ("print(grad(lambda x: x.sum()), vjp(lambda x: x, torch.ones(1))[1], type(vmap(torch.sin)))",
     "<function <lambda> at 0xADDR> <function _vjp_with_argnums.<locals>.wrapper at 0xADDR> <class 'function'>\n"),
    ("def norm2(v):\n    return (v * v).sum()\nprint(vmap(norm2), jacrev(norm2), torch.vmap is vmap)",
     "<function norm2 at 0xADDR> <function norm2 at 0xADDR> True\n"),
    ("print(torch.func.vjp, torch.func)", "<function vjp at 0xADDR> <module 'torch.func' from 'torch/func/__init__.py'>\n"),
]


FORWARD = [
    # forward over reverse sees the tangent of a result an op saved (exp's): PyTorch's 0.5548
    ("s = torch.tensor(0.7)\nprint(hessian(lambda t: t ** 3 - 2 * t * t + (t / 2).exp())(s))", "tensor(0.5548)\n"),
    ("print(jacfwd(torch.sin)(torch.tensor([1., 2.])))", "tensor([[ 0.5403,  0.0000],\n        [-0.0000, -0.4161]])\n"),
    ("print(jvp(torch.sin, (torch.tensor([1., 2.]),), (torch.ones(2, dtype=torch.float64),))[1])",
     "tensor([ 0.5403, -0.4161], dtype=torch.float64)\n"),
    # jacfwd's columns batch tangents only: .item() of a value is allowed, as in PyTorch
    ("try:\n    jacfwd(lambda a: (a * 2).item())(torch.tensor(1.))\nexcept Exception as e:\n    print(e)",
     "jvp(f, primals, tangents): expected f(*primals) to return only tensors, got unsupported type <class 'float'>\n"),
    ("print(hessian(torch.sin), torch.func.jacfwd)", "<function sin at 0xADDR> <function jacfwd at 0xADDR>\n"),
]


@pytest.mark.parametrize("source, expected", OUTPUTS + FORWARD, ids=[s.splitlines()[-1][:60] for s, _ in OUTPUTS + FORWARD])
def test_prints_what_pytorch_prints(source, expected):
    assert normalize(gradcli_output(T + source)) == expected


# (script lines after T, line:col of the error, PyTorch's message); the error is at the call that fails
ERRORS = [
    ("f = grad(lambda x: x * 2)\nf(torch.ones(2))", "4:1: RuntimeError: grad_and_value(f)(*args): Expected f(*args) to "
     "return a scalar Tensor, got tensor with 1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?"),
    ("grad(lambda x: x.sum())(1.0)", "3:1: ValueError: Thing passed to transform API must be Tensor, got <class 'float'>"),
    ("grad(lambda x: x.sum(), argnums=3)(torch.ones(1))", "3:1: RuntimeError: Got argnum=3, but only 1 positional inputs"),
    ("grad(lambda x: x.sum(), argnums=1.0)(torch.ones(1))",
     "3:1: RuntimeError: argnums must be int or Tuple[int, ...], got: <class 'float'>"),
    ("jacrev(lambda x: x, argnums=(0, 0))(torch.ones(1))",
     "3:1: RuntimeError: argnums elements must be unique, got (0, 0)"),
    ("vjp(lambda x: x.long(), torch.ones(2))", "3:1: RuntimeError: vjp(f, ...): All outputs of f must be "
     "floating-point or complex Tensors, got Tensor with dtype torch.int64"),
    ("vmap(lambda a, b: a + b)(torch.ones(2, 3), torch.ones(3, 3))", "3:1: ValueError: vmap: Expected all tensors "
     "to have the same size in the mapped dimension, got sizes [2, 3] for the mapped dimension"),
    ("def f(a):\n    return a.sum().item()\nvmap(f)(torch.ones(2, 2))", "4:12: RuntimeError: vmap: It looks like "
     "you're calling .item() on a Tensor. We don't support vmap over calling .item() on a Tensor, please try to "
     "rewrite what you're doing with other operations. If error is occurring somewhere inside PyTorch internals, "
     "please file a bug report."),
    ("def f(a):\n    if a.sum() > 0:\n        return a\n    return -a\nvmap(f)(torch.ones(2, 2))",
     "4:0: RuntimeError: vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
     "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues ."),
    ("def f(a):\n    return a + torch.rand(2)\nvmap(f)(torch.ones(2, 2))", "4:16: RuntimeError: vmap: called random "
     "operation while in randomness error mode. Please either use the 'same' or 'different' randomness flags on "
     "vmap or perform the randomness operation out of vmap"),
    ("vmap(lambda a: a, in_dims=(0,))(torch.ones(2), torch.ones(2))", "3:1: ValueError: vmap(<lambda>, "
     "in_dims=(0,), ...)(<inputs>): in_dims is not compatible with the structure of `inputs`. in_dims has "
     "structure TreeSpec(tuple, None, [*]) but inputs has structure TreeSpec(tuple, None, [*,\n  *])."),
    ("def g(a):\n    return a\nvmap(g, in_dims=2)(torch.ones(2, 2))", "5:1: ValueError: vmap(g, in_dims=2, ...)"
     "(<inputs>): Got in_dim=2 for some input, but that input is a Tensor of dimensionality 2 so expected in_dim "
     "to satisfy -2 <= in_dim < 2."),
]


@pytest.mark.parametrize("source, expected", ERRORS, ids=[s.splitlines()[-1][:60] for s, _ in ERRORS])
def test_errors_are_pytorchs_at_the_scripts_line(source, expected):
    assert located_error(T + source) == expected


def test_an_error_inside_vmap_leaves_no_vmap_running():
    result = run_script(T + "try:\n    vmap(lambda a: a.sum().item())(torch.ones(2, 2))\nexcept RuntimeError:\n"
                            "    pass\nprint(torch.ones(1).item(), bool(torch.ones(1)), torch.rand(1).shape)\n")
    assert result.error is None and result.out == "1.0 True torch.Size([1])\n"
    assert STATE.vmap is None


def test_an_error_inside_grad_leaves_grad_mode_as_it_was():
    source = (T + "with torch.no_grad():\n    try:\n        grad(lambda a: a * 2)(torch.ones(2))\n"
              "    except RuntimeError:\n        pass\n    print(torch.is_grad_enabled())\nprint(torch.is_grad_enabled())\n")
    assert gradcli_output(source) == "False\nTrue\n"


def test_gradients_flow_back_through_vmap_and_grad():
    source = (T + "w = torch.tensor([1., 2.], requires_grad=True)\n"
              "out = vmap(lambda r: (r * w).sum())(torch.tensor([[1., 1.], [2., 3.]]))\n"
              "out.sum().backward()\nprint(w.grad)\n"
              "x = torch.tensor([1., 2.], requires_grad=True)\n"
              "grad(lambda t: (t ** 3).sum())(x).sum().backward()\nprint(x.grad)\n")
    assert gradcli_output(source) == "tensor([3., 4.])\ntensor([ 6., 12.])\n"


def test_pytree_specs_print_as_pytorchs():
    spec = functorch.flatten(((1, [2, 3]), {"a": 1, "b": (2,)}))[1]
    assert repr(spec) == ("TreeSpec(tuple, None, [TreeSpec(tuple, None, [*,\n    TreeSpec(list, None, [*,\n"
                          "      *])]),\n  TreeSpec(dict, ['a', 'b'], [*,\n    TreeSpec(tuple, None, [*])])])")
    assert functorch.flatten({"a": 1, "b": [2]})[1].pprint() == "{'a': *, 'b': [*]}"
    leaves, spec = functorch.flatten([(1, 2), {"k": 3}])
    assert leaves == [1, 2, 3] and functorch.unflatten(spec, [4, 5, 6]) == [(4, 5), {"k": 6}]


def test_a_deep_pytree_does_not_exhaust_the_stack():
    deep = 1
    for _ in range(5000):
        deep = [deep]
    leaves, spec = functorch.flatten(deep)
    assert leaves == [1] and spec.leaves == 1


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_a_jacobian_past_the_memory_budget_is_refused_before_it_is_computed(transform, capsys):
    status = cli.main(["--max-memory", "100M", "--timeout", "20", "-c",
                       f"import torch\ntorch.func.{transform}(lambda x: x * 2)(torch.ones(100000))"])
    err = capsys.readouterr().err
    assert status == 1 and "you tried to allocate 40000000000 bytes" in err and "Traceback" not in err


def test_a_forward_transform_inside_the_scripts_dual_level_is_refused_as_in_pytorch():
    source = T + "import torch.autograd.forward_ad as fwAD\nwith fwAD.dual_level():\n    jvp(torch.sin, (torch.ones(1),), (torch.ones(1),))"
    assert located_error(source) == "5:5: RuntimeError: Nested forward mode AD is not supported at the moment"
    assert STATE.fw_level is None and STATE.vmap is None


# escape attempts through what the transforms hand back: functions whose insides are gradcli's
ESCAPES = [
    ("grad(lambda x: x.sum()).call", "AttributeError: 'function' object attribute 'call' is outside gradcli's language"),
    ("vmap(print).qualname", "AttributeError: 'function' object attribute 'qualname' is outside gradcli's language"),
    ("vjp(lambda x: x, torch.ones(1))[1].call",
     "AttributeError: 'function' object attribute 'call' is outside gradcli's language"),
    ("getattr(jacrev(lambda x: x), 'call')",
     "AttributeError: 'function' object attribute 'call' is outside gradcli's language"),
    ("grad(lambda x: x.sum()).__closure__", "AttributeError: 'function' object has no attribute '__closure__'"),
    ("vmap(lambda x: x.__reduce__)(torch.ones(2))",
     "AttributeError: 'Tensor' object attribute '__reduce__' is outside gradcli's language"),
    ("grad(lambda x: x.sum(), has_aux=False)(torch.ones(1)).numpy()",
     "AttributeError: 'Tensor' object attribute 'numpy' is outside gradcli's language: scripts cannot reach numpy "
     "arrays (use .tolist() or .item())"),
    ("torch.func.functional_call(torch.nn.Linear(2, 1), {'__dict__': 1}, torch.ones(2))",
     "AttributeError: 'Linear' object attribute '__dict__' is outside gradcli's language"),
    ("torch.func.functional_call(torch.nn.Linear(2, 1), {'_parameters': {}}, torch.ones(2))",
     "AttributeError: cannot reparametrize '_parameters': it is the module's own registry"),
]


@pytest.mark.parametrize("source, expected", ESCAPES, ids=[s for s, _ in ESCAPES])
def test_escapes_through_transforms_are_refused(source, expected, capsys):
    assert cli.main(["-c", T + source]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.splitlines()[0].split(": ", 1)[1] == expected
