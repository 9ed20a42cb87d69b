"""How many processes a scan or a call-summary pass uses: one below a second's work, then one
per share of the source, up to the CPUs this process may run on."""

from __future__ import annotations

import os

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
