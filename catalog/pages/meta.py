"""What a page says about itself to search engines and link previews: the text of
`<meta name="description">` and OpenGraph's `og:description`.

An error page's description is its message and the first sentence of its meaning, as plain
text: previews show it verbatim, so the Markdown of the safe subset (code spans, emphasis,
links) is reduced to its words. Each entry's message differs from every other's (or its
exception does), so descriptions differ across error pages.
"""

from __future__ import annotations

import re

from catalog.core.model import Entry

DESCRIPTION_LIMIT = 300
"""Characters at most; longer descriptions are cut at a word and end with `…`."""

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)")
_EMPHASIS = re.compile(r"\*(?=\S)(.+?)(?<=\S)\*|(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|])")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
"""Words ending in a full stop that do not end a sentence."""


_TITLE_CLOSE = {'"': '"', "'": "'", "(": ")"}


def _closing_bracket(text: str, start: int) -> int:
    """The index of the `]` that closes the `[` at `start`, brackets nesting and backslash
    escapes honoured as CommonMark reads link text; -1 when it is not closed."""
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


def _past_blanks(text: str, index: int) -> int:
    """The first index at or after `index` that is not a space, tab or newline."""
    while index < len(text) and text[index] in " \t\n":
        index += 1
    return index


def _link_end(text: str, start: int) -> int:
    """The index just past the `)` of an inline link's `(destination "title")` opening at
    `start`, or -1 when none is there. A bare destination may hold balanced parentheses
    (`wiki/Foo_(bar)`), an angle-bracketed one spaces: a simple `[^)]*` cut both short and left
    a stray `)` in the text."""
    index = _past_blanks(text, start + 1)
    if index < len(text) and text[index] == "<":
        close = text.find(">", index)
        if close < 0:
            return -1
        index = close + 1
    else:
        depth = 0
        while index < len(text) and not text[index].isspace():
            char = text[index]
            if char == "\\":
                index += 2
                continue
            if char == "(":
                depth += 1
            elif char == ")":
                if depth == 0:
                    break
                depth -= 1
            index += 1
    index = _past_blanks(text, index)
    if index < len(text) and text[index] in _TITLE_CLOSE:
        close = text.find(_TITLE_CLOSE[text[index]], index + 1)
        if close < 0:
            return -1
        index = _past_blanks(text, close + 1)
    return index + 1 if index < len(text) and text[index] == ")" else -1


def _unlinked(text: str) -> str:
    """`text` with each inline link or image replaced by its own text (alt text for images)."""
    parts: list[str] = []
    position = index = 0
    while True:
        index = text.find("[", index)
        if index < 0:
            break
        if index and text[index - 1] == "\\":
            index += 1
            continue
        close = _closing_bracket(text, index)
        end = (
            _link_end(text, close + 1)
            if 0 < close + 1 < len(text) and text[close + 1] == "("
            else -1
        )
        if end < 0:
            index += 1
            continue
        opening = index - 1 if index and text[index - 1] == "!" else index
        parts.append(text[position:opening])
        parts.append(_unlinked(text[index + 1 : close]))
        position = index = end
    parts.append(text[position:])
    return "".join(parts)


def _words(markdown: str) -> str:
    """Text without emphasis and links; code spans are handled by the caller."""
    text = _unlinked(markdown)
    text = _STRONG.sub(lambda m: m.group(1) or m.group(2), text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    return _ESCAPE.sub(r"\1", text)


def plain_text(markdown: str) -> str:
    """The first paragraph of Markdown prose as plain text on one line: code spans keep their
    code, emphasis and links keep their words. Fenced code and list markers are left out."""
    paragraph = next((p for p in re.split(r"\n\s*\n", markdown.strip()) if p.strip()), "")
    if paragraph.lstrip().startswith(("```", "~~~")):
        return ""
    parts: list[str] = []
    position = 0
    # Code is taken as written: `borrow_torch_tensors` must not lose its underscores.
    for span in _CODE_SPAN.finditer(paragraph):
        parts.append(_words(paragraph[position : span.start()]))
        parts.append(span.group(2).strip())
        position = span.end()
    parts.append(_words(paragraph[position:]))
    text = "".join(parts)
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", text, flags=re.MULTILINE)
    return " ".join(text.split())


def first_sentence(text: str) -> str:
    """`text` up to the end of its first sentence (all of it when it has one sentence)."""
    for end in _SENTENCE_END.finditer(text):
        word = text[: end.end()].rsplit(None, 1)[-1].lower()
        if word in _ABBREVIATIONS:
            continue
        return text[: end.end()]
    return text


def _shortened(text: str) -> str:
    if len(text) <= DESCRIPTION_LIMIT:
        return text
    cut = text[: DESCRIPTION_LIMIT - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


def error_description(entry: Entry) -> str:
    """The description of an entry's page: its message, then the first sentence of its meaning,
    or for an entry without one (a draft) the exception and the module."""
    headline = " ".join(entry.headline.split())
    lead = headline if headline.endswith((".", "!", "?", ":")) else headline + "."
    meaning = first_sentence(plain_text(entry.meaning)) if entry.meaning else ""
    if not meaning:
        meaning = f"{entry.exception} raised in {entry.module}; what it means is not written yet."
    return _shortened(f"{lead} {meaning}")
