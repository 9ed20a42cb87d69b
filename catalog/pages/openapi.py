"""The OpenAPI 3.1 description of the JSON API, generated from the schema entry files follow.

`catalog/pages/openapi.json` is committed; `errcat build` publishes it as `api/openapi.json`
(with `servers` naming the site's URL). The entry schema is `catalog/pages/api_schema.json`
itself, its `$defs` moved under `components/schemas`, so the API's description cannot drift from
what the build validates its files against. Regenerate after changing either file:

    python -m catalog.pages.openapi

`openapi_drift()` says whether the committed file is stale (the tests and `errcat check` call
it); `python -m catalog.pages.openapi --check` exits 1 with the diff when it is.
"""

from __future__ import annotations

import copy
import difflib
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from catalog.pages.entry_schema import schema

OPENAPI_FILE = "api/openapi.json"
"""Where the build publishes the description, relative to the site."""
COMMITTED = "openapi.json"
"""The committed description, next to this module."""
REGENERATE_COMMAND = "python -m catalog.pages.openapi"
"""What rewrites the committed description from the schema."""
DEFAULT_SERVER = "http://127.0.0.1:8000"
"""The `servers` entry of the committed file: where `errcat serve` listens by default."""
MAX_MESSAGE = 4096
"""Longest message `/api/match` accepts, in characters (catalog.serve.app.MAX_MESSAGE)."""

_JSON = "application/json"
_REF_PREFIX = "#/$defs/"


def _component_name(definition: str) -> str:
    """`$defs/id` of the entry schema becomes the component `EntryId`."""
    return "Entry" + definition[:1].upper() + definition[1:]


def _rewrite_refs(node: Any) -> Any:
    """`node` with every `#/$defs/x` reference pointed at its component."""
    if isinstance(node, dict):
        rewritten = {key: _rewrite_refs(value) for key, value in node.items()}
        ref = rewritten.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            rewritten["$ref"] = "#/components/schemas/" + _component_name(
                ref.removeprefix(_REF_PREFIX)
            )
        return rewritten
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


def entry_schemas(entry_schema: dict[str, Any]) -> dict[str, Any]:
    """The entry schema as components: `Entry` and one component per `$defs` member."""
    schema = copy.deepcopy(entry_schema)
    # Both name the standalone document; inside OpenAPI the dialect is the document's own.
    schema.pop("$schema", None)
    schema.pop("$id", None)
    definitions = schema.pop("$defs", {})
    components = {"Entry": _rewrite_refs(schema)}
    for name, definition in definitions.items():
        components[_component_name(name)] = _rewrite_refs(definition)
    return components


def _ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"#/components/{kind}/{name}"}


def _json(schema: dict[str, Any], description: str, **extra: Any) -> dict[str, Any]:
    return {"description": description, "content": {_JSON: {"schema": schema}}, **extra}


def _document_headers(*, gzip: bool) -> dict[str, Any]:
    headers = {
        "ETag": _ref("headers", "ETag"),
        "Cache-Control": _ref("headers", "CacheControl"),
        "Vary": _ref("headers", "Vary"),
        "Access-Control-Allow-Origin": _ref("headers", "AccessControlAllowOrigin"),
    }
    if gzip:
        headers["Content-Encoding"] = _ref("headers", "ContentEncoding")
    return headers


def _errors(*statuses: str) -> dict[str, Any]:
    return {status: _ref("responses", _ERROR_RESPONSES[status]) for status in statuses}


_ERROR_RESPONSES = {
    "400": "BadRequest",
    "404": "NotFound",
    "414": "UriTooLong",
    "431": "HeadersTooLarge",
}
# Every route can meet the guard: a path it refuses, an overlong target, oversized headers.
_GUARD = ("400", "414", "431")


