"""The JSON API against its committed schema: every file a build writes validates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from test_build_project import DRAFT_ID, STOP_ID, make_project

from catalog.core.config import load_config, read_site_settings
from catalog.entries.validate import load_valid_catalog
from catalog.pages.api import SCHEMA_FILE
from catalog.pages.content import gather, render
from catalog.pages.entry_schema import schema
from catalog.publish.build import build_site

REPO = Path(__file__).resolve().parents[2]
CONTRACT_KEYS = [
    "schema_version", "id", "status", "name", "exception", "message", "meaning", "solutions",
    "example", "trigger", "situations", "related", "sources", "url", "repository", "since",
    "retired_reason", "replaced_by", "knowledge",
]  # fmt: skip
INDEX_KEYS = ["id", "status", "exception", "message", "module", "url"]


def _validator() -> Draft202012Validator:
    return Draft202012Validator(schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def test_the_committed_schema_is_a_valid_json_schema() -> None:
    """api_schema.json is itself valid Draft 2020-12 and requires exactly the contract's keys."""
    Draft202012Validator.check_schema(schema())
    assert schema()["required"] == CONTRACT_KEYS


def test_every_file_of_a_build_validates(tmp_path: Path) -> None:
    """Each `api/errors/<id>.json` a real build writes fits the schema; the index rows fit theirs."""
    root = make_project(tmp_path)
    site = build_site(load_config(root), root / "build" / "site").out
    validator = _validator()
    files = sorted((site / "api" / "errors").glob("*.json"))
    entries = [path for path in files if path.name != "index.json"]
    assert len(entries) == 4
    for path in entries:
        document = json.loads(path.read_text(encoding="utf-8"))
        errors = [e.message for e in validator.iter_errors(document)]
        assert errors == [], path
        assert list(document) == CONTRACT_KEYS
    rows = json.loads((site / "api" / "errors" / "index.json").read_text(encoding="utf-8"))
    assert all(list(row) == INDEX_KEYS for row in rows)
    assert json.loads((site / SCHEMA_FILE).read_text(encoding="utf-8")) == schema()


def test_the_project_catalog_fits_the_schema() -> None:
    """Every entry of this project's catalog renders to a document the schema accepts."""
    config = load_config(REPO)
    settings = read_site_settings(REPO)
    content = render(
        gather(
            config,
            load_valid_catalog(config.catalog),
            site_url=settings.site_url,
            repo_url=settings.repo_url,
            site_name="errcat",
        )
    )
    validator = _validator()
    documents = {
        p: d
        for p, d in content.api.items()
        if p.startswith("api/errors/") and not p.endswith("index.json")
    }
    assert len(documents) >= 4
    for path, document in documents.items():
        assert [e.message for e in validator.iter_errors(document)] == [], path


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("id", "F978622EED176D93"),
        ("status", "gone"),
        ("solutions", "one"),
        ("extra", 1),
        (
            "knowledge",
            [{"kind": "guessed", "text": "x", "code": None, "source": None, "verified": False}],
        ),
        (
            "knowledge",
            [{"kind": "remedy", "text": "", "code": None, "source": None, "verified": False}],
        ),
    ],
)
def test_the_schema_rejects_what_the_contract_rules_out(key: str, value: object) -> None:
    """Bad ids, unknown statuses, wrong types and unknown keys fail validation."""
    document = {
        "schema_version": 1, "id": "f978622eed176d93", "status": "active", "name": "A",
        "exception": "ValueError", "message": "m", "meaning": None, "solutions": [],
        "example": None, "trigger": None, "situations": [], "related": [], "sources": [],
        "url": "http://127.0.0.1:8000/errors/f978622eed176d93/",
        "repository": {"url": None, "commit": "unknown", "dirty": False},
        "since": None, "retired_reason": None, "replaced_by": None, "knowledge": [],
    }  # fmt: skip
    assert _validator().is_valid(document)
    assert not _validator().is_valid({**document, key: value})


def test_a_draft_shows_and_serves_what_was_read_from_the_code(tmp_path: Path) -> None:
    """A draft without prose gets the derived section on its page (conditions, signature,
    public callers, what is not followed), and its entry file carries the same facts."""
    root = make_project(tmp_path)
    (root / "widgets" / "cli.py").write_text(
        "from widgets.core import turn\n\n\ndef main():\n    turn('w', 11)\n", encoding="utf-8"
    )
    config = load_config(root)
    content = render(
        gather(
            config,
            load_valid_catalog(config.catalog),
            site_url="http://127.0.0.1:8000/",
            repo_url=None,
            site_name="Widgets",
        )
    )
    page = content.pages[f"errors/{DRAFT_ID}.md"]
    for part in (
        "## Read from the code { data-search-exclude }",
        "*Derived by errcat from the source, not written by a person.*",
        "**Raised when** all of these hold (innermost first):",
        "- `speed > 10` (line 4)",
        "- `not (speed < 0)` (line 2: an earlier check that exits otherwise)",
        "```python\ndef turn(name: str, speed: int) -> None:\n```",
        "- `widgets.cli.main` (calls it directly)",
        "callbacks and dynamic dispatch are not followed",
    ):
        assert part in page, part
    assert "**Raised** unconditionally, when `stop` runs." in content.pages[f"errors/{STOP_ID}.md"]
    document = content.api[f"api/errors/{DRAFT_ID}.json"]
    assert [e.message for e in _validator().iter_errors(document)] == []
    assert list(document) == CONTRACT_KEYS
    (source,) = document["sources"]
    assert source["signature"] == "def turn(name: str, speed: int) -> None:"
    assert source["conditions"] == [
        {"kind": "if", "code": "speed > 10", "line": 4, "subject": None},
        {"kind": "guard", "code": "not (speed < 0)", "line": 2, "subject": None},
    ]
    callers = source["callers"]
    assert callers["function"] == "widgets.core.turn"
    assert callers["public"] is True
    assert callers["callers"] == [
        {
            "name": "widgets.cli.main",
            "path": "widgets/cli.py",
            "line": 4,
            "depth": 1,
            "url": None,
            "returned": False,
        }
    ]
    assert (callers["count"], callers["depth"], callers["bounded"]) == (1, 3, False)


def test_the_schema_rejects_malformed_derived_facts() -> None:
    """An unknown condition kind or a caller without its depth fails validation."""
    source = {
        "path": "a.py", "line": 1, "column": 1, "function": "f", "url": None, "snippet": None,
        "signature": "def f():", "conditions": [], "callers": None,
    }  # fmt: skip
    document = {
        "schema_version": 1, "id": "f978622eed176d93", "status": "draft", "name": "A",
        "exception": "ValueError", "message": "m", "meaning": None, "solutions": [],
        "example": None, "trigger": None, "situations": [], "related": [], "sources": [source],
        "url": "http://127.0.0.1:8000/errors/f978622eed176d93/",
        "repository": {"url": None, "commit": "unknown", "dirty": False},
        "since": None, "retired_reason": None, "replaced_by": None, "knowledge": [],
    }  # fmt: skip
    validator = _validator()
    assert validator.is_valid(document)
    condition = {"kind": "unless", "code": "a", "line": 1, "subject": None}
    bad_condition = {**source, "conditions": [condition]}
    assert not validator.is_valid({**document, "sources": [bad_condition]})
    callers = {
        "function": "m.f", "public": True, "count": 1, "depth": 3, "bounded": False,
        "not_followed": "...", "callers": [{"name": "m.g", "path": "m.py", "line": 3, "url": None}],
    }  # fmt: skip
    assert not validator.is_valid({**document, "sources": [{**source, "callers": callers}]})
