"""errcat in a project's existing MkDocs site: its home page, its nav, its main.html stay its own.

The site has a home page of its own (`index.md`), an explicit `nav` and a `custom_dir` whose
`main.html` extends Material's `base.html`. Each test builds it through both routes, `mkdocs
build --strict` with the plugin and `errcat build`, which must agree.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from helpers import file_digests, mkdocs
from test_build_project import ACTIVE_ID, make_project

from catalog.cli import main
from catalog.core.config import ConfigError
from catalog.pages.content import SECTION, WHOLE_SITE, site_nav, site_section

ROUTES = ("mkdocs", "errcat build")

NAV_WITH_ERRORS = """\
nav:
  - Home: index.md
  - Errors: errors/
  - Hello: guides/hello.md
"""
NAV_WITHOUT_ERRORS = """\
nav:
  - Home: index.md
  - Hello: guides/hello.md
"""
NOTE = "names none of errcat's pages, so its Errors section is added at the end"


def _existing_site(root: Path, nav: str) -> Path:
    """The small project as a site of its own: a home page, `nav`, a main.html override."""
    project = make_project(root)
    (project / "site" / "docs" / "index.md").write_text(
        "# Widgets handbook\n\nThe project's own home page.\n", encoding="utf-8"
    )
    (project / "overrides").mkdir()
    # Material's documented way to add to the head: a block without super(), on base.html.
    (project / "overrides" / "main.html").write_text(
        '{% extends "base.html" %}\n'
        '{% block extrahead %}<meta name="widgets-override" content="kept">{% endblock %}\n',
        encoding="utf-8",
    )
    (project / "mkdocs.yml").write_text(
        textwrap.dedent(
            """\
            site_name: Widgets
            site_url: http://127.0.0.1:8000/
            repo_url: https://github.com/example/widgets
            docs_dir: site/docs
            site_dir: build/mkdocs-site
            theme:
              name: material
              custom_dir: overrides
            plugins:
              - search
              - errcat
            """
        )
        + nav,
        encoding="utf-8",
    )
    return project


def _build(
    route: str, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, str]:
    """Build `project` through `route`; the site folder and what the build printed."""
    if route == "mkdocs":
        done = mkdocs(project, "build", "--strict")
        assert done.returncode == 0, done.stderr
        return project / "build" / "mkdocs-site", done.stderr
    monkeypatch.chdir(project)
    code = main(["build"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    return project / "build" / "site", printed.err


def _html(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("route", ROUTES)
def test_the_home_page_stays_the_projects_and_errcat_has_a_section(
    route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The project's index.md is the site's home page (a strict build, no refusal); errcat's
    overview heads /errors/, which links the indexes and lists every error."""
    site, _ = _build(route, _existing_site(tmp_path, NAV_WITH_ERRORS), monkeypatch, capsys)
    home = _html(site, "")
    assert "Widgets handbook" in home and "Paste an error message" not in home
    root = _html(site, "errors")
    assert "Paste an error message" in root and 'id="all-errors"' in root
    for target in ("modules/", "exceptions/", f"{ACTIVE_ID}/"):
        assert f'href="{target}"' in root, target
    assert (site / "api" / "errors" / f"{ACTIVE_ID}.json").is_file()


