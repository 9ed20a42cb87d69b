"""Benchmark `errcat migrate`'s rewrite against a cold scan of the same package (target <= 2x).

    .venv/bin/python bench/migrate.py [--repeat N]

Downloads the jinja2 3.1.4 sdist once (cached under `~/.cache/errcat-bench/`), extracts it into
a temporary folder and scans `src/jinja2` in this process with no cache (libcst's import
included, as a cold `errcat scan` pays it). Every raise site of a built-in exception with a
known message then gets a rewrite to a class `Typed<N>`, its arguments taken from the message
as `errcat migrate` takes them, and `migrate_source` runs over every such file (reading the
files and importing `catalog.authoring.migrate` included). Prints `scan cold: X s, migrate: Y s, ratio
Y/X` for the first, cold migrate run, and the best of N warm runs after it (default 3). Exits 1
when the ratio misses the target or a rewrite fails.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractor.scan import scan_paths  # noqa: E402

PACKAGE = "jinja2==3.1.4"
SDIST = "jinja2-3.1.4.tar.gz"
CACHE = Path.home() / ".cache" / "errcat-bench"
TARGET = 2.0


def sdist() -> Path:
    path = CACHE / SDIST
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*command, PACKAGE, "-d", str(CACHE)], check=True)
    if not path.is_file():
        sys.exit(f"bench/migrate.py: pip did not leave {path}")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="warm migrate runs (default 3)")
    args = parser.parse_args(argv)
    archive = sdist()
    with tempfile.TemporaryDirectory(prefix="errcat-bench-") as work:
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
        (root,) = Path(work).iterdir()
        if "catalog.authoring.migrate" in sys.modules or "libcst" in sys.modules:
            sys.exit("bench/migrate.py: the scan would not be cold")

        start = time.perf_counter()
        report = scan_paths([root / "src" / "jinja2"], base=root, cwd=root)
        scan = time.perf_counter() - start

        from catalog.entries.templates import to_catalog_message

        sites = []
        for site in report.sites:
            builtin = (site.qualified_name or "").startswith("builtins.")
            if builtin and site.template is not None:
                sites.append(site)
        plans: dict[Path, list[tuple[int, int, str, dict[str, str]]]] = defaultdict(list)
        for number, site in enumerate(sites, 1):
            try:
                arguments = dict(to_catalog_message(site.template or "").arguments)
            except ValueError:
                arguments = {}
            plans[root / site.path].append((site.line, site.column, f"Typed{number}", arguments))

        runs = []
        failures: list[str] = []
        for _ in range(1 + args.repeat):
            failures = []
            start = time.perf_counter()
            from catalog.authoring.migrate import MigrateError, Rewrite, migrate_source

            for path, plan in plans.items():
                rewrites = [Rewrite(*item) for item in plan]
                source = path.read_text(encoding="utf-8")
                try:
                    migrate_source(source, rewrites, "jinja2.errors_generated")
                except MigrateError as exc:
                    failures.append(f"{path.relative_to(root)}: {exc}")
            runs.append(time.perf_counter() - start)
    cold, best = runs[0], min(runs[1:] or runs)
    files = len(report.results)
    print(
        f"{files} files scanned ({report.jobs} process(es)), "
        f"{len(sites)} sites rewritten in {len(plans)} files"
    )
    for failure in failures:
        print(f"  not rewritten: {failure}")
    print(f"migrate warm (best of {len(runs) - 1 or 1}): {best:.4f} s")
    print(f"scan cold: {scan:.3f} s, migrate: {cold:.4f} s, ratio {cold / scan:.3f}")
    print(f"target: ratio <= {TARGET}")
    return 0 if cold / scan <= TARGET and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
