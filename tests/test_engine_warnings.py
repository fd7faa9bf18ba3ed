"""Warnings the engine gives while a script runs (PyTorch's TORCH_WARN_ONCE ones), placed at the script's
line that caused them, as PyTorch's Python warning shows them."""

import io

import pytest

from gradcli import cli
from gradcli.session import Session

SCALAR = ("UserWarning: Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
          "Consider using tensor.detach() first. (Triggered internally at "
          "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")


def warnings_of(source: str) -> str:
    err = io.StringIO()
    session = Session(out=io.StringIO(), err=err)
    session.run_source(source, "s.grad")
    return err.getvalue()


def test_float_of_a_tensor_that_requires_grad_warns_once_at_its_line():
    # PyTorch 2.13 prints exactly this for the script (checked with the oracle)
    source = ("import torch\nimport math\nt = torch.tensor(1.5, requires_grad=True)\nx = t * 2\n"
              "print(int(t), t.item())\nvals = [float(v) for v in [x, x]]\nprint(vals, math.sqrt(t))\ny = float(t)\n")
    assert warnings_of(source) == f"s.grad:6: {SCALAR}\n  vals = [float(v) for v in [x, x]]\n"


def test_no_warning_without_requires_grad_or_through_item():
    assert warnings_of("import torch\nt = torch.tensor(1.5)\nfloat(t)\nu = torch.ones(1, requires_grad=True)\n"
                       "u.item(), int(u), float(u.detach())\n") == ""


def test_the_line_is_the_innermost_statement_of_the_script():
    source = ("import torch\ndef accumulate(values):\n    total = 0.0\n    for v in values:\n"
              "        total += float(v)\n    return total\nw = torch.ones(3, requires_grad=True)\n"
              "print(accumulate([w.sum(), w.mean()]))\n")
    assert warnings_of(source) == f"s.grad:5: {SCALAR}\n  total += float(v)\n"


def test_each_session_warns_again(capsys):
    script = "import torch\nfloat(torch.ones(1, requires_grad=True))\n"
    for _ in range(2):
        assert cli.main(["-c", script]) == 0
        assert capsys.readouterr().err == f"<string>:2: {SCALAR}\n  float(torch.ones(1, requires_grad=True))\n"


def test_instantiating_a_custom_function_warns_per_line_as_pytorch_does():
    source = ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n"
              "f = F()\ng = F()\nfor _ in range(2):\n    h = F()\n")
    text = ("DeprecationWarning: <class '__main__.F'> should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself. Instantiating an autograd function will "
            "raise an error in a future version of PyTorch.")
    assert warnings_of(source) == (f"s.grad:9: {text}\n  f = F()\ns.grad:10: {text}\n  g = F()\n"
                                   f"s.grad:12: {text}\n  h = F()\n")


def test_detect_anomaly_warns_where_it_is_made_once_per_line():
    # PyTorch 2.13 prints these two (its warnings module shows a line once); set_detect_anomaly is silent
    source = ("import torch\nwith torch.autograd.set_detect_anomaly(True):\n    pass\n"
              "for i in range(2):\n    with torch.autograd.detect_anomaly():\n        pass\n"
              "d = torch.autograd.detect_anomaly(check_nan=False)\n")
    words = ("UserWarning: Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
             "enabled for debugging.\n")
    assert warnings_of(source) == (f"s.grad:5: {words}  with torch.autograd.detect_anomaly():\n"
                                   f"s.grad:7: {words}  d = torch.autograd.detect_anomaly(check_nan=False)\n")


BYTE_MASK = ("UserWarning: indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. "
             "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)")


def test_a_uint8_mask_warns_once_per_line_and_a_single_value_write_through_it_fails():
    # PyTorch 2.13 prints exactly these (checked with the oracle): reads, writes and index_put warn, once a
    # line; a 0-d uint8 index is a new dim, without a warning; one value written through one uint8 mask goes
    # to masked_fill_, which refuses the mask before any warning
    source = ("import torch\nm = torch.tensor([1, 0, 1, 0], dtype=torch.uint8)\n"
              "print(torch.arange(4.)[torch.tensor(1, dtype=torch.uint8)])\n"
              "for i in range(2):\n    y = torch.arange(4.)[m]\n"
              "x = torch.arange(4.); x[m] = torch.tensor([5., 6.])\n"
              "x.index_put_((m,), torch.tensor([1., 2.]))\n"
              "try:\n    x[m] = torch.tensor([5.])\nexcept RuntimeError as e:\n    print(e)\n"
              "try:\n    x[m] = 5\nexcept RuntimeError as e:\n    print(e)\n")
    err = io.StringIO()
    out = io.StringIO()
    Session(out=out, err=err).run_source(source, "s.grad")
    assert err.getvalue() == (f"s.grad:5: {BYTE_MASK}\n  y = torch.arange(4.)[m]\n"
                              f"s.grad:6: {BYTE_MASK}\n  x = torch.arange(4.); x[m] = torch.tensor([5., 6.])\n"
                              f"s.grad:7: {BYTE_MASK}\n  x.index_put_((m,), torch.tensor([1., 2.]))\n")
    fill = "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char\n"
    assert out.getvalue() == "tensor([[0., 1., 2., 3.]])\n" + fill + fill


