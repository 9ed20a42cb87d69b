"""`catalog.evidence.aliases`: type aliases in annotations written out, so that the value rules
read `int | tuple[int, int]` where the code says `_size_2_t`."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from catalog.evidence.aliases import Aliases

TYPES = """\
from typing import Any, Iterable, TypeVar, Union

from typing_extensions import TypeAlias as _Alias

import torch

T = TypeVar("T")

ParamsT: _Alias = Iterable[torch.Tensor] | Iterable[dict[str, Any]]
Device = Union[str, int, None]
_pair_t = T | tuple[T, T]
_size_2_t = _pair_t[int]
NOT_A_TYPE = [1, 2][0]
Twice = Union[int, str]
Twice = int
"""

USES = """\
from .types import ParamsT, _size_2_t, Device as Where
from pkg.types import NOT_A_TYPE, Twice

Local = Union[float, None]


def make(params: ParamsT, size: "_size_2_t", where: Where, local: Local, other: Twice):
    pass


def plain(x: int, y: NOT_A_TYPE):
    pass
"""


def _aliases(root: Path) -> Aliases:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "types.py").write_text(TYPES, encoding="utf-8")
    (package / "uses.py").write_text(USES, encoding="utf-8")

    def module_file(dotted: str) -> Path | None:
        file = root.joinpath(*dotted.split(".")).with_suffix(".py")
        return file if file.is_file() else None

    return Aliases(root, module_file)


def _annotations(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str | None]:
    return {
        arg.arg: None if arg.annotation is None else ast.unparse(arg.annotation)
        for arg in node.args.args
    }


def _function(name: str) -> ast.FunctionDef:
    tree = ast.parse(textwrap.dedent(USES))
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    return node


def test_aliases_are_written_out_through_imports_and_type_variables(tmp_path: Path) -> None:
    """An alias imported (relatively, renamed), one declared `TypeAlias` under another name,
    a generic alias subscripted with its type variable replaced, a string annotation and a
    module's own alias are written out; a name bound twice, or to a value that is no type
    expression, stays as written."""
    aliases = _aliases(tmp_path)
    node = _function("make")
    expanded = aliases.expanded(node, Path("pkg/uses.py"))
    assert _annotations(expanded) == {
        "params": "Iterable[torch.Tensor] | Iterable[dict[str, Any]]",
        "size": "int | tuple[int, int]",
        "where": "Union[str, int, None]",
        "local": "Union[float, None]",
        "other": "Twice",
    }
    # The definition read is left as it was.
    assert _annotations(node)["params"] == "ParamsT"
    plain = _function("plain")
    assert aliases.expanded(plain, Path("pkg/uses.py")) is plain


def test_a_file_that_cannot_be_read_changes_nothing(tmp_path: Path) -> None:
    aliases = _aliases(tmp_path)
    (tmp_path / "pkg" / "broken.py").write_text("def (:\n", encoding="utf-8")
    node = _function("make")
    assert aliases.expanded(node, Path("pkg/broken.py")) is node
    assert aliases.expanded(node, Path("pkg/missing.py")) is node


def test_trees_given_are_read_once_each_and_left_unchanged(tmp_path: Path) -> None:
    """`errcat reproduce` hands the alias reader the trees it parsed for its own reading: each
    file is asked for once, and writing aliases out must not change the shared trees."""
    plain = _aliases(tmp_path)
    asked: list[Path] = []
    trees: dict[Path, ast.Module] = {}

    def parse(file: Path) -> ast.Module | None:
        asked.append(file)
        trees[file] = ast.parse(file.read_bytes())
        return trees[file]

    shared = Aliases(tmp_path, plain.module_file, parse)
    node = _function("make")
    expanded = shared.expanded(node, Path("pkg/uses.py"))
    assert _annotations(expanded) == _annotations(plain.expanded(node, Path("pkg/uses.py")))
    shared.expanded(node, Path("pkg/uses.py"))
    assert sorted(asked) == [tmp_path / "pkg" / "types.py", tmp_path / "pkg" / "uses.py"]
    assert all(
        ast.dump(tree) == ast.dump(ast.parse(file.read_bytes())) for file, tree in trees.items()
    )
