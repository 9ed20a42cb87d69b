"""`errcat init`: package detection, the appended `[tool.errcat]`, .gitignore and --dry-run."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.core.config import load_config

PYPROJECT = '[project]\nname = "{name}"\nversion = "1.0"\n'

TABLE = """\
[tool.errcat]
package = "{package}"
catalog = "errors"
generated = "{package}/_errcat_errors.py"
include = ["**/*.py"]
exclude = []
"""


def _project(root: Path, *packages: str, name: str = "demo", pyproject: str | None = None) -> Path:
    """A project at `root` with a pyproject.toml and one `__init__.py` per package folder."""
    root.mkdir(parents=True, exist_ok=True)
    text = PYPROJECT.format(name=name) if pyproject is None else pyproject
    (root / "pyproject.toml").write_bytes(text.encode("utf-8"))
    for package in packages:
        (root / package).mkdir(parents=True, exist_ok=True)
        (root / package / "__init__.py").write_text("", encoding="utf-8")
    return root


def _init(
    root: Path, monkeypatch: pytest.MonkeyPatch, *arguments: str, cwd: Path | None = None
) -> int:
    monkeypatch.chdir(cwd or root)
    return main(["init", *arguments])


def test_flat_layout_appends_the_table_and_keeps_every_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one package at the root is configured; the old file is a byte-for-byte prefix of the
    new one, followed by a blank line and the table; the output names the next steps."""
    original = '[project]\nname = "demo"  # a comment\n\n[tool.ruff]\nline-length = 99\n'
    root = _project(tmp_path, "demo", "tests", "docs", "examples", pyproject=original)
    assert _init(root, monkeypatch) == 0
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    assert text == original + "\n" + TABLE.format(package="demo")
    # Written atomically: no staging file is left beside the two files.
    assert sorted(p.name for p in root.iterdir()) == [
        ".gitignore",
        "demo",
        "docs",
        "examples",
        "pyproject.toml",
        "tests",
    ]
    out = capsys.readouterr().out
    assert 'package = "demo"' in out
    for step in ("errcat new", "errcat codegen", "errcat migrate", "errcat check"):
        assert step in out
    assert out.index("errcat new") < out.index("errcat codegen") < out.index("errcat migrate")


def test_src_layout_and_the_configuration_it_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package under src/ is configured by its root-relative path, and load_config then finds
    the package, a root-level `errors` catalog and the generated module inside the package."""
    root = _project(tmp_path, "src/packaging", "tests", name="packaging")
    assert _init(root, monkeypatch) == 0
    config = load_config(root)
    assert config.has_pyproject
    assert config.root == root.resolve()
    assert config.package == root.resolve() / "src" / "packaging"
    assert config.catalog == root.resolve() / "errors"
    assert config.generated == root.resolve() / "src" / "packaging" / "_errcat_errors.py"
    assert config.include == ("**/*.py",)
    assert config.exclude == ()


def test_runs_from_a_subfolder_of_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project root is found upwards from the current folder, as every command finds it."""
    root = _project(tmp_path, "demo")
    (root / "demo" / "inner").mkdir()
    assert _init(root, monkeypatch, cwd=root / "demo" / "inner") == 0
    assert load_config(root).package == root.resolve() / "demo"


def test_several_packages_pick_the_one_named_after_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[project] name` is normalised (case, `-` and `.`) to choose among several packages."""
    root = _project(tmp_path, "src/my_tool", "src/helpers", "conftools", name="My-Tool")
    assert _init(root, monkeypatch) == 0
    assert load_config(root).package == root.resolve() / "src" / "my_tool"


def test_a_dotted_project_name_matches_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`zope.interface`-style names become `zope_interface`."""
    root = _project(tmp_path, "zope_interface", "other", name="Zope.Interface")
    assert _init(root, monkeypatch) == 0
    assert load_config(root).package == root.resolve() / "zope_interface"


def test_ambiguous_packages_are_listed_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Several packages, none named after the project: exit 2, each candidate and `--package`
    named, both files untouched."""
    root = _project(tmp_path, "alpha", "src/beta", name="gamma")
    before = (root / "pyproject.toml").read_bytes()
    assert _init(root, monkeypatch) == 2
    err = capsys.readouterr().err
    assert "alpha" in err and "src/beta" in err and "--package" in err
    assert (root / "pyproject.toml").read_bytes() == before
    assert not (root / ".gitignore").exists()


def test_no_package_suggests_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Folders that are not packages (no `__init__.py`, skipped names, hidden, not identifiers)
    are never candidates; with none left, exit 2 suggesting `--package`."""
    root = _project(tmp_path, "tests", "docs", "build", "dist", ".venv/lib", "venv", "my-scripts")
    (root / "notapackage").mkdir()
    (root / "notapackage" / "mod.py").write_text("", encoding="utf-8")
    before = (root / "pyproject.toml").read_bytes()
    assert _init(root, monkeypatch) == 2
    err = capsys.readouterr().err
    assert "no package found" in err and "--package" in err
    assert (root / "pyproject.toml").read_bytes() == before


def test_package_option_overrides_detection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--package` takes a folder (a namespace package too) even where detection would fail."""
    root = _project(tmp_path, "alpha", "beta")
    (root / "lib" / "ns").mkdir(parents=True)
    assert _init(root, monkeypatch, "--package", "lib/ns") == 0
    config = load_config(root)
    assert config.package == root.resolve() / "lib" / "ns"
    assert config.generated == root.resolve() / "lib" / "ns" / "_errcat_errors.py"


@pytest.mark.parametrize("given", ["missing", ".."])
def test_a_bad_package_option_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    """A `--package` that is no folder, or lies outside the project, exits 2."""
    root = _project(tmp_path / "project", "demo")
    assert _init(root, monkeypatch, "--package", given) == 2
    assert "--package" in capsys.readouterr().err
    assert "[tool.errcat]" not in (root / "pyproject.toml").read_text(encoding="utf-8")


def test_without_pyproject_it_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No pyproject.toml at or above the current folder: exit 2 and say so."""
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 2
    assert "no pyproject.toml" in capsys.readouterr().err
    assert not (tmp_path / ".gitignore").exists()


