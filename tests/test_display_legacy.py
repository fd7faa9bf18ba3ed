"""Exact-string tests of the legacy (PyTorch 0.3) display: the number format, 1-D/2-D/N-d layouts, footers, the
Variable header, the display switch, and the 0.3 notebook in the shared seeds.

Expected texts marked "observed" are 0.3 outputs quoted in facts/display.md section 5 or in seed 001; the others
apply the section's rules by hand (its worked derivations where it has one).
"""

from __future__ import annotations

import importlib.util
import io
import sys

import numpy as np
import pytest

from conftest import ROOT, normalize
from gradcli.display import PrintOptions, legacy, tensor_repr
from gradcli.errors import ScriptError
from gradcli.session import Session

SEED = ROOT.parent / "shared" / "seeds" / "001_f872a66c1752ac43.txt"
TOOL = ROOT / "tools" / "legacy_golden.py"
NOTEBOOK = ROOT / "examples" / "variable_notebook.grad"
NOTEBOOK_GOLDEN = ROOT / "tests" / "examples" / "variable_notebook.legacy.out"

needs_seed = pytest.mark.skipif(not SEED.exists(), reason="the shared seeds are not beside the repository")


def _load_tool():
    spec = importlib.util.spec_from_file_location("legacy_golden", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


legacy_golden = _load_tool()


def opts(**kwargs) -> PrintOptions:
    o = PrintOptions()
    o.set(**kwargs)
    o.display = "legacy"
    return o


def plain(values, dtype="float32", **options) -> str:
    """str() of a plain 0.3 tensor."""
    return legacy.tensor_repr(np.asarray(values, dtype=dtype), dtype, opts=opts(**options), variable=False)


def variable(values, dtype="float32", **options) -> str:
    return legacy.tensor_repr(np.asarray(values, dtype=dtype), dtype, opts=opts(**options))


def run_legacy(source: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    Session(out=out, err=err, display="legacy").run_source(source, "<test>")
    return out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def modern_afterwards():
    """The display mode lives in the process-wide print options: leave them modern for the other tests."""
    yield
    Session(out=io.StringIO(), err=io.StringIO())


# ---------------------------------------------------------------------------------------------------------------
# The number format.
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, min_width, spec, width, scale", [
    ([1, 1], -1, "2.0f", 2, 1),                  # integer values: digits + 1
    ([27], -1, "3.0f", 3, 1),
    ([703], -1, "4.0f", 4, 1),
    ([0, 0], -1, "2.0f", 2, 1),
    ([-22, 0], -1, "3.0f", 3, 1),
    ([1, 1], 5, "5.0f", 5, 1),                   # a caller's minimum width wins
    ([99999], -1, "6.0f", 6, 1),
    ([100000, 1], -1, "11.4e", 11, 1),           # integers of 6 digits or more: scientific
    ([4.5], -1, "7.4f", 7, 1),                   # fixed: exp + 6
    ([12.5], -1, "8.4f", 8, 1),
    ([0.6931], -1, "7.4f", 7, 1),                # 0.1 <= max < 1: width 7
    ([0.0, 4.5], -1, "7.4f", 7, 1),              # a zero counts as one digit: no scientific mode
    ([0.05, 0.02], -1, "7.4f", 7, 0.01),         # max < 0.1: scaled by 10 ** (exp - 1)
    ([0.002], -1, "7.4f", 7, 0.001),
    ([123456.5], -1, "7.4f", 7, 100000.0),       # non-integer max >= 1e5: scaled
    ([1e-5, 1.0], -1, "11.4e", 11, 1),           # more than 4 decades apart: scientific
    ([1e-4, 1.5], -1, "7.4f", 7, 1),             # exactly 4: still fixed
    ([1e-100, 1.5], -1, "11.4e", 11, 1),
    ([1e-101, 1.5], -1, "12.4e", 12, 1),         # three-digit exponents widen the cell
    ([np.nan, 1.5], -1, "7.4f", 7, 1),           # nan stands in for 1.5
    ([np.inf, 2], -1, "3.0f", 3, 1),             # ... and makes the width at least 3
    ([np.nan, np.inf], -1, "3.0f", 3, 1),        # nothing finite: stands in as 0
])
def test_number_format(values, min_width, spec, width, scale):
    fmt = legacy.number_format(np.array(values, dtype=np.float64), 4, min_width)
    assert (fmt.spec, fmt.width, fmt.scale) == (spec, width, scale)


