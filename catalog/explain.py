"""From what a user saw (a message, a traceback line, a log) back to the catalog entry.

Each template becomes a regular expression: literal text escaped, each placeholder a lazy
group. Matching a line runs in two steps so that a log of mostly noise costs little:

1. *Find candidates through literal text.* Every template owns one anchor: a whole word of its
   literal text (not touching a placeholder), chosen to be rare across the catalog and not a
   common English word. A line is split into words once (ASCII punctuation other than `_` and
   whitespace separate words) and only templates whose anchor is among them are considered;
   class names are anchors too, so `runtime.errors.BorrowRequiresMps: ...` finds its entry.
2. *Confirm with the full pattern*, bounded on both sides by the same word rule, so that
   `q must be contiguous` does not match inside `kv must be contiguous`.

The most specific match wins: the one with the most literal characters; ties are all returned.
A template with fewer than `MIN_LITERAL_CHARS` literal non-space characters (e.g.
`{label}: {err}`), or with no word that can serve as an anchor, would match almost any line: it
is *weak* and matches only through its id, its class name before a colon, or its docs link.

A line naming a catalogued class before a colon (`...BorrowRequiresMps: ...`) is that entry,
and a `For further information visit .../errors/<id>/` note is the entry of that id (a note
right after its own message line is not counted twice).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.model import Catalog

MIN_LITERAL_CHARS = 8
"""Literal non-space characters a template needs to identify a line by its text alone."""
MAX_LINE_CHARS = 8192
"""Characters of a line that are matched; longer lines are cut (bounds the regex work)."""

_SEPARATORS = "".join(c for c in string.punctuation if c != "_")
_TO_SPACES = bytes.maketrans(_SEPARATORS.encode(), b" " * len(_SEPARATORS))
# A word edge as the tokenizer sees it: start/end of text, whitespace or ASCII punctuation but `_`.
_EDGE_CLASS = r"[^\s" + re.escape(_SEPARATORS) + "]"
_BEFORE_EDGE = f"(?<!{_EDGE_CLASS})"
_AFTER_EDGE = f"(?!{_EDGE_CLASS})"

_COMMON_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "error",
        "for",
        "from",
        "got",
        "has",
        "have",
        "in",
        "is",
        "it",
        "must",
        "not",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "with",
    ]
)
_LINK = re.compile(r"/errors/([0-9a-f]{16})/")
_CLASS_PREFIX = re.compile(r"\s*(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*): ?(.*)\Z", re.DOTALL)


def words(text: str) -> list[bytes]:
    """The words of `text` as the matcher splits them (UTF-8 bytes)."""
    return text.encode("utf-8", "replace").translate(_TO_SPACES).split()


@dataclass(frozen=True)
class MatchResult:
    """One entry that a message matched."""

    id: str
    message: str
    """The entry's template."""
    literal_chars: int
    """Literal characters of the template: higher is more specific."""
    exception: str = ""
    name: str = ""
    status: str = ""
    module: str = ""
    url: str = ""
    values: tuple[tuple[str, str], ...] = ()
    """`(placeholder, concrete text)` pairs read from the message, in template order."""
    via: str = "message"
    """How it matched: `message`, `class` (a class name before a colon) or `link` (docs URL)."""


@dataclass(frozen=True)
class _Template:
    row: Mapping[str, str]
    pattern: re.Pattern[str]
    fields: tuple[str, ...]
    literal_chars: int
    anchor: bytes | None
    starts_with_field: bool
    fragment: str
    """The longest literal piece: a substring test that rejects most candidates before the regex."""

    @property
    def weak(self) -> bool:
        return self.anchor is None

    def result(self, found: re.Match[str] | None, via: str) -> MatchResult:
        row = self.row
        values = tuple(zip(self.fields, found.groups(), strict=True)) if found else ()
        return MatchResult(
            id=row["id"],
            message=row["message"],
            literal_chars=self.literal_chars,
            exception=row.get("exception", ""),
            name=row.get("name", ""),
            status=row.get("status", ""),
            module=row.get("module", ""),
            url=row.get("url", ""),
            values=values,
            via=via,
        )

    def search(self, text: str) -> re.Match[str] | None:
        if self.fragment not in text:
            return None
        # A leading placeholder absorbs whatever precedes the message, so one attempt from the
        # start of the line is enough; retrying at every position would be quadratic.
        if self.starts_with_field:
            return self.pattern.match(text)
        return self.pattern.search(text)


def _is_word_char(char: str) -> bool:
    return bool(char) and not char.isspace() and char not in _SEPARATORS


