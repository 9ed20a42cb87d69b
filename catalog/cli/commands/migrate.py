"""`errcat migrate [--dry-run]`: rewrite raw raises of catalogued messages into typed raises."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from catalog.authoring.import_style import ImportStyle
    from catalog.authoring.renames import Rename
    from catalog.core.config import Config
    from catalog.core.model import Catalog

NAME = "migrate"
HELP = "rewrite raw raises of catalogued messages into typed raises (writes unless --dry-run)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="print the diff instead of writing")


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    from collections import defaultdict

    from catalog.authoring.codegen import nothing_to_generate, write_atomically
    from catalog.authoring.import_style import read_import_style
    from catalog.authoring.migrate import MigrateError, Rewrite, migrate_source
    from catalog.authoring.renames import find_renames
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
    # The import goes where the project's own sorter (ruff or isort, as it is configured)
    # would put it, so that migrating adds no lint finding.
    style = read_import_style(config.root, target_module.split(".")[0])
    renames = find_renames(catalog, config.generated)
    if renames:
        code = _rename(config, catalog, renames, target_module, style, dry_run=args.dry_run)
        if code is not None:
            return code
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
            # A raise of an exception built earlier (`err = X(...); raise err`): the call
            # assigned becomes the typed one, and `raise err` stays.
            Rewrite(site.line, site.column, match.entry.name, message.arguments, site.via)
        )
    relative = _relative(config, target_module)
    changed = 0
    for path, file_rewrites in sorted(rewrites.items()):
        before = path.read_text(encoding="utf-8")
        try:
            after = migrate_source(
                before, file_rewrites, target_module, style, _package_of(config, path, relative)
            )
        except MigrateError as exc:
            print(f"{path}: {exc}; file left unchanged", file=sys.stderr)
            continue
        if after == before:
            continue
        changed += 1
        if args.dry_run:
            _print_diff(config.root, path, before, after)
        else:
            write_atomically(path, after)
    count = sum(len(r) for r in rewrites.values())
    verb = "would rewrite" if args.dry_run else "rewrote"
    print(
        f"errcat migrate: {verb} {count} raise(s) in {changed} file(s)",
        file=sys.stderr if args.dry_run else sys.stdout,
    )
    return 0


def _relative(config: Config, module: str) -> bool:
    """Whether the package imports itself only relatively, so its files import the
    generated module relatively too (see `imports_itself_relatively`)."""
    from catalog.authoring.migrate import imports_itself_relatively

    def sources() -> Iterator[str]:
        for path in sorted(config.package.rglob("*.py")):
            if path != config.generated:
                try:
                    yield path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue

    return imports_itself_relatively(module.split(".")[0], sources())


def _package_of(config: Config, path: Path, relative: bool) -> str | None:
    """The package a file belongs to, which its relative imports start from; None for an
    absolute import."""
    from catalog.core.project import module_name

    if not relative:
        return None
    name = module_name(config, path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _print_diff(root: Path, path: Path, before: str, after: str) -> None:
    import difflib

    shown = path.relative_to(root).as_posix()
    sys.stdout.writelines(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{shown}",
            tofile=f"b/{shown}",
        )
    )


def _rename(
    config: Config,
    catalog: Catalog,
    renames: list[Rename],
    module: str,
    style: ImportStyle,
    *,
    dry_run: bool,
) -> int | None:
    """Call each renamed class by its new name throughout the package, then write the module
    (the old names are known only from the module on disk: both change together). An exit
    code when migrate must stop here, None to go on with the raw raises."""
    from catalog.authoring.codegen import generated_files, is_generated, write_all_atomically
    from catalog.authoring.generated_path import GeneratedPathRefused, check_owned
    from catalog.authoring.migrate import MigrateError, rename_source
    from catalog.authoring.renames import mentions
    from catalog.core.config import docs_base_url
    from catalog.core.project import scan_package
    from catalog.gate.check import requires_python_findings

    unservable = requires_python_findings(config)
    if unservable:
        for finding in unservable:
            print(finding.format(), file=sys.stderr)
        print("errcat migrate: nothing renamed", file=sys.stderr)
        return 1
    names = {rename.old: rename.new for rename in renames}
    for rename in renames:
        print(f"errcat migrate: entry {rename.entry_id}: {rename.old} → {rename.new}")
    writes: dict[Path, str] = {}
    for result in scan_package(config).results:
        path = config.root / result.path
        try:
            before = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # the scan reports it
        if not mentions(before, names):
            continue
        try:
            after = rename_source(
                before, names, module, style, _package_of(config, path, _relative(config, module))
            )
        except MigrateError as exc:
            # Half a rename would leave the package importing a class that is gone.
            print(f"{path}: {exc}; nothing renamed", file=sys.stderr)
            return 1
        if after != before:
            writes[path] = after
            if dry_run:
                _print_diff(config.root, path, before, after)
    if dry_run:
        print(
            f"errcat migrate: would rename {len(renames)} class(es) in {len(writes)} file(s), "
            "then write the module; raw raises are rewritten after that (run without --dry-run)",
            file=sys.stderr,
        )
        return 0
    renamed_files = len(writes)
    generated = generated_files(catalog, docs_base_url(config), config.generated)
    try:
        for target, text in generated.items():
            if text is not None:
                check_owned(config, target)
    except GeneratedPathRefused as exc:
        print(f"errcat migrate: {exc}; nothing written", file=sys.stderr)
        return exc.exit_code
    for target, text in generated.items():
        if text is not None:
            writes[target] = text
        elif target.is_file() and is_generated(
            target.read_text(encoding="utf-8", errors="replace")
        ):
            target.unlink()  # a stub of the compact form the catalog no longer needs
    write_all_atomically(writes)
    print(
        f"errcat migrate: renamed {len(renames)} class(es) in {renamed_files} file(s) and wrote "
        "the module"
    )
    return None
