"""Any byte sequence given as a script ends with exit status 0, 1 or 2 and at most a one-line message
(then the source line and a caret): never a traceback, never a hang. The REPL survives the same text."""

from __future__ import annotations

import io
import os
import random
import re
import time
from pathlib import Path

import pytest

from gradcli import cli
from gradcli.repl.shell import Options, Shell

import launcher  # the gradcli command, in a child forked from a warm process (tests/launcher.py)

ROOT = Path(__file__).resolve().parent.parent
_rnd = random.Random(8)


def _repeat(head: bytes, fill: bytes, times: int, tail: bytes = b""):
    """A long text, built when its test runs: held in the table, 10 MB texts would stay in every test
    worker's memory for the whole run."""
    return lambda: head + fill * times + tail


def source_of(name: str) -> bytes:
    data = CASES[name][0]
    return data() if callable(data) else data


# name -> (bytes or what builds them, exit status, what the error line says after "FILE:LINE:COL: ", or None
# for no error)
CASES = {
    "invalid_utf8": (b"\xff\xfe", 2, "SyntaxError: invalid UTF-8 byte 0xff (scripts must be UTF-8 text)"),
    "stray_continuation_byte": (b"x = 1\n\x80\n", 2, "SyntaxError: invalid UTF-8 byte 0x80 (scripts must be UTF-8 text)"),
    "latin1": (b"print('\xe9')\n", 2, "SyntaxError: invalid UTF-8 byte 0xe9 (scripts must be UTF-8 text)"),
    "overlong": (b"\xc0\xaf", 2, "SyntaxError: invalid UTF-8 byte 0xc0 (scripts must be UTF-8 text)"),
    "utf8_surrogate": (b"x = '\xed\xa0\x80'\n", 2, "SyntaxError: invalid UTF-8 byte 0xed (scripts must be UTF-8 text)"),
    "truncated_utf8": (b"x = '\xe2\x82", 2, "SyntaxError: invalid UTF-8 byte 0xe2 (scripts must be UTF-8 text)"),
    "utf16": ("print(1)\n".encode("utf-16"), 2, "SyntaxError: invalid UTF-8 byte 0xff (scripts must be UTF-8 text)"),
    "nul": (b"x = 1\x00\n", 2, "SyntaxError: source code cannot contain null bytes"),
    "only_nul": (b"\x00", 2, "SyntaxError: source code cannot contain null bytes"),
    "nul_in_string": (b'x = "a\x00b"\n', 2, "SyntaxError: source code cannot contain null bytes"),
    "tab_then_spaces": (b"if 1:\n\tx = 1\n        y = 2\n", 2,
                        "TabError: inconsistent use of tabs and spaces in indentation"),
    "spaces_then_tab": (b"if 1:\n        x = 1\n\ty = 2\n", 2,
                        "TabError: inconsistent use of tabs and spaces in indentation"),
    "tab_after_spaces": (b"if 1:\n  \tx = 1\n  y = 2\n", 2,
                         "IndentationError: unindent does not match any outer indentation level"),
    "empty": (b"", 0, None),
    "blank": (b"   \n\t\n", 0, None),
    "tab_only": (b"\t", 0, None),
    "100k_newlines": (b"\n" * 100_000, 0, None),
    "comments": (b"# a\n# b", 0, None),
    "crlf": (b"print(1)\r\nprint(2)\r\n", 0, None),
    "lone_cr": (b"print(1)\rprint(2)", 0, None),
    "mixed_newlines": (b"print(1)\r\nprint(2)\nprint(3)\r", 0, None),
    "bom": (b"\xef\xbb\xbfprint(1)\n", 0, None),
    "two_boms": (b"\xef\xbb\xbf\xef\xbb\xbfprint(1)\n", 2, "SyntaxError: invalid character '\\ufeff' (U+FEFF)"),
    "form_feed": (b"\x0cprint(1)\n", 2, "IndentationError: unexpected indent"),
    "backslash_at_end": (b"x = 1 \\", 2, "SyntaxError: unexpected end of file after line continuation character"),
    "unterminated_string": (b"x = 'abc\n", 2, "SyntaxError: unterminated string"),
    "unterminated_triple": (b'x = """abc\n', 2, "SyntaxError: unterminated triple-quoted string"),
    "unmatched": (b")\n", 2, "SyntaxError: unmatched ')'"),
    "unclosed": (b"print((1)\n", 2, "SyntaxError: '(' was never closed"),
    "control_chars": (b"\x01\x02", 2, "SyntaxError: invalid character '\\x01' (U+0001)"),
    "terminal_escape": (b"\x1b[31mprint(1)\n", 2, "SyntaxError: invalid character '\\x1b' (U+001B)"),
    "zero_width_space": ("x\u200b = 1\n".encode(), 2, "SyntaxError: invalid character '\\u200b' (U+200B)"),
    "emoji_name": ("\U0001f600 = 1\n".encode(), 2, "SyntaxError: invalid character '\U0001f600' (U+1F600)"),
    "unknown_char_name": (b"x = '\\N{nope}'\n", 2, "SyntaxError: unknown Unicode character name 'nope'"),
    "escape_past_unicode": (b"x = '\\U0011ffff'\n", 2, "SyntaxError: illegal Unicode character"),
    "huge_int_literal": (_repeat(b"x = ", b"9", 10**6, b"\n"), 2, "SyntaxError: Exceeds the limit (4300 digits) for "
                         "integer string conversion: value has 1000000 digits; use sys.set_int_max_str_digits() to "
                         "increase the limit - Consider hexadecimal for huge integer literals to avoid decimal "
                         "conversion limits."),
    "huge_hex_literal": (_repeat(b"x = 0x", b"f", 10**6, b"\n"), 0, None),
    "huge_float_literal": (_repeat(b"x = 1e999999\nx = 1.", b"5", 10**6, b"\n"), 0, None),
    "line_10mb_string": (_repeat(b"x = '", b"a", 10**7, b"'\n"), 0, None),
    "line_10mb_comment": (_repeat(b"#", b"a", 10**7, b"\n"), 0, None),
    "line_10mb_name": (_repeat(b"", b"a", 10**7, b" = 1\n"), 0, None),
    "line_10mb_blanks": (_repeat(b"x = 1", b" ", 10**7, b"\n"), 0, None),
    "line_10mb_semicolons": (_repeat(b"x = 1", b";", 10**7, b"\n"), 2, "SyntaxError: unexpected ';'"),
    "line_of_operators": (_repeat(b"x = ", b"1+", 200_000, b"1\n"), 2,
                          "SyntaxError: expression too deeply nested (more than 1000 levels of operators or calls)"),
    "deep_indentation": (b"".join(b"    " * i + b"if 1:\n" for i in range(120)), 2,
                         "IndentationError: too many levels of indentation"),
    "indent_at_end": (b"if 1:\n    x = 1\n  ", 0, None),
    "escape_in_assert_message": (b"assert False, '\x1b]0;title\x07'\n", 1,
                                 "AssertionError: \\x1b]0;title\\x07"),
}
for _i in range(8):
    CASES[f"random_bytes_{_i}"] = (bytes(_rnd.randrange(256) for _ in range(_rnd.randrange(1, 400))), None, None)
    CASES[f"random_ascii_{_i}"] = ("".join(_rnd.choice("x=+-*/()[]{}:\n\t #'\"\\.,0123456789abcdefif ")
                                           for _ in range(_rnd.randrange(1, 400))).encode(), None, None)

