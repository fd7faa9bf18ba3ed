"""torch.nn.Module as scripts subclass it: registration of parameters, buffers and submodules by attribute
assignment, the call with its hooks, the walks over the tree, modes, conversions, state dicts and the repr.

Module is a library class of the language (gradcli.language.classes): a script's `class Net(nn.Module)`
derives from it as from its own classes, so a script reads and writes a module's attributes through
classes.instance_attr / set_attr, which land in the Python-level `__getattr__` / `__setattr__` below, as
in PyTorch. The attributes PyTorch's scripts read besides the public API (`_modules`, `_parameters`,
`_buffers`, `training`) are plain dicts and a bool; Python's internals (`__dict__`, `__class__`) stay
out of reach, as on every script object.
"""

from __future__ import annotations

import itertools

from gradcli.engine import autograd, dtypes, factories, parameter
from gradcli.engine.tensor import Tensor, check_device
from gradcli.engine.state import STATE
from gradcli.language import classes, torchapi
from gradcli.language.classes import ScriptObject, ScriptType, is_dunder
from gradcli.language.nn import backward_hooks
from gradcli.language.pycollections import OrderedDict

_HOOK_IDS = itertools.count()


def typename(obj) -> str:
    """torch.typename: a tensor's legacy type name, else the class's module and name."""
    if obj.__class__ is Tensor:
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", "__main__") else f"{module}.{cls.__qualname__}"


def add_indent(text: str, spaces: int) -> str:
    """Indent every line of `text` after the first (PyTorch's _addindent)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


class RemovableHandle(ScriptObject, metaclass=ScriptType):
    """What register_forward_hook and register_forward_pre_hook return: `remove()` takes the hook off."""

    __module__ = "torch.utils.hooks"

    def __init__(self, table: dict, key: int, extra: tuple = ()):
        self.id = key
        self.hooks_dict_ref = table
        self.extra_dict_ref = extra     # the tables that mark the hook (with_kwargs, always_call)

    def remove(self):
        self.hooks_dict_ref.pop(self.id, None)
        for table in self.extra_dict_ref:
            table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class IncompatibleKeys(ScriptObject, metaclass=ScriptType):
    """What load_state_dict returns: PyTorch's named pair of missing and unexpected keys."""

    __module__ = "torch.nn.modules.module"

    def __init__(self, missing_keys, unexpected_keys):
        self.missing_keys = missing_keys
        self.unexpected_keys = unexpected_keys

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, unexpected_keys={self.unexpected_keys!r})"

    def __iter__(self):
        return iter((self.missing_keys, self.unexpected_keys))

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return (self.missing_keys, self.unexpected_keys)[i]


IncompatibleKeys.__name__ = IncompatibleKeys.__qualname__ = "_IncompatibleKeys"      # PyTorch's name


