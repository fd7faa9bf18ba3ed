"""torch.func: grad, grad_and_value, vjp, jacrev and vmap, function transforms built on reverse mode."""

from __future__ import annotations

import re
import weakref

import numpy as np

from gradcli.engine import autograd, budget, forward, ops, parameter
from gradcli.engine.addresses import address
from gradcli.engine.backward import differentiate
from gradcli.engine.recording import wrap_dim
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Size, Tensor


# ------------------------------------------------------------------------------------------- pytrees
# PyTorch's torch.utils._pytree for the containers scripts build: tuples, lists and dicts are nodes,
# anything else (a tensor, a number, None) is a leaf.

class Spec:
    """The shape of a pytree: `kind` None for a leaf, else tuple, list or dict with its children."""

    __slots__ = ("kind", "keys", "children", "leaves")

    def __init__(self, kind, keys, children):
        self.kind = kind
        self.keys = keys                # a dict's keys, in order (PyTorch's "context"), else None
        self.children = children
        self.leaves = 1 if kind is None else sum(c.leaves for c in children)

    def __eq__(self, other):
        return (other.__class__ is Spec and self.kind is other.kind and self.keys == other.keys
                and self.children == other.children)

    def __repr__(self, indent: int = 0) -> str:
        """TreeSpec's repr, as PyTorch's messages print it (children on their own indented lines)."""
        if self.kind is None:
            return "*"
        indent += 2
        parts = [c.__repr__(indent) for c in self.children]
        body = ("," + "\n" + " " * indent).join(parts) if parts else ""
        keys = None if self.keys is None else list(self.keys)
        return f"TreeSpec({self.kind.__name__}, {keys!r}, [{body}])"

    def pprint(self) -> str:
        """treespec_pprint: the structure as a literal with `*` for each leaf."""
        if self.kind is None:
            return "*"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c.pprint()}" for k, c in zip(self.keys, self.children)) + "}"
        inner = ", ".join(c.pprint() for c in self.children)
        if self.kind is tuple:
            return f"({inner},)" if len(self.children) == 1 else f"({inner})"
        return f"[{inner}]"


_LEAF = Spec(None, None, ())


def _node_kind(x):
    cls = x.__class__
    if cls is tuple or cls is list or cls is dict:
        return cls
    if cls is Size:             # a tuple to PyTorch's pytrees
        return tuple
    if isinstance(x, ops.ReturnTypes):      # a structseq (torch.return_types.max, ...): rebuilt as its own type
        return cls
    return None


def flatten(tree) -> tuple:
    """(leaves, spec) of a pytree, iteratively (a deep structure cannot exhaust Python's stack)."""
    leaves: list = []
    root: list = []
    stack = [(tree, root)]
    while stack:
        node, out = stack.pop()
        kind = _node_kind(node)
        if kind is None:
            out.append(_LEAF)
            leaves.append(node)
            continue
        keys = tuple(node) if kind is dict else None
        items = [node[k] for k in keys] if kind is dict else list(node)
        children: list = []
        out.append((kind, keys, children))
        stack.extend((item, children) for item in reversed(items))
    return leaves, _build(root[0])


def _build(entry) -> Spec:
    if entry.__class__ is Spec:
        return entry
    kind, keys, children = entry
    return Spec(kind, keys, [_build(c) for c in children])


def unflatten(spec: Spec, leaves):
    """The pytree of `spec`'s shape holding `leaves` in order."""
    it = iter(leaves)

    def build(s):
        if s.kind is None:
            return next(it)
        values = [build(c) for c in s.children]
        if s.kind is dict:
            return dict(zip(s.keys, values))
        if s.kind is tuple or s.kind is list:
            return tuple(values) if s.kind is tuple else values
        return ops.ReturnTypes(s.kind.__qualname__, *values)
    return build(spec)


def _broadcast(tree, spec: Spec):
    """_broadcast_to_and_flatten: one value per leaf of `spec`, a leaf of `tree` standing for all the
    leaves below it; None when the structures differ."""
    kind = _node_kind(tree)
    if kind is None:
        return [tree] * spec.leaves
    if spec.kind is not kind:
        return None
    keys = tuple(tree) if kind is dict else None
    if len(tree) != len(spec.children) or keys != spec.keys:
        return None
    out = []
    for item, child in zip(tree.values() if kind is dict else tree, spec.children):
        flat = _broadcast(item, child)
        if flat is None:
            return None
        out += flat
    return out


# ------------------------------------------------------------------------------------ the functions

def _name(func) -> str:
    """func.__name__ as PyTorch's messages name the function (a script's function, a torch function)."""
    name = getattr(func, "name", None)
    if name.__class__ is str:
        return name
    return getattr(func, "__name__", None) or type(func).__name__


