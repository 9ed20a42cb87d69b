"""How a child process ended, in words, from the status `os.waitpid` or `os.waitid` gave.

The build's API child and the example worker's program children report their ends the same way,
so that a reader of either message learns the signal's name rather than a bare number.
"""

from __future__ import annotations

import os
import signal


def describe(status: int) -> str:
    """`was killed by SIGSEGV` or `exited with status 3`, for a wait status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"
