"""Op rows and the one function that records any of them (`apply`), plus what forward functions share:
operand promotion, dims.

A row (`Op`) declares an op once: PyTorch's node name, the forward (a numpy function, or None where a
forward function of the op module computes the result), what the node saves, by name, and one backward
formula per differentiable input. `apply` turns a result into a Tensor and, when grad mode is on and
some input requires grad, attaches a node: it builds the saved tuple from the row's names and derives
the version checks and the broadcast/dtype fitting, so no forward writes them.

What a node saves is what the row's formulas receive after `F` (the math vocabulary, see backmath.py)
and the incoming gradient `g`, in the row's `saves` order:
  * an input (named in `inputs`): numpy's array in a plain backward, the Tensor itself under
    create_graph, so higher derivatives flow through it; a Python number input as it is;
  * `result`: the op's own result (saved as `Out`, without a reference from the node to the output
    tensor, which would be a cycle);
  * any other name (numbers, shapes, dims, index arrays, masks): a value the forward passes to `apply`.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import autograd, budget, dtypes, workers
from gradcli.engine.autograd import Node, edge
from gradcli.engine.layout import laid_out
from gradcli.engine.slim import slim
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

# what a name in a row's `saves` refers to, besides an input's index (see Op.plan)
_RESULT, _ARG = -1, -2
_DEFAULT_INPUTS = {1: ("self",), 2: ("self", "other")}


class Op:
    """One row of an op table.

      node      the name PyTorch prints (`MulBackward0`);
      forward   a numpy function of the input arrays that computes the result, or None when a forward
                function of the op module computes it and hands it to `apply`;
      saves     the names of what the node saves, in the order its formulas receive them: input names,
                `result`, or names of values the forward passes to `apply` (`min`, `dim`, `shape`, ...);
      backward  one formula per differentiable input, `(F, g, *saved) -> gradient`.

    Keyword facts:
      inputs        the differentiable inputs' names, in the formulas' order (default `self`, `other`);
      fits          True: `apply` fits each input's gradient to the input's shape and dtype
                    (autograd._fit) where they differ from the result's (elementwise rows: broadcasting,
                    type promotion); "dtype": only where the dtypes differ (reductions that take a
                    dtype=, cat and stack of mixed dtypes, whose formulas give the input's shape); or
                    one of those (or False) per input, for rows whose inputs differ (addmm: only its
                    added input broadcasts; its matrices' gradients have their shapes and dtype);
      floats        a unary `forward` computes integer and bool inputs in the default float dtype;
      needed_by     {saved input: input whose formula alone reads it}: saved only when that input
                    requires grad, as PyTorch's mul saves `self` only for `other`'s gradient;
      saves_tensors whether a backward pass frees what the node saved (PyTorch frees saved tensors, so a
                    second pass through such a node fails); derived: the row saves an input or its
                    result; say True for a row that saves a tensor the forward computed (a mask);
      jvp           the forward-mode column: how the result's tangent follows from the inputs'
                    tangents (gradcli.engine.forward): "auto" for an elementwise row whose backward
                    formulas, given a tangent as `g`, are the tangent's terms (PyTorch's
                    auto_element_wise); a function `(F, tangents, inputs, result, *args)` (tangents: one
                    per input, None where an input has none; args: the forward's saved values); or
                    forward.NOT_DIFFERENTIABLE for the ops PyTorch has no derivative for;
      versioned     names of saved values the forward passes that are tensors a script holds (scatter's index):
                    changing one in place must fail the backward pass, as for a saved input;
      quiet         the observer (Observer.op, STATE.observer) sees a result of this row only
                    when a node is attached to it, not every result. Which rows are quiet is history
                    (their forward functions used to return early without grad) that --nan-check's
                    reports depend on: a non-finite result of a quiet row made without grad counts
                    as data from outside the graph, not as an op's doing.
    Two more let a plain (numpy) backward save full-size passes; neither changes a value:
      fresh         every formula returns a new array (a ufunc of the incoming gradient, like
                    `g * result`) that nothing else references, so the engine may later overwrite it in
                    place (autograd._sweep);
      combined      `combined(F, g, node, mask, *saved)`, for a row whose inputs PyTorch differentiates in one
                    formula (a derivatives.yaml key naming several inputs, `input, weight, bias`): under
                    create_graph it runs instead of the formulas, once, and gives one gradient per input (None
                    where `mask`, the inputs that have an edge, is False), so the nodes it records are shared;
      joint         `joint(g, *saved, scratch)`, for a two-input row: when a node has the same node on
                    both edges (`x * x`), the sum of the two gradients its formulas would send there,
                    rounded the same way, or None when the saved values do not allow it; `scratch` says
                    the engine owns `g`, so the result may be written there.
    """

    __slots__ = ("node", "forward", "saves", "backward", "inputs", "fits", "floats", "saves_tensors",
                 "quiet", "fresh", "joint", "plan", "head", "tail", "needers", "jvp", "versioned", "order",
                 "combined")

    def __init__(self, node: str, forward, saves: tuple, backward, *, inputs=None, fits=False,
                 floats=False, needed_by=None, saves_tensors=None, quiet=False, fresh=False, joint=None,
                 jvp=None, versioned=(), combined=None):
        self.node = node
        self.versioned = tuple(saves.index(name) for name in versioned)
        self.forward = forward
        self.saves = saves
        self.backward = backward
        if inputs is None:
            inputs = _DEFAULT_INPUTS.get(len(backward), ()) if backward.__class__ is tuple else ()
        self.inputs = inputs
        # `order`: the order PyTorch's generated backward runs the formulas in, its derivatives.yaml keys
        # sorted by name (`other` before `self`), when that is not the inputs' own order. Only create_graph
        # sees it: the recorded nodes' ages decide the order of a later backward through them.
        order = tuple(sorted(range(len(inputs)), key=inputs.__getitem__))
        self.order = order if order != tuple(range(len(inputs))) else None
        self.combined = combined
        self.fits = fits
        self.floats = floats
        self.quiet = quiet
        self.fresh = fresh
        self.joint = joint
        self.jvp = jvp
        # `plan`: how apply builds the saved tuple, one int per saved name (an input's index, _RESULT, or
        # _ARG - j for the forward's j-th value); None when every name is a value the forward passes
        # (the saved tuple is then the forward's own tuple). `needers`: per input, the input whose
        # requiring grad makes it saved (needed_by), or None.
        plan, j = [], 0
        for name in saves:
            if name in inputs:
                plan.append(inputs.index(name))
            elif name == "result":
                plan.append(_RESULT)
            else:
                plan.append(_ARG - j)
                j += 1
        self.plan = tuple(plan) if any(c >= _RESULT for c in plan) else None
        # `head`, `tail`: the plan without its trailing run of the forward's values, and where that run starts
        # in the forward's tuple: apply copies the run at once (a loop step per value costs a row saving
        # many numbers, nll_loss's, about as much as its kernel's bookkeeping)
        run = 0
        while run < len(plan) and plan[len(plan) - 1 - run] <= _ARG:
            run += 1
        self.head, self.tail = tuple(plan[:len(plan) - run]), slice(j - run, j) if run else None
        self.needers = None
        if needed_by:
            self.needers = tuple(inputs.index(needed_by[n]) if n in needed_by else None for n in inputs)
        if saves_tensors is None:
            saves_tensors = self.plan is not None
        self.saves_tensors = saves_tensors

    def __repr__(self):
        return f"Op({self.node})"


class Out:
    """A node's saved reference to its own result, with the result's forward-mode tangent (`fw`, as in
    Tensor._fw) when it has one, so a formula differentiated in forward mode (forward over reverse:
    torch.func.hessian) sees the result's tangent."""

    __slots__ = ("a", "fw")

    def __init__(self, a: np.ndarray):
        self.a = a
        self.fw = None      # the result's {level: tangent}, for formulas run on Tensors (forward over reverse)


def apply(op: Op, out: np.ndarray, inputs: tuple, args: tuple = (), arrays=None, same=False,
          quiet=None) -> Tensor:
    """The result `out` of row `op` on `inputs` (one per formula: Tensors, or numbers where the op takes
    either) as a Tensor, with a node when grad mode is on and some input requires grad.

    `args` are the values of the row's saved names that are neither inputs nor `result`, in `saves`
    order. `arrays` (one per input) are what the forward computed each input as, when that differs
    from the input itself (an array cast to the op's dtype, a number as the op's dtype reads it): an
    input computed in another dtype is saved as a detached tensor of those values, so formulas see
    PyTorch's promoted dtype. `same` says the forward knows the result has every tensor input's shape
    and dtype (a float tensor and a Python number), so a `fits` row needs no fitting. `quiet`
    overrides the row's `quiet`.
    """
    if STATE.complex_seen:      # an op not checked for complex values refuses them (never a wrong answer)
        from gradcli.engine.ops import complexops
        complexops.check(op, out, inputs)
    t = Tensor(out)
    if STATE.meta_seen:
        _on_inputs_device(t, op, inputs)
    # the engine's modes and the forward observer, read here and nowhere else: the observer sees every
    # result (a quiet row's only when it gets a node, below)
    observer = STATE.observer
    if observer is not None and not (op.quiet if quiet is None else quiet):
        observer.op(op, t, inputs)
        observer = None
    if not STATE.recording:
        return t if STATE.fw_level is None else _dual(op, t, inputs, args)
    inference_seen = STATE.inference_seen
    # the nodes the gradients flow to; one and two inputs without a comprehension (a call in 3.11)
    n = len(inputs)
    if n == 2:
        x, y = inputs
        nx = (x.grad_fn or edge(x)) if x.__class__ is Tensor else None
        ny = (y.grad_fn or edge(y)) if y.__class__ is Tensor else None
        if nx is None and ny is None:
            return t if STATE.fw_level is None else _dual(op, t, inputs, args)
        nodes = (nx, ny)
        # an input's node gains a consumer: what it saved may now be its alone (slim.py)
        if nx is not None and nx.checks.__class__ is tuple:
            slim(nx, nx.checks)
        if ny is not None and ny.checks.__class__ is tuple:
            slim(ny, ny.checks)
    elif n == 1:
        x = inputs[0]
        nx = (x.grad_fn or edge(x)) if x.__class__ is Tensor else None
        if nx is None:
            return t if STATE.fw_level is None else _dual(op, t, inputs, args)
        nodes = (nx,)
        if nx.checks.__class__ is tuple:
            slim(nx, nx.checks)
    else:
        nodes = tuple([(x.grad_fn or edge(x)) if x.__class__ is Tensor else None for x in inputs])
        for nx in nodes:
            if nx is not None:
                break
        else:
            return t if STATE.fw_level is None else _dual(op, t, inputs, args)
    if observer is not None:
        observer.op(op, t, inputs)
    plan = op.plan
    kept = None                         # the Out the node saves, if any
    if plan is None:
        saved, checks = args, None
        if op.saves_tensors or inference_seen:
            for s in saved:
                if s.__class__ is Tensor and s._inference:
                    raise RuntimeError(INFERENCE_SAVED_ERROR)
    else:
        saved = []
        checks = None
        needers = op.needers
        for c in op.head:
            if c >= 0:                  # an input
                if needers is not None:
                    needer = needers[c]
                    if needer is not None and nodes[needer] is None:
                        saved.append(None)
                        continue
                x = inputs[c]
                if x.__class__ is Tensor:
                    # a saved input tensor: changing it in place must fail the backward pass (also when
                    # the node keeps the values the op computed with, in its dtype: PyTorch saves the input)
                    a = x._a
                    entry = (x, x._version, x._version[0], a.shape, dtypes.of_array(a).message, None)
                    if checks is None:
                        checks = [entry]
                    else:
                        checks.append(entry)
                    if arrays is not None and not (x.requires_grad or arrays[c] is a):
                        if x._inference:    # PyTorch saves the input itself, before promoting it
                            raise RuntimeError(INFERENCE_SAVED_ERROR)
                        x = Tensor(arrays[c])
                elif arrays is not None:
                    x = arrays[c]
                saved.append(x)
            elif c == -1:               # _RESULT
                kept = Out(out)
                saved.append(kept)
            else:
                saved.append(args[-2 - c])
        if op.tail is not None:
            saved += args[op.tail]
        if kept is not None:
            # the result is saved: changing it in place must fail the backward pass (checked last)
            entry = (None, t._version, 0, out.shape, dtypes.of_array(out).message, op.node)
            if checks is None:
                checks = (entry,)
            else:
                checks.append(entry)
        if checks is not None:
            checks = tuple(checks)
        saved = tuple(saved)
        if inference_seen:
            for s in saved:
                if s.__class__ is Tensor and s._inference:
                    raise RuntimeError(INFERENCE_SAVED_ERROR)
    if op.versioned:
        checks = list(checks or ())
        for k in op.versioned:
            x = saved[k]
            # a tensor, or a tuple of them (index_put's indices)
            for x in (x if x.__class__ is tuple else (x,)):
                if x.__class__ is Tensor:
                    # (a bool or bfloat16 tensor has no legacy type name: PyTorch's message shows its C++ type's)
                    kind = dtypes.of_array(x._a).message
                    checks.append((x, x._version, x._version[0], x._a.shape, kind, None))
        checks = tuple(checks) or None
    fit = None
    fits = op.fits
    if fits and not same:
        # a fitting row: each input's gradient reduced to its shape, cast to its dtype, where they differ
        shape, dtype = out.shape, out.dtype
        modes = fits if fits.__class__ is tuple else None
        for i, x in enumerate(inputs):
            if x.__class__ is Tensor:
                if modes is not None:
                    fits = modes[i]
                    if not fits:
                        continue
                a = x._a
                if a.dtype is not dtype and a.dtype != dtype or fits is True and a.shape != shape:
                    if fit is None:
                        fit = [None] * len(inputs)
                    fit[i] = (a.shape, a.dtype)
    t.grad_fn = node = Node(op, nodes, saved, checks, fit)
    t.requires_grad = True
    if plan is not None and STATE.saved_hooks is not None:     # saved_tensors_hooks in force
        STATE.saved_hooks.pack_node(node)
    if STATE.fw_level is None:
        return t
    _dual(op, t, inputs, args)
    if kept is not None:                # a saved result unpacks with its tangents, as PyTorch's SavedVariable
        kept.fw = getattr(t, "_fw", None)
    return t


def same_device(inputs: tuple, cpu_after_meta: bool = False) -> str | None:
    """The device of an op's tensor inputs ('meta', 'cpu', or None when all are 0-d CPU tensors), or PyTorch's
    refusal of a meta tensor beside a CPU tensor of one or more dims (a 0-d CPU tensor goes with any device; the
    first tensor names the device expected). `cpu_after_meta`: a product that takes a CPU operand after a meta one."""
    expected = None
    for x in inputs:
        if x.__class__ is not Tensor:
            continue
        a = x._a
        if a.__class__ is not np.ndarray:
            device = "meta"
        elif a.ndim:
            device = "cpu"
        else:
            continue
        if expected is None:
            expected = device
        elif device != expected and not (expected == "meta" and cpu_after_meta):
            raise RuntimeError(f"Tensor on device {device} is not on the expected device {expected}!")
    return expected


# The products whose meta kernel takes a CPU operand after a meta one (`meta @ cpu` is a meta tensor in PyTorch)
_META_FIRST = frozenset({"MmBackward0", "MvBackward0", "DotBackward0", "BmmBackward0"})


def _on_inputs_device(t: Tensor, op: Op, inputs: tuple) -> None:
    """Once meta tensors exist (STATE.meta_seen): PyTorch's refusal of an op between a meta tensor and a CPU
    tensor of one or more dims (a 0-d CPU tensor goes with any device; the first tensor names the device
    expected), and the result `t` on the meta device when an input is there, however the forward computed it."""
    node = op.node
    if node == "AddmmBackward0":            # F.linear: PyTorch checks the matrices before the bias
        inputs = inputs[1:] + inputs[:1]
    expected = same_device(inputs, node in _META_FIRST)
    if expected == "meta" and t._a.__class__ is np.ndarray:
        from gradcli.engine import meta
        t._a = meta.meta_like(t._a)


def with_numbers(op: Op, out, inputs: tuple, args: tuple, saved: tuple) -> Tensor:
    """`apply(op, out, inputs, args, same=True)` for an op on one tensor (inputs[0], of the result's shape
    and dtype) and Python numbers, whose node saves `saved` (what apply would derive: numbers only). In a
    plain run (no tool watching, grad mode on, no forward-mode level, no saved-tensor hooks) the node is
    made here in a few steps: `tensor * 1.0001` in a loop is the per-op overhead users meet."""
    if STATE.observer is None and STATE.recording and STATE.fw_level is None and STATE.saved_hooks is None:
        t = Tensor(out)
        x = inputs[0]
        nx = x.grad_fn or edge(x)
        if nx is not None:
            if nx.checks is not None:
                slim(nx, nx.checks)
            t.grad_fn = Node(op, (nx, None) if len(inputs) == 2 else (nx,), saved)
            t.requires_grad = True
        return t
    return apply(op, out, inputs, args, None, True)


# Python numbers met beside float32 and float64 arrays, as read-only 0-d arrays of that dtype (see number_operand)
_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)
_NUMBERS32: dict = {}
_NUMBERS64: dict = {}
_ZEROS = {_FLOAT32: np.zeros((), np.float32), _FLOAT64: np.zeros((), np.float64)}
for _zero in _ZEROS.values():
    _zero.flags.writeable = False
_NUMBERS_KEPT = 256         # a script sweeping through many values starts the table afresh past this
_EXACT_INT = 1 << 53        # ints a float64 holds exactly, so converting them rounds once, as numpy's cast does


def number_operand(x: np.ndarray, b):
    """`b`, a Python float or int, as an operand of a numpy ufunc beside the float array `x`, giving the same
    bits as `b` itself. numpy converts a Python number to x's dtype on every call (NEP 50's weak scalar),
    which costs more than a product of a few elements; a 0-d array of x's dtype holding the converted value
    is the same operand, made once per value. `b` itself comes back for other dtypes, -0.0 (a key equal to
    0 and 0.0, which take a zero of their own), NaN, ints a float64 rounds, and a finite value that
    overflows the dtype."""
    dt = x.dtype
    if dt is _FLOAT32:
        table = _NUMBERS32
    elif dt is _FLOAT64:
        table = _NUMBERS64
    elif dt.kind == "V":
        # bfloat16: numpy would take a Python number as float32's (ml_dtypes is not one of its weak-scalar
        # types); the number rounded to bfloat16 (through float, as c10 converts a double) is PyTorch's operand
        return np.array(float(b), dt)
    else:
        return b
    s = table.get(b)
    if s is None:
        return _new_number(table, b, dt)
    return s


def _new_number(table: dict, b, dt):
    if not b:
        return _ZEROS[dt] if b.__class__ is int or math.copysign(1.0, b) > 0 else b
    if b != b or b.__class__ is int and not -_EXACT_INT <= b <= _EXACT_INT:
        return b
    with np.errstate(over="ignore"):
        s = np.array(b, dt)
    if not np.isfinite(s) and np.isfinite(b):
        return b
    s.flags.writeable = False
    if len(table) >= _NUMBERS_KEPT:
        table.clear()
    table[b] = s
    return s


def _dual(op: Op, t: Tensor, inputs: tuple, args: tuple) -> Tensor:
    """`t` with its forward-mode tangent, when some input has one (a dual level is in force)."""
    from gradcli.engine import forward
    return forward.propagate(op, t, inputs, args)


def unary(op: Op, name: str):
    """The op function of a unary row whose `forward` computes it: `log = unary(LOG, "log")`, ..."""
    forward = op.forward
    if op.floats:
        def function(a: Tensor) -> Tensor:
            x = a._a
            if x.dtype.kind == "c":     # (complex values are never cast to floats: the row takes them or refuses)
                from gradcli.engine.ops import complexops
                complexops.check(op, x, (a,))     # (refuses unless the row takes complex values, as apply would)
                return apply(op, forward(x), (a,))
            if x.__class__ is not _ndarray and is_meta(x):
                return apply(op, _on_meta(forward, x if x.dtype.kind in "fV" else x.astype(dtypes.default_float.np)),
                             (a,))
            return apply(op, forward(x if x.dtype.kind in "fV" else x.astype(dtypes.default_float.np)), (a,))
    else:
        def function(a: Tensor) -> Tensor:
            x = a._a
            return apply(op, forward(x) if x.__class__ is _ndarray or not is_meta(x) else _on_meta(forward, x), (a,))
    function.__name__ = function.__qualname__ = name
    function.op = op            # the row, for tests that walk the tables
    return function


def is_meta(x) -> bool:
    """Whether `x` is a meta tensor's array (the one ndarray subclass the engine holds)."""
    return x.__class__ is not _ndarray and isinstance(x, _ndarray)


def autocast_policy(policy: str):
    """Decorate an op function that torch.autocast regions run under `policy` ("lower_precision_fp", "fp32" or
    "promote": gradcli.engine.autocast); outside a region the call costs one slot read more."""
    def wrap(function):
        def op(*args, **kwargs):
            if STATE.autocast is None:
                return function(*args, **kwargs)
            from gradcli.engine import autocast
            return autocast.run(policy, function, args, kwargs)
        op.__name__, op.__qualname__, op.__doc__ = function.__name__, function.__qualname__, function.__doc__
        op.__wrapped__ = function
        return op
    return wrap


def _on_meta(forward, x):
    """A unary kernel on a meta array (the one non-ndarray a tensor holds): on its one element, so that no kernel
    loops over a shape with no data (gradcli.engine.meta)."""
    from gradcli.engine.meta import on_one
    return on_one(forward, x, x.shape)


def binary(op: Op, name: str):
    """The op function of a two-tensor row whose `forward` computes it from the promoted operands
    (`maximum`, `atan2`, ...); `name` is the op's name in PyTorch's argument errors."""
    forward, floats = op.forward, op.floats

    def function(a: Tensor, other, position=1) -> Tensor:
        if other.__class__ is not Tensor:
            where = f" (position {position})" if position is not None else ""
            raise TypeError(f"{name}(): argument 'other'{where} must be Tensor, not {type(other).__name__}")
        x, y = operands(a, other, floats)
        return apply(op, compute(forward, x, y), (a, other), (), (x, y))
    function.__name__ = function.__qualname__ = name
    function.op = op
    return function


INFERENCE_SAVED_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def not_differentiable(value, fn: str, name: str) -> None:
    """PyTorch's refusal of an argument it has no derivative for that requires grad (in grad mode only)."""
    if value is not None and value.requires_grad and autograd.is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. This "
                           "input cannot have requires_grad True.")


def needs_grad(*inputs) -> bool:
    if not STATE.recording:
        return False
    for x in inputs:
        if x.__class__ is Tensor and x.requires_grad:
            return True
    return False


# -------------------------------------------------------------------------------- operand preparation

PY_NUMBERS = (float, int, bool, complex)


def broadcast_error(a_shape, b_shape):
    n = max(len(a_shape), len(b_shape))
    pa = (1,) * (n - len(a_shape)) + tuple(a_shape)
    pb = (1,) * (n - len(b_shape)) + tuple(b_shape)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) "
                                f"at non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(a_shape)} and {list(b_shape)} cannot be broadcast")


