"""Error pages' Markdown as an earlier build rendered it, by a digest of what it was made from.

Rendering an error page is a pure function of the template's inputs (the entry, its sources,
related entries, the repository, the URLs) and of errcat's own code and templates. At
whole-torch size rendering the templates was most of a rebuild after one entry changed, and a
lookup costs a small fraction of a render (`bench/site_torch.py` measures both). The key is a SHA-256 over a digest of
errcat's sources and the pickled inputs, so a changed input or a changed errcat gives a new key,
never a stale page. The values live in the site cache (`catalog.core.sitecache`), which
forgets what recent builds did not use.

The inputs are pickled in a canonical form, the same in every process for equal inputs: a
dataclass as its compared fields in their order (an entry the catalog cache restores has its
`__dict__` in another order, and its field positions, which equality ignores, in another
type), and without pickle's memo (which records which equal values are one object).
"""

from __future__ import annotations

import contextlib
import copyreg
import dataclasses
import functools
import hashlib
import io
import pickle
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jinja2

from catalog.core.cachefile import code_digest
from catalog.core.sitecache import SiteCache
from catalog.pages import blocks

_FORMAT = b"errcat-page-2"


class _Canonical(dict[type, Callable[[Any], Any]]):
    """The key pickler's reducers by type (`copyreg.dispatch_table`'s form), filled on first
    sight of each type: dataclasses by their compared fields, the rest as pickle reduces
    them."""

    def __missing__(self, cls: type) -> Callable[[Any], Any]:
        if issubclass(cls, type):
            raise KeyError(cls)  # a class (of a metaclass: an Enum): pickled by its name
        reducer = copyreg.dispatch_table.get(cls)
        if reducer is None:
            if dataclasses.is_dataclass(cls):
                names = tuple(f.name for f in dataclasses.fields(cls) if f.compare)
                reducer = functools.partial(_fields, names)
            else:
                reducer = _as_pickle_does
        self[cls] = reducer
        return reducer


def _fields(names: tuple[str, ...], value: Any) -> tuple[Any, ...]:
    return (type(value), tuple(getattr(value, name) for name in names))


def _as_pickle_does(value: Any) -> Any:
    return value.__reduce_ex__(pickle.HIGHEST_PROTOCOL)


class _KeyPickler(pickle.Pickler):
    dispatch_table = _Canonical()


def input_bytes(inputs: Mapping[str, Any]) -> bytes:
    """`inputs` (keyword → value) pickled in the canonical form the module docstring describes;
    an exception for inputs that do not pickle."""
    out = io.BytesIO()
    pickler = _KeyPickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo: a value is written out in full wherever it appears
    pickler.dump(sorted(inputs.items()))
    return out.getvalue()


@functools.cache
def code_version() -> bytes:
    """A digest of errcat's code and templates, Python's and jinja's versions: what a page is
    rendered with besides its inputs. Any change to errcat renders every page anew."""
    digest = hashlib.sha256(_FORMAT + f"\0{sys.version}\0{jinja2.__version__}\0".encode())
    digest.update(code_digest())
    return digest.digest()


def page_bytes(page: blocks.FastPage) -> bytes:
    """`page` for the cache: its text between markers, each marker as (indent, index), and its
    blocks; the markers' token belongs to this process and is left out."""
    parts: list[tuple[str, str, int]] = []
    position = 0
    for match in blocks.MARKER.finditer(page.text):
        parts.append(
            (page.text[position : match.start()], match.group("indent"), int(match.group("index")))
        )
        position = match.end()
    # The page's digest goes with it: a rebuild needs it for every page, and it is the same
    # in any process (it leaves the markers' token out).
    return pickle.dumps((parts, page.text[position:], page.blocks, page.digest), protocol=5)


def page_from_bytes(data: bytes) -> blocks.FastPage:
    """A page stored by `page_bytes`, with this process's markers. (A pickle: the cache is
    errcat's own, in the project's folder, written by nothing else.)"""
    parts, tail, stored, digest = pickle.loads(data)
    text = "".join(f"{segment}{indent}{blocks.marker(index)}" for segment, indent, index in parts)
    page = blocks.FastPage(text + tail, tuple(stored))
    page.__dict__["digest"] = digest  # what the cached property would compute
    return page


class PageCache:
    """Rendered error pages by a digest of their inputs; see the module docstring."""

    def __init__(self, folder: Path | None, generation: int | None = None) -> None:
        """`folder`: the project's cache folder; None renders every page (no cache).
        `generation`: that of the build whose worker process opens it (see `in_worker`)."""
        self._folder = folder
        self._cache = SiteCache(folder, generation) if folder is not None else None
        self.hits = 0

    def in_worker(self) -> PageCache:
        """In a worker process forked while this cache was suspended: the same cache, for the
        same build, on a connection of the worker's own."""
        if self._cache is None or not self._cache.enabled:
            return PageCache(None)
        return PageCache(self._folder, self._cache.generation)

    def page(self, render: Callable[..., blocks.FastPage], **inputs: Any) -> blocks.FastPage:
        """`render(**inputs)`, or the page a build rendered from the same inputs before."""
        key = self.key(inputs)
        found = self.find(key)
        if found is not None:
            return found
        page = render(**inputs)
        self.store(key, page_bytes(page))
        return page

    def key(self, inputs: Mapping[str, Any]) -> str | None:
        """The key of the page rendered from `inputs`; None where it is not cached (no cache,
        or inputs that do not pickle)."""
        if self._cache is None or not self._cache.enabled:
            return None
        try:
            pickled = input_bytes(inputs)
        except (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError):
            return None
        return self._text_key("page-md", pickled)

    def find(self, key: str | None) -> blocks.FastPage | None:
        """The page stored for `key`, or None."""
        if key is None or self._cache is None:
            return None
        found = self._cache.get(key)
        if found is not None:
            # An unreadable value (written by another errcat) is only a miss.
            with contextlib.suppress(Exception):
                page = page_from_bytes(found)
                self.hits += 1
                return page
        return None

    def find_text(self, name: str, material: bytes) -> str | None:
        """Another text a build renders from its inputs, as an earlier build stored it
        (`store_text`) from the same `material` (bytes that determine it) with the same
        errcat code; None where none is stored."""
        if self._cache is None:
            return None
        return self._cache.get_text(self._text_key(name, material))

    def store_text(self, name: str, material: bytes, text: str) -> None:
        """Keep `text`, made from `material`, for `find_text`."""
        if self._cache is not None:
            self._cache.put_text(self._text_key(name, material), text)

    @staticmethod
    def _text_key(name: str, material: bytes) -> str:
        """The key of what errcat's code makes of `material` under `name` (pages: `page-md`)."""
        return f"{name}-" + hashlib.sha256(code_version() + material).hexdigest()

    def has(self, key: str | None) -> bool:
        """Whether a page is stored for `key` (without reading it)."""
        return key is not None and self._cache is not None and self._cache.has(key)

    def store(self, key: str | None, data: bytes) -> None:
        """Keep `data`, a page in `page_bytes` form, for `key` (None: nothing is kept)."""
        if key is not None and self._cache is not None:
            self._cache.put(key, data)

    def suspend(self) -> None:
        """Write what is pending and let go of the file, so that the process can fork workers
        (a SQLite connection and the compressing thread must not cross a fork)."""
        if self._cache is not None:
            self._cache.suspend()

    def resume(self) -> None:
        """Take the file up again after `suspend`."""
        if self._cache is not None:
            self._cache.resume()

    def close(self, succeeded: bool) -> None:
        """Write what is pending and let go of the cache file."""
        if self._cache is not None:
            self._cache.finish(succeeded)
