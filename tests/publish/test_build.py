"""`errcat build`: the real site's seed pages, safety of prose in HTML, atomic and reproducible
publishing, and the composed folder built by another engine."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers import file_digests, mkdocs
from test_build_project import (
    ACTIVE_ID,
    DRAFT_ID,
    HOSTILE_MEANING,
    RETIRED_ID,
    STOP_ID,
    make_project,
)

from catalog.cli import main
from catalog.core.config import load_config
from catalog.core.findings import CatalogInvalid
from catalog.matching.message_index import load_index
from catalog.publish.build import BuildError, OutputRefused, build_site, switch

REPO = Path(__file__).resolve().parents[2]
SEEDS = {
    "f978622eed176d93": ("ValueError", "borrow_torch_tensors requires MPS tensors, got {devices}"),
    "d707e25309e5dbae": ("RuntimeError", "SGLANG_USE_MLX requires an available PyTorch MPS device"),
    "ffbed2bb70a79900": ("ValueError", "{transport_name} requires a CUDA tensor"),
    "0fdb60950b3588f4": ("ValueError", "{name} must be on device {device}, got {t.device}"),
}


@pytest.fixture(scope="module")
def real_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's own site, built once for this module (outside the project's build/)."""
    scratch = tmp_path_factory.mktemp("real")
    result = build_site(load_config(REPO), scratch / "site", build_dir=scratch / "build")
    return result.out


