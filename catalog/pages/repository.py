"""The repository a site is built from: its web address, the commit, whether the tree is dirty,
and the commit's date (the date a page shows, so that rebuilding a commit gives the same bytes)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from catalog.core.metadata import ProjectMetadata

UNKNOWN_COMMIT = "unknown"
SHORT_LENGTH = 10
"""Hex digits of a short commit, as pages show it."""


@dataclass(frozen=True)
class Repository:
    """What pages and the API say about where their sources come from."""

    root: Path
    """Absolute folder source paths are relative to: the git top level, else the project root."""
    url: str | None
    """`repo_url` from mkdocs.yml without a trailing `/`; None when not set."""
    commit: str
    """Full commit hash, or `unknown` outside git."""
    dirty: bool
    """Whether tracked files differed from the commit when the site was built."""
    timestamp: int | None
    """Commit time in seconds since the epoch (UTC); None outside git."""
    tag: str | None = None
    """Outside git, the release tag of the package's version, which links then pin to; None
    inside git (the commit pins them) or when the version is unknown."""

    @property
    def ref(self) -> str | None:
        """What source links pin to: the commit, else the release tag; None when neither."""
        if self.commit != UNKNOWN_COMMIT:
            return self.commit
        return self.tag

    @property
    def unlinked_reason(self) -> str | None:
        """Why sources carry no link, as a page says it after "no link: "; None when they do."""
        if self.url is None:
            return "neither `repo_url` in mkdocs.yml nor the package metadata names a repository"
        if self.ref is None:
            return (
                "not built from a git checkout, and the package version is unknown, so "
                "there is no release tag to pin to"
            )
        return None

    @property
    def short_commit(self) -> str:
        """The commit as pages show it."""
        return self.commit if self.commit == UNKNOWN_COMMIT else self.commit[:SHORT_LENGTH]

    @property
    def date(self) -> str | None:
        """The commit's date, `YYYY-MM-DD` in UTC."""
        if self.timestamp is None:
            return None
        return datetime.fromtimestamp(self.timestamp, tz=UTC).strftime("%Y-%m-%d")

    def blob_url(self, path: str, line: int) -> str | None:
        """Link to one line of a file, pinned to the commit (outside git, to the version's
        release tag); None without a URL or either."""
        ref = self.ref
        if self.url is None or ref is None:
            return None
        return f"{self.url}/blob/{ref}/{path}#L{line}"

    def as_dict(self) -> dict[str, object]:
        """The API's `repository` object."""
        return {"url": self.url, "commit": self.commit, "dirty": self.dirty}


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def read_repository(
    root: Path, url: str | None, metadata: ProjectMetadata | None = None
) -> Repository:
    """Describe the git checkout holding `root`; outside git the commit is `unknown` and, when
    `metadata` knows the version, links pin to its release tag. Without `url` (mkdocs.yml's
    `repo_url`) the repository `metadata` names is linked."""
    if url is None and metadata is not None:
        url = metadata.repository_url
    top = _git(root, "rev-parse", "--show-toplevel")
    commit = _git(root, "rev-parse", "HEAD") if top else None
    if not top or not commit:
        tag = metadata.tag if metadata is not None else None
        return Repository(root.resolve(), url, UNKNOWN_COMMIT, False, None, tag)
    stamp = _git(root, "show", "-s", "--format=%ct", "HEAD")
    # Untracked files do not change what a commit link shows, so only tracked changes count.
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return Repository(
        root=Path(top).resolve(),
        url=url,
        commit=commit,
        dirty=bool(status),
        timestamp=int(stamp) if stamp and stamp.isdigit() else None,
    )
