"""The ASGI application behind `errcat serve`: the JSON API from memory and the site's files.

Routes, first match wins:

- `GET`/`HEAD` `/api/errors/index.json`, `/api/schema.json`, `/api/openapi.json`,
  `/api/errors/<id>` and `/api/errors/<id>.json`: `application/json` with a strong `ETag`,
  `Cache-Control: public, max-age=300`, `304` for a matching `If-None-Match` (lists, weak tags and
  `*`), gzip for clients that accept it. An unknown or malformed id is a JSON `404`
  (`{"error": "not_found", "id": ..., "message": ...}`); a malformed id (anything but 16
  lowercase hex digits) is answered before the site is looked at. These answers are computed
  when a site is loaded and sent by a fast path ahead of routing (`catalog.serve.fast`).
- `GET /api/match?message=...`: the catalog entries whose message template matches a concrete
  message, best first; `200` with an empty `matches` list when none does, `400` for a missing
  or overlong message.
- Any other `/api/...` path is a JSON `404`: the server owns that namespace.
- Everything else is a file of the site (`index.html` for a folder URL, the site's `404.html`
  with status 404 for a missing file). HTML is sent with `Cache-Control: no-cache` (revalidated
  each time, so a rebuilt site shows at once), other files with `public, max-age=300`.

Other methods get `405` with `Allow: GET, HEAD`. Paths that try to leave the site (`..`, `.`,
backslashes, NUL, encoded `/` `\\` NUL) get `400` before any lookup; overlong paths or query
strings `414`; more than 16 KiB of headers `431` (`catalog.serve.guard`). Every answer under
`/api/` allows any origin, and API preflights are answered (`catalog.serve.cors`).

`errcat build` swaps `build/site` (a symlink) atomically. The server re-resolves it at most once
per `recheck_interval` seconds on a request, and when it points somewhere new, loads that
folder (in a worker thread) and answers from it from then on; a new folder that is incomplete is
reported and the old one kept. A request is answered wholly from the site current when it
arrived, so during a swap every answer is either the old build's or the new one's.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

from catalog.core.ids import is_valid_id
from catalog.core.lease import Lease
from catalog.serve.cors import Cors
from catalog.serve.fast import (
    FAST_METHODS,
    Prepared,
    PreparedTable,
    Variant,
    fast_variant,
    prepare_site,
)
from catalog.serve.guard import RequestGuard, error_response
from catalog.serve.negotiation import accepts_gzip
from catalog.serve.rsgi import PATHSEND, serve_rsgi
from catalog.serve.site import BUILD_COMMAND, LoadedSite, SiteError, load_site

if TYPE_CHECKING:
    from catalog.matching.messages import MessageMatcher

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
    """One loaded site and what answers from it: its documents' prepared answers, its files and,
    once asked for, its matcher."""

    def __init__(self, site: LoadedSite) -> None:
        self.site = site
        # Held while this site may be answered from, so a build does not retire its folder.
        self.lease = Lease(site.root)
        self.prepared: PreparedTable = prepare_site(site)
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
                    from catalog.matching.browser_index import site_matcher

                    matcher = await anyio.to_thread.run_sync(
                        site_matcher, self.site.root, self.site.rows
                    )
                    self._matcher = matcher
        return matcher


class SiteHolder:
    """The site being served, following `errcat build`'s swaps of the site symlink."""

    def __init__(self, site: Path, loaded: LoadedSite | Served, recheck_interval: float) -> None:
        self.site = site
        self.recheck_interval = recheck_interval
        self._served = loaded if isinstance(loaded, Served) else Served(loaded)
        self._previous: Served | None = None
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
            # Loading and preparing every answer happen off the event loop; the swap is one
            # assignment, so a request sees the old site or the new one, never a mixture.
            served = await anyio.to_thread.run_sync(_load_served, Path(target))
        except SiteError as exc:
            self._rejected = target
            logger.warning("errcat serve: kept the previous site: %s", exc)
        else:
            # Requests that began on the old site may still be reading its files: it keeps its
            # lease until the next swap, and the one before it lets go of its own.
            if self._previous is not None and self._previous.site.root != served.site.root:
                self._previous.lease.release()
            self._previous, self._served = self._served, served
            self._rejected = None
        finally:
            self._loading = False
        return self._served


def _load_served(root: Path) -> Served:
    return Served(load_site(root))


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


