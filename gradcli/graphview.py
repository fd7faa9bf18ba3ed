"""The backward graph behind a tensor (its grad_fn chain) drawn as a text tree.

Used by the REPL's `%graph`, and written to be reused by a command-line front end. The walk is
iterative (graphs of a million nodes exist: a loop of `x = x * 2`), a node reached along several
paths is drawn once and referred to by number afterwards, and `max_depth` / `max_nodes` bound
the output.
"""

from __future__ import annotations

from gradcli.engine.autograd import AccumulateGrad, Node, grad_accumulator
from gradcli.engine.tensor import Tensor

UNICODE = {"tee": "├── ", "last": "└── ", "pipe": "│   ", "blank": "    ", "more": "…", "dash": "─"}
ASCII = {"tee": "|-- ", "last": "`-- ", "pipe": "|   ", "blank": "    ", "more": "...", "dash": "-"}

# How far the first pass looks for nodes reached twice; beyond it a repeat is still drawn once, it
# just gets no number.
_SCAN_LIMIT = 200_000


def render(root, names: dict | None = None, max_depth: int = 40, max_nodes: int = 400,
           ascii: bool = False) -> str:
    """The graph under `root` (a Tensor or a grad_fn node), one node per line.

    `names` maps id() of tensors and of grad_fn nodes to the names a user knows them by; a leaf's
    AccumulateGrad is labelled with its tensor's name. Edges to inputs that need no gradient
    (PyTorch's `(None, 0)` in next_functions) are not drawn.
    """
    glyphs = ASCII if ascii else UNICODE
    names = names or {}
    node = _root_node(root)
    if node is None:
        return _no_graph(root, names)
    numbers = _shared_nodes(node)
    drawn_nodes: set = set()
    out: list[str] = []
    # The stack holds (node, prefix of its line, prefix for its children, depth); children are
    # pushed in reverse so they come off in next_functions order.
    stack = [(node, "", "", 0)]
    while stack:
        node, lead, child_lead, depth = stack.pop()
        if len(drawn_nodes) >= max_nodes:
            out.append(f"{lead}{glyphs['more']} (stopped after {max_nodes} nodes)")
            break
        key = id(node)
        text = _describe(node, names, glyphs["dash"])
        number = numbers.get(key)
        if key in drawn_nodes:
            out.append(f"{lead}{text} [#{number}, shown above]" if number else f"{lead}{text} [shown above]")
            continue
        drawn_nodes.add(key)
        out.append(f"{lead}{text} [#{number}]" if number else lead + text)
        children = [n for n in _inputs(node) if n is not None]
        if not children:
            continue
        if depth + 1 >= max_depth:
            count = f"{len(children)} input{'s' if len(children) != 1 else ''}"
            out.append(f"{child_lead}{glyphs['last']}{glyphs['more']} ({count} below max_depth={max_depth})")
            continue
        for i in range(len(children) - 1, -1, -1):
            last = i == len(children) - 1
            stack.append((children[i], child_lead + glyphs["last" if last else "tee"],
                          child_lead + glyphs["blank" if last else "pipe"], depth + 1))
    return "\n".join(out)


def _root_node(root):
    if isinstance(root, Node):
        return root
    if isinstance(root, Tensor):
        if root.grad_fn is not None:
            return root.grad_fn
        if root.requires_grad:
            return grad_accumulator(root)
        return None
    raise TypeError(f"expected a Tensor or a grad_fn node, not {type(root).__name__}")


def _no_graph(tensor, names) -> str:
    name = names.get(id(tensor))
    what = f"'{name}'" if name else "the tensor"
    return f"{what} does not require grad: it has no backward graph"


def _inputs(node) -> tuple:
    return node.inputs or ()


def _shared_nodes(root) -> dict:
    """Number, in drawing order, every node reachable along more than one path."""
    seen: set = set()
    shared: list = []
    stack = [root]
    visits = 0
    while stack and visits < _SCAN_LIMIT:
        node = stack.pop()
        visits += 1
        key = id(node)
        if key in seen:
            if key not in shared:
                shared.append(key)
            continue
        seen.add(key)
        stack.extend(reversed([n for n in _inputs(node) if n is not None]))
    return {key: i + 1 for i, key in enumerate(_drawing_order(root, set(shared)))}


def _drawing_order(root, shared: set) -> list:
    """The shared nodes in the order the tree draws them (a preorder walk, each node once)."""
    order, done, stack = [], set(), [root]
    while stack and len(order) < len(shared):
        node = stack.pop()
        key = id(node)
        if key in done:
            continue
        done.add(key)
        if key in shared:
            order.append(key)
        stack.extend(reversed([n for n in _inputs(node) if n is not None]))
    return order


def _describe(node, names: dict, dash: str) -> str:
    if isinstance(node, AccumulateGrad):
        leaf = node.variable
        if leaf is None:
            return "AccumulateGrad (its leaf tensor no longer exists)"
        name = names.get(id(leaf))
        shown = f"{name}: " if name else "leaf "
        return f"AccumulateGrad {dash} {shown}{tensor_summary(leaf)}"
    text = node.op.node
    name = names.get(id(node))
    return f"{text} {dash} {name}" if name else text


def tensor_summary(t: Tensor) -> str:
    """`[2, 2] float32`: a tensor's shape and dtype, as the graph and the REPL show them."""
    dtype = repr(t.dtype)
    return f"{list(t.shape)} {dtype[6:] if dtype.startswith('torch.') else dtype}"
