"""The build reads the front matter errcat writes without YAML, and reads it as YAML would."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from mkdocs.utils.meta import get_data

from catalog.engine.front_matter import split_front_matter as _split_front_matter

_KEYS = st.sampled_from(["title", "description", "hide", "search", "on", "no", "a_b"])
_WORDS = st.sampled_from(["navigation", "toc", "footer", "yes", "off", "null", "n"])
_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30
) | st.sampled_from(['say "hi"', "back\\slash", "tab\there", "\u2028", "caf\u00e9", "\x85"])


@st.composite
def _front_matter(draw: st.DrawFn) -> str:
    lines = []
    for key in draw(st.lists(_KEYS, min_size=1, max_size=4)):
        if draw(st.booleans()):
            value = draw(_TEXT)
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=draw(st.booleans()))}")
        else:
            lines.append(f"{key}:")
            lines += [f"  - {word}" for word in draw(st.lists(_WORDS, min_size=1, max_size=3))]
    return "---\n" + "\n".join(lines) + "\n---\n\n# Body\n"


@settings(max_examples=600, deadline=None)
@given(_front_matter())
def test_front_matter_reads_as_yaml_reads_it(text: str) -> None:
    assert _split_front_matter(text) == get_data(text)


def test_an_error_pages_front_matter_is_read_without_yaml() -> None:
    text = (
        '---\ntitle: "lr must be \\"positive\\""\ndescription: "Invalid lr &lt; 0"\n'
        "hide:\n  - navigation\n---\n\n# lr\n"
    )
    body, meta = _split_front_matter(text)
    assert (body, meta) == get_data(text)
    assert meta == {
        "title": 'lr must be "positive"',
        "description": "Invalid lr &lt; 0",
        "hide": ["navigation"],
    }
