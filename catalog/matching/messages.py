"""From what a user saw (a message, a traceback line, a log) back to the catalog entry.

A template is its literal pieces, and a placeholder stands for any non-empty text. Matching a
line runs in two steps so that a log of mostly noise costs little:

1. *Find candidates through literal text.* Every template owns one anchor: a whole word of its
   literal text (not touching a placeholder), chosen to be rare across the catalog and not a
   common English word. A line is split into words once (ASCII punctuation other than `_` and
   whitespace separate words) and only templates whose anchor is among them are considered;
   class names are anchors too, so `runtime.errors.BorrowRequiresMps: ...` finds its entry.
2. *Confirm by finding the literal pieces in order* (`LiteralPattern`), bounded on both sides
   by the same word rule, so that `q must be contiguous` does not match inside
   `kv must be contiguous`. No regular expression runs over the text: the pieces are found with
   `str.find`, each at its earliest place, which decides the match (a placeholder takes any
   text, so the earliest place of a piece leaves the most room for the rest) and reads each
   placeholder's value as its shortest possible text. The work is linear in the line's length
   for a given template (a few `find` calls per piece, plus one per occurrence of a piece that
   fails a word-edge test), where lazy regex groups backtracked polynomially on a long line
   made of one template's pieces (`tests/matching/test_match_bounded.py` holds such lines).

The most specific match wins: the one with the most literal characters; ties are all returned,
those filed under the more public module first (`tie_order`: `torch.nn.modules.module` before
`torch.nn.utils._named_member_accessor` for one text raised in both), then by id.
A template with fewer than `MIN_LITERAL_CHARS` literal non-space characters (e.g.
`{label}: {err}`), or with no word that can serve as an anchor, would match almost any line: it
is *weak* and matches only through its id, its class name before a colon, or its docs link.

A line naming a generated class before a colon (`...BorrowRequiresMps: ...`) is that entry,
and a `For further information visit .../errors/<id>/` note is the entry of that id (a note
right after its own message line is not counted twice). Any other class before the colon
(`packaging.version.InvalidVersion: ...`, `ValueError: ...`) narrows the candidates to the
entries raised as that class, the message deciding among them; when none of them matches, every
entry is tried, as for a bare message. Text before the colon that does not read as a class (the
catalog knows no class or name of it, and it is not a CapWords name that is dotted, as a
traceback prints a class, or built in: `torch.nn.functional: bad value`, `Softmax2d: expected
...`) may be the message's own, so the whole line is tried too, the most specific match
winning. Blanks that end a template are optional: pasting a line, or logging it, loses them.
Entries whose class is not generated (qualified names,
built-ins such as `SystemExit`) are known by that class: it is what a traceback prints, so even
a weak template of theirs matches after it, and an entry's `name` is only a label for them.

A query that is only an id or a class name (bare or qualified, or the class of entries without
a generated one) names its entries directly: that is how people search for what a traceback
printed. catalog/pages/theme/assets/errcat-match.js applies these same rules in the browser, to the
template index the site ships (catalog/matching/browser_index.py); tests/matching/test_match_index.py holds
the two to the same answers.

Everything that does not depend on the text matched is precomputed once into a `MatcherTable`,
plain data that can be stored (see catalog/matching/message_index.py); a matcher built on a table
decodes a template only when a line selects it as a candidate, so one query against a large
catalog decodes a handful of templates, not all of them.
"""

from __future__ import annotations

import bisect
import marshal
import re
import string
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from catalog.core.exceptions import EVERY_BUILTIN_EXCEPTION
from catalog.matching.frames import raised_at
from extractor.imports import public_rank

if TYPE_CHECKING:
    from catalog.core.model import Catalog

MIN_LITERAL_CHARS = 8
"""Literal non-space characters a template needs to identify a line by its text alone."""
MAX_LINE_CHARS = 8192
"""Characters of a line that are matched; longer lines are cut (bounds the work per line)."""

_SEPARATORS = "".join(c for c in string.punctuation if c != "_")
_TO_SPACES = bytes.maketrans(_SEPARATORS.encode(), b" " * len(_SEPARATORS))

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
_CLASS_PREFIX = re.compile(r"\s*((?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)): ?(.*)\Z", re.DOTALL)
_ID = re.compile(r"[0-9a-f]{16}\Z")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")


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


def tie_order(result: MatchResult) -> tuple[int, int, str]:
    """Where a result goes among matches equally specific: the module a user imports from is
    the one their error most likely came from, so the entry filed under the most public
    module (`extractor.imports.public_rank`: fewer private parts, then shallower) comes first,
    then the lower id."""
    private, depth = public_rank(result.module)
    return private, depth, result.id


