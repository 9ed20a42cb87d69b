"""`errcat serve`: the built site and its JSON API over HTTP (Starlette under uvicorn).

`create_app(site)` builds the ASGI app without running anything (tests drive it over loopback);
`bind` and `serve` run it. Routes and caching rules: `catalog.serve.app`.
"""

from __future__ import annotations

from catalog.serve.app import create_app
from catalog.serve.runner import BindError, ServeOptions, bind, build_server, serve, url_of
from catalog.serve.site import SiteError

__all__ = [
    "BindError",
    "ServeOptions",
    "SiteError",
    "bind",
    "build_server",
    "create_app",
    "serve",
    "url_of",
]
