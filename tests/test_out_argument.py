"""The `out=` keyword: the table of the functions PyTorch gives it (data/out_api.txt, tools/out_api.py) covers
every function gradcli offers, and each of them takes it. PyTorch's values and messages for out= calls are
compared by the engine cases (tests/engine_cases/out_argument.txt)."""

from __future__ import annotations

import pytest

from gradcli.engine import factories, signatures
from gradcli.engine.tensor import Tensor
from gradcli.language import access, outkeyword, stdlib, torchapi


def _offered() -> list:
    """(full name, the function as a script reads it) for every function gradcli offers that PyTorch gives out=."""
    stack, found = [stdlib.TORCH], []
    while stack:
        module = stack.pop()
        for name, value in list(module.members.items()):
            if value.__class__ is stdlib.ScriptModule:
                stack.append(value)
            elif f"{module.name}.{name}" in outkeyword.table():
                found.append((f"{module.name}.{name}", access.get_attr(module, name)))
    return sorted(found, key=lambda item: item[0])


OFFERED = _offered()
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")      # numpy on acosh(0.25) and the like


def test_the_table_is_of_the_pytorch_gradcli_mirrors_and_names_only_its_functions():
    with open(outkeyword._DATA, encoding="utf-8") as f:
        assert f.readline().split()[1] == torchapi.VERSION
    table = outkeyword.table()
    assert len(table) > 350
    assert [key for key in table if not torchapi.has(*key.rsplit(".", 1))] == []


def test_every_offered_function_pytorch_gives_out_is_routed_by_the_name_it_is_called_by():
    """A call with out= finds the function in the table by the Builtin's own name: a function shared by two
    names (F.hardshrink is torch.hardshrink) is routed by the one it holds, which must take out= too."""
    assert len(OFFERED) > 300
    unrouted = [key for key, f in OFFERED
                if f.__class__ is not stdlib.Builtin or f"{f.namespace}.{f.name}" not in outkeyword.table()]
    assert unrouted == []


def test_pytorch_s_signatures_that_gradcli_binds_list_out_where_pytorch_takes_it():
    # signatures.check runs first on an out= call: a signature without `out` would refuse it
    table = outkeyword.table()
    missing = [key for key, texts in signatures.SIGNATURES.items()
               if key in table and not any("out = None" in text for text in texts)]
    assert missing == []


def _vector():
    return factories.tensor([0.25, 0.5, 0.75])


def _matrix():
    return factories.tensor([[2., 1.], [1., 3.]])


# argument lists tried in turn: the first that the function takes without out= is given again with one
_ARGUMENTS = [
    lambda: (_vector(),), lambda: (_vector(), _vector()), lambda: (_vector(), 0), lambda: (_vector(),) * 3,
    lambda: (_matrix(),), lambda: (_matrix(), _matrix()), lambda: (_matrix(),) * 3, lambda: (_matrix(), 1),
    lambda: (3,), lambda: (2, 3), lambda: ([_vector(), _vector()],), lambda: ((2,), 1.5), lambda: (0., 1., 3),
    lambda: (5, (3,)), lambda: (_vector(), 0, factories.tensor([2, 0])), lambda: (_matrix(), _vector()[:2]),
    lambda: (_matrix()[None], _matrix()[None]), lambda: (_vector() > 0.3, _vector(), _vector()),
    lambda: (factories.tensor([1, 2, 3]),), lambda: (factories.tensor([4, 2, 3]), factories.tensor([2, 6, 1])),
    # the view-copies' own arguments (sizes and strides, a dim and an index, unfold's, view's)
    lambda: (_vector(), (2,), (1,)), lambda: (_vector(), (2, 3)), lambda: (_matrix(), 0, 1),
    lambda: (_vector(), 0, 2, 1), lambda: (_matrix(), (4,)), lambda: (_vector(), [1, 2]),
    lambda: (factories.tensor([1 + 2j, 3j]),),
]
# PyTorch's functions whose every call the argument lists above can make is refused (gradcli's too)
_NOT_TRIED = {"torch.solve", "torch.lstsq", "torch.symeig", "torch.lu_solve", "torch.lu_unpack",
              "torch.ormqr", "torch.scatter", "torch.scatter_add", "torch.scatter_reduce", "torch.index_add",
              "torch.index_copy", "torch.index_reduce", "torch.take", "torch.take_along_dim", "torch.masked_select",
              "torch.polygamma", "torch.special.polygamma", "torch.renorm",
              "torch.addmv", "torch.baddbmm", "torch.addbmm",
              "torch.linalg.lu_solve", "torch.linalg.ldl_solve",
              "torch.linalg.solve_triangular", "torch.linalg.eig", "torch.linalg.eigvals",
              "torch.argsort",     # (its out= overload wants stable=)
              "torch.nonzero_static",      # (its size is keyword-only)
              "torch.native_batch_norm"}   # (eight arguments)
