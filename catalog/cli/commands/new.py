"""`errcat new [--dry-run]`: scaffold draft entries for raise sites the catalog does not know."""

from __future__ import annotations

import argparse

NAME = "new"
HELP = "scaffold draft catalog entries for uncatalogued raise sites (writes unless --dry-run)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run", action="store_true", help="print the entries instead of writing them"
    )


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    from catalog.authoring.codegen import write_all_atomically
    from catalog.authoring.drafting import plan_new
    from catalog.cli.commands.common import (
        index_for_explain,
        print_findings,
        valid_catalog_or_report,
    )
    from catalog.core.config import load_config
    from catalog.core.findings import Finding
    from catalog.core.project import scan_package

    config = load_config()
    catalog = valid_catalog_or_report(config, "new")
    if catalog is None:
        return 1
    report = scan_package(config)
    print_findings(
        [
            # A file that cannot be parsed is skipped the way an undraftable site is.
            Finding(
                config.root / failure.path,
                failure.line,
                failure.column,
                f"cannot scan: {failure.message}; no drafts for this file",
                "fix the file so Python can parse it",
                stage="new",
            )
            for failure in report.failures
        ],
        as_json=False,
    )
    plan = plan_new(config, catalog, report)
    print_findings(plan.skipped, as_json=False)
    skipped = len(plan.skipped) + len(report.failures)
    tail = f"; {skipped} site(s) or file(s) skipped, see above" if skipped else ""
    schema = "" if plan.schema is None else str(plan.schema[0].relative_to(config.root))
    if args.dry_run:
        for path, text in plan.files.items():
            print(f"--- {path.relative_to(config.root)}")
            print(text, end="")
        print(
            f"errcat new: {len(plan.drafts)} draft(s) for {len(plan.files)} file(s)"
            f"{f', and the catalog schema for {schema}' if schema else ''}"
            f" (dry run; nothing written){tail}"
        )
        return 0
    files = dict(plan.files)
    if plan.schema is not None:
        # With the drafts, in one atomic write: their modeline points editors at it.
        schema_path, schema_text = plan.schema
        files[schema_path] = schema_text
    write_all_atomically(files)
    if plan.drafts:
        index_for_explain(config)
    print(
        f"errcat new: wrote {len(plan.drafts)} draft(s) to {len(plan.files)} file(s)"
        f"{f', and the catalog schema to {schema}' if schema else ''}{tail}"
    )
    if plan.drafts and config.generate:
        print("next: run errcat codegen and errcat migrate, then write their prose")
    elif plan.drafts:
        # `generated = false`: every entry is catalogued in place, its raises left as written.
        print("next: write their prose")
    return 0
