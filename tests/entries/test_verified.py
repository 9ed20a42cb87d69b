"""The committed example-results file: merging, hashing and what counts as verified."""

from __future__ import annotations

from pathlib import Path

from helpers import entry_of

from catalog.core.model import Entry, Example, Status
from catalog.entries.verified import (
    Verification,
    dump_results,
    example_hash,
    load_results,
    merge_results,
    verified_on,
)

EXAMPLE = Example(before="raise_it()", after="fixed()")


def _entry(example: Example = EXAMPLE) -> Entry:
    return entry_of("boom", name="Boom", status=Status.ACTIVE, example=example)


def _record(commit: str, outcome: str = "verified", example: Example = EXAMPLE) -> Verification:
    return Verification(
        "0123456789abcdef", example_hash(example), "linux-x86_64-cpu", commit, outcome
    )


def test_same_outcome_keeps_first_commit() -> None:
    """Rerunning an unchanged example with the same outcome keeps the commit it was first verified at."""
    merged = merge_results({}, [_record("aaaaaaa")])
    merged = merge_results(merged, [_record("bbbbbbb")])
    assert [r.commit for r in merged["0123456789abcdef"]] == ["aaaaaaa"]


def test_changed_outcome_replaces() -> None:
    """A different outcome on the same platform replaces the record."""
    merged = merge_results({}, [_record("aaaaaaa")])
    merged = merge_results(merged, [_record("bbbbbbb", outcome="failed")])
    assert [(r.commit, r.outcome) for r in merged["0123456789abcdef"]] == [("bbbbbbb", "failed")]


def test_edited_example_is_not_verified(tmp_path: Path) -> None:
    """A record for an older version of the example does not count for the current one."""
    path = tmp_path / "verified.json"
    path.write_text(dump_results(merge_results({}, [_record("aaaaaaa")])), encoding="utf-8")
    results = load_results(path)
    assert verified_on(_entry(), results) == [{"platform": "linux-x86_64-cpu", "commit": "aaaaaaa"}]
    assert (
        verified_on(_entry(Example(before="raise_it()", after="fixed_differently()")), results)
        == []
    )


def test_unreadable_file_means_no_records(tmp_path: Path) -> None:
    """A missing or corrupt results file gives no records rather than an error."""
    assert load_results(tmp_path / "absent.json") == {}
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert load_results(tmp_path / "bad.json") == {}
