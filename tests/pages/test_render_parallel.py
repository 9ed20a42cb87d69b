"""Error pages rendered and API files written by forked workers (`catalog.core.workers`) are
what the build makes itself: the composed docs folder and the site come out byte for byte the
same, the page cache stores what the workers rendered, and a worker that fails only costs
time."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import errcat_in, file_digests, write_files

from catalog.core import workers
from catalog.core.config import load_config
from catalog.core.project import CACHE_FOLDER
from catalog.core.sitecache import FILE_NAME
from catalog.entries.validate import valid_project_catalog
from catalog.pages import content, errorpages
from catalog.publish.api_beside import ApiBeside
from catalog.publish.build import build_site

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork"), reason="worker processes are forked, and this system has no fork"
)

MODULES = 10
RAISES = 25
"""Per module: 250 entries in all, more than the pages below which workers are not used."""


def _module(number: int) -> str:
    lines = []
    for index in range(RAISES):
        lines += [
            f"def check_{index}(value: int, name: str) -> None:",
            f"    if value > {index}:",
            f'        raise ValueError(f"part {number}.{index}: {{name}} is too big: {{value}}")',
            "",
            "",
        ]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A package of 250 raises, catalogued by `errcat new`."""
    root = tmp_path_factory.mktemp("parallel")
    files = {
        "pyproject.toml": """\
            [project]
            name = "many"
            version = "0"

            [tool.errcat]
            package = "many"
            catalog = "errors"
            generated = "many/errors.py"
            """,
        "many/__init__.py": "",
    }
    files.update({f"many/part{number}.py": _module(number) for number in range(MODULES)})
    write_files(root, files)
    assert errcat_in(root, "new") == 0
    return root


def _drop_cache(root: Path) -> None:
    for path in (root / CACHE_FOLDER).glob(FILE_NAME + "*"):
        path.unlink()


