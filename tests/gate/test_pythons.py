"""requires-python: the PEP 440 evaluator, the finding's position, and `errcat codegen` refusing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.gate.pythons import (
    oldest_admitted_below,
    parse_version,
    read_requires_python,
    suggested_specifier,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("specifier", "oldest"),
    [
        (">=3.6", "3.6"),
        (">=3.7", None),  # jinja2 3.1.4
        (">=3.8", None),  # packaging 24.2, itsdangerous 2.2.0
        (">3.6", "3.6.1"),  # 3.6.1 is greater than 3.6
        (">3.6.99", None),
        ("~=3.7", None),
        ("~=3.5", "3.5"),
        ("~=3.6.2", "3.6.2"),
        (">=3.7,<4", None),
        (">=3.5,<4", "3.5"),
        ("==3.10.*", None),
        ("==3.6.*", "3.6"),
        ("!=3.6.*,>=3.5", "3.5"),
        ("!=3.6.*,>=3.6", None),
        (">=2.7,!=3.0.*", "2.7"),
        (">=3.0,!=3.0.*,!=3.1.*", "3.2"),
        ("<3.9", "2.7"),
        ("<3.7", "2.7"),
        ("<=3.6.5, >=3.6.3", "3.6.3"),
        ("==3.6.5", "3.6.5"),
        ("===3.6.10", "3.6.10"),
        ("===3.6", None),  # arbitrary equality compares the text: no Python calls itself "3.6"
        ("==3.6.0+local", None),  # a final release has no local label
        (">= 3.7.0rc1", None),
        (">=3.7.dev0", None),
        (">=3.6.post1", "3.6.1"),
        (">3.6.0.post1", "3.6.1"),
        ("<3.0", "2.7"),
        (">=v3.6", "3.6"),
        (" >=3.7 , ", None),  # empty clauses are dropped, as installers drop them
        ("", "2.7"),  # an empty range admits everything
        ("==1!3.6.*", None),  # another epoch
    ],
)
def test_oldest_admitted_below(specifier: str, oldest: str | None) -> None:
    """The oldest Python below 3.7 the range admits, X.Y when X.Y.0 is admitted."""
    assert oldest_admitted_below(specifier) == oldest


@pytest.mark.parametrize(
    ("specifier", "problem"),
    [
        ("garbage", "'garbage' is not an operator"),
        ("3.9", "'3.9' is not an operator"),
        ("=>3.9", "'=>3.9' is not an operator"),
        (">=", ">= needs a version"),
        (">=three", "'three' is not a PEP 440 version"),
        (">=3.9.*", "a .* wildcard works only with == and !="),
        ("==3.9rc1.*", "a .* wildcard may follow only a release"),
        ("~=3", "~= needs at least two release numbers"),
        ("<=3.9+local", "a local version (+...) works only with == and !="),
        ("===", "=== needs a version"),
    ],
)
def test_invalid_specifiers(specifier: str, problem: str) -> None:
    """A specifier the evaluator cannot read is a ValueError saying what is wrong."""
    with pytest.raises(ValueError, match=re.escape(problem)):
        oldest_admitted_below(specifier)


def test_version_ordering() -> None:
    """PEP 440 order: dev < pre < final < post; trailing zeros and spellings do not matter."""
    spelled = ["3.9.dev1", "3.9a1", "3.9b2", "3.9rc1", "3.9", "3.9.post1", "3.9.1", "3.10"]
    versions = [parse_version(text) for text in spelled]
    assert all(v is not None for v in versions)
    assert versions == sorted(versions) and len(set(versions)) == len(versions)  # type: ignore[type-var]
    same = [parse_version(t) for t in ("3.9", "3.9.0", "v3.9.0.0", " V3.9.0 ")]
    assert len(set(same)) == 1 and None not in same
    assert parse_version("3.9.0-ALPHA.1") == parse_version("3.9a1") is not None
    assert parse_version("3.9-1") == parse_version("3.9.post1")
    assert parse_version("not a version") is None


@pytest.mark.parametrize(
    ("specifier", "admitted"),
    [
        # The hand-written evaluator errcat had before rejected the first: a local label
        # counts against > only when the release equals the specifier's, and 3.7 > 3.7.dev0.
        (">3.7.dev0", True),
        ("<3.7.0rc1", False),
        ("==3.7", True),
        ("==3.7.0+local", True),
    ],
)
def test_pep_440_exactly(specifier: str, admitted: bool) -> None:
    """Candidates are read as packaging reads them, which is how pip installs."""
    from catalog.gate.pythons import parse_specifier

    candidate = parse_version("3.7+local")
    assert candidate is not None
    assert parse_specifier(specifier).contains(candidate, prereleases=True) is admitted


@pytest.mark.parametrize(
    ("specifier", "suggestion"),
    [
        (">=3.6", ">=3.7"),
        (">=3.6,<4", ">=3.7,<4"),
        ("!=3.6.*,>=3.5,!=3.10.1", ">=3.7,!=3.10.1"),
        ("<3.9", ">=3.7,<3.9"),  # the bound still admits 3.7 and 3.8
        ("<3.7", ">=3.7"),  # keeping the bound would admit nothing
        ("==3.5.*", ">=3.7"),
        ("garbage", ">=3.7"),
    ],
)
def test_suggested_specifier(specifier: str, suggestion: str) -> None:
    """The fix raises the floor and keeps the upper bounds that still admit a Python."""
    assert suggested_specifier(specifier) == suggestion


def _pyproject(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_position_and_finding(tmp_path: Path) -> None:
    """The finding points at the value inside [project], not at a same-named key elsewhere."""
    path = _pyproject(
        tmp_path,
        '[tool.other]\nrequires-python = "ignored"\n\n[project]\nname = "x"\n'
        'requires-python   =  ">=3.6"\n',
    )
    declared = read_requires_python(path)
    assert declared is not None
    assert (declared.text, declared.line, declared.column) == (">=3.6", 6, 22)
    finding = declared.finding()
    assert finding is not None
    assert finding.format(tmp_path) == (
        'pyproject.toml:6:22: requires-python ">=3.6" admits Python 3.6, older than 3.7, the '
        'oldest the generated module supports; raise it to ">=3.7"'
    )


def test_dotted_key_and_quoted_table(tmp_path: Path) -> None:
    """`project.requires-python` at the top and `["project"]` headers are found too."""
    dotted = read_requires_python(_pyproject(tmp_path, 'project.requires-python = ">3.6"\n'))
    assert dotted is not None and (dotted.line, dotted.column) == (1, 27)
    quoted = read_requires_python(
        _pyproject(tmp_path, '[[tool.x]]\na = 1\n["project"]\n"requires-python" = ">=3.7"\n')
    )
    assert quoted is not None and (quoted.line, quoted.column) == (4, 21)
    assert quoted.finding() is None


def test_missing_and_invalid(tmp_path: Path) -> None:
    """No requires-python is no finding; garbage and a non-string are findings that say why."""
    assert read_requires_python(_pyproject(tmp_path, '[project]\nname = "x"\n')) is None
    assert read_requires_python(_pyproject(tmp_path, "[tool.errcat]\n")) is None
    garbage = read_requires_python(_pyproject(tmp_path, '[project]\nrequires-python = "py3"\n'))
    assert garbage is not None
    finding = garbage.finding()
    assert finding is not None
    assert finding.format(tmp_path) == (
        "pyproject.toml:2:19: requires-python \"py3\" is not a valid version specifier: 'py3' is "
        'not an operator (>=, >, <=, <, ==, !=, ~=, ===) and a version; write it like ">=3.7"'
    )
    number = read_requires_python(_pyproject(tmp_path, "[project]\nrequires-python = 3.9\n"))
    assert number is not None
    finding = number.finding()
    assert finding is not None and "is a TOML number (3.9), not a string" in finding.message


def test_errcat_itself_is_fine() -> None:
    """errcat's own pyproject (>=3.11) passes."""
    declared = read_requires_python(ROOT / "pyproject.toml")
    assert declared is not None and declared.finding() is None


