"""Running the app under granian: binding the port up front, limits, workers, and a clean stop.

granian (a Rust HTTP server: hyper parses HTTP/1.1, Python only runs the app) replaced uvicorn's
pure-Python h11 parser, which cost most of each request's time. What `errcat serve` guarantees
and where each is kept:

- Port in use, port 0: the socket is bound here before granian starts, so a port in use is a
  plain message (exit 2) rather than a log line from inside the server, and `--port 0` gets one
  port for every worker. granian is handed the bound socket (its workers inherit it and all
  accept from it) instead of binding its own; `catalog.serve.granian_internals` is the only
  place that reaches into granian's internals for that, checked by its probe at every start
  (where they differ, granian's public server binds the same port again itself).
- The request deadline: hyper's header read timeout (`header_timeout`, 5 s) closes a connection
  that has not sent a whole request head within that many seconds of opening or of the previous
  answer, so a slow client cannot hold a connection, and an idle keep-alive connection is
  closed after the same time.
- Idle connections cannot crowd others out: granian's `backpressure` caps the connections a
  worker holds (not the requests it runs), and new ones wait unaccepted in the backlog. At 512,
  513 idle sockets stopped every answer until their deadline. The cap is now what the open-file
  limit allows (raised to its hard limit at start, two descriptors per connection: the socket
  and a file being sent), so thousands of idle sockets only cost memory while the deadline
  reclaims them. granian has no per-client limit; a client is bounded by the deadline alone.
- Header limits: hyper reads a head of up to `MAX_HEAD_BUFFER` bytes (and at most 100 header
  lines), answering `431` beyond; below that the app's guard answers its JSON `431` for more
  than 16 KiB. Reading the whole head before answering means the client has finished sending,
  so the answer is not lost to a reset.
- A clean stop: granian's main process turns Ctrl-C and SIGTERM into a graceful stop of its
  workers (each gets `graceful_shutdown` seconds to finish running requests, then is killed),
  and `serve` returns 0.
- `--workers N`: N processes, each with its own copy of the site, each following
  `errcat build`'s swaps on its own.
"""

from __future__ import annotations

import errno
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from granian.constants import HTTPModes, Interfaces, Loops, RuntimeModes
from granian.http import HTTP1Settings
from granian.log import LogLevels
from starlette.types import ASGIApp

from catalog.core.errors import ErrcatError
from catalog.serve import granian_internals

BACKLOG = 1024
"""Pending connections the kernel queues before a worker accepts them."""
MAX_HEAD_BUFFER = 256 * 1024
"""Most bytes of one request head the HTTP layer buffers; beyond it answers 431 itself. Larger
than the guard's 16 KiB so that the app answers most oversized heads with its JSON 431."""

# Apps handed to `serve`, by token: a forked worker finds its app here (inherited with the
# parent's memory) instead of loading the site again.
_APPS: dict[str, ASGIApp] = {}


class BindError(ErrcatError):
    """The address cannot be bound; the message says why and what to do."""


@dataclass(frozen=True)
class ServeOptions:
    """How the server runs; the defaults are what `errcat serve` uses."""

    access_log: bool = False
    """Log a line per request (`errcat serve --log`)."""
    workers: int = 1
    """Worker processes (`errcat serve --workers N`)."""
    max_connections: int | None = None
    """Connections a worker holds open at once (idle, reading or answered); further ones wait in
    the kernel's backlog. None: as many as the open-file limit allows (`connection_limit`)."""
    header_timeout: float = 5.0
    """Seconds a client has to send a whole request head, counted from the connection (or the
    previous response); a client that dribbles its headers, or sits idle, is disconnected."""
    graceful_shutdown: int = 5
    """Seconds running requests get to finish after Ctrl-C or SIGTERM."""


MAX_CONNECTIONS = 16384
"""Most connections one worker holds, whatever the open-file limit allows."""
_RESERVED_FILES = 256
# Descriptors kept for everything but connections: the site's files, logs, pipes, the loop.


