"""The API files written while MkDocs builds the pages, in a process of their own.

MkDocs' build has long stretches on one core (reading every page, writing every page), and the
API files (one per entry: 11,000 for all of torch) took 4 s of the end of a cold build on
their own. A forked child writes them beside the build instead, into a folder of its own next
to the site (MkDocs empties the site folder when it starts, so they cannot go there yet), and
once MkDocs is done they are moved into the site: renames on one file system, so their inodes,
which the record of API files keeps for the next build's links (`api.write_api`), stay true.
A file of the API replaces one MkDocs wrote at the same path, as when it was written after.

Where a process cannot be forked safely (no `os.fork`, or threads running that a child would
inherit in the middle of their work), the files are written after MkDocs, as before. A plain
fork, not `catalog.render.workers.start`: its process pool keeps a thread running in the build
for as long as the job lasts, and MkDocs forks workers of its own meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
from collections.abc import Mapping
from pathlib import Path

from catalog.render.api import write_api

_MESSAGE_BYTES = 4000
"""How much of a failure's message the child sends back (less than a pipe holds)."""


class ApiWriteFailed(Exception):
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
        self._child: tuple[int, int] | None = None

    def start(self) -> None:
        """Fork the child that writes the files, where that is safe."""
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return
        # Made now so that the record of API files can name it (MkDocs empties it, keeps it).
        self._site_dir.mkdir(parents=True, exist_ok=True)
        # One of a killed build whose pid this process has now: nobody else's (the build lock).
        shutil.rmtree(self._staging, ignore_errors=True)
        self._staging.mkdir()
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: write, say what failed, and end without any clean-up
            status = 1
            try:
                os.close(reader)
                write_api(
                    self._staging,
                    self._documents,
                    previous=self._previous,
                    cache=self._cache,
                    published_as=self._site_dir,
                )
                status = 0
            except BaseException as exc:
                message = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
                with contextlib.suppress(OSError):
                    os.write(writer, message[:_MESSAGE_BYTES])
            finally:
                os._exit(status)
        os.close(writer)
        self._child = (pid, reader)

    def finish(self) -> None:
        """Wait for the child and move its files into the site (or write them now, if no
        child was started); ApiWriteFailed if writing failed."""
        if self._child is None:
            write_api(self._site_dir, self._documents, previous=self._previous, cache=self._cache)
            return
        message, status = self._wait()
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            shutil.rmtree(self._staging, ignore_errors=True)
            raise ApiWriteFailed(
                message or f"the process writing them ended with wait status {status}"
            )
        try:
            _move_into(self._staging, self._site_dir)
            os.rmdir(self._staging)
        except OSError as exc:  # a folder of the site where the API has a file, say
            shutil.rmtree(self._staging, ignore_errors=True)
            raise ApiWriteFailed(f"moving them into {self._site_dir}: {exc}") from None

    def abandon(self) -> None:
        """Stop the child, if it still runs, and remove what it wrote."""
        if self._child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._child[0], signal.SIGKILL)
            self._wait()
        shutil.rmtree(self._staging, ignore_errors=True)

    def _wait(self) -> tuple[str, int]:
        assert self._child is not None
        pid, reader = self._child
        self._child = None
        try:
            chunks = []
            while chunk := os.read(reader, _MESSAGE_BYTES):
                chunks.append(chunk)
        finally:
            os.close(reader)
        _, status = os.waitpid(pid, 0)
        return b"".join(chunks).decode("utf-8", "replace"), status


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
