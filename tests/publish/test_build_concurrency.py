"""`errcat build` run by real processes at once: one build at a time composes and publishes.

Each test builds the small widgets project (`test_build_project.make_project`) with the
installed `errcat` command. Processes are started together through a file (each writes a
"ready" file, then waits for a "go" file) and everything else waits on files, pipes or exit,
always with generous bounds: no assertion depends on how long anything took.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from test_build_project import make_project

from catalog.publish.build import LOCK_NAME, PARTIAL

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGKILL"), reason="needs POSIX processes, flock and SIGKILL"
)

ERRCAT = str(Path(sys.executable).with_name("errcat"))
BOUND = 240.0
"""Seconds any single wait may take before the test fails instead of hanging."""
FINISHED = re.compile(r"^site-\d{8}T\d{6}-\d+(-\d+)?$")

# Started with a ready file, a go file and the command: says it is ready, waits for the go.
STARTER = """\
import os, sys, time
ready, go, command = sys.argv[1], sys.argv[2], sys.argv[3:]
open(ready, "w").close()
deadline = time.monotonic() + 240
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("never told to go")
    time.sleep(0.005)
os.execv(command[0], command)
"""


def _until(condition: Callable[[], object], what: str) -> None:
    """Poll `condition()` until true; fail (not hang) after BOUND seconds."""
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def _build(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ERRCAT, "build", *args], cwd=root, capture_output=True, text=True, timeout=BOUND
    )


def _tree(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != LOCK_NAME
    }


def _versions(build: Path) -> list[str]:
    return sorted(p.name for p in build.glob("site-*"))


def _catalog_ids(root: Path) -> set[str]:
    data = yaml.safe_load((root / "catalog" / "widgets.core.yaml").read_text(encoding="utf-8"))
    return {entry["id"] for entry in data["errors"]}


def _assert_complete(root: Path) -> Path:
    """build/site is one whole build: home page, every error page, the API matching them."""
    site = root / "build" / "site"
    assert site.is_symlink() and FINISHED.match(os.readlink(site)), os.readlink(site)
    folder = site.resolve()
    assert (folder / "index.html").is_file() and (folder / "404.html").is_file()
    rows = json.loads((folder / "api" / "errors" / "index.json").read_text(encoding="utf-8"))
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)) and set(ids) == _catalog_ids(root)
    pages = {p.parent.name for p in (folder / "errors").glob("*/index.html")}
    assert set(ids) <= pages
    for entry_id in ids:
        document = json.loads((folder / "api" / "errors" / f"{entry_id}.json").read_bytes())
        assert document["id"] == entry_id
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "widgets")


class _Holder:
    """The project's build lock, held by this process the way a build holds it."""

    def __init__(self, root: Path) -> None:
        self.path = root / "build" / LOCK_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@pytest.fixture
def held_lock(project: Path) -> Iterator[_Holder]:
    holder = _Holder(project)
    try:
        yield holder
    finally:
        holder.release()


def _start_together(root: Path, count: int, sync: Path) -> list[subprocess.Popen[str]]:
    """`count` builds, released at the same moment once every one of them is ready."""
    sync.mkdir()
    go = str(sync / "go")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", STARTER, str(sync / f"ready-{n}"), go, ERRCAT, "build"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]
    _until(lambda: all((sync / f"ready-{n}").exists() for n in range(count)), "the starters")
    (sync / "go").touch()
    return processes


def _watch(site: Path, stop: threading.Event, seen: set[str], problems: list[str]) -> None:
    """As `errcat serve` does: resolve the symlink, expect a whole site wherever it points."""
    while not stop.is_set():
        target = os.path.realpath(site)
        if target != str(site):
            name = os.path.basename(target)
            seen.add(name)
            whole = os.path.isfile(os.path.join(target, "index.html")) and os.path.isfile(
                os.path.join(target, "api", "errors", "index.json")
            )
            # Missing files are only fine in a folder retired since (the link moved on).
            if not FINISHED.match(name) or (not whole and os.path.realpath(site) == target):
                problems.append(name)
        time.sleep(0.005)


def test_builds_started_together_publish_one_complete_site(project: Path) -> None:
    """Two builds released at once (first into an empty build/, then over a published site)
    both succeed, one after the other; a reader of the symlink only ever sees whole sites."""
    site = project / "build" / "site"
    stop, seen, problems = threading.Event(), set[str](), list[str]()
    reader = threading.Thread(target=_watch, args=(site, stop, seen, problems), daemon=True)
    reader.start()
    try:
        for round_ in range(2):
            processes = _start_together(project, 2, project.parent / f"sync-{round_}")
            outputs = [p.communicate(timeout=BOUND) for p in processes]
            results = [
                (p.returncode, *output) for p, output in zip(processes, outputs, strict=True)
            ]
            for code, out, err in results:
                assert code == 0 and "published" in out and "Traceback" not in err, (out, err)
            # At most one waited for the other (the first may also finish before the second
            # looks), and it named the other.
            waits = [err for _, _, err in results if "waiting for the build started by pid" in err]
            assert len(waits) <= 1
            assert all(any(f"pid {p.pid} " in err for p in processes) for err in waits), waits
            folder = _assert_complete(project)
            versions = _versions(project / "build")
            # The published build and the one before it; no leftover of either build.
            assert len(versions) == 2 and folder.name in versions, versions
            assert not [v for v in versions if v.endswith(PARTIAL)]
    finally:
        stop.set()
        reader.join(timeout=BOUND)
    assert not problems, problems
    assert seen


