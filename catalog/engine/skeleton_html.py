"""The frame of an errcat page, written as HTML the way Python-Markdown writes it.

Once its code, prose and link lists are blocks of their own (`catalog.pages.blocks`), what is
left of an error page is a frame of a few regular shapes: the path and kicker paragraphs with
their attribute lists, the title and section headings, the draft notice, the `<section
markdown>` and `<div markdown>` wrappers, the block markers and the footer's raw HTML. At whole-torch size
Python-Markdown still spent more time on that frame than on everything else a page holds. `parse`
reads exactly those shapes and declines (returns None) on anything else; the caller then gives the
page to Python-Markdown, so the HTML is the same either way.

The frame is parsed first, with no side effect, and rendered only once all of it was read: a
declined page costs a parse and nothing is done twice. Links are left as targets for the caller
to resolve (MkDocs rewrites them and reports the broken ones); headings come back with what the
`toc` extension needs to number them.

`tests/engine/test_skeleton_html.py` compares every accepted shape with Python-Markdown itself, and the
accelerator compares a page of every shape once per build before trusting this module
(`probe()`), so a Python-Markdown release that writes something differently turns it off rather
than changing a site.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from catalog.pages.blocks import MARKER, marker

_CHUNK_BREAK = re.compile(r"(\n(?:[ \t]*\n)+)")
_HEADING = re.compile(r"(#{1,6}) (\S(?:.*\S)?)")
_HEADING_ATTRS = re.compile(r" \{ ?((?:[a-z][a-z0-9-]*)(?: [a-z][a-z0-9-]*)*) ?\}")
_CLASS_LINE = re.compile(r"\{ ?\.([A-Za-z][A-Za-z0-9-]*) ?\}")
_ADMONITION = re.compile(r'!!! ([a-z]+) "([A-Za-z][A-Za-z ,.]*[A-Za-z.])"')
_WRAPPER_OPEN = re.compile(r'<(section|div)((?: class="[A-Za-z0-9 -]+"| [a-z][a-z-]*)*) markdown>')
_WRAPPER_ATTR = re.compile(r' (?:class="([A-Za-z0-9 -]+)"|([a-z][a-z-]*))')
_RAW_OPEN = re.compile(r'<p(?: class="[A-Za-z0-9 -]+"| [a-z][a-z-]*)*>')
_SITE_ANCHOR = re.compile(r'<div class="errcat-at" id="at-[A-Za-z0-9-]+"></div>')
"""The empty anchor before each raise site of an error page's source section (where a pasted
traceback's link lands, `catalog.matching.frames`): raw HTML that md_in_html puts back as is."""
_LINE_START = re.compile(r"[ \t#>+=:~?*_\-<{|!]|\d+[.)]|```|\[\^")
"""How a paragraph line may not begin: indentation, heading, quote, list, rule, setext
underline, definition, fence, details, raw HTML, attribute list, table, admonition, footnote."""
_ENTITY = re.compile(r"&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);")
_TARGET = re.compile(r"[A-Za-z0-9_.~/#%-]+")
_PLAIN = re.compile(r"[^\\`&<>\[\]*_{}|\ue000-\uf8ff\x00-\x08\x0b-\x1f\x7f]+")
"""Text with nothing Python-Markdown's inline patterns (or its placeholders) could read."""


@dataclass(frozen=True)
class Heading:
    """A heading of the frame: its level, attributes (from an attribute list) and inner HTML."""

    level: int
    attrs: tuple[str, ...]
    inner: str


@dataclass(frozen=True)
class Frame:
    """A parsed page: `pieces` are HTML strings, `Heading`s, block indexes (ints) and link
    placeholders inside HTML (`\\x00<n>\\x00`, the n-th of `links`)."""

    pieces: tuple[object, ...]
    links: tuple[str, ...]
    raw: tuple[str, ...]
    """The page's raw HTML (wrapper tags, the footer): outside it, a frame holds no `<`."""


class _Declined(Exception):
    pass


