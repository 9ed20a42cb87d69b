"""Load the YAML catalog: files → schema-checked `Entry` records, or findings with positions.

Loading collects every problem of every file before giving up, so one run shows them all. An
entry with a problem is left out on its own; the others of its file still load (`read_catalog`
says which were left out, so that references to them are reported as what they are).

A loaded catalog can also be cached (see `catalog.entries.validate.checked_catalog`): this module turns
each file's outcome into marshal-able data and back (`file_record`, `StoredCatalog`), and reads
and writes the cache's files. Rebuilding 10,000 entries from that data takes milliseconds where
parsing and schema-checking their YAML takes seconds; a changed catalog parses only the files
whose bytes the cache does not hold (`reread_catalog`).

Files are checked against the committed schema by one validator, jsonschema-rs, for both the
yes and the errors the findings word. Measured on the whole-torch catalog against the
pure-Python `jsonschema` and against the evaluator errcat once wrote by hand for its schema's
keywords (`bench/schema_validators.py` prints the three figures), it was the fastest by one to
two orders of magnitude, with the three agreeing on every document; `jsonschema` stays the
oracle of the tests (tests/gate/test_check.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import marshal
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.core.cachefile import code_digest, read_payload, write_payload
from catalog.core.findings import Finding, Severity
from catalog.core.model import Catalog, CatalogFile, Entry, Example, Position, Status

if TYPE_CHECKING:
    from catalog.entries.yamlnodes import Document, JsonPath

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "errors" / "schema.json"
"""The committed JSON Schema of a catalog file (the YAML files point editors to it)."""

MAX_FILE_BYTES = 1 << 20
"""A catalog file this large is a mistake, not knowledge; refusing it bounds the work."""

_PROSE_FIX = "see schema.json in the catalog folder (errcat new writes it) for the expected keys"


@cache
def file_schema() -> dict[str, Any]:
    """The catalog-file JSON Schema."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


@cache
def _validator() -> Any:
    """One validator for every file (see the module docstring), compiled once per process, on
    first use: a catalog served from the cache validates nothing."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(file_schema())


def fits_schema(value: object) -> bool:
    """Whether a parsed catalog file is valid against the catalog schema."""
    valid: bool = _validator().is_valid(value)
    return valid


@dataclass(frozen=True)
class _SchemaError:
    """What the findings need of one validation error, read from jsonschema-rs's."""

    path: JsonPath
    """Where the value is in the document."""
    keyword: str
    """The schema keyword that failed (`required`, `pattern`, ...)."""
    expected: Any
    """That keyword's value in the schema (the type's name, the enum's choices, the limit)."""
    schema: Any
    """The (sub)schema holding the keyword."""
    instance: Any
    """The value that failed."""
    missing: str | None
    """For `required`, the key that is missing."""
    message: str
    """The library's own words, for a keyword the findings do not word themselves."""
    rank: tuple[int, ...]
    """The keyword's place in the schema, key by key (see `_schema_errors`)."""


def _walk(schema: Any, path: list[str | int]) -> tuple[Any, tuple[int, ...]]:
    """The node at `path` in `schema`, and the position of each step among its siblings."""
    rank = []
    for part in path:
        rank.append(list(schema).index(part) if isinstance(schema, dict) else int(part))
        schema = schema[part]
    return schema, tuple(rank)


def _schema_errors(value: object) -> list[_SchemaError]:
    """The errors of `value`, each with its keyword's place in the (uninlined) schema.

    `rank` orders the errors of one value as jsonschema reported them, keyword by keyword in
    the schema's own order (an unknown key before a missing one), so that the findings on one
    line come in the order they always had.
    """
    schema = file_schema()
    errors = []
    for error in _validator().iter_errors(value):
        schema_path = list(error.schema_path)
        keyword = str(schema_path[-1])
        holder, rank = _walk(schema, schema_path[:-1])
        rank += (list(holder).index(keyword) if isinstance(holder, dict) else 0,)
        missing = getattr(error.kind, "property", None) if keyword == "required" else None
        errors.append(
            _SchemaError(
                tuple(error.instance_path),
                keyword,
                holder.get(keyword) if isinstance(holder, dict) else None,
                holder,
                error.instance,
                missing,
                error.message,
                rank,
            )
        )
    return errors


