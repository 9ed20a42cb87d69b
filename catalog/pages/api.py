"""The JSON API: one file per entry, an index, and the committed schema of an entry file.

Keys and their order follow CONTRACTS.md ("Site and API"); prose is stored as authored (Markdown
source), so programs get the text itself and decide how to show it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from catalog.core import workers
from catalog.core.model import Entry
from catalog.pages.deploy import site_files
from catalog.pages.knowledge import KnowledgeItem
from catalog.pages.plaintext import code_span
from catalog.pages.repository import Repository
from catalog.pages.sources import Source, _repository_path
from extractor.calls import NOT_FOLLOWED, Callers, CallGraph, KnownCallers
from extractor.model import Condition, ScanReport

SCHEMA_VERSION = 1
"""Bumped when an entry file changes in a way old readers would misread."""
ERRORS_FOLDER = "api/errors"
INDEX_FILE = "api/errors/index.json"
SCHEMA_FILE = "api/schema.json"


MAX_CALLERS = 50
"""Public callers an entry file lists per source (`count` says how many there are)."""
PAGE_CALLERS = 10
"""Public callers a page lists per source."""


@dataclass(frozen=True)
class DerivedSource(Source):
    """A source with what errcat read from the code around it, for pages and entry files.

    Nothing here is authored: the conditions and the signature come from the raise site's
    record, the callers from the package's call graph (see `extractor/calls.py`). Pages take
    the phrases below (Markdown whose code is in code spans) through the `prose` filter.
    """

    signature: str | None = None
    """The enclosing function's decorators and header as written; None outside functions."""
    conditions: tuple[Condition, ...] = ()
    """What leads to the raise, innermost first."""
    callers: Callers | None = None
    """Public functions reaching the enclosing function; paths relative to the repository."""
    caller_urls: tuple[str | None, ...] = ()
    """Each caller's line in the repository, pinned like `url`; None without a link."""
    qualified_name: str | None = None
    """The class the site raises, resolved through its imports (`builtins.ValueError`,
    `runtime.errors.X`); the page header names the generated class only where it is raised."""
    documented: tuple[Any, ...] = ()
    """What the enclosing function's docstring says about raising it (`extractor.model.Documented`:
    `text`, `line`, `function`); the page and `knowledge` show it, `sources[]` does not."""

    def as_dict(self) -> dict[str, object]:
        """The API's `sources[]` item: the contract's keys, then the derived ones."""
        document = super().as_dict()
        document["signature"] = self.signature
        document["conditions"] = [
            {
                "kind": condition.kind,
                "code": condition.code,
                "line": condition.line,
                "subject": condition.subject,
            }
            for condition in self.conditions
        ]
        callers = self.callers
        document["callers"] = (
            None
            if callers is None
            else {
                "function": callers.function,
                "public": callers.public,
                "callers": [
                    {
                        "name": caller.name,
                        "path": caller.path,
                        "line": caller.line,
                        "depth": caller.depth,
                        "url": url,
                        "returned": caller.returned,
                    }
                    for caller, url in zip(
                        callers.callers[:MAX_CALLERS], self.caller_urls, strict=False
                    )
                ],
                "count": len(callers.callers),
                "depth": callers.depth,
                "bounded": callers.bounded,
                "not_followed": NOT_FOLLOWED,
            }
        )
        return document

    @property
    def raised_when(self) -> tuple[str, ...]:
        """The conditions as Markdown phrases, innermost first."""
        return tuple(_phrase(condition) for condition in self.conditions)

    @property
    def unconditional(self) -> str:
        """Markdown for a raise that nothing encloses."""
        if self.function is None:
            return "unconditionally, when the module is imported."
        if self.signature is None:
            return f"unconditionally, when the body of class {code_span(self.function)} runs."
        return f"unconditionally, when {code_span(self.function)} runs."

    @property
    def reached_from(self) -> tuple[str, ...]:
        """The first public callers as Markdown, each with its distance and a source link."""
        if self.callers is None:
            return ()
        phrases = []
        shown = self.callers.callers[:PAGE_CALLERS]
        for caller, url in zip(shown, self.caller_urls, strict=False):
            distance = "calls it directly" if caller.depth == 1 else f"{caller.depth} calls away"
            if caller.returned:
                # `vmap(f)` raises nothing itself: what it returns does, when called.
                distance = (
                    "through the function it returns"
                    if caller.depth == 1
                    else f"{caller.depth} calls away, through the function it returns"
                )
            link = f", [source]({url})" if url else ""
            phrases.append(f"{code_span(caller.name)} ({distance}{link})")
        return tuple(phrases)

    @property
    def not_followed(self) -> str:
        """What the call graph cannot see, said wherever callers are shown."""
        return NOT_FOLLOWED

    @property
    def more_callers(self) -> int:
        """Public callers beyond those `reached_from` shows."""
        return 0 if self.callers is None else max(0, len(self.callers.callers) - PAGE_CALLERS)


