"""`gradcli explain SCRIPT NAME` and the REPL's `%why` (gradcli/diagnostics/explain.py): the chain rule, node by node.

The scripts are the ones with known answers in tests/diagnostics/ and the tutorial. Every gradient in
the expected texts was checked against PyTorch 2.13: hooks on each grad_fn node of the same script
(`node.register_hook`) give the gradients the node received and passed on, in the order PyTorch ran
the nodes. gradcli shows one difference on purpose: for `y * y` PyTorch sends 2.25 along each of the
two edges to y's node, while gradcli's engine computes both at once and sends their sum, 4.5, along
the first (Op.joint), and says so.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli import cli
from gradcli.diagnostics import explain
from gradcli.repl.shell import Options, Shell

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "diagnostics"
TUTORIAL = str(ROOT / "examples" / "tutorial.grad")


def run(capsys, *args):
    status = cli.main(["explain", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


TUTORIAL_FIRST = (
    'How out.backward() (line 24) computed x.grad, node by node from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward x)\n'
    '\n'
    '[1] MeanBackward0  out = z.mean()  (line 13)\n'
    '    in   tensor(1.)\n'
    '    out  tensor([[0.2500, 0.2500],\n'
    '                 [0.2500, 0.2500]])  → [2]\n'
    '[2] MulBackward0  z = y * y * 3  (line 12)\n'
    '    in   tensor([[0.2500, 0.2500],\n'
    '                 [0.2500, 0.2500]])\n'
    '    out  tensor([[0.7500, 0.7500],\n'
    '                 [0.7500, 0.7500]])  → [3]\n'
    '[3] MulBackward0  in z = y * y * 3  (line 12)\n'
    '    in   tensor([[0.7500, 0.7500],\n'
    '                 [0.7500, 0.7500]])\n'
    '    out  tensor([[4.5000, 4.5000],\n'
    '                 [4.5000, 4.5000]])  → [4] (both operands, summed)\n'
    '[4] AddBackward0  y = x + 2  (line 7)\n'
    '    in   tensor([[4.5000, 4.5000],\n'
    '                 [4.5000, 4.5000]])\n'
    '    out  tensor([[4.5000, 4.5000],\n'
    '                 [4.5000, 4.5000]])  → [5]\n'
    '[5] AccumulateGrad  x: [2, 2] float32  (line 4)\n'
    '    in   tensor([[4.5000, 4.5000],\n'
    '                 [4.5000, 4.5000]])\n'
    '\n'
    'x.grad after this call: tensor([[4.5000, 4.5000],\n'
    '                                [4.5000, 4.5000]])\n'
)

POLYNOMIAL = (
    'How total.backward() (line 6) computed x.grad, node by node from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward x)\n'
    '\n'
    '[1] SumBackward0  total = p.sum()  (line 5)\n'
    '    in   tensor(1.)\n'
    '    out  tensor([1., 1., 1.])  → [2]\n'
    '[2] SubBackward0  p = 3 * x ** 3 - 2 * x ** 2 + x - 5  (line 4)\n'
    '    in   tensor([1., 1., 1.])\n'
    '    out  tensor([1., 1., 1.])  → [3]\n'
    '[3] AddBackward0  in p = 3 * x ** 3 - 2 * x ** 2 + x - 5  (line 4)\n'
    '    in   tensor([1., 1., 1.])\n'
    '    out  tensor([1., 1., 1.])  → [4] (input 0)\n'
    '    out  tensor([1., 1., 1.])  → [9] (input 1)\n'
    '[4] SubBackward0  in p = 3 * x ** 3 - 2 * x ** 2 + x - 5  (line 4)\n'
    '    in   tensor([1., 1., 1.])\n'
    '    out  tensor([1., 1., 1.])  → [7] (input 0)\n'
    '    out  tensor([-1., -1., -1.])  → [5] (input 1)\n'
    '[5] MulBackward0  in p = 3 * x ** 3 - 2 * x ** 2 + x - 5  (line 4)\n'
    '    in   tensor([-1., -1., -1.])\n'
    '    out  tensor([-2., -2., -2.])  → [6]\n'
    '[6] PowBackward0  in p = 3 * x ** 3 - 2 * x ** 2 + x - 5  (line 4)\n'
    '    in   tensor([-2., -2., -2.])\n'
    '    out  tensor([ 4., -2., -8.])  → [9]\n'
    '[7] MulBackward0  in p = 3 * x ** 3 - 2 * x ** 2 + x - 5  (line 4)\n'
    '    in   tensor([1., 1., 1.])\n'
    '    out  tensor([3., 3., 3.])  → [8]\n'
    '[8] PowBackward0  in p = 3 * x ** 3 - 2 * x ** 2 + x - 5  (line 4)\n'
    '    in   tensor([3., 3., 3.])\n'
    '    out  tensor([ 9.0000,  2.2500, 36.0000])  → [9]\n'
    '[9] AccumulateGrad  x: [3] float32  (line 3)\n'
    '    in   tensor([14.0000,  1.2500, 29.0000])\n'
    '\n'
    'x.grad after this call: tensor([14.0000,  1.2500, 29.0000])\n'
)

SOFTMAX_CE = (
    'How loss.backward() (line 9) computed logits.grad, node by node from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward logits)\n'
    '\n'
    '[1] NegBackward0  loss = -picked.mean()  (line 8)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(-1.)  → [2]\n'
    '[2] MeanBackward0  in loss = -picked.mean()  (line 8)\n'
    '    in   tensor(-1.)\n'
    '    out  tensor([-0.5000, -0.5000])  → [3]\n'
    '[3] IndexBackward0  picked = log_probs[torch.arange(2), target]  (line 7)\n'
    '    in   tensor([-0.5000, -0.5000])\n'
    '    out  tensor([[-0.5000,  0.0000,  0.0000],\n'
    '                 [ 0.0000, -0.5000,  0.0000]])  → [4]\n'
    '[4] LogSoftmaxBackward0  log_probs = logits.log_softmax(dim=1)  (line 6)\n'
    '    in   tensor([[-0.5000,  0.0000,  0.0000],\n'
    '                 [ 0.0000, -0.5000,  0.0000]])\n'
    '    out  tensor([[-0.1705,  0.1212,  0.0493],\n'
    '                 [ 0.0543, -0.0988,  0.0445]])  → [5]\n'
    '[5] AccumulateGrad  logits: [2, 3] float32  (line 4)\n'
    '    in   tensor([[-0.1705,  0.1212,  0.0493],\n'
    '                 [ 0.0543, -0.0988,  0.0445]])\n'
    '\n'
    'logits.grad after this call: tensor([[-0.1705,  0.1212,  0.0493],\n'
    '                                     [ 0.0543, -0.0988,  0.0445]])\n'
)

# The path both MLP explanations share: the nodes from the loss down to the tanh's input.
_MLP_PATH = (
    '\n'
    '[1] MeanBackward0  loss = ((pred - t) ** 2).mean()  (line 11)\n'
    '    in   tensor(1.)\n'
    '    out  tensor([[0.2500],\n'
    '                 [0.2500],\n'
    '                 [0.2500],\n'
    '                 [0.2500]])  → [2]\n'
    '[2] PowBackward0  in loss = ((pred - t) ** 2).mean()  (line 11)\n'
    '    in   tensor([[0.2500],\n'
    '                 [0.2500],\n'
    '                 [0.2500],\n'
    '                 [0.2500]])\n'
    '    out  tensor([[ 0.3295],\n'
    '                 [-0.7502],\n'
    '                 [ 0.0864],\n'
    '                 [-0.1675]])  → [3]\n'
    '[3] SubBackward0  in loss = ((pred - t) ** 2).mean()  (line 11)\n'
    '    in   tensor([[ 0.3295],\n'
    '                 [-0.7502],\n'
    '                 [ 0.0864],\n'
    '                 [-0.1675]])\n'
    '    out  tensor([[ 0.3295],\n'
    '                 [-0.7502],\n'
    '                 [ 0.0864],\n'
    '                 [-0.1675]])  → [4]\n'
    '[4] MmBackward0  pred = h @ w2  (line 10)\n'
    '    in   tensor([[ 0.3295],\n'
    '                 [-0.7502],\n'
    '                 [ 0.0864],\n'
    '                 [-0.1675]])\n'
    '    out  tensor([[-0.4325,  0.0633,  0.1789, -0.7311,  0.0853],\n'
    '                 [ 0.9847, -0.1440, -0.4072,  1.6646, -0.1943],\n'
    '                 [-0.1133,  0.0166,  0.0469, -0.1916,  0.0224],\n'
    '                 [ 0.2199, -0.0322, -0.0909,  0.3717, -0.0434]])  → [5]\n'
    '[5] TanhBackward0  h = torch.tanh(x @ w1 + b1)  (line 9)\n'
    '    in   tensor([[-0.4325,  0.0633,  0.1789, -0.7311,  0.0853],\n'
    '                 [ 0.9847, -0.1440, -0.4072,  1.6646, -0.1943],\n'
    '                 [-0.1133,  0.0166,  0.0469, -0.1916,  0.0224],\n'
    '                 [ 0.2199, -0.0322, -0.0909,  0.3717, -0.0434]])\n'
)

MLP = (
    'How loss.backward() (line 12) computed w1.grad, node by node from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward w1)\n'
) + _MLP_PATH + (
    '    out  tensor([[-0.0765,  0.0043,  0.0292, -0.3999,  0.0398],\n'
    '                 [ 0.9756, -0.1319, -0.1016,  1.6584, -0.0171],\n'
    '                 [-0.0093,  0.0030,  0.0428, -0.1907,  0.0119],\n'
    '                 [ 0.1109, -0.0167, -0.0899,  0.3267, -0.0240]])  → [6]\n'
    '[6] AddBackward0  in h = torch.tanh(x @ w1 + b1)  (line 9)\n'
    '    in   tensor([[-0.0765,  0.0043,  0.0292, -0.3999,  0.0398],\n'
    '                 [ 0.9756, -0.1319, -0.1016,  1.6584, -0.0171],\n'
    '                 [-0.0093,  0.0030,  0.0428, -0.1907,  0.0119],\n'
    '                 [ 0.1109, -0.0167, -0.0899,  0.3267, -0.0240]])\n'
    '    out  tensor([[-0.0765,  0.0043,  0.0292, -0.3999,  0.0398],\n'
    '                 [ 0.9756, -0.1319, -0.1016,  1.6584, -0.0171],\n'
    '                 [-0.0093,  0.0030,  0.0428, -0.1907,  0.0119],\n'
    '                 [ 0.1109, -0.0167, -0.0899,  0.3267, -0.0240]])  → [7]\n'
    '[7] MmBackward0  in h = torch.tanh(x @ w1 + b1)  (line 9)\n'
    '    in   tensor([[-0.0765,  0.0043,  0.0292, -0.3999,  0.0398],\n'
    '                 [ 0.9756, -0.1319, -0.1016,  1.6584, -0.0171],\n'
    '                 [-0.0093,  0.0030,  0.0428, -0.1907,  0.0119],\n'
    '                 [ 0.1109, -0.0167, -0.0899,  0.3267, -0.0240]])\n'
    '    out  tensor([[ 0.3881, -0.0604,  0.0407,  0.1178,  0.0661],\n'
    '                 [-1.1095,  0.1542,  0.1911, -2.0360,  0.0312],\n'
    '                 [-1.1708,  0.1700,  0.0314, -1.2516, -0.0757]])  → [8]\n'
    '[8] AccumulateGrad  w1: [3, 5] float32  (line 6)\n'
    '    in   tensor([[ 0.3881, -0.0604,  0.0407,  0.1178,  0.0661],\n'
    '                 [-1.1095,  0.1542,  0.1911, -2.0360,  0.0312],\n'
    '                 [-1.1708,  0.1700,  0.0314, -1.2516, -0.0757]])\n'
    '\n'
    'w1.grad after this call: tensor([[ 0.3881, -0.0604,  0.0407,  0.1178,  0.0661],\n'
    '                                 [-1.1095,  0.1542,  0.1911, -2.0360,  0.0312],\n'
    '                                 [-1.1708,  0.1700,  0.0314, -1.2516, -0.0757]])\n'
)

MLP_HIDDEN = (
    'How loss.backward() (line 12) computed the gradient for h, node by node from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward h)\n'
) + _MLP_PATH + (
    '\n'
    'the gradient with respect to h is what [5] received\n'
)

NEWTON_LAST = (
    'How f.backward() (line 6) computed x.grad, node by node from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward x)\n'
    '\n'
    '[1] SubBackward0  f = x ** 3 - 2 * x - 5  (line 5)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(1.)  → [2]\n'
    '[2] SubBackward0  in f = x ** 3 - 2 * x - 5  (line 5)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(1.)  → [4] (input 0)\n'
    '    out  tensor(-1.)  → [3] (input 1)\n'
    '[3] MulBackward0  in f = x ** 3 - 2 * x - 5  (line 5)\n'
    '    in   tensor(-1.)\n'
    '    out  tensor(-2.)  → [5]\n'
    '[4] PowBackward0  in f = x ** 3 - 2 * x - 5  (line 5)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(13.1614)  → [5]\n'
    '[5] AccumulateGrad  x: [] float32  (line 3)\n'
    '    in   tensor(11.1614)\n'
    '\n'
    'x.grad before this call: tensor(0.)\n'
    'x.grad after this call:  tensor(11.1614)\n'
    '3 earlier calls also reached x, on line 6 (--call K or --line N picks one)\n'
)

NEWTON_FIRST = (
    'How f.backward() (line 6) computed x.grad, node by node from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward x)\n'
    '\n'
    '[1] SubBackward0  f = x ** 3 - 2 * x - 5  (line 5)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(1.)  → [2]\n'
    '[2] SubBackward0  in f = x ** 3 - 2 * x - 5  (line 5)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(1.)  → [4] (input 0)\n'
    '    out  tensor(-1.)  → [3] (input 1)\n'
    '[3] MulBackward0  in f = x ** 3 - 2 * x - 5  (line 5)\n'
    '    in   tensor(-1.)\n'
    '    out  tensor(-2.)  → [5]\n'
    '[4] PowBackward0  in f = x ** 3 - 2 * x - 5  (line 5)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(12.)  → [5]\n'
    '[5] AccumulateGrad  x: [] float32  (line 3)\n'
    '    in   tensor(10.)\n'
    '\n'
    'x.grad after this call: tensor(10.)\n'
)

HESSIAN_GRADIENT = (
    'How g, = torch.autograd.grad(f, x, create_graph=True) (line 5) computed the gradient for x, node by node '
    'from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward x)\n'
    '\n'
    '[1] AddBackward0  f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(1.)  → [4] (input 0)\n'
    '    out  tensor(1.)  → [2] (input 1)\n'
    '[2] PowBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(12.)  → [3]\n'
    '[3] SelectBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '    in   tensor(12.)\n'
    '    out  tensor([ 0., 12.])  → AccumulateGrad  x: [2] float32  (line 3)\n'
    '[4] MulBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '    in   tensor(1.)\n'
    '    out  tensor(2.)  → [6] (input 0)\n'
    '    out  tensor(1.)  → [5] (input 1)\n'
    '[5] SelectBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '    in   tensor(1.)\n'
    '    out  tensor([0., 1.])  → AccumulateGrad  x: [2] float32  (line 3)\n'
    '[6] PowBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '    in   tensor(2.)\n'
    '    out  tensor(4.)  → [7]\n'
    '[7] SelectBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '    in   tensor(4.)\n'
    '    out  tensor([4., 0.])  → AccumulateGrad  x: [2] float32  (line 3)\n'
    '\n'
    'autograd.grad returned for x: tensor([ 4., 13.])\n'
)

HESSIAN_ROW = (
    'How h1, = torch.autograd.grad(g[1], x) (line 7) computed the gradient for x, node by node from the output:\n'
    '(in: the gradient a node received; out: what it passed on toward x)\n'
    '\n'
    '[ 1] SelectBackward0  in h1, = torch.autograd.grad(g[1], x)  (line 7)\n'
    '     in   tensor(1.)\n'
    '     out  tensor([0., 1.])  → [2]\n'
    '[ 2] AddBackward0  g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor([0., 1.])\n'
    '     out  tensor([0., 1.])  → [7] (input 0)\n'
    '     out  tensor([0., 1.])  → [3] (input 1)\n'
    '[ 3] SelectBackwardBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor([0., 1.])\n'
    '     out  tensor(0.)  → [4]\n'
    '[ 4] MulBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor(0.)\n'
    '     out  tensor(0.)  → [9] (input 0)\n'
    '     out  tensor(0.)  → [5] (input 1)\n'
    '[ 5] MulBackward1  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor(0.)\n'
    '     out  tensor(0.)  → [6]\n'
    '[ 6] PowBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor(0.)\n'
    '     out  tensor(0.)  → [18]\n'
    '[ 7] AddBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor([0., 1.])\n'
    '     out  tensor([0., 1.])  → [11] (input 0)\n'
    '     out  tensor([0., 1.])  → [8] (input 1)\n'
    '[ 8] SelectBackwardBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor([0., 1.])\n'
    '     out  tensor(1.)  → [10]\n'
    '[ 9] MulBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor(0.)\n'
    '     out  tensor(0.)  → [16]\n'
    '[10] MulBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor(1.)\n'
    '     out  tensor(1.)  → [17]\n'
    '[11] SelectBackwardBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor([0., 1.])\n'
    '     out  tensor(1.)  → [12]\n'
    '[12] MulBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor(1.)\n'
    '     out  tensor(1.)  → [13]\n'
    '[13] MulBackward1  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor(1.)\n'
    '     out  tensor(3.)  → [14]\n'
    '[14] PowBackward0  in g, = torch.autograd.grad(f, x, create_graph=True)  (line 5)\n'
    '     in   tensor(3.)\n'
    '     out  tensor(12.)  → [15]\n'
    '[15] SelectBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '     in   tensor(12.)\n'
    '     out  tensor([ 0., 12.])  → AccumulateGrad  x: [2] float32  (line 3)\n'
    '[16] SelectBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '     in   tensor(0.)\n'
    '     out  tensor([0., 0.])  → AccumulateGrad  x: [2] float32  (line 3)\n'
    '[17] PowBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '     in   tensor(1.)\n'
    '     out  tensor(2.)  → [18]\n'
    '[18] SelectBackward0  in f = x[0] ** 2 * x[1] + x[1] ** 3  (line 4)\n'
    '     in   tensor(2.)\n'
    '     out  tensor([2., 0.])  → AccumulateGrad  x: [2] float32  (line 3)\n'
    '\n'
    'autograd.grad returned for x: tensor([ 2., 12.])\n'
    '2 earlier calls also reached x, on lines 5, 6 (--call K or --line N picks one)\n'
)


@pytest.mark.parametrize("args, expected", [
    ((TUTORIAL, "x", "--line", "24"), TUTORIAL_FIRST),
    ((str(SCRIPTS / "polynomial.grad"), "x"), POLYNOMIAL),
    ((str(SCRIPTS / "softmax_ce.grad"), "logits"), SOFTMAX_CE),
    ((str(SCRIPTS / "mlp.grad"), "w1"), MLP),
    ((str(SCRIPTS / "mlp.grad"), "h"), MLP_HIDDEN),
    ((str(SCRIPTS / "newton.grad"), "x"), NEWTON_LAST),
    ((str(SCRIPTS / "newton.grad"), "x.grad", "--call", "1"), NEWTON_FIRST),
    ((str(SCRIPTS / "hessian.grad"), "x", "--line", "5"), HESSIAN_GRADIENT),
    ((str(SCRIPTS / "hessian.grad"), "x"), HESSIAN_ROW),
], ids=["tutorial", "polynomial", "softmax_ce", "mlp", "mlp_hidden", "newton_last", "newton_first",
        "hessian_gradient", "hessian_row"])
def test_explain_known_scripts(capsys, args, expected):
    status, out, err = run(capsys, *args)
    assert (status, err) == (0, "")
    assert out == expected


def test_default_is_the_last_call_that_reached_the_name(capsys):
    # the tutorial's second x is reached by y.backward(gradients); the first x by out.backward()
    status, out, err = run(capsys, TUTORIAL, "x", "--seed", "0")
    lines = out.splitlines()
    assert lines[0] == "How y.backward(gradients) (line 37) computed x.grad, node by node from the output:"
    assert lines[4] == "     in   tensor([1.0000e-01, 1.0000e+00, 1.0000e-04])"
    assert lines[-2] == "x.grad after this call: tensor([1.0240e+02, 1.0240e+03, 1.0240e-01])"
    assert lines[-1] == "1 earlier call also reached x, on line 24 (--call K or --line N picks one)"
    assert run(capsys, TUTORIAL, "x", "--seed", "0", "--call", "1")[1] == TUTORIAL_FIRST
    assert run(capsys, TUTORIAL, "x", "--seed", "0", "--call", "-2")[1] == TUTORIAL_FIRST


def test_large_gradients_are_summarised(capsys, tmp_path):
    script = tmp_path / "big.grad"
    script.write_text("import torch\nw = torch.full((30, 10), 2.0, requires_grad=True)\n"
                      "y = (w * torch.arange(300.0).reshape(30, 10)).log()\nloss = y.sum()\nloss.backward()\n")
    status, out, err = run(capsys, str(script), "w")
    assert out.splitlines()[3:] == [
        "[1] SumBackward0  loss = y.sum()  (line 4)",
        "    in   tensor(1.)",
        "    out  [30, 10] float32  min 1  max 1  mean 1  nan 0  inf 0  → [2]",
        "[2] LogBackward0  y = (w * torch.arange(300.0).reshape(30, 10)).log()  (line 3)",
        "    in   [30, 10] float32  min 1  max 1  mean 1  nan 0  inf 0",
        "    out  [30, 10] float32  min 0.001672  max 0.5  mean 0.0105  nan 0  inf 1  → [3]",
        "[3] MulBackward0  in y = (w * torch.arange(300.0).reshape(30, 10)).log()  (line 3)",
        "    in   [30, 10] float32  min 0.001672  max 0.5  mean 0.0105  nan 0  inf 1",
        "    out  [30, 10] float32  min 0.5  max 0.5  mean 0.5  nan 1  inf 0  → [4]",
        "[4] AccumulateGrad  w: [30, 10] float32  (line 2)",
        "    in   [30, 10] float32  min 0.5  max 0.5  mean 0.5  nan 1  inf 0",
        "",
        "w.grad after this call: [30, 10] float32  min 0.5  max 0.5  mean 0.5  nan 1  inf 0"]


def test_summary_counts_nan_and_inf_and_describes_the_finite_rest():
    a = np.array([[1.0, -2.0, np.nan], [np.inf, -np.inf, 4.0]], dtype=np.float32)
    assert explain.summary(a) == "[2, 3] float32  min -2  max 4  mean 1  nan 1  inf 2"
    assert explain.summary(np.full(3, np.nan)) == "[3] float64  no finite elements  nan 3  inf 0"


def test_problems_and_their_statuses(capsys, tmp_path):
    status, out, err = run(capsys, str(SCRIPTS / "polynomial.grad"), "q")
    assert (status, out) == (2, "")
    assert err == ("gradcli explain: no backward() or autograd.grad() call reached a tensor named q (tensors that "
                   "require grad: x, p, total)\n")
    status, out, err = run(capsys, str(SCRIPTS / "newton.grad"), "x", "--call", "9")
    assert (status, err) == (2, "gradcli explain: --call 9: 4 calls reached x\n")
    status, out, err = run(capsys, str(SCRIPTS / "newton.grad"), "x", "--line", "9")
    assert (status, err) == (2, "gradcli explain: no call on line 9 reached x; calls on line 6 did\n")
    status, out, err = run(capsys, str(SCRIPTS / "mlp.grad"), "t")
    assert (status, err) == (2, "gradcli explain: 't' does not require grad, so no gradient flows to it "
                                "(tensors that require grad: w1, b1, w2, h, pred, loss)\n")
    status, out, err = run(capsys, str(SCRIPTS / "mlp.grad"), "x[0]")
    assert status == 2 and "NAME must be a name the script binds" in err
    broken = tmp_path / "broken.grad"
    broken.write_text("import torch\nx = torch.ones(2, requires_grad=True)\n(x * x).sum().backward()\ny = q\n")
    status, out, err = run(capsys, str(broken), "x")
    assert (status, out) == (1, "")
    assert err.startswith(f"{broken}:4:5: NameError: name 'q' is not defined\n")


def test_explain_reads_standard_input_and_keeps_its_lines():
    p = launcher.run(["explain", "-", "x"], input=(SCRIPTS / "polynomial.grad").read_text(), cwd=ROOT)
    assert p.returncode == 0 and p.stdout == POLYNOMIAL


def test_the_command_is_listed_and_costs_nothing_to_import():
    p = subprocess.run([sys.executable, "-c", "import sys; import gradcli.diagnostics.explain; print('numpy' in sys.modules)"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.stdout == "False\n"
    p = launcher.run(["--help"], cwd=ROOT)
    assert "explain" in p.stdout


# --------------------------------------------------------------------------------------------- %why
def new_shell(**options) -> Shell:
    options.setdefault("colour", False)
    return Shell(Options(**options), out=io.StringIO(), err=io.StringIO())


def test_why_in_the_repl_replays_the_session():
    shell = new_shell()
    for line in ("import torch", "x = torch.ones(2, 2, requires_grad=True)", "y = x + 2", "z = y * y * 3",
                 "out = z.mean()", "out.backward()", "%why x.grad"):
        shell.execute(line)
    # the tutorial's first backward: the same steps, with statements instead of lines (each input starts at 1)
    expected = TUTORIAL_FIRST.replace(" (line 24)", "").replace("  (line 13)", "").replace("  (line 12)", "")
    expected = expected.replace("  (line 7)", "").replace("  (line 4)", "")
    assert shell.out.getvalue() == expected
    assert shell.err.getvalue() == ""


def test_why_in_the_repl_follows_seeds_and_loads(tmp_path):
    (tmp_path / "net.grad").write_text("w = torch.randn(3, requires_grad=True)\n")
    shell = new_shell()
    for line in ("import torch", "%seed 0", f"%load {tmp_path / 'net.grad'}", "loss = (w * w).sum()",
                 "loss.backward()", "w.grad", "%why w"):
        shell.execute(line)
    out = shell.out.getvalue().splitlines()
    shown = out[0]                                       # the session's w.grad, echoed
    assert out[-1] == "w.grad after this call: " + shown
    assert shown == "tensor([ 3.0820, -0.5869, -4.3576])"       # 2 w, w = PyTorch's randn(3) after seed 0
    assert f"[3] AccumulateGrad  w: [3] float32  ({tmp_path / 'net.grad'} line 1)" in out


def test_why_in_the_repl_says_when_the_replay_differs():
    shell = new_shell()
    for line in ("import torch", "x = torch.ones(2, requires_grad=True)", "(x * 3).sum().backward()",
                 "x.grad = None; bad = nope", "%why x"):
        shell.execute(line)
    assert shell.out.getvalue().splitlines()[-1] == (
        "note: replaying this session's inputs gave a different x.grad than the session holds (an input that "
        "failed part-way is not replayed); the steps above are the replay's")


def test_why_in_the_repl_problems():
    shell = new_shell()
    for line in ("import torch", "x = torch.ones(2, requires_grad=True)", "%why", "%why x", "%why 3"):
        shell.execute(line)
    assert shell.err.getvalue().splitlines() == [
        "%why: give a tensor, e.g. %why x.grad",
        "%why: no backward() or autograd.grad() call reached x",
        "%why: give the name of a tensor (x or x.grad), not '3'"]
