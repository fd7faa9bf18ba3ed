"""Forward-mode tangents of the shape, indexing and views rows against central finite differences, and
the view semantics of tangents (writes into views reach the base's tangent). The printed results are
pinned byte for byte by tests/conformance/fwad_shape.grad."""

from __future__ import annotations

import numpy as np
import pytest

from forward_check import check
from gradcli.engine.ops import indexing, shape
from gradcli.engine import views
from gradcli.engine.recording import Op, apply
from gradcli.engine.tensor import Tensor
from test_forward_rows import jvp_check

X = "x = torch.randn(2, 3, dtype=torch.float64)"
XZ = X + "\nz = torch.randn((), dtype=torch.float64)"
F64 = "dtype=torch.float64"
# writes into views: the base had no tangent, or its tangent is changed in place through a view
PUT = X + f"""
def put(x):
    z = torch.zeros(3, 3, {F64})
    row = z[0]
    z[1] = x[0]
    z[0, :3] += x[1] * 2
    z[2, [0, 2]] = x[1, :2]
    z.t()[1].mul_(3)
    return z + row
"""
RECORDED = X + f"""
w = torch.randn(3, 3, {F64}, requires_grad=True)
def put(x):
    z = w * 1
    z[1] = x[0] * w[0]
    z[:, 2] += x[1]
    return z
"""
ONES = f"torch.ones(1, 3, {F64})"

CASES = [
    (X, "x.expand(2, 2, 3)"), (X, "x.unsqueeze(1)"), (X, "x[None, :, None]"), (X, "x[None].squeeze()"),
    (X, "x.unsqueeze(0).squeeze(0)"), (X, "x.unsqueeze(0).squeeze((0, 1))"), (X, "x.t()"), (X, "x.transpose(0, 1)"),
    (X, "x.permute(1, 0).unsqueeze(0).permute(2, 0, 1)"), (X, "x.view(3, 2)"), (X, "x[:, :2].reshape(2, 2, 1)"),
    (X, "x.t().reshape(6)"), (X, "x.repeat(2, 1, 2)"), (X, f"torch.cat([x, {ONES}, x * 2])"),
    (X, f"torch.cat([{ONES}.t(), x.t()], 1)"), (X, f"torch.stack([x, torch.ones(2, 3, {F64})], 1)"),
    (X, "x.unsafe_split(1)[1]"), (X, "x.unsafe_split_with_sizes([1, 2], 1)[1]"), (X, "torch.narrow_copy(x, 1, 1, 2)"),
    (X, "x.split(1)[1]"), (X, "x.split([1, 2], 1)[1]"), (X, "x.chunk(3, 1)[2]"), (X, "x.unbind(1)[2]"),
    (X, "F.pad(x, (1, 2, -1, 0), value=0.5)"), (X, "x.flip(1)"), (X, "x.roll(1, 1)"), (X, "x.roll(2)"), (X, "x.gather(1, torch.tensor([[2, 0], [1, 1]]))"),
    (XZ, "z.gather(0, torch.tensor([0, 0]))", ("x", "z")), (X, "x.index_select(1, torch.tensor([2, 0, 2]))"),
    (X, "x.tril()"), (X, "x.triu(1)"), (X, "x.unfold(1, 2, 1)"),
    (X + f"\ng = torch.randn(2, 2, 2, {F64})", "torch.autograd.grad(x.requires_grad_().unfold(1, 2, 1), x, g, "
     "create_graph=True)[0]", ("x", "g")), (X, "x[1]"), (X, "x[:, 1:]"), (X, "x[...]"), (X, "x[[1, 0, 1]]"),
    (X, "x[x > 0]"), (X, "list(x)[1] * list(x)[0]"), (PUT, "put(x)"), (RECORDED, "put(x)"),
    (X, "(x * 1).t_() * 2"), (X, "(x * 1).transpose_(0, -1).unsqueeze_(0)"),
    (X, "(x * 1).unsqueeze_(1).squeeze_() * x"), (X, "(x * 1).unsqueeze_(0).squeeze_(0)"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[1] for c in CASES])