def test_nn_init_old_names_warn_at_the_callers_line_once_each():
    # PyTorch 2.13 prints exactly these (checked with the oracle): a FutureWarning per old name and line
    source = ("import torch\nw = torch.empty(3, 5)\ntorch.nn.init.xavier_uniform(w)\nfor i in range(2):\n"
              "    torch.nn.init.constant(w, 0.5)\nprint(torch.nn.init.normal.__name__)\n")
    words = "FutureWarning: `nn.init.{0}` is now deprecated in favor of `nn.init.{0}_`."
    assert warnings_of(source) == (f"s.grad:3: {words.format('xavier_uniform')}\n  torch.nn.init.xavier_uniform(w)\n"
                                   f"s.grad:5: {words.format('constant')}\n  torch.nn.init.constant(w, 0.5)\n")


def test_checkpoint_warns_without_use_reentrant_and_without_inputs_that_require_grad():
    # PyTorch 2.13's two UserWarnings of torch.utils.checkpoint (checked with the oracle), at the script's line
    source = ("import torch\nfrom torch.utils.checkpoint import checkpoint\nx = torch.ones(2, requires_grad=True)\n"
              "y = checkpoint(torch.sin, x)\nz = checkpoint(torch.cos, torch.ones(2), use_reentrant=True)\n"
              "w = checkpoint(torch.cos, torch.ones(2), use_reentrant=False)\n")
    assert warnings_of(source) == (
        "s.grad:4: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
        "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
        "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can "
        "pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.\n"
        "  y = checkpoint(torch.sin, x)\n"
        "s.grad:5: UserWarning: None of the inputs have requires_grad=True. Gradients will be None\n"
        "  z = checkpoint(torch.cos, torch.ones(2), use_reentrant=True)\n")


def test_swalr_warns_as_pytorch_s_schedulers_do():
    # PyTorch 2.13's warnings for this script (checked with the oracle): get_lr() outside step(), a step before
    # the optimizer's, an epoch given to step(); each at the script's line
    source = ("import torch\nfrom torch.optim.swa_utils import SWALR\nw = torch.ones(2, requires_grad=True)\n"
              "opt = torch.optim.SGD([w], lr=0.1)\ns = SWALR(opt, swa_lr=0.05)\nprint(s.get_lr())\ns.step()\n"
              "s.step(3)\n")
    assert warnings_of(source) == (
        "s.grad:6: UserWarning: To get the last learning rate computed by the scheduler, please use "
        "`get_last_lr()`.\n  print(s.get_lr())\n"
        "s.grad:7: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
        "and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  "
        "Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more "
        "details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate\n  s.step()\n"
        "s.grad:8: UserWarning: The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
        "where possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is "
        "different from None, the closed form is used instead of the new chainable form, where available. Please "
        "open an issue if you are unable to replicate your use case: https://github.com/pytorch/pytorch/issues/new/"
        "choose.\n  s.step(3)\n")


def test_wishart_warns_of_low_df_and_of_the_samples_it_redraws():
    # PyTorch 2.13 prints exactly this (checked with the oracle): its rsample takes a positive-definite sample
    # for a singular one and warns whenever it redraws, once per line as Python's warnings module shows them
    source = ("import torch\nD = torch.distributions\ntorch.manual_seed(0)\n"
              "d = D.Wishart(1.5, covariance_matrix=torch.eye(2))\nfor _ in range(2):\n    s = d.rsample((2,))\n"
              "r = D.Wishart(4., covariance_matrix=torch.eye(2)).rsample(max_try_correction=0)\n")
    low = ("UserWarning: Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
           "< ndim.")
    assert warnings_of(source) == (f"s.grad:4: {low}\n  d = D.Wishart(1.5, covariance_matrix=torch.eye(2))\n"
                                   "s.grad:6: UserWarning: Singular sample detected.\n  s = d.rsample((2,))\n"
                                   "s.grad:7: UserWarning: Singular sample detected.\n"
                                   "  r = D.Wishart(4., covariance_matrix=torch.eye(2)).rsample(max_try_correction=0)\n")


