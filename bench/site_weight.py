"""What a reader's browser pays for the whole-torch site: first-view bytes, page weight, time to
a usable page, and the first answer to a pasted error (issue 27).

    .venv/bin/python bench/site_weight.py                        # copy torch, new, build, measure
    .venv/bin/python bench/site_weight.py --project /tmp/w       # reuse (or create) this project
    .venv/bin/python bench/site_weight.py --limit-files 300      # a quick run on part of torch

The project is a copy of the installed torch's `*.py` files (as `bench/site_torch.py` makes it)
with a pyproject.toml that only says `[tool.errcat] package = "torch"`: no `[project]` table,
no mkdocs.yml and no git, as a user who points errcat at an installed package has. `errcat new`
drafts the catalog with no hand edits and `errcat build` writes the site; both are skipped when
`--project` already holds them.

The site is served by nginx (gzip on, as any static host) when it is installed, else by
`errcat serve`, and measured in headless Chromium with an empty cache for each page:

- **first view**: bytes over the wire (`encodedDataLength`, gzipped where the server
  compresses) of everything the page loads, for the home page, the first index page, the
  largest index page, and three error pages (the largest, one in the middle, a common one);
  target at most 300 KB each;
- **HTML size**: the largest HTML file of the site and the largest index page; target at most
  200 KB for every index page;
- **DOMContentLoaded** of every index page (or the `--indexes` largest; `--quick-indexes`
  reads each at its load event, for timing all of them) and of the largest error page;
  target under 1 s;
- **failed requests and console errors** on every page visited; target none;
- **overflow**: document wider than the window at 1280 and 390 px; target none;
- **paste to first result**: from focusing the search box (which starts fetching errcat's
  match index) and pasting a concrete message of the catalog to its entry's page shown first;
  target at most 300 ms.

Screenshots of the pages at 1280 and 390 px are written to `--screenshots` (default
`<project>/screenshots`). The figures are printed as a table and written to
`<project>/site_weight.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from site_torch import copy_torch

BIN = Path(sys.executable).parent
PYPROJECT = """\
[tool.errcat]
package = "torch"
catalog = "errors"
generated = "torch/_errcat_errors.py"
"""
FIRST_VIEW_LIMIT = 300 * 1024
INDEX_HTML_LIMIT = 200 * 1024
DCL_LIMIT_MS = 1000.0
PASTE_LIMIT_MS = 300.0
DESKTOP = (1280, 900)
PHONE = (390, 844)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Nothing outside the machine: a request that leaves it fails at once and is counted.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)
NGINX_CONF = """\
daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    gzip on;
    gzip_min_length 256;
    gzip_types text/css application/javascript application/json image/svg+xml text/xml;
    server {{
        listen 127.0.0.1:{port};
        root {site};
        error_page 404 /404.html;
    }}
}}
"""
# Paste as a reader does (one clipboard text, then the input event), then report when the
# first result appears: a MutationObserver stamps it, so the figure does not depend on polling.
PASTE_AND_STAMP = """
const [text, wanted] = arguments;
const box = document.querySelector("input.md-search__input");
window.__first = null;
const started = performance.now();
const stamp = () => {
  const first = document.querySelector(".md-search-result__item a");
  if (window.__first === null && first && first.getAttribute("href").includes(wanted)) {
    window.__first = performance.now() - started;
  }
};
new MutationObserver(stamp).observe(document.body, {childList: true, subtree: true});
box.focus();
box.click();
const data = new DataTransfer();
data.setData("text/plain", text);
box.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true}));
box.value = text;
box.dispatchEvent(new Event("input", {bubbles: true}));
box.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true}));
stamp();
"""


def run(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return time.perf_counter() - started


def prepare(project: Path, limit: int | None) -> Path:
    """The project's built site, made (copy, new, build) where it is not there yet."""
    site = project / "build" / "site"
    if site.is_dir():
        print(f"reusing the site built in {site}")
        return site
    project.mkdir(parents=True, exist_ok=True)
    if not (project / "torch").is_dir():
        files = copy_torch(project, limit)
        (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
        print(f"copied {files} torch files into {project}")
    errcat = str(BIN / "errcat")
    if not (project / "errors").is_dir():
        print(f"errcat new: {run([errcat, 'new'], project):.1f} s")
    print(f"errcat build: {run([errcat, 'build'], project):.1f} s")
    return site


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"the server exited with {process.returncode} before answering")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.05)
    sys.exit("the server did not answer within 60 s")