def _phrase(condition: Condition) -> str:
    code = condition.code or ""
    kind = condition.kind
    at = f" (line {condition.line})"
    if kind == "guard":
        return f"{code_span(code)} (line {condition.line}: an earlier check that exits otherwise)"
    if kind == "for":
        return f"in a loop over {code_span(code)}{at}"
    if kind == "while":
        return f"in a loop while {code_span(code)}{at}"
    if kind == "for_else":
        return f"after the loop over {code_span(code)} ends without `break`{at}"
    if kind == "while_else":
        return f"after the loop while {code_span(code)} ends without `break`{at}"
    if kind in ("except", "except_group"):
        keyword = "except" if kind == "except" else "except*"
        if condition.code is None:
            return f"inside a bare `{keyword}:`{at}"
        return f"inside {code_span(f'{keyword} {code}')}{at}"
    if kind == "try_else":
        return f"in the `else` block of the `try` at line {condition.line}: its body raised nothing"
    if kind == "finally":
        return f"in the `finally` block of the `try` at line {condition.line}"
    if kind == "case":
        match = code_span(f"match {condition.subject}")
        return f"in {match}, under {code_span(f'case {code}')}{at}"
    return f"{code_span(code)}{at}"


def derived_sources(
    sources: Mapping[str, tuple[Source, ...]],
    report: ScanReport,
    graph: CallGraph | KnownCallers | None,
    repository: Repository,
    root: Path,
) -> dict[str, tuple[Source, ...]]:
    """`sources` with what was read from the code at each: the site's record and its callers.

    `root` is the folder the report's (and so the graph's) paths are relative to.
    """
    sites = {
        # Keyed by the path `sources_by_entry` gave the same site, so the pairing cannot drift.
        (_repository_path(repository, site.path), site.line, site.column): site
        for site in report.sites
    }
    derived: dict[str, tuple[Source, ...]] = {}
    for entry_id, found in sources.items():
        items: list[Source] = []
        for source in found:
            site = sites.get((source.path, source.line, source.column))
            if site is None:
                items.append(source)
                continue
            callers = None
            if graph is not None and site.function is not None and site.signature is not None:
                callers = graph.callers(site.path, site.function)
            urls: tuple[str | None, ...] = ()
            if callers is not None:
                moved = tuple(
                    replace(caller, path=_repository_path(repository, str(root / caller.path)))
                    for caller in callers.callers
                )
                callers = replace(callers, callers=moved)
                urls = tuple(
                    repository.blob_url(caller.path, caller.line) for caller in moved[:MAX_CALLERS]
                )
            items.append(
                DerivedSource(
                    **{field.name: getattr(source, field.name) for field in fields(Source)},
                    signature=site.signature,
                    conditions=site.conditions,
                    callers=callers,
                    caller_urls=urls,
                    qualified_name=site.qualified_name,
                    documented=tuple(getattr(site, "documented", ())),
                )
            )
        derived[entry_id] = tuple(items)
    return derived


def page_url(site_url: str, entry_id: str) -> str:
    """The absolute URL of an entry's page."""
    return f"{site_url}errors/{entry_id}/"


def entry_document(
    entry: Entry,
    *,
    sources: Sequence[Source],
    related: Sequence[Entry],
    verified: Sequence[Mapping[str, str]],
    repository: Repository,
    site_url: str,
    knowledge: Sequence[KnowledgeItem] = (),
) -> dict[str, Any]:
    """The contents of `api/errors/<id>.json`."""
    example = entry.example
    return {
        "schema_version": SCHEMA_VERSION,
        "id": entry.id,
        "status": entry.status.value,
        "name": entry.name,
        "exception": entry.exception,
        "message": entry.message,
        "meaning": entry.meaning,
        "solutions": list(entry.solutions),
        "example": None
        if example is None
        else {
            "before": example.before,
            "after": example.after,
            "requires": list(example.requires),
            "verified": [dict(run) for run in verified],
        },
        "trigger": entry.trigger,
        "situations": list(entry.situations),
        "related": [{"id": other.id, "message": other.message} for other in related],
        "sources": [source.as_dict() for source in sources],
        "url": page_url(site_url, entry.id),
        "repository": repository.as_dict(),
        "since": entry.since,
        "retired_reason": entry.retired_reason,
        "replaced_by": entry.replaced_by,
        "knowledge": [item.as_dict() for item in knowledge],
    }


