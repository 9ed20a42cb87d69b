"""An entry catalogued in place shows its class by the path the package exports it under, and
names where it is defined; `explain` finds it by either path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import package_project

from catalog.cli import main


def test_the_page_of_a_re_exported_class_names_its_public_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = package_project(
        tmp_path / "shop",
        "shop",
        {
            "shop/__init__.py": "from ._errors import OutOfStock\n",
            "shop/_errors.py": "class OutOfStock(Exception):\n    pass\n",
            "shop/cart.py": """\
                from shop._errors import OutOfStock


                def take(item: str, left: int) -> None:
                    if left <= 0:
                        raise OutOfStock(f"no {item} left")
                """,
        },
    )
    monkeypatch.chdir(root)
    assert main(["new"]) == 0
    assert main(["build"]) == 0
    capsys.readouterr()
    [entry_file] = [
        p for p in (root / "build" / "site" / "api" / "errors").glob("*.json") if len(p.stem) == 16
    ]
    entry = json.loads(entry_file.read_text(encoding="utf-8"))
    assert entry["exception"] == "shop._errors.OutOfStock"  # the API keeps the YAML's name
    page = (root / "build" / "site" / "errors" / entry["id"] / "index.html").read_text("utf-8")
    assert "<code>shop.OutOfStock</code>" in page
    assert "defined as <code>shop._errors.OutOfStock</code>" in page
    # The package raises no generated class: the home page promises no docs links in errors.
    home = (root / "build" / "site" / "index.html").read_text("utf-8")
    assert "For further information visit" not in home
    assert "typed exceptions" not in home
    for query in ("shop.OutOfStock", "shop._errors.OutOfStock", "shop.OutOfStock: no pear left"):
        assert main(["explain", "--json", query]) == 0
        assert [m["id"] for m in json.loads(capsys.readouterr().out)["matches"]] == [entry["id"]]
