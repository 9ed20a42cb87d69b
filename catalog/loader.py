"""Load the YAML catalog: files → schema-checked `Entry` records, or findings with positions.

Loading collects every problem of every file before giving up, so one run shows them all.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from catalog.findings import Finding
from catalog.model import Catalog, CatalogFile, Entry, Example, Position, Status
from catalog.yamlnodes import Document, JsonPath, YamlProblem, parse_document

SCHEMA_PATH = Path(__file__).parent / "errors" / "schema.json"
"""The committed JSON Schema of a catalog file (the YAML files point editors to it)."""

MAX_FILE_BYTES = 1 << 20
"""A catalog file this large is a mistake, not knowledge; refusing it bounds the work."""

_PROSE_FIX = "see catalog/errors/schema.json for the expected keys"


@cache
def file_schema() -> dict[str, Any]:
    """The catalog-file JSON Schema."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def catalog_files(folder: Path) -> list[Path]:
    """The YAML files of a catalog folder, sorted by name."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


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


def _schema_findings(path: Path, document: Document) -> list[Finding]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(file_schema())
    findings: list[Finding] = []

    def place(error: Any) -> tuple[int, int]:
        mark = document.mark(tuple(error.absolute_path))
        return (mark.line, mark.column)

    for error in sorted(validator.iter_errors(document.value), key=place):
        where: JsonPath = tuple(error.absolute_path)
        field = _describe(where)
        mark = document.mark(where)
        kind = error.validator
        message: str
        fix: str | None
        if kind == "additionalProperties" and isinstance(error.instance, dict):
            allowed = sorted(error.schema.get("properties", {}))
            for key in sorted(set(error.instance) - set(allowed)):
                key_mark = document.mark((*where, key), key=True)
                findings.append(
                    Finding(
                        path,
                        key_mark.line,
                        key_mark.column,
                        f"unknown key '{key}' in {field}",
                        f"use one of: {', '.join(allowed)}",
                    )
                )
            continue
        if kind == "required":
            missing = str(error.message).split("'")[1] if "'" in str(error.message) else "?"
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
            findings.append(Finding(path, mark.line, mark.column, message, fix))
            continue
        if kind == "type":
            message = f"{field} must be {error.validator_value}, got {_type_name(error.instance)}"
            if error.validator_value == "string" and not isinstance(error.instance, (list, dict)):
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
            choices = ", ".join(map(str, error.validator_value))
            message = f"{field} has value {error.instance!r}; expected one of: {choices}"
            fix = None
        elif kind in ("maxLength", "maxItems"):
            message = f"{field} is too long (limit {error.validator_value})"
            fix = "shorten it"
        elif kind in ("minLength", "minItems"):
            message = f"{field} is too short (needs at least {error.validator_value})"
            fix = (
                "write it out, or set status: draft"
                if kind == "minItems"
                else "fill it in or remove the key"
            )
        elif kind == "uniqueItems":
            message = f"{field} lists the same value twice"
            fix = "remove the repeat"
        else:
            message = f"{field}: {error.message}"
            fix = _PROSE_FIX
        findings.append(Finding(path, mark.line, mark.column, message, fix))
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


def load_file(path: Path) -> tuple[CatalogFile | None, list[Finding]]:
    """Parse and schema-check one catalog file. Never raises for bad content."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [Finding(path, 1, 1, f"cannot read the file: {exc.strerror or exc}")]
    return load_bytes(path, data)


def load_bytes(path: Path, data: bytes) -> tuple[CatalogFile | None, list[Finding]]:
    """Parse and schema-check the contents of a catalog file named `path` (used before writing one)."""
    if len(data) > MAX_FILE_BYTES:
        return None, [
            Finding(
                path,
                1,
                1,
                f"file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}",
                "split it or shorten the prose",
            )
        ]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        what = f"byte 0x{data[exc.start]:02x} cannot be decoded"
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            what = "the file starts with a UTF-16 byte order mark"
        return None, [Finding(path, line, column, f"not UTF-8: {what}", "save the file as UTF-8")]
    try:
        document = parse_document(text)
    except YamlProblem as problem:
        return None, [Finding(path, problem.mark.line, problem.mark.column, problem.message)]
    findings = _schema_findings(path, document)
    if findings:
        return None, findings
    value: dict[str, Any] = document.value  # type: ignore[assignment]  # the schema made it a mapping
    module = value["module"]
    entries = tuple(
        _entry(path, module, raw, document, ("errors", index))
        for index, raw in enumerate(value["errors"])
    )
    return CatalogFile(path=path, module=module, entries=entries), []


def load_catalog(folder: Path) -> tuple[Catalog, list[Finding]]:
    """Load every file of `folder`; files with problems contribute findings instead of entries."""
    files: list[CatalogFile] = []
    findings: list[Finding] = []
    for path in catalog_files(folder):
        loaded, problems = load_file(path)
        findings.extend(problems)
        if loaded is not None:
            files.append(loaded)
    return Catalog(files=tuple(files)), findings
