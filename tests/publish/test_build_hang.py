"""No hang, ever: a build whose API child is killed once it has workers of its own fails within
a deadline naming the child, leaves no process behind and the lock free; SIGINT and SIGTERM to
the build's main process end it with 130 and 143. The previous site stays whole each time.

Real `errcat build` processes on a 250-entry project (enough for the API child to fork
workers); the child is held at that point by the documented hook `ERRCAT_TEST_HOLD_API`, and
every wait is on a file or an exit, bounded.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import errcat_in, file_digests, wait_for, write_files

from catalog.core import workers
from catalog.publish.api_beside import HOLD_ENV

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or workers.worker_count() < 2,
    reason="needs /proc, fork and two cores for the API child's workers",
)

ERRCAT = str(Path(sys.executable).with_name("errcat"))
BOUND = 120.0


def _module(number: int) -> str:
    lines = []
    for index in range(25):
        lines += [
            f"def check_{index}(value: int) -> None:",
            f"    if value > {index}:",
            f'        raise ValueError(f"hang {number}.{index}: {{value}} is too big")',
            "",
            "",
        ]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hang") / "many"
    files = {
        "pyproject.toml": """\
            [project]
            name = "many"
            version = "0"

            [tool.errcat]
            package = "many"
            catalog = "errors"
            generated = "many/errors.py"
            """,
        "many/__init__.py": "",
    }
    files.update({f"many/part{n}.py": _module(n) for n in range(10)})
    write_files(root, files)
    assert errcat_in(root, "new") == 0
    result = subprocess.run(
        [ERRCAT, "build"], cwd=root, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    return root


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "many"
    shutil.copytree(template, root, symlinks=True)
    # Without the record of the previous API files, every file is written: in workers.
    (root / ".errcat-cache" / "api-links.json").unlink(missing_ok=True)
    yield root


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _in_group(group: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] not in ("Z", "X") and int(fields[2]) == group:
                found.append(int(entry.name))
    return found


def _interruptible() -> None:
    # A shell starts background jobs with SIGINT ignored, and a child inherits that (Python
    # then installs no KeyboardInterrupt handler): the build under test must be interruptible
    # however the suite itself was started.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Held:
    """A build started in its own session, its API child held once its workers run."""

    def __init__(self, root: Path, hold: Path) -> None:
        hold.mkdir()
        self.site = root / "build" / "site"
        self.before = file_digests(self.site.resolve())
        self.process = subprocess.Popen(
            [ERRCAT, "build"],
            cwd=root,
            env={**os.environ, HOLD_ENV: str(hold)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_interruptible,
        )
        record = hold / "api-child.json"
        assert wait_for(lambda: record.exists() or self.process.poll() is not None, BOUND)
        assert record.exists(), "the API child never started workers"
        data = json.loads(record.read_text(encoding="utf-8"))
        self.child, self.workers = int(data["pid"]), [int(p) for p in data["workers"]]
        assert self.workers and all(_alive(pid) for pid in self.workers)

    def end(self) -> tuple[int, str]:
        try:
            _, err = self.process.communicate(timeout=BOUND)
        except subprocess.TimeoutExpired:
            for group in (self.process.pid, self.child):
                for pid in _in_group(group):
                    os.kill(pid, signal.SIGKILL)
            self.process.communicate()
            pytest.fail("the build hung")
        return self.process.returncode, err

    def assert_nothing_left(self) -> None:
        pids = [self.child, *self.workers]
        assert wait_for(lambda: not any(_alive(pid) for pid in pids), BOUND), pids
        assert _in_group(self.process.pid) == [] and _in_group(self.child) == []
        assert file_digests(self.site.resolve()) == self.before


def test_a_killed_api_child_with_workers_fails_the_build_and_frees_the_lock(
    project: Path, tmp_path: Path
) -> None:
    """SIGKILL of the API child: the build exits 1 naming it, no worker left, lock free."""
    held = _Held(project, tmp_path / "hold")
    lock = project / "build" / ".errcat-build.lock"
    fds = Path(f"/proc/{held.child}/fd")
    assert not any(os.path.realpath(fd) == str(lock.resolve()) for fd in fds.iterdir())
    os.kill(held.child, signal.SIGKILL)
    code, err = held.end()
    assert code == 1, err
    assert f"(pid {held.child}) was killed by SIGKILL" in err and "Traceback" not in err
    held.assert_nothing_left()
    again = subprocess.run(
        [ERRCAT, "build", "--wait", "0"], cwd=project, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_the_main_process_ends_the_whole_build(
    project: Path, tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    """SIGINT/SIGTERM to the main process alone: 130/143, one line, nothing left running."""
    held = _Held(project, tmp_path / "hold")
    os.kill(held.process.pid, stop)
    returned, err = held.end()
    assert returned == code, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("errcat: ")
    held.assert_nothing_left()


def test_a_killed_main_process_takes_its_children_along(project: Path, tmp_path: Path) -> None:
    """SIGKILL of the main process: the API child and its workers die, the lock is free."""
    held = _Held(project, tmp_path / "hold")
    os.kill(held.process.pid, signal.SIGKILL)
    held.end()
    held.assert_nothing_left()
    again = subprocess.run(
        [ERRCAT, "build", "--wait", "0"], cwd=project, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stderr
