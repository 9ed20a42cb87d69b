"""`errcat check`: the drift gate, in stages, every finding reported together.

Stages: the catalog parses and fits the schema and its entries agree with each other; the
generated module is current; every raise site of the package is catalogued, re-raised or exempted;
every live entry is raised somewhere; every exemption still sits on a raise. Drafts are warnings.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from catalog.codegen import generate
from catalog.config import Config, read_site_settings
from catalog.exceptions import has_typed_class, site_exception
from catalog.findings import Finding, Severity
from catalog.loader import load_catalog
from catalog.match import Matcher
from catalog.model import Catalog, Status
from catalog.project import defined_classes
from catalog.validate import draft_warnings, validate
from extractor.model import RaiseSite, ScanReport

IGNORE_COMMENT = re.compile(r"#\s*errcat:\s*ignore\[([^\]]*)\]")

Scanner = Callable[[Config], ScanReport]
"""Scans the configured package (the generated module excluded)."""


@dataclass
class CheckResult:
    """Everything `errcat check` found, and what it looked at."""

    findings: list[Finding] = field(default_factory=list)
    entries: int = 0
    sites: int = 0
    files: int = 0
    skipped: list[str] = field(default_factory=list)
    """Stages not run because an earlier one failed, with why."""

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity is Severity.WARNING for f in self.findings)


def _site_finding(site: RaiseSite, message: str, fix: str | None) -> Finding:
    return Finding(Path(site.path), site.line, site.column, message, fix, stage="sites")


def _rooted(config: Config, report: ScanReport) -> ScanReport:
    """The report with paths made absolute (scans of the package report them root-relative)."""

    def fix(path: str) -> str:
        return (config.root / path).as_posix()

    results = tuple(
        replace(
            result,
            path=fix(result.path),
            sites=tuple(replace(site, path=fix(site.path)) for site in result.sites),
            failure=replace(result.failure, path=fix(result.failure.path))
            if result.failure
            else None,
        )
        for result in report.results
    )
    return replace(report, results=results)


def _ignore_comments(path: Path) -> list[tuple[int, int, str]]:
    """`(line, column, reason)` of every errcat ignore comment in a Python file."""
    try:
        source = path.read_text(encoding="utf-8")
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (OSError, UnicodeDecodeError, SyntaxError, tokenize.TokenError):
        return []  # the scan stage reports files it cannot read
    found = []
    for token in tokens:
        if token.type == tokenize.COMMENT:
            match = IGNORE_COMMENT.search(token.string)
            if match:
                found.append((token.start[0], token.start[1] + 1, match.group(1)))
    return found


def check_catalog_stage(config: Config) -> tuple[Catalog, list[Finding]]:
    """Stage 1: parse, schema and cross-entry checks."""
    catalog, findings = load_catalog(config.catalog)
    findings += validate(catalog)
    return catalog, findings


def requires_python_findings(config: Config) -> list[Finding]:
    """The declared `requires-python` admits no Python the generated module cannot serve."""
    from catalog.pythons import read_requires_python

    if not config.has_pyproject:
        return []
    declared = read_requires_python(config.root / "pyproject.toml")
    finding = declared.finding() if declared is not None else None
    return [] if finding is None else [replace(finding, stage="codegen")]


def check_codegen_stage(config: Config, catalog: Catalog) -> list[Finding]:
    """Stage 2: the generated module equals what codegen would write now, for every Python
    the package declares."""
    findings = requires_python_findings(config)
    expected = generate(catalog, read_site_settings(config.root).site_url)
    target = config.generated
    current = target.read_text(encoding="utf-8") if target.is_file() else None
    if current == expected:
        return findings
    what = (
        "is missing" if current is None else "is stale: it differs from what the catalog generates"
    )
    return [
        *findings,
        Finding(
            target, 1, 1, f"the generated module {what}", "run: errcat codegen", stage="codegen"
        ),
    ]


def check_sites_stage(
    config: Config, catalog: Catalog, report: ScanReport, generated_module: str
) -> list[Finding]:
    """Stages 3 to 5: sites against entries, entries against sites, exemptions against sites."""
    findings: list[Finding] = []
    matcher = Matcher(catalog, generated_module)
    raised: set[str] = set()
    exempted_lines: set[tuple[str, int]] = set()
    for failure in report.failures:
        findings.append(
            Finding(
                Path(failure.path),
                failure.line,
                failure.column,
                f"cannot scan: {failure.message}",
                "fix the file so Python can parse it",
                stage="sites",
            )
        )
    for site in report.sites:
        if site.reraise:
            continue
        match = matcher.match(site)
        if site.ignored is not None:
            exempted_lines.add((Path(site.path).resolve().as_posix(), site.line))
            if match is not None and match.typed:
                findings.append(
                    _site_finding(
                        site,
                        f"exemption [{site.ignored}] on a catalogued raise of {match.entry.name} is not needed",
                        "remove the errcat: ignore comment",
                    )
                )
            continue
        if match is not None:
            raised.add(match.entry.id)
            if match.entry.status is Status.RETIRED:
                findings.append(
                    _site_finding(
                        site,
                        f"raises retired entry {match.entry.id} ({match.entry.name})",
                        "raise its replacement, or set the entry's status back to active",
                    )
                )
            elif match.needs_migration:
                findings.append(
                    _site_finding(
                        site,
                        f"raises {match.entry.exception} with the message of entry {match.entry.id}; "
                        f"raise the typed {match.entry.name} instead",
                        "run: errcat migrate",
                    )
                )
            continue
        if matcher.is_generated_class(site):
            findings.append(
                _site_finding(
                    site,
                    f"raises {site.qualified_name}, which is not in the catalog",
                    "restore its entry, or raise a catalogued class",
                )
            )
            continue
        shown = site_exception(site.qualified_name) or site.exception or "an expression"
        findings.append(
            _site_finding(
                site,
                f"uncatalogued raise of {shown}",
                "run: errcat new, then errcat migrate; or mark it # errcat: ignore[reason]",
            )
        )
    classes = defined_classes(config, report)
    for entry in catalog:
        if has_typed_class(entry.exception) and entry.name in classes:
            # migrate imports the generated class into the package's modules by this name.
            findings.append(
                Finding.at(
                    entry.where("name"),
                    f"name {entry.name} is also a class of the package "
                    f"({Path(classes[entry.name]).name}); the two would shadow each other",
                    "rename the entry and its raises",
                    stage="entries",
                )
            )
        if entry.status is not Status.RETIRED and entry.id not in raised:
            at = entry.position
            findings.append(
                Finding.at(
                    at,
                    f"entry {entry.id} ({entry.name}) is raised nowhere in {config.package.name}",
                    "raise it, or set status: retired with a retired_reason",
                    stage="entries",
                )
            )
    scanned = sorted({Path(result.path).resolve() for result in report.results if result.ok})
    for path in scanned:
        for line, column, reason in _ignore_comments(path):
            if (path.as_posix(), line) not in exempted_lines:
                findings.append(
                    Finding(
                        path,
                        line,
                        column,
                        f"exemption [{reason}] matches no raise site",
                        "remove the comment, or move it onto the raise line",
                        stage="exemptions",
                    )
                )
    return findings


def run_check(config: Config, scanner: Scanner, generated_module: str) -> CheckResult:
    """All stages; later stages are skipped when the catalog itself is invalid."""
    result = CheckResult()
    catalog, findings = check_catalog_stage(config)
    result.findings += findings
    result.entries = len(catalog)
    if findings:
        result.skipped.append("codegen, sites, entries and exemptions: the catalog has errors")
        return result
    result.findings += check_codegen_stage(config, catalog)
    report = _rooted(config, scanner(config))
    result.sites, result.files = len(report.sites), len(report.results)
    result.findings += check_sites_stage(config, catalog, report, generated_module)
    result.findings += draft_warnings(catalog)
    return result


def sort_findings(findings: Sequence[Finding]) -> list[Finding]:
    """Errors first, then by place."""
    return sorted(
        findings, key=lambda f: (f.severity is Severity.WARNING, str(f.path), f.line, f.column)
    )
