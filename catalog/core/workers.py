"""A function mapped over many items in forked worker processes, for the build's serial steps
that cost seconds at catalog size (rendering error pages, writing the API files).

Fork, not spawn: a worker inherits the parent's state as it is (the catalog, the jinja
environment), so nothing but the results crosses a pipe. The job itself (the function and its
items) is handed to each worker explicitly, as the pool's initializer arguments, which fork
passes without pickling; nothing a worker needs is read from a global the parent set before
forking. Where fork is unavailable, the job is
too small to pay for the processes, or a worker fails, `start` and `forked_map` answer None and
the caller does the work itself: workers only ever make a build faster, never break it.

A build's processes die with it (`tied_children`): a descriptor only the build may hold (the
build lock) is closed in every child right after the fork (`private_descriptor`), and on Linux
each child forked meanwhile, and its own children, get SIGKILL when their parent dies
(PR_SET_PDEATHSIG), so a killed build leaves no worker holding its lock or its pipes.
Elsewhere the build kills what it started on the way out (`catalog.publish.api_beside`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gc
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, NoReturn, TypeVar

from extractor.jobs import available_cpus

log = logging.getLogger("mkdocs.plugins.errcat")

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_ITEMS = 200
"""Items below which starting worker processes costs more than it saves."""
_MAX_WORKERS = 4
_SHARES_PER_WORKER = 4
"""Shares per worker: items differ in cost, and a worker that finishes early takes the next."""

_JOB: tuple[Callable[[list[Any]], list[Any]], Sequence[Any]] | None = None
"""In a worker: the job its initializer received (`_receive`)."""
_RUNNING = 0
"""In the parent: how many jobs are running (one at a time)."""


_PRIVATE: set[int] = set()
"""Descriptors closed in every forked child (see `private_descriptor`)."""
_TIED = 0
"""How many `tied_children` are open; inherited, so a child's own children are tied too."""
_PARENT = 0
"""The pid of the process that is forking, set just before each fork."""
_PRCTL: Callable[..., int] | None = None
_PR_SET_PDEATHSIG = 1
_on_start: Callable[[list[int]], None] | None = None
"""Called with the workers' pids once a `ForkedMap` started them: a point where a test may
hold the process (`catalog.publish.api_beside` sets it for ERRCAT_TEST_HOLD_API)."""


@contextlib.contextmanager
def private_descriptor(fd: int) -> Iterator[None]:
    """While open, `fd` is closed in each child right after it is forked: a lock held through
    it (flock is shared by every copy of a descriptor) stays this process's alone."""
    _PRIVATE.add(fd)
    try:
        yield
    finally:
        _PRIVATE.discard(fd)


@contextlib.contextmanager
def tied_children() -> Iterator[None]:
    """While open, every process forked here (and by those, and so on) is killed when its
    parent dies, where the system can do that (Linux); elsewhere a no-op."""
    global _PRCTL, _TIED
    if _PRCTL is None and sys.platform.startswith("linux"):
        import ctypes  # only here: a build pays for loading it, other commands do not

        with contextlib.suppress(OSError, AttributeError):
            function = ctypes.CDLL(None, use_errno=True).prctl
            function.restype = ctypes.c_int
            _PRCTL = function
    _TIED += 1
    try:
        yield
    finally:
        _TIED -= 1


def _before_fork() -> None:
    global _PARENT
    _PARENT = os.getpid()


def _after_fork_in_child() -> None:
    for fd in _PRIVATE:
        with contextlib.suppress(OSError):
            os.close(fd)
    _PRIVATE.clear()
    if _TIED and _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        # The parent may have died before the request was made: then nobody will send it.
        if os.getppid() != _PARENT:
            os.kill(os.getpid(), signal.SIGKILL)


if hasattr(os, "register_at_fork"):
    # multiprocessing's fork workers come through os.fork too; subprocess (fork and exec)
    # does not, and O_CLOEXEC keeps private descriptors from those.
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def worker_count() -> int:
    """Processes worth running: the cores this process may use, at most 4."""
    return min(available_cpus(), _MAX_WORKERS)


def worthwhile(count: int, minimum: int | None = None) -> bool:
    """Whether `forked_map` would use workers for `count` items (a caller that must prepare for
    a fork asks first)."""
    least = PARALLEL_ITEMS if minimum is None else minimum
    if count < max(least, 1) or worker_count() < 2:
        return False
    return "fork" in multiprocessing.get_all_start_methods()


