"""Mutation testing of the modules whose mistakes no other check would catch, with mutmut 3.

    .venv/bin/python bench/mutation.py [--only FILE] [--jobs N] [--keep]

Targets: catalog/gate/check.py, catalog/entries/validate.py, extractor/templates.py and
runtime/transport/memory_pool.py, each mutated alone and tested only with the test files that are
about it (`TARGETS`), so a mutant's run takes seconds. mutmut 3.8.1 is installed into the running
interpreter's environment first when it is missing (`pip install mutmut==3.8.1`); it is not a
dev dependency because nothing but this bench needs it.

mutmut reads its settings from the current folder and copies what it tests into `mutants/`
there. So each target gets its own working copy, `mutants/<module>/` in the repository (git
ignored): the packages, tests/ and pyproject.toml as they are now (uncommitted edits included),
plus a setup.cfg with the target's settings; mutmut runs in it and writes its own
`mutants/<module>/mutants/`. The tests run there against the mutated copy, because mutmut puts
that folder first on `sys.path` (the editable install's finder comes after it). Each working
copy is removed once its figures are printed, unless `--keep` (then `mutmut show NAME` and
`mutmut browse` work inside it).

Printed per file: mutants, killed, survived (with mutants no selected test reaches), timeout,
and score = (killed + timeout) / mutants, then every survivor as `file:line: old -> new`.
A survivor listed in bench/MUTATION.md as equivalent (same function, same original and mutated
line) is marked so. Exit status: 0 when every survivor is listed there, 1 when one is not, 2
when mutmut could not run.

mutmut runs each mutant's tests by their pytest ids and counts a run that errors as a timeout:
a burst of timeouts means some ids do not survive that round trip (here, ids with non-ASCII
characters did not), so the tests written for this bench use plain ASCII ids.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTMUT_VERSION = "3.8.1"
PACKAGES = ("catalog", "extractor", "runtime", "errcat")
"""Copied into every working copy: what the tests import."""
EQUIVALENTS = ROOT / "bench" / "MUTATION.md"


@dataclass(frozen=True)
class Target:
    """One module to mutate and the tests that are about it."""

    source: str
    """Path from the repository root, `/`-separated."""
    tests: tuple[str, ...]
    """Test files run against its mutants (missing ones are left out)."""

    @property
    def module(self) -> str:
        return self.source.removesuffix(".py").replace("/", ".")


TARGETS = (
    Target(
        "catalog/entries/validate.py",
        (
            "tests/entries/test_validate_mutants.py",
            "tests/entries/test_loader.py",
            "tests/entries/test_bad_yaml.py",
            "tests/entries/test_loader_resilience.py",
            "tests/authoring/test_drafting.py",
            "tests/core/test_ids.py",
        ),
    ),
    Target(
        "extractor/templates.py",
        (
            "tests/entries/test_templates_mutants.py",
            "tests/extractor/test_extractor_templates.py",
            "tests/extractor/test_extractor_scan.py",
        ),
    ),
    Target(
        "runtime/transport/memory_pool.py",
        (
            "tests/runtime/test_pool_mutants.py",
            "tests/runtime/test_memory_pool.py",
            "tests/runtime/test_pool_stateful.py",
            "tests/runtime/test_cuda_ipc.py",  # its CPU tests fake the CUDA driver calls
        ),
    ),
    Target(
        "catalog/gate/check.py",
        (
            "tests/gate/test_check_mutants.py",
            "tests/gate/test_check_cache.py",
            "tests/gate/test_check.py",
            "tests/gate/test_check_findings.py",
        ),
    ),
)

SETTINGS = """\
[mutmut]
source_paths =
{source_paths}
only_mutate = {source}
pytest_add_cli_args_test_selection =
{tests}
pytest_add_cli_args =
    -p
    no:cacheprovider
# torch and the pool's recycler threads are not fork-safe in a process that has run tests.
process_isolation = forkserver
use_git_change_detection = false
"""


@dataclass(frozen=True)
class Mutant:
    """One mutant's outcome, located in the original file."""

    name: str
    """mutmut's name, e.g. `catalog.entries.validate.x_validate__mutmut_12`."""
    status: str
    """mutmut's word: killed, survived, no tests, timeout, ..."""
    function: str
    """`Class.method` or `function` the mutant changes."""
    line: int
    """1-based line of the original file the mutation changes (0 when not found)."""
    before: str
    """The original line, stripped."""
    after: str
    """The mutated line, stripped (empty where the line was removed)."""