def test_an_out_tensor_with_elements_is_resized_with_pytorch_s_warning():
    # PyTorch 2.13's warning (checked with the oracle); an empty out tensor is resized without one
    source = ("import torch\na = torch.ones(2, 3)\nr = torch.empty(3)\ntorch.matmul(a, a.T, out=r)\n"
              "torch.add(a, a, out=torch.empty(0))\n")
    assert warnings_of(source) == (
        "s.grad:4: UserWarning: An output with one or more elements was resized since it had shape [3], which does "
        "not match the required output shape [2, 2]. This behavior is deprecated, and in a future PyTorch release "
        "outputs will not be resized unless they have zero elements. You can explicitly reuse an out tensor t by "
        "resizing it, inplace, to zero elements with t.resize_(0). (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)\n  torch.matmul(a, a.T, out=r)\n")


def test_every_out_function_resizes_with_that_warning_and_the_factories_as_pytorch_s_do():
    # PyTorch 2.13 (checked with the oracle): the warning for an out tensor that held elements, whichever function
    # and for each tensor of an out tuple; the factories resize theirs silently, arange with its own warning, and
    # the ranges keep an out's shape of as many elements
    source = ("import torch\nx = torch.tensor([0.5, 1.0, 2.0])\ntorch.sin(x, out=torch.empty(2))\n"
              "torch.max(torch.ones(2, 2), 1, out=(torch.empty(5), torch.empty(0, dtype=torch.long)))\n"
              "torch.linalg.inv(torch.eye(2), out=torch.empty(3))\ntorch.zeros(2, out=torch.empty(3))\n"
              "torch.rand(2, out=torch.empty(3))\ntorch.arange(4, out=torch.empty(3))\n"
              "print(torch.arange(4, out=torch.empty(2, 2)).shape, torch.linspace(0, 1, 4, out=torch.empty(4, 1)).shape)\n"
              "torch.exp(x, out=torch.empty(0))\n")
    resized = ("UserWarning: An output with one or more elements was resized since it had shape [{}], which does not "
               "match the required output shape [{}]. This behavior is deprecated, and in a future PyTorch release "
               "outputs will not be resized unless they have zero elements. You can explicitly reuse an out tensor t "
               "by resizing it, inplace, to zero elements with t.resize_(0). (Triggered internally at "
               "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)\n")
    assert warnings_of(source) == (
        "s.grad:3: " + resized.format("2", "3") + "  torch.sin(x, out=torch.empty(2))\n"
        "s.grad:4: " + resized.format("5", "2")
        + "  torch.max(torch.ones(2, 2), 1, out=(torch.empty(5), torch.empty(0, dtype=torch.long)))\n"
        "s.grad:5: " + resized.format("3", "2, 2") + "  torch.linalg.inv(torch.eye(2), out=torch.empty(3))\n"
        "s.grad:8: UserWarning: The number of elements in the out tensor of shape [3] is 3 which does not match the "
        "computed number of elements 4. Note that this may occur as a result of rounding error. The out tensor will "
        "be resized to a tensor of shape (4,). (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/RangeFactories.cpp:199.)\n  torch.arange(4, out=torch.empty(3))\n")


def test_a_transform_into_an_out_tensor_of_another_shape_warns_as_pytorch_does():
    # torch.fft's out= forms resize with the same warning (PyTorch 2.13, checked with the oracle)
    source = "import torch\nx = torch.tensor([1., 2.])\ny = torch.fft.fft(x, out=torch.empty(3, dtype=torch.cfloat))\n"
    assert warnings_of(source) == (
        "s.grad:3: UserWarning: An output with one or more elements was resized since it had shape [3], which does "
        "not match the required output shape [2]. This behavior is deprecated, and in a future PyTorch release "
        "outputs will not be resized unless they have zero elements. You can explicitly reuse an out tensor t by "
        "resizing it, inplace, to zero elements with t.resize_(0). (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)\n"
        "  y = torch.fft.fft(x, out=torch.empty(3, dtype=torch.cfloat))\n")


