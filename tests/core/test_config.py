"""`[tool.errcat]` configuration: defaults, overrides and bad values."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from catalog.core.config import ConfigError, load_config, package_problem


def _project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(table), encoding="utf-8")
    (tmp_path / "sub").mkdir()
    return tmp_path


def test_defaults_without_table(tmp_path: Path) -> None:
    """A pyproject.toml without [tool.errcat] gives the documented defaults: the package is the
    one `errcat init` would find, and the generated module the file init would name in it."""
    root = _project(tmp_path, "[project]\nname = 'x'\n")
    (root / "src" / "x").mkdir(parents=True)
    (root / "src" / "x" / "__init__.py").write_text("", encoding="utf-8")
    config = load_config(root / "sub")
    assert config.root == root.resolve()
    assert config.package == root.resolve() / "src/x"
    assert config.package_unfound is None and package_problem(config) is None
    assert config.catalog == root.resolve() / "catalog/errors"
    assert config.generated == root.resolve() / "src/x/_errcat_errors.py"
    assert config.include == ("**/*.py",)
    assert config.exclude == ()


def test_no_default_names_a_folder_of_errcat_s_own(tmp_path: Path) -> None:
    """Without `package` and without a package to find, no folder is assumed (`runtime` was
    errcat's sample package): the commands that scan say why, naming the fix."""
    root = _project(tmp_path, "[project]\nname = 'x'\n")
    (root / "runtime").mkdir()
    (root / "runtime" / "__init__.py").write_text("", encoding="utf-8")
    (root / "other").mkdir()
    (root / "other" / "__init__.py").write_text("", encoding="utf-8")
    config = load_config(root)
    assert not config.package.exists()
    assert package_problem(config) == (
        "several packages found: other, runtime and none is named after the project 'x'; set "
        f"[tool.errcat] package in {root.resolve() / 'pyproject.toml'} to the folder to scan, "
        "or run errcat init"
    )
    (root / "other" / "__init__.py").unlink()
    assert load_config(root).package == root.resolve() / "runtime"


def test_a_project_named_package_is_chosen_among_several(tmp_path: Path) -> None:
    root = _project(tmp_path, "[project]\nname = 'My-Tool'\n")
    for name in ("my_tool", "helpers"):
        (root / name).mkdir()
        (root / name / "__init__.py").write_text("", encoding="utf-8")
    assert load_config(root).package == root.resolve() / "my_tool"


def test_overrides(tmp_path: Path) -> None:
    """Every key of [tool.errcat] is read and resolved against the project root."""
    root = _project(
        tmp_path,
        """
        [tool.errcat]
        package = "src/pkg"
        catalog = "knowledge"
        generated = "src/pkg/errs.py"
        include = ["*.py"]
        exclude = ["tests/**"]
        """,
    )
    config = load_config(root)
    assert config.package == root.resolve() / "src/pkg"
    assert config.catalog == root.resolve() / "knowledge"
    assert config.generated == root.resolve() / "src/pkg/errs.py"
    assert config.include == ("*.py",)
    assert config.exclude == ("tests/**",)


def test_wrong_type_names_key_and_value(tmp_path: Path) -> None:
    """A value of the wrong type names the key, quotes the value and says what was expected."""
    root = _project(tmp_path, "[tool.errcat]\nexclude = 'tests'\n")
    with pytest.raises(
        ConfigError, match=r"exclude has value 'tests'; expected a list of glob strings"
    ):
        load_config(root)


def test_broken_toml_is_a_config_error(tmp_path: Path) -> None:
    """An unparsable pyproject.toml is a ConfigError naming the file."""
    root = _project(tmp_path, "[tool.errcat\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml: cannot read the configuration"):
        load_config(root)