def _compile(message: str) -> tuple[list[str], str, int]:
    """The template's anchorable words, its regex, and its count of literal characters.

    Anchorable words are whole words of the literal text that no placeholder touches: in
    `{n}th`, `th` is not a word of the concrete message, while in `cuda:{id}`, `cuda` is.
    """
    parsed = list(string.Formatter().parse(message))
    safe: list[str] = []
    parts: list[str] = []
    literal_chars = 0
    for index, (literal, field, _spec, _conversion) in enumerate(parsed):
        literal_chars += len(literal)
        found = literal.encode("utf-8").translate(_TO_SPACES).decode("utf-8").split()
        after_field = index > 0 and parsed[index - 1][1] is not None
        if after_field and _is_word_char(literal[:1]):
            found = found[1:]
        if field is not None and _is_word_char(literal[-1:]):
            found = found[:-1]
        safe += found
        parts.append(re.escape(literal))
        if field is not None:
            parts.append("(.+)" if index == len(parsed) - 1 else "(.+?)")
    regex = "".join(parts)
    if _is_word_char(message[:1]):
        regex = _BEFORE_EDGE + regex
    if parsed and parsed[-1][1] is None and _is_word_char(parsed[-1][0][-1:]):
        regex += _AFTER_EDGE
    return safe, regex, literal_chars


def _anchor_rank(word: str, frequency: int) -> tuple[bool, bool, int, int, str]:
    """Lower is a better anchor: not a common word or a number, four letters or more, used by
    few templates, long (fewer noise lines contain it, so fewer patterns run)."""
    common = word.lower() in _COMMON_WORDS or word.isdigit()
    return (common, len(word) < 4, frequency, -len(word), word)


