"""Loading the YAML catalog: every broken file is a `file:line:col: message` finding, never a traceback."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from catalog.core.findings import CatalogInvalid
from catalog.core.model import Status
from catalog.entries.loader import load_catalog
from catalog.entries.validate import load_valid_catalog

GOOD = """\
module: runtime.tensor_bridge
errors:
  - id: f978622eed176d93
    name: BorrowRequiresMps
    exception: ValueError
    status: draft
    message: "borrow_torch_tensors requires MPS tensors, got {devices}"
"""


def _write(folder: Path, text: str, name: str = "tensor_bridge.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _only_finding(folder: Path) -> str:
    with pytest.raises(CatalogInvalid) as caught:
        load_valid_catalog(folder)
    assert len(caught.value.findings) == 1, [f.format(folder) for f in caught.value.findings]
    return caught.value.findings[0].format(folder)


def test_good_file_loads(tmp_path: Path) -> None:
    """A well-formed file gives its entries with positions and the module name."""
    _write(tmp_path, GOOD)
    catalog = load_valid_catalog(tmp_path)
    (entry,) = list(catalog)
    assert entry.id == "f978622eed176d93"
    assert entry.status is Status.DRAFT
    assert entry.module == "runtime.tensor_bridge"
    assert (entry.position.line, entry.position.column) == (3, 5)
    assert entry.where("message").line == 7


def test_bad_indentation(tmp_path: Path) -> None:
    """A key indented out of its mapping is a YAML syntax finding at the offending line."""
    _write(tmp_path, GOOD.replace("    name: BorrowRequiresMps", "      name: BorrowRequiresMps"))
    assert _only_finding(tmp_path).startswith("tensor_bridge.yaml:4:11: YAML syntax:")


def test_tab(tmp_path: Path) -> None:
    """A tab used for indentation is named as such, with its position."""
    _write(tmp_path, GOOD.replace("    name:", "\tname:"))
    assert (
        _only_finding(tmp_path)
        == "tensor_bridge.yaml:4:1: YAML syntax: a tab character; indent YAML with spaces"
    )


def test_duplicate_key(tmp_path: Path) -> None:
    """A key given twice in one entry points at the second and names the first line."""
    _write(tmp_path, GOOD + "    status: active\n")
    assert _only_finding(tmp_path) == (
        "tensor_bridge.yaml:8:5: duplicate key 'status' (first defined at line 6); keep one"
    )


def test_wrong_type(tmp_path: Path) -> None:
    """A list where a string belongs says what was expected and what was found."""
    _write(tmp_path, GOOD.replace("status: draft", "status: draft\n    meaning: [a, b]"))
    assert _only_finding(tmp_path) == (
        "tensor_bridge.yaml:7:14: errors[0].meaning must be string, got a list; "
        "see schema.json in the catalog folder (errcat new writes it) for the expected keys"
    )


def test_unknown_key(tmp_path: Path) -> None:
    """An unknown key is reported at the key, with the allowed keys as the fix."""
    _write(tmp_path, GOOD + "    solution: typo\n")
    finding = _only_finding(tmp_path)
    assert finding.startswith(
        "tensor_bridge.yaml:8:5: unknown key 'solution' in errors[0]; use one of: "
    )
    assert "solutions" in finding


def test_missing_required(tmp_path: Path) -> None:
    """An entry without a message is reported at the entry."""
    _write(
        tmp_path,
        GOOD.replace(
            '    message: "borrow_torch_tensors requires MPS tensors, got {devices}"\n', ""
        ),
    )
    assert _only_finding(tmp_path).startswith(
        "tensor_bridge.yaml:3:5: errors[0] is missing required key 'message'"
    )


def test_active_needs_prose(tmp_path: Path) -> None:
    """An active entry without its prose is told to write it or stay a draft."""
    _write(tmp_path, GOOD.replace("status: draft", "status: active"))
    with pytest.raises(CatalogInvalid) as caught:
        load_valid_catalog(tmp_path)
    messages = [f.format(tmp_path) for f in caught.value.findings]
    assert (
        "tensor_bridge.yaml:3:5: errors[0] is missing required key 'meaning' (required for status 'active'); "
        "add it, or set status: draft until it is written" in messages
    )


def test_duplicate_id(tmp_path: Path) -> None:
    """Two entries with one id: the second is reported, naming where the first is."""
    second = (
        GOOD.split("errors:\n")[1]
        .replace("BorrowRequiresMps", "Other")
        .replace("got {devices}", "x")
    )
    _write(tmp_path, GOOD + second)
    assert _only_finding(tmp_path) == (
        "tensor_bridge.yaml:8:9: duplicate id f978622eed176d93 (also tensor_bridge.yaml:3); "
        "ids are never reused: give this entry a new id with errcat new"
    )


def test_malformed_placeholder(tmp_path: Path) -> None:
    """A placeholder that is an expression, not a name, is refused with the rule."""
    _write(tmp_path, GOOD.replace("{devices}", "{tuple(t.shape)}"))
    assert _only_finding(tmp_path).startswith(
        "tensor_bridge.yaml:7:14: placeholder {tuple(t.shape)} in 'borrow_torch_tensors requires MPS tensors, "
        "got {tuple(t.shape)}' must be an identifier"
    )


@pytest.mark.parametrize(
    "message", ["got {devices", "got {self.devices}", "got {}", "got {0}", "got {class}"]
)
def test_more_bad_placeholders(tmp_path: Path, message: str) -> None:
    """Unbalanced braces, self, positional fields and keywords are all placeholder findings."""
    _write(tmp_path, GOOD.replace("got {devices}", message))
    assert _only_finding(tmp_path).startswith("tensor_bridge.yaml:7:14: ")


def test_id_of_wrong_shape(tmp_path: Path) -> None:
    """An id that is not 16 lowercase hex digits is reported at the id."""
    _write(tmp_path, GOOD.replace("f978622eed176d93", "F978622EED176D93"))
    assert _only_finding(tmp_path) == (
        "tensor_bridge.yaml:3:9: errors[0].id must be 16 lowercase hex digits, got 'F978622EED176D93'; "
        "run: errcat new (it computes new ids); never edit a stored id"
    )


def test_unknown_related(tmp_path: Path) -> None:
    """A related id that names no entry is a finding."""
    _write(tmp_path, GOOD + "    related: [0123456789abcdef]\n")
    assert _only_finding(tmp_path).startswith(
        "tensor_bridge.yaml:8:15: related id 0123456789abcdef is not in"
    )


def test_alias_bomb_refused(tmp_path: Path) -> None:
    """Anchors and aliases are refused before any expansion happens."""
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b]\n"
    _write(tmp_path, bomb)
    assert "aliases (*name) are not allowed" in _only_finding(tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    """Undecodable bytes are reported with their line and column."""
    (tmp_path / "x.yaml").write_bytes(b"module: runtime.x\nerrors: []\n# caf\xe9\n")
    assert (
        _only_finding(tmp_path)
        == "x.yaml:3:6: not UTF-8: byte 0xe9 cannot be decoded; save the file as UTF-8"
    )


def test_every_file_reported(tmp_path: Path) -> None:
    """Problems in several files are collected together rather than stopping at the first."""
    _write(tmp_path, "", name="a.yaml")
    _write(tmp_path, "module: [x]\nerrors: []\n", name="b.yaml")
    catalog, findings = load_catalog(tmp_path)
    assert len(catalog) == 0
    assert [f.format(tmp_path).split(":")[0] for f in findings] == ["a.yaml", "b.yaml"]


def test_unknown_related_in_an_inline_list(tmp_path: Path) -> None:
    """In an inline list, an unknown related id is reported at that id, not a line below."""
    _write(tmp_path, GOOD + "    related: [f978622eed176d93, 0123456789abcdef]\n")
    with pytest.raises(CatalogInvalid) as caught:
        load_valid_catalog(tmp_path)
    findings = [f.format(tmp_path) for f in caught.value.findings]
    assert (
        "tensor_bridge.yaml:8:33: related id 0123456789abcdef is not in the catalog; "
        "point it at an existing entry or remove it" in findings
    )
