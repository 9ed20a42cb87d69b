"""Benchmark `errcat scan` against a plain `ast` scan of the same files, each a whole process.

    .venv/bin/python bench/scan.py [--repeat N] [--against REF] [FOLDER ...]

Default folders: `torch/nn`, `torch/fx` and `torch/utils` of the installed torch. Measures
(a) a baseline script that reads every file, runs `ast.parse` and walks for `Raise` nodes in one
process; (b) `errcat scan --json --no-cache` (cold); (c) `errcat scan --json` with the cache
filled and nothing changed (warm). The three run in turn, round after round, so that a machine
whose speed drifts weighs on all of them alike. Prints wall times (best and median of N), the
ratios of the medians, and the median of each round's own ratio.
The scans run in a temporary folder, so the project's own cache is neither used nor touched.

`--fstrings` checks that `extractor/fstrings.py` reads every f-string of the installed torch and
the standard library (all of them, not only raise messages) as libcst's reading of the same
source does, and counts those it leaves to libcst; exit 1 when one differs.

`--against REF` also checks that this checkout's extractor reads every raise site of the whole
installed torch and of the standard library exactly as the extractor of git revision REF does
(every field of every site, each extractor in a process of its own); exit 1 when they differ.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DUMP = """
import sys, sysconfig
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from extractor import scan_paths
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for root in (Path(sys.argv[3]), Path(sysconfig.get_paths()["stdlib"])):
        report = scan_paths([root], cwd=root.parent)
        for result in sorted(report.results, key=lambda r: r.path):
            for site in result.sites:
                out.write(repr(site) + "\\n")
            if not result.ok:
                out.write(repr(result.failure) + "\\n")
"""
"""Every site (all fields) and failure of torch and the standard library, one line each."""

BASELINE = """
import ast, sys
count = 0
for name in open(sys.argv[1], encoding="utf-8").read().splitlines():
    with open(name, "rb") as handle:
        tree = ast.parse(handle.read(), filename=name)
    count += sum(isinstance(node, ast.Raise) for node in ast.walk(tree))
