"""`gradcli help [TOPIC]` (the README's sections and docs/, as installed) and `gradcli completion bash|zsh`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli import cli

ROOT = Path(__file__).resolve().parent.parent


def gradcli(capsys, *argv):
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def readme_sections() -> list:
    text = re.sub(r"```.*?```", "", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    return re.findall(r"^## (.+)$", text, flags=re.M)


def test_help_lists_every_readme_section_and_every_page(capsys):
    status, out, err = gradcli(capsys, "help")
    assert (status, err) == (0, "")
    rows = re.findall(r"^  (\S+) +(.+?)  \((\S+)\)$", out, flags=re.M)
    assert [title for _, title, where in rows if where == "README.md"] == readme_sections()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [where for _, _, where in rows if where != "README.md"] == [f"docs/{p}" for p in pages]


@pytest.mark.parametrize("page", sorted(p.stem for p in (ROOT / "docs").glob("*.md")))
def test_a_page_is_shown_whole(capsys, page):
    assert gradcli(capsys, "help", page) == (0, (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8"), "")


def test_a_readme_section_runs_to_the_next_heading_past_code_blocks(capsys):
    status, out, _ = gradcli(capsys, "help", "usage")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Usage\n")
    following = readme.index("\n## ", start + 1)
    assert status == 0 and out == readme[start:following].rstrip() + "\n"


def test_a_prefix_a_command_and_a_typo(capsys):
    status, out, _ = gradcli(capsys, "help", "deriv")
    assert status == 0 and out.startswith("## Derivatives from the command line\n")
    status, out, _ = gradcli(capsys, "help", "explain")       # a command with no topic of its name
    assert status == 0 and out.startswith("usage: gradcli explain")
    assert gradcli(capsys, "help", "chec") == (
        2, "", "gradcli help: 'chec' could be checking-gradients-and-hunting-nans, checks\n")
    assert gradcli(capsys, "help", "securty") == (2, "", "gradcli help: no topic 'securty'; did you mean 'security'?\n")
    assert gradcli(capsys, "help", "zzz") == (2, "", "gradcli help: no topic 'zzz' (gradcli help lists them)\n")


def test_bash_completion_completes_commands_options_and_topics(capsys, tmp_path):
    status, script, _ = gradcli(capsys, "completion", "bash")
    assert status == 0
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    path = tmp_path / "gradcli.bash"
    path.write_text(script)

    def complete(*words):
        line = " ".join(words)
        code = (f"source {path}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; "
                f"COMP_POINT={len(line)}; _shtab_gradcli; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        p = subprocess.run(["bash", "-c", code], capture_output=True, text=True, timeout=60)
        return p.stdout.split()
    assert complete("gradcli", "gr") == ["graph", "grad"]
    # graph's options: its own, and the shared ones it honours (the refused ones are not offered)
    options = complete("gradcli", "graph", "--")
    assert "--max-depth" in options and "--nan-check" in options and "--check-grads" not in options
    assert complete("gradcli", "help", "sec") == ["security"]


def test_zsh_completion(capsys):
    status, script, _ = gradcli(capsys, "completion", "zsh")
    assert status == 0 and script.startswith("#compdef gradcli")
    assert "explain" in script and "--max-memory" in script


def test_a_plain_run_imports_neither_shtab_nor_reads_the_docs(tmp_path):
    path = tmp_path / "s.grad"
    path.write_text("import torch\nprint(torch.ones(2))\n")
    code = ("import sys\nfrom gradcli import cli\nstatus = cli.main(['run', sys.argv[1]])\n"
            "print(status, 'shtab' in sys.modules, 'difflib' in sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.stdout.endswith("0 False False\n")
