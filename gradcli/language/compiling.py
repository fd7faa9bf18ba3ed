"""torch.compile in the language: a compiled function (gradcli.engine.compiled) or an OptimizedModule.

Nothing is compiled: the function or module runs as written, its results hanging from the one node PyTorch's
AOT autograd makes (CompiledFunctionBackward). An OptimizedModule is the module PyTorch wraps the original in:
it prints `OptimizedModule((_orig_mod): ...)`, prefixes its state_dict keys and parameter names with
`_orig_mod.`, and reads attributes it lacks from the original module.
"""

from __future__ import annotations

from gradcli.engine import autograd, compiled

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_EAGER = ("eager", "eager_debug", "eager_noexcept", "pre_dispatch_eager")     # no AOT autograd: eager nodes
_AOT = ("inductor", "aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner")
_OTHERS = ("aot_eager_decomp_partition_crossref", "aot_eager_decomp_partition_with_mode", "aot_ts", "cudagraphs",
           "dynamo_accuracy_minifier_backend", "dynamo_minifier_backend", "invoke_subgraph", "openxla",
           "openxla_eval", "ts", "tvm")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile(model, ...): with no model, the decorator that compiles what it is given."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    aot = compiled_kind(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                        disable=disable)
    if aot is None:
        return model
    from gradcli.language.nn.module import Module
    if isinstance(model, Module):
        return _optimized_module()(model, not aot)
    return autograd.CompiledFunction(model, not aot)


def compiled_kind(*, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, disable=False):
    """torch.compile's options checked as PyTorch checks them: None when compiling is disabled, else whether the
    backend runs AOT autograd (one CompiledFunctionBackward node) rather than the eager nodes."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend.__class__ is not str:
        raise NotImplementedError("gradcli does not implement torch.compile with a backend function (a backend "
                                  "receives the captured graph, which gradcli does not make)")
    if backend in _OTHERS:
        raise NotImplementedError(f"gradcli does not implement torch.compile's backend '{backend}'")
    if backend not in _EAGER and backend not in _AOT:
        raise RuntimeError(f"Invalid backend: '{backend}', see `torch._dynamo.list_backends()` for available "
                           "backends.")
    if disable:
        return None
    return backend not in _EAGER


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
