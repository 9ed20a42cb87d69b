"""First line of the server: refuse request targets that try to leave the site, before routing.

Static file lookups already stay inside the site folder; this guard answers such attempts with a
clear `400` (`414` for overlong targets, `431` for overlong headers) instead of letting them reach any lookup, and adds
`X-Content-Type-Options: nosniff` to every answer so browsers trust the declared types.
"""

from __future__ import annotations

import re

from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_PATH = 2048
"""Longest request path accepted, in bytes as sent (still percent-encoded)."""
MAX_QUERY = 16384
"""Longest query string accepted, in bytes as sent."""
MAX_HEADERS = 16384
"""Most header bytes (names and values) accepted in one request. h11 enforces its own limit only
on a head still arriving, not on one that came in a single read, hence this check."""
# Encoded `/`, `\` and NUL have no business in a URL of a static site; decoded they would
# change which file a path names.
_ENCODED_SEPARATORS = (b"%2f", b"%5c", b"%00")
_BAD_CHARACTERS = re.compile(r"[\\\x00-\x1f\x7f]")
NOSNIFF = (b"x-content-type-options", b"nosniff")
"""Sent with every answer, so browsers trust the declared types."""


def error_response(path: str, status: int, code: str, message: str) -> Response:
    """An error answer: JSON (`{"error": code, "message": ...}`) under `/api/`, text elsewhere."""
    headers = {"Cache-Control": "no-cache"}
    if path.startswith("/api/"):
        return JSONResponse(
            {"error": code, "message": message}, status_code=status, headers=headers
        )
    return PlainTextResponse(f"{status} {message}\n", status_code=status, headers=headers)


def refusal(scope: Scope) -> tuple[int, str, str] | None:
    """Why this request target is refused, as (status, code, message), or None to serve it."""
    path: str = scope["path"]
    raw: bytes = scope.get("raw_path") or path.encode("utf-8", "replace")
    if len(raw) > MAX_PATH:
        return 414, "uri_too_long", f"path has {len(raw)} bytes; at most {MAX_PATH} are accepted"
    query: bytes = scope.get("query_string", b"")
    if len(query) > MAX_QUERY:
        return (
            414,
            "uri_too_long",
            f"query has {len(query)} bytes; at most {MAX_QUERY} are accepted",
        )
    size = sum(len(name) + len(value) for name, value in scope.get("headers", ()))
    if size > MAX_HEADERS:
        return 431, "headers_too_large", f"headers have {size} bytes; at most {MAX_HEADERS}"
    if not path.startswith("/"):
        return 400, "bad_path", "the request target must be a path starting with /"
    lowered = raw.lower()
    if any(encoded in lowered for encoded in _ENCODED_SEPARATORS):
        return 400, "bad_path", "encoded '/', '\\' or NUL in the path"
    if _BAD_CHARACTERS.search(path):
        return 400, "bad_path", "backslash or control character in the path"
    if any(segment in (".", "..") for segment in path.split("/")):
        return 400, "bad_path", "'.' and '..' segments are not allowed in the path"
    return None


class RequestGuard:
    """ASGI middleware: refuse unsafe request targets; mark every answer `nosniff`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_nosniff(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), NOSNIFF]}
            await send(message)

        refused = refusal(scope)
        if refused is not None:
            status, code, message = refused
            response = error_response(scope["path"], status, code, message)
            await response(scope, receive, send_nosniff)
            return
        await self.app(scope, receive, send_nosniff)
