"""`errcat check [--json] [--examples]`: the staged drift gate, and the executed examples."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.check import CheckResult
    from catalog.config import Config
    from catalog.examples import ExampleRun

NAME = "check"
HELP = "check the catalog, the generated module and every raise site of the package for drift"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of lines"
    )
    parser.add_argument(
        "--examples",
        action="store_true",
        help="also run every entry's example and record the outcomes in the results file",
    )


def _run_examples(config: Config, result: CheckResult) -> tuple[ExampleRun, str] | None:
    """Run the examples, add a finding per failure, record the outcomes with the commit.

    None when the catalog has errors, so there is nothing trustworthy to run.
    """
    from catalog.examples import current_commit, example_findings, record_results, run_examples
    from catalog.validate import load_valid_catalog
    from catalog.verified import RESULTS_FILE

    if result.skipped:
        result.skipped.append("examples: the catalog has errors")
        return None
    catalog = load_valid_catalog(config.catalog)
    results_path = config.catalog / RESULTS_FILE
    commit = current_commit(config.root, ignore=results_path)
    run = run_examples(catalog, config.root)
    result.findings += example_findings(run)
    record_results(results_path, run, commit, catalog)
    return run, commit


def _examples_summary(run: ExampleRun, commit: str) -> dict[str, object]:
    return {
        "platform": run.platform,
        "commit": commit,
        **run.counts(),
        "results": [
            {"id": r.entry_id, "name": r.name, "outcome": r.outcome, "reason": r.reason}
            for r in run.results
        ],
    }


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    from catalog.check import run_check, sort_findings
    from catalog.commands.common import print_findings
    from catalog.config import load_config
    from catalog.examples import WorkerFailed
    from catalog.findings import Finding
    from catalog.project import generated_module, scan_package

    config = load_config()
    result = run_check(config, scan_package, generated_module(config))
    examples = None
    if args.examples:
        try:
            examples = _run_examples(config, result)
        except WorkerFailed as exc:
            print(f"errcat check: cannot run the examples: {exc}", file=sys.stderr)
            return 2
    findings = sort_findings(result.findings)
    summary: dict[str, object] = {
        "entries": result.entries,
        "files": result.files,
        "sites": result.sites,
        "skipped": result.skipped,
    }
    if args.examples:
        summary["examples"] = _examples_summary(*examples) if examples else None
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
        if examples is not None:
            example_run, commit = examples
            for skipped_example in example_run.results:
                if skipped_example.outcome == "skipped":
                    print(
                        f"errcat check: skipped example of {skipped_example.entry_id} "
                        f"({skipped_example.name}): {skipped_example.reason}"
                    )
            counts = example_run.counts()
            print(
                f"errcat check: examples on {example_run.platform} at {commit}: "
                f"{counts['verified']} verified, {counts['failed']} failed, "
                f"{counts['skipped']} skipped"
            )
        verdict = "failed" if result.errors else "ok"
        print(
            f"errcat check {verdict}: {result.errors} error(s), {result.warnings} warning(s); "
            f"{result.entries} entries, {result.sites} raise sites in {result.files} files"
        )
    return 1 if result.errors else 0
