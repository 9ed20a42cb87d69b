"""The page `mkdocs serve` shows in place of errcat's pages while they cannot be built.

An author editing an entry keeps the browser open on its page: when an edit breaks the catalog,
that page (and every other errcat page) answers with the findings and their positions, and the
next good edit brings the pages back. The same goes, under `strict`, for a file of the package
the scanner cannot parse, since a strict build refuses it. Builds never publish this page: they
refuse the catalog (or, strict, the unparseable file) instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Literal

from catalog.core.findings import Finding

Subject = Literal["catalog", "package"]
"""What the findings are about: the YAML catalog, or the scanned package's source files."""

_ADVICE: dict[Subject, str] = {
    "catalog": (
        "<p>Fix what is listed below and save: <code>mkdocs serve</code> rebuilds, and the pages "
        "come back with the first edit that leaves the catalog valid. "
        "<code>errcat check</code> lists the same findings; <code>errcat build</code> and "
        "<code>mkdocs build</code> refuse the catalog until then.</p>\n"
    ),
    "package": (
        "<p>errcat cannot read the raise sites of the files listed below, so the pages would "
        "show them incomplete. Fix them and save: <code>mkdocs serve</code> rebuilds, and the "
        "pages come back with the first edit that leaves every file parseable. "
        "<code>errcat check</code> lists the same findings; <code>mkdocs build --strict</code> "
        "refuses the site until then.</p>\n"
    ),
}


def findings_page(findings: Sequence[Finding], root: Path, subject: Subject = "catalog") -> str:
    """The Markdown (raw HTML blocks, everything escaped) of the findings page; positions are
    shown relative to `root`, the project's folder."""
    count = len(findings)
    title = f"The {subject} has {count} problem{'' if count == 1 else 's'}"
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        by_file.setdefault(finding.display_path(root), []).append(finding)
    parts = [
        f"# {title}\n",
        '<div class="admonition failure">\n'
        '<p class="admonition-title">errcat shows this page in place of the catalog&#39;s pages'
        "</p>\n" + _ADVICE[subject] + "</div>\n",
    ]
    for path, group in by_file.items():
        items = "".join(_item(path, finding) for finding in group)
        parts.append(f"<h2><code>{escape(path)}</code></h2>\n<ul>\n{items}</ul>\n")
    return "\n".join(parts)


def _item(path: str, finding: Finding) -> str:
    where = escape(f"{path}:{finding.line}:{finding.column}")
    fix = f"<br>\n<em>Fix:</em> {escape(finding.fix)}" if finding.fix else ""
    return f"<li><code>{where}</code> {escape(finding.message)}{fix}</li>\n"
