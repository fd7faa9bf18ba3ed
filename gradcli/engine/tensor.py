"""The Tensor: a numpy array plus PyTorch's autograd state, with PyTorch's methods and operators."""

from __future__ import annotations

import functools
import weakref

import numpy as np

from gradcli.display import PrintOptions, meta_repr, size_repr, tensor_repr
from gradcli.engine import addresses, autograd, dtypes
from gradcli.engine import layout as _layout
# Module objects only: ops and recording import Tensor from here, and gradcli/engine/__init__.py
# imports ops first, so both are (partly) loaded by the time this runs and complete before any call.
from gradcli.engine import ops, recording
from gradcli.engine import signatures
from gradcli.engine.state import STATE


INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")

# torch.set_printoptions is process-wide in PyTorch; the session resets it for every script.
print_options = STATE.print_options
# The ids of the tensors that are nn.Parameters (gradcli.engine.parameter owns the marks)
parameter_marks: dict = {}
# node -> where its saved values hold the piece's position (the nodes whose results are pieces of one input)
_PIECE_POSITION = {"SplitBackward0": 2, "SplitWithSizesBackward0": 2, "UnsafeSplitBackward0": 2,
                   "UnsafeSplitWithSizesBackward0": 2, "UnbindBackward0": 1}
_PIECE_POSITION.update({name + "_copy": position for name, position in _PIECE_POSITION.items()
                        if not name.startswith("Unsafe")})
# The ids of the tensors that stand for a lazy module's parameters and buffers before its first call, with
# their kind (UninitializedParameter, UninitializedBuffer): gradcli.engine.parameter owns these marks too
uninitialized_marks: dict = {}
_MISSING_P = object()          # geometric_() without its required p

