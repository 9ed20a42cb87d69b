"""The API files written by a forked process while MkDocs builds the pages
(`catalog.publish.api_beside`): the same site as writing them afterwards, a failure on either
side reported with nothing published and nothing left behind, and the files of the API
replacing what MkDocs wrote at the same paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import file_digests, write_files
from test_build_project import make_project

from catalog.core.config import load_config
from catalog.pages import api
from catalog.publish import api_beside, build
from catalog.publish.api_beside import ApiBeside
from catalog.publish.build import BuildError, build_site


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the forked child. Under pytest-xdist the test process also runs
    execnet's I/O thread, where `start` (rightly) forks nothing; the build's own process, the
    command line's, has one thread, and so the tests see it."""
    monkeypatch.setattr(api_beside, "other_threads", lambda: False)


def _leftovers(out: Path) -> list[str]:
    """What a build may leave beside the published site but should not."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.endswith((".api", build.PARTIAL)))


def _published(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project built once: its root, its `build/site` and the version that holds."""
    root = make_project(tmp_path / "widgets")
    out = root / "build" / "site"
    return root, out, build_site(load_config(root), out).version


def test_a_build_writes_its_api_in_another_process_and_the_site_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path / "widgets")
    original = api_beside.write_api

    def recorded(*args: object, **kwargs: object) -> None:
        # In the child this list is the child's copy: the pid goes to a file instead.
        (tmp_path / f"writer-{os.getpid()}").touch()
        original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(api_beside, "write_api", recorded)
    beside = build_site(load_config(root), tmp_path / "beside" / "site").version
    writers = [int(p.name.split("-")[1]) for p in tmp_path.glob("writer-*")]
    assert writers and os.getpid() not in writers
    for path in tmp_path.glob("writer-*"):
        path.unlink()
    monkeypatch.setattr(ApiBeside, "start", lambda self: None)
    after = build_site(load_config(root), tmp_path / "after" / "site").version
    assert [p.name for p in tmp_path.glob("writer-*")] == [f"writer-{os.getpid()}"]
    assert file_digests(beside) == file_digests(after)
    assert any(path.startswith("api/errors/") for path in file_digests(beside))
    assert _leftovers(tmp_path / "beside" / "site") == []


def test_an_api_that_cannot_be_written_fails_the_build_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out, first = _published(tmp_path)
    published = file_digests(out.resolve())

    def failing(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(api_beside, "write_api", failing)
    with pytest.raises(BuildError, match=r"API files could not be written.*No space left"):
        build_site(load_config(root), out)
    assert out.resolve() == first and file_digests(out.resolve()) == published
    assert _leftovers(out) == []


def test_a_failed_mkdocs_stops_the_api_process_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out, first = _published(tmp_path)
    started: list[ApiBeside] = []
    start = ApiBeside.start

    def watched(self: ApiBeside) -> None:
        start(self)
        started.append(self)

    def stopped(*args: object, **kwargs: object) -> None:
        raise BuildError("mkdocs stopped: a test said so")

    monkeypatch.setattr(ApiBeside, "start", watched)
    monkeypatch.setattr(build, "run_mkdocs", stopped)
    with pytest.raises(BuildError, match="a test said so"):
        build_site(load_config(root), out)
    assert started and started[0]._child is None  # waited for
    assert out.resolve() == first and _leftovers(out) == []


def test_files_of_the_api_replace_what_mkdocs_wrote_at_their_paths(tmp_path: Path) -> None:
    site, staging = tmp_path / "site", tmp_path / "staging"
    write_files(
        site,
        {"api/errors/a.json": "mkdocs's\n", "api/notes.txt": "kept\n", "index.html": "page\n"},
    )
    (site / "api" / "linked").symlink_to(site / "api")
    beside = ApiBeside(site, staging, {}, previous=None, cache=None)
    staging.mkdir()
    api.write_api(staging, {"api/errors/a.json": {"id": "a"}, "api/linked": {"x": 1}})
    api_beside._move_into(staging, site)
    assert api.dumps({"id": "a"}) == (site / "api" / "errors" / "a.json").read_text("utf-8")
    assert (site / "api" / "notes.txt").read_text("utf-8") == "kept\n"
    assert not (site / "api" / "linked").is_symlink()  # a link is replaced, not followed
    assert (site / "index.html").read_text("utf-8") == "page\n"
    assert (site / "api" / "openapi.json").is_file()  # the OpenAPI description came along
    assert beside._child is None and not any(staging.iterdir())


def test_prune_retires_the_api_folder_of_a_killed_build(tmp_path: Path) -> None:
    out = tmp_path / "build" / "site"
    out.parent.mkdir(parents=True)
    dead = out.with_name(f".{out.name}.{2**22 + 12345}.api")  # no such pid on Linux
    alive = out.with_name(f".{out.name}.{os.getppid()}.api")
    for folder in (dead, alive):
        write_files(folder, {"api/errors/a.json": "{}\n"})
    build.prune(out, set())
    assert not dead.exists() and alive.exists()


def test_an_api_file_where_mkdocs_wrote_a_folder_is_a_clear_failure(tmp_path: Path) -> None:
    site, staging = tmp_path / "site", tmp_path / "staging"
    write_files(site, {"api/errors/a.json/index.html": "a page of the docs\n"})
    beside = ApiBeside(site, staging, {"api/errors/a.json": {"id": "a"}}, previous=None, cache=None)
    beside.start()
    assert beside._child is not None  # written by the child, failing when moved in
    with pytest.raises(api_beside.ApiWriteFailed, match="moving them into"):
        beside.finish()
    assert not staging.exists()
    assert (site / "api" / "errors" / "a.json" / "index.html").is_file()


def test_no_child_is_forked_while_other_threads_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With another thread running, the files are written after MkDocs, in the build's own
    process: a fork could copy a lock that thread holds."""
    monkeypatch.setattr(api_beside, "other_threads", lambda: True)
    site, staging = tmp_path / "site", tmp_path / "staging"
    beside = ApiBeside(site, staging, {"api/errors/a.json": {"id": "a"}}, previous=None, cache=None)
    beside.start()
    assert beside._child is None and not staging.exists()