def _page(site: Path, entry_id: str) -> str:
    return (site / "errors" / entry_id / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("entry_id", sorted(SEEDS))
def test_seed_pages_have_every_part(real_site: Path, entry_id: str) -> None:
    """Each seed error's page holds every part of the seed pages, in the built HTML."""
    exception, message = SEEDS[entry_id]
    html = _page(real_site, entry_id)
    kicker = re.search(r'<p class="errcat-kicker">(.*?)</p>', html)
    assert kicker and "<code>runtime.errors." in kicker.group(1) and exception in kicker.group(1)
    assert re.search(r"<h1[^>]*>" + re.escape(message), html)
    for heading in (
        "Error message",
        "What it means",
        "Source",
        "Solutions",
        "Example fix",
        "When it happens",
        "Trigger",
        "Common situations",
        "Related errors",
    ):
        assert re.search(rf"<h[23][^>]* id=\"[^\"]*\"[^>]*>{heading}<", html), heading
    assert re.search(r"Raised at <code>runtime/[\w/]+\.py:\d+</code>", html)
    assert '<span class="hll">' in html  # the raise line is highlighted
    assert re.search(
        r'<a href="https://github\.com/errcat/errcat/blob/[0-9a-f]{40}/runtime/[^"]+#L\d+">View source</a>',
        html,
    )
    assert re.search(r"<ol>\s*<li>", html)  # numbered solutions
    related = html.split('id="related-errors"')[1]
    assert re.search(r'<a href="\.\./[0-9a-f]{16}/">', related)
    footer = re.search(r'<p class="errcat-footer".*?</p>', html, re.DOTALL)
    assert footer is not None
    assert "https://github.com/errcat/errcat" in footer.group(0)
    assert re.search(r"at commit <code>[0-9a-f]{10}</code>", footer.group(0))
    assert re.search(r"\d{4}-\d{2}-\d{2}", footer.group(0))
    assert (
        f'Data as JSON: <a href="/api/errors/{entry_id}.json">/api/errors/{entry_id}</a>'
        in footer.group(0)
    )
    assert re.search(
        r'<a href="https://github\.com/errcat/errcat/issues/new\?title=[^"]+">Report an issue</a>',
        footer.group(0),
    )
    assert (real_site / "api" / "errors" / f"{entry_id}.json").is_file()


def test_error_pages_stay_out_of_the_navigation(real_site: Path) -> None:
    """No page links every error: a page's size does not grow with the catalog."""
    home = (real_site / "index.html").read_text(encoding="utf-8")
    assert not re.search(r'href="errors/[0-9a-f]{16}/"', home)
    sizes = [len(_page(real_site, entry_id)) for entry_id in SEEDS]
    assert max(sizes) < 60_000


def test_search_index_stays_lean(real_site: Path) -> None:
    """The search index holds under 2 KB per entry: messages and meanings, not code or lists."""
    import json

    index = (real_site / "search" / "search_index.json").read_bytes()
    entries = json.loads((real_site / "api" / "errors" / "index.json").read_bytes())
    assert len(index) / len(entries) < 2048
    locations = [doc["location"] for doc in json.loads(index)["docs"]]
    assert not [loc for loc in locations if loc.endswith(("#source", "#example-fix", "#solutions"))]


def test_every_entry_has_a_page_and_a_json_file(real_site: Path) -> None:
    """The index lists every entry once, and each has its page and its file."""
    rows = json.loads((real_site / "api" / "errors" / "index.json").read_text(encoding="utf-8"))
    assert len(rows) == len({row["id"] for row in rows}) >= len(SEEDS)
    for row in rows:
        assert (real_site / "errors" / row["id"] / "index.html").is_file()
        assert row["url"] == f"http://127.0.0.1:8000/errors/{row['id']}/"


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small project, built once."""
    root = make_project(tmp_path_factory.mktemp("widgets"))
    build_site(load_config(root), root / "build" / "site")
    return root


def test_the_header_names_what_the_packages_traceback_prints(widgets: Path) -> None:
    """The widgets package still raises the built-in (no codegen, no migrate): the header says
    so instead of naming a generated class its tracebacks never show; the repository's own
    runtime raises its typed classes, and its pages name them (test_seed_pages_have_every_part)."""
    html = _page(widgets / "build" / "site", ACTIVE_ID)
    kicker = re.search(r'<p class="errcat-kicker">(.*?)</p>', html)
    assert kicker is not None
    text = re.sub(r"<[^>]+>", "", kicker.group(1))
    assert text.startswith("ValueError · raised as the built-in (its typed class ")
    assert "widgets.errors.TurnBackwards" in text and "subclass of" not in text


def test_prose_markup_is_inert_in_html_and_kept_in_json(widgets: Path) -> None:
    """A <script>, a javascript: link and template syntax in prose reach HTML as text only."""
    site = widgets / "build" / "site"
    html = _page(site, ACTIVE_ID)
    meaning = html.split('id="what-it-means"')[1].split("<h2")[0]
    assert (
        "<script>" not in meaning
        and "&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;"
        in meaning.replace('"', "&quot;")
    )
    assert "javascript:" not in meaning
    assert "so does this" in meaning
    assert "{{ 7 * 7 }}" in meaning and "49" not in meaning
    assert "{% if true %}x{% endif %}" in meaning
    assert '<a href="https://example.org/widgets">a real link</a>' in meaning
    assert "<code>&lt;b&gt;code&lt;/b&gt;</code>" in meaning
    document = json.loads(
        (site / "api" / "errors" / f"{ACTIVE_ID}.json").read_text(encoding="utf-8")
    )
    assert document["meaning"] == HOSTILE_MEANING


def test_retired_page_links_its_replacement(widgets: Path) -> None:
    """A retired entry keeps a page that says so and links its successor."""
    html = _page(widgets / "build" / "site", RETIRED_ID)
    assert "No longer raised" in html
    assert f'href="../{STOP_ID}/"' in html


def test_nothing_generated_is_written_into_site(widgets: Path) -> None:
    """The hand-written docs folder holds only what the author wrote."""
    files = sorted(
        p.relative_to(widgets / "site").as_posix()
        for p in (widgets / "site").rglob("*")
        if p.is_file()
    )
    assert files == ["docs/guides/hello.md"]


def test_builds_are_reproducible(widgets: Path) -> None:
    """Building the same tree again gives byte-identical output."""
    site = widgets / "build" / "site"
    first = file_digests(site.resolve())
    build_site(load_config(widgets), site)
    assert file_digests(site.resolve()) == first


def test_build_publishes_through_a_symlink_and_prunes(tmp_path: Path) -> None:
    """`build/site` is a symlink to the newest build; only it and the previous one are kept."""
    root = make_project(tmp_path)
    out = root / "build" / "site"
    versions = [build_site(load_config(root), out).version for _ in range(3)]
    assert out.is_symlink() and out.resolve() == versions[-1]
    assert sorted(p for p in out.parent.glob("site-*")) == sorted(versions[-2:])


def test_retired_versions_are_moved_at_once_and_removed_by_the_next_build(
    tmp_path: Path,
) -> None:
    """Pruning renames a retired version into the trash folder (instant); the next build
    removes its files while it runs, and finishes with the trash empty of what it found."""
    from catalog.publish.build import trash_folder

    root = make_project(tmp_path)
    out = root / "build" / "site"
    first, second = (build_site(load_config(root), out).version for _ in range(2))
    build_site(load_config(root), out)
    trash = trash_folder(out)
    (retired,) = trash.iterdir()
    assert retired.name.startswith(first.name + ".") and (retired / "index.html").is_file()
    assert not first.exists()
    build_site(load_config(root), out)
    # The first is gone; the second, retired by this build, waits for the next one.
    (waiting,) = trash.iterdir()
    assert not retired.exists() and waiting.name.startswith(second.name + ".")


def test_a_failed_build_leaves_the_previous_site(tmp_path: Path) -> None:
    """When MkDocs stops (a broken link under --strict), build/site still serves the old build."""
    root = make_project(tmp_path)
    out = root / "build" / "site"
    before = build_site(load_config(root), out).version
    snapshot = file_digests(before)
    (root / "site" / "docs" / "guides" / "broken.md").write_text(
        "[x](missing.md)\n", encoding="utf-8"
    )
    with pytest.raises(BuildError, match="mkdocs stopped"):
        build_site(load_config(root), out)
    assert out.resolve() == before and file_digests(out.resolve()) == snapshot
    assert sorted(out.parent.glob("site-*")) == [before]


def test_a_killed_build_leaves_the_previous_site(tmp_path: Path) -> None:
    """SIGKILL in the middle of MkDocs' run leaves build/site whole; the next build tidies up."""
    root = make_project(tmp_path)
    out = root / "build" / "site"
    before = build_site(load_config(root), out).version
    snapshot = file_digests(before)
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("errcat")), "build"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    try:
        # Wait until the new version folder exists: MkDocs is writing it.
        while not any(p != before for p in out.parent.glob("site-*")):
            assert process.poll() is None, "the build finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert out.resolve() == before and file_digests(out.resolve()) == snapshot
    after = build_site(load_config(root), out).version
    assert sorted(out.parent.glob("site-*")) == sorted([before, after])


