"""File discovery: which files a scan reads, from paths and include/exclude globs.

Globs match `/`-separated paths relative to a base folder, like `Path.glob`: `*` and `?` stay
within one segment, `**` as a whole segment matches any number of segments (zero included).
Folders are walked in name order, following symlinked folders; a symlink back to a folder being
walked is a loop and becomes a failure record instead of an endless walk. Hidden folders
(`.name`) and `__pycache__` are not entered. A file whose path is not valid UTF-8 (bytes that
Python holds as surrogate escapes) is a failure record too: records, the cache and JSON output
all need text, and the file cannot be named in a report or a docs page as it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from extractor.model import ScanFailure


class ExtractorError(Exception):
    """A failure of the scanner that a person reads. The extractor may not import the catalog,
    so this is its own small base; `catalog.core.errors` handles it beside `ErrcatError`, and
    like it the class carries the exit status (the contract: 1 findings, 2 usage or
    environment error)."""

    exit_code: ClassVar[int] = 2


class PathError(ExtractorError):
    """A path given to a scan does not exist (a usage error, not a scan failure)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: no such file or folder")
        self.path = path


@dataclass(frozen=True)
class Target:
    """A file to scan."""

    path: Path
    """Absolute path, symlinks not resolved."""
    display: str
    """The path as records show it: relative to the current directory, `/`-separated."""


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob over `/`-separated relative paths (see the module docstring)."""
    segments = pattern.strip("/").split("/")
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]*/)*")
            continue
        out.append(_segment_regex(segment))
        if not last:
            out.append("/")
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = segment.find("]", index + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = segment[index + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


class Globs:
    """Include and exclude patterns relative to a base folder."""

    def __init__(self, base: Path, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.base = base
        self.include = [glob_regex(pattern) for pattern in include]
        self.exclude = [glob_regex(pattern) for pattern in exclude]

    def wants(self, relative: str) -> bool:
        """Whether a `/`-separated path relative to `base` is scanned."""
        return any(p.match(relative) for p in self.include) and not any(
            p.match(relative) for p in self.exclude
        )


def display_path(path: Path, cwd: Path) -> str:
    """`path` relative to `cwd`, `/`-separated (with `..` when it lies outside)."""
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        relative = str(path)
    return relative.replace(os.sep, "/")


def printable(display: str) -> str:
    """`display` with the bytes of a non-UTF-8 name shown as `\\xff` escapes."""
    try:
        display.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(display).decode("utf-8", "backslashreplace")
    return display


def _add(
    targets: dict[Path, Target], failures: dict[Path, ScanFailure], path: Path, display: str
) -> None:
    shown = printable(display)
    if shown == display:
        targets.setdefault(path, Target(path, display))
    elif path not in failures:
        where = "file" if printable(path.name) != path.name else "folder"
        message = f"{where} name is not valid UTF-8; rename it"
        failures[path] = ScanFailure(shown, 1, 1, message)


def discover(
    paths: Sequence[Path],
    cwd: Path,
    package: Globs | None = None,
) -> tuple[list[Target], list[ScanFailure]]:
    """The files under `paths` (files are taken as given), and folders that could not be walked.

    A folder inside `package.base` is filtered by the package's globs (relative to the package);
    any other folder takes its `*.py` files at any depth. Raises `PathError` for a missing path.
    """
    targets: dict[Path, Target] = {}
    failures: list[ScanFailure] = []
    misnamed: dict[Path, ScanFailure] = {}
    for given in paths:
        absolute = Path(os.path.abspath(cwd / given))
        if not os.path.lexists(absolute):
            raise PathError(str(given))
        if not absolute.is_dir():
            _add(targets, misnamed, absolute, display_path(absolute, cwd))
            continue
        globs = Globs(absolute, ("**/*.py",), ())
        prefix = ""
        if package is not None and _is_within(absolute, package.base):
            globs = package
            prefix = display_path(absolute, package.base)
            prefix = "" if prefix == "." else prefix + "/"
        walker = _Walker(cwd, globs, targets, failures, misnamed)
        stat = absolute.stat()
        walker.walk(absolute, prefix, frozenset({(stat.st_dev, stat.st_ino)}))
    failures.extend(misnamed.values())
    return sorted(targets.values(), key=lambda target: target.display), failures


def _is_within(path: Path, base: Path) -> bool:
    try:
        path.relative_to(base)
    except ValueError:
        return False
    return True


class _Walker:
    def __init__(
        self,
        cwd: Path,
        globs: Globs,
        targets: dict[Path, Target],
        failures: list[ScanFailure],
        misnamed: dict[Path, ScanFailure],
    ) -> None:
        self.cwd = cwd
        self.globs = globs
        self.targets = targets
        self.failures = failures
        self.misnamed = misnamed

    def walk(self, folder: Path, prefix: str, ancestors: frozenset[tuple[int, int]]) -> None:
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            self._fail(folder, f"cannot list folder: {exc.strerror or exc}")
            return
        for entry in entries:
            path = folder / entry.name
            relative = prefix + entry.name
            try:
                is_folder = entry.is_dir()
            except OSError:  # a link to itself: reading it will say so
                is_folder = False
            if is_folder:
                if entry.name.startswith(".") or entry.name == "__pycache__":
                    continue
                try:
                    stat = entry.stat()
                except OSError as exc:
                    self._fail(path, f"cannot read folder: {exc.strerror or exc}")
                    continue
                identity = (stat.st_dev, stat.st_ino)
                if identity in ancestors:
                    target = os.readlink(path) if entry.is_symlink() else entry.name
                    self._fail(path, f"symlink loop: {target!r} leads back to a folder above it")
                    continue
                self.walk(path, relative + "/", ancestors | {identity})
            elif self.globs.wants(relative):
                # Broken links and links to themselves are kept: reading them is the failure.
                _add(self.targets, self.misnamed, path, display_path(path, self.cwd))

    def _fail(self, path: Path, message: str) -> None:
        shown = printable(display_path(path, self.cwd))
        self.failures.append(ScanFailure(shown, 1, 1, message))
