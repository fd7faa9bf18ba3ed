"""The autograd API against PyTorch 2.13: tensor hooks (order, replacement, removal, what autograd.grad
runs), backward(inputs=...), autograd.grad's options and errors, anomaly and inference modes,
torch.autograd.functional and gradcheck.

Expected script outputs were produced by running the same scripts with torch 2.13.0 (addresses
normalised to 0xADDR).
"""

from __future__ import annotations

import gc
import re
import weakref

import pytest

from conftest import run_script
from gradcli.engine import autograd, dtypes, factories as torch, gradcheck
from gradcli.engine.gradcheck import GradcheckError
from gradcli.engine.backward import grad
from gradcli.engine.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def run(source: str):
    return run_script("import torch\n" + source)


def normalized(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0xADDR", text)


# -------------------------------------------------------------------------------- whole scripts

SCRIPTS = [
    ("hook_order_branches", """\
def h_a(g):
    print('a', g)
def h_b(g):
    print('b', g)
def h_c(g):
    print('c', g)
def h_e(g):
    print('e', g)
def h_f(g):
    print('f', g)
def h_g(g):
    print('g', g)
def h_p(g):
    print('p', g)
def h_q(g):
    print('q', g)
def h_r(g):
    print('r', g)
def h_u(g):
    print('u', g)
def h_v(g):
    print('v', g)
def h_w(g):
    print('w', g)
def h_y0(g):
    print('y0', g)
def h_y1(g):
    print('y1', g)
def h_y2(g):
    print('y2', g)
def h_y3(g):
    print('y3', g)
def h_y4(g):
    print('y4', g)
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
c = torch.tensor([5., 6.], requires_grad=True)
a.register_hook(h_a)
b.register_hook(h_b)
c.register_hook(h_c)
u = a * b
v = b * c
w = c * a
u.register_hook(h_u)
v.register_hook(h_v)
w.register_hook(h_w)
p = u * v
q = w + u
r = v * w + p
p.register_hook(h_p)
q.register_hook(h_q)
r.register_hook(h_r)
out = (p + q * r + w).sum()
out.backward()
print(a.grad, b.grad, c.grad)
x = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
ys = []
for i in range(5):
    ys.append(x * (i + 1))
for i in range(5):
    ys[i].register_hook([h_y0, h_y1, h_y2, h_y3, h_y4][i])
z = ys[3] + ys[1] + ys[4] + ys[0] + ys[2]
z = z * ys[2]
z.sum().backward()
print(x.grad)
e = torch.tensor([1.1, 2.2], requires_grad=True)
f = torch.tensor([0.3, 0.7], requires_grad=True)
g = torch.tensor([2.5, 1.5], requires_grad=True)
e.register_hook(h_e)
f.register_hook(h_f)
g.register_hook(h_g)
(e * f * g).sum().backward()
(g * f + e * g + f * e).sum().backward()
print(e.grad, f.grad, g.grad)
""",
     """\
r tensor([ 8., 20.])
q tensor([120., 480.])
p tensor([ 9., 21.])
w tensor([241., 961.])
v tensor([ 67., 408.])
c tensor([ 442., 3554.])
u tensor([255., 984.])
a tensor([1970., 9702.])
b tensor([ 590., 4416.])
tensor([1970., 9702.]) tensor([ 590., 4416.]) tensor([ 442., 3554.])
y4 tensor([0.3000, 0.6000, 0.9000])
y3 tensor([0.3000, 0.6000, 0.9000])
y2 tensor([1.8000, 3.6000, 5.4000])
y1 tensor([0.3000, 0.6000, 0.9000])
y0 tensor([0.3000, 0.6000, 0.9000])
tensor([ 9., 18., 27.])
g tensor([0.3300, 1.5400])
e tensor([0.7500, 1.0500])
f tensor([2.7500, 3.3000])
e tensor([2.8000, 2.2000])
g tensor([1.4000, 2.9000])
f tensor([3.6000, 3.7000])
tensor([3.5500, 3.2500]) tensor([6.3500, 7.0000]) tensor([1.7300, 4.4400])
"""),
    ("hook_replace_remove", """\
x = torch.tensor([1., 2.], requires_grad=True)
def show(g):
    print("leaf", g)
h = x.register_hook(show)
print(h)
y = x * 3
def times10(g):
    return g * 10
h2 = y.register_hook(times10)
y.sum().backward()
print(x.grad)
h2.remove()
h2.remove()
x.grad = None
(x * 3).sum().backward()
print(x.grad)
h.remove()
x.grad = None
y = x * 3
def first(g):
    print("first", g)
    return g + 1
def second(g):
    print("second", g)
    return g * 2
y.register_hook(first)
y.register_hook(second)
y.retain_grad()
y.sum().backward()
print(x.grad, y.grad)
""",
     """\
<torch.utils.hooks.RemovableHandle object at 0xADDR>
leaf tensor([30., 30.])
tensor([30., 30.])
leaf tensor([3., 3.])
tensor([3., 3.])
first tensor([1., 1.])
second tensor([2., 2.])
tensor([12., 12.]) tensor([4., 4.])
"""),
    ("hook_grad_capture", """\
def times10(g):
    return g * 10
def show(g):
    print("hook", g)
a = torch.tensor([1., 2.], requires_grad=True)
a.register_hook(show)
b = a * 2
b.register_hook(times10)
b.retain_grad()
c = b.sum()
print(torch.autograd.grad(c, [b, a], retain_graph=True), b.grad)
print(torch.autograd.grad(c, b), b.grad)
w = torch.tensor([5., 6.], requires_grad=True)
w.register_hook(show)
print(torch.autograd.grad((a * 2).sum() + (w * 0).sum(), a))
""",
     """\
hook tensor([20., 20.])
(tensor([1., 1.]), tensor([20., 20.])) tensor([10., 10.])
(tensor([10., 10.]),) tensor([20., 20.])
hook tensor([2., 2.])
(tensor([2., 2.]),)
"""),
    ("backward_inputs", """\
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
y = x * w
z = (y * y).sum()
z.backward(inputs=[x], retain_graph=True)
print(x.grad, w.grad)
z.backward(inputs=w, retain_graph=True)
print(x.grad, w.grad, y.retains_grad)
z.backward(inputs=[y], retain_graph=True)
print(y.retains_grad, y.grad, x.grad, w.grad)
z.backward(inputs=(x, w), retain_graph=True)
print(x.grad, w.grad)
torch.autograd.backward(z, inputs=[x], retain_graph=True)
torch.autograd.backward([z, z], retain_graph=True)
torch.autograd.backward([z, z], [torch.tensor(1.), None, None], retain_graph=True)
print(x.grad)
z.backward(inputs=[torch.ones(2, requires_grad=True)], retain_graph=True)
""",
     """\
tensor([18., 64.]) None
tensor([18., 64.]) tensor([ 6., 32.]) False
True tensor([ 6., 16.]) tensor([18., 64.]) tensor([ 6., 32.])
tensor([ 36., 128.]) tensor([12., 64.])
tensor([126., 448.])
"""),
    ("anomaly", """\
print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
m = torch.autograd.set_detect_anomaly(True)
print(m)
print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
torch.autograd.set_detect_anomaly(False)
print(torch.is_anomaly_enabled())
d = torch.autograd.detect_anomaly()
print(d)
with d:
    print(torch.is_anomaly_enabled())
with torch.autograd.detect_anomaly(check_nan=False):
    print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    x = torch.tensor([0.], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    print(x.grad)
with torch.autograd.set_detect_anomaly(True):
    print(torch.is_anomaly_enabled())
print(torch.is_anomaly_enabled())
""",
     """\
False True
<torch.autograd.anomaly_mode.set_detect_anomaly object at 0xADDR>
True True
False
<torch.autograd.anomaly_mode.detect_anomaly object at 0xADDR>
True
True False
tensor([nan])
True
False
"""),
    ("inference", """\
x = torch.tensor([1., 2.], requires_grad=True)
print(torch.is_inference_mode_enabled())
im = torch.inference_mode()
print(im, torch.is_inference_mode_enabled())
with torch.inference_mode():
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    y = x * 2
    print(y, y.requires_grad)
    with torch.enable_grad():
        print("eg", torch.is_grad_enabled(), torch.is_inference_mode_enabled())
        w = x * 2
        print(w, w.requires_grad)
    with torch.no_grad():
        print("ng", torch.is_grad_enabled(), torch.is_inference_mode_enabled())
    with torch.inference_mode(False):
        print("if", torch.is_grad_enabled(), torch.is_inference_mode_enabled())
        q = x * 2
        print(q)
    with torch.set_grad_enabled(True):
        print(torch.is_grad_enabled(), (x * 2).requires_grad)
    print(torch.is_grad_enabled())
with torch.inference_mode(mode=False):
    print(torch.is_inference_mode_enabled())
print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
with torch.no_grad():
    with torch.inference_mode(False):
        print("ng>if(False)", torch.is_grad_enabled(), torch.is_inference_mode_enabled())
    with torch.inference_mode():
        print("ni", torch.is_grad_enabled())
    print("after", torch.is_grad_enabled())
with torch.autograd.inference_mode():
    print(torch.is_inference_mode_enabled())
print(y + x)
""",
     """\
False
<torch.autograd.grad_mode.inference_mode object at 0xADDR> False
True False
tensor([2., 4.]) False
eg True True
tensor([2., 4.]) False
ng False True
if True False
tensor([2., 4.], grad_fn=<MulBackward0>)
True False
False
False
False True
ng>if(False) True False
ni False
after False
True
tensor([3., 6.], grad_fn=<AddBackward0>)
"""),
    ("gradcheck", """\
def f(x):
    return x * x
def bad(x):
    return x.detach() * x
def two(x, y):
    return x * y, (x + y).sum()
calls = [0]
def counted(x):
    calls[0] = calls[0] + 1
    return x.exp()
x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
y = torch.tensor([0.5, -1.], dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(f, (x,)))
print(torch.autograd.gradcheck(f, x))
print(torch.autograd.gradcheck(bad, (x,), raise_exception=False))
print(torch.autograd.gradcheck(two, (x, y)))
print(torch.autograd.gradcheck(counted, (x,)), calls)
print(torch.autograd.gradcheck(two, (x, y.detach())))
print(torch.autograd.gradcheck(f, (x,), eps=1e-3, atol=1e-2))
xf = torch.tensor([1., 2.], requires_grad=True)
print(torch.autograd.gradcheck(f, (xf,), raise_exception=False))
print(torch.autograd.gradgradcheck(f, (x,)))
print(torch.autograd.gradgradcheck(two, (x, y)))
torch.manual_seed(0)
print(torch.autograd.gradgradcheck(f, (x,)), torch.rand(2))
print(torch.autograd.gradcheck(f, (x,), fast_mode=True))
print(x.grad)
""",
     """\
True
True
False
True
True [6]
True
True
False
True
True
True tensor([0.3074, 0.6341])
True
None
"""),
]


@pytest.mark.parametrize("name, source, expected", SCRIPTS, ids=[s[0] for s in SCRIPTS])
def test_script_prints_what_pytorch_prints(name, source, expected):
    result = run(source)
    assert result.error is None, result.error.render()
    assert normalized(result.out) == expected


# -------------------------------------------------------------------------------------------- hooks

def leaf(values, dtype=None):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


def test_leaf_hooks_outlive_graphs_without_cycles():
    seen = []
    x = leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: seen.append(g.tolist()))
    for _ in range(2):                      # the hook was registered before any graph existed
        (x * 2).sum().backward()
    assert seen == [[2.0, 2.0], [2.0, 2.0]]
    gc.disable()
    try:
        probe = weakref.ref(x)
        node = weakref.ref(autograd.existing_accumulator(x))
        del x
        assert probe() is None and node() is None         # reference counting alone frees both
    finally:
        gc.enable()
    handle.remove()                          # the node is gone: a no-op


