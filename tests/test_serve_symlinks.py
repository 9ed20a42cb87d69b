"""Nothing outside the site is served: an API file that is a symlink out of it is skipped."""

from __future__ import annotations

import json
from pathlib import Path

from test_serve import ENTRY, write_site

from catalog.serve.site import load_site


def test_api_symlink_out_of_the_site_is_not_loaded(tmp_path: Path) -> None:
    """An entry file linking outside the site is left out; one linking inside is kept."""
    site = write_site(tmp_path / "site")
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"secret": True}))
    folder = site / "api" / "errors"
    (folder / f"{ENTRY}.json").unlink()
    (folder / f"{ENTRY}.json").symlink_to(outside)
    (folder / "aaaaaaaaaaaaaaaa.json").symlink_to(folder / "index.json")
    loaded = load_site(site)
    assert ENTRY not in loaded.entries
    assert "aaaaaaaaaaaaaaaa" in loaded.entries
