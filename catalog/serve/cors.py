"""CORS for the JSON API: any origin may read it with `GET`/`HEAD`; preflights are answered.

The API is public, read-only and sent without credentials, so `Access-Control-Allow-Origin: *`
is safe and needs no `Vary: Origin`. A preflight (`OPTIONS` with `Access-Control-Request-Method`)
under `/api/` gets `204` naming the allowed methods and echoing the requested headers (a script
sending `If-None-Match` to revalidate needs one); any other `OPTIONS` stays a `405` with `Allow`,
as for every method the server does not serve. The site's pages get no CORS headers.
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from catalog.serve.fast import CORS_HEADERS
from catalog.serve.guard import NOSNIFF, refusal

PREFLIGHT_MAX_AGE = b"86400"
"""Seconds a browser may cache a preflight's answer."""
# A list of header names as a browser sends it; anything else is not echoed.
_HEADER_LIST = re.compile(rb"[A-Za-z0-9!#$%&'*+.^_`|~-]+(?:\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*")
_MAX_ECHO = 1024


def is_api(scope: Scope) -> bool:
    """Whether the request is for the JSON API (where CORS applies)."""
    path: str = scope["path"]
    return path.startswith("/api/")


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


class Cors:
    """ASGI middleware: answer API preflights, add CORS headers to every API answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_api(scope):
            await self.app(scope, receive, send)
            return
        requested = _header(scope, b"access-control-request-method")
        # A refused target is refused for a preflight too (by the guard, inside).
        if scope["method"] == "OPTIONS" and requested is not None and refusal(scope) is None:
            await self._preflight(scope, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers.extend(item for item in CORS_HEADERS if item[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_cors)

    @staticmethod
    async def _preflight(scope: Scope, send: Send) -> None:
        headers = [
            *CORS_HEADERS,
            (b"access-control-allow-methods", b"GET, HEAD"),
            (b"access-control-max-age", PREFLIGHT_MAX_AGE),
            (b"vary", b"Access-Control-Request-Headers"),
            (b"content-length", b"0"),
            NOSNIFF,
        ]
        wanted = _header(scope, b"access-control-request-headers")
        if wanted and len(wanted) <= _MAX_ECHO and _HEADER_LIST.fullmatch(wanted.strip()):
            headers.append((b"access-control-allow-headers", wanted.strip()))
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