def test_loading_a_state_dict_into_meta_parameters_warns_per_tensor():
    """PyTorch 2.13's UserWarning for each parameter a copy cannot reach (checked with the oracle; its location is
    PyTorch's own module.py there, the script's line here); assign=True gives none."""
    source = ("import torch\nm = torch.nn.Linear(3, 2, device='meta')\nsd = torch.nn.Linear(3, 2).state_dict()\n"
              "m.load_state_dict(sd)\nm.load_state_dict(sd, assign=True)\n")
    text = ("s.grad:4: UserWarning: for {}: copying from a non-meta parameter in the checkpoint to a meta parameter in "
            "the current model, which is a no-op. (Did you mean to pass `assign=True` to assign items in the state "
            "dictionary to their corresponding key in the module instead of copying them in place?)\n"
            "  m.load_state_dict(sd)\n")
    assert warnings_of(source) == text.format("weight") + text.format("bias")


def test_sparse_coo_tensor_without_check_invariants_warns_once():
    # PyTorch 2.13 (checked with the oracle): only a sparse_coo_tensor call that leaves check_invariants unset
    # warns, once a process; to_sparse never does
    source = ("import torch\ni = [[0, 1]]\na = torch.sparse_coo_tensor(i, [1., 2.], (3,), check_invariants=False)\n"
              "b = torch.ones(2).to_sparse()\nc = torch.sparse_coo_tensor(i, [1., 2.])\n"
              "d = torch.sparse_coo_tensor(i, [3., 4.])\n")
    assert warnings_of(source) == (
        "s.grad:5: UserWarning: Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will "
        "occur when operating on a sparse tensor which violates the invariants, but checks incur performance "
        "overhead. To silence this warning, explicitly opt in or out. See "
        "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)\n  c = torch.sparse_coo_tensor(i, [1., 2.])\n")


def test_mse_and_l1_loss_warn_of_a_target_size_that_broadcasts():
    # PyTorch 2.13 prints exactly these two for the functional forms (checked with the oracle); the warning is
    # shown once per line, as Python's warnings module shows it
    source = ("import torch\nimport torch.nn.functional as F\nx = torch.ones(3, 1, requires_grad=True)\n"
              "y = torch.ones(3)\nfor i in range(2):\n    a = F.mse_loss(x, y)\nb = F.l1_loss(x, y, reduction='sum')\n"
              "c = F.mse_loss(x, y.unsqueeze(1))\n")
    words = ("UserWarning: Using a target size (torch.Size([3])) that is different to the input size "
             "(torch.Size([3, 1])). This will likely lead to incorrect results due to broadcasting. Please ensure "
             "they have the same size.\n")
    assert warnings_of(source) == (f"s.grad:6: {words}  a = F.mse_loss(x, y)\n"
                                   f"s.grad:7: {words}  b = F.l1_loss(x, y, reduction='sum')\n")


def test_set_default_tensor_type_warns_once_that_it_is_deprecated():
    # PyTorch's TORCH_WARN_ONCE, shown at torch/__init__.py's line there (gradcli places it at the script's)
    source = ("import torch\ntorch.set_default_tensor_type(torch.DoubleTensor)\nprint(torch.ones(1).dtype)\n"
              "torch.set_default_tensor_type('torch.FloatTensor')\n")
    assert warnings_of(source) == (
        "s.grad:2: UserWarning: torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives. (Triggered internally at "
        "/__w/pytorch/pytorch/torch/csrc/tensor/python_tensor.cpp:434.)\n"
        "  torch.set_default_tensor_type(torch.DoubleTensor)\n")


def test_a_refused_flash_kernel_says_why_before_the_error():
    # PyTorch 2.13's debug pass over the flash kernel's gates, as it prints them with only that kernel enabled
    source = ("import torch\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\nq = torch.ones(2, 3, 4)\n"
              "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    try:\n"
              "        torch.nn.functional.scaled_dot_product_attention(q, q, q)\n"
              "    except RuntimeError as e:\n        print(e)\n")
    where = "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/transformers/"
    line = "  torch.nn.functional.scaled_dot_product_attention(q, q, q)\n"
    assert warnings_of(source) == (
        f"s.grad:6: UserWarning: Flash attention kernel not used because: {where}sdp_utils_cpp.cpp:99.)\n" + line +
        "s.grad:6: UserWarning: All fused kernels requires query, key and value to be 4 dimensional, but got Query "
        f"dim: 3, Key dim: 3, Value dim: 3 instead. {where}sdp_utils_cpp.h:327.)\n" + line)


