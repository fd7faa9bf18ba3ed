"""Indexing cases shared by tools/index_goldens.py (run on PyTorch) and tests/test_index_goldens.py (run on gradcli).

A case is JSON: a tensor shape, an index key (encoded, see `decode`) and a mode. `run(torch, case)`
does the same steps with either `torch` module and returns what it saw: values, shapes, dtypes,
grad_fn chains, gradients, or the exception's type and message at the step that raised. It imports
neither torch nor gradcli, so the very same code produces the expected data and replays it.

Modes:
  get      y = x[key] on a float leaf that requires grad: y's value, dtype, grad_fn chain, then
           y.backward(w) and x.grad; and on an int64 tensor, whether y is a view (y.add_(100) shows in x).
  set      x[key] = scalar, on int64 and on float32 tensors.
  setv     x[key] = v (a tensor that requires grad, of the indexing result's shape, its last dim,
           shape [1], 0-d, or a shape that does not fit) on a non-leaf x: x, its grad_fn chain, then
           the gradients of (x * w).sum() for the leaf under x and for v.
  iadd     x[key] += v, the same way (Python's `t = x[key]; t += v; x[key] = t`).
  leaf     x[key] = 1. on a leaf that requires grad: allowed under no_grad, else an error.
  number   x[key] = a Python number, on a tensor of each dtype: the conversion and its overflow errors.
  dtype    x[key] = a tensor of another dtype (cast by copy_, refused by index_put_).
"""

from __future__ import annotations

import random

SHAPES = [[], [5], [3, 4], [2, 3, 4], [2, 3, 2, 2], [2, 0, 3]]

# The key elements, encoded as JSON: ints as themselves, None as null, "..." for Ellipsis,
# {"s": [start, stop, step]}, {"t": data, "d": dtype} for a tensor, {"l": data} for a list,
# {"f": x} for a float, {"b": x} for a Python bool, {"r": n} for range(n), {"str": text}.
POOL = [
    0, 1, -1, 2, -2, 3, -4, 5,
    {"s": [None, None, None]}, {"s": [1, None, None]}, {"s": [None, -1, None]}, {"s": [None, None, 2]},
    {"s": [-2, None, None]}, {"s": [1, 3, 2]}, {"s": [3, 1, None]}, {"s": [-10, 10, None]},
    {"s": [1, 1, None]}, {"s": [None, None, 3]}, {"s": [None, None, -1]}, {"s": [0, None, 0]},
    "...", None, {"b": True}, {"b": False},
    {"t": [0, -1], "d": "int64"}, {"t": [[1], [0]], "d": "int64"}, {"t": 1, "d": "int64"},
    {"t": [], "d": "int64"}, {"t": [1, 1], "d": "int64"}, {"t": [5], "d": "int64"}, {"t": [1, 0], "d": "int32"},
    {"t": [1.0], "d": "float32"},
    {"t": [True, False], "d": "bool"}, {"t": [False, True, True], "d": "bool"},
    {"t": [[True, False, True, True], [False, True, False, True], [True, True, False, False]], "d": "bool"},
    {"t": True, "d": "bool"}, {"t": False, "d": "bool"},
    {"l": [0, 1]}, {"l": [1, 0, 1]}, {"l": [[0], [1]]}, {"l": [True, False, True]}, {"l": []},
    {"l": [1.5, 0]}, {"l": [0, None]}, {"l": ["a"]}, {"r": 2}, {"str": "a"},
    {"f": 1.5},
]

VALUE_SHAPES = ["full", "last", "one", "scalar", "bad"]


def _cases_for(shape, keys):
    out = []
    for single, key in keys:
        base = {"shape": shape, "key": key, "single": single}
        out.append(dict(base, mode="get"))
        out.append(dict(base, mode="set"))
        for v in VALUE_SHAPES:
            out.append(dict(base, mode="setv", value=v))
        for v in ("full", "one"):
            out.append(dict(base, mode="iadd", value=v))
    return out


def _consumed(item) -> int:
    """How many dims of the tensor a key element uses up (None, `...` and Python bools: none)."""
    if item is None or item == "..." or (isinstance(item, dict) and "b" in item):
        return 0
    if isinstance(item, dict) and item.get("d") == "bool":
        return _depth(item["t"])
    return 1


def _depth(data) -> int:
    n = 0
    while isinstance(data, list):
        n += 1
        data = data[0] if data else None
    return n


