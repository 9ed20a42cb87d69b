"""Scan every Python file of the installed torch: zero crashes, every parse failure reported.

    .venv/bin/python bench/scan_torch.py [--jobs N] [--root DIR]

Runs, each as a whole process over the same files in the same run: (a) a baseline that reads
every file and runs `ast.parse` on it; (b) `errcat scan --json --no-cache` over the torch
folder. Then checks that the scan accounts for every file (each gives sites or a failure
record), that no failure is an internal error of the extractor, and that the files the scan
could not parse are exactly those `ast` could not parse. Prints files, sites, each failure with
its message, and the wall times. Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINE = """
import ast, json, sys, warnings
warnings.simplefilter("ignore")  # invalid escapes in torch's sources are not our business
failed = {}
for name in open(sys.argv[1], encoding="utf-8").read().splitlines():
    with open(name, "rb") as handle:
        data = handle.read()
    try:
        ast.parse(data, filename=name)
    except (SyntaxError, ValueError) as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failed))
"""

INTERNAL = ("internal error", "too deeply nested", "out of memory")
"""Failure messages that mean the extractor, not the file, gave up."""


def torch_root() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench/scan_torch.py: torch is not installed (the `runtime` extra)")
    return Path(next(iter(spec.submodule_search_locations)))


def every_python_file(root: Path) -> list[Path]:
    """Every `*.py` file under `root`, hidden folders and caches included: nothing is assumed."""
    return sorted(path for path in root.rglob("*.py") if path.is_file())


def errcat_command() -> list[str]:
    script = Path(sys.executable).parent / "errcat"
    return [str(script)] if script.exists() else [sys.executable, "-m", "catalog"]


def timed(command: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, help="folder to scan (default: the installed torch)")
    parser.add_argument("--jobs", type=int, help="passed to errcat scan (default: its own choice)")
    args = parser.parse_args(argv)
    root = (args.root or torch_root()).resolve()
    files = every_python_file(root)
    size = sum(path.stat().st_size for path in files)
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="errcat-torch-") as folder:
        work = Path(folder)
        listing = work / "files.txt"
        listing.write_text("\n".join(map(str, files)) + "\n", encoding="utf-8")
        script = work / "baseline.py"
        script.write_text(BASELINE, encoding="utf-8")
        base_time, base = timed([sys.executable, str(script), str(listing)], work)
        if base.returncode != 0:
            sys.exit(f"bench/scan_torch.py: the ast baseline failed:\n{base.stderr}")
        ast_failed = {
            Path(name).relative_to(root).as_posix(): why
            for name, why in json.loads(base.stdout).items()
        }
        command = [*errcat_command(), "scan", str(root), "--json", "--no-cache"]
        if args.jobs:
            command += ["--jobs", str(args.jobs)]
        scan_time, scan = timed(command, work)
    # Exit 0: no failures; 1 only with --strict. Anything else, or a traceback, is a crash.
    if scan.returncode not in (0, 1) or "Traceback" in scan.stderr:
        print(scan.stderr, file=sys.stderr)
        sys.exit(f"bench/scan_torch.py: errcat scan crashed (exit {scan.returncode})")
    report = json.loads(scan.stdout)

    def relative(path: str) -> str:
        # Report paths are relative to the (now removed) work folder: join them lexically.
        return Path(os.path.normpath(work / path)).relative_to(root).as_posix()

    sites = report["sites"]
    failures = {relative(f["path"]): f for f in report["failures"]}
    with_sites = {relative(site["path"]) for site in sites}
    wanted = {path.relative_to(root).as_posix() for path in files}
    if report["files"] != len(files):
        problems.append(f"the scan reports {report['files']} files; the folder has {len(files)}")
    unaccounted = sorted(wanted - with_sites - failures.keys())
    # A file with no raise is accounted for by the file count alone: list none of those, only
    # files the scan mentions that do not exist.
    strangers = sorted((with_sites | failures.keys()) - wanted)
    if strangers:
        problems.append(f"the scan names files that are not in the folder: {strangers[:5]}")
    for path, failure in sorted(failures.items()):
        if any(word in failure["message"] for word in INTERNAL):
            problems.append(f"extractor crash on {path}: {failure['message']}")
    if failures.keys() != ast_failed.keys():
        problems.append(
            "parse failures differ from ast's: "
            f"only errcat {sorted(failures.keys() - ast_failed.keys())}, "
            f"only ast {sorted(ast_failed.keys() - failures.keys())}"
        )

    print(f"root: {root}")
    print(f"{len(files)} files, {size / 1e6:.1f} MB of source")
    print(
        f"{len(sites)} raise sites in {len(with_sites)} files; {len(unaccounted)} files with none"
    )
    print(f"{len(failures)} failures (ast.parse failed on {len(ast_failed)}):")
    for path, failure in sorted(failures.items()):
        print(f"  {path}:{failure['line']}:{failure['column']}: {failure['message']}")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cpus available: {cpus}; errcat scan jobs: {args.jobs or 'auto'}")
    print(f"ast.parse baseline: {base_time:6.2f} s")
    print(f"errcat scan (cold): {scan_time:6.2f} s  ({scan_time / base_time:.2f}x the baseline)")
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    print("ok: zero crashes, every file accounted for" if not problems else "failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