def ensure_mutmut() -> None:
    try:
        if importlib.metadata.version("mutmut") == MUTMUT_VERSION:
            return
    except importlib.metadata.PackageNotFoundError:
        pass
    print(f"installing mutmut=={MUTMUT_VERSION} into {sys.prefix}", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", f"mutmut=={MUTMUT_VERSION}"], check=True
    )


def mutmut_command() -> list[str]:
    # The console script, not `python -m mutmut`: mutmut warns that its __main__ then runs twice.
    return [str(Path(sys.executable).parent / "mutmut")]


def prepare(target: Target, workspace: Path) -> list[str]:
    """Lay out the working copy of `target`; return the test files it runs."""
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, workspace / package, ignore=skip)
    shutil.copytree(ROOT / "tests", workspace / "tests", ignore=skip)
    shutil.copy2(ROOT / "pyproject.toml", workspace / "pyproject.toml")
    tests = [test for test in target.tests if (ROOT / test).is_file()]
    # The pyproject copy has no [tool.mutmut], so mutmut takes setup.cfg.
    (workspace / "setup.cfg").write_text(
        SETTINGS.format(
            source_paths="\n".join(f"    {package}" for package in PACKAGES),
            source=target.source,
            tests="\n".join(f"    {test}" for test in tests),
        ),
        encoding="utf-8",
    )
    return tests


def function_sources(name: str, path: str) -> tuple[list[str], list[str]]:
    """The lines of a mutant's function before and after the mutation, as mutmut prints them."""
    import libcst as cst
    from mutmut.mutation import diff_apply

    functions = diff_apply.read_functions_from_index(name, path)
    if functions is None:
        module = diff_apply.read_mutants_module(path)
        functions = (
            diff_apply.read_original_function(module, name),
            diff_apply.read_mutant_function(module, name),
        )
    before, after = (cst.Module([function]).code.strip().split("\n") for function in functions)
    return before, after


def locate(before: list[str], after: list[str], lines: list[str]) -> tuple[int, str, str]:
    """The file line a mutation changes, with that line before and after it.

    The function is found in the file by its lines (stripped: a method is printed dedented),
    so a line that occurs twice in it is told apart by its place.
    """
    stripped = [line.strip() for line in lines]
    wanted = [line.strip() for line in before]
    start = next(
        (
            index
            for index in range(len(stripped) - len(wanted) + 1)
            if stripped[index : index + len(wanted)] == wanted
        ),
        None,
    )
    opcodes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    tag, i1, _, j1, j2 = next(op for op in opcodes if op[0] != "equal")
    old = before[i1].strip() if i1 < len(before) and tag != "insert" else ""
    new = after[j1].strip() if j1 < j2 else ""
    return (0 if start is None else start + i1 + 1), old, new


def function_of(name: str) -> str:
    """`Class.method` or `function` from a mutmut name (`pkg.mod.xǁClassǁmethod__mutmut_3`)."""
    mangled = name.partition("__mutmut_")[0].rpartition(".")[2]
    if mangled.startswith("x_"):
        return mangled[2:]
    _, cls, method = mangled.split("ǁ")
    return f"{cls}.{method}"


def outcomes(target: Target, workspace: Path) -> list[Mutant]:
    """Read mutmut's results for `target` from its working copy."""
    from mutmut.stats import status_by_exit_code

    meta = json.loads(
        (workspace / "mutants" / (target.source + ".meta")).read_text(encoding="utf-8")
    )
    lines = (workspace / target.source).read_text(encoding="utf-8").splitlines()
    found = []
    here = Path.cwd()
    os.chdir(workspace)  # mutmut's readers take paths relative to the working copy
    try:
        for name, code in sorted(meta["exit_code_by_key"].items(), key=lambda kv: _order(kv[0])):
            status = status_by_exit_code[code]
            line, old, new = 0, "", ""
            if status != "killed":
                line, old, new = locate(*function_sources(name, target.source), lines)
            found.append(Mutant(name, status, function_of(name), line, old, new))
    finally:
        os.chdir(here)
    return found


