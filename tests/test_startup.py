"""Start-up pays only for what a script uses: what `gradcli run` imports, the modules made on first use,
and the command-line parser built for the command named."""

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradcli import cli
from gradcli.commands import parsing
from gradcli.engine import signatures

REPO = Path(__file__).resolve().parents[1]
TUTORIAL = REPO / "examples" / "tutorial.grad"

# Imported by nothing a plain script needs: each costs start-up time or memory.
NOT_AT_START = ("lark", "pathlib", "shutil", "json", "string", "random", "urllib", "signal", "threading", "select",
                "unicodedata",
                "gradcli.language.nn", "gradcli.engine.optim",
                "gradcli.engine.lr_scheduler", "gradcli.language.torchdata", "gradcli.kernel", "gradcli.repl",
                "gradcli.diagnostics", "prompt_toolkit", "ipykernel", "zmq")


def _fresh(code: str, *args) -> dict:
    """Run `code` in a new interpreter (after gradcli.cli ran `args`, when given); it prints a Python literal."""
    prelude = textwrap.dedent(f"""\
        import contextlib, io, sys
        from gradcli import cli
        with contextlib.redirect_stdout(io.StringIO()):
            status = cli.main({list(args)!r}) if {bool(args)!r} else 0
        """)
    out = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                         cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stderr
    return ast.literal_eval(out.stdout.splitlines()[-1])


def _loaded(prefix: str) -> str:
    return f"any(m == {prefix!r} or m.startswith({prefix + '.'!r}) for m in sys.modules)"


def test_a_plain_script_imports_none_of_the_rest():
    # a run with the grammar tables cached, as every run after the first (the first imports lark to build them)
    subprocess.run([sys.executable, "-m", "gradcli", "run", str(TUTORIAL)], capture_output=True, timeout=60, check=True)
    checks = ", ".join(f"{name!r}: {_loaded(name)}" for name in NOT_AT_START)
    got = _fresh(f"print(repr({{'status': status, {checks}}}))", "run", str(TUTORIAL))
    assert got.pop("status") == 0
    assert [name for name, loaded in got.items() if loaded] == []


def test_modules_are_made_when_a_script_first_reaches_them():
    got = _fresh("""
        from gradcli.language import stdlib
        from gradcli.session import Session
        torch = stdlib.TORCH.members
        before = [torch["nn"].made, torch["optim"].made, torch["func"].made, torch["utils"].members["data"].made,
                  stdlib.STRING.made and stdlib.RANDOM.made, 'gradcli.language.nn' in sys.modules]
        Session().run_source("import torch.nn as nn\\nm = nn.Linear(2, 1)\\nprint(isinstance(m.weight, nn.Parameter))")
        after_nn = [torch["nn"].made, torch["optim"].made, 'gradcli.language.nn' in sys.modules]
        print(repr([before, after_nn]))
        """)
    assert got == [[False] * 6, [True, False, True]]


def _first_names_code(order: list) -> str:
    """Make the lazy modules in `order`, then compare stdlib's table of first names with one made by walking
    the whole torch tree breadth first (what it was when every module was made at start-up)."""
    return f"""
        from gradcli.language import stdlib
        for path in {order!r}:
            stdlib.module(path).members
        stdlib.modules()                        # makes the rest
        table, stack = {{}}, [("torch", stdlib.TORCH)]
        while stack:
            path, mod = stack.pop(0)
            assert mod.name == path, (mod.name, path)
            for name, obj in mod.members.items():
                if isinstance(obj, stdlib.ScriptModule):
                    stack.append((f"{{path}}.{{name}}", obj))
                elif callable(obj) and not isinstance(obj, type):
                    for target in (obj, obj.func) if isinstance(obj, stdlib.Builtin) else (obj,):
                        if id(target) not in table and not isinstance(target, type):
                            table[id(target)] = (path, name)
        got = {{k: v[:2] for k, v in stdlib._PUBLIC.items()}}
        print(repr([len(table), sorted(map(list, set(got.items()) ^ set(table.items())))]))
        """