class Transformed:
    """What a transform returns: a function that prints as Python prints the one PyTorch returns
    (`<function f at 0x...>` after functools.wraps, `<function vmap.<locals>.wrapped at 0x...>`)."""

    __slots__ = ("call", "qualname", "name", "__weakref__")

    def __init__(self, call, qualname: str):
        self.call = call
        self.qualname = qualname
        self.name = qualname.rpartition(".")[2]     # __name__, which messages about it give (`vmap(<lambda>, ...)`)

    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<function {self.qualname} at {address(self)}>"


def _qualname(func, fallback: str) -> str:
    """The name functools.wraps gives the wrapper: `func`'s qualified name when it has one."""
    qualname = getattr(func, "qualname", None)
    if qualname.__class__ is str:
        return qualname
    name = getattr(func, "name", None)
    return name if name.__class__ is str else fallback


# ---------------------------------------------------------------------------- levels of differentiation
# A transform differentiates at a level of its own. Each argument it differentiates becomes a tensor of
# that level: a view of the argument when the enclosing autograd tracks the argument (so the results
# stay differentiable there, and grad(grad(f)) works), else a fresh leaf. On the way out, a result that
# reaches no leaf but this level's fresh ones is detached, as functorch unwraps it; the fresh leaves are
# retired, so an enclosing level treats a graph through them as constant too.

# id -> weak reference of the fresh leaves of finished levels, constants for ever (keyed by id: a
# WeakSet would compare tensors with ==, which is elementwise)
_RETIRED: dict = {}


def _retire(t: Tensor) -> None:
    key = id(t)
    _RETIRED[key] = weakref.ref(t, lambda _, key=key: _RETIRED.pop(key, None))


def _retired(t: Tensor) -> bool:
    ref = _RETIRED.get(id(t))
    return ref is not None and ref() is t


class _Level:
    __slots__ = ("fresh", "aliases", "tracked")

    def __init__(self):
        self.fresh: list = []
        self.aliases: dict = {}        # id(level tensor) -> (level tensor, the argument it stands for)
        self.tracked = STATE.recording  # whether the enclosing autograd records anything

    def wrap(self, x):
        if x.__class__ is not Tensor:
            raise ValueError(f"Thing passed to transform API must be Tensor, got {_type_text(x)}")
        with _no_tangents():
            if self.tracked and x.requires_grad:
                t = x.view_as(x)
            else:
                t = x.detach()
                t.requires_grad_(True)
                self.fresh.append(t)
        forward.copy_tangents(t, x)             # forward-mode tangents (jacfwd, hessian) go along
        self.aliases[id(t)] = (t, x)
        return t

    def unwrap(self, t):
        """A result as the enclosing level sees it."""
        entry = self.aliases.get(id(t))
        if entry is not None and entry[0] is t:
            return entry[1]
        if t.grad_fn is None and not t.requires_grad:
            return t
        if not self.tracked or not self._reaches_outside(t):
            return _detached(t, self)
        return t

    def _reaches_outside(self, t) -> bool:
        own = {id(f) for f in self.fresh}
        roots = (t.grad_fn,) if t.grad_fn is not None else (autograd.grad_accumulator(t),)
        for node in autograd.reachable(roots):
            if node.__class__ is autograd.AccumulateGrad:
                leaf = node.variable
                if leaf is not None and id(leaf) not in own and not _retired(leaf) and \
                        not forward.is_stand_in(leaf):
                    return True
        return False

    def close(self):
        for f in self.fresh:
            _retire(f)


class _no_tangents:
    """Forward mode off for gradcli's own bookkeeping ops, whose tangents it sets itself."""

    __slots__ = ("level",)

    def __enter__(self):
        self.level, STATE.fw_level = STATE.fw_level, None

    def __exit__(self, *exc):
        STATE.fw_level = self.level


def _detached(t: Tensor, level=None) -> Tensor:
    """t.detach(), keeping its forward-mode tangents (which belong to enclosing jvps). Leaving the grad
    `level`, a tangent that depends on that level's own leaves alone is detached as well (the tangent of
    a gradient is one too)."""
    d = t.detach()
    for fw_level in forward.levels():
        tangent = forward.tangent_of(t, fw_level)
        if tangent is None:
            continue
        if level is not None and tangent.requires_grad and not (level.tracked and level._reaches_outside(tangent)):
            tangent = _detached(tangent, level)
        forward.put(d, fw_level, tangent)
    return d


def _stacked(pieces: list, dim: int) -> Tensor:
    """torch.stack(pieces, dim): the pieces' tangents at every level in force are stacked by stack's own
    forward-mode column (zeros where a piece has none), so vmap and the Jacobians assemble dual tensors."""
    return ops.shape.stack(pieces, dim)