def _catalog_names(folder: Path) -> list[str]:
    # scandir knows each entry's type without a stat per file; a catalog has a file per module.
    try:
        with os.scandir(folder) as entries:
            return sorted(
                entry.name
                for entry in entries
                if os.path.splitext(entry.name)[1] in (".yaml", ".yml") and entry.is_file()
            )
    except (FileNotFoundError, NotADirectoryError):
        return []


def catalog_files(folder: Path) -> list[Path]:
    """The YAML files of a catalog folder, sorted by name."""
    return [folder / name for name in _catalog_names(folder)]


def _describe(path: JsonPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the file"


def _type_name(value: object) -> str:
    return {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        list: "a list",
        dict: "a mapping",
        type(None): "nothing (null)",
    }.get(type(value), type(value).__name__)


def _schema_findings(path: Path, document: Document) -> list[tuple[JsonPath, Finding]]:
    """Each schema finding with the path of the value it is about (which entry, if any)."""
    if fits_schema(document.value):
        return []
    findings: list[tuple[JsonPath, Finding]] = []

    def place(error: _SchemaError) -> tuple[int, int, tuple[int, ...]]:
        mark = document.mark(error.path)
        return (mark.line, mark.column, error.rank)

    for error in sorted(_schema_errors(document.value), key=place):
        where: JsonPath = error.path
        field = _describe(where)
        mark = document.mark(where)
        kind = error.keyword
        message: str
        fix: str | None
        if kind == "additionalProperties" and isinstance(error.instance, dict):
            allowed = sorted(error.schema.get("properties", {}))
            for key in sorted(set(error.instance) - set(allowed)):
                key_mark = document.mark((*where, key), key=True)
                findings.append(
                    (
                        where,
                        Finding(
                            path,
                            key_mark.line,
                            key_mark.column,
                            f"unknown key '{key}' in {field}",
                            f"use one of: {', '.join(allowed)}",
                        ),
                    )
                )
            continue
        if kind == "required":
            missing = error.missing or "?"
            status = error.instance.get("status") if isinstance(error.instance, dict) else None
            why = (
                f" (required for status '{status}')"
                if status in ("active", "retired")
                and missing not in ("id", "name", "exception", "message", "status")
                else ""
            )
            message = f"{field} is missing required key '{missing}'{why}"
            fix = (
                "add it, or set status: draft until it is written"
                if why and status == "active"
                else _PROSE_FIX
            )
            findings.append((where, Finding(path, mark.line, mark.column, message, fix)))
            continue
        if kind == "type":
            message = f"{field} must be {error.expected}, got {_type_name(error.instance)}"
            if error.expected == "string" and not isinstance(error.instance, (list, dict)):
                fix = "quote the value"
            else:
                fix = _PROSE_FIX
        elif (kind == "pattern" and where and where[-1] in ("id", "replaced_by")) or (
            kind == "pattern" and len(where) >= 2 and where[-2] == "related"
        ):
            message = f"{field} must be 16 lowercase hex digits, got {error.instance!r}"
            fix = "run: errcat new (it computes new ids); never edit a stored id"
        elif kind == "pattern" and where and where[-1] == "name":
            message = f"{field} must be a CapWords class name, got {error.instance!r}"
            fix = "use letters and digits, starting with a capital"
        elif kind == "enum":
            choices = ", ".join(map(str, error.expected))
            message = f"{field} has value {error.instance!r}; expected one of: {choices}"
            fix = None
        elif kind in ("maxLength", "maxItems"):
            message = f"{field} is too long (limit {error.expected})"
            fix = "shorten it"
        elif kind in ("minLength", "minItems"):
            message = f"{field} is too short (needs at least {error.expected})"
            fix = (
                "write it out, or set status: draft"
                if kind == "minItems"
                else "fill it in or remove the key"
            )
        elif kind == "uniqueItems":
            message = f"{field} lists the same value twice"
            fix = "remove the repeat"
        elif kind == "pattern":
            # jsonschema's words, which findings have always used (jsonschema-rs quotes with ").
            message = f"{field}: {error.instance!r} does not match {error.expected!r}"
            fix = _PROSE_FIX
        else:
            message = f"{field}: {error.message}"
            fix = _PROSE_FIX
        findings.append((where, Finding(path, mark.line, mark.column, message, fix)))
    return findings


def _entry(
    path: Path, module: str, raw: dict[str, Any], document: Document, where: JsonPath
) -> Entry:
    def pos(sub: JsonPath) -> Position:
        mark = document.mark(sub)
        return Position(path, mark.line, mark.column)

    example_raw = raw.get("example")
    example = (
        Example(
            before=example_raw["before"],
            after=example_raw["after"],
            requires=tuple(example_raw.get("requires", ())),
        )
        if isinstance(example_raw, dict)
        else None
    )
    return Entry(
        id=raw["id"],
        name=raw["name"],
        exception=raw["exception"],
        message=raw["message"],
        status=Status(raw["status"]),
        module=module,
        position=pos(where),
        meaning=raw.get("meaning"),
        solutions=tuple(raw.get("solutions", ())),
        example=example,
        trigger=raw.get("trigger"),
        situations=tuple(raw.get("situations", ())),
        related=tuple(raw.get("related", ())),
        retired_reason=raw.get("retired_reason"),
        replaced_by=raw.get("replaced_by"),
        since=raw.get("since"),
        field_positions={
            **{key: pos((*where, key)) for key in raw},
            # Each related id has its own place, whether the list is written as a block or inline.
            **{
                f"related[{i}]": pos((*where, "related", i))
                for i in range(len(raw.get("related", ())))
            },
        },
    )


@dataclass(frozen=True)
class FileLoad:
    """What loading one catalog file gave."""

    file: CatalogFile | None
    """The file with every entry that loaded; None when the file itself is unusable (unreadable,
    not YAML, no valid `module` or no `errors` list)."""
    findings: list[Finding]
    """Every problem found, at its position."""
    broken: Mapping[str, Position]
    """The entries left out for their problems, by the id they were written with (where that is
    a valid id), at the entry's start: a reference to one of them follows from those problems."""


@dataclass(frozen=True)
class CatalogLoad:
    """What loading a catalog folder gave: `FileLoad`'s fields over every file."""

    catalog: Catalog
    findings: list[Finding]
    broken: Mapping[str, Position]


_ID = re.compile(r"[0-9a-f]{16}")


def _in_entry(where: JsonPath) -> int | None:
    """The index of the entry that the value at `where` belongs to, if any."""
    if len(where) >= 2 and where[0] == "errors" and isinstance(where[1], int):
        return where[1]
    return None


def _value_at(value: object, where: JsonPath) -> object:
    for part in where:
        if isinstance(value, dict) and isinstance(part, str):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            return None
    return value


def _usable(value: object) -> bool:
    """Whether a file's entries can be taken one by one: a valid module name and a list."""
    if not isinstance(value, dict) or not isinstance(value.get("errors"), list):
        return False
    return isinstance(value.get("module"), str) and bool(
        _module_validator().is_valid(value["module"])
    )


@cache
def _module_validator() -> Any:
    """The schema's rule for `module` alone (it refers to no definition)."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(file_schema()["properties"]["module"])


def load_file(path: Path) -> tuple[CatalogFile | None, list[Finding]]:
    """Parse and schema-check one catalog file. Never raises for bad content.

    The file comes with the entries that have no problem (see `read_file`)."""
    loaded = read_file(path)
    return loaded.file, loaded.findings


def load_bytes(path: Path, data: bytes) -> tuple[CatalogFile | None, list[Finding]]:
    """Parse and schema-check the contents of a catalog file named `path` (used before writing
    one); as `load_file`."""
    loaded = read_bytes(path, data)
    return loaded.file, loaded.findings


def read_file(path: Path) -> FileLoad:
    """Parse and schema-check one catalog file, entry by entry. Never raises for bad content."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileLoad(
            None, [Finding(path, 1, 1, f"cannot read the file: {exc.strerror or exc}")], {}
        )
    return read_bytes(path, data)