def test_hook_handles_remove_only_their_hook():
    x = leaf([1.0])
    calls = []
    h1 = x.register_hook(lambda g: calls.append(1))
    h2 = x.register_hook(lambda g: calls.append(2))
    assert h2.id == h1.id + 1
    assert re.fullmatch(r"<torch\.utils\.hooks\.RemovableHandle object at 0x[0-9a-f]+>", repr(h1))
    h1.remove()
    (x * 1).sum().backward()
    assert calls == [2]
    with h2:
        pass
    (x * 1).sum().backward()
    assert calls == [2]
    assert autograd.existing_accumulator(x).hooks is None


def test_hook_replacement_is_checked():
    def named_hook(g):
        return g.double()
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(named_hook)
    with pytest.raises(RuntimeError, match=re.escape(
            "hook 'named_hook' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)")):
        y.sum().backward()
    y = x * 2
    y.register_hook(lambda g: torch.ones(3))
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        y.sum().backward()
    y = x * 2
    y.register_hook(lambda g: 5)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        torch.ones(2).register_hook(print)


def test_hooks_see_gradients_under_create_graph():
    x = leaf([3.0])
    x.register_hook(lambda g: g * 2)
    (g,) = grad((x * x).sum(), x, create_graph=True)
    assert g.tolist() == [12.0] and g.grad_fn is not None
    (gg,) = grad(g.sum(), x)
    assert gg.tolist() == [8.0]              # the doubled gradient is part of the graph