def test_an_always_call_forward_hook_that_fails_after_forward_failed_is_a_warning():
    # PyTorch 2.13: the hook's error becomes this warning and forward's ValueError goes on (checked with the oracle)
    source = ("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        raise ValueError('no')\n"
              "m = M()\ndef hook(mod, args, out):\n    raise KeyError('logger is down')\n"
              "m.register_forward_hook(hook, always_call=True)\ntry:\n    m(torch.ones(1))\n"
              "except ValueError as e:\n    print(e)\n")
    assert warnings_of(source) == (
        "s.grad:10: UserWarning: module forward hook with ``always_call=True`` raised an exception that was "
        "silenced as another error was raised in forward: 'logger is down'\n  m(torch.ones(1))\n")


def test_gradcheck_of_an_input_that_is_not_float64_warns_as_pythons_registry_allows():
    # PyTorch 2.13's Python warning comes from one line of its gradcheck: CPython shows it once per message, but
    # the first gradient PyTorch is given as a tensor (gradcheck gives one) imports sympy, whose import empties
    # the registries, so the second call warns again and the third does not (checked with the oracle)
    source = ("import torch\nx = torch.ones(2, requires_grad=True)\n"
              "torch.autograd.gradcheck(torch.sin, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)\n"
              "torch.autograd.gradcheck(torch.cos, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)\n"
              "torch.autograd.gradcheck(torch.exp, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)\n"
              "torch.autograd.gradcheck(torch.mul, (x.double(), x), atol=1e-2, rtol=1e-2, eps=1e-3, "
              "raise_exception=False)\n")
    text = ("UserWarning: Input #{} requires gradient and is not a double precision floating point or complex. "
            "This check will likely fail if all the inputs are not of double precision floating point or complex. ")
    lines = source.splitlines()
    assert warnings_of(source) == (f"s.grad:3: {text.format(0)}\n  {lines[2]}\ns.grad:4: {text.format(0)}\n  {lines[3]}\n"
                                   f"s.grad:6: {text.format(1)}\n  {lines[5]}\n")


@pytest.mark.parametrize("trigger", ["(x * 2).backward(torch.ones(2))",
                                     "opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)"])
def test_what_imports_sympy_in_pytorch_lets_a_script_warning_show_again(trigger):
    # PyTorch's lazy import of sympy (a gradient given as a tensor, an optimiser made) empties CPython's registries
    # once (checked with the oracle)
    source = ("import torch\nimport warnings\nx = torch.ones(2, requires_grad=True)\nfor i in range(3):\n"
              f"    warnings.warn('w')\n    if i == 1:\n        {trigger}\n")
    assert warnings_of(source) == "s.grad:5: UserWarning: w\n  warnings.warn('w')\n" * 2


def test_linear_cross_entropy_options_that_the_chunked_path_cannot_take_warn_at_the_call():
    # PyTorch 2.13's words (checked with the oracle); the reference path gives the value
    source = ("import torch\nx = torch.ones(6, 4)\nw = torch.ones(3, 2, 4)\nb = torch.ones(3, 2)\n"
              "o = torch.nn.LinearCrossEntropyOptions()\n"
              "l = torch.nn.functional.linear_cross_entropy(x, w, torch.zeros(6, 2, dtype=torch.long), linear_bias=b, "
              "options=o)\n")
    assert warnings_of(source) == (
        "s.grad:6: UserWarning: linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
        "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
        "reduction='mean', label_smoothing=0.0, target.dtype=torch.int64, out_features=(2,), tracing=False, "
        "linear_bias.shape=(3, 2).\n"
        "  l = torch.nn.functional.linear_cross_entropy(x, w, torch.zeros(6, 2, dtype=torch.long), linear_bias=b, "
        "options=o)\n")


def test_schedulers_stepped_before_the_optimiser_warn_at_each_line_that_steps_them():
    # PyTorch's step() warns with stacklevel=2: once per line of the script that called it (checked with the oracle)
    source = ("import torch\nopt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)\n"
              "s1 = torch.optim.lr_scheduler.StepLR(opt, 1)\ns1.step()\ns2 = torch.optim.lr_scheduler.StepLR(opt, 1)\n"
              "s2.step()\nfor _ in range(2):\n    torch.optim.lr_scheduler.StepLR(opt, 1).step()\n")
    text = ("UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
            "later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  "
            "Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See "
            "more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")
    assert warnings_of(source) == (f"s.grad:4: {text}\n  s1.step()\ns.grad:6: {text}\n  s2.step()\n"
                                   f"s.grad:8: {text}\n  torch.optim.lr_scheduler.StepLR(opt, 1).step()\n")


