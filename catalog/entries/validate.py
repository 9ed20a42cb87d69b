"""Checks across entries that a schema cannot express: unique ids and names, well-formed
placeholders, and references that point at existing entries.

`checked_catalog` loads and validates a catalog folder, from errcat's cache when the folder's
files are byte for byte those of an earlier run: `check` and `stats` then skip the YAML parsing
and schema checks that take seconds on a large catalog. After an edit, only the edited files are
parsed again.

A project's catalog is loaded one way, by `checked_project_catalog` (the catalog with its
findings: `errcat check`) or `valid_project_catalog` (the catalog, or CatalogInvalid: every
other command, the build and the MkDocs plugin): both take the configured folder and the
project's cache folder, which `--no-cache` turns off (`catalog.core.project.caching`).
`load_valid_catalog` is the same for a bare folder, outside any project.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from catalog.core.config import Config
from catalog.core.exceptions import exception_problem, has_typed_class, reserved_parameters
from catalog.core.findings import CatalogInvalid, Finding, Severity
from catalog.core.model import Catalog, Entry, Position, Status
from catalog.core.placeholders import PlaceholderError, parse_placeholders
from catalog.core.project import cache_folder
from catalog.entries.loader import (
    FileDigests,
    StoredCatalog,
    catalog_key,
    read_cache,
    read_catalog,
    reread_catalog,
    tool_fingerprint,
    write_cache,
)

RESERVED_NAMES = frozenset({"CatalogError", "BY_ID", "DOCS_BASE_URL"})
"""Names the generated module defines itself."""

BUILTIN_NAMES = frozenset(dir(builtins))
"""A class named like a built-in would shadow it wherever `migrate` imports the class."""


def _not_loaded(entry_id: str, position: Position) -> str:
    return (
        f"{entry_id} is the entry at {position.path.name}:{position.line}, which did not load "
        f"(see the findings for {position.path.name})"
    )


def _place(entry: Entry, key: str) -> str:
    at = entry.where(key)
    return f"{at.path.name}:{at.line}"


def validate(catalog: Catalog, broken: Mapping[str, Position] | None = None) -> list[Finding]:
    """Cross-entry findings for a loaded catalog, in file order.

    `broken` are the entries the loader left out for their problems (see
    `catalog.entries.loader.CatalogLoad`): a reference to one of them is reported as following from
    those problems, not as an id missing from the catalog.
    """
    broken = broken or {}
    findings: list[Finding] = []
    # The first entry of each id and name, placed only when another repeats it: a whole-torch
    # catalog has 11,000 entries, and making three positions of each cost a third of the checks.
    first_id: dict[str, Entry] = {}
    names: dict[str, Entry] = {}
    messages: dict[tuple[str, str], str] = {}
    # What the checks ask of an exception depends on its name alone; 11,000 entries name a few
    # hundred (reserved_parameters lists the built-in's attributes each time).
    about: dict[str, tuple[str | None, frozenset[str], bool]] = {}
    by_id = catalog.by_id()
    for entry in catalog:
        if entry.id in first_id:
            findings.append(
                Finding.at(
                    entry.where("id"),
                    f"duplicate id {entry.id} (also {_place(first_id[entry.id], 'id')})",
                    "ids are never reused: give this entry a new id with errcat new",
                )
            )
        else:
            first_id[entry.id] = entry
        if entry.name in RESERVED_NAMES:
            findings.append(
                Finding.at(
                    entry.where("name"),
                    f"name {entry.name} is reserved for the generated base class",
                    "choose another class name",
                )
            )
        elif entry.name in BUILTIN_NAMES:
            findings.append(
                Finding.at(
                    entry.where("name"),
                    f"name {entry.name} would shadow the built-in {entry.name}",
                    "choose another class name",
                )
            )
        elif entry.name in names:
            findings.append(
                Finding.at(
                    entry.where("name"),
                    f"duplicate name {entry.name} (also {_place(names[entry.name], 'name')})",
                    "class names must be unique; rename one",
                )
            )
        else:
            names[entry.name] = entry
        known = about.get(entry.exception)
        if known is None:
            known = about[entry.exception] = (
                exception_problem(entry.exception),
                reserved_parameters(entry.exception),
                has_typed_class(entry.exception),
            )
        problem, reserved, typed = known
        if problem is not None:
            findings.append(
                Finding.at(
                    entry.where("exception"),
                    problem,
                    "write a built-in's name or another class's qualified name",
                )
            )
        key = (entry.exception, entry.message)
        if key in messages:
            findings.append(
                Finding.at(
                    entry.where("message"),
                    f"entry {entry.id} has the exception and message of entry {messages[key]}",
                    "one entry per (exception, message): merge the two and keep one id",
                )
            )
        else:
            messages[key] = entry.id
        try:
            fields = parse_placeholders(entry.message)
        except PlaceholderError as exc:
            findings.append(
                Finding.at(
                    entry.where("message"),
                    str(exc),
                    "write placeholders as {name} or {name.attr}",
                )
            )
        else:
            for placeholder in fields:
                # `{__class__}` and the other dunders are attributes of every object: a
                # generated class setting one from a parameter breaks (`__class__` raises).
                root = placeholder.root
                dunder = typed and root.startswith("__") and root.endswith("__")
                if root in reserved or dunder:
                    findings.append(
                        Finding.at(
                            entry.where("message"),
                            f"placeholder {{{placeholder.field}}} would shadow the exception's "
                            f"'{placeholder.root}' attribute",
                            "rename the placeholder",
                        )
                    )
        for index, related in enumerate(entry.related):
            if related not in by_id and related in broken:
                findings.append(
                    Finding.at(
                        entry.where(f"related[{index}]"),
                        f"related id {_not_loaded(related, broken[related])}",
                        "fix that entry first",
                    )
                )
            elif related not in by_id:
                findings.append(
                    Finding.at(
                        entry.where(f"related[{index}]"),
                        f"related id {related} is not in the catalog",
                        "point it at an existing entry or remove it",
                    )
                )
            elif related == entry.id:
                findings.append(
                    Finding.at(
                        entry.where(f"related[{index}]"),
                        f"entry {entry.id} lists itself as related",
                        "remove it",
                    )
                )
        if entry.replaced_by is not None:
            at = entry.where("replaced_by")
            if entry.replaced_by not in by_id and entry.replaced_by in broken:
                findings.append(
                    Finding.at(
                        at,
                        f"replaced_by id {_not_loaded(entry.replaced_by, broken[entry.replaced_by])}",
                        "fix that entry first",
                    )
                )
            elif entry.replaced_by not in by_id:
                findings.append(
                    Finding.at(
                        at,
                        f"replaced_by id {entry.replaced_by} is not in the catalog",
                        "point it at the entry that supersedes this one",
                    )
                )
            elif entry.status is not Status.RETIRED:
                findings.append(
                    Finding.at(
                        at,
                        f"replaced_by is set but the status is {entry.status.value}",
                        "set status: retired, or remove replaced_by",
                    )
                )
    return findings


def draft_warnings(catalog: Catalog) -> list[Finding]:
    """One warning per draft entry: its prose is still to be written."""
    return [
        Finding.at(
            entry.position,
            f"entry {entry.id} ({entry.name}) is a draft",
            "write its prose and set status: active",
            severity=Severity.WARNING,
            stage="drafts",
        )
        for entry in catalog
        if entry.status is Status.DRAFT
    ]


CACHE_FILE = "catalog.marshal"
"""The checked catalog's file inside a cache folder."""


