"""Executed examples: each entry's `before` must raise exactly that entry, its `after` must run.

Examples run in a worker process that imports torch and the modules the examples import once,
then forks one child per program (`before` and `after` each get a fresh child), so a run over
the whole catalog takes seconds. A child has a time limit and is killed with its process group
when it runs over; its stdout and stderr are captured; a child that hangs, crashes or exits
early is a failed example, and the run goes on with the next one. The worker runs in the project
root and imports the package from its import root (`src/` in a src layout), as an installed
package is imported.

The worker (catalog/core/example_worker.py) never touches CUDA or MPS itself: the hardware probe runs
in a child too, because a process that initialised CUDA cannot fork children that use it.

A `before` passes when the exception it ends with is the entry's: its typed class, found by
`type(exc).id == entry.id` wherever it was raised; for an entry catalogued in place (it has no
generated class, so no `id`), the class that `exception` names with a `str(exc)` that the
entry's template prints, as `errcat reproduce` judges. An `after` passes when it runs to its
end: raising the entry again fails it, and so does any other exception, since a fix that
crashes differently is no fix. `SystemExit(0)` counts as running to the end.
"""

from __future__ import annotations

import ast
import os
import string
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.core.exceptions import has_typed_class
from catalog.core.findings import Finding
from catalog.core.model import Catalog, Entry, Position, Status
from catalog.core.worker_process import WorkerFailed, WorkerProcess
from catalog.entries.verified import (
    Verification,
    dump_results,
    example_hash,
    load_results,
    merge_results,
)

DEFAULT_TIMEOUT = 30.0
"""Seconds one program (`before` or `after`) may run before it is killed."""
TORCH_WARM_MODULES = ("torch._dynamo",)
"""Imported by the worker when examples use torch: what torch imports lazily on the first call
of a `torch.library` custom op (about two seconds that every child would otherwise pay)."""

REQUIREMENT_REASONS = {
    "cuda": "needs a CUDA GPU: torch.cuda.is_available() is False",
    "mps": "needs Apple MPS: torch.backends.mps.is_available() is False",
    "sm90": "needs a GPU of compute capability 9.0 (H100/H200)",
}


@dataclass(frozen=True)
class ProgramRun:
    """What one program (`before` or `after`) did in its child process."""

    ended: str
    """`finished`, `raised`, `timeout` (killed at the limit) or `crashed` (died without a result)."""
    exception: str | None = None
    """Qualified class name of the exception it ended with, when it `raised`."""
    exception_id: str | None = None
    """The class's catalog `id` attribute, when it has one."""
    message: str | None = None
    """`str()` of the exception."""
    detail: str = ""
    """The traceback's tail, or how the child died."""
    output: str = ""
    """The tail of what the program wrote to stdout and stderr."""
    seconds: float = 0.0


@dataclass(frozen=True)
class ExampleResult:
    """The verdict on one entry's example."""

    entry_id: str
    name: str
    outcome: str
    """`verified`, `failed` or `skipped`."""
    position: Position
    """The entry's `example` key in its YAML file."""
    reason: str = ""
    """Why it failed or was skipped; empty when verified."""
    fix: str | None = None
    """What to change, for failures."""
    example_hash: str = ""
    before: ProgramRun | None = None
    after: ProgramRun | None = None


@dataclass(frozen=True)
class ExampleRun:
    """Every example's result, and where they ran."""

    platform: str
    """`<sys.platform>-<machine>-<accelerator>`, e.g. `linux-x86_64-cpu`."""
    results: tuple[ExampleResult, ...]

    @property
    def failed(self) -> list[ExampleResult]:
        return [r for r in self.results if r.outcome == "failed"]

    def counts(self) -> dict[str, int]:
        """How many examples ended in each outcome."""
        counts = {"verified": 0, "failed": 0, "skipped": 0}
        for result in self.results:
            counts[result.outcome] += 1
        return counts


# ---------------------------------------------------------------------------------------------
# The runner: drives a worker from the errcat process (which never imports torch itself).


class _Worker:
    """The example worker: warm imports of the examples' modules, a child per program."""

    def __init__(self, root: Path, imports_from: Path, modules: Sequence[str]) -> None:
        # `import errcat` first: it pins errcat's own `catalog` package, which a project's
        # `catalog/` folder on the worker's path would otherwise shadow.
        command = (
            "import errcat; from catalog.core.example_worker import worker_main; worker_main()"
        )
        self.worker = WorkerProcess(
            [sys.executable, "-c", command, *modules],
            cwd=root,
            env=_worker_env(imports_from),
            name="example",
            start_timeout=180.0,
        )
        self.probe: dict[str, Any] = self.worker.ready.get("probe") or {}
        if not self.probe:
            self.worker.close()
            raise WorkerFailed(f"the hardware probe failed: {self.worker.ready.get('start')}")

    def run(self, code: str, filename: str, timeout: float) -> ProgramRun:
        task = {"kind": "run", "code": code, "filename": filename, "timeout": timeout}
        reply = self.worker.ask(task, timeout)
        return ProgramRun(
            ended=reply["ended"],
            exception=reply.get("exception"),
            exception_id=reply.get("exception_id"),
            message=reply.get("message"),
            detail=reply.get("detail", ""),
            output=reply.get("output", ""),
            seconds=float(reply.get("seconds", 0.0)),
        )

    def close(self) -> None:
        self.worker.close()


