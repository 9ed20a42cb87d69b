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
fork, not `catalog.core.workers.start`: its process pool keeps a thread running in the build
for as long as the job lasts, and MkDocs forks workers of its own meanwhile.

The child leads a process group of its own, so that stopping it stops the workers it forked
too (`os.killpg`), and its end is seen by waiting on its pid, never on end of file of its pipe:
its workers inherit the pipe, and a killed child's workers would keep it open for ever.

For the tests: with `ERRCAT_TEST_HOLD_API` naming a folder, the child, once its workers are
started, writes `api-child.json` there (its pid and theirs) and waits up to a minute for a
file `release` to appear, so that a test can kill or interrupt the build at that point.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from catalog.core import exit_status, workers
from catalog.pages.api import write_api

_MESSAGE_BYTES = 4000
"""How much of a failure's message the child sends back (less than a pipe holds)."""
HOLD_ENV = "ERRCAT_TEST_HOLD_API"
_HOLD_SECONDS = 60.0
_STOPS = {signal.SIGINT, signal.SIGTERM}


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
        if not hasattr(os, "fork") or other_threads():
            return
        # Made now so that the record of API files can name it (MkDocs empties it, keeps it).
        self._site_dir.mkdir(parents=True, exist_ok=True)
        # One of a killed build whose pid this process has now: nobody else's (the build lock).
        shutil.rmtree(self._staging, ignore_errors=True)
        self._staging.mkdir()
        reader, writer = os.pipe()
        # Held off until the child is recorded, so that an interrupt cannot leave it unknown.
        masked = hasattr(signal, "pthread_sigmask")
        if masked:
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        try:
            pid = os.fork()
            if pid == 0:  # the child: write, say what failed, and end without any clean-up
                self._run_child(reader, writer, masked)
            with contextlib.suppress(OSError):  # as the child does: whichever runs first
                os.setpgid(pid, pid)
            os.close(writer)
            self._child = (pid, reader)
        finally:
            if masked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)

    def _run_child(self, reader: int, writer: int, masked: bool) -> NoReturn:
        status = 1
        try:
            with contextlib.suppress(OSError):
                os.setpgid(0, 0)
            # A background group writing to a terminal set to `tostop` would be stopped.
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            if masked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
            os.close(reader)
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
            status = 0
        except BaseException as exc:
            message = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
            with contextlib.suppress(OSError):
                os.write(writer, message[:_MESSAGE_BYTES])
        finally:
            os._exit(status)

    def finish(self) -> None:
        """Wait for the child and move its files into the site (or write them now, if no
        child was started); ApiWriteFailed if writing failed or the child died."""
        if self._child is None:
            write_api(self._site_dir, self._documents, previous=self._previous, cache=self._cache)
            return
        pid = self._child[0]
        message, status = self._wait()
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
            pid, reader = self._child
            _kill_group(pid)
            with contextlib.suppress(ChildProcessError):  # reaped by a _wait cut short
                os.waitpid(pid, 0)
            os.close(reader)
            self._child = None
        shutil.rmtree(self._staging, ignore_errors=True)

    def _wait(self) -> tuple[str, int]:
        """The child's message and wait status, once it ended; what it started is stopped.

        `self._child` is kept until the child is reaped, so that an interrupt meanwhile still
        leaves it to `abandon`."""
        assert self._child is not None
        pid, reader = self._child
        if hasattr(os, "waitid"):
            # Seen ended but not reaped: its pid, and so its group's id, stay its own while
            # what it left running is killed.
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            _kill_group(pid)
            _, status = os.waitpid(pid, 0)
        else:
            _, status = os.waitpid(pid, 0)
            _kill_group(pid)
        # Whatever it wrote is in the pipe by now; its workers may still hold the other end.
        os.set_blocking(reader, False)
        chunks = []
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(reader, _MESSAGE_BYTES):
                chunks.append(chunk)
        os.close(reader)
        self._child = None
        return b"".join(chunks).decode("utf-8", "replace"), status


def _kill_group(pid: int) -> None:
    """SIGKILL to the child's process group (it and its workers), and to the child itself in
    case it had not yet made its group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def other_threads() -> bool:
    """Whether threads besides this one run: a fork then could copy a lock one of them holds
    (logging's, the import lock) into a child that never gets it released."""
    return threading.active_count() > 1


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
