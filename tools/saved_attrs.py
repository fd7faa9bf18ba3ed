#!/usr/bin/env python3
"""Write gradcli/data/saved_attrs.json: the saved-value attributes PyTorch 2.13 gives each node type.

Run with the oracle (a Python with PyTorch 2.13); gradcli never needs PyTorch:

    /work/oracle/bin/python tools/saved_attrs.py            # rewrite the data file
    /work/oracle/bin/python tools/saved_attrs.py --check    # exit 1 if the stored file differs

The nodes come from running the scripts that reach every op row (tests/test_op_rows.py's corpus: the
engine cases, the golden scripts, the examples) in PyTorch, walking the graph of every tensor an op
returns (a TorchFunctionMode), when it is made. For each node type the file lists its `_saved_*` and `_raw_saved_*` names, in PyTorch's
`dir()` order, with the kind of value each gives (`Tensor`, `int`, `tuple`, ..., `None` when every
instance seen held nothing there, `?` when none could be read), which gradcli's node attributes
(gradcli/engine/saved.py) follow; under "pack order", for each node type that saves several tensors, the order PyTorch packs them
in (saved_tensors_hooks). It also writes tests/saved_tensors_expected.json: what PyTorch prints
for every `_saved_*` attribute of the nodes PROBES make.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "gradcli" / "data" / "saved_attrs.json"
EXPECTED = ROOT / "tests" / "saved_tensors_expected.json"

# Small graphs whose node `y.grad_fn` tests/test_saved_tensors.py reads every `_saved_*` attribute of,
# against the values PyTorch prints (written to EXPECTED).
PROBES = [
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.pow(2)",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x ** 2.5",
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True); y = 2 ** x",
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True); y = x ** x",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x * 3",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x * 0.5",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); w = torch.tensor([2.0, 1.0, 0.5]); y = x * w",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); w = torch.tensor([2.0, 1.0, 0.5], requires_grad=True); y = x * w",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); w = torch.tensor([2.0, 1.0, 0.5], requires_grad=True); y = x / w",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x + 1",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.add(x, alpha=2)",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x - x",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.exp()",
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True); y = x.log()",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.sin()",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.tanh()",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.sigmoid()",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.relu()",
    "x = torch.tensor([1.0, 4.0, 9.0], requires_grad=True); y = x.sqrt()",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.abs()",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = x.clamp(-1, 2)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.sum()",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.sum(1, keepdim=True)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.mean()",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.mean(0)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.max()",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.prod()",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.view(4)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.reshape(1, 4)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.t()",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.transpose(0, 1)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.unsqueeze(1)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.expand(3, 2, 2)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x[0]",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.softmax(1)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); y = x.log_softmax(1)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); w = torch.tensor([[0.5], [2.0]], requires_grad=True); y = x.mm(w)",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); w = torch.tensor([[0.5], [2.0]], requires_grad=True); y = x @ w",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); t = torch.tensor([[0.0, 1.0], [1.0, 0.0]]); y = F.mse_loss(x, t)",
    "x = torch.tensor([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]], requires_grad=True); t = torch.tensor([2, 0]); "
    "y = F.nll_loss(x, t, ignore_index=1)",
    "x = torch.tensor([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]], requires_grad=True); t = torch.tensor([2, 0]); "
    "y = torch.autograd.grad(F.nll_loss(x, t, weight=torch.tensor([1., 2., 3.])), x, create_graph=True)[0]",
    "x = torch.tensor([[[[1.0, -2.0]], [[0.5, 3.0]]]], requires_grad=True); t = torch.tensor([[[1, 0]]]); "
    "y = torch.autograd.grad(F.nll_loss(x, t, reduction='sum'), x, create_graph=True)[0]",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); t = torch.tensor([[0.5, 1.0], [1.0, 0.0]]); "
    "y = torch.autograd.grad(F.smooth_l1_loss(x, t, beta=0.75), x, create_graph=True)[0]",
    "x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True); t = torch.tensor([[0.5, 1.0], [1.0, 0.0]]); "
    "y = torch.autograd.grad(F.huber_loss(x, t, reduction='sum', delta=1.5), x, create_graph=True)[0]",
    "x = torch.tensor([[0.25, 0.5], [0.75, 0.125]], requires_grad=True); t = torch.tensor([[0.5, 1.0], [1.0, 0.0]]); "
    "y = torch.autograd.grad(F.binary_cross_entropy(x, t, weight=torch.tensor([2.0, 0.5])), x, create_graph=True)[0]",
    "x = torch.tensor([[0.25, -0.5], [0.75, 1.5]], requires_grad=True); t = torch.tensor([[1.0, -1.0], [-1.0, 1.0]]); "
    "y = torch.autograd.grad(F.soft_margin_loss(x, t, reduction='sum'), x, create_graph=True)[0]",
    "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True); y = torch.cat([x, x])",
]
PRELUDE = "import torch\nimport torch.nn.functional as F\n"


def corpus_scripts(files_first: bool = False):
    """The engine cases, the golden scripts and the examples: the corpus tests/test_op_rows.py reaches every
    op row with (it adds its own scripts for the rows these miss). `files_first`: the golden scripts and
    examples before the one-line cases (a few hundred scripts that reach most rows, the rarest among them)."""
    cases = json.loads((ROOT / "tests" / "engine_cases" / "expected.json").read_text())
    lines = (PRELUDE + case.replace("; ", "\n") + "\n" for case in cases)
    files = (path.read_text(encoding="utf-8") for folder in ("tests/conformance", "examples")
             for path in sorted((ROOT / folder).glob("*.grad")))
    for part in ((files, lines) if files_first else (lines, files)):
        yield from part


def _kind(value) -> str:
    if value is None:
        return "None"
    if value.__class__.__name__ == "Tensor":
        return "Tensor"
    if isinstance(value, (tuple, list)):
        inner = sorted({_kind(v) for v in value})
        return f"{type(value).__name__}[{','.join(inner)}]"
    return type(value).__name__


def _walk(node, seen: dict) -> list:
    """The nodes of `node`'s graph not in `seen` (added to it)."""
    new, stack = [], [node]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen[id(n)] = n
        new.append(n)
        stack.extend(f for f, _ in n.next_functions)
    return new


