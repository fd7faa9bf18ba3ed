"""The `out=` argument of torch functions (torch.sin(x, out=o), torch.max(x, 1, out=(v, i))): the result
written into the given tensors, which the call returns, with PyTorch's checks and its warning when it has
to resize one. Which functions take it, and in what form, is the language's knowledge (data/out_api.txt);
this module is the one mechanism for all of them."""

from __future__ import annotations

from gradcli.engine import autograd, dtypes, signatures, typeinfo
from gradcli.engine.recording import type_word
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor, _scalar_name

RESIZED = (
    "An output with one or more elements was resized since it had shape {old}, which does not match the required "
    "output shape {new}. This behavior is deprecated, and in a future PyTorch release outputs will not be resized "
    "unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
    "elements with t.resize_(0). (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)")

# How PyTorch's out= kernels treat an out tensor of another dtype than the result's (checked with the oracle).
# The factories make the values in the out's dtype (a dtype= that differs is refused):
FACTORIES = frozenset(("zeros", "ones", "empty", "full", "arange", "range", "linspace", "logspace", "eye", "rand",
                       "randn", "randint", "randperm", "normal"))
# reductions and scans that compute in the out's dtype, as with dtype=out.dtype (mean only from and to floats):
IN_OUT_DTYPE = frozenset(("sum", "nansum", "cumsum", "cumprod", "prod", "mean", "nanmean"))
FLOATS_ONLY = frozenset(("mean", "nanmean"))

_EXPECTED = "Expected out tensor to have dtype {src_c}, but got {dst_c} instead"
_FOUND = "Found dtype {dst} but expected {src}"
# Kernels that cast nothing: the message each gives for an out whose dtype is not the result's (a function not
# named here casts where type promotion may: a float32 result into float64, never into int64). linalg_*
# functions not named give _EXPECTED; max, min and the other functions of an out tuple too.
DIFFERENT_DTYPE = {
    **{name: _EXPECTED for name in ("mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "addr", "mv", "argmax",
                                    "argmin", "gather", "tril", "triu", "cross", "linalg_cross", "norm")},
    **{name: _FOUND for name in ("abs", "absolute", "neg", "negative", "floor", "ceil", "round", "trunc", "fix",
                                 "frac", "sign", "sgn", "bitwise_not", "clamp", "clip", "clamp_min", "clamp_max")},
    **{name: "result dtype {dst} does not match input dtype {src}" for name in ("matmul", "dot", "vdot", "inner")},
    **{name: "Expected the dtype for input and out to match, but got {src} for input's dtype and {dst} for out's "
             "dtype." for name in ("amax", "amin")},
    "where": "Expected out type to be {src} but got {dst}",
    "histogram": "torch.histogram: input tensor and hist tensor should have the same dtype, but got input {src_c} and "
                 "hist {dst_c}",
    "index_select": "index_select(): self and result must have the same scalar type",
    "nonzero": "nonzero: Expected out tensor to have scalar type {src} but got scalar type{dst}",
    "nan_to_num": "nan_to_num: dtype of out: {dst} should be same as input: {src}",
    "linalg_vecdot": "linalg.vecdot: Expected out of dtype{src} but found {dst}",
    "linalg_norm": "linalg.norm expected out tensor dtype {src} but got: {dst}",
}
# out dtypes a kernel takes whatever the result's, and its message for another
ONLY_DTYPES = {"all": (("bool", "uint8"), "all only supports bool tensor for result, got: {dst}"),
               "any": (("bool", "uint8"), "any only supports bool tensor for result, got: {dst}"),
               "signbit": (("bool",), "signbit does not support non-boolean outputs.")}
# torch.cat's message, for the functions that end in it:
CATENATING = frozenset(("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "row_stack",
                        "column_stack"))