def index_row(entry: Entry, site_url: str) -> dict[str, Any]:
    """One row of `api/errors/index.json`."""
    return {
        "id": entry.id,
        "status": entry.status.value,
        "exception": entry.exception,
        "message": entry.message,
        "module": entry.module,
        "url": page_url(site_url, entry.id),
    }


def dumps(document: object) -> str:
    """How every API file is written: stable, readable, UTF-8."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


LINKS_FILE = "api-links.json"
"""In the project's cache folder: what the API files of the last few versions hold."""
_LINKED_VERSIONS = 3
"""Versions `LINKS_FILE` describes, newest first: the one `build/site` points at, and a few
more for builds alternating with `--out` elsewhere or failing after the API was written."""
_PROBE: dict[str, object] = {"a": [1, -2.5, True, None, '\u00e9\n"', {"b": []}], "c": {}}


def write_api(
    site_dir: Path,
    documents: Mapping[str, object],
    *,
    previous: Path | None = None,
    cache: Path | None = None,
    published_as: Path | None = None,
) -> None:
    """Write `documents` (site-relative path → JSON value) under `site_dir`, with the OpenAPI
    description and the files static hosts and nginx read (`catalog.pages.deploy`). A `str`
    value is JSON text already, written as it is.

    An entry file per error: at whole-torch size formatting and writing them is seconds of one
    core, so with enough of them forked workers share it (`catalog.core.workers`), and with
    `cache` (the project's `.errcat-cache/`) and `previous` (the version `site_dir` replaces,
    or a link to it) a file that version holds as this build would write it is hard-linked
    from there instead: after a one-entry edit, one entry file and what lists it are written.

    How a file is known to be unchanged without formatting it: `cache` holds, for each recent
    version, every API file's `_key` (a digest of its document, several times cheaper than
    formatting it) with its inode, size and modification time as written. A file whose key is
    the same, and which is still that very file (an edit in place changes its time), is
    linked. Files are only ever created, never opened for writing where one exists (a link
    shares the previous version's inode: writing through it would change that version too).
    Linking only saves time: where it fails (another file system, no hard links), the file is
    written.

    `published_as`: the folder the files will be moved into, whole and on the same file system
    (renames keep inodes), when `site_dir` is only where they are written first: the record
    names that folder."""
    deployment = site_files(documents)
    for folder in sorted({str(Path(path).parent) for path in [*documents, *deployment]}):
        (site_dir / folder).mkdir(parents=True, exist_ok=True)
    versions = _read_links(cache) if cache is not None else []
    linkable = _previous_files(versions, previous) if previous is not None else None
    keyed = cache is not None
    items = [(path, doc, _key(doc) if keyed else None) for path, doc in documents.items()]
    # Linked here, not in the workers: a rebuild links nearly every file, for less than
    # starting them costs; they share what is left to format and write.
    linked, rest = _link_documents(site_dir, linkable, items)
    share = functools.partial(_write_documents, site_dir)
    written = workers.forked_map(share, rest)
    if written is None:
        written = share(rest)
    # After the documents: a deployment file wins over a document of the same path.
    extra: list[_Item] = [
        (p, text, _key(text) if keyed else None) for p, text in deployment.items()
    ]
    linked_extra, rest_extra = _link_documents(site_dir, linkable, extra)
    files = {**linked, **_records(rest, written), **linked_extra}
    files.update(_records(rest_extra, _write_documents(site_dir, rest_extra)))
    if cache is not None:
        _write_links(cache, published_as or site_dir, files, versions)


_Item = tuple[str, object, str | None]
"""An API file to place: its site-relative path, its document and the document's `_key`."""


@dataclass(frozen=True)
class _Linkable:
    """The previous version's API files, as the build that wrote them recorded them."""

    folder: str
    device: int
    files: Mapping[str, list[Any]]
    """Site-relative path → `[key, size, mtime_ns, inode]`."""


def _format() -> str:
    """What turns a document into a file: a record made by another is not trusted, since the
    same document would give other bytes (`dumps` changed, another `json` module)."""
    identity = f"{sys.version}\0{pickle.HIGHEST_PROTOCOL}\0{dumps(_PROBE)}"
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


