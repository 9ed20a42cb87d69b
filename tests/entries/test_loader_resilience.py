"""One broken entry drops only itself: its siblings load, and what follows from it says so.

A typo in one entry used to leave its whole file out of the catalog, so every `related` id
pointing into that file was reported missing too: findings that were only consequences.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers import write_files

from catalog.cli import main
from catalog.entries.loader import read_catalog
from catalog.entries.validate import checked_catalog

ROOT = Path(__file__).resolve().parents[2]
POSITIONED = re.compile(r"^[^:\s]+:\d+:\d+: ")

ENTRY = """\
  - id: {id}
    name: {name}
    exception: ValueError
    status: draft
    message: "{name} went wrong"
"""


def _file(module: str, *entries: str) -> str:
    return f"module: {module}\nerrors:\n" + "".join(entries)


def _entry(entry_id: str, name: str, extra: str = "") -> str:
    return ENTRY.format(id=entry_id, name=name) + extra


def _messages(folder: Path) -> list[str]:
    _, findings = checked_catalog(folder)
    return [finding.format(folder) for finding in findings]


def test_a_typo_in_one_entry_leaves_its_siblings_loaded(tmp_path: Path) -> None:
    """An unknown key drops the entry it is in, with one finding there; the others load."""
    write_files(
        tmp_path,
        {
            "m.yaml": _file(
                "pkg.m",
                _entry("aaaaaaaaaaaaaaaa", "First"),
                _entry("bbbbbbbbbbbbbbbb", "Second", "    meanin: typo\n"),
                _entry("cccccccccccccccc", "Third"),
            )
        },
    )
    loaded = read_catalog(tmp_path)
    assert [entry.id for entry in loaded.catalog] == ["aaaaaaaaaaaaaaaa", "cccccccccccccccc"]
    assert [f.format(tmp_path).split(";")[0] for f in loaded.findings] == [
        "m.yaml:13:5: unknown key 'meanin' in errors[1]"
    ]
    assert {entry_id: (p.path.name, p.line) for entry_id, p in loaded.broken.items()} == {
        "bbbbbbbbbbbbbbbb": ("m.yaml", 8)
    }


def test_a_reference_to_a_broken_entry_says_it_follows_from_it(tmp_path: Path) -> None:
    """`related` and `replaced_by` ids of an entry that exists but did not load are reported as
    consequences of that entry's findings, not as ids missing from the catalog."""
    write_files(
        tmp_path,
        {
            "a.yaml": _file(
                "pkg.a",
                _entry("aaaaaaaaaaaaaaaa", "First", "    related: [bbbbbbbbbbbbbbbb]\n"),
                _entry(
                    "dddddddddddddddd",
                    "Gone",
                    "    related: [eeeeeeeeeeeeeeee]\n",
                ).replace("status: draft", "status: retired")
                + "    retired_reason: Replaced.\n    replaced_by: bbbbbbbbbbbbbbbb\n",
            ),
            "b.yaml": _file("pkg.b", _entry("bbbbbbbbbbbbbbbb", "Second", "    sevrity: high\n")),
        },
    )
    assert _messages(tmp_path) == [
        "b.yaml:8:5: unknown key 'sevrity' in errors[0]; use one of: example, exception, id, "
        "meaning, message, name, related, replaced_by, retired_reason, since, situations, "
        "solutions, status, trigger",
        "a.yaml:8:15: related id bbbbbbbbbbbbbbbb is the entry at b.yaml:3, which did not load "
        "(see the findings for b.yaml); fix that entry first",
        "a.yaml:14:15: related id eeeeeeeeeeeeeeee is not in the catalog; "
        "point it at an existing entry or remove it",
        "a.yaml:16:18: replaced_by id bbbbbbbbbbbbbbbb is the entry at b.yaml:3, which did not "
        "load (see the findings for b.yaml); fix that entry first",
    ]


def test_a_syntax_error_is_one_finding_for_the_file(tmp_path: Path) -> None:
    """YAML that cannot be parsed leaves the file out with one finding; references into it
    from other files say it did not load only where the id could be read, so they say missing."""
    write_files(
        tmp_path,
        {
            "a.yaml": _file(
                "pkg.a", _entry("aaaaaaaaaaaaaaaa", "First", "    related: [bbbbbbbbbbbbbbbb]\n")
            ),
            "b.yaml": _file("pkg.b", _entry("bbbbbbbbbbbbbbbb", "Second"))
            + '    trigger: "never closed\n',
        },
    )
    loaded = read_catalog(tmp_path)
    assert [f.format(tmp_path) for f in loaded.findings] == [
        "b.yaml:8:14: YAML syntax: the file ends inside a quoted scalar that starts here; close it"
    ]
    assert [entry.id for entry in loaded.catalog] == ["aaaaaaaaaaaaaaaa"]
    assert loaded.broken == {}


def test_an_unusable_file_drops_its_entries_and_references_say_so(tmp_path: Path) -> None:
    """An invalid `module` leaves the whole file out; references to its entries follow from it."""
    write_files(
        tmp_path,
        {
            "a.yaml": _file(
                "pkg.a", _entry("aaaaaaaaaaaaaaaa", "First", "    related: [bbbbbbbbbbbbbbbb]\n")
            ),
            "b.yaml": _file("pkg b", _entry("bbbbbbbbbbbbbbbb", "Second")),
        },
    )
    messages = _messages(tmp_path)
    assert len(messages) == 2
    assert messages[0].startswith("b.yaml:1:9: module: 'pkg b' does not match")
    assert messages[1] == (
        "a.yaml:8:15: related id bbbbbbbbbbbbbbbb is the entry at b.yaml:3, which did not load "
        "(see the findings for b.yaml); fix that entry first"
    )


