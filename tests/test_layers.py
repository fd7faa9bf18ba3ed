"""The layers of gradcli, enforced: the import graph, computed from the source, has no edge that runs
upward and no circle outside the engine (STYLE.md: cli -> commands -> kernel -> repl -> diagnostics -> session ->
language -> engine -> display). Imports inside functions count: a lazy import is still a dependency."""

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gradcli"

# Lowest first. A module may import its own layer and the layers below it.
LAYERS = [
    ("gradcli", "gradcli.errors"),                  # the package's version, and errors with positions
    ("gradcli.display",),
    ("gradcli.engine",),
    ("gradcli.language", "gradcli.deadline"),       # the deadline reads the budget, names the compiler's frames
    ("gradcli.session",),
    ("gradcli.diagnostics",),
    ("gradcli.repl",),
    ("gradcli.kernel",),                            # the Jupyter kernel: a front end like the REPL, using its Shell
    ("gradcli.commands", "gradcli.supervisor"),
    ("gradcli.cli",),
    ("gradcli.__main__",),
]


def _layer(module: str) -> int:
    best, rank = -1, None
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank is not None, f"{module} is in no layer: add its folder to LAYERS"
    return rank


def _modules() -> dict:
    """{module name: path} for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict) -> set:
    """The gradcli modules `name` imports (a `from package import module` names the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[:len(parent) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


@functools.cache
def _graph() -> dict:
    """{module: the gradcli modules it imports}; read once (three tests walk it), never changed."""
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_no_import_runs_upward():
    upward = [f"{a} -> {b}" for a, deps in _graph().items() for b in sorted(deps) if _layer(b) > _layer(a)]
    assert upward == []


def _circles(graph: dict) -> list:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_circle_outside_the_engine():
    outside = [c for c in _circles(_graph()) if not all(m.startswith("gradcli.engine") for m in c)]
    assert outside == []


@pytest.mark.parametrize("graph, circles", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_circle_finder_finds_circles(graph, circles):
    assert _circles(graph) == circles


def test_the_layer_table_covers_every_module_and_sees_imports():
    graph = _graph()
    for name in graph:
        _layer(name)
    assert "gradcli.language.compiler" in graph["gradcli.session"]
    assert "gradcli.engine.autograd" in graph["gradcli.engine.tensor"] or \
        "gradcli.engine.autograd" in graph["gradcli.engine.recording"]


def test_one_list_of_importable_modules():
    """stdlib.modules() is the list the compiler's import message, the REPL's completion and imports use:
    every name in it imports, and torch's module tree has nothing outside it."""
    from gradcli.language import stdlib
    from gradcli.session import Session
    for name in stdlib.modules():
        assert stdlib.module(name) is not None
        Session().run_source(f"import {name}\n")
    assert {"torch.random", "math", "random", "itertools", "torch.nn.functional", "torch.optim.lr_scheduler",
            "torch.utils.data", "string"} <= set(stdlib.modules())
