"""Nothing outside the site is served: an API file that is a symlink out of it is skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_serve import ENTRY, write_site

from catalog.serve.site import SiteError, load_site


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


def test_schema_and_openapi_linking_out_of_the_site_are_not_served(tmp_path: Path) -> None:
    """The schema and OpenAPI files follow the entries' rule: a link out of the site is left out."""
    site = write_site(tmp_path / "site")
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"secret": True}))
    for name in ("schema.json", "openapi.json"):
        (site / "api" / name).unlink(missing_ok=True)
        (site / "api" / name).symlink_to(outside)
    loaded = load_site(site)
    assert loaded.schema is None and loaded.openapi is None


@pytest.mark.parametrize("linked", ["api/errors", "api/errors/index.json"])
def test_an_index_or_entries_folder_outside_the_site_is_refused(
    tmp_path: Path, linked: str
) -> None:
    """The index, or the entries' whole folder, read from outside the site: the site is refused."""
    site = write_site(tmp_path / "site")
    elsewhere = tmp_path / "elsewhere"
    shutil.move(site / linked, elsewhere)
    (site / linked).symlink_to(elsewhere)
    with pytest.raises(SiteError, match="leads outside the site"):
        load_site(site)
