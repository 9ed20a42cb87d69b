"""Checksummed cache files under `.errcat-cache/`: a format line, the key, a CRC, the payload.

A cache only ever costs speed: a file that is missing, for another key or damaged reads as
None, and one that cannot be written is skipped. Writes are atomic (a temporary file, then
`os.replace`), so a reader never sees half a file.

Every key includes `code_digest()`: a cached value is shaped by errcat's code as a whole (a
fix in any stage may change it), so a key that left one module out would keep a wrong value
alive after that module's fix.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import zlib
from pathlib import Path

_HOME = Path(__file__).resolve().parents[2]
_CODE = (".py", ".j2", ".html", ".js", ".css", ".json")


@functools.cache
def code_digest() -> bytes:
    """A SHA-256 of errcat's version and of every source, template and asset file of the
    `catalog` and `extractor` packages (an editable install changes code without changing the
    version), computed once per process. The project's own YAML under `catalog/errors/` is data,
    not code, and is left out; its schema is in."""
    from catalog import __version__

    digest = hashlib.sha256(f"errcat {__version__}\0".encode())
    for package in ("catalog", "extractor"):
        for path in sorted((_HOME / package).rglob("*")):
            if path.suffix not in _CODE or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(_HOME).as_posix()
            if relative.startswith("catalog/errors/") and path.name != "schema.json":
                continue
            digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


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
