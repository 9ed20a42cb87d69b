"""`[tool.errcat]` configuration: defaults, overrides and bad values."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from catalog.core.config import ConfigError, load_config


def _project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(table), encoding="utf-8")
    (tmp_path / "sub").mkdir()
    return tmp_path


def test_defaults_without_table(tmp_path: Path) -> None:
    """A pyproject.toml without [tool.errcat] gives the documented defaults."""
    root = _project(tmp_path, "[project]\nname = 'x'\n")
    config = load_config(root / "sub")
    assert config.root == root.resolve()
    assert config.package == root.resolve() / "runtime"
    assert config.catalog == root.resolve() / "catalog/errors"
    assert config.generated == root.resolve() / "runtime/errors.py"
    assert config.include == ("**/*.py",)
    assert config.exclude == ()


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
