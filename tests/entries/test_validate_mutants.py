"""Cross-entry findings of `catalog.entries.validate`, each exactly (position, message, fix, severity):
every case pins a rule that a mutant of the validator once broke unnoticed (bench/mutation.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import catalog.entries.validate
from catalog.core.findings import Severity
from catalog.entries.validate import (
    CACHE_FILE,
    checked_catalog,
    draft_warnings,
    load_valid_catalog,
)

ENTRY = """\
  - id: {id}
    name: {name}
    exception: {exception}
    status: {status}
    message: "{message}"
"""


def entry(
    id: str,
    name: str,
    *,
    exception: str = "ValueError",
    message: str = "thing {thing} broke",
    status: str = "draft",
    extra: str = "",
) -> str:
    """One YAML entry (5 lines, plus `extra`, already indented by four spaces)."""
    text = ENTRY.format(id=id, name=name, exception=exception, status=status, message=message)
    return text + extra


def findings_of(folder: Path, *entries: str) -> list[str]:
    """`line:col: message; fix` of every finding for one file holding `entries`."""
    (folder / "pool.yaml").write_text(
        "module: pkg.pool\nerrors:\n" + "".join(entries), encoding="utf-8"
    )
    _, findings = checked_catalog(folder)
    assert all(f.path.name == "pool.yaml" for f in findings)
    return [f.format(folder).removeprefix("pool.yaml:") for f in findings]


A, B, C, D, E = (
    "0123456789abcdef",
    "aaaaaaaaaaaaaaa1",
    "bbbbbbbbbbbbbbb2",
    "ccccccccccccccc3",
    "ddddddddddddddd4",
)


def test_a_clean_catalog_has_no_findings(tmp_path: Path) -> None:
    """Distinct ids, names and messages, proper references: nothing to report."""
    assert (
        findings_of(
            tmp_path,
            entry(A, "First", extra=f"    related: [{B}]\n"),
            entry(B, "Second", message="other {thing}", exception="OSError"),
            entry(C, "Third", message="other {thing}", exception="pkg.errors.Custom"),
        )
        == []
    )


def test_reserved_names_and_builtins(tmp_path: Path) -> None:
    """A generated module's own names and built-in names are refused, each reported every time
    (a refused name is not remembered as taken), and a name taken twice names the first."""
    assert findings_of(
        tmp_path,
        entry(A, "CatalogError"),
        entry(B, "CatalogError", message="b {thing}"),
        entry(C, "TypeError", message="c {thing}"),
        entry(D, "Twice", message="d {thing}"),
        entry(E, "Twice", message="e {thing}"),
    ) == [
        "4:11: name CatalogError is reserved for the generated base class; choose another class name",
        "9:11: name CatalogError is reserved for the generated base class; choose another class name",
        "14:11: name TypeError would shadow the built-in TypeError; choose another class name",
        "24:11: duplicate name Twice (also pool.yaml:19); class names must be unique; rename one",
    ]


def test_a_duplicate_id_names_the_first(tmp_path: Path) -> None:
    """The second of two entries with one id is reported at its id, naming the first's line."""
    assert findings_of(tmp_path, entry(A, "First"), entry(A, "Second", message="b {thing}")) == [
        f"8:9: duplicate id {A} (also pool.yaml:3); "
        "ids are never reused: give this entry a new id with errcat new"
    ]


def test_an_exception_that_is_no_class_name(tmp_path: Path) -> None:
    """An exception that is neither a built-in nor a qualified name is reported at its key."""
    assert findings_of(tmp_path, entry(A, "First", exception="builtins.ValueError")) == [
        "5:16: write the built-in as ValueError; "
        "write a built-in's name or another class's qualified name"
    ]


def test_one_entry_per_exception_and_message(tmp_path: Path) -> None:
    """Two entries with the same exception and message: the second names the first's id; the
    same message with another exception is a different entry."""
    assert findings_of(
        tmp_path,
        entry(A, "First"),
        entry(B, "Second"),
        entry(C, "Third", exception="OSError"),
    ) == [
        f"12:14: entry {B} has the exception and message of entry {A}; "
        "one entry per (exception, message): merge the two and keep one id"
    ]


def test_placeholders_that_would_shadow_attributes(tmp_path: Path) -> None:
    """A typed class's placeholder may not shadow its attributes (errcat's, the built-in's or a
    dunder); an entry catalogued in place has no class, so its placeholders shadow nothing."""
    assert findings_of(
        tmp_path,
        entry(A, "First", message="{__class__} and {id}"),
        entry(B, "Second", message="{errno.x}", exception="OSError"),
        entry(C, "Third", message="{__class__} {id} {__x}", exception="pkg.errors.Custom"),
        entry(D, "Fourth", message="{__x} {x__} {_}"),
    ) == [
        "7:14: placeholder {__class__} would shadow the exception's '__class__' attribute; "
        "rename the placeholder",
        "7:14: placeholder {id} would shadow the exception's 'id' attribute; "
        "rename the placeholder",
        "12:14: placeholder {errno.x} would shadow the exception's 'errno' attribute; "
        "rename the placeholder",
    ]


