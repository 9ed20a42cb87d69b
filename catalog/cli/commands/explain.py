"""`errcat explain QUERY [--json]`: from what a user saw to the entry that explains it.

QUERY is an entry id, a class name, a concrete message (or a traceback's last line), or `-` to
read a traceback or a whole log from standard input, streamed line by line.

Answers come from the compiled index cached in `.errcat-cache/` (catalog/matching/message_index.py):
after the first call on a catalog, a call reads one file instead of loading the YAML.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from catalog.core.errors import FindingsError

if TYPE_CHECKING:
    from catalog.matching.message_index import ExplainEntry, ExplainIndex
    from catalog.matching.messages import MatchResult, MessageMatcher

NAME = "explain"
HELP = "explain an error: QUERY is an id, a class name, a message, or - to read a traceback or log"

LINE_LIMIT = 65536
"""Characters of a line kept for matching; the rest of a longer line is skipped."""
CHUNK_BYTES = 1 << 20
"""Bytes read from standard input at a time."""
SAMPLE_BYTES = 8192
"""Bytes looked at to tell text from binary input."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "query",
        metavar="QUERY",
        help="an entry id, a class name, a message, or - to read standard input",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


class _Style:
    """ANSI emphasis, only for a terminal and only when NO_COLOR is not set."""

    def __init__(self, stream: object) -> None:
        isatty = getattr(stream, "isatty", None)
        self.on = bool(
            isatty
            and isatty()
            and "NO_COLOR" not in os.environ
            and os.environ.get("TERM") != "dumb"
        )

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text


def _indented(text: str) -> list[str]:
    return ["  " + line if line else "" for line in text.strip().splitlines()]


def published_knowledge(root: Path, entry_id: str) -> list[dict[str, Any]]:
    """The entry's `knowledge` as the last `errcat build` published it under `root`, or [].

    Reading it needs the package's scan and tests; the built site already holds it, so explain
    answers with that instead of scanning at every query (after a build, it is current).
    """
    from catalog.core.project import BUILD_FOLDER

    path = root / BUILD_FOLDER / "site" / "api" / "errors" / f"{entry_id}.json"
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return []
    items = document.get("knowledge") if isinstance(document, dict) else None
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict) and isinstance(item.get("text"), str)]


