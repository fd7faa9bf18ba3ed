"""A script's classes deriving from dict, list, OrderedDict, defaultdict and Counter, and classes defining
__setattr__ / __delattr__, compared with CPython 3.11 (copies and torch.save with PyTorch 2.13); whatever reads
a setter or a container's special method gets it guarded by the rules of setattr."""

import io

import pytest

from conftest import cpython_output, gradcli_output, located_error, normalize


SNIPPETS = [
    # the one-line AttrDict, and one written out
    "import json\nclass AttrDict(dict):\n    __getattr__ = dict.__getitem__\n    __setattr__ = dict.__setitem__\n"
    "    __delattr__ = dict.__delitem__\ncfg = AttrDict(lr=0.1, epochs=3)\ncfg.bs = 32\n"
    "print(cfg.lr, cfg['epochs'], len(cfg), cfg, isinstance(cfg, dict), type(cfg).__name__)\ndel cfg.bs\n"
    "print(cfg, json.dumps(cfg), dict(cfg), {**cfg}, sorted(cfg), 'lr' in cfg, cfg.get('x', 0))\n"
    "try:\n    cfg.missing\nexcept KeyError as e:\n    print('KeyError', e)\n"
    "print(AttrDict.__getattr__, AttrDict.__setattr__)",
    "import copy\nclass Config(dict):\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n"
    "        self.frozen = False\n    def __getattr__(self, name):\n        try:\n            return self[name]\n"
    "        except KeyError:\n            raise AttributeError(name) from None\n    def __setattr__(self, name, value):\n"
    "        if name == 'frozen':\n            object.__setattr__(self, name, value)\n        else:\n"
    "            self[name] = value\nc = Config(a=1)\nc.b = 2\nprint(c, c.a, c.frozen, vars(c), hasattr(c, 'zz'))\n"
    "d = copy.deepcopy(c)\ne = copy.copy(c)\nprint(d, type(d).__name__, d.frozen, e, e is c, e == c)",
    # a list with methods; slicing and + give lists, as in CPython
    "import copy\nclass History(list):\n    def best(self):\n        return min(self)\n    def __repr__(self):\n"
    "        return f'History({list.__repr__(self)})'\nh = History([3.0, 1.0, 2.0])\nh.append(0.5)\n"
    "print(h, h.best(), len(h), h[1:], type(h[1:]).__name__, sorted(h), h + [9], h * 2, list(reversed(h)))\n"
    "h2 = copy.deepcopy(h)\nh2.append(7)\nh.note = 'n'\nprint(h2, h, type(h2).__name__, vars(h), vars(copy.copy(h)))",
    # the collections' classes: overridden item setting, defaults, counts; copies as CPython makes them
    "import copy\nfrom collections import OrderedDict, defaultdict, Counter\nclass LastUpdated(OrderedDict):\n"
    "    def __setitem__(self, key, value):\n        super().__setitem__(key, value)\n        self.move_to_end(key)\n"
    "o = LastUpdated()\no['a'] = 1\no['b'] = 2\no['a'] = 3\nprint(o, list(o), copy.deepcopy(o))\n"
    "class DD(defaultdict):\n    pass\nd = DD(list)\nd['x'].append(1)\nd.note = 'n'\nd2 = copy.deepcopy(d)\n"
    "print(d2, vars(d2), d2.default_factory, vars(d))\nclass Tally(Counter):\n    def top(self):\n"
    "        return self.most_common(1)[0]\nt = Tally('abracadabra')\nt.note = 1\n"
    "print(t.top(), t['a'], t['z'], copy.deepcopy(t), vars(copy.copy(t)))",
    # a namedtuple's subclass (CPython's documented idiom), a tuple, a set and a frozenset
    "import copy\nfrom collections import namedtuple\nclass Point(namedtuple('Point', 'x y')):\n    __slots__ = ()\n"
    "    @property\n    def norm(self):\n        return (self.x ** 2 + self.y ** 2) ** 0.5\n    def __str__(self):\n"
    "        return f'Point: x={self.x:6.3f} y={self.y:6.3f} norm={self.norm:6.3f}'\np = Point(3, 4)\n"
    "print(p, repr(p), p.norm, p._replace(x=1), p._asdict(), Point._fields, Point._make([5, 6]), p + (1,))\n"
    "print(copy.deepcopy(p), type(copy.copy(p)).__name__)\nclass Tag(tuple):\n    pass\nt = Tag((1, [2]))\n"
    "t.note = 'x'\nt2 = copy.deepcopy(t)\nprint(t2, type(t2).__name__, t2[1] is t[1], vars(t2))\n"
    "class Bag(set):\n    def __init__(self, *a):\n        print('Bag init', a)\n        super().__init__(*a)\n"
    "b = Bag([1, 2])\nprint(sorted(copy.deepcopy(b)), type(copy.copy(b)).__name__)\nclass F(frozenset):\n"
    "    pass\nprint(copy.copy(F([1])), hash(F([1])) == hash(frozenset([1])))",
    # type(name, bases, dict): the class a class statement would make
    "Point = type('Point', (), {'x': 1, 'norm': lambda self: self.x * 2})\np = Point()\n"
    "print(Point, p.norm(), Point.__name__, Point.__qualname__, type(p) is Point, Point.__module__)\n"
    "E = type('MyErr', (ValueError,), {})\ntry:\n    raise E('boom')\nexcept ValueError as e:\n    print(repr(e))\n"
    "for bad in [lambda: type(1, (), {}), lambda: type('A', [], {}), lambda: type('A', (), 3)]:\n    try:\n"
    "        bad()\n    except Exception as e:\n        print(type(e).__name__, e)\n"
    "D = type('D', (dict,), {'__getattr__': dict.__getitem__})\nprint(D(a=1).a)",
    # __init_subclass__ (a plugin registry; an explicit classmethod) and the class keywords it takes
    "class Plugin:\n    registry = {}\n    def __init_subclass__(cls, name=None, **kwargs):\n"
    "        super().__init_subclass__(**kwargs)\n        Plugin.registry[name or cls.__name__.lower()] = cls\n"
    "class Relu(Plugin):\n    pass\nclass Gelu(Plugin, name='gelu-tanh'):\n    pass\nclass Sub(Gelu):\n    pass\n"
    "print(sorted(Plugin.registry), Plugin.registry['gelu-tanh'] is Gelu)\nclass Counted:\n    count = 0\n"
    "    @classmethod\n    def __init_subclass__(cls, **kw):\n        Counted.count += 1\n        cls.rank = Counted.count\n"
    "class A(Counted):\n    pass\nclass B(Counted):\n    pass\nprint(A.rank, B.rank, Counted.count)\n"
    "T = type('T', (Plugin,), {}, name='typed')\nprint(Plugin.registry['typed'] is T)\n"
    "for make in [lambda: type('C', (Plugin,), {}, bogus=1, name='c'), lambda: type('D', (), {}, bogus=1)]:\n"
    "    try:\n        make()\n    except TypeError as e:\n        print(e)\n"
    "try:\n    class E(bogus=1):\n        pass\nexcept TypeError as e:\n    print(e)",
    # __setattr__ and __delattr__ of a plain class, through super() and object
    "class P:\n    def __init__(self):\n        self.x = 1\n    def __setattr__(self, name, value):\n"
    "        print('set', name, value)\n        super().__setattr__(name, value)\n    def __delattr__(self, name):\n"
    "        print('del', name)\n        object.__delattr__(self, name)\np = P()\np.y = 2\nsetattr(p, 'z', 3)\n"
    "del p.y\ndelattr(p, 'z')\nprint(vars(p))\nclass Q:\n    __setattr__ = object.__setattr__\nq = Q()\nq.a = 1\n"
    "print(vars(q), dict.__getitem__({'k': 5}, 'k'), list.__len__([1, 2]), object.__setattr__)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_as_cpython(snippet):
    assert normalize(gradcli_output(snippet + "\n")) == normalize(cpython_output(snippet + "\n"))


def test_a_modules_setattr_and_saving_as_pytorch():
    """Checked against PyTorch 2.13: a module's own __setattr__ sees what PyTorch's code sets through it (train()
    sets `training` on each module); torch.save runs none of the script's code, torch.load calls an OrderedDict
    subclass as the unpickler does."""
    source = ("import copy, io\nimport torch\nfrom torch import nn\nfrom collections import OrderedDict\n"
              "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.fc = nn.Linear(2, 2)\n    def __setattr__(self, name, value):\n"
              "        print('setting', name, type(value).__name__)\n        super().__setattr__(name, value)\n"
              "    def __delattr__(self, name):\n        print('deleting', name)\n        super().__delattr__(name)\n"
              "n = Net()\nn.train(False)\nn.scale = 2.0\nn.w = nn.Parameter(torch.ones(1))\ndel n.w\n"
              "class OD(OrderedDict):\n    def __init__(self, *a, **k):\n        print('OD init', a, k)\n"
              "        super().__init__(*a, **k)\n        self.tag = 't'\nclass L(list):\n    pass\nbuf = io.BytesIO()\n"
              "torch.save({'hist': L([1, 2]), 'd': OD(b=2)}, buf)\nbuf.seek(0)\nr = torch.load(buf, weights_only=False)\n"
              "print(r, type(r['hist']).__name__, r['d'].tag)\n")
    assert gradcli_output(source) == (
        "setting fc Linear\nsetting training bool\nsetting scale float\nsetting w Parameter\ndeleting w\n"
        "OD init () {'b': 2}\nOD init () {}\n{'hist': [1, 2], 'd': OD([('b', 2)])} L t\n")


_OUTSIDE = "AttributeError: {} attribute '{}' is outside gradcli's language"


@pytest.mark.parametrize("source, message", [
    ("class A:\n    pass\na = A()\na.__setattr__('__class__', int)", "4:1: " + _OUTSIDE.format("'A' object", "__class__")),
    ("class A:\n    pass\nobject.__setattr__(A(), '__array_interface__', {})",
     "3:1: " + _OUTSIDE.format("'A' object", "__array_interface__")),
    ("class A:\n    def f(self):\n        super().__setattr__('__len__', 1)\nA().f()",
     "3:9: " + _OUTSIDE.format("'A' object", "__len__")),
    ("class A:\n    pass\nA.__setattr__(A(), '__index__', 1)", "3:1: " + _OUTSIDE.format("'A' object", "__index__")),
    ("class A:\n    __setattr__ = object.__setattr__\na = A()\na.__setattr__('__iter__', 1)",
     "4:1: " + _OUTSIDE.format("'A' object", "__iter__")),
    ("class A:\n    x = 1\na = A()\na.__delattr__('__class__')", "4:1: " + _OUTSIDE.format("'A' object", "__class__")),
    ("class A:\n    pass\ndict.__setitem__(vars(A()), '__array_interface__', {})",
     "3:1: TypeError: dict.__setitem__() of an object's __dict__ is outside gradcli's language: write into it with "
     "its own methods"),
    ("class A:\n    pass\ndict.__init__(vars(A()), __len__=1)",
     "3:1: TypeError: dict.__init__() of an object's __dict__ is outside gradcli's language: write into it with its "
     "own methods"),
    ("class A:\n    pass\ndict.__ior__(vars(A()), {'__len__': 1})",
     "3:1: TypeError: dict.__ior__() of an object's __dict__ is outside gradcli's language: write into it with its "
     "own methods"),
    ("class A:\n    pass\nA().__setattr__.function", "3:1: AttributeError: 'method-wrapper' object has no attribute "
     "'function'"),
    ("class A:\n    pass\nA().__setattr__.__self__", "3:1: " + _OUTSIDE.format("'method-wrapper' object", "__self__")),
    ("class A(dict):\n    __setattr__ = dict.__setitem__\nA.__setattr__.function", "3:1: AttributeError: "
     "'wrapper_descriptor' object has no attribute 'function'"),
    ("dict.update", "1:1: " + _OUTSIDE.format("'type' object", "update")),
    ("class S(str):\n    pass", "1:1: TypeError: subclassing 'str' is outside gradcli's language: a script's class "
     "may derive from its own classes, object, dict, list, tuple, set, frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the exception classes and the library classes gradcli provides"),
    ("class A:\n    def __getattribute__(self, name):\n        return 1", None),
])
def test_what_stays_outside(source, message):
    if message is None:     # a syntax-level refusal: the class body names a special method outside the language
        with pytest.raises(Exception, match="__getattribute__"):
            gradcli_output(source + "\n")
        return
    assert located_error(source) == message


# __del__: run when the object is freed, as CPython runs it; at the end of `gradcli run` the script's names are
# cleared as CPython clears __main__'s at exit
DEL_SNIPPET = ("class R:\n    def __init__(self, n):\n        self.n = n\n    def __del__(self):\n"
               "        print('del', self.n)\na = R(1)\na = None\ndef f():\n    r = R(2)\n    return 5\nprint(f())\n"
               "x = [R(3), R(4)]\nx.pop()\nprint('kept', x[0].n)\ndel x\n")     # (nothing left for the next test)


def test_del_runs_when_freed_as_cpython():
    assert gradcli_output(DEL_SNIPPET) == cpython_output(DEL_SNIPPET)


def test_del_at_exit_and_its_errors_as_cpython(tmp_path):
    """Checked against CPython 3.11: the objects the script's names hold at exit run their __del__, those in
    cycles too, and an error in __del__ is 'Exception ignored in'."""
    import launcher
    script = tmp_path / "d.grad"
    script.write_text(DEL_SNIPPET + "class Bad:\n    def __del__(self):\n        raise ValueError('oops')\nb = Bad()\n"
                      "del b\nclass N:\n    def __init__(self):\n        self.me = self\n    def __del__(self):\n"
                      "        print('cycle freed')\nn = N()\n_private = R(5)\nkeep = R(6)\nprint('end')\n")
    p = launcher.run(["run", str(script)], timeout=60)
    assert p.returncode == 0
    # (CPython frees what is left at exit with its collector, in an order of its own: the same objects go)
    assert p.stdout.startswith("del 1\ndel 2\n5\ndel 4\nkept 3\ndel 3\nend\n")
    assert sorted(p.stdout.splitlines()[7:]) == ["cycle freed", "del 5", "del 6"]
    assert normalize(p.stderr).splitlines()[0] == "Exception ignored in: <function Bad.__del__ at 0xADDR>"
    assert "ValueError: oops" in p.stderr and "Traceback" not in p.stderr


def test_the_collection_at_exit_is_for_the_sessions_own_classes(monkeypatch):
    """finalize's last collection runs only when this session's script made a class with a __del__: a
    class of an earlier session in the same process (the REPL's kernel, a test worker) costs the next
    session's exit nothing (a full collection of a large process took 0.1 s a run)."""
    import gc
    from gradcli.session import Session
    collected = []
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(a) or 0)
    first = Session(out=io.StringIO())
    first.run_source("class R:\n    def __del__(self):\n        pass\nr = R()\n")
    first.finalize()
    assert len(collected) == 1
    second = Session(out=io.StringIO())
    second.run_source("x = 1\n")
    second.finalize()
    assert len(collected) == 1


@pytest.mark.parametrize("tail", ["r = R()\n", "def f():\n    r = R()\nf()\n"])
def test_timeout_holds_inside_del(tmp_path, tail):
    """--timeout fires in a __del__ (freed at exit, or inside the run), where Python cannot raise: the run stops
    with status 124 all the same."""
    import launcher
    script = tmp_path / "spin.grad"
    script.write_text("class R:\n    def __del__(self):\n        while True:\n            pass\n" + tail + "print('end')\n")
    p = launcher.run(["run", "--timeout", "0.5", str(script)], timeout=60)
    assert p.returncode == 124
    assert "TimeoutError: stopped after 0.5 seconds (--timeout 0.5)" in p.stderr and "Traceback" not in p.stderr
