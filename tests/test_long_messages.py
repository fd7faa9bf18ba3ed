"""An error message of megabytes (an assert's, a huge string in an error) is cut to a few kilobytes,
saying by how much, in text and in JSON Lines."""

import json
import os
from pathlib import Path

from conftest import run_script
from gradcli.errors import MAX_MESSAGE, ScriptError

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent


def test_a_huge_assert_message_is_cut_saying_how_much():
    err = run_script("x = 1\nassert x == 2, 'ab' * 5 * 10**6").error
    assert (err.kind, err.line) == ("AssertionError", 2)
    assert err.message == "ab" * (MAX_MESSAGE // 2) + "... [9,995,904 more characters]"
    assert len(err.render()) < MAX_MESSAGE + 200


def test_messages_within_the_bound_are_kept_whole():
    text = "x" * MAX_MESSAGE
    assert ScriptError("ValueError", text).message == text
    assert ScriptError("ValueError", text + "y").message == text + "... [1 more characters]"


def test_the_cut_message_in_jsonl_and_text():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GRADCLI_TRACEBACK", None)
    code = "print(1)\nassert False, 'z' * 10**7"
    p = launcher.run(["--format", "jsonl", "-c", code], env=env, timeout=120)
    error = json.loads(p.stdout.splitlines()[1])
    assert (p.returncode, error["type"]) == (1, "AssertionError")
    assert error["message"] == "z" * MAX_MESSAGE + "... [9,995,904 more characters]"
    assert len(p.stdout) < MAX_MESSAGE + 500
    p = launcher.run(["-c", code], env=env, timeout=120)
    assert p.returncode == 1 and len(p.stderr) < MAX_MESSAGE + 500
    assert p.stderr.splitlines()[0].endswith("... [9,995,904 more characters]")
