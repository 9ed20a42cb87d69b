"""The scan cache: one small file per scanned content, under a folder named for the extractor.

An entry's key hashes the file's bytes and its module name (relative imports and names defined
in the module depend on it); the folder's name hashes the extractor's version, its own source
files, the Python version (which decides what `ast` accepts) and libcst's version. Any change to
the rules therefore looks in a fresh folder, and stale folders are removed when one is created.
Entries are sealed, written and kept in generation folders as `extractor.store` writes every
cache file: an entry that is damaged or cannot be read is a miss. The call graph's per-file summaries (`calls.py`) live beside the
scan results under the same fingerprint, in folders of their own prefix (`calls-`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import sys
from pathlib import Path
from typing import Any

from extractor import store
from extractor.imports import ModuleName
from extractor.model import (
    Condition,
    Documented,
    FileResult,
    RaiseSite,
    ScanFailure,
    SourceContext,
)

EXTRACTOR_VERSION = "2"
"""Bump when the meaning of a record changes in a way the source hash would not catch."""

_PREFIX = "scan-"


def _libcst_version() -> str:
    # Reading the version file avoids importing libcst on a warm scan.
    spec = importlib.util.find_spec("libcst")
    if spec is None or not spec.submodule_search_locations:
        return "absent"
    for folder in spec.submodule_search_locations:
        try:
            return (Path(folder) / "_version.py").read_text(encoding="utf-8")
        except OSError:
            continue
    return "unknown"


def fingerprint() -> str:
    """A hash of everything besides a file's content that decides its scan result."""
    digest = hashlib.sha256()
    digest.update(f"{EXTRACTOR_VERSION}\0{sys.version_info[:2]}\0".encode())
    digest.update(_libcst_version().encode())
    package = Path(__file__).parent
    for source in sorted(package.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()


class Cache:
    """Scan results (or other per-file records) by content, in `folder/<prefix><fingerprint>/`."""

    def __init__(self, folder: Path, rules: str | None = None, prefix: str = _PREFIX) -> None:
        self.root = folder
        self.rules = rules or fingerprint()
        # Each kind of record (scan results, call summaries) has its own prefix, so that one
        # kind's stale folders are removed without touching the other's current one.
        self.prefix = prefix
        self._generation = store.Generation(folder, prefix, self.rules)
        self.folder = self._generation.folder

    def key(self, data: bytes, module: ModuleName) -> str:
        """The entry name for a file's bytes as a given module."""
        digest = hashlib.blake2b(data, digest_size=20)
        digest.update(f"\0{module.name}\0{int(module.is_package)}".encode())
        return digest.hexdigest()

    def get(self, key: str, display: str) -> FileResult | None:
        """The cached result for `key`, with `display` as its path, or None."""
        record = self.get_record(key)
        if record is None:
            return None
        try:
            return result_from_record(record, display)
        except (ValueError, TypeError, IndexError):
            return None

    def put(self, key: str, result: FileResult) -> None:
        """Store a result; a cache that cannot be written only costs speed."""
        self.put_record(key, result_to_record(result))

    def get_record(self, key: str) -> Any:
        """The marshalled value stored under `key`, or None when there is none (or it is bad)."""
        if not self._generation.exists:
            return None
        data = store.read(self.folder / key)
        payload = None if data is None else store.unseal(data)
        if payload is None:
            return None
        try:
            return marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return None

    def put_record(self, key: str, record: Any) -> None:
        """Store a marshal-friendly value under `key`; failing to write only costs speed."""
        try:
            self._generation.make()
            payload = marshal.dumps(record)
        except (OSError, ValueError):
            return
        store.write_atomic(self.folder / key, store.seal(payload))


def result_to_record(result: FileResult) -> tuple[Any, ...]:
    """A marshal-friendly tuple of a result without its path (the path is not in the key)."""
    failure = result.failure
    return (
        None if failure is None else (failure.line, failure.column, failure.message),
        tuple(
            (
                site.line,
                site.column,
                site.end_line,
                site.end_column,
                site.exception,
                site.qualified_name,
                site.template,
                site.function,
                site.reraise,
                site.cause,
                site.ignored,
                site.keywords,
                site.arguments,
                None
                if site.context is None
                else (site.context.start_line, site.context.code, site.context.highlight_line),
                tuple(
                    (
                        condition.kind,
                        condition.code,
                        condition.line,
                        condition.subject,
                        condition.locals,
                        condition.expanded,
                        condition.depends,
                        condition.instance,
                        condition.returns,
                    )
                    for condition in site.conditions
                ),
                site.signature,
                site.via,
                tuple((item.text, item.line, item.function) for item in site.documented),
            )
            for site in result.sites
        ),
    )


def result_from_record(record: tuple[Any, ...], display: str) -> FileResult:
    """The inverse of `result_to_record`, placing the result at `display`."""
    failure, records = record
    sites = []
    for fields in records:
        (line, column, end_line, end_column, exception, qualified_name, template, function) = (
            fields[:8]
        )
        (reraise, cause, ignored, keywords, arguments, context, conditions, signature, via) = (
            fields[8:17]
        )
        (documented,) = fields[17:]
        sites.append(
            RaiseSite(
                path=display,
                line=line,
                column=column,
                end_line=end_line,
                end_column=end_column,
                exception=exception,
                qualified_name=qualified_name,
                template=template,
                function=function,
                reraise=reraise,
                cause=cause,
                ignored=ignored,
                keywords=tuple((name, value) for name, value in keywords),
                arguments=None if arguments is None else tuple(arguments),
                context=None if context is None else SourceContext(*context),
                conditions=tuple(condition_from(*condition) for condition in conditions),
                signature=signature,
                via=via,
                documented=tuple(Documented(*item) for item in documented),
            )
        )
    return FileResult(
        display,
        tuple(sites),
        None if failure is None else ScanFailure(display, *failure),
    )


def condition_from(
    kind: str,
    code: str | None,
    line: int,
    subject: str | None,
    local: Any,
    expanded: str | None,
    depends: Any,
    instance: Any,
    returns: bool = False,
) -> Condition:
    """A condition from its fields as a cache stores them (sequences as lists or tuples)."""
    return Condition(
        kind,
        code,
        line,
        subject,
        tuple(local),
        expanded,
        tuple(depends),
        tuple((attribute, parameter, said, line) for attribute, parameter, said, line in instance),
        returns,
    )