def read_bytes(path: Path, data: bytes) -> FileLoad:
    """`read_file` for the contents `data` of a catalog file named `path`.

    An entry with a problem is left out on its own: a typo in one entry must not take its
    siblings with it, or every reference to them elsewhere would be reported too. Only what
    makes the whole file unusable (bytes that are not UTF-8 YAML, a syntax error, a problem
    outside the entries such as a duplicate top-level key, an invalid `module`, no `errors`
    list) leaves the whole file out.
    """
    if len(data) > MAX_FILE_BYTES:
        return FileLoad(
            None,
            [
                Finding(
                    path,
                    1,
                    1,
                    f"file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}",
                    "split it or shorten the prose",
                )
            ],
            {},
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        what = f"byte 0x{data[exc.start]:02x} cannot be decoded"
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            what = "the file starts with a UTF-16 byte order mark"
        finding = Finding(path, line, column, f"not UTF-8: {what}", "save the file as UTF-8")
        return FileLoad(None, [finding], {})
    from catalog.entries.yamlnodes import YamlProblem, parse_document

    try:
        document = parse_document(text, collect=True)
    except YamlProblem as problem:
        finding = Finding(path, problem.mark.line, problem.mark.column, problem.message)
        return FileLoad(None, [finding], {})
    refused = [
        (where, Finding(path, mark.line, mark.column, message))
        for where, mark, message in document.problems
    ]
    # A refused tag or scalar leaves null in its place; what the schema then says of that null
    # only repeats the problem. (A duplicate key keeps its first value, which stays checked.)
    nulled = [bad for bad, _ in refused if _value_at(document.value, bad) is None]
    placed = refused + [
        (where, finding)
        for where, finding in _schema_findings(path, document)
        if not any(where[: len(bad)] == bad for bad in nulled)
    ]
    placed.sort(key=lambda item: (item[1].line, item[1].column))
    findings = [finding for _, finding in placed]
    value = document.value
    usable = _usable(value) and all(_in_entry(where) is not None for where, _ in refused)
    listed = value.get("errors") if isinstance(value, dict) else None
    raws: list[Any] = listed if isinstance(listed, list) else []
    broken_indexes = (
        {index for where, _ in placed if (index := _in_entry(where)) is not None}
        if usable
        else set(range(len(raws)))
    )
    broken: dict[str, Position] = {}
    for index in sorted(broken_indexes):
        raw = raws[index]
        written = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(written, str) and _ID.fullmatch(written):
            mark = document.mark(("errors", index))
            broken.setdefault(written, Position(path, mark.line, mark.column))
    if not usable:
        return FileLoad(None, findings, broken)
    module: str = value["module"]  # type: ignore[index]  # _usable made it a mapping
    entries = tuple(
        _entry(path, module, raw, document, ("errors", index))
        for index, raw in enumerate(raws)
        if index not in broken_indexes
    )
    return FileLoad(CatalogFile(path=path, module=module, entries=entries), findings, broken)


def load_catalog(folder: Path) -> tuple[Catalog, list[Finding]]:
    """Load every file of `folder`: each file's good entries, and findings for the rest."""
    loaded = read_catalog(folder)
    return loaded.catalog, loaded.findings


def read_catalog(folder: Path) -> CatalogLoad:
    """`load_catalog`, also telling which entries were left out for their problems."""
    return _combined([read_file(path) for path in catalog_files(folder)])


def _combined(loads: list[FileLoad]) -> CatalogLoad:
    """The catalog of files loaded in this order: their findings in turn, and the first place
    each left-out id was written."""
    files: list[CatalogFile] = []
    findings: list[Finding] = []
    broken: dict[str, Position] = {}
    for loaded in loads:
        findings.extend(loaded.findings)
        for entry_id, position in loaded.broken.items():
            broken.setdefault(entry_id, position)
        if loaded.file is not None:
            files.append(loaded.file)
    return CatalogLoad(Catalog(files=tuple(files)), findings, broken)


def reread_catalog(
    folder: Path, known: Mapping[str, Any]
) -> tuple[CatalogLoad, tuple[tuple[str, str | None], ...], dict[str, Any]]:
    """`read_catalog`, taking each file whose bytes have a record in `known` (by their SHA-256,
    see `file_record`) from that record instead of parsing them again.

    Also gives each file's path and digest, in order (None for one without a record: unreadable,
    or not storable), and the records of the files now in the folder, for the next run. Editing
    one file of a large catalog then costs parsing that file, not the 1,200 others: a record
    holds nothing of a file but what its bytes gave, so it also survives a rename or a copy.
    """
    loads: list[FileLoad] = []
    files: list[tuple[str, str | None]] = []
    records: dict[str, Any] = {}
    for path in catalog_files(folder):
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            loads.append(read_file(path))  # reports why; nothing is stored for it
            continue
        digest = hashlib.sha256(data).hexdigest()
        record = records.get(digest, known.get(digest))
        loaded = file_load_from(record, path) if record is not None else None
        if loaded is None:
            loaded = read_bytes(path, data)
            record = file_record(loaded, path)
        if record is not None:
            records[digest] = record
        files.append((str(path), digest if record is not None else None))
        loads.append(loaded)
    return _combined(loads), tuple(files), records


CACHE_FORMAT = 2
"""Bump when the cached data's layout or meaning changes."""
_MAGIC = b"errcat-cache\n"


@cache
def tool_fingerprint() -> bytes:
    """What decides errcat's results besides a project's files: errcat's version, the Python
    running it (the built-ins' attributes decide reserved parameters) and errcat's code with the
    schema (`code_digest`). Computed once per process."""
    digest = hashlib.sha256(f"{CACHE_FORMAT}\0{sys.version}\0".encode())
    digest.update(code_digest())
    return digest.digest()


def catalog_key(folder: Path, digests: FileDigests | None = None) -> str | None:
    """The cache key of the catalog in `folder` as it is now: every file's name and the
    SHA-256 of its bytes, and `tool_fingerprint()`. None when a file cannot be read (loading
    then reports it). `digests` spares reading the files unchanged since an earlier run."""
    key = hashlib.sha256(tool_fingerprint() + os.fsencode(folder) + b"\0")
    for name in _catalog_names(folder):
        path = os.path.join(folder, name)
        if digests is not None:
            digest = digests.digest(path)
        else:
            try:
                with open(path, "rb") as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()
            except OSError:
                digest = None
        if digest is None:
            return None
        key.update(f"{name}\0{digest}\0".encode())
    return key.hexdigest()


SETTLED_NS = 2_000_000_000
"""A file changed less than this long ago is read again next time, whatever its stat says: a
second write within the file system's timestamp resolution would not show in it."""

Signature = tuple[int, int, int, int, int]
"""A file's size, modification and change times (ns), inode and device."""


def stat_signature(path: str) -> tuple[Signature, bool] | None:
    """`path`'s signature, and whether it is settled (unchanged for SETTLED_NS), so that what
    was computed from its bytes may be remembered by it; None when it cannot be stat'ed.

    The signature changes whenever the file is written, as git's index and build tools rely
    on: the change time cannot be set back.
    """
    try:
        stat = os.stat(path)
    except OSError:
        return None
    signature = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)
    return signature, max(stat.st_mtime_ns, stat.st_ctime_ns) < time.time_ns() - SETTLED_NS


