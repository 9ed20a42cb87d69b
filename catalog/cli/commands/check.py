"""`errcat check [--json] [--examples] [--format github] [--no-cache]`: the staged drift gate,
and the executed examples; `--format github` prints the findings as GitHub Actions annotations."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.core.config import Config
    from catalog.core.findings import Finding
    from catalog.gate.check import CheckResult
    from catalog.gate.examples import ExampleRun

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
    parser.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="text: path:line:col: lines (default); github: GitHub Actions workflow commands "
        "(::error file=...,line=...,col=...::...), which annotate the lines in a pull request",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="scan, load and check everything afresh, reading and writing nothing in "
        ".errcat-cache/",
    )


def _run_examples(config: Config, result: CheckResult) -> tuple[ExampleRun, str] | None:
    """Run the examples, add a finding per failure, record the outcomes with the commit.

    None when the catalog has errors, so there is nothing trustworthy to run.
    """
    from catalog.entries.validate import valid_project_catalog
    from catalog.entries.verified import RESULTS_FILE
    from catalog.gate.examples import (
        current_commit,
        example_findings,
        record_results,
        run_examples,
    )

    if result.skipped:
        result.skipped.append("examples: the catalog has errors")
        return None
    # Served from the cache the catalog stage just filled.
    catalog = valid_project_catalog(config)
    results_path = config.catalog / RESULTS_FILE
    commit = current_commit(config.root, ignore=results_path)
    run = run_examples(catalog, config.root, generate=config.generate)
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


class _Shown:
    """Each finding's path as `Finding.display_path` shows it, worked out once per path.

    A whole-torch check reports some 25,000 findings in 3,500 files; resolving two paths per
    finding took longer than everything else. A path resolves as its folder, resolved once,
    joined with its name, unless the name itself is a symbolic link.
    """

    def __init__(self) -> None:
        base = os.path.realpath(os.getcwd())
        self._base = base
        self._inside = base if base.endswith(os.sep) else base + os.sep
        self._paths: dict[str, str] = {}
        self._folders: dict[str, str] = {}

    def __call__(self, finding: Finding) -> str:
        key = str(finding.path)
        shown = self._paths.get(key)
        if shown is None:
            shown = self._paths[key] = self._show(finding.path)
        return shown

    def _real(self, folder: str) -> str:
        # realpath, one folder at a time: each folder is looked at once, however many files
        # it holds, instead of every component of every path.
        real = self._folders.get(folder)
        if real is None:
            parent, name = os.path.split(folder)
            if not name or parent == folder:
                real = folder
            else:
                candidate = os.path.join(self._real(parent), name)
                real = os.path.realpath(candidate) if os.path.islink(candidate) else candidate
            self._folders[folder] = real
        return real

    def _show(self, path: Path) -> str:
        folder, name = os.path.split(os.path.abspath(path))
        resolved = os.path.join(self._real(folder), name) if name else folder
        if name and os.path.islink(resolved):
            resolved = os.path.realpath(resolved)
        if resolved == self._base:
            return "."
        if resolved.startswith(self._inside):
            return resolved[len(self._inside) :].replace(os.sep, "/")
        return path.as_posix()


def _line(finding: Finding, shown: str) -> str:
    # Finding.format, with the path already shown.
    label = "warning: " if finding.severity == "warning" else ""
    tail = f"; {finding.fix}" if finding.fix else ""
    return f"{shown}:{finding.line}:{finding.column}: {label}{finding.message}{tail}"


def _print_json(findings: list[Finding], shown: _Shown, extra: dict[str, object]) -> None:
    """What `print_findings(as_json=True)` prints, with each path shown once (see _Shown).

    `json.dump` with an indent runs the encoder in pure Python, a second for a whole-torch
    report; the findings, flat objects of strings and numbers, are written here the way it
    writes them, each value through the C encoder.
    """
    from catalog.core.findings import Severity

    errors = sum(f.severity is Severity.ERROR for f in findings)
    placeholder = "\0findings\0"
    payload: dict[str, object] = {
        "ok": not errors,
        "errors": errors,
        "warnings": sum(f.severity is Severity.WARNING for f in findings),
        "findings": placeholder,
    }
    payload.update(extra)
    text = json.dumps(payload, indent=2)
    encode = json.dumps
    rows = [
        "    {\n"
        f'      "path": {encode(shown(f))},\n'
        f'      "line": {f.line},\n'
        f'      "column": {f.column},\n'
        f'      "severity": {encode(f.severity.value)},\n'
        f'      "stage": {encode(f.stage)},\n'
        f'      "message": {encode(f.message)},\n'
        f'      "fix": {encode(f.fix)}\n'
        "    }"
        for f in findings
    ]
    array = "[\n" + ",\n".join(rows) + "\n  ]" if rows else "[]"
    sys.stdout.write(text.replace(json.dumps(placeholder), array, 1) + "\n")


def _print_lines(findings: Iterable[Finding], shown: _Shown) -> None:
    sys.stdout.write("".join(_line(f, shown(f)) + "\n" for f in findings))


def _escape_data(text: str) -> str:
    # GitHub's workflow command syntax: the message ends the line, so %, CR and LF are encoded.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    # In properties `,` separates them and `:` (of `::`) ends them, so those are encoded too.
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(kind: str, path: str, line: int, column: int, message: str) -> str:
    """One GitHub Actions workflow command (`::error file=...,line=...,col=...::message`)."""
    return (
        f"::{kind} file={_escape_property(path)},line={line},col={column}::{_escape_data(message)}"
    )


def _print_github(findings: Iterable[Finding], shown: _Shown) -> None:
    rows = []
    for f in findings:
        kind = "warning" if f.severity == "warning" else "error"
        text = f"{f.message}; {f.fix}" if f.fix else f.message
        rows.append(github_command(kind, shown(f), f.line, f.column, text) + "\n")
    sys.stdout.write("".join(rows))


def run(args: argparse.Namespace) -> int:
    """Run the check; the cyclic garbage collector is paused meanwhile (see
    `catalog.gate.check.paused_collector`)."""
    from catalog.core.project import caching
    from catalog.gate.check import paused_collector

    with paused_collector(), caching(not args.no_cache):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    from catalog.authoring.generated_path import check_generated
    from catalog.core.config import load_config
    from catalog.core.project import generated_module, scan_package
    from catalog.gate.check import run_check, sort_findings

    if args.json and args.format != "text":
        print(
            "errcat check: --json and --format github are alternatives; give one", file=sys.stderr
        )
        return 2
    config = load_config()
    check_generated(config)  # a ConfigError (exit 2) when `generated` names a path it may not
    result = run_check(config, scan_package, generated_module(config))
    examples = None
    if args.examples:
        from catalog.core.worker_process import WorkerFailed

        try:
            examples = _run_examples(config, result)
        except WorkerFailed as exc:
            print(f"errcat check: cannot run the examples: {exc}", file=sys.stderr)
            return exc.exit_code
    findings = sort_findings(result.findings)
    errors = result.errors
    summary: dict[str, object] = {
        "entries": result.entries,
        "files": result.files,
        "sites": result.sites,
        "skipped": result.skipped,
    }
    if args.examples:
        summary["examples"] = _examples_summary(*examples) if examples else None
    shown = _Shown()
    if args.json:
        _print_json(findings, shown, summary)
    else:
        # Drafts are expected while a catalog is being written: one line per file, not per entry.
        drafts = [f for f in findings if f.stage == "drafts"]
        others = [f for f in findings if f.stage != "drafts"]
        by_file: dict[str, list[Finding]] = {}
        for finding in drafts:
            by_file.setdefault(shown(finding), []).append(finding)
        per_file = []
        for path, group in by_file.items():
            names = ", ".join(f.message.split("(")[1].split(")")[0] for f in group[:3])
            more = f" and {len(group) - 3} more" if len(group) > 3 else ""
            message = (
                f"{len(group)} draft entr{'y' if len(group) == 1 else 'ies'} ({names}{more}); "
                "write their prose and set status: active"
            )
            per_file.append((path, group[0].line, group[0].column, message))
        if args.format == "github":
            _print_github(others, shown)
            for path, line, column, message in per_file:
                print(github_command("warning", path, line, column, message))
        else:
            _print_lines(others, shown)
            for path, line, column, message in per_file:
                print(f"{path}:{line}:{column}: warning: {message}")
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
        verdict = "failed" if errors else "ok"
        print(
            f"errcat check {verdict}: {errors} error(s), {result.warnings} warning(s); "
            f"{result.entries} entries, {result.sites} raise sites in {result.files} files"
        )
    return 1 if errors else 0
