"""granian's native interface (RSGI) for the app: the fast path direct, everything else via ASGI.

Under RSGI a request is a Rust object read attribute by attribute and an answer is one call
(`response_bytes`), so the fast path builds no scope dictionary, creates no ASGI messages and
awaits no `send`: about a third more requests per second than the same app over granian's
ASGI. Requests the fast path does not take are handed to the general (Starlette) app through
`asgi_bridge`, which translates one RSGI request into an ASGI one and the ASGI answer back.

What RSGI does not carry, and how the bridge copes:

- The path as sent: RSGI gives it percent-decoded, so the bridge re-encodes it for `raw_path`.
  The guard then sees an encoded `\\` or NUL as such and refuses it, and `..`, `.`, backslashes
  and control characters in the decoded path as always; an encoded `/` reaches it as a `/`
  (naming a file inside the site, like the plain one). The 2 KiB path limit counts the
  re-encoded path.
- Header values that are not UTF-8: granian leaves them out.
- Request bodies: the app never reads one (every route is GET/HEAD), so the bridge's `receive`
  reports an empty body without reading it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol
from urllib.parse import quote

from starlette.types import ASGIApp, Message

from catalog.serve.fast import FAST_METHODS, Prepared, fast_variant_rsgi


class Answering(Protocol):
    """The site a request is answered from (`catalog.serve.app.Served`): what the fast path
    needs of it."""

    @property
    def prepared(self) -> Mapping[str, Prepared]: ...


PATHSEND = "http.response.pathsend"
"""The ASGI extension for sending a file by its path, which granian answers natively."""
# Characters a path keeps unencoded (RFC 3986 pchar plus "/"), so that re-encoding a decoded
# path gives back what a client normally sends.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def _address(text: str | None) -> tuple[str, int] | None:
    """`127.0.0.1:8000` or `[::1]:8000` as an ASGI (host, port) pair."""
    if not text:
        return None
    host, _, port = text.rpartition(":")
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        return None


def asgi_scope(scope: Any) -> dict[str, Any]:
    """The ASGI scope of an RSGI HTTP request."""
    path: str = scope.path
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": scope.http_version,
        "method": scope.method,
        "scheme": scope.scheme,
        "path": path,
        "raw_path": quote(path, safe=_PATH_SAFE).encode("ascii"),
        "query_string": scope.query_string.encode("utf-8"),
        "root_path": "",
        "headers": [
            (name.encode("latin-1"), value.encode("utf-8")) for name, value in scope.headers.items()
        ],
        "client": _address(scope.client),
        "server": _address(scope.server),
        "extensions": {PATHSEND: {}},
        "state": {},
    }


async def asgi_bridge(app: ASGIApp, scope: Any, proto: Any) -> None:
    """Answer the RSGI request (`scope`, `proto`) with the ASGI `app`."""
    status = 500
    headers: list[tuple[str, str]] = []
    stream: Any = None
    asked = False
    answered = False

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            # Never read: no route takes a body, and reading one would only cost memory.
            return {"type": "http.request", "body": b"", "more_body": False}
        await proto.client_disconnect()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status, headers, stream, answered
        kind = message["type"]
        if kind == "http.response.start":
            status = message["status"]
            headers = [
                (bytes(name).decode("latin-1"), bytes(value).decode("latin-1"))
                for name, value in message.get("headers", ())
            ]
        elif kind == "http.response.body":
            body = bytes(message.get("body", b""))
            more = bool(message.get("more_body", False))
            if stream is None and not more:
                proto.response_bytes(status, headers, body)
                answered = True
                return
            if stream is None:
                stream = proto.response_stream(status, headers)
            if body:
                await stream.send_bytes(body)
            answered = answered or not more
        elif kind == PATHSEND:
            proto.response_file(status, headers, str(message["path"]))
            answered = True

    await app(asgi_scope(scope), receive, send)
    if not answered and stream is None:
        # An app that returned without a body message still owes the client an answer.
        proto.response_empty(status, headers)


async def serve_rsgi(
    current: Callable[[], Awaitable[Answering]], general: ASGIApp, scope: Any, proto: Any
) -> None:
    """One RSGI request: the fast path where it applies (answered from the site `current`
    gives), else the `general` app."""
    if scope.proto != "http":
        return
    method: str = scope.method
    if method in FAST_METHODS:
        path: str = scope.path
        if path.startswith("/api/"):
            served = await current()
            variant = fast_variant_rsgi(scope, served.prepared)
            if variant is not None:
                body = b"" if method == "HEAD" else variant.body
                proto.response_bytes(variant.status, variant.wire_text, body)
                return
    await asgi_bridge(general, scope, proto)
