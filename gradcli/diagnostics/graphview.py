"""The backward graph behind a tensor (its grad_fn chain): where each node came from, and the graph
drawn as a text tree, as Graphviz DOT or as JSON.

Used by `gradcli graph` and the REPL's `%graph`. Every walk is iterative (graphs of a million nodes
exist: a loop of `x = x * 2`), a node reached along several paths is drawn once and referred to
afterwards, and `max_depth` / `max_nodes` bound the output (0 or None: no bound).

Provenance (which script statement made a node, and which name it was bound to) comes from
gradcli/language/provenance.py.
"""

from __future__ import annotations

import json

from gradcli.engine import autograd, slim
from gradcli.engine.autograd import AccumulateGrad, Node, grad_accumulator
from gradcli.engine.recording import Out
from gradcli.engine.tensor import Tensor
from gradcli.language.provenance import Provenance

UNICODE = {"tee": "├── ", "last": "└── ", "pipe": "│   ", "blank": "    ", "more": "…", "dash": "─"}
ASCII = {"tee": "|-- ", "last": "`-- ", "pipe": "|   ", "blank": "    ", "more": "...", "dash": "-"}

# How far the first pass looks for nodes reached twice; beyond it a repeat is still drawn once, it
# just gets no number.
_SCAN_LIMIT = 200_000

# Statement text longer than this is cut (with an ellipsis) in tree lines and DOT labels; JSON keeps it whole.
_TEXT_WIDTH = 60


# --------------------------------------------------------------------------------------- describing

class Label:
    """What the views say about one node: PyTorch's name, the script name it goes by, the statement
    that made it (and whether that statement bound the name), and for a leaf its tensor."""

    __slots__ = ("kind", "variable", "site", "bound", "leaf", "where")

    def __init__(self, kind, variable=None, site=None, bound=False, leaf=None, where=""):
        self.kind, self.variable, self.site, self.bound, self.leaf, self.where = \
            kind, variable, site, bound, leaf, where


def describe(node, names: dict | None = None, provenance: Provenance | None = None) -> Label:
    names = names or {}
    if isinstance(node, AccumulateGrad):
        leaf = node.variable
        if leaf is None:
            return Label("AccumulateGrad")
        found = provenance.leaf(leaf) if provenance is not None else None
        name, site = found if found is not None else (names.get(id(leaf)), None)
        return Label("AccumulateGrad", name, site, True, leaf, _where(provenance, site))
    label = Label(node.op.node, names.get(id(node)))
    if provenance is not None:
        found = provenance.binding(node)
        label.site = provenance.created(node)
        if found is not None:
            label.variable = found[0]
            label.bound = found[1] is label.site
        label.where = _where(provenance, label.site)
    return label


def _where(provenance, site) -> str:
    return provenance.where(site) if provenance is not None and site is not None else ""


def _short(text: str, more: str) -> str:
    return text if len(text) <= _TEXT_WIDTH else text[:_TEXT_WIDTH - len(more)].rstrip() + more


def _tree_text(label: Label, glyphs: dict) -> str:
    dash = glyphs["dash"]
    if label.kind == "AccumulateGrad":
        if label.leaf is None and label.variable is None:
            return "AccumulateGrad (its leaf tensor no longer exists)"
        shown = f"{label.variable}: " if label.variable else "leaf "
        text = f"AccumulateGrad {dash} {shown}{tensor_summary(label.leaf)}"
        return f"{text}  ({label.where})" if label.where else text
    text = label.kind
    if label.site is None or not label.site.text:
        return f"{text} {dash} {label.variable}" if label.variable else text
    source = _short(label.site.text, glyphs["more"])
    if label.bound:
        text = f"{text}  {source}"
    else:
        text = (f"{text} {dash} {label.variable}" if label.variable else text) + f"  in {source}"
    return f"{text}  ({label.where})" if label.where else text


def tensor_summary(t: Tensor) -> str:
    """`[2, 2] float32`: a tensor's shape and dtype, as the graph and the REPL show them."""
    dtype = repr(t.dtype)
    return f"{list(t.shape)} {dtype[6:] if dtype.startswith('torch.') else dtype}"


# ---------------------------------------------------------------------------------------- text tree

