"""The state of one MkDocs build that every part of errcat's fast path reads and writes.

The accelerator (`catalog.engine.fastpath`) is made of one class per concern, each in its own
module and each a layer over the ones below it: conversion, filling pages from the cache, the
themed output's cache, hard links to the previous build, search entries, work done ahead in
worker processes. They share one build's state, held here: what MkDocs handed over (the
configuration, the files, the navigation, the theme's environment), the generated pages, the
cache and what this build decided for each page. Worker processes inherit it through fork.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from catalog.core.sitecache import SiteCache
from catalog.engine import navcache, skeleton_html
from catalog.engine.highlight import CodeHighlighter
from catalog.pages.blocks import Block, FastPage
from catalog.pages.search import SearchDoc


class WarningCount(logging.Handler):
    """Counts warnings, so that a page converted with a warning is not cached."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class BuildState:
    """One build's state for errcat's generated pages; see the module docstring."""

    def __init__(self, cache_folder: Path | None, plugin: object = None) -> None:
        """`plugin` is the errcat plugin driving it (whose hooks are this accelerator's)."""
        self._cache_folder = cache_folder
        self._plugin = plugin
        self._fast: Mapping[str, FastPage] = {}
        self._search: Mapping[str, SearchDoc] = {}
        self._search_entries: list[dict[str, object]] = []
        self.search_boost: float | None = None
        """The document boost of the error pages' search entries; None: the default weight
        (`site_settings.GUEST_SEARCH_BOOST` on a site of the project's own)."""
        self._cache: SiteCache | None = None
        self._md: markdown.Markdown | None = None
        self._extensions: list[Any] = []
        """The names of the extensions errcat's pages are converted with (`markdown`, or the
        site's), as the build set them up."""
        self._highlighter: CodeHighlighter | None = None
        self._render_settings = ""
        self._site_settings = ""
        self._output_cache = False
        self._defer = False
        """Whether pages may get their head only (`_may_defer`)."""
        self._plain_text = False
        self._frames: skeleton_html.TocSettings | None = None
        """How headings are numbered when page frames are written without Python-Markdown;
        None when they are not (`_frame_settings`)."""
        self._other_readers = False
        self._warnings = WarningCount()
        self._blocks: tuple[Block, ...] = ()
        self._code_index = 0
        self._page: Page | None = None
        self._files: Files | None = None
        self._env: jinja2.Environment | None = None
        self._navs: navcache.NavCache | None = None
        self._cached_outputs: dict[str, tuple[str, str | None]] = {}
        self._new_outputs: dict[str, str] = {}
        self._written: dict[str, str] = {}
        """Page files this build writes (site-relative) → the output digest they hold."""
        self._previous: tuple[str, dict[str, list[Any]]] | None = None
        self._context: dict[str, Any] | None = None
        self._config: MkDocsConfig | None = None
        self._files_seen: Files | None = None
        self._nav: Navigation | None = None
        self.stats = {
            "pages": 0,
            "reused": 0,
            "outputs_reused": 0,
            "outputs_linked": 0,
            "converted_ahead": 0,
            "rendered_ahead": 0,
            "heads_only": 0,
            "filled_later": 0,
        }
        self.parallel = True
        """Whether pages may be converted in worker processes (not while serving)."""
        self._write_ahead = False
        self._written_ahead: set[str] = set()
        self.markdown: tuple[list[Any], dict[str, Any]] | None = None
        """The Markdown extensions and their options errcat's pages are converted with, where
        they are not the site's (a site of the project's own: `site_settings.errcat_markdown`)."""
        self.link_previous = False
        """Whether unchanged page files may be hard links to the previous build's: only for
        builds into fresh folders beside it that nothing writes into later (errcat build's
        versions), never for a site folder MkDocs may rewrite in place."""

    def set_pages(self, fast: Mapping[str, FastPage], search: Mapping[str, SearchDoc]) -> None:
        """The generated pages of this build (docs-relative path → recorded page) and the
        search entries of the error pages."""
        self._fast = fast
        self._search = search