def checked_catalog(
    folder: Path, cache_dir: Path | None = None, *, key: str | None = None
) -> tuple[Catalog, list[Finding]]:
    """The catalog of `folder` with the loader's and the validator's findings.

    With `cache_dir`, the result is stored there and served again while every catalog file,
    errcat's sources and the Python running it are unchanged (see `catalog.entries.loader.catalog_key`;
    `key` is that key when the caller has computed it already). A catalog with findings is
    cached too: it fails the same way next time, quickly. When the catalog changed, only the
    files whose bytes are not in the cache are parsed again (see `reread_catalog`); the checks
    across entries run over the whole catalog.
    """
    if cache_dir is None:
        key = None
    elif key is None:
        key = catalog_key(folder)
    if cache_dir is None or key is None:
        loaded = read_catalog(folder)
        return loaded.catalog, loaded.findings + validate(loaded.catalog, loaded.broken)
    path = cache_dir / CACHE_FILE
    # Stored under errcat's fingerprint, not the catalog's key: another catalog's records are
    # what a changed catalog reuses.
    stored = StoredCatalog.from_data(read_cache(path, tool_fingerprint().hex()))
    if stored is not None and stored.key == key:
        served = stored.result()
        if served is not None:
            return served
    # The key was taken before reading: a file edited in between gives a key no later run
    # computes, so the worst outcome is one more load, never a stale answer.
    loaded, files, records = reread_catalog(folder, stored.records if stored is not None else {})
    checks = validate(loaded.catalog, loaded.broken)
    write_cache(
        path, tool_fingerprint().hex(), StoredCatalog.of(key, files, records, checks).data()
    )
    return loaded.catalog, loaded.findings + checks


def load_valid_catalog(
    folder: Path, *, cache_dir: Path | None = None, key: str | None = None
) -> Catalog:
    """Load and validate; raise CatalogInvalid with every error when anything is wrong.

    `cache_dir` serves the result from errcat's cache when the catalog is unchanged (see
    `checked_catalog`, and for `key`).
    """
    catalog, findings = checked_catalog(folder, cache_dir, key=key)
    if findings:
        raise CatalogInvalid(findings)
    return catalog


@dataclass(frozen=True)
class CheckedCatalog:
    """A project's catalog as loaded and validated, problems and all."""

    catalog: Catalog
    """The entries that loaded."""
    findings: list[Finding]
    """The loader's and the validator's findings; empty when the catalog is valid."""
    key: str | None
    """The catalog's `catalog_key`, under which what depends on it is cached (codegen's digests,
    check's outcomes); None when nothing is cached."""


def checked_project_catalog(config: Config, digests: FileDigests | None = None) -> CheckedCatalog:
    """The configured catalog with its findings, from the project's cache when unchanged.

    `digests` are the caller's when it digests other files of the project in the same run
    (check does, for the generated module) and then saves them itself; without, they are kept
    here.
    """
    cache = cache_folder(config)
    own = digests is None
    digests = FileDigests(cache) if digests is None else digests
    # No key without a cache: the key only ever names what a cache holds.
    key = catalog_key(config.catalog, digests) if cache is not None else None
    if own:
        digests.save()
    catalog, findings = checked_catalog(config.catalog, cache, key=key)
    return CheckedCatalog(catalog, findings, key)


def valid_project_catalog(config: Config) -> Catalog:
    """The configured catalog, from the project's cache when unchanged; CatalogInvalid with
    every finding when anything is wrong, so that nothing is made from an invalid catalog."""
    checked = checked_project_catalog(config)
    if checked.findings:
        raise CatalogInvalid(checked.findings)
    return checked.catalog