def _viewed(t: Tensor, shape: tuple) -> Tensor:
    """t.view(shape), with its tangents viewed alike."""
    return ops.shape.view(t, shape)


def _assemble(pieces: list, shape: tuple, dtype, dim: int = 0) -> Tensor:
    """torch.stack(pieces, dim).view(shape): a Jacobian from its rows or columns, ViewBackward0 on top
    when it requires grad, as PyTorch's are."""
    if not pieces:
        return Tensor(np.zeros(shape, dtype=dtype))
    return _viewed(_stacked(pieces, dim), shape)


def _type_text(x) -> str:
    """`type(x)` as PyTorch's messages print it."""
    if x.__class__ is Tensor:
        return "<class 'torch.Tensor'>"
    name = type(x).__name__
    if name == "ScriptFunction":
        name = "function"
    return f"<class '{name}'>"


def _unwrap_tree(level: _Level, tree):
    leaves, spec = flatten(tree)
    out = []
    for leaf in leaves:
        if leaf.__class__ is not Tensor:
            raise RuntimeError(f"Expected tensors, got unsupported type {_type_text(leaf)}")
        out.append(level.unwrap(leaf))
    return unflatten(spec, out)


def _check_argnums(argnums):
    if argnums.__class__ is not int and argnums.__class__ is not bool and argnums.__class__ is not tuple:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {_type_text(argnums)}")
    if argnums.__class__ is tuple:
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums!r}")


def _wrap_argnum(argnum, n: int) -> int:
    if argnum.__class__ is not int and argnum.__class__ is not bool:
        raise RuntimeError(f"argnum must be int, got: {_type_text(argnum)}")
    if 0 <= argnum < n:
        return int(argnum)
    if -n <= argnum < 0:
        return argnum + n
    raise RuntimeError(f"Got argnum={argnum!r}, but only {n} positional inputs")


def _slice_argnums(args: tuple, argnums, as_tuple: bool):
    """The arguments `argnums` names: one argument for an int (a 1-tuple when `as_tuple`), else a tuple."""
    _check_argnums(argnums)
    if argnums.__class__ is tuple:
        return tuple(args[_wrap_argnum(a, len(args))] for a in argnums)
    picked = args[_wrap_argnum(argnums, len(args))]
    return (picked,) if as_tuple else picked


def _replace_argnums(args: tuple, argnums, values) -> tuple:
    args = list(args)
    if argnums.__class__ is tuple:
        for a, v in zip(argnums, values):
            args[_wrap_argnum(a, len(args))] = v
    else:
        args[_wrap_argnum(argnums, len(args))] = values
    return tuple(args)


def _wrap_argnums(level: _Level, args: tuple, argnums):
    """(args with those `argnums` names made tensors of `level`, those tensors flat, their pytree spec)."""
    flat, spec = flatten(_slice_argnums(args, argnums, as_tuple=False))
    wrapped = [level.wrap(x) for x in flat]
    return _replace_argnums(args, argnums, unflatten(spec, wrapped)), wrapped, spec


def _split_aux(output, has_aux: bool, api: str):
    """(output, aux) of a function that returns an auxiliary value when `has_aux`."""
    if not has_aux:
        return output, None
    if output.__class__ is not tuple or len(output) != 2:
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=True) -> tuple:
    """functorch's autograd.grad: only the outputs that require grad, zeros for unreached inputs. The
    graph is kept when the gradients are recorded (retain_graph None): an enclosing level shares it and
    differentiates through it again."""
    if grad_outputs is None:
        pairs = [(o, None) for o in outputs if o.requires_grad]
    else:
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return tuple(_zeros(inp) for inp in inputs)
    grads = differentiate(tuple(p[0] for p in pairs), tuple(inputs), tuple(p[1] for p in pairs),
                          retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    return tuple(_zeros(inp) if g is None else g for g, inp in zip(grads, inputs))


def _zeros(t: Tensor) -> Tensor:
    return Tensor(np.zeros_like(t._a))


# ------------------------------------------------------------------------------- grad, grad_and_value

def _grad_and_value(func, argnums, has_aux, args, kwargs):
    STATE.gradient_given()              # torch.func.grad imports sympy in PyTorch (STATE.gradient_given)
    level = _Level()
    try:
        with autograd.enable_grad():
            args, wrapped, spec = _wrap_argnums(level, args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value(f)(*args)")
            if output.__class__ is not Tensor:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{_type_text(output)}")
            if output._a.ndim != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output._a.ndim} dims. Maybe you wanted to use the vjp or "
                                   "jacrev APIs instead?")
            grads = _autograd_grad((output,), wrapped, create_graph=level.tracked)
            grad_input = unflatten(spec, [level.unwrap(g) for g in grads])
            output = level.unwrap(output)
            if has_aux:
                aux = _unwrap_tree(level, aux)
    finally:
        level.close()
    return grad_input, ((output, aux) if has_aux else output)


