"""Adopting errcat in a package nobody here wrote the rules for: tests/data/toyshop.

The toy shop has a src/ layout, its own exception hierarchy, built-in raises, the same message
in two modules, a self-documenting `{sku=}` field, a message built with `+`, an exception raised
without a message, a placeholder that would shadow `args`, and a class named like a draft would
be. The whole adoption path runs on a copy (`init`, `new`, `codegen`, `migrate`, `check`), then
the shop's own tests run against the package installed from a wheel (not editable, from outside
its source tree) on Python 3.9 and on 3.11.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import errcat_in

from catalog.core.config import load_config
from catalog.core.project import generated_module, module_name, package_name
from catalog.entries.loader import load_catalog

FIXTURE = Path(__file__).parents[1] / "data" / "toyshop"
PYTHONS = {
    "3.9": "/root/.pyenv/versions/3.9*/bin/python",
    "3.11": "/root/.pyenv/versions/3.11*/bin/python",
}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _python(version: str) -> str | None:
    import glob

    found = sorted(glob.glob(PYTHONS[version]))
    if found:
        return found[-1]
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    return None


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the toy shop after the README's adoption path."""
    root = tmp_path_factory.mktemp("adopt") / "toyshop"
    shutil.copytree(FIXTURE, root)
    for command in ("init", "new", "codegen", "migrate", "check"):
        assert errcat_in(root, command) == 0, command
    return root


def test_import_names_follow_the_src_layout(adopted: Path) -> None:
    """Module names, the package's id prefix and the generated module are import names."""
    config = load_config(adopted)
    assert config.package == adopted / "src" / "toyshop"
    assert module_name(config, config.package / "inventory.py") == "toyshop.inventory"
    assert package_name(config) == "toyshop"
    assert generated_module(config) == "toyshop._errcat_errors"
    catalog, problems = load_catalog(config.catalog)
    assert problems == []
    assert {f.module for f in catalog.files} == {"toyshop.inventory", "toyshop.orders"}
    inventory = (adopted / "src" / "toyshop" / "inventory.py").read_text()
    assert "from toyshop._errcat_errors import" in inventory
    assert "src." not in inventory


def test_one_entry_per_message_with_every_site(adopted: Path) -> None:
    """The message raised in two modules is one entry; both raises were migrated to it."""
    catalog, _ = load_catalog(load_config(adopted).catalog)
    same = [e for e in catalog if e.message == "quantity must be positive, got {quantity}"]
    assert len(same) == 1
    for module in ("inventory.py", "orders.py"):
        text = (adopted / "src" / "toyshop" / module).read_text()
        assert f"raise {same[0].name}(quantity=quantity)" in text


def test_drafts_follow_the_rules(adopted: Path) -> None:
    """Own classes stay in place, `{sku=}` and `+` render like the code, names never shadow."""
    catalog, _ = load_catalog(load_config(adopted).catalog)
    by_message = {e.message: e for e in catalog}
    assert by_message["unknown sku={sku!r}"].exception == "KeyError"
    assert by_message["a SKU is a str, got {sku}"].exception == "TypeError"
    assert by_message["close takes no arguments, got {args_value}"].exception == "RuntimeError"
    assert by_message["{sku}"].exception == "toyshop.errors.InvalidSku"
    assert by_message[""].exception == "NotImplementedError"
    out_of_stock = by_message["only {have} of {sku} left, {quantity} wanted"]
    assert out_of_stock.exception == "toyshop.errors.OutOfStock"
    # The package defines a class QuantityPositiveError: the draft takes another name.
    assert by_message["quantity must be positive, got {quantity}"].name == "QuantityPositiveError2"
    # Raises of the shop's own classes are catalogued in place, exactly as written.
    inventory = (adopted / "src" / "toyshop" / "inventory.py").read_text()
    assert 'raise OutOfStock(f"only {have} of {sku} left, {quantity} wanted", sku=sku)' in inventory
    assert "raise InvalidSku(sku)" in inventory
    generated = (adopted / "src" / "toyshop" / "_errcat_errors.py").read_text()
    assert "class OnlyHave" not in generated  # no typed class for an in-place entry


@pytest.mark.parametrize("version", ["3.9", "3.11"])
def test_the_shops_tests_pass_installed(adopted: Path, version: str, tmp_path: Path) -> None:
    """Built as a wheel and installed outside the source tree, the migrated shop passes its tests."""
    python = _python(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine (looked for {PYTHONS[version]})")
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(wheels),
            str(adopted),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("*.whl")
    target = tmp_path / "site"
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    environment = {**os.environ, "PYTHONPATH": str(target), "PYTHONDONTWRITEBYTECODE": "1"}
    where = subprocess.run(
        [python, "-c", "import toyshop._errcat_errors as m; print(m.__file__)"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(target)
    tests = adopted / "tests"
    run = subprocess.run(
        [python, "-m", "unittest", "discover", "-s", str(tests), "-t", str(tests)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "Ran 12 tests" in run.stderr


def test_the_site_shows_every_entry(adopted: Path, tmp_path: Path) -> None:
    """The built API has every entry: in-place classes by qualified name, merged sources, and a
    readable title for an exception raised without a message."""
    import json

    assert errcat_in(adopted, "build", "--out", str(tmp_path / "site")) == 0
    site = tmp_path / "site"
    index = json.loads((site / "api" / "errors" / "index.json").read_text())
    rows = {row["message"]: row for row in index}
    assert rows["{sku}"]["exception"] == "toyshop.errors.InvalidSku"
    merged = json.loads(
        (
            site
            / "api"
            / "errors"
            / f"{rows['quantity must be positive, got {quantity}']['id']}.json"
        ).read_text()
    )
    assert [s["path"] for s in merged["sources"]] == [
        "src/toyshop/inventory.py",
        "src/toyshop/orders.py",
    ]
    bare = (site / "errors" / rows[""]["id"] / "index.html").read_text()
    assert "<title>NotImplementedError without a message" in bare
