"""errcat joins a project's own MkDocs site as a section and leaves the rest of it as it was.

The site is shaped like a real one: its own home page and 404 page, an explicit nav, a
`custom_dir` whose main.html extends Material's base.html, `codehilite` and no admonitions, a
search `separator` of its own, Material's default (Google) fonts and no palette. It is built
with `mkdocs build --strict` before errcat, then adopted as the README says (`errcat init`,
`generated = false`, `errcat new`, `plugins: [search, errcat]`, `- Errors: errors/` last in the
nav) and built again, by both routes. Each of the project's pages is then byte for byte what it
was, but for errcat's entry in the nav.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from helpers import errcat_in, mkdocs, read_elements, write_files

from catalog.engine.site_settings import (
    EXTENSIONS,
    GUEST_SEARCH_BOOST,
    errcat_markdown,
    own_site,
)
from catalog.pages.content import SECTION, WHOLE_SITE, site_section

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

SEPARATOR = r"[\s\-\.]+"
BEFORE = f"""\
site_name: Gadgets
site_url: http://127.0.0.1:8000/
repo_url: https://github.com/example/gadgets
site_dir: build/mkdocs-site
theme:
  name: material
  custom_dir: overrides
markdown_extensions:
  - codehilite
  - toc:
      permalink: true
plugins:
  - search:
      separator: '{SEPARATOR}'
nav:
  - Home: index.md
  - Guide: guide.md
  - API: api.md
"""
AFTER = (
    BEFORE.replace(
        f"      separator: '{SEPARATOR}'\n", f"      separator: '{SEPARATOR}'\n  - errcat\n"
    )
    + "  - Errors: errors/\n"
)
GUIDE = """\
# Guide

```python
from gadgets import spin
spin("g7", speed=3)
```

    indented = "code"

!!! note "Not an admonition here"
    The project lists no admonition extension, so this stays a paragraph.

A paragraph { .lead } with attribute-list syntax the project does not enable.

| speed | turns |
|---|---|
| 3 | three |
"""
PROJECT = {
    "pyproject.toml": """\
        [project]
        name = "gadgets"
        version = "1.0"
        """,
    "gadgets/__init__.py": "from gadgets.core import spin\n",
    "gadgets/core.py": """\
        def spin(name: str, speed: int) -> None:
            if speed < 0:
                raise ValueError(f"gadget {name} cannot spin backwards, got speed={speed}")
            if speed > 100:
                raise RuntimeError(f"gadget {name} would fly apart at {speed}")
        """,
    "docs/index.md": "# Gadgets handbook\n\nThe project's own home page.\n",
    "docs/guide.md": GUIDE,
    "docs/api.md": "# API\n\n## gadgets.spin\n\n`spin(name, speed)` turns a gadget.\n",
    "docs/404.md": "# Lost\n\nNothing is here.\n",
    "overrides/main.html": (
        '{% extends "base.html" %}\n'
        '{% block extrahead %}<meta name="gadgets" content="own">{% endblock %}\n'
    ),
    "mkdocs.yml": BEFORE,
}
PAGES = ("index.html", "guide/index.html", "api/index.html", "404/index.html", "404.html")
"""The project's own pages, as MkDocs writes them."""
MESSAGE = "gadget g7 cannot spin backwards, got speed=-3"


def _pages(site: Path) -> dict[str, str]:
    return {page: (site / page).read_text(encoding="utf-8") for page in PAGES}


def _build(project: Path) -> Path:
    done = mkdocs(project, "build", "--strict")
    assert done.returncode == 0, done.stderr
    return project / "build" / "mkdocs-site"


def _built_by(route: str, project: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The site `route` builds: the plugin under `mkdocs build`, or `errcat build`."""
    if route == "mkdocs":
        return _build(project)
    assert errcat_in(project, "build") == 0, capsys.readouterr()
    return (project / "build" / "site").resolve()


def _additions(before: str, after: str) -> list[str]:
    """The runs of lines `after` adds to `before`; AssertionError where it changes or removes
    any line of it."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    runs = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, old, new, autojunk=False
    ).get_opcodes():
        assert tag in ("equal", "insert"), (tag, old[i1:i2], new[j1:j2])
        if tag == "insert":
            runs.append("".join(new[j1:j2]))
    return runs


