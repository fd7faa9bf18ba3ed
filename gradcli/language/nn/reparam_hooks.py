"""torch.nn.utils.weight_norm / spectral_norm and their removers: the older reparametrizations by a forward
pre-hook, which recomputes the weight as a plain attribute of the module before each call.

weight_norm replaces the parameter `name` by `name_g` (its norm over every dim but `dim`) and `name_v` (its
direction); spectral_norm renames it `name_orig` and adds buffers `name_u`, `name_v` (normal draws, u then
v, normalised) for the power iteration, run once per call in training mode. The hook objects (WeightNorm,
SpectralNorm) sit in the module's `_forward_pre_hooks` as PyTorch's do, with PyTorch's public attributes.
"""

from __future__ import annotations

from gradcli.engine import autograd, ops, parameter
from gradcli.engine.ops import weight_norm as weight_norm_ops
from gradcli.engine.state import STATE
from gradcli.language.classes import ScriptObject, ScriptType
from gradcli.language.nn.module import remove_pre_hook
from gradcli.language.nn.parametrizations import _transposed, normalized_into

_DEPRECATED = ("`torch.nn.utils.weight_norm` is deprecated in favor of "
               "`torch.nn.utils.parametrizations.weight_norm`.")


class WeightNorm(ScriptObject, metaclass=ScriptType):
    __module__ = "torch.nn.utils.weight_norm"

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_ops.weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        # Python's default filter shows a library's warning once per process (its source line is PyTorch's)
        STATE.warn_once("torch.nn.utils.weight_norm", "FutureWarning", _DEPRECATED)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", parameter.make(weight_norm_ops.norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", parameter.make(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, parameter.make(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    return _remove(module, name, WeightNorm, "weight_norm")


def _remove(module, name: str, kind, label: str):
    """Undo the reparametrization `kind` of `name`: the hook computes the weight a last time and leaves."""
    if remove_pre_hook(module, lambda hook: isinstance(hook, kind) and hook.name == name):
        return module
    raise ValueError(f"{label} of '{name}' not found in {module}")


class SpectralNorm(ScriptObject, metaclass=ScriptType):
    __module__ = "torch.nn.utils.spectral_norm"

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = ops.permute(weight, (self.dim,) + tuple(d for d in range(weight.dim()) if d != self.dim))
        return ops.reshape(weight, (weight.shape[0], -1))

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with autograd.no_grad():
                for _ in range(self.n_power_iterations):
                    v = normalized_into(v, ops.mv(weight_mat.t(), u), self.eps)
                    u = normalized_into(u, ops.mv(weight_mat, v), self.eps)
                u = u.clone()
                v = v.clone()
        sigma = ops.dot(u, ops.mv(weight_mat, v))
        return ops.div(weight, sigma)

    def remove(self, module):
        with autograd.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, parameter.make(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with autograd.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = ops.normalize(weight.new_empty(h).normal_(0, 1), 2.0, 0, fn.eps)
            v = ops.normalize(weight.new_empty(w).normal_(0, 1), 2.0, 0, fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    if dim is None:
        dim = 1 if _transposed(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    return _remove(module, name, SpectralNorm, "spectral_norm")
