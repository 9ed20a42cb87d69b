"""What the built site's HTML says about each page (descriptions, OpenGraph, canonical links),
what it asks of other origins (nothing), its 404 page, and `errcat build --site-url`.

The project's own site is built once for the module, with `--site-url`'s override pointing it at
a URL with a path, as a deployment under a project folder would be; the real browser tests are
in tests/pages/test_browser_site.py.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from catalog.cli import main
from catalog.core.config import load_config
from catalog.core.model import Entry, Position, Status
from catalog.engine.site_settings import (
    PALETTE,
    THEME_FOLDER,
    add_theme_settings,
    merged_settings,
)
from catalog.entries.validate import load_valid_catalog
from catalog.pages.meta import DESCRIPTION_LIMIT, error_description, first_sentence, plain_text
from catalog.pages.templating import error_page
from catalog.publish.build import build_site

REPO = Path(__file__).resolve().parents[2]
DEPLOYED = "https://errors.example.org/docs/"
BORROW_ID = "f978622eed176d93"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's site as deployed at DEPLOYED (built once for this module)."""
    scratch = tmp_path_factory.mktemp("meta")
    config = load_config(REPO)
    return build_site(config, scratch / "site", build_dir=scratch / "build", site_url=DEPLOYED).out


def _html(site: Path, page: str) -> str:
    return (site / page).read_text(encoding="utf-8")


def _meta(page_html: str, attribute: str, name: str) -> str | None:
    found = re.search(rf'<meta {attribute}="{re.escape(name)}" content="([^"]*)">', page_html)
    return html.unescape(found.group(1)) if found else None


def _error_pages(site: Path) -> list[Path]:
    return sorted(
        page
        for page in (site / "errors").glob("*/index.html")
        if re.fullmatch(r"[0-9a-f]{16}", page.parent.name)
    )


def test_error_descriptions_are_the_message_and_the_meanings_first_sentence(site: Path) -> None:
    """Each error page's description starts with its message and goes on with the first
    sentence of what it means; OpenGraph says the same, and og:url is the canonical link."""
    catalog = {entry.id: entry for entry in load_valid_catalog(load_config(REPO).catalog)}
    for page in _error_pages(site):
        entry = catalog[page.parent.name]
        text = page.read_text(encoding="utf-8")
        description = _meta(text, "name", "description")
        assert description == error_description(entry), page
        assert description.startswith(" ".join(entry.headline.split())), page
        if entry.meaning:
            assert first_sentence(plain_text(entry.meaning))[:60] in description, page
        assert _meta(text, "property", "og:description") == description
        assert _meta(text, "property", "og:title") == entry.headline
        assert _meta(text, "property", "og:type") == "article"
        url = f"{DEPLOYED}errors/{entry.id}/"
        assert f'<link rel="canonical" href="{url}">' in text
        assert _meta(text, "property", "og:url") == url


def test_error_descriptions_differ_across_pages(site: Path) -> None:
    """No two error pages share a description."""
    descriptions = [
        _meta(p.read_text(encoding="utf-8"), "name", "description") for p in _error_pages(site)
    ]
    assert len(descriptions) > 4
    assert len(set(descriptions)) == len(descriptions)


@pytest.mark.parametrize(
    ("page", "says"),
    [
        ("index.html", "Every error"),
        ("errors/index.html", "errors of the catalog"),
        ("errors/modules/index.html", "Errors by module"),
        ("errors/exceptions/index.html", "Errors by exception type"),
        (
            "errors/modules/runtime.tensor_bridge/index.html",
            "raised in module runtime.tensor_bridge",
        ),
        ("errors/exceptions/ValueError/index.html", "of exception type ValueError"),
        ("guides/authoring/index.html", "entry"),
        ("guides/api/index.html", "JSON"),
    ],
)
def test_other_pages_describe_themselves(site: Path, page: str, says: str) -> None:
    """Home, indexes, group pages and guides have a description of their own, OpenGraph tags
    and a canonical link on the configured site."""
    text = _html(site, page)
    description = _meta(text, "name", "description")
    assert description and says in description, description
    assert _meta(text, "property", "og:description") == description
    assert _meta(text, "property", "og:type") == "website"
    assert _meta(text, "property", "og:title")
    url = DEPLOYED + page.removesuffix("index.html")
    assert f'<link rel="canonical" href="{url}">' in text
    assert _meta(text, "property", "og:url") == url


