"""Scan orchestration: discover files, serve what the cache knows, parse the rest in parallel.

Parsing is the only expensive step, so the cache is consulted in this process (hashing is
cheap) and only the misses reach workers. Small workloads stay in this process: a process pool
costs more to start than a few files cost to parse.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extractor.cache import Cache
from extractor.calls import CACHE_PREFIX, summary_of_tree
from extractor.files import Globs, discover, printable
from extractor.imports import ModuleName, module_name_for
from extractor.jobs import auto_jobs
from extractor.jobs import pool as jobs_pool
from extractor.model import FileResult, ScanFailure, ScanReport

PROGRESS_MIN_FILES = 50
"""A progress bar is worth showing from this many files to parse."""
DEFAULT_MAX_FILE_SIZE = 2_000_000
"""Files larger than this many bytes are skipped as failures: parsing holds 100 to 200 times a
file's size in memory (`tests/extractor/test_file_size_limit.py`), and hand-written modules
with raise sites worth cataloguing stay well below 2 MB."""


@dataclass(frozen=True)
class _Work:
    data: bytes
    display: str
    module: ModuleName
    key: str | None


def scan_paths(
    paths: Sequence[str | Path],
    *,
    base: Path | None = None,
    include: Sequence[str] = ("**/*.py",),
    exclude: Sequence[str] = (),
    cache_dir: Path | None = None,
    jobs: int | None = None,
    progress: bool = False,
    cwd: Path | None = None,
    max_file_size: int | None = DEFAULT_MAX_FILE_SIZE,
) -> ScanReport:
    """Scan files and folders for raise sites.

    `base` is the folder that `include`/`exclude` are relative to: folders inside it are
    filtered by them, other folders take every `*.py` file. `cache_dir` enables the cache,
    `jobs` fixes the process count (default: by workload), `progress` allows a progress bar on
    stderr for long scans. Paths in the report are relative to `cwd` (default: the current
    directory). A file over `max_file_size` bytes (None: no limit) is a failure record and is
    never read. Raises `PathError` for a path that does not exist; every problem with a file is
    a failure record instead.
    """
    cwd = Path(os.path.abspath(cwd or Path.cwd()))
    globs = Globs(Path(os.path.abspath(base)), include, exclude) if base else None
    targets, walk_failures = discover([Path(p) for p in paths], cwd, globs)
    results: list[FileResult] = [FileResult(f.path, (), f) for f in walk_failures]
    cache = Cache(cache_dir) if cache_dir is not None else None
    known: dict[Path, tuple[str, ...]] = {}
    work: list[_Work] = []
    hits = 0
    for target in targets:
        try:
            # Sized before reading: an oversized file costs neither its bytes nor a parse.
            size = os.stat(target.path).st_size if max_file_size is not None else 0
            data = b"" if _too_big(size, max_file_size) else target.path.read_bytes()
        except OSError as exc:
            results.append(_failed(target.display, f"cannot read: {exc.strerror or exc}"))
            continue
        size = max(size, len(data))  # a file that grew between the stat and the read
        if _too_big(size, max_file_size):
            results.append(
                _failed(
                    target.display,
                    f"file is {size:,} bytes, over max_file_size {max_file_size:,}; skipped",
                )
            )
            continue
        module = module_name_for(target.path, known)
        if printable(module.name) != module.name:  # a package folder above, outside `display`
            results.append(_failed(target.display, "module name is not valid UTF-8; rename it"))
            continue
        key = cache.key(data, module) if cache is not None else None
        cached = cache.get(key, target.display) if cache is not None and key is not None else None
        if cached is not None:
            results.append(cached)
            hits += 1
        else:
            work.append(_Work(data, target.display, module, key))
    total_bytes = sum(len(item.data) for item in work)
    count = auto_jobs(len(work), total_bytes) if jobs is None else max(1, min(jobs, len(work)))
    show = progress and len(work) >= PROGRESS_MIN_FILES
    if not work:
        pass  # everything came from the cache: libcst is never imported
    elif count == 1:
        results.extend(_extract_here(work, cache, show))
    else:
        results.extend(_extract_parallel(work, cache, count, show))
    results.sort(key=lambda result: result.path)
    return ScanReport(tuple(results), cache_hits=hits, cache_misses=len(work), jobs=count)


def _too_big(size: int, limit: int | None) -> bool:
    return limit is not None and size > limit


def _failed(display: str, message: str) -> FileResult:
    return FileResult(display, (), ScanFailure(display, 1, 1, message))


def _progress_bar(total: int) -> Any:
    from tqdm import tqdm  # type: ignore[import-untyped]

    return tqdm(total=total, unit="file", desc="scanning", file=sys.stderr, leave=False)


def _extract_all(work: Sequence[_Work], cache: Cache | None) -> list[FileResult]:
    # Imported on first parse: a scan answered from its cache never needs the extractor (and
    # libcst, which it imports only for the messages its source readers leave, never at all).
    from extractor.extract import extract_bytes

    # With a cache, each file's call summary (`extractor.calls`) is made from the tree parsed
    # here and stored beside its result: a site build then reads it instead of parsing again.
    calls = Cache(cache.root, prefix=CACHE_PREFIX) if cache is not None else None
    results = []
    for item in work:
        trees: list[ast.Module] | None = [] if calls is not None else None
        result = extract_bytes(item.data, item.display, item.module, trees)
        if cache is not None and item.key is not None:
            cache.put(item.key, result)
            summary = summary_of_tree(trees[0], item.module) if trees else None
            if calls is not None and summary is not None:
                calls.put_record(item.key, summary)
        results.append(result)
    return results


def _extract_here(work: Sequence[_Work], cache: Cache | None, show: bool) -> list[FileResult]:
    if not show:
        return _extract_all(work, cache)
    bar = _progress_bar(len(work))
    try:
        results = []
        for item in work:
            results.extend(_extract_all([item], cache))
            bar.update(1)
        return results
    finally:
        bar.close()


def _batches(work: Sequence[_Work], count: int) -> list[list[_Work]]:
    """Split work into `count` batches of similar size, largest files first (LPT)."""
    batches: list[list[_Work]] = [[] for _ in range(count)]
    sizes = [0] * count
    for item in sorted(work, key=lambda item: len(item.data), reverse=True):
        smallest = sizes.index(min(sizes))
        batches[smallest].append(item)
        sizes[smallest] += len(item.data)
    return [batch for batch in batches if batch]


def _extract_parallel(
    work: Sequence[_Work], cache: Cache | None, jobs: int, show: bool
) -> list[FileResult]:
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    # Forked workers share modules imported here instead of each importing them again. libcst
    # is not among them: each worker imports it on its first message the source readers leave
    # (measured: letting the workers hand such files back to this process was slower).
    import extractor.extract  # noqa: F401

    # A few batches per worker balance uneven files without much messaging.
    batches = _batches(work, jobs * 4)
    done: dict[int, list[FileResult]] = {}
    bar = None
    try:
        with jobs_pool(jobs) as pool:
            futures = {
                pool.submit(_extract_all, batch, cache): i for i, batch in enumerate(batches)
            }
            # Created after the workers are forked, so its monitor thread is not forked with them.
            bar = _progress_bar(len(work)) if show else None
            for future in as_completed(futures):
                index = futures[future]
                done[index] = future.result()
                if bar is not None:
                    bar.update(len(batches[index]))
    except BrokenProcessPool:
        # A worker died (killed, or crashed in native code): finish what is left here.
        for index, batch in enumerate(batches):
            if index not in done:
                done[index] = _extract_all(batch, cache)
    finally:
        if bar is not None:
            bar.close()
    return [result for index in sorted(done) for result in done[index]]
