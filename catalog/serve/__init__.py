"""`errcat serve`: the built site and its JSON API over HTTP (Starlette's routing under granian).

`create_app(site)` builds the ASGI app without running anything; `bind` and `serve` run it
(`serve` needs the main thread: granian's main process handles Ctrl-C and SIGTERM). Routes and
caching rules: `catalog.serve.app`; the fast path for the API's documents: `catalog.serve.fast`;
the HTTP layer and what it guarantees: `catalog.serve.runner`.
"""

from __future__ import annotations

from catalog.serve.app import ErrcatApp, create_app
from catalog.serve.runner import BindError, ServeOptions, bind, build_server, serve, url_of
from catalog.serve.site import SiteError

__all__ = [
    "BindError",
    "ErrcatApp",
    "ServeOptions",
    "SiteError",
    "bind",
    "build_server",
    "create_app",
    "serve",
    "url_of",
]
