"""`[tool.errcat] max_file_size`: a file over it is a scan failure and is never parsed, so a
generated data table cannot take gigabytes; the other files are scanned as before. Also the
fast path for files without the word `raise`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import extractor.extract
from catalog.cli import main
from catalog.core.config import ConfigError, load_config
from catalog.core.project import scan_package
from extractor import extract_source, scan_paths
from extractor.scan import DEFAULT_MAX_FILE_SIZE

SMALL = "def f(n):\n    raise ValueError(f'bad {n}')\n"
BIG = "TABLE = [\n" + "    (1, 2, 3),\n" * 40 + "]\nraise KeyError('k')\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "small.py").write_text(SMALL, encoding="utf-8")
    (tmp_path / "pkg" / "table.py").write_text(BIG, encoding="utf-8")
    return tmp_path


def test_a_file_over_the_limit_is_reported_and_skipped(files: Path) -> None:
    size = len(BIG.encode())
    limit = size - 1
    for cache_dir in (None, files / "cache", files / "cache"):
        report = scan_paths(["pkg"], cwd=files, max_file_size=limit, cache_dir=cache_dir)
        assert [str(failure) for failure in report.failures] == [
            f"pkg/table.py:1:1: file is {size:,} bytes, over max_file_size {limit:,}; skipped"
        ]
        assert [(s.path, s.exception) for s in report.sites] == [("pkg/small.py", "ValueError")]
        assert len(report.results) == 2
    # A file exactly at the limit is scanned.
    report = scan_paths(["pkg"], cwd=files, max_file_size=size)
    assert report.failures == []
    assert [s.exception for s in report.sites] == ["ValueError", "KeyError"]


def test_an_oversized_file_is_never_read(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read = Path.read_bytes

    def refuse_the_table(path: Path) -> bytes:
        assert path.name != "table.py", "the oversized file was read"
        return read(path)

    monkeypatch.setattr(Path, "read_bytes", refuse_the_table)
    report = scan_paths(["pkg"], cwd=files, max_file_size=100)
    assert [failure.path for failure in report.failures] == ["pkg/table.py"]


def test_the_default_limit_and_no_limit(tmp_path: Path) -> None:
    assert 1_000_000 <= DEFAULT_MAX_FILE_SIZE <= 10_000_000
    # Comments parse quickly, so a file just over the default costs little with no limit.
    data = b"#" * DEFAULT_MAX_FILE_SIZE + b"\nraise KeyError(1)\n"
    (tmp_path / "big.py").write_bytes(data)
    report = scan_paths(["big.py"], cwd=tmp_path)
    assert [f.message for f in report.failures] == [
        f"file is {len(data):,} bytes, over max_file_size {DEFAULT_MAX_FILE_SIZE:,}; skipped"
    ]
    report = scan_paths(["big.py"], cwd=tmp_path, max_file_size=None)
    assert report.failures == [] and [s.line for s in report.sites] == [2]


@pytest.fixture
def project(files: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (files / "pyproject.toml").write_text(
        '[tool.errcat]\npackage = "pkg"\ncatalog = "errors"\ngenerated = "pkg/errors.py"\n'
        "max_file_size = 200\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(files)
    return files


def test_the_scan_command_takes_the_configured_limit(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    size = len(BIG.encode())
    line = f"pkg/table.py:1:1: file is {size:,} bytes, over max_file_size 200; skipped"
    assert main(["scan", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == line + "\n"
    document = json.loads(captured.out)
    assert [s["path"] for s in document["sites"]] == ["pkg/small.py"]
    assert [f["path"] for f in document["failures"]] == ["pkg/table.py"]
    assert main(["scan", "--strict"]) == 1
    assert "2 files: 1 ok, 1 failed; 1 raise site" in capsys.readouterr().out


def test_the_project_scan_takes_the_configured_limit(project: Path) -> None:
    """`check`, `build`, `stats`, `new` and `migrate` scan through `scan_package`: the limit
    of pyproject.toml holds there too, not only for `errcat scan`."""
    failed = [r for r in scan_package(load_config()).results if r.failure is not None]
    assert [r.path for r in failed] == ["pkg/table.py"]
    assert failed[0].failure is not None
    assert "over max_file_size 200" in failed[0].failure.message


def test_config_reads_the_limit(project: Path) -> None:
    assert load_config().max_file_size == 200
    (project / "pyproject.toml").write_text('[tool.errcat]\npackage = "pkg"\n', encoding="utf-8")
    assert load_config().max_file_size == DEFAULT_MAX_FILE_SIZE
    (project / "pyproject.toml").write_text(
        '[tool.errcat]\npackage = "pkg"\nmax_file_size = 4_000_000\n', encoding="utf-8"
    )
    assert load_config().max_file_size == 4_000_000


@pytest.mark.parametrize(
    ("value", "shown"),
    [("0", "0"), ("-1", "-1"), ("true", "True"), ('"2MB"', "'2MB'"), ("1.5", "1.5")],
)
def test_a_bad_limit_is_a_config_error(
    project: Path, capsys: pytest.CaptureFixture[str], value: str, shown: str
) -> None:
    (project / "pyproject.toml").write_text(
        f'[tool.errcat]\npackage = "pkg"\nmax_file_size = {value}\n', encoding="utf-8"
    )
    message = (
        f"{project / 'pyproject.toml'}: [tool.errcat] max_file_size has value {shown}; "
        "expected a whole number of bytes >= 1 (for example 2_000_000)"
    )
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert str(raised.value) == message
    for argv in (["scan"], ["check"]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.err == f"errcat: {message}\n"
        assert "Traceback" not in captured.err
    assert not (project / ".errcat-cache").exists()


def test_files_without_the_word_raise_skip_the_outline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Such a file cannot hold a raise statement; its result is the same without the walk."""

    def no_outline(*args: object) -> None:
        raise AssertionError("outline() ran on a file without `raise`")

    monkeypatch.setattr(extractor.extract, "outline", no_outline)
    result = extract_source("def make(n):\n    return ValueError(n)\n", "m.py")
    assert result.ok and result.sites == ()
    # It is still parsed: a file that does not parse is still a failure.
    broken = extract_source("def (\n", "broken.py")
    assert broken.failure is not None and broken.failure.message.startswith("cannot parse")
    monkeypatch.undo()
    found = extract_source("def f():\n    raise ValueError('x')\n", "m.py")
    assert [site.exception for site in found.sites] == ["ValueError"]
