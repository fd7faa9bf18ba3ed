"""`import copy`: copy.copy and copy.deepcopy as CPython's copy module and PyTorch's Tensor.__deepcopy__ make
them (gradcli.language.copying). Python's values are compared with CPython itself; tensors and modules with
the PyTorch goldens lang_copy_models and with the rules below; what copying must not reach, with escapes."""

import subprocess
import sys

import pytest

from conftest import cpython_output, gradcli_output, located_error, run_script

SNIPPETS = [
    "import copy\na = [1, [2, 3], {'k': [4]}]\nb = copy.copy(a)\nc = copy.deepcopy(a)\na[1].append(9)\n"
    "print(b, c, b[1] is a[1], c[1] is a[1], c[2] is a[2])",
    "import copy\na = [1]\na.append(a)\nb = copy.deepcopy(a)\nprint(b[1] is b, b is a, len(b))",
    "import copy\nshared = [0]\npair = (shared, shared)\nd = copy.deepcopy(pair)\nprint(d[0] is d[1], d[0] is shared)\n"
    "t = (1, 'a', None)\nprint(copy.deepcopy(t) is t, copy.copy(t) is t, copy.copy(frozenset({1})))",
    "import copy\nfrom collections import defaultdict, Counter, OrderedDict, deque, namedtuple\n"
    "dd = defaultdict(list, {'a': [1]})\ndc = copy.deepcopy(dd)\ndc['b'].append(2)\nprint(dd, dc, dc['a'] is dd['a'])\n"
    "print(copy.copy(Counter('aab')), copy.deepcopy(OrderedDict(x=[1])), copy.deepcopy(deque([1, [2]], maxlen=3)))\n"
    "P = namedtuple('P', 'x y')\np = P([1], 2)\nq = copy.deepcopy(p)\nprint(q, q.x is p.x, type(q).__name__, copy.copy(p) == p)",
    "import copy\ns = {1, (2, 3)}\nprint(copy.deepcopy(s) == s, copy.copy(s) is s, copy.deepcopy({'a': {1, 2}}))",
    "import copy\nclass A:\n    def __init__(self):\n        self.items = [1]\n        self.name = 'a'\n"
    "    def __repr__(self):\n        return f'A({self.items}, {self.name})'\n"
    "a = A()\nb = copy.copy(a)\nc = copy.deepcopy(a)\na.items.append(2)\nprint(a, b, c, type(c) is A, b.items is a.items)",
    "import copy\nclass Node:\n    def __init__(self, v):\n        self.v = v\n        self.next = self\n"
    "n = copy.deepcopy(Node([1]))\nprint(n.next is n, n.v)",
    "import copy\nclass C:\n    def __init__(self, data):\n        self.data = data\n"
    "    def __deepcopy__(self, memo):\n        print('deep', type(memo).__name__)\n"
    "        return C(copy.deepcopy(self.data, memo))\n"
    "    def __copy__(self):\n        print('shallow')\n        return C(self.data)\n"
    "c = C([1])\nd = copy.deepcopy([c, c])\nprint(d[0] is d[1], d[0].data is c.data, copy.copy(c).data is c.data)",
    "import copy\ndef f(x):\n    return x\nclass K:\n    def m(self):\n        return self\n"
    "k = K()\nm = copy.deepcopy(k.m)\nprint(copy.deepcopy(f) is f, copy.copy(len) is len, copy.deepcopy(K) is K,\n"
    "      m.__self__ is k if False else m() is not k, copy.copy(k.m)() is k)",
    "import copy\ne = ValueError('bad', [1])\nf = copy.deepcopy(e)\nprint(repr(f), f.args[1] is e.args[1], repr(copy.copy(e)))\n"
    "class MyErr(Exception):\n    pass\ng = copy.deepcopy(MyErr('x'))\nprint(type(g).__name__, g.args)",
    "import copy\nmemo = {}\na = [1]\nb = copy.deepcopy([a, a], memo)\nprint(b[0] is b[1], copy.deepcopy(a, memo) is b[0])",
    "import copy\nprint(copy.deepcopy(3.5), copy.deepcopy('s'), copy.deepcopy(None), copy.deepcopy(range(3)),\n"
    "      copy.deepcopy(slice(1, 2)), copy.copy(True), copy.deepcopy(...))",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_results(snippet):
    source = snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


T = "import copy\nimport torch\n"


def test_tensor_rules():
    out = gradcli_output(
        T + "t = torch.ones(2, requires_grad=True)\nt.grad = torch.full((2,), 2.)\nd = copy.deepcopy(t)\n"
            "print(d.requires_grad, d.grad, d.is_leaf, d.grad is t.grad, d is t)\n"
            "c = copy.copy(t)\nprint(c.requires_grad, c.grad)\nwith torch.no_grad():\n    t.add_(1)\nprint(c, d)\n"
            "p = torch.nn.Parameter(torch.ones(1))\np.grad = torch.ones(1)\nq = copy.deepcopy(p)\n"
            "print(type(q).__name__, q.grad, isinstance(q, torch.nn.Parameter))\n"
            "base = torch.arange(4.)\nview = base[1:3]\nb, v = copy.deepcopy((base, view))\nb[1] = 9\nprint(v, view)\n"
            "y = copy.copy(t * 2)\nprint(y.grad_fn, y.requires_grad)\n")
    assert out == ("True tensor([2., 2.]) True False False\nTrue None\n"
                   "tensor([2., 2.], requires_grad=True) tensor([1., 1.], requires_grad=True)\n"
                   "Parameter None True\ntensor([9., 2.]) tensor([1., 2.])\nNone True\n")


@pytest.mark.parametrize("source, message", [
    (T + "x = torch.ones(1, requires_grad=True)\ncopy.deepcopy(x * 2)",
     "4:1: RuntimeError: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
     "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
     "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"),
    (T + "x = torch.ones(1, requires_grad=True)\ncopy.deepcopy((x * 2).grad_fn)",
     "4:1: TypeError: cannot pickle 'MulBackward0' object"),
    (T + "copy.deepcopy(i for i in range(2))", "3:1: TypeError: cannot pickle 'generator' object"),
    (T + "copy.deepcopy(torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1))",
     "3:1: NotImplementedError: gradcli does not implement copy.deepcopy of a 'SGD' object"),
    (T + "copy.deepcopy(iter([1]))",
     "3:1: NotImplementedError: gradcli does not implement copy.deepcopy of a 'list_iterator' object"),
    (T + "copy.deepcopy([1], [])", "3:1: AttributeError: 'list' object has no attribute 'get'"),
])
def test_errors(source, message):
    assert located_error(source) == message


@pytest.mark.parametrize("source, message", [
    # the memo a script's __deepcopy__ receives holds only the copies, by id: no storage, no array
    (T + "seen = []\nclass S:\n    def __deepcopy__(self, memo):\n        seen.extend(memo.values())\n        return S()\n"
         "x = torch.arange(3.)\ncopy.deepcopy([x, x[1:], S()])\n"
         "print(sorted(type(v).__name__ for v in seen))\n[v.__array_interface__ for v in seen if type(v) is torch.Tensor]",
     "11:2: AttributeError: 'Tensor' object attribute '__array_interface__' is outside gradcli's language"),
    ("import copy\ncopy.__dict__", "2:1: AttributeError: module 'copy' attribute '__dict__' is outside gradcli's language"),
    ("import copy\ncopy.deepcopy.__globals__", "2:1: AttributeError: 'function' object has no attribute '__globals__'"),
    ("import copy\ncopy._reconstruct", "2:1: AttributeError: module 'copy' attribute '_reconstruct' is outside "
                                       "gradcli's language"),
    ("import copy\ncopy.sys", "2:1: AttributeError: module 'copy' has no attribute 'sys'"),
    ("from copy import _deepcopy_dispatch", "1:1: ImportError: cannot import name '_deepcopy_dispatch' from 'copy' "
                                             "(unknown location)"),
    ("import copy\nclass A:\n    pass\na = A()\na.__deepcopy__", "5:1: AttributeError: 'A' object has no attribute "
                                                                  "'__deepcopy__'"),
])
def test_nothing_internal_is_reachable(source, message):
    assert located_error(source) == message


def test_the_memo_shows_only_copies():
    out = gradcli_output(
        T + "seen = []\nclass S:\n    def __deepcopy__(self, memo):\n        seen.extend(memo.values())\n"
            "        return S()\nx = torch.arange(3.)\ncopy.deepcopy([x, x[1:], S()])\n"
            "print(sorted(type(v).__name__ for v in seen))\n")
    assert out == "['Tensor', 'Tensor', 'list']\n"


def test_deep_structures_and_the_time_limit():
    result = run_script("import copy\na = []\nfor i in range(100000):\n    a = [a]\ncopy.deepcopy(a)\n")
    assert result.error is not None and result.error.kind == "RecursionError"
    p = subprocess.run([sys.executable, "-m", "gradcli", "--timeout", "2", "-c",
                        "import copy\na = [[i] for i in range(20000)]\n"
                        "any(copy.deepcopy(a) is None for _ in range(10**6))\n"],     # one line does all the copying
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 124 and p.stderr.startswith("<string>:3:") and "TimeoutError: stopped after 2 seconds" in p.stderr