def test_number_format_precision():
    # The precision changes the decimals and the scientific width, not the fixed widths.
    fmt = legacy.number_format(np.array([0.5]), 2)
    assert (fmt.spec, fmt.cell(0.5)) == ("7.2f", "   0.50")
    assert legacy.number_format(np.array([1e-5, 1.0]), 2).spec == "9.2e"


def test_values_format_as_float64_images_of_float32():
    assert plain([0.1]) == "\n 0.1000\n[torch.FloatTensor of size 1]\n"
    assert plain([0.0578, 0.0248]) == "\n1.00000e-02 *\n  5.7800\n  2.4800\n[torch.FloatTensor of size 2]\n"


# ---------------------------------------------------------------------------------------------------------------
# 1-D: one element per line.
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, dtype, expected", [
    # observed (ankoorb/DeepLearning)
    ([1.7937, -0.3579, -1.2358], "float32",
     "Variable containing:\n 1.7937\n-0.3579\n-1.2358\n[torch.FloatTensor of size 3]\n"),
    # observed (seed 001): a reduction result of size 1
    ([27], "float32", "Variable containing:\n 27\n[torch.FloatTensor of size 1]\n"),
    # observed: a shared scale line, values shifted one space
    ([0.0578, 0.024759, 0.018131, 0.03812, 0.005258], "float32",
     "Variable containing:\n1.00000e-02 *\n  5.7800\n  2.4759\n  1.8131\n  3.8120\n  0.5258\n"
     "[torch.FloatTensor of size 5]\n"),
    ([-1, 20, 3], "int64", "Variable containing:\n -1\n 20\n  3\n[torch.LongTensor of size 3]\n"),
    ([np.nan, 1.5, -np.inf], "float32",
     "Variable containing:\n    nan\n 1.5000\n   -inf\n[torch.FloatTensor of size 3]\n"),
    ([-0.0, 1.0], "float32", "Variable containing:\n-0\n 1\n[torch.FloatTensor of size 2]\n"),
])
def test_vector(values, dtype, expected):
    assert variable(values, dtype) == expected


def test_plain_vector_with_scale_line():
    # observed (net.conv1.bias.data): a plain tensor starts with a blank line
    values = [-0.081654, -0.079709, -0.086368, 0.014395, -0.063513, 0.094039]
    assert plain(values) == ("\n1.00000e-02 *\n -8.1654\n -7.9709\n -8.6368\n  1.4395\n -6.3513\n  9.4039\n"
                             "[torch.FloatTensor of size 6]\n")


@pytest.mark.parametrize("values, expected", [
    ([1e-5, 1.0], "\n 1.0000e-05\n 1.0000e+00\n[torch.FloatTensor of size 2]\n"),
    ([0.001, 0.002], "\n1.00000e-03 *\n  1.0000\n  2.0000\n[torch.FloatTensor of size 2]\n"),
    ([123456.5], "\n1.00000e+05 *\n  1.2346\n[torch.FloatTensor of size 1]\n"),
    ([100000, 1], "\n 1.0000e+05\n 1.0000e+00\n[torch.FloatTensor of size 2]\n"),
])
def test_vector_modes(values, expected):
    assert plain(values) == expected