def result_dtype(*operands) -> dtypes.DType:
    """PyTorch's result dtype for tensors and Python numbers."""
    dim = zero = scalar = None
    for x in operands:
        if x.__class__ is Tensor:
            d = dtypes.of_array(x._a)
            if x._a.ndim:
                dim = d if dim is None else dtypes.promote_types(dim, d)
            else:
                zero = d if zero is None else dtypes.promote_types(zero, d)
        elif x is not None:
            d = dtypes.scalar_dtype(x)
            scalar = d if scalar is None else dtypes.promote_types(scalar, d)
    return dtypes.result_type(dim, zero, scalar)


class OperandType(Exception):
    """An operand that is neither a Tensor nor a number. Tensor's operator methods turn it into NotImplemented,
    as PyTorch's do, so Python tries the other side's reflected method and otherwise raises its own
    "unsupported operand type(s) for +: 'Tensor' and 'NoneType'". Raised as the cause of a TypeError
    (operand_error), which is what a function or method call reports."""


def operand_error(x) -> TypeError:
    error = TypeError(f"unsupported operand type(s): expected a Tensor or a number, got {type(x).__name__}")
    error.__cause__ = OperandType()
    return error


def not_implemented(error: TypeError):
    """An operator method's answer to `error`: NotImplemented for an operand of no type it takes, else raise it."""
    if error.__cause__.__class__ is OperandType:
        return NotImplemented
    raise error


