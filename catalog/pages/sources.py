"""Where each entry is raised: its sites in the scanned package, as pages and the API show them."""

from __future__ import annotations

import functools
import io
import os
import tokenize
from dataclasses import dataclass
from pathlib import Path

from catalog.core.model import Catalog
from catalog.matching.sites import Matcher
from catalog.pages.repository import Repository
from extractor.imports import public_rank
from extractor.model import ScanReport

PAGE_LINES_BEFORE = 8
"""Lines a page shows above the raise: enough for the condition that leads to it."""
PAGE_LINES_AFTER = 2
"""Lines a page shows after the end of the raise statement."""
SOURCES_WITH_CODE = 10
"""Raise sites a page shows code for; further sites are listed by path and line only. Pages
stay the same size however often an error is raised, and the JSON keeps every site's code."""


def _statement_end(lines: list[str], first: int) -> int:
    """The index of the last line of the statement that starts on `lines[first]`."""
    text = "\n".join(lines[first:]) + "\n"
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                return first + token.start[0] - 1
    except (tokenize.TokenError, SyntaxError):
        pass
    return first


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

    def around_raise(self) -> Snippet:
        """The part a page shows: `PAGE_LINES_BEFORE` lines above the raise, the whole raise
        statement and `PAGE_LINES_AFTER` lines below it."""
        lines = self.code.split("\n")
        at = self.highlight_line - self.start_line
        if not 0 <= at < len(lines):
            return self
        first = max(0, at - PAGE_LINES_BEFORE)
        last = min(len(lines) - 1, _statement_end(lines, at) + PAGE_LINES_AFTER)
        if first == 0 and last == len(lines) - 1:
            return self
        code = "\n".join(lines[first : last + 1])
        return Snippet(self.start_line + first, code, self.highlight_line)


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
    call: bool = False
    """A call statement of a raise helper (`torch._check(...)`), not a raise: what it raises is
    raised in the helper, one frame further in (`catalog.matching.frames.raised_at`)."""

    @property
    def page_snippet(self) -> Snippet | None:
        """The code a page shows around the raise (the API keeps the whole `snippet`)."""
        return None if self.snippet is None else self.snippet.around_raise()

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
    return _relative_to_root(os.getcwd(), repository.root, path)


@functools.lru_cache(maxsize=65536)
def _relative_to_root(cwd: str, root: Path, path: str) -> str:
    # Resolving costs system calls per path component; a package has far fewer files than
    # sites, and every site of a file asks for the same answer.
    absolute = Path(os.path.abspath(os.path.join(cwd, path))).resolve()
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()


def sources_by_entry(
    catalog: Catalog,
    report: ScanReport,
    generated_module: str,
    repository: Repository,
    matcher: Matcher | None = None,
) -> dict[str, tuple[Source, ...]]:
    """Every entry's raise sites, most public first (`_most_public_first`); entries raised
    nowhere are absent.

    `matcher` (one for `catalog` and `generated_module`) defaults to one without a cache of
    site messages."""
    matcher = matcher or Matcher(catalog, generated_module)
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
                call=site.call,
            )
        )
    return {
        entry_id: tuple(sorted(sources, key=_most_public_first))
        for entry_id, sources in found.items()
    }


def _most_public_first(source: Source) -> tuple[object, ...]:
    """A shared message's sources, the public API's own modules first (then path and line):
    the site a user hit leads the page instead of whichever module sorts first by path."""
    module = source.path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return (*public_rank(module, source.function), source.path, source.line, source.column)