def _order(name: str) -> tuple[str, int]:
    stem, _, number = name.rpartition("__mutmut_")
    return stem, int(number)


def listed_equivalents(source: str) -> set[tuple[str, str, str]]:
    """(function, before, after) of the survivors bench/MUTATION.md explains for `source`.

    Its table rows read ``| file | function | `before` | `after` | why |``, with `|` inside a
    cell written `\\|` as Markdown tables need.
    """
    if not EQUIVALENTS.is_file():
        return set()
    listed = set()
    for text in EQUIVALENTS.read_text(encoding="utf-8").splitlines():
        cells = [_cell(cell) for cell in re.split(r"(?<!\\)\|", text)]
        if len(cells) >= 6 and cells[0] == "" and cells[1] == source:
            listed.add((cells[2], cells[3], cells[4]))
    return listed


def _cell(text: str) -> str:
    return text.strip().removeprefix("`").removesuffix("`").replace("\\|", "|")


def report(target: Target, mutants: list[Mutant], seconds: float) -> int:
    """Print the figures and survivors of one target; return how many survivors are unlisted."""
    counts = {status: 0 for status in ("killed", "survived", "timeout", "other")}
    for mutant in mutants:
        if mutant.status in ("killed", "timeout"):
            counts[mutant.status] += 1
        elif mutant.status in ("survived", "no tests"):
            counts["survived"] += 1
        else:
            counts["other"] += 1
    total = len(mutants)
    score = (counts["killed"] + counts["timeout"]) / total if total else 1.0
    other = f", other {counts['other']}" if counts["other"] else ""
    print(
        f"{target.source}: mutants {total}, killed {counts['killed']}, "
        f"survived {counts['survived']}, timeout {counts['timeout']}{other}, "
        f"score {score:.1%} ({seconds:.0f} s)"
    )
    listed = listed_equivalents(target.source)
    unlisted = 0
    for mutant in mutants:
        if mutant.status in ("killed", "timeout"):
            continue
        known = (mutant.function, mutant.before, mutant.after) in listed
        unlisted += not known
        mark = "  [equivalent: bench/MUTATION.md]" if known else ""
        where = f"{target.source}:{mutant.line}" if mutant.line else target.source
        print(
            f"  {where}: {mutant.status} in {mutant.function}: "
            f"`{mutant.before}` -> `{mutant.after}` ({mutant.name}){mark}"
        )
    return unlisted


def run(target: Target, jobs: int, keep: bool) -> int | None:
    """Mutate and test one target; None when mutmut failed."""
    workspace = ROOT / "mutants" / target.module
    tests = prepare(target, workspace)
    print(f"== {target.source} with {' '.join(tests)}", flush=True)
    started = time.monotonic()
    log = workspace.parent / f"{target.module}.log"
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            [*mutmut_command(), "run", "--max-children", str(jobs)],
            cwd=workspace,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-30:]
        print("\n".join(["mutmut failed:", *tail]), file=sys.stderr)
        return None
    unlisted = report(target, outcomes(target, workspace), seconds)
    if not keep:
        shutil.rmtree(workspace, ignore_errors=True)
        log.unlink()
    return unlisted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", action="append", metavar="FILE", help="a target's path (repeatable)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutants at once")
    parser.add_argument("--keep", action="store_true", help="keep mutants/<module>/ for mutmut")
    args = parser.parse_args(argv)
    targets = TARGETS
    if args.only:
        wanted = {Path(name).as_posix().removeprefix("./") for name in args.only}
        unknown = wanted - {target.source for target in TARGETS}
        if unknown:
            known = ", ".join(target.source for target in TARGETS)
            parser.error(f"not a target: {', '.join(sorted(unknown))} (targets: {known})")
        targets = tuple(target for target in TARGETS if target.source in wanted)
    ensure_mutmut()
    unlisted = 0
    for target in targets:
        result = run(target, args.jobs, args.keep)
        if result is None:
            return 2
        unlisted += result
    if not args.keep and (ROOT / "mutants").is_dir() and not any((ROOT / "mutants").iterdir()):
        (ROOT / "mutants").rmdir()
    return 1 if unlisted else 0


if __name__ == "__main__":
    sys.exit(main())
