"""The theme's output of a generated page: reused when nothing it shows has changed, stored
for the next build otherwise.

Once every page is read and converted, each generated page's themed output is looked up under
a digest of the page (its URL, title, front matter, conversion, neighbours) and of everything
else the theme reads (the configuration, the navigation, the theme's files, the versions of
every package involved). A page found there gets a stand-in template, so the theme renders
nothing for it, and `post_page` hands MkDocs the stored output (or a hard link to the previous
build's file, `catalog.engine.hardlinks`). This is only done when no plugin outside search and
errcat takes part in the build, since an unknown plugin may feed the theme things no digest
here covers.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mkdocs.structure.pages import Page

from catalog.engine.fingerprint import digest, neighbour, plain, toc_plain
from catalog.engine.hardlinks import HardLinks
from catalog.engine.page_fill import PageFill

CACHED_TEMPLATE = "errcat/cached-page.html"
"""The stand-in template of a page whose output is reused: the theme renders next to nothing."""
OUTPUT_SAFE_PLUGINS = frozenset({"search", "material/search", "errcat"})
"""The plugins with which the themed output may be cached: any other may change it."""


class OutputCache(PageFill, HardLinks):
    """Decides, page by page, whether the theme's output is reused or rendered and stored."""

    def _decide_output(self, page: Page) -> None:
        # Every page has been read and converted by now, so the titles of its neighbours (in
        # the theme's footer) are final.
        assert self._cache is not None
        identity = [
            page.file.src_uri,
            page.url,
            page.canonical_url,
            page.edit_url,
            page.title,
            plain(page.meta),
            # The key of the conversion the page was filled from stands for its content and
            # table of contents (and lets a page whose output is reused skip reading them).
            getattr(page, "_errcat_record", None)
            or [
                toc_plain(page.toc),
                hashlib.sha256((page.content or "").encode("utf-8")).hexdigest(),
            ],
            neighbour(page.previous_page),
            neighbour(page.next_page),
            page.is_homepage,
        ]
        key = digest("output", self._site_settings, json.dumps(identity, sort_keys=True))
        if self._cache.has(key):
            self._reuse_output(page, key)
        else:
            self._new_outputs[page.file.src_uri] = key

    def _reuse_output(self, page: Page, key: str) -> None:
        self._cached_outputs[page.file.src_uri] = (key, page.meta.get("template"))
        page.meta["template"] = CACHED_TEMPLATE
        if (page.meta.get("search") or {}).get("exclude"):
            # Nothing reads it now (the theme's output is reused, the search skips it): the
            # search plugin would only scan it to drop attributes.
            page.content = ""

    def page_context(self, page: Page, context: dict[str, Any]) -> None:
        """Kept for a reused page, in case its output is gone by the time it is written; the
        key of the page's navigation (`catalog.engine.navcache`)."""
        self._context = context if page.file.src_uri in self._cached_outputs else None
        if self._navs is not None:
            context["errcat_nav_key"] = self._navs.key(page, context["base_url"])

    def post_page(self, page: Page, output: str) -> str:
        """The themed output: reused, or stored for the next build."""
        reused = self._cached_outputs.pop(page.file.src_uri, None)
        if reused is not None:
            key, template = reused
            self._written[page.file.dest_uri] = key
            if page.file.src_uri in self._written_ahead:
                self._context = None
                return ""  # a worker wrote the file: MkDocs writes none for an empty output
            if self._link_previous(page, key):
                self.stats["outputs_linked"] += 1
                self._context = None
                return ""  # MkDocs writes no file for an empty output
            found = self._cache.get_text(key) if self._cache else None
            if found is not None:
                self.stats["outputs_reused"] += 1
                self._context = None
                return found
            # Removed by another build meanwhile: render it after all.
            assert self._env is not None and self._context is not None
            assert self._config is not None and self._files_seen is not None
            # The page as the theme would have seen it: the front matter as written.
            if template is None:
                del page.meta["template"]
            else:
                page.meta["template"] = template
            fast = self._fast[page.file.src_uri]
            context: Any = self._context
            if not page.content:
                if not self._fill(page, self._config, self._files_seen, fast, whole=True):
                    raise RuntimeError(f"errcat: cannot render {page.file.src_uri} again")
                # The plugins saw it empty: they see it again, as they would have.
                assert self._nav is not None
                context = self._config.plugins.on_page_context(
                    context, page=page, config=self._config, nav=self._nav
                )
            output = self._env.get_template(template or "main.html").render(context)
            self._context = None
            return output
        key_new = self._new_outputs.pop(page.file.src_uri, None)
        if key_new is not None and self._cache is not None:
            self._cache.put_text(key_new, output)
            self._written[page.file.dest_uri] = key_new
        return output
