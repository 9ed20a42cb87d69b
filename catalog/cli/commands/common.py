"""Helpers shared by command modules: loading the configured catalog and printing findings.

What the project is (import names, the generated module, the scan) lives in catalog/core/project.py,
which every stage uses; only command-line concerns live here.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from catalog.core.config import Config
from catalog.core.findings import Finding, Severity

if TYPE_CHECKING:
    from catalog.core.model import Catalog


def print_findings(
    findings: Iterable[Finding],
    *,
    as_json: bool,
    extra: dict[str, object] | None = None,
    stream: TextIO | None = None,
) -> None:
    """Findings for people (`path:line:col: ...`, to stderr) or as one JSON object (stdout)."""
    findings = list(findings)
    if as_json:
        payload: dict[str, object] = {
            "ok": not any(f.severity is Severity.ERROR for f in findings),
            "errors": sum(f.severity is Severity.ERROR for f in findings),
            "warnings": sum(f.severity is Severity.WARNING for f in findings),
            "findings": [f.as_dict() for f in findings],
        }
        payload.update(extra or {})
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    for finding in findings:
        print(finding.format(), file=stream or sys.stderr)


def valid_catalog_or_report(config: Config, command: str) -> Catalog | None:
    """The configured catalog, or None after printing its findings for a writing command.

    Commands that write (codegen, new, migrate) validate the whole catalog first and write
    nothing from an invalid one, so what is on disk stays consistent.
    """
    from catalog.core.findings import CatalogInvalid
    from catalog.core.project import caching
    from catalog.entries.validate import valid_project_catalog

    try:
        # Read afresh and not cached: these commands rewrite the catalog or what follows from
        # it, so a cached copy would be stale at once, and their writes stay the only ones.
        with caching(False):
            return valid_project_catalog(config)
    except CatalogInvalid as invalid:
        print_findings(invalid.findings, as_json=False)
        print(
            f"errcat {command}: {len(invalid.findings)} problem(s) in the catalog; nothing written",
            file=sys.stderr,
        )
        return None


def index_for_explain(config: Config) -> None:
    """Compile explain's index of the catalog as it is now, where it is not current: after
    `new` writes drafts or `build` publishes an edited catalog, the first `errcat explain`
    then answers from it instead of reading and indexing every YAML file itself (about a
    second on a whole-torch catalog)."""
    from catalog.core.errors import ErrcatError
    from catalog.matching.message_index import load_index

    # A catalog that does not load is reported by the commands that read it; this one is done.
    with contextlib.suppress(ErrcatError):
        load_index(config)
