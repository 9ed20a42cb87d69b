"""A folder that is not a project, a package folder that is not there, a path that does not exist
and a file name that is not UTF-8: each is one line on stderr (or one scan failure), never a
traceback, and a command refused for its folder writes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.core.config import find_root
from extractor import scan_paths

PACKAGE_COMMANDS = [
    ["build"],
    ["check"],
    ["stats"],
    ["scan"],
    ["new"],
    ["migrate"],
    ["codegen"],
    ["new", "--dry-run"],
    ["codegen", "--check"],
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def everything_under(folder: Path) -> list[str]:
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*"))


@pytest.fixture
def empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty current folder with no pyproject.toml at or above it."""
    folder = tmp_path / "np"
    folder.mkdir()
    if find_root(folder) is not None:
        pytest.skip(f"a pyproject.toml above {folder} makes it part of a project")
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("argv", PACKAGE_COMMANDS, ids=" ".join)
def test_outside_a_project_each_command_says_so_and_writes_nothing(
    empty: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert "Traceback" not in err and out == ""
    assert err.count("\n") == 1, err
    # No `package` default names a folder: the package is looked for as `errcat init` does.
    assert err.startswith(f"errcat {argv[0]}: no package found in {empty} (a folder with ")
    assert f"no pyproject.toml in {empty} or above it" in err
    assert "errcat init" in err
    assert everything_under(empty) == []


def test_scan_names_its_own_way_out_too(empty: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "scan", "--json")
    assert err.rstrip().endswith(", or pass PATH")


def test_explain_outside_a_project_names_the_missing_catalog(
    empty: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "explain", "borrow_torch_tensors")
    assert (code, out) == (2, "")
    assert err.startswith(f"errcat explain: no catalog folder {empty / 'catalog' / 'errors'} and ")
    assert "Traceback" not in err and err.count("\n") == 1
    assert everything_under(empty) == []


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose pyproject.toml names a package folder `gone` that does not exist."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "1"\n\n'
        '[tool.errcat]\npackage = "gone"\ncatalog = "errors"\ngenerated = "gone/errors.py"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("argv", PACKAGE_COMMANDS, ids=" ".join)
def test_a_configured_package_that_is_not_there(
    configured: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert "Traceback" not in err and err.count("\n") == 1
    expected = (
        f"errcat {argv[0]}: no package folder {configured / 'gone'}; set [tool.errcat] package "
        f"in {configured / 'pyproject.toml'} to the folder to scan, or run errcat init"
    )
    assert err.rstrip().removesuffix(", or pass PATH") == expected
    assert everything_under(configured) == ["pyproject.toml"]


def test_a_package_that_is_a_file(configured: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (configured / "gone").write_text("", encoding="utf-8")
    code, _, err = run(capsys, "check")
    assert code == 2
    assert err.startswith(f"errcat check: the package {configured / 'gone'} is not a folder; ")
    assert everything_under(configured) == ["gone", "pyproject.toml"]


def test_explain_with_a_configured_catalog_that_is_not_there(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (configured / "gone").mkdir()
    code, _, err = run(capsys, "explain", "-")
    assert code == 2
    assert err == (
        f"errcat explain: no catalog folder {configured / 'errors'}; set [tool.errcat] catalog "
        f"in {configured / 'pyproject.toml'} to the YAML files' folder, or run errcat new\n"
    )
    assert everything_under(configured) == ["gone", "pyproject.toml"]


def test_a_bad_pyproject_is_still_reported_by_the_command(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The folder check steps aside for an unreadable configuration: the command's own report
    (exit 2, one line) is the one a user sees, as before."""
    (configured / "pyproject.toml").write_text("[tool.errcat\n", encoding="utf-8")
    code, _, err = run(capsys, "build")
    assert code == 2
    assert err.startswith("errcat build: ") and "cannot read the configuration" in err
    assert "Traceback" not in err


def test_scan_of_a_path_needs_no_project(empty: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (empty / "a.py").write_text("raise ValueError('a')\n", encoding="utf-8")
    code, out, err = run(capsys, "scan", "--json", "--no-cache", "a.py")
    assert (code, err) == (0, "")
    assert [site["path"] for site in json.loads(out)["sites"]] == ["a.py"]


def test_scan_of_a_missing_path(empty: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "scan", "missing/b.py")
    assert (code, out, err) == (2, "", "errcat scan: missing/b.py: no such file or folder\n")
    assert everything_under(empty) == []


def test_init_still_makes_a_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert 'package = "demo"' in (tmp_path / "pyproject.toml").read_text(encoding="utf-8")


def _write_bytes_name(path: bytes, data: bytes) -> None:
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as exc:  # file systems that only store UTF-8 names (APFS)
        pytest.skip(f"cannot create a non-UTF-8 file name here: {exc}")


@pytest.fixture
def misnamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose package holds `a.py` (one raise) and `\\xff.py`, a name not in UTF-8."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.errcat]\npackage = "pkg"\ncatalog = "errors"\ngenerated = "pkg/errors.py"\n',
        encoding="utf-8",
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("raise ValueError('a')\n", encoding="utf-8")
    _write_bytes_name(os.fsencode(tmp_path / "pkg") + b"/\xff.py", b"raise KeyError(1)\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


FAILURE = "pkg/\\xff.py:1:1: file name is not valid UTF-8; rename it"


@pytest.mark.parametrize("cache", [[], ["--no-cache"]], ids=["cache", "no-cache"])
def test_a_non_utf8_file_name_is_a_scan_failure(
    misnamed: Path, capsys: pytest.CaptureFixture[str], cache: list[str]
) -> None:
    code, out, err = run(capsys, "scan", "--json", *cache)
    assert code == 0
    assert err == FAILURE + "\n"
    document = json.loads(out)
    assert document["files"] == 2
    assert [(s["path"], s["exception"]) for s in document["sites"]] == [("pkg/a.py", "ValueError")]
    assert document["failures"] == [
        {
            "path": "pkg/\\xff.py",
            "line": 1,
            "column": 1,
            "message": "file name is not valid UTF-8; rename it",
        }
    ]
    code, out, err = run(capsys, "scan", "--strict", *cache)
    assert code == 1 and FAILURE in err and "Traceback" not in err
    assert "1 ok, 1 failed; 1 raise site" in out


def test_check_stats_and_build_take_it_as_an_unscannable_file(
    misnamed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "check")
    assert code == 1
    assert "Traceback" not in err
    assert "pkg/\\xff.py:1:1: cannot scan: file name is not valid UTF-8; rename it" in out
    code, out, err = run(capsys, "stats")
    assert (code, err) == (0, "")
    assert "raise sites catalogued: 0/1" in out
    code, out, err = run(capsys, "build", "--out", str(misnamed / "site"))
    assert code == 0, err
    assert "Traceback" not in err
    assert (misnamed / "site" / "index.html").is_file()


def test_a_non_utf8_folder_name_fails_each_file_below_it(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path) + b"/pkg/\xfe"
    try:
        os.makedirs(folder)
    except OSError as exc:
        pytest.skip(f"cannot create a non-UTF-8 folder name here: {exc}")
    _write_bytes_name(folder + b"/b.py", b"raise KeyError(1)\n")
    _write_bytes_name(folder + b"/c.py", b"raise KeyError(2)\n")
    (tmp_path / "pkg" / "ok.py").write_text("raise ValueError('a')\n", encoding="utf-8")
    report = scan_paths(["pkg"], cwd=tmp_path, cache_dir=tmp_path / "cache")
    assert [str(failure) for failure in report.failures] == [
        "pkg/\\xfe/b.py:1:1: folder name is not valid UTF-8; rename it",
        "pkg/\\xfe/c.py:1:1: folder name is not valid UTF-8; rename it",
    ]
    assert [site.path for site in report.sites] == ["pkg/ok.py"]
