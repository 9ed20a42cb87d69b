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
are. They reach each worker as the pool's initializer arguments (which fork passes without
pickling), not through a global the parent sets before forking. Not while serving: `mkdocs
serve` runs threads, which a fork must not copy.
"""

from __future__ import annotations

import concurrent.futures
import logging
import multiprocessing
import os
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from catalog.core import workers
from catalog.core.sitecache import SiteCache
from catalog.engine import mkdocs_internals
from catalog.engine.output_cache import OutputCache

log = logging.getLogger("mkdocs.plugins.errcat")

PARALLEL_PAGES = 200
"""Pages to convert below which worker processes cost more than they save."""
_AHEAD: tuple[Any, ...] | None = None
"""In a worker: what its initializer received (`_receive`): the accelerator, the cache
generation and the job."""


def worker_count() -> int:
    """The workers a build may start (`catalog.core.workers.worker_count`)."""
    return workers.worker_count()


def _receive(*job: Any) -> None:
    """A worker's initializer: the job it works on."""
    global _AHEAD
    _AHEAD = job


def _in_worker() -> tuple[Ahead, tuple[Any, ...]]:
    """In a worker: the build's accelerator, with a cache connection of its own, and the job."""
    assert _AHEAD is not None
    accelerator, generation, *job = _AHEAD
    # Quiet: warnings are the build's to report, when it does such a page itself.
    logger = logging.getLogger("mkdocs")
    for handler in list(logger.handlers):
        if handler is not accelerator._warnings:
            logger.removeHandler(handler)
    logger.propagate = False
    assert accelerator._cache_folder is not None
    accelerator._cache = SiteCache(accelerator._cache_folder, generation)
    return accelerator, tuple(job)


def _convert_share(indexes: list[int]) -> int:
    """In a worker: convert the pages `indexes` of the build's list into the cache."""
    accelerator, (config, files, todo) = _in_worker()
    done = 0
    for index in indexes:
        file = todo[index]
        page = Page(None, file, config)
        mkdocs_internals.adopt(page, accelerator)
        if accelerator.read_source(page) and accelerator._fill(
            page, config, files, accelerator._fast[file.src_uri], whole=True
        ):
            done += 1
    assert accelerator._cache is not None
    accelerator._cache.finish(succeeded=False)
    return done


def _render_share(indexes: list[int]) -> int:
    """In a worker: render the theme's output of the pages `indexes` into the cache, as
    MkDocs' `_build_page` renders it (the same context, the same plugins before it)."""
    accelerator, (config, files, env, nav, pages) = _in_worker()
    cache = accelerator._cache
    assert cache is not None
    listed = files.documentation_pages()
    done = 0
    for index in indexes:
        page = pages[index]
        key = accelerator._new_outputs.get(page.file.src_uri)
        if key is None or not accelerator._undefer(page):
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
            done += 1
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
        count = self._workers()
        cache.suspend()
        done = 0
        try:
            context = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(
                count,
                mp_context=context,
                initializer=_receive,
                initargs=(self, cache.generation, *job),
            ) as pool:
                shares = [list(range(i, len(items), count * 4)) for i in range(count * 4)]
                done = sum(pool.map(share, shares))
        except Exception as exc:  # the build does whatever the workers did not
            log.info("errcat: the worker processes stopped: %s", exc)
        finally:
            cache.resume()
        return done
