"""The grad_fn tree renderer: exact text for small graphs, shared nodes, limits, deep graphs."""

from __future__ import annotations

from gradcli import graphview
from gradcli.engine import dtypes, factories as torch


def tutorial():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return x, y, z, out


def test_tutorial_graph_with_names_and_a_shared_node():
    x, y, z, out = tutorial()
    names = {id(x): "x", id(y.grad_fn): "y", id(out.grad_fn): "out"}
    assert graphview.render(out, names) == (
        "MeanBackward0 ─ out\n"
        "└── MulBackward0\n"
        "    └── MulBackward0\n"
        "        ├── AddBackward0 ─ y [#1]\n"
        "        │   └── AccumulateGrad ─ x: [2, 2] float32\n"
        "        └── AddBackward0 ─ y [#1, shown above]")


def test_ascii_and_unnamed_leaves():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, dtype=dtypes.ALIASES["float64"], requires_grad=True)
    c = (a * b).sum()
    assert graphview.render(c, ascii=True) == (
        "SumBackward0\n"
        "`-- MulBackward0\n"
        "    |-- AccumulateGrad - leaf [3] float32\n"
        "    `-- AccumulateGrad - leaf [3] float64")


def test_inputs_without_grad_are_not_drawn_and_a_node_can_be_the_root():
    x = torch.ones(2, requires_grad=True)
    y = x * torch.ones(2)             # the second input needs no gradient: (None, 0)
    assert graphview.render(y.grad_fn) == "MulBackward0\n└── AccumulateGrad ─ leaf [2] float32"


def test_leaf_and_tensor_without_graph():
    x = torch.ones(2, requires_grad=True)
    assert graphview.render(x, {id(x): "x"}) == "AccumulateGrad ─ x: [2] float32"
    assert graphview.render(torch.ones(2)) == "the tensor does not require grad: it has no backward graph"


def test_diamond_numbers_each_shared_node_in_drawing_order():
    x = torch.ones(1, requires_grad=True)
    a = x * 2
    b = a.exp()
    c = a.sin()
    d = b + c + b
    lines = graphview.render(d, {id(x): "x"}).split("\n")
    assert lines == [
        "AddBackward0",
        "├── AddBackward0",
        "│   ├── ExpBackward0 [#1]",
        "│   │   └── MulBackward0 [#2]",
        "│   │       └── AccumulateGrad ─ x: [1] float32",
        "│   └── SinBackward0",
        "│       └── MulBackward0 [#2, shown above]",
        "└── ExpBackward0 [#1, shown above]",
    ]


def test_limits_bound_a_deep_chain_without_recursion():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(20000):            # far deeper than Python's recursion limit
        y = y * 1.0
    text = graphview.render(y, max_depth=3)
    assert text.split("\n") == ["MulBackward0", "└── MulBackward0", "    └── MulBackward0",
                                "        └── … (1 input below max_depth=3)"]
    text = graphview.render(y, max_depth=100000, max_nodes=5)
    assert text.split("\n")[-1].endswith("… (stopped after 5 nodes)")
    assert len(text.split("\n")) == 6


def test_not_a_tensor():
    import pytest
    with pytest.raises(TypeError, match="expected a Tensor or a grad_fn node, not int"):
        graphview.render(3)
