"""The graph API: Node.register_hook / register_prehook with their handles, Node.metadata,
Tensor.register_post_accumulate_grad_hook, torch.autograd.graph.Node and increment_version. Each script
prints what PyTorch 2.13 printed for it (expected texts from the oracle, addresses normalised): the
hooks' arguments (tuples, None entries), their order beside tensor hooks and retain_grad, replacements
and PyTorch's errors for bad ones."""

from __future__ import annotations

import pytest

from gradcli import cli
from tests.conftest import normalize, run_script

# name -> (script, what PyTorch printed)
SCRIPTS = {
    'orders_and_arguments': (
        'import torch\nx = torch.tensor([1., 2.], requires_grad=True)\nw = torch.tensor([3., 4.])\ny = x * w\nz = y.sum()\nlog = []\ndef th(g):\n    print("tensor hook y", g); \ny.register_hook(th)\ny.retain_grad()\ndef pre(go):\n    print("pre", type(go).__name__, go, y.grad); \ndef post(gi, go):\n    print("post", type(gi).__name__, gi, go)\nh1 = y.grad_fn.register_prehook(pre)\nh2 = y.grad_fn.register_hook(post)\nprint(h1, h2)\nacc = y.grad_fn.next_functions[0][0]\nprint(acc, acc.name())\nacc.register_hook(lambda gi, go: print("acc post", gi, go, x.grad))\nacc.register_prehook(lambda go: print("acc pre", go, x.grad))\nx.register_hook(lambda g: print("x hook", g))\nx.register_post_accumulate_grad_hook(lambda t: print("post acc", t.grad, t is x))\nz.grad_fn.register_hook(lambda gi, go: print("sum post", gi, go))\nz.backward()\nprint(x.grad)\n# replacement\na = torch.tensor([1., 2.], requires_grad=True)\nb = a * torch.tensor(2.)\nb.grad_fn.register_prehook(lambda go: (go[0] * 10,))\nb.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, None))\nb.sum().backward(); print(a.grad)\n# None entries\nc = torch.tensor([1.], requires_grad=True)\nd = c * torch.tensor([2.])\nprint(d.grad_fn.next_functions)\nd.grad_fn.register_hook(lambda gi, go: print("gi", gi))\nd.sum().backward()\nprint(torch.autograd.graph.Node, isinstance(d.grad_fn, torch.autograd.graph.Node), isinstance(d.grad_fn.next_functions[0][0], torch.autograd.graph.Node), isinstance(1, torch.autograd.graph.Node))\nprint(d.grad_fn.metadata, type(d.grad_fn.metadata))\nd.grad_fn.metadata["k"] = 1\nprint(d.grad_fn.metadata, d.grad_fn.metadata is d.grad_fn.metadata)\ne = torch.ones(2, requires_grad=True)\nf = e.exp()\ntry:\n    f.register_post_accumulate_grad_hook(lambda t: None)\nexcept Exception as ex: print(type(ex).__name__, ex)\ntry:\n    torch.ones(2).register_post_accumulate_grad_hook(lambda t: None)\nexcept Exception as ex: print(type(ex).__name__, ex)\ng2 = torch.ones(2, requires_grad=True)\ng2.register_post_accumulate_grad_hook(lambda t: 5)\ntry:\n    (g2*2).sum().backward()\nexcept Exception as ex: print(type(ex).__name__, ex)\nprint(g2.grad)\n',
        "<torch.utils.hooks.RemovableHandle object at 0xADDR> <torch.utils.hooks.RemovableHandle object at 0xADDR>\n<AccumulateGrad object at 0xADDR> torch::autograd::AccumulateGrad\nsum post (tensor([1., 1.]),) (tensor(1.),)\ntensor hook y tensor([1., 1.])\npre tuple (tensor([1., 1.]),) tensor([1., 1.])\npost tuple (tensor([3., 4.]), None) (tensor([1., 1.]),)\nx hook tensor([3., 4.])\nacc pre (tensor([3., 4.]),) None\npost acc tensor([3., 4.]) True\nacc post () (tensor([3., 4.]),) tensor([3., 4.])\ntensor([3., 4.])\ntensor([21., 21.])\n((<AccumulateGrad object at 0xADDR>, 0), (None, 0))\ngi (tensor([2.]), None)\n<class 'torch.autograd.graph.Node'> True True False\n{} <class 'dict'>\n{'k': 1} True\nRuntimeError post accumulate grad hooks cannot be registered on non-leaf tensors\nRuntimeError cannot register a hook on a tensor that doesn't require gradient\nTypeError expected Variable, but hook returned 'int'\ntensor([2., 2.])\n"),
    'replacements_and_errors': (
        'import torch\ndef t(f):\n    try: f()\n    except Exception as e: print(type(e).__name__ + ":", e)\ndef mk():\n    a = torch.tensor([1., 2.], requires_grad=True)\n    return a, a * torch.tensor(2.)\ndef c1():\n    a, b = mk(); b.grad_fn.register_prehook(lambda go: (go[0], go[0])); b.sum().backward()\nt(c1)\ndef c2():\n    a, b = mk(); b.grad_fn.register_prehook(lambda go: 5); b.sum().backward()\nt(c2)\ndef c3():\n    a, b = mk(); b.grad_fn.register_hook(lambda gi, go: [gi[0], None]); b.sum().backward(); print(a.grad)\nt(c3)\ndef c4():\n    a, b = mk(); b.grad_fn.register_hook(lambda gi, go: (1, None)); b.sum().backward(); print(a.grad)\nt(c4)\ndef c5():\n    a, b = mk(); b.grad_fn.register_hook(lambda gi, go: (torch.ones(3), None)); b.sum().backward(); print(a.grad)\nt(c5)\ndef c6():\n    a, b = mk(); b.grad_fn.register_prehook(lambda go: (torch.ones(3),)); b.sum().backward(); print(a.grad)\nt(c6)\ndef c7():\n    a, b = mk(); b.grad_fn.register_prehook(lambda go: (None,)); b.sum().backward(); print(a.grad)\nt(c7)\ndef c8():\n    a, b = mk(); b.grad_fn.register_hook(lambda gi, go: (None, None)); b.sum().backward(); print(a.grad)\nt(c8)\ndef c9():\n    a, b = mk(); b.grad_fn.register_hook(lambda gi, go: (gi[0].double(), None)); b.sum().backward(); print(a.grad)\nt(c9)\ndef c10():\n    a, b = mk(); h = b.grad_fn.register_hook(lambda gi, go: print("no")); h.remove(); h.remove(); b.sum().backward(); print(a.grad)\nt(c10)\ndef c11():\n    a, b = mk(); b.grad_fn.register_hook(5)\nt(c11)\ndef c12():\n    a, b = mk(); b.grad_fn.register_prehook(lambda go: print("p1")); b.grad_fn.register_prehook(lambda go: print("p2")); b.grad_fn.register_hook(lambda gi, go: print("h1")); b.grad_fn.register_hook(lambda gi, go: print("h2")); b.register_hook(lambda g: print("t1")); b.retain_grad(); b.register_hook(lambda g: print("t2")); b.sum().backward()\nt(c12)\ndef c13():\n    a, b = mk(); c = b.sum(); g, = torch.autograd.grad(c, b); \n    b.grad_fn.register_hook(lambda gi, go: print("h", gi, go)); b.grad_fn.register_prehook(lambda go: print("p", go))\n    g, = torch.autograd.grad(b.sum(), b); print(g)\n    g, = torch.autograd.grad(b.sum(), a); print(g)\nt(c13)\ndef c14():\n    a, b = mk(); c = b * 1\n    b.grad_fn.register_hook(lambda gi, go: print("h", gi, go)); b.grad_fn.register_prehook(lambda go: print("p", go))\n    c.sum().backward(inputs=[b]); print(b.grad, a.grad)\nt(c14)\ndef c15():\n    a, b = mk()\n    b.grad_fn.register_hook(lambda gi, go: print("h", gi[0].requires_grad, go[0].requires_grad, gi[0].grad_fn))\n    b.sum().backward(create_graph=True)\nt(c15)\ndef c16():\n    a = torch.ones(2, requires_grad=True)\n    a.register_post_accumulate_grad_hook(lambda t: print("pa", t.grad))\n    (a*2).sum().backward(); (a*3).sum().backward()\n    g, = torch.autograd.grad((a*2).sum(), a); print("grad", g)\nt(c16)\ndef c17():\n    a = torch.ones(2, requires_grad=True)\n    h = a.register_post_accumulate_grad_hook(lambda t: print("pa", t.grad)); print(h); h.remove()\n    (a*2).sum().backward(); print("done")\nt(c17)\ndef c19():\n    a = torch.ones(2, requires_grad=True)\n    b = a.exp()\n    b.grad_fn.register_prehook(lambda go: print("prehook", go))\n    b.sum().backward(retain_graph=True)\n    b.grad_fn.metadata["x"] = torch.ones(1)\n    print(b.grad_fn.metadata)\nt(c19)\n',
        "RuntimeError: hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)\nTypeError: expected tuple, but hook returned 'int'\nTypeError: expected tuple, but hook returned 'list'\nTypeError: expected Variable, but hook returned 'int'\nRuntimeError: hook '<lambda>' has changed the size of value\nRuntimeError: hook '<lambda>' has changed the size of value\nNone\nNone\nRuntimeError: hook '<lambda>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)\ntensor([2., 2.])\nt1\nt2\np1\np2\nh1\nh2\ntensor([1., 1.])\np (tensor([1., 1.]),)\nh (tensor([2., 2.]), None) (tensor([1., 1.]),)\ntensor([2., 2.])\np (tensor([1., 1.]),)\nh (None, None) (tensor([1., 1.]),)\ntensor([1., 1.]) None\nh False False None\npa tensor([2., 2.])\npa tensor([5., 5.])\ngrad tensor([2., 2.])\n<torch.utils.hooks.RemovableHandle object at 0xADDR>\ndone\nprehook (tensor([1., 1.]),)\n{'x': tensor([1.])}\n"),
    'node_class_custom_and_versions': (
        'import torch\ndef t(f):\n    try: print(f())\n    except Exception as e: print(type(e).__name__ + ":", e)\nt(lambda: torch.autograd.graph.Node())\nt(lambda: torch.autograd.graph.increment_version(3))\nt(lambda: torch.autograd.graph.increment_version([torch.ones(1), 3]))\nt(lambda: torch.autograd.graph.increment_version((torch.ones(1),)))\na = torch.ones(2, requires_grad=True)\na.register_post_accumulate_grad_hook(lambda t: t)\nt(lambda: (a*2).sum().backward())\nx = torch.ones(2, requires_grad=True)\nt(lambda: torch.autograd.graph.increment_version(x))\nprint("v")\ny = x * 2\ntorch.autograd.graph.increment_version(x)\nt(lambda: y.sum().backward())\nprint(isinstance(x.grad_fn, torch.autograd.graph.Node))\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, u, k, v):\n        return u * k + v\n    @staticmethod\n    def backward(ctx, g):\n        return g, None, None\nu = torch.ones(2, requires_grad=True); v = torch.ones(2)\no = F.apply(u, 3, v)\nprint(isinstance(o.grad_fn, torch.autograd.graph.Node), o.grad_fn.metadata)\no.grad_fn.register_hook(lambda gi, go: print("custom post", gi, go))\no.grad_fn.register_prehook(lambda go: print("custom pre", go))\no.sum().backward()\nprint(y.grad_fn.register_hook)\np = torch.ones(2, requires_grad=True)\nq = p.exp()\ntorch.autograd.graph.increment_version(q)\nt(lambda: q.sum().backward())\nprint(torch.autograd.graph.Node, torch.autograd.graph)\nprint(isinstance(q.grad_fn, torch.autograd.graph.Node), isinstance(q, torch.autograd.graph.Node), isinstance(q.grad_fn, (int, torch.autograd.graph.Node)))\nprint(issubclass(torch.autograd.graph.Node, object))\n',
        "TypeError: Can't instantiate abstract class Node with abstract methods _input_metadata, _register_hook_dict, _sequence_nr, metadata, name, next_functions, register_hook, register_prehook\nRuntimeError: increment_version expect a Iterable[Tensor] as input\nRuntimeError: increment_version expects each element of the iterable to be a tensor\nNone\nNone\nNone\nv\nNone\nFalse\nTrue {}\ncustom pre (tensor([1., 1.]),)\ncustom post (tensor([1., 1.]), None) (tensor([1., 1.]),)\n<built-in method register_hook of MulBackward0 object at 0xADDR>\nRuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [2]], which is output 0 of Exp, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).\n<class 'torch.autograd.graph.Node'> <module 'torch.autograd.graph' from 'torch/autograd/graph.py'>\nTrue False True\nTrue\n"),
    'tutorial_uses': (
        'import torch\ndef t(f):\n    try: f()\n    except Exception as e: print(type(e).__name__ + ":", e)\n# a prehook on a node whose output gets two gradients (they are summed first)\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x.exp()\nz = y * 2 + y * 3\ny.grad_fn.register_prehook(lambda go: print("exp pre", go))\ny.grad_fn.register_hook(lambda gi, go: print("exp post", gi, go))\nz.sum().backward()\n# removing from inside a hook, and handles as context managers\na = torch.ones(2, requires_grad=True)\nb = a * 2\nhandles = []\ndef once(gi, go):\n    print("once", gi)\n    handles[0].remove()\nhandles.append(b.grad_fn.register_hook(once))\nwith b.grad_fn.register_prehook(lambda go: print("never")):\n    pass\nb.sum().backward(retain_graph=True)\nb.sum().backward()\nprint(a.grad)\n# metadata survives the backward and belongs to one node\nc = torch.ones(1, requires_grad=True)\nd = c.sin()\nd.grad_fn.metadata["step"] = 3\nd.grad_fn.metadata["names"] = ["sin"]\ne = d.cos()\nprint(d.grad_fn.metadata, e.grad_fn.metadata, len(d.grad_fn.metadata))\ne.backward()\nprint(d.grad_fn.metadata["step"], c.grad_fn)\n# hooks see gradients under create_graph as tensors with history\nu = torch.tensor([1., 2.], requires_grad=True)\nv = u ** 2\nv.grad_fn.register_hook(lambda gi, go: print("post", gi, go))\ngu, = torch.autograd.grad(v.sum(), u, create_graph=True)\nprint(gu)\n# a hook that fails stops the backward with its error\nw = torch.ones(2, requires_grad=True)\nww = w * 3\ndef bad(gi, go):\n    return gi[0] / 0 + undefined_name\nww.grad_fn.register_hook(bad)\nt(lambda: ww.sum().backward())\n# post accumulate grad hooks: after every accumulation, and several in order\np = torch.ones(2, requires_grad=True)\np.register_post_accumulate_grad_hook(lambda t: print("first", t.grad))\np.register_post_accumulate_grad_hook(lambda t: print("second", t.grad))\np.register_hook(lambda g: print("tensor hook", g))\n(p * p).sum().backward()\n# an optimizer step inside the hook, as the tutorial does\ndef step(t):\n    with torch.no_grad():\n        t.sub_(0.1 * t.grad)\n    t.grad = None\nq = torch.tensor([1., 2.], requires_grad=True)\nq.register_post_accumulate_grad_hook(step)\nfor i in range(3):\n    (q ** 2).sum().backward()\n    print(q, q.grad)\n# a prehook that doubles the incoming gradient of AccumulateGrad\nr = torch.ones(2, requires_grad=True)\ns = r * 1\ns.grad_fn.next_functions[0][0].register_prehook(lambda go: (go[0] * 2,))\ns.sum().backward()\nprint(r.grad)\nprint(type(s.grad_fn.metadata), s.grad_fn.next_functions[0][0].metadata)\n',
        "exp pre (tensor([5., 5.]),)\nexp post (tensor([13.5914, 36.9453]),) (tensor([5., 5.]),)\nonce (tensor([2., 2.]), None)\ntensor([4., 4.])\n{'step': 3, 'names': ['sin']} {} 2\n3 None\npost (tensor([2., 4.], grad_fn=<MulBackward0>),) (tensor([1., 1.]),)\ntensor([2., 4.], grad_fn=<MulBackward0>)\nNameError: name 'undefined_name' is not defined\ntensor hook tensor([2., 2.])\nfirst tensor([2., 2.])\nsecond tensor([2., 2.])\ntensor([0.8000, 1.6000], requires_grad=True) None\ntensor([0.6400, 1.2800], requires_grad=True) None\ntensor([0.5120, 1.0240], requires_grad=True) None\ntensor([2., 2.])\n<class 'dict'> {}\n"),
}


