"""`errcat reproduce [ID ...] [--jobs N] [--timeout S] [--json]`: run calls that should raise
each entry and record those seen to raise it (catalog/evidence/reproduce.py says how)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.evidence.suite import SuiteRun

NAME = "reproduce"
HELP = (
    "call public functions the way their raise sites say they fail, each in its own limited "
    "process without network, and record in the catalog's reproduced.json the calls seen to "
    "raise each entry (all entries, or the IDs given); the only command that runs the "
    "package's code. Exit 0 when the run completes (1 when IDs are given and none of them is "
    "reproduced), 2 on usage errors or an invalid catalog"
)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more: {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text}")
    return value


def _interpreter(path: str) -> bool:
    """Whether `path` (or a command of that name on PATH) runs Python 3.9 or later."""
    import shutil
    import subprocess

    found = shutil.which(path)
    if found is None:
        return False
    try:
        done = subprocess.run(
            [found, "-c", "import sys; sys.exit(sys.version_info < (3, 9))"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def configure(parser: argparse.ArgumentParser) -> None:
    # The evidence stage is imported by `run` alone: every other command builds this parser.
    from catalog.evidence.limits import DEFAULT_TIMEOUT

    parser.add_argument("ids", nargs="*", metavar="ID", help="entries to reproduce (default: all)")
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        help="calls run at once (default: one per CPU, fewer where memory would not hold 4 GiB "
        "for each)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        help=f"seconds one call may run before it is killed (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--no-tests",
        dest="tests",
        action="store_false",
        help="do not run the package's own tests that expect errors",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the interpreter that runs the package's code, its calls and its tests, with "
        "the package's dependencies (and pytest and the tests' requirements) installed: the "
        "project's own environment where errcat is installed apart from it (default: the one "
        "errcat runs on)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of lines"
    )


def run(args: argparse.Namespace) -> int:
    from catalog.authoring.generated_path import check_generated
    from catalog.cli.commands.common import valid_catalog_or_report
    from catalog.core.config import load_config, package_problem
    from catalog.evidence.reproduce import (
        default_jobs,
        record_reproduced,
        reproduce,
        sites_by_entry,
    )
    from catalog.evidence.suite import record_seen, run_suite

    config = load_config()
    problem = package_problem(config)
    if problem is not None:
        print(f"errcat reproduce: {problem}", file=sys.stderr)
        return 2
    # A `generated` outside the project is a ConfigError, reported by the CLI (exit 2).
    check_generated(config)
    catalog = valid_catalog_or_report(config, NAME)
    if catalog is None:
        return 2
    if args.python is not None and not _interpreter(args.python):
        print(
            f"errcat reproduce: --python {args.python}: no Python interpreter runs there",
            file=sys.stderr,
        )
        return 2
    known = catalog.by_id()
    unknown = [entry_id for entry_id in args.ids if entry_id not in known]
    if unknown:
        print(
            f"errcat reproduce: no entry with id {', '.join(unknown)}; "
            "run: errcat explain QUERY to find one",
            file=sys.stderr,
        )
        return 2
    sites = sites_by_entry(config, catalog)
    result = reproduce(
        config,
        catalog,
        only=args.ids or None,
        jobs=args.jobs or default_jobs(),
        timeout=args.timeout,
        sites=sites,
        python=args.python,
    )
    record_reproduced(config.catalog, config.root, result, catalog)
    suite = None
    if args.tests:
        only = [known[entry_id] for entry_id in args.ids] if args.ids else None
        suite = run_suite(config, catalog, sites, only=only, python=args.python)
        record_seen(config.catalog, config.root, suite, catalog, only)
    counts = result.counts()
    missing = result.unimportable()
    summary = (
        f"{len(result.entries)} entries: {counts['reproduced']} reproduced, "
        f"{counts['failed']} failed, {counts['no candidate']} without a candidate"
    )
    if args.json:
        payload = {
            "entries": [entry.as_dict() for entry in result.entries],
            "counts": counts,
            "seconds": round(result.seconds, 3),
            "example_values": result.made,
            "unimportable": missing,
            "tests": None if suite is None else suite.as_dict(),
        }
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for entry in result.entries:
            if entry.reproductions:
                call = _one_line(entry.reproductions[0].call)
                print(f"{entry.entry_id} {entry.name}: reproduced by {call}")
            else:
                print(f"{entry.entry_id} {entry.name}: not reproduced ({_one_line(entry.why)})")
        if result.made:
            print(f"{result.made} values made as the package's docstring examples make them")
        print(summary)
        if suite is not None:
            print(_suite_line(suite))
    if missing:
        # Not the package's errors: what it imports is not installed where the calls ran.
        named = ", ".join(f"{name} ({count} entries)" for name, count in list(missing.items())[:5])
        print(
            f"errcat reproduce: calls could not import {named}: install the package's "
            "dependencies where errcat runs, or pass --python with the project's interpreter",
            file=sys.stderr,
        )
    if args.ids and not counts["reproduced"]:
        return 1
    return 0


def _suite_line(suite: SuiteRun) -> str:
    if suite.ended.startswith("not run"):
        return f"tests: {suite.ended}"
    expectations = len({(s.test_path, s.test_line) for rows in suite.seen.values() for s in rows})
    return (
        f"tests: {suite.files} file(s) run ({suite.ended}, {suite.seconds:.1f} s): "
        f"{expectations} expectation(s) seen catching {len(suite.seen)} entries"
    )


def _one_line(text: str) -> str:
    """A call with the statements it needs (from a docstring's example), on the entry's line:
    simple statements joined by `; `, as Python reads them; a block (`for ...:`) keeps its
    lines, indented under the entry."""
    lines = text.split("\n")
    if any(line[:1].isspace() or line.rstrip().endswith(":") for line in lines):
        return "\n    ".join(lines)
    return "; ".join(lines)