def test_guides_and_indexes_do_not_repeat_the_site_description(site: Path) -> None:
    """Only the home page falls back on site_description."""
    pages = ["errors/index.html", "guides/authoring/index.html", "guides/api/index.html"]
    descriptions = {_meta(_html(site, page), "name", "description") for page in pages}
    assert len(descriptions) == len(pages)


def test_no_page_refers_to_another_origin_for_what_it_loads(site: Path) -> None:
    """No page links a web font or marks the repository link for Material's API fetch; every
    stylesheet, script and icon comes from the site itself."""
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, page
        assert 'data-md-component="source"' not in text, page
        for tag in re.findall(r"<(?:link|script|img)\b[^>]*>", text):
            target = re.search(r'\b(?:href|src)="([^"]*)"', tag)
            if target and not tag.startswith(('<link rel="canonical"', '<link rel="describedby"')):
                assert not re.match(r"[a-z]+:|//", target.group(1)), (page, tag)


def test_pages_offer_both_schemes(site: Path) -> None:
    """Every page carries the light and dark options with their media queries and toggles."""
    text = _html(site, f"errors/{BORROW_ID}/index.html")
    for option in PALETTE:
        assert f'data-md-color-media="{option["media"]}"' in text
        assert f'data-md-color-scheme="{option["scheme"]}"' in text
        assert f'title="{option["toggle"]["name"]}"' in text


def test_error_page_header_links_its_indexes(site: Path) -> None:
    """The header names the class a traceback prints and links the exception's and the
    module's index pages; the path above it leads home and to all errors."""
    text = _html(site, f"errors/{BORROW_ID}/index.html")
    kicker = re.search(r'<p class="errcat-kicker">(.*?)</p>', text, re.DOTALL)
    assert kicker
    assert "<code>runtime.errors.BorrowRequiresMps</code>" in kicker.group(1)
    assert '<a href="../exceptions/ValueError/"><code>ValueError</code></a>' in kicker.group(1)
    module = '<a href="../modules/runtime.tensor_bridge/"><code>runtime.tensor_bridge</code></a>'
    assert module in kicker.group(1)
    path = re.search(r'<p class="errcat-path">(.*?)</p>', text, re.DOTALL)
    assert path and '<a href="../../">Home</a>' in path.group(1)
    assert '<a href="../">All errors</a>' in path.group(1)
    assert (site / "errors/exceptions/ValueError/index.html").is_file()
    assert (site / "errors/modules/runtime.tensor_bridge/index.html").is_file()


def test_the_404_page_offers_the_search_and_the_indexes(site: Path) -> None:
    """404.html opens the search from a button and links the indexes by absolute paths under
    the site's path (it is served at any depth), and asks not to be indexed."""
    text = _html(site, "404.html")
    assert "<title>Page not found - errcat</title>" in text
    assert '<meta name="robots" content="noindex">' in text
    assert "data-errcat-search" in text and "Paste an error message" in text
    for href in ("/docs/errors/", "/docs/errors/modules/", "/docs/errors/exceptions/", "/docs/"):
        assert f'<a href="{href}">' in text, href


def test_home_page_leads_with_finding_an_error(site: Path) -> None:
    """On the home page the search prompt comes before the coverage figures."""
    text = _html(site, "index.html")
    assert text.index("data-errcat-search") < text.index("Errors catalogued")
    assert text.index('id="find-an-error"') < text.index('id="coverage"')


def test_site_url_reaches_the_json_and_the_sitemap(site: Path) -> None:
    """With the override, JSON `url`s, the sitemap and the home page's API paths use it."""
    rows = json.loads((site / "api/errors/index.json").read_text(encoding="utf-8"))
    assert rows and all(row["url"] == f"{DEPLOYED}errors/{row['id']}/" for row in rows)
    entry = json.loads((site / f"api/errors/{BORROW_ID}.json").read_text(encoding="utf-8"))
    assert entry["url"] == f"{DEPLOYED}errors/{BORROW_ID}/"
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    locations = re.findall(r"<loc>([^<]*)</loc>", sitemap)
    assert locations and all(loc.startswith(DEPLOYED) for loc in locations)
    assert f"<loc>{DEPLOYED}errors/{BORROW_ID}/</loc>" in sitemap
    assert "<code>/docs/api/errors/&lt;id&gt;.json</code>" in _html(site, "index.html")
    assert "127.0.0.1" not in sitemap


