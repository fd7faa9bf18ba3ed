"""torch.nn.Module as scripts subclass it: registration, walks, state dicts, hooks, errors in PyTorch's
words, speed of the call path, and escape attempts through the module machinery (docs/security.md).
What PyTorch prints is pinned by the goldens tests/conformance/nn_*.grad; these pin the rest."""

from __future__ import annotations

import pytest

from conftest import error_line, gradcli_output, located_error

NN = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"


def out(body: str) -> str:
    return gradcli_output(NN + body + "\n")


def test_a_script_module_registers_what_it_assigns():
    text = out("""
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.w = nn.Parameter(torch.ones(2))
        self.body = nn.Linear(2, 2)
        self.register_buffer("count", torch.zeros(1))
    def forward(self, x):
        return self.body(x) * self.w * self.scale
net = Net()
print([n for n, _ in net.named_parameters()], [n for n, _ in net.named_buffers()])
print(list(net._modules), list(net._parameters), net.scale, net.training)
net.body = None
print([n for n, _ in net.named_parameters()], net.body)
del net.w
print([n for n, _ in net.named_parameters()], hasattr(net, 'w'))""")
    assert text == ("['w', 'body.weight', 'body.bias'] ['count']\n['body'] ['w'] 2.0 True\n"
                    "['w'] None\n[] False\n")


def test_shared_modules_and_parameters_are_listed_once():
    text = out("""
lin = nn.Linear(2, 2)
net = nn.Sequential(lin, nn.ReLU(), lin)
print(len(list(net.parameters())), [n for n, _ in net.named_modules()])
print(list(net.state_dict()))""")
    assert text == "2 ['', '0', '1']\n['0.weight', '0.bias', '2.weight', '2.bias']\n"


def test_subclassing_a_layer_and_calling_super():
    text = out("""
class Scaled(nn.Linear):
    def __init__(self, n):
        super().__init__(n, n, bias=False)
        self.factor = 3
    def forward(self, x):
        return super().forward(x) * self.factor
    def extra_repr(self):
        return super().extra_repr() + f", factor={self.factor}"
m = Scaled(2)
print(m)
print(m(torch.ones(1, 2)).shape, isinstance(m, nn.Linear))""")
    assert text == ("Scaled(in_features=2, out_features=2, bias=False, factor=3)\n"
                    "torch.Size([1, 2]) True\n")


def test_container_operations():
    text = out("""
s = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
del s[0]
s.insert(0, nn.ELU())
print(s, s.pop(1), len(s))
ml = nn.ModuleList([nn.ReLU()])
ml += [nn.Tanh()]
ml.append(nn.ReLU())
print([type(m).__name__ for m in ml], len(ml[1:]), type(ml[-1]).__name__)
md = nn.ModuleDict([("a", nn.ReLU())])
md["b"] = nn.Tanh()
print("a" in md, list(md), [type(v).__name__ for v in md.values()])""")
    assert text == ("Sequential(\n  (0): ELU(alpha=1.0)\n  (1): Sigmoid()\n) Tanh() 2\n"
                    "['ReLU', 'Tanh', 'ReLU'] 2 ReLU\nTrue ['a', 'b'] ['ReLU', 'Tanh']\n")


@pytest.mark.parametrize("body, message", [
    ("class N(nn.Module):\n    def __init__(self):\n        self.l = nn.Linear(1, 1)\nN()",
     "AttributeError: cannot assign module before Module.__init__() call"),
    ("nn.Linear(1, 1).bias = 3", "TypeError: cannot assign 'int' as parameter 'bias' (torch.nn.Parameter or None expected)"),
    ("m = nn.Sequential(nn.ReLU())\nm[0] = 5", "TypeError: cannot assign 'int' as child module '0' (torch.nn.Module or None expected)"),
    ("nn.Sequential(nn.ReLU(), 3)", "TypeError: int is not a Module subclass"),
    ("nn.Linear(2, 2).add_module('a.b', nn.ReLU())", "KeyError: 'module name can\\'t contain \".\", got: a.b'"),
    ("m = nn.Linear(1, 1)\nm.register_parameter('p', torch.ones(1))",
     "TypeError: cannot assign 'torch.FloatTensor' object to parameter 'p' (torch.nn.Parameter or None required)"),
    ("nn.Linear(1, 1).to(torch.int64)",
     "TypeError: nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=torch.int64"),
    ("nn.Linear(1, 1).to(torch.complex64)", "NotImplementedError: gradcli does not implement nn.Module.to with a "
                                            "complex dtype"),
    ("nn.Linear(1, 1).to('cuda')", "AssertionError: Torch not compiled with CUDA enabled"),
    ("nn.Parameter(torch.tensor([1, 2]))", "RuntimeError: Only Tensors of floating point and complex dtype can require gradients"),
    ("nn.Linear(2, 2)(torch.ones(3))", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x3 and 2x2)"),
    ("nn.ModuleList([nn.ReLU()])(1)", "NotImplementedError: Module [ModuleList] is missing the required \"forward\" function"),
    ("nn.Embedding(3, 2)(torch.tensor([3]))", "IndexError: index out of range in self"),
])
def test_errors_in_pytorchs_words(body, message):
    assert error_line(NN + body + "\n") == message


def test_errors_point_at_the_script_line():
    assert located_error(NN + "net = nn.Linear(2, 2)\nnet.missing") == "6:1: AttributeError: 'Linear' object has no attribute 'missing'"


# Escape attempts through the module machinery: Python's internals stay out of reach.
_OUTSIDE = "AttributeError: {} attribute '{}' is outside gradcli's language"


