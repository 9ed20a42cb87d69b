"""Answers for the API's documents, computed once per loaded site, and the path that sends them.

Every JSON file of the API has at most four answers: the file, its gzip form, and a `304` for
each. They differ only in which request headers chose them, so they are built when a site is
loaded (headers and bodies as bytes) and a request for `/api/errors/<id>` is a dictionary lookup
and two ASGI messages, without routing, middleware or header objects.

The fast path takes only what it can answer exactly as the general app would: `GET`/`HEAD` of a
path sent literally (no percent-encoding), a query and headers within the guard's limits.
Everything else falls through to the general app, which answers the same documents from the
same `Prepared` values (so both paths send the same headers) and handles every other case.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from starlette.types import Scope

from catalog.core.ids import is_valid_id
from catalog.serve.guard import MAX_HEADERS, MAX_QUERY, NOSNIFF
from catalog.serve.negotiation import accepts_gzip, none_match
from catalog.serve.site import Document, LoadedSite

Headers = tuple[tuple[bytes, bytes], ...]
API_CACHE_CONTROL = b"public, max-age=300"
CORS_HEADERS: Headers = (
    (b"access-control-allow-origin", b"*"),
    # ETag is not a CORS-safelisted response header: without this a page's script cannot
    # read it to revalidate.
    (b"access-control-expose-headers", b"ETag"),
)
"""What every JSON answer carries so that a page on any origin can read it."""
FAST_METHODS = frozenset({"GET", "HEAD"})
ERRORS_PREFIX = "/api/errors/"


@dataclass(frozen=True, slots=True)
class Variant:
    """One answer to a document request, ready to send."""

    status: int
    headers: Headers
    """The representation's headers (type, length, tags, caching), as the general app sends them
    before its middleware adds `nosniff` and CORS."""
    wire: list[tuple[bytes, bytes]]
    """`headers` plus `nosniff` and CORS: what the fast path sends as is (ASGI)."""
    wire_text: list[tuple[str, str]]
    """`wire` as text, the form RSGI (granian's native interface) takes."""
    body: bytes


@dataclass(frozen=True, slots=True)
class Prepared:
    """Every answer to one document: plain, gzip, and the `304` of each."""

    plain: Variant
    gzipped: Variant | None
    """None where gzip would not be smaller (then gzip is never sent)."""
    not_modified: Variant
    not_modified_gzipped: Variant
    etags: tuple[str, str]
    """Both strong tags (plain and gzip): either one revalidates, they name the same content."""

    def select(self, accept_encoding: str | None, if_none_match: str | None) -> Variant:
        """The answer for a request with these header values (None: header absent)."""
        gzipped = self.gzipped is not None and _accepts_gzip(accept_encoding)
        if if_none_match is not None and none_match(if_none_match, self.etags):
            return self.not_modified_gzipped if gzipped else self.not_modified
        if gzipped:
            assert self.gzipped is not None
            return self.gzipped
        return self.plain


@lru_cache(maxsize=256)
def _accepts_gzip(header: str | None) -> bool:
    # Clients send a handful of distinct Accept-Encoding values; parsing each once is enough.
    return accepts_gzip(header)


def _variant(status: int, headers: Iterable[tuple[bytes, bytes]], body: bytes) -> Variant:
    representation = tuple(headers)
    wire = [*representation, NOSNIFF, *CORS_HEADERS]
    text = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in wire]
    return Variant(status, representation, wire, text, body)


def prepare(document: Document) -> Prepared:
    """Every answer to `document`, headers encoded once."""
    plain_tag = document.etag.encode("ascii")
    gzip_tag = document.gzip_etag.encode("ascii")
    caching = ((b"cache-control", API_CACHE_CONTROL), (b"vary", b"Accept-Encoding"))
    json_type = (b"content-type", b"application/json")
    plain = _variant(
        200,
        (
            json_type,
            (b"content-length", b"%d" % len(document.body)),
            (b"etag", plain_tag),
            *caching,
        ),
        document.body,
    )
    gzipped = None
    if document.gzipped is not None:
        gzipped = _variant(
            200,
            (
                json_type,
                (b"content-length", b"%d" % len(document.gzipped)),
                (b"content-encoding", b"gzip"),
                (b"etag", gzip_tag),
                *caching,
            ),
            document.gzipped,
        )
    return Prepared(
        plain=plain,
        gzipped=gzipped,
        not_modified=_variant(304, ((b"etag", plain_tag), *caching), b""),
        not_modified_gzipped=_variant(304, ((b"etag", gzip_tag), *caching), b""),
        etags=(document.etag, document.gzip_etag),
    )


