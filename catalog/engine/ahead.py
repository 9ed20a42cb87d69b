"""Generated pages converted and themed ahead, in worker processes, on every core.

A cold build of thousands of pages spends most of its time converting them and rendering the
theme for each, one after the other. With the navigation known, the pages the cache lacks are
converted by forked workers, which store them in the cache; the build then finds them there
like pages of an earlier build. Likewise, once every page's output is decided, the outputs to
render are rendered by workers (and the files written by them when no other plugin changes a
page's output). Whatever a worker could not do (a page that logged a warning, a worker that
stopped) the build does itself, as without workers, so the site is the same either way.

Workers are forked: the build's accelerator, MkDocs' configuration, files, navigation and the
theme's environment are live objects that cannot be pickled, and a fork inherits them as they
are. The workers are `catalog.core.workers`' (the one place errcat starts them), which hands
each the job explicitly; a share of pages is done with one cache connection. Not while
serving: `mkdocs serve` runs threads, which a fork must not copy.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from catalog.core import workers
from catalog.core.sitecache import SiteCache
from catalog.engine import mkdocs_internals
from catalog.engine.output_cache import OutputCache

log = logging.getLogger("mkdocs.plugins.errcat")

PARALLEL_PAGES = 200
"""Pages to convert below which worker processes cost more than they save."""


def worker_count() -> int:
    """The workers a build may start (`catalog.core.workers.worker_count`)."""
    return workers.worker_count()


def _in_worker(accelerator: Ahead, generation: int) -> None:
    """In a worker, before its share: quiet logging and a cache connection of its own."""
    # Quiet: warnings are the build's to report, when it does such a page itself.
    logger = logging.getLogger("mkdocs")
    for handler in list(logger.handlers):
        if handler is not accelerator._warnings:
            logger.removeHandler(handler)
    logger.propagate = False
    assert accelerator._cache_folder is not None
    accelerator._cache = SiteCache(accelerator._cache_folder, generation)


def _convert_share(
    accelerator: Ahead, generation: int, job: tuple[Any, ...], share: list[File]
) -> list[int]:
    """In a worker: convert the pages of `share` into the cache; 1 for each one stored."""
    _in_worker(accelerator, generation)
    config, files, _todo = job
    done = []
    for file in share:
        page = Page(None, file, config)
        mkdocs_internals.adopt(page, accelerator)
        stored = accelerator.read_source(page) and accelerator._fill(
            page, config, files, accelerator._fast[file.src_uri], whole=True
        )
        done.append(int(bool(stored)))
    assert accelerator._cache is not None
    accelerator._cache.finish(succeeded=False)
    return done


def _render_share(
    accelerator: Ahead, generation: int, job: tuple[Any, ...], share: list[Page]
) -> list[int]:
    """In a worker: render the theme's output of the pages of `share` into the cache, as
    MkDocs' `_build_page` renders it (the same context, the same plugins before it); 1 for
    each one stored."""
    _in_worker(accelerator, generation)
    config, files, env, nav, _pages = job
    cache = accelerator._cache
    assert cache is not None
    listed = files.documentation_pages()
    done = []
    for page in share:
        key = accelerator._new_outputs.get(page.file.src_uri)
        if key is None or not accelerator._undefer(page):
            done.append(0)
            continue
        warnings = accelerator._warnings.count
        output = mkdocs_internals.theme_output(page, config, listed, env, nav)
        # A page that logged a warning is left to the build, which will log it too.
        if accelerator._warnings.count == warnings:
            cache.put_text(key, output)
            if accelerator._write_ahead:
                # As MkDocs writes it (`mkdocs.utils.write_file`); the build then skips it.
                target = page.file.abs_dest_path
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as handle:
                    handle.write(output.encode("utf-8", errors="xmlcharrefreplace"))
            done.append(1)
        else:
            done.append(0)
    cache.finish(succeeded=False)
    return done


class Ahead(OutputCache):
    """Hands the pages the cache lacks to worker processes before the build reaches them."""

    def _convert_ahead(self, config: MkDocsConfig, files: Files) -> None:
        """Convert the generated pages the cache lacks in worker processes, which store them
        in the cache; the build then finds them there. Pages a worker could not store (one
        that logged a warning, say) are converted by the build itself, as without workers."""
        cache = self._cache
        if cache is None or self._md is None or not self._parallel_ready():
            return
        todo = [
            f
            for f in files.documentation_pages()
            if f.src_uri in self._fast and not cache.has(self._page_key(f.src_uri, f.url))
        ]
        self.stats["converted_ahead"] += self._in_workers(_convert_share, (config, files, todo))

    def _render_ahead(self, files: Files) -> None:
        """Render the theme's output of the generated pages whose output is not stored, in
        worker processes that store it; the build then reuses it like any stored output."""
        cache = self._cache
        if (
            cache is None
            or not self._parallel_ready()
            or len(self._new_outputs) < self._parallel_pages()
        ):
            return
        assert self._config is not None and self._env is not None and self._nav is not None
        pages = [f.page for f in files.documentation_pages() if f.src_uri in self._new_outputs]
        # Workers write the files themselves when no other plugin changes a page's output.
        post_page = self._config.plugins.events["post_page"]
        self._write_ahead = all(getattr(m, "__self__", None) is self._plugin for m in post_page)
        job = (self._config, files, self._env, self._nav, pages)
        self.stats["rendered_ahead"] += self._in_workers(_render_share, job)
        for page in pages:
            assert page is not None
            key = self._new_outputs[page.file.src_uri]
            if cache.has(key):
                del self._new_outputs[page.file.src_uri]
                self._reuse_output(page, key)
                if self._write_ahead and os.path.isfile(page.file.abs_dest_path):
                    self._written_ahead.add(page.file.src_uri)

    def _parallel_pages(self) -> int:
        """Pages below which no worker is started (`PARALLEL_PAGES`; the facade may say)."""
        return PARALLEL_PAGES

    def _workers(self) -> int:
        """How many workers to start (`worker_count`; the facade may say)."""
        return worker_count()

    def _parallel_ready(self) -> bool:
        return self.parallel and self._workers() >= 2

    def _in_workers(self, share: Any, job: tuple[Any, ...]) -> int:
        """Run `share` over the items of `job[-1]` in forked workers; how many they did."""
        cache = self._cache
        items = job[-1]
        if cache is None or len(items) < self._parallel_pages():
            return 0
        cache.suspend()
        try:
            done = workers.forked_map(
                functools.partial(share, self, cache.generation, job),
                items,
                minimum=self._parallel_pages(),
            )
        finally:
            cache.resume()
        # None: the workers did not start or one stopped; the build does every page itself.
        return sum(done) if done is not None else 0
