"""`errcat serve [--host H] [--port P] [--site DIR] [--workers N] [--log]`: serve the site and API."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "serve"
HELP = "serve the built site and its JSON API (default http://127.0.0.1:8000/)"


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"port {text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is outside 0-65535")
    return port


def _workers(text: str) -> int:
    try:
        workers = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"workers {text!r} is not a number") from None
    if not 1 <= workers <= 64:
        raise argparse.ArgumentTypeError(f"workers {workers} is outside 1-64")
    return workers


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument(
        "--port", type=_port, default=8000, help="port to listen on; 0 picks a free one (8000)"
    )
    parser.add_argument(
        "--site",
        type=Path,
        default=None,
        help="the built site folder (default build/site under the project root)",
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=1,
        help="worker processes, to use more cores (1); each follows errcat build on its own",
    )
    parser.add_argument("--log", action="store_true", help="log one line per request")


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def run(args: argparse.Namespace) -> int:
    # Imported here so that `errcat --help` does not pay for Starlette and granian.
    from catalog.core.config import load_config
    from catalog.serve import (
        ServeOptions,
        bind,
        create_app,
        serve,
        url_of,
    )

    if args.site is None:
        site = load_config().root / "build" / "site"
        hint = "run: errcat build"
    else:
        site = args.site
        hint = f"run: errcat build --out {args.site}"
    # Loads the whole API before a port is bound: a missing site is reported (SiteError, by
    # catalog.cli), not served.
    app = create_app(site, build_hint=hint)
    # A BindError (an address in use, a port refused) is reported by catalog.cli, exit 2.
    sock = bind(args.host, args.port)
    print(f"Serving {_shown(site)} on {url_of(sock)} (Ctrl-C to stop)", flush=True)
    return serve(app, sock, ServeOptions(access_log=args.log, workers=args.workers))
