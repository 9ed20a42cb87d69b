"""The package's own tests, run by `errcat reproduce`: which raise each expectation saw.

Reading a test (`extractor.expectations`) says which class it expects and, at best, a pattern;
most tests give none (`with pytest.raises(ValueError): parse(text)`), and a package raises one
class from many places, so `catalog.evidence.tested` can pair few of them with one entry. Run,
the test says exactly which raise it reached: this module runs the test files that hold an
expectation with pytest (which runs unittest tests too), with `suite_plugin` loaded, and pairs
each caught exception with the raise site its traceback went through.

How a record becomes a pairing:

1. **Site.** The traceback's frames in the package, innermost first (on Python 3.12 and later
   preceded by the line that first raised the exception and its caller's, where a package
   raised it again with a traceback of its own making): the first that lies on the lines of a
   catalogued raise site (`sites_by_entry`, as the build pairs them) is the site.
   When that raise is a raise helper's own (`def fail(msg): raise exc(msg)`) and the frame just
   outside it is a call of the helper that is a site of its own (`extractor.printed`), that
   call is the site: it says which message.
2. **Class.** The exception's class is the entry's: its generated class (by `id`), or the class
   `exception` names (`ValueError` is `builtins.ValueError`). A subclass passed to a helper in
   place of its default is another error, and pairs with nothing.
3. **Test.** A frame from the one that asked for the expectation outwards lies on the lines of
   an expectation the test files hold (its `with` or call statement): the innermost whose class
   is named, so that a test's own wrapper of `assertRaises` (which passes its parameter on) is
   seen through to the test that used it. A wrapper's expectation counts alone only where no
   test frame lies further out (a table-driven test's `pytest.raises(expected)`); the item
   shows the expectation's code.

The run: `<python> -m pytest -p <plugin> --continue-on-collection-errors -q <files>`, in the
project's root (the tests find their own files as their CI does) with the import root first on
PYTHONPATH, in its own process group, with a wall limit (`SUITE_TIMEOUT`, after which the group
is killed and what was recorded so far is kept), an address-space limit (`SUITE_MEMORY`), HOME
and TMPDIR in a temporary folder, no bytecode written and Python's socket calls refusing to
connect. Whether tests pass does not matter: only what their expectations caught.

Pairings are stored beside the catalog (`tested.json`), each tied to a digest of the test
file and the site file: `errcat build` shows them as verified *tested* knowledge while both are
unchanged, and never runs anything.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.evidence.stored import FileBytes, dump_results, read_results

if TYPE_CHECKING:
    from catalog.core.config import Config
    from catalog.core.model import Catalog, Entry
    from extractor.expectations import Expectation
    from extractor.model import RaiseSite

RESULTS_FILE = "tested.json"
"""File name inside the catalog folder."""
FORMAT_VERSION = 1
SUITE_TIMEOUT = 20 * 60.0
"""Seconds the whole test run may take before its process group is killed."""
SUITE_MEMORY = 4 * 1024**3
"""Bytes of address space the test run may map (RLIMIT_AS)."""
_PLUGIN = "_errcat_suite_plugin"


@dataclass(frozen=True)
class Seen:
    """A test's expectation seen catching its entry, raised at a site (a results record)."""

    test_path: str
    """The test file, relative to the project root, `/`-separated."""
    test_line: int
    """1-based line of the expectation's statement (`with pytest.raises(...)`)."""
    site_path: str
    """The site's file, relative to the project root."""
    site_line: int
    """1-based line of the site's `raise` (or of the helper call that is the site)."""
    digest: str
    """SHA-256 over the test file's and the site file's bytes when it was seen."""
    chained: bool = False
    """The expectation caught an error raised from this one (its `__cause__`, or its
    `__context__` when not suppressed), of the class the expectation names."""

    def as_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "test": {"path": self.test_path, "line": self.test_line},
            "site": {"path": self.site_path, "line": self.site_line},
            "digest": self.digest,
        }
        if self.chained:
            found["chained"] = True
        return found


