"""The API files written while MkDocs builds the pages, in a process of their own.

MkDocs' build has long stretches on one core (reading every page, writing every page), and the
API files (one per entry: 11,000 for all of torch) were seconds at the end of a cold build on
their own. A forked child writes them beside the build instead, into a folder of its own next
to the site (MkDocs empties the site folder when it starts, so they cannot go there yet), and
once MkDocs is done they are moved into the site: renames on one file system, so their inodes,
which the record of API files keeps for the next build's links (`api.write_api`), stay true.
A file of the API replaces one MkDocs wrote at the same path, as when it was written after.

Where a process cannot be forked safely (no `os.fork`, or threads running that a child would
inherit in the middle of their work), the files are written after MkDocs, as before. One
child (`catalog.core.workers.ForkedChild`), not a pool (`catalog.core.workers.start`): a
process pool keeps a thread running in the build for as long as the job lasts, and MkDocs
forks workers of its own meanwhile. The child leads a process group of its own, so stopping
it stops the workers it forked too.

For the tests: with `ERRCAT_TEST_HOLD_API` naming a folder, the child, once its workers are
started, writes `api-child.json` there (its pid and theirs) and waits up to a minute for a
file `release` to appear, so that a test can kill or interrupt the build at that point.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from catalog.core import exit_status, workers
from catalog.core.errors import FindingsError
from catalog.pages.api import write_api

HOLD_ENV = "ERRCAT_TEST_HOLD_API"
_HOLD_SECONDS = 60.0


class ApiWriteFailed(FindingsError):
    """Writing the API files failed; the message says why."""


class ApiBeside:
    """The API of one build: `start` before MkDocs runs, `finish` after it succeeded, or
    `abandon` after it failed."""

    def __init__(
        self,
        site_dir: Path,
        staging: Path,
        documents: Mapping[str, object],
        *,
        previous: Path | None,
        cache: Path | None,
    ) -> None:
        """`site_dir`: the folder MkDocs builds into; `staging`: a folder that does not exist,
        beside it on the same file system, where the child writes."""
        self._site_dir = site_dir
        self._staging = staging
        self._documents = documents
        self._previous = previous
        self._cache = cache
        self._child: workers.ForkedChild | None = None

    def start(self) -> None:
        """Fork the child that writes the files, where that is safe."""
        if not hasattr(os, "fork") or other_threads():
            return
        # Made now so that the record of API files can name it (MkDocs empties it, keeps it).
        self._site_dir.mkdir(parents=True, exist_ok=True)
        # One of a killed build whose pid this process has now: nobody else's (the build lock).
        shutil.rmtree(self._staging, ignore_errors=True)
        self._staging.mkdir()
        self._child = workers.ForkedChild.start(self._write_in_child)

    def _write_in_child(self) -> None:
        hold = os.environ.get(HOLD_ENV)
        if hold:
            workers._on_start = lambda pids: _hold(Path(hold), pids)
        write_api(
            self._staging,
            self._documents,
            previous=self._previous,
            cache=self._cache,
            published_as=self._site_dir,
        )

    def finish(self) -> None:
        """Wait for the child and move its files into the site (or write them now, if no
        child was started); ApiWriteFailed if writing failed or the child died."""
        if self._child is None:
            write_api(self._site_dir, self._documents, previous=self._previous, cache=self._cache)
            return
        pid = self._child.pid
        message, status = self._child.wait()
        self._child = None
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            shutil.rmtree(self._staging, ignore_errors=True)
            raise ApiWriteFailed(
                message or f"the process writing them (pid {pid}) {exit_status.describe(status)}"
            )
        try:
            _move_into(self._staging, self._site_dir)
            os.rmdir(self._staging)
        except OSError as exc:  # a folder of the site where the API has a file, say
            shutil.rmtree(self._staging, ignore_errors=True)
            raise ApiWriteFailed(f"moving them into {self._site_dir}: {exc}") from None

    def abandon(self) -> None:
        """Stop the child and every process it started, if they still run, and remove what
        it wrote."""
        if self._child is not None:
            self._child.kill()
            self._child = None
        shutil.rmtree(self._staging, ignore_errors=True)


def other_threads() -> bool:
    """Whether a fork here is unsafe (`catalog.core.workers.other_threads`); a test may say
    otherwise."""
    return workers.other_threads()


def _hold(folder: Path, pids: list[int]) -> None:
    """The test hold (`HOLD_ENV`): say who is running, then wait to be released or killed."""
    record = folder / f"api-child.{os.getpid()}.tmp"
    record.write_text(json.dumps({"pid": os.getpid(), "workers": pids}), encoding="utf-8")
    os.replace(record, folder / "api-child.json")
    deadline = time.monotonic() + _HOLD_SECONDS
    while not (folder / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def _move_into(source: Path, target: Path) -> None:
    """Move everything in `source` into `target`, folder by folder where `target` has one of
    the same name; a file replaces the one at its path."""
    with os.scandir(source) as entries:
        for entry in list(entries):
            destination = os.path.join(target, entry.name)
            if (
                entry.is_dir(follow_symlinks=False)
                and os.path.isdir(destination)
                and not os.path.islink(destination)
            ):
                _move_into(Path(entry.path), Path(destination))
                os.rmdir(entry.path)
            else:
                os.replace(entry.path, destination)
