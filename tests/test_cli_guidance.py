"""The command line guiding a user: the version it mirrors, and the command meant when a word is not one."""

from __future__ import annotations

import pytest

from gradcli import cli


def status_and_err(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


def test_version_names_the_pytorch_it_mirrors(capsys):
    assert status_and_err(capsys, ["--version"]) == (0, "gradcli 0.1.0 (mirrors PyTorch 2.13.0)\n", "")


@pytest.mark.parametrize("argv,meant", [
    (["tutorial.grad"], "did you mean 'gradcli run tutorial.grad'?"),
    (["--seed", "0", "a b.grad", "c.grad"], "did you mean 'gradcli --seed 0 run 'a b.grad' c.grad'?"),
    (["rnu", "s.grad"], "did you mean 'run'?"),
    (["grap", "s.grad"], "did you mean 'graph'?"),
    (["jacobain", "x", "x=1.0"], "did you mean 'jacobian'?"),
])
def test_a_word_where_the_command_goes_suggests_the_command_meant(capsys, argv, meant):
    status, out, err = status_and_err(capsys, argv)
    assert (status, out) == (2, "")
    assert err == f"gradcli: '{argv[-2] if argv[0] == '--seed' else argv[0]}' is not a command; {meant}\n"


def test_an_existing_file_without_the_extension_is_meant_for_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "script").write_text("print(1)\n")
    assert status_and_err(capsys, ["script"]) == \
        (2, "", "gradcli: 'script' is not a command; did you mean 'gradcli run script'?\n")


def test_a_word_like_no_command_lists_them(capsys):
    status, out, err = status_and_err(capsys, ["xyzzy"])
    assert status == 2 and err.startswith("gradcli: 'xyzzy' is not a command (commands: run, repl, graph,")
    assert err.count("\n") == 1
