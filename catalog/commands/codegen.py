"""`errcat codegen [--check]`: write the typed-exception module from the catalog."""

from __future__ import annotations

import argparse
import sys

NAME = "codegen"
HELP = "write the typed-exception module (default runtime/errors.py) from the catalog"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 with a diff when the module is stale",
    )


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for them.
    from catalog.check import requires_python_findings
    from catalog.codegen import diff, generate, generated_classes, write_atomically
    from catalog.commands.common import valid_catalog_or_report
    from catalog.config import load_config, read_site_settings

    config = load_config()
    # The module would fail on the Pythons below the one it supports; a package declaring
    # them must raise its floor before it ships typed raises.
    unservable = requires_python_findings(config)
    if unservable:
        for finding in unservable:
            print(finding.format(), file=sys.stderr)
        print("errcat codegen: nothing written", file=sys.stderr)
        return 1
    settings = read_site_settings(config.root)
    catalog = valid_catalog_or_report(config, "codegen")
    if catalog is None:
        return 1
    expected = generate(catalog, settings.site_url)
    classes = len(generated_classes(catalog))
    target = config.generated
    shown = (
        target.relative_to(config.root).as_posix()
        if target.is_relative_to(config.root)
        else str(target)
    )
    current = target.read_text(encoding="utf-8") if target.is_file() else None
    if args.check:
        if current == expected:
            print(f"{shown} is up to date ({classes} classes)")
            return 0
        sys.stdout.write(diff(current, expected, shown))
        print(f"{shown} is stale; run: errcat codegen", file=sys.stderr)
        return 1
    if current == expected:
        print(f"{shown} is up to date ({classes} classes)")
        return 0
    write_atomically(target, expected)
    print(f"wrote {shown} ({classes} classes)")
    return 0