def _no_forward(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


_no_forward.__name__ = "_forward_unimplemented"
_no_forward.__qualname__ = "_forward_unimplemented"


class Module(ScriptObject, metaclass=ScriptType):
    """torch.nn.Module."""

    __module__ = "torch.nn.modules.module"

    forward = _no_forward

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"Module.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"Module.__init__() takes 1 positional argument but {len(args) + 1} were given")
        d = self.__dict__
        # PyTorch's attributes, in its order (vars(module) shows them); its hook tables are OrderedDicts
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = {}

    # ---------------------------------------------------------------------------------- the call
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        pre = d.get("_forward_pre_hooks")
        if not pre and not d.get("_forward_hooks") and not d.get("_backward_hooks") \
                and not d.get("_backward_pre_hooks") and "_compiled_call_impl" not in d and not _INNER[0]:
            if pre is None:             # Module.__init__ never ran: PyTorch's call reads its hooks first
                raise _missing(self, "_backward_hooks")
            # the common case: nothing between the call and forward (a call without a keyword dict is quicker)
            return self.forward(*args, **kwargs) if kwargs else self.forward(*args)
        mode = d.get("_compiled_call_impl")
        if mode is True or (mode is None and _INNER[0] and _forward_is_scripts(self)):
            return _call_compiled(self, d, args, kwargs)
        if mode == "inner":
            _INNER[0] += 1
            try:
                return _call_with_hooks(self, d, args, kwargs)
            finally:
                _INNER[0] -= 1
        return _call_with_hooks(self, d, args, kwargs)

    def compile(self, *args, **kwargs):
        """Module.compile: torch.compile of the module's own call, in place (it prints, names its parameters and
        saves its state as before). As PyTorch's compiler leaves torch.nn's own code running as written, only a
        forward the script defines runs compiled (its results hanging from one CompiledFunctionBackward); a
        torch.nn module's forward, or the "eager" backends, run as they are."""
        from gradcli.engine import compiled
        if args:
            raise TypeError(f"compile() takes 1 positional argument but {len(args) + 1} were given")
        aot = compiled.compiled_kind(**kwargs)
        # True: this forward runs compiled; "inner": torch.nn's forward runs as written, and each submodule whose
        # forward the script wrote runs compiled on its own, as PyTorch's compiler starts a graph at each such frame
        self.__dict__["_compiled_call_impl"] = bool(aot) and (True if _forward_is_scripts(self) else "inner")

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args), or with_kwargs hook(module, args, kwargs) returning None or (args, kwargs)."""
        marks = self.__dict__.setdefault("_forward_pre_hooks_with_kwargs", OrderedDict())
        handle = _add_hook(self._forward_pre_hooks, hook, prepend, (marks,))
        if with_kwargs:
            marks[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output), or with_kwargs hook(module, args, kwargs, output); always_call: also
        when forward raises (then errors of the hook are warnings)."""
        d = self.__dict__
        with_kwargs_marks = d.setdefault("_forward_hooks_with_kwargs", OrderedDict())
        always_marks = d.setdefault("_forward_hooks_always_called", OrderedDict())
        handle = _add_hook(self._forward_hooks, hook, prepend, (with_kwargs_marks, always_marks))
        if with_kwargs:
            with_kwargs_marks[handle.id] = True
        if always_call:
            always_marks[handle.id] = True
        return handle

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars), before state_dict collects this module's entries."""
        return _add_hook(self.__dict__.setdefault("_state_dict_pre_hooks", OrderedDict()), hook, False)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata), after this module's and its children's entries."""
        return _add_hook(self.__dict__.setdefault("_state_dict_hooks", OrderedDict()), hook, False)

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs),
        before load_state_dict loads this module's entries."""
        return _add_hook(self.__dict__.setdefault("_load_state_dict_pre_hooks", OrderedDict()), _WrappedHook(hook),
                         False)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys), after this module and its children are loaded."""
        return _add_hook(self.__dict__.setdefault("_load_state_dict_post_hooks", OrderedDict()), hook, False)

    def cuda(self, device=None):
        """PyTorch's CPU build: a module holding a tensor fails as the tensor's cuda() does; one holding
        none comes back as it is."""
        for t in itertools.chain(self.parameters(), self.buffers()):
            t.cuda(device)
        return self

    def register_full_backward_hook(self, hook, prepend=False):
        backward_hooks.choose_kind(self.__dict__, True)
        return _add_hook(self.__dict__.setdefault("_backward_hooks", {}), hook, prepend)

    def register_backward_hook(self, hook):
        backward_hooks.choose_kind(self.__dict__, False)
        return _add_hook(self.__dict__.setdefault("_backward_hooks", {}), hook, False)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return _add_hook(self.__dict__.setdefault("_backward_pre_hooks", {}), hook, prepend)

    # ---------------------------------------------------------------------------------- attributes
    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            values = d.get(table)
            if values is not None and name in values:
                return values[name]
        if name[:1] != "_" and torchapi.has("torch.nn.Module", name):     # PyTorch's, not gradcli's
            raise NotImplementedError(f"gradcli does not implement torch.nn.Module.{name}")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if value.__class__ is Tensor and parameter.is_parameter(value):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _forget(d, name, "_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _forget(d, name, "_modules")
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        persistent = parameter.buffer_persistence(value) if value.__class__ is Tensor else None
        if persistent is not None:          # an nn.Buffer: registered as a buffer, with its persistence
            self.register_buffer(name, value, persistent)
            return
        if buffers is not None and name in buffers:
            if value is not None and value.__class__ is not Tensor:
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            values = _table(self, table)
            if name in values:
                del values[name]
                self.__dict__["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", d["_parameters"])
        if param is None:
            d["_parameters"][name] = None
        elif param.__class__ is not Tensor or not parameter.is_parameter(param):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        else:
            d["_parameters"][name] = param

    def register_buffer(self, name, tensor, persistent=True):
        d = self.__dict__
        if "_buffers" not in d:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", d["_buffers"])
        if tensor is not None and tensor.__class__ is not Tensor:
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        d["_buffers"][name] = tensor
        if persistent:
            d["_non_persistent_buffers_set"].discard(name)
        else:
            d["_non_persistent_buffers_set"].add(name)

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if name.__class__ is not str:
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        modules = self._modules
        if _has_attr(self, name) and name not in modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        module = self
        if target == "":
            return module
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target):
        module, name, param = _attribute_at(self, target)
        if param.__class__ is not Tensor or not parameter.is_parameter(param):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module, name, buffer = _attribute_at(self, target)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return buffer

    # ---------------------------------------------------------------------------------- walks
    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from _named_members(self, "_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        yield from _members(self, "_parameters", recurse)

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from _named_members(self, "_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        yield from _members(self, "_buffers", recurse)

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            yield from _named_modules(self, prefix, remove_duplicate)
            return
        # a set the caller passes: modules in it are skipped, and (with remove_duplicate) each module met is
        # added to it, through the submodules' own named_modules, as PyTorch walks
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is not None:
                    yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---------------------------------------------------------------------------------- modes, grads
    def train(self, mode=True):
        if mode.__class__ is not bool:
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in _members(self, "_parameters", True):
            if parameter.uninitialized_kind(p) is not None:
                raise parameter.uninitialized_error(p, "requires_grad_")
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in _members(self, "_parameters", True):
            grad = p.grad
            if grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    # ---------------------------------------------------------------------------------- conversions
    def _apply(self, fn):
        for module in self.children():
            module._apply(fn)
        return _apply_own(self, fn)

    def to_empty(self, *, device, recurse=True):
        """Every parameter and buffer (and gradient) replaced by an uninitialised tensor of its shape and dtype
        (gradcli's torch.empty), each parameter keeping its identity."""
        check_device(device)

        def empty(t):
            return factories.empty_like(t, device=device)
        return self._apply(empty) if recurse else _apply_own(self, empty)

    def to(self, *args, **kwargs):
        dtype, device, fmt = _to_dtype(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            if dtype.is_complex:            # (PyTorch converts, with a warning that complex modules are new)
                raise NotImplementedError("gradcli does not implement nn.Module.to with a complex dtype")
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype!r}")
        if device is not None and (check_device(device) or any(t.is_meta for t in _tensors(self))):
            try:
                return self._apply(lambda t: t.to(device, dtype if t.is_floating_point() else None))
            except NotImplementedError as e:        # a meta tensor has nothing to copy to the CPU
                raise NotImplementedError(f"{e} Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() "
                                          "when moving module from meta to a different device.") from None
        if fmt is not None and fmt is not dtypes.preserve_format:
            return self._apply(lambda t: _converted(t, dtype, fmt))
        if dtype is None:
            return _walked(self)
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def cpu(self):
        return _walked(self)

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    # ---------------------------------------------------------------------------------- state dicts
    def get_extra_state(self):
        """What a subclass keeps in its state dict besides tensors (its `_extra_state` entry) when it defines this."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state):
        """Takes back what get_extra_state gave, when a subclass defines it."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:                        # PyTorch's deprecated positional form
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()       # each module's version, as PyTorch's state dicts carry it
        metadata = getattr(destination, "_metadata", None)
        for name, module, leaving in _tree(self):
            d = module.__dict__
            if leaving:                 # after the module's and its children's entries: its post hooks
                local = {"version": _version(module)} if metadata is None else metadata[(prefix + name)[:-1]]
                for hook in d.get("_state_dict_hooks", {}).values():
                    if hook(module, destination, prefix + name, local) is not None:
                        raise RuntimeError("state_dict post-hook must return None")
                continue
            if metadata is not None:
                metadata[(prefix + name)[:-1]] = {"version": _version(module)}
            if "_parameters" not in d:
                raise _missing(module, "_state_dict_pre_hooks")
            for hook in d.get("_state_dict_pre_hooks", {}).values():
                hook(module, prefix + name, keep_vars)
            for key, p in d["_parameters"].items():
                if p is not None:
                    destination[prefix + name + key] = p if keep_vars else parameter.carry_uninitialized(p, p.detach())
            skip = d["_non_persistent_buffers_set"]
            for key, b in d["_buffers"].items():
                if b is not None and key not in skip:
                    destination[prefix + name + key] = b if keep_vars else parameter.carry_uninitialized(b, b.detach())
            if getattr(type(module), "get_extra_state", None) is not Module.get_extra_state:
                destination[prefix + name + "_extra_state"] = module.get_extra_state()
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        # PyTorch's copy (its modules' load hooks may rename keys); each module then works on the entries under its
        # prefix, taken from its parent's after the parent's hooks ran (so a hook's renaming reaches the children)
        metadata = getattr(state_dict, "_metadata", None)      # (a copy of a state dict's items has none)
        pending = {"": OrderedDict(state_dict)}
        for prefix, module, leaving in _tree(self):
            d = module.__dict__
            if leaving:                 # after the module and its children: its post hooks, the keys so far
                for hook in d.get("_load_state_dict_post_hooks", {}).values():
                    if hook(module, IncompatibleKeys(missing, unexpected)) is not None:
                        raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not"
                                             "expected to return new values, if incompatible_keys need to be modified,"
                                             "it should be done inplace.")
                continue
            if "_parameters" not in d:
                raise _missing(module, "_load_state_dict_pre_hooks")
            state_dict = pending.pop(prefix)
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            for hook in list(d.get("_load_state_dict_pre_hooks", {}).values()):
                if hook.__class__ is _WrappedHook:          # a script's (PyTorch passes strict=True here)
                    hook.hook(module, state_dict, prefix, local_metadata, True, missing, unexpected, errors)
                else:                                       # gradcli's own (weight_norm's old names)
                    hook(state_dict, prefix)
            skip = d["_non_persistent_buffers_set"]
            local = {k: v for k, v in d["_parameters"].items() if v is not None}
            local.update((k, v) for k, v in d["_buffers"].items() if v is not None and k not in skip)
            for name, param in local.items():
                key = prefix + name
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = state_dict[key]
                if value.__class__ is not Tensor:
                    errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                    continue
                if parameter.uninitialized_kind(param) is not None and parameter.uninitialized_kind(value) is None:
                    parameter.materialize(param, value._a.shape)        # a lazy module's _lazy_load_hook
                if value._a.shape != param._a.shape:
                    errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                    continue
                if assign:
                    _assign(module, name, param, value)
                    continue
                if param.is_meta and not value.is_meta:
                    STATE.warn("UserWarning", f"for {key}: copying from a non-meta parameter in the checkpoint to a "
                               "meta parameter in the current model, which is a no-op. (Did you mean to pass "
                               "`assign=True` to assign items in the state dictionary to their corresponding key in "
                               "the module instead of copying them in place?)")
                with autograd.no_grad():
                    param.copy_(value)
            extra = getattr(type(module), "set_extra_state", None) is not Module.set_extra_state
            if extra:
                if prefix + "_extra_state" in state_dict:
                    module.set_extra_state(state_dict[prefix + "_extra_state"])
                else:
                    missing.append(prefix + "_extra_state")
            for key in state_dict:
                if key.__class__ is str and key.startswith(prefix):
                    first = key[len(prefix):].split(".", 1)[0]
                    if first not in d["_modules"] and first not in local and not (extra and first == "_extra_state"):
                        unexpected.append(key)
            for name, child in d["_modules"].items():
                if child is not None:
                    inner = prefix + name + "."
                    pending[inner] = {k: v for k, v in state_dict.items() if k.__class__ is str and k.startswith(inner)}
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return IncompatibleKeys(missing, unexpected)

    # ---------------------------------------------------------------------------------- printing
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): {add_indent(repr(module), 2)}"
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


