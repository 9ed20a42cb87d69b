"""The sitemap dates pages by the commit on both routes: `errcat build` and a plain `mkdocs build`
with the plugin give every page the same `<lastmod>`, the commit's date, not the clock's."""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from helpers import mkdocs
from test_build_project import make_project

from catalog.core.config import load_config
from catalog.publish.build import build_site

COMMIT_DATE = "2021-03-04"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def _git(root: Path, *args: str) -> None:
    stamp = f"{COMMIT_DATE}T12:00:00Z"
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
        env={"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp, "PATH": "/usr/bin:/bin"},
    )


def _lastmods(site: Path) -> dict[str, str]:
    """Each page's URL in the sitemap → its `<lastmod>`."""
    tree = ET.parse(site / "sitemap.xml")
    return {
        url.findtext(f"{SITEMAP}loc", ""): url.findtext(f"{SITEMAP}lastmod", "")
        for url in tree.getroot()
    }


def _mkdocs(root: Path, site: Path, **env: str) -> None:
    clean = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    done = mkdocs(root, "build", "--strict", "-d", str(site), environ={**clean, **env})
    assert done.returncode == 0, done.stderr


def test_lastmod_is_the_commits_date_on_both_routes(tmp_path: Path) -> None:
    """Both routes date each page by the commit; a SOURCE_DATE_EPOCH the user sets still wins
    on the plugin's route, and errcat's own build leaves the environment as it found it."""
    root = make_project(tmp_path / "widgets")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "widgets")
    published = build_site(load_config(root), root / "build" / "site").out
    assert "SOURCE_DATE_EPOCH" not in os.environ
    _mkdocs(root, tmp_path / "plain")

    ours, theirs = _lastmods(published), _lastmods(tmp_path / "plain")
    assert ours == theirs
    assert len(ours) > 5 and set(ours.values()) == {COMMIT_DATE}

    _mkdocs(root, tmp_path / "dated", SOURCE_DATE_EPOCH="1641038400")  # 2022-01-01 12:00 UTC
    assert set(_lastmods(tmp_path / "dated").values()) == {"2022-01-01"}
