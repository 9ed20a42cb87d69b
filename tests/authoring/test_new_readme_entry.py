"""The README's complete entry (section "Writing an entry") is one the catalog accepts, active
and retired as the README says, and its key table names every key the schema allows."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from catalog.core.model import Catalog, Status
from catalog.entries.loader import file_schema, load_bytes
from catalog.entries.validate import validate

README = Path(__file__).resolve().parents[2] / "README.md"

# The entry's `related` id, appended as a draft so that the reference resolves.
RELATED = """\
  - id: "a29718e783db01e3"
    name: GadgetSpinsTooFastError
    exception: ValueError
    status: draft
    message: "gadget {name} spins too fast: {speed} > {limit}"
"""


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n### Writing an entry\n")
    return text[start : text.index("\n### ", start + 1)]


def _example() -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", _section(), flags=re.DOTALL)
    assert len(blocks) == 1, "the section shows exactly one complete entry"
    return str(blocks[0])


def _loaded(text: str) -> Catalog:
    path = Path("errors/gadgets.core.yaml")
    loaded, problems = load_bytes(path, text.encode("utf-8"))
    assert problems == [], [problem.format() for problem in problems]
    assert loaded is not None
    catalog = Catalog(files=(loaded,))
    assert validate(catalog) == []
    return catalog


def test_the_readme_entry_is_a_complete_active_entry() -> None:
    """It loads and validates as written, active, with every prose key of an active entry."""
    catalog = _loaded(_example() + RELATED)
    entry = catalog.by_id()["142af2964d303384"]
    assert entry.status is Status.ACTIVE
    assert entry.example is not None and entry.related and entry.since == "1.4"


def test_the_readme_entry_retires_as_described() -> None:
    """The three edits the README gives for a retired entry make a valid retired entry."""
    retired = (
        _example()
        .replace("    status: active\n", "    status: retired\n")
        .replace(
            '    since: "1.4"\n',
            '    since: "1.4"\n'
            '    retired_reason: "Since 2.0 spin takes a direction and a speed."\n'
            '    replaced_by: "a29718e783db01e3"\n',
        )
    )
    assert "retired_reason" in _section() and "replaced_by" in _section()
    entry = _loaded(retired + RELATED).by_id()["142af2964d303384"]
    assert entry.status is Status.RETIRED
    assert entry.replaced_by == "a29718e783db01e3"


def test_the_key_table_names_every_key_of_the_schema() -> None:
    """A key the schema allows and the README does not document (or the reverse) fails."""
    schema_keys = set(file_schema()["$defs"]["entry"]["properties"])
    table = set(re.findall(r"^\| `([a-z_]+)` \|", _section(), flags=re.MULTILINE))
    assert table == schema_keys
    example = yaml.safe_load(_example())["errors"][0]
    # The one entry shows every key but the two that only a retired entry carries.
    assert set(example) == schema_keys - {"retired_reason", "replaced_by"}
