"""The site build's cache: what rendering produced, stored by a digest of everything it came
from, in one SQLite file under the project's `.errcat-cache/`.

Keys are content digests, so a stored value is right for its key whatever build wrote it; a
changed input gives a new key, never a stale value. Values are zlib-compressed. Writes are
batched in short transactions (a concurrent build of the same project waits for one batch at
most, never for a whole build). Each opening of the cache for a build counts as a generation
(a build opens it twice: for its pages' Markdown, `catalog.pages.pagecache`, then for MkDocs):
values it reads or writes are marked with it, and after a build that finished, values none of
the last `KEEP_GENERATIONS` used are removed, so the file tracks the site rather than its
history.

Any trouble with the file (locked for too long, damaged, unwritable) turns the cache off for the
build: a build never fails because of its cache, it is only slower. A value that does not
decompress (zlib checks a digest of what it compressed) is a miss, written again; a file SQLite
finds damaged is removed, so that the next opening starts an empty one rather than every
build after it running without a cache.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import sqlite3
import zlib
from pathlib import Path

log = logging.getLogger("mkdocs.plugins.errcat")

FILE_NAME = "site-cache.sqlite3"
SCHEMA = 1
KEEP_GENERATIONS = 10
"""Generations a value may go unused before it is removed: the last 5 builds."""
_BATCH = 500
_TIMEOUT_SECONDS = 5.0
_DAMAGED = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


def _damaged(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and exc.sqlite_errorname in _DAMAGED


class SiteCache:
    """Get and put compressed values by key; see the module docstring."""

    def __init__(self, folder: Path, generation: int | None = None) -> None:
        """Open the cache in `folder` for a new build, or, with `generation`, for a worker
        process of the build that has that generation."""
        self._path = folder / FILE_NAME
        self._db: sqlite3.Connection | None = None
        self._pending: dict[str, concurrent.futures.Future[bytes]] = {}
        # zlib lets go of the GIL while it compresses: a thread of its own does that work
        # beside the build's, on another core where there is one.
        self._compressor: concurrent.futures.ThreadPoolExecutor | None = None
        self._used: list[str] = []
        self._generation = generation or 0
        self._suspended = False
        self.hits = 0
        self.misses = 0
        try:
            folder.mkdir(parents=True, exist_ok=True)
            try:
                self._db = self._open(new_generation=generation is None)
            except sqlite3.DatabaseError as exc:
                if not _damaged(exc):
                    raise
                log.info("errcat: the site cache %s was damaged; starting a new one", self._path)
                self._remove()
                self._db = self._open(new_generation=generation is None)
        except (OSError, sqlite3.Error) as exc:
            self._off(exc)

    @property
    def generation(self) -> int:
        """This build's generation."""
        return self._generation

    def suspend(self) -> None:
        """Write what is pending and let go of the file and the compressing thread, so that
        the process can fork workers (a connection must not cross a fork)."""
        self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None
            self._suspended = True
        self._stop_compressor()

    def resume(self) -> None:
        """Take the file up again after `suspend`."""
        if self._suspended:
            self._suspended = False
            try:
                self._db = self._open(new_generation=False)
            except (OSError, sqlite3.Error) as exc:
                self._off(exc)

    def _open(self, new_generation: bool) -> sqlite3.Connection:
        db = sqlite3.connect(self._path, timeout=_TIMEOUT_SECONDS, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA:
                db.execute("DROP TABLE IF EXISTS blobs")
                db.execute("DROP TABLE IF EXISTS generations")
                db.execute(f"PRAGMA user_version={SCHEMA}")
            db.execute(
                "CREATE TABLE IF NOT EXISTS blobs"
                " (key TEXT PRIMARY KEY, value BLOB NOT NULL, used INTEGER NOT NULL)"
            )
            db.execute("CREATE TABLE IF NOT EXISTS generations (n INTEGER PRIMARY KEY)")
            if new_generation:
                with db:
                    db.execute("BEGIN IMMEDIATE")
                    db.execute("INSERT INTO generations DEFAULT VALUES")
                    found = db.execute("SELECT max(n) FROM generations").fetchone()[0]
                    self._generation = int(found)
        except BaseException:
            db.close()
            raise
        return db

    def _off(self, exc: BaseException) -> None:
        log.info("errcat: the site cache %s is off for this build: %s", self._path, exc)
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        self._pending.clear()
        self._stop_compressor()
        if _damaged(exc):
            self._remove()

    def _remove(self) -> None:
        """Remove the file and its journals. A process that still has them open keeps its
        own (unlinked) copy, so the worst outcome is a build whose values are not kept."""
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                self._path.with_name(self._path.name + suffix).unlink()

    def _stop_compressor(self) -> None:
        if self._compressor is not None:
            self._compressor.shutdown(wait=True, cancel_futures=True)
            self._compressor = None

    @property
    def enabled(self) -> bool:
        """Whether the cache is in use for this build."""
        return self._db is not None or self._suspended

    def get(self, key: str) -> bytes | None:
        """The value stored for `key`, or None."""
        if self._db is None:
            return None
        try:
            waiting = self._pending.get(key)
            stored = None if waiting is None else waiting.result()
            if stored is None:
                row = self._db.execute("SELECT value FROM blobs WHERE key = ?", (key,)).fetchone()
                stored = None if row is None else row[0]
        except sqlite3.Error as exc:
            self._off(exc)
            return None
        try:
            value = None if stored is None else zlib.decompress(stored)
        except zlib.error:
            value = None  # damaged: rendered again, and `put` replaces it
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
            self._used.append(key)
        return value

    def has(self, key: str) -> bool:
        """Whether a value is stored for `key` (one that is pending counts)."""
        if self._db is None:
            return False
        if key in self._pending:
            return True
        try:
            row = self._db.execute("SELECT 1 FROM blobs WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._off(exc)
            return False
        return row is not None

    def touch(self, key: str) -> None:
        """Mark the value of `key`, if there is one, as used by this build without reading it."""
        if self._db is not None:
            self._used.append(key)

    def get_text(self, key: str) -> str | None:
        """`get` for a value stored by `put_text`."""
        value = self.get(key)
        return None if value is None else value.decode("utf-8")

    def put(self, key: str, value: bytes) -> None:
        """Store `value` for `key` (written in the next batch)."""
        if self._db is None:
            return
        if self._compressor is None:
            self._compressor = concurrent.futures.ThreadPoolExecutor(1, "errcat-cache")
        self._pending[key] = self._compressor.submit(zlib.compress, value, 1)
        if len(self._pending) >= _BATCH:
            self.flush()

    def put_text(self, key: str, value: str) -> None:
        """`put` for text."""
        self.put(key, value.encode("utf-8"))

    def flush(self) -> None:
        """Write the pending values."""
        if self._db is None or not self._pending:
            return
        rows = [(key, value.result(), self._generation) for key, value in self._pending.items()]
        self._pending.clear()
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(
                    "INSERT OR REPLACE INTO blobs (key, value, used) VALUES (?, ?, ?)", rows
                )
        except sqlite3.Error as exc:
            self._off(exc)

    def finish(self, succeeded: bool) -> None:
        """Write what is pending; after a build that succeeded, mark what it read and forget
        what no recent build used. The cache is closed afterwards."""
        self.flush()
        if self._db is None:
            return
        try:
            if succeeded:
                with self._db:
                    self._db.execute("BEGIN IMMEDIATE")
                    self._db.executemany(
                        "UPDATE blobs SET used = ? WHERE key = ?",
                        ((self._generation, key) for key in self._used),
                    )
                    oldest = self._generation - KEEP_GENERATIONS + 1
                    self._db.execute("DELETE FROM blobs WHERE used < ?", (oldest,))
                    self._db.execute("DELETE FROM generations WHERE n < ?", (oldest,))
            self._db.close()
        except sqlite3.Error as exc:
            self._off(exc)
        self._db = None
        self._stop_compressor()