def test_a_build_leaves_explains_index_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a prose edit, `errcat build` compiles explain's index of the edited catalog: the
    first `errcat explain` answers from it without loading the YAML again."""
    from catalog.matching.message_index import catalog_key, index_path, read_cached

    root = make_project(tmp_path)
    path = root / "catalog" / "widgets.core.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    draft = next(entry for entry in data["errors"] if entry["status"] == "draft")
    draft["meaning"] = "Written after new."
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    monkeypatch.chdir(root)
    config = load_config(root)
    assert read_cached(index_path(config), str(catalog_key(config))) is None
    assert main(["build"]) == 0
    capsys.readouterr()
    assert read_cached(index_path(config), str(catalog_key(config))) is not None


def test_an_invalid_catalog_builds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog with errors gives findings and exit 1 before anything is written."""
    root = make_project(tmp_path)
    path = root / "catalog" / "widgets.core.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("status: draft", "status: sketch", 1),
        encoding="utf-8",
    )
    monkeypatch.chdir(root)
    assert main(["build"]) == 1
    assert "widgets.core.yaml:" in capsys.readouterr().err
    assert not (root / "build").exists()


def test_a_hand_written_page_where_one_is_generated_is_a_finding(tmp_path: Path) -> None:
    """site/docs/errors/index.md would hide the generated index: the build refuses, naming it."""
    root = make_project(tmp_path)
    (root / "site" / "docs" / "errors").mkdir()
    (root / "site" / "docs" / "errors" / "index.md").write_text("# Mine\n", encoding="utf-8")
    with pytest.raises(CatalogInvalid) as caught:
        build_site(load_config(root), root / "build" / "site")
    (finding,) = caught.value.findings
    assert finding.path == root / "site" / "docs" / "errors" / "index.md"
    assert not (root / "build").exists()


def test_a_plain_folder_at_the_output_is_refused_and_left_alone(tmp_path: Path) -> None:
    """An existing real folder at --out is someone's work: switch refuses to take its place
    (tests/publish/test_out_safety.py covers the whole build)."""
    out = tmp_path / "site"
    out.mkdir()
    (out / "old.txt").write_text("old", encoding="utf-8")
    version = tmp_path / "site-20260101T000000-1"
    version.mkdir()
    with pytest.raises(OutputRefused, match="existing folder errcat did not publish"):
        switch(out, version)
    assert not out.is_symlink() and (out / "old.txt").read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", version.name]


