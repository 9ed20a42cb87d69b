"""Self-contained blocks of a generated page (code fences, index tables), kept apart from the
page's other Markdown while it is rendered.

A page is rendered once; each block the templates emit is recorded and stands in the text as a
marker line. From that one rendering come two forms:

- the Markdown page (`FastPage.markdown()`): every marker replaced by the block's Markdown, byte
  for byte what the templates produce without recording. The composed folder and any engine
  reading it get this;
- the form errcat's MkDocs hooks convert (`FastPage.text` and `blocks`): the markers stay, and
  each block becomes HTML on its own: code through the site's own highlighter, once per
  distinct block and cached by content, tables straight to HTML. Python-Markdown then only
  parses what is left, which is small.

Markers carry a random token, so no catalog text can forge one. It is drawn once per build
and handed to every process the build starts through the environment (`TOKEN_ENV`), so that a
marker a worker writes is valid in the parent however the worker was started.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import os
import re
import secrets
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

import markupsafe

from catalog.pages.plaintext import inline

TOKEN_ENV = "ERRCAT_BLOCK_TOKEN"
"""Where a process finds the markers' token of the build that started it."""


def _token() -> str:
    inherited = os.environ.get(TOKEN_ENV, "")
    if re.fullmatch(r"[0-9a-f]{16}", inherited):
        return inherited
    token = secrets.token_hex(8)
    os.environ[TOKEN_ENV] = token
    return token


_TOKEN = _token()
MARKER = re.compile(
    rf"^(?P<indent>[ \t]*)\ue000errcat-{_TOKEN}-(?P<index>\d+)\ue001$", re.MULTILINE
)
"""A marker line: the block's index in the page, after the indentation it was rendered at."""


def _digest(*parts: str) -> str:
    """SHA-256 of `parts`, each prefixed with its length so that no two lists collide."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def _marker(index: int) -> str:
    return f"\ue000errcat-{_TOKEN}-{index}\ue001"


def marker(index: int) -> str:
    """The text of block `index`'s marker line in this process (without its indentation)."""
    return _marker(index)


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block: what `markdown.code_block` writes."""

    code: str
    language: str
    options: str
    """The fence's attributes after the language (`linenums="3" hl_lines="2"`), or ""."""

    @functools.cached_property
    def markdown_text(self) -> str:
        """`markdown_lines`, joined (computed once: a page's Markdown is expanded more than
        once per build)."""
        return "\n".join(self.markdown_lines())

    def markdown_lines(self) -> list[str]:
        """The fence, one line per item; its fence is longer than any backtick run inside."""
        code = self.code.rstrip()
        longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
        fence = "`" * max(3, longest + 1)
        header = f"{fence}{self.language}" + (f" {self.options}" if self.options else "")
        return [header, *code.split("\n"), fence]

    @functools.cached_property
    def digest(self) -> str:
        """A digest of what the block's HTML depends on, besides the site's settings."""
        return _digest("code", self.language, self.options, self.code.rstrip())


@dataclass(frozen=True)
class TableRow:
    """One entry in an index table."""

    entry_id: str
    headline: str
    status: str
    exception: str
    module: str


@dataclass(frozen=True)
class TableBlock:
    """An index table of entries; `prefix` leads from the page to the error pages' folder."""

    rows: tuple[TableRow, ...]
    prefix: str
    template: Callable[[tuple[TableRow, ...], str], str] = field(compare=False, repr=False)
    """Writes the table as Markdown (`catalog.pages.templating` passes its `table.md.j2`):
    called only when a page's Markdown is asked for, since the fast path writes the HTML
    from the rows."""

    @functools.cached_property
    def markdown_text(self) -> str:
        """`markdown_lines`, joined (computed once: a page's Markdown is expanded more than
        once per build)."""
        return "\n".join(self.markdown_lines())

    def markdown_lines(self) -> list[str]:
        """The Markdown table `table.md.j2` describes."""
        text = self.template(self.rows, self.prefix)
        return text.rstrip("\n").split("\n")

    @functools.cached_property
    def digest(self) -> str:
        """A digest of the table's rows and links."""
        fields = (
            f for r in self.rows for f in (r.entry_id, r.headline, r.status, r.exception, r.module)
        )
        return _digest("table", self.prefix, *fields)

    def links(self) -> dict[str, str]:
        """Entry id → the Markdown link target, relative to the page."""
        return {row.entry_id: f"{self.prefix}{row.entry_id}.md" for row in self.rows}

    def html(self, href: dict[str, str]) -> str:
        """The table as Python-Markdown writes it; `href` maps an entry id to its link."""
        out = [
            "<table>",
            "<thead>",
            "<tr>",
            "<th>Message</th>",
            "<th>Exception</th>",
            "<th>Module</th>",
            "</tr>",
            "</thead>",
            "<tbody>",
        ]
        for row in self.rows:
            status = "" if row.status == "active" else f" <small>{row.status}</small>"
            out += [
                "<tr>",
                f'<td><a href="{href[row.entry_id]}">{_text(row.headline)}</a>{status}</td>',
                f"<td><code>{_code(row.exception)}</code></td>",
                f"<td><code>{_code(row.module)}</code></td>",
                "</tr>",
            ]
        out += ["</tbody>", "</table>"]
        return "\n".join(out)