def check_operand(x, name="other"):
    if x.__class__ is not Tensor and not isinstance(x, PY_NUMBERS):
        raise operand_error(x)


def operands(a, b, floating=False):
    """The numpy operands of a binary op, already in PyTorch's result dtype (numpy's own promotion
    differs: int64 * 2.5 is float64 there, float32 in PyTorch)."""
    check_operand(a)
    check_operand(b)
    if b.__class__ is int and not _INT64_MIN <= b <= _INT64_MAX:
        _wide_int_operand(a, b)
    dt = result_dtype(a, b)
    if floating and dt.category < dtypes.FLOAT:
        dt = dtypes.default_float
    npdt = dt.np
    if a.__class__ is Tensor:
        x = a._a if a._a.dtype == npdt else a._a.astype(npdt)
    else:
        try:
            x = npdt.type(a)
        except OverflowError:
            x = _wrapped_int(a, npdt)
        except TypeError:
            x = npdt.type(float(a))
    if b.__class__ is Tensor:
        y = b._a if b._a.dtype == npdt else b._a.astype(npdt)
    else:
        try:
            y = npdt.type(b)
        except OverflowError:
            y = _wrapped_int(b, npdt)
        except TypeError:           # bfloat16 (ml_dtypes) takes an int past 64 bits only as a float
            y = npdt.type(float(b))
    if x.size * y.size > STATE.large_result:     # the broadcast result could pass --max-memory: check its size
        budget.check_broadcast(x, y)
    return x, y




