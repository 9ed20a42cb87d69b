"""The JSON API: one file per entry, an index, and the committed schema of an entry file.

Keys and their order follow CONTRACTS.md ("Site and API"); prose is stored as authored (Markdown
source), so programs get the text itself and decide how to show it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from catalog.model import Entry
from catalog.render.deploy import site_files
from catalog.render.repository import Repository
from catalog.render.sources import Source

SCHEMA_VERSION = 1
"""Bumped when an entry file changes in a way old readers would misread."""
ERRORS_FOLDER = "api/errors"
INDEX_FILE = "api/errors/index.json"
SCHEMA_FILE = "api/schema.json"


def page_url(site_url: str, entry_id: str) -> str:
    """The absolute URL of an entry's page."""
    return f"{site_url}errors/{entry_id}/"


def entry_document(
    entry: Entry,
    *,
    sources: Sequence[Source],
    related: Sequence[Entry],
    verified: Sequence[Mapping[str, str]],
    repository: Repository,
    site_url: str,
) -> dict[str, Any]:
    """The contents of `api/errors/<id>.json`."""
    example = entry.example
    return {
        "schema_version": SCHEMA_VERSION,
        "id": entry.id,
        "status": entry.status.value,
        "name": entry.name,
        "exception": entry.exception,
        "message": entry.message,
        "meaning": entry.meaning,
        "solutions": list(entry.solutions),
        "example": None
        if example is None
        else {
            "before": example.before,
            "after": example.after,
            "requires": list(example.requires),
            "verified": [dict(run) for run in verified],
        },
        "trigger": entry.trigger,
        "situations": list(entry.situations),
        "related": [{"id": other.id, "message": other.message} for other in related],
        "sources": [source.as_dict() for source in sources],
        "url": page_url(site_url, entry.id),
        "repository": repository.as_dict(),
        "since": entry.since,
        "retired_reason": entry.retired_reason,
        "replaced_by": entry.replaced_by,
    }


def index_row(entry: Entry, site_url: str) -> dict[str, Any]:
    """One row of `api/errors/index.json`."""
    return {
        "id": entry.id,
        "status": entry.status.value,
        "exception": entry.exception,
        "message": entry.message,
        "module": entry.module,
        "url": page_url(site_url, entry.id),
    }


def schema() -> dict[str, Any]:
    """The committed JSON Schema of an entry file."""
    text = resources.files("catalog.render").joinpath("api_schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def dumps(document: object) -> str:
    """How every API file is written: stable, readable, UTF-8."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_api(site_dir: Path, documents: Mapping[str, object]) -> None:
    """Write `documents` (site-relative path → JSON value) under `site_dir`, with the OpenAPI
    description and the files static hosts and nginx read (`catalog.render.deploy`)."""
    texts = {path: dumps(document) for path, document in documents.items()}
    texts.update(site_files(documents))
    for folder in sorted({str(Path(path).parent) for path in texts}):
        (site_dir / folder).mkdir(parents=True, exist_ok=True)
    for path, text in texts.items():
        # Plain writes: the build writes into a fresh folder that is switched in only when whole.
        (site_dir / path).write_text(text, encoding="utf-8")