def test_torch_range_warns_that_it_is_deprecated_once_per_line_after_its_arguments_are_parsed():
    # PyTorch 2.13 prints exactly this (checked with the oracle): no warning for a call its parser refuses
    text = ("UserWarning: torch.range is deprecated and will be removed in a future release because its behavior "
            "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
            "[start, end).")
    source = ("import torch\nfor _ in range(2):\n    x = torch.range(1, 4)\ntry:\n    torch.range(1)\n"
              "except TypeError:\n    pass\ntry:\n    torch.range(1, 4, 0)\nexcept RuntimeError:\n    pass\n")
    assert warnings_of(source) == f"s.grad:3: {text}\n  x = torch.range(1, 4)\ns.grad:9: {text}\n  torch.range(1, 4, 0)\n"


def test_set_warn_always_gives_a_once_per_process_warning_at_every_line_while_it_is_on():
    # PyTorch 2.13 prints exactly these four (checked with the oracle): Python's filter still shows a line once
    source = ("import torch\nt = torch.tensor(1.5, requires_grad=True)\nfloat(t)\nfloat(t)\ntorch.set_warn_always(True)\n"
              "float(t)\nfloat(t)\nfor _ in range(2):\n    float(t)\ntorch.set_warn_always(False)\nfloat(t)\n")
    assert warnings_of(source) == "".join(f"s.grad:{line}: {SCALAR}\n  {text}\n" for line, text in (
        (3, "float(t)"), (6, "float(t)"), (7, "float(t)"), (9, "float(t)")))


def test_nuclear_and_frobenius_norm_warn_that_they_are_deprecated_once_per_process():
    # PyTorch 2.13 prints exactly these two (checked with the oracle): TORCH_WARN_ONCE
    text = ("UserWarning: at::{name} is deprecated and it is just left for JIT compatibility. It will be removed in a "
            "future PyTorch release. Please use `{instead}` instead (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:{line}.)")
    source = ("import torch\nx = torch.ones(2, 2)\ntorch.nuclear_norm(x)\ntorch.nuclear_norm(x)\n"
              "torch.frobenius_norm(x, (0, 1))\ntorch.frobenius_norm(x, (0, 1))\n")
    nuc = text.format(name="nuclear_norm", instead="linalg.matrix_norm(A, 'nuc', dim, keepdim)", line=3229)
    fro = text.format(name="frobenius_norm", instead="linalg.vector_norm(A, 2., dim, keepdim)", line=3175)
    assert warnings_of(source) == (f"s.grad:3: {nuc}\n  torch.nuclear_norm(x)\n"
                                   f"s.grad:5: {fro}\n  torch.frobenius_norm(x, (0, 1))\n")


def test_the_deprecated_resize_and_resize_as_warn_at_each_line():
    # PyTorch 2.13 prints exactly this (checked with the oracle): warnings.warn in torch/_tensor.py
    source = ("import torch\nx = torch.arange(6.)\nfor _ in range(2):\n    y = x.resize(2, 3)\n"
              "z = x.resize_as(torch.zeros(3, 2))\n")
    assert warnings_of(source) == ("s.grad:4: UserWarning: non-inplace resize is deprecated\n  y = x.resize(2, 3)\n"
                                   "s.grad:5: UserWarning: non-inplace resize_as is deprecated\n"
                                   "  z = x.resize_as(torch.zeros(3, 2))\n")


