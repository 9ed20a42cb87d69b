"""A generated page filled in from the cache of converted pages, or converted and stored.

MkDocs reads and renders every page on every build. For errcat's generated pages this layer
answers both from the recorded page (`catalog.pages.blocks.FastPage`) instead: the Markdown
and front matter without reading a file, and the content, table of contents, title and anchor
ids from the page's cached conversion when its key (its Markdown, its blocks, the Markdown
settings, errcat's code) is unchanged. A page whose themed output will likely be reused gets
only its head (title, anchors, links) now, and its content only if the theme renders it after
all. Anything it cannot do the same way (another plugin's Markdown, a custom fence, a link the
frame writer cannot place) goes to MkDocs' own `Page.render`.
"""

from __future__ import annotations

import json
import logging

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from catalog.engine import front_matter, mkdocs_internals
from catalog.engine.conversion import Conversion, LinkMissing
from catalog.engine.fingerprint import digest
from catalog.engine.site_settings import scoped_markdown
from catalog.pages.blocks import CodeBlock, FastPage

log = logging.getLogger("mkdocs.plugins.errcat")

HEAD = ("title", "anchors", "links")
"""What of a converted page other pages and the build read before any page is themed: a
page's head, stored beside its whole record."""


class PageFill(Conversion):
    """Reads and renders the build's generated pages for MkDocs, through the page cache."""

    def _page_key(self, uri: str, url: str) -> str:
        return digest("page", self._render_settings, uri, url, self._fast[uri].digest)

    def read_source(self, page: Page) -> bool:
        """The page's Markdown and front matter from the rendered page, not from its file;
        False when another plugin reads sources (MkDocs then reads it as usual)."""
        if self._other_readers:
            return False
        fast = self._fast[page.file.src_uri]
        # With no plugin but search and errcat, nothing but errcat reads a page's Markdown:
        # then it keeps its block markers, and is expanded only if MkDocs is to convert it.
        markers = self._output_cache
        markdown_text, meta = front_matter.split_front_matter(
            fast.text if markers else fast.markdown()
        )
        page.markdown, page.meta = markdown_text, meta
        page._errcat_markdown = markdown_text  # type: ignore[attr-defined]
        page._errcat_markers = markers  # type: ignore[attr-defined]
        return True

    def pre_page(self, page: Page) -> None:
        """Generated pages render through this accelerator."""
        if self._md is not None and type(page) is Page and page.file.src_uri in self._fast:
            mkdocs_internals.adopt(page, self)

    def render(self, page: Page, config: MkDocsConfig, files: Files) -> bool:
        """Fill in `page`'s content and table of contents; False to let MkDocs do it."""
        fast = self._fast[page.file.src_uri]
        # Another plugin may have changed the page's Markdown: then it is no longer ours.
        # (Comparing a string with itself is immediate.)
        recorded: FastPage | None = None
        expected = getattr(page, "_errcat_markdown", None)
        if expected is None:
            recorded = front_matter.body(fast)
            expected = recorded.markdown()
        elif getattr(page, "_errcat_markers", False):
            recorded = FastPage(expected, fast.blocks)
        if self._md is None or page.markdown != expected:
            return False
        assert self._highlighter is not None
        custom = self._highlighter.custom
        if custom and any(isinstance(b, CodeBlock) and b.language in custom for b in fast.blocks):
            return self._to_mkdocs(page, recorded)
        self.stats["pages"] += 1
        self._config, self._files_seen = config, files
        return self._fill(page, config, files, fast, recorded) or self._to_mkdocs(page, recorded)

    def _to_mkdocs(self, page: Page, recorded: FastPage | None) -> bool:
        """Leave the page to MkDocs' own rendering, its Markdown expanded if need be."""
        if getattr(page, "_errcat_markers", False) and recorded is not None:
            page.markdown = recorded.markdown()
            page._errcat_markers = False  # type: ignore[attr-defined]
        return False

    def _fill(
        self,
        page: Page,
        config: MkDocsConfig,
        files: Files,
        fast: FastPage,
        recorded: FastPage | None = None,
        *,
        whole: bool = False,
    ) -> bool:
        """Fill in the page's conversion: from the cache, or converted now (and stored). With
        `whole` false, a page whose themed output is likely reused gets its head only."""
        key = self._page_key(page.file.src_uri, page.url)
        page._errcat_deferred = False  # type: ignore[attr-defined]
        if not whole and self._may_defer(page):
            assert self._cache is not None
            head = self._cache.get_text(digest("head", key))
            if head is not None and self._restore(page, files, head, content=False):
                # Kept from being forgotten with its head, though this build may not read it.
                self._cache.touch(key)
                page._errcat_record, page._errcat_deferred = key, True  # type: ignore[attr-defined]
                self.stats["reused"] += 1
                self.stats["heads_only"] += 1
                return True
        cached = self._cache.get_text(key) if self._cache else None
        if cached is not None and self._restore(page, files, cached):
            page._errcat_record = key  # type: ignore[attr-defined]
            self.stats["reused"] += 1
            return True
        recorded = recorded or front_matter.body(fast)
        warnings = self._warnings.count
        try:
            record = self._convert(page, config, files, recorded)
        except LinkMissing:
            return False
        page._errcat_record = key  # type: ignore[attr-defined]
        if self._cache is not None and self._warnings.count == warnings:
            self._cache.put_text(key, json.dumps(record, ensure_ascii=False))
            summary = {name: record[name] for name in HEAD}
            self._cache.put_text(digest("head", key), json.dumps(summary, ensure_ascii=False))
        return True

    def _may_defer(self, page: Page) -> bool:
        """Whether the page's content may wait: nothing reads a page's content before its
        output is decided but `page_content` plugins (there are none then) and the search
        plugin, which skips a page excluded from it (errcat indexes that page itself)."""
        return (
            self._defer
            and self._cache is not None
            and (page.meta.get("search") or {}).get("exclude") is True
        )

    def _undefer(self, page: Page) -> bool:
        """Fill in the content of a page that got its head only; False where it cannot be."""
        if not getattr(page, "_errcat_deferred", False):
            return True
        assert self._config is not None and self._files_seen is not None
        self.stats["filled_later"] += 1
        return self._fill(
            page, self._config, self._files_seen, self._fast[page.file.src_uri], whole=True
        )

    def _fill_now(self, page: Page) -> None:
        """`_undefer`, or where that fails (a link the frame writer cannot place), the page
        converted by MkDocs' own `Page.render`, as `render` would have left it to."""
        if self._undefer(page):
            return
        assert self._config is not None and self._files_seen is not None
        fast = self._fast[page.file.src_uri]
        markers = getattr(page, "_errcat_markers", False)
        self._to_mkdocs(page, FastPage(page.markdown or "", fast.blocks) if markers else None)
        page._errcat_record, page._errcat_deferred = None, False  # type: ignore[attr-defined]
        with scoped_markdown(self._config, self.markdown):
            Page.render(page, self._config, self._files_seen)

    def _restore(self, page: Page, files: Files, cached: str, content: bool = True) -> bool:
        """Fill the page from a stored record; with `content` false, from a head (`HEAD`):
        the page gets an empty content and table of contents."""
        record = json.loads(cached)
        links = None
        if record["links"] is not None and log.getEffectiveLevel() > logging.DEBUG:
            links = {}
            for uri, targets in record["links"].items():
                target = files.get_file_from_path(uri)
                if target is None:
                    return False  # converting it again reports the broken link
                links[target] = targets
        page.content = record["content"] if content else ""
        page.toc = get_toc(record["toc"] if content else [])
        mkdocs_internals.set_rendered_title(page, record["title"])
        page.present_anchor_ids = set(record["anchors"])
        if links is not None:
            page.links_to_anchors = links
        return True