def test_a_waiting_build_runs_when_the_lock_is_released(project: Path, held_lock: _Holder) -> None:
    """A build that finds the lock taken says whose it is, waits, then builds and publishes."""
    process = subprocess.Popen(
        [ERRCAT, "build"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watchdog = threading.Timer(BOUND, process.kill)  # a hung readline fails instead of hanging
    watchdog.start()
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
    finally:
        watchdog.cancel()
    assert f"errcat build: waiting for the build started by pid {os.getpid()}" in line, line
    assert process.poll() is None and not (project / "build" / "site").exists()
    held_lock.release()
    out, err = process.communicate(timeout=BOUND)
    assert process.returncode == 0 and "published" in out, err
    _assert_complete(project)


def test_a_build_that_cannot_get_its_turn_gives_up_cleanly(project: Path) -> None:
    """With the lock held past --wait: the holder's pid, exit 2, no traceback, nothing changed."""
    first = _build(project)
    assert first.returncode == 0, first.stderr
    build = project / "build"
    before = _tree(build)
    published = os.readlink(build / "site")
    holder = _Holder(project)
    try:
        waited = _build(project, "--wait", "1")
        immediate = _build(project, "--wait", "0")
    finally:
        holder.release()
    pid = os.getpid()
    assert waited.returncode == 2, waited.stderr
    assert f"waiting for the build started by pid {pid} to finish" in waited.stderr
    assert f"gave up after 1 s waiting for the build started by pid {pid}" in waited.stderr
    assert immediate.returncode == 2, immediate.stderr
    assert "to finish" not in immediate.stderr  # it did not wait
    assert f"the build started by pid {pid} holds the lock" in immediate.stderr
    for done in (waited, immediate):
        assert "the published site is unchanged" in done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""
    assert os.readlink(build / "site") == published and _tree(build) == before


def test_leftovers_of_a_killed_build_are_removed_by_the_next(project: Path) -> None:
    """SIGKILL mid-build leaves its .partial folder and frees the lock; the next build removes
    the leftover, keeps the published site whole as the previous version, and spares the
    folder of a build whose process is still running."""
    first = _build(project)
    assert first.returncode == 0, first.stderr
    build = project / "build"
    published = (build / "site").resolve()
    snapshot = _tree(published)
    process = subprocess.Popen(
        [ERRCAT, "build"], cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _until(
            lambda: process.poll() is not None or any(build.glob(f"site-*{PARTIAL}")),
            "the killed build's version folder",
        )
        assert process.poll() is None, "the build finished before it could be killed"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=BOUND)
    (leftover,) = build.glob(f"site-*{PARTIAL}")
    assert leftover.name.endswith(f"-{process.pid}{PARTIAL}")
    assert (build / "site").resolve() == published and _tree(published) == snapshot
    # A build in progress elsewhere (this test process stands in for it) keeps its folder.
    running = build / f"site-20260101T000000-{os.getpid()}{PARTIAL}"
    running.mkdir()

    # --wait 0: the killed build's lock died with it.
    after = _build(project, "--wait", "0")
    assert after.returncode == 0, after.stderr
    current = _assert_complete(project)
    assert not leftover.exists() and running.is_dir()
    assert _versions(build) == sorted([published.name, current.name, running.name])
    assert _tree(published) == snapshot


def test_a_catalog_with_broken_entries_reports_all_and_publishes_nothing(project: Path) -> None:
    """Three broken entries: their three findings with positions in one run (and the fourth
    that follows: the active entry's related id names an entry whose id is now invalid), exit
    1, and nothing under build/ changed (not even the composed folder)."""
    first = _build(project)
    assert first.returncode == 0, first.stderr
    build = project / "build"
    before = _tree(build)
    published = os.readlink(build / "site")
    path = project / "catalog" / "widgets.core.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("status: draft", "status: sketch", 1)
    text = text.replace("id: '4444444444444444'", "id: '44444444444444zz'", 1)
    text = re.sub(r"\n  retired_reason: [^\n]*", "", text, count=1)
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()

    def position(needle: str) -> str:
        (number,) = [n for n, line in enumerate(lines, 1) if needle in line]
        return f"catalog/widgets.core.yaml:{number}:{lines[number - 1].index(needle) + 1}:"

    done = _build(project)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{position('sketch')} errors[1].status has value 'sketch'" in done.stderr
    assert f"{position(chr(39) + '44444444444444zz')} errors[3].id must be" in done.stderr
    assert re.search(
        r"catalog/widgets\.core\.yaml:\d+:\d+: errors\[2\] is missing required key "
        r"'retired_reason'",
        done.stderr,
    )
    # The entries left load on their own now, so the related id of the first is checked too.
    assert "related id 4444444444444444 is not in the catalog" in done.stderr
    assert "errcat build: 4 problem(s); nothing was built" in done.stderr
    assert os.readlink(build / "site") == published and _tree(build) == before
