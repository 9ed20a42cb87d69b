"""Unchanged pages of `errcat build` hard-linked from the previous build, not written again.

`errcat build` writes each version of the site into a fresh folder beside the last one and
switches to it when it is complete. A page whose themed output is the very one the previous
build wrote costs no write: its file is a hard link to the previous build's, provided that file
is still as that build left it (same size and modification time). After a build, which file
holds which output is recorded in the cache, keyed by the folder the versions sit in, for the
next build to link from. A site folder MkDocs rewrites in place is never linked into.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page

from catalog.engine.build_state import BuildState
from catalog.engine.fingerprint import CACHE_FORMAT, digest


class HardLinks(BuildState):
    """Links page files from the previous build, and records this build's for the next."""

    def _link_previous(self, page: Page, key: str) -> bool:
        """Hard-link the page's file from the previous build, if that build wrote this very
        output there and the file is as it left it: unchanged pages cost no write."""
        if self._previous is None:
            return False
        folder, written = self._previous
        record = written.get(page.file.dest_uri)
        if record is None or record[0] != key:
            return False
        source = os.path.join(folder, page.file.dest_uri)
        try:
            found = os.stat(source, follow_symlinks=False)
            if [found.st_size, found.st_mtime_ns] != record[1:]:
                return False
            target = page.file.abs_dest_path
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.link(source, target)
        except OSError:
            return False
        return True

    def _published_key(self, site_dir: str) -> str:
        # Builds into sibling folders (errcat build's versions) share this key.
        return digest("published", CACHE_FORMAT, os.path.realpath(os.path.dirname(site_dir)))

    def _find_previous(self, site_dir: str) -> tuple[str, dict[str, list[Any]]] | None:
        """The folder of the last build published beside `site_dir`, with what it wrote."""
        if self._cache is None:
            return None
        text = self._cache.get_text(self._published_key(site_dir))
        if text is None:
            return None
        record = json.loads(text)
        parent = os.path.dirname(os.path.realpath(site_dir))
        try:
            here = os.stat(site_dir) if os.path.exists(site_dir) else None
            with os.scandir(parent) as entries:
                for entry in entries:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    found = entry.stat(follow_symlinks=False)
                    if [found.st_dev, found.st_ino] != record["folder"]:
                        continue
                    same = here is not None and (here.st_dev, here.st_ino) == (
                        found.st_dev,
                        found.st_ino,
                    )
                    # The folder MkDocs is about to empty has nothing to link from.
                    return None if same else (entry.path, record["files"])
        except OSError:
            return None
        return None

    def _record_written(self, config: MkDocsConfig) -> None:
        """Record which output each page file of this build holds, for the next to link."""
        if not self.link_previous or self._cache is None or not self._written:
            return
        if self._warnings.count:
            return  # a build with warnings is not published: nothing to link from
        files: dict[str, list[Any]] = {}
        for dest, key in self._written.items():
            try:
                found = os.stat(os.path.join(config.site_dir, dest), follow_symlinks=False)
            except OSError:
                continue
            files[dest] = [key, found.st_size, found.st_mtime_ns]
        folder = os.stat(config.site_dir)
        record = {"folder": [folder.st_dev, folder.st_ino], "files": files}
        self._cache.put_text(self._published_key(config.site_dir), json.dumps(record))
        self._written = {}
