"""How much of what a package says about its errors errcat's `knowledge` finds, on real packages.

For each of bench/adopt.py's pinned sdists (packaging, itsdangerous, jinja2; downloaded once into
~/.cache/errcat-bench/sdists), a fresh unpacked copy goes through the README's adoption path with
the `errcat` of this checkout: `init`, `new`, `reproduce --timeout 10` (its calls, and the
package's own tests on a cached Python 3.12 environment of the package made as bench/adopt.py
makes its own, holding pytest and what the tests import; 3.11's where there is no 3.12),
`build`. Nothing is
written by hand and nothing is tuned to these packages. Then every entry's API JSON
(`build/site/api/errors/<id>.json`, not `index.json`) is read and, per package, this prints one JSON line and a
table row with:

- entries, and entries reached by a public function (a source whose `callers.public` is true or
  whose `callers.callers` is non-empty);
- entries with at least one item of each kind (documented, tested, remedy, reproduced), and
  entries with any item;
- % of entries with a `tested` item (goal >= 50%), % of the entries reached by a public function
  that have any item (goal >= 80%), and the entries with a verified `reproduced` item, also as a
  % of those reached by a public function (goal >= 30%);
- wall seconds of `new`, `reproduce` and `build`.

It also prints up to 3 sample items per kind per package (text and source), so a reader can
judge what the figures count.

The package is never installed: `errcat reproduce` starts its workers with the project's import
root (the folder above the package's topmost `__init__.py` chain, `src/` for packaging) put
first on PYTHONPATH itself (catalog/evidence/reproduce.py, `_Worker`), so no PYTHONPATH is set here.
Requirements of the packages (markupsafe for jinja2) come from this checkout's virtual
environment.

    .venv/bin/python bench/knowledge.py [--keep DIR]
    .venv/bin/python bench/knowledge.py --torch [--reproduce] [--keep DIR]

`--torch` measures the whole installed torch instead (a copy of its `*.py` files, made by
bench/site_torch.py's `copy_torch`, with its pyproject.toml): torch's wheel ships no test
folder, but its testing package does hold its tables of error inputs (the rows its tests loop
over), so the project's `tests` is `torch/testing/_internal/**/*.py`, read for `tested`
knowledge and never run; `reproduce` (each call a child that imports torch) runs only with
`--reproduce`.

`--keep DIR` unpacks into DIR (which must not hold the packages yet) and leaves the adopted
copies there; otherwise a temporary folder is used and removed. Exit 0 when every step ran;
non-zero (with the failing command's output) when a step fails.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adopt import ERRCAT, PACKAGES, PYTHONS, Package, environment, run, sdist, unpack

KINDS = ("documented", "tested", "remedy", "reproduced")
TESTS_PYTHON = "/root/.pyenv/versions/3.12*/bin/python"
STEPS = ("new", "reproduce", "build")
SAMPLES = 3


def errcat(project: Path, *arguments: str, timeout: int = 1800) -> tuple[float, str]:
    """Run this checkout's errcat in `project`; wall seconds and stdout. A failure exits."""
    start = time.perf_counter()
    done = run([str(ERRCAT), *arguments], cwd=project, timeout=timeout)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"errcat {' '.join(arguments)} failed in {project} ({done.returncode}):\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return seconds, done.stdout


def reached_by_public(entry: dict[str, Any]) -> bool:
    for source in entry.get("sources") or ():
        callers = source.get("callers") or {}
        if callers.get("public") or callers.get("callers"):
            return True
    return False


def percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def measure(package: Package, into: Path) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Adopt one package in a fresh copy under `into`; its figures and sample items."""
    folder = into / package.name
    folder.mkdir()
    project = unpack(sdist(package), folder)
    errcat(project, "init")
    # The tests run on the package's own test environment (bench/adopt.py's kind, cached):
    # pytest and what its tests import; the package itself is imported from the copy. Python
    # 3.12 where there is one: errcat sees where an exception was first raised through
    # sys.monitoring there, even when the package rewrites its traceback.
    tests_python = None
    for version, pattern in (("3.12", TESTS_PYTHON), ("3.11", PYTHONS["3.11"])):
        found = sorted(glob.glob(pattern))
        if found:
            tests_python = str(environment(package, version, found[-1]) / "bin" / "python")
            break
    return adopted(
        f"{package.name}-{package.version}", project, reproduce=True, tests_python=tests_python
    )


def measure_torch(into: Path, reproduce: bool) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The whole installed torch, as bench/site_torch.py lays it out."""
    from site_torch import PYPROJECT, copy_torch, torch_root

    project = into / "torch-project"
    project.mkdir()
    copy_torch(project, None)
    if reproduce:
        # The calls import torch from the copy: its compiled parts (and any other file that is
        # not Python source) are linked in from the installed torch.
        source = torch_root()
        for path in source.rglob("*"):
            if path.is_file() and path.suffix != ".py" and "__pycache__" not in path.parts:
                target = project / "torch" / path.relative_to(source)
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.symlink_to(path)
    # The wheel's testing package holds the tables of error inputs torch's tests loop over.
    tests = 'tests = ["torch/testing/_internal/**/*.py"]\n'
    (project / "pyproject.toml").write_text(PYPROJECT + tests, encoding="utf-8")
    version = importlib.metadata.version("torch")
    return adopted(f"torch-{version}", project, reproduce=reproduce)