NEXT_LINK = r'<link rel="next" href="(\.\./)*errors/">'


def _is_errors_section(added: str) -> bool:
    """Whether `added` is one navigation item, titled Errors, linking errcat's pages only."""
    text = added.strip()
    links = re.findall(r'href="([^"]*)"', text)
    return (
        text.startswith('<li class="md-nav__item md-nav__item--nested">')
        and text.endswith("</li>")
        and text.count("<li") == text.count("</li>")
        and re.search(r">\s*Errors\s*<", text) is not None
        and bool(links)
        and all(re.fullmatch(r"(/|(\.\./)*)errors/([a-z]+/)?", link) for link in links)
    )


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """The project adopted docs-only, with its pages as they were before errcat."""
    project = write_files(tmp_path_factory.mktemp("existing-site"), PROJECT)
    before = _pages(_build(project))
    assert errcat_in(project, "init") == 0
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    assert re.search(r"^generated = .*$", text, re.MULTILINE), text
    pyproject.write_text(
        re.sub(r"^generated = .*$", "generated = false", text, flags=re.MULTILINE),
        encoding="utf-8",
    )
    assert errcat_in(project, "new") == 0
    (project / "mkdocs.yml").write_text(AFTER, encoding="utf-8")
    yield project, before


def test_the_docs_only_gate_is_green_after_new(
    adopted: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """`generated = false` then `errcat new`: check passes without touching the package."""
    project, _ = adopted
    capsys.readouterr()
    assert errcat_in(project, "check") == 0, capsys.readouterr()
    assert not (project / "gadgets" / "_errcat_errors.py").exists()


@pytest.mark.parametrize("route", ["mkdocs", "errcat build"])
def test_the_projects_pages_are_unchanged_but_for_the_nav_entry(
    route: str, adopted: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every page of the project's, its home and 404 pages included, is byte for byte what it
    was before errcat, once errcat's section is taken out of its navigation: fonts, palette,
    repository link, head additions, Markdown and search settings are the project's."""
    project, before = adopted
    site = _built_by(route, project, capsys)
    after = _pages(site)
    for page in PAGES:
        added = _additions(before[page], after[page])
        sections = [run for run in added if _is_errors_section(run)]
        # The page before the section in the nav now has a next page: errcat's section root.
        nexts = [run for run in added if re.fullmatch(NEXT_LINK, run.strip())]
        assert len(sections) == 1 and len(sections) + len(nexts) == len(added), (page, added)
    assert re.search(NEXT_LINK, after["api/index.html"])
    # What that sameness covers, read from the pages themselves.
    guide = after["guide/index.html"]
    # Google's fonts and no palette toggle: Material's defaults, as the project left them.
    assert "fonts.googleapis.com" in guide and 'name="__palette"' not in guide
    assert 'data-md-component="source"' in guide and "assets/errcat" not in guide
    assert '<div class="codehilite">' in guide and "<p>!!! note" in guide and "{ .lead }" in guide
    assert '<meta name="gadgets" content="own">' in guide


@pytest.mark.parametrize("route", ["mkdocs", "errcat build"])
def test_errcat_pages_have_what_they_need_and_the_nav_reaches_them(
    route: str, adopted: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """The section root exists and the nav links it from the project's pages; errcat's pages
    render their admonitions and line-numbered code with errcat's extensions (the project's
    pages have neither), and carry errcat's stylesheet and search matcher, the project's
    override too."""
    project, _ = adopted
    site = _built_by(route, project, capsys)
    root = (site / "errors" / "index.html").read_text(encoding="utf-8")
    assert "Paste an error message" in root
    assert 'href="errors/"' in (site / "index.html").read_text(encoding="utf-8")
    (entry,) = re.findall(r'href="([0-9a-f]{16})/"', root.split('id="all-errors"')[1])[:1]
    page = (site / "errors" / entry / "index.html").read_text(encoding="utf-8")
    assert 'class="admonition' in page and '<span id="__span-' in page
    assert page.count("assets/errcat.css") == 1 and page.count("assets/errcat-match.js") == 1
    assert '<meta name="gadgets" content="own">' in page
    assert 'data-palette="site"' in page


@pytest.mark.parametrize("route", ["mkdocs", "errcat build"])
def test_errcat_pages_rank_below_the_projects_in_its_search(
    route: str, adopted: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """In the project's search index its own entries are as before (no boost), and each of
    errcat's error pages carries the guest's lower document boost (its indexes are not in the
    index at all)."""
    project, _ = adopted
    site = _built_by(route, project, capsys)
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    ours = [d for d in docs if d["location"].startswith("errors/")]
    theirs = [d for d in docs if not d["location"].startswith("errors/")]
    assert theirs and all("boost" not in d for d in theirs)
    assert any(re.fullmatch(r"errors/[0-9a-f]{16}/", d["location"]) for d in ours)
    assert {d.get("boost") for d in ours} == {GUEST_SEARCH_BOOST}


def test_own_site_is_a_section_of_a_project_with_a_mkdocs_yml(tmp_path: Path) -> None:
    """The one rule: a mkdocs.yml and errcat's pages as a section, the default where docs_dir
    holds a home page of its own, index.md or README.md (MkDocs' home page without one)."""
    assert site_section(None, tmp_path) == WHOLE_SITE
    (tmp_path / "README.md").write_text("# Mine\n", encoding="utf-8")
    assert site_section(None, tmp_path) == SECTION
    assert own_site(SECTION, has_settings=True)
    assert not own_site(SECTION, has_settings=False)
    assert not own_site(WHOLE_SITE, has_settings=True)


def test_errcat_markdown_adds_only_what_the_site_lacks() -> None:
    """errcat's pages get the site's extensions, options untouched, and errcat's missing ones;
    the site's own list and options are left as they were."""
    names, options = ["codehilite", "toc", "tables", "fenced_code"], {"toc": {"permalink": True}}
    scoped, scoped_options = errcat_markdown(names, options)
    assert names == ["codehilite", "toc", "tables", "fenced_code"]
    assert options == {"toc": {"permalink": True}}
    assert scoped[:4] == names
    assert set(scoped) == set(names) | {name for name, _ in EXTENSIONS}
    assert scoped_options["toc"] == {"permalink": True}
    assert scoped_options["pymdownx.highlight"]["anchor_linenums"] is True


def test_a_readme_home_page_with_section_slash_is_refused_naming_it(tmp_path: Path) -> None:
    """`section: /` beside a README.md: errcat's home page would hide it, so the build says so."""
    project = write_files(tmp_path, PROJECT)
    (project / "docs" / "index.md").rename(project / "docs" / "README.md")
    text = AFTER.replace("  - errcat\n", "  - errcat:\n      section: /\n")
    (project / "mkdocs.yml").write_text(text.replace("index.md", "README.md"), encoding="utf-8")
    assert errcat_in(project, "init") == 0
    assert errcat_in(project, "new") == 0
    done = mkdocs(project, "build", "--strict")
    assert done.returncode != 0
    assert "README.md sits where errcat generates a page" in done.stderr


# -- in a browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served_site(adopted: tuple[Path, dict[str, str]]) -> Iterator[str]:
    from test_browser import _missing
    from test_browser_site import static_server

    if _missing() is not None:
        pytest.skip(_missing() or "")
    project, _ = adopted
    with static_server(_build(project)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    from test_browser import chromium
    from test_browser_search import WATCH_WORKER
    from test_browser_site import RECORD_REQUESTS

    with chromium(before_each_page=WATCH_WORKER + RECORD_REQUESTS) as driver:
        yield driver


def test_no_page_requests_a_missing_file_and_errcat_search_still_matches(
    served_site: str, browser: WebDriver
) -> None:
    """On the project's pages and errcat's, on a plain static host, nothing of the site's own
    origin is missing; on an error page a pasted message still puts its page first."""
    from helpers import wait_for
    from test_browser_search import _search
    from test_browser_site import MISSED

    MISSED.clear()
    for path in ("", "guide/", "errors/", "errors/modules/"):
        browser.get(served_site + path)
        assert wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
    assert MISSED == []
    requested = browser.execute_script("return window.__errcatRequests")
    assert all(not url.endswith("/sitemap.xml") for url in requested), requested
    browser.get(served_site + "errors/")
    state = _search(browser, MESSAGE)
    assert state["first"] is not None and state["first"].startswith(served_site + "errors/")
    assert read_elements(browser, ".md-search-result__item.errcat-match")
    assert MISSED == []
