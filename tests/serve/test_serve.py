"""`errcat serve` over real HTTP on loopback: the JSON API, the site's files, and bad requests."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import quote

import anyio
import pytest

from catalog.cli import main
from catalog.serve.app import SiteHolder
from catalog.serve.fast import prepare_site
from catalog.serve.site import Document, load_site

ROWS = (
    {
        "id": "f978622eed176d93",
        "status": "active",
        "exception": "ValueError",
        "message": "borrow_torch_tensors requires MPS tensors, got {devices}",
        "module": "runtime.tensor_bridge",
    },
    {
        "id": "d707e25309e5dbae",
        "status": "active",
        "exception": "RuntimeError",
        "message": "SGLANG_USE_MLX requires an available PyTorch MPS device",
        "module": "runtime.mlx_runtime",
    },
    {
        "id": "ffbed2bb70a79900",
        "status": "draft",
        "exception": "ValueError",
        "message": "{transport_name} requires a CUDA tensor",
        "module": "runtime.transport.cuda_ipc",
    },
)
ENTRY = ROWS[0]["id"]
SECRET = "TOP-SECRET-OUTSIDE-THE-SITE"


def write_site(folder: Path, version: str = "v1", rows: Sequence[dict[str, str]] = ROWS) -> Path:
    """A small built site laid out as `errcat build` writes one."""
    (folder / "errors").mkdir(parents=True)
    (folder / "assets").mkdir()
    (folder / "api" / "errors").mkdir(parents=True)
    (folder / "index.html").write_text(f"<!doctype html><title>home {version}</title>\n")
    (folder / "404.html").write_text("<!doctype html><title>Not found</title><p>no such page\n")
    (folder / "assets" / "style.css").write_text("body { margin: 0 }\n" * 50)
    (folder / "assets" / "app.js").write_text("console.log('errcat');\n")
    index = []
    for row in rows:
        url = f"http://127.0.0.1:8000/errors/{row['id']}/"
        index.append({**row, "url": url})
        page = folder / "errors" / row["id"]
        page.mkdir()
        (page / "index.html").write_text(f"<!doctype html><h1>{row['message']}</h1>\n")
        entry = {
            "schema_version": 1,
            **row,
            "meaning": f"{version}: " + "the tensors live on the wrong device. " * 20,
            "solutions": ["move the tensors first", "check the device"],
            "url": url,
        }
        (folder / "api" / "errors" / f"{row['id']}.json").write_text(json.dumps(entry, indent=2))
    (folder / "api" / "errors" / "index.json").write_text(json.dumps(index, indent=2))
    (folder / "api" / "schema.json").write_text(json.dumps({"type": "object", "title": "entry"}))
    return folder


def swap_symlink(link: Path, target: Path) -> None:
    """Point `link` at `target` in one step, as `errcat build` does."""
    fresh = link.with_name(link.name + ".new")
    fresh.symlink_to(target.name)
    os.replace(fresh, link)


# The server runs in a child process: granian's main process owns the signals of its main thread
# and forks its workers, so it cannot run in a thread of the test process.
SERVER_CHILD = """
import json, sys
from pathlib import Path
from catalog.serve import ServeOptions, bind, create_app, serve, url_of
settings = json.loads(sys.argv[1])
app = create_app(Path(settings["site"]), **settings["app"])
sock = bind("127.0.0.1", 0)
print(url_of(sock), flush=True)
sys.exit(serve(app, sock, ServeOptions(**settings["options"])))
"""


@contextmanager
def running(
    site: Path, options: dict[str, object] | None = None, **app_options: float
) -> Iterator[int]:
    """Serve `site` on a free loopback port in a child process; yields the port.

    `options` are ServeOptions fields (default: a 1 s graceful stop). On leaving, the server is
    stopped with SIGINT and must exit 0 within 15 s.
    """
    settings = {
        "site": str(site),
        "app": app_options,
        "options": {"graceful_shutdown": 1, **(options or {})},
    }
    command = [sys.executable, "-c", SERVER_CHILD, json.dumps(settings)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None and process.stderr is not None
            line = process.stdout.readline()
            if not line.startswith("http://127.0.0.1:"):
                process.kill()
                pytest.fail(f"the server did not start: {line!r} {process.stderr.read()}")
            yield int(line.removeprefix("http://127.0.0.1:").split("/")[0])
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=15) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


Reply = tuple[int, dict[str, str], bytes]


def fetch(
    port: int,
    target: str,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> Reply:
    """One request with `target` sent exactly as given (http.client does not normalise it)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, target, skip_host=False, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


