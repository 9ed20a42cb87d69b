"""The example worker: a long-lived process with warm imports that forks a child per program.

`catalog.gate.examples` starts it (`python -c "from catalog.core.example_worker import worker_main; ..."`)
and sends one JSON task per line; each task runs in a fresh forked child with a time limit, its
own process group and captured output, and the worker answers with one JSON line. The worker
never touches CUDA or MPS itself: the hardware probe runs in a child too, because a process that
initialised CUDA cannot fork children that use it.

`errcat reproduce` (catalog/evidence/reproduce.py) runs its calls through `run_in_child` too, with a
`confine` key in the task: the child then lowers its own limits before the program runs (see
`confine`). Tasks without it run exactly as examples always have.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import select
import signal
import sys
import tempfile
import time
from typing import IO, Any

from catalog.core import exit_status

FRAMES = 16
"""Frames of a raised exception's traceback kept in a reply, innermost first."""
OUTPUT_LIMIT = 4000
"""Characters kept from the end of a child's captured output or traceback."""
NETWORK_REFUSED = "network disabled by errcat reproduce"
"""The OSError text a confined child gets from `connect`, `connect_ex` and `getaddrinfo`."""

_forked = False
"""Set in a confined child when its program calls `os.fork` (the forked copy exits at once)."""


def _probe() -> dict[str, Any]:
    """The hardware this machine offers; runs in a child so the worker never initialises CUDA."""
    found: dict[str, Any] = {"cuda": False, "mps": False, "sm90": False, "capability": None}
    try:
        import torch
    except ImportError:
        torch = None  # type: ignore[assignment]  # no torch: no accelerator either
    if torch is not None:
        found["cuda"] = bool(torch.cuda.is_available())
        if found["cuda"]:
            capability = tuple(torch.cuda.get_device_capability())
            found["capability"] = list(capability)
            found["sm90"] = capability == (9, 0)
        mps = getattr(torch.backends, "mps", None)
        found["mps"] = bool(mps is not None and mps.is_available())
    accelerator = "cuda" if found["cuda"] else "mps" if found["mps"] else "cpu"
    found["platform"] = f"{sys.platform}-{platform.machine().lower()}-{accelerator}"
    return found


def _execute(code: str, filename: str) -> dict[str, Any]:
    """Run one program in this (child) process and describe how it ended."""
    import linecache
    import traceback

    # Tracebacks then show the example's own lines.
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": filename}
    sys.argv = [filename]
    try:
        exec(compile(code, filename, "exec"), namespace)
    except SystemExit as exc:
        if exc.code in (None, 0):
            return {"ended": "finished"}
        return _raised(exc, traceback.format_exc())
    except BaseException as exc:
        return _raised(exc, traceback.format_exc())
    return {"ended": "finished"}


def _raised(exc: BaseException, formatted: str) -> dict[str, Any]:
    cls = type(exc)
    module = cls.__module__
    name = cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"
    identifier = getattr(cls, "id", None)
    try:
        message = str(exc)
    except Exception as problem:  # a broken __str__ must not lose the verdict
        message = f"<str() failed: {problem!r}>"
    # The frames, innermost first: where the exception was raised, which `errcat reproduce`
    # compares with the raise site, and the calls that led there (a raise helper's caller is
    # the site of the message it was given); the formatted traceback's tail may be cut or
    # reworded.
    frames: list[list[Any]] = []
    step = exc.__traceback__
    while step is not None:
        frames.append([step.tb_frame.f_code.co_filename, step.tb_lineno])
        step = step.tb_next
    frames.reverse()
    return {
        "ended": "raised",
        "exception": name,
        "exception_id": identifier if isinstance(identifier, str) else None,
        "message": message,
        "detail": formatted[-OUTPUT_LIMIT:],
        "where": frames[0] if frames else None,
        "frames": frames[:FRAMES],
    }


def _refuse_network(*args: object, **kwargs: object) -> Any:
    raise OSError(NETWORK_REFUSED)


def _note_fork() -> None:
    global _forked
    _forked = True


