"""The generated files are skipped by the package's linters: their lines are the catalog's, so a
package's own rules (a shorter line length, force-single-line imports) add no finding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_codegen import _synthetic

from catalog.authoring.codegen import generate, generate_stub

RUFF = Path(sys.executable).with_name("ruff")
STRICT = '[tool.ruff]\nline-length = 60\n[tool.ruff.lint]\nselect = ["E", "F", "I", "W", "UP"]\n'
STRICT += "[tool.ruff.lint.isort]\nforce-single-line = true\n"


def _ruff(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RUFF), "check", "--no-fix", "--output-format", "concise", *options, "."],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("table", [False, True], ids=["written-out", "table"])
def test_a_package_linter_skips_the_generated_files(tmp_path: Path, table: bool) -> None:
    """ruff under strict settings finds nothing in the module (and the table form's stub),
    where the same files with their exemption disregarded break those settings."""
    catalog = _synthetic(3)
    (tmp_path / "pyproject.toml").write_text(STRICT, encoding="utf-8")
    (tmp_path / "_errcat_errors.py").write_text(
        generate(catalog, "https://docs.example.org/", table=table), encoding="utf-8"
    )
    if table:
        (tmp_path / "_errcat_errors.pyi").write_text(generate_stub(catalog), encoding="utf-8")
    done = _ruff(tmp_path)
    assert done.returncode == 0, done.stdout
    disregarded = _ruff(tmp_path, "--ignore-noqa")
    assert disregarded.returncode == 1
    assert ": E501 " in disregarded.stdout
