"""`errcat codegen [--check]`: write the typed-exception module (and its stub) from the catalog."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.core.config import Config
    from catalog.core.model import Catalog

NAME = "codegen"
HELP = "write the typed-exception module (default runtime/errors.py) from the catalog"
NO_DOCS_LINK = (
    "errcat codegen: no docs site is configured, so the generated errors carry no docs link; "
    "to add one, set site_url in mkdocs.yml or [tool.errcat] site_url in pyproject.toml, or "
    'name the package\'s documentation in [project.urls] (Documentation = "https://...")'
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 with a diff when the module (or its stub) is stale",
    )


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    from catalog.authoring.codegen import (
        diff,
        generated_classes,
        generated_files,
        is_generated,
        nothing_to_generate,
        same_module,
        write_all_atomically,
    )
    from catalog.authoring.generated_path import (
        GeneratedPathRefused,
        check_generated,
        check_owned,
    )
    from catalog.cli.commands.common import valid_catalog_or_report
    from catalog.core.config import docs_base_url, load_config
    from catalog.gate.check import requires_python_findings

    config = load_config()
    if said := nothing_to_generate(config, "codegen"):
        print(said)
        return 0
    try:
        # Before anything else: a path that names someone else's file is never written.
        check_generated(config)
    except GeneratedPathRefused as exc:
        print(f"errcat codegen: {exc}; nothing written", file=sys.stderr)
        return exc.exit_code
    # The module would fail on the Pythons below the one it supports; a package declaring
    # them must raise its floor before it ships typed raises.
    unservable = requires_python_findings(config)
    if unservable:
        for finding in unservable:
            print(finding.format(), file=sys.stderr)
        print("errcat codegen: nothing written", file=sys.stderr)
        return 1
    # The same resolution as `errcat check`, which compares the module with what this writes.
    base_url = docs_base_url(config)
    catalog = valid_catalog_or_report(config, "codegen")
    if catalog is None:
        return 1
    classes = len(generated_classes(catalog))
    if base_url is None:
        # Once per run, whatever it writes: the module is correct without links, but the
        # maintainer should know why none appear.
        print(NO_DOCS_LINK, file=sys.stderr)

    def shown(target: Path) -> str:
        if target.is_relative_to(config.root):
            return target.relative_to(config.root).as_posix()
        return str(target)

    writes: dict[Path, str] = {}
    removals: list[Path] = []
    for target, expected in generated_files(catalog, base_url, config.generated).items():
        current = target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
        if expected is None:
            # The written-out form has no stub: one left by an earlier, larger catalog goes.
            if current is not None and is_generated(current):
                removals.append(target)
        elif current is None or not same_module(current, expected):
            writes[target] = expected
    module = shown(config.generated)
    if not writes and not removals:
        print(f"{module} is up to date ({classes} classes)")
        return 0
    stale = [*writes, *removals]
    if args.check:
        for target in stale:
            current = (
                target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
            )
            sys.stdout.write(diff(current, writes.get(target, ""), shown(target)))
        names = " and ".join(shown(target) for target in stale)
        verb = "is" if len(stale) == 1 else "are"
        print(f"{names} {verb} stale; run: errcat codegen", file=sys.stderr)
        return 1
    if in_use := _renamed_in_use(config, catalog):
        # The old names are known only from the module on disk: writing it now would leave the
        # package importing classes that no longer exist, with nothing left to say what they
        # became. migrate renames the raises and writes the module together.
        for line in in_use:
            print(line, file=sys.stderr)
        print("errcat codegen: nothing written; run: errcat migrate", file=sys.stderr)
        return 1
    try:
        # The stub beside the module is written only in the table form: the same rule holds.
        for target in writes:
            check_owned(config, target)
    except GeneratedPathRefused as exc:
        print(f"errcat codegen: {exc}; nothing written", file=sys.stderr)
        return exc.exit_code
    write_all_atomically(writes)
    for target in removals:
        target.unlink(missing_ok=True)
    done = [f"wrote {shown(target)}" for target in writes]
    done += [f"removed {shown(target)}" for target in removals]
    print(f"{', '.join(done)} ({classes} classes)")
    return 0


def _renamed_in_use(config: Config, catalog: Catalog) -> list[str]:
    """A line per renamed entry whose old class name the package's files still mention."""
    from catalog.authoring.renames import find_renames, mentions

    renames = find_renames(catalog, config.generated)
    if not renames:
        return []
    old = [rename.old for rename in renames]
    using = []
    for path in sorted(config.package.rglob("*.py")):
        if path == config.generated:
            continue
        try:
            if mentions(path.read_text(encoding="utf-8"), old):
                using.append(path)
        except (OSError, UnicodeDecodeError):
            continue
    if not using:
        return []
    shown = ", ".join(p.relative_to(config.root).as_posix() for p in using[:3])
    more = f" and {len(using) - 3} more" if len(using) > 3 else ""
    lines = [f"errcat codegen: entry {r.entry_id} was renamed {r.old} → {r.new}" for r in renames]
    return [*lines, f"errcat codegen: {shown}{more} still use the old names"]