def test_a_file_level_problem_keeps_the_entries(tmp_path: Path) -> None:
    """An unknown top-level key is the file's finding; its well-formed entries still load."""
    write_files(
        tmp_path,
        {"a.yaml": "version: 2\n" + _file("pkg.a", _entry("aaaaaaaaaaaaaaaa", "First"))},
    )
    loaded = read_catalog(tmp_path)
    assert [entry.id for entry in loaded.catalog] == ["aaaaaaaaaaaaaaaa"]
    assert [f.format(tmp_path).split(";")[0] for f in loaded.findings] == [
        "a.yaml:1:1: unknown key 'version' in the file"
    ]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            "    message: again\n",
            "m.yaml:13:5: duplicate key 'message' (first defined at line 12); keep one",
        ),
        (
            "    trigger: !!python/object/apply:os.system [echo]\n",
            "m.yaml:13:14: tag !!python/object/apply:os.system is not allowed in catalog files; "
            "remove it",
        ),
        (
            "    since: 2024-13-45\n",
            "m.yaml:13:12: YAML value '2024-13-45': month must be in 1..12",
        ),
        ("    404: nope\n", "m.yaml:13:5: key 404 must be a string"),
    ],
)
def test_a_refused_value_drops_only_its_entry(tmp_path: Path, extra: str, expected: str) -> None:
    """A duplicate key, a refused tag or scalar, a non-string key inside one entry: one finding
    at it (nothing repeating it), and the entry's siblings load."""
    write_files(
        tmp_path,
        {
            "m.yaml": _file(
                "pkg.m",
                _entry("aaaaaaaaaaaaaaaa", "First"),
                _entry("bbbbbbbbbbbbbbbb", "Second", extra),
                _entry("cccccccccccccccc", "Third"),
            )
        },
    )
    loaded = read_catalog(tmp_path)
    assert [f.format(tmp_path) for f in loaded.findings] == [expected]
    assert [entry.id for entry in loaded.catalog] == ["aaaaaaaaaaaaaaaa", "cccccccccccccccc"]
    assert set(loaded.broken) == {"bbbbbbbbbbbbbbbb"}


def test_a_refused_value_outside_the_entries_drops_the_file(tmp_path: Path) -> None:
    """A duplicate top-level key is the file's problem: its entries are left out with it."""
    write_files(
        tmp_path,
        {"m.yaml": _file("pkg.m", _entry("aaaaaaaaaaaaaaaa", "First")) + "module: pkg.n\n"},
    )
    loaded = read_catalog(tmp_path)
    assert [f.format(tmp_path).split(";")[0] for f in loaded.findings] == [
        "m.yaml:8:1: duplicate key 'module' (first defined at line 1)"
    ]
    assert len(loaded.catalog) == 0
    assert set(loaded.broken) == {"aaaaaaaaaaaaaaaa"}


@pytest.fixture
def repository_copy(tmp_path: Path) -> Path:
    """A copy of this repository's package and catalog, with its pyproject settings."""
    for name in ("runtime", "catalog/errors"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_issue_probe_a_typo_in_mlx_runtime(
    repository_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The probe of issue 15: a typo'd key in one entry of mlx_runtime.yaml is one finding; the
    file's other entries load, and tensor_bridge.yaml's related id to it says it did not load."""
    path = repository_copy / "catalog" / "errors" / "mlx_runtime.yaml"
    text = path.read_text(encoding="utf-8")
    entry_at = text.index("  - id: ddedba1405b4cd53")
    typo_at = text.index("    meaning:", entry_at)
    path.write_text(text[:typo_at] + "    meanig:" + text[typo_at + 12 :], encoding="utf-8")
    monkeypatch.chdir(repository_copy)
    assert main(["check"]) == 1
    lines = capsys.readouterr().out.splitlines()
    findings = [line for line in lines if not line.startswith("errcat check")]
    assert all(POSITIONED.match(line) for line in findings), findings
    shown = [line.split("; ")[0] for line in findings]
    consequence = (
        "related id ddedba1405b4cd53 is the entry at mlx_runtime.yaml:48, which did not load "
        "(see the findings for mlx_runtime.yaml)"
    )
    assert shown == [
        f"catalog/errors/mlx_runtime.yaml:47:51: {consequence}",
        "catalog/errors/mlx_runtime.yaml:48:5: errors[1] is missing required key 'meaning' "
        "(required for status 'active')",
        "catalog/errors/mlx_runtime.yaml:53:5: unknown key 'meanig' in errors[1]",
        f"catalog/errors/mlx_runtime.yaml:146:15: {consequence}",
        f"catalog/errors/tensor_bridge.yaml:97:15: {consequence}",
    ]
    loaded = read_catalog(repository_copy / "catalog" / "errors")
    mlx = [entry.id for entry in loaded.catalog if entry.module == "runtime.mlx_runtime"]
    assert mlx == ["d707e25309e5dbae", "80770bdf733d5a3d", "284057feab7a321c"]
