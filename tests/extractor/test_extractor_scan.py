"""Scanning files: bad input, the cache, globs, parallel work and the `errcat scan` command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import extractor.cache
from catalog.cli import main
from extractor import PathError, scan_paths
from extractor.cache import Cache
from extractor.jobs import auto_jobs, available_cpus
from extractor.model import RaiseSite

SITE_KEYS = [
    "path",
    "line",
    "column",
    "exception",
    "qualified_name",
    "template",
    "function",
    "reraise",
    "cause",
    "ignored",
    "entry",
]
FAILURE_KEYS = ["path", "line", "column", "message"]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose package `pkg` holds two good modules; the current directory is its root."""
    write(
        tmp_path / "pyproject.toml",
        '[tool.errcat]\npackage = "pkg"\nexclude = ["vendor/**"]\n',
    )
    write(tmp_path / "pkg/__init__.py", "")
    write(
        tmp_path / "pkg/pool.py",
        """
        from .errors import PoolClosed

        class Pool:
            def take(self, n):
                if n < 0:
                    raise ValueError(f"n must be >= 0, got {n}")
                raise PoolClosed(name=self.name)
        """,
    )
    write(tmp_path / "pkg/sub/io.py", 'raise OSError("disk")\n')
    write(tmp_path / "pkg/vendor/skip.py", 'raise ValueError("vendored")\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["scan", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


BAD_INPUTS = [
    ("syntax.py", b"def f(:\n    raise ValueError('x')\n", 1, "cannot parse"),
    ("undecodable.py", b"x = 1\ny = '\xff\xfe'\n", 2, "cannot decode as utf-8"),
    ("newer.py", b"type Alias = list[int]\nraise ValueError('x')\n", 1, "cannot parse"),
    ("nul.py", b"x = 1\x00\n", 1, "cannot parse"),
    ("cookie.py", b"# -*- coding: klingon -*-\nx = 1\n", 1, "unknown encoding"),
]


@pytest.mark.parametrize(("name", "data", "line", "message"), BAD_INPUTS)
def test_bad_input_is_one_failure_record(
    tmp_path: Path, name: str, data: bytes, line: int, message: str
) -> None:
    """A file that cannot be scanned is one failure record with a position, not an exception."""
    write(tmp_path / name, data)
    write(tmp_path / "good.py", 'raise KeyError("k")\n')
    report = scan_paths([tmp_path], cwd=tmp_path)
    assert [result.path for result in report.results] == sorted([name, "good.py"])
    (failure,) = report.failures
    assert (failure.path, failure.line) == (name, line)
    assert message in failure.message
    assert "\n" not in failure.message
    assert [site.path for site in report.sites] == ["good.py"]


def test_empty_file_is_ok_with_no_sites(tmp_path: Path) -> None:
    """An empty file scans fine and has no sites."""
    write(tmp_path / "empty.py", b"")
    write(tmp_path / "blank.py", b"\n\n   \n")
    report = scan_paths([tmp_path], cwd=tmp_path)
    assert [(r.path, r.ok, r.sites) for r in report.results] == [
        ("blank.py", True, ()),
        ("empty.py", True, ()),
    ]


def test_encodings_follow_python(tmp_path: Path) -> None:
    """A BOM or a coding cookie decides the encoding, as for Python itself."""
    write(tmp_path / "bom.py", b"\xef\xbb\xbfraise ValueError('bom')\n")
    write(tmp_path / "latin.py", "# coding: latin-1\nraise ValueError('é')\n".encode("latin-1"))
    report = scan_paths([tmp_path], cwd=tmp_path)
    assert not report.failures
    assert [(s.template, s.column) for s in report.sites] == [("bom", 1), ("é", 1)]


def test_symlink_loops_and_broken_links_are_failures(tmp_path: Path) -> None:
    """A folder link back up, a link to itself and a dangling link each give one failure."""
    write(tmp_path / "pkg/ok.py", 'raise ValueError("ok")\n')
    (tmp_path / "pkg/loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg/self.py").symlink_to(tmp_path / "pkg/self.py")
    (tmp_path / "pkg/dangling.py").symlink_to(tmp_path / "pkg/missing.py")
    report = scan_paths([tmp_path / "pkg"], cwd=tmp_path)
    failures = {failure.path: failure.message for failure in report.failures}
    assert set(failures) == {"pkg/loop", "pkg/self.py", "pkg/dangling.py"}
    assert "symlink loop" in failures["pkg/loop"]
    assert failures["pkg/self.py"].startswith("cannot read")
    assert [site.path for site in report.sites] == ["pkg/ok.py"]


def test_unreadable_file_is_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that cannot be read (here: permission denied, even for root) is a failure record."""
    secret = write(tmp_path / "secret.py", 'raise ValueError("x")\n')
    write(tmp_path / "open.py", 'raise ValueError("y")\n')
    read_bytes = Path.read_bytes

    def deny(path: Path) -> bytes:
        if path.name == secret.name:
            raise PermissionError(13, "Permission denied", str(path))
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", deny)
    report = scan_paths([tmp_path], cwd=tmp_path)
    assert [(f.path, f.message) for f in report.failures] == [
        ("secret.py", "cannot read: Permission denied")
    ]
    assert [site.path for site in report.sites] == ["open.py"]


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    """A path that does not exist raises PathError (exit 2 in the command)."""
    with pytest.raises(PathError, match=r"nope\.py: no such file or folder"):
        scan_paths([tmp_path / "nope.py"], cwd=tmp_path)


def test_include_and_exclude_globs(tmp_path: Path) -> None:
    """Folders inside the base take its globs; `**` spans folders; excludes win."""
    for name in ("a.py", "deep/b.py", "deep/test_b.py", "vendor/c.py", "notes.txt", "x/y/z.py"):
        write(tmp_path / "pkg" / name, "raise KeyError\n")
    write(tmp_path / "pkg/.hidden/h.py", "raise KeyError\n")
    report = scan_paths(
        [tmp_path / "pkg"],
        base=tmp_path / "pkg",
        include=["**/*.py", "*.txt"],
        exclude=["vendor/**", "**/test_*.py", "x/*/z.py"],
        cwd=tmp_path,
    )
    assert [result.path for result in report.results] == [
        "pkg/a.py",
        "pkg/deep/b.py",
        "pkg/notes.txt",
    ]


def test_explicit_files_are_scanned_as_given(tmp_path: Path) -> None:
    """A file named on the command line is scanned even when no glob would pick it."""
    write(tmp_path / "script", "raise KeyError\n")
    report = scan_paths([tmp_path / "script", tmp_path / "script"], cwd=tmp_path)
    assert [result.path for result in report.results] == ["script"]


def test_cache_hits_misses_and_content_invalidation(tmp_path: Path) -> None:
    """An unchanged file is served from the cache; a changed one is parsed again."""
    for index in range(3):
        write(tmp_path / f"src/m{index}.py", f'raise ValueError("m{index}")\n')
    cache_dir = tmp_path / "cache"
    first = scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    assert (first.cache_hits, first.cache_misses) == (0, 3)
    second = scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    assert (second.cache_hits, second.cache_misses) == (3, 0)
    assert second.results == first.results
    write(tmp_path / "src/m1.py", 'raise ValueError("changed")\n')
    third = scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    assert (third.cache_hits, third.cache_misses) == (2, 1)
    assert [site.template for site in third.sites] == ["m0", "changed", "m2"]


def test_cache_keeps_context_keywords_and_failures(tmp_path: Path) -> None:
    """A cached result equals a fresh one in every field, failures included."""
    write(
        tmp_path / "src/typed.py",
        "def f(o):\n    raise E(devices=d, **o)  # errcat: ignore[x]\n"
        "def g():\n    err = E(a=1)\n    raise err\n",
    )
    write(tmp_path / "src/broken.py", "def (\n")
    cache_dir = tmp_path / "cache"
    fresh = scan_paths([tmp_path / "src"], cwd=tmp_path)
    scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    cached = scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    assert cached.cache_hits == 2
    assert cached.results == fresh.results


def test_cache_is_invalidated_by_extractor_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A different extractor version never reads results written by another."""
    write(tmp_path / "src/m.py", 'raise ValueError("m")\n')
    cache_dir = tmp_path / "cache"
    scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    assert scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path).cache_hits == 1
    monkeypatch.setattr(extractor.cache, "EXTRACTOR_VERSION", "upgraded")
    upgraded = scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    assert (upgraded.cache_hits, upgraded.cache_misses) == (0, 1)
    assert len(list(cache_dir.glob("scan-*"))) == 1, "the stale folder is removed"


