"""nn.Sequential, nn.ModuleList and nn.ModuleDict: modules that hold modules, named by position or key; and
nn.ParameterList and nn.ParameterDict, modules that hold parameters so."""

from __future__ import annotations

import operator

from gradcli.engine import parameter
from gradcli.engine.tensor import Tensor
from gradcli.language.nn.module import Module, add_indent
from gradcli.language.pycollections import OrderedDict


def _index(container, idx) -> int:
    """idx as a position in `container`, with PyTorch's IndexError past either end."""
    idx = operator.index(idx)
    size = len(container)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


class Sequential(Module):
    """nn.Sequential: calls its modules in order, each on the previous one's output."""

    __module__ = "torch.nn.modules.container"

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        items = list(self._modules.items())
        if idx.__class__ is slice:
            return type(self)(OrderedDict(items[idx]))
        return items[_index(self, idx)][1]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(self, idx)]
        return setattr(self, key, module)

    def __delitem__(self, idx):
        modules = self._modules
        keys = list(modules)
        for key in (keys[idx] if idx.__class__ is slice else [keys[_index(self, idx)]]):
            del modules[key]
        values = list(modules.values())        # renumbered, as PyTorch does
        modules.clear()
        modules.update((str(i), m) for i, m in enumerate(values))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        modules = self._modules
        for i in range(n, index, -1):
            modules[str(i)] = modules[str(i - 1)]
        modules[str(index)] = module
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v


class ModuleList(Module):
    """nn.ModuleList: a list of modules, registered under their positions."""

    __module__ = "torch.nn.modules.container"

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        modules = self._modules
        if idx.__class__ is slice:
            return type(self)(list(modules.values())[idx])
        return modules[str(_index(self, idx))]

    def __setitem__(self, idx, module):
        return setattr(self, str(_index(self, idx)), module)

    def __delitem__(self, idx):
        modules = self._modules
        if idx.__class__ is slice:
            for k in range(len(modules))[idx]:
                del modules[str(k)]
        else:
            del modules[str(_index(self, idx))]
        values = list(modules.values())
        modules.clear()
        modules.update((str(i), m) for i, m in enumerate(values))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(list(self) + list(other)):
            combined.add_module(str(i), module)
        return combined

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def insert(self, index, module):
        modules = self._modules
        for i in range(len(modules), index, -1):
            modules[str(i)] = modules[str(i - 1)]
        modules[str(index)] = module

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def __repr__(self):
        """Runs of equal modules print once, with their count (`(0-2): 3 x Linear(...)`)."""
        texts = [repr(m) for m in self]
        if not texts:
            return self._get_name() + "()"
        runs = []                    # [first, last, text]
        for i, text in enumerate(texts):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = []
        for first, last, text in runs:
            line = f"({first}): {text}" if first == last else f"({first}-{last}): {last - first + 1} x {text}"
            lines.append(add_indent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """nn.ModuleDict: a dict of modules, registered under their keys."""

    __module__ = "torch.nn.modules.container"

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if isinstance(modules, dict) or isinstance(modules, ModuleDict):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if len(m) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} has length {len(m)}; 2 is required")
                self[m[0]] = m[1]


def _parameter_lines(items, legacy: bool) -> str:
    """ParameterList's and ParameterDict's extra_repr: one line per entry, a tensor by its dtype (ParameterDict:
    its legacy type name) and size."""
    lines = []
    for key, p in items:
        if p.__class__ is Tensor:
            kind = "Parameter" if parameter.is_parameter(p) else "Tensor"
            size = "x".join(str(n) for n in p.shape)
            lines.append(f"  ({key}): {kind} containing: [{p.type() if legacy else p.dtype} of size {size}]")
        else:
            lines.append(f"  ({key}): Object of type: {type(p).__name__}")
    return "\n".join(lines)


def _as_parameter(value):
    """A plain tensor put into a ParameterList or ParameterDict becomes a Parameter (nn.Parameter(value))."""
    if value.__class__ is Tensor and not parameter.is_parameter(value):
        return parameter.make(value)
    return value


class ParameterList(Module):
    """nn.ParameterList: parameters registered under their positions ('0', '1', ...)."""

    __module__ = "torch.nn.modules.container"

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if idx.__class__ is slice:
            return type(self)(list(self)[idx])
        return getattr(self, str(_index(self, idx)))

    def __setitem__(self, idx, param):
        setattr(self, str(_index(self, idx)), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        index = len(self)
        self._size += 1
        self[index] = value
        return self

    def extend(self, values):
        if values.__class__ is Tensor or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return _parameter_lines(enumerate(self), False)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """nn.ParameterDict: parameters registered under string keys, in insertion order."""

    __module__ = "torch.nn.modules.container"

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key):
        if key.__class__ is not str:
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, self._key_to_attr(key), _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k, _ = self._keys.popitem()
        self._keys[k] = None        # __delitem__ takes it out again
        value = self[k]
        del self[k]
        return k, value

    def get(self, key, default=None):
        return self[key] if key in self else default

    def keys(self):
        return self._keys.keys()

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def update(self, parameters):
        if not hasattr(parameters, "__iter__"):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, dict):          # a plain mapping: PyTorch sorts its keys
            for key, value in sorted(parameters.items()):
                self[key] = value
        else:
            for j, p in enumerate(parameters):
                if not hasattr(p, "__iter__"):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is "
                                    + type(p).__name__)
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(p)}; 2 is "
                                     "required")
                self[p[0]] = p[1]

    def extra_repr(self):
        return _parameter_lines(self.items(), True)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")
