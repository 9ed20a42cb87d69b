"""Hostile clients and rebuilds against a running `errcat serve`, each beside a load of ordinary
requests, with the load's latency and failures reported for every phase.

    .venv/bin/python bench/faults.py [--idle N] [--seconds S] [--clients C] [--builds B]

It copies this repository's project (the files git tracks) to a temporary folder, builds it
with `errcat build`, starts `errcat serve` on it (the real command line, one process) and runs
C keep-alive clients asking in turn for pages, stylesheets, the API index and API entries,
for S seconds in each phase:

- `baseline`: the load alone;
- `idle`: N more connections (default 1,000) each send an unfinished request line and then
  nothing; the time until a fresh connection gets an answer is reported too;
- `match`: 8 threads send `/api/match` queries built from a real template's literal pieces
  repeated to 4 KB and 8 KB (the shape that made a backtracking matcher spin);
- `rebuild`: B builds back to back (default 3), each editing one entry's prose first, so
  every build publishes a new version and retires older ones while the server answers.

A failure of the ordinary load is any answer but 200, an empty body or a connection error; the
crafted queries' answers are counted by status (a 413 or 422 for a query past the limits is
the server doing its job, a 500 is not, and fails the run). Exits 1 if any phase had a failure, so the figures are a pass/fail check as well.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
ERRCAT = [sys.executable, "-m", "catalog"]

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve import errcat_server  # noqa: E402  (bench/serve.py: one way to start a server)


@dataclass
class Load:
    """What the ordinary clients saw during one phase."""

    latencies: list[float] = field(default_factory=list)
    """Seconds per answered request."""
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def summary(self, phase: str, **extra: object) -> dict[str, object]:
        ordered = sorted(self.latencies)

        def percentile(p: float) -> float:
            if not ordered:
                return float("nan")
            return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1e3, 2)

        return {
            "phase": phase,
            "requests": len(ordered),
            "p50_ms": percentile(50),
            "p99_ms": percentile(99),
            "max_ms": round(ordered[-1] * 1e3, 2) if ordered else None,
            "failures": len(self.failures),
            "first_failures": self.failures[:5],
            **extra,
        }


def copy_project(target: Path) -> Path:
    """The files git tracks in this repository, without its history or build outputs."""
    archive = subprocess.run(
        ["git", "archive", "HEAD"], cwd=REPOSITORY, capture_output=True, check=True
    )
    target.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def build(project: Path) -> None:
    done = subprocess.run([*ERRCAT, "build"], cwd=project, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench/faults.py: errcat build failed: {done.stderr.strip()[-400:]}")


def targets(site: Path) -> list[str]:
    """Request targets of every kind the site serves: pages, assets and API documents."""
    found = ["/", "/api/errors/index.json", "/api/openapi.json"]
    rows = json.loads((site / "api/errors/index.json").read_text())
    rows = rows["errors"] if isinstance(rows, dict) else rows
    for row in rows[:20]:
        found += [f"/api/errors/{row['id']}", f"/errors/{row['id']}/"]
    found += ["/" + p.relative_to(site).as_posix() for p in sorted(site.rglob("*.css"))[:3]]
    return found


def client(port: int, paths: list[str], offset: int, stop: threading.Event, load: Load) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    n = offset
    while not stop.is_set():
        path = paths[n % len(paths)]
        n += 1
        began = time.perf_counter()
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            status = response.status
        except OSError as exc:
            with load.lock:
                load.failures.append(f"{path}: {type(exc).__name__}: {exc}")
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            continue
        elapsed = time.perf_counter() - began
        with load.lock:
            load.latencies.append(elapsed)
            if status != 200 or not body:
                load.failures.append(f"{path}: {status}")
    connection.close()


@contextmanager
def loaded(port: int, paths: list[str], clients: int) -> Iterator[Load]:
    load, stop = Load(), threading.Event()
    threads = [
        threading.Thread(target=client, args=(port, paths, i * 7, stop, load), daemon=True)
        for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    try:
        yield load
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)


def idle_sockets(port: int, count: int) -> list[socket.socket]:
    """Connections that start a request and never end its headers."""
    opened = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"GET /api/errors/index.json HTTP/1.1\r\nHost: idle\r\n")
        opened.append(sock)
    return opened


def first_answer_seconds(port: int) -> float:
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/api/errors/index.json")
    connection.getresponse().read()
    connection.close()
    return time.perf_counter() - began


def crafted_queries(site: Path) -> list[str]:
    """Messages made of one template's literal pieces repeated, never its whole shape."""
    rows = json.loads((site / "api/errors/index.json").read_text())
    rows = rows["errors"] if isinstance(rows, dict) else rows
    template = max((row["message"] for row in rows), key=lambda m: m.count("{"))
    pieces = [p for p in template.replace("}", "{").split("{")[::2] if p.strip()]
    crafted = []
    for size in (4096, 8192):
        text = ""
        while len(text) < size:
            text += "".join(pieces[:-1]) or pieces[0]
        crafted.append(text[:size])
    return crafted


