"""A generated page converted to HTML: its blocks apart, the rest by Python-Markdown or
written directly (`catalog.engine.skeleton_html`).

This is the layer that makes HTML of one recorded page. Code blocks go through the site's own
highlighter (`catalog.engine.highlight`), cached by content; prose, index tables and lists of
links are written directly where the site's extensions leave them as Python-Markdown would
(`catalog.engine.block_markdown`); the page's frame (headings, admonitions, the markers) is
written by `skeleton_html` when a probe at the start of the build finds it writes what
Python-Markdown writes, and converted by the one shared Markdown instance otherwise. MkDocs'
own link, anchor and title processors run over every page as `Page.render` runs them
(`catalog.engine.mkdocs_internals`).
"""

from __future__ import annotations

import logging
import posixpath
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc
from mkdocs.utils import get_relative_url

from catalog.engine import mkdocs_internals, prose_html, skeleton_html
from catalog.engine.build_state import BuildState
from catalog.engine.fingerprint import digest
from catalog.pages.blocks import CodeBlock, FastPage, LinksBlock, ProseBlock, TableBlock

log = logging.getLogger("mkdocs.plugins.errcat")


class LinkMissing(Exception):
    """A block links a page that is not in the build; MkDocs' own rendering will say so."""


class Conversion(BuildState):
    """Converts the build's generated pages, one at a time, with the shared Markdown."""

    def _convert(
        self, page: Page, config: MkDocsConfig, files: Files, recorded: FastPage
    ) -> dict[str, Any]:
        md = self._md
        assert md is not None
        md.reset()
        # MkDocs' own per-page processors (links, anchors, title), as Page.render adds them.
        found = mkdocs_internals.register_processors(md, page.file, files, config)
        raw_html, anchors, links, title = found.raw_html, found.anchors, found.links, found.title
        self._blocks, self._code_index, self._page, self._files = recorded.blocks, 0, page, files
        try:
            written = self._write_frame(recorded.text, links, raw_html)
            if written is None:
                self._code_index = 0
                page.content = md.convert(recorded.text)
                tokens = getattr(md, "toc_tokens", [])
            else:
                page.content, tokens, heading_ids = written
                anchors.present_anchor_ids = heading_ids
        finally:
            self._page = self._files = None
        page.toc = get_toc(tokens)
        mkdocs_internals.set_rendered_title(page, title.title)
        page.present_anchor_ids = anchors.present_anchor_ids | raw_html.present_anchor_ids
        links_to_anchors = None
        if log.getEffectiveLevel() > logging.DEBUG:
            page.links_to_anchors = links_to_anchors = links.links_to_anchors
        return {
            "content": page.content,
            "toc": tokens,
            "title": title.title,
            "anchors": sorted(page.present_anchor_ids),
            "links": None
            if links_to_anchors is None
            else {f.src_uri: targets for f, targets in links_to_anchors.items()},
        }

    def _frame_settings(self, config: MkDocsConfig) -> skeleton_html.TocSettings | None:
        """The `toc` settings page frames are written with, if frames may be written at all:
        only with plain-text extensions, attribute lists, admonitions, Markdown in HTML and a
        `toc` that only numbers headings, and only if a page of every shape the frame writer
        knows comes out of it as out of Python-Markdown (`skeleton_html.probe`)."""
        md = self._md
        needed = {"attr_list", "admonition", "md_in_html", "toc"}
        if md is None or not self._plain_text or not needed <= set(self._extensions):
            return None
        toc = md.treeprocessors["toc"] if "toc" in md.treeprocessors else None  # noqa: SIM401 (a Registry, no get)
        if toc is None or toc.use_anchors or toc.use_permalinks not in (False, None):
            return None
        # The frame writer declines a page holding `[TOC]`, the default marker, only.
        if toc.base_level != 0 or toc.marker not in ("[TOC]", ""):
            return None
        settings = skeleton_html.TocSettings(toc.slugify, toc.sep, toc.toc_top, toc.toc_bottom)
        text = skeleton_html.probe()
        self._blocks = tuple(ProseBlock(prose) for prose in skeleton_html.PROBE_BLOCKS)
        md.reset()
        try:
            expected = (md.convert(text), getattr(md, "toc_tokens", []))
            blocks = {i: self.block_html(i) or "" for i in range(len(self._blocks))}
        finally:
            self._blocks = ()
            md.reset()
        frame = skeleton_html.parse(text, md.ESCAPED_CHARS)
        written = frame and skeleton_html.render(frame, blocks, list(frame.links), settings)[:2]
        if written != expected:
            log.info("errcat: page frames go through Python-Markdown (its output differs)")
            return None
        return settings

    def _write_frame(
        self, text: str, links: Any, raw_html: Any
    ) -> tuple[str, list[dict[str, Any]], set[str]] | None:
        """The current page's HTML, table of contents and heading ids written by
        `skeleton_html`, or None to have Python-Markdown convert it."""
        if self._frames is None or self._md is None:
            return None
        frame = skeleton_html.parse(text, self._md.ESCAPED_CHARS)
        if frame is None:
            return None
        blocks: dict[int, str] = {}
        for piece in frame.pieces:
            if isinstance(piece, int):
                block = self.block_html(piece)
                if block is None:
                    return None
                blocks[piece] = block
        # MkDocs' own link rewriting and checking, link by link as its tree processor does.
        urls = [links.path_to_url(target) for target in frame.links]
        content, tokens, ids = skeleton_html.render(frame, blocks, urls, self._frames)
        # The ids MkDocs finds in the page's raw HTML, as its preprocessor finds them (in
        # the frame's raw HTML: nothing else in it holds a tag).
        raw_html.run(list(frame.raw))
        return content, tokens, ids

    def block_html(self, index: int) -> str | None:
        """The HTML of the current page's block `index` (called while it is converted), or
        None when Python-Markdown is to convert it with the rest (`block_lines`)."""
        block = self._blocks[index]
        if isinstance(block, ProseBlock):
            return prose_html.to_html(block.text) if self._plain_text else None
        if not isinstance(block, CodeBlock):
            return self._links_html(block) if self._plain_text else None
        assert self._highlighter is not None and self._md is not None
        number, self._code_index = self._code_index, self._code_index + 1
        key = digest("code", self._highlighter.key(block, number))
        cached = self._cache.get_text(key) if self._cache else None
        if cached is not None:
            self._highlighter.skip(number)
            return cached
        html = self._highlighter.html(block, number)
        if self._cache is not None:
            self._cache.put_text(key, html)
        return html

    def block_lines(self, index: int, indent: str) -> list[str]:
        """The Markdown of the current page's block `index`, indented as its marker."""
        text = self._blocks[index].markdown_text
        return [indent + line if line else line for line in text.split("\n")]

    def _links_html(self, block: TableBlock | LinksBlock) -> str:
        # Links resolved as MkDocs resolves a Markdown link to a page.
        page, files = self._page, self._files
        assert page is not None and files is not None
        folder = posixpath.dirname(page.file.src_uri)
        hrefs = {}
        for entry_id, link in block.links().items():
            target = files.get_file_from_path(posixpath.normpath(posixpath.join(folder, link)))
            if target is None:
                raise LinkMissing(link)
            hrefs[entry_id] = get_relative_url(target.url, page.file.url)
        return block.html(hrefs)
