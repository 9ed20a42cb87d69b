"""errcat's generated pages inside a MkDocs build: converted cheaply, reused when unchanged.

A catalog of thousands of errors is thousands of pages that MkDocs would otherwise treat like
hand-written ones: a new Python-Markdown instance per page, Pygments on every code block of
every page on every build, the search plugin parsing every page's HTML (highlighted code
included) only to throw the code away, and the theme's template rendered again for pages that
did not change. For the pages errcat generated (and only those) this module, driven by the
errcat MkDocs plugin's hooks, does instead:

- **Blocks apart.** A page's code blocks and index tables (`catalog.pages.blocks`) become HTML
  on their own (`catalog.engine.highlight`): code through the site's own highlighter, cached by
  content, tables written directly. Python-Markdown, one configured instance reused for every
  generated page, converts what is left.
- **Pages reused.** The converted page (HTML, table of contents, anchors) is cached under a
  digest of its Markdown, its blocks and the site's Markdown settings; so is the theme's output,
  under a digest of the page and of everything else the theme reads (the configuration, the
  navigation, the theme's files, the versions of every package involved). A page whose digests
  are unchanged costs a lookup.
- **Search entries written, not parsed.** Error pages are kept out of the search plugin's HTML
  parsing; their entries (`catalog.pages.search`) are added to its index after it is written.

The cache lives in the project's `.errcat-cache/` (`catalog.core.sitecache`). It never
changes what a build writes, only how long it takes: a page that logged a warning while it was
converted is not stored (so a strict build keeps failing on it), and the theme's output is
cached only when no plugin outside search and errcat takes part in the build, since an unknown
plugin may feed the theme things no digest here covers.

The work is split by concern, one layer per module, each over the ones before it:
`conversion` (a page's HTML), `page_fill` (pages read and filled from the cache of conversions),
`hardlinks` (files linked from the previous build), `output_cache` (the theme's output reused),
`ahead` (both done by worker processes) and `search_entries`, sharing one build's state
(`build_state`); the cache keys' digests are `fingerprint`'s and MkDocs' private names are
reached through `mkdocs_internals` only. `Accelerator` joins them and is what the plugin calls.
"""

from __future__ import annotations

import json
import logging
import os
import sys

import jinja2
import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation

from catalog.core.sitecache import SiteCache
from catalog.engine import fingerprint, mkdocs_internals, navcache, themecache
from catalog.engine.ahead import Ahead
from catalog.engine.block_markdown import INLINE_EXTENSIONS, PLAIN_TEXT_EXTENSIONS, BlockExtension
from catalog.engine.highlight import CodeHighlighter, HighlightUnavailable
from catalog.engine.mkdocs_internals import AcceleratedPage
from catalog.engine.output_cache import CACHED_TEMPLATE, OUTPUT_SAFE_PLUGINS
from catalog.engine.search_entries import SearchEntries

log = logging.getLogger("mkdocs.plugins.errcat")


