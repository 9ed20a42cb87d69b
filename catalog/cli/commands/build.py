"""`errcat build [--out DIR] [--site-url URL] [--deploy] [--wait SECONDS] [--no-cache]`: the docs
site and the JSON API, switched in atomically; one build at a time per folder, the others wait
for their turn."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlsplit

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
    parser.add_argument(
        "--site-url",
        type=_site_url,
        default=None,
        metavar="URL",
        help="the URL the site is published at, for this build only: page links in the JSON, "
        "canonical links and the sitemap (default: site_url in mkdocs.yml)",
    )
    parser.add_argument(
        "--deploy",
        action="store_true",
        help="also write the files static hosts and nginx read into the site: _headers, "
        "_redirects and _deploy/nginx.conf, their rules on errcat's paths only",
    )
    parser.add_argument(
        "--wait",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="how long to wait for another build of the same folders to finish before giving "
        "up with exit 2 (default: 600; 0: do not wait)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="render and validate everything afresh, reading and writing nothing in .errcat-cache/",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 or more), got {text!r}")
    return value


def _site_url(text: str) -> str:
    """An http(s) URL with a host, ending in `/` (pages are found under it)."""
    try:
        parts = urlsplit(text)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # e.g. a malformed IPv6 host or port
        valid = False
    if not valid or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(
            f"expected an http:// or https:// URL with a host and no query, got {text!r}"
        )
    return text.rstrip("/") + "/"


def _announce_wait(pid: int | None) -> None:
    who = f"the build started by pid {pid}" if pid else "another build"
    print(f"errcat build: waiting for {who} to finish", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` and other commands do not pay for MkDocs.
    from catalog.cli.commands.common import index_for_explain, print_findings
    from catalog.core.config import ConfigError, load_config
    from catalog.core.findings import CatalogInvalid
    from catalog.core.project import BUILD_FOLDER, caching
    from catalog.publish.build import (
        WAIT_SECONDS,
        BuildError,
        OutputRefused,
        build_site,
    )

    try:
        config = load_config()
        out = args.out or config.root / BUILD_FOLDER / "site"
        wait = WAIT_SECONDS if args.wait is None else args.wait
        with caching(not args.no_cache):
            result = build_site(
                config,
                out,
                wait=wait,
                on_wait=_announce_wait,
                site_url=args.site_url,
                deploy=args.deploy,
            )
    # Caught here rather than in catalog.cli for build's own wording (the command's name, and
    # what became of the published site); the exit codes are still the classes'.
    except ConfigError as exc:
        print(f"errcat build: {exc}", file=sys.stderr)
        return exc.exit_code
    except CatalogInvalid as exc:
        print_findings(exc.findings, as_json=False)
        print(f"errcat build: {len(exc.findings)} problem(s); nothing was built", file=sys.stderr)
        return exc.exit_code
    except OutputRefused as exc:
        # Checked before anything was built: nothing at --out was touched.
        print(f"errcat build: {exc}; nothing was built", file=sys.stderr)
        return exc.exit_code
    except BuildError as exc:
        # The first line says what stopped the build; MkDocs' warnings may follow it.
        first, _, rest = str(exc).partition("\n")
        print(f"errcat build: {first}; the published site is unchanged", file=sys.stderr)
        if rest:
            print(rest, file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(f"errcat build: {exc}; the published site is unchanged", file=sys.stderr)
        return 2
    print(
        f"errcat build: {result.pages} pages and {result.api_files} API files from commit "
        f"{result.commit} in {result.seconds:.1f} s; published {result.out} -> {result.version.name}"
    )
    if not args.no_cache:  # the index lives in the cache folder `--no-cache` leaves alone
        index_for_explain(config)
    return 0
