"""`errcat build [--out DIR]`: the docs site and the JSON API, switched in atomically."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "build"
HELP = "compose the docs folder and build the site and the JSON API (atomically replaced)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the site is published, as a symlink to the finished build (default: build/site)",
    )


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for MkDocs.
    from catalog.build import BUILD_FOLDER, BuildError, build_site
    from catalog.commands.common import print_findings
    from catalog.config import ConfigError, load_config
    from catalog.findings import CatalogInvalid

    try:
        config = load_config()
        out = args.out or config.root / BUILD_FOLDER / "site"
        result = build_site(config, out)
    except ConfigError as exc:
        print(f"errcat build: {exc}", file=sys.stderr)
        return 2
    except CatalogInvalid as exc:
        print_findings(exc.findings, as_json=False)
        print(f"errcat build: {len(exc.findings)} problem(s); nothing was built", file=sys.stderr)
        return 1
    except BuildError as exc:
        print(f"errcat build: {exc}; the published site is unchanged", file=sys.stderr)
        return 1
    print(
        f"errcat build: {result.pages} pages and {result.api_files} API files from commit "
        f"{result.commit} in {result.seconds:.1f} s; published {result.out} -> {result.version.name}"
    )
    return 0
