"""Saved input tensors kept as bare arrays once only their node can reach them (gradcli/engine/slim.py):
what a script can see of them stays PyTorch's. Expected outputs are PyTorch 2.13's (addresses as 0xADDR)."""

from __future__ import annotations

import io

import pytest

from conftest import normalize, run_script
from gradcli.session import Session

# name -> (script after `import torch`, PyTorch's output, PyTorch's error line or None)
CASES = {
    'twin': (
        'a = torch.ones(2, 2, requires_grad=True)\nb = a * 2\nc = b.sin()\ndel b\nd = c.cos()\ns = c.grad_fn._saved_self\nprint(s, s.grad_fn.name(), s.requires_grad, s.is_leaf)\nprint(s is c.grad_fn._saved_self, c.grad_fn._saved_self.grad_fn is c.grad_fn.next_functions[0][0])\n',
        'tensor([[2., 2.],\n        [2., 2.]], grad_fn=<MulBackward0>) MulBackward0 True False\nTrue True\n',
        None),
    'twin_changed_in_place': (
        'a = torch.ones(2, 2, requires_grad=True)\nb = a * 2\nc = b.sin()\ndel b\nd = c.cos()\nc.grad_fn._saved_self.add_(1)\nd.sum().backward()\n',
        '',
        'RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [2, 2]], which is output 0 of Add, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).'),
    'alias_changed_in_place': (
        'a = torch.ones(2, 2, requires_grad=True)\nb = a * 4\ne = b.detach()\nc = b.sin()\ndel b\nd = c.cos()\ne.add_(1)\nd.sum().backward()\n',
        '',
        'RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [2, 2]], which is output 0 of Mul, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).'),
    'double_backward': (
        'x = torch.tensor([0.5, 1.0], requires_grad=True)\ny = x\nfor i in range(4):\n    y = y.sin()\ng, = torch.autograd.grad(y.sum(), x, create_graph=True)\nprint(g)\ng.sum().backward()\nprint(x.grad)\n',
        'tensor([0.6293, 0.2059], grad_fn=<MulBackward0>)\ntensor([-1.0838, -0.5576])\n',
        None),
    'retain_graph': (
        'x = torch.tensor([0.5, 1.0], requires_grad=True)\ny = x\nfor i in range(3):\n    y = y.exp() * y.tanh()\nz = y.sum()\nz.backward(retain_graph=True)\nz.backward()\nprint(x.grad)\nz.backward()\n',
        'tensor([4.7469e+01, 1.1337e+05])\n',
        'RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.'),
    'id_and_hash': (
        'a = torch.ones(2, requires_grad=True)\nb = a * 3\ni = id(b)\nc = b.sin()\ndel b\nd = c.cos()\nprint(id(c.grad_fn._saved_self) == i)\nb = a * 5\nh = hash(b)\nc = b.sin()\ndel b\nd = c.cos()\nprint(hash(c.grad_fn._saved_self) == h)\n',
        'True\nTrue\n',
        None),
    'hooks_after': (
        'a = torch.ones(2, requires_grad=True)\nb = a * 6\nc = b.sin()\ndel b\nd = c.cos()\nc.grad_fn._raw_saved_self.register_hooks(lambda t: t * 2, lambda t: t / 2)\nd.sum().backward()\nprint(a.grad)\nb = a * 8\nc = b.sin()\ndel b\nd = c.cos()\nc.grad_fn._saved_self.register_hook(lambda g: print("hook", g))\nc.grad_fn._saved_self.retain_grad()\ns = c.grad_fn._saved_self\nd.sum().backward()\nprint(s.grad)\n',
        'tensor([1.5889, 1.5889])\nhook tensor([0.1216, 0.1216])\ntensor([0.1216, 0.1216])\n',
        None),
    'retained_then_dropped': (
        'a = torch.ones(2, requires_grad=True)\nb = a * 7\nb.retain_grad()\nc = b.sin()\ndel b\nd = c.cos()\ns = c.grad_fn._saved_self\nd.sum().backward()\nprint(s.grad)\n',
        'tensor([-0.4604, -0.4604])\n',
        None),
    'square_chain': (
        'x = torch.ones(3, requires_grad=True)\ny = x * 2\nfor i in range(3):\n    y = y * y\nprint(y.grad_fn._saved_self.grad_fn, y.grad_fn._saved_other is y.grad_fn._saved_self)\ny.sum().backward()\nprint(x.grad)\n',
        '<MulBackward0 object at 0xADDR> True\ntensor([2048., 2048., 2048.])\n',
        None),
    'data_changed_in_place': (
        'a = torch.ones(2, requires_grad=True)\nb = a * 2\ne = b.data\nc = b.sin()\ndel b\nd = c.cos()\ne.add_(1)\n'
        'd.sum().backward()\nprint(a.grad)\n',
        'tensor([1.5624, 1.5624])\n',
        None),
    'anomaly': (
        'with torch.autograd.detect_anomaly():\n    a = torch.tensor([1.0, -1.0], requires_grad=True)\n    b = a * 2\n    c = b.sqrt()\n    del b\n    d = c.sin()\n    c.grad_fn._saved_result\n    d.sum().backward()\n    print(a.grad)\n',
        '',
        "RuntimeError: Function 'SinBackward0' returned nan values in its 0th output."),
}