def render(root, names: dict | None = None, max_depth: int | None = 40, max_nodes: int | None = 400,
           ascii: bool = False, provenance: Provenance | None = None) -> str:
    """The graph under `root` (a Tensor or a grad_fn node), one node per line.

    `names` maps id() of tensors and of grad_fn nodes to the names a user knows them by; a leaf's
    AccumulateGrad is labelled with its tensor's name. With a `provenance`, nodes also show the
    statement that made them. Edges to inputs that need no gradient (PyTorch's `(None, 0)` in
    next_functions) are not drawn.
    """
    glyphs = ASCII if ascii else UNICODE
    names = names or {}
    max_depth = max_depth or float("inf")
    max_nodes = max_nodes or float("inf")
    node = root_node(root)
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
        text = _tree_text(describe(node, names, provenance), glyphs)
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


def root_node(root):
    """The node a graph of `root` starts from: a Tensor's grad_fn, a leaf's AccumulateGrad, the node
    itself, or None for a tensor that does not require grad."""
    if isinstance(root, Node):
        return autograd.shown(root)
    if isinstance(root, Tensor):
        if root.grad_fn is not None:
            return autograd.shown(root.grad_fn)
        if root.requires_grad:
            return grad_accumulator(root)
        return None
    raise TypeError(f"expected a Tensor or a grad_fn node, not {type(root).__name__}")


def _no_graph(tensor, names) -> str:
    name = names.get(id(tensor))
    what = f"'{name}'" if name else "the tensor"
    return f"{what} does not require grad: it has no backward graph"


def _inputs(node) -> tuple:
    return autograd.shown_inputs(node)


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
    """The shared nodes in the order the tree draws them (a preorder walk, each node once). The scan
    that found them saw them within _SCAN_LIMIT visits of the same walk."""
    if not shared:
        return []
    return [key for key in map(id, autograd.reachable([root], _SCAN_LIMIT)) if key in shared]


# ----------------------------------------------------------------------------------- nodes and edges

def collect(root, max_depth: int | None = None, max_nodes: int | None = None):
    """The graph under `root` breadth first: (nodes, edges, cut), each node once.

    `edges` are (from, to, input) triples of indices into `nodes`, pointing the way gradients flow
    (from a node to its next_functions[input]); `cut` maps a node's index to how many of its inputs
    the limits left out."""
    node = root_node(root)
    if node is None:
        return [], [], {}
    nodes, depths, index = [node], [0], {id(node): 0}
    edges, cut = [], {}
    i = 0
    while i < len(nodes):
        node, depth = nodes[i], depths[i]
        inputs = [(k, n) for k, n in enumerate(_inputs(node)) if n is not None]
        if inputs and max_depth and depth + 1 >= max_depth:
            cut[i] = len(inputs)
            inputs = []
        for k, child in inputs:
            j = index.get(id(child))
            if j is None:
                if max_nodes and len(nodes) >= max_nodes:
                    cut[i] = cut.get(i, 0) + 1
                    continue
                j = index[id(child)] = len(nodes)
                nodes.append(child)
                depths.append(depth + 1)
            edges.append((i, j, k))
        i += 1
    return nodes, edges, cut


def _saved(node):
    """Summaries of the tensors a node saved for its backward, or None once a backward freed them."""
    saved = slim.restore(node)
    if saved is autograd.FREED:
        return None
    out = []
    for value in saved or ():
        if value.__class__ is Tensor:
            out.append(("saved", value))
        elif value.__class__ is Out:
            out.append(("result", Tensor(value.a)))
    return out


def _tensor_json(t: Tensor) -> dict:
    return {"shape": list(t.shape), "dtype": t.dtype.name}


# --------------------------------------------------------------------------------------------- JSON

def to_json(root, name: str | None = None, provenance: Provenance | None = None, names: dict | None = None,
            max_depth: int | None = None, max_nodes: int | None = None, file: str | None = None) -> str:
    """The graph under `root` as one JSON document (see docs/graph.md for the schema)."""
    nodes, edges, cut = collect(root, max_depth, max_nodes)
    items = []
    for i, node in enumerate(nodes):
        label = describe(node, names, provenance)
        item = {"id": i, "name": label.kind, "variable": label.variable}
        if label.site is not None:
            item["line"] = label.site.line
            item["source"] = label.site.text
            if label.kind != "AccumulateGrad":
                item["bound"] = label.bound
            if provenance is not None and label.site.file != provenance.main:
                item["file"] = label.site.file
        if label.leaf is not None:
            item.update(_tensor_json(label.leaf))
        elif label.kind != "AccumulateGrad":
            saved = _saved(node)
            item["saved"] = None if saved is None else [dict(kind=k, **_tensor_json(t)) for k, t in saved]
        if i in cut:
            item["inputs_not_shown"] = cut[i]
        items.append(item)
    tensor = None
    if isinstance(root, Tensor):
        tensor = {"name": name, **_tensor_json(root), "requires_grad": root.requires_grad,
                  "grad_fn": root.grad_fn.op.node if root.grad_fn is not None else None}
    head = {"file": file, "tensor": tensor, "root": 0 if nodes else None, "truncated": bool(cut)}
    # one node or edge per line: readable, and diffs of two graphs line up
    out = ["{"] + [f"  {json.dumps(k)}: {_dumps(v)}," for k, v in head.items()]
    for key, rows in (("nodes", items), ("edges", [{"from": a, "to": b, "input": k} for a, b, k in edges])):
        body = ",\n".join(f"    {_dumps(row)}" for row in rows)
        out.append(f'  "{key}": [\n{body}\n  ]' if rows else f'  "{key}": []')
        out[-1] += "," if key == "nodes" else ""
    return "\n".join(out + ["}"]) + "\n"


