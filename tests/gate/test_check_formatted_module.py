"""A project's formatter may rewrap the generated module: `check` compares it with what
codegen writes by its code, not its layout, and `codegen` leaves the formatted file alone;
a real change to the code is still stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_check_docs_links import STALE, _check, _project

from catalog.authoring import codegen
from catalog.cli import main

RUFF = Path(sys.executable).with_name("ruff")


def _format(path: Path, width: int) -> None:
    done = subprocess.run(
        [str(RUFF), "format", "--line-length", str(width), "--no-cache", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _not_again(*args: object, **kwargs: object) -> object:
    raise AssertionError("the module was generated again to compare")


@pytest.mark.skipif(not RUFF.is_file(), reason="ruff is not installed beside this Python")
def test_a_formatted_module_is_current_and_codegen_leaves_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path / "widgets", None)
    monkeypatch.chdir(root)
    assert main(["codegen"]) == 0
    module = root / "widgets" / "errors.py"
    written = module.read_text(encoding="utf-8")
    _format(module, 40)
    formatted = module.read_text(encoding="utf-8")
    assert formatted != written  # the formatter did rewrap it
    capsys.readouterr()
    code, out = _check(capsys)
    assert code == 0 and STALE not in out, out
    # Known alike now: the next check does not generate the module again to compare.
    with monkeypatch.context() as patch:
        patch.setattr(codegen, "generated_files", _not_again)
        code, out = _check(capsys)
    assert code == 0 and STALE not in out, out
    assert main(["codegen"]) == 0
    assert "is up to date" in capsys.readouterr().out
    assert module.read_text(encoding="utf-8") == formatted
    # A change of code, not of layout, is stale, and codegen writes its own module again.
    module.write_text(formatted.replace("AlreadyStoppedError", "AlreadyHaltedError"), "utf-8")
    code, out = _check(capsys)
    assert code == 1 and STALE in out
    assert main(["codegen"]) == 0
    assert module.read_text(encoding="utf-8") == written