def _cold_build(root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The composed docs folder and the site of a build from an empty site cache, with no
    composed folder left from before (every page is written)."""
    _drop_cache(root)
    shutil.rmtree(root / "build", ignore_errors=True)
    version = build_site(load_config(root), root / "build" / "site").version
    return file_digests(root / "build" / "docs"), file_digests(version)


def _spy(calls: list[list[Any]]) -> Callable[..., Any]:
    """`workers.ForkedMap.completed`, recording each job's results in the items' order (those
    it gave: a job whose workers failed gives fewer)."""
    original = workers.ForkedMap.completed

    def spied(self: workers.ForkedMap[Any]) -> Iterator[tuple[int, Any]]:
        got: dict[int, Any] = {}
        for index, result in original(self):
            got[index] = result
            yield index, result
        calls.append([got[index] for index in sorted(got)])

    return spied


def _inputs(root: Path) -> content.SiteInputs:
    config = load_config(root)
    return content.gather(
        config,
        valid_project_catalog(config),
        site_url="http://127.0.0.1:8000/",
        repo_url=None,
        site_name="many",
    )


def test_pages_rendered_by_workers_are_the_same(project: Path) -> None:
    """A cold build whose error pages two workers render, and whose API files they write,
    composes and builds the same files as a cold build that does it all itself."""
    calls: list[list[Any]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "worker_count", lambda: 1)
        patch.setattr(workers.ForkedMap, "completed", _spy(calls))
        alone = _cold_build(project)
    assert calls == []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "PARALLEL_ITEMS", 1)
        patch.setattr(workers, "worker_count", lambda: 2)
        patch.setattr(workers.ForkedMap, "completed", _spy(calls))
        # The API files in this process, after MkDocs, so that the spy sees their workers.
        patch.setattr(ApiBeside, "start", lambda self: None)
        ahead = _cold_build(project)
    # The error pages: every one but the first, which the build renders to compile the
    # templates; then the composed folder's generated pages, written; then, inside MkDocs, the
    # engine's pages converted and themed ahead (more than its 200-page threshold here); then
    # the API files: one per entry, the index, the schema, the match index.
    pages_job, docs_job, *engine_jobs, api_job = calls
    assert len(engine_jobs) == 2 and all(len(job) > 200 for job in engine_jobs)
    assert len(pages_job) == MODULES * RAISES - 1
    assert all(data is not None for _, data in pages_job)
    generated = [path for path in ahead[0] if not path.startswith(".")]
    assert len(docs_job) > MODULES * RAISES and len(docs_job) <= len(generated)
    assert len(api_job) == MODULES * RAISES + 3
    assert len([path for path in ahead[0] if path.startswith("errors/")]) > MODULES * RAISES
    assert ahead == alone


def test_pages_rendered_by_workers_are_kept_in_the_cache(project: Path) -> None:
    """After a cold rendering in workers, a second rendering finds every error page in the
    page cache (the workers render none) and reads them here."""
    inputs = _inputs(project)
    _drop_cache(project)
    calls: list[list[Any]] = []
    hits: list[int] = []
    close = content.PageCache.close

    def closed(self: content.PageCache, succeeded: bool) -> None:
        hits.append(self.hits)
        close(self, succeeded)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "PARALLEL_ITEMS", 1)
        patch.setattr(workers, "worker_count", lambda: 2)
        patch.setattr(workers.ForkedMap, "completed", _spy(calls))
        patch.setattr(content.PageCache, "close", closed)
        cold = content.render(inputs)
        warm = content.render(inputs)
    assert [len(found) for found in calls] == [MODULES * RAISES - 1] * 2
    cold_keys = [key for key, _ in calls[0]]
    assert all(key is not None for key in cold_keys)
    assert calls[1] == [(key, None) for key in cold_keys]
    # The workers' processes have their own counts; these are the build's.
    assert hits == [0, MODULES * RAISES]
    assert dict(warm.pages) == dict(cold.pages)


@pytest.mark.parametrize("fatal", ["every page", "the last page"])
def test_a_failing_worker_leaves_the_pages_to_the_build(project: Path, fatal: str) -> None:
    """A worker that dies mid-job costs time only: the pages the workers did not deliver
    are rendered here, the same as ever (with every page fatal, the workers deliver none)."""
    inputs = _inputs(project)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "worker_count", lambda: 1)
        _drop_cache(project)
        alone = content.render(inputs)
    parent = os.getpid()
    last = list(inputs.catalog)[-1]
    original = errorpages.render_page

    def dies(**page_inputs: Any) -> Any:
        if os.getpid() != parent and (fatal == "every page" or page_inputs["entry"] == last):
            os._exit(3)
        return original(**page_inputs)

    calls: list[list[Any]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "PARALLEL_ITEMS", 1)
        patch.setattr(workers, "worker_count", lambda: 2)
        patch.setattr(workers.ForkedMap, "completed", _spy(calls))
        patch.setattr(errorpages, "render_page", dies)
        _drop_cache(project)
        recovered = content.render(inputs)
    assert len(calls) == 1 and len(calls[0]) < MODULES * RAISES - 1
    if fatal == "every page":
        assert calls == [[]]
    assert dict(recovered.pages) == dict(alone.pages)


def _squares(values: list[int]) -> list[int]:
    return [value * value for value in values]


def test_forked_map_keeps_the_items_order() -> None:
    """Results come back in the items' order whatever worker computed them; below the
    threshold, or on one core, nothing is forked."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "worker_count", lambda: 2)
        assert workers.forked_map(_squares, range(50), minimum=1) == [n * n for n in range(50)]
        assert workers.forked_map(_squares, range(50), minimum=51) is None
        patch.setattr(workers, "worker_count", lambda: 1)
        assert workers.forked_map(_squares, range(50), minimum=1) is None


def test_a_page_key_does_not_depend_on_how_the_catalog_was_loaded(
    project: Path, tmp_path: Path
) -> None:
    """An entry read from its YAML and the same entry restored from the catalog cache (its
    fields set in another order, its field positions in another type) key the same page: a
    worker's key, or a later build's, finds what an earlier build stored."""
    from catalog.entries.validate import checked_catalog

    folder = load_config(project).catalog
    fresh, _ = checked_catalog(folder, tmp_path)
    cached, _ = checked_catalog(folder, tmp_path)
    cache = content.PageCache(tmp_path)
    try:
        pairs = list(zip(fresh, cached, strict=True))
        assert pairs and all(a == b and a is not b for a, b in pairs)
        for a, b in pairs:
            shared = {"entry": a, "related": (b, a), "page_url": "/errors/x/"}
            assert cache.key({**shared, "entry": a}) == cache.key({**shared, "entry": b})
            assert cache.key({**shared, "related": (a, b)}) == cache.key(shared)
    finally:
        cache.close(succeeded=False)


def test_the_match_index_is_made_again_only_when_the_matcher_rows_change(
    project: Path,
) -> None:
    """The search box's match index, kept in the page cache while error pages render in
    workers: rendering again after an edit of prose only reads it back; after a changed
    message it is made again, and is what it would be without the cache."""
    from catalog.matching import browser_index

    made: list[int] = []
    original = browser_index.match_index

    def counted(*args: Any) -> Any:
        made.append(1)
        return original(*args)

    _drop_cache(project)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "PARALLEL_ITEMS", 1)
        patch.setattr(workers, "worker_count", lambda: 2)
        patch.setattr(browser_index, "match_index", counted)
        first = content.render(_inputs(project)).api[browser_index.MATCH_FILE]
        path = sorted((project / "errors").glob("*.yaml"))[0]
        text = path.read_text(encoding="utf-8")
        try:
            marker = "  - id: "
            end = text.index("\n", text.index(marker))
            prose = text[: end + 1] + '    meaning: "Prose only."\n' + text[end + 1 :]
            path.write_text(prose, encoding="utf-8")
            again = content.render(_inputs(project)).api[browser_index.MATCH_FILE]
            assert made == [1] and again == first
            path.write_text(prose.replace("is too big", "is far too big", 1), encoding="utf-8")
            inputs = _inputs(project)
            changed = content.render(inputs).api[browser_index.MATCH_FILE]
            assert made == [1, 1] and changed != first and "far too big" in str(changed)
            module = content.generated_module(inputs.config)
            assert changed == browser_index.dumps(original(inputs.catalog, module))
        finally:
            path.write_text(text, encoding="utf-8")
