"""`errcat codegen` and `errcat new` killed with SIGKILL mid-run leave the old output or the new.

Each command runs as a real process on a synthetic project big enough to take about a second
(hundreds of catalog entries, hundreds of raise sites). One uninterrupted run gives the new
output and the run's length; further runs start again from the old output and are killed after
seeded random delays spread over that length. After every kill, each output file must equal,
byte for byte, either what it was before or what the uninterrupted run wrote; a truncated or
half-written file fails. Temporary files a killed run could not remove are tolerated (SIGKILL
allows no clean-up) but must never be taken for output.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from catalog.loader import load_file

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL to kill a run mid-way"
)

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

ENTRIES = 700
MODULES = 4
SITES_PER_MODULE = 90
KILLS = 6
RUN_TIMEOUT = 120.0


def _errcat(root: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "catalog", *args],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _complete(root: Path, *args: str) -> float:
    """Run to the end; return the wall time."""
    start = time.perf_counter()
    process = _errcat(root, *args)
    _, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 0, err.decode()
    return time.perf_counter() - start


def _kill_after(root: Path, args: tuple[str, ...], delay: float) -> bool:
    """Start the command, SIGKILL it after `delay` seconds; whether it was still running."""
    process = _errcat(root, *args)
    time.sleep(delay)
    running = process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=RUN_TIMEOUT)
    return running


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
    """After SIGKILL at any moment, runtime/errors.py is the old module or the new, never a mix."""
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
    length = _complete(root, "codegen")
    new = target.read_bytes()
    assert old != new and len(new) > 200_000
    outcomes: list[str] = []
    rng = random.Random(20240611)
    for _ in range(KILLS):
        target.write_bytes(old)
        running = _kill_after(root, ("codegen",), rng.uniform(0.1, 1.05) * length)
        now = target.read_bytes()
        assert now in (old, new), f"errors.py is neither old nor new ({len(now)} bytes)"
        outcomes.append(("killed " if running else "finished ") + ("old" if now == old else "new"))
        compile(now, str(target), "exec")  # whichever it is, it is a whole module
    # Some kill must have hit a running process, or the test proved nothing.
    assert any(o.startswith("killed") for o in outcomes), outcomes
    # Leftover temporaries are hidden and not Python: nothing scans or imports them.
    assert all(not p.name.endswith(".py") for p in _temporaries(root / "pkg"))


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
    """After SIGKILL at any moment, each catalog file is as before or as `new` writes it, and
    loads; files `new` creates either exist whole or not at all."""
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
    length = _complete(root, "new")
    new = _snapshot(knowledge)
    assert sorted(new) == [f"unit{m}.yaml" for m in range(MODULES)]
    assert all(new[name] != old[name] for name in old)
    outcomes: list[str] = []
    rng = random.Random(20240612)
    for _ in range(KILLS):
        for path in knowledge.glob("*.yaml"):
            path.unlink()
        for name, data in old.items():
            (knowledge / name).write_bytes(data)
        running = _kill_after(root, ("new",), rng.uniform(0.1, 1.05) * length)
        now = _snapshot(knowledge)
        assert set(now) <= set(new)
        states = []
        for name, data in now.items():
            assert data in (old.get(name), new[name]), f"{name} is neither old nor new"
            assert load_file(knowledge / name)[1] == []
            states.append("new" if data == new[name] else "old")
        states += ["absent"] * (len(new) - len(now))
        outcomes.append(("killed: " if running else "finished: ") + ",".join(sorted(states)))
    assert any(o.startswith("killed") for o in outcomes), outcomes
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