_INT64_MIN, _INT64_MAX, _UINT64_END = -(1 << 63), (1 << 63) - 1, 1 << 64
# The C++ type names PyTorch's conversion messages use
_CXX_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "int64": "int64_t", "int32": "int",
              "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def wrap_int64(v: int) -> int:
    """v as C++'s int64 arithmetic leaves it (wrapping past 2**63), as PyTorch's size computations do."""
    return (v + (1 << 63)) % _UINT64_END - (1 << 63)


def scalar_int(value: int) -> None:
    """PyTorch reads a Python int into a 64-bit number, signed or (from 2**63) unsigned: past both fails."""
    if value >= _UINT64_END:
        raise OverflowError("int too big to convert")
    if value < _INT64_MIN:
        raise OverflowError("can't convert negative int to unsigned")


def int64_arg(value: int) -> int:
    """An `int` argument (an offset, a diagonal) as PyTorch's parser reads it into 64 bits."""
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return value


def check_list_int(value, fn: str, arg: str, pos: int) -> None:
    """An int of an int-list argument (`pos` counts from 1), as PyTorch's parser unpacks it: past 64 bits
    its TypeError, of which gradcli gives the first line (PyTorch's goes on with a C++ backtrace)."""
    if value.__class__ is int and not _INT64_MIN <= value <= _INT64_MAX:
        raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {pos} with error "
                        "\"Overflow when unpacking long long\"")


