"""Helpers shared by command modules: loading the configured catalog and printing findings."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

from catalog.config import Config
from catalog.findings import Finding, Severity


def module_name(config: Config, path: Path) -> str:
    """The dotted module name of a project file: `runtime/errors.py` gives `runtime.errors`."""
    relative = path.resolve().relative_to(config.root).with_suffix("")
    parts = list(relative.parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def print_findings(
    findings: Iterable[Finding], *, as_json: bool, extra: dict[str, object] | None = None
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
        print(finding.format(), file=sys.stderr)