def test_the_build_command_reports_the_published_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`errcat build --out DIR` exits 0 and names what it published."""
    root = make_project(tmp_path)
    monkeypatch.chdir(root)
    assert main(["build", "--out", str(tmp_path / "public" / "site")]) == 0
    assert "published" in capsys.readouterr().out
    assert (tmp_path / "public" / "site" / "errors" / ACTIVE_ID / "index.html").is_file()


@pytest.mark.skipif(
    importlib.util.find_spec("zensical") is None, reason="zensical is not installed"
)
def test_zensical_builds_the_composed_folder(widgets: Path) -> None:
    """The composed folder (docs + mkdocs.yml, no plugin) also builds with Zensical."""
    done = subprocess.run(
        [str(Path(sys.executable).with_name("zensical")), "build", "-f", "mkdocs.yml"],
        cwd=widgets / "build",
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (widgets / "build" / "composed-site" / "errors" / ACTIVE_ID / "index.html").is_file()


def test_the_composed_config_brings_what_the_pages_need(tmp_path: Path) -> None:
    """Without settings of its own a project gets Material with errcat's theme folder, the
    extensions errcat's pages use and a search plugin with errcat's separator."""
    from catalog.engine.site_settings import (
        EXTENSIONS,
        PALETTE,
        SEARCH_SEPARATOR,
        THEME_FOLDER,
    )
    from catalog.publish.build import composed_config

    config = composed_config(tmp_path, tmp_path / "build", {"site_name": "x"}, [])
    assert config["theme"] == {
        "name": "material",
        "palette": list(PALETTE),
        "font": False,
        "custom_dir": str(THEME_FOLDER),
    }
    listed = [next(iter(e)) if isinstance(e, dict) else e for e in config["markdown_extensions"]]
    assert listed == [name for name, _ in EXTENSIONS]
    assert {"pymdownx.highlight": dict(EXTENSIONS[5][1])} in config["markdown_extensions"]
    assert config["plugins"] == [{"search": {"separator": SEARCH_SEPARATOR}}]


def test_the_project_settings_win_and_missing_extensions_are_added(tmp_path: Path) -> None:
    """A project's extension settings, theme and search settings are kept; what errcat needs
    and the project lacks is added; the errcat plugin itself is left out."""
    from catalog.publish.build import composed_config

    settings = {
        "site_name": "x",
        "theme": {"name": "readthedocs"},
        "markdown_extensions": [
            "footnotes",
            {"pymdownx.highlight": {"linenums": False}},
            {"toc": {"permalink": "#"}},
        ],
        "plugins": [{"search": {"separator": "[ ]+"}}, "errcat", "tags"],
    }
    config = composed_config(tmp_path, tmp_path / "build", settings, [])
    assert config["theme"] == {"name": "readthedocs"}
    extensions = config["markdown_extensions"]
    assert extensions[:3] == settings["markdown_extensions"]
    assert [e if isinstance(e, str) else next(iter(e)) for e in extensions[3:]] == [
        "admonition",
        "attr_list",
        "md_in_html",
        "tables",
        "pymdownx.superfences",
    ]
    assert config["plugins"] == [{"search": {"separator": "[ ]+"}}, "tags"]
    by_name = composed_config(tmp_path, tmp_path / "build", {"plugins": {"search": {}}}, [])
    assert list(by_name["plugins"]) == ["search"]
    assert by_name["plugins"]["search"]["separator"]


def test_a_project_without_mkdocs_yml_renders_its_pages(tmp_path: Path) -> None:
    """With no mkdocs.yml the draft notice is an admonition and code is highlighted, not left
    as Markdown; the site is named after the project (`[project] name`), not its folder."""
    root = make_project(tmp_path / "checkout")
    (root / "mkdocs.yml").unlink()
    site = build_site(load_config(root), root / "build" / "site").out
    draft = _page(site, DRAFT_ID)
    title = re.search(r"<title>([^<]*)</title>", draft)
    assert title and title.group(1).endswith(" - widgets"), title
    assert "checkout" not in title.group(1)
    assert '<div class="admonition warning">' in draft
    assert "!!!" not in draft and "{ data-search-exclude }" not in draft and "```" not in draft
    assert '<span class="hll">' in draft
    assert (site / "search" / "search_index.json").is_file()


def _plain_mkdocs(build_dir: Path, site: Path) -> dict[str, str]:
    done = mkdocs(build_dir, "build", "-q", "-d", str(site))
    assert done.returncode == 0, done.stderr
    return {k: v for k, v in file_digests(site).items() if k != "search/search_index.json"}


_PUBLISHED_ONLY = (
    "api/",
    "_deploy/",
    "_headers",
    "_redirects",
    "search/search_index.json",
    "search/errcat-match.json",
)


def test_errcat_renders_its_pages_as_mkdocs_would(widgets: Path, tmp_path: Path) -> None:
    """errcat's own conversion of its pages (blocks apart, cached) gives byte for byte the
    files plain MkDocs writes for the composed folder; only the search index differs, since
    errcat writes the error pages' entries itself."""
    ours = file_digests((widgets / "build" / "site").resolve())
    theirs = _plain_mkdocs(widgets / "build", tmp_path / "plain")
    assert {k: v for k, v in ours.items() if not k.startswith(_PUBLISHED_ONLY)} == theirs