def int_param(*values) -> None:
    """Arguments PyTorch's signature types `int` (a diagonal, a count, a start), as its parser reads them:
    first their types (a float or a bool is refused with a TypeError, which the call's argument check
    words as PyTorch does: engine/signatures.py), then their values, the last argument first (the
    generated bindings read their arguments as C++ evaluates a call's, right to left on x86-64): an int past
    64 bits is the ValueError of int64_arg. Anything else (a tensor, None) is the caller's to check."""
    for v in values:
        if v.__class__ is float or v.__class__ is bool:
            raise TypeError(f"an int is expected, not {v.__class__.__name__}")
    for v in reversed(values):
        if v.__class__ is int:
            int64_arg(v)


def tensor_int(v) -> int | None:
    """The int a 0-d integer tensor stands for where PyTorch's signature says `int` (its parser takes
    one that is not bool), else None."""
    if v.__class__ is Tensor and v._a.ndim == 0 and v._a.dtype.kind in "iu":
        return int(v._a)
    return None


def list_element_arg(v):
    """`v`, or the int it stands for when it is an integer (or bool) tensor of one element: PyTorch's
    parser takes one for an int list of a given length (a reduction's `dim`, roll's `shifts`)."""
    if v.__class__ is Tensor and v._a.size == 1 and v._a.dtype.kind in "iub":
        return int(v._a.ravel()[0])
    return v