@pytest.mark.parametrize("order", [["torch.nn.functional", "torch.func", "torch.optim"],
                                   ["torch.func", "torch.optim.lr_scheduler", "torch.utils.data", "torch.nn"]])
def test_each_function_keeps_its_first_name_whatever_order_modules_are_made(order):
    count, differences = _fresh(_first_names_code(order))
    assert count > 400 and differences == []


def test_the_parser_builds_only_the_command_named():
    p = cli._parser(["--seed", "0", "run", "a.grad"])
    commands = next(a for a in p._actions if a.dest == "command").choices
    assert {"run", "graph", "grad", "help", "kernel"} <= set(commands)
    assert commands["run"].parse_args(["b.grad"]).scripts == ["b.grad"]
    assert isinstance(commands["graph"], parsing._Unbuilt)
    assert p.parse_args(["--seed", "0", "run", "a.grad"]).seed == 0
    # help and completion read every command's parser
    every = cli._parser(["help"])
    assert not any(isinstance(c, parsing._Unbuilt) for c in next(a for a in every._actions
                                                               if a.dest == "command").choices.values())


@pytest.mark.parametrize("argv", [["run", "a.grad"], ["run", "a.grad", "b.grad", "run"], ["run", "notebook.ipynb"],
                                  ["run", "x"]])
def test_a_plain_run_needs_no_parser_and_gets_what_argparse_gives(argv):
    """`gradcli run SCRIPT...` skips argparse (cli._plain_run): its namespace is the parser's, attribute for
    attribute; any option, or a script named like one, goes to the parser."""
    fast = vars(cli._plain_run(argv))
    assert fast.pop("top_parser") is None
    assert fast == vars(cli._parser(argv).parse_args(argv))
    for other in (["run"], ["run", "-"], ["run", "--seed", "0", "a.grad"], ["run", "a.grad", "--timing"],
                  ["--seed", "0", "run", "a.grad"], ["graph", "a.grad"], ["a.grad"], []):
        assert cli._plain_run(other) is None, other


def test_a_plain_run_imports_no_argparse():
    code = ("import sys\nfrom gradcli import cli\ncli.main(['run', {!r}])\n"
            "print(sorted(m for m in sys.modules if m in ('argparse', 'gettext', 'gradcli.commands.parsing', "
            "'gradcli.commands.graph', 'gradcli.commands.help')))").format(str(TUTORIAL))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert out.splitlines()[-1] == "[]"


@pytest.mark.parametrize("argv", [["graph", "--help"], ["explain", "--help"], ["kernel", "--help"],
                                  ["run", "--help"], ["--help"]])
def test_every_commands_help_is_whole(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 0
    full = cli._parser()
    if argv[0] == "--help":
        expected = full.format_help()
    else:
        expected = next(a for a in full._actions if a.dest == "command").choices[argv[0]].format_help()
    assert capsys.readouterr().out == expected


def test_every_signature_text_parses():
    """The signatures are parsed on first use; each one must parse."""
    for key in signatures.SIGNATURES:
        sigs = signatures._signatures(key)
        assert sigs and all(s.params is not None for s in sigs), key


def test_syntax_nodes_take_their_fields_in_order():
    """Node classes share a compiled __init__ per number of fields, renamed for each class."""
    import inspect
    from gradcli.language import syntax
    classes = [c for c in vars(syntax).values() if isinstance(c, type) and issubclass(c, syntax.Node) and c._fields]
    assert len(classes) > 30
    for cls in classes:
        assert list(inspect.signature(cls.__init__).parameters)[1:] == [*cls._fields, "line", "col"], cls
        node = cls(*range(len(cls._fields)), line=4, col=5)
        assert [getattr(node, f) for f in cls._fields] == list(range(len(cls._fields)))
        assert (node.line, node.col) == (4, 5) and cls(*range(len(cls._fields))).line == 0
        assert (cls(*range(len(cls._fields)), 6, 7).line, cls(*range(len(cls._fields)), 6, 7).col) == (6, 7)
        with pytest.raises(TypeError):
            cls(*range(len(cls._fields) + 3))
