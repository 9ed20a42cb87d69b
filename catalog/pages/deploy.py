"""What a static host or a reverse proxy needs to answer the API's paths and headers from files.

Every build writes the OpenAPI description next to the API (`catalog.pages.api.write_api` calls
`site_files`):

- `api/openapi.json`: the committed OpenAPI description, `servers` set to the site's URL.

The files hosts read from the site's root are written only when asked for (`errcat build
--deploy`, which adds `deployment_files` to the API's documents): a project's own site is its
own, and a host applies them to every page. Their rules name errcat's paths only (its pages
under `errors/`, and `api/errors/`, `api/schema.json`, `api/openapi.json`, `api/match`), never a
bare `api/`, which a project may well have pages under:

- `_redirects` (Netlify, Cloudflare Pages): `/api/errors/<id>` without `.json` rewritten to its
  file, one rule per id. A placeholder rule would do on Netlify, which lets an existing file win,
  but Cloudflare applies rules before files, so there it would rewrite `<id>.json` as well.
- `_headers` (same hosts): CORS, caching and `nosniff` for the API's files, `nosniff` for
  errcat's pages.
- `_deploy/nginx.conf`: an nginx server block with errcat serve's routes and headers: ids with
  and without `.json`, JSON 404s, ETag/304 (nginx's own tags), gzip, CORS with preflights,
  `Cache-Control` as errcat serve sends it, 405 for other methods, and `/api/match` passed to a
  running `errcat serve` (the one route that needs a program). Every other path is served as
  the plain file it is.

The site's path under its host comes from the entries' page URLs (`site_url` + `errors/<id>/`);
a site with no entries is taken to be at `/`.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from catalog.core.ids import is_valid_id
from catalog.pages import openapi

REDIRECTS_FILE = "_redirects"
HEADERS_FILE = "_headers"
NGINX_FILE = "_deploy/nginx.conf"
NGINX_LISTEN = "127.0.0.1:8080"
"""The `listen` line of the server block as written (edit it where it is deployed)."""
NGINX_ROOT = "/srv/errcat/site"
"""The `root` line as written: where the published site lies (edit it too)."""
NGINX_UPSTREAM = "127.0.0.1:8000"
"""Where the server block expects `errcat serve` for `/api/match` (its default address)."""
API_CACHE_CONTROL = "public, max-age=300"
PREFIX_ERRORS = "api/errors/"


def site_url_of(documents: Mapping[str, object]) -> str | None:
    """The site's URL (`site_url`, ending in `/`) as the entry documents name it, or None."""
    for path, document in documents.items():
        name = path.removeprefix(PREFIX_ERRORS).removesuffix(".json")
        if not (path.startswith(PREFIX_ERRORS) and is_valid_id(name)):
            continue
        url = document.get("url") if isinstance(document, dict) else None
        tail = f"errors/{name}/"
        if isinstance(url, str) and url.endswith(tail):
            return url.removesuffix(tail)
    return None


def entry_ids(documents: Mapping[str, object]) -> list[str]:
    """The ids of the entry files among `documents`, sorted."""
    ids = (
        path.removeprefix(PREFIX_ERRORS).removesuffix(".json")
        for path in documents
        if path.startswith(PREFIX_ERRORS) and path.endswith(".json")
    )
    return sorted(ident for ident in ids if is_valid_id(ident))


def _base(documents: Mapping[str, object]) -> tuple[str | None, str]:
    """The site's URL as the documents name it, and its path (ending in `/`)."""
    site_url = site_url_of(documents)
    base = (urlsplit(site_url).path if site_url else "/") or "/"
    return site_url, base if base.endswith("/") else base + "/"


def site_files(documents: Mapping[str, object]) -> dict[str, str]:
    """Site-relative path → text of the files every build writes beside the API `documents`:
    the OpenAPI description."""
    site_url, _ = _base(documents)
    return {openapi.OPENAPI_FILE: openapi.dumps(openapi.published(site_url))}


def deployment_files(documents: Mapping[str, object]) -> dict[str, str]:
    """Site-relative path → text of each file static hosts and nginx read, for the API
    `documents`: written only when a build is asked for them."""
    _, base = _base(documents)
    return {
        REDIRECTS_FILE: redirects(base, entry_ids(documents)),
        HEADERS_FILE: headers(base),
        NGINX_FILE: nginx_server(base),
    }


def redirects(base: str, ids: list[str]) -> str:
    """`_redirects`: each id's extensionless URL rewritten (200) to its file."""
    lines = [
        "# errcat build: /api/errors/<id> answered from /api/errors/<id>.json (Netlify,",
        "# Cloudflare Pages). One rule per id: Cloudflare applies a rule even where a file",
        "# exists, so a placeholder rule would rewrite <id>.json too. Cloudflare reads at most",
        "# 2,000 such rules; beyond them only the .json URLs answer there.",
        "# /api/match needs errcat serve; Netlify can proxy to one (set its address):",
        f"# {base}api/match  https://errcat.example.org/api/match  200",
    ]
    lines.extend(f"{base}api/errors/{ident}  {base}api/errors/{ident}.json  200" for ident in ids)
    return "\n".join(lines) + "\n"


API_FILES = ("api/errors/*", "api/schema.json", "api/openapi.json")
"""The API's files under the site's path, as `_headers` names them: never `api/*`, which would
reach a project's own pages under `api/`."""