def tensor_arg(x, fn: str, name: str, position: int) -> None:
    """PyTorch's parser's TypeError for an argument that must be a Tensor: "fn(): argument 'name' (position N)
    must be Tensor, not int"."""
    if x.__class__ is not Tensor:
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(x).__name__}")


def index_arg(v):
    """`v`, or the int it stands for when it is a 0-d integer tensor (see tensor_int) or an int of a class of
    int's (an IntEnum's member: PyTorch's parser takes it, not a bool)."""
    cls = v.__class__
    if cls is Tensor:
        value = tensor_int(v)
        if value is not None:
            return value
    elif cls is not int and cls is not bool and isinstance(v, int):
        return int(v)
    return v


def number_arg(value, fn: str, arg: str, position: int | None = None, word: str = "Number"):
    """A `Number` (or `float`) argument as PyTorch's parser reads it: a Python number as it is, and a 0-d
    tensor that does not require grad as its value (so `alpha=torch.tensor(2)` is the int 2); anything
    else is the parser's TypeError, naming `fn` and `arg` (at `position` when given by position)."""
    cls = value.__class__
    if cls is int or cls is float or cls is bool:
        return value
    if cls is Tensor and value._a.ndim == 0 and not value.requires_grad:
        return value._a.item()
    from gradcli.engine.signatures import type_name
    where = f" (position {position})" if position is not None else ""
    raise TypeError(f"{fn}(): argument '{arg}'{where} must be {word}, not {type_name(value)}")


