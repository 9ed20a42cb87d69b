"""Entry ids: the recipe, collisions, and stability once stored."""

from __future__ import annotations

import hashlib
from pathlib import Path

from catalog.core.ids import is_valid_id, new_id
from catalog.entries.validate import load_valid_catalog


def test_recipe() -> None:
    """A new id is the first 16 hex digits of SHA-256 of `<package>:<exception>:<message>`."""
    text = "runtime:ValueError:borrow_torch_tensors requires MPS tensors, got {devices}"
    assert (
        new_id("runtime", "ValueError", "borrow_torch_tensors requires MPS tensors, got {devices}")
        == (hashlib.sha256(text.encode()).hexdigest()[:16])
    )


def test_collision_appends_counter() -> None:
    """A taken id makes the recipe hash `:1`, then `:2`, appended to the text."""
    first = new_id("p", "E", "m")
    second = new_id("p", "E", "m", taken={first})
    assert second == hashlib.sha256(b"p:E:m:1").hexdigest()[:16]
    third = new_id("p", "E", "m", taken={first, second})
    assert third == hashlib.sha256(b"p:E:m:2").hexdigest()[:16]


def test_shape() -> None:
    """Only 16 lowercase hex digits are ids."""
    assert is_valid_id("0123456789abcdef")
    assert not is_valid_id("0123456789ABCDEF")
    assert not is_valid_id("0123456789abcde")
    assert not is_valid_id(123)


def test_editing_a_message_keeps_the_id(tmp_path: Path) -> None:
    """The stored id is read, never recomputed: a reworded message keeps its entry's id."""
    text = (
        "module: runtime.x\nerrors:\n  - id: f978622eed176d93\n    name: Borrow\n"
        '    exception: ValueError\n    status: draft\n    message: "{message}"\n'
    )
    path = tmp_path / "x.yaml"
    path.write_text(text.replace("{message}", "borrow needs MPS, got {devices}"), encoding="utf-8")
    before = [entry.id for entry in load_valid_catalog(tmp_path)]
    path.write_text(
        text.replace("{message}", "borrow_torch_tensors requires MPS, got {devices}"),
        encoding="utf-8",
    )
    after = [entry.id for entry in load_valid_catalog(tmp_path)]
    assert before == after == ["f978622eed176d93"]