def test_extensions_that_change_text_apply_to_errcats_pages_too(tmp_path: Path) -> None:
    """With an extension that rewrites plain text (smarty), the tables and link lists errcat
    would write as HTML go through Python-Markdown instead, and the files are still the ones
    plain MkDocs writes."""
    root = make_project(tmp_path / "project")
    text = (root / "mkdocs.yml").read_text(encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        text.replace("  - admonition\n", "  - admonition\n  - smarty\n"), encoding="utf-8"
    )
    path = root / "catalog" / "widgets.core.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("is already stopped", "is 'already' stopped..."),
        encoding="utf-8",
    )
    site = build_site(load_config(root), root / "build" / "site").version
    ours = {k: v for k, v in file_digests(site).items() if not k.startswith(_PUBLISHED_ONLY)}
    assert ours == _plain_mkdocs(root / "build", tmp_path / "plain")
    index = (site / "errors" / "index.html").read_text(encoding="utf-8")
    assert "&lsquo;already&rsquo;" in index  # smarty's quotes: the table went through it


def test_a_reused_page_shows_its_neighbours_new_titles(tmp_path: Path) -> None:
    """The theme's footer links a page to the next one by title: retitling a hand-written
    guide rewrites the generated page before it, as a build without a cache would."""
    from catalog.core.project import CACHE_FOLDER

    root = make_project(tmp_path)
    out = root / "build" / "site"
    build_site(load_config(root), out)
    guide = root / "site" / "docs" / "guides" / "hello.md"
    guide.write_text("# Greetings\n\nA hand-written guide.\n", encoding="utf-8")
    warm = file_digests(build_site(load_config(root), out).version)
    for path in (root / CACHE_FOLDER).glob("site-cache.sqlite3*"):
        path.unlink()
    cold = file_digests(build_site(load_config(root), out).version)
    assert warm == cold
    before = (out / "errors" / "exceptions" / "index.html").read_text(encoding="utf-8")
    assert "Greetings" in before


def test_with_an_extension_errcat_does_not_know_mkdocs_renders_the_pages(tmp_path: Path) -> None:
    """An extension errcat cannot vouch for (it might change fences) leaves the generated
    pages to MkDocs' own rendering: same files as plain MkDocs, search entries still errcat's."""
    root = make_project(tmp_path / "project")
    text = (root / "mkdocs.yml").read_text(encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        text.replace("  - admonition\n", "  - admonition\n  - pymdownx.snippets\n"),
        encoding="utf-8",
    )
    site = build_site(load_config(root), root / "build" / "site").version
    ours = {k: v for k, v in file_digests(site).items() if not k.startswith(_PUBLISHED_ONLY)}
    assert ours == _plain_mkdocs(root / "build", tmp_path / "plain")
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = [doc["location"] for doc in index["docs"]]
    assert f"errors/{ACTIVE_ID}/" in locations
    assert not [loc for loc in locations if loc.startswith(f"errors/{ACTIVE_ID}/#")]


def test_the_tool_tables_site_url_stands_in_for_mkdocs_yml(tmp_path: Path) -> None:
    """mkdocs.yml names no site_url and `[tool.errcat] site_url` does: the build's absolute
    links (the JSON `url`s, the composed mkdocs.yml's canonical base) and explain's links use
    it, not the local default."""
    root = make_project(tmp_path)
    mkdocs = root / "mkdocs.yml"
    mkdocs.write_text(
        mkdocs.read_text(encoding="utf-8").replace("site_url: http://127.0.0.1:8000/\n", ""),
        encoding="utf-8",
    )
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace(
            "[tool.errcat]\n", '[tool.errcat]\nsite_url = "https://errors.example.org/w"\n'
        ),
        encoding="utf-8",
    )
    site = build_site(load_config(root), root / "build" / "site").out
    document = json.loads((site / "api" / "errors" / f"{ACTIVE_ID}.json").read_text("utf-8"))
    assert document["url"] == f"https://errors.example.org/w/errors/{ACTIVE_ID}/"
    assert f'href="https://errors.example.org/w/errors/{ACTIVE_ID}/"' in _page(site, ACTIVE_ID)
    assert load_index(load_config(root)).site_url == "https://errors.example.org/w/"
    # explain's cached index follows a change of the setting.
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace("example.org/w", "example.net"),
        encoding="utf-8",
    )
    assert load_index(load_config(root)).site_url == "https://errors.example.net/"
