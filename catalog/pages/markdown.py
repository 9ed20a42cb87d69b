"""Catalog prose to Markdown that can only produce the safe subset.

Authors write code spans, fenced code, emphasis, lists and http(s) links. Everything else that
Markdown or its extensions would turn into markup is neutralised here, before Markdown sees the
text: `<` and `&` become entities (raw HTML shows as text), links to other schemes keep only their
text, and the characters that start headings, attribute lists, admonitions, reference links or
template syntax are escaped. The result is still Markdown, so emphasis and lists work.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from catalog.pages import blocks
from catalog.pages.plaintext import entities

_FENCE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+.-]+")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
# A link target may hold one level of balanced parentheses, as Markdown allows.
_LINK = re.compile(
    r"(!?)\[([^\[\]\n]*)\]\(\s*<?((?:[^\s()<>]|\([^\s()<>]*\))*)>?"
    r"(?:\s+(\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_AUTOLINK = re.compile(r"<(https?://[^\s<>]+)>")
_LINE_START = re.compile(r"^(?P<indent>[ \t]*)(?P<mark>#|!!!|\?\?\?|\?\?\?\+|>)", re.MULTILINE)

# Backslash escapes Python-Markdown understands for the characters that would start something
# outside the subset: attribute lists and templates ({ }), links and references ([ ]), images (!).
# Backslashes and backticks are escaped too: a backslash right before a code span that this
# module passes through would stop Markdown from opening the span, leaving its `<...>` as live
# HTML; an unpaired backtick is literal.
_ESCAPED = {
    "{": "\\{",
    "}": "\\}",
    "[": "\\[",
    "]": "\\]",
    "!": "\\!",
    "\\": "\\\\",
    "`": "\\`",
}
_ESCAPED_TABLE = str.maketrans(_ESCAPED)


def is_web_url(url: str) -> bool:
    """Whether a link target is an absolute http or https URL with a host."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _safe_url(url: str) -> str:
    # Percent-encode what could end the Markdown link or an HTML attribute.
    return quote(url, safe="/:?#[]@!$&'*+,;=%-._~")


def _plain(text: str) -> str:
    """Prose outside code spans and links: entities, then escapes."""
    return entities(text).translate(_ESCAPED_TABLE)


def _inline_markdown(text: str) -> str:
    """One block of prose (no fences): keep code spans and web links, neutralise the rest."""
    out: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_links(text[position : match.start()]))
        # Markdown escapes code span contents itself. The span is kept on one line (Markdown
        # shows a line break there as a space anyway): raw HTML that opened a line inside it
        # would be read as an HTML block before Markdown ever looked for code spans.
        out.append(" ".join(match.group(0).split("\n")))
        position = match.end()
    out.append(_links(text[position:]))
    return "".join(out)


def _links(text: str) -> str:
    text = _AUTOLINK.sub(lambda m: f"[{m.group(1)}]({m.group(1)})", text)
    out: list[str] = []
    position = 0
    for match in _LINK.finditer(text):
        out.append(_plain(text[position : match.start()]))
        bang, label, url = match.group(1), match.group(2), match.group(3)
        if bang:
            out.append("\\!")  # images are outside the subset: keep what they say
        if is_web_url(url):
            out.append(f"[{_plain(label)}]({_safe_url(url)})")
        else:
            out.append(_plain(label))
        position = match.end()
    out.append(_plain(text[position:]))
    return "".join(out)


_SETEXT = re.compile(r"^(?P<indent>[ \t]*)(?=(?:=+|-{2,})[ \t]*$)[=-]", re.MULTILINE)


def _escape_line_starts(text: str) -> str:
    text = _LINE_START.sub(lambda m: f"{m.group('indent')}\\{m.group('mark')}", text)
    # A line of `=` or `-` would make the paragraph above it a heading.
    return _SETEXT.sub(
        lambda m: m.group("indent") + ("&#61;" if m.group(0)[-1] == "=" else "\\-"), text
    )


def prose(text: str) -> str:
    """Markdown for one prose field, limited to the safe subset."""
    lines = text.strip("\n").split("\n")
    blocks: list[str] = []
    pending: list[str] = []
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index])
        if opening is None:
            pending.append(lines[index])
            index += 1
            continue
        fence = opening.group("fence")
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        if pending:
            blocks.append(_escape_line_starts(_inline_markdown("\n".join(pending))))
            pending = []
        language = _LANGUAGE.match(opening.group("info").strip() or "text")
        # Only a language name survives from the info string: attributes there could add markup.
        body = lines[index + 1 : end]
        blocks.append(code_block("\n".join(body), language.group(0) if language else "text"))
        index = end + 1
    if pending:
        blocks.append(_escape_line_starts(_inline_markdown("\n".join(pending))))
    return "\n".join(blocks)


def code_block(code: str, language: str, options: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside the code (a block
    marker while a page is being recorded, see `catalog.pages.blocks`)."""
    return blocks.emit(blocks.CodeBlock(code, language, options))