def adopted(
    name: str, project: Path, *, reproduce: bool, tests_python: str | None = None
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """`new`, `reproduce` (when asked) and `build` in `project`; the figures and samples."""
    seconds: dict[str, float] = {"reproduce": 0.0}
    seconds["new"], _ = errcat(project, "new")
    said = "not run"
    if reproduce:
        python = ["--python", tests_python] if tests_python else []
        seconds["reproduce"], said = errcat(project, "reproduce", "--timeout", "10", *python)
    seconds["build"], _ = errcat(project, "build")

    api = project / "build" / "site" / "api" / "errors"
    files = sorted(path for path in api.glob("*.json") if path.stem != "index")
    if not files:
        raise SystemExit(f"errcat build published no entry JSON in {project}")
    entries = public = with_any = public_with_any = verified = public_verified = 0
    with_kind = dict.fromkeys(KINDS, 0)
    samples: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for path in files:
        entry = json.loads(path.read_text(encoding="utf-8"))
        items = entry.get("knowledge") or []
        entries += 1
        reached = reached_by_public(entry)
        public += reached
        with_any += bool(items)
        public_with_any += reached and bool(items)
        for kind in KINDS:
            of_kind = [item for item in items if item.get("kind") == kind]
            with_kind[kind] += bool(of_kind)
            for item in of_kind:
                if len(samples[kind]) < SAMPLES:
                    source = item.get("source") or {}
                    where = f"{source.get('path')}:{source.get('line')}" if source else "-"
                    samples[kind].append(f"[{entry['id']}] {item.get('text')}  ({where})")
        proven = any(item.get("kind") == "reproduced" and item.get("verified") for item in items)
        verified += proven
        public_verified += reached and proven

    summary = next(
        (line for line in reversed(said.splitlines()) if " entries: " in line), said.strip()
    )
    figures: dict[str, Any] = {
        "package": name,
        "entries": entries,
        "public": public,
        **{f"with_{kind}": with_kind[kind] for kind in KINDS},
        "with_any": with_any,
        "tested_pct": percent(with_kind["tested"], entries),
        "public_with_any": public_with_any,
        "public_with_any_pct": percent(public_with_any, public),
        "reproduced_verified": verified,
        "public_reproduced_verified": public_verified,
        "reproduced_pct_of_public": percent(public_verified, public),
        "reproduce_said": summary,
        "tests_said": next(
            (line for line in reversed(said.splitlines()) if line.startswith("tests: ")), "-"
        ),
        **{f"{step}_s": round(seconds[step], 2) for step in STEPS},
    }
    return figures, samples


def table(rows: list[dict[str, Any]]) -> str:
    columns = (
        ("package", "package"),
        ("entries", "entries"),
        ("public", "public"),
        ("documented", "with_documented"),
        ("tested", "with_tested"),
        ("remedy", "with_remedy"),
        ("reproduced", "with_reproduced"),
        ("any", "with_any"),
        ("tested%", "tested_pct"),
        ("pub any%", "public_with_any_pct"),
        ("verified", "reproduced_verified"),
        ("verified% pub", "reproduced_pct_of_public"),
        ("new s", "new_s"),
        ("reproduce s", "reproduce_s"),
        ("build s", "build_s"),
    )
    cells = [[title for title, _ in columns]]
    cells += [["-" if row[key] is None else str(row[key]) for _, key in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = [
        "  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True))
        for line in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="adopt the packages here and keep them")
    parser.add_argument("--torch", action="store_true", help="the whole installed torch instead")
    parser.add_argument(
        "--reproduce", action="store_true", help="with --torch: run errcat reproduce too"
    )
    options = parser.parse_args()

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="errcat-knowledge-") as scratch:
        into = options.keep.resolve() if options.keep else Path(scratch)
        into.mkdir(parents=True, exist_ok=True)
        measured = (
            [lambda: measure_torch(into, options.reproduce)]
            if options.torch
            else [lambda package=package: measure(package, into) for package in PACKAGES]
        )
        for measure_one in measured:
            figures, samples = measure_one()
            rows.append(figures)
            print(json.dumps(figures), flush=True)
            for kind in KINDS:
                print(f"  {kind}: {figures[f'with_{kind}']} entries", flush=True)
                for sample in samples[kind]:
                    print(f"    {sample}", flush=True)
            print(f"  reproduce: {figures['reproduce_said']}", flush=True)
            print(f"  {figures['tests_said']}", flush=True)
    print()
    print(table(rows))
    print(
        "goals: tested% >= 50, pub any% (entries reached by a public function with any item)"
        " >= 80, verified% pub (verified reproduced of those) >= 30"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
