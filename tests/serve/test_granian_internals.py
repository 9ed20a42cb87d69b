"""The adapter to granian's private names: its probe passes on the pinned release, and where
it does not, granian's public server is made for the same port, which errcat's socket is
closed for just before it starts."""

from __future__ import annotations

import granian
import pytest

from catalog.serve import granian_internals, runner


def test_the_pinned_release_passes_the_probe() -> None:
    assert granian_internals.probe() is None


def test_a_bound_server_serves_errcats_socket() -> None:
    sock = runner.bind("127.0.0.1", 0)
    try:
        server = runner.build_server(sock)
        assert isinstance(server, granian_internals.BoundServer)
        assert server.errcat_socket is sock
    finally:
        sock.close()


def test_internals_that_differ_fall_back_to_the_public_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(granian_internals, "probe", lambda: "a test says so")
    sock = runner.bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = runner.build_server(sock)
    assert type(server) is granian.Granian
    assert server.bind_port == port
    assert "a test says so" in capsys.readouterr().err
    granian_internals.release(server)
    assert sock.fileno() == -1  # closed, for granian to bind the port itself
