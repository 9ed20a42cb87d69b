"""A small throwaway project for the site tests: a package with three raises, a catalog of four
entries (active with hostile prose, draft, retired, related), mkdocs.yml and hand-written docs.

The other site test modules import `make_project` from here; the tests below pin what it holds.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from catalog.core.config import load_config
from catalog.core.model import Status
from catalog.entries.validate import load_valid_catalog

ACTIVE_ID = "1111111111111111"
DRAFT_ID = "2222222222222222"
RETIRED_ID = "3333333333333333"
STOP_ID = "4444444444444444"

HOSTILE_MEANING = textwrap.dedent(
    """\
    A widget turns one way only. <script>alert("owned")</script> stays text,
    [so does this](javascript:alert(1)) and {{ 7 * 7 }} with {% if true %}x{% endif %};
    [a real link](https://example.org/widgets) and `<b>code</b>` survive.
    """
)

CATALOG = {
    "module": "widgets.core",
    "errors": [
        {
            "id": ACTIVE_ID,
            "name": "TurnBackwards",
            "exception": "ValueError",
            "status": "active",
            "message": "widget {name} cannot turn backwards",
            "meaning": HOSTILE_MEANING,
            "solutions": ["Pass a speed of `0` or more.", "Turn the widget around first."],
            "example": {
                "before": 'from widgets.core import turn\nturn("w", -1)\n',
                "after": 'from widgets.core import turn\nturn("w", 1)\n',
            },
            "trigger": "`turn(name, speed)` with `speed < 0`.",
            "situations": ["A speed computed as a difference that came out negative."],
            "related": [STOP_ID],
            "since": "0.1.0",
        },
        {
            "id": DRAFT_ID,
            "name": "SpinsTooFast",
            "exception": "ValueError",
            "status": "draft",
            "message": "widget {name} spins too fast: {speed}",
        },
        {
            "id": RETIRED_ID,
            "name": "WidgetJammed",
            "exception": "RuntimeError",
            "status": "retired",
            "message": "widget {name} is jammed",
            "retired_reason": "Jams are cleared automatically since 0.1.0.",
            "replaced_by": STOP_ID,
        },
        {
            "id": STOP_ID,
            "name": "AlreadyStopped",
            "exception": "RuntimeError",
            "status": "draft",
            "message": "widget {name} is already stopped",
        },
    ],
}

MKDOCS_YML = textwrap.dedent(
    """\
    site_name: Widgets
    site_url: http://127.0.0.1:8000/
    repo_url: https://github.com/example/widgets
    docs_dir: site/docs
    site_dir: build/mkdocs-site
    theme:
      name: material
    markdown_extensions:
      - admonition
      - attr_list
      - md_in_html
      - tables
      - toc
      - pymdownx.highlight:
          anchor_linenums: true
      - pymdownx.superfences
    plugins:
      - search
      - errcat
    """
)


def make_project(root: Path) -> Path:
    """Write the project under `root` and return `root`."""
    files = {
        "pyproject.toml": """\
            [project]
            name = "widgets"
            version = "0.1.0"

            [tool.errcat]
            package = "widgets"
            catalog = "catalog"
            generated = "widgets/errors.py"
            """,
        "widgets/__init__.py": "",
        "widgets/core.py": """\
            def turn(name: str, speed: int) -> None:
                if speed < 0:
                    raise ValueError(f"widget {name} cannot turn backwards")
                if speed > 10:
                    raise ValueError(f"widget {name} spins too fast: {speed}")


            def stop(name: str) -> None:
                raise RuntimeError(f"widget {name} is already stopped")
            """,
        "mkdocs.yml": MKDOCS_YML,
        "site/docs/guides/hello.md": """\
            # Hello

            A hand-written guide.
            """,
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    (root / "catalog").mkdir(exist_ok=True)
    (root / "catalog" / "widgets.core.yaml").write_text(
        yaml.safe_dump(CATALOG, sort_keys=False, width=100), encoding="utf-8"
    )
    return root


def test_the_project_loads_as_a_valid_catalog(tmp_path: Path) -> None:
    """The throwaway project is a valid catalog with one entry of each status."""
    root = make_project(tmp_path)
    config = load_config(root)
    catalog = load_valid_catalog(config.catalog)
    statuses = {entry.id: entry.status for entry in catalog}
    assert statuses == {
        ACTIVE_ID: Status.ACTIVE,
        DRAFT_ID: Status.DRAFT,
        RETIRED_ID: Status.RETIRED,
        STOP_ID: Status.DRAFT,
    }
    assert catalog.by_id()[ACTIVE_ID].meaning == HOSTILE_MEANING
