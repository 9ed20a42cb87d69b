"""`errcat check --format github`: findings as GitHub Actions workflow commands that annotate
the lines of a pull request, with the exit code of the human output."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_files

from catalog.cli import main
from catalog.cli.commands.check import github_command

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

CATALOG = """\
module: pkg.m
errors:
  - id: 47afe9f0304f070c
    name: PoolSizePositiveError
    exception: ValueError
    status: draft
    message: "pool size must be positive, got {size}"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package with one catalogued raise and its generated module, as the current folder."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT,
            "pkg/__init__.py": "",
            "pkg/m.py": """\
                from pkg.errors import PoolSizePositiveError


                def open_pool(size):
                    if size <= 0:
                        raise PoolSizePositiveError(size=size)
                    return size
                """,
            "knowledge/m.yaml": CATALOG,
        },
    )
    monkeypatch.chdir(tmp_path)
    assert main(["codegen"]) == 0
    return tmp_path


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["check", *args])
    return code, capsys.readouterr().out.splitlines()


def test_escaping_follows_the_workflow_command_syntax() -> None:
    """`%`, CR and LF are encoded in the message; in properties `:` and `,` are encoded too."""
    assert github_command("error", "a:b,c%.yaml", 3, 7, "50% done\r\nnext: x, y") == (
        "::error file=a%3Ab%2Cc%25.yaml,line=3,col=7::50%25 done%0D%0Anext: x, y"
    )


def test_an_error_is_an_error_command_at_its_position(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A drifted raise is `::error file=...,line=...,col=...::message; fix` and exits 1."""
    source = project / "pkg" / "m.py"
    source.write_text(
        source.read_text(encoding="utf-8") + "\n\ndef close(x):\n    raise KeyError(f'no {x}')\n",
        encoding="utf-8",
    )
    code, lines = _check(capsys, "--format", "github")
    assert code == 1
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith("::error file=pkg/m.py,line=11,col=5::")
    human_code, human = _check(capsys)
    assert human_code == 1
    message = next(line for line in human if line.startswith("pkg/m.py:11:5: "))
    assert errors[0] == "::error file=pkg/m.py,line=11,col=5::" + message.removeprefix(
        "pkg/m.py:11:5: "
    )


def test_warnings_are_warning_commands_and_exit_zero(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clean project with a draft entry: one `::warning` for the file's drafts, exit 0."""
    code, lines = _check(capsys, "--format", "github")
    assert code == 0
    commands = [line for line in lines if line.startswith("::")]
    assert commands == [
        "::warning file=knowledge/m.yaml,line=3,col=5::1 draft entry (PoolSizePositiveError); "
        "write their prose and set status: active"
    ]
    assert lines[-1].startswith("errcat check ok: 0 error(s), 1 warning(s)")


def test_catalog_findings_keep_their_positions(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A catalog finding whose message holds `:` and `,` keeps them in the message (only the
    properties encode them)."""
    path = project / "knowledge" / "m.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "    sevrity: high\n", encoding="utf-8")
    code, lines = _check(capsys, "--format", "github")
    assert code == 1
    assert lines[0] == (
        "::error file=knowledge/m.yaml,line=8,col=5::unknown key 'sevrity' in errors[0]; "
        "use one of: example, exception, id, meaning, message, name, related, replaced_by, "
        "retired_reason, since, situations, solutions, status, trigger"
    )


def test_json_and_github_together_are_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two output formats at once cannot both be printed: exit 2 with a message."""
    code = main(["check", "--json", "--format", "github"])
    assert code == 2
    assert "--json and --format github are alternatives" in capsys.readouterr().err
