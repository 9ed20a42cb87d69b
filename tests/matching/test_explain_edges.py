"""`errcat explain` on templates with trailing blanks and on lines whose text before a colon is
a module path rather than an exception class: the two cases a pasted line could miss."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from helpers import errcat_in, write_files

CATALOG = """\
    module: pkg.edges
    errors:
      - id: "00000000000000e1"
        name: BadValueSpaced
        exception: ValueError
        status: draft
        message: "bad value "
      - id: "00000000000000e2"
        name: ExpectedSpaced
        exception: ValueError
        status: draft
        message: "expected {n} "
      - id: "00000000000000e3"
        name: FunctionalBadShape
        exception: ValueError
        status: draft
        message: "torch.nn.functional: bad shape"
      - id: "00000000000000e4"
        name: BadShape
        exception: ValueError
        status: draft
        message: "bad shape"
      - id: "00000000000000e5"
        name: BadSizeFor
        exception: RuntimeError
        status: draft
        message: "{where}: bad size for the cache"
      - id: "00000000000000e6"
        name: BadSize
        exception: ValueError
        status: draft
        message: "bad size for the cache"
      - id: "00000000000000e7"
        name: PoolBadSize
        exception: ValueError
        status: draft
        message: "Pool2d: bad size for the cache"
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(
        tmp_path_factory.mktemp("edges"),
        {
            "pyproject.toml": """\
                [tool.errcat]
                package = "pkg"
                catalog = "knowledge"
                generated = "pkg/errors.py"
            """,
            "mkdocs.yml": "site_name: Edges\nsite_url: https://docs.example.org/\n",
            "pkg/__init__.py": "",
            "knowledge/edges.yaml": CATALOG,
        },
    )


def explained(project: Path, query: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The ids `errcat explain QUERY --json` answers, as a user runs it in the project."""
    capsys.readouterr()
    code = errcat_in(project, "explain", query, "--json")
    out = capsys.readouterr().out
    ids = [match["id"][-2:] for match in json.loads(out)["matches"]]
    assert code == (0 if ids else 1)
    return ids


def scanned(
    project: Path, log: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> dict[str, int]:
    """What `errcat explain - --json` counts in `log` (id suffix: count)."""

    class Stdin:
        buffer = io.BytesIO(log.encode())

    monkeypatch.setattr(sys, "stdin", Stdin)
    capsys.readouterr()
    errcat_in(project, "explain", "-", "--json")
    return {row["id"][-2:]: row["count"] for row in json.loads(capsys.readouterr().out)["errors"]}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("bad value ", ["e1"]),
        ("bad value", ["e1"]),
        ("ValueError: bad value ", ["e1"]),
        ("ValueError: bad value", ["e1"]),
        ("expected 3 ", ["e2"]),
        ("expected 3", ["e2"]),
        ("ValueError: expected 3 items", ["e2"]),
        ("bad values", []),
    ],
)
def test_a_template_ending_in_a_blank_matches_the_message_it_produces(
    project: Path, capsys: pytest.CaptureFixture[str], query: str, expected: list[str]
) -> None:
    """A template ending in a space matches its message with or without that space (a pasted
    line loses it), and still only at a word's end."""
    assert explained(project, query, capsys) == expected


def test_a_log_finds_a_template_ending_in_a_blank_without_its_blank(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log line keeps or loses the trailing space (CRLF logs end in a CR): all are counted."""
    log = "ValueError: bad value\nValueError: bad value \r\nexpected 3\r\nnoise\n"
    assert scanned(project, log, capsys, monkeypatch) == {"e1": 2, "e2": 1}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("torch.nn.functional: bad shape", ["e3"]),
        ("torch.nn.functional: bad size for the cache", ["e5"]),
        ("ValueError: bad shape", ["e4"]),
        ("ValueError: bad size for the cache", ["e6"]),
        ("KeyError: bad size for the cache", ["e6"]),
        ("Pool2d: bad size for the cache", ["e7"]),
        ("MyError: bad size for the cache", ["e5"]),
        ("pkg.MyError: bad size for the cache", ["e6"]),
        ("builtins.KeyError: bad shape", ["e4"]),
        ("bad shape", ["e4"]),
    ],
)
def test_a_module_path_before_a_colon_is_read_as_part_of_the_message(
    project: Path, capsys: pytest.CaptureFixture[str], query: str, expected: list[str]
) -> None:
    """`torch.nn.functional: ...` or `Pool2d: ...` names no exception class (one the catalog
    knows, or a CapWords name that is dotted, as tracebacks print classes, or built in): the
    whole line and the text after the colon are both tried, the most specific match winning.
    `KeyError: ...` and `pkg.MyError: ...` still read as a class and its message."""
    assert explained(project, query, capsys) == expected


def test_a_log_reads_a_module_path_as_part_of_the_message(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log reader matches whole lines: a module path there is message text too."""
    log = "torch.nn.functional: bad shape\nValueError: bad shape\n"
    assert scanned(project, log, capsys, monkeypatch) == {"e3": 1, "e4": 1}
