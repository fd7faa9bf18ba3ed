"""argparse: CPython 3.11's parser as scripts reach it, compared with CPython (usage, help, errors and exits, actions,
subcommands, Namespace); the process's exit status and streams under `gradcli run`; and what stays out of reach
(files, the parser's internals, dunder names, sizes past the language's bounds)."""

import os
import subprocess
import sys

import pytest

from conftest import cpython_output, gradcli_output, located_error, normalize

# Each parse prints its Namespace, or its exit status and what the parser wrote to sys.stderr (the CPython side
# of cpython_output captures stdout only)
HEAD = ("import argparse\nimport contextlib\nimport io\nimport sys\n"
        "def run(p, argv, how='parse_args'):\n    err = io.StringIO()\n    try:\n"
        "        with contextlib.redirect_stderr(err):\n            print(getattr(p, how)(argv))\n"
        "    except SystemExit as e:\n        print('exit', e.code)\n    print(err.getvalue(), end='')\n")

SNIPPETS = [
    # the PyTorch examples' block: types, defaults, metavar, store_true, %(default)s, choices
    "p = argparse.ArgumentParser(prog='main.py', description='PyTorch MNIST Example')\n"
    "p.add_argument('--batch-size', type=int, default=64, metavar='N', help='input batch size (default: 64)')\n"
    "p.add_argument('--lr', type=float, default=1.0, metavar='LR', help='learning rate (default: %(default)s)')\n"
    "p.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA training')\n"
    "p.add_argument('--opt', choices=['sgd', 'adam'], default='sgd', help='one of %(choices)s')\n"
    "p.add_argument('--seed', type=int, default=1, metavar='S')\n"
    "for argv in ([], ['--lr', '0.5', '--no-cuda'], ['--batch-size=8', '--opt', 'adam'], ['--lr', 'x'], ['--opt', 'rms'],"
    " ['--bogus'], ['--batch-size'], ['--batch', '3'], ['-h']):\n    run(p, argv)\n"
    "print(p.format_usage(), end='')\np.print_usage()\nprint(repr(p))\nprint(p.get_default('lr'), p.prog, p.description)",
    # type= a script function (ValueError, ArgumentTypeError), a lambda, a class; positionals and nargs
    "def positive(s):\n    v = int(s)\n    if v <= 0:\n        raise argparse.ArgumentTypeError(f'{s} is not positive')\n"
    "    return v\nclass Celsius:\n    def __init__(self, s):\n        self.v = float(s)\n    def __repr__(self):\n"
    "        return f'Celsius({self.v})'\np = argparse.ArgumentParser(prog='t')\n"
    "p.add_argument('--epochs', type=positive, default=3)\np.add_argument('--scaled', type=lambda s: int(s) * 10)\n"
    "p.add_argument('--temp', type=Celsius)\np.add_argument('src')\np.add_argument('dims', nargs=2, type=int)\n"
    "p.add_argument('extra', nargs='*')\np.add_argument('--opt', nargs='?', const='c', default='d')\n"
    "p.add_argument('--many', nargs='+')\n"
    "for argv in (['a', '1', '2'], ['a', '1', '2', 'x', 'y', '--epochs', '5', '--scaled', '3', '--temp', '2.5'],"
    " ['a', '1'], ['a', '1', 'b'], ['--epochs', '-1', 'a', '1', '2'], ['--epochs', 'q', 'a', '1', '2'],"
    " ['--scaled', 'q', 'a', '1', '2'], ['--temp', 'hot', 'a', '1', '2'], ['--opt', 'a', '1', '2'],"
    " ['a', '1', '2', '--opt'], ['a', '1', '2', '--many'], []):\n    run(p, argv)\np.print_help()",
    # every action, BooleanOptionalAction, version, REMAINDER, groups, a mutually exclusive group
    "p = argparse.ArgumentParser(prog='train', epilog='bye %(prog)s')\n"
    "p.add_argument('-v', '--verbose', action='count', default=0)\np.add_argument('--tag', action='append')\n"
    "p.add_argument('--c', action='store_const', const=42)\np.add_argument('--ac', action='append_const', const=1, dest='acs')\n"
    "p.add_argument('--ext', action='extend', nargs='+', type=str)\n"
    "p.add_argument('--flag', action=argparse.BooleanOptionalAction, default=True, help='a flag')\n"
    "p.add_argument('--version', action='version', version='%(prog)s 1.0')\np.add_argument('--off', action='store_false')\n"
    "p.add_argument('--req', required=True, help=argparse.SUPPRESS)\np.add_argument('rest', nargs=argparse.REMAINDER)\n"
    "g = p.add_argument_group('model', 'model options')\ng.add_argument('--hidden', type=int, default=128, help='hidden size')\n"
    "m = p.add_mutually_exclusive_group()\nm.add_argument('--adam', action='store_true')\nm.add_argument('--sgd', action='store_true')\n"
    "r = p.add_mutually_exclusive_group(required=True)\nr.add_argument('--a1', action='store_true')\nr.add_argument('--a2', action='store_true')\n"
    "for argv in (['--req', '1', '--a1', '-vvv', '--tag', 'a', '--tag', 'b', '--c', '--ac', '--ac', '--ext', 'x', 'y',"
    " '--no-flag', '--off', 'r1', '--r2'], ['--req', '1', '--a1', '--flag', '--hidden', '5'], ['--a1'], ['--req', '1'],"
    " ['--req', '1', '--a1', '--adam', '--sgd'], ['--version'], ['--help']):\n    run(p, argv)\n"
    "print(g.title, g.description, r.required)",
    # a script's Action, parse_known_args, intermixed, set_defaults, prefix_chars, argument_default, parents, resolve
    "class Twice(argparse.Action):\n    def __init__(self, option_strings, dest, nargs=None, **kwargs):\n"
    "        super().__init__(option_strings, dest, nargs=nargs, **kwargs)\n"
    "    def __call__(self, parser, namespace, values, option_string=None):\n"
    "        print('call', repr(namespace), values, option_string, self.dest, self.type)\n"
    "        setattr(namespace, self.dest, values * 2)\n"
    "p = argparse.ArgumentParser(prog='p', prefix_chars='-+', argument_default=argparse.SUPPRESS)\n"
    "p.add_argument('--foo', action=Twice, type=int)\np.add_argument('+z')\np.add_argument('--q', type=int)\n"
    "p.set_defaults(mode='train')\nrun(p, ['--foo', '3', '+z', 'Z'])\nrun(p, [])\nrun(p, ['--q', '1', '--zz', 'w'], 'parse_known_args')\n"
    "i = argparse.ArgumentParser(prog='i')\ni.add_argument('--n', type=int)\ni.add_argument('xs', nargs='*')\n"
    "run(i, ['a', '--n', '2', 'b'], 'parse_intermixed_args')\nrun(i, ['a', '--n', '2', 'b', '--k'], 'parse_known_intermixed_args')\n"
    "parent = argparse.ArgumentParser(add_help=False)\nparent.add_argument('--seed', type=int, default=1)\n"
    "child = argparse.ArgumentParser(parents=[parent], prog='child', conflict_handler='resolve', allow_abbrev=False)\n"
    "child.add_argument('--seed', type=int, default=7)\nrun(child, [])\nrun(child, ['--se', '3'])\n"
    "print(Twice.__name__, isinstance(child, argparse.ArgumentParser), p.get_default('mode'))",
    # subcommands dispatching through set_defaults(func=...)
    "p = argparse.ArgumentParser(prog='PROG')\nsub = p.add_subparsers(dest='cmd', help='sub-command help')\n"
    "a = sub.add_parser('train', help='train it')\na.add_argument('--lr', type=float, default=0.1)\n"
    "def train(args):\n    print('training', args.lr)\na.set_defaults(func=train)\n"
    "b = sub.add_parser('eval', aliases=['ev'], help='evaluate')\nb.add_argument('ckpt')\n"
    "b.set_defaults(func=lambda args: print('eval', args.ckpt))\n"
    "for argv in (['train', '--lr', '0.3'], ['ev', 'm.pt']):\n    args = p.parse_args(argv)\n    args.func(args)\n"
    "run(p, ['test'])\nrun(p, ['eval'])\nrun(p, ['train', '-h'])\nrun(p, [])\np.print_help()\n"
    "s2 = argparse.ArgumentParser(prog='S').add_subparsers(title='commands', required=True, dest='c', metavar='CMD')\n"
    "print(sorted(sub.choices), sub.dest)",
    # formatter classes, a script's formatter mixing two, a lambda formatter, usage=
    "class Fmt(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):\n    pass\n"
    "for fc in (argparse.HelpFormatter, argparse.RawDescriptionHelpFormatter, argparse.RawTextHelpFormatter,"
    " argparse.ArgumentDefaultsHelpFormatter, Fmt,"
    " lambda prog: argparse.HelpFormatter(prog, max_help_position=40, width=60)):\n"
    "    p = argparse.ArgumentParser(prog='f', formatter_class=fc, description='line one\\n   indented two  and a long "
    "tail of words that wraps around the width of the help text',\n                                epilog='end\\n  kept?')\n"
    "    p.add_argument('--lr', type=float, default=0.1, help='the rate\\n  on two lines')\n"
    "    p.add_argument('--very-long-option-name-here', metavar=('A', 'B'), nargs=2, help='x ' * 30)\n"
    "    p.add_argument('n', type=int, help='a count')\n    p.print_help()\n"
    "u = argparse.ArgumentParser(prog='u', usage='%(prog)s [options] FILE', add_help=False)\nu.print_help()\n"
    "m = argparse.ArgumentParser(prog='m', formatter_class=argparse.MetavarTypeHelpFormatter)\n"
    "m.add_argument('--k', type=int, required=True)\nm.add_argument('x', type=float)\nm.print_help()\nrun(m, ['1'])\n"
    "print(issubclass(argparse.RawTextHelpFormatter, argparse.RawDescriptionHelpFormatter), argparse.HelpFormatter)",
    # Namespace: repr, equality, vars, __dict__, in, setting and deleting attributes, Namespace(**d)
    "ns = argparse.Namespace(lr=0.1, epochs=3)\nprint(ns, vars(ns), ns.__dict__, 'lr' in ns, 'x' in ns)\n"
    "ns.extra = [1]\ndel ns.epochs\nprint(ns, ns == argparse.Namespace(**vars(ns)), ns != argparse.Namespace())\n"
    "print(type(ns), hasattr(ns, 'epochs'), getattr(ns, 'lr'), getattr(ns, 'zz', 'none'))\n"
    "try:\n    ns.zz\nexcept AttributeError as e:\n    print(e)\n"
    "p = argparse.ArgumentParser()\np.add_argument('--k', type=int, default=2)\n"
    "print(p.parse_args(['--k', '5'], namespace=argparse.Namespace(k=1, other='o')))\n"
    "vars(ns)['lr'] = 0.5\nprint(ns.lr, argparse.SUPPRESS, argparse.OPTIONAL, argparse.ZERO_OR_MORE, argparse.ONE_OR_MORE,"
    " argparse.REMAINDER, argparse.PARSER)",
    # exit_on_error=False, ArgumentError, error(), exit(), print_help(file=...), output under redirect_stdout
    "q = argparse.ArgumentParser(prog='q', exit_on_error=False)\nq.add_argument('--n', type=int)\n"
    "try:\n    q.parse_args(['--n', 'x'])\nexcept argparse.ArgumentError as e:\n"
    "    print(type(e).__name__, e, '|', e.argument_name, '|', e.message)\n"
    "run(q, ['--zz'])\nbuf = io.StringIO()\nwith contextlib.redirect_stdout(buf):\n    q.print_help()\n"
    "print(len(buf.getvalue()), buf.getvalue().splitlines()[0])\nq.print_usage(file=buf)\nq.print_help(sys.stdout)\n"
    "def err():\n    q.error('custom problem')\ndef ex():\n    q.exit(3, 'bye\\n')\ndef ex0():\n    q.exit()\n"
    "for f in (err, ex, ex0):\n    e2 = io.StringIO()\n    try:\n        with contextlib.redirect_stderr(e2):\n"
    "            f()\n    except SystemExit as e:\n        print('exit', e.code, repr(e2.getvalue()))",
]