class PreparedTable(Mapping[str, Prepared]):
    """Request path → answers, for every JSON document of a site (ids with and without `.json`).

    A document's answers are prepared on its first request. Hashing and compressing 11,000
    entries (and a 2 MB index) took seconds at the server's start, while one entry takes well
    under a millisecond, and most entries of a large catalog are never asked for. Only the
    event loop's thread looks documents up, so no lock is needed; two threads preparing the
    same document would only do the same work twice.
    """

    def __init__(self, site: LoadedSite) -> None:
        self._documents: dict[str, bytes] = {"/api/errors/index.json": site.index}
        if site.schema is not None:
            self._documents["/api/schema.json"] = site.schema
        if site.openapi is not None:
            self._documents["/api/openapi.json"] = site.openapi
        self._entries = site.entries
        self._prepared: dict[str, Prepared] = {}
        """Documents prepared so far: entries by id, the others by path."""

    def get(self, path: str, default: Any = None) -> Any:
        key = path
        bodies: Mapping[str, bytes] = self._documents
        if path not in self._documents:
            ident = _entry_id(path)
            if ident is None:
                return default
            key, bodies = ident, self._entries
        prepared = self._prepared.get(key)
        if prepared is None:
            body = bodies.get(key)
            if body is None:
                return default
            prepared = self._prepared[key] = prepare(Document.from_bytes(body))
        return prepared

    def __getitem__(self, path: str) -> Prepared:
        prepared: Prepared | None = self.get(path)
        if prepared is None:
            raise KeyError(path)
        return prepared

    def __iter__(self) -> Iterator[str]:
        yield from self._documents
        for ident in self._entries:
            yield f"{ERRORS_PREFIX}{ident}"
            yield f"{ERRORS_PREFIX}{ident}.json"

    def __len__(self) -> int:
        return len(self._documents) + 2 * len(self._entries)


def _entry_id(path: str) -> str | None:
    """The id in `/api/errors/<id>` or `/api/errors/<id>.json`, else None."""
    if not path.startswith(ERRORS_PREFIX):
        return None
    ident = path[len(ERRORS_PREFIX) :].removesuffix(".json")
    return ident if len(ident) == 16 and is_valid_id(ident) else None


def prepare_site(site: LoadedSite) -> PreparedTable:
    """Request path → answers, for every JSON document of `site` (see `PreparedTable`)."""
    return PreparedTable(site)


def fast_variant(scope: Scope, table: Mapping[str, Prepared]) -> Variant | None:
    """The answer to the ASGI request `scope` when the fast path can give it exactly, else None.

    None means: let the general app answer (it refuses what the guard refuses, with the same
    limits, and decodes what the fast path does not).
    """
    path: str = scope["path"]
    prepared = table.get(path)
    if prepared is None:
        return None
    raw = scope.get("raw_path")
    # A percent-encoded target may decode to a document's path; the guard has a say on those.
    if raw is not None and raw != path.encode("ascii"):
        return None
    if len(scope.get("query_string", b"")) > MAX_QUERY:
        return None
    size = 0
    accept_encoding: bytes | None = None
    if_none_match: bytes | None = None
    for name, value in scope["headers"]:
        size += len(name) + len(value)
        # The first of repeated Accept-Encoding headers counts, as in Starlette's `Headers.get`;
        # repeated If-None-Match headers are one list (RFC 9110), so all their tags count.
        if name == b"accept-encoding":
            if accept_encoding is None:
                accept_encoding = value
        elif name == b"if-none-match":
            if_none_match = value if if_none_match is None else if_none_match + b", " + value
    if size > MAX_HEADERS:
        return None
    return prepared.select(
        None if accept_encoding is None else accept_encoding.decode("latin-1"),
        None if if_none_match is None else if_none_match.decode("latin-1"),
    )


def fast_variant_rsgi(scope: Any, table: Mapping[str, Prepared]) -> Variant | None:
    """`fast_variant` for an RSGI scope (granian's: path decoded, headers as text)."""
    prepared = table.get(scope.path)
    if prepared is None or len(scope.query_string) > MAX_QUERY:
        return None
    headers = scope.headers
    if sum(len(name) + len(value) for name, value in headers.items()) > MAX_HEADERS:
        return None
    if_none_match = headers.get("if-none-match")
    if if_none_match is not None:
        # `get` gives the first value only; repeated headers are one list (RFC 9110). Looked up
        # again only for conditional requests, so the plain request pays nothing.
        if_none_match = ", ".join(headers.get_all("if-none-match"))
    return prepared.select(headers.get("accept-encoding"), if_none_match)
