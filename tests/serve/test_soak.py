"""A bounded soak of `errcat serve` on loopback with `errcat build`'s swap in the middle of it.

Several keep-alive clients ask in turn for entries (fast path and percent-encoded, which takes
the general app), the index, the OpenAPI file and pages, while the site symlink is swapped to
a new build. Every answer must be a 200 whose body is exactly the old build's or the new
build's file for that path, with no connection errors, and once the swap has been seen every
later answer on that connection is the new build's. The swap and the end of the load follow
request counts, never the clock: each client stops a fixed number of requests after its first
answer from the new build.
"""

from __future__ import annotations

import http.client
import threading
from pathlib import Path

from test_serve import ROWS, running, swap_symlink, write_site

CLIENTS = 8
SWAP_AFTER = 300
"""The first client swaps the site after this many of its own requests: the swap is tied to
the load's progress, not to the clock, so a slow machine only makes the test slower."""
AFTER_NEW = 150
"""Each client goes on for this many requests after its first answer from the new build."""
LIMIT = 50_000
"""A client that has not seen the new build after this many requests reports it and stops."""


def _targets(site: Path) -> dict[str, str]:
    """Request target → the file of the site that answers it."""
    targets = {"/api/errors/index.json": "api/errors/index.json", "/": "index.html"}
    for row in ROWS:
        ident = row["id"]
        targets[f"/api/errors/{ident}"] = f"api/errors/{ident}.json"
        targets[f"/api/errors/{ident}.json"] = f"api/errors/{ident}.json"
        # Percent-encoded: the general app answers it, from the same site.
        targets[f"/api/errors/%{ord(ident[0]):02x}{ident[1:]}"] = f"api/errors/{ident}.json"
        targets[f"/errors/{ident}/"] = f"errors/{ident}/index.html"
    return targets


def test_swap_under_load_answers_old_or_new_and_never_fails(tmp_path: Path) -> None:
    """Under concurrent load across a swap: 0 errors, each answer wholly old or wholly new."""
    old = write_site(tmp_path / "site-v1", "v1")
    # The same ids with other messages: every file differs between the two builds.
    renamed = [{**row, "message": row["message"] + " (v2)"} for row in ROWS]
    new = write_site(tmp_path / "site-v2", "v2", renamed)
    link = tmp_path / "site"
    link.symlink_to("site-v1")
    targets = _targets(old)
    expected = {
        target: ((old / file).read_bytes(), (new / file).read_bytes())
        for target, file in targets.items()
    }
    assert all(before != after for before, after in expected.values())
    errors: list[str] = []
    counts = {"old": 0, "new": 0}
    lock = threading.Lock()
    swapped = threading.Event()
    order = list(targets)

    def client(number: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        seen_new = False
        local = {"old": 0, "new": 0}
        try:
            for n in range(LIMIT):
                if local["new"] >= AFTER_NEW or errors:
                    break
                if number == 0 and n == SWAP_AFTER:
                    swap_symlink(link, new)
                    swapped.set()
                target = order[(n + number) % len(order)]
                connection.request("GET", target)
                response = connection.getresponse()
                body = response.read()
                before, after = expected[target]
                if response.status != 200 or body not in (before, after):
                    errors.append(f"{target}: {response.status} {body[:60]!r}")
                    return
                if body == after:
                    seen_new = True
                    local["new"] += 1
                elif seen_new:
                    errors.append(f"{target}: the old build's answer after the new one's")
                    return
                else:
                    local["old"] += 1
            else:
                errors.append(f"client {number}: no answer from the new build in {LIMIT}")
        except OSError as exc:
            errors.append(f"client {number}: {exc!r}")
        finally:
            connection.close()
            with lock:
                for key, value in local.items():
                    counts[key] += value

    # Two workers, each following the swap on its own; a short recheck interval so that the
    # swap is seen within the load.
    with running(link, {"workers": 2}, recheck_interval=0.05) as port:
        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert swapped.is_set()
    assert counts["old"] > 0 and counts["new"] > 0, counts
