"""The OpenAPI description: current with the entry schema, complete, published, and true of the
live server (schemathesis generates requests from it and checks every answer against it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from catalog.core.config import load_config
from catalog.pages import entry_schema, openapi
from catalog.publish.build import build_site

REPO = Path(__file__).resolve().parents[2]
ROUTES = {
    "/api/errors/index.json",
    "/api/errors/{id}",
    "/api/errors/{id}.json",
    "/api/schema.json",
    "/api/openapi.json",
    "/api/match",
}


def test_committed_description_is_current() -> None:
    """catalog/pages/openapi.json is what the generator writes now (the drift check)."""
    drift = openapi.openapi_drift()
    assert drift == [], "".join(drift) + f"\nrun: {openapi.REGENERATE_COMMAND}"


def test_drift_is_reported_as_a_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stale committed file gives a unified diff naming the file; --check exits 1."""
    stale = openapi.committed_text().replace('"version": "1"', '"version": "0"')
    monkeypatch.setattr(openapi, "committed_text", lambda: stale)
    drift = openapi.openapi_drift()
    assert drift[0].startswith("--- catalog/pages/openapi.json (committed)")
    assert '-    "version": "0",\n' in drift
    assert openapi.main(["--check"]) == 1


def test_entry_component_is_the_committed_entry_schema() -> None:
    """The Entry component is api_schema.json, its $defs moved under components."""
    schema = entry_schema.schema()
    components = openapi.openapi_document()["components"]["schemas"]
    assert components["EntryId"] == schema["$defs"]["id"]
    assert components["EntryProse"] == schema["$defs"]["prose"]
    entry = components["Entry"]
    assert entry["required"] == schema["required"]
    assert set(entry["properties"]) == set(schema["properties"])
    assert entry["properties"]["id"] == {"$ref": "#/components/schemas/EntryId"}
    assert "$defs" not in entry and "$schema" not in entry


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_every_route_is_described_and_every_reference_resolves() -> None:
    """Each API route has GET (and HEAD for the files); each $ref names a component."""
    document = openapi.openapi_document()
    assert document["openapi"] == "3.1.0"
    assert set(document["paths"]) == ROUTES
    for path, item in document["paths"].items():
        assert "get" in item, path
        assert "404" in item["get"]["responses"] or path in ("/api/match", "/api/errors/index.json")
    for ref in _refs(document):
        node: Any = document
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        assert isinstance(node, dict), ref


def test_published_description_names_the_site() -> None:
    """The built site's copy is the committed one with `servers` set to site_url."""
    document = openapi.published("https://errors.example.org/docs/")
    committed = json.loads(openapi.committed_text())
    assert document["servers"] == [
        {"url": "https://errors.example.org/docs", "description": "this site"}
    ]
    assert {**document, "servers": committed["servers"]} == committed


@pytest.fixture(scope="module")
def live_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The project's own site, built, served by `errcat serve` on a free loopback port."""
    scratch = tmp_path_factory.mktemp("openapi")
    result = build_site(load_config(REPO), scratch / "site", build_dir=scratch / "build")
    command = [sys.executable, "-m", "catalog", "serve", "--site", str(result.out), "--port", "0"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if " on http://" not in line:
                pytest.fail(f"errcat serve did not start: {line!r}")
            yield line.split(" on ")[1].split(" ")[0]
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_published_file_is_served(live_site: str) -> None:
    """The built site holds api/openapi.json and errcat serve answers it."""
    import urllib.request

    with urllib.request.urlopen(live_site + "api/openapi.json", timeout=10) as response:
        document = json.loads(response.read())
        assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert set(document["paths"]) == ROUTES
    assert document["servers"][0]["url"] == "http://127.0.0.1:8000"


def test_live_server_conforms_to_its_description(live_site: str, tmp_path: Path) -> None:
    """schemathesis, every check, every phase (examples, coverage, fuzzing, stateful through
    the index's links to entries), a fixed seed and at most 40 cases an operation: no
    failures. (A time budget would make fuzzing repeat until it is spent.)"""
    command = [
        str(Path(sys.executable).with_name("st")),
        "run",
        live_site + "api/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        "40",
        "--seed",
        "20261201",
        "--workers",
        "1",
        "--request-timeout",
        "10",
        "--no-color",
    ]
    environment = {**os.environ, "NO_COLOR": "1"}
    # Its working folder takes schemathesis' and Hypothesis' caches, away from the checkout.
    done = subprocess.run(
        command,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        env=environment,
        check=False,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-6000:]
    assert " passed" in report and "failed" not in report.split("SUMMARY")[-1], report[-3000:]
