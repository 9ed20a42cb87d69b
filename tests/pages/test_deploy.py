"""What `errcat build --deploy` writes for static hosts and reverse proxies, and nginx serving a
built site with the generated server block (skipped, with the reason, where nginx is not
installed)."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import mkdocs
from test_build_project import make_project

from catalog.cli import main
from catalog.core.config import load_config
from catalog.pages import deploy, openapi
from catalog.publish.build import build_site

REPO = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None
)
needs_nginx = pytest.mark.skipif(
    NGINX is None, reason="nginx is not installed (make test installs it as root: apt-get)"
)

Reply = tuple[int, dict[str, str], bytes]


def fetch(
    port: int, target: str, method: str = "GET", headers: dict[str, str] | None = None
) -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, target, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port} after {seconds} s")


PROJECT_PAGE = "api/guide/index.html"
"""A page of the project's own under `/api/`, put into the built site: errcat's rules must
leave it alone."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's own site, built with the deployment files into a temporary folder (the
    build/site symlink), with a page of the project's own under `/api/`."""
    scratch = tmp_path_factory.mktemp("deploy")
    # nginx's workers run as this user (`user root;` as root, below): no folder needs opening.
    out = build_site(
        load_config(REPO), scratch / "site", build_dir=scratch / "build", deploy=True
    ).out
    (out / PROJECT_PAGE).parent.mkdir(parents=True)
    (out / PROJECT_PAGE).write_text("<!doctype html><title>API guide</title>\n")
    return out


def entry_id(site: Path) -> str:
    rows = json.loads((site / "api" / "errors" / "index.json").read_text())
    return str(rows[0]["id"])


# The files


def test_build_writes_the_deployment_files(site: Path) -> None:
    """Each build holds _redirects, _headers, the nginx block and the OpenAPI description."""
    for name in ("_redirects", "_headers", "_deploy/nginx.conf", "api/openapi.json"):
        assert (site / name).is_file(), name
    published = json.loads((site / "api" / "openapi.json").read_text())
    # The project's site_url (mkdocs.yml) is where `make serve` serves.
    assert published == openapi.published("http://127.0.0.1:8000/")