def test_ready_queue_orders_like_pytorch():
    # libstdc++'s priority queue by node sequence number: newest first, leaves first of all (the
    # expected order was checked against std::priority_queue compiled with g++)
    heap = []
    nodes = [autograd.Node(None, (), ()) for _ in range(6)]
    leaves = [autograd.AccumulateGrad(None) for _ in range(3)]
    for n in [nodes[2], leaves[0], nodes[5], leaves[1], nodes[0], leaves[2], nodes[3]]:
        autograd._heap_push(heap, n)
    order = []
    while heap:
        n = heap.pop()
        order.append(autograd._heap_pop_rest(heap, n) if heap else n)
    assert order[:3] == [leaves[0], leaves[2], leaves[1]]       # ties broken as std::pop_heap does
    assert order[3:] == [nodes[5], nodes[3], nodes[2], nodes[0]]


# ------------------------------------------------------------------------- backward and grad errors

ERRORS = [
    ("x = torch.tensor([1., 2.], requires_grad=True)\n(x * x).sum().backward(inputs=[])",
     "RuntimeError", "`inputs` argument to `backward()` cannot be empty."),
    ("x = torch.tensor([1., 2.], requires_grad=True)\n(x * x).sum().backward(inputs=[3])",
     "RuntimeError", "all inputs have to be Tensors or GradientEdges, but got int"),
    ("x = torch.tensor([1., 2.], requires_grad=True)\n(x * x).sum().backward(inputs=[torch.ones(2)])",
     "RuntimeError", "can't retain_grad on Tensor that has requires_grad=False"),
    ("x = torch.tensor([1., 2.], requires_grad=True)\nz = (x * x).sum()\n"
     "torch.autograd.backward([z, z], [torch.tensor(1.)])", "RuntimeError", "got 2 tensors and 1 gradients"),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ny = (x * x).sum()\n"
     "torch.autograd.grad(y, [x, torch.ones(1, requires_grad=True)])", "RuntimeError",
     "The differentiated Tensor at index 1 appears to not have been used in the graph. Set allow_unused=True if "
     "this is the desired behavior."),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad((x * x).sum(), x, allow_unused=False, "
     "materialize_grads=True)", "ValueError",
     "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad((x * x).sum(), [])", "RuntimeError",
     "`inputs` argument to `grad()` cannot be empty."),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad((x * x).sum(), x.detach())",
     "RuntimeError", "One of the differentiated Tensors does not require grad"),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad((x * x).sum(), x, grad_outputs=[3])",
     "TypeError", "gradients can be either Tensors or None, but got int"),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad(x * 2, x, grad_outputs=torch.ones(2), "
     "is_grads_batched=True)", "RuntimeError",
     "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch dimension. "
     "The sizes of the remaining dimensions are expected to match the shape of corresponding output, but a "
     "mismatch was detected: grad_output[0] has a shape of torch.Size([]) and output[0] has a shape of "
     "torch.Size([2]). If you only want some tensors in `grad_output` to be considered batched, consider using "
     "vmap."),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad(torch.ones(()), x)", "RuntimeError",
     "element 0 of tensors does not require grad and does not have a grad_fn"),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad((x * x).sum(), 3)", "TypeError",
     "'int' object is not iterable"),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad([3], x)", "AssertionError",
     "Expected output to be a torch.Tensor"),
    ("x = torch.tensor([1., 2.], requires_grad=True)\ntorch.autograd.grad((x * x).sum(), x, "
     "grad_outputs=torch.ones(2))", "RuntimeError",
     "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of "
     "torch.Size([])."),
    ("with torch.autograd.detect_anomaly():\n    a = torch.tensor([1.], requires_grad=True)\n"
     "    b = torch.tensor([0.], requires_grad=True)\n    (a / b * 0).sum().backward()",
     "RuntimeError", "Function 'DivBackward0' returned nan values in its 0th output."),
    ("with torch.autograd.detect_anomaly():\n    a = torch.tensor([1.], requires_grad=True)\n"
     "    (a * 2).sum().backward(torch.tensor(float('nan')))",
     "RuntimeError", "Function 'SumBackward0' returned nan values in its 0th output."),
    ("with torch.autograd.detect_anomaly():\n    x = torch.ones(2, requires_grad=True)\n    y = x * 2\n"
     "    z = y * y\n    y.add_(1)\n    z.sum().backward()", "RuntimeError",
     "one of the variables needed for gradient computation has been modified by an inplace operation: "
     "[torch.FloatTensor [2]], which is output 0 of Add, is at version 1; expected version 0 instead. Hint: the "
     "backtrace further above shows the operation that failed to compute its gradient. The variable in question "
     "was changed in there or anywhere later. Good luck!"),
]