@pytest.mark.parametrize("body, message", [
    ("net.__weakref__", _OUTSIDE.format("'Linear' object", "__weakref__")),
    ("getattr(net, '__weakref__')", _OUTSIDE.format("'Linear' object", "__weakref__")),
    ("net.__reduce__", _OUTSIDE.format("'Linear' object", "__reduce__")),
    ("type(net).__mro__", _OUTSIDE.format("type object 'Linear'", "__mro__")),
    ("nn.Module.__subclasses__", _OUTSIDE.format("type object 'Module'", "__subclasses__")),
    ("net.__setattr__('__class__', int)", _OUTSIDE.format("'Linear' object", "__class__")),
    ("setattr(net, '__class__', int)", _OUTSIDE.format("'Linear' object", "__class__")),
    ("net.parameters.__func__", _OUTSIDE.format("'method' object", "__func__")),
    ("net.parameters().gi_frame", _OUTSIDE.format("'generator' object", "gi_frame")),
    ("nn.Module.__init__.__globals__", _OUTSIDE.format("'function' object", "__globals__")),
    ("nn.Linear.reset_parameters.__code__", _OUTSIDE.format("'function' object", "__code__")),
    ("net._parameters.__reduce__", _OUTSIDE.format("'dict' object", "__reduce__")),
    ("net.weight.__reduce__", _OUTSIDE.format("'Tensor' object", "__reduce__")),
    ("class Evil(nn.Module):\n    def __getattribute__(self, n):\n        pass",
     "SyntaxError: defining __getattribute__ in a class is not part of gradcli's language"),
])
def test_module_internals_are_out_of_reach(body, message):
    assert error_line(NN + "net = nn.Linear(2, 2)\n" + body + "\n") == message


def test_huge_layers_hit_the_memory_budget():
    assert error_line(NN + "nn.Linear(10**6, 10**6)\n").startswith("RuntimeError: [enforce fail at alloc_cpu.cpp")
    assert error_line(NN + "nn.Embedding(10**9, 10**3)\n").startswith("RuntimeError: [enforce fail at alloc_cpu.cpp")


def test_deep_nesting_is_a_clean_recursion_error():
    source = NN + "m = nn.Sequential()\nfor i in range(100000):\n    m = nn.Sequential(m)\nprint(m)\n"
    assert error_line(source).startswith("RecursionError: maximum recursion depth exceeded")


def test_the_repl_completes_registered_parameters_and_submodules():
    from test_repl import completions, new_shell
    shell = new_shell()
    shell.execute("import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n"
                  "        super().__init__()\n        self.fc1 = nn.Linear(2, 2)\n        self.scale = 3\n"
                  "        self.register_buffer('steps', torch.zeros(1))\nnet = Net()")
    assert [t for t, _ in completions("net.fc", shell)] == ["fc1"]
    assert [t for t, _ in completions("net.st", shell)] == ["state_dict", "steps"]
    assert [t for t, _ in completions("net.fc1.we", shell)] == ["weight"]


def test_one_hot_meets_the_memory_budget():
    from gradcli.engine import budget
    previous = budget.max_memory()
    budget.set_max_memory(1 << 30)
    try:
        assert error_line(NN + "F.one_hot(torch.tensor([10**9]))\n").startswith(
            "RuntimeError: [enforce fail at alloc_cpu.cpp")
    finally:
        budget.set_max_memory(previous)


def test_linear_reads_its_parameters_where_attribute_lookup_would():
    # nn.Linear's forward takes its weight and bias from _parameters without the attribute lookup only while
    # that is where the lookup would find them; these outputs are PyTorch 2.13's
    text = out("""
lin = nn.Linear(3, 2)
x = torch.ones(4, 3)
print(lin(x).sum().item() == (x @ lin.weight.t() + lin.bias).sum().item())
class Doubled(nn.Linear):
    def forward(self, input):
        return super().forward(input) * 2
d = Doubled(3, 2)
d.load_state_dict(lin.state_dict())
print(d(x).sum().item() == 2 * lin(x).sum().item())
print(torch.func.functional_call(lin, {"weight": torch.zeros(2, 3), "bias": torch.ones(2)}, (x,)).sum().item())
del lin.weight
lin.weight = torch.ones(2, 3)
lin.bias = None
print(lin(x).sum().item(), [n for n, _ in lin.named_parameters()])""")
    assert text == "True\nTrue\n8.0\n24.0 []\n"


@pytest.mark.parametrize("name", ["share_memory", "ipu",
                                  "set_submodule"])
def test_pytorchs_module_api_gradcli_lacks_is_named(name):
    """A name PyTorch's nn.Module has and gradcli does not: an honest NotImplementedError, not an
    AttributeError that reads like PyTorch's (the names come from gradcli/data/torch_api.z)."""
    assert located_error(f"import torch\ntorch.nn.Linear(1, 1).{name}") == \
        f"2:1: NotImplementedError: gradcli does not implement torch.nn.Module.{name}"


def test_a_name_pytorch_lacks_stays_an_attribute_error():
    assert located_error("import torch\ntorch.nn.Linear(1, 1).weights") == \
        "2:1: AttributeError: 'Linear' object has no attribute 'weights'"


@pytest.mark.parametrize("source, path", [
    ("torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1).register_step_pre_hook",
     "torch.optim.Optimizer.register_step_pre_hook"),
    ("torch.utils.data.DataLoader([1]).check_worker_number_rationality",
     "torch.utils.data.DataLoader.check_worker_number_rationality"),
])
def test_the_other_library_classes_name_what_they_lack(source, path):
    assert located_error(f"import torch\n{source}") == f"2:1: NotImplementedError: gradcli does not implement {path}"