ROW_KEYS = ("id", "message", "exception", "name", "status", "module", "url")
"""The fields of a table row, in order: what a `MatchResult` reports about its entry."""

Row = tuple[str, str, str, str, str, str, str]
"""An entry's `ROW_KEYS` values."""
Spec = tuple[tuple[str, ...], tuple[str, ...], int, bytes | None, bool, str, bool, bool]
"""A template's precomputed matching data: its literal pieces (`LiteralPattern.literals`),
placeholder fields, literal characters, anchor (None for a weak template), whether it starts
with a placeholder, its longest literal piece, whether its entry has a generated class, and
whether it is only the first line of a multi-line message (see `first_line`)."""


def first_line(message: str) -> str | None:
    """The first line of a multi-line template, or None for a one-line one.

    People paste a multi-line error by its first line as often as whole (a log keeps one line
    per record, a chat message the headline), so each multi-line template is matched by its
    first line too, as a template of its own under the same entry.
    """
    line, newline, _rest = message.partition("\n")
    return line if newline else None


@dataclass(frozen=True)
class MatcherTable:
    """Everything a matcher needs that does not depend on the text matched.

    Only built-in types (tuples, dicts, str, bytes, int), so `to_data()` can be stored with
    `marshal`. Each template is kept marshalled on its own and decoded the first time a query
    needs it: loading a stored table then costs little more than reading its bytes.
    """

    templates: tuple[bytes, ...]
    """Each template's `(Row, Spec)`, marshalled; the maps below hold indices into it."""
    by_id: dict[str, int]
    """The first template of each id."""
    by_name: dict[str, int]
    """The first template of each class name."""
    by_anchor: dict[bytes, tuple[int, ...]]
    """Strong templates by their anchor word."""
    by_untyped_class: dict[str, tuple[int, ...]]
    """Templates of entries without a generated class, by their `exception`."""

    @classmethod
    def build(cls, rows: Iterable[Mapping[str, str]]) -> MatcherTable:
        """The table of `rows`: `id`, `message`, and optionally the other `ROW_KEYS`."""
        from catalog.core.exceptions import has_typed_class
        from catalog.core.placeholders import literal_text, parse_placeholders

        prepared: list[tuple[Row, str, list[str], tuple[str, ...], int, tuple[str, ...]]] = []
        untyped: list[bool] = []
        for row in rows:
            values: Row = (
                row["id"],
                row["message"],
                row.get("exception", ""),
                row.get("name", ""),
                row.get("status", ""),
                row.get("module", ""),
                row.get("url", ""),
            )
            # The whole message, then (for a multi-line one) its first line, right after it so
            # that "the first template of an id or name" is always the whole message's.
            line = first_line(values[1])
            for matched in (values[1],) if line is None else (values[1], line):
                safe, literals_of, literal_chars = _compile(matched)
                fields = tuple(p.field for p in parse_placeholders(matched))
                if len("".join(literal_text(matched).split())) < MIN_LITERAL_CHARS:
                    safe = []
                prepared.append((values, matched, safe, literals_of, literal_chars, fields))
                untyped.append(row.get("typed") == "0")
        frequency: dict[str, int] = {}
        for _row, _matched, safe, *_rest in prepared:
            for word in set(safe):
                frequency[word] = frequency.get(word, 0) + 1
        templates: list[bytes] = []
        by_id: dict[str, int] = {}
        by_name: dict[str, int] = {}
        by_anchor: dict[bytes, list[int]] = {}
        by_untyped: dict[str, list[int]] = {}
        for index, (values, message, safe, literals_of, literal_chars, fields) in enumerate(
            prepared
        ):
            exception, name = values[2], values[3]
            part = message is not values[1]
            anchor = (
                min(safe, key=lambda w: _anchor_rank(w, frequency[w])).encode("utf-8")
                if safe
                else None
            )
            # A row that does not say its class is taken at its name, as rows always were.
            typed = (has_typed_class(exception) if exception else True) and not untyped[index]
            parsed = list(string.Formatter().parse(message))
            literals = [part[0] for part in parsed]
            if parsed and parsed[-1][1] is None:
                literals[-1] = literals[-1].rstrip()  # its ending blanks are optional (`_compile`)
            fragment = max(literals, key=len, default="")
            starts_with_field = bool(fields) and not string_starts_literal(message)
            spec: Spec = (
                literals_of,
                fields,
                literal_chars,
                anchor,
                starts_with_field,
                fragment,
                typed,
                part,
            )
            templates.append(marshal.dumps((values, spec)))
            by_id.setdefault(values[0], index)
            if name:
                by_name.setdefault(name, index)
            if anchor is not None:
                by_anchor.setdefault(anchor, []).append(index)
            if not typed and not part:
                by_untyped.setdefault(exception, []).append(index)
        return cls(
            templates=tuple(templates),
            by_id=by_id,
            by_name=by_name,
            by_anchor={word: tuple(indices) for word, indices in by_anchor.items()},
            by_untyped_class={key: tuple(indices) for key, indices in by_untyped.items()},
        )

    def template(self, index: int) -> tuple[Row, Spec]:
        """The row and spec of template `index`."""
        row, spec = marshal.loads(self.templates[index])
        return row, spec

    def class_names(self) -> dict[str, int]:
        """The names of generated classes (what tracebacks print), each with its template."""
        untyped = {index for indices in self.by_untyped_class.values() for index in indices}
        return {name: index for name, index in self.by_name.items() if index not in untyped}

    def to_data(self) -> tuple[Any, ...]:
        """The table as built-in values only (the inverse of `from_data`)."""
        return (self.templates, self.by_id, self.by_name, self.by_anchor, self.by_untyped_class)

    @classmethod
    def from_data(cls, data: tuple[Any, ...]) -> MatcherTable:
        """A table from `to_data()`'s value; raises ValueError when it has the wrong shape."""
        kinds = (tuple, dict, dict, dict, dict)
        if not (
            isinstance(data, tuple)
            and len(data) == len(kinds)
            and all(isinstance(part, kind) for part, kind in zip(data, kinds, strict=True))
        ):
            raise ValueError("not a matcher table")
        return cls(*data)