def scalar_param(*values) -> None:
    """Arguments PyTorch's signature types `Scalar` (a slope, a weight, bounds, alpha), as its parser reads
    a Python int: into 64 bits, signed or unsigned, else an OverflowError (scalar_int); the last
    argument first, as int_param."""
    for v in reversed(values):
        if v.__class__ is int:
            scalar_int(v)


def checked_scalar(value, npdt: np.dtype):
    """`value` (a Python number) for a tensor of dtype `npdt` where PyTorch converts it with an overflow
    check (fill values, clamp bounds, where's numbers, alpha): its RuntimeError when it does not fit."""
    cls = value.__class__
    if cls is int:
        scalar_int(value)
    kind = npdt.kind
    if kind == "b" or cls is bool:
        return value
    if kind in "fV":
        if npdt.itemsize < 8 and abs(value) > float(dtypes.finfo(npdt).max) and abs(value) != float("inf"):
            raise _conversion_overflow(npdt)
        return value
    if kind == "c" or cls is complex:
        if kind != "c":
            raise RuntimeError(f"value cannot be converted to type {_CXX_NAMES.get(npdt.name, npdt.name)} without "
                               "overflow")
        return value
    info = np.iinfo(npdt)
    if cls is float:
        fits = value == value and info.min <= value <= info.max
    elif kind == "u":
        fits = -info.max <= value <= info.max     # a negative value wraps, as C++'s conversion does
    else:
        fits = info.min <= value <= info.max
    if not fits:
        raise _conversion_overflow(npdt)
    return value


def checked_double(value, npdt: np.dtype):
    """`value` where PyTorch takes it as a double and converts that to the tensor's dtype with an overflow
    check (F.pad's value): the comparison is made in double, so 2**63 fits int64 (and wraps, as the cast
    does) where inf, nan and 1e300 do not."""
    if npdt.kind in "iu":
        v = float(value)
        info = np.iinfo(npdt)
        if not (v == v and float(info.min) <= v <= float(info.max)):
            raise _conversion_overflow(npdt)
        # the double, truncated as C++ casts it: 2**63 (int64's maximum rounded up) becomes its minimum
        return int(info.min) if v >= 2.0 ** 63 else int(v)
    return value


def _conversion_overflow(npdt: np.dtype) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {_CXX_NAMES[npdt.name]} without overflow")


def _wide_int_operand(a, b: int) -> None:
    """A Python int past int64 as an operand: PyTorch reads it as an unsigned 64-bit number, which only
    integer and float tensors take (and nothing past 64 bits)."""
    scalar_int(b)
    if a.__class__ is Tensor and a._a.dtype == np.bool_:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           "Bool and UInt64")