def raw_exchange(port: int, data: bytes) -> bytes:
    """Send raw bytes and read the whole answer (the server closes or the request says close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """build/site -> build/site-v1, a secret file next to build/, and a symlink out of the site."""
    base = tmp_path_factory.mktemp("serve")
    (base / "secret.txt").write_text(SECRET)
    version = write_site(base / "build" / "site-v1")
    (version / "leak.txt").symlink_to(base / "secret.txt")
    (base / "build" / "site").symlink_to("site-v1")
    return base / "build" / "site"


@pytest.fixture(scope="module")
def port(built: Path) -> Iterator[int]:
    with running(built) as number:
        yield number


def quote_all(text: str) -> str:
    return quote(text, safe="")


def entry_bytes(site: Path, ident: str = ENTRY) -> bytes:
    return (site / "api" / "errors" / f"{ident}.json").read_bytes()


# The JSON API


@pytest.mark.parametrize("target", [f"/api/errors/{ENTRY}", f"/api/errors/{ENTRY}.json"])
def test_entry_is_its_json_file_with_etag_and_cache_control(
    port: int, built: Path, target: str
) -> None:
    """/api/errors/<id> and <id>.json answer the entry file as JSON, tagged and cacheable."""
    status, headers, body = fetch(port, target)
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert body == entry_bytes(built)
    assert headers["etag"] == Document.from_bytes(body).etag
    assert headers["etag"].startswith('"') and not headers["etag"].startswith("W/")
    assert headers["cache-control"] == "public, max-age=300"
    assert headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("target", "file"),
    [("/api/errors/index.json", "api/errors/index.json"), ("/api/schema.json", "api/schema.json")],
)
def test_index_and_schema_are_answered_as_json(
    port: int, built: Path, target: str, file: str
) -> None:
    """The index and the schema are served as tagged JSON, not taken for an id."""
    status, headers, body = fetch(port, target)
    assert (status, headers["content-type"]) == (200, "application/json")
    assert body == (built / file).read_bytes()
    assert headers["etag"] == Document.from_bytes(body).etag


@pytest.mark.parametrize(
    "target", [f"/api/errors/{ENTRY}", "/api/errors/index.json", "/", "/assets/style.css"]
)
def test_head_has_the_headers_of_get_and_no_body(port: int, target: str) -> None:
    """HEAD answers what GET would, without the body."""
    get_status, get_headers, _ = fetch(port, target)
    status, headers, body = fetch(port, target, "HEAD")
    assert (status, body) == (get_status, b"")
    for name in ("content-type", "content-length", "etag", "cache-control"):
        assert headers.get(name) == get_headers.get(name), name


@pytest.mark.parametrize(
    "if_none_match",
    ["{etag}", '"0000", {etag}', "W/{etag}", "*", "{gzip}", '"a",   {etag} ,"b"'],
)
def test_matching_if_none_match_answers_304(port: int, if_none_match: str) -> None:
    """A matching If-None-Match (single, listed, weak, `*`, or the gzip tag) answers 304."""
    _, headers, body = fetch(port, f"/api/errors/{ENTRY}")
    document = Document.from_bytes(body)
    sent = if_none_match.format(etag=document.etag, gzip=document.gzip_etag)
    status, headers, body = fetch(port, f"/api/errors/{ENTRY}", headers={"If-None-Match": sent})
    assert (status, body) == (304, b"")
    assert headers["etag"] == document.etag
    assert headers["cache-control"] == "public, max-age=300"


def test_stale_etag_gets_the_document(port: int, built: Path) -> None:
    """An If-None-Match naming other content gets the full document."""
    status, _, body = fetch(port, f"/api/errors/{ENTRY}", headers={"If-None-Match": '"stale"'})
    assert (status, body) == (200, entry_bytes(built))


def test_gzip_for_clients_that_accept_it(port: int, built: Path) -> None:
    """Accept-Encoding: gzip gets a gzip body with its own strong tag; q=0 refuses gzip."""
    status, headers, body = fetch(
        port, f"/api/errors/{ENTRY}", headers={"Accept-Encoding": "br, gzip;q=0.8"}
    )
    assert (status, headers["content-encoding"]) == (200, "gzip")
    assert gzip.decompress(body) == entry_bytes(built)
    assert int(headers["content-length"]) == len(body) < len(entry_bytes(built))
    assert headers["vary"] == "Accept-Encoding"
    assert headers["etag"] == Document.from_bytes(entry_bytes(built)).gzip_etag
    status, headers, body = fetch(
        port, f"/api/errors/{ENTRY}", headers={"Accept-Encoding": "gzip;q=0, *"}
    )
    assert "content-encoding" not in headers
    assert body == entry_bytes(built)


def test_pages_are_compressed_for_clients_that_accept_it(port: int, built: Path) -> None:
    """The site's text files are gzip-compressed on request too."""
    status, headers, body = fetch(port, "/assets/style.css", headers={"Accept-Encoding": "gzip"})
    assert (status, headers["content-encoding"]) == (200, "gzip")
    assert gzip.decompress(body) == (built / "assets" / "style.css").read_bytes()


