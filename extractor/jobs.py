"""Worker processes for errcat's parallel passes: how many (one below a second's work, then one
per share of the source, up to the CPUs this process may run on) and the pool they run in.

Every count of CPUs in errcat is `available_cpus`; the scan and the call summaries run their
batches in `pool`, and the site build's forked workers (`catalog.core.workers`) are counted by
it too.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

PARALLEL_MIN_BYTES = 1_000_000
"""Below this much source to parse (about half a second of work), one process is faster."""
BYTES_PER_JOB = 500_000
"""Auto `jobs` adds a process per this much source, up to the CPUs available."""


def available_cpus() -> int:
    """CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def auto_jobs(files: int, total_bytes: int) -> int:
    """A process count for parsing `files` files of `total_bytes` bytes in all."""
    if files < 2 or total_bytes < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(available_cpus(), files, total_bytes // BYTES_PER_JOB))


def pool(jobs: int) -> ProcessPoolExecutor:
    """A pool of `jobs` processes for batches passed explicitly (pickled). Forked on Linux, so
    that modules imported before it (libcst) are shared rather than imported again by each
    worker; the platform's default elsewhere."""
    # Imported on first use: a scan answered from its cache starts no process.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context)
