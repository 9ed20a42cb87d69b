"""The template index that the site's search box matches pasted errors against, in the browser.

Material's word search (lunr) ranks a pasted concrete message by its words: templates made
mostly of placeholders, stop words and prefix matches (`be` finds `belong`) push the right page
far down. The site therefore ships what `errcat explain` matches with (catalog/matching/messages.py), and
`catalog/pages/theme/assets/errcat-match.js` applies the same rules in the browser, on any static
host: the ids, class names and exception classes, the anchor word of each template, and the
template cut into literal text and placeholders. Everything else the matcher needs (regexes,
literal character counts, the longest literal piece) follows from those and is computed by the
script when it loads the file.

The file is `search/errcat-match.json`, next to the search plugin's own index (under `api/` it
would be taken for an API document), as compact JSON:

    {"format": 1, "module": "<generated module>",
     "exceptions": [[<exception>, <1 when its entries have a generated class, else 0>], ...],
     "modules": [<module>, ...],
     "entries": [[<id>, <name>, <exception index>, <module index>, <anchor or null>,
                  [<literal>, <placeholder>, <literal>, ..., <literal>](, 1)], ...],
     "calls": {<id>: [<page anchor>, ...], ...}}

An entry whose message spans lines is followed by one for its first line alone (the pieces of
that line, and a seventh item, 1), as `MatcherTable.build` adds it: a paste of the first line
finds the entry as a paste of the whole message does.

`calls` lists, for each entry raised through a raise helper, the page anchors of its sources
that are calls of the helper (`torch._check(...)`): a traceback of such an error ends in the
helper's own raise, and the frame that links to the page is the call's
(`catalog.matching.frames.raised_at`).

Entries are in catalog order, as `MatcherTable.build` takes them, since "the first entry of a
name" must mean the same in both matchers. Literals are the template's text with braces
undoubled; placeholders are written as in the template without their braces (`t.device!r`).
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.matching.messages import MatcherTable, MessageMatcher, catalog_rows, first_line

if TYPE_CHECKING:
    from catalog.core.model import Catalog

MATCH_FILE = "search/errcat-match.json"
"""Where the index lies, relative to the site folder."""
FORMAT = 1
"""Bumped when the layout changes; the script ignores an index of another format."""


def pieces(message: str) -> list[str]:
    """`message` as alternating literal text and placeholders, literal first and last."""
    out = [""]
    for literal, field, spec, conversion in string.Formatter().parse(message):
        out[-1] += literal
        if field is not None:
            shown = field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            out += [shown, ""]
    return out


def match_index(
    catalog: Catalog,
    generated_module: str,
    generate: bool = True,
    calls: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The index of `catalog`, whose generated classes live in `generated_module` (none under
    `generate=False`, docs-only adoption); `calls`: entry id -> the anchors of its sources that
    call a raise helper (what `helper_calls` reads back)."""
    # Without generated classes there is no module to name one in: the index names none.
    module = generated_module if generate else ""
    return index_of_rows(catalog_rows(catalog, generate=generate), module, calls)


def index_of_rows(
    rows: Iterable[Mapping[str, str]],
    generated_module: str,
    calls: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The index of matcher rows (`catalog.matching.messages.ROW_KEYS`), in their order."""
    table = MatcherTable.build(rows)
    exceptions: dict[str, int] = {}
    typed_flags: list[int] = []
    modules: dict[str, int] = {}
    entries: list[list[Any]] = []
    for index in range(len(table.templates)):
        row, spec = table.template(index)
        entry_id, message, exception, name, _status, module, _url = row
        anchor, typed, part = spec[3], spec[6], spec[7]
        if exception not in exceptions:
            exceptions[exception] = len(exceptions)
            typed_flags.append(int(typed))
        if module not in modules:
            modules[module] = len(modules)
        line = first_line(message) if part else None
        entry = [
            entry_id,
            name,
            exceptions[exception],
            modules[module],
            anchor.decode("utf-8") if anchor is not None else None,
            pieces(message if line is None else line),
        ]
        entries.append(entry if line is None else [*entry, 1])
    return {
        "format": FORMAT,
        "module": generated_module,
        "exceptions": [list(pair) for pair in zip(exceptions, typed_flags, strict=True)],
        "modules": list(modules),
        "entries": entries,
        "calls": {entry_id: list(anchors) for entry_id, anchors in sorted((calls or {}).items())},
    }


def dumps(index: Mapping[str, Any]) -> str:
    """The index as written: compact, UTF-8 (it is fetched by every visitor who searches)."""
    return json.dumps(index, ensure_ascii=False, separators=(",", ":")) + "\n"


def class_names(site_root: Path) -> dict[str, str]:
    """Entry id → class name, as the index of the site at `site_root` holds them; empty where
    the site has no readable index of this format (a site built before it existed)."""
    try:
        index = json.loads((site_root / MATCH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        return {}
    entries = index.get("entries")
    if not isinstance(entries, list):
        return {}
    return {
        entry[0]: entry[1]
        for entry in entries
        if isinstance(entry, list)
        and len(entry) > 1
        and isinstance(entry[0], str)
        and isinstance(entry[1], str)
    }


def rows_with_names(
    rows: Iterable[Mapping[str, str]], names: Mapping[str, str]
) -> list[dict[str, str]]:
    """Matcher rows (the API index's) with each entry's class name added from `names`, so that a
    matcher built on them finds an entry by its class name too."""
    return [
        {**row, "name": names[row["id"]]} if row.get("id") in names else dict(row) for row in rows
    ]


def helper_calls(site_root: Path) -> dict[str, tuple[str, ...]]:
    """Entry id -> the anchors of its sources that call a raise helper, as the index of the
    site at `site_root` holds them (`calls`); empty where it holds none."""
    try:
        index = json.loads((site_root / MATCH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    calls = index.get("calls") if isinstance(index, dict) else None
    if not isinstance(calls, dict):
        return {}
    return {
        entry_id: tuple(anchor for anchor in anchors if isinstance(anchor, str))
        for entry_id, anchors in calls.items()
        if isinstance(entry_id, str) and isinstance(anchors, list)
    }


def site_matcher(site_root: Path, rows: Iterable[Mapping[str, str]]) -> MessageMatcher:
    """The matcher `errcat serve` answers `/api/match` with: the API index's `rows`, with the
    class names of the site's template index (the API index has no names) and its `calls`."""
    return MessageMatcher.from_rows(
        rows_with_names(rows, class_names(site_root)), helper_calls(site_root)
    )