def generate(seed: int = 12, per_shape: int = 150):
    """Every one-element key (alone and as a 1-tuple), then random longer keys, on every shape.

    Random keys that use up more dims than the tensor has are mostly redrawn, so that most keys
    are valid and reach the values and gradients; one in ten is kept for the errors.
    """
    rng = random.Random(seed)
    cases = []
    for shape in SHAPES:
        keys = [(True, k) for k in POOL] + [(False, [k]) for k in POOL]
        while len(keys) < 2 * len(POOL) + per_shape:
            key = [rng.choice(POOL) for _ in range(rng.randint(2, len(shape) + 2))]
            if sum(_consumed(k) for k in key) <= len(shape) or rng.random() < 0.1:
                keys.append((False, key))
        cases.extend(_cases_for(shape, keys))
    # the examples of the issue, and a few leaf-in-place errors
    cases.append({"shape": [2, 3, 3], "key": [1, "...", 0], "single": False, "mode": "get"})
    cases.append({"shape": [2, 3], "key": [0, 5], "single": False, "mode": "get"})
    for key in ([0], [{"s": [None, None, None]}], [{"l": [0, 1]}], ["...", None], [5], [{"l": [7]}], [1, 1, 1]):
        cases.append({"shape": [2, 3], "key": key, "single": False, "mode": "leaf"})
    number_keys = ([0], ["..."], [{"l": [0]}])
    for dtype in ("int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64", "float16"):
        for value in NUMBERS:
            for key in number_keys:
                cases.append({"shape": [2], "key": key, "single": False, "mode": "number", "dtype": dtype,
                              "value": value})
    for dtype in ("float32", "int64"):
        for vdtype in ("float32", "float64", "int64", "int32", "bool", "uint8"):
            for key in number_keys + ([{"t": 0, "d": "int64"}], [{"s": [1, None, None]}]):
                for vshape in ([], [1], [2]):
                    cases.append({"shape": [3, 2], "key": key, "single": False, "mode": "dtype",
                                  "dtype": dtype, "vdtype": vdtype, "vshape": vshape})
    # integers past int64 (PyTorch's "Overflow when unpacking long long"), and slice bounds past it
    for shape, key in OVERFLOW_KEYS:
        cases.extend(_cases_for(shape, [(len(key) == 1, key)] + ([(False, key)] if len(key) == 1 else [])))
    for i, c in enumerate(cases):
        c["id"] = i
    return cases


OVERFLOW_KEYS = [
    ([3, 4], [10**20, 1]), ([3, 4], [-2**64]), ([3, 4], [2**63]), ([3, 4], [-2**63 - 1]), ([3, 4], [2**63 - 1]),
    ([3, 4], [-2**63]), ([], [10**20]), ([], [2**63]), ([2, 3, 4], ["...", 2**63]), ([3, 4], [None, 2**63]),
    ([3, 4], [5, 2**63]), ([3, 4], [{"s": [0, 1, None]}, 2**63]), ([3, 4], [2**63, 0, 0, 0]),
    ([3, 4], [{"l": [0, 1]}, 2**63]), ([3, 4], [{"t": [0, 1], "d": "int64"}, {"l": [2**63]}]),
    ([3, 4], [{"b": True}, 2**63]), ([3, 4], [{"l": [1, 2**63]}]), ([3, 4], [{"l": [[0], [2**64]]}]),
    ([3, 4], [{"l": [1.5, 2**63]}]), ([3, 4], [{"l": [True, 2**63]}]), ([3, 4], [{"l": [-2**63 - 1]}]),
    ([3, 4], [{"l": [2**63 - 1]}]), ([3, 4], [0, {"l": [2**63]}]),
    ([3, 4], [{"s": [2**63, None, None]}]), ([3, 4], [{"s": [None, 2**63, None]}]),
    ([3, 4], [{"s": [-2**63, None, None]}]), ([3, 4], [{"s": [-2**64, 10**20, None]}]),
    ([3, 4], [{"s": [1, 2**64, 2]}]), ([3, 4], [1, {"s": [-10**20, 2**63, None]}]), ([5], [{"s": [2**63, None, None]}]),
    ([3, 4], [{"s": [None, None, 2**63]}]), ([3, 4], [{"s": [None, None, 2**63 - 1]}]),
    ([3, 4], [{"s": [None, None, 10**30]}]), ([3, 4], [{"s": [None, None, 2**31]}]),
    ([3, 4], [{"s": [None, None, None]}, {"s": [None, None, 2**63]}]),
    ([3, 4], [{"s": [None, None, None]}, {"s": [1, None, 2**63]}]), ([3, 4], [0, {"s": [None, None, 2**63]}]),
    ([3, 4], [None, {"s": [None, None, 2**63]}]), ([3, 4], ["...", {"s": [None, None, 2**62]}]),
    ([7, 2], [{"s": [None, None, 2**62]}]), ([7, 2], [{"s": [None, None, 2**61]}]),
    ([3, 3], [{"s": [None, None, 2**62]}]), ([5], [{"s": [None, None, 2**62]}]),
]


