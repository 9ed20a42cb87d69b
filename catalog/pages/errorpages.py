"""A build's error pages, from their inputs: rendered, or read from the page cache
(`catalog.pages.pagecache`); with enough of them, in forked worker processes
(`catalog.core.workers`) while the build goes on with its other pages and documents.

At whole-torch size, keys, rendering and storing are the longest serial step of a cold build
before MkDocs (`bench/site_torch.py`); in workers, every core shares it. A worker stores the pages
it renders in the site cache itself, on a connection of its own, and sends them here in the
cache's compact form. Pages the cache holds already are read here, not in the workers: reading
one marks it as used by this build, which keeps it from being forgotten.
"""

from __future__ import annotations

import functools
from typing import Any

from catalog.core import workers
from catalog.pages import blocks, templating
from catalog.pages.pagecache import PageCache, page_bytes, page_from_bytes

Todo = list[tuple[str, dict[str, Any]]]
"""Docs-relative path of an error page → the keyword arguments of `templating.error_page`."""


def render_page(**inputs: Any) -> blocks.FastPage:
    """`templating.error_page(**inputs)`, with the blocks it emits kept apart."""
    with blocks.recording() as recorded:
        text = templating.error_page(**inputs)
    return blocks.FastPage(text, tuple(recorded))


def _in_worker(
    cache: PageCache, share: list[dict[str, Any]]
) -> list[tuple[str | None, bytes | None]]:
    """For each page's inputs, its cache key and, unless the cache holds the page already,
    the page in the cache's form (marker-free), which is stored."""
    own = cache.in_worker()
    done: list[tuple[str | None, bytes | None]] = []
    try:
        for inputs in share:
            key = own.key(inputs)
            if own.has(key):
                done.append((key, None))
                continue
            data = page_bytes(render_page(**inputs))
            own.store(key, data)
            done.append((key, data))
    finally:
        own.close(succeeded=False)
    return done


class ErrorPages:
    """The error pages of one build, being made from the moment this is created; `pages()`
    waits for them. Use it as a context manager, so that the workers stop if the build
    fails in between."""

    def __init__(self, todo: Todo, cache: PageCache) -> None:
        self._todo = todo
        self._cache = cache
        self._done: dict[str, blocks.FastPage] = {}
        self._job: workers.ForkedMap[tuple[str | None, bytes | None]] | None = None
        if not todo or not workers.worthwhile(len(todo) - 1):
            return
        # The first one here: it compiles the templates, which the workers then inherit.
        path, inputs = todo[0]
        self._done[path] = cache.page(render_page, **inputs)
        cache.suspend()
        share = functools.partial(_in_worker, cache)
        self._job = workers.start(share, [inputs for _, inputs in todo[1:]])
        if self._job is None:
            cache.resume()

    def pages(self) -> dict[str, blocks.FastPage]:
        """Path → page, for every page of the todo list (in its order)."""
        done = self._done
        keys: dict[str, str | None] = {}
        if self._job is not None:
            rest = self._todo[1:]
            try:
                # Each share's pages are taken in as it comes, while the workers go on.
                for index, (key, data) in self._job.completed():
                    path = rest[index][0]
                    if data is None:
                        keys[path] = key  # read below, once the cache is taken up again
                    else:
                        done[path] = page_from_bytes(data)
            finally:
                self._job = None
                self._cache.resume()
        for path, inputs in self._todo:
            if path not in done:
                # Held by the cache, or not looked up yet where the workers were not used.
                page = self._cache.find(keys.get(path))
                done[path] = page if page is not None else self._cache.page(render_page, **inputs)
        return {path: done[path] for path, _ in self._todo}

    def close(self) -> None:
        """Stop the workers, if they are still at work."""
        if self._job is not None:
            self._job.close()
            self._job = None
            self._cache.resume()

    def __enter__(self) -> ErrorPages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