def test_stft_and_istft_warn_once_each():
    # PyTorch 2.13's TORCH_WARN_ONCE warnings (checked with the oracle, where the location is torch/functional.py's
    # call of the C++ stft for stft's two; gradcli places them at the script's line): no window, the deprecated
    # real output, istft's missing window and its zero-padded length; each once, whatever follows
    source = ("import torch\nx = torch.randn(20)\nfor i in range(2):\n    S = torch.stft(x, 8, return_complex=True)\n"
              "R = torch.stft(x, 8, window=torch.hann_window(8), return_complex=False)\n"
              "R = torch.stft(x, 8, window=torch.hann_window(8), return_complex=False)\n"
              "y = torch.istft(S, 8)\ny = torch.istft(S, 8, length=30)\ny = torch.istft(S, 8, length=30)\n")
    at = " (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:{}.)\n"
    assert warnings_of(source) == (
        "s.grad:4: UserWarning: A window was not provided. A rectangular window will be applied,which is known to "
        "cause spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to "
        "reduce spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
        "`window=torch.ones(n_fft, device=<device>)`." + at.format(835) + "  S = torch.stft(x, 8, return_complex=True)\n"
        "s.grad:5: UserWarning: stft with return_complex=False is deprecated. In a future pytorch release, stft will "
        "return complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still "
        "call torch.view_as_real on the complex output to recover the old return format." + at.format(874)
        + "  R = torch.stft(x, 8, window=torch.hann_window(8), return_complex=False)\n"
        "s.grad:7: UserWarning: A window was not provided. A rectangular window will be applied.Please provide the "
        "same window used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
        "window, explicitly set `window=torch.ones(n_fft, device=<device>)`." + at.format(1035)
        + "  y = torch.istft(S, 8)\n"
        "s.grad:8: UserWarning: The length of signal is shorter than the length parameter. Result is being padded "
        "with zeros in the tail. Please check your center and hop_length settings." + at.format(1199)
        + "  y = torch.istft(S, 8, length=30)\n")


def test_copy_constructing_from_a_tensor_warns_at_each_line_after_the_arguments_are_read():
    # PyTorch 2.13 prints exactly this (checked with the oracle): TORCH_WARN in torch.tensor and Tensor.new_tensor,
    # shown once per line; a list of tensors, torch.as_tensor and torch.Tensor do not warn, and an argument error
    # comes first (Raschka's `assign` wraps torch.tensor(right) of a loaded weight in a Parameter)
    text = ("UserWarning: To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than {}(sourceTensor).")
    source = ("import torch\nt = torch.ones(2)\ndef assign(right):\n    return torch.nn.Parameter(torch.tensor(right))\n"
              "for _ in range(2):\n    w = assign(t)\nc = torch.tensor([torch.tensor(1.), t[0]])\n"
              "e, f = torch.as_tensor(t), torch.Tensor(t)\nd = t.new_tensor(torch.tensor(2., requires_grad=True))\n"
              "try:\n    torch.tensor(t, requires_grad=1)\nexcept TypeError as e:\n    print(e)\n")
    assert warnings_of(source) == (f"s.grad:4: {text.format('torch.tensor')}\n"
                                   "  return torch.nn.Parameter(torch.tensor(right))\n"
                                   f"s.grad:9: {text.format('tensor.new_tensor')}\n"
                                   "  d = t.new_tensor(torch.tensor(2., requires_grad=True))\n")


def test_softmax_without_a_dim_warns_at_the_line_or_once_from_a_module():
    # PyTorch 2.13 (checked with the oracle): F.softmax, log_softmax and softmin warn with stacklevel=3, at the
    # script's line; nn.Softmax and its kin with stacklevel=5, at a line of PyTorch's module code (shown once)
    text = ("UserWarning: Implicit dimension choice for {} has been deprecated. Change the call to include dim=X as "
            "an argument.")
    source = ("import torch\nimport torch.nn.functional as F\nx = torch.ones(2, 3)\nfor _ in range(2):\n"
              "    a = F.softmax(x)\nb = F.log_softmax(x)\nc = F.softmin(x, dim=None)\nm = torch.nn.Softmax()\n"
              "d, e = m(x), m(x)\nf = F.softmax(x, dim=1)\n")
    assert warnings_of(source) == (f"s.grad:5: {text.format('softmax')}\n  a = F.softmax(x)\n"
                                   f"s.grad:6: {text.format('log_softmax')}\n  b = F.log_softmax(x)\n"
                                   f"s.grad:7: {text.format('softmin')}\n  c = F.softmin(x, dim=None)\n"
                                   f"s.grad:9: {text.format('softmax')}\n  d, e = m(x), m(x)\n")


def test_x_T_of_other_than_a_matrix_warns_once_per_process():
    # PyTorch 2.13 (checked with the oracle): TORCH_WARN_ONCE, one message for 0-d tensors, one for the others
    source = ("import torch\na = torch.ones(2, 3, 4).T\nb = torch.ones(2).T\nc = torch.ones(2, 3).T\n"
              "d = torch.tensor(1.).T\ne = torch.tensor(2.).T\n")
    assert warnings_of(source) == (
        "s.grad:2: UserWarning: The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
        "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices "
        "or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. (Triggered "
        "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)\n  a = torch.ones(2, 3, 4).T\n"
        "s.grad:5: UserWarning: Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases. "
        "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)\n"
        "  d = torch.tensor(1.).T\n")