class _Reader:
    def __init__(self, escaped: Collection[str]) -> None:
        self.escaped = escaped
        self.links: list[str] = []
        self.raw: list[str] = []

    def inline(self, text: str, *, links: bool = True) -> str:
        """Text with code spans, backslash escapes, entities and links to pages."""
        out: list[str] = []
        position, end = 0, len(text)
        while position < end:
            plain = _PLAIN.match(text, position)
            if plain is not None:
                out.append(plain.group())
                position = plain.end()
                continue
            char = text[position]
            if char == "\\":
                escaped = text[position + 1 : position + 2]
                # Escapes of `&<>` and a backslash before a code span: what Python-Markdown
                # makes of those differs between its HTML and its table of contents.
                if escaped not in self.escaped or escaped in "&<>" or escaped == "":
                    raise _Declined
                out.append(escaped)
                position += 2
            elif char == "`":
                close = text.find("`", position + 1)
                if close < 0 or text[close + 1 : close + 2] == "`" or close == position + 1:
                    raise _Declined
                content = text[position + 1 : close]
                if "\n" in content or content != content.strip() or content.startswith("#!"):
                    raise _Declined
                escaped_code = content.replace("&", "&amp;").replace("<", "&lt;")
                out.append(f"<code>{escaped_code.replace('>', '&gt;')}</code>")
                position = close + 1
            elif char == "&":
                entity = _ENTITY.match(text, position)
                if entity is None:
                    raise _Declined
                out.append(entity.group())
                position = entity.end()
            elif char == "[" and links:
                close = text.find("]", position)
                if close < 0 or text[close + 1 : close + 2] != "(":
                    raise _Declined
                label = text[position + 1 : close]
                if "[" in label or not label or label != label.strip():
                    raise _Declined
                target = _TARGET.match(text, close + 2)
                if target is None or text[target.end() : target.end() + 1] != ")":
                    raise _Declined
                if position > 0 and text[position - 1] == "!":
                    raise _Declined  # an image
                self.links.append(target.group())
                number = len(self.links) - 1
                out.append(f'<a href="\x00{number}\x00">{self.inline(label, links=False)}</a>')
                position = target.end() + 1
            else:
                raise _Declined
        return "".join(out)

    def paragraph(self, lines: list[str]) -> str:
        attrs = ""
        found = _CLASS_LINE.fullmatch(lines[-1]) if len(lines) > 1 else None
        if found is not None:
            attrs = f' class="{found.group(1)}"'
            lines = lines[:-1]
        for line in lines:
            if _LINE_START.match(line) or line != line.rstrip() or MARKER.match(line):
                raise _Declined
        return f"<p{attrs}>{self.inline(chr(10).join(lines))}</p>"

    def heading(self, line: str) -> Heading:
        found = _HEADING.fullmatch(line)
        assert found is not None
        text, attrs = found.group(2), ()
        listed = _HEADING_ATTRS.search(text)
        if listed is not None and listed.end() == len(text):
            attrs = tuple(listed.group(1).split(" "))
            text = text[: listed.start()]
        # Blanks before an attribute list are the attr_list extension's to strip, by its rules:
        # such a heading goes to Python-Markdown.
        if text.endswith("#") or text != text.rstrip():
            raise _Declined
        return Heading(len(found.group(1)), attrs, self.inline(text, links=False))

    def blocks(self, chunks: list[str], breaks: list[int], *, top: bool) -> list[object]:
        """The pieces of `chunks` (separated by `breaks[i]` line ends after chunk i)."""
        out: list[object] = []
        index = 0
        while index < len(chunks):
            chunk = chunks[index]
            lines = chunk.split("\n")
            first = lines[0]
            marker = MARKER.fullmatch(first)
            if marker is not None:
                if len(lines) > 1 or marker.group("indent"):
                    raise _Declined
                out.append(int(marker.group("index")))
            elif first.startswith("#"):
                if len(lines) > 1 or _HEADING.fullmatch(first) is None:
                    raise _Declined
                out.append(self.heading(first))
            elif top and first.startswith("!!!"):
                found = _ADMONITION.fullmatch(first)
                body = [line[4:] for line in lines[1:]]
                if (
                    found is None
                    or not body
                    or any(not line.startswith("    ") for line in lines[1:])
                ):
                    raise _Declined
                kind, title = found.groups()
                out.append(
                    f'<div class="admonition {kind}">\n<p class="admonition-title">{title}</p>\n'
                    f"{self.paragraph(body)}\n</div>"
                )
            elif not top and _SITE_ANCHOR.fullmatch(chunk):
                out.append(chunk)
                self.raw.append(chunk)
            elif top and first.startswith(("<section", "<div")):
                found = _WRAPPER_OPEN.fullmatch(first)
                if found is None or len(lines) > 1:
                    raise _Declined
                tag = found.group(1)
                closing = f"</{tag}>"
                close = next((i for i in range(index + 1, len(chunks)) if chunks[i] == closing), -1)
                if close < 0:
                    raise _Declined
                inner = self.blocks(chunks[index + 1 : close], breaks[index + 1 : close], top=False)
                if not inner or any(isinstance(piece, Heading) for piece in inner):
                    raise _Declined
                # A bare attribute comes out with its name for value.
                attrs = "".join(
                    f' class="{match.group(1)}"'
                    if match.group(1) is not None
                    else f' {match.group(2)}="{match.group(2)}"'
                    for match in _WRAPPER_ATTR.finditer(found.group(2))
                )
                out += [f"<{tag}{attrs}>", *inner, closing]
                self.raw += [first, closing]
                index = close
            elif top and first.startswith("<p"):
                if _RAW_OPEN.fullmatch(first) is None:
                    raise _Declined
                ends = (i for i, chunk in enumerate(chunks) if i >= index and _ends_raw(chunk))
                close = next(ends, -1)
                if close < 0:
                    raise _Declined
                raw = chunks[index]
                for following in range(index + 1, close + 1):
                    raw += "\n" * breaks[following - 1] + chunks[following]
                if raw.count("<p") != 1 or raw.count("</p>") != 1 or "markdown" in first:
                    raise _Declined
                if "<!--" in raw or "\ue000" in raw or "<section" in raw or "<div" in raw:
                    raise _Declined
                out.append(raw + "\n")  # Python-Markdown leaves a blank line after raw HTML
                self.raw.append(raw)
                index = close
            else:
                out.append(self.paragraph(lines))
            index += 1
        return out