def _worker_env(imports_from: Path) -> dict[str, str]:
    env = dict(os.environ)
    # The examples import the project's package by its name, as a user's script would with the
    # package installed: from `src/` in a src layout. The worker's current folder (the project
    # root) is on its path too, as `python -c` puts it there.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(imports_from), env.get("PYTHONPATH")) if p)
    # If a warm import asks torch.cuda.is_available(), answer through NVML: the CUDA runtime
    # check would initialise the driver in the worker, and forked children could not use CUDA.
    env.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    return env


def package_import_root(root: Path) -> Path:
    """The folder the examples import the project's package from: the import root of the
    package that `root`'s `[tool.errcat]` configures (`root/src` for `package = "src/pkg"`).

    In a flat layout that is `root` itself, and so it is when `root` holds no pyproject.toml
    of its own or its package folder is not found.
    """
    from catalog.core.config import ConfigError, load_config
    from catalog.core.project import import_root

    try:
        config = load_config(root)
    except ConfigError:
        return root
    # load_config climbs to the nearest pyproject.toml: one above `root` is another project's.
    if config.root != root.resolve() or not config.package.is_dir():
        return root
    return import_root(config)


def _is_project_module(folders: Iterable[Path], name: str) -> bool:
    top = name.split(".")[0]
    return any((folder / top).is_dir() or (folder / f"{top}.py").is_file() for folder in folders)


def imported_modules(sources: Iterable[str]) -> list[str]:
    """Absolute modules the programs import (`import a.b`, `from a.b import c`), first use order."""
    found: dict[str, None] = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found.setdefault(alias.name, None)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.setdefault(node.module, None)
    return list(found)


def example_positions(catalog: Catalog) -> dict[str, Position]:
    """Where each entry's `example` key is written (its entry's position when unreadable)."""
    from catalog.entries.yamlnodes import YamlProblem, parse_document

    positions: dict[str, Position] = {}
    for catalog_file in catalog.files:
        try:
            document = parse_document(catalog_file.path.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, YamlProblem):
            document = None
        for index, entry in enumerate(catalog_file.entries):
            if document is not None and entry.example is not None:
                mark = document.mark(("errors", index, "example"), key=True)
                positions[entry.id] = Position(catalog_file.path, mark.line, mark.column)
            else:
                positions[entry.id] = entry.where("example")
    return positions


def runnable(entry: Entry) -> bool:
    """Whether `errcat check --examples` runs the entry's example: it has one and is not retired."""
    return entry.example is not None and entry.status is not Status.RETIRED


def _missing(requires: Sequence[str], probe: dict[str, Any]) -> str | None:
    for need in requires:
        if not probe.get(need, False):
            reason = REQUIREMENT_REASONS.get(need, f"needs {need}, which errcat cannot detect")
            if need == "sm90" and probe.get("capability"):
                reason += f"; this GPU is {tuple(probe['capability'])}"
            return f"requires {need}: {reason}"
    return None


def _prints(template: str, message: str | None) -> bool:
    """Whether `message` is the whole of a text that `template` renders."""
    from catalog.matching.messages import FULL, LiteralPattern

    literals = [""]
    try:
        for literal, field_name, _spec, _conversion in string.Formatter().parse(template):
            literals[-1] += literal
            if field_name is not None:
                literals.append("")
    except ValueError:
        return False
    return message is not None and LiteralPattern(tuple(literals)).groups(message, FULL) is not None


def _raised_entry(entry: Entry, run: ProgramRun, generate: bool = True) -> bool:
    """Whether the program ended by raising `entry` (see the module docstring); under
    `generate=False` (docs-only adoption) every entry is judged as one catalogued in place."""
    if run.ended != "raised":
        return False
    if run.exception_id == entry.id:
        return True
    # A typed entry's text alone is not enough: its class must be raised (the raise migrated).
    if has_typed_class(entry.exception, generate):
        return False
    return run.exception == entry.exception and _prints(entry.message, run.message)


def _judge(
    entry: Entry, before: ProgramRun, after: ProgramRun, generate: bool = True
) -> tuple[str, str | None]:
    """Why the example fails and how to fix it; ("", None) when it passes."""
    problems: list[str] = []
    fixes: list[str] = []
    expected = f"{entry.name} ({entry.id})"
    if _raised_entry(entry, before, generate):
        pass
    elif before.ended == "raised":
        got = before.exception or "an exception"
        if before.exception_id:
            got += f" ({before.exception_id})"
        problems.append(f"before raised {got}: {before.message} instead of {expected}")
        if has_typed_class(entry.exception, generate):
            fixes.append(f"make before raise {entry.name} (its id, not only its text)")
        else:
            fixes.append(f"make before raise {entry.exception} with a message of the entry")
    elif before.ended == "finished":
        problems.append(f"before ran to its end without raising {expected}")
        fixes.append(f"make before reach the check that raises {entry.name}")
    else:
        problems.append(f"before {before.detail}")
        fixes.append("make before raise quickly, without native crashes or exits")
    if after.ended == "finished":
        pass
    elif _raised_entry(entry, after, generate):
        problems.append(f"after still raises {expected}: {after.message}")
        fixes.append("make after apply the fix")
    elif after.ended == "raised":
        problems.append(f"after raised {after.exception}: {after.message}")
        fixes.append("make after run to its end")
    else:
        problems.append(f"after {after.detail}")
        fixes.append("make after finish quickly, without native crashes or exits")
    if not problems:
        return "", None
    return "; ".join(problems), "; ".join(fixes) + ", then run: errcat check --examples"