def test_already_configured_exits_1_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An existing `[tool.errcat]` (here a sub-table of it) is left alone: exit 1."""
    root = _project(tmp_path, "demo", pyproject="[tool.errcat.extra]\nx = 1\n")
    assert _init(root, monkeypatch) == 1
    assert "already configured" in capsys.readouterr().err
    assert (root / "pyproject.toml").read_text(encoding="utf-8") == "[tool.errcat.extra]\nx = 1\n"
    assert not (root / ".gitignore").exists()


def test_a_second_run_is_already_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """init is not repeated: the second run changes nothing."""
    root = _project(tmp_path, "demo")
    assert _init(root, monkeypatch) == 0
    after = {name: (root / name).read_bytes() for name in ("pyproject.toml", ".gitignore")}
    assert _init(root, monkeypatch) == 1
    assert after == {name: (root / name).read_bytes() for name in after}


def test_a_file_without_final_newline_and_crlf_line_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table starts on a line of its own after a blank line, in the file's own line ends."""
    original = '[project]\r\nname = "demo"'
    root = _project(tmp_path, "demo", pyproject=original)
    assert _init(root, monkeypatch) == 0
    data = (root / "pyproject.toml").read_bytes()
    expected = original + "\r\n\r\n" + TABLE.format(package="demo").replace("\n", "\r\n")
    assert data == expected.encode("utf-8")
    assert tomllib.loads(data.decode("utf-8"))["tool"]["errcat"]["package"] == "demo"


def test_an_inline_tool_table_cannot_be_extended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where appending would make invalid TOML, nothing is written and the table is shown."""
    original = "tool = {black = {line-length = 99}}\n"
    root = _project(tmp_path, "demo", pyproject=original)
    assert _init(root, monkeypatch) == 2
    err = capsys.readouterr().err
    assert "nothing written" in err and "[tool.errcat]" in err
    assert (root / "pyproject.toml").read_text(encoding="utf-8") == original


def test_invalid_pyproject_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pyproject.toml that is not TOML is reported, not a traceback."""
    root = _project(tmp_path, "demo", pyproject="[project\n")
    assert _init(root, monkeypatch) == 2
    assert "not valid TOML" in capsys.readouterr().err


def test_gitignore_is_created_when_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a .gitignore, one is written holding both folders."""
    root = _project(tmp_path, "demo")
    assert _init(root, monkeypatch) == 0
    assert (root / ".gitignore").read_text(encoding="utf-8") == ".errcat-cache/\nbuild/\n"


@pytest.mark.parametrize("build_line", ["build", "build/", "/build/", "/build", "**/build/"])
def test_gitignore_equivalent_lines_are_recognised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build_line: str
) -> None:
    """An existing equivalent of `build/` is kept and not repeated; only the cache is appended,
    after a newline the old file lacked."""
    root = _project(tmp_path, "demo")
    original = f"*.pyc\n# outputs\n{build_line}"
    (root / ".gitignore").write_text(original, encoding="utf-8")
    assert _init(root, monkeypatch) == 0
    assert (root / ".gitignore").read_text(encoding="utf-8") == original + "\n.errcat-cache/\n"


def test_gitignore_complete_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .gitignore that already ignores both folders is not rewritten."""
    root = _project(tmp_path, "demo")
    original = "/.errcat-cache\nbuild/\n"
    (root / ".gitignore").write_text(original, encoding="utf-8")
    assert _init(root, monkeypatch) == 0
    assert (root / ".gitignore").read_text(encoding="utf-8") == original
    assert "already ignores" in capsys.readouterr().out


def test_a_commented_or_negated_line_does_not_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`# build/` and `!build/` do not ignore the folder, so `build/` is still appended."""
    root = _project(tmp_path, "demo")
    (root / ".gitignore").write_text("# build/\n!build/\n", encoding="utf-8")
    assert _init(root, monkeypatch) == 0
    assert (
        (root / ".gitignore")
        .read_text(encoding="utf-8")
        .endswith("!build/\n.errcat-cache/\nbuild/\n")
    )


def test_dry_run_prints_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--dry-run` prints the table and the ignore lines; neither file changes."""
    root = _project(tmp_path, "src/demo")
    before = (root / "pyproject.toml").read_bytes()
    assert _init(root, monkeypatch, "--dry-run") == 0
    out = capsys.readouterr().out
    for line in TABLE.format(package="src/demo").splitlines():
        assert line in out
    assert ".errcat-cache/" in out and "build/" in out
    assert "nothing written" in out
    assert (root / "pyproject.toml").read_bytes() == before
    assert not (root / ".gitignore").exists()
    assert sorted(p.name for p in root.iterdir()) == ["pyproject.toml", "src"]


def test_init_is_the_first_command_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    """`errcat --help` lists init before every other command."""
    assert main(["--help"]) == 0
    commands = capsys.readouterr().out.split("<command>", 2)[-1]
    assert commands.lstrip().startswith("init")