class FileDigests:
    """The SHA-256 of files, each read only when its stat signature changed since the run that
    stored its digest (see `stat_signature`).

    `check` and `stats` hash every catalog file for the catalog's cache key, and `check` the
    generated files to compare them with what codegen would write; for a whole-torch catalog
    of 1,200 files, reading them all again on every run cost more than the cached load itself.
    `save` stores the digests this run used.
    """

    FILE = "file-digests.marshal"

    def __init__(self, cache_dir: Path | None) -> None:
        self._cache = cache_dir / self.FILE if cache_dir is not None else None
        known = read_cache(self._cache, tool_fingerprint().hex()) if self._cache else None
        self._known: dict[str, tuple[Signature, str]] = known if isinstance(known, dict) else {}
        self._used: dict[str, tuple[Signature, str]] = {}
        self._changed = False

    def digest(self, path: str | Path, *, text: bool = False) -> str | None:
        """The SHA-256 of `path`'s bytes, or with `text` of its UTF-8 text with universal
        newlines (as `read_text` gives it; None when it is not UTF-8). None when unreadable."""
        name = os.fspath(path)
        memo = f"{'text' if text else 'bytes'}\0{name}"
        stat = stat_signature(name)
        if stat is None:
            return None
        signature, settled = stat
        known = self._known.get(memo)
        if known is not None and known[0] == signature:
            digest = known[1]
        else:
            try:
                with open(name, "rb") as handle:
                    data = handle.read()
                if text:
                    data = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").encode()
            except (OSError, UnicodeDecodeError):
                return None
            digest = hashlib.sha256(data).hexdigest()
            self._changed = True
        if settled:
            self._used[memo] = (signature, digest)
        else:
            self._changed = True
        return digest

    def save(self) -> None:
        """Store the digests this run used, when that changes the stored file."""
        if self._cache is not None and (self._changed or len(self._used) != len(self._known)):
            write_cache(self._cache, tool_fingerprint().hex(), self._used)


