"""`errcat build` in a project with MkDocs' own layout: `docs/` when mkdocs.yml names no
`docs_dir`, and a strict build that fails says which warnings made it fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_build_project import make_project

from catalog.cli import main


def _without_docs_dir(root: Path) -> Path:
    """The small project, its hand-written pages moved to MkDocs' default folder."""
    project = make_project(root)
    settings = project / "mkdocs.yml"
    lines = settings.read_text(encoding="utf-8").splitlines(keepends=True)
    settings.write_text(
        "".join(line for line in lines if not line.startswith("docs_dir:")), encoding="utf-8"
    )
    (project / "site" / "docs").rename(project / "docs")
    (project / "site").rmdir()
    return project


def test_pages_in_docs_are_composed_when_mkdocs_yml_names_no_docs_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _without_docs_dir(tmp_path / "project")
    monkeypatch.chdir(project)
    assert main(["build"]) == 0
    assert (project / "build" / "docs" / "guides" / "hello.md").is_file()
    assert (project / "build" / "site" / "guides" / "hello" / "index.html").is_file()


def test_a_failed_strict_build_prints_the_warnings_that_failed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _without_docs_dir(tmp_path / "project")
    (project / "docs" / "guides" / "broken.md").write_text(
        "# Broken\n\nSee [the missing page](missing.md).\n", encoding="utf-8"
    )
    monkeypatch.chdir(project)
    assert main(["build"]) == 1  # a finding in the docs, as `errcat check` reports one
    err = capsys.readouterr().err
    assert "Aborted with 1 warnings in strict mode" in err
    assert "WARNING  Doc file 'guides/broken.md' contains a link 'missing.md'" in err
    assert not (project / "build" / "site").exists()
