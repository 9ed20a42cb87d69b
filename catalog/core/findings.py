"""Findings: what errcat reports about a catalog or a package, as `path:line:col: message; fix`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from catalog.core.errors import FindingsError

if TYPE_CHECKING:
    from catalog.core.model import Position


class Severity(StrEnum):
    """How a finding affects the exit code."""

    ERROR = "error"
    """Fails `errcat check` (exit 1)."""
    WARNING = "warning"
    """Reported; the exit code stays 0."""


@dataclass(frozen=True)
class Finding:
    """One problem at one place, with the way to fix it."""

    path: Path
    line: int
    """1-based line."""
    column: int
    """1-based column."""
    message: str
    """What is wrong, quoting the bad value."""
    fix: str | None = None
    """How to fix it; names the command where one exists (`run: errcat codegen`)."""
    severity: Severity = Severity.ERROR
    stage: str = "catalog"
    """The check stage that produced it."""

    @classmethod
    def at(
        cls,
        position: Position,
        message: str,
        fix: str | None = None,
        *,
        severity: Severity = Severity.ERROR,
        stage: str = "catalog",
    ) -> Finding:
        """A finding at a catalog position."""
        return cls(position.path, position.line, position.column, message, fix, severity, stage)

    def display_path(self, base: Path | None = None) -> str:
        """The path relative to `base` (default: the current folder) where it lies inside it."""
        base = (base or Path.cwd()).resolve()
        try:
            return self.path.resolve().relative_to(base).as_posix()
        except ValueError:
            return self.path.as_posix()

    def format(self, base: Path | None = None) -> str:
        """`path:line:col: message; fix`, with `warning:` before warnings."""
        label = "warning: " if self.severity is Severity.WARNING else ""
        tail = f"; {self.fix}" if self.fix else ""
        return f"{self.display_path(base)}:{self.line}:{self.column}: {label}{self.message}{tail}"

    def as_dict(self, base: Path | None = None) -> dict[str, object]:
        """The finding for `--json` output."""
        return {
            "path": self.display_path(base),
            "line": self.line,
            "column": self.column,
            "severity": self.severity.value,
            "stage": self.stage,
            "message": self.message,
            "fix": self.fix,
        }


class CatalogInvalid(FindingsError):
    """Loading stopped on findings; nothing may be written from this catalog (exit 1)."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(f"{len(findings)} problem(s) in the catalog")
        self.findings = findings
