"""Indexes longer than a page are cut into pages that link to each other; every entry stays
reachable, and a strict MkDocs build (which refuses a broken link) publishes them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_build_project import make_project

from catalog.core.config import load_config
from catalog.pages import content, templating
from catalog.publish.build import build_site


def test_a_long_index_is_paged_and_every_page_links_to_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path / "project")
    monkeypatch.setattr(content, "ROWS_PER_PAGE", 1)
    site = project / "build" / "site"
    build_site(load_config(project), site)
    first = (site / "errors" / "index.html").read_text("utf-8")
    assert "Page 1 of 4" in first
    pages = [first] + [
        (site / "errors" / f"page-{n}" / "index.html").read_text("utf-8") for n in (2, 3, 4)
    ]
    listed = [set(re.findall(r'href="(?:\.\./)*([0-9a-f]{16})/"', page)) for page in pages]
    assert all(len(ids) == 1 for ids in listed)
    assert len(set().union(*listed)) == 4  # each entry on exactly one page
    assert 'href="../page-3/"' in pages[1] and 'href="../"' in pages[1]
    # A group of two entries is paged under its own folder, its breadcrumb one level deeper.
    group = site / "errors" / "exceptions" / "ValueError"
    second = (group / "page-2" / "index.html").read_text("utf-8")
    assert "Page 2 of 2" in second and 'href="../"' in second
    assert 'href="../../../../"' in second  # Home, from errors/exceptions/ValueError/page-2/


def test_paging_cuts_rows_in_order_and_links_relative_to_each_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(content, "ROWS_PER_PAGE", 4)
    pages = list(content._paged("errors/x.md", "errors/x/", list(range(9))))
    assert [(path, list(rows)) for path, rows, _ in pages] == [
        ("errors/x.md", [0, 1, 2, 3]),
        ("errors/x/page-2.md", [4, 5, 6, 7]),
        ("errors/x/page-3.md", [8]),
    ]
    assert [pager.links for _, _, pager in pages] == [
        (None, "x/page-2.md", "x/page-3.md"),
        ("../x.md", None, "page-3.md"),
        ("../x.md", "page-2.md", None),
    ]
    assert [pager.up for _, _, pager in pages] == ["", "../", "../"]
    (single,) = content._paged("errors/index.md", "errors/", [1, 2])
    assert single[0] == "errors/index.md" and single[2].count == 1


def test_an_error_raised_at_many_sites_shows_the_facts_of_the_first_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `SOURCES_WITH_CODE` sites (none here), a page says where the other sites' facts
    are instead of listing them: a message raised at hundreds of sites stays a light page."""
    project = make_project(tmp_path / "project")
    monkeypatch.setattr(templating, "SOURCES_WITH_CODE", 0)
    site = project / "build" / "site"
    build_site(load_config(project), site)
    page = (site / "errors" / "1111111111111111" / "index.html").read_text("utf-8")
    assert "Raised when" not in page
    assert "The 1 other sites" in page and 'href="/api/errors/1111111111111111.json"' in page
