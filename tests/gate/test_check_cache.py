"""`errcat check`'s caches follow every input they were computed from.

Each test runs check once to fill `.errcat-cache/`, changes one input, runs check again and
compares its whole JSON report with a fresh run's, the cache removed first. A cache whose key
left that input out would serve the first run's answer (bench/mutation.py's mutants of
`catalog/gate/check.py` did). Each test also asserts that the change shows in the report, so the
comparison says something.

Files written by a test are younger than the two seconds after which a file's stat is trusted
(`catalog.entries.loader.SETTLED_NS`), so nothing would be remembered by stat; the `settled` fixture
trusts every stat, as a project's files are trusted once they are older.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import write_files
from test_check_findings import project  # noqa: F401  (the fixture: a small checked project)

from catalog.cli import main
from catalog.core.project import CACHE_FOLDER

pytestmark = pytest.mark.usefixtures("project", "settled")


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled, so what is computed from its bytes is kept by its stat.
    Each change below also changes the file's size, so its stat differs within one clock tick."""
    monkeypatch.setattr("catalog.entries.loader.SETTLED_NS", -1_000_000_000)


def report(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    main(["check", "--json"])
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


def fresh(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    shutil.rmtree(Path.cwd() / CACHE_FOLDER, ignore_errors=True)
    return report(capsys)


def messages(found: dict[str, Any]) -> list[str]:
    return [f"{f['path']}:{f['line']}: {f['message']}" for f in found["findings"]]


def after_change(capsys: pytest.CaptureFixture[str], change: Callable[[], None]) -> list[str]:
    """The findings check reports after `change`, with the caches of two earlier runs in
    place; asserted equal to a fresh run's and different from before the change."""
    report(capsys)
    before = report(capsys)  # the second run is served from what the first one stored
    change()
    cached = report(capsys)
    assert cached == fresh(capsys)
    assert cached != before
    return messages(cached)


def edit(name: str, text: str, append: bool = True) -> Callable[[], None]:
    def change() -> None:
        path = Path.cwd() / name
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_text(encoding="utf-8") if append and path.exists() else ""
        path.write_text(old + text, encoding="utf-8")

    return change


STALE = "the generated module is stale: it differs from what the catalog generates"


NEW_ENTRY = (
    '  - id: "00000000000000c1"\n    name: Drained\n    exception: RuntimeError\n'
    '    status: draft\n    message: "the pool drained"\n'
)


def test_a_catalog_file_changed(capsys: pytest.CaptureFixture[str]) -> None:
    """A new entry in a catalog file: the module is stale and the entry raised nowhere."""
    found = after_change(capsys, edit("knowledge/base.yaml", NEW_ENTRY))
    assert f"pkg/errors.py:1: {STALE}" in found
    assert "knowledge/base.yaml:29: entry 00000000000000c1 (Drained) is raised nowhere in pkg" in (
        found
    )


def test_a_catalog_file_renamed(capsys: pytest.CaptureFixture[str]) -> None:
    """The same bytes under another name: findings name the new file."""
    folder = Path.cwd() / "knowledge"
    found = after_change(capsys, lambda: (folder / "base.yaml").rename(folder / "core.yaml"))
    assert any(line.startswith("knowledge/core.yaml:3: ") for line in found)


def test_a_catalog_message_changed(capsys: pytest.CaptureFixture[str]) -> None:
    """A message the package's own class raises no longer matches its raise."""
    path = Path.cwd() / "knowledge/base.yaml"

    def change() -> None:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("pool {name} is closed", "pool {name} was closed"), "utf-8")

    found = after_change(capsys, change)
    assert any("(PoolClosedError) is raised nowhere" in line for line in found)


def test_the_site_url_changed(capsys: pytest.CaptureFixture[str]) -> None:
    """mkdocs.yml's site_url is in the generated module: a new one makes it stale."""
    found = after_change(capsys, edit("mkdocs.yml", "site_name: x\nsite_url: https://a.example/\n"))
    assert f"pkg/errors.py:1: {STALE}" in found


def test_the_site_url_changed_again(capsys: pytest.CaptureFixture[str]) -> None:
    """From one mkdocs.yml to another: the digests cached for the first are not the second's."""
    write_files(Path.cwd(), {"mkdocs.yml": "site_name: x\nsite_url: https://a.example/\n"})
    assert main(["codegen"]) == 0
    found = after_change(
        capsys, edit("mkdocs.yml", "site_name: x\nsite_url: https://other.example/\n", False)
    )
    assert f"pkg/errors.py:1: {STALE}" in found


def test_the_generated_module_edited(capsys: pytest.CaptureFixture[str]) -> None:
    found = after_change(capsys, edit("pkg/errors.py", "EDITED_BY_HAND = 1\n"))
    assert f"pkg/errors.py:1: {STALE}" in found


def test_the_generated_module_moved(capsys: pytest.CaptureFixture[str]) -> None:
    """Another `generated` setting, codegen run for it: the old module is now a package file
    whose classes shadow the entries, and the raises import classes of no generated module."""

    def change() -> None:
        pyproject = Path.cwd() / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        pyproject.write_text(text.replace("pkg/errors.py", "pkg/made.py"), encoding="utf-8")
        assert main(["codegen"]) == 0

    found = after_change(capsys, change)
    assert any("name PoolEmpty is also a class of the package" in line for line in found)


def test_the_generated_module_moved_without_codegen(capsys: pytest.CaptureFixture[str]) -> None:
    """Another `generated` setting: the module there is missing, whatever was cached for the
    old one."""
    pyproject = Path.cwd() / "pyproject.toml"

    def change() -> None:
        text = pyproject.read_text(encoding="utf-8")
        pyproject.write_text(text.replace("pkg/errors.py", "pkg/made.py"), encoding="utf-8")

    found = after_change(capsys, change)
    assert "pkg/made.py:1: the generated module is missing" in found


def test_a_source_file_changed(capsys: pytest.CaptureFixture[str]) -> None:
    found = after_change(capsys, edit("pkg/base.py", "\n\ndef more():\n    raise OSError('x')\n"))
    assert "pkg/base.py:19: uncatalogued raise of OSError" in found


def test_a_source_file_renamed(capsys: pytest.CaptureFixture[str]) -> None:
    """The same bytes at another path: findings name the new file."""
    write_files(Path.cwd(), {"pkg/probe.py": "def f():\n    raise OSError('x')\n"})
    pkg = Path.cwd() / "pkg"
    found = after_change(capsys, lambda: (pkg / "probe.py").rename(pkg / "other.py"))
    assert found[0] == "pkg/other.py:2: uncatalogued raise of OSError"


def test_a_source_file_removed(capsys: pytest.CaptureFixture[str]) -> None:
    write_files(
        Path.cwd(), {"pkg/probe.py": "def f():\n    raise OSError('x')  # errcat: ignore\n"}
    )
    found = after_change(capsys, lambda: (Path.cwd() / "pkg/probe.py").unlink())
    assert not any("probe.py" in line for line in found)


def test_an_ignore_comment_on_no_raise(capsys: pytest.CaptureFixture[str]) -> None:
    """A comment in a file without raises changes no scanned site, only the file's facts."""
    found = after_change(capsys, edit("pkg/__init__.py", "X = 1  # errcat: ignore[stray]\n"))
    assert "pkg/__init__.py:1: exemption [stray] matches no raise site" in found


def test_an_ignore_comment_removed(capsys: pytest.CaptureFixture[str]) -> None:
    write_files(Path.cwd(), {"pkg/__init__.py": "X = 1  # errcat: ignore[stray]\n"})
    found = after_change(capsys, edit("pkg/__init__.py", "X = 10\n", False))
    assert not any("stray" in line for line in found)


def test_an_ignore_comment_moved_to_another_file(capsys: pytest.CaptureFixture[str]) -> None:
    write_files(
        Path.cwd(),
        {"pkg/__init__.py": "X = 1  # errcat: ignore[stray]\n", "pkg/more.py": "Y = 2\n"},
    )

    def change() -> None:
        write_files(
            Path.cwd(),
            {"pkg/__init__.py": "X = 1\n", "pkg/more.py": "Y = 2  # errcat: ignore[stray]\n"},
        )

    found = after_change(capsys, change)
    assert "pkg/more.py:1: exemption [stray] matches no raise site" in found


def test_a_class_named_like_an_entry(capsys: pytest.CaptureFixture[str]) -> None:
    """A class definition raises nothing: only the file's facts change."""
    found = after_change(capsys, edit("pkg/__init__.py", "class PoolEmpty:\n    pass\n"))
    assert any("name PoolEmpty is also a class of the package" in line for line in found)


def test_a_class_named_like_an_entry_renamed(capsys: pytest.CaptureFixture[str]) -> None:
    write_files(Path.cwd(), {"pkg/__init__.py": "class PoolEmpty:\n    pass\n"})
    found = after_change(capsys, edit("pkg/__init__.py", "class PoolEmptied:\n    pass\n", False))
    assert not any("is also a class" in line for line in found)


def test_requires_python_changed(capsys: pytest.CaptureFixture[str]) -> None:
    found = after_change(capsys, edit("pyproject.toml", '[project]\nrequires-python = ">=2.7"\n'))
    assert any("requires-python" in line for line in found)


def test_the_project_moved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole project, its cache included, copied elsewhere: findings name the new place."""
    write_files(Path.cwd(), {"pkg/probe.py": "def f():\n    raise OSError('x')\n"})
    report(capsys)
    report(capsys)
    moved = tmp_path.parent / (tmp_path.name + "-moved")
    shutil.copytree(tmp_path, moved)
    (tmp_path / "pkg/probe.py").unlink()  # so that a finding naming the old place shows
    monkeypatch.chdir(moved)
    cached = report(capsys)
    assert cached == fresh(capsys)
    assert "pkg/probe.py:2: uncatalogued raise of OSError" in messages(cached)


def test_errcat_changed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another errcat (its fingerprint) reading a file's facts differently: what the old one
    stored is not served. Faked by a new fingerprint and a `_file_facts` that finds a class."""
    import catalog.entries.loader
    import catalog.gate.check

    report(capsys)
    before = report(capsys)
    fingerprint = catalog.entries.loader.tool_fingerprint()
    monkeypatch.setattr(catalog.entries.loader, "tool_fingerprint", lambda: fingerprint + b"new")
    real = catalog.gate.check._file_facts

    def newer(data: bytes) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        comments, classes = real(data)
        return comments, (*classes, "PoolEmpty", 1)

    monkeypatch.setattr(catalog.gate.check, "_file_facts", newer)
    cached = report(capsys)
    assert cached == fresh(capsys)
    assert cached != before


def test_unchanged_runs_agree(capsys: pytest.CaptureFixture[str]) -> None:
    """With nothing changed, every run reports what a fresh one does (the caches' own data
    round-trips), findings in every stage included."""
    write_files(
        Path.cwd(),
        {
            "pkg/__init__.py": "class PoolEmpty:\n    pass\nX = 1  # errcat: ignore[stray]\n",
            "pkg/probe.py": "def f():\n    raise OSError('x')\n",
            "mkdocs.yml": "site_name: x\nsite_url: https://a.example/\n",
        },
    )
    first = report(capsys)
    assert report(capsys) == first
    assert report(capsys) == first
    assert fresh(capsys) == first
    assert len(first["findings"]) > 6
    os.utime(Path.cwd() / "pkg/probe.py")  # a new stat, the same bytes
    assert report(capsys) == first


def test_an_unsettled_file_is_read_again(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file changed within the last moments is read again even when its stat is the same,
    since a second write within one clock tick would not show in it. Faked by a stat that
    never changes and never settles: a new ignore comment is still found."""
    import catalog.entries.loader

    monkeypatch.setattr(
        catalog.entries.loader, "stat_signature", lambda path: ((1, 2, 3, 4, 5), False)
    )
    report(capsys)
    before = report(capsys)
    edit("pkg/__init__.py", "X = 1  # errcat: ignore[stray]\n")()
    cached = report(capsys)
    assert cached == fresh(capsys)
    assert "pkg/__init__.py:1: exemption [stray] matches no raise site" in messages(cached)
    assert cached != before


def test_the_generated_module_renamed_outside_the_package(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The module generated outside the package, the old one removed: the package's files scan
    the same (the old module was never scanned), but its raises import from no generated
    module now."""
    pyproject = Path.cwd() / "pyproject.toml"

    def change() -> None:
        text = pyproject.read_text(encoding="utf-8")
        pyproject.write_text(text.replace("pkg/errors.py", "gen/errors.py"), encoding="utf-8")
        for name in ("pkg/errors.py", "pkg/errors.pyi"):
            (Path.cwd() / name).unlink(missing_ok=True)
        assert main(["codegen"]) == 0

    found = after_change(capsys, change)
    assert not any("generated module" in line for line in found)
    assert any("(PoolEmpty) is raised nowhere" in line for line in found)


SITE_CHANGES = {
    "line": ("def f():\n    raise OSError('x')\n", "def f():\n\n    raise OSError('x')\n"),
    "column": ("def f():\n    raise OSError('x')\n", "def f():\n    if f: raise OSError('x')\n"),
    "template": (
        "def f():\n    raise RuntimeError('the pool is empty')\n",
        "def f():\n    raise RuntimeError('the pool is empty!')\n",
    ),
    "qualified-name": (
        "from pkg.errors import PoolEmpty as E\n\n\ndef f():\n    raise E()\n",
        "from pkg.errors import WrongDevice as E\n\n\ndef f():\n    raise E()\n",
    ),
    "arguments": (
        "from pkg.errors import PoolEmpty\n\n\ndef f():\n    raise PoolEmpty()\n",
        "from pkg.errors import PoolEmpty\n\n\ndef f():\n    raise PoolEmpty(1)\n",
    ),
    "keywords": (
        "from pkg.errors import PoolEmpty\n\n\ndef f():\n    raise PoolEmpty()\n",
        "from pkg.errors import PoolEmpty\n\n\ndef f():\n    raise PoolEmpty(a=1)\n",
    ),
    "reraise": (
        "def f():\n    try:\n        pass\n    except OSError as e:\n        raise e\n",
        "def f():\n    try:\n        pass\n    except OSError as e:\n        raise E\n",
    ),
    "via": (
        "def f():\n    e = RuntimeError('the pool is empty')\n    raise e\n",
        "def f():\n    ee = RuntimeError('the pool is empty')\n    raise ee\n",
    ),
    "end-line": (
        "def f():\n    raise OSError(\n        'x')\n    # errcat: ignore[r]\n",
        "def f():\n    raise OSError(\n        'x',\n    # errcat: ignore[r]\n    )\n",
    ),
    "failure": ("def f(:\n    pass\n", "def f(]\n    pass\n"),
}


@pytest.mark.parametrize("source", SITE_CHANGES.values(), ids=list(SITE_CHANGES))
def test_a_site_changed(capsys: pytest.CaptureFixture[str], source: tuple[str, str]) -> None:
    """One field of one raise site changes (or a file's parse failure): the outcome cached for
    the old site is not served."""
    old, new = source
    write_files(Path.cwd(), {"pkg/probe.py": old})
    after_change(capsys, edit("pkg/probe.py", new, False))


def test_a_generated_module_with_crlf_line_ends_is_current(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A checkout that turned the module's line ends into CRLF holds the same text: check
    compares the text, not the bytes, from a fresh run and from the cache alike."""
    module = Path.cwd() / "pkg/errors.py"
    module.write_bytes(module.read_bytes().replace(b"\n", b"\r\n"))
    first = report(capsys)
    assert not any("generated" in line for line in messages(first))
    assert report(capsys) == first


def test_the_counts_and_stages_of_a_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The summary counts entries, and the requires-python finding belongs to codegen."""
    edit("pyproject.toml", '[project]\nrequires-python = ">=2.7"\n')()
    found = report(capsys)
    assert (found["entries"], found["files"]) == (5, 2)
    stages = {f["stage"] for f in found["findings"] if "requires-python" in f["message"]}
    assert stages == {"codegen"}


def test_cached_findings_of_many_unscanned_places(capsys: pytest.CaptureFixture[str]) -> None:
    """Findings at places that are no scanned file (two catalog files, a file that cannot be
    parsed) each keep their own path when served from the cache."""
    entry = (
        'module: pkg.base\nerrors:\n  - id: "00000000000000c1"\n    name: Drained\n'
        '    exception: RuntimeError\n    status: draft\n    message: "the pool drained"\n'
    )
    write_files(
        Path.cwd(),
        {
            "knowledge/more.yaml": entry,
            "pkg/broken.py": "def f(:\n    pass\n",
            "pkg/__init__.py": "class PoolEmpty:\n    pass\n",
        },
    )
    assert main(["codegen"]) == 0
    first = fresh(capsys)
    assert report(capsys) == first
    paths = {f["path"] for f in first["findings"] if f["severity"] == "error"}
    assert paths == {"knowledge/base.yaml", "knowledge/more.yaml", "pkg/broken.py"}


def test_two_raw_raises_of_two_entries(capsys: pytest.CaptureFixture[str]) -> None:
    """Each raw raise of a typed entry names its own entry."""
    write_files(
        Path.cwd(),
        {
            "pkg/probe.py": "def f(name, expected, actual):\n"
            "    raise RuntimeError('the pool is empty')\n"
            "    raise ValueError(f'{name} must be on device {expected}, got {actual}')\n"
        },
    )
    found = [line for line in messages(report(capsys)) if "probe" in line]
    assert found == [
        "pkg/probe.py:2: raises RuntimeError with the message of entry 00000000000000a2; "
        "raise the typed PoolEmpty instead",
        "pkg/probe.py:3: raises ValueError with the message of entry 00000000000000a1; "
        "raise the typed WrongDevice instead",
    ]


def test_a_class_named_like_an_entry_catalogued_in_place(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Only entries with a generated class can shadow a class of the package: an entry of the
    package's own class is imported by no one under its name."""
    write_files(Path.cwd(), {"pkg/__init__.py": "class PoolClosedError(Exception):\n    pass\n"})
    assert not any("is also a class" in line for line in messages(report(capsys)))


def test_a_shadowed_class_is_reported_at_its_own_line(capsys: pytest.CaptureFixture[str]) -> None:
    write_files(
        Path.cwd(), {"pkg/__init__.py": "class PoolEmpty:\n    pass\n\n\nclass Other:\n    pass\n"}
    )
    found = [line for line in messages(report(capsys)) if "is also a class" in line]
    assert found == [
        "knowledge/base.yaml:9: name PoolEmpty is also a class of the package "
        "(__init__.py:1); the two would shadow each other"
    ]


def stage_inputs() -> tuple[Any, Any, Any, str]:
    from catalog.core.config import load_config
    from catalog.core.project import generated_module, scan_package
    from catalog.entries.validate import checked_project_catalog

    config = load_config()
    checked = checked_project_catalog(config)
    assert checked.findings == []
    return config, checked.catalog, scan_package(config, cache=False), generated_module(config)


def test_the_sites_stage_with_and_without_its_caches() -> None:
    """`check_sites_stage` without a cache folder (with and without a catalog key), with one
    but no key, with a matcher of the caller's, and twice with both: the same findings, and
    no cache without a folder."""
    from catalog.gate.check import SITES_CACHE, SOURCE_FACTS_CACHE, check_sites_stage
    from catalog.matching.sites import Matcher

    write_files(
        Path.cwd(),
        {
            "pkg/__init__.py": "class PoolEmpty:\n    pass\nX = 1  # errcat: ignore[stray]\n",
            "pkg/probe.py": "def f():\n    raise OSError('x')\n",
        },
    )
    shutil.rmtree(Path.cwd() / CACHE_FOLDER, ignore_errors=True)
    config, catalog, scanned, module = stage_inputs()
    plain = check_sites_stage(config, catalog, scanned, module)
    folder = Path.cwd() / CACHE_FOLDER
    assert not (folder / SITES_CACHE).exists() and not (folder / SOURCE_FACTS_CACHE).exists()
    assert len(plain) == 3
    assert check_sites_stage(config, catalog, scanned, module, cache_dir=folder) == plain
    assert check_sites_stage(config, catalog, scanned, module, key="k") == plain
    assert not (folder / SITES_CACHE).exists()
    matcher = Matcher(catalog, module)
    assert check_sites_stage(config, catalog, scanned, module, matcher, folder, "k") == plain
    for _ in range(2):
        assert check_sites_stage(config, catalog, scanned, module, cache_dir=folder, key="k") == (
            plain
        )


def test_source_facts_skip_files_that_cannot_be_read(tmp_path: Path) -> None:
    """A file gone since the scan, or a folder, is left to the scan stage; the files after it
    still count."""
    from catalog.gate.check import _source_facts

    later = write_files(tmp_path, {"later.py": "class Later:  # errcat: ignore[r]\n"}) / "later.py"
    files = [(tmp_path / "gone.py", "gone.py"), (tmp_path, "folder"), (later, "later.py")]
    facts = _source_facts(files, None, {"Later"})
    assert facts.comments == {later: [(1, 15, "r")]}
    assert facts.classes == {"Later": "later.py:1"}


def test_starts_with_a_file_that_cannot_be_read(tmp_path: Path) -> None:
    from catalog.gate.check import _starts_with

    assert not _starts_with(tmp_path, "")
    assert not _starts_with(tmp_path / "missing", "")


def test_a_left_stub_that_is_not_utf8(capsys: pytest.CaptureFixture[str]) -> None:
    """A stub file where codegen writes none, not UTF-8 and not errcat's: no finding, no crash."""
    (Path.cwd() / "pkg/errors.pyi").write_bytes(b"\xff\xfe\xfa not errcat's\n")
    assert not any("stub" in line for line in messages(report(capsys)))


def test_the_codegen_stage_without_a_catalog_key(capsys: pytest.CaptureFixture[str]) -> None:
    """Without the catalog's key nothing is cached for it: a changed catalog is seen."""
    from catalog.gate.check import check_codegen_stage

    config, catalog, _, _ = stage_inputs()
    assert check_codegen_stage(config, catalog) == []
    edit("knowledge/base.yaml", "")()
    path = Path.cwd() / "knowledge/base.yaml"
    path.write_text(path.read_text("utf-8").replace("the pool is empty", "pool empty"), "utf-8")
    config, catalog, _, _ = stage_inputs()
    assert [f.message for f in check_codegen_stage(config, catalog)] == [
        "the generated module is stale: it differs from what the catalog generates"
    ]


def test_a_mkdocs_yml_that_cannot_be_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """mkdocs.yml is there but cannot be read (here every read of it is refused, as for a user
    without read permission; a test run as root can read any file): check says so, naming the
    file, as a clear error rather than a traceback, and caches no codegen digests for it."""
    from catalog.gate.check import CODEGEN_CACHE

    write_files(Path.cwd(), {"mkdocs.yml": "site_name: x\n"})
    read_bytes, read_text = Path.read_bytes, Path.read_text

    def refuse(path: Path) -> None:
        if path.name == "mkdocs.yml":
            raise PermissionError(13, "Permission denied", str(path))

    def bytes_unless_refused(path: Path) -> bytes:
        refuse(path)
        return read_bytes(path)

    def text_unless_refused(path: Path, *args: Any, **kwargs: Any) -> str:
        refuse(path)
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_bytes", bytes_unless_refused)
    monkeypatch.setattr(Path, "read_text", text_unless_refused)
    shutil.rmtree(Path.cwd() / CACHE_FOLDER, ignore_errors=True)
    capsys.readouterr()
    assert main(["check"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("errcat: ") and "mkdocs.yml: cannot read the site settings" in error
    assert "Permission denied" in error
    assert not (Path.cwd() / CACHE_FOLDER / CODEGEN_CACHE).exists()


def test_a_catalog_file_changed_between_digests_that_look_alike(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The codegen digests are cached under the catalog's key, not under anything else a run
    holds: here every run's `FileDigests` prints the same (a default repr prints its address,
    which a later run in the same process may be given again), and a changed catalog still
    makes the module stale."""
    from catalog.entries.loader import FileDigests

    class LookAlike(FileDigests):
        def __repr__(self) -> str:
            return "FileDigests"

    monkeypatch.setattr("catalog.gate.check.FileDigests", LookAlike)
    found = after_change(capsys, edit("knowledge/base.yaml", NEW_ENTRY))
    assert f"pkg/errors.py:1: {STALE}" in found
