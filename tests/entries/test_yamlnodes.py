"""The libyaml fast path composes exactly what the careful pure-Python path composes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from catalog.entries import yamlnodes
from catalog.entries.yamlnodes import YamlProblem, parse_document

ROOT = Path(__file__).resolve().parents[2]


def _utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return False  # the loader stops before YAML is parsed
    return True


FILES = [
    path
    for path in sorted((ROOT / "catalog" / "errors").glob("*.yaml"))
    + sorted((ROOT / "tests" / "data" / "bad_yaml").glob("*.yaml"))
    if _utf8(path)
]


def _careful(text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patch:
        patch.setattr(yamlnodes, "_compose_fast", lambda text: None)
        try:
            document = parse_document(text)
        except YamlProblem as problem:
            return ("problem", problem.mark, problem.message)
    return (document.value, document.values, document.keys)


def _fast(text: str) -> object:
    try:
        document = parse_document(text)
    except YamlProblem as problem:
        return ("problem", problem.mark, problem.message)
    return (document.value, document.values, document.keys)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_result_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Values, value marks, key marks and problems are identical with and without libyaml."""
    text = path.read_bytes().decode("utf-8-sig")
    assert _fast(text) == _careful(text, monkeypatch)


def test_fast_path_is_taken_for_plain_catalogs() -> None:
    """A plain catalog file is composed by libyaml (the point of the fast path)."""
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML was built without libyaml")
    text = (ROOT / "catalog" / "errors" / "tensor_bridge.yaml").read_text(encoding="utf-8")
    assert yamlnodes._compose_fast(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",
        "a: 1\n---\nb: 2\n",
        "a: [" * 40 + "]" * 40 + "\n",
        "a: [1\n",
        "a: \x07\n",
    ],
    ids=["alias", "two-documents", "deep", "unclosed", "control-char"],
)
def test_unusual_input_takes_the_careful_path(text: str) -> None:
    """Aliases, several documents, deep nesting, syntax errors and control characters fall back."""
    assert yamlnodes._compose_fast(text) is None
