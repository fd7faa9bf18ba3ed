"""Saved-tensor attributes of grad_fn nodes (`_saved_self`, `_saved_result`, `_saved_dim`, ...), checked
against PyTorch 2.13: the names per node type come from the oracle (gradcli/data/saved_attrs.json), the
values from tests/saved_tensors_expected.json (both written by tools/saved_attrs.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import ROOT, error_line, gradcli_output, run_script
from gradcli.engine import autograd, ops
from gradcli.engine.tensor import Tensor
from gradcli.language import access

PRELUDE = "import torch\nimport torch.nn.functional as F\n"
EXPECTED = json.loads((ROOT / "tests" / "saved_tensors_expected.json").read_text())
TABLE = json.loads((ROOT / "gradcli" / "data" / "saved_attrs.json").read_text())["nodes"]


@pytest.mark.parametrize("probe", list(EXPECTED))
def test_saved_values_are_pytorchs(probe):
    """Every `_saved_*` attribute PyTorch has on the probe's node prints as PyTorch prints it, or (where
    gradcli does not keep the value in a form PyTorch's can be computed from) is an honest
    NotImplementedError naming the attribute."""
    for attr, text in EXPECTED[probe].items():
        source = PRELUDE + probe.replace("; ", "\n") + f"\nprint(y.grad_fn.{attr})\n"
        result = run_script(source)
        if result.error is not None:
            assert result.error.kind == "NotImplementedError", (attr, result.error.message)
            assert attr in result.error.message
            continue
        assert result.out == text + "\n", (attr, result.out)


def test_most_probe_values_are_served():
    """The honest refusals stay few: gradcli computes PyTorch's value for most attributes probed."""
    served = total = 0
    for probe, attrs in EXPECTED.items():
        for attr in attrs:
            total += 1
            served += run_script(PRELUDE + probe.replace("; ", "\n") + f"\ny.grad_fn.{attr}\n").error is None
    assert served >= 0.8 * total, (served, total)


def test_the_table_names_pytorchs_attributes():
    assert TABLE["PowBackward0"] == {"_raw_saved_self": "SavedTensor", "_saved_exponent": "int",
                                     "_saved_self": "Tensor"}
    assert set(TABLE["ExpBackward0"]) == {"_raw_saved_result", "_saved_result"}
    assert TABLE["SumBackward0"] == {"_saved_self_sym_sizes": "tuple[int]"}
    assert TABLE["AddBackward0"] == {"_saved_alpha": "int"}


def test_identity_and_result():
    """As PyTorch: a saved input is the input itself; the saved result a new tensor on the node."""
    out = gradcli_output(PRELUDE + "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x.pow(2)\n"
                         "print(y.grad_fn._saved_self is x)\nz = x.exp()\nr = z.grad_fn._saved_result\n"
                         "print(r is z, r.grad_fn is z.grad_fn, r)\n")
    assert out == "True\nFalse True tensor([2.7183, 7.3891], grad_fn=<ExpBackward0>)\n"


def test_freed_graph_gives_pytorchs_error():
    source = PRELUDE + ("x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x.exp()\ny.sum().backward()\n"
                        "y.grad_fn._saved_result\n")
    assert error_line(source) == f"RuntimeError: {autograd.FREED_MESSAGE}"
    # retain_graph keeps them
    source = PRELUDE + ("x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x.exp()\n"
                        "y.sum().backward(retain_graph=True)\nprint(y.grad_fn._saved_result)\n")
    assert gradcli_output(source) == "tensor([2.7183, 7.3891], grad_fn=<ExpBackward0>)\n"


def test_numbers_after_free():
    """PyTorch keeps a node's numbers after a backward: a node that saved no tensor keeps them in gradcli
    too; one that saved tensors frees all it saved, and says so for its numbers."""
    source = PRELUDE + ("x = torch.ones(2, 2, requires_grad=True)\ny = x.sum(0)\ny.sum().backward()\n"
                        "print(y.grad_fn._saved_dim, y.grad_fn._saved_self_sym_sizes)\n")
    assert gradcli_output(source) == "(0,) (2, 2)\n"
    source = PRELUDE + ("x = torch.ones(2, 2, requires_grad=True)\ny = x.pow(2)\ny.sum().backward()\n"
                        "y.grad_fn._saved_exponent\n")
    assert error_line(source) == ("NotImplementedError: gradcli does not keep PowBackward0._saved_exponent after "
                                  "a backward pass freed the graph")