def test_unknown_id_is_a_json_404(port: int) -> None:
    """A well-formed id that is not in the catalog gets a JSON 404 naming it."""
    status, headers, body = fetch(port, "/api/errors/0123456789abcdef")
    assert (status, headers["content-type"]) == (404, "application/json")
    answer = json.loads(body)
    assert answer["error"] == "not_found"
    assert answer["id"] == "0123456789abcdef"
    assert "index.json" in answer["message"]


@pytest.mark.parametrize(
    "ident",
    [
        "F978622EED176D93",
        "f978622eed176d9",
        "f978622eed176d93a",
        "g978622eed176d93",
        "f978622eed176d93.JSON",
        "f978622eed176d93.json.json",
        "x" * 1500,
        "%20",
        "index",
    ],
)
def test_malformed_id_is_a_json_404(port: int, ident: str) -> None:
    """Anything but 16 lowercase hex digits (optionally `.json`) is a JSON 404."""
    status, headers, body = fetch(port, f"/api/errors/{ident}")
    assert (status, headers["content-type"]) == (404, "application/json")
    answer = json.loads(body)
    assert answer["error"] == "not_found"
    assert "16 lowercase hex digits" in answer["message"]
    assert len(answer["id"]) <= 103


def test_api_answers_from_memory_and_malformed_ids_never_read_files(tmp_path: Path) -> None:
    """Entries are loaded at start; a file named like a malformed id is never served."""
    site = write_site(tmp_path / "site")
    odd = site / "api" / "errors" / "F978622EED176D93.json"
    odd.write_text('{"served": "from disk"}')
    expected = entry_bytes(site)
    with running(site) as port:
        (site / "api" / "errors" / f"{ENTRY}.json").unlink()
        assert fetch(port, f"/api/errors/{ENTRY}")[2] == expected
        status, _, body = fetch(port, "/api/errors/F978622EED176D93.json")
        assert status == 404
        assert b"from disk" not in body


def test_other_api_paths_are_json_404(port: int) -> None:
    """The server owns /api/: an unknown path there is a JSON 404, not the HTML 404 page."""
    status, headers, body = fetch(port, "/api/nothing/here")
    assert (status, headers["content-type"]) == (404, "application/json")
    assert json.loads(body)["error"] == "not_found"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"])
@pytest.mark.parametrize("target", [f"/api/errors/{ENTRY}", "/api/errors/index.json", "/"])
def test_other_methods_get_405_with_allow(port: int, method: str, target: str) -> None:
    """Methods other than GET and HEAD get 405 and `Allow: GET, HEAD`, bodies unread."""
    status, headers, _ = fetch(port, target, method, body=b'{"x": 1}')
    assert status == 405
    assert headers["allow"] == "GET, HEAD"
    assert fetch(port, "/")[0] == 200


# The site's files