def test_related_ids(tmp_path: Path) -> None:
    """Every related id is checked at its own position: unknown ids and the entry itself."""
    assert findings_of(
        tmp_path,
        entry(A, "First", extra=f"    related: [{B}, {C}, {A}]\n"),
        entry(B, "Second", message="b {thing}"),
    ) == [
        f"8:33: related id {C} is not in the catalog; point it at an existing entry or remove it",
        f"8:51: entry {A} lists itself as related; remove it",
    ]


def test_replaced_by(tmp_path: Path) -> None:
    """replaced_by must name an existing entry, and only a retired entry may have one."""
    retired = "    retired_reason: gone\n"
    assert findings_of(
        tmp_path,
        entry(A, "First", status="retired", extra=f"{retired}    replaced_by: {C}\n"),
        entry(B, "Second", message="b {thing}", extra=f"    replaced_by: {A}\n"),
        entry(
            D,
            "Third",
            message="c {thing}",
            status="retired",
            extra=f"{retired}    replaced_by: {B}\n",
        ),
    ) == [
        f"9:18: replaced_by id {C} is not in the catalog; "
        "point it at the entry that supersedes this one",
        "15:18: replaced_by is set but the status is draft; set status: retired, or remove replaced_by",
    ]


def test_draft_warnings(tmp_path: Path) -> None:
    """One warning per draft entry, at the entry, in the drafts stage; none for others."""
    findings_of(
        tmp_path,
        entry(A, "First"),
        entry(B, "Second", message="b {thing}", status="retired", extra="    retired_reason: x\n"),
    )
    catalog, _ = checked_catalog(tmp_path)
    (warning,) = draft_warnings(catalog)
    assert warning.format(tmp_path) == (
        f"pool.yaml:3:5: warning: entry {A} (First) is a draft; "
        "write its prose and set status: active"
    )
    assert (warning.severity, warning.stage) == (Severity.WARNING, "drafts")


def test_a_placeholder_that_is_no_identifier(tmp_path: Path) -> None:
    """A placeholder that is not an identifier is reported at the message with the rule."""
    assert findings_of(tmp_path, entry(A, "First", message="x {0} y")) == [
        "7:14: placeholder {0} in 'x {0} y' must be an identifier, optionally with attribute "
        "access such as {t.device}; write placeholders as {name} or {name.attr}"
    ]


def refuse_to_read(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Make reading the catalog's files fail from now on; return the folders it was asked for."""
    asked: list[Path] = []

    def refuse(folder: Path, *_known: object) -> object:
        asked.append(folder)
        raise AssertionError(f"{folder} read again instead of served from the cache")

    monkeypatch.setattr(catalog.entries.validate, "read_catalog", refuse)
    monkeypatch.setattr(
        catalog.entries.validate, "reread_catalog", refuse
    )  # reusing unchanged files
    return asked


def test_a_cached_catalog_is_served_without_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a cache folder, an unchanged catalog (with its findings) comes from the cache, under
    the key computed from the folder or the one the caller gives; without one nothing is kept."""
    folder, cache = tmp_path / "knowledge", tmp_path / "cache"
    folder.mkdir()
    expected = findings_of(folder, entry(A, "First"), entry(A, "Second", message="b {thing}"))
    keyed = checked_catalog(folder, cache, key="caller's key")
    assert [f.format(folder).removeprefix("pool.yaml:") for f in keyed[1]] == expected
    asked = refuse_to_read(monkeypatch)
    assert checked_catalog(folder, cache, key="caller's key") == keyed
    with pytest.raises(AssertionError):
        checked_catalog(folder, cache)  # the cache holds the caller's key, not the folder's
    with pytest.raises(AssertionError):
        checked_catalog(folder, key="caller's key")  # no cache folder: a key changes nothing
    assert asked == [folder, folder]
    monkeypatch.undo()
    first = checked_catalog(folder, cache)
    assert first == keyed
    assert not (folder / CACHE_FILE).exists() and list(cache.iterdir()) == [cache / CACHE_FILE]
    refuse_to_read(monkeypatch)
    assert checked_catalog(folder, cache) == first


def test_load_valid_catalog_uses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`load_valid_catalog` passes its cache folder and key on."""
    folder, cache = tmp_path / "knowledge", tmp_path / "cache"
    folder.mkdir()
    findings_of(folder, entry(A, "First"))
    loaded = load_valid_catalog(folder, cache_dir=cache)
    keyed = load_valid_catalog(folder, cache_dir=cache, key="k")
    refuse_to_read(monkeypatch)
    assert load_valid_catalog(folder, cache_dir=cache, key="k") == keyed == loaded
    with pytest.raises(AssertionError):
        load_valid_catalog(folder, cache_dir=cache)  # the cache holds key "k"