# the modules whose class PyTorch numbers 2 in a state dict's metadata (their running statistics' layout)
_VERSION_2 = frozenset(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
                        "InstanceNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
                        "LazyInstanceNorm2d", "LazyInstanceNorm3d", "SyncBatchNorm"))


def _version(module) -> int:
    """The `version` of a module's local metadata (nn.Module's _version, 2 for the batch and instance norms)."""
    return 2 if any(c.__name__ in _VERSION_2 and c.__module__.startswith("torch.nn.modules.")
                    for c in type(module).__mro__) else 1


def _tree(root):
    """(prefix, module, leaving) for each module under root, depth first: entering it (before its children, in
    their order) and leaving it (after them), as PyTorch's state_dict and load_state_dict recurse (a module held
    twice is visited twice)."""
    stack = [("", root, False)]
    while stack:
        prefix, module, leaving = stack.pop()
        yield prefix, module, leaving
        if leaving:
            continue
        stack.append((prefix, module, True))
        children = [(prefix + name + ".", child, False) for name, child in module.__dict__.get("_modules", {}).items()
                    if child is not None]
        stack.extend(reversed(children))


def _apply_own(module, fn):
    """fn applied to the module's own parameters, their gradients and its buffers. A parameter whose value stays
    on its device keeps its identity (its data is swapped); one moved to the other device (CPU, meta) is a new
    Parameter, as PyTorch makes one when the two tensors cannot share a type."""
    with autograd.no_grad():
        parameters = module._parameters
        for key, p in parameters.items():
            if p is None:
                continue
            value = fn(p)
            grad = None if p.grad is None else fn(p.grad)
            if value.is_meta == p.is_meta:
                p._set_data(value)
                if grad is not None:
                    p.grad._set_data(grad)
                continue
            moved = parameter.make(value, p.requires_grad)
            moved.grad = grad
            parameters[key] = moved
        buffers = module._buffers
        for key, b in buffers.items():
            if b is not None:
                buffers[key] = parameter.carry_uninitialized(b, fn(b))
    return module