@pytest.mark.parametrize("attr, message", [
    ("_saved_other", "AttributeError: 'PowBackward0' object has no attribute '_saved_other'"),
    ("_saved_result", "AttributeError: 'PowBackward0' object has no attribute '_saved_result'"),
    ("_next_functions", "AttributeError: 'PowBackward0' object has no attribute '_next_functions'"),
    ("__reduce__", "AttributeError: 'PowBackward0' object attribute '__reduce__' is outside gradcli's language"),
])
def test_names_are_allowed_per_node_type(attr, message):
    source = PRELUDE + f"x = torch.ones(2, requires_grad=True)\ny = x.pow(2)\ny.grad_fn.{attr}\n"
    assert error_line(source) == message


def test_hasattr_getattr_and_completion():
    out = gradcli_output(PRELUDE + "x = torch.ones(2, requires_grad=True)\ny = x.pow(3)\n"
                         "print(hasattr(y.grad_fn, '_saved_self'), hasattr(y.grad_fn, '_saved_other'))\n"
                         "print(getattr(y.grad_fn, '_saved_exponent'))\n")
    assert out == "True False\n3\n"
    t = Tensor(np.ones(2))
    t.requires_grad = True
    node = ops.power(t, 2).grad_fn      # the REPL completes the names PyTorch has on the node
    assert {"_saved_self", "_saved_exponent", "_raw_saved_self"} <= access.attribute_names(node)


