"""Forward mode through custom Functions (a `jvp` staticmethod, ctx.save_for_forward) and
torch.autograd.functional.jacobian(strategy="forward-mode", vectorize=True): results and PyTorch's errors.
The printed results are pinned byte for byte by tests/conformance/fwad_function.grad."""

from __future__ import annotations

import pytest

from tests.conftest import gradcli_output, located_error

HEADER = "import torch\nimport torch.autograd.forward_ad as fwAD\n"

SCALE = HEADER + """
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_forward(x)
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None

    @staticmethod
    def jvp(ctx, t, kt):
        x, = ctx.saved_tensors
        print("jvp", t, kt, x, ctx.k)
        return t * ctx.k
"""


def test_jvp_gets_the_tangents_and_what_save_for_forward_saved():
    source = SCALE + ("with fwAD.dual_level():\n"
                      "    y = Scale.apply(fwAD.make_dual(torch.tensor([1., 2.]), torch.tensor([0.5, -1.])), 3.0)\n"
                      "    print(y)\n")
    assert gradcli_output(source) == ("jvp tensor([ 0.5000, -1.0000]) None tensor([1., 2.]) 3.0\n"
                                      "tensor([3., 6.], tangent=tensor([ 1.5000, -3.0000]))\n")


def test_without_a_level_or_a_tangent_jvp_is_not_called():
    source = SCALE + ("print(Scale.apply(torch.tensor([1., 2.]), 2.0))\n"
                      "with fwAD.dual_level():\n    print(Scale.apply(torch.tensor([1., 2.]), 2.0))\n")
    assert gradcli_output(source) == "tensor([2., 4.])\ntensor([2., 4.])\n"


def test_a_tensor_input_without_a_tangent_gets_zeros():
    source = HEADER + """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_forward(x, y)
        return x * y

    @staticmethod
    def jvp(ctx, xt, yt):
        x, y = ctx.saved_tensors
        print(xt, yt)
        return xt * y + x * yt

with fwAD.dual_level():
    print(Mul.apply(fwAD.make_dual(torch.tensor([1., 2.]), torch.ones(2)), torch.tensor([3., 4.])))
"""
    assert gradcli_output(source) == ("tensor([1., 1.]) tensor([0., 0.])\n"
                                      "tensor([3., 8.], tangent=tensor([3., 4.]))\n")


def _function(forward_body: str, jvp_body: str | None, name="F") -> str:
    jvp = "" if jvp_body is None else f"\n    @staticmethod\n    def jvp(ctx, t):\n        {jvp_body}\n"
    return (HEADER + f"class {name}(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            f"        {forward_body}\n{jvp}"
            f"with fwAD.dual_level():\n    {name}.apply(fwAD.make_dual(torch.tensor([1., 2.]), torch.ones(2)))\n")


@pytest.mark.parametrize("forward_body,jvp_body,expected", [
    ("return x * 2", None,
     "NotImplementedError: You must implement the jvp function for custom autograd.Function to use it with "
     "forward mode AD."),
    ("return x * 2", "return t, t",
     "RuntimeError: Function's jvp returned an invalid number of forward gradients (expected 1 but got 2)"),
    ("return x * 2", "return t.sum()",
     "RuntimeError: Trying to set a forward gradient that has a different size than that of the original Tensor, "
     "this is not supported. Tensor is of size [2] while the given forward gradient is of size []."),
    ("return x", "return t",
     "RuntimeError: A custom Function's forward is returning a view (or an input as-is) but the jvp is not "
     "returning a view."),
    ("ctx.save_for_forward(x, 3)\n        return x * 2", "return t",
     "AssertionError: save_for_forward expects all arguments to be tensors; you should save non-tensors as "
     "attributes on ctx."),
])
def test_errors_are_pytorchs(forward_body, jvp_body, expected):
    assert located_error(_function(forward_body, jvp_body)).split(": ", 1)[1] == expected


def test_ctx_internals_stay_out_of_reach():
    # what save_for_forward keeps is reachable only through saved_tensors, inside jvp
    source = _function("ctx.save_for_forward(x)\n        return x * 2", "return t * ctx.for_forward[0]")
    assert located_error(source).split(": ", 1)[1] == "AttributeError: 'FBackward' object has no attribute 'for_forward'"
    source = _function("return x * 2", "return t * ctx.save_for_forward.__globals__")
    assert "__globals__" in located_error(source)
    # a script's attribute of that name is its own, never the engine's flag
    source = _function("ctx.in_jvp = True\n        ctx.save_for_forward(x)\n        return x * 2",
                       "print(ctx.in_jvp, ctx.saved_tensors)\n        return t")
    assert gradcli_output(source) == "True (tensor([1., 2.]),)\n"


JAC = "import torch\nfrom torch.autograd.functional import jacobian\n"


def test_forward_mode_jacobian_is_the_tangents_of_the_standard_basis():
    source = JAC + ("x = torch.tensor([1., 2.])\n"
                    "print(jacobian(lambda a: a * a, x, vectorize=True, strategy='forward-mode'))\n"
                    "print(jacobian(lambda a, b: (a * b, a.sum()), (x, x + 1), vectorize=True, "
                    "strategy='forward-mode'))\n"
                    "print(jacobian(lambda a: a * a, x.requires_grad_(), vectorize=True, strategy='forward-mode'))\n")
    assert gradcli_output(source) == (
        "tensor([[2., 0.],\n        [0., 4.]])\n"
        "[[tensor([[2., 0.],\n        [0., 3.]]), tensor([[1., 0.],\n        [0., 2.]])], "
        "[tensor([1., 1.]), tensor([0., 0.])]]\n"
        "tensor([[2., 0.],\n        [0., 4.]], grad_fn=<ReshapeAliasBackward0>)\n")


@pytest.mark.parametrize("call,expected", [
    ("jacobian(f, x, strategy='forward-mode')",
     "NotImplementedError: Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly implemented "
     "for `vectorize=True`."),
    ("jacobian(f, x, strict=True, strategy='forward-mode')",
     "RuntimeError: torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
     "supported together (yet). Please either set `strict=False` or `strategy=\"reverse-mode\"`."),
    ("jacobian(lambda a: 3, x, vectorize=True, strategy='forward-mode')",
     "TypeError: The outputs given to None must be either a Tensor or a tuple of Tensors but the given outputs "
     "has type <class 'int'>."),
])
def test_forward_mode_jacobian_errors(call, expected):
    source = JAC + "x = torch.tensor([1., 2.])\nf = lambda a: a * a\n" + call + "\n"
    assert located_error(source).split(": ", 1)[1] == expected


def test_hessian_with_a_forward_mode_outer_jacobian():
    source = ("import torch\nfrom torch.autograd.functional import hessian\n"
              "print(hessian(lambda a: (a ** 3).sum(), torch.tensor([1., 2.]), vectorize=True, "
              "outer_jacobian_strategy='forward-mode'))\n")
    # PyTorch 2.13's output
    assert gradcli_output(source) == "tensor([[ 6.,  0.],\n        [ 0., 12.]], grad_fn=<ReshapeAliasBackward0>)\n"
