"""The Tensor: a numpy array plus PyTorch's autograd state, with PyTorch's methods and operators."""

from __future__ import annotations

import weakref

import numpy as np

from gradcli.display import PrintOptions, size_repr, tensor_repr
from gradcli.engine import autograd, dtypes
# Module objects only: ops and recording import Tensor from here, and gradcli/engine/__init__.py
# imports ops first, so both are (partly) loaded by the time this runs and complete before any call.
from gradcli.engine import ops, recording

# torch.set_printoptions is process-wide in PyTorch; the session resets it for every script.
print_options = PrintOptions()


class Size(tuple):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return size_repr(self)

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n


def _leaf_inplace_error():
    return RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


class Tensor:
    """A tensor on a numpy array `_a`.

    `_version` is a one-element list shared with tensors that alias the same data through `detach()`
    (not through `.data`, which PyTorch gives a counter of its own); `_acc` is a weak reference to
    the leaf's AccumulateGrad node.
    """

    __slots__ = ("_a", "requires_grad", "grad", "grad_fn", "_version", "_acc", "__weakref__")

    # numpy must hand `ndarray <op> Tensor` back to the Tensor's reflected operator
    __array_ufunc__ = None
    __hash__ = object.__hash__

    def __init__(self, a: np.ndarray):
        self._a = a
        self.requires_grad = False
        self.grad = None
        self.grad_fn = None
        self._version = [0]
        self._acc = None

    # ------------------------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        return Size(self._a.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._a.shape)
        return self._a.shape[recording.wrap_dim(dim, self._a.ndim)] if self._a.ndim else _zero_dim_size(dim)

    def dim(self) -> int:
        return self._a.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._a.ndim

    def numel(self) -> int:
        return self._a.size

    nelement = numel

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.of_array(self._a)

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def device(self):
        return _CPU

    def is_floating_point(self) -> bool:
        return self._a.dtype.kind == "f"

    def element_size(self) -> int:
        return self._a.itemsize

    # ------------------------------------------------------------------------------ autograd state
    @property
    def data(self) -> "Tensor":
        return Tensor(self._a)

    def _set_data(self, value) -> None:
        """`t.data = other`: swap the storage, keeping the autograd identity."""
        if value.__class__ is not Tensor:
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._a = value._a

    def _set_grad(self, value) -> None:
        if value is None:
            self.grad = None
            return
        if value.__class__ is not Tensor:
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}")
        if value._a.dtype != self._a.dtype:
            raise RuntimeError("attempting to assign a gradient with dtype "
                               f"'{_scalar_name(value._a)}' to a tensor with dtype "
                               f"'{_scalar_name(self._a)}'. Please ensure that the gradient and the "
                               "tensor have the same dtype")
        if value._a.shape != self._a.shape:
            raise RuntimeError("assigned grad has data of a different size")
        self.grad = value

    def _set_requires_grad(self, value) -> None:
        """`t.requires_grad = flag`, with PyTorch's checks."""
        value = bool(value)
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return
        if value and self._a.dtype.kind != "f":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self.requires_grad = value

    def requires_grad_(self, requires_grad=True) -> "Tensor":
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return self
        if requires_grad and self._a.dtype.kind != "f":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self) -> "Tensor":
        t = Tensor(self._a)
        t._version = self._version
        return t

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self.requires_grad = False
        return self

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            self.grad_fn.retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        fn = self.grad_fn
        return fn is not None and fn.retained is not None and fn.retained() is self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        from gradcli.engine import functional
        functional.backward([self], None if gradient is None else [gradient], retain_graph,
                            create_graph, inputs)

    # ------------------------------------------------------------------------------ conversion
    def item(self):
        a = self._a
        if a.size != 1:
            raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
        return a.reshape(()).item()

    def tolist(self):
        return self._a.tolist()

    def numpy(self):
        raise RuntimeError("numpy() is outside gradcli's language: scripts cannot reach raw arrays")

    def __bool__(self) -> bool:
        a = self._a
        if a.size != 1:
            if a.size == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(a.reshape(()).item())

    def __float__(self) -> float:
        if self._a.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self._a.reshape(()).item())

    def __int__(self) -> int:
        if self._a.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self._a.reshape(()).item())

    def __index__(self) -> int:
        if self._a.dtype.kind not in "iub" or self._a.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._a.reshape(()).item())

    def __len__(self) -> int:
        if self._a.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._a.shape[0]

    def __getitem__(self, key):
        return ops.getitem(self, key)

    def __setitem__(self, key, value):
        ops.setitem(self, key, value)

    def __iter__(self):
        return iter(ops.unbind0(self))

    def __repr__(self) -> str:
        fn = self.grad_fn
        return tensor_repr(self._a, self._a.dtype.name, grad_fn_name=None if fn is None else fn.op.node,
                           requires_grad=self.requires_grad, opts=print_options)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._a.ndim == 0:
            return format(self._a.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def to(self, dtype=None, copy=False) -> "Tensor":
        if dtype is None or isinstance(dtype, str):     # .to('cpu') / .to(device='cpu')
            return self
        return ops.to_dtype(self, dtype, copy)

    def float(self) -> "Tensor":
        return ops.to_dtype(self, dtypes.float32)

    def double(self) -> "Tensor":
        return ops.to_dtype(self, dtypes.float64)

    def long(self) -> "Tensor":
        return ops.to_dtype(self, dtypes.int64)

    def int(self) -> "Tensor":
        return ops.to_dtype(self, dtypes.int32)

    def bool(self) -> "Tensor":
        return ops.to_dtype(self, dtypes.bool_)

    def half(self) -> "Tensor":
        return ops.to_dtype(self, dtypes.float16)

    def type(self, dtype=None):
        if dtype is None:
            return dtypes.of_array(self._a).legacy
        return ops.to_dtype(self, dtype)

    def cpu(self) -> "Tensor":
        return self

    def clone(self) -> "Tensor":
        return ops.clone(self)

    def contiguous(self) -> "Tensor":
        return self

    # ------------------------------------------------------------------------------ arithmetic
    def __add__(self, other):
        return ops.add(self, other)

    def __radd__(self, other):
        return ops.add(self, other)

    def __sub__(self, other):
        return ops.sub(self, other)

    def __rsub__(self, other):
        return ops.rsub(self, other)

    def __mul__(self, other):
        return ops.mul(self, other)

    def __rmul__(self, other):
        return ops.mul(self, other)

    def __truediv__(self, other):
        return ops.div(self, other)

    def __rtruediv__(self, other):
        return ops.rdiv(self, other)

    def __pow__(self, other):
        return ops.power(self, other)

    def __rpow__(self, other):
        return ops.power(other, self)

    def __matmul__(self, other):
        return ops.mm(self, other)

    def __neg__(self):
        return ops.neg(self)

    def __pos__(self):
        return self

    def __lt__(self, other):
        return ops.compare(np.less, self, other)

    def __le__(self, other):
        return ops.compare(np.less_equal, self, other)

    def __gt__(self, other):
        return ops.compare(np.greater, self, other)

    def __ge__(self, other):
        return ops.compare(np.greater_equal, self, other)

    def __eq__(self, other):
        if other is None:
            return False
        return ops.compare(np.equal, self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return ops.compare(np.not_equal, self, other)

    def add(self, other, alpha=1):
        return ops.add(self, other, alpha)

    def sub(self, other, alpha=1):
        return ops.sub(self, other, alpha)

    def mul(self, other):
        return ops.mul(self, other)

    def div(self, other):
        return ops.div(self, other)

    def pow(self, exponent):
        return ops.power(self, exponent)

    def neg(self):
        return ops.neg(self)

    def exp(self):
        return ops.exp(self)

    def reciprocal(self):
        return ops.reciprocal(self)

    def mm(self, mat2):
        return ops.mm(self, mat2)

    def log(self):
        return ops.log(self)

    def sqrt(self):
        return ops.sqrt(self)

    def masked_fill(self, mask, value):
        return ops.masked_fill(self, mask, value)

    def expand(self, *sizes):
        return ops.expand(self, *sizes)

    def unsqueeze(self, dim):
        return ops.unsqueeze(self, dim)

    def squeeze(self, dim=None):
        return ops.squeeze(self, dim)

    def t(self):
        return ops.t(self)

    def view(self, *shape):
        return ops.view(self, *shape)

    def __and__(self, other):
        return ops.bitwise_and(self, other)

    def __rand__(self, other):
        return ops.bitwise_and(self, other)

    def __or__(self, other):
        return ops.bitwise_or(self, other)

    def __ror__(self, other):
        return ops.bitwise_or(self, other)

    def __xor__(self, other):
        return ops.bitwise_xor(self, other)

    def __rxor__(self, other):
        return ops.bitwise_xor(self, other)

    def __invert__(self):
        return ops.bitwise_not(self)

    def sum(self, dim=None, keepdim=False, dtype=None):
        return ops.reduce_sum(self, dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, dtype=None):
        return ops.mean(self, dim, keepdim, dtype)

    def norm(self, p=2, dim=None, keepdim=False):
        return ops.norm(self, p, dim, keepdim)

    def eq(self, other):
        return ops.compare(np.equal, self, other)

    def ne(self, other):
        return ops.compare(np.not_equal, self, other)

    def lt(self, other):
        return ops.compare(np.less, self, other)

    def le(self, other):
        return ops.compare(np.less_equal, self, other)

    def gt(self, other):
        return ops.compare(np.greater, self, other)

    def ge(self, other):
        return ops.compare(np.greater_equal, self, other)

    # ------------------------------------------------------------------------------ group: elementwise
    # (methods of ops/elementwise.py go here)

    # ------------------------------------------------------------------------------ group: reduce
    # (methods of ops/reduce.py and ops/nn.py go here)

    # ------------------------------------------------------------------------------ group: shape
    # (methods of ops/shape.py and ops/linalg.py go here)

    # ------------------------------------------------------------------------------ group: creation
    # (random fills, hooks and other autograd methods go here)

    # ------------------------------------------------------------------------------ in place
    def _inplace(self, fn, other):
        """Run an out-of-place op, then write its result into this tensor's storage (shared by every
        alias), bump the version counter and, when recorded, make its node this tensor's grad_fn."""
        recording = autograd._grad_enabled[0]
        if recording and self.requires_grad and self.grad_fn is None:
            raise _leaf_inplace_error()
        src = self
        if recording and (self.requires_grad or (other.__class__ is Tensor and other.requires_grad)):
            # the new node may save `self`: give it a private copy of the values being overwritten
            src = Tensor(self._a.copy())
            src.requires_grad = self.requires_grad
            src.grad_fn = self.grad_fn
            src._acc = self._acc
        result = fn(src, other)
        out = result._a
        if out.dtype != self._a.dtype and not np.can_cast(out.dtype, self._a.dtype, "same_kind"):
            raise RuntimeError(f"result type {recording.type_word(out)} can't be cast to the desired "
                               f"output type {recording.type_word(self._a)}")
        if out.shape != self._a.shape:
            raise RuntimeError(f"output with shape {list(self._a.shape)} doesn't match the broadcast "
                               f"shape {list(out.shape)}")
        np.copyto(self._a, out, casting="unsafe")
        self._version[0] += 1
        if result.grad_fn is not None:
            self.grad_fn = result.grad_fn
            self.requires_grad = True
        return self

    def __iadd__(self, other):
        return self._inplace(ops.add, other)

    def __isub__(self, other):
        return self._inplace(ops.sub, other)

    def __imul__(self, other):
        return self._inplace(ops.mul, other)

    def __itruediv__(self, other):
        return self._inplace(ops.div, other)

    def add_(self, other, alpha=1):
        return self._inplace(lambda a, b: ops.add(a, b, alpha), other)

    def sub_(self, other, alpha=1):
        return self._inplace(lambda a, b: ops.sub(a, b, alpha), other)

    def mul_(self, other):
        return self._inplace(ops.mul, other)

    def div_(self, other):
        return self._inplace(ops.div, other)

    def zero_(self):
        return self._inplace(lambda a, v: ops.fill(a, v, zero=True), 0)

    def fill_(self, value):
        return self._inplace(ops.fill, value)


class _Device:
    __slots__ = ()
    type = "cpu"

    def __repr__(self):
        return "device(type='cpu')"

    def __str__(self):
        return "cpu"


_CPU = _Device()


def _zero_dim_size(dim):
    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _scalar_name(a: np.ndarray) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "bool": "bool", "float16": "c10::Half", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char"}[a.dtype.name]