class MessageMatcher:
    """Matches concrete messages and log lines against catalog templates; built once."""

    def __init__(self, rows: Iterable[Mapping[str, str]]) -> None:
        from catalog.placeholders import literal_text, parse_placeholders

        prepared: list[tuple[Mapping[str, str], list[str], str, int, tuple[str, ...]]] = []
        for row in rows:
            safe, regex, literal_chars = _compile(row["message"])
            fields = tuple(p.field for p in parse_placeholders(row["message"]))
            non_space = len("".join(literal_text(row["message"]).split()))
            if non_space < MIN_LITERAL_CHARS:
                safe = []
            prepared.append((row, safe, regex, literal_chars, fields))
        frequency: dict[str, int] = {}
        for _row, safe, *_rest in prepared:
            for word in set(safe):
                frequency[word] = frequency.get(word, 0) + 1
        self._templates: list[_Template] = []
        self._by_anchor: dict[bytes, list[_Template]] = {}
        self._by_id: dict[str, _Template] = {}
        self._by_name: dict[str, _Template] = {}
        for row, safe, regex, literal_chars, fields in prepared:
            anchor = (
                min(
                    safe,
                    key=lambda w: _anchor_rank(w, frequency[w]),
                ).encode("utf-8")
                if safe
                else None
            )
            template = _Template(
                row=row,
                pattern=re.compile(regex, re.DOTALL),
                fields=fields,
                literal_chars=literal_chars,
                anchor=anchor,
                starts_with_field=bool(fields) and not string_starts_literal(row["message"]),
                fragment=max(
                    (part[0] for part in string.Formatter().parse(row["message"])),
                    key=len,
                    default="",
                ),
            )
            self._templates.append(template)
            self._by_id.setdefault(row["id"], template)
            if row.get("name"):
                self._by_name.setdefault(row["name"], template)
            if anchor is not None:
                self._by_anchor.setdefault(anchor, []).append(template)
        self._class_words = {name.encode("utf-8") for name in self._by_name}
        self._anchors = frozenset(self._by_anchor) | self._class_words

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, str]]) -> MessageMatcher:
        """A matcher over index rows: `id`, `message`, `exception`, and optionally `name`,
        `status`, `module`, `url` (the API's `index.json` rows fit)."""
        return cls(rows)

    @classmethod
    def from_catalog(cls, catalog: Catalog, base_url: str = "") -> MessageMatcher:
        """A matcher over every entry of `catalog`; with `base_url`, results carry page URLs."""
        return cls(
            {
                "id": entry.id,
                "message": entry.message,
                "exception": entry.exception,
                "name": entry.name,
                "status": entry.status.value,
                "module": entry.module,
                "url": f"{base_url}errors/{entry.id}/" if base_url else "",
            }
            for entry in catalog
        )

    def __len__(self) -> int:
        return len(self._templates)

    def is_weak(self, entry_id: str) -> bool:
        """Whether the entry matches only by id, class name or link, never by its text."""
        return self._by_id[entry_id].weak

    def by_id(self, entry_id: str) -> MatchResult | None:
        """The entry of an id, as a result (`via` is `link`)."""
        template = self._by_id.get(entry_id)
        return template.result(None, "link") if template else None

    def by_name(self, name: str) -> MatchResult | None:
        """The entry of a class name, as a result (`via` is `class`)."""
        template = self._by_name.get(name)
        return template.result(None, "class") if template else None

    def match(self, message: str) -> list[MatchResult]:
        """The entries `message` matches, best first: the most specific one and its ties.

        `message` may be a bare message, a traceback's last line (`ValueError: ...`), a docs
        link note, or several lines (then each line's best matches, most specific first).
        """
        lines = [line for line in message.splitlines() if line.strip()]
        if len(lines) > 1:
            seen: dict[str, MatchResult] = {}
            for line in lines:
                for result in self._match_line(line.strip()):
                    seen.setdefault(result.id, result)
            return sorted(seen.values(), key=lambda r: (-r.literal_chars, r.id))
        return self._match_line(message.strip())

    def _match_line(self, text: str) -> list[MatchResult]:
        text = text[:MAX_LINE_CHARS]
        if not text:
            return []
        link = _LINK.search(text)
        if link and link.group(1) in self._by_id:
            return [self._by_id[link.group(1)].result(None, "link")]
        prefix = _CLASS_PREFIX.match(text)
        if prefix:
            named = self._by_name.get(prefix.group(1))
            rest = prefix.group(2).strip()
            if named is not None:
                return [named.result(named.pattern.fullmatch(rest), "class")]
            found = self._best(rest, full=True) or self._best(rest, full=False)
            if found:
                return found
        return self._best(text, full=True) or self._best(text, full=False)

    def _candidates(self, text: str) -> Iterator[_Template]:
        for word in set(words(text)).intersection(self._by_anchor):
            yield from self._by_anchor[word]

    def _best(self, text: str, *, full: bool) -> list[MatchResult]:
        best: list[MatchResult] = []
        for template in self._candidates(text):
            found = template.pattern.fullmatch(text) if full else template.search(text)
            if found is None:
                continue
            result = template.result(found, "message")
            if not best or result.literal_chars > best[0].literal_chars:
                best = [result]
            elif result.literal_chars == best[0].literal_chars:
                best.append(result)
        return sorted(best, key=lambda r: r.id)

    def scan_lines(self, lines: Iterable[str]) -> dict[str, int]:
        """How often each catalogued error occurs in `lines` (id → count, first seen first).

        Each line counts once, for its best match (ties count for each tied entry).
        """
        counts: dict[str, int] = {}
        anchors = self._anchors
        previous: list[str] = []
        for line in lines:
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS]
            tokens = line.encode("utf-8", "replace").translate(_TO_SPACES).split()
            has_link = "/errors/" in line
            if not has_link and anchors.isdisjoint(tokens):
                if line.strip():
                    previous = []
                continue
            ids = self._scan_line(line, tokens, has_link)
            if has_link and ids and ids == previous:
                previous = []  # the note under its own message line: already counted
                continue
            for entry_id in ids:
                counts[entry_id] = counts.get(entry_id, 0) + 1
            previous = ids
        return counts

    def _scan_line(self, line: str, tokens: list[bytes], has_link: bool) -> list[str]:
        if has_link:
            link = _LINK.search(line)
            if link and link.group(1) in self._by_id:
                return [link.group(1)]
        present = self._class_words.intersection(tokens)
        for name in present:
            decoded = name.decode("utf-8")
            if re.search(rf"(?<![\w]){re.escape(decoded)}: ", line + " "):
                return [self._by_name[decoded].row["id"]]
        best: list[_Template] = []
        for word in set(tokens).intersection(self._by_anchor):
            for template in self._by_anchor[word]:
                if template.search(line) is None:
                    continue
                if not best or template.literal_chars > best[0].literal_chars:
                    best = [template]
                elif template.literal_chars == best[0].literal_chars:
                    best.append(template)
        return sorted(t.row["id"] for t in best)


def string_starts_literal(message: str) -> bool:
    """Whether a template begins with literal text rather than a placeholder."""
    first = next(iter(string.Formatter().parse(message)), None)
    return bool(first and first[0])


_ID = re.compile(r"[0-9a-f]{16}\Z")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")


def lookup(query: str, matcher: MessageMatcher) -> list[MatchResult]:
    """What `errcat explain QUERY` shows: an id, a (qualified) class name, or a message."""
    query = query.strip()
    if _ID.match(query):
        found = matcher.by_id(query)
        if found is not None:
            return [found]
    if _DOTTED.match(query):
        found = matcher.by_name(query.rsplit(".", 1)[-1])
        if found is not None:
            return [found]
    return matcher.match(query)