def _key(document: object) -> str | None:
    """A digest that is the same only for documents `dumps` writes the same bytes of.

    A pickle, not JSON: `pickle.dumps` runs in C at about three times the speed of even the
    compact `json.dumps`. The same pickle is the same value (types, key order, every string
    and number exactly), so the same JSON text; the converse may fail (a string the document
    holds twice is pickled once, then referred to), which only costs a write."""
    if isinstance(document, str):
        data = b"text\0" + document.encode("utf-8", "surrogatepass")
    else:
        try:
            data = b"pickle\0" + pickle.dumps(document, protocol=5)
        except Exception:  # not picklable: written every time (`dumps` may still take it)
            return None
    return hashlib.sha256(data).hexdigest()[:32]


def _read_links(cache: Path) -> list[dict[str, Any]]:
    try:
        record = json.loads((cache / LINKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(record, dict) or record.get("format") != _format():
        return []
    versions = record.get("versions")
    return [v for v in versions if isinstance(v, dict)] if isinstance(versions, list) else []


def _previous_files(versions: list[dict[str, Any]], previous: Path) -> _Linkable | None:
    try:
        found = os.stat(previous)  # through the link `build/site`
    except OSError:
        return None
    for version in versions:
        files = version.get("files")
        if version.get("folder") == [found.st_dev, found.st_ino] and isinstance(files, dict):
            return _Linkable(os.path.realpath(previous), found.st_dev, files)
    return None


def _write_links(
    cache: Path, site_dir: Path, files: dict[str, list[Any]], versions: list[dict[str, Any]]
) -> None:
    """Record what `site_dir`'s API files hold (identified by inode: it is renamed next)."""
    try:
        found = os.stat(site_dir)
        folder = [found.st_dev, found.st_ino]
        kept = [v for v in versions if v.get("folder") != folder][: _LINKED_VERSIONS - 1]
        record = {"format": _format(), "versions": [{"folder": folder, "files": files}, *kept]}
        cache.mkdir(parents=True, exist_ok=True)
        target = cache / LINKS_FILE
        temporary = target.with_name(f".{LINKS_FILE}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record, separators=(",", ":")), encoding="utf-8")
        os.replace(temporary, target)
    except OSError:
        pass  # the next build writes every file, as without a record


def _link_documents(
    site_dir: Path, linkable: _Linkable | None, items: list[_Item]
) -> tuple[dict[str, list[Any]], list[_Item]]:
    """Link each item's file that `linkable` holds: their records, and the items left."""
    if linkable is None:
        return {}, items
    linked: dict[str, list[Any]] = {}
    rest: list[_Item] = []
    for path, document, key in items:
        if key is not None and _link(linkable, path, key, site_dir / path):
            linked[path] = linkable.files[path]  # the same file: its record holds
        else:
            rest.append((path, document, key))
    return linked, rest


def _write_documents(site_dir: Path, items: list[_Item]) -> list[list[Any] | None]:
    """Write each item's file; return its record for `LINKS_FILE` (None if not keyed)."""
    placed: list[list[Any] | None] = []
    for path, document, key in items:
        target = site_dir / path
        _create(target, document if isinstance(document, str) else dumps(document))
        if key is None:
            placed.append(None)
            continue
        found = os.lstat(target)
        placed.append([key, found.st_size, found.st_mtime_ns, found.st_ino])
    return placed


def _records(items: list[_Item], placed: list[list[Any] | None]) -> dict[str, list[Any]]:
    records = zip((path for path, _, _ in items), placed, strict=True)
    return {path: record for path, record in records if record is not None}


def _link(linkable: _Linkable, path: str, key: str, target: Path) -> bool:
    record = linkable.files.get(path)
    if not isinstance(record, list) or len(record) != 4 or record[0] != key:
        return False
    source = os.path.join(linkable.folder, path)
    try:
        found = os.lstat(source)
        if not stat.S_ISREG(found.st_mode) or found.st_dev != linkable.device:
            return False
        if [found.st_size, found.st_mtime_ns, found.st_ino] != record[1:]:
            return False  # changed (or replaced) since that build wrote it
        try:
            os.link(source, target)
        except FileExistsError:  # see `_create`
            os.unlink(target)
            os.link(source, target)
    except OSError:
        return False
    return True


def _create(target: Path, text: str) -> None:
    """Write `text` into a new file at `target`, never into one that is there already."""
    try:
        handle = open(target, "x", encoding="utf-8")  # noqa: SIM115  # closed below
    except FileExistsError:
        # What MkDocs wrote at this path, or the document a deployment file replaces: possibly a
        # link into the previous version, so it is replaced, not written through.
        os.unlink(target)
        handle = open(target, "x", encoding="utf-8")  # noqa: SIM115
    with handle:
        handle.write(text)
