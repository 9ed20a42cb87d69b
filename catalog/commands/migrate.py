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

    from catalog.codegen import write_atomically
    from catalog.commands.common import (
        generated_module,
        scan_package,
        valid_catalog_or_report,
    )
    from catalog.config import load_config
    from catalog.match import Matcher
    from catalog.migrate import MigrateError, Rewrite, migrate_source
    from catalog.templates import to_catalog_message

    config = load_config()
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
    matcher = Matcher(catalog, target_module)
    rewrites: dict[Path, list[Rewrite]] = defaultdict(list)
    for site in scan_package(config).sites:
        match = matcher.match(site)
        if match is None or match.typed or site.ignored is not None or site.template is None:
            continue
        arguments = to_catalog_message(site.template).arguments
        rewrites[config.root / site.path].append(
            Rewrite(site.line, site.column, match.entry.name, arguments)
        )
    changed = 0
    for path, file_rewrites in sorted(rewrites.items()):
        before = path.read_text(encoding="utf-8")
        try:
            after = migrate_source(before, file_rewrites, target_module)
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
