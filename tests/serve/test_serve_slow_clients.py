"""Idle and slow clients cannot stall `errcat serve`: connections are bounded in time, and
thousands of idle ones leave it answering others."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from test_serve import ENTRY, running, write_site

from catalog.serve import ServeOptions
from catalog.serve.runner import connection_limit

IDLE = 1000
"""Idle sockets held open; 513 stopped every answer when a worker held at most 512."""
PARTIAL_HEAD = b"GET /api/errors/index.json HTTP/1.1\r\nHost: x"
"""A request head that never ends: no blank line ever follows."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("slow")
    write_site(base / "site-v1")
    (base / "site").symlink_to("site-v1")
    return base / "site"


@contextmanager
def idle_sockets(port: int, count: int) -> Iterator[list[socket.socket]]:
    """`count` connections that each sent part of a request head and then nothing."""
    with ExitStack() as stack:
        sockets = []
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            sock.sendall(PARTIAL_HEAD)
            sockets.append(sock)
        yield sockets


def get_status(port: int, target: str, timeout: float) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", target)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_a_thousand_idle_connections_leave_the_server_answering(site: Path) -> None:
    """With 1,000 idle half-sent requests open, another client is answered at once.

    The header deadline is set far beyond the client's, so only holding the idle sockets
    without crowding out others can pass (at the old cap they stalled answers until it).
    """
    with running(site, {"header_timeout": 60}) as port, idle_sockets(port, IDLE):
        for target in ("/api/errors/index.json", f"/api/errors/{ENTRY}", "/"):
            assert get_status(port, target, timeout=5) == 200


def test_a_connection_that_never_ends_its_head_is_closed_at_the_deadline(site: Path) -> None:
    """A half-sent request head is answered with a close (EOF, perhaps after a 408) once its
    header deadline passes, so idle sockets are reclaimed."""
    with running(site, {"header_timeout": 1}) as port, idle_sockets(port, 20) as sockets:
        for sock in sockets:
            received = b""
            # The socket's own timeout (10 s) bounds the wait; the server must close first.
            while chunk := sock.recv(4096):
                received += chunk
            assert received == b"" or received.startswith(b"HTTP/1.1 408")


def test_the_default_deadline_and_connection_cap_bound_idle_clients() -> None:
    """Headers must arrive within a few seconds, and a worker holds well over 1,000 sockets."""
    assert ServeOptions().header_timeout <= 5
    assert ServeOptions().max_connections is None
    assert connection_limit() > IDLE
