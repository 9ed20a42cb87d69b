"""The results files `errcat reproduce` keeps beside the catalog (`reproduced.json` for calls,
`tested.json` for the package's tests), read and written the same way.

A file is `{"version": N, "results": {entry id: [record, ...]}}`, ids and records sorted so
that a rerun gives a minimal diff. Each record carries a digest of the files it was seen on;
`FileBytes` reads those files once each, so a reader can drop records whose code has changed.
An absent, unreadable or unknown file reads as no results: nothing is lost that a rerun of
`errcat reproduce` cannot give back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def read_results(path: Path, version: int) -> dict[str, list[Any]]:
    """Entry id -> its stored records (each still to be checked by the caller); {} for a file
    that is absent, unreadable, of another version or of another shape."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != version:
        return {}
    results = data.get("results")
    if not isinstance(results, dict):
        return {}
    return {
        entry_id: records
        for entry_id, records in results.items()
        if isinstance(entry_id, str) and isinstance(records, list)
    }


def dump_results(version: int, results: Mapping[str, Sequence[dict[str, object]]]) -> str:
    """The file's text: sorted ids (entries without records left out), records as given."""
    payload = {
        "version": version,
        "results": {entry_id: list(rows) for entry_id, rows in sorted(results.items()) if rows},
    }
    return json.dumps(payload, indent=2, sort_keys=True) + "\n"


class FileBytes:
    """The bytes of the project's files, each read once; None for one that cannot be read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._read: dict[str, bytes | None] = {}

    def __call__(self, path: str) -> bytes | None:
        if path not in self._read:
            try:
                self._read[path] = (self.root / path).read_bytes()
            except OSError:
                self._read[path] = None
        return self._read[path]