FULL, START, ANYWHERE = 0, 1, 2
"""How `LiteralPattern.groups` places a template: the whole text, from its start, or anywhere."""


@dataclass(frozen=True)
class LiteralPattern:
    """A template as its literal pieces, matched by finding them in order with `str.find`.

    It answers as the regex `L0(.+?)L1(.+?)...Ln` did (DOTALL; the last group greedy when the
    template ends with a placeholder), bounded by the word rule before a first piece that starts
    with a word character and after a last piece that ends with one, blanks ending the template
    optional. A placeholder takes any non-empty text, so placing each piece at its earliest
    possible place leaves the most room for the rest: if any placement matches, that one does,
    and it gives each placeholder its shortest text, as lazy groups did. Cost: one `find` per
    piece, plus one per occurrence of the first or last piece that fails a word-edge test.
    """

    literals: tuple[str, ...]
    """Literal text around the placeholders, braces undoubled: one more than the placeholders."""

    @cached_property
    def _shape(self) -> tuple[str, str, bool, bool]:
        last = self.literals[-1]
        kept = last.rstrip()
        return (
            kept,
            last[len(kept) :],
            _is_word_char(self.literals[0][:1]),
            _is_word_char(last[-1:]),
        )

    def groups(self, text: str, how: int = FULL) -> tuple[str, ...] | None:
        """Each placeholder's text when `text` matches (placed as `how` says), else None."""
        literals = self.literals
        kept, blanks, before_edge, after_edge = self._shape
        last = len(literals) - 1
        # Without a placeholder the one piece is also the last, whose ending blanks are optional.
        first = literals[0] if last else kept
        solid = len(text.rstrip()) if blanks else len(text)  # past it only blanks remain
        if how == ANYWHERE:
            at = text.find(first)
            while at >= 0 and before_edge and at > 0 and _is_word_char(text[at - 1]):
                at = text.find(first, at + 1)
            if at < 0:
                return None
        elif text.startswith(first):
            at = 0
        else:
            return None
        if last == 0:
            # No placeholder: the piece must end right here; try its next place while it fails.
            while at >= 0:
                if self._ends_at(text, at, kept, blanks, after_edge, solid, how):
                    return ()
                if how != ANYWHERE:
                    return None
                at = text.find(first, at + 1)
                while at >= 0 and before_edge and at > 0 and _is_word_char(text[at - 1]):
                    at = text.find(first, at + 1)
            return None
        position = at + len(first)
        values: list[str] = []
        for piece in literals[1:last]:
            found = text.find(piece, position + 1)  # + 1: a placeholder is never empty
            if found < 0:
                return None
            values.append(text[position:found])
            position = found + len(piece)
        if not kept and not blanks:
            # Ends with a placeholder: it takes the rest of the text.
            if position >= len(text):
                return None
            values.append(text[position:])
            return tuple(values)
        end = self._last_piece(text, position + 1, kept, blanks, after_edge, solid, how)
        if end < 0:
            return None
        values.append(text[position:end])
        return tuple(values)

    @staticmethod
    def _ends_at(
        text: str, at: int, kept: str, blanks: str, after_edge: bool, solid: int, how: int
    ) -> bool:
        """Whether the last piece, starting at `at`, ends the match there."""
        if not text.startswith(kept, at):
            return False
        after = at + len(kept)
        if blanks:
            if how == FULL:
                return after >= solid  # blanks then nothing, or any blanks then nothing
            return text.startswith(blanks, after) or after >= solid
        if how == FULL:
            return after == len(text)
        return not (after_edge and after < len(text) and _is_word_char(text[after]))

    def _last_piece(
        self, text: str, start: int, kept: str, blanks: str, after_edge: bool, solid: int, how: int
    ) -> int:
        """The earliest place at or after `start` where the last piece ends the match, or -1."""
        if start > len(text):
            return -1
        if how == FULL:
            # Anchored at the end: one place only (blanks may be lost after the kept text).
            at = (solid if blanks else len(text)) - len(kept)
            if not kept:
                at = max(start, solid)
                return at if at <= len(text) else -1
            return (
                at
                if at >= start and self._ends_at(text, at, kept, blanks, after_edge, solid, how)
                else -1
            )
        if not kept:
            # Only blanks: where they occur, or where nothing but blanks is left.
            found = text.find(blanks, start)
            tail = max(start, solid)
            if tail > len(text):
                return found
            return tail if found < 0 else min(found, tail)
        at = text.find(kept, start)
        while at >= 0 and not self._ends_at(text, at, kept, blanks, after_edge, solid, how):
            at = text.find(kept, at + 1)
        return at


