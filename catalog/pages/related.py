"""Related errors: the authored list first, then neighbours the catalog and the code suggest.

Computed candidates, in order: entries raised from the same function, entries of the same module
(nearest in the catalog file first), then entries whose messages share the most words. Retired
entries are suggested only when an author lists them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence

from catalog.core.model import Catalog, Entry, Status
from catalog.pages.sources import Source

LIMIT = 5
"""Related errors shown per page; a constant, so a page's size does not grow with the catalog."""
COMMON_WORD_ENTRIES = 100
"""A word shared by more entries than this says nothing about relatedness (and would make the
word step quadratic), so it is not counted."""

_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_WORD = re.compile(r"[a-z0-9_]{3,}")


def message_words(message: str) -> frozenset[str]:
    """Lowercase words of a message's literal text (placeholders dropped)."""
    return frozenset(_WORD.findall(_PLACEHOLDER.sub(" ", message.lower())))


def _nearest(group: list[Entry], index: int, limit: int) -> list[Entry]:
    """Entries of `group` from the one at `index` outwards, at most `limit` on each side, so
    that a large module costs no more than a small one."""
    after = group[index + 1 : index + 1 + limit]
    before = group[max(0, index - limit) : index][::-1]
    ordered: list[Entry] = []
    for step in range(max(len(before), len(after))):
        ordered += [side[step] for side in (after, before) if step < len(side)]
    return ordered


def related_entries(
    catalog: Catalog, sources: Mapping[str, Sequence[Source]], limit: int = LIMIT
) -> dict[str, tuple[Entry, ...]]:
    """Up to `limit` related entries per entry id."""
    entries = list(catalog)
    by_id = catalog.by_id()
    live = [e for e in entries if e.status is not Status.RETIRED]

    by_function: dict[tuple[str, str], list[str]] = defaultdict(list)
    for entry_id, entry_sources in sources.items():
        for source in entry_sources:
            if source.function:
                key = (source.path, source.function)
                if entry_id not in by_function[key]:
                    by_function[key].append(entry_id)
    by_module: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        by_module[entry.module].append(entry)
    in_module = {e.id: i for group in by_module.values() for i, e in enumerate(group)}
    words = {entry.id: message_words(entry.message) for entry in entries}
    postings: dict[str, list[str]] = defaultdict(list)
    for entry in live:
        for word in words[entry.id]:
            postings[word].append(entry.id)

    def candidates(entry: Entry) -> Iterator[str]:
        yield from entry.related
        for source in sources.get(entry.id, ()):
            for other in by_function.get((source.path, source.function or ""), ()):
                if by_id[other].status is not Status.RETIRED:
                    yield other
        for neighbour in _nearest(by_module[entry.module], in_module[entry.id], limit):
            if neighbour.status is not Status.RETIRED:
                yield neighbour.id
        shared: Counter[str] = Counter()
        for word in words[entry.id]:
            posting = postings.get(word, ())
            if len(posting) <= COMMON_WORD_ENTRIES:
                shared.update(posting)
        for other, _count in sorted(shared.items(), key=lambda kv: (-kv[1], kv[0])):
            yield other

    related: dict[str, tuple[Entry, ...]] = {}
    for entry in entries:
        chosen: list[str] = []
        # Candidates come lazily, so the word step runs only for entries the others left short.
        for other in candidates(entry):
            if other != entry.id and other in by_id and other not in chosen:
                chosen.append(other)
                if len(chosen) == limit:
                    break
        related[entry.id] = tuple(by_id[other] for other in chosen)
    return related
