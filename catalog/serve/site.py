"""A built site as the server holds it: the folder, checked, and the JSON API loaded into memory.

`errcat build` writes `build/site` as a symlink to a versioned folder. The server resolves the
symlink to that folder and reads every API file once, so an answer to `/api/errors/<id>` is a
dictionary lookup and always the bytes of the build that was current at load. A document's
ETags and gzip body are computed on its first request (`catalog.serve.fast`), not at load: for
a catalog of 11,000 entries that work took most of the server's start.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from catalog.core.errors import ErrcatError
from catalog.core.ids import is_valid_id

BUILD_COMMAND = "errcat build"
INDEX_PAGE = "index.html"
API_INDEX = "api/errors/index.json"
API_SCHEMA = "api/schema.json"
API_OPENAPI = "api/openapi.json"
ERRORS_FOLDER = "api/errors"
logger = logging.getLogger("errcat.serve")
# Bodies are compressed once at load, so the slowest level costs nothing per request.
GZIP_LEVEL = 9


class SiteError(ErrcatError):
    """The site folder is missing, incomplete or unreadable; the message says how to fix it
    (exit 2)."""


@dataclass(frozen=True)
class Document:
    """One JSON file of the API, ready to send."""

    body: bytes
    """The file's bytes as `errcat build` wrote them."""
    gzipped: bytes | None
    """`body` compressed with gzip (mtime 0: the same bytes on every load); None where that is
    no smaller than `body`."""
    etag: str
    """Strong entity tag of `body`, quoted: the first 32 hex digits of its SHA-256."""
    gzip_etag: str
    """Strong entity tag of the gzip representation (`etag` with `-gzip` before the quote)."""

    @classmethod
    def from_bytes(cls, body: bytes) -> Document:
        digest = hashlib.sha256(body).hexdigest()[:32]
        gzipped = gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
        return cls(
            body=body,
            gzipped=gzipped if len(gzipped) < len(body) else None,
            etag=f'"{digest}"',
            gzip_etag=f'"{digest}-gzip"',
        )


@dataclass(frozen=True)
class LoadedSite:
    """A site folder, resolved, with its API in memory."""

    root: Path
    """The real folder (symlinks resolved) the site was loaded from."""
    entries: Mapping[str, bytes]
    """Entry files' bytes by id (`api/errors/<id>.json`); only well-formed ids are loaded."""
    index: bytes
    """`api/errors/index.json`."""
    schema: bytes | None
    """`api/schema.json`, or None where the build wrote none."""
    openapi: bytes | None
    """`api/openapi.json`, or None where the build wrote none (a site built before it existed)."""
    rows: tuple[dict[str, str], ...] = field(repr=False)
    """The index rows in its order, string fields only (what a message matcher is built from)."""


def check_site(site: Path, build_hint: str = f"run: {BUILD_COMMAND}") -> Path:
    """The real folder behind `site`, after checking it holds a home page and the API index.

    Raises SiteError naming what is missing, ending with `build_hint` (the command that builds it).
    """
    if not site.exists():
        raise SiteError(f"no built site at {site}; {build_hint}")
    root = Path(os.path.realpath(site))
    if not root.is_dir():
        raise SiteError(f"{site} is not a folder; {build_hint}")
    for required in (INDEX_PAGE, API_INDEX):
        if not (root / required).is_file():
            raise SiteError(f"{site} has no {required}; {build_hint}")
    return root


def _index_rows(path: Path, data: bytes) -> tuple[dict[str, str], ...]:
    try:
        rows = json.loads(data)
    except ValueError as exc:
        raise SiteError(f"{path} is not valid JSON ({exc}); rebuild it: {BUILD_COMMAND}") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise SiteError(f"{path} is not a list of rows; rebuild it: {BUILD_COMMAND}")
    usable = (
        row
        for row in rows
        if isinstance(row.get("id"), str) and isinstance(row.get("message"), str)
    )
    return tuple(
        {key: value for key, value in row.items() if isinstance(value, str)} for row in usable
    )


def _optional(root: Path, path: Path) -> bytes | None:
    if not path.is_file():
        return None
    if not _inside(root, str(path)):
        logger.warning("errcat serve: skipped %s: it leads outside the site", path)
        return None
    return path.read_bytes()


def _read(path: str) -> bytes:
    # A plain open: 11,000 Path objects cost more than the reads themselves.
    with open(path, "rb") as handle:
        return handle.read()


def _inside(root: Path, path: str) -> bool:
    return os.path.commonpath([str(root), os.path.realpath(path)]) == str(root)


def load_site(site: Path, build_hint: str = f"run: {BUILD_COMMAND}") -> LoadedSite:
    """Check `site` and read its JSON API into memory. Raises SiteError."""
    root = check_site(site, build_hint)
    folder = root / ERRORS_FOLDER
    # The static files' rule holds for every API file: nothing reached through a symlink that
    # leads out of the site is ever served. The folder is checked once, so that its entries
    # need a check of their own only where they are links themselves.
    for required in (folder, root / API_INDEX):
        if not _inside(root, str(required)):
            raise SiteError(
                f"{required} leads outside the site {root}; rebuild it: {BUILD_COMMAND}"
            )
    try:
        index_bytes = (root / API_INDEX).read_bytes()
        rows = _index_rows(root / API_INDEX, index_bytes)
        entries: dict[str, bytes] = {}
        with os.scandir(folder) as listing:
            for item in listing:
                ident, dot, suffix = item.name.partition(".")
                if dot and suffix == "json" and is_valid_id(ident) and item.is_file():
                    if item.is_symlink() and not _inside(root, item.path):
                        logger.warning(
                            "errcat serve: skipped %s: it leads outside the site", item.path
                        )
                        continue
                    entries[ident] = _read(item.path)
        schema = _optional(root, root / API_SCHEMA)
        openapi = _optional(root, root / API_OPENAPI)
    except OSError as exc:
        raise SiteError(f"cannot read the site's API under {root}: {exc}") from None
    return LoadedSite(
        root=root,
        entries=entries,
        index=index_bytes,
        schema=schema,
        openapi=openapi,
        rows=rows,
    )