@dataclass(frozen=True)
class _Template:
    row: Row
    literals: tuple[str, ...]
    fields: tuple[str, ...]
    literal_chars: int
    anchor: bytes | None
    starts_with_field: bool
    fragment: str
    """The longest literal piece: a substring test that rejects most candidates at C speed."""
    typed: bool
    """Whether the entry has a generated class (its `name` is then what tracebacks print)."""
    first_line: bool
    """Whether it is the first line of a multi-line message rather than the whole message."""

    @property
    def weak(self) -> bool:
        return self.anchor is None

    @cached_property
    def multiline(self) -> bool:
        """Whether its literal text spans lines: only such templates can match a whole paste."""
        return any("\n" in literal for literal in self.literals)

    @cached_property
    def pattern(self) -> LiteralPattern:
        return LiteralPattern(self.literals)

    def result(self, found: tuple[str, ...] | None, via: str) -> MatchResult:
        entry_id, message, exception, name, status, module, url = self.row
        values = tuple(zip(self.fields, found, strict=True)) if found is not None else ()
        return MatchResult(
            id=entry_id,
            message=message,
            literal_chars=self.literal_chars,
            exception=exception,
            name=name,
            status=status,
            module=module,
            url=url,
            values=values,
            via=via,
        )

    def fullmatch(self, text: str) -> tuple[str, ...] | None:
        if self.fragment not in text:
            return None
        return self.pattern.groups(text, FULL)

    def search(self, text: str) -> tuple[str, ...] | None:
        if self.fragment not in text:
            return None
        # A leading placeholder absorbs whatever precedes the message: placed from the start.
        return self.pattern.groups(text, START if self.starts_with_field else ANYWHERE)


def _is_word_char(char: str) -> bool:
    return bool(char) and not char.isspace() and char not in _SEPARATORS


def _compile(message: str) -> tuple[list[str], tuple[str, ...], int]:
    """The template's anchorable words, its literal pieces, and its count of literal characters.

    Anchorable words are whole words of the literal text that no placeholder touches: in
    `{n}th`, `th` is not a word of the concrete message, while in `cuda:{id}`, `cuda` is.
    """
    parsed = list(string.Formatter().parse(message))
    safe: list[str] = []
    literals = [""]
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
        # The parser cuts literal text at each doubled brace: join the runs into one piece.
        literals[-1] += literal
        if field is not None:
            literals.append("")
    return safe, tuple(literals), literal_chars


def _anchor_rank(word: str, frequency: int) -> tuple[bool, bool, int, int, str]:
    """Lower is a better anchor: not a common word or a number, four letters or more, used by
    few templates, long (fewer noise lines contain it, so fewer patterns run)."""
    common = word.lower() in _COMMON_WORDS or word.isdigit()
    return (common, len(word) < 4, frequency, -len(word), word)


