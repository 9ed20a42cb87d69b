"""What a page says about itself to search engines and link previews: the text of
`<meta name="description">` and OpenGraph's `og:description`.

An error page's description is its message and the first sentence of its meaning, as plain
text: previews show it verbatim, so the Markdown of the safe subset (code spans, emphasis,
links) is reduced to its words. Each entry's message differs from every other's (or its
exception does), so descriptions differ across error pages.
"""

from __future__ import annotations

import re

from catalog.model import Entry

DESCRIPTION_LIMIT = 300
"""Characters at most; longer descriptions are cut at a word and end with `…`."""

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)")
_EMPHASIS = re.compile(r"\*(?=\S)(.+?)(?<=\S)\*|(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|])")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
"""Words ending in a full stop that do not end a sentence."""


def _words(markdown: str) -> str:
    """Text without emphasis and links; code spans are handled by the caller."""
    text = _LINK.sub(r"\1", markdown)
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
