"""A long-lived worker process spoken to in JSON lines: one task a line in, one reply a line out.

`catalog.gate.examples` (the catalog's example programs) and `catalog.evidence.reproduce` (the calls it tries)
each keep one such worker, whose forked children run the code (`catalog.core.example_worker`). The
worker's first line says it is ready; a worker that exits, stops answering within the time
allowed or cannot be written to is a `WorkerFailed` naming the end of what it printed, and the
caller starts another.
"""

from __future__ import annotations

import contextlib
import json
import select
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from catalog.core.errors import ErrcatError
from catalog.core.example_worker import OUTPUT_LIMIT

WORKER_GRACE = 20.0
"""Seconds a worker may take beyond a task's own time limit before it is given up on."""


class WorkerFailed(ErrcatError):
    """The worker process died or stopped answering (exit 2: the machine, not the project)."""


class WorkerProcess:
    """One worker: started with `command`, its stderr kept to say why it failed."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        name: str,
        start_timeout: float,
    ) -> None:
        self.name = name
        # Closed in close(), which every path out of a run reaches.
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.process = subprocess.Popen(
            list(command),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=dict(env),
        )
        self.ready = self.reply(start_timeout)
        """The worker's first line."""

    def reply(self, timeout: float) -> dict[str, Any]:
        """The next line the worker writes, read within `timeout` seconds."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else b""
        if not line:
            why = self._why(ready=bool(ready))
            self.close()
            raise WorkerFailed(why)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, task: Mapping[str, Any], timeout: float) -> dict[str, Any]:
        """Send `task` and wait for its reply: its own `timeout` plus `WORKER_GRACE`."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(task) + "\n").encode("utf-8"))
            self.process.stdin.flush()
        except OSError:
            why = self._why(ready=True)
            self.close()
            raise WorkerFailed(why) from None
        return self.reply(timeout + WORKER_GRACE)

    def _why(self, ready: bool) -> str:
        self.stderr.seek(0)
        said = self.stderr.read().decode("utf-8", "replace").strip()[-OUTPUT_LIMIT:]
        what = "exited" if ready else "stopped answering"
        return f"the {self.name} worker {what}" + (f": {said}" if said else "")

    def close(self) -> None:
        if self.process.stdin is not None:
            # EOF ends a live worker's loop; a dead one's pipe must be closed all the same.
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        if self.process.poll() is None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()