def read_cache(path: Path, key: str) -> Any:
    """The data stored at `path` for `key`, or None when there is none, it is for another key, or
    it is damaged. The checksum is verified before `marshal` decodes anything."""
    payload = read_payload(path, _MAGIC, key)
    if payload is None:
        return None
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None


def write_cache(path: Path, key: str, value: Any) -> None:
    """Store `value` (made of marshal-able built-ins) for `key` at `path`, atomically.

    A cache that cannot be written, or a value marshal refuses, only costs speed next time.
    """
    try:
        payload = marshal.dumps(value)
    except ValueError:
        return
    write_payload(path, _MAGIC, key, payload)


class _Positions(Mapping[str, Position]):
    """An entry's field positions as the cache stores them, each `Position` made on lookup.

    Most entries are never reported on, so building thousands of positions up front would be
    wasted; `marks` is `(key, line, column, key, line, column, ...)`.
    """

    __slots__ = ("_index", "_marks", "_path")

    def __init__(self, path: Path, marks: tuple[Any, ...]) -> None:
        self._path = path
        self._marks = marks
        self._index: dict[str, int] | None = None

    def _lookup(self) -> dict[str, int]:
        if self._index is None:
            self._index = {self._marks[i]: i for i in range(0, len(self._marks), 3)}
        return self._index

    def __getitem__(self, key: str) -> Position:
        at = self._lookup()[key]
        return Position(self._path, self._marks[at + 1], self._marks[at + 2])

    def __iter__(self) -> Iterator[str]:
        return iter(self._lookup())

    def __len__(self) -> int:
        return len(self._marks) // 3


