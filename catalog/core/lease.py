"""Leases on published site versions, so that a build never retires a folder a server is still
answering from.

A server process holds a shared `flock` on a small file beside each version it may answer
from (`build/.site-<stamp>-<pid>.lease` for `build/site-<stamp>-<pid>`); `prune` tries an
exclusive lock on it without waiting and retires the version only when that succeeds. Kernel
locks end with their process, so a killed server never keeps a version forever, and nothing is
written inside the site, which is served as it is.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from pathlib import Path

SUFFIX = ".lease"
_VERSION_NAME = re.compile(r"-\d{8}T\d{6}-\d+(?:-\d+)?$")
"""How `errcat build` names the versions it publishes; only those get a lease file."""


def lease_file(version: Path) -> Path:
    """Where the lease of `version` lives: beside it, hidden, never served."""
    return version.with_name(f".{version.name}{SUFFIX}")


class Lease:
    """A shared lock on one version's lease file, held until `release` (or the process ends)."""

    def __init__(self, version: Path) -> None:
        self.version = version
        self._fd: int | None = None
        if not _VERSION_NAME.search(version.name):
            return  # not a folder errcat published: nothing retires it, and nothing is written
        try:
            fd = os.open(lease_file(version), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            # A build folder the server cannot write (a read-only mount) has no builds running
            # beside the server either: nothing can retire the version under it.
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except OSError:
            os.close(fd)
            return
        self._fd = fd

    @property
    def holding(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def held(version: Path) -> bool:
    """Whether any process holds a lease on `version` now."""
    try:
        fd = os.open(lease_file(version), os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops the probe's own lock, if it got one
    return False


def forget(version: Path) -> None:
    """Remove the lease file of a version that is gone or being retired, unless it is held."""
    path = lease_file(version)
    if path.exists() and not held(version):
        with contextlib.suppress(OSError):
            path.unlink()