def run_examples(
    catalog: Catalog,
    root: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    only: Iterable[str] | None = None,
    imports_from: Path | None = None,
    generate: bool = True,
) -> ExampleRun:
    """Run the example of every runnable entry (or of the ids in `only`) and judge each.

    `root` is the project root: the worker runs there so examples import the package as users
    do, from `imports_from` (by default `package_import_root(root)`: `src/` in a src layout).
    Raises WorkerFailed when the worker cannot start at all.
    """
    if imports_from is None:
        imports_from = package_import_root(root)
    wanted = set(only) if only is not None else None
    entries = [e for e in catalog if runnable(e) and (wanted is None or e.id in wanted)]
    positions = example_positions(catalog)
    sources = [text for e in entries if e.example for text in (e.example.before, e.example.after)]
    imported = imported_modules(sources)
    uses_torch = any(name.split(".")[0] == "torch" for name in imported)
    # torch always: the hardware probe needs it, and importing it once here is the point.
    # The project's own modules are left for each child to import: they may read the
    # environment at import time (as examples that set a variable first expect), and a copy
    # imported once in the worker would hide that.
    project_folders = (root, imports_from)
    third_party = [name for name in imported if not _is_project_module(project_folders, name)]
    modules = ["torch", *(TORCH_WARM_MODULES if uses_torch else ()), *third_party]
    worker = _Worker(root, imports_from, modules)
    probe = worker.probe
    results: list[ExampleResult] = []
    try:
        for entry in entries:
            assert entry.example is not None
            position = positions.get(entry.id, entry.position)
            digest = example_hash(entry.example)
            skip = _missing(entry.example.requires, probe)
            if skip is not None:
                results.append(
                    ExampleResult(
                        entry.id, entry.name, "skipped", position, skip, example_hash=digest
                    )
                )
                continue
            runs: list[ProgramRun] = []
            for phase, code in (("before", entry.example.before), ("after", entry.example.after)):
                filename = f"{position.path.name}:{position.line} [{entry.name} {phase}]"
                try:
                    runs.append(worker.run(code, filename, timeout))
                except WorkerFailed as exc:
                    runs.append(ProgramRun(ended="crashed", detail=str(exc)))
                    worker = _Worker(root, imports_from, modules)
            reason, fix = _judge(entry, runs[0], runs[1], generate)
            results.append(
                ExampleResult(
                    entry.id,
                    entry.name,
                    "failed" if reason else "verified",
                    position,
                    reason,
                    fix,
                    digest,
                    runs[0],
                    runs[1],
                )
            )
    finally:
        worker.close()
    return ExampleRun(platform=str(probe.get("platform", "unknown")), results=tuple(results))


def example_findings(run: ExampleRun) -> list[Finding]:
    """One error finding per failed example, at its `example` key."""
    return [
        Finding.at(
            result.position,
            f"example of entry {result.entry_id} ({result.name}) failed: {result.reason}",
            result.fix,
            stage="examples",
        )
        for result in run.failed
    ]


# ---------------------------------------------------------------------------------------------
# Recording: the committed results file.


def current_commit(root: Path, ignore: Path | None = None) -> str:
    """Short commit of `root`'s repository, with `-dirty` when tracked files have changes.

    Untracked files and `ignore` (the results file itself, which every run rewrites) do not make
    the tree dirty. Outside a repository the commit is `unknown`.
    """

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return "unknown"
    spec = ["--", "."]
    if ignore is not None:
        spec.append(f":(exclude){ignore.resolve().relative_to(root.resolve()).as_posix()}")
    changes = git("status", "--porcelain", "--untracked-files=no", *spec)
    return commit + ("-dirty" if changes else "")


def record_results(
    results_path: Path, run: ExampleRun, commit: str, catalog: Catalog | None = None
) -> None:
    """Merge this run's outcomes into the results file and write it atomically.

    With `catalog`, records of ids no longer in it are dropped.
    """
    from catalog.authoring.codegen import write_atomically

    new = [
        Verification(r.entry_id, r.example_hash, run.platform, commit, r.outcome)
        for r in run.results
    ]
    merged = merge_results(load_results(results_path), new)
    if catalog is not None:
        known = {entry.id for entry in catalog}
        merged = {entry_id: rows for entry_id, rows in merged.items() if entry_id in known}
    write_atomically(results_path, dump_results(merged))
