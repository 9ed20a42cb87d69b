"""Executed examples: the runner's verdicts, the results file, and `errcat check --examples`."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from catalog.authoring.codegen import generate
from catalog.cli import main
from catalog.core.model import Catalog
from catalog.entries.validate import load_valid_catalog
from catalog.entries.verified import load_results, verified_on
from catalog.gate.examples import (
    ExampleResult,
    ExampleRun,
    _missing,
    current_commit,
    example_findings,
    record_results,
    run_examples,
)

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

POOL = '''\
"""Two checks that raise catalogued errors."""

from pkg.errors import PoolSizeNotPositive, TakeTooMany


def open_pool(size):
    if size <= 0:
        raise PoolSizeNotPositive(size=size)
    return size


def take(pool, n):
    if n > pool:
        raise TakeTooMany(n=n, pool=pool)
    return n
'''

PROSE = """\
    meaning: The pool needs room for at least one item.
    solutions:
      - Pass a positive size.
      - Compute the size from the workload.
    trigger: "`open_pool(size)` with `size <= 0`."
    situations:
      - A size read from an empty configuration.
"""


def _entry(
    identifier: str, name: str, message: str, before: str, after: str, requires: str = ""
) -> str:
    def block(code: str) -> str:
        return textwrap.indent(textwrap.dedent(code).strip() + "\n", " " * 8)

    lines = [
        f'  - id: "{identifier}"',
        f"    name: {name}",
        "    exception: ValueError",
        "    status: active",
        f'    message: "{message}"',
        PROSE.rstrip("\n"),
        "    example:",
        "      before: |",
        block(before).rstrip("\n"),
        "      after: |",
        block(after).rstrip("\n"),
    ]
    if requires:
        lines.append(f"      requires: [{requires}]")
    return "\n".join(lines) + "\n"


SIZE = ("1111111111111111", "PoolSizeNotPositive", "pool size must be positive, got {size}")
TAKE = ("2222222222222222", "TakeTooMany", "cannot take {n} from a pool of {pool}")


def _write_project(root: Path, entries: list[str]) -> Catalog:
    (root / "pkg").mkdir(parents=True)
    (root / "knowledge").mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "pool.py").write_text(POOL, encoding="utf-8")
    text = "module: pkg.pool\nerrors:\n" + "".join(entries)
    (root / "knowledge" / "pool.yaml").write_text(text, encoding="utf-8")
    catalog = load_valid_catalog(root / "knowledge")
    # As codegen writes it for a project that configures no docs site: without links.
    (root / "pkg" / "errors.py").write_text(generate(catalog, None), encoding="utf-8")
    return catalog


GOOD_BEFORE = "from pkg.pool import open_pool\nopen_pool(0)\n"
GOOD_AFTER = "from pkg.pool import open_pool\nopen_pool(4)\n"
RAISE_OWN = "from pkg.errors import {cls}\nraise {cls}(size=0)\n"

# Many cases in one catalog, so that one worker start serves them all; `{cls}` is the case
# entry's own class. The helper-call case is the size entry itself (open_pool raises inside).
CASES = {
    "wrong_error": ("from pkg.pool import take\ntake(1, 5)\n", GOOD_AFTER, ""),
    "no_error": (GOOD_AFTER, GOOD_AFTER, ""),
    "still_raises": (RAISE_OWN, RAISE_OWN, ""),
    "after_other_error": (RAISE_OWN, "import no_such_module_anywhere\n", ""),
    "hangs": ("import time\ntime.sleep(60)\n", GOOD_AFTER, ""),
    "exits": ("import os\nos._exit(3)\n", GOOD_AFTER, ""),
    "segfaults": ("import ctypes\nctypes.string_at(0)\n", GOOD_AFTER, ""),
    "prints_then_raises": ("print('hello from before')\n" + RAISE_OWN, GOOD_AFTER, ""),
    "needs_mps": (RAISE_OWN, GOOD_AFTER, "mps"),
}


def _case_id(name: str) -> str:
    return f"{list(CASES).index(name) + 16:016x}"


def _case_entries() -> list[str]:
    entries = []
    for name, (before, after, requires) in CASES.items():
        cls = f"Case{name.title().replace('_', '')}"
        entries.append(
            _entry(
                _case_id(name),
                cls,
                f"case {name} failed with {{size}}",
                before.format(cls=cls),
                after.format(cls=cls),
                requires,
            )
        )
    entries.append(_entry(*SIZE, GOOD_BEFORE, GOOD_AFTER))
    entries.append(_entry(*TAKE, "from pkg.pool import take\ntake(1, 5)\n", GOOD_AFTER))
    return entries


@pytest.fixture(scope="module")
def case_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Catalog, ExampleRun]:
    root = tmp_path_factory.mktemp("cases")
    catalog = _write_project(root, _case_entries())
    return catalog, run_examples(catalog, root, timeout=2.0)


def _result(run: ExampleRun, name: str) -> ExampleResult:
    entry_id = SIZE[0] if name == "good" else _case_id(name)
    return next(r for r in run.results if r.entry_id == entry_id)


def test_good_example_is_verified(case_run: tuple[Catalog, ExampleRun]) -> None:
    """A before that raises its entry (inside a helper call) and an after that runs: verified."""
    result = _result(case_run[1], "good")
    assert result.outcome == "verified", result.reason
    assert (
        result.before is not None and result.before.message == "pool size must be positive, got 0"
    )


def test_wrong_error_fails_naming_both_ids(case_run: tuple[Catalog, ExampleRun]) -> None:
    """A before that raises another catalogued error fails, quoting what it raised instead."""
    result = _result(case_run[1], "wrong_error")
    assert result.outcome == "failed"
    assert "before raised pkg.errors.TakeTooMany (2222222222222222)" in result.reason
    assert "cannot take 5 from a pool of 1" in result.reason
    assert result.fix is not None and result.fix.endswith("run: errcat check --examples")


def test_no_error_fails(case_run: tuple[Catalog, ExampleRun]) -> None:
    """A before that runs to its end fails."""
    result = _result(case_run[1], "no_error")
    assert result.outcome == "failed"
    assert result.reason.startswith(
        "before ran to its end without raising CaseNoError (0000000000000011)"
    )


def test_after_that_still_raises_fails(case_run: tuple[Catalog, ExampleRun]) -> None:
    """An after that raises the entry again is no fix."""
    result = _result(case_run[1], "still_raises")
    assert result.outcome == "failed"
    assert "after still raises CaseStillRaises (0000000000000012)" in result.reason


def test_after_with_another_error_fails(case_run: tuple[Catalog, ExampleRun]) -> None:
    """An after must run to its end: any exception fails it."""
    result = _result(case_run[1], "after_other_error")
    assert result.outcome == "failed"
    assert "after raised ModuleNotFoundError: No module named 'no_such_module_anywhere'" in (
        result.reason
    )


def test_hanging_example_is_killed_and_the_run_goes_on(
    case_run: tuple[Catalog, ExampleRun],
) -> None:
    """A before over its time limit is killed and reported; later examples still run."""
    catalog, run = case_run
    result = _result(run, "hangs")
    assert result.outcome == "failed"
    assert "before did not finish within 2 s and was killed" in result.reason
    assert result.before is not None and result.before.seconds < 10
    assert _result(run, "prints_then_raises").outcome == "verified"
    assert len(run.results) == len(list(catalog))


def test_crashing_examples_are_reported(case_run: tuple[Catalog, ExampleRun]) -> None:
    """An early os._exit and a segfault are failures that say how the child died."""
    exits = _result(case_run[1], "exits")
    assert "before exited with status 3 before it finished" in exits.reason
    segfaults = _result(case_run[1], "segfaults")
    assert "before was killed by SIGSEGV before it finished" in segfaults.reason


def test_output_is_captured(case_run: tuple[Catalog, ExampleRun]) -> None:
    """What a program prints is kept with its run, not mixed into errcat's output."""
    result = _result(case_run[1], "prints_then_raises")
    assert result.before is not None and "hello from before" in result.before.output


