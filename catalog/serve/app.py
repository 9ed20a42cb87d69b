"""The ASGI application behind `errcat serve`: the JSON API from memory and the site's files.

Routes, first match wins:

- `GET`/`HEAD` `/api/errors/index.json`, `/api/schema.json`, `/api/errors/<id>` and
  `/api/errors/<id>.json`: `application/json` with a strong `ETag`, `Cache-Control:
  public, max-age=300`, `304` for a matching `If-None-Match` (lists, weak tags and `*`), gzip
  for clients that accept it. An unknown or malformed id is a JSON `404`
  (`{"error": "not_found", "id": ..., "message": ...}`); a malformed id (anything but 16
  lowercase hex digits) is answered before the site is looked at.
- `GET /api/match?message=...`: the catalog entries whose message template matches a concrete
  message, best first; `200` with an empty `matches` list when none does, `400` for a missing
  or overlong message.
- Any other `/api/...` path is a JSON `404`: the server owns that namespace.
- Everything else is a file of the site (`index.html` for a folder URL, the site's `404.html`
  with status 404 for a missing file). HTML is sent with `Cache-Control: no-cache` (revalidated
  each time, so a rebuilt site shows at once), other files with `public, max-age=300`.

Other methods get `405` with `Allow: GET, HEAD`. Paths that try to leave the site (`..`, `.`,
backslashes, NUL, encoded `/` `\\` NUL) get `400` before any lookup; overlong paths or query
strings `414`; more than 16 KiB of headers `431` (`catalog.serve.guard`).

`errcat build` swaps `build/site` (a symlink) atomically. The server re-resolves it at most once
per `recheck_interval` seconds on a request, and when it points somewhere new, loads that
folder (in a worker thread) and answers from it from then on; a new folder that is incomplete is
reported and the old one kept.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from catalog.ids import is_valid_id
from catalog.serve.guard import RequestGuard, error_response
from catalog.serve.negotiation import accepts_gzip, none_match
from catalog.serve.site import BUILD_COMMAND, Document, LoadedSite, SiteError, load_site

if TYPE_CHECKING:
    from catalog.explain import MessageMatcher

API_CACHE_CONTROL = "public, max-age=300"
HTML_CACHE_CONTROL = "no-cache"
FILE_CACHE_CONTROL = "public, max-age=300"
ALLOWED_METHODS = "GET, HEAD"
MAX_MESSAGE = 4096
"""Longest `message` accepted by `/api/match`, in characters."""
ECHO_LIMIT = 100
"""Characters of a bad id quoted back in a 404."""
# Static text compresses well; the level trades little size for much CPU per request.
STATIC_GZIP_LEVEL = 6

logger = logging.getLogger("errcat.serve")


class Served:
    """One loaded site and what answers from it: its files and, once asked for, its matcher."""

    def __init__(self, site: LoadedSite) -> None:
        self.site = site
        self.files: ASGIApp = GZipMiddleware(
            _CacheHeaders(StaticFiles(directory=site.root, html=True)),
            compresslevel=STATIC_GZIP_LEVEL,
        )
        self._matcher: MessageMatcher | None = None
        self._matcher_lock = anyio.Lock()

    async def matcher(self) -> MessageMatcher:
        """The site's message matcher, built from its index on first use (in a worker thread)."""
        matcher = self._matcher
        if matcher is None:
            async with self._matcher_lock:
                matcher = self._matcher
                if matcher is None:
                    # Imported on first use: a server that is never asked to match never pays.
                    from catalog import explain

                    matcher = await anyio.to_thread.run_sync(
                        explain.MessageMatcher.from_rows, self.site.rows
                    )
                    self._matcher = matcher
        return matcher


class SiteHolder:
    """The site being served, following `errcat build`'s swaps of the site symlink."""

    def __init__(self, site: Path, loaded: LoadedSite, recheck_interval: float) -> None:
        self.site = site
        self.recheck_interval = recheck_interval
        self._served = Served(loaded)
        self._next_check = time.monotonic() + recheck_interval
        self._loading = False
        self._rejected: str | None = None

    async def current(self) -> Served:
        """The site to answer from, reloading it first when the symlink now points elsewhere."""
        now = time.monotonic()
        if now < self._next_check or self._loading:
            return self._served
        self._next_check = now + self.recheck_interval
        # A realpath is a few lstat calls: cheap enough once per interval.
        target = os.path.realpath(self.site)
        if target == str(self._served.site.root) or target == self._rejected:
            return self._served
        self._loading = True
        try:
            loaded = await anyio.to_thread.run_sync(load_site, Path(target))
        except SiteError as exc:
            self._rejected = target
            logger.warning("errcat serve: kept the previous site: %s", exc)
        else:
            self._served = Served(loaded)
            self._rejected = None
        finally:
            self._loading = False
        return self._served


