"""`errcat check [--json]`: the staged drift gate."""

from __future__ import annotations

import argparse
import sys

NAME = "check"
HELP = "check the catalog, the generated module and every raise site of the package for drift"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of lines"
    )


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    from catalog.check import run_check, sort_findings
    from catalog.commands.common import generated_module, print_findings, scan_package
    from catalog.config import load_config

    config = load_config()
    result = run_check(config, scan_package, generated_module(config))
    findings = sort_findings(result.findings)
    summary = {
        "entries": result.entries,
        "files": result.files,
        "sites": result.sites,
        "skipped": result.skipped,
    }
    print_findings(findings, as_json=args.json, extra=summary)
    if not args.json:
        for skipped in result.skipped:
            print(f"errcat check: skipped {skipped}", file=sys.stderr)
        verdict = "failed" if result.errors else "ok"
        print(
            f"errcat check {verdict}: {result.errors} error(s), {result.warnings} warning(s); "
            f"{result.entries} entries, {result.sites} raise sites in {result.files} files",
            file=sys.stderr if result.errors else sys.stdout,
        )
    return 1 if result.errors else 0
