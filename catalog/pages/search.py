"""Search entries for error pages, written by errcat rather than parsed from their HTML.

Material's search plugin reads every page's HTML to cut it into sections; on a catalog of
thousands of pages, most of that HTML is highlighted code that is then thrown away (code stays
out of the index). errcat knows what people search an error by, so its MkDocs hooks keep error
pages out of that parsing and add one entry per error: the message as the title (what a pasted
message matches), the class name (what a traceback prints), the exception, the module and
what the error means as the text.

Titles and texts are HTML: only `<p>` and `<code>`, every catalog character escaped, since
Material shows them as markup in the result list.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from catalog.core.exceptions import has_typed_class
from catalog.core.model import Entry

INDEX_FILE = "search/search_index.json"
"""Where MkDocs' and Material's search plugins write their index, under the site folder."""

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"\[([^\[\]\n]*)\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*\)")


@dataclass(frozen=True)
class SearchDoc:
    """One search entry, without its location (the page's URL, known only to MkDocs)."""

    title: str
    text: str

    def entry(self, location: str) -> dict[str, str]:
        """The entry as the search index holds it."""
        return {"location": location, "title": self.title, "text": self.text}


def _inline(text: str) -> str:
    """One paragraph of prose: escaped, code spans as `<code>`, links as their text."""
    text = _LINK.sub(lambda m: m.group(1), " ".join(text.split()))
    out: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(html.escape(text[position : match.start()], quote=False))
        out.append(f"<code>{html.escape(match.group(2).strip(), quote=False)}</code>")
        position = match.end()
    out.append(html.escape(text[position:], quote=False))
    return "".join(out)


def prose_paragraphs(text: str) -> list[str]:
    """The paragraphs of a prose field as `<p>` elements; fenced code is left out."""
    paragraphs: list[str] = []
    pending: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1).startswith(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)[0] * 3
        elif line.strip():
            pending.append(line)
            continue
        if pending:
            paragraphs.append(f"<p>{_inline(' '.join(pending))}</p>")
            pending = []
    if pending:
        paragraphs.append(f"<p>{_inline(' '.join(pending))}</p>")
    return paragraphs


def error_doc(entry: Entry, generate: bool = True) -> SearchDoc:
    """The search entry of an error page: message, class name, exception, module, meaning.

    The class name is what a traceback prints for an entry with a generated class, so word
    search finds the page by it too (an entry catalogued in place, or any entry under
    `generate=False`, docs-only adoption, is known by its exception).
    """
    exception = f"<code>{html.escape(entry.exception, quote=False)}</code>"
    if has_typed_class(entry.exception, generate):
        exception = f"<code>{html.escape(entry.name, quote=False)}</code> ({exception})"
    where = f"<p>{exception} in <code>{html.escape(entry.module, quote=False)}</code></p>"
    meaning = prose_paragraphs(entry.meaning) if entry.meaning else []
    return SearchDoc(
        title=html.escape(" ".join(entry.headline.split()), quote=False),
        text="".join([where, *meaning]),
    )


def merge_into_index(site_dir: Path, entries: Sequence[dict[str, object]]) -> bool:
    """Add `entries` to the search index the search plugin wrote; False when there is none
    (no search plugin, or it is switched off)."""
    path = site_dir / INDEX_FILE
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(index, dict) or not isinstance(index.get("docs"), list):
        return False
    index["docs"].extend(entries)
    # The plugins write compact JSON; so does this.
    path.write_text(json.dumps(index, separators=(",", ":")), encoding="utf-8")
    return True