def _wrapped_int(value: int, npdt: np.dtype):
    """A Python int that numpy will not put into a narrower integer dtype: wrapped around as PyTorch's
    kernels do (int8 + 300 is int8 + 44), after PyTorch's own 64-bit reading of it."""
    scalar_int(value)
    if npdt.kind not in "iu":
        return npdt.type(value)
    bits = npdt.itemsize * 8
    value %= 1 << bits
    if npdt.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return npdt.type(value)


_ndarray, _BIG = np.ndarray, workers.BIG_BINARY


def compute(fn, x, y):
    """Apply a numpy binary function, turning numpy's broadcast failure into PyTorch's message; the result
    laid out as PyTorch lays it out (layout.laid_out) where an operand is not C-contiguous. A big result of
    an exactly rounded ufunc is computed by the worker threads (gradcli.engine.workers)."""
    try:
        if x.__class__ is _ndarray and x.size >= _BIG or y.__class__ is _ndarray and y.size >= _BIG:
            out = workers.binary(fn, x, y)
        else:
            out = fn(x, y)
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None
    # C-contiguous operands give a C-contiguous result unless the result keeps a size-1 dim whose strides
    # (left by a view) reorder it: the hot path (small contiguous tensors) pays one flags check
    if out.__class__ is _ndarray and out.ndim > 1 and y.__class__ is _ndarray and x.__class__ is _ndarray \
            and not (x.flags.c_contiguous and y.flags.c_contiguous and (x.shape == y.shape or 1 not in out.shape)):
        out = laid_out(out, x, y)
    return out


# --------------------------------------------------------------------------------------------- dims

def axes(dim, ndim: int) -> tuple:
    """Normalise `dim` (int or sequence) to sorted non-negative axes, with PyTorch's range error."""
    if isinstance(dim, int):
        dims = (dim,)
    elif dim.__class__ is Tensor:       # an integer tensor of one element reads as a dim (list_element_arg)
        dim = list_element_arg(dim)
        if dim.__class__ is Tensor:
            raise TypeError("dim must be int or tuple of ints, not Tensor")   # (the call's argument check words it)
        dims = (dim,)
    else:
        dims = tuple(dim)
    out = []
    for i, d in enumerate(dims):
        if d.__class__ is bool and i > 0:       # the parser unpacks an int list's later elements as ints
            d = int(d)
        elif d.__class__ is Tensor and d._a.ndim == 0 and d._a.dtype.kind in "iub":
            d = int(d._a)
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"dim must be int or tuple of ints, not {type(d).__name__}")
        d = wrap_dim(d, ndim)
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out))


class GivenDims(tuple):
    """A tuple the engine works with (a reduction's normalised dims, cat's parts) that also keeps the dim=
    a script gave, negative or unordered: PyTorch's nodes save a dim as given (saved.py shows it so)."""
    given = None


def given_dims(values: tuple, dim) -> tuple:
    """`values`, remembering `dim` where it is not already what `values` shows (a non-negative int or an
    ordered tuple of them is; None, [], negative dims, unordered dims and tensors are not)."""
    if dim.__class__ is dict:               # several values: {saved name: as given}
        out = GivenDims(values)
        out.given = dim
        return out
    if dim.__class__ is int and dim >= 0 and values == (dim,):
        return values
    if dim.__class__ is tuple and dim == values and dim:
        return values
    out = GivenDims(values)
    out.given = dim
    return out


def reduction_dims(dim, ndim: int) -> tuple:
    """`axes` for a reduction; a 0-d tensor accepts dim 0 or -1 and reduces over nothing."""
    dims = axes(dim, ndim)
    return dims if ndim else ()


def wrap_dim(d: int, ndim: int) -> int:
    """A possibly negative dim as an index into the shape; 0-d tensors accept dims 0 and -1. A dim that
    is not an int is a TypeError (which the call's argument check words as PyTorch does), one past
    64 bits PyTorch's parser's ValueError."""
    if d.__class__ is not int:
        d = _dim_int(d)
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if d < lo or d > hi:
        int64_arg(d)
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
    return d % ndim if ndim else 0


def _dim_int(d) -> int:
    if isinstance(d, np.integer) or isinstance(d, int) and d.__class__ is not bool:     # an IntEnum's member too
        return int(d)
    value = tensor_int(d)
    if value is not None:
        return value
    raise TypeError(f"argument 'dim' must be int, not {type(d).__name__}")


TYPE_WORDS = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
              "bool": "Bool", "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
              "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def type_word(x: np.ndarray) -> str:
    """The scalar type name PyTorch's messages use: Float, Long, Bool, ..."""
    return TYPE_WORDS[x.dtype.name]