def test_vector_summarized_at_threshold():
    # numel >= threshold (not >): 3 + ⋮ + 3, the ⋮ centred in the cell width; the format still sees 999.
    assert plain(np.arange(1000)) == "\n   0\n   1\n   2\n ⋮  \n 997\n 998\n 999\n[torch.FloatTensor of size 1000]\n"
    assert plain(np.arange(999)).count("\n") == 999 + 2
    scaled = plain(np.arange(1, 11) / 1000, threshold=10, edgeitems=2)
    assert scaled == ("\n1.00000e-03 *\n  1.0000\n  2.0000\n    ⋮   \n  9.0000\n 10.0000\n"
                      "[torch.FloatTensor of size 10]\n")


# ---------------------------------------------------------------------------------------------------------------
# 2-D: rows of cells joined by one space.
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, expected", [
    # observed (seed 001)
    ([[1, 1], [1, 1]], "Variable containing:\n 1  1\n 1  1\n[torch.FloatTensor of size 2x2]\n"),
    ([[27, 27], [27, 27]], "Variable containing:\n 27  27\n 27  27\n[torch.FloatTensor of size 2x2]\n"),
    ([[4.5, 4.5], [4.5, 4.5]], "Variable containing:\n 4.5000  4.5000\n 4.5000  4.5000\n"
                               "[torch.FloatTensor of size 2x2]\n"),
    # observed: width from the largest magnitude, zeros included
    ([[0, 2, 4, 0], [8, 10, 0, 0], [0, 18, 0, 22]],
     "Variable containing:\n  0   2   4   0\n  8  10   0   0\n  0  18   0  22\n[torch.FloatTensor of size 3x4]\n"),
    # observed: negative zero in integer mode
    ([[0, -0.0, -0.0]], "Variable containing:\n 0 -0 -0\n[torch.FloatTensor of size 1x3]\n"),
    # observed: scale line, then rows shifted one space
    ([[0.051902, -0.023778, -0.044071]],
     "Variable containing:\n1.00000e-02 *\n  5.1902 -2.3778 -4.4071\n[torch.FloatTensor of size 1x3]\n"),
    ([[0.066010]], "Variable containing:\n1.00000e-02 *\n  6.6010\n[torch.FloatTensor of size 1x1]\n"),
    ([[0.6931]], "Variable containing:\n 0.6931\n[torch.FloatTensor of size 1x1]\n"),
])
def test_matrix(values, expected):
    assert variable(values) == expected


def test_matrix_observed_long_1x1():
    assert variable([[703]], "int64") == "Variable containing:\n 703\n[torch.LongTensor of size 1x1]\n"


def test_matrix_plain_docs_example():
    assert plain([[1, 8, 3], [4, 5, 6]]) == "\n 1  8  3\n 4  5  6\n[torch.FloatTensor of size 2x3]\n"


def test_matrix_ten_columns_fit_one_line():
    # floor(80 / (7 + 1)) = 10 cells of width 7 per line
    row = np.linspace(-0.5, 0.5, 10)
    text = plain([row])
    assert text.count("\n") == 3 and "Columns" not in text


def test_matrix_column_blocks():
    # derived in the fact sheet: every block starts with a blank line (the first one too)
    assert plain(np.arange(24).reshape(2, 12) / 3) == (
        "\n\nColumns 0 to 9 \n"
        " 0.0000  0.3333  0.6667  1.0000  1.3333  1.6667  2.0000  2.3333  2.6667  3.0000\n"
        " 4.0000  4.3333  4.6667  5.0000  5.3333  5.6667  6.0000  6.3333  6.6667  7.0000\n"
        "\nColumns 10 to 11 \n"
        " 3.3333  3.6667\n"
        " 7.3333  7.6667\n"
        "[torch.FloatTensor of size 2x12]\n")


def test_matrix_column_blocks_of_one_column_with_scale():
    # One column per block: the block starting at column 1 gets no blank line (the 0.3 quirk); the scale line
    # is repeated in every block.
    assert plain([[0.005, 0.015, 0.025]], linewidth=10) == (
        "\n\nColumns 0 to 0 \n1.00000e-02 *\n  0.5000\n"
        "Columns 1 to 1 \n1.00000e-02 *\n  1.5000\n"
        "\nColumns 2 to 2 \n1.00000e-02 *\n  2.5000\n"
        "[torch.FloatTensor of size 1x3]\n")


