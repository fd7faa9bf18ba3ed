"""Custom autograd Functions (torch.autograd.Function): each script prints, or fails with, what PyTorch 2.13
printed for it (the expected texts were taken from the oracle, addresses normalised)."""

from __future__ import annotations

import pytest

from tests.conftest import gradcli_output, normalize, run_script

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

PRE = 'import torch\n\nclass Twice(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, k):\n        return x * 2\n\n    @staticmethod\n    def backward(ctx, g):\n        return ctx.answer\n\ndef attempt(answer, k=3):\n    x = torch.tensor([1., 2.], requires_grad=True)\n    y = Twice.apply(x, k)\n    y.grad_fn.answer = answer\n    try:\n        y.sum().backward()\n        print("ok", x.grad)\n    except RuntimeError as e:\n        print("RuntimeError:", e)\n\ng = torch.ones(2)\n'
SAVER = 'import torch\n\nclass Saver(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * 2\n\n    @staticmethod\n    def backward(ctx, g):\n        a, = ctx.saved_tensors\n        return g * a\n\nx = torch.tensor([1., 2.], requires_grad=True)\n'
EXP = 'import torch\n\nclass Exp(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        r = x.exp()\n        ctx.save_for_backward(r)\n        return r\n\n    @staticmethod\n    def backward(ctx, g):\n        r, = ctx.saved_tensors\n        print("saved", r, r.grad_fn is ctx, r.requires_grad)\n        return g * r\n\nx = torch.tensor([0., 1.], requires_grad=True)\n'
SAME = 'import torch\n\nclass Same(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n\nx = torch.tensor([1., 2.], requires_grad=True)\n'
DIRTY = 'import torch\n\nclass AddOne(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        x.add_(1)\n        ctx.mark_dirty(x)\n        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n\na = torch.tensor([1., 2.], requires_grad=True)\n'
NEW = 'import torch\nfrom torch.autograd.function import once_differentiable\n\nclass Mul(torch.autograd.Function):\n    @staticmethod\n    def forward(x, k):\n        return x * k\n\n    @staticmethod\n    def setup_context(ctx, inputs, output):\n        x, k = inputs\n        print("setup", torch.is_grad_enabled(), output, ctx.needs_input_grad)\n        ctx.k = k\n\n    @staticmethod\n    @once_differentiable\n    def backward(ctx, g):\n        print("backward", torch.is_grad_enabled())\n        return g * ctx.k, None\n\na = torch.tensor([1., 2.], requires_grad=True)\n'
SINCOS = 'import torch\n\nclass SinCos(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x.sin(), x.cos()\n\n    @staticmethod\n    def backward(ctx, gs, gc):\n        x, = ctx.saved_tensors\n        print("grads", gs, gc)\n        return gs * x.cos() - gc * x.sin()\n\nx = torch.tensor([0.5, 1.0], requires_grad=True)\n'
KW = 'import torch\n\nclass A(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, k=2):\n        print("needs", ctx.needs_input_grad, k)\n        return x * k\n\n    @staticmethod\n    def backward(ctx, g):\n        return g * 2, None\n\nclass B(torch.autograd.Function):\n    @staticmethod\n    def forward(x, k=2):\n        return x * k\n\n    @staticmethod\n    def setup_context(ctx, inputs, output):\n        print("inputs", len(inputs), inputs[1], ctx.needs_input_grad)\n\n    @staticmethod\n    def backward(ctx, g):\n        return g * 2, None\n\nx = torch.ones(2, requires_grad=True)\n'
VIEW = 'import torch\n\nclass View(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x.view(-1)\n\n    @staticmethod\n    def backward(ctx, g):\n        return g.view(2, 2)\n\nx = torch.ones(2, 2, requires_grad=True)\n'

