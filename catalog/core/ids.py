"""Entry ids: 16 lowercase hex digits, made once from the first message and stored forever."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container

ID_PATTERN = re.compile(r"[0-9a-f]{16}\Z")


def new_id(package: str, exception: str, message: str, taken: Container[str] = ()) -> str:
    """The id for a new entry: SHA-256 of `<package>:<exception>:<message>`, first 16 hex digits.

    On a collision with an id in `taken`, `:<n>` (n = 1, 2, ...) is appended to the hashed text
    until the id is free. Ids are never recomputed once stored, so editing a message keeps its id.
    """
    base = f"{package}:{exception}:{message}"
    text, n = base, 0
    while True:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        if digest not in taken:
            return digest
        n += 1
        text = f"{base}:{n}"


def is_valid_id(value: object) -> bool:
    """Whether `value` is a well-formed id."""
    return isinstance(value, str) and ID_PATTERN.match(value) is not None
