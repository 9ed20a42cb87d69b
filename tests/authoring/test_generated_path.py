"""`[tool.errcat] generated` names a `.py` path inside the project that is absent or errcat's
own: anything else is refused by codegen (exit 2, the file's bytes unchanged) and reported by
every command that names the generated module (exit 2, no traceback, nothing written)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_build_project import make_project

from catalog.cli import main


def _set_generated(root: Path, value: str) -> None:
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace('generated = "widgets/errors.py"', f"generated = {value!r}"), encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("value", "victim", "expected"),
    [
        ("catalog/widgets.core.yaml", "catalog/widgets.core.yaml", "ending in .py"),
        ("widgets/__init__.py", "widgets/__init__.py", "not written by errcat codegen"),
        ("../outside.py", "../outside.py", "outside the project"),
        ("ABSOLUTE", "../absolute.py", "outside the project"),
    ],
)
def test_codegen_refuses_a_path_it_may_not_write(
    value: str,
    victim: str,
    expected: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Someone's file (or one outside the project) keeps its bytes; codegen exits 2."""
    root = make_project(tmp_path / "project")
    target = (root / victim).resolve()
    if not target.exists():
        target.write_text("x = 1  # someone's\n", encoding="utf-8")
    if value == "ABSOLUTE":
        value = str(target)
    _set_generated(root, value)
    before = target.read_bytes()
    monkeypatch.chdir(root)
    assert main(["codegen"]) == 2
    err = capsys.readouterr().err
    assert "[tool.errcat] generated" in err and expected in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert target.read_bytes() == before
    for command in (["check"], ["build"], ["stats"], ["new"], ["migrate"]):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert "[tool.errcat] generated" in err and "Traceback" not in err
    assert target.read_bytes() == before
    assert not (root / "build").exists()
    assert not (root / ".errcat-cache").exists()


def test_codegen_rewrites_its_own_file_and_writes_a_new_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An absent path is written; the file codegen wrote is rewritten when stale."""
    root = make_project(tmp_path)
    monkeypatch.chdir(root)
    assert main(["codegen"]) == 0
    module = root / "widgets" / "errors.py"
    text = module.read_text(encoding="utf-8")
    module.write_text(text + "STALE = 1\n", encoding="utf-8")
    assert main(["codegen"]) == 0
    assert module.read_text(encoding="utf-8") == text
    capsys.readouterr()
