"""The language's `random` module: CPython's streams exactly, seeded per session, bounded, sandboxed."""

import io
import pytest

from conftest import cpython_output, gradcli_output
from gradcli.engine.state import STATE
from gradcli.errors import ScriptError
from gradcli.session import Session

# Each snippet runs under CPython and under gradcli; the printed text must be the same.
SNIPPETS = [
    "random.seed(42)\nprint(random.random(), random.random())",
    "random.seed(0)\nprint(random.randint(1, 10), random.randrange(100), random.randrange(3, 90, 7))",
    "random.seed(3)\nprint(random.choice('abcdef'), random.choice([1.5, 2.5, 3.5]))",
    "random.seed(5)\nx = list(range(12))\nrandom.shuffle(x)\nprint(x)",
    "random.seed(7)\nprint(random.sample(range(1000), 5), random.sample([3, 1, 4, 1, 5], k=2))",
    "random.seed(9)\nprint(random.uniform(-2, 2), random.gauss(0, 1), random.gauss(5, 0.1))",
    "random.seed(11)\nprint(random.choices([1, 2, 3], weights=[1, 5, 1], k=6), random.choices('xy', k=3))",
    "random.seed(13)\nprint(random.normalvariate(0, 1), random.expovariate(2.0), random.triangular(0, 1, 0.2))",
    "random.seed(15)\nprint(random.betavariate(2, 3), random.gammavariate(2, 1), random.lognormvariate(0, 1))",
    "random.seed(17)\nprint(random.vonmisesvariate(1, 2), random.paretovariate(3), random.weibullvariate(1, 2))",
    "random.seed(19)\nprint(random.getrandbits(70), random.getrandbits(3))",
    "random.seed('a string seed')\nprint(random.random())",
    "random.seed(21)\ns = random.getstate()\na = random.random()\nrandom.setstate(s)\nprint(a == random.random())",
    "r = random.Random(23)\nq = random.Random(23)\nprint(r.random() == q.random(), r.randint(0, 9), r.sample('abcd', 2))",
    "from random import seed, random as draw\nseed(25)\nprint(draw())",
    "import random as rnd\nrnd.seed(27)\nprint(rnd.random())",
]



@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_numbers(snippet):
    source = "import random\n" + snippet + "\n"
    assert gradcli_output(source) == cpython_output(source)


def test_each_session_starts_from_the_os_and_a_replay_can_start_where_it_did():
    source = "import random\nprint(random.random())\n"
    first, second = Session(), Session()
    assert first.python_seed != second.python_seed
    out = io.StringIO()
    Session(out=out, python_seed=first.python_seed).run_source(source)
    again = io.StringIO()
    Session(out=again, python_seed=first.python_seed).run_source(source)
    assert out.getvalue() == again.getvalue()


def test_torch_seed_leaves_pythons_stream_alone():
    """--seed is torch.manual_seed: Python's stream still starts from the OS."""
    a, b = io.StringIO(), io.StringIO()
    Session(out=a, seed=0).run_source("import random\nprint(random.random())\n")
    Session(out=b, seed=0).run_source("import random\nprint(random.random())\n")
    assert a.getvalue() != b.getvalue()


def test_isolated_restores_the_stream():
    Session(python_seed=1)
    expected = STATE.python_random.getstate()
    with STATE.isolated():
        STATE.python_random.seed(99)
        STATE.python_random.random()
    assert STATE.python_random.getstate() == expected


def _error(source: str) -> str:
    with pytest.raises(ScriptError) as info:
        Session(out=io.StringIO()).run_source("import random\n" + source + "\n")
    return f"{info.value.kind}: {info.value.message}"


@pytest.mark.parametrize("source, message", [
    ("random.choices([1, 2], k=10**10)",
     "MemoryError: a list of 10000000000 items is too large (gradcli allows at most {items})"),
    ("random.sample(range(10**12), 10**10)",
     "MemoryError: a list of 10000000000 items is too large (gradcli allows at most {items})"),
    ("random.Random(1).choices('ab', k=10**10)",
     "MemoryError: a list of 10000000000 items is too large (gradcli allows at most {items})"),
    ("random.getrandbits(10**8)", "MemoryError: integer results are limited to about 300,000 digits in gradcli"),
])
def test_what_it_builds_is_bounded(source, message):
    assert _error(source) == message.format(items=STATE.max_items)


@pytest.mark.parametrize("source, message", [
    ("random.os", "AttributeError: module 'random' has no attribute 'os'"),
    ("random.SystemRandom()", "AttributeError: module 'random' has no attribute 'SystemRandom'"),
    ("random.Random.seed", "AttributeError: 'type' object attribute 'seed' is outside gradcli's language"),
    ("random.Random(1).gauss_next", "AttributeError: 'Random' object attribute 'gauss_next' is outside gradcli's language"),
    ("random.Random(1).VERSION", "AttributeError: 'Random' object attribute 'VERSION' is outside gradcli's language"),
    ("random.seed.__self__", "AttributeError: 'method' object attribute '__self__' is outside "
                             "gradcli's language"),
    # random is in the language and no package: Python's own refusal of a submodule
    ("import random.os", "ModuleNotFoundError: No module named 'random.os'; 'random' is not a package"),
])
def test_nothing_behind_the_module_is_reachable(source, message):
    if message is None:             # names starting with '_' never get past the parser
        with pytest.raises(ScriptError) as info:
            Session(out=io.StringIO()).run_source("import random\n" + source + "\n")
        assert info.value.kind == "SyntaxError"
        return
    assert _error(source) == message


def test_the_module_and_its_functions_print_as_cpythons():
    source = "import random\nprint(random)\nprint(random.Random)\n"
    assert gradcli_output(source) == cpython_output(source)


def test_all_of_math_is_there_and_computes_ascpython_output():
    import math
    from gradcli.language import stdlib
    assert set(stdlib.MATH.members) == {n for n in dir(math) if not n.startswith("_")}
    source = ("import math\nprint(math.cbrt(27.0), math.exp2(3), math.isqrt(10**20), math.lcm(4, 6, 10), "
              "math.nextafter(1.0, 2.0), math.ulp(1.0), math.gcd(12, 18), math.dist([0, 0], [3, 4]))\n")
    assert gradcli_output(source) == cpython_output(source)


def test_a_replay_starts_the_random_modules_stream_where_the_run_did():
    """Diagnostic replays (why notes, explain, --check-grads) start from Session.seeds: torch's seed and
    the random module's, so an unseeded script draws the same numbers again."""
    import random as cpython_random
    from gradcli.diagnostics import replay
    original = Session()
    expected = cpython_random.Random(original.python_seed).random()
    with replay.session(original.seeds, None, None) as replayed:
        assert replayed.python_seed == original.python_seed
        assert STATE.python_random.random() == expected