@dataclass(frozen=True)
class SuiteRun:
    """What one run of the tests gave."""

    files: int
    """Test files run (those holding an expectation)."""
    records: int
    """Exceptions the expectations caught."""
    seen: dict[str, tuple[Seen, ...]]
    """Entry id -> its pairings."""
    ended: str
    """How pytest ended: `exit <code>`, `timed out`, `not run: <why>`."""
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "records": self.records,
            "entries": len(self.seen),
            "expectations": len(
                {(s.test_path, s.test_line) for v in self.seen.values() for s in v}
            ),
            "ended": self.ended,
            "seconds": round(self.seconds, 3),
        }


def digest(test: bytes, site: bytes) -> str:
    return hashlib.sha256(test + b"\0" + site).hexdigest()


def files_to_run(expectations: Iterable[Expectation], entries: Sequence[Entry] | None) -> list[str]:
    """The test files to run: those holding an expectation (of one of `entries`' classes, by
    class name, when given). A record of an error input is none: the test that reads the table
    may be anywhere, and what its expectation catches is said at its own statement."""
    names: set[str] | None = None
    if entries is not None:
        names = set()
        for entry in entries:
            names.update({entry.exception.rpartition(".")[2], entry.name})
    return sorted(
        {
            e.path
            for e in expectations
            if not e.record and (names is None or e.exception.rpartition(".")[2] in names)
        }
    )