def _document_operation(
    operation_id: str,
    summary: str,
    schema: dict[str, Any],
    *,
    parameters: list[dict[str, Any]] | None = None,
    not_found: bool = True,
    links: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A `GET` of one of the API's JSON files: 200, 304 on revalidation, the errors."""
    ok = _json(
        schema,
        "The document. Gzip-compressed when the request accepts it (then its own strong tag).",
        headers=_document_headers(gzip=True),
    )
    if links:
        ok["links"] = links
    responses: dict[str, Any] = {
        "200": ok,
        "304": _ref("responses", "NotModified"),
        **_errors(*_GUARD),
    }
    if not_found:
        responses.update(_errors("404"))
    return {
        "operationId": operation_id,
        "summary": summary,
        "parameters": [*(parameters or []), _ref("parameters", "IfNoneMatch")],
        "responses": dict(sorted(responses.items())),
    }


def _path_item(get: dict[str, Any]) -> dict[str, Any]:
    """`get` and the `head` that answers its headers without a body."""
    head = copy.deepcopy(get)
    head["operationId"] = get["operationId"] + "Head"
    head["summary"] = "Headers of: " + get["summary"][:1].lower() + get["summary"][1:]
    for response in head["responses"].values():
        response.pop("content", None)
        response.pop("links", None)
    return {"get": get, "head": head}


def openapi_document(entry_schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 description of every route of the JSON API."""
    if entry_schema is None:
        entry_schema = schema()
    id_parameter = {
        "name": "id",
        "in": "path",
        "required": True,
        "description": "The error's id: 16 lowercase hex digits. Anything else is a 404.",
        "schema": _ref("schemas", "EntryId"),
    }
    entry_schema_ref: dict[str, Any] = _ref("schemas", "Entry")
    # The first row's id is an entry's: a client (or a test) reaches real entries from here.
    to_entry = {
        name: {
            "operationId": operation,
            "parameters": {"id": "$response.body#/0/id"},
            "description": "The first row's id is an entry's id.",
        }
        for name, operation in (
            ("entry", "getError"),
            ("entryFile", "getErrorFile"),
            ("entryHeaders", "getErrorHead"),
            ("entryFileHeaders", "getErrorFileHead"),
        )
    }
    paths = {
        "/api/errors/index.json": _path_item(
            _document_operation(
                "getIndex",
                "Every catalogued error: one row each",
                {"type": "array", "items": _ref("schemas", "IndexRow")},
                not_found=False,
                links=to_entry,
            )
        ),
        "/api/errors/{id}": _path_item(
            _document_operation(
                "getError",
                "One error, as its entry file",
                entry_schema_ref,
                parameters=[id_parameter],
            )
        ),
        "/api/errors/{id}.json": _path_item(
            _document_operation(
                "getErrorFile",
                "One error's entry file (the same document as /api/errors/{id})",
                entry_schema_ref,
                parameters=[id_parameter],
            )
        ),
        "/api/schema.json": _path_item(
            _document_operation(
                "getSchema",
                "The JSON Schema every entry file follows",
                {"type": "object"},
            )
        ),
        "/api/openapi.json": _path_item(
            _document_operation(
                "getOpenApi",
                "This description",
                {"type": "object", "required": ["openapi", "paths"]},
            )
        ),
        "/api/match": {
            "get": {
                "operationId": "matchMessage",
                "summary": "The entries whose message template matches a concrete message",
                "description": (
                    "Answered by `errcat serve` only: a static host has no matcher. Best match "
                    "first; an empty list when none matches."
                ),
                "parameters": [
                    {
                        "name": "message",
                        "in": "query",
                        "required": True,
                        "description": (
                            "What was printed: a message, a traceback line (`ValueError: ...`), "
                            "the docs-link note, several lines, or an id or class name alone."
                        ),
                        "schema": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": MAX_MESSAGE,
                            # At least one character that is not white space.
                            "pattern": "\\S",
                        },
                    }
                ],
                "responses": {
                    "200": _json(
                        _ref("schemas", "MatchResult"),
                        "The matches, best first.",
                        headers={
                            "Cache-Control": _ref("headers", "CacheControl"),
                            "Access-Control-Allow-Origin": _ref(
                                "headers", "AccessControlAllowOrigin"
                            ),
                        },
                    ),
                    **_errors(*_GUARD),
                },
            }
        },
    }
    error_headers = {
        "Cache-Control": {"schema": {"const": "no-cache"}},
        "Access-Control-Allow-Origin": _ref("headers", "AccessControlAllowOrigin"),
    }

    def error_response(description: str) -> dict[str, Any]:
        return _json(_ref("schemas", "Error"), description, headers=error_headers)

    schemas = entry_schemas(entry_schema)
    schemas.update(
        {
            "IndexRow": {
                "type": "object",
                "description": "One row of /api/errors/index.json.",
                "required": ["id", "status", "exception", "message", "module", "url"],
                "additionalProperties": False,
                "properties": {
                    "id": _ref("schemas", "EntryId"),
                    "status": {"enum": ["draft", "active", "retired"]},
                    "exception": {"type": "string"},
                    "message": {"type": "string"},
                    "module": {"type": "string"},
                    "url": {"type": "string", "format": "uri"},
                },
            },
            "Match": {
                "type": "object",
                "required": ["id", "message", "exception", "url", "score"],
                "additionalProperties": False,
                "properties": {
                    "id": _ref("schemas", "EntryId"),
                    "message": {"type": "string", "description": "The entry's template."},
                    "exception": {"type": "string"},
                    "url": {"type": "string", "format": "uri"},
                    "score": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Literal characters of the template that matched.",
                    },
                },
            },
            "MatchResult": {
                "type": "object",
                "required": ["message", "matches"],
                "additionalProperties": False,
                "properties": {
                    "message": {"type": "string", "description": "The message looked up."},
                    "matches": {"type": "array", "items": _ref("schemas", "Match")},
                },
            },
            "Error": {
                "type": "object",
                "description": "Every error answer under /api/.",
                "required": ["error", "message"],
                "additionalProperties": False,
                "properties": {
                    "error": {
                        "enum": [
                            "not_found",
                            "bad_request",
                            "bad_path",
                            "uri_too_long",
                            "headers_too_large",
                            "method_not_allowed",
                        ]
                    },
                    "message": {"type": "string", "description": "What is wrong, for people."},
                    "id": {
                        "type": "string",
                        "maxLength": 103,
                        "description": "The id asked for (cut at 100 characters), on a 404.",
                    },
                },
            },
        }
    )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "errcat error catalog API",
            "version": "1",
            "description": (
                "Catalogued errors as JSON: one document per error, an index, the entry "
                "schema and this description are files of the built site (any static host "
                "serves them); /api/match needs `errcat serve`. Every answer allows any "
                "origin (CORS). Entry files follow the schema at /api/schema.json; "
                "`schema_version` is 1."
            ),
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "servers": [{"url": DEFAULT_SERVER, "description": "errcat serve's default address"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "parameters": {
                "IfNoneMatch": {
                    "name": "If-None-Match",
                    "in": "header",
                    "required": False,
                    "description": "Tags of a copy the client holds; a match answers 304.",
                    "schema": {"type": "string"},
                }
            },
            "headers": {
                "ETag": {
                    "description": "Strong tag of the representation (SHA-256 based).",
                    "schema": {"type": "string"},
                },
                "CacheControl": {"schema": {"type": "string"}},
                "Vary": {"schema": {"const": "Accept-Encoding"}},
                "ContentEncoding": {"schema": {"const": "gzip"}},
                "AccessControlAllowOrigin": {"schema": {"const": "*"}},
            },
            "responses": {
                "NotModified": {
                    "description": "The client's copy is current (If-None-Match matched).",
                    "headers": _document_headers(gzip=False),
                },
                "NotFound": error_response(
                    "No such error: an id not in the catalog, or not 16 lowercase hex digits."
                ),
                "BadRequest": error_response(
                    "A path that tries to leave the site, or a missing or overlong message."
                ),
                "UriTooLong": error_response(
                    "A path over 2 KiB or a query over 16 KiB (as sent, percent-encoded)."
                ),
                "HeadersTooLarge": error_response("Over 16 KiB of request headers."),
            },
        },
    }


def dumps(document: dict[str, Any]) -> str:
    """How the description is written: stable, readable, UTF-8, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def committed_path() -> Path:
    """The committed description in the source tree (next to this module)."""
    return Path(__file__).with_name(COMMITTED)


def committed_text() -> str:
    """The committed description, as installed with the package."""
    return resources.files("catalog.pages").joinpath(COMMITTED).read_text("utf-8")


def published(site_url: str | None) -> dict[str, Any]:
    """The description as the build publishes it: the committed one, `servers` set to the
    site's URL where it is known."""
    document: dict[str, Any] = json.loads(committed_text())
    if site_url:
        document["servers"] = [{"url": site_url.rstrip("/"), "description": "this site"}]
    return document


def openapi_drift() -> list[str]:
    """Where the committed description differs from one generated now, as unified diff lines;
    empty when it is current. The fix: `REGENERATE_COMMAND`."""
    try:
        committed = committed_text()
    except FileNotFoundError:
        committed = ""
    fresh = dumps(openapi_document())
    if committed == fresh:
        return []
    return list(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            fresh.splitlines(keepends=True),
            fromfile=f"catalog/pages/{COMMITTED} (committed)",
            tofile=f"catalog/pages/{COMMITTED} (generated)",
        )
    )


def main(argv: list[str] | None = None) -> int:
    """Rewrite the committed description; with `--check`, exit 1 and print the diff if stale."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        drift = openapi_drift()
        sys.stdout.writelines(drift)
        if drift:
            print(f"catalog/pages/{COMMITTED} is stale; run: {REGENERATE_COMMAND}")
        return 1 if drift else 0
    if args:
        print(f"usage: {REGENERATE_COMMAND} [--check]", file=sys.stderr)
        return 2
    committed_path().write_text(dumps(openapi_document()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