def call(key: str, parser: str, forms: str, function, args: tuple, kwargs: dict, out):
    """`function(*args, **kwargs)` as PyTorch's out= overload of `key` ("torch.sin") runs it, `parser` being
    the name PyTorch's messages give it and `forms` how it takes out= (tools/out_api.py): refused when autograd
    would have to record it, else computed and written into `out`, which is returned (a tuple of tensors as
    the function's named tuple)."""
    message = signatures.check(key, args, {**kwargs, "out": as_parsed(out)})
    if message is not None:
        raise TypeError(message)
    name = key.rpartition(".")[2]
    if "tuple 0 " in forms:             # a list of any length: the view-copies' pieces (split_copy and kin)
        return _into_list(parser, name, forms, function, args, kwargs, out)
    factory = key.startswith("torch.") and key.count(".") == 1 and name in FACTORIES
    if out.__class__ is not Tensor and "tensor" in forms:
        if out.__class__ in (bool, int, float) and "tuple" not in forms and signatures.SIGNATURES.get(key):
            from gradcli.engine import factories
            out = factories.tensor(out)     # an overload of PyTorch's that takes a number as a 0-d tensor
        elif "tuple" not in forms or out.__class__ not in (tuple, list):
            raise TypeError(f"{parser}(): argument 'out' must be Tensor, not {signatures.type_name(out)}")
    outs = (out,) if out.__class__ is Tensor else _tuple(forms, parser, out)
    if autograd.is_grad_enabled() and (any(o.requires_grad for o in outs) or _requires_grad((args, kwargs))):
        raise RuntimeError(f"{'aten::' if factory else ''}{parser}(): functions with out=... arguments don't "
                           "support automatic differentiation, but one of the arguments requires grad.")
    if factory or name in IN_OUT_DTYPE and out.__class__ is Tensor:
        kwargs = _in_out_dtype(name, factory, args, kwargs, out)
    grows = factory and kwargs.pop("requires_grad", False)     # the out tensor is made to require grad
    result = function(*args, **kwargs)
    if result.__class__ is Tensor:
        if out.__class__ is not Tensor:
            raise TypeError(f"{parser}(): argument 'out' must be Tensor, not {signatures.type_name(out)}")
        if factory:
            _write_made(result, out, name)
        else:
            write(result, out, "" if name in ("max", "min") else parser)      # (their pairs' kernels cast nothing)
        if grows:
            out.requires_grad_(True)
        return out
    if out.__class__ is Tensor:
        raise TypeError(f"{parser}(): argument 'out' must be tuple of Tensors, not Tensor")
    for r, o in zip(result, outs):
        write(r, o, parser, tuple_out=True)
    from gradcli.engine.ops import reduce
    return reduce.out_return(result, outs)


# the names PyTorch's messages give the list forms' out= overloads
_LIST_OUT_NAMES = {"split_copy": "split_copy_Tensor_out()", "split_with_sizes_copy": "split_with_sizes_copy_out",
                   "unbind_copy": "unbind_copy_int_out"}


def _into_list(parser: str, name: str, forms: str, function, args: tuple, kwargs: dict, out) -> None:
    """out= as a list of tensors, one per piece: each piece copied into its tensor (as copy_ does: cast and
    broadcast), nothing recorded, None returned, as PyTorch's kernels for split_copy and its kin do."""
    if out.__class__ not in (tuple, list):
        raise TypeError(f"{parser}(): argument 'out' must be tuple of Tensors, not {signatures.type_name(out)}")
    index = forms.split("tuple 0 ")[1].split("|")[0]
    for i, o in enumerate(out):
        if o.__class__ is not Tensor:
            raise TypeError(f"expected Tensor as element {i} in argument {index}, but got {signatures.type_name(o)}")
    with autograd.set_grad_enabled(False):
        pieces = function(*args, **kwargs)
        if len(pieces) != len(out):
            raise RuntimeError(f"{_LIST_OUT_NAMES.get(name, name)} expected an out= argument of size {len(pieces)}, "
                               f"got size {len(out)}")
        for piece, o in zip(pieces, out):
            o.copy_(piece)
    return None


def _in_out_dtype(name: str, factory: bool, args: tuple, kwargs: dict, out: Tensor) -> dict:
    """The keywords with dtype=out.dtype for a function that computes in the out's dtype; PyTorch's refusal of a
    dtype= that is not it."""
    wanted = kwargs.get("dtype")
    if wanted is not None and wanted is not out.dtype:
        if factory:
            raise RuntimeError(f"dtype {type_word(wanted.np.type(0))} does not match dtype of out parameter "
                               f"({type_word(out._a)})")
        raise RuntimeError(_EXPECTED.format(src_c=_scalar_name(wanted.np.type(0)), dst_c=_scalar_name(out._a)))
    if name in FLOATS_ONLY and not (out.dtype.is_floating_point and args and args[0].__class__ is Tensor
                                    and args[0].dtype.is_floating_point):
        return kwargs
    return kwargs if wanted is not None else {**kwargs, "dtype": out.dtype}


