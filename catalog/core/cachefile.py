"""The catalog's cache files under `.errcat-cache/`: a format line, the key, the sealed payload,
written and read by `extractor.store` like every cache file errcat keeps.

A cache only ever costs speed: a file that is missing, for another key or damaged reads as
None, and one that cannot be written is skipped.

Every key includes `code_digest()`: a cached value is shaped by errcat's code as a whole (a
fix in any stage may change it), so a key that left one module out would keep a wrong value
alive after that module's fix.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from extractor import store

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
    """The payload stored at `path` under `magic` and `key`, verified, or None."""
    return store.read_sealed(path, magic + key.encode() + b"\n")


def write_payload(path: Path, magic: bytes, key: str, payload: bytes) -> None:
    """Store `payload` for `key` at `path` atomically; a cache that cannot be written is skipped."""
    store.write_sealed(path, magic + key.encode() + b"\n", payload)
