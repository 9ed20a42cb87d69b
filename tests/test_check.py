"""`errcat check`, `new` and `migrate` on small projects and on a copy of this one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catalog.cli import main

ROOT = Path(__file__).resolve().parents[1]

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

MODULE = '''\
"""A module with two checks."""


def open_pool(size):
    if size <= 0:
        raise ValueError(f"pool size must be positive, got {size}")
    return size


def take(pool, n):
    if n > pool:
        raise RuntimeError(f"cannot take {n} from a pool of {pool}")
    return n
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "pool.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["check", "--json"])
    report = json.loads(capsys.readouterr().out)
    lines = [
        f"{f['path']}:{f['line']}:{f['column']}: {f['message']}; {f['fix']}"
        for f in report["findings"]
        if f["severity"] == "error"
    ]
    return code, lines


def test_adoption_path_end_to_end(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """new → codegen → migrate turns raw raises into catalogued typed raises that check accepts."""
    code, lines = _check(capsys)
    assert code == 1
    assert (
        "pkg/pool.py:6:9: uncatalogued raise of ValueError; run: errcat new, then errcat migrate; "
        "or mark it # errcat: ignore[reason]" in lines
    )
    assert main(["new"]) == 0
    text = (project / "knowledge" / "pool.yaml").read_text(encoding="utf-8")
    assert 'message: "pool size must be positive, got {size}"' in text
    assert "status: draft" in text
    assert main(["codegen"]) == 0
    code, lines = _check(capsys)
    assert code == 1
    assert any("raise the typed" in line and line.endswith("run: errcat migrate") for line in lines)
    assert main(["migrate"]) == 0
    migrated = (project / "pkg" / "pool.py").read_text(encoding="utf-8")
    assert "raise PoolSizePositiveError(size=size)" in migrated
    assert "from pkg.errors import" in migrated
    code, lines = _check(capsys)
    assert (code, lines) == (0, [])
    assert main(["codegen", "--check"]) == 0


def test_new_dry_run_writes_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`new --dry-run` prints the drafts and leaves the catalog folder alone."""
    assert main(["new", "--dry-run"]) == 0
    assert "name: PoolSizePositiveError" in capsys.readouterr().out
    assert not (project / "knowledge").exists()


def test_migrate_dry_run_prints_diff(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`migrate --dry-run` prints a unified diff and changes no file."""
    assert main(["new"]) == 0
    assert main(["codegen"]) == 0
    capsys.readouterr()
    assert main(["migrate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "--- a/pkg/pool.py" in out
    assert '-        raise ValueError(f"pool size must be positive, got {size}")' in out
    assert (project / "pkg" / "pool.py").read_text(encoding="utf-8") == MODULE


def test_codegen_check_reports_stale_module(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A catalog edit without codegen makes `codegen --check` exit 1 with a diff and the fix."""
    assert main(["new"]) == 0
    assert main(["codegen"]) == 0
    path = project / "knowledge" / "pool.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("got {size}", "got {size!r}"), encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["codegen", "--check"]) == 1
    captured = capsys.readouterr()
    assert '+    template = "pool size must be positive, got {size!r}"' in captured.out
    assert "run: errcat codegen" in captured.err


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of this project's runtime, catalog and configuration."""
    for name in ("pyproject.toml",):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(
        ROOT / "runtime", tmp_path / "runtime", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "catalog" / "errors", tmp_path / "catalog" / "errors")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_copy_of_this_project_passes(copied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The project as committed has no drift."""
    assert _check(capsys) == (0, [])


def test_drift_is_reported_with_positions(copied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An uncatalogued raise, an entry raised nowhere and a stale exemption are each reported."""
    bridge = copied / "runtime" / "tensor_bridge.py"
    source = bridge.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    # 1. Remove the only raise of Complex128Unsupported.
    removed = next(i for i, line in enumerate(lines) if "raise Complex128Unsupported()" in line)
    lines[removed] = lines[removed].replace("raise Complex128Unsupported()", "pass")
    # 2. Add an uncatalogued raise and 3. an exemption on a line that raises nothing.
    lines.append("\n\ndef _extra(x: int) -> None:\n    if x:\n        raise KeyError(x)\n")
    lines.append("    return None  # errcat: ignore[left over]\n")
    bridge.write_text("".join(lines), encoding="utf-8")
    total = len(lines) + 4  # the appended text spans 5 lines after the blank ones
    code, found = _check(capsys)
    assert code == 1
    yaml_path = "catalog/errors/tensor_bridge.yaml"
    entry_line = next(
        n
        for n, line in enumerate((copied / yaml_path).read_text().splitlines(), 1)
        if "id: 6e1d4aa080432dab" in line
    )
    assert found == sorted(found, key=lambda x: (x.split(":")[0], int(x.split(":")[1])))
    assert (
        f"{yaml_path}:{entry_line}:5: entry 6e1d4aa080432dab (Complex128Unsupported) is raised nowhere in "
        "runtime; raise it, or set status: retired with a retired_reason" in found
    )
    assert any(
        line.startswith("runtime/tensor_bridge.py:") and ": uncatalogued raise of KeyError;" in line
        for line in found
    )
    assert any(
        line.startswith(f"runtime/tensor_bridge.py:{total}:")
        and "exemption [left over] matches no raise site" in line
        for line in found
    )
    assert len(found) == 3, found
