"""`import operator`: the operators as functions, bounded as the operators are, and attrgetter/methodcaller
reading attributes by the language's rules (gradcli.language.pyoperator)."""

from __future__ import annotations

import pytest

from conftest import cpython_output, gradcli_output, run_script

PLAIN = """import operator
from operator import itemgetter, attrgetter, methodcaller
from functools import reduce
print(operator.add(1, 2), operator.mul('ab', 3), operator.truediv(7, 2), operator.floordiv(-7, 2), operator.mod(7, 3))
print(reduce(operator.mul, [1, 2, 3, 4]), operator.pow(2, 10), operator.lshift(1, 5), operator.rshift(64, 2))
print(operator.and_(6, 3), operator.or_(6, 3), operator.xor(6, 3), operator.neg(2), operator.pos(-2), operator.abs(-2))
print(operator.invert(5), operator.inv(5), operator.not_(0), operator.truth([]), operator.index(5), operator.is_(None, None))
print(operator.is_not(1, None), operator.lt(1, 2), operator.le(2, 2), operator.eq(1, 1.0), operator.ne(1, 2), operator.ge(1, 2))
print(operator.gt(3, 2), operator.contains([1, 2], 2), operator.countOf([1, 1, 2], 1), operator.indexOf([5, 6], 6))
x = [1]
x = operator.iadd(x, [2])
d = {'a': 1}
operator.setitem(d, 'b', 2)
operator.delitem(d, 'a')
print(x, d, operator.getitem([4, 5], 1), operator.concat([1], [2]), operator.concat('a', 'b'), operator.ixor(5, 3))
print(operator.imul([0], 3), operator.isub(5, 1), operator.itruediv(1, 4), operator.ifloordiv(9, 2), operator.imod(9, 4))
print(operator.ipow(3, 3), operator.ilshift(1, 3), operator.irshift(8, 1), operator.iand(7, 2), operator.ior(1, 2))
pairs = [('b', 2), ('a', 3), ('c', 1)]
print(sorted(pairs, key=itemgetter(1)), itemgetter(1, 0)(pairs[0]), itemgetter(slice(1, None))('abc'))
print(itemgetter(1), operator.add, operator.itemgetter, attrgetter('real', 'imag'), attrgetter('x'))
print(methodcaller('upper'), methodcaller('split', ',', maxsplit=1), operator.attrgetter, operator.methodcaller)
print(attrgetter('real')(3), attrgetter('real', 'imag')(2), methodcaller('split', ',', maxsplit=1)('a,b,c'))
"""


def test_operator_functions_are_cpythons_on_python_values():
    assert gradcli_output(PLAIN) == cpython_output(PLAIN)


def test_on_tensors_they_are_the_operators():
    out = gradcli_output("import torch\nimport operator\nt = torch.tensor([1., 2.], requires_grad=True)\n"
                         "print(operator.mul(t, t), operator.matmul(t, t), operator.neg(t), operator.getitem(t, 1))\n"
                         "print(operator.attrgetter('shape')(t), operator.attrgetter('grad_fn.name')(t * 2)(), "
                         "operator.methodcaller('sum', dim=0)(t), operator.eq(t, 2.0))\n")
    assert out == ("tensor([1., 4.], grad_fn=<MulBackward0>) tensor(5., grad_fn=<DotBackward0>) "
                   "tensor([-1., -2.], grad_fn=<NegBackward0>) tensor(2., grad_fn=<SelectBackward0>)\n"
                   "torch.Size([2]) MulBackward0 tensor(3., grad_fn=<SumBackward1>) tensor([False,  True])\n")


def _error(source: str) -> str:
    result = run_script("import torch\nimport operator\n" + source + "\n")
    assert result.error is not None, result.out
    return f"{result.error.kind}: {result.error.message}"


@pytest.mark.parametrize("call, error", [
    ("operator.pow(10, 10 ** 10)", "MemoryError: 10 ** 10000000000 is too large"),
    ("operator.ipow(10, 10 ** 10)", "MemoryError: 10 ** 10000000000 is too large"),
    ("operator.mul([1], 10 ** 12)", "MemoryError"),
    ("operator.imul('ab', 10 ** 12)", "MemoryError"),
    ("operator.lshift(1, 10 ** 12)", "MemoryError"),
    ("operator.concat(1, 2)", "TypeError: 'int' object can't be concatenated"),
    ("operator.attrgetter(1)", "TypeError: attribute name must be a string"),
])
def test_the_bounds_of_the_operators_hold(call, error):
    assert _error(call).startswith(error)


@pytest.mark.parametrize("call", [
    "operator.attrgetter('__class__.__bases__')(1)",
    "operator.attrgetter('__globals__')(lambda: 0)",
    "operator.attrgetter('grad_fn.__init__')(torch.ones(1, requires_grad=True) * 2)",
    "operator.methodcaller('__reduce_ex__', 2)(torch.ones(1))",
    "operator.methodcaller('__getattribute__', '__dict__')(operator)",
    "operator.itemgetter(1).__call__",
    "operator.attrgetter('x')._paths",
    "operator.methodcaller('x')._name",
    "operator.add.func",
])
def test_nothing_outside_the_language_is_reached(call):
    assert _error(f"print({call})").startswith("AttributeError")