def _assign(module, name: str, param, value) -> None:
    """load_state_dict(assign=True): the state dict's tensor itself becomes the parameter (a Parameter with the old
    one's requires_grad: the tensor marked, or a Parameter given set to it) or the buffer, as PyTorch assigns it:
    how a model built on the meta device gets its weights."""
    d = module.__dict__
    if name in d["_parameters"]:
        with autograd.no_grad():
            if parameter.is_parameter(value):
                value.requires_grad_(param.requires_grad)
            else:
                value = parameter.make(value, param.requires_grad)
        d["_parameters"][name] = value
    else:
        d["_buffers"][name] = value


def _tensors(module):
    """The parameters and buffers of the module and its descendants."""
    return itertools.chain(module.parameters(), module.buffers())


def _walked(module):
    """What _apply reads of the module and its descendants, in its order, changing nothing (a conversion to
    what the tensors already are): a module whose Module.__init__ never ran fails as in PyTorch."""
    for child in module.children():
        _walked(child)
    _table(module, "_parameters")
    _table(module, "_buffers")
    return module


def _table(module, name: str) -> dict:
    """One of a module's own tables (`_parameters`, `_modules`...). A module whose Module.__init__ never ran
    has none: PyTorch's AttributeError for the first one it reads."""
    try:
        return module.__dict__[name]
    except KeyError:
        raise _missing(module, name) from None