@pytest.mark.parametrize("name", SCRIPTS)
def test_prints_what_pytorch_prints(name):
    source, expected = SCRIPTS[name]
    result = run_script(source)
    assert result.error is None, result.error
    assert normalize(result.out) == expected


def _error(source: str) -> str:
    result = run_script(source)
    assert result.error is not None
    return f"{result.error.line}:{result.error.col}: {result.error.kind}: {result.error.message}"


PRE = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n"


def test_hook_errors_point_at_the_backward_call():
    assert _error(PRE + "y.grad_fn.register_hook(lambda gi, go: 5)\ny.sum().backward()") == (
        "5:1: TypeError: expected tuple, but hook returned 'int'")
    assert _error(PRE + "y.grad_fn.register_prehook(lambda go: (go[0], go[0]))\ny.sum().backward()") == (
        "5:1: RuntimeError: hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)")


def test_nodes_without_hooks_keep_no_hook_table():
    result = run_script(PRE + "h = y.grad_fn.register_hook(lambda gi, go: None)\nh.remove()\n"
                              "print(y.grad_fn.metadata)\ny.sum().backward()\nprint(x.grad)")
    assert result.out == "{}\ntensor([2., 2.])\n"


# ------------------------------------------------------------------------------------ sandbox

@pytest.mark.parametrize("source, expected", [
    # hooks are script functions: their work is bounded like any other script code
    (PRE + "y.grad_fn.register_hook(lambda gi, go: [0] * 10**9)\ny.sum().backward()",
     "4:40: MemoryError: a list of 1000000000 items is too large (gradcli allows at most 100000000)"),
    (PRE + "def deep(go):\n    return deep(go)\ny.grad_fn.register_prehook(deep)\ny.sum().backward()",
     "5:12: RecursionError: maximum recursion depth exceeded"),
    # the node, its metadata and the handles hand out nothing of the engine
    (PRE + "y.grad_fn.metadata.__reduce__", "4:1: AttributeError: 'dict' object attribute '__reduce__' is outside "
                                           "gradcli's language"),
    (PRE + "getattr(y.grad_fn, 'hooks')", "4:1: AttributeError: 'MulBackward0' object attribute 'hooks' is outside "
                                          "gradcli's language"),
    (PRE + "getattr(y.grad_fn, 'meta')", "4:1: AttributeError: 'MulBackward0' object has no attribute 'meta'"),
    (PRE + "h = y.grad_fn.register_hook(print)\ngetattr(h, '_node')",
     "5:1: AttributeError: 'RemovableHandle' object attribute '_node' is outside gradcli's language"),
    (PRE + "y.grad_fn.metadata = {}", "4:1: AttributeError: 'MulBackward0' object attribute 'metadata' is "
                                      "read-only"),
    (PRE + "torch.autograd.graph.Node()", "4:1: TypeError: Can't instantiate abstract class Node with abstract "
                                          "methods _input_metadata, _register_hook_dict, _sequence_nr, metadata, "
                                          "name, next_functions, register_hook, register_prehook"),
    (PRE + "import torch.autograd.graph as g\ng.GradientEdge",
     "5:1: NotImplementedError: gradcli does not implement torch.autograd.graph.GradientEdge"),
])
def test_escapes_through_the_graph_api_fail_clearly(source, expected):
    assert _error(source) == expected


def test_a_hook_that_never_ends_is_stopped_by_the_timeout(tmp_path, capsys):
    script = tmp_path / "spin.grad"
    script.write_text(PRE + "def spin(gi, go):\n    while True:\n        pass\n"
                            "y.grad_fn.register_hook(spin)\ny.sum().backward()\n")
    assert cli.main(["run", "--timeout", "0.5", str(script)]) == 124
    assert "Traceback" not in capsys.readouterr().err