_PROBE = """\
[Home](../index.md) \u203a [All](index.md) \u203a `abc`
{ .errcat-path }

`pkg.Error` · subclass of [`ValueError`](exceptions/ValueError.md) · in [`pkg.mod_x`](modules/pkg.mod_x.md)
{ .errcat-kicker }

# Bad \\{value\\} \\_x\\_ \\(got &lt;a&gt; &amp; &#39;b&#39;\\) \\#1 \\* `code` \\[x\\]

!!! warning "Draft"
    First line of the notice.
    Second line with `code`.

## Error message

Plain words, a `span` and (parentheses).

## Source { data-search-exclude }

<section class="errcat-source" data-search-exclude markdown>

{0}

A paragraph of the section, with `code`.

{1}

</section>

<div class="errcat-index" markdown>

{2}

</div>

{3}

## Source { data-search-exclude }

### Deeper &amp; deeper { a-b c }

<p class="errcat-footer" data-search-exclude>
Raw <code>HTML</code> with <a href="/x.json">a link</a>.

</p>
"""
PROBE_BLOCKS = (
    "Inside the section.",
    "A second `paragraph`.",
    "In a division.",
    "A paragraph of its own.",
)
"""The prose blocks of `probe()`."""


def probe() -> str:
    """A page of every shape `parse` accepts, its blocks `PROBE_BLOCKS`: the site's
    Python-Markdown must write it as `render` does before page frames are written without it."""
    text = _PROBE
    for index in range(len(PROBE_BLOCKS)):
        text = text.replace(f"{{{index}}}", marker(index))
    return text


def _ends_raw(chunk: str) -> bool:
    return chunk == "</p>" or chunk.endswith("\n</p>")


def parse(text: str, escaped: Collection[str]) -> Frame | None:
    """`text` (a page with block markers) as a frame, or None when it leaves the shapes above.
    `escaped` is the Markdown instance's backslash-escapable characters."""
    if "\t" in text or "\r" in text or "[TOC]" in text:
        return None
    body = text.strip("\n")
    if not body or body.startswith("# "):
        return None  # MkDocs takes a leading h1 as the page title: left to Python-Markdown
    parts = _CHUNK_BREAK.split(body)
    # Raw HTML keeps its blank lines, emptied of spaces as Python-Markdown empties them.
    breaks = [separator.count("\n") for separator in parts[1::2]]
    reader = _Reader(escaped)
    try:
        pieces = reader.blocks(parts[0::2], breaks, top=True)
    except _Declined:
        return None
    return Frame(tuple(pieces), tuple(reader.links), tuple(reader.raw))


@dataclass(frozen=True)
class TocSettings:
    """What the `toc` extension of the site's Markdown does with headings."""

    slugify: Callable[[str, str], str]
    separator: str
    top: int
    bottom: int


def render(
    frame: Frame,
    blocks: Mapping[int, str],
    urls: list[str],
    toc: TocSettings,
) -> tuple[str, list[dict[str, object]], set[str]]:
    """The page's HTML, its table of contents (`toc_tokens`) and its headings' ids, given each
    block's HTML and each link's resolved URL."""
    from markdown.extensions.toc import nest_toc_tokens, strip_tags, unique  # type: ignore[import-untyped]
    from markdown.serializers import _escape_attrib_html  # type: ignore[import-untyped]

    used: set[str] = set()
    counters: dict[str, int] = {}
    tokens: list[dict[str, object]] = []
    out: list[str] = []
    for piece in frame.pieces:
        if isinstance(piece, int):
            out.append(blocks[piece])
            continue
        if isinstance(piece, Heading):
            name = strip_tags(piece.inner)
            anchor = unique(toc.slugify(html.unescape(name), toc.separator), used, counters)
            attrs = "".join(f" {attr}" for attr in piece.attrs)
            tag = f"h{piece.level}"
            out.append(f'<{tag}{attrs} id="{_escape_attrib_html(anchor)}">{piece.inner}</{tag}>')
            if toc.top <= piece.level <= toc.bottom:
                tokens.append(
                    {
                        "level": piece.level,
                        "id": anchor,
                        "name": name,
                        "html": piece.inner,
                        "data-toc-label": "",
                    }
                )
            continue
        assert isinstance(piece, str)
        out.append(piece)
    joined = "\n".join(out).strip()
    if frame.links:
        parts = joined.split("\x00")
        for position in range(1, len(parts), 2):
            parts[position] = _escape_attrib_html(urls[int(parts[position])])
        joined = "".join(parts)
    return joined, nest_toc_tokens(tokens), used