def _missing(module, name: str) -> AttributeError:
    return AttributeError(f"'{type(module).__name__}' object has no attribute '{name}'")


# How deep the calls of torch.nn modules compiled with Module.compile are, outside any compiled region: while above 0,
# a module whose forward the script wrote runs compiled (gradcli.engine.compiled), its own submodules inside its graph
_INNER = [0]


def _call_compiled(module, d: dict, args: tuple, kwargs: dict):
    from gradcli.engine import compiled
    depth, _INNER[0] = _INNER[0], 0
    try:
        return compiled.call(lambda *a, **k: _call_with_hooks(module, d, a, k), args, kwargs)
    finally:
        _INNER[0] = depth


def _forward_is_scripts(module) -> bool:
    """Whether the forward `module` runs was written in the script (not one of torch.nn's)."""
    for cls in type(module).__mro__:
        found = cls.__dict__.get("forward")
        if found is not None:
            return found.__class__ in classes.FUNCTION_TYPES
    return False


class _WrappedHook(ScriptObject, metaclass=ScriptType):
    """A load_state_dict pre-hook a script registered, as PyTorch's table holds it (beside gradcli's own hooks,
    which take the state dict and the prefix only)."""

    __module__ = "torch.nn.modules.module"
    __slots__ = ("hook",)

    def __init__(self, hook):
        self.hook = hook


def _add_hook(table: dict, hook, prepend: bool, extra: tuple = ()) -> RemovableHandle:
    key = next(_HOOK_IDS)
    if prepend:
        items = list(table.items())
        table.clear()
        table[key] = hook
        table.update(items)
    else:
        table[key] = hook
    return RemovableHandle(table, key, extra)