def test_deprecated_clip_grad_norm_and_legacy_loss_arguments_warn_at_the_line():
    # PyTorch 2.13's words (checked with the oracle); the functional losses' size_average/reduce warn as the
    # modules' do, before the arguments are checked
    legacy = "UserWarning: size_average and reduce args will be deprecated, please use reduction='{}' instead."
    source = ("import torch\nimport torch.nn.functional as F\nm = torch.nn.Linear(2, 1)\nm(torch.ones(1, 2)).sum()"
              ".backward()\nn = torch.nn.utils.clip_grad_norm(m.parameters(), 1.0)\nx = torch.zeros(3, 4)\n"
              "t = torch.tensor([0, 1, 2])\na = F.nll_loss(x, t, size_average=False)\n"
              "b = F.cross_entropy(x, t, reduce=False)\nc = F.mse_loss(x, x, size_average=True)\n"
              "d = F.binary_cross_entropy(torch.sigmoid(x), x, reduce=False)\n"
              "try:\n    F.cross_entropy(x, [0], size_average=True)\nexcept TypeError as e:\n    pass\n")
    assert warnings_of(source) == (
        "s.grad:5: FutureWarning: `torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.\n  n = torch.nn.utils.clip_grad_norm(m.parameters(), 1.0)\n"
        f"s.grad:8: {legacy.format('sum')}\n  a = F.nll_loss(x, t, size_average=False)\n"
        f"s.grad:9: {legacy.format('none')}\n  b = F.cross_entropy(x, t, reduce=False)\n"
        f"s.grad:10: {legacy.format('mean')}\n  c = F.mse_loss(x, x, size_average=True)\n"
        f"s.grad:11: {legacy.format('none')}\n  d = F.binary_cross_entropy(torch.sigmoid(x), x, reduce=False)\n"
        f"s.grad:13: {legacy.format('mean')}\n  F.cross_entropy(x, [0], size_average=True)\n")


def test_std_and_var_without_degrees_of_freedom_warn_at_each_line():
    # PyTorch 2.13 (checked with the oracle): TORCH_WARN, named after the function; a batch of one's std
    text = ("UserWarning: {}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
            "factor (input numel divided by output numel). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)")
    source = ("import torch\nfor _ in range(2):\n    a = torch.ones(1).std()\nb = torch.ones(2, 1).var(dim=1)\n"
              "c = torch.std_mean(torch.ones(2), correction=2)\nd = torch.ones(2).std(correction=1)\n"
              "e = torch.var_mean(torch.ones(0))\n")
    assert warnings_of(source) == (f"s.grad:3: {text.format('std')}\n  a = torch.ones(1).std()\n"
                                   f"s.grad:4: {text.format('var')}\n  b = torch.ones(2, 1).var(dim=1)\n"
                                   f"s.grad:5: {text.format('std_mean')}\n"
                                   "  c = torch.std_mean(torch.ones(2), correction=2)\n"
                                   f"s.grad:7: {text.format('var_mean')}\n  e = torch.var_mean(torch.ones(0))\n")


def test_more_workers_than_cpus_warn_when_the_loader_is_made_and_when_a_pass_starts():
    # PyTorch 2.13's words (checked with the oracle): two lines of its code, each shown once; the suggested number
    # is the CPUs this process may run on, as PyTorch counts them
    import os
    cpus = len(os.sched_getaffinity(0))
    text = (f"UserWarning: This DataLoader will create {cpus + 1} worker processes in total. Our suggested max number "
            f"of worker in current system is {cpus}, which is smaller than what this DataLoader is going to create. "
            "Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower "
            "the worker number to avoid potential slowness/freeze if necessary.")
    source = ("import torch\nds = torch.utils.data.TensorDataset(torch.arange(4.))\n"
              f"L = torch.utils.data.DataLoader(ds, num_workers={cpus + 1})\nfor _ in range(2):\n    b = list(L)\n"
              f"M = torch.utils.data.DataLoader(ds, num_workers={cpus})\nc = list(M)\n")
    assert warnings_of(source) == f"s.grad:3: {text}\n  L = torch.utils.data.DataLoader(ds, num_workers={cpus + 1})\n" \
                                  f"s.grad:5: {text}\n  b = list(L)\n"