def run_tests(
    config: Config,
    files: Sequence[str],
    out: Path,
    *,
    python: str | None = None,
    timeout: float = SUITE_TIMEOUT,
) -> str:
    """Run `files` (relative to the root) under the recording plugin, appending to `out`; how
    it ended."""
    from catalog.core.project import import_root

    if not files:
        return "not run: no test file expects an error"
    interpreter = python or sys.executable
    with tempfile.TemporaryDirectory(prefix="errcat-tests-") as scratch:
        plugins = Path(scratch) / "plugins"
        plugins.mkdir()
        shutil.copyfile(Path(__file__).with_name("suite_plugin.py"), plugins / f"{_PLUGIN}.py")
        home = Path(scratch) / "home"
        home.mkdir()
        env = dict(os.environ)
        paths = (str(plugins), str(import_root(config)), env.get("PYTHONPATH"))
        env.update(
            PYTHONPATH=os.pathsep.join(p for p in paths if p),
            PYTHONDONTWRITEBYTECODE="1",
            HOME=str(home),
            TMPDIR=str(home),
            ERRCAT_SUITE_OUT=str(out),
            ERRCAT_SUITE_PACKAGE=str(config.package.resolve()),
            ERRCAT_SUITE_MEMORY=str(SUITE_MEMORY),
            ERRCAT_SUITE_NETWORK="0",
            ERRCAT_DOCS_LINKS="0",
        )
        command = [
            interpreter,
            "-m",
            "pytest",
            "-p",
            _PLUGIN,
            "-p",
            "no:cacheprovider",
            "--continue-on-collection-errors",
            "-q",
            *files,
        ]
        try:
            process = subprocess.Popen(
                command,
                cwd=config.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return f"not run: cannot start {interpreter}: {exc.strerror or exc}"
        try:
            _output, errors = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.communicate()  # closes the pipe
            return "timed out"
        finally:
            _kill(process)  # whatever the tests started dies with them
        if process.returncode in (1, 2, 3, 4) and not out.exists():
            # pytest missing, or it could not start: say why.
            why = errors.decode("utf-8", "replace").strip().splitlines()
            if why and "No module named pytest" in why[-1]:
                return f"not run: pytest is not installed for {interpreter}"
        return f"exit {process.returncode}"


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _sites_index(
    sites: Mapping[str, Sequence[RaiseSite]],
) -> dict[str, list[tuple[int, int, str, RaiseSite]]]:
    """By file: (first line, last line, entry id, site) of every catalogued site."""
    index: dict[str, list[tuple[int, int, str, RaiseSite]]] = {}
    for entry_id, found in sites.items():
        for site in found:
            index.setdefault(site.path, []).append(
                (site.line, max(site.line, site.end_line), entry_id, site)
            )
    return index


def _site_at(
    index: Mapping[str, Sequence[tuple[int, int, str, RaiseSite]]], path: str, line: int
) -> tuple[str, RaiseSite] | None:
    for first, last, entry_id, site in index.get(path, ()):
        if first <= line <= last:
            return entry_id, site
    return None


def pair(
    config: Config,
    catalog: Catalog,
    sites: Mapping[str, Sequence[RaiseSite]],
    expectations: Sequence[Expectation],
    records: Iterable[Mapping[str, Any]],
) -> dict[str, tuple[Seen, ...]]:
    """Entry id -> the expectations seen catching it (see the module docstring)."""
    root = config.root.resolve()
    index = _sites_index(sites)
    by_id = catalog.by_id()
    tests: dict[str, list[tuple[int, int, Expectation]]] = {}
    for expectation in expectations:
        if expectation.record:
            continue  # a table's row: no frame of the test reading it lies on its lines
        last = expectation.line + len(expectation.code.splitlines()) - 1
        tests.setdefault(expectation.path, []).append((expectation.line, last, expectation))
    files = FileBytes(root)
    found: dict[str, dict[tuple[str, int, str, int], Seen]] = {}
    for record in records:
        try:
            asked = [(_relative(root, f), int(n)) for f, n in record["tests"]]
            frames = [(_relative(root, f), int(n)) for f, n in record["frames"]]
            kind = str(record["class"])
            identifier = record.get("id")
            chained = bool(record.get("chained", False))
        except (KeyError, TypeError, ValueError, IndexError):
            continue
        expected = _expectation_of(tests, asked)
        if expected is None:
            continue
        hit = _site_of(index, frames)
        if hit is None:
            continue
        entry_id, site = hit
        entry = by_id.get(entry_id)
        if entry is None or not _same_class(entry, kind, identifier):
            continue
        key = (expected.path, expected.line, site.path, site.line)
        earlier = found.get(entry_id, {}).get(key)
        if earlier is not None and (chained or not earlier.chained):
            continue  # seen caught outright wins over seen in a chain
        test_bytes, site_bytes = files(expected.path), files(site.path)
        if test_bytes is None or site_bytes is None:
            continue
        found.setdefault(entry_id, {})[key] = Seen(
            expected.path,
            expected.line,
            site.path,
            site.line,
            digest(test_bytes, site_bytes),
            chained,
        )
    return {entry_id: tuple(seen.values()) for entry_id, seen in found.items()}


def _expectation_of(
    tests: Mapping[str, Sequence[tuple[int, int, Expectation]]],
    asked: Sequence[tuple[str | None, int]],
) -> Expectation | None:
    """The expectation the test stated: the innermost frame on an expectation whose class is
    named. One whose class is a parameter (a test's own wrapper, `assertRaises(expected)`)
    counts only when no frame further out lies in a test file: otherwise the test that used
    the wrapper stated the expectation in a form errcat does not read, and the wrapper's code
    would not show it."""
    found: list[tuple[int, Expectation]] = [
        (depth, expectation)
        for depth, (path, line) in enumerate(asked)
        if path is not None
        for first, last, expectation in tests.get(path, ())
        if first <= line <= last
    ]
    for _depth, expectation in found:
        if expectation.qualified_name is not None:
            return expectation
    if not found:
        return None
    depth, expectation = found[0]
    further = [
        path for path, _line in asked[depth + 1 :] if path in tests or path == expectation.path
    ]
    return None if further else expectation


def _site_of(
    index: Mapping[str, Sequence[tuple[int, int, str, RaiseSite]]],
    frames: Sequence[tuple[str | None, int]],
) -> tuple[str, RaiseSite] | None:
    for position, (path, line) in enumerate(frames):
        if path is None:
            continue
        hit = _site_at(index, path, line)
        if hit is None:
            continue
        # A raise helper's own raise: the call of it just outside says which message, when
        # that call is a site of its own.
        if position + 1 < len(frames) and frames[position + 1][0] is not None:
            outer = _site_at(index, str(frames[position + 1][0]), frames[position + 1][1])
            if outer is not None and outer[1].call:
                return outer
        return hit
    return None


def _same_class(entry: Entry, kind: str, identifier: object) -> bool:
    if identifier == entry.id:
        return True
    module, _, name = kind.rpartition(".")
    written = name if module == "builtins" else kind
    return written == entry.exception or kind == entry.exception


def _relative(root: Path, path: str) -> str | None:
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


def run_suite(
    config: Config,
    catalog: Catalog,
    sites: Mapping[str, Sequence[RaiseSite]],
    *,
    only: Sequence[Entry] | None = None,
    python: str | None = None,
    timeout: float = SUITE_TIMEOUT,
) -> SuiteRun:
    """Run the tests that expect errors (of `only`'s classes, when given) and pair what their
    expectations caught with entries."""
    from extractor.expectations import read_expectations

    started = time.monotonic()
    expectations, _failures = read_expectations(list(config.tests), cwd=config.root)
    files = files_to_run(expectations, only)
    with tempfile.TemporaryDirectory(prefix="errcat-suite-") as scratch:
        out = Path(scratch) / "records.jsonl"
        ended = run_tests(config, files, out, python=python, timeout=timeout)
        records = _records(out)
    seen = pair(config, catalog, sites, expectations, records)
    if only is not None:
        wanted = {entry.id for entry in only}
        seen = {entry_id: rows for entry_id, rows in seen.items() if entry_id in wanted}
    return SuiteRun(len(files), len(records), seen, ended, time.monotonic() - started)


def _records(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return records
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by the time limit
        if isinstance(record, dict):
            records.append(record)
    return records


# ---------------------------------------------------------------------------------------------
# The results file.


def load_seen(catalog_folder: Path, root: Path) -> dict[str, tuple[Seen, ...]]:
    """Every entry's recorded pairings whose test and site files are unchanged since."""
    files = FileBytes(root)
    found: dict[str, tuple[Seen, ...]] = {}
    for entry_id, rows in read_results(catalog_folder / RESULTS_FILE, FORMAT_VERSION).items():
        kept: list[Seen] = []
        for row in rows:
            try:
                seen = Seen(
                    str(row["test"]["path"]),
                    int(row["test"]["line"]),
                    str(row["site"]["path"]),
                    int(row["site"]["line"]),
                    str(row["digest"]),
                    bool(row.get("chained", False)),
                )
            except (KeyError, TypeError, ValueError):
                continue
            test, site = files(seen.test_path), files(seen.site_path)
            if test is not None and site is not None and digest(test, site) == seen.digest:
                kept.append(seen)
        if kept:
            found[entry_id] = tuple(kept)
    return found


def dump_seen(results: Mapping[str, Sequence[Seen]]) -> str:
    """The file's text: sorted ids and records, so reruns give minimal diffs."""
    return dump_results(
        FORMAT_VERSION,
        {
            entry_id: [
                s.as_dict()
                for s in sorted(
                    rows, key=lambda s: (s.test_path, s.test_line, s.site_path, s.site_line)
                )
            ]
            for entry_id, rows in results.items()
        },
    )


def record_seen(
    catalog_folder: Path,
    root: Path,
    run: SuiteRun,
    catalog: Catalog,
    only: Sequence[Entry] | None = None,
) -> None:
    """Replace the pairings of the entries this run covered (all, or `only`), keep the others
    while their files are unchanged, drop ids no longer in the catalog; write atomically. A run
    that did not start changes nothing."""
    from catalog.authoring.codegen import write_atomically

    if run.ended.startswith("not run"):
        return
    merged = dict(load_seen(catalog_folder, root))
    covered = {entry.id for entry in (only if only is not None else catalog)}
    for entry_id in covered:
        merged.pop(entry_id, None)
    merged.update(run.seen)
    known = {entry.id for entry in catalog}
    merged = {entry_id: rows for entry_id, rows in merged.items() if entry_id in known}
    path = catalog_folder / RESULTS_FILE
    if not merged and not path.exists():
        return
    write_atomically(path, dump_seen(merged))
