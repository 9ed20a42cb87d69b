"""The catalog's records: entries as authored in YAML, and the catalog they form.

Everything here is a frozen value; loading (catalog/entries/loader.py) is the only way to build one from
files, so the rest of the pipeline never sees half-validated data.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Status(StrEnum):
    """Where an entry stands in its life."""

    DRAFT = "draft"
    """Scaffolded and raised, but its prose is not written yet; `errcat check` warns."""
    ACTIVE = "active"
    """Fully authored: meaning, solutions, example, trigger and situations."""
    RETIRED = "retired"
    """No longer raised; the page stays, with the reason and a successor where there is one."""


@dataclass(frozen=True)
class Position:
    """A place in a catalog file, for findings people read."""

    path: Path
    """The YAML file."""
    line: int
    """1-based line."""
    column: int
    """1-based column."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Example:
    """A minimal program that raises the entry (`before`) and its fix (`after`)."""

    before: str
    """Python source that raises exactly this entry."""
    after: str
    """The same program, fixed: it must not raise this entry."""
    requires: tuple[str, ...] = ()
    """Hardware the example needs to run (`cuda`, `mps`, `sm90`); empty for any CPU."""


@dataclass(frozen=True)
class Entry:
    """One catalogued error: a message template and the knowledge around it."""

    id: str
    """16 lowercase hex digits, stored once and never recomputed."""
    name: str
    """Class name of the generated typed exception (CapWords)."""
    exception: str
    """A built-in's name (`ValueError`) or another class's qualified name
    (`packaging.version.InvalidVersion`); see catalog/core/exceptions.py."""
    message: str
    """`str.format` template; root placeholders are the exception's keyword-only parameters."""
    status: Status
    module: str
    """Dotted module whose raise sites the entry documents, e.g. `runtime.tensor_bridge`."""
    position: Position
    """Where the entry starts in its YAML file."""
    meaning: str | None = None
    solutions: tuple[str, ...] = ()
    example: Example | None = None
    trigger: str | None = None
    situations: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    """Ids of entries a reader of this one should also know."""
    retired_reason: str | None = None
    replaced_by: str | None = None
    """Id of the entry that supersedes a retired one."""
    since: str | None = None
    """Version of the package in which the error first appeared."""
    field_positions: Mapping[str, Position] = field(default_factory=dict, compare=False)
    """Position of each authored key's value, for findings about one field."""

    @property
    def headline(self) -> str:
        """What titles and lists show: the message, or what stands for an empty one."""
        return self.message or f"{self.exception.rpartition('.')[2]} without a message"

    def where(self, key: str) -> Position:
        """The position of `key`'s value, or of the entry when the key is absent."""
        return self.field_positions.get(key, self.position)


@dataclass(frozen=True)
class CatalogFile:
    """One YAML file: the entries of one module."""

    path: Path
    module: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Catalog:
    """Every entry of every file, in file order then entry order."""

    files: tuple[CatalogFile, ...]

    def __iter__(self) -> Iterator[Entry]:
        for catalog_file in self.files:
            yield from catalog_file.entries

    def __len__(self) -> int:
        return sum(len(f.entries) for f in self.files)

    def by_id(self) -> dict[str, Entry]:
        """Entries keyed by id (the first of duplicates wins; the checker reports the rest)."""
        table: dict[str, Entry] = {}
        for entry in self:
            table.setdefault(entry.id, entry)
        return table

    def by_name(self) -> dict[str, Entry]:
        """Entries keyed by class name."""
        table: dict[str, Entry] = {}
        for entry in self:
            table.setdefault(entry.name, entry)
        return table