def headers(base: str) -> str:
    """`_headers`: CORS, caching and `nosniff` on the API's files, `nosniff` on errcat's pages.

    Hosts join the values of a header set by two matching rules, so no two rules match one path.
    """
    api = "".join(
        f"{base}{path}\n"
        "  Access-Control-Allow-Origin: *\n"
        "  Access-Control-Expose-Headers: ETag\n"
        f"  Cache-Control: {API_CACHE_CONTROL}\n"
        "  X-Content-Type-Options: nosniff\n"
        for path in API_FILES
    )
    return (
        "# errcat build: the headers errcat serve sends (Netlify, Cloudflare Pages), on errcat's\n"
        "# paths only: the rest of the site is the project's.\n"
        f"{api}{base}errors/*\n"
        "  X-Content-Type-Options: nosniff\n"
    )


def _json_string(text: str) -> str:
    # Inside an nginx single-quoted string: only ' and \ need escaping, and the texts here
    # have neither.
    assert "'" not in text and "\\" not in text
    return text


def nginx_server(base: str) -> str:
    """`_deploy/nginx.conf`: a server block for nginx's `http` context."""
    api = f"{base}api/"
    nosniff = "add_header X-Content-Type-Options nosniff always;"
    cors = (
        'add_header Access-Control-Allow-Origin "*" always;\n'
        '        add_header Access-Control-Expose-Headers "ETag" always;'
    )
    preflight = (
        "if ($request_method = OPTIONS) {\n"
        '            add_header Access-Control-Allow-Origin "*" always;\n'
        '            add_header Access-Control-Allow-Methods "GET, HEAD" always;\n'
        "            add_header Access-Control-Allow-Headers $http_access_control_request_headers"
        " always;\n"
        "            add_header Access-Control-Max-Age 86400 always;\n"
        f"            {nosniff}\n"
        "            return 204;\n"
        "        }"
    )

    def api_json(extra: str = "") -> str:
        return (
            "        default_type application/json;\n"
            f"        {preflight}\n"
            f"        {cors}\n"
            f"        {nosniff}\n"
            f"{extra}"
        )

    def document(cache: str) -> str:
        return api_json(
            f'        add_header Cache-Control "{cache}" always;\n'
            "        error_page 404 = @errcat_no_file;\n"
        )

    not_an_id = _json_string(
        '{"error": "not_found", "message": "not an error id: expected 16 lowercase hex '
        'digits, e.g. f978622eed176d93"}'
    )
    no_entry = _json_string(
        '{"error": "not_found", "message": "no such error in this catalog; all ids: '
        f'{base}api/errors/index.json"}}'
    )
    no_path = _json_string(
        '{"error": "not_found", "message": "no such API path; see '
        f'{base}api/errors/index.json, {base}api/errors/<id>, {base}api/match"}}'
    )
    not_allowed = _json_string(
        '{"error": "method_not_allowed", "message": "only GET and HEAD are served"}'
    )
    entry_block = api_json(f'        add_header Cache-Control "{API_CACHE_CONTROL}" always;\n')
    document_block = document(API_CACHE_CONTROL)
    error_block = api_json('        add_header Cache-Control "no-cache" always;\n')
    return f"""# errcat build: an nginx server block that answers the site and its JSON API from the built
# files with the headers errcat serve sends. Include it in nginx's http block:
#
#     http {{ include /etc/nginx/mime.types; include /path/to/site/_deploy/nginx.conf; }}
#
# and edit the lines marked EDIT: where to listen, the published folder (build/site is a
# symlink that errcat build swaps; nginx follows it, so a rebuild is served at once), and
# where errcat serve runs for {api}match, the one route that needs a program.
# The site's URLs start at {base}: root is the folder that holds it there. Only errcat's
# paths get its headers and JSON answers; every other file is served as it is.

server {{
    listen {NGINX_LISTEN};  # EDIT
    root {NGINX_ROOT};  # EDIT
    charset utf-8;
    gzip on;
    gzip_vary on;
    gzip_min_length 256;
    gzip_types application/json text/css text/javascript application/javascript image/svg+xml;
    error_page 404 {base}404.html;
    error_page 405 = @errcat_not_allowed;
    # Only GET and HEAD, and API preflights (OPTIONS), as errcat serve.
    if ($request_method !~ ^(GET|HEAD|OPTIONS)$) {{
        return 405;
    }}

    location = {api}match {{
        proxy_pass http://{NGINX_UPSTREAM};  # EDIT: errcat serve
        proxy_set_header Host $host;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
    }}
    location ~ "^{api}errors/(?<errcat_id>[0-9a-f]{{16}})(\\.json)?$" {{
{entry_block}        try_files {api}errors/$errcat_id.json @errcat_no_entry;
    }}
    location = {api}errors/index.json {{
{document_block}    }}
    location = {api}schema.json {{
{document_block}    }}
    location = {api}openapi.json {{
{document_block}    }}
    location {api}errors/ {{
{error_block}        return 404 '{not_an_id}';
    }}
    location @errcat_no_entry {{
{error_block}        return 404 '{no_entry}';
    }}
    location @errcat_no_file {{
{error_block}        return 404 '{no_path}';
    }}
    location @errcat_not_allowed {{
        default_type application/json;
        add_header Allow "GET, HEAD" always;
        {nosniff}
        return 405 '{not_allowed}';
    }}
    # The deployment files themselves are not pages.
    location ~ ^{base}(_deploy/|_redirects$|_headers$) {{
        return 404;
    }}
    # errcat's pages are revalidated each time, so a rebuilt site shows at once.
    location ^~ {base}errors/ {{
        add_header Cache-Control "no-cache" always;
        {nosniff}
        try_files $uri $uri/ =404;
    }}
    # The rest of the site is the project's (its own pages under {api} too): served as the
    # files are, with nginx's defaults.
    location {base} {{
        try_files $uri $uri/ =404;
    }}
}}
"""