def _call_with_hooks(module, d: dict, args: tuple, kwargs: dict):
    """Module.__call__ when the module has hooks, in PyTorch's order: forward pre-hooks (those registered
    with_kwargs see and may replace the keyword arguments too), the full backward hooks' input side,
    forward, forward hooks, the backward hooks' output side. When forward or a hook raises, the
    forward hooks registered with always_call that have not run yet run then; an error of theirs is
    a warning, and the first error goes on."""
    ran = set()
    output = None
    try:
        full, non_full, backward_pre = backward_hooks.hook_lists(d)
        pre_kwargs = d.get("_forward_pre_hooks_with_kwargs") or ()
        for key, hook in list(d["_forward_pre_hooks"].items()):
            if key in pre_kwargs:
                result = hook(module, args, kwargs)
                if result is not None:
                    if result.__class__ is tuple and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
            else:
                result = hook(module, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        bw_hook = None
        if full or backward_pre:
            bw_hook = backward_hooks.BackwardHook(module, full, backward_pre)
            args = bw_hook.setup_input_hook(args)
        output = module.forward(*args, **kwargs)
        with_kwargs = d.get("_forward_hooks_with_kwargs") or ()
        always = d.get("_forward_hooks_always_called") or ()
        for key, hook in list(d["_forward_hooks"].items()):
            if key in always:
                ran.add(key)
            result = hook(module, args, kwargs, output) if key in with_kwargs else hook(module, args, output)
            if result is not None:
                output = result
        if bw_hook is not None:
            output = bw_hook.setup_output_hook(output)
        if non_full:
            backward_hooks.attach_non_full(module, non_full, args, output)
        return output
    except Exception:
        always = d.get("_forward_hooks_always_called")
        if always:
            with_kwargs = d.get("_forward_hooks_with_kwargs") or ()
            for key, hook in list(d["_forward_hooks"].items()):
                if key not in always or key in ran:
                    continue
                try:
                    result = hook(module, args, kwargs, output) if key in with_kwargs else hook(module, args, output)
                    if result is not None:
                        output = result
                except Exception as e:      # a Python warning from one line of PyTorch's: once per message
                    message = ("module forward hook with ``always_call=True`` raised an exception that was silenced "
                               f"as another error was raised in forward: {e}")
                    STATE.warn_python("UserWarning", message)
        raise


def remove_pre_hook(module, matches) -> bool:
    """Take off `module` the first forward pre-hook `matches(hook)` accepts, letting it undo itself first
    (`hook.remove(module)`: weight_norm, spectral_norm, a pruning method); False when none does."""
    hooks = module._forward_pre_hooks
    for key, hook in hooks.items():
        if matches(hook):
            hook.remove(module)
            del hooks[key]
            return True
    return False


def _attribute_at(module, target: str) -> tuple:
    """get_parameter's and get_buffer's walk: the submodule of a dotted path, the last name, its attribute."""
    path, _, name = target.rpartition(".")
    owner = module.get_submodule(path)
    if not hasattr(owner, name):
        raise AttributeError(f"{owner._get_name()} has no attribute `{name}`")
    return owner, name, getattr(owner, name)


def _forget(d: dict, name: str, kept: str) -> None:
    """Before `name` is registered as a parameter or module: it is nothing else any more (in the `kept` table it
    stays where it is, so that a parameter or module replaced keeps its place, as in PyTorch)."""
    d.pop(name, None)
    for table in ("_parameters", "_buffers", "_modules"):
        if table == kept:
            continue
        values = d.get(table)
        if values is not None:
            values.pop(name, None)
    skip = d.get("_non_persistent_buffers_set")
    if skip is not None:
        skip.discard(name)


def _has_attr(module, name) -> bool:
    try:
        getattr(module, name)
    except AttributeError:
        return False
    return True


def _check_name(module, name, kind: str, table: dict) -> None:
    if name.__class__ is not str:
        raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")
    if _has_attr(module, name) and name not in table:
        raise KeyError(f"attribute '{name}' already exists")


def _named_modules(module, prefix: str, remove_duplicate: bool, dotted=True):
    """The module and its descendants, depth first, with their names (prefixes ending in '.' when not
    `dotted`, as state dicts name their entries)."""
    memo = set()
    stack = [(prefix, module)]
    while stack:
        name, m = stack.pop()
        if remove_duplicate:
            if id(m) in memo:
                continue
            memo.add(id(m))
        yield (name if dotted else (name + "." if name else "")), m
        children = [(name + ("." if name else "") + key, child)
                    for key, child in m._modules.items() if child is not None]
        stack.extend(reversed(children))


def _members(module, table: str, recurse: bool) -> list:
    """The values of `table` (parameters or buffers) of the module and its descendants, each once, in
    named_parameters' order: the unnamed walk a training loop takes every step (zero_grad, an optimiser
    reading model.parameters()), without building the names."""
    seen, values = set(), []
    stack, visited = [module], set()
    while stack:
        m = stack.pop()
        if id(m) in visited:
            continue
        visited.add(id(m))
        for v in _table(m, table).values():
            if v is not None and id(v) not in seen:
                seen.add(id(v))
                values.append(v)
        if recurse:
            children = [c for c in _table(m, "_modules").values() if c is not None]
            children.reverse()
            stack += children
    return values


def _named_members(module, table: str, prefix: str, recurse: bool, remove_duplicate: bool):
    memo = set()
    walk = _named_modules(module, prefix, remove_duplicate) if recurse else [(prefix, module)]
    for name, m in walk:
        for key, value in _table(m, table).items():
            if value is None or (remove_duplicate and id(value) in memo):
                continue
            if remove_duplicate:
                memo.add(id(value))
            yield (name + "." + key if name else key), value


def _converted(t: Tensor, dtype, fmt) -> Tensor:
    """Module.to(dtype, memory_format=fmt) on one tensor: a 4-d or 5-d one laid out in `fmt` (PyTorch's rule; the
    rank is checked by the format), every floating one in `dtype` (None: its own)."""
    dtype = dtype if dtype is not None and t.is_floating_point() else t.dtype
    return t.to(dtype, memory_format=fmt) if t.dim() in (4, 5) else t.to(dtype)


def _to_dtype(args, kwargs):
    """The dtype, the device and the memory format of Module.to(device, dtype, non_blocking, memory_format=) /
    to(dtype) / to(tensor): each None when not given."""
    if any(a.__class__ is dtypes.MemoryFormat for a in args) or not isinstance(
            kwargs.get("memory_format", dtypes.preserve_format), (dtypes.MemoryFormat, type(None))):
        from gradcli.engine import signatures
        raise TypeError(signatures.check("Tensor.to", args, kwargs))
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    fmt = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got an unexpected keyword "
                        f"argument '{next(iter(kwargs))}'")
    for arg in args:
        if arg.__class__ is dtypes.DType:
            dtype = arg
        elif arg.__class__ is Tensor:
            dtype = arg.dtype
            device = arg.device
        elif arg.__class__ is not bool:
            device = arg
    if device is not None:
        check_device(device)
    return dtype, device, fmt



