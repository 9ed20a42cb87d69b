"""The catalog cache reuses each unchanged file's parse: a changed catalog gives exactly what a
cold load and validation give (entries, positions, findings in order), and only the files whose
bytes changed are parsed again."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_files

import catalog.entries.loader
import catalog.entries.validate
from catalog.core.findings import Finding
from catalog.core.model import Catalog
from catalog.entries.loader import (
    StoredCatalog,
    read_cache,
    read_catalog,
    tool_fingerprint,
    write_cache,
)
from catalog.entries.validate import CACHE_FILE, checked_catalog, validate

A1, A2, B1, B2, C1 = (
    "a000000000000001",
    "a000000000000002",
    "b000000000000001",
    "b000000000000002",
    "c000000000000001",
)

FILES = {
    "a.yaml": f"""\
        module: pkg.a
        errors:
          - id: "{A1}"
            name: AlphaError
            exception: ValueError
            status: draft
            message: "alpha {{thing}} broke"
            related: ["{B1}"]
          - id: "{A2}"
            name: AlphaTwoError
            exception: KeyError
            status: draft
            message: "alpha two"
        """,
    "b.yaml": f"""\
        module: pkg.b
        errors:
          - id: "{B1}"
            name: BetaError
            exception: TypeError
            status: draft
            message: "beta {{kind}}"
          - id: "{B2}"
            name: BetaTwoError
            exception: OSError
            status: draft
            message: "beta two"
        """,
    "c.yaml": f"""\
        module: pkg.c
        errors:
          - id: "{C1}"
            name: GammaError
            exception: RuntimeError
            status: draft
            message: "gamma"
            related: ["{A2}"]
        """,
}


def fresh(folder: Path) -> tuple[Catalog, list[Finding]]:
    """What a cold load and validation of `folder` give, no cache involved."""
    loaded = read_catalog(folder)
    return loaded.catalog, loaded.findings + validate(loaded.catalog, loaded.broken)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files the loader parses from now on, in order."""
    names: list[str] = []
    real = catalog.entries.loader.read_bytes

    def counting(path: Path, data: bytes) -> catalog.entries.loader.FileLoad:
        names.append(path.name)
        return real(path, data)

    monkeypatch.setattr(catalog.entries.loader, "read_bytes", counting)
    return names


def cached(folder: Path, cache: Path, parsed: list[str]) -> tuple[list[str], list[str]]:
    """Load `folder` through the cache; check that the result is a cold load's exactly; return
    the files parsed for it and the findings as `file:line:col: message; fix`."""
    parsed.clear()
    result = checked_catalog(folder, cache)
    names = list(parsed)
    expected = fresh(folder)
    assert result == expected
    # Entry equality compares field positions as mappings; compare them as plain dicts too.
    assert [dict(e.field_positions) for e in result[0]] == [
        dict(e.field_positions) for e in expected[0]
    ]
    return names, [finding.format(folder) for finding in result[1]]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_files(tmp_path / "knowledge", FILES)


