"""The sites `extractor.printed` reread, kept between scans of files that have not changed.

Reading sites through factories and composing classes needs the whole package's call graph and
parses again the files those sites go through: about 17 s on all of torch 2.13.0 on two
cores (its 1,300 helper calls included), which every `errcat check` would pay even when
nothing changed, against under a second for the warm scan itself. What it
produces depends only on the package's files and the extractor's rules, so it is stored under
a key made of both: the extractor's fingerprint (the scan cache's) and every scanned file's
path, size and modification time. A file that changes, appears or goes changes the key, and
the sites are read afresh.

Only what the reading changed is stored: for each changed site, its position in the report and
the fields that differ, and each site it added (a raise helper's call, after its file's raises)
whole, so a hit is the scan's own report with those fields replaced and those sites appended. A hit
imports neither `extractor.printed` nor libcst, as a warm scan does not.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from extractor.cache import Cache, condition_from
from extractor.model import Documented, FileResult, RaiseSite, ScanReport, SourceContext

CACHE_PREFIX = "printed-"
_CHANGEABLE = tuple(field.name for field in dataclasses.fields(RaiseSite))
_PLAIN = (str, int, bool, type(None))
"""Values a changed field may hold to be stored (marshal-friendly, rebuilt as they are)."""

Reader = Callable[[ScanReport], ScanReport]


def read_printed_cached(
    report: ScanReport, *, cwd: Path, cache_dir: Path | None, jobs: int | None = None
) -> ScanReport:
    """`extractor.printed.read_printed`, from the cache in `cache_dir` when the package's files
    are as they were (always afresh without a cache folder)."""

    def read(fresh: ScanReport) -> ScanReport:
        from extractor.printed import read_printed

        return read_printed(fresh, cwd=cwd, cache_dir=cache_dir, jobs=jobs)

    if cache_dir is None:
        return read(report)
    return cached_reading(report, cwd, cache_dir, read)


def cached_reading(report: ScanReport, cwd: Path, cache_dir: Path, read: Reader) -> ScanReport:
    """`read(report)`, or what it gave for the same files before."""
    cache = Cache(cache_dir, prefix=CACHE_PREFIX)
    key = _key(report, cwd, cache.rules)
    if key is not None:
        changes = cache.get_record(key)
        if changes is not None:
            replayed = _replay(report, changes)
            if replayed is not None:
                return replayed
    result = read(report)
    if key is not None:
        changes = _changes(report, result)
        if changes is not None:
            cache.put_record(key, changes)
    return result


def _key(report: ScanReport, cwd: Path, rules: str) -> str | None:
    digest = hashlib.blake2b(rules.encode(), digest_size=20)
    digest.update(os.fsencode(os.path.abspath(cwd)) + b"\0")
    for result in report.results:
        try:
            stat = os.stat(cwd / result.path)
        except OSError:
            return None  # a file the scan read and that is gone now: nothing to key on
        digest.update(f"{result.path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _plain(value: object) -> bool:
    if isinstance(value, tuple):
        return all(_plain(item) for item in value)
    return isinstance(value, _PLAIN)


def _encoded(site: RaiseSite) -> tuple[Any, ...]:
    """Every field of an added site as plain data, its nested records as tuples."""
    values: list[Any] = []
    for name in _CHANGEABLE:
        value = getattr(site, name)
        if name == "context":
            value = None if value is None else dataclasses.astuple(value)
        elif name in ("conditions", "documented"):
            value = tuple(dataclasses.astuple(item) for item in value)
        values.append(value)
    return tuple(values)


def _decoded(values: Any) -> RaiseSite:
    fields = dict(zip(_CHANGEABLE, values, strict=True))
    if fields["context"] is not None:
        fields["context"] = SourceContext(*fields["context"])
    fields["conditions"] = tuple(condition_from(*record) for record in fields["conditions"])
    fields["documented"] = tuple(Documented(*item) for item in fields["documented"])
    return RaiseSite(**fields)


def _changes(before: ScanReport, after: ScanReport) -> tuple[Any, ...] | None:
    """(result index, site index, ((field, value), ...)) for each site `after` changed, and
    (result index, None, every field) for each site it added after a file's raises; None when
    the reports do not line up or a value is not plain data (then no cache)."""
    if len(before.results) != len(after.results):
        return None
    found: list[tuple[int, int | None, tuple[Any, ...]]] = []
    for r, (old, new) in enumerate(zip(before.results, after.results, strict=True)):
        if old is new:
            continue
        if old.path != new.path or len(old.sites) > len(new.sites):
            return None
        kept = new.sites[: len(old.sites)]
        for s, (site, read) in enumerate(zip(old.sites, kept, strict=True)):
            if site is read:
                continue
            fields = tuple(
                (name, getattr(read, name))
                for name in _CHANGEABLE
                if getattr(read, name) != getattr(site, name)
            )
            if not all(_plain(value) for _name, value in fields):
                return None
            found.append((r, s, fields))
        for added in new.sites[len(old.sites) :]:
            encoded = _encoded(added)
            if not added.call or not _plain(encoded):
                return None
            found.append((r, None, encoded))
    return tuple(found)


def _replay(report: ScanReport, changes: Any) -> ScanReport | None:
    """The report with stored `changes` applied; None when they do not fit it."""
    try:
        results: list[FileResult] = list(report.results)
        sites: dict[int, list[RaiseSite]] = {}
        for r, s, fields in changes:
            row = sites.setdefault(r, list(results[r].sites))
            if s is None:
                row.append(_decoded(fields))
            else:
                row[s] = dataclasses.replace(row[s], **{name: value for name, value in fields})
        for r, row in sites.items():
            results[r] = dataclasses.replace(results[r], sites=tuple(row))
    except (TypeError, ValueError, IndexError):
        return None
    if not sites:
        return report
    return dataclasses.replace(report, results=tuple(results))
