"""Matching a message against a template costs work linear in the message's length, and gives
the same answers (match or not, and each placeholder's text) as the lazy-group regex it replaced."""

from __future__ import annotations

import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.matching.messages import (
    ANYWHERE,
    FULL,
    START,
    LiteralPattern,
    MessageMatcher,
    _compile,
    string_starts_literal,
)

_SEPARATORS = "".join(c for c in string.punctuation if c != "_")
_EDGE = r"[^\s" + re.escape(_SEPARATORS) + "]"


def _word(char: str) -> bool:
    return bool(char) and not char.isspace() and char not in _SEPARATORS


def old_regex(message: str) -> re.Pattern[str]:
    """The regex catalog/matching/messages.py compiled for a template before it found pieces instead."""
    parsed = list(string.Formatter().parse(message))
    parts: list[str] = []
    for index, (literal, field, _spec, _conversion) in enumerate(parsed):
        if field is None and index == len(parsed) - 1 and literal != literal.rstrip():
            kept = literal.rstrip()
            parts.append(re.escape(kept) + "(?:" + re.escape(literal[len(kept) :]) + r"|\s*\Z)")
        else:
            parts.append(re.escape(literal))
        if field is not None:
            parts.append("(.+)" if index == len(parsed) - 1 else "(.+?)")
    regex = "".join(parts)
    if _word(message[:1]):
        regex = f"(?<!{_EDGE})" + regex
    if parsed and parsed[-1][1] is None and _word(parsed[-1][0][-1:]):
        regex += f"(?!{_EDGE})"
    return re.compile(regex, re.DOTALL)


def old_answer(message: str, text: str, how: int) -> tuple[str, ...] | None:
    pattern = old_regex(message)
    found = (
        pattern.fullmatch(text)
        if how == FULL
        else pattern.match(text)
        if how == START
        else pattern.search(text)
    )
    return found.groups() if found else None


def new_pattern(message: str) -> LiteralPattern:
    return LiteralPattern(_compile(message)[1])


class CountingText(str):
    """A text that counts the characters its `find` and `startswith` calls may look at."""

    steps = 0

    def find(self, sub: str, start: int | None = None, *rest: int) -> int:  # type: ignore[override]
        found = super().find(sub, start, *rest)
        begin = start or 0
        CountingText.steps += 1 + ((found + len(sub)) if found >= 0 else len(self)) - begin
        return found

    def startswith(self, prefix, start=None, *rest):  # type: ignore[no-untyped-def,override]
        CountingText.steps += 1 + (len(prefix) if isinstance(prefix, str) else 1)
        return super().startswith(prefix, start, *rest)

    def rstrip(self, chars: str | None = None) -> str:
        CountingText.steps += len(self)
        return super().rstrip(chars)


def steps(pattern: LiteralPattern, text: str, how: int) -> int:
    CountingText.steps = 0
    pattern.groups(CountingText(text), how)
    return CountingText.steps


TEMPLATE = (
    "{transport_name} pool lease (ready_byte_offset={byte_offset}, generation={generation}) "
    "was not ready within {wait_timeout} s"
)
MANY = " ".join(f"w{i} {{p{i}}}" for i in range(40)) + " end"


def adversarial(message: str, size: int) -> str:
    """The template's literal pieces but the last, with one character for each placeholder,
    repeated to `size` characters: every piece but the last occurs everywhere."""
    literals = [part[0] for part in string.Formatter().parse(message)]
    unit = "x".join(literals[:-1]) + "x"
    return (unit * (size // len(unit) + 1))[:size]


def test_adversarial_messages_cost_work_linear_in_their_length() -> None:
    """A 4 KB and an 8 KB message made of a template's pieces (the 20 s case of the regex) are
    answered in steps that grow with the length, not with its fourth power."""
    for message in (TEMPLATE, MANY, "{a}{b}{c}{d} x", "{a} word {b} word {c} words"):
        pattern = new_pattern(message)
        for how in (FULL, START, ANYWHERE):
            small = adversarial(message, 4096)
            large = adversarial(message, 8192)
            few, many = steps(pattern, small, how), steps(pattern, large, how)
            pieces = len(pattern.literals)
            assert many <= 4 * pieces * len(large), (message, how, many)
            assert many <= 2 * few + 64 * pieces, (message, how, few, many)


def test_word_edge_retries_are_linear_too() -> None:
    """A last piece that occurs everywhere but always inside a word (each place retried)."""
    pattern = new_pattern("{a} used")
    text = "x" + " usedy" * 1400
    assert pattern.groups(text, ANYWHERE) is None
    assert steps(pattern, text, ANYWHERE) <= 8 * len(text)
    bare = new_pattern("used here")
    assert bare.groups(text, ANYWHERE) is None
    assert steps(bare, text, ANYWHERE) <= 8 * len(text)


def test_the_matcher_answers_the_adversarial_query_as_before() -> None:
    """Through `MessageMatcher` too: no match for the crafted line, a match once it ends right."""
    matcher = MessageMatcher.from_rows([{"id": "00000000000000a1", "message": TEMPLATE}])
    text = adversarial(TEMPLATE, 8192)
    assert matcher.match(text) == []
    assert matcher.scan_lines([text]) == {}
    assert [r.id for r in matcher.match(text[:4000] + " s")] == ["00000000000000a1"]


PIECE = st.text(alphabet="ab :.{}_ \té", max_size=4)
TEXT = st.text(alphabet="ab :.{}_ \téx", max_size=14)


@st.composite
def templates(draw: st.DrawFn) -> str:
    literals = draw(st.lists(PIECE, min_size=1, max_size=4))
    escaped = [lit.replace("{", "{{").replace("}", "}}") for lit in literals]
    names = iter(f"f{i}" for i in range(len(literals)))
    return "".join(lit + ("{" + next(names) + "}" if i < len(escaped) - 1 else "")
                   for i, lit in enumerate(escaped))  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(templates(), TEXT, st.sampled_from([FULL, START, ANYWHERE]))
def test_pieces_answer_as_the_old_regex(message: str, text: str, how: int) -> None:
    """Whole text, from the start and anywhere: same match or not, same placeholder texts."""
    assert new_pattern(message).groups(text, how) == old_answer(message, text, how)


@settings(max_examples=1500, deadline=None)
@given(templates(), st.lists(PIECE, max_size=6), st.sampled_from([FULL, START, ANYWHERE]))
def test_texts_made_of_the_pieces_answer_as_the_old_regex(
    message: str, filler: list[str], how: int
) -> None:
    """Texts built from the template's own pieces (where placements compete) agree too."""
    literals = new_pattern(message).literals
    text = "".join(f + lit for f, lit in zip(filler + [""] * len(literals), literals, strict=False))
    text += "".join(filler)
    assert new_pattern(message).groups(text, how) == old_answer(message, text, how)


def test_starts_literal_matches_the_pieces() -> None:
    """The leading-placeholder flag the matcher keeps is the first piece being empty."""
    for message in ("{a} b", "a {b}", "{{a}} {b}", ""):
        assert string_starts_literal(message) == bool(new_pattern(message).literals[0])
