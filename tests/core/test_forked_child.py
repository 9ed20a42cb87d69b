"""A wait for a forked child still sees Ctrl-C when the kernel hands the signal to another
thread of the process: the wait polls, so Python's flag is noticed at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""\
    import signal, threading, time
    from catalog.core.workers import ForkedChild

    # Interruptible however the suite was started (a shell's background job ignores SIGINT).
    signal.signal(signal.SIGINT, signal.default_int_handler)

    child = ForkedChild.start(lambda: time.sleep(120))

    def interrupt_from_another_thread():
        time.sleep(0.2)
        # As the kernel may do with a process-directed SIGINT: delivered to this thread,
        # which only sets the flag the main thread checks.
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    threading.Thread(target=interrupt_from_another_thread, daemon=True).start()
    try:
        child.wait()
    except KeyboardInterrupt:
        child.kill()
        print("interrupted")
    else:
        print("waited for the child")
""")


def test_an_interrupt_taken_by_another_thread_ends_the_wait() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        capture_output=True,
        text=True,
        # Far less than the child's 120 s: a wait blocked in waitid would run into it.
        timeout=60,
        check=False,
    )
    assert done.stdout.strip() == "interrupted", done.stderr
