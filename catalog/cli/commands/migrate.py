"""`errcat migrate [--dry-run]`: rewrite raw raises of catalogued messages into typed raises."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "migrate"
HELP = "rewrite raw raises of catalogued messages into typed raises (writes unless --dry-run)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="print the diff instead of writing")


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    import difflib
    from collections import defaultdict

    from catalog.authoring.codegen import nothing_to_generate, write_atomically
    from catalog.authoring.import_style import read_import_style
    from catalog.authoring.migrate import MigrateError, Rewrite, migrate_source
    from catalog.cli.commands.common import print_findings, valid_catalog_or_report
    from catalog.core.config import load_config
    from catalog.core.project import generated_module, scan_package
    from catalog.gate.check import check_codegen_stage
    from catalog.matching.sites import Matcher, site_message

    config = load_config()
    if said := nothing_to_generate(config, "migrate"):
        print(said)
        return 0
    catalog = valid_catalog_or_report(config, "migrate")
    if catalog is None:
        return 1
    target_module = generated_module(config)
    if not config.generated.is_file():
        print(
            f"errcat migrate: {config.generated} does not exist; run: errcat codegen",
            file=sys.stderr,
        )
        return 2
    stale = check_codegen_stage(config, catalog)
    if stale:
        # Raises would import classes the module on disk may not define yet.
        print_findings(stale, as_json=False)
        print("errcat migrate: nothing rewritten", file=sys.stderr)
        return 1
    matcher = Matcher(catalog, target_module)
    rewrites: dict[Path, list[Rewrite]] = defaultdict(list)
    for site in scan_package(config).sites:
        match = matcher.match(site)
        if match is None or not match.needs_migration or site.ignored is not None:
            continue
        if site.via is not None:
            # Rewriting `raise err` alone would leave the raw exception built and unused.
            print(
                f"{config.root / site.path}:{site.line}:{site.column}: cannot rewrite: it raises "
                f"{site.via}, a {match.entry.exception} built earlier; raise {match.entry.name} "
                "by hand",
                file=sys.stderr,
            )
            continue
        message = site_message(site)
        if message is None or len(site.arguments or ()) > 1 or site.keywords:
            print(
                f"{config.root / site.path}:{site.line}:{site.column}: cannot rewrite: it passes "
                f"more than a message to {match.entry.exception}; raise {match.entry.name} "
                "by hand",
                file=sys.stderr,
            )
            continue
        rewrites[config.root / site.path].append(
            Rewrite(site.line, site.column, match.entry.name, message.arguments)
        )
    # The import goes where the project's own sorter (ruff or isort, as it is configured)
    # would put it, so that migrating adds no lint finding.
    style = read_import_style(config.root, target_module.split(".")[0])
    changed = 0
    for path, file_rewrites in sorted(rewrites.items()):
        before = path.read_text(encoding="utf-8")
        try:
            after = migrate_source(before, file_rewrites, target_module, style)
        except MigrateError as exc:
            print(f"{path}: {exc}; file left unchanged", file=sys.stderr)
            continue
        if after == before:
            continue
        changed += 1
        if args.dry_run:
            sys.stdout.writelines(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    fromfile=f"a/{path.relative_to(config.root).as_posix()}",
                    tofile=f"b/{path.relative_to(config.root).as_posix()}",
                )
            )
        else:
            write_atomically(path, after)
    count = sum(len(r) for r in rewrites.values())
    verb = "would rewrite" if args.dry_run else "rewrote"
    print(
        f"errcat migrate: {verb} {count} raise(s) in {changed} file(s)",
        file=sys.stderr if args.dry_run else sys.stdout,
    )
    return 0