def test_cache_key_includes_the_module(tmp_path: Path) -> None:
    """The same bytes in two packages resolve relative imports differently, so cache apart."""
    for package in ("one", "two"):
        write(tmp_path / package / "__init__.py", "")
        write(tmp_path / package / "m.py", "from .errors import E\nraise E\n")
    report = scan_paths([tmp_path], cache_dir=tmp_path / "cache", cwd=tmp_path)
    assert [site.qualified_name for site in report.sites] == ["one.errors.E", "two.errors.E"]
    assert report.cache_misses == 4


def test_corrupt_cache_entry_is_a_miss(tmp_path: Path) -> None:
    """An unreadable cache entry is parsed again rather than failing the scan."""
    write(tmp_path / "src/m.py", 'raise ValueError("m")\n')
    cache_dir = tmp_path / "cache"
    scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    (entry,) = [p for p in Cache(cache_dir).folder.iterdir() if not p.name.startswith(".")]
    entry.write_bytes(b"not marshal data")
    report = scan_paths([tmp_path / "src"], cache_dir=cache_dir, cwd=tmp_path)
    assert report.cache_misses == 1
    assert [site.template for site in report.sites] == ["m"]


def test_parallel_scan_equals_serial_scan(tmp_path: Path) -> None:
    """`jobs=2` (a process pool) gives exactly the result of `jobs=1`."""
    for index in range(12):
        body = "".join(
            f"def f{i}(x):\n    raise ValueError(f'{index}-{i} {{x!r}}') from None\n"
            for i in range(index + 1)
        )
        write(tmp_path / f"src/m{index:02}.py", body)
    write(tmp_path / "src/bad.py", "def (\n")
    serial = scan_paths([tmp_path / "src"], jobs=1, cwd=tmp_path)
    parallel = scan_paths([tmp_path / "src"], jobs=2, cwd=tmp_path)
    assert (serial.jobs, parallel.jobs) == (1, 2)
    assert parallel.results == serial.results


