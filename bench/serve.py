"""Load `errcat serve` on loopback with `/api/errors/<id>` requests, and nginx with the same files.

    .venv/bin/python bench/serve.py [--site DIR] [--entries N] [--connections C] [--duration S]
                                    [--workers W]

Without `--site` it writes a synthetic built site of N entries (default 1,000; entry files of
about 2.5 KB, like the real ones) to a temporary folder. It starts `errcat serve` as its own
process (the real command line), checks one answer, warms up, then runs a bounded load of C
keep-alive connections (default 32) for S seconds, each request for the next id in turn.
The load comes from `wrk` when it is installed (`apt-get install -y wrk`), else from a Python
asyncio client (slower: it then shares the CPU with the server it measures).
Where `nginx` is installed it serves the same folder (`try_files $uri.json`, one worker
process, like our one process) under the same load in the same run, and the report gives our
throughput as a fraction of nginx's. A second pair runs with W worker processes each
(`errcat serve --workers W`, nginx `worker_processes W`; default: one per CPU), the figure for
using every core. All four servers start first, then each round (default 3) loads each in
turn, and the report gives every server's median round, so that a moment when other programs
busy the machine lowers every server's figure rather than one. Reports requests/s, p99 latency and errors (non-2xx answers, connection
errors, timeouts); exits 1 if there were any errors.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

# wrk calls `request` for every request and `done` once; the ids are spliced into the script.
WRK_SCRIPT = """
local ids = {%(ids)s}
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/api/errors/" .. ids[(n %% #ids) + 1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests": %%d, "seconds": %%f, "p50_ms": %%f, "p99_ms": %%f, ' ..
    '"errors": %%d}\\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1e3,
    latency:percentile(99) / 1e3,
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""

NGINX_CONF = """
daemon off;
worker_processes %(workers)d;
%(user)s
pid %(prefix)s/nginx.pid;
error_log %(prefix)s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    types { text/html html; application/json json; text/css css; }
    client_body_temp_path %(prefix)s/body;
    proxy_temp_path %(prefix)s/proxy;
    fastcgi_temp_path %(prefix)s/fastcgi;
    uwsgi_temp_path %(prefix)s/uwsgi;
    scgi_temp_path %(prefix)s/scgi;
    server {
        listen 127.0.0.1:%(port)d;
        root %(root)s;
        location /api/errors/ {
            default_type application/json;
            add_header Cache-Control "public, max-age=300";
            try_files $uri $uri.json =404;
        }
    }
}
"""


@dataclass(frozen=True)
class Result:
    """One server under one load."""

    server: str
    requests: int
    seconds: float
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int
    """Non-2xx answers plus connection errors and timeouts."""


def write_site(folder: Path, entries: int) -> list[str]:
    """A synthetic built site with `entries` API files of realistic size; returns the ids."""
    (folder / "api" / "errors").mkdir(parents=True)
    (folder / "index.html").write_text("<!doctype html><title>errcat</title>\n")
    rows: list[dict[str, str]] = []
    for n in range(entries):
        ident = f"{n:016x}"
        url = f"http://127.0.0.1:8000/errors/{ident}/"
        entry = {
            "schema_version": 1,
            "id": ident,
            "status": "active",
            "name": f"SyntheticError{n}",
            "exception": "ValueError",
            "message": f"synthetic_function_{n} requires {{what}} on device {{device}}, got {{t}}",
            "meaning": "The call was given a value it cannot use here. " * 8,
            "solutions": [f"Pass a tensor on the right device (case {n}).", "Check the shape."],
            "example": {"before": "f(t)\n" * 6, "after": "f(t.to(device))\n" * 6, "requires": []},
            "trigger": "Calling the function with a tensor elsewhere.",
            "situations": ["Mixed devices in one batch.", "A tensor loaded on the CPU."],
            "related": [],
            "sources": [
                {
                    "path": f"runtime/module_{n % 17}.py",
                    "line": 10 + n % 300,
                    "column": 9,
                    "function": f"synthetic_function_{n}",
                    "url": None,
                    "snippet": {"start_line": 8, "code": "    x = 1\n" * 7, "highlight_line": 10},
                }
            ],
            "url": url,
            "repository": {"url": None, "commit": "0" * 40, "dirty": False},
        }
        text = json.dumps(entry, indent=2)
        (folder / "api" / "errors" / f"{ident}.json").write_text(text)
        row = {key: str(entry[key]) for key in ("id", "status", "exception", "message")}
        rows.append({**row, "module": f"runtime.module_{n % 17}", "url": url})
    (folder / "api" / "errors" / "index.json").write_text(json.dumps(rows))
    return [row["id"] for row in rows]