def grad_and_value(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return Transformed(wrapper, _qualname(func, "grad_and_value.<locals>.wrapper"))


def grad(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        grads, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (grads, value[1]) if has_aux else grads
    return Transformed(wrapper, _qualname(func, "grad.<locals>.wrapper"))


# ----------------------------------------------------------------------------------------------- vjp

def _check_outputs(flat: list, api: str) -> None:
    if not flat or (len(flat) == 1 and flat[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = "
                           f"{flat!r})")
    for o in flat:
        if o.__class__ is not Tensor:
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                               f"{_type_text(o)}")


def _vjp(func, primals: tuple, argnums, has_aux: bool):
    """(output, vjp_fn[, aux]), the vjp of `func` with respect to the primals `argnums` names (all
    when None)."""
    level = _Level()
    try:
        with autograd.enable_grad():
            if argnums is None:
                flat, spec = flatten(primals)
                wrapped = [level.wrap(x) for x in flat]
                primals = unflatten(spec, wrapped)
            else:
                for x in flatten(primals)[0]:       # vjp takes tensors only, differentiated or not
                    if x.__class__ is not Tensor:
                        raise ValueError(f"Thing passed to transform API must be Tensor, got {_type_text(x)}")
                primals, wrapped, spec = _wrap_argnums(level, primals, argnums)
            output, aux = _split_aux(func(*primals), has_aux, "vjp(f, *primals)")
            if has_aux:
                aux = _unwrap_tree(level, aux)
            flat_out, out_spec = flatten(output)
            _check_outputs(flat_out, "vjp(f, *primals)")
            for o in flat_out:
                if not o.dtype.is_floating_point:
                    raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                                       f"got Tensor with dtype {o.dtype!r}")
            results = unflatten(out_spec, [level.unwrap(o) for o in flat_out])
    finally:
        level.close()

    def wrapper(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = autograd.is_grad_enabled()
        flat_ct, ct_spec = flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {ct_spec.pprint()}, primal output: "
                               f"{out_spec.pprint()}")
        grads = _autograd_grad(flat_out, wrapped, flat_ct, retain_graph=retain_graph,
                               create_graph=create_graph and level.tracked)
        return unflatten(spec, [level.unwrap(g) for g in grads])

    vjp_fn = Transformed(wrapper, "_vjp_with_argnums.<locals>.wrapper")
    return (results, vjp_fn, aux) if has_aux else (results, vjp_fn)


def vjp(func, *primals, has_aux=False):
    return _vjp(func, primals, None, has_aux)


# -------------------------------------------------------------------------------------------- jacrev

def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    if chunk_size is not None and not chunk_size > 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args):
        STATE.gradient_given()          # (PyTorch's jacrev gives its vector-Jacobian products tensors)
        out = _vjp(func, args, argnums, has_aux)
        output, vjp_fn = out[0], out[1]
        flat_out, out_spec = flatten(output)
        primals = _slice_argnums(args, argnums, as_tuple=True)
        flat_primals, primals_spec = flatten(primals)
        # one vector-Jacobian product per output element (PyTorch maps vjp_fn over the rows of the
        # identity with vmap): row r of the identity, split into the outputs' shapes
        numels = [o._a.size for o in flat_out]
        total = sum(numels)
        for o in flat_out:          # refuse a Jacobian past the memory budget before computing its rows
            for p in flat_primals:
                budget.check_tensor(tuple(o._a.shape) + tuple(p._a.shape), p._a.itemsize)
        rows = [[] for _ in flat_primals]
        for r in range(total):
            cts, start = [], 0
            for o, n in zip(flat_out, numels):
                piece = np.zeros(n, dtype=o._a.dtype)
                if start <= r < start + n:
                    piece[r - start] = 1
                cts.append(Tensor(piece.reshape(o._a.shape)))
                start += n
            grads = flatten(vjp_fn(unflatten(out_spec, cts)))[0]
            for k, g in enumerate(grads):
                rows[k].append(g)
        per_output = []          # [output][input] jacobian blocks
        for i, o in enumerate(flat_out):
            start = sum(numels[:i])
            blocks = []
            for k, p in enumerate(flat_primals):
                block = _stack_rows(rows[k][start:start + numels[i]], p, o)
                blocks.append(block)
            per_output.append(unflatten(primals_spec, blocks))
        if argnums.__class__ is not tuple:
            per_output = [b[0] for b in per_output]
        result = unflatten(out_spec, per_output)
        return (result, out[2]) if has_aux else result
    return Transformed(wrapper, _qualname(func, "jacrev.<locals>.wrapper_fn"))