def test_small_scans_stay_in_one_process(tmp_path: Path) -> None:
    """By default a few small files are parsed here; a pool is only for large workloads."""
    write(tmp_path / "a.py", "raise KeyError\n")
    write(tmp_path / "b.py", "raise KeyError\n")
    assert scan_paths([tmp_path], cwd=tmp_path).jobs == 1
    assert auto_jobs(2, 10_000) == 1
    assert auto_jobs(400, 5_800_000) == min(available_cpus(), 11)


def _scan_imports_libcst(tmp_path: Path, source: str, runs: int) -> list[list[str]]:
    """Each run's cache hits and whether it loaded libcst, scanning `source` in a fresh process."""
    write(tmp_path / "src/m.py", source)
    code = (
        "import sys\nfrom pathlib import Path\nfrom extractor import scan_paths\n"
        f"r = scan_paths([Path({str(tmp_path / 'src')!r})], cache_dir=Path({str(tmp_path)!r}))\n"
        "print(r.cache_hits, 'libcst' in sys.modules)\n"
    )
    return [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(runs)
    ]


def test_warm_scan_does_not_import_libcst(tmp_path: Path) -> None:
    """A scan served entirely from the cache never loads libcst, even where the cold scan
    needed it (a `%` message)."""
    source = 'def f(x):\n    raise ValueError("bad %s" % x)\n'
    assert _scan_imports_libcst(tmp_path, source, 2) == [["0", "True"], ["1", "False"]]


