"""errcat's own paragraphs and lists, written as HTML the way Python-Markdown writes them.

What errcat says about an entry from the data it holds (where the error is raised, the
conditions around the raise, who reaches it) is Markdown of one small, regular shape:
paragraphs and tight bullet lists of plain words, code spans, and `*emphasis*` or `**strong**`
words. At whole-torch size Python-Markdown spent more time parsing that shape than on all the
rest of an error page but its code. `to_html` converts exactly that shape and declines (returns
None) as soon as a text holds anything else, so that the caller gives such a text to
Python-Markdown instead: the HTML is the same either way, which the tests check against
Python-Markdown itself (`tests/engine/test_prose_html.py`, and whole sites built both ways).

The rules are deliberately narrower than Markdown's. Declined, among others: any backslash,
HTML, entity, link or image character (`\\ < > & [ ] !`), underscores and unbalanced asterisks
outside code, braces (attribute lists), pipes (tables), a code span whose content holds a
backtick or a line break, indented lines, lines that open a heading, quote, fence, ordered
list or definition, trailing spaces (a line break), list items that span lines, and two lists
in a row (Python-Markdown joins them into one loose list).
"""

from __future__ import annotations

import re

_DECLINED = re.compile(r"[\\<>&\[\]!_{}|\x00-\x09\x0b-\x1f\x7f\ue000-\uf8ff]")
"""Characters outside code spans that some Markdown rule could read as markup (or that
Python-Markdown uses for its own placeholders)."""
_LINE_START = re.compile(r"[ \t#>+=:~?\-]|\d+[.)]|```|\*(?![*]?[^*\s])")
"""How a paragraph line may not begin: indentation, heading, quote, list, setext underline,
definition, fence, details (`???`), or an asterisk that does not open emphasis."""
_ITEM = re.compile(r"- (?=\S)")
_EMPHASIS = re.compile(r"(\*\*?)([^*\s](?:[^*]*[^*\s])?)\1(?!\*)")
"""`**strong**` or `*emphasis*` around words that neither start nor end with a space."""


def to_html(text: str) -> str | None:
    """The HTML Python-Markdown writes for `text`, or None when `text` leaves the subset."""
    if "\t" in text or "\r" in text:
        return None  # Python-Markdown expands tabs and normalises line ends first
    chunks = re.split(r"\n(?: *\n)+", text.strip("\n"))
    out: list[str] = []
    previous_list = False
    for chunk in chunks:
        lines = chunk.split("\n")
        if all(_ITEM.match(line) for line in lines):
            if previous_list:
                return None
            # An item's text is a block of its own: it may not open a heading, list, ...
            items = [None if _LINE_START.match(line[2:]) else _inline(line[2:]) for line in lines]
            if any(item is None for item in items):
                return None
            out.append("<ul>\n" + "".join(f"<li>{item}</li>\n" for item in items) + "</ul>")
            previous_list = True
            continue
        if any(_LINE_START.match(line) or line != line.rstrip() for line in lines):
            return None
        converted = _inline(chunk)
        if converted is None:
            return None
        out.append(f"<p>{converted}</p>")
        previous_list = False
    return "\n".join(out) if out and out != ["<p></p>"] else None


def _inline(text: str) -> str | None:
    """Text with code spans and emphasis, as Python-Markdown's inline patterns write it."""
    if not text or text != text.strip():
        return None
    out: list[str] = []
    position = 0
    while True:
        tick = text.find("`", position)
        plain = _words(text[position : len(text) if tick < 0 else tick])
        if plain is None:
            return None
        out.append(plain)
        if tick < 0:
            return "".join(out)
        run = len(text) - len(text[tick:].lstrip("`"))
        width = run - tick
        close = text.find("`", run)
        if close < 0 or "\n" in text[run:close]:
            return None
        end = len(text) - len(text[close:].lstrip("`"))
        if end - close != width:
            return None  # the content holds a backtick, or the fences differ
        content = text[run:close].strip()
        if not content or content.startswith(("#!", ":::")):
            return None  # empty, or inline highlighting's syntax (pymdownx.inlinehilite)
        escaped = content.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        out.append(f"<code>{escaped}</code>")
        position = end


def _words(text: str) -> str | None:
    """Plain text with `*emphasis*` and `**strong**`; None when it holds anything else."""
    if _DECLINED.search(text):
        return None
    if "*" not in text:
        return text
    out: list[str] = []
    position = 0
    for found in _EMPHASIS.finditer(text):
        before = text[position : found.start()]
        if "*" in before:
            return None
        tag = "strong" if len(found.group(1)) == 2 else "em"
        out.append(f"{before}<{tag}>{found.group(2)}</{tag}>")
        position = found.end()
    rest = text[position:]
    if "*" in rest:
        return None
    out.append(rest)
    return "".join(out)