def as_parsed(out):
    """`out` as PyTorch's parser judges it when it chooses an overload: any tuple or list as a tuple of tensors
    (its elements are checked once the overload is chosen, by _tuple)."""
    return out if out.__class__ not in (tuple, list) else tuple(Tensor.__new__(Tensor) for _ in out)


def _tuple(forms: str, parser: str, out) -> tuple:
    """The tensors of an out= tuple, with PyTorch's messages for a value of another form."""
    form = next((f for f in forms.split("|") if f.startswith("tuple")), None)
    if form is None or out.__class__ not in (tuple, list):
        raise TypeError(f"{parser}(): argument 'out' must be tuple of Tensors, not {signatures.type_name(out)}")
    _, n, index = form.split()
    if len(out) != int(n):
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    for i, o in enumerate(out):
        if o.__class__ is not Tensor:
            raise TypeError(f"expected Tensor as element {i} in argument {index}, but got {signatures.type_name(o)}")
    return tuple(out)


def _requires_grad(value) -> bool:
    """Whether a tensor among the arguments (in lists and tuples too: torch.cat's) requires grad."""
    if value.__class__ is Tensor:
        return value.requires_grad
    if value.__class__ in (tuple, list):
        return any(_requires_grad(v) for v in value)
    if value.__class__ is dict:
        return any(_requires_grad(v) for v in value.values())
    return False


ARANGE_RESIZED = (
    "The number of elements in the out tensor of shape {old} is {n} which does not match the computed number of "
    "elements {size}. Note that this may occur as a result of rounding error. The out tensor will be resized to a "
    "tensor of shape ({size},). (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/RangeFactories.cpp:199.)")


def _write_made(result: Tensor, out: Tensor, name: str) -> None:
    """A factory's values into `out` (made in its dtype): resized without a warning, but for arange's own; the
    ranges keep the out's shape when it holds as many elements."""
    src, dst = result._a, out._a
    if name in ("arange", "range", "linspace", "logspace") and src.size == dst.size:
        src = src.reshape(dst.shape)
    elif name == "arange" and dst.size:
        STATE.warn("UserWarning", ARANGE_RESIZED.format(old=list(dst.shape), n=dst.size, size=src.size))
    if src.shape != dst.shape:
        out._a = src.astype(dst.dtype, copy=True)
        out._version[0] += 1
        return
    with autograd.set_grad_enabled(False):
        out.copy_(Tensor(src))


def write(result: Tensor, out: Tensor, name: str = "", tuple_out: bool = False) -> None:
    """The result into `out`: cast to its dtype where PyTorch's kernel for `name` may cast it (DIFFERENT_DTYPE,
    ONLY_DTYPES), resized (with PyTorch's warning when it held elements) where its shape differs."""
    src, dst = result._a, out._a
    only = ONLY_DTYPES.get(name)
    if only is not None and dst.dtype.name not in only[0]:
        raise RuntimeError(only[1].format(dst=type_word(dst)))
    if src.dtype != dst.dtype and only is None:
        template = DIFFERENT_DTYPE.get(name) or (_EXPECTED if tuple_out or name.startswith("linalg_") else None)
        if template is not None:
            raise RuntimeError(template.format(src=type_word(src), dst=type_word(dst), src_c=_scalar_name(src),
                                               dst_c=_scalar_name(dst)))
        if not typeinfo.can_cast(dtypes.of_array(src), dtypes.of_array(dst)):
            if name in CATENATING:
                raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {type_word(dst)}")
            raise RuntimeError(f"result type {type_word(src)} can't be cast to the desired output type "
                               f"{type_word(dst)}")
    if dst.shape != src.shape:
        if dst.size:
            STATE.warn("UserWarning", RESIZED.format(old=list(dst.shape), new=list(src.shape)))
        out._a = src.astype(dst.dtype, copy=True)
        out._version[0] += 1
        return
    with autograd.set_grad_enabled(False):
        out.copy_(result)
