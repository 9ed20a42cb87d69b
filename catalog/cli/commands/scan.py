"""`errcat scan [PATH ...] [--json] [--no-cache] [--jobs N] [--strict]`: list raise sites.

With no PATH it scans the configured package (`[tool.errcat] package`, filtered by `include`
and `exclude`). Human output is a table ending with a count line; `--json` writes the contract's
`{"files": N, "sites": [...], "failures": [...]}`. Failures are also reported one per line on
stderr, as `path:line:col: message`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from catalog.core.config import Config, load_config
from catalog.core.project import CACHE_FOLDER

if TYPE_CHECKING:
    from extractor import RaiseSite, ScanReport

NAME = "scan"
HELP = "List the raise sites of the configured package, or of the given files and folders."


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"has value {text!r}; expected a whole number >= 1")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or folders to scan (default: the configured package); "
        "hidden folders and __pycache__ are skipped",
    )
    parser.add_argument("--json", action="store_true", help="write JSON for machines")
    parser.add_argument(
        "--no-cache", action="store_true", help=f"parse every file, ignoring {CACHE_FOLDER}/"
    )
    parser.add_argument(
        "--jobs",
        type=_positive,
        metavar="N",
        help="processes for parsing (default: by CPU count and workload)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when any file could not be scanned"
    )


def _attach_entries(report: ScanReport, config: Config, *, cache: bool = True) -> list[RaiseSite]:
    """Fill each site's catalog `entry` id through the catalog layer.

    Without a catalog folder every `entry` stays null. A catalog with errors is reported in one
    line and leaves them null too: scanning must not depend on the catalog being valid. A site
    is matched as every other command matches it, read through the package's factories and
    classes (`extractor.printed`), while its fields stay the message as written.
    """
    sites = report.sites
    if not config.catalog.is_dir():
        return list(sites)
    from dataclasses import replace

    from catalog.core.project import caching, generated_module
    from catalog.entries.validate import checked_project_catalog
    from catalog.matching.sites import Matcher

    with caching(cache):
        checked = checked_project_catalog(config)
    catalog, findings = checked.catalog, checked.findings
    if findings:
        print(
            f"errcat scan: the catalog has {len(findings)} problem(s), so entries are left null; "
            "run: errcat check",
            file=sys.stderr,
        )
        return list(sites)
    from extractor.printed_cache import read_printed_cached

    read = read_printed_cached(
        report, cwd=Path.cwd(), cache_dir=config.root / CACHE_FOLDER if cache else None
    )
    matcher = Matcher(catalog, generated_module(config))
    attached = []
    # The reading adds helper calls as sites of their own; the scan lists raise statements.
    raised = [site for site in read.sites if not site.call]
    for site, seen in zip(sites, raised, strict=True):
        match = matcher.match(seen)
        attached.append(replace(site, entry=match.entry.id) if match else site)
    return attached


def run(args: argparse.Namespace) -> int:
    """Scan, print the sites, and return 0, 1 (failures with --strict) or 2 (bad PATH)."""
    from catalog.core.project import scan_exclude
    from extractor import scan_paths

    # A missing package folder is reported before this runs (catalog.cli), like every
    # command's; a missing PATH is the scan's own to report.
    config = load_config()
    paths: list[str | Path] = list(args.paths) or [config.package]
    # A missing PATH raises PathError, which catalog.cli reports (exit 2).
    report = scan_paths(
        paths,
        base=config.package,
        include=config.include,
        # The same files every other command reads: the generated module is not the package's.
        exclude=scan_exclude(config),
        cache_dir=None if args.no_cache else config.root / CACHE_FOLDER,
        jobs=args.jobs,
        progress=sys.stderr.isatty(),
        max_file_size=config.max_file_size,
    )
    sites = _attach_entries(report, config, cache=not args.no_cache)
    failures = report.failures
    for failure in failures:
        print(f"{failure}", file=sys.stderr)
    if args.json:
        document = {
            "files": len(report.results),
            "sites": [site.as_dict() for site in sites],
            "failures": [failure.as_dict() for failure in failures],
        }
        sys.stdout.write(json.dumps(document) + "\n")
    else:
        sys.stdout.write(_table(sites))
        print(count_line(report, len(sites)))
    return 1 if args.strict and failures else 0


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def count_line(report: ScanReport, sites: int) -> str:
    """`400 files: 400 ok, 0 failed; 2,393 raise sites`."""
    failed = len(report.failures)
    ok = len(report.results) - failed
    return (
        f"{_plural(len(report.results), 'file')}: {ok:,} ok, {failed:,} failed; "
        f"{_plural(sites, 'raise site')}"
    )


def _table(sites: Sequence[RaiseSite]) -> str:
    rows: list[tuple[str, str, str, str]] = []
    for site in sites:
        what = "(re-raise)" if site.reraise else site.exception or "?"
        message = "" if site.template is None else json.dumps(site.template, ensure_ascii=False)
        remarks: list[str] = []
        if site.function:
            remarks.append(f"in {site.function}")
        if site.ignored is not None:
            remarks.append(f"ignored: {site.ignored}")
        rows.append((f"{site.path}:{site.line}:{site.column}:", what, message, "  ".join(remarks)))
    if not rows:
        return ""
    where_width = max(len(row[0]) for row in rows)
    what_width = min(40, max(len(row[1]) for row in rows))
    out = []
    for where, what, message, notes in rows:
        line = f"{where:<{where_width}}  {what:<{what_width}}  {message}"
        if notes:
            line += ("  " if message else "") + f"[{notes}]"
        out.append(line.rstrip())
    return "\n".join(out) + "\n"