@pytest.fixture(autouse=True)
def _columns(monkeypatch):
    """The help's width as CPython's server (its stdout a pipe) finds it: COLUMNS if set, else 80."""
    monkeypatch.setenv("COLUMNS", os.environ.get("COLUMNS", "80"))


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_argparse(snippet):
    source = HEAD + snippet + "\n"
    assert normalize(gradcli_output(source)) == normalize(cpython_output(source))


def _both(tmp_path, source: str, args=(), env=None):
    """`gradcli run SCRIPT` and `python SCRIPT` (the oracle, CPython 3.11) of the same file: (status, out, err) each."""
    import launcher
    script = tmp_path / "train.grad"
    script.write_text(source)
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}      # (both in a pipe: 80 columns)
    environment.update(env or {})
    ours = launcher.run(["run", str(script), *args], timeout=60, env=environment)
    python = os.environ.get("ORACLE_PYTHON", "/work/oracle/bin/python")
    if not os.path.exists(python):
        python = sys.executable
    theirs = subprocess.run([python, str(script)], capture_output=True, text=True, env=environment, timeout=60)
    return (ours.returncode, ours.stdout, ours.stderr), (theirs.returncode, theirs.stdout, theirs.stderr)


PROCESS = ("import argparse\nparser = argparse.ArgumentParser(description='Train a small model')\n"
           "parser.add_argument('--lr', type=float, default=0.1, help='learning rate (default: %(default)s)')\n"
           "parser.add_argument('--epochs', type=int, default=2, help='how many passes over the data set, each "
           "followed by an evaluation on the held-out split')\n")


