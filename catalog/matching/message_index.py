"""The compiled index `errcat explain` answers from, cached in the project's `.errcat-cache/`.

Loading and validating a large YAML catalog takes seconds; one query needs a few entries. The
index holds what explain prints and the matcher's precomputed table (anchors, literal pieces),
in one file, `explain-index.marshal`, that a later call reads in milliseconds: the line
`errcat-explain-index`, a line with the key, a line with the payload's CRC-32 (8 hex digits),
then the payload, marshalled.

The key hashes every catalog file (names and bytes, sorted by name), `mkdocs.yml` (the page
links use its `site_url`), errcat's version, the index format, the Python version and the
sources of the `catalog` package (an editable install changes code without changing its
version). Any difference is a miss: the catalog is loaded and validated as without a cache (a
catalog with problems fails the same way and writes nothing), then the index is rebuilt and
replaced atomically (temporary file, then `os.replace`). A file that is unreadable, truncated
or damaged is a miss too. The checksum is verified before the payload is decoded, so `marshal`
only ever reads bytes that errcat wrote whole.

A cached call imports neither yaml, jsonschema, libcst nor jinja2.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.core.cachefile import code_digest, read_payload, write_payload
from catalog.matching.messages import MatcherTable, MessageMatcher, catalog_rows

if TYPE_CHECKING:
    from catalog.core.config import Config
    from catalog.core.model import Catalog

INDEX_FORMAT = 3
"""Bump when the payload's layout or meaning changes."""
INDEX_FILE = "explain-index.marshal"
"""The index's file name inside the cache folder."""
_MAGIC = b"errcat-explain-index\n"


@dataclass(frozen=True)
class ExplainEntry:
    """What `errcat explain` shows of an entry."""

    id: str
    name: str
    exception: str
    message: str
    status: str
    """`draft`, `active` or `retired`."""
    module: str
    meaning: str | None = None
    solutions: tuple[str, ...] = ()
    trigger: str | None = None
    situations: tuple[str, ...] = ()
    retired_reason: str | None = None
    replaced_by: str | None = None

    def prose(self) -> tuple[Any, ...]:
        """The fields the matcher's row lacks, as built-in values, in field order."""
        return (
            self.meaning,
            self.solutions,
            self.trigger,
            self.situations,
            self.retired_reason,
            self.replaced_by,
        )


@dataclass(frozen=True)
class ExplainIndex:
    """The catalog as explain needs it: the matcher's table, the site URL and each entry."""

    site_url: str
    table: MatcherTable
    details: dict[str, bytes]
    """Each entry's `ExplainEntry.prose()` by its id, marshalled on its own: a query decodes
    only the entries it shows, however much prose the catalog holds. Keyed by id rather than
    parallel to `table.templates`, which holds two templates of a multi-line message."""

    def matcher(self) -> MessageMatcher:
        """A matcher over the index (it decodes templates as queries need them)."""
        return MessageMatcher(self.table)

    def entry(self, entry_id: str) -> ExplainEntry:
        """The entry of `entry_id`; KeyError when the index has none."""
        row, _spec = self.table.template(self.table.by_id[entry_id])
        entry_id, message, exception, name, status, module, _url = row
        prose = marshal.loads(self.details[entry_id])
        return ExplainEntry(entry_id, name, exception, message, status, module, *prose)

    def to_bytes(self) -> bytes:
        """The payload as stored (see `from_bytes`)."""
        return marshal.dumps((INDEX_FORMAT, self.site_url, self.table.to_data(), self.details))

    @classmethod
    def from_bytes(cls, payload: bytes) -> ExplainIndex:
        """The index of a stored payload; ValueError when it is not one of this format."""
        try:
            data = marshal.loads(payload)
        except (EOFError, TypeError) as exc:
            raise ValueError(f"not a marshalled index: {exc}") from None
        if not isinstance(data, tuple) or len(data) != 4 or data[0] != INDEX_FORMAT:
            raise ValueError("not an explain index of this format")
        _format, site_url, table, details = data
        if not isinstance(site_url, str) or not isinstance(details, dict):
            raise ValueError("not an explain index of this format")
        matcher_table = MatcherTable.from_data(table)
        if len(details) != len(matcher_table.by_id):
            raise ValueError("the index's entries and their prose differ in number")
        return cls(site_url=site_url, table=matcher_table, details=details)