@pytest.mark.skipif(sys.platform == "darwin", reason="MPS may exist on macOS")
def test_example_needing_absent_hardware_is_skipped(case_run: tuple[Catalog, ExampleRun]) -> None:
    """An example requiring MPS is skipped with the reason where MPS is absent."""
    result = _result(case_run[1], "needs_mps")
    assert result.outcome == "skipped"
    assert result.reason == (
        "requires mps: needs Apple MPS: torch.backends.mps.is_available() is False"
    )
    assert result.before is None


def test_skip_reasons_name_the_missing_hardware() -> None:
    """sm90 on another GPU names the GPU's capability; present hardware skips nothing."""
    ampere = {"cuda": True, "mps": False, "sm90": False, "capability": [8, 0]}
    assert _missing(("cuda", "sm90"), ampere) == (
        "requires sm90: needs a GPU of compute capability 9.0 (H100/H200); this GPU is (8, 0)"
    )
    assert _missing(("cuda",), ampere) is None


def test_failures_are_findings_at_the_example_key(case_run: tuple[Catalog, ExampleRun]) -> None:
    """Each failure is an error finding at file:line:col of its `example` key."""
    findings = example_findings(case_run[1])
    run = case_run[1]
    assert {f.stage for f in findings} == {"examples"}
    assert len(findings) == len(run.failed) == 7
    hangs = next(f for f in findings if _case_id("hangs") in f.message)
    text = hangs.path.read_text(encoding="utf-8").splitlines()
    assert text[hangs.line - 1][hangs.column - 1 :].startswith("example:")
    assert hangs.path.name == "pool.yaml"