_ENTRY_FIELDS = tuple(field.name for field in dataclasses.fields(Entry))
_EXAMPLE_FIELDS = tuple(field.name for field in dataclasses.fields(Example))
_STATUSES = {status.value: status for status in Status}


_DEFAULTS: dict[str, Any] = {
    field.name: field.default
    for field in dataclasses.fields(Entry)
    if field.default is not dataclasses.MISSING
}
"""Entry fields with a plain default: stored only where an entry's value differs (a draft has
most of them unset)."""


def _entry_data(entry: Entry) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in _ENTRY_FIELDS:
        value = getattr(entry, name)
        if name == "module" or (name in _DEFAULTS and value == _DEFAULTS[name]):
            continue  # the module is the file's; defaults are filled in again
        if name == "status":
            value = value.value
        elif name == "position":
            value = (value.line, value.column)
        elif name == "example" and value is not None:
            value = tuple(getattr(value, field) for field in _EXAMPLE_FIELDS)
        elif name == "field_positions":
            value = tuple(item for key, at in value.items() for item in (key, at.line, at.column))
        values[name] = value
    return values


def _entry_from(stored: dict[str, Any], path: Path, module: str) -> Entry:
    values = {**_DEFAULTS, **stored, "module": module}
    values["status"] = _STATUSES[values["status"]]
    line, column = values["position"]
    values["position"] = Position(path, line, column)
    if values["example"] is not None:
        values["example"] = Example(*values["example"])
    values["field_positions"] = _Positions(path, values["field_positions"])
    # Restored as pickle restores a dataclass: its fields set directly, without __init__,
    # which a frozen dataclass makes cost more than everything else here.
    entry = object.__new__(Entry)
    object.__setattr__(entry, "__dict__", values)
    return entry


def _finding_data(finding: Finding) -> tuple[Any, ...]:
    return (
        finding.line,
        finding.column,
        finding.message,
        finding.fix,
        finding.severity.value,
        finding.stage,
    )