# ---------------------------------------------------------------------------------- torch.nn.utils.skip_init

def skip_init(module_cls, *args, **kwargs):
    """torch.nn.utils.skip_init: the module built on the meta device (its initialisers draw nothing there), then
    given empty memory on the device asked for (to_empty: zeros in gradcli), as PyTorch does it."""
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        if not isinstance(module_cls, type):
            raise TypeError("issubclass() arg 1 must be a class")
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if not _takes_device(module_cls):
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    check_device(device)
    return module_cls(*args, **kwargs, device="meta").to_empty(device=device)


def _takes_device(module_cls) -> bool:
    """Whether the class's constructor has a `device` parameter (a script's __init__ read from its parameter list)."""
    init = module_cls.__init__
    if hasattr(init, "keyword_names"):
        return "device" in init.keyword_names()
    import inspect
    return "device" in inspect.signature(module_cls).parameters


# ---------------------------------------------------------------------------------- torch.func.functional_call

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """torch.func.functional_call: call `module` with some of its parameters and buffers replaced, by
    dotted name, for the call only (the replacements need not be Parameters: gradients flow to them).
    With tie_weights, every name of a tensor the module holds under several names takes the replacement
    given for one of them; a name the module lacks is set as a plain attribute for the call."""
    if not isinstance(module, Module):
        raise AttributeError(f"'{typename(module)}' object has no attribute 'named_parameters'")
    given = _merged_dicts(parameter_and_buffer_dicts)
    if strict:
        _check_reparametrized(module, given)
    if tie_weights:
        given = _tied(module, given)
    if args is None:
        args = ()
    elif args.__class__ is not tuple:
        args = (args,)
    swapped = []
    try:
        for name, value in given.items():
            swapped.append(_swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, table, leaf, old in reversed(swapped):
            if table is None:
                if old is _ABSENT:
                    object.__delattr__(owner, leaf)
                else:
                    object.__setattr__(owner, leaf, old)
            else:
                owner.__dict__[table][leaf] = old


_ABSENT = object()


def stack_module_state(models):
    """torch.func.stack_module_state: the parameters and the buffers of models of one class (and one
    training mode), each name's tensors stacked along a new first dim; a stack of parameters that require
    grad is a new leaf that requires grad (a detached copy), as vmap over functional_call wants it."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({bool(m.training) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    return tuple(_stacked_members([dict(getattr(m, kind)()) for m in models])
                 for kind in ("named_parameters", "named_buffers"))


def _stacked_members(tables: list) -> dict:
    from gradcli.engine import ops
    stacked = {}
    for name in tables[0]:
        tensors = [table[name] for table in tables]
        wanted = {t.requires_grad for t in tensors}
        if len(wanted) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        result = ops.stack(tensors)
        stacked[name] = result.detach().requires_grad_() if wanted == {True} else result
    return stacked


def _merged_dicts(dicts) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (list, tuple)) or not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{'<class ' + repr(typename(dicts)) + '>'}")
    merged, repeated = {}, []
    for d in dicts:
        for key, value in d.items():
            if key in merged and key not in repeated:
                repeated.append(key)
            merged[key] = value
    if repeated:
        raise ValueError(f"{repeated!r} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return merged


def _check_reparametrized(module, given: dict) -> None:
    names = [n for n, _ in module.named_parameters()] + [n for n, _ in module.named_buffers()]
    unexpected = [k for k in given if k not in names]
    missing = sorted(n for n in names if n not in given)
    lines = []
    if unexpected:
        lines.append("\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
    if missing:
        lines.append("\tMissing key(s): " + ", ".join(repr(k) for k in missing) + ".")
    if lines:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n" + "\n".join(lines))


def _tied(module, given: dict) -> dict:
    """Every name of a tensor held under several names gets the value given for any of them."""
    names_of = {}
    for table in ("_parameters", "_buffers"):
        for name, value in _named_members(module, table, "", True, False):
            if value is not None:
                names_of.setdefault(id(value), []).append(name)
    out = dict(given)
    for names in names_of.values():
        chosen = [n for n in names if n in given]
        if chosen:
            for n in names:
                out.setdefault(n, given[chosen[0]])
    return out


def _swap(module, name: str, value):
    prefix, _, leaf = name.rpartition(".")
    owner = module.get_submodule(prefix)
    d = owner.__dict__
    for table in ("_parameters", "_buffers"):
        values = d.get(table)
        if values is not None and leaf in values:
            old = values[leaf]
            values[leaf] = value
            return owner, table, leaf, old
    if leaf in _REGISTRIES:
        raise AttributeError(f"cannot reparametrize '{name}': it is the module's own registry")
    if is_dunder(leaf):
        raise AttributeError(f"'{type(owner).__name__}' object attribute '{leaf}' is outside gradcli's language")
    old = d.get(leaf, _ABSENT)
    object.__setattr__(owner, leaf, value)  # a plain attribute for the call, never registered
    return owner, None, leaf, old


_REGISTRIES = frozenset(("_parameters", "_buffers", "_modules", "_non_persistent_buffers_set", "_forward_hooks",
                         "_forward_pre_hooks"))


# vars(module) and module.__dict__ are its own dict, whose keys are PyTorch's (gradcli.language.classes); a script
# may read its tables there but not replace or delete them
classes.DICT_LIBRARY_ROOTS.add(Module)
classes.DICT_KEEPS[Module] = frozenset(
    ("_parameters", "_buffers", "_non_persistent_buffers_set", "_backward_pre_hooks", "_backward_hooks",
     "_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks",
     "_forward_pre_hooks_with_kwargs", "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
     "_load_state_dict_post_hooks", "_modules"))
