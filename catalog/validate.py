"""Checks across entries that a schema cannot express: unique ids and names, well-formed
placeholders, and references that point at existing entries."""

from __future__ import annotations

import builtins
from pathlib import Path

from catalog.exceptions import exception_problem, reserved_parameters
from catalog.findings import CatalogInvalid, Finding, Severity
from catalog.loader import load_catalog
from catalog.model import Catalog, Status
from catalog.placeholders import PlaceholderError, parse_placeholders

RESERVED_NAMES = frozenset({"CatalogError", "BY_ID", "DOCS_BASE_URL"})
"""Names the generated module defines itself."""

BUILTIN_NAMES = frozenset(dir(builtins))
"""A class named like a built-in would shadow it wherever `migrate` imports the class."""


def validate(catalog: Catalog) -> list[Finding]:
    """Cross-entry findings for a loaded catalog, in file order."""
    findings: list[Finding] = []
    first_id: dict[str, str] = {}
    names: dict[str, str] = {}
    messages: dict[tuple[str, str], str] = {}
    by_id = catalog.by_id()
    for entry in catalog:
        where = entry.where("id")
        if entry.id in first_id:
            findings.append(
                Finding.at(
                    where,
                    f"duplicate id {entry.id} (also {first_id[entry.id]})",
                    "ids are never reused: give this entry a new id with errcat new",
                )
            )
        else:
            first_id[entry.id] = f"{where.path.name}:{where.line}"
        name_at = entry.where("name")
        if entry.name in RESERVED_NAMES:
            findings.append(
                Finding.at(
                    name_at,
                    f"name {entry.name} is reserved for the generated base class",
                    "choose another class name",
                )
            )
        elif entry.name in BUILTIN_NAMES:
            findings.append(
                Finding.at(
                    name_at,
                    f"name {entry.name} would shadow the built-in {entry.name}",
                    "choose another class name",
                )
            )
        elif entry.name in names:
            findings.append(
                Finding.at(
                    name_at,
                    f"duplicate name {entry.name} (also {names[entry.name]})",
                    "class names must be unique; rename one",
                )
            )
        else:
            names[entry.name] = f"{name_at.path.name}:{name_at.line}"
        problem = exception_problem(entry.exception)
        if problem is not None:
            findings.append(
                Finding.at(
                    entry.where("exception"),
                    problem,
                    "write a built-in's name or another class's qualified name",
                )
            )
        message_at = entry.where("message")
        key = (entry.exception, entry.message)
        if key in messages:
            findings.append(
                Finding.at(
                    message_at,
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
                    message_at,
                    str(exc),
                    "write placeholders as {name} or {name.attr}",
                )
            )
        else:
            reserved = reserved_parameters(entry.exception)
            for placeholder in fields:
                if placeholder.root in reserved:
                    findings.append(
                        Finding.at(
                            message_at,
                            f"placeholder {{{placeholder.field}}} would shadow the exception's "
                            f"'{placeholder.root}' attribute",
                            "rename the placeholder",
                        )
                    )
        for index, related in enumerate(entry.related):
            if related not in by_id:
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
            if entry.replaced_by not in by_id:
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


def load_valid_catalog(folder: Path) -> Catalog:
    """Load and validate; raise CatalogInvalid with every error when anything is wrong."""
    catalog, findings = load_catalog(folder)
    findings += validate(catalog)
    if findings:
        raise CatalogInvalid(findings)
    return catalog