@pytest.mark.parametrize(
    ("target", "file", "content_type", "cache_control"),
    [
        ("/", "index.html", "text/html; charset=utf-8", "no-cache"),
        ("/index.html", "index.html", "text/html; charset=utf-8", "no-cache"),
        (f"/errors/{ENTRY}/", f"errors/{ENTRY}/index.html", "text/html; charset=utf-8", "no-cache"),
        ("/assets/style.css", "assets/style.css", "text/css; charset=utf-8", "public, max-age=300"),
        (
            "/assets/app.js",
            "assets/app.js",
            "text/javascript; charset=utf-8",
            "public, max-age=300",
        ),
    ],
)
def test_site_files_are_served_with_their_types(
    port: int, built: Path, target: str, file: str, content_type: str, cache_control: str
) -> None:
    """Pages and assets are served with their content types; folder URLs serve index.html."""
    status, headers, body = fetch(port, target)
    assert status == 200
    assert body == (built / file).read_bytes()
    assert headers["content-type"] == content_type
    assert headers["cache-control"] == cache_control


def test_page_revalidates_with_its_etag(port: int) -> None:
    """A page's ETag answers 304 on revalidation."""
    _, headers, _ = fetch(port, f"/errors/{ENTRY}/")
    status, _, body = fetch(port, f"/errors/{ENTRY}/", headers={"If-None-Match": headers["etag"]})
    assert (status, body) == (304, b"")


def test_folder_url_without_slash_redirects(port: int) -> None:
    """/errors/<id> redirects to /errors/<id>/."""
    status, headers, _ = fetch(port, f"/errors/{ENTRY}")
    assert status in (301, 302, 307, 308)
    assert headers["location"].endswith(f"/errors/{ENTRY}/")


def test_unknown_page_is_the_site_404_page(port: int, built: Path) -> None:
    """A missing page answers 404 with the site's own 404.html."""
    status, headers, body = fetch(port, "/errors/nothing/")
    assert status == 404
    assert headers["content-type"].startswith("text/html")
    assert body == (built / "404.html").read_bytes()


# Bad input


@pytest.mark.parametrize(
    "target",
    [
        "/api/errors/../../etc/passwd",
        "/api/errors/../../../secret.txt",
        "/../../secret.txt",
        "/%2e%2e/%2e%2e/secret.txt",
        "/%2E%2E/%2E%2E/secret.txt",
        "/api/errors/..%2f..%2f..%2fsecret.txt",
        "/api/errors/%2e%2e%2f%2e%2e%2fsecret.txt",
        "/..%5c..%5csecret.txt",
        "/errors\\..\\..\\..\\secret.txt",
        "/index.html%00.json",
        "/api/errors/f978622eed176d93%00",
        "/./index.html",
        "//etc/passwd",
        "/leak.txt",
        "http://127.0.0.1/../../secret.txt",
        "*",
    ],
)
def test_traversal_attempts_get_a_clean_4xx(port: int, target: str) -> None:
    """Paths that try to leave the site get a 4xx and nothing from outside it."""
    status, _, body = fetch(port, target)
    assert 400 <= status < 500
    assert SECRET.encode() not in body
    assert b"root:" not in body


