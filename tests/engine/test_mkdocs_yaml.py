"""How `errcat build` reads the project's mkdocs.yml: aliases are data, not a way to make the
build exhaust memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.publish.build import MKDOCS_YAML_VALUES, BuildError, read_mkdocs_yaml


def _write(root: Path, text: str) -> Path:
    (root / "mkdocs.yml").write_text(text, encoding="utf-8")
    return root


def _laughs(levels: int) -> str:
    """A mkdocs.yml whose nested aliases expand to 9**levels strings (the "billion laughs")."""
    lines = [
        "site_name: bomb",
        "extra:",
        '  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    ]
    for level in range(1, levels):
        lines.append(f"  l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def test_nested_aliases_past_the_limit_are_refused_with_the_file_named(tmp_path: Path) -> None:
    """Nine levels of nine aliases (387 million strings) are a clear error, not a MemoryError."""
    root = _write(tmp_path, _laughs(9))
    with pytest.raises(BuildError, match=r"mkdocs\.yml: its aliases expand to more than 100,000"):
        read_mkdocs_yaml(root)


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path: Path) -> None:
    """A value that contains itself has no finite expansion: refused, never walked forever."""
    root = _write(tmp_path, "site_name: loop\nextra:\n  a: &a [1, *a]\n")
    with pytest.raises(BuildError, match="aliases expand"):
        read_mkdocs_yaml(root)


def test_ordinary_aliases_are_read_as_their_values(tmp_path: Path) -> None:
    """Aliases within the limit are kept: a palette shared by two schemes reads as written."""
    root = _write(
        tmp_path,
        "site_name: shared\n"
        "extra:\n  base: &base {primary: indigo, accent: pink}\n  dark: *base\n"
        + _laughs(4).split("\n", 2)[2],
    )
    data = read_mkdocs_yaml(root)
    assert data["extra"]["dark"] == {"primary": "indigo", "accent": "pink"}
    assert len(data["extra"]["l3"]) == 9


def test_the_limit_counts_expanded_values_not_lines(tmp_path: Path) -> None:
    """Just under the limit is read; one level more than the limit allows is refused."""
    assert 9**5 < MKDOCS_YAML_VALUES < 9**6
    read_mkdocs_yaml(_write(tmp_path, _laughs(5)))
    with pytest.raises(BuildError):
        read_mkdocs_yaml(_write(tmp_path, _laughs(6)))
