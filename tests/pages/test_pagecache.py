"""The page cache: a page rendered once is served again for the same inputs, in another
process's markers, and rendered anew for any other input."""

from __future__ import annotations

from pathlib import Path

from catalog.pages import blocks
from catalog.pages.pagecache import PageCache, page_bytes, page_from_bytes


def _page(title: str, code: str) -> blocks.FastPage:
    with blocks.recording() as recorded:
        block = blocks.emit(blocks.CodeBlock(code, "python", ""))
        text = f"# {title}\n\n{block}\n\nAfter the code.\n"
    return blocks.FastPage(text, tuple(recorded))


def test_a_stored_page_reads_back_the_same() -> None:
    """Text, blocks, Markdown and digest survive the cache's form; markers are this process's."""
    page = _page("Boom", "raise ValueError('boom')")
    back = page_from_bytes(page_bytes(page))
    assert back.blocks == page.blocks
    assert back.markdown() == page.markdown()
    assert back.digest == page.digest
    # The digest read back is the one this page computes afresh.
    assert blocks.FastPage(back.text, back.blocks).digest == page.digest
    assert blocks.marker(0) in back.text
    assert "```python" in back.markdown()


def test_the_same_inputs_are_rendered_once(tmp_path: Path) -> None:
    """A second cache on the same folder (a later build) serves the page without rendering;
    changed inputs render again, and no folder means no cache."""
    rendered: list[str] = []

    def render(*, title: str, code: str) -> blocks.FastPage:
        rendered.append(title)
        return _page(title, code)

    first = PageCache(tmp_path)
    page = first.page(render, title="Boom", code="raise ValueError")
    first.close(succeeded=True)
    later = PageCache(tmp_path)
    again = later.page(render, title="Boom", code="raise ValueError")
    other = later.page(render, title="Boom", code="raise TypeError")
    later.close(succeeded=True)
    assert rendered == ["Boom", "Boom"]
    assert later.hits == 1
    assert again.markdown() == page.markdown()
    assert "TypeError" in other.markdown()
    uncached = PageCache(None)
    uncached.page(render, title="Boom", code="raise ValueError")
    assert rendered == ["Boom", "Boom", "Boom"]