def test_literal_and_fstring_messages_are_read_without_libcst(tmp_path: Path) -> None:
    """Literals and f-strings, also through a name assigned once or a module constant, are
    read from the source alone: a cold scan of only those never loads libcst."""
    source = (
        'LIMIT = "at most {n}"\n'
        "def f(x, n):\n"
        '    if x:\n        raise ValueError("m")\n'
        '    msg = f"bad {x!r:>{n}}"\n'
        "    if n:\n        raise ValueError(msg)\n"
        "    raise ValueError(LIMIT)\n"
    )
    assert _scan_imports_libcst(tmp_path, source, 1) == [["0", "False"]]


def test_extractor_never_imports_the_catalog() -> None:
    """The extractor package knows nothing of the catalog."""
    code = (
        "import sys, extractor, extractor.extract, extractor.scan\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'catalog'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_json_output_keys(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`errcat scan --json` writes exactly the contract's keys, in order, with null entries."""
    write(project / "pkg/broken.py", "def (\n")
    code, out, err = run_scan(capsys, "--json")
    assert code == 0
    document = json.loads(out)
    assert list(document) == ["files", "sites", "failures"]
    assert document["files"] == 4
    assert [list(site) for site in document["sites"]] == [SITE_KEYS] * 3
    assert [list(failure) for failure in document["failures"]] == [FAILURE_KEYS]
    assert document["sites"][0] == {
        "path": "pkg/pool.py",
        "line": 7,
        "column": 13,
        "exception": "ValueError",
        "qualified_name": "builtins.ValueError",
        "template": "n must be >= 0, got {n}",
        "function": "Pool.take",
        "reraise": False,
        "cause": None,
        "ignored": None,
        "entry": None,
    }
    assert document["sites"][1]["qualified_name"] == "pkg.errors.PoolClosed"
    assert document["sites"][2]["path"] == "pkg/sub/io.py"
    assert err.strip() == "pkg/broken.py:1:5: cannot parse: invalid syntax"


def test_json_paths_are_relative_to_the_current_directory(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Site paths are relative to where errcat runs, `/`-separated."""
    monkeypatch.chdir(project / "pkg" / "sub")
    code, out, _ = run_scan(capsys, "--json", ".", "../pool.py")
    assert code == 0
    assert [site["path"] for site in json.loads(out)["sites"]] == [
        "../pool.py",
        "../pool.py",
        "io.py",
    ]


def test_human_output_ends_with_a_count_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table lists `path:line:col:` per site and ends with the count line."""
    write(project / "pkg/broken.py", "def (\n")
    code, out, _ = run_scan(capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == "4 files: 3 ok, 1 failed; 3 raise sites"
    assert re.match(r"pkg/pool\.py:7:13:\s+ValueError\s+\"n must be >= 0, got \{n\}\"", lines[0])


def test_count_line_uses_thousands_separators() -> None:
    """Large counts read like `2,393 raise sites`."""
    from catalog.cli.commands.scan import count_line
    from extractor.model import FileResult, ScanReport

    report = ScanReport(tuple(FileResult(f"f{i}.py") for i in range(1200)))
    assert count_line(report, 2393) == "1,200 files: 1,200 ok, 0 failed; 2,393 raise sites"


def test_exit_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """0 ok; 1 with --strict and failures; 2 for a missing PATH or a bad --jobs."""
    assert run_scan(capsys, "--strict")[0] == 0
    write(project / "pkg/broken.py", "def (\n")
    assert run_scan(capsys)[0] == 0
    code, _, err = run_scan(capsys, "--strict")
    assert code == 1
    assert "Traceback" not in err
    code, _, err = run_scan(capsys, "does/not/exist.py")
    assert (code, err.strip()) == (2, "errcat scan: does/not/exist.py: no such file or folder")
    assert run_scan(capsys, "--jobs", "0")[0] == 2
    assert run_scan(capsys, "--jobs", "two")[0] == 2


def test_missing_configured_package_is_an_environment_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without PATH, a configured package that does not exist exits 2 with a hint."""
    write(project / "pyproject.toml", '[tool.errcat]\npackage = "gone"\n')
    code, _, err = run_scan(capsys)
    assert code == 2
    assert "[tool.errcat] package" in err


def test_cli_cache_lives_at_the_project_root(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command caches in `.errcat-cache/` at the root; --no-cache neither reads nor writes."""
    run_scan(capsys, "--json", "--no-cache")
    assert not (project / ".errcat-cache").exists()
    _, first, _ = run_scan(capsys, "--json")
    assert (project / ".errcat-cache").is_dir()
    _, second, _ = run_scan(capsys, "--json", "--jobs", "2")
    assert first == second


def test_cli_jobs_two_equals_jobs_one(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--jobs 2` and `--jobs 1` print the same JSON."""
    outputs = [run_scan(capsys, "--json", "--no-cache", "--jobs", jobs)[1] for jobs in "12"]
    assert outputs[0] == outputs[1]


def test_a_module_level_global_statement_resolves(tmp_path: Path) -> None:
    """`global X` at module level (legal, meaningless) does not stop resolution of X there."""
    from extractor.extract import extract_source

    source = "global Oops\nclass Oops(Exception):\n    pass\nraise Oops('x')\n"
    (site,) = extract_source(source, "m.py").sites
    assert site.qualified_name == "m.Oops"


def _sites(source: str) -> list[RaiseSite]:
    from extractor.extract import extract_source

    return list(extract_source(textwrap.dedent(source), "pkg/m.py").sites)


def test_a_raise_through_a_variable_is_the_raise_of_its_call() -> None:
    """`err = X(...); raise err` records X's call, and the variable in `via`."""
    (site,) = _sites(
        """
        from pkg.errors import WrongDevice

        def f(t):
            err: Exception = WrongDevice(f"{t} is wrong", name="t", actual=t)
            err.add_note("moving t")
            raise err from None
        """
    )
    assert (site.line, site.exception, site.qualified_name, site.via) == (
        7,
        "WrongDevice",
        "pkg.errors.WrongDevice",
        "err",
    )
    assert (site.template, site.arguments, site.keywords) == (
        "{t} is wrong",
        ('f"{t} is wrong"',),
        (("name", '"t"'), ("actual", "t")),
    )
    assert (site.reraise, site.cause) == (False, "None")


def test_a_variable_is_followed_only_to_a_single_earlier_call() -> None:
    """Bound twice, bound after the raise, bound to something other than a call of a name, or
    bound in another scope: the raise stays a raise of the variable."""
    sites = _sites(
        """
        from pkg.errors import WrongDevice

        module_error = WrongDevice(name="t")

        def twice(t):
            err = WrongDevice(name="t")
            if t:
                err = KeyError(t)
            raise err

        def later(t):
            for _ in range(2):
                if t:
                    raise err
                err = KeyError(t)

        def factory(errors):
            err = errors[0]()
            raise err

        def outer():
            raise module_error
        """
    )
    assert [(site.exception, site.via, site.keywords) for site in sites] == [
        ("err", None, ()),
        ("err", None, ()),
        ("err", None, ()),
        ("module_error", None, ()),
    ]


def test_a_raise_of_the_handled_exception_by_name_is_a_reraise() -> None:
    """`except X as err: raise err` is a re-raise, in nested blocks too; not when `err` is bound
    by anything but handlers, nor for a name no enclosing handler binds."""
    sites = _sites(
        """
        def f(move, other):
            try:
                move()
            except KeyError as err:
                if other:
                    with open("x"):
                        raise err from None
                raise err
            except (OSError, ValueError) as err:
                raise err

        def g(move, other):
            try:
                move()
            except KeyError as err:
                err = ValueError("x")
                raise err
            except IndexError as problem:
                raise other

        def h(move):
            try:
                move()
            except KeyError as err:
                def inner():
                    raise err
        """
    )
    assert [(site.line, site.reraise) for site in sites] == [
        (8, True),
        (9, True),
        (11, True),
        (18, False),
        (20, False),
        (27, False),
    ]


def test_unpacked_keywords_are_recorded() -> None:
    """A `**mapping` argument is a `**` keyword, in call order with the named ones."""
    (site,) = _sites("raise E(*args, a=1, **options, b=2)\n")
    assert site.arguments == ("*args",)
    assert site.keywords == (("a", "1"), ("**", "options"), ("b", "2"))