def _finding_from(stored: Any, path: Path) -> Finding:
    line, column, message, fix, severity, stage = stored
    return Finding(path, line, column, message, fix, Severity(severity), stage)


def file_record(loaded: FileLoad, path: Path) -> tuple[Any, ...] | None:
    """What loading the file at `path` gave, as marshal-able built-ins without the path
    (`file_load_from` puts one back): what a file's bytes give depends on nothing else.

    None when something in it is placed in another file, which `read_bytes` never does: a
    record could not say where.
    """
    file = loaded.file
    elsewhere = (
        any(finding.path != path for finding in loaded.findings)
        or any(at.path != path for at in loaded.broken.values())
        or (
            file is not None
            and (file.path != path or any(entry.position.path != path for entry in file.entries))
        )
    )
    if elsewhere:
        return None
    return (
        None if file is None else (file.module, tuple(_entry_data(e) for e in file.entries)),
        tuple(_finding_data(finding) for finding in loaded.findings),
        tuple((entry_id, at.line, at.column) for entry_id, at in loaded.broken.items()),
    )


def file_load_from(record: Any, path: Path) -> FileLoad | None:
    """The `FileLoad` that `file_record` stored, for a file at `path`; None when `record` is not
    of this layout (a damaged or foreign cache)."""
    try:
        stored_file, problems, left_out = record
        file = None
        if stored_file is not None:
            module, entries = stored_file
            file = CatalogFile(
                path=path,
                module=module,
                entries=tuple([_entry_from(entry, path, module) for entry in entries]),
            )
        findings = [_finding_from(problem, path) for problem in problems]
        broken = {entry_id: Position(path, line, column) for entry_id, line, column in left_out}
    except (TypeError, ValueError, KeyError):
        return None
    return FileLoad(file, findings, broken)


@dataclass(frozen=True)
class StoredCatalog:
    """A checked catalog as errcat's cache holds it: each file's record under the digest of its
    bytes, so that a changed catalog reuses the records of the files that did not change (see
    `reread_catalog`), and the findings about the catalog as a whole."""

    key: str
    """The key of the catalog it was loaded from (see `catalog_key`)."""
    files: tuple[tuple[str, str | None], ...]
    """Each file's path and digest, in order; None for a file without a record."""
    records: Mapping[str, Any]
    """By digest, what a file's bytes gave (see `file_record`)."""
    checks: tuple[Any, ...]
    """The findings about the whole catalog (the validator's), stored; they follow the files'."""

    @staticmethod
    def of(
        key: str,
        files: tuple[tuple[str, str | None], ...],
        records: Mapping[str, Any],
        checks: list[Finding],
    ) -> StoredCatalog:
        """The stored form of a catalog loaded by `reread_catalog`, with `checks`."""
        stored = tuple((str(f.path), *_finding_data(f)) for f in checks)
        return StoredCatalog(key, files, records, stored)

    def data(self) -> tuple[Any, ...]:
        """Marshal-able built-ins; `from_data` reverses it."""
        return (_ENTRY_FIELDS, self.key, self.files, dict(self.records), self.checks)

    @staticmethod
    def from_data(data: Any) -> StoredCatalog | None:
        """What `data` stored, or None when it is not of this errcat's layout."""
        if not (isinstance(data, tuple) and len(data) == 5 and data[0] == _ENTRY_FIELDS):
            return None
        _fields, key, files, records, checks = data
        if not (
            isinstance(key, str)
            and isinstance(files, tuple)
            and isinstance(records, dict)
            and isinstance(checks, tuple)
        ):
            return None
        return StoredCatalog(key, files, records, checks)

    def result(self) -> tuple[Catalog, list[Finding]] | None:
        """The catalog and every finding, as loading and checking it gave them; None when a
        file has no record or the data is damaged."""
        loads: list[FileLoad] = []
        try:
            for path_text, digest in self.files:
                record = self.records.get(digest) if digest is not None else None
                loaded = file_load_from(record, Path(path_text)) if record is not None else None
                if loaded is None:
                    return None
                loads.append(loaded)
            checks = [_finding_from(stored[1:], Path(stored[0])) for stored in self.checks]
        except (TypeError, ValueError, KeyError):
            return None
        combined = _combined(loads)
        return combined.catalog, combined.findings + checks