def _stack_rows(rows: list, primal: Tensor, output: Tensor) -> Tensor:
    """One Jacobian block: the rows (each shaped like the primal) as output.shape + primal.shape."""
    return _assemble(rows, tuple(output._a.shape) + tuple(primal._a.shape), primal._a.dtype)


# ----------------------------------------------------------------------------- jvp, jacfwd, hessian
# Forward mode through the engine's dual levels (gradcli.engine.forward): jvp enters a level of its own
# (nested inside any enclosing jvp's or the script's dual_level), makes each primal a dual tensor, runs
# the function and unpacks the outputs, whose tangents at the enclosing levels go on with them:
# jacfwd(jacfwd(f)), jvp of jvp, and forward over reverse (hessian = jacfwd(jacrev(f))) all work.

_JVP = "jvp(f, primals, tangents)"

def _tensors_only(flat: list, what: str) -> None:
    if not flat:
        raise RuntimeError(f"{_JVP}: Expected {what} to contain at least one Tensor.")
    for x in flat:
        if x.__class__ is not Tensor:
            raise RuntimeError(f"{_JVP}: Expected {what} to only contain Tensors, got {_type_text(x)}")


def _jvp(func, primals, tangents, argnums, strict: bool, has_aux: bool):
    if primals.__class__ is not tuple:
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    diff = primals if argnums is None else _slice_argnums(primals, argnums, as_tuple=True)
    flat_primals, primals_spec = flatten(diff)
    flat_tangents, tangents_spec = flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{primals_spec!r} and tangents with structure {tangents_spec!r}")
    _tensors_only(flat_primals, "primals")
    _tensors_only(flat_tangents, "tangents")
    forward.enter_dual_level(nested=True)
    try:
        duals = unflatten(primals_spec, [forward.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)])
        args = duals if argnums is None else _replace_argnums(primals, argnums,
                                                                duals[0] if argnums.__class__ is not tuple else duals)
        output, aux = _split_aux(func(*args), has_aux, _JVP)
        flat_out, out_spec = flatten(output)
        if not flat_out or (len(flat_out) == 1 and flat_out[0] is None):
            raise RuntimeError(f"{_JVP}: Expected f to be a function that has non-empty output (got output = "
                               f"{flat_out!r})")
        primals_out, tangents_out = [], []
        for o in flat_out:
            if o.__class__ is not Tensor:
                raise RuntimeError(f"{_JVP}: expected f(*primals) to return only tensors, got unsupported type "
                                   f"{_type_text(o)}")
            tangent = forward.tangent_of(o)
            if tangent is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of "
                                       "the inputs. This is not allowed with strict=True.")
                tangent = _zeros(o)
            with _no_tangents():
                primal = ops.shape.alias(o) if o.requires_grad else o.detach()
            forward.copy_tangents(primal, o, outer_only=True)    # an enclosing jvp's tangents go on
            primals_out.append(primal)
            tangents_out.append(tangent)
        if has_aux:
            aux = unflatten(*_plain_tree(aux))
    finally:
        forward.exit_dual_level()
    result = (unflatten(out_spec, primals_out), unflatten(out_spec, tangents_out))
    return result + (aux,) if has_aux else result


def _plain_tree(tree):
    """(spec, leaves) of an auxiliary output: tensors without their tangents."""
    leaves, spec = flatten(tree)
    out = []
    for leaf in leaves:
        if leaf.__class__ is not Tensor:
            raise RuntimeError(f"Expected tensors, got unsupported type {_type_text(leaf)}")
        with _no_tangents():
            out.append(ops.shape.alias(leaf) if leaf.requires_grad else leaf.detach())
    return spec, out


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    return _jvp(func, primals, tangents, None, strict, has_aux)


