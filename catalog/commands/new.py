"""`errcat new [--dry-run]`: scaffold draft entries for raise sites the catalog does not know."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "new"
HELP = "scaffold draft catalog entries for uncatalogued raise sites (writes unless --dry-run)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run", action="store_true", help="print the entries instead of writing them"
    )


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    from collections import defaultdict

    from catalog.codegen import write_all_atomically
    from catalog.commands.common import (
        generated_module,
        module_name,
        print_findings,
        scan_package,
        valid_catalog_or_report,
    )
    from catalog.config import load_config
    from catalog.loader import load_bytes
    from catalog.match import Matcher, builtin_name
    from catalog.scaffold import Draft, catalog_path, file_text, plan_drafts
    from catalog.templates import to_catalog_message

    config = load_config()
    catalog = valid_catalog_or_report(config, "new")
    if catalog is None:
        return 1
    report = scan_package(config)
    matcher = Matcher(catalog, generated_module(config))
    groups: dict[tuple[str, str, str], None] = {}
    skipped: list[str] = []
    for site in report.sites:
        if (
            site.reraise
            or site.ignored is not None
            or matcher.match(site)
            or matcher.is_generated_class(site)
        ):
            continue
        exception = builtin_name(site)
        where = f"{site.path}:{site.line}:{site.column}"
        if exception is None or site.template is None:
            why = (
                "raises a non-built-in exception" if exception is None else "has no literal message"
            )
            skipped.append(
                f"{where}: skipped: {why}; write its entry by hand or mark it # errcat: ignore[reason]"
            )
            continue
        try:
            message = to_catalog_message(site.template).message
        except ValueError as exc:
            skipped.append(f"{where}: skipped: {exc}")
            continue
        module = module_name(config, config.root / site.path)
        groups.setdefault((module, exception, message), None)
    drafts = plan_drafts(
        groups,
        package=config.package.name,
        taken_ids={entry.id for entry in catalog},
        taken_names={entry.name for entry in catalog},
    )
    by_file: dict[Path, list[Draft]] = defaultdict(list)
    for draft in drafts:
        by_file[catalog_path(config.catalog, config.package.name, draft.module)].append(draft)
    for line in skipped:
        print(line, file=sys.stderr)
    # Compose every file first and re-load it: nothing is written unless all of them are valid.
    planned: dict[Path, str] = {}
    for path, file_drafts in sorted(by_file.items()):
        existing = path.read_text(encoding="utf-8") if path.is_file() else None
        planned[path] = file_text(existing, file_drafts[0].module, file_drafts)
    problems = [
        f for path, text in planned.items() for f in load_bytes(path, text.encode("utf-8"))[1]
    ]
    if problems:  # e.g. an existing file whose `errors:` list is not last, so appending breaks it
        print_findings(problems, as_json=False)
        print("errcat new: the drafts would not load; nothing written", file=sys.stderr)
        return 1
    if args.dry_run:
        for path, text in planned.items():
            print(f"--- {path.relative_to(config.root)}")
            print(text, end="")
        print(
            f"errcat new: {len(drafts)} draft(s) for {len(planned)} file(s) (dry run; nothing written)"
        )
        return 0
    write_all_atomically(planned)
    print(f"errcat new: wrote {len(drafts)} draft(s) to {len(planned)} file(s)")
    if drafts:
        print("next: write their prose, then run errcat codegen and errcat migrate")
    return 0
