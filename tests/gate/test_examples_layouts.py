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


class PoolClosed(Exception):
    """The package's own class: catalogued in place, raised as written."""


def take(n):
    if n > LIMIT:
        raise TakeTooMany(n=n, limit=LIMIT)
    return n


def close(name, closed):
    if closed:
        raise PoolClosed(f"pool {name} is already closed")
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
CLOSES = "from toy.pool import close\nclose('p', True)\n"
TAKE = ("2222222222222222", "TakeTooMany", "ValueError", "cannot take {n}, the limit is {limit}")
CLOSE = ("3333333333333333", "PoolClosed", "toy.pool.PoolClosed", "pool {name} is already closed")


def _entry(fields: tuple[str, str, str, str], before: str, after: str = RUNS) -> str:
    identifier, name, exception, message = fields

    def block(code: str) -> str:
        return textwrap.indent(code, " " * 8).rstrip("\n")

    return "\n".join(
        [
            f'  - id: "{identifier}"',
            f"    name: {name}",
            f"    exception: {exception}",
            "    status: active",
            f'    message: "{message}"',
            "    meaning: The pool hands out at most `limit` items, and none once closed.",
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
            block(after),
            "",
        ]
    )


def _toy_project(root: Path, layout: str, *entries: str) -> Path:
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
    entries = entries or (_entry(TAKE, RAISES), _entry(CLOSE, CLOSES))
    (root / "errors" / "pool.yaml").write_text(
        "module: toy.pool\nerrors:\n" + "".join(entries), encoding="utf-8"
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
    _toy_project(tmp_path, layout)
    code, report = _check_examples(tmp_path, monkeypatch, capsys)
    assert (report["examples"]["verified"], report["examples"]["failed"]) == (2, 0), report
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
    _toy_project(tmp_path, layout, _entry(TAKE, RUNS), _entry(CLOSE, CLOSES))
    code, report = _check_examples(tmp_path, monkeypatch, capsys)
    assert code == 1
    assert (report["examples"]["verified"], report["examples"]["failed"]) == (1, 1)
    assert [(f["stage"], f["message"]) for f in report["findings"]] == [
        (
            "examples",
            "example of entry 2222222222222222 (TakeTooMany) failed: before ran to its end "
            "without raising TakeTooMany (2222222222222222)",
        )
    ]


MORE_RAISES = """

def drain(name):
    raise PoolClosed(f"pool {name} cannot be drained")


def reopen(name):
    raise PoolClosed(f"pool {name} cannot be reopened")


def stop(name):
    raise PoolClosed(f"pool {name} cannot be stopped")
"""


def test_an_entry_catalogued_in_place_is_judged_by_its_class_and_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The package's own class has no generated `id`: its example verifies when `before` raises
    that class with a text the template prints, and fails with another text, with another
    class printing the entry's text, or when `after` still raises it."""

    def in_place(identifier: str, name: str, verb: str) -> tuple[str, str, str, str]:
        return (identifier, name, "toy.pool.PoolClosed", f"pool {{name}} cannot be {verb}")

    stopping = "from toy.pool import stop\nstop('p')\n"
    package = _toy_project(
        tmp_path,
        "src",
        _entry(TAKE, RAISES),
        _entry(CLOSE, CLOSES),
        _entry(
            in_place("4444444444444444", "PoolNotDrained", "drained"),
            "from toy.pool import PoolClosed\nraise PoolClosed('the pool is full')\n",
        ),
        _entry(
            in_place("5555555555555555", "PoolNotReopened", "reopened"),
            "raise RuntimeError('pool p cannot be reopened')\n",
        ),
        _entry(in_place("6666666666666666", "PoolNotStopped", "stopped"), stopping, stopping),
    )
    with (package / "pool.py").open("a", encoding="utf-8") as module:
        module.write(MORE_RAISES)
    code, report = _check_examples(tmp_path, monkeypatch, capsys)
    assert code == 1
    assert [f["stage"] for f in report["findings"]] == ["examples"] * 3, report["findings"]
    reasons = {row["name"]: row["reason"] for row in report["examples"]["results"]}
    assert reasons == {
        "TakeTooMany": "",
        "PoolClosed": "",
        "PoolNotDrained": "before raised toy.pool.PoolClosed: the pool is full instead of "
        "PoolNotDrained (4444444444444444)",
        "PoolNotReopened": "before raised RuntimeError: pool p cannot be reopened instead of "
        "PoolNotReopened (5555555555555555)",
        "PoolNotStopped": "after still raises PoolNotStopped (6666666666666666): pool p cannot "
        "be stopped",
    }


def test_the_import_root_follows_the_configured_package(tmp_path: Path) -> None:
    """`src/` for a src layout, the project root for a flat one or without a configuration."""
    src_project = tmp_path / "src_project"
    flat_project = tmp_path / "flat_project"
    bare = tmp_path / "bare"
    for project, layout in ((src_project, "src"), (flat_project, "flat")):
        project.mkdir()
        _toy_project(project, layout)
    bare.mkdir()
    assert package_import_root(src_project) == (src_project / "src").resolve()
    assert package_import_root(flat_project) == flat_project.resolve()
    assert package_import_root(bare) == bare
