"""`errcat stats [--json] [--no-cache]`: coverage figures of the catalog and the package."""

from __future__ import annotations

import argparse
import json
import sys

NAME = "stats"
HELP = "report raise sites catalogued, entries complete and examples verified per platform"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of lines"
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="scan and load everything afresh, reading and writing nothing in .errcat-cache/",
    )


def run(args: argparse.Namespace) -> int:
    """Print the figures; the cyclic garbage collector is paused meanwhile (see
    `catalog.gate.check.paused_collector`)."""
    from catalog.core.project import caching
    from catalog.gate.check import paused_collector

    with paused_collector(), caching(not args.no_cache):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from catalog.core.config import load_config
    from catalog.core.errors import CatalogUnusable
    from catalog.core.findings import CatalogInvalid
    from catalog.gate.stats import compute_stats

    config = load_config()
    try:
        stats = compute_stats(config)
    except CatalogInvalid as exc:
        # An invalid catalog is check's finding; stats merely cannot count from one.
        raise CatalogUnusable(len(exc.findings)) from exc
    if args.json:
        json.dump(stats.as_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    statuses = ", ".join(f"{count} {status}" for status, count in stats.entries_by_status.items())
    print(
        f"raise sites catalogued: {stats.sites_catalogued}/{stats.sites} "
        f"({stats.sites_percent:g}%), {stats.sites_exempted} exempted"
    )
    print(f"entries: {sum(stats.entries_by_status.values())} ({statuses})")
    print(
        f"entries complete: {stats.entries_complete}/{stats.entries_live} "
        f"({stats.complete_percent:g}%)"
    )
    if not stats.examples_verified:
        print(f"examples verified: none of {stats.examples} (run: errcat check --examples)")
    for platform, count in stats.examples_verified.items():
        print(f"examples verified on {platform}: {count}/{stats.examples}")
    return 0
