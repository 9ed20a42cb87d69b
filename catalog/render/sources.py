"""Where each entry is raised: its sites in the scanned package, as pages and the API show them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from catalog.match import Matcher
from catalog.model import Catalog
from catalog.render.repository import Repository
from extractor.model import ScanReport


@dataclass(frozen=True)
class Snippet:
    """The code shown around a raise."""

    start_line: int
    """1-based file line of the first line of `code`."""
    code: str
    highlight_line: int
    """1-based file line of the `raise` keyword."""

    @property
    def highlight_offset(self) -> int:
        """1-based line of the raise within `code` (what `hl_lines` counts)."""
        return self.highlight_line - self.start_line + 1


@dataclass(frozen=True)
class Source:
    """One raise site of one entry."""

    path: str
    """The file, relative to the repository root, `/`-separated."""
    line: int
    """1-based line of the `raise` keyword."""
    column: int
    """1-based column of the `raise` keyword."""
    function: str | None
    """Dotted enclosing classes and functions; None at module level."""
    url: str | None
    """The line in the repository, pinned to the commit; None without `repo_url` or git."""
    snippet: Snippet | None

    def as_dict(self) -> dict[str, object]:
        """The API's `sources[]` item."""
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "function": self.function,
            "url": self.url,
            "snippet": None
            if self.snippet is None
            else {
                "start_line": self.snippet.start_line,
                "code": self.snippet.code,
                "highlight_line": self.snippet.highlight_line,
            },
        }


def _repository_path(repository: Repository, path: str) -> str:
    # The scanner reports paths relative to the current folder, which need not be the root.
    absolute = Path(os.path.abspath(path)).resolve()
    try:
        return absolute.relative_to(repository.root).as_posix()
    except ValueError:
        return Path(path).as_posix()


def sources_by_entry(
    catalog: Catalog,
    report: ScanReport,
    generated_module: str,
    repository: Repository,
) -> dict[str, tuple[Source, ...]]:
    """Every entry's raise sites in path and line order; entries raised nowhere are absent."""
    matcher = Matcher(catalog, generated_module)
    found: dict[str, list[Source]] = {}
    for site in report.sites:
        match = matcher.match(site)
        if match is None:
            continue
        path = _repository_path(repository, site.path)
        context = site.context
        found.setdefault(match.entry.id, []).append(
            Source(
                path=path,
                line=site.line,
                column=site.column,
                function=site.function,
                url=repository.blob_url(path, site.line),
                snippet=None
                if context is None
                else Snippet(context.start_line, context.code, context.highlight_line),
            )
        )
    return {
        entry_id: tuple(sorted(sources, key=lambda s: (s.path, s.line, s.column)))
        for entry_id, sources in found.items()
    }