def test_raw_saved_tensor_and_its_hooks():
    """`_raw_saved_*` and SavedTensor.register_hooks, with PyTorch 2.13's output (run through the oracle)."""
    source = PRELUDE + """log = []
def pack(t):
    log.append("pack")
    return t * 1
def unpack(t):
    log.append("unpack")
    return t
a = torch.ones(2, requires_grad=True)
y = a.exp()
r = y.grad_fn._raw_saved_result
print(type(r))
print(r.register_hooks(pack, unpack), log)
print(y.grad_fn._saved_result, log)
try: r.register_hooks(pack, unpack)
except Exception as e: print(type(e).__name__, e)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    z = a.exp()
try: z.grad_fn._raw_saved_result.register_hooks(pack, unpack)
except Exception as e: print(type(e).__name__, e)
w = a * 2
try: w.grad_fn._raw_saved_self.register_hooks(pack, unpack)
except Exception as e: print(type(e).__name__, e)
y.sum().backward()
print(log)
y.grad_fn._raw_saved_result
try: r.register_hooks(pack, unpack)
except Exception as e: print(type(e).__name__, e)
"""
    hooks_set = ("RuntimeError Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                 "only one pair of hooks is allowed at a time.\n")
    assert gradcli_output(source) == (
        "<class 'torch._C._autograd.SavedTensor'>\n"
        "None ['pack']\n"
        "tensor([2.7183, 2.7183], grad_fn=<ExpBackward0>) ['pack', 'unpack']\n"
        + hooks_set + hooks_set +
        "RuntimeError Calling register_hooks on a saved tensor with value None is forbidden\n"
        "['pack', 'unpack', 'pack', 'unpack']\n"
        "RuntimeError Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
        "values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True "
        "if you need to backward through the graph a second time or if you need to access saved variables "
        "after calling backward.\n")


def test_raw_saved_register_hooks_takes_callables():
    source = PRELUDE + "a = torch.ones(2, requires_grad=True)\nr = a.exp().grad_fn._raw_saved_result\nr.register_hooks(1, 2)\n"
    assert error_line(source).startswith(
        "TypeError: register_hooks(): incompatible function arguments. The following argument types are "
        "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
        "arg1: collections.abc.Callable) -> None\n\nInvoked with: <torch._C._autograd.SavedTensor object at 0x")


def test_hooks_order_nesting_and_grad_mode():
    """Inner hooks win; pack runs without grad; unpack runs with grad only under create_graph (as the oracle)."""
    source = PRELUDE + """log = []
def outer_pack(t):
    log.append(("pack", torch.is_grad_enabled()))
    u = t.exp()
    log.append(("inner grad_fn", u.grad_fn))
    return t
def outer_unpack(t):
    log.append(("unpack", torch.is_grad_enabled()))
    return t
def p2(t):
    log.append("p2")
    return t
def u2(t):
    log.append("u2")
    return t
a = torch.ones(2, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(outer_pack, outer_unpack):
    with torch.autograd.graph.saved_tensors_hooks(p2, u2):
        y = a.sin()
    z = a.cos()
print(log); log.clear()
y.sum().backward()
z.sum().backward()
print(log); log.clear()
with torch.autograd.graph.saved_tensors_hooks(outer_pack, outer_unpack):
    y = a.sin()
g, = torch.autograd.grad(y.sum(), a, create_graph=True)
print(log, g)
"""
    assert gradcli_output(source) == (
        "['p2', ('pack', False), ('inner grad_fn', None)]\n"
        "['u2', ('unpack', False)]\n"
        "[('pack', False), ('inner grad_fn', None), ('unpack', True)] tensor([0.5403, 0.5403], "
        "grad_fn=<MulBackward0>)\n")


def test_unpack_must_give_a_tensor_and_disable_gives_its_message():
    source = PRELUDE + """a = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: "packed", lambda p: p):
    y = a.exp()
try:
    y.sum().backward()
except TypeError as e:
    print(e)
with torch.autograd.graph.disable_saved_tensors_hooks("saved tensor hooks are off in this block"):
    try:
        with torch.autograd.graph.save_on_cpu():
            pass
    except RuntimeError as e:
        print(e)
with torch.autograd.graph.save_on_cpu():
    y = (a * a).exp().sum()
y.backward()
print(a.grad)
h = torch.autograd.graph.saved_tensors_hooks(print, print)
print(h.pack_hook, h.unpack_hook)
print(type(h).__name__)
"""
    assert gradcli_output(source) == (
        "Output of saved tensor unpack_hook expected to be a Tensor but got result of type str\n"
        "saved tensor hooks are off in this block\n"
        "tensor([  5.4366, 218.3926])\n"
        "<built-in function print> <built-in function print>\n"
        "saved_tensors_hooks\n")


def test_hooks_end_with_the_block_even_on_an_error():
    source = PRELUDE + """log = []
def pack(t):
    log.append("pack")
    return t
a = torch.ones(2, requires_grad=True)
try:
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        a.exp()
        raise ValueError("stop")
except ValueError:
    pass
a.exp()
print(log)
"""
    assert gradcli_output(source) == "['pack']\n"


def test_custom_function_saves_through_the_hooks():
    """ctx.save_for_backward packs each tensor once the forward returns (an output with its grad_fn),
    saved_tensors unpacks them, as in the oracle."""
    source = PRELUDE + """log = []
def pack(t):
    log.append(("pack", t.shape, t.grad_fn is not None))
    return t
def unpack(t):
    log.append(("unpack", t.shape))
    return t
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        y = x ** 3 * w
        ctx.save_for_backward(x, y, w)
        return y
    @staticmethod
    def backward(ctx, g):
        x, y, w = ctx.saved_tensors
        log.append("backward")
        return g * 3 * x ** 2 * w, g * x ** 3
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = Cube.apply(x, w)
print(log); log.clear()
y.sum().backward()
print(log, x.grad, w.grad)
"""
    assert gradcli_output(source) == (
        "[('pack', torch.Size([2]), False), ('pack', torch.Size([2]), True), ('pack', torch.Size([1]), False)]\n"
        "[('unpack', torch.Size([2])), ('unpack', torch.Size([2])), ('unpack', torch.Size([1])), 'backward'] "
        "tensor([ 9., 36.]) tensor([9.])\n")


def test_no_hooks_leave_the_saved_tuple_plain():
    """The normal path is untouched: without hooks a node keeps its plain tuple (no unpacking step)."""
    t = Tensor(np.ones(2))
    t.requires_grad = True
    assert ops.exp(t).grad_fn.saved.__class__ is tuple


def test_every_rows_node_is_in_the_table_or_known_absent():
    """The table covers the node types gradcli's rows make (those the corpus reaches in PyTorch)."""
    from gradcli.engine import factories, ops
    from gradcli.engine.recording import Op
    nodes = {v.node for m in ops.GROUPS + (factories,) for v in vars(m).values() if v.__class__ is Op}
    assert len(nodes & set(TABLE)) >= 0.8 * len(nodes)


@pytest.mark.parametrize("tail, message", [
    ("y.grad_fn.saved", "AttributeError: 'PowBackward0' object attribute 'saved' is outside gradcli's language"),
    ("y.grad_fn.op", "AttributeError: 'PowBackward0' object attribute 'op' is outside gradcli's language"),
    ("y.grad_fn._saved_self._a", "AttributeError: 'Tensor' object has no attribute '_a'"),
    ("x.sum(0).grad_fn._saved_self_sym_sizes.__reduce__.__bases__",
     "AttributeError: 'tuple' object attribute '__reduce__' is outside gradcli's language"),
    ("getattr(y.grad_fn, '_saved_' + 'self').__reduce_ex__",
     "AttributeError: 'Tensor' object attribute '__reduce_ex__' is outside gradcli's language"),
    ("getattr(y.grad_fn, '_saved_' + 'self').__dict__.update(__array_interface__=1)",
     "AttributeError: setting '__array_interface__' through an object's __dict__ is outside gradcli's language"),
    ("x.exp().grad_fn._saved_result.grad_fn.saved",
     "AttributeError: 'ExpBackward0' object attribute 'saved' is outside gradcli's language"),
])
def test_saved_values_reach_nothing_internal(tail, message):
    """Sandbox: a saved value is a script value like any other; the node's internals stay out of reach."""
    source = PRELUDE + f"x = torch.ones(2, 2, requires_grad=True)\ny = x.pow(2)\n{tail}\n"
    assert error_line(source) == message


@pytest.mark.parametrize("hook, message", [
    ("lambda t: t.__reduce__", "AttributeError: 'Tensor' object attribute '__reduce__' is outside gradcli's language"),
    ("lambda t: open('/etc/passwd')", "NameError: name 'open' is not defined: Python's builtin 'open' is outside "
                                      "gradcli's language"),
    ("lambda t: [0] * 10 ** 12", "MemoryError: "),
])
def test_pack_hooks_are_script_code_under_the_same_limits(hook, message):
    """Sandbox: a pack hook is a script function, bounded like any other; its error is the script's."""
    source = PRELUDE + ("a = torch.ones(2, requires_grad=True)\n"
                        f"with torch.autograd.graph.saved_tensors_hooks({hook}, lambda p: p):\n"
                        "    a.exp()\n")
    assert error_line(source).startswith(message)


def test_recursive_unpack_hook_hits_the_recursion_limit():
    source = PRELUDE + """def unpack(p):
    return unpack(p)
a = torch.ones(2, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
    y = a.exp()
y.sum().backward()
"""
    assert error_line(source).startswith("RecursionError: maximum recursion depth exceeded")


def test_saved_tensors_hooks_objects_reach_nothing_internal():
    source = PRELUDE + "h = torch.autograd.graph.save_on_cpu()\nh.pack_hook\n"
    assert error_line(source).startswith("AttributeError: ")
    source = PRELUDE + "a = torch.ones(2, requires_grad=True)\nr = a.exp().grad_fn._raw_saved_result\nr.node\n"
    assert error_line(source).startswith("AttributeError: ")


def test_saved_tensor_names_pytorch_has_are_an_honest_refusal():
    source = PRELUDE + "a = torch.ones(2, requires_grad=True)\nr = a.exp().grad_fn._raw_saved_result\nr.data\n"
    assert error_line(source) == ("NotImplementedError: gradcli does not implement "
                                  "torch._C._autograd.SavedTensor.data")


@pytest.mark.parametrize("reach", ["ctx.kept", "ctx._hooks", "ctx.open", "ctx.__class__.__init__", "m.__enter__",
                                   "m._entered", "m.__exit__.__globals__"])
def test_allow_mutation_objects_reach_nothing_internal(reach):
    source = PRELUDE + f"m = torch.autograd.graph.allow_mutation_on_saved_tensors()\nwith m as ctx:\n    x = {reach}\n"
    assert error_line(source).startswith("AttributeError: ")


def test_allow_mutation_copies_are_freed_with_the_block():
    """The copies a block keeps are dropped when it ends (a backward afterwards is PyTorch's AssertionError)."""
    source = PRELUDE + ("m = torch.autograd.graph.allow_mutation_on_saved_tensors()\nwith m as ctx:\n"
                        "    a = torch.ones(3, requires_grad=True) * 1\n    b = a.exp()\nb.sum().backward()\n")
    assert error_line(source) == ("AssertionError: Trying to backward outside of the 'allow_mutation_on_saved_tensors'"
                                  " contextin which the graph was originally recorded.")