print(count)
"""

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TARGETS = {"cold": 0.8, "warm": 0.25}
"""Issue 28: the cold scan at most 0.8x the `ast` baseline; the warm one a quarter of it."""


def default_folders() -> list[Path]:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench/scan.py: torch is not installed; pass folders to scan")
    torch = Path(next(iter(spec.submodule_search_locations)))
    return [torch / "nn", torch / "fx", torch / "utils"]


def python_files(folders: list[Path]) -> list[Path]:
    """The files errcat scans in these folders: `*.py` at any depth, hidden folders skipped."""
    found = []
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            found += [Path(root, name) for name in sorted(files) if name.endswith(".py")]
    return found


def timed(command: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"bench/scan.py: {command[:3]} failed ({done.returncode}):\n{done.stderr}")
    return elapsed, done.stdout


def errcat_command() -> list[str]:
    script = Path(sys.executable).parent / "errcat"
    return [str(script)] if script.exists() else [sys.executable, "-m", "catalog"]


def fstrings_agree(torch: Path) -> bool:
    """Whether the f-string reader and libcst give the same template for every f-string."""
    import ast
    import sysconfig
    import warnings

    import libcst as cst

    from extractor.extract import _File
    from extractor.fstrings import joined_template
    from extractor.templates import template_of

    total = left = 0
    differing: list[str] = []
    warnings.simplefilter("ignore")  # invalid escapes in the sources are theirs
    for root in (torch, Path(sysconfig.get_paths()["stdlib"])):
        for path in sorted(root.rglob("*.py")):
            try:
                source = path.read_text(encoding="utf-8")
                tree = ast.parse(source)
            except (OSError, SyntaxError, ValueError, UnicodeError, RecursionError):
                continue
            file = _File(source, str(path), None)  # type: ignore[arg-type]
            for node in ast.walk(tree):
                if not isinstance(node, ast.JoinedStr):
                    continue
                total += 1
                text = file.text(node)
                read = joined_template(text)
                if read is None:
                    left += 1
                    continue
                tree_of = cst.parse_expression("(" + text + ")").with_changes(lpar=(), rpar=())
                if read != template_of(tree_of):
                    differing.append(f"{path}:{node.lineno}: {text[:120]!r}")
    print(
        f"f-strings of torch and the standard library: {total}; read from the source as libcst "
        f"reads them: {total - left - len(differing)}; left to libcst: {left}; "
        f"different: {len(differing)}"
    )
    for line in differing[:5]:
        print(f"  {line}")
    return not differing


def same_sites(ref: str, torch: Path, work: Path) -> bool:
    """Whether this checkout's extractor and REF's read torch and the standard library alike."""
    tree = work / "ref"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", "-f", str(tree), ref],
        check=True,
        capture_output=True,
    )
    try:
        script = work / "dump.py"
        script.write_text(DUMP, encoding="utf-8")
        dumps = {}
        for name, root in (("ref", tree), ("here", REPO)):
            dumps[name] = work / f"{name}.txt"
            command = [sys.executable, str(script), str(root), str(dumps[name]), str(torch)]
            subprocess.run(command, check=True, cwd=work)
        old = dumps["ref"].read_text(encoding="utf-8").splitlines()
        new = dumps["here"].read_text(encoding="utf-8").splitlines()
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
            check=False,
            capture_output=True,
        )
    differing = [(a, b) for a, b in zip(old, new, strict=False) if a != b]
    print(
        f"against {ref}: {len(new)} sites and failures here, {len(old)} at {ref}, "
        f"{len(differing) + abs(len(old) - len(new))} different"
    )
    for a, b in differing[:5]:
        print(f"  {ref}: {a[:300]}\n  here: {b[:300]}")
    return not differing and len(old) == len(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (default 3)")
    parser.add_argument("--against", metavar="REF", help="also compare every site with REF's")
    parser.add_argument(
        "--fstrings", action="store_true", help="also check every f-string's reading"
    )
    args = parser.parse_args(argv)
    folders = [folder.resolve() for folder in args.folders] or default_folders()
    files = python_files(folders)
    size = sum(file.stat().st_size for file in files)
    work = Path(tempfile.mkdtemp(prefix="errcat-bench-"))
    try:
        listing = work / "files.txt"
        listing.write_text("\n".join(map(str, files)) + "\n", encoding="utf-8")
        script = work / "baseline.py"
        script.write_text(BASELINE, encoding="utf-8")
        baseline = [sys.executable, str(script), str(listing)]
        scan = [*errcat_command(), "scan", *map(str, folders), "--json"]
        times: dict[str, list[float]] = {"baseline": [], "cold": [], "warm": []}
        raises = sites = 0
        for _ in range(args.repeat):
            elapsed, out = timed(baseline, work)
            times["baseline"].append(elapsed)
            raises = int(out)
            elapsed, out = timed([*scan, "--no-cache"], work)
            times["cold"].append(elapsed)
            shutil.rmtree(work / ".errcat-cache", ignore_errors=True)
            timed(scan, work)  # fills the cache
            elapsed, out = timed(scan, work)
            times["warm"].append(elapsed)
            report = json.loads(out)
            sites = len(report["sites"])
        print(f"{len(files)} files, {size / 1e6:.1f} MB, {raises} Raise nodes, {sites} sites")
        print(
            f"cpus available: {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}"
        )
        base = statistics.median(times["baseline"])
        for name, values in times.items():
            median = statistics.median(values)
            line = f"{name:>8}: best {min(values):6.3f} s, median {median:6.3f} s"
            if name in TARGETS:
                rounds = statistics.median(
                    value / baseline
                    for value, baseline in zip(values, times["baseline"], strict=True)
                )
                line += (
                    f"  ({name}/baseline {median / base:.2f}x, per round {rounds:.2f}x, "
                    f"target <= {TARGETS[name]}x)"
                )
            print(line)
        torch = default_folders()[0].parent
        if args.fstrings and not fstrings_agree(torch):
            return 1
        if args.against and not same_sites(args.against, torch, work):
            return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
