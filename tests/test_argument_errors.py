"""Every torch function and tensor method a script can reach, called with arguments that do not fit (a
keyword it does not take, a string where a tensor goes, too many positionals, none at all): whatever
the error, its message must speak of what the script called, never of gradcli's own code. (PyTorch's
own Python functions, F.mse_loss(x, 's') say, fail with "'str' object has no attribute 'size'": such an
AttributeError is PyTorch's message too, so only internal names are refused.)"""

from __future__ import annotations

import re

import pytest

from conftest import check_each, in_groups, run_script
from gradcli.language import access, stdlib

# A name only gradcli's code has: a leading underscore, a nested function's qualified name, the package. (PyTorch's
# own messages name a few of its underscored functions: torch.unique's _unique2 and its dispatch wrappers,
# use_deterministic_algorithms' _set_deterministic_algorithms.)
INTERNAL = re.compile(r"(?<![\w'])(?!_unique2\(|_return_output\(|_consecutive_return_output\(|"
                      r"_set_deterministic_algorithms\()_+[A-Za-z]\w*"
                      r"|<locals>|<lambda>|\bgradcli\b|\bnp\b|numpy|ndarray")


def _torch_functions() -> list[str]:
    paths, stack = [], [("torch", stdlib.TORCH)]
    while stack:
        path, mod = stack.pop()
        for name, obj in mod.members.items():
            if isinstance(obj, stdlib.ScriptModule):
                stack.append((f"{path}.{name}", obj))
            elif callable(obj) and not isinstance(getattr(obj, "func", obj), type):     # classes: Python's words
                paths.append(f"{path}.{name}")
    return sorted(paths)


def _tensor_methods() -> list[str]:
    from gradcli.engine.tensor import Tensor
    return sorted(n for n in access.TENSOR_ATTRS if callable(getattr(Tensor, n, None)))


# Names with a leading underscore that PyTorch's own messages give (engine/signatures.py _PARSER_NAMES)
PYTORCH_UNDERSCORE_NAMES = ("_threshold()", "_lu_with_info()", "_lu_no_infos()", "_symeig()")   # (torch.lu's, symeig's)
# numpy's types in PyTorch's own message (torch.sym_max's assertion names the types it takes)
PYTORCH_NUMPY_WORDS = "(<class 'numpy.integer'>, <class 'numpy.floating'>, <class 'int'>, <class 'float'>)"
_BAD_CALLS = ["(zzz_bad=1)", "(x, zzz_bad=1)", "('s')", "(x, 's')", "(x, x, x, x, x, x, x, x, x, x)", "()"]
_BAD_METHOD_CALLS = ["(zzz_bad=1)", "('s')", "(x, 's')", "(x, x, x, x, x, x, x, x, x, x)"]


def _message(code: str) -> str | None:
    result = run_script("import torch\nx = torch.ones(2, 2)\n" + code + "\n", "<call>")
    if result.error is None:
        return None
    return f"{result.error.kind}: {result.error.message}"


def _check(code: str) -> None:
    message = _message(code)
    if message is None:
        return
    text = message.split(": ", 1)[1]
    if message.startswith("NotImplementedError: gradcli does not implement "):
        return                                  # the honest refusal, in its documented words (torch.linalg.eig)
    for own in PYTORCH_UNDERSCORE_NAMES + (PYTORCH_NUMPY_WORDS,):     # PyTorch's own Python names (F.threshold is
        text = text.replace(own, "")                                  # `_threshold`) and words
    leaked = INTERNAL.search(text)
    assert leaked is None, f"{code}: {message}"


@pytest.mark.parametrize("paths", in_groups(_torch_functions(), str))
def test_torch_function_with_wrong_arguments(paths):
    check_each(paths, lambda path: [_check(f"{path}{call}") for call in _BAD_CALLS], str)


@pytest.mark.parametrize("names", in_groups(_tensor_methods(), str))
def test_tensor_method_with_wrong_arguments(names):
    check_each(names, lambda name: [_check(f"x.{name}{call}") for call in _BAD_METHOD_CALLS], str)