def _receive(function: Callable[[list[Any]], list[Any]], items: Sequence[Any]) -> None:
    """A worker's initializer: the job it works on."""
    global _JOB
    _JOB = (function, items)


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
        global _RUNNING
        workers = worker_count()
        count = min(len(items), workers * _SHARES_PER_WORKER)
        # Striped rather than cut in runs: neighbouring items (one module's errors) cost alike.
        self._shares = [list(range(start, len(items), count)) for start in range(count)]
        self._size = len(items)
        self._running = True
        _RUNNING += 1
        # What exists at the fork is the workers' to read, not to collect: without this, each
        # worker's collections walk (and copy, page by page) the whole inherited heap.
        gc.freeze()
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        try:
            context = multiprocessing.get_context("fork")
            self._pool = concurrent.futures.ProcessPoolExecutor(
                workers, mp_context=context, initializer=_receive, initargs=(function, items)
            )
            self._futures = [self._pool.submit(_share, share) for share in self._shares]
            if _on_start is not None:
                _on_start([p.pid or 0 for p in multiprocessing.active_children()])
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
        global _RUNNING
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._running:
            self._running = False
            _RUNNING -= 1

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

    `function` and `items` reach the workers as the pool's initializer arguments: inherited
    through fork, not pickled (a closure will do). The results cross a pipe, pickled, so they
    should be compact (bytes, text). One job at a time.
    """
    if not worthwhile(len(items), minimum):
        return None
    if _RUNNING:  # one at a time: the caller does this one itself
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


_STOPS = {signal.SIGINT, signal.SIGTERM}
_POLL_SECONDS = 0.01
"""How often a wait for a forked child looks again: short next to any child's work, and the
bound on how late an interrupt is seen while waiting."""
_MESSAGE_BYTES = 4000
"""How much of a failure's message a `ForkedChild` sends back (less than a pipe holds)."""


def other_threads() -> bool:
    """Whether threads besides this one run: a fork then could copy a lock one of them holds
    (logging's, the import lock) into a child that never gets it released."""
    return threading.active_count() > 1


def kill_group(pid: int) -> None:
    """SIGKILL to the process group `pid` leads (a child and what it started), and to the
    child itself in case it had not yet made its group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


class ForkedChild:
    """One function run in a forked child that leads a process group of its own, so that
    stopping it stops the workers it forks too.

    Its end is seen by waiting on its pid, never on end of file of its pipe: its workers
    inherit the pipe, and a killed child's workers would keep it open for ever. A failure in
    the child comes back as the text of its exception (`wait`)."""

    def __init__(self, pid: int, reader: int) -> None:
        self.pid = pid
        self._reader: int | None = reader

    @classmethod
    def start(cls, run: Callable[[], object]) -> ForkedChild | None:
        """Fork a child that calls `run` and exits 0, or 1 with the exception's text; None
        without `os.fork`. The caller first asks `other_threads()`: a fork while other threads
        run is not safe."""
        if not hasattr(os, "fork"):
            return None
        reader, writer = os.pipe()
        # Held off until the child is recorded, so that an interrupt cannot leave it unknown.
        masked = hasattr(signal, "pthread_sigmask")
        if masked:
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        try:
            pid = os.fork()
            if pid == 0:  # the child: run, say what failed, and end without any clean-up
                _child_main(run, reader, writer, masked)
            with contextlib.suppress(OSError):  # as the child does: whichever runs first
                os.setpgid(pid, pid)
            os.close(writer)
            return cls(pid, reader)
        finally:
            if masked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)

    def wait(self) -> tuple[str, int]:
        """The child's message and wait status, once it ended; what it started is stopped.
        The child stays known (`kill` still applies) until it is reaped."""
        assert self._reader is not None
        if hasattr(os, "waitid"):
            # Seen ended but not reaped: its pid, and so its group's id, stay its own while
            # what it left running is killed. Polled, not blocked on: a Ctrl-C that the kernel
            # hands to another thread of this process only sets Python's flag, which a main
            # thread asleep in waitid would not see until the child ended (a held child then
            # let the build finish and exit 0 as if never interrupted).
            while os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
                time.sleep(_POLL_SECONDS)
            kill_group(self.pid)
            _, status = os.waitpid(self.pid, 0)
        else:
            _, status = os.waitpid(self.pid, 0)
            kill_group(self.pid)
        # Whatever it wrote is in the pipe by now; its workers may still hold the other end.
        os.set_blocking(self._reader, False)
        chunks = []
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._reader, _MESSAGE_BYTES):
                chunks.append(chunk)
        self._close()
        return b"".join(chunks).decode("utf-8", "replace"), status

    def kill(self) -> None:
        """Stop the child and every process it started, if they still run."""
        kill_group(self.pid)
        with contextlib.suppress(ChildProcessError):  # reaped by a `wait` cut short
            os.waitpid(self.pid, 0)
        self._close()

    def _close(self) -> None:
        if self._reader is not None:
            os.close(self._reader)
            self._reader = None


def _child_main(run: Callable[[], object], reader: int, writer: int, masked: bool) -> NoReturn:
    status = 1
    try:
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        # A background group writing to a terminal set to `tostop` would be stopped.
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        if masked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
        os.close(reader)
        run()
        status = 0
    except BaseException as exc:
        message = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
        with contextlib.suppress(OSError):
            os.write(writer, message[:_MESSAGE_BYTES])
    finally:
        os._exit(status)