class MessageMatcher:
    """Matches concrete messages and log lines against catalog templates.

    Built on a `MatcherTable`; each template is materialized, and its regex compiled, the first
    time a line makes it a candidate.
    """

    def __init__(
        self, table: MatcherTable, calls: Mapping[str, Collection[str]] | None = None
    ) -> None:
        self.table = table
        self.calls: Mapping[str, Collection[str]] = calls or {}
        """Entry id -> the page anchors of its sources that call a raise helper (the site
        index's `calls`), for the frame a traceback links to (`frames.raised_at`)."""
        self._built: list[_Template | None] = [None] * len(table.templates)
        self._class_words: frozenset[bytes] | None = None
        self._anchors: frozenset[bytes] | None = None
        self._folded_anchors: dict[bytes, list[int]] | None = None
        self._folded_starts: list[tuple[str, int]] | None = None
        self._folded: dict[int, LiteralPattern] = {}
        self._by_ends: dict[str, list[str]] | None = None

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[Mapping[str, str]],
        calls: Mapping[str, Collection[str]] | None = None,
    ) -> MessageMatcher:
        """A matcher over index rows: `id`, `message`, `exception`, and optionally `name`,
        `status`, `module`, `url` (the API's `index.json` rows fit)."""
        return cls(MatcherTable.build(rows), calls)

    @classmethod
    def from_catalog(
        cls, catalog: Catalog, base_url: str = "", generate: bool = True
    ) -> MessageMatcher:
        """A matcher over every entry of `catalog`; with `base_url`, results carry page URLs;
        `generate=False`: no entry has a generated class (see `catalog_rows`)."""
        return cls.from_rows(catalog_rows(catalog, base_url, generate))

    def __len__(self) -> int:
        return len(self.table.templates)

    def _template(self, index: int) -> _Template:
        template = self._built[index]
        if template is None:
            row, spec = self.table.template(index)
            template = _Template(row, *spec)
            self._built[index] = template
        return template

    def is_weak(self, entry_id: str) -> bool:
        """Whether the entry matches only by id, class name or link, never by its text."""
        return self._template(self.table.by_id[entry_id]).weak

    def by_id(self, entry_id: str) -> MatchResult | None:
        """The entry of an id, as a result (`via` is `link`)."""
        index = self.table.by_id.get(entry_id)
        return self._template(index).result(None, "link") if index is not None else None

    def by_name(self, name: str) -> MatchResult | None:
        """The entry of a class name, as a result (`via` is `class`)."""
        index = self.table.by_name.get(name)
        return self._template(index).result(None, "class") if index is not None else None

    def by_class(self, exception: str) -> list[MatchResult]:
        """The entries raised as `exception` when that class has no generated classes (`via`
        is `class`): `packaging.version.InvalidVersion` finds every entry of that class."""
        qualified = self.untyped_class(exception)
        indices = self.table.by_untyped_class.get(qualified, ()) if qualified else ()
        found = [self._template(i) for i in indices]
        return sorted((t.result(None, "class") for t in found), key=tie_order)

    def untyped_class(self, qualified: str) -> str | None:
        """The class without generated classes that `qualified` names: itself, or the one
        class with the same package and class name (`httpx.TooManyRedirects`, as the package
        re-exports it, names `httpx._exceptions.TooManyRedirects`, as it is defined)."""
        if qualified in self.table.by_untyped_class:
            return qualified
        if self._by_ends is None:
            self._by_ends = {}
            for known in self.table.by_untyped_class:
                self._by_ends.setdefault(_ends(known), []).append(known)
        found = self._by_ends.get(_ends(qualified), [])
        return found[0] if len(found) == 1 else None

    def match(self, message: str) -> list[MatchResult]:
        """The entries `message` matches, best first: the most specific one and its ties.

        `message` may be a bare message, a traceback's last line (`ValueError: ...`), a docs
        link note, an id or a class name on its own, or several lines (then each line's best
        matches, most specific first). Only when nothing matches exactly, approximate results
        follow (`via` is `approximate`): another case of ASCII letters, or the start of a
        message cut short. A result's page link points at the raise site when `message` is a
        traceback with a frame in the entry's package (`frames.raised_at`).
        """
        results = self._match(message)
        if 'File "' not in message:
            return results
        located = []
        for result in results:
            calls = self.calls.get(result.id, ())
            anchor = raised_at(message, result.module, calls) if result.url else None
            located.append(
                result if anchor is None else replace(result, url=f"{result.url}#{anchor}")
            )
        return located

    def _match(self, message: str) -> list[MatchResult]:
        lines = [line for line in message.splitlines() if line.strip()]
        if len(lines) > 1:
            # A multi-line message pasted whole matches as one text first, so that its entry
            # ranks by all its literal text rather than by one of its lines.
            seen = {result.id: result for result in self._match_whole(message.strip())}
            for line in lines:
                for result in self._match_paste(line.strip()):
                    seen.setdefault(result.id, result)
            if 'File "' not in message:
                # A value printed over several lines (a tree's, a tensor's repr) inside a
                # one-line message: its lines read as one, as a search box gives them (the most
                # specific match wins, as ever). Not a traceback's: its frames would join in.
                for result in self._match_paste(" ".join(line.strip() for line in lines)):
                    seen.setdefault(result.id, result)
            if not seen:
                for line in lines:
                    for result in self._approximate(line.strip()):
                        seen.setdefault(result.id, result)
                return list(seen.values())
            return sorted(seen.values(), key=lambda r: (-r.literal_chars, *tie_order(r)))
        query = message.strip()
        return self._named(query) or self._match_paste(query) or self._approximate(query)

    def _approximate(self, line: str) -> list[MatchResult]:
        """What a line matches once ASCII case is ignored; failing that, the templates whose
        literal start it is (at least `MIN_LITERAL_CHARS` of it, ending at a word's end),
        shortest first, at most `MAX_APPROXIMATE`. A class before a colon is set aside."""
        line = line[:MAX_LINE_CHARS]
        prefix = _CLASS_PREFIX.match(line)
        text = fold(prefix.group(3).strip() if prefix else line)
        if not text:
            return []
        if self._folded_anchors is None:
            folded: dict[bytes, list[int]] = {}
            for word, indices in self.table.by_anchor.items():
                folded.setdefault(word.lower(), []).extend(indices)
            self._folded_anchors = folded
        candidates = {i for word in set(words(text)) for i in self._folded_anchors.get(word, ())}
        for how in (FULL, None):
            best: list[_Template] = []
            for index in sorted(candidates):
                template = self._template(index)
                pattern = self._folded.get(index)
                if pattern is None:
                    pattern = self._folded[index] = LiteralPattern(
                        tuple(fold(literal) for literal in template.literals)
                    )
                placed = (
                    how if how is not None else START if template.starts_with_field else ANYWHERE
                )
                if pattern.groups(text, placed) is None:
                    continue
                if not best or template.literal_chars > best[0].literal_chars:
                    best = [template]
                elif template.literal_chars == best[0].literal_chars:
                    best.append(template)
            if best:
                return sorted((t.result(None, "approximate") for t in best), key=tie_order)
        if len("".join(text.split())) < MIN_LITERAL_CHARS:
            return []
        return self._starting_with(text)

    def _starting_with(self, text: str) -> list[MatchResult]:
        """The strong templates whose first literal piece, folded, starts with `text`."""
        if self._folded_starts is None:
            starts = []
            for indices in self.table.by_anchor.values():
                for index in indices:
                    first = self._template(index).literals[0]
                    if first:
                        starts.append((fold(first), index))
            self._folded_starts = sorted(starts)
        starts = self._folded_starts
        found: list[_Template] = []
        at = bisect.bisect_left(starts, (text, -1))
        while at < len(starts) and starts[at][0].startswith(text):
            first, index = starts[at]
            at += 1
            # The cut must fall between words, not inside one ("invalid lea" is not a start).
            if (
                len(first) > len(text)
                and _is_word_char(text[-1])
                and _is_word_char(first[len(text)])
            ):
                continue
            found.append(self._template(index))
        found.sort(key=lambda t: (t.literal_chars, t.row[0]))
        results: dict[str, MatchResult] = {}
        for template in found:
            if len(results) == MAX_APPROXIMATE:
                break
            results.setdefault(template.row[0], template.result(None, "approximate"))
        return list(results.values())

    def _match_whole(self, text: str) -> list[MatchResult]:
        """The multi-line templates that several lines, taken as one text, match."""
        text = text[:MAX_LINE_CHARS]
        candidates = [i for i in self._candidates(text) if self._template(i).multiline]
        return self._best(text, candidates, full=True) or self._best(text, candidates, full=False)

    def _match_paste(self, line: str) -> list[MatchResult]:
        """One line's matches, read as written and, where it prints Python strings (a KeyError,
        a list or dict of messages), through each string's value too: the most specific win."""
        found = self._match_line(line)
        variants = printed_variants(line[:MAX_LINE_CHARS])
        if not variants:
            return found
        return _most_specific(found, *(self._match_line(variant) for variant in variants))

    def _named(self, query: str) -> list[MatchResult]:
        """The entries a whole query names: an id, or a class name (a generated class's,
        possibly qualified, or the class of entries without one); empty when it names none.

        A traceback prints the class, so people search by it; it never occurs in the message
        itself, which is why it is looked up here rather than matched as text.
        """
        if _ID.match(query):
            found = self.by_id(query)
            if found is not None:
                return [found]
        if _DOTTED.match(query):
            of_class = self.by_class(query)
            if of_class:
                return of_class
            named = self.by_name(query.rsplit(".", 1)[-1])
            if named is not None:
                return [named]
        return []

    def _match_line(self, text: str) -> list[MatchResult]:
        text = text[:MAX_LINE_CHARS]
        if not text:
            return []
        link = _LINK.search(text)
        if link and link.group(1) in self.table.by_id:
            return [self._template(self.table.by_id[link.group(1)]).result(None, "link")]
        prefix = _CLASS_PREFIX.match(text)
        if prefix:
            qualified, name, rest = prefix.group(1), prefix.group(2), prefix.group(3).strip()
            named = self.table.by_name.get(name)
            if named is not None and self._template(named).typed:
                template = self._template(named)
                return [template.result(template.fullmatch(rest), "class")]
            narrowed = self._of_class(qualified, named, rest)
            found = (
                self._best(rest, narrowed, full=True) or self._best(rest, narrowed, full=False)
                if narrowed
                else []
            )
            if found:
                return found
            candidates = list(self._candidates(rest))
            if not _reads_as_class(
                name, qualified, named, self.untyped_class(qualified) is not None
            ):
                # `torch.nn.functional: bad value`: the text before the colon may be the
                # message's own, so the whole line competes with the text after the colon.
                whole = list(self._candidates(text))
                return _most_specific(
                    self._best(rest, candidates, full=True), self._best(text, whole, full=True)
                ) or _most_specific(
                    self._best(rest, candidates, full=False), self._best(text, whole, full=False)
                )
            found = self._best(rest, candidates, full=True) or self._best(
                rest, candidates, full=False
            )
            if found:
                return found
        candidates = list(self._candidates(text))
        return self._best(text, candidates, full=True) or self._best(text, candidates, full=False)

    def _of_class(self, qualified: str, named: int | None, rest: str) -> list[int]:
        """Templates a class name before a colon points at: the strong candidates of `rest`
        raised as that class, every template of a class without generated classes, and the
        entry whose name (a label, not a class of its own) is the class's."""
        defined = self.untyped_class(qualified) or qualified
        picked = [i for i in self._candidates(rest) if self._template(i).row[2] == defined]
        picked += self.table.by_untyped_class.get(defined, ())
        if named is not None:
            picked.append(named)
        return list(dict.fromkeys(picked))

    def _candidates(self, text: str) -> Iterator[int]:
        by_anchor = self.table.by_anchor
        for word in set(words(text)).intersection(by_anchor):
            yield from by_anchor[word]

    def _best(self, text: str, candidates: Iterable[int], *, full: bool) -> list[MatchResult]:
        best: list[MatchResult] = []
        for index in candidates:
            template = self._template(index)
            found = template.fullmatch(text) if full else template.search(text)
            if found is None:
                continue
            result = template.result(found, "message")
            if not best or result.literal_chars > best[0].literal_chars:
                best = [result]
            elif result.literal_chars == best[0].literal_chars:
                best.append(result)
        return sorted(best, key=tie_order)

    def scan_lines(self, lines: Iterable[str]) -> dict[str, int]:
        """How often each catalogued error occurs in `lines` (id → count, first seen first).

        Each line counts once, for its best match (ties count for each tied entry).
        """
        if self._class_words is None or self._anchors is None:
            self._class_words = frozenset(name.encode("utf-8") for name in self.table.class_names())
            self._anchors = frozenset(self.table.by_anchor) | self._class_words
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
        table = self.table
        if has_link:
            link = _LINK.search(line)
            if link and link.group(1) in table.by_id:
                return [link.group(1)]
        assert self._class_words is not None
        for name in self._class_words.intersection(tokens):
            decoded = name.decode("utf-8")
            if re.search(rf"(?<![\w]){re.escape(decoded)}: ", line + " "):
                return [self._template(table.by_name[decoded]).row[0]]
        built = self._built
        best: list[_Template] = []
        for word in set(tokens).intersection(table.by_anchor):
            for index in table.by_anchor[word]:
                template = built[index] or self._template(index)
                if template.search(line) is None:
                    continue
                if not best or template.literal_chars > best[0].literal_chars:
                    best = [template]
                elif template.literal_chars == best[0].literal_chars:
                    best.append(template)
        return sorted(t.row[0] for t in best)


