"""The op functions, one import away: `ops.add`, `ops.getitem`, ... from the modules of each group.

Each module holds one group's table of rows and its forward functions. Tensor methods and the
script's `torch` namespace call ops through this package, which is why it is imported before
anything else in the engine (see gradcli/engine/__init__.py).
"""

from gradcli.engine.ops import arith, elementwise, indexing, linalg, reduce, shape
from gradcli.engine.ops.arith import (add, clone, compare, div, exp, fill, mul, neg, power, rdiv, reciprocal,
                                      rsub, scalar_power, sub, to_dtype, unbind0)
from gradcli.engine.ops.elementwise import bitwise_and, bitwise_not, bitwise_or, bitwise_xor, log, masked_fill, sqrt
from gradcli.engine.ops.indexing import getitem, setitem
from gradcli.engine.ops.linalg import mm
from gradcli.engine.ops.reduce import mean, norm, reduce_sum
from gradcli.engine.ops.shape import expand, squeeze, t, unsqueeze, view

# Every module that declares op rows; tests walk their tables.
GROUPS = (arith, elementwise, reduce, shape, linalg, indexing)
