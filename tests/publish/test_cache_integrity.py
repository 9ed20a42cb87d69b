"""Every cache under `.errcat-cache/` only ever costs speed: a file with a changed byte is a miss,
recomputed, never a different result or an error; and `--no-cache` on build, check and stats
reads and writes nothing there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import file_digests
from test_build_project import make_project

from catalog.cli import main
from catalog.core.config import load_config
from catalog.core.project import CACHE_FOLDER, cache_folder, caching
from catalog.publish.build import build_site
from extractor import scan_paths
from extractor.calls import ANSWERS_PREFIX, CACHE_PREFIX, call_graph, reaches
from extractor.model import ScanReport

_WORD = re.compile(rb"[a-z]{4,}")


def _garble(path: Path) -> None:
    """Change one byte of `path`, in a way that still decodes: the case of a letter in the
    project's messages (`widget ...`, shown on the pages), else in the first word past any
    header, so that marshal, pickle or JSON read another value rather than refuse the file (a
    check that only catches what fails to decode does not pass)."""
    data = bytearray(path.read_bytes())
    found = (
        re.compile(rb"widget").search(bytes(data))
        or _WORD.search(bytes(data), 32)
        or _WORD.search(bytes(data))
    )
    position = found.start() if found else len(data) // 2
    data[position] ^= 0x20 if found else 0xFF
    path.write_bytes(bytes(data))


def _garble_all(folder: Path) -> list[str]:
    """Garble every file under `folder`; their names, relative to it."""
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    for path in files:
        _garble(path)
    return [path.relative_to(folder).as_posix() for path in files]


def _callers(report: ScanReport, root: Path, cache: Path | None) -> dict[object, object]:
    graph = reaches(report, cwd=root, cache_dir=cache) if cache else call_graph(report, cwd=root)
    wanted = sorted({(s.path, s.function) for s in report.sites if s.function is not None})
    return {where: graph.callers(*where) for where in wanted}


def test_a_changed_byte_in_the_scan_and_call_caches_is_a_miss(tmp_path: Path) -> None:
    """Scan results, call summaries and callers' answers with one byte changed in every entry
    give what a scan without the cache gives."""
    root = make_project(tmp_path)
    cache = root / CACHE_FOLDER

    def scan(cache_dir: Path | None) -> ScanReport:
        return scan_paths([root / "widgets"], cache_dir=cache_dir, cwd=root)

    fresh = scan(None)
    fresh_callers = _callers(fresh, root, None)
    assert any("cannot turn backwards" in (site.template or "") for site in fresh.sites)
    assert scan(cache).results == fresh.results
    assert _callers(fresh, root, cache) == fresh_callers
    prefixes = {name.split("-")[0] + "-" for name in _garble_all(cache)}
    assert {"scan-", CACHE_PREFIX, ANSWERS_PREFIX} <= prefixes
    again = scan(cache)
    assert again.results == fresh.results
    assert _callers(again, root, cache) == fresh_callers
    # Each damaged entry was written again, whole: the next scan reads it back.
    assert scan(cache).results == fresh.results


def test_a_changed_byte_in_every_site_cache_file_builds_the_same_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a build, one byte changed in each file under `.errcat-cache/` (the catalog,
    messages, scan, call, page, site, theme and API caches): the next build exits 0 and
    writes the same pages and JSON."""
    root = make_project(tmp_path)
    monkeypatch.chdir(root)
    out = root / "build" / "site"
    first = file_digests(build_site(load_config(root), out).version)
    garbled = _garble_all(root / CACHE_FOLDER)
    assert any(name.startswith("templates-") for name in garbled)  # the jinja bytecode
    assert any(name.startswith("scan-") for name in garbled)
    assert main(["build"]) == 0
    assert file_digests(out.resolve()) == first
    assert any(name.endswith(".json") for name in first)


def test_a_damaged_site_cache_file_is_replaced_and_a_damaged_value_is_a_miss(
    tmp_path: Path,
) -> None:
    """A file SQLite finds damaged does not turn the cache off for every later build: the next
    opening starts a new one. A value that does not decompress is a miss, and stored again."""
    import sqlite3

    from catalog.core.sitecache import FILE_NAME, SiteCache

    cache = SiteCache(tmp_path)
    cache.put("page", b"widget page " * 50)
    cache.finish(succeeded=True)
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("UPDATE blobs SET value = ? WHERE key = 'page'", (b"not zlib",))
    db.close()
    cache = SiteCache(tmp_path)
    assert cache.enabled and cache.get("page") is None
    cache.put("page", b"widget page")
    cache.finish(succeeded=True)
    _garble(tmp_path / FILE_NAME)
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(tmp_path / FILE_NAME).execute("SELECT value FROM blobs").fetchall()
    cache = SiteCache(tmp_path)
    assert cache.enabled and cache.get("page") is None
    cache.put("page", b"widget page, again")
    cache.finish(succeeded=True)
    cache = SiteCache(tmp_path)
    assert cache.get("page") == b"widget page, again"
    cache.finish(succeeded=True)


def test_no_cache_check_and_stats_leave_no_cache_folder_and_say_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path)
    monkeypatch.chdir(root)
    outputs = {}
    for argv in (["check", "--json"], ["stats", "--json"]):
        codes = main([*argv, "--no-cache"]), main([*argv, "--no-cache"])
        uncached = capsys.readouterr().out
        assert not (root / CACHE_FOLDER).exists(), argv
        # Twice with the cache: written by the first, read by the second.
        codes += main(argv), main(argv)
        cached = capsys.readouterr().out
        assert (root / CACHE_FOLDER).is_dir()
        assert len(set(codes)) == 1, (argv, codes)
        assert cached == uncached and uncached.strip(), argv
        outputs[argv[0]] = json.loads(uncached[: len(uncached) // 2])
        for path in (root / CACHE_FOLDER).rglob("*"):
            if path.is_file():
                path.unlink()
        for path in sorted((root / CACHE_FOLDER).rglob("*"), reverse=True):
            path.rmdir()
        (root / CACHE_FOLDER).rmdir()
    assert outputs["stats"]["sites"]["total"] == 3


def test_no_cache_build_leaves_no_cache_folder_and_builds_the_same_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path)
    monkeypatch.chdir(root)
    out = root / "build" / "site"
    assert main(["build", "--no-cache"]) == 0
    uncached = file_digests(out.resolve())
    assert any(name.endswith(".json") for name in uncached)
    assert not (root / CACHE_FOLDER).exists()
    assert main(["build"]) == 0
    assert file_digests(out.resolve()) == uncached


def test_caching_false_is_no_cache_folder_until_the_block_ends(tmp_path: Path) -> None:
    config = load_config(make_project(tmp_path))
    assert cache_folder(config) == config.root / CACHE_FOLDER
    with caching(False):
        assert cache_folder(config) is None
        with caching(True):  # an inner block cannot turn caches back on
            assert cache_folder(config) is None
    assert cache_folder(config) == config.root / CACHE_FOLDER
