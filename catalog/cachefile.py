"""Checksummed cache files under `.errcat-cache/`: a format line, the key, a CRC, the payload.

A cache only ever costs speed: a file that is missing, for another key or damaged reads as
None, and one that cannot be written is skipped. Writes are atomic (a temporary file, then
`os.replace`), so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import os
import zlib
from pathlib import Path


def read_payload(path: Path, magic: bytes, key: str) -> bytes | None:
    """The payload stored at `path` under `magic` and `key`, checksum verified, or None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header = magic + key.encode() + b"\n"
    if not data.startswith(header):
        return None
    check, newline, payload = data[len(header) :].partition(b"\n")
    if not newline or check != b"%08x" % zlib.crc32(payload):
        return None
    return payload


def write_payload(path: Path, magic: bytes, key: str, payload: bytes) -> None:
    """Store `payload` for `key` at `path` atomically; a cache that cannot be written is skipped."""
    data = b"%s%s\n%08x\n%s" % (magic, key.encode(), zlib.crc32(payload), payload)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        # When the folder itself is unusable there is nothing to clean up either.
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