@pytest.mark.parametrize("tail", [
    "parser.parse_args(['--lr', 'fast'])\nprint('not reached')\n",     # status 2, usage and error on stderr
    "parser.parse_args(['--help'])\nprint('not reached')\n",            # status 0, help on stdout
    "print(parser.parse_args())\n",                                     # the script's sys.argv[1:]: none
    "import sys\nsys.argv[1:] = ['--epochs', '5']\nprint(parser.parse_args(), parser.prog)\n",
    "parser.exit(4, 'stopping\\n')\n",
    "try:\n    parser.parse_args(['--epochs', '1.5'])\nexcept SystemExit as e:\n    print('caught', e.code)\n",
])
def test_a_run_exits_and_writes_as_python_does(tmp_path, tail):
    ours, theirs = _both(tmp_path, PROCESS + tail)
    assert ours == theirs


@pytest.mark.parametrize("columns", ["50", "120"])
def test_the_help_is_as_wide_as_columns_says(tmp_path, columns):
    ours, theirs = _both(tmp_path, PROCESS + "parser.print_help()\n", env={"COLUMNS": columns})
    assert ours == theirs and ours[0] == 0


# --------------------------------------------------------------------------------------- what stays out of reach
P = "import argparse\np = argparse.ArgumentParser()\n"
REFUSED = [
    ("import argparse\nargparse.FileType('r')", "2:1: AttributeError: module 'argparse' attribute 'FileType' is "
                                                "outside gradcli's language: scripts cannot read or write files"),
    ("from argparse import FileType", "1:1: ImportError: cannot import name 'FileType' from 'argparse': it is outside "
                                      "gradcli's language (scripts cannot read or write files)"),
    ("import argparse\nargparse.ArgumentParser(fromfile_prefix_chars='@')",
     "2:1: TypeError: ArgumentParser(fromfile_prefix_chars=...) is outside gradcli's language: scripts cannot read "
     "files"),
    (P + "p._actions", "3:1: AttributeError: 'ArgumentParser' object attribute '_actions' is outside gradcli's "
                       "language"),
    (P + "p._registries", "3:1: AttributeError: 'ArgumentParser' object attribute '_registries' is outside "
                          "gradcli's language"),
    (P + "p._option_string_actions", "3:1: AttributeError: 'ArgumentParser' object attribute "
                                     "'_option_string_actions' is outside gradcli's language"),
    (P + "p.register('type', 'x', int)", "3:1: AttributeError: 'ArgumentParser' object attribute 'register' is "
                                         "outside gradcli's language"),
    (P + "p.convert_arg_line_to_args('a')", "3:1: AttributeError: 'ArgumentParser' object attribute "
                                            "'convert_arg_line_to_args' is outside gradcli's language"),
    (P + "p.prog = 'x'", "3:1: AttributeError: 'ArgumentParser' object attribute 'prog' is read-only"),
    (P + "p.add_argument('--x').container", "3:1: AttributeError: '_StoreAction' object attribute 'container' is "
                                            "outside gradcli's language"),
    (P + "p.add_argument_group('g')._group_actions", "3:1: AttributeError: '_ArgumentGroup' object attribute "
                                                     "'_group_actions' is outside gradcli's language"),
    (P + "p.parse_args.__func__", "3:1: AttributeError: 'method' object has no attribute '__func__'"),
    (P + "p.parse_args([], namespace=object())",
     "3:1: TypeError: parse_args(namespace=...) of a 'object' object is outside gradcli's language: it takes an "
     "argparse.Namespace"),
    (P + "p.add_argument('--x', dest='__class__')\np.parse_args(['--x', 'a'])",
     "4:1: AttributeError: 'Namespace' object attribute '__class__' is outside gradcli's language"),
    (P + "p.add_argument('__dict__', type=lambda s: {})\np.parse_args(['a'])",
     "4:1: AttributeError: 'Namespace' object attribute '__dict__' is outside gradcli's language"),
    (P + "p.set_defaults(__class__=int)", "3:1: TypeError: set_defaults(__class__=...) is outside gradcli's "
                                          "language: a default's name is an attribute of the Namespace"),
    ("import argparse\nargparse.Namespace(__class__=int)", "2:1: AttributeError: 'Namespace' object attribute "
                                                           "'__class__' is outside gradcli's language"),
    ("import argparse\nns = argparse.Namespace()\nsetattr(ns, '__dict__', {})", "3:1: AttributeError: 'Namespace' "
                                                                             "object attribute '__dict__' is outside "
                                                                             "gradcli's language"),
    ("import argparse\nargparse.Namespace().__class__.__bases__", "2:1: AttributeError: type object 'Namespace' "
                                                                  "has no attribute '__bases__'"),
    (P + "p.add_argument('--x', action=print)", "3:1: TypeError: add_argument(action=...) with a "
                                                "'builtin_function_or_method' object is outside gradcli's language: an "
                                                "action is a name or an argparse.Action class"),
    (P + "p.add_subparsers(parser_class=dict)", "3:1: TypeError: add_subparsers(parser_class=...) is outside "
                                                "gradcli's language: subparsers are argparse.ArgumentParser objects"),
    ("import argparse\nargparse.ArgumentParser(parents=[1])", "2:1: TypeError: ArgumentParser(parents=[...]) holding "
                                                              "a 'int' object is outside gradcli's language: a parent "
                                                              "is an argparse.ArgumentParser"),
    # sizes the help would pad or repeat past the language's bounds
    (P + "p.add_argument('--x', nargs=10 ** 9)", "3:1: MemoryError: a str of more than 100000000 items is too large "
                                                 "(gradcli allows at most 100000000)"),
    ("import argparse\nclass Big(argparse.Action):\n    def __init__(self, option_strings, dest, **kwargs):\n"
     "        super().__init__(option_strings, dest, nargs=10 ** 9, **kwargs)\np = argparse.ArgumentParser()\n"
     "g = p.add_argument_group('g')\ng.add_argument('--x', action=Big)\np.parse_args(['--x'])",
     "8:1: MemoryError: a str of more than 100000000 items is too large (gradcli allows at most 100000000)"),
    (P + "p.add_argument('--x', choices=range(10 ** 9))", "3:1: MemoryError: a str of more than 100000000 items is "
                                                          "too large (gradcli allows at most 100000000)"),
    ("import argparse\nargparse.ArgumentParser(prog='x' * 10 ** 6, usage='%(prog)s' * 10 ** 5).format_usage()",
     "2:1: MemoryError: a str of more than 100000000 items is too large (gradcli allows at most 100000000)"),
    ("import argparse\np = argparse.ArgumentParser(prog='x' * 10 ** 7)\np.add_argument('--x', help='%(prog)s' * 100)\n"
     "p.format_help()", "4:1: MemoryError: a str of more than 100000000 items is too large (gradcli allows at most "
                        "100000000)"),
    ("import argparse\nargparse.ArgumentParser(formatter_class=lambda prog: argparse.HelpFormatter(prog, "
     "indent_increment=10 ** 9))", "2:54: MemoryError: a help formatter's indent increment of 1000000000 is too large "
                                   "(gradcli allows at most 10000 characters)"),
    ("import argparse\nclass F(argparse.HelpFormatter):\n    def start_section(self, heading):\n"
     "        object.__setattr__(self, '_current_indent', 10 ** 9)\n"
     "p = argparse.ArgumentParser(formatter_class=F)\np.format_help()",
     "4:9: MemoryError: a help formatter's current indent of 1000000000 is too large (gradcli allows at most 10000 "
     "characters)"),
    ("import argparse\nclass F(argparse.HelpFormatter):\n    def start_section(self, heading):\n"
     "        vars(self)['_current_indent'] = 10 ** 9\n        super().start_section(heading)\n"
     "p = argparse.ArgumentParser(formatter_class=F)\nprint(len(p.format_help()))",
     "4:9: AttributeError: 'F' object attribute '__dict__' is outside gradcli's language"),
]