# Python numbers written into tensors: in and out of each dtype's range, fractions, infinities, nan.
NUMBERS = [2**63, -2**63 - 1, 2**63 - 1, 2**31, 300, 255, 256, -1, -128, -129, -255, -256, 127, 128,
           1e39, -1e39, 3.4e38, 1e300, float("inf"), float("-inf"), float("nan"), 2.7, -2.7, -0.5, True,
           False, 2**64, 10**30, 65504, 65520, 1e5]


def decode(torch, item):
    if isinstance(item, dict):
        if "s" in item:
            return slice(*item["s"])
        if "t" in item:
            return torch.tensor(item["t"], dtype=getattr(torch, item["d"]))
        if "l" in item:
            return list(item["l"])
        if "f" in item:
            return float(item["f"])
        if "r" in item:
            return range(item["r"])
        if "str" in item:
            return str(item["str"])
        return bool(item["b"])
    if item == "...":
        return Ellipsis
    return item


def key_of(torch, case):
    if case["single"]:
        return decode(torch, case["key"])
    return tuple(decode(torch, k) for k in case["key"])


def _chain(t):
    names = []
    fn = t.grad_fn
    while fn is not None and len(names) < 8:
        names.append(fn.name())
        nxt = fn.next_functions
        fn = nxt[0][0] if nxt else None
    return names


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _weights(torch, shape):
    return torch.arange(1.0, _numel(shape) + 1.0).reshape(shape)


def _record(out, name, t):
    if t is None:
        out[name] = None
        return
    values = [v if v == v else "nan" for v in t.reshape(-1).tolist()]       # nan != nan
    out[name] = [list(t.shape), str(t.dtype).replace("torch.", ""), values]


def _value(torch, kind, target):
    shape = {"full": target, "last": target[-1:], "one": [1], "scalar": [], "bad": [7]}[kind]
    return (-_weights(torch, shape)).requires_grad_()


def run(torch, case):
    out = {}
    try:
        _run(torch, case, out)
    except Exception as e:           # the expected data records every error, typed and worded
        out["err"] = [type(e).__name__, str(e)]
    return out


def _run(torch, case, out):
    shape, mode = case["shape"], case["mode"]
    key = key_of(torch, case)
    n = _numel(shape)
    if mode == "get":
        x = torch.arange(float(n)).reshape(shape).requires_grad_()
        y = x[key]
        _record(out, "y", y)
        out["fn"] = _chain(y)
        y.backward(_weights(torch, list(y.shape)))
        _record(out, "grad", x.grad)
        xi = torch.arange(n).reshape(shape)
        yi = xi[key]
        yi.add_(100)
        _record(out, "x_int", xi)
    elif mode == "set":
        xi = torch.arange(n).reshape(shape)
        xi[key] = -7
        _record(out, "x_int", xi)
        xf = torch.arange(float(n)).reshape(shape)
        xf[key] = 2.5
        _record(out, "x_float", xf)
    elif mode == "number":
        x = torch.zeros(shape, dtype=getattr(torch, case["dtype"]))
        x[key] = case["value"]
        _record(out, "x", x)
    elif mode == "dtype":
        x = torch.arange(n).reshape(shape).to(getattr(torch, case["dtype"]))
        v = (_weights(torch, case["vshape"]) + 2).to(getattr(torch, case["vdtype"]))
        x[key] = v
        _record(out, "x", x)
    elif mode == "leaf":
        x = torch.arange(float(n)).reshape(shape).requires_grad_()
        with torch.no_grad():
            x[key] = -1.0
        _record(out, "x_no_grad", x.detach())
        x[key] = 1.0
        _record(out, "x", x)
    else:
        a = torch.arange(float(n)).reshape(shape).requires_grad_()
        x = a * 1
        v = _value(torch, case["value"], list(x.detach()[key].shape))
        if mode == "setv":
            x[key] = v
        else:
            t = x[key]
            t += v
            x[key] = t
        _record(out, "x", x)
        out["fn"] = _chain(x)
        (x * _weights(torch, shape)).sum().backward()
        _record(out, "grad", a.grad)
        _record(out, "vgrad", v.grad)