def test_one_edited_file_is_parsed_again(
    folder: Path, tmp_path: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Editing one entry's prose parses that file only; an unchanged catalog parses none and
    is served whole, without reading the files one by one."""
    cache = tmp_path / "cache"
    assert cached(folder, cache, parsed) == (["a.yaml", "b.yaml", "c.yaml"], [])
    edit(
        folder / "b.yaml", "    name: BetaTwoError\n", '    name: BetaTwoError\n    meaning: "x"\n'
    )
    assert cached(folder, cache, parsed) == (["b.yaml"], [])
    catalog_now = checked_catalog(folder, cache)[0]
    assert catalog_now.by_id()[B2].meaning == "x"
    assert catalog_now.by_id()[B2].where("meaning").line == 10

    def refuse(*args: object) -> object:
        raise AssertionError("an unchanged catalog should be served whole")

    monkeypatch.setattr(catalog.entries.validate, "reread_catalog", refuse)
    assert cached(folder, cache, parsed) == ([], [])
    assert list(cache.iterdir()) == [cache / CACHE_FILE]


def test_a_broken_edit_and_its_fix(folder: Path, tmp_path: Path, parsed: list[str]) -> None:
    """A syntax error, then a schema error in one entry: the findings of a cold load, placed;
    an unchanged broken file keeps its findings and its left-out entries while another file
    changes; fixing it gives the clean catalog again."""
    cache = tmp_path / "cache"
    cached(folder, cache, parsed)
    clean = checked_catalog(folder, cache)
    b = folder / "b.yaml"
    good = b.read_text(encoding="utf-8")

    edit(b, '    message: "beta two"', '    message: "beta two\n  oops: [')
    names, findings = cached(folder, cache, parsed)
    assert names == ["b.yaml"]
    assert len(findings) == 2
    assert findings[0] == (
        "b.yaml:12:14: YAML syntax: the file ends inside a quoted scalar that starts here; close it"
    )
    assert findings[1] == (
        f"a.yaml:8:15: related id {B1} is not in the catalog; "
        "point it at an existing entry or remove it"
    )

    b.write_text(good.replace("status: draft", "status: bogus", 1), encoding="utf-8")
    names, findings = cached(folder, cache, parsed)
    assert names == ["b.yaml"]
    assert findings == [
        "b.yaml:6:13: errors[0].status has value 'bogus'; expected one of: draft, active, retired",
        f"a.yaml:8:15: related id {B1} is the entry at b.yaml:3, which did not load "
        "(see the findings for b.yaml); fix that entry first",
    ]

    # b.yaml, still broken, comes from the cache while a.yaml changes.
    edit(folder / "a.yaml", '"alpha two"', '"alpha two, changed"')
    names, again = cached(folder, cache, parsed)
    assert (names, again) == (["a.yaml"], findings)

    edit(folder / "a.yaml", '"alpha two, changed"', '"alpha two"')
    b.write_text(good, encoding="utf-8")
    assert cached(folder, cache, parsed) == (["a.yaml", "b.yaml"], [])
    assert checked_catalog(folder, cache) == clean


def test_deleting_adding_renaming_and_reverting_files(
    folder: Path, tmp_path: Path, parsed: list[str]
) -> None:
    """A deleted file leaves, an added one is parsed, a renamed or copied one is not (its
    findings and positions name the new file), and bytes changed back are parsed once more."""
    cache = tmp_path / "cache"
    cached(folder, cache, parsed)
    c = (folder / "c.yaml").read_text(encoding="utf-8")

    (folder / "c.yaml").unlink()
    assert cached(folder, cache, parsed) == ([], [])

    (folder / "d.yaml").write_text(c.replace("pkg.c", "pkg.d"), encoding="utf-8")
    assert cached(folder, cache, parsed) == (["d.yaml"], [])

    (folder / "a.yaml").rename(folder / "z.yaml")
    names, findings = cached(folder, cache, parsed)
    assert names == []
    assert checked_catalog(folder, cache)[0].by_id()[A1].position.path == folder / "z.yaml"

    (folder / "y.yaml").write_bytes((folder / "z.yaml").read_bytes())
    names, findings = cached(folder, cache, parsed)
    assert names == []
    assert findings[0] == (
        f"z.yaml:3:9: duplicate id {A1} (also y.yaml:3); "
        "ids are never reused: give this entry a new id with errcat new"
    )
    (folder / "y.yaml").unlink()

    b = folder / "b.yaml"
    before = b.read_bytes()
    edit(b, '"beta two"', '"beta two, for now"')
    assert cached(folder, cache, parsed) == (["b.yaml"], [])
    b.write_bytes(before)
    # Only the files now in the folder are kept: the earlier bytes are parsed again.
    assert cached(folder, cache, parsed) == (["b.yaml"], [])


def test_a_damaged_or_foreign_cache_is_a_miss(
    folder: Path, tmp_path: Path, parsed: list[str]
) -> None:
    """A cache file with a flipped byte, of another layout, or with a damaged record of one
    file: loaded as if there were none (that file parsed again), never an error."""
    cache = tmp_path / "cache"
    cached(folder, cache, parsed)
    path = cache / CACHE_FILE
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    assert cached(folder, cache, parsed) == (["a.yaml", "b.yaml", "c.yaml"], [])

    key = tool_fingerprint().hex()
    write_cache(path, key, ("another errcat's catalog", 1, 2))
    assert cached(folder, cache, parsed) == (["a.yaml", "b.yaml", "c.yaml"], [])

    stored = StoredCatalog.from_data(read_cache(path, key))
    assert stored is not None and stored.result() is not None
    digest = dict(stored.files)[str(folder / "b.yaml")]
    assert digest is not None
    records = {**stored.records, digest: ("not", "a record")}
    write_cache(path, key, StoredCatalog(stored.key, stored.files, records, stored.checks).data())
    assert cached(folder, cache, parsed) == (["b.yaml"], [])

    path.write_bytes(b"errcat-cache\n" + key.encode() + b"\n")
    assert cached(folder, cache, parsed) == (["a.yaml", "b.yaml", "c.yaml"], [])