@pytest.mark.parametrize("route", ROUTES)
def test_errcat_section_stands_where_the_nav_puts_it(
    route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`Errors: errors/` in the nav becomes errcat's indexes, there, and nothing is printed."""
    site, printed = _build(route, _existing_site(tmp_path, NAV_WITH_ERRORS), monkeypatch, capsys)
    home = _html(site, "")
    assert home.index('href="errors/"') < home.index('href="guides/hello/"')
    assert 'href="errors/exceptions/"' in home
    assert NOTE not in printed


@pytest.mark.parametrize("route", ROUTES)
def test_a_nav_without_errcat_pages_gets_the_section_at_the_end_said_once(
    route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A nav naming none of errcat's pages gets its section last, with one note, and MkDocs
    lists no error page as missing from the nav."""
    project = _existing_site(tmp_path, NAV_WITHOUT_ERRORS)
    site, printed = _build(route, project, monkeypatch, capsys)
    home = _html(site, "")
    assert home.index('href="guides/hello/"') < home.index('href="errors/"')
    assert "By module" in home
    assert printed.count(NOTE) == 1
    assert "not included in the" not in printed


@pytest.mark.parametrize("route", ROUTES)
def test_error_pages_keep_the_sidebar_the_override_and_errcat_assets(
    route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error page shows the project's navigation (not hidden), its main.html's addition,
    and errcat's stylesheet and matcher script, which that main.html does not extend."""
    site, _ = _build(route, _existing_site(tmp_path, NAV_WITH_ERRORS), monkeypatch, capsys)
    page = _html(site, f"errors/{ACTIVE_ID}")
    sidebar = re.search(r'<div class="md-sidebar md-sidebar--primary"[^>]*>', page)
    assert sidebar is not None and "hidden" not in sidebar.group(0)
    assert 'href="../../guides/hello/"' in page
    assert '<meta name="widgets-override" content="kept">' in page
    assert page.count("assets/errcat.css") == 1
    assert page.count("assets/errcat-match.js") == 1
    # Never on the project's own pages: errcat's additions stay on errcat's.
    assert "assets/errcat" not in _html(site, "")


def test_a_main_html_extending_errcat_main_gets_the_additions_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The documented alternative: extending errcat_main.html keeps them, never twice."""
    project = _existing_site(tmp_path, NAV_WITH_ERRORS)
    main_html = project / "overrides" / "main.html"
    main_html.write_text(
        main_html.read_text(encoding="utf-8").replace("base.html", "errcat_main.html"),
        encoding="utf-8",
    )
    site, _ = _build("errcat build", project, monkeypatch, capsys)
    page = _html(site, f"errors/{ACTIVE_ID}")
    assert page.count("assets/errcat.css") == 1 and page.count("assets/errcat-match.js") == 1


def test_a_site_of_errcats_own_keeps_its_home_page_and_hides_the_sidebar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without an index.md of the project's, errcat's overview is the home page and error
    pages hide the sidebar, as before; MkDocs no longer lists the error pages as missing from
    the nav errcat supplies."""
    site, printed = _build("mkdocs", make_project(tmp_path), monkeypatch, capsys)
    assert "not included in the" not in printed
    assert "Paste an error message" in _html(site, "")
    assert "Paste an error message" not in _html(site, "errors")
    sidebar = re.search(
        r'<div class="md-sidebar md-sidebar--primary"[^>]*>', _html(site, f"errors/{ACTIVE_ID}")
    )
    assert sidebar is not None and "hidden" in sidebar.group(0)


def test_section_slash_with_a_home_page_of_the_projects_names_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`section: /` asks for errcat's overview as the home page: the project's index.md is then
    refused, with the setting that keeps it."""
    project = _existing_site(tmp_path, NAV_WITH_ERRORS)
    settings = project / "mkdocs.yml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(text.replace("  - errcat\n", "  - errcat:\n      section: /\n"))
    monkeypatch.chdir(project)
    assert main(["build"]) == 1
    printed = capsys.readouterr()
    assert "set `section: errors/` under the errcat plugin" in printed.out + printed.err


def test_section_takes_only_the_places_errcat_urls_allow(tmp_path: Path) -> None:
    """errcat's URLs are fixed: `section` is errors/ or /, and its default follows index.md."""
    assert site_section(None, tmp_path) == WHOLE_SITE
    (tmp_path / "index.md").write_text("# Mine\n", encoding="utf-8")
    assert site_section(None, tmp_path) == SECTION
    assert site_section("errors", tmp_path) == SECTION
    assert site_section("/", tmp_path) == WHOLE_SITE
    with pytest.raises(ConfigError, match=r"section: reference/errors/.*set section to errors/"):
        site_section("reference/errors/", tmp_path)


def test_the_nav_entry_expands_wherever_it_stands() -> None:
    """`- errors/` or `Title: errors/`, at any depth, becomes errcat's three indexes in place."""
    nav, appended = site_nav(
        [{"Reference": [{"API": "api.md"}, {"Errors": "errors/"}]}, "errors"], [], SECTION
    )
    indexes = [
        {"All errors": "errors/index.md"},
        {"By module": "errors/modules/index.md"},
        {"By exception type": "errors/exceptions/index.md"},
    ]
    assert not appended
    assert nav == [{"Reference": [{"API": "api.md"}, {"Errors": indexes}]}, {"Errors": indexes}]
    # A nav that names one of the indexes itself is the project's to keep as written.
    assert site_nav(["index.md", {"All": "errors/index.md"}], [], SECTION) == (
        ["index.md", {"All": "errors/index.md"}],
        False,
    )


def test_both_routes_make_the_same_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a section of the project's own site (the overview over the index, error pages with
    the sidebar, errcat's extensions for its pages alone), `errcat build` and `mkdocs build`
    with the plugin write the same files, byte for byte."""
    project = _existing_site(tmp_path / "project", NAV_WITH_ERRORS)
    by_plugin = file_digests(_build("mkdocs", project, monkeypatch, capsys)[0])
    by_build = file_digests(_build("errcat build", project, monkeypatch, capsys)[0].resolve())
    assert by_build == by_plugin
    assert "Paste an error message" in _html(project / "build" / "site", "errors")


def test_without_a_nav_the_projects_pages_come_first_then_errcat_section() -> None:
    """No nav in a section: the project's home page and pages (as MkDocs would order them),
    then errcat's; a home page the docs folder lacks is not made up."""
    nav, appended = site_nav(None, ["guides/b.md", "index.md", "a.md"], SECTION)
    assert not appended
    assert nav[:3] == ["index.md", "a.md", "guides/b.md"]
    assert isinstance(nav[3], dict) and list(nav[3]) == ["Errors"]
    assert site_nav(None, ["a.md"], SECTION)[0][0] == "a.md"