def test_redirects_rewrite_every_id_to_its_file(site: Path) -> None:
    """One 200 rewrite per id, from the extensionless URL to the .json file; comments else."""
    rows = json.loads((site / "api" / "errors" / "index.json").read_text())
    rules = [
        line.split()
        for line in (site / "_redirects").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert rules == [
        [f"/api/errors/{ident}", f"/api/errors/{ident}.json", "200"]
        for ident in sorted(row["id"] for row in rows)
    ]


def test_headers_give_the_api_cors_and_caching(site: Path) -> None:
    """_headers: a path line, then indented `Name: value` lines; each header set once."""
    blocks: dict[str, dict[str, str]] = {}
    current = ""
    for line in (site / "_headers").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("  "):
            name, _, value = line.strip().partition(": ")
            blocks[current][name] = value
        else:
            current = line
            blocks[current] = {}
    api = {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Expose-Headers": "ETag",
        "Cache-Control": "public, max-age=300",
        "X-Content-Type-Options": "nosniff",
    }
    assert blocks == {
        "/api/errors/*": api,
        "/api/schema.json": api,
        "/api/openapi.json": api,
        "/errors/*": {"X-Content-Type-Options": "nosniff"},
    }


def test_rules_name_only_errcats_paths(site: Path) -> None:
    """No rule of _headers, _redirects or the nginx block reaches a path outside errcat's own
    (its pages under /errors/, its API files, /api/match): a project's pages under /api/ or
    anywhere else get none of errcat's headers."""
    ours = ("/errors/", "/api/errors/", "/api/schema.json", "/api/openapi.json", "/api/match")
    rules = [
        line
        for name in ("_headers", "_redirects")
        for line in (site / name).read_text().splitlines()
        if line and not line.startswith(("#", " "))
    ]
    assert rules and all(rule.startswith(ours) for rule in rules), rules
    block = (site / "_deploy" / "nginx.conf").read_text()
    locations = re.findall(r"(?m)^    location (?:= |\^~ |~ )?\"?\^?(/[^ \"]*)", block)
    outside = [path for path in locations if not path.startswith((*ours, "/_deploy/", "/("))]
    assert outside == ["/"], locations
    # The one location of the whole site serves files as they are, with no header of errcat's.
    whole = block.split("    location / {", 1)[1].split("}", 1)[0]
    assert whole.split() == ["try_files", "$uri", "$uri/", "=404;"]


def test_files_follow_a_site_under_a_path() -> None:
    """A site_url with a path prefixes every rule and location with it."""
    ident = "f978622eed176d93"
    documents = {
        f"api/errors/{ident}.json": {"url": f"https://example.org/docs/errors/{ident}/"},
        "api/errors/index.json": [],
    }
    files = deploy.deployment_files(documents)
    assert f"/docs/api/errors/{ident}  /docs/api/errors/{ident}.json  200" in files["_redirects"]
    assert files["_headers"].splitlines()[2:4] == [
        "/docs/api/errors/*",
        "  Access-Control-Allow-Origin: *",
    ]
    assert "location = /docs/api/errors/index.json {" in files["_deploy/nginx.conf"]
    assert "location ^~ /docs/errors/ {" in files["_deploy/nginx.conf"]
    servers = json.loads(deploy.site_files(documents)["api/openapi.json"])["servers"]
    assert servers == [{"url": "https://example.org/docs", "description": "this site"}]


def test_site_without_entries_is_taken_to_be_at_the_root() -> None:
    """No entry names the site's URL: the files assume `/` and the committed servers."""
    documents: dict[str, object] = {"api/errors/index.json": []}
    nginx = deploy.deployment_files(documents)["_deploy/nginx.conf"]
    assert "location = /api/errors/index.json {" in nginx
    published = deploy.site_files(documents)["api/openapi.json"]
    assert json.loads(published) == json.loads(openapi.committed_text())


def test_a_build_writes_no_deployment_file_unless_asked(tmp_path: Path) -> None:
    """Without --deploy a build writes the API and the OpenAPI description, and nothing that a
    host would apply to the project's pages; with it, the three files."""
    root = make_project(tmp_path / "widgets")
    plain = build_site(load_config(root), root / "build" / "site").out
    assert (plain / "api" / "openapi.json").is_file()
    for name in ("_redirects", "_headers", "_deploy"):
        assert not (plain / name).exists(), name
    asked = build_site(load_config(root), root / "build" / "deployed", deploy=True).out
    for name in ("_redirects", "_headers", "_deploy/nginx.conf"):
        assert (asked / name).is_file(), name


def test_mkdocs_with_the_plugin_writes_none(tmp_path: Path) -> None:
    """`mkdocs build` with the plugin writes the API and its OpenAPI description only: the
    deployment files are asked for on errcat build's route."""
    root = make_project(tmp_path / "widgets")
    done = mkdocs(root, "build", "--strict")
    assert done.returncode == 0, done.stderr
    site = root / "build" / "mkdocs-site"
    assert (site / "api" / "openapi.json").is_file()
    assert not [name for name in ("_redirects", "_headers", "_deploy") if (site / name).exists()]


def test_the_command_asks_for_them_with_deploy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`errcat build --deploy` writes the deployment files; `errcat build` does not."""
    monkeypatch.chdir(make_project(tmp_path / "widgets"))
    for flags, expected in (([], False), (["--deploy"], True)):
        assert main(["build", *flags]) == 0, capsys.readouterr().err
        assert (tmp_path / "widgets" / "build" / "site" / "_headers").is_file() is expected


# nginx with the generated server block


@pytest.fixture(scope="module")
def serve_port(site: Path) -> Iterator[int]:
    """errcat serve for /api/match, behind nginx."""
    command = [sys.executable, "-m", "catalog", "serve", "--site", str(site), "--port", "0"]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert " on http://127.0.0.1:" in line, line
            yield int(line.split("http://127.0.0.1:")[1].split("/")[0])
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=15)


@pytest.fixture(scope="module")
def nginx_port(
    site: Path, serve_port: int, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    """nginx (one worker) with the site's own server block: only its EDIT lines changed."""
    assert NGINX is not None
    prefix = tmp_path_factory.mktemp("nginx")
    port = free_port()
    block = (site / "_deploy" / "nginx.conf").read_text()
    edited, count = re.subn(
        r"(?m)^(\s*)listen \S+;  # EDIT$", rf"\g<1>listen 127.0.0.1:{port};", block
    )
    edited, roots = re.subn(r"(?m)^(\s*)root \S+;  # EDIT$", rf"\g<1>root {site};", edited)
    edited, upstreams = re.subn(
        r"proxy_pass http://\S+;  # EDIT: errcat serve",
        f"proxy_pass http://127.0.0.1:{serve_port};",
        edited,
    )
    assert (count, roots, upstreams) == (1, 1, 1), "the EDIT lines moved"
    (prefix / "errcat.conf").write_text(edited)
    user = "user root;" if os.geteuid() == 0 else ""
    temp = "\n".join(
        f"    {kind}_temp_path {prefix}/{kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (prefix / "nginx.conf").write_text(
        f"""daemon off;
worker_processes 1;
{user}
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
{temp}
    include {prefix}/errcat.conf;
}}
"""
    )
    checked = subprocess.run(
        [NGINX, "-t", "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", "stderr"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    log = prefix / "error.log"
    process = subprocess.Popen(
        [NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", str(log)]
    )
    try:
        wait_for_port(port)
        yield port
        assert "[emerg]" not in log.read_text()
    finally:
        process.send_signal(signal.SIGQUIT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@needs_nginx
@pytest.mark.parametrize("suffix", ["", ".json"])
def test_nginx_answers_entries_like_errcat_serve(nginx_port: int, site: Path, suffix: str) -> None:
    """/api/errors/<id>[.json]: the file as JSON, cacheable, CORS, nosniff, ETag, 304, gzip."""
    ident = entry_id(site)
    target = f"/api/errors/{ident}{suffix}"
    status, headers, body = fetch(nginx_port, target)
    assert (status, headers["content-type"]) == (200, "application/json")
    assert body == (site / "api" / "errors" / f"{ident}.json").read_bytes()
    assert headers["cache-control"] == "public, max-age=300"
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-expose-headers"] == "ETag"
    assert headers["x-content-type-options"] == "nosniff"
    status, _, body = fetch(nginx_port, target, headers={"If-None-Match": headers["etag"]})
    assert (status, body) == (304, b"")
    status, headers, body = fetch(nginx_port, target, headers={"Accept-Encoding": "gzip"})
    assert headers["content-encoding"] == "gzip"
    assert gzip.decompress(body) == (site / "api" / "errors" / f"{ident}.json").read_bytes()


@needs_nginx
@pytest.mark.parametrize(
    "target", ["/api/errors/index.json", "/api/schema.json", "/api/openapi.json"]
)
def test_nginx_answers_the_other_documents(nginx_port: int, site: Path, target: str) -> None:
    status, headers, body = fetch(nginx_port, target)
    assert (status, headers["content-type"]) == (200, "application/json")
    assert body == (site / target.lstrip("/")).read_bytes()
    assert headers["access-control-allow-origin"] == "*"


@needs_nginx
@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("/api/errors/0123456789abcdef", "no such error"),
        ("/api/errors/F978622EED176D93", "16 lowercase hex digits"),
        ("/api/errors/nope.json", "16 lowercase hex digits"),
    ],
)
def test_nginx_answers_json_404s(nginx_port: int, target: str, words: str) -> None:
    status, headers, body = fetch(nginx_port, target)
    assert (status, headers["content-type"]) == (404, "application/json")
    answer = json.loads(body)
    assert answer["error"] == "not_found" and words in answer["message"]
    assert headers["access-control-allow-origin"] == "*"


@needs_nginx
def test_nginx_answers_preflights_and_refuses_other_methods(nginx_port: int, site: Path) -> None:
    target = f"/api/errors/{entry_id(site)}"
    status, headers, _ = fetch(
        nginx_port,
        target,
        "OPTIONS",
        headers={"Origin": "https://x.example", "Access-Control-Request-Method": "GET"},
    )
    assert status == 204
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-allow-methods"] == "GET, HEAD"
    for method in ("POST", "DELETE"):
        status, headers, body = fetch(nginx_port, target, method)
        assert (status, headers["allow"]) == (405, "GET, HEAD")
        assert json.loads(body)["error"] == "method_not_allowed"


@needs_nginx
def test_nginx_passes_match_to_errcat_serve(nginx_port: int) -> None:
    """/api/match is errcat serve's answer, through the proxy."""
    message = "borrow_torch_tensors requires MPS tensors, got cpu"
    status, headers, body = fetch(nginx_port, "/api/match?message=" + message.replace(" ", "%20"))
    assert (status, headers["content-type"]) == (200, "application/json")
    assert json.loads(body)["matches"][0]["id"] == "f978622eed176d93"
    assert headers["access-control-allow-origin"] == "*"


@needs_nginx
def test_nginx_serves_pages_like_errcat_serve(nginx_port: int, site: Path) -> None:
    """errcat's pages revalidate (no-cache), folder URLs serve index.html, a missing page is
    404.html, and the deployment files are not served."""
    ident = entry_id(site)
    for target in (f"/errors/{ident}/", "/errors/"):
        status, headers, body = fetch(nginx_port, target)
        assert (status, body) == (200, (site / target.lstrip("/") / "index.html").read_bytes())
        assert headers["content-type"].startswith("text/html")
        assert headers["cache-control"] == "no-cache"
        assert headers["x-content-type-options"] == "nosniff"
        assert "access-control-allow-origin" not in headers
    status, headers, body = fetch(nginx_port, "/errors/nothing/")
    assert (status, body) == (404, (site / "404.html").read_bytes())
    for target in ("/_deploy/nginx.conf", "/_redirects", "/_headers"):
        assert fetch(nginx_port, target)[0] == 404, target
    assert fetch(nginx_port, "/../../etc/passwd")[0] == 400


@needs_nginx
@pytest.mark.parametrize("target", ["/", "/api/guide/"])
def test_nginx_leaves_the_projects_pages_alone(nginx_port: int, site: Path, target: str) -> None:
    """A page outside errcat's paths, under /api/ too, is served as its file with none of
    errcat's headers, and a missing one there is the site's 404 page, not errcat's JSON."""
    status, headers, body = fetch(nginx_port, target)
    assert (status, body) == (200, (site / target.lstrip("/") / "index.html").read_bytes())
    assert headers["content-type"].startswith("text/html")
    for name in ("cache-control", "access-control-allow-origin", "x-content-type-options"):
        assert name not in headers, name
    status, headers, body = fetch(nginx_port, "/api/nothing/here")
    assert (status, body) == (404, (site / "404.html").read_bytes())
