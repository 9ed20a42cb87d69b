"""Where a pasted traceback says the error was raised, and the page anchor of that raise site.

A message shared by many raise sites has one page listing every site, the most public first;
the site a user hit may be far down it. A traceback names it: its innermost frame in the
package (`File ".../site-packages/torch/optim/adam.py", line 59, in __init__`). Each source on
an error page carries an anchor made from the same two facts, so every route that is given a
traceback (`errcat explain`, `/api/match`, the search box) links straight to that site.

Paths are compared from the package's top-level folder on: an installed file
(`/usr/lib/python3/site-packages/torch/optim/adam.py`), a checkout's (`src/torch/optim/adam.py`)
and a catalogued source path (`torch/optim/adam.py`) all give `torch/optim/adam.py`. The rule is
the one the browser's matcher applies (`errcat-match.js`, `sourceAnchor`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

_FRAME = re.compile(r'File "([^"\r\n]+)", line (\d+)')
"""A traceback frame's location, as CPython prints it; the text may have lost its newlines
(a browser's search box removes them from a paste)."""
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


def package_path(path: str, package: str) -> str | None:
    """`path` from its last folder named `package` on (`/`-separated), or None when no folder
    of it has that name."""
    parts = path.replace("\\", "/").split("/")
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == package:
            return "/".join(parts[index:])
    return None


def source_anchor(path: str, line: int, module: str) -> str | None:
    """The anchor of the raise site at `path:line` on the page of an entry of `module`:
    `at-` and the path from the package's folder on, every run of other characters than
    letters and digits as one `-`, then the line (`at-torch-optim-adam-py-59`)."""
    inside = package_path(path, module.partition(".")[0])
    if inside is None:
        return None
    return f"at-{_NOT_WORD.sub('-', inside).strip('-')}-{line}"


def raised_at(text: str, module: str, calls: Collection[str] = ()) -> str | None:
    """The anchor of the innermost frame of the traceback in `text` that lies in the package of
    `module`, or None when `text` holds no such frame.

    What a raise helper raises (`torch._check(cond, msg)`) has the helper's own raise as its
    innermost frame, a line no page lists for it: the site a user hit is the frame that
    called the helper. `calls` are the anchors of the entry's sources that are such calls
    (the index's `calls`); the innermost frame that is one of them is the answer where there
    is one."""
    package = module.partition(".")[0]
    innermost = None
    for match in reversed(list(_FRAME.finditer(text))):
        anchor = source_anchor(match[1], int(match[2]), package)
        if anchor is None:
            continue
        if anchor in calls:
            return anchor
        if innermost is None:
            innermost = anchor
            if not calls:
                break
    return innermost