@pytest.mark.parametrize("source, message", REFUSED, ids=[s for s, _ in REFUSED])
def test_files_internals_and_unbounded_sizes_stay_out_of_reach(source, message):
    if message is None:         # allowed, and harmless: runs
        gradcli_output(source + "\n")
        return
    assert located_error(source).startswith(message)


def test_a_scripts_action_and_formatter_see_only_the_language():
    """What a script's Action is handed (the parser, the Namespace) and what its formatter subclass reaches are
    the allowed methods and fields; a type= callable is called with the string, nothing else."""
    source = ("import argparse\nseen = []\nclass Spy(argparse.Action):\n"
              "    def __call__(self, parser, namespace, values, option_string=None):\n"
              "        for name in ('_actions', '_registries', '_defaults', '_get_formatter', '__class__'):\n"
              "            try:\n                getattr(parser, name)\n            except AttributeError as e:\n"
              "                seen.append(str(e))\n"
              "        try:\n            namespace.__class__.__init__.__globals__\n        except AttributeError as e:\n"
              "            seen.append(str(e))\n        setattr(namespace, self.dest, values)\n"
              "def typ(*args, **kwargs):\n    seen.append((args, kwargs))\n    return args[0]\n"
              "p = argparse.ArgumentParser()\np.add_argument('--x', action=Spy, type=typ)\np.parse_args(['--x', 'v'])\n"
              "for s in seen:\n    print(s)\n")
    out = gradcli_output(source)
    assert out.splitlines() == [
        "(('v',), {})",
        "'ArgumentParser' object attribute '_actions' is outside gradcli's language",
        "'ArgumentParser' object attribute '_registries' is outside gradcli's language",
        "'ArgumentParser' object attribute '_defaults' is outside gradcli's language",
        "'ArgumentParser' object attribute '_get_formatter' is outside gradcli's language",
        "'type' object attribute '__init__' is outside gradcli's language",
    ]


