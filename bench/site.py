"""Site build benchmark: synthetic catalogs of 100, 1,000 and 5,000 entries.

For each size: `errcat build` time (scan, render, MkDocs, API, switch), HTML bytes per error page,
search-index bytes per entry, and the floor: a plain MkDocs build of the same composed Markdown
(same nav, same highlighting) in the same run. Then the marginal time per entry (1,000→5,000
against 100→1,000) and the JSON API written alone for the largest size.

    .venv/bin/python bench/site.py                  # 100, 1000, 5000
    .venv/bin/python bench/site.py --sizes 100 1000

Targets (issue 6): marginal time within 1.25x, bytes per page within 1.1x, search index under
2 KB per entry, overhead over the floor at most 25%, API writing for 5,000 entries under 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import yaml

from catalog.core.config import load_config
from catalog.entries.validate import load_valid_catalog
from catalog.pages.api import write_api
from catalog.pages.content import gather, render

PER_MODULE = 50
REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _entry_id(index: int) -> str:
    return f"{index + 1:016x}"


def make_project(root: Path, size: int) -> None:
    """A package of `size` raises in modules of 50, each catalogued with seed-length prose."""
    (root / "pyproject.toml").write_text(
        '[project]\nname = "synth"\nversion = "0"\n\n[tool.errcat]\npackage = "synth"\n'
        'catalog = "catalog"\ngenerated = "synth/errors.py"\n',
        encoding="utf-8",
    )
    package = root / "synth"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (root / "catalog").mkdir()
    for module in range((size + PER_MODULE - 1) // PER_MODULE):
        indices = range(module * PER_MODULE, min(size, (module + 1) * PER_MODULE))
        functions = []
        entries = []
        for i in indices:
            message = f"stage {i} of the pipeline rejects value {{value}} for {{name}}"
            functions.append(
                textwrap.dedent(
                    f'''\
                    def check_{i}(value: int, name: str) -> int:
                        """Check one value at stage {i}."""
                        if value < 0:
                            raise ValueError(f"stage {i} of the pipeline rejects value {{value}} for {{name}}")
                        return value * 2
                    '''
                )
            )
            entries.append(
                {
                    "id": _entry_id(i),
                    "name": f"StageRejects{i}",
                    "exception": "ValueError",
                    "status": "active",
                    "message": message,
                    "meaning": (
                        f"Stage {i} accepts only non-negative values. The check runs before any "
                        "work is queued, so nothing has changed when it fails; `{value}` is the "
                        "rejected input and `{name}` the argument it came from."
                    ),
                    "solutions": [
                        "Clamp the value with `max(value, 0)` before calling the stage.",
                        "Find where the negative value is computed and fix the sign there.",
                    ],
                    "example": {
                        "before": f"from synth.m{module} import check_{i}\ncheck_{i}(-1, 'x')\n",
                        "after": f"from synth.m{module} import check_{i}\ncheck_{i}(1, 'x')\n",
                    },
                    "trigger": f"`check_{i}(value, name)` with `value < 0`.",
                    "situations": [
                        "A difference of two counters that came out negative.",
                        "A sentinel `-1` passed through from an older API.",
                    ],
                }
            )
        (package / f"m{module}.py").write_text("\n\n".join(functions), encoding="utf-8")
        (root / "catalog" / f"synth.m{module}.yaml").write_text(
            yaml.safe_dump({"module": f"synth.m{module}", "errors": entries}, sort_keys=False),
            encoding="utf-8",
        )
    # The project's own site settings and nav, so pages carry the same chrome.
    settings = yaml.safe_load(
        (REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("!!python", "python")
    )
    settings["theme"].pop("custom_dir", None)
    settings["nav"] = [entry for entry in settings["nav"] if "Guides" not in entry]
    (root / "mkdocs.yml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    (root / "site" / "docs").mkdir(parents=True)


def measure(size: int, work: Path) -> dict[str, float]:
    """One size: our build, the plain MkDocs floor, sizes."""
    root = work / f"n{size}"
    root.mkdir()
    make_project(root, size)
    config = load_config(root)
    # Both builds run in fresh processes, so neither inherits the other's imports and caches.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    started = time.perf_counter()
    subprocess.run(
        [str(BIN / "errcat"), "build"], cwd=root, check=True, env=env, stdout=subprocess.DEVNULL
    )
    ours = time.perf_counter() - started
    site = (root / "build" / "site").resolve()
    pages = [site / "errors" / _entry_id(i) / "index.html" for i in range(size)]
    html_bytes = sum(p.stat().st_size for p in pages) / size
    search_bytes = (site / "search" / "search_index.json").stat().st_size / size

    # The floor: plain MkDocs on the same composed Markdown, nav and highlighting.
    started = time.perf_counter()
    subprocess.run(
        [str(BIN / "mkdocs"), "build", "-q", "-f", "build/mkdocs.yml", "-d", str(root / "floor")],
        cwd=root,
        check=True,
        env=env,
    )
    floor = time.perf_counter() - started

    catalog = load_valid_catalog(config.catalog)
    content = render(
        gather(config, catalog, site_url="http://127.0.0.1:8000/", repo_url=None, site_name="s")
    )
    api_dir = root / "api-only"
    started = time.perf_counter()
    write_api(api_dir, content.api)
    api_seconds = time.perf_counter() - started
    shutil.rmtree(root)
    return {
        "size": size,
        "build_s": round(ours, 2),
        "floor_s": round(floor, 2),
        "overhead": round(ours / floor - 1, 3),
        "html_bytes_per_page": round(html_bytes),
        "search_bytes_per_entry": round(search_bytes),
        "api_write_s": round(api_seconds, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="errcat-bench-site-") as scratch:
        for size in args.sizes:
            row = measure(size, Path(scratch))
            rows.append(row)
            print(json.dumps(row), flush=True)
    by_size = {row["size"]: row for row in rows}
    if {100, 1000, 5000} <= by_size.keys():
        low = (by_size[1000]["build_s"] - by_size[100]["build_s"]) / 900
        high = (by_size[5000]["build_s"] - by_size[1000]["build_s"]) / 4000
        print(
            f"marginal s/entry: 100->1000 {low:.4f}, 1000->5000 {high:.4f}, ratio {high / low:.2f} (target <= 1.25)"
        )
        ratio = by_size[5000]["html_bytes_per_page"] / by_size[100]["html_bytes_per_page"]
        print(f"HTML bytes per page 5000/100: {ratio:.3f} (target <= 1.1)")
    worst = max(row["search_bytes_per_entry"] for row in rows)
    print(f"search index: at most {worst} bytes per entry (target < 2048)")
    overheads = ", ".join(f"{r['size']}: {r['overhead']:.0%}" for r in rows)
    print(f"overhead over plain mkdocs: {overheads} (target <= 25%)")
    print(
        f"JSON API alone: {rows[-1]['api_write_s']} s for {rows[-1]['size']} entries (target < 1 s for 5000)"
    )


if __name__ == "__main__":
    main()
