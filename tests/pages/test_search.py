"""Search entries of error pages (catalog/pages/search.py): what word search finds a page by."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from catalog.core.config import load_config
from catalog.entries.validate import load_valid_catalog
from catalog.pages.search import error_doc

ROOT = Path(__file__).resolve().parents[2]


def test_the_class_name_is_in_the_entry_text_for_generated_classes() -> None:
    """A traceback prints `BorrowRequiresMps`, so word search finds the page by it; an entry
    catalogued in place is known by its exception, and its name (a label) is left out."""
    entry = load_valid_catalog(load_config(ROOT).catalog).by_id()["f978622eed176d93"]
    doc = error_doc(entry)
    assert doc.title == "borrow_torch_tensors requires MPS tensors, got {devices}"
    assert doc.text.startswith(
        "<p><code>BorrowRequiresMps</code> (<code>ValueError</code>) in "
        "<code>runtime.tensor_bridge</code></p><p>"
    )
    in_place = dataclasses.replace(entry, exception="packaging.version.InvalidVersion")
    assert error_doc(in_place).text.startswith(
        "<p><code>packaging.version.InvalidVersion</code> in <code>runtime.tensor_bridge</code></p>"
    )
    assert "BorrowRequiresMps" not in error_doc(in_place).text
