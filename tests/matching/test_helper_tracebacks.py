"""A traceback of an error raised through a raise helper (`check(cond, msg)`, as
`torch._check`) ends in the helper's own raise; its link opens the entry's page at the call the
user hit, in `errcat explain`, in `/api/match` and in the site's match index (whose rule the
browser applies: tests/matching/test_frames.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import package_project

from catalog.cli import main
from catalog.matching.browser_index import MATCH_FILE, helper_calls, site_matcher


def _traceback(line: int, function: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/main.py", line 4, in <module>\n'
        f'  File "/srv/venv/lib/python3.11/site-packages/shop/cart.py", line {line}, in {function}\n'
        '  File "/srv/venv/lib/python3.11/site-packages/shop/_checks.py", line 3, in check\n'
        "ValueError: counts must be positive"
    )


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = package_project(
        tmp_path / "shop",
        "shop",
        {
            "shop/__init__.py": "",
            "shop/_checks.py": """\
                def check(cond, message):
                    if not cond:
                        raise ValueError(message)
                """,
            "shop/cart.py": """\
                from shop._checks import check


                def take(count: int) -> None:
                    check(count > 0, "counts must be positive")


                def give(count: int) -> None:
                    check(count > 0, "counts must be positive")
                """,
        },
    )
    monkeypatch.chdir(root)
    assert main(["new"]) == 0
    assert main(["build"]) == 0
    return root


def test_a_helpers_error_links_to_the_call_the_traceback_names(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    site = built / "build" / "site"
    calls = helper_calls(site)
    [(entry_id, anchors)] = calls.items()
    assert sorted(anchors) == ["at-shop-cart-py-5", "at-shop-cart-py-9"]
    page = (site / "errors" / entry_id / "index.html").read_text("utf-8")
    assert 'id="at-shop-cart-py-5"' in page and 'id="at-shop-cart-py-9"' in page
    index = json.loads((site / MATCH_FILE).read_text("utf-8"))
    assert index["calls"] == {entry_id: list(anchors)}

    for line, function in ((5, "take"), (9, "give")):
        traceback = _traceback(line, function)
        assert main(["explain", "--json", traceback]) == 0
        [match] = json.loads(capsys.readouterr().out)["matches"]
        assert match["url"].endswith(f"errors/{entry_id}/#at-shop-cart-py-{line}")
        rows = json.loads((site / "api" / "errors" / "index.json").read_text("utf-8"))
        [result] = site_matcher(site, rows).match(traceback)
        assert result.url.endswith(f"#at-shop-cart-py-{line}")