def linearize(func, *primals):
    """torch.func.linearize: (func(*primals), jvp_fn), jvp_fn(*tangents) giving func's tangent outputs at primals
    for tangents of the primals' structure, shapes and dtypes (PyTorch's checks and words). PyTorch traces func
    once more with tangents and replays that graph; gradcli runs func again under forward AD on every call of
    jvp_fn, so the values are the same and only func's side effects happen once per call."""
    output = func(*primals)
    _, output_spec = flatten(output)
    flat_primals, primals_spec = flatten(primals)
    for p in flat_primals:
        if p.__class__ is not Tensor:       # (the trace's tangents are made from each primal)
            raise AttributeError(f"'{_type_name(p)}' object has no attribute 'new_empty'")
    shapes = [p.shape for p in flat_primals]
    dtypes_ = [p.dtype for p in flat_primals]

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec!r} to have the same argspec as the primals "
                               f"{primals_spec!r}")
        for i, t in enumerate(flat_tangents):
            if t.shape != shapes[i]:
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree doesn't match the shape "
                                   f"{shapes[i]} of the corresponding primal.")
            if t.dtype != dtypes_[i]:
                raise RuntimeError(f"tangent:{i} with dtype {t.dtype} in flattened pytree doesn't match the dtype "
                                   f"{dtypes_[i]} of the corresponding primal.")
        forward.enter_dual_level(nested=True)
        try:
            duals = [forward.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)]
            flat_out, _ = flatten(func(*unflatten(primals_spec, duals)))
            out = []
            for o in flat_out:
                if o.__class__ is not Tensor:
                    out.append(o)
                    continue
                tangent = forward.tangent_of(o)
                # an output that does not depend on the primals: the traced graph's constant, which PyTorch's
                # constant folding keeps as a parameter that does not require grad
                out.append(parameter.make(_zeros(o), requires_grad=False) if tangent is None else tangent)
        finally:
            forward.exit_dual_level()
        return unflatten(output_spec, out)
    return output, Transformed(jvp_fn, "linearize.<locals>.jvp_fn")


def _type_name(x) -> str:
    return type(x).__name__


def _check_randomness(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{_plain(randomness)}")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    def wrapper(*args):
        _check_randomness(randomness)
        primals = _slice_argnums(args, argnums, as_tuple=True)
        flat_primals, primals_spec = flatten(primals)
        numels = [p._a.size if p.__class__ is Tensor else 0 for p in flat_primals]
        total = sum(numels)
        # one Jacobian-vector product per input element (PyTorch vmaps jvp over the standard basis):
        # column c is 1 at element c of the inputs taken together
        frame = VmapFrame(randomness, total, STATE.vmap, values=False)
        columns, aux = [], None
        try:
            for c in range(max(total, 1)):
                basis, start = [], 0
                for p, n in zip(flat_primals, numels):
                    piece = np.zeros(n, dtype=p._a.dtype if p.__class__ is Tensor else np.float32)
                    if start <= c < start + n:
                        piece[c - start] = 1
                    basis.append(Tensor(piece.reshape(p._a.shape if p.__class__ is Tensor else (0,))))
                    start += n
                frame.index, frame.count = c, 0
                STATE.vmap = frame
                out = _jvp(func, args, unflatten(primals_spec, basis), argnums, False, has_aux)
                STATE.vmap = frame.outer
                columns.append(flatten(out[1]))
                if c == 0:
                    aux = out[2] if has_aux else None
                    for o in columns[0][0]:     # the whole Jacobian past the budget: refused before the rest
                        for p in flat_primals:
                            budget.check_tensor(tuple(o._a.shape) + tuple(p._a.shape), o._a.itemsize)
        finally:
            STATE.vmap = frame.outer
        out_spec = columns[0][1]
        per_output = []
        for k in range(len(columns[0][0])):
            col = [c[0][k] for c in columns]
            blocks, start = [], 0
            for p, n in zip(flat_primals, numels):
                pieces = col[start:start + n]
                start += n
                # the column for input element j, entry i of the output: J[i..., j...]
                blocks.append(_columns_to_block(pieces, col[0], p))
            per_output.append(unflatten(primals_spec, blocks))
        if argnums.__class__ is not tuple:
            per_output = [b[0] for b in per_output]
        result = unflatten(out_spec, per_output)
        return (result, aux) if has_aux else result
    return Transformed(wrapper, _qualname(func, "jacfwd.<locals>.wrapper_fn"))


def _columns_to_block(pieces: list, like: Tensor, primal: Tensor) -> Tensor:
    """Jacobian block out.shape + primal.shape from the columns (each shaped like the output). A 0-d primal's
    one column loses its stacking dim by squeeze(-1) (SqueezeBackward1), as PyTorch's safe_unflatten does."""
    if not primal._a.ndim and pieces:
        return ops.shape.squeeze(_stacked(pieces, -1), -1)
    return _assemble(pieces, tuple(like._a.shape) + tuple(primal._a.shape), like._a.dtype, -1)


def hessian(func, argnums=0):
    """jacfwd(jacrev(func)), as PyTorch computes it."""
    inner = jacrev(func, argnums)
    outer = jacfwd(inner, argnums)
    outer.qualname = _qualname(func, "hessian.<locals>.wrapper_fn")
    return outer


# ---------------------------------------------------------------------------------------------- vmap
# vmap runs the function once per batch element, on the element's slices, and stacks what it returns:
# the values equal PyTorch's batched ones. A frame on STATE.vmap says a vmap is running, for what PyTorch
# refuses or does differently inside one: .item() and data-dependent control flow, and random draws
# (refused, the same for every element, or slices of one draw for the whole batch).

VMAP_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
             ".item() on a Tensor, please try to rewrite what you're doing with other operations. If error is "
             "occurring somewhere inside PyTorch internals, please file a bug report.")
