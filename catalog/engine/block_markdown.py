"""Which Markdown extensions let errcat write a page's blocks itself, and the preprocessor that
puts the blocks' HTML in place of their markers.

A generated page's Markdown holds one marker line per block (`catalog.pages.blocks.MARKER`);
its blocks become HTML apart from Python-Markdown (highlighted code, index tables, prose), and
this preprocessor stashes that HTML where the marker was, as superfences stashes a fence's. It
is only sound for extensions known to leave such blocks as errcat writes them: the two sets
below say which, and a site using any other extension has its pages converted by MkDocs.
"""

from __future__ import annotations

from typing import Protocol

import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
from markdown.extensions import Extension  # type: ignore[import-untyped]
from markdown.preprocessors import Preprocessor  # type: ignore[import-untyped]

from catalog.pages.blocks import MARKER

PLAIN_TEXT_EXTENSIONS = frozenset(
    {
        "admonition",
        "attr_list",
        "codehilite",
        "def_list",
        "fenced_code",
        "footnotes",
        "md_in_html",
        "meta",
        "sane_lists",
        "tables",
        "toc",
        "pymdownx.details",
        "pymdownx.highlight",
        "pymdownx.inlinehilite",
        "pymdownx.superfences",
        "pymdownx.tabbed",
    }
)
"""Extensions that leave plain text and code spans as they are: with only these, a table or
a list of links errcat writes as HTML is what Python-Markdown would write. Others (smarty,
emoji, abbr, magiclink...) may change a message's text, so those blocks then go through
Python-Markdown like the rest of the page."""
INLINE_EXTENSIONS = frozenset(
    {
        "abbr",
        "smarty",
        "pymdownx.betterem",
        "pymdownx.caret",
        "pymdownx.emoji",
        "pymdownx.escapeall",
        "pymdownx.keys",
        "pymdownx.magiclink",
        "pymdownx.mark",
        "pymdownx.smartsymbols",
        "pymdownx.tasklist",
        "pymdownx.tilde",
    }
)
"""Extensions that change only text outside code: code blocks highlighted apart are still
what the page would hold. With any extension in neither set, errcat cannot tell what it does
to a fence, and leaves its pages to MkDocs."""


class BlockSource(Protocol):
    """What the preprocessor asks for each marker of the page being converted."""

    def block_html(self, index: int) -> str | None: ...

    def block_lines(self, index: int, indent: str) -> list[str]: ...


class BlockPreprocessor(Preprocessor):  # type: ignore[misc]
    """Puts each block's HTML in place of its marker line, as superfences puts a fence's."""

    def __init__(self, md: markdown.Markdown, source: BlockSource) -> None:
        super().__init__(md)
        self.source = source

    def run(self, lines: list[str]) -> list[str]:
        out = []
        for line in lines:
            match = MARKER.match(line) if "\ue000" in line else None
            if match is None:
                out.append(line)
                continue
            index = int(match.group("index"))
            html = self.source.block_html(index)
            if html is None:
                out += self.source.block_lines(index, match.group("indent"))
            else:
                out.append(match.group("indent") + self.md.htmlStash.store(html))
        return out


class BlockExtension(Extension):  # type: ignore[misc]
    """Adds `BlockPreprocessor`, answering from `source`, to a Markdown instance."""

    def __init__(self, source: BlockSource) -> None:
        super().__init__()
        self.source = source

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        # After whitespace normalisation (30), which would strip the stash's placeholders, and
        # before superfences (25), as its own placeholders are made.
        md.preprocessors.register(BlockPreprocessor(md, self.source), "errcat_blocks", 29)
