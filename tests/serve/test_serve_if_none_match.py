"""Repeated `If-None-Match` headers are one list: a tag (or `*`) in any of them answers 304,
on the fast path and in the general app alike."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_serve import ENTRY, running, write_site

from catalog.serve.fast import fast_variant, prepare_site
from catalog.serve.negotiation import none_match
from catalog.serve.site import Document, load_site

FAST = f"/api/errors/{ENTRY}"
GENERAL = f"/api/errors/%{ord(ENTRY[0]):02x}{ENTRY[1:]}"
"""The same document by a percent-encoded path, which the fast path leaves to the general app."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("inm")
    write_site(base / "site-v1")
    (base / "site").symlink_to("site-v1")
    return base / "site"


@pytest.fixture(scope="module")
def port(site: Path) -> Iterator[int]:
    with running(site) as number:
        yield number


def etag_of(site: Path) -> str:
    return Document.from_bytes((site / "api" / "errors" / f"{ENTRY}.json").read_bytes()).etag


def status_with(port: int, target: str, values: list[str]) -> int:
    """The status of a GET that sends one `If-None-Match` header per value, in order."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", target, skip_accept_encoding=True)
        for value in values:
            connection.putheader("If-None-Match", value)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@pytest.mark.parametrize("target", [FAST, GENERAL])
@pytest.mark.parametrize(
    "values",
    [
        ['"stale"', "{etag}"],
        ['"a", "b"', 'W/"c", W/{etag}'],
        ['"stale"', "*"],
        ['"x"', '"y"', "{etag}"],
    ],
)
def test_a_tag_in_any_repeated_header_answers_304(
    port: int, site: Path, target: str, values: list[str]
) -> None:
    """The matching tag (or `*`) in the second or a later header still revalidates."""
    sent = [value.format(etag=etag_of(site)) for value in values]
    assert status_with(port, target, sent) == 304


@pytest.mark.parametrize("target", [FAST, GENERAL])
def test_repeated_headers_without_a_match_get_the_document(port: int, target: str) -> None:
    """Several headers naming other content, or a quoted `*`, get 200."""
    assert status_with(port, target, ['"stale"', '"*"', 'W/"old"']) == 200


def test_asgi_fast_path_joins_repeated_headers(tmp_path: Path) -> None:
    """The ASGI fast path reads every If-None-Match header, not only the first."""
    site = write_site(tmp_path / "site")
    table = prepare_site(load_site(site))
    etag = etag_of(site).encode("ascii")
    scope = {
        "path": FAST,
        "raw_path": FAST.encode("ascii"),
        "query_string": b"",
        "headers": [(b"if-none-match", b'"stale"'), (b"if-none-match", etag)],
    }
    variant = fast_variant(scope, table)
    assert variant is not None and variant.status == 304


@pytest.mark.parametrize(
    ("header", "expected"),
    [('"a", *', True), ('*, "a"', True), ('"*"', False), ('W/"*"', False), ('"a*b"', False)],
)
def test_star_counts_only_as_a_list_member_of_its_own(header: str, expected: bool) -> None:
    """`*` anywhere in the list matches; a `*` inside a quoted tag does not."""
    assert none_match(header, ('"other"',)) is expected
