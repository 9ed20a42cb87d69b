"""The JSON API against its committed schema: every file a build writes validates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from test_build_project import make_project

from catalog.build import build_site
from catalog.config import load_config, read_site_settings
from catalog.render import gather, render
from catalog.render.api import SCHEMA_FILE, schema
from catalog.validate import load_valid_catalog

REPO = Path(__file__).resolve().parents[1]
CONTRACT_KEYS = [
    "schema_version", "id", "status", "name", "exception", "message", "meaning", "solutions",
    "example", "trigger", "situations", "related", "sources", "url", "repository", "since",
    "retired_reason", "replaced_by",
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
    [("id", "F978622EED176D93"), ("status", "gone"), ("solutions", "one"), ("extra", 1)],
)
def test_the_schema_rejects_what_the_contract_rules_out(key: str, value: object) -> None:
    """Bad ids, unknown statuses, wrong types and unknown keys fail validation."""
    document = {
        "schema_version": 1, "id": "f978622eed176d93", "status": "active", "name": "A",
        "exception": "ValueError", "message": "m", "meaning": None, "solutions": [],
        "example": None, "trigger": None, "situations": [], "related": [], "sources": [],
        "url": "http://127.0.0.1:8000/errors/f978622eed176d93/",
        "repository": {"url": None, "commit": "unknown", "dirty": False},
        "since": None, "retired_reason": None, "replaced_by": None,
    }  # fmt: skip
    assert _validator().is_valid(document)
    assert not _validator().is_valid({**document, key: value})
