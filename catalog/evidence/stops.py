"""Where a failed call stopped: the package's raise site that a traceback's frames name.

A call `errcat reproduce` tries often stops at another check than the one it looks for: torch's
`define('x', 'x')` never gets to the schema's tags, for `parse_namespace` first refuses a name
without `::`. That check is a raise site of the package too, with tests the extractor read,
and what a call must meet to get past it is their negation
(`catalog.evidence.candidates.avoiding`). This module names the site: the innermost frame
on the lines of one of the package's raise statements, or, for a call of a raise helper
(`torch._check(...)`), a frame a few calls out from the raise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from extractor.model import RaiseSite

HELPER_FRAMES = 4
"""Frames out from a raise that a raise helper's call site may be (`torch._check` calls
`_check_with`, which raises)."""


class Stops:
    """The raise sites of a package by the file they are in, to name the one a call stopped at."""

    def __init__(self, root: Path, sites: Iterable[RaiseSite]) -> None:
        self.root = root
        """The project's root, which the sites' paths are relative to."""
        self._by_file: dict[Path, list[RaiseSite]] = {}
        for site in sites:
            try:
                file = (root / site.path).resolve()
            except OSError:
                continue
            self._by_file.setdefault(file, []).append(site)

    def site_of(self, reply: Mapping[str, Any]) -> RaiseSite | None:
        """The raise site a call's reply raised at (`example_worker`'s `frames`, innermost
        first), or None: not a raise, or a raise at no site of the package's."""
        frames = reply.get("frames")
        if reply.get("ended") != "raised" or not isinstance(frames, list):
            return None
        for depth, frame in enumerate(frames[: HELPER_FRAMES + 1]):
            found = self._at(frame)
            if found is not None and (depth == 0 or found.call):
                return found
        return None

    def _at(self, frame: object) -> RaiseSite | None:
        if not isinstance(frame, Sequence) or len(frame) != 2:
            return None
        try:
            file, line = Path(str(frame[0])).resolve(), int(frame[1])
        except (OSError, ValueError, TypeError):
            return None
        for site in self._by_file.get(file, ()):
            if on_raise_lines(site, line):
                return site
        return None


def on_raise_lines(site: RaiseSite, line: int) -> bool:
    """Whether a traceback's line number lies on the site's raise statement, which may span
    several lines."""
    return site.line <= line <= max(site.line, site.end_line)
