"""A function mapped over many items in forked worker processes, for the build's serial steps
that cost seconds at catalog size (rendering error pages, writing the API files).

Fork, not spawn: a worker inherits the parent's state as it is (the catalog, the jinja
environment, the block markers' per-process token), so nothing but the results crosses a pipe,
and markers a worker writes are valid in the parent. Where fork is unavailable, the job is
too small to pay for the processes, or a worker fails, `start` and `forked_map` answer None and
the caller does the work itself: workers only ever make a build faster, never break it.
"""

from __future__ import annotations

import concurrent.futures
import gc
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

log = logging.getLogger("mkdocs.plugins.errcat")

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_ITEMS = 200
"""Items below which starting worker processes costs more than it saves."""
_MAX_WORKERS = 4
_SHARES_PER_WORKER = 4
"""Shares per worker: items differ in cost, and a worker that finishes early takes the next."""

_JOB: tuple[Callable[[list[Any]], list[Any]], Sequence[Any]] | None = None
"""What a worker inherits through fork: the function and the items."""


def worker_count() -> int:
    """Processes worth running: the cores this process may use, at most 4 (as
    `catalog.render.fastpath` counts them)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return min(cpus, _MAX_WORKERS)


def worthwhile(count: int, minimum: int | None = None) -> bool:
    """Whether `forked_map` would use workers for `count` items (a caller that must prepare for
    a fork asks first)."""
    least = PARALLEL_ITEMS if minimum is None else minimum
    if count < max(least, 1) or worker_count() < 2:
        return False
    return "fork" in multiprocessing.get_all_start_methods()


def _share(indexes: list[int]) -> list[Any]:
    assert _JOB is not None
    function, items = _JOB
    results = function([items[index] for index in indexes])
    if len(results) != len(indexes):
        raise ValueError(f"a share of {len(indexes)} items gave {len(results)} results")
    return results


class ForkedMap(Generic[R]):
    """Results being computed in forked workers while the caller does other work; see
    `start`. Use it as a context manager, or call `results` (which ends it)."""

    def __init__(self, function: Callable[[list[Any]], list[R]], items: Sequence[Any]) -> None:
        global _JOB
        workers = worker_count()
        count = min(len(items), workers * _SHARES_PER_WORKER)
        # Striped rather than cut in runs: neighbouring items (one module's errors) cost alike.
        self._shares = [list(range(start, len(items), count)) for start in range(count)]
        self._size = len(items)
        _JOB = (function, items)
        # What exists at the fork is the workers' to read, not to collect: without this, each
        # worker's collections walk (and copy, page by page) the whole inherited heap.
        gc.freeze()
        try:
            context = multiprocessing.get_context("fork")
            self._pool: concurrent.futures.ProcessPoolExecutor | None = (
                concurrent.futures.ProcessPoolExecutor(workers, mp_context=context)
            )
            self._futures = [self._pool.submit(_share, share) for share in self._shares]
        except BaseException:
            self.close()
            raise
        finally:
            # The workers are forked by the first submit; this process collects as usual.
            gc.unfreeze()

    def completed(self) -> Iterator[tuple[int, R]]:
        """`(index, result)` for each item, a share at a time as the workers finish them, so
        that the caller can use them meanwhile. A worker that fails ends the iteration early
        (the caller does the items it did not get); the workers are stopped at the end."""
        shares = dict(zip(self._futures, self._shares, strict=True))
        try:
            for future in concurrent.futures.as_completed(self._futures):
                done = future.result()
                yield from zip(shares[future], done, strict=True)
        except Exception as exc:  # the caller does the rest itself
            log.info("errcat: the worker processes stopped: %s", exc)
        finally:
            self.close()

    def results(self) -> list[R] | None:
        """One result per item, in the items' order; None if a worker failed."""
        results: dict[int, R] = dict(self.completed())
        if len(results) != self._size:
            return None
        return [results[index] for index in range(self._size)]

    def close(self) -> None:
        """Stop the workers (those at work finish their share first)."""
        global _JOB
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        _JOB = None

    def __enter__(self) -> ForkedMap[R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(
    function: Callable[[list[T]], list[R]], items: Sequence[T], *, minimum: int | None = None
) -> ForkedMap[R] | None:
    """Start computing one result per item in forked workers: each worker calls `function`
    on shares of the items (a list, for work done once per share: opening a connection,
    flushing it), which returns one result per item of its share. None where this is not
    done (see `worthwhile`), and the caller computes the results itself.

    `function` is inherited, not pickled (a closure will do); its results cross a pipe,
    pickled, so they should be compact (bytes, text). One job at a time.
    """
    if not worthwhile(len(items), minimum):
        return None
    if _JOB is not None:  # one at a time: the caller does this one itself
        return None
    try:
        return ForkedMap(function, items)
    except Exception as exc:  # the caller does the whole job itself
        log.info("errcat: the worker processes did not start: %s", exc)
        return None


def forked_map(
    function: Callable[[list[T]], list[R]], items: Sequence[T], *, minimum: int | None = None
) -> list[R] | None:
    """`start`, then its results: None where the workers were not used or failed."""
    job = start(function, items, minimum=minimum)
    return None if job is None else job.results()
