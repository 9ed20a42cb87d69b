"""`extractor.printed_cache`: what reading sites through factories gave, kept while the
package's files stay as they were, and read afresh as soon as one changes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from extractor import scan_paths
from extractor.model import ScanReport
from extractor.printed import read_printed
from extractor.printed_cache import read_printed_cached

FILES = {
    "pkg/__init__.py": "",
    "pkg/errors.py": """
        def make_exc(name):
            return ValueError(f"no such field: {name}")
        """,
    "pkg/main.py": """
        from pkg.errors import make_exc

        def get(name):
            raise make_exc(name)
        """,
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")


def _scan(root: Path, cache: Path) -> ScanReport:
    return scan_paths([root / "pkg"], cwd=root, cache_dir=cache)


def _printed(report: ScanReport) -> list[str | None]:
    return [site.printed for site in report.sites if site.path == "pkg/main.py"]


def test_an_unchanged_package_is_answered_without_reading_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, FILES)
    cache = tmp_path / ".errcat-cache"
    first = read_printed_cached(_scan(tmp_path, cache), cwd=tmp_path, cache_dir=cache)
    assert _printed(first) == ["no such field: {name}"]
    fresh = read_printed(_scan(tmp_path, cache), cwd=tmp_path, cache_dir=cache)
    assert first.results == fresh.results

    def refuse(*args: object, **kwargs: object) -> ScanReport:
        raise AssertionError("the sites were read again although no file changed")

    monkeypatch.setattr("extractor.printed.read_printed", refuse)
    again = read_printed_cached(_scan(tmp_path, cache), cwd=tmp_path, cache_dir=cache)
    assert again.results == first.results


def test_a_changed_factory_is_read_afresh(tmp_path: Path) -> None:
    """The factory's file changes, not the raise's: the site's text follows it."""
    _write(tmp_path, FILES)
    cache = tmp_path / ".errcat-cache"
    read_printed_cached(_scan(tmp_path, cache), cwd=tmp_path, cache_dir=cache)
    errors = tmp_path / "pkg" / "errors.py"
    errors.write_text(
        'def make_exc(name):\n    return ValueError(f"unknown field {name!r}")\n', encoding="utf-8"
    )
    # The same size and time as before would hide the edit from the key: move the time on.
    stat = errors.stat()
    os.utime(errors, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    read = read_printed_cached(_scan(tmp_path, cache), cwd=tmp_path, cache_dir=cache)
    assert _printed(read) == ["unknown field {name!r}"]


def test_a_warm_answer_imports_neither_the_reader_nor_libcst(tmp_path: Path) -> None:
    _write(tmp_path, FILES)
    cache = tmp_path / ".errcat-cache"
    read_printed_cached(_scan(tmp_path, cache), cwd=tmp_path, cache_dir=cache)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from extractor import scan_paths\n"
        "from extractor.printed_cache import read_printed_cached\n"
        f"root = Path({str(tmp_path)!r})\n"
        "cache = root / '.errcat-cache'\n"
        "report = scan_paths([root / 'pkg'], cwd=root, cache_dir=cache)\n"
        "read = read_printed_cached(report, cwd=root, cache_dir=cache)\n"
        "assert [s.printed for s in read.sites if s.printed], read\n"
        "print(sorted(m for m in ('libcst', 'extractor.printed') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