def matching(
    port: int, queries: list[str], stop: threading.Event, seen: list[float], statuses: list[int]
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    n = 0
    while not stop.is_set():
        query = urllib.parse.urlencode({"message": queries[n % len(queries)]})
        n += 1
        began = time.perf_counter()
        try:
            connection.request("GET", f"/api/match?{query}")
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
        except OSError:
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            continue
        seen.append(time.perf_counter() - began)
    connection.close()


def edit_prose(project: Path, round_: int) -> None:
    """Touch one catalog file, so the next build reads the catalog again before publishing."""
    path = sorted((project / "catalog" / "errors").glob("*.yaml"))[0]
    path.write_text(path.read_text() + f"# faults bench round {round_}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=1000, help="idle connections (1,000)")
    parser.add_argument("--seconds", type=float, default=5.0, help="each phase's load (5 s)")
    parser.add_argument("--clients", type=int, default=8, help="ordinary clients (8)")
    parser.add_argument("--builds", type=int, default=3, help="back-to-back builds (3)")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="errcat-faults-"))
    reports = []
    try:
        project = copy_project(work / "project")
        build(project)
        site = project / "build" / "site"
        paths = targets(site)
        with errcat_server(site) as port:
            with loaded(port, paths, args.clients) as load:
                time.sleep(args.seconds)
            reports.append(load.summary("baseline"))

            with loaded(port, paths, args.clients) as load:
                sockets = idle_sockets(port, args.idle)
                answer = first_answer_seconds(port)
                time.sleep(args.seconds)
            for sock in sockets:
                sock.close()
            reports.append(load.summary("idle", idle=args.idle, first_answer_s=round(answer, 3)))

            queries, stop = crafted_queries(site), threading.Event()
            seen: list[float] = []
            statuses: list[int] = []
            threads = [
                threading.Thread(
                    target=matching, args=(port, queries, stop, seen, statuses), daemon=True
                )
                for _ in range(8)
            ]
            with loaded(port, paths, args.clients) as load:
                for thread in threads:
                    thread.start()
                time.sleep(args.seconds)
                stop.set()
            for thread in threads:
                thread.join(timeout=120)
            slowest = round(max(seen) * 1e3, 1) if seen else None
            answers = {str(code): statuses.count(code) for code in sorted(set(statuses))}
            reports.append(
                load.summary("match", queries=len(seen), answers=answers, slowest_match_ms=slowest)
            )

            began = time.perf_counter()
            with loaded(port, paths, args.clients) as load:
                for round_ in range(args.builds):
                    edit_prose(project, round_)
                    build(project)
            reports.append(
                load.summary(
                    "rebuild", builds=args.builds, seconds=round(time.perf_counter() - began, 1)
                )
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)

    for report in reports:
        print(json.dumps(report))
    failed = sum(int(str(report["failures"])) for report in reports)
    failed += sum(1 for code in statuses if code >= 500)
    print(f"bench/faults.py: {failed} failed request(s) over {len(reports)} phases")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