def connection_limit() -> int:
    """Connections a worker can hold without running out of file descriptors.

    Raises this process's soft open-file limit to its hard limit first (workers inherit it): the
    common default of 1,024 would cap a worker near the 513 idle sockets that stalled it.
    """
    try:
        import resource
    except ImportError:  # not on Windows; granian's own default then holds
        return 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * MAX_CONNECTIONS + _RESERVED_FILES
    target = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
    if soft == resource.RLIM_INFINITY or soft >= target:
        soft = min(soft, wanted) if soft != resource.RLIM_INFINITY else wanted
    else:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError):
            pass
    return max(64, min(MAX_CONNECTIONS, (soft - _RESERVED_FILES) // 2))


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host`:`port` (port 0 picks a free one). Raises BindError."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise BindError(f"cannot resolve host {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        # A restarted server can rebind while old connections linger.
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


@dataclass(frozen=True)
class _AppLoader:
    """What a granian worker calls to get the app: picklable, for workers that are spawned."""

    token: str
    recipe: Callable[[], ASGIApp] | None

    def __call__(self, target: str) -> ASGIApp:
        app = _APPS.get(self.token)
        if app is None:
            if self.recipe is None:
                raise RuntimeError("errcat serve: this worker cannot rebuild the app")
            app = self.recipe()
        return app


def _logging_config() -> dict[str, Any]:
    # granian logs to stdout by default; `errcat serve` keeps stdout for its address line and
    # the access log, and sends granian's own messages to stderr with errcat's others.
    return {
        "handlers": {
            "console": {
                "formatter": "generic",
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
            },
            "access": {
                "formatter": "access",
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stdout",
            },
        }
    }


def build_server(sock: socket.socket, options: ServeOptions | None = None) -> Any:
    """A granian server for the bound `sock` with the limits in `options` (not started)."""
    options = options or ServeOptions()
    sock.set_inheritable(True)
    host, port = sock.getsockname()[:2]
    settings: dict[str, Any] = {
        "address": host,
        "port": port,
        # The app's RSGI side: the fast path answers with one call (catalog.serve.rsgi).
        "interface": Interfaces.RSGI,
        "workers": max(1, options.workers),
        # uvloop where it is installed (it is on Linux and macOS): a faster event loop.
        "loop": Loops.auto,
        # One Rust thread per worker next to its Python thread: granian's multi-threaded
        # runtime hands every request across threads, which halves throughput on a small
        # machine.
        "runtime_mode": RuntimeModes.st,
        "http": HTTPModes.http1,
        "websockets": False,
        # granian counts connections against this, idle ones included (see the module's note).
        "backpressure": options.max_connections or connection_limit(),
        "http1_settings": HTTP1Settings(
            header_read_timeout=max(1, round(options.header_timeout * 1000)),
            keep_alive=True,
            max_buffer_size=MAX_HEAD_BUFFER,
        ),
        "log_level": LogLevels.warning,
        "log_dictconfig": _logging_config(),
        "log_access": options.access_log,
        "workers_kill_timeout": max(1, options.graceful_shutdown),
    }
    return granian_internals.server_for(sock, BACKLOG, settings)


def serve(app: ASGIApp, sock: socket.socket, options: ServeOptions | None = None) -> int:
    """Serve `app` on the bound `sock` until Ctrl-C or SIGTERM; returns the exit code.

    0 after a requested stop; 1 if a worker died on its own (granian then stops them all).
    """
    server = build_server(sock, options)
    token = f"app-{id(app)}"
    _APPS[token] = app
    recipe = getattr(app, "recipe", None)
    try:
        granian_internals.release(server)
        server.serve(target_loader=_AppLoader(token, recipe))
    except SystemExit as exc:
        # granian's main process exits 1 when a worker died; report it as the exit code.
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        _APPS.pop(token, None)
        sock.close()
    sys.stdout.flush()
    return 0
