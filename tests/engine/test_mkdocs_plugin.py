"""The `errcat` MkDocs plugin: `mkdocs build --strict` publishes the same pages and the API."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import mkdocs
from mkdocs.config import load_config as load_mkdocs_config
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from test_build_project import ACTIVE_ID, DRAFT_ID, make_project

from catalog.engine.mkdocs_plugin import ErrcatPlugin


def test_mkdocs_build_strict_publishes_pages_and_api(tmp_path: Path) -> None:
    """A plain `mkdocs build --strict` writes every error page, the indexes and the JSON API."""
    root = make_project(tmp_path)
    done = mkdocs(root, "build", "--strict")
    assert done.returncode == 0, done.stderr
    site = root / "build" / "mkdocs-site"
    assert (site / "errors" / ACTIVE_ID / "index.html").is_file()
    assert (site / "errors" / "modules" / "widgets.core" / "index.html").is_file()
    assert (site / "api" / "errors" / f"{ACTIVE_ID}.json").is_file()
    assert (site / "api" / "errors" / "index.json").is_file()
    assert (site / "api" / "schema.json").is_file()
    # Without a nav in mkdocs.yml the plugin supplies one that leaves error pages out.
    home = (site / "index.html").read_text(encoding="utf-8")
    assert f'href="errors/{ACTIVE_ID}/"' not in home
    assert not (root / "site" / "docs" / "errors").exists()


def test_an_invalid_catalog_stops_mkdocs_naming_the_file(tmp_path: Path) -> None:
    """A catalog error aborts the build with the YAML file and line, without a traceback."""
    root = make_project(tmp_path)
    path = root / "catalog" / "widgets.core.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("status: active", "status: done"), encoding="utf-8"
    )
    done = mkdocs(root, "build", "--strict")
    assert done.returncode != 0
    assert "widgets.core.yaml:" in done.stderr
    assert "Traceback" not in done.stderr


def _plugin(root: Path) -> tuple[ErrcatPlugin, object]:
    config = load_mkdocs_config(config_file=str(root / "mkdocs.yml"))
    plugin = config.plugins["errcat"]
    assert isinstance(plugin, ErrcatPlugin)
    plugin.on_config(config)
    return plugin, config


def test_a_hand_written_page_at_a_generated_path_is_a_plugin_error(tmp_path: Path) -> None:
    """site/docs/errors/index.md would be hidden by the generated index: PluginError names it."""
    root = make_project(tmp_path)
    (root / "site" / "docs" / "errors").mkdir()
    (root / "site" / "docs" / "errors" / "index.md").write_text("# Mine\n", encoding="utf-8")
    _, config = _plugin(root)
    from mkdocs.structure.files import get_files

    files = get_files(config)  # type: ignore[arg-type]
    with pytest.raises(PluginError, match=r"site/docs/errors/index\.md sits where errcat gener"):
        config.plugins.on_files(files, config=config)  # type: ignore[attr-defined]


def test_generated_pages_are_added_in_sorted_order(tmp_path: Path) -> None:
    """on_files appends the generated pages as virtual files, sorted by path."""
    root = make_project(tmp_path)
    _, config = _plugin(root)
    # Through the plugin collection, as MkDocs calls it (File.generated names the plugin).
    files = config.plugins.on_files(Files([]), config=config)  # type: ignore[attr-defined]
    assert files is not None
    paths = [f.src_uri for f in files]
    assert paths == sorted(paths)
    assert f"errors/{ACTIVE_ID}.md" in paths and "index.md" in paths


def test_serve_watches_the_catalog_folder(tmp_path: Path) -> None:
    """`mkdocs serve` reloads on catalog edits: the plugin registers the folder with the server."""
    root = make_project(tmp_path)
    plugin, config = _plugin(root)
    watched: list[str] = []

    class Server:
        def watch(self, path: str) -> None:
            watched.append(path)

    plugin.on_serve(Server(), config=config, builder=None)  # type: ignore[arg-type]
    assert str(root / "catalog") in watched


def test_the_plugin_adds_what_the_pages_need(tmp_path: Path) -> None:
    """A mkdocs.yml that names only the errcat plugin: its pages still render (admonitions,
    highlighted code, no Markdown left as text) and the search index has the errors."""
    root = make_project(tmp_path)
    (root / "mkdocs.yml").write_text(
        "site_name: Widgets\ndocs_dir: site/docs\nsite_dir: build/mkdocs-site\n"
        "theme:\n  name: material\nplugins:\n  - errcat\n",
        encoding="utf-8",
    )
    done = mkdocs(root, "build", "--strict")
    assert done.returncode == 0, done.stderr
    site = root / "build" / "mkdocs-site"
    page = (site / "errors" / DRAFT_ID / "index.html").read_text(encoding="utf-8")
    assert '<div class="admonition warning">' in page and '<span class="hll">' in page
    assert "!!!" not in page and "{ data-search-exclude }" not in page and "```" not in page
    index = (site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert f'"location":"errors/{DRAFT_ID}/"' in index and "spins too fast" in index


def test_on_config_keeps_the_projects_extension_settings(tmp_path: Path) -> None:
    """Extensions the project configures keep its settings; the missing ones are added."""
    root = make_project(tmp_path)
    text = (root / "mkdocs.yml").read_text(encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        text.replace("  - pymdownx.superfences\n", "")
        .replace("  - md_in_html\n", "")
        .replace("anchor_linenums: true", "anchor_linenums: false"),
        encoding="utf-8",
    )
    _, config = _plugin(root)
    assert "md_in_html" in config.markdown_extensions  # type: ignore[attr-defined]
    assert "pymdownx.superfences" in config.markdown_extensions  # type: ignore[attr-defined]
    highlight = config.mdx_configs["pymdownx.highlight"]  # type: ignore[attr-defined]
    assert highlight == {"anchor_linenums": False}
