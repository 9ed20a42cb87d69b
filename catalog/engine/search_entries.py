"""The error pages' search entries: written by errcat, not parsed by the search plugin.

The search plugin parses every page's HTML, highlighted code included, only to throw the code
away; for thousands of error pages that parsing is a large share of a build. errcat knows what
an error page's entry says (`catalog.pages.search`), so each error page is excluded from the
plugin's parsing and its entry is added to the index after the plugin has written it.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page

from catalog.engine.build_state import BuildState
from catalog.pages.search import merge_into_index


class SearchEntries(BuildState):
    """Collects the error pages' entries while pages are read, and adds them at the end."""

    def page_markdown(self, page: Page) -> None:
        """An error page's search entry is errcat's: the search plugin is to skip the page
        (with errcat's rendering or MkDocs' own)."""
        doc = self._search.get(page.file.src_uri)
        if doc is not None:
            page.meta["search"] = {"exclude": True}
            entry: dict[str, object] = {**doc.entry(page.url)}
            if self.search_boost is not None:
                entry["boost"] = self.search_boost
            self._search_entries.append(entry)

    def _merge_search_entries(self, config: MkDocsConfig) -> None:
        """Add the error pages' entries to the index the search plugin wrote."""
        if self._search_entries:
            merge_into_index(Path(config.site_dir), self._search_entries)
        self._search_entries = []
