"""The docs link of generated errors comes from a configured site, never a default: mkdocs.yml's
`site_url`, else `[tool.errcat] site_url`, else the package's documentation URL in
`[project.urls]`; with none, the errors carry no note and `errcat codegen` says once how to
set one."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from catalog.authoring.codegen import generate
from catalog.cli import main
from catalog.cli.commands.codegen import NO_DOCS_LINK
from catalog.core.config import ConfigError, docs_base_url, load_config, read_site_settings
from catalog.entries.validate import load_valid_catalog

CATALOG = """\
module: widgets.core
errors:
  - id: "2000000000000001"
    name: SpinsBackwardsError
    exception: ValueError
    status: draft
    message: "widget {name} cannot turn backwards"
  - id: "2000000000000002"
    name: AlreadyStoppedError
    exception: RuntimeError
    status: draft
    message: "the widget is already stopped"
"""


MKDOCS = "site_name: Widgets\nsite_url: https://site.example/widgets\n"


def _project(
    root: Path,
    *,
    mkdocs: str | None = None,
    site_url: str | None = None,
    urls: dict[str, str] | None = None,
) -> Path:
    """A package `widgets` with the catalog above, its mkdocs.yml (when given), its
    `[tool.errcat] site_url` and its `[project.urls]`."""
    lines = ["[project]", 'name = "widgets"', 'version = "0.1.0"', 'requires-python = ">=3.9"']
    if urls is not None:
        lines += ["", "[project.urls]", *(f"{label!r} = {url!r}" for label, url in urls.items())]
    lines += ["", "[tool.errcat]", 'package = "widgets"', 'catalog = "catalog"']
    lines.append('generated = "widgets/errors.py"')
    if site_url is not None:
        lines.append(f"site_url = {site_url!r}")
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "widgets").mkdir()
    (root / "widgets" / "__init__.py").write_text("", encoding="utf-8")
    (root / "catalog").mkdir()
    (root / "catalog" / "widgets.core.yaml").write_text(CATALOG, encoding="utf-8")
    if mkdocs is not None:
        (root / "mkdocs.yml").write_text(mkdocs, encoding="utf-8")
    return root


DOCS = {"Documentation": "https://readthedocs.example/widgets"}

SOURCES = [
    ("mkdocs.yml", {"mkdocs": MKDOCS}, "https://site.example/widgets/"),
    ("tool.errcat", {"site_url": "https://errors.example/w"}, "https://errors.example/w/"),
    ("project.urls", {"urls": DOCS}, "https://readthedocs.example/widgets/"),
    ("docs label", {"urls": {"docs": "https://d.example/"}}, "https://d.example/"),
    (
        "labels normalised",
        {"urls": {"Read the Docs": "https://r.example/", "DOCS": "https://d.example/"}},
        "https://d.example/",
    ),
    ("homepage only", {"urls": {"Homepage": "https://home.example/"}}, None),
    ("nothing", {}, None),
    ("mkdocs.yml without site_url", {"mkdocs": "site_name: Widgets\n"}, None),
    (
        "mkdocs.yml first",
        {"mkdocs": MKDOCS, "site_url": "https://errors.example/", "urls": DOCS},
        "https://site.example/widgets/",
    ),
    (
        "then tool.errcat",
        {"site_url": "https://errors.example/", "urls": DOCS},
        "https://errors.example/",
    ),
]


@pytest.mark.parametrize(("case", "settings", "expected"), SOURCES, ids=[c[0] for c in SOURCES])
def test_where_the_docs_base_url_comes_from(
    case: str, settings: dict[str, object], expected: str | None, tmp_path: Path
) -> None:
    """mkdocs.yml's site_url, else [tool.errcat] site_url, else a documentation label of
    [project.urls] (Documentation, docs, in any case); otherwise none, whatever else is set."""
    root = _project(tmp_path / "project", **settings)
    assert docs_base_url(load_config(root)) == expected


def test_site_builds_keep_their_default(tmp_path: Path) -> None:
    """Without a site_url, site builds still link their pages under the local server; only
    generated code goes without."""
    root = _project(tmp_path / "project", urls=DOCS)
    assert read_site_settings(root).site_url == "http://127.0.0.1:8000/"
    assert docs_base_url(load_config(root)) == "https://readthedocs.example/widgets/"


@pytest.mark.parametrize("value", ["3", "'docs.example.org'", "''"])
def test_a_site_url_that_is_no_url_is_refused(value: str, tmp_path: Path) -> None:
    """`[tool.errcat] site_url` must be an http(s) URL: anything else is a configuration error
    naming the file, the key and the value."""
    root = _project(tmp_path / "project")
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + f"site_url = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: \[tool\.errcat\] site_url has value"):
        load_config(root)


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("table", [False, True], ids=["explicit", "table"])
def test_without_a_base_url_no_error_carries_a_note(
    table: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no base URL, the module names no site: no `http` anywhere, `docs_url` empty, and
    no note, even with the links switched on."""
    monkeypatch.delenv("ERRCAT_DOCS_LINKS", raising=False)
    (tmp_path / "things.yaml").write_text(CATALOG, encoding="utf-8")
    text = generate(load_valid_catalog(tmp_path), None, table=table)
    assert "http" not in text and 'DOCS_BASE_URL = ""' in text
    path = tmp_path / f"errors_without_links_{table}.py"
    path.write_text(text, encoding="utf-8")
    module = _load(path, path.stem)
    for error in (module.SpinsBackwardsError(name="w"), module.AlreadyStoppedError()):
        assert error.docs_url == ""
        assert not hasattr(error, "__notes__")


def test_codegen_says_once_how_to_set_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With nothing configured, codegen writes a module without links and says once, on
    stderr, how to set one; once [project.urls] names the docs, it links there and says
    nothing."""
    monkeypatch.delenv("ERRCAT_DOCS_LINKS", raising=False)
    root = _project(tmp_path / "project")
    monkeypatch.chdir(root)
    assert main(["codegen"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count(NO_DOCS_LINK) == 1 and "wrote widgets/errors.py" in captured.out
    assert "site_url" in NO_DOCS_LINK and "[project.urls]" in NO_DOCS_LINK
    module = _load(root / "widgets" / "errors.py", "widgets_errors_unlinked")
    assert not hasattr(module.AlreadyStoppedError(), "__notes__")

    _project(tmp_path / "linked", urls=DOCS)
    monkeypatch.chdir(tmp_path / "linked")
    assert main(["codegen"]) == 0
    assert NO_DOCS_LINK not in capsys.readouterr().err
    module = _load(tmp_path / "linked" / "widgets" / "errors.py", "widgets_errors_linked")
    assert module.AlreadyStoppedError().__notes__ == [
        "For further information visit https://readthedocs.example/widgets/errors/2000000000000002/"
    ]
