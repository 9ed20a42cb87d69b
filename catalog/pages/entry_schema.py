"""The committed JSON Schema of an API entry file (`catalog/pages/api_schema.json`), which the
build validates every entry file against, publishes as `api/schema.json`, and the OpenAPI
description embeds."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def schema() -> dict[str, Any]:
    """The committed JSON Schema of an entry file."""
    text = resources.files("catalog.pages").joinpath("api_schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded
