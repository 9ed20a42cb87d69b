"""`errcat build --out DIR` replaces only what errcat published there: an existing folder, a file,
someone else's link, the project root or a folder holding it are refused (exit 2) before
anything is built or locked, and a version that could not be published is not left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import file_digests
from test_build_project import ACTIVE_ID, make_project

import catalog.publish.build
from catalog.cli import main
from catalog.core.config import load_config
from catalog.publish.build import OutputRefused, build_site, check_out, published_by_errcat


def _siblings(out: Path) -> list[str]:
    return sorted(path.name for path in out.parent.iterdir())


def test_a_folder_with_files_at_out_is_refused_and_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real folder at --out keeps its files and its name: exit 2, a message, nothing built."""
    root = make_project(tmp_path / "project")
    out = tmp_path / "public"
    (out / "deep").mkdir(parents=True)
    (out / "index.html").write_text("my own site\n", encoding="utf-8")
    (out / "deep" / "notes.txt").write_text("keep me\n", encoding="utf-8")
    before = file_digests(out)
    monkeypatch.chdir(root)
    assert main(["build", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "is an existing folder errcat did not publish" in err
    assert "choose another --out" in err and "Traceback" not in err
    assert not out.is_symlink() and file_digests(out) == before
    assert _siblings(out) == ["project", "public"]
    assert not (root / "build").exists() and not (root / ".errcat-cache").exists()


def test_an_empty_folder_at_out_is_refused_with_how_to_proceed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty folder is refused too, and the message says to remove it or choose another."""
    root = make_project(tmp_path)
    (root / "public").mkdir()
    monkeypatch.chdir(root)
    assert main(["build", "--out", "public"]) == 2
    err = capsys.readouterr().err
    assert "empty" in err and "rmdir" in err and "choose another --out" in err
    assert (root / "public").is_dir() and not (root / "public").is_symlink()
    assert not (root / "build").exists()


@pytest.mark.parametrize("given", [".", "..", "../.."])
def test_out_at_or_above_the_project_root_is_refused(
    given: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--out .` from the project root (or a folder above it) would move the checkout: refused
    before anything is written, every file of the project still where it was."""
    root = make_project(tmp_path / "outer" / "project")
    before = file_digests(tmp_path)
    monkeypatch.chdir(root)
    assert main(["build", "--out", given]) == 2
    err = capsys.readouterr().err
    assert "would move the project itself" in err and "Traceback" not in err
    assert file_digests(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outer"]
    assert sorted(p.name for p in (tmp_path / "outer").iterdir()) == ["project"]


def test_a_symlink_to_the_project_root_is_refused(tmp_path: Path) -> None:
    """A link naming the project (or a folder above it) is judged by where it leads."""
    root = make_project(tmp_path / "project")
    link = tmp_path / "alias"
    link.symlink_to(root, target_is_directory=True)
    with pytest.raises(OutputRefused, match="is the project root"):
        check_out(link, root, root / "build")
    with pytest.raises(OutputRefused, match="a folder holding the project"):
        check_out(tmp_path, root, root / "build")


def test_out_inside_the_compose_folder_is_refused(tmp_path: Path) -> None:
    """build/docs is emptied of what errcat did not put there on every build: no --out there."""
    root = make_project(tmp_path)
    with pytest.raises(OutputRefused, match="overlaps the compose folder"):
        check_out(root / "build" / "docs" / "site", root, root / "build")
    with pytest.raises(OutputRefused, match="overlaps the compose folder"):
        check_out(root / "build", root, root / "build")
    check_out(root / "build" / "site", root, root / "build")  # the default is fine


def test_a_link_errcat_did_not_make_is_refused(tmp_path: Path) -> None:
    """Someone's symlink at --out is kept: only links to a version beside them are errcat's."""
    root = make_project(tmp_path / "project")
    elsewhere = tmp_path / "www"
    elsewhere.mkdir()
    out = root / "public"
    out.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutputRefused, match="symbolic link errcat did not make"):
        build_site(load_config(root), out)
    assert out.is_symlink() and os.readlink(out) == str(elsewhere)
    assert not (root / "build").exists()
    lookalike = tmp_path / "site"
    lookalike.symlink_to("other-20260101T000000-1", target_is_directory=True)
    assert not published_by_errcat(lookalike)
    partial = tmp_path / "partial"
    partial.symlink_to("partial-20260101T000000-1.partial", target_is_directory=True)
    assert not published_by_errcat(partial)


def test_rebuilding_onto_errcats_own_link_works(tmp_path: Path) -> None:
    """The link a build published is replaced by the next build, as before."""
    root = make_project(tmp_path)
    out = tmp_path / "public" / "site"
    first = build_site(load_config(root), out)
    assert published_by_errcat(out)
    second = build_site(load_config(root), out)
    assert out.resolve() == second.version != first.version
    assert (out / "errors" / ACTIVE_ID / "index.html").is_file()
    assert sorted(p.name for p in out.parent.glob("site-*")) == sorted(
        [first.version.name, second.version.name]
    )


def test_a_file_at_out_is_refused_before_any_version_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain file at --out: exit 2 with a message, the file unchanged, and no version folder
    beside it (each attempt used to leave a whole site that nothing ever pruned)."""
    root = make_project(tmp_path)
    out = root / "site.txt"
    out.write_text("notes\n", encoding="utf-8")
    monkeypatch.chdir(root)
    for _ in range(2):
        assert main(["build", "--out", "site.txt"]) == 2
        err = capsys.readouterr().err
        assert "exists and is not a folder" in err and "Traceback" not in err
    assert out.read_text(encoding="utf-8") == "notes\n"
    assert not list(root.glob("site.txt-*")) and not (root / "build").exists()


def test_a_version_that_cannot_be_published_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder put at --out while the build ran (after the up-front check) is left alone, and
    the finished version that could not take its place is removed rather than left unpruned."""
    root = make_project(tmp_path)
    out = root / "public"
    real_run = catalog.publish.build.run_mkdocs

    def run_then_occupy(*args: object, **kwargs: object) -> None:
        real_run(*args, **kwargs)  # type: ignore[arg-type]
        out.mkdir()
        (out / "theirs.txt").write_text("theirs\n", encoding="utf-8")

    monkeypatch.setattr(catalog.publish.build, "run_mkdocs", run_then_occupy)
    with pytest.raises(OutputRefused, match="existing folder errcat did not publish"):
        build_site(load_config(root), out)
    assert (out / "theirs.txt").read_text(encoding="utf-8") == "theirs\n"
    assert not list(root.glob("public-*")) and not list(root.glob(".public.*"))