def render(
    entry: ExplainEntry,
    result: MatchResult,
    style: _Style,
    count: int | None = None,
    knowledge: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The entry for a terminal: heading, message, values read, prose, what the package says,
    and the page link."""
    seen = f", seen {count} time{'s' if count != 1 else ''}" if count is not None else ""
    lines = [
        f"{style(entry.name, '1')}  {entry.id}  {entry.exception}, {entry.status}{seen}",
        "  " + style(entry.message, "36"),
    ]
    for field, value in result.values:
        lines.append(f"    {field} = {value}")
    if entry.status == "draft":
        lines += ["", "  This entry is a draft: its explanation is not written yet."]
    if entry.retired_reason:
        lines += ["", style("Retired", "1"), *_indented(entry.retired_reason)]
        if entry.replaced_by:
            lines.append(f"  Replaced by {entry.replaced_by}: errcat explain {entry.replaced_by}")
    if entry.meaning:
        lines += ["", style("Meaning", "1"), *_indented(entry.meaning)]
    if entry.solutions:
        lines += ["", style("Solutions", "1")]
        for number, solution in enumerate(entry.solutions, start=1):
            first, *rest = solution.strip().splitlines() or [""]
            lines.append(f"  {number}. {first}")
            lines += ["     " + line for line in rest]
    if entry.trigger:
        lines += ["", style("Trigger", "1"), *_indented(entry.trigger)]
    if entry.situations:
        lines += ["", style("Common situations", "1")]
        lines += [f"  - {situation.strip()}" for situation in entry.situations]
    if knowledge:
        lines += ["", style("What the package says", "1")]
        for item in knowledge:
            source = item.get("source")
            where = (
                f" ({source['path']}:{source['line']})"
                if isinstance(source, dict) and source.get("path")
                else ""
            )
            lines.append(f"  - {item.get('kind')}: {item['text']}{where}")
    if result.url:
        lines += ["", f"More: {style(result.url, '4')}"]
    return "\n".join(lines)


def _as_json(
    entry: ExplainEntry, result: MatchResult, knowledge: Sequence[Mapping[str, Any]] = ()
) -> dict[str, object]:
    return {
        "id": entry.id,
        "name": entry.name,
        "exception": entry.exception,
        "status": entry.status,
        "message": entry.message,
        "module": entry.module,
        "url": result.url,
        "via": result.via,
        "values": dict(result.values),
        "literal_chars": result.literal_chars,
        "meaning": entry.meaning,
        "solutions": list(entry.solutions),
        "trigger": entry.trigger,
        "situations": list(entry.situations),
        "knowledge": [dict(item) for item in knowledge],
    }


class InputProblem(FindingsError):
    """Standard input cannot be explained: nothing in it can match (exit 1, as no match)."""


def looks_binary(sample: bytes) -> bool:
    """NUL bytes, or many control bytes other than tab, newline, carriage return and form feed."""
    if b"\0" in sample:
        return True
    controls = sum(1 for byte in sample if byte < 32 and byte not in b"\t\n\r\f\x1b")
    return controls > len(sample) // 10


def _split(chunks: Iterator[bytes]) -> Iterator[str]:
    """Lines of a byte stream (without their newline), each cut to LINE_LIMIT bytes' worth."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    skipping = False  # inside a line already cut: drop the rest of it
    for chunk in chunks:
        lines = (pending + decoder.decode(chunk)).split("\n")
        pending = lines.pop()
        for line in lines:
            if not skipping:
                yield line[:LINE_LIMIT]
            skipping = False
        if len(pending) > LINE_LIMIT:
            if not skipping:
                yield pending[:LINE_LIMIT]
            pending, skipping = "", True
    pending += decoder.decode(b"", final=True)
    if pending and not skipping:
        yield pending[:LINE_LIMIT]


def read_lines(stream: BinaryIO) -> Iterator[str]:
    """Lines of a text stream, decoded leniently, read in chunks so memory stays bounded.

    Raises InputProblem (before yielding anything) for empty or binary input.
    """
    head = stream.read(SAMPLE_BYTES)
    if looks_binary(head):
        raise InputProblem("standard input looks binary, not a log; pipe a traceback or a text log")
    while head and not head.strip():  # leading blank space: look further before calling it empty
        more = stream.read(CHUNK_BYTES)
        if not more:
            break
        head = head[-1:] + more
    if not head.strip():
        raise InputProblem("standard input is empty; pipe a traceback or a log")
    return _split(chain([head], iter(lambda: stream.read(CHUNK_BYTES), b"")))


def _explain_stream(matcher: MessageMatcher, index: ExplainIndex, as_json: bool) -> int:
    lines_read = 0

    def counted(lines: Iterator[str]) -> Iterator[str]:
        nonlocal lines_read
        for line in lines:
            lines_read += 1
            yield line

    try:
        counts = matcher.scan_lines(counted(read_lines(sys.stdin.buffer)))
    except OSError as exc:
        print(f"errcat explain: cannot read standard input: {exc}", file=sys.stderr)
        return 2
    found = [
        (index.entry(entry_id), result, count)
        for entry_id, count in counts.items()
        if (result := matcher.by_id(entry_id)) is not None
    ]
    if as_json:
        rows = [
            {
                "id": entry.id,
                "name": entry.name,
                "exception": entry.exception,
                "status": entry.status,
                "message": entry.message,
                "url": result.url,
                "count": count,
            }
            for entry, result, count in found
        ]
        json.dump({"query": "-", "lines": lines_read, "errors": rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0 if found else 1
    if not found:
        print(f"errcat explain: no catalogued error in {lines_read} line(s)", file=sys.stderr)
        return 1
    style = _Style(sys.stdout)
    if len(found) == 1:
        entry, result, count = found[0]
        print(render(entry, result, style, count))
        return 0
    print(f"{len(found)} catalogued errors in {lines_read} line(s):")
    for entry, _result, count in found:
        print(f"  {count:>6} x  {style(entry.name, '1')}  {entry.id}  {entry.message}")
    print("Run `errcat explain <id>` for one of them.")
    return 0


def run(args: argparse.Namespace) -> int:
    from catalog.core.config import load_config
    from catalog.core.errors import CatalogUnusable
    from catalog.core.findings import CatalogInvalid
    from catalog.matching.message_index import load_index
    from catalog.matching.messages import lookup

    config = load_config()
    try:
        index = load_index(config)
    except CatalogInvalid as exc:
        raise CatalogUnusable(len(exc.findings)) from exc
    matcher = index.matcher()
    if args.query == "-":
        return _explain_stream(matcher, index, args.json)
    if not args.query.strip():
        print("errcat explain: the query is empty; give an id, a class name or a message",
              file=sys.stderr)  # fmt: skip
        return 1
    if 'File "' in args.query:
        # A traceback links to the raise site it names; the sites that call a raise helper
        # are known to the last build (the site's match index), not to the catalog.
        from catalog.core.project import BUILD_FOLDER
        from catalog.matching.browser_index import helper_calls

        matcher.calls = helper_calls(config.root / BUILD_FOLDER / "site")
    results = lookup(args.query, matcher)
    if args.json:
        payload = {
            "query": args.query,
            "matches": [
                _as_json(index.entry(r.id), r, published_knowledge(config.root, r.id))
                for r in results
            ],
        }
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0 if results else 1
    if not results:
        print(
            f"errcat explain: nothing in the catalog matches {args.query!r}; try the id, the "
            "class name, or the message as printed",
            file=sys.stderr,
        )
        return 1
    style = _Style(sys.stdout)
    if len(results) > 1:
        print(f"{len(results)} entries match equally well:\n")
    print(
        "\n\n".join(
            render(index.entry(r.id), r, style, knowledge=published_knowledge(config.root, r.id))
            for r in results
        )
    )
    return 0
