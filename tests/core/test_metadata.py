"""The package's own name, version and repository: from pyproject, its source, or the installed
distribution that provides it (a copy of an installed package has only the last two)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from catalog.core import metadata
from catalog.core.config import ConfigError, load_config
from catalog.core.metadata import ProjectMetadata, read_project_metadata, repository_from_urls


def _project(root: Path, pyproject: str, files: dict[str, str] | None = None) -> Path:
    (root / "pyproject.toml").write_text(textwrap.dedent(pyproject), encoding="utf-8")
    package = root / "gizmo"
    package.mkdir()
    for name, text in {"__init__.py": "", **(files or {})}.items():
        (package / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture
def installed_gizmo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A distribution `gizmo-dist` 4.5.6+local that provides the import name `gizmo`,
    installed on sys.path as pip leaves one (METADATA and top_level.txt)."""
    site = tmp_path / "site-packages"
    info = site / "gizmo_dist-4.5.6+local.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: gizmo-dist\nVersion: 4.5.6+local\n"
        "Project-URL: Homepage, https://gizmo.example.org\n"
        "Project-URL: Source Code, https://github.com/example/gizmo/\n",
        encoding="utf-8",
    )
    (info / "top_level.txt").write_text("gizmo\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    metadata._distributions_by_package.cache_clear()
    yield tmp_path / "project"
    metadata._distributions_by_package.cache_clear()


def test_pyproject_names_the_project_its_version_and_repository(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        """\
        [project]
        name = "gizmo"
        version = "1.2.0"
        [project.urls]
        Homepage = "https://gizmo.example.org"
        Repository = "https://github.com/example/gizmo.git"
        [tool.errcat]
        package = "gizmo"
        """,
    )
    found = read_project_metadata(load_config(root))
    assert found == ProjectMetadata("gizmo", "1.2.0", "https://github.com/example/gizmo")
    assert found.tag == "v1.2.0"


def test_a_dynamic_version_is_read_from_the_packages_literal(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        """\
        [project]
        name = "gizmo"
        dynamic = ["version"]
        [tool.errcat]
        package = "gizmo"
        tag_format = "release-{version}"
        """,
        {"_version.py": '__version__: str = "3.0.1"\n'},
    )
    found = read_project_metadata(load_config(root))
    assert (found.version, found.tag, found.repository_url) == ("3.0.1", "release-3.0.1", None)


def test_a_copy_of_an_installed_package_reads_the_distributions_metadata(
    installed_gizmo: Path,
) -> None:
    """No [project] table and no version in the source: the installed distribution providing
    `gizmo` names it, versions it (the local part left out of the tag) and links its source."""
    installed_gizmo.mkdir()
    root = _project(installed_gizmo, '[tool.errcat]\npackage = "gizmo"\n')
    found = read_project_metadata(load_config(root))
    assert found == ProjectMetadata("gizmo-dist", "4.5.6+local", "https://github.com/example/gizmo")
    assert found.tag == "v4.5.6"


def test_another_projects_distribution_is_not_taken(installed_gizmo: Path) -> None:
    """A project named otherwise that happens to hold a `gizmo` folder (a fork, a rename) is
    not the installed distribution: neither its version nor its repository is taken, which
    would link to another project's code; the same name spelled otherwise is the same."""
    installed_gizmo.mkdir()
    root = _project(
        installed_gizmo, '[project]\nname = "other"\n[tool.errcat]\npackage = "gizmo"\n'
    )
    assert read_project_metadata(load_config(root)) == ProjectMetadata("other", None, None)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"other"', '"Gizmo_Dist"'))
    found = read_project_metadata(load_config(root))
    assert found.version == "4.5.6+local"
    assert found.repository_url == "https://github.com/example/gizmo"


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        ({"Source": "https://git.example.org/gizmo/"}, "https://git.example.org/gizmo"),
        (
            {"source-code": "https://x.org/a", "Homepage": "https://github.com/b/c"},
            "https://x.org/a",
        ),
        ({"Homepage": "https://github.com/b/c"}, "https://github.com/b/c"),
        ({"Homepage": "https://pytorch.org", "Documentation": "https://pytorch.org/docs"}, None),
        ({}, None),
    ],
)
def test_which_url_is_the_repository(urls: dict[str, str], expected: str | None) -> None:
    assert repository_from_urls(urls) == expected


@pytest.mark.parametrize("value", ["v{ver}", "no placeholder", 3, "{version"])
def test_a_bad_tag_format_is_a_clear_error(tmp_path: Path, value: object) -> None:
    quoted = f'"{value}"' if isinstance(value, str) else str(value)
    root = _project(tmp_path, f'[tool.errcat]\npackage = "gizmo"\ntag_format = {quoted}\n')
    with pytest.raises(ConfigError, match=r"tag_format has value .*expected a string holding"):
        read_project_metadata(load_config(root))