@pytest.mark.parametrize("source, kind, message", ERRORS)
def test_errors_as_pytorch(source, kind, message):
    result = run(source)
    assert result.error is not None and (result.error.kind, result.error.message) == (kind, message)


def test_modes_are_restored_after_errors_and_reset():
    result = run("with torch.autograd.detect_anomaly():\n    with torch.inference_mode():\n"
                 "        torch.ones(2).sum().backward()")
    assert result.error is not None
    assert not autograd.is_anomaly_enabled() and not autograd.is_inference_mode_enabled()
    autograd.set_detect_anomaly(True, check_nan=False)
    autograd.reset_modes()
    assert (autograd.is_anomaly_enabled(), autograd.is_anomaly_check_nan_enabled(),
            autograd.is_grad_enabled()) == (False, True, True)


def test_inference_mode_records_nothing_even_with_grad_enabled():
    x = leaf([1.0, 2.0])
    with autograd.inference_mode():
        with autograd.enable_grad():
            assert autograd.is_grad_enabled()
            y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    with autograd.no_grad():
        with autograd.inference_mode(False):
            assert autograd.is_grad_enabled() and (x * 2).grad_fn is not None


# ---------------------------------------------------------------------------- autograd.functional

def test_jacobian_and_hessian_shapes_and_values():
    def f(x, y):
        return x * y + x
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    jx, jy = jacobian(f, (x, y))
    assert jx.tolist() == [[4.0, 0.0], [0.0, 5.0]] and jy.tolist() == [[1.0, 0.0], [0.0, 2.0]]
    assert jacobian(lambda t: t * t, torch.ones(2, 3)).shape == (2, 3, 2, 3)
    assert jacobian(lambda t: (t * t).sum(), x).tolist() == [2.0, 4.0]
    j = jacobian(lambda t: t * t, x, create_graph=True)
    assert j.grad_fn.name() == "ViewBackward0"
    (hxx, hxy), (hyx, hyy) = hessian(lambda a, b: (a * b * b).sum(), (x, y))
    assert hxx.tolist() == [[0.0, 0.0], [0.0, 0.0]] and hxy.tolist() == [[6.0, 0.0], [0.0, 8.0]]
    assert hyx.tolist() == [[6.0, 0.0], [0.0, 8.0]] and hyy.tolist() == [[2.0, 0.0], [0.0, 4.0]]
    cube = torch.tensor([0.5, -1.5, 2.0], dtype=dtypes.float64)
    h = hessian(lambda t: (t * t * t).sum(), cube)
    assert h.dtype is dtypes.float64 and h.tolist() == [[3.0, 0.0, 0.0], [0.0, -9.0, 0.0], [0.0, 0.0, 12.0]]
    assert not x.requires_grad               # inputs are copied, never changed


