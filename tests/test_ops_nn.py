"""Gradient checks of the torch.nn rows (tests/test_gradcheck.py's finite differences; their tangents are
checked from the same cases by tests/test_forward_rows.py)."""

from __future__ import annotations

import pytest

from gradcli.engine import autograd
from gradcli.engine.backward import grad
from gradcli.engine.factories import tensor
from gradcli.engine.ops import nn
from gradcli.engine.recording import apply
from gradcli.language.stdlib import TORCH
from test_gradcheck import _gradcheck_row, _leaf, any_, check_node_recorded, check_rows, gradcheck, row_params

F = TORCH.members["nn"].members["functional"].members
IDX = tensor([[0, 2, 3], [3, 1, 0]])


def _trilinear(a, w, b):
    return apply(nn.TRILINEAR, nn.trilinear_array(a._a, w._a, b._a), (a, w, b))


def _d_embedding(options):
    """w -> the weight's gradient of sum(embedding(IDX, w)^3), itself differentiable: its backward runs
    EmbeddingDenseBackwardBackward0."""
    def first(w):
        with autograd.enable_grad():
            x = w if w.requires_grad else _leaf(w._a)
            out = F["embedding"](IDX, x, **options)
            (g,) = grad((out * out * out).sum(), x, create_graph=True)
        return g
    return first


def _d_loss(name, reduction, **options):
    """(x, t) -> x's gradient of the loss `name`(x, t) times a factor that depends on x (so the incoming gradient
    requires grad too), itself differentiable: its backward runs the loss backward's node's three formulas
    (MseLossBackwardBackward0, SmoothL1LossBackwardBackward0, HuberLossBackwardBackward0)."""
    def first(a, t):
        with autograd.enable_grad():
            x = a if a.requires_grad else _leaf(a._a)
            loss = F[name](x, t, reduction=reduction, **options)
            total = (loss * x).sum() if reduction == "none" else loss * (x * x).sum()
            (g,) = grad(total, x, create_graph=True)
        return g
    return first


def _d_bce(reduction, **options):
    """(x, t) -> x's and t's gradients of binary_cross_entropy(x, t) times a factor that depends on x, summed,
    itself differentiable: its backward runs BinaryCrossEntropyBackwardBackward0's three formulas (and the
    target's gradient, logit's composite)."""
    def first(a, b):
        with autograd.enable_grad():
            x = a if a.requires_grad else _leaf(a._a)
            t = b if b.requires_grad else _leaf(b._a)
            loss = F["binary_cross_entropy"](x, t, reduction=reduction, **options)
            total = (loss * x).sum() if reduction == "none" else loss * (x * x).sum()
            gx, gt = grad(total, (x, t), create_graph=True)
        return gx + gt
    return first


def _unit(*shape):
    """Probabilities away from 0 and 1, where the loss and its derivatives are smooth."""
    return any_(*shape) * 0.2 + 0.5


def _d_nll(target, reduction, **options):
    """x -> x's gradient of nll_loss(x, target) times a factor that depends on x, itself differentiable: its
    backward runs the loss backward's two formulas (NllLossBackwardBackward0 or NllLoss2DBackwardBackward0)."""
    def first(a):
        with autograd.enable_grad():
            x = a if a.requires_grad else _leaf(a._a)
            loss = F["nll_loss"](x, target, reduction=reduction, **options)
            total = (loss * x[:, 0]).sum() if reduction == "none" else loss * (x * x).sum()
            (g,) = grad(total, x, create_graph=True)
        return g
    return first


T2, T4 = tensor([2, 0, 1]), tensor([[[0, 2], [1, -100]], [[2, 0], [1, 1]]])
W3 = tensor([1.0, 2.5, 0.5], dtype=TORCH.members["float64"])
W6 = tensor([[1.0, 2.5, 0.5], [0.75, 1.5, 2.0]], dtype=TORCH.members["float64"])


def _seeded_native_dropout(a):
    """torch.native_dropout's output with the same mask at every call (the generator seeded first)."""
    from gradcli.engine import rng
    rng.default_generator.manual_seed(0)
    return nn.native_dropout(a, 0.4, True)[0]


# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    nn.NATIVE_DROPOUT: [(_seeded_native_dropout, (any_(3, 4),)), (lambda a: nn.native_dropout(a, 0.4, False)[0],
                                                                  (any_(2, 3),))],
    nn.NLL_LOSS_BACKWARD: [(_d_nll(T2, r, weight=W3), (any_(3, 3),)) for r in ("mean", "sum", "none")]
                          + [(_d_nll(T2, "mean", ignore_index=0), (any_(3, 3),))],
    nn.NLL_LOSS2D_BACKWARD: [(_d_nll(T4, r, weight=W3), (any_(2, 3, 2, 2),)) for r in ("mean", "sum", "none")],
    nn.MSE_LOSS_BACKWARD: [(_d_loss("mse_loss", r), (any_(2, 3), any_(2, 3))) for r in ("mean", "sum", "none")],
    nn.SMOOTH_L1_BACKWARD: [(_d_loss("smooth_l1_loss", r, beta=1.5), (any_(2, 3), any_(2, 3)))
                            for r in ("mean", "sum", "none")],
    nn.HUBER_BACKWARD: [(_d_loss("huber_loss", r, delta=1.2), (any_(2, 3), any_(2, 3))) for r in ("mean", "sum", "none")],
    # (inputs in (0, 1): a probability and a target; the target's gradient is checked too)
    nn.BCE_BACKWARD: [(_d_bce(r, **options), (_unit(2, 3), _unit(2, 3)))
                      for r in ("mean", "sum", "none") for options in ({}, {"weight": W6})],
    nn.EMBEDDING: [(lambda w: F["embedding"](IDX, w), (any_(4, 3),)),
                   # the padding row's zero gradient is PyTorch's choice, not the derivative (goldens pin it)
                   (lambda w: F["embedding"](IDX, w, padding_idx=4), (any_(5, 2),)),
                   (lambda w: F["embedding"](tensor(2), w, padding_idx=-2) * 3, (any_(3, 2),))],
    # scale_grad_by_freq is left out: PyTorch's double backward ignores it, so it is not the derivative
    # (the nn_embedding_max_norm golden pins it)
    nn.EMBEDDING_DENSE_BACKWARD: [(_d_embedding({}), (any_(4, 3),)), (_d_embedding({"padding_idx": 2}), (any_(4, 2),))],
    nn.TRILINEAR: [(lambda a, w, b: F["bilinear"](a, b, w), (any_(3, 2), any_(4, 2, 3), any_(3, 3))),
                   (lambda a, w, b, bias: F["bilinear"](a, b, w, bias), (any_(2, 2, 2), any_(3, 2, 1), any_(2, 2, 1),
                                                                        any_(3))),
                   # the row itself, without bilinear's views (whose rows have no tangents yet)
                   (_trilinear, (any_(3, 2), any_(2, 2, 3), any_(3, 3)))],
}


@pytest.mark.parametrize("cases", row_params((row.node, cases) for row, cases in CHECKS.items()))
def test_backward_matches_finite_differences(cases):
    check_rows(cases, _gradcheck_row)


@pytest.mark.parametrize("row", list(CHECKS))
def test_node_name_is_recorded(row):
    check_node_recorded(CHECKS, row)


def test_embedding_max_norm_renorms_the_rows_before_an_index_out_of_range():
    """PyTorch renorms the named rows one by one in sorted order under max_norm: the rows before the first
    index out of range are scaled in place, then that index is select()'s IndexError (oracle: 2.13)."""
    from conftest import run_script
    result = run_script("import torch\nimport torch.nn.functional as F\nw = torch.ones(3, 2)\n"
                        "try:\n    F.embedding(torch.tensor([2, 7, 9]), w, max_norm=1.0)\n"
                        "except IndexError as e:\n    print(e)\nprint(w)\n"
                        "v = torch.ones(3, 2)\ntry:\n    F.embedding(torch.tensor([-1]), v, max_norm=1.0)\n"
                        "except IndexError as e:\n    print(e)\nprint(v[2])\n")
    assert result.error is None, result.error
    assert result.out == ("select(): index 7 out of range for tensor of size [3, 2] at dimension 0\n"
                          "tensor([[1.0000, 1.0000],\n        [1.0000, 1.0000],\n        [0.7071, 0.7071]])\n"
                          "index out of range in self\ntensor([0.7071, 0.7071])\n")
