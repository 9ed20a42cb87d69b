"""The two forms of the generated module share their base class, pickling and notes hook
(catalog/authoring/codegen.py writes both from one text): only the typing names and a line layout differ."""

from __future__ import annotations

import re

from test_codegen import _synthetic

from catalog.authoring.codegen import generate


def _base_class(text: str) -> str:
    """From `def _rebuild` through the line that installs the notes hook, with the table form's
    private typing names and its one-parameter-per-line hook signature read as the other's."""
    start = text.index("\ndef _rebuild(")
    end = text.index("sys.excepthook = _print_notes_after_traceback\n") + len("sys.excepthook")
    block = re.sub(r"\b_(Any|ClassVar|TracebackType)\b", r"\1", text[start:end])
    return re.sub(
        r"def _print_notes_after_traceback\(\n(.*?)\) -> None:",
        lambda m: (
            "def _print_notes_after_traceback(\n    "
            + ", ".join(part.strip() for part in m.group(1).split(",\n") if part.strip()).rstrip(
                ","
            )
            + "\n) -> None:"
        ),
        block,
        flags=re.DOTALL,
    )


def test_both_forms_hold_the_same_base_class() -> None:
    """`CatalogError`, `_rebuild` and the notes hook read the same in both forms."""
    catalog = _synthetic(3)
    explicit = generate(catalog, "https://docs.example.org/", table=False)
    table = generate(catalog, "https://docs.example.org/", table=True)
    assert "_Any" in table and "_Any" not in explicit  # the forms do differ in their names
    assert _base_class(table) == _base_class(explicit)
    assert 'note = f"For further information visit {self.docs_url}"' in _base_class(explicit)


def test_both_forms_share_the_docstring_paragraphs() -> None:
    """The docstring's opening and closing paragraphs are the same; the table form adds one."""
    catalog = _synthetic(3)
    explicit = generate(catalog, "u/", table=False)
    table = generate(catalog, "u/", table=True)
    doc = explicit[explicit.index('"""') : explicit.index('"""', explicit.index('"""') + 3)]
    table_doc = table[table.index('"""') : table.index('"""', table.index('"""') + 3)]
    parts, table_parts = doc.split("\n\n"), table_doc.split("\n\n")
    assert len(parts) == 3  # the title, what a class is, which Pythons it runs on
    assert table_parts[:2] + table_parts[3:] == parts
    assert table_parts[2].startswith("The classes are created on first use")