# out= a list of any length, each piece copied in and None returned: test_list_out_of_the_view_copies
_LIST_OUT = {"torch.split_copy", "torch.split_with_sizes_copy", "torch.unbind_copy"}


def _empty_like(result):
    if result.__class__ is Tensor:
        return factories.empty(0, dtype=result.dtype)
    return tuple(factories.empty(0, dtype=t.dtype) for t in result)


def _values(result):
    return result.tolist() if result.__class__ is Tensor else [t.tolist() for t in result]


@pytest.mark.parametrize("key, f", OFFERED, ids=[key for key, _ in OFFERED])
def test_each_offered_function_writes_into_out_and_returns_it(key, f):
    """A function newly offered that PyTorch gives out= is tried here: it must write the values it returns
    without out= into the out tensors it is given, and return them (random ones drawing the same numbers)."""
    if key in _LIST_OUT:
        pytest.skip("out= a list of pieces: test_list_out_of_the_view_copies")
    for arguments in _ARGUMENTS:
        try:
            factories.manual_seed(0)
            expected = f(*arguments())
        except Exception:
            continue
        if not (expected.__class__ is Tensor or isinstance(expected, tuple) and all(
                t.__class__ is Tensor for t in expected)):
            continue
        out = _empty_like(expected)
        factories.manual_seed(0)
        try:
            got = outkeyword.call(f, arguments(), {"out": out})
        except TypeError as e:      # this call fits an overload of PyTorch's without out= (torch.sum(x))
            assert "invalid combination" in str(e) or "missing" in str(e), e
            continue
        if out.__class__ is Tensor:
            assert got is out
        else:
            assert type(got).__name__ == type(expected).__name__ + "_out" and all(
                g is o for g, o in zip(got, out))
        assert repr(_values(got)) == repr(_values(expected))       # (nan == nan too)
        assert key not in _NOT_TRIED, f"{key} was tried: take it out of _NOT_TRIED"
        return
    assert key in _NOT_TRIED, f"{key}: no argument list tried it: add one, or the name to _NOT_TRIED"


def test_list_out_of_the_view_copies():
    # PyTorch 2.13 prints exactly this (checked with the oracle): each piece copied (cast, broadcast), None returned
    from conftest import run_script
    r = run_script("import torch\nx = torch.arange(5.)\no = [torch.zeros(2, dtype=torch.float64), torch.zeros(2), "
                   "torch.zeros(2)]\nprint(torch.split_copy(x, 2, out=o), o)\n"
                   "print(torch.unbind_copy(torch.arange(5., requires_grad=True), out=[torch.zeros(()) for _ in range(5)]))\n"
                   "try:\n    torch.split_copy(x, 2, out=o[:2])\nexcept RuntimeError as e:\n    print(e)\n"
                   "try:\n    torch.split_with_sizes_copy(x, [2, 3], out=[torch.zeros(2)])\nexcept RuntimeError as e:\n"
                   "    print(e)\ntry:\n    torch.unbind_copy(x, out=[torch.zeros(2)])\nexcept RuntimeError as e:\n"
                   "    print(e)\ntry:\n    torch.split_copy(x, 2, out=torch.zeros(2))\nexcept TypeError as e:\n    print(e)\n")
    assert r.out == ("None [tensor([0., 1.], dtype=torch.float64), tensor([2., 3.]), tensor([4., 4.])]\nNone\n"
                     "split_copy_Tensor_out() expected an out= argument of size 3, got size 2\n"
                     "split_with_sizes_copy_out expected an out= argument of size 2, got size 1\n"
                     "unbind_copy_int_out expected an out= argument of size 5, got size 1\n"
                     "split_copy(): argument 'out' must be tuple of Tensors, not Tensor\n")