_CLASS_NAME = re.compile(r"_*[A-Z]")


def _ends(qualified: str) -> str:
    """A dotted class name's package and class name: what a re-export keeps of it."""
    parts = qualified.split(".")
    return f"{parts[0]}.{parts[-1]}" if len(parts) > 1 else qualified


def _reads_as_class(name: str, qualified: str, named: int | None, untyped: bool) -> bool:
    """Whether the text before a colon reads as an exception class: the catalog knows it as an
    entry's class or name; or its last part is CapWords (as classes are named: `ValueError`,
    `InvalidVersion`) and it is either dotted, as a traceback prints every class but the
    built-in ones (`packaging.version.InvalidVersion`), or a built-in class. `torch.nn.
    functional`, `cuda` or `Softmax2d` (a module's name starting its own message) may be the
    message's own text."""
    if untyped or named is not None:
        return True
    return _CLASS_NAME.match(name) is not None and (
        "." in qualified or name in EVERY_BUILTIN_EXCEPTION
    )


def _most_specific(*found: list[MatchResult]) -> list[MatchResult]:
    """The results with the most literal characters among several readings of one line, by id
    (an entry found by more than one reading is kept as the first found it)."""
    best: dict[str, MatchResult] = {}
    for results in found:
        for result in results:
            best.setdefault(result.id, result)
    top = max((result.literal_chars for result in best.values()), default=0)
    return sorted((r for r in best.values() if r.literal_chars == top), key=tie_order)