VMAP_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
                     "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
VMAP_REFUSALS = {"item": VMAP_ITEM, "bool": VMAP_CONTROL_FLOW,
                 "tolist": "Cannot access data pointer of Tensor that doesn't have storage"}
# torch._vmap_internals._vmap, the older vmap that gradcheck's batched checks run under: its words for the
# same refusals (it has no randomness flag and refuses every random op)
LEGACY_REFUSALS = {"item": "Batching rule not implemented for aten::item. We could not generate a fallback.",
                   "bool": "Batching rule not implemented for aten::is_nonzero. We could not generate a fallback.",
                   "tolist": VMAP_REFUSALS["tolist"]}
LEGACY_RANDOM = ("vmap: We do not yet support calling random operations inside of vmap. Please perform random "
                 "operations outside of vmap as a workaround")
RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


class VmapFrame:
    """One running vmap: its batch size, the element being computed, and the random draws of the first
    element that the others reuse (their slices, or the whole draw under randomness='same')."""

    __slots__ = ("randomness", "size", "index", "draws", "count", "outer", "values")

    def __init__(self, randomness: str, size: int, outer, values: bool = True):
        self.values = values        # whether tensors' values are batched (vmap) or only tangents (jacfwd)
        self.randomness = randomness
        self.size = size
        self.index = 0
        self.draws: list = []
        self.count = 0
        self.outer = outer

    def random(self, draw, shape):
        """The values of one random draw `draw(shape)` made by the current element (rng.Generator
        calls this for every draw inside a vmap); `shape` None for a draw that has no batched form."""
        if self.randomness == "error":
            raise RuntimeError(RANDOM_ERROR)
        if self.randomness == "legacy":
            raise RuntimeError(LEGACY_RANDOM)
        k = self.count
        self.count += 1
        STATE.vmap = None           # the draw itself is an ordinary one
        try:
            if self.index == 0:
                if shape is None or self.randomness == "same":
                    values = draw(shape)
                else:
                    values = draw((self.size,) + tuple(shape))
                self.draws.append(values)
            elif shape is None and self.randomness == "different":
                return draw(shape)
            else:
                values = self.draws[k]
        finally:
            STATE.vmap = self
        if shape is None or self.randomness == "same":
            return values.copy()
        if not self.size:       # an empty batch: the draw made no values; the element's are never kept
            return np.zeros(values.shape[1:], values.dtype)
        return values[self.index].copy()


def _in_dims_text(in_dims) -> str:
    return repr(in_dims)


def _vmap_inputs(func, in_dims, args):
    name = _name(func)
    if in_dims.__class__ is not int and in_dims.__class__ is not bool and in_dims.__class__ is not tuple:
        raise ValueError(f"vmap({name}, in_dims={_in_dims_text(in_dims)}, ...)(<inputs>): expected `in_dims` to be "
                         "int or a (potentially nested) tuple matching the structure of inputs, got: "
                         f"{_type_text(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat, spec = flatten(args)
    dims = _broadcast(in_dims, spec)
    where = f"vmap({name}, in_dims={_in_dims_text(in_dims)}, ...)(<inputs>)"
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
                         f"structure {flatten(in_dims)[1]!r} but inputs has structure {spec!r}.")
    for i, (arg, d) in enumerate(zip(flat, dims)):
        if d is not None and d.__class__ is not int and d.__class__ is not bool:
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either an integer dimension "
                             "or None.")
        if d is not None and arg.__class__ is not Tensor:
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {_type_text(arg)}. "
                             "We cannot vmap over non-Tensor arguments, please use None as the respective in_dim")
        if d is not None:
            n = arg._a.ndim
            if not -n <= d < n:
                raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
            if d.__class__ is bool:     # PyTorch checks it as an int, then reads the size with it: its TypeError
                raise TypeError("size(): argument 'dim' (position 1) must be int, not bool")
            dims[i] = d % n
    sizes = [arg._a.shape[d] for arg, d in zip(flat, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat, dims, spec


def _check_out_dims(func, out_dims) -> None:
    if out_dims.__class__ is int or out_dims.__class__ is bool:
        return
    for d in flatten(out_dims)[0]:
        if d is not None and d.__class__ is not int and d.__class__ is not bool:
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={_plain(out_dims)}): `out_dims` must be an int, "
                             "None or a python collection of ints representing where in the outputs the vmapped "
                             "dimension should appear.")


def _plain(value) -> str:
    """f-string formatting of a value (str() of it), as PyTorch's messages show out_dims."""
    return str(value)


