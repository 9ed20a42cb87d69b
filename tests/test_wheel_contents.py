"""What `pip install errcat` puts into an environment: errcat's own three top-level packages,
with their package data, and nothing of this repository's sample `runtime`.

The wheel is built without build isolation and without an index (setuptools is taken from the
running environment), from a copy of the checkout, so it needs no network and writes nothing
into the checkout; it takes a few seconds. tests/cli/test_wheel.py installs a wheel and runs
the tool from it, far more slowly.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import NOT_SOURCES

REPO = Path(__file__).resolve().parents[1]
BUILD_TIMEOUT_S = 120

TOP_LEVEL = frozenset({"catalog", "extractor", "errcat"})
"""The contract's packages (CONTRACTS.md, "Layout and configuration")."""


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Every file name in the wheel built from a copy of the checkout."""
    work = tmp_path_factory.mktemp("wheel")
    sources = work / "sources"
    shutil.copytree(REPO, sources, ignore=NOT_SOURCES, symlinks=True)
    out = work / "dist"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"),
            *("--no-index", "--disable-pip-version-check", "--wheel-dir", str(out), str(sources)),
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"pip wheel failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    wheels = sorted(out.glob("errcat-*.whl"))
    assert len(wheels) == 1, f"expected one errcat wheel in {out}, found {wheels}"
    with zipfile.ZipFile(wheels[0]) as archive:
        return set(archive.namelist())


def _dist_info(names: set[str]) -> str:
    folders = {name.split("/")[0] for name in names if name.split("/")[0].endswith(".dist-info")}
    assert len(folders) == 1, folders
    return folders.pop()


def test_the_wheel_installs_only_errcats_own_packages(wheel_names: set[str]) -> None:
    """The wheel's top-level names are catalog, extractor and errcat, beside its .dist-info:
    the sample `runtime` (and tests, bench, site) stay in the repository."""
    top = {name.split("/")[0] for name in wheel_names}
    assert top == {*TOP_LEVEL, _dist_info(wheel_names)}


def test_the_wheel_declares_its_top_level_packages(wheel_names: set[str]) -> None:
    """Every top-level package holds an `__init__.py`, so each one imports as a package."""
    for package in TOP_LEVEL:
        assert f"{package}/__init__.py" in wheel_names, package


def test_the_wheel_carries_the_tools_package_data(wheel_names: set[str]) -> None:
    """Every template and theme file, the catalog-file schema, the API schema, the OpenAPI
    document and py.typed travel as package data: an installed errcat renders another
    project's site with them."""
    data = [
        path.relative_to(REPO).as_posix()
        for folder in ("catalog/pages/templates", "catalog/pages/theme")
        for path in sorted((REPO / folder).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    ]
    assert any(name.endswith(".j2") for name in data), "no templates found in the checkout"
    assert any(name.endswith(".html") for name in data), "no theme found in the checkout"
    data += [
        "catalog/errors/schema.json",
        "catalog/pages/api_schema.json",
        "catalog/pages/openapi.json",
        "catalog/py.typed",
    ]
    missing = [name for name in data if name not in wheel_names]
    assert not missing, f"the wheel lacks {missing}; add them to [tool.setuptools.package-data]"


def test_the_sample_catalog_stays_out_of_the_wheel(wheel_names: set[str]) -> None:
    """Of catalog/errors, this repository's knowledge of its sample runtime, only the schema
    (which is the tool's) is packaged."""
    assert {name for name in wheel_names if name.startswith("catalog/errors/")} == {
        "catalog/errors/schema.json"
    }