def test_matrix_summarized_both_ways():
    # derived in the fact sheet (numel >= 1000, more than 6 rows and columns): minimum width 5
    assert plain(np.arange(2000).reshape(40, 50)) == (
        "\n"
        "    0     1     2  ...     47    48    49\n"
        "   50    51    52  ...     97    98    99\n"
        "  100   101   102  ...    147   148   149\n"
        "       ...          ⋱          ...       \n"
        " 1850  1851  1852  ...   1897  1898  1899\n"
        " 1900  1901  1902  ...   1947  1948  1949\n"
        " 1950  1951  1952  ...   1997  1998  1999\n"
        "[torch.FloatTensor of size 40x50]\n")


def test_matrix_summarized_columns_only():
    # rows keep their scale line once, and no extra space
    data = np.tile(np.arange(1, 501) / 10000, (2, 1))
    assert plain(data) == (
        "\n1.00000e-02 *\n"
        " 0.0100  0.0200  0.0300  ...   4.9800  4.9900  5.0000\n"
        " 0.0100  0.0200  0.0300  ...   4.9800  4.9900  5.0000\n"
        "[torch.FloatTensor of size 2x500]\n")


def test_matrix_summarized_rows_only():
    # ⋮ centred over a full row plus one, without indent
    data = np.arange(1000).reshape(500, 2)
    assert plain(data, dtype="int64") == (
        "\n"
        "    0     1\n"
        "    2     3\n"
        "    4     5\n"
        "     ⋮      \n"
        "  994   995\n"
        "  996   997\n"
        "  998   999\n"
        "[torch.LongTensor of size 500x2]\n")


# ---------------------------------------------------------------------------------------------------------------
# 3-D and more: `(i ,.,.) = ` slices sharing one format.
# ---------------------------------------------------------------------------------------------------------------

def test_tensor_3d():
    # derived in the fact sheet
    assert variable(np.ones((2, 2, 2))) == (
        "Variable containing:\n"
        "(0 ,.,.) = \n  1  1\n  1  1\n"
        "\n(1 ,.,.) = \n  1  1\n  1  1\n"
        "[torch.FloatTensor of size 2x2x2]\n")


def test_tensor_3d_shared_format_and_scale():
    data = np.array([[[0.01, 0.02]], [[0.03, 0.04]]])
    assert plain(data) == (
        "\n(0 ,.,.) = \n1.00000e-02 *\n   1.0000  2.0000\n"
        "\n(1 ,.,.) = \n1.00000e-02 *\n   3.0000  4.0000\n"
        "[torch.FloatTensor of size 2x1x2]\n")
    # one format for all slices: the 10 in the second slice widens the first
    assert plain([[[1]], [[10]]]) == "\n(0 ,.,.) = \n   1\n\n(1 ,.,.) = \n  10\n[torch.FloatTensor of size 2x1x1]\n"


def test_tensor_4d_headers():
    text = plain(np.zeros((1, 2, 1, 1)), dtype="int64")
    assert text == ("\n(0 ,0 ,.,.) = \n  0\n\n(0 ,1 ,.,.) = \n  0\n"
                    "[torch.LongTensor of size 1x2x1x1]\n")


def test_tensor_index_width_follows_the_largest_size():
    text = plain(np.zeros((100, 1, 1)))
    slices = "\n".join(f"({i:^3},.,.) = \n  0\n" for i in range(100))
    assert text == "\n" + slices + "[torch.FloatTensor of size 100x1x1]\n"
    assert text.startswith("\n( 0 ,.,.) = \n") and "(99 ,.,.) = " in text


def test_tensor_3d_summarized():
    # numel >= 1000: leading dims longer than 6 skip to their last 3 after a `...` line, and every slice is cut
    # (minimum width 3 because the slices are wider than 6)
    rows = "   0   0   0  ...    0   0   0\n" * 2
    expected = ("\n"
                + "\n".join(f"( {i} ,.,.) = \n{rows}" for i in range(3))
                + "... \n"
                + "".join(f"\n( {i} ,.,.) = \n{rows}" for i in range(4, 7))
                + "[torch.FloatTensor of size 7x2x100]\n")
    assert plain(np.zeros((7, 2, 100))) == expected