# ------------------------------------------------------------------ `gradcli run SCRIPT -- ARG...`: the script's sys.argv
ARGV = ("import sys\nimport argparse\nprint(sys.argv[1:])\np = argparse.ArgumentParser()\n"
        "p.add_argument('--lr', type=float, default=0.1)\np.add_argument('--seed', type=int, default=1)\n"
        "p.add_argument('files', nargs='*')\nprint(p.parse_args())\n")


@pytest.mark.parametrize("args", [["--lr", "0.5", "a", "b"], ["--seed", "3"], ["--lr", "x"], ["-h"], []])
def test_arguments_after_a_double_dash_are_the_scripts_as_pythons_are(tmp_path, args):
    import launcher
    script = tmp_path / "train.grad"
    script.write_text(ARGV)
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    ours = launcher.run(["run", str(script), "--", *args], timeout=60, env=environment)
    python = os.environ.get("ORACLE_PYTHON", "/work/oracle/bin/python")
    theirs = subprocess.run([python if os.path.exists(python) else sys.executable, str(script), *args],
                            capture_output=True, text=True, env=environment, timeout=60)
    assert (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr)


def test_every_script_gets_them_and_options_go_before_the_dashes(tmp_path):
    import launcher
    a, b = tmp_path / "a.grad", tmp_path / "b.grad"
    a.write_text("import sys\nprint(sys.argv)\n")
    b.write_text("import sys\nimport random\nprint(sys.argv, random.random() < 2)\n")
    p = launcher.run(["--seed", "0", "run", str(a), str(b), "--", "--seed", "7", "x"], timeout=60)
    assert (p.returncode, p.stdout) == (0, f"['{a}', '--seed', '7', 'x']\n['{b}', '--seed', '7', 'x'] True\n")
    p = launcher.run(["run", str(a)], timeout=60)       # none: the script's name alone
    assert p.stdout == f"['{a}']\n"
    p = launcher.run(["run", "--", str(a)], timeout=60)     # no script before `--`: a usage error
    assert p.returncode == 2 and p.stderr.endswith("gradcli run: error: the following arguments are required: "
                                                   "SCRIPT\n")


def test_a_check_grads_replay_sees_the_same_arguments(tmp_path):
    import launcher
    script = tmp_path / "s.grad"
    script.write_text("import sys\nimport torch\nn = int(sys.argv[1])\nx = torch.ones(n, dtype=torch.float64, "
                      "requires_grad=True)\n(x * x).sum().backward()\nprint(x.grad)\n")
    p = launcher.run(["run", "--check-grads", str(script), "--", "3"], timeout=60)
    assert p.returncode == 0 and p.stdout == "tensor([2., 2., 2.], dtype=torch.float64)\n"