def variant_response(request: Request, prepared: Prepared) -> Response:
    """The prepared answer that `request`'s `Accept-Encoding` and `If-None-Match` select."""
    # Repeated If-None-Match headers are one list (RFC 9110): every value's tags count.
    if_none_match = request.headers.getlist("if-none-match")
    variant: Variant = prepared.select(
        request.headers.get("accept-encoding"), ", ".join(if_none_match) if if_none_match else None
    )
    response = Response(variant.body, status_code=variant.status)
    # The prepared headers exactly, so that this path and the fast path answer alike.
    response.raw_headers = list(variant.headers)
    return response


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

    async def document(self, request: Request) -> Response:
        """`index.json`, `schema.json` or `openapi.json`, where the site has it."""
        served = await self.holder.current()
        prepared = served.prepared.get(request.url.path)
        if prepared is None:
            return error_response(
                request.url.path, 404, "not_found", "this site was built without this file"
            )
        return variant_response(request, prepared)

    async def entry(self, request: Request) -> Response:
        ident: str = request.path_params["ident"]
        name = ident.removesuffix(".json")
        # Checked before anything else: a malformed id never reaches the site or the disk.
        if not is_valid_id(name):
            return _not_found(
                ident, "not an error id: expected 16 lowercase hex digits, e.g. f978622eed176d93"
            )
        served = await self.holder.current()
        prepared = served.prepared.get(f"/api/errors/{name}")
        if prepared is None:
            return _not_found(
                name, f"no error {name} in this catalog; all ids: /api/errors/index.json"
            )
        return variant_response(request, prepared)

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
        await served.files(_without_pathsend_for_gzip(scope), receive, send)


def _without_pathsend_for_gzip(scope: Scope) -> Scope:
    """`scope` without the server's `pathsend` extension when the client accepts gzip.

    Starlette sends a file by path where the server offers `http.response.pathsend` (granian
    does), and a body sent that way never passes through the gzip middleware. A client that
    accepts gzip gets the file streamed through it instead; others keep the faster path.
    """
    extensions = scope.get("extensions") or {}
    if PATHSEND not in extensions:
        return scope
    accept = next((value for name, value in scope["headers"] if name == b"accept-encoding"), None)
    if accept is None or not accepts_gzip(accept.decode("latin-1")):
        return scope
    kept = {name: value for name, value in extensions.items() if name != PATHSEND}
    return {**scope, "extensions": kept}


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


class ErrcatApp:
    """The server's app, ASGI and RSGI: the fast path for the API's documents, then the general
    (Starlette) app. granian runs it over RSGI; any ASGI server can run it too."""

    def __init__(self, holder: SiteHolder, general: ASGIApp, recipe: AppRecipe) -> None:
        self.holder = holder
        self.general = general
        self.recipe = recipe
        """How to build this app again (in a worker process that did not inherit it)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in FAST_METHODS:
            path: str = scope["path"]
            if path.startswith("/api/"):
                served = await self.holder.current()
                variant = fast_variant(scope, served.prepared)
                if variant is not None:
                    await send(
                        {
                            "type": "http.response.start",
                            "status": variant.status,
                            "headers": variant.wire,
                        }
                    )
                    body = b"" if scope["method"] == "HEAD" else variant.body
                    await send({"type": "http.response.body", "body": body})
                    return
        await self.general(scope, receive, send)

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        """The same app under granian's native interface (`catalog.serve.rsgi`)."""
        await serve_rsgi(self.holder.current, self.general, scope, proto)


@dataclass(frozen=True)
class AppRecipe:
    """The arguments of `create_app`: picklable, so a spawned worker can build the same app."""

    site: Path
    recheck_interval: float
    build_hint: str

    def __call__(self) -> ErrcatApp:
        return create_app(
            self.site, recheck_interval=self.recheck_interval, build_hint=self.build_hint
        )


def create_app(
    site: Path,
    *,
    recheck_interval: float = 1.0,
    build_hint: str = f"run: {BUILD_COMMAND}",
) -> ErrcatApp:
    """The server's ASGI app for the built site at `site` (a folder or a symlink to one).

    Loads the site's API now and raises SiteError (naming `build_hint`) when the site is missing
    or incomplete, so nothing is served from a half-built folder.
    """
    holder = SiteHolder(site, load_site(site, build_hint), recheck_interval)
    api = Api(holder)
    get = ["GET"]  # Starlette adds HEAD to every GET route.
    routes = [
        Route("/api/errors/index.json", api.document, methods=get),
        Route("/api/schema.json", api.document, methods=get),
        Route("/api/openapi.json", api.document, methods=get),
        Route("/api/errors/{ident}", api.entry, methods=get),
        Route("/api/match", api.match, methods=get),
        Route("/api/{rest:path}", api.unknown, methods=get),
        Mount("/", app=_Files(holder)),
    ]
    general = Starlette(
        routes=routes,
        # CORS outside the guard, so that the guard's refusals under /api/ are readable too.
        middleware=[Middleware(Cors), Middleware(RequestGuard)],
        # No body is ever read, so none needs a limit; refusing them with 413 would hide the
        # 405 that tells a client what is wrong.
        exception_handlers={HTTPException: _http_error},
    )
    return ErrcatApp(holder, general, AppRecipe(Path(site), recheck_interval, build_hint))