def test_tensor_4d_summarized_marks_a_wrapped_index():
    text = plain(np.zeros((2, 2, 20, 50)))
    assert text.count("     ⋮ \n\n(1 ,0 ,.,.) = \n") == 1
    assert text.count("⋱") == 4


# ---------------------------------------------------------------------------------------------------------------
# Footers, empty tensors, 0-d values, the Variable header.
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, name", [
    ("float32", "torch.FloatTensor"),
    ("float64", "torch.DoubleTensor"),
    ("float16", "torch.HalfTensor"),
    ("int64", "torch.LongTensor"),
    ("int32", "torch.IntTensor"),
    ("int16", "torch.ShortTensor"),
    ("int8", "torch.CharTensor"),
    ("uint8", "torch.ByteTensor"),
    ("bool", "torch.ByteTensor"),        # 0.3 comparisons gave ByteTensors
])
def test_footer_per_dtype(dtype, name):
    assert plain([[1, 0, 1]], dtype) == f"\n 1  0  1\n[{name} of size 1x3]\n"


def test_footer_double_matrix():
    assert plain([[0.5, 1.25]], "float64") == "\n 0.5000  1.2500\n[torch.DoubleTensor of size 1x2]\n"


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3, 4)])
def test_empty(shape):
    assert plain(np.zeros(shape)) == "[torch.FloatTensor with no dimension]\n"
    empty_long = variable(np.zeros(shape, dtype=np.int64), "int64")
    assert empty_long == "Variable containing:[torch.LongTensor with no dimension]\n"


def test_zero_dim_shows_as_size_one():
    assert variable(np.float32(27.0)) == "Variable containing:\n 27\n[torch.FloatTensor of size 1]\n"
    assert plain(np.int64(-3), "int64") == "\n-3\n[torch.LongTensor of size 1]\n"


def test_dispatch_on_display_mode():
    data = np.ones((2, 2), dtype=np.float32)
    legacy_opts = opts()
    assert tensor_repr(data, "float32", requires_grad=True, opts=legacy_opts) == (
        "Variable containing:\n 1  1\n 1  1\n[torch.FloatTensor of size 2x2]\n")
    legacy_opts.display = "modern"
    assert tensor_repr(data, "float32", requires_grad=True, opts=legacy_opts) == (
        "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)")
    assert tensor_repr(data, "float32", grad_fn_name="AddBackward0") == (
        "tensor([[1., 1.],\n        [1., 1.]], grad_fn=<AddBackward0>)")


def test_set_printoptions_keeps_the_display_mode():
    o = opts()
    o.set(profile="default")
    o.set(precision=2)
    assert o.display == "legacy"
    assert PrintOptions().display == "modern"


# ---------------------------------------------------------------------------------------------------------------
# Through a session.
# ---------------------------------------------------------------------------------------------------------------

def test_session_print_of_two_variables():
    # observed (amitadate/PyTorch101): print puts its space before the second header
    out, _ = run_legacy("import torch\nx = torch.ones(2, 2, requires_grad=True)\nz = (x + 2) * (x + 2) * 3\n"
                        "out = z.mean()\nprint(z, out)\n")
    assert out == ("Variable containing:\n 27  27\n 27  27\n[torch.FloatTensor of size 2x2]\n"
                   " Variable containing:\n 27\n[torch.FloatTensor of size 1]\n\n")