@pytest.mark.parametrize(
    "value",
    ["errors.example.org", "ftp://errors.example.org/", "https://", "https://x.org/?a=1"],
)
def test_site_url_must_be_a_web_address(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A --site-url that is not an http(s) URL with a host is a usage error (exit 2), named."""
    assert main(["build", "--site-url", value]) == 2
    assert f"expected an http:// or https:// URL with a host and no query, got {value!r}" in (
        capsys.readouterr().err
    )


def test_plain_text_keeps_code_and_drops_markup() -> None:
    """Code spans keep their underscores; emphasis, links and escapes are reduced to words."""
    text = plain_text(
        "`borrow_torch_tensors` needs **MPS** tensors (see [the guide](https://x.org/g)); "
        "a *CPU* one \\* fails.\n\nSecond paragraph."
    )
    assert text == "borrow_torch_tensors needs MPS tensors (see the guide); a CPU one * fails."


def _markdown_words(text: str) -> str:
    """What Python-Markdown shows of `text`: its HTML without tags, images by their alt text."""
    import markdown

    rendered = markdown.markdown(text)
    rendered = re.sub(r'<img[^>]*alt="([^"]*)"[^>]*>', r"\1", rendered)
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


@pytest.mark.parametrize(
    "text",
    [
        "see [click](https://en.example.org/wiki/Lock_(computing)) first",
        "[click](<a path with spaces>) then",
        '[click](https://x.org "a title") then',
        "[click](https://x.org 'a title') then",
        "[click](https://x.org (a title)) then",
        "[a [nested] label](u) then",
        "![a picture](p.png) then",
        "[x\\]y](u) then",
        "[unclosed](u then",
        "plain [brackets] then",
        "[one](u)(two) then",
    ],
)
def test_plain_text_reads_links_as_markdown_does(text: str) -> None:
    """A link's words are what Python-Markdown shows: destinations with parentheses, titles and
    angle brackets leave no stray `)`, and text that is not a link stays as written."""
    assert plain_text(text) == _markdown_words(text)


def test_first_sentence_skips_abbreviations_and_decimals() -> None:
    """`e.g.` and `9.0` end no sentence."""
    text = "Needs capability 9.0, e.g. an H100. Others fail."
    assert first_sentence(text) == "Needs capability 9.0, e.g. an H100."


def test_a_project_palette_and_font_are_kept() -> None:
    """errcat's palette and `font: false` go only into a Material theme that sets neither."""
    own = {"name": "material", "palette": {"primary": "red"}, "font": {"text": "Inter"}}
    assert merged_settings({"theme": own})["theme"] == own
    assert merged_settings({"theme": "material"})["theme"] == {
        "name": "material",
        "palette": list(PALETTE),
        "font": False,
    }
    assert merged_settings({"theme": "readthedocs"})["theme"] == "readthedocs"


def _entry(exception: str, meaning: str | None) -> Entry:
    return Entry(
        id="0123456789abcdef",
        name="DeviceLost",
        exception=exception,
        message="device {device} is gone",
        status=Status.ACTIVE if meaning else Status.DRAFT,
        module="pkg.devices",
        position=Position(Path("catalog/errors/pkg.devices.yaml"), 1, 1),
        meaning=meaning,
    )


def _header(entry: Entry) -> str:
    from catalog.pages.repository import Repository

    text = error_page(
        entry,
        package="pkg",
        generated="pkg.errors",
        sources=(),
        related=(),
        replacement=None,
        verified=(),
        repository=Repository(Path("/x"), None, "unknown", False, None),
        site_path="/",
        page_url="http://127.0.0.1:8000/errors/0123456789abcdef/",
    )
    kicker = re.search(r"^(.*)\n\{ \.errcat-kicker \}$", text, re.MULTILINE)
    assert kicker
    return kicker.group(1)


def test_an_entry_catalogued_in_place_is_named_by_its_class() -> None:
    """A typed entry's header names the generated class and its built-in; an entry catalogued
    in place names its own class, linked to its exception's index."""
    assert _header(_entry("ValueError", "Gone.")) == (
        "`pkg.errors.DeviceLost` · subclass of [`ValueError`](exceptions/ValueError.md)"
        " · raised in [`pkg.devices`](modules/pkg.devices.md)"
    )
    assert _header(_entry("torch.cuda.OutOfMemoryError", "Gone.")) == (
        "[`torch.cuda.OutOfMemoryError`](exceptions/torch.cuda.OutOfMemoryError.md)"
        " · catalogued in place · raised in [`pkg.devices`](modules/pkg.devices.md)"
    )


def test_a_draft_description_names_its_exception_and_module() -> None:
    """Without a meaning the description says what is known: message, exception, module."""
    assert error_description(_entry("ValueError", None)) == (
        "device {device} is gone. ValueError raised in pkg.devices; what it means is not"
        " written yet."
    )


def test_long_descriptions_are_cut_at_a_word() -> None:
    """A description stays within DESCRIPTION_LIMIT characters and ends with an ellipsis."""
    description = error_description(_entry("ValueError", "Word " * 200 + "end."))
    assert len(description) <= DESCRIPTION_LIMIT
    assert description.endswith("Word…")


def _loaded_theme(tmp_path: Path, theme_yaml: str) -> Any:
    from mkdocs.config import load_config as load_mkdocs_config

    (tmp_path / "docs").mkdir(exist_ok=True)
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text(f"site_name: x\ntheme:\n{theme_yaml}", encoding="utf-8")
    return load_mkdocs_config(config_file=str(config_file)).theme


def test_the_plugin_route_sets_the_palette_and_fonts_a_project_left_out(tmp_path: Path) -> None:
    """On a loaded Material theme without palette or font (the MkDocs plugin's route) errcat
    sets its palette and `font: false`; a project's own palette and font stay."""
    theme = _loaded_theme(tmp_path, "  name: material\n")
    assert add_theme_settings(theme) == ["palette", "font", "templates"]
    assert theme["palette"] == list(PALETTE) and theme["font"] is False
    theme = _loaded_theme(
        tmp_path, "  name: material\n  palette:\n    primary: red\n  font:\n    text: Inter\n"
    )
    assert add_theme_settings(theme) == ["templates"]
    assert theme["palette"] == {"primary": "red"} and theme["font"]["text"] == "Inter"
    assert add_theme_settings(_loaded_theme(tmp_path, "  name: mkdocs\n")) == []


def test_errcats_theme_folder_comes_after_the_projects_own_templates(tmp_path: Path) -> None:
    """errcat's templates join a Material theme once, after the project's custom_dir (whose
    templates win) and before Material's own."""
    (tmp_path / "mine").mkdir()
    theme = _loaded_theme(tmp_path, "  name: material\n  custom_dir: mine\n")
    add_theme_settings(theme)
    add_theme_settings(theme)
    assert [Path(d).name for d in theme.dirs[:2]] == ["mine", THEME_FOLDER.name]
    assert theme.dirs.count(str(THEME_FOLDER)) == 1
    plain = _loaded_theme(tmp_path, "  name: material\n")
    add_theme_settings(plain)
    assert plain.dirs[0] == str(THEME_FOLDER) and "material" in Path(plain.dirs[1]).parts


def test_a_project_of_its_own_gets_errcats_theme(tmp_path: Path) -> None:
    """A project whose mkdocs.yml has no custom_dir (or no mkdocs.yml at all) still gets the
    search box's matching, errcat's stylesheet, link previews and the 404 page: the theme ships
    with errcat, not with this repository's docs."""
    from test_build_project import ACTIVE_ID, make_project

    root = make_project(tmp_path)
    (root / "mkdocs.yml").unlink()
    site = build_site(load_config(root), root / "build" / "site").out
    page = (site / "errors" / ACTIVE_ID / "index.html").read_text(encoding="utf-8")
    for needed in ("assets/errcat-match.js", "assets/errcat.css", 'property="og:title"'):
        assert needed in page, needed
    for asset in ("errcat-match.js", "errcat.css", "errcat.js"):
        assert (site / "assets" / asset).is_file(), asset
    assert "Paste an error message" in (site / "404.html").read_text(encoding="utf-8")


def test_errcat_build_site_url_reaches_the_published_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`errcat build --site-url URL` in a project: the published JSON and canonical links use
    URL (a trailing slash added), and mkdocs.yml is left as it was."""
    from test_build_project import ACTIVE_ID, make_project

    root = make_project(tmp_path)
    before = (root / "mkdocs.yml").read_text(encoding="utf-8")
    monkeypatch.chdir(root)
    assert main(["build", "--site-url", "https://widgets.example.org/errors"]) == 0, (
        capsys.readouterr().err
    )
    site = root / "build" / "site"
    entry = json.loads((site / f"api/errors/{ACTIVE_ID}.json").read_text(encoding="utf-8"))
    assert entry["url"] == f"https://widgets.example.org/errors/errors/{ACTIVE_ID}/"
    page = (site / f"errors/{ACTIVE_ID}/index.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{entry["url"]}">' in page
    assert (root / "mkdocs.yml").read_text(encoding="utf-8") == before