class Size(tuple):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`; slicing it, and `+` or `*` with
    tuples, give Sizes again. `Size(sizes)` checks its items as PyTorch does; the engine builds Sizes
    from shapes with `_size(Size, shape)` (tuple's own constructor: `.shape` is hot)."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        items = []
        for i, d in enumerate(sizes):
            if d.__class__ is not int:
                if not (d.__class__ is bool or isinstance(d, np.integer)
                        or (d.__class__ is Tensor and d._a.dtype.kind in "iub" and d._a.size == 1)):
                    raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(d).__name__}')")
                d = int(d)
            items.append(d)
        return _size(cls, items)

    def __repr__(self) -> str:
        return size_repr(self)

    __str__ = __repr__

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return _size(Size, item) if key.__class__ is slice else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return _size(Size, tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented       # the left operand's own message: "can only concatenate list ..."
        return _size(Size, tuple.__add__(other, self))

    def __mul__(self, n):
        if not hasattr(n, "__index__"):
            raise TypeError(f"can't multiply sequence by non-int of type '{type(n).__name__}'")
        return _size(Size, tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self, *args) -> int:
        if args:
            raise TypeError(f"Size.numel() takes no arguments ({len(args)} given)")
        n = 1
        for d in self:
            n *= d
        return n


_size = tuple.__new__
# PyTorch's C type is torch.Size: Python's own messages say "not torch.Size", and the class prints
# as <class 'torch.Size'>
Size.__name__ = "torch.Size"
Size.__module__ = "torch"


def _inside_vmap(kind: str):
    """PyTorch's refusal of a tensor's value as a Python value inside torch.func.vmap (gradcli runs the
    function once per element, so every tensor there counts as batched)."""
    from gradcli.engine import functorch
    if STATE.vmap.values:           # jacfwd's columns batch tangents only: values are plain
        refusals = functorch.LEGACY_REFUSALS if STATE.vmap.randomness == "legacy" else functorch.VMAP_REFUSALS
        raise RuntimeError(refusals[kind])


def _saved_as_clone(node, src: Tensor) -> None:
    """An in-place op's node that saved the values being overwritten saves them as PyTorch does: a
    recorded clone of the input (PyTorch's autograd kernel clones `self` before writing), so the saved
    tensor shows `grad_fn=<CloneBackward0>` and a create_graph backward differentiates through the clone.
    The node's own edge stays the input's node."""
    clone = Tensor(src._a)
    clone.requires_grad = True
    clone.grad_fn = autograd.Node(ops.arith.CLONE, (src.grad_fn or recording.edge(src),), ())
    if STATE.fw_level is not None:
        from gradcli.engine import forward
        forward.copy_tangents(clone, src)
    node.saved = tuple(clone if v is src else v for v in node.saved)
    if node.checks:
        node.checks = tuple((clone,) + e[1:] if e[0] is src else e for e in node.checks)


def _leaf_inplace_error():
    return RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


class _AllDims:
    """mean()'s default dim: no dim given at all (MeanBackward0); an explicit dim=None is the dim
    overload (MeanBackward1), as in PyTorch."""
    __slots__ = ()

    def __repr__(self):
        return "None"


ALL_DIMS = _AllDims()


# PyTorch's words when a tensor that requires grad becomes a Python float (its C++ source line included, as it
# prints it).
SCALAR_WARNING = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                  "Consider using tensor.detach() first. (Triggered internally at "
                  "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")


def _squeeze(t, dim=None):
    """Tensor.squeeze with one dim, a dim list or none."""
    return ops.squeeze(t, dim)

def _cx():
    """gradcli.engine.ops.complexops, imported when a complex tensor first needs it."""
    from gradcli.engine.ops import complexops
    return complexops


def _complex_to_real(a: np.ndarray, cxx: str) -> None:
    """float() or int() of a complex tensor: PyTorch converts it only when its imaginary part is zero."""
    if a.reshape(()).imag != 0:
        raise RuntimeError(f"value cannot be converted to type {cxx} without overflow")


class Tensor:
    """A tensor on a numpy array `_a`.

    `_version` is a one-element list shared with tensors that alias the same data through `detach()`
    (not through `.data`, which PyTorch gives a counter of its own); `_acc` is a weak reference to
    the leaf's AccumulateGrad node. `_fw`, set only on tensors that get a forward-mode tangent (so no
    other tensor pays for it), is a dict {level: tangent}: a tangent counts while its level is in force
    (gradcli.engine.forward). `_attrs`, likewise set only when used, holds a script's own attributes
    (`x.g = ...`), which PyTorch's tensors keep in their `__dict__`.
    """

    __slots__ = ("_a", "requires_grad", "grad", "grad_fn", "_version", "_acc", "_base", "_inference",
                 "_fw", "_attrs", "__weakref__")

    # numpy must hand `ndarray <op> Tensor` back to the Tensor's reflected operator
    __array_ufunc__ = None
    __hash__ = object.__hash__

    def __init__(self, a: np.ndarray):
        if a.__class__ is not np.ndarray:
            # numpy ufuncs hand 0-d inputs back as scalars, which cannot be written; a meta array (the only
            # ndarray subclass the engine makes) keeps one element, however an op laid it out
            a = a.kept() if isinstance(a, np.ndarray) else np.asanyarray(a)
        if STATE.replay is not None:
            a = STATE.replay.tensor_made(self, a)      # a --check-grads replay (float64, perturbed)
        self._a = a
        self.requires_grad = False
        self.grad = None
        self.grad_fn = None
        self._version = [0]
        self._acc = None
        self._base = None          # the tensor a view aliases (PyTorch's `_base`), None for non-views
        self._inference = STATE.inference     # made inside torch.inference_mode()

    # ------------------------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        return _size(Size, self._a.shape)

    def size(self, dim=None):
        if dim is None:
            return _size(Size, self._a.shape)
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
        return autograd.checked_grad_fn(self) is None

    @property
    def output_nr(self) -> int:
        """Which output of its grad_fn this tensor is: 0 for a leaf and for a node's only result; an output slot's
        index; a piece's position for split, chunk and unbind, whose pieces gradcli records as nodes of their own
        (each knows its position) where PyTorch has one node with an output per piece."""
        fn = autograd.checked_grad_fn(self)
        if fn is None:
            return 0
        if fn.__class__ is autograd.OutputSlot:
            return fn.index
        position = _PIECE_POSITION.get(fn.op.node)
        if position is None:
            return 0
        value = fn.saved[position]
        if value.__class__ is tuple:            # unbind's key: the position is its integer
            value = next(k for k in value if k.__class__ is int)
        return int(value)

    @property
    def device(self):
        return _CPU if self._a.__class__ is np.ndarray else _META

    @property
    def is_meta(self) -> bool:
        return self._a.__class__ is not np.ndarray

    is_sparse = False

    @property
    def layout(self):
        return dtypes.strided

    def to_sparse(self, *args, **kwargs):
        from gradcli.engine import sparse
        return sparse.to_sparse(self, *args, **kwargs)

    def is_coalesced(self) -> bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")

    def coalesce(self):
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")

    def to_dense(self, dtype=None, *, masked_grad=None) -> "Tensor":
        if dtype is None:
            return self
        if dtype.__class__ is not dtypes.DType:
            raise TypeError(f"to_dense(): argument 'dtype' (position 1) must be torch.dtype, not "
                            f"{type(dtype).__name__}")
        return ops.to_dtype(self, dtype)

    # the devices, layouts and kinds of tensor gradcli has none of: a tensor is never on or of one
    is_mps = is_xla = is_xpu = is_ipu = is_vulkan = is_maia = is_mtia = is_mkldnn = is_quantized = is_nested = \
        is_sparse_csr = property(lambda self: False)

    def is_pinned(self, device=None) -> bool:
        return False

    def is_shared(self) -> bool:
        return False

    def is_distributed(self) -> bool:
        return False

    def apply_(self, callable):
        """Each element replaced by callable(element), in order, in place (CPU tensors that need no gradient)."""
        return _map_elements(self, "apply_", callable, ())

    def map_(self, tensor, callable):
        """Each element replaced by callable(element, the other tensor's element there), in order, in place."""
        if tensor.__class__ is not Tensor:
            raise TypeError(f"map_(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
        return _map_elements(self, "map_", callable, (np.broadcast_to(tensor._a, self._a.shape),))

    def is_inference(self) -> bool:
        return self._inference

    def is_floating_point(self) -> bool:
        return self._a.dtype.kind in "fV"

    def element_size(self) -> int:
        return self._a.itemsize

    def stride(self, dim=None):
        """PyTorch's strides, in elements, read from the array's: gradcli lays every result out as PyTorch does
        (layout.py), which fixes the stride of each dim of size 2 or more. A dim of size 1 or 0 takes no part in
        where the elements lie, and PyTorch's stride there depends on how the tensor was made, which gradcli does
        not follow: asking for one is an honest NotImplementedError, not a guess."""
        x = self._a
        if x.__class__ is not np.ndarray:       # a meta tensor keeps no layout: a contiguous one's strides
            from gradcli.engine.layout import standard_strides
            x = np.lib.stride_tricks.as_strided(x, strides=standard_strides(x.shape, x.itemsize), writeable=False)
        if dim is None:
            dims = range(x.ndim)
        elif x.ndim:
            dims = (recording.wrap_dim(dim, x.ndim),)
        else:
            _zero_dim_size(dim)
        if x.size == 0 or any(x.shape[d] == 1 for d in dims):
            raise NotImplementedError(
                "gradcli does not implement torch.Tensor.stride for a dimension of size 1, or of an empty tensor: "
                "PyTorch's stride there depends on how the tensor was made")
        strides = tuple(x.strides[d] // x.itemsize for d in dims)
        return strides if dim is None else strides[0]

    # ------------------------------------------------------------------------------ autograd state
    @property
    def data(self) -> "Tensor":
        t = Tensor(self._a)
        if STATE.observer is not None:
            STATE.observer.detached(t, "data")
        return t

    def _set_data(self, value) -> None:
        """`t.data = other`: swap the storage, keeping the autograd identity."""
        if value.__class__ is not Tensor:
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        if self.requires_grad and value._a.dtype.kind not in "fVc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        self._a = value._a
        from gradcli.engine import slim
        slim.keep(self)             # a node's check of it names its old array: the node keeps it whole

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
        if self.grad_fn is not None:       # refused even when it would change nothing (requires_grad_ allows that)
            if value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables.")
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if value and self._a.dtype.kind not in "fVc":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if value and self._inference and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._own_requires_grad(value)

    def _own_requires_grad(self, value: bool) -> None:
        """Set the leaf's own flag. A view whose base requires grad still does, but only while its own flag
        is set does it have an AccumulateGrad (autograd.NoGradView)."""
        base = self._base
        if base is not None and base.requires_grad:
            if value == (self._acc.__class__ is autograd.NoGradView):
                self._acc = None if value else autograd.NoGradView(self._version[0])
            value = True
        self.requires_grad = value

    def requires_grad_(self, requires_grad=True) -> "Tensor":
        if requires_grad.__class__ is not bool:     # (given by keyword, the call's argument check rewords it)
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{signatures.type_name(requires_grad)}")
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return self
        if requires_grad and self._a.dtype.kind not in "fVc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._inference and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._own_requires_grad(bool(requires_grad))
        return self

    def detach(self) -> "Tensor":
        t = Tensor(self._a)
        t._version = self._version
        if STATE.observer is not None:
            STATE.observer.detached(t, "detach")
        return t

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self.requires_grad = False
        if STATE.fw_level is not None:
            from gradcli.engine import forward
            forward.hide(self)              # no tangent, not even a base's (forward.tangent_of)
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
        from gradcli.engine import backward
        backward.backward([self], None if gradient is None else [gradient], retain_graph,
                            create_graph, inputs)

    # ------------------------------------------------------------------------------ conversion
    def item(self):
        if STATE.vmap is not None:
            _inside_vmap("item")
        a = self._a
        if a.__class__ is not np.ndarray and a.size == 1:
            raise RuntimeError(meta_words("NO_ITEM"))
        if a.size != 1:
            raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
        return a.reshape(()).item()

    def tolist(self):
        if STATE.vmap is not None:
            _inside_vmap("tolist")
        a = self._a
        if a.__class__ is not np.ndarray:
            raise NotImplementedError(meta_words("NO_DATA"))
        if a.size > STATE.max_items:        # a Python object per element, made while holding the GIL
            raise MemoryError(f"tolist() of {a.size} elements is too large (gradcli allows at most "
                              f"{STATE.max_items})")
        return a.tolist()

    def numpy(self):
        if self._a.__class__ is not np.ndarray:
            raise TypeError(meta_words("NO_NUMPY"))
        raise RuntimeError("numpy() is outside gradcli's language: scripts cannot reach raw arrays")

    def __bool__(self) -> bool:
        if STATE.vmap is not None:
            _inside_vmap("bool")
        a = self._a
        if a.size != 1:
            if a.size == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        if a.__class__ is not np.ndarray:
            raise RuntimeError(meta_words("NO_ITEM"))
        return bool(a.reshape(()).item())

    def __float__(self) -> float:
        if STATE.vmap is not None:
            _inside_vmap("item")
        if self._a.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self.requires_grad and STATE.recording:     # float(t), math.sqrt(t): PyTorch warns under grad mode, once
            STATE.warn_once("scalar", "UserWarning", SCALAR_WARNING)
        if self._a.__class__ is not np.ndarray:
            raise RuntimeError(meta_words("NO_ITEM"))
        if self._a.dtype.kind == "c":
            _complex_to_real(self._a, "double")
            return float(self._a.reshape(()).real.item())
        return float(self._a.reshape(()).item())

    def __int__(self) -> int:
        if STATE.vmap is not None:
            _inside_vmap("item")
        if self._a.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self._a.__class__ is not np.ndarray:
            raise RuntimeError(meta_words("NO_ITEM"))
        if self._a.dtype.kind == "c":
            _complex_to_real(self._a, "int64_t")
            return int(self._a.reshape(()).real.item())
        return int(self._a.reshape(()).item())

    def __index__(self) -> int:
        if self._a.dtype.kind not in "iub" or self._a.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        if self._a.__class__ is not np.ndarray:
            raise RuntimeError(meta_words("NO_ITEM"))
        return int(self._a.reshape(()).item())

    def __len__(self) -> int:
        if self._a.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._a.shape[0]

    def __getitem__(self, key):
        return ops.getitem(self, key)

    def __setitem__(self, key, value):
        if not isinstance(self._a, np.ndarray):
            self._a = np.asanyarray(self._a)   # a ufunc's 0-d result is a numpy scalar: give it storage to write
        try:
            ops.setitem(self, key, value)
        except ValueError as e:
            base = self._base if self._base is not None else self
            if base._a.dtype.kind == "c" and str(e) == "assignment destination is read-only":   # a conjugate view
                raise NotImplementedError(_cx().CONJ_WRITE) from None
            raise

    def __iter__(self):
        return iter(ops.unbind0(self))

    def __repr__(self) -> str:
        if uninitialized_marks and id(self) in uninitialized_marks:     # a lazy module's, before its first call
            return f"<{uninitialized_marks[id(self)][1]}>"
        fn = self.grad_fn
        tangent = None
        if STATE.fw_level is not None:
            from gradcli.engine import forward
            tangent = forward.tangent_text(self)
        name = None if fn is None else fn.op.node
        if name is None and autograd.stale_view(self):
            name = "Invalid"
        if self._a.__class__ is not np.ndarray:
            text = meta_repr(self._a.shape, self._a.dtype.name, grad_fn_name=name, requires_grad=self.requires_grad,
                             opts=print_options)
        else:
            text = tensor_repr(self._a, self._a.dtype.name, grad_fn_name=name,
                           requires_grad=self.requires_grad, opts=print_options,
                               variable=True if id(self) in autograd.legacy_variables else None, tangent=tangent)
        if id(self) in parameter_marks:          # nn.Parameter (gradcli.engine.parameter)
            return "Parameter containing:\n" + text
        return text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._a.ndim == 0 and self._a.__class__ is np.ndarray:       # (a meta tensor has no value to format)
            return format(self._a.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def to(self, *args, **kwargs) -> "Tensor":
        """.to(dtype), .to(device, dtype), .to(tensor), each with non_blocking and copy (only the CPU exists)."""
        if len(args) == 1 and not kwargs and args[0].__class__ is dtypes.DType:
            return ops.to_dtype(self, args[0])
        form, values = signatures.bound("Tensor.to", args, kwargs)
        dtype = values["tensor"].dtype if form == 2 else values["dtype"]
        device = values["tensor"].device if form == 2 else values.get("device")
        if device is not None and check_device(device) != (self._a.__class__ is not np.ndarray):
            return _moved(self, dtype)
        copy = bool(values["copy"])
        fmt = values["memory_format"]
        if fmt is not None and fmt is not dtypes.preserve_format and self._a.__class__ is np.ndarray:
            return ops.to_dtype(self, dtype or dtypes.of_array(self._a), copy, fmt)
        if dtype is None:
            return ops.to_dtype(self, dtypes.of_array(self._a), True) if copy else self
        return ops.to_dtype(self, dtype, copy)

    def _converted(self, dtype, name: str, memory_format) -> "Tensor":
        """.float(), .long(), ...: the tensor in `dtype` (itself when it is already), laid out in memory_format."""
        fmt = None if memory_format is None else _layout.memory_format_arg(name, memory_format)
        return ops.to_dtype(self, dtype, False, fmt)

    def float(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.float32, "float", memory_format)

    def double(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.float64, "double", memory_format)

    def long(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.int64, "long", memory_format)

    def int(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.int32, "int", memory_format)

    def bool(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.bool_, "bool", memory_format)

    def half(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.float16, "half", memory_format)

    def bfloat16(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.bfloat16, "bfloat16", memory_format)

    def byte(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.uint8, "byte", memory_format)

    def short(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.int16, "short", memory_format)

    def char(self, *, memory_format=None) -> "Tensor":
        return self._converted(dtypes.int8, "char", memory_format)

    def ravel(self) -> "Tensor":
        """PyTorch's ravel is contiguous().view(-1): a view of a contiguous tensor, else of its copy."""
        return self.contiguous().view(-1)

    def is_signed(self) -> bool:
        return dtypes.of_array(self._a).is_signed

    def is_complex(self) -> bool:
        return self._a.dtype.kind == "c"

    # a real tensor is its own conjugate: PyTorch returns the tensor itself, and its conj and neg bits are off;
    # a complex one's are gradcli.engine.ops.complexops'
    def conj(self) -> "Tensor":
        return self if self._a.dtype.kind != "c" else _cx().conj(self)

    def conj_physical(self) -> "Tensor":
        return self if self._a.dtype.kind != "c" else _cx().conj_physical(self)

    def conj_physical_(self) -> "Tensor":
        if self._a.dtype.kind == "c":
            raise NotImplementedError("gradcli does not implement complex tensors in torch.Tensor.conj_physical_")
        return self

    def resolve_conj(self) -> "Tensor":
        return self if self._a.dtype.kind != "c" else _cx().resolve_conj(self)

    def resolve_neg(self) -> "Tensor":
        return self

    def is_conj(self) -> bool:
        return self._a.dtype.kind == "c" and _cx().is_conj(self)

    def is_neg(self) -> bool:
        return False

    def get_device(self) -> int:
        return -1                       # the CPU

    def data_ptr(self) -> int:
        """A virtual address (gradcli.engine.addresses): equal for tensors sharing memory, offsets as PyTorch's."""
        return addresses.data_ptr(self)

    def untyped_storage(self):
        return addresses.storage_of(self, False)

    def storage(self):
        return addresses.storage_of(self, True)

    def is_set_to(self, tensor) -> bool:
        if tensor.__class__ is not Tensor:
            raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
        return addresses.is_set_to(self, tensor)

    def storage_offset(self) -> int:
        """Where the first element lies in the storage, in elements: a view's distance from its base."""
        base = self._base
        if base is None:
            return 0
        return (self._a.__array_interface__["data"][0] - base._a.__array_interface__["data"][0]) // self._a.itemsize

    @property
    def is_cpu(self) -> bool:
        return self._a.__class__ is np.ndarray

    @property
    def itemsize(self) -> int:
        return self._a.itemsize

    @property
    def nbytes(self) -> int:
        return self._a.size * self._a.itemsize

    @property
    def real(self) -> "Tensor":
        # a real tensor's real part is itself, as PyTorch returns it; a complex one's a view (complexops)
        return self if self._a.dtype.kind != "c" else _cx().real(self)

    @property
    def imag(self) -> "Tensor":
        return _cx().imag(self)

    def angle(self) -> "Tensor":
        return _cx().angle(self)

    def cfloat(self) -> "Tensor":
        return ops.to_dtype(self, dtypes.complex64)

    def cdouble(self) -> "Tensor":
        return ops.to_dtype(self, dtypes.complex128)

    def __complex__(self) -> complex:
        if STATE.vmap is not None:
            _inside_vmap("item")
        if self._a.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self._a.reshape(()).item())

    def is_nonzero(self) -> bool:
        return self.__bool__()          # the truth of a one-element tensor, with the same refusals

    def is_same_size(self, other) -> bool:
        if other.__class__ is not Tensor:
            raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return self._a.shape == other._a.shape

    def positive(self) -> "Tensor":
        if self._a.dtype == np.bool_:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def isposinf(self) -> "Tensor":
        a = self._a
        return Tensor(np.isposinf(a) if a.dtype.kind in "fV" else np.zeros(a.shape, np.bool_))

    def isneginf(self) -> "Tensor":
        a = self._a
        return Tensor(np.isneginf(a) if a.dtype.kind in "fV" else np.zeros(a.shape, np.bool_))

    def type(self, dtype=None):
        if dtype is None:
            legacy = dtypes.of_array(self._a).legacy
            return legacy if self._a.__class__ is np.ndarray else legacy.replace("torch.", "torch.meta.", 1)
        if dtype.__class__ is str:          # the legacy names: "torch.DoubleTensor"
            for d in dtypes.ALL:
                if d.legacy == dtype:
                    return ops.to_dtype(self, d)
                if d.legacy == dtype.replace(".cuda.", ".", 1):
                    raise RuntimeError(NO_CUDA_LIBRARY)
            raise ValueError(f"invalid type: '{dtype}'")
        if dtype.__class__ is not dtypes.DType:
            dtype = _legacy_class(dtype)
        return ops.to_dtype(self, dtype)

    def sort(self, *args, **kwargs):
        return ops.sort_method(self, *args, **kwargs)

    def argsort(self, *args, **kwargs):
        return ops.argsort_method(self, *args, **kwargs)

    def msort(self):
        return ops.msort(self)

    def topk(self, *args, **kwargs):
        return ops.topk_method(self, *args, **kwargs)

    def median(self, *args, **kwargs):
        return ops.median_method(self, *args, **kwargs)

    def nanmedian(self, *args, **kwargs):
        return ops.nanmedian_method(self, *args, **kwargs)

    def kthvalue(self, *args, **kwargs):
        return ops.kthvalue_method(self, *args, **kwargs)

    def mode(self, *args, **kwargs):
        return ops.mode_method(self, *args, **kwargs)

    def aminmax(self, *args, **kwargs):
        return ops.aminmax_method(self, *args, **kwargs)

    def quantile(self, *args, **kwargs):
        return ops.quantile_method(self, *args, **kwargs)

    def nanquantile(self, *args, **kwargs):
        return ops.nanquantile_method(self, *args, **kwargs)

    def cummax(self, *args, **kwargs):
        return ops.cummax_method(self, *args, **kwargs)

    def cummin(self, *args, **kwargs):
        return ops.cummin_method(self, *args, **kwargs)

    def logcumsumexp(self, *args, **kwargs):
        return ops.logcumsumexp_method(self, *args, **kwargs)

    def histc(self, *args, **kwargs):
        return ops.histc_method(self, *args, **kwargs)

    def histogram(self, *args, **kwargs):
        from gradcli.engine.ops import statistics
        return statistics.histogram_method(self, *args, **kwargs)

    def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
             normalized=False, onesided=None, return_complex=None, align_to_window=None):
        from gradcli.engine.ops import stft      # (PyTorch's Python method: torch.stft, these by position)
        return stft.stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                         return_complex=return_complex, align_to_window=align_to_window)

    def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
              onesided=None, length=None, return_complex=False):
        from gradcli.engine.ops import stft      # (PyTorch's Python method: torch.istft, its arguments by position)
        return stft.istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                          return_complex)

    def cov(self, *args, **kwargs):
        return ops.cov_method(self, *args, **kwargs)

    def corrcoef(self, *args, **kwargs):
        return ops.corrcoef_method(self, *args, **kwargs)

    def tensor_split(self, *args, **kwargs):
        return ops.tensor_split_method(self, *args, **kwargs)

    def hsplit(self, *args, **kwargs):
        return ops.hsplit_method(self, *args, **kwargs)

    def vsplit(self, *args, **kwargs):
        return ops.vsplit_method(self, *args, **kwargs)

    def dsplit(self, *args, **kwargs):
        return ops.dsplit_method(self, *args, **kwargs)

    def as_strided(self, size, stride, storage_offset=None):
        return ops.shape.as_strided_method(self, size, stride, storage_offset)

    def unfold(self, *args, **kwargs):
        _, values = signatures.bound("Tensor.unfold", args, kwargs)
        return ops.shape.unfold(self, values["dimension"], values["size"], values["step"])

    def masked_select(self, mask):
        return ops.masked_select_method(self, mask)

    def nonzero_static(self, *args, **kwargs):
        from gradcli.engine.ops import search
        return search.nonzero_static_method(self, *args, **kwargs)

    def nonzero(self, *args, **kwargs):
        if not args and not kwargs:
            return ops.nonzero(self)
        return ops.nonzero_method(self, *args, **kwargs)

    def argwhere(self):
        return ops.argwhere(self)

    def count_nonzero(self, *args, **kwargs):
        return ops.count_nonzero_method(self, *args, **kwargs)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return ops.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return ops.unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self, *args, **kwargs):
        return ops.bincount_method(self, *args, **kwargs)

    def prelu(self, weight):
        return ops.prelu(self, weight)

    def type_as(self, other) -> "Tensor":
        """This tensor in `other`'s dtype (itself when it has it already), as `to(other.dtype)`."""
        if other.__class__ is not Tensor:
            raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {signatures.type_name(other)}")
        return ops.to_dtype(self, dtypes.of_array(other._a))

    def cpu(self, *, memory_format=None) -> "Tensor":
        if self._a.__class__ is not np.ndarray:
            raise NotImplementedError(meta_words("NO_DATA"))
        if memory_format is None:
            return self
        return ops.to_dtype(self, dtypes.of_array(self._a), False, _layout.memory_format_arg("cpu", memory_format))

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        if device.__class__ is int:         # an index: PyTorch asks its accelerator for that device
            raise accelerator_index(device)
        if device.__class__ is str and device.split(":")[0] != "cuda" or \
                device.__class__ is _Device and device.type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        raise AssertionError(NO_CUDA)

    @property
    def is_cuda(self) -> bool:
        return False

    def clone(self, *, memory_format=None) -> "Tensor":
        if memory_format is None or memory_format is dtypes.preserve_format:
            return ops.clone(self)
        return ops.arith.clone_in_format(self, _layout.memory_format_arg("clone", memory_format))

    def contiguous(self, *, memory_format=dtypes.contiguous_format) -> "Tensor":
        if memory_format is dtypes.contiguous_format:
            return ops.contiguous(self)
        return ops.arith.contiguous_in_format(self, _layout.memory_format_arg("contiguous", memory_format, False))

    # ------------------------------------------------------------------------------ arithmetic
    def __add__(self, other):
        try:
            return ops.add(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __radd__(self, other):
        try:
            return ops.add(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __sub__(self, other):
        try:
            return ops.sub(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rsub__(self, other):
        try:
            return ops.rsub(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __mul__(self, other):
        try:
            return ops.mul(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rmul__(self, other):
        try:
            return ops.mul(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __truediv__(self, other):
        try:
            return ops.div(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rtruediv__(self, other):
        try:
            return ops.rdiv(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __pow__(self, other):
        try:
            return ops.power(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rpow__(self, other):
        try:
            return ops.power(other, self)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __matmul__(self, other):
        if other.__class__ is not Tensor:
            return NotImplemented       # Python's "unsupported operand type(s) for @", as PyTorch's
        if self._a.dtype.kind == "c" or other._a.dtype.kind == "c":
            return _cx().matmul(self, other)
        return ops.matmul(self, other)

    def __rmatmul__(self, other):
        return NotImplemented

    def __neg__(self):
        return ops.neg(self)

    def __pos__(self):
        return self

    def __lt__(self, other):
        try:
            return ops.compare(np.less, self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __le__(self, other):
        try:
            return ops.compare(np.less_equal, self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __gt__(self, other):
        try:
            return ops.compare(np.greater, self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __ge__(self, other):
        try:
            return ops.compare(np.greater_equal, self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __eq__(self, other):
        if other is None:
            return False
        try:
            return ops.compare(np.equal, self, other)
        except TypeError as e:      # not a Tensor or a number (a list, a tuple): Python's identity test, False
            return recording.not_implemented(e)

    def __ne__(self, other):
        if other is None:
            return True
        try:
            return ops.compare(np.not_equal, self, other)
        except TypeError as e:
            return recording.not_implemented(e)

    def add(self, other, alpha=1):
        return ops.add(self, other, alpha)

    def sub(self, other, alpha=1):
        return ops.sub(self, other, alpha)

    def mul(self, other):
        return ops.mul(self, other)

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is not None:
            return ops.div_rounding(self, other, rounding_mode)
        return ops.div(self, other)

    # PyTorch's aliases: the same ops, so the same nodes (x.multiply(2) has MulBackward0)
    divide, multiply, subtract = div, mul, sub

    def true_divide(self, other):
        return ops.div(self, other)

    def pow(self, exponent):
        return ops.power(self, exponent)

    def neg(self):
        return ops.neg(self)

    def exp(self):
        return ops.exp(self)

    def reciprocal(self):
        return ops.reciprocal(self)

    def reciprocal_(self):
        return self._inplace_unary(ops.reciprocal)

    def mm(self, mat2):
        return ops.mm(self, mat2)

    def log(self):
        return ops.log(self)

    def sqrt(self):
        return ops.sqrt(self)

    def masked_fill(self, mask, value):
        return ops.masked_fill(self, mask, value)

    def masked_fill_(self, mask, value):
        if self._base is not None and ops.indexing.masked_fill_expanded(self, mask, value):
            return self
        return self._inplace(lambda a, _: ops.masked_fill(a, mask, value, True), value)

    def expand(self, *sizes, **kwargs):
        if kwargs or not sizes:
            sizes = signatures.one_int_list("Tensor.expand", sizes, kwargs)
        return ops.expand(self, *sizes)

    def unsqueeze(self, dim):
        return ops.unsqueeze(self, dim)

    def squeeze(self, *args, **kwargs):
        if len(args) > 1 and not kwargs:        # x.squeeze(0, 1): PyTorch's parser reads the ints as the dim list
            if signatures.check("Tensor.squeeze", args, {}) is not None:
                raise TypeError("squeeze(): dims are ints")     # (the call's argument check words it)
            return ops.squeeze(self, args)
        if (args and args[0] is None) or kwargs.get("dim", 0) is None:
            raise TypeError("squeeze(): dim is not None")      # (the call's argument check words it)
        return _squeeze(self, *args, **kwargs)

    def t(self):
        return ops.t(self)

    def t_(self):
        return ops.shape.inplace_view(self, "t_")

    def transpose_(self, dim0, dim1):
        return ops.shape.inplace_view(self, "transpose_", dim0, dim1)

    swapdims_ = swapaxes_ = transpose_

    def squeeze_(self, dim=None):
        if dim is None:
            return ops.shape.inplace_view(self, "squeeze_")
        return ops.shape.inplace_view(self, "squeeze_", dim)

    def unsqueeze_(self, dim):
        return ops.shape.inplace_view(self, "unsqueeze_", dim)

    def view(self, *shape, **kwargs):
        if kwargs or not shape:
            shape = signatures.one_int_list("Tensor.view", shape, kwargs)
        return ops.view(self, *shape)

    def __and__(self, other):
        try:
            return ops.bitwise_and(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rand__(self, other):
        try:
            return ops.bitwise_and(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __or__(self, other):
        try:
            return ops.bitwise_or(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __ror__(self, other):
        try:
            return ops.bitwise_or(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __xor__(self, other):
        try:
            return ops.bitwise_xor(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rxor__(self, other):
        try:
            return ops.bitwise_xor(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __lshift__(self, other):
        try:
            return ops.lshift(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rlshift__(self, other):
        try:
            return ops.lshift(other, self)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rshift__(self, other):
        try:
            return ops.rshift(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rrshift__(self, other):
        try:
            return ops.rshift(other, self)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __ilshift__(self, other):
        try:
            return self._inplace_op(ops.lshift, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __irshift__(self, other):
        try:
            return self._inplace_op(ops.rshift, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __iand__(self, other):
        try:
            return self._inplace_bitwise(ops.bitwise_and, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __ior__(self, other):
        try:
            return self._inplace_bitwise(ops.bitwise_or, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __ixor__(self, other):
        try:
            return self._inplace_bitwise(ops.bitwise_xor, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __invert__(self):
        return ops.bitwise_not(self)

    # the named forms of the bitwise operators, and their in-place forms
    def bitwise_and(self, other):
        return ops.bitwise_and(self, other)

    def bitwise_or(self, other):
        return ops.bitwise_or(self, other)

    def bitwise_xor(self, other):
        return ops.bitwise_xor(self, other)

    def bitwise_not(self):
        return ops.bitwise_not(self)

    def bitwise_left_shift(self, other):
        return ops.lshift(self, other)

    def bitwise_right_shift(self, other):
        return ops.rshift(self, other)

    def bitwise_and_(self, other):
        return self._inplace_bitwise(ops.bitwise_and, other)

    def bitwise_or_(self, other):
        return self._inplace_bitwise(ops.bitwise_or, other)

    def bitwise_xor_(self, other):
        return self._inplace_bitwise(ops.bitwise_xor, other)

    def _inplace_bitwise(self, fn, other):
        """An in-place bitwise op: TensorIterator checks that the result type casts to this tensor's before the
        kernel checks the dtype it takes (`a &= 1.5` on int64 is the cast's RuntimeError, not bitwise_and's
        NotImplementedError)."""
        if other.__class__ in (Tensor, int, float, bool):
            result = recording.result_dtype(self, other).np
            if result != self._a.dtype and not np.can_cast(result, self._a.dtype, "same_kind"):
                raise RuntimeError(f"result type {recording.TYPE_WORDS[result.name]} can't be cast to the desired "
                                   f"output type {recording.type_word(self._a)}")
        return self._inplace_op(fn, other)

    def bitwise_not_(self):
        return self._inplace_unary(ops.bitwise_not)

    def bitwise_left_shift_(self, other):
        return self._inplace_op(ops.lshift, other)

    def bitwise_right_shift_(self, other):
        return self._inplace_op(ops.rshift, other)

    def sum(self, dim=ALL_DIMS, keepdim=False, dtype=None):
        return ops.reduce_sum(self, dim, keepdim, dtype)

    def mean(self, dim=ALL_DIMS, keepdim=False, dtype=None):
        return ops.mean(self, dim, keepdim, dtype)

    def kron(self, other):
        return ops.kron(self, other, 0)

    def nansum(self, dim=None, keepdim=False, dtype=None):
        return ops.reduce.nansum(self, dim, keepdim, dtype)

    def nanmean(self, dim=None, keepdim=False, dtype=None):
        return ops.reduce.nanmean(self, dim, keepdim, dtype)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        return ops.norm(self, p, dim, keepdim, dtype)

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

    # PyTorch's other names, each its own method: a refused argument's message names the one called
    def not_equal(self, other):
        return self.ne(other)

    def greater(self, other):
        return self.gt(other)

    def greater_equal(self, other):
        return self.ge(other)

    def less(self, other):
        return self.lt(other)

    def less_equal(self, other):
        return self.le(other)

    # in place: the comparison's 0 or 1 in this tensor's dtype, with a node whose gradient is zero
    def eq_(self, other):
        return self._inplace_op(lambda a, b: ops.elementwise.compare_as_self(np.equal, a, b), other)

    def ne_(self, other):
        return self._inplace_op(lambda a, b: ops.elementwise.compare_as_self(np.not_equal, a, b), other)

    def lt_(self, other):
        return self._inplace_op(lambda a, b: ops.elementwise.compare_as_self(np.less, a, b), other)

    def le_(self, other):
        return self._inplace_op(lambda a, b: ops.elementwise.compare_as_self(np.less_equal, a, b), other)

    def gt_(self, other):
        return self._inplace_op(lambda a, b: ops.elementwise.compare_as_self(np.greater, a, b), other)

    def ge_(self, other):
        return self._inplace_op(lambda a, b: ops.elementwise.compare_as_self(np.greater_equal, a, b), other)

    def not_equal_(self, other):
        return self.ne_(other)

    def greater_(self, other):
        return self.gt_(other)

    def greater_equal_(self, other):
        return self.ge_(other)

    def less_(self, other):
        return self.lt_(other)

    def less_equal_(self, other):
        return self.le_(other)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        from gradcli.engine import closeness
        return closeness.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        from gradcli.engine import closeness
        return closeness.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other):
        from gradcli.engine import closeness
        return closeness.equal(self, other)

    # ------------------------------------------------------------------------------ group: elementwise
    # (methods of ops/elementwise.py go here)
    def abs(self):
        return ops.abs(self)

    absolute = abs

    def __abs__(self):
        return ops.abs(self) if self._a.dtype.kind != "c" else _cx().abs_(self)

    def sign(self):
        return ops.sign(self)

    def sgn(self):
        return ops.sgn(self)

    def exp2(self):
        return ops.exp2(self)

    def expm1(self):
        return ops.expm1(self)

    def log2(self):
        return ops.log2(self)

    def log10(self):
        return ops.log10(self)

    def log1p(self):
        return ops.log1p(self)

    def rsqrt(self):
        return ops.rsqrt(self)

    def square(self):
        return ops.square(self)

    def sin(self):
        return ops.sin(self)

    def cos(self):
        return ops.cos(self)

    def tan(self):
        return ops.tan(self)

    def asin(self):
        return ops.asin(self)

    def acos(self):
        return ops.acos(self)

    def atan(self):
        return ops.atan(self)

    def atan2(self, other):
        return ops.atan2(self, other)

    arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2

    def asinh(self):
        return ops.asinh(self)

    def acosh(self):
        return ops.acosh(self)

    def atanh(self):
        return ops.atanh(self)

    arcsinh, arccosh, arctanh = asinh, acosh, atanh

    def sinh(self):
        return ops.sinh(self)

    def cosh(self):
        return ops.cosh(self)

    def tanh(self):
        return ops.tanh(self)

    def sigmoid(self):
        return ops.sigmoid(self)

    def relu(self):
        return ops.relu(self)

    def hardshrink(self, *args, **kwargs):
        return ops.aten_nn.hardshrink_method(self, *args, **kwargs)

    def erf(self):
        return ops.erf(self)

    def erfc(self):
        return ops.erfc(self)

    def logit(self, *args, **kwargs):
        return ops.elementwise.logit(self, *args, **kwargs, position=None if kwargs else 1)

    def xlogy(self, other):
        return ops.elementwise.xlogy_method(self, other)

    def logaddexp(self, other):
        return ops.logaddexp(self, other)

    def logaddexp2(self, other):
        return ops.logaddexp2(self, other)

    def hypot(self, other):
        return ops.hypot(self, other)

    def cross(self, other, dim=None):
        return ops.linalg.cross(self, other, dim)

    def select_scatter(self, *args, **kwargs):
        return ops.select_scatter_method(self, *args, **kwargs)

    def slice_scatter(self, *args, **kwargs):
        return ops.slice_scatter_method(self, *args, **kwargs)

    def diagonal_scatter(self, *args, **kwargs):
        return ops.diagonal_scatter_method(self, *args, **kwargs)

    def deg2rad(self):
        return ops.deg2rad(self)

    def rad2deg(self):
        return ops.rad2deg(self)

    def heaviside(self, values):
        return ops.heaviside(self, values)

    def gcd(self, other):
        return ops.gcd(self, other)

    def lcm(self, other):
        return ops.lcm(self, other)

    def copysign(self, other):
        return ops.copysign(self, other, _method=True)

    def signbit(self):
        return ops.signbit(self)

    def nan_to_num(self, *args, **kwargs):
        return ops.nan_to_num(self, *args, **kwargs, first=1, keywords=tuple(kwargs))

    def sinc(self):
        return ops.sinc(self)

    def lgamma(self):
        return ops.special.lgamma(self)

    def digamma(self):
        return ops.special.digamma(self)

    def polygamma(self, n):
        return ops.special.polygamma_method(self, n)

    def mvlgamma(self, p):
        return ops.special.mvlgamma(self, p)

    def igamma(self, other):
        return ops.igamma_method(self, other)

    def igammac(self, other):
        return ops.igammac_method(self, other)

    def erfinv(self):
        return ops.special.erfinv(self)

    def i0(self):
        return ops.special.i0(self)

    def clamp(self, min=None, max=None):
        return ops.clamp(self, min, max)

    clip = clamp

    def clamp_min(self, min):
        return ops.clamp_min(self, min)

    def clamp_max(self, max):
        return ops.clamp_max(self, max)

    def maximum(self, other):
        return ops.maximum(self, other)

    def minimum(self, other):
        return ops.minimum(self, other)

    def where(self, condition, y):
        return ops.where(condition, self, y)

    def floor(self):
        return ops.floor(self)

    def ceil(self):
        return ops.ceil(self)

    def round(self, *, decimals=0):
        return ops.round(self, decimals)

    def trunc(self):
        return ops.trunc(self)

    fix = trunc

    def frac(self):
        return ops.frac(self)

    def lerp(self, end, weight):
        return ops.lerp(self, end, weight)

    def addcmul(self, *args, value=1):
        return ops.arith.addcmul_method(self, *args, value=value)

    def addcdiv(self, *args, value=1):
        return ops.arith.addcdiv_method(self, *args, value=value)

    def floor_divide(self, other):
        return ops.floor_divide(self, other)

    def remainder(self, other):
        return ops.remainder(self, other)

    def fmod(self, other):
        return ops.elementwise.fmod(self, other)

    def __floordiv__(self, other):
        if self._a.dtype.kind == "c" or other.__class__ is complex:
            raise _cx().refusal("floor_divide", self._a.dtype)
        try:
            return ops.floor_divide(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rfloordiv__(self, other):
        try:
            return ops.floor_divide(other, self)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __mod__(self, other):
        if self._a.dtype.kind == "c" or other.__class__ is complex:
            raise _cx().refusal("remainder", self._a.dtype)
        try:
            return ops.remainder(self, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __rmod__(self, other):
        try:
            return ops.remainder(other, self)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def logical_and(self, other):
        return ops.logical_and(self, other)

    def logical_or(self, other):
        return ops.logical_or(self, other)

    def logical_xor(self, other):
        return ops.logical_xor(self, other)

    def logical_not(self):
        return ops.logical_not(self)

    def logical_and_(self, other):
        return self._inplace_op(ops.logical_and, other)

    def logical_or_(self, other):
        return self._inplace_op(ops.logical_or, other)

    def logical_xor_(self, other):
        return self._inplace_op(ops.logical_xor, other)

    def logical_not_(self):
        return self._inplace_unary(ops.logical_not)

    def isnan(self):
        return ops.isnan(self)

    def isinf(self):
        return ops.isinf(self)

    def isfinite(self):
        return ops.isfinite(self)

    def negative(self):
        return ops.neg(self)

    def ldexp(self, other):
        return ops.elementwise.ldexp(self, other, 1)

    def ldexp_(self, other):
        if self._a.dtype.kind not in "fV":
            raise RuntimeError(f"ldexp can't be cast to the desired output type {recording.type_word(self._a)}")
        return self._inplace_op(lambda a, b: ops.elementwise.ldexp(a, b, 1), other)

    def frexp(self):
        return ops.elementwise.frexp(self)

    def nextafter(self, other):
        return ops.elementwise.nextafter(self, other)

    def nextafter_(self, other):
        return self._inplace_op(lambda a, b: ops.elementwise.nextafter(a, b, 1), other)

    def isreal(self):
        return ops.elementwise.isreal(self)

    def renorm(self, p, dim, maxnorm):
        return ops.reduce.renorm(self, p, dim, maxnorm)

    def renorm_(self, p, dim, maxnorm):
        return self._inplace_unary(lambda a: ops.reduce.renorm(a, p, dim, maxnorm))

    def dist(self, other, p=2):
        return ops.reduce.dist(self, other, p)

    def fmax(self, other):
        return ops.elementwise.fmax(self, other)

    def fmin(self, other):
        return ops.elementwise.fmin(self, other)

    # in place: each through _inplace, so leaf checks, version counters and grad_fn work as for add_
    def _inplace_with(self, fn, *operands, elementwise: bool = False):
        """_inplace for ops with several tensor operands: the one that requires grad (if any) tells
        _inplace to keep the overwritten values for the new node; `elementwise`: their broadcast must
        not exceed this tensor (_inplace's `broadcast_with`)."""
        needing = None
        for t in operands:
            if t.__class__ is Tensor and t.requires_grad:
                needing = t
                break
        return self._inplace(lambda a, _: fn(a), needing, operands if elementwise else ())

    def _inplace_unary(self, fn):
        return self._inplace(lambda a, _: fn(a), None)

    def abs_(self):
        return self._inplace_unary(ops.abs)

    absolute_ = abs_

    def sign_(self):
        return self._inplace_unary(ops.sign)

    def sgn_(self):
        return self._inplace_unary(ops.sgn)

    def exp2_(self):
        return self._inplace_unary(ops.exp2)

    def expm1_(self):
        return self._inplace_unary(ops.expm1)

    def log2_(self):
        return self._inplace_unary(ops.log2)

    def log10_(self):
        return self._inplace_unary(ops.log10)

    def log1p_(self):
        return self._inplace_unary(ops.log1p)

    def rsqrt_(self):
        return self._inplace_unary(ops.rsqrt)

    def square_(self):
        return self._inplace_unary(ops.square)

    def sin_(self):
        return self._inplace_unary(ops.sin)

    def cos_(self):
        return self._inplace_unary(ops.cos)

    def tan_(self):
        return self._inplace_unary(ops.tan)

    def asin_(self):
        return self._inplace_unary(ops.asin)

    def acos_(self):
        return self._inplace_unary(ops.acos)

    def atan_(self):
        return self._inplace_unary(ops.atan)

    def atan2_(self, other):
        return self._inplace_op(ops.atan2, other)

    arcsin_, arccos_, arctan_, arctan2_ = asin_, acos_, atan_, atan2_

    def asinh_(self):
        return self._inplace_unary(ops.elementwise.asinh_inplace)

    def acosh_(self):
        return self._inplace_unary(ops.elementwise.acosh_inplace)

    def atanh_(self):
        return self._inplace_unary(ops.elementwise.atanh_inplace)

    arcsinh_, arccosh_, arctanh_ = asinh_, acosh_, atanh_

    def sinh_(self):
        return self._inplace_unary(ops.sinh)

    def cosh_(self):
        return self._inplace_unary(ops.cosh)

    def tanh_(self):
        return self._inplace_unary(ops.tanh)

    def sigmoid_(self):
        return self._inplace_unary(ops.sigmoid)

    def relu_(self):
        return self._inplace_unary(ops.relu)

    def erf_(self):
        return self._inplace_unary(ops.erf)

    def erfc_(self):
        return self._inplace_unary(ops.erfc)

    def logit_(self, eps=None, **kwargs):
        position = None if kwargs or eps is None else 1
        eps = kwargs.pop("eps", eps)
        if kwargs:
            raise TypeError(f"logit_() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if eps is not None:         # parsed before the in-place checks
            eps = ops.elementwise.number_arg(eps, "logit_", "eps", position, word="float")
        return self._inplace_unary(lambda t: ops.elementwise.logit(t, eps, "logit_", position))

    def xlogy_(self, other):
        if other.__class__ is not Tensor and not isinstance(other, (int, float)):
            ops.elementwise.xlogy_method(self, other)               # (its argument error)
        return self._inplace_op(ops.elementwise.xlogy, other)

    def hypot_(self, other):
        return self._inplace_op(ops.hypot, other)

    def deg2rad_(self):
        return self._inplace_unary(ops.deg2rad)

    def rad2deg_(self):
        return self._inplace_unary(ops.rad2deg)

    def heaviside_(self, values):
        return self._inplace_op(ops.heaviside, values)

    def gcd_(self, other):
        return self._inplace_op(ops.gcd, other)

    def lcm_(self, other):
        return self._inplace_op(ops.lcm, other)

    def copysign_(self, other):
        if other.__class__ is not Tensor and not isinstance(other, (int, float)):
            ops.copysign(self, other, _method=True)                # (its argument error)
        return self._inplace_op(ops.copysign, other)

    def nan_to_num_(self, *args, **kwargs):
        return self._inplace_unary(lambda t: ops.nan_to_num(t, *args, **kwargs, name="nan_to_num_", first=1,
                                                            keywords=tuple(kwargs)))

    def sinc_(self):
        return self._inplace_unary(ops.sinc)

    def lgamma_(self):
        return self._inplace_unary(ops.special.lgamma)

    def digamma_(self):
        return self._inplace_unary(ops.special.digamma)

    def igamma_(self, other):
        return self._inplace_op(ops.igamma_method, other)

    def igammac_(self, other):
        return self._inplace_op(ops.igammac_method, other)

    def polygamma_(self, n):
        n = ops.special.int_argument(n, "polygamma_", "n", 1)
        return self._inplace_unary(lambda t: ops.special.polygamma(n, t, row=ops.special.POLYGAMMA_))

    def mvlgamma_(self, p):
        return ops.special.mvlgamma_inplace(self, p)

    def erfinv_(self):
        return self._inplace_unary(ops.special.erfinv)

    def i0_(self):
        return self._inplace_unary(ops.special.i0)

    def clamp_(self, min=None, max=None):
        ops.elementwise.check_number_bounds_in_place(self, min, max)
        return self._inplace_with(lambda a: ops.clamp(a, min, max), min, max)

    clip_ = clamp_

    def clamp_min_(self, min):
        ops.elementwise.check_number_bounds_in_place(self, min)
        return self._inplace(ops.clamp_min, min)

    def clamp_max_(self, max):
        ops.elementwise.check_number_bounds_in_place(self, max)
        return self._inplace(ops.clamp_max, max)

    def floor_(self):
        return self._inplace_unary(ops.floor)

    def ceil_(self):
        return self._inplace_unary(ops.ceil)

    def round_(self, *, decimals=0):
        if decimals.__class__ is not int:       # (checked before the in-place rules, as PyTorch's parser does)
            ops.round(self, decimals, "round_")
        return self._inplace_unary(lambda a: ops.round(a, decimals))

    def trunc_(self):
        return self._inplace_unary(ops.trunc)

    fix_ = trunc_

    def frac_(self):
        return self._inplace_unary(ops.frac)

    def lerp_(self, end, weight):
        return self._inplace_with(lambda a: ops.lerp(a, end, weight), end, weight, elementwise=True)

    def addcmul_(self, *args, value=1):
        if len(args) > 2:
            raise TypeError(f"addcmul_() takes 2 positional arguments but {len(args)} were given")
        return self._inplace_with(lambda a: ops.arith.addcmul_method(a, *args, value=value), *args, elementwise=True)

    def addcdiv_(self, *args, value=1):
        if len(args) > 2:
            raise TypeError(f"addcdiv_() takes 2 positional arguments but {len(args)} were given")
        ops.arith.check_addcdiv_operands(args)
        return self._inplace_with(lambda a: ops.arith.addcdiv_method(a, *args, value=value), *args, elementwise=True)

    def floor_divide_(self, other):
        return self._inplace_op(ops.floor_divide_, other)

    __ifloordiv__ = floor_divide_

    def remainder_(self, other):
        return self._inplace_op(ops.remainder, other)

    def fmod_(self, other):
        return self._inplace_op(ops.elementwise.fmod, other)

    __imod__ = remainder_

    def pow_(self, exponent):
        return self._inplace_op(ops.power, exponent)

    __ipow__ = pow_

    def neg_(self):
        return self._inplace_unary(ops.neg)

    negative_ = neg_

    def exp_(self):
        return self._inplace_unary(ops.exp)

    def log_(self):
        return self._inplace_unary(ops.log)

    def sqrt_(self):
        return self._inplace_unary(ops.sqrt)

    def copy_(self, src, non_blocking=False):
        if src.__class__ is Tensor and src._a.__class__ is not self._a.__class__:      # across devices
            if self._a.__class__ is np.ndarray:
                raise NotImplementedError(meta_words("NO_DATA"))
            src = src.to("meta")            # a CPU tensor's values copied into a meta one: only its shape counts
        return self._inplace(ops.copy, src)

    # ------------------------------------------------------------------------------ group: reduce
    # (methods of ops/reduce.py and ops/nn.py go here)
    def prod(self, dim=ALL_DIMS, keepdim=False, dtype=None):
        if dim is None:     # prod has no dim=None form (sum has): the argument check words the refusal
            raise TypeError("prod(): dim must be an int")
        return ops.prod(self, None if dim is ALL_DIMS else dim, keepdim, dtype)

    def max(self, dim=None, keepdim=False, *, other=None):
        return ops.reduce_max(self, dim, keepdim, other=other)

    def min(self, dim=None, keepdim=False, *, other=None):
        return ops.reduce_min(self, dim, keepdim, other=other)

    def amax(self, dim=(), keepdim=False):
        return ops.amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim=False):
        return ops.amin(self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return ops.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return ops.argmin(self, dim, keepdim)

    def std(self, *args, **kwargs):
        return ops.std(self, *args, **kwargs)

    def var(self, *args, **kwargs):
        return ops.var(self, *args, **kwargs)

    # dim is required: the ops raise PyTorch's TypeError when it is missing
    def logsumexp(self, *args, **kwargs):
        return ops.logsumexp(self, *args, **kwargs)

    def cumsum(self, *args, **kwargs):
        return ops.cumsum(self, *args, **kwargs)

    def cumprod(self, *args, **kwargs):
        return ops.cumprod(self, *args, **kwargs)

    def _cumulative_(self, fn, kernel: str, args, kwargs):
        if self._a.dtype == np.bool_ and self._a.size and self._a.ndim:
            # the bool result has no kernel; a 0-d or empty one is copied without dispatching
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
        return self._inplace(lambda a, _: Tensor(fn(a, *args, **kwargs)._a.astype(np.bool_))
                             if a._a.dtype == np.bool_ else fn(a, *args, **kwargs), None)

    def cumsum_(self, *args, **kwargs):
        return self._cumulative_(ops.cumsum, "cumsum_out_cpu", args, kwargs)

    def cumprod_(self, *args, **kwargs):
        return self._cumulative_(ops.cumprod, "cumprod_out_cpu", args, kwargs)

    def all(self, dim=None, keepdim=False):
        return ops.reduce_all(self, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return ops.reduce_any(self, dim, keepdim)

    def softmax(self, *args, **kwargs):
        return ops.softmax(self, *args, **kwargs)

    def log_softmax(self, *args, **kwargs):
        return ops.log_softmax(self, *args, **kwargs)

    # ------------------------------------------------------------------------------ group: shape
    # (methods of ops/shape.py and ops/linalg.py go here)
    def reshape(self, *shape, **kwargs):
        if kwargs or not shape:
            shape = signatures.one_int_list("Tensor.reshape", shape, kwargs)
        return ops.reshape(self, *shape)

    def reshape_as(self, other):
        return ops.reshape_as(self, other)

    def view_as(self, other):
        return ops.view_as(self, other)

    def flatten(self, start_dim=0, end_dim=-1):
        return ops.flatten(self, start_dim, end_dim)

    def unflatten(self, dim, sizes):
        return ops.unflatten(self, dim, sizes)

    def expand_as(self, other):
        return ops.expand_as(self, other)

    def broadcast_to(self, *size, **kwargs):
        if kwargs.keys() == {"size"} and not size:
            size = (kwargs["size"],)
        elif kwargs or not size:
            raise TypeError('broadcast_to() missing 1 required positional arguments: "size"')
        return ops.shape.broadcast_to_method(self, size)

    def repeat(self, *repeats, **kwargs):
        if kwargs or not repeats:
            repeats = signatures.one_int_list("Tensor.repeat", repeats, kwargs)
        return ops.repeat(self, *repeats)

    def resize_(self, *size, memory_format=None, **kwargs):
        from gradcli.engine import resize
        return resize.resize_(self, *size, memory_format=memory_format, **kwargs)

    def resize_as_(self, *args, **kwargs):
        from gradcli.engine import resize
        return resize.resize_as_(self, *args, **kwargs)

    def resize(self, *sizes):
        from gradcli.engine import resize
        return resize.resize(self, *sizes)

    def resize_as(self, tensor):
        from gradcli.engine import resize
        return resize.resize_as(self, tensor)

    def tile(self, *dims, **kwargs):
        if kwargs or not dims:
            dims = signatures.one_int_list("Tensor.tile", dims, kwargs)
        return ops.shape.tile(self, *dims)

    def permute(self, *dims, **kwargs):
        if kwargs or not dims:
            dims = signatures.one_int_list("Tensor.permute", dims, kwargs)
        return ops.permute(self, *dims)

    def transpose(self, dim0, dim1):
        return ops.transpose(self, dim0, dim1)

    def swapdims(self, dim0, dim1):
        return self.transpose(dim0, dim1)

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    def movedim(self, source, destination):
        return ops.movedim(self, source, destination)

    moveaxis = movedim

    @property
    def T(self):
        return ops.numpy_T(self)

    @property
    def mT(self):
        return ops.matrix_T(self, "mT")

    @property
    def H(self):
        return ops.matrix_T(self, "H")

    @property
    def mH(self):
        return ops.matrix_T(self, "mH")

    def adjoint(self):
        return ops.matrix_T(self, "adjoint()")

    def dim_order(self, *, ambiguity_check=False) -> tuple:
        if self._a.__class__ is not np.ndarray:
            raise NotImplementedError("gradcli does not implement torch.Tensor.dim_order of a meta tensor")
        return _layout.dim_order(self._a, ambiguity_check)

    def is_contiguous(self, *, memory_format=dtypes.contiguous_format) -> bool:
        # (a meta tensor keeps no layout: gradcli calls every one contiguous, in no other format)
        if memory_format is not dtypes.contiguous_format:
            _layout.memory_format_arg("is_contiguous", memory_format, False)
            if self._a.__class__ is np.ndarray:
                return _layout.is_contiguous_in(self._a, memory_format)
            return memory_format is dtypes.preserve_format
        return bool(self._a.flags.c_contiguous) or self._a.__class__ is not np.ndarray

    def split(self, split_size, dim=0):
        return ops.split(self, split_size, dim)

    def split_with_sizes(self, split_sizes, dim=0):
        return ops.split_with_sizes(self, split_sizes, dim)

    def chunk(self, chunks, dim=0):
        return ops.chunk(self, chunks, dim)

    def unsafe_chunk(self, chunks, dim=0):
        return ops.shape.unsafe_chunk(self, chunks, dim)

    def unsafe_split(self, split_size, dim=0):
        return ops.shape.unsafe_split(self, split_size, dim)

    def unsafe_split_with_sizes(self, split_sizes, dim=0):
        return ops.shape.unsafe_split_with_sizes(self, split_sizes, dim)

    def narrow_copy(self, dim, start, length):
        return ops.shape.narrow_copy(self, dim, start, length)

    def unbind(self, dim=0):
        return ops.unbind(self, dim)

    def flip(self, *dims, **kwargs):
        if kwargs or not dims:
            dims = signatures.one_int_list("Tensor.flip", dims, kwargs)
        return ops.flip(self, *dims)

    def fliplr(self):
        return ops.fliplr(self)

    def flipud(self):
        return ops.flipud(self)

    def roll(self, shifts, dims=None):
        return ops.roll(self, shifts, dims)

    def narrow(self, dim, start, length):
        return ops.narrow(self, dim, start, length)

    def select(self, dim, index):
        return ops.indexing.select(self, dim, index)

    def gather(self, dim, index):
        return ops.gather(self, dim, index)

    def scatter(self, *args, **kwargs):
        return ops.scatter_method(self, *args, **kwargs)

    def scatter_(self, *args, **kwargs):
        return ops.scatter_inplace(self, *args, **kwargs)

    def scatter_add(self, *args, **kwargs):
        return ops.scatter_add_method(self, *args, **kwargs)

    def scatter_add_(self, *args, **kwargs):
        return ops.scatter_add_inplace(self, *args, **kwargs)

    def index_add(self, *args, **kwargs):
        return ops.index_add_method(self, *args, **kwargs)

    def index_add_(self, *args, **kwargs):
        return ops.index_add_inplace(self, *args, **kwargs)

    def index_fill(self, *args, **kwargs):
        return ops.index_fill_method(self, *args, **kwargs)

    def index_fill_(self, *args, **kwargs):
        return ops.index_fill_inplace(self, *args, **kwargs)

    def index_copy(self, *args, **kwargs):
        return ops.index_copy_method(self, *args, **kwargs)

    def index_copy_(self, *args, **kwargs):
        return ops.index_copy_inplace(self, *args, **kwargs)

    def index_put(self, *args, **kwargs):
        return ops.index_put_method(self, *args, **kwargs)

    def index_put_(self, *args, **kwargs):
        return ops.index_put_inplace(self, *args, **kwargs)

    def index_reduce(self, *args, **kwargs):
        return ops.index_reduce_method(self, *args, **kwargs)

    def index_reduce_(self, *args, **kwargs):
        return ops.index_reduce_inplace(self, *args, **kwargs)

    def scatter_reduce(self, *args, **kwargs):
        return ops.scatter_reduce_method(self, *args, **kwargs)

    def scatter_reduce_(self, *args, **kwargs):
        return ops.scatter_reduce_inplace(self, *args, **kwargs)

    def masked_scatter(self, *args, **kwargs):
        return ops.masked_scatter_method(self, *args, **kwargs)

    def masked_scatter_(self, *args, **kwargs):
        return ops.masked_scatter_inplace(self, *args, **kwargs)

    def take(self, *args, **kwargs):
        return ops.take_method(self, *args, **kwargs)

    def put(self, *args, **kwargs):
        return ops.put_method(self, *args, **kwargs)

    def put_(self, *args, **kwargs):
        return ops.put_inplace(self, *args, **kwargs)

    def fill_diagonal_(self, *args, **kwargs):
        return ops.fill_diagonal_inplace(self, *args, **kwargs)

    def take_along_dim(self, *args, **kwargs):
        return ops.take_along_dim_method(self, *args, **kwargs)

    def repeat_interleave(self, *args, **kwargs):
        return ops.repeat_interleave_method(self, *args, **kwargs)

    def diff(self, *args, **kwargs):
        return ops.diff_method(self, *args, **kwargs)

    def rot90(self, k=1, dims=(0, 1)):
        return ops.rot90(self, k, dims)

    def index_select(self, dim, index):
        return ops.index_select(self, dim, index)

    def tril(self, diagonal=0):
        return ops.tril(self, diagonal)

    def triu(self, diagonal=0):
        return ops.triu(self, diagonal)

    def float_power(self, exponent):
        """PyTorch's float_power: pow in double, the base (and a tensor exponent) cast first."""
        if exponent.__class__ is Tensor:
            return ops.power(self.double(), exponent.double())
        return ops.power(self.double(), float(exponent))

    def float_power_(self, exponent):
        if self._a.dtype != np.float64:
            raise RuntimeError(f"the base given to float_power_ has dtype {recording.type_word(self._a)} but the "
                               "operation's result requires dtype Double")
        return self.pow_(exponent.double() if exponent.__class__ is Tensor else float(exponent))

    def inner(self, other):
        """PyTorch's inner: a product for a 0-d operand, else tensordot over both last dims."""
        if self._a.ndim == 0 or other._a.ndim == 0:
            return ops.mul(self, other)
        if self._a.shape[-1] != other._a.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"{list(self._a.shape)} and {list(other._a.shape)}")
        return ops.tensordot(self, other, ([-1], [-1]))

    def diagflat(self, offset=0):
        return self.contiguous().view(-1).diag(offset)

    def sum_to_size(self, *size):
        """PyTorch's sum_to_size: the leading dims and the dims that are 1 in `size` summed in one reduction
        (kept), then viewed as `size` when leading dims went; the tensor itself when nothing is summed."""
        if len(size) == 1 and size[0].__class__ in (tuple, list, Size):
            size = tuple(size[0])
        have = self._a.shape
        lead = len(have) - len(size)
        if lead < 0 or any(s != h and s != 1 for s, h in zip(size, have[lead:])):
            raise RuntimeError(f"size {{[{', '.join(map(str, size))}]}} is not expandable to size "
                               f"{{[{', '.join(map(str, have))}]}}.")
        if not size:
            return self.sum()
        dims = list(range(lead)) + [i for i in range(lead, len(have)) if size[i - lead] == 1 and have[i] != 1]
        out = self.sum(dims, keepdim=True) if dims else self
        return out.view(*size) if lead > 0 else out

    def tril_(self, diagonal=0):
        return self._inplace_unary(lambda a: ops.tril(a, diagonal))

    def triu_(self, diagonal=0):
        return self._inplace_unary(lambda a: ops.triu(a, diagonal))

    def matmul(self, other):
        return ops.matmul(self, other)

    def bmm(self, mat2):
        return ops.bmm(self, mat2)

    # the products with an added input (ops.blas), and their in-place forms (`_deprecated`: PyTorch's old
    # overloads, beta and alpha first)
    def addmm(self, mat1, mat2, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("addmm", self, (mat1, mat2) + _deprecated, beta, alpha, False)

    def addmm_(self, mat1, mat2, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("addmm", self, (mat1, mat2) + _deprecated, beta, alpha, True)

    def addmv(self, mat, vec, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("addmv", self, (mat, vec) + _deprecated, beta, alpha, False)

    def addmv_(self, mat, vec, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("addmv", self, (mat, vec) + _deprecated, beta, alpha, True)

    def addr(self, vec1, vec2, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("addr", self, (vec1, vec2) + _deprecated, beta, alpha, False)

    def addr_(self, vec1, vec2, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("addr", self, (vec1, vec2) + _deprecated, beta, alpha, True)

    def baddbmm(self, batch1, batch2, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("baddbmm", self, (batch1, batch2) + _deprecated, beta, alpha, False)

    def baddbmm_(self, batch1, batch2, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("baddbmm", self, (batch1, batch2) + _deprecated, beta, alpha, True)

    def addbmm(self, batch1, batch2, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("addbmm", self, (batch1, batch2) + _deprecated, beta, alpha, False)

    def addbmm_(self, batch1, batch2, *_deprecated, beta=1, alpha=1):
        return ops.blas.method("addbmm", self, (batch1, batch2) + _deprecated, beta, alpha, True)

    def mv(self, vec):
        return ops.mv(self, vec)

    def dot(self, tensor):
        return ops.dot(self, tensor)

    def vdot(self, other):
        return ops.vdot(self, other)

    def outer(self, vec2):
        return ops.outer(self, vec2)

    ger = outer

    def det(self):
        return ops.det(self)

    def inverse(self):
        return ops.inverse(self)

    def cholesky(self, upper=False):
        return ops.cholesky_legacy(self, upper)

    def matrix_power(self, n):
        return ops.matrix_power(self, n)

    def pinverse(self, rcond=1e-15):
        return ops.pinv(self, rcond)

    def qr(self, some=True):
        return ops.qr_legacy(self, some)

    def svd(self, some=True, compute_uv=True):
        return ops.svd_legacy(self, some, compute_uv)

    def matrix_exp(self):
        return ops.matrix_exp(self)

    def slogdet(self):
        return ops.slogdet(self, "slogdet")

    def logdet(self):
        return ops.logdet(self)

    def cholesky_inverse(self, upper=False):
        return ops.cholesky_inverse(self, upper)

    def cholesky_solve(self, input2, upper=False):
        return ops.cholesky_solve(self, input2, upper)

    def geqrf(self):
        return ops.geqrf(self)

    def orgqr(self, input2):
        return ops.householder_product(self, input2)

    def ormqr(self, input2, input3, left=True, transpose=False):
        return ops.ormqr(self, input2, input3, left, transpose)

    def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
        return ops.triangular_solve(self, A, upper, transpose, unitriangular)

    def lu(self, pivot=True, get_infos=False):
        return tuple(ops.lu_legacy(self, pivot, get_infos))     # (a plain tuple: PyTorch's Tensor.lu unpacks it)

    def lu_solve(self, LU_data, LU_pivots):
        return ops.lu_solve_legacy(self, LU_data, LU_pivots)

    def solve(self, other):
        return ops.lu.solve_removed(self, other)

    def lstsq(self, other):
        return ops.lu.lstsq_removed(self, other)

    def symeig(self, eigenvectors=False):
        return ops.lu.symeig_removed(self, eigenvectors=eigenvectors)

    def eig(self, eigenvectors=False):
        return ops.lu.eig_removed(self, eigenvectors=eigenvectors)

    def trace(self):
        return ops.trace(self)

    def diag(self, diagonal=0):
        return ops.diag(self, diagonal)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return ops.diagonal(self, offset, dim1, dim2)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        return ops.diag_embed(self, offset, dim1, dim2)

    # ------------------------------------------------------------------------------ group: creation
    # (random fills, hooks and other autograd methods go here)
    def uniform_(self, from_=0.0, /, to=1.0, *, generator=None):     # PyTorch's `from`: positional only here
        from gradcli.engine import factories
        return self._inplace(lambda a, _: factories.uniform_values(a, from_, to, generator), None)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        from gradcli.engine import factories
        return self._inplace(lambda a, _: factories.normal_values(a, mean, std, generator), None)

    def random_(self, *args, generator=None, **kwargs):
        from gradcli.engine import factories
        return self._inplace(lambda a, _: factories.random_values(a, *args, generator=generator, **kwargs), None)

    def exponential_(self, lambd=1.0, *, generator=None):
        from gradcli.engine import distributions
        return self._inplace(lambda a, _: distributions.exponential_values(a, lambd, generator), None)

    def geometric_(self, p=_MISSING_P, *, generator=None):
        if p is _MISSING_P:
            raise TypeError('geometric_() missing 1 required positional arguments: "p"')
        from gradcli.engine import distributions
        return self._inplace(lambda a, _: distributions.geometric_values(a, p, generator), None)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        from gradcli.engine import distributions
        return self._inplace(lambda a, _: distributions.cauchy_values(a, median, sigma, generator), None)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        from gradcli.engine import distributions
        return self._inplace(lambda a, _: distributions.log_normal_values(a, mean, std, generator), None)

    def bernoulli_(self, *args, generator=None, **kwargs):
        from gradcli.engine import distributions
        p = args[0] if args else kwargs.get("p")
        return self._inplace(lambda a, _: distributions.bernoulli_values(a, *args, generator=generator, **kwargs),
                             p if p.__class__ is Tensor else None)

    def bernoulli(self, *args, generator=None, **kwargs):
        if len(args) > 1:
            raise TypeError(f"bernoulli() takes 1 positional argument but {len(args)} were given")
        from gradcli.engine import distributions
        return distributions.bernoulli(self, *args, generator=generator, **kwargs)

    def multinomial(self, num_samples=None, replacement=False, *, generator=None):
        from gradcli.engine import distributions
        return distributions.multinomial(self, num_samples, replacement, generator=generator)

    def new_zeros(self, *size, dtype=None, requires_grad=False, device=None, **kwargs):
        if kwargs or not size:
            size = signatures.one_int_list("Tensor.new_zeros", size, kwargs)
        from gradcli.engine import factories
        # the device given, else the tensor's own (not the default one)
        return factories.filled("new_zeros", size, 0, dtype or self.dtype, requires_grad,
                                device=self.device if device is None else device)

    def new_ones(self, *size, dtype=None, requires_grad=False, device=None, **kwargs):
        if kwargs or not size:
            size = signatures.one_int_list("Tensor.new_ones", size, kwargs)
        from gradcli.engine import factories
        # the device given, else the tensor's own (not the default one)
        return factories.filled("new_ones", size, 1, dtype or self.dtype, requires_grad,
                                device=self.device if device is None else device)

    def new(self, *args):
        """The legacy constructor in this tensor's dtype: from data, a size (zeros where PyTorch leaves memory
        uninitialised), or an alias of a tensor of the same dtype."""
        from gradcli.engine import factories
        return factories.legacy_new(args, dtypes.of_array(self._a))

    def new_empty(self, *size, dtype=None, requires_grad=False, device=None, **kwargs):
        if kwargs or not size:
            size = signatures.one_int_list("Tensor.new_empty", size, kwargs)
        from gradcli.engine import factories
        # the device given, else the tensor's own (not the default one)
        return factories.filled("new_empty", size, 0, dtype or self.dtype, requires_grad,
                                device=self.device if device is None else device)

    def new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad=False):
        from gradcli.engine import factories
        return factories.empty_strided(size, stride, dtype=dtype or self.dtype, requires_grad=requires_grad,
                                       device=self.device if device is None else device)

    def new_full(self, size, fill_value, dtype=None, requires_grad=False, device=None):
        from gradcli.engine import factories
        return factories.filled_as("new_full", size, fill_value, dtype or self.dtype, requires_grad,
                                   check_device(self.device if device is None else device))

    def new_tensor(self, data, dtype=None, requires_grad=False, device=None):
        from gradcli.engine import factories
        return factories.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad,
                                device=self.device if device is None else device, copy_warning="tensor.new_tensor")

    def register_hook(self, hook):
        from gradcli.engine import backward
        return backward.register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        from gradcli.engine import backward
        return backward.register_post_accumulate_grad_hook(self, hook)

    # ------------------------------------------------------------------------------ in place
    def _inplace(self, fn, other, broadcast_with: tuple = (), overlap_ok: bool = False):
        """Run an out-of-place op, then write its result into this tensor's storage (shared by every
        alias), bump the version counter and, when recorded, make its node this tensor's grad_fn.
        `broadcast_with`: the operands of an elementwise op (`x.op_(y)`, `x op= y`, `x.lerp_(y, w)`), whose
        TensorIterator fixes the result's shape before it looks at dtypes, so a broadcast larger than this
        tensor is refused first."""
        grad_on = STATE.recording
        if self._inference and not STATE.inference:
            raise RuntimeError(INFERENCE_INPLACE_ERROR)
        if grad_on and self.requires_grad and self.grad_fn is None and self._base is None:
            raise _leaf_inplace_error()         # (a view's own words are check_inplace_view's)
        shapes = [t._a.shape for t in broadcast_with if t.__class__ is Tensor and t._a.shape != self._a.shape]
        if shapes:
            try:
                shape = np.broadcast_shapes(self._a.shape, *shapes)
            except ValueError:              # no broadcast at all: the op's own error
                shape = self._a.shape
            if shape != self._a.shape:
                raise RuntimeError(f"output with shape {list(self._a.shape)} doesn't match the broadcast "
                                   f"shape {list(shape)}")
        if self._base is not None:
            ops.check_inplace_view(self, overlap_ok)      # (fill_ writes a shared element once, for all)
        src, clone_node = self, None
        if grad_on and (self.requires_grad or (other.__class__ is Tensor and other.requires_grad)):
            # the new node may save `self`: give it a private copy of the values being overwritten
            src = Tensor(self._a.copy())
            src.requires_grad = self.requires_grad
            src.grad_fn = self.grad_fn
            src._acc = self._acc
            if STATE.fw_level is not None:
                from gradcli.engine import forward
                forward.copy_tangents(src, self)        # a view's may be its base's
            if STATE.saved_hooks is not None and self.requires_grad:
                # pack hooks see what the node saves when it saves it: the clone (_saved_as_clone)
                edge = self.grad_fn or recording.edge(self)
                src.grad_fn = clone_node = autograd.Node(ops.arith.CLONE, (edge,), ())
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
        if STATE.fw_level is not None:
            from gradcli.engine import forward
            forward.inplace_tangent(self, result)
        node = result.grad_fn
        if node is not None:
            if clone_node is not None:
                node.inputs = tuple(edge if n is clone_node else n for n in node.inputs)
            elif src is not self and src.requires_grad and node.saved.__class__ is tuple \
                    and any(v is src for v in node.saved):
                _saved_as_clone(node, src)
            if node.checks:
                # a node that saved its result saved what is now this tensor: later in-place changes
                # of this tensor must fail its backward, so its check follows this tensor's counter
                box = result._version
                node.checks = tuple((e[0], self._version, self._version[0]) + e[3:] if e[1] is box else e
                                    for e in node.checks)
            self.grad_fn = node
            self.requires_grad = True
            if self._base is not None:
                ops.rebase_view(self, node)
        # the other views of this storage: their histories (or, unrecorded, their versions) moved on
        ops.regenerate_views(self._base if self._base is not None else self, self if node is not None else None)
        return self

    def _inplace_op(self, fn, other):
        """An elementwise op written into this tensor (see _inplace's `broadcast_with`)."""
        return self._inplace(fn, other, (other,))

    def _inplace_arith(self, fn, ufunc, other):
        """`x op= y` and op_(): straight into the storage with one numpy call when autograd takes no
        part (no grad mode, or neither side requires grad) and no dtype promotion is involved; the
        general path otherwise, which also owns every error message."""
        a = self._a
        if other.__class__ is int:
            recording.scalar_int(other)         # PyTorch's parser reads it into 64 bits before anything else
        if (self._base is None and not self._inference and a.dtype.kind in "fV" and STATE.fw_level is None
                and not (STATE.recording and (self.requires_grad or
                                                        (other.__class__ is Tensor and other.requires_grad)))):
            if other.__class__ is float or other.__class__ is int:
                if a.dtype.itemsize == 2:
                    return self._inplace_op(fn, other)      # float16 reads the number as a float (arith)
                y = other
            elif other.__class__ is Tensor and other._a.dtype == a.dtype and other._a.ndim <= a.ndim:
                y = other._a
            else:
                return self._inplace_op(fn, other)
            try:
                ufunc(a, y, out=a)
            except ValueError:              # does not broadcast to this tensor's shape
                return self._inplace_op(fn, other)
            self._version[0] += 1
            if ops.VIEWS_TRACKED:           # views of this tensor with a history: their versions moved on
                ops.regenerate_views(self, None)
            return self
        return self._inplace_op(fn, other)

    def __iadd__(self, other):
        try:
            return self._inplace_arith(ops.add, np.add, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __isub__(self, other):
        try:
            ops.arith.check_bool_subtraction(self, other)       # refused before the shapes are looked at
            return self._inplace_arith(ops.sub, np.subtract, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __imul__(self, other):
        try:
            return self._inplace_arith(ops.mul, np.multiply, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def __itruediv__(self, other):
        try:
            return self._inplace_arith(ops.div, np.true_divide, other)
        except TypeError as e:
            return recording.not_implemented(e)     # not a Tensor or a number: Python's message

    def add_(self, other, alpha=1):
        if alpha == 1:
            return self._inplace_arith(ops.add, np.add, other)
        return self._inplace_op(lambda a, b: ops.add(a, b, alpha), other)

    def true_divide_(self, other):
        return self.div_(other)

    def sub_(self, other, alpha=1):
        ops.arith.check_bool_subtraction(self, other)       # refused before the shapes are looked at
        if alpha == 1:
            return self._inplace_arith(ops.sub, np.subtract, other)
        return self._inplace_op(lambda a, b: ops.sub(a, b, alpha), other)

    def mul_(self, other):
        return self._inplace_arith(ops.mul, np.multiply, other)

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is not None:
            return self._inplace_op(lambda a, b: ops.div_rounding(a, b, rounding_mode), other)
        return self._inplace_arith(ops.div, np.true_divide, other)

    subtract_, multiply_, divide_ = sub_, mul_, div_      # PyTorch's other names

    def zero_(self):
        return self._inplace(lambda a, v: ops.fill(a, v, zero=True), 0, overlap_ok=True)

    def fill_(self, value):
        return self._inplace(ops.fill, value, overlap_ok=True)


def _map_elements(t: Tensor, name: str, fn, others: tuple) -> Tensor:
    """apply_ and map_: the script's function called on each element (and the others' there) as Python numbers,
    its results converted to t's dtype and written in place (bounded by t's size, under the time limit)."""
    if t.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    if t._a.__class__ is not np.ndarray:
        raise RuntimeError(f"{name} is only implemented on CPU tensors")
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    kind = t._a.dtype.kind
    convert = bool if kind == "b" else (int if kind in "iu" else float)
    flat = t._a.reshape(-1)
    sources = [o.reshape(-1) for o in others]
    out = np.empty_like(flat)
    for start in range(0, flat.size, _MAP_CHUNK):     # (a chunk of Python numbers at a time, not all of them)
        stop = start + _MAP_CHUNK
        values = []
        for i, v in enumerate(flat[start:stop].tolist(), start):
            r = fn(v, *[s[i].item() for s in sources])
            if not isinstance(r, (int, float, bool)):
                raise TypeError(f"must be real number, not {type(r).__name__}")
            values.append(convert(r))
        out[start:stop] = values
    np.copyto(t._a, out.reshape(t._a.shape))
    return t            # (PyTorch writes through the data pointer: the version counter does not move)


_MAP_CHUNK = 1 << 14


class _Device:
    """torch.device: a type and an optional index. gradcli computes on the CPU; a device of another type
    (`torch.device('cuda')`, as PyTorch's CPU build allows) only prints and compares."""

    __slots__ = ("type", "index")

    def __init__(self, kind: str = "cpu", index=None):
        self.type = kind
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index % 65536})"     # (PyTorch shows a negative one so)

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return other.__class__ is _Device and other.type == self.type and other.index == self.index

    def __hash__(self):
        return hash((self.type, self.index))

    def _unordered(self, other):
        if other.__class__ is _Device:
            raise TypeError("comparison not implemented")
        return NotImplemented           # Python's words, which name the type as PyTorch's C type is named

    __lt__ = __le__ = __gt__ = __ge__ = _unordered

    def __enter__(self):
        """`with torch.device('cuda'):` makes it the device factories use (STATE.default_device) until the
        block ends. A CPU build fails at the first tensor a factory makes in it, as gradcli's factories do
        (check_device); a device gradcli has no words for fails here."""
        default = default_device(self)
        STATE.device_stack.append(STATE.default_device)
        STATE.default_device = default
        return self

    def __exit__(self, *exc):
        STATE.default_device = STATE.device_stack.pop()
        return None


_Device.__name__ = "torch.device"      # what Python's own messages call it ('<' not supported between ...)
_CPU = _Device()
_META = _Device("meta")

_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, "
                 "meta, hpu, mtia, privateuseone")
NO_CUDA = "Torch not compiled with CUDA enabled"
# What Tensor.type('torch.cuda.FloatTensor') raises on PyTorch's CPU build
NO_CUDA_LIBRARY = (
    "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two shared libraries: a "
    "CPU library and a CUDA library; this error has occurred because you are trying to use some CUDA "
    "functionality, but the CUDA library has not been loaded by the dynamic linker for some reason.  The CUDA "
    "library MUST be loaded, EVEN IF you don't directly use any symbols from the CUDA library! One common culprit "
    "is a lack of -Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic library "
    "dependencies if you don't depend on any of their symbols.  You can check if this has occurred by using ldd "
    "on your binary to see if there is a dependency on *_cuda.so library.")


def _legacy_class(cls) -> dtypes.DType:
    """The dtype Tensor.type(cls) converts to: torch.FloatTensor and its kin name theirs, torch.Tensor the
    default float dtype; they reach the engine as scripts hold them, partials of their constructors."""
    key = cls.func if isinstance(cls, functools.partial) else cls
    if id(key) in dtypes.LEGACY_CLASSES:
        return dtypes.LEGACY_CLASSES[id(key)] or dtypes.default_float
    if isinstance(key, type):
        raise ValueError(f"invalid type: '{key.__name__}'")
    raise TypeError("dtype must be a type, str, or dtype object")


def parse_device(text: str) -> _Device:
    """torch.device('cuda:1'): PyTorch's parse of a device string, with its messages."""
    kind, colon, index = text.partition(":")
    if kind not in _DEVICE_TYPES.split(", "):
        raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device string: {text}")
    if not colon:
        return _Device(kind)
    if not index.isdigit() or not index.isascii() or (len(index) > 1 and index[0] == "0"):
        raise RuntimeError(f"Invalid device string: '{text}'")
    if int(index) > 2**31 - 1:              # read as a C int
        raise RuntimeError(f"Could not parse device index '{index}' in device string '{text}'")
    return _Device(kind, device_index(int(index)))


def device_index(index: int):
    """A device index as PyTorch keeps it, in a signed byte (c10::DeviceIndex): 300 is 44, 128 is -128, and
    255, which is -1 there, means no index (None)."""
    index = (index + 128) % 256 - 128
    return None if index == -1 else index


def default_device(device: "_Device"):
    """What STATE.default_device holds for `device` made the default (torch.set_default_device, a `with`
    block): None for the CPU, CUDA and meta as they are (a CPU build fails at the first tensor made on
    CUDA), and a device gradcli has no words for refused at once."""
    if device.type != "cuda":
        check_device(device)
    return None if device.type == "cpu" else device


def factory_device(device) -> bool:
    """The check a factory makes of the device it is asked for, or of the default one when it is given none:
    whether the tensor goes on the meta device."""
    if device is None:
        device = STATE.default_device
        if device is None:
            return False
    return check_device(device)


def meta_words(name: str) -> str:
    """PyTorch's words for reading a meta tensor's data (gradcli.engine.meta, imported when asked)."""
    from gradcli.engine import meta
    return getattr(meta, name)


def _moved(t: "Tensor", dtype) -> "Tensor":
    """t.to(device) for the other device: to meta, a meta tensor of t's shape (and `dtype`), which keeps t's
    autograd history (ToCopyBackward0, as PyTorch records the move); from meta, PyTorch's refusal."""
    if t._a.__class__ is not np.ndarray:
        raise NotImplementedError(meta_words("NO_DATA"))
    from gradcli.engine import meta
    return ops.to_device(t, meta.meta_like(t._a, None if dtype is None else dtype.np))


# An int device is an index of the current accelerator, which PyTorch's CPU build does not have
NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def accelerator_index(index: int):
    """What PyTorch's CPU build raises for a device given as an int (never a bool: the parser names it)."""
    return RuntimeError("Device index must not be negative" if index < 0 else NO_ACCELERATOR)


def check_device(device) -> bool:
    """A tensor may be made on, or moved to, the CPU or the meta device only: CUDA fails as PyTorch's CPU build
    fails, and so does an int (an accelerator's index). Whether the device is meta."""
    if device.__class__ is not _Device:
        if device.__class__ is int:
            raise accelerator_index(device)
        if device.__class__ is not str:
            return False        # the argument parser names a wrong type
        device = parse_device(device)
    if device.type == "cuda":
        raise AssertionError(NO_CUDA)      # as PyTorch's CPU build says
    if device.type == "meta":
        return True
    if device.type != "cpu":
        raise NotImplementedError(f"gradcli computes on the CPU and the meta device only, not on device '{device}'")
    return False


def _zero_dim_size(dim):
    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _scalar_name(a: np.ndarray) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char"}[a.dtype.name]