class _CacheHeaders:
    """Adds `Cache-Control` to the site's files: HTML revalidated, other files cached briefly."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_cache_control(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                html = any(
                    name == b"content-type" and value.startswith(b"text/html")
                    for name, value in headers
                )
                policy = HTML_CACHE_CONTROL if html else FILE_CACHE_CONTROL
                headers.append((b"cache-control", policy.encode("ascii")))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_cache_control)


def document_response(request: Request, document: Document) -> Response:
    """`document` as JSON, honouring `If-None-Match` and `Accept-Encoding`."""
    gzipped = document.gzipped is not None and accepts_gzip(request.headers.get("accept-encoding"))
    headers = {
        "ETag": document.gzip_etag if gzipped else document.etag,
        "Cache-Control": API_CACHE_CONTROL,
        "Vary": "Accept-Encoding",
    }
    # Both tags name the same content, so either one revalidates.
    if none_match(request.headers.get("if-none-match"), (document.etag, document.gzip_etag)):
        return Response(status_code=304, headers=headers)
    if gzipped:
        headers["Content-Encoding"] = "gzip"
        return Response(document.gzipped, media_type="application/json", headers=headers)
    return Response(document.body, media_type="application/json", headers=headers)


def _not_found(ident: str, message: str) -> JSONResponse:
    shown = ident if len(ident) <= ECHO_LIMIT else ident[:ECHO_LIMIT] + "..."
    return JSONResponse(
        {"error": "not_found", "id": shown, "message": message},
        status_code=404,
        headers={"Cache-Control": "no-cache"},
    )


class Api:
    """The `/api/` endpoints, answering from the holder's current site."""

    def __init__(self, holder: SiteHolder) -> None:
        self.holder = holder

    async def index(self, request: Request) -> Response:
        served = await self.holder.current()
        return document_response(request, served.site.index)

    async def schema(self, request: Request) -> Response:
        served = await self.holder.current()
        if served.site.schema is None:
            return error_response(request.url.path, 404, "not_found", "this site has no schema")
        return document_response(request, served.site.schema)

    async def entry(self, request: Request) -> Response:
        ident: str = request.path_params["ident"]
        name = ident.removesuffix(".json")
        # Checked before anything else: a malformed id never reaches the site or the disk.
        if not is_valid_id(name):
            return _not_found(
                ident, "not an error id: expected 16 lowercase hex digits, e.g. f978622eed176d93"
            )
        served = await self.holder.current()
        document = served.site.entries.get(name)
        if document is None:
            return _not_found(
                name, f"no error {name} in this catalog; all ids: /api/errors/index.json"
            )
        return document_response(request, document)

    async def match(self, request: Request) -> Response:
        messages = request.query_params.getlist("message")
        if not messages or not messages[0].strip():
            return error_response(
                request.url.path,
                400,
                "bad_request",
                "pass the error message to look up: /api/match?message=...",
            )
        message = messages[0]
        if len(message) > MAX_MESSAGE:
            return error_response(
                request.url.path,
                400,
                "bad_request",
                f"message has {len(message)} characters; at most {MAX_MESSAGE} are accepted",
            )
        served = await self.holder.current()
        matcher = await served.matcher()
        results = await anyio.to_thread.run_sync(matcher.match, message)
        matches = [
            {
                "id": result.id,
                "message": result.message,
                "exception": result.exception,
                "url": result.url,
                "score": result.literal_chars,
            }
            for result in results
        ]
        return JSONResponse(
            {"message": message, "matches": matches},
            headers={"Cache-Control": API_CACHE_CONTROL},
        )

    async def unknown(self, request: Request) -> Response:
        return error_response(
            request.url.path,
            404,
            "not_found",
            "no such API path; see /api/errors/index.json, /api/errors/<id>, /api/match",
        )


class _Files:
    """The site's files, from whichever site the holder currently serves."""

    def __init__(self, holder: SiteHolder) -> None:
        self.holder = holder

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        served = await self.holder.current()
        await served.files(scope, receive, send)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ALLOWED_METHODS
    codes = {404: "not_found", 405: "method_not_allowed"}
    response = error_response(
        request.url.path, exc.status_code, codes.get(exc.status_code, "bad_request"), exc.detail
    )
    response.headers.update(headers)
    return response


def create_app(
    site: Path,
    *,
    recheck_interval: float = 1.0,
    build_hint: str = f"run: {BUILD_COMMAND}",
) -> Starlette:
    """The server's ASGI app for the built site at `site` (a folder or a symlink to one).

    Loads the site's API now and raises SiteError (naming `build_hint`) when the site is missing
    or incomplete, so nothing is served from a half-built folder.
    """
    holder = SiteHolder(site, load_site(site, build_hint), recheck_interval)
    api = Api(holder)
    get = ["GET"]  # Starlette adds HEAD to every GET route.
    routes = [
        Route("/api/errors/index.json", api.index, methods=get),
        Route("/api/schema.json", api.schema, methods=get),
        Route("/api/errors/{ident}", api.entry, methods=get),
        Route("/api/match", api.match, methods=get),
        Route("/api/{rest:path}", api.unknown, methods=get),
        Mount("/", app=_Files(holder)),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(RequestGuard)],
        # No body is ever read (uvicorn pauses reading a large one), so none needs a limit;
        # refusing them with 413 would hide the 405 that tells a client what is wrong.
        exception_handlers={HTTPException: _http_error},
    )
    app.state.holder = holder
    return app
