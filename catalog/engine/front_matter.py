"""A generated page's front matter split off its Markdown, without YAML where errcat wrote it.

MkDocs reads every page's front matter with PyYAML (`mkdocs.utils.meta.get_data`), which for
thousands of generated pages costs more than converting some of them. errcat writes front
matter of two plain shapes only (keys holding a JSON string, or a list of words), which a
regular expression reads exactly as YAML does; anything else, or any value YAML might read
differently, goes to `get_data` as before. `tests/pages/test_front_matter.py` holds the two
readers to the same answers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mkdocs.utils.meta import YAML_RE, get_data

from catalog.pages.blocks import FastPage

_SIMPLE_FRONT_MATTER = re.compile(
    r'---\n((?:[a-z_]+: "(?:[^"\\\n]|\\.)*"\n|[a-z_]+:\n(?:  - [a-z]+\n)+)+)---[ \t]*\n'
)
"""Front matter of the shape errcat writes: keys with a JSON string, or with a list of words."""
_SIMPLE_ENTRY = re.compile(r'([a-z_]+): ("(?:[^"\\\n]|\\.)*")\n|([a-z_]+):\n((?:  - [a-z]+\n)+)')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_YAML_WORDS = frozenset({"yes", "no", "on", "off", "true", "false", "null", "y", "n"})
"""Plain words YAML reads as something other than a string."""
_SEARCH_EXCLUDED = "---\nsearch:\n  exclude: true\n---\n"


def split_front_matter(text: str) -> tuple[str, dict[str, Any]]:
    """`mkdocs.utils.meta.get_data(text)`, without YAML for the front matter errcat writes."""
    found = _SIMPLE_FRONT_MATTER.match(text)
    if found is not None:
        meta = _simple_front_matter(found.group(1))
        if meta is not None:
            return text[found.end() :].lstrip("\n"), meta
    if text.startswith(_SEARCH_EXCLUDED):
        return text[len(_SEARCH_EXCLUDED) :].lstrip("\n"), {"search": {"exclude": True}}
    return get_data(text)


def _simple_front_matter(body: str) -> dict[str, Any] | None:
    """What YAML reads from `body`, or None where it might read something else."""
    meta: dict[str, Any] = {}
    for entry in _SIMPLE_ENTRY.finditer(body):
        key, string, list_key, items = entry.groups()
        if (key or list_key) in _YAML_WORDS:
            return None
        if string is not None:
            # An ASCII JSON string reads the same as a YAML double-quoted scalar, but for
            # surrogate pairs (escapes from \\ud800 to \\udfff), which only JSON joins into one.
            if key in meta or not (string.isascii() and string.isprintable()):
                return None
            if _SURROGATE_ESCAPE.search(string):
                return None
            meta[key] = json.loads(string)
            continue
        words = [line[4:] for line in items.splitlines()]
        if list_key in meta or _YAML_WORDS.intersection(words):
            return None
        meta[list_key] = words
    return meta


def body(fast: FastPage) -> FastPage:
    """The page without its front matter, split off as MkDocs splits it."""
    found = YAML_RE.match(fast.text)
    return FastPage(fast.text[found.end() :].lstrip("\n"), fast.blocks) if found else fast
