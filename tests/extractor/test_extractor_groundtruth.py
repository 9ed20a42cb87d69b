"""The extractor against oracles it does not share code with, on real code: installed torch.

The oracle for where raises are is the standard library's `tokenize` (every `raise` NAME
token); the oracle for which messages must have a template is `ast` (a first argument that is
a string literal or an f-string).
"""

from __future__ import annotations

import ast
import importlib.util
import tokenize
import warnings
from pathlib import Path

import pytest

from extractor import ScanReport, scan_paths

FOLDERS = ("nn", "fx", "utils")


def _torch_root() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


TORCH = _torch_root()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(TORCH is None, reason="torch is not installed (the `runtime` extra)"),
]


@pytest.fixture(scope="module")
def report() -> ScanReport:
    assert TORCH is not None
    return scan_paths([TORCH / folder for folder in FOLDERS], cwd=TORCH)


def _files(report: ScanReport) -> list[Path]:
    assert TORCH is not None
    return [TORCH / result.path for result in report.results]


def test_scans_the_whole_tree_without_failures(report: ScanReport) -> None:
    """Every Python file under the folders is scanned, and none fails."""
    assert TORCH is not None
    expected = sorted(
        path.relative_to(TORCH).as_posix()
        for folder in FOLDERS
        for path in (TORCH / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    )
    assert [result.path for result in report.results] == expected
    assert len(expected) > 300
    assert report.failures == []


def test_sites_are_exactly_the_raise_tokens(report: ScanReport) -> None:
    """The (path, line) of the sites equal the lines of `raise` NAME tokens from tokenize."""
    oracle = set()
    for path, result in zip(_files(report), report.results, strict=True):
        with open(path, "rb") as handle:
            for token in tokenize.tokenize(handle.readline):
                if token.type == tokenize.NAME and token.string == "raise":
                    oracle.add((result.path, token.start[0]))
    found = {(site.path, site.line) for site in report.sites}
    assert found == oracle
    assert len(report.sites) == len(oracle) > 2000


def _literal_message_lines(source: str) -> set[int]:
    lines = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes in torch's sources
        tree = ast.parse(source)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name | ast.Attribute)
            and node.exc.args
            and (
                isinstance(node.exc.args[0], ast.JoinedStr)
                or (
                    isinstance(node.exc.args[0], ast.Constant)
                    and isinstance(node.exc.args[0].value, str)
                )
            )
        ):
            lines.add(node.lineno)
    return lines


def test_literal_and_fstring_messages_have_templates(report: ScanReport) -> None:
    """Every site whose message is a plain literal or an f-string has a template."""
    missing = []
    checked = 0
    by_line = {(site.path, site.line): site for site in report.sites}
    for path, result in zip(_files(report), report.results, strict=True):
        source = path.read_bytes().decode("utf-8")
        for line in _literal_message_lines(source):
            checked += 1
            if by_line[(result.path, line)].template is None:
                missing.append(f"{result.path}:{line}")
    assert missing == []
    assert checked > 1500
