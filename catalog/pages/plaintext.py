"""Plain text made safe inside Markdown: entities for raw HTML, one line of text with every
Markdown character escaped (titles, table cells), and inline code whose delimiters cannot clash
with the text.

Kept apart from `catalog.pages.markdown` (catalog prose, which emits code blocks through
`catalog.pages.blocks`) because the blocks themselves write their text with these.
"""

from __future__ import annotations

import re

# Inline text (titles, table cells) allows no markup at all.
_ESCAPED_INLINE = {c: "\\" + c for c in "\\`*_{}[]()#+-.!|~"}
_ESCAPED_INLINE_TABLE = str.maketrans(_ESCAPED_INLINE)


def entities(text: str) -> str:
    """`&`, `<` and `>` as entities, so that raw HTML shows as text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def inline(text: str) -> str:
    """Plain text on one line (a title, a table cell), with every Markdown character escaped."""
    flat = " ".join(text.split())
    return entities(flat).translate(_ESCAPED_INLINE_TABLE)


def code_span(text: str) -> str:
    """Inline code whose delimiters cannot clash with the text."""
    flat = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"
