"""torch.compile in the language: a compiled function (gradcli.engine.compiled) or an OptimizedModule.

Nothing is compiled: the function or module runs as written, its results hanging from the one node PyTorch's
AOT autograd makes (CompiledFunctionBackward). An OptimizedModule is the module PyTorch wraps the original in:
it prints `OptimizedModule((_orig_mod): ...)`, prefixes its state_dict keys and parameter names with
`_orig_mod.`, and reads attributes it lacks from the original module.
"""

from __future__ import annotations

from gradcli.engine import autograd, compiled
from gradcli.engine.state import STATE


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile(model, ...): with no model, the decorator that compiles what it is given."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    aot = compiled.compiled_kind(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    STATE.gradient_given()              # torch.compile imports sympy in PyTorch (STATE.gradient_given)
    if aot is None:
        return model
    from gradcli.language.nn.module import Module
    if isinstance(model, Module):
        return _optimized_module()(model, not aot)
    return autograd.CompiledFunction(model, not aot)


_CLASS = []


def _optimized_module():
    """OptimizedModule, made once torch.nn is loaded (it is an nn.Module)."""
    if not _CLASS:
        from gradcli.language.nn.module import Module

        class OptimizedModule(Module):
            """The module torch.compile gives for a module: the original as its one child, `_orig_mod`."""

            __module__ = "torch._dynamo.eval_frame"

            def __init__(self, mod, plain: bool):
                super().__init__()
                self._orig_mod = mod
                self.__dict__["_plain"] = plain
                self.__dict__["training"] = mod.training

            def forward(self, *args, **kwargs):
                mod = self._modules["_orig_mod"]
                if self.__dict__["_plain"]:
                    return mod(*args, **kwargs)
                return compiled.call(mod, args, kwargs)

            def __getattr__(self, name):
                try:
                    return super().__getattr__(name)
                except AttributeError:
                    return getattr(self._modules["_orig_mod"], name)

        _CLASS.append(OptimizedModule)
    return _CLASS[0]


def is_compiling() -> bool:
    """torch.compiler.is_compiling: False (a script's code always runs as written)."""
    return False


def reset() -> None:
    """torch.compiler.reset: nothing to forget."""


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: the function as it is (it never runs compiled)."""
    if fn is None:
        return lambda f: f
    return fn


COMPILER = {"is_compiling": is_compiling, "is_dynamo_compiling": is_compiling, "reset": reset, "disable": disable}