@pytest.mark.parametrize(
    "request_line",
    [b"GET /\x00/../secret.txt HTTP/1.1", b"GET /..\\secret.txt HTTP/1.1", b"GET /a b HTTP/1.1"],
)
def test_raw_bytes_in_the_path_get_a_clean_4xx(port: int, request_line: bytes) -> None:
    """NUL, backslashes and spaces sent raw are refused with a 4xx."""
    answer = raw_exchange(port, request_line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
    status = int(answer.split(b" ", 2)[1])
    assert 400 <= status < 500
    assert SECRET.encode() not in answer


def test_overlong_urls_and_headers_get_a_clean_4xx(port: int) -> None:
    """Long paths get 414, long headers 431 (or 400 from h11); the server keeps answering."""
    status, headers, _ = fetch(port, "/api/errors/" + "a" * 5000)
    assert (status, headers["content-type"]) == (414, "application/json")
    assert fetch(port, "/" + "b" * 40000)[0] == 414
    assert fetch(port, "/", headers={"X-Big": "c" * 40000})[0] == 431
    assert fetch(port, "/", headers={f"X-{n}": "d" * 100 for n in range(300)})[0] == 431
    # 100 KB of headers is more than the socket buffers hold; the HTTP layer reads the whole
    # head before the app answers, so the client has finished sending and reads the 431.
    status, headers, body = fetch(port, "/api/errors/", headers={"X-Big": "f" * 100000})
    assert (status, json.loads(body)["error"]) == (431, "headers_too_large")
    # Beyond what the HTTP layer buffers it refuses the head itself (no JSON body then), or
    # the kernel resets a client still sending; either way the server stays up.
    with suppress(ConnectionResetError, BrokenPipeError):
        assert fetch(port, "/", headers={"X-Big": "f" * 2_000_000})[0] == 431
    assert fetch(port, "/api/match?message=" + "e" * 20000)[0] == 414
    assert fetch(port, f"/api/errors/{ENTRY}")[0] == 200


def test_slow_client_is_cut_off_while_others_are_served(built: Path) -> None:
    """A client that dribbles its request head is disconnected; others are answered meanwhile."""
    with running(built, {"header_timeout": 0.5}) as port:
        slow = socket.create_connection(("127.0.0.1", port), timeout=5)
        started = time.monotonic()
        closed_after = None
        # Long enough that the 0.5 s deadline ends it first however slowly the loop runs: each
        # byte waits for a full answer to another client and 50 ms more.
        with slow:
            for byte in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"z" * 400:
                try:
                    slow.sendall(bytes([byte]))
                except OSError:
                    closed_after = time.monotonic() - started
                    break
                assert fetch(port, f"/api/errors/{ENTRY}")[0] == 200
                slow.settimeout(0.05)
                try:
                    if slow.recv(1024) == b"":
                        closed_after = time.monotonic() - started
                        break
                except TimeoutError:
                    pass
        # Cut off mid-request, and not before its deadline.
        assert closed_after is not None and closed_after >= 0.5


def test_concurrent_clients_are_all_answered(port: int, built: Path) -> None:
    """Sixteen clients at once, 20 requests each: every answer is the right 200."""
    expected = entry_bytes(built)
    failures: list[object] = []

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            for _ in range(20):
                connection.request("GET", f"/api/errors/{ENTRY}")
                response = connection.getresponse()
                body = response.read()
                if response.status != 200 or body != expected:
                    failures.append((response.status, body[:80]))
        except OSError as exc:
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []


# Following `errcat build`


def test_swapped_site_is_picked_up(tmp_path: Path) -> None:
    """After the build swaps build/site to a new folder, pages and API answer from it."""
    write_site(tmp_path / "site-v1", "v1")
    link = tmp_path / "site"
    link.symlink_to("site-v1")
    extra = {**ROWS[0], "id": "00000000000000aa", "message": "a new error"}
    write_site(tmp_path / "site-v2", "v2", [*ROWS, extra])
    with running(link, recheck_interval=0.0) as port:
        assert b"home v1" in fetch(port, "/")[2]
        assert fetch(port, "/api/errors/00000000000000aa")[0] == 404
        swap_symlink(link, tmp_path / "site-v2")
        assert b"home v2" in fetch(port, "/")[2]
        assert fetch(port, "/api/errors/00000000000000aa")[0] == 200
        assert b'"v2: ' in fetch(port, f"/api/errors/{ENTRY}")[2]


def test_incomplete_new_site_keeps_the_old_one(tmp_path: Path) -> None:
    """A swap to a folder without the API index is refused; the previous site stays served."""
    write_site(tmp_path / "site-v1", "v1")
    (tmp_path / "site-v2").mkdir()
    (tmp_path / "site-v2" / "index.html").write_text("half built")
    link = tmp_path / "site"
    link.symlink_to("site-v1")
    with running(link, recheck_interval=0.0) as port:
        swap_symlink(link, tmp_path / "site-v2")
        assert b"home v1" in fetch(port, "/")[2]
        assert fetch(port, f"/api/errors/{ENTRY}")[0] == 200


def test_holder_rechecks_at_most_once_per_interval(tmp_path: Path) -> None:
    """Within the interval the holder does not look at the symlink again."""
    write_site(tmp_path / "site-v1", "v1")
    write_site(tmp_path / "site-v2", "v2")
    link = tmp_path / "site"
    link.symlink_to("site-v1")
    holder = SiteHolder(link, load_site(link), recheck_interval=3600)
    swap_symlink(link, tmp_path / "site-v2")
    served = anyio.run(holder.current)
    assert served.site.root == (tmp_path / "site-v1").resolve()


def test_entries_are_prepared_on_first_request_from_the_bytes_loaded(tmp_path: Path) -> None:
    """Loading a site prepares no document; a document's answers are made on its first lookup,
    from the bytes read at load (a file rewritten since does not leak into the served build),
    an entry's under both of its paths, and lookups of unknown paths miss."""
    site = write_site(tmp_path / "site")
    table = prepare_site(load_site(site))
    entry_file = site / "api" / "errors" / f"{ENTRY}.json"
    loaded = entry_file.read_bytes()
    entry_file.write_text('{"rewritten": true}')
    assert table._prepared == {}
    prepared = table.get(f"/api/errors/{ENTRY}")
    assert prepared is not None and prepared.plain.body == loaded
    assert table[f"/api/errors/{ENTRY}.json"] is prepared
    assert list(table._prepared) == [ENTRY]
    index = table["/api/errors/index.json"]
    assert index.plain.body == (site / "api" / "errors" / "index.json").read_bytes()
    for missing in ("/api/errors/0000000000000000", "/api/errors/nope", "/api/other.json"):
        assert table.get(missing) is None
    assert len(table) == len(list(table)) == 2 + 2 * len(ROWS)
    assert set(table) >= {"/api/errors/index.json", "/api/schema.json", f"/api/errors/{ENTRY}"}


# /api/match


def test_match_finds_the_entry_of_a_concrete_message(port: int) -> None:
    """A concrete message finds its entry first, with message, exception, url and score."""
    message = "borrow_torch_tensors requires MPS tensors, got cpu, mps:0"
    status, headers, body = fetch(port, "/api/match?message=" + quote_all(message))
    assert (status, headers["content-type"]) == (200, "application/json")
    answer = json.loads(body)
    assert answer["message"] == message
    best = answer["matches"][0]
    assert best["id"] == ENTRY
    assert best["exception"] == "ValueError"
    assert best["message"] == ROWS[0]["message"]
    assert best["url"].endswith(f"/errors/{ENTRY}/")
    assert isinstance(best["score"], int) and best["score"] > 0


def test_match_without_a_match_is_an_empty_list(port: int) -> None:
    """A message no entry matches answers 200 with no matches."""
    status, _, body = fetch(port, "/api/match?message=" + quote_all("nothing like it at all"))
    assert status == 200
    assert json.loads(body)["matches"] == []


@pytest.mark.parametrize("query", ["", "?message=", "?other=1", "?message=" + "x" * 4097])
def test_match_needs_a_message_of_sane_length(port: int, query: str) -> None:
    """A missing, empty or overlong message is a JSON 400."""
    status, headers, body = fetch(port, "/api/match" + query)
    assert (status, headers["content-type"]) == (400, "application/json")
    assert json.loads(body)["error"] == "bad_request"


# The command


def test_missing_site_exits_2_with_how_to_build_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing site is reported with the build command, before any port is bound."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = str(taken.getsockname()[1])
        assert main(["serve", "--site", str(tmp_path / "nope"), "--port", busy]) == 2
    err = capsys.readouterr().err
    assert "no built site at" in err
    assert "run: errcat build" in err
    assert "in use" not in err


def test_site_without_api_index_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A site folder without api/errors/index.json is refused with the build command."""
    site = write_site(tmp_path / "site")
    (site / "api" / "errors" / "index.json").unlink()
    assert main(["serve", "--site", str(site)]) == 2
    err = capsys.readouterr().err
    assert "api/errors/index.json" in err and "run: errcat build" in err


def test_port_in_use_exits_2(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A port already taken is a plain message and exit 2."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = str(taken.getsockname()[1])
        assert main(["serve", "--site", str(built), "--port", busy]) == 2
    err = capsys.readouterr().err
    assert f"port {busy} on 127.0.0.1 is already in use" in err
    assert "--port" in err


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serve_prints_its_address_and_stops_cleanly(built: Path, stop: signal.Signals) -> None:
    """`errcat serve` prints where it serves, answers, and exits 0 on Ctrl-C or SIGTERM."""
    command = [sys.executable, "-m", "catalog", "serve", "--site", str(built), "--port", "0"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None and process.stderr is not None
            line = process.stdout.readline()
            assert line.startswith(f"Serving {built} on http://127.0.0.1:")
            assert line.endswith("/ (Ctrl-C to stop)\n")
            port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
            assert fetch(port, f"/api/errors/{ENTRY}")[0] == 200
            process.send_signal(stop)
            assert process.wait(timeout=15) == 0
            assert "Traceback" not in process.stderr.read()
        finally:
            if process.poll() is None:
                process.kill()


# CORS and the API description


@pytest.mark.parametrize(
    "target",
    [
        f"/api/errors/{ENTRY}",
        f"/api/errors/{ENTRY}.json",
        "/api/errors/index.json",
        "/api/errors/0123456789abcdef",
        "/api/errors/nope",
        "/api/nothing",
        "/api/match?message=x",
        "/api/match",
        "/api/errors/%2e%2e/secret",
    ],
)
def test_every_api_answer_allows_any_origin(port: int, target: str) -> None:
    """JSON answers, errors and refusals included, carry `Access-Control-Allow-Origin: *`."""
    status, headers, _ = fetch(port, target, headers={"Origin": "https://elsewhere.example"})
    assert headers["access-control-allow-origin"] == "*", status
    assert headers["content-type"] == "application/json"


def test_etag_is_readable_across_origins(port: int) -> None:
    """A page elsewhere can read the ETag to revalidate with it."""
    _, headers, _ = fetch(port, f"/api/errors/{ENTRY}", headers={"Origin": "https://x.example"})
    assert headers["access-control-expose-headers"] == "ETag"


def test_pages_get_no_cors_headers(port: int) -> None:
    """Only the JSON routes are shared across origins."""
    _, headers, _ = fetch(port, "/", headers={"Origin": "https://elsewhere.example"})
    assert "access-control-allow-origin" not in headers


@pytest.mark.parametrize("target", [f"/api/errors/{ENTRY}", "/api/errors/index.json"])
def test_preflight_is_answered(port: int, target: str) -> None:
    """An API preflight gets 204 with the allowed methods and the requested headers."""
    status, headers, body = fetch(
        port,
        target,
        "OPTIONS",
        headers={
            "Origin": "https://elsewhere.example",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "if-none-match",
        },
    )
    assert (status, body) == (204, b"")
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-allow-methods"] == "GET, HEAD"
    assert headers["access-control-allow-headers"] == "if-none-match"
    assert int(headers["access-control-max-age"]) > 0


def test_preflight_with_odd_request_headers_echoes_nothing(port: int) -> None:
    """Requested headers that are not a list of header names are not echoed back."""
    status, headers, _ = fetch(
        port,
        f"/api/errors/{ENTRY}",
        "OPTIONS",
        headers={"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "a b"},
    )
    assert status == 204
    assert "access-control-allow-headers" not in headers


def test_preflight_of_a_refused_path_is_refused(port: int) -> None:
    """The guard still answers first: a preflight for a traversal path is a 400."""
    status, _, _ = fetch(
        port, "/api/../secret.txt", "OPTIONS", headers={"Access-Control-Request-Method": "GET"}
    )
    assert status == 400


def test_openapi_description_is_served(tmp_path: Path) -> None:
    """`/api/openapi.json` is answered like the other documents where the site has one."""
    site = write_site(tmp_path / "site")
    (site / "api" / "openapi.json").write_text('{"openapi": "3.1.0", "paths": {}}')
    with running(site) as port:
        status, headers, body = fetch(port, "/api/openapi.json")
        assert (status, headers["content-type"]) == (200, "application/json")
        assert json.loads(body)["openapi"] == "3.1.0"
        assert headers["etag"] == Document.from_bytes(body).etag


@pytest.mark.parametrize(
    "headers",
    [{}, {"Accept-Encoding": "gzip"}, {"If-None-Match": "*"}, {"Accept-Encoding": "gzip, br"}],
)
def test_fast_path_and_general_app_answer_alike(port: int, headers: dict[str, str]) -> None:
    """A percent-encoded id (the general app) gets the same answer as the plain one (the
    fast path): status, body and every header but the date."""
    plain = fetch(port, f"/api/errors/{ENTRY}", headers=headers)
    encoded = fetch(port, f"/api/errors/%{ord(ENTRY[0]):02x}{ENTRY[1:]}", headers=headers)
    assert plain[0] == encoded[0] and plain[2] == encoded[2]
    without_date = [
        {k: v for k, v in reply[1].items() if k != "date"} for reply in (plain, encoded)
    ]
    assert without_date[0] == without_date[1]


def test_workers_serve_and_stop_cleanly(built: Path) -> None:
    """`--workers 2`: both answer (many connections), and the server stops with exit 0."""
    with running(built, {"workers": 2}) as port:
        answers = {fetch(port, f"/api/errors/{ENTRY}")[0] for _ in range(20)}
        assert answers == {200}