MAX_APPROXIMATE = 10
"""Most entries a cut-short paste lists."""
_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def fold(text: str) -> str:
    """`text` with ASCII capitals made small: what approximate matching compares (the browser
    folds the same letters, and no other, so both matchers agree on every text)."""
    return text.translate(_FOLD)


MAX_PRINTED_STRINGS = 32
"""Most string literals of one printed value read as messages of their own."""
_PRINTED_START = "'\"[{("
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def printed_strings(text: str) -> list[str]:
    """The values of the Python string literals in `text`, as `repr` writes them, in order.

    `str(KeyError(message))` is the message's repr (`'can\\'t find "x"'`), and errors that
    collect messages print them inside a list or dict (`{'x': ['Not a valid integer.']}`). Only
    the escapes `repr` writes are decoded; any other backslash stays as it is. An unclosed
    literal ends the reading.
    """
    found: list[str] = []
    index = 0
    while len(found) < MAX_PRINTED_STRINGS:
        starts = [at for at in (text.find("'", index), text.find('"', index)) if at >= 0]
        if not starts:
            break
        start = min(starts)
        quote = text[start]
        value: list[str] = []
        index = start + 1
        while index < len(text) and text[index] != quote:
            char = text[index]
            if char == "\\" and index + 1 < len(text):
                code = text[index + 1]
                if code in _SIMPLE_ESCAPES:
                    value.append(_SIMPLE_ESCAPES[code])
                    index += 2
                    continue
                width = _HEX_ESCAPES.get(code, 0)
                digits = text[index + 2 : index + 2 + width]
                if (
                    width
                    and len(digits) == width
                    and all(c in string.hexdigits for c in digits)
                    and int(digits, 16) <= 0x10FFFF
                ):
                    value.append(chr(int(digits, 16)))
                    index += 2 + width
                    continue
            value.append(char)
            index += 1
        if index >= len(text):
            break
        found.append("".join(value))
        index += 1
    return found