def site_ids(site: Path) -> list[str]:
    rows = json.loads((site / "api" / "errors" / "index.json").read_text())
    return [row["id"] for row in rows]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_answering(url: str, seconds: float = 15) -> bytes:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return bytes(response.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@contextmanager
def errcat_server(site: Path, workers: int = 1) -> Iterator[int]:
    command = [sys.executable, "-m", "catalog", "serve", "--site", str(site), "--port", "0"]
    command += ["--workers", str(workers)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line.startswith("Serving "):
                sys.exit(f"bench/serve.py: errcat serve did not start: {line!r}")
            yield int(line.split("http://127.0.0.1:")[1].split("/")[0])
        finally:
            process.send_signal(signal.SIGINT)
            if process.wait(timeout=15) != 0:
                print(f"errcat serve exited with {process.returncode}", file=sys.stderr)


@contextmanager
def nginx_server(site: Path, workers: int) -> Iterator[int]:
    prefix = Path(tempfile.mkdtemp(prefix="errcat-bench-nginx-"))
    port = free_port()
    # Workers run as `nobody` unless told otherwise; as root, let them read a private tmp site.
    user = "user root;" if os.geteuid() == 0 else ""
    values = {"workers": workers, "user": user, "prefix": prefix, "port": port, "root": site}
    (prefix / "nginx.conf").write_text(NGINX_CONF % values)
    command = ["nginx", "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", "stderr"]
    with subprocess.Popen(command) as process:
        try:
            yield port
        finally:
            process.send_signal(signal.SIGQUIT)
            process.wait(timeout=15)
            shutil.rmtree(prefix, ignore_errors=True)


def run_wrk(port: int, ids: list[str], connections: int, seconds: float) -> dict[str, float]:
    script = Path(tempfile.mkstemp(suffix=".lua", prefix="errcat-bench-")[1])
    try:
        script.write_text(WRK_SCRIPT % {"ids": ", ".join(f'"{i}"' for i in ids)})
        threads = min(2, connections)
        command = [
            "wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "5s",
            "-s", str(script), f"http://127.0.0.1:{port}/",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"bench/serve.py: wrk failed ({done.returncode}): {done.stderr.strip()}")
    finally:
        script.unlink()
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    return dict(json.loads(line.removeprefix("RESULT ")))


async def _client(port: int, ids: list[str], start: int, stop_at: float, out: list[float]) -> int:
    """One keep-alive connection asking for ids in turn; appends latencies; returns errors."""
    errors = 0
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    n = start
    try:
        while time.perf_counter() < stop_at:
            began = time.perf_counter()
            path = f"/api/errors/{ids[n % len(ids)]}"
            writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode("ascii"))
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for header in head.split(b"\r\n"):
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            if not head.startswith(b"HTTP/1.1 200"):
                errors += 1
            out.append(time.perf_counter() - began)
            n += 1
    except (OSError, asyncio.IncompleteReadError):
        errors += 1
    finally:
        writer.close()
    return errors


def run_python_client(
    port: int, ids: list[str], connections: int, seconds: float
) -> dict[str, float]:
    async def load() -> tuple[list[float], int, float]:
        latencies: list[float] = []
        began = time.perf_counter()
        stop_at = began + seconds
        errors = await asyncio.gather(
            *(_client(port, ids, i * 7919, stop_at, latencies) for i in range(connections))
        )
        return latencies, sum(errors), time.perf_counter() - began

    latencies, errors, elapsed = asyncio.run(load())
    latencies.sort()

    def percentile(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1e3

    return {
        "requests": len(latencies),
        "seconds": elapsed,
        "p50_ms": percentile(50),
        "p99_ms": percentile(99),
        "errors": errors,
    }


def measure(name: str, port: int, ids: list[str], args: argparse.Namespace) -> Result:
    body = wait_until_answering(f"http://127.0.0.1:{port}/api/errors/{ids[0]}")
    if json.loads(body).get("id") != ids[0]:
        sys.exit(f"bench/serve.py: {name} answered {body[:80]!r} for {ids[0]}")
    load = run_wrk if shutil.which("wrk") and not args.python_client else run_python_client
    load(port, ids, args.connections, min(2.0, args.duration))  # warm-up, not reported
    figures = load(port, ids, args.connections, args.duration)
    return Result(
        server=name,
        requests=int(figures["requests"]),
        seconds=figures["seconds"],
        requests_per_s=figures["requests"] / figures["seconds"],
        p50_ms=figures["p50_ms"],
        p99_ms=figures["p99_ms"],
        errors=int(figures["errors"]),
    )


def _median(results: list[Result]) -> Result:
    """The round with the median throughput (its own p50/p99), errors summed over rounds."""
    ordered = sorted(results, key=lambda result: result.requests_per_s)
    middle = ordered[len(ordered) // 2]
    return Result(
        server=middle.server,
        requests=sum(result.requests for result in results),
        seconds=sum(result.seconds for result in results),
        requests_per_s=middle.requests_per_s,
        p50_ms=middle.p50_ms,
        p99_ms=max(result.p99_ms for result in results),
        errors=sum(result.errors for result in results),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built site (default: a synthetic one)")
    parser.add_argument("--entries", type=int, default=1000, help="synthetic entries (1000)")
    parser.add_argument("--connections", type=int, default=32, help="concurrent connections (32)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per load (10)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="loads per server, taking turns so that a busy moment hits every server (3)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="workers of each server in the second pair (one per CPU); 1 skips it",
    )
    parser.add_argument("--no-nginx", action="store_true", help="skip the nginx comparison")
    parser.add_argument("--python-client", action="store_true", help="load with Python, not wrk")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)

    temporary = None
    if args.site is None:
        temporary = Path(tempfile.mkdtemp(prefix="errcat-bench-site-"))
        os.chmod(temporary, 0o755)
        site = temporary / "site"
        ids = write_site(site, args.entries)
    else:
        site = args.site.resolve()
        ids = site_ids(site)
    client = "wrk" if shutil.which("wrk") and not args.python_client else "python asyncio"
    nginx = not args.no_nginx and shutil.which("nginx") is not None
    pairs = [1] if args.workers <= 1 else [1, args.workers]
    # Every server runs from the start (idle ones cost nothing); each round loads each in turn.
    runs: dict[str, list[Result]] = {}
    names: list[tuple[int, str, str | None]] = []
    try:
        with contextlib.ExitStack() as stack:
            ports: dict[str, int] = {}
            for workers in pairs:
                label = f"{workers} worker" + ("s" if workers > 1 else "")
                ours, theirs = f"errcat serve ({label})", f"nginx ({label})"
                ports[ours] = stack.enter_context(errcat_server(site, workers))
                if nginx:
                    ports[theirs] = stack.enter_context(nginx_server(site, workers))
                names.append((workers, ours, theirs if nginx else None))
            for _ in range(max(1, args.rounds)):
                for name, port in ports.items():
                    runs.setdefault(name, []).append(measure(name, port, ids, args))
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)

    medians = {name: _median(results) for name, results in runs.items()}
    results = list(medians.values())
    ratios = {
        workers: medians[ours].requests_per_s / medians[theirs].requests_per_s
        for workers, ours, theirs in names
        if theirs is not None
    }
    # The same fraction round by round (each round loads both servers within seconds).
    per_round = {
        workers: [
            a.requests_per_s / b.requests_per_s
            for a, b in zip(runs[ours], runs[theirs], strict=True)
        ]
        for workers, ours, theirs in names
        if theirs is not None
    }
    if args.json:
        payload = {
            "entries": len(ids),
            "connections": args.connections,
            "duration_s": args.duration,
            "rounds": args.rounds,
            "client": client,
            "cpus": os.cpu_count(),
            "results": [asdict(result) for result in results],
            "rounds_by_server": {name: [asdict(r) for r in rs] for name, rs in runs.items()},
            "fraction_of_nginx": ratios.get(1),
            "fraction_of_nginx_by_workers": ratios,
            "fraction_of_nginx_by_round": per_round,
        }
        print(json.dumps(payload, indent=2))
    else:
        print(
            f"/api/errors/<id> over {len(ids)} ids, {args.connections} connections, "
            f"{args.rounds} x {args.duration:g} s per server, load from {client}, "
            f"{os.cpu_count()} CPUs (median round; p99 the worst round)"
        )
        for result in results:
            print(
                f"  {result.server:<26} {result.requests_per_s:>9,.0f} req/s   "
                f"p50 {result.p50_ms:6.2f} ms   p99 {result.p99_ms:6.2f} ms   "
                f"errors {result.errors}   ({result.requests:,} requests)"
            )
        for workers, fraction in ratios.items():
            rounds = ", ".join(f"{value:.2f}" for value in per_round[workers])
            print(
                f"  errcat serve / nginx, {workers} worker(s) each: {fraction:.3f} "
                f"(rounds: {rounds})"
            )
        if not ratios and not args.no_nginx:
            print("  nginx is not installed (apt-get install -y nginx); no comparison")
    return 1 if any(result.errors for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