class Accelerator(Ahead, SearchEntries):
    """The state of one MkDocs build for errcat's generated pages; see the module docstring."""

    # -- set-up ------------------------------------------------------------------------------

    def pre_build(self, config: MkDocsConfig) -> None:
        """Once the configuration is final: the shared Markdown, the digests, the cache."""
        self._search_entries = []
        self._cached_outputs = {}
        self._new_outputs = {}
        self._written_ahead = set()
        self._config = config
        self._warnings.count = 0
        logging.getLogger("mkdocs").addHandler(self._warnings)
        # The site's extensions, or on a site of the project's own errcat's for its pages.
        names, options = self.markdown or (config.markdown_extensions, config.mdx_configs)
        self._extensions = list(names)
        self._md = markdown.Markdown(
            extensions=[*names, BlockExtension(self)], extension_configs=options or {}
        )
        markdown_settings = fingerprint.plain([names, options, config.use_directory_urls])
        self._render_settings = fingerprint.digest(
            fingerprint.CACHE_FORMAT,
            sys.version,
            fingerprint.versions(),
            fingerprint.errcat_sources(),
            json.dumps(markdown_settings, sort_keys=True),
            json.dumps(fingerprint.plain(config.validation), sort_keys=True),
        )
        unknown = set(names) - PLAIN_TEXT_EXTENSIONS - INLINE_EXTENSIONS
        internals = mkdocs_internals.probe()
        try:
            if internals is not None:
                raise HighlightUnavailable(f"MkDocs' internals ({internals})")
            if unknown:
                # A plugin may list an Extension object (mkdocstrings, autorefs): by its class.
                named = {e if isinstance(e, str) else type(e).__name__ for e in unknown}
                raise HighlightUnavailable(f"extensions {', '.join(sorted(named))}")
            self._highlighter = CodeHighlighter(self._md, self._render_settings)
        except HighlightUnavailable as exc:
            log.info("errcat: pages are converted by MkDocs itself, because of %s", exc)
            self._md = None
        self._site_settings = fingerprint.digest(
            self._render_settings,
            json.dumps(fingerprint.config_fingerprint(config), sort_keys=True),
            os.environ.get("SOURCE_DATE_EPOCH", ""),
        )
        self._output_cache = set(config.plugins) <= OUTPUT_SAFE_PLUGINS
        # errcat's own page_content handler reads no content (it puts the site's extensions
        # back after one of its pages was converted: `ErrcatPlugin.on_page_content`).
        readers = [
            handler
            for handler in config.plugins.events["page_content"]
            if getattr(handler, "__self__", None) is not self._plugin
        ]
        self._defer = self._output_cache and not readers
        self._plain_text = set(names) <= PLAIN_TEXT_EXTENSIONS
        self._frames = self._frame_settings(config) if self._md is not None else None
        self._other_readers = bool(config.plugins.events["page_read_source"])
        if self._cache_folder is not None and self._md is not None:
            self._cache = SiteCache(self._cache_folder)
            self._written = {}
            linking = self._output_cache and self.link_previous
            self._previous = self._find_previous(config.site_dir) if linking else None

    def nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> None:
        """With the navigation every page is known: the ones the cache lacks are converted
        now, on every core."""
        self._nav = nav
        self._convert_ahead(config, files)

    def env(self, env: jinja2.Environment, files: Files) -> None:
        """Before the theme writes any page: which pages' output is reused (they get a
        stand-in template), which is to be stored."""
        # Before the theme loads a template (`catalog.engine.themecache`); pure macros are
        # memoised only with no plugin but search and errcat, which leave `config` as it is.
        themecache.install(env, self._cache_folder, memo=self._output_cache)
        self._env = env
        loader = env.loader
        stand_in = jinja2.DictLoader({CACHED_TEMPLATE: "errcat: reused output"})
        env.loader = jinja2.ChoiceLoader([stand_in, loader] if loader else [stand_in])
        # Only with no other plugin, which might change the navigation page by page.
        self._navs = None
        if self._output_cache and self._nav is not None and self._config is not None:
            self._navs = navcache.install(env, self._nav, self._config)
        if not self._output_cache or self._cache is None:
            return
        # The navigation is on every page the theme writes, with titles that some pages only
        # get from their own first heading: it counts now that every page has been read.
        assert self._nav is not None
        self._site_settings = fingerprint.digest(
            self._site_settings,
            json.dumps(fingerprint.nav_fingerprint(self._nav.items), sort_keys=True),
        )
        for file in files.documentation_pages():
            if isinstance(file.page, AcceleratedPage):
                self._decide_output(file.page)
        self._render_ahead(files)
        # The theme renders the rest here: a page that got its head only needs all of it.
        for file in files.documentation_pages():
            if file.src_uri in self._new_outputs and isinstance(file.page, AcceleratedPage):
                self._fill_now(file.page)

    # -- the end -----------------------------------------------------------------------------

    def post_build(self, config: MkDocsConfig) -> None:
        """Add the error pages' search entries to the index the search plugin wrote; record
        which output each page file holds, for the next build to link."""
        self._merge_search_entries(config)
        self._record_written(config)

    def finish(self, succeeded: bool) -> None:
        """Close the cache (keeping what this build stored) and stop counting warnings."""
        logging.getLogger("mkdocs").removeHandler(self._warnings)
        if self._cache is not None:
            self._cache.finish(succeeded and self._warnings.count == 0)
            self._cache = None