def _record(node, table: dict, unpacked: list) -> None:
    """`node`'s saved-value names and their kinds, read when the node is made (before a backward
    frees them); a kind seen as `None` or unreadable gives way to one seen later. Reading a saved
    tensor runs the unpack hook collect() installs, which says which pack it was: the tensors' pack
    order is kept under "pack order" (PyTorch runs unpack hooks in that order too)."""
    name = type(node).__name__
    entry = table.setdefault(name, {})
    packs = []
    for attr in dir(node):
        if not (attr.startswith("_saved_") or attr.startswith("_raw_saved_")):
            continue
        unpacked.clear()
        try:
            kind = _kind(getattr(node, attr))
        except Exception:
            kind = "?"
        if unpacked and attr.startswith("_saved_"):
            packs.append((unpacked[0], attr))
        if entry.get(attr, "?") in ("?", "None", "tuple[]") and kind != "?":   # an empty tuple says less than ints
            entry[attr] = kind
        else:
            entry.setdefault(attr, kind)
    if len(packs) > 1:             # the fullest order seen (a node without an optional tensor packs fewer)
        order = table.setdefault("pack order", {})
        seen = [attr for _, attr in sorted(packs)]
        if len(seen) > len(order.get(name, ())):
            order[name] = seen


def collect(scripts) -> dict:
    import torch
    from torch.autograd.function import BackwardCFunction
    from torch.overrides import TorchFunctionMode

    table: dict = {}
    seen: dict = {}
    packs = [0]             # how many tensors were packed: each pack's number
    unpacked: list = []     # the pack numbers unpacked since _record last cleared it

    def pack(t):
        packs[0] += 1
        return packs[0], t

    def unpack(packed):
        unpacked.append(packed[0])
        return packed[1]

    class Watch(TorchFunctionMode):
        """Every tensor an op returns: the new nodes of its graph, recorded as they are made."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor) and t.grad_fn is not None:
                    for node in _walk(t.grad_fn, seen):
                        if not isinstance(node, BackwardCFunction):   # a script's own custom Function
                            _record(node, table, unpacked)
            return out

    for text in scripts:
        seen.clear()
        namespace = {"__name__": "__main__"}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                with Watch(), torch.autograd.graph.saved_tensors_hooks(pack, unpack):
                    exec(compile(text, "<case>", "exec"), namespace)
            except BaseException:
                pass
            finally:        # what a script may leave set would stop every later one (a CUDA default device)
                torch.set_default_device(None)
                torch.set_default_dtype(torch.float32)
                torch.set_grad_enabled(True)
    order = table.pop("pack order", {})
    return {name: table[name] for name in sorted(table)}, {name: order[name] for name in sorted(order)}


def probe_values() -> dict:
    """{probe: {attribute: str(value)}}: each probe's `y.grad_fn._saved_*` values as PyTorch prints them."""
    import torch
    import torch.nn.functional as F
    results = {}
    for probe in PROBES:
        namespace = {"torch": torch, "F": F}
        exec(probe.replace("; ", "\n"), namespace)
        node = namespace["y"].grad_fn
        results[probe] = {a: str(getattr(node, a)) for a in dir(node) if a.startswith("_saved_")}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    import torch
    # the probes first: the corpus changes print options and default dtypes
    expected = json.dumps(probe_values(), indent=1) + "\n"
    nodes, order = collect(corpus_scripts())
    data = {"version": torch.__version__.split("+")[0], "nodes": nodes, "pack order": order}
    text = json.dumps(data, indent=1) + "\n"
    if args.check:
        return 0 if OUT.read_text() == text and EXPECTED.read_text() == expected else 1
    OUT.write_text(text)
    EXPECTED.write_text(expected)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(data['nodes'])} node types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
