"""Where each entry's example was verified: the committed results file `errcat check --examples`
writes and the site build reads.

An outcome is tied to a hash of the example's code, so an example edited since it was verified
is no longer shown as verified anywhere.

File format (`catalog/errors/verified.json`)::

    {
      "version": 1,
      "results": {
        "<entry id>": [
          {"example_hash": "<64 hex>", "platform": "linux-x86_64-cpu",
           "commit": "<short commit>", "outcome": "verified"}
        ]
      }
    }

`outcome` is `verified` (before raised exactly this entry and after did not), `failed` or
`skipped` (the platform lacks what `requires` names). One record per (entry, platform): a new
run on the same platform replaces the old record unless it found the same example with the same
outcome, in which case the first commit is kept.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.core.model import Entry, Example

RESULTS_FILE = "verified.json"
"""File name inside the catalog folder."""
FORMAT_VERSION = 1


def example_hash(example: Example) -> str:
    """SHA-256 over the example's code and requirements (hex)."""
    text = "\0".join([example.before, example.after, ",".join(sorted(example.requires))])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Verification:
    """One recorded run of one entry's example on one platform."""

    entry_id: str
    example_hash: str
    platform: str
    """`<sys.platform>-<machine>-<accelerator>`, e.g. `linux-x86_64-cpu`."""
    commit: str
    """Short commit of the tree the run happened on (with `-dirty` when it had changes)."""
    outcome: str
    """`verified`, `failed` or `skipped`."""

    def as_dict(self) -> dict[str, str]:
        return {
            "example_hash": self.example_hash,
            "platform": self.platform,
            "commit": self.commit,
            "outcome": self.outcome,
        }


def load_results(path: Path) -> dict[str, list[Verification]]:
    """All records by entry id; an absent or unreadable file gives no records."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
        return {}
    results: dict[str, list[Verification]] = {}
    for entry_id, records in (data.get("results") or {}).items():
        for record in records if isinstance(records, list) else []:
            try:
                results.setdefault(entry_id, []).append(
                    Verification(
                        entry_id,
                        str(record["example_hash"]),
                        str(record["platform"]),
                        str(record["commit"]),
                        str(record["outcome"]),
                    )
                )
            except (KeyError, TypeError):
                continue
    return results


def verified_on(entry: Entry, results: dict[str, list[Verification]]) -> list[dict[str, str]]:
    """`[{platform, commit}]` where the entry's current example was verified (sorted by platform)."""
    if entry.example is None:
        return []
    current = example_hash(entry.example)
    return sorted(
        (
            {"platform": r.platform, "commit": r.commit}
            for r in results.get(entry.id, [])
            if r.outcome == "verified" and r.example_hash == current
        ),
        key=lambda row: row["platform"],
    )


def merge_results(
    old: dict[str, list[Verification]], new: list[Verification]
) -> dict[str, list[Verification]]:
    """`old` with each new record replacing the one for the same entry and platform."""
    merged = {entry_id: list(records) for entry_id, records in old.items()}
    for record in new:
        previous = [r for r in merged.get(record.entry_id, []) if r.platform == record.platform]
        if previous and (previous[0].example_hash, previous[0].outcome) == (
            record.example_hash,
            record.outcome,
        ):
            # Same example, same outcome: keep the commit it was first seen at, so rerunning
            # the suite does not rewrite a committed file.
            continue
        kept = [r for r in merged.get(record.entry_id, []) if r.platform != record.platform]
        merged[record.entry_id] = [*kept, record]
    return merged


def dump_results(results: dict[str, list[Verification]]) -> str:
    """The file's text: sorted keys and records, so reruns give minimal diffs."""
    payload = {
        "version": FORMAT_VERSION,
        "results": {
            entry_id: [r.as_dict() for r in sorted(records, key=lambda r: r.platform)]
            for entry_id, records in sorted(results.items())
        },
    }
    return json.dumps(payload, indent=2, sort_keys=True) + "\n"
