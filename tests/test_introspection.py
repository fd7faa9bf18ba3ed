"""vars(), locals(), globals(), an object's __dict__ and the inspect module, compared with CPython 3.11 (and with
PyTorch 2.13 for torch.nn modules' __dict__); what a script writes into a __dict__ takes the rules of setattr."""

import pytest

from conftest import cpython_output, gradcli_output, located_error, normalize


SNIPPETS = [
    # a comprehension's frame is named after its kind, in its element and in its conditions
    "import inspect\nname = lambda: inspect.currentframe().f_back.f_code.co_name\n"
    "print([name() for _ in 'a'], {name() for _ in 'a'}, {1: name() for _ in 'a'}, list(name() for _ in 'a'),\n"
    "      [[name() for _ in 'a'] for _ in 'a'], [x for x in 'ab' if name() == '<listcomp>'],\n"
    "      list(y for y in 'ab' if name() == '<genexpr>'), {k: v for k, v in [(name(), name())]})",
    # an instance's __dict__ is its own, live: reads, writes, update, deletes, copies
    "class P:\n    def __init__(self, a, **kw):\n        self.a = a\n        self.__dict__.update(kw)\n"
    "p = P(1, b=2, c=[3])\nprint(vars(p), p.__dict__ is vars(p), p.b, type(vars(p)), isinstance(vars(p), dict))\n"
    "vars(p)['d'] = 4\nprint(p.d)\ndel p.__dict__['a']\nprint(hasattr(p, 'a'), vars(p))\np.e = 5\nprint(vars(p))\n"
    "d = vars(p)\nd |= {'f': 6}\nd.setdefault('g', 7)\nprint(p.f, p.g, d.pop('g'), hasattr(p, 'g'), dict(d), {**d})\n"
    "import copy\nprint(copy.copy(vars(p)), type(copy.deepcopy(vars(p))), copy.deepcopy(p).f)",
    # a dataclass, an exception, a function's attributes, a class's namespace (read-only)
    "from dataclasses import dataclass, field\n@dataclass\nclass Cfg:\n    lr: float = 0.1\n    sizes: list = "
    "field(default_factory=list)\nc = Cfg()\nprint(vars(c), list(vars(Cfg)))\n"
    "class E(Exception):\n    pass\ne = E('x')\ne.code = 3\nprint(vars(e))\n"
    "def f():\n    pass\nf.calls = 1\nprint(vars(f))\nvars(f)['calls'] += 1\nprint(f.calls)\n"
    "class Config:\n    lr = 0.1\n    epochs = 3\n    def method(self):\n        pass\n"
    "print({k: v for k, v in vars(Config).items() if not k.startswith('_') and not callable(v)})\n"
    "print(type(vars(Config)), Config.__dict__['lr'])\n"
    "try:\n    vars(Config)['lr'] = 1\nexcept TypeError as e:\n    print(e)",
    # what has none: CPython's TypeError
    "class S:\n    __slots__ = ('w',)\nfor x in (3, 'a', [1], S()):\n    try:\n        vars(x)\n"
    "    except TypeError as e:\n        print(e)\ntry:\n    vars(1, 2)\nexcept TypeError as e:\n    print(e)",
    # locals() in a function (parameters, then the other variables, then those shared with nested functions and
    # read from enclosing ones), in a method that calls super(), in a comprehension; the same dict each time
    "def f(a, b=2, *args, c=3, **kw):\n    x = a + b\n    print(locals())\n    l = locals()\n    y = 1\n"
    "    print(l is locals(), l)\nf(1, 5, 6, d=7)\n"
    "def outer():\n    k = 1\n    def inner():\n        print(locals())\n        return k\n    print(locals())\n"
    "    return inner\nouter()()\n"
    "class A:\n    def __init__(self):\n        super().__init__()\n        z = 0\n        print(sorted(locals()))\n"
    "A()\nclass B:\n    q = 1\n    print(sorted(locals()))",
    # globals(): the script's, live
    "x = 1\ndef f():\n    globals()['y'] = 2\n    return globals()['x']\nprint(f(), y, 'x' in globals(), locals() is globals(),"
    " vars() is globals())",
    # d2l's save_hyperparameters: the caller's arguments through inspect
    "import inspect\nclass HyperParameters:\n    def save_hyperparameters(self, ignore=[]):\n"
    "        frame = inspect.currentframe().f_back\n        _, _, _, local_vars = inspect.getargvalues(frame)\n"
    "        self.hparams = {k: v for k, v in local_vars.items() if k not in set(ignore + ['self']) and "
    "not k.startswith('_')}\n        for k, v in self.hparams.items():\n            setattr(self, k, v)\n"
    "class Trainer(HyperParameters):\n    def __init__(self, max_epochs, num_gpus=0, gradient_clip_val=0):\n"
    "        self.save_hyperparameters(ignore=['num_gpus'])\nt = Trainer(3)\nprint(t.hparams, t.max_epochs, vars(t))\n"
    "def g(a, *rest, key=1, **more):\n    f = inspect.currentframe()\n    print(inspect.getargvalues(f).args, "
    "inspect.getargvalues(f).varargs, inspect.getargvalues(f).keywords, f.f_code.co_name, f.f_back.f_code.co_name, "
    "f.f_code.co_argcount)\ng(1, 2, z=3)\nprint(inspect.getargvalues(inspect.currentframe()).args)",
    # dir(): the frame's names; dir(obj) as Python lists it (a script's objects, containers, its namedtuples)
    "import math\nfrom collections import namedtuple\nclass P:\n    a = 1\n    def __init__(self):\n        self.z = 1\n"
    "    def m(self):\n        pass\nclass D(dict):\n    def extra(self):\n        pass\nPt = namedtuple('Pt', 'x y')\n"
    "class Q(Pt):\n    pass\nclass S:\n    __slots__ = ('a',)\nclass E(Exception):\n    pass\n"
    "print(dir(P()), dir(P)[-3:], [n for n in dir(D()) if not n.startswith('__')], dir(Q(1, 2))[-8:])\n"
    "print(dir([])[-5:], dir('')[:3], dir(S())[-3:], dir(E())[-4:], 'sqrt' in dir(math))\n"
    "def f(u, v=2):\n    w = 3\n    print(dir())\nf(1)\nprint([n for n in dir() if not n.startswith('__')])\n"
    "try:\n    dir(1, 2)\nexcept TypeError as e:\n    print(e)",
    # signatures: text, parameters, kinds, defaults, annotations, binding and its messages
    "import inspect\ndef f(x: int, y: 'str' = 'a', *args, z: list = None, **kw) -> float:\n    return x\n"
    "sig = inspect.signature(f)\nprint(sig, repr(sig), sig.parameters)\n"
    "for name, p in sig.parameters.items():\n    print(name, p.kind, p.default is inspect.Parameter.empty, "
    "p.annotation, repr(p), str(p), p.kind.name, p.kind.description)\nprint(sig.return_annotation)\n"
    "b = sig.bind(1, 'b', 3, z=[1], q=2)\nprint(b, b.args, b.kwargs, b.arguments)\nb.apply_defaults()\nprint(b)\n"
    "for args in ((), (1, 2), ()):\n    try:\n        print(inspect.signature(lambda a, /, b, *, c: 0).bind(*args, b=1))\n"
    "    except TypeError as e:\n        print(e)\n"
    "class Net:\n    def __init__(self, d_in, d_out=2, *, bias=True):\n        pass\n    def forward(self, x):\n"
    "        return x\nprint(inspect.signature(Net), inspect.signature(Net(1).forward), inspect.signature(Net.forward))\n"
    "class Plain:\n    pass\nprint(inspect.signature(Plain))\n"
    "s = inspect.Signature([inspect.Parameter('a', inspect.Parameter.POSITIONAL_ONLY, default=1)])\n"
    "print(s, s.replace(return_annotation=int), inspect.Parameter.KEYWORD_ONLY, inspect.Signature.empty)\n"
    "try:\n    inspect.signature(3)\nexcept TypeError as e:\n    print(e)",
    # the is... tests and docstrings
    "import inspect\nclass C:\n    '''  A class.\n\n        More.\n    '''\n    def m(self):\n        pass\n"
    "def gen():\n    yield 1\nprint(inspect.isclass(C), inspect.isclass(C()), inspect.isclass(int), inspect.isfunction(gen),"
    " inspect.isfunction(C.m), inspect.isfunction(C().m), inspect.ismethod(C().m), inspect.isgeneratorfunction(gen),"
    " inspect.isgenerator(gen()), inspect.isbuiltin(len), inspect.isroutine(C().m), inspect.isroutine(3))\n"
    "print(repr(inspect.getdoc(C)), inspect.getdoc(gen), repr(inspect.cleandoc('  a\\n    b')))",
    # a script's class lineage: __mro__, __bases__, __base__ (object in gradcli's own base's place), the
    # subclasses a registry walks, and `raise ... from`'s __suppress_context__
    "class A:\n    pass\nclass B(A):\n    pass\nclass C(A):\n    pass\nclass D(B, C):\n    pass\n"
    "class E(ValueError, A):\n    pass\nprint(D.__mro__, D.__bases__, D.__base__, A.__bases__, A.__mro__, E.__mro__, "
    "E.__base__)\nprint(A.__subclasses__(), B.__subclasses__(), D.__subclasses__(), [k.__name__ for k in "
    "type(D()).__mro__])\nprint(A.__subclasses__)",
    # an object's dict replaced: the attribute-dict idiom, a shared state (Borg), object.__setattr__, the errors
    "import copy\ndef t(f):\n    try:\n        print(f())\n    except Exception as e:\n        print(type(e).__name__, e)\n"
    "class AttrDict(dict):\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n"
    "        self.__dict__ = self\ncfg = AttrDict(lr=0.1, model=AttrDict(width=8))\n"
    "print(cfg.model.width, vars(cfg) is cfg, cfg.__dict__ is cfg)\ncfg.model.depth = 2\ndel cfg.lr\n"
    "print(cfg, copy.copy(cfg), copy.deepcopy(cfg), vars(copy.copy(cfg)))\nt(lambda: copy.deepcopy(cfg).model)\nclass Borg:\n    _shared = {}\n"
    "    def __init__(self):\n        self.__dict__ = self._shared\na, b = Borg(), Borg()\na.x = 1\n"
    "print(b.x, vars(a) is vars(b), vars(a) is Borg._shared)\nclass Obj:\n    def __init__(self, **kw):\n"
    "        object.__setattr__(self, '__dict__', kw)\no = Obj(p=3)\nprint(o.p, vars(o))\n"
    "t(lambda: setattr(o, '__dict__', [1]))\nclass Slotted:\n    __slots__ = ('a',)\n"
    "t(lambda: setattr(Slotted(), '__dict__', {}))\nclass S2:\n    __slots__ = ('__dict__',)\ns2 = S2()\nd = {'x': 1}\n"
    "s2.__dict__ = d\nd['y'] = 2\nprint(s2.x, s2.y, vars(s2) is d)",
    "for f in (lambda: 1 / 0, lambda: {}['k']):\n    try:\n        f()\n    except Exception as e:\n"
    "        print(e.__suppress_context__, e.__cause__)\ntry:\n    raise KeyError('k') from None\n"
    "except KeyError as e:\n    print(e.__suppress_context__, e.__cause__)\ntry:\n    try:\n        1 / 0\n"
    "    except ZeroDivisionError as z:\n        raise ValueError('v') from z\nexcept ValueError as e:\n"
    "    print(e.__suppress_context__, repr(e.__cause__))",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_as_cpython(snippet):
    assert normalize(gradcli_output(snippet + "\n")) == normalize(cpython_output(snippet + "\n"))


MODULE_KEYS = ['training', '_parameters', '_buffers', '_non_persistent_buffers_set', '_backward_pre_hooks',
               '_backward_hooks', '_is_full_backward_hook', '_forward_hooks', '_forward_hooks_with_kwargs',
               '_forward_hooks_always_called', '_forward_pre_hooks', '_forward_pre_hooks_with_kwargs',
               '_state_dict_hooks', '_state_dict_pre_hooks', '_load_state_dict_pre_hooks',
               '_load_state_dict_post_hooks', '_modules']


def test_a_modules_dict_has_pytorchs_keys():
    """Checked against PyTorch 2.13: the Module's own attributes, then the layer's, in its order; plain values a
    script sets land there, parameters and submodules do not."""
    source = ("import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(2, 3)\n        self.scale = 2.0\n"
              "        self.w = torch.ones(2)\nm = M()\nprint(list(vars(m)))\nprint(vars(nn.ReLU()))\n"
              "for layer in (nn.Linear(2, 3), nn.Conv2d(1, 2, 3), nn.BatchNorm1d(3), nn.ZeroPad2d(1), nn.LSTMCell(2, 3),"
              " nn.Embedding(4, 2), nn.MultiheadAttention(4, 2), nn.CrossEntropyLoss()):\n"
              "    print(list(vars(layer))[17:])\n"
              "m.__dict__.update(lr=0.1)\nprint(m.lr, vars(m)['_modules'].keys(), m.__dict__ is vars(m))\n")
    out = gradcli_output(source).splitlines()
    assert out[0] == repr(MODULE_KEYS + ["scale", "w"])
    assert out[1] == ("{'training': True, '_parameters': {}, '_buffers': {}, '_non_persistent_buffers_set': set(), "
                      "'_backward_pre_hooks': OrderedDict(), '_backward_hooks': OrderedDict(), "
                      "'_is_full_backward_hook': None, '_forward_hooks': OrderedDict(), "
                      "'_forward_hooks_with_kwargs': OrderedDict(), '_forward_hooks_always_called': OrderedDict(), "
                      "'_forward_pre_hooks': OrderedDict(), '_forward_pre_hooks_with_kwargs': OrderedDict(), "
                      "'_state_dict_hooks': OrderedDict(), '_state_dict_pre_hooks': OrderedDict(), "
                      "'_load_state_dict_pre_hooks': OrderedDict(), '_load_state_dict_post_hooks': OrderedDict(), "
                      "'_modules': {}, 'inplace': False}")
    assert out[2:10] == [
        "['in_features', 'out_features']",
        "['in_channels', 'out_channels', 'kernel_size', 'stride', 'padding', 'dilation', 'transposed', "
        "'output_padding', 'groups', 'padding_mode', '_reversed_padding_repeated_twice']",
        "['num_features', 'eps', 'momentum', 'affine', 'track_running_stats']",
        "['value', 'padding']",
        "['input_size', 'hidden_size', 'bias']",
        "['num_embeddings', 'embedding_dim', 'padding_idx', 'max_norm', 'norm_type', 'scale_grad_by_freq', 'sparse']",
        "['embed_dim', 'kdim', 'vdim', '_qkv_same_embed_dim', 'num_heads', 'dropout', 'batch_first', 'head_dim', "
        "'bias_k', 'bias_v', 'add_zero_attn']",
        "['reduction', 'ignore_index', 'label_smoothing']"]
    assert out[10] == "0.1 dict_keys(['fc']) True"


def test_hooks_registered_through_the_tables_pytorch_names():
    """The hooks a script registers are in the tables PyTorch keeps them in, and still run."""
    source = ("import torch\nfrom torch import nn\nm = nn.Linear(2, 2)\n"
              "h = m.register_state_dict_pre_hook(lambda mod, prefix, keep: print('pre', prefix))\n"
              "m.register_load_state_dict_post_hook(lambda mod, keys: print('post', keys))\n"
              "m.register_load_state_dict_pre_hook(lambda *a: print('load pre', a[2]))\n"
              "print([len(vars(m)[k]) for k in ('_state_dict_pre_hooks', '_load_state_dict_post_hooks', "
              "'_load_state_dict_pre_hooks')])\nsd = m.state_dict()\nm.load_state_dict(sd)\nh.remove()\n"
              "print(len(vars(m)['_state_dict_pre_hooks']))\n")
    assert gradcli_output(source) == ("[1, 1, 1]\npre \nload pre \npost <All keys matched successfully>\n0\n")


def test_frames_follow_calls_and_know_their_lines():
    source = ("import inspect\ndef where():\n    f = inspect.currentframe().f_back\n"
              "    return f.f_code.co_name, f.f_lineno\ndef caller():\n    x = 1\n    return where()\n"
              "print(caller(), where())\n")
    assert gradcli_output(source) == "('caller', 7) ('<module>', 8)\n"


@pytest.mark.parametrize("source, message", [
    ("class A:\n    pass\nvars(A())['__dict__'] = {}",
     "3:1: AttributeError: setting '__dict__' through an object's __dict__ is outside gradcli's language"),
    ("class A:\n    pass\nA().__dict__.update([('__call__', 1)])",
     "3:1: AttributeError: setting '__call__' through an object's __dict__ is outside gradcli's language"),
    ("import torch\nm = torch.nn.Linear(2, 2)\nm.__dict__['_modules'] = {}", "3:1: AttributeError: replacing '_modules' "
     "in a module's __dict__ is outside gradcli's language: gradcli keeps the module's tables itself"),
    ("import torch\nfrom torch.utils.data import DataLoader\nvars(DataLoader([1]))",
     "3:1: AttributeError: 'DataLoader' object attribute '__dict__' is outside gradcli's language"),
    ("import torch\nclass F(torch.autograd.Function):\n    pass\nvars(F)",
     "4:1: AttributeError: type object 'F' attribute '__dict__' is outside gradcli's language"),
    ("import torch\nvars(torch)", "2:1: NotImplementedError: gradcli does not implement vars() of a module"),
])
def test_what_stays_outside(source, message):
    assert located_error(source) == message


def test_a_tensors_dict_is_its_own_attributes():
    """Checked against PyTorch 2.13: vars(x) and x.__dict__ are the attributes a script set on the tensor, live;
    copies keep them; a name of PyTorch's Tensor stays refused there as in `x.name = value`."""
    source = ("import torch, copy\nt = torch.ones(2)\nprint(t.__dict__, vars(t))\nt.g = 5\nprint(vars(t), "
              "t.__dict__ is vars(t))\nprint(vars(torch.nn.Parameter(torch.ones(1))), vars(torch.nn.Linear(1, 1).weight))\n"
              "vars(t)['h'] = 3\nprint(t.h, vars(copy.deepcopy(t)), vars(torch.ones(2, requires_grad=True) * 2))\n"
              "del vars(t)['h']\nprint(hasattr(t, 'h'), vars(t))\n")
    assert gradcli_output(source) == ("{} {}\n{'g': 5} True\n{} {}\n3 {'g': 5, 'h': 3} {}\nFalse {'g': 5}\n")
    assert located_error("import torch\nt = torch.ones(2)\nvars(t)['sum'] = 1") == (
        "3:1: AttributeError: cannot set attribute 'sum' on a Tensor: in gradcli's language a tensor's own attribute "
        "may not hide PyTorch's Tensor.sum")
    assert located_error("import torch\nt = torch.ones(2)\nt.__dict__.update({'__array_interface__': {}})") == (
        "3:1: AttributeError: setting '__array_interface__' through an object's __dict__ is outside gradcli's "
        "language")
