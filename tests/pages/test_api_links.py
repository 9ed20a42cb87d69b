"""API files a build takes from the version it replaces: hard links where the bytes are the
same, fresh files elsewhere, and never a change to the previous version."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from helpers import file_digests
from test_build_project import ACTIVE_ID, make_project

from catalog.core import workers
from catalog.core.config import load_config
from catalog.core.project import CACHE_FOLDER
from catalog.pages import api
from catalog.pages.openapi import OPENAPI_FILE
from catalog.publish.build import build_site


def _api_files(version: Path) -> dict[str, str]:
    """What `write_api` wrote in `version` (relative path → SHA-256 of its bytes)."""
    return {p: d for p, d in file_digests(version).items() if p.startswith("api/")}


def _inode(path: Path) -> int:
    return os.lstat(path).st_ino


def test_an_edited_entry_is_written_and_the_rest_linked(tmp_path: Path) -> None:
    """After one entry's prose is edited, the new version's API files are a from-scratch
    build's byte for byte; the unchanged ones share the previous version's inodes, the edited
    entry's file does not, and the previous version is left as it was."""
    root = make_project(tmp_path / "widgets")
    out = root / "build" / "site"
    first = build_site(load_config(root), out).version
    before = file_digests(first)
    catalog = root / "catalog" / "widgets.core.yaml"
    text = catalog.read_text(encoding="utf-8")
    assert "Turn the widget around first." in text
    catalog.write_text(text.replace("around first.", "around first, gently."), encoding="utf-8")

    second = build_site(load_config(root), out).version
    scratch = build_site(load_config(root), tmp_path / "elsewhere" / "site").version

    assert file_digests(first) == before
    new, old = _api_files(second), _api_files(first)
    assert new == _api_files(scratch)
    edited = f"api/errors/{ACTIVE_ID}.json"
    assert new[edited] != old[edited]
    linked = {p for p in new if _inode(second / p) == _inode(first / p)}
    assert linked == {p for p in new if new[p] == old.get(p)}
    assert edited not in linked and "api/errors/index.json" in linked
    assert len(linked) == len(new) - 1
    # From scratch, nothing was there to link from.
    assert not any(_inode(scratch / p) == _inode(first / p) for p in new)


def test_a_changed_site_url_writes_every_file_it_changes(tmp_path: Path) -> None:
    """A change that touches the index (every URL in it) writes the index and the entry
    files afresh; a file it leaves alone (the schema) is linked."""
    root = make_project(tmp_path / "widgets")
    out = root / "build" / "site"
    first = build_site(load_config(root), out, site_url="https://one.example/").version
    before = file_digests(first)
    second = build_site(load_config(root), out, site_url="https://two.example/").version
    assert file_digests(first) == before
    new, old = _api_files(second), _api_files(first)
    linked = {p for p in new if _inode(second / p) == _inode(first / p)}
    assert linked == {p for p in new if new[p] == old.get(p)}
    assert "api/schema.json" in linked
    assert "api/errors/index.json" not in linked and f"api/errors/{ACTIVE_ID}.json" not in linked


DOCUMENTS: dict[str, object] = {
    "api/errors/aaaaaaaaaaaaaaaa.json": {"id": "aaaaaaaaaaaaaaaa", "meaning": "One."},
    "api/errors/bbbbbbbbbbbbbbbb.json": {"id": "bbbbbbbbbbbbbbbb", "meaning": "Two: é."},
    "api/errors/index.json": [{"id": "aaaaaaaaaaaaaaaa"}, {"id": "bbbbbbbbbbbbbbbb"}],
    "api/schema.json": '{"type": "object"}\n',
}
ENTRY = "api/errors/aaaaaaaaaaaaaaaa.json"


def _write(tmp_path: Path, name: str, documents: dict[str, object], previous: str | None) -> Path:
    site = tmp_path / name
    link = tmp_path / previous if previous else None
    api.write_api(site, documents, previous=link, cache=tmp_path / CACHE_FOLDER)
    return site


def _expected(tmp_path: Path, documents: dict[str, object]) -> dict[str, str]:
    scratch = tmp_path / "scratch"
    api.write_api(scratch, documents)  # neither cache nor previous: every file written
    return file_digests(scratch)


