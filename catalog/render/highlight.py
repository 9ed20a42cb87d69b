"""HTML for a page's blocks (`catalog.render.blocks`), as the site's Markdown would write it.

Code goes through the very highlighter the site configures (pymdownx.superfences and
pymdownx.highlight, with the site's settings), called the way superfences calls it for a fence
in the page, numbering included: the HTML is what an inline fence would have become. It is
cached by content, so Pygments runs once per distinct block and never again while the block
stays the same. Tables are written straight to HTML, with their links resolved the way MkDocs
resolves a Markdown link.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from typing import Any

import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set

from catalog.render.blocks import CodeBlock

_OPTION = re.compile(r'(?P<name>[A-Za-z_][\w-]*)="(?P<value>[^"]*)"')


class HighlightUnavailable(Exception):
    """The site's Markdown has no superfences block preprocessor to highlight with."""


class CodeHighlighter:
    """Highlights code blocks with the highlighter of a configured Markdown instance."""

    def __init__(self, md: markdown.Markdown, settings: str) -> None:
        """`settings` identifies the Markdown configuration (extensions and their options):
        blocks are cached per settings."""
        fenced: Any = None
        with contextlib.suppress(KeyError):
            fenced = md.preprocessors["fenced_code_block"]
        if fenced is None or not all(
            hasattr(fenced, name) for name in ("highlight", "get_hl_settings", "extension")
        ):
            raise HighlightUnavailable("no pymdownx.superfences in the site's Markdown")
        fenced.get_hl_settings()
        if getattr(fenced, "highlight_ext", None) is None:
            raise HighlightUnavailable("no pymdownx.highlight in the site's Markdown")
        self._md = md
        self._fenced = fenced
        # A language with a custom fence of its own is not highlighted by `highlight`.
        self.custom = {str(f.get("name")) for f in fenced.extension.superfences[1:]}
        self._settings = settings

    def key(self, block: CodeBlock, index: int) -> str:
        """The cache key of `block` as the `index`-th highlighted block of a page."""
        text = f"{self._settings}\0{index}\0{block.key()}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def html(self, block: CodeBlock, index: int) -> str:
        """`block` highlighted as the `index`-th (0-based) highlighted block of a page."""
        options = {m.group("name"): m.group("value") for m in _OPTION.finditer(block.options)}
        code = block.code.rstrip()
        # superfences numbers blocks by counting them: its count before this block is index-1;
        # it clamps highlighted lines to the block's length, which it sets before the call.
        self._fenced.highlight_ext.pygments_code_block = index - 1
        self._fenced.line_count = code.count("\n") + 1
        html: str = self._fenced.highlight(
            src=code,
            language=block.language,
            options=options,
            md=self._md,
            classes=[],
            id_value="",
            attrs={},
        )
        return html

    def skip(self, index: int) -> None:
        """Count the `index`-th block as highlighted (its HTML came from the cache)."""
        self._fenced.highlight_ext.pygments_code_block = index