def test_tangent_equals_finite_difference(case):
    ok, text, _ = check(case[0], case[1], case[2] if len(case) > 2 else ("x",))
    assert ok, text


def _index_put_impl(a):
    """Advanced indexing's create_graph gradient: zeros (no tangent) with `a` added at rows 0, 2, 0."""
    key = (np.array([0, 2, 0]),)
    out = np.zeros((4, 3))
    np.add.at(out, key, a._a)
    return apply(indexing.INDEX_PUT_IMPL, out, (Tensor(np.zeros((4, 3))), a), (key, (a._a.shape, a._a.dtype)))


# Rows a script reaches only through other areas' rows (squeeze_ after matmul's mm/mv), only in a
# backward pass (the gradients of select, slice and indexing), or never through recording.apply:
# their columns are checked on the engine's functions directly.
DIRECT = {
    shape.SQUEEZE_: lambda a: shape.squeeze_(a * 1, 1),
    indexing.SELECT_BACKWARD: lambda a: indexing.scatter(a, (3, 2, 3), (slice(None), 1, Ellipsis), "select"),
    indexing.SLICE_BACKWARD: lambda a: indexing.scatter(a, (4, 3), (slice(1, 3),), "slice"),
    indexing.INDEX_PUT: lambda a: indexing.index_add(a, (3, 3), (np.array([0, 2]),)),
    # advanced indexing's create_graph gradient: zeros (no tangent) with the values' tangent added at the indices
    indexing.INDEX_PUT_IMPL: lambda a: _index_put_impl(a),
    views.AS_STRIDED: lambda a: apply(views.AS_STRIDED, a._a.reshape(-1)[[4, 1]], (a,),
                                      (np.array([4, 1]), a._a.shape)),
}
SHAPES = {shape.SQUEEZE_: (2, 1, 3), indexing.SELECT_BACKWARD: (3, 3), indexing.SLICE_BACKWARD: (2, 3),
          indexing.INDEX_PUT: (2, 3), indexing.INDEX_PUT_IMPL: (3, 3), views.AS_STRIDED: (2, 3)}


@pytest.mark.parametrize("row", list(DIRECT), ids=[r.node for r in DIRECT])
def test_direct_columns(row):
    jvp_check(DIRECT[row], [np.random.RandomState(0).standard_normal(SHAPES[row])])


def test_every_row_has_a_tangent_reached_by_a_case():
    rows = {v for m in (shape, indexing, views) for v in vars(m).values() if v.__class__ is Op}
    assert not [r.node for r in rows if r.jvp is None]
    reached = set(DIRECT)
    for case in CASES:
        reached |= check(case[0], case[1], case[2] if len(case) > 2 else ("x",))[2]
    # unpack_dual's primal (Identity) never has a tangent; CopySlices nodes are made outside apply (the
    # in-place cases above check the tangents of writes into views)
    unreached = rows - reached - {indexing.IDENTITY, views.COPY_SLICES, views.COPY_SLICES_SAVE, shape.RESIZE}
    assert not sorted(r.node for r in unreached)


def test_the_deprecated_resize_has_no_tangent_as_pytorch_custom_function_has_none():
    # ResizeBackward (PyTorch's Python Function Resize) defines no jvp: PyTorch 2.13 prints exactly this
    from conftest import run_script
    r = run_script("import torch\nimport torch.autograd.forward_ad as fwAD\nwith fwAD.dual_level():\n"
                   "    d = fwAD.make_dual(torch.ones(6), torch.ones(6))\n    try:\n        d.resize(2, 3)\n"
                   "    except NotImplementedError as e:\n        print(e)\n")
    assert r.out == ("You must implement the jvp function for custom autograd.Function to use it with forward mode "
                     "AD.\n")