HEADLINE = re.compile(r"^(?P<file>.+?)(:\d+(:\d+)?)?: (?P<kind>[A-Za-z]+): (?P<message>.*)$")


def check_report(err: str, path: str, expected: str | None) -> None:
    lines = err.splitlines()
    assert "Traceback" not in err
    if expected is None and not lines:
        return
    assert 1 <= len(lines) <= 3, err            # the message; maybe the source line and a caret
    m = HEADLINE.match(lines[0])
    assert m and m["file"] == path, lines[0]
    if expected is not None:
        assert lines[0].split(": ", 1)[1] == expected
    for line in lines[1:]:
        assert line.startswith("    ") and line.isprintable()


@pytest.mark.parametrize("name", list(CASES))
def test_any_bytes_as_a_script(name, tmp_path, capsys):
    _, status, expected = CASES[name]
    path = tmp_path / f"{name}.grad"
    path.write_bytes(source_of(name))
    started = time.monotonic()
    rc = cli.main(["run", str(path)])
    assert time.monotonic() - started < 30
    out, err = capsys.readouterr()
    assert rc in (0, 1, 2)
    if status is not None:
        assert rc == status
        check_report(err, str(path), expected)
    else:
        check_report(err, str(path), None)
    if rc == 0:
        assert err == ""


@pytest.mark.parametrize("name", ["invalid_utf8", "nul", "tab_then_spaces", "empty", "line_10mb_comment"])
def test_as_a_real_process_and_from_stdin(name, tmp_path):
    data, (_, status, expected) = source_of(name), CASES[name]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GRADCLI_TRACEBACK", None)
    for args, shown in ((["run", "-"], "<stdin>"), ([], "<stdin>")):
        p = launcher.run(args, input=data, text=False, env=env, timeout=60)
        assert p.returncode == status
        check_report(p.stderr.decode(), shown, expected)


@pytest.fixture(scope="module")
def shell():
    return Shell(Options(colour=False), out=io.StringIO(), err=io.StringIO())


@pytest.mark.parametrize("name", list(CASES))
def test_the_repl_survives_the_same_text(shell, name):
    text = source_of(name).decode("utf-8", "replace")
    shell.err.seek(0), shell.err.truncate()
    shell.out.seek(0), shell.out.truncate()
    assert shell.execute(text) in (True, False)
    assert "internal error" not in shell.err.getvalue()
    assert "Traceback" not in shell.err.getvalue()
    shell.execute("print(6 * 7)")
    assert shell.out.getvalue().endswith("42\n")


@pytest.mark.parametrize("name", ["invalid_utf8", "nul", "random_bytes_0", "line_10mb_comment", "empty"])
def test_the_repl_loads_bad_files(shell, name, tmp_path):
    path = tmp_path / f"{name}.grad"
    path.write_bytes(source_of(name))
    shell.err.seek(0), shell.err.truncate()
    shell.execute(f"%load {path}")
    assert "internal error" not in shell.err.getvalue()
    assert "Traceback" not in shell.err.getvalue()