def test_a_file_edited_in_the_previous_version_is_written_not_linked(tmp_path: Path) -> None:
    """An API file changed in place after its build (its time changes) is not trusted."""
    first = _write(tmp_path, "one", DOCUMENTS, None)
    (first / ENTRY).write_text('{"tampered": true}\n', encoding="utf-8")
    second = _write(tmp_path, "two", DOCUMENTS, "one")
    assert file_digests(second) == _expected(tmp_path, DOCUMENTS)
    assert _inode(second / ENTRY) != _inode(first / ENTRY)
    assert _inode(second / "api/schema.json") == _inode(first / "api/schema.json")


def test_a_deployment_file_over_a_linked_document_leaves_the_previous_version(
    tmp_path: Path,
) -> None:
    """A document at the OpenAPI description's path is linked first, then replaced by the
    description: the replacement is a new file, the previous version's stays."""
    documents = {**DOCUMENTS, OPENAPI_FILE: "a document where openapi.json goes\n"}
    first = _write(tmp_path, "one", DOCUMENTS, None)
    (first / OPENAPI_FILE).unlink()
    # The previous version as if it held the document at that path, recorded as written.
    os.replace(_write(tmp_path, "plain", documents, None) / OPENAPI_FILE, first / OPENAPI_FILE)
    records = api._read_links(tmp_path / CACHE_FOLDER)
    found = os.lstat(first / OPENAPI_FILE)
    key = api._key(documents[OPENAPI_FILE])
    records[-1]["files"][OPENAPI_FILE] = [key, found.st_size, found.st_mtime_ns, found.st_ino]
    api._write_links(tmp_path / CACHE_FOLDER, first, records[-1]["files"], records[:-1])
    before = file_digests(first)

    second = _write(tmp_path, "two", documents, "one")
    assert file_digests(first) == before
    assert file_digests(second) == _expected(tmp_path, documents)
    assert _inode(second / OPENAPI_FILE) != _inode(first / OPENAPI_FILE)


def test_without_hard_links_every_file_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where linking fails (another file system), the build writes the files instead."""
    _write(tmp_path, "one", DOCUMENTS, None)

    def cross_device(source: object, target: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    second = _write(tmp_path, "two", DOCUMENTS, "one")
    assert file_digests(second) == _expected(tmp_path, DOCUMENTS)
    assert os.lstat(second / ENTRY).st_nlink == 1


def test_a_previous_version_removed_meanwhile_or_unrecorded_links_nothing(
    tmp_path: Path,
) -> None:
    """No record of the previous folder, or no folder: every file is written."""
    _write(tmp_path, "one", DOCUMENTS, None)
    (tmp_path / "other").mkdir()
    unrecorded = _write(tmp_path, "two", DOCUMENTS, "other")
    assert os.lstat(unrecorded / ENTRY).st_nlink == 1
    gone = _write(tmp_path, "three", DOCUMENTS, "missing")
    assert file_digests(gone) == _expected(tmp_path, DOCUMENTS)
    assert os.lstat(gone / ENTRY).st_nlink == 1


def test_documents_with_the_same_pickle_are_written_the_same() -> None:
    """The key stands for the bytes: equal keys for equal documents, different keys for
    documents `dumps` writes differently (a bool is not an int, key order counts)."""
    assert api._key({"a": [1, "x"]}) == api._key({"a": [1, "x"]})
    different = [{"a": 1}, {"a": True}, {"a": 1.0}, {"a": "1"}, {"b": 1, "a": 1}, {"a": 1, "b": 1}]
    assert len({api._key(d) for d in different}) == len({api.dumps(d) for d in different})
    assert api._key('{"a": 1}\n') != api._key({"a": 1})


def test_files_the_workers_write_are_recorded_and_linked_next_time(tmp_path: Path) -> None:
    """Enough documents for the forked workers: what they write is recorded, so the next
    build links all but the changed one, and its files are a from-scratch build's."""
    many: dict[str, object] = {
        f"api/errors/{index:016x}.json": {"id": f"{index:016x}", "n": index}
        for index in range(3 * workers.PARALLEL_ITEMS)
    }
    first = _write(tmp_path, "one", many, None)
    changed = dict(many, **{"api/errors/0000000000000007.json": {"id": "7", "n": "seven"}})
    second = _write(tmp_path, "two", changed, "one")
    assert file_digests(second) == _expected(tmp_path, changed)
    unlinked = [p for p in changed if _inode(second / p) != _inode(first / p)]
    assert unlinked == ["api/errors/0000000000000007.json"]