def _make_dumps():
    """json.dumps(value, ensure_ascii=False) for the graph's plain values (dicts, lists, strings, numbers,
    None). JSONEncoder.encode makes a new C encoder on every call, which costs more than encoding a small
    row: one C encoder made here serves every row (a 100,000-node graph: 0.8 s to 0.5 s). Without the C
    accelerator, the encoder's own method."""
    from json import encoder

    if encoder.c_make_encoder is None:
        return json.JSONEncoder(ensure_ascii=False).encode

    def unencodable(value):
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    rows = encoder.c_make_encoder(None, unencodable, encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(rows(value, 0))


_dumps = _make_dumps()


# ---------------------------------------------------------------------------------------------- DOT

# torchviz's palette: the output tensor green, leaves that require grad blue, saved tensors orange.
_OUTPUT, _LEAF, _SAVED, _OP = "darkolivegreen1", "lightblue", "orange", "lightgrey"


def to_dot(root, name: str | None = None, provenance: Provenance | None = None, names: dict | None = None,
           max_depth: int | None = None, max_nodes: int | None = None) -> str:
    """The graph under `root` in Graphviz's DOT language; edges point the way gradients flow."""
    nodes, edges, cut = collect(root, max_depth, max_nodes)
    title = f"grad_fn graph of {name}" if name else "grad_fn graph"
    out = [f"digraph {_quote(title)} {{",
           "    // arrows point the way gradients flow: from a node to its inputs (next_functions)",
           "    graph [rankdir=TB, fontname=\"Helvetica\"];",
           f"    node [shape=box, style=\"filled,rounded\", fillcolor={_OP}, fontname=\"Helvetica\", fontsize=10];",
           "    edge [arrowsize=0.7];"]
    links = []
    if isinstance(root, Tensor) and nodes:
        text = f"{name}\n{tensor_summary(root)}" if name else tensor_summary(root)
        out.append(f"    output [label={_quote(text)}, fillcolor={_OUTPUT}];")
        links.append("    output -> n0;")
    for i, node in enumerate(nodes):
        label = describe(node, names, provenance)
        if label.kind == "AccumulateGrad":
            parts = [label.variable or "leaf", tensor_summary(label.leaf) if label.leaf is not None
                     else "(no longer exists)", "AccumulateGrad"]
            colour = f", fillcolor={_LEAF}"
        else:
            parts = [label.kind]
            if label.site is not None and label.site.text:
                parts.append(_short(("" if label.bound else "in ") + label.site.text, "…"))
            if label.variable and not label.bound:
                parts.insert(1, label.variable)
            colour = ""
        if label.where:
            parts.append(label.where)
        out.append(f"    n{i} [label={_quote(chr(10).join(parts))}{colour}];")
        if label.kind != "AccumulateGrad":
            for k, (kind, t) in enumerate(_saved(node) or ()):
                out.append(f"    n{i}_s{k} [label={_quote(kind + chr(10) + tensor_summary(t))}, fillcolor={_SAVED}];")
                links.append(f"    n{i}_s{k} -> n{i} [style=dashed, arrowhead=none];")
        if i in cut:
            count = cut[i]
            out.append(f"    n{i}_more [label={_quote(f'… {count} more input' + ('s' if count != 1 else ''))}, "
                       "shape=plaintext, style=\"\"];")
            links.append(f"    n{i} -> n{i}_more [style=dashed];")
    links.extend(f"    n{a} -> n{b};" for a, b, _ in edges)
    return "\n".join(out + links + ["}"]) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
