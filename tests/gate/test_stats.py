"""`errcat stats`: coverage of raise sites, entries and verified examples on a small project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.authoring.codegen import generate
from catalog.cli import main
from catalog.core.config import load_config
from catalog.entries.validate import load_valid_catalog
from catalog.entries.verified import example_hash
from catalog.gate.stats import compute_stats

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

MODULE = '''\
"""Five raise sites: catalogued typed, catalogued raw, exempted, re-raise, uncatalogued."""

from pkg.errors import PoolSizeNotPositive


def open_pool(size):
    if size <= 0:
        raise PoolSizeNotPositive(size=size)
    if size > 100:
        raise ValueError(f"pool of {size} is too large")
    if size == 13:
        raise RuntimeError("unlucky")  # errcat: ignore[demo only]
    try:
        return 1 // (size - 7)
    except ZeroDivisionError:
        raise
    raise KeyError(size)
'''

CATALOG = """\
module: pkg.pool
errors:
  - id: "1111111111111111"
    name: PoolSizeNotPositive
    exception: ValueError
    status: active
    message: "pool size must be positive, got {size}"
    meaning: The pool needs room for at least one item.
    solutions:
      - Pass a positive size.
      - Compute the size from the workload.
    example:
      before: |
        from pkg.pool import open_pool
        open_pool(0)
      after: |
        from pkg.pool import open_pool
        open_pool(4)
    trigger: "`open_pool(size)` with `size <= 0`."
    situations:
      - A size read from an empty configuration.
  - id: "2222222222222222"
    name: PoolTooLarge
    exception: ValueError
    status: draft
    message: "pool of {size} is too large"
    example:
      before: "raise SystemExit(1)"
      after: "pass"
  - id: "3333333333333333"
    name: PoolGone
    exception: RuntimeError
    status: retired
    retired_reason: Pools are never removed any more.
    message: "pool {name} is gone"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "pool.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "knowledge" / "pool.yaml").write_text(CATALOG, encoding="utf-8")
    catalog = load_valid_catalog(tmp_path / "knowledge")
    (tmp_path / "pkg" / "errors.py").write_text(generate(catalog, "http://x/"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _write_results(project: Path, records: dict[str, list[dict[str, str]]]) -> None:
    payload = {"version": 1, "results": records}
    (project / "knowledge" / "verified.json").write_text(json.dumps(payload), encoding="utf-8")


def _current_hash(project: Path, entry_id: str) -> str:
    example = load_valid_catalog(project / "knowledge").by_id()[entry_id].example
    assert example is not None
    return example_hash(example)


def test_sites_entries_and_examples_are_counted(project: Path) -> None:
    """Typed and raw catalogued raises count, re-raises do not, exemptions count apart;
    only active entries with all prose are complete; only current hashes are verified."""
    size, large = "1111111111111111", "2222222222222222"
    _write_results(
        project,
        {
            size: [
                {"example_hash": _current_hash(project, size), "platform": "linux-x86_64-cpu",
                 "commit": "abc1234", "outcome": "verified"},
                {"example_hash": "0" * 64, "platform": "darwin-arm64-mps",
                 "commit": "abc1234", "outcome": "verified"},
            ],
            large: [
                {"example_hash": _current_hash(project, large), "platform": "linux-x86_64-cpu",
                 "commit": "abc1234", "outcome": "failed"},
            ],
        },
    )  # fmt: skip
    stats = compute_stats(load_config(project))
    assert (stats.sites, stats.sites_catalogued, stats.sites_exempted) == (3, 2, 1)
    assert stats.entries_by_status == {"draft": 1, "active": 1, "retired": 1}
    assert (stats.entries_live, stats.entries_complete) == (2, 1)
    assert stats.examples == 2
    assert stats.examples_verified == {"linux-x86_64-cpu": 1}
    assert stats.as_dict()["sites"] == {
        "total": 3,
        "catalogued": 2,
        "exempted": 1,
        "percent": 66.7,
    }


def test_stats_command_prints_the_figures(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`errcat stats` prints one line per figure; `--json` prints `as_dict()`."""
    capsys.readouterr()
    assert main(["stats"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "raise sites catalogued: 2/3 (66.7%), 1 exempted",
        "entries: 3 (1 draft, 1 active, 1 retired)",
        "entries complete: 1/2 (50%)",
        "examples verified: none of 2 (run: errcat check --examples)",
    ]
    assert main(["stats", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["entries"] == {
        "by_status": {"draft": 1, "active": 1, "retired": 1},
        "live": 2,
        "complete": 1,
        "percent_complete": 50.0,
    }
    assert report["examples"] == {"total": 2, "verified": []}


def test_invalid_catalog_is_an_environment_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A catalog that does not load is exit 2 with the command that shows why."""
    (project / "knowledge" / "pool.yaml").write_text("module: [\n", encoding="utf-8")
    assert main(["stats"]) == 2
    assert "run: errcat check" in capsys.readouterr().err


def test_a_second_run_counts_the_same_from_the_cache(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figures of a run served from .errcat-cache/ (no catalog loaded, no message
    rewritten) are those of the first; an edited catalog is loaded again."""
    import catalog.entries.validate
    import catalog.matching.sites

    capsys.readouterr()
    assert main(["stats", "--json"]) == 0
    first = capsys.readouterr().out

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cache should have answered")

    with monkeypatch.context() as patch:
        patch.setattr(catalog.entries.validate, "read_catalog", refuse)
        patch.setattr(catalog.matching.sites, "to_catalog_message", refuse)
        assert main(["stats", "--json"]) == 0
        assert capsys.readouterr().out == first

    path = project / "knowledge" / "pool.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "status: draft", "status: retired\n    retired_reason: Gone.", 1
        ),
        encoding="utf-8",
    )
    assert main(["stats", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["entries"]["by_status"] == {"draft": 0, "active": 1, "retired": 2}
