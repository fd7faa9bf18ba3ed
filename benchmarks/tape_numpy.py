"""Floor for perop.grad: the same loop on the leanest reasonable reverse-mode tape over numpy."""

import numpy as np

N = 20000  # param
BACKWARD = True  # param


class Var:
    __slots__ = ("data", "grad", "parents")

    def __init__(self, data, parents=()):
        self.data, self.grad, self.parents = data, None, parents   # parents: ((Var, vjp), ...)

    def __mul__(self, c):
        return Var(self.data * c, ((self, lambda g: g * c),))

    def __add__(self, c):
        return Var(self.data + c, ((self, lambda g: g),))

    def sum(self):
        return Var(self.data.sum(), ((self, lambda g: np.broadcast_to(g, self.data.shape)),))

    def backward(self):
        order, seen, stack = [], {id(self)}, [self]     # iterative DFS; the chain is deep
        while stack:
            v = stack.pop()
            order.append(v)
            for p, _ in v.parents:
                if id(p) not in seen:
                    seen.add(id(p))
                    stack.append(p)
        # A chain (and any tree) pops in topological order; a general DAG would need a real sort.
        self.grad = np.ones_like(self.data)
        for v in order:
            for p, vjp in v.parents:
                g = vjp(v.grad)
                p.grad = g if p.grad is None else p.grad + g
            v.parents = ()                              # free the graph as we go, as PyTorch does


x = Var(np.ones((2, 2), np.float32))
y = x
for i in range(N):
    y = y * 1.0001 + 0.5
s = y.sum()
if BACKWARD:
    s.backward()
print(x.grad)