def test_results_merge_and_prune(tmp_path: Path) -> None:
    """A rerun replaces the record of its platform, keeps others, and drops unknown ids."""
    catalog = _write_project(tmp_path, [_entry(*SIZE, GOOD_BEFORE, GOOD_AFTER)])
    path = tmp_path / "knowledge" / "verified.json"
    entry_id = SIZE[0]
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "results": {
                    entry_id: [
                        {"example_hash": "0" * 64, "platform": "darwin-arm64-mps",
                         "commit": "abc1234", "outcome": "verified"},
                        {"example_hash": "0" * 64, "platform": "linux-x86_64-cpu",
                         "commit": "abc1234", "outcome": "failed"},
                    ],
                    "ffffffffffffffff": [
                        {"example_hash": "0" * 64, "platform": "linux-x86_64-cpu",
                         "commit": "abc1234", "outcome": "verified"},
                    ],
                },
            }
        ),
        encoding="utf-8",
    )  # fmt: skip
    entry = catalog.by_id()[entry_id]
    assert entry.example is not None
    from catalog.entries.verified import example_hash

    run = ExampleRun(
        "linux-x86_64-cpu",
        (
            ExampleResult(
                entry_id,
                entry.name,
                "verified",
                entry.position,
                example_hash=example_hash(entry.example),
            ),
        ),
    )
    record_results(path, run, "def5678", catalog)
    results = load_results(path)
    assert set(results) == {entry_id}
    assert {(r.platform, r.commit, r.outcome) for r in results[entry_id]} == {
        ("darwin-arm64-mps", "abc1234", "verified"),
        ("linux-x86_64-cpu", "def5678", "verified"),
    }
    assert verified_on(entry, results) == [{"platform": "linux-x86_64-cpu", "commit": "def5678"}]


def test_commit_outside_a_repository_is_unknown(tmp_path: Path) -> None:
    """Without git history the recorded commit says so instead of failing."""
    assert current_commit(tmp_path) == "unknown"


def test_check_examples_records_and_an_edited_example_is_no_longer_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`errcat check --examples` passes and records; editing an example drops its verification;
    a broken example fails the check with a finding naming the fix."""
    _write_project(
        tmp_path,
        [
            _entry(*SIZE, GOOD_BEFORE, GOOD_AFTER),
            _entry(*TAKE, "from pkg.pool import take\ntake(1, 5)\n", "print('ok')\n", "mps"),
        ],
    )
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["check", "--examples", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["examples"]["verified"] == 1
    assert report["examples"]["commit"] == "unknown"
    results_path = tmp_path / "knowledge" / "verified.json"
    catalog = load_valid_catalog(tmp_path / "knowledge")
    size = catalog.by_id()[SIZE[0]]
    assert [row["platform"] for row in verified_on(size, load_results(results_path))] == [
        report["examples"]["platform"]
    ]

    yaml_path = tmp_path / "knowledge" / "pool.yaml"
    edited = yaml_path.read_text(encoding="utf-8").replace("open_pool(0)", "open_pool(1)", 1)
    yaml_path.write_text(edited, encoding="utf-8")
    size = load_valid_catalog(tmp_path / "knowledge").by_id()[SIZE[0]]
    assert verified_on(size, load_results(results_path)) == []

    assert main(["check", "--examples"]) == 1
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "example of entry" in line)
    assert line.startswith("knowledge/pool.yaml:")
    assert (
        "example of entry 1111111111111111 (PoolSizeNotPositive) failed: before ran to its end "
        "without raising PoolSizeNotPositive (1111111111111111); make before reach the check "
        "that raises PoolSizeNotPositive, then run: errcat check --examples"
    ) in line
    assert verified_on(size, load_results(results_path)) == []
