"""granian's private names `errcat serve` leans on, reached from here only, with a probe.

`errcat serve` binds its port before granian starts (so a port in use is a plain message, and
`--port 0` gets one port for every worker) and hands granian the bound socket. granian has no
public way to be given a socket: its process server (`granian.server.mp.MPServer`) binds its
own in `_init_shared_socket` and passes it to each worker as a `granian._granian.SocketHolder`
beside the Python socket (`_ssp`, `_shd`, `_sfd`, `_sso`). `BoundServer` replaces that one
method so that every worker accepts from errcat's socket instead.

`probe`, run when a server is made, checks that the installed granian still has those names in
the shape used. Where it does not, the server is granian's public one (`granian.Granian`)
given the address and the port errcat bound, and errcat's socket is closed just before granian
binds it again (one line on stderr says so): the same port, though no longer reserved in
between.
"""

from __future__ import annotations

import functools
import socket
import sys
from typing import Any

import granian
from granian import _granian
from granian.server import common as granian_common
from granian.server import mp as granian_mp

_SOCKET_NAMES = frozenset({"_ssp", "_shd", "_sfd"})
"""What granian's base `_init_shared_socket` sets: the spec, the holder and its descriptor."""


def _code_names(function: Any) -> set[str]:
    """The attribute and global names a function's code reads or sets."""
    return set(getattr(getattr(function, "__code__", None), "co_names", ()))


@functools.cache
def probe() -> str | None:
    """None when granian's process server takes a socket as `BoundServer` hands it one;
    otherwise what differs."""
    server = getattr(granian_mp, "MPServer", None)
    holder = getattr(_granian, "SocketHolder", None)
    if server is None or holder is None:
        return "granian has no MPServer or SocketHolder"
    if granian.Granian is not server:
        return "granian's server is not its process server (MPServer)"
    if getattr(holder, "__text_signature__", None) != "(fd, uds, backlog)":
        return "granian's SocketHolder is made differently"
    base = getattr(granian_common, "AbstractServer", None)
    if not _code_names(getattr(base, "_init_shared_socket", None)) >= _SOCKET_NAMES:
        return "granian no longer keeps its socket in _ssp, _shd and _sfd"
    if not {"_shd", "_sso"} <= _code_names(getattr(server, "_spawn_worker", None)):
        return "granian's workers no longer get the socket from _shd and _sso"
    if "_init_shared_socket" not in _code_names(getattr(base, "startup", None)):
        return "granian no longer binds its socket in _init_shared_socket"
    return None


class BoundServer(granian_mp.MPServer):
    """granian's process server, serving a socket bound before it started."""

    errcat_socket: socket.socket
    errcat_backlog: int

    def _init_shared_socket(self) -> None:
        # granian binds its own socket here (one per worker on Linux, with SO_REUSEPORT);
        # every worker accepts from ours instead, the way granian does on other systems.
        sock = self.errcat_socket
        self._ssp = None
        # The stub omits the (fd, uds, backlog) constructor that granian itself uses.
        holder: Any = _granian.SocketHolder(sock.fileno(), False, self.errcat_backlog)  # type: ignore[call-arg]
        self._shd = holder
        fd: Any = sock.fileno()
        self._sfd = fd
        self._sso = sock


def server_for(sock: socket.socket, backlog: int, settings: dict[str, Any]) -> Any:
    """A granian server (not started) for the bound `sock`, made with `settings` (granian's
    keyword arguments, address and port included): `BoundServer` where the probe passes,
    granian's public server otherwise (see the module docstring)."""
    problem = probe()
    if problem is None:
        server = BoundServer("errcat", backlog=backlog, **settings)
        server.errcat_socket = sock
        server.errcat_backlog = backlog
        return server
    print(
        f"errcat serve: granian {granian.__version__} binds its own socket ({problem}); "
        "the port is bound again as it starts",
        file=sys.stderr,
    )
    public: Any = granian.Granian("errcat", backlog=backlog, **settings)
    public.errcat_release = sock
    return public


def release(server: Any) -> None:
    """Just before `server` starts: close the socket a public server binds again itself."""
    sock = getattr(server, "errcat_release", None)
    if sock is not None:
        sock.close()