def test_session_containers_grad_fn_size_and_options():
    out, _ = run_legacy(
        "import torch\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "y = x + 2\n"
        "print((x.sum(), y.sum()))\n"
        "print(y.grad_fn)\n"
        "print(y.size())\n"
        "torch.set_printoptions(precision=2)\n"
        "print(y / 7)\n")
    assert normalize(out) == (
        "(Variable containing:\n 3\n[torch.FloatTensor of size 1]\n"
        ", Variable containing:\n 9\n[torch.FloatTensor of size 1]\n)\n"
        "<AddBackward0 object at 0xADDR>\n"
        "torch.Size([3])\n"
        "Variable containing:\n   0.43\n   0.43\n   0.43\n[torch.FloatTensor of size 3]\n\n")


def test_session_display_lasts_across_scripts_and_resets_with_a_new_session():
    out = io.StringIO()
    session = Session(out=out, err=io.StringIO(), display="legacy")
    session.run_source("import torch\nprint(torch.zeros(1))\n")
    session.reset_state()
    session.run_source("import torch\nprint(torch.zeros(1))\n")
    assert out.getvalue() == ("\n 0\n[torch.FloatTensor of size 1]\n\n" * 2)
    modern = io.StringIO()
    Session(out=modern, err=io.StringIO()).run_source("import torch\nprint(torch.zeros(1))\n")
    assert modern.getvalue() == "tensor([0.])\n"


def test_variables_and_plain_tensors():
    # 0.3 held in a Variable what Variable() made, what requires grad or has a grad_fn, and gradients;
    # factories and .data gave plain tensors
    out = io.StringIO()
    Session(out=out, err=io.StringIO(), display="legacy").run_source(
        "import torch\nfrom torch.autograd import Variable\na = torch.ones(1)\nv = Variable(a, requires_grad=True)\n"
        "w = Variable(a)\n(v * 3).sum().backward()\n"
        "for t in (a, v.data, w, v, v * 3, v.grad, v.grad.data):\n    print(repr(t).startswith('Variable'))\n")
    assert out.getvalue().split() == ["False", "False", "True", "True", "True", "True", "False"]


def test_session_rejects_an_unknown_display():
    with pytest.raises(ValueError, match="unknown display mode 'fancy'"):
        Session(display="fancy")


def test_session_errors_unchanged_in_legacy_mode():
    with pytest.raises(ScriptError):
        run_legacy("import torch\ntorch.ones(2) + torch.ones(3)\n")


# ---------------------------------------------------------------------------------------------------------------
# The 0.3 notebook (seed 001) and its committed golden.
# ---------------------------------------------------------------------------------------------------------------

def test_notebook_cells_parser():
    text = ("# Title\n\nSome prose.\n\nIn [1]:\nimport torch\n\n"
            "In [2]:\nx = 1\n\ny = 2\nprint(x)\n\nVariable containing:\n 1\n[torch.FloatTensor of size 1]\n\n\n\n"
            "### More prose\n\nIn [3]:\nprint(None)\n\nNone\n\n\n")
    assert legacy_golden.notebook_cells(text) == [
        ("import torch\n", ""),
        ("x = 1\n\ny = 2\nprint(x)\n", "Variable containing:\n 1\n[torch.FloatTensor of size 1]\n\n"),
        ("print(None)\n", "None\n"),
    ]


def test_notebook_golden_matches():
    """examples/variable_notebook.grad (the seed notebook's code) against the golden made from the seed's text."""
    out, _ = run_legacy(NOTEBOOK.read_text())
    assert out == NOTEBOOK_GOLDEN.read_text()


@needs_seed
def test_notebook_golden_is_up_to_date_with_the_seed():
    expected = legacy_golden.golden_text(SEED.read_text(encoding="utf-8"), NOTEBOOK.read_text())
    assert NOTEBOOK_GOLDEN.read_text() == expected


@needs_seed
def test_seed_notebook_cell_by_cell():
    cells = legacy_golden.notebook_cells(SEED.read_text(encoding="utf-8"))
    assert len(cells) == 6
    out = io.StringIO()
    session = Session(out=out, err=io.StringIO(), display="legacy")
    for code, expected in cells:
        out.seek(0)
        out.truncate()
        session.run_source(code, "<seed>")
        assert out.getvalue() == expected, code