PROJECT = """\
[project]
name = "pkg"
requires-python = "{specifier}"

[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

CATALOG = """\
module: pkg.pool
errors:
  - id: aaaaaaaaaaaaaaa1
    name: PoolSizeNotPositive
    exception: ValueError
    status: draft
    message: "pool size must be positive, got {size}"
"""


@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
def test_codegen_refuses_old_requires_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], check: bool
) -> None:
    """`errcat codegen` (and `--check`) print the finding, exit 1 and write nothing."""
    (tmp_path / "pyproject.toml").write_text(PROJECT.format(specifier=">=3.6,<4"), encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "pool.yaml").write_text(CATALOG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["codegen", "--check"] if check else ["codegen"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        'pyproject.toml:3:19: requires-python ">=3.6,<4" admits Python 3.6, older than 3.7, the '
        'oldest the generated module supports; raise it to ">=3.7,<4"'
    )
    assert "nothing written" in err
    assert not (tmp_path / "pkg" / "errors.py").exists()

    (tmp_path / "pyproject.toml").write_text(PROJECT.format(specifier=">=3.7,<4"), encoding="utf-8")
    assert main(["codegen"]) == 0
    assert main(["codegen", "--check"]) == 0
    assert "pkg/errors.py is up to date (1 classes)" in capsys.readouterr().out
