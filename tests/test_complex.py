"""Complex numbers in the language (each snippet's output compared with CPython's own, run here) and complex
tensors' refusals, escapes and state (tests/engine_cases/complex.txt compares the printed values with PyTorch's)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from conftest import gradcli_output, run_script
from gradcli.engine.state import STATE

# pure-Python snippets: gradcli must print what CPython prints
PYTHON = [
    "print(1j, 2.5j, 1e3j, 1_0j, .5j, 0j, -0j, 1+2j, (1+2j)*(3-4j), 1/(1+1j), 1e300j*1e300j)",
    "print(repr(1+2j), str(-0.0-0j), complex(1, 2), complex('1+2j'), complex(), complex(3), complex(real=1, imag=2))",
    "print(abs(3+4j), (3+4j).real, (3+4j).imag, (3+4j).conjugate(), hash(1j), hash(1+0j) == hash(1))",
    "print(f'{1+2j}', f'{1+2j:.3f}', f'{1.5+2j:>20}', format(1+2j, 'g'), '%s' % (1j,), f'{1j!r} {2+0j=}')",
    "print(isinstance(1j, complex), isinstance(1, complex), type(1j), complex, type(1j) is complex)",
    "print(sum([1j, 2, 3.5]), {1j: 2}[1j], 1j in [1j], 1+0j == 1, 1j != 1j, bool(0j), bool(-0j), bool(1e-300j))",
    "print((1+2j)**2, (1+2j)**0.5, 2**(1j), pow(1j, 2), (-1) ** 0.5, (-8) ** (1 / 3), 1j**1000)",
    "class C:\n    def __complex__(self): return 2+3j\nprint(complex(C()))",
    "match 1+2j:\n    case 1+2j: print('a')\nmatch -2.5j:\n    case -2.5j: print('b')\nmatch 3-1j:\n"
    "    case 1 | 3-1j: print('c')",
]
ERRORS = ["1j < 2j", "complex('abc')", "complex('1', 2)", "complex(1j, 'a')", "1j % 2", "1j // 2", "int(1j)",
          "float(1j)", "0j ** -1", "1 / 0j", "round(1j)", "f'{1j:d}'", "f'{1j:=10}'", "f'{1j:010}'", "(2+0j) ** 10000",
          "complex(10 ** 400)", "max(1j, 2j)", "sorted([1j, 2j])", "1j.imag.imag.imag + []"]


def _python(source: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<py>", "exec"), {})
    return out.getvalue()


@pytest.mark.parametrize("source", PYTHON)
def test_complex_numbers_print_as_cpython(source):
    result = run_script(source)
    assert result.error is None, result.error
    assert result.out == _python(source)


@pytest.mark.parametrize("expr", ERRORS)
def test_complex_errors_are_cpythons(expr):
    source = f"try:\n    print({expr})\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    assert run_script(source).out == _python(source)


@pytest.mark.parametrize("source, message", [
    ("(1j).__reduce_ex__(2)", "'complex' object attribute '__reduce_ex__' is outside gradcli's language"),
    ("getattr(1j, '__reduce__')", "'complex' object attribute '__reduce__' is outside gradcli's language"),
    ("(1j).__class__.__subclasses__()", "is outside gradcli's language"),
    ("type(1j).__dict__", "is outside gradcli's language"),
    ("complex.__getnewargs__", "is outside gradcli's language"),
    ("'{0.real.__class__.__mro__}'.format(1j)", "is outside gradcli's language"),
    ("f'{1j:999999999999}'", "format width or precision 999999999999 is too large"),
    ("torch.ones(1, dtype=torch.cfloat).conj()._a", "'Tensor' object has no attribute '_a'"),
    ("torch.view_as_real(torch.ones(1, dtype=torch.cfloat)).numpy()", "scripts cannot reach numpy arrays"),
])
def test_escape_attempts_through_complex_values_are_refused(source, message):
    result = run_script(f"import torch\nprint({source})\n")
    assert result.error is not None and message in result.error.message, (result.out, result.error)


def test_a_real_script_never_checks_ops_for_complex_values():
    """The refusal check (complexops.check in recording.apply, the guarded call paths) costs nothing until a
    session may meet complex values: its text has none, and no op has made one."""
    result = run_script("import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sigmoid().sum().backward()\n"
                        "print(x.grad, x.dtype)\n")
    assert result.error is None and not STATE.complex_seen
    assert result.out == "tensor([0.2100, 0.2100]) torch.float32\n"


@pytest.mark.parametrize("line, error", [
    ("torch.sigmoid(z)", "NotImplementedError: gradcli does not implement complex tensors in torch.sigmoid"),
    ("z.sin()", "NotImplementedError: gradcli does not implement complex tensors in torch.Tensor.sin"),
    ("torch.nn.functional.softplus(z)",
     "NotImplementedError: gradcli does not implement complex tensors in torch.nn.functional.softplus"),
    ("torch.nn.Linear(2, 2)(z)", "RuntimeError: mat1 and mat2 must have the same dtype, but got ComplexFloat and Float"),
    ("z < z", "NotImplementedError: \"lt_cpu\" not implemented for 'ComplexFloat'"),
    ("torch.clamp(z, 0, 1)", "NotImplementedError: clamp is not supported for complex types"),
    ("z.add_(1)", "NotImplementedError: gradcli does not implement complex tensors in torch.Tensor.add_"),
    ("z.conj()[0] = 1", "NotImplementedError: gradcli does not implement writing through a conjugate view"),
    ("z.conj().real[0] = 1", "NotImplementedError: gradcli does not implement writing through a conjugate view"),
    ("torch.ones(2, dtype=torch.float16) + 1j", "NotImplementedError: gradcli does not implement torch.complex32"),
    ("torch.ones(2, 2, dtype=torch.cfloat) @ torch.ones(2, dtype=torch.cfloat)",
     "NotImplementedError: gradcli does not implement complex tensors in torch.matmul beyond"),
    ("torch.autograd.grad((z * z).abs().sum(), z, create_graph=True)",
     "NotImplementedError: gradcli does not implement create_graph=True through complex tensors"),
    ("2 ** z", "NotImplementedError: gradcli does not implement complex tensors in torch.pow"),
])
def test_ops_not_checked_with_complex_values_refuse_them(line, error):
    result = run_script(f"import torch\nz = torch.tensor([1+2j, 3j], requires_grad=True)\n{line}\n")
    assert result.error is not None
    assert f"{result.error.kind}: {result.error.message}".startswith(error), result.error


def test_a_complex_value_made_inside_the_call_is_refused_too():
    """`(-1) ** 0.5` makes a complex value without any complex text: the op's own refusal stops it."""
    result = run_script("import torch\nprint(torch.max(torch.tensor([(-1) ** 0.5, 2])))\n")
    assert result.error.message == "\"max_all\" not implemented for 'ComplexFloat'"


