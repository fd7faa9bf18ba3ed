"""Gradient checks of the sparse COO tensors' rows (gradcli.engine.sparse) by tests/test_gradcheck.py's finite
differences: each case takes dense float64 leaves (a sparse tensor's values, a dense operand, a tensor made
sparse) through the row, so the sparse gradients are checked through the dense leaves they reach; plus the
sparse gradients' own layout (pattern, coalescing) where PyTorch fixes it."""

from __future__ import annotations

import numpy as np

from gradcli.engine import sparse
from gradcli.engine.ops import nn
from gradcli.engine.backward import backward
from gradcli.engine.factories import tensor
from gradcli.engine.tensor import Tensor
from test_gradcheck import _leaf, any_, row_tests

_IDX = tensor([[0, 1, 1, 2, 0], [2, 0, 2, 1, 2]])          # uncoalesced: (0, 2) twice


def _coo(values, shape=(3, 3)):
    return sparse.sparse_coo_tensor(_IDX, values, shape, check_invariants=False)


def _embedding(weight):
    return nn.embedding(tensor([[1, 3], [1, 0]]), weight, sparse=True)


_NO_FW = {"no_forward_gradcli": sparse.NO_TANGENTS}      # forward mode through sparse tensors: refused

# row -> list of (function of float64 leaves, input arrays[, gradcheck options])
CHECKS = {
    sparse.CONSTRUCT: [(lambda v: _coo(v).to_dense(), (any_(5),), _NO_FW)],
    sparse.TO_DENSE: [(lambda v: _coo(v).to_dense() * _coo(v).to_dense(), (any_(5),), _NO_FW)],
    sparse.COALESCE: [(lambda v: _coo(v).coalesce().values(), (any_(5),), _NO_FW)],
    sparse.VALUES: [(lambda v: _coo(v).coalesce().values() * 2.0, (any_(5),), _NO_FW)],
    sparse.TO_SPARSE: [(lambda a: sparse.sparse_sum(a.to_sparse()), (any_(2, 3),), _NO_FW),
                       (lambda a: (a * a).to_sparse().to_dense(), (any_(3, 2),), _NO_FW)],
    sparse.TO_SPARSE_DIM: [(lambda a: a.to_sparse(1).to_dense(), (any_(3, 2),), _NO_FW)],
    sparse.T: [(lambda v, d: sparse.sparse_mm(_coo(v).t(), d), (any_(5), any_(3, 2)), _NO_FW)],
    sparse.TRANSPOSE: [(lambda v: _coo(v).transpose(0, 1).to_dense(), (any_(5),), _NO_FW)],
    sparse.MUL_SCALAR: [(lambda v: (_coo(v) * 2.5).to_dense(), (any_(5),), _NO_FW)],
    sparse.MM: [(lambda v, d: _coo(v).mm(d), (any_(5), any_(3, 4)), _NO_FW),
                (lambda v, d: _coo(v, (3, 3)) @ d, (any_(5), any_(3, 1)), _NO_FW)],
    sparse.ADDMM: [(lambda v, d: sparse.sparse_mm(_coo(v), d), (any_(5), any_(3, 2)), _NO_FW),
                   (lambda m, v, d: sparse.addmm(m, _coo(v), d, beta=0.5, alpha=2.0), (any_(3, 2), any_(5), any_(3, 2)), _NO_FW),
                   (lambda m, v, d: sparse.addmm(m, _coo(v), d), (any_(1, 2), any_(5), any_(3, 2)), _NO_FW)],
    sparse.SUM: [(lambda v: sparse.sparse_sum(_coo(v)) * 3.0, (any_(5),), _NO_FW)],
    sparse.SPARSE_SUM: [(lambda v: sparse.sparse_sum(_coo(v), 0).to_dense(), (any_(5),), _NO_FW),
                        (lambda v: sparse.sparse_sum(_coo(v), (0, 1)), (any_(5),), _NO_FW)],
    sparse.EMBEDDING: [(_embedding, (any_(5, 2),))],
}


test_backward_matches_finite_differences, test_node_name_is_recorded = row_tests(CHECKS)


def _grad_of(fn, *arrays):
    leaves = [_leaf(a) for a in arrays]
    backward(fn(*leaves).sum())
    return leaves


def test_sparse_mm_gives_the_sparse_matrix_a_sparse_gradient_with_its_pattern():
    s = _coo(Tensor(np.ones(5)))
    s.requires_grad_()
    backward(sparse.sparse_mm(s, Tensor(np.arange(6.0).reshape(3, 2))).sum())
    g = s.grad
    assert g.__class__ is sparse.SparseTensor and g.is_coalesced()
    assert g._idx.tolist() == [[0, 1, 1, 2], [2, 0, 2, 1]]          # the coalesced pattern, no more
    np.testing.assert_array_equal(g._vals, [9.0, 1.0, 9.0, 5.0])


def test_torch_mm_gives_a_dense_gradient_as_mm_backward0_does():
    s = _coo(Tensor(np.ones(5)))
    s.requires_grad_()
    backward((s @ Tensor(np.ones((3, 2)))).sum())
    assert s.grad.__class__ is Tensor
    np.testing.assert_array_equal(s.grad._a, np.full((3, 3), 2.0))


def test_embedding_sparse_gradient_is_one_row_per_index_uncoalesced_and_accumulates_by_concatenation():
    (w,) = _grad_of(_embedding, any_(5, 2))
    g = w.grad
    assert g.__class__ is sparse.SparseTensor and not g.is_coalesced()
    assert g._idx.tolist() == [[1, 3, 1, 0]]
    backward(nn.embedding(tensor([4]), w, sparse=True).sum())
    assert w.grad is g and g._idx.tolist() == [[1, 3, 1, 0, 4]]      # in place, as PyTorch's `grad += new`
    np.testing.assert_array_equal(g._a.sum(1), [2.0, 4.0, 0.0, 2.0, 2.0])


def test_two_coalesced_sparse_gradients_merge_into_a_coalesced_one():
    s = _coo(Tensor(np.ones(5))).coalesce().detach()
    s.requires_grad_()
    for _ in range(2):
        backward(sparse.sparse_sum(s))
    assert s.grad.is_coalesced() and s.grad._idx.shape[1] == 4
    np.testing.assert_array_equal(s.grad._vals, [2.0] * 4)