def build_index(catalog: Catalog, site_url: str, generate: bool = True) -> ExplainIndex:
    """The index of a loaded catalog; page links start with `site_url`; `generate=False`:
    no entry has a generated class (docs-only adoption)."""
    # One object per distinct blob: marshal then stores each repeat (every draft's empty
    # prose, for one) as a reference.
    distinct: dict[bytes, bytes] = {}
    details: dict[str, bytes] = {}
    for entry in catalog:
        blob = marshal.dumps(
            ExplainEntry(
                id=entry.id,
                name=entry.name,
                exception=entry.exception,
                message=entry.message,
                status=entry.status.value,
                module=entry.module,
                meaning=entry.meaning,
                solutions=entry.solutions,
                trigger=entry.trigger,
                situations=entry.situations,
                retired_reason=entry.retired_reason,
                replaced_by=entry.replaced_by,
            ).prose()
        )
        details[entry.id] = distinct.setdefault(blob, blob)
    return ExplainIndex(
        site_url=site_url,
        table=MatcherTable.build(catalog_rows(catalog, site_url, generate)),
        details=details,
    )


def _catalog_files(folder: Path) -> list[Path]:
    # The files `catalog.entries.loader.catalog_files` loads, found without importing the loader
    # (it imports yaml).
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    paths = sorted(folder / name for name in names if name.endswith((".yaml", ".yml")))
    return [path for path in paths if path.is_file()]


def catalog_key(config: Config) -> str | None:
    """The cache key of the project's catalog as it is now; None when a file cannot be read
    (the loader then reports it)."""
    digest = hashlib.sha256()
    digest.update(f"{INDEX_FORMAT}\0{sys.version}\0".encode())
    digest.update(code_digest())
    try:
        digest.update(os.fsencode(config.catalog) + b"\0")
        for path in _catalog_files(config.catalog):
            data = path.read_bytes()
            digest.update(f"{path.name}\0{len(data)}\0".encode() + data)
        mkdocs = config.root / "mkdocs.yml"
        digest.update(b"\0mkdocs\0" + (mkdocs.read_bytes() if mkdocs.is_file() else b"-"))
        # `[tool.errcat] site_url` stands in for mkdocs.yml's in the links the index holds.
        digest.update(b"\0tool-site-url\0" + (config.site_url or "-").encode())
        digest.update(b"\0generate\0" + (b"1" if config.generate else b"0"))
    except OSError:
        return None
    return digest.hexdigest()


def index_path(config: Config) -> Path:
    """Where the project's index is cached."""
    from catalog.core.project import CACHE_FOLDER

    return config.root / CACHE_FOLDER / INDEX_FILE


def read_cached(path: Path, key: str) -> ExplainIndex | None:
    """The index stored at `path` for `key`, or None when there is none, it is for another
    key, or it is damaged."""
    payload = read_payload(path, _MAGIC, key)
    if payload is None:
        return None
    try:
        return ExplainIndex.from_bytes(payload)
    except ValueError:
        return None


def write_cached(path: Path, key: str, index: ExplainIndex) -> None:
    """Store `index` for `key` at `path` atomically; a cache that cannot be written is skipped."""
    write_payload(path, _MAGIC, key, index.to_bytes())


def load_index(config: Config, *, cache: bool = True) -> ExplainIndex:
    """The project's index: from the cache when it is current, else built and stored.

    Raises CatalogInvalid, exactly as `valid_project_catalog`, when the catalog has problems, and
    ConfigError when `mkdocs.yml` cannot be read.
    """
    key = catalog_key(config) if cache else None
    path = index_path(config)
    if key is not None:
        cached = read_cached(path, key)
        if cached is not None:
            return cached
    from catalog.core.config import read_site_settings
    from catalog.entries.validate import valid_project_catalog

    # The key was taken before reading: a file edited in between gives a key that no later
    # call computes, so the worst outcome is one more rebuild, never a stale answer.
    catalog = valid_project_catalog(config)
    site_url = read_site_settings(config.root, config.site_url).site_url
    index = build_index(catalog, site_url, config.generate)
    if key is not None:
        write_cached(path, key, index)
    return index