def test_products():
    x = torch.tensor([1.0, 2.0])
    v = torch.ones(2)
    out, prod = vjp(lambda t: t ** 2, x, v)
    assert out.tolist() == [1.0, 4.0] and prod.tolist() == [2.0, 4.0]
    out, prod = jvp(lambda t: (t ** 3).sum(), x, v)
    assert out.tolist() == 9.0 and prod.tolist() == 15.0
    for fn in (hvp, vhp):
        out, prod = fn(lambda t: (t ** 3).sum(), x, v)
        assert prod.tolist() == [6.0, 12.0] and prod.grad_fn is None
    with pytest.raises(RuntimeError, match=re.escape("v has invalid size: should be torch.Size([2]) but got "
                                                     "torch.Size([3]).")):
        vjp(lambda t: t * 2, x, torch.ones(3))
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian should contain a "
                                           "single element"):
        hessian(lambda t: t * 2, x)
    with pytest.raises(TypeError, match=re.escape("The inputs given to jacobian must be either a Tensor or a tuple "
                                                  "of Tensors but the given inputs has type <class 'list'>.")):
        jacobian(lambda t: t, [x])


# ----------------------------------------------------------------------------------------- gradcheck

def test_gradcheck_failure_message_and_type():
    x = leaf([1.0, 2.0], dtypes.float64)
    with pytest.raises(GradcheckError) as info:
        gradcheck.gradcheck(lambda t: t.detach() * t, (x,))
    assert str(info.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 4.0000]], dtype=torch.float64)\n"
        "analytical:tensor([[1., 0.],\n        [0., 2.]], dtype=torch.float64)\n")
    assert isinstance(info.value, RuntimeError)
    result = run("x = torch.tensor([1.], dtype=torch.float64, requires_grad=True)\n"
                 "def bad(t):\n    return t.detach() * t\ntorch.autograd.gradcheck(bad, (x,))")
    assert result.error.kind == "torch.autograd.gradcheck.GradcheckError"
    assert result.error.message.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")


def test_gradcheck_float32_numerical_jacobian():
    # float32 inputs: the central differences are taken in float32, as PyTorch does
    x = leaf([1.0, 2.0])
    with pytest.raises(GradcheckError) as info:
        gradcheck.gradcheck(lambda t: t * t, (x,))
    assert str(info.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[1.9670, 0.0000],\n        [0.0000, 3.8147]])\n"
        "analytical:tensor([[2., 0.],\n        [0., 4.]])\n")
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        gradcheck.gradcheck(lambda t: t, (torch.ones(2),))
