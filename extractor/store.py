"""Cache files: the one place errcat writes and reads them.

Every cache errcat keeps under a project's `.errcat-cache/` goes through here: the scan's
per-file results and call summaries (`extractor.cache`), and the catalog's own files (the
validated catalog, file digests, the explain index: `catalog.core.cachefile`). The rules are
the same for all of them, so they are written once:

- A payload is sealed with a BLAKE2b digest of itself (`seal`): `marshal` and `pickle` decode a
  changed byte into another value as readily as they refuse it, so a payload whose digest does
  not match (a flipped bit on disk, a file written by something else) reads as a miss.
- A file is written to a temporary name beside it and renamed (`write_atomic`): a reader never
  sees half a file, and a cache that cannot be written only costs speed.
- A family of records whose meaning depends on the code that made them lives in a generation
  folder named for that code's fingerprint (`Generation`); making a new generation removes the
  family's older ones, so a changed rule never reads a stale record and never leaves one behind.

The site build's rendered output is the exception: it is many small values looked up by
content digest in one SQLite file (`catalog.core.sitecache`), where a database beats a file
per value.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

DIGEST_SIZE = 16
"""Bytes of the BLAKE2b digest that seals a payload."""


def seal(payload: bytes) -> bytes:
    """`payload` behind its digest, as `unseal` expects it."""
    return hashlib.blake2b(payload, digest_size=DIGEST_SIZE).digest() + payload


def unseal(data: bytes) -> bytes | None:
    """The payload `seal` sealed into `data`, or None when any byte differs."""
    payload = data[DIGEST_SIZE:]
    if len(data) < DIGEST_SIZE:
        return None
    if data[:DIGEST_SIZE] != hashlib.blake2b(payload, digest_size=DIGEST_SIZE).digest():
        return None
    return payload


def read(path: Path) -> bytes | None:
    """The bytes of `path`, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def write_atomic(path: Path, data: bytes) -> bool:
    """Write `data` to `path` through a temporary file and a rename; False when it could not
    be written (nothing is left behind then)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        # When the folder itself is unusable there is nothing to clean up either.
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        return False
    return True


def read_sealed(path: Path, header: bytes) -> bytes | None:
    """The payload of a file `write_sealed` wrote with the same `header` (a format and key
    line), or None: missing, for another header, or damaged."""
    data = read(path)
    if data is None or not data.startswith(header):
        return None
    return unseal(data[len(header) :])


def write_sealed(path: Path, header: bytes, payload: bytes) -> bool:
    """Store `payload` at `path` behind `header`, sealed and atomically."""
    return write_atomic(path, header + seal(payload))


class Generation:
    """The folder of one family of cache records (`prefix`) made by one version of the rules
    (`fingerprint`): `root/<prefix><fingerprint[:20]>/`."""

    def __init__(self, root: Path, prefix: str, fingerprint: str) -> None:
        self.root = root
        self.prefix = prefix
        self.folder = root / f"{prefix}{fingerprint[:20]}"
        self._ready = self.folder.is_dir()

    @property
    def exists(self) -> bool:
        """Whether the folder was there, or has been made by `make`."""
        return self._ready

    def make(self) -> None:
        """Create the folder, removing the family's folders of other fingerprints; OSError
        when the cache folder is unusable."""
        if self._ready:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for stale in self.root.glob(f"{self.prefix}*"):
            if stale.name != self.folder.name:
                shutil.rmtree(stale, ignore_errors=True)
        self.folder.mkdir(exist_ok=True)
        self._ready = True
