"""`errcat codegen` and `errcat new` killed with SIGKILL mid-run leave the old output or the new.

Each command runs as a real process, stopped at a chosen point of its writing: a small wrapper
makes the process pause at the N-th call of `os.fsync` (a staged file is written, nothing is
replaced yet) or of `os.replace` (the N-th file is about to be swapped in), announce it with a
marker file, and wait; the test waits for the marker, then kills the process with SIGKILL. So
every kill lands exactly where it is meant to, however loaded the machine is. After each kill,
every output file must equal, byte for byte, either what it was before or what an
uninterrupted run writes; temporary files a killed run could not remove are tolerated (SIGKILL
allows no clean-up) but must never be taken for output.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import wait_for

from catalog.entries.loader import load_file

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL to kill a run mid-way"
)

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

ENTRIES = 300
MODULES = 4
SITES_PER_MODULE = 30
RUN_TIMEOUT = 120.0

# Runs errcat with `os.<call>` pausing at its N-th call; argv: call, N, marker, errcat args.
_PAUSING = textwrap.dedent(
    """
    import os, sys, time
    call, nth, marker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    original = getattr(os, call)
    seen = []

    def pausing(*args, **kwargs):
        seen.append(None)
        if len(seen) == nth:
            open(marker, "w").close()
            time.sleep(3600)
        return original(*args, **kwargs)

    setattr(os, call, pausing)
    import errcat
    sys.exit(errcat.main(sys.argv[4:]))
    """
)


def _complete(root: Path, *args: str) -> None:
    """Run the command to its end."""
    done = subprocess.run(
        [sys.executable, "-m", "errcat", *args], cwd=root, capture_output=True, timeout=RUN_TIMEOUT
    )
    assert done.returncode == 0, done.stderr.decode()


def _kill_at(root: Path, call: str, nth: int, *args: str) -> None:
    """Run the command until the `nth` call of `os.<call>`, then SIGKILL it there."""
    marker = root / f".paused-{call}-{nth}"
    marker.unlink(missing_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-c", _PAUSING, call, str(nth), str(marker), *args],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        reached = wait_for(lambda: marker.exists() or process.poll() is not None, RUN_TIMEOUT)
        assert reached and marker.exists(), (
            f"the run ended before the {nth}. os.{call}: {process.stderr.read().decode()}"
            if process.poll() is not None
            else "the run never reached its pause point"
        )
        assert process.poll() is None  # paused, so the kill lands mid-write
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=RUN_TIMEOUT)
    marker.unlink()


def _big_catalog(revision: str) -> str:
    lines = ["module: pkg.big", "errors:"]
    for index in range(ENTRIES):
        lines += [
            f'  - id: "{0xA000000000000000 + index:016x}"',
            f"    name: Failure{index}Error",
            "    exception: ValueError",
            "    status: draft",
            f'    message: "failure {index} ({revision}): value {{value}} exceeds {{limit}}"',
        ]
    return "\n".join(lines) + "\n"


def _temporaries(folder: Path) -> list[Path]:
    return sorted(folder.glob(".*.tmp"))


def test_codegen_killed_leaves_old_or_new_module(tmp_path: Path) -> None:
    """Killed while the new module is staged or about to replace the old one, codegen leaves
    the old module, whole; the run after it writes the new one."""
    root = tmp_path
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "knowledge").mkdir()
    catalog = root / "knowledge" / "big.yaml"
    target = root / "pkg" / "errors.py"
    catalog.write_text(_big_catalog("first"), encoding="utf-8")
    _complete(root, "codegen")
    old = target.read_bytes()
    catalog.write_text(_big_catalog("second"), encoding="utf-8")
    _complete(root, "codegen")
    new = target.read_bytes()
    assert old != new
    for call in ("fsync", "replace"):
        target.write_bytes(old)
        _kill_at(root, call, 1, "codegen")
        assert target.read_bytes() == old, f"killed at os.{call}, errors.py is not the old module"
        compile(target.read_bytes(), str(target), "exec")
    # Leftover temporaries are hidden and not Python: nothing scans or imports them.
    assert _temporaries(root / "pkg")
    assert all(not p.name.endswith(".py") for p in _temporaries(root / "pkg"))
    _complete(root, "codegen")
    assert target.read_bytes() == new


def _package(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    for module in range(MODULES):
        body = ["def check(value, limit):"]
        for site in range(SITES_PER_MODULE):
            body += [
                f"    if value == {site}:",
                f'        raise ValueError(f"unit {module}/{site}: value {{value}} is over {{limit}}")',
            ]
        (root / "pkg" / f"unit{module}.py").write_text("\n".join(body) + "\n", encoding="utf-8")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.yaml"))}


def test_new_killed_leaves_each_catalog_file_old_or_new(tmp_path: Path) -> None:
    """Killed while staging, before the first swap or between two swaps, `new` leaves each
    catalog file as it was or as an uninterrupted run writes it, and each one loads; files it
    creates exist whole or not at all, and files are swapped in name order."""
    root = tmp_path
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    _package(root)
    knowledge = root / "knowledge"
    knowledge.mkdir()
    # Half the modules already have a catalog file that `new` appends to; the rest get new files.
    for module in range(0, MODULES, 2):
        (knowledge / f"unit{module}.yaml").write_text(
            f"module: pkg.unit{module}\nerrors:\n"
            f'  - id: "b{module:015x}"\n    name: Unit{module}Legacy\n'
            "    exception: RuntimeError\n    status: draft\n"
            f'    message: "unit {module} was retired"\n',
            encoding="utf-8",
        )
    old = _snapshot(knowledge)
    _complete(root, "new")
    new = _snapshot(knowledge)
    names = sorted(new)
    assert names == [f"unit{m}.yaml" for m in range(MODULES)]
    assert all(new[name] != old[name] for name in old)
    # (call, nth) → how many files, in name order, are new after the kill.
    for call, nth, swapped in (("fsync", 2, 0), ("replace", 1, 0), ("replace", 3, 2)):
        for path in knowledge.glob("*.yaml"):
            path.unlink()
        for name, data in old.items():
            (knowledge / name).write_bytes(data)
        _kill_at(root, call, nth, "new")
        now = _snapshot(knowledge)
        for index, name in enumerate(names):
            expected = new[name] if index < swapped else old.get(name)
            assert now.get(name) == expected, f"killed at os.{call} #{nth}: {name}"
            if name in now:
                assert load_file(knowledge / name)[1] == []
    assert all(p.suffix == ".tmp" for p in _temporaries(knowledge))


def test_new_recovers_from_a_partly_written_catalog(tmp_path: Path) -> None:
    """`new` writes one file at a time, so a kill between two files leaves some new and some
    old; running it again completes exactly the catalog an uninterrupted run writes."""
    root = tmp_path
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    _package(root)
    knowledge = root / "knowledge"
    _complete(root, "new")
    new = _snapshot(knowledge)
    # As a kill after the second of four files leaves it (files are written in name order).
    for name in sorted(new)[2:]:
        (knowledge / name).unlink()
    _complete(root, "new")
    assert _snapshot(knowledge) == new
