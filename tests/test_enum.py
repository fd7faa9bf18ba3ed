"""enum: Enum, IntEnum, StrEnum, Flag, IntFlag, auto and unique on a script's classes, CPython's own EnumType making
them, compared with CPython 3.11; what scripts reach of enum classes and members, and nothing more."""

import pytest

from conftest import cpython_output, gradcli_output, located_error

IMPORTS = "import enum\nfrom enum import Enum, IntEnum, StrEnum, Flag, IntFlag, auto, unique\n"
TRY = "def t(f):\n    try:\n        print(f())\n    except Exception as e:\n        print(type(e).__name__, e)\n"
ACT = ("class Act(Enum):\n    RELU = 1\n    TANH = 2\n    GELU = auto()\n    def describe(self):\n"
       "        return f'{self.name}={self.value}'\n    @classmethod\n    def default(cls):\n        return cls.RELU\n")

SNIPPETS = [
    ACT + "print(Act.TANH, repr(Act.TANH), Act.TANH.name, Act.TANH.value, Act(2), Act['GELU'], len(Act), list(Act))\n"
    "print(Act, type(Act), type(Act.TANH), Act.TANH.describe(), Act.default(), Act.__members__)\n"
    "print(Act.TANH == Act.TANH, Act.TANH == 2, Act.TANH is Act(2), {Act.RELU: 'r'}[Act.RELU], Act.RELU in Act)\n"
    "print(list(reversed(Act)), sorted(Act, key=lambda a: -a.value), Act.TANH._name_, Act.TANH._value_)\n"
    "print(isinstance(Act.TANH, Enum), isinstance(Act.TANH, Act), issubclass(Act, Enum), Act.TANH.__class__)\n"
    "print(Enum, IntEnum, Flag, auto, format(Act.TANH), '%s' % Act.TANH, str(Act), f'{Act.TANH!r:>20}|')\n"
    "print(Act.__name__, Act.__qualname__, Act.__module__, Act.__members__.keys(), Act.__members__['RELU'])",
    ACT + TRY + "t(lambda: Act(7))\nt(lambda: Act['X'])\nt(lambda: Act.foo)\nt(lambda: Act.name)\n"
    "t(lambda: Act.RELU < Act.TANH)\ndef reassign():\n    Act.RELU = 5\nt(reassign)\ndef delete():\n    del Act.RELU\n"
    "t(delete)\ndef setvalue():\n    Act.RELU.value = 3\nt(setvalue)\ndef dup():\n    class D(Enum):\n        A = 1\n"
    "        A = 2\nt(dup)\ndef ext():\n    class E(Act):\n        X = 1\nt(ext)\ndef uniq():\n    @unique\n"
    "    class U(Enum):\n        A = 1\n        B = 1\n    return U\nt(uniq)\nt(lambda: unique(3))\n"
    "def late():\n    class L(Enum):\n        A = auto()\n        def _generate_next_value_(name, start, count, last):\n"
    "            return name\nt(late)\ndef mro():\n    class M(Enum):\n        mro = 1\nt(mro)\n"
    "def sunder():\n    class S(Enum):\n        _x_ = 1\nt(sunder)\nt(lambda: Act.RELU.foo)",
    "class Alias(Enum):\n    A = 1\n    B = 1\nprint(Alias.B, Alias.B is Alias.A, list(Alias), Alias.__members__)\n"
    "class Pri(IntEnum):\n    LOW = 1\n    HIGH = 2\nprint(Pri.LOW, repr(Pri.HIGH), Pri.LOW + 1, Pri.HIGH > Pri.LOW, Pri(2), "
    "f'{Pri.HIGH}', str(Pri.HIGH), int(Pri.LOW), [1, 2, 3][Pri.LOW], Pri.HIGH.bit_length(), max(Pri))\n"
    "class Perm(Flag):\n    R = auto()\n    W = auto()\n    X = auto()\nrw = Perm.R | Perm.W\n"
    "print(rw, repr(rw), Perm.R in rw, Perm.X in rw, list(rw), Perm(0), ~Perm.R, len(rw), bool(Perm(0)), type(Perm))\n"
    "class Bits(IntFlag):\n    A = 1\n    B = 2\nprint(Bits.A | Bits.B, Bits.A | 4, Bits.B & 3, repr(Bits(3)))\n"
    "class Color(StrEnum):\n    RED = auto()\n    BLUE = 'blue'\n"
    "print(Color.RED, repr(Color.RED), Color.RED.upper(), Color.BLUE == 'blue', f'{Color.RED}', Color.RED.format())\n"
    "class S(str, Enum):\n    A = 'a'\nprint(S.A, repr(S.A), S.A.value, S.A.upper(), S.A + 'b')",
    "class Planet(Enum):\n    MERCURY = (3.303e+23, 2.4397e6)\n    EARTH = (5.976e+24, 6.37814e6)\n"
    "    def __init__(self, mass, radius):\n        self.mass = mass\n        self.radius = radius\n    @property\n"
    "    def g(self):\n        return 6.673e-11 * self.mass / (self.radius * self.radius)\n"
    "print(Planet.EARTH.mass, round(Planet.EARTH.g, 3), Planet((5.976e+24, 6.37814e6)))\n"
    "class Mode(Enum):\n    TRAIN = 'train'\n    EVAL = 'eval'\n    @classmethod\n    def _missing_(cls, value):\n"
    "        for m in cls:\n            if m.value == str(value).lower():\n                return m\n        return None\n"
    "print(Mode('TRAIN'), Mode('Eval'))\ntry:\n    Mode('x')\nexcept ValueError as e:\n    print(e)\n"
    "class G(Enum):\n    def _generate_next_value_(name, start, count, last_values):\n        return name.lower()\n"
    "    A = auto()\n    B = auto()\nprint(list(G), G.A.value)\n"
    "class Ig(Enum):\n    _ignore_ = ['tmp']\n    tmp = 3\n    A = 1\nprint(list(Ig))",
    ACT + "for a in [*Act, 3]:\n    match a:\n        case Act.RELU:\n            print('relu')\n"
    "        case Act.TANH | Act.GELU:\n            print('other', a.name)\n        case Act():\n            print('never')\n"
    "        case int():\n            print('int')\nimport dataclasses\n@dataclasses.dataclass\nclass Cfg:\n"
    "    act: Act = Act.TANH\nprint(Cfg(), Cfg(Act.GELU) == Cfg(Act.GELU))\nimport copy\n"
    "print(copy.deepcopy(Act.RELU) is Act.RELU, copy.copy(Act.TANH) is Act.TANH, copy.deepcopy([Act.RELU])[0] is Act.RELU)\n"
    "Act.RELU.tag = 'x'\nAct.extra = 5\nprint(Act.RELU.tag, Act.extra, getattr(Act, 'TANH'), hasattr(Act, 'RELU'))\n"
    "Color2 = Enum('Color2', 'RED GREEN')\nprint(Color2.RED, list(Color2), Color2.__module__)",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_enum(snippet):
    source = IMPORTS + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


def test_an_int_enum_indexes_tensors():
    """Checked against PyTorch 2.13: a member is an int wherever a dim, a size or an index is."""
    source = ("import torch\n" + IMPORTS + "class Lvl(IntEnum):\n    A = 1\n    B = 2\nx = torch.tensor([1., 2., 3.])\n"
              "print(x[Lvl.B], float(Lvl.B), torch.zeros(Lvl.B))\ny = torch.arange(6.).reshape(Lvl.B, 3)\n"
              "print(y.sum(Lvl.A), y.size(Lvl.A), y.softmax(dim=Lvl.A).shape, y.mean(Lvl.A), torch.cat([y, y], Lvl.A).shape)\n"
              "print(y.unsqueeze(Lvl.A).shape, y.argmax(Lvl.A), y.topk(Lvl.B).values, torch.nn.Linear(Lvl.B, 1).in_features)\n")
    assert gradcli_output(source) == (
        "tensor(3.) 2.0 tensor([0., 0.])\ntensor([ 3., 12.]) 3 torch.Size([2, 3]) tensor([1., 4.]) torch.Size([2, 6])\n"
        "torch.Size([2, 1, 3]) tensor([2, 2]) tensor([[2., 1.],\n        [5., 4.]]) 2\n")


@pytest.mark.parametrize("source, message", [
    (ACT + "Act(7)", "12:1: ValueError: 7 is not a valid Act"),
    (ACT + "Act['X']", "12:1: KeyError: 'X'"),
    ("class D(Enum):\n    A = 1\n    A = 2", "5:0: TypeError: 'A' already defined as 1"),
    (ACT + "class E(Act):\n    X = 1", "12:1: TypeError: <enum 'E'> cannot extend <enum 'Act'>"),
    ("class P:\n    pass\nclass E(P, Enum):\n    A = 1", "5:1: TypeError: an enum deriving from <class '__main__.P'> is "
     "outside gradcli's language: its bases may be enums and int, float or str"),
    ("class E(Enum):\n    A = 1\n    def __getattribute__(self, n):\n        pass", "5:5: SyntaxError: defining "
     "__getattribute__ in a class is not part of gradcli's language"),
    ("from enum import verify", "3:1: NotImplementedError: gradcli does not implement enum.verify"),
    ("enum.EnumType", "3:1: NotImplementedError: gradcli does not implement enum.EnumType"),
    ("enum.sys", "3:1: AttributeError: module 'enum' attribute 'sys' is outside gradcli's language"),
])
def test_errors(source, message):
    assert located_error(IMPORTS + source) == message


ESCAPES = [
    "enum.__dict__", "Act._member_map_", "Act._value2member_map_", "Act._member_names_", "Act._new_member_",
    "Act._member_type_", "Act._missing_", "Act.RELU._sort_order_", "Act.RELU.__objclass__", "Act.__dict__", "Act.mro",
    "Act.__mro__", "Act.__new__", "Act.__init_subclass__", "Act.RELU.__reduce_ex__", "Act.RELU.__dict__",
    "Act.describe.__globals__", "Act.RELU.describe.__func__", "type(Act).__call__", "Enum._member_map_", "Enum.__new__", "auto().value", "auto.__init__",
    "Act.__members__.__class__.__init__", "unique.__globals__", "Act.RELU.__init__", "iter(Act).gi_frame",
    "Act._generate_next_value_",
]


@pytest.mark.parametrize("expression", ESCAPES)
def test_nothing_behind_them_is_reachable(expression):
    assert located_error(IMPORTS + ACT + f"x = {expression}").endswith("is outside gradcli's language")


@pytest.mark.parametrize("statement", [
    "Act._member_map_ = {}", "Act._value2member_map_ = {}", "Act.RELU._value_ = 5", "Act.RELU._name_ = 'X'",
    "Enum.extra = 1", "IntEnum.x = 2", "Act.__repr__ = print", "Act.RELU.__class__ = int", "del Act._member_map_",
    "del Enum.__members__", "setattr(Act, '_new_member_', print)",
])
def test_nothing_behind_them_can_be_changed(statement):
    assert "is outside gradcli's language" in located_error(IMPORTS + ACT + statement)


@pytest.mark.parametrize("body", [
    "class P(Enum):\n    A = 1\n    def __init__(self, v):\n        while True:\n            pass\n",
    "class P(Enum):\n    A = 1\n    @classmethod\n    def _missing_(cls, v):\n        while True:\n            pass\nP(5)\n",
])
def test_the_timeout_stops_code_enum_runs(tmp_path, body):
    import subprocess
    import sys
    script = tmp_path / "spin.grad"
    script.write_text("import torch\n" + IMPORTS + body)
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", "--timeout", "0.5", str(script)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 124 and "TimeoutError: stopped after 0.5 seconds" in done.stderr


def test_an_enum_with_abcmeta_is_cpythons_metaclass_conflict():
    assert located_error(IMPORTS + "import abc\nclass E(Enum, metaclass=abc.ABCMeta):\n    A = 1") == (
        "4:1: TypeError: metaclass conflict: the metaclass of a derived class must be a (non-strict) subclass of the "
        "metaclasses of all its bases")


def test_enum_is_loaded_only_by_scripts_that_use_it():
    import subprocess
    import sys
    code = ("import sys, io\nfrom gradcli.session import Session\nSession(out=io.StringIO()).run_source('class A:\\n"
            "    x: int = 1\\n')\nprint('gradcli.language.pyenum' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"


def test_a_saved_member_loads_as_itself_and_weights_only_names_its_class():
    """Checked against PyTorch 2.13: pickled by name, so the loaded member is the member; the weights-only
    unpickler names the class as a global."""
    source = ("import torch\n" + IMPORTS + ACT + "torch.save({'act': Act.RELU}, 'ck.pt')\n"
              "print(torch.load('ck.pt', weights_only=False)['act'] is Act.RELU)\ntry:\n    torch.load('ck.pt')\n"
              "except Exception as e:\n    print(type(e).__name__, 'safe_globals([__main__.Act])' in str(e))\n")
    assert gradcli_output(source) == "True\nUnpicklingError True\n"


@pytest.mark.filterwarnings("ignore:in 3.12 __contains__:DeprecationWarning")     # (enum's own, which Python hides
def test_a_value_in_an_enum_warns_then_fails_as_cpython_3_11():                  # outside __main__)
    """CPython 3.11 run on the script file prints this (a script is __main__, where DeprecationWarning shows)."""
    import io

    from gradcli.session import Session
    err, out = io.StringIO(), io.StringIO()
    Session(out=out, err=err).run_source(IMPORTS + "class Act(Enum):\n    A = 1\ntry:\n    1 in Act\nexcept TypeError as e:\n"
                                         "    print(e)\nprint(Act.A in Act)\n", "s.grad")
    assert out.getvalue() == "unsupported operand type(s) for 'in': 'int' and 'EnumType'\nTrue\n"
    assert err.getvalue() == ("s.grad:6: DeprecationWarning: in 3.12 __contains__ will no longer raise TypeError, but "
                              "will return True or\nFalse depending on whether the value is a member or the value of "
                              "a member\n  1 in Act\n")