# name -> (script, what PyTorch printed, the error it ended in or None)
CASES = {
    'count_short': (PRE + 'attempt(g)',
        'RuntimeError: function TwiceBackward returned an incorrect number of gradients (expected 2, got 1)\n',
        None),
    'count_extra_nones': (PRE + 'attempt((g, None, None))',
        'ok tensor([1., 1.])\n',
        None),
    'count_extra_grad': (PRE + 'attempt((g, g, g))',
        'RuntimeError: function TwiceBackward returned an incorrect number of gradients (expected 2, got 3)\n',
        None),
    'grad_for_number': (PRE + 'attempt((g, 1))',
        'RuntimeError: function TwiceBackward returned a gradient different than None at position 2, but the corresponding forward input was not a Variable\n',
        None),
    'grad_for_number_none': (PRE + 'attempt((g, g, None))',
        'RuntimeError: function TwiceBackward returned a gradient different than None at position 2, but the corresponding forward input was not a Variable\n',
        None),
    'shape_wrong': (PRE + 'attempt((torch.ones(3), None))',
        'RuntimeError: Function TwiceBackward returned an invalid gradient at index 0 - got [3] but expected shape compatible with [2]\n',
        None),
    'shape_broadcast_summed': (PRE + 'attempt((torch.ones(3, 2), None))',
        'ok tensor([3., 3.])\n',
        None),
    'shape_one_expanded': (PRE + 'attempt((torch.ones(1), None))',
        'RuntimeError: Function TwiceBackward returned an invalid gradient at index 0 - got [1] but expected shape compatible with [2]\n',
        None),
    'not_a_tensor': (PRE + 'attempt(5)',
        'RuntimeError: function TwiceBackward returned an incorrect number of gradients (expected 2, got 1)\n',
        None),
    'not_a_tensor_str': (PRE + "attempt(('a', None))",
        'RuntimeError: expected Variable or None (got str)\n',
        None),
    'dtype_cast': (PRE + 'attempt((g.double(), None))\nattempt((g.long(), None))',
        'ok tensor([1., 1.])\nok tensor([1., 1.])\n',
        None),
    'none_grads': (PRE + 'attempt(None)\nattempt((None, None))',
        'RuntimeError: function TwiceBackward returned an incorrect number of gradients (expected 2, got 1)\nok None\n',
        None),
    'tensor_k': (PRE + 'attempt((g, g), torch.ones(2))\nattempt((g,), torch.ones(2))',
        'ok tensor([1., 1.])\nRuntimeError: function TwiceBackward returned an incorrect number of gradients (expected 2, got 1)\n',
        None),
    'saved_input_modified': (SAVER + 'a = x * 1\ny = Saver.apply(a)\na.mul_(2)\ny.sum().backward()',
        '',
        'RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [2]], which is output 0 of Mul, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).'),
    'saved_leaf_modified': (SAVER + 'l = torch.tensor([1., 2.], requires_grad=True)\ny = Saver.apply(l)\nwith torch.no_grad():\n    l.add_(1)\ny.sum().backward()',
        '',
        'RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [2]] is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).'),
    'backward_twice': (SAVER + 'y = Saver.apply(x)\ny.sum().backward()\nprint(x.grad)\ny.sum().backward()',
        'tensor([1., 2.])\n',
        'RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.'),
    'saved_after_free': (SAVER + 'y = Saver.apply(x)\ny.sum().backward()\ny.grad_fn.saved_tensors',
        '',
        'RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.'),
    'retain_graph': (SAVER + 'y = Saver.apply(x)\ny.sum().backward(retain_graph=True)\ny.sum().backward()\nprint(x.grad, y.grad_fn.saved_tensors)',
        '',
        'RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.'),
    'twice_without_saving': ('import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return g * 2\nx = torch.ones(2, requires_grad=True)\ny = F.apply(x)\ny.backward(torch.ones(2))\ny.backward(torch.ones(2))\nprint(x.grad, y.grad_fn.saved_tensors)',
        '',
        'RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.'),
    'saved_output': (EXP + 'y = Exp.apply(x)\ny.sum().backward()\nprint(x.grad)',
        'saved tensor([1.0000, 2.7183], grad_fn=<ExpBackward>) True True\ntensor([1.0000, 2.7183])\n',
        None),
    'saved_output_modified': (EXP + 'y = Exp.apply(x)\ny.mul_(2)\ny.sum().backward()',
        '',
        'RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [2]], which is output 0 of Exp, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).'),
    'save_a_number': ('import torch\n\nclass Saver(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x, 3)\n        return x * 2\n\n    @staticmethod\n    def backward(ctx, g):\n        a, = ctx.saved_tensors\n        return g * a\n\nx = torch.tensor([1., 2.], requires_grad=True)\nSaver.apply(x)',
        '',
        'TypeError: save_for_backward can only save variables, but argument 1 is of type int'),
    'save_none': ('import torch\n\nclass Saver(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(None, x)\n        return x * 2\n\n    @staticmethod\n    def backward(ctx, g):\n        n, a = ctx.saved_tensors\n        print(n, a)\n        return g * a\n\nx = torch.tensor([1., 2.], requires_grad=True)\nSaver.apply(x).sum().backward()\nprint(x.grad)',
        'None tensor([1., 2.], requires_grad=True)\ntensor([1., 2.])\n',
        None),
    'base_apply': ('import torch\ntorch.autograd.Function.apply(torch.ones(1))',
        '',
        'NotImplementedError: You must implement the forward function for custom autograd.Function.'),
    'base_forward': ('import torch\ntorch.autograd.Function.forward(None, torch.ones(1))',
        '',
        'NotImplementedError: You must implement the forward function for custom autograd.Function.'),
    'base_backward': ('import torch\ntorch.autograd.Function.backward(None, torch.ones(1))',
        '',
        'NotImplementedError: You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.'),
    'no_backward': ('import torch\nclass G(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\ny = G.apply(torch.ones(2, requires_grad=True))\nprint(y)\ny.sum().backward()',
        'tensor([2., 2.], grad_fn=<GBackward>)\n',
        'NotImplementedError: You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.'),
    'forward_called_directly': (SAVER + 'Saver.forward(None, x)',
        '',
        "AttributeError: 'NoneType' object has no attribute 'save_for_backward'"),
    'forward_wrong_count': (SAVER + 'Saver.apply(x, 1)',
        '',
        'TypeError: Saver.forward() takes 2 positional arguments but 3 were given'),
    'instance': (SAVER + 's = Saver()\nprint(s)\nprint(isinstance(s, torch.autograd.Function))',
        '<__main__.Saver object at 0xADDR>\nTrue\n',
        None),
    'reprs': (SAVER + 'print(Saver, torch.autograd.Function, torch.autograd.function.Function)\nprint(Saver.apply)\nprint(Saver.forward)\ny = Saver.apply(x)\nprint(y.grad_fn, y.grad_fn.name())\nprint(y.grad_fn.next_functions)\nprint((y * 2).grad_fn.next_functions[0][0] is y.grad_fn)',
        "<class '__main__.Saver'> <class 'torch.autograd.function.Function'> <class 'torch.autograd.function.Function'>\n<bound method Function.apply of <class '__main__.Saver'>>\n<function Saver.forward at 0xADDR>\n<torch.autograd.function.SaverBackward object at 0xADDR> SaverBackward\n((<AccumulateGrad object at 0xADDR>, 0),)\nTrue\n",
        None),
    'input_returned': (SAME + 'y = Same.apply(x)\nprint(y is x, y, y.is_leaf, y.requires_grad)\np = torch.tensor([1., 2.])\nz = Same.apply(p)\nprint(z is p, z.requires_grad, z.grad_fn)\nz.add_(1)\nprint(p)',
        'False tensor([1., 2.], grad_fn=<SameBackward>) False True\nFalse False None\ntensor([2., 3.])\n',
        None),
    'no_grad_mode': (SAME + 'with torch.no_grad():\n    y = Same.apply(x)\nprint(y, y.requires_grad, y.grad_fn)',
        'tensor([1., 2.]) False None\n',
        None),
    'not_requiring_grad': (SAME + 'y = Same.apply(torch.ones(2) * 3)\nprint(y, y.requires_grad, y.grad_fn)',
        'tensor([3., 3.]) False None\n',
        None),
    'ctx_attributes': (SAME + "c = Same.apply(x).grad_fn\nc.constant = 2\nc._mine = [1]\nprint(c.constant, c._mine, c.needs_input_grad, c.saved_tensors)\ntry:\n    c.foo\nexcept AttributeError as e:\n    print(e)\ntry:\n    c.saved_tensors = 1\nexcept AttributeError as e:\n    print(e)\ntry:\n    c.next_functions = 1\nexcept AttributeError as e:\n    print(e)\nc.needs_input_grad = 5\nprint(c.needs_input_grad)\nprint(hasattr(c, 'constant'), getattr(c, 'constant'))",
        "2 [1] (True,) ()\n'SameBackward' object has no attribute 'foo'\nattribute 'saved_tensors' of 'torch._C._FunctionBase' objects is not writable\nattribute 'next_functions' of 'torch._C._FunctionBase' objects is not writable\n5\nTrue 2\n",
        None),
    'needs_input_grad': ('import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, b, n, c):\n        print(ctx.needs_input_grad)\n        return a + b + c\n    @staticmethod\n    def backward(ctx, g):\n        print(ctx.needs_input_grad)\n        return g if ctx.needs_input_grad[0] else None, None, None, g\na = torch.ones(2, requires_grad=True)\nc = torch.ones(2, requires_grad=True)\ny = F.apply(a, torch.ones(2), 3, c)\nprint(y.grad_fn.next_functions)\ny.sum().backward()\nprint(a.grad, c.grad)\nwith torch.no_grad():\n    F.apply(a, a, 1, a)',
        '(True, False, False, True)\n((<AccumulateGrad object at 0xADDR>, 0), (None, 0), (<AccumulateGrad object at 0xADDR>, 0))\n(True, False, False, True)\ntensor([1., 1.]) tensor([1., 1.])\n(True, True, False, True)\n',
        None),
    'grad_modes': ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        print('forward', torch.is_grad_enabled())\n        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        print('backward', torch.is_grad_enabled(), g.requires_grad)\n        return g * 2\nx = torch.ones(2, requires_grad=True)\nF.apply(x).sum().backward()\ng, = torch.autograd.grad(F.apply(x).sum(), x, create_graph=True)\nprint(g)",
        'forward False\nbackward False False\nforward False\nbackward True False\ntensor([2., 2.])\n',
        None),
    'non_differentiable_outputs': ("import torch\nclass C(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        m = x > 0\n        ctx.mark_non_differentiable(m)\n        return x.clamp(min=0), 3, m\n    @staticmethod\n    def backward(ctx, g, g2, g3):\n        print('grads', g, g2, g3)\n        return g\nx = torch.tensor([-1., 2.], requires_grad=True)\ny, k, m = C.apply(x)\nprint(y, k, m, m.requires_grad, m.grad_fn)\ny.sum().backward()\nprint(x.grad)",
        'tensor([0., 2.], grad_fn=<CBackward>) 3 tensor([False,  True]) False None\ngrads tensor([1., 1.]) None tensor([False, False])\ntensor([1., 1.])\n',
        None),
    'materialize_off': ("import torch\nclass D(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.set_materialize_grads(False)\n        m = x > 0\n        ctx.mark_non_differentiable(m)\n        return x.clamp(min=0), m\n    @staticmethod\n    def backward(ctx, g, g2):\n        print('grads', g, g2)\n        return g\nx = torch.tensor([-1., 2.], requires_grad=True)\ny, m = D.apply(x)\ny.sum().backward()\nprint(x.grad)\nm.sum().backward()",
        'grads tensor([1., 1.]) None\ntensor([1., 1.])\n',
        'RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn'),
    'materialized_zero': ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        print('g', g)\n        return g\nclass Z(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a):\n        return a * 1\n    @staticmethod\n    def backward(ctx, g):\n        return None\nx = torch.ones(2, requires_grad=True)\nw = Z.apply(F.apply(x))\n(w.sum() + x.sum()).backward()\nprint(x.grad)",
        'g tensor([0., 0.])\ntensor([1., 1.])\n',
        None),
    'double_backward': ('import torch\nclass Cube(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x ** 3\n    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        return g * 3 * x ** 2\nx = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)\ng, = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)\nprint(g, g.grad_fn, g.grad_fn.next_functions)\ngg, = torch.autograd.grad(g.sum(), x)\nprint(gg)',
        'tensor([ 3.0000, 12.0000,  0.7500], grad_fn=<MulBackward0>) <MulBackward0 object at 0xADDR> ((None, 0), (<PowBackward0 object at 0xADDR>, 0))\ntensor([  6., -12.,   3.])\n',
        None),
    'double_backward_saved_output': ('import torch\n\nclass Exp(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        r = x.exp()\n        ctx.save_for_backward(r)\n        return r\n\n    @staticmethod\n    def backward(ctx, g):\n        r, = ctx.saved_tensors\n        return g * r\n\nx = torch.tensor([0., 1.], requires_grad=True)\ng, = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)\nprint(g)\nprint(torch.autograd.grad(g.sum(), x))',
        'tensor([1.0000, 2.7183], grad_fn=<MulBackward0>)\n(tensor([1.0000, 2.7183]),)\n',
        None),
    'hooks_and_retain_grad': ("import torch\n\nclass Exp(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        r = x.exp()\n        ctx.save_for_backward(r)\n        return r\n\n    @staticmethod\n    def backward(ctx, g):\n        r, = ctx.saved_tensors\n        return g * r\n\nx = torch.tensor([0., 1.], requires_grad=True)\nx.register_hook(lambda t: t * 10)\nw = Exp.apply(x)\nw.register_hook(lambda t: print('hook', t))\nw.retain_grad()\n(w * 2).sum().backward()\nprint(w.grad, x.grad)",
        'hook tensor([2., 2.])\ntensor([2., 2.]) tensor([20.0000, 54.3656])\n',
        None),
    'grad_inputs': (SAVER + 'y = Saver.apply(x * 1)\nprint(torch.autograd.grad(y.sum(), x))',
        '(tensor([1., 2.]),)\n',
        None),
    'anomaly_nan': ("import torch\nclass N(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 1\n    @staticmethod\n    def backward(ctx, g):\n        return g * float('nan')\nx = torch.ones(2, requires_grad=True)\nwith torch.autograd.detect_anomaly():\n    N.apply(x).sum().backward()",
        '',
        "RuntimeError: Function 'NBackward' returned nan values in its 0th output."),
    'vjp_instead_of_backward': ('import torch\nclass V(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n    @staticmethod\n    def vjp(ctx, g):\n        return g * 2\nx = torch.ones(2, requires_grad=True)\nV.apply(x).sum().backward()\nprint(x.grad)',
        'tensor([2., 2.])\n',
        None),
    'without_staticmethod': ('import torch\nclass H(torch.autograd.Function):\n    def forward(ctx, x):\n        return x * 2\n    def backward(ctx, g):\n        return g * 3\nx = torch.ones(2, requires_grad=True)\nH.apply(x).sum().backward()\nprint(x.grad)',
        'tensor([3., 3.])\n',
        None),
    'gradcheck': ('import torch\nclass Cube(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x ** 3\n    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        return g * 3 * x ** 2\nt = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)\nprint(torch.autograd.gradcheck(Cube.apply, (t,)))\nprint(torch.autograd.gradgradcheck(Cube.apply, (t,)))',
        'True\nTrue\n',
        None),
    'gradcheck_wrong': ('import torch\nclass Bad(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x ** 2\n    @staticmethod\n    def backward(ctx, g):\n        return g * 3\nt = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)\nprint(torch.autograd.gradcheck(Bad.apply, (t,), raise_exception=False))',
        'False\n',
        None),
    'nested_backward_call': ('import torch\nclass Inner(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x.sin()\n    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        with torch.enable_grad():\n            t = x.detach().requires_grad_()\n            s = t.sin()\n            d, = torch.autograd.grad(s.sum(), t)\n        return g * d\nx = torch.tensor([0.0, 1.0], requires_grad=True)\nInner.apply(x).sum().backward()\nprint(x.grad)',
        'tensor([1.0000, 0.5403])\n',
        None),
    'mark_dirty': (DIRTY + 'b = a * 2\nc = AddOne.apply(b)\nprint(c is b, c, b.grad_fn.next_functions)\nc.sum().backward()\nprint(a.grad)',
        'True tensor([3., 5.], grad_fn=<AddOneBackward>) ((<MulBackward0 object at 0xADDR>, 0),)\ntensor([2., 2.])\n',
        None),
    'mark_dirty_leaf': (DIRTY + 'AddOne.apply(a)',
        '',
        'RuntimeError: a leaf Variable that requires grad has been used in an in-place operation.'),
    'mark_dirty_without_grad': (DIRTY + 'p = torch.ones(2)\nq = AddOne.apply(p)\nprint(q is p, q)',
        'True tensor([2., 2.])\n',
        None),
    'modified_not_marked': ('import torch\n\nclass AddOne(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        x.add_(1)\n        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n\na = torch.tensor([1., 2.], requires_grad=True)\nb = a * 2\nc = AddOne.apply(b)\nprint(c is b, c)',
        'False tensor([3., 5.], grad_fn=<AddOneBackward>)\n',
        None),
    'setup_context': (NEW + 'y = Mul.apply(a, 3)\nprint(y)\ny.sum().backward()\nprint(a.grad)',
        'setup False tensor([3., 6.]) (True, False)\ntensor([3., 6.], grad_fn=<MulBackward>)\nbackward False\ntensor([3., 3.])\n',
        None),
    'setup_context_forward_direct': (NEW + 'print(Mul.forward(a, 2))\nMul.forward(None, a, 3)',
        'tensor([2., 4.], grad_fn=<MulBackward0>)\n',
        'TypeError: Mul.forward() takes 2 positional arguments but 3 were given'),
    'once_differentiable_create_graph': (NEW + 'g, = torch.autograd.grad(Mul.apply(a, 3).sum(), a, create_graph=True)\nprint(g, g.requires_grad, g.grad_fn)\ng.sum().backward()',
        'setup False tensor([3., 6.]) (True, False)\nbackward False\ntensor([3., 3.]) False None\n',
        'RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn'),
    'once_differentiable_twice': (NEW + 'g, = torch.autograd.grad(Mul.apply(a, 3).sum(), a, torch.ones(()).requires_grad_(), create_graph=True)\nprint(g, g.requires_grad, g.grad_fn)\ng.sum().backward()',
        'setup False tensor([3., 6.]) (True, False)\nbackward False\ntensor([3., 3.], grad_fn=<Error>) True <Error object at 0xADDR>\n',
        'RuntimeError: trying to differentiate twice a function that was marked with @once_differentiable'),
    'once_differentiable_repr': (NEW + 'print(once_differentiable, Mul.backward)\nprint(torch.autograd.function.once_differentiable is once_differentiable)',
        '<function once_differentiable at 0xADDR> <function Mul.backward at 0xADDR>\nTrue\n',
        None),
    'several_outputs': (SINCOS + 's, c = SinCos.apply(x)\nprint(s, c, s.grad_fn is c.grad_fn, s.grad_fn)\nz = s * 2 + c * 3\nprint(z.grad_fn.next_functions[0][0].next_functions, z.grad_fn.next_functions[1][0].next_functions)\nz.sum().backward()\nprint(x.grad)',
        'tensor([0.4794, 0.8415], grad_fn=<SinCosBackward>) tensor([0.8776, 0.5403], grad_fn=<SinCosBackward>) True <torch.autograd.function.SinCosBackward object at 0xADDR>\n((<torch.autograd.function.SinCosBackward object at 0xADDR>, 0), (None, 0)) ((<torch.autograd.function.SinCosBackward object at 0xADDR>, 1), (None, 0))\ngrads tensor([2., 2.]) tensor([3., 3.])\ntensor([ 0.3169, -1.4438])\n',
        None),
    'several_outputs_one_used': (SINCOS + 's, c = SinCos.apply(x)\ns.sum().backward()\nprint(x.grad)',
        'grads tensor([1., 1.]) tensor([0., 0.])\ntensor([0.8776, 0.5403])\n',
        None),
    'several_outputs_double_backward': (SINCOS + 's, c = SinCos.apply(x)\ng, = torch.autograd.grad(c.sum(), x, create_graph=True)\nprint(g)\nprint(torch.autograd.grad(g.sum(), x))',
        'grads tensor([0., 0.]) tensor([1., 1.])\ntensor([-0.4794, -0.8415], grad_fn=<SubBackward0>)\n(tensor([-0.8776, -0.5403]),)\n',
        None),
    'several_outputs_hooks': (SINCOS + "s, c = SinCos.apply(x)\ns.register_hook(lambda t: print('hook s', t))\nc.retain_grad()\n(s + c).sum().backward()\nprint(c.grad, x.grad)",
        'hook s tensor([1., 1.])\ngrads tensor([1., 1.]) tensor([1., 1.])\ntensor([1., 1.]) tensor([ 0.3982, -0.3012])\n',
        None),
    'several_outputs_grad_of_both': (SINCOS + 's, c = SinCos.apply(x)\nprint(torch.autograd.grad((s, c), x, (torch.ones(2), torch.ones(2) * 2)))',
        'grads tensor([1., 1.]) tensor([2., 2.])\n(tensor([-0.0813, -1.1426]),)\n',
        None),
    'several_outputs_saved': ('import torch\nclass Twice(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        a = x * 2\n        b = x * 3\n        ctx.save_for_backward(a, b)\n        return a, b\n    @staticmethod\n    def backward(ctx, ga, gb):\n        a, b = ctx.saved_tensors\n        print(a.grad_fn, b.grad_fn, a.grad_fn is b.grad_fn, a.grad_fn is ctx)\n        return ga * 2 + gb * 3\nx = torch.tensor([0.5, 1.0], requires_grad=True)\na, b = Twice.apply(x)\n(a * b).sum().backward()\nprint(x.grad)',
        '<torch.autograd.function.TwiceBackward object at 0xADDR> <torch.autograd.function.TwiceBackward object at 0xADDR> True True\ntensor([ 6., 12.])\n',
        None),
    'several_outputs_gradcheck': (SINCOS + 't = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)\nprint(torch.autograd.gradcheck(SinCos.apply, (t,)))',
        'grads tensor([1., 0.], dtype=torch.float64) tensor([0., 0.], dtype=torch.float64)\ngrads tensor([0., 1.], dtype=torch.float64) tensor([0., 0.], dtype=torch.float64)\ngrads tensor([1., 0.], dtype=torch.float64) tensor([0., 0.], dtype=torch.float64)\ngrads tensor([0., 1.], dtype=torch.float64) tensor([0., 0.], dtype=torch.float64)\ngrads tensor([0., 0.], dtype=torch.float64) tensor([1., 0.], dtype=torch.float64)\ngrads tensor([0., 0.], dtype=torch.float64) tensor([0., 1.], dtype=torch.float64)\ngrads tensor([0., 0.], dtype=torch.float64) tensor([1., 0.], dtype=torch.float64)\ngrads tensor([0., 0.], dtype=torch.float64) tensor([0., 1.], dtype=torch.float64)\ngrads tensor([0., 0.], dtype=torch.float64) tensor([0., 0.], dtype=torch.float64)\ngrads tensor([0., 0.], dtype=torch.float64) tensor([0., 0.], dtype=torch.float64)\ngrads tensor([0., 0.], dtype=torch.float64) tensor([0., 0.], dtype=torch.float64)\ngrads tensor([0., 0.], dtype=torch.float64) tensor([0., 0.], dtype=torch.float64)\nTrue\n',
        None),
    'gradcheck_undefined_grads': ("import torch\nclass Leaky(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        print('g', g)\n        return g * 2 + 1\nt = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)\nprint(torch.autograd.gradcheck(Leaky.apply, (t,), raise_exception=False))\nclass Ok(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.set_materialize_grads(False)\n        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        print('g', g)\n        return None if g is None else g * 2\nprint(torch.autograd.gradcheck(Ok.apply, (t,)))",
        'g tensor([1., 0.], dtype=torch.float64)\ng tensor([0., 1.], dtype=torch.float64)\ng tensor([1., 0.], dtype=torch.float64)\ng tensor([0., 1.], dtype=torch.float64)\nFalse\ng tensor([1., 0.], dtype=torch.float64)\ng tensor([0., 1.], dtype=torch.float64)\ng tensor([1., 0.], dtype=torch.float64)\ng tensor([0., 1.], dtype=torch.float64)\ng tensor([0., 0.], dtype=torch.float64)\ng None\nTrue\n',
        None),
    'gradcheck_wrong_formula_message': ('import torch\nclass Bad(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x ** 2\n    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        return g * 3 * x\nt = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)\ntry:\n    torch.autograd.gradcheck(Bad.apply, (t,))\nexcept RuntimeError as e:\n    print(e)',
        'Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[2.0000, 0.0000],\n        [0.0000, 4.0000]], dtype=torch.float64)\nanalytical:tensor([[3., 0.],\n        [0., 6.]], dtype=torch.float64)\n\n',
        None),
    'keywords_old_style': (KW + 'print(A.apply(x))\nprint(A.apply(x, k=3))\ny = A.apply(x=x)\nprint(y, y.grad_fn.next_functions)\ny.sum().backward()\nprint(x.grad)\nA.apply(x, y=1)',
        'needs (True,) 2\ntensor([2., 2.], grad_fn=<ABackward>)\nneeds (True, False) 3\ntensor([3., 3.], grad_fn=<ABackward>)\nneeds (True,) 2\ntensor([2., 2.], grad_fn=<ABackward>) ((<AccumulateGrad object at 0xADDR>, 0),)\ntensor([2., 2.])\n',
        "TypeError: forward() got an unexpected keyword argument 'y'"),
    'keywords_setup_context': (KW + 'print(B.apply(x))\nprint(B.apply(x, k=5))\nB.apply(x, y=1)',
        'inputs 2 2 (True, False)\ntensor([2., 2.], grad_fn=<BBackward>)\ninputs 2 5 (True, False)\ntensor([5., 5.], grad_fn=<BBackward>)\n',
        "TypeError: got an unexpected keyword argument 'y'"),
    'view_output': (VIEW + 'y = View.apply(x)\nprint(y, y.grad_fn)\ny.sum().backward()\nprint(x.grad)\nz = View.apply(x * 1)\nz.add_(1)',
        'tensor([1., 1., 1., 1.], grad_fn=<ViewBackward>) <torch.autograd.function.ViewBackward object at 0xADDR>\ntensor([[1., 1.],\n        [1., 1.]])\n',
        'RuntimeError: Output 0 of View is a view and is being modified inplace. This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.'),
    'input_returned_modified': ('import torch\nclass Same(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n    @staticmethod\n    def backward(ctx, g):\n        return g\nx = torch.ones(2, requires_grad=True)\ny = Same.apply(x * 1)\ny.mul_(2)',
        '',
        'RuntimeError: Output 0 of Same is a view and is being modified inplace. This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.'),
    'functional_jacobian_hessian': ('import torch\nclass Square(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * x\n    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        return 2 * x * g\na = torch.tensor([1.0, 2.0], dtype=torch.float64)\nprint(torch.autograd.functional.jacobian(Square.apply, a))\nprint(torch.autograd.functional.hessian(lambda t: Square.apply(t).sum(), a))\nwith torch.inference_mode():\n    w = Square.apply(torch.ones(2, requires_grad=True))\nprint(w, w.requires_grad)',
        'tensor([[2., 0.],\n        [0., 4.]], dtype=torch.float64)\ntensor([[2., 0.],\n        [0., 2.]], dtype=torch.float64)\ntensor([1., 1.]) False\n',
        None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_as_pytorch(name):
    source, out, err = CASES[name]
    result = run_script(source)
    assert normalize(result.out) == out
    if err is None:
        assert result.error is None, result.error
    else:
        assert result.error is not None, "PyTorch failed here"
        assert normalize(f"{result.error.kind}: {result.error.message}") == err


# ------------------------------------------------------------------------------------------- the sandbox

_MYF = ("import torch\nclass MyF(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
        "ctx = MyF.apply(torch.ones(1, requires_grad=True)).grad_fn\n")

ESCAPES = [
    # Python's internals of the node, as an attribute, through getattr or setattr
    ("ctx.__reduce__", "AttributeError: 'MyFBackward' object attribute '__reduce__' is outside gradcli's language"),
    ("ctx.__dict__", "AttributeError: 'MyFBackward' object attribute '__dict__' is outside gradcli's language"),
    ("getattr(ctx, '__dict__')", "AttributeError: 'MyFBackward' object attribute '__dict__' is outside gradcli's "
                                 "language"),
    ("setattr(ctx, '__class__', 1)", "AttributeError: 'MyFBackward' object attribute '__class__' is outside "
                                     "gradcli's language"),
    ("ctx.__reduce__", "AttributeError: 'MyFBackward' object attribute '__reduce__' is outside gradcli's language"),
    # the engine's own fields and methods of the node are not PyTorch's API: missing
    ("ctx.attrs", "AttributeError: 'MyFBackward' object has no attribute 'attrs'"),
    ("ctx.backward_fn", "AttributeError: 'MyFBackward' object has no attribute 'backward_fn'"),
    ("ctx.op", "AttributeError: 'MyFBackward' object has no attribute 'op'"),
    ("ctx.run", "AttributeError: 'MyFBackward' object has no attribute 'run'"),
    ("ctx.stored", "AttributeError: 'MyFBackward' object has no attribute 'stored'"),
    ("ctx.inputs", "AttributeError: 'MyFBackward' object has no attribute 'inputs'"),
    ("ctx._output", "AttributeError: 'MyFBackward' object has no attribute '_output'"),
    # the API's methods keep their insides
    ("ctx.save_for_backward.__self__", "AttributeError: 'builtin_function_or_method' object attribute '__self__' is "
                                       "outside gradcli's language"),
    # the class and apply
    ("MyF.apply.__func__", "AttributeError: 'method' object attribute '__func__' is outside gradcli's language"),
    ("MyF.apply.__self__", "AttributeError: 'method' object attribute '__self__' is outside gradcli's language"),
    ("MyF.__mro__", "AttributeError: type object 'MyF' attribute '__mro__' is outside gradcli's language"),
    ("MyF.__dict__", "AttributeError: type object 'MyF' attribute '__dict__' is outside gradcli's language"),
    ("torch.autograd.Function.__subclasses__()", "AttributeError: type object 'Function' attribute '__subclasses__' "
                                                 "is outside gradcli's language"),
    ("torch.autograd.Function.forward.__globals__", "AttributeError: 'function' object attribute '__globals__' is "
                                                    "outside gradcli's language"),
    ("MyF.forward.__globals__", "AttributeError: 'function' object attribute '__globals__' is outside gradcli's "
                                "language"),
]


@pytest.mark.parametrize("expression, message", ESCAPES)
def test_escape_through_ctx_node_or_class_is_refused(expression, message):
    result = run_script(_MYF + expression + "\n")
    assert result.error is not None
    assert f"{result.error.kind}: {result.error.message}" == message


def test_a_backward_that_recurses_stops_at_the_recursion_limit():
    source = ("import torch\nclass R(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        return x * 1\n    @staticmethod\n    def backward(ctx, g):\n        with torch.enable_grad():\n"
              "            R.apply(torch.ones(1, requires_grad=True)).sum().backward()\n        return g\n"
              "R.apply(torch.ones(1, requires_grad=True)).sum().backward()\n")
    result = run_script(source)
    assert (result.error.kind, result.error.message, result.error.line) == (
        "RecursionError", "maximum recursion depth exceeded", 9)


def test_ctx_attributes_count_against_the_bounds():
    source = _MYF.replace("return x * 2", "ctx.big = [0] * (10 ** 9)\n        return x * 2")
    result = run_script(source)
    assert result.error.kind == "MemoryError"


def test_an_endless_backward_stops_at_the_timeout(tmp_path):
    script = tmp_path / "loop.grad"
    script.write_text(_MYF.replace("return g", "while True:\n            pass") + "MyF.apply(torch.ones(1, "
                      "requires_grad=True)).sum().backward()\n")
    done = launcher.run(["run", "--timeout", "0.5", script], timeout=60)
    assert done.returncode != 0
    assert "TimeoutError: stopped after 0.5 seconds" in done.stderr
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- the diagnostics see custom nodes

_WRONG = '''import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = Square.apply(x).sum()
y.backward()
print(x.grad)
'''

_SINCOS_GRAPH = SINCOS.replace('        print("grads", gs, gc)\n', '') + (
    "s, c = SinCos.apply(x)\nz = (s * 2 + c * 3).sum()\nz.backward()\nprint(x.grad)\n")


def _cli(capsys, tmp_path, source, *args, after=()):
    from gradcli import cli
    script = tmp_path / "script.grad"
    script.write_text(source)
    status = cli.main([*args, str(script), *after])
    captured = capsys.readouterr()
    return status, captured.out, captured.err.replace(str(script), "script.grad")


def test_check_grads_finds_and_locates_a_wrong_custom_backward(capsys, tmp_path):
    status, out, err = _cli(capsys, tmp_path, _WRONG, "run", "--check-grads")
    assert status == 3
    assert out == "tensor([3., 6.])\n"
    assert err.splitlines()[0] == ("script.grad:16: backward(): MISMATCH in x[1]: analytic 6.0, numeric 4.0 (node "
                                   "SquareBackward from line 15: y = Square.apply(x).sum())")


def test_check_grads_passes_a_right_custom_backward_with_several_outputs(capsys, tmp_path):
    status, out, err = _cli(capsys, tmp_path, _SINCOS_GRAPH, "run", "--check-grads")
    assert status == 0
    assert err.splitlines()[0].startswith("script.grad:17: backward(): ok, 1 leaf, 2 elements checked")


def test_graph_shows_the_custom_node_once_with_the_script_line(capsys, tmp_path):
    status, out, err = _cli(capsys, tmp_path, _SINCOS_GRAPH, "graph")
    assert status == 0
    assert out.splitlines() == [
        "SumBackward0  z = (s * 2 + c * 3).sum()  (line 16)",
        "└── AddBackward0  in z = (s * 2 + c * 3).sum()  (line 16)",
        "    ├── MulBackward0  in z = (s * 2 + c * 3).sum()  (line 16)",
        "    │   └── SinCosBackward  in s, c = SinCos.apply(x)  (line 15) [#1]",
        "    │       └── AccumulateGrad ─ x: [2] float32  (line 14)",
        "    └── MulBackward0  in z = (s * 2 + c * 3).sum()  (line 16)",
        "        └── SinCosBackward  in s, c = SinCos.apply(x)  (line 15) [#1, shown above]"]


def test_explain_shows_the_custom_node_step(capsys, tmp_path):
    status, out, err = _cli(capsys, tmp_path, _WRONG, "explain", after=("x",))
    assert status == 0
    assert "[2] SquareBackward  in y = Square.apply(x).sum()  (line 15)\n    in   tensor([1., 1.])\n" \
           "    out  tensor([3., 6.])  → [3]" in out


def test_why_notes_name_the_statement_for_a_custom_node(tmp_path, capsys):
    saver = SAVER + "a = x * 1\ny = Saver.apply(a)\na.mul_(2)\ny.sum().backward()\n"
    status, out, err = _cli(capsys, tmp_path, saver, "run")
    assert status == 1
    assert err.splitlines()[-1] == ("  why: a, saved by SaverBackward at line 16, was modified in place at line 17 "
                                    "(a.mul_(2)); make that change out of place, or make it on a .clone()")
    twice = SAVER + "y = Saver.apply(x)\ns = y.sum()\ns.backward()\ns.backward()\n"
    status, out, err = _cli(capsys, tmp_path, twice, "run")
    assert status == 1
    assert err.splitlines()[-1] == (
        "  why: the backward() call at line 17 (s.backward()) already went through this graph and freed its saved "
        "tensors, which SaverBackward (line 15) needs again now; write s.backward(retain_graph=True) there to go "
        "through the graph again")


def test_explain_shows_a_node_with_several_outputs_once(capsys, tmp_path):
    status, out, err = _cli(capsys, tmp_path, _SINCOS_GRAPH, "explain", after=("x",))
    assert status == 0
    assert ("[5] SinCosBackward  in s, c = SinCos.apply(x)  (line 15)\n    out  tensor([ 0.3169, -1.4438])  → [6]\n"
            in out)


def test_the_metaclasses_print_as_pytorchs():
    # what PyTorch 2.13 printed for the same lines
    source = ("import torch\nclass F(torch.autograd.Function):\n    pass\n"
              "print(type(torch.autograd.graph.Node), type(torch.autograd.Function), type(F), type(torch.Tensor))\n")
    assert gradcli_output(source) == ("<class 'abc.ABCMeta'> <class 'torch.autograd.function.FunctionMeta'> "
                                      "<class 'torch.autograd.function.FunctionMeta'> <class 'torch._C._TensorMeta'>\n")
