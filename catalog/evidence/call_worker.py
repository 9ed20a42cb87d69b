"""The worker process of `errcat reproduce`: it reads one JSON task per line, runs each in a
confined child forked from itself (`catalog.core.example_worker.run_in_child`) and answers
one JSON line per task.

It may run on another interpreter than errcat's (`errcat reproduce --python`: the project's
own environment, where the package's dependencies are installed), so this module and what it
imports are the standard library and `catalog.core.example_worker` alone, on Python 3.9 and
later; the worker is started with errcat's folder on its path only while it imports them
(`catalog.evidence.reproduce._Worker`).
"""

from __future__ import annotations

import importlib
import json
import os
import sys

MEMORY_LIMIT = 2 * 1024**3
"""Bytes of address space a call's child may map (RLIMIT_AS)."""
PRELOAD_ENV = "ERRCAT_REPRODUCE_PRELOAD"
"""`<module><os.pathsep><folder>`: the package a worker imports once before it forks children
for calls, and the temporary folder that import runs in."""


def worker_main() -> None:
    """Entry of a worker process: one JSON task per stdin line, one JSON reply per line."""
    from catalog.core.example_worker import run_in_child

    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    # `python -c` puts the current folder first on sys.path; the children run in a temporary
    # folder, which must not become importable. The package comes from PYTHONPATH.
    sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]
    sys.dont_write_bytecode = True  # a run leaves no __pycache__ in the package
    preload = os.environ.pop(PRELOAD_ENV, "")
    confined = False
    if preload:
        module, _, home = preload.partition(os.pathsep)
        confined = _preload(module, home)
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in sys.stdin.buffer:
        task = json.loads(line)
        if confined and task.get("module"):
            # The callee's module too, once, for every later call into it: torch's compiler
            # and exporter modules take seconds each to import.
            _import_quietly(str(task["module"]))
        replies.write(json.dumps(run_in_child(task, float(task["timeout"]))) + "\n")
        replies.flush()


def _import_quietly(module: str) -> bool:
    """Import `module` in the worker; False (and a line on stderr) when its import fails: the
    children then import it themselves, and fail as they would have."""
    if module in sys.modules:
        return True
    try:
        importlib.import_module(module)
    except (Exception, SystemExit) as exc:  # whatever the package's import raises
        print(
            f"errcat reproduce: importing {module} once failed "
            f"({type(exc).__name__}); each call imports it",
            file=sys.stderr,
        )
        return False
    return True


def _preload(module: str, home: str) -> bool:
    """Confine the worker as the calls are (memory, network, a temporary working folder, HOME
    and TMPDIR) and import the package once, so that each forked child starts with it loaded:
    torch takes seconds to import, a call in a child that has it, milliseconds. True once
    confined: the callees' modules may then be imported in the worker too."""
    from catalog.core.example_worker import confine

    # Not `die_with_parent`: the thread that started this worker may end while another thread
    # still asks it for calls; the worker ends on its own when its stdin closes.
    confine({"workdir": home, "memory": MEMORY_LIMIT, "network": False, "die_with_parent": False})
    _import_quietly(module)
    return True