def printed_variants(line: str) -> list[str]:
    """The readings of a line that prints Python strings: after an optional `Class: ` prefix
    (kept, so that the class still narrows the match), a text that starts as a printed value
    does (a quote, bracket or brace) gives each non-blank string literal in it."""
    prefix = _CLASS_PREFIX.match(line)
    head, body = (line[: prefix.start(3)], prefix.group(3)) if prefix else ("", line)
    body = body.strip()
    if not body or body[0] not in _PRINTED_START:
        return []
    return [head + value for value in printed_strings(body) if value.strip()]


def catalog_rows(
    catalog: Catalog, base_url: str = "", generate: bool = True
) -> Iterator[dict[str, str]]:
    """The matcher rows of every entry of `catalog`; with `base_url`, rows carry page URLs.

    Under `generate=False` (docs-only adoption) no entry has a generated class: rows carry no
    class name (a name nobody can raise would be found, and shown, as one) and say so with
    `typed: "0"`, so every entry is matched by the class it is raised as."""
    for entry in catalog:
        row = {
            "id": entry.id,
            "message": entry.message,
            "exception": entry.exception,
            "name": entry.name if generate else "",
            "status": entry.status.value,
            "module": entry.module,
            "url": f"{base_url}errors/{entry.id}/" if base_url else "",
        }
        if not generate:
            row["typed"] = "0"
        yield row


def string_starts_literal(message: str) -> bool:
    """Whether a template begins with literal text rather than a placeholder."""
    first = next(iter(string.Formatter().parse(message)), None)
    return bool(first and first[0])


def lookup(query: str, matcher: MessageMatcher) -> list[MatchResult]:
    """What `errcat explain QUERY` shows: an id, a class name (a generated class's, possibly
    qualified, or the class of entries without one, such as `packaging.version.InvalidVersion`),
    or a message (`MessageMatcher.match`, which `/api/match` answers with too)."""
    return matcher.match(query)
