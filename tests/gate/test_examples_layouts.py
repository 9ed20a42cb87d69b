"""`errcat check --examples` imports the package as its users do, in src/ and flat layouts alike."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from catalog.cli import main
from catalog.gate.examples import package_import_root

POOL = '''\
"""A pool whose limit is read from the environment when the module is imported."""

import os

from toy._errcat_errors import TakeTooMany

LIMIT = int(os.environ.get("TOY_LIMIT", "4"))


def take(n):
    if n > LIMIT:
        raise TakeTooMany(n=n, limit=LIMIT)
    return n
'''

# `before` lowers the limit and only then imports the package: it raises only when the package
# is imported by the example's own process, not ahead of it by the warm worker.
RAISES = """\
import os
os.environ["TOY_LIMIT"] = "1"
from toy.pool import take
take(2)
"""
RUNS = """\
from toy.pool import take
take(2)
"""


def _entry(identifier: str, name: str, message: str, before: str) -> str:
    def block(code: str) -> str:
        return textwrap.indent(code, " " * 8).rstrip("\n")

    return "\n".join(
        [
            f'  - id: "{identifier}"',
            f"    name: {name}",
            "    exception: ValueError",
            "    status: active",
            f'    message: "{message}"',
            "    meaning: The pool hands out at most `limit` items at once.",
            "    solutions:",
            "      - Take fewer items.",
            "      - Raise `TOY_LIMIT`.",
            '    trigger: "`take(n)` with `n` above the limit."',
            "    situations:",
            "      - A limit lowered through `TOY_LIMIT`.",
            "    example:",
            "      before: |",
            block(before),
            "      after: |",
            block(RUNS),
            "",
        ]
    )


def _toy_project(root: Path, layout: str, before: str) -> Path:
    """A project with package `toy` (under `src/` for the src layout), its catalog and module."""
    package = root / "src" / "toy" if layout == "src" else root / "toy"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "pool.py").write_text(POOL, encoding="utf-8")
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [project]
            name = "toy"
            version = "0.1"
            requires-python = ">=3.11"

            [tool.errcat]
            package = "{package.relative_to(root).as_posix()}"
            catalog = "errors"
            """
        ),
        encoding="utf-8",
    )
    (root / "errors").mkdir()
    entry = _entry(
        "2222222222222222", "TakeTooMany", "cannot take {n}, the limit is {limit}", before
    )
    (root / "errors" / "pool.yaml").write_text(
        "module: toy.pool\nerrors:\n" + entry, encoding="utf-8"
    )
    return package


def _check_examples(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any]]:
    monkeypatch.chdir(root)
    assert main(["codegen"]) == 0
    capsys.readouterr()
    code = main(["check", "--examples", "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("layout", ["src", "flat"])
def test_an_example_that_raises_its_entry_is_verified(
    layout: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The example imports `toy` by its name in either layout, in its own child, and verifies."""
    _toy_project(tmp_path, layout, RAISES)
    code, report = _check_examples(tmp_path, monkeypatch, capsys)
    assert (report["examples"]["verified"], report["examples"]["failed"]) == (1, 0), report
    assert code == 0


@pytest.mark.parametrize("layout", ["src", "flat"])
def test_an_example_that_does_not_raise_fails_the_check(
    layout: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A `before` that imports the package and runs to its end is a finding, not an import
    error: the check judges the example itself in either layout."""
    _toy_project(tmp_path, layout, RUNS)
    code, report = _check_examples(tmp_path, monkeypatch, capsys)
    assert code == 1
    assert (report["examples"]["verified"], report["examples"]["failed"]) == (0, 1)
    assert [(f["stage"], f["message"]) for f in report["findings"]] == [
        (
            "examples",
            "example of entry 2222222222222222 (TakeTooMany) failed: before ran to its end "
            "without raising TakeTooMany (2222222222222222)",
        )
    ]


def test_the_import_root_follows_the_configured_package(tmp_path: Path) -> None:
    """`src/` for a src layout, the project root for a flat one or without a configuration."""
    src_project = tmp_path / "src_project"
    flat_project = tmp_path / "flat_project"
    bare = tmp_path / "bare"
    for project, layout in ((src_project, "src"), (flat_project, "flat")):
        project.mkdir()
        _toy_project(project, layout, RAISES)
    bare.mkdir()
    assert package_import_root(src_project) == (src_project / "src").resolve()
    assert package_import_root(flat_project) == flat_project.resolve()
    assert package_import_root(bare) == bare
