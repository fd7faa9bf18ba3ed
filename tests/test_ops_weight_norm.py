"""Gradient checks of torch._weight_norm's fused row (gradcli.engine.ops.weight_norm) by tests/test_gradcheck.py's
finite differences: the first-dim and last-dim kernels, on matrices and 3-d weights, with g of both signs.
PyTorch has no forward-mode formula for _weight_norm_interface: that check is the refusal."""

from __future__ import annotations

import numpy as np
from gradcli.engine.ops import weight_norm
from test_gradcheck import _leaf, any_, row_tests

_NO_TANGENT = {"raises_unimplemented": "_weight_norm_interface"}

# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    weight_norm.WEIGHT_NORM: [
        (lambda v, g: weight_norm.weight_norm(v, g, 0), (any_(3, 4), any_(3, 1)), _NO_TANGENT),
        (lambda v, g: weight_norm.weight_norm(v, g, 1), (any_(5, 2), any_(1, 2)), _NO_TANGENT),
        (lambda v, g: weight_norm.weight_norm(v, g, 0), (any_(2, 3, 20), any_(2, 1, 1)), _NO_TANGENT),
        (lambda v, g: weight_norm.weight_norm(v, g, 2), (any_(2, 3, 4), any_(1, 1, 4)), _NO_TANGENT),
        (lambda v, g: weight_norm.weight_norm(v, g, 0), (any_(4,), any_(4,)), _NO_TANGENT),
    ],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)


# No second-derivative check against finite differences: PyTorch's double backward of this row (its
# _weight_norm_differentiable_backward) holds the saved norms constant, so it is not the true second derivative
# (torch.autograd.gradgradcheck fails on PyTorch itself); gradcli's follows it, and the engine cases
# (tests/engine_cases/parametrize.txt) compare its values with PyTorch's.


def test_a_plain_backward_agrees_with_the_composition():
    """The kernel's formula (numpy) and the create_graph composition (recorded ops) give the same gradients."""
    from gradcli.engine.backward import grad
    for dim, shapes in ((0, ((3, 5), (3, 1))), (1, ((5, 3), (1, 3)))):
        v, g = _leaf(any_(*shapes[0])), _leaf(any_(*shapes[1]))
        w = weight_norm.weight_norm(v, g, dim)
        plain = grad(w.sin().sum(), (v, g), retain_graph=True)
        composed = grad(w.sin().sum(), (v, g), create_graph=True)
        for a, b in zip(plain, composed):
            assert np.allclose(a._a, b._a, rtol=1e-12, atol=1e-12)
        assert [c.grad_fn.name() for c in composed] == ["MulBackward0", "DivBackward0"]


def test_the_fused_kernels_bits_on_an_avx2_machine(monkeypatch):
    """torch._weight_norm's first-dim and last-dim kernels and their backward, bit for bit against PyTorch 2.13
    on an AVX2 machine with 2 threads (tests/weight_norm_bits.json, written there by the oracle): gradcli run
    with AVX2's vector width (8 float32 or 4 float64 lanes) gives the same bits."""
    import json
    from pathlib import Path
    from gradcli.engine import autograd, vecorder
    from gradcli.engine.backward import backward
    from gradcli.engine.state import STATE
    from gradcli.engine.tensor import Tensor

    monkeypatch.setattr(vecorder, "_VECTOR_BYTES", 32)
    monkeypatch.setattr(STATE, "threads", 2)
    data = json.loads((Path(__file__).parent / "weight_norm_bits.json").read_text())

    def array(values, dtype, shape):
        return np.array([float.fromhex(x) for x in values], dtype).reshape(shape)

    for case in data["cases"]:
        dt = np.dtype(case["dtype"])
        with autograd.enable_grad():
            v = Tensor(array(case["v"], dt, case["v_shape"])).requires_grad_()
            g = Tensor(array(case["g"], dt, case["g_shape"])).requires_grad_()
            w = weight_norm.weight_norm(v, g, case["dim"])
            backward(w, Tensor(array(case["grad_w"], dt, case["v_shape"])))
        for got, name, shape in ((w, "w", case["v_shape"]), (v.grad, "grad_v", case["v_shape"]),
                                 (g.grad, "grad_g", case["g_shape"])):
            assert np.array_equal(got._a, array(case[name], dt, shape)), (case["dtype"], case["dim"], name)