def test_a_session_starts_without_complex_values():
    run_script("import torch\nz = torch.ones(1) * 1j\n")
    result = run_script("import torch\nprint(torch.ones(1).sigmoid())\n")
    assert result.out == "tensor([0.7311])\n" and not STATE.complex_seen


def test_forward_mode_tangents_of_complex_ops():
    """Values printed by PyTorch 2.13 for the same script."""
    source = ("import torch\nimport torch.autograd.forward_ad as fwAD\nz = torch.tensor([1+2j, 3j])\n"
              "w = torch.tensor([0.5-1j, 2+1j])\n"
              "with fwAD.dual_level():\n"
              "    d = fwAD.make_dual(z, torch.tensor([1+0.5j, -1j]))\n"
              "    e = fwAD.make_dual(w, torch.tensor([2j, 1+1j]))\n"
              "    for y in (d * e, d.abs(), d.angle(), d.exp(), torch.vdot(d, e)):\n"
              "        print(fwAD.unpack_dual(y).tangent)\n")
    assert run_script(source).out == (
        "tensor([-3.+1.2500j, -2.+1.0000j])\n"
        "tensor([ 0.8944, -1.0000])\n"
        "tensor([-0.3000, -0.0000])\n"
        "tensor([-2.3671+1.9061j,  0.1411+0.9900j])\n"
        "tensor(6.-0.2500j)\n")


def test_complex_arrays_stay_inside_the_engine():
    result = run_script("import torch\nz = torch.tensor([1+2j])\nprint(type(z.item()), type(z.tolist()[0]), "
                        "type(z.real), z.real.dtype, z.imag.dtype)\n")
    assert result.out == "<class 'complex'> <class 'complex'> <class 'torch.Tensor'> torch.float32 torch.float32\n"
    assert np.__name__ not in result.out


def test_a_float_row_given_complex_values_refuses_without_numpys_warning():
    """gradcheck's forward-mode and fast paths call the rows themselves: a complex input is refused before numpy
    could cast it to floats (its ComplexWarning named gradcli's own file on stderr)."""
    import warnings
    import numpy as np
    source = ("import torch\nz = torch.randn(3, dtype=torch.cdouble, requires_grad=True)\n"
              "for f in (lambda: torch.autograd.gradcheck(torch.exp, (z,), check_forward_ad=True),\n"
              "          lambda: torch.autograd.gradcheck(torch.sin, (z,), fast_mode=True)):\n"
              "    try:\n        f()\n    except NotImplementedError as e:\n        print(e)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        assert gradcli_output(source) == ("gradcli does not implement complex tensors in torch.exp\n"
                                          "gradcli does not implement complex tensors in torch.sin\n")