@pytest.mark.parametrize("name", list(CASES))
def test_what_a_script_sees_is_pytorchs(name):
    source, out, error = CASES[name]
    result = run_script("import torch\n" + source)
    assert normalize(result.out) == out
    got = None if result.error is None else f"{result.error.kind}: {result.error.message}"
    assert got == error


def _chain(source: str):
    session = Session(out=io.StringIO())
    session.run_source("import torch\n" + source)
    return session.globals


def _kinds(y):
    node, kinds = y.grad_fn, []
    while node.inputs:
        kinds.append((type(node.saved).__name__, type(node.checks).__name__))
        node = node.inputs[0]
    return kinds


def test_a_chain_keeps_bytes_or_arrays():
    """In `y = y.sin()` each node but the last keeps its input's values without a version check: a small
    array as its bytes, a larger one as the array. The last node has no consumer yet; the first saved
    the leaf `x`."""
    for size, kind in ((2, ("bytes", "Frozen")), (100, ("SlimSaved", "NoneType"))):
        y = _chain(f"x = torch.ones({size}, requires_grad=True)\ny = x\nfor i in range(5):\n    y = y.sin()\n")["y"]
        assert _kinds(y) == [("tuple", "tuple")] + [kind] * 3 + [("tuple", "tuple")]
    # two saved inputs: arrays
    y = _chain("x = torch.ones(2, requires_grad=True)\ny = x * 2\nfor i in range(3):\n    y = y.sin() * y.cos()\n")["y"]
    assert ("SlimSaved", "NoneType") in _kinds(y)


def test_held_tensors_stay_tensors():
    """A saved tensor the script still holds, or one with state of its own, stays in its node."""
    names = _chain("a = torch.ones(2, requires_grad=True)\n"
                   "kept = a * 2\nc1 = kept.sin()\nd1 = c1.cos()\n"           # held by the script
                   "r = a * 3\nr.retain_grad()\nc2 = r.sin()\ndel r\nd2 = c2.cos()\n"   # retain_grad
                   "v = (a * 4)[0:1]\nc3 = v.sin()\ndel v\nd3 = c3.cos()\n"   # a view
                   "f = a * 5\nc4 = f.sin()\ndel f\nd4 = c4.cos()\n"          # nothing: slimmed
                   "w = a * 6\nc5 = w.sin()\nw.data = torch.zeros(2)\ndel w\nd5 = c5.cos()\n"   # data replaced
                   "i = a * 7\nc6 = i.sin()\nn = id(i)\ndel i\nd6 = c6.cos()\n")  # its id taken
    kinds = [type(names[k].grad_fn.saved) for k in ("c1", "c2", "c3", "c4", "c5", "c6")]
    assert kinds == [tuple, tuple, tuple, bytes, tuple, tuple]
