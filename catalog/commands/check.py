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
    from catalog.findings import Finding

    config = load_config()
    result = run_check(config, scan_package, generated_module(config))
    findings = sort_findings(result.findings)
    summary = {
        "entries": result.entries,
        "files": result.files,
        "sites": result.sites,
        "skipped": result.skipped,
    }
    if args.json:
        print_findings(findings, as_json=True, extra=summary)
    else:
        # Drafts are expected while a catalog is being written: one line per file, not per entry.
        drafts = [f for f in findings if f.stage == "drafts"]
        print_findings(
            [f for f in findings if f.stage != "drafts"], as_json=False, stream=sys.stdout
        )
        by_file: dict[str, list[Finding]] = {}
        for finding in drafts:
            by_file.setdefault(finding.display_path(), []).append(finding)
        for path, group in by_file.items():
            names = ", ".join(f.message.split("(")[1].split(")")[0] for f in group[:3])
            more = f" and {len(group) - 3} more" if len(group) > 3 else ""
            print(
                f"{path}:{group[0].line}:{group[0].column}: warning: {len(group)} draft "
                f"entr{'y' if len(group) == 1 else 'ies'} ({names}{more}); "
                "write their prose and set status: active"
            )
    if not args.json:
        for skipped in result.skipped:
            print(f"errcat check: skipped {skipped}")
        verdict = "failed" if result.errors else "ok"
        print(
            f"errcat check {verdict}: {result.errors} error(s), {result.warnings} warning(s); "
            f"{result.entries} entries, {result.sites} raise sites in {result.files} files"
        )
    return 1 if result.errors else 0
