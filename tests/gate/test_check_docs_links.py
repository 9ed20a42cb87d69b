"""`errcat check` compares the generated module with what codegen writes, so it resolves the
docs link as codegen does (catalog.core.config.docs_base_url): a module codegen wrote is
current, and a change of any of the link's sources makes it stale, cache or no cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_codegen_docs_links import CATALOG, DOCS, MKDOCS

from catalog.cli import main

RAISES = """\
from widgets.errors import AlreadyStoppedError, SpinsBackwardsError


def turn(name: str, speed: int) -> None:
    if speed < 0:
        raise SpinsBackwardsError(name=name)


def stop() -> None:
    raise AlreadyStoppedError()
"""

STALE = "the generated module is stale"


def _project(root: Path, urls: dict[str, str] | None) -> Path:
    lines = ["[project]", 'name = "widgets"', 'version = "0.1.0"', 'requires-python = ">=3.9"']
    if urls is not None:
        lines += ["", "[project.urls]", *(f"{label!r} = {url!r}" for label, url in urls.items())]
    lines += ["", "[tool.errcat]", 'package = "widgets"', 'catalog = "catalog"']
    lines.append('generated = "widgets/errors.py"')
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "widgets").mkdir()
    (root / "widgets" / "__init__.py").write_text("", encoding="utf-8")
    (root / "widgets" / "core.py").write_text(RAISES, encoding="utf-8")
    (root / "catalog").mkdir()
    (root / "catalog" / "widgets.core.yaml").write_text(CATALOG, encoding="utf-8")
    return root


def _check(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["check"])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("urls", [None, DOCS], ids=["no link", "project.urls"])
def test_check_is_green_on_the_module_codegen_wrote(
    urls: dict[str, str] | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without any link setting and with only [project.urls], codegen's module passes check
    (a check that assumed the local server's URL would call it stale)."""
    monkeypatch.chdir(_project(tmp_path / "project", urls))
    assert main(["codegen"]) == 0
    capsys.readouterr()
    code, output = _check(capsys)
    assert code == 0 and STALE not in output, output


def test_each_source_of_the_link_makes_the_module_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a check has cached what codegen would write, setting [project.urls], then
    [tool.errcat] site_url, then mkdocs.yml's site_url each make the module stale, and codegen
    makes it current again."""
    root = _project(tmp_path / "project", None)
    monkeypatch.chdir(root)
    pyproject = root / "pyproject.toml"
    assert main(["codegen"]) == 0
    assert _check(capsys)[0] == 0
    changes = [
        lambda: pyproject.write_text(
            pyproject.read_text(encoding="utf-8").replace(
                "[tool.errcat]", '[project.urls]\nDocs = "https://d.example/"\n\n[tool.errcat]'
            ),
            encoding="utf-8",
        ),
        lambda: pyproject.write_text(
            pyproject.read_text(encoding="utf-8") + 'site_url = "https://errors.example/"\n',
            encoding="utf-8",
        ),
        lambda: (root / "mkdocs.yml").write_text(MKDOCS, encoding="utf-8"),
    ]
    for change, url in zip(
        changes,
        ["https://d.example/", "https://errors.example/", "https://site.example/widgets/"],
        strict=True,
    ):
        change()
        code, output = _check(capsys)
        assert code == 1 and STALE in output, output
        assert main(["codegen"]) == 0
        assert f'DOCS_BASE_URL = "{url}"' in (root / "widgets" / "errors.py").read_text()
        code, output = _check(capsys)
        assert code == 0, output