@dataclass(frozen=True)
class LinkItem:
    """One item of a list of links to error pages."""

    entry_id: str
    headline: str
    note: str
    """Shown small after the link, as text."""


@dataclass(frozen=True)
class LinksBlock:
    """A list of links to error pages (the related errors), written like `markdown_lines`."""

    items: tuple[LinkItem, ...]

    @functools.cached_property
    def markdown_text(self) -> str:
        """`markdown_lines`, joined (computed once: a page's Markdown is expanded more than
        once per build)."""
        return "\n".join(self.markdown_lines())

    def markdown_lines(self) -> list[str]:
        """One Markdown list item per link."""
        return [
            f"- [{inline(item.headline)}]({item.entry_id}.md)"
            f" <small>{markupsafe.escape(item.note)}</small>"
            for item in self.items
        ]

    @functools.cached_property
    def digest(self) -> str:
        """A digest of the list's items."""
        fields = (f for item in self.items for f in (item.entry_id, item.headline, item.note))
        return _digest("links", *fields)

    def links(self) -> dict[str, str]:
        """Entry id → the Markdown link target, relative to the page."""
        return {item.entry_id: f"{item.entry_id}.md" for item in self.items}

    def html(self, href: dict[str, str]) -> str:
        """The list as Python-Markdown writes it; `href` maps an entry id to its link."""
        out = ["<ul>"]
        for item in self.items:
            note = markupsafe.escape(item.note)
            link = f'<a href="{href[item.entry_id]}">{_text(item.headline)}</a>'
            out.append(f"<li>{link} <small>{note}</small></li>")
        out.append("</ul>")
        return "\n".join(out)


@dataclass(frozen=True)
class ProseBlock:
    """Paragraphs and lists errcat writes from what it knows (the source, the facts read from
    the code): Markdown that `catalog.engine.prose_html` converts when it keeps to the plain
    subset, and Python-Markdown with the rest of the page when it does not."""

    text: str

    @functools.cached_property
    def markdown_text(self) -> str:
        return self.text

    def markdown_lines(self) -> list[str]:
        return self.text.split("\n")

    @functools.cached_property
    def digest(self) -> str:
        return _digest("prose", self.text)


Block = CodeBlock | TableBlock | LinksBlock | ProseBlock


def _text(text: str) -> str:
    """Inline text as Markdown shows `plaintext.inline(text)`: the characters, HTML-escaped."""
    return html.escape(" ".join(text.split()), quote=False)


def _code(text: str) -> str:
    """A code span of a value the template autoescaped, as Markdown shows it."""
    return html.escape(str(markupsafe.escape(text)), quote=False)


_RECORDING: ContextVar[list[Block] | None] = ContextVar("errcat_blocks", default=None)


@contextlib.contextmanager
def recording() -> Iterator[list[Block]]:
    """Record the blocks emitted while rendering one page; yields the list they go to."""
    blocks: list[Block] = []
    reset = _RECORDING.set(blocks)
    try:
        yield blocks
    finally:
        _RECORDING.reset(reset)


def emit(block: Block) -> str:
    """Text for `block` on lines of its own: a marker while recording, else its Markdown.

    A code block comes with an empty line before and a line break after, as
    `markdown.code_block` always wrote it, and so does prose, which must be a paragraph of its
    own; other blocks stand where the template puts them, which is on a line of their own.
    """
    code = isinstance(block, CodeBlock | ProseBlock)
    lead, end = ("\n", "\n") if code else ("", "")
    blocks = _RECORDING.get()
    if blocks is None:
        return lead + "\n".join(block.markdown_lines()) + end
    blocks.append(block)
    return lead + _marker(len(blocks) - 1) + end


@dataclass(frozen=True)
class FastPage:
    """One generated page: its text with block markers, and the blocks."""

    text: str
    blocks: tuple[Block, ...]

    def markdown(self) -> str:
        """The page's Markdown, every block in place."""
        if not self.blocks:
            return self.text

        def expand(match: re.Match[str]) -> str:
            indent = match.group("indent")
            text = self.blocks[int(match.group("index"))].markdown_text
            if not indent:
                return text
            # Indented like `indent_md` indents: every line but empty ones.
            return "\n".join(indent + line if line else line for line in text.split("\n"))

        return MARKER.sub(expand, self.text)

    @functools.cached_property
    def digest(self) -> str:
        """A digest of the page's text and blocks that does not depend on the marker token."""
        parts = []
        position = 0
        for match in MARKER.finditer(self.text):
            parts.append(self.text[position : match.start()] + match.group("indent"))
            parts.append(self.blocks[int(match.group("index"))].digest)
            position = match.end()
        parts.append(self.text[position:])
        return _digest("page", *parts)