@contextlib.contextmanager
def served(site: Path, project: Path) -> Iterator[tuple[str, str]]:
    """The site's base URL and what serves it: nginx with gzip when installed, else errcat's
    own server (which compresses too)."""
    port = _free_port()
    nginx = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    scratch = Path(tempfile.mkdtemp(prefix="errcat-weight-"))
    if nginx:
        conf = scratch / "nginx.conf"
        conf.write_text(
            NGINX_CONF.format(root=scratch, port=port, site=site.resolve()), encoding="utf-8"
        )
        command, name = [nginx, "-c", str(conf), "-p", str(scratch)], "nginx (gzip on)"
    else:
        command = [str(BIN / "errcat"), "serve", "--port", str(port)]
        name = "errcat serve"
    process = subprocess.Popen(command, cwd=project, start_new_session=True)
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/", name
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        sys.exit("bench/site_weight.py needs chromium and chromedriver (make browser)")
    profile = tempfile.mkdtemp(prefix="errcat-weight-chromium-")
    options = Options()
    options.binary_location = binary
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        driver.set_page_load_timeout(60)
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _network(driver: Any) -> tuple[int, list[str]]:
    """Bytes over the wire of the requests logged since the last call, and those that failed
    (a transport failure or an HTTP status of 400 or more)."""
    sizes: dict[str, int] = {}
    urls: dict[str, str] = {}
    failed: list[str] = []
    for row in driver.get_log("performance"):
        message = json.loads(row["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            urls[params["requestId"]] = params["request"]["url"]
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            failed.append(f"{params['response']['status']} {params['response']['url']}")
        elif method == "Network.loadingFinished":
            sizes[params["requestId"]] = int(params["encodedDataLength"])
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            failed.append(f"{params.get('errorText')} {urls.get(params['requestId'], '?')}")
    return sum(sizes.values()), failed


def _settled(driver: Any) -> None:
    """Wait for the load event and for the network to fall quiet (Material fetches a few files
    after load); bounded, as a page that never settles is itself a finding."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if driver.execute_script("return document.readyState") == "complete":
            break
        time.sleep(0.05)
    count = -1
    while time.monotonic() < deadline:
        now = driver.execute_script("return performance.getEntriesByType('resource').length")
        if now == count:
            return
        count = now
        time.sleep(0.5)


def visit(driver: Any, url: str, size: tuple[int, int], settle: bool = True) -> dict[str, Any]:
    """One cold view of `url` at `size`: bytes, failures, console errors, DOMContentLoaded and
    how much wider than the window the document is. Without `settle` the figures are taken
    at the load event (DOMContentLoaded is known by then; requests Material makes after load
    may be missed), which times many pages in little time."""
    driver.set_window_size(*size)
    driver.get("about:blank")
    _network(driver)
    driver.get_log("browser")
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(url)
    if settle:
        _settled(driver)
    transferred, failed = _network(driver)
    errors = [row["message"] for row in driver.get_log("browser") if row["level"] == "SEVERE"]
    timing = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return [n.domContentLoadedEventEnd, n.loadEventEnd];"
    )
    overflow = driver.execute_script(
        "return document.documentElement.scrollWidth - window.innerWidth"
    )
    return {
        "url": url,
        "width": size[0],
        "bytes": transferred,
        "failed": failed,
        "console_errors": errors,
        "dcl_ms": round(float(timing[0]), 1),
        "load_ms": round(float(timing[1]), 1),
        "overflow_px": int(overflow),
    }


def paste_to_first_result(driver: Any, base: str, page: str, message: str, entry_id: str) -> float:
    """Milliseconds from focusing the search box on `page` (cold) and pasting `message` to the
    entry's page being the first result."""
    driver.set_window_size(*DESKTOP)
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(base + page)
    _settled(driver)
    driver.execute_script(PASTE_AND_STAMP, message, f"errors/{entry_id}/")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        first = driver.execute_script("return window.__first")
        if first is not None:
            return float(first)
        time.sleep(0.02)
    return float("inf")


def _index_pages(site: Path) -> list[Path]:
    """Every index page's HTML: the all-errors pages, and each module's and exception's."""
    errors = site / "errors"
    pages = [errors / "index.html", *sorted(errors.glob("page-*/index.html"))]
    for kind in ("modules", "exceptions"):
        pages.extend(sorted((errors / kind).rglob("index.html")))
    return [page for page in pages if page.is_file()]


def _concrete(message: str) -> str:
    """The template with each placeholder filled as a run would fill it."""
    import re

    return re.sub(r"\{[^{}]*\}", "7", message)


def choose_errors(site: Path) -> tuple[list[tuple[str, int]], str, str]:
    """Three error pages (largest, median by size, and one with a literal message chosen by a
    seeded draw), and a concrete message with its entry id for the paste."""
    rows = json.loads((site / "api" / "errors" / "index.json").read_text(encoding="utf-8"))
    sized = sorted(
        ((row["id"], (site / "errors" / row["id"] / "index.html").stat().st_size) for row in rows),
        key=lambda pair: pair[1],
    )
    literal = [row for row in rows if "{" not in row["message"] and len(row["message"]) > 30]
    pick = random.Random(27).choice(literal or rows)
    chosen = [sized[-1], sized[len(sized) // 2]]
    chosen.append((pick["id"], (site / "errors" / pick["id"] / "index.html").stat().st_size))
    return chosen, _concrete(pick["message"]), pick["id"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, help="reuse or create the project here")
    parser.add_argument("--limit-files", type=int, help="copy only the first N torch files")
    parser.add_argument(
        "--indexes", type=int, default=0, help="time only the N largest index pages (default all)"
    )
    parser.add_argument("--screenshots", type=Path, help="folder for the screenshots")
    parser.add_argument(
        "--quick-indexes",
        action="store_true",
        help="time index pages at their load event, without waiting for the network to settle",
    )
    args = parser.parse_args(argv)
    project = (args.project or Path(tempfile.mkdtemp(prefix="errcat-weight-"))).resolve()
    site = prepare(project, args.limit_files)
    shots = (args.screenshots or project / "screenshots").resolve()
    shots.mkdir(parents=True, exist_ok=True)

    html = sorted(site.rglob("*.html"), key=lambda path: path.stat().st_size)
    indexes = sorted(_index_pages(site), key=lambda path: path.stat().st_size)
    timed_indexes = indexes[-args.indexes :] if args.indexes else indexes
    errors, message, entry_id = choose_errors(site)
    figures: dict[str, Any] = {
        "pages": len(html),
        "largest_html": [str(html[-1].relative_to(site)), html[-1].stat().st_size],
        "largest_index_html": [str(indexes[-1].relative_to(site)), indexes[-1].stat().st_size],
        "index_pages": len(indexes),
        "index_pages_over_limit": [
            str(p.relative_to(site)) for p in indexes if p.stat().st_size > INDEX_HTML_LIMIT
        ],
    }

    def url_of(path: Path) -> str:
        relative = path.parent.relative_to(site).as_posix()
        return "" if relative == "." else relative + "/"

    first_views = {
        "home": "",
        "first index": "errors/",
        "largest index": url_of(indexes[-1]),
        "largest error": f"errors/{errors[0][0]}/",
        "median error": f"errors/{errors[1][0]}/",
        "drawn error": f"errors/{errors[2][0]}/",
    }
    with served(site, project) as (base, server), chromium() as driver:
        figures["server"] = server
        views = []
        for label, path in first_views.items():
            for size in (DESKTOP, PHONE):
                view = visit(driver, base + path, size)
                view["label"] = label
                views.append(view)
                name = f"{label.replace(' ', '-')}-{size[0]}px.png"
                driver.save_screenshot(str(shots / name))
        figures["first_views"] = views
        index_dcl = []
        for path in timed_indexes:
            view = visit(driver, base + url_of(path), DESKTOP, settle=not args.quick_indexes)
            index_dcl.append(view)
        figures["index_dcl"] = index_dcl
        pastes = [
            paste_to_first_result(driver, base, first_views["median error"], message, entry_id)
            for _ in range(3)
        ]
        figures["paste"] = {"message": message, "id": entry_id, "ms": pastes}

    (project / "site_weight.json").write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return report(figures, shots)


def report(figures: dict[str, Any], shots: Path) -> int:
    ok = True

    def line(label: str, value: str, good: bool) -> None:
        nonlocal ok
        ok = ok and good
        print(f"  {label:<44} {value:>28}  {'ok' if good else 'MISSED'}")

    print(f"\nsite: {figures['pages']} HTML pages, served by {figures['server']}")
    print("first view, cold cache (bytes over the wire, everything included):")
    for view in figures["first_views"]:
        line(
            f"{view['label']} at {view['width']} px",
            f"{view['bytes'] / 1024:.1f} KB, DCL {view['dcl_ms']:.0f} ms",
            view["bytes"] <= FIRST_VIEW_LIMIT,
        )
    name, size = figures["largest_html"]
    print(f"largest HTML file: {name}, {size / 1024:.1f} KB")
    name, size = figures["largest_index_html"]
    line(
        f"largest index page ({figures['index_pages']} in all)",
        f"{size / 1024:.1f} KB",
        size <= INDEX_HTML_LIMIT,
    )
    slowest = max(figures["index_dcl"], key=lambda view: view["dcl_ms"])
    line(
        f"slowest index DCL ({len(figures['index_dcl'])} timed)",
        f"{slowest['dcl_ms']:.0f} ms",
        slowest["dcl_ms"] < DCL_LIMIT_MS,
    )
    print(f"    {slowest['url']}")
    largest_error = next(v for v in figures["first_views"] if v["label"] == "largest error")
    line(
        "largest error page DCL",
        f"{largest_error['dcl_ms']:.0f} ms",
        largest_error["dcl_ms"] < DCL_LIMIT_MS,
    )
    every = figures["first_views"] + figures["index_dcl"]
    failed = sorted({f for view in every for f in view["failed"]})
    console = sorted({e for view in every for e in view["console_errors"]})
    wide = [
        f"{v['url']} at {v['width']} px: {v['overflow_px']} px"
        for v in every
        if v["overflow_px"] > 0
    ]
    line(f"failed requests ({len(every)} page views)", str(len(failed)), not failed)
    line("console errors", str(len(console)), not console)
    line("pages wider than the window", str(len(wide)), not wide)
    for problem in (*failed, *console, *wide):
        print(f"    {problem}")
    paste = figures["paste"]
    worst = max(paste["ms"])
    line(
        "paste to first result (worst of 3, cold page)",
        f"{worst:.0f} ms ({', '.join(f'{m:.0f}' for m in paste['ms'])})",
        worst <= PASTE_LIMIT_MS,
    )
    print(f"    pasted: {paste['message'][:90]!r} → errors/{paste['id']}/")
    print(f"screenshots in {shots}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
