"""A renamed entry: `check` reports the old and new class names, `migrate` renames the raises and
imports and writes the module, and the package then imports and raises the new class."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.cli import main

MODULE = '''\
"""Pools."""

import os


def open_pool(size):
    if size <= 0:
        raise ValueError(f"pool size must be positive, got {size}")
    return os.sep


def take(pool, n):
    if n > pool:
        raise RuntimeError(f"cannot take {n} from a pool of {pool}")
    return n


def guarded(size):
    try:
        return open_pool(size)
    except PoolSizePositiveError:
        return None
'''

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""


def _project(root: Path, settings: str) -> None:
    (root / "pyproject.toml").write_text(PYPROJECT + settings, encoding="utf-8")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "pool.py").write_text(MODULE, encoding="utf-8")


def _errors(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["check", "--json"])
    report = json.loads(capsys.readouterr().out)
    return code, [
        f"{Path(f['path']).name}:{f['line']}: {f['message']}; {f['fix']}"
        for f in report["findings"]
        if f["severity"] == "error"
    ]


def _rename(root: Path, old: str, new: str) -> None:
    catalog = root / "knowledge" / "pool.yaml"
    text = catalog.read_text(encoding="utf-8")
    assert f"name: {old}\n" in text
    catalog.write_text(text.replace(f"name: {old}\n", f"name: {new}\n"), encoding="utf-8")


@pytest.mark.parametrize(
    ("settings", "imports"),
    [
        ("", "from pkg.errors import CannotTakePoolError, ZzPoolSizeMustBePositiveError\n"),
        (
            "\n[tool.ruff.lint.isort]\nforce-single-line = true\n",
            "from pkg.errors import CannotTakePoolError\n"
            "from pkg.errors import ZzPoolSizeMustBePositiveError\n",
        ),
    ],
    ids=["default", "force-single-line"],
)
def test_rename_is_reported_then_migrated(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    settings: str,
    imports: str,
) -> None:
    """Rename in the YAML → check names old and new with `run: errcat migrate` (exit 1), codegen
    refuses to drop the old name, migrate renames raises, `except` and imports (sorted as the
    project sorts) and writes the module → check is green and the package raises the new class."""
    _project(tmp_path, settings)
    monkeypatch.chdir(tmp_path)
    assert main(["new"]) == 0
    assert main(["codegen"]) == 0
    assert main(["migrate"]) == 0
    source = (tmp_path / "pkg" / "pool.py").read_text(encoding="utf-8")
    # The `except` is the package's own use of the class, written before its raise was typed.
    assert "raise PoolSizePositiveError(size=size)" in source
    assert main(["check"]) == 0
    raise_line = source.splitlines().index("        raise PoolSizePositiveError(size=size)") + 1

    _rename(tmp_path, "PoolSizePositiveError", "ZzPoolSizeMustBePositiveError")
    entry_id = re.search(
        r'id: "([0-9a-f]{16})"\n    name: ZzPoolSizeMustBePositiveError',
        (tmp_path / "knowledge" / "pool.yaml").read_text(encoding="utf-8"),
    )
    assert entry_id is not None
    code, lines = _errors(capsys)
    assert code == 1
    fix = "run: errcat migrate (it renames the raises and imports, then writes the module)"
    assert lines == [
        f"pool.yaml:5: entry {entry_id[1]} was renamed PoolSizePositiveError → "
        f"ZzPoolSizeMustBePositiveError; the generated module still defines "
        f"PoolSizePositiveError; {fix}",
        f"errors.py:1: the generated module is stale: it differs from what the catalog "
        f"generates; {fix}",
        f"pool.py:{raise_line}: raises PoolSizePositiveError, the old name of ZzPoolSizeMustBePositiveError"
        f" (entry {entry_id[1]}); run: errcat migrate",
    ]
    assert main(["codegen"]) == 1
    assert "errcat codegen: pkg/pool.py still use the old names" in capsys.readouterr().err
    assert "class PoolSizePositiveError(" in (tmp_path / "pkg" / "errors.py").read_text()

    assert main(["migrate"]) == 0
    migrated = (tmp_path / "pkg" / "pool.py").read_text(encoding="utf-8")
    assert "PoolSizePositiveError" not in migrated
    assert "raise ZzPoolSizeMustBePositiveError(size=size)" in migrated
    assert imports in migrated
    assert main(["check"]) == 0
    lint = subprocess.run(
        [str(Path(sys.executable).with_name("ruff")), "check", "--select", "I,F", "pkg/pool.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pkg.pool\n"
            "assert pkg.pool.guarded(0) is None\n"
            "try:\n    pkg.pool.open_pool(0)\n"
            "except ValueError as e:\n    print(type(e).__name__, e)\n",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.stdout == "ZzPoolSizeMustBePositiveError pool size must be positive, got 0\n"
