"""The parse-table cache (gradcli/language/tables.py) against whoever can write where it is kept: nothing in
the folder runs code, is followed, blocks or crashes the parser; anything suspect is rebuilt."""

import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli.language import parser, tables
from gradcli.language.treebuild import Builder

REPO = Path(__file__).resolve().parent.parent
GRAMMAR = parser.grammar_path().read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def built():
    return tables.build(GRAMMAR, Builder)


@pytest.fixture
def cache(tmp_path, monkeypatch, built):
    """A private cache base in tmp_path; `cache.builds` counts the tables built (not read)."""
    base = tmp_path / "cache"
    base.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))

    class Cache:
        builds = 0
        path = tables.cache_path(GRAMMAR)

        @staticmethod
        def load():
            return tables.load(GRAMMAR, Builder)

    def build(grammar, builder_type):
        Cache.builds += 1
        return built
    monkeypatch.setattr(tables, "build", build)
    return Cache


def written(cache) -> dict:
    """Write good tables to the cache, the way gradcli does, and return them."""
    assert cache.load() is not None and cache.builds == 1
    return tables.decode(cache.path.read_bytes())


def test_tables_are_written_privately_and_read_back(cache):
    first = cache.load()
    assert cache.builds == 1
    assert stat.S_IMODE(cache.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.path.parent.stat().st_mode) == 0o700
    assert cache.load() == first and cache.builds == 1      # read, not rebuilt


def test_a_pickle_that_would_run_code_is_never_loaded(cache, tmp_path):
    written(cache)
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    cache.path.write_bytes(pickle.dumps(Payload()))
    # a fresh process, as the next user of gradcli would run it
    code = "import gradcli.language.parser as p; print(p.parse('x = 1').body[0].targets[0].id)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.stdout.strip() == "x", result.stderr
    assert not marker.exists()
    assert tables.decode(cache.path.read_bytes())["format"] == tables.FORMAT      # rebuilt in its place


def test_a_fifo_does_not_hang(cache):
    cache.path.parent.mkdir(mode=0o700)
    os.mkfifo(cache.path, 0o600)
    assert cache.load() is not None and cache.builds == 1
    assert stat.S_ISREG(cache.path.lstat().st_mode)      # replaced by a regular file


def test_a_symbolic_link_is_not_followed(cache, tmp_path):
    good = written(cache)
    elsewhere = tmp_path / "elsewhere.tables"
    elsewhere.write_bytes(tables.encode(good))
    elsewhere.chmod(0o600)
    cache.path.unlink()
    cache.path.symlink_to(elsewhere)
    cache.load()
    assert cache.builds == 2
    assert not cache.path.is_symlink()


def test_a_linked_folder_is_not_followed(cache, tmp_path):
    good = written(cache)
    real = tmp_path / "real"
    cache.path.parent.rename(real)
    cache.path.parent.symlink_to(real)
    cache.load()
    assert cache.builds == 2
    assert tables.decode((real / cache.path.name).read_bytes()) == good


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_folder_others_can_write_is_neither_read_nor_written(cache, mode):
    written(cache)
    cache.path.parent.chmod(mode)
    stamp = cache.path.stat().st_mtime_ns
    cache.load()
    assert cache.builds == 2
    assert cache.path.stat().st_mtime_ns == stamp


def test_a_file_others_can_write_is_not_read(cache):
    written(cache)
    cache.path.chmod(0o666)
    cache.load()
    assert cache.builds == 2


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing owners needs root")
@pytest.mark.parametrize("what", ["folder", "file"])
def test_what_another_user_owns_is_not_read(cache, what):
    written(cache)
    os.chown(cache.path.parent if what == "folder" else cache.path, 65534, 65534)
    cache.load()
    assert cache.builds == 2


def _broken(good: dict, how: str):
    data = {**good}
    if how == "wrong type in a row":
        data["actions"] = [dict(row) for row in good["actions"]]
        row = next(r for r in data["actions"] if r)     # (Lark numbers states anew at each build: the first
        row[next(iter(row))] = "shift"                  # may be an end state, without actions)
    elif how == "state out of range":
        data["gotos"] = [dict(row) for row in good["gotos"]]
        row = next(r for r in data["gotos"] if r)
        row[next(iter(row))] = len(good["gotos"]) + 5
    elif how == "unknown builder method":
        data["rules"] = [("__init__", *good["rules"][0][1:])] + good["rules"][1:]
    elif how == "a list for a dict":
        data["scanner"] = list(good["scanner"])
    elif how == "a bad regex":
        data["scanner"] = {**good["scanner"], "regex": "(unclosed"}
    elif how == "a key missing":
        del data["end_states"]
    elif how == "not a dict":
        data = [1, 2, 3]
    return tables.encode(data)


@pytest.mark.parametrize("how", ["wrong type in a row", "state out of range", "unknown builder method",
                                 "a list for a dict", "a bad regex", "a key missing", "not a dict"])
def test_well_formed_but_wrong_tables_are_rebuilt(cache, how):
    good = written(cache)
    cache.path.write_bytes(_broken(good, how))
    assert cache.load() == good
    assert cache.builds == 2
    assert tables.decode(cache.path.read_bytes()) == good      # and rewritten


@pytest.mark.parametrize("cut", [0, 5, len(tables.MAGIC) + 2, 1000, -1])
def test_truncated_or_damaged_content_is_rebuilt(cache, cut):
    data = tables.encode(written(cache))
    cache.path.write_bytes(data[:cut] if cut >= 0 else data[:-10] + b"0123456789")
    assert cache.load() is not None
    assert cache.builds == 2


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert tables.cache_path(GRAMMAR).parent == tmp_path / ".cache" / "gradcli"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert tables.cache_path(GRAMMAR).parent == tmp_path / ".cache" / "gradcli"


def test_the_driver_reads_the_lark_it_was_written_for():
    """tables._read_lark reads Lark's internal objects (its parse table, rules, terminals), written for
    Lark 1.3.1: another release must be checked against that function before this test is changed."""
    import lark
    assert tables.LARK_VERSION == "1.3.1" == lark.__version__


def test_only_read_lark_touches_lark():
    """Lark's internals are read in one function of one module: no other module imports lark."""
    import ast
    from pathlib import Path
    package = Path(tables.__file__).resolve().parents[1]
    importers = []
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "lark" not in text:          # an import of lark names it: the other modules need no parse
            continue
        for node in ast.walk(ast.parse(text)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n == "lark" or n.startswith("lark.") for n in names):
                importers.append(path.name)
    assert importers == ["tables.py", "tables.py"]          # `import lark` and its Shift, in _read_lark
    source = Path(tables.__file__).read_text(encoding="utf-8")
    body = source[source.index("def _read_lark("):source.index("\ndef ", source.index("def _read_lark(") + 1)]
    assert "import lark" in body and "from lark.parsers.lalr_analysis import Shift" in body