def confine(settings: dict[str, Any]) -> None:
    """Limits a child sets on itself before its program runs (the `confine` key of a task).

    - `workdir`: the current folder, and HOME and TMPDIR, so that the program writes there;
    - `memory`: bytes of address space (RLIMIT_AS, soft and hard, so the program cannot raise
      it again); core dumps are turned off too;
    - `network` false: `socket.socket.connect`/`connect_ex` and `socket.getaddrinfo` raise
      OSError. This is a guard inside Python against accidental connections, not a sandbox: C
      code, `_socket` itself or a subprocess is not stopped;
    - `fork` false: a forked copy of the program exits at once and the result says `forked`
      (`subprocess`, which execs straight away, is not counted; its processes die with the
      child's process group).

    On Linux a confined child is also killed when the worker that forked it dies, unless
    `die_with_parent` is false: the kernel ties that to the *thread* that started the process,
    so a worker started by one of reproduce's threads would die when that thread ends.
    """
    if sys.platform.startswith("linux") and settings.get("die_with_parent", True):
        # Die with the worker: a program that kills the worker would otherwise run on, orphaned,
        # out of reach of the time limit (PR_SET_PDEATHSIG is 1).
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    workdir = settings.get("workdir")
    if workdir:
        os.chdir(workdir)
        os.environ["HOME"] = os.environ["TMPDIR"] = workdir
        tempfile.tempdir = None  # recomputed from TMPDIR on next use
    memory = settings.get("memory")
    if memory:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = int(memory) if hard == resource.RLIM_INFINITY else min(int(memory), hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if settings.get("network") is False:
        import socket

        socket.socket.connect = _refuse_network  # type: ignore[method-assign]
        socket.socket.connect_ex = _refuse_network  # type: ignore[method-assign]
        socket.getaddrinfo = _refuse_network
    if settings.get("fork") is False:
        os.register_at_fork(before=_note_fork, after_in_child=lambda: os._exit(71))


def _in_child(task: dict[str, Any], result_fd: int, output_fd: int) -> None:
    """Body of a forked child: redirect output, do the task, write the result, exit at once."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    status = 0
    try:
        if task["kind"] == "probe":
            result: dict[str, Any] = {"ended": "finished", "probe": _probe()}
        else:
            if task.get("confine"):
                confine(task["confine"])
            result = _execute(task["code"], task["filename"])
            if _forked:
                result["forked"] = True
        sys.stdout.flush()
        sys.stderr.flush()
        data = json.dumps(result).encode("utf-8")
        while data:
            data = data[os.write(result_fd, data) :]
    except BaseException:
        status = 70
    # os._exit: no atexit handlers, no flushing of buffers inherited from the worker.
    os._exit(status)


def _tail(handle: IO[bytes]) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - OUTPUT_LIMIT * 4))
    return handle.read().decode("utf-8", "replace")[-OUTPUT_LIMIT:]


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def run_in_child(task: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Fork, run `task` in the child with a time limit, and describe how it ended."""
    started = time.monotonic()
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as output:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child leaves through os._exit
            os.close(read_fd)
            _in_child(task, write_fd, output.fileno())
        os.close(write_fd)
        # The child does this too; whichever runs first wins the race, before any kill.
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        chunks: list[bytes] = []
        timed_out = False
        deadline = started + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(read_fd)
        status = None
        if not timed_out:
            # The pipe closes as the child exits; give it until the deadline to be reaped.
            while status is None and time.monotonic() < deadline:
                reaped, code = os.waitpid(pid, os.WNOHANG)
                status = code if reaped else None
                if status is None:
                    time.sleep(0.002)
        if status is None:
            _kill_group(pid)
            _, status = os.waitpid(pid, 0)
            timed_out = True
        else:
            _kill_group(pid)  # grandchildren the program left behind
        seconds = time.monotonic() - started
        output_text = _tail(output)
    if timed_out:
        return {
            "ended": "timeout",
            "detail": f"did not finish within {timeout:g} s and was killed",
            "output": output_text,
            "seconds": seconds,
        }
    try:
        result: dict[str, Any] = json.loads(b"".join(chunks).decode("utf-8")) if chunks else {}
    except ValueError:
        result = {}
    if not result or status != 0:
        return {
            "ended": "crashed",
            "detail": f"{exit_status.describe(status)} before it finished",
            "output": output_text,
            "seconds": seconds,
        }
    result.update(output=output_text, seconds=seconds)
    return result


def worker_main() -> None:
    """Entry of the worker process: warm imports, probe, then one JSON task per stdin line."""
    # Replies go to a private copy of stdout; stray prints of imported modules go to stderr.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    for module in sys.argv[1:]:
        # A failing import is left for the example's own child to report, with its traceback.
        with contextlib.suppress(BaseException):
            __import__(module)
    probe = run_in_child({"kind": "probe"}, timeout=120.0)
    replies.write(json.dumps({"ready": True, "probe": probe.get("probe"), "start": probe}) + "\n")
    replies.flush()
    for line in sys.stdin.buffer:
        task = json.loads(line)
        replies.write(json.dumps(run_in_child(task, float(task["timeout"]))) + "\n")
        replies.flush()
