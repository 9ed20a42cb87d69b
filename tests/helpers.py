"""Helpers shared by the test modules (imported as `helpers`: pytest puts tests/ on the path)."""

from __future__ import annotations

import re
import textwrap
import time
from collections.abc import Callable, Mapping
from pathlib import Path


def exact(text: str) -> str:
    """A `pytest.raises(match=...)` pattern that accepts `text` and nothing more."""
    return "^" + re.escape(text) + "$"


def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll `condition` until it holds or `timeout` seconds pass; the last answer is returned.

    For waiting on something another process or thread does (a file appears, a counter moves):
    the bound is generous because it is only reached when the test fails anyway.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def write_files(root: Path, files: Mapping[str, str]) -> Path:
    """Write each `relative path → source` under `root` (dedented), creating folders; return root."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root
