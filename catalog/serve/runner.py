"""Running the app under uvicorn: binding the port up front, limits, and a clean stop.

The socket is bound before uvicorn starts so that a port in use is reported as a plain message
(exit 2) rather than a log line from inside the server, and so that tests can bind port 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
import socket
import threading
from collections.abc import Generator
from dataclasses import dataclass

import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

BACKLOG = 1024
"""Pending connections the kernel queues before the server accepts them."""
MAX_HEADER_BYTES = 16 * 1024
"""Longest request line plus headers h11 buffers; longer requests get 400 and are closed."""


class BindError(Exception):
    """The address cannot be bound; the message says why and what to do."""


@dataclass(frozen=True)
class ServeOptions:
    """How the server runs; the defaults are what `errcat serve` uses."""

    access_log: bool = False
    """Log a line per request (`errcat serve --log`)."""
    limit_concurrency: int = 512
    """Open connections plus running requests beyond which new requests get 503."""
    keep_alive: int = 5
    """Seconds an idle keep-alive connection stays open."""
    header_timeout: float = 15.0
    """Seconds a client has to send a whole request head, counted from the connection (or the
    previous response); a client that dribbles its headers is disconnected after it."""
    graceful_shutdown: int = 5
    """Seconds running requests get to finish after Ctrl-C."""


class _DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for receiving each request head.

    uvicorn's keep-alive timer restarts on every byte received, so a client that sends one byte
    a second would hold its connection (and a slot of `limit_concurrency`) forever.
    """

    header_timeout: float = ServeOptions.header_timeout
    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_deadline()
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        self._cancel_head_deadline()
        if not self.transport.is_closing():
            self._head_deadline = self.loop.call_later(self.header_timeout, self._head_overdue)

    def _cancel_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_overdue(self) -> None:
        self._head_deadline = None
        waiting_for_head = self.conn.their_state is h11.IDLE and (
            self.cycle is None or self.cycle.response_complete
        )
        if waiting_for_head and not self.transport.is_closing():
            self.transport.close()


class _Server(uvicorn.Server):
    """uvicorn's server, stopping on Ctrl-C or SIGTERM without re-raising the signal.

    uvicorn re-raises a captured signal after its graceful shutdown so that the default handler
    ends the process; for `errcat serve` a requested stop is a normal exit (code 0).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host`:`port` (port 0 picks a free one). Raises BindError."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise BindError(f"cannot resolve host {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        # As uvicorn does: a restarted server can rebind while old connections linger.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        where = f"{host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            raise BindError(
                f"port {port} on {host} is already in use (another errcat serve?); "
                "stop that server or choose another port with --port"
            ) from None
        if exc.errno == errno.EACCES:
            raise BindError(
                f"not allowed to listen on {where}; choose a port above 1023 with --port"
            ) from None
        raise BindError(f"cannot listen on {where}: {exc.strerror}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    """The http URL a bound socket answers on, e.g. `http://127.0.0.1:8000/`."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def build_server(app: ASGIApp, options: ServeOptions | None = None) -> uvicorn.Server:
    """A uvicorn server for `app` with the limits in `options`; start it with `.run(sockets=...)`."""
    options = options or ServeOptions()
    protocol = type(
        "DeadlineProtocol", (_DeadlineProtocol,), {"header_timeout": options.header_timeout}
    )
    config = uvicorn.Config(
        app,
        http=protocol,
        ws="none",
        lifespan="off",
        interface="asgi3",
        access_log=options.access_log,
        log_level="info" if options.access_log else "warning",
        server_header=False,
        proxy_headers=False,
        limit_concurrency=options.limit_concurrency,
        backlog=BACKLOG,
        timeout_keep_alive=options.keep_alive,
        timeout_graceful_shutdown=options.graceful_shutdown,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    return _Server(config)


def serve(app: ASGIApp, sock: socket.socket, options: ServeOptions | None = None) -> int:
    """Serve `app` on the bound `sock` until Ctrl-C or SIGTERM; returns the exit code (0)."""
    server = build_server(app, options)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