def _unbound(t: Tensor, dim: int) -> tuple:
    """t.unbind(dim), each slice with its slices of the tangents."""
    return t.unbind(dim)


def _element_args(flat, dims, size):
    """For each batch element, the flat arguments with every mapped tensor replaced by its slice."""
    slices = [_unbound(arg, d) if d is not None else None for arg, d in zip(flat, dims)]
    if size == 0:       # PyTorch runs the function once even on an empty batch: one element of zeros
        empty = [None if d is None else Tensor(np.zeros(arg._a.shape[:d] + arg._a.shape[d + 1:], arg._a.dtype))
                 for arg, d in zip(flat, dims)]
        return [[e if e is not None else a for a, e in zip(flat, empty)]]
    return [[s[i] if s is not None else a for a, s in zip(flat, slices)] for i in range(size)]


def _vmap_call(func, in_dims, out_dims, randomness, args, kwargs):
    _check_out_dims(func, out_dims)
    size, flat, dims, spec = _vmap_inputs(func, in_dims, args)
    frame = VmapFrame(randomness, size, STATE.vmap)
    results = []
    try:
        for i, element in enumerate(_element_args(flat, dims, size)):
            frame.index, frame.count = i, 0
            STATE.vmap = frame
            results.append(func(*unflatten(spec, element), **kwargs))
    except RuntimeError as e:
        _physical_dim(e)
        raise
    finally:
        STATE.vmap = frame.outer
    return _stack_outputs(func, results, out_dims, size)


_BROADCAST = re.compile(r"(The size of tensor a \(\d+\) must match the size of tensor b \(\d+\) at non-singleton "
                        r"dimension )(\d+)")


def _physical_dim(e: RuntimeError) -> None:
    """PyTorch broadcasts vmap's batched tensors as they are held, with the batch dim in front: a size
    mismatch names the dim one further on at each level (gradcli, which runs the function per element,
    cannot tell an unbatched tensor's mismatch inside the function from a batched one's)."""
    if e.__class__ is RuntimeError and len(e.args) == 1 and e.args[0].__class__ is str:
        match = _BROADCAST.fullmatch(e.args[0])
        if match is not None:
            e.args = (f"{match.group(1)}{int(match.group(2)) + 1}",)


def _stack_outputs(func, results: list, out_dims, size: int):
    name = _name(func)
    flat0, out_spec = flatten(results[0])

    def incompatible():
        raise ValueError(f"vmap({name}, ..., out_dims={_plain(out_dims)})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {flatten(out_dims)[1]!r} but outputs "
                         f"has structure {out_spec!r}.")
    if results[0].__class__ is Tensor:
        if out_dims.__class__ is tuple:
            if len(out_dims) != 1:
                incompatible()
            dims = list(out_dims)
        else:
            dims = [out_dims]
    else:
        dims = _broadcast(out_dims, out_spec)
        if dims is None:
            incompatible()
    columns = [flatten(r)[0] for r in results]
    out = []
    for k, d in enumerate(dims):
        values = [c[k] for c in columns]
        if d is None:
            first = values[0]
            if first.__class__ is Tensor and any(v is not first and not _same_tensor(v, first) for v in values):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            out.append(first)
            continue
        for v in values:
            if v.__class__ is not Tensor:
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {_type_text(v)}. "
                                 "Did you mean to set out_dims= to None for output?")
        if d.__class__ is bool:
            d = int(d)                  # an out_dim of True or False is the int it stands for, as in PyTorch
        if size == 0:
            shape = list(values[0]._a.shape)
            d = _out_dim(d, len(shape))
            shape.insert(d, 0)
            out.append(Tensor(np.zeros(shape, dtype=values[0]._a.dtype)))
        else:
            out.append(_stacked(values, d))
    return unflatten(out_spec, out)


def _out_dim(d: int, ndim: int) -> int:
    return wrap_dim(d, ndim + 1)


def _same_tensor(a, b) -> bool:
    return (b.__class__ is Tensor and a._a.shape == b._a.shape and a._a.dtype == b._a.dtype
            and bool(np.array_equal(a._a, b._a, equal_nan=True)))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    _check_randomness(randomness)
    if chunk_size is not None and not (chunk_size.__class__ is int and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)
    return Transformed(wrapped, _qualname(func, "vmap.<locals>.wrapped"))


def legacy_vmap(func):
    """torch._vmap_internals._vmap over dim 0 of every argument, as gradcheck's batched checks call it: the
    same computation as vmap, with that vmap's refusals (randomness "legacy")."""
    def wrapped(*args):
        return _vmap_call(func, 0, 0, "legacy", args, {})
    return wrapped


Transformed.__name__ = "function"       # what torch.func returns is a plain function in CPython's messages
